r"""Kernel sums from the float64 columns a run has cached: ``g = K c`` without a kernel pass.

A float64 kernel cache holds columns of ``Q_tj = y_t y_j K(x_t, x_j)`` by layout position
(:mod:`maxmargin.algorithms._kernel_cache`: slot ``s`` holds ``Q[order[k], owner[s]]`` for the
positions ``k < len_of[s]``). With the layout at all ``n`` positions,

.. math::

    g_t = \sum_j c_j K(x_t, x_j) = y_t \sum_j (c_j y_j) Q_{tj},

``O(n m)`` multiply-adds over the ``m`` columns, the columns summed in the order given (one
order for every row, whatever the load or thread count). What is not cached is computed by
the Q-matrix (:func:`~maxmargin.kernels.qmatrix.fill_column`, the same float64 values): the
rest of a column cached on a prefix only (computed while the layout was shrunk) into its own
slot, beyond the prefix the cache vouches for (its bookkeeping is left as it is), and an
evicted column into scratch. :func:`cached_sums` declines (None) when the cache cannot serve:
float32, a shortened layout, or more than ``MAX_FRESH_FRACTION`` of the entries missing (the
kernel pass is cheaper then).
"""

from __future__ import annotations

import numpy as np

from maxmargin._jit import ENTRY, njit
from maxmargin.algorithms._kernel_cache import S_LEN, ColumnCache
from maxmargin.kernels.qmatrix import QMatrix, fill_column

__all__ = ["MAX_FRESH_FRACTION", "cached_sums"]

#: At most this fraction of the columns' entries computed afresh; more, and the caller's kernel pass
#: (blocked, BLAS on wide data) is the cheaper way.
MAX_FRESH_FRACTION = 0.25


@njit(**ENTRY)
def _sum_columns(kd: QMatrix, data: np.ndarray, idx: np.ndarray, slots: np.ndarray,
                 have: np.ndarray, coef: np.ndarray, fresh: np.ndarray, h: np.ndarray,
                 g: np.ndarray) -> None:
    """``h[k] = sum_j coef_j col_j[k]`` in the order of ``j`` over the layout's ``L = len(h)``
    positions, then ``g[order[k]] = yT[k] h[k]``. ``col_j``, column ``idx[j]`` of ``Q``, is
    the cache's slot ``slots[j]``
    (``data[slots[j] L :][:L]``), its entries from ``have[j]`` on computed into the slot
    (beyond its valid prefix: the cache's bookkeeping is unchanged), or, where ``slots[j] <
    0``, the column computed whole into ``fresh``."""
    L = h.shape[0]
    h[:] = 0.0
    for j in range(slots.shape[0]):
        s = slots[j]
        if s >= 0:
            col = data[s * L : s * L + L]
            if have[j] < L:
                fill_column(kd, idx[j], have[j], L, col)
        else:
            col = fresh
            fill_column(kd, idx[j], np.int64(0), L, col)
        c = coef[j]
        for k in range(L):
            h[k] += c * col[k]
    for k in range(L):
        g[kd.order[k]] = kd.yT[k] * h[k]


def cached_sums(cache: ColumnCache | None, kd: QMatrix, idx: np.ndarray,
                coef: np.ndarray) -> np.ndarray | None:
    """``g_t = sum_k coef_k K(x_t, x_{idx_k})`` for every point ``t`` (original order) in
    float64 from ``cache``'s float64 columns of ``kd`` (module docstring); None when the cache
    cannot serve them."""
    n = kd.y.shape[0]
    if (cache is None or cache.data.dtype != np.float64 or int(cache.state[S_LEN]) != n
            or idx.shape[0] == 0):
        return None
    slots = cache.slot_of[idx]
    have = np.where(slots >= 0, cache.len_of[slots], 0)
    if n * idx.shape[0] - int(have.sum()) > MAX_FRESH_FRACTION * n * idx.shape[0]:
        return None
    g = np.empty(n)
    _sum_columns(kd, cache.data, idx, slots, have, coef * kd.y[idx], np.empty(n), np.empty(n), g)
    return g
