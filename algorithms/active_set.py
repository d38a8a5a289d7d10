r"""A primal active-set method for the SVM dual: the exact finish of an approximate alpha.

.. math::

    \min_a \tfrac12 a^T Q a - 1^T a \quad \text{s.t.} \quad y^T a = 0, \; 0 \le a \le C,
    \qquad Q_{ij} = y_i y_j K(x_i, x_j).

Started on the active set of an interior-point answer (the oracles' polish) or of an SMO or MDM
iterate that has stopped making progress (:func:`finish_alpha`), it ends in a few Newton steps
on the free set with the optimum to round-off.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from threadpoolctl import ThreadpoolController

from maxmargin.algorithms._kkt_factor import EIGH_WORK, BorderedKKT
from maxmargin.certificate import Certificate, certify_svm, decision_values
from maxmargin.kernels.formulas import KIND_LINEAR

__all__ = ["polish_alpha", "polish_tries", "balance_alpha", "kernel_rows", "finish_alpha",
           "best_multiplier", "Finished",
           "POLISH_EIG_RTOL", "POLISH_EIG_RTOL_FINE", "POLISH_KKT_RTOL", "POLISH_REFINE",
           "FINISH_MAX_FREE", "FINISH_STEPS_PER_POINT", "EIGH_WORK", "STEP_WORK"]


def balance_alpha(alpha: np.ndarray, y: np.ndarray, C: float | np.ndarray | None,
                  free_only: bool = False) -> np.ndarray:
    """Restore ``y . alpha = 0`` exactly (up to round-off) inside the box.

    Solvers meet the equality to their tolerance (``1e-10`` relative), which is visible in the
    weak-duality gap when ``sum(alpha)`` is large. With ``delta = y . alpha``, every variable
    that can reduce ``|delta|`` (``y_i delta > 0`` and ``alpha_i > 0``: decrease;
    ``y_i delta < 0`` and ``alpha_i < C``: increase) moves in proportion to its room, free ones
    first, until ``delta`` is spent; ``free_only``: the free ones only, and only when half
    their room suffices (none reaches a bound; else ``alpha`` is returned as it is).
    """
    upper = math.inf if C is None else C
    out = np.array(alpha, dtype=np.float64, copy=True)
    if not np.all(np.isfinite(out)):
        return out
    if free_only:
        free = (out > 0) & (out < upper)
        room = np.where(free, np.minimum(out, upper - out), 0.0)
        delta = float(y @ out)
        if abs(delta) > 1e-15 * float(out.sum()) and abs(delta) <= 0.5 * float(room.sum()):
            out = out - np.sign(delta) * y * (abs(delta) / float(room.sum())) * room
        return out
    for free_first in (True, False):
        delta = float(y @ out)
        if abs(delta) <= 1e-15 * float(out.sum()):  # relative: alphas of any scale (tiny C)
            break
        sign = math.copysign(1.0, delta)
        down = (y * sign > 0) & (out > 0)  # decreasing these reduces |delta|
        up = (y * sign < 0) & (out < upper)  # increasing these reduces |delta|
        if free_first:
            free = (out > 0) & (out < upper)
            down, up = down & free, up & free
        room = np.where(down, out, 0.0) + np.where(up, np.minimum(upper - out, abs(delta)), 0.0)
        total = float(room.sum())
        if total <= 0.0:
            continue
        share = min(1.0, abs(delta) / total) * room
        out = np.clip(out - np.where(down, share, 0.0) + np.where(up, share, 0.0), 0.0, upper)
    return out


#: Relative size below which an eigenvalue of the (equilibrated) KKT matrix counts as zero in
#: :func:`polish_alpha`; a null direction is one with ``Q_FF d = 0`` and ``y_F . d = 0``.
POLISH_EIG_RTOL = 1e-12
#: The cutoff of a second try (:func:`polish_alpha`'s ``eig_rtol``): about the round-off of
#: ``eigh`` itself on the small free sets a polish meets (``(m + 1)`` machine epsilons). Where
#: ``C`` is ``1e5``-``1e7`` times the Gram matrix's largest entries, eigenvalues of ``Q_FF``
#: between the two cutoffs carry ``alpha``: dropping them leaves Newton steps that never settle.
POLISH_EIG_RTOL_FINE = 1e-15
#: Newton steps of iterative refinement on one free set in :func:`polish_alpha`.
POLISH_REFINE = 2
#: :func:`polish_alpha` stops when no bound multiplier is wrong by more than this (relative to
#: ``max(1, max |gradient|)``).
POLISH_KKT_RTOL = 1e-13
#: The work of :func:`polish_alpha` is counted, not timed, so that the same input gives the same
#: bits under any load. It is in floating-point operations, estimated: the KKT solves' as
#: :mod:`~maxmargin.algorithms._kkt_factor` counts them (``EIGH_WORK (m + 1)^3`` for an
#: eigendecomposition on ``m`` free alphas), ``2 n k`` for a product with ``k`` columns of ``Q``
#: (``2 (n + k) d`` through the points of a linear kernel), ``k^2`` (``2 k^2 d``) for ``k^2``
#: entries of the Gram matrix, and ``STEP_WORK`` for a step's fixed cost (NumPy calls on small
#: arrays).
STEP_WORK = 1e5


_F = TypeVar("_F", bound=Callable[..., Any])


@functools.cache
def _blas() -> ThreadpoolController:
    """The process's thread pools, found once (a fresh search is slow next to a step)."""
    return ThreadpoolController()


