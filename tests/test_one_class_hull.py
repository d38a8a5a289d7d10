"""The one-class SVM as the nearest point of a reduced hull to the origin (``one_class_hull``,
``MaxMarginOneClass(solver="mdm" | "wolfe" | "gilbert")``), against independent answers: the
CVXPY oracle ``one_class_dual``, LIBSVM's one-class solver on the SMO package
(``one_class_smo``), the judge ``certify_one_class`` and closed forms (the centroid at ``nu =
1``, ``w = 0`` when the reduced hull holds the origin).

Run alone: ``python -m pytest tests/test_one_class_hull.py -q -p no:cacheprovider``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maxmargin import MaxMarginOneClass
from maxmargin.algorithms import gilbert_svm, one_class_hull, one_class_smo
from maxmargin.certificate_nu import certify_one_class
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.formulations import one_class_dual
from maxmargin.tolerances import HULL_CERT_FACTOR

SETTINGS = settings(max_examples=10, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
#: The methods that reach a tight gap on these problems (Gilbert's O(1/k) rate does not).
TIGHT = ("mdm", "wolfe")


def _points(seed: int, l: int, d: int, shift: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((l, d))
    X[:, 0] += shift
    return X


@pytest.mark.parametrize("method", TIGHT)
@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), l=st.integers(8, 40), d=st.integers(1, 4),
       nu=st.floats(0.05, 1.0), shift=st.floats(0.0, 4.0))
def test_one_class_hull_matches_the_oracle_and_smo(method: str, kernel: str, seed: int, l: int,
                                                  d: int, nu: float, shift: float) -> None:
    X = _points(seed, l, d, shift)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sol = one_class_hull(X, nu, kernel=kernel, method=method, tol=1e-9)
        ref = one_class_smo(X, nu, kernel=kernel, tol=1e-9)
    oracle = one_class_dual(X, nu=nu, kernel=kernel).solve()
    alpha = np.asarray(sol.alpha)
    upper = 1.0 / (nu * l)
    assert np.all(alpha >= 0.0) and np.all(alpha <= upper * (1 + 1e-12))
    assert abs(alpha.sum() - 1.0) <= 1e-12
    cert = certify_one_class(alpha, X, nu, sol.kernel)
    if sol.status == "optimal":
        assert sol.hulls_meet or cert.meets(math.inf, HULL_CERT_FACTOR * 1e-9), cert.summary()
    else:  # honest only where float64 cannot resolve a gap of 1e-9: ||w||^2 at round-off
        # level of the kernel's scale (the reduced hull nearly holds the origin)
        R2 = float(np.max(sol.kernel.diag(X)))
        assert abs(oracle.dual_objective) <= 1e-6 * R2, (sol.status, sol.message)
        assert not cert.meets(math.inf, HULL_CERT_FACTOR * 1e-9)
    # the dual optimum 1/2 alpha^T K alpha (its sign as the oracle's) from three solvers
    scale = max(abs(oracle.dual_objective), 1e-12)
    assert abs(sol.dual_objective - oracle.dual_objective) <= 1e-6 * scale + 1e-12
    assert abs(sol.dual_objective - ref.dual_objective) <= 1e-6 * scale + 1e-12
    if sol.status == ref.status == "optimal" and not sol.hulls_meet:
        f, g = sol.decision_function(X), ref.decision_function(X)
        assert np.max(np.abs(f - g)) <= 1e-3 * max(1.0, float(np.max(np.abs(g))))


@pytest.mark.parametrize("method", ["mdm", "wolfe", "gilbert"])
def test_nu_one_is_the_centroid(method: str) -> None:
    X = _points(3, 25, 3, 2.0)
    sol = one_class_hull(X, 1.0, kernel="linear", method=method)
    np.testing.assert_allclose(sol.alpha, np.full(25, 1.0 / 25), rtol=0, atol=1e-15)
    np.testing.assert_allclose(sol.w, X.mean(axis=0), rtol=1e-12, atol=1e-12)
    assert sol.status == "optimal"


@pytest.mark.parametrize("method", TIGHT)
def test_a_reduced_hull_holding_the_origin_gives_w_zero(method: str) -> None:
    # points symmetric about the origin: the centroid, in every RCH, is the origin
    rng = np.random.default_rng(5)
    half = rng.standard_normal((20, 2))
    X = np.vstack([half, -half])
    sol = one_class_hull(X, 0.5, kernel="linear", method=method)
    oracle = one_class_dual(X, nu=0.5, kernel="linear").solve()
    assert abs(oracle.dual_objective) <= 1e-9
    assert sol.status == "optimal" and sol.hulls_meet
    assert sol.rho == 0.0 and np.all(sol.w == 0.0)


def test_gilbert_reports_what_it_has_not_certified() -> None:
    X = _points(1, 60, 3, 2.0)
    with pytest.warns(ConvergenceWarning, match="one-class SVM answer is not certified") as rec:
        sol = one_class_hull(X, 0.05, kernel="rbf", method="gilbert", max_iter=200,
                             finish=False)
    assert sol.status == "max_iter"
    assert [w.filename for w in rec] == [__file__]  # the warning points at the caller
    y = np.where(X[:, 0] > np.median(X[:, 0]), 1.0, -1.0)
    Xs = X + 3.0 * y[:, None]  # classes apart: a capped run (no finish) stays max_iter
    with pytest.warns(ConvergenceWarning, match="nu-SVC answer is not certified") as rec:
        gilbert_svm(Xs, y, nu=0.2, kernel="rbf", method="gilbert", max_iter=2, finish=False)
    assert [w.filename for w in rec] == [__file__]
    cert = certify_one_class(np.asarray(sol.alpha), X, 0.05, sol.kernel)
    assert not cert.meets(math.inf, HULL_CERT_FACTOR * 1e-6)


@pytest.mark.parametrize("method", ["mdm", "gilbert"])
def test_a_capped_run_is_finished_by_wolfe(method: str) -> None:
    # Nearly coincident points in feature space (RBF, gamma 1 / (2 * 870 spread^2)) slow the
    # pairwise and Gilbert steps to a crawl: a capped run is finished on the same reduced hull.
    rng = np.random.default_rng(3)
    X = (rng.standard_normal((82, 1)) + 0.8) * 2.5e-3
    kwargs = {"kernel": "rbf", "gamma": 6.6e5, "method": method, "max_iter": 20_000}
    with pytest.warns(ConvergenceWarning, match="not certified"):
        capped = one_class_hull(X, 0.06, finish=False, **kwargs)
    assert capped.status == "max_iter"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a finished run warns of nothing
        sol = one_class_hull(X, 0.06, **kwargs)
    assert sol.status == "optimal" and "finished by Wolfe's method" in sol.message
    assert sol.method == method
    oracle = one_class_dual(X, nu=0.06, kernel="rbf", gamma=6.6e5).solve()
    assert sol.dual_objective == pytest.approx(oracle.dual_objective, rel=1e-8, abs=1e-12)
    assert sol.rho == pytest.approx(oracle.rho, rel=1e-5)
    with pytest.raises(ValueError, match="finish"):
        one_class_hull(X, 0.06, finish="yes")


@pytest.mark.parametrize("method", TIGHT)
def test_the_verdict_is_invariant_under_units_and_order(method: str) -> None:
    X = _points(7, 30, 3, 1.5)
    base = one_class_hull(X, 0.2, kernel="linear", method=method, tol=1e-9)
    perm = np.random.default_rng(0).permutation(30)
    for s in (1e-4, 1.0, 1e4):
        scaled = one_class_hull(s * X[perm], 0.2, kernel="linear", method=method, tol=1e-9)
        assert scaled.status == base.status == "optimal"
        assert abs(scaled.dual_objective - s * s * base.dual_objective) <= (
            1e-8 * s * s * abs(base.dual_objective))
        np.testing.assert_allclose(scaled.rho, s * s * base.rho, rtol=1e-6)


@pytest.mark.parametrize("bad, match", [({"nu": 1.5}, "nu"), ({"nu": 0.0}, "nu"),
                                        ({"method": "smo"}, "method"), ({"tol": -1.0}, "tol")])
def test_bad_input_is_refused_before_any_work(bad: dict, match: str) -> None:
    X = _points(0, 10, 2, 0.0)
    args = {"nu": 0.5, "method": "mdm", "tol": 1e-6, **bad}
    with pytest.raises(ValueError, match=match):
        one_class_hull(X, **args)


def test_inputs_are_not_modified() -> None:
    X = _points(2, 20, 3, 1.0)
    keep = X.copy()
    one_class_hull(X, 0.3, kernel="rbf", method="wolfe")
    np.testing.assert_array_equal(X, keep)


@pytest.mark.parametrize("solver", ["mdm", "wolfe"])
def test_the_estimator_takes_the_hull_solvers(solver: str) -> None:
    X = _points(4, 40, 2, 1.0)
    ours = MaxMarginOneClass(nu=0.2, gamma=0.5, tol=1e-9, solver=solver).fit(X)
    smo = MaxMarginOneClass(nu=0.2, gamma=0.5, tol=1e-9).fit(X)
    assert ours.fit_status_ == 0
    f, g = ours.decision_function(X), smo.decision_function(X)
    top = float(np.max(np.abs(g)))
    np.testing.assert_allclose(f, g, rtol=0, atol=1e-5 * top)
    clear = np.abs(g) > 1e-4 * top  # the free support vectors sit on f = 0 (either sign)
    assert clear.sum() >= 20
    np.testing.assert_array_equal(ours.predict(X)[clear], smo.predict(X)[clear])
    with pytest.raises(ValueError, match="sample_weight"):
        MaxMarginOneClass(solver=solver).fit(X, sample_weight=np.arange(1.0, 41.0))


@pytest.mark.parametrize("method", ["mdm", "gilbert"])
def test_a_run_stopped_at_the_loops_zero_tolerance_is_finished_by_wolfe(method: str) -> None:
    # a reduced hull that holds the origin (poly kernel, centred points): MDM and Gilbert creep
    # towards 0 and stop at the loops' zero tolerance, above the judge's resolution; Wolfe's
    # exact affine steps reach w = 0, as the oracle and one_class_smo say
    X = np.random.default_rng(0).standard_normal((8, 2))
    sol = one_class_hull(X, 0.25, kernel="poly", method=method, tol=1e-9)
    oracle = one_class_dual(X, nu=0.25, kernel="poly").solve()
    assert oracle.hulls_meet and one_class_smo(X, 0.25, kernel="poly", tol=1e-9).hulls_meet
    assert sol.status == "optimal" and sol.hulls_meet and sol.method == method
    assert "finished by Wolfe's method" in sol.message


@pytest.mark.parametrize("method", ["wolfe", "mdm", "gilbert"])
def test_a_stop_at_the_loops_zero_floor_goes_on_to_the_judges_resolution(method: str) -> None:
    # Cubic kernel (coef0 0) on 1-D points of both signs: the feature map is the scalar
    # (sqrt(gamma) x)^3, the hull holds the origin, and the start vertex (the point nearest 0)
    # is within the loops' floor 10 sqrt(eps) R though not within the judge's resolution. The
    # finish (Wolfe's method below that floor) reaches w = 0 between points of both signs.
    rng = np.random.default_rng(3)
    X = np.abs(rng.standard_normal((32, 1))) * 2e-4
    X[0, 0], X[1, 0] = 3e-6, -4e-5
    kwargs = {"kernel": "poly", "degree": 3, "coef0": 0.0, "gamma": 8e7}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sol = one_class_hull(X, 2e-4, method=method, **kwargs)
    assert sol.status == "optimal" and sol.hulls_meet and sol.rho == 0.0
    assert "stopped at its zero tolerance" in sol.message
    assert "finished by Wolfe's method" in sol.message
    assert np.count_nonzero(sol.alpha) >= 2  # a point of each sign
    oracle = one_class_dual(X, nu=2e-4, **kwargs).solve()
    assert oracle.status == "optimal" and oracle.hulls_meet
