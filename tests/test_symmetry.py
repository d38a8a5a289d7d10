"""Verdicts invariant under the problem's symmetries.

"optimal" and "infeasible" mean the same whatever the units and the origin. Under

* a change of units ``X -> s X`` with ``C -> C / s^2`` (linear kernel: the same classifier,
  every objective times ``1 / s^2``) or ``gamma -> gamma / s^2`` (rbf: the same kernel),
* a translation ``X -> X + t`` (linear and rbf kernels: the same hulls, the same classifier),
* a permutation of the samples, and a swap of the labels,

every registered method's status and its certificate's verdict must be those of the unmodified
problem, for ``s`` in ``[1e-4, 1e4]`` and ``|t|`` up to ``1e6`` times the data's spread; where
both answers are optimal, their (rescaled) objectives must agree too. The two reported regimes
are pinned by examples: features near ``3e4`` with a small objective (Gilbert once stopped
"optimal" 1.2 % low, on a ``w`` that violated its margins), and points far from the origin with
a small spread (the resolution ``1e-4 R`` once measured ``R`` from the origin, and every
nearest-point method answered "infeasible").
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maxmargin.algorithms import gilbert, gilbert_hulls, gilbert_svm, smo
from maxmargin.algorithms.kernel_perceptron import kernel_perceptron
from maxmargin.algorithms.mdm import mdm_hulls
from maxmargin.algorithms.perceptron import perceptron
from maxmargin.algorithms.wolfe import wolfe_hulls
from maxmargin.certificate import certify_infeasible, certify_svm, relative_gap
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.formulations import hull_distance, svm_dual
from maxmargin.kernels import make_kernel
from maxmargin.methods import METHODS, method_names
from maxmargin.tolerances import HULL_CERT_FACTOR, ORACLE_GAP, ORACLE_KKT, SVM_HULL_EPS

SYMMETRY = settings(max_examples=20, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

NEAREST = ("gilbert", "mdm", "wolfe")
HULLS = {"gilbert": gilbert_hulls, "mdm": mdm_hulls, "wolfe": wolfe_hulls}
scales = st.sampled_from([1e-4, 1e-2, 1.0, 3e2, 1e4])
offsets = st.sampled_from([0.0, 3.0, 1e2, 1e4, 1e6])  # 3: offset, yet not centred by smo
seeds = st.integers(0, 2**16)


def _separable(seed: int, n: int = 24, d: int = 4, gap: float = 0.5) -> tuple:
    """Two classes on either side of a random hyperplane through their mean, ``gap`` apart."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X += np.outer(y * gap - X @ u, u) * (np.abs(X @ u) < gap)[:, None]
    X += np.outer(np.where(y * (X @ u) < 0, -2 * (X @ u), 0.0), u)
    return X, y


def _overlapping(seed: int, n: int = 30, d: int = 2) -> tuple:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    return X, y


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fn(*args, **kwargs)


def _verdict(sol) -> tuple:
    """The status and what the certificate says: infeasibility shown, or optimality met."""
    cert = sol.certificate
    if cert is None:
        return sol.status, None
    if cert.infeasible:
        return sol.status, "infeasible"
    if sol.method.startswith("smo"):
        return sol.status, cert.meets(sol.tol)
    if sol.method.startswith("cvxpy"):
        return sol.status, cert.meets(ORACLE_KKT, ORACLE_GAP)
    return sol.status, bool(cert.margin > 0 and cert.gap <= HULL_CERT_FACTOR * sol.tol)


def _same_answer(a, b, objective_factor: float, rtol: float) -> None:
    assert _verdict(a) == _verdict(b)
    if a.status == "optimal":
        assert b.dual_objective * objective_factor == pytest.approx(a.dual_objective, rel=rtol)
        assert b.primal_objective >= b.dual_objective * (1 - 1e-9)  # a feasible point's value


def _hard(method: str, X, y, kernel="linear", **kw):
    if method == "smo":
        return _quiet(smo, X, y, C=None, kernel=kernel, tol=1e-6, **kw)
    return _quiet(gilbert_svm, X, y, method=method, kernel=kernel, **kw)


# --- change of units --------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["smo", *NEAREST])
@SYMMETRY
@given(seed=seeds, s=scales, separable=st.booleans())
def test_hard_margin_verdict_is_unit_free(method, seed, s, separable):
    X, y = _separable(seed) if separable else _overlapping(seed)
    base, scaled = _hard(method, X, y), _hard(method, s * X, y)
    _same_answer(base, scaled, s * s, 1e-5)
    if base.status == "optimal":
        np.testing.assert_allclose(scaled.decision_function(s * X), base.decision_function(X),
                                   rtol=1e-4, atol=1e-4)


