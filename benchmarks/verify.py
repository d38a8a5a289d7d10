"""Family ``verify``: ``maxmargin verify --suite quick`` end to end."""
from __future__ import annotations

import subprocess
import sys
import time

from benchmarks.harness import Case, make_row
from benchmarks.tables import find_rows, md_table


def cases(suite: str) -> list[Case]:
    """``maxmargin verify --suite quick``, whatever the suite."""
    return [Case("verify", "quick", {"argv": ["verify", "--suite", "quick"]})]


def run(case: Case, repeats: int, budget: float) -> list[dict]:
    """``python -m maxmargin.cli ARGV`` end to end: wall time and exit code."""
    argv = [sys.executable, "-m", "maxmargin.cli", *case.params["argv"]]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=case.timeout_s)
        code, tail = proc.returncode, (proc.stdout + proc.stderr).strip().splitlines()[-3:]
    except subprocess.TimeoutExpired:
        code, tail = None, ["timeout"]
    wall = time.perf_counter() - t0
    status = "passed" if code == 0 else ("timeout" if code is None else "failed")
    return [
        make_row(
            case,
            "maxmargin " + " ".join(case.params["argv"]),
            "maxmargin",
            params={"argv": case.params["argv"]},
            status=status,
            time_s=wall,
            times_s=[wall],
            extra={"exit_code": code},
            message=" | ".join(tail) if code != 0 else "",
        )
    ]


def markdown(rows: list[dict]) -> str:
    """The ``maxmargin verify`` table."""
    body = [
        [r["method"], r["status"], r["extra"].get("exit_code"), r["time_s"], r["message"]]
        for r in find_rows(rows, benchmark="verify")
    ]
    return md_table(
        "`maxmargin verify` end to end",
        ["command", "status", "exit code", "wall s", "output tail (on failure)"],
        body,
        "Run as a subprocess `python -m maxmargin.cli ...`, imports included.",
    )

