"""The CVXPY oracles on the hand-derived fixtures, their statuses, and the Formulation object."""

from __future__ import annotations

import math
import warnings
from types import SimpleNamespace

import cvxpy as cp
import numpy as np
import pytest
from fixtures import (
    ALL_BOUND,
    HULL_CROSSING,
    HULL_PAIR,
    POLYTOPE_SEGMENT,
    POLYTOPE_TRIANGLE,
    SVM_EXAMPLES,
    XOR_X,
    XOR_Y,
)
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from maxmargin.algorithms.active_set import polish_alpha
from maxmargin.certificate import certify_svm
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.formulations import (
    Formulation,
    hard_margin_primal,
    hinge_loss,
    hull_distance,
    polytope_distance,
    soft_margin_primal,
    svm_dual,
)
from maxmargin.formulations._common import (
    clean_alpha,
    run_solver,
    solver_options,
)
from maxmargin.formulations._polish import EIG_CUTOFFS, active_set_polish, balance
from maxmargin.kernels import make_kernel
from maxmargin.results import HullPairSolution, PolytopeSolution, SVMSolution
from maxmargin.tolerances import ORACLE_GAP, ORACLE_KKT
from maxmargin.verification.kkt import kkt_residuals

#: Ground-truth accuracy asked of the oracles on the hand-derived answers.
TOL = 1e-7
SOLVERS = ("CLARABEL", "OSQP")


def _svm_forms(ex):
    """Every oracle that applies to a fixture: (name, formulation)."""
    forms = []
    if ex.kernel == "linear" and ex.C is None:
        forms.append(("hard_margin_primal", hard_margin_primal(ex.X, ex.y)))
    if ex.kernel == "linear" and ex.C is not None:
        forms.append(("soft_margin_primal", soft_margin_primal(ex.X, ex.y, ex.C)))
        forms.append(("hinge_loss", hinge_loss(ex.X, ex.y, ex.C)))
    forms.append(("svm_dual", svm_dual(ex.X, ex.y, ex.C, kernel=ex.kernel, **ex.kernel_params)))
    return forms


FIXTURE_CASES = [
    pytest.param(ex, name, form, id=f"{ex.name}-{name}")
    for ex in SVM_EXAMPLES
    for name, form in _svm_forms(ex)
]


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize(("ex", "name", "form"), FIXTURE_CASES)
def test_svm_fixture(ex, name, form, solver):
    sol = form.solve(solver)
    assert isinstance(sol, SVMSolution)
    assert sol.status == "optimal", sol.message
    assert sol.method == f"cvxpy/{name}/{solver}"
    assert sol.C == ex.C
    np.testing.assert_allclose(sol.alpha, ex.alpha, atol=TOL)
    if ex.w is not None:
        np.testing.assert_allclose(sol.w, ex.w, atol=TOL)
    else:
        assert sol.w is None
    if ex.b is not None:
        assert sol.b == pytest.approx(ex.b, abs=TOL)
        assert sol.b_interval == pytest.approx((ex.b, ex.b), abs=TOL)
    else:
        assert sol.b_interval == pytest.approx(ex.b_interval, abs=TOL)
        assert sol.b == pytest.approx(0.5 * sum(ex.b_interval), abs=TOL)
    assert sol.primal_objective == pytest.approx(ex.objective, abs=TOL)
    assert sol.dual_objective == pytest.approx(ex.objective, abs=TOL)
    np.testing.assert_array_equal(sol.support(), np.flatnonzero(ex.alpha))
    np.testing.assert_array_equal(sol.predict(ex.X), ex.y)
    assert kkt_residuals(sol, ex.X, ex.y).max < TOL
    assert sol.runtime > 0 and sol.iterations > 0


def test_xor_poly_decision_function_is_x1_x2():
    """The hand derivation gives f(x) = x1 x2 for the (1 + x.z)^2 kernel on XOR."""
    ex = SVM_EXAMPLES[3]
    sol = svm_dual(ex.X, ex.y, None, kernel="poly", **ex.kernel_params).solve()
    Z = np.random.default_rng(0).uniform(-2, 2, size=(20, 2))
    np.testing.assert_allclose(sol.decision_function(Z), Z[:, 0] * Z[:, 1], atol=1e-7)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("make", [hard_margin_primal, lambda X, y: svm_dual(X, y, None)],
                         ids=["primal", "dual"])
