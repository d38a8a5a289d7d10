"""The command line: help, exit codes of verify (0 when all pass, 1 otherwise), report."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from maxmargin.cli import build_parser, main
from maxmargin.verification.checks import compare
from maxmargin.verification.suite import COLUMNS, Method, extra_methods
from maxmargin.verification.tolerances import TIGHT


def test_help_lists_every_command():
    out = subprocess.run([sys.executable, "-m", "maxmargin.cli", "--help"], capture_output=True,
                         text=True, check=True).stdout
    assert "verify" in out and "report" in out
    sub = build_parser()._subparsers._group_actions[0]
    assert {"verify", "report", "compile"} <= set(sub.choices)


def test_no_command_prints_help(capsys):
    assert main([]) == 0
    assert "verify" in capsys.readouterr().out


def test_verify_passes_with_exit_code_0(capsys, tmp_path):
    target = tmp_path / "rows.json"
    code = main(["verify", "--case", "li_hang_7_1", "--json", str(target), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "li_hang_7_1" in out and "smo/wss2" in out and " 0 fail" in out
    payload = json.loads(target.read_text())
    assert [c["name"] for c in payload["schema"]] == [n for n, _ in COLUMNS]
    assert all(row["verdict"] == "pass" for row in payload["rows"])


def test_a_wrong_candidate_makes_verify_exit_1(capsys):
    def shifted_b(ctx):
        o = ctx.oracle
        return compare(ctx, dataclasses.replace(o, b=o.b + 0.05, method="shifted"), TIGHT)

    with extra_methods(Method("shifted-b", "smo", shifted_b)):
        code = main(["verify", "--case", "two_points", "--quiet"])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL two_points / shifted-b: b error" in out


def test_report_writes_the_directory(capsys, tmp_path):
    out_dir = tmp_path / "rep"
    code = main(["report", "--out", str(out_dir), "--case", "two_points", "--quiet"])
    assert code == 0, capsys.readouterr().out
    assert (out_dir / "validation.md").is_file() and (out_dir / "results.csv").is_file()
    assert "report written to" in capsys.readouterr().out


def test_bad_arguments_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["verify", "--suite", "medium"])
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        main(["verify", "--case", "no-such-case", "--quiet"])
    assert info.value.code == 2
    assert "`case` pattern 'no-such-case' matches no case" in capsys.readouterr().err


# --- conventions: --version, --list, --json -, output paths, report overwrite, --data -------------


def test_version(capsys):
    import maxmargin

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"maxmargin {maxmargin.__version__}"


def test_list_prints_one_line_per_case(capsys):
    from maxmargin.verification.cases import catalogue

    assert main(["verify", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(catalogue("quick"))
    assert lines[0].split()[:2] == ["two_points", "worked"]


def test_json_to_stdout_and_table_to_stderr(capsys):
    assert main(["verify", "--case", "two_points,li_hang_7_1", "--json", "-", "--quiet"]) == 0
    captured = capsys.readouterr()
    payload = json.loads(captured.out)
    assert {r["case"] for r in payload["rows"]} == {"two_points", "li_hang_7_1"}
    assert "checks on 2 cases" in captured.err


@pytest.mark.parametrize("target", ["/no/such/dir/x.json", "."])
def test_unwritable_json_fails_before_any_work(capsys, target):
    with pytest.raises(SystemExit) as info:
        main(["verify", "--json", target, "--quiet"])
    assert info.value.code == 2
    err = capsys.readouterr()
    assert "--json" in err.err and "checks on" not in err.out  # nothing ran


def test_report_never_overwrites_the_default_report(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "validation.md").write_text("the committed report\n")
    with pytest.raises(SystemExit) as info:
        main(["report", "--case", "two_points", "--quiet"])
    assert info.value.code == 2
    assert "already exists" in capsys.readouterr().err
    assert (tmp_path / "reports" / "validation.md").read_text() == "the committed report\n"
    assert main(["report", "--out", "reports", "--case", "two_points", "--quiet"]) == 0
    assert "two_points" in (tmp_path / "reports" / "validation.md").read_text()


def test_verify_data_file_binary_and_multiclass(capsys, tmp_path):
    from sklearn.datasets import dump_svmlight_file, load_iris

    X, y = load_iris(return_X_y=True)
    path = tmp_path / "iris.svm"
    dump_svmlight_file(X, y, str(path))  # scikit-learn's default: zero-based indices
    target = tmp_path / "rows.json"
    code = main(["verify", "--data", str(path), "--json", str(target), "--quiet"])
    captured = capsys.readouterr()
    assert code == 0, captured.out
    rows = json.loads(target.read_text())["rows"]
    assert {r["case"] for r in rows} == {"iris:0_vs_1", "iris:0_vs_2", "iris:1_vs_2"}
    assert {r["method"] for r in rows} == {"oracle", "smo", "primal/certified", "dcd_svc"}
    assert "+1 = 0.0, -1 = 1.0 (100 samples)" in captured.err  # which label is which
    code = main(["verify", "--data", str(path), "--positive", "2", "--kernel", "rbf",
                 "--gamma", "0.5", "--C", "10", "--methods", "oracle,smo/tight", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0 and "iris:2_vs_rest" in out and "smo/tight" in out


def test_verify_data_usage_errors_exit_2(capsys, tmp_path):
    for argv, words in [
        (["--data", str(tmp_path / "missing.svm")], "is not a readable file"),
        (["--data", str(tmp_path / "d.csv"), "--methods", "gilbert"], "`methods` must be among"),
        (["--data", str(tmp_path / "d.csv"), "--positive", "7"], "`positive` '7' is not one"),
    ]:
        (tmp_path / "d.csv").write_text("x1,x2,label\n0,0,a\n1,1,b\n0,1,a\n2,2,b\n")
        with pytest.raises(SystemExit) as info:
            main(["verify", "--quiet", *argv])
        assert info.value.code == 2
        assert words in capsys.readouterr().err


def test_compile_fills_the_cache_and_says_so(capsys):
    """``maxmargin compile`` warms every specialisation up; afterwards the cache is not cold."""
    from maxmargin.verification.suite import numba_cache_is_cold

    assert main(["compile", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "on-disk cache" in out and " in " in out
    assert not numba_cache_is_cold()
