"""maxmargin.certify / certify_dual: other solvers' fitted models judged in their own problem.

Independent answers: maxmargin's SMO at tol 1e-8 in float64 (the SVM dual), the CVXPY oracle of
LIBLINEAR's problem (formulations/liblinear.py), a hand-solved two-point problem, and weak
duality (every dual bound below every primal value) on random points.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR, LinearSVC, NuSVC

import maxmargin
from maxmargin import certify, certify_dual
from maxmargin.algorithms import smo
from maxmargin.certificate import certify_liblinear, liblinear_rows
from maxmargin.certify_models import ModelCertificate
from maxmargin.estimators import MaxMarginClassifier
from maxmargin.formulations import liblinear_primal


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return X, y, StandardScaler().fit_transform(X)


def _smo_dual(X, y01, C=1.0, kernel="linear", positive=1, **kw):
    y = np.where(y01 == positive, 1.0, -1.0)
    return smo(X, y, C=C, kernel=kernel, tol=1e-8, precision="double", **kw).dual_objective


# --- the issue's findings ---------------------------------------------------------------------
def test_libsvm_on_raw_breast_cancer_is_refuted(cancer):
    X, y, _ = cancer
    cert = certify(SVC(kernel="linear").fit(X, y), X, y)
    assert isinstance(cert, ModelCertificate) and isinstance(cert, maxmargin.certificate
                                                             .Certificate)
    assert 0.9 < cert.kkt_violation < 1.2  # m - M ~ 1.03, float64
    assert cert.verdict == "not optimal" and not cert.optimal
    # the dual value is low: the true optimum (SMO in float64) is ~1.5 % higher
    best = _smo_dual(X, y)
    assert 0.01 < (best - cert.dual_objective) / best < 0.02
    assert cert.label == "1 vs 0" and cert.problem == "svm_dual"


def test_libsvm_on_standardised_breast_cancer_is_certified(cancer):
    _, y, Xs = cancer
    cert = certify(SVC(kernel="linear", tol=1e-6).fit(Xs, y), Xs, y)
    assert cert.verdict == "optimal" and cert.kkt_violation < 1e-5
    assert cert.feasibility < 1e-12 and cert.intercept_error < 1e-6
    best = _smo_dual(Xs, y)
    assert abs(cert.dual_objective - best) <= 1e-7 * abs(best)
    assert cert.gap < 1e-6


def test_tight_svc_matches_smo_in_every_kernel(cancer):
    _, y, Xs = cancer
    Xs = Xs[:200, :8]
    y = y[:200]
    for kernel, kw in (("rbf", {"gamma": 0.1}), ("poly", {"gamma": 0.2, "degree": 2,
                                                          "coef0": 1.0})):
        model = SVC(kernel=kernel, C=2.0, tol=1e-8, **kw).fit(Xs, y)
        cert = certify(model, Xs, y)
        best = _smo_dual(Xs, y, C=2.0, kernel=kernel, **kw)
        assert cert.optimal, cert.summary()
        assert abs(cert.dual_objective - best) <= 1e-7 * abs(best)


def test_gamma_scale_is_read_from_the_fitted_model(cancer):
    _, y, Xs = cancer
    X2 = 5.0 * Xs[:150, :5]
    model = SVC(kernel="rbf", tol=1e-8).fit(X2, y[:150])  # gamma="scale" resolved at fit
    cert = certify(model, X2, y[:150])
    assert cert.optimal
    assert abs(cert.dual_objective - _smo_dual(X2, y[:150], kernel="rbf",
                                               gamma=model._gamma)) < 1e-7 * cert.dual_objective


# --- the two-point worked example -------------------------------------------------------------
def test_certify_dual_worked_example():
    # x = 0 (y = -1), x = 2 (y = +1): w = 1, b = -1, alpha = (1/2, 1/2), D = 1/2
    X = np.array([[0.0], [2.0]])
    y = np.array([-1.0, 1.0])
    cert = certify_dual([0.5, 0.5], -1.0, X, y, C=1.0)
    assert cert.kkt_violation == 0.0 and cert.gap == 0.0 and cert.optimal
    assert cert.dual_objective == 0.5 and cert.intercept_error == 0.0
    # alpha scaled by 0.9: g = (0, 1.8), r = y - g = (-1, -0.8): m = -0.8, M = -1, m - M = 0.2
    bad = certify_dual([0.45, 0.45], -1.0, X, y, C=1.0)
    assert bad.kkt_violation == pytest.approx(0.2, abs=1e-15) and not bad.optimal
    assert bad.intercept_error == 0.0  # b = -1 lies between M = -1 and m = -0.8
    # a wrong intercept is judged: b = 0 lies 0.8 above [-1, -0.8]... of the exact answer
    shifted = certify_dual([0.5, 0.5], 0.0, X, y, C=1.0)
    assert shifted.intercept_error == pytest.approx(1.0) and shifted.verdict == "not optimal"
    assert certify_dual([0.5, 0.5], None, X, y, C=1.0).optimal  # b not judged
    hard = certify_dual([0.5, 0.5], -1.0, X, y, C=None)
    assert hard.problem == "svm_dual/hard_margin" and hard.optimal and hard.margin == 1.0


def test_certify_dual_sample_weight_and_kernel_keywords():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1.0, -1.0)
    w = rng.uniform(0.5, 2.0, 40)
    sol = smo(X, y, C=0.7, kernel="rbf", gamma=0.5, tol=1e-9, precision="double",
              sample_weight=w)
    cert = certify_dual(sol.alpha, sol.b, X, y, 0.7, kernel="rbf", gamma=0.5, sample_weight=w,
                        tol=1e-6)
    assert cert.optimal and cert.kkt_violation < 1e-8
    # without the weights the same alpha leaves the box or the KKT conditions
    unweighted = certify_dual(sol.alpha, sol.b, X, y, 0.7, kernel="rbf", gamma=0.5, tol=1e-6)
    assert not unweighted.optimal


@pytest.mark.parametrize("kwargs, name", [
    ({"alpha": [0.5]}, "alpha"),
    ({"alpha": [0.5, np.nan]}, "alpha"),
    ({"alpha": [[0.5, 0.5]]}, "alpha"),
    ({"b": math.nan}, "b"),
    ({"b": "one"}, "b"),
    ({"C": -1.0}, "C"),
    ({"y": [0.0, 1.0]}, "y"),
    ({"X": [[0.0], [np.inf]]}, "X"),
    ({"tol": 0.0}, "tol"),
    ({"sample_weight": [1.0, -1.0]}, "sample_weight"),
    ({"kernel": "sigmoid"}, "kernel"),
])
def test_certify_dual_bad_input(kwargs, name):
    args = {"alpha": [0.5, 0.5], "b": -1.0, "X": [[0.0], [2.0]], "y": [-1.0, 1.0], "C": 1.0}
    args.update(kwargs)
    with pytest.raises(ValueError, match=f"`{name}`"):
        certify_dual(**args)


def test_certify_dual_leaves_inputs_alone():
    X = np.array([[0.0], [2.0]])
    y = np.array([-1.0, 1.0])
    alpha = np.array([0.5, 0.5])
    copies = X.copy(), y.copy(), alpha.copy()
    certify_dual(alpha, -1.0, X, y, C=1.0)
    for a, b in zip((X, y, alpha), copies, strict=True):
        assert np.array_equal(a, b)


# --- multi-class, weights, other SVC-like models ----------------------------------------------
def test_multiclass_svc_one_certificate_per_pair():
    X, y = load_iris(return_X_y=True)
    model = SVC(kernel="rbf", C=3.0, tol=1e-8).fit(X, y)
    certs = certify(model, X, y)
    assert [c.label for c in certs] == ["0 vs 1", "0 vs 2", "1 vs 2"]
    for c, (i, j) in zip(certs, [(0, 1), (0, 2), (1, 2)], strict=True):
        pair = (y == i) | (y == j)
        best = _smo_dual(X[pair], y[pair], C=3.0, kernel="rbf", positive=i, gamma=model._gamma)
        assert c.optimal, c.summary()
        assert abs(c.dual_objective - best) <= 1e-7 * best


def test_precomputed_callable_and_sparse_svc():
    import scipy.sparse as sp
    from sklearn.metrics.pairwise import rbf_kernel

    X, y = load_iris(return_X_y=True)
    K = rbf_kernel(X, X, gamma=0.5)
    sw = np.ones(y.size)
    sw[::5] = 0.0
    models = [
        (SVC(kernel="precomputed", tol=1e-8).fit(K, y), K, None),
        (SVC(kernel="precomputed", tol=1e-8).fit(K, y, sample_weight=sw), K, sw),
        (SVC(kernel=lambda A, B: rbf_kernel(A, B, gamma=0.5), tol=1e-8).fit(X, y), X, None),
        (SVC(kernel="rbf", gamma=0.5, tol=1e-8).fit(X, y), X, None),
    ]
    reference = [c.dual_objective for c in certify(models[3][0], X, y)]
    for model, data, weights in models:
        certs = certify(model, data, y, sample_weight=weights)
        assert all(c.optimal for c in certs), [c.summary() for c in certs]
        if weights is None:
            assert [c.dual_objective for c in certs] == pytest.approx(reference, rel=1e-7)
    Xs = sp.csr_matrix(X)
    certs = certify(SVC(kernel="linear", tol=1e-8).fit(Xs, y), Xs, y)
    dense = certify(SVC(kernel="linear", tol=1e-8).fit(X, y), X, y)
    assert all(c.optimal for c in certs)
    assert [c.dual_objective for c in certs] == pytest.approx(
        [c.dual_objective for c in dense], rel=1e-7)


def test_class_and_sample_weights_are_the_model_boxes(cancer):
    _, y, Xs = cancer
    X, y = Xs[:250, :6], y[:250]
    sw = np.random.default_rng(0).uniform(0.2, 3.0, y.size)
    cw = {0: 2.0, 1: 0.5}
    model = SVC(kernel="linear", tol=1e-8, class_weight=cw).fit(X, y, sample_weight=sw)
    cert = certify(model, X, y, sample_weight=sw)
    box = np.where(y == 0, 2.0, 0.5) * sw
    best = smo(X, np.where(y == 1, 1.0, -1.0), C=1.0, tol=1e-9, precision="double",
               sample_weight=box).dual_objective
    assert cert.optimal and abs(cert.dual_objective - best) <= 1e-7 * best
    assert not certify(model, X, y).optimal  # the weights are part of the problem


def test_zero_weight_samples_are_left_out(cancer):
    _, y, Xs = cancer
    X, y = Xs[:120, :4], y[:120]
    sw = np.ones(y.size)
    sw[::7] = 0.0
    model = SVC(kernel="linear", tol=1e-8).fit(X, y, sample_weight=sw)
    assert certify(model, X, y, sample_weight=sw).optimal


def test_maxmarginclassifier_binary_multiclass_and_hard_margin():
    X, y = load_iris(return_X_y=True)
    clf = MaxMarginClassifier(kernel="linear", tol=1e-6).fit(X, y)
    certs = certify(clf, X, y, tol=1e-5)
    own = [s.certificate.kkt_violation for s in clf.solutions_]
    assert [c.kkt_violation for c in certs] == pytest.approx(own, rel=1e-6, abs=1e-12)
    assert all(c.optimal for c in certs)
    sep = y < 2  # setosa vs versicolor: separable
    hard = MaxMarginClassifier(solver="mdm", kernel="linear").fit(X[sep], y[sep])
    cert = certify(hard, X[sep], y[sep])
    assert cert.problem == "svm_dual/hard_margin" and cert.optimal
    with pytest.raises(ValueError, match="perceptron"):
        certify(MaxMarginClassifier(solver="perceptron", kernel="linear").fit(X[sep], y[sep]),
                X[sep], y[sep])


class _SVCLike:
    """Any object with SVC's fitted attributes (what certify reads)."""

    def __init__(self, model):
        for name in ("classes_", "support_", "support_vectors_", "dual_coef_", "intercept_",
                     "n_support_", "C", "kernel", "degree", "coef0", "class_weight_"):
            setattr(self, name, getattr(model, name))
        self.gamma = model._gamma


