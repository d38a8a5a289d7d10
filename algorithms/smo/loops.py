"""The compiled drivers: LIBSVM's ``Solver::Solve`` loop, and Platt's outer loop.

``solve_pairs`` (``"wss2"``, ``"wss1"``) is, per iteration: select the working set; if ``m - M
< tol`` on the active set, reconstruct the gradient and select again (stop if still optimal);
take the step. On wide data a missing column comes with the columns most likely to be asked
for next (:mod:`.columns`); on other data that code is not compiled at all
(:func:`prefetching_for`). Every ``min(n, 1000)`` iterations it shrinks, checks the hard
margin's infeasibility rule (:mod:`.hard_margin`) and, in a float32 phase of
``precision="auto"``, the cache's rounding floor (:mod:`.precision`).

The drivers hand the state, the cache and the Q-matrix to their helpers by reference
(:func:`~maxmargin._byref.byref`: one pointer each, not their ~55 arrays flattened into ~370
arguments); the helpers' code is the same for the tuples themselves, which the tests pass.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from maxmargin._byref import byref
from maxmargin._jit import ENTRY, HELPER, njit
from maxmargin.algorithms._kernel_cache import S_LEN, ColumnCache, make_cache
from maxmargin.algorithms.smo.classwise import classwise_shrinking, select_classwise
from maxmargin.algorithms.smo.columns import PREFETCH_BYTES
from maxmargin.algorithms.smo.hard_margin import (
    alpha_sum_proves_within,
    hulls_may_be_within,
    hulls_within,
)
from maxmargin.algorithms.smo.pair import take_step
from maxmargin.algorithms.smo.platt import (
    PLATT_PAIR_FRACTION,
    platt_examine_example,
)
from maxmargin.algorithms.smo.shrinking import do_shrinking, reconstruct_gradient
from maxmargin.algorithms.smo.state import (
    FREE,
    PERIODIC,
    SolverState,
    new_state,
    record_history,
)
from maxmargin.algorithms.smo.working_set import (
    extremes,
    select_working_set,
    select_wss1,
    violation,
)
from maxmargin.kernels import LinearKernel, RBFKernel
from maxmargin.kernels.qmatrix import (
    EXPENSIVE_FEATURES,
    QMatrix,
    diagonal,
    make_qmatrix,
    rounded_copy,
)

__all__ = [
    "OPTIMAL",
    "MAX_ITER",
    "INFEASIBLE",
    "PRECISION",
    "FLOOR_FRACTION",
    "Limits",
    "alpha_norm",
    "prefetching_for",
    "record_final",
    "solve_pairs",
    "solve_platt",
    "warm_large_data",
]

#: How a driver stopped: ``m - M < tol``, the iteration cap, the hard margin's infeasibility
#: rule, or (float32 phase of ``precision="auto"``) the cache's rounding floor.
OPTIMAL, MAX_ITER, INFEASIBLE, PRECISION = 0, 1, 2, 3
#: ``precision="auto"``: a float32 phase stops (``PRECISION``) when its estimated rounding floor
#: of ``m - M`` exceeds this fraction of ``tol``.
FLOOR_FRACTION = 0.125


class Limits(NamedTuple):
    """When a driver stops short of ``m - M < tol``."""

    max_iter: int  # MAX_ITER at this iteration count (counted over all phases)
    hull_bound2: float  # hard margin: INFEASIBLE when the hulls are within sqrt(hull_bound2)
    floor_coeff: float  # > 0: PRECISION when floor_coeff * alpha_norm(alpha) > floor_limit
    floor_limit: float


def prefetching_for(kd: QMatrix) -> bool | None:
    """The drivers' ``prefetching``: True when :func:`~.columns.prefetch` may apply
    (dense data of at least ``EXPENSIVE_FEATURES`` features, ``PREFETCH_BYTES`` of them in
    all), else None, for which Numba drops its calls before typing (``x is None`` on an
    argument typed ``none`` is decided at compile time): the first call on other data does not
    compile the prefetch and its BLAS blocks."""
    d, n = kd.XT.shape
    return True if d >= EXPENSIVE_FEATURES and 8 * d * n >= PREFETCH_BYTES else None


def warm_large_data() -> None:
    """Compile (or load from Numba's on-disk cache) the drivers' specialisations that only
    large problems select, by running them on a four-point problem with the types
    :func:`~maxmargin.algorithms.smo.smo` passes them: :func:`solve_pairs` on wide data
    (``prefetching=True``) with an rbf Q-matrix and float32 and float64 caches, a linear one
    with a float64 cache, and both with rounded features (float32 caches: a float64 phase
    drops them), and on large rbf data (``prefetching=None``) with the rbf Q-matrix with
    rounded features; :func:`solve_platt` on wide data with float32 and float64 caches. No
    small problem selects them, so ``maxmargin compile`` warms them up this way."""
    X = np.array([[0.0, 0.0], [1.0, 0.2], [2.0, 2.0], [3.0, 2.5]])
    y = np.array([-1.0, -1.0, 1.0, 1.0])
    limits = Limits(max_iter=1000, hull_bound2=0.0, floor_coeff=0.0, floor_limit=0.0)
    rbf = make_qmatrix(RBFKernel(1.0), X, y, blocks=True)
    linear = make_qmatrix(LinearKernel(), X, y, blocks=True)
    runs = [(rbf, np.float32, True), (rbf, np.float64, True), (linear, np.float64, True),
            (rounded_copy(linear), np.float32, True), (rounded_copy(rbf), np.float32, True),
            (rounded_copy(rbf), np.float32, None)]
    for kd, dtype, prefetching in runs:
        st = new_state(kd, diagonal(kd), 1.0, 1e-3, 1)
        cache = make_cache(X.shape[0], 1.0, dtype)
        solve_pairs(st, cache, kd, True, True, limits, prefetching)
    for dtype in (np.float32, np.float64):
        st = new_state(rbf, diagonal(rbf), 1.0, 1e-3, 1)
        solve_platt(st, make_cache(X.shape[0], 1.0, dtype), rbf, limits, 0, True)


@njit(**HELPER)
def alpha_norm(alpha: np.ndarray) -> float:
    """``sqrt(sum_t alpha_t^2)``: times ``2^-24 max_t K_tt`` it estimates the rounding of ``G``
    with a float32 cache (each ``G_i = sum_j alpha_j Q_ij`` with every ``Q_ij`` rounded to
    relative ``2^-24``, ``|Q_ij| <= max_t K_tt``; independent roundings add up like a random
    walk)."""
    s = 0.0
    for t in range(alpha.shape[0]):
        s += alpha[t] * alpha[t]
    return math.sqrt(s)


def record_final(state: SolverState, cache: ColumnCache) -> float:
    """``m - M`` over the active set at the end of a run (:func:`~.working_set.violation`'s
    value; NaN entries of ``-y G`` skipped as there), stored as the history's last point
    (:func:`~.state.record_history` with ``force``: the same iteration's point overwritten);
    returned. NumPy on the state's arrays: once a run, not worth a compiled specialisation."""
    L = int(cache.state[S_LEN])
    v = -state.yT[:L] * state.G[:L]
    up, low = state.in_up[:L] & ~np.isnan(v), state.in_low[:L] & ~np.isnan(v)
    g_up = float(np.max(v[up])) if up.any() else -math.inf
    g_low = float(np.max(-v[low])) if low.any() else -math.inf
    gap = g_up + g_low
    sc = state.scalars
    h, it = int(sc["n_hist"]), int(sc["iteration"])
    if h > 0 and state.h_iter[h - 1] == it:
        h -= 1
    state.h_iter[h], state.h_viol[h], state.h_dual[h] = it, gap, sc["dual"]
    sc["n_hist"] = h + 1
    return gap


@njit(**ENTRY)
def solve_pairs(
    state: SolverState, cache: ColumnCache, qmatrix: QMatrix, second_order: bool, shrinking: bool,
    limits: Limits, prefetching: bool | None, classwise: bool | None = None,
) -> int:
    """LIBSVM's ``Solver::Solve`` loop with the ``wss2`` (``second_order``) or ``wss1`` working
    set, until ``m - M < tol`` or a limit; returns the outcome. ``prefetching`` (True or None,
    :func:`prefetching_for`): whether missing columns are offered to
    :func:`~.columns.prefetch` (None compiles a driver without it). ``classwise`` (True or
    None, likewise compiled only when True): ν-SVC's pairs within one class and its shrinking
    (:mod:`.classwise`, LIBSVM's ``Solver_NU``) in place of ``select_working_set`` and
    ``do_shrinking``."""
    st, c, kd = byref(state), byref(cache), byref(qmatrix)
    n = st.alpha.shape[0]
    sc = st.scalars
    period = min(n, 1000)
    counter = period + 1
    outcome = OPTIMAL
    retry = False  # m - M < tol on the active set: select once more after reconstructing G
    while True:
        if not retry:
            if sc.iteration >= limits.max_iter:
                outcome = MAX_ITER
                break
            if alpha_sum_proves_within(st, limits.hull_bound2):
                outcome = INFEASIBLE
                break
            counter -= 1
            if counter == 0:
                counter = period
                if shrinking:
                    if classwise is not None:
                        classwise_shrinking(st, c, kd)
                    else:
                        g_up, _, g_low, _ = extremes(st, c)
                        if not sc.unshrunk and g_up + g_low <= 10.0 * st.tol:
                            sc.unshrunk = True  # unshrink once, as LIBSVM, before the end
                            reconstruct_gradient(st, c, kd)
                        do_shrinking(st, c, kd, g_up, g_low, g_up, g_low)
                if st.hard and hulls_may_be_within(st, limits.hull_bound2):
                    reconstruct_gradient(st, c, kd)
                    if hulls_within(st, limits.hull_bound2):
                        outcome = INFEASIBLE
                        break
                if limits.floor_coeff > 0.0 and (
                        limits.floor_coeff * alpha_norm(st.alpha) > limits.floor_limit):
                    outcome = PRECISION
                    break
        if classwise is not None:
            i, j, gap = select_classwise(st, c, kd)
        else:
            i, j, gap = select_working_set(st, c, kd, second_order, prefetching)
        if i < 0:
            if retry:
                break
            reconstruct_gradient(st, c, kd)
            retry = True
            counter = 1  # shrink at the next iteration
            continue
        retry = False
        if sc.iteration % sc.stride == 0:
            record_history(st, gap, PERIODIC)
        sc.iteration += 1
        take_step(st, c, kd, i, j, prefetching)
    reconstruct_gradient(st, c, kd)
    return outcome


@njit(**ENTRY)
def solve_platt(
    state: SolverState, cache: ColumnCache, qmatrix: QMatrix, limits: Limits, seed: int,
    prefetching: bool | None,
) -> int:
    """Platt's outer loop (:mod:`.platt`) with the honest ``m - M < tol`` stop: when a sweep
    over all examples takes no step and ``m - M >= tol`` still (pairs rejected by ``tau``), one
    maximal-violating-pair step is taken (its missing column offered to
    :func:`~.columns.prefetch` unless ``prefetching``, as :func:`solve_pairs`', is None)."""
    np.random.seed(seed)  # noqa: NPY002 (Numba's generator is the legacy global one)
    st, c, kd = byref(state), byref(cache), byref(qmatrix)
    n = st.alpha.shape[0]
    sc = st.scalars
    examine_all = True
    sc.platt_tau = max(st.tol, PLATT_PAIR_FRACTION * violation(st, c))
    while True:
        changed = 0
        for t in range(n):
            if sc.iteration >= limits.max_iter:
                break
            if alpha_sum_proves_within(st, limits.hull_bound2):
                return INFEASIBLE
            if examine_all or st.status[t] == FREE:
                changed += platt_examine_example(st, c, kd, t)
        gap = violation(st, c)
        if gap < st.tol:
            return OPTIMAL
        sc.platt_tau = max(st.tol, PLATT_PAIR_FRACTION * gap)
        if sc.iteration >= limits.max_iter:
            return MAX_ITER
        if st.hard and hulls_may_be_within(st, limits.hull_bound2):
            reconstruct_gradient(st, c, kd)
            if hulls_within(st, limits.hull_bound2):
                return INFEASIBLE
        if examine_all:
            if changed == 0:
                i, j, gap = select_wss1(st, c)
                record_history(st, gap, PERIODIC)
                sc.iteration += 1
                take_step(st, c, kd, i, j, prefetching)
            examine_all = False
        elif changed == 0:
            examine_all = True
