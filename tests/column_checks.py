"""Checks shared by the tests of float32 columns from rounded features (``XT32``)."""

from __future__ import annotations

import numpy as np
from numba import njit

from maxmargin.algorithms import _kernel_cache as kc

load_columns = njit(lambda c, k, m: kc.load_columns(c, k, m))  # compiled callers only
grow_layout = njit(lambda c, k, n: kc.grow_layout(c, k, n))


def check_symmetric_and_one_pass(kd, cols: np.ndarray, columns: dict) -> kc.ColumnCache:  # noqa: ANN001
    """``columns[i][j] == columns[j][i]`` bit for bit for ``i, j`` in ``cols``, and the columns
    ``cols`` loaded in one pass into a float32 cache are ``columns`` bit for bit; the cache."""
    for i in cols:
        for j in cols:
            assert columns[i][j] == columns[j][i]
    n = kd.y.shape[0]
    cache = kc.make_cache(n, 200.0, np.float32)
    cache.picks[0, :] = -1
    cache.picks[0, : cols.size] = cols
    load_columns(cache, kd, cols.size)  # one pass over the rounded features
    for i in cols:
        s = cache.slot_of[i]
        assert np.array_equal(cache.data[s * n : (s + 1) * n], columns[i])
    return cache
