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

Reduced hulls ``RCH(mu)``: the atoms are the vertices of ``RCH(P)`` and ``RCH(Q)`` the
linear-minimisation step returns (each at most ``floor(1/mu) + 1`` weighted points, the sorted
partial sum), not points; the corral keeps each one's points and weights (sparse) and its column
``<sum_i u_i phi(x_i), phi(.)>`` (kernels) or its point ``sum_i u_i x_i`` in R^d (linear kernel:
one product ``X z`` a major cycle), and the same affine minimiser, drop steps and factor act on
them. A major cycle adds the vertex of the side with the larger part of the gap and (linear
kernel), after its minor cycles, the other side's when its part was positive (two atoms for one
product ``X z``; a kernel's atom costs its points' columns, so there one a cycle).

Each major cycle lowers ``||z||`` strictly, no corral repeats, and the method ends in finitely
many steps with the exact optimum of the corral; in practice on close hulls the corral stays
small (at most ``d + 2`` points for the linear kernel) where Gilbert and MDM take
``O(1/gap)`` or slowly linear steps. It stops on the same relative gap rule as Gilbert/MDM.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from maxmargin._jit import njit
from maxmargin.algorithms._nearest_point import (
    STALLED,
    examine,
    kernel_column,
    solve_hull_pair,
)
from maxmargin.results import HullPairSolution
from maxmargin.tolerances import WOLFE_KKT_RTOL, WOLFE_PIVOT_RTOL, WOLFE_TOL

__all__ = ["wolfe_hulls", "wolfe_loop", "WOLFE_TOL", "WOLFE_MAX_ITER"]

#: Major cycles; each adds one point to the corral.
WOLFE_MAX_ITER = 100_000
#: The dense solve's Tikhonov term when the corral's KKT system is singular (equilibrated units).
_RIDGE = 1e-10
#: The corral's arrays start with room for this many points and double when full.
_FIRST_CAP = 16


@njit
def _h(G: np.ndarray, inP: np.ndarray, c: float, a: int, b: int) -> float:
    """``H_ab = G_ab / c + E_a . E_b`` with ``E_a = (inP_a, 1 - inP_a)``: the factored matrix."""
    return G[a, b] / c + inP[a] * inP[b] + (1.0 - inP[a]) * (1.0 - inP[b])


