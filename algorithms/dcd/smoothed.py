r"""The hinge's smoothed primal path: a start for the exact finish where coordinate passes crawl.

With ``C max ||x||^2`` large, the hinge's dual coordinates move by ``(1 - m_i) / ||x~_i||^2``
a visit towards bounds ``C_i`` far away, and the passes need thousands of sweeps. The primal
of the Huber-smoothed hinge (``delta > 0``)

.. math::

    \min_{\tilde w} \tfrac12 \|\tilde w\|^2 + \sum_i C_i \, h_\delta(y_i \tilde w \cdot
    \tilde x_i), \qquad h_\delta(m) = \begin{cases} 0 & m \ge 1 \\ (1 - m)^2 / (2 \delta) &
    1 - \delta < m < 1 \\ 1 - m - \delta / 2 & m \le 1 - \delta \end{cases}

is piecewise quadratic, and its minimiser is ``w~ = sum_i alpha_i y_i x~_i`` with ``alpha_i =
C_i clip((1 - m_i) / delta, 0, 1)``: a point of the hinge's dual box, free only on the band
``1 - delta < m_i < 1`` (Huber's loss tends to the hinge as ``delta -> 0``). Newton's method
(generalised Hessian ``I + sum_band (C_i / delta) x~_i x~_i^T``, ``(d + 1)``-square, summed
over blocks of rows; an exact line search on the piecewise-linear slope) minimises it for
``delta = 1, 1/10, ...`` each from the last, until at most ``max_free`` alphas are free: then
the finish (:func:`~maxmargin.algorithms.dcd.finish.feature_finish`) has few to settle.
Counted work, never timed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from maxmargin.algorithms.dcd.finish import feature_finish, finish_work, fits, passes_work
from maxmargin.algorithms.dcd.loop import dual_weights
from maxmargin.algorithms.dcd.newton import slope_root
from maxmargin.certificate import TINY, rows_dot
from maxmargin.tolerances import (
    DCD_FINISH_KKT,
    DCD_HINGE_FINISH_BUDGET,
    DCD_SMOOTH_FREE,
    DCD_SMOOTH_MAX_FEATURES,
    DCD_SMOOTH_PASSES,
)

__all__ = ["smoothed_path", "path_finish", "path_applies", "path_work", "SMOOTH_FIRST_DELTA",
           "SMOOTH_SHRINK", "SMOOTH_LEVELS", "SMOOTH_LEVEL_STEPS", "SMOOTH_STEP_RTOL",
           "SMOOTH_BLOCK_BYTES"]

#: The first ``delta``, its divisor from level to level and the most levels.
SMOOTH_FIRST_DELTA = 1.0
SMOOTH_SHRINK = 10.0
SMOOTH_LEVELS = 10
#: Newton steps on one level at most (the minimiser is exact once the pieces settle).
SMOOTH_LEVEL_STEPS = 30
#: A level ends when its step is at most this times ``max(1, ||w~||)``.
SMOOTH_STEP_RTOL = 1e-12
#: The Hessian is summed over blocks of rows of about this many bytes (no copy of the data).
SMOOTH_BLOCK_BYTES = 8 * 2**20


def path_work(n: int, d: int, nnz: int, band: int) -> float:
    """The counted work of one Newton step: the Hessian over ``band`` rows, ``band (d +
    1)^2``, its factor, ``(d + 1)^3 / 3``, and the products and line search, ``8 (nnz + n)``."""
    m = d + 1
    return float(band) * m * m + m**3 / 3.0 + 8.0 * (nnz + n)


def _hessian(X: Any, band: np.ndarray, c: np.ndarray, s: float, ridge: np.ndarray
             ) -> np.ndarray:
    """``diag(ridge) + sum_{i in band} c_i x~_i x~_i^T`` (``x~_i = (x_i, s)``), summed over
    blocks of rows (dense) or as one sparse product (CSR); ``(d + 1)``-square. A free bias
    with no row in the band gets curvature 1 (a gradient step in it)."""
    d = X.shape[1]
    H = np.zeros((d + 1, d + 1))
    idx = np.flatnonzero(band)
    if hasattr(X, "indptr"):
        rows = X[idx]
        G = rows.T @ rows.multiply(c[idx][:, None]).tocsr()
        H[:d, :d] = G.toarray()
        col = np.asarray(rows.T @ c[idx]).ravel()
    else:
        step = max(1, SMOOTH_BLOCK_BYTES // (8 * max(d, 1)))
        col = np.zeros(d)
        for k in range(0, idx.size, step):
            part = idx[k:k + step]
            B = X[part]
            Bc = B * c[part][:, None]
            H[:d, :d] += Bc.T @ B
            col += Bc.sum(axis=0)
    H[:d, d] = H[d, :d] = s * col
    H[d, d] = s * s * float(np.sum(c[idx]))
    H[np.diag_indices(d + 1)] += ridge
    if not H[d, d] > 0.0:
        H[d, d] = 1.0
    return H


def _line_search(w: np.ndarray, p: np.ndarray, slack: np.ndarray, e: np.ndarray,
                 box: np.ndarray, delta: float, ridge: np.ndarray) -> float:
    """The ``t >= 0`` minimising the level's objective along ``p``: the root of its slope
    ``w . R p + t p . R p - sum_i C_i clip((slack_i - t e_i) / delta, 0, 1) e_i``
    (increasing, piecewise linear; ``R = diag(ridge)``, ``e_i = y_i x~_i . p``), by
    :func:`~.newton.slope_root`."""
    wp, pp = float(w @ (ridge * p)), float(p @ (ridge * p))

    def slope(t: float) -> tuple[float, float]:
        u = (slack - t * e) / delta
        inside = (u > 0.0) & (u < 1.0)
        value = wp + t * pp - float((box * np.clip(u, 0.0, 1.0)) @ e)
        rate = pp + float((box[inside] / delta) @ (e[inside] * e[inside]))
        return value, rate if rate > 0.0 else TINY

    return slope_root(slope)


def _level(X: Any, y: np.ndarray, box: np.ndarray, s: float, w: np.ndarray, delta: float,
           budget: float, ridge: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Newton's method on one level from ``w`` (at most :data:`SMOOTH_LEVEL_STEPS` steps,
    their work within ``budget``): ends when a full step keeps every row on its piece (the
    level's exact minimiser) or the step is round-off (:data:`SMOOTH_STEP_RTOL`). Returns
    ``(w, slack, work)``, ``slack = 1 - y_i w~ . x~_i``."""
    n, d = X.shape
    nnz = X.nnz if hasattr(X, "nnz") else n * d
    work = 0.0
    slack = 1.0 - y * rows_dot(X, w, s)
    for _ in range(SMOOTH_LEVEL_STEPS):
        band = (slack > 0.0) & (slack < delta)
        cost = path_work(n, d, nnz, int(np.count_nonzero(band)))
        if work + cost > budget:
            break
        work += cost
        alpha = box * np.clip(slack / delta, 0.0, 1.0)
        grad = ridge * w - dual_weights(X, y, alpha, s)
        H = _hessian(X, band, box / delta, s, ridge)
        try:
            p = -np.linalg.solve(H, grad)
        except np.linalg.LinAlgError:
            break
        if not np.all(np.isfinite(p)):  # C ||x||^2 beyond float64
            break
        e = y * rows_dot(X, p, s)
        t = _line_search(w, p, slack, e, box, delta, ridge)
        moved = w + t * p
        if not np.any(moved != w):
            break
        w = moved
        after = 1.0 - y * rows_dot(X, w, s)
        if t * float(np.linalg.norm(p)) <= SMOOTH_STEP_RTOL * max(1.0, float(np.linalg.norm(w))):
            slack = after
            break  # the rest is round-off
        if ((t == 1.0 or abs(t - 1.0) <= 1e-12)
                and np.array_equal(after <= 0.0, slack <= 0.0)
                and np.array_equal(after >= delta, slack >= delta)):
            slack = after
            break  # the pieces stayed: the level's minimiser
        slack = after
    return w, slack, work


