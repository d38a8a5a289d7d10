r"""The exact finish of ``dcd_svc`` in feature space: the active-set method on SVC's linear dual
with the free set's KKT system of rank at most ``d + 1`` solved through ``(d + 1)``-square
matrices, never the ``k x k`` Gram block of ``k`` free alphas.

With the free set ``F`` (bounds held fixed), ``Z = [X_F, 1]`` (``k x (d + 1)``), ``w = X^T (y
alpha)`` and ``u = y_F Delta_F`` (the change of ``alpha_F`` times its labels), the subproblem is

.. math::

    \min_u \tfrac12 \|w + X_F^T u\|^2 - y_F^T u \quad \text{s.t.} \quad 1^T u = 0,

whose optimum has ``Z p = y_F``, ``p = (w', b)``, ``w' = w + X_F^T u``. With ``r = y_F - Z q``,
``q`` the least-squares solution of ``Z q = y_F`` (``M = Z^T Z``):

* ``r != 0``: the subproblem is unbounded along ``u = r`` (``Z^T r = 0``: ``w`` and ``y . alpha``
  stay, the objective falls by ``||r||^2`` per unit), followed to the first bound; a *drop
  step*. While ``k > d + 1`` and ``M`` is well conditioned, these run compiled
  (:func:`drop_steps`) with ``G = M^{-1}`` downdated by Sherman--Morrison when row ``j`` leaves,
  ``r_i += (z_i . G z_j) r_j / (1 - z_j . G z_j)``: ``O(k d)`` a step;
* ``r = 0``: the Newton step ``u = xi - beta / k`` (``beta = y . alpha``, restored to 0),
  ``xi`` the least-norm least-squares solution of ``(X_F - 1 mu^T)^T xi = p_{:d} - w_0`` (the
  free rows centred, so ``1^T xi = 0``; ``w_0 = w - beta / k X_F^T 1``), cut at the first bound.

At a stationary point the margins ``m_i = y_i (w . x_i + b)`` of the bounded alphas (``b`` the
mean of the free ``y_i - w . x_i``) are checked (``O(nnz)``): ``m_i >= 1`` at 0, ``m_i <= 1``
at ``C_i``; the worst violation is released, until none exceeds ``KKT_RTOL`` times ``max(1,
max_i |m_i|)`` (the optimum to round-off); free margins off 1 by more are refined by
``REFINE_STEPS`` Newton steps at most.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from maxmargin._jit import njit
from maxmargin.algorithms.active_set import STEP_WORK, _best_multiplier

__all__ = ["feature_finish", "drop_steps", "finish_work", "refresh_steps", "KKT_RTOL",
           "NULL_RTOL", "PEAK_COPIES", "RANK_RTOL", "REFINE_STEPS",
           "REFRESH_STEPS", "LEVERAGE_MAX"]

#: ``r`` counts as zero (the subproblem consistent) when ``max |r_i|`` is at most this
#: (``y_F`` has entries +-1).
NULL_RTOL = 1e-9
#: Singular values of the equilibrated ``Z`` below this times the largest count as zero
#: (rank-deficient ``Z``); in :func:`drop_steps`, eigenvalues of ``M`` below its square.
RANK_RTOL = 1e-10
#: :func:`drop_steps` recomputes ``G`` from the free rows after this many downdates, at least
#: (``2 (d + 1)`` when larger: the refresh's ``O(k d^2)`` spread over as many ``O(k d)``
#: steps).
REFRESH_STEPS = 64
#: A row whose leverage ``z_j . G z_j`` exceeds this leaves ``M`` near singular: the compiled
#: steps stop and the eigendecomposition takes over.
LEVERAGE_MAX = 1.0 - 1e-8
#: The finish ends where no bound margin is wrong by more than this times ``max(1, max |m_i|)``.
KKT_RTOL = 1e-12
#: The finish holds at most about this many ``k x (d + 1)`` float64 arrays at its peak (the free
#: rows, their equilibrated copy, its compaction or singular vectors).
PEAK_COPIES = 4
#: Newton steps of iterative refinement on one free set whose margins are not 1 to round-off.
REFINE_STEPS = 2
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


@njit
def drop_steps(Z: np.ndarray, yF: np.ndarray, a: np.ndarray, upper: np.ndarray,
               alive: np.ndarray, G: np.ndarray, r: np.ndarray, null_tol: float,
               max_steps: int) -> tuple:
    """Drop steps (module docstring) on the rows ``alive`` of ``Z`` while ``max |r| > null_tol``,
    at most ``max_steps`` of them, each dropping the alpha it blocks on (``alive`` set False,
    ``a`` put on its bound). ``a``, ``alive``, ``G`` and ``r`` are updated in place. Returns
    ``(steps, work, consistent, moved)`` (``moved``: a step whose blocking alpha travelled
    more than ``KKT_RTOL`` times its bound)."""
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
        moved = moved or t * abs(yF[j] * r[j]) > KKT_RTOL * upper[j]
        for i in range(k):
            if alive[i]:
                a[i] += t * yF[i] * r[i]
        a[j] = upper[j] if yF[j] * r[j] > 0.0 else 0.0
        alive[j] = False
        steps += 1
        gz = np.dot(G, Z[j])
        lev = np.dot(gz, Z[j])
        work += 4.0 * m * m + 2.0 * k * m + 4.0 * k
        if lev >= LEVERAGE_MAX:  # M without row j is near singular
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


def _dense_rows(X: Any, idx: np.ndarray) -> np.ndarray:
    """``Z = [X[idx], 1]`` as a dense C-contiguous float64 array."""
    rows = X[idx]
    rows = rows.toarray() if hasattr(rows, "toarray") else rows
    return np.hstack([np.asarray(rows, dtype=np.float64), np.ones((idx.size, 1))])


def _equilibrated(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(Z D, D)``, ``D`` the reciprocal norms of the columns of ``Z`` (1 for a zero column):
    ``r``, ``u`` and ``b`` are the same for ``Z D``, whose ``M`` is far better conditioned on
    features of unlike scales."""
    norms = np.sqrt(np.einsum("ij,ij->j", Z, Z))
    D = 1.0 / np.where(norms > 0.0, norms, 1.0)
    return Z * D, D


