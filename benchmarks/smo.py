"""Families ``smo_svc`` (SMO vs scikit-learn ``SVC``, i.e. LIBSVM) and ``smo_cvxpy`` (SMO vs
the CVXPY dual oracle with Clarabel and OSQP)."""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.data import make_clouds, svm_scores
from benchmarks.harness import (
    MB,
    Case,
    Measured,
    compare,
    join_messages,
    make_row,
    measure,
    measure_many,
    run_group,
)
from benchmarks.tables import find_rows, fmt, md_table, pairs, peak_delta

#: The SMO memory bound checked at scale: cache + MEM_X_COPIES copies of X + MEM_N_ARRAYS
#: float64 arrays of length n (alpha, gradients, masks, cache index, ... generously counted).
MEM_X_COPIES = 4


MEM_N_ARRAYS = 64


def svc_cases(suite: str) -> list[Case]:
    """The suite's SMO vs SVC cases: RBF and linear kernels by ``n``, and RBF at tol 1e-6."""
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


#: Defaults of an SVM case; other values of these keys appear in the case's name.
CASE_DEFAULTS = {"d": 20, "C": 1.0, "degree": 3, "data": "clouds"}


def _svm_case(family: str, kernel: str, n: int, tol: float, **extra: Any) -> Case:
    """One SVM case (``d = 20``, ``C = 1``, cache 200 MB, two Gaussian clouds unless ``extra``
    says otherwise); large ones in a process of their own."""
    params = {"kernel": kernel, "n": n, "tol": tol, "cache_size": 200.0, **CASE_DEFAULTS}
    params.update(extra)
    timeout = 600.0 + 0.05 * n  # generous; large RBF problems take minutes
    # large problems get a process of their own, so nothing earlier blurs their memory peak
    name = f"{kernel} n={n}" + "".join(
        f" {k}={params[k]:g}" if isinstance(params[k], float | int) else f" {params[k]}"
        for k in CASE_DEFAULTS
        if params[k] != CASE_DEFAULTS[k] and (k != "degree" or kernel == "poly")
    )
    if family != "smo_cvxpy":
        name += f" tol={tol:g}"
    if family == "smo_svc" and n >= 50_000:
        params["isolated_memory"] = True  # peak memory again with each solver alone
    return Case(family, name, params, timeout, isolate=n >= 20_000)


def svm_data(p: dict, warm: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The case's ``X, y``: two Gaussian clouds (``make_clouds``) or scikit-learn's breast-cancer
    data unscaled (``data="breast_cancer"``, |x| up to 4,254); ``warm``: a small problem of the
    same kind for the untimed warm-up."""
    if p["data"] == "breast_cancer":
        from sklearn.datasets import load_breast_cancer

        X, y01 = load_breast_cancer(return_X_y=True)
        X, y = np.ascontiguousarray(X), 2.0 * y01 - 1.0
        return (X[:100], y[:100]) if warm else (X, y)
    return make_clouds(200, p["d"], seed=1) if warm else make_clouds(p["n"], p["d"], seed=p["n"])


def cvxpy_cases(suite: str) -> list[Case]:
    # Clarabel on the dense RBF dual grows like n^3 per iteration: n = 2,000 takes ~1 minute
    """The suite's SMO vs CVXPY cases (RBF, ``n`` up to 2,000: Clarabel's dense dual grows like
    n^3)."""
    sizes = [200] if suite == "smoke" else [200, 500, 1000, 2000]
    limit = 10.0 if suite == "smoke" else 120.0
    cases = [_svm_case("smo_cvxpy", "rbf", n, 1e-3, osqp_time_limit=limit) for n in sizes]
    return [dataclasses.replace(c, timeout_s=1800.0) for c in cases]


def _gamma_scale(X: np.ndarray) -> float:
    """SVC's ``gamma="scale"``, resolved once so both solvers get the same float."""
    return 1.0 / (X.shape[1] * float(X.var()))