def test_non_separable_hard_margin_is_infeasible(make, solver):
    sol = make(XOR_X, XOR_Y).solve(solver)
    assert sol.status == "infeasible"
    assert sol.message
    assert np.all(np.isnan(sol.alpha)) and np.all(np.isnan(sol.w)) and math.isnan(sol.b)
    assert sol.primal_objective == sol.dual_objective == math.inf
    assert math.isnan(kkt_residuals(sol, XOR_X, XOR_Y).max)
    with pytest.raises(ValueError, match="infeasible"):
        sol.predict(XOR_X)


def test_hard_margin_infeasibility_is_certified_by_the_hulls_meeting():
    # XOR: (0, 0) is the midpoint of both diagonals, so the hulls meet (hand fact); the
    # oracles say so from the feasibility LP, before any QP, from the primal and the dual.
    for form in (svm_dual(XOR_X, XOR_Y, None), hard_margin_primal(XOR_X, XOR_Y)):
        sol = form.solve()
        assert sol.status == "infeasible"
        assert "convex hulls" in sol.message and "not separable at this resolution" in sol.message
        assert sol.method.endswith("/HIGHS")
        # the evidence, recomputed in float64 from the LP's convex weights: distance 0
        assert sol.certificate.infeasible and sol.certificate.hull_distance <= 1e-12


def test_non_separable_soft_margin_is_fine():
    sol = svm_dual(XOR_X, XOR_Y, C=1.0).solve()
    assert sol.status == "optimal"
    # Linear XOR: w = 0 at the optimum and every alpha at C = 1 (each point has y f = 0 < 1).
    np.testing.assert_allclose(sol.w, 0.0, atol=TOL)
    np.testing.assert_allclose(sol.alpha, 1.0, atol=TOL)
    assert sol.dual_objective == pytest.approx(4.0, abs=TOL)


# --- polytopes and hulls ------------------------------------------------------------------------


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("case", [POLYTOPE_SEGMENT, POLYTOPE_TRIANGLE], ids=["segment", "triangle"])
def test_polytope_fixture(case, solver):
    sol = polytope_distance(case["Q"]).solve(solver)
    assert isinstance(sol, PolytopeSolution)
    assert sol.status == "optimal"
    assert sol.method == f"cvxpy/polytope_distance/{solver}"
    np.testing.assert_allclose(sol.weights, case["weights"], atol=TOL)
    np.testing.assert_allclose(sol.point, case["point"], atol=TOL)
    assert sol.distance == pytest.approx(case["distance"], abs=TOL)
    assert abs(sol.gap) < TOL


@pytest.mark.parametrize("solver", SOLVERS)
def test_hull_pair_fixture(solver):
    sol = hull_distance(HULL_PAIR["P"], HULL_PAIR["Q"]).solve(solver)
    assert isinstance(sol, HullPairSolution)
    assert sol.status == "optimal"
    for key in ("p", "q", "weights_p", "weights_q"):
        np.testing.assert_allclose(getattr(sol, key), HULL_PAIR[key], atol=TOL)
    assert sol.distance == pytest.approx(3.0, abs=TOL)
    assert abs(sol.gap) < TOL


@pytest.mark.parametrize("solver", SOLVERS)
def test_crossing_hulls_distance_is_exactly_zero(solver):
    sol = hull_distance(HULL_CROSSING["P"], HULL_CROSSING["Q"]).solve(solver)
    assert sol.status == "optimal"
    assert sol.distance == 0.0
    np.testing.assert_allclose(sol.p, sol.q, atol=1e-12)
    np.testing.assert_allclose(sol.p, [0.0, 0.0], atol=1e-12)


def test_origin_inside_polytope_distance_is_exactly_zero():
    # The origin is a non-trivial convex combination of the vertices of this triangle.
    Q = np.array([[1.0, 0.3], [-0.7, 1.1], [-0.4, -1.2]])
    sol = polytope_distance(Q).solve()
    assert sol.status == "optimal" and sol.distance == 0.0 and sol.gap == 0.0
    assert sol.weights.sum() == pytest.approx(1.0) and np.all(sol.weights >= 0)
    np.testing.assert_allclose(Q.T @ sol.weights, 0.0, atol=1e-12)


