"""The float64 certificate: hand-derived values, brute force over b, and weak duality."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fixtures import ALL_BOUND, LI_HANG, SVM_EXAMPLES, TWO_POINTS
from hypothesis import given, settings
from hypothesis import strategies as st

import maxmargin.certificate as certificate_module
from maxmargin.certificate import (
    certify_hulls,
    certify_svm,
    decision_values,
    minimise_hinge_over_b,
    objective_roundoff,
)
from maxmargin.kernels import LinearKernel, PolyKernel, RBFKernel, make_kernel


@pytest.mark.parametrize("ex", SVM_EXAMPLES, ids=lambda e: e.name)
def test_hand_optima_certify_exactly(ex):
    # At the hand-derived optimum: no KKT violation, P* = D = the objective, zero gap.
    if ex.alpha is None:
        pytest.skip("alpha not unique")
    kernel = make_kernel(ex.kernel, **ex.kernel_params)
    cert = certify_svm(ex.alpha, ex.X, ex.y, ex.C, kernel)
    assert cert.kkt_violation == pytest.approx(0.0, abs=1e-12)
    assert cert.dual_objective == pytest.approx(ex.objective, abs=1e-12)
    assert cert.primal_objective == pytest.approx(ex.objective, abs=1e-12)
    assert abs(cert.gap) <= 1e-12
    assert cert.meets(1e-9, 1e-9)


def test_two_points_hard_margin_values():
    # alpha = (1/2, 1/2): g = (2, 0) (g_i = sum_j a_j y_j x_j . x_i), mu = (2 - 0) / 2 = 1,
    # b = -(2 + 0) / 2 = -1 (hand: w = (1, 0), b = -1).
    cert = certify_svm(TWO_POINTS.alpha, TWO_POINTS.X, TWO_POINTS.y, None, LinearKernel())
    assert cert.margin == pytest.approx(1.0)
    assert cert.b == pytest.approx(-1.0)
    # Twice the optimal alpha: w doubles, mu = 2, P* = ||2w||^2 / (2 * 4) = 1/2 still, while
    # D = 2 - 1/2 * 4 = 0: the gap is (1/2 - 0) / |P| = 1 (relative to P itself).
    cert2 = certify_svm(2 * TWO_POINTS.alpha, TWO_POINTS.X, TWO_POINTS.y, None, LinearKernel())
    assert cert2.primal_objective == pytest.approx(0.5)
    assert cert2.dual_objective == pytest.approx(0.0)
    assert cert2.gap == pytest.approx(1.0)
    assert not cert2.meets(1e-3, 1e-3)


def test_all_bound_b_interval_is_minimised_over():
    # alpha = C = 0.1 on x = +-1: w = 0.2, every b in [-0.8, 0.8] gives hinge 0.8 + 0.8 = 1.6
    # (hand), so P* = 0.02 + 0.1 * 1.6 = 0.18 = D.
    cert = certify_svm(ALL_BOUND.alpha, ALL_BOUND.X, ALL_BOUND.y, ALL_BOUND.C, LinearKernel())
    assert cert.primal_objective == pytest.approx(0.18)
    assert -0.8 - 1e-12 <= cert.b <= 0.8 + 1e-12


def test_a_non_separating_w_has_no_primal_point():
    # alpha puts all weight on one pair the wrong way round: mu <= 0, P* = inf.
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([1.0, -1.0, 1.0, -1.0])
    cert = certify_svm(np.array([1.0, 1.0, 0.0, 0.0]), X, y, None, LinearKernel())
    assert math.isinf(cert.primal_objective) and math.isinf(cert.gap)
    assert not cert.meets(1.0, 1.0)


def test_non_finite_alpha_certifies_nothing():
    cert = certify_svm(np.array([np.nan, 1.0, 1.0]), LI_HANG.X, LI_HANG.y, None, LinearKernel())
    assert math.isnan(cert.gap) and not cert.meets(1e9, 1e9)


def _hinge(b, r, y, c):
    return float(np.sum(c * np.where(y > 0, np.maximum(0.0, r - b), np.maximum(0.0, b - r))))


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 40), st.integers(0, 2**31 - 1))
def test_hinge_minimiser_matches_brute_force(n, seed):
    # Brute force: h is piecewise linear with kinks at r, so its minimum over a fine grid that
    # contains every kink is the exact minimum.
    rng = np.random.default_rng(seed)
    r = rng.normal(size=n) * rng.choice([1e-3, 1.0, 1e3])
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    c = rng.uniform(0.1, 2.0, size=n) if seed % 2 else np.ones(n)
    b = minimise_hinge_over_b(r, y, c)
    grid = np.concatenate([r, np.linspace(r.min() - 1, r.max() + 1, 401)])
    best = min(_hinge(t, r, y, c) for t in grid)
    assert _hinge(b, r, y, c) <= best * (1 + 1e-12) + 1e-12


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 120),
       spread=st.sampled_from([1e-4, 1.0]), size=st.sampled_from([1.0, 1e4, 1e8]))
def test_objective_roundoff_bounds_the_float64_error_of_the_objectives(seed, n, spread, size):
    """``objective_roundoff`` bounds how far ``D = sum alpha - v^T K v / 2`` and ``P = v^T K v
    / 2 + sum C max(0, 1 - y (K v + b))`` computed in float64 (NumPy's products, as the
    certificate's) are from the same formulas in extended precision, for the same kernel
    values: near-constant kernels (cancelling terms) and alphas up to 1e8 included."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2)) * spread
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    K = np.exp(-np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=2))
    C = size * rng.uniform(0.5, 2.0)
    alpha = np.where(rng.random(n) < 0.3, 0.0, rng.uniform(0.0, C, n))
    b = float(rng.normal()) * (1.0 + spread)
    v = alpha * y
    g = K @ v
    D = float(alpha.sum()) - 0.5 * float(v @ g)
    P = 0.5 * float(v @ g) + float(np.full(n, C) @ np.maximum(0.0, 1.0 - y * (g + b)))
    L = np.longdouble
    vL = alpha.astype(L) * y.astype(L)
    gL = K.astype(L) @ vL
    D_exact = alpha.astype(L).sum() - L(0.5) * (vL @ gL)
    P_exact = L(0.5) * (vL @ gL) + (L(C) * np.maximum(L(0), L(1) - y.astype(L) * (gL + L(b)))).sum()
    bound = objective_roundoff(alpha, C, float(np.max(np.diag(K))), b)
    assert abs(L(D) - D_exact) <= bound and abs(L(P) - P_exact) <= bound
    assert objective_roundoff(np.array([np.nan, 1.0]), 1.0, 1.0, 0.0) == 0.0  # no allowance


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 30), st.integers(1, 5), st.integers(0, 2**31 - 1), st.booleans())
def test_weak_duality_for_every_feasible_alpha(n, d, seed, hard):
    # Theorem (weak duality): D(alpha) <= P(w, b) for every feasible alpha and every primal
    # point, so the certificate's gap is never negative beyond round-off.
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.choice([1e-2, 1.0, 1e2])
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    C = None if hard else float(rng.uniform(0.01, 10.0))
    a = rng.uniform(0.0, 1.0 if hard else C, size=n)
    a[y > 0] *= a[y < 0].sum() / a[y > 0].sum()  # y . alpha = 0
    if not hard and a.max() > C:
        a *= C / a.max()
    kernel = RBFKernel(gamma=0.5) if seed % 2 else LinearKernel()
    cert = certify_svm(a, X, y, C, kernel)
    assert cert.feasibility <= 1e-12
    scale = max(1.0, abs(cert.primal_objective)) if math.isfinite(cert.primal_objective) else 1
    assert cert.primal_objective >= cert.dual_objective - 1e-9 * max(scale, a.sum())


