"""Weighted kernel sums for certificates: ``g_t = sum_k coef_k K(x_t, x_{idx_k})`` for every
point, in float64, from a Q-matrix's dense data (rbf, poly, sigmoid), on one thread or several.

Narrow data take one fused compiled pass over tiles of rows and points; wide data, blocks of
BLAS products and a compiled pass per row (:func:`weighted_sums`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numba
import numpy as np
from numba import prange

from maxmargin._jit import njit
from maxmargin._threads import start_numba_threads
from maxmargin.kernels.builtin import _poly_weighted_rows, _rbf_weighted_rows
from maxmargin.kernels.formulas import (
    KIND_POLY,
    KIND_RBF,
    KIND_SIGMOID,
    cancelled,
    expanded_distance,
    finish_values,
)
from maxmargin.kernels.qmatrix import QMatrix

__all__ = [
    "weighted_sums", "has_weighted_sums", "SUM_BLOCK_VALUES", "SUM_CHUNK", "SUM_TILE_ROWS",
    "SUM_TILE_POINTS", "SUM_FUSED_FEATURES", "SUM_SPLIT_FRACTION",
]

#: :func:`weighted_sums` evaluates at most this many kernel values at once (a block of rows),
#: and on several threads chunks of ``SUM_CHUNK`` rows; on narrow data tiles of
#: ``SUM_TILE_ROWS`` rows and ``SUM_TILE_POINTS`` points (their values and partial sums in L1).
SUM_BLOCK_VALUES, SUM_CHUNK = 2**20, 64
SUM_TILE_ROWS, SUM_TILE_POINTS = 4, 256
#: :func:`weighted_sums` on wide data sums the rows of its points from the upper triangle of
#: their products only when they are at least this fraction of the rows (below it the triangle
#: saves less than its separate pass costs).
SUM_SPLIT_FRACTION = 0.2
#: :func:`weighted_sums` fuses products and kernel values on data of fewer features than this
#: (BLAS products are no faster there, and the passes need no BLAS threads).
SUM_FUSED_FEATURES = 32

def has_weighted_sums(qm: QMatrix) -> bool:
    """Whether :func:`weighted_sums` takes this Q-matrix: dense data, rbf/poly/sigmoid."""
    return qm.X.shape[0] > 0 and qm.kind in (KIND_RBF, KIND_POLY, KIND_SIGMOID)


def weighted_sums(qm: QMatrix, idx: np.ndarray, coef: np.ndarray,
                  threads: int = 1) -> np.ndarray:
    """``g_t = sum_k coef_k K(x_t, x_{idx_k})`` for every point ``t`` (original order), in
    float64, from the Q-matrix's dense data (:func:`has_weighted_sums`; rbf data are centred
    already and their squared norms known).

    Narrow data (``d < SUM_FUSED_FEATURES``): one compiled pass over tiles of rows and points
    (:func:`_fused_rows`; rbf distances summed from the differences), no product matrix in
    memory. Wide data: blocks of rows of the products ``X S^T`` (``S = X[idx]``) by BLAS, then
    one compiled pass per row (:func:`_weighted_rows`); when the points ``idx`` are distinct and
    at least ``SUM_SPLIT_FRACTION`` of the rows, their own rows from the upper triangle of ``S
    S^T`` only (:func:`_symmetric_sums`).

    ``threads > 1``: the rows run on that many threads, in chunks of ``SUM_CHUNK`` rows fixed
    by the data (each row summed by one thread, in one order): the same values for every
    thread count, except that wide data's BLAS products run on the caller's BLAS threads,
    whose count can change their last bits. Values are not checked finite here."""
    X, sq = qm.X, qm.sq
    n, m = X.shape[0], idx.shape[0]
    out = np.zeros(n)
    if m == 0:
        return out
    params = (qm.kind, qm.gamma, qm.coef0, qm.degree)
    coef = np.ascontiguousarray(coef, dtype=np.float64)
    if X.shape[1] < SUM_FUSED_FEATURES:
        ST = np.ascontiguousarray(X[idx].T)
        if threads > 1 and n > SUM_CHUNK:
            with _numba_threads(threads):
                _fused_rows_parallel(*params, X, ST, coef, out)
        else:
            _fused_rows(*params, X, ST, coef, np.int64(0), np.int64(n), out)
        return out
    S = X[idx]
    s2 = sq[idx]
    inside = np.zeros(n, dtype=bool)
    if SUM_SPLIT_FRACTION * n <= m:  # enough points for the triangle to pay
        inside[idx] = True
    if np.count_nonzero(inside) < m:  # few points, or repeated ones: every row against all
        _product_rows(params, X, sq, S, s2, coef, out, threads)
        return out
    rest = np.flatnonzero(~inside)
    part = np.zeros(rest.shape[0])
    _product_rows(params, X[rest], sq[rest], S, s2, coef, part, threads)
    out[rest] = part
    out[idx] = _symmetric_sums(params, S, s2, coef)
    return out


def _product_rows(params: tuple, A: np.ndarray, a2: np.ndarray, S: np.ndarray, s2: np.ndarray,
                  coef: np.ndarray, out: np.ndarray, threads: int) -> None:
    """``out[i] = sum_k coef_k K(a_i, s_k)``: blocks of rows of ``A S^T`` by BLAS, then
    :func:`_weighted_rows` (on ``threads`` threads, chunks of ``SUM_CHUNK`` rows)."""
    rows = max(1, SUM_BLOCK_VALUES // S.shape[0])
    for b0 in range(0, A.shape[0], rows):
        b1 = min(A.shape[0], b0 + rows)
        D = A[b0:b1] @ S.T
        if threads > 1 and b1 - b0 > SUM_CHUNK:
            with _numba_threads(threads):
                _weighted_rows_parallel(*params, D, A[b0:b1], S, a2[b0:b1], s2, coef,
                                        out[b0:b1])
        else:
            _weighted_rows(*params, D, A[b0:b1], S, a2[b0:b1], s2, coef, out[b0:b1])


def _symmetric_sums(params: tuple, S: np.ndarray, s2: np.ndarray,
                    coef: np.ndarray) -> np.ndarray:
    """``g_j = sum_k coef_k K(s_j, s_k)`` for the points themselves, from the upper triangle
    only (half the products): blocks of rows ``S[j0:j1] S[j0:]^T`` by BLAS, then
    :func:`_triangle_rows` (each value ``K_jk``, ``k >= j``, computed once and added to both
    sums, in an order fixed by the data)."""
    m = S.shape[0]
    rows_sum, cols_sum = np.zeros(m), np.zeros(m)
    rows = max(1, SUM_BLOCK_VALUES // m)
    for j0 in range(0, m, rows):
        j1 = min(m, j0 + rows)
        D = S[j0:j1] @ S[j0:].T
        _triangle_rows(*params, D, S[j0:j1], S[j0:], s2[j0:j1], s2[j0:], coef[j0:j1],
                       coef[j0:], rows_sum[j0:j1], cols_sum[j0:])
    return rows_sum + cols_sum


@contextlib.contextmanager
def _numba_threads(threads: int) -> Iterator[None]:
    """Numba's parallel loops on ``threads`` threads (at most its pool's) inside the block."""
    previous = start_numba_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        yield
    finally:
        numba.set_num_threads(previous)


@njit
def _fused_rows(kind: int, gamma: float, coef0: float, degree: int, X: np.ndarray,
                ST: np.ndarray, coef: np.ndarray, r0: int, r1: int, out: np.ndarray) -> None:
    """``out[t] = sum_k coef_k K(x_t, s_k)`` for the rows ``r0 <= t < r1`` of ``X``, the points
    ``s_k`` being the columns of ``ST`` (``d x m``), tile by tile: ``SUM_TILE_ROWS`` rows
    against ``SUM_TILE_POINTS`` points, their inner products (rbf: ``||x_t - s_k||^2`` summed
    from the differences, exact of cancellation) four features a pass into ``acc`` (L1),
    :func:`~maxmargin.kernels.formulas.finish_values`, then ``coef_k K_tk`` added into ``part``
    by position in the tile; a row's sum is its ``part`` summed in order. One order for each
    row whatever rows the call holds."""
    d, m = ST.shape
    R, P = SUM_TILE_ROWS, SUM_TILE_POINTS
    acc = np.empty((R, P))
    part = np.empty((R, P))
    bits = np.empty(P, dtype=np.int64)
    rbf = kind == KIND_RBF
    for t0 in range(r0, r1, R):
        nr = min(r1, t0 + R) - t0
        for r in range(nr):
            part[r, :] = 0.0
        for c0 in range(0, m, P):
            w = min(m, c0 + P) - c0
            for r in range(nr):
                acc[r, :w] = 0.0
            f = 0
            while f + 4 <= d:  # each tile of ST read once for the rows, from L1
                s0, s1 = ST[f, c0 : c0 + w], ST[f + 1, c0 : c0 + w]
                s2, s3 = ST[f + 2, c0 : c0 + w], ST[f + 3, c0 : c0 + w]
                for r in range(nr):
                    a, x = acc[r, :w], X[t0 + r]
                    x0, x1, x2, x3 = x[f], x[f + 1], x[f + 2], x[f + 3]
                    if rbf:
                        for k in range(w):
                            e0, e1, e2, e3 = s0[k] - x0, s1[k] - x1, s2[k] - x2, s3[k] - x3
                            a[k] = a[k] + e0 * e0 + e1 * e1 + e2 * e2 + e3 * e3
                    else:
                        for k in range(w):
                            a[k] = a[k] + s0[k] * x0 + s1[k] * x1 + s2[k] * x2 + s3[k] * x3
                f += 4
            for rest in range(f, d):
                s0 = ST[rest, c0 : c0 + w]
                for r in range(nr):
                    a, xf = acc[r, :w], X[t0 + r, rest]
                    if rbf:
                        for k in range(w):
                            e0 = s0[k] - xf
                            a[k] += e0 * e0
                    else:
                        for k in range(w):
                            a[k] += s0[k] * xf
            c = coef[c0 : c0 + w]
            for r in range(nr):
                a, p = acc[r, :w], part[r, :w]
                finish_values(kind, gamma, coef0, degree, a, bits[:w])
                for k in range(w):
                    p[k] += c[k] * a[k]
        for r in range(nr):
            s = 0.0
            for k in range(min(m, P)):
                s += part[r, k]
            out[t0 + r] = s


@njit(parallel=True)
def _fused_rows_parallel(kind: int, gamma: float, coef0: float, degree: int, X: np.ndarray,
                         ST: np.ndarray, coef: np.ndarray, out: np.ndarray) -> None:
    """:func:`_fused_rows` on chunks of ``SUM_CHUNK`` rows in parallel."""
    n = X.shape[0]
    for c in prange((n + SUM_CHUNK - 1) // SUM_CHUNK):
        c0 = c * SUM_CHUNK
        _fused_rows(kind, gamma, coef0, degree, X, ST, coef, c0, min(n, c0 + SUM_CHUNK), out)


@njit
def _weighted_rows(kind: int, gamma: float, coef0: float, degree: int, D: np.ndarray,
                   A: np.ndarray, S: np.ndarray, a2: np.ndarray, s2: np.ndarray,
                   coef: np.ndarray, out: np.ndarray) -> None:
    """``out[i] = sum_k coef_k K_ik`` from the products ``D = A S^T``: rbf by
    :func:`~maxmargin.kernels.builtin._rbf_weighted_rows` (distances with the kernel objects'
    cancellation fix), poly by :func:`~maxmargin.kernels.builtin._poly_weighted_rows`, sigmoid
    through :func:`~maxmargin.kernels.formulas.finish_values`; each row summed in order."""
    if kind == KIND_RBF:
        _rbf_weighted_rows(D, A, S, a2, s2, gamma, coef, out)
    elif kind == KIND_POLY:
        _poly_weighted_rows(D, gamma, coef0, degree, coef, out)
    else:
        m = D.shape[1]
        values = np.empty(m)
        bits = np.empty(m, dtype=np.int64)
        for i in range(D.shape[0]):
            for k in range(m):
                values[k] = D[i, k]
            finish_values(kind, gamma, coef0, degree, values, bits)
            total = 0.0
            for k in range(m):
                total += coef[k] * values[k]
            out[i] = total


@njit
def _triangle_rows(kind: int, gamma: float, coef0: float, degree: int, D: np.ndarray,
                   A: np.ndarray, B: np.ndarray, a2: np.ndarray, b2: np.ndarray,
                   ca: np.ndarray, cb: np.ndarray, rows_sum: np.ndarray,
                   cols_sum: np.ndarray) -> None:
    """For the rows ``r`` of ``D = A B^T`` whose points are ``B``'s first ones (``a_r = b_r``):
    the kernel values ``K_rk``, ``k >= r``, as :func:`_weighted_rows` computes them (rbf
    distances with the cancellation fix), then ``rows_sum[r] += sum_{k >= r} cb_k K_rk`` and
    ``cols_sum[k] += ca_r K_rk`` for ``k > r``, row after row."""
    w = D.shape[1]
    d2 = np.empty(w)
    bits = np.empty(w, dtype=np.int64)
    for r in range(D.shape[0]):
        m = w - r
        v = d2[:m]
        row = D[r, r:]
        if kind == KIND_RBF:
            a2_r = a2[r]
            for k in range(m):
                t = expanded_distance(row[k], a2_r, b2[r + k])
                if cancelled(t, a2_r, b2[r + k]):  # near duplicates: from differences
                    t = 0.0
                    for f in range(A.shape[1]):
                        e = A[r, f] - B[r + k, f]
                        t += e * e
                v[k] = t
        else:
            for k in range(m):
                v[k] = row[k]
        finish_values(kind, gamma, coef0, degree, v, bits[:m])
        s = 0.0
        for k in range(m):
            s += cb[r + k] * v[k]
        rows_sum[r] += s
        c_r = ca[r]
        for k in range(1, m):
            cols_sum[r + k] += c_r * v[k]


@njit(parallel=True)
def _weighted_rows_parallel(kind: int, gamma: float, coef0: float, degree: int, D: np.ndarray,
                            A: np.ndarray, S: np.ndarray, a2: np.ndarray, s2: np.ndarray,
                            coef: np.ndarray, out: np.ndarray) -> None:
    """:func:`_weighted_rows` on chunks of ``SUM_CHUNK`` rows in parallel."""
    n = D.shape[0]
    for c in prange((n + SUM_CHUNK - 1) // SUM_CHUNK):
        c0 = c * SUM_CHUNK
        c1 = min(n, c0 + SUM_CHUNK)
        _weighted_rows(kind, gamma, coef0, degree, D[c0:c1], A[c0:c1], S, a2[c0:c1], s2, coef,
                       out[c0:c1])