@njit
def _factor_append(L: np.ndarray, G: np.ndarray, inP: np.ndarray, c: float, s: int) -> bool:
    """Extend the lower Cholesky factor ``L`` (``L L^T = H`` on the first ``s`` points) by point
    ``s``: row ``s`` is ``r = L^{-1} H[:s, s]`` and its pivot ``sqrt(H_ss - r . r)``. False when
    the pivot is not above ``WOLFE_PIVOT_RTOL H_ss`` (the point is affinely dependent on the others
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
    if not p > WOLFE_PIVOT_RTOL * h_ss:
        return False
    L[s, s] = math.sqrt(p)
    return True


@njit
def _factor_build(L: np.ndarray, G: np.ndarray, inP: np.ndarray, c: float, s: int) -> bool:
    """A fresh factor of ``H`` on the first ``s`` points, a row at a time."""
    for j in range(s):
        if not _factor_append(L, G, inP, c, j):
            return False
    return True


@njit
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


@njit
def _factor_solve(L: np.ndarray, G: np.ndarray, inP: np.ndarray, c: float, s: int,
                  out: np.ndarray, W: np.ndarray) -> bool:
    """The minor cycle's affine minimiser from the factor: ``W = H^{-1} E`` (forward and backward
    substitutions), ``t = (E^T W)^{-1} 1`` and ``w = W t`` solve ``G w / c + E nu = 0``,
    ``E^T w = 1`` (then ``H w = E (1 - nu)``). ``out[:s] = w``; False when ``E^T W`` is
    singular, ``w`` is not finite or the KKT residual exceeds ``WOLFE_KKT_RTOL``."""
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
    ok = math.sqrt(r2) <= WOLFE_KKT_RTOL * max(1.0, abs(u1), abs(u2))
    ok = ok and abs(sum_p - 1.0) <= WOLFE_KKT_RTOL and abs(sum_q - 1.0) <= WOLFE_KKT_RTOL
    for i in range(s):
        ok = ok and math.isfinite(out[i])
    return ok


@njit
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


@njit
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


@njit
def _dense_affine(G: np.ndarray, s: int, inP: np.ndarray, scale: float, A: np.ndarray,
                  x: np.ndarray, ridge: float) -> bool:
    """The minor cycle's KKT system ``A [w; nu] = [0; 1]`` (:func:`_kkt_matrix`) by Gaussian
    elimination with partial pivoting: ``x[:s]`` is ``w``. False when a pivot vanishes or the
    residual of the system without ``ridge`` exceeds ``WOLFE_KKT_RTOL``."""
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
    return r2 <= WOLFE_KKT_RTOL * WOLFE_KKT_RTOL  # False for nan


@njit
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


#: The corral's counts, one record (read and written in place by the compiled cycles).
COUNTS = np.dtype([
    ("n_points", np.int64),  # points in the corral: the first n_points entries of its arrays
    ("slots_used", np.int64),  # rows of `columns` handed out so far (kernels)
    ("slots_free", np.int64),  # of them, given back: free_slots[:slots_free]
    ("factored", np.bool_),  # `factor` is the Cholesky factor of H on the corral
])


class Corral(NamedTuple):
    """Wolfe's corral ``S``: its points, their weights, its Gram block and the factor of its KKT
    matrix. Entry ``a < counts[0].n_points`` of each array is about the corral's ``a``-th point;
    the arrays have room for ``len(index)`` points and are replaced by larger ones when full
    (:func:`_with_room`)."""

    index: np.ndarray  # the points (rows of X)
    weight: np.ndarray  # w_a: convex weights on each side (lam on the corral)
    in_p: np.ndarray  # 1.0 for a point of P, 0.0 for one of Q (the membership column E_a)
    target: np.ndarray  # the minor cycle's affine minimiser
    keep: np.ndarray  # the drop step's verdict: the point stays
    gram: np.ndarray  # G_ab = y_a y_b K(x_a, x_b)
    factor: np.ndarray  # lower Cholesky factor L of H = G / c + E E^T
    solves: np.ndarray  # (2, room) scratch: W = H^{-1} E
    slot: np.ndarray  # kernels: the row of `columns` that holds K(x_a, .)
    columns: np.ndarray  # kernels: (room, n) the corral's kernel columns (linear: (1, n), unused;
    #                      reduced hulls, linear kernel: (room, d) the vertices' points in R^d)
    coef: np.ndarray  # kernels: y_a w_a by slot, for g = coef . columns
    free_slots: np.ndarray  # kernels: rows of `columns` no point holds
    counts: np.ndarray  # (1,) COUNTS
    atom_index: np.ndarray  # reduced hulls: (room, k) the points of the vertex by slot
    atom_weight: np.ndarray  # reduced hulls: (room, k) their weights (else both (1, 1))
    atom_size: np.ndarray  # reduced hulls: (room,) the vertex's number of points by slot


@njit
def _grown(a: np.ndarray, cap: int) -> np.ndarray:
    """``a`` (1-D) copied into a new array of length ``cap``."""
    out = np.empty(cap, a.dtype)
    for i in range(a.shape[0]):
        out[i] = a[i]
    return out


@njit
def _grown2(A: np.ndarray, rows: int, cols: int, keep_rows: int, keep_cols: int) -> np.ndarray:
    """A ``rows x cols`` array of zeros holding ``A[:keep_rows, :keep_cols]``."""
    out = np.zeros((rows, cols))
    for i in range(keep_rows):
        for j in range(keep_cols):
            out[i, j] = A[i, j]
    return out


@njit
def _empty_corral(cap: int, n: int, linear: bool, reduced: bool, k: int) -> Corral:
    """A corral with room for ``cap`` points (``reduced``: vertices of reduced hulls of at most
    ``k`` points each, kept in slots whatever the kernel, with columns of length ``n``) and no
    point in it."""
    room = cap if reduced else 1
    return Corral(
        np.empty(cap, np.int64), np.empty(cap), np.empty(cap), np.empty(cap),
        np.empty(cap, np.bool_), np.zeros((cap, cap)), np.zeros((cap, cap)), np.empty((2, cap)),
        np.empty(cap, np.int64), np.empty((1 if linear else cap, n)),
        np.zeros(1 if linear else cap), np.empty(cap, np.int64), np.zeros(1, COUNTS),
        np.zeros((room, k), np.int64), np.zeros((room, k)), np.zeros(room, np.int64),
    )


@njit
def _with_room(c: Corral, linear: bool) -> Corral:
    """``c`` itself, or when full (every slot is then used) the same corral in arrays of twice
    the room."""
    s = c.counts[0].n_points
    cap = c.index.shape[0]
    if s < cap:
        return c
    cap *= 2
    columns, coef = c.columns, c.coef
    atom_index, atom_weight, atom_size = c.atom_index, c.atom_weight, c.atom_size
    n, used = c.columns.shape[1], c.counts[0].slots_used
    if not linear:
        columns = _grown2(c.columns, cap, n, used, n)
        coef = np.zeros(cap)
    if atom_size.shape[0] > 1:
        k = atom_index.shape[1]
        atom_index = np.zeros((cap, k), np.int64)
        for r in range(used):  # loops: a slice assignment compiles more
            for t in range(k):
                atom_index[r, t] = c.atom_index[r, t]
        atom_weight = _grown2(c.atom_weight, cap, k, used, k)
        atom_size = _grown(c.atom_size, cap)
    return Corral(
        _grown(c.index, cap), _grown(c.weight, cap), _grown(c.in_p, cap), _grown(c.target, cap),
        _grown(c.keep, cap), _grown2(c.gram, cap, cap, s, s), _grown2(c.factor, cap, cap, s, s),
        np.empty((2, cap)), _grown(c.slot, cap), columns, coef, _grown(c.free_slots, cap),
        c.counts, atom_index, atom_weight, atom_size,
    )


@njit
def _claim_slot(c: Corral, a: int) -> int:
    """Give the corral's entry ``a`` a row of ``columns`` (a free one first); returns it."""
    k = c.counts[0]
    if k.slots_free > 0:
        k.slots_free -= 1
        c.slot[a] = c.free_slots[k.slots_free]
    else:
        c.slot[a] = k.slots_used
        k.slots_used += 1
    return c.slot[a]