def test_blocked_decision_values_match_one_product(monkeypatch):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(257, 4))
    coef = rng.normal(size=31)
    kernel = RBFKernel(gamma=0.3)
    full = kernel(X, X[:31]) @ coef
    monkeypatch.setattr(certificate_module, "BLOCK_BYTES", 8 * 31 * 10)  # 10 rows a block
    # the same sums in another blocking: equal up to round-off of terms of order |coef|
    np.testing.assert_allclose(decision_values(kernel, X, X[:31], coef), full, rtol=1e-14,
                               atol=1e-14 * float(np.abs(coef).sum()))


def _rbf_sums_long_double(X, Xs, coef, gamma):
    """``sum_j coef_j exp(-gamma ||x_i - xs_j||^2)`` from differences, in extended precision."""
    A, B = X.astype(np.longdouble), Xs.astype(np.longdouble)
    d2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=2)
    return (np.exp(-np.longdouble(gamma) * d2) @ coef.astype(np.longdouble)).astype(float)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 60), st.integers(1, 40), st.integers(1, 12), st.integers(0, 2**31),
       st.sampled_from([1e-3, 0.1, 1.0, 30.0, 1e6]), st.sampled_from([1e-3, 1.0, 1e3]))
def test_rbf_decision_values_match_extended_precision(n, m, d, seed, gamma, scale):
    """The compiled RBF sum (one BLAS product, then distances, cancellation fix, exponential
    and sum in one pass) against a brute force in long double, with exact and near duplicates
    of the support vectors among the rows (the cancellation branch) and an offset far from the
    origin."""
    rng = np.random.default_rng(seed)
    Xs = scale * rng.normal(size=(m, d)) + 1e3 * scale
    X = scale * rng.normal(size=(n, d)) + 1e3 * scale
    X[: min(n, m) // 2] = Xs[: min(n, m) // 2]
    X[min(n, m) // 2 : min(n, m)] = Xs[min(n, m) // 2 : min(n, m)] * (1 + 1e-12)
    coef = rng.normal(size=m)
    gamma = gamma / (d * scale**2)
    got = decision_values(RBFKernel(gamma=gamma), X, Xs, coef)
    ref = _rbf_sums_long_double(X, Xs, coef, gamma)
    # each kernel value is off by a few ulps of the squared distance's rounding (relative to
    # the norms, 1e3 scale away from the origin before centring): bound by |coef| sums
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 * float(np.abs(coef).sum()))


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 60), st.integers(1, 40), st.integers(1, 12), st.integers(0, 2**31),
       st.integers(1, 5), st.sampled_from([0.0, 1.0, -0.5]), st.sampled_from([1e-2, 1.0, 10.0]))
