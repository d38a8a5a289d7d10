"""``maxmargin bench``: maxmargin's algorithms timed against their peers, side by side.

The cases of a benchmark family run in a fresh child process (``python -c ...``; the large
cases one process each), and inside that one process the peer and maxmargin solve the **same
data** at the **same tolerance**, one after the other: first a warm-up
call on a tiny problem of the same kind (so Numba compilation and import costs are not timed;
their duration is recorded as ``warmup_s``), then best-of-``k`` timed calls. Compile time is
measured separately by the ``compile`` benchmark, in a child process with an empty Numba cache.

Families (``--only`` takes these names):

=============  ===========================================================================
smo_svc        :func:`~maxmargin.algorithms.smo.smo` vs scikit-learn ``SVC`` (LIBSVM), RBF and
               linear kernels, ``d = 20``, ``C = 1``, ``tol = 1e-3``, cache 200 MB, same gamma.
smo_cvxpy      ``smo`` vs the CVXPY dual oracle ``svm_dual`` with Clarabel and OSQP.
hulls          ``gilbert_hulls`` and ``mdm_hulls`` vs ``hull_distance`` solved by Clarabel,
               at relative duality gaps 1e-3, 1e-6, 1e-8.
perceptron     ``perceptron`` vs scikit-learn ``Perceptron`` run for the same number of epochs.
compile        first-call (Numba compile) time of each compiled algorithm, empty and warm cache.
verify         ``maxmargin verify --suite quick`` end to end (wall time, exit code).
=============  ===========================================================================

Accuracy is judged by quantities computed here, independently of what each solver reports:

* SVM dual objective, for any solver's ``(alpha_i y_i)`` on its support vectors ``S``,

  .. math::

      g_i = \\sum_{j \\in S} \\alpha_j y_j K(x_j, x_i), \\qquad
      D = \\sum_{j \\in S} \\alpha_j - \\tfrac12 \\sum_{i \\in S} \\alpha_i y_i g_i,

  evaluated in row blocks (never an ``n x n`` matrix); training accuracy is the fraction of
  ``sign(g_i + b) = y_i``. For SVC, ``alpha_j y_j`` is ``dual_coef_`` and ``b`` is
  ``intercept_`` (scikit-learn's decision function is ``sum_j dual_coef_j K(sv_j, x) + b``).
* Relative duality gap of nearest points ``p = P^T lam``, ``q = Q^T mu`` (weights clipped to the
  simplex first) with ``z = p - q``:

  .. math::

      \\mathrm{gap} = \\frac{\\|z\\|^2 - (\\min_i \\langle z, P_i\\rangle
      - \\max_j \\langle z, Q_j\\rangle)}{\\|z\\|^2}.

* Peak memory: the child resets the kernel's resident-set high-water mark
  (``/proc/self/clear_refs``), runs the method once, and reads the high-water mark ``VmHWM``
  (what ``getrusage(RUSAGE_SELF).ru_maxrss`` reports, without its floor at the parent's size);
  ``peak_delta_mb`` is that peak minus the resident size just before the call (tracemalloc
  would miss Numba's allocations). For the largest SMO cases each solver is measured again
  alone in a fresh process.

Outputs (written atomically: temp file + ``os.replace``): ``benchmarks.json`` (versions, machine,
date, one row per case x method), ``benchmarks.md`` (one titled table per family, headline ratios,
and a MET / NOT MET line per stated target) and ``figures/bench_*.png``.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import dataclasses
import datetime as _dt
import gc
import importlib
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
from statistics import NormalDist
from typing import Any

import numpy as np

from maxmargin._validation import check_choice, check_positive_int

__all__ = [
    "SUITES",
    "FAMILIES",
    "ROW_KEYS",
    "Case",
    "add_arguments",
    "main",
    "plan_suite",
    "run_suite",
    "write_outputs",
    "evaluate_targets",
    "make_clouds",
    "make_separable",
    "make_hulls",
    "svm_scores",
    "hull_gap",
    "measure",
    "measure_many",
    "build_figures",
    "render_markdown",
]

SUITES = ("smoke", "standard", "scale")
FAMILIES = ("smo_svc", "smo_cvxpy", "hulls", "perceptron", "compile", "verify")
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

_MB = 1024.0 * 1024.0
#: The SMO memory bound checked at scale: cache + MEM_X_COPIES copies of X + MEM_N_ARRAYS
#: float64 arrays of length n (alpha, gradients, masks, cache index, ... generously counted).
MEM_X_COPIES = 4
MEM_N_ARRAYS = 64


# ----------------------------------------------------------------------------------------------
# Data
# ----------------------------------------------------------------------------------------------


def make_clouds(n: int, d: int, seed: int, bayes_error: float = 0.1) -> tuple[np.ndarray, ...]:
    """Two overlapping Gaussian clouds ``N(+-delta/2 e_1, I_d)`` with labels +-1 (half each).

    ``delta = 2 Phi^{-1}(1 - bayes_error)``, so the Bayes classifier errs on ``bayes_error`` of
    the points and the soft-margin SVM has many bounded support vectors, as in practice.
    """
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    rng.shuffle(y)
    X = rng.standard_normal((n, d))
    X[:, 0] += y * NormalDist().inv_cdf(1.0 - bayes_error)
    return X, y


def make_separable(
    n: int, d: int, seed: int, margin: float = 0.1, bias: float = 0.5
) -> tuple[np.ndarray, np.ndarray]:
    """Linearly separable data: ``x ~ N(0, I_d)`` kept where ``|w.x + b| >= margin``.

    ``w`` is a random unit vector, ``y = sign(w.x + b)``, so ``(w, b)`` separates the data with
    geometric margin at least ``margin`` (Novikoff: at most ``(R / margin)^2`` mistakes up to the
    bias scaling).
    """
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(d)
    w /= np.linalg.norm(w)
    kept: list[np.ndarray] = []
    total = 0
    while total < n:
        X = rng.standard_normal((2 * n, d))
        X = X[np.abs(X @ w + bias) >= margin]
        kept.append(X)
        total += X.shape[0]
    X = np.concatenate(kept)[:n]
    return X, np.where(X @ w + bias > 0, 1.0, -1.0)


def make_hulls(m: int, d: int, seed: int, shift: float = 5.0) -> tuple[np.ndarray, np.ndarray]:
    """Two Gaussian clouds of ``m`` points each, ``N(+-shift e_1, I_d)``: disjoint hulls."""
    rng = np.random.default_rng(seed)
    P = rng.standard_normal((m, d))
    Q = rng.standard_normal((m, d))
    P[:, 0] += shift
    Q[:, 0] -= shift
    return P, Q


# ----------------------------------------------------------------------------------------------
# Independent accuracy measures
# ----------------------------------------------------------------------------------------------


def svm_scores(
    X: np.ndarray,
    y: np.ndarray,
    sv: np.ndarray,
    coef: np.ndarray,
    b: float,
    kernel: Any,
    block_mb: float = 64.0,
) -> dict[str, float]:
    """Dual objective and training accuracy of an SVM given by its support vectors.

    Parameters
    ----------
    X, y : training data, shapes (n, d) and (n,)
    sv : int array
        Indices of the support vectors in ``X``.
    coef : array
        ``alpha_j y_j`` for ``j`` in ``sv``.
    b : float
        Intercept, ``f(x) = sum_j coef_j K(x_sv_j, x) + b``.
    kernel : maxmargin.kernels.Kernel
    block_mb : float
        Size of one block of kernel rows; the ``n x |sv|`` matrix is never formed.

    Returns
    -------
    dict with ``dual_objective`` ``D = sum |coef| - 1/2 sum_{i in sv} coef_i g_i`` (``g`` the
    decision values without ``b``) and ``accuracy`` (fraction of ``sign(g + b) == y``, with
    ``sign(0) = -1`` like ``predict``).
    """
    sv = np.asarray(sv, dtype=np.intp)
    coef = np.asarray(coef, dtype=np.float64)
    Xs = X[sv]
    g = np.empty(X.shape[0])
    rows = max(1, int(block_mb * _MB / (8.0 * max(1, sv.size))))
    for start in range(0, X.shape[0], rows):
        stop = min(X.shape[0], start + rows)
        g[start:stop] = kernel(X[start:stop], Xs) @ coef if sv.size else 0.0
    dual = float(np.sum(np.abs(coef)) - 0.5 * coef @ g[sv])
    pred = np.where(g + b > 0, 1.0, -1.0)
    return {"dual_objective": dual, "accuracy": float(np.mean(pred == y))}


def hull_gap(
    P: np.ndarray, Q: np.ndarray, weights_p: np.ndarray, weights_q: np.ndarray
) -> dict[str, float]:
    """Distance and relative duality gap of convex weights on two point sets.

    The weights are clipped at 0 and normalised to sum 1 (so ``p``, ``q`` lie in the hulls even
    for an interior-point solver's slightly infeasible answer); with ``z = p - q``

    .. math::

        \\mathrm{gap} = (\\|z\\|^2 - \\min_i \\langle z, P_i\\rangle
        + \\max_j \\langle z, Q_j\\rangle) / \\|z\\|^2,

    which bounds the relative error of ``||z||^2`` (``gap = inf`` when ``z = 0``).
    """
    lam = np.clip(np.asarray(weights_p, dtype=np.float64), 0.0, None)
    mu = np.clip(np.asarray(weights_q, dtype=np.float64), 0.0, None)
    z = P.T @ (lam / lam.sum()) - Q.T @ (mu / mu.sum())
    zz = float(z @ z)
    support = float(np.min(P @ z) - np.max(Q @ z))
    gap = (zz - support) / zz if zz > 0 else math.inf
    return {"distance": math.sqrt(zz), "gap": gap}


# ----------------------------------------------------------------------------------------------
# Measuring one call: warm-up, best-of-k timing, peak resident memory
# ----------------------------------------------------------------------------------------------


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


def _call_recording(fn: Callable[[], Any], notes: list[str]) -> Any:
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
            _guarded(m, note, lambda warm=warm: _call_recording(warm, []))
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
            value = _guarded(m, note, lambda run=run, note=note: _call_recording(run, note))
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


def _row(case: Case, method: str, role: str, m: Measured | None = None, **fields: Any) -> dict:
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


def _join_messages(*messages: str) -> str:
    """Non-empty messages joined by "; ", leaving out any already contained in another."""
    kept: list[str] = []
    for msg in messages:
        if msg and not any(msg in other for other in kept):
            kept = [k for k in kept if k not in msg] + [msg]
    return "; ".join(kept)


def _compare(rows: list[dict], reference: dict, objective_scale: float | None = None) -> None:
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


# ----------------------------------------------------------------------------------------------
# Cases and suites
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One benchmark case: a family, a name and the parameters its child process needs."""

    family: str
    name: str
    params: dict
    timeout_s: float = 1800.0
    isolate: bool = False


_SETTINGS = {
    # suite: (best-of-k, time budget per method for the repeats, seconds)
    "smoke": (1, 5.0),
    "standard": (5, 20.0),
    "scale": (5, 20.0),
}


def _smo_svc_cases(suite: str) -> list[Case]:
    sizes = {
        "smoke": {"rbf": [1000], "linear": [1000]},
        "standard": {"rbf": [1000, 2000, 5000, 10000, 20000], "linear": [1000, 2000, 5000, 10000]},
        "scale": {
            "rbf": [1000, 2000, 5000, 10000, 20000, 50000, 100000],
            "linear": [1000, 2000, 5000, 10000, 20000],
        },
    }[suite]
    cases = []
    for kernel, ns in sizes.items():
        for n in ns:
            cases.append(_svm_case("smo_svc", kernel, n, 1e-3))
    if suite != "smoke":  # the objective claim at a tight tolerance
        cases += [_svm_case("smo_svc", "rbf", n, 1e-6) for n in (5000, 10000)]
    return cases


def _svm_case(family: str, kernel: str, n: int, tol: float, **extra: Any) -> Case:
    params = {"kernel": kernel, "n": n, "d": 20, "C": 1.0, "tol": tol, "cache_size": 200.0}
    params.update(extra)
    timeout = 600.0 + 0.05 * n  # generous; large RBF problems take minutes
    # large problems get a process of their own, so nothing earlier blurs their memory peak
    name = f"{kernel} n={n}" + (f" tol={tol:g}" if family == "smo_svc" else "")
    if family == "smo_svc" and n >= 50_000:
        params["isolated_memory"] = True  # peak memory again with each solver alone
    return Case(family, name, params, timeout, isolate=n >= 20_000)


def _smo_cvxpy_cases(suite: str) -> list[Case]:
    # Clarabel on the dense RBF dual grows like n^3 per iteration: n = 2,000 takes ~1 minute
    sizes = [200] if suite == "smoke" else [200, 500, 1000, 2000]
    limit = 10.0 if suite == "smoke" else 120.0
    cases = [_svm_case("smo_cvxpy", "rbf", n, 1e-3, osqp_time_limit=limit) for n in sizes]
    return [dataclasses.replace(c, timeout_s=1800.0) for c in cases]


def _hull_cases(suite: str) -> list[Case]:
    gaps = [1e-3, 1e-6, 1e-8]
    if suite == "smoke":
        specs = [(300, 10, 20_000)]
    else:
        specs = [(1000, 20, 200_000), (10_000, 50, 20_000)]
    return [
        Case(
            "hulls",
            f"m={m} per hull d={d}",
            {"n": m, "d": d, "gaps": gaps, "gilbert_cap": cap},
            isolate=m >= 10_000,
        )
        for m, d, cap in specs
    ]


def _perceptron_cases(suite: str) -> list[Case]:
    sizes = {"smoke": [2000]}.get(suite, [10_000, 30_000, 100_000])
    # margin 0.01: hundreds of epochs (Novikoff's bound (R / margin)^2 is ~3e5 mistakes)
    margin = 0.03 if suite == "smoke" else 0.01
    return [
        Case("perceptron", f"n={n}", {"n": n, "d": 20, "margin": margin, "max_epochs": 5000})
        for n in sizes
    ]


def plan_suite(suite: str, only: Sequence[str] | None = None) -> list[Case]:
    """The cases of a suite, restricted to the families in ``only`` (all when None).

    ``smoke`` (tiny sizes, < 60 s; used by the tests) leaves out ``compile`` and ``verify``
    unless they are named in ``only``; ``standard`` is what the README quotes; ``scale`` adds
    RBF SMO vs SVC at n = 50,000 and 100,000 (minutes each).
    """
    suite = check_choice(suite, "suite", SUITES)
    families = list(FAMILIES) if only is None else [check_choice(f, "only", FAMILIES) for f in only]
    builders: dict[str, Callable[[str], list[Case]]] = {
        "smo_svc": _smo_svc_cases,
        "smo_cvxpy": _smo_cvxpy_cases,
        "hulls": _hull_cases,
        "perceptron": _perceptron_cases,
        "compile": lambda s: [Case("compile", c, {"cache": c}, 900.0) for c in ("empty", "warm")],
        "verify": lambda s: [Case("verify", "quick", {"argv": ["verify", "--suite", "quick"]})],
    }
    cases: list[Case] = []
    for family in families:
        if suite == "smoke" and only is None and family in ("compile", "verify"):
            continue
        cases += builders[family](suite)
    return cases


# ----------------------------------------------------------------------------------------------
# Families (each runs inside a child process)
# ----------------------------------------------------------------------------------------------


def _gamma_scale(X: np.ndarray) -> float:
    """SVC's ``gamma="scale"``, resolved once so both solvers get the same float."""
    return 1.0 / (X.shape[1] * float(X.var()))


def _smo_row(
    case: Case, X: np.ndarray, y: np.ndarray, kernel: Any, m: Measured, method: str, tol: float
) -> dict:
    """Row of an SVMSolution (maxmargin.smo or a CVXPY oracle) with recomputed scores."""
    sol = m.value
    role = "maxmargin" if method.startswith("maxmargin") else "oracle"
    if sol is None:
        return _row(case, method, role, m, params={"tol": tol})
    sv = np.flatnonzero(sol.alpha > 0)
    scores = svm_scores(X, y, sv, sol.alpha[sv] * y[sv], sol.b, kernel)
    msg = _join_messages(m.message, sol.message)
    return _row(
        case,
        method,
        role,
        m,
        params={"tol": tol},
        status=sol.status,
        iterations=sol.iterations,
        objective=scores["dual_objective"],
        b=sol.b,
        accuracy=scores["accuracy"],
        message=msg,
        extra={"reported_objective": sol.dual_objective, "n_sv": int(sv.size)},
    )


def _svc_row(
    case: Case, X: np.ndarray, y: np.ndarray, kernel: Any, m: Measured, tol: float
) -> dict:
    """Row of a fitted scikit-learn SVC, scored like :func:`_smo_row`."""
    svc = m.value
    if svc is None:
        return _row(case, "sklearn.SVC", "peer", m, params={"tol": tol})
    sv = np.asarray(svc.support_)
    coef = np.asarray(svc.dual_coef_[0])
    scores = svm_scores(X, y, sv, coef, float(svc.intercept_[0]), kernel)
    return _row(
        case,
        "sklearn.SVC",
        "peer",
        m,
        params={"tol": tol},
        status="optimal",
        iterations=int(np.sum(svc.n_iter_)),
        objective=scores["dual_objective"],
        b=float(svc.intercept_[0]),
        accuracy=scores["accuracy"],
        extra={"n_sv": int(sv.size)},
    )


def _smo_call(X: np.ndarray, y: np.ndarray, p: dict, gamma: float | None, tol: float) -> Any:
    """``smo`` with the case's C, kernel, cache size and shrinking, at tolerance ``tol``."""
    from maxmargin.algorithms.smo import smo

    kw = {"gamma": gamma} if gamma is not None else {}
    return smo(
        X,
        y,
        C=p["C"],
        kernel=p["kernel"],
        tol=tol,
        cache_size=p["cache_size"],
        shrinking=True,
        **kw,
    )


def _family_smo_svc(case: Case, repeats: int, budget: float) -> list[dict]:
    from sklearn.svm import SVC

    from maxmargin.kernels import make_kernel

    p = case.params
    X, y = make_clouds(p["n"], p["d"], seed=p["n"])
    Xw, yw = make_clouds(200, p["d"], seed=1)
    gamma = _gamma_scale(X) if p["kernel"] == "rbf" else None
    kernel = make_kernel(p["kernel"], gamma=gamma if gamma is not None else "scale")
    svc_kw = {"kernel": p["kernel"], "C": p["C"], "tol": p["tol"], "cache_size": p["cache_size"]}
    if gamma is not None:
        svc_kw["gamma"] = gamma

    def fit_svc(A: np.ndarray, b: np.ndarray) -> Callable[[], Any]:
        return lambda: SVC(shrinking=True, **svc_kw).fit(A, b)

    def fit_smo(A: np.ndarray, b: np.ndarray) -> Callable[[], Any]:
        return lambda: _smo_call(A, b, p, gamma, p["tol"])

    fits = {"sklearn.SVC": fit_svc, "maxmargin.smo": fit_smo}
    if p.get("only") is not None:  # memory probe: one solver alone, one call, no scoring
        fit = fits[p["only"]]
        m = measure(fit(X, y), fit(Xw, yw), 1, 0.0)
        return [_row(case, p["only"], "probe", m, status="error" if m.error else "done")]
    m_svc, m_smo = measure_many(
        [(fit_svc(X, y), fit_svc(Xw, yw)), (fit_smo(X, y), fit_smo(Xw, yw))], repeats, budget
    )
    ref = _svc_row(case, X, y, kernel, m_svc, p["tol"])
    row = _smo_row(case, X, y, kernel, m_smo, "maxmargin.smo", p["tol"])
    if p.get("isolated_memory"):
        del m_svc, m_smo
        for r in (ref, row):
            r["extra"].update(_isolated_memory(case, r["method"]))
    n, d = X.shape
    row["extra"]["memory_bound_mb"] = (
        p["cache_size"] + (MEM_X_COPIES * n * d * 8 + MEM_N_ARRAYS * n * 8) / _MB
    )
    row["extra"]["gram_matrix_mb"] = n * n * 8 / _MB
    for r in (ref, row):
        r["params"].update(kernel=p["kernel"], C=p["C"], gamma=gamma, cache_size=p["cache_size"])
    _compare([ref, row], ref)
    return [ref, row]


def _isolated_memory(case: Case, method: str) -> dict[str, Any]:
    """Peak memory of one solver of ``case`` measured alone, in a fresh process of its own.

    In the shared process the heap left by the first solver can change the second one's peak
    (for example glibc raises its mmap threshold after large frees, so later temporaries land
    on the heap); a solver alone gives the clean number. Timings stay in the shared process.
    """
    probe = dataclasses.replace(
        case, params={**case.params, "only": method, "isolated_memory": False}
    )
    row = _run_group([probe], 1, 0.0, dict(os.environ))[0]
    return {
        "isolated_peak_rss_mb": row["peak_rss_mb"],
        "isolated_rss_base_mb": row["rss_base_mb"],
        "isolated_peak_delta_mb": row["peak_delta_mb"],
        "isolated_time_s": row["time_s"],
        "isolated_status": row["status"],
    }


def _family_smo_cvxpy(case: Case, repeats: int, budget: float) -> list[dict]:
    from maxmargin.formulations import svm_dual
    from maxmargin.kernels import make_kernel

    p = case.params
    X, y = make_clouds(p["n"], p["d"], seed=p["n"])
    Xw, yw = make_clouds(40, p["d"], seed=1)
    gamma = _gamma_scale(X)
    kernel = make_kernel("rbf", gamma=gamma)

    def oracle(A: np.ndarray, b: np.ndarray, solver: str) -> Callable[[], Any]:
        opts = {"time_limit": p["osqp_time_limit"]} if solver == "OSQP" else {}
        return lambda: svm_dual(A, b, C=p["C"], kernel="rbf", gamma=gamma).solve(solver, **opts)

    solvers, tols = ("CLARABEL", "OSQP"), (1e-3, 1e-6)
    calls = [(oracle(X, y, solver), oracle(Xw, yw, solver)) for solver in solvers]
    calls += [
        (
            lambda tol=tol: _smo_call(X, y, p, gamma, tol),
            lambda tol=tol: _smo_call(Xw, yw, p, gamma, tol),
        )
        for tol in tols
    ]
    measured = measure_many(calls, repeats, budget)
    rows = []
    for solver, m in zip(solvers, measured, strict=False):
        rows.append(_smo_row(case, X, y, kernel, m, f"cvxpy.svm_dual/{solver}", 0.0))
        rows[-1]["params"] = {"solver": solver}
        if solver == "OSQP":
            rows[-1]["params"]["time_limit"] = p["osqp_time_limit"]
        if m.value is not None:
            rows[-1]["extra"]["solver_runtime_s"] = m.value.runtime
    for tol, m in zip(tols, measured[len(solvers) :], strict=True):
        rows.append(_smo_row(case, X, y, kernel, m, "maxmargin.smo", tol))
    for r in rows:
        r["params"].update(kernel="rbf", C=p["C"], gamma=gamma)
    _compare(rows, rows[0])
    return rows


def _family_hulls(case: Case, repeats: int, budget: float) -> list[dict]:
    from maxmargin.algorithms.gilbert import gilbert_hulls
    from maxmargin.algorithms.mdm import mdm_hulls
    from maxmargin.formulations import hull_distance

    p = case.params
    P, Q = make_hulls(p["n"], p["d"], seed=p["n"])
    Pw, Qw = make_hulls(20, p["d"], seed=1)

    def hull_row(method: str, role: str, m: Measured, params: dict) -> dict:
        sol = m.value
        row = _row(case, method, role, m, params=params)
        if sol is None:
            return row
        measured = hull_gap(P, Q, sol.weights_p, sol.weights_q)
        row.update(
            status=sol.status,
            iterations=sol.iterations,
            objective=measured["distance"],
            message=_join_messages(m.message, sol.message),
            extra={"gap_reached": measured["gap"], "reported_gap": _finite(sol.gap)},
        )
        return row

    def oracle(A: np.ndarray, B: np.ndarray) -> Callable[[], Any]:
        return lambda: hull_distance(A, B).solve(solver="CLARABEL")

    methods = [("cvxpy.hull_distance/CLARABEL", "oracle", {"solver": "CLARABEL"})]
    calls: list[Call] = [(oracle(P, Q), oracle(Pw, Qw))]
    for gap in p["gaps"]:
        for name, fn, cap in (
            ("gilbert_hulls", gilbert_hulls, p["gilbert_cap"]),
            ("mdm_hulls", mdm_hulls, 1_000_000),
        ):
            methods.append((f"maxmargin.{name}", "maxmargin", {"tol": gap, "max_iter": cap}))
            calls.append(
                (
                    lambda fn=fn, gap=gap, cap=cap: fn(P, Q, tol=gap, max_iter=cap),
                    lambda fn=fn, gap=gap: fn(Pw, Qw, tol=gap, max_iter=1000),
                )
            )
    measured = measure_many(calls, repeats, budget)
    rows = [hull_row(*meth[:2], m, meth[2]) for meth, m in zip(methods, measured, strict=True)]
    ref = rows[0]
    _compare(rows, ref, objective_scale=ref["objective"] if ref["objective"] else None)
    return rows


def _family_perceptron(case: Case, repeats: int, budget: float) -> list[dict]:
    from sklearn.linear_model import Perceptron

    from maxmargin.algorithms.perceptron import perceptron

    p = case.params
    X, y = make_separable(p["n"], p["d"], seed=p["n"], margin=p["margin"])
    Xw, yw = make_separable(100, p["d"], seed=1, margin=p["margin"])

    def ours(A: np.ndarray, b: np.ndarray) -> Callable[[], Any]:
        return lambda: perceptron(A, b, eta=1.0, max_epochs=p["max_epochs"], bias=True)

    # one untimed run tells the epochs E that sklearn (no stop-on-a-clean-pass rule) is given
    first = measure(ours(X, y), ours(Xw, yw), 1, 0.0)
    epochs = first.value.epochs if first.value is not None else p["max_epochs"]

    def peer(A: np.ndarray, b: np.ndarray) -> Callable[[], Any]:
        return lambda: Perceptron(
            shuffle=False, tol=None, max_iter=epochs, eta0=1.0, alpha=0.0, fit_intercept=True
        ).fit(A, b)

    m_peer, m_ours = measure_many([(peer(X, y), peer(Xw, yw)), (ours(X, y), None)], repeats, budget)
    m_ours.warmup_s = first.warmup_s
    m_ours.message = _join_messages(first.message, m_ours.message)
    res = m_ours.value
    params = {"epochs": epochs, "eta": 1.0, "margin": p["margin"]}
    row = _row(case, "maxmargin.perceptron", "maxmargin", m_ours, params=params)
    ref = _row(case, "sklearn.Perceptron", "peer", m_peer, params=dict(params))
    if res is not None:
        acc = float(np.mean(res.predict(X) == y))
        row.update(
            status=res.status,
            iterations=res.epochs,
            b=res.b,
            accuracy=acc,
            objective=int(round((1.0 - acc) * len(y))),
            extra={"mistakes": res.mistakes, "converged": res.converged},
        )
    if m_peer.value is not None:
        clf = m_peer.value
        acc = float(np.mean(clf.predict(X) == y))
        ref.update(
            status="done",
            iterations=int(clf.n_iter_),
            b=float(clf.intercept_[0]),
            accuracy=acc,
            objective=int(round((1.0 - acc) * len(y))),
        )
        if res is not None:
            row["extra"]["w_diff"] = float(np.linalg.norm(res.w - clf.coef_[0]))
    _compare([ref, row], ref)
    row["rel_objective_diff"] = None  # training errors are compared as counts, not relatively
    return [ref, row]


def _compile_probe() -> list[dict]:
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
        ("perceptron", "maxmargin.algorithms.perceptron", lambda mod: mod.perceptron(Xs, ys)),
    ]
    out = []
    for name, module, call in probes:
        entry: dict[str, Any] = {"method": f"maxmargin.{name}"}
        try:
            t0 = time.perf_counter()
            mod = importlib.import_module(module)
            entry["import_s"] = time.perf_counter() - t0
            for key in ("first_call_s", "second_call_s"):
                t0 = time.perf_counter()
                _call_recording(lambda mod=mod, call=call: call(mod), [])
                entry[key] = time.perf_counter() - t0
            entry["compile_s"] = entry["import_s"] + entry["first_call_s"] - entry["second_call_s"]
        except Exception as exc:
            entry["error"] = traceback.format_exception_only(type(exc), exc)[-1].strip()
        out.append(entry)
    return out


