r"""Wolfe's minimum-norm-point algorithm on the difference of two hulls: exact active-set steps.

The nearest points of ``conv(P)`` and ``conv(Q)`` minimise ``||z||^2``,
``z = sum_i y_i lam_i phi(x_i)``, over the two simplices (notation of
:mod:`maxmargin.algorithms._nearest_point`). Wolfe (1976) keeps a *corral* ``S`` of points and
the weights on it:

* **major cycle**: with ``g_i = <z, phi(x_i)>``, the Frank-Wolfe vertices ``j = argmin_P g`` and
  ``k = argmax_Q g`` split the gap ``||z||^2 - (g_j - g_k)`` into a part of ``P``,
  ``sum_{S cap P} lam_i g_i - g_j``, and a part of ``Q``, ``g_k - sum_{S cap Q} lam_i g_i``; the
  vertex of the larger part joins ``S``;
* **minor cycle**: the affine minimiser on ``S``,

  .. math::

      \min_w \Big\|\sum_{i \in S} y_i w_i \phi(x_i)\Big\|^2 \quad \text{s.t.}
      \sum_{i \in S \cap P} w_i = 1, \; \sum_{i \in S \cap Q} w_i = 1,

  from its KKT system ``[G E; E^T 0] [w; nu] = [0; 1]`` (``G_ab = y_a y_b K_ab``, ``E`` the
  two membership columns). If ``w > 0`` it is the new ``lam``; else ``lam`` moves toward ``w``
  until a weight reaches 0, that point leaves ``S``, and the cycle repeats.

Each major cycle lowers ``||z||`` strictly, no corral repeats, and the method ends in finitely
many steps with the exact optimum of the corral; in practice on close hulls the corral stays
small (at most ``d + 2`` points for the linear kernel) where Gilbert and MDM take
``O(1/gap)`` or slowly linear steps. It stops on the same relative gap rule as Gilbert/MDM.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit
from scipy.linalg import cholesky, qr_delete
from scipy.linalg.lapack import dgesv, dtrtrs

from maxmargin.algorithms._nearest_point import (
    STALLED,
    examine,
    kernel_column,
    solve_hull_pair,
)
from maxmargin.results import HullPairSolution

__all__ = ["wolfe_hulls", "wolfe_loop", "WOLFE_TOL", "WOLFE_MAX_ITER"]

WOLFE_TOL = 1e-8
#: Major cycles; each adds one point to the corral.
WOLFE_MAX_ITER = 100_000
#: Corrals smaller than this are solved densely (less call overhead than the factor updates),
#: in the compiled loop :func:`_small_corral_cycles` until the corral first reaches this size.
_FACTOR_MIN = 64
#: Relative residual of the minor cycle's KKT system above which the solve is redone densely.
_KKT_RTOL = 1e-8
#: A new point whose Cholesky pivot is below this fraction of its diagonal is affinely
#: dependent on the corral in round-off: the factor is rebuilt or the solve done densely.
_PIVOT_RTOL = 1e-12


def _affine_minimiser(G: np.ndarray, inP: np.ndarray, scale: float) -> np.ndarray:
    """``w`` of the minor cycle: the KKT system equilibrated by ``scale >= max |G|`` (the largest
    ``K_ii``), solved directly, or in the least-squares sense when the corral is affinely
    dependent (round-off)."""
    s = G.shape[0]
    M = np.empty((s + 2, s + 2))
    np.multiply(G, 1.0 / scale, out=M[:s, :s])
    M[:s, s] = M[s, :s] = inP
    M[:s, s + 1] = M[s + 1, :s] = 1.0 - inP
    M[s:, s:] = 0.0
    rhs = np.zeros(s + 2)
    rhs[s:] = 1.0
    # LAPACK directly: these systems are tiny, call overhead rules (dgesv solves a copy of M)
    _, _, sol, info = dgesv(M, rhs)
    r = M @ sol - rhs
    if info != 0 or not float(r @ r) <= _KKT_RTOL**2:  # the negation also catches nan and inf
        sol = np.linalg.lstsq(M, rhs, rcond=None)[0]
    return sol[:s]


@njit(cache=True)
def _drop_step(w: np.ndarray, target: np.ndarray, inP: np.ndarray, s: int,
               keep: np.ndarray) -> None:
    """The minor cycle's step on the first ``s`` points, in place: ``w`` moves toward ``target``
    until the first weight reaches 0 (ratio ``w_a / (w_a - target_a)`` over ``target_a <= 0``; 0
    when ``w_a = target_a = 0``), that point and every other at 0 leave (``keep[a]`` False, but a
    side never empties: its heaviest point stays), and each side's kept weights are rescaled to
    sum to 1."""
    out, step = -1, np.inf
    for a in range(s):
        if target[a] <= 0.0:
            den = w[a] - target[a]
            r = w[a] / den if den > 0.0 else 0.0
            if r < step:
                out, step = a, r
    step = min(1.0, step)
    for a in range(s):
        w[a] += step * (target[a] - w[a])
        keep[a] = w[a] > 0.0
    keep[out] = False
    for side in (1.0, 0.0):
        best, any_kept = -1, False
        for a in range(s):
            if inP[a] == side:
                any_kept = any_kept or keep[a]
                if best < 0 or w[a] > w[best]:
                    best = a
        if not any_kept:
            keep[best] = True
        total = 0.0
        for a in range(s):
            if inP[a] == side and keep[a]:
                total += w[a]
        for a in range(s):
            if inP[a] == side and keep[a]:
                w[a] /= total


@njit(cache=True)
def _dense_affine(G: np.ndarray, s: int, inP: np.ndarray, scale: float, A: np.ndarray,
                  x: np.ndarray) -> bool:
    """The minor cycle's KKT system on the first ``s`` points, equilibrated by ``scale`` (as
    :func:`_affine_minimiser`), by Gaussian elimination with partial pivoting: ``x[:s]`` is
    ``w``. False when a pivot vanishes or the residual exceeds ``_KKT_RTOL``."""
    m = s + 2
    for a in range(s):
        for b in range(s):
            A[a, b] = G[a, b] / scale
        A[a, s] = A[s, a] = inP[a]
        A[a, s + 1] = A[s + 1, a] = 1.0 - inP[a]
        x[a] = 0.0
    A[s, s] = A[s, s + 1] = A[s + 1, s] = A[s + 1, s + 1] = 0.0
    x[s] = x[s + 1] = 1.0
    for k in range(m):
        p = k
        for r in range(k + 1, m):
            if abs(A[r, k]) > abs(A[p, k]):
                p = r
        if not abs(A[p, k]) > 0.0:
            return False
        if p != k:
            for c in range(k, m):
                A[k, c], A[p, c] = A[p, c], A[k, c]
            x[k], x[p] = x[p], x[k]
        for r in range(k + 1, m):
            f = A[r, k] / A[k, k]
            if f != 0.0:
                for c in range(k + 1, m):
                    A[r, c] -= f * A[k, c]
                x[r] -= f * x[k]
    for k in range(m - 1, -1, -1):
        t = x[k]
        for c in range(k + 1, m):
            t -= A[k, c] * x[c]
        x[k] = t / A[k, k]
    r2 = 0.0  # residual of the equilibrated system, rebuilt from G
    sum_p, sum_q = -1.0, -1.0
    for a in range(s):
        r = inP[a] * x[s] + (1.0 - inP[a]) * x[s + 1]
        for b in range(s):
            r += G[a, b] / scale * x[b]
        r2 += r * r
        sum_p += inP[a] * x[a]
        sum_q += (1.0 - inP[a]) * x[a]
    r2 += sum_p * sum_p + sum_q * sum_q
    return r2 <= _KKT_RTOL * _KKT_RTOL  # False for nan


@njit(cache=True)
def _small_corral_cycles(data: tuple, state: tuple, stop: tuple, hist: tuple, cap: int) -> tuple:
    """Wolfe's major and minor cycles, compiled, while the corral has fewer than ``cap`` points
    (dense solves, :func:`_dense_affine`; kernel rows of the corral in slots of one array).

    Returns ``(iterations, code, n_hist)`` as :func:`wolfe_loop`; code -1 hands the run on
    (``lam``, ``g``, ``z`` current) when the next point would make the corral ``cap`` long or
    a dense solve fails.
    """
    X, kd, y, kp, _, _ = data
    lam, g, z, _ = state
    n = y.shape[0]
    linear = kp[0] == 0
    m = cap + 1
    corral = np.empty(m, np.int64)
    slot = np.empty(m, np.int64)
    w = np.empty(m)
    inP = np.empty(m)
    keep = np.empty(m, np.bool_)
    G = np.empty((m, m))
    A = np.empty((m + 2, m + 2))
    target = np.empty(m + 2)
    rows = np.zeros((1 if linear else m, n))  # rows[slot[a]] = K(x_corral[a], .)
    coef = np.zeros(rows.shape[0])
    s = 0
    for i in range(n):
        if lam[i] > 0.0:
            if s == cap - 1:
                return np.int64(0), np.int64(-1), np.int64(0)
            corral[s], slot[s], w[s] = i, s, lam[i]
            inP[s] = 1.0 if y[i] > 0 else 0.0
            s += 1
    for a in range(s):
        if not linear:
            kernel_column(data, corral[a], rows[a])
    for a in range(s):
        for b in range(s):
            u, v = corral[a], corral[b]
            k = np.dot(X[u], X[v]) if linear else rows[slot[a], v]
            G[a, b] = y[u] * y[v] * k
    scale = max(np.max(kd), 0.0)
    if not scale > 0.0:
        scale = 1.0
    it, n_hist, last = np.int64(0), np.int64(0), np.inf
    while True:
        code, n_hist, fp, fq, _, _, zz = examine(it, data, state, stop, hist, n_hist)
        if code >= 0:
            return it, code, n_hist
        if zz >= last:
            return it, np.int64(STALLED), n_hist
        last = zz
        part_p, part_q = -g[fp], g[fq]
        for a in range(s):
            if inP[a] > 0.0:
                part_p += w[a] * g[corral[a]]
            else:
                part_q -= w[a] * g[corral[a]]
        new = fp if part_p >= part_q else fq
        for a in range(s):
            if corral[a] == new:
                return it, np.int64(STALLED), n_hist
        free = 0  # the lowest slot no corral point uses
        while True:
            used = False
            for a in range(s):
                used = used or slot[a] == free
            if not used:
                break
            free += 1
        corral[s], slot[s], w[s] = new, free, 0.0
        inP[s] = 1.0 if y[new] > 0 else 0.0
        if not linear:
            kernel_column(data, new, rows[free])
        for a in range(s + 1):
            u = corral[a]
            k = np.dot(X[u], X[new]) if linear else rows[free, u]
            G[a, s] = G[s, a] = y[u] * y[new] * k
        s += 1
        handoff = False
        for _ in range(s + 1):  # minor cycles: each drops one point
            if not _dense_affine(G, s, inP, scale, A, target):
                handoff = True
                break
            t_min = np.inf
            for a in range(s):
                t_min = min(t_min, target[a])
            if t_min > 0.0:
                for a in range(s):
                    w[a] = target[a]
                break
            _drop_step(w, target, inP, s, keep)
            k = 0
            for a in range(s):
                if keep[a]:
                    corral[k], slot[k], w[k], inP[k] = corral[a], slot[a], w[a], inP[a]
                    k2 = 0
                    for b in range(s):
                        if keep[b]:
                            G[k, k2] = G[a, b]
                            k2 += 1
                    k += 1
            s = k
        lam[:] = 0.0
        coef[:] = 0.0
        if linear:
            z[:] = 0.0
        for a in range(s):
            u = corral[a]
            lam[u] = w[a]
            if linear:
                for c in range(z.shape[0]):
                    z[c] += y[u] * w[a] * X[u, c]
            else:
                coef[slot[a]] = y[u] * w[a]
        if linear:
            np.dot(X, z, g)
        else:
            np.dot(coef, rows, g)
        it += 1
        if handoff or s >= cap - 1:
            return it, np.int64(-1), n_hist


def _triangular(R: np.ndarray, b: np.ndarray, trans: bool = False) -> np.ndarray:
    """``R^{-1} b`` (``R^{-T} b`` if ``trans``) for an upper triangular ``R``, by LAPACK's
    ``dtrtrs`` on ``R.T`` (lower triangular; for a C-ordered ``R`` the same memory, Fortran-ordered,
    so no copy; f2py copies any other layout) and none of the checks of
    :func:`scipy.linalg.solve_triangular`, whose call overhead ruled the minor cycles; a zero
    pivot raises :class:`numpy.linalg.LinAlgError`."""
    x, info = dtrtrs(R.T, b, lower=1, trans=0 if trans else 1)
    if info != 0:
        raise np.linalg.LinAlgError(f"triangular factor singular or invalid (dtrtrs info {info})")
    return x


def _bordered(G: np.ndarray, row: np.ndarray) -> np.ndarray:
    """``[[G, row[:-1]], [row[:-1]^T, row[-1]]]``: the corral's matrix with a point added."""
    s = G.shape[0]
    out = np.empty((s + 1, s + 1))
    out[:s, :s] = G
    out[s, :] = row
    out[:s, s] = row[:s]
    return out


