"""The package's comments and docstrings carry no measured times: measurements change with
the code and the machine, and live in the generated reports and the development notes."""

from __future__ import annotations

import ast
import importlib
import io
import re
import tokenize
from pathlib import Path

import pytest

#: A measured time or speed ratio: ``12.4 s``, ``0.4 ms``, ``15 us``, ``3 minutes``,
#: ``1.5x faster``, ``0.96x``.
TIMING = re.compile(
    r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:s|ms|us|µs|ns|sec|seconds?|minutes?|min|hours?)\b(?!\w)"
    r"|\b\d+(?:\.\d+)?x (?:faster|slower)|\b\d+\.\d+x\b"
)
ROOTS = ("maxmargin", "maxmargin.algorithms", "maxmargin.formulations", "maxmargin.verification")


def sources() -> list[Path]:
    """Every ``.py`` file of the installed package (each of its source folders)."""
    found: set[Path] = set()
    for root in ROOTS:
        found.update(Path(importlib.import_module(root).__file__).parent.rglob("*.py"))
    return sorted(found)


def prose(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of every comment and docstring of ``source``."""
    out = [(tok.start[0], tok.string)
           for tok in tokenize.generate_tokens(io.StringIO(source).readline)
           if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                out.append((node.body[0].lineno, doc))
    return out


@pytest.mark.parametrize("text", ["took 12.4 s of CPU", "costs about 0.4 ms", "15 us to set",
                                  "1.5x faster", "0.96x of oneDAL", "in 3 minutes"])
def test_the_pattern_finds_measurements(text):
    assert TIMING.search(text)


@pytest.mark.parametrize("text", ["tol=1e-3", "1e-9 relative", "at most 50 values",
                                  "x_i . w", "O(n) per step",
                                  "STREAM_EVERY_S = 2.0"])
def test_the_pattern_leaves_other_numbers(text):
    assert not TIMING.search(text)


def test_no_comment_or_docstring_states_a_time():
    files = sources()
    assert len(files) > 50
    found = [f"{path.name}:{line}: {match.group(0)!r}"
             for path in files for line, text in prose(path.read_text())
             for match in TIMING.finditer(text)]
    assert not found