def test_nearly_touching_hulls_are_not_called_zero():
    # Distance 1e-6 between the segments: under ZERO_RTOL, but the LP certificate is infeasible.
    P = np.array([[0.0, -1.0], [0.0, 1.0]])
    Q = np.array([[1e-6, -1.0], [1e-6, 1.0]])
    sol = hull_distance(P, Q).solve()
    assert sol.status == "optimal"
    assert sol.distance == pytest.approx(1e-6, rel=1e-3)


def test_polytope_vertex_nearest():
    # Nearest point is the vertex (1, 1): every other point has a larger x1 + x2.
    Q = np.array([[1.0, 1.0], [3.0, 1.0], [1.0, 4.0]])
    sol = polytope_distance(Q).solve()
    np.testing.assert_allclose(sol.weights, [1.0, 0.0, 0.0], atol=TOL)
    assert sol.distance == pytest.approx(math.sqrt(2.0), abs=TOL)


# --- statuses -----------------------------------------------------------------------------------


@pytest.mark.parametrize("solver", SOLVERS)
def test_iteration_cap_gives_max_iter_and_warns(solver):
    ex = SVM_EXAMPLES[1]
    form = svm_dual(ex.X, ex.y, None)
    form.polish = False  # the active-set polish could certify even a 1-iteration answer
    with pytest.warns(ConvergenceWarning, match="iteration"):
        sol = form.solve(solver, max_iter=1)
    assert sol.status == "max_iter"
    assert "user_limit" in sol.message


def test_solver_exception_is_recorded_not_raised():
    ex = SVM_EXAMPLES[1]
    sol = hard_margin_primal(ex.X, ex.y).solve("CLARABEL", no_such_option=1)
    assert sol.status == "solver_error"
    assert "no_such_option" in sol.message
    assert np.all(np.isnan(sol.alpha)) and math.isnan(sol.b)


def test_solver_crash_is_recorded(monkeypatch):
    form = polytope_distance(POLYTOPE_SEGMENT["Q"])

    def crash(*args, **kwargs):
        raise cp.SolverError("simulated crash")

    monkeypatch.setattr(form.problem, "solve", crash)
    sol = form.solve()
    assert sol.status == "solver_error"
    assert "SolverError: simulated crash" in sol.message
    assert math.isnan(sol.distance)


class _FakeProblem:
    """Stands for a cvxpy.Problem whose solve ends in a given CVXPY status."""

    def __init__(self, status: str) -> None:
        self._final = status
        self.status = None
        self.solver_stats = None

    def solve(self, **kwargs):
        self.status = self._final
        self.solver_stats = SimpleNamespace(num_iters=7, extra_stats=None)


@pytest.mark.parametrize(
    ("cvxpy_status", "status"),
    [
        ("optimal", "optimal"),
        ("optimal_inaccurate", "inaccurate"),
        ("infeasible", "infeasible"),
        ("infeasible_inaccurate", "infeasible"),
        ("unbounded", "infeasible"),
        ("unbounded_inaccurate", "infeasible"),
        ("infeasible_or_unbounded", "infeasible"),
        ("user_limit", "max_iter"),
        ("solver_error", "solver_error"),
    ],
)
def test_status_mapping(cvxpy_status, status):
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        outcome = run_solver(_FakeProblem(cvxpy_status), "CLARABEL", {}, "test")
    assert outcome.status == status
    assert outcome.iterations == 7
    assert outcome.has_values == (status in ("optimal", "inaccurate", "max_iter"))
    assert (outcome.message == "") == (status == "optimal")


def test_uncertified_answer_keeps_its_values_and_an_honest_status():
    ex = SVM_EXAMPLES[1]
    form = svm_dual(ex.X, ex.y, None)
    form.polish = False
    with pytest.warns(ConvergenceWarning, match="no attempt was certified"):
        sol = form.solve("CLARABEL", max_iter=3)
    assert sol.status in ("inaccurate", "max_iter")
    assert np.all(np.isfinite(sol.alpha)) and math.isfinite(sol.b)
    assert sol.certificate is not None and not sol.certificate.meets(1e-6, 1e-7)
    assert "attempts:" in sol.message


