"""Gilbert's algorithm (polytope, hull pair, hard-margin SVM) against hand derivations, the
CVXPY/Clarabel oracles and seed 001's convergence theorem."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from fixtures import (
    LI_HANG,
    POLYTOPE_SEGMENT,
    POLYTOPE_TRIANGLE,
    TWO_POINTS,
    XOR_POLY,
    XOR_X,
    XOR_Y,
)
from fixtures_nearest_point import (
    assert_hull_fixtures,
    assert_svm_matches,
    gaussian_pair,
    labelled,
    oracle_hulls,
    oracle_polytope,
    quiet,
    rbf_disc_case,
)
from scipy.spatial.distance import pdist

from maxmargin.algorithms.gilbert import gilbert, gilbert_hulls, gilbert_svm
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.formulations.primal import hard_margin_primal
from maxmargin.kernels.formulas import KIND_GRAM

# --- hand-derived fixtures -------------------------------------------------------------------


@pytest.mark.parametrize("case", [POLYTOPE_SEGMENT, POLYTOPE_TRIANGLE], ids=["segment", "tri"])
def test_polytope_fixtures(case: dict) -> None:
    sol = gilbert(case["Q"])
    assert sol.status == "optimal" and sol.method == "gilbert"
    np.testing.assert_allclose(sol.weights, case["weights"], atol=1e-12)
    np.testing.assert_allclose(sol.point, case["point"], atol=1e-12)
    assert sol.distance == pytest.approx(case["distance"], abs=1e-12)
    assert sol.gap <= 1e-6


def test_polytope_origin_inside_reports_distance_zero() -> None:
    Q = np.array([[1.0, 0.0], [-1.0, 1.0], [-1.0, -1.0]])  # a triangle around the origin
    sol = gilbert(Q)
    assert sol.status == "optimal" and sol.distance == 0.0
    assert "within the zero tolerance" in sol.message
    assert sol.weights.min() >= 0 and sol.weights.sum() == pytest.approx(1.0)
    # the certificate: the returned convex combination is within tol * scale of the origin
    assert np.linalg.norm(Q.T @ sol.weights) <= 1e-6 * np.sqrt(5.0)


def test_hull_fixtures() -> None:
    assert_hull_fixtures(gilbert_hulls, "gilbert", tol=1e-6)


@pytest.mark.parametrize("ex", [TWO_POINTS, LI_HANG], ids=lambda e: e.name)
def test_svm_fixtures(ex) -> None:  # noqa: ANN001
    sol = gilbert_svm(ex.X, ex.y, method="gilbert")
    assert_svm_matches(sol, ex)
    assert sol.method == "gilbert" and sol.b_interval == (sol.b, sol.b)
    hull = gilbert_hulls(ex.X[ex.y > 0], ex.X[ex.y < 0])
    margin = 1.0 / np.linalg.norm(sol.w)
    assert margin == pytest.approx(ex.margin, rel=1e-12)
    assert margin == pytest.approx(hull.distance / 2.0, rel=1e-12)
    yf = ex.y * sol.decision_function(ex.X)
    assert yf.min() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(yf[sol.alpha > 0], 1.0, atol=1e-12)


def test_svm_linear_xor_is_infeasible() -> None:
    for method in ("wolfe", "gilbert", "mdm"):
        sol = gilbert_svm(XOR_X, XOR_Y, method=method)
        assert sol.status == "infeasible" and "not separable at this resolution" in sol.message
        assert np.all(np.isnan(sol.alpha)) and math.isnan(sol.b)
        assert sol.primal_objective == sol.dual_objective == math.inf
        # the evidence: convex combinations of the two classes within 1e-4 R of each other
        assert sol.certificate.infeasible
        assert sol.certificate.hull_distance <= 1e-4 * sol.certificate.radius


def test_svm_xor_poly_kernel() -> None:
    sol = gilbert_svm(XOR_POLY.X, XOR_POLY.y, kernel="poly", **XOR_POLY.kernel_params)
    assert_svm_matches(sol, XOR_POLY)
    assert sol.w is None
    # the fixture derives f(x) = x1 x2 exactly
    pts = np.random.default_rng(0).uniform(-2, 2, size=(20, 2))
    np.testing.assert_allclose(sol.decision_function(pts), pts[:, 0] * pts[:, 1], atol=1e-12)


# --- against the CVXPY/Clarabel oracles ------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hulls_against_oracle(seed: int) -> None:
    P, Q = gaussian_pair(30, 3, 5.0, seed)
    ora = oracle_hulls(P, Q)
    sol = gilbert_hulls(P, Q, tol=1e-5, max_iter=1_000_000)
    assert sol.status == "optimal" and sol.gap <= 1e-5
    rho, f = ora.distance, sol.distance
    # the stopping rule brackets the distance: (1 - gap) f <= rho <= f
    assert (1 - sol.gap) * f <= rho * (1 + 1e-8) and rho <= f * (1 + 1e-8)
    # strong convexity of ||z||^2: ||d - d*||^2 <= ||d||^2 - rho^2 <= 2 gap ||d||^2
    d_err = np.linalg.norm((sol.p - sol.q) - (ora.p - ora.q))
    assert d_err <= math.sqrt(2 * sol.gap) * f + 1e-7 * f
    for w in (sol.weights_p, sol.weights_q):
        assert w.min() >= 0 and w.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("seed", [3, 4])
def test_svm_against_hard_margin_oracle(seed: int) -> None:
    X, y = labelled(*gaussian_pair(25, 3, 5.0, seed))
    ora = hard_margin_primal(X, y).solve()
    sol = gilbert_svm(X, y, tol=1e-5, max_iter=1_000_000, method="gilbert")
    assert sol.status == "optimal" and ora.status == "optimal"
    gap = sol.history["gap"][-1]
    assert gap <= 1e-5
    # w = 2 d / ||d||^2: relative error about 2 ||d - d*|| / ||d|| <= 2 sqrt(2 gap)
    rel = 2 * math.sqrt(2 * gap) + 1e-6
    w_scale = np.linalg.norm(ora.w)
    assert np.linalg.norm(sol.w - ora.w) <= rel * w_scale
    R = np.abs(X).max() * math.sqrt(X.shape[1])
    assert abs(sol.b - ora.b) <= rel * w_scale * R
    np.testing.assert_allclose(sol.alpha, ora.alpha, atol=10 * rel * ora.alpha.max())
    # 1/2 ||w||^2 = 2 / ||d||^2 with ||d|| bracketed to relative gap
    assert sol.dual_objective == pytest.approx(0.5 * w_scale**2, rel=3 * gap + 1e-7)
    yf = y * sol.decision_function(X)
    assert yf.min() >= 1 - rel * w_scale * R


@pytest.mark.parametrize("store_gram", [True, False], ids=["gram", "columns"])
def test_kernel_svm_against_dual_oracle(store_gram: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    X, y, ora = rbf_disc_case(30, store_gram, monkeypatch)
    sol = gilbert_svm(X, y, kernel="rbf", gamma=2.0, tol=1e-4, max_iter=1_000_000,
                      method="gilbert")
    assert sol.status == "optimal" and sol.w is None and sol.method == "gilbert"
    # D = 2 / ||d||^2 and ||d|| is bracketed to the relative gap 1e-4
    assert sol.dual_objective == pytest.approx(ora.dual_objective, rel=3e-4)
    f_ora = ora.decision_function(X)
    np.testing.assert_allclose(sol.decision_function(X), f_ora, atol=1e-2 * np.abs(f_ora).max())
    assert np.array_equal(sol.predict(X), y)


# --- seed 001's analysis ---------------------------------------------------------------------


def test_gilbert_rate_bound_and_monotone_distance() -> None:
    rng = np.random.default_rng(11)
    Q = rng.standard_normal((60, 6))
    Q[:, 0] += 2.5  # the origin lies outside the hull
    rho = oracle_polytope(Q).distance
    D = pdist(Q).max()
    sol = quiet(gilbert, Q, tol=1e-14, max_iter=3000, history_every=1)
    it, f, gap = (np.asarray(sol.history[k]) for k in ("iteration", "distance", "gap"))
    assert it[0] == 0 and it[-1] == sol.iterations and len(it) == sol.iterations + 1
    assert np.all(np.diff(f) <= 1e-12 * f[0])  # f_k = ||x_k|| never increases
    k = it + 1  # seed numbering: x_1 = q_0 is the start
    assert np.all(f - rho <= 2 * D**2 / (rho * (k + 1)) + 1e-9)  # h_k <= 2 D^2 / (rho (k+1))
    omega = f * (1 - gap)  # the lower bound <x_k, q_k> / ||x_k||
    assert np.all(omega <= rho * (1 + 1e-9)) and np.all(rho <= f * (1 + 1e-9))
    # the seed's second argument: among steps k+1..2k some gap g_i = f_i - omega_i is at most
    # 2 D^2 / (rho sqrt(k (k + 1)))
    g_abs = f * gap
    for kk in range(1, len(k) // 2):
        assert g_abs[kk + 1 : 2 * kk + 1].min() <= 2 * D**2 / (rho * math.sqrt(kk * (kk + 1)))


def test_history_is_bounded() -> None:
    P, Q = gaussian_pair(40, 10, 6.0, 5)
    sol = quiet(gilbert_hulls, P, Q, tol=1e-15, max_iter=10_000, finish=False)
    assert sol.status == "max_iter"
    it = np.asarray(sol.history["iteration"])
    # Every 5th iteration (10,000 / 2,000), plus a log-spaced grid: every iteration below 64,
    # then 64 per doubling (k = 64..127 step 1, 128..255 step 2, ...), bounded by 64 (log2 + 1).
    assert it[0] == 0 and it[-1] == 10_000 and np.all(np.diff(it) > 0)
    assert set(range(0, 10_001, 5)) <= set(it.tolist())
    assert set(range(0, 128)) <= set(it.tolist())
    assert len(it) <= 2001 + 64 * (10_000).bit_length()
    assert np.all(np.diff(it[it >= 64]) <= np.maximum(it[it >= 64][:-1] // 64, 5))


# --- max_iter, bad input, inputs unchanged ---------------------------------------------------


def test_max_iter_warns_and_returns() -> None:
    P, Q = gaussian_pair(50, 10, 4.0, 0)
    X, y = labelled(P, Q)
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        hp = gilbert_hulls(P, Q, tol=1e-12, max_iter=3, finish=False)
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        poly = gilbert(P - Q, tol=1e-12, max_iter=3)
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        svm = gilbert_svm(X, y, tol=1e-12, max_iter=3, finish=False, method="gilbert")
    for sol in (hp, poly, svm):
        assert sol.status == "max_iter" and sol.iterations == 3
    assert hp.gap > 1e-12 and hp.weights_p.sum() == pytest.approx(1.0)
    assert np.isfinite(svm.b) and svm.alpha.min() >= 0


P2 = np.array([[0.0, 0.0], [1.0, 1.0]])
BAD_INPUTS = [
    (gilbert, ([[np.nan, 0.0]],), {}, "`Q` must be finite"),
    (gilbert, ([1.0, 2.0],), {}, "`Q` must be a 2-D array"),
    (gilbert, (P2,), {"tol": 0.0}, "`tol` must be positive"),
    (gilbert, (P2,), {"max_iter": 0}, "`max_iter` must be an integer >= 1"),
    (gilbert, (P2,), {"history_every": 0}, "`history_every` must be an integer >= 1"),
    (gilbert_hulls, (P2, [[1.0, 2.0, 3.0]]), {}, "`P` and `Q` must have the same dimension"),
    (gilbert_hulls, (P2, np.zeros((0, 2))), {}, "`Q` must have at least one row"),
    (gilbert_svm, (P2, [1.0, 2.0]), {}, "`y` must contain only the labels"),
    (gilbert_svm, (P2, [1.0, -1.0]), {"method": "smo"}, "`method` must be one of"),
    (gilbert_svm, (P2, [1.0, -1.0]), {"kernel": "tanh"}, "`kernel` must be one of"),
    (gilbert_svm, (P2, [1.0, -1.0]), {"kernel": "rbf", "gamma": -1.0}, "`gamma` must be"),
]


@pytest.mark.parametrize(("fn", "args", "kwargs", "match"), BAD_INPUTS)
def test_bad_input(fn, args, kwargs, match) -> None:  # noqa: ANN001
    with pytest.raises(ValueError, match=match):
        fn(*args, **kwargs)


def test_any_kernel_object_goes_through_the_kernel_engine() -> None:
    """A kernel object compiled code does not know (and an n too large for the stored Gram
    matrix) gives the built-in's answer: columns come from the one kernel engine."""
    from maxmargin import RBFKernel
    from maxmargin.algorithms import _nearest_point as nearest

    class Custom(RBFKernel):
        kind = KIND_GRAM  # not a formula the compiled code knows

    P, Q = gaussian_pair(40, 3, 5.0, 3)
    X, y = labelled(P, Q)
    for method in ("gilbert", "mdm"):
        a = gilbert_svm(X, y, method=method, kernel=Custom(0.2))
        b = gilbert_svm(X, y, method=method, kernel="rbf", gamma=0.2)
        saved = nearest.GRAM_MAX_BYTES
        nearest.GRAM_MAX_BYTES = 0  # columns on demand instead of the stored Gram matrix
        try:
            c = gilbert_svm(X, y, method=method, kernel=Custom(0.2))
        finally:
            nearest.GRAM_MAX_BYTES = saved
        assert a.status == b.status == c.status  # vanilla Gilbert: max_iter on all three
        assert a.dual_objective == pytest.approx(b.dual_objective, rel=1e-9)
        assert c.dual_objective == pytest.approx(b.dual_objective, rel=1e-4)
        if method == "mdm":
            assert c.status == "optimal"
            assert c.dual_objective == pytest.approx(b.dual_objective, rel=1e-7)


