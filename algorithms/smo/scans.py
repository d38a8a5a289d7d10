"""The scans of SMO's iteration: one pass over the layout's positions each, on one thread or on
the Q-matrix's threads.

* :func:`second_order_j`: the gains ``b_it^2 / a_it`` of ``"wss2"`` and their last maximum;
* :func:`argmax_up`: ``m = max_{I_up} -y_t G_t`` and its last position;
* :func:`update_and_argmax`: the gradient update ``G += Q_:i d_i + Q_:j d_j``, then
  :func:`argmax_up`; :func:`update_gradient`: the update alone (ν-SVC, one thread);
* :func:`add_column`: ``G_bar[act[k]] += coef Q_t[k]`` over the layout (a variable reached or
  left its upper bound).

A Q-matrix built for several threads (``make_qmatrix(threads=k)``, its ``pool`` 2-D) runs the
scans of a long layout (``PARALLEL_SCAN`` positions or more) on its threads
(:func:`second_order_scan`, :func:`update_and_argmax`, :func:`add_column`): each thread scans
whole blocks of 512 positions and reports its block's maximum and last position, and the maxima
are merged in order. The result is bit for bit the one-thread scan's (the same entries of ``G``
and ``G_bar``, the same maxima, the same last positions), so ``n_jobs`` changes no answer.
Other Q-matrices compile no parallel code (the choice is made on the Q-matrix's type).
"""

from __future__ import annotations

import numpy as np
from numba import prange
from numba.extending import overload

from maxmargin._byref import Ref
from maxmargin._jit import INLINE, INTERNAL, njit
from maxmargin.algorithms.smo.bits import as_float, bits, last_of, ordered, unordered

__all__ = [
    "TAU",
    "PARALLEL_SCAN",
    "second_order_j",
    "argmax_up",
    "second_order_scan",
    "update_and_argmax",
    "update_gradient",
    "add_column",
]

#: LIBSVM's replacement for a non-positive curvature ``a_it`` (or ``eta``).
TAU = 1e-12
#: Layouts of at least this many positions are scanned on the Q-matrix's threads, if it has
#: several (a parallel region's fixed cost is that of thousands of positions scanned).
PARALLEL_SCAN = 16384


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


@njit(**INLINE)
def _update(G: np.ndarray, Q_i: np.ndarray, Q_j: np.ndarray, d_i: float, d_j: float) -> None:
    """``G += Q_i d_i + Q_j d_j`` over ``len(G)`` positions (a loop that vectorises)."""
    for k in range(G.shape[0]):
        G[k] = G[k] + Q_i[k] * d_i + Q_j[k] * d_j


@njit(**INLINE)
def update_gradient(G: np.ndarray, Q_i: np.ndarray, Q_j: np.ndarray, d_i: float, d_j: float
                    ) -> None:
    """``G += Q_i d_i + Q_j d_j`` over ``len(Q_i)`` positions, one thread (ν-SVC's update:
    its selection finds each class's ``m`` itself, :mod:`.classwise`)."""
    _update(G[: Q_i.shape[0]], Q_i, Q_j, d_i, d_j)


