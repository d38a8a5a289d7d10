"""The README's Python examples run as printed, and print what their comments claim."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", README.read_text(), flags=re.S | re.M)


def run_block(index: int) -> tuple[dict, str, float | None]:
    """Run block ``index``: its variables, what it printed, and the value its comment claims is
    printed twice (``# 47.717245078667... twice``), if any."""
    code = python_blocks()[index]
    scope: dict = {"__name__": "readme"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), scope)
    claim = re.search(r"# ([0-9.]+?)\.\.\. twice", code)
    return scope, out.getvalue(), None if claim is None else float(claim.group(1))


def test_the_readme_has_its_four_examples():
    assert len(python_blocks()) == 4


@pytest.mark.parametrize(("index", "rel"), [(0, 1e-9), (2, 1e-8)])
def test_the_claimed_objective_is_printed_twice(index, rel):
    """Oracle and SMO print the dual objective the comment claims (its printed digits)."""
    scope, _, value = run_block(index)
    assert value is not None
    assert scope["oracle"].dual_objective == pytest.approx(value, rel=1e-11)
    assert scope["fast"].dual_objective == pytest.approx(value, rel=rel)


def test_oracle_against_smo_example():
    """The cross-check passes and SMO is ``optimal`` by its float64 certificate at tol 1e-6."""
    scope, _, _ = run_block(0)
    assert scope["check"].passed
    assert scope["fast"].status == "optimal"
    assert scope["fast"].certificate.kkt_violation < 1e-6


def test_estimator_example():
    """One certified solution per pair of wine's three classes."""
    scope, out, _ = run_block(1)
    clf = scope["clf"]
    assert len(clf.solutions_) == 3
    assert all(s.certificate.kkt_violation < 1e-3 for s in clf.solutions_)
    assert scope["grid"].best_score_ > 0.9 and out.strip()


def test_string_kernel_example_predicts_the_motif():
    """The claimed predictions ``[ 1. -1.]``."""
    _, out, _ = run_block(2)
    assert out.strip().splitlines()[-1] == "[ 1. -1.]"
