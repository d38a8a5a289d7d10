"""Families ``linear`` and ``linear_svc``: linear SVMs against LIBLINEAR (scikit-learn
``LinearSVC``), one thread.

Four problems on the same synthetic data (:mod:`benchmarks.bench_dcd`'s dense Gaussian rows and
sparse text-like rows, 5 % of the labels flipped):

* ``linear``: ``hinge`` and ``squared_hinge``, LIBLINEAR's own problems (bias regularised through
  ``intercept_scaling = 1``): ``dcd`` against ``LinearSVC(loss=...)``, and ``l1``, the
  L1-regularised squared hinge: ``l1_cdn`` against ``LinearSVC(penalty="l1", dual=False)``; all
  judged by the same float64 certificate, the relative duality gap of
  :func:`~maxmargin.certificate.certify_liblinear`; ``LinearSVC`` runs at its default ``tol``
  when maxmargin's target gap is 1e-3, else at that gap;
* ``linear_cs``: ``crammer_singer``, Crammer and Singer's multi-class problem (``K = 5``
  classes, the labels the largest of ``K`` random linear scores, 5 % relabelled at random):
  ``cs_dcd`` against ``LinearSVC(multi_class="crammer_singer")``, both judged by
  :func:`~maxmargin.certificate_multiclass.certify_crammer_singer`; LinearSVC exposes no dual
  point, so its ``W`` is judged against the better of the certificate's own KKT multipliers and
  maxmargin's dual point (any feasible one bounds its gap from above);
* ``linear_svc``: ``svc``, SVC's problem (hinge, unregularised bias):
  ``smo(X, y, kernel="linear")`` as a user calls it (large problems go to ``dcd_svc``: the
  row's ``solver`` says which ran), certified to ``m - M < tol``, against ``LinearSVC``'s hinge
  (another problem: its gap is in its own).

Each side's certified gap is in ``extra``; the certificates are computed outside the timed calls.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.bench_dcd import make_dense, make_sparse
from benchmarks.harness import Case, compare, make_row, measure_many
from benchmarks.tables import fmt, md_table, pairs

#: ``(kind, n, d)`` data sets by suite.
SIZES = {
    "smoke": [("dense", 2_000, 20), ("sparse", 2_000, 5_000)],
    "standard": [("dense", 20_000, 20), ("dense", 100_000, 100), ("sparse", 100_000, 50_000)],
    "scale": [("dense", 20_000, 20), ("dense", 100_000, 100), ("dense", 500_000, 300),
              ("sparse", 100_000, 50_000), ("sparse", 500_000, 1_000_000)],
}


#: LIBLINEAR's problems run at gap 1e-6 too on the sets of at most this many rows (the
#: 500,000-row hinge at 1e-6 would take hours of LinearSVC's and of the benchmark's time).
TIGHT_MAX_ROWS = 100_000

#: ``(kind, n, d)`` of the Crammer-Singer cases by suite.
CS_SIZES = {
    "smoke": [("dense", 800, 20), ("sparse", 800, 2_000)],
    "standard": [("dense", 20_000, 50), ("sparse", 20_000, 20_000)],
    "scale": [("dense", 20_000, 50), ("sparse", 20_000, 20_000), ("sparse", 100_000, 50_000)],
}
#: Classes of the Crammer-Singer cases.
CS_CLASSES = 5


def _cases(family: str, suite: str, problems: tuple[str, ...]) -> list[Case]:
    """Each data set of :data:`SIZES` with ``problems`` at gap 1e-3, and LIBLINEAR's three at
    1e-6 on the sets of at most :data:`TIGHT_MAX_ROWS` rows (``l1`` on every sparse set)."""
    out = []
    for kind, n, d in SIZES[suite]:
        for problem in problems:
            tight = problem != "svc" and (n <= TIGHT_MAX_ROWS or (problem == "l1"
                                                                   and kind == "sparse"))
            for tol in (1e-3, 1e-6) if tight else (1e-3,):
                out.append(Case(family, f"{problem} {kind} n={n:,} d={d:,} tol={tol:g}",
                                {"kind": kind, "n": n, "d": d, "problem": problem,
                                 "tol": tol, "C": 1.0}))
    return out


def cases(suite: str) -> list[Case]:
    """Family ``linear``: LIBLINEAR's three problems."""
    return _cases("linear", suite, ("hinge", "squared_hinge", "l1"))


