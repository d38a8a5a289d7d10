"""The shared harness of the benchmarks: measuring a call (warm-up, best of k, peak memory),
rows and their comparison, child processes with time-outs, the run's metadata, and the
Markdown/figure helpers every family uses."""
from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import math
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from maxmargin._io import atomic_write as _atomic_write
from maxmargin._io import atomic_write_text

SCHEMA = "maxmargin-bench/1"


#: Every row of ``benchmarks.json`` has exactly these keys (``None`` where not applicable).
ROW_KEYS = (
    "benchmark",  # family name
    "case",  # e.g. "rbf n=5000 tol=0.001"
    "n",  # number of training points (per hull for `hulls`)
    "d",  # dimension
    "method",  # e.g. "maxmargin.smo", "sklearn.SVC"
    "role",  # "maxmargin" | "peer" | "oracle"  ("probe" only inside memory probes)
    "reference",  # method the ratio / differences refer to (None for the reference itself)
    "params",  # dict: tolerance, kernel, target gap, epochs, ...
    "status",  # solver status, or "error" / "timeout" / "crashed"
    "iterations",
    "time_s",  # best of the timed calls
    "times_s",  # every timed call
    "warmup_s",  # the untimed warm-up call (tiny problem: imports, Numba cache load)
    "rss_base_mb",  # resident size just before the measured call
    "peak_rss_mb",  # high-water resident size during the measured call
    "peak_delta_mb",  # peak_rss_mb - rss_base_mb
    "objective",  # SVM: recomputed dual objective; hulls: distance; perceptron: train errors
    "rel_objective_diff",  # |obj - obj_ref| / max(1, |obj_ref|)   (hulls: / distance_ref)
    "b",
    "b_diff",  # |b - b_ref|
    "accuracy",  # training accuracy
    "accuracy_diff",  # accuracy - accuracy_ref
    "time_ratio",  # time_s / time_s of the reference
    "extra",  # dict of family-specific numbers
    "message",  # warnings, errors, solver messages
)


MB = 1024.0 * 1024.0


def _status_field(key: str) -> float | None:
    """A ``VmXXX`` field of ``/proc/self/status`` in MB (None where unavailable)."""
    try:
        with open("/proc/self/status") as fh:
            match = re.search(rf"^{key}:\s+(\d+)\s+kB", fh.read(), re.MULTILINE)
    except OSError:
        return None
    return int(match.group(1)) / 1024.0 if match else None


def _reset_peak() -> bool:
    """Reset the resident-set high-water mark (Linux ``clear_refs`` code 5)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return False
    return True


def _peak_mb() -> float:
    """The resident-set high-water mark in MB: ``VmHWM``, else ``ru_maxrss``.

    ``VmHWM`` is the high-water mark of this process's own address space, which
    ``clear_refs`` resets. ``getrusage(RUSAGE_SELF).ru_maxrss`` is the same number on Linux
    except that it never drops below the resident size the process had *before exec*, i.e. its
    parent's at fork time; a probe started from a large parent would report the parent's size.
    """
    hwm = _status_field("VmHWM")
    return hwm if hwm is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _release_memory() -> None:
    """Collect garbage and hand freed heap memory back to the OS before a measurement."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


@dataclass
class Measured:
    """What :func:`measure` saw: the last value, the timings and the memory."""

    value: Any = None
    times: list[float] = field(default_factory=list)
    warmup_s: float | None = None
    rss_base_mb: float | None = None
    peak_rss_mb: float | None = None
    message: str = ""
    error: bool = False

    @property
    def best(self) -> float | None:
        return min(self.times) if self.times else None


def call_recording(fn: Callable[[], Any], notes: list[str]) -> Any:
    """Call ``fn`` and append the text of every warning it raises to ``notes``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = fn()
    for w in caught:
        text = f"{w.category.__name__}: {w.message}"
        if text not in notes:
            notes.append(text)
    return value


Call = tuple[Callable[[], Any], Callable[[], Any] | None]


def _guarded(m: Measured, notes: list[str], fn: Callable[[], Any]) -> Any:
    """Run ``fn``; an exception marks ``m`` as failed with the traceback's last line."""
    try:
        return fn()
    except Exception as exc:  # recorded in the row, reported by the runner's exit code
        m.error = True
        m.value = None
        notes.append("error: " + traceback.format_exception_only(type(exc), exc)[-1].strip())
        return None