@njit
def _take_slot(c: Corral, data: tuple, a: int) -> None:
    """Kernels: give the corral's point ``a`` a row of ``columns`` and put its kernel column
    there."""
    kernel_column(data, c.index[a], c.columns[_claim_slot(c, a)])


@njit
def _start_corral(data: tuple, lam: np.ndarray, scale: float) -> Corral:
    """The corral of the points with ``lam > 0`` (in index order), weights ``lam``, with its
    Gram block and factor."""
    X, y, kp = data[0], data[2], data[3]
    n = y.shape[0]
    linear = kp[0] == 0
    s = 0
    for i in range(n):
        if lam[i] > 0.0:
            s += 1
    cap = _FIRST_CAP
    while cap <= s:
        cap *= 2
    # no literals: see _start_reduced_corral
    c = _empty_corral(cap, n, linear, np.bool_(False), np.int64(1))
    s = np.int64(0)  # not a literal: a literal argument compiles a callee once more
    for i in range(n):
        if lam[i] > 0.0:
            c.index[s], c.weight[s], c.in_p[s] = i, lam[i], 1.0 if y[i] > 0 else 0.0
            if not linear:
                _take_slot(c, data, s)
            s += 1
    c.counts[0].n_points = s
    for a in range(s):
        for b in range(s):
            u, v = c.index[a], c.index[b]
            k = np.dot(X[u], X[v]) if linear else c.columns[c.slot[a], v]
            c.gram[a, b] = y[u] * y[v] * k
    c.counts[0].factored = _factor_build(c.factor, c.gram, c.in_p, scale, s)
    return c


@njit
def _vertex_to_add(c: Corral, g: np.ndarray, fp: int, fq: int) -> int:
    """The major cycle's choice: the Frank-Wolfe vertex ``fp`` of ``P`` or ``fq`` of ``Q`` whose
    part of the gap is larger, ``sum_{S cap P} w_a g_a - g_fp`` against ``g_fq - sum_{S cap Q}
    w_a g_a``."""
    part_p, part_q = -g[fp], g[fq]
    for a in range(c.counts[0].n_points):
        if c.in_p[a] > 0.0:
            part_p += c.weight[a] * g[c.index[a]]
        else:
            part_q -= c.weight[a] * g[c.index[a]]
    return fp if part_p >= part_q else fq