def cs_cases(suite: str) -> list[Case]:
    """Family ``linear_cs``: Crammer and Singer's problem at gap 1e-3 on :data:`CS_SIZES`
    (and 1e-6 on the dense set)."""
    out = []
    for kind, n, d in CS_SIZES[suite]:
        for tol in (1e-3, 1e-6) if kind == "dense" else (1e-3,):
            out.append(Case("linear_cs", f"crammer_singer K={CS_CLASSES} {kind} n={n:,} "
                            f"d={d:,} tol={tol:g}",
                            {"kind": kind, "n": n, "d": d, "problem": "crammer_singer",
                             "K": CS_CLASSES, "tol": tol, "C": 1.0}))
    return out


def multiclass(kind: str, n: int, d: int, K: int, seed: int) -> tuple[Any, np.ndarray]:
    """The rows of :func:`make_dense` / :func:`make_sparse` with ``K`` classes: the largest of
    ``K`` random linear scores (sparse weights on sparse rows), ``FLIP`` of them relabelled at
    random."""
    from benchmarks.bench_dcd import FLIP

    X, _ = (make_dense if kind == "dense" else make_sparse)(n, d, seed=seed)
    rng = np.random.default_rng(seed + 1)
    W = rng.standard_normal((K, d)) / np.sqrt(d)
    if kind != "dense":
        W *= rng.random((K, d)) < 0.1
    y = np.argmax(np.asarray(X @ W.T), axis=1)
    flip = rng.random(n) < FLIP
    y[flip] = rng.integers(0, K, int(flip.sum()))
    return X, y


def run_cs(case: Case, repeats: int, budget: float) -> list[dict]:
    """Family ``linear_cs``: LinearSVC, then ``cs_dcd``, interleaved; both certified
    afterwards (module docstring)."""
    from sklearn.svm import LinearSVC
    from threadpoolctl import threadpool_limits

    from maxmargin.algorithms import cs_dcd
    from maxmargin.certificate import liblinear_rows
    from maxmargin.certificate_multiclass import certify_crammer_singer

    p = case.params
    X, y = multiclass(p["kind"], p["n"], p["d"], p["K"], seed=p["n"] + p["d"])
    Xw, yw = multiclass(p["kind"], 500, min(p["d"], 2_000), p["K"], seed=1)
    peer_tol = 1e-4 if p["tol"] >= 1e-3 else p["tol"]

    def peer(X: Any, y: np.ndarray) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return LinearSVC(C=p["C"], multi_class="crammer_singer", tol=peer_tol,
                             random_state=0, max_iter=1000).fit(X, y)

    def ours(X: Any, y: np.ndarray) -> Any:
        return cs_dcd(X, y, p["C"], intercept_scaling=1.0, tol=p["tol"])

    with threadpool_limits(1):
        m_peer, m_ours = measure_many([(lambda: peer(X, y), lambda: peer(Xw, yw)),
                                       (lambda: ours(X, y), lambda: ours(Xw, yw))],
                                      repeats, budget)
    params = {"tol": p["tol"], "C": p["C"], "problem": p["problem"], "K": p["K"]}
    ref = make_row(case, "sklearn.LinearSVC", "peer", m_peer, params=dict(params))
    row = make_row(case, "maxmargin.cs_dcd", "maxmargin", m_ours, params=params)
    box = np.full(y.size, p["C"])
    lam = None
    if m_ours.value is not None:
        sol = m_ours.value
        lam = -np.asarray(sol.alpha)  # lambda_i^m = C_i [m = y_i] - alpha_i^m
        lam[np.arange(y.size), y] += box
        row.update(status=sol.status, iterations=sol.iterations,
                   objective=sol.primal_objective,
                   accuracy=float(np.mean(sol.predict(X) == y)),
                   extra={"gap": sol.certificate.gap, "solver": sol.method})
    if m_peer.value is not None:
        clf = m_peer.value
        Wt = np.hstack([clf.coef_, clf.intercept_[:, None]])
        cert = certify_crammer_singer(Wt, liblinear_rows(X, 1.0), y, box, lam=lam)
        # LIBLINEAR's -s 4 ignores max_iter: its own cap is 100,000 passes
        ref.update(status="done", iterations=int(np.max(clf.n_iter_)),
                   objective=cert.primal_objective,
                   accuracy=float(np.mean(clf.predict(X) == y)),
                   extra={"gap": cert.gap, "max_iter_reached": int(np.max(clf.n_iter_))
                          >= 100_000})
    compare([ref, row], ref)
    return [ref, row]