def test_solver_claims_are_overruled_by_the_certificate(monkeypatch):
    # The solver says "optimal_inaccurate", but the polished answer meets the certificate:
    # the certificate decides, in both directions.
    ex = SVM_EXAMPLES[1]
    original = cp.Problem.solve

    def solve_then_mark_inaccurate(self, *args, **kwargs):
        value = original(self, *args, **kwargs)
        self._status = "optimal_inaccurate"
        return value

    monkeypatch.setattr(cp.Problem, "solve", solve_then_mark_inaccurate)
    sol = svm_dual(ex.X, ex.y, None).solve()
    assert sol.status == "optimal"
    assert sol.certificate.meets(1e-6, 1e-7)
    np.testing.assert_allclose(sol.alpha, ex.alpha, atol=TOL)


# --- the Formulation object ---------------------------------------------------------------------


def test_formulation_exposes_problem_and_variables():
    ex = SVM_EXAMPLES[1]
    form = soft_margin_primal(ex.X, ex.y, 1.0)
    assert isinstance(form, Formulation)
    assert isinstance(form.problem, cp.Problem)
    assert set(form.variables) == {"w", "b", "xi"}
    assert form.variables["w"].shape == (2,)
    assert set(svm_dual(ex.X, ex.y, None).variables) == {"alpha"}
    assert set(hinge_loss(ex.X, ex.y, 1.0).variables) == {"w", "b"}
    assert set(hull_distance(ex.X[:2], ex.X[2:]).variables) == {"lam", "mu"}
    assert set(polytope_distance(ex.X).variables) == {"lam"}
    assert "soft_margin_primal" in repr(form)


def test_with_constraints_adds_a_constraint():
    # Li Hang's data with b = 0 forced: x1 needs 3 (w1 + w2) >= 1 and x3 needs w1 + w2 <= -1,
    # so the constrained problem is infeasible.
    ex = SVM_EXAMPLES[1]
    form = hard_margin_primal(ex.X, ex.y)
    sol = form.with_constraints(form.variables["b"] == 0).solve()
    assert sol.status == "infeasible"
    # The original is untouched.
    assert form.solve().status == "optimal"


def test_with_constraints_changes_the_optimum():
    # TWO_POINTS with the extra constraint w_2 == 1: w = (1, 1), b = -1 (hand: the margin
    # constraints 2 w1 + b >= 1, -b >= 1 give w1 >= 1, and 1/2 (w1^2 + 1) is least at w1 = 1).
    ex = SVM_EXAMPLES[0]
    form = hard_margin_primal(ex.X, ex.y)
    sol = form.with_constraints(form.variables["w"][1] == 1).solve()
    assert sol.status == "optimal"
    np.testing.assert_allclose(sol.w, [1.0, 1.0], atol=TOL)
    assert sol.primal_objective == pytest.approx(1.0, abs=TOL)


def test_solver_options_defaults_and_override():
    clarabel = solver_options("CLARABEL", {})
    assert clarabel["tol_gap_abs"] <= 1e-10 and clarabel["tol_feas"] <= 1e-10
    osqp = solver_options("OSQP", {"eps_abs": 1e-6, "polish": False})
    assert osqp["eps_abs"] == 1e-6 and osqp["eps_rel"] <= 1e-9 and osqp["max_iter"] >= 100_000
    polish_keys = [k for k in osqp if k.startswith("polish")]
    assert polish_keys and all(osqp[k] is False for k in polish_keys)
    assert solver_options("HIGHS", {"a": 1}) == {"a": 1}


def test_user_options_reach_the_solver():
    # Loose OSQP without any polishing stops visibly early; the tight default does not.
    ex = SVM_EXAMPLES[1]
    form = svm_dual(ex.X, ex.y, None)
    form.polish = False
    loose = form.solve("osqp", eps_abs=1e-2, eps_rel=1e-2, polish=False)
    tight = form.solve("osqp")
    assert loose.iterations < tight.iterations  # OSQP stopped earlier on the loose tolerances
    assert abs(loose.b - ex.b) > 1e-9
    assert abs(tight.b - ex.b) < TOL
    capped = form.solve("osqp", max_iter=3)  # the cap reaches the solver: its attempt says so
    assert "max_iter" in capped.message


def test_active_set_polish_reaches_round_off():
    # Raw interior-point answer vs the same answer polished on its active set (hand-checked
    # fixture, so "better" is measured against the exact optimum).
    ex = SVM_EXAMPLES[1]
    for make in (hard_margin_primal, lambda X, y: svm_dual(X, y, None)):
        form = make(ex.X, ex.y)
        form.polish = False
        raw = form.solve()
        form.polish = True
        polished = form.solve()
        assert not form.with_constraints().polish  # extra constraints change the KKT system
        err_raw = np.max(np.abs(raw.alpha - ex.alpha)) + abs(raw.b - ex.b)
        err_polished = np.max(np.abs(polished.alpha - ex.alpha)) + abs(polished.b - ex.b)
        assert err_polished <= err_raw
        assert err_polished < 1e-12
        assert kkt_residuals(polished, ex.X, ex.y).max < 1e-12


