r"""Kernel sums from the float64 columns a run has cached: ``g = K c`` without a kernel pass.

A float64 kernel cache holds columns of ``Q_tj = y_t y_j K(x_t, x_j)`` by layout position
(:mod:`maxmargin.algorithms._kernel_cache`: slot ``s`` holds ``Q[order[k], owner[s]]`` for the
positions ``k < len_of[s]``). With the layout at all ``n`` positions,

.. math::

    g_t = \sum_j c_j K(x_t, x_j) = y_t \sum_j (c_j y_j) Q_{tj},

``O(n m)`` multiply-adds over the ``m`` columns, the columns summed in the order given (one
order for every row, whatever the load or thread count). A column cached on a prefix only
(computed while the layout was shrunk) is completed in its slot, as the loop's next use of it
would (:func:`~maxmargin.algorithms._kernel_cache.load_column`: the column code, the same
values); an evicted column is computed into a scratch column by the same code, the cache's
other columns left as they are. :func:`cached_sums` declines (None) when the cache cannot
serve: float32, a shortened layout, or more than ``MAX_FRESH_FRACTION`` of the entries in
evicted columns (the blocked kernel pass is cheaper then), and when a sum is not finite (the
caller's kernel pass computes them again). With ``keep`` it computes a missing column into the
cache instead (:func:`~maxmargin.algorithms._kernel_cache.load_column`, least recently used
slot), as LIBSVM's starting gradient does: the sums of a starting point whose columns the loop
then finds cached.
"""

from __future__ import annotations

import numpy as np

from maxmargin._byref import byref
from maxmargin._jit import ENTRY, INTERNAL, njit
from maxmargin.algorithms._kernel_cache import S_LEN, ColumnCache, load_column
from maxmargin.kernels.qmatrix import QMatrix, fill_column

__all__ = ["COMPILED_SUMS_MIN_TERMS", "MAX_FRESH_FRACTION", "cached_sums"]

#: The solver's certificate takes its sums from the cache (or the Q-matrix's compiled blocks)
#: from this many terms (points times support vectors) on; below, the kernel object's NumPy
#: pass costs less than compiling those passes on a first call.
COMPILED_SUMS_MIN_TERMS = 2**20

#: At most this fraction of the columns' entries in evicted columns, computed afresh a column
#: at a time; more, and the caller's kernel pass (blocked, BLAS on wide data) is the cheaper way.
MAX_FRESH_FRACTION = 0.1


@njit(**ENTRY)
def _sum_columns(kd: QMatrix, c: ColumnCache, idx: np.ndarray, coef: np.ndarray,
                 max_fresh: float, keep: bool, h: np.ndarray, g: np.ndarray,
                 scratch: np.ndarray) -> bool:
    """``h[k] = sum_j coef_j y_j col_j[k]`` in the order of ``j`` over the layout's ``L =
    len(h)`` positions, then ``g[order[k]] = yT[k] h[k]``; False when the columns not cached
    hold more than ``max_fresh`` entries (nothing computed) or a value of ``g`` is not finite.
    ``col_j``, column ``idx[j]`` of ``Q``: its slot, completed first if it holds a prefix
    only; when it is not cached, loaded into the cache (``keep``) or computed into
    ``scratch``."""
    cr, kr = byref(c), byref(kd)
    L = h.shape[0]
    fresh = 0
    for j in range(idx.shape[0]):
        if c.slot_of[idx[j]] < 0:
            fresh += L
    if fresh > max_fresh:
        return False
    h[:] = 0.0
    for j in range(idx.shape[0]):
        i = idx[j]
        s = c.slot_of[i]
        if s >= 0 or keep:
            if s < 0 or c.len_of[s] < L:
                s = load_column(cr, kr, i)
            col = c.data[s * L : s * L + L]
        else:
            col = scratch[:L]
            _fresh_column(kr, i, L, col)
        w = coef[j] * kd.y[i]
        for k in range(L):
            h[k] += w * col[k]
    finite = True
    for k in range(L):
        v = kd.yT[k] * h[k]
        g[kd.order[k]] = v
        finite &= np.isfinite(v)
    return finite


@njit(**INTERNAL)
def _fresh_column(kd: QMatrix, i: int, L: int, out: np.ndarray) -> None:
    """Column ``i`` on the layout's ``L`` positions into ``out``: :func:`fill_column` typed
    with the options of the cache's own callers, so its code is theirs (an overload's code is
    compiled once for each option set of its callers)."""
    fill_column(kd, i, np.int64(0), L, out)


def cached_sums(cache: ColumnCache | None, kd: QMatrix, idx: np.ndarray,
                coef: np.ndarray, keep: bool = False) -> np.ndarray | None:
    """``g_t = sum_k coef_k K(x_t, x_{idx_k})`` for every point ``t`` (original order) in
    float64 from ``cache``'s float64 columns of ``kd`` (module docstring); None when the cache
    cannot serve them or a sum is not finite. ``keep``: the missing columns are computed into
    the cache, however many."""
    n = kd.y.shape[0]
    if (cache is None or cache.data.dtype != np.float64 or cache.state[S_LEN] != n
            or idx.shape[0] == 0):
        return None
    g = np.empty(n)
    max_fresh = np.inf if keep else MAX_FRESH_FRACTION * n * idx.shape[0]
    if _sum_columns(kd, cache, idx, coef, max_fresh, np.bool_(keep), np.empty(n), g,
                    np.empty(n)):
        return g
    return None