def _subproblem(Z: np.ndarray, yF: np.ndarray, w: np.ndarray, beta: float
                ) -> tuple[np.ndarray, bool]:
    """``(u, newton)``: the drop direction ``r`` (``newton`` False) or the Newton step (module
    docstring) that also restores ``y . alpha = 0`` from ``beta`` (``1^T u = -beta``).
    ``r`` and a solution ``p`` of ``Z p = y_F`` come from the singular value decomposition of
    ``Z D`` (:func:`_equilibrated`; singular values below ``RANK_RTOL`` times the largest
    dropped); then ``u = -beta / k + xi``, ``xi`` the least-norm least-squares solution of
    ``B xi = p_d - w_0`` with ``B^T`` the free rows centred (``B 1 = 0``: ``1^T xi = 0``) and
    ``w_0 = w - beta / k X_F^T 1``, in the features' own metric (the normal equations' square
    of its condition avoided)."""
    k, d = Z.shape[0], w.size
    Zs, D = _equilibrated(Z)
    U, S, Vt = np.linalg.svd(Zs, full_matrices=False)
    rank = int(np.count_nonzero(S > RANK_RTOL * (float(S[0]) if S.size else 0.0)))
    coef = U[:, :rank].T @ yF
    r = yF - U[:, :rank] @ coef
    if r.size and float(np.max(np.abs(r))) > NULL_RTOL:
        return r, False
    if k == 0:
        return r, True
    p = D * (Vt[:rank].T @ (coef / S[:rank]))
    rows = Z[:, :d]
    shift = -beta / k
    centred = rows - rows.mean(axis=0)
    xi = np.linalg.lstsq(centred.T, p[:d] - w - shift * rows.sum(axis=0), rcond=None)[0]
    return shift + xi - xi.mean(), True


