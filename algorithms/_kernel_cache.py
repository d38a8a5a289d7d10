"""Kernel columns on demand for SMO: compiled evaluation and an LRU cache bounded in megabytes.

SMO touches the matrix ``Q_ij = y_i y_j K(x_i, x_j)`` one column at a time. Like LIBSVM's
``Cache`` class, this module keeps the most recently used columns in a fixed budget of
``cache_size`` MB, stored in float32 (LIBSVM's ``Qfloat``, the default) or float64 (SMO's
``precision="double"``: half as many columns per MB); the solver's gradient stays in float64.
The code is dtype-generic: Numba compiles one specialisation per cache dtype. Everything here
is preallocated arrays and ``@njit`` functions so the whole SMO loop runs in compiled code:

* :class:`ColumnCache` -- the slots (a ``(n_slots, n)`` float32 or float64 block,
  ``n_slots = budget / (itemsize n)``, at least 2), who owns which slot, and a doubly linked
  LRU list over the slots.
* :func:`get_column` -- the slot holding column ``i`` of ``Q``, computing it on a miss after
  evicting the least recently used column.
* :func:`kernel_value` (one float64 entry) and :func:`quadratic_form` (``v^T K v`` in float64,
  for the exact objective at the end of a run).

Shrinking (see :mod:`maxmargin.algorithms.smo`) only needs the rows of the *active* variables.
A column computed while the active set was ``A`` is valid as long as the active set stays a subset
of ``A``; between two "unshrink" events the active set only shrinks, so each slot remembers the
*epoch* (number of unshrinks so far) in which it was filled, or :data:`FULL` when it holds all
``n`` rows. A partial column from an older epoch is recomputed.

Kernel values are computed row-block-wise with vectorisable loops over the data transposed
(``XT``, shape ``(d, n)``) and squared norms precomputed, ``||x - z||^2 = x.x + z.z - 2 x.z``.
The RBF exponential is :func:`maxmargin.kernels.exp_scaled_inplace` (range reduction and a
degree-13 Taylor polynomial, float64-accurate before the cache's rounding) because it vectorises
where ``math.exp`` does not.
"""

from __future__ import annotations

import contextlib
import itertools
import mmap
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
from numba import njit, objmode
from numpy.typing import DTypeLike

from maxmargin.kernels import Kernel, exp_scaled_inplace

__all__ = [
    "FULL",
    "ColumnCache",
    "KernelData",
    "fill_column",
    "get_column",
    "kernel_value",
    "make_cache",
    "make_kernel_data",
    "n_slots_for",
    "python_kernel",
    "quadratic_form",
]

#: ``epoch_of[slot]`` value of a slot that holds all ``n`` rows of its column.
FULL = -1


class KernelData(NamedTuple):
    """What compiled code needs to evaluate ``Q_ij = y_i y_j K(x_i, x_j)``."""

    X: np.ndarray  # (n, d) float64, rows = points (for gathers of a few rows)
    XT: np.ndarray  # (d, n) float64, the transpose (for contiguous, vectorised columns)
    sq: np.ndarray  # (n,) squared norms x_i . x_i
    y: np.ndarray  # (n,) labels +-1
    kind: int  # 0 linear, 1 rbf, 2 poly (compiled); 3 any other kernel or sparse data (Python)
    token: int  # kind 3: the key of (kernel, X) in _PYTHON_KERNELS
    gamma: float
    coef0: float
    degree: int
    dots: np.ndarray  # (n,) float64 scratch
    bits: np.ndarray  # (n,) int64 scratch (exponent bits of the RBF exponential)


class ColumnCache(NamedTuple):
    """An LRU cache of columns of ``Q`` (float32 or float64) within a byte budget (LIBSVM's
    ``Cache``)."""

    data: np.ndarray  # (n_slots, n) float32 (LIBSVM's Qfloat) or float64
    slot_of: np.ndarray  # (n,) slot holding column i, or -1
    owner: np.ndarray  # (n_slots,) column held by the slot, or -1 when empty
    epoch_of: np.ndarray  # (n_slots,) epoch the slot was filled in, FULL for complete columns
    prev: np.ndarray  # (n_slots + 1,) LRU list; node n_slots is the sentinel (head)
    next: np.ndarray  # (n_slots + 1,)  next[head] = least recently used slot
    state: np.ndarray  # (4,) int64: current epoch, hits, misses, kernel rows computed


#: Kernels evaluated in Python (kind 3) while a solver runs: token -> (kernel, X).
_PYTHON_KERNELS: dict[int, tuple[Kernel, object]] = {}
_TOKENS = itertools.count(1)


