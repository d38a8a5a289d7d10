"""Dual coordinate descent for LIBLINEAR's linear SVM (Hsieh et al., ICML 2008).

The problem (``LinearSVC``'s, LIBLINEAR's ``-s 3`` hinge and ``-s 1`` squared hinge) is over
the rows ``x~_i = (x_i, s)``, ``s = intercept_scaling`` (the bias weight regularised like the
others; ``x~_i = x_i`` without an intercept):

.. math::

    \\min_{\\tilde w} \\tfrac12 \\|\\tilde w\\|^2
        + \\sum_i C_i \\,\\ell(y_i \\tilde w \\cdot \\tilde x_i),
    \\qquad
    \\min_{\\alpha} \\tfrac12 \\alpha^T \\bar Q \\alpha - e^T \\alpha,
    \\quad 0 \\le \\alpha_i \\le U_i,

with ``Q~_ij = y_i y_j x~_i . x~_j + D_ii [i = j]``: hinge ``D_ii = 0``, ``U_i = C_i``; squared
hinge ``D_ii = 1 / (2 C_i)``, ``U_i = inf``. Keeping ``w~ = sum_i alpha_i y_i x~_i``, the
coordinate step on ``alpha_i`` costs the non-zeros of one row:

.. math::

    G = y_i \\tilde w \\cdot \\tilde x_i - 1 + D_{ii} \\alpha_i, \\qquad
    \\alpha_i \\leftarrow \\min(\\max(\\alpha_i - G / \\bar Q_{ii}, 0), U_i), \\qquad
    \\tilde w \\leftarrow \\tilde w + (\\alpha_i^{new} - \\alpha_i^{old}) y_i \\tilde x_i .

Each pass visits the active samples in a random order (a permutation drawn from a generator
seeded by ``random_state``); samples whose projected gradient ``PG`` lies beyond the previous
pass's ``[PGmin, PGmax]`` at a bound are shrunk (set aside), and the pass loop stops when
``PGmax - PGmin <= eps`` over all samples (LIBLINEAR's rule). Then ``w~`` is recomputed from
``alpha`` (the kept one drifts) and the duality gap ``(P(w~) - D(alpha)) / |P|`` is evaluated
in O(nnz); if it exceeds ``tol``, ``eps`` is divided by ``DCD_PG_SHRINK`` and the passes go
on. The gap is also checked after ``DCD_FIRST_CHECK`` passes and at each doubling of the
passes, so that a rule slower than the gap costs at most twice the passes the gap needed.
The answer is judged by :func:`~maxmargin.certificate.certify_liblinear`: ``"optimal"`` only
when its relative gap is at most ``tol``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from maxmargin._jit import njit
from maxmargin._validation import check_positive_int
from maxmargin.certificate import TINY, rows_dot, rows_tdot
from maxmargin.kernels.base import row_norms2
from maxmargin.tolerances import DCD_PG_SKIP

__all__ = ["Coordinates", "dcd_loop", "dual_weights", "duality_gap", "next_random",
           "row_layout", "seed_state", "CONVERGED", "MAX_ITER"]

#: Loop outcomes.
CONVERGED, MAX_ITER = 0, 1


@njit
def next_random(rng: np.ndarray) -> np.uint64:
    """SplitMix64: the next 64 random bits of the state ``rng[0]``."""
    rng[0] += np.uint64(0x9E3779B97F4A7C15)
    z = rng[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit
def shuffle(order: np.ndarray, active: int, rng: np.ndarray) -> None:
    """Fisher-Yates on ``order[:active]``."""
    for k in range(active - 1):
        j = k + np.int64(next_random(rng) % np.uint64(active - k))
        order[k], order[j] = order[j], order[k]


@njit
def row_dot(X: Any, indptr: Any, indices: Any, data: Any, s: float, i: int,
            w: np.ndarray) -> float:
    """``x~_i . w`` (``w[-1]`` the bias weight, ``s = 0`` without an intercept): the dense row
    ``X[i]`` when ``indptr`` is None, else the CSR row (``X`` None). Numba resolves a test
    ``arg is None`` from the type of an argument that is None before compiling; the two tests
    are written so that each layout's specialisation compiles its own loop alone."""
    d = w.shape[0] - 1
    total = s * w[d]
    if indptr is None:
        if X is not None:
            for j in range(d):
                total += X[i, j] * w[j]
    else:
        for k in range(indptr[i], indptr[i + 1]):
            total += data[k] * w[indices[k]]
    return total