@njit
def _add_point(c: Corral, data: tuple, new: int, scale: float) -> Corral:
    """Point ``new`` joins the corral at weight 0: its kernel column (kernels), its row of the
    Gram block and of the factor. Returns the corral (in larger arrays when it was full)."""
    X, y, kp = data[0], data[2], data[3]
    linear = kp[0] == 0
    c = _with_room(c, linear)
    s = c.counts[0].n_points
    c.index[s], c.weight[s], c.in_p[s] = new, 0.0, 1.0 if y[new] > 0 else 0.0
    if not linear:
        _take_slot(c, data, s)
    for a in range(s + 1):
        u = c.index[a]
        k = np.dot(X[u], X[new]) if linear else c.columns[c.slot[s], u]
        c.gram[a, s] = c.gram[s, a] = y[u] * y[new] * k
    k = c.counts[0]
    k.factored = k.factored and _factor_append(c.factor, c.gram, c.in_p, scale, s)
    k.n_points = s + 1
    return c


@njit
def _affine_minimiser(c: Corral, scale: float) -> None:
    """``target`` = the affine minimiser on the corral: from the factor, from a fresh factor
    when round-off made it unusable, else by the dense solve."""
    k = c.counts[0]
    s = k.n_points
    ok = k.factored and _factor_solve(c.factor, c.gram, c.in_p, scale, s, c.target, c.solves)
    if not ok:
        k.factored = _factor_build(c.factor, c.gram, c.in_p, scale, s)
        ok = k.factored and _factor_solve(c.factor, c.gram, c.in_p, scale, s, c.target,
                                          c.solves)
    if not ok:
        _dense_minimiser(c.gram, s, c.in_p, scale, c.target)


@njit
def _drop_points(c: Corral, linear: bool) -> None:
    """The points with ``keep`` False leave: out of the factor (last first), their slots back,
    and the others (with their Gram block) moved to the front in order."""
    k = c.counts[0]
    s = m = k.n_points
    for a in range(s - 1, -1, -1):
        if not c.keep[a]:
            k.factored = k.factored and _factor_remove(c.factor, m, a)
            m -= 1
            if not linear:
                c.free_slots[k.slots_free] = c.slot[a]
                k.slots_free += 1
    kept = 0
    for a in range(s):
        if c.keep[a]:
            c.index[kept], c.slot[kept] = c.index[a], c.slot[a]
            c.weight[kept], c.in_p[kept] = c.weight[a], c.in_p[a]
            k2 = 0
            for b in range(s):
                if c.keep[b]:
                    c.gram[kept, k2] = c.gram[a, b]
                    k2 += 1
            kept += 1
    k.n_points = kept


@njit
def _minor_cycles(c: Corral, scale: float, linear: bool) -> None:
    """Until the affine minimiser is positive (then it is the new weight): move toward it to
    the first zero weight and drop the points at zero (:func:`_drop_step`). Each cycle drops at
    least one point."""
    for _ in range(c.counts[0].n_points + 1):
        _affine_minimiser(c, scale)
        s = c.counts[0].n_points
        t_min = np.inf
        for a in range(s):
            t_min = min(t_min, c.target[a])
        if t_min > 0.0:
            for a in range(s):
                c.weight[a] = c.target[a]
            return
        _drop_step(c.weight, c.target, c.in_p, s, c.keep)
        _drop_points(c, linear)


@njit
def _set_iterate(c: Corral, data: tuple, state: tuple) -> None:
    """``lam`` from the corral's weights, ``z = sum_a y_a w_a x_a`` and ``g = X z`` (linear), or
    ``g = sum_a y_a w_a K(x_a, .)`` from the corral's columns (one BLAS product)."""
    X, y, kp = data[0], data[2], data[3]
    lam, g, z = state[0], state[1], state[2]
    s = c.counts[0].n_points
    for i in range(lam.shape[0]):
        lam[i] = 0.0
    for a in range(s):
        lam[c.index[a]] = c.weight[a]
    if kp[0] == 0:
        for col in range(z.shape[0]):
            z[col] = 0.0
        for a in range(s):
            u = c.index[a]
            f = y[u] * c.weight[a]
            for col in range(z.shape[0]):
                z[col] += f * X[u, col]
        np.dot(X, z, g)
    else:
        used = c.counts[0].slots_used
        for q in range(used):
            c.coef[q] = 0.0
        for a in range(s):
            c.coef[c.slot[a]] = y[c.index[a]] * c.weight[a]
        np.dot(c.coef[:used], c.columns[:used], g)