def _python_dots(token: int, i: int, rows: np.ndarray | None, dots: np.ndarray) -> None:
    """``dots[k] = K(x_{rows[k]}, x_i)`` (all rows when ``rows`` is None), by the kernel
    object's own block evaluation."""
    kernel, X = _PYTHON_KERNELS[token]
    A = X if rows is None else X[rows]
    dots[: A.shape[0]] = kernel._block(A, X[i : i + 1])[:, 0]


def _python_value(token: int, i: int, j: int) -> float:
    kernel, X = _PYTHON_KERNELS[token]
    return float(kernel._block(X[i : i + 1], X[j : j + 1])[0, 0])


# The calls into Python live in functions of one fixed signature each: an object-mode block
# inside a function compiled (and cached) in several specialisations -- fill_column exists for
# float32 and float64 caches -- can be loaded from Numba's cache for the wrong one.
@njit("void(int64, int64, int64[:], boolean, float64[:])", cache=True)
def _python_column(token, i, rows, contiguous, dots):  # noqa: ANN001
    """``dots[k] = K(x_{rows[k]}, x_i)`` (all rows when ``contiguous``) by the registered
    kernel object."""
    with objmode():
        _python_dots(token, i, None if contiguous else rows, dots)


@njit("float64(int64, int64, int64)", cache=True)
def _python_entry(token, i, j):  # noqa: ANN001
    with objmode(v="float64"):
        v = _python_value(token, i, j)
    return v


@contextlib.contextmanager
def python_kernel(kd: KernelData, kernel: Kernel, X: object) -> Iterator[None]:
    """Register ``(kernel, X)`` for a kind-3 :class:`KernelData` while a solver runs."""
    if kd.kind != 3:
        yield
        return
    _PYTHON_KERNELS[kd.token] = (kernel, X)
    try:
        yield
    finally:
        _PYTHON_KERNELS.pop(kd.token, None)


def make_kernel_data(kernel: Kernel, X: object, y: np.ndarray) -> KernelData:
    """Pack a validated kernel and data set for :func:`get_column`.

    The built-in kernels on dense data are evaluated by compiled code (kinds 0-2); any other
    kernel object, and sparse data, by the kernel object itself (kind 3, called from the
    compiled loop; register it with :func:`python_kernel` while solving).
    """
    n = X.shape[0]
    if kernel.kernel_id not in (0, 1, 2) or not isinstance(X, np.ndarray):
        empty = np.zeros((0, 0))
        return KernelData(
            X=empty, XT=empty, sq=np.zeros(0), y=np.ascontiguousarray(y, dtype=np.float64),
            kind=3, token=next(_TOKENS), gamma=0.0, coef0=0.0, degree=1, dots=np.empty(n),
            bits=np.empty(n, dtype=np.int64),
        )
    gamma, coef0, degree = kernel.params
    X = np.ascontiguousarray(X, dtype=np.float64)
    if kernel.kernel_id == 1:  # RBF is translation invariant: centring shrinks the cancellation
        X = np.ascontiguousarray(X - X.mean(axis=0))   # in x.x + z.z - 2 x.z
    n = X.shape[0]
    return KernelData(
        X=X,
        XT=np.ascontiguousarray(X.T),
        sq=np.einsum("ij,ij->i", X, X),
        y=np.ascontiguousarray(y, dtype=np.float64),
        kind=int(kernel.kernel_id),
        token=0,
        gamma=float(gamma),
        coef0=float(coef0),
        degree=int(degree),
        dots=np.empty(n),
        bits=np.empty(n, dtype=np.int64),
    )