def smoothed_path(X: Any, y: np.ndarray, box: np.ndarray, s: float, max_free: int,
                  budget: float, free_bias: bool = False) -> tuple[np.ndarray | None, float]:
    """The path (module docstring) from ``w~ = 0`` until at most ``max_free`` alphas are
    free, after :data:`SMOOTH_LEVELS` levels, or when its counted work would exceed
    ``budget``. ``free_bias``: SVC's problem, the bias ``b = s w~_d`` not regularised (no
    ``1/2 w~_d^2``; then ``y . alpha = 0`` at each level's minimiser). Returns ``(alpha,
    work)``: ``alpha`` in the hinge's box (``0 <= alpha <= C_i``) at the last level's
    ``delta``, or None where ``C ||x||^2`` overflows float64."""
    ridge = np.ones(X.shape[1] + 1)
    if free_bias:
        ridge[-1] = 0.0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        alpha, work = _levels(X, y, box, s, max_free, budget, ridge)
    return (alpha if np.all(np.isfinite(alpha)) else None), work


def _levels(X: Any, y: np.ndarray, box: np.ndarray, s: float, max_free: int,
            budget: float, ridge: np.ndarray) -> tuple[np.ndarray, float]:
    """The loop of :func:`smoothed_path`."""
    w = np.zeros(X.shape[1] + 1)
    delta, work = SMOOTH_FIRST_DELTA, 0.0
    alpha = np.zeros_like(box)
    for _ in range(SMOOTH_LEVELS):
        w, slack, spent = _level(X, y, box, s, w, delta, budget - work, ridge)
        work += spent
        alpha = box * np.clip(slack / delta, 0.0, 1.0)
        free = int(np.count_nonzero((alpha > 0.0) & (alpha < box)))
        if free <= max_free or spent == 0.0:
            break
        delta /= SMOOTH_SHRINK
    return alpha, work