def _family_compile(case: Case, repeats: int, budget: float) -> list[dict]:
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="mm-numba-") as cache_dir:
        if case.params["cache"] == "empty":
            env["NUMBA_CACHE_DIR"] = cache_dir
        code = "import json, maxmargin.bench as b; print(json.dumps(b._compile_probe()))"
        proc = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600
        )
    if proc.returncode != 0:
        raise RuntimeError(f"compile probe exited {proc.returncode}: {proc.stderr[-500:]}")
    rows = []
    for entry in json.loads(proc.stdout.strip().splitlines()[-1]):
        err = entry.pop("error", None)
        rows.append(
            _row(
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


def _family_verify(case: Case, repeats: int, budget: float) -> list[dict]:
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
        _row(
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


_FAMILY_RUNNERS: dict[str, Callable[[Case, int, float], list[dict]]] = {
    "smo_svc": _family_smo_svc,
    "smo_cvxpy": _family_smo_cvxpy,
    "hulls": _family_hulls,
    "perceptron": _family_perceptron,
    "compile": _family_compile,
    "verify": _family_verify,
}


def _finite(value: Any) -> float | None:
    """A finite float, or None (JSON has no NaN)."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def _jsonable(obj: Any) -> Any:
    """Plain JSON types: numpy scalars converted, non-finite floats as None."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, bool | np.bool_):
        return bool(obj)
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        return _finite(obj)
    return obj


def _child(spec_path: str, out_path: str) -> int:
    """Entry point of a child process: run its cases in order, saving the rows after each."""
    with open(spec_path) as fh:
        spec = json.load(fh)
    rows: list[dict] = []
    for done, item in enumerate(spec["cases"], start=1):
        case = Case(**item)
        rows += _FAMILY_RUNNERS[case.family](case, spec["repeats"], spec["budget"])
        _atomic_write(Path(out_path), json.dumps({"done": done, "rows": _jsonable(rows)}))
    return 0


def _groups(cases: Sequence[Case]) -> list[list[Case]]:
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
    if not path.exists():
        return 0, []
    data = json.loads(path.read_text())
    return data["done"], data["rows"]


def _run_group(
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
                    "cases": [_jsonable(c.__dict__) for c in cases],
                    "repeats": repeats,
                    "budget": budget,
                }
            )
        )
        code = "import sys, maxmargin.bench as b; sys.exit(b._child(sys.argv[1], sys.argv[2]))"
        logged, started, timed_out = 0, time.perf_counter(), False
        with open(err, "w") as err_fh:
            proc = subprocess.Popen(
                [sys.executable, "-c", code, str(spec), str(out)],
                env=env,
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
        rows.append(_row(case, case.family, "maxmargin", status=status, message=msg))
        if log is not None:
            log(_progress_line(case, rows[-1:], 0.0))
    return rows


# ----------------------------------------------------------------------------------------------
# Running a suite
# ----------------------------------------------------------------------------------------------


def _versions() -> dict[str, str | None]:
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


def _machine() -> dict[str, Any]:
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


def _git_commit() -> str | None:
    root = Path(__file__).resolve().parent.parent
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() or None


def run_suite(
    suite: str = "standard",
    only: Sequence[str] | None = None,
    *,
    repeats: int | None = None,
    threads: int | None = None,
    log: Callable[[str], None] | None = print,
) -> dict:
    """Run a suite case by case (each in its own child process) and return the results dict.

    Parameters
    ----------
    suite : {"smoke", "standard", "scale"}
    only : sequence of family names, optional
    repeats : int, optional
        Best-of-k (default 1 for smoke, 5 otherwise; fewer when a call is slow).
    threads : int, optional
        Sets ``NUMBA_NUM_THREADS``/``OMP_NUM_THREADS``/``OPENBLAS_NUM_THREADS`` in the children.
    """
    cases = plan_suite(suite, only)
    k, budget = _SETTINGS[suite]
    k = k if repeats is None else check_positive_int(repeats, "repeats")
    env = dict(os.environ)
    if threads is not None:
        threads = check_positive_int(threads, "threads")
        for key in (
            "NUMBA_NUM_THREADS",
            "OMP_NUM_THREADS",
            "OPENBLAS_NUM_THREADS",
            "MKL_NUM_THREADS",
        ):
            env[key] = str(threads)
    started = _dt.datetime.now(_dt.UTC)
    rows: list[dict] = []
    t_all = time.perf_counter()
    for group in _groups(cases):
        rows += _run_group(group, k, budget, env, log)
    return {
        "schema": SCHEMA,
        "suite": suite,
        "only": list(only) if only else None,
        "date": started.isoformat(timespec="seconds"),
        "wall_s": time.perf_counter() - t_all,
        "repeats": k,
        "versions": _versions(),
        "machine": _machine() | ({"threads_option": threads} if threads else {}),
        "git_commit": _git_commit(),
        "rows": _jsonable(rows),
    }


def _progress_line(case: Case, rows: list[dict], seconds: float) -> str:
    parts = []
    for r in rows:
        t = f"{r['time_s']:.3g}s" if r.get("time_s") is not None else "-"
        parts.append(f"{r['method']}={r['status']}/{t}")
    return f"[{case.family}] {case.name}: {', '.join(parts)} ({seconds:.1f} s)"


def _merge(previous: dict, new: dict) -> dict:
    """``new`` with the rows of families it did not run taken from ``previous``.

    ``merged_from`` lists, for every earlier run that still contributes rows, its suite,
    ``--only``, date and the families it contributes.
    """
    ran = {r["benchmark"] for r in new["rows"]}
    kept = [r for r in previous.get("rows", []) if r["benchmark"] not in ran]
    kept_families = {r["benchmark"] for r in kept}
    earlier = previous.get("merged_from", [])
    claimed = {f for entry in earlier for f in entry["families"]}
    entries = [
        dict(entry, families=[f for f in entry["families"] if f in kept_families])
        for entry in earlier
    ]
    entries.append(
        {
            "suite": previous.get("suite"),
            "only": previous.get("only"),
            "date": previous.get("date"),
            "families": sorted(kept_families - claimed),
        }
    )
    merged = dict(new)
    merged["rows"] = kept + new["rows"]
    merged["merged_from"] = [entry for entry in entries if entry["families"]]
    return merged


# ----------------------------------------------------------------------------------------------
# Targets and report
# ----------------------------------------------------------------------------------------------


def _find(rows: list[dict], **match: Any) -> list[dict]:
    return [r for r in rows if all(r.get(k) == v for k, v in match.items())]


def _peak_delta(row: dict) -> float | None:
    """The row's peak memory increase, measured alone in a fresh process where that was done."""
    return row["extra"].get("isolated_peak_delta_mb", row.get("peak_delta_mb"))


def _smo_pair(rows: list[dict], kernel: str, n: int, tol: float = 1e-3) -> dict | None:
    found = _find(
        rows, benchmark="smo_svc", case=f"{kernel} n={n} tol={tol:g}", method="maxmargin.smo"
    )
    return found[0] if found else None


def _fmt(x: Any, spec: str = ".3g") -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return format(x, spec)
    return str(x)


def evaluate_targets(rows: list[dict]) -> list[dict]:
    """The stated performance targets, each ``{"target", "met" (bool or None), "detail"}``.

    ``met`` is None when the rows needed were not measured (e.g. scale not run).
    """
    out = []
    # 1. SMO vs LIBSVM speed at RBF n = 5,000 / 10,000, same objective to 1e-6 relative.
    for n, limit in ((5000, 1.0), (10000, 0.5)):
        r = _smo_pair(rows, "rbf", n)
        tight = _smo_pair(rows, "rbf", n, 1e-6)
        target = (
            f"SMO time <= {limit}x LIBSVM (SVC) at RBF n={n:,}, same dual objective to "
            "1e-6 relative at equal tol"
        )
        if r is None or r.get("time_ratio") is None:
            out.append({"target": target, "met": None, "detail": "not measured"})
            continue
        diff = r.get("rel_objective_diff")
        tdiff = tight.get("rel_objective_diff") if tight else None
        obj_ok = diff is not None and diff <= 1e-6
        detail = (
            f"ratio {r['time_ratio']:.3f} ({_fmt(r['time_s'])} s vs "
            f"{_fmt(r['time_s'] / r['time_ratio'])} s); rel. dual objective difference "
            f"{_fmt(diff, '.1e')} at tol=1e-3"
        )
        if tdiff is not None:
            detail += f", {_fmt(tdiff, '.1e')} at tol=1e-6 (ratio {_fmt(tight['time_ratio'])})"
        out.append(
            {"target": target, "met": bool(r["time_ratio"] <= limit and obj_ok), "detail": detail}
        )
    # 2. SMO RBF n = 100,000 peak memory bounded by cache_size + O(n).
    r = _smo_pair(rows, "rbf", 100_000)
    target = "SMO RBF n=100,000 (d=20) peak memory <= cache_size + O(n) bound"
    if r is None or _peak_delta(r) is None:
        out.append({"target": target, "met": None, "detail": "not measured (run --suite scale)"})
    else:
        bound = r["extra"]["memory_bound_mb"]
        alone = "isolated_peak_delta_mb" in r["extra"]
        detail = (
            f"peak increase {_peak_delta(r):.0f} MB"
            + (
                f" with SMO alone in a fresh process ({r['peak_delta_mb']:.0f} MB in the "
                "process shared with SVC)"
                if alone
                else ""
            )
            + f" vs bound {bound:.0f} MB = {_fmt(r['params'].get('cache_size'), '.0f')} MB cache + "
            f"{MEM_X_COPIES} n d 8 B + {MEM_N_ARRAYS} n 8 B; the Gram matrix would be "
            f"{r['extra']['gram_matrix_mb']:.0f} MB"
        )
        out.append({"target": target, "met": bool(_peak_delta(r) <= bound), "detail": detail})
    # 3. Best nearest-point method reaches 1e-8 on two hulls m = 10,000, d = 50, <= Clarabel time.
    out.append(_hull_target(rows))
    # 4. quick verify <= 60 s.
    v = _find(rows, benchmark="verify", case="quick")
    target = "`maxmargin verify --suite quick` <= 60 s"
    if not v or v[0].get("time_s") is None:
        out.append({"target": target, "met": None, "detail": "not measured"})
    else:
        code = v[0]["extra"].get("exit_code")
        out.append(
            {
                "target": target,
                "met": bool(v[0]["time_s"] <= 60.0),
                "detail": f"{v[0]['time_s']:.1f} s, exit code {code}",
            }
        )
    return out


def _hull_target(rows: list[dict]) -> dict:
    target = (
        "best nearest-point method reaches a 1e-8 relative gap on two hulls of 10,000 "
        "points each (d=50) in no more time than Clarabel"
    )
    case = "m=10000 per hull d=50"
    ref = _find(rows, benchmark="hulls", case=case, role="oracle")
    cands = [
        r
        for r in _find(rows, benchmark="hulls", case=case, role="maxmargin")
        if r["params"].get("tol") == 1e-8
        and r.get("time_s") is not None
        and (r["extra"].get("gap_reached") or math.inf) <= 1e-8
    ]
    if not ref or ref[0].get("time_s") is None:
        return {"target": target, "met": None, "detail": "not measured"}
    ref_gap = ref[0]["extra"].get("gap_reached")
    if not cands:
        return {
            "target": target,
            "met": False,
            "detail": f"no method reached 1e-8 (Clarabel {ref[0]['time_s']:.2f} s)",
        }
    best = min(cands, key=lambda r: r["time_s"])
    return {
        "target": target,
        "met": bool(best["time_s"] <= ref[0]["time_s"]),
        "detail": (
            f"{best['method']} {best['time_s']:.3f} s (gap {best['extra']['gap_reached']:.1e}, "
            f"{best['iterations']} iterations) vs Clarabel {ref[0]['time_s']:.3f} s (its gap "
            f"{_fmt(ref_gap, '.1e')}); ratio {best['time_ratio']:.3f}"
        ),
    }


def _table(title: str, header: Sequence[str], body: list[list[Any]], note: str = "") -> str:
    lines = [f"### {title}", ""]
    if note:
        lines += [note, ""]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join("---" for _ in header) + "|")
    lines += ["| " + " | ".join(_fmt(c) for c in row) + " |" for row in body]
    if not body:
        lines.append("| " + " | ".join("-" for _ in header) + " |")
    return "\n".join(lines) + "\n"


def _pairs(rows: list[dict], family: str) -> list[tuple[dict, dict]]:
    """(peer, maxmargin) rows of each case of a two-method family, in run order."""
    out = []
    for case in dict.fromkeys(r["case"] for r in rows if r["benchmark"] == family):
        peer = _find(rows, benchmark=family, case=case, role="peer")
        ours = _find(rows, benchmark=family, case=case, role="maxmargin")
        if peer and ours:
            out.append((peer[0], ours[0]))
    return out


def _md_smo_svc(rows: list[dict]) -> str:
    body = []
    for peer, ours in _pairs(rows, "smo_svc"):
        body.append(
            [
                ours["params"].get("kernel"),
                ours["n"],
                ours["params"].get("tol"),
                peer["time_s"],
                ours["time_s"],
                ours["time_ratio"],
                _fmt(ours["rel_objective_diff"], ".1e"),
                _fmt(ours["b_diff"], ".1e"),
                _fmt(ours["accuracy_diff"], "+.4f"),
                peer["iterations"],
                ours["iterations"],
                _peak_delta(peer),
                _peak_delta(ours),
                ours["status"],
            ]
        )
    return _table(
        "SMO vs scikit-learn SVC (LIBSVM)",
        [
            "kernel",
            "n",
            "tol",
            "SVC s",
            "smo s",
            "ratio",
            "rel dD",
            "abs db",
            "d acc",
            "SVC iter",
            "smo iter",
            "SVC peak +MB",
            "smo peak +MB",
            "smo status",
        ],
        body,
        "Two Gaussian clouds (Bayes error 10%), d = 20, C = 1, cache 200 MB, shrinking on, the "
        "same gamma float (`scale`). ratio = smo / SVC time (best of k after a warm-up); rel dD "
        "= |D_smo - D_svc| / max(1, |D_svc|) with both objectives recomputed from the support "
        "vectors; d acc = training accuracy smo - SVC; peak +MB = peak RSS increase in the call "
        "(for n >= 50,000 measured again with each solver alone in a fresh process, shown here).",
    )


def _md_multi(rows: list[dict], family: str, title: str, note: str, tol_col: str) -> str:
    body = []
    for r in _find(rows, benchmark=family):
        gap = r["extra"].get("gap_reached") if family == "hulls" else None
        body.append(
            [
                r["case"],
                r["method"],
                r["params"].get(tol_col),
                r["status"],
                r["iterations"],
                r["time_s"],
                r["time_ratio"],
                _fmt(r["objective"], ".10g") if family == "hulls" else _fmt(r["objective"], ".8g"),
                _fmt(r["rel_objective_diff"], ".1e"),
                _fmt(gap, ".1e") if family == "hulls" else _fmt(r["b_diff"], ".1e"),
                r["peak_delta_mb"],
            ]
        )
    last = "gap reached" if family == "hulls" else "abs db"
    obj = "distance" if family == "hulls" else "D"
    return _table(
        title,
        [
            "case",
            "method",
            tol_col,
            "status",
            "iter",
            "time s",
            "ratio",
            obj,
            f"rel d{obj}",
            last,
            "peak +MB",
        ],
        body,
        note,
    )


def _md_perceptron(rows: list[dict]) -> str:
    margins = ", ".join(
        sorted({f"{r['params']['margin']:g}" for _, r in _pairs(rows, "perceptron")})
    )
    body = []
    for peer, ours in _pairs(rows, "perceptron"):
        body.append(
            [
                ours["n"],
                ours["params"].get("epochs"),
                peer["time_s"],
                ours["time_s"],
                ours["time_ratio"],
                peer["objective"],
                ours["objective"],
                _fmt(ours["extra"].get("w_diff"), ".1e"),
                ours["extra"].get("mistakes"),
                ours["status"],
            ]
        )
    return _table(
        "Perceptron vs scikit-learn Perceptron",
        [
            "n",
            "epochs E",
            "sklearn s",
            "maxmargin s",
            "ratio",
            "sklearn errors",
            "maxmargin errors",
            "norm dw",
            "mistakes",
            "status",
        ],
        body,
        f"Separable data (margin {margins}), d = 20, cyclic order, eta = 1, w = 0, b = 0. sklearn: "
        "`Perceptron(shuffle=False, tol=None, max_iter=E, eta0=1, alpha=0)` with E = the epochs "
        "maxmargin needed (sklearn has no stop-on-a-clean-pass rule); errors = training errors "
        "after training; norm dw = ||w_maxmargin - coef_||.",
    )


def _md_compile(rows: list[dict]) -> str:
    body = [
        [
            r["case"],
            r["method"],
            r["extra"].get("import_s"),
            r["extra"].get("first_call_s"),
            r["extra"].get("second_call_s"),
            r["time_s"],
            r["status"],
        ]
        for r in _find(rows, benchmark="compile")
    ]
    return _table(
        "Numba compile time",
        [
            "numba cache",
            "algorithm",
            "import s",
            "first call s",
            "second call s",
            "compile s",
            "status",
        ],
        body,
        "A fresh process per cache setting; compile = import + first call - second call on a "
        "tiny problem. `empty`: NUMBA_CACHE_DIR is a new empty folder (full compilation); "
        "`warm`: the cache that `cache=True` leaves behind.",
    )


def _md_verify(rows: list[dict]) -> str:
    body = [
        [r["method"], r["status"], r["extra"].get("exit_code"), r["time_s"], r["message"]]
        for r in _find(rows, benchmark="verify")
    ]
    return _table(
        "`maxmargin verify` end to end",
        ["command", "status", "exit code", "wall s", "output tail (on failure)"],
        body,
        "Run as a subprocess `python -m maxmargin.cli ...`, imports included.",
    )


def _headlines(rows: list[dict]) -> list[str]:
    lines = []
    for kernel in ("rbf", "linear"):
        parts = []
        for n in (1000, 5000, 10000, 100_000):
            r = _smo_pair(rows, kernel, n)
            if r is not None and r.get("time_ratio") is not None:
                parts.append(f"n={n:,}: {r['time_ratio']:.2f}x")
        if parts:
            lines.append(f"- SMO / SVC time, {kernel}: " + ", ".join(parts))
    perc = [(o["n"], o["time_ratio"]) for _, o in _pairs(rows, "perceptron") if o["time_ratio"]]
    if perc:
        lines.append(
            "- perceptron / sklearn Perceptron time: "
            + ", ".join(f"n={n:,}: {t:.2f}x" for n, t in perc)
        )
    for r in _find(rows, benchmark="hulls", role="maxmargin"):
        if r["params"].get("tol") == 1e-8 and r.get("time_ratio") is not None:
            lines.append(
                f"- {r['case']}: {r['method']} / Clarabel at gap 1e-8: "
                f"{r['time_ratio']:.2f}x ({r['status']}, gap "
                f"{_fmt(r['extra'].get('gap_reached'), '.1e')})"
            )
    v = _find(rows, benchmark="verify")
    if v and v[0]["time_s"] is not None:
        lines.append(
            f"- `maxmargin verify --suite quick`: {v[0]['time_s']:.1f} s "
            f"(exit code {v[0]['extra'].get('exit_code')})"
        )
    return lines


def _command(results: dict) -> str:
    """The ``maxmargin bench`` command line(s) that produced ``results``."""
    runs = [
        f"maxmargin bench --suite {prev['suite']}"
        + (f" --only {','.join(prev['only'])}" if prev.get("only") else "")
        for prev in results.get("merged_from", [])
    ]
    last = f"maxmargin bench --suite {results['suite']}"
    if results.get("only"):
        last += f" --only {','.join(results['only'])}" + (" --merge" if runs else "")
    return "`, then `".join([*runs, last])


def _threads_text(machine: dict) -> str:
    t = machine.get("threads", {})
    text = f"Numba {t.get('numba_threads')}, BLAS {', '.join(t.get('blas', [])) or '?'}"
    if machine.get("threads_option"):
        text += f"; --threads {machine['threads_option']} set in the benchmark processes"
    return text


def render_markdown(results: dict, figures: Sequence[str] = ()) -> str:
    """The Markdown report, built from the results dict alone."""
    rows = results["rows"]
    v, m = results["versions"], results["machine"]
    out = [
        "# maxmargin benchmarks",
        "",
        f"Regenerate with `{_command(results)}` (see `maxmargin bench --help`).",
        "",
        f"- date (UTC): {results['date']}; suite `{results['suite']}`; best of "
        f"{results['repeats']} timed calls after a warm-up; git {results.get('git_commit')}",
        f"- machine: {m['cpu']}, {m['cpu_count']} CPUs, {m['memory_gb']} GB; {m['platform']}",
        f"- threads: {_threads_text(m)} (LIBSVM and scikit-learn's Perceptron are single-threaded)",
        "- versions: " + ", ".join(f"{k} {val}" for k, val in v.items()),
    ]
    for prev in results.get("merged_from", []):
        out.append(
            f"- rows of {', '.join(prev['families']) or 'no family'} from the "
            f"`{prev['suite']}` run of {prev['date']}"
        )
    out += ["", "## Headline ratios", ""] + (_headlines(rows) or ["- nothing measured"])
    out += ["", "## Targets", ""]
    for t in evaluate_targets(rows):
        verdict = {True: "MET", False: "NOT MET", None: "NOT MEASURED"}[t["met"]]
        out.append(f"- **{verdict}** - {t['target']}: {t['detail']}")
    out += ["", "## Tables", ""]
    families = {r["benchmark"] for r in rows}
    sections = [
        ("smo_svc", lambda: _md_smo_svc(rows)),
        (
            "smo_cvxpy",
            lambda: _md_multi(
                rows,
                "smo_cvxpy",
                "SMO vs the CVXPY dual oracle (Clarabel, OSQP)",
                "Same RBF dual (d = 20, C = 1, gamma `scale`). Times include building the "
                "CVXPY model (what a user pays). ratio and rel dD are relative to Clarabel; "
                "OSQP's status is what it reported (capped by OSQP's `time_limit`).",
                "tol",
            ),
        ),
        (
            "hulls",
            lambda: _md_multi(
                rows,
                "hulls",
                "Nearest points of two hulls: Gilbert, MDM, Clarabel",
                "Two Gaussian clouds N(+-5 e_1, I), m points each. tol = target relative duality "
                "gap; Gilbert is capped at max_iter (status max_iter when it stops there). gap "
                "reached and distance are recomputed from the returned weights; ratio and rel "
                "ddistance are relative to Clarabel.",
                "tol",
            ),
        ),
        ("perceptron", lambda: _md_perceptron(rows)),
        ("compile", lambda: _md_compile(rows)),
        ("verify", lambda: _md_verify(rows)),
    ]
    out += [make() for family, make in sections if family in families]
    problems = [r for r in rows if r["status"] in ("error", "timeout", "crashed")]
    if problems:
        out += ["## Errors", ""]
        out += [
            f"- {r['benchmark']} / {r['case']} / {r['method']}: {r['status']}: {r['message']}"
            for r in problems
        ]
        out.append("")
    if figures:
        out += ["## Figures", ""] + [f"![{Path(f).stem}](figures/{Path(f).name})" for f in figures]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _series(rows: list[dict], family: str) -> dict[tuple[str, str], list[tuple[int, float]]]:
    """(method, variant) -> [(n, time_s)] over the cases of a family.

    The variant (kernel and tolerance for SMO vs SVC, the tolerance elsewhere) pairs a peer's
    line with maxmargin's in the figure.
    """
    series: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for r in _find(rows, benchmark=family):
        if r.get("time_s") is None or r.get("n") is None:
            continue
        p = r["params"]
        variant = f"tol={p['tol']:g}" if p.get("tol") else ""
        if family == "smo_svc":
            variant = f"{p.get('kernel')} {variant}"
        key = (r["method"].replace("maxmargin.", ""), variant)
        series.setdefault(key, []).append((r["n"], r["time_s"]))
    return series


def _time_vs_n_figure(rows: list[dict], plt: Any) -> Any:
    """Log-log time against n per method, one panel per family (None if nothing to draw).

    The hull family has its own figure (time against the target gap): its two sizes differ in
    dimension too, and Gilbert's time at a tight gap is set by its iteration cap.
    """
    panels = [
        (f, t)
        for f, t in (
            ("smo_svc", "SMO vs SVC"),
            ("smo_cvxpy", "SMO vs CVXPY dual"),
            ("perceptron", "perceptron vs sklearn"),
        )
        if _series(rows, f)
    ]
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.6), squeeze=False)
    for ax, (family, title) in zip(axes[0], panels, strict=True):
        series = _series(rows, family)
        variants = sorted({v for _, v in series})
        for (method, variant), pts in sorted(series.items()):
            pts = sorted(pts)
            peer = method.startswith(("sklearn", "cvxpy"))
            ax.loglog(
                [p[0] for p in pts],
                [p[1] for p in pts],
                "--" if peer else "-",
                marker="s" if peer else "o",
                color=f"C{variants.index(variant)}" if variant else None,
                label=f"{method} {variant}".strip(),
            )
        ns = sorted({p[0] for pts in series.values() for p in pts})
        ax.set_xticks(ns, [f"{n:,}" for n in ns], rotation=30)
        ax.xaxis.set_minor_locator(plt.NullLocator())
        _decorate(ax, title + " (dashed: the peer)", "n")
    fig.tight_layout()
    return fig


