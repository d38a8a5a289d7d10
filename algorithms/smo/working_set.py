r"""Selecting the working set: the pair ``(i, j)`` of variables SMO moves next.

With ``I_up``, ``I_low`` as in :mod:`.state`, the KKT conditions hold iff

.. math::

    m(\alpha) = \max_{t \in I_{up}} -y_t G_t \;\le\; M(\alpha) = \min_{t \in I_{low}} -y_t G_t,

and every rule stops when ``m - M < tol``; ``"wss2"`` at ``m - M < tol min(1, tol_r r)`` when
``scalars.tol_r > 0`` (the one-class SVM: :func:`relative_stop`).

* ``"wss1"``: the maximal violating pair, ``i = argmax_{I_up} -y_t G_t``,
  ``j = argmax_{I_low} y_t G_t``;
* ``"wss2"`` (LIBSVM's ``select_working_set``, Fan, Chen & Lin 2005): the same ``i``, then
  ``j`` minimises ``-b_it^2 / a_it`` over ``t in I_low`` with ``b_it = m + y_t G_t > 0`` and
  ``a_it = K_ii + K_tt - 2 K_it`` (``TAU`` if ``<= 0``): the largest gain of the pair's step.

The scans over the layout are in :mod:`.scans`; Platt's heuristic is in :mod:`.platt`.
"""

from __future__ import annotations

import numpy as np

from maxmargin._jit import INLINE, INTERNAL, njit
from maxmargin.algorithms._kernel_cache import S_LEN, ColumnCache, get_column
from maxmargin.algorithms.smo.columns import prefetch
from maxmargin.algorithms.smo.scans import TAU, argmax_up, second_order_j, second_order_scan
from maxmargin.algorithms.smo.state import STALE, SolverState
from maxmargin.kernels.qmatrix import QMatrix

__all__ = [
    "TAU",
    "relative_stop",
    "extremes",
    "violation",
    "select_wss1",
    "second_order_j",
    "argmax_up",
    "select_wss2",
    "select_working_set",
]

@njit(**INLINE)
def relative_stop(st: SolverState, r: float) -> float:
    """The factor of ``tol`` in the stop ``m - M < tol min(1, tol_r r)`` when
    ``scalars.tol_r > 0`` and ``r >= tol``, else 1 (LIBSVM's stop). ``r`` is LIBSVM's ``r``
    (its ``calculate_rho``, ``nu l rho`` of the one-class SVM, ``l rho`` of ν-SVC) estimated in
    the loop by the middle of the extremes, and ``m - M`` over ``r`` is the certificate's
    ``kkt_violation`` (:mod:`maxmargin.certificate_nu`): the stop meets ``tol`` where ``r <
    1`` too, and is LIBSVM's where ``r >= 1 / tol_r``."""
    tol_r = st.scalars.tol_r
    if tol_r > 0.0 and r >= st.tol:
        return min(1.0, tol_r * r)
    return 1.0


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


@njit(inline="always")
def select_wss2(
    st: SolverState, c: ColumnCache, kd: QMatrix, prefetching: bool | None
) -> tuple[int, int, float]:
    """LIBSVM's second-order working set; ``(-1, -1, gap)`` when ``gap = m - M < tol``
    (times :func:`relative_stop` of ``r = -(m + M) / 2``, LIBSVM's one-class ``r``: all ``y_t
    = 1``, ``G_t = r`` at the free variables).

    ``i = argmax_{I_up} -y_t G_t`` comes from the previous pair update when it is fresh; ``j``
    by :func:`~.scans.second_order_j` (:func:`~.scans.second_order_scan`: on the Q-matrix's
    threads where it has them). A missing column ``i`` is offered to
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
        k, gap = second_order_scan(kd, st.G, st.yT, st.QDT, st.in_low, Q_i, st.QD[i], st.y[i],
                                   g_max, st.score)
        if k >= 0:
            j = st.act[k]
    if gap < st.tol * relative_stop(st, 0.5 * gap - g_max) or j < 0:
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
