"""KKT residuals against hand computations (exact optima give 0, perturbed ones known values)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fixtures import ALL_BOUND, LI_HANG, SVM_EXAMPLES, TWO_POINTS

from maxmargin.formulations import svm_dual
from maxmargin.kernels import make_kernel
from maxmargin.results import SVMSolution
from maxmargin.verification.kkt import KKTResiduals, kkt_residuals


def _solution(ex, *, alpha=None, w=None, b=None, kernel=None, linear_w=True) -> SVMSolution:
    """An SVMSolution built by hand from a fixture (no solver involved)."""
    alpha = ex.alpha if alpha is None else np.asarray(alpha, dtype=float)
    if kernel is None:
        kernel = make_kernel(ex.kernel, **ex.kernel_params)
    if w is None and linear_w and ex.w is not None:
        w = ex.w
    b = (ex.b if ex.b is not None else 0.0) if b is None else b
    return SVMSolution(
        alpha=alpha, b=b, w=w, dual_objective=math.nan, primal_objective=math.nan,
        status="optimal", iterations=0, method="hand", X_train=ex.X, y_train=ex.y,
        kernel=kernel, C=ex.C,
    )


@pytest.mark.parametrize("ex", SVM_EXAMPLES, ids=[ex.name for ex in SVM_EXAMPLES])
def test_exact_optima_have_zero_residuals(ex):
    r = kkt_residuals(_solution(ex), ex.X, ex.y)
    assert isinstance(r, KKTResiduals)
    for name in KKTResiduals.RESIDUALS:
        assert getattr(r, name) == pytest.approx(0.0, abs=1e-14), name
    assert r.max == pytest.approx(0.0, abs=1e-14)


def test_wrong_intercept():
    # Li Hang, b = -1.9: y f = (1.1, 1.6, 0.9). x3 violates its margin by 0.1 and the support
    # vector x1 sits 0.1 outside it with alpha_1 = 1/4: complementary slackness 0.025, 0.1 in
    # units of max alpha = 1/4.
    r = kkt_residuals(_solution(LI_HANG, b=-1.9), LI_HANG.X, LI_HANG.y)
    assert r.primal_feasibility == pytest.approx(0.1)
    assert r.complementary_zero == pytest.approx(0.1)
    assert r.max_violation == pytest.approx(0.0, abs=1e-14)  # b-independent
    assert r.duality_gap == pytest.approx(0.0, abs=1e-14)
    assert r.max == pytest.approx(0.1)


def test_wrong_alpha_with_right_w():
    # alpha = (1/4, 0, 0.3): y.alpha = -0.05, relative to ||alpha||_1 = 0.55: 1/11;
    # X^T(alpha y) = (0.45, 0.45), so ||w - X^T(alpha y)|| = 0.05 sqrt(2), relative to
    # ||w|| = sqrt(2) / 2: 0.1; P = 1/4, D = 0.55 - 0.2025 = 0.3475, |P - D| / P = 0.39.
    r = kkt_residuals(_solution(LI_HANG, alpha=[0.25, 0.0, 0.3]), LI_HANG.X, LI_HANG.y)
    assert r.dual_equality == pytest.approx(0.05 / 0.55)
    assert r.stationarity == pytest.approx(0.1)
    assert r.duality_gap == pytest.approx(0.39)
    assert r.primal_feasibility == pytest.approx(0.0, abs=1e-14)
    assert r.max == pytest.approx(0.39)


def test_alpha_above_C():
    # ALL_BOUND with alpha = (0.12, 0.12) > C = 0.1, w = 0.24, b = 0: box 0.02 / C = 0.2;
    # y f = 0.24, xi = 0.76, |C - alpha| xi / C = 0.152; P = 0.0288 + 0.1 * 1.52 = 0.1808,
    # D = 0.24 - 0.0288 = 0.2112, |P - D| / P = 0.0304 / 0.1808; LIBSVM's sets: I_up = {2},
    # I_low = {1}, r = (0.76, -0.76), m - M = -1.52 -> 0.
    sol = _solution(ALL_BOUND, alpha=[0.12, 0.12], w=np.array([0.24]), b=0.0)
    r = kkt_residuals(sol, ALL_BOUND.X, ALL_BOUND.y)
    assert r.alpha_scale == pytest.approx(0.1)
    assert r.dual_box == pytest.approx(0.2)
    assert r.complementary_upper == pytest.approx(0.152)
    assert r.duality_gap == pytest.approx(0.0304 / 0.1808)
    assert r.primal_feasibility == 0.0  # soft margin: the slacks absorb the violation
    assert r.hinge_total == pytest.approx(1.52)
    assert r.max_violation == 0.0
    assert r.max == pytest.approx(0.2)


def test_libsvm_maximal_violation():
    # Two points, alpha = (0.4, 0.4) (w from alpha: (0.8, 0)), b = -1. g = (1.6, 0),
    # r = y - g = (-0.6, -1); I_up = {1, 2}: m = -0.6; I_low = {1, 2}: M = -1; m - M = 0.4.
    # y f = (0.6, 1): margin violation 0.4. P = 0.32, D = 0.8 - 0.32 = 0.48, gap 0.16 / 0.32.
    sol = _solution(TWO_POINTS, alpha=[0.4, 0.4], b=-1.0, linear_w=False)
    r = kkt_residuals(sol, TWO_POINTS.X, TWO_POINTS.y)
    assert r.max_violation == pytest.approx(0.4)
    assert r.primal_feasibility == pytest.approx(0.4)
    assert r.duality_gap == pytest.approx(0.5)
    assert r.stationarity == 0.0
    assert r.max == pytest.approx(0.5)


def test_kernel_solution_stationarity_is_zero_and_gap_uses_the_kernel():
    xor = SVM_EXAMPLES[3]
    r = kkt_residuals(_solution(xor, alpha=np.full(4, 0.1)), xor.X, xor.y)
    # alpha = 0.1 everywhere: v^T K v = 0.01 * 32 = 0.32; f = 0.8 x1 x2, y f = 0.8 < 1.
    assert r.stationarity == 0.0
    assert r.primal_feasibility == pytest.approx(0.2)
    assert r.duality_gap == pytest.approx(abs(0.16 - (0.4 - 0.16)) / 0.16)


def test_nan_solution_gives_nan_residuals():
    sol = svm_dual(LI_HANG.X, LI_HANG.y, None).solve()
    bad = _solution(LI_HANG, alpha=np.full(3, np.nan), b=math.nan, w=np.full(2, np.nan))
    assert math.isnan(kkt_residuals(bad, LI_HANG.X, LI_HANG.y).max)
    assert kkt_residuals(sol, LI_HANG.X, LI_HANG.y).max < 1e-12


def test_inputs_not_modified():
    X, y = LI_HANG.X.copy(), LI_HANG.y.copy()
    kkt_residuals(_solution(LI_HANG), X, y)
    np.testing.assert_array_equal(X, LI_HANG.X)
    np.testing.assert_array_equal(y, LI_HANG.y)


@pytest.mark.parametrize(
    ("solution", "X", "y", "match"),
    [
        ("not a solution", LI_HANG.X, LI_HANG.y, r"`solution` must be an SVMSolution; got str"),
        (
            _solution(LI_HANG),
            LI_HANG.X[:2],
            LI_HANG.y[:2] * np.array([1.0, -1.0]),
            r"`solution` does not match `X`: `solution.alpha` has shape \(3,\) but `X` has 2",
        ),
        (
            _solution(LI_HANG),
            np.hstack([LI_HANG.X, LI_HANG.X]),
            LI_HANG.y,
            r"`solution` does not match `X`: `solution.w` has shape \(2,\) but `X` has 4",
        ),
        (_solution(LI_HANG), np.full((3, 2), np.nan), LI_HANG.y, r"`X` must be finite"),
        (_solution(LI_HANG), LI_HANG.X, [1.0, 2.0, -1.0], r"`y` must contain only the labels"),
    ],
    ids=["type", "alpha_length", "w_length", "X_nan", "y_labels"],
)
def test_validation(solution, X, y, match):
    with pytest.raises(ValueError, match=match):
        kkt_residuals(solution, X, y)