def _decorate(ax: Any, title: str, xlabel: str) -> None:
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("time (s), best of k")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)


def _hulls_figure(rows: list[dict], plt: Any) -> Any:
    """Time against the target gap per nearest-point method, Clarabel as a horizontal line."""
    cases = list(dict.fromkeys(r["case"] for r in _find(rows, benchmark="hulls")))
    if not cases:
        return None
    fig, axes = plt.subplots(1, len(cases), figsize=(5.2 * len(cases), 4.6), squeeze=False)
    for ax, case in zip(axes[0], cases, strict=True):
        for r in _find(rows, benchmark="hulls", case=case, role="oracle"):
            if r["time_s"] is not None:
                ax.axhline(r["time_s"], color="k", ls="--", label=r["method"])
        for method in dict.fromkeys(
            r["method"] for r in _find(rows, benchmark="hulls", case=case, role="maxmargin")
        ):
            pts = [
                (r["params"]["tol"], r["time_s"], r["status"] == "optimal")
                for r in _find(rows, benchmark="hulls", case=case, method=method)
                if r["time_s"] is not None
            ]
            (line,) = ax.loglog([p[0] for p in pts], [p[1] for p in pts], "-", label=method)
            for tol, t, ok in pts:
                ax.plot(tol, t, "o", color=line.get_color(), mfc=line.get_color() if ok else "w")
        ax.invert_xaxis()
        _decorate(ax, f"{case} (hollow: target gap not reached)", "target relative gap")
    fig.tight_layout()
    return fig