class _Factor:
    """Upper Cholesky factor ``R`` of ``H = G / c + E E^T`` on the corral (``R^T R = H``).

    ``H`` is positive definite exactly when the corral is affinely independent (in the sense of
    the two simplices), and then the minor cycle's ``w`` is
    ``w = W (E^T W)^{-1} 1`` with ``W = H^{-1} E`` (from ``G w + E nu = 0``, ``E^T w = 1``):
    ``O(s^2)`` per solve, per added point (one triangular solve) and per removed point (Givens
    rotations, :func:`scipy.linalg.qr_delete`) instead of ``O(s^3)``.
    """

    def __init__(self, G: np.ndarray, inP: np.ndarray, c: float) -> None:
        self.c = c
        self.R: np.ndarray | None = None
        if G.shape[0] < _FACTOR_MIN:  # small corrals: the dense solve is cheaper
            return
        try:
            self.R = cholesky(self._h(G, inP, inP), check_finite=False)
        except np.linalg.LinAlgError:
            pass

    def _h(self, G: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``H`` from ``G`` and the memberships ``a`` (rows) and ``b`` (columns)."""
        return G / self.c + np.outer(a, b) + np.outer(1.0 - a, 1.0 - b)

    def append(self, row: np.ndarray, inP: np.ndarray) -> None:
        """Add the last point of the corral (``row = G[-1, :]``, ``inP`` the new memberships)."""
        if self.R is None:
            return
        h = self._h(row[None, :], inP[-1:], inP)[0]
        try:
            r = _triangular(self.R, h[:-1], trans=True)
        except np.linalg.LinAlgError:
            self.R = None
            return
        pivot = h[-1] - float(r @ r)
        if not pivot > _PIVOT_RTOL * h[-1]:  # affinely dependent in round-off
            self.R = None
            return
        s = r.size
        R = np.zeros((s + 1, s + 1))
        R[:s, :s], R[:s, s], R[s, s] = self.R, r, np.sqrt(pivot)
        self.R = R

    def remove(self, drop: np.ndarray) -> None:
        """Delete the points at the indices ``drop``."""
        for k in np.sort(drop)[::-1]:
            if self.R is None:
                return
            s = self.R.shape[0]
            if k < s - 1:
                self.R = qr_delete(np.eye(s), self.R, int(k), 1, "col", check_finite=False)[1]
            self.R = self.R[: s - 1, : s - 1]

    def solve(self, G: np.ndarray, inP: np.ndarray) -> np.ndarray | None:
        """The affine minimiser, or None when there is no factor or its KKT residual is large."""
        if self.R is None:
            return None
        E = np.column_stack([inP, 1.0 - inP])
        try:
            W = _triangular(self.R, _triangular(self.R, E, trans=True))
        except np.linalg.LinAlgError:
            return None
        _, _, t, info = dgesv(E.T @ W, np.ones(2))  # 2 x 2: LAPACK directly, as above
        if info != 0:
            return None
        w = W @ t
        # G w / c + E (1 - t) = 0 and E^T w = 1, in the units of the equilibrated system
        res = G @ w / self.c + E @ (E.T @ w - t)
        if not (np.all(np.isfinite(w)) and np.linalg.norm(res) <= _KKT_RTOL * max(
                1.0, float(np.abs(t).max())) and np.abs(E.T @ w - 1.0).max() <= _KKT_RTOL):
            return None
        return w


class _Columns:
    """Kernel columns ``K[:, i]`` of the corral in the slots of one ``(n, cap)`` Fortran array,
    so that ``g = sum_i c_i K[:, i]`` is one matrix-vector product with no copy (the slots of
    points that left have coefficient 0)."""

    def __init__(self, data: tuple, n: int) -> None:
        self.data = data
        self.buf = np.zeros((n, 16), order="F")
        self.slot: dict[int, int] = {}
        self.free: list[int] = []
        self.used = 0

    def get(self, i: int) -> np.ndarray:
        """``K[:, i]``, computed once while ``i`` is kept."""
        if i not in self.slot:
            if self.free:
                k = self.free.pop()
            else:
                if self.used == self.buf.shape[1]:
                    grown = np.zeros((self.buf.shape[0], 2 * self.used), order="F")
                    grown[:, : self.used] = self.buf
                    self.buf = grown
                k, self.used = self.used, self.used + 1
            kernel_column(self.data, i, self.buf[:, k])
            self.slot[i] = k
        return self.buf[:, self.slot[i]]

    def drop(self, i: int) -> None:
        """Release the slot of ``i`` (kept in ``buf``, unused until refilled)."""
        k = self.slot.pop(i, None)
        if k is not None:
            self.free.append(k)

    def combine(self, idx: list[int], coef: np.ndarray, out: np.ndarray) -> None:
        """``out = sum_t coef_t K[:, idx_t]``."""
        full = np.zeros(self.used)
        full[[self.slot[i] for i in idx]] = coef
        np.dot(self.buf[:, : self.used], full, out=out)


def wolfe_loop(data: tuple, state: tuple, stop: tuple, hist: tuple) -> tuple:
    """Wolfe's major and minor cycles (module docstring) on ``conv(P) - conv(Q)``.

    Same arguments and return value as :func:`maxmargin.algorithms.gilbert.gilbert_loop`. The
    cycles run compiled (:func:`_small_corral_cycles`) until the corral first reaches
    ``_FACTOR_MIN`` points; then from Python, driving the compiled ``examine`` and
    ``kernel_column``: each cycle is a few BLAS products and ``O(s^2)`` updates of a Cholesky
    factor, :class:`_Factor`, with a dense solve when round-off makes the factor unusable.
    Code 3 (stalled) when round-off leaves no descent: the vertex to add is already in the
    corral, or ``||z||`` did not decrease.
    """
    it, code, n_hist = _small_corral_cycles(data, state, stop, hist, _FACTOR_MIN)
    if code >= 0:
        return it, code, n_hist
    X, kd, y, kp, _, _ = data
    lam, g, z, _ = state
    n = y.shape[0]
    linear = kp[0] == 0
    corral = [int(i) for i in np.flatnonzero(lam)]
    columns = None if linear else _Columns(data, n)

    def column(i: int) -> np.ndarray:
        """``K[:, i]`` (kernels only; kept while ``i`` is in the corral)."""
        return columns.get(i)

    def cross(idx: list[int], i: int) -> np.ndarray:
        """``y_a y_i K(x_a, x_i)`` for ``a`` in ``idx``."""
        k = X[idx] @ X[i] if linear else column(i)[idx]
        return y[idx] * y[i] * k

    G = np.array([cross(corral, i) for i in corral])
    scale = float(np.max(kd)) if float(np.max(kd)) > 0.0 else 1.0
    factor = _Factor(G, (y[corral] > 0).astype(float), scale)
    w = lam[corral].copy()
    last = np.inf
    while True:
        code, n_hist, fp, fq, _, _, zz = examine(it, data, state, stop, hist, n_hist)
        if code >= 0:
            return it, code, n_hist
        if zz >= last:
            return it, STALLED, n_hist
        last = zz
        idx = np.array(corral)
        on_p = y[idx] > 0
        part_p = float(w[on_p] @ g[idx[on_p]]) - g[fp]
        part_q = g[fq] - float(w[~on_p] @ g[idx[~on_p]])
        new = int(fp if part_p >= part_q else fq)
        if new in corral:
            return it, STALLED, n_hist
        row = cross(corral + [new], new)
        G = _bordered(G, row)
        corral.append(new)
        w = np.append(w, 0.0)
        factor.append(row, (y[corral] > 0).astype(float))
        for _ in range(len(corral) + 1):  # minor cycles: each drops one point
            inP = (y[corral] > 0).astype(float)
            target = factor.solve(G, inP)
            if target is None and len(corral) >= _FACTOR_MIN:  # refactor, else solve densely
                factor = _Factor(G, inP, scale)
                target = factor.solve(G, inP)
            if target is None:
                target = _affine_minimiser(G, inP, scale)
            if target.min() > 0.0:
                w = target
                break
            keep = np.empty(len(corral), dtype=bool)
            _drop_step(w, target, inP, len(corral), keep)
            if columns is not None:
                for i in (c for c, k in zip(corral, keep, strict=True) if not k):
                    columns.drop(i)
            corral = [c for c, k in zip(corral, keep, strict=True) if k]
            factor.remove(np.flatnonzero(~keep))
            w, G = w[keep], G[np.ix_(keep, keep)]
        lam[:] = 0.0
        lam[corral] = w
        coef = y[corral] * w
        if linear:
            z[:] = X[corral].T @ coef
            g[:] = X @ z
        else:
            columns.combine(corral, coef, g)
        it += 1


def wolfe_hulls(
    P: Any,
    Q: Any,
    tol: float = WOLFE_TOL,
    max_iter: int = WOLFE_MAX_ITER,
    *,
    history_every: int | None = None,
) -> HullPairSolution:
    """Nearest points ``p in conv(P)``, ``q in conv(Q)`` by Wolfe's minimum-norm-point method.

    Parameters
    ----------
    P, Q : (n, d) and (m, d) arrays
    tol : float, > 0
        Stop when ``||z||^2 - min_{m in P-Q} <z, m> <= tol ||z||^2`` with ``z = p - q``
        (relative Frank-Wolfe duality gap); then ``(1 - tol) ||z|| <= distance <= ||z||``.
    max_iter : int
        Cap on the major cycles (status ``"max_iter"`` and a
        :class:`~maxmargin.exceptions.ConvergenceWarning` when reached).
    history_every : int, optional
        Record ``(iteration, relative gap, ||p - q||)`` every this many major cycles.

    Returns
    -------
    HullPairSolution
        Method ``"wolfe"``; intersecting hulls: distance 0, status ``"optimal"``.
    """
    return solve_hull_pair(wolfe_loop, "wolfe", P, Q, tol, max_iter, history_every,
                           WOLFE_MAX_ITER)

