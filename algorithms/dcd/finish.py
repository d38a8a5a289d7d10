r"""The exact finish of ``dcd_svc`` and of ``dcd``'s hinge in feature space: the active-set
method on the linear SVM dual with the free set's KKT system of rank at most ``d + 1`` solved
through ``(d + 1)``-square matrices, never the ``k x k`` Gram block of ``k`` free alphas.

With the free set ``F`` (bounds held fixed), ``w = X^T (y alpha)`` and ``u = y_F Delta_F`` (the
change of ``alpha_F`` times its labels), SVC's subproblem (``Z = [X_F, 1]``, ``k x (d + 1)``)
and LIBLINEAR's (``scaling`` given: ``Z = X~_F``, the rows ``x~_i = (x_i, s)`` with the bias
weight inside ``w~``, no equality; ``x~_i = x_i`` when ``s = 0``) are

.. math::

    \min_u \tfrac12 \|w + X_F^T u\|^2 - y_F^T u \quad \text{s.t.} \quad 1^T u = 0,
    \qquad
    \min_u \tfrac12 \|\tilde w + Z^T u\|^2 - y_F^T u,

whose optima have ``Z p = y_F``: ``p = (w', b)``, ``w' = w + X_F^T u`` (SVC's), ``p = w~ + Z^T
u`` (LIBLINEAR's). With ``r = y_F - Z q``, ``q`` the least-squares solution of ``Z q = y_F``
(``M = Z^T Z``):

* ``r != 0``: the subproblem is unbounded along ``u = r`` (``Z^T r = 0``: ``w`` and ``y . alpha``
  stay, the objective falls by ``||r||^2`` per unit), followed to the first bound; a *drop
  step*. While ``k`` exceeds the columns of ``Z`` and ``M`` is well conditioned, these run
  compiled (:func:`drop_steps`) with ``G = M^{-1}`` downdated by Sherman--Morrison when row
  ``j`` leaves, ``r_i += (z_i . G z_j) r_j / (1 - z_j . G z_j)``: ``O(k d)`` a step;
* ``r = 0``: the Newton step. SVC's: ``u = xi - beta / k`` (``beta = y . alpha``, restored to
  0), ``xi`` the least-norm least-squares solution of ``(X_F - 1 mu^T)^T xi = p_{:d} - w_0``
  (the free rows centred, so ``1^T xi = 0``; ``w_0 = w - beta / k X_F^T 1``); LIBLINEAR's:
  ``u`` the least-norm least-squares solution of ``Z^T u = p - w~``. Cut at the first bound.

At a stationary point the margins of the bounded alphas are checked (``O(nnz)``): ``m_i = y_i
(w . x_i + b)``, ``b`` the mean of the free ``y_i - w . x_i`` (SVC's), or ``m_i = y_i w~ .
x~_i`` (LIBLINEAR's); ``m_i >= 1`` at 0, ``m_i <= 1`` at ``C_i``; the worst violation is
released (with every other one after a step that moved: ``RELEASE_SHARE``), until none
exceeds ``DCD_FINISH_KKT_RTOL`` times ``max(1, max_i |m_i|)`` (the optimum to round-off);
free margins off 1 by more are refined by ``REFINE_STEPS`` Newton steps at most while
round-off could decide.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from maxmargin._jit import njit
from maxmargin.algorithms.active_set import STEP_WORK, best_multiplier
from maxmargin.tolerances import (
    DCD_FINISH_GROWTH,
    DCD_FINISH_KKT_RTOL,
    DCD_FINISH_LEVERAGE_MAX,
    DCD_FINISH_MIN_BYTES,
    DCD_FINISH_MIN_WORK,
    DCD_FINISH_NULL_RTOL,
    DCD_FINISH_RANK_RTOL,
    DCD_HINGE_FINISH_BUDGET,
    DCD_VISIT_ENTRY_WORK,
    DCD_VISIT_WORK,
)

__all__ = ["feature_finish", "drop_steps", "finish_work", "passes_work", "refresh_steps",
           "data_bytes", "fits", "Handover", "PEAK_COPIES", "REFINE_STEPS", "REFINE_BELOW",
           "RELEASE_SHARE", "REFRESH_STEPS"]

#: :func:`drop_steps` recomputes ``G`` from the free rows after this many downdates, at least
#: (``2 (d + 1)`` when larger: the refresh's ``O(k d^2)`` spread over as many ``O(k d)``
#: steps).
REFRESH_STEPS = 64
#: The finish holds at most about this many ``k x (d + 1)`` float64 arrays at its peak (the free
#: rows, their equilibrated copy, its compaction or singular vectors).
PEAK_COPIES = 4
#: Newton steps of iterative refinement on one free set whose margins are not 1 to round-off,
#: taken only while no bound margin is wrong by more than ``REFINE_BELOW`` times their error.
REFINE_STEPS = 2
REFINE_BELOW = 1e3
#: At a stationary point after a step that moved, every bound alpha whose margin is wrong by
#: more than this times the worst (and round-off) is released, while each check finds the
#: objective lower than the last; else the worst alone. The blocking steps that follow,
#: ``O(k d)`` each, put back those the subproblem does not want, in place of a check,
#: ``O(nnz)``, for each.
RELEASE_SHARE = 0.0
#: Counted floating-point operations of one eigen- or singular value decomposition, per
#: ``(d + 1)^3``.
EIGH_WORK = 9.0


def refresh_steps(d: int) -> int:
    """The drop steps between two recomputations of ``G`` (:data:`REFRESH_STEPS`)."""
    return max(REFRESH_STEPS, 2 * (d + 1))


def finish_work(k: int, d: int, nnz: int, n: int) -> float:
    """The estimated work of :func:`feature_finish` from ``k`` free alphas: ``k - d - 1`` drop
    steps, the ``j``-th ``2 (k - j) (d + 1) + 4 k + 4 (d + 1)^2`` (:func:`drop_steps`), with a
    recomputation of ``G``, ``2 k (d + 1)^2``, every :func:`refresh_steps`: about ``k^2 (d + 5
    + (d + 1)^2 / refresh_steps(d))`` in all; then a Newton step and a stationary check,
    ``EIGH_WORK (d + 1)^3 + 6 nnz + 4 n``; and ``STEP_WORK`` (a call's fixed cost, as
    :mod:`~maxmargin.algorithms.active_set` counts it) for each call."""
    m, calls = d + 1, 2.0 + k / refresh_steps(d)
    per_step = m + 4.0 + m * m / refresh_steps(d) + 4.0 * m * m / max(k, 1)
    return float(k) * k * per_step + 6.0 * nnz + 4.0 * n + EIGH_WORK * m**3 + STEP_WORK * calls


def passes_work(visits: float, nnz: int, n: int) -> float:
    """The work of coordinate passes that visited ``visits`` rows of ``n`` with ``nnz``
    non-zeros, in the units of :func:`finish_work`: ``DCD_VISIT_WORK + DCD_VISIT_ENTRY_WORK
    (nnz / n + 1)`` a visit, at least ``DCD_FINISH_MIN_WORK``."""
    return max(DCD_FINISH_MIN_WORK,
               visits * (DCD_VISIT_WORK + DCD_VISIT_ENTRY_WORK * (nnz / n + 1.0)))


def data_bytes(X: Any) -> int:
    """The bytes of the rows: CSR's three arrays, or the dense array."""
    return (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes if hasattr(X, "indptr")
            else X.nbytes)


