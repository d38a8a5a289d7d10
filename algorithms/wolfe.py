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

import math
from typing import Any

import numpy as np
from numba import njit

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
#: Relative residual of the minor cycle's KKT system above which the solve is redone (from a
#: fresh factor, then densely).
_KKT_RTOL = 1e-8
#: A point whose Cholesky pivot is below this fraction of its diagonal is affinely dependent on
#: the corral in round-off: the factor is given up and the solve done densely.
_PIVOT_RTOL = 1e-12
#: The dense solve's Tikhonov term when the corral's KKT system is singular (equilibrated units).
_RIDGE = 1e-10
#: The corral's arrays start with room for this many points and double when full.
_FIRST_CAP = 16


@njit(cache=True, no_cpython_wrapper=True)
def _h(G: np.ndarray, inP: np.ndarray, c: float, a: int, b: int) -> float:
    """``H_ab = G_ab / c + E_a . E_b`` with ``E_a = (inP_a, 1 - inP_a)``: the factored matrix."""
    return G[a, b] / c + inP[a] * inP[b] + (1.0 - inP[a]) * (1.0 - inP[b])


@njit(cache=True)
def _factor_append(L: np.ndarray, G: np.ndarray, inP: np.ndarray, c: float, s: int) -> bool:
    """Extend the lower Cholesky factor ``L`` (``L L^T = H`` on the first ``s`` points) by point
    ``s``: row ``s`` is ``r = L^{-1} H[:s, s]`` and its pivot ``sqrt(H_ss - r . r)``. False when
    the pivot is not above ``_PIVOT_RTOL H_ss`` (the point is affinely dependent on the others
    in round-off)."""
    for i in range(s):
        t = _h(G, inP, c, i, s)
        for k in range(i):
            t -= L[i, k] * L[s, k]
        L[s, i] = t / L[i, i]
    h_ss = _h(G, inP, c, s, s)
    p = h_ss
    for k in range(s):
        p -= L[s, k] * L[s, k]
    if not p > _PIVOT_RTOL * h_ss:
        return False
    L[s, s] = math.sqrt(p)
    return True


@njit(cache=True, no_cpython_wrapper=True)
def _factor_build(L: np.ndarray, G: np.ndarray, inP: np.ndarray, c: float, s: int) -> bool:
    """A fresh factor of ``H`` on the first ``s`` points, a row at a time."""
    for j in range(s):
        if not _factor_append(L, G, inP, c, j):
            return False
    return True


@njit(cache=True)
def _factor_remove(L: np.ndarray, s: int, k: int) -> bool:
    """Delete point ``k`` from the factor of ``s`` points: row ``k`` leaves, and Givens rotations
    of the columns ``(j, j + 1)``, ``j >= k``, clear the superdiagonal it leaves behind, so that
    ``L L^T`` is ``H`` without row and column ``k`` (rotations keep ``L L^T``). False on a zero
    pivot."""
    for i in range(k, s - 1):
        for j in range(i + 2):
            L[i, j] = L[i + 1, j]
    for j in range(k, s - 1):
        a, b = L[j, j], L[j, j + 1]
        r = math.hypot(a, b)
        if not r > 0.0:
            return False
        cs, sn = a / r, b / r
        for i in range(j, s - 1):
            t1, t2 = L[i, j], L[i, j + 1]
            L[i, j] = cs * t1 + sn * t2
            L[i, j + 1] = cs * t2 - sn * t1
        L[j, j + 1] = 0.0
    return True


@njit(cache=True)
def _factor_solve(L: np.ndarray, G: np.ndarray, inP: np.ndarray, c: float, s: int,
                  out: np.ndarray, W: np.ndarray) -> bool:
    """The minor cycle's affine minimiser from the factor: ``W = H^{-1} E`` (forward and backward
    substitutions), ``t = (E^T W)^{-1} 1`` and ``w = W t`` solve ``G w / c + E nu = 0``,
    ``E^T w = 1`` (then ``H w = E (1 - nu)``). ``out[:s] = w``; False when ``E^T W`` is
    singular, ``w`` is not finite or the KKT residual exceeds ``_KKT_RTOL``."""
    for col in range(2):
        for i in range(s):  # L u = E[:, col]
            t = inP[i] if col == 0 else 1.0 - inP[i]
            for k in range(i):
                t -= L[i, k] * W[col, k]
            W[col, i] = t / L[i, i]
        for i in range(s - 1, -1, -1):  # L^T x = u, a row of L at a time
            W[col, i] /= L[i, i]
            x = W[col, i]
            for k in range(i):
                W[col, k] -= L[i, k] * x
    t11 = t12 = t21 = t22 = 0.0  # E^T W
    for i in range(s):
        t11 += inP[i] * W[0, i]
        t12 += inP[i] * W[1, i]
        t21 += (1.0 - inP[i]) * W[0, i]
        t22 += (1.0 - inP[i]) * W[1, i]
    det = t11 * t22 - t12 * t21
    if not abs(det) > 0.0:
        return False
    u1, u2 = (t22 - t12) / det, (t11 - t21) / det  # t = (E^T W)^{-1} 1
    sum_p = sum_q = 0.0
    for i in range(s):
        out[i] = W[0, i] * u1 + W[1, i] * u2
        sum_p += inP[i] * out[i]
        sum_q += (1.0 - inP[i]) * out[i]
    r2 = 0.0  # || G w / c + E (E^T w - t) ||^2
    for a in range(s):
        gw = 0.0
        for b in range(s):
            gw += G[a, b] * out[b]
        r = gw / c + inP[a] * (sum_p - u1) + (1.0 - inP[a]) * (sum_q - u2)
        r2 += r * r
    ok = math.sqrt(r2) <= _KKT_RTOL * max(1.0, abs(u1), abs(u2))
    ok = ok and abs(sum_p - 1.0) <= _KKT_RTOL and abs(sum_q - 1.0) <= _KKT_RTOL
    for i in range(s):
        ok = ok and math.isfinite(out[i])
    return ok


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


