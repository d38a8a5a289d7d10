"""The theorem checks: each on a case where it holds and on one built to violate it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fixtures import LI_HANG, PERCEPTRON_LI_HANG, XOR_POLY, XOR_X, XOR_Y
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from maxmargin.kernels import LinearKernel, PolyKernel
from maxmargin.results import HullPairSolution, PerceptronResult, SVMSolution
from maxmargin.verification.bounds import (
    BoundCheck,
    diameter,
    feature_map_identity,
    gilbert_rate,
    gilbert_rate_curve,
    hull_recovery,
    mistake_bound,
    quadratic_feature_map,
    separation_margin,
    support_vector_count,
)

# Li Hang's data with the bias regularised too: min ||(w, b)||^2 s.t. y (w.x + b) >= 1.
# Active constraints at x1 = (3,3) and x3 = (1,1) with w1 = w2 = a: 6a + b = 1, 2a + b = -1, so
# a = 1/2, b = -2 and ||(w, b)||^2 = 1/4 + 1/4 + 4 = 9/2; the multipliers (v = l1 z1 - l3 z3)
# l1 = 5/4, l3 = 13/4 are >= 0 and x2 has y f = 3/2 >= 1, so this is the optimum.
# gamma = 1/sqrt(9/2); R^2 = max ||(x, 1)||^2 = 16 + 9 + 1 = 26; (R/gamma)^2 = 26 * 9/2 = 117.
LI_HANG_BOUND = 117.0
# Without a bias: min ||w||^2 s.t. y w.x >= 1 needs 3w1 + 3w2 >= 1, 4w1 + 3w2 >= 1 and
# -(w1 + w2) >= 1: the first and the last contradict, so no separator through the origin.


def _perceptron_result(mistakes: int, w=(1.0, 1.0), b=-3.0) -> PerceptronResult:
    return PerceptronResult(w=np.array(w), b=b, alpha=PERCEPTRON_LI_HANG["alpha"],
                            mistakes=mistakes, epochs=6, converged=True, status="converged")


def test_mistake_bound_holds_on_li_hang():
    from maxmargin.algorithms.perceptron import perceptron

    res = perceptron(LI_HANG.X, LI_HANG.y)
    chk = mistake_bound(res, LI_HANG.X, LI_HANG.y, bias=True)
    assert chk.holds and chk.value == PERCEPTRON_LI_HANG["mistakes"]
    assert chk.bound == pytest.approx(LI_HANG_BOUND, rel=1e-6)
    assert chk.details["R"] == pytest.approx(math.sqrt(26.0))


def test_mistake_bound_violated_by_a_fake_count():
    chk = mistake_bound(_perceptron_result(118), LI_HANG.X, LI_HANG.y)
    assert not chk.holds and chk.value == 118


def test_separation_margin_homogeneous_and_kernel():
    gamma, R = separation_margin(LI_HANG.X, LI_HANG.y, bias=False)
    assert gamma == 0.0 and R == pytest.approx(5.0)
    assert separation_margin(XOR_X, XOR_Y)[0] == 0.0  # linear XOR: not separable
    # XOR with (1 + x.z)^2 and a bias: the hard-margin optimum has b = 0 and ||w||^2 = 2 D = 1/2
    # (fixtures.XOR_POLY), which is also optimal with b penalised; R^2 = K(x, x) + 1 = 10.
    gamma, R = separation_margin(XOR_X, XOR_Y, kernel=PolyKernel(1.0, 2, 1.0))
    assert gamma == pytest.approx(math.sqrt(2.0), rel=1e-6)
    assert R == pytest.approx(math.sqrt(10.0))


def test_mistake_bound_without_separation_makes_no_claim():
    chk = mistake_bound(_perceptron_result(50), XOR_X, XOR_Y)
    assert chk.holds and chk.bound == math.inf and "not separable" in chk.note


def test_gilbert_rate_curve_indexing():
    # after t steps the iterate is x_{t+1}: bound 2 D^2 / (rho (t + 2))
    np.testing.assert_allclose(gilbert_rate_curve([0, 1, 8], rho=2.0, diam=3.0),
                               [18 / 4, 18 / 6, 18 / 20])


def test_gilbert_rate_holds_along_a_real_run():
    from maxmargin.algorithms.gilbert import gilbert
    from maxmargin.formulations import polytope_distance

    rng = np.random.default_rng(7)
    Q = rng.normal(size=(40, 3)) + np.array([3.0, 1.0, 0.0])
    run = gilbert(Q, tol=1e-8, max_iter=20000)
    rho = polytope_distance(Q).solve().distance
    chk = gilbert_rate(run.history["distance"], run.history["iteration"], rho, diameter(Q))
    assert chk.holds and chk.details["records"] > 2


def test_gilbert_rate_violated_by_a_slow_history():
    steps = np.arange(0, 50.0)
    rho, diam = 1.0, 2.0
    f = rho + 1.01 * gilbert_rate_curve(steps, rho, diam)
    chk = gilbert_rate(f, steps, rho, diam)
    assert not chk.holds and chk.value == pytest.approx(1.01)
    # the first record (k = 1) is not judged (module docstring)
    f0 = f.copy()
    f0[1:] = rho
    assert gilbert_rate(f0, steps, rho, diam).holds
    # a single point (D = 0): h must be 0
    assert gilbert_rate([1.0, 1.0], [0.0, 1.0], 1.0, 0.0).holds
    assert not gilbert_rate([1.0, 1.5], [0.0, 1.0], 1.0, 0.0).holds


def _li_hang_oracle(**changes) -> SVMSolution:
    fields = dict(alpha=LI_HANG.alpha, b=LI_HANG.b, w=LI_HANG.w, dual_objective=0.25,
                  primal_objective=0.25, status="optimal", iterations=0, method="hand",
                  X_train=LI_HANG.X, y_train=LI_HANG.y, C=None,
                  b_interval=(LI_HANG.b, LI_HANG.b))
    fields.update(changes)
    return SVMSolution(**fields)


# Li Hang's hulls: conv{(3,3), (4,3)} and {(1,1)}: p = (3,3), q = (1,1) (fixtures.LI_HANG).
LI_HANG_HULLS = HullPairSolution(
    weights_p=np.array([1.0, 0.0]), weights_q=np.array([1.0]), p=np.array([3.0, 3.0]),
    q=np.array([1.0, 1.0]), distance=2.0 * math.sqrt(2.0), status="optimal", iterations=1,
    method="hand",
)


def test_hull_recovery_identities_hold_on_li_hang():
    chk = hull_recovery(LI_HANG_HULLS, _li_hang_oracle(), LI_HANG.X, LI_HANG.y)
    assert chk.holds and chk.value < 1e-12
    assert chk.details["margin"] == pytest.approx(math.sqrt(2.0))
    assert "alpha_error" in chk.details


def test_hull_recovery_detects_a_wrong_w():
    wrong = _li_hang_oracle(w=np.array([0.5, 0.55]))
    chk = hull_recovery(LI_HANG_HULLS, wrong, LI_HANG.X, LI_HANG.y)
    assert not chk.holds and chk.details["w_error"] > 0.01


def test_hull_recovery_with_real_algorithms():
    from maxmargin.algorithms.mdm import mdm_hulls
    from maxmargin.formulations import svm_dual

    P, Q = LI_HANG.X[LI_HANG.y > 0], LI_HANG.X[LI_HANG.y < 0]
    oracle = svm_dual(LI_HANG.X, LI_HANG.y, None).solve()
    assert hull_recovery(mdm_hulls(P, Q), oracle, LI_HANG.X, LI_HANG.y).holds


def test_support_vector_count():
    assert support_vector_count(_li_hang_oracle()).holds  # 2 <= 3
    # the square (+-1, +-1) labelled by x1, with the analytic-centre alpha 1/4 each: 4 > 3
    square = SVMSolution(
        alpha=np.full(4, 0.25), b=0.0, w=np.array([1.0, 0.0]), dual_objective=0.5,
        primal_objective=0.5, status="optimal", iterations=0, method="hand",
        X_train=np.array([[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0]]),
        y_train=np.array([1.0, 1.0, -1.0, -1.0]),
    )
    chk = support_vector_count(square)
    assert not chk.holds and (chk.value, chk.bound) == (4.0, 3.0)


def test_feature_map_identity():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(6, 3))
    assert feature_map_identity(X).holds
    assert feature_map_identity(XOR_POLY.X).holds
    # the map has d^2/2 + 3d/2 + 1 coordinates; for x = (1, 2): (1, 4, 2 sqrt2, sqrt2, 2 sqrt2, 1)
    r2 = math.sqrt(2.0)
    np.testing.assert_allclose(quadratic_feature_map([[1.0, 2.0]])[0],
                               [1.0, 4.0, 2 * r2, r2, 2 * r2, 1.0])

    def without_sqrt2(Z):
        i, j = np.triu_indices(Z.shape[1], k=1)
        return np.hstack([Z**2, Z[:, i] * Z[:, j], Z, np.ones((Z.shape[0], 1))])

    chk = feature_map_identity(X, feature_map=without_sqrt2)
    assert not chk.holds and chk.value > 0.1


@settings(max_examples=30, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 4)),
              elements=st.floats(-10, 10, allow_nan=False)))
def test_feature_map_identity_holds_for_any_points(X):
    assert feature_map_identity(X).holds


def test_bound_check_is_frozen():
    chk = BoundCheck("x", 1, 2, True, details={"a": 1})
    with pytest.raises(AttributeError):
        chk.value = 3.0
    with pytest.raises(TypeError):
        chk.details["a"] = 2.0


def test_validation_messages():
    with pytest.raises(ValueError, match="`result` must be a PerceptronResult"):
        mistake_bound(None, LI_HANG.X, LI_HANG.y)
    with pytest.raises(ValueError, match="`distances` and `steps` must have the same length"):
        gilbert_rate([1.0, 2.0], [0.0], 1.0, 1.0)
    with pytest.raises(ValueError, match="`rho` must be positive"):
        gilbert_rate([1.0], [0.0], 0.0, 1.0)
    with pytest.raises(ValueError, match="`diam` must be non-negative"):
        gilbert_rate([1.0], [0.0], 1.0, -1.0)
    with pytest.raises(ValueError, match="`hull` must be a HullPairSolution"):
        hull_recovery(None, _li_hang_oracle(), LI_HANG.X, LI_HANG.y)
    with pytest.raises(ValueError, match="`oracle` must be a linear-kernel SVMSolution"):
        hull_recovery(LI_HANG_HULLS, _li_hang_oracle(w=None, kernel=LinearKernel()),
                      LI_HANG.X, LI_HANG.y)
    with pytest.raises(ValueError, match="`rtol` must be non-negative"):
        hull_recovery(LI_HANG_HULLS, _li_hang_oracle(), LI_HANG.X, LI_HANG.y, rtol=-1.0)
    with pytest.raises(ValueError, match="`solution` must be an SVMSolution holding"):
        support_vector_count(_li_hang_oracle(X_train=None))
    with pytest.raises(ValueError, match="`points` must be finite"):
        diameter([[0.0, np.nan]])
    with pytest.raises(ValueError, match="`Z` must be a 2-D array"):
        feature_map_identity(LI_HANG.X, [1.0, 2.0])
