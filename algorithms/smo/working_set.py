r"""Selecting the working set: the pair ``(i, j)`` of variables SMO moves next.

With ``I_up``, ``I_low`` as in :mod:`.state`, the KKT conditions hold iff

.. math::

    m(\alpha) = \max_{t \in I_{up}} -y_t G_t \;\le\; M(\alpha) = \min_{t \in I_{low}} -y_t G_t,

and every rule stops when ``m - M < tol``.

* ``"wss1"``: the maximal violating pair, ``i = argmax_{I_up} -y_t G_t``,
  ``j = argmax_{I_low} y_t G_t``;
* ``"wss2"`` (LIBSVM's ``select_working_set``, Fan, Chen & Lin 2005): the same ``i``, then
  ``j`` minimises ``-b_it^2 / a_it`` over ``t in I_low`` with ``b_it = m + y_t G_t > 0`` and
  ``a_it = K_ii + K_tt - 2 K_it`` (``TAU`` if ``<= 0``): the largest gain of the pair's step.

Platt's heuristic is in :mod:`.platt`.
"""

from __future__ import annotations

import numpy as np

from maxmargin._jit import INLINE, INTERNAL, njit
from maxmargin.algorithms._kernel_cache import S_LEN, ColumnCache, get_column
from maxmargin.algorithms.smo.bits import as_float, bits, last_of, ordered, unordered
from maxmargin.algorithms.smo.columns import prefetch
from maxmargin.algorithms.smo.state import STALE, SolverState
from maxmargin.kernels.qmatrix import QMatrix

__all__ = [
    "TAU",
    "extremes",
    "violation",
    "select_wss1",
    "second_order_j",
    "argmax_up",
    "select_wss2",
    "select_working_set",
]

#: LIBSVM's replacement for a non-positive curvature ``a_it`` (or ``eta``).
TAU = 1e-12


@njit(**INTERNAL)
def extremes(st: SolverState, c: ColumnCache) -> tuple[float, int, float, int]:
    """``m = max_{I_up} -y G`` and ``-M = max_{I_low} y G`` over the active set, with argmaxes
    (variables; -1 for an empty set)."""
    G, yT, in_up, in_low = st.G, st.yT, st.in_up, st.in_low
    g_up, k_up, g_low, k_low = -np.inf, -1, -np.inf, -1
    for k in range(c.state[S_LEN]):
        v = -yT[k] * G[k]
        if in_up[k] and v >= g_up:
            g_up, k_up = v, k
        if in_low[k] and -v >= g_low:
            g_low, k_low = -v, k
    i_up = st.act[k_up] if k_up >= 0 else -1
    i_low = st.act[k_low] if k_low >= 0 else -1
    return g_up, i_up, g_low, i_low


@njit(**INTERNAL)
def violation(st: SolverState, c: ColumnCache) -> float:
    """``m(alpha) - M(alpha)`` over the active set."""
    g_up, _, g_low, _ = extremes(st, c)
    return g_up + g_low


@njit(**INTERNAL)
def select_wss1(st: SolverState, c: ColumnCache) -> tuple[int, int, float]:
    """The maximal violating pair; ``(-1, -1, gap)`` when ``gap = m - M < tol``."""
    g_up, i, g_low, j = extremes(st, c)
    gap = g_up + g_low
    if gap < st.tol or i < 0 or j < 0:
        return -1, -1, gap
    return i, j, gap