def measure_many(calls: Sequence[Call], repeats: int = 3, budget_s: float = 20.0) -> list[Measured]:
    """Time several ``(run, warm)`` calls interleaved, best of ``repeats``, with peak memory.

    Every ``warm`` (a tiny problem of the same kind: imports, Numba cache, first-call costs) runs
    first, untimed. Then in each round every ``run`` is timed once, in order, so a change of
    machine load affects all of them alike. A call is repeated while its total time stays within
    ``budget_s``. The peak resident memory is that of each call's first timed run (the
    high-water mark reset just before it). Exceptions are recorded (``error=True``, the
    traceback's last line in ``message``), never swallowed silently.
    """
    outs = [Measured() for _ in calls]
    notes: list[list[str]] = [[] for _ in calls]
    for (_, warm), m, note in zip(calls, outs, notes, strict=True):
        if warm is not None:
            t0 = time.perf_counter()
            _guarded(m, note, lambda warm=warm: call_recording(warm, []))
            m.warmup_s = time.perf_counter() - t0
    for round_ in range(repeats):
        for (run, _), m, note in zip(calls, outs, notes, strict=True):
            if m.error or (round_ and sum(m.times) + m.times[0] > budget_s):
                continue
            reset = False
            if round_ == 0:
                _release_memory()
                m.rss_base_mb = _status_field("VmRSS")
                reset = _reset_peak()
            m.value = None
            t0 = time.perf_counter()
            value = _guarded(m, note, lambda run=run, note=note: call_recording(run, note))
            if m.error:
                continue
            m.times.append(time.perf_counter() - t0)
            m.value = value
            if reset:
                m.peak_rss_mb = _peak_mb()
    for m, note in zip(outs, notes, strict=True):
        m.message = "; ".join(note)
    return outs


def measure(
    run: Callable[[], Any],
    warm: Callable[[], Any] | None = None,
    repeats: int = 3,
    budget_s: float = 20.0,
) -> Measured:
    """:func:`measure_many` for one call."""
    return measure_many([(run, warm)], repeats, budget_s)[0]


def make_row(case: Case, method: str, role: str, m: Measured | None = None, **fields: Any) -> dict:
    """A row with every key of :data:`ROW_KEYS`, filled from the case and a measurement."""
    row: dict[str, Any] = dict.fromkeys(ROW_KEYS)
    row.update(
        benchmark=case.family,
        case=case.name,
        n=case.params.get("n"),
        d=case.params.get("d"),
        method=method,
        role=role,
        params={},
        extra={},
        message="",
    )
    if m is not None:
        peak_delta = (
            m.peak_rss_mb - m.rss_base_mb
            if m.peak_rss_mb is not None and m.rss_base_mb is not None
            else None
        )
        row.update(
            time_s=m.best,
            times_s=list(m.times),
            warmup_s=m.warmup_s,
            rss_base_mb=m.rss_base_mb,
            peak_rss_mb=m.peak_rss_mb,
            peak_delta_mb=peak_delta,
            message=m.message,
            status="error" if m.error else None,
        )
    row.update(fields)
    return row


def join_messages(*messages: str) -> str:
    """Non-empty messages joined by "; ", leaving out any already contained in another."""
    kept: list[str] = []
    for msg in messages:
        if msg and not any(msg in other for other in kept):
            kept = [k for k in kept if k not in msg] + [msg]
    return "; ".join(kept)


def compare(rows: list[dict], reference: dict, objective_scale: float | None = None) -> None:
    """Fill ``time_ratio``, ``rel_objective_diff``, ``b_diff``, ``accuracy_diff`` vs reference."""
    ref_obj = reference.get("objective")
    for row in rows:
        if row is reference:
            continue
        row["reference"] = reference["method"]
        if row.get("time_s") and reference.get("time_s"):
            row["time_ratio"] = row["time_s"] / reference["time_s"]
        if row.get("objective") is not None and ref_obj is not None:
            scale = objective_scale if objective_scale is not None else max(1.0, abs(ref_obj))
            row["rel_objective_diff"] = abs(row["objective"] - ref_obj) / scale
        if row.get("b") is not None and reference.get("b") is not None:
            row["b_diff"] = abs(row["b"] - reference["b"])
        if row.get("accuracy") is not None and reference.get("accuracy") is not None:
            row["accuracy_diff"] = row["accuracy"] - reference["accuracy"]


@dataclass(frozen=True)
class Case:
    """One benchmark case: a family, a name and the parameters its child process needs."""

    family: str
    name: str
    params: dict
    timeout_s: float = 1800.0
    isolate: bool = False


