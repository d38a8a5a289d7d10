r"""Shrinking (LIBSVM's ``do_shrinking``, ``be_shrunk``, ``reconstruct_gradient``).

Every ``min(n, 1000)`` iterations a variable at a bound whose gradient keeps it out of every
violating pair (``be_shrunk``) leaves the selection; before the final check, and once when
``m - M <= 10 tol``, every variable is made active again with its exact gradient, from

.. math::

    G_t = \bar G_t + p_t + \sum_{j \text{ free}} \alpha_j Q_{tj}, \qquad
    \bar G = \sum_{\alpha_j = C_j} C_j Q_{:j},

so the answer is the same as without shrinking (``p = -e`` for C-SVC, ``0`` for ν-SVC and
one-class: ``scalars.linear``); ν-SVC shrinks each class by its own ``m`` and ``M``. When the
active set falls below ``COMPACT_FRACTION`` of the cache's layout, the layout is compacted to
it (cached columns then hold only the active rows, and the budget holds correspondingly more of
them). ``G`` stays exact on the whole layout; the rows of ``G_bar`` outside it are owed
(:func:`update_G_bar`) and paid when next needed (:func:`settle_G_bar`).
"""

from __future__ import annotations

import numpy as np

from maxmargin._jit import INLINE, INTERNAL, njit
from maxmargin.algorithms._kernel_cache import (
    S_LEN,
    S_SLOTS,
    ColumnCache,
    compact_layout,
    get_column,
    grow_layout,
    permute_prefix,
)
from maxmargin.algorithms.smo.scans import add_column
from maxmargin.algorithms.smo.state import (
    FREE,
    LOWER,
    STALE,
    UPPER,
    SolverState,
    update_alpha_status,
)
from maxmargin.kernels.qmatrix import QMatrix, expensive, fill_column

__all__ = [
    "COMPACT_FRACTION",
    "update_G_bar",
    "settle_G_bar",
    "reconstruct_gradient",
    "be_shrunk",
    "do_shrinking",
]

#: The cache's layout is compacted to the active variables when fewer than this fraction of its
#: positions are active, except when the cache holds every column at the layout's length and
#: kernel values are dear (:func:`~maxmargin.kernels.qmatrix.expensive`): compaction then
#: gains no columns, and those filled on the shorter layout must be completed after
#: unshrinking.
COMPACT_FRACTION = 0.8


@njit(inline="always")
def update_G_bar(st: SolverState, c: ColumnCache, kd: QMatrix, t: int, coef: float) -> None:
    """``G_bar += coef Q_:t`` (``alpha_t`` reached or left its upper bound ``C_t``).

    The layout's rows are updated now from the cached column (:func:`~.scans.add_column`, on
    the Q-matrix's threads where it has them); the rows outside it are owed
    (``pend_t += coef``) until :func:`settle_G_bar` computes them, once per variable.
    """
    Q_t = get_column(c, kd, t)
    act = st.act
    add_column(kd, st.G_bar, act, Q_t, coef)
    if Q_t.shape[0] == act.shape[0]:
        return
    sc = st.scalars
    if sc.n_pending == act.shape[0]:
        settle_G_bar(st, c, kd)
    if st.pend[t] == 0.0:
        st.touched[sc.n_pending] = t
        sc.n_pending += 1
    st.pend[t] += coef


@njit(**INTERNAL)
def settle_G_bar(st: SolverState, c: ColumnCache, kd: QMatrix) -> None:
    """Pay what :func:`update_G_bar` owes: ``G_bar_t += sum_j pend_j Q_tj`` for the rows ``t``
    outside the layout (columns computed there only, rounded to the cache's dtype)."""
    L = c.state[S_LEN]
    n = st.act.shape[0]
    for q in range(st.scalars.n_pending):
        j = st.touched[q]
        coef = st.pend[j]
        if coef == 0.0:
            continue
        st.pend[j] = 0.0
        fill_column(kd, j, L, n, c.col)
        for k in range(L, n):
            st.G_bar[st.act[k]] += coef * c.col[k]
    st.scalars.n_pending = 0


