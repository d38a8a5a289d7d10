"""``l1_cdn`` (LIBLINEAR's L1-regularised squared hinge by CDN) against the CVXPY oracle of
the problem, scikit-learn's ``LinearSVC(penalty="l1")``, and its own properties."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_iris
from sklearn.svm import LinearSVC
from test_dcd import problem  # labels from a noisy random hyperplane, dense or CSR

from maxmargin import MaxMarginLinearClassifier
from maxmargin.algorithms import l1_cdn
from maxmargin.certificate import certify_liblinear, liblinear_objectives, liblinear_rows
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.formulations import liblinear_primal


def primal(w_tilde, X, y, C, s):
    """``P(w~)`` recomputed here from the rows LIBLINEAR sees."""
    return liblinear_objectives(w_tilde, liblinear_rows(X, s), y, np.broadcast_to(C, y.shape),
                                "squared_hinge", "l1")[0]


# --- the oracle ---------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(4, 40), d=st.integers(1, 6),
       sparse=st.booleans(), s=st.sampled_from([1.0, None, 3.0]), weighted=st.booleans(),
       C=st.sampled_from([0.01, 0.3, 1.0, 10.0]))
def test_agrees_with_the_oracle(seed, n, d, sparse, s, weighted, C):
    X, y = problem(n, d, seed=seed, sparse=sparse)
    sw = np.random.default_rng(seed).uniform(0.2, 3.0, n) if weighted else None
    res = l1_cdn(X, y, C, intercept_scaling=s, sample_weight=sw, tol=1e-8, random_state=seed)
    assert res.status == "optimal" and res.certificate.gap <= 1e-8
    assert res.method == "cdn/l1/squared_hinge" and res.penalty == "l1"
    box = C * (np.ones(n) if sw is None else sw)
    ref = liblinear_primal(X, y, C, penalty="l1", intercept_scaling=s, sample_weight=sw).solve()
    mine = primal(res.w_tilde, X, y, box, s)
    assert mine == pytest.approx(res.primal_objective, rel=1e-12)
    assert mine <= ref.primal_objective * (1 + 1e-7) + 1e-12
    assert res.dual_objective <= ref.primal_objective * (1 + 1e-12) + 1e-12  # weak duality
    if s is None:
        assert res.b == 0.0 and res.w_tilde.size == d
    else:
        assert res.b == pytest.approx(s * res.w_tilde[-1], rel=1e-15)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("s", [1.0, None])
def test_the_solution_is_sparse_and_matches_the_oracle_support(sparse, s):
    X, y = problem(80, 12, seed=5, sparse=sparse)
    res = l1_cdn(X, y, 0.05, intercept_scaling=s, tol=1e-10)
    ref = liblinear_primal(X, y, 0.05, penalty="l1", intercept_scaling=s).solve()
    assert res.status == "optimal"
    assert np.count_nonzero(res.w_tilde) < res.w_tilde.size  # the L1 penalty zeroes weights
    np.testing.assert_allclose(res.w_tilde, ref.w_tilde, atol=1e-5)


# --- LinearSVC ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("sparse", [False, True])
def test_no_worse_than_linearsvc(seed, sparse):
    X, y = problem(200, 15, seed=seed, sparse=sparse)
    res = l1_cdn(X, y, 0.5, tol=1e-8, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peer = LinearSVC(penalty="l1", loss="squared_hinge", dual=False, C=0.5, tol=1e-8,
                         max_iter=100_000, random_state=seed).fit(X, y)
    theirs = primal(np.append(peer.coef_.ravel(), peer.intercept_[0]), X, y, 0.5, 1.0)
    assert res.status == "optimal"
    assert res.primal_objective <= theirs * (1 + 1e-7)
    assert res.dual_objective <= theirs * (1 + 1e-12)
    assert res.primal_objective == pytest.approx(theirs, rel=1e-5)


# --- properties -------------------------------------------------------------------------------


def test_same_seed_same_bits_and_dense_sparse_agree():
    X, y = problem(150, 8, seed=11, sparse=True)
    first = l1_cdn(X, y, 1.0, tol=1e-9, random_state=4)
    again = l1_cdn(X, y, 1.0, tol=1e-9, random_state=4)
    np.testing.assert_array_equal(first.w_tilde, again.w_tilde)
    assert first.iterations == again.iterations
    dense = l1_cdn(X.toarray(), y, 1.0, tol=1e-9, random_state=4)
    assert dense.primal_objective == pytest.approx(first.primal_objective, rel=1e-8)
    other = l1_cdn(X, y, 1.0, tol=1e-9, random_state=5)
    assert other.primal_objective == pytest.approx(first.primal_objective, rel=1e-8)


def test_the_certificate_is_the_judges_and_the_inputs_are_unchanged():
    X, y = problem(60, 6, seed=2)
    X0, y0 = X.copy(), y.copy()
    res = l1_cdn(X, y, 2.0, tol=1e-6)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    cert = certify_liblinear(res.w_tilde, liblinear_rows(X, 1.0), y, 2.0, penalty="l1")
    assert cert.gap == pytest.approx(res.certificate.gap, rel=1e-6, abs=1e-15)
    assert cert.gap <= 1e-6


def test_correlated_features_are_finished_exactly():
    """Raw iris: CDN alone needs thousands of passes; the finish on the support certifies."""
    X, y = load_iris(return_X_y=True)
    for c in range(3):
        res = l1_cdn(X, np.where(y == c, 1.0, -1.0), 1.0, tol=1e-10, max_iter=1000)
        assert res.status == "optimal" and res.certificate.gap <= 1e-10


def ill_conditioned(seed):
    """A small problem of the kind CDN alone crawls on: features scaled by ``exp(U(-3, 3))``,
    every other set offset by up to 1e4 (nearly collinear columns), some rounded, some 70%
    sparse (CSR), ``C`` from 1 to 1e3."""
    rng = np.random.default_rng([20261207, seed])
    n, d = int(rng.integers(20, 120)), int(rng.integers(3, 25))
    X = rng.standard_normal((n, d)) * np.exp(rng.uniform(-3.0, 3.0, d))
    if seed % 2:
        X += rng.standard_normal(d) * 10.0 ** rng.uniform(2.0, 4.0)
    if seed % 3 == 0:
        X = np.round(X, 1)
    y = np.where(X @ rng.standard_normal(d) + rng.normal(size=n) > 0.0, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    if seed % 4 == 1:
        X[rng.random(X.shape) < 0.7] = 0.0
        X = sp.csr_matrix(X)
    return X, y, 10.0 ** rng.uniform(0.0, 3.0)


@pytest.mark.parametrize("s", [None, 1.0])
@pytest.mark.parametrize("seed", range(12))
def test_ill_conditioned_problems_are_certified_and_match_the_oracle(seed, s):
    """Before the proximal-Newton finish, 9 of these 24 ended ``max_iter`` after 100,000
    passes with gaps up to 1; the rest took up to 95,000 passes."""
    X, y, C = ill_conditioned(seed)
    res = l1_cdn(X, y, C, intercept_scaling=s, tol=1e-6, max_iter=2000)
    assert res.status == "optimal" and res.certificate.gap <= 1e-6
    ref = liblinear_primal(X, y, C, loss="squared_hinge", penalty="l1",
                           intercept_scaling=s).solve()
    assert res.primal_objective == pytest.approx(ref.primal_objective, rel=1e-5)
    assert primal(res.w_tilde, X, y, C, s) == pytest.approx(res.primal_objective, rel=1e-12)
    assert res.dual_objective <= ref.primal_objective * (1 + 1e-9)  # weak duality both ways
    assert ref.dual_objective <= res.primal_objective * (1 + 1e-9)
    judged = certify_liblinear(res.w_tilde, liblinear_rows(X, s), y, C, penalty="l1",
                               alpha=res.alpha)  # the finish's dual point, when it certified
    assert judged.gap <= 1e-6


#: Twelve points 5.2e4 from the origin, spread about 1 (a symmetry stress run's case).
FAR_X = np.array([
    [18303.931687007473, 31852.804652361505, -37491.47442565898],
    [18303.904282410436, 31850.008819217626, -37493.03254888606],
    [18304.60281506422, 31854.180016659102, -37491.294793801826],
    [18304.22691994559, 31850.11102826275, -37489.86640444374],
    [18302.194095215465, 31850.6702930769, -37491.7153598839],
    [18304.681386476295, 31853.874472575673, -37489.23939432998],
    [18303.294200831708, 31852.391805364532, -37490.57169806488],
    [18304.24657651842, 31850.245153065836, -37492.53071906458],
    [18301.738017629483, 31851.79621050938, -37490.84443086659],
    [18302.81790408278, 31849.802251665933, -37493.805299537344],
    [18302.79810870008, 31850.31405107031, -37491.48426880382],
    [18302.462178969592, 31850.492943794274, -37493.77222328277]])
FAR_Y = np.array([1.0, -1.0, 1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, -1.0, -1.0, -1.0])


def far_problem(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The stress case (``seed < 0``) or overlapping clouds moved ``10^U(3, 6)`` from the
    origin in a random direction."""
    if seed < 0:
        return FAR_X, FAR_Y
    rng = np.random.default_rng(seed)
    n, d = 12 + 8 * seed, 3
    X = rng.normal(size=(n, d)) + 0.7 * np.where(rng.random(n) < 0.5, 1.0, -1.0)[:, None]
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    u = rng.normal(size=d)
    return X + 10.0 ** rng.uniform(3, 6) * u / np.linalg.norm(u), y


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("seed", [-1, 0, 1, 2, 3])
def test_a_change_of_units_gives_the_same_answer(seed, sparse):
    """``X -> s X`` with ``C -> C / s`` (``||w||_1 + C sum_i (1 - y_i w . x_i)_+^2``: the
    solution is ``w / s``, the objective ``P / s``): "optimal" and the same objective to the
    tolerance for ``s`` from 1e-4 to 1e4, on points far from the origin (the stress case: at
    ``s = 1e4`` the steps fell below LIBLINEAR's absolute ``|d| < 1e-12`` and the run stalled
    at its first step for 10^5 passes, relative gap 0.92). The far offset leaves the objective
    flat along the features (``w`` itself may differ within the tolerance)."""
    X, y = far_problem(seed)
    C, tol = 0.41238408817719074, 1e-3
    bias = None if seed % 2 else 1.0  # the bias column is a feature: scaled too
    base = l1_cdn(sp.csr_matrix(X) if sparse else X, y, C=C, tol=tol, intercept_scaling=bias)
    assert base.status == "optimal"
    for s in (1e-4, 1e-2, 1e2, 1e4):
        Xs = X * s
        sol = l1_cdn(sp.csr_matrix(Xs) if sparse else Xs, y, C=C / s, tol=tol,
                     intercept_scaling=None if bias is None else s * bias)
        assert sol.status == "optimal", (s, sol.message)
        assert sol.certificate.gap <= tol
        assert s * sol.certificate.primal_objective == pytest.approx(
            base.certificate.primal_objective, rel=2 * tol)