def svc_cases(suite: str) -> list[Case]:
    """Family ``linear_svc``: SVC's problem."""
    return _cases("linear_svc", suite, ("svc",))


def _solvers(p: dict) -> tuple[Callable, Callable]:
    """``(peer(X, y), ours(X, y))`` for the case's problem."""
    from sklearn.svm import LinearSVC

    from maxmargin.algorithms import l1_cdn, smo
    from maxmargin.algorithms.dcd import dcd

    loss, penalty = _loss_penalty(p["problem"])
    peer_tol = 1e-4 if p["tol"] >= 1e-3 else p["tol"]

    def peer(X: Any, y: np.ndarray) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # LinearSVC's own choice for L2 (dual="auto": the primal Newton method for the
            # squared hinge when n > d); the L1 penalty has the primal only
            return LinearSVC(C=p["C"], penalty=penalty, loss=loss,
                             dual=False if penalty == "l1" else "auto", tol=peer_tol,
                             random_state=0, max_iter=1000).fit(X, y)

    def ours(X: Any, y: np.ndarray) -> Any:
        if p["problem"] == "svc":
            return smo(X, y, p["C"], kernel="linear", tol=p["tol"])
        if penalty == "l1":
            return l1_cdn(X, y, p["C"], intercept_scaling=1.0, tol=p["tol"])
        return dcd(X, y, p["C"], loss=loss, intercept_scaling=1.0, tol=p["tol"])

    return peer, ours


def _loss_penalty(problem: str) -> tuple[str, str]:
    """``(loss, penalty)`` of LinearSVC for a case's problem."""
    if problem == "l1":
        return "squared_hinge", "l1"
    return ("hinge" if problem == "svc" else problem), "l2"


