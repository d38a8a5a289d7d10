"""The Q-matrix of the algorithms: columns, blocks of columns and the diagonal of
``Q_ij = y_i y_j K(x_i, x_j)``, compiled, for every kernel (LIBSVM's ``QMatrix``).

One :class:`QMatrix` serves SMO's column cache, the nearest-point methods (with ``y = 1``:
columns of ``K``) and the kernel perceptron. How a column is computed depends on the data:

* **built-in kernels on dense data**: the features are kept transposed in the *layout* order
  (``XT``; position ``k`` holds variable ``order[k]``, ``pos`` is the inverse), and a column is
  one contiguous, vectorised pass over them per feature; RBF data are centred first (the kernel
  is translation invariant: the same values, without the cancellation of data far from the
  origin; SMO centres linear data itself, where ``y . alpha = 0`` makes it an equivalence);
* **built-in kernels on sparse data** (CSR rows, sorted indices): each entry is a merge of two
  rows' non-zeros, ``O(nnz)`` per column and no dense copy of the data;
* **any other kernel** (a callable, a string kernel, a precomputed Gram matrix): its Gram
  matrix, computed once by the kernel object itself (scikit-learn's SVC does the same for a
  callable), is stored and its rows are read. Above :data:`GRAM_MAX_BYTES` it is refused.

Inner products become kernel values in :func:`~maxmargin.kernels.formulas.finish_values`, the
one implementation of the formulas; rbf squared distances come from the squared norms except
for near duplicates, whose expansion cancels: those are summed from the differences
(:func:`_rbf_distances`, :func:`_near_distances`; every path). The sum over features runs in
the same order for every column and every entry, so ``Q_ij = Q_ji`` bit for bit.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from numba import prange, types
from numba.extending import overload

from maxmargin._byref import Ref
from maxmargin._jit import ENTRY, HELPER, INTERNAL, njit
from maxmargin._threads import start_numba_threads
from maxmargin.kernels.base import Kernel
from maxmargin.kernels.formulas import (
    KIND_GRAM,
    KIND_LINEAR,
    KIND_POLY,
    KIND_RBF,
    KIND_SIGMOID,
    cancelled,
    expanded_distance,
    finish_values,
    kernel_entry,
)

__all__ = [
    "COMPILED", "GRAM_MAX_BYTES", "EXPENSIVE_FEATURES", "QMatrix", "make_qmatrix", "fill_column",
    "fill_columns", "kernel_value", "diagonal", "quadratic_form", "is_dense", "expensive",
    "value_cost", "blas_columns", "MAX_BLOCK", "BLOCK_ROWS", "BLAS_BLOCK", "BLAS_BYTES",
    "BLAS_BUFFER_BYTES", "blas_block_rows", "THREAD_WORK", "ROUNDED_KINDS",
    "ROUNDED_FEATURES_ERROR", "rounded_features",
    "rounding_error", "with_rounded_features", "rounded_copy", "without_rounded_features",
]

#: The formulas computed here from the data (any other kernel is read from its Gram matrix).
COMPILED = (KIND_LINEAR, KIND_RBF, KIND_POLY, KIND_SIGMOID)
#: A kernel read from its Gram matrix may take at most this many bytes for it.
GRAM_MAX_BYTES = 4 * 2**30
#: Kernel values are dear from this many features (non-zeros a row, for sparse data) on.
EXPENSIVE_FEATURES = 64
#: :func:`fill_columns` computes at most ``MAX_BLOCK`` columns in one pass, ``BLOCK_ROWS`` rows
#: at a time (their partial sums, 8 x 256 float64, stay in L1).
MAX_BLOCK, BLOCK_ROWS = 8, 256
#: A column of dense data goes to several threads (a Q-matrix built for them) when its
#: positions times ``d + 32`` (its products and its kernel formula) reach this.
THREAD_WORK = 2**17
#: Wide dense data (``d >= EXPENSIVE_FEATURES`` and the features of all points at least
#: ``BLAS_BYTES``), built with ``blocks=True``: :func:`fill_columns` computes up to
#: ``BLAS_BLOCK`` columns by one BLAS product ``X[cols] XT`` while the layout holds at least
#: half the points (the product covers all of them; each product reads all of ``XT``, so the
#: more columns a product, the fewer passes over the features). The product's buffer takes at
#: most ``BLAS_BUFFER_BYTES``: fewer columns a product above 65,536 points.
BLAS_BLOCK, BLAS_BYTES, BLAS_BUFFER_BYTES = 64, 8 * 2**20, 32 * 2**20
#: A float32 cache's columns may come from ``XT32``, the features rounded to float32
#: (:func:`with_rounded_features`): products exact in float64 and summed in feature order, as
#: from ``XT``, reading half the bytes, so a column that streams its features from beyond the
#: processor's caches takes about half the time. Kept for wide dense data of the linear kernel
#: (the sizes of the BLAS products, ``blocks=True``), whose values are within about
#: ``2^-23 |x_i| |x_j|`` of ``K_ij`` (see :data:`ROUNDED_FEATURES_ERROR`), and for dense rbf
#: data, whose columns are then the exact kernel of the rounded (centred) points, squared norms
#: ``sqT32`` included: within ``2^-22 sqrt(gamma / 2e) R`` of ``K_ij``, ``R = max_t |x_t|``
#: (:func:`rounding_error`; the float32 cache's own rounding is ``2^-24 |K_ij|``), and for
#: dense poly data (the kernel of the rounded points), where their error stays about the
#: cache's own.
ROUNDED_KINDS = (KIND_LINEAR, KIND_RBF, KIND_POLY)
#: The error of a linear kernel's column from ``XT32``, in units of ``2^-24 max_t K_tt``: the
#: features' rounding (twice) plus the cache's, a worst case (measured gradient errors were
#: 1.2-2.2 times the float32 cache's own); rbf and poly data keep ``XT32`` while their
#: :func:`rounding_error` is at most this.
ROUNDED_FEATURES_ERROR = 3.0


class QMatrix(NamedTuple):
    """What compiled code needs to evaluate ``Q_ij = y_i y_j K(x_i, x_j)`` (module docstring).

    Unused representations are empty arrays: dense data fill ``X``/``XT``, sparse data
    ``indptr``/``indices``/``values``, a stored Gram matrix ``G`` (``kind = KIND_GRAM``).
    """

    X: np.ndarray  # (n, d) dense points, original order (centred for linear and rbf)
    XT: np.ndarray  # (d, n) the same transposed, in layout order: XT[:, k] = X[order[k]]
    XT32: np.ndarray  # (d, n) float32: XT rounded (with_rounded_features), else
    #                   (0, 0) float64 (so that other data compile none of its code: see
    #                   rounded_features)
    sq: np.ndarray  # (n,) squared norms x_i . x_i in feature order (K_ii for a Gram matrix)
    sqT: np.ndarray  # (n,) the same in layout order
    sqT32: np.ndarray  # (n,) rbf with XT32: the squared norms of its columns (summed as sqT),
    #                    else (0,)
    indptr: np.ndarray  # (n + 1,) int64 CSR rows (sparse data)
    indices: np.ndarray  # (nnz,) int64, sorted within each row
    values: np.ndarray  # (nnz,) float64
    G: np.ndarray  # (n, n) the stored Gram matrix (kind KIND_GRAM)
    y: np.ndarray  # (n,) labels +-1 (original order)
    yT: np.ndarray  # (n,) the same in layout order
    order: np.ndarray  # (n,) int64: the variable at each layout position
    pos: np.ndarray  # (n,) int64: the layout position of each variable (order's inverse)
    kind: int  # maxmargin.kernels.formulas.KIND_*
    gamma: float
    coef0: float
    degree: int
    dots: np.ndarray  # (n,) float64 scratch
    bits: np.ndarray  # (n,) int64 scratch
    panel: np.ndarray  # (b, d) float64: the points of a BLAS block (wide data), or (0, 0)
    block: np.ndarray  # (b, n) float64: their products with XT, or (0, 0); b = blas_block_rows
    pool: np.ndarray  # int64: (threads, 2) for columns on several threads, else (0,) (its type
    #                   selects the compiled column code: see fill_column)


def make_qmatrix(kernel: Kernel, X: Any, y: np.ndarray, blocks: bool = False,
                 threads: int = 1) -> QMatrix:
    """The :class:`QMatrix` of a validated kernel and data set, in the identity layout;
    ``blocks``: with the buffers of :func:`fill_columns`' BLAS products on wide data
    (:func:`blas_block_rows`); ``threads > 1``: long columns of dense data computed on that many
    threads (:func:`fill_column`; compiled callers then compile a specialisation of their own)."""
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    y = np.ascontiguousarray(y, dtype=np.float64)
    ints, none2 = np.zeros(0, dtype=np.int64), np.zeros((0, 0))
    parts: dict[str, Any] = {
        "y": y, "yT": y.copy(), "order": np.arange(n, dtype=np.int64),
        "pos": np.arange(n, dtype=np.int64), "dots": np.empty(n),
        "bits": np.empty(n, dtype=np.int64), "X": none2, "XT": np.zeros((0, n)),
        "indptr": ints, "indices": ints, "values": np.zeros(0), "G": none2,
        "panel": none2, "block": none2, "XT32": none2, "sqT32": np.zeros(0),
        "pool": np.zeros((threads, 2), dtype=np.int64) if threads > 1 else ints,
    }
    if threads > 1:  # start Numba's thread pool: compiled code loaded from the cache calls it
        start_numba_threads()
    gamma, coef0, degree = kernel.params
    kind = kernel.kind if kernel.kind in COMPILED else KIND_GRAM
    if kind == KIND_GRAM:
        if 8 * n * n > GRAM_MAX_BYTES:
            raise ValueError(
                f"`X`: the kernel {kernel.describe()} is evaluated from its {n} x {n} Gram "
                f"matrix ({8 * n * n / 2**30:.1f} GB, more than {GRAM_MAX_BYTES / 2**30:.0f} GB); "
                "use a built-in kernel, or fewer samples."
            )
        G = np.ascontiguousarray(kernel.gram(X), dtype=np.float64)
        sq = np.ascontiguousarray(np.diagonal(G))
        parts.update(G=G)
    elif hasattr(X, "tocsr"):
        csr = X.tocsr(copy=True)
        csr.sum_duplicates()  # canonical: sorted indices, no duplicates
        parts.update(indptr=csr.indptr.astype(np.int64), indices=csr.indices.astype(np.int64),
                     values=np.ascontiguousarray(csr.data, dtype=np.float64))
        sq = np.asarray(csr.multiply(csr).sum(axis=1), dtype=np.float64).ravel()
    else:
        Xd = np.ascontiguousarray(X, dtype=np.float64)
        XT = np.empty((Xd.shape[1], n))  # a copy even when X.T is contiguous: it is permuted
        sq = np.empty(n)
        if kind == KIND_RBF:  # translation invariant: centring keeps the precision
            centred = np.empty_like(Xd)
            one = Xd.shape[1] == 1  # NumPy's mean of one feature is a pairwise sum: its own
            means = Xd.mean(axis=0) if one else np.zeros(Xd.shape[1])
            _centre_transpose(Xd, means, not one, centred, XT, sq)
            Xd = centred
        else:
            _centre_transpose(Xd, np.zeros(0), False, Xd, XT, sq)
        parts.update(X=Xd, XT=XT)
        d = Xd.shape[1]
        if blocks and d >= EXPENSIVE_FEATURES and 8 * d * n >= BLAS_BYTES:
            rows = blas_block_rows(n)
            parts.update(panel=np.empty((rows, d)), block=np.empty((rows, n)))
    return QMatrix(sq=sq, sqT=sq.copy(), kind=int(kind), gamma=float(gamma),
                   coef0=float(coef0), degree=int(degree), **parts)


def rounding_error(qm: QMatrix) -> float:
    """The error of a float32 column from the rounded features ``XT32`` in units of ``2^-24
    max_t K_tt``, the cache's own rounding included, as the precision policy's floor counts
    it: :data:`ROUNDED_FEATURES_ERROR` for the linear kernel; for rbf ``1 + sqrt(8 / e)
    sqrt(gamma R^2 / d)``, ``R^2 = max_t sqT_t``; for poly ``1 + 2 p g (g + |c|)^(p - 1) /
    (max_t K_tt sqrt(d))``, ``g = gamma R^2``, ``c = coef0``. Rbf: each feature off by
    ``2^-24`` of itself moves ``D = |x_i - x_j|^2`` by at most ``2^-22 R sqrt(D)`` (and
    ``gamma e^(-gamma D) sqrt(D) <= sqrt(gamma / 2e)``); poly: ``x_i . x_j`` by at most
    ``2^-23 R^2``, times the power's slope; but only along ``x_i - x_j`` (``x_j``):
    independent roundings of ``d`` features put about ``1 / sqrt(d)`` of that worst case there
    (measured gradient errors: the float32 cache's own, within 10 %)."""
    if qm.kind not in (KIND_RBF, KIND_POLY):
        return ROUNDED_FEATURES_ERROR
    d = max(qm.XT.shape[0], 1)
    r2 = float(np.max(qm.sqT)) if qm.sqT.size else 0.0
    g = qm.gamma * r2
    if qm.kind == KIND_RBF:
        return 1.0 + math.sqrt(8.0 / math.e) * math.sqrt(g / d)
    p = qm.degree
    top = float(np.max(np.abs(qm.gamma * qm.sqT + qm.coef0))) ** p if qm.sqT.size else 0.0
    if top == 0.0:
        return math.inf
    return 1.0 + 2.0 * p * g * (g + abs(qm.coef0)) ** (p - 1) / (top * math.sqrt(d))


def with_rounded_features(qm: QMatrix) -> QMatrix:
    """``qm`` keeping its features rounded to float32 (:func:`rounded_copy`) where they apply
    (see :data:`ROUNDED_KINDS`): the linear kernel on wide dense data with the BLAS buffers
    (``blocks=True``); the rbf and poly kernels on dense data whose :func:`rounding_error` is
    at most :data:`ROUNDED_FEATURES_ERROR`; else ``qm`` itself. The caller decides whether a
    float32 cache will need them (SMO: when one runs and cannot hold every column; then the
    BLAS blocks are not used for its columns)."""
    linear = qm.kind == KIND_LINEAR and qm.block.shape[0] > 0
    other = (qm.kind in (KIND_RBF, KIND_POLY) and qm.XT.shape[0] > 0  # XT: dense data only
             and rounding_error(qm) <= ROUNDED_FEATURES_ERROR)
    return rounded_copy(qm) if linear or other else qm


def rounded_copy(qm: QMatrix) -> QMatrix:
    """``qm`` with ``XT32``, its dense features ``XT`` rounded to float32, and for rbf
    ``sqT32``, their squared norms (exact products summed in feature order, as every
    column's)."""
    XT32 = qm.XT.astype(np.float32)
    if qm.kind != KIND_RBF:
        return qm._replace(XT32=XT32)
    sq = np.zeros(XT32.shape[1])
    for row in XT32:
        sq += np.square(row, dtype=np.float64)
    return qm._replace(XT32=XT32, sqT32=sq)


def without_rounded_features(qm: QMatrix) -> QMatrix:
    """``qm`` without ``XT32`` and ``sqT32`` (the same arrays otherwise, so the layout stays
    shared): the type of a Q-matrix that never kept them, for float64 columns, which never
    read them (compiled code for it need not be compiled again)."""
    if qm.XT32.shape[0] == 0:
        return qm
    return qm._replace(XT32=np.zeros((0, 0)), sqT32=np.zeros(0))


def blas_block_rows(n: int) -> int:
    """The columns of one BLAS product of :func:`fill_columns` on ``n`` points: ``BLAS_BLOCK``,
    fewer where its buffer would pass ``BLAS_BUFFER_BYTES`` (at least ``MAX_BLOCK``)."""
    return int(min(BLAS_BLOCK, max(MAX_BLOCK, BLAS_BUFFER_BYTES // (8 * max(n, 1)))))


@njit(**HELPER)
def _centre_transpose(X: np.ndarray, centre: np.ndarray, means: bool, out: np.ndarray,
                      XT: np.ndarray, sq: np.ndarray) -> None:
    """``out = X - centre`` row by row (``centre`` empty: ``X`` as it is, ``out`` may be
    ``X``; ``means``: ``centre`` zeros, filled first with the means of ``X``'s rows, summed in
    order: NumPy's ``X.mean(axis=0)`` bit for bit when ``X`` has two features or more), ``XT =
    out.T`` and ``sq[i] = out[i] . out[i]`` summed in feature order, as every inner product here
    (so ``x_i . x_i = sq[i]`` bit for bit and an rbf ``K_ii`` is exactly 1). Compiled: one pass
    instead of NumPy's four (mean, difference, transposed copy, norms)."""
    n, d = X.shape
    if means:
        for i in range(n):
            for f in range(d):
                centre[f] += X[i, f]
        for f in range(d):
            centre[f] /= n
    for i in range(n):
        row = out[i]
        if centre.shape[0] > 0:
            for f in range(d):
                row[f] = X[i, f] - centre[f]
        s = 0.0
        for f in range(d):
            v = row[f]
            XT[f, i] = v
            s += v * v
        sq[i] = s


@njit(**INTERNAL)
def is_dense(qm: QMatrix) -> bool:
    """Whether the columns come from dense features (``XT``)."""
    return qm.G.shape[0] == 0 and qm.indptr.shape[0] == 0


@njit(**INTERNAL)
def expensive(qm: QMatrix) -> bool:
    """Whether a kernel value is dear: ``EXPENSIVE_FEATURES`` features (or non-zeros a row) or
    more; never for a stored Gram matrix."""
    if qm.G.shape[0] > 0:
        return False
    if qm.indptr.shape[0] > 0:
        n = qm.indptr.shape[0] - 1
        return qm.indices.shape[0] >= EXPENSIVE_FEATURES * max(n, 1)
    return qm.XT.shape[0] >= EXPENSIVE_FEATURES


def value_cost(qm: QMatrix) -> int:
    """The features a kernel value reads: ``d`` (dense), the average non-zeros of a row twice
    (sparse: a merge of two rows), 1 (a stored Gram matrix)."""
    if qm.G.shape[0] > 0:
        return 1
    if qm.indptr.shape[0] > 0:
        return max(1, 2 * qm.indices.shape[0] // max(1, qm.indptr.shape[0] - 1))
    return max(1, qm.XT.shape[0])


@njit(**INTERNAL)
def _sparse_dot(qm: QMatrix, a: int, b: int) -> float:
    """``x_a . x_b`` of two CSR rows: a merge of their sorted non-zeros."""
    p, p_end = qm.indptr[a], qm.indptr[a + 1]
    q, q_end = qm.indptr[b], qm.indptr[b + 1]
    s = 0.0
    while p < p_end and q < q_end:
        ia, ib = qm.indices[p], qm.indices[q]
        if ia == ib:
            s += qm.values[p] * qm.values[q]
            p += 1
            q += 1
        elif ia < ib:
            p += 1
        else:
            q += 1
    return s


@njit(**INTERNAL)
def _layout_dots(qm: QMatrix, XT: np.ndarray, sqT: np.ndarray, i: int, lo: int, hi: int,
                 out: np.ndarray) -> None:
    """``out[k - lo]`` for the layout positions ``lo <= k < hi`` (``t = order[k]``):
    ``x_t . x_i`` (``||x_t - x_i||^2`` for rbf: :func:`_rbf_distances` with the squared norms
    ``sqT``), or ``K_ti`` itself from a stored Gram matrix.

    Dense data: over the features ``XT`` with their norms ``sqT`` (``qm.XT``, ``qm.sqT``, or
    ``qm.XT32``, ``qm.sqT32`` for :func:`rounded_features`)
    with unit stride, in float64 whatever their dtype (a product of two float32 values is
    exact), eight features a pass over blocks of 512 rows (kept in L1), summed in feature order
    for every column (so ``Q_ij = Q_ji`` bit for bit; each entry the same whatever range it is
    computed in).
    """
    if qm.G.shape[0] > 0:
        row = qm.G[i]
        for k in range(lo, hi):
            out[k - lo] = row[qm.order[k]]
        return
    if qm.indptr.shape[0] > 0:
        for k in range(lo, hi):
            out[k - lo] = _sparse_dot(qm, qm.order[k], i)
    else:
        c = qm.pos[i]
        d = XT.shape[0]
        for b0 in range(lo, hi, 512):
            b1 = min(hi, b0 + 512)
            m = b1 - b0
            dots = out[b0 - lo : b1 - lo]
            for k in range(m):
                dots[k] = 0.0
            f = 0
            while f + 8 <= d:  # eight features a pass: an eighth of the loads and stores
                r0, r1, r2, r3 = XT[f, b0:b1], XT[f + 1, b0:b1], XT[f + 2, b0:b1], XT[f + 3, b0:b1]
                r4, r5 = XT[f + 4, b0:b1], XT[f + 5, b0:b1]
                r6, r7 = XT[f + 6, b0:b1], XT[f + 7, b0:b1]
                x0, x1 = np.float64(XT[f, c]), np.float64(XT[f + 1, c])  # (float() keeps float32)
                x2, x3 = np.float64(XT[f + 2, c]), np.float64(XT[f + 3, c])
                x4, x5 = np.float64(XT[f + 4, c]), np.float64(XT[f + 5, c])
                x6, x7 = np.float64(XT[f + 6, c]), np.float64(XT[f + 7, c])
                for k in range(m):  # summed in feature order, as one feature a pass
                    dots[k] = (dots[k] + r0[k] * x0 + r1[k] * x1 + r2[k] * x2 + r3[k] * x3
                               + r4[k] * x4 + r5[k] * x5 + r6[k] * x6 + r7[k] * x7)
                f += 8
            while f + 4 <= d:
                r0, r1, r2, r3 = XT[f, b0:b1], XT[f + 1, b0:b1], XT[f + 2, b0:b1], XT[f + 3, b0:b1]
                x0, x1 = np.float64(XT[f, c]), np.float64(XT[f + 1, c])
                x2, x3 = np.float64(XT[f + 2, c]), np.float64(XT[f + 3, c])
                for k in range(m):
                    dots[k] = dots[k] + r0[k] * x0 + r1[k] * x1 + r2[k] * x2 + r3[k] * x3
                f += 4
            for rest in range(f, d):
                row = XT[rest, b0:b1]
                xf = np.float64(XT[rest, c])
                for k in range(m):
                    dots[k] += row[k] * xf
    if qm.kind == KIND_RBF and _rbf_distances(sqT, qm.pos[i], lo, hi, out) > 0:
        _near_distances(qm, XT, sqT, qm.pos[i], lo, hi, out)


@njit(**INTERNAL)
def _difference_distance(qm: QMatrix, XT: np.ndarray, a: int, b: int) -> float:
    """``||x_s - x_t||^2 = sum_f (x_sf - x_tf)^2`` of the points at the layout positions ``a``,
    ``b`` (``s = order[a]``, ``t = order[b]``), summed in feature order from their differences:
    over the dense features ``XT`` (``qm.XT`` or ``qm.XT32``, its values in float64), or the
    union of the two sparse rows' sorted non-zeros. The same terms in the same order either way
    round, so it is symmetric in ``a``, ``b`` bit for bit."""
    s = 0.0
    if qm.indptr.shape[0] > 0:
        p, p_end = qm.indptr[qm.order[a]], qm.indptr[qm.order[a] + 1]
        q, q_end = qm.indptr[qm.order[b]], qm.indptr[qm.order[b] + 1]
        while p < p_end or q < q_end:
            ia = qm.indices[p] if p < p_end else -1
            ib = qm.indices[q] if q < q_end else -1
            if ib < 0 or (0 <= ia < ib):
                e = qm.values[p]
                p += 1
            elif ia < 0 or ib < ia:
                e = qm.values[q]
                q += 1
            else:
                e = qm.values[p] - qm.values[q]
                p += 1
                q += 1
            s += e * e
        return s
    for f in range(XT.shape[0]):
        e = np.float64(XT[f, a]) - np.float64(XT[f, b])
        s += e * e
    return s


@njit(inline="always")
def _rbf_distances(sqT: np.ndarray, c: int, lo: int, hi: int, out: np.ndarray) -> int:
    """``out[k - lo]``: ``x_t . x_c`` on entry, ``||x_t - x_c||^2`` on exit, for the layout
    positions ``lo <= k < hi`` (``t = order[k]``) and ``c``: the
    :func:`~maxmargin.kernels.formulas.expanded_distance` of the squared norms ``sqT``, in one
    vectorised pass, 0 for the point itself (``k = c``: its differences are 0). Returns how
    many other positions have :func:`~maxmargin.kernels.formulas.cancelled` (near duplicates);
    where any have, the caller recomputes them by :func:`_near_distances` (no Q-matrix
    argument here: passing one costs more than this pass over a block of positions)."""
    sq_c = sqT[c]
    sq, o = sqT[lo:hi], out[: hi - lo]  # slices: index-free loops vectorise
    near = 0
    for k in range(hi - lo):
        v = expanded_distance(o[k], sq[k], sq_c)
        o[k] = v
        near += cancelled(v, sq[k], sq_c)
    if lo <= c < hi and cancelled(out[c - lo], sq_c, sq_c):
        out[c - lo] = 0.0
        near -= 1
    return near


@njit(**INTERNAL)
def _near_distances(qm: QMatrix, XT: np.ndarray, sqT: np.ndarray, c: int, lo: int, hi: int,
                    out: np.ndarray) -> None:
    """After :func:`_rbf_distances`: the distances ``out[k - lo]`` that have
    :func:`~maxmargin.kernels.formulas.cancelled`, ``k != c``, summed from the differences
    (:func:`_difference_distance` over ``XT``)."""
    sq_c = sqT[c]
    for k in range(lo, hi):
        if k != c and cancelled(out[k - lo], sqT[k], sq_c):
            out[k - lo] = _difference_distance(qm, XT, k, c)


@njit(**INTERNAL)
def rounded_features(qm: QMatrix, out: np.ndarray) -> bool:
    """Whether columns into ``out`` come from the rounded features ``XT32``: a float32 ``out``
    and a Q-matrix that keeps them (:data:`ROUNDED_KINDS`). Only such a Q-matrix has a float32
    ``XT32``, so it is a type of its own: the code of other Q-matrices types ``XT32``'s passes
    as ``XT``'s (no second specialisation), and the drivers' column code drops them
    (:func:`_keeps_rounded`)."""
    return out.itemsize == 4 and qm.XT32.shape[0] > 0


def _keeps_rounded(qm: Any, out: Any) -> bool:
    """At typing time: whether columns of type ``out`` come from the Q-matrix type ``qm``'s
    rounded features (a float32 ``out`` and a float32 ``XT32``, which is only ever a kept,
    non-empty copy: :func:`with_rounded_features`)."""
    tup = qm.inner if isinstance(qm, Ref) else qm  # a Q-matrix or a Ref to one
    return (out.dtype == types.float32
            and tup.types[tup.fields.index("XT32")].dtype == types.float32)


@njit(**INTERNAL)
def _column_range(qm: QMatrix, i: int, lo: int, hi: int, out: np.ndarray, dots: np.ndarray,
                  bits: np.ndarray) -> None:
    """:func:`fill_column` on the positions ``lo <= k < hi`` with the scratch ``dots``, ``bits``
    (``hi - lo`` long)."""
    m = hi - lo
    if rounded_features(qm, out):
        _layout_dots(qm, qm.XT32, qm.sqT32, i, lo, hi, dots)
    else:
        _layout_dots(qm, qm.XT, qm.sqT, i, lo, hi, dots)
    finish_values(qm.kind, qm.gamma, qm.coef0, qm.degree, dots, bits)
    o, yT = out[lo:hi], qm.yT[lo:hi]
    y_i = qm.y[i]
    for k in range(m):
        o[k] = y_i * yT[k] * dots[k]


@njit(parallel=True)
def _column_threads(qm: QMatrix, i: int, lo: int, hi: int, out: np.ndarray) -> None:
    """:func:`_column_range` on ``len(qm.pool)`` ranges of whole blocks of 512 positions, one a
    thread (each on its part of the scratch): every entry as on one thread, bit for bit."""
    parts = qm.pool.shape[0]
    step = ((hi - lo + parts - 1) // parts + 511) // 512 * 512
    for p in prange(parts):
        a = lo + p * step
        b = min(hi, a + step)
        if a < b:
            _column_range(qm, i, a, b, out, qm.dots[a - lo : b - lo], qm.bits[a - lo : b - lo])


def fill_column(qm, i, lo, hi, out):  # noqa: ANN001, ANN201 (an overload's names must match)
    """``out[k] = y_i y_t K(x_t, x_i)``, ``t = order[k]``, for the positions ``lo <= k < hi``,
    rounded to ``out``'s dtype (the products are float64); on several threads when the
    Q-matrix was built for them (``make_qmatrix(threads=k)``) and the column is long.

    Compiled callers get the code of the Q-matrix's type (:func:`_fill_column_by_type`, no
    call in between); Python callers go through :func:`_fill_column_entry`."""
    _fill_column_entry(qm, i, lo, hi, out)


@overload(fill_column)
def _fill_column_by_type(qm, i, lo, hi, out):  # noqa: ANN001, ANN202
    """A Q-matrix built for several threads (``pool`` 2-D) computes long columns of dense data
    on them (:func:`_column_threads`, where ``(hi - lo) (d + 32) >= THREAD_WORK``); any other
    takes one thread, and its callers compile no parallel code."""
    tup = qm.inner if isinstance(qm, Ref) else qm  # a Q-matrix or a Ref to one
    if tup.types[tup.fields.index("pool")].ndim == 2:
        def threaded(qm, i, lo, hi, out):  # noqa: ANN001, ANN202
            if (qm.G.shape[0] == 0 and qm.indptr.shape[0] == 0
                    and (hi - lo) * (qm.XT.shape[0] + 32) >= THREAD_WORK):
                _column_threads(qm, i, lo, hi, out)
            else:
                _column_range(qm, i, lo, hi, out, qm.dots[: hi - lo], qm.bits[: hi - lo])
        return threaded
    return _serial_column(_keeps_rounded(qm, out))


def _serial_column(rounded: bool):  # noqa: ANN202
    """:func:`_column_range` on the Q-matrix's own scratch, without a call in between;
    ``rounded`` (:func:`_keeps_rounded`): from ``XT32`` where the Q-matrix keeps it. Only such
    columns compile that branch: Numba drops ``if rounded`` on a constant False before typing."""

    def column_range_serial(qm, i, lo, hi, out):  # noqa: ANN001, ANN202
        m = hi - lo
        dots = qm.dots[:m]
        if rounded:
            _layout_dots(qm, qm.XT32, qm.sqT32, i, lo, hi, dots)
        else:
            _layout_dots(qm, qm.XT, qm.sqT, i, lo, hi, dots)
        finish_values(qm.kind, qm.gamma, qm.coef0, qm.degree, dots, qm.bits[:m])
        o, yT = out[lo:hi], qm.yT[lo:hi]
        y_i = qm.y[i]
        for k in range(m):
            o[k] = y_i * yT[k] * dots[k]

    return column_range_serial


@njit(**ENTRY)
def _fill_column_entry(qm: QMatrix, i: int, lo: int, hi: int, out: np.ndarray) -> None:
    """:func:`fill_column` for Python callers."""
    fill_column(qm, i, lo, hi, out)


@njit(inline="always")
def fill_columns(qm: QMatrix, cols: np.ndarray, nb: int, L: int, data: np.ndarray,
                 offsets: np.ndarray, acc: np.ndarray) -> None:
    """Columns ``cols[:nb]`` on the layout's ``L`` positions into
    ``data[offsets[b] : offsets[b] + L]``. With :func:`blas_columns` (``nb <= len(qm.block)``):
    one BLAS product (:func:`_blas_fill`). Otherwise (``nb <= MAX_BLOCK``), on dense data in one
    pass over ``XT`` (``XT32`` where :func:`rounded_features`; :func:`_pass_columns`), bit for
    bit the values of :func:`fill_column`; one at a time on other data."""
    if not is_dense(qm):
        for b in range(nb):
            fill_column(qm, cols[b], np.int64(0), L, data[offsets[b] : offsets[b] + L])
    elif blas_columns(qm, L, data):
        _blas_fill(qm, cols, nb, L, data, offsets)
    else:
        _columns_in_one_pass(qm, cols, nb, L, data, offsets, acc)


def _columns_in_one_pass(qm, cols, nb, L, data, offsets, acc):  # noqa: ANN001, ANN201
    """:func:`_pass_columns` over ``XT32`` where :func:`rounded_features`, else over ``XT``.
    Compiled callers only (:func:`_columns_in_one_pass_by_type`)."""


@overload(_columns_in_one_pass, jit_options=INTERNAL)
def _columns_in_one_pass_by_type(qm, cols, nb, L, data, offsets, acc):  # noqa: ANN001, ANN202
    """The code for ``data``'s and the Q-matrix's types: only float32 ``data`` and rounded
    features compile the pass over ``XT32`` (:func:`_keeps_rounded`)."""
    if not _keeps_rounded(qm, data):
        def float64_columns(qm, cols, nb, L, data, offsets, acc):  # noqa: ANN001, ANN202
            _pass_columns(qm, qm.XT, qm.sqT, cols, nb, L, data, offsets, acc)
        return float64_columns

    def float32_columns(qm, cols, nb, L, data, offsets, acc):  # noqa: ANN001, ANN202
        _pass_columns(qm, qm.XT32, qm.sqT32, cols, nb, L, data, offsets, acc)
    return float32_columns


@njit(**INTERNAL)
def _pass_columns(qm: QMatrix, XT: np.ndarray, sqT: np.ndarray, cols: np.ndarray, nb: int,
                  L: int, data: np.ndarray, offsets: np.ndarray, acc: np.ndarray) -> None:
    """:func:`fill_columns` in one pass over the features ``XT`` with their norms ``sqT``
    (``qm.XT``, ``qm.sqT`` or ``qm.XT32``, ``qm.sqT32``):
    each block of ``BLOCK_ROWS`` rows of every feature read once for all ``nb`` columns,
    ``acc`` their partial sums, summed in feature order as :func:`_layout_dots`."""
    d, pos = XT.shape[0], qm.pos
    for b0 in range(0, L, BLOCK_ROWS):
        b1 = min(L, b0 + BLOCK_ROWS)
        m = b1 - b0
        for b in range(nb):
            a = acc[b]
            for k in range(m):
                a[k] = 0.0
        f = 0
        while f + 4 <= d:  # four features a pass, in feature order
            r0, r1, r2, r3 = XT[f, b0:b1], XT[f + 1, b0:b1], XT[f + 2, b0:b1], XT[f + 3, b0:b1]
            for b in range(nb):
                c = pos[cols[b]]
                x0, x1 = np.float64(XT[f, c]), np.float64(XT[f + 1, c])
                x2, x3 = np.float64(XT[f + 2, c]), np.float64(XT[f + 3, c])
                a = acc[b]
                for k in range(m):
                    a[k] = a[k] + r0[k] * x0 + r1[k] * x1 + r2[k] * x2 + r3[k] * x3
            f += 4
        for rest in range(f, d):
            row = XT[rest, b0:b1]
            for b in range(nb):
                xf = np.float64(XT[rest, pos[cols[b]]])
                a = acc[b]
                for k in range(m):
                    a[k] += row[k] * xf
        yb = qm.yT[b0:b1]
        for b in range(nb):
            i = cols[b]
            a = acc[b][:m]
            if qm.kind == KIND_RBF and _rbf_distances(sqT, pos[i], b0, b1, a) > 0:
                _near_distances(qm, XT, sqT, pos[i], b0, b1, a)
            finish_values(qm.kind, qm.gamma, qm.coef0, qm.degree, a, qm.bits[:m])
            out = data[offsets[b] + b0 : offsets[b] + b1]
            y_i = qm.y[i]
            for k in range(m):
                out[k] = y_i * yb[k] * a[k]


@njit
def blas_columns(qm: QMatrix, L: int, data: np.ndarray) -> bool:
    """Whether :func:`fill_columns` takes blocks of up to ``len(qm.block)`` columns into
    ``data`` by BLAS: the buffers exist (wide data, ``blocks=True``), the layout holds at least
    half the points and the columns do not come from rounded features
    (:func:`rounded_features`)."""
    return (qm.block.shape[0] > 0 and 2 * L >= qm.XT.shape[1]
            and not rounded_features(qm, data))


@njit
def _blas_fill(qm: QMatrix, cols: np.ndarray, nb: int, L: int, data: np.ndarray,
               offsets: np.ndarray) -> None:
    """:func:`fill_columns` by one BLAS product: the inner products ``X[cols] XT`` of the
    ``nb`` points with every point (layout order), then the kernel formula on the layout's
    ``L`` positions. The products round as BLAS sums (in blocks of features, fused
    multiply-adds), so an entry may differ from :func:`fill_column`'s in the last bits of
    float64; the float64 certificate is computed from the data, not from these columns."""
    P, D, X = qm.panel[:nb], qm.block[:nb], qm.X
    for b in range(nb):
        for f in range(X.shape[1]):
            P[b, f] = X[cols[b], f]
    np.dot(P, qm.XT, D)  # BLAS dgemm, as NumPy
    yT = qm.yT
    for b in range(nb):
        i = cols[b]
        values = D[b, :L]
        if qm.kind == KIND_RBF and _rbf_distances(qm.sqT, qm.pos[i], 0, L, values) > 0:
            _near_distances(qm, qm.XT, qm.sqT, qm.pos[i], np.int64(0), L, values)  # no literal
        finish_values(qm.kind, qm.gamma, qm.coef0, qm.degree, values, qm.bits[:L])
        out = data[offsets[b] : offsets[b] + L]
        y_i = qm.y[i]
        for k in range(L):
            out[k] = y_i * yT[k] * values[k]


@njit(**INTERNAL)
def kernel_value(qm: QMatrix, i: int, j: int) -> float:
    """One entry ``K(x_i, x_j)`` in float64
    (:func:`~maxmargin.kernels.formulas.kernel_entry`): ``x_i . x_j`` summed in feature order,
    for rbf turned into ``||x_i - x_j||^2`` as the columns do (:func:`_rbf_distances`,
    :func:`_near_distances`: the same distance, bit for bit)."""
    if qm.G.shape[0] > 0:
        return qm.G[i, j]
    if qm.indptr.shape[0] > 0:
        s = _sparse_dot(qm, i, j)
    else:
        X = qm.X
        s = 0.0
        for f in range(X.shape[1]):
            s += X[i, f] * X[j, f]
    if qm.kind == KIND_RBF:
        s = expanded_distance(s, qm.sq[i], qm.sq[j])
        if cancelled(s, qm.sq[i], qm.sq[j]):
            s = _difference_distance(qm, qm.XT, qm.pos[i], qm.pos[j])
    return kernel_entry(qm.kind, qm.gamma, qm.coef0, qm.degree, s)


def diagonal(qm: QMatrix) -> np.ndarray:
    """``K(x_i, x_i)`` for every ``i`` (original order), from the same data as the columns:
    :func:`kernel_value`'s ``(i, i)`` entries, bit for bit. A dense ``x_i . x_i`` is ``sq[i]``
    (:func:`_centre_transpose`' order), so dense linear data have ``sq`` itself; rbf data 1
    (a point's distance to itself cancels, and its differences are 0; NaN where ``sq[i]`` is
    not finite), a stored Gram matrix its diagonal; the other kernels and sparse data (a row's
    merge with itself: its squared values summed in order) are computed by
    :func:`_diagonal`."""
    if qm.G.shape[0] > 0:
        return np.diagonal(qm.G).copy()
    if qm.indptr.shape[0] == 0 and qm.kind == KIND_LINEAR:
        return qm.sq.copy()
    if qm.kind == KIND_RBF:
        return np.where(np.isfinite(qm.sq + qm.sq), 1.0, np.nan)
    return _diagonal(qm.XT, qm.order, qm.indptr, qm.values, qm.sq, qm.kind, qm.gamma,
                     qm.coef0, qm.degree)


@njit
def _diagonal(XT: np.ndarray, order: np.ndarray, indptr: np.ndarray, values: np.ndarray,
              sq: np.ndarray, kind: int, gamma: float, coef0: float,
              degree: int) -> np.ndarray:
    """:func:`diagonal` of poly and sigmoid dense data and of sparse linear, poly and sigmoid
    data, from the Q-matrix's arrays (a call unboxes these, not all of them); each dense
    ``x_i . x_i`` summed in feature order (as :func:`kernel_value`), the points side by side in
    the layout ``XT``."""
    n = sq.shape[0]
    out = np.empty(n)
    if indptr.shape[0] > 0:
        for i in range(n):
            s = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                s += values[p] * values[p]
            out[i] = kernel_entry(kind, gamma, coef0, degree, s)
        return out
    dots = np.zeros(n)  # by layout position
    for f in range(XT.shape[0]):
        row = XT[f]
        for k in range(n):
            dots[k] += row[k] * row[k]
    for k in range(n):
        i = order[k]
        out[i] = kernel_entry(kind, gamma, coef0, degree, dots[k])
    return out


@njit(**ENTRY)
def quadratic_form(qm: QMatrix, idx: np.ndarray, v: np.ndarray) -> float:
    """``v^T K[idx, idx] v`` in float64, row by row over the upper triangle:
    ``sum_g v_g (2 sum_{c >= g} v_c K_gc - v_g K_gg)``; ``O(m^2)`` kernel values."""
    m = idx.shape[0]
    total = 0.0
    for g in range(m):
        s = 0.0
        for c in range(g, m):
            s += v[c] * kernel_value(qm, idx[g], idx[c])
        total += v[g] * (2.0 * s - v[g] * kernel_value(qm, idx[g], idx[g]))
    return total
