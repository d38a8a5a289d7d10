"""The README: its Python examples run as printed and print what their comments claim, its
speed table is what ``reports/benchmarks.json`` gives, its command table names every command,
and its links lead to files that exist."""

from __future__ import annotations

import argparse
import contextlib
import importlib.resources
import io
import json
import re
from pathlib import Path

import pytest

from benchmarks import readme_table
from maxmargin.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


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


def claimed_lines(code: str) -> list[str | None]:
    """Per ``print(...)`` line of ``code``, the output its comment claims (the comment up to
    its first colon), or None when it has no comment or claims a value printed twice."""
    claims: list[str | None] = []
    for line in code.splitlines():
        if not line.startswith("print("):
            continue
        comment = line.partition("  # ")[2]
        claim = comment.split(":")[0].strip()
        claims.append(None if not claim or claim.endswith(" twice") else claim)
    return claims


def test_the_readme_has_its_three_examples():
    assert len(python_blocks()) == 3


@pytest.mark.parametrize("index", [0, 1, 2])
def test_each_print_prints_what_its_comment_says(index):
    """``print(x)  # [ 1. -1.]`` prints exactly ``[ 1. -1.]`` (one line per print)."""
    _, out, _ = run_block(index)
    claims = claimed_lines(python_blocks()[index])
    printed = out.splitlines()
    assert len(printed) == len(claims)
    checked = [(p, c) for p, c in zip(printed, claims, strict=True) if c is not None]
    assert checked and all(p == c for p, c in checked), checked


def test_the_claimed_objective_is_printed_twice():
    """Oracle and SMO print the dual objective the comment claims (its printed digits)."""
    scope, _, value = run_block(0)
    assert value is not None
    assert scope["oracle"].dual_objective == pytest.approx(value, rel=1e-11)
    assert scope["fast"].dual_objective == pytest.approx(value, rel=1e-9)


def test_oracle_against_smo_example():
    """The cross-check passes and SMO is ``optimal`` by its float64 certificate at tol 1e-6."""
    scope, _, _ = run_block(0)
    assert scope["check"].passed
    assert scope["fast"].status == "optimal"
    assert scope["fast"].certificate.kkt_violation < 1e-6


def test_estimator_example():
    """One certified solution per pair of wine's three classes."""
    scope, _, _ = run_block(1)
    clf = scope["clf"]
    assert len(clf.solutions_) == 3
    assert all(s.certificate.kkt_violation < 1e-3 for s in clf.solutions_)


def test_certificate_example():
    """SVC's answer on raw breast cancer is refuted by its certificate, and its dual value is
    below the optimum smo certifies (both are dual values of one problem: the lower one is not
    optimal; weak duality holds); on standardised data SVC at tol 1e-6 is certified."""
    scope, _, _ = run_block(2)
    import numpy as np

    from maxmargin.algorithms import smo

    X, y = scope["X"], np.where(scope["y"] == 1, 1.0, -1.0)
    ours = smo(X, y, C=1.0, kernel="linear").certificate
    raw = scope["maxmargin"].certify(scope["SVC"](kernel="linear").fit(X, scope["y"]), X,
                                     scope["y"])
    assert not raw.meets(1e-3) and raw.kkt_violation > 1.0 and raw.verdict == "not optimal"
    assert ours.meets(1e-3, gap=1e-9)
    assert raw.dual_objective < ours.dual_objective - 0.5
    assert raw.dual_objective <= ours.primal_objective
    assert scope["cert"].verdict == "optimal"
    text = " ".join(README.read_text().split())
    low = re.search(r"optimality conditions is about 1, a thousand times its tolerance, with a "
                    r"dual value ([\d.]+) % low", text)
    assert low is not None and 0.5 < raw.kkt_violation < 2
    assert round(100 * (1 - raw.dual_objective / ours.dual_objective), 1) == float(low.group(1))


def test_the_speed_table_is_generated_from_the_committed_benchmarks():
    """The README's table is exactly ``python -m benchmarks.readme_table``'s output."""
    results = json.loads((ROOT / "reports" / "benchmarks.json").read_text())
    assert readme_table.readme_block(README.read_text()) == readme_table.render(results)
    assert readme_table.main(["--check", str(README)]) == 0


def test_the_speed_table_check_fails_on_a_changed_table(tmp_path, capsys):
    """``--check`` notices a hand-edited number; ``--write`` restores the generated block."""
    copy = tmp_path / "README.md"
    copy.write_text(README.read_text().replace("| 14 |", "| 15 |", 1))
    assert readme_table.main(["--check", str(copy)]) == 1
    assert "differs" in capsys.readouterr().err
    assert readme_table.main(["--write", str(copy)]) == 0
    assert copy.read_text() == README.read_text()


#: The peer of a comparison of the speed table, by the first name its label contains.
PEERS = ("LIBLINEAR", "oneDAL", "LIBSVM", "Clarabel", "Perceptron", "SVC")


def peer(text: str) -> str | None:
    return next((p for p in PEERS if re.search(rf"\b{p}\b", text)), None)


def test_where_another_tool_is_faster_is_what_the_table_shows():
    """The sentence under the speed table names the peers of exactly the comparisons whose
    worst ratio is above 1 (the peer faster on at least one case)."""
    text = README.read_text()
    block = readme_table.readme_block(text)
    faster = {peer(line.split("|")[1]) for line in block.splitlines()[2:]
              if line.startswith("| ") and float(line.split("|")[3].split("x:")[0]) > 1}
    start = text.index("Where another tool is faster")
    sentence = text[start:text.index(".", start)]
    assert faster and None not in faster
    assert {p for p in PEERS if re.search(rf"\b{p}\b", sentence)} == faster


def command_table() -> str:
    text = README.read_text()
    start = text.index("| command | what it does |")
    return text[start:text.index("\n\n", start)]


def test_the_command_table_names_every_command():
    """Every subcommand of ``maxmargin`` has a row of its own."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    rows = re.findall(r"^\| `maxmargin (\w+)", command_table(), flags=re.M)
    assert set(sub.choices) == set(rows)


def test_the_command_table_options_exist():
    """Every option the command table shows is one its command accepts."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command, options in re.findall(r"^\| `maxmargin (\w+)([^`]*)`", command_table(),
                                       flags=re.M):
        known = {o for a in sub.choices[command]._actions for o in a.option_strings}
        assert set(re.findall(r"--[\w-]+", options)) <= known, command


def test_the_links_lead_to_files():
    """Every relative link of the README names a file or folder of the repository; a link
    into the package (``maxmargin/...``) names a file of the package as it is installed."""
    links = re.findall(r"\]\(([^)#]+)\)", README.read_text())
    local = [link for link in links if "://" not in link]
    assert local
    package = importlib.resources.files("maxmargin")
    missing = [link for link in local
               if not (package.joinpath(link.removeprefix("maxmargin/")).is_file()
                       if link.startswith("maxmargin/") else (ROOT / link).exists())]
    assert not missing


def test_the_readme_stays_short():
    """The README is a newcomer's page; details live in docs/ and CHANGELOG.md."""
    assert len(README.read_text().splitlines()) <= 200