@njit
def row_axpy(X: Any, indptr: Any, indices: Any, data: Any, s: float, i: int, step: float,
             w: np.ndarray) -> None:
    """``w += step * x~_i`` (rows as :func:`row_dot`)."""
    d = w.shape[0] - 1
    w[d] += step * s
    if indptr is None:
        if X is not None:
            for j in range(d):
                w[j] += step * X[i, j]
    else:
        for k in range(indptr[i], indptr[i + 1]):
            w[indices[k]] += step * data[k]


@njit
def dcd_loop(rows: tuple, y: np.ndarray, upper: np.ndarray, diag: np.ndarray, QD: np.ndarray,
             alpha: np.ndarray, w: np.ndarray, order: np.ndarray, rng: np.ndarray,
             shrunk: np.ndarray, eps: float, max_passes: int, shrinking: bool,
             offset: float = 0.0) -> tuple:
    """LIBLINEAR's ``solve_l2r_l1l2_svc`` passes (module docstring), on the margins
    ``y_i (w~ . x~_i + offset)`` (a fixed unregularised bias; 0 for LIBLINEAR), until
    ``PGmax - PGmin <= eps`` over all samples or ``max_passes``. ``alpha``, ``w``, ``order``,
    ``rng`` and the shrinking state ``shrunk = (active, PGmax_old, PGmin_old, visits)`` are
    updated in place (a later call goes on where this one stopped; ``visits`` adds up the
    samples active at the start of each pass). Returns ``(passes, CONVERGED or
    MAX_ITER)``."""
    n = y.shape[0]
    X, indptr, indices, data, s_col = rows
    active, pg_max_old, pg_min_old = int(shrunk[0]), shrunk[1], shrunk[2]
    passes, converged = 0, False
    while passes < max_passes and not converged:
        pg_max, pg_min = -math.inf, math.inf
        shrunk[3] += active
        shuffle(order, active, rng)
        s = 0
        while s < active:
            i = order[s]
            G = y[i] * (row_dot(X, indptr, indices, data, s_col, i, w) + offset) - 1.0 + (
                diag[i] * alpha[i])
            if alpha[i] == 0.0:
                if shrinking and G > pg_max_old:  # stays at 0: set aside
                    active -= 1
                    order[s], order[active] = order[active], order[s]
                    continue
                PG = min(G, 0.0)
            elif alpha[i] == upper[i]:
                if shrinking and G < pg_min_old:  # stays at U: set aside
                    active -= 1
                    order[s], order[active] = order[active], order[s]
                    continue
                PG = max(G, 0.0)
            else:
                PG = G
            pg_max = max(pg_max, PG)
            pg_min = min(pg_min, PG)
            if abs(PG) > DCD_PG_SKIP:
                old = alpha[i]
                alpha[i] = min(max(old - G / QD[i], 0.0), upper[i])
                row_axpy(X, indptr, indices, data, s_col, i, (alpha[i] - old) * y[i], w)
            s += 1
        passes += 1
        if pg_max - pg_min <= eps:
            converged = active == n
            active = n  # check the set-aside samples too, from scratch
            pg_max_old, pg_min_old = math.inf, -math.inf
            continue
        pg_max_old = pg_max if pg_max > 0.0 else math.inf
        pg_min_old = pg_min if pg_min < 0.0 else -math.inf
    shrunk[0], shrunk[1], shrunk[2] = active, pg_max_old, pg_min_old
    return passes, CONVERGED if converged else MAX_ITER

def dual_weights(X: Any, y: np.ndarray, alpha: np.ndarray, s: float) -> np.ndarray:
    """``w~ = sum_i alpha_i y_i x~_i`` in float64, O(nnz) (bias weight last; 0 when ``s``
    is 0)."""
    return rows_tdot(X, alpha * y, s)