def run(case: Case, repeats: int, budget: float) -> list[dict]:
    """LinearSVC, then maxmargin, interleaved; both certified afterwards."""
    from threadpoolctl import threadpool_limits

    from maxmargin.certificate import certify_liblinear, liblinear_rows

    p = case.params
    make = make_dense if p["kind"] == "dense" else make_sparse
    X, y = make(p["n"], p["d"], seed=p["n"] + p["d"])
    Xw, yw = make(500, min(p["d"], 2_000), seed=1)
    peer, ours = _solvers(p)
    with threadpool_limits(1):  # one thread each (LIBLINEAR has no BLAS): maxmargin's BLAS too
        m_peer, m_ours = measure_many([(lambda: peer(X, y), lambda: peer(Xw, yw)),
                                       (lambda: ours(X, y), lambda: ours(Xw, yw))],
                                      repeats, budget)
    params = {"tol": p["tol"], "C": p["C"], "problem": p["problem"]}
    ref = make_row(case, "sklearn.LinearSVC", "peer", m_peer, params=dict(params))
    row = make_row(case, "maxmargin.linear", "maxmargin", m_ours, params=params)
    loss, penalty = _loss_penalty(p["problem"])
    rows = liblinear_rows(X, 1.0)
    if m_peer.value is not None:
        clf = m_peer.value
        w = np.append(clf.coef_.ravel(), clf.intercept_[0])
        # any feasible dual point bounds LinearSVC's gap from above: maxmargin's (certified
        # tight; SVC's alpha is feasible too) and, on dense rows, the certificate's own
        # bounded least-squares fits to LinearSVC's margins (minutes on 100,000 text rows);
        # the smaller bound is reported
        judged = []
        if penalty == "l2" and m_ours.value is not None:
            judged.append(certify_liblinear(w, rows, y, p["C"], loss=loss, penalty=penalty,
                                            alpha=m_ours.value.alpha, margin_fits=False))
        if p["kind"] == "dense" or not judged:
            judged.append(certify_liblinear(w, rows, y, p["C"], loss=loss, penalty=penalty))
        cert = min(judged, key=lambda c: c.gap)
        ref.update(status="done", iterations=int(np.max(clf.n_iter_)),
                   objective=cert.primal_objective, b=float(clf.intercept_[0]),
                   accuracy=float(np.mean(clf.predict(X) == y)),
                   extra={"gap": cert.gap, "max_iter_reached": int(np.max(clf.n_iter_)) >= 1000})
    if m_ours.value is not None:
        sol = m_ours.value
        svc = p["problem"] == "svc"
        gap = sol.certificate.kkt_violation if svc else sol.certificate.gap
        row.update(status=sol.status, iterations=sol.iterations, b=float(sol.b),
                   objective=sol.primal_objective,
                   accuracy=float(np.mean(np.sign(sol.decision_function(X)) == y)),
                   extra={"gap": gap, "solver": sol.method})
    compare([ref, row], ref)
    if p["problem"] == "svc":
        row["rel_objective_diff"] = None  # another problem than the peer's
    return [ref, row]


def markdown(rows: list[dict]) -> str:
    """The linear table (both families): times, ratio and each side's certified gap."""
    body = []
    for peer, ours in (pairs(rows, "linear") + pairs(rows, "linear_cs")
                       + pairs(rows, "linear_svc")):
        body.append([
            ours["case"], peer["time_s"], ours["time_s"], ours["time_ratio"],
            fmt(peer["extra"].get("gap"), ".1e")
            + (" (max_iter)" if peer["extra"].get("max_iter_reached") else ""),
            fmt(ours["extra"].get("gap"), ".1e"), ours["extra"].get("solver"), ours["status"],
            ours["peak_delta_mb"],
        ])
    return md_table(
        "Linear SVMs vs LIBLINEAR (scikit-learn LinearSVC), one thread",
        ["case", "LinearSVC s", "maxmargin s", "ratio", "LinearSVC gap", "maxmargin gap",
         "solver", "status", "maxmargin peak MB"],
        body,
        "C = 1. hinge / squared_hinge / l1: LIBLINEAR's problems (bias regularised, "
        "intercept_scaling 1; l1: the L1-regularised squared hinge, `l1_cdn` vs "
        "LinearSVC(penalty='l1', dual=False)), gaps = relative duality gaps of the same "
        "float64 certificate; LinearSVC at tol "
        "1e-4 (its default) for the 1e-3 rows, else at the row's tol. svc: SVC's problem "
        "(unregularised bias) by `smo(kernel=\"linear\")`, its gap = m - M; LinearSVC's gap in "
        "its own hinge problem. LinearSVC's gap is the smaller of two upper bounds: against "
        "maxmargin's dual point and (dense rows, and l1) the certificate's fits to "
        "LinearSVC's margins. crammer_singer: Crammer and Singer's multi-class problem "
        "(K = 5), `cs_dcd` vs LinearSVC(multi_class='crammer_singer'), both judged by "
        "certify_crammer_singer (LinearSVC's W against the better of the KKT multipliers and "
        "maxmargin's dual point: an upper bound). (max_iter): LinearSVC stopped at its "
        "iteration cap (1000; 100,000 for crammer_singer, which ignores max_iter).",
    )
