"""Family ``verify``: ``maxmargin verify --suite quick`` end to end, with the compiled code in
Numba's cache and with an empty cache (the first run after an install: it compiles too)."""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time

from benchmarks.harness import Case, child_env, make_row
from benchmarks.tables import find_rows, md_table


def cases(suite: str) -> list[Case]:
    """``maxmargin verify --suite quick`` with the cache as it is (``quick``: the compiled code
    of the earlier families) and with an empty one (``quick_cold``), whatever the suite."""
    argv = ["verify", "--suite", "quick"]
    return [Case("verify", "quick", {"argv": argv, "cache": "warm"}),
            Case("verify", "quick_cold", {"argv": argv, "cache": "empty"})]


def _cpu_of_children() -> float:
    """User + system CPU seconds of this process's waited-for descendants."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(case: Case, repeats: int, budget: float) -> list[dict]:
    """``python -m maxmargin.cli ARGV`` end to end (``NUMBA_CACHE_DIR`` a new empty folder for
    an empty cache): wall time, the CPU time of its process tree and the exit code."""
    argv = [sys.executable, "-m", "maxmargin.cli", *case.params["argv"]]
    cache = case.params.get("cache", "warm")
    with tempfile.TemporaryDirectory(prefix="mm-numba-") as folder:
        env = dict(os.environ)
        if cache == "empty":
            env["NUMBA_CACHE_DIR"] = folder
        t0, c0 = time.perf_counter(), _cpu_of_children()
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=case.timeout_s,
                                  env=child_env(env))
            code, tail = proc.returncode, (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        except subprocess.TimeoutExpired:
            code, tail = None, ["timeout"]
        wall, cpu = time.perf_counter() - t0, _cpu_of_children() - c0
    status = "passed" if code == 0 else ("timeout" if code is None else "failed")
    return [
        make_row(
            case,
            "maxmargin " + " ".join(case.params["argv"]),
            "maxmargin",
            params={"argv": case.params["argv"], "numba_cache": cache},
            status=status,
            time_s=wall,
            times_s=[wall],
            extra={"exit_code": code, "cpu_s": cpu},
            message=" | ".join(tail) if code != 0 else "",
        )
    ]


def markdown(rows: list[dict]) -> str:
    """The ``maxmargin verify`` table."""
    body = [
        [r["method"], r["params"].get("numba_cache", "warm"), r["status"],
         r["extra"].get("exit_code"), r["time_s"], r["extra"].get("cpu_s"), r["message"]]
        for r in find_rows(rows, benchmark="verify")
    ]
    return md_table(
        "`maxmargin verify` end to end",
        ["command", "numba cache", "status", "exit code", "wall s", "CPU s",
         "output tail (on failure)"],
        body,
        "Run as a subprocess `python -m maxmargin.cli ...`, imports included; CPU: user + system "
        "time of its process tree. `empty`: NUMBA_CACHE_DIR is a new empty folder (the first "
        "run after an install compiles the loops, on every core, while the checks run).",
    )