def path_applies(X: Any) -> bool:
    """Whether the path runs on ``X``: fewer than ``DCD_SMOOTH_MAX_FEATURES`` features (its
    Hessian is ``(d + 1)``-square)."""
    return X.shape[1] < DCD_SMOOTH_MAX_FEATURES


def path_finish(X: Any, y: np.ndarray, box: np.ndarray, tol: float, scaling: float | None,
                start: Callable[[np.ndarray], np.ndarray] | None = None
                ) -> tuple[np.ndarray | None, np.ndarray | None, int]:
    """The path (with the work of ``DCD_SMOOTH_PASSES`` passes, to at most ``DCD_SMOOTH_FREE (d
    + 1)`` free alphas) handed to the exact finish
    (:func:`~maxmargin.algorithms.dcd.finish.feature_finish`, when its arrays :func:`fits`;
    budget ``DCD_HINGE_FINISH_BUDGET`` times the larger of the path's work and the finish's
    estimate). ``scaling``: LIBLINEAR's bias column ``s``, or None for SVC's problem (the
    path with a free bias, ``s = 1``); ``start`` maps the path's alpha to the finish's start.
    Returns ``(alpha, finished, free)``: the path's alpha (None where ``C ||x||^2`` overflows
    float64), the finish's answer (None when not tried or not found) and the free alphas it
    started from."""
    n, d = X.shape
    nnz = X.nnz if hasattr(X, "indptr") else X.size
    alpha, work = smoothed_path(X, y, box, 1.0 if scaling is None else scaling,
                                DCD_SMOOTH_FREE * (d + 1),
                                DCD_SMOOTH_PASSES * passes_work(n, nnz, n),
                                free_bias=scaling is None)
    if alpha is None:
        return None, None, 0
    if start is not None:
        alpha = start(alpha)
    free = int(np.count_nonzero((alpha > 0.0) & (alpha < box)))
    if not fits(X, free):
        return alpha, None, free
    budget = DCD_HINGE_FINISH_BUDGET * max(work, finish_work(free, d, nnz, n))
    return alpha, feature_finish(X, y, alpha, box, DCD_FINISH_KKT * tol, budget,
                                 scaling=scaling), free