# --- reduced hulls: the corral's entries are vertices of RCH(P) or RCH(Q) ----------------------
# An atom is a vertex u of one reduced hull (weights u_i on its set's points, the sorted partial
# sum of the linear-minimisation step, at most floor(1 / mu) + 1 of them); its slot holds u
# sparsely (``atom_index``, ``atom_weight``, ``atom_size``) and, for kernels, its column
# ``<sum_i u_i phi(x_i), phi(x_.)>`` (``columns``), so that ``G_ab = s_a s_b u_b . column_a``
# (``s`` = +1 on P, -1 on Q) and ``g = coef . columns``; for the linear kernel its point
# ``v = sum_i u_i x_i`` in R^d instead, ``G_ab = s_a s_b v_a . v_b``: no length-n work an atom.


@njit
def _atom_column(data: tuple, vidx: np.ndarray, vw: np.ndarray, lo: int, hi: int,
                 out: np.ndarray, col: np.ndarray) -> None:
    """``out = sum_{t in [lo, hi)} vw_t x_{vidx_t}`` in R^d (linear), else ``out_i = sum_t vw_t
    K(x_i, x_{vidx_t})`` from kernel columns (``col`` a buffer)."""
    X, kp = data[0], data[3]
    out[:] = 0.0
    if kp[0] == 0:
        for t in range(lo, hi):
            for c in range(X.shape[1]):
                out[c] += vw[t] * X[vidx[t], c]
        return
    for t in range(lo, hi):
        kernel_column(data, vidx[t], col)
        for i in range(out.shape[0]):
            out[i] += vw[t] * col[i]


@njit
def _add_atom(c: Corral, data: tuple, col: np.ndarray, vidx: np.ndarray, vw: np.ndarray,
              lo: int, hi: int, side: float, scale: float) -> Corral:
    """The vertex ``vidx[lo:hi]``, ``vw[lo:hi]`` of one reduced hull (``side`` 1.0 for ``P``,
    0.0 for ``Q``) joins the corral at weight 0: its weights and column (linear: its point) in a
    slot, its rows of the Gram block and of the factor. Returns the corral (in larger arrays
    when it was full)."""
    c = _with_room(c, np.bool_(False))  # not a literal (see _start_reduced_corral)
    linear = data[3][0] == 0
    s = c.counts[0].n_points
    c.index[s], c.weight[s], c.in_p[s] = -1, 0.0, side
    r = _claim_slot(c, s)
    c.atom_size[r] = hi - lo
    for t in range(lo, hi):
        c.atom_index[r, t - lo], c.atom_weight[r, t - lo] = vidx[t], vw[t]
    new = c.columns[r]
    _atom_column(data, vidx, vw, lo, hi, new, col)
    for a in range(s + 1):
        k = 0.0
        if linear:
            k = np.dot(c.columns[c.slot[a]], new)
        else:
            for t in range(lo, hi):
                k += vw[t] * c.columns[c.slot[a], vidx[t]]
        sign = 1.0 if c.in_p[a] == side else -1.0
        c.gram[a, s] = c.gram[s, a] = sign * k
    k = c.counts[0]
    k.factored = k.factored and _factor_append(c.factor, c.gram, c.in_p, scale, s)
    k.n_points = s + 1
    return c


@njit
def _holds_atom(c: Corral, vidx: np.ndarray, vw: np.ndarray, lo: int, hi: int,
                side: float) -> bool:
    """Whether the vertex ``vidx[lo:hi]``, ``vw[lo:hi]`` of ``side`` is in the corral."""
    for a in range(c.counts[0].n_points):
        if c.in_p[a] != side:
            continue
        r = c.slot[a]
        same = c.atom_size[r] == hi - lo
        for t in range(lo, hi):  # both in index order (the sorted partial sum's)
            same = same and c.atom_index[r, t - lo] == vidx[t] and c.atom_weight[r, t - lo] == vw[t]
        if same:
            return True
    return False


