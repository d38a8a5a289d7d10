"""SMO's kernel-column cache: an LRU cache of columns of ``Q`` in LIBSVM's layout.

SMO touches the matrix ``Q_ij = y_i y_j K(x_i, x_j)`` one column at a time. Like LIBSVM's
``Cache`` class, this module keeps the most recently used columns in a fixed budget of
``cache_size`` MB, stored in float32 (LIBSVM's ``Qfloat``, the default) or float64 (SMO's
``precision="double"``); the solver's gradient stays in float64. The code is dtype-generic:
Numba compiles one specialisation per cache dtype. The columns themselves come from the kernel
engine's Q-matrix (:mod:`maxmargin.kernels.qmatrix`).

**Layout.** The variables are kept in an order (``QMatrix.order``: position ``k`` holds
variable ``order[k]``; ``pos`` is the inverse) whose first ``L`` positions, the *layout*, hold
every active variable. A cached column stores ``Q[order[k], i]`` for the positions ``k < L``
only, so the budget holds ``budget / L`` columns: as shrinking makes the active set small, the
cache holds correspondingly more columns (LIBSVM's columns have the active length for the same
reason). :func:`compact_layout` moves the active variables to the front (stable) and repacks the
cached columns in place when the active set has shrunk by a good fraction; :func:`grow_layout`
extends the layout to all ``n`` variables (unshrinking), keeping the most recently used columns
as valid prefixes (``len_of``) that :func:`get_column` completes on demand.

* :class:`ColumnCache` -- a flat block of the cache dtype, slots of the layout length, who owns
  which slot, and a doubly linked LRU list over the slots.
* :func:`get_column` -- the layout part of column ``i`` of ``Q``, computing what is missing;
  :func:`load_columns` -- several missing columns in one pass over the features.
"""

from __future__ import annotations

import mmap
from typing import NamedTuple

import numpy as np
from numpy.typing import DTypeLike

from maxmargin._jit import INLINE, INTERNAL, njit
from maxmargin.kernels.qmatrix import (
    BLAS_BLOCK,
    BLOCK_ROWS,
    MAX_BLOCK,
    QMatrix,
    fill_column,
    fill_columns,
)

__all__ = [
    "MAX_BLOCK",
    "BLAS_BLOCK",
    "ColumnCache",
    "block_size",
    "compact_layout",
    "get_column",
    "grow_layout",
    "load_column",
    "load_columns",
    "make_cache",
    "n_slots_for",
    "permute_prefix",
]

# cache state c.state[...]
S_LEN, S_SLOTS, S_HITS, S_MISSES, S_ROWS, S_COMPACTIONS = 0, 1, 2, 3, 4, 5


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
    picks: np.ndarray  # (2, BLAS_BLOCK) int64: columns and their slots, for load_columns
    score: np.ndarray  # (BLAS_BLOCK,) float64 scratch of the caller choosing the columns


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


