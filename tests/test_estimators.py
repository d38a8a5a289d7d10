"""maxmargin.estimators.MaxMarginClassifier: scikit-learn's estimator checks, SVC's attributes
and one-vs-one multi-class, weights as per-sample C, and use inside scikit-learn tools."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris, load_wine, make_blobs
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import check_estimator

import maxmargin
from maxmargin import ConvergenceWarning
from maxmargin.estimators import MaxMarginClassifier

#: SVC's own expected failure (scikit-learn lists it for SVC): with a stopping tolerance of
#: 1e-3, weights and repeated rows reach the same optimum only to that tolerance.
TOLERANCE = "solutions at tol=1e-3 agree to the tolerance, not to 1e-7 (as SVC)"
WEIGHTS = "the perceptron has no box bound: weights other than 0/1 are refused"
VOTES = ("one-vs-one vote ties (cycles) go to the first class as in LIBSVM, while the 'ovr' "
         "decision function breaks them by confidence (break_ties=False, as SVC)")
NON_SEPARABLE = "the hard-margin SVM does not exist on the checks' overlapping blobs"

EXPECTED = {
    "smo-rbf": (MaxMarginClassifier(), {
        "check_sample_weight_equivalence_on_dense_data": TOLERANCE,
        "check_sample_weight_equivalence_on_sparse_data": TOLERANCE}),
    "smo-linear": (MaxMarginClassifier(kernel="linear"), {
        "check_sample_weight_equivalence_on_dense_data": TOLERANCE,
        "check_sample_weight_equivalence_on_sparse_data": TOLERANCE}),
    "cvxpy": (MaxMarginClassifier(solver="cvxpy"), {
        "check_sample_weight_equivalence_on_dense_data": TOLERANCE,
        "check_sample_weight_equivalence_on_sparse_data": TOLERANCE}),
    "perceptron": (MaxMarginClassifier(solver="perceptron", kernel="linear"), {
        "check_sample_weights_not_overwritten": WEIGHTS,
        "check_sample_weight_equivalence_on_dense_data": WEIGHTS,
        "check_sample_weight_equivalence_on_sparse_data": WEIGHTS,
        "check_class_weight_classifiers": WEIGHTS}),
    "kernel_perceptron": (MaxMarginClassifier(solver="kernel_perceptron"), {
        "check_sample_weights_not_overwritten": WEIGHTS,
        "check_sample_weight_equivalence_on_dense_data": WEIGHTS,
        "check_sample_weight_equivalence_on_sparse_data": WEIGHTS,
        "check_class_weight_classifiers": WEIGHTS,
        "check_classifiers_train": VOTES}),
    "mdm": (MaxMarginClassifier(solver="mdm"), {
        "check_sample_weight_equivalence_on_dense_data": NON_SEPARABLE,
        "check_sample_weight_equivalence_on_sparse_data": NON_SEPARABLE,
        "check_estimator_sparse_tag": NON_SEPARABLE,
        "check_estimator_sparse_array": NON_SEPARABLE,
        "check_estimator_sparse_matrix": NON_SEPARABLE,
        "check_class_weight_classifiers": "the hard margin has no box bound for weights to scale",
        "check_classifiers_train": VOTES}),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_check_estimator(name: str) -> None:
    est, expected = EXPECTED[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        results = check_estimator(est, on_fail=None, expected_failed_checks=expected)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results
              if r["status"] == "failed"]
    assert not failed, failed


def test_reexported_and_default_parameters_are_svcs() -> None:
    assert maxmargin.MaxMarginClassifier is MaxMarginClassifier
    ours, svc = MaxMarginClassifier().get_params(), SVC().get_params()
    for key in ("C", "kernel", "degree", "gamma", "coef0", "tol", "class_weight", "cache_size",
                "shrinking", "decision_function_shape", "break_ties"):
        assert ours[key] == svc[key], key


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
@pytest.mark.parametrize("loader", [load_iris, load_wine])
def test_multiclass_one_vs_one_matches_svc(kernel: str, loader) -> None:
    X, y = loader(return_X_y=True)
    _, first = np.unique(X, axis=0, return_index=True)  # iris repeats rows: alpha not unique
    X, y = StandardScaler().fit_transform(X[np.sort(first)]), y[np.sort(first)]
    ours = MaxMarginClassifier(kernel=kernel, tol=1e-8).fit(X, y)
    svc = SVC(kernel=kernel, tol=1e-8).fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), svc.predict(X))
    np.testing.assert_array_equal(ours.support_, svc.support_)
    np.testing.assert_array_equal(ours.n_support_, svc.n_support_)
    np.testing.assert_allclose(ours.dual_coef_, svc.dual_coef_, atol=1e-5)
    np.testing.assert_allclose(ours.intercept_, svc.intercept_, atol=1e-5)
    np.testing.assert_allclose(ours.decision_function(X), svc.decision_function(X), atol=1e-5)
    ours.set_params(decision_function_shape="ovo")
    svc.set_params(decision_function_shape="ovo")
    np.testing.assert_allclose(ours.decision_function(X), svc.decision_function(X), atol=1e-5)
    if kernel == "linear":
        np.testing.assert_allclose(ours.coef_, svc.coef_, atol=1e-5)
    assert ours.n_iter_.shape == (3,) and len(ours.solutions_) == 3
    assert all(s.status == "optimal" and s.certificate.kkt_violation < 1e-8
               for s in ours.solutions_)


def test_binary_any_labels_sign_convention() -> None:
    X, y = make_blobs(80, centers=2, random_state=3, cluster_std=3.0)
    labels = np.array(["spam", "ham"])[y]
    ours = MaxMarginClassifier(tol=1e-8).fit(X, labels)
    svc = SVC(tol=1e-8).fit(X, labels)
    assert list(ours.classes_) == ["ham", "spam"]
    f = ours.decision_function(X)
    np.testing.assert_allclose(f, svc.decision_function(X), atol=1e-6)
    np.testing.assert_array_equal(ours.predict(X), np.where(f > 0, "spam", "ham"))
    # maxmargin's one convention: f = dual_coef_ K(SV, x) + intercept_ (= the solution's f)
    K = ours._kernel(X, ours.support_vectors_)
    np.testing.assert_allclose(K @ ours.dual_coef_[0] + ours.intercept_[0], f, atol=1e-12)
    sol = ours.solution_
    assert sol.status == "optimal" and sol.certificate.meets(1e-8)
    np.testing.assert_allclose(sol.decision_function(X), f, atol=1e-12)


def test_class_weight_multiplies_C_of_its_own_class() -> None:
    """Hand-derived: two identical points x = 1 with labels -1, +1 (linear kernel), C = 1.

    The dual is max a_- + a_+ - (a_+ - a_-)^2 / 2 with a_- = a_+ = a <= min(C_-, C_+), so
    a = 1; with class_weight {+1: 3} the +1 sample is free (a < C_+ = 3), giving
    b = y_+ - g = 1 (g = a_+ - a_- = 0): f(1) = +1. Weighting the wrong class would give -1.
    """
    X = np.array([[1.0], [1.0]])
    y = np.array([-1, 1])
    for weight, sign in (({1: 3.0}, 1.0), ({-1: 3.0}, -1.0)):
        ours = MaxMarginClassifier(kernel="linear", class_weight=weight, tol=1e-10).fit(X, y)
        assert ours.decision_function(X)[0] == pytest.approx(sign, abs=1e-9)
        assert ours.predict([[1.0]])[0] == sign
        svc = SVC(kernel="linear", class_weight=weight, tol=1e-10).fit(X, y)
        assert svc.decision_function([[1.0]])[0] == pytest.approx(sign, abs=1e-9)
    # the same through sample_weight
    ours = MaxMarginClassifier(kernel="linear", tol=1e-10).fit(X, y, sample_weight=[1.0, 3.0])
    assert ours.decision_function([[1.0]])[0] == pytest.approx(1.0, abs=1e-9)


def test_weights_are_per_sample_C_and_equal_repetition() -> None:
    """Integer weights equal repeated rows (exactly, for the optimum), and zeros leave out."""
    X, y = make_blobs(60, centers=2, random_state=0, cluster_std=2.5)
    w = np.random.default_rng(0).integers(0, 4, size=60).astype(float)
    for solver in ("smo", "cvxpy"):
        # a fixed gamma: "scale" reads X.var() of the rows given (as SVC), which repetition changes
        est = MaxMarginClassifier(solver=solver, gamma=0.1, tol=1e-10)
        weighted = est.fit(X, y, sample_weight=w)
        repeated = clone(est).fit(np.repeat(X, w.astype(int), axis=0), np.repeat(y, w.astype(int)))
        np.testing.assert_allclose(weighted.decision_function(X), repeated.decision_function(X),
                                   atol=1e-6)
    sol = weighted.solution_
    assert np.all(sol.alpha <= 1.0 * sol.sample_weight + 1e-12)


def test_class_weight_matches_svc() -> None:
    X, y = load_iris(return_X_y=True)
    for cw in ({0: 0.5, 1: 4.0, 2: 1.0}, "balanced"):
        ours = MaxMarginClassifier(class_weight=cw, tol=1e-8).fit(X[:120], y[:120])
        svc = SVC(class_weight=cw, tol=1e-8).fit(X[:120], y[:120])
        np.testing.assert_allclose(ours.decision_function(X), svc.decision_function(X),
                                   atol=1e-5)


def test_in_pipeline_grid_search_and_cross_validation() -> None:
    X, y = load_wine(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), MaxMarginClassifier())
    scores = cross_val_score(pipe, X, y, cv=3)
    assert scores.mean() > 0.9
    grid = GridSearchCV(pipe, {"maxmarginclassifier__C": [0.1, 1.0, 10.0]}, cv=3).fit(X, y)
    assert grid.best_score_ > 0.9
    svc_grid = GridSearchCV(make_pipeline(StandardScaler(), SVC()), {"svc__C": [0.1, 1.0, 10.0]},
                            cv=3).fit(X, y)
    assert grid.best_params_["maxmarginclassifier__C"] == svc_grid.best_params_["svc__C"]


@pytest.mark.parametrize("solver", ["gilbert", "mdm"])
def test_hard_margin_solvers(solver: str) -> None:
    X, y = make_blobs(60, centers=[[-4, 0], [4, 0]], random_state=0)
    ours = MaxMarginClassifier(solver=solver, kernel="linear", tol=None).fit(X, y)
    hard = MaxMarginClassifier(kernel="linear", C=1e6, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(ours.coef_, hard.coef_, rtol=1e-3)
    with pytest.raises(ValueError, match=r"solver='gilbert' solves the hard-margin SVM, which "
                                         r"these classes do not admit"):
        MaxMarginClassifier(solver="gilbert", kernel="linear").fit([[0.0], [0.0], [1.0]],
                                                                    [0, 1, 1])


def test_bad_parameters_are_named() -> None:
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=r"`solver` must be one of 'smo'"):
        MaxMarginClassifier(solver="libsvm").fit(X, y)
    with pytest.raises(ValueError, match=r"`decision_function_shape` must be one of"):
        MaxMarginClassifier(decision_function_shape="x").fit(X, y)
    with pytest.raises(ValueError, match=r"solver='perceptron' is the primal \(linear\)"):
        MaxMarginClassifier(solver="perceptron").fit(X, y)
    with pytest.raises(ValueError, match=r"`C` must be positive"):
        MaxMarginClassifier(C=0.0).fit(X, y)
    with pytest.raises(ValueError, match=r"`sample_weight` must be non-negative"):
        MaxMarginClassifier().fit(X, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match=r"solver='perceptron' has no box bound"):
        MaxMarginClassifier(solver="perceptron", kernel="linear", class_weight={0: 2.0}).fit(X, y)


def test_pickle_round_trip_keeps_solutions_frozen() -> None:
    X, y = load_iris(return_X_y=True)
    est = pickle.loads(pickle.dumps(MaxMarginClassifier().fit(X, y)))
    np.testing.assert_array_equal(est.predict(X), MaxMarginClassifier().fit(X, y).predict(X))
    sol = est.solutions_[0]
    assert not sol.alpha.flags.writeable and not sol.history["violation"].flags.writeable
    with pytest.raises(TypeError):
        sol.history["x"] = 1  # type: ignore[index]


def test_precomputed_kernel_matches_svc() -> None:
    from sklearn.metrics.pairwise import rbf_kernel

    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    train, test = np.arange(0, 178, 2), np.arange(1, 178, 2)
    K, K_test = rbf_kernel(X[train], X[train], gamma=0.1), rbf_kernel(X[test], X[train], gamma=0.1)
    ours = MaxMarginClassifier(kernel="precomputed", tol=1e-8).fit(K, y[train])
    svc = SVC(kernel="precomputed", tol=1e-8).fit(K, y[train])
    np.testing.assert_array_equal(ours.predict(K_test), svc.predict(K_test))
    np.testing.assert_allclose(ours.decision_function(K_test), svc.decision_function(K_test),
                               atol=1e-5)
    np.testing.assert_array_equal(ours.support_, svc.support_)
    same = MaxMarginClassifier(kernel="rbf", gamma=0.1, tol=1e-8).fit(X[train], y[train])
    np.testing.assert_allclose(ours.decision_function(K_test), same.decision_function(X[test]),
                               atol=1e-7)
    with pytest.raises(ValueError, match=r"`X`: X has 5 features, but MaxMarginClassifier is "):
        ours.predict(K_test[:, :5])


def test_precomputed_check_estimator() -> None:
    results = check_estimator(MaxMarginClassifier(kernel="precomputed"), on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results
              if r["status"] == "failed"]
    assert not failed, failed


def test_strings_in_the_estimator_and_scikit_learn_tools() -> None:
    from test_string_kernel import _motif_data

    from maxmargin.kernels import StringSubsequenceKernel

    X, y = _motif_data(60, 1)
    est = MaxMarginClassifier(kernel=StringSubsequenceKernel(2, 0.5), tol=1e-6)
    assert cross_val_score(est, np.array(X, dtype=object), y, cv=3).mean() > 0.9
    est.fit(X, y)
    assert list(est.predict(["ccabdd", "cdcdcd"])) == [1.0, -1.0]
    assert est.solution_.status == "optimal" and est.solution_.certificate.meets(1e-6)
    callable_est = MaxMarginClassifier(kernel=lambda A, B: StringSubsequenceKernel(2, 0.5)(A, B),
                                       tol=1e-6).fit(X, y)
    np.testing.assert_allclose(callable_est.decision_function(X), est.decision_function(X),
                               atol=1e-9)
