"""The command line: help, exit codes of verify (0 when all pass, 1 otherwise), report."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from maxmargin.cli import build_parser, main
from maxmargin.verification.suite import COLUMNS, Method, _compare, extra_methods
from maxmargin.verification.tolerances import TIGHT


def test_help_lists_every_command():
    out = subprocess.run([sys.executable, "-m", "maxmargin.cli", "--help"], capture_output=True,
                         text=True, check=True).stdout
    assert "verify" in out and "report" in out
    sub = build_parser()._subparsers._group_actions[0]
    assert {"verify", "report"} <= set(sub.choices)


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
        return _compare(ctx, dataclasses.replace(o, b=o.b + 0.05, method="shifted"), TIGHT)

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


def test_bench_command_appears_when_its_module_exists(monkeypatch, capsys):
    import types

    fake = types.ModuleType("maxmargin.bench")
    calls = []

    def add_arguments(parser):
        parser.add_argument("--repeat", type=int, default=1)

    def bench_main(args):
        calls.append(args.repeat)
        return 0

    fake.add_arguments, fake.main = add_arguments, bench_main
    monkeypatch.setitem(sys.modules, "maxmargin.bench", fake)
    assert "bench" in build_parser()._subparsers._group_actions[0].choices
    assert main(["bench", "--repeat", "3"]) == 0 and calls == [3]