def test_another_installed_solver_can_be_named():
    ex = SVM_EXAMPLES[1]
    sol = svm_dual(ex.X, ex.y, None).solve("SCS")
    assert sol.method == "cvxpy/svm_dual/SCS"
    assert sol.status in ("optimal", "inaccurate")
    assert sol.dual_objective == pytest.approx(ex.objective, abs=1e-5)


def test_clean_alpha_snaps_by_complementarity():
    # alpha_0 just below C on a margin error, alpha_1 free on the margin, alpha_2 tiny off it.
    alpha = np.array([1.0 - 1e-8, 0.4, 2e-9, 1.0 + 1e-12, -1e-12])
    margins = np.array([-3e-3, 1e-11, 0.5, -0.2, 0.8])
    np.testing.assert_array_equal(clean_alpha(alpha, 1.0, margins), [1.0, 0.4, 0.0, 1.0, 0.0])
    # Without margins only the SNAP_RTOL snap applies.
    np.testing.assert_array_equal(
        clean_alpha(np.array([1e-12, 0.5, 1 - 1e-12]), 1.0), [0.0, 0.5, 1.0]
    )
    np.testing.assert_array_equal(clean_alpha(np.array([3.0, 1e-10]), None), [3.0, 0.0])


def test_inputs_are_not_modified_and_are_copied():
    ex = SVM_EXAMPLES[1]
    X, y = ex.X.copy(), ex.y.copy()
    form = svm_dual(X, y, 1.0, kernel="rbf", gamma=0.5)
    X[0, 0] = 100.0  # changing the caller's array after the build must not matter
    sol = form.solve()
    np.testing.assert_array_equal(sol.X_train, ex.X)
    X, y = ex.X.copy(), ex.y.copy()
    for make in (hard_margin_primal, lambda a, b: soft_margin_primal(a, b, 1.0)):
        make(X, y).solve()
    P, Q = HULL_PAIR["P"].copy(), HULL_PAIR["Q"].copy()
    hull_distance(P, Q).solve()
    polytope_distance(Q).solve()
    np.testing.assert_array_equal(X, ex.X)
    np.testing.assert_array_equal(y, ex.y)
    np.testing.assert_array_equal(P, HULL_PAIR["P"])
    np.testing.assert_array_equal(Q, HULL_PAIR["Q"])


def test_all_bound_b_interval_through_every_form():
    ex = ALL_BOUND
    for form in (soft_margin_primal(ex.X, ex.y, ex.C), hinge_loss(ex.X, ex.y, ex.C)):
        sol = form.solve()
        assert sol.b_interval == pytest.approx((-0.8, 0.8), abs=TOL)
        assert sol.b == pytest.approx(0.0, abs=TOL)