def test_poly_decision_values_match_extended_precision(n, m, d, seed, degree, coef0, scale):
    """The compiled polynomial sum (one BLAS product, then base, power and sum in one pass)
    against a brute force in long double."""
    rng = np.random.default_rng(seed)
    Xs, X = scale * rng.normal(size=(m, d)), scale * rng.normal(size=(n, d))
    coef = rng.normal(size=m)
    gamma = 1.0 / (d * scale**2)
    got = decision_values(PolyKernel(gamma=gamma, degree=degree, coef0=coef0), X, Xs, coef)
    A, B = X.astype(np.longdouble), Xs.astype(np.longdouble)
    values = (np.longdouble(gamma) * (A @ B.T) + np.longdouble(coef0)) ** degree
    ref = (values @ coef.astype(np.longdouble)).astype(float)
    # each value is off by a few ulps of its base's rounding, relative to |gamma x.z| + |coef0|
    size = (gamma * np.abs(X) @ np.abs(Xs).T + abs(coef0)) ** degree
    assert np.all(np.abs(got - ref) <= 1e-14 * degree * (size @ np.abs(coef)))


def test_poly_decision_values_report_overflow():
    X = np.array([[1e80, 0.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match="non-finite|finite"):
        decision_values(PolyKernel(gamma=1.0, degree=3), X, X, np.array([1.0, -1.0]))


def test_exp_nonpositive_is_float64_accurate():
    from maxmargin.kernels.formulas import exp_scaled_inplace

    x = np.concatenate([-np.geomspace(1e-12, 700, 20001), [0.0, -0.5 * math.log(2)]])
    values = -x.copy()
    exp_scaled_inplace(values, np.empty(x.size, dtype=np.int64), 1.0)
    ref = np.array([math.exp(v) for v in x])
    assert np.max(np.abs(values - ref) / ref) <= 4 * np.finfo(float).eps


def test_hull_certificate_of_the_hand_segment():
    # Segment from (1, 0) to (0, 1): the nearest point to the origin is (1/2, 1/2) (hand), with
    # weights (1/2, 1/2); <z, q_i> = 1/2 = ||z||^2 for both, so gap 0; distance 1/sqrt(2).
    Q = np.array([[1.0, 0.0], [0.0, 1.0]])
    cert = certify_hulls(Q, np.zeros((0, 2)), np.array([0.5, 0.5]), np.zeros(0))
    assert cert.gap == pytest.approx(0.0, abs=1e-15)
    assert cert.distance == pytest.approx(1 / math.sqrt(2))
    assert cert.meets(1e-12)
    # the vertex (1, 0) alone: <z, q_2> = 0, gap (1 - 0) / 1 = 1
    off = certify_hulls(Q, np.zeros((0, 2)), np.array([1.0, 0.0]), np.zeros(0))
    assert off.gap == pytest.approx(1.0) and not off.meets(1e-3)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.integers(1, 4), st.integers(0, 2**31))
def test_opposite_duplicates_match_brute_force(n, d, seed):
    """Identical rows with opposite labels, against all pairs compared as floats (-0.0 == 0.0),
    on small integer data where duplicates are common."""
    from maxmargin.certificate import opposite_duplicates

    rng = np.random.default_rng(seed)
    X = rng.integers(-1, 2, size=(n, d)).astype(float)
    X[rng.random((n, d)) < 0.2] = -0.0
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    pairs = {(i, j) for i in range(n) for j in range(n)
             if y[i] > 0 > y[j] and np.array_equal(X[i], X[j])}
    got = opposite_duplicates(X, y)
    if not pairs:
        assert got is None
    else:
        assert got is not None and y[got[0]] > 0 > y[got[1]]
        assert np.array_equal(X[got[0]], X[got[1]])