def test_an_object_with_svc_attributes(cancer):
    _, y, Xs = cancer
    model = SVC(kernel="rbf", tol=1e-8).fit(Xs[:200], y[:200])
    mine, theirs = certify(_SVCLike(model), Xs[:200], y[:200]), certify(model, Xs[:200],
                                                                         y[:200])
    assert mine.kkt_violation == theirs.kkt_violation and mine.optimal


def test_certify_refuses_what_it_cannot_judge(cancer):
    X, y, Xs = cancer
    with pytest.raises(ValueError, match="`model`"):
        certify(SVC(), Xs, y)  # not fitted
    with pytest.raises(ValueError, match="`model`"):  # a regressor (NuSVC: certified now)
        certify(SVR().fit(Xs[:100], y[:100]), Xs[:100], y[:100])
    nu = certify(NuSVC(kernel="linear", tol=1e-8).fit(Xs[:100], y[:100]), Xs[:100], y[:100])
    assert nu.problem == "nu_svc" and nu.verdict == "optimal"
    with pytest.raises(ValueError, match="sigmoid"):
        certify(SVC(kernel="sigmoid").fit(Xs[:100], y[:100]), Xs[:100], y[:100])
    model = SVC(kernel="linear").fit(Xs[:100], y[:100])
    with pytest.raises(ValueError, match="`X` is not the data"):
        certify(model, Xs[100:200], y[100:200])
    with pytest.raises(ValueError, match="`y`"):
        certify(model, Xs[:100], y[:100] + 5)
    with pytest.raises(ValueError, match="`y`"):
        certify(model, Xs[:100], y[:99])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cs = LinearSVC(multi_class="crammer_singer").fit(X[:50, :3], np.arange(50) % 3)
    with pytest.raises(ValueError, match="Crammer"):
        certify(cs, X[:50, :3], np.arange(50) % 3)
    with pytest.raises(ValueError, match="features"):
        certify(LinearSVC().fit(Xs[:50], y[:50]), Xs[:50, :5], y[:50])
    from sklearn.linear_model import SGDClassifier

    with pytest.raises(ValueError, match="neither SVC's fitted attributes"):
        certify(SGDClassifier(loss="hinge").fit(Xs[:50], y[:50]), Xs[:50], y[:50])