def _one_blas_thread(func: _F) -> _F:
    """``func`` run with one BLAS thread: its eigendecompositions and products are small, and a
    second thread saves little on an idle machine but costs many times more on a busy one (each
    small eigendecomposition waits for the other core), so that its work budget would stand for
    very different times."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _blas().limit(limits=1, user_api="blas"):
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


@_one_blas_thread
def polish_alpha(
    alpha: np.ndarray,
    y: np.ndarray,
    C: float | np.ndarray | None,
    gram_rows: Callable[[np.ndarray], np.ndarray],
    max_iter: int | None = None,
    max_work: float | None = None,
    kkt_tol: float = 0.0,
    linear_X: np.ndarray | None = None,
    eig_rtol: float = POLISH_EIG_RTOL,
    work_done: list[float] | None = None,
) -> np.ndarray | None:
    r"""Finish an interior-point alpha by a primal active-set method started on its active set.

    The problem is ``min_a 1/2 a^T Q a - 1^T a`` s.t. ``y^T a = 0``, ``0 <= a <= C``
    (``Q_ij = y_i y_j K_ij``, gradient ``g = Q a - 1``). With the free set ``F`` and the
    bounds held fixed, each step solves the equality-constrained subproblem

    .. math::

        Q_{FF} d + y_F \lambda = -g_F, \qquad y_F^T d = 0

    (equilibrated by ``sigma = max |Q_FF|``; :class:`~maxmargin.algorithms._kkt_factor.BorderedKKT`:
    LU factors bordered by the alphas that joined or left the free set since, ``O(m^2)`` a step,
    and an eigendecomposition where the system is near singular, eigenvalues below ``eig_rtol``
    times the largest dropped). If it is consistent, ``d`` is the Newton step (of length at most
    1); if not, its least-squares residual is a direction with ``Q_FF d = 0``, ``y_F^T d = 0`` and
    ``g_F^T d < 0`` (zero curvature, descent), followed to the first bound (Gram matrices of low
    rank make these common). A blocking alpha joins its bound. At a stationary point (``d`` below
    ``1e-12 (max alpha + max |g_F| / sigma)`` and moving no entry of the gradient by more than
    the multipliers' tolerance, or after ``POLISH_REFINE`` steps of iterative refinement on this
    free set, the gradient recomputed) the bound multipliers are
    ``r_i = g_i + lambda y_i`` (``= y_i f(x_i) - 1``): optimal when ``r_i >= 0`` at 0 and
    ``r_i <= 0`` at C (within ``POLISH_KKT_RTOL``), else the worst one is released (an alpha
    whose release gave a step of length 0 is not released again until a step moves: no
    cycling). When the free set is right from the start this is one Newton step, like OSQP's
    polishing.

    ``gram_rows(idx)`` returns the rows ``K[idx, :]`` of the Gram matrix; with ``linear_X`` (the
    points of a linear kernel) products go through ``X`` instead, ``K[:, F] v = X (X_F^T v)`` and
    ``K_FF = X_F X_F^T``, never forming a row of length ``n``. Returns the polished alpha, or
    None when the method runs ``max_iter`` steps (default ``10 n + 100``), has done more than
    ``max_work`` floating-point operations (counted as :data:`STEP_WORK` says), meets more than
    :data:`FINISH_MAX_FREE` free alphas, or finds the problem unbounded (hard margin on meeting
    hulls): the caller keeps the solver's alpha. With ``kkt_tol > 0``, running out of steps or
    work returns instead the last stationary point whose multipliers were wrong by at most
    ``kkt_tol`` (then ``m - M <= 2 kkt_tol`` up to round-off), if there was one: on numerically
    flat problems the exact active set can take many more steps than a certified one.
    ``work_done``: when given, the work done is appended to it.
    """
    n = alpha.size
    upper = np.array(np.broadcast_to(math.inf if C is None else C, alpha.shape), dtype=float)
    a = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, upper)
    at0, atC = a <= 0.0, a >= upper
    d_lin = 0 if linear_X is None else linear_X.shape[1]
    work = 0.0  # floating-point operations so far (STEP_WORK)

    def q_times(idx: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``Q[:, idx] @ v``."""
        nonlocal work
        if linear_X is not None:
            work += 2.0 * (n + idx.size) * d_lin
            return y * (linear_X @ (linear_X[idx].T @ (y[idx] * v)))
        work += 2.0 * n * idx.size
        return y * (gram_rows(idx).T @ (y[idx] * v))

    def column(idx: np.ndarray, j: int) -> np.ndarray:
        """``K[idx, j]``."""
        nonlocal work
        if linear_X is not None:
            work += 2.0 * idx.size * d_lin
            return linear_X[idx] @ linear_X[j]
        work += float(idx.size)
        return gram_rows(np.array([j]))[0, idx]

    def gram_block(idx: np.ndarray) -> np.ndarray:
        """``K[idx][:, idx]``."""
        nonlocal work
        if linear_X is not None:
            work += 2.0 * idx.size * idx.size * d_lin
            return linear_X[idx] @ linear_X[idx].T
        work += float(idx.size * idx.size)
        return gram_rows(idx)[:, idx]

    def spent(result: np.ndarray | None) -> np.ndarray | None:
        if work_done is not None:
            work_done.append(work)
        return result

    def gradient() -> np.ndarray:
        support = np.flatnonzero(a > 0)
        return (q_times(support, a[support]) if support.size else np.zeros(n)) - 1.0

    kkt = BorderedKKT(y, column, gram_block)
    g = gradient()
    tol = POLISH_KKT_RTOL * max(1.0, float(np.max(np.abs(g))))
    solved_on, refined = None, 0  # full Newton steps taken on the free set ``solved_on``
    released, stuck = -1, np.zeros(n, dtype=bool)
    good: np.ndarray | None = None  # the last stationary point within kkt_tol
    for _ in range(10 * n + 100 if max_iter is None else max_iter):
        if max_work is not None and work > max_work:
            break
        free = np.flatnonzero(~at0 & ~atC)
        if free.size > FINISH_MAX_FREE:  # the subproblem's O(m^3) step would not be a polish
            break
        same = solved_on is not None and np.array_equal(free, solved_on)
        refined = refined + 1 if same else 0
        if same:  # iterative refinement: the updated gradient has drifted by round-off, and
            # y . alpha by the steps' (zero-curvature steps leave up to ~1e-8 of sum(alpha)):
            # restored first, so that the Newton step also undoes what the restoring moved
            a = balance_alpha(a, y, C, free_only=True)
            g = gradient()
        before = kkt.work
        (d, newton, lam, noise, sigma), dg = kkt.step(free, g, eig_rtol, q_times)
        work += STEP_WORK + kkt.work - before
        scale = float(np.max(a, initial=0.0)) or float(np.min(upper))
        tiny = float(np.max(np.abs(d), initial=0.0)) <= 1e-12 * (
            (scale if math.isfinite(scale) else 1.0) + noise)
        refining = False  # a step small beside alpha, taken because it moves the gradient
        if (newton and tiny and refined < POLISH_REFINE and d.size
                and np.all((a[free] + d >= 0.0) & (a[free] + d <= upper[free]))):
            # small beside alpha is not small beside the gradient: on a Gram matrix of low
            # rank with alpha ~ C ~ 1e5, a step of 1e-8 still moves g_F by 1e-6; a step inside
            # the box is taken (refined) unless it would move no entry of g by more than the
            # multipliers' tolerance or the gradient's own round-off, ~1e-15 max |Q_FF| sum(a)
            # (one that meets a bound is left as before: no cycling)
            refining = True
            dg = q_times(free, d) if dg is None else dg
            roundoff = 1e-15 * sigma * float(np.sum(a))
            tiny = float(np.max(np.abs(dg), initial=0.0)) <= max(tol, roundoff)
        if newton and (tiny or refined >= POLISH_REFINE):
            # stationary on this free set: more Newton steps would be round-off
            if lam is None:  # no free alpha: the multiplier that violates the bounds least
                lam = best_multiplier(g, y, at0, atC)
            reduced = g + lam * y
            wrong = np.where(at0, -reduced, 0.0) + np.where(atC, reduced, 0.0)
            if float(np.max(wrong, initial=0.0)) <= kkt_tol:
                good = a.copy()
            wrong[stuck] = 0.0
            released = int(np.argmax(wrong))
            if wrong[released] <= tol:
                return spent(balance_alpha(a, y, C))  # the steps' round-off in y . alpha
            at0[released] = atC[released] = False
            solved_on, refined = None, 0
            continue
        length, block = (1.0 if newton else math.inf), -1
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(d < 0, -a[free], upper[free] - a[free])
            to_bound = np.where(d != 0, room / d, math.inf)
        if to_bound.size and float(np.min(to_bound)) < length:
            block = int(np.argmin(to_bound))
            length = float(to_bound[block])
        if not math.isfinite(length):
            return spent(None)  # unbounded: the hard-margin dual of meeting hulls
        a[free] += length * d
        g += length * (q_times(free, d) if dg is None else dg)
        solved_on = free if block < 0 else None
        if block >= 0:
            j = free[block]
            (at0 if d[block] < 0 else atC)[j] = True
            a[j] = 0.0 if d[block] < 0 else upper[j]
            if length == 0.0 and j == released:  # degenerate: not released again until a
                stuck[j] = True                   # step moves alpha (no cycling)
        if length > 0.0 and not refining:  # a refinement's round-off step is no progress
            stuck[:] = False
    return spent(None if good is None else balance_alpha(good, y, C))