def block_size(n: int, cache_size: float, itemsize: int) -> int:
    """Entries of the block of :func:`make_cache`: ``budget / itemsize``, at least two full
    columns and at most every column at full length (``max(n, 2) n``: the most the slots can
    ever use, so a small problem neither asks for nor touches the whole budget)."""
    return max(min(int(cache_size * 2**20) // itemsize, max(n, 2) * n), 2 * n)


def make_cache(n: int, cache_size: float, dtype: DTypeLike = np.float32,
               block: np.ndarray | None = None) -> ColumnCache:
    """An empty cache for ``n`` variables within ``cache_size`` MB, layout length ``n``.

    ``dtype`` is ``np.float32`` (LIBSVM's ``Qfloat``) or ``np.float64``. The columns go in
    ``block_size`` entries: the first ones of ``block`` (a flat array of ``dtype``, e.g. one
    that a batch of problems reuses) when it has room, else a new block.
    """
    dtype = np.dtype(dtype)
    max_slots = max(n, 2)
    size = block_size(n, cache_size, dtype.itemsize)
    slots = n_slots_for(n, cache_size, dtype.itemsize)
    state = np.zeros(6, dtype=np.int64)
    state[S_LEN], state[S_SLOTS] = n, slots
    # the circular list head -> 0 -> 1 -> ... -> slots-1 -> head (head = max_slots)
    nxt = np.zeros(max_slots + 1, dtype=np.int64)
    prv = np.zeros(max_slots + 1, dtype=np.int64)
    nxt[: slots - 1] = np.arange(1, slots)
    nxt[slots - 1], nxt[max_slots] = max_slots, 0
    prv[1:slots] = np.arange(slots - 1)
    prv[0], prv[max_slots] = max_slots, slots - 1
    return ColumnCache(
        data=(block[:size] if block is not None and block.dtype == dtype and block.size >= size
              else _column_block(size, dtype)),
        col=np.empty(n, dtype=dtype),
        slot_of=np.full(n, -1, dtype=np.int64),
        owner=np.full(max_slots, -1, dtype=np.int64),
        len_of=np.zeros(max_slots, dtype=np.int64),
        prev=prv,
        next=nxt,
        state=state,
        acc=np.empty((MAX_BLOCK, BLOCK_ROWS)),
        picks=np.empty((2, BLAS_BLOCK), dtype=np.int64),
        score=np.empty(BLAS_BLOCK),
    )


# --- kernel evaluation ---------------------------------------------------------------------


# --- the LRU cache -------------------------------------------------------------------------


@njit(**INLINE)
def _lru_unlink(c: ColumnCache, s: int) -> None:
    c.next[c.prev[s]] = c.next[s]
    c.prev[c.next[s]] = c.prev[s]


@njit(**INLINE)
def _lru_link(c: ColumnCache, s: int, after: int) -> None:
    """Insert slot ``s`` into the LRU list just after node ``after``."""
    following = c.next[after]
    c.prev[s] = after
    c.next[s] = following
    c.prev[following] = s
    c.next[after] = s


@njit(**INLINE)
def _lru_append(c: ColumnCache, s: int) -> None:
    """Make slot ``s`` the most recently used (just before the sentinel)."""
    _lru_link(c, s, c.prev[c.owner.shape[0]])


@njit(**INLINE)
def _lru_prepend(c: ColumnCache, s: int) -> None:
    """Make slot ``s`` the least recently used (the next to be taken)."""
    _lru_link(c, s, c.owner.shape[0])


@njit(**INLINE)
def _take_lru_slot(c: ColumnCache, i: int) -> int:
    """The least recently used slot, now column ``i``'s (its old column, if any, uncached)."""
    s = c.next[c.owner.shape[0]]
    old = c.owner[s]
    if old >= 0:
        c.slot_of[old] = -1
    c.owner[s] = i
    c.slot_of[i] = s
    return s


@njit(inline="always")
def get_column(c: ColumnCache, kd: QMatrix, i: int) -> np.ndarray:
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


@njit(**INTERNAL)
def load_column(c: ColumnCache, kd: QMatrix, i: int) -> int:
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


@njit(inline="always")
def load_columns(c: ColumnCache, kd: QMatrix, nb: int) -> None:
    """Compute the uncached columns ``c.picks[0, :nb]`` (compiled kernels; ``nb <=
    len(kd.block)`` when :func:`~maxmargin.kernels.qmatrix.blas_columns`, else ``nb <=
    MAX_BLOCK``) on the layout's ``L`` positions by
    :func:`~maxmargin.kernels.qmatrix.fill_columns`: one BLAS product on wide data, else one
    pass over ``XT`` (each block of ``BLOCK_ROWS`` rows of every feature read once for all
    ``nb`` columns; bit for bit the columns computed one at a time). They take the least
    recently used slots and become the most recently used, ``cols[0]`` last."""
    st = c.state
    L = st[S_LEN]
    cols, slots = c.picks[0], c.picks[1]
    for b in range(nb - 1, -1, -1):
        s = _take_lru_slot(c, cols[b])
        c.len_of[s] = L
        _lru_unlink(c, s)
        _lru_append(c, s)
        slots[b] = s
    for b in range(nb):
        slots[b] *= L  # offsets of the slots in the block
    fill_columns(kd, cols, nb, L, c.data, slots, c.acc)
    for b in range(nb):
        slots[b] //= L
    st[S_ROWS] += nb * L
    st[S_MISSES] += nb


@njit(**INTERNAL)
def _slots_for(c: ColumnCache, L: int) -> int:
    return max(2, min(c.owner.shape[0], c.data.shape[0] // max(L, 1)))


@njit(**INTERNAL)
def permute_prefix(values: np.ndarray, perm: np.ndarray, tmp: np.ndarray) -> None:
    """``values[k] = values_old[perm[k]]`` for ``k < len(perm)`` (``tmp``: scratch)."""
    m = perm.shape[0]
    for k in range(m):
        tmp[k] = values[k]
    for k in range(m):
        values[k] = tmp[perm[k]]


@njit(inline="always")
def compact_layout(c: ColumnCache, kd: QMatrix, perm: np.ndarray, new_len: int) -> None:
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
    permute_prefix(kd.sqT[:L], p, kd.dots)
    for f in range(kd.XT.shape[0]):  # dense features only (XT has no rows otherwise)
        permute_prefix(kd.XT[f, :L], p, kd.dots)
    for f in range(kd.XT32.shape[0]):  # their float32 copy, where kept (float32 to float64
        permute_prefix(kd.XT32[f, :L], p, kd.dots)  # and back is exact)
    if kd.sqT32.shape[0] > 0:  # the rounded features' norms (rbf)
        permute_prefix(kd.sqT32[:L], p, kd.dots)
    for k in range(L):
        kd.pos[kd.order[k]] = k
    st[S_LEN] = new_len
    st[S_SLOTS] = new_slots
    st[S_COMPACTIONS] += 1


@njit(**INTERNAL)
def grow_layout(c: ColumnCache, kd: QMatrix, new_len: int) -> None:
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