def n_slots_for(n: int, cache_size: float, itemsize: int = 4) -> int:
    """Columns that fit in ``cache_size`` MB: ``floor(cache_size 2^20 / (itemsize n))``.

    ``itemsize`` is 4 for float32, 8 for float64. At least 2 (SMO needs two columns at once)
    and at most ``n``.
    """
    return int(max(2, min(n, int(cache_size * 2**20) // (itemsize * n))))


def _column_block(slots: int, n: int, dtype: np.dtype) -> np.ndarray:
    """An uninitialised ``(slots, n)`` block of ``dtype``, on transparent huge pages when possible.

    The cache is written column by column as SMO runs; with 4 KiB pages every new column costs
    page faults (expensive in virtual machines), with 2 MiB pages (``MADV_HUGEPAGE``, an anonymous
    ``mmap``) far fewer. Falls back to ``np.empty`` where ``madvise`` is unavailable.
    """
    nbytes = slots * n * dtype.itemsize
    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    if advice is None or nbytes < 2**22:
        return np.empty((slots, n), dtype=dtype)
    try:
        buf = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        buf.madvise(advice)
    except (OSError, ValueError, AttributeError):
        return np.empty((slots, n), dtype=dtype)
    return np.frombuffer(buf, dtype=dtype).reshape(slots, n)  # keeps `buf` alive


def make_cache(n: int, cache_size: float, dtype: DTypeLike = np.float32) -> ColumnCache:
    """An empty cache for ``n`` variables within ``cache_size`` MB (see ``n_slots_for``).

    ``dtype`` is ``np.float32`` (LIBSVM's ``Qfloat``) or ``np.float64``.
    """
    dtype = np.dtype(dtype)
    slots = n_slots_for(n, cache_size, dtype.itemsize)
    head = slots
    order = np.arange(slots + 1, dtype=np.int64)
    # circular list head -> 0 -> 1 -> ... -> slots-1 -> head: empty slots are used first
    nxt = np.roll(order, -1)
    prv = np.roll(order, 1)
    nxt[head], prv[head] = 0, slots - 1
    return ColumnCache(
        data=_column_block(slots, n, dtype),
        slot_of=np.full(n, -1, dtype=np.int64),
        owner=np.full(slots, -1, dtype=np.int64),
        epoch_of=np.full(slots, FULL, dtype=np.int64),
        prev=prv,
        next=nxt,
        state=np.zeros(4, dtype=np.int64),
    )


# --- kernel evaluation ---------------------------------------------------------------------


@njit(cache=True)
def _finish_kernel(kd: KernelData, m: int) -> None:
    """Turn ``kd.dots[:m]`` into kernel values, in place, with index-free (SIMD) loops.

    On entry ``dots`` holds ``||x_t - x_i||^2`` for rbf and ``x_t . x_i`` otherwise.
    linear ``K = x.z``; rbf ``K = exp(-gamma ||x - z||^2)``; poly ``K = (gamma x.z + coef0)^degree``
    (integer power by repeated multiplication). Loops run from 0 over slices: Numba then knows
    the indices are non-negative, and LLVM vectorises them.
    """
    dots = kd.dots[:m]
    if kd.kind == 1:
        exp_scaled_inplace(dots, kd.bits[:m], kd.gamma)
    elif kd.kind == 2:
        gamma, coef0, degree = kd.gamma, kd.coef0, kd.degree
        for k in range(m):
            base = gamma * dots[k] + coef0
            v = base
            for _ in range(degree - 1):
                v *= base
            dots[k] = v


@njit(cache=True)
def _contiguous_dots(kd: KernelData, i: int) -> None:
    """``dots[t] = x_t . x_i`` (rbf: ``||x_t - x_i||^2``) for all rows ``t``.

    Runs over ``XT`` with unit stride, one feature at a time over blocks of 512 rows (kept in
    L1), which vectorises. Squared distances ``x.x + z.z - 2 x.z`` are clamped at 0.
    """
    XT, sq = kd.XT, kd.sq
    n = XT.shape[1]
    sq_i = sq[i]
    for b0 in range(0, n, 512):
        b1 = min(n, b0 + 512)
        m = b1 - b0
        dots = kd.dots[b0:b1]
        for k in range(m):
            dots[k] = 0.0
        for f in range(XT.shape[0]):
            row = XT[f, b0:b1]
            xf = XT[f, i]
            for k in range(m):
                dots[k] += row[k] * xf
        if kd.kind == 1:
            sqb = sq[b0:b1]
            for k in range(m):
                dots[k] = max(sqb[k] + sq_i - 2.0 * dots[k], 0.0)


@njit(cache=True)
def _gather_dots(kd: KernelData, i: int, idx: np.ndarray) -> None:
    """``dots[k] = x_{idx[k]} . x_i`` (rbf: the squared distance), from rows of ``X``.

    The sum over features runs in the same order as in :func:`_contiguous_dots`, so every path
    gives bit-identical, symmetric ``Q_ij = Q_ji``: SMO then solves one fixed (cache-rounded)
    problem exactly, as LIBSVM does, instead of chasing inconsistent copies of the matrix.
    """
    X, sq, dots = kd.X, kd.sq, kd.dots
    xi = X[i]
    sq_i = sq[i]
    rbf = kd.kind == 1
    for k in range(idx.shape[0]):
        t = idx[k]
        xt = X[t]
        s = 0.0
        for f in range(xi.shape[0]):
            s += xt[f] * xi[f]
        dots[k] = max(sq[t] + sq_i - 2.0 * s, 0.0) if rbf else s


@njit(cache=True)
def fill_column(
    kd: KernelData, i: int, rows: np.ndarray, m: int, contiguous: bool, out: np.ndarray
) -> None:
    """``out[t] = y_i y_t K(x_t, x_i)`` for ``t`` in ``rows[:m]``, rounded to ``out``'s dtype.

    The products are float64; the assignment into ``out`` (float32 or float64) rounds to nearest.
    ``contiguous`` means all rows in order (``rows[k] == k``, ``m == n``): the vectorised path.
    """
    if kd.kind == 3:
        _python_column(kd.token, i, rows[:m], contiguous, kd.dots)
    elif contiguous:
        _contiguous_dots(kd, i)
    else:
        _gather_dots(kd, i, rows[:m])
    _finish_kernel(kd, m)
    dots, y = kd.dots[:m], kd.y
    y_i = y[i]
    if contiguous:
        o = out[:m]
        yc = y[:m]
        for k in range(m):
            o[k] = y_i * yc[k] * dots[k]
    else:
        for k in range(m):
            t = rows[k]
            out[t] = y_i * y[t] * dots[k]


# --- the LRU cache -------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _lru_unlink(c: ColumnCache, s: int) -> None:
    c.next[c.prev[s]] = c.next[s]
    c.prev[c.next[s]] = c.prev[s]


@njit(cache=True, inline="always")
def _lru_append(c: ColumnCache, s: int) -> None:
    """Make slot ``s`` the most recently used (just before the sentinel)."""
    head = c.owner.shape[0]
    last = c.prev[head]
    c.prev[s] = last
    c.next[s] = head
    c.next[last] = s
    c.prev[head] = s


@njit(cache=True, inline="always")
def get_column(
    c: ColumnCache, kd: KernelData, i: int, act: np.ndarray, m: int, full: bool
) -> np.ndarray:
    """Column ``i`` of ``Q`` (the cache's dtype, indexed by the original row numbers).

    Valid on the active rows ``act[:m]``, or on all ``n`` rows when ``full`` (or ``m == n``).
    A cached column is reused if it is complete, or if it was filled in the current epoch (the
    active set has only shrunk since). Otherwise the least recently used slot (or the column's own
    stale slot) is refilled. The slot becomes the most recently used, so two consecutive calls
    never evict each other's column when there are at least two slots.
    """
    n = c.slot_of.shape[0]
    s = c.slot_of[i]
    st = c.state
    if s >= 0:
        ep = c.epoch_of[s]
        if ep == FULL or (not full and ep == st[0]):
            _lru_unlink(c, s)
            _lru_append(c, s)
            st[1] += 1
            return c.data[s]
    else:
        head = c.owner.shape[0]
        s = c.next[head]
        old = c.owner[s]
        if old >= 0:
            c.slot_of[old] = -1
        c.owner[s] = i
        c.slot_of[i] = s
    # the contiguous SIMD path over all n rows costs about as much as gathering n / 2 rows
    whole = full or 2 * m >= n
    rows = n if whole else m
    fill_column(kd, i, act, rows, whole, c.data[s])
    c.epoch_of[s] = FULL if whole else st[0]
    st[3] += rows
    _lru_unlink(c, s)
    _lru_append(c, s)
    st[2] += 1
    return c.data[s]


@njit(cache=True)
def kernel_value(kd: KernelData, i: int, j: int) -> float:
    """One entry ``K(x_i, x_j)`` in float64 (the formulas of the columns, ``math.exp``)."""
    if kd.kind == 3:
        return _python_entry(kd.token, i, j)
    X = kd.X
    s = 0.0
    for f in range(X.shape[1]):
        s += X[i, f] * X[j, f]
    if kd.kind == 1:
        return np.exp(-kd.gamma * max(kd.sq[i] + kd.sq[j] - 2.0 * s, 0.0))
    if kd.kind == 2:
        base = kd.gamma * s + kd.coef0
        v = base
        for _ in range(kd.degree - 1):
            v *= base
        return v
    return s


@njit(cache=True)
def quadratic_form(kd: KernelData, idx: np.ndarray, v: np.ndarray) -> float:
    """``v^T K[idx, idx] v`` in float64 (kernel values before the cache's rounding).

    Row by row over the upper triangle, ``sum_g v_g (2 sum_{c >= g} v_c K_gc - v_g K_gg)``, with
    the vectorised loops of the columns (no BLAS: a multithreaded BLAS on a busy machine was
    30 times slower here). Time ``O(m^2 d / 2)``, memory ``O(m d)`` for ``m = len(idx)``.
    """
    m = idx.shape[0]
    XsT = np.ascontiguousarray(kd.X[idx].T)
    sq = kd.sq[idx]
    rbf = kd.kind == 1
    total = 0.0
    for g in range(m):
        width = m - g
        dots = kd.dots[:width]
        for k in range(width):
            dots[k] = 0.0
        for f in range(XsT.shape[0]):
            row = XsT[f, g:]
            xf = XsT[f, g]
            for k in range(width):
                dots[k] += row[k] * xf
        if rbf:
            sq_tail = sq[g:]
            for k in range(width):
                dots[k] = max(sq[g] + sq_tail[k] - 2.0 * dots[k], 0.0)
        _finish_kernel(kd, width)
        v_tail = v[g:]
        s = 0.0
        for k in range(width):
            s += v_tail[k] * dots[k]
        total += v[g] * (2.0 * s - v[g] * dots[0])
    return total