def test_sklearnex_svc(cancer):
    sklearnex_svm = pytest.importorskip("sklearnex.svm")  # optional dependency (bench extra)
    _, y, Xs = cancer
    model = sklearnex_svm.SVC(kernel="rbf", tol=1e-6).fit(Xs, y)
    cert = certify(model, Xs, y)
    best = _smo_dual(Xs, y, kernel="rbf", gamma=model._gamma)
    assert cert.optimal and abs(cert.dual_objective - best) <= 1e-6 * best


# --- LinearSVC: LIBLINEAR's own problem -------------------------------------------------------
@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("scaling", [1.0, 3.0, None])
def test_linearsvc_tight_is_certified_and_capped_refuted(cancer, loss, scaling):
    _, y, Xs = cancer
    X, y = Xs[:300, :10], y[:300]
    kw = {"fit_intercept": scaling is not None, "intercept_scaling": scaling or 1.0,
          "loss": loss, "dual": True, "random_state": 0}
    tight = LinearSVC(tol=1e-10, max_iter=1_000_000, **kw).fit(X, y)
    oracle = liblinear_primal(X, np.where(y == 1, 1.0, -1.0), 1.0, loss=loss,
                              intercept_scaling=scaling).solve()
    assert oracle.status == "optimal"
    cert = certify(tight, X, y, tol=1e-7)
    assert cert.optimal and cert.criterion == "gap", cert.summary()
    assert cert.problem == f"liblinear/l2/{loss}"
    assert abs(cert.primal_objective - oracle.primal_objective) <= 1e-7 * oracle.primal_objective
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        capped = LinearSVC(tol=1e-10, max_iter=3, **kw).fit(X, y)
    bad = certify(capped, X, y)
    assert not bad.optimal and bad.gap > 1e-3
    # the gap is a true bound: the objective really is that far above the optimum at most
    assert capped_excess(bad, oracle) <= bad.gap + 1e-12