@njit(**INLINE)
def _part(p: int, parts: int, L: int) -> tuple[int, int]:
    """Range ``p`` of ``parts`` over ``L`` positions: ``L / parts`` rounded up to whole blocks
    of 512 positions (the last ranges may be short or empty)."""
    step = ((L + parts - 1) // parts + 511) // 512 * 512
    a = min(L, p * step)
    return a, min(L, a + step)


@njit(**INTERNAL)
def _second_order_range(G: np.ndarray, yT: np.ndarray, QDT: np.ndarray, in_low: np.ndarray,
                        Q_i: np.ndarray, QD_i: float, y_i: float, g_max: float,
                        score: np.ndarray) -> tuple[int, float]:
    """:func:`second_order_j` as a function of its own: a parallel loop's body calls it, so
    its loops vectorise (inlined into the body, they did not)."""
    return second_order_j(G, yT, QDT, in_low, Q_i, QD_i, y_i, g_max, score)


@njit(**INLINE)
def _update_then_argmax(G: np.ndarray, Q_i: np.ndarray, Q_j: np.ndarray, d_i: float,
                        d_j: float, yT: np.ndarray, in_up: np.ndarray,
                        score: np.ndarray) -> tuple[float, int]:
    """:func:`_update` then :func:`argmax_up` over ``len(Q_i)`` positions."""
    L = Q_i.shape[0]
    _update(G[:L], Q_i, Q_j, d_i, d_j)
    return argmax_up(G[:L], yT, in_up, score)


@njit(**INTERNAL)
def _update_range(G: np.ndarray, Q_i: np.ndarray, Q_j: np.ndarray, d_i: float, d_j: float,
                  yT: np.ndarray, in_up: np.ndarray, score: np.ndarray) -> tuple[float, int]:
    """:func:`_update_then_argmax` as a function of its own (see :func:`_second_order_range`)."""
    return _update_then_argmax(G, Q_i, Q_j, d_i, d_j, yT, in_up, score)


@njit(parallel=True)
def _second_order_parts(
    pool: np.ndarray, G: np.ndarray, yT: np.ndarray, QDT: np.ndarray, in_low: np.ndarray,
    Q_i: np.ndarray, QD_i: float, y_i: float, g_max: float, score: np.ndarray,
) -> None:
    """:func:`second_order_j` on ``len(pool)`` ranges of ``Q_i``'s positions at once; range
    ``p`` leaves its last maximum's position (or -1) in ``pool[p, 0]`` and the bits of its
    ``max b_it`` in ``pool[p, 1]``."""
    L = Q_i.shape[0]
    for p in prange(pool.shape[0]):
        a, b = _part(p, pool.shape[0], L)
        k, gap = _second_order_range(G[a:b], yT[a:b], QDT[a:b], in_low[a:b], Q_i[a:b], QD_i,
                                     y_i, g_max, score[a:b])
        pool[p, 0] = a + k if k >= 0 else -1
        pool[p, 1] = bits(gap)


@njit(parallel=True)
def _update_parts(
    pool: np.ndarray, G: np.ndarray, Q_i: np.ndarray, Q_j: np.ndarray, d_i: float, d_j: float,
    yT: np.ndarray, in_up: np.ndarray, score: np.ndarray,
) -> None:
    """:func:`_update` and :func:`argmax_up` on ``len(pool)`` ranges of ``G``'s positions at
    once; range ``p`` leaves its maximum (:func:`~.bits.ordered`) in ``pool[p, 0]`` and its
    last position (or -1) in ``pool[p, 1]``."""
    L = G.shape[0]
    for p in prange(pool.shape[0]):
        a, b = _part(p, pool.shape[0], L)
        g, k = _update_range(G[a:b], Q_i[a:b], Q_j[a:b], d_i, d_j, yT[a:b], in_up[a:b],
                             score[a:b])
        pool[p, 0] = ordered(g)
        pool[p, 1] = a + k if k >= 0 else -1


@njit(**INLINE)
def _merged_second_order(pool: np.ndarray, score: np.ndarray) -> tuple[int, float]:
    """:func:`second_order_j`'s answer from its ranges' (:func:`_second_order_parts`): the last
    range whose maximum is the largest gives the position; ``m - M`` is the largest gap."""
    k, top, gap = -1, -1.0, np.int64(0)
    for p in range(pool.shape[0]):
        gap = max(gap, pool[p, 1])
        q = pool[p, 0]
        if q >= 0 and score[q] >= top:
            k, top = q, score[q]
    return k, as_float(gap)


@njit(**INLINE)
def _merged_argmax(pool: np.ndarray) -> tuple[float, int]:
    """:func:`argmax_up`'s answer from its ranges' (:func:`_update_parts`): the largest maximum
    (``+0.0`` above ``-0.0``), at the last position of the last range whose maximum equals it
    (``-0.0 == +0.0``, as :func:`~.bits.last_of` compares)."""
    best = ordered(-np.inf)
    for p in range(pool.shape[0]):
        best = max(best, pool[p, 0])
    g_max = unordered(best)
    if g_max == -np.inf:
        return g_max, -1
    p = pool.shape[0] - 1
    while pool[p, 1] < 0 or unordered(pool[p, 0]) != g_max:
        p -= 1
    return g_max, pool[p, 1]


def _threaded(kd) -> bool:  # noqa: ANN001
    """At typing time: whether the Q-matrix type ``kd`` (or a Ref to one) has threads."""
    tup = kd.inner if isinstance(kd, Ref) else kd
    return tup.types[tup.fields.index("pool")].ndim == 2


def second_order_scan(kd, G, yT, QDT, in_low, Q_i, QD_i, y_i, g_max, score):  # noqa: ANN001, ANN201
    """:func:`second_order_j`, on the Q-matrix ``kd``'s threads where it has several and the
    layout is long (module docstring). Compiled callers only."""


@overload(second_order_scan, jit_options=INTERNAL)
def _second_order_scan_by_type(kd, G, yT, QDT, in_low, Q_i, QD_i, y_i, g_max, score):  # noqa: ANN001, ANN202
    """The code for the Q-matrix's type: a Q-matrix without threads compiles the scan alone."""
    if not _threaded(kd):
        def one_thread(kd, G, yT, QDT, in_low, Q_i, QD_i, y_i, g_max, score):  # noqa: ANN001, ANN202
            return second_order_j(G, yT, QDT, in_low, Q_i, QD_i, y_i, g_max, score)
        return one_thread

    def threads(kd, G, yT, QDT, in_low, Q_i, QD_i, y_i, g_max, score):  # noqa: ANN001, ANN202
        if Q_i.shape[0] < PARALLEL_SCAN:
            return second_order_j(G, yT, QDT, in_low, Q_i, QD_i, y_i, g_max, score)
        _second_order_parts(kd.pool, G, yT, QDT, in_low, Q_i, QD_i, y_i, g_max, score)
        return _merged_second_order(kd.pool, score)
    return threads


def update_and_argmax(kd, G, Q_i, Q_j, d_i, d_j, yT, in_up, score):  # noqa: ANN001, ANN201
    """``G += Q_i d_i + Q_j d_j`` over ``len(Q_i)`` positions, then :func:`argmax_up` over them;
    on the Q-matrix ``kd``'s threads where it has several and the layout is long (module
    docstring). Compiled callers only."""


@overload(update_and_argmax, jit_options=INTERNAL)
def _update_and_argmax_by_type(kd, G, Q_i, Q_j, d_i, d_j, yT, in_up, score):  # noqa: ANN001, ANN202
    """The code for the Q-matrix's type: a Q-matrix without threads compiles the scans alone."""
    if not _threaded(kd):
        def one_thread(kd, G, Q_i, Q_j, d_i, d_j, yT, in_up, score):  # noqa: ANN001, ANN202
            return _update_then_argmax(G, Q_i, Q_j, d_i, d_j, yT, in_up, score)
        return one_thread

    def threads(kd, G, Q_i, Q_j, d_i, d_j, yT, in_up, score):  # noqa: ANN001, ANN202
        L = Q_i.shape[0]
        if L < PARALLEL_SCAN:
            return _update_then_argmax(G, Q_i, Q_j, d_i, d_j, yT, in_up, score)
        _update_parts(kd.pool, G[:L], Q_i, Q_j[:L], d_i, d_j, yT, in_up, score)
        return _merged_argmax(kd.pool)
    return threads


@njit(**INLINE)
def _add(G_bar: np.ndarray, act: np.ndarray, Q_t: np.ndarray, coef: float) -> None:
    """``G_bar[act[k]] += coef Q_t[k]`` for every ``k`` of ``Q_t`` (``act`` a permutation: each
    entry of ``G_bar`` once)."""
    for k in range(Q_t.shape[0]):
        G_bar[act[k]] += coef * Q_t[k]


@njit(**INTERNAL)
def _add_range(G_bar: np.ndarray, act: np.ndarray, Q_t: np.ndarray, coef: float) -> None:
    """:func:`_add` as a function of its own (see :func:`_second_order_range`)."""
    _add(G_bar, act, Q_t, coef)


@njit(parallel=True)
def _add_parts(pool: np.ndarray, G_bar: np.ndarray, act: np.ndarray, Q_t: np.ndarray,
               coef: float) -> None:
    """:func:`_add_range` on ``len(pool)`` ranges of ``Q_t``'s positions at once (distinct
    entries of ``G_bar``: ``act`` is a permutation)."""
    L = Q_t.shape[0]
    for p in prange(pool.shape[0]):
        a, b = _part(p, pool.shape[0], L)
        _add_range(G_bar, act[a:b], Q_t[a:b], coef)


def add_column(kd, G_bar, act, Q_t, coef):  # noqa: ANN001, ANN201
    """``G_bar[act[k]] += coef Q_t[k]`` over ``len(Q_t)`` positions; on the Q-matrix ``kd``'s
    threads where it has several and the layout is long (module docstring). Compiled callers
    only."""


@overload(add_column, jit_options=INTERNAL)
def _add_column_by_type(kd, G_bar, act, Q_t, coef):  # noqa: ANN001, ANN202
    """The code for the Q-matrix's type: a Q-matrix without threads compiles the loop alone."""
    if not _threaded(kd):
        def one_thread(kd, G_bar, act, Q_t, coef):  # noqa: ANN001, ANN202
            _add(G_bar, act, Q_t, coef)
        return one_thread

    def threads(kd, G_bar, act, Q_t, coef):  # noqa: ANN001, ANN202
        if Q_t.shape[0] < PARALLEL_SCAN:
            _add(G_bar, act, Q_t, coef)
        else:
            _add_parts(kd.pool, G_bar, act, Q_t, coef)
    return threads
