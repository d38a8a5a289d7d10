"""The oracles against each other, against the theorems and against LIBSVM on random/real data."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.svm import SVC

from maxmargin.datasets import load_heart_scale
from maxmargin.formulations import (
    hard_margin_primal,
    hinge_loss,
    hull_distance,
    soft_margin_primal,
    svm_dual,
)
from maxmargin.kernels import make_kernel
from maxmargin.verification.kkt import kkt_residuals

#: Oracle vs oracle (both at ground-truth accuracy).
TOL = 1e-7
#: Oracle vs LIBSVM run at tol=1e-8: objective (relative) and intercept (absolute).
LIBSVM_OBJ_RTOL = 1e-6
LIBSVM_B_ATOL = 1e-4


def _noisy(seed: int, n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ rng.normal(size=d) + 0.7 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _separable(seed: int, n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Random points pushed 0.5 away from a random hyperplane on their side: separable."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    y = np.where(X @ u > 0, 1.0, -1.0)
    return X + 0.5 * y[:, None] * u, y


def _rel(a, b) -> float:
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / max(1.0, np.linalg.norm(a)))


@pytest.mark.parametrize(("seed", "C"), [(0, 0.3), (1, 1.0), (2, 10.0)])
def test_primal_dual_hinge_agree(seed, C):
    X, y = _noisy(seed, 80, 4)
    sols = [
        soft_margin_primal(X, y, C).solve(),
        svm_dual(X, y, C).solve(),
        hinge_loss(X, y, C).solve(),
    ]
    ref = sols[0]
    assert all(s.status == "optimal" for s in sols)
    for s in sols:
        assert _rel(ref.primal_objective, s.primal_objective) < TOL
        assert _rel(ref.primal_objective, s.dual_objective) < TOL
        assert _rel(ref.w, s.w) < TOL
        assert abs(ref.b - s.b) < TOL * max(1.0, abs(ref.b))
        assert kkt_residuals(s, X, y).max < TOL


def test_primal_duals_equal_dual_alpha():
    # General position, few support vectors: alpha is unique, so the margin constraints' duals
    # of the primal and the dual QP's variable must coincide.
    X, y = _separable(3, 40, 2)
    hard_p = hard_margin_primal(X, y).solve()
    hard_d = svm_dual(X, y, None).solve()
    assert 2 <= hard_p.support().size <= 3
    np.testing.assert_array_equal(hard_p.support(), hard_d.support())
    np.testing.assert_allclose(hard_p.alpha, hard_d.alpha, atol=TOL * hard_p.alpha.max())
    X, y = _noisy(4, 60, 3)
    soft_p = soft_margin_primal(X, y, 0.5).solve()
    soft_d = svm_dual(X, y, 0.5).solve()
    soft_h = hinge_loss(X, y, 0.5).solve()
    np.testing.assert_allclose(soft_p.alpha, soft_d.alpha, atol=TOL * 0.5)
    np.testing.assert_allclose(soft_h.alpha, soft_d.alpha, atol=TOL * 0.5)


def test_hard_margin_equals_soft_margin_with_large_C():
    # With C above every hard-margin alpha the box never binds: identical problems.
    X, y = _separable(5, 50, 3)
    hard = hard_margin_primal(X, y).solve()
    C = 10.0 * hard.alpha.max()
    for soft in (soft_margin_primal(X, y, C).solve(), svm_dual(X, y, C).solve()):
        assert _rel(hard.w, soft.w) < TOL
        assert abs(hard.b - soft.b) < TOL
        assert _rel(hard.primal_objective, soft.primal_objective) < TOL
        np.testing.assert_allclose(hard.alpha, soft.alpha, atol=TOL * C)


@pytest.mark.parametrize("seed", [6, 7])
def test_hull_distance_is_twice_the_margin(seed):
    X, y = _separable(seed, 40, 3)
    svm = hard_margin_primal(X, y).solve()
    hulls = hull_distance(X[y > 0], X[y < 0]).solve()
    margin = 1.0 / np.linalg.norm(svm.w)
    assert hulls.distance == pytest.approx(2.0 * margin, rel=TOL)
    # The nearest points' difference is parallel to w and the bisector is the SVM boundary.
    z = hulls.p - hulls.q
    np.testing.assert_allclose(z / np.linalg.norm(z), svm.w / np.linalg.norm(svm.w), atol=1e-6)
    assert svm.decision_function(0.5 * (hulls.p + hulls.q))[0] == pytest.approx(0.0, abs=1e-6)
    assert abs(hulls.gap) < 1e-8


def _libsvm_dual_objective(model: SVC, kernel) -> float:
    """D(alpha) from SVC's dual_coef_ = alpha_i y_i on its support vectors."""
    c = model.dual_coef_[0]
    K = kernel(model.support_vectors_, model.support_vectors_)
    return float(np.abs(c).sum() - 0.5 * c @ K @ c)