def best_multiplier(g: np.ndarray, y: np.ndarray, at0: np.ndarray, atC: np.ndarray) -> float:
    """The ``lambda`` that violates ``g_i + lambda y_i >= 0`` (alpha_i = 0) and ``<= 0``
    (alpha_i = C) least: the middle of the interval they allow (its finite end, else 0)."""
    bound = -g * y  # each constraint is lambda >= bound or lambda <= bound
    below = (at0 & (y > 0)) | (atC & (y < 0))
    above = (at0 | atC) & ~below
    lo = float(np.max(bound[below])) if np.any(below) else -math.inf
    hi = float(np.min(bound[above])) if np.any(above) else math.inf
    if math.isfinite(lo) and math.isfinite(hi):
        return 0.5 * (lo + hi)
    return lo if math.isfinite(lo) else (hi if math.isfinite(hi) else 0.0)


def kernel_rows(kernel: Any, X: Any) -> Callable[[np.ndarray], np.ndarray]:
    """``gram_rows(idx) = K(X[idx], X)`` for :func:`polish_alpha`, each row evaluated once."""
    rows: dict[int, np.ndarray] = {}

    def gram_rows(idx: np.ndarray) -> np.ndarray:
        missing = [int(i) for i in idx if int(i) not in rows]
        if missing:
            rows.update(zip(missing, kernel(X[missing], X), strict=True))
        return np.array([rows[int(i)] for i in idx]).reshape(len(idx), -1)

    return gram_rows


