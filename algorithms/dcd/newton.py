"""The squared hinge's primal, ``min 1/2 ||w~||^2 + sum_i C_i (1 - y_i w~ . x~_i)_+^2``, by the
finite Newton method (Keerthi and DeCoste 2005): generalised Newton directions by conjugate
gradients, each Hessian product O(nnz), and an exact line search on the piecewise quadratic.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from maxmargin.algorithms.dcd.loop import dual_weights, duality_gap
from maxmargin.certificate import rows_dot

__all__ = ["exact_line_search", "newton_step", "primal_newton", "slope_root"]


def newton_step(X: Any, y: np.ndarray, s: float, w: np.ndarray, grad: np.ndarray,
                curv: np.ndarray, forcing: float) -> np.ndarray:
    """The Newton direction ``d`` of the squared hinge: ``(I + X~^T diag(curv) X~) d =
    -grad`` (``curv_i = 2 C_i`` on the samples below the margin, else 0) by conjugate
    gradients to ``||r|| <= forcing ||grad||``, each product O(nnz)."""

    def hess(v: np.ndarray) -> np.ndarray:
        return v + dual_weights(X, np.ones_like(y), curv * rows_dot(X, v, s), s)

    d = np.zeros_like(w)
    r = -grad
    p, rr = r.copy(), float(r @ r)
    stop = (forcing * math.sqrt(rr)) ** 2
    for _ in range(w.shape[0]):
        if rr <= stop:
            break
        Hp = hess(p)
        step = rr / float(p @ Hp)
        d += step * p
        r -= step * Hp
        rr, rr_old = float(r @ r), rr
        p = r + (rr / rr_old) * p
    return d


def exact_line_search(w: np.ndarray, d: np.ndarray, margins: np.ndarray, delta: np.ndarray,
                      box: np.ndarray) -> float:
    """The ``t`` minimising ``phi(t) = 1/2 ||w + t d||^2 + sum_i C_i (1 - m_i - t delta_i)_+^2``
    (convex, piecewise quadratic): the root of its increasing piecewise-linear derivative
    by Newton's steps safeguarded by bisection of a bracket."""
    wd, dd = float(w @ d), float(d @ d)
    slack, c = 1.0 - margins, 2.0 * box * delta
    cd = c * delta

    def slope(t: float) -> tuple[float, float]:
        below = slack - t * delta  # 1 - m_i - t delta_i, positive below the margin
        return wd + t * dd - float(c @ np.maximum(below, 0.0)), dd + float(cd @ (below > 0.0))

    return slope_root(slope)


def slope_root(slope: Callable[[float], tuple[float, float]]) -> float:
    """The root ``t >= 0`` of an increasing piecewise-linear slope (``slope(t)`` gives its
    value and rate at ``t``, negative at 0): Newton's steps from ``t = 1`` safeguarded by
    bisection of a bracket (an exact line search on a convex piecewise quadratic)."""
    lo, hi, t = 0.0, math.inf, 1.0
    for _ in range(100):
        value, curvature = slope(t)
        if value == 0.0:
            return t
        lo, hi = (t, hi) if value < 0 else (lo, t)
        new = t - value / curvature
        if not lo < new < hi:
            new = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * t
        if abs(new - t) <= 1e-15 * max(1.0, t):
            return new
        t = new
    return t


def primal_newton(X: Any, y: np.ndarray, box: np.ndarray, s: float, tol: float,
                  max_iter: int) -> tuple[np.ndarray, np.ndarray, int, list[tuple]]:
    """The squared hinge's primal by the finite Newton method (Keerthi and DeCoste 2005;
    LIBLINEAR's ``-s 2`` uses trust-region Newton): from ``w~ = 0``, the generalised Newton
    direction on the samples below the margin (:func:`newton_step`) and an exact line search
    (:func:`exact_line_search`), until the duality gap at the KKT map ``alpha = 2 C (1 -
    m)_+`` is at most ``tol``. Returns ``(w~, alpha, steps, trace)``."""
    with np.errstate(over="ignore", invalid="ignore"):  # C ||x||^2 beyond float64: inf
        return _newton_steps(X, y, box, s, tol, max_iter)


def _newton_steps(X: Any, y: np.ndarray, box: np.ndarray, s: float, tol: float,
                  max_iter: int) -> tuple[np.ndarray, np.ndarray, int, list[tuple]]:
    """The loop of :func:`primal_newton`."""
    w = np.zeros(X.shape[1] + 1)
    trace: list[tuple] = []
    steps = 0
    while True:
        margins = y * rows_dot(X, w, s)
        alpha = 2.0 * box * np.maximum(0.0, 1.0 - margins)
        u = dual_weights(X, y, alpha, s)
        gap = duality_gap(X, y, alpha, w, s, box, True, u)
        trace.append((steps, math.nan, gap))
        if gap <= tol or steps >= max_iter or not math.isfinite(gap):
            return w, alpha, steps, trace
        curv = np.where(margins < 1.0, 2.0 * box, 0.0)
        d = newton_step(X, y, s, w, w - u, curv, min(0.1, math.sqrt(max(gap, 0.0))))
        w = w + exact_line_search(w, d, margins, y * rows_dot(X, d, s), box) * d
        steps += 1