@SYMMETRY
@given(seed=seeds, s=scales, C=st.sampled_from([0.1, 1.0, 100.0]))
def test_soft_margin_verdict_is_unit_free(seed, s, C):
    X, y = _overlapping(seed)
    base = _quiet(smo, X, y, C=C, tol=1e-6)
    scaled = _quiet(smo, s * X, y, C=C / s**2, tol=1e-6)
    _same_answer(base, scaled, s * s, 1e-6)


@pytest.mark.parametrize("method", ["smo", *NEAREST])
@SYMMETRY
@given(seed=seeds, s=scales)
def test_rbf_verdict_is_unit_free(method, seed, s):
    X, y = _overlapping(seed, n=20)
    kernel, scaled_kernel = make_kernel("rbf", gamma=0.5), make_kernel("rbf", gamma=0.5 / s**2)
    _same_answer(_hard(method, X, y, kernel), _hard(method, s * X, y, scaled_kernel), 1.0, 1e-5)


# --- translation ------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["smo", *NEAREST])
@SYMMETRY
@given(seed=seeds, offset=offsets, separable=st.booleans())
def test_hard_margin_verdict_is_origin_free(method, seed, offset, separable):
    X, y = _separable(seed, gap=0.2) if separable else _overlapping(seed)
    t = offset * np.random.default_rng(seed + 1).normal(size=X.shape[1])
    base, moved = _hard(method, X, y), _hard(method, X + t, y)
    _same_answer(base, moved, 1.0, 1e-5 if offset < 1e6 else 1e-3)
    if base.status == "infeasible":  # the evidence's radius is measured from the mean
        assert moved.certificate.radius == pytest.approx(base.certificate.radius, rel=1e-6)


@SYMMETRY
@given(seed=seeds, offset=offsets)
def test_rbf_hard_margin_is_origin_free(seed, offset):
    X, y = _overlapping(seed, n=20)
    t = offset * np.random.default_rng(seed + 1).normal(size=X.shape[1])
    kernel = make_kernel("rbf", gamma=0.5)
    for method in ("smo", *NEAREST):
        _same_answer(_hard(method, X, y, kernel), _hard(method, X + t, y, kernel), 1.0, 1e-3)


@SYMMETRY
@given(seed=seeds, offset=offsets)
def test_soft_margin_is_origin_free(seed, offset):
    X, y = _overlapping(seed)
    t = offset * np.random.default_rng(seed + 1).normal(size=X.shape[1])
    base, moved = _quiet(smo, X, y, C=1.0, tol=1e-6), _quiet(smo, X + t, y, C=1.0, tol=1e-6)
    _same_answer(base, moved, 1.0, 1e-6 if offset < 1e6 else 1e-4)


# --- permutation and label swap ---------------------------------------------------------------


@pytest.mark.parametrize("method", [*method_names(family="maxmargin", hard_margin=True),
                                    *method_names(family="oracle")])
@SYMMETRY
@given(seed=seeds, separable=st.booleans())
def test_registered_verdicts_ignore_order_and_labels(method, seed, separable):
    X, y = _separable(seed) if separable else _overlapping(seed)
    spec, kernel = METHODS[method], make_kernel("linear")
    C = None if spec.problem == "hard_margin" else 1.0

    def run(X, y):
        return _quiet(spec, X, y, C=C, kernel=kernel, tol=1e-6 if method == "smo" else None)

    base = run(X, y)
    order = np.random.default_rng(seed).permutation(X.shape[0])
    _same_answer(base, run(X[order], y[order]), 1.0, 1e-5)
    _same_answer(base, run(X, -y), 1.0, 1e-5)


# --- hulls ------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", NEAREST)
@SYMMETRY
@given(seed=seeds, s=scales, offset=offsets)
def test_hull_pair_verdicts(method, seed, s, offset):
    X, y = _separable(seed, gap=0.3)
    P, Q = X[y > 0], X[y < 0]
    t = offset * np.random.default_rng(seed + 1).normal(size=X.shape[1])
    solve = HULLS[method]
    base = _quiet(solve, P, Q)
    for other, factor in ((_quiet(solve, s * P, s * Q), s), (_quiet(solve, P + t, Q + t), 1.0),
                          (_quiet(solve, Q[::-1], P), 1.0)):
        assert other.status == base.status
        if base.status == "optimal":
            assert other.distance == pytest.approx(base.distance * factor, rel=1e-4)
            assert other.certificate.gap <= 10 * (1e-6 if method == "gilbert" else 1e-8)