@njit(**INLINE)
def second_order_j(
    G: np.ndarray, yT: np.ndarray, QDT: np.ndarray, in_low: np.ndarray, Q_i: np.ndarray,
    QD_i: float, y_i: float, g_max: float, score: np.ndarray,
) -> tuple[int, float]:
    """LIBSVM's second-order choice of ``j`` for a given ``i``: the layout position ``k`` of
    the last maximum of ``score_t = b_it^2 / a_it`` over the candidates ``t`` (in ``I_low``
    with ``b_it = m + y_t G_t > 0``; ``a_it = Q_ii + Q_tt - 2 y_i y_t Q_it``, ``TAU`` if not
    positive; -1 when there are none), and ``m - M = max_t b_it`` over the candidates (0 when
    there are none: then ``m - M <= 0``).

    The scores (-1 for the others) are written to ``score`` by a loop whose every step is a
    select, with both maxima taken over the values' bits (non-negative floats order as their
    bits), so it vectorises, reductions included; a backward search then finds the maximum.
    """
    best, gap = bits(-1.0), np.int64(0)
    for k in range(Q_i.shape[0]):
        b_it = g_max + yT[k] * G[k]
        a_it = QD_i + QDT[k] - 2.0 * y_i * yT[k] * Q_i[k]
        a_it = a_it if a_it > 0.0 else TAU
        candidate = in_low[k] and b_it > 0.0
        v = b_it * b_it / a_it if candidate else -1.0
        score[k] = v
        best = max(best, bits(v))
        gap = max(gap, bits(b_it) if candidate else np.int64(0))
    top = as_float(best)
    if top < 0.0:
        return -1, as_float(gap)
    return last_of(score[: Q_i.shape[0]], top), as_float(gap)


@njit(**INLINE)
def argmax_up(
    G: np.ndarray, yT: np.ndarray, in_up: np.ndarray, score: np.ndarray,
) -> tuple[float, int]:
    """``m = max_{I_up} -y_t G_t`` over the layout's ``len(G)`` positions and the last position
    that attains it, as LIBSVM's ``-y[t]*G[t] >= Gmax`` scan; ``(-inf, -1)`` if ``I_up`` is empty.

    ``score`` receives ``-y_t G_t`` (``-inf`` outside ``I_up``) by a loop of selects with an
    integer maximum over :func:`~.bits.ordered` values, which vectorises; the position is then
    found by a float comparison (``-0.0`` and ``+0.0`` tie there, as in LIBSVM's scan).
    """
    L = G.shape[0]
    up, best = score[:L], ordered(-np.inf)
    for k in range(L):
        v = -yT[k] * G[k] if in_up[k] else -np.inf
        up[k] = v
        best = max(best, ordered(v))
    g_max = unordered(best)
    return g_max, (last_of(up, g_max) if g_max > -np.inf else -1)


@njit(inline="always")
def select_wss2(
    st: SolverState, c: ColumnCache, kd: QMatrix, prefetching: bool | None
) -> tuple[int, int, float]:
    """LIBSVM's second-order working set; ``(-1, -1, gap)`` when ``gap = m - M < tol``.

    ``i = argmax_{I_up} -y_t G_t`` comes from the previous pair update when it is fresh; ``j``
    by :func:`second_order_j`. A missing column ``i`` is offered to
    :func:`~.columns.prefetch` unless ``prefetching`` is None (:func:`~.loops.solve_pairs`).
    """
    i = st.scalars.i_max
    g_max = st.scalars.g_max
    if i == STALE:
        g_max, i, _, _ = extremes(st, c)
    gap, j = -np.inf, -1
    if i >= 0:
        if prefetching is not None and c.slot_of[i] < 0:
            prefetch(st, c, kd, i)
        Q_i = get_column(c, kd, i)
        k, gap = second_order_j(st.G, st.yT, st.QDT, st.in_low, Q_i, st.QD[i], st.y[i], g_max,
                                st.score)
        if k >= 0:
            j = st.act[k]
    if gap < st.tol or j < 0:
        return -1, -1, gap
    return i, j, gap


@njit(inline="always")
def select_working_set(
    st: SolverState, c: ColumnCache, kd: QMatrix, second_order: bool, prefetching: bool | None
) -> tuple[int, int, float]:
    """``(i, j, m - M)`` by ``"wss2"`` (``second_order``) or ``"wss1"``; ``i = j = -1`` when
    ``m - M < tol`` (optimal on the active set). ``prefetching``: as in :func:`select_wss2`."""
    if second_order:
        return select_wss2(st, c, kd, prefetching)
    return select_wss1(st, c)
