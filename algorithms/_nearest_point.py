"""Shared machinery of the nearest-point algorithms (Gilbert, MDM and Wolfe in their modules).

One representation serves the polytope, the hull-pair and the SVM problems. The points are the
rows ``x_i`` of one array with signs ``y_i`` (+1 for the first set ``P``, -1 for the second set
``Q``) and convex weights ``lam`` on each set (``sum_{y_i=+1} lam_i = sum_{y_i=-1} lam_i = 1``).
The iterate is the point of the Minkowski difference ``conv(P) - conv(Q)``

.. math::

    z = \\sum_i y_i \\lambda_i \\phi(x_i) = p - q,

never formed from the ``n m`` difference points: its inner products ``g_i = <z, phi(x_i)>`` give
the support point of ``P - Q`` in direction ``-z`` as ``x_j - x_k`` with
``j = argmin_{y_i=+1} g_i`` and ``k = argmax_{y_i=-1} g_i``, so that

.. math::

    \\min_{m \\in P - Q} \\langle z, m \\rangle = g_j - g_k, \\qquad
    \\text{gap} = \\|z\\|^2 - (g_j - g_k) \\ge \\|z\\|^2 - \\rho \\|z\\| \\ge 0,

the Frank-Wolfe duality gap (``rho`` = distance of the hulls). Both algorithms stop when the
relative gap ``gap / ||z||^2`` is ``<= tol``; then ``omega = (g_j - g_k) / ||z||`` is a lower
bound on ``rho`` (the hyperplane ``<z, x> = omega ||z||`` separates), so
``(1 - tol) ||z|| <= rho <= ||z||``.

Reduced hulls ``RCH(mu) = {sum_i lam_i x_i : sum_i lam_i = 1, 0 <= lam_i <= mu}`` (``mu < 1``;
Bennett & Bredensteiner 2000, Crisp & Burges 2000): the same loops with one other
linear-minimisation step, the sorted partial sum (weight ``mu`` on the ``floor(1/mu)`` points
of ``P`` with the smallest ``g``, the rest ``1 - mu floor(1/mu)`` on the next; the same with the
largest ``g`` on ``Q``; :func:`reduced_hull_vertex`), whose vertex has several points. The
compiled code takes the hull kind as its type: ``mu`` is ``None`` for the convex hulls (``mu >= 1``;
the vertex is the two points of :func:`full_hull_vertex`) and a float for ``RCH(mu)``, and each
branch on it is ``if mu is None``, which Numba resolves from the argument's type before
compiling. So the two kinds are two specialisations, and the convex-hull code never compiles
the reduced hulls' steps.

The polytope problem ``min ||Q^T lam||`` is the hull pair ``(Q, {0})``: a zero point is appended
as the second set. The SVM uses ``X`` and ``y`` directly.

Linear kernel: ``z`` is kept explicitly in R^d and ``g = X z`` is one BLAS matrix-vector product per
step (exact, no drift). Other kernels: ``g`` is updated incrementally with two kernel columns
``K[:, u]``, ``K[:, v]`` per step: rows of the stored Gram matrix (``O(n)``) when it fits in
``GRAM_MAX_BYTES``, else computed from one BLAS product ``X x_u`` each (``O(n d)``). Distances
computed through a Gram matrix have an absolute resolution of about ``sqrt(eps) R``
(``R = max ||phi(x_i)||``). BLAS runs on one thread inside the loops (see
:func:`run_nearest_point`).

Hulls that intersect (distance 0) cannot meet a relative rule; the run stops with distance 0 when
``||z|| <= zero_atol`` where ``zero_atol = max(tol * S, floor)``, ``S = max_i ||phi(x_i) -
phi(x_0)||`` (translation-invariant data scale, between half and all of the diameter) and
``floor = 1e3 eps R`` (linear) or ``10 sqrt(eps) R`` (kernels). Since ``rho <= ||z||`` always,
this certifies ``rho <= zero_atol``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from threadpoolctl import ThreadpoolController

import maxmargin.exceptions as exceptions
from maxmargin._jit import njit, note_compile
from maxmargin._validation import (
    check_bool,
    check_hull_pair,
    check_max_iter,
    check_mu,
    check_positive,
    check_positive_int,
)
from maxmargin.algorithms.active_set import finish_alpha
from maxmargin.certificate import (
    Certificate,
    certify_hulls,
    certify_infeasible,
    certify_svm,
    decision_values,
    infeasible_message,
    within_resolution,
)
from maxmargin.certificate_nu import certify_reduced_hulls, reduced_support
from maxmargin.kernels import Kernel, LinearKernel
from maxmargin.kernels.formulas import KIND_GRAM, KIND_LINEAR
from maxmargin.kernels.qmatrix import fill_column, make_qmatrix
from maxmargin.kernels.qmatrix import kernel_value as engine_value
from maxmargin.results import (
    HullPairSolution,
    SVMSolution,
    infeasible_svm,
    join_messages,
    uncentred_intercept,
)
from maxmargin.tolerances import HULL_CERT_FACTOR, SVM_HULL_EPS

__all__ = [
    "OPTIMAL",
    "MAX_ITER",
    "INTERSECT",
    "STALLED",
    "NearestPointRun",
    "check_common",
    "run_nearest_point",
    "retried_by_wolfe",
    "solve_hull_pair",
    "svm_from_run",
    "centred",
]

#: Loop exit codes.
OPTIMAL, MAX_ITER, INTERSECT, STALLED = 0, 1, 2, 3
#: Target number of history records.
HISTORY_POINTS = 2000
#: Records per doubling of the iteration count, besides the uniform ones (see ``on_log_grid``).
LOG_GRID = 64
#: Non-linear kernels store the Gram matrix when it takes at most this many bytes (n <= 4096);
#: then a kernel column is a row read, O(n), instead of O(n d) arithmetic and n exponentials.
GRAM_MAX_BYTES = 128 * 2**20
#: The sorted partial sum selects its last value with a heap when it takes at most one value in
#: this many, else with ``np.partition`` (a heap's cost grows with the values it keeps).
HEAP_SELECT_RATIO = 32


# --------------------------------------------------------------------------------------------
# Compiled helpers. The loops pass four tuples around:
#   data  = (X, kd, y, kp, G, ke)     points (the linear kernel's; a placeholder otherwise),
#                                kernel diagonal K_ii, signs, kp = (kind,)
#                                with kind 0 linear (z kept in R^d) and 1 any other kernel, the
#                                Gram matrix G (0 x 0 when not stored), ke the kernel
#                                engine's data (maxmargin.algorithms._kernel_cache: compiled
#                                built-ins, any other kernel object called from here)
#   mu    = None (the convex hulls) or the reduced hulls' weight bound, an argument of its own
#           (``if mu is None`` is resolved by type: one specialisation per hull kind)
#   state = (lam, g, z, col, vidx, vw, img)  weights, g_i = <z, phi(x_i)>, z (linear kernel
#                                only), a buffer, and the last vertex of the difference the
#                                linear-minimisation step returned: its points vidx[:nv] with
#                                weights vw[:nv] (each set's sum 1) and room for its image
#                                (R^d linear, R^n kernel values)
#   stop  = (tol, zero_atol, max_iter, every)
#   hist  = (hist_it, hist_gap, hist_dist)
# --------------------------------------------------------------------------------------------


@njit
def sqdist(data: tuple, u: int, v: int) -> float:
    """``||phi(x_u) - phi(x_v)||^2 = K_uu + K_vv - 2 K_uv`` (direct difference when linear)."""
    X, diag, kp, G, ke = data[0], data[1], data[3], data[4], data[5]
    if G.shape[0] > 0:
        return max(G[u, u] + G[v, v] - 2.0 * G[u, v], 0.0)
    if kp[0] == 0:
        s = 0.0
        for c in range(X.shape[1]):
            diff = X[u, c] - X[v, c]
            s += diff * diff
        return s
    return max(diag[u] + diag[v] - 2.0 * engine_value(ke, u, v), 0.0)


@njit
def kernel_column(data: tuple, j: int, out: np.ndarray) -> None:
    """``out[i] = K(x_i, x_j)``: row ``j`` of the stored Gram matrix, one BLAS product ``X x_j``
    (linear), else a column of the kernel engine."""
    X, kp, G, ke = data[0], data[3], data[4], data[5]
    if G.shape[0] > 0:
        row = G[j]
        for i in range(out.shape[0]):  # a loop: a slice assignment compiles Numba's string code
            out[i] = row[i]
    elif kp[0] == 0:
        np.dot(X, X[j], out)
    else:
        fill_column(ke, j, np.int64(0), out.shape[0], out)  # ke.y = 1: K; int64: not a literal


@njit
def engine_gram(ke: Any, n: int) -> np.ndarray:
    """The ``n x n`` Gram matrix from the kernel engine's columns (compiled kernels only)."""
    G = np.empty((n, n))
    for j in range(n):
        fill_column(ke, j, np.int64(0), n, G[j])
    return G


