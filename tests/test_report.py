"""The validation report: files, contents, schema, and atomic replacement."""

from __future__ import annotations

import csv
import json

import pytest

from maxmargin.verification import report as report_module
from maxmargin.verification.cases import catalogue
from maxmargin.verification.report import FIGURES, write_report
from maxmargin.verification.suite import COLUMNS, SECTIONS, run_suite

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
NAMES = ("li_hang_7_1", "xor_poly2", "separable_n20_d2", "xor_linear_hard")


@pytest.fixture(scope="module")
def run():
    cases = [c for c in catalogue() if c.name in NAMES]
    return run_suite("quick", progress=None, cases=cases)


@pytest.fixture(scope="module")
def written(run, tmp_path_factory):
    out = tmp_path_factory.mktemp("rep") / "reports"
    return write_report(run, out)


def test_files_exist_and_figures_are_png(written):
    assert (written / "validation.md").is_file()
    for name in FIGURES:
        data = (written / "figures" / name).read_bytes()
        assert data.startswith(PNG_SIGNATURE) and len(data) > 5000, name
    assert sorted(p.name for p in written.iterdir()) == [
        "figures", "results.csv", "results.json", "validation.md"]


def test_markdown_header_summary_and_tables(written, run):
    md = (written / "validation.md").read_text()
    for key in ("numpy", "scipy", "cvxpy", "clarabel", "osqp", "numba", "python", "date",
                "machine"):
        assert f"| {key} |" in md, key
    assert "## Summary" in md
    n_pass = sum(r.passed for r in run.rows)
    assert f"**{n_pass} pass, {len(run.rows) - n_pass} fail**" in md
    present = {r.section for r in run.rows}
    for section, title in SECTIONS.items():
        assert (f"## {title}" in md) == (section in present), section
    for name in FIGURES:
        assert f"(figures/{name})" in md
    for name in NAMES:
        assert f"| {name} |" in md


def test_json_and_csv_match_the_schema(written, run):
    payload = json.loads((written / "results.json").read_text())
    names = [n for n, _ in COLUMNS]
    assert [c["name"] for c in payload["schema"]] == names
    assert len(payload["rows"]) == len(run.rows)
    for row, original in zip(payload["rows"], run.rows, strict=True):
        assert list(row) == names
        assert row["case"] == original.case and row["verdict"] == original.verdict
    with open(written / "results.csv", newline="") as fh:
        lines = list(csv.reader(fh))
    assert lines[0] == names and len(lines) == len(run.rows) + 1
    verdict = names.index("verdict")
    assert [line[verdict] for line in lines[1:]] == [r.verdict for r in run.rows]


def test_a_failing_report_leaves_the_previous_one_intact(run, tmp_path, monkeypatch):
    out = tmp_path / "reports"
    write_report(run, out)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def broken(*args, **kwargs):
        raise RuntimeError("figure failed half-way")

    monkeypatch.setattr(report_module, "_fig_perceptron", broken)
    with pytest.raises(RuntimeError, match="figure failed half-way"):
        write_report(run, out)
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reports"]  # no temporary left


def test_other_files_in_the_directory_are_kept(run, tmp_path):
    out = tmp_path / "reports"
    (out / "figures").mkdir(parents=True)
    (out / "benchmarks.md").write_text("bench")
    (out / "figures" / "bench_smo.png").write_bytes(PNG_SIGNATURE)
    (out / "figures" / "cases_2d.png").write_text("stale")
    write_report(run, out)
    assert (out / "benchmarks.md").read_text() == "bench"
    assert (out / "figures" / "bench_smo.png").read_bytes() == PNG_SIGNATURE
    assert (out / "figures" / "cases_2d.png").read_bytes().startswith(PNG_SIGNATURE)


def test_tables_are_deterministic(run, tmp_path):
    a = write_report(run, tmp_path / "a")
    b = write_report(run, tmp_path / "b")

    def body(path):
        text = (path / "validation.md").read_text()
        return [line for line in text.splitlines() if not line.startswith(("| date", "| elapsed"))]

    assert body(a) == body(b)
    for name in FIGURES:
        assert (a / "figures" / name).read_bytes() == (b / "figures" / name).read_bytes()


def test_validation_message():
    with pytest.raises(ValueError, match="`run` must be a SuiteRun"):
        write_report([], "reports")