def test_the_finish_line_search_is_exact():
    """``exact_step`` against a fine grid of the convex piecewise quadratic it minimises."""
    exact_step = importlib.import_module(l1_cdn.__module__).exact_step
    rng = np.random.default_rng(11)
    grid = np.linspace(0.0, 20.0, 4001)
    for _ in range(200):
        p, n = int(rng.integers(1, 6)), int(rng.integers(1, 8))
        w = rng.standard_normal(p) * (rng.random(p) < 0.6)
        d, b, e = 3.0 * rng.standard_normal(p), rng.standard_normal(n), rng.standard_normal(n)
        C = rng.uniform(0.01, 3.0, n)

        def phi(t, w=w, d=d, b=b, e=e, C=C):
            return np.abs(w + t * d).sum() + C @ np.maximum(b - t * e, 0.0) ** 2

        t = exact_step(w, d, b, e, C)
        assert t >= 0.0
        assert phi(t) <= min(phi(g) for g in grid) + 1e-12


def test_max_iter_warns_and_says_so(monkeypatch):
    """One pass, the exact finish switched off (with it, one pass certifies iris)."""
    monkeypatch.setattr(importlib.import_module(l1_cdn.__module__), "FINISH_STEPS", 0)
    X, y = load_iris(return_X_y=True)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        res = l1_cdn(X, np.where(y == 1, 1.0, -1.0), 1e4, tol=1e-12, max_iter=1)
    assert res.status == "max_iter" and res.iterations == 1


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(C=0.0), "`C`"), (dict(C=-1.0), "`C`"), (dict(tol=0.0), "`tol`"),
    (dict(intercept_scaling=0.0), "`intercept_scaling`"), (dict(max_iter=0), "`max_iter`"),
    (dict(sample_weight=np.ones(3)), "`sample_weight`"), (dict(random_state=-1), "random_state"),
])
def test_bad_input(kwargs, match):
    X, y = problem(10, 3)
    with pytest.raises((ValueError, TypeError), match=match):
        l1_cdn(X, y, **kwargs)