def build_figures(rows: list[dict]) -> dict[str, Any]:
    """``{file name: matplotlib figure}`` of the figures the rows allow (nothing saved yet)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures = {
        "bench_time_vs_n.png": _time_vs_n_figure(rows, plt),
        "bench_hulls.png": _hulls_figure(rows, plt),
    }
    return {name: fig for name, fig in figures.items() if fig is not None}


def _atomic_savefig(fig: Any, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".png")
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=110)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; outputs are meant to be shared
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temp file in the same folder and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; outputs are meant to be shared
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def write_outputs(results: dict, out_dir: str | os.PathLike) -> dict[str, Any]:
    """Write ``benchmarks.json``, ``benchmarks.md`` and ``figures/bench_*.png`` into ``out_dir``.

    Everything is rendered before anything is written, and each file is replaced atomically,
    so a failure leaves the previous outputs intact.
    """
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    results = dict(results)
    results["targets"] = evaluate_targets(results["rows"])
    figures = build_figures(results["rows"])
    try:
        json_text = json.dumps(_jsonable(results), indent=1, allow_nan=False) + "\n"
        md_text = render_markdown(results, list(figures))
        fig_paths = []
        for name, fig in figures.items():
            fig_paths.append(str(out / "figures" / name))
            _atomic_savefig(fig, out / "figures" / name)
    finally:
        for fig in figures.values():
            plt.close(fig)
    json_path, md_path = out / "benchmarks.json", out / "benchmarks.md"
    _atomic_write(json_path, json_text)
    _atomic_write(md_path, md_text)
    return {"json": str(json_path), "markdown": str(md_path), "figures": fig_paths}


# ----------------------------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``bench`` options to ``parser`` (a sub-parser of the ``maxmargin`` CLI)."""
    parser.add_argument(
        "--suite",
        default="standard",
        choices=SUITES,
        help="smoke: tiny, < 60 s; standard: the README numbers; scale: adds "
        "RBF n = 50,000 and 100,000 (default: standard)",
    )
    parser.add_argument(
        "--only",
        default=None,
        metavar="NAME[,NAME]",
        help=f"run only these benchmark families: {', '.join(FAMILIES)}",
    )
    parser.add_argument(
        "--out",
        default="reports",
        metavar="DIR",
        help="output folder for benchmarks.json/.md and figures (default: reports)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=None,
        metavar="K",
        help="best of K timed calls (default 1 for smoke, 5 otherwise)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        metavar="N",
        help="thread count for Numba and BLAS in the benchmark processes",
    )
    parser.add_argument(
        "--merge",
        action="store_true",
        help="keep the rows of families not run from an existing benchmarks.json",
    )
    parser.add_argument(
        "--from-json",
        default=None,
        metavar="FILE",
        help="do not run anything: rebuild the Markdown and figures from FILE",
    )
    return parser