def duality_gap(X: Any, y: np.ndarray, alpha: np.ndarray, w: np.ndarray, s: float,
                box: np.ndarray, squared: bool, u: np.ndarray | None = None) -> float:
    """``(P(w~) - D(alpha)) / max(|P|, tiny)`` with ``D(alpha) = sum alpha - 1/2 ||u||^2
    - sum alpha_i^2 / (4 C_i)`` (squared hinge), ``u = sum_i alpha_i y_i x~_i`` (``w~`` when
    not given), O(nnz)."""
    margins = y * rows_dot(X, w, s)
    slack = np.maximum(0.0, 1.0 - margins)
    ww = float(w @ w)
    uu = ww if u is None else float(u @ u)
    if squared:
        primal = 0.5 * ww + float(box @ (slack * slack))
        dual = float(alpha.sum()) - 0.5 * uu - float(alpha @ (alpha / (4.0 * box)))
    else:
        primal = 0.5 * ww + float(box @ slack)
        dual = float(alpha.sum()) - 0.5 * uu
    return (primal - dual) / max(abs(primal), TINY)

@dataclass
class Coordinates:
    """The state of the coordinate descent on one problem: the rows (``(X, None, None, None,
    s)`` dense, ``(None, indptr, indices, data, s)`` CSR: :func:`row_dot`), the box ``upper``,
    ``diag = D_ii``, ``QD = Q~_ii``, ``alpha``, ``w`` (``w~``, bias weight last), the visiting
    ``order``, the generator ``rng`` and the shrinking state ``shrunk`` (:func:`dcd_loop`)."""

    X: Any
    y: np.ndarray
    s: float
    rows: tuple
    upper: np.ndarray
    diag: np.ndarray
    QD: np.ndarray
    alpha: np.ndarray
    w: np.ndarray
    order: np.ndarray
    rng: np.ndarray
    shrunk: np.ndarray
    shrinking: bool

    @classmethod
    def start(cls, X: Any, y: np.ndarray, box: np.ndarray, squared: bool, s: float,
              rng: np.ndarray, shrinking: bool) -> Coordinates:
        """``alpha = 0``, ``w~ = 0`` on validated rows (CSR or C-contiguous float64)."""
        n, d = X.shape
        diag = 0.5 / box if squared else np.zeros(n)
        rows, norms = row_layout(X, s)
        QD = diag + norms + s * s
        QD[QD <= 0.0] = TINY  # hinge, a zero row without intercept: one step puts it on C_i
        return cls(X, y, s, rows, np.full(n, math.inf) if squared else box, diag, QD,
                   np.zeros(n), np.zeros(d + 1), np.arange(n, dtype=np.int64), rng,
                   np.array([n, math.inf, -math.inf, 0.0]), shrinking)

    def passes(self, eps: float, budget: int, offset: float = 0.0) -> tuple[int, int]:
        """:func:`dcd_loop` for at most ``budget`` passes, then ``w~`` recomputed from
        ``alpha`` (the kept one drifts). Returns ``(passes, code)``."""
        done, code = dcd_loop(self.rows, self.y, self.upper, self.diag, self.QD, self.alpha,
                              self.w, self.order, self.rng, self.shrunk, eps, budget,
                              self.shrinking, offset)
        self.w[:] = dual_weights(self.X, self.y, self.alpha, self.s)
        return done, code

    def restart(self, alpha: np.ndarray) -> None:
        """Go on from ``alpha`` (in the box): ``w~`` recomputed, every sample active."""
        self.alpha[:] = alpha
        self.w[:] = dual_weights(self.X, self.y, self.alpha, self.s)
        self.unshrink()

    def unshrink(self) -> None:
        """Every sample active again (the problem changed)."""
        self.shrunk[:3] = (self.y.shape[0], math.inf, -math.inf)

    @property
    def visits(self) -> float:
        """The samples visited so far, over all passes (each a row's non-zeros of work)."""
        return float(self.shrunk[3])


def row_layout(X: Any, s: float) -> tuple[tuple, np.ndarray]:
    """``(rows, ||x_i||^2)``: the rows as the compiled loops take them (``(X, None, None,
    None, s)`` dense, ``(None, indptr, indices, data, s)`` CSR: :func:`row_dot`) and their
    squared norms (without the bias column)."""
    rows = (None, X.indptr, X.indices, X.data, s) if hasattr(X, "tocsr") else (
        X, None, None, None, s)
    return rows, row_norms2(X)


def seed_state(random_state: Any) -> np.ndarray:
    """The SplitMix64 state drawn from ``np.random.default_rng(random_state)`` (an int >= 0
    or a ``numpy.random.Generator``)."""
    if not isinstance(random_state, np.random.Generator):
        random_state = check_positive_int(random_state, "random_state", minimum=0)
    rng = np.random.default_rng(random_state)
    return np.array([rng.integers(0, 2**63 - 1, dtype=np.int64)], dtype=np.uint64)