def test_bad_labels_and_shapes():
    X, y = problem(10, 3)
    with pytest.raises(ValueError, match="`y`"):
        l1_cdn(X, np.arange(10.0))
    with pytest.raises(ValueError):
        l1_cdn(X, y[:5])
    with pytest.raises(ValueError, match="`X`"):
        l1_cdn(np.full((10, 3), np.nan), y)


# --- the estimator ------------------------------------------------------------------------------


@pytest.mark.parametrize("class_weight", [None, "balanced", {0: 3.0}])
def test_estimator_uses_cdn_and_agrees_with_its_oracle(class_weight):
    X, y = load_iris(return_X_y=True)
    kw = dict(penalty="l1", dual=False, tol=1e-8, class_weight=class_weight, random_state=0)
    fast = MaxMarginLinearClassifier(**kw).fit(X, y)
    slow = MaxMarginLinearClassifier(**kw, solver="cvxpy").fit(X, y)
    assert all(s.method == "cdn/l1/squared_hinge" for s in fast.solutions_)
    assert all(s.status == "optimal" for s in fast.solutions_ + slow.solutions_)
    for mine, ref in zip(fast.solutions_, slow.solutions_, strict=True):
        assert mine.primal_objective <= ref.primal_objective * (1 + 1e-7)
    np.testing.assert_allclose(fast.coef_, slow.coef_, atol=1e-4)


def test_estimator_refuses_mismatched_solvers():
    X, y = problem(20, 3)
    with pytest.raises(ValueError, match="`solver`"):
        MaxMarginLinearClassifier(solver="cdn").fit(X, y)
    with pytest.raises(ValueError, match="`solver`"):
        MaxMarginLinearClassifier(penalty="l1", dual=False, solver="dcd").fit(X, y)
