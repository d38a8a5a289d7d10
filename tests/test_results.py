"""maxmargin.results: frozen read-only results, their predictions, and recover_intercept."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from fixtures import ALL_BOUND, HULL_PAIR, LI_HANG, POLYTOPE_TRIANGLE, XOR_POLY

from maxmargin.kernels import LinearKernel, PolyKernel
from maxmargin.results import (
    PERCEPTRON_STATUSES,
    SVM_STATUSES,
    HullPairSolution,
    PerceptronResult,
    PolytopeSolution,
    SVMSolution,
    recover_intercept,
)


def li_hang_solution(**overrides) -> SVMSolution:
    """The hand-derived Li Hang 7.1 optimum as an SVMSolution."""
    fields = {
        "alpha": LI_HANG.alpha,
        "b": LI_HANG.b,
        "w": LI_HANG.w,
        "dual_objective": LI_HANG.objective,
        "primal_objective": LI_HANG.objective,
        "status": "optimal",
        "iterations": 3,
        "method": "by-hand",
        "history": {"gap": [1.0, 0.5, 0.0]},
        "X_train": LI_HANG.X,
        "y_train": LI_HANG.y,
    }
    fields.update(overrides)
    return SVMSolution(**fields)


def xor_solution() -> SVMSolution:
    """The hand-derived XOR optimum with (1 + x.z)^2: f(x) = x1 x2 (no w)."""
    return SVMSolution(
        alpha=XOR_POLY.alpha,
        b=XOR_POLY.b,
        w=None,
        dual_objective=0.25,
        primal_objective=0.25,
        status="optimal",
        iterations=1,
        method="by-hand",
        X_train=XOR_POLY.X,
        y_train=XOR_POLY.y,
        kernel=PolyKernel(**XOR_POLY.kernel_params),
    )


# --- SVMSolution -------------------------------------------------------------------------------


def test_svm_solution_predictions_linear():
    sol = li_hang_solution()
    X_new = np.array([[3.0, 3.0], [4.0, 3.0], [1.0, 1.0], [2.0, 2.0], [0.0, 0.0]])
    # f(x) = (x1 + x2) / 2 - 2
    np.testing.assert_allclose(sol.decision_function(X_new), [1.0, 1.5, -1.0, 0.0, -2.0])
    np.testing.assert_array_equal(sol.predict(X_new), [1.0, 1.0, -1.0, -1.0, -1.0])  # f=0 -> -1
    np.testing.assert_array_equal(sol.decision_function([4.0, 3.0]), [1.5])  # one 1-D point
    np.testing.assert_array_equal(sol.support(), [0, 2])
    np.testing.assert_array_equal(sol.support(tol=0.3), [])
    with pytest.raises(ValueError, match=r"`X` must have 2 features \(columns\)"):
        sol.decision_function([[1.0, 2.0, 3.0]])


def test_svm_solution_predictions_kernel():
    sol = xor_solution()
    X_new = np.array([[2.0, 3.0], [-1.0, 0.5], [0.0, 4.0]])
    np.testing.assert_allclose(sol.decision_function(X_new), X_new[:, 0] * X_new[:, 1])
    np.testing.assert_array_equal(sol.predict(XOR_POLY.X), XOR_POLY.y)
    with pytest.raises(ValueError, match=r"`X` must have 2 features"):
        sol.decision_function([[1.0]])


def test_kernel_solution_without_training_data():
    sol = dataclasses.replace(xor_solution(), X_train=None, y_train=None)
    with pytest.raises(ValueError, match="this solution holds no training data"):
        sol.decision_function([[1.0]])


def test_svm_solution_is_frozen_and_read_only():
    alpha = LI_HANG.alpha.copy()
    sol = li_hang_solution(alpha=alpha, b=np.float32(-2.0), iterations=np.int64(3))
    alpha[0] = 9.0  # the solution holds its own copy
    assert sol.alpha[0] == 0.25
    assert type(sol.b) is float and type(sol.iterations) is int
    assert all(math.isnan(v) for v in sol.b_interval)  # (nan, nan) by default
    assert math.isnan(sol.runtime) and sol.message == "" and sol.C is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        sol.b = 0.0
    for arr in (sol.alpha, sol.w, sol.X_train, sol.y_train, sol.history["gap"]):
        assert not arr.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 1.0
    with pytest.raises(TypeError):
        sol.history["gap"] = np.zeros(1)  # the mapping itself is read-only
    assert isinstance(sol.kernel, LinearKernel)


def test_status_is_checked():
    assert SVM_STATUSES == ("optimal", "inaccurate", "infeasible", "max_iter", "solver_error")
    assert PERCEPTRON_STATUSES == ("converged", "max_iter")
    with pytest.raises(ValueError, match=r"`status` must be one of .*; got 'done'"):
        li_hang_solution(status="done")
    with pytest.raises(ValueError, match=r"`status` must be one of"):
        PolytopeSolution(
            weights=[1.0], point=[0.0], distance=0.0, status="converged", iterations=0, method="m"
        )
    with pytest.raises(ValueError, match=r"`status` must be one of \('converged', 'max_iter'\)"):
        PerceptronResult(
            w=None, b=0.0, alpha=[0.0], mistakes=0, epochs=1, converged=True, status="optimal"
        )


# --- PolytopeSolution and HullPairSolution ---------------------------------------------------


def test_polytope_and_hull_solutions_are_frozen():
    pt = PolytopeSolution(
        weights=POLYTOPE_TRIANGLE["weights"],
        point=POLYTOPE_TRIANGLE["point"],
        distance=np.float64(2.0),
        status="optimal",
        iterations=np.int32(4),
        method="by-hand",
        history={"gap": np.array([0.5, 0.0])},
    )
    assert type(pt.distance) is float and type(pt.iterations) is int and math.isnan(pt.gap)
    hp = HullPairSolution(
        weights_p=HULL_PAIR["weights_p"],
        weights_q=HULL_PAIR["weights_q"],
        p=HULL_PAIR["p"],
        q=HULL_PAIR["q"],
        distance=3,
        status="optimal",
        iterations=2,
        method="by-hand",
        gap=0.0,
    )
    assert hp.distance == 3.0 and dict(hp.history) == {}
    for sol, arrays in ((pt, ("weights", "point")), (hp, ("weights_p", "weights_q", "p", "q"))):
        with pytest.raises(dataclasses.FrozenInstanceError):
            sol.distance = 1.0
        for name in arrays:
            with pytest.raises(ValueError, match="read-only"):
                getattr(sol, name)[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        pt.history["gap"][0] = 1.0


# --- PerceptronResult ------------------------------------------------------------------------


def test_perceptron_result_linear_and_kernel_forms():
    lin = PerceptronResult(
        w=[1.0, 1.0],
        b=-3,
        alpha=[2.0, 0.0, 5.0],
        mistakes=7.0,
        epochs=6,
        converged=1,
        status="converged",
        history={"mistakes": [2, 1, 1, 2, 1, 0]},
    )
    assert type(lin.b) is float and type(lin.mistakes) is int and lin.converged is True
    np.testing.assert_array_equal(lin.decision_function(LI_HANG.X), [3.0, 4.0, -1.0])
    np.testing.assert_array_equal(lin.predict([[1.5, 1.5], [2.0, 2.0]]), [-1.0, 1.0])
    # the same perceptron in dual form: f(x) = sum alpha_i y_i x_i . x + b
    dual = PerceptronResult(
        w=None,
        b=-3.0,
        alpha=[2.0, 0.0, 5.0],
        mistakes=7,
        epochs=6,
        converged=True,
        status="converged",
        X_train=LI_HANG.X,
        y_train=LI_HANG.y,
        kernel=LinearKernel(),
        method="kernel_perceptron",
    )
    X_new = np.array([[0.5, -2.0], [3.0, 1.0]])
    np.testing.assert_allclose(dual.decision_function(X_new), lin.decision_function(X_new))
    with pytest.raises(dataclasses.FrozenInstanceError):
        dual.alpha = np.zeros(3)
    with pytest.raises(ValueError, match="read-only"):
        lin.history["mistakes"][0] = 0
    with pytest.raises(ValueError, match=r"`X` must have 2 features"):
        dual.decision_function([[1.0, 2.0, 3.0]])
    bare = PerceptronResult(
        w=None, b=0.0, alpha=[1.0], mistakes=1, epochs=1, converged=False, status="max_iter"
    )
    with pytest.raises(ValueError, match="this result holds no training data"):
        bare.decision_function([[1.0]])


# --- recover_intercept -------------------------------------------------------------------


def test_recover_intercept_free_support_vectors():
    # Li Hang 7.1: alpha1, alpha3 free; b = y_i - w . x_i = -2 for both.
    g = LI_HANG.X @ LI_HANG.w
    b, interval = recover_intercept(LI_HANG.alpha, LI_HANG.y, g, None)
    assert b == -2.0 and interval == (-2.0, -2.0)
    # two free SVs that disagree: the mean of y_i - g_i
    b, interval = recover_intercept([0.5, 0.5, 0.0], [1.0, -1.0, 1.0], [0.0, 0.0, 9.0], 1.0)
    assert b == 0.0 and interval == (0.0, 0.0)
    b, _ = recover_intercept([0.5, 0.5], [1.0, -1.0], [0.2, 0.4], 1.0)
    assert b == pytest.approx(0.5 * ((1 - 0.2) + (-1 - 0.4)))


def test_recover_intercept_all_at_bounds_gives_midpoint():
    g = ALL_BOUND.X @ ALL_BOUND.w
    b, interval = recover_intercept(ALL_BOUND.alpha, ALL_BOUND.y, g, ALL_BOUND.C)
    assert interval == pytest.approx(ALL_BOUND.b_interval) == (-0.8, 0.8)
    assert b == pytest.approx(0.0)


def test_recover_intercept_bound_cases_by_hand():
    y = np.array([1.0, -1.0, 1.0, -1.0])
    g = np.array([0.5, -0.5, 2.0, 1.0])
    # r = y - g = (0.5, -0.5, -1.0, -2.0)
    # alpha = 0 for all: y=+1 needs b >= r (0.5, -1.0), y=-1 needs b <= r (-0.5, -2.0)
    b, (lo, hi) = recover_intercept(np.zeros(4), y, g, 1.0)
    assert (lo, hi) == (0.5, -2.0) and b == pytest.approx(-0.75)  # inconsistent KKT: midpoint
    # alpha = C for the +1 points reverses their side: b <= 0.5 and b <= -1; -1 points at 0
    b, (lo, hi) = recover_intercept([1.0, 0.0, 1.0, 0.0], y, g, 1.0)
    assert lo == -math.inf and hi == -2.0 and b == -2.0  # one-sided: its finite end
    b, (lo, hi) = recover_intercept([0.0, 1.0, 0.0, 1.0], y, g, 1.0)
    assert lo == 0.5 and hi == math.inf and b == 0.5
    # atol: alphas within atol of a bound are not free. x1 (y=+1) at 0: b >= 1; x2 (y=-1) at C:
    # y f <= 1 -> b >= -1. So the interval is [1, inf) and b its finite end.
    b, interval = recover_intercept([1e-9, 1.0 - 1e-9], [1.0, -1.0], [0.0, 0.0], 1.0, atol=1e-6)
    assert interval == (1.0, math.inf) and b == 1.0
    b, interval = recover_intercept([1e-9, 1.0 - 1e-9], [1.0, -1.0], [0.0, 0.0], 1.0)
    assert interval == (0.0, 0.0)  # atol = 0: both free, b = mean(1, -1)