def capped_excess(cert, oracle):
    return (cert.primal_objective - oracle.primal_objective) / max(1.0, cert.primal_objective)


def test_linearsvc_default_solver_and_weights():
    X, y = load_iris(return_X_y=True)
    Xs = StandardScaler().fit_transform(X)
    cw = {0: 2.0, 1: 1.0, 2: 0.3}
    sw = np.random.default_rng(1).uniform(0.5, 2.0, y.size)
    model = LinearSVC(tol=1e-10, max_iter=100_000, class_weight=cw).fit(Xs, y, sample_weight=sw)
    certs = certify(model, Xs, y, sample_weight=sw, tol=1e-7)
    assert [c.label for c in certs] == ["0 vs rest", "1 vs rest", "2 vs rest"]
    for k, c in enumerate(certs):
        # LIBLINEAR's one-vs-rest weights: the class's weight on its samples, 1 on the rest
        box = np.where(y == k, cw[k], 1.0) * sw
        oracle = liblinear_primal(Xs, np.where(y == k, 1.0, -1.0), 1.0, sample_weight=box
                                  ).solve()
        assert c.optimal, c.summary()
        assert abs(c.primal_objective - oracle.primal_objective) <= 1e-7 * oracle.primal_objective
    assert not all(c.optimal for c in certify(model, Xs, y, tol=1e-7))  # weights left out


