"""The float64 certificate's sums from the kernel cache's columns (``column_sums``), and the
precision policy that keeps small problems' columns in float64 (``precision.first_precision``).

Independent answers: ``K (alpha o y)`` by the kernel object's dense Gram matrix and by the
Q-matrix's kernel pass (``weighted_sums``); the certificate computed without the cache.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maxmargin.algorithms import _kernel_cache as kc
from maxmargin.algorithms.smo import column_sums, precision, smo, state
from maxmargin.algorithms.smo.solver import Options, Problem, Solver
from maxmargin.certificate import decision_values
from maxmargin.kernels import make_kernel, sums
from maxmargin.kernels import qmatrix as qmx


def _solved(seed: int, kind: str, shrinking: bool, n: int, cache_size: float = 50.0):
    """A random soft-margin problem solved in float64 by :class:`Solver` (the cache kept)."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 12))
    X = rng.normal(size=(n, d)) * rng.choice([0.1, 1.0, 5.0])
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=n) > 0, 1.0, -1.0)
    y[:2] = 1.0, -1.0
    kern = make_kernel(kind, gamma=0.5 / d, degree=3, coef0=1.0, X=X)
    kd = qmx.make_qmatrix(kern, X, y)
    C = float(rng.choice([0.1, 1.0, 10.0])) * np.ones(n)
    st_ = state.new_state(kd, qmx.diagonal(kd), C, 1e-3, 1)
    run = Solver(Problem(X, y, 1.0, None, kern, kd, radius2=float(np.max(kern.diag(X)))),
                 Options(1e-3, "wss2", shrinking, 10**6, cache_size, exact_finish=True), st_)
    run.solve("double")
    return run, X, y, kern


def _kernel_sums(run: Solver, idx: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """``run.kernel_sums`` with the compiled passes taken at any size (small problems' sums
    are otherwise the kernel object's, ``COMPILED_SUMS_MIN_TERMS``)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(column_sums, "COMPILED_SUMS_MIN_TERMS", 0)
        return run.kernel_sums(idx, coef)


def _exact(kern, X, idx, coef) -> tuple[np.ndarray, np.ndarray]:
    """``K[:, idx] coef`` by the dense Gram matrix, and the bound ``|K[:, idx]| |coef|`` of
    its terms (the scale of float64 summation errors, entry by entry)."""
    K = kern(X, X[idx])
    return K @ coef, np.abs(K) @ np.abs(coef)


def _close(g: np.ndarray, ref: np.ndarray, terms: np.ndarray, rel: float = 1e-13) -> None:
    """``|g - ref| <= rel |K| |coef|`` entry by entry: ~450 roundings of the terms' size."""
    bad = np.flatnonzero(np.abs(g - ref) > rel * terms)
    assert bad.size == 0, (bad[:5], g[bad[:5]], ref[bad[:5]], terms[bad[:5]])


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), kind=st.sampled_from(["rbf", "poly", "linear"]),
       shrinking=st.booleans(), n=st.integers(20, 300))