def _parse_only(only: Any) -> list[str] | None:
    if only is None:
        return None
    names = [s.strip() for s in str(only).split(",") if s.strip()]
    if not names:
        raise ValueError(f"`only` must name at least one of {', '.join(FAMILIES)}; got {only!r}.")
    return [check_choice(s, "only", FAMILIES) for s in names]


def main(args: argparse.Namespace | Sequence[str] | None = None) -> int:
    """Run ``maxmargin bench``; returns 0, or 1 when a benchmark errored, crashed or timed out."""
    if args is None or not isinstance(args, argparse.Namespace):
        parser = add_arguments(argparse.ArgumentParser(prog="maxmargin bench"))
        args = parser.parse_args(None if args is None else list(args))
    out_dir = Path(args.out)
    if args.from_json is not None:
        results = json.loads(Path(args.from_json).read_text())
    else:
        suite = check_choice(args.suite, "suite", SUITES)
        only = _parse_only(args.only)
        results = run_suite(suite, only, repeats=args.repeats, threads=args.threads)
        previous = out_dir / "benchmarks.json"
        if args.merge and previous.exists():
            results = _merge(json.loads(previous.read_text()), results)
    paths = write_outputs(results, out_dir)
    print(
        f"wrote {paths['markdown']}, {paths['json']}" + "".join(f", {f}" for f in paths["figures"])
    )
    for t in evaluate_targets(results["rows"]):
        verdict = {True: "MET", False: "NOT MET", None: "NOT MEASURED"}[t["met"]]
        print(f"{verdict:>12}: {t['target']} - {t['detail']}")
    bad = [r for r in results["rows"] if r["status"] in ("error", "timeout", "crashed")]
    for r in bad:
        print(
            f"{r['status']}: {r['benchmark']} / {r['case']} / {r['method']}: {r['message']}",
            file=sys.stderr,
        )
    return 1 if bad else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