def fits(X: Any, free: int) -> bool:
    """Whether :func:`feature_finish` from ``free`` free alphas, ``PEAK_COPIES k (d + 1)``
    floats, takes at most the data's bytes (at least ``DCD_FINISH_MIN_BYTES``)."""
    return PEAK_COPIES * 8.0 * free * (X.shape[1] + 1) <= max(data_bytes(X),
                                                               DCD_FINISH_MIN_BYTES)


@dataclass
class Handover:
    """When coordinate passes hand their ``alpha`` to :func:`feature_finish`: not while the
    passes are about to meet ``tol`` (the gap's last fall, once more, would meet it: ``gap^2
    <= tol gap_before``); once its estimated work (:func:`finish_work`) is within that of the
    passes so far (:func:`passes_work`; ``DCD_HINGE_FINISH_BUDGET`` times that is its budget)
    and its floats (``PEAK_COPIES k (d + 1)``) take at most the data's bytes (at least
    ``DCD_FINISH_MIN_BYTES``); after a failure, only when the passes' work has grown
    ``DCD_FINISH_GROWTH`` times or the estimate has fallen as many times. Counted, never
    timed."""

    X: Any
    retry_at: float = 0.0
    retry_below: float = math.inf

    def budget(self, free: int, visits: float, gap: float, before: float, tol: float
               ) -> float | None:
        """The work a finish from ``free`` free alphas may do after passes that visited
        ``visits`` samples and brought the relative gap from ``before`` (``inf`` at first) to
        ``gap``, or None when it is not due (class docstring)."""
        if gap * gap <= tol * before:
            return None
        n = self.X.shape[0]
        work = passes_work(visits, self.X.nnz if hasattr(self.X, "indptr") else self.X.size, n)
        return DCD_HINGE_FINISH_BUDGET * work if self.due(free, work) else None

    def due(self, free: int, work: float) -> bool:
        """Whether a finish from ``free`` free alphas is due after passes of ``work``: its
        estimate within ``work``, its floats within the data's bytes (:func:`fits`), and, after
        a try, ``work`` grown or the estimate fallen ``DCD_FINISH_GROWTH`` times; a due finish
        is counted as tried."""
        X = self.X
        n, d = X.shape
        need = finish_work(free, d, X.nnz if hasattr(X, "indptr") else X.size, n)
        if (need > work or (work < self.retry_at and need > self.retry_below)
                or not fits(X, free)):
            return False
        self.retry_at, self.retry_below = DCD_FINISH_GROWTH * work, need / DCD_FINISH_GROWTH
        return True