@njit(**INTERNAL)
def reconstruct_gradient(st: SolverState, c: ColumnCache, kd: QMatrix) -> None:
    """Exact ``G`` on the rows outside the layout, then make every variable active again.

    Inside the layout ``G`` is kept exact (shrunk variables there are only left out of the
    selection). Outside it, ``G_t = G_bar_t + p_t + sum_{free j} alpha_j Q_tj``: by columns of
    the outside ``t`` over the layout, or by the free ``j``'s columns completed to all ``n``
    rows, whichever is cheaper (LIBSVM's choice); the layout then grows to all ``n``.
    """
    n = st.alpha.shape[0]
    L = c.state[S_LEN]
    if L == n and st.scalars.n_active == n:
        return
    alpha, G, act, status = st.alpha, st.G, st.act, st.status
    linear = st.scalars.linear
    if L < n:
        settle_G_bar(st, c, kd)
        for k in range(L, n):
            G[k] = st.G_bar[act[k]] + linear
        n_free = 0
        for k in range(L):
            if status[act[k]] == FREE:
                n_free += 1
        if n_free * n > 2 * L * (n - L):
            for k in range(L, n):
                t = act[k]
                Q_t = get_column(c, kd, t)
                s = 0.0
                for k2 in range(L):
                    u = act[k2]
                    if status[u] == FREE:
                        s += alpha[u] * Q_t[k2]
                G[k] += s
            grow_layout(c, kd, n)
        else:
            grow_layout(c, kd, n)
            for k2 in range(L):
                u = act[k2]
                if status[u] == FREE:
                    Q_u = get_column(c, kd, u)
                    a_u = alpha[u]
                    for k in range(L, n):
                        G[k] += a_u * Q_u[k]
    for t in range(n):
        update_alpha_status(st, t)
    st.scalars.n_active = n
    st.scalars.i_max = STALE


@njit(**INLINE)
def be_shrunk(st: SolverState, k: int, up_pos: float, low_pos: float, up_neg: float,
              low_neg: float) -> bool:
    """The variable at position ``k`` is at a bound and its gradient keeps it out of every
    violating pair: ``m = up_*``, ``-M = low_*`` of its class (LIBSVM's ``Solver_NU::be_shrunk``;
    ``Solver``'s takes one ``m`` and ``M`` for both classes)."""
    s = st.status[st.act[k]]
    if s == UPPER:
        return -st.G[k] > (up_pos if st.yT[k] > 0 else low_neg)
    if s == LOWER:
        return st.G[k] > (low_pos if st.yT[k] > 0 else up_neg)
    return False


@njit(inline="always")
def do_shrinking(
    st: SolverState, c: ColumnCache, kd: QMatrix, up_pos: float, low_pos: float, up_neg: float,
    low_neg: float,
) -> None:
    """Leave out of the selection the variables :func:`be_shrunk` says cannot move (with each
    class's ``m = up_*``, ``-M = low_*`` from before the call), and compact the cache's layout
    to the active ones when they are fewer than ``COMPACT_FRACTION`` of it."""
    act, perm, in_up, in_low = st.act, st.scratch, st.in_up, st.in_low
    L = c.state[S_LEN]
    kept = np.int64(0)
    for k in range(L):
        if not (in_up[k] or in_low[k]):
            continue
        if be_shrunk(st, k, up_pos, low_pos, up_neg, low_neg):
            in_up[k] = in_low[k] = False
        else:
            perm[kept] = k
            kept += 1
    st.scalars.n_active = kept
    st.scalars.i_max = STALE
    roomy = c.state[S_SLOTS] >= act.shape[0]  # every column fits at the current length
    dear = expensive(kd)
    if 0 < kept < COMPACT_FRACTION * L and not (roomy and dear):
        settle_G_bar(st, c, kd)
        dropped = kept
        for k in range(L):
            if not (in_up[k] or in_low[k]):
                perm[dropped] = k
                dropped += 1
        permute_prefix(st.G, perm[:L], kd.dots)
        permute_prefix(st.QDT, perm[:L], kd.dots)
        compact_layout(c, kd, perm[:L], kept)
        for k in range(L):  # the kept are the active ones, the others shrunk
            if k < kept:
                update_alpha_status(st, act[k])
            else:
                in_up[k] = in_low[k] = False
