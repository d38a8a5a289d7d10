r"""The oracles' own finish of an interior-point alpha: dense KKT solves on its active set.

The SVM dual in the notation of this module:

.. math::

    \min_a \tfrac12 a^T Q a - 1^T a \quad \text{s.t.} \quad y^T a = 0, \; 0 \le a \le U,
    \qquad Q_{ij} = y_i y_j K_{ij}, \quad G = Q a - 1,

with KKT multipliers ``r_i = G_i + b y_i = y_i (g_i + b) - 1`` (``g = K (a * y)``): ``r_i = 0``
on the free set ``F``, ``r_i >= 0`` at ``a_i = 0`` and ``r_i <= 0`` at ``a_i = U_i``.

This is reference code, written from the formulas above for clarity and kept apart from the
algorithms on purpose (no import of :mod:`maxmargin.algorithms`): a defect in a shared finish
would move the oracle and the candidate together. Every face is solved densely by the
null-space method through a symmetric eigendecomposition (:func:`scipy.linalg.eigh`, or the
thin SVD of a factor), which covers the singular faces of low-rank Gram matrices with the same
code as the regular ones.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.linalg

from maxmargin._threads import blas_threads

__all__ = ["active_set_polish", "balance", "kkt_intercept", "EIG_CUTOFFS"]

#: Relative eigenvalue cutoffs of the face solves, tried in turn by the caller: eigenvalues of
#: a face's reduced Hessian below ``cutoff`` times the largest (or ``max Q_ii``) count as zero.
EIG_CUTOFFS = (1e-12, 1e-15)
#: The part of a face's right-hand side in its reduced Hessian's null space is a direction of
#: zero curvature when it is above this fraction of the right-hand side (and of ``1 + max
#: |G_F|``, the gradient's scale), round-off below.
NULL_RTOL = 1e-10
#: Newton steps on one face before its multipliers are read (the first step, then refinement
#: from the recomputed gradient).
FACE_STEPS = 3


def kkt_intercept(
    alpha: np.ndarray, y: np.ndarray, g: np.ndarray, upper: np.ndarray,
    free: np.ndarray | None = None,
) -> tuple[float, tuple[float, float]]:
    """``b`` from the KKT conditions: ``y_i (g_i + b) = 1`` on free alphas, ``>= 1`` at 0,
    ``<= 1`` at ``U_i``.

    With ``t_i = y_i - g_i``: the mean of ``t`` over the free alphas (interval ``(b, b)``);
    without free alphas the bounds say ``b >= t_i`` (``y_i = +1`` at 0, ``y_i = -1`` at U) and
    ``b <= t_i`` (the other two), and ``b`` is the midpoint of ``[lo, hi]`` (its finite end
    when one side is open; ``(lo + hi) / 2`` even when ``lo > hi``, the least violating b).
    ``free``: the free set when the caller keeps one (default ``0 < alpha_i < U_i``).
    """
    t = y - g
    if free is None:
        free = (alpha > 0.0) & (alpha < upper)
    if np.any(free):
        b = float(np.mean(t[free]))
        return b, (b, b)
    at0, atU = alpha <= 0.0, alpha >= upper
    below = ((y > 0) & at0) | ((y < 0) & atU)  # b >= t_i
    above = ((y < 0) & at0) | ((y > 0) & atU)  # b <= t_i
    lo = float(np.max(t[below])) if np.any(below) else -math.inf
    hi = float(np.min(t[above])) if np.any(above) else math.inf
    if math.isfinite(lo) and math.isfinite(hi):
        b = 0.5 * (lo + hi)
    elif math.isfinite(lo) or math.isfinite(hi):
        b = lo if math.isfinite(lo) else hi
    else:
        b = 0.0
    return b, (lo, hi)


def balance(alpha: np.ndarray, y: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """The nearest alpha (Euclidean) with ``y^T a = 0`` that moves only free alphas inside the
    box, ``a_i(lam) = clip(a_i - lam y_i, 0, U_i)`` for ``i`` free (``y^T a(lam)`` falls as
    ``lam`` grows: ``lam`` by bisection to the last bit); all alphas move when the free ones
    cannot absorb ``y^T a`` (to ``1e-15 sum(a)``). Non-finite input is returned as is."""
    a = np.array(alpha, dtype=np.float64, copy=True)
    if not np.all(np.isfinite(a)) or a.size == 0:
        return a
    for movable in ((a > 0.0) & (a < upper), np.ones(a.size, dtype=bool)):
        delta = float(y @ a)
        if abs(delta) <= 1e-15 * float(a.sum()) or not np.any(movable):
            continue  # zero to round-off (relative: alphas of any scale)
        idx = np.flatnonzero(movable)
        base, yi, ui = a[idx], y[idx], upper[idx]
        rest = delta - float(yi @ base)

        def residual(lam: float, base=base, yi=yi, ui=ui, rest=rest) -> float:
            return rest + float(yi @ np.clip(base - lam * yi, 0.0, ui))

        span = np.max(np.where(np.isfinite(ui), ui, 0.0), initial=0.0) + np.max(base) + abs(delta)
        lo, hi = -span, span
        if residual(lo) < 0.0 or residual(hi) > 0.0:
            continue  # the zero is not reachable by these alphas
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if mid in (lo, hi):
                break
            if residual(mid) > 0.0:
                lo = mid
            else:
                hi = mid
        lam = lo if abs(residual(lo)) <= abs(residual(hi)) else hi
        a[idx] = np.clip(base - lam * yi, 0.0, ui)
    return a


class _Problem:
    """``Q`` on demand: from a dense Gram matrix ``K`` or (linear kernel) the points ``X``.

    A Gram matrix of low numerical rank (``r <= n / 2`` eigenvalues above ``cutoff`` times the
    largest) is also factored once, ``K ~ L L^T`` with ``L = V_r sqrt(Lambda_r)``: the faces
    are then solved through ``L`` as through the points of a linear kernel (``O(m r^2)`` a
    face, where a dense face costs ``O(m^3)``), while ``g`` and curvatures keep the exact
    ``K`` (the truncated factor only chooses the steps).
    """

    def __init__(self, y: np.ndarray, K: np.ndarray | None, X: np.ndarray | None,
                 cutoff: float) -> None:
        self.y, self.K, self.X = y, K, X
        self.work = 0.0  # floating-point operations so far (a deterministic budget)
        self.factor = X
        if K is not None:
            n = K.shape[0]
            lam, V = scipy.linalg.eigh(K)
            self.work += 10.0 * n**3
            keep = lam > cutoff * float(np.max(np.abs(lam), initial=0.0))
            if 2 * int(np.count_nonzero(keep)) <= n:
                self.factor = V[:, keep] * np.sqrt(lam[keep])

    def g(self, a: np.ndarray) -> np.ndarray:
        """``g = K (a * y)`` from the nonzero alphas."""
        sv = np.flatnonzero(a)
        v = a[sv] * self.y[sv]
        if self.X is not None:
            self.work += 2.0 * (self.X.shape[0] + sv.size) * self.X.shape[1]
            return self.X @ (self.X[sv].T @ v)
        self.work += 2.0 * self.K.shape[0] * sv.size
        return self.K[:, sv] @ v

    def q_times(self, F: np.ndarray, u: np.ndarray) -> np.ndarray:
        """``Q_FF u``."""
        yu = self.y[F] * u
        if self.X is not None:
            return self.y[F] * (self.X[F] @ (self.X[F].T @ yu))
        return self.y[F] * (self.K[np.ix_(F, F)] @ yu)

    def diagonal_max(self, F: np.ndarray) -> float:
        """``max_{i in F} Q_ii = max K_ii``."""
        if self.K is not None:
            return float(np.max(np.diagonal(self.K)[F]))
        return float(np.max(np.einsum("ij,ij->i", self.X[F], self.X[F])))

    def reduced_hessian(self, F: np.ndarray, N: _Complement) -> tuple[np.ndarray, np.ndarray]:
        """``(lam, U)``: eigenvalues and orthonormal eigenvectors of ``N^T Q_FF N`` (``N`` a basis
        of ``y_F^T v = 0``), its range at least (the rest is its null space).

        Gram matrix: ``eigh`` of the ``(m - 1) x (m - 1)`` matrix. Linear kernel (or a low-rank
        factor ``L`` of ``K``, rows ``l_i`` in place of ``x_i``): ``Q_FF = Z Z^T`` with
        ``Z = y_F x_F``, and the thin SVD ``N^T Z = U s V^T`` gives ``lam = s^2``.
        """
        m, yF = F.size, self.y[F]
        if self.factor is None:
            QFF = (yF[:, None] * self.K[np.ix_(F, F)]) * yF[None, :]
            A = N.transpose(N.transpose(QFF).T)  # N^T Q N (Q symmetric)
            self.work += 10.0 * m**3
            return scipy.linalg.eigh(0.5 * (A + A.T))
        W = N.transpose(yF[:, None] * self.factor[F])
        U, sv, _ = scipy.linalg.svd(W, full_matrices=False)
        self.work += 4.0 * m * self.factor.shape[1] ** 2
        return sv * sv, U


class _Complement:
    """An orthonormal basis ``N`` (``m x (m - 1)``) of ``{v : y_F^T v = 0}``: the last ``m - 1``
    columns of the Householder reflection ``H = I - 2 h h^T / h^T h`` that maps ``y_F /
    sqrt(m)`` onto a multiple of ``e_1`` (``h = y_F / sqrt(m) + sign(y_1) e_1``)."""

    def __init__(self, yF: np.ndarray) -> None:
        h = yF / math.sqrt(yF.size)
        h[0] += math.copysign(1.0, h[0])
        self.h, self.hh = h, float(h @ h)

    def _reflect(self, V: np.ndarray) -> np.ndarray:
        return V - np.multiply.outer(self.h, (2.0 / self.hh) * (self.h @ V))

    def transpose(self, V: np.ndarray) -> np.ndarray:
        """``N^T V`` (a vector or the columns of a matrix)."""
        return self._reflect(V)[1:]

    def apply(self, z: np.ndarray) -> np.ndarray:
        """``N z``."""
        return self._reflect(np.concatenate([[0.0], z]))


def _face_direction(
    problem: _Problem, F: np.ndarray, G: np.ndarray, delta: float, cutoff: float,
    feasible_tol: float,
) -> tuple[np.ndarray, float]:
    """The step on face ``F`` and how far it may go: ``(d, t_limit)``, by the null-space method.

    The subproblem is ``min_d 1/2 d^T Q_FF d + G_F^T d`` s.t. ``y_F^T d = -delta`` (``delta =
    y^T a``). ``d0 = -delta y_F / m`` meets the constraint exactly; with ``N`` a basis of
    ``y_F^T v = 0`` (:class:`_Complement`), ``d = d0 + N z`` and

    .. math::

        (N^T Q_{FF} N) z = -N^T (G_F + Q_{FF} d_0) =: r,

    solved through the eigendecomposition of ``N^T Q_FF N`` (:meth:`_Problem.reduced_hessian`),
    eigenvalues below ``cutoff`` times the largest (or ``max_F Q_ii`` if larger) dropped
    (least squares, least norm): the Newton step, ``t_limit = 1``. If ``r`` has a part ``r_0``
    in the dropped null space (above :data:`NULL_RTOL` of ``r`` and of ``1 + max |G_F|``),
    ``u = N r_0`` has zero curvature and ``G_F^T u = -||r_0||^2 < 0``: the objective falls
    along it; then (once ``|delta| <= feasible_tol``) ``(u, t_limit)`` with ``t_limit =
    -G_F^T u / u^T Q_FF u``, the line minimum (``inf`` when the curvature is zero to the
    cutoff: followed to the first bound).
    """
    m, yF = F.size, problem.y[F]
    d0 = -delta * yF / m
    if m == 1:
        return d0, 1.0
    N = _Complement(yF)
    GF = G[F] + problem.q_times(F, d0)
    r = -N.transpose(GF)
    lam, U = problem.reduced_hessian(F, N)
    # the cutoff's scale: the largest eigenvalue, or the largest Q_ii when that is round-off
    lam_max = max(float(np.max(np.abs(lam), initial=0.0)), problem.diagonal_max(F))
    keep = np.abs(lam) > cutoff * lam_max
    coef = U[:, keep].T @ r
    z = U[:, keep] @ (coef / lam[keep])
    r0 = r - U[:, keep] @ coef
    norm_r0 = float(np.linalg.norm(r0))
    # (relative to the gradient's own scale too: after a Newton step r itself is round-off)
    if norm_r0 > NULL_RTOL * max(float(np.linalg.norm(r)), 1.0 + float(np.max(np.abs(GF)))):
        if abs(delta) > feasible_tol:
            return d0, 1.0  # feasibility first: the direction is followed from y^T a = 0
        u = N.apply(r0)
        curvature = float(u @ problem.q_times(F, u))
        flat = curvature <= cutoff * lam_max * float(u @ u)  # zero to the cutoff
        return u, (math.inf if flat else norm_r0 * norm_r0 / curvature)
    return d0 + N.apply(z), 1.0


def _ratio_test(a: np.ndarray, F: np.ndarray, d: np.ndarray, upper: np.ndarray,
                t_max: float) -> tuple[float, int | None]:
    """The longest ``t <= t_max`` keeping ``a_F + t d`` in the box, and the blocking index."""
    aF, uF = a[F], upper[F]
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(d < 0.0, aF / -d, np.where(d > 0.0, (uF - aF) / d, math.inf))
    k = int(np.argmin(room)) if F.size else 0
    if F.size == 0 or not room[k] < t_max:
        return t_max, None
    t, block = float(room[k]), int(F[k])
    return max(t, 0.0), block


def _to_release(a: np.ndarray, y: np.ndarray, g: np.ndarray, upper: np.ndarray,
                wrong: np.ndarray, free: np.ndarray, held: np.ndarray,
                kkt_tol: float) -> list[int] | None:
    """The bound alphas to free at a stationary point (None: it is optimal to ``kkt_tol``).

    With free alphas, ``b`` is fixed by them and one alpha can move against them: the one whose
    multiplier is wrong by most. At a vertex (no free alpha) ``b`` is only bounded and
    ``y^T a = 0`` moves alphas in pairs: LIBSVM's maximal violating pair, ``i`` maximising
    ``t = y - g`` over ``I_up = {a < U, y = +1} U {a > 0, y = -1}`` and ``j`` minimising it over
    ``I_low = {a < U, y = -1} U {a > 0, y = +1}``, when ``t_i - t_j > 2 kkt_tol``. Alphas
    ``held`` (fixed by a step of length zero) are not freed.
    """
    if np.any(free):
        candidates = np.where(free | held, 0.0, wrong)
        k = int(np.argmax(candidates))
        return [k] if candidates[k] > kkt_tol else None
    t = y - g
    up = ~held & (((a < upper) & (y > 0)) | ((a > 0) & (y < 0)))
    low = ~held & (((a < upper) & (y < 0)) | ((a > 0) & (y > 0)))
    if not (np.any(up) and np.any(low)):
        return None
    i = int(np.argmax(np.where(up, t, -math.inf)))
    j = int(np.argmin(np.where(low, t, math.inf)))
    return [i, j] if t[i] - t[j] > 2.0 * kkt_tol else None


def _one_blas_thread(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` run with one BLAS thread (:func:`maxmargin._threads.blas_threads`): the
    polish's decompositions are small or medium, and on a machine whose cores are all busy more
    BLAS threads only make them slower (see the oracles' page of the documentation)."""

    @functools.wraps(func)
    def limited(*args: Any, **kwargs: Any) -> Any:
        with blas_threads(1):
            return func(*args, **kwargs)

    return limited