@njit
def drop_steps(Z: np.ndarray, yF: np.ndarray, a: np.ndarray, upper: np.ndarray,
               alive: np.ndarray, G: np.ndarray, r: np.ndarray, null_tol: float,
               max_steps: int) -> tuple:
    """Drop steps (module docstring) on the rows ``alive`` of ``Z`` while ``max |r| > null_tol``,
    at most ``max_steps`` of them, each dropping the alpha it blocks on (``alive`` set False,
    ``a`` put on its bound). ``a``, ``alive``, ``G`` and ``r`` are updated in place. Returns
    ``(steps, work, consistent, moved)`` (``moved``: a step whose blocking alpha travelled
    more than ``DCD_FINISH_KKT_RTOL`` times its bound)."""
    k, m = Z.shape
    steps, work, consistent, moved = 0, 0.0, False, False
    while steps < max_steps:
        worst = 0.0
        for i in range(k):
            if alive[i] and abs(r[i]) > worst:
                worst = abs(r[i])
        if worst <= null_tol:
            consistent = True
            break
        t, j = math.inf, -1
        for i in range(k):  # Delta_i = y_i r_i: the ratio test
            if not alive[i] or r[i] == 0.0:
                continue
            step = yF[i] * r[i]
            room = (upper[i] - a[i]) / step if step > 0.0 else -a[i] / step
            if room < t:
                t, j = room, i
        if j < 0 or not math.isfinite(t):
            break
        moved = moved or t * abs(yF[j] * r[j]) > DCD_FINISH_KKT_RTOL * upper[j]
        for i in range(k):
            if alive[i]:
                a[i] += t * yF[i] * r[i]
        a[j] = upper[j] if yF[j] * r[j] > 0.0 else 0.0
        alive[j] = False
        steps += 1
        gz = np.dot(G, Z[j])
        lev = np.dot(gz, Z[j])
        work += 4.0 * m * m + 2.0 * k * m + 4.0 * k
        if lev >= DCD_FINISH_LEVERAGE_MAX:  # M without row j is near singular
            break
        dots = np.dot(Z, gz)
        scale = r[j] / (1.0 - lev)
        for i in range(k):
            if alive[i]:
                r[i] += dots[i] * scale
        inv = 1.0 / (1.0 - lev)
        for p in range(m):
            for q in range(m):
                G[p, q] += gz[p] * gz[q] * inv
    return steps, work, consistent, moved