def _smo_row(
    case: Case, X: np.ndarray, y: np.ndarray, kernel: Any, m: Measured, method: str,
    tol: float | None,
) -> dict:
    """Row of an SVMSolution (maxmargin.smo, gilbert_svm or a CVXPY oracle) with recomputed
    scores."""
    sol = m.value
    role = "maxmargin" if method.startswith("maxmargin") else "oracle"
    if sol is None:
        return make_row(case, method, role, m, params={"tol": tol})
    sv = np.flatnonzero(sol.alpha > 0)
    scores = svm_scores(X, y, sv, sol.alpha[sv] * y[sv], sol.b, kernel)
    msg = join_messages(m.message, sol.message)
    return make_row(
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
    case: Case, X: np.ndarray, y: np.ndarray, kernel: Any, m: Measured, tol: float,
    method: str = "sklearn.SVC",
) -> dict:
    """Row of a fitted scikit-learn (or scikit-learn-intelex) SVC, scored like
    :func:`_smo_row`."""
    svc = m.value
    if svc is None:
        return make_row(case, method, "peer", m, params={"tol": tol})
    sv = np.asarray(svc.support_)
    coef = np.asarray(svc.dual_coef_[0])
    scores = svm_scores(X, y, sv, coef, float(svc.intercept_[0]), kernel)
    return make_row(
        case,
        method,
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


def _smo_call(X: np.ndarray, y: np.ndarray, p: dict, gamma: float | None, tol: float,
              n_jobs: int | None = None) -> Any:
    """``smo`` with the case's C, kernel, cache size and shrinking, at tolerance ``tol``
    (``n_jobs``: its threads, when given)."""
    from maxmargin.algorithms.smo import smo

    kw: dict[str, Any] = {"gamma": gamma} if gamma is not None else {}
    if n_jobs is not None:
        kw["n_jobs"] = n_jobs
    if p["kernel"] == "poly":
        kw.update(degree=p["degree"], coef0=0.0)
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


def run_svc(case: Case, repeats: int, budget: float) -> list[dict]:
    """SVC and SMO on the same clouds, interleaved best of k, scored by ``svm_scores``."""
    from sklearn.svm import SVC

    from maxmargin.kernels import make_kernel

    p = case.params  # _svm_case filled in CASE_DEFAULTS
    X, y = svm_data(p)
    Xw, yw = svm_data(p, warm=True)
    gamma = _gamma_scale(X) if p["kernel"] in ("rbf", "poly") else None
    poly = {"degree": p["degree"], "coef0": 0.0} if p["kernel"] == "poly" else {}
    kernel = make_kernel(p["kernel"], gamma=gamma if gamma is not None else "scale", **poly)
    svc_kw = {"kernel": p["kernel"], "C": p["C"], "tol": p["tol"], "cache_size": p["cache_size"],
              **poly}
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
        return [make_row(case, p["only"], "probe", m, status="error" if m.error else "done")]
    calls = [(fit_svc(X, y), fit_svc(Xw, yw)), (fit_smo(X, y), fit_smo(Xw, yw))]
    intelex = _intelex_fits(svc_kw) if p["n"] < 50_000 else []
    calls += [(fit(X, y), fit(Xw, yw)) for _, fit in intelex]
    jobs = [threads for threads, _ in intelex] if _thread_rows(p) else []
    calls += [(lambda k=k: _smo_call(X, y, p, gamma, p["tol"], k),
               lambda k=k: _smo_call(Xw, yw, p, gamma, p["tol"], k)) for k in jobs]
    linear = p["kernel"] == "linear"
    if linear:
        calls.append((_fit_liblinear(X, y, p), _fit_liblinear(Xw, yw, p)))
    measured = measure_many(calls, repeats, budget)
    m_svc, m_smo, m_intelex = measured[0], measured[1], measured[2 : 2 + len(intelex)]
    m_jobs = measured[2 + len(intelex) : 2 + len(intelex) + len(jobs)]
    ref = _svc_row(case, X, y, kernel, m_svc, p["tol"])
    row = _smo_row(case, X, y, kernel, m_smo, "maxmargin.smo", p["tol"])
    extra_rows = []
    if linear:
        extra_rows.append(_liblinear_row(case, X, y, p, measured[-1]))
        if extra_rows[-1]["time_s"] and row["time_s"]:
            row["extra"]["ratio_vs_liblinear"] = row["time_s"] / extra_rows[-1]["time_s"]
    job_rows = {k: _smo_row(case, X, y, kernel, m, f"maxmargin.smo/n_jobs={k}", p["tol"])
                for k, m in zip(jobs, m_jobs, strict=True)}
    for k, r in job_rows.items():
        r["params"]["n_jobs"] = k
    for (threads, _), m in zip(intelex, m_intelex, strict=True):
        r = _svc_row(case, X, y, kernel, m, p["tol"], f"sklearnex.SVC/{threads}thread")
        r["params"]["threads"] = threads
        extra_rows.append(r)
        ours = job_rows.get(threads, row)  # maxmargin / oneDAL (the strongest CPU SVC) on
        if r["time_s"] and ours["time_s"]:  # equal threads where smo(n_jobs=k) was timed
            ours["extra"][f"ratio_vs_sklearnex_{threads}thread"] = ours["time_s"] / r["time_s"]
    extra_rows += list(job_rows.values())
    if p.get("isolated_memory"):
        del m_svc, m_smo
        for r in (ref, row):
            r["extra"].update(_isolated_memory(case, r["method"]))
    n, d = X.shape
    row["extra"]["memory_bound_mb"] = (
        p["cache_size"] + (MEM_X_COPIES * n * d * 8 + MEM_N_ARRAYS * n * 8) / MB
    )
    row["extra"]["gram_matrix_mb"] = n * n * 8 / MB
    for r in (ref, row, *extra_rows):
        r["params"].update(kernel=p["kernel"], C=p["C"], gamma=gamma, cache_size=p["cache_size"],
                           data=p["data"], **poly)
    compare([ref, row, *extra_rows], ref)
    return [ref, row, *extra_rows]


def _thread_rows(p: dict) -> bool:
    """Whether ``smo(n_jobs=k)`` is timed beside oneDAL on ``k`` threads: the larger cases
    (n >= 5,000, or d >= 300) of the clouds."""
    return p["data"] == "clouds" and (p["n"] >= 5000 or p["d"] >= 300)


#: LIBLINEAR's iteration cap in the benchmarks (its default, 1,000, stops early on d = 300).
LIBLINEAR_MAX_ITER = 100_000


def _fit_liblinear(A: np.ndarray, b: np.ndarray, p: dict) -> Callable[[], Any]:
    """LIBLINEAR through scikit-learn's ``LinearSVC`` (hinge loss, dual coordinate descent, at
    the case's C and tol): a different problem, ``min 1/2 (||w||^2 + b^2) + C sum hinge`` (the
    bias regularised as an extra feature), shown for context on linear problems."""
    from sklearn.svm import LinearSVC

    return lambda: LinearSVC(C=p["C"], loss="hinge", dual=True, tol=p["tol"],
                             max_iter=LIBLINEAR_MAX_ITER).fit(A, b)


def _liblinear_row(case: Case, X: np.ndarray, y: np.ndarray, p: dict, m: Measured) -> dict:
    """Row of a fitted ``LinearSVC``: its ``objective`` is the SVM primal value
    ``1/2 ||w||^2 + C sum max(0, 1 - y (w.x + b))`` of its ``(w, b)``, an upper bound on the
    optimum the other rows reach (the gap is the price of the regularised bias)."""
    svc = m.value
    method = "sklearn.LinearSVC (LIBLINEAR)"
    if svc is None:
        return make_row(case, method, "peer", m, params={"tol": p["tol"]})
    w, b = np.asarray(svc.coef_[0]), float(svc.intercept_[0])
    f = X @ w + b
    primal = 0.5 * float(w @ w) + p["C"] * float(np.maximum(0.0, 1.0 - y * f).sum())
    iterations = int(np.max(svc.n_iter_))
    return make_row(
        case, method, "peer", m, params={"tol": p["tol"], "loss": "hinge", "max_iter":
                                         LIBLINEAR_MAX_ITER},
        status="max_iter" if iterations >= LIBLINEAR_MAX_ITER else "optimal",
        iterations=iterations, objective=primal, b=b,
        accuracy=float(np.mean(np.where(f > 0, 1.0, -1.0) == y)),
        message="regularised bias: a different problem; objective = SVM primal of its (w, b)",
    )


def _intelex_fits(svc_kw: dict) -> list[tuple[int, Callable]]:
    """``(threads, fit)`` for scikit-learn-intelex's SVC (oneDAL) on 1 and 2 threads, when it
    is installed (the ``bench`` extra); none otherwise."""
    try:
        import daal4py
        from sklearnex.svm import SVC as IntelexSVC
    except ImportError:
        return []

    def fitter(threads: int) -> Callable:
        def fit(A: np.ndarray, b: np.ndarray) -> Callable[[], Any]:
            def run() -> Any:
                daal4py.daalinit(threads)
                return IntelexSVC(shrinking=True, **svc_kw).fit(A, b)
            return run
        return fit

    return [(1, fitter(1)), (2, fitter(2))]


def _isolated_memory(case: Case, method: str) -> dict[str, Any]:
    """Peak memory of one solver of ``case`` measured alone, in a fresh process of its own.

    In the shared process the heap left by the first solver can change the second one's peak
    (for example glibc raises its mmap threshold after large frees, so later temporaries land
    on the heap); a solver alone gives the clean number. Timings stay in the shared process.
    """
    probe = dataclasses.replace(
        case, params={**case.params, "only": method, "isolated_memory": False}
    )
    row = run_group([probe], 1, 0.0, dict(os.environ))[0]
    return {
        "isolated_peak_rss_mb": row["peak_rss_mb"],
        "isolated_rss_base_mb": row["rss_base_mb"],
        "isolated_peak_delta_mb": row["peak_delta_mb"],
        "isolated_time_s": row["time_s"],
        "isolated_status": row["status"],
    }


def run_cvxpy(case: Case, repeats: int, budget: float) -> list[dict]:
    """The CVXPY dual oracle (Clarabel, OSQP) and SMO at tol 1e-3 and 1e-6 on the same clouds."""
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
    compare(rows, rows[0])
    return rows


def smo_pair(rows: list[dict], kernel: str, n: int, tol: float = 1e-3) -> dict | None:
    """The SMO row of the ``smo_svc`` case ``kernel``, ``n``, ``tol`` (None if not measured)."""
    found = find_rows(
        rows, benchmark="smo_svc", case=f"{kernel} n={n} tol={tol:g}", method="maxmargin.smo"
    )
    return found[0] if found else None


def onedal_ratio(rows: list[dict], ours: dict, threads: int) -> float | None:
    """``smo / oneDAL`` on ``threads`` threads for the case of the row ``ours``: from the
    ``smo(n_jobs=threads)`` row where it was timed, else from ``ours``."""
    key = f"ratio_vs_sklearnex_{threads}thread"
    found = find_rows(rows, benchmark=ours["benchmark"], case=ours["case"],
                      method=f"maxmargin.smo/n_jobs={threads}")
    return (found[0] if found else ours)["extra"].get(key)


def markdown_svc(rows: list[dict]) -> str:
    """The SMO vs SVC table."""
    body = []
    for peer, ours in pairs(rows, "smo_svc"):
        body.append(
            [
                ours["params"].get("kernel"),
                ours["n"],
                ours["params"].get("tol"),
                peer["time_s"],
                ours["time_s"],
                ours["time_ratio"],
                fmt(ours["rel_objective_diff"], ".1e"),
                fmt(ours["b_diff"], ".1e"),
                fmt(ours["accuracy_diff"], "+.4f"),
                fmt(onedal_ratio(rows, ours, 1)),
                fmt(onedal_ratio(rows, ours, 2)),
                fmt(ours["extra"].get("ratio_vs_liblinear")),
                peer["iterations"],
                ours["iterations"],
                peak_delta(peer),
                peak_delta(ours),
                ours["status"],
            ]
        )
    return md_table(
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
            "vs oneDAL 1t",
            "vs oneDAL 2t",
            "vs LIBLINEAR",
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
        "vectors; d acc = training accuracy smo - SVC; vs oneDAL 1t / 2t = the time of "
        "`smo(n_jobs=1)` / `smo(n_jobs=2)` (where timed: n >= 5,000 or d >= 300; else `smo`'s "
        "default) over that of scikit-learn-intelex's SVC (oneDAL) on 1 / 2 threads (when "
        "installed; LIBSVM and smo's default loop run on one thread); vs LIBLINEAR = smo "
        "time / `LinearSVC` (hinge loss, dual CD, same C and tol) on the linear rows, which "
        "solves another problem (its bias is regularised); peak +MB = peak RSS increase in the "
        "call (for n >= 50,000 measured again with each solver alone in a fresh process, shown "
        "here).",
    )