SETTINGS = {
    # suite: (best-of-k, time budget per method for the repeats, seconds)
    "smoke": (1, 5.0),
    "standard": (5, 20.0),
    "scale": (5, 20.0),
}


def finite(value: Any) -> float | None:
    """A finite float, or None (JSON has no NaN)."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def jsonable(obj: Any) -> Any:
    """Plain JSON types: numpy scalars converted, non-finite floats as None."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [jsonable(v) for v in obj]
    if isinstance(obj, bool | np.bool_):
        return bool(obj)
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        return finite(obj)
    return obj


#: The folder that holds the ``benchmarks`` package (a checkout of the repository).
ROOT = Path(__file__).resolve().parent.parent


def child_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` with the repository on ``PYTHONPATH``, so a child process can import
    ``benchmarks`` whatever its working directory."""
    paths = [str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    return dict(env, PYTHONPATH=os.pathsep.join(dict.fromkeys(paths)))


def groups(cases: Sequence[Case]) -> list[list[Case]]:
    """Consecutive cases of one family share a child process; ``isolate`` cases get their own."""
    groups: list[list[Case]] = []
    for case in cases:
        last = groups[-1] if groups else None
        if last and not case.isolate and not last[-1].isolate and last[-1].family == case.family:
            last.append(case)
        else:
            groups.append([case])
    return groups


def _read_progress(path: Path) -> tuple[int, list[dict]]:
    """The cases done and the rows a child has saved so far."""
    if not path.exists():
        return 0, []
    data = json.loads(path.read_text())
    return data["done"], data["rows"]


def run_group(
    cases: list[Case],
    repeats: int,
    budget: float,
    env: dict[str, str],
    log: Callable[[str], None] | None = None,
) -> list[dict]:
    """Run cases in one fresh child process, logging each as it finishes.

    A case running longer than its ``timeout_s`` kills the child; it and the cases after it
    become ``timeout`` rows, and a child that dies becomes ``crashed`` rows (with its stderr).
    """
    with tempfile.TemporaryDirectory(prefix="mm-bench-") as tmp:
        spec, out, err = Path(tmp, "spec.json"), Path(tmp, "rows.json"), Path(tmp, "stderr")
        spec.write_text(
            json.dumps(
                {
                    "cases": [jsonable(c.__dict__) for c in cases],
                    "repeats": repeats,
                    "budget": budget,
                }
            )
        )
        code = ("import sys, benchmarks.suites as s; "
                "sys.exit(s.child_main(sys.argv[1], sys.argv[2]))")
        logged, started, timed_out = 0, time.perf_counter(), False
        with open(err, "w") as err_fh:
            proc = subprocess.Popen(
                [sys.executable, "-c", code, str(spec), str(out)],
                env=child_env(env),
                stdout=subprocess.DEVNULL,
                stderr=err_fh,
            )
            try:
                while True:
                    finished = proc.poll() is not None
                    done, rows = _read_progress(out)
                    for case in cases[logged:done]:
                        if log is not None:
                            case_rows = [r for r in rows if r["case"] == case.name]
                            log(_progress_line(case, case_rows, time.perf_counter() - started))
                        started = time.perf_counter()
                    logged = done
                    if finished:
                        break
                    elapsed = time.perf_counter() - started
                    if done < len(cases) and elapsed > cases[done].timeout_s:
                        timed_out = True
                        break
                    time.sleep(0.2)
            finally:  # a timeout, or the runner interrupted: never leave the child running
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        done, rows = _read_progress(out)
        tail = " | ".join(err.read_text().strip().splitlines()[-3:])
    for case in cases[done:]:
        if timed_out and case is cases[done]:
            status, msg = "timeout", f"timeout: no result after {case.timeout_s:.0f} s"
        elif timed_out:
            status, msg = "timeout", "not run: an earlier case in its process timed out"
        else:
            status, msg = "crashed", f"child exited {proc.returncode}: {tail}"
        rows.append(make_row(case, case.family, "maxmargin", status=status, message=msg))
        if log is not None:
            log(_progress_line(case, rows[-1:], 0.0))
    return rows


def package_versions() -> dict[str, str | None]:
    """Python and the installed versions of maxmargin and every peer."""
    from importlib import metadata

    out: dict[str, str | None] = {"python": platform.python_version()}
    for dist in (
        "maxmargin",
        "numpy",
        "scipy",
        "scikit-learn",
        "numba",
        "cvxpy",
        "clarabel",
        "osqp",
        "matplotlib",
    ):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def machine_info() -> dict[str, Any]:
    """CPU, core count, memory and the thread settings (Numba, BLAS) of this machine."""
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        found = re.search(r"^model name\s*:\s*(.+)$", Path("/proc/cpuinfo").read_text(), re.M)
        cpu = found.group(1).strip() if found else cpu
    mem = None
    with contextlib.suppress(OSError, AttributeError):
        mem = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
    threads: dict[str, Any] = {
        k: os.environ.get(k)
        for k in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")
    }
    with contextlib.suppress(ImportError):
        import numba

        threads["numba_threads"] = numba.config.NUMBA_NUM_THREADS
    with contextlib.suppress(ImportError):
        from threadpoolctl import threadpool_info

        threads["blas"] = [
            f"{i.get('internal_api')} {i.get('num_threads')} threads" for i in threadpool_info()
        ]
    return {
        "platform": platform.platform(),
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "memory_gb": round(mem / 1024 / 1024, 1) if mem else None,
        "threads": threads,
    }


def git_commit() -> str | None:
    """The short commit of the repository the harness runs from (None outside git)."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() or None


def _progress_line(case: Case, rows: list[dict], seconds: float) -> str:
    """One line of progress: each method's status and time."""
    parts = []
    for r in rows:
        t = f"{r['time_s']:.3g}s" if r.get("time_s") is not None else "-"
        parts.append(f"{r['method']}={r['status']}/{t}")
    return f"[{case.family}] {case.name}: {', '.join(parts)} ({seconds:.1f} s)"


def merge_results(previous: dict, new: dict, known: set[tuple[str, str]] | None = None) -> dict:
    """``new`` with the rows of families it did not run taken from ``previous``, and, of the
    families it ran, the rows of the cases it did not run that some suite still defines
    (``known``: ``(family, case)`` pairs; a ``standard`` run keeps a ``scale`` run's largest
    cases).

    ``merged_from`` lists, for every earlier run that still contributes rows, its suite,
    ``--only``, date, CPU, the families it contributes and, under ``cases``, single cases it
    contributes to a family measured since.
    """
    ran = {r["benchmark"] for r in new["rows"]}
    ran_cases = {(r["benchmark"], r.get("case")) for r in new["rows"]}
    known = known or set()
    kept = [r for r in previous.get("rows", []) if r["benchmark"] not in ran]
    partial = [r for r in previous.get("rows", []) if r["benchmark"] in ran
               and (r["benchmark"], r.get("case")) not in ran_cases
               and (r["benchmark"], r.get("case")) in known]
    kept_families = {r["benchmark"] for r in kept}
    earlier = previous.get("merged_from", [])
    claimed = {f for entry in earlier for f in entry["families"]}
    cpu = previous.get("machine", {}).get("cpu")
    runs = [*earlier, {"suite": previous.get("suite"), "only": previous.get("only"),
                       "date": previous.get("date"), **({"cpu": cpu} if cpu else {}),
                       "families": sorted({r["benchmark"] for r in previous.get("rows", [])}
                                          - claimed)}]

    def measured_by(family: str, case: str) -> int:
        """The earlier run a kept row comes from: the one credited with its case, else with
        its family, else the previous run itself."""
        for k, run in enumerate(runs):
            if case in run.get("cases", {}).get(family, ()):
                return k
        return next((k for k, run in enumerate(runs) if family in run["families"]),
                    len(runs) - 1)

    entries = [{**{key: v for key, v in run.items() if key != "cases"},
                "families": [f for f in run["families"] if f in kept_families], "cases": {}}
               for run in runs]
    for row in kept + partial:
        family, case = row["benchmark"], row.get("case")
        entry = entries[measured_by(family, case)]
        if family not in entry["families"] or family in ran:
            cases = entry["cases"].setdefault(family, [])
            if case not in cases:
                cases.append(case)
    for entry in entries:
        if not entry["cases"]:
            del entry["cases"]
    merged = dict(new)
    merged["rows"] = kept + partial + new["rows"]
    merged["merged_from"] = [entry for entry in entries if entry["families"] or "cases" in entry]
    return merged


def atomic_savefig(fig: Any, path: Path) -> None:
    """Save ``fig`` as a PNG atomically (:func:`maxmargin._io.atomic_write`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(path, lambda fh: fig.savefig(fh, format="png", dpi=110), binary=True)


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (:func:`maxmargin._io.atomic_write_text`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)
