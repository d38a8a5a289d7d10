"""The benchmarks' data sets and their independent accuracy measures (recomputed here from what
each solver returns, never taken from its own report)."""
from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np

from benchmarks.harness import MB


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


def make_close_hulls(
    m: int, d: int, seed: int, distance: float = 0.1
) -> tuple[np.ndarray, np.ndarray]:
    """Standard-normal points cut by the slab ``|x_1| < distance / 2``, ``m`` on each side
    (``x_1 > 0``: ``P``): hulls exactly ``distance`` apart along ``e_1`` in the limit, with many
    points near both faces (the hard instance for Gilbert and MDM)."""
    rng = np.random.default_rng(seed)
    sides = []
    for sign in (1.0, -1.0):
        kept: list[np.ndarray] = []
        while sum(len(k) for k in kept) < m:
            X = rng.standard_normal((2 * m, d))
            kept.append(X[sign * X[:, 0] >= distance / 2])
        sides.append(np.concatenate(kept)[:m])
    return sides[0], sides[1]


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
    rows = max(1, int(block_mb * MB / (8.0 * max(1, sv.size))))
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