@SYMMETRY
@given(seed=seeds, s=scales)
def test_polytope_verdict_is_unit_free(seed, s):
    Q = np.random.default_rng(seed).normal(size=(12, 3)) + 3.0
    base, scaled = _quiet(gilbert, Q), _quiet(gilbert, s * Q[::-1])
    assert scaled.status == base.status
    assert scaled.distance == pytest.approx(s * base.distance, rel=1e-4)


# --- perceptrons ------------------------------------------------------------------------------


@SYMMETRY
@given(seed=seeds, s=scales)
def test_perceptron_without_bias_is_unit_free(seed, s):
    # No bias: y_i (w . x_i) <= 0 tests the same sign for every s, so the very same mistakes
    # (the classes are separated through the origin, so it converges).
    X, y = _separable(seed)
    base = perceptron(X, y, bias=False, max_epochs=200)
    assert base.status == "converged"
    scaled = perceptron(s * X, y, bias=False, max_epochs=200)
    assert (scaled.status, scaled.mistakes) == (base.status, base.mistakes)
    swapped = perceptron(X, -y, bias=False, max_epochs=200)
    assert (swapped.status, swapped.mistakes) == (base.status, base.mistakes)


@SYMMETRY
@given(seed=seeds, s=scales)
def test_rbf_kernel_perceptron_is_unit_free(seed, s):
    X, y = _overlapping(seed, n=16)
    base = kernel_perceptron(X, y, kernel=make_kernel("rbf", gamma=2.0), max_epochs=300)
    scaled = kernel_perceptron(s * X, y, kernel=make_kernel("rbf", gamma=2.0 / s**2),
                               max_epochs=300)
    assert scaled.status == base.status
    swapped = kernel_perceptron(X, -y, kernel=make_kernel("rbf", gamma=2.0), max_epochs=300)
    assert swapped.status == base.status


# --- oracles (public API only) ----------------------------------------------------------------


@SYMMETRY
@given(seed=seeds, s=st.sampled_from([1e-3, 1.0, 1e3]), C=st.sampled_from([None, 1.0]))
def test_oracle_dual_verdict_is_unit_free(seed, s, C):
    X, y = _separable(seed, n=16, d=3) if C is None else _overlapping(seed, n=16)
    base = _quiet(svm_dual(X, y, C).solve)
    scaled = _quiet(svm_dual(s * X, y, None if C is None else C / s**2).solve)
    assert scaled.status == base.status
    if base.status == "optimal":
        assert scaled.dual_objective * s * s == pytest.approx(base.dual_objective, rel=1e-5)


@SYMMETRY
@given(seed=seeds, offset=st.sampled_from([0.0, 1e3, 1e6]))
def test_oracle_dual_verdict_is_origin_free(seed, offset):
    X, y = _separable(seed, n=16, d=3)
    t = offset * np.random.default_rng(seed + 1).normal(size=3)
    moved = _quiet(svm_dual(X + t, y, None).solve)
    assert moved.status == _quiet(svm_dual(X, y, None).solve).status


@pytest.mark.parametrize("shift", [1e2, 1e4, 1e6])
@pytest.mark.parametrize("scale", [1e-4, 1.0, 1e4])
def test_oracle_hull_verdict_is_free_of_origin_and_units(shift, scale):
    X, y = _separable(0, n=16, d=3)
    t = shift * np.random.default_rng(1).normal(size=3)
    base = _quiet(hull_distance(X[y > 0], X[y < 0]).solve)
    moved = _quiet(hull_distance(scale * X[y > 0] + t, scale * X[y < 0] + t).solve)
    assert base.status == "optimal"
    assert moved.status == base.status
    assert moved.distance == pytest.approx(scale * base.distance, rel=1e-6)


# --- the two reported regimes -----------------------------------------------------------------