@njit
def _start_reduced_corral(data: tuple, state: tuple, scale: float, k: int) -> Corral:
    """The corral of two atoms, ``lam`` on ``P`` and ``lam`` on ``Q`` (the start's vertex),
    each at weight 1; room for atoms of ``k`` points."""
    X, y, kp = data[0], data[2], data[3]
    lam, col, vidx, vw = state[0], state[3], state[4], state[5]
    n = y.shape[0]
    width = X.shape[1] if kp[0] == 0 else n  # an atom's point in R^d, or its kernel column
    # the arguments are not literals (constants): a literal argument compiles a callee once more
    c = _empty_corral(np.int64(_FIRST_CAP), width, np.bool_(False), np.bool_(True), k)
    for side in (1.0, 0.0):
        m = np.int64(0)
        for i in range(n):
            if lam[i] > 0.0 and (y[i] > 0) == (side > 0.0):
                vidx[m], vw[m] = i, lam[i]
                m += 1
        c = _add_atom(c, data, col, vidx, vw, np.int64(0), m, side, scale)
        c.weight[c.counts[0].n_points - 1] = 1.0
    c.counts[0].factored = _factor_build(c.factor, c.gram, c.in_p, scale, np.int64(2))
    return c


@njit
def _atom_parts(y: np.ndarray, lam: np.ndarray, g: np.ndarray, vidx: np.ndarray,
                vw: np.ndarray, nv: int) -> tuple:
    """The two parts of the gap on reduced hulls, ``<z, p> - min_{RCH(P)} <z, .>`` and
    ``max_{RCH(Q)} <z, .> - <z, q>``, and where ``Q``'s part of the last vertex starts in
    ``vidx`` (``P``'s first). Returns ``(part_p, part_q, split)``."""
    part_p = part_q = 0.0
    for i in range(y.shape[0]):
        if y[i] > 0:
            part_p += lam[i] * g[i]
        else:
            part_q -= lam[i] * g[i]
    split = np.int64(0)
    while split < nv and y[vidx[split]] > 0:
        part_p -= vw[split] * g[vidx[split]]
        split += 1
    for t in range(split, nv):
        part_q += vw[t] * g[vidx[t]]
    return part_p, part_q, split


@njit
def _set_reduced_iterate(c: Corral, data: tuple, state: tuple, mu: float) -> None:
    """``lam = sum_a w_a u_a`` (clipped to ``mu``), ``z = X^T (y lam)`` and ``g = X z``
    (linear), or ``g = sum_a s_a w_a column_a`` (one BLAS product)."""
    X, y, kp = data[0], data[2], data[3]
    lam, g, z = state[0], state[1], state[2]
    s = c.counts[0].n_points
    used = c.counts[0].slots_used
    lam[:] = 0.0
    c.coef[:] = 0.0
    for a in range(s):
        r = c.slot[a]
        for t in range(c.atom_size[r]):
            lam[c.atom_index[r, t]] += c.weight[a] * c.atom_weight[r, t]
        c.coef[c.slot[a]] = c.weight[a] if c.in_p[a] > 0.0 else -c.weight[a]
    for i in range(lam.shape[0]):
        lam[i] = min(lam[i], mu)
    if kp[0] == 0:
        z[:] = 0.0
        for i in range(lam.shape[0]):
            if lam[i] > 0.0:
                for col in range(z.shape[0]):
                    z[col] += y[i] * lam[i] * X[i, col]
        np.dot(X, z, g)
    else:
        np.dot(c.coef[:used], c.columns[:used], g)


