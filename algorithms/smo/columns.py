"""Kernel columns computed ahead: on wide data a missing column of ``Q`` comes with the columns
of the variables most likely to be asked for next, in one pass over the features (one BLAS
product when the Q-matrix has its buffers, :func:`~maxmargin.kernels.qmatrix.blas_columns`)."""

from __future__ import annotations

import numpy as np

from maxmargin._jit import njit
from maxmargin.algorithms._kernel_cache import (
    MAX_BLOCK,
    S_LEN,
    S_SLOTS,
    ColumnCache,
    load_columns,
)
from maxmargin.algorithms.smo.state import SolverState
from maxmargin.kernels.qmatrix import EXPENSIVE_FEATURES, QMatrix, blas_columns

__all__ = ["PREFETCH", "PREFETCH_BYTES", "prefetch"]

#: When kernel values are dear, the layout's features outgrow the processor's caches
#: (``PREFETCH_BYTES`` of float64) and the cache holds every column at the layout's length, a
#: missing column is computed together with the columns of up to ``PREFETCH - 1`` more of the
#: most violating uncached variables (by BLAS, as many more as a product computes,
#: :func:`~maxmargin.kernels.qmatrix.blas_block_rows`); only the cache's content
#: changes (the one-pass columns are bit for bit those computed one at a time; the BLAS ones
#: may differ in the last bits of float64, see ``qmatrix._blas_fill``).
PREFETCH = MAX_BLOCK
PREFETCH_BYTES = 8 * 2**20


@njit
def prefetch(st: SolverState, c: ColumnCache, kd: QMatrix, i: int) -> bool:
    """If kernel values are dear, the features large and every column fits in the cache (see
    ``PREFETCH``), compute the missing column ``i`` together with those of the ``PREFETCH - 1``
    (by BLAS, the product's columns less one) most violating uncached active variables
    (largest ``-y_t G_t`` over ``I_up``, ``y_t G_t`` over ``I_low``: the candidates of the next
    working sets) by :func:`load_columns`; False (nothing done) otherwise."""
    n, d, L = st.alpha.shape[0], kd.XT.shape[0], c.state[S_LEN]
    if (d < EXPENSIVE_FEATURES or 8 * d * L < PREFETCH_BYTES or c.state[S_SLOTS] < n
            or c.slot_of[i] >= 0):
        return False
    G, yT, in_up, in_low, act = st.G, st.yT, st.in_up, st.in_low, st.act
    cols, score = c.picks[0], c.score
    limit = kd.block.shape[0] if blas_columns(kd, L, c.data) else PREFETCH
    cols[0] = i
    nb = np.int64(1)  # not a literal (see state.PERIODIC)
    for k in range(L):
        t = act[k]
        if t == i or c.slot_of[t] >= 0:
            continue
        v = -yT[k] * G[k]
        s = v if in_up[k] else -np.inf
        if in_low[k] and -v > s:
            s = -v
        if s == -np.inf:
            continue
        if nb < limit:
            at = nb
            nb += 1
        elif s > score[nb - 1]:
            at = nb - 1
        else:
            continue
        while at > 1 and score[at - 1] < s:  # cols[1:nb] by decreasing score
            score[at], cols[at] = score[at - 1], cols[at - 1]
            at -= 1
        score[at], cols[at] = s, t
    load_columns(c, kd, nb)
    return True