def _low_rank_problem(seed: int, kernel: str, C: float | None):
    """``(X, y, kernel, K)``: 2-39 points in 1-3 dimensions of any scale, collinear half the
    time (Gram rank <= 4); for the hard margin (``C=None``) the positive class is shifted away
    (separable)."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(2, 40)), int(rng.integers(1, 4))
    X = rng.normal(size=(n, d)) * 10.0 ** rng.uniform(-3, 3)
    if rng.random() < 0.5:  # collinear points
        X = np.outer(rng.normal(size=n), rng.normal(size=d))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0
    kern = make_kernel(kernel, gamma="scale", degree=3, coef0=1.0, X=X)
    if C is None:
        X, y = np.vstack([X[y > 0] + 5 * np.abs(X).max(), X[y < 0]]), np.append(
            y[y > 0], y[y < 0])
    return X, y, kern, kern.gram(X)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**31 - 1), st.sampled_from(["linear", "poly"]),
       st.sampled_from([None, 0.01, 1.0, 100.0]))
# a zero-curvature step left y . alpha 9e-9 off; restored only after the last Newton step, it
# moved a free alpha and left m - M = 4.6e-8 (now restored before the refinement steps)
@example(1115196669, "linear", 1.0)
@example(25277, "linear", 0.01)  # the restoring must not move a weight off its bound
def test_polish_finishes_low_rank_problems_from_any_feasible_start(seed, kernel, C):
    # The polish is a primal active-set method: from alpha = 0 (no active set known at all) it
    # must reach the optimum on Gram matrices of rank <= 4 (collinear points, 1-3 features),
    # where most subproblems are singular. Judged by the float64 certificate and by Clarabel.
    X, y, kern, K = _low_rank_problem(seed, kernel, C)
    ref = svm_dual(X, y, C, kern).solve()
    assume(ref.status == "optimal")
    # the linear kernel also through X (K_FF = X_F X_F^T, products X (X_F^T v)), as SMO's finish
    for linear_X in [None] + ([X] if kernel == "linear" else []):
        polished = polish_alpha(np.zeros(len(y)), y, C, lambda idx: K[idx], linear_X=linear_X)
        assert polished is not None
        cert = certify_svm(polished, X, y, C, kern)
        # two orders inside the oracle's bar, or the round-off of the margins sum_j K_ij a_j y_j
        roundoff = 1e-14 * float(np.max(np.abs(K) @ polished))
        assert cert.meets(max(1e-2 * ORACLE_KKT, roundoff), max(1e-2 * ORACLE_GAP, roundoff)), (
            cert.summary())
        D = float(polished.sum() - 0.5 * (polished * y) @ K @ (polished * y))
        assert D == pytest.approx(ref.dual_objective, rel=ORACLE_GAP, abs=1e-12)  # its own bar


def test_polish_stops_on_an_unbounded_hard_margin():
    # Opposite labels on one point: the hard-margin dual is unbounded along alpha_0 = alpha_1.
    X = np.array([[0.0, 1.0], [0.0, 1.0], [2.0, 0.0]])
    y = np.array([1.0, -1.0, 1.0])
    assert polish_alpha(np.zeros(3), y, None, lambda idx: (X @ X.T)[idx]) is None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**31 - 1), st.sampled_from(["linear", "poly", "rbf"]),
       st.sampled_from([None, 0.01, 1.0, 100.0]))
def test_oracle_polish_solves_low_rank_problems_from_alpha_zero(seed, kernel, C):
    # The oracles' own active-set polish (formulations/_polish.py), from alpha = 0 (no active
    # set known): it must reach the optimum on Gram matrices of rank <= 4 (collinear points,
    # 1-3 features), where most faces are singular, through K and (linear) through X.
    # Judged by the float64 certificate and by Clarabel's dual objective.
    X, y, kern, K = _low_rank_problem(seed, kernel, C)
    ref = svm_dual(X, y, C, kern).solve()
    assume(ref.status == "optimal")
    n = len(y)
    upper = np.full(n, np.inf if C is None else C)
    for source in [{"K": K}] + ([{"X": X}] if kernel == "linear" else []):
        polished = None
        for cutoff in EIG_CUTOFFS:
            polished = active_set_polish(np.zeros(n) if polished is None else polished, y,
                                         upper, kkt_tol=1e-9, cutoff=cutoff, **source)
            assert polished is not None
            cert = certify_svm(polished, X, y, C, kern)
            roundoff = 1e-14 * float(np.max(np.abs(K) @ polished))
            if cert.meets(max(1e-2 * ORACLE_KKT, roundoff), max(1e-2 * ORACLE_GAP, roundoff)):
                break
        assert cert.meets(max(1e-2 * ORACLE_KKT, roundoff), max(1e-2 * ORACLE_GAP, roundoff)), (
            cert.summary())
        D = float(polished.sum() - 0.5 * (polished * y) @ K @ (polished * y))
        assert D == pytest.approx(ref.dual_objective, rel=ORACLE_GAP, abs=1e-12)


def test_oracle_polish_stops_on_an_unbounded_hard_margin():
    X = np.array([[0.0, 1.0], [0.0, 1.0], [2.0, 0.0]])
    y = np.array([1.0, -1.0, 1.0])
    upper = np.full(3, np.inf)
    assert active_set_polish(np.zeros(3), y, upper, K=X @ X.T, kkt_tol=1e-9) is None
    assert active_set_polish(np.zeros(3), y, upper, X=X, kkt_tol=1e-9) is None


def test_polish_keeps_a_certified_stationary_point_when_steps_run_out():
    # random_s2_i3998: an RBF Gram matrix of numerical rank ~8 (360 duplicated 2-D points,
    # gamma |x|^2 ~ 1e-2, C = 1000). The exact active set is not found in 3,000 steps (the
    # method wanders among numerically flat directions); with kkt_tol the last stationary point
    # whose multipliers were within it is returned, and its float64 certificate shows m - M
    # <= 2 kkt_tol, and the dual objective agrees with Clarabel's.
    from maxmargin.verification.campaign import random_case

    case = random_case(2, 3998)
    kern = case.make_kernel()
    K = kern.gram(case.X)
    start = np.zeros(len(case.y))
    rows = lambda idx: K[idx]  # noqa: E731
    assert polish_alpha(start, case.y, case.C, rows, max_iter=3000) is None
    polished = polish_alpha(start, case.y, case.C, rows, max_iter=3000, kkt_tol=1e-7)
    assert polished is not None
    cert = certify_svm(polished, case.X, case.y, case.C, kern)
    assert cert.meets(2e-7), cert.summary()
    ref = svm_dual(case.X, case.y, case.C, kern).solve()
    assert cert.dual_objective == pytest.approx(ref.dual_objective, rel=1e-8)


def _certified_dual_oracle(seed: int, index: int):
    """The conditioned campaign's case, its kernel and the dual oracle's answer, asserted
    "optimal" and meeting the oracle's tolerances by a fresh float64 certificate."""
    from maxmargin.verification.campaign import conditioned_case

    case = conditioned_case(seed, index)
    kern = case.make_kernel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sol = svm_dual(case.X, case.y, case.C, kern).solve()
    assert sol.status == "optimal", sol.message
    cert = certify_svm(sol.alpha, case.X, case.y, case.C, kern)
    assert cert.meets(ORACLE_KKT, ORACLE_GAP), cert.summary()
    return case, kern, sol