def test_inputs_unchanged() -> None:
    P, Q = gaussian_pair(10, 2, 4.0, 1)
    X, y = labelled(P, Q)
    copies = [a.copy() for a in (P, Q, X, y)]
    gilbert(P)
    gilbert_hulls(P, Q)
    gilbert_svm(X, y)
    gilbert_svm(X, y, kernel="rbf", gamma=0.5)
    for a, c in zip((P, Q, X, y), copies, strict=True):
        np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize("method", ["gilbert", "mdm"])
def test_the_exact_finish_certifies_a_stopped_run(method) -> None:
    # Three steps leave the nearest points far from optimal; the active-set finish from that
    # alpha must reach the oracle's optimum and say so (and nothing is left to warn about).
    P, Q = gaussian_pair(50, 10, 4.0, 0)
    X, y = labelled(P, Q)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = gilbert_svm(X, y, tol=1e-8, max_iter=3, method=method)
    ref = hard_margin_primal(X, y).solve()
    assert sol.status == "optimal" and "active-set" in sol.message
    assert sol.certificate.margin > 0 and sol.certificate.gap <= 1e-9
    assert sol.dual_objective == pytest.approx(ref.dual_objective, rel=1e-7)
    np.testing.assert_allclose(sol.w, ref.w, rtol=1e-6, atol=1e-8 * np.abs(ref.w).max())


