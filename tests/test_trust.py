"""Trust at the edges: badly scaled, degenerate and non-separable data, from every entry point.

Every "optimal" answer here is checked against an independent one: a second oracle form, the
hand-derived fact that identical points with opposite labels cannot be separated, weak duality
between two answers, or LIBSVM (scikit-learn's SVC) on the raw breast-cancer data.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maxmargin.algorithms import gilbert_svm, smo
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.formulations import hard_margin_primal, hinge_loss, soft_margin_primal, svm_dual
from maxmargin.verification.cases import catalogue


def _weakly_dual(a, b) -> None:
    """D_a <= P_b and D_b <= P_a (each dual value bounds every primal value)."""
    ca, cb = a.certificate, b.certificate
    slack = 1e-10 * max(1.0, abs(ca.primal_objective), float(a.alpha.sum()), float(b.alpha.sum()))
    assert ca.dual_objective <= cb.primal_objective + slack
    assert cb.dual_objective <= ca.primal_objective + slack


@pytest.fixture(scope="module")
def raw_breast_cancer():
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    return X, 2.0 * y - 1.0


def test_raw_breast_cancer_smo_is_right_by_default(raw_breast_cancer):
    # The report: default smo returned 48.133 "optimal" (true 48.876). Now the float64
    # certificate drives a float64 continuation and the answer agrees with the oracle.
    X, y = raw_breast_cancer
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # no warning: it is certified
        sol = smo(X, y)
    oracle = svm_dual(X, y, C=1.0).solve()
    assert oracle.status == "optimal" and sol.status == "optimal"
    assert sol.certificate.kkt_violation < 1e-3
    assert "float64" in sol.message
    # tol 1e-3 in y f units: the objective agrees within the candidate's own gap
    assert abs(sol.dual_objective - oracle.dual_objective) <= sol.certificate.gap * max(
        1.0, abs(sol.certificate.primal_objective)) + 1e-9
    assert sol.dual_objective == pytest.approx(48.876, abs=2e-3)
    _weakly_dual(sol, oracle)


def test_float32_refinement_certifies_with_the_warm_cache():
    # Two overlapping Gaussian clouds (Bayes error 10%), RBF, C = 100: the float32 floor
    # estimate stops the float32 phase, but the measured error of its gradient is far below
    # tol, so SMO refines in float32 from the exact float64 gradient (warm cache) instead of
    # starting a float64 cache, and the float64 certificate confirms the answer. It agrees with
    # the float64-only run (a different arithmetic) to the certified gap.
    n = 2000
    rng = np.random.default_rng(n)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    rng.shuffle(y)
    X = rng.standard_normal((n, 2))
    X[:, 0] += y * 1.2815515655446004  # centres +-Phi^-1(0.9): Bayes error 10%
    kw = {"kernel": "rbf", "gamma": 1.0 / (2 * X.var()), "C": 100.0}
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = smo(X, y, **kw)
        ref = smo(X, y, precision="double", **kw)
    assert sol.status == "optimal" and sol.certificate.meets(1e-3)
    assert "float32 then float32 refinement kernel cache" in sol.message
    assert "of float32" in sol.message  # no float64 cache was needed
    assert ref.status == "optimal" and "of float64" in ref.message
    scale = max(1.0, abs(ref.dual_objective))
    assert abs(sol.dual_objective - ref.dual_objective) <= (
        sol.certificate.gap + ref.certificate.gap) * scale
    assert sol.dual_objective <= ref.certificate.primal_objective  # weak duality, both ways
    assert ref.dual_objective <= sol.certificate.primal_objective


def test_raw_breast_cancer_against_libsvm(raw_breast_cancer):
    # LIBSVM (SVC, float32 kernel cache like ours) has the same floor here: its answer, checked
    # by the certificate, violates KKT by far more than its tol, and its dual value is below
    # the oracle's (both are feasible, so the larger dual value is the better answer).
    from sklearn.svm import SVC

    X, y = raw_breast_cancer
    oracle = svm_dual(X, y, C=1.0).solve()
    svc = SVC(kernel="linear", C=1.0, tol=1e-8).fit(X, y)
    alpha = np.zeros(len(y))
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    from maxmargin.certificate import certify_svm
    from maxmargin.kernels import LinearKernel

    peer = certify_svm(alpha, X, y, 1.0, LinearKernel())
    assert peer.feasibility < 1e-9 and peer.kkt_violation > 0.1
    assert oracle.certificate.meets(1e-6, 1e-7)
    assert oracle.dual_objective > peer.dual_objective + 0.5
    assert peer.dual_objective <= oracle.certificate.primal_objective  # weak duality


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize(("n", "d", "scale", "C"), [(5, 34, 3e4, 58.0), (24, 43, 3e4, 4.55)])
def test_unscaled_wide_data_every_oracle_form_is_certified(n, d, scale, C, seed):
    # The failing shapes (|X| ~ 3e4, n < d): Clarabel used to fail or return alpha far
    # from the optimum labelled optimal. Every form is now certified and they agree.
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * scale
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sols = [f(X, y, C).solve() for f in (svm_dual, soft_margin_primal, hinge_loss)]
    for sol in sols:
        assert sol.status == "optimal", sol.message
        assert np.isfinite(sol.b) and np.all(np.isfinite(sol.alpha))
        assert sol.certificate.meets(1e-6, 1e-7)
    for other in sols[1:]:
        _weakly_dual(sols[0], other)
    fast = smo(X, y, C=C)
    assert fast.status == "optimal" and fast.certificate.kkt_violation < 1e-3
    _weakly_dual(fast, sols[0])


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
def test_identical_points_with_opposite_labels_are_infeasible_everywhere(kernel):
    # Hand fact: x and x with labels +1 and -1 lie in both hulls, in any feature space.
    rng = np.random.default_rng(4)
    X = rng.normal(size=(12, 3)) * 1e3
    y = np.where(np.arange(12) % 2 == 0, 1.0, -1.0)
    X = np.vstack([X, X[:1]])
    y = np.append(y, -y[0])
    params = {} if kernel == "linear" else {"gamma": 1e-6}
    answers = [
        svm_dual(X, y, None, kernel=kernel, **params).solve(),
        smo(X, y, C=None, kernel=kernel, **params),
        gilbert_svm(X, y, method="mdm", kernel=kernel, **params),
        gilbert_svm(X, y, method="gilbert", kernel=kernel, **params),
    ]
    if kernel == "linear":
        answers.append(hard_margin_primal(X, y).solve())
    for sol in answers:
        assert sol.status == "infeasible", (sol.method, sol.message)


def test_collinear_rbf_hard_margin_is_certified_not_unbounded():
    # The case: an unbounded "optimal" D = -2.7e23. Distinct points are separable in
    # the RBF feature space; every method now agrees on a certified optimum.
    case = next(c for c in catalogue("quick") if c.name == "collinear_rbf_hard")
    kernel = case.make_kernel()
    oracle = svm_dual(case.X, case.y, None, kernel=kernel).solve()
    assert oracle.status == "optimal" and oracle.certificate.meets(1e-6, 1e-7)
    for sol in (smo(case.X, case.y, C=None, kernel=kernel),
                gilbert_svm(case.X, case.y, method="mdm", kernel=kernel)):
        assert sol.status == "optimal"
        _weakly_dual(sol, oracle)


def test_smo_default_iteration_cap_is_reached_and_said():
    # Badly conditioned non-separable data (C max K ~ 1e9): SMO cannot reach tol within its cap;
    # it returns "max_iter" with a warning instead of running on (a small cap keeps it quick).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 10)) * 3e3
    y = np.where(rng.random(120) < 0.5, 1.0, -1.0)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        sol = smo(X, y, C=1.0, max_iter=20_000, finish=False)
    assert sol.status == "max_iter"
    assert not sol.certificate.meets(1e-3)
    # the exact finish (the default) takes over at the cap and certifies the same problem,
    # with the oracle's objective
    done = smo(X, y, C=1.0, max_iter=20_000)
    assert done.status == "optimal" and done.certificate.meets(1e-3)
    ref = svm_dual(X, y, 1.0).solve()
    assert done.dual_objective == pytest.approx(ref.dual_objective, rel=1e-7)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 25), st.integers(1, 6), st.integers(0, 2**31 - 1),
       st.sampled_from([1e-4, 1.0, 1e4]), st.sampled_from([None, 1e-3, 1.0, 1e3]))
def test_optimal_is_always_certified_and_finite(n, d, seed, scale, C):
    # Property: whatever the data, an answer labelled "optimal" has finite fields and meets its
    # own certificate; anything else carries its honest status.
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)) * 2) * scale  # integer-valued: duplicates happen
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[0], y[-1] = 1.0, -1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sols = [svm_dual(X, y, C).solve(), smo(X, y, C=C, max_iter=200_000)]
    for sol in sols:
        if sol.status == "optimal":
            assert math.isfinite(sol.b) and math.isfinite(sol.dual_objective)
            assert np.all(np.isfinite(sol.alpha))
            tol = 1e-6 if sol.method.startswith("cvxpy") else 1e-3
            assert sol.certificate.meets(tol)
    if all(s.status == "optimal" for s in sols):
        _weakly_dual(sols[0], sols[1])
    if C is None and sols[0].status == "infeasible":
        assert sols[1].status != "optimal"  # SMO never finds a separator that does not exist


@pytest.mark.parametrize("entry", ["smo", "svm_dual", "gilbert_svm", "soft_margin_primal"])
def test_overflowing_magnitudes_are_rejected_up_front(entry):
    # 1e200 squared overflows float64: rejected before any work, with a message naming `X`.
    X = np.array([[1e200, 0.0], [0.0, 1.0], [1.0, 1.0]])
    y = np.array([1.0, -1.0, -1.0])
    call = {
        "smo": lambda: smo(X, y),
        "svm_dual": lambda: svm_dual(X, y, 1.0),
        "gilbert_svm": lambda: gilbert_svm(X, y),
        "soft_margin_primal": lambda: soft_margin_primal(X, y, 1.0),
    }[entry]
    with pytest.raises(ValueError, match=r"`X` has entries up to 1e\+200 in magnitude"):
        call()