#: :func:`finish_alpha` is not tried with more free alphas than this (dense free block).
FINISH_MAX_FREE = 2000
#: Steps of :func:`finish_alpha` per variable (each changes the active set by one): from an
#: iterate far from the optimal active set (large ``C max K_ii``, where SMO crawls with no
#: alpha at ``C`` yet) the finish releases and fixes hundreds of bounds; its work budget, not
#: this cap, is what bounds its cost.
FINISH_STEPS_PER_POINT = 8


@dataclass(frozen=True)
class Finished:
    """An alpha from :func:`finish_alpha` that its caller's certificate accepted."""

    alpha: np.ndarray
    #: ``g_i = sum_j alpha_j y_j K(x_j, x_i)`` in float64 (``<w, phi(x_i)>``)
    g: np.ndarray
    certificate: Certificate
    #: free alphas at the start
    n_free: int


def polish_tries(start: Callable[[], np.ndarray], y: np.ndarray, C: float | np.ndarray | None,
                 gram_rows: Callable[[np.ndarray], np.ndarray], quiet: bool = False,
                 shared_work: bool = False, **options: Any) -> Iterator[np.ndarray | None]:
    """:func:`polish_alpha` with the eigenvalue cutoff :data:`POLISH_EIG_RTOL`, then with
    :data:`POLISH_EIG_RTOL_FINE` (``eigh``'s own round-off: the dropped eigenvalues, times C,
    can carry alpha): each try's answer (None when it does not end), lazily, so the caller
    judges one and asks for the next only when it is not satisfied. Each try starts from
    ``start()``, the caller's best alpha at that moment (the first try's answer, when the
    caller kept it); ``quiet``: NumPy's floating-point warnings silenced during the tries.
    ``options``: :func:`polish_alpha`'s; its ``max_work`` is each try's, or with
    ``shared_work`` both tries' together (a try gets what the one before it left; none when
    nothing is left)."""
    left = options.pop("max_work", None)
    for eig_rtol in (POLISH_EIG_RTOL, POLISH_EIG_RTOL_FINE):
        if left is not None and left <= 0.0:
            yield None
            continue
        used: list[float] = []
        with np.errstate(all="ignore") if quiet else contextlib.nullcontext():
            polished = polish_alpha(start(), y, C, gram_rows, eig_rtol=eig_rtol, max_work=left,
                                    work_done=used, **options)
        if left is not None and shared_work:
            left -= used[0]
        yield polished