def _large_features(seed: int = 0) -> tuple:
    """Separable, n = 32 < d = 45, features up to 3.3e4: a hard-margin objective near 3e-9."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(32, 45)) * rng.uniform(1, 3.3e4, size=45)
    return X, np.where(rng.normal(size=32) > 0, 1.0, -1.0)


@pytest.mark.parametrize("method", NEAREST)
def test_small_objective_optimal_is_the_optimum(method):
    X, y = _large_features()
    ref = _quiet(smo, X, y, C=None, tol=1e-9)
    for s in (1.0, 1e-2):
        sol = _hard(method, s * X, y)
        assert sol.status == "optimal"
        assert sol.dual_objective == pytest.approx(ref.dual_objective / s**2, rel=1e-6)
        cert = certify_svm(sol.alpha, s * X, y, None, make_kernel("linear"))
        assert sol.primal_objective == pytest.approx(cert.primal_objective, rel=1e-12)
        assert sol.primal_objective >= sol.dual_objective * (1 - 1e-12)
        assert cert.margin > 0 and cert.gap <= 1e-5


@SYMMETRY
@given(seed=seeds, s=scales, offset=offsets, C=st.sampled_from([None, 0.5, 50.0]))
def test_the_judge_is_free_of_units_and_origin(seed, s, offset, C):
    # Any feasible alpha (y . alpha = 0, in the box): the same classifier at s and t gives the
    # same m - M, margin and relative gap; the objectives scale by 1 / s^2.
    X, y = _overlapping(seed) if C else _separable(seed)
    rng = np.random.default_rng(seed)
    alpha = rng.uniform(0.0, 1.0, size=y.shape[0]) * (0.5 if C is None else min(C, 1.0))
    alpha[y > 0] *= alpha[y < 0].sum() / alpha[y > 0].sum()
    kernel = make_kernel("linear")
    base = certify_svm(alpha, X, y, C, kernel)
    scaled = certify_svm(alpha / s**2, s * X, y, None if C is None else C / s**2, kernel)
    t = offset * rng.normal(size=X.shape[1])
    moved = certify_svm(alpha, X + t, y, C, kernel)
    far = 1e-6 if offset < 1e6 else 1e-3  # the user's coordinates: the offset's cancellation
    for other, factor, rtol in ((scaled, s * s, 1e-8), (moved, 1.0, far)):
        assert other.kkt_violation == pytest.approx(base.kkt_violation, rel=rtol, abs=rtol)
        assert other.gap == pytest.approx(base.gap, rel=rtol, abs=rtol)
        assert other.dual_objective * factor == pytest.approx(base.dual_objective, rel=rtol)
        if C is None:
            assert other.margin == pytest.approx(base.margin, rel=rtol, abs=rtol)


def test_breast_cancer_gap_is_unit_free():
    # The measurement: one classifier, gap 7.1e-5 at s = 1 and 1.9e-11 at s = 1e3 under
    # max(1, |P|); relative, the same gap for every s.
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    y = np.where(y == 1, 1.0, -1.0)
    sol = smo(X, y, C=1.0)
    gaps = [certify_svm(sol.alpha / s**2, s * X, y, 1.0 / s**2, make_kernel("linear")).gap
            for s in (1e-3, 1.0, 1e3)]
    assert gaps == pytest.approx([gaps[1]] * 3, rel=1e-6)
    assert gaps[1] > 0


def test_relative_gap_is_unit_free():
    # The same classifier at s and 1: (P - D) / |P|, not an absolute gap when |P| < 1.
    assert relative_gap(5.5531e-6, 5.4842e-6) == pytest.approx(relative_gap(5.5531, 5.4842))
    assert relative_gap(math.inf, 1.0) == math.inf


def _far(seed: int = 3) -> tuple:
    """99 points of spread 9 near a point of norm 7.6e4, separated through their mean."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(99, 3)) * 9.0
    y = np.where(X @ rng.normal(size=3) > 0, 1.0, -1.0)
    return X + 7.6e4 / math.sqrt(3.0), y


@pytest.mark.parametrize("method", ["smo", *NEAREST])
def test_far_from_the_origin_is_separable(method):
    X, y = _far()
    far, centred = _hard(method, X, y), _hard(method, X - X.mean(axis=0), y)
    assert far.status == centred.status == "optimal"
    assert far.dual_objective == pytest.approx(centred.dual_objective, rel=1e-6)
    np.testing.assert_array_equal(np.sign(far.decision_function(X)), y)


def test_infeasibility_radius_is_measured_from_the_mean():
    X, y = _far()
    score = (X - X.mean(axis=0)) @ np.linalg.lstsq(X - X.mean(axis=0), y, rcond=None)[0]
    y = y.copy()
    y[np.argsort(score)[-3:]] = -1.0  # three negatives deep among the positives
    weights = np.ones(y.shape[0])
    far = certify_infeasible(weights, X, y, make_kernel("linear"))
    near = certify_infeasible(weights, X - X.mean(axis=0), y, make_kernel("linear"))
    assert far.radius == pytest.approx(near.radius, rel=1e-9)
    assert far.radius < 100  # the spread's scale, not the offset's 7.6e4
    assert far.hull_distance == pytest.approx(near.hull_distance, rel=1e-6, abs=1e-9 * near.radius)
    for method in ("smo", *NEAREST):
        sol = _hard(method, X, y)
        assert sol.status == "infeasible"
        assert sol.certificate.hull_distance <= SVM_HULL_EPS * 10 * sol.certificate.radius
