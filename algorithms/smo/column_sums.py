r"""Kernel sums from the float64 columns a run has cached: ``g = K c`` without a kernel pass.

A float64 kernel cache holds columns of ``Q_tj = y_t y_j K(x_t, x_j)`` by layout position
(:mod:`maxmargin.algorithms._kernel_cache`: slot ``s`` holds ``Q[order[k], owner[s]]`` for the
positions ``k < len_of[s]``). With the layout at all ``n`` positions,

.. math::

    g_t = \sum_j c_j K(x_t, x_j) = y_t \sum_j (c_j y_j) Q_{tj},

``O(n m)`` multiply-adds over the ``m`` columns, the columns summed in the order given (one
order for every row, whatever the load or thread count). Columns that are not cached at full
length (computed while the layout was shrunk, or evicted) are computed afresh by the Q-matrix
(:func:`~maxmargin.kernels.qmatrix.fill_column`, the same float64 values) into scratch;
:func:`cached_sums` declines (None) when the cache cannot serve: float32, a shortened layout,
or more than ``MAX_FRESH_FRACTION`` of the columns missing (the kernel pass is cheaper then).
"""

from __future__ import annotations

import numpy as np

from maxmargin._jit import ENTRY, njit
from maxmargin.algorithms._kernel_cache import S_LEN, ColumnCache
from maxmargin.kernels.qmatrix import QMatrix, fill_column

__all__ = ["MAX_FRESH_FRACTION", "cached_sums"]

#: At most this fraction of the columns computed afresh; more, and the caller's kernel pass
#: (blocked, BLAS on wide data) is the cheaper way.
MAX_FRESH_FRACTION = 0.25


@njit(**ENTRY)
def _sum_columns(data: np.ndarray, L: int, slots: np.ndarray, fresh: np.ndarray,
                 coef: np.ndarray, order: np.ndarray, yT: np.ndarray, h: np.ndarray,
                 g: np.ndarray) -> None:
    """``h[k] = sum_j coef_j col_j[k]`` in the order of ``j``, ``col_j`` the cache's slot
    ``slots[j]`` (``data[slots[j] L :][:L]``) or, where ``slots[j] < 0``, the next row of
    ``fresh``; then ``g[order[k]] = yT[k] h[k]``."""
    h[:] = 0.0
    r = 0
    for j in range(slots.shape[0]):
        c = coef[j]
        s = slots[j]
        if s >= 0:
            col = data[s * L : s * L + L]
        else:
            col = fresh[r]
            r += 1
        for k in range(L):
            h[k] += c * col[k]
    for k in range(L):
        g[order[k]] = yT[k] * h[k]


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
    full = slots >= 0
    full[full] = cache.len_of[slots[full]] >= n
    missing = np.flatnonzero(~full)
    if missing.shape[0] > MAX_FRESH_FRACTION * idx.shape[0]:
        return None
    slots[missing] = -1
    fresh = np.empty((missing.shape[0], n))
    for r, j in enumerate(idx[missing].tolist()):
        fill_column(kd, j, 0, n, fresh[r])
    g = np.empty(n)
    _sum_columns(cache.data, n, slots, fresh, coef * kd.y[idx], kd.order, kd.yT,
                 np.empty(n), g)
    return g