def finish_alpha(
    alpha: np.ndarray, X: Any, y: np.ndarray, C: float | np.ndarray | None, kernel: Any,
    accept: Callable[[Certificate], bool], max_work: float | None = None, kkt_tol: float = 0.0,
) -> Finished | None:
    """The exact finish of an iterative method: :func:`polish_alpha` from ``alpha`` with the
    kernel's rows, at most ``FINISH_STEPS_PER_POINT n + 4 |F| + 100`` steps (each changes the
    active set by one),
    judged by its float64 certificate (:func:`~maxmargin.certificate.certify_svm`); when that
    fails, once more with the finer eigenvalue cutoff :data:`POLISH_EIG_RTOL_FINE`.

    None when more than ``FINISH_MAX_FREE`` alphas are free, or when neither try ends (both
    within ``max_work`` floating-point operations together, counted as :data:`STEP_WORK` says,
    so that a finish costs about what the caller allows, the same under any load; ``kkt_tol``
    as in :func:`polish_alpha`) with ``accept(certificate)`` true.
    """
    upper = np.inf if C is None else C
    n_free = int(np.count_nonzero((alpha > 0) & (alpha < upper)))
    if n_free > FINISH_MAX_FREE:
        return None
    rows = kernel_rows(kernel, X)
    points = X if kernel.kind == KIND_LINEAR and isinstance(X, np.ndarray) else None
    for polished in polish_tries(lambda: alpha, y, C, rows, quiet=True, shared_work=True,
                                 max_iter=FINISH_STEPS_PER_POINT * alpha.size + 4 * n_free + 100,
                                 max_work=max_work,
                                 kkt_tol=kkt_tol, linear_X=points):
        if polished is None:
            continue
        sv = np.flatnonzero(polished > 0)
        g = decision_values(kernel, X, X[sv], polished[sv] * y[sv])
        cert = certify_svm(polished, X, y, C, kernel, g=g)
        if accept(cert):
            return Finished(polished, g, cert, n_free)
    return None