@_one_blas_thread
def active_set_polish(
    alpha: np.ndarray,
    y: np.ndarray,
    upper: np.ndarray,
    *,
    K: np.ndarray | None = None,
    X: np.ndarray | None = None,
    kkt_tol: float,
    cutoff: float = EIG_CUTOFFS[0],
    max_work: float = math.inf,
) -> np.ndarray | None:
    """A primal active-set method for the dual above, started on the active set of ``alpha``.

    State: the free set ``F`` (explicit); the other alphas sit exactly on 0 or ``U_i``. On
    ``F`` the step of :func:`_face_direction` is taken as far as the box allows (a blocking
    alpha leaves ``F`` onto its bound); one step on every face, up to :data:`FACE_STEPS`
    while, from the recomputed gradient, the free multipliers ``y_i - g_i`` differ by more
    than ``kkt_tol / 4`` or ``y^T a != 0``. Then ``b`` is :func:`kkt_intercept`'s and the bound
    multipliers ``r_i`` are read: :func:`_to_release` names the alpha (or at a vertex the
    pair) that joins ``F``, one change at a time, so the objective falls at every step that
    moves (none fixed by a step of length zero is freed again before a step moves: no
    cycling on degenerate vertices); the method stops when there is none.

    ``kkt_tol`` is at least ``1e-13`` of the largest ``|y_i - g_i|`` at the start (round-off).
    ``K`` (dense Gram matrix) or ``X`` (the points of a linear kernel) gives ``Q``. Returns the
    optimal point; when the steps or the work (floating-point operations, counted, never
    timed: ``max_work``) run out, the stationary point whose multipliers were least wrong
    (the caller's certificate judges it). None when there was none, the input is not finite,
    a decomposition does not converge, or a face is unbounded (no bound blocks a descent
    direction of zero curvature).
    """
    if not all(np.all(np.isfinite(v)) for v in (alpha, K if K is not None else X)):
        return None
    try:
        problem = _Problem(y, K, X, cutoff)
    except np.linalg.LinAlgError:  # eigh did not converge: keep the solver's answer
        return None
    n = alpha.size
    a = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, upper)
    # below the round-off of the margins nothing is wrong: 1e-13 of the largest |y_i - g_i|
    kkt_tol = max(kkt_tol, 1e-13 * max(1.0, float(np.max(np.abs(y - problem.g(a)), initial=0.0))))
    free = (a > 0.0) & (a < upper)
    held = np.zeros(n, dtype=bool)  # fixed by a step of length zero: not released again yet
    best, best_violation, face_steps = None, math.inf, 0
    for _ in range(3 * n + 100):
        if problem.work > max_work:
            break
        F = np.flatnonzero(free)
        g = problem.g(a)
        delta, feasible_tol = float(y @ a), 1e-15 * float(a.sum())
        # one Newton step on every face, more while its multipliers still differ
        off_face = F.size > 0 and (face_steps == 0 or float(np.ptp((y - g)[F])) > 0.25 * kkt_tol
                                   or abs(delta) > feasible_tol)
        if off_face and face_steps < FACE_STEPS:
            try:
                d, t_limit = _face_direction(problem, F, y * g - 1.0, delta, cutoff,
                                             feasible_tol)
            except np.linalg.LinAlgError:  # eigh or the SVD did not converge
                return None
            if not np.all(np.isfinite(d)):
                return None
            t, block = _ratio_test(a, F, d, upper, t_limit)
            if block is None and math.isinf(t):
                return None  # unbounded: hard margin on meeting hulls
            a[F] = np.clip(a[F] + t * d, 0.0, upper[F])
            face_steps += 1
            if t > 0.0:
                held[:] = False
            if block is not None:
                a[block] = 0.0 if d[np.searchsorted(F, block)] < 0.0 else upper[block]
                free[block] = False
                held[block] = t == 0.0
                face_steps = 0
            continue
        b, _ = kkt_intercept(a, y, g, upper, free)
        r = y * (g + b) - 1.0
        wrong = np.where(free, 0.0, np.where(a <= 0.0, -r, r))
        # how wrong this stationary point's multipliers are: the least wrong one is kept
        violation = max(float(np.max(wrong, initial=0.0)), float(np.ptp((y - g)[F]))
                        if F.size else 0.0)
        if violation < best_violation:
            best, best_violation = a.copy(), violation
        release = _to_release(a, y, g, upper, wrong, free, held, kkt_tol)
        if release is None:
            return a.copy()
        free[release] = True
        face_steps = 0
    return best