def test_linearsvc_l1_penalty():
    X, y = load_breast_cancer(return_X_y=True)
    Xs = StandardScaler().fit_transform(X)[:, :12]
    model = LinearSVC(penalty="l1", dual=False, tol=1e-10, max_iter=100_000).fit(Xs, y)
    oracle = liblinear_primal(Xs, np.where(y == 1, 1.0, -1.0), 1.0, penalty="l1").solve()
    cert = certify(model, Xs, y, tol=1e-6)
    assert oracle.status == "optimal" and cert.optimal, cert.summary()
    assert cert.problem == "liblinear/l1/squared_hinge"
    assert abs(cert.primal_objective - oracle.primal_objective) <= 1e-6 * oracle.primal_objective


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), loss=st.sampled_from(["hinge", "squared_hinge"]),
       penalty=st.sampled_from(["l2", "l1"]))
def test_liblinear_certificate_obeys_weak_duality(seed, loss, penalty):
    """Any w: its certificate's dual bound is below the oracle's optimum and its primal value
    above the oracle's dual bound; at the oracle's own w the gap closes."""
    if penalty == "l1" and loss == "hinge":
        return
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(4, 40)), int(rng.integers(1, 6))
    X = rng.normal(size=(n, d)) * 10.0 ** rng.uniform(-2, 2)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    C = 10.0 ** rng.uniform(-2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oracle = liblinear_primal(X, y, C, loss=loss, penalty=penalty).solve()
    if oracle.status != "optimal":
        return
    rows = liblinear_rows(X, 1.0)
    slack = 1e-9 * max(1.0, abs(oracle.primal_objective))
    for w in (oracle.w_tilde, oracle.w_tilde + rng.normal(size=d + 1) * 10.0 ** rng.uniform(
            -6, 0) * max(1e-3, float(np.max(np.abs(oracle.w_tilde)))), np.zeros(d + 1)):
        cert = certify_liblinear(w, rows, y, C, loss=loss, penalty=penalty)
        assert cert.dual_objective <= oracle.primal_objective + slack
        assert cert.primal_objective >= oracle.dual_objective - slack
        assert cert.gap >= -1e-12
    assert oracle.certificate.gap <= 1e-7