@pytest.mark.parametrize(
    ("kernel", "params"),
    [("rbf", {"gamma": "scale"}), ("poly", {"gamma": 0.5, "degree": 3, "coef0": 1.0})],
)
def test_kernel_dual_matches_libsvm(kernel, params):
    X, y = _noisy(8, 80, 3)
    C = 2.0
    sol = svm_dual(X, y, C, kernel=kernel, **params).solve()
    model = SVC(kernel=kernel, C=C, tol=1e-8, **params).fit(X, y)
    kern = make_kernel(kernel, X=X, **params)
    assert sol.status == "optimal"
    assert sol.dual_objective == pytest.approx(
        _libsvm_dual_objective(model, kern), rel=LIBSVM_OBJ_RTOL
    )
    assert sol.b == pytest.approx(model.intercept_[0], abs=LIBSVM_B_ATOL)
    np.testing.assert_allclose(
        sol.decision_function(X), model.decision_function(X), atol=LIBSVM_B_ATOL
    )
    assert kkt_residuals(sol, X, y).max < TOL


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_heart_scale_matches_libsvm(kernel):
    X, y = load_heart_scale()
    sol = svm_dual(X, y, 1.0, kernel=kernel).solve()
    model = SVC(kernel=kernel, C=1.0, tol=1e-8).fit(X, y)
    libsvm = _libsvm_dual_objective(model, make_kernel(kernel, X=X))
    assert sol.status == "optimal"
    assert sol.dual_objective == pytest.approx(libsvm, rel=LIBSVM_OBJ_RTOL)
    assert sol.primal_objective == pytest.approx(libsvm, rel=LIBSVM_OBJ_RTOL)
    assert sol.b == pytest.approx(model.intercept_[0], abs=LIBSVM_B_ATOL)
    assert kkt_residuals(sol, X, y).max < TOL
    if kernel == "linear":
        np.testing.assert_allclose(sol.w, model.coef_[0], atol=LIBSVM_B_ATOL)
        primal = soft_margin_primal(X, y, 1.0).solve()
        assert primal.primal_objective == pytest.approx(sol.dual_objective, rel=TOL)


def test_vectorised_primal_at_moderate_size():
    X, y = _noisy(9, 3000, 10)
    sol = soft_margin_primal(X, y, 1.0).solve()
    assert sol.status == "optimal"
    assert kkt_residuals(sol, X, y).max < 1e-6
    assert _rel(sol.primal_objective, sol.dual_objective) < 1e-7


def test_poly_kernel_with_negative_coef0_is_rejected():
    X, y = _noisy(10, 30, 2)
    with pytest.raises(ValueError, match="`kernel` must give a positive semi-definite"):
        svm_dual(X, y, 1.0, kernel="poly", gamma=1.0, degree=3, coef0=-2.0)


@st.composite
def _problems(draw):
    seed = draw(st.integers(0, 2**31 - 1))
    n = draw(st.integers(6, 24))
    d = draw(st.integers(1, 3))
    C = draw(st.sampled_from([0.1, 1.0, 10.0]))
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)), 2)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    return X, y, C


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_problems())
def test_property_primal_and_dual_agree_and_satisfy_kkt(problem):
    X, y, C = problem
    primal = soft_margin_primal(X, y, C).solve()
    dual = svm_dual(X, y, C).solve()
    assert primal.status == dual.status == "optimal"
    assert _rel(primal.primal_objective, dual.dual_objective) < TOL
    assert _rel(primal.w, dual.w) < 1e-6
    for sol in (primal, dual):
        assert kkt_residuals(sol, X, y).max < TOL


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_problems())
def test_property_rbf_dual_satisfies_kkt(problem):
    X, y, C = problem
    sol = svm_dual(X, y, C, kernel="rbf", gamma=0.7).solve()
    assert sol.status == "optimal"
    assert kkt_residuals(sol, X, y).max < TOL
    assert _rel(sol.primal_objective, sol.dual_objective) < TOL


@pytest.mark.parametrize(("kernel", "params"), [("rbf", {"gamma": 0.6}), ("linear", {})])
def test_factor_and_gram_models_agree(kernel, params):
    X, y = _noisy(11, 40, 3)
    factor = svm_dual(X, y, 1.5, kernel=kernel, model="factor", **params)
    gram = svm_dual(X, y, 1.5, kernel=kernel, model="gram", **params)
    assert "QuadForm" in str(gram.problem.objective)
    assert "QuadForm" not in str(factor.problem.objective)
    a, b = factor.solve(), gram.solve()
    assert _rel(a.dual_objective, b.dual_objective) < TOL
    np.testing.assert_allclose(a.alpha, b.alpha, atol=TOL)
    assert abs(a.b - b.b) < TOL


def test_auto_model_uses_the_factor_when_its_rank_is_low():
    X, y = _noisy(12, 40, 3)
    assert "QuadForm" not in str(svm_dual(X, y, 1.0).problem.objective)  # rank 3
    low = svm_dual(X, y, 1.0, kernel="poly", degree=2, gamma=1.0, coef0=1.0)  # rank 10
    assert "QuadForm" not in str(low.problem.objective)
    assert "QuadForm" in str(svm_dual(X, y, 1.0, kernel="rbf").problem.objective)


def test_raw_solver_alphas_agree_without_polish():
    # The hinge form's alpha comes from the optimality conditions (bounded least squares on the
    # margin set); the primal's from the constraint duals. Unpolished, both match the dual QP.
    X, y = _noisy(13, 60, 3)
    reference = svm_dual(X, y, 0.5).solve()
    for make in (hinge_loss, soft_margin_primal):
        form = make(X, y, 0.5)
        form.polish = False
        raw = form.solve()
        np.testing.assert_allclose(raw.alpha, reference.alpha, atol=1e-6 * 0.5)
        assert _rel(raw.w, reference.w) < 1e-7
        assert kkt_residuals(raw, X, y).max < 1e-6
