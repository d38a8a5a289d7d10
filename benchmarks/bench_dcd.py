"""``dcd`` against scikit-learn's ``LinearSVC`` on LIBLINEAR's own problems, one thread.

Run ``python -m benchmarks.bench_dcd [--sizes smoke|default|large] [--tol 1e-3]``. Both solve
the same problem (same ``C``, ``loss``, ``intercept_scaling``) on the same synthetic data, side
by side in one process; each answer is judged by the same float64 certificate,
:func:`~maxmargin.certificate.certify_liblinear` (LinearSVC's ``coef_`` and
``intercept_ / s`` as its ``w~``), outside the timed calls. The printed table gives the time
ratio (maxmargin / LinearSVC) and each side's certified relative gap (for ``dcd_svc``, SVC's
problem with an unregularised bias, maxmargin's ``m - M``; LinearSVC still solves its own
problem there). LinearSVC runs at its default ``tol`` when maxmargin is asked for
``tol >= 1e-3``, else at ``tol``, and with its default ``dual="auto"`` unless ``--dual true``.
"""
from __future__ import annotations

import argparse
import time
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp

#: ``(kind, n, d)`` per size preset; dense rows are Gaussian, sparse ones text-like.
SIZES = {
    "smoke": [("dense", 20_000, 20), ("sparse", 20_000, 50_000)],
    "default": [("dense", 20_000, 20), ("dense", 100_000, 100), ("dense", 200_000, 300),
                ("sparse", 100_000, 50_000), ("sparse", 100_000, 1_000_000)],
    "large": [("dense", 500_000, 300), ("sparse", 500_000, 1_000_000)],
}
#: Non-zeros per sparse row.
NNZ_PER_ROW = 60
#: The share of labels flipped (noise: bounded support vectors, as in practice).
FLIP = 0.05


def make_dense(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Standardised Gaussian rows; ``y = sign(x . w* + 0.5)`` with :data:`FLIP` flipped."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w = rng.standard_normal(d) / np.sqrt(d)
    y = np.where(X @ w + 0.5 > 0, 1.0, -1.0)
    y[rng.random(n) < FLIP] *= -1.0
    return X, y


def make_sparse(n: int, d: int, seed: int) -> tuple[sp.csr_matrix, np.ndarray]:
    """Text-like rows: :data:`NNZ_PER_ROW` columns drawn from a Zipf-like law, positive
    tf-idf-like values, rows scaled to unit norm; ``y`` from a sparse ``w*`` with :data:`FLIP`
    flipped."""
    rng = np.random.default_rng(seed)
    ranks = np.arange(1, d + 1, dtype=np.float64)
    p = 1.0 / ranks**0.8
    p /= p.sum()
    cols = rng.choice(d, size=n * NNZ_PER_ROW, p=p)
    vals = rng.exponential(1.0, n * NNZ_PER_ROW)
    indptr = np.arange(0, n * NNZ_PER_ROW + 1, NNZ_PER_ROW)
    X = sp.csr_matrix((vals, cols, indptr), shape=(n, d))
    X.sum_duplicates()
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.diags(1.0 / norms) @ X
    w = rng.standard_normal(d) * (rng.random(d) < 0.1)
    score = np.asarray(X @ w).ravel()
    y = np.where(score > np.median(score), 1.0, -1.0)
    y[rng.random(n) < FLIP] *= -1.0
    X = X.tocsr()
    X.sort_indices()  # canonical rows, as vectorizers and LIBSVM files give
    return X, y


def run_one(kind: str, n: int, d: int, loss: str, C: float, tol: float,
            dual: Any = "auto") -> dict[str, Any]:
    """One row: time and certify both solvers on one data set (``loss="svc"``: ``dcd_svc``,
    SVC's problem, against LinearSVC's hinge)."""
    from sklearn.svm import LinearSVC

    from maxmargin.algorithms.dcd import dcd, dcd_svc
    from maxmargin.certificate import certify_liblinear, liblinear_rows

    svc = loss == "svc"
    loss = "hinge" if svc else loss
    X, y = (make_dense if kind == "dense" else make_sparse)(n, d, seed=n + d)
    s = 1.0
    peer_tol = 1e-4 if tol >= 1e-3 else tol
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        clf = LinearSVC(C=C, loss=loss, intercept_scaling=s, tol=peer_tol, dual=dual,
                        random_state=0, max_iter=1000).fit(X, y)
        t_peer = time.perf_counter() - t0
    peer_warned = any("converge" in str(w.message).lower() for w in caught)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        ours = dcd_svc(X, y, C, tol=tol) if svc else dcd(X, y, C, loss=loss,
                                                         intercept_scaling=s, tol=tol)
        t_ours = time.perf_counter() - t0
    rows = liblinear_rows(X, s)
    w_peer = np.append(clf.coef_.ravel(), clf.intercept_[0] / s)
    cert_peer = certify_liblinear(w_peer, rows, y, C, loss=loss)
    return {
        "data": f"{kind} n={n} d={d}", "loss": "svc (m - M)" if svc else loss, "C": C, "tol": tol,
        "linearsvc_s": t_peer, "maxmargin_s": t_ours, "ratio": t_ours / t_peer,
        "linearsvc_gap": cert_peer.gap, "linearsvc_warned": peer_warned,
        "linearsvc_iter": int(np.max(clf.n_iter_)),
        "maxmargin_gap": ours.certificate.kkt_violation if svc else ours.certificate.gap,
        "maxmargin_status": ours.status,
        "maxmargin_passes": ours.iterations,
    }


def main(argv: list[str] | None = None) -> None:
    """Print one markdown row per (data, loss)."""
    from threadpoolctl import threadpool_limits

    from maxmargin.algorithms.dcd import dcd, dcd_svc

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", choices=sorted(SIZES), default="smoke")
    parser.add_argument("--tol", type=float, default=1e-3)
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--loss", choices=["hinge", "squared_hinge", "svc", "all"],
                        default="all")
    parser.add_argument("--dual", choices=["auto", "true"], default="auto",
                        help="LinearSVC's dual (its default 'auto' picks the primal solver "
                        "for the squared hinge when n > d)")
    args = parser.parse_args(argv)
    losses = ["hinge", "squared_hinge", "svc"] if args.loss == "all" else [args.loss]
    dual = True if args.dual == "true" else "auto"
    with threadpool_limits(1):
        Xw, yw = make_dense(200, 5, seed=1)
        for A in (Xw, sp.csr_matrix(Xw)):  # untimed: Numba's cache, imports
            for loss in ("hinge", "squared_hinge"):
                dcd(A, yw, loss=loss)
            dcd_svc(A, yw)
        print("| data | loss | LinearSVC s | maxmargin s | ratio | LinearSVC gap "
              "| maxmargin gap | maxmargin status (passes) |")
        print("|---|---|---|---|---|---|---|---|")
        for kind, n, d in SIZES[args.sizes]:
            for loss in losses:
                r = run_one(kind, n, d, loss, args.C, args.tol, dual)
                warned = " (max_iter)" if r["linearsvc_warned"] else ""
                print(f"| {r['data']} | {loss} | {r['linearsvc_s']:.3f}{warned} "
                      f"| {r['maxmargin_s']:.3f} | {r['ratio']:.2f} | {r['linearsvc_gap']:.1e} "
                      f"| {r['maxmargin_gap']:.1e} | {r['maxmargin_status']} "
                      f"({r['maxmargin_passes']}) |", flush=True)


if __name__ == "__main__":
    main()