def test_oracle_certifies_a_near_singular_free_set_with_the_finer_cutoff():
    # conditioned_s32_i722: RBF on 241 points in one dimension, gamma 3e-6, C = 4.7e6, so the
    # Gram matrix has 10 eigenvalues above 1e-12 of the largest and the free set's Q_FF is
    # singular to that cutoff while C carries its smaller eigenvalues into the answer. The
    # polish at POLISH_EIG_RTOL cycles (its Newton steps never settle) and returns None; at
    # POLISH_EIG_RTOL_FINE it ends with m - M ~ 1e-9, so the oracle is certified, as PIQP on
    # the plain dual (an outside solver) is, and it agrees with smo's objective. smo at tol
    # 1e-6 needs the same second try in its exact finish (without it: 10,000,000 iterations,
    # "max_iter", m - M = 4.7e-4).
    from maxmargin.algorithms.active_set import POLISH_EIG_RTOL_FINE
    from maxmargin.algorithms.smo import smo

    case, kern, ref = _certified_dual_oracle(32, 722)
    K = kern.gram(case.X)
    rows = lambda idx: K[idx]  # noqa: E731
    assert polish_alpha(ref.alpha, case.y, case.C, rows, max_iter=500) is None
    again = polish_alpha(ref.alpha, case.y, case.C, rows, eig_rtol=POLISH_EIG_RTOL_FINE)
    assert again is not None
    assert certify_svm(again, case.X, case.y, case.C, kern).meets(ORACLE_KKT, ORACLE_GAP)
    other = smo(case.X, case.y, C=case.C, kernel=kern, tol=1e-6)
    assert other.status == "optimal"
    assert other.dual_objective == pytest.approx(ref.dual_objective, rel=1e-7)


@pytest.mark.parametrize("scale", [1e-12, 1e-6, 1.0, 1e6])
def test_balance_alpha_is_relative_to_the_alphas_scale(scale):
    # y . alpha = 0 is restored relative to sum(alpha) at every scale: with an absolute floor,
    # alphas ~1e-11 (C = 2e-11, conditioned_s34_i423) kept |y . alpha| / sum(alpha) = 1.3e-7
    # and the linear primal oracle ended "inaccurate" with m - M = 2e-16.
    from maxmargin.algorithms.active_set import balance_alpha

    rng = np.random.default_rng(3)
    y = np.where(rng.random(60) < 0.5, -1.0, 1.0)
    alpha = rng.uniform(0.1, 0.9, 60) * scale
    alpha[y > 0] *= 1.0 + 1e-7  # an interior-point answer's y . alpha of 1e-7 relative
    for out in (balance_alpha(alpha, y, scale), balance(alpha, y, np.full(60, scale))):
        assert abs(float(y @ out)) <= 1e-14 * float(out.sum())
        assert np.all((out >= 0) & (out <= scale))
    # the oracles' balance moves the free alphas only, each by the same |y . alpha| / 55 (the
    # Euclidean projection onto y . a = 0 when no bound is met)
    alpha[:5] = 0.0
    out = balance(alpha, y, np.full(60, scale))
    assert np.all(out[:5] == 0.0)
    np.testing.assert_allclose(np.abs(out - alpha)[5:], abs(float(y @ alpha)) / 55, rtol=1e-6)