@njit(cache=True, no_cpython_wrapper=True)
def _kkt_matrix(G: np.ndarray, s: int, inP: np.ndarray, scale: float, A: np.ndarray,
                ridge: float) -> None:
    """``A = [G / scale + ridge I, E; E^T, 0]`` on the first ``s`` points (the minor cycle's KKT
    matrix, equilibrated by ``scale >= max |G|``, the largest ``K_ii``)."""
    for a in range(s):
        for b in range(s):
            A[a, b] = G[a, b] / scale
        A[a, a] += ridge
        A[a, s] = A[s, a] = inP[a]
        A[a, s + 1] = A[s + 1, a] = 1.0 - inP[a]
    A[s, s] = A[s, s + 1] = A[s + 1, s] = A[s + 1, s + 1] = 0.0


@njit(cache=True)
def _dense_affine(G: np.ndarray, s: int, inP: np.ndarray, scale: float, A: np.ndarray,
                  x: np.ndarray, ridge: float) -> bool:
    """The minor cycle's KKT system ``A [w; nu] = [0; 1]`` (:func:`_kkt_matrix`) by Gaussian
    elimination with partial pivoting: ``x[:s]`` is ``w``. False when a pivot vanishes or the
    residual of the system without ``ridge`` exceeds ``_KKT_RTOL``."""
    m = s + 2
    _kkt_matrix(G, s, inP, scale, A, ridge)
    for a in range(s):
        x[a] = 0.0
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
def _dense_minimiser(G: np.ndarray, s: int, inP: np.ndarray, scale: float,
                     out: np.ndarray) -> None:
    """``out[:s] = w`` by :func:`_dense_affine`; when the corral is affinely dependent (round-off)
    the system is singular, and ``RIDGE`` on the diagonal of ``G / scale`` picks, of its
    solutions, about the one of least norm (Tikhonov)."""
    m = s + 2
    A, x = np.empty((m, m)), np.empty(m)
    if not _dense_affine(G, s, inP, scale, A, x, 0.0):
        _dense_affine(G, s, inP, scale, A, x, _RIDGE)
    for a in range(s):
        out[a] = x[a]


@njit(cache=True, no_cpython_wrapper=True)
def _grown(a: np.ndarray, cap: int) -> np.ndarray:
    """``a`` (1-D) copied into a new array of length ``cap``."""
    out = np.empty(cap, a.dtype)
    for i in range(a.shape[0]):
        out[i] = a[i]
    return out


@njit(cache=True, no_cpython_wrapper=True)
def _grown2(A: np.ndarray, rows: int, cols: int, keep_rows: int, keep_cols: int) -> np.ndarray:
    """A ``rows x cols`` array of zeros holding ``A[:keep_rows, :keep_cols]``."""
    out = np.zeros((rows, cols))
    for i in range(keep_rows):
        for j in range(keep_cols):
            out[i, j] = A[i, j]
    return out


