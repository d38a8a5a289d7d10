"""SMO's named steps (:mod:`maxmargin.algorithms.smo`) one at a time, against the textbook
formulas computed densely in float64: the pair update, the working-set selection, and the
gradient after shrinking and reconstruction."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from maxmargin.algorithms import _kernel_cache as kc
from maxmargin.algorithms.smo import loops
from maxmargin.algorithms.smo.pair import take_step
from maxmargin.algorithms.smo.state import FREE, LOWER, UPPER, new_state
from maxmargin.algorithms.smo.working_set import select_working_set
from maxmargin.kernels import make_kernel
from maxmargin.kernels import qmatrix as qmx

# compiled callers only: these steps have no CPython wrapper (or are inlined)
_take_step = njit(lambda st_, c, kd, i, j: take_step(st_, c, kd, i, j, None))
_select = njit(lambda st_, c, kd, second: select_working_set(st_, c, kd, second, None))


def problem(seed: int, n: int, kernel: str, C: float | None):
    """Random data, its kernel and the dense float64 ``Q``; the solver's state at alpha = 0
    with a float64 cache (so ``G`` is exact up to the sums' rounding)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3)) * rng.choice([0.3, 1.0, 3.0])
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0
    kern = make_kernel(kernel, gamma=0.4, degree=2, coef0=1.0, X=X)
    K = kern(X, X)
    Q = y[:, None] * K * y[None, :]
    kd = qmx.make_qmatrix(kern, X, y)
    box = None if C is None else C * rng.uniform(0.5, 1.5, n)  # per-sample bounds
    state = new_state(kd, kern.diag(X), box, 1e-3, 1)
    cache = kc.make_cache(n, 1.0, np.float64)
    return rng, Q, kd, state, cache


def violating_pairs(alpha, y, C, G):
    """``I_up`` and ``I_low`` (by variable) and ``-y G``."""
    up = ((y > 0) & (alpha < C)) | ((y < 0) & (alpha > 0))
    low = ((y > 0) & (alpha > 0)) | ((y < 0) & (alpha < C))
    return up, low, -y * G


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(2, 40),
       kernel=st.sampled_from(["linear", "rbf", "poly"]), C=st.sampled_from([0.1, 1.0, 10.0, None]),
       steps=st.integers(1, 30))
def test_pair_steps_keep_the_textbook_state(seed, n, kernel, C, steps) -> None:
    """Steps on random violating pairs: afterwards ``G = Q alpha - e``, ``D = e^T alpha - 1/2
    alpha^T Q alpha``, ``0 <= alpha <= C``, ``y^T alpha = 0``, every status and ``I_up`` /
    ``I_low`` membership matches alpha, ``G_bar = sum_{alpha_j = C_j} C_j Q_:j``, and the next
    ``i`` (``g_max``, ``i_max``) is LIBSVM's last argmax of ``-y G`` over ``I_up``."""
    rng, Q, kd, state, cache = problem(seed, n, kernel, C)
    y, Cs, sc = state.y, state.C, state.scalars
    stepped = False
    for _ in range(steps):
        G = state.G[state.pos]  # by variable
        up, low, v = violating_pairs(state.alpha, y, Cs, G)
        pairs = [(i, j) for i in np.flatnonzero(up) for j in np.flatnonzero(low) if v[i] > v[j]]
        if not pairs:
            break
        i, j = pairs[rng.integers(len(pairs))]
        a_before = state.alpha.copy()
        _take_step(state, cache, kd, i, j)
        stepped = True
        moved = np.flatnonzero(state.alpha != a_before)
        assert set(moved) <= {i, j}
    alpha = state.alpha
    scale = 1.0 + np.abs(Q).max() * max(1.0, alpha.sum())
    np.testing.assert_allclose(state.G[state.pos], Q @ alpha - 1.0, rtol=0, atol=1e-12 * scale)
    assert math.isclose(sc.dual, alpha.sum() - 0.5 * alpha @ Q @ alpha, rel_tol=1e-11,
                        abs_tol=1e-11 * scale)
    assert np.all(alpha >= 0.0) and np.all(alpha <= Cs)
    assert abs(y @ alpha) <= 1e-12 * max(1.0, alpha.sum())
    assert math.isclose(sc.alpha_sum, alpha.sum(), rel_tol=1e-12, abs_tol=1e-15)
    status = np.where(alpha >= Cs, UPPER, np.where(alpha <= 0.0, LOWER, FREE))
    np.testing.assert_array_equal(state.status, status)
    up, low, v = violating_pairs(alpha, y, Cs, state.G[state.pos])
    np.testing.assert_array_equal(state.in_up[state.pos], up)
    np.testing.assert_array_equal(state.in_low[state.pos], low)
    at = alpha >= Cs
    np.testing.assert_allclose(state.G_bar, Q[:, at] @ Cs[at], rtol=0, atol=1e-12 * scale)
    if not stepped:
        return
    # LIBSVM's scan: the last t (by layout position) with -y_t G_t >= the maximum so far
    k_best, best = -1, -np.inf
    for k in range(n):
        t = state.act[k]
        if up[t] and -y[t] * state.G[k] >= best:
            k_best, best = k, -y[t] * state.G[k]
    assert sc.i_max == (state.act[k_best] if k_best >= 0 else -1)
    if k_best >= 0:
        assert sc.g_max == best


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(2, 40),
       kernel=st.sampled_from(["linear", "rbf"]), C=st.sampled_from([0.5, 5.0, None]),
       iters=st.integers(0, 25), second_order=st.booleans())
