r"""Kernel sums from the float64 columns a run has cached: ``g = K c`` without a kernel pass.

A float64 kernel cache holds columns of ``Q_tj = y_t y_j K(x_t, x_j)`` by layout position
(:mod:`maxmargin.algorithms._kernel_cache`: slot ``s`` holds ``Q[order[k], owner[s]]`` for the
positions ``k < len_of[s]``). With the layout at all ``n`` positions,

.. math::

    g_t = \sum_j c_j K(x_t, x_j) = y_t \sum_j (c_j y_j) Q_{tj},

``O(n m)`` multiply-adds over the ``m`` columns, the columns summed in the order given (one
order for every row, whatever the load or thread count). What is not cached -- the rest of a
column cached on a prefix only (computed while the layout was shrunk), or an evicted column --
is computed entry by entry (:func:`~maxmargin.kernels.qmatrix.kernel_value`, float64; the
cache is only read). Not the column code itself: a caller of it compiles its own copy of it,
about a second of the first call's compile. :func:`cached_sums` declines (None) when the cache
cannot serve: float32, a shortened layout, or more missing entries than :func:`fresh_limit`
(the blocked kernel pass is cheaper then), and when a sum is not finite (the caller's kernel
pass computes them again).
"""

from __future__ import annotations

import numpy as np

from maxmargin._jit import ENTRY, njit
from maxmargin.algorithms._kernel_cache import S_LEN, ColumnCache
from maxmargin.kernels.qmatrix import QMatrix, kernel_value, value_cost

__all__ = ["FRESH_WORK", "MAX_FRESH_FRACTION", "cached_sums", "fresh_limit"]

#: At most this fraction of the columns' entries computed afresh, one at a time; more, and the
#: caller's kernel pass (blocked, vectorised, BLAS on wide data) is the cheaper way...
MAX_FRESH_FRACTION = 0.1
#: ... unless they are few: entries whose work, ``value_cost + 16`` operations each (its
#: features and the kernel's formula), is at most this cost less than that pass's own fixed
#: cost (measured on 60 points of 5 features: 403 fresh entries among 2,520, 11 us here against
#: 15 us for the pass).
FRESH_WORK = 10_000


@njit(**ENTRY)
def _sum_columns(kd: QMatrix, c: ColumnCache, idx: np.ndarray, coef: np.ndarray,
                 max_fresh: float, h: np.ndarray, g: np.ndarray) -> bool:
    """``h[k] = sum_j coef_j y_j col_j[k]`` in the order of ``j`` over the layout's ``L =
    len(h)`` positions, then ``g[order[k]] = yT[k] h[k]``; False when more than ``max_fresh``
    entries are not cached (nothing computed) or a value of ``g`` is not finite. ``col_j``,
    column ``idx[j]`` of ``Q``, is read from its slot up to the slot's valid prefix, and
    computed by :func:`kernel_value` beyond it (or whole, when it is not cached)."""
    L = h.shape[0]
    fresh = 0
    for j in range(idx.shape[0]):
        s = c.slot_of[idx[j]]
        fresh += L - (c.len_of[s] if s >= 0 else 0)
    if fresh > max_fresh:
        return False
    h[:] = 0.0
    for j in range(idx.shape[0]):
        i = idx[j]
        s = c.slot_of[i]
        w = coef[j] * kd.y[i]
        start = 0
        if s >= 0:
            col = c.data[s * L : s * L + L]
            start = c.len_of[s]
            for k in range(start):
                h[k] += w * col[k]
        for k in range(start, L):
            t = kd.order[k]
            h[k] += w * (kd.y[t] * kd.y[i] * kernel_value(kd, t, i))
    finite = True
    for k in range(L):
        v = kd.yT[k] * h[k]
        g[kd.order[k]] = v
        finite &= np.isfinite(v)
    return finite


def cached_sums(cache: ColumnCache | None, kd: QMatrix, idx: np.ndarray,
                coef: np.ndarray) -> np.ndarray | None:
    """``g_t = sum_k coef_k K(x_t, x_{idx_k})`` for every point ``t`` (original order) in
    float64 from ``cache``'s float64 columns of ``kd`` (module docstring); None when the cache
    cannot serve them or a sum is not finite."""
    n = kd.y.shape[0]
    if (cache is None or cache.data.dtype != np.float64 or cache.state[S_LEN] != n
            or idx.shape[0] == 0):
        return None
    g = np.empty(n)
    if _sum_columns(kd, cache, idx, coef, fresh_limit(kd, idx.shape[0]), np.empty(n), g):
        return g
    return None


def fresh_limit(kd: QMatrix, m: int) -> float:
    """The most entries of ``m`` columns of ``kd`` that :func:`cached_sums` computes afresh:
    ``MAX_FRESH_FRACTION`` of them, or as many as ``FRESH_WORK`` operations pay for."""
    n = kd.y.shape[0]
    return max(MAX_FRESH_FRACTION * n * m, FRESH_WORK / (value_cost(kd) + 16))