def test_sums_from_the_cached_columns_are_the_kernel_pass(seed, kind, shrinking, n) -> None:
    """``g = K (alpha o y)`` over the support vectors from the float64 cache's columns equals
    the dense Gram matrix's product and the kernel pass to ~1e-13 relative; with some columns
    made short or evicted they are computed afresh (same values); with too many missing the
    cache declines and ``kernel_sums`` falls back to the kernel pass."""
    run, X, y, kern = _solved(seed, kind, shrinking, n)
    alpha, cache, kd = run.st.alpha, run.cache, run.problem.kd
    sv = np.flatnonzero(alpha > 0)
    coef = alpha[sv] * y[sv]
    exact, terms = _exact(kern, X, sv, coef)
    if shrinking:  # columns cached while the layout was shrunk: complete them as the loop would
        for j in sv:
            kc.get_column(cache, kd, j)
    g = column_sums.cached_sums(cache, kd, sv, coef)
    assert g is not None  # every support vector's column is cached at full length
    _close(g, exact, terms)
    if sums.has_weighted_sums(kd):
        _close(g, sums.weighted_sums(kd, sv, coef), terms)
    np.testing.assert_array_equal(_kernel_sums(run, sv, coef), g)  # the solver takes them
    assert run.certify()[0] is not None
    # a short column (as left by a shrunk layout): completed in its slot by the column code;
    # an evicted one: computed by it into a scratch column, unless that is more than
    # MAX_FRESH_FRACTION of the entries; either way the same bits as the cached columns gave
    short, gone = cache.slot_of[sv[0]], cache.slot_of[sv[-1]]
    full_short = cache.data[short * n : short * n + n].copy()
    cache.len_of[short] = n // 2
    cache.data[short * n + n // 2 : short * n + n] = np.nan  # what the cache does not vouch for
    cache.slot_of[sv[-1]] = -1
    cache.owner[gone] = -1
    cache.data[gone * n : gone * n + n] = np.nan
    valid = {s: cache.data[s * n : s * n + cache.len_of[s]].copy()
             for s in range(int(cache.state[kc.S_SLOTS])) if cache.owner[s] >= 0}
    g2 = column_sums.cached_sums(cache, kd, sv, coef)
    for s, values in valid.items():  # what the cache vouches for is left as it was
        np.testing.assert_array_equal(cache.data[s * n : s * n + values.size], values)
    if n > column_sums.MAX_FRESH_FRACTION * n * sv.size:
        assert g2 is None
    else:
        np.testing.assert_array_equal(g2, g)
        assert cache.len_of[short] == n
        np.testing.assert_array_equal(cache.data[short * n : short * n + n], full_short)
        assert cache.slot_of[sv[-1]] == -1  # not cached again
    # nothing cached: declined, and the kernel pass serves kernel_sums
    cache.slot_of[sv] = -1
    assert column_sums.cached_sums(cache, kd, sv, coef) is None
    _close(_kernel_sums(run, sv, coef), exact, terms)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), kind=st.sampled_from(["rbf", "poly", "linear"]),
       shrinking=st.booleans())
def test_the_certificate_from_the_columns_is_the_one_without_them(seed, kind, shrinking):
    """The solver's certificate with its float64 cache equals the one it computes without a
    cache (the kernel pass), and its ``g`` matches: the sums' order only."""
    run, X, y, kern = _solved(seed, kind, shrinking, 150)
    g, cert = run.certify()
    run.last_certified, cache = None, run.cache
    run.cache = None
    g_pass, cert_pass = run.certify()
    assert g is not g_pass
    sv = np.flatnonzero(run.st.alpha > 0)
    _close(g, g_pass, _exact(kern, X, sv, run.st.alpha[sv] * y[sv])[1])
    assert cert.kkt_violation == pytest.approx(cert_pass.kkt_violation, rel=1e-9, abs=1e-11)
    assert cert.gap == pytest.approx(cert_pass.gap, rel=1e-9, abs=1e-11)
    assert cert.dual_objective == pytest.approx(cert_pass.dual_objective, rel=1e-12)
    run.cache = cache


def test_a_sum_that_is_not_finite_is_declined_and_the_kernel_pass_serves() -> None:
    """A cached column holding an infinity makes its sums not finite: ``cached_sums`` declines
    (None) and ``kernel_sums`` takes the kernel pass's finite values instead."""
    run, X, y, kern = _solved(5, "rbf", False, 60)
    sv = np.flatnonzero(run.st.alpha > 0)
    coef = run.st.alpha[sv] * y[sv]
    cache, kd = run.cache, run.problem.kd
    good = column_sums.cached_sums(cache, kd, sv, coef)
    assert good is not None and np.all(np.isfinite(good))
    s = cache.slot_of[sv[0]]
    cache.data[s * 60 + 7] = np.inf
    assert column_sums.cached_sums(cache, kd, sv, coef) is None
    g = _kernel_sums(run, sv, coef)
    assert np.all(np.isfinite(g))
    _close(g, *_exact(kern, X, sv, coef))