def test_the_primal_oracle_certifies_tiny_alphas():
    from maxmargin.verification.campaign import conditioned_case

    case = conditioned_case(34, 423)  # linear, C = 2e-11, features ~1.7e7 with spread 260
    sol = soft_margin_primal(case.X, case.y, case.C).solve()
    assert sol.status == "optimal", sol.message


def test_the_dual_oracle_certifies_a_degenerate_optimum_on_a_low_rank_gram_matrix():
    # conditioned_s34_i226: RBF on 59 points in one dimension, gamma 28.8, C = 1.0e6, Gram
    # numerical rank 7: the optimum is degenerate (29 free alphas in the solver's answer) and
    # the polish never reaches an exact active set; it keeps its last stationary point within
    # ORACLE_KKT / 4 (was "inaccurate", m - M 3.6e-3, where PIQP on the plain dual certifies).
    _certified_dual_oracle(34, 226)


def test_the_polish_refines_a_step_small_beside_alpha_but_not_beside_the_gradient():
    # conditioned_s44_i273: degree-2 polynomial on 262 points in one dimension (Gram rank 3),
    # C = 1.35e5, 256 free alphas. The polish's Newton step there is ~1e-8, below 1e-12 of
    # alpha's scale, yet it moves the free gradient by ~1e-6: taken as stationary, the answer
    # had m - M = 1.04e-6 > ORACLE_KKT ("inaccurate" where PIQP on the plain dual certifies).
    # Refined while the step moves the gradient: certified.
    import numpy as np

    from maxmargin.algorithms.active_set import polish_alpha

    case, kern, sol = _certified_dual_oracle(44, 273)
    K = kern.gram(case.X)
    y = np.asarray(case.y, dtype=np.float64)
    # from a point a step short of stationary, the polish must land within the tolerance
    rough = sol.alpha.copy()
    free = np.flatnonzero((rough > 0) & (rough < case.C))
    rough[free[:2]] += np.array([1e-8, -1e-8]) * y[free[:2]] * y[free[0]]
    polished = polish_alpha(rough, y, case.C, lambda idx: K[idx], kkt_tol=0.25 * ORACLE_KKT)
    assert polished is not None
    cert = certify_svm(polished, case.X, y, case.C, kern)
    assert cert.kkt_violation <= ORACLE_KKT, cert.summary()


def test_the_finer_cutoff_polishes_the_first_tries_answer_when_it_was_kept(monkeypatch):
    """The oracle's polish tries the finer eigenvalue cutoff from its best alpha so far: when
    the first try's answer improved the certificate but stayed uncertified, the second try
    starts from it, not from the solver's alpha."""
    import maxmargin.formulations._common as common

    rng = np.random.default_rng(0)
    n = 40
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=n) > 0, 1.0, -1.0)
    K = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))
    alpha = np.abs(rng.normal(size=n)) * 0.1
    real, calls = common.active_set_polish, []

    def first_try_off_a_little(a, yy, upper, **kw):
        out = real(a, yy, upper, **kw)
        if out is not None and kw["cutoff"] == EIG_CUTOFFS[0]:
            out = out.copy()  # better than the start, above ORACLE_KKT: kept, not certified
            out[out > 0] *= 1.0 + 1e-3
        calls.append((a.copy(), None if out is None else out.copy()))
        return out

    monkeypatch.setattr(common, "active_set_polish", first_try_off_a_little)
    kern = make_kernel("rbf", gamma=0.5)
    common._solved_point(alpha, X, y, 1.0, K, None, None, True, None, kern)
    assert len(calls) == 2 and calls[0][1] is not None
    np.testing.assert_array_equal(calls[1][0], calls[0][1])
