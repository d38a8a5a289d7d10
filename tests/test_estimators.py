"""maxmargin.estimators.MaxMarginClassifier: scikit-learn's estimator checks, SVC's attributes
and one-vs-one multi-class, weights as per-sample C, and use inside scikit-learn tools."""

from __future__ import annotations

import inspect
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import load_iris, load_wine, make_blobs
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
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
HARD_MARGIN = {
    "check_sample_weight_equivalence_on_dense_data": NON_SEPARABLE,
    "check_sample_weight_equivalence_on_sparse_data": NON_SEPARABLE,
    "check_estimator_sparse_tag": NON_SEPARABLE,
    "check_estimator_sparse_array": NON_SEPARABLE,
    "check_estimator_sparse_matrix": NON_SEPARABLE,
    "check_fit_idempotent": NON_SEPARABLE,
    "check_fit_check_is_fitted": NON_SEPARABLE,
    "check_n_features_in": NON_SEPARABLE,
    "check_classifiers_train": NON_SEPARABLE,
    "check_class_weight_classifiers": "the hard margin has no box bound for weights to scale",
}

EXPECTED = {
    "smo-rbf": (MaxMarginClassifier(), {
        "check_sample_weight_equivalence_on_dense_data": TOLERANCE,
        "check_sample_weight_equivalence_on_sparse_data": TOLERANCE}),
    "smo-linear": (MaxMarginClassifier(kernel="linear"), {
        "check_sample_weight_equivalence_on_dense_data": TOLERANCE,
        "check_sample_weight_equivalence_on_sparse_data": TOLERANCE}),
    "smo-probability": (MaxMarginClassifier(probability=True, random_state=0), {
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
    "mdm": (MaxMarginClassifier(solver="mdm"), HARD_MARGIN),
    "wolfe": (MaxMarginClassifier(solver="wolfe"), HARD_MARGIN),
}


def test_svcs_own_check_failures_are_the_default_estimators() -> None:
    """No failure of check_estimator beyond SVC's own (the smo-rbf entry above)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(SVC(), on_fail=None)
    svc_failed = {r["check_name"] for r in results if r["status"] == "failed"}
    assert svc_failed == set(EXPECTED["smo-rbf"][1])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_check_estimator(name: str) -> None:
    est, expected = EXPECTED[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", FutureWarning)  # scikit-learn 1.9: SVC's `probability`
        results = check_estimator(est, on_fail=None, expected_failed_checks=expected)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results
              if r["status"] == "failed"]
    assert not failed, failed


def test_reexported_and_svcs_signature_and_defaults() -> None:
    assert maxmargin.MaxMarginClassifier is MaxMarginClassifier
    ours, svc = MaxMarginClassifier().get_params(), SVC().get_params()
    assert {k: ours[k] for k in svc} == svc  # every SVC parameter, with SVC's default
    assert set(ours) - set(svc) == {"solver", "precision", "n_jobs"}
    assert all(p.kind == inspect.Parameter.KEYWORD_ONLY
               for p in inspect.signature(MaxMarginClassifier).parameters.values())
    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        est = MaxMarginClassifier(**SVC(random_state=0, verbose=False).get_params()).fit(X, y)
    np.testing.assert_array_equal(est.predict(X), SVC().fit(X, y).predict(X))


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
                                         r"classes 0 and 1 do not admit"):
        MaxMarginClassifier(solver="gilbert", kernel="linear").fit([[0.0], [0.0], [1.0]],
                                                                    [0, 1, 1])


def test_bad_parameters_are_named() -> None:
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=r"`solver` must be one of \('smo', 'wolfe'"):
        MaxMarginClassifier(solver="libsvm").fit(X, y)
    with pytest.raises(ValueError, match=r"`decision_function_shape` must be one of"):
        MaxMarginClassifier(decision_function_shape="x").fit(X, y)
    with pytest.raises(ValueError, match=r"`kernel`: solver='perceptron' takes the kernels "
                                         r"\('linear',\)"):
        MaxMarginClassifier(solver="perceptron").fit(X, y)
    for C in (0.0, -1.0, np.nan, -np.inf):
        with pytest.raises(ValueError, match=r"`C` must be positive"):
            MaxMarginClassifier(C=C).fit(X, y)
    with pytest.raises(ValueError, match=r"`C` must be a positive number, np.inf or None"):
        MaxMarginClassifier(C="1").fit(X, y)
    for cap in (0, -2, 1.5, True):
        with pytest.raises(ValueError, match=r"`max_iter` must be -1 \(no limit\) or a positive"):
            MaxMarginClassifier(max_iter=cap).fit(X, y)
    with pytest.raises(ValueError, match=r"`probability` must be True or False"):
        MaxMarginClassifier(probability="yes").fit(X, y)
    with pytest.raises(ValueError, match=r"`sample_weight` must have shape \(150,\)"):
        MaxMarginClassifier().fit(X, y, sample_weight=np.ones(3))
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


# --- SVC's interface: the reproductions and SVC's semantics --------------------------

IRIS_X, IRIS_Y = load_iris(return_X_y=True)


def test_import_maxmargin_does_not_import_scikit_learn() -> None:
    """maxmargin.ConvergenceWarning subclasses scikit-learn's, made on first use."""
    code = ("import sys, maxmargin, maxmargin.algorithms, maxmargin.exceptions; "
            "print('sklearn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert issubclass(ConvergenceWarning, SklearnConvergenceWarning)
    assert ConvergenceWarning is maxmargin.exceptions.ConvergenceWarning


@pytest.mark.parametrize("C", [np.inf, None])
def test_infinite_C_is_the_hard_margin(C: float | None) -> None:
    X, y = make_blobs(60, centers=[[-3, 0], [3, 0], [0, 4]], random_state=1)
    hard = MaxMarginClassifier(C=C, kernel="linear", tol=1e-8).fit(X, y)
    large = MaxMarginClassifier(C=1e8, kernel="linear", tol=1e-8).fit(X, y)
    np.testing.assert_allclose(hard.coef_, large.coef_, rtol=1e-6)
    np.testing.assert_array_equal(hard.predict(X), SVC(C=np.inf, kernel="linear").fit(X, y)
                                  .predict(X))
    assert all(s.C is None and s.status == "optimal" for s in hard.solutions_)
    overlap = np.r_[X, X[:1]], np.r_[y, (y[0] + 1) % 3]  # a point in two classes
    with pytest.raises(ValueError, match=r"`C`: the hard margin \(C=.*\) does not exist for "
                                         r"classes \d and \d"):
        MaxMarginClassifier(C=C, kernel="linear").fit(*overlap)


def test_max_iter_is_svcs_hard_cap() -> None:
    X, y = [[-2, -1], [-1, -1], [-1, -2], [1, 1], [1, 2], [2, 1]], [1, 1, 1, 2, 2, 2]
    unlimited = MaxMarginClassifier(max_iter=-1).fit(X, y)
    assert unlimited.fit_status_ == 0 and unlimited.solution_.status == "optimal"
    est = MaxMarginClassifier(kernel="linear", max_iter=2)
    with pytest.warns(SklearnConvergenceWarning, match=r"Solver terminated early \(max_iter=2\)"):
        est.fit(X, y)
    svc = SVC(kernel="linear", max_iter=2)
    with pytest.warns(SklearnConvergenceWarning):
        svc.fit(X, y)
    assert est.fit_status_ == svc.fit_status_ == 1
    np.testing.assert_array_equal(est.n_iter_, svc.n_iter_)
    assert est.n_iter_.dtype == np.int32 and est.solution_.status == "max_iter"


def test_fitted_attributes_are_svcs() -> None:
    ours = MaxMarginClassifier(class_weight="balanced").fit(IRIS_X[:120], IRIS_Y[:120])
    svc = SVC(class_weight="balanced").fit(IRIS_X[:120], IRIS_Y[:120])
    for name in ("class_weight_", "shape_fit_", "fit_status_", "classes_", "n_support_",
                 "support_"):
        np.testing.assert_array_equal(getattr(ours, name), getattr(svc, name), err_msg=name)
        assert np.asarray(getattr(ours, name)).dtype == np.asarray(getattr(svc, name)).dtype
    for name in ("probA_", "probB_"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            assert getattr(ours, name).shape == getattr(svc, name).shape == (0,)
    K = IRIS_X @ IRIS_X.T
    pre = MaxMarginClassifier(kernel="precomputed").fit(K, IRIS_Y)
    assert pre.support_vectors_.shape == SVC(kernel="precomputed").fit(K, IRIS_Y) \
        .support_vectors_.shape == (0, 0)
    assert pre.shape_fit_ == (150, 150)


def test_sparse_fit_gives_sparse_attributes_and_the_dense_model() -> None:
    X, y = make_blobs(80, centers=3, random_state=2)
    X[X < 0] = 0.0
    dense = MaxMarginClassifier(kernel="linear").fit(X, y)
    sparse = MaxMarginClassifier(kernel="linear").fit(sp.csr_matrix(X), y)
    svc = SVC(kernel="linear").fit(sp.csr_matrix(X), y)
    for name in ("dual_coef_", "support_vectors_", "coef_"):
        assert sp.issparse(getattr(sparse, name)) and sp.issparse(getattr(svc, name)), name
    for name in ("dual_coef_", "support_vectors_"):  # the same model, bit for bit
        np.testing.assert_array_equal(getattr(sparse, name).toarray(), getattr(dense, name))
    np.testing.assert_array_equal(sparse.intercept_, dense.intercept_)
    np.testing.assert_allclose(sparse.coef_.toarray(), dense.coef_, rtol=1e-14)
    for points in (X, sp.csr_matrix(X)):  # dense points are converted to CSR, as SVC
        np.testing.assert_allclose(sparse.decision_function(points), dense.decision_function(X),
                                   atol=1e-12)
    with pytest.raises(ValueError, match="cannot use sparse input in 'MaxMarginClassifier' "
                                         "trained on dense data"):
        dense.predict(sp.csr_matrix(X))
    with pytest.raises(ValueError, match="cannot use sparse input in 'SVC' trained on dense"):
        SVC().fit(X, y).predict(sp.csr_matrix(X))
    with pytest.raises(TypeError, match="Sparse precomputed kernels are not supported"):
        MaxMarginClassifier(kernel="precomputed").fit(sp.csr_matrix(X @ X.T), y)


def test_coef_is_read_only() -> None:
    est = MaxMarginClassifier(kernel="linear").fit(IRIS_X, IRIS_Y)
    with pytest.raises(AttributeError):
        est.coef_ = np.zeros((3, 4))
    with pytest.raises(ValueError, match="read-only"):
        est.coef_[0, 0] = 1.0
    with pytest.raises(AttributeError, match="only available when using a linear kernel"):
        _ = MaxMarginClassifier().fit(IRIS_X, IRIS_Y).coef_


class _Counting:
    """A kernel written for whole matrices (it centres by the mean of its second argument), that
    records every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[int, ...], tuple[int, ...], bool]] = []

    def __call__(self, A, B):  # noqa: ANN001, ANN204
        self.calls.append((A.shape, B.shape, sp.issparse(A)))
        A = A.toarray() if sp.issparse(A) else A
        B = B.toarray() if sp.issparse(B) else B
        centre = B.mean(axis=0)
        return (A - centre) @ (B - centre).T


def test_callable_kernel_is_called_as_svc_calls_it() -> None:
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X, y = X[:400], y[:400]
    ours_k, svc_k = _Counting(), _Counting()
    ours = MaxMarginClassifier(kernel=ours_k).fit(X, y)
    svc = SVC(kernel=svc_k).fit(X, y)
    assert ours_k.calls == svc_k.calls == [((400, 64), (400, 64), False)]  # once, whole data
    np.testing.assert_array_equal(ours.predict(X[:50]), svc.predict(X[:50]))
    assert ours_k.calls[1:] == svc_k.calls[1:] == [((50, 64), (400, 64), False)]
    np.testing.assert_allclose(ours.decision_function(X[:50]), svc.decision_function(X[:50]),
                               atol=1e-5)
    pre = MaxMarginClassifier(kernel="precomputed").fit(_Counting()(X, X), y)
    np.testing.assert_array_equal(pre.dual_coef_, ours.dual_coef_)


def test_callable_kernel_takes_sparse_input_as_it_is() -> None:
    kernel = _Counting()
    Xs = sp.csr_matrix(IRIS_X)
    ours = MaxMarginClassifier(kernel=kernel).fit(Xs, IRIS_Y)
    assert kernel.calls == [((150, 4), (150, 4), True)]
    assert ours.score(Xs, IRIS_Y) == SVC(kernel=_Counting()).fit(Xs, IRIS_Y).score(Xs, IRIS_Y)
    linear = MaxMarginClassifier(kernel=lambda a, b: a @ b.T).fit(Xs, IRIS_Y)
    assert linear.score(Xs, IRIS_Y) == pytest.approx(0.993, abs=1e-3)  # the example
    with pytest.raises(ValueError, match=r"`kernel`: the callable must return the Gram matrix"):
        MaxMarginClassifier(kernel=lambda a, b: a).fit(IRIS_X, IRIS_Y)


def test_zero_pairwise_values_vote_as_svc() -> None:
    """Far from every training point (gamma=1e6) each f_ij is its intercept, exactly; where an
    intercept is 0 SVC's 'ovr' transform votes for i and its predict (LIBSVM) for j."""
    X, y = make_blobs(n_samples=20, n_features=2, random_state=42)
    grid = np.c_[np.linspace(X[:, 0].min(), X[:, 0].max(), 40),
                 np.linspace(X[:, 1].min(), X[:, 1].max(), 40)]
    for break_ties in (False, True):
        ours = MaxMarginClassifier(gamma=1e6, break_ties=break_ties).fit(X, y)
        svc = SVC(gamma=1e6, break_ties=break_ties).fit(X, y)
        assert np.any(ours.decision_function(grid) != np.round(ours.decision_function(grid)))
        np.testing.assert_array_equal(ours.predict(grid), svc.predict(grid))
        np.testing.assert_allclose(ours.decision_function(grid), svc.decision_function(grid),
                                   atol=1e-9)
    with pytest.raises(ValueError, match="break_ties must be False when "
                                         "decision_function_shape is 'ovo'"):
        MaxMarginClassifier(break_ties=True, decision_function_shape="ovo").fit(X, y).predict(X)


def test_negative_weights_leave_samples_out_as_svc() -> None:
    X, y = [[-2, 0], [-1, -1], [0, -2], [0, 2], [1, 1], [2, 0]], [1, 1, 1, 2, 2, 2]
    w = [1, -0.5, 1, 1, 1, 1]
    ours = MaxMarginClassifier(kernel="linear", tol=1e-8).fit(X, y, sample_weight=w)
    svc = SVC(kernel="linear", tol=1e-8).fit(X, y, sample_weight=w)
    zero = MaxMarginClassifier(kernel="linear", tol=1e-8).fit(X, y, sample_weight=[1, 0, 1, 1,
                                                                                    1, 1])
    np.testing.assert_allclose(ours.coef_, svc.coef_, atol=1e-6)
    np.testing.assert_array_equal(ours.coef_, zero.coef_)
    with pytest.raises(ValueError, match="all samples have zero or negative weights"):
        MaxMarginClassifier().fit(X, y, sample_weight=[-1.0] * 6)
    with pytest.raises(ValueError, match="all samples with positive weights belong to the same "
                                         "class"):
        MaxMarginClassifier().fit(X, y, sample_weight=[0, 0, 0, 1, 1, 1])


def test_verbose_prints_a_line_per_problem(capsys: pytest.CaptureFixture[str]) -> None:
    MaxMarginClassifier(verbose=True).fit(IRIS_X, IRIS_Y)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[0].startswith("[maxmargin] smo (0, 1): optimal, ")


def test_huge_features_are_refused_in_svcs_words() -> None:
    X = np.finfo(np.float64).max * np.random.default_rng(0).uniform(size=(10, 2))
    with pytest.raises(ValueError, match="The dual coefficients or intercepts are not finite"):
        MaxMarginClassifier().fit(X, [0, 1] * 5)