@njit
def move(data: tuple, state: tuple, a: float, b: float, u: int, v: int) -> None:
    """The step ``z <- a z + b (phi(x_u) - phi(x_v))`` and ``g_i = <z, phi(x_i)>`` with it.

    Linear kernel: update ``z`` in R^d and recompute ``g = X z`` (one BLAS product, no drift).
    Otherwise ``g <- a g + b (K[:, u] - K[:, v])`` with two kernel columns.
    """
    X, kp = data[0], data[3]
    g, z, col = state[1], state[2], state[3]
    if kp[0] == 0:
        for c in range(X.shape[1]):
            z[c] = a * z[c] + b * (X[u, c] - X[v, c])
        np.dot(X, z, g)
        return
    kernel_column(data, u, col)
    for i in range(g.shape[0]):
        g[i] = a * g[i] + b * col[i]
    kernel_column(data, v, col)
    for i in range(g.shape[0]):
        g[i] -= b * col[i]


@njit
def scan(y: np.ndarray, lam: np.ndarray, g: np.ndarray, mu: float) -> tuple:
    """Toward and away points of both sets in one pass.

    Returns ``(fp, fq, ap, aq)``: ``fp = argmin g`` over the points of ``P`` (``y = +1``) with
    room (``lam < mu``; all of them for the convex hull, ``mu = inf`` here), ``fq = argmax g`` over
    those of ``Q`` with room, ``ap = argmax g`` over the active (``lam > 0``) points of ``P``
    and ``aq = argmin g`` over the active points of ``Q`` (-1 when there is none). For the convex
    hulls ``x_fp - x_fq`` is the support point of ``P - Q`` in direction ``-z``.
    """
    fp = fq = ap = aq = -1
    for i in range(y.shape[0]):
        if y[i] > 0:
            if lam[i] < mu and (fp < 0 or g[i] < g[fp]):
                fp = i
            if lam[i] > 0.0 and (ap < 0 or g[i] > g[ap]):
                ap = i
        else:
            if lam[i] < mu and (fq < 0 or g[i] > g[fq]):
                fq = i
            if lam[i] > 0.0 and (aq < 0 or g[i] < g[aq]):
                aq = i
    return fp, fq, ap, aq