def feature_finish(X: Any, y: np.ndarray, alpha: np.ndarray, box: np.ndarray, kkt_tol: float,
                   max_work: float) -> np.ndarray | None:
    """The active-set method (module docstring) from ``alpha`` (inside the box, ``y . alpha =
    0``), on dense or CSR rows (only the free rows are made dense, ``k (d + 1)`` floats): the
    optimum, or when ``max_work`` floating-point operations (counted, never timed) did not reach
    it, the last stationary point whose bound margins were wrong by at most ``kkt_tol`` (then
    ``m - M <= 2 kkt_tol`` up to round-off), None if none was. ``alpha`` is not modified."""
    n, d = X.shape
    a = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, box)
    at0, atC = a <= 0.0, a >= box
    stuck = np.zeros(n, dtype=bool)
    nnz = X.nnz if hasattr(X, "nnz") else X.size
    free = np.flatnonzero(~at0 & ~atC)
    Z, work, released, refined = _dense_rows(X, free), 0.0, -1, 0
    good: np.ndarray | None = None
    while work <= max_work:
        k = free.size
        if k > d + 1:
            spent, moved, kept = _drop_phase(Z, y[free], a, free, box, d)
            work += spent
            if moved:
                stuck[:] = False
            elif released >= 0 and not kept[np.searchsorted(free, released)]:
                stuck[released] = True  # dropped again at once: not released again until a
                released = -1           # step moves (no cycling)
            gone = free[~kept]
            at0[gone], atC[gone] = a[gone] <= 0.0, a[gone] >= box[gone]
            free, Z = free[kept], Z[kept]
            k = free.size
        w = np.asarray(X.T @ (a * y), dtype=np.float64).ravel()
        u, newton = _subproblem(Z, y[free], w, float(y @ a))
        work += STEP_WORK + EIGH_WORK * (d + 1) ** 3 + 4.0 * k * (d + 1) ** 2 + 2.0 * nnz
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
        if length * float(np.max(np.abs(step), initial=0.0)) > KKT_RTOL * float(
                np.max(box[free], initial=0.0)):
            stuck[:] = False  # a step that moves alpha (not by round-off): progress
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
        w = np.asarray(X.T @ (a * y), dtype=np.float64).ravel()
        g = np.asarray(X @ w, dtype=np.float64).ravel()
        work += 4.0 * nnz + 4.0 * n
        # the bias: the free margins' mean; with no free alpha, the least violating one
        b = (float(np.mean((y - g)[free])) if free.size
             else _best_multiplier(y * g - 1.0, y, at0, atC))
        margins = y * (g + b)
        exact = KKT_RTOL * max(1.0, float(np.max(np.abs(margins))))
        off = float(np.max(np.abs(margins[free] - 1.0), initial=0.0))
        if off > exact and refined < REFINE_STEPS:  # round-off: refine on the same free set
            refined += 1
            continue
        wrong = np.where(at0, 1.0 - margins, 0.0) + np.where(atC, margins - 1.0, 0.0)
        if max(float(np.max(wrong)), off) <= kkt_tol:
            good = a.copy()
        wrong[stuck] = 0.0
        released = int(np.argmax(wrong))
        if wrong[released] <= exact:
            return a
        at0[released] = atC[released] = False
        refined = 0
        free = np.flatnonzero(~at0 & ~atC)
        Z = _dense_rows(X, free)
    return good


def _drop_phase(Z: np.ndarray, yF: np.ndarray, a: np.ndarray, free: np.ndarray,
                box: np.ndarray, d: int) -> float:
    """:func:`drop_steps` on the free rows (equilibrated, :func:`_equilibrated`) while their
    ``M`` is well conditioned, ``G`` recomputed (and the dropped rows removed) every
    :func:`refresh_steps`; ``a[free]`` updated. Returns ``(work, moved, kept)`` (``moved``: as
    :func:`drop_steps`; ``kept``: which of ``free`` the steps did not drop)."""
    pos = np.arange(free.size)  # the rows still free, as positions in ``free``
    Z, aF, upper = _equilibrated(Z)[0], a[free], box[free]
    work, moved = 0.0, False
    while pos.size > d + 1:
        lam, V = np.linalg.eigh(Z.T @ Z)
        work += STEP_WORK + EIGH_WORK * (d + 1) ** 3 + 2.0 * pos.size * (d + 1) ** 2
        if float(lam[0]) <= RANK_RTOL**2 * max(float(lam[-1]), 1e-300):
            break  # rank-deficient: the singular value decomposition's steps
        G = (V / lam) @ V.T
        r = yF - Z @ (G @ (Z.T @ yF))
        alive = np.ones(pos.size, dtype=bool)
        steps, spent, consistent, went = drop_steps(Z, yF, aF, upper, alive, G, r, NULL_RTOL,
                                                    refresh_steps(d))
        work, moved = work + spent, moved or went
        a[free[pos]] = aF
        pos, Z, yF, aF, upper = pos[alive], Z[alive], yF[alive], aF[alive], upper[alive]
        if consistent or steps == 0:
            break
    kept = np.zeros(free.size, dtype=bool)
    kept[pos] = True
    return work, moved, kept