@njit
def wolfe_loop(data: tuple, state: tuple, stop: tuple, hist: tuple, mu: float | None) -> tuple:
    """Wolfe's major and minor cycles (module docstring) on ``conv(P) - conv(Q)`` (``mu =
    None``) or ``RCH(mu)``, compiled.

    Same arguments and return value as :func:`maxmargin.algorithms.gilbert.gilbert_loop`. The
    :class:`Corral` keeps its Gram block ``G`` and the lower Cholesky factor ``L`` of ``H = G /
    c + E E^T`` (``c`` the largest ``K_ii``), updated in ``O(s^2)`` a point
    (:func:`_factor_append`, :func:`_factor_remove`); each minor cycle solves from ``L``. Kernels
    keep the corral's columns ``K(., x_a)`` in the rows of one array, so ``g`` is one BLAS
    product a major cycle. Code 3 (stalled) when round-off leaves no descent: the vertex to add
    is already in the corral, or ``||z||`` did not decrease.
    """
    kd, y, kp = data[1], data[2], data[3]
    lam, g, col, vidx, vw = state[0], state[1], state[3], state[4], state[5]
    points = kp[0] == 0 and mu is None  # the linear kernel's points need no slots
    scale = 0.0
    for i in range(kd.shape[0]):
        scale = max(scale, kd[i])
    if not scale > 0.0:
        scale = 1.0
    if mu is None:
        corral = _start_corral(data, lam, scale)
    else:
        # the largest vertex: floor(1 / mu) points at mu and one with the rest (smallest_mass)
        k = min(y.shape[0], int(math.floor(1.0 / mu)) + 2)
        corral = _start_reduced_corral(data, state, scale, np.int64(k))
    it, n_hist, last, zero = np.int64(0), np.int64(0), np.inf, np.int64(0)
    while True:
        code, n_hist, fp, fq, _, _, zz, nv, _ = examine(it, data, state, stop, hist, n_hist,
                                                        mu)
        if code >= 0:
            return it, code, n_hist
        if zz >= last:
            return it, np.int64(STALLED), n_hist
        last = zz
        turns = 1
        if mu is None:
            new = _vertex_to_add(corral, g, fp, fq)
            for a in range(corral.counts[0].n_points):
                if corral.index[a] == new:
                    return it, np.int64(STALLED), n_hist
        else:
            # the vertex of the side with the larger part of the gap joins; then (linear
            # kernel: an atom costs O(k d), a kernel's k columns) after the minor cycles the
            # other side's when its part was positive (one product X z for both: its weight
            # is 0 and it leaves at once when it gives no descent there)
            part_p, part_q, split = _atom_parts(y, lam, g, vidx, vw, nv)
            first, second, part = (1.0, zero, split), (0.0, split, nv), part_q
            if part_p < part_q:
                first, second, part = second, first, part_p
            if _holds_atom(corral, vidx, vw, first[1], first[2], first[0]):
                return it, np.int64(STALLED), n_hist
            if part > 0.0 and kp[0] == 0 and not _holds_atom(corral, vidx, vw, second[1],
                                                             second[2], second[0]):
                turns = 2
        for turn in range(turns):  # one call site each: compiled (and inlined) once
            if mu is None:
                corral = _add_point(corral, data, new, scale)
            else:
                side, lo, hi = first if turn == 0 else second
                corral = _add_atom(corral, data, col, vidx, vw, lo, hi, side, scale)
            _minor_cycles(corral, scale, points)
        if mu is None:
            _set_iterate(corral, data, state)
        else:
            _set_reduced_iterate(corral, data, state, mu)
        it += 1


def wolfe_hulls(
    P: Any,
    Q: Any,
    tol: float = WOLFE_TOL,
    max_iter: int = WOLFE_MAX_ITER,
    *,
    history_every: int | None = None,
    mu: float = 1.0,
) -> HullPairSolution:
    """Nearest points ``p in conv(P)``, ``q in conv(Q)`` by Wolfe's minimum-norm-point method.

    With ``mu < 1`` the nearest points of the reduced hulls ``RCH(mu)``: the corral's entries
    are the reduced hulls' vertices the linear-minimisation step returns (module docstring).

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
    mu : float, default 1.0
        The reduced hulls' weight bound, ``>= 1 / n`` and ``>= 1 / m`` (a ``ValueError``
        naming ``mu`` otherwise, before any work); ``>= 1``: the convex hulls.

    Returns
    -------
    HullPairSolution
        Method ``"wolfe"``; intersecting hulls: distance 0, status ``"optimal"``.
    """
    return solve_hull_pair(wolfe_loop, "wolfe", P, Q, tol, max_iter, history_every,
                           WOLFE_MAX_ITER, mu)

