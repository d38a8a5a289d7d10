"""Kernel columns on demand for SMO: compiled evaluation and an LRU cache in LIBSVM's layout.

SMO touches the matrix ``Q_ij = y_i y_j K(x_i, x_j)`` one column at a time. Like LIBSVM's
``Cache`` class, this module keeps the most recently used columns in a fixed budget of
``cache_size`` MB, stored in float32 (LIBSVM's ``Qfloat``, the default) or float64 (SMO's
``precision="double"``); the solver's gradient stays in float64. The code is dtype-generic:
Numba compiles one specialisation per cache dtype.

**Layout.** The variables are kept in an order (``KernelData.order``: position ``k`` holds
variable ``order[k]``; ``pos`` is the inverse) whose first ``L`` positions, the *layout*, hold
every active variable. A cached column stores ``Q[order[k], i]`` for the positions ``k < L``
only, so the budget holds ``budget / L`` columns: as shrinking makes the active set small, the
cache holds correspondingly more columns (LIBSVM's columns have the active length for the same
reason). :func:`compact_layout` moves the active variables to the front (stable) and repacks the
cached columns in place when the active set has shrunk by a good fraction; :func:`grow_layout`
extends the layout to all ``n`` variables (unshrinking), keeping the most recently used columns
as valid prefixes (``len_of``) that :func:`get_column` completes on demand. The features are
kept transposed in layout order (``XT``, ``sqT``, ``yT``), so every column is computed by one
contiguous, vectorised loop.

* :class:`ColumnCache` -- a flat block of the cache dtype, slots of the layout length, who owns
  which slot, and a doubly linked LRU list over the slots.
* :func:`get_column` -- the layout part of column ``i`` of ``Q``, computing what is missing.
* :func:`kernel_value` (one float64 entry) and :func:`quadratic_form` (``v^T K v`` in float64).

Kernel values are computed block-wise with vectorisable loops over ``XT`` with squared norms
precomputed, ``||x - z||^2 = x.x + z.z - 2 x.z``. The RBF exponential is
:func:`maxmargin.kernels.exp_scaled_inplace` (range reduction and a degree-13 Taylor
polynomial, float64-accurate before the cache's rounding) because it vectorises where
``math.exp`` does not.
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
    "MAX_BLOCK",
    "ColumnCache",
    "KernelData",
    "compact_layout",
    "fill_column",
    "get_column",
    "grow_layout",
    "kernel_value",
    "load_columns",
    "make_cache",
    "make_kernel_data",
    "n_slots_for",
    "permute_prefix",
    "python_kernel",
    "quadratic_form",
]

# cache state c.state[...]
S_LEN, S_SLOTS, S_HITS, S_MISSES, S_ROWS, S_COMPACTIONS = 0, 1, 2, 3, 4, 5
#: :func:`load_columns` computes at most ``MAX_BLOCK`` columns in one pass, ``BLOCK_ROWS`` rows
#: at a time (their partial sums, 8 x 256 float64, stay in L1).
MAX_BLOCK, BLOCK_ROWS = 8, 256


class KernelData(NamedTuple):
    """What compiled code needs to evaluate ``Q_ij = y_i y_j K(x_i, x_j)``."""

    X: np.ndarray  # (n, d) float64, rows = points in the original order
    XT: np.ndarray  # (d, n) float64, the points transposed in layout order: XT[:, k] = X[order[k]]
    sq: np.ndarray  # (n,) squared norms x_i . x_i (original order)
    sqT: np.ndarray  # (n,) the same in layout order
    y: np.ndarray  # (n,) labels +-1 (original order)
    yT: np.ndarray  # (n,) the same in layout order
    order: np.ndarray  # (n,) int64: the variable at each layout position
    pos: np.ndarray  # (n,) int64: the layout position of each variable (order's inverse)
    kind: int  # 0 linear, 1 rbf, 2 poly (compiled); 3 any other kernel or sparse data (Python)
    token: int  # kind 3: the key of (kernel, X) in _PYTHON_KERNELS
    gamma: float
    coef0: float
    degree: int
    dots: np.ndarray  # (n,) float64 scratch
    bits: np.ndarray  # (n,) int64 scratch (exponent bits of the RBF exponential)


class ColumnCache(NamedTuple):
    """An LRU cache of the layout part of columns of ``Q`` within a byte budget (LIBSVM's
    ``Cache``). Slot ``s`` is ``data[s L : s L + L]`` for the layout length ``L``."""

    data: np.ndarray  # flat float32 (LIBSVM's Qfloat) or float64 block
    col: np.ndarray  # (n,) the cache's dtype: scratch for values outside the layout
    slot_of: np.ndarray  # (n,) slot holding column i, or -1
    owner: np.ndarray  # (max_slots,) column held by the slot, or -1 when empty
    len_of: np.ndarray  # (max_slots,) positions 0..len-1 of the slot's column are valid
    prev: np.ndarray  # (max_slots + 1,) LRU list; node max_slots is the sentinel (head)
    next: np.ndarray  # (max_slots + 1,)  next[head] = least recently used slot
    state: np.ndarray  # int64: layout length, slots, hits, misses, rows computed, compactions
    acc: np.ndarray  # (MAX_BLOCK, BLOCK_ROWS) float64: partial sums of load_columns
    picks: np.ndarray  # (2, MAX_BLOCK) int64: columns and their slots, for load_columns
    score: np.ndarray  # (MAX_BLOCK,) float64 scratch of the caller choosing the columns


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
    """Pack a validated kernel and data set for :func:`get_column`, in the identity layout.

    The built-in kernels on dense data are evaluated by compiled code (kinds 0-2); any other
    kernel object, and sparse data, by the kernel object itself (kind 3, called from the
    compiled loop; register it with :func:`python_kernel` while solving).
    """
    n = X.shape[0]
    y = np.ascontiguousarray(y, dtype=np.float64)
    layout = {
        "y": y, "yT": y.copy(), "order": np.arange(n, dtype=np.int64),
        "pos": np.arange(n, dtype=np.int64), "dots": np.empty(n),
        "bits": np.empty(n, dtype=np.int64),
    }
    if kernel.kernel_id not in (0, 1, 2) or not isinstance(X, np.ndarray):
        empty = np.zeros((0, 0))
        return KernelData(X=empty, XT=empty, sq=np.zeros(0), sqT=np.zeros(0), kind=3,
                          token=next(_TOKENS), gamma=0.0, coef0=0.0, degree=1, **layout)
    gamma, coef0, degree = kernel.params
    X = np.ascontiguousarray(X, dtype=np.float64)
    if kernel.kernel_id == 1:  # RBF is translation invariant: centring shrinks the cancellation
        X = np.ascontiguousarray(X - X.mean(axis=0))   # in x.x + z.z - 2 x.z
    sq = np.einsum("ij,ij->i", X, X)
    return KernelData(
        X=X, XT=X.T.copy(), sq=sq,  # a copy even when X.T is contiguous (d = 1): it is permuted
        sqT=sq.copy(), kind=int(kernel.kernel_id),
        token=0, gamma=float(gamma), coef0=float(coef0), degree=int(degree), **layout,
    )


def n_slots_for(n: int, cache_size: float, itemsize: int = 4) -> int:
    """Full-length columns that fit in ``cache_size`` MB: ``floor(cache_size 2^20 / (itemsize
    n))``, at least 2 (SMO needs two columns at once) and at most ``n``.

    ``itemsize`` is 4 for float32, 8 for float64. A layout of length ``L < n`` holds
    ``n_slots_for(L, ...)`` columns (at most ``n``).
    """
    return int(max(2, min(n, int(cache_size * 2**20) // (itemsize * n))))


def _column_block(size: int, dtype: np.dtype) -> np.ndarray:
    """An uninitialised flat block of ``size`` entries, on transparent huge pages when possible.

    The cache is written column by column as SMO runs; with 4 KiB pages every new column costs
    page faults (expensive in virtual machines), with 2 MiB pages (``MADV_HUGEPAGE``, an anonymous
    ``mmap``) far fewer. Falls back to ``np.empty`` where ``madvise`` is unavailable.
    """
    nbytes = size * dtype.itemsize
    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    if advice is None or nbytes < 2**22:
        return np.empty(size, dtype=dtype)
    try:
        buf = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        buf.madvise(advice)
    except (OSError, ValueError, AttributeError):
        return np.empty(size, dtype=dtype)
    return np.frombuffer(buf, dtype=dtype)  # keeps `buf` alive


def make_cache(n: int, cache_size: float, dtype: DTypeLike = np.float32) -> ColumnCache:
    """An empty cache for ``n`` variables within ``cache_size`` MB, layout length ``n``.

    ``dtype`` is ``np.float32`` (LIBSVM's ``Qfloat``) or ``np.float64``. The block has
    ``max(budget / itemsize, 2 n)`` entries (two full columns at least).
    """
    dtype = np.dtype(dtype)
    size = max(int(cache_size * 2**20) // dtype.itemsize, 2 * n)
    max_slots = max(n, 2)
    slots = n_slots_for(n, cache_size, dtype.itemsize)
    state = np.zeros(6, dtype=np.int64)
    state[S_LEN], state[S_SLOTS] = n, slots
    # the circular list head -> 0 -> 1 -> ... -> slots-1 -> head (head = max_slots)
    ring = np.append(np.arange(slots, dtype=np.int64), max_slots)
    nxt = np.zeros(max_slots + 1, dtype=np.int64)
    prv = np.zeros(max_slots + 1, dtype=np.int64)
    nxt[ring] = np.roll(ring, -1)
    prv[ring] = np.roll(ring, 1)
    return ColumnCache(
        data=_column_block(size, dtype),
        col=np.empty(n, dtype=dtype),
        slot_of=np.full(n, -1, dtype=np.int64),
        owner=np.full(max_slots, -1, dtype=np.int64),
        len_of=np.zeros(max_slots, dtype=np.int64),
        prev=prv,
        next=nxt,
        state=state,
        acc=np.empty((MAX_BLOCK, BLOCK_ROWS)),
        picks=np.empty((2, MAX_BLOCK), dtype=np.int64),
        score=np.empty(MAX_BLOCK),
    )


# --- kernel evaluation ---------------------------------------------------------------------


@njit(cache=True, no_cpython_wrapper=True)
def _finish_kernel(kd: KernelData, dots: np.ndarray, bits: np.ndarray) -> None:
    """Turn ``dots`` into kernel values, in place, with index-free (SIMD) loops (``bits``:
    scratch of the same length).

    On entry ``dots`` holds ``||x_t - x_i||^2`` for rbf and ``x_t . x_i`` otherwise.
    linear ``K = x.z``; rbf ``K = exp(-gamma ||x - z||^2)``; poly ``K = (gamma x.z + coef0)^degree``
    (integer power by repeated multiplication). Loops run from 0 over slices: Numba then knows
    the indices are non-negative, and LLVM vectorises them.
    """
    if kd.kind == 1:
        exp_scaled_inplace(dots, bits, kd.gamma)
    elif kd.kind == 2:
        gamma, coef0, degree = kd.gamma, kd.coef0, kd.degree
        for k in range(dots.shape[0]):
            base = gamma * dots[k] + coef0
            v = base
            for _ in range(degree - 1):
                v *= base
            dots[k] = v


@njit(cache=True, no_cpython_wrapper=True)
def _layout_dots(kd: KernelData, i: int, lo: int, hi: int) -> None:
    """``dots[k - lo] = x_t . x_i`` (rbf: ``||x_t - x_i||^2``) for the layout positions
    ``lo <= k < hi`` (``t = order[k]``).

    Runs over ``XT`` with unit stride, one feature at a time over blocks of 512 rows (kept in
    L1), which vectorises. Squared distances ``x.x + z.z - 2 x.z`` are clamped at 0. The sum
    over features runs in the same order for every column and in :func:`kernel_value`, so
    ``Q_ij = Q_ji`` bit for bit: SMO solves one fixed (cache-rounded) problem exactly, as
    LIBSVM does.
    """
    XT, sqT = kd.XT, kd.sqT
    xi = kd.X[i]
    sq_i = kd.sq[i]
    for b0 in range(lo, hi, 512):
        b1 = min(hi, b0 + 512)
        m = b1 - b0
        dots = kd.dots[b0 - lo : b1 - lo]
        for k in range(m):
            dots[k] = 0.0
        f, d = 0, XT.shape[0]
        while f + 4 <= d:  # four features a pass: a quarter of the loads and stores of dots
            r0, r1, r2, r3 = XT[f, b0:b1], XT[f + 1, b0:b1], XT[f + 2, b0:b1], XT[f + 3, b0:b1]
            x0, x1, x2, x3 = xi[f], xi[f + 1], xi[f + 2], xi[f + 3]
            for k in range(m):  # summed in feature order, as one feature a pass
                dots[k] = dots[k] + r0[k] * x0 + r1[k] * x1 + r2[k] * x2 + r3[k] * x3
            f += 4
        for rest in range(f, d):
            row = XT[rest, b0:b1]
            xf = xi[rest]
            for k in range(m):
                dots[k] += row[k] * xf
        if kd.kind == 1:
            sqb = sqT[b0:b1]
            for k in range(m):
                dots[k] = max(sqb[k] + sq_i - 2.0 * dots[k], 0.0)


@njit(cache=True, no_cpython_wrapper=True)
def _is_identity(order: np.ndarray) -> bool:
    for k in range(order.shape[0]):
        if order[k] != k:
            return False
    return True


@njit(cache=True)
def fill_column(kd: KernelData, i: int, lo: int, hi: int, out: np.ndarray) -> None:
    """``out[k] = y_i y_t K(x_t, x_i)``, ``t = order[k]``, for the positions ``lo <= k < hi``,
    rounded to ``out``'s dtype (the products are float64)."""
    m = hi - lo
    if kd.kind == 3:
        rows = kd.order[lo:hi]
        whole = m == kd.order.shape[0] and _is_identity(rows)
        _python_column(kd.token, i, rows, whole, kd.dots)
    else:
        _layout_dots(kd, i, lo, hi)
    _finish_kernel(kd, kd.dots[:m], kd.bits[:m])
    dots, o, yT = kd.dots[:m], out[lo:hi], kd.yT[lo:hi]
    y_i = kd.y[i]
    for k in range(m):
        o[k] = y_i * yT[k] * dots[k]


# --- the LRU cache -------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _lru_unlink(c: ColumnCache, s: int) -> None:
    c.next[c.prev[s]] = c.next[s]
    c.prev[c.next[s]] = c.prev[s]


@njit(cache=True, inline="always")
def _lru_link(c: ColumnCache, s: int, after: int) -> None:
    """Insert slot ``s`` into the LRU list just after node ``after``."""
    following = c.next[after]
    c.prev[s] = after
    c.next[s] = following
    c.prev[following] = s
    c.next[after] = s


@njit(cache=True, inline="always")
def _lru_append(c: ColumnCache, s: int) -> None:
    """Make slot ``s`` the most recently used (just before the sentinel)."""
    _lru_link(c, s, c.prev[c.owner.shape[0]])


@njit(cache=True, inline="always")
def _lru_prepend(c: ColumnCache, s: int) -> None:
    """Make slot ``s`` the least recently used (the next to be taken)."""
    _lru_link(c, s, c.owner.shape[0])


@njit(cache=True, inline="always")
def _take_lru_slot(c: ColumnCache, i: int) -> int:
    """The least recently used slot, now column ``i``'s (its old column, if any, uncached)."""
    s = c.next[c.owner.shape[0]]
    old = c.owner[s]
    if old >= 0:
        c.slot_of[old] = -1
    c.owner[s] = i
    c.slot_of[i] = s
    return s


@njit(cache=True, inline="always")
def get_column(c: ColumnCache, kd: KernelData, i: int) -> np.ndarray:
    """The layout part of column ``i`` of ``Q``: ``out[k] = Q[order[k], i]`` for ``k < L``.

    The slot becomes the most recently used, so two consecutive calls never evict each other's
    column (there are at least two slots). Only the hit is inlined; a miss or a partial column
    goes to :func:`load_column` (each inlined copy of it cost its caller compile time).
    """
    L = c.state[S_LEN]
    s = c.slot_of[i]
    if s >= 0 and c.len_of[s] >= L:
        _lru_unlink(c, s)
        _lru_append(c, s)
        c.state[S_HITS] += 1
    else:
        s = load_column(c, kd, i)
    return c.data[s * L : s * L + L]


@njit(cache=True, no_cpython_wrapper=True)
def load_column(c: ColumnCache, kd: KernelData, i: int) -> int:
    """Make column ``i`` valid on the layout's ``L`` positions and the most recently used;
    return its slot. A cached column is completed if only a prefix of it is valid (after
    :func:`grow_layout`); otherwise the least recently used slot is refilled."""
    st = c.state
    L = st[S_LEN]
    s = c.slot_of[i]
    if s >= 0:
        have = c.len_of[s]
    else:
        s = _take_lru_slot(c, i)
        have = np.int64(0)  # not a literal 0 (compile time: see smo/state.py's note on literals)
    _lru_unlink(c, s)
    _lru_append(c, s)
    fill_column(kd, i, have, L, c.data[s * L : s * L + L])
    c.len_of[s] = L
    st[S_ROWS] += L - have
    st[S_MISSES] += 1
    return s


@njit(cache=True, no_cpython_wrapper=True)
def load_columns(c: ColumnCache, kd: KernelData, nb: int) -> None:
    """Compute the uncached columns ``c.picks[0, :nb]`` (``nb <= MAX_BLOCK``; compiled kernels)
    on the layout's ``L`` positions in one pass over ``XT``: each block of ``BLOCK_ROWS`` rows of
    every feature is read once for all ``nb`` columns, instead of once per column. Every value
    is summed in the order of :func:`fill_column`, so the columns are bit for bit those computed
    one at a time. They take the least recently used slots and become the most recently used,
    ``cols[0]`` last."""
    st = c.state
    L = st[S_LEN]
    cols, slots = c.picks[0], c.picks[1]
    for b in range(nb - 1, -1, -1):
        s = _take_lru_slot(c, cols[b])
        c.len_of[s] = L
        _lru_unlink(c, s)
        _lru_append(c, s)
        slots[b] = s
    XT, P = kd.XT, kd.X
    d = XT.shape[0]
    acc = c.acc
    for b0 in range(0, L, BLOCK_ROWS):
        b1 = min(L, b0 + BLOCK_ROWS)
        m = b1 - b0
        for b in range(nb):
            a = acc[b]
            for k in range(m):
                a[k] = 0.0
        f = 0
        while f + 4 <= d:  # as _layout_dots: four features a pass, in feature order
            r0, r1, r2, r3 = XT[f, b0:b1], XT[f + 1, b0:b1], XT[f + 2, b0:b1], XT[f + 3, b0:b1]
            for b in range(nb):
                p = cols[b]
                x0, x1, x2, x3 = P[p, f], P[p, f + 1], P[p, f + 2], P[p, f + 3]
                a = acc[b]
                for k in range(m):
                    a[k] = a[k] + r0[k] * x0 + r1[k] * x1 + r2[k] * x2 + r3[k] * x3
            f += 4
        for rest in range(f, d):
            row = XT[rest, b0:b1]
            for b in range(nb):
                xf = P[cols[b], rest]
                a = acc[b]
                for k in range(m):
                    a[k] += row[k] * xf
        sqb, yb = kd.sqT[b0:b1], kd.yT[b0:b1]
        for b in range(nb):
            i = cols[b]
            a = acc[b][:m]
            if kd.kind == 1:
                sq_i = kd.sq[i]
                for k in range(m):
                    a[k] = max(sqb[k] + sq_i - 2.0 * a[k], 0.0)
            _finish_kernel(kd, a, kd.bits[:m])
            out = c.data[slots[b] * L + b0 : slots[b] * L + b1]
            y_i = kd.y[i]
            for k in range(m):
                out[k] = y_i * yb[k] * a[k]
    st[S_ROWS] += nb * L
    st[S_MISSES] += nb


@njit(cache=True, no_cpython_wrapper=True)
def _slots_for(c: ColumnCache, L: int) -> int:
    return max(2, min(c.owner.shape[0], c.data.shape[0] // max(L, 1)))


@njit(cache=True, no_cpython_wrapper=True)
def permute_prefix(values: np.ndarray, perm: np.ndarray, tmp: np.ndarray) -> None:
    """``values[k] = values_old[perm[k]]`` for ``k < len(perm)`` (``tmp``: scratch)."""
    m = perm.shape[0]
    for k in range(m):
        tmp[k] = values[k]
    for k in range(m):
        values[k] = tmp[perm[k]]


@njit(cache=True)
def compact_layout(c: ColumnCache, kd: KernelData, perm: np.ndarray, new_len: int) -> None:
    """Reorder the layout's positions, ``new[k] = old[perm[k]]`` for ``k < L``, and shorten it
    to ``new_len``; every cached column keeps its valid entries, repacked in place.

    ``perm[:new_len]`` must be increasing (a stable move to the front): then each entry moves to
    a lower address and one forward pass repacks the block. The slots become shorter, so there
    are more of them; the new ones are empty and the next to be used.
    """
    st = c.state
    L = st[S_LEN]
    slots = st[S_SLOTS]
    data = c.data
    for s in range(slots):
        if c.owner[s] < 0:
            continue
        have, new_have = c.len_of[s], 0
        src, dst = s * L, s * new_len
        for k in range(new_len):
            p = perm[k]
            if p >= have:
                break
            data[dst + k] = data[src + p]
            new_have = k + 1
        c.len_of[s] = new_have
    new_slots = _slots_for(c, new_len)
    for s in range(slots, new_slots):
        c.owner[s] = -1
        c.len_of[s] = 0
        _lru_prepend(c, s)
    p = perm[:L]
    permute_prefix(kd.order[:L], p, kd.bits)
    permute_prefix(kd.yT[:L], p, kd.dots)
    if kd.kind != 3:
        permute_prefix(kd.sqT[:L], p, kd.dots)
        for f in range(kd.XT.shape[0]):
            permute_prefix(kd.XT[f, :L], p, kd.dots)
    for k in range(L):
        kd.pos[kd.order[k]] = k
    st[S_LEN] = new_len
    st[S_SLOTS] = new_slots
    st[S_COMPACTIONS] += 1


@njit(cache=True)
def grow_layout(c: ColumnCache, kd: KernelData, new_len: int) -> None:
    """Lengthen the layout to ``new_len`` positions (the order is kept).

    Longer slots mean fewer: the most recently used columns are kept (moved into the low slots
    first), the others dropped; the kept ones stay valid on their prefixes, which
    :func:`get_column` completes when they are next used.
    """
    st = c.state
    L = st[S_LEN]
    if new_len <= L:
        return
    new_slots = _slots_for(c, new_len)
    head = c.owner.shape[0]
    data = c.data
    keep = kd.bits  # scratch: the kept slots, most recently used first
    n_keep = 0
    s = c.prev[head]
    while s != head:  # from the most recent: keep new_slots columns, drop the others
        if c.owner[s] >= 0:
            if n_keep < new_slots:
                keep[n_keep] = s
                n_keep += 1
            else:
                c.slot_of[c.owner[s]] = -1
                c.owner[s] = -1
                c.len_of[s] = 0
        s = c.prev[s]
    # kept columns in slots that no longer exist move to empty low slots (same stride)
    free_low = 0
    for k in range(n_keep):
        s = keep[k]
        if s < new_slots:
            continue
        while c.owner[free_low] >= 0:
            free_low += 1
        for e in range(c.len_of[s]):
            data[free_low * L + e] = data[s * L + e]
        c.owner[free_low], c.len_of[free_low] = c.owner[s], c.len_of[s]
        c.slot_of[c.owner[s]] = free_low
        c.owner[s], c.len_of[s] = -1, 0
        keep[k] = free_low
    # longer slots: relocate backwards (each entry moves to a higher address)
    for s in range(new_slots - 1, -1, -1):
        if c.owner[s] < 0:
            continue
        src, dst = s * L, s * new_len
        for k in range(c.len_of[s] - 1, -1, -1):
            data[dst + k] = data[src + k]
    # the LRU list: empty slots first, then the kept ones from least to most recently used
    c.next[head] = c.prev[head] = head
    for s in range(new_slots):
        if c.owner[s] < 0:
            _lru_append(c, s)
    for k in range(n_keep - 1, -1, -1):
        _lru_append(c, keep[k])
    st[S_LEN] = new_len
    st[S_SLOTS] = new_slots


@njit(cache=True, no_cpython_wrapper=True)
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
        _finish_kernel(kd, dots, kd.bits[:width])
        v_tail = v[g:]
        s = 0.0
        for k in range(width):
            s += v_tail[k] * dots[k]
        total += v[g] * (2.0 * s - v[g] * dots[0])
    return total