@njit
def _kth_smallest(g: np.ndarray, y: np.ndarray, sign: float, m: int, need: int) -> float:
    """The ``need``-th smallest (from 1) of the values ``sign * g_i`` of the ``m`` points with
    ``y_i = sign``: a max-heap of the ``need`` smallest seen, one pass (``O(n log need)``, few
    heap moves when ``need`` is small against ``m``), else ``np.partition`` of the values."""
    if need * HEAP_SELECT_RATIO > m:
        values, t = np.empty(m), 0
        for i in range(y.shape[0]):
            if y[i] == sign:
                values[t] = sign * g[i]
                t += 1
        return np.partition(values, need - 1)[need - 1]
    heap, size = np.empty(need), 0
    for i in range(y.shape[0]):
        if y[i] != sign:
            continue
        v = sign * g[i]
        if size < need:  # sift up from the end
            j = size
            size += 1
            while j > 0 and heap[(j - 1) // 2] < v:
                heap[j] = heap[(j - 1) // 2]
                j = (j - 1) // 2
            heap[j] = v
        elif v < heap[0]:  # replace the largest, sift down
            j = 0
            while 2 * j + 1 < need:
                c = 2 * j + 1
                if c + 1 < need and heap[c + 1] > heap[c]:
                    c += 1
                if heap[c] <= v:
                    break
                heap[j] = heap[c]
                j = c
            heap[j] = v
    return heap[0]


@njit
def smallest_mass(g: np.ndarray, y: np.ndarray, sign: float, mu: float, vidx: np.ndarray,
                  vw: np.ndarray, nv: int) -> tuple:
    """The sorted partial sum on one set: ``min sum_i w_i values_i`` over ``0 <= w <= mu``,
    ``sum w = 1``, the values ``sign * g_i`` of the points with ``y_i = sign``.

    Weight ``mu`` on the ``k = floor(1 / mu)`` smallest values and ``1 - k mu`` on the next
    (``mu >= 1``: weight 1 on the smallest), ties broken by position. One selection
    (:func:`_kth_smallest`) finds the last value taken; the points are appended to
    ``vidx``, ``vw`` from entry ``nv`` in index order. Returns ``(nv, value, best)``: the new
    count, the minimum and the index of the smallest value (the first of equal ones); ``(nv,
    0.0, -1)`` when no point has ``y_i = sign``.
    """
    m = np.int64(0)  # not a literal 0: a literal argument compiles a callee once more
    for i in range(y.shape[0]):
        if y[i] == sign:
            m += 1
    if m == 0:
        return nv, 0.0, -1
    k, rest = np.int64(0), 1.0
    if mu < 1.0:
        k = min(int(math.floor(1.0 / mu)), m)
        rest = min(max(1.0 - k * mu, 0.0), mu) if k < m else 0.0
    need = k + (1 if rest > 0.0 else 0)
    last = _kth_smallest(g, y, sign, m, need)
    below = 0  # values < last; those equal to last take the places left, by position
    for i in range(y.shape[0]):
        if y[i] == sign and sign * g[i] < last:
            below += 1
    total, taken, best = 0.0, below, -1
    for i in range(y.shape[0]):
        if y[i] != sign:
            continue
        v = sign * g[i]
        w = 0.0
        if v < last:
            w = mu
        elif v == last and taken < need:
            w = mu if taken < k else rest
            taken += 1
        if w > 0.0:
            vidx[nv], vw[nv] = i, w
            nv += 1
            total += w * v
            if best < 0 or v < sign * g[best]:
                best = i
    return nv, total, best


@njit
def full_hull_vertex(g: np.ndarray, vidx: np.ndarray, vw: np.ndarray, fp: int,
                     fq: int) -> tuple:
    """The convex hulls' linear-minimisation step: the vertex ``x_fp - x_fq`` of ``P - Q``
    (:func:`scan`) and ``min_{m in P - Q} <z, m> = g_fp - g_fq``. Returns ``(nv, lower)``."""
    vidx[0], vw[0], vidx[1], vw[1] = fp, 1.0, fq, 1.0
    return np.int64(2), g[fp] - g[fq]  # not a literal: see start


@njit
def reduced_hull_vertex(y: np.ndarray, g: np.ndarray, mu: float, vidx: np.ndarray,
                        vw: np.ndarray) -> tuple:
    """The reduced hulls' linear-minimisation step: the vertex of ``RCH(P) - RCH(Q)``
    minimising ``<z, .>``, the sorted partial sum (:func:`smallest_mass`) of ``g`` on ``P``
    and of ``-g`` on ``Q``, and ``lower = min_{RCH(P)} <z, p> - max_{RCH(Q)} <z, q>``.
    Returns ``(nv, lower)``."""
    nv, low_p, _ = smallest_mass(g, y, 1.0, mu, vidx, vw, np.int64(0))  # not a literal
    nv, low_q, _ = smallest_mass(g, y, -1.0, mu, vidx, vw, nv)  # no Q: the origin, 0
    return nv, low_p + low_q


@njit
def vertex_image(data: tuple, state: tuple, nv: int) -> float:
    """``img`` = the vertex ``s = sum_a y_a w_a phi(x_a)`` (the last linear-minimisation
    step's): ``s`` in R^d (linear kernel) or ``<s, phi(x_i)>`` for every ``i`` (kernel columns).
    Returns ``||s||^2``."""
    X, y, kp = data[0], data[2], data[3]
    _, _, _, col, vidx, vw, img = state
    img[:] = 0.0
    ss = 0.0
    if kp[0] == 0:
        for a in range(nv):
            f = y[vidx[a]] * vw[a]
            for c in range(img.shape[0]):
                img[c] += f * X[vidx[a], c]
        for c in range(img.shape[0]):
            ss += img[c] * img[c]
        return ss
    for a in range(nv):
        kernel_column(data, vidx[a], col)
        f = y[vidx[a]] * vw[a]
        for i in range(img.shape[0]):
            img[i] += f * col[i]
    for a in range(nv):
        ss += y[vidx[a]] * vw[a] * img[vidx[a]]
    return max(ss, 0.0)


@njit
def vertex_sqnorm(data: tuple, state: tuple, nv: int, mu: float | None) -> float:
    """``||s||^2`` of the last vertex: :func:`sqdist` of its two points (convex hulls), else
    :func:`vertex_image` (which also leaves ``s`` in ``img`` for :func:`vertex_move`)."""
    vidx = state[4]
    if mu is None:
        return sqdist(data, vidx[0], vidx[1])
    return vertex_image(data, state, nv)


@njit
def vertex_move(data: tuple, state: tuple, a: float, b: float, mu: float | None) -> None:
    """The step ``z <- a z + b s`` toward the last vertex ``s``, with ``g``: :func:`move` for
    the convex hulls' two points, else from ``img`` (:func:`vertex_sqnorm` computed it)."""
    X, kp = data[0], data[3]
    _, g, z, _, vidx, _, img = state
    if mu is None:
        move(data, state, a, b, vidx[0], vidx[1])
        return
    if kp[0] == 0:
        for c in range(X.shape[1]):
            z[c] = a * z[c] + b * img[c]
        np.dot(X, z, g)
        return
    for i in range(g.shape[0]):
        g[i] = a * g[i] + b * img[i]


@njit
def on_log_grid(it: int) -> bool:
    """Every ``it < LOG_GRID``, then ``LOG_GRID`` evenly spaced records per doubling of ``it``.

    At most ``LOG_GRID * (log2(max_iter) + 1)`` records in all.
    """
    if it < LOG_GRID:
        return True
    octave = 1
    while 2 * octave <= it:
        octave *= 2
    return it % (octave // LOG_GRID) == 0


@njit
def examine(it: int, data: tuple, state: tuple, stop: tuple, hist: tuple, n_hist: int,
            mu: float | None) -> tuple:
    """The top of iteration ``it``: vertices, stopping tests and the bounded history.

    ``||z||^2`` is ``z . z`` (linear) or ``sum_i y_i lam_i g_i``; the linear-minimisation step
    (:func:`full_hull_vertex` or :func:`reduced_hull_vertex`, by ``mu``) leaves the vertex ``s``
    of the difference of the hulls in ``state`` and gives ``lower = <z, s> = min_m <z, m>``;
    ``gap = ||z||^2 - lower``. Code ``INTERSECT`` (2) if ``||z|| <= zero_atol``, ``OPTIMAL``
    (0) if ``gap <= tol ||z||^2``, ``MAX_ITER`` (1) if ``it == max_iter``, else -1 (go on).
    ``(it, gap / ||z||^2, ||z||)`` is recorded when ``it`` is a multiple of ``every``, on
    :func:`on_log_grid` (so log-scale plots see the early iterations too) and at the end.

    Returns ``(code, n_hist, fp, fq, ap, aq, zz, nv, lower)`` (see :func:`scan`; ``nv`` points
    in the vertex).
    """
    y, kp = data[2], data[3]
    lam, g, z, _, vidx, vw, _ = state
    tol, zero_atol, max_iter, every = stop
    fp, fq, ap, aq = scan(y, lam, g, np.inf if mu is None else mu)
    if mu is None:
        nv, lower = full_hull_vertex(g, vidx, vw, fp, fq)
    else:
        nv, lower = reduced_hull_vertex(y, g, mu, vidx, vw)
    zz = 0.0
    if kp[0] == 0:
        for c in range(z.shape[0]):
            zz += z[c] * z[c]
    else:
        for i in range(g.shape[0]):
            zz += y[i] * lam[i] * g[i]
    f = math.sqrt(max(zz, 0.0))
    gap = zz - lower
    code = -1
    if f <= zero_atol:
        code = 2
    elif gap <= tol * zz:
        code = 0
    elif it >= max_iter:
        code = 1
    if it % every == 0 or code >= 0 or on_log_grid(it):
        hist[0][n_hist] = it
        hist[1][n_hist] = gap / zz if zz > 0.0 else np.nan
        hist[2][n_hist] = f
        n_hist += 1
    return code, n_hist, fp, fq, ap, aq, zz, nv, lower


@njit
def start(data: tuple, state: tuple, mu: float | None) -> None:
    """Start at a vertex of the difference: ``a`` = first point of ``Q``; in ``P`` the points
    nearest to ``x_a`` (the nearest, ``j``, for the convex hull; the sorted partial sum of the
    distances, :func:`smallest_mass`, for ``RCH(mu)``), in ``Q`` those nearest to ``x_j`` (all
    distances through ``K``).

    For the polytope (``Q = {0}``) this is the seed's start: the vertex nearest the origin.
    With no point of ``Q`` (one set, whose nearest point to the origin is sought: ``RCH(mu)``
    only) the start is the sorted partial sum of the squared norms ``K_ii``. Sets ``lam`` to
    the vertex's weights, ``z`` to the vertex and ``g``.
    """
    kd, y = data[1], data[2]
    col, vidx, vw = state[3], state[4], state[5]
    a = 0
    while a < y.shape[0] and y[a] > 0:
        a += 1
    nv = np.int64(0)  # not a literal: a literal argument compiles a callee once more
    if a == y.shape[0]:  # one set, Q the origin (reduced hulls only): P's points nearest 0
        if mu is not None:
            nv, _, _ = smallest_mass(kd, y, 1.0, mu, vidx, vw, nv)
    else:
        for side in (1.0, -1.0):
            kernel_column(data, a, col)
            for i in range(col.shape[0]):
                col[i] = (kd[i] - 2.0 * col[i]) * side  # smallest_mass flips the sign back
            if mu is None:  # the nearest point (no selection compiled for the convex hulls)
                a = -1
                for i in range(y.shape[0]):
                    if y[i] == side and (a < 0 or side * col[i] < side * col[a]):
                        a = i
                vidx[nv], vw[nv] = a, 1.0
                nv += 1
            else:
                nv, _, a = smallest_mass(col, y, side, mu, vidx, vw, nv)
    place(data, state, nv, mu)


@njit
def restart(data: tuple, state: tuple, mu: float, weights: np.ndarray) -> None:
    """Start at ``weights`` (an earlier run's ``lam`` on the same reduced hulls) instead of a
    vertex: ``z`` and ``g`` recomputed from them (:func:`place`)."""
    vidx, vw = state[4], state[5]
    nv = np.int64(0)
    for i in range(weights.shape[0]):
        if weights[i] > 0.0:
            vidx[nv], vw[nv] = i, weights[i]
            nv += 1
    place(data, state, nv, mu)


@njit
def place(data: tuple, state: tuple, nv: int, mu: float | None) -> None:
    """``lam``, ``z`` and ``g`` at the point ``sum_a y_a vw_a phi(x_vidx_a)`` of the first
    ``nv`` vertices' weights."""
    lam, g, z, vidx, vw = state[0], state[1], state[2], state[4], state[5]
    lam[:] = 0.0
    for i in range(nv):
        lam[vidx[i]] = vw[i]
    z[:] = 0.0
    g[:] = 0.0
    vertex_sqnorm(data, state, nv, mu)
    vertex_move(data, state, 0.0, 1.0, mu)


# --------------------------------------------------------------------------------------------
# Python driver
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NearestPointRun:
    """The raw outcome of a nearest-point loop, with ``g`` recomputed exactly from ``lam``.

    ``zz = ||z||^2``, ``lower = min_{m in P-Q} <z, m>``, ``gap = (zz - lower) / zz``.
    """

    lam: np.ndarray
    g: np.ndarray
    zz: float
    lower: float
    gap: float
    code: int
    iterations: int
    history: dict[str, np.ndarray]
    message: str
    runtime: float
    zero_atol: float


@functools.cache
def _blas() -> ThreadpoolController:
    """The process's thread pools, found once (a fresh search is slow next to a step)."""
    return ThreadpoolController()


def check_common(tol: Any, max_iter: Any, history_every: Any, default_iter: int) -> tuple:
    """Validate ``tol > 0``, ``max_iter`` (None -> ``default_iter``) and ``history_every``
    (None -> ``ceil(max_iter / 2000)``, so at most about 2000 records)."""
    tol = check_positive(tol, "tol")
    max_iter = check_max_iter(max_iter, default=default_iter)
    if history_every is None:
        every = max(1, -(-max_iter // HISTORY_POINTS))
    else:
        every = check_positive_int(history_every, "history_every")
    return tol, max_iter, every


def exact_g(X: np.ndarray, y: np.ndarray, lam: np.ndarray, kernel: Kernel) -> np.ndarray:
    """``g_i = <z, phi(x_i)> = sum_j y_j lam_j K(x_j, x_i)`` from scratch (row blocks)."""
    S = np.flatnonzero(lam)
    return decision_values(kernel, X, X[S], y[S] * lam[S])


def run_nearest_point(
    loop: Callable,
    X: np.ndarray,
    y: np.ndarray,
    kernel: Kernel,
    tol: float,
    max_iter: int,
    every: int,
    hull_eps: float = 0.0,
    gram: bool = True,
    mu: float = 1.0,
    zero_rtol: float | None = None,
    warm: np.ndarray | None = None,
    zero_floor: bool = True,
) -> NearestPointRun:
    """Run a compiled nearest-point ``loop`` (Gilbert, MDM or Wolfe) on validated data.

    ``loop(data, state, stop, hist, mu) -> (iterations, code, n_hist)`` (tuples described above),
    starting from :func:`start`. ``hull_eps > 0`` (the SVM) raises the zero tolerance to
    ``hull_eps R``: hulls provably that close leave no margin the SVM can certify. ``mu < 1``:
    the reduced hulls ``RCH(mu)`` (validated); the weights come back clipped to ``[0, mu]``
    and ``lower`` is the reduced hulls' (:func:`~maxmargin.certificate_nu.reduced_support`).
    ``zero_rtol``: the zero tolerance is ``max(zero_rtol R, floor)`` instead (the ν-SVC's, whose
    judge resolves ``||z||`` down to about ``HULLS_MEET_ATOL R``). ``warm``: start at these
    weights (an earlier run's on the same reduced hulls, ``mu < 1``; Gilbert's and MDM's loops:
    Wolfe's corral starts from a vertex) instead of a vertex.
    ``zero_floor=False``: ``zero_rtol R`` alone, below the kernel columns' floor ``10 sqrt(eps)
    R`` (a run that goes on to the judge's resolution where the hulls may meet).
    """
    t0 = time.perf_counter()
    linear = kernel.kind == KIND_LINEAR and isinstance(X, np.ndarray)
    kp = (0,) if linear else (1,)
    n = X.shape[0]
    d = X.shape[1] if linear else 1
    # the engine's columns K(., x_j) (labels 1: Q = K); a placeholder for the linear kernel
    ke = make_qmatrix(kernel, X if not linear else X[:1], np.ones(n if not linear else 1))
    points = X if linear else np.zeros((n, 1))
    diag = kernel.diag(X)
    R = math.sqrt(max(float(diag.max()), 0.0))
    spread = diag + diag[0] - 2.0 * kernel.column(X, 0)
    scale = math.sqrt(max(float(spread.max()), 0.0))
    eps = float(np.finfo(float).eps)
    floor = 1e3 * eps * R if linear else 10.0 * math.sqrt(eps) * R
    zero_atol = max(tol * scale, floor, hull_eps * R) if zero_rtol is None else max(
        zero_rtol * R, floor if zero_floor else 0.0)

    lam, g, col = np.zeros(n), np.zeros(n), np.zeros(n)
    z = np.zeros(d)
    vidx, vw, img = np.zeros(n, dtype=np.int64), np.zeros(n), np.zeros(d if linear else n)
    one_set = not bool(np.any(y < 0))  # the nearest point of RCH(mu) of P to the origin
    # the hull kind as a type (module docstring); one set takes the reduced hulls' steps
    hull = None if mu >= 1.0 and not one_set else float(min(mu, 1.0))
    bound = math.inf if hull is None else hull
    size = max_iter // every + 2 + LOG_GRID * (max_iter.bit_length() + 1)
    hist_it = np.zeros(size, dtype=np.int64)
    hist_gap, hist_dist = np.zeros(size), np.zeros(size)
    G = np.zeros((0, 0))
    if ke.kind == KIND_GRAM:  # the Q-matrix holds this kernel's Gram matrix already
        G = ke.G
    elif gram and kp[0] != 0 and 8 * n * n <= GRAM_MAX_BYTES:
        G = engine_gram(ke, n)  # from the compiled columns (vectorised exponential)
    data, state = (points, diag, y, kp, G, ke), (lam, g, z, col, vidx, vw, img)
    # One BLAS thread: a threaded gemv of this size spends more on synchronisation than it
    # saves on matrices of this size, and far more when the other core is busy.
    note_compile(loop, f"the nearest-point loop ({loop.__name__})", "several seconds of CPU")
    with _blas().limit(limits=1, user_api="blas"):
        if warm is None or hull is None:
            start(data, state, hull)
        else:
            restart(data, state, hull, np.clip(warm, 0.0, hull))
        iterations, code, n_hist = loop(
            data, state, (tol, zero_atol, max_iter, every), (hist_it, hist_gap, hist_dist), hull
        )

    if bound < math.inf:
        np.clip(lam, 0.0, bound, out=lam)
    g = exact_g(X, y, lam, kernel)
    zz = float(np.dot(y * lam, g))
    lower = reduced_support(g[y > 0], bound) + (0.0 if one_set else
                                                 reduced_support(-g[y < 0], bound))
    gap = (zz - lower) / zz if zz > 0 else math.nan
    dist = math.sqrt(max(zz, 0.0))
    if code == INTERSECT:
        message = (
            f"the hulls are within the zero tolerance: ||p - q|| = {dist:.3g} <= "
            f"{zero_atol:.3g} (distance reported as 0)"
        )
    elif code == MAX_ITER:
        message = f"max_iter={max_iter} reached at relative gap {gap:.3g} > tol={tol:.3g}"
        if lower <= 0:
            message += "; the lower bound min <z, m> <= 0 does not show the hulls are apart"
    elif code == STALLED:
        message = f"no descent step left at relative gap {gap:.3g} (round-off); stopped"
    else:
        message = ""
    history = {
        "iteration": hist_it[:n_hist].copy(),
        "gap": hist_gap[:n_hist].copy(),
        "distance": hist_dist[:n_hist].copy(),
    }
    return NearestPointRun(
        lam=lam, g=g, zz=zz, lower=lower, gap=gap, code=int(code), iterations=int(iterations),
        history=history, message=message, runtime=time.perf_counter() - t0, zero_atol=zero_atol,
    )  # fmt: skip


def status_of(
    run: NearestPointRun, name: str, *, intersect: str = "optimal", stacklevel: int = 4,
    warn: bool = True,
) -> str:
    """Map a loop code to a status (warning ``ConvergenceWarning`` at ``max_iter`` if ``warn``;
    ``stacklevel`` 4 points at the caller of a public function that calls a helper that calls
    this)."""
    if run.code == MAX_ITER:
        if warn:
            warnings.warn(f"{name}: {run.message}", exceptions.ConvergenceWarning,
                          stacklevel=stacklevel)
        return "max_iter"
    if run.code == STALLED:
        return "inaccurate"
    if run.code == INTERSECT:
        return intersect
    return "optimal"


def solve_hull_pair(
    loop: Callable,
    method: str,
    P: Any,
    Q: Any,
    tol: Any,
    max_iter: Any,
    history_every: Any,
    default_iter: int,
    mu: Any = 1.0,
    finish: Any = False,
    finisher: tuple[Callable, int] | None = None,
) -> HullPairSolution:
    """Validate, run ``loop`` on ``rows of P`` (+1) and ``rows of Q`` (-1), build the solution.

    ``p = P^T lam_P``, ``q = Q^T lam_Q``, ``distance = ||p - q||`` (0 when the hulls intersect).
    ``mu < 1``: the reduced hulls ``RCH(mu)`` (``mu >= 1 / |P|, 1 / |Q|``, checked first), judged
    by :func:`~maxmargin.certificate_nu.certify_reduced_hulls`. Hulls within the zero tolerance
    (``INTERSECT``) are judged by the certificate's own float64 ``||z||``: within that tolerance
    the reported distance 0 is within ``||z||`` of the truth and the gap and KKT terms, relative
    to ``||z||^2``, say nothing more (reported as 0); above it "inaccurate". A run stopped at
    ``max_iter`` or by round-off whose answer the certificate confirms is "optimal", as in
    :func:`svm_from_run`: the certificate, not the stop, decides. With ``finish``
    (validated) a run that does not end "optimal" is solved again by ``finisher = (loop,
    max_iter)`` (Wolfe's method) at the same ``tol``: kept, under ``method``'s name and saying
    so, when that ends "optimal"; else the run's own answer and warnings.
    """
    P, Q = check_hull_pair(P, Q)
    mu = check_mu(mu, {"P": P, "Q": Q})
    tol, max_iter, every = check_common(tol, max_iter, history_every, default_iter)
    finish = check_bool(finish, "finish")
    X = np.vstack([P, Q])
    X -= X.mean(axis=0)  # the pair's distance is the centred pair's (resolutions from the mean)
    y = np.concatenate([np.ones(P.shape[0]), -np.ones(Q.shape[0])])
    if not finish or finisher is None:
        return _hull_pair(loop, method, P, Q, X, y, tol, max_iter, every, mu)
    return retried_by_wolfe(
        lambda: _hull_pair(loop, method, P, Q, X, y, tol, max_iter, every, mu),
        lambda: _hull_pair(finisher[0], method, P, Q, X, y, tol, finisher[1], every, mu),
        method, ("optimal",), stacklevel=4)


_Answer = TypeVar("_Answer", HullPairSolution, SVMSolution)


def retried_by_wolfe(first: Callable[[], _Answer], wolfe: Callable[[], _Answer], method: str,
                     good: tuple[str, ...], stacklevel: int) -> _Answer:
    """``first()``; where its status is not in ``good``, ``wolfe()`` (Wolfe's exact steps where
    Gilbert's and MDM's crawl), its non-convergence warnings silenced, kept when its status is
    in ``good``: its message says so, its runtime is both runs'. Otherwise the first answer,
    its warnings re-emitted at ``stacklevel`` (counted from this function: the caller of the
    public function)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = first()
    if sol.status not in good:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", exceptions.ConvergenceWarning)
            again = wolfe()
        if again.status in good:
            note = f"{method} ended {sol.status} ({sol.message}); finished by Wolfe's method"
            return dataclasses.replace(again, message=join_messages(note, again.message),
                                       runtime=sol.runtime + again.runtime)
    for w in caught:
        warnings.warn(w.message, w.category, stacklevel=stacklevel)
    return sol


def _hull_pair(loop: Callable, method: str, P: np.ndarray, Q: np.ndarray, X: np.ndarray,
               y: np.ndarray, tol: float, max_iter: int, every: int, mu: float
               ) -> HullPairSolution:
    """One run of :func:`solve_hull_pair` on the validated, centred pair ``X``, judged."""
    run = run_nearest_point(loop, X, y, LinearKernel(), tol, max_iter, every, mu=mu)
    status = status_of(run, method, warn=False)
    wp, wq = run.lam[: P.shape[0]], run.lam[P.shape[0] :]
    p, q = P.T @ wp, Q.T @ wq
    distance = 0.0 if run.code == INTERSECT else float(np.linalg.norm(p - q))
    cert = certify_hulls(P, Q, wp, wq) if mu >= 1.0 else certify_reduced_hulls(P, Q, wp, wq, mu)
    if run.code == INTERSECT and cert.distance <= run.zero_atol:
        cert = dataclasses.replace(cert, gap=0.0, kkt_violation=0.0)
    certified = cert.meets(HULL_CERT_FACTOR * tol)
    status, message = _settled(status, certified, run.message)
    if status in ("max_iter", "inaccurate"):
        warnings.warn(f"{method}: {run.message}", exceptions.ConvergenceWarning, stacklevel=4)
    status = _confirmed(status, certified, method, cert.summary(), stacklevel=5)
    message = join_messages(message, cert.summary())
    return HullPairSolution(
        weights_p=wp, weights_q=wq, p=p, q=q, distance=distance, status=status,
        iterations=run.iterations, method=method, history=run.history, gap=run.gap,
        message=message, runtime=run.runtime, certificate=cert,
    )  # fmt: skip


def _settled(status: str, certified: bool, message: str) -> tuple[str, str]:
    """A run stopped at ``max_iter`` or by round-off whose answer the certificate confirms is
    ``"optimal"`` (the stop cut the method's own gap short, not the answer), its message saying
    so; any other ``(status, message)`` is kept."""
    if status in ("max_iter", "inaccurate") and certified:
        return "optimal", join_messages(message,
                                        "the float64 certificate confirms the answer as it is")
    return status, message


def _confirmed(status: str, certified: bool, method: str, summary: str,
               stacklevel: int = 4) -> str:
    """An ``"optimal"`` stop the float64 certificate does not confirm becomes ``"inaccurate"``
    (with a :class:`ConvergenceWarning` at ``stacklevel``); any other status is kept."""
    if status != "optimal" or certified:
        return status
    warnings.warn(f"{method}: the float64 certificate does not confirm the stop: {summary}",
                  exceptions.ConvergenceWarning, stacklevel=stacklevel)
    return "inaccurate"


def infeasible_solution(
    X: np.ndarray, y: np.ndarray, kernel: Kernel, method: str, weights: np.ndarray,
    message: str = "", iterations: int = 0, history: dict[str, np.ndarray] | None = None,
    runtime: float = 0.0, evidence: Certificate | None = None,
) -> SVMSolution:
    """The hard-margin answer on non-separable data (:func:`~maxmargin.results.infeasible_svm`),
    with the convex ``weights`` found as the evidence
    (:func:`~maxmargin.certificate.certify_infeasible`; ``evidence`` when already computed)."""
    cert = certify_infeasible(weights, X, y, kernel) if evidence is None else evidence
    if not message:
        message = infeasible_message(cert, SVM_HULL_EPS)
    return infeasible_svm(X, y, kernel, method, message, cert, iterations=iterations,
                          history=history, runtime=runtime)


def centred(X: Any, kernel: Kernel) -> tuple[Any, np.ndarray | None]:
    """``(X - mean, mean)`` for dense data and the linear kernel, else ``(X, None)``.

    The hull distance and the SVM do not change under a translation of the data, and for the
    linear kernel neither do ``z = p - q`` nor ``w`` (``b`` shifts by ``-<w, mean>``): run on
    centred data, the methods' resolutions (``zero_atol``, ``SVM_HULL_EPS R``) are measured
    from the data's centre, not from an origin the data may lie far from. Translation-invariant
    kernels (rbf: ``K(x, x) = 1``) need nothing; other kernels (poly, sigmoid, callables) are
    not translation-invariant and keep the user's origin.
    """
    if kernel.kind != KIND_LINEAR or not isinstance(X, np.ndarray):
        return X, None
    mean = X.mean(axis=0)
    return X - mean, mean


def svm_from_run(
    run: NearestPointRun, X: np.ndarray, y: np.ndarray, kernel: Kernel, method: str, tol: float,
    finish: bool = True, X_user: np.ndarray | None = None, mean: np.ndarray | None = None,
) -> SVMSolution:
    """The hard-margin SVM from the nearest points ``p``, ``q`` of the two classes' hulls.

    With ``d = p - q`` (``||d||^2 = zz``), ``w = 2 d / ||d||^2``,
    ``b = (||q||^2 - ||p||^2) / ||d||^2 = -<d, p + q> / ||d||^2 = -(sum_i lam_i g_i) / zz`` and
    ``alpha_i = 2 lam_i / ||d||^2``. Intersecting hulls give status ``"infeasible"`` with NaN
    ``alpha``/``b``/``w`` and infinite objectives (the hard-margin primal is infeasible, its dual
    unbounded). The float64 certificate (:func:`maxmargin.certificate.certify_svm`, hard margin)
    must confirm an ``"optimal"`` stop: functional margin ``mu > 0`` and weak-duality gap
    ``<= HULL_CERT_FACTOR * tol``. With ``finish``, a run that is not confirmed (stopped, stalled
    or at ``max_iter``) is finished by the active-set method from its alpha
    (:func:`~maxmargin.algorithms.active_set.finish_alpha`), kept when it meets that
    certificate; otherwise a stop is ``"inaccurate"`` (with a warning). A certified margin
    that puts the hulls within ``SVM_HULL_EPS R`` is ``"infeasible"`` at that resolution
    (:func:`~maxmargin.certificate.within_resolution`), as a stop there is. A run at ``max_iter``
    or stalled by round-off whose answer the certificate confirms as it is is ``"optimal"``, as
    ``smo``'s is: the certificate, not the method's own gap, says what is optimal.

    ``primal_objective`` is the certificate's ``||w||^2 / (2 mu^2)``, the value of the feasible
    primal point ``w / mu`` (``mu`` the largest functional margin ``w`` reaches; ``inf`` when
    ``mu <= 0``), never ``||w||^2 / 2`` of a ``w`` whose margins are below 1: only a feasible
    point's value bounds the optimum from above. ``X_user``: the user's data when ``X`` is
    their copy centred on ``mean`` (linear kernel, :func:`centred`); the run, the finish and
    the certificate use ``X`` (the same classifier, translated), the answer is the user's:
    ``X_train = X_user`` and ``b`` (and the certificate's ``b``) shifted by ``-<w, mean>``.
    """
    status = status_of(run, method, intersect="infeasible", warn=False)
    X_out = X if X_user is None else X_user
    if status == "infeasible":
        return infeasible_solution(X_out, y, kernel, method, run.lam, "", run.iterations,
                                   run.history, run.runtime)
    alpha = 2.0 * run.lam / run.zz
    b = -float(np.dot(run.lam, run.g)) / run.zz
    wx = 2.0 * run.g / run.zz  # <w, phi(x_i)>
    cert = certify_svm(alpha, X, y, None, kernel, g=wx)

    def accept(c: Certificate) -> bool:
        return c.margin > 0 and c.gap <= HULL_CERT_FACTOR * tol

    ok, message = accept(cert), run.message
    if (finish and not ok and status in ("optimal", "max_iter", "inaccurate")
            and np.all(np.isfinite(alpha))):
        done = finish_alpha(alpha, X, y, None, kernel, accept)  # the exact finish, as in smo
        if done is not None:
            alpha, wx, cert, b = done.alpha, done.g, done.certificate, done.certificate.b
            ok, status = True, "optimal"
            message = join_messages(message, (
                f"finished exactly by the active-set method (from {done.n_free} free alphas)"))
    status, message = _settled(status, ok, message)
    quad = float(np.dot(alpha * y, wx))  # alpha^T Q alpha = ||w||^2
    w = X.T @ (alpha * y) if kernel.kind == KIND_LINEAR else None
    if X_user is not None:
        b, _, cert = uncentred_intercept(float(w @ mean), b, (b, b), cert)
    if status == "max_iter":
        warnings.warn(f"{method}: {run.message}", exceptions.ConvergenceWarning, stacklevel=3)
    elif status == "inaccurate":  # stalled, and no finish certified it
        warnings.warn(f"{method}: {run.message}, which the float64 certificate does not confirm "
                      f"(finish=True finishes it exactly): {cert.summary()}",
                      exceptions.ConvergenceWarning, stacklevel=3)
    status = _confirmed(status, ok, method, cert.summary())
    evidence = (within_resolution(alpha, X_out, y, kernel, SVM_HULL_EPS)  # centres X_out
                if status == "optimal" else None)
    if evidence is not None:
        return infeasible_solution(X_out, y, kernel, method, alpha, "", run.iterations,
                                   run.history, run.runtime, evidence)
    return SVMSolution(
        alpha=alpha, b=b, w=w, dual_objective=float(alpha.sum()) - 0.5 * quad,
        primal_objective=cert.primal_objective, status=status, iterations=run.iterations,
        method=method, history=run.history, X_train=X_out, y_train=y, kernel=kernel, C=None,
        b_interval=(b, b),
        message=join_messages(message, cert.summary()), runtime=run.runtime,
        certificate=cert, tol=tol,
    )  # fmt: skip
