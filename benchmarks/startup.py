"""Family ``compile``: the first-call (Numba compile) time of each compiled algorithm, with an
empty and with a warm cache."""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from typing import Any

from benchmarks.data import make_clouds, make_hulls, make_separable
from benchmarks.harness import Case, call_recording, child_env, make_row
from benchmarks.tables import find_rows, md_table


def cases(suite: str) -> list[Case]:
    """An empty Numba cache (a fresh install) and the warm one ``cache=True`` leaves behind."""
    return [Case("compile", c, {"cache": c}, 900.0) for c in ("empty", "warm")]


def probe() -> list[dict]:
    """First and second call of every compiled algorithm on a tiny problem, in this process."""
    X, y = make_clouds(60, 5, seed=0)
    Xs, ys = make_separable(60, 5, seed=0)
    P, Q = make_hulls(30, 5, seed=0)
    probes = [
        ("smo", "maxmargin.algorithms.smo", lambda mod: mod.smo(X, y, kernel="rbf", gamma=0.2)),
        (
            "smo linear (after rbf)",
            "maxmargin.algorithms.smo",
            lambda mod: mod.smo(X, y, kernel="linear"),
        ),
        ("gilbert_hulls", "maxmargin.algorithms.gilbert", lambda mod: mod.gilbert_hulls(P, Q)),
        ("mdm_hulls", "maxmargin.algorithms.mdm", lambda mod: mod.mdm_hulls(P, Q)),
        ("wolfe_hulls", "maxmargin.algorithms.wolfe", lambda mod: mod.wolfe_hulls(P, Q)),
        ("perceptron", "maxmargin.algorithms.perceptron", lambda mod: mod.perceptron(Xs, ys)),
    ]
    out = []
    for name, module, call in probes:
        entry: dict[str, Any] = {"method": f"maxmargin.{name}"}
        try:
            t0 = time.perf_counter()
            mod = importlib.import_module(module)
            entry["import_s"] = time.perf_counter() - t0
            for key in ("first_call", "second_call"):
                t0, c0 = time.perf_counter(), time.process_time()
                call_recording(lambda mod=mod, call=call: call(mod), [])
                entry[f"{key}_s"] = time.perf_counter() - t0
                entry[f"{key}_cpu_s"] = time.process_time() - c0
            entry["compile_s"] = entry["import_s"] + entry["first_call_s"] - entry["second_call_s"]
        except Exception as exc:
            entry["error"] = traceback.format_exception_only(type(exc), exc)[-1].strip()
        out.append(entry)
    return out


def run(case: Case, repeats: int, budget: float) -> list[dict]:
    """Run :func:`probe` in a fresh process, with an empty or the warm Numba cache."""
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="mm-numba-") as cache_dir:
        if case.params["cache"] == "empty":
            env["NUMBA_CACHE_DIR"] = cache_dir
        code = "import json, benchmarks.startup as s; print(json.dumps(s.probe()))"
        proc = subprocess.run(
            [sys.executable, "-c", code], env=child_env(env), capture_output=True, text=True,
            timeout=600,
        )
    if proc.returncode != 0:
        raise RuntimeError(f"compile probe exited {proc.returncode}: {proc.stderr[-500:]}")
    rows = []
    for entry in json.loads(proc.stdout.strip().splitlines()[-1]):
        err = entry.pop("error", None)
        rows.append(
            make_row(
                case,
                entry.pop("method"),
                "maxmargin",
                params={"numba_cache": case.params["cache"]},
                status="error" if err else "done",
                time_s=entry.get("compile_s"),
                extra=entry,
                message=f"error: {err}" if err else "",
            )
        )
    return rows


def markdown(rows: list[dict]) -> str:
    """The compile-time table."""
    body = [
        [
            r["case"],
            r["method"],
            r["extra"].get("import_s"),
            r["extra"].get("first_call_s"),
            r["extra"].get("first_call_cpu_s"),
            r["extra"].get("second_call_s"),
            r["time_s"],
            r["status"],
        ]
        for r in find_rows(rows, benchmark="compile")
    ]
    return md_table(
        "Numba compile time",
        [
            "numba cache",
            "algorithm",
            "import s",
            "first call s",
            "first call CPU s",
            "second call s",
            "compile s",
            "status",
        ],
        body,
        "A fresh process per cache setting; compile = import + first call - second call on a "
        "tiny problem (wall time; the CPU time of the first call beside it, steadier on a "
        "shared machine). `empty`: NUMBA_CACHE_DIR is a new empty folder (full compilation); "
        "`warm`: the cache that `cache=True` leaves behind.",
    )

