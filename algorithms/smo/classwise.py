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
  ``i_s`` of ``j``'s class; none when ``max_s (m_s - M_s) < tol`` (LIBSVM's stop), or below
  ``tol`` times :func:`stop_factor` (``scalars.tol_r > 0``: relative to LIBSVM's ``r``, the
  certificate's ``kkt_violation``);
* :func:`classwise_shrinking` (``Solver_NU::do_shrinking``) -- unshrink once when ``max_s (m_s
  - M_s) <= 10 tol``, then :func:`~.shrinking.do_shrinking` with each class's ``m_s``, ``M_s``.

The pair's step, the gradient update and the reconstruction are :mod:`.pair`'s and
:mod:`.shrinking`'s (``scalars.linear = 0``); ``Solver_NU::calculate_rho`` is the judge's
(:func:`~maxmargin.certificate_nu.nu_offsets`, :mod:`.nu`).
"""

from __future__ import annotations

import numpy as np

from maxmargin._jit import INLINE, INTERNAL, njit
from maxmargin.algorithms._kernel_cache import S_LEN, ColumnCache, get_column
from maxmargin.algorithms.smo.bits import SEARCH_BLOCK, as_float, bits, last_of, ordered, unordered
from maxmargin.algorithms.smo.scans import TAU
from maxmargin.algorithms.smo.shrinking import do_shrinking, reconstruct_gradient
from maxmargin.algorithms.smo.state import SolverState
from maxmargin.algorithms.smo.working_set import relative_stop
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


#: :func:`~.bits.ordered` of ``-inf``: where the scans' integer maxima start (as ``np.int64``: a
#: literal start would compile the callee it reaches once more).
_NO_VALUE = -0x7FF0000000000001


@njit(**INLINE)
def _up_maxima(G: np.ndarray, yT: np.ndarray, in_up: np.ndarray, score: np.ndarray
               ) -> tuple[float, float]:
    """``(m_+, m_-)``: each class's ``max_{I_up} -y_t G_t`` over the layout's ``len(G)``
    positions (``-inf`` for an empty set; NaN entries left out), ``score`` receiving ``-y_t
    G_t`` (``-inf`` outside ``I_up``). A loop of selects with integer maxima over
    :func:`~.bits.ordered` values, which vectorises."""
    up_p, up_n = np.int64(_NO_VALUE), np.int64(_NO_VALUE)
    for k in range(G.shape[0]):
        v = -yT[k] * G[k]
        v = v if in_up[k] and v > -np.inf else -np.inf
        score[k] = v
        o = ordered(v)
        positive = yT[k] > 0
        up_p = max(up_p, o if positive else _NO_VALUE)
        up_n = max(up_n, _NO_VALUE if positive else o)
    return unordered(up_p), unordered(up_n)


@njit(**INLINE)
def _last_in_class(score: np.ndarray, yT: np.ndarray, top: float, s: float) -> int:
    """The last position ``k`` of class ``s`` with ``score[k] == top`` (-1 if none): blocks of
    ``SEARCH_BLOCK`` from the end tested by a loop that vectorises, then the block searched
    backwards (as :func:`~.bits.last_of`)."""
    k = score.shape[0]
    while k > SEARCH_BLOCK:
        hit = False
        for t in range(k - SEARCH_BLOCK, k):
            hit |= (score[t] == top) & (yT[t] == s)
        if hit:
            break
        k -= SEARCH_BLOCK
    k -= 1
    while k >= 0 and not (score[k] == top and yT[k] == s):
        k -= 1
    return k


@njit(**INLINE)
def _second_order_classwise(
    G: np.ndarray, yT: np.ndarray, QDT: np.ndarray, in_low: np.ndarray, Q_p: np.ndarray,
    Q_n: np.ndarray, QD_p: float, QD_n: float, up_p: float, up_n: float, score: np.ndarray,
) -> tuple[float, float, float]:
    """One pass over both classes (``Solver_NU``'s second loop): ``score[k]`` the gain
    ``b_kt^2 / a_kt`` of position ``k`` with its class's ``i`` (column ``Q_p`` or ``Q_n``,
    ``m = up_p`` or ``up_n``; -1 unless ``t in I_low`` and ``b_it > 0``), and returns the
    largest gain with each class's ``-M = max_{I_low} y_t G_t`` (NaN entries left out). A
    loop of selects with integer maxima, which vectorises."""
    best, low_p, low_n = bits(-1.0), np.int64(_NO_VALUE), np.int64(_NO_VALUE)
    for k in range(G.shape[0]):
        positive = yT[k] > 0
        yG = yT[k] * G[k]
        b_it = (up_p if positive else up_n) + yG
        a_it = (QD_p if positive else QD_n) + QDT[k] - 2.0 * (Q_p[k] if positive else Q_n[k])
        a_it = a_it if a_it > 0.0 else TAU  # y_i y_t = 1 within a class
        v = b_it * b_it / a_it if in_low[k] and b_it > 0.0 else -1.0
        score[k] = v
        best = max(best, bits(v))
        o = ordered(yG) if in_low[k] and yG > -np.inf else _NO_VALUE
        low_p = max(low_p, o if positive else _NO_VALUE)
        low_n = max(low_n, _NO_VALUE if positive else o)
    return as_float(best), unordered(low_p), unordered(low_n)


@njit(**INLINE)
def stop_factor(st: SolverState, up_p: float, low_p: float, up_n: float, low_n: float
                ) -> float:
    """The factor of ``tol`` in the stop ``max_s (m_s - M_s) < tol min(1, tol_r r)``
    (:func:`~.working_set.relative_stop`): ``r = (r_+ + r_-) / 2``,
    LIBSVM's ``r`` (its ``calculate_rho``) estimated by the middle of each class's
    extremes, ``r_+ = (-M_+ - m_+) / 2`` and ``r_- = (m_- + M_-) / 2`` (``up_s = m_s``,
    ``low_s = -M_s``). ``m - M`` over ``r`` is the certificate's ``kkt_violation``."""
    return relative_stop(st, 0.25 * (low_p - up_p + up_n - low_n))


@njit(inline="always")
def select_classwise(st: SolverState, c: ColumnCache, kd: QMatrix) -> tuple[int, int, float]:
    """``(i, j, max_s (m_s - M_s))`` by LIBSVM's ``Solver_NU::select_working_set`` (module
    docstring): a pass for each class's ``i_s`` (the last argmax of ``m_s``), then one pass
    over both classes for ``j`` (the last maximum of the gain) and each ``M_s``; ``i = j =
    -1`` when ``max_s (m_s - M_s) < tol`` (times :func:`stop_factor`) or no pair remains."""
    L = c.state[S_LEN]
    G, yT, score = st.G[:L], st.yT[:L], st.score[:L]
    up_p, up_n = _up_maxima(G, yT, st.in_up[:L], score)
    k_p = _last_in_class(score, yT, up_p, 1.0) if up_p > -np.inf else -1
    k_n = _last_in_class(score, yT, up_n, -1.0) if up_n > -np.inf else -1
    if k_p < 0 and k_n < 0:
        return -1, -1, -np.inf
    i_p = st.act[k_p] if k_p >= 0 else st.act[k_n]
    i_n = st.act[k_n] if k_n >= 0 else i_p
    Q_p = get_column(c, kd, i_p)
    Q_n = get_column(c, kd, i_n) if i_n != i_p else Q_p
    top, low_p, low_n = _second_order_classwise(G, yT, st.QDT[:L], st.in_low[:L], Q_p, Q_n,
                                                st.QD[i_p], st.QD[i_n], up_p, up_n, score)
    gap = max(up_p + low_p, up_n + low_n)
    if gap < st.tol * stop_factor(st, up_p, low_p, up_n, low_n) or top < 0.0:
        return -1, -1, gap
    k = last_of(score, top)
    return (i_p if yT[k] > 0 else i_n), st.act[k], gap


@njit(inline="always")
def classwise_shrinking(st: SolverState, c: ColumnCache, kd: QMatrix) -> None:
    """LIBSVM's ``Solver_NU::do_shrinking`` (module docstring)."""
    g_pos, _, l_pos, g_neg, _, l_neg = class_extremes(st, c)
    sc = st.scalars
    if not sc.unshrunk and max(g_pos + l_pos, g_neg + l_neg) <= 10.0 * st.tol:
        sc.unshrunk = True
        reconstruct_gradient(st, c, kd)
    do_shrinking(st, c, kd, g_pos, l_pos, g_neg, l_neg)