@njit(cache=True)
def wolfe_loop(data: tuple, state: tuple, stop: tuple, hist: tuple) -> tuple:
    """Wolfe's major and minor cycles (module docstring) on ``conv(P) - conv(Q)``, compiled.

    Same arguments and return value as :func:`maxmargin.algorithms.gilbert.gilbert_loop`. The
    corral's Gram block ``G`` and the lower Cholesky factor ``L`` of ``H = G / c + E E^T``
    (``c`` the largest ``K_ii``) are updated in ``O(s^2)`` a point (:func:`_factor_append`,
    :func:`_factor_remove`) and each minor cycle solves from ``L`` (:func:`_factor_solve`); a
    fresh factor, then a dense solve, takes over when round-off makes it unusable. Kernels keep
    the corral's columns ``K(., x_i)`` in the rows of one array, so ``g`` is one BLAS product a
    major cycle. Code 3 (stalled) when round-off leaves no descent: the vertex to add is already
    in the corral, or ``||z||`` did not decrease.
    """
    X, kd, y, kp, _, _ = data
    lam, g, z, _ = state
    n = y.shape[0]
    linear = kp[0] == 0
    scale = 0.0
    for i in range(n):
        scale = max(scale, kd[i])
    if not scale > 0.0:
        scale = 1.0
    s = 0
    for i in range(n):
        if lam[i] > 0.0:
            s += 1
    cap = _FIRST_CAP
    while cap <= s:
        cap *= 2
    corral, slot, free = np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64)
    w, inP, target = np.empty(cap), np.empty(cap), np.empty(cap)
    keep = np.empty(cap, np.bool_)
    Gc, L, W = np.zeros((cap, cap)), np.zeros((cap, cap)), np.empty((2, cap))
    rows = np.empty((1 if linear else cap, n))  # rows[slot[a]] = K(x_corral[a], .)
    coef = np.zeros(rows.shape[0])
    n_free = used = 0
    s = 0
    for i in range(n):
        if lam[i] > 0.0:
            corral[s], w[s], inP[s] = i, lam[i], 1.0 if y[i] > 0 else 0.0
            if not linear:
                slot[s] = used
                kernel_column(data, i, rows[used])
                used += 1
            s += 1
    for a in range(s):
        for b in range(s):
            u, v = corral[a], corral[b]
            k = np.dot(X[u], X[v]) if linear else rows[slot[a], v]
            Gc[a, b] = y[u] * y[v] * k
    has_L = _factor_build(L, Gc, inP, scale, s)
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
        if s == cap:  # full (then every slot is used): double the room
            cap *= 2
            corral, slot, free = _grown(corral, cap), _grown(slot, cap), _grown(free, cap)
            w, inP, target, keep = _grown(w, cap), _grown(inP, cap), _grown(target, cap), _grown(
                keep, cap)
            Gc, L, W = _grown2(Gc, cap, cap, s, s), _grown2(L, cap, cap, s, s), np.empty((2, cap))
            if not linear:
                rows, coef = _grown2(rows, cap, n, used, n), np.zeros(cap)
        corral[s], w[s], inP[s] = new, 0.0, 1.0 if y[new] > 0 else 0.0
        if not linear:
            if n_free > 0:
                n_free -= 1
                slot[s] = free[n_free]
            else:
                slot[s] = used
                used += 1
            kernel_column(data, new, rows[slot[s]])
        for a in range(s + 1):
            u = corral[a]
            k = np.dot(X[u], X[new]) if linear else rows[slot[s], u]
            Gc[a, s] = Gc[s, a] = y[u] * y[new] * k
        has_L = has_L and _factor_append(L, Gc, inP, scale, s)
        s += 1
        for _ in range(s + 1):  # minor cycles: each drops at least one point
            ok = has_L and _factor_solve(L, Gc, inP, scale, s, target, W)
            if not ok:
                has_L = _factor_build(L, Gc, inP, scale, s)
                ok = has_L and _factor_solve(L, Gc, inP, scale, s, target, W)
            if not ok:
                _dense_minimiser(Gc, s, inP, scale, target)
            t_min = np.inf
            for a in range(s):
                t_min = min(t_min, target[a])
            if t_min > 0.0:
                for a in range(s):
                    w[a] = target[a]
                break
            _drop_step(w, target, inP, s, keep)
            m = s
            for a in range(s - 1, -1, -1):  # leave the factor, last first
                if not keep[a]:
                    has_L = has_L and _factor_remove(L, m, a)
                    m -= 1
                    if not linear:
                        free[n_free] = slot[a]
                        n_free += 1
            k = 0
            for a in range(s):
                if keep[a]:
                    corral[k], slot[k], w[k], inP[k] = corral[a], slot[a], w[a], inP[a]
                    k2 = 0
                    for b in range(s):
                        if keep[b]:
                            Gc[k, k2] = Gc[a, b]
                            k2 += 1
                    k += 1
            s = k
        for i in range(n):
            lam[i] = 0.0
        for a in range(s):
            lam[corral[a]] = w[a]
        if linear:
            for c in range(z.shape[0]):
                z[c] = 0.0
            for a in range(s):
                u = corral[a]
                f = y[u] * w[a]
                for c in range(z.shape[0]):
                    z[c] += f * X[u, c]
            np.dot(X, z, g)
        else:
            for q in range(used):
                coef[q] = 0.0
            for a in range(s):
                coef[slot[a]] = y[corral[a]] * w[a]
            np.dot(coef[:used], rows[:used], g)
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