def _dense_rows(X: Any, idx: np.ndarray, column: float) -> np.ndarray:
    """``Z = [X[idx], column]`` as a dense C-contiguous float64 array (``X[idx]`` alone when
    ``column`` is 0)."""
    rows = X[idx]
    rows = np.asarray(rows.toarray() if hasattr(rows, "toarray") else rows, dtype=np.float64)
    return np.hstack([rows, np.full((idx.size, 1), column)]) if column else np.array(rows)


def _weights(X: Any, y: np.ndarray, a: np.ndarray, scaling: float | None) -> np.ndarray:
    """``w = X^T (y a)`` (SVC's, ``scaling`` None), or ``w~ = (w, s y . a)`` (LIBLINEAR's;
    ``w`` alone when ``s = 0``), O(nnz)."""
    v = a * y
    w = np.asarray(X.T @ v, dtype=np.float64).ravel()
    return np.append(w, scaling * float(v.sum())) if scaling else w


def _equilibrated(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(Z D, D)``, ``D`` the reciprocal norms of the columns of ``Z`` (1 for a zero column):
    ``r``, ``u`` and ``b`` are the same for ``Z D``, whose ``M`` is far better conditioned on
    features of unlike scales."""
    norms = np.sqrt(np.einsum("ij,ij->j", Z, Z))
    D = 1.0 / np.where(norms > 0.0, norms, 1.0)
    return Z * D, D


def _subproblem(Z: np.ndarray, yF: np.ndarray, w: np.ndarray, beta: float | None
                ) -> tuple[np.ndarray, bool]:
    """``(u, newton)``: the drop direction ``r`` (``newton`` False) or the Newton step (module
    docstring). ``r`` and a solution ``p`` of ``Z p = y_F`` come from the singular value
    decomposition of ``Z D`` (:func:`_equilibrated`; singular values below
    ``DCD_FINISH_RANK_RTOL`` times the largest dropped). LIBLINEAR's (``beta`` None): ``u`` the
    least-norm least-squares solution of ``Z^T u = p - w~``. SVC's, which also restores ``y .
    alpha = 0`` from ``beta`` (``1^T u = -beta``): ``u = -beta / k + xi``, ``xi`` the least-norm
    least-squares solution of ``B xi = p_d - w_0`` with ``B^T`` the free rows centred (``B 1 =
    0``: ``1^T xi = 0``) and ``w_0 = w - beta / k X_F^T 1``. Both in the features' own metric
    (the normal equations' square of its condition avoided)."""
    k, d = Z.shape[0], w.size
    Zs, D = _equilibrated(Z)
    U, S, Vt = np.linalg.svd(Zs, full_matrices=False)
    rank = int(np.count_nonzero(S > DCD_FINISH_RANK_RTOL * (float(S[0]) if S.size else 0.0)))
    coef = U[:, :rank].T @ yF
    r = yF - U[:, :rank] @ coef
    if r.size and float(np.max(np.abs(r))) > DCD_FINISH_NULL_RTOL:
        return r, False
    if k == 0:
        return r, True
    p = D * (Vt[:rank].T @ (coef / S[:rank]))
    if beta is None:
        return np.linalg.lstsq(Z.T, p - w, rcond=None)[0], True
    rows = Z[:, :d]
    shift = -beta / k
    centred = rows - rows.mean(axis=0)
    xi = np.linalg.lstsq(centred.T, p[:d] - w - shift * rows.sum(axis=0), rcond=None)[0]
    return shift + xi - xi.mean(), True


def _margins(X: Any, y: np.ndarray, a: np.ndarray, free: np.ndarray, at0: np.ndarray,
             atC: np.ndarray, scaling: float | None) -> tuple[np.ndarray, np.ndarray]:
    """``(w, m)``: the weights of ``a`` (:func:`_weights`) and the margins ``m_i`` of the
    stationary check (module docstring), O(nnz)."""
    w = _weights(X, y, a, scaling)
    d = X.shape[1]
    g = np.asarray(X @ w[:d], dtype=np.float64).ravel()
    if scaling is not None:  # LIBLINEAR's: the bias weight inside w~
        return w, y * (g + (scaling * float(w[d]) if scaling else 0.0))
    # SVC's bias: the free margins' mean; with no free alpha, the least violating one
    b = (float(np.mean((y - g)[free])) if free.size
         else best_multiplier(y * g - 1.0, y, at0, atC))
    return w, y * (g + b)


def feature_finish(X: Any, y: np.ndarray, alpha: np.ndarray, box: np.ndarray, kkt_tol: float,
                   max_work: float, *, scaling: float | None = None) -> np.ndarray | None:
    """The active-set method (module docstring) from ``alpha`` (inside the box; ``y . alpha =
    0`` for SVC's problem), on dense or CSR rows (only the free rows are made dense, ``k (d +
    1)`` floats): the optimum, or when ``max_work`` floating-point operations (counted, never
    timed) did not reach it, the last stationary point whose bound margins were wrong by at
    most ``kkt_tol`` (then ``m - M <= 2 kkt_tol`` up to round-off), None if none was.
    ``scaling``: None for SVC's problem (``y . alpha = 0``, an unregularised bias), else
    LIBLINEAR's hinge on the rows ``(x_i, s)``, ``s = scaling`` (0: no intercept), no
    equality. ``alpha`` is not modified."""
    n, d = X.shape
    a = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, box)
    at0, atC = a <= 0.0, a >= box
    stuck = np.zeros(n, dtype=bool)
    nnz = X.nnz if hasattr(X, "nnz") else X.size
    column = 1.0 if scaling is None else scaling
    free = np.flatnonzero(~at0 & ~atC)
    Z, work, released, refined = _dense_rows(X, free, column), 0.0, -1, 0
    m, progress = Z.shape[1], True  # progress: a step moved alpha since the last release
    many, level = True, math.inf  # releases of many while each lowers the objective
    w = _weights(X, y, a, scaling)  # moved with the Newton steps, recomputed at each check
    good: np.ndarray | None = None
    while work <= max_work:
        k = free.size
        if k > m:
            spent, moved, kept = _drop_phase(Z, y[free], a, free, box, m)
            work += spent
            # the released alpha is free until a step or a drop takes it out (then -1)
            dropped = released >= 0 and not kept[np.searchsorted(free, released)]
            if moved:
                stuck[:], progress = False, True
            elif dropped:  # dropped again at once: not released again until a step moves
                stuck[released] = True  # (no cycling)
            if dropped:
                released = -1
            gone = free[~kept]
            at0[gone], atC[gone] = a[gone] <= 0.0, a[gone] >= box[gone]
            free, Z = free[kept], Z[kept]
            k = free.size
        u, newton = _subproblem(Z, y[free], w, None if scaling is not None else float(y @ a))
        work += STEP_WORK + EIGH_WORK * m**3 + 4.0 * k * m**2
        step = y[free] * u
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(step < 0.0, -a[free] / step, (box[free] - a[free]) / step)
        room[step == 0.0] = math.inf
        length, block = (1.0 if newton else math.inf), -1
        if k and float(np.min(room)) < length:
            block = int(np.argmin(room))
            length = float(room[block])
        if not math.isfinite(length):
            return good
        a[free] += length * step
        if newton:  # a drop step keeps w (Z^T r = 0)
            w += length * (u @ Z[:, :w.size])
        if length * float(np.max(np.abs(step), initial=0.0)) > DCD_FINISH_KKT_RTOL * float(
                np.max(box[free], initial=0.0)):
            stuck[:], progress = False, True  # a step that moves alpha (not by round-off)
        if block >= 0:  # the blocking alpha leaves F
            j = free[block]
            (at0 if step[block] < 0.0 else atC)[j] = True
            a[j] = 0.0 if step[block] < 0.0 else box[j]
            if length == 0.0 and j == released:
                stuck[j] = True  # degenerate: not released again until a step moves
            released = -1
            free, Z = np.delete(free, block), np.delete(Z, block, axis=0)
            refined = 0
            continue
        w, margins = _margins(X, y, a, free, at0, atC, scaling)
        work += 4.0 * nnz + 4.0 * n
        exact = DCD_FINISH_KKT_RTOL * max(1.0, float(np.max(np.abs(margins))))
        off = float(np.max(np.abs(margins[free] - 1.0), initial=0.0))
        wrong = np.where(at0, 1.0 - margins, 0.0) + np.where(atC, margins - 1.0, 0.0)
        if max(float(np.max(wrong)), off) <= kkt_tol:
            good = a.copy()
        wrong[stuck] = 0.0
        objective = 0.5 * float(w @ w) - float(a.sum())
        many = many and objective < level - DCD_FINISH_KKT_RTOL * max(1.0, abs(objective))
        level = objective
        top = int(np.argmax(wrong))
        worst = float(wrong[top])
        if off > exact and refined < REFINE_STEPS and worst <= REFINE_BELOW * off:
            refined += 1  # round-off could decide: refine on the same free set
            continue
        if worst <= exact:
            return a
        released = top
        at0[released] = atC[released] = False
        if progress and many:  # every large violation at once; else the worst alone
            out = wrong > max(exact, RELEASE_SHARE * worst)
            at0[out] = atC[out] = False
            released = -1  # one put back among many is no degenerate step (no stuck mark)
        refined, progress = 0, False
        free = np.flatnonzero(~at0 & ~atC)
        Z = _dense_rows(X, free, column)
    return good


def _drop_phase(Z: np.ndarray, yF: np.ndarray, a: np.ndarray, free: np.ndarray,
                box: np.ndarray, m: int) -> tuple[float, bool, np.ndarray]:
    """:func:`drop_steps` on the free rows (equilibrated, :func:`_equilibrated`) while their
    ``M`` is well conditioned, ``G`` recomputed (and the dropped rows removed) every
    :func:`refresh_steps`; ``a[free]`` updated. Returns ``(work, moved, kept)`` (``moved``: as
    :func:`drop_steps`; ``kept``: which of ``free`` the steps did not drop)."""
    pos = np.arange(free.size)  # the rows still free, as positions in ``free``
    Z, aF, upper = _equilibrated(Z)[0], a[free], box[free]
    work, moved = 0.0, False
    while pos.size > m:
        lam, V = np.linalg.eigh(Z.T @ Z)
        work += STEP_WORK + EIGH_WORK * m**3 + 2.0 * pos.size * m**2
        if float(lam[0]) <= DCD_FINISH_RANK_RTOL**2 * max(float(lam[-1]), 1e-300):
            break  # rank-deficient: the singular value decomposition's steps
        G = (V / lam) @ V.T
        r = yF - Z @ (G @ (Z.T @ yF))
        alive = np.ones(pos.size, dtype=bool)
        steps, spent, consistent, went = drop_steps(Z, yF, aF, upper, alive, G, r,
                                                    DCD_FINISH_NULL_RTOL, refresh_steps(m - 1))
        work, moved = work + spent, moved or went
        a[free[pos]] = aF
        pos, Z, yF, aF, upper = pos[alive], Z[alive], yF[alive], aF[alive], upper[alive]
        if consistent or steps == 0:
            break
    kept = np.zeros(free.size, dtype=bool)
    kept[pos] = True
    return work, moved, kept
