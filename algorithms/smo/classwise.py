r"""ν-SVC's steps that differ from C-SVC's (LIBSVM's ``Solver_NU``): pairs within one class.

The ν-SVC dual (LIBSVM's scaling, ``a = l alpha``) has a linear term ``p = 0`` and two equality
constraints, ``sum_{y_t = +1} a_t = sum_{y_t = -1} a_t = nu l / 2``: a working pair must lie in
one class, and the KKT conditions hold in each class ``s`` separately,

.. math::

    m_s = \max_{t \in I_{up}, y_t = s} -y_t G_t \;\le\; M_s = \min_{t \in I_{low}, y_t = s}
    -y_t G_t .

* :func:`class_extremes` -- ``m_s`` and ``-M_s`` of both classes, with their argmaxes;
* :func:`select_classwise` (``Solver_NU::select_working_set``) -- ``i_s = argmax m_s`` of each
  class, then ``j`` minimising ``-b_it^2 / a_it`` over both classes (``b_it = m_s + y_t G_t >
  0``, ``t in I_low`` of ``i``'s class ``s``, ``a_it`` as in :mod:`.working_set`), ``i`` the
  ``i_s`` of ``j``'s class; none when ``max_s (m_s - M_s) < tol``;
* :func:`classwise_shrinking` (``Solver_NU::do_shrinking``) -- unshrink once when ``max_s (m_s
  - M_s) <= 10 tol``, then :func:`~.shrinking.do_shrinking` with each class's ``m_s``, ``M_s``.

The pair's step, the gradient update and the reconstruction are :mod:`.pair`'s and
:mod:`.shrinking`'s (``scalars.linear = 0``); ``Solver_NU::calculate_rho`` is the judge's
(:func:`~maxmargin.certificate_nu.nu_offsets`, :mod:`.nu`).
"""

from __future__ import annotations

import numpy as np

from maxmargin._jit import INTERNAL, njit
from maxmargin.algorithms._kernel_cache import S_LEN, ColumnCache, get_column
from maxmargin.algorithms.smo.scans import TAU
from maxmargin.algorithms.smo.shrinking import do_shrinking, reconstruct_gradient
from maxmargin.algorithms.smo.state import SolverState
from maxmargin.kernels.qmatrix import QMatrix

__all__ = ["class_extremes", "classwise_shrinking", "select_classwise"]


@njit(**INTERNAL)
def class_extremes(st: SolverState, c: ColumnCache) -> tuple[float, int, float, float, int,
                                                               float]:
    """``(m_+, i_+, -M_+, m_-, i_-, -M_-)`` over the active set: each class's ``max_{I_up} -y G``
    with its argmax (a variable, -1 for an empty set) and ``max_{I_low} y G``."""
    G, yT, in_up, in_low = st.G, st.yT, st.in_up, st.in_low
    up_p, low_p, up_n, low_n = -np.inf, -np.inf, -np.inf, -np.inf
    k_p, k_n = -1, -1
    for k in range(c.state[S_LEN]):
        v = -yT[k] * G[k]
        if yT[k] > 0:
            if in_up[k] and v >= up_p:
                up_p, k_p = v, k
            if in_low[k] and -v >= low_p:
                low_p = -v
        else:
            if in_up[k] and v >= up_n:
                up_n, k_n = v, k
            if in_low[k] and -v >= low_n:
                low_n = -v
    i_pos = st.act[k_p] if k_p >= 0 else -1
    i_neg = st.act[k_n] if k_n >= 0 else -1
    return up_p, i_pos, low_p, up_n, i_neg, low_n


@njit(**INTERNAL)
def _best_in_class(st: SolverState, Q_i: np.ndarray, i: int, g_max: float, best: float
                   ) -> tuple[int, float]:
    """The last layout position ``k`` in ``i``'s class and ``I_low`` with ``b_it = g_max + y_t
    G_t > 0`` whose gain ``b_it^2 / a_it`` is at least ``best`` and all before it (-1 if none),
    and that gain."""
    G, yT, QDT, in_low = st.G, st.yT, st.QDT, st.in_low
    y_i, QD_i = st.y[i], st.QD[i]
    k_best = -1
    for k in range(Q_i.shape[0]):
        if yT[k] != y_i or not in_low[k]:
            continue
        b_it = g_max + yT[k] * G[k]
        if b_it > 0.0:
            a_it = QD_i + QDT[k] - 2.0 * Q_i[k]  # y_i y_t = 1 within a class
            gain = b_it * b_it / (a_it if a_it > 0.0 else TAU)
            if gain >= best:
                k_best, best = k, gain
    return k_best, best


@njit(inline="always")
def select_classwise(st: SolverState, c: ColumnCache, kd: QMatrix) -> tuple[int, int, float]:
    """``(i, j, max_s (m_s - M_s))`` by LIBSVM's ``Solver_NU::select_working_set`` (module
    docstring); ``i = j = -1`` when ``max_s (m_s - M_s) < tol`` or no pair remains."""
    g_pos, i_pos, l_pos, g_neg, i_neg, l_neg = class_extremes(st, c)
    gap = max(g_pos + l_pos, g_neg + l_neg)
    if gap < st.tol:
        return -1, -1, gap
    i, k, best = -1, -1, -np.inf
    if i_pos >= 0:
        Q_i = get_column(c, kd, i_pos)
        k, best = _best_in_class(st, Q_i, i_pos, g_pos, best)
        if k >= 0:
            i = i_pos
    if i_neg >= 0:
        Q_i = get_column(c, kd, i_neg)
        k_neg, best = _best_in_class(st, Q_i, i_neg, g_neg, best)
        if k_neg >= 0:
            i, k = i_neg, k_neg
    if k < 0:
        return -1, -1, gap
    return i, st.act[k], gap


@njit(inline="always")
def classwise_shrinking(st: SolverState, c: ColumnCache, kd: QMatrix) -> None:
    """LIBSVM's ``Solver_NU::do_shrinking`` (module docstring)."""
    g_pos, _, l_pos, g_neg, _, l_neg = class_extremes(st, c)
    sc = st.scalars
    if not sc.unshrunk and max(g_pos + l_pos, g_neg + l_neg) <= 10.0 * st.tol:
        sc.unshrunk = True
        reconstruct_gradient(st, c, kd)
    do_shrinking(st, c, kd, g_pos, l_pos, g_neg, l_neg)