def test_select_working_set_is_the_textbook_rule(seed, n, kernel, C, iters, second_order):
    """From a state some iterations into a run: ``i = argmax_{I_up} -y_t G_t``; ``"wss1"`` takes
    ``j = argmax_{I_low} y_t G_t``, ``"wss2"`` the ``t`` in ``I_low`` with ``b_it = m + y_t G_t >
    0`` that maximises ``b_it^2 / a_it`` (``a_it = Q_ii + Q_tt - 2 y_i y_t Q_it``, TAU if not
    positive); the gap is ``m - M``; no pair exactly when ``m - M < tol``."""
    _, Q, kd, state, cache = problem(seed, n, kernel, C)
    loops.solve_pairs(state, cache, kd, True, False, loops.Limits(iters, 0.0, 0.0, 0.0), None)
    state.scalars.i_max = -2  # STALE: recomputed by the selection itself
    i, j, gap = _select(state, cache, kd, second_order)
    y, alpha = state.y, state.alpha
    G = state.G[state.pos]
    up, low, v = violating_pairs(alpha, y, state.C, G)
    if not up.any() or not low.any():
        assert i == j == -1
        return
    m, M = v[up].max(), v[low].min()
    if i < 0:
        assert m - M < state.tol
        return
    assert m - M >= state.tol and i >= 0 and j >= 0
    assert gap == m - M or math.isclose(gap, m - M, rel_tol=1e-12, abs_tol=1e-15)
    assert up[i] and v[i] == m
    assert low[j]
    if not second_order:
        assert v[j] == M
        return
    b = m - v  # b_it = m + y_t G_t
    a = Q[i, i] + np.diag(Q) - 2.0 * Q[i, :] * y[i] * y  # Q_it = y_i y_t K_it
    a = np.where(a > 0.0, a, 1e-12)
    gains = np.where(low & (b > 0.0), b * b / a, -1.0)
    assert gains[j] >= gains.max() * (1.0 - 1e-9)  # the cached column is float64: ties aside


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(30, 300),
       kernel=st.sampled_from(["linear", "rbf"]), C=st.sampled_from([1.0, 10.0]),
       iters=st.integers(1, 3000), cache_mb=st.sampled_from([0.002, 0.05, 1.0]))
def test_shrinking_and_reconstruction_leave_the_exact_gradient(seed, n, kernel, C, iters,
                                                               cache_mb):
    """A run stopped anywhere (shrinking on, caches so small that the layout is compacted and
    columns are partial) ends with the gradient reconstructed: every variable active again,
    ``G = Q alpha - e`` on all rows and ``G_bar = sum_{alpha_j = C_j} C_j Q_:j``, as without
    shrinking."""
    _, Q, kd, state, _ = problem(seed, n, kernel, C)
    cache = kc.make_cache(n, cache_mb, np.float64)
    loops.solve_pairs(state, cache, kd, True, True, loops.Limits(iters, 0.0, 0.0, 0.0), None)
    alpha, Cs = state.alpha, state.C
    scale = 1.0 + np.abs(Q).max() * max(1.0, alpha.sum())
    assert int(cache.state[kc.S_LEN]) == n and state.scalars.n_active == n
    np.testing.assert_allclose(state.G[state.pos], Q @ alpha - 1.0, rtol=0, atol=1e-11 * scale)
    at = alpha >= Cs
    np.testing.assert_allclose(state.G_bar, Q[:, at] @ Cs[at], rtol=0, atol=1e-11 * scale)
    up, low, _ = violating_pairs(alpha, state.y, Cs, state.G[state.pos])
    np.testing.assert_array_equal(state.in_up[state.pos], up)
    np.testing.assert_array_equal(state.in_low[state.pos], low)