def test_a_float32_cache_or_a_shrunk_layout_serves_no_sums() -> None:
    run, X, y, kern = _solved(3, "rbf", True, 80)
    sv = np.flatnonzero(run.st.alpha > 0)
    coef = run.st.alpha[sv] * y[sv]
    kd = run.problem.kd
    assert column_sums.cached_sums(run.cache, kd, sv, coef) is not None
    assert column_sums.cached_sums(None, kd, sv, coef) is None
    assert column_sums.cached_sums(run.cache, kd, sv[:0], coef[:0]) is None
    run.cache.state[0] = 40  # the layout's length below n
    assert column_sums.cached_sums(run.cache, kd, sv, coef) is None
    run.cache.state[0] = 80
    single = run.cache._replace(data=run.cache.data.astype(np.float32))
    assert column_sums.cached_sums(single, kd, sv, coef) is None


def test_auto_runs_small_soft_margins_in_float64_from_the_start(monkeypatch) -> None:
    """``"auto"`` on an rbf/poly problem whose float64 ``Q`` fits ``DOUBLE_FIRST_BYTES`` and the
    budget is ``"double"`` bit for bit; a hard margin, the linear kernel, a kernel read from its
    Gram matrix, a larger problem or a smaller budget starts in float32 as before."""
    rng = np.random.default_rng(0)
    n = 200
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    for kind in ("rbf", "poly"):
        auto = smo(X, y, 1.0, kernel=kind)
        double = smo(X, y, 1.0, kernel=kind, precision="double")
        assert auto.status == "optimal" and "(float64 kernel cache)" in auto.message
        np.testing.assert_array_equal(auto.alpha, double.alpha)
        assert auto.b == double.b
    Xs = X / 4  # separable enough for a hard margin in few iterations
    ys = np.where(X[:, 0] > 0, 1.0, -1.0)
    float32_first = [
        smo(X, y, 1.0, kernel="rbf", cache_size=0.25),  # Q (0.31 MB) above the budget
        smo(X, y, 1.0, kernel="linear"),
        smo(X, y, 1.0, kernel=lambda a, b: a @ b.T),
        smo(Xs, ys, None, kernel="rbf", gamma=0.1),
    ]
    monkeypatch.setattr(precision, "DOUBLE_FIRST_BYTES", 8 * n * n - 1)
    float32_first.append(smo(X, y, 1.0, kernel="rbf"))
    for sol in float32_first:
        assert sol.message.split("(")[1].startswith("float32"), sol.message
        assert sol.status in ("optimal", "infeasible")
    monkeypatch.setattr(precision, "DOUBLE_FIRST_BYTES", 8 * n * n)
    assert "(float64 kernel cache)" in smo(X, y, 1.0, kernel="rbf").message


def test_small_problems_sum_by_the_kernel_object() -> None:
    """Below ``COMPILED_SUMS_MIN_TERMS`` terms the solver's sums are the kernel object's pass
    (bit for bit), which agrees with the cached columns' sums to summation error."""
    run, X, y, kern = _solved(7, "rbf", True, 120)
    sv = np.flatnonzero(run.st.alpha > 0)
    coef = run.st.alpha[sv] * y[sv]
    assert X.shape[0] * sv.size < column_sums.COMPILED_SUMS_MIN_TERMS
    g = run.kernel_sums(sv, coef)
    np.testing.assert_array_equal(g, decision_values(kern, X, X[sv], coef))
    exact, terms = _exact(kern, X, sv, coef)
    _close(g, exact, terms)
    _close(_kernel_sums(run, sv, coef), exact, terms)