@pytest.mark.parametrize("seed", range(12))
def test_gilbert_svm_defaults_solve_separable_clouds(seed):
    """``gilbert_svm(X, y)`` with every default ends optimal on separable Gaussian clouds
    (n 40-800, d 2-9: the house issue's report of defaults ending at max_iter), with the
    primal oracle's margin and no warning."""
    rng = np.random.default_rng(1000 + seed)
    n_per, d = int(rng.integers(20, 401)), int(rng.integers(2, 10))
    P, Q = gaussian_pair(n_per, d, sep=float(rng.uniform(10.0, 14.0)), seed=seed)
    X, y = labelled(P, Q)
    oracle = hard_margin_primal(X, y).solve()
    assert oracle.status == "optimal", oracle.message
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = gilbert_svm(X, y)
    assert sol.status == "optimal"
    assert np.linalg.norm(sol.w) == pytest.approx(np.linalg.norm(oracle.w), rel=1e-5)


def test_a_run_at_max_iter_that_its_certificate_confirms_is_optimal() -> None:
    """Random seed 708842732, case 53 (a linear hard margin on a slab, n = 108, d = 13): MDM
    reaches its 1,000,000-iteration cap at relative gap 5e-6 > tol = 1e-6, yet the answer's
    float64 certificate (margin > 0, gap 1.2e-10) confirms it: "optimal", as smo's status
    follows its certificate, with no warning (it used to be "max_iter")."""
    from maxmargin.tolerances import HULL_CERT_FACTOR
    from maxmargin.verification.campaign import random_case

    case = random_case(708842732, 53)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = gilbert_svm(case.X, case.y, method="mdm", kernel=case.make_kernel(), tol=1e-6)
    assert sol.iterations == 1_000_000 and sol.status == "optimal"
    assert "max_iter=1000000 reached" in sol.message and "confirms the answer" in sol.message
    assert sol.certificate.margin > 0 and sol.certificate.gap <= HULL_CERT_FACTOR * 1e-6
