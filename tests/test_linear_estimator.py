"""MaxMarginLinearClassifier (LinearSVC's drop-in) and Crammer and Singer's oracle and judge:
every problem certified, checked against LinearSVC's own answers, the CVXPY oracles and
theorems (weak duality, the problems' invariances)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_iris, make_classification
from sklearn.svm import LinearSVC

from maxmargin import MaxMarginLinearClassifier, certify
from maxmargin.certificate import liblinear_rows
from maxmargin.certificate_multiclass import certify_crammer_singer, crammer_singer_objective
from maxmargin.formulations import crammer_singer_primal


def _data(seed: int, n: int = 60, d: int = 5, classes: int = 2):
    X, y = make_classification(n_samples=n, n_features=d, n_informative=min(d, 3),
                               n_redundant=0, n_classes=classes, n_clusters_per_class=1,
                               flip_y=0.1, random_state=seed)
    return X, y


# --- Crammer and Singer -----------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("scaling", [1.0, None])
def test_crammer_singer_oracle_is_certified_and_beats_liblinear(seed, scaling) -> None:
    X, y = _data(seed, classes=3)
    C = 0.7
    sol = crammer_singer_primal(X, y, C, intercept_scaling=scaling).solve()
    assert sol.status == "optimal" and sol.certificate.gap <= 1e-7
    assert sol.dual_objective <= sol.primal_objective
    peer = LinearSVC(multi_class="crammer_singer", C=C, fit_intercept=scaling is not None,
                     tol=1e-10, max_iter=200_000, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peer.fit(X, y)
    Wt = peer.coef_ if scaling is None else np.hstack([peer.coef_, peer.intercept_[:, None]])
    rows = liblinear_rows(X, scaling)
    theirs = crammer_singer_objective(Wt, rows, y, np.full(len(y), C))
    assert sol.primal_objective <= theirs * (1 + 1e-9)
    assert theirs <= sol.primal_objective * (1 + 1e-4)  # LIBLINEAR at tol 1e-10: close
    assert sol.dual_objective <= theirs  # weak duality across solvers


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), K=st.integers(2, 4))
def test_crammer_singer_weak_duality_for_any_feasible_multipliers(seed, K) -> None:
    """``D(lambda) <= P(W)`` for every feasible ``lambda`` and every ``W``: random ones."""
    rng = np.random.default_rng(seed)
    n, p = 20, 3
    X = rng.normal(size=(n, p))
    y = rng.integers(0, K, size=n)
    y[:K] = np.arange(K)
    C = rng.uniform(0.1, 2.0, size=n)
    W = rng.normal(size=(K, p))
    lam = rng.exponential(size=(n, K))
    cert = certify_crammer_singer(W, X, y, C, lam=lam)
    assert cert.dual_objective <= cert.primal_objective + 1e-12 * abs(cert.primal_objective)
    assert np.isclose(cert.primal_objective, crammer_singer_objective(W, X, y, C))


def test_crammer_singer_judge_rejects_a_perturbed_answer() -> None:
    X, y = _data(1, classes=3)
    sol = crammer_singer_primal(X, y, 1.0).solve()
    rows = liblinear_rows(X, 1.0)
    bad = sol.W_tilde + 0.05 * np.random.default_rng(0).normal(size=sol.W_tilde.shape)
    cert = certify_crammer_singer(bad, rows, y, np.ones(len(y)), lam=sol.lam)
    assert cert.gap > 1e-3


def test_crammer_singer_rejects_bad_input() -> None:
    X, y = _data(0, classes=3)
    with pytest.raises(ValueError, match="`y`"):
        crammer_singer_primal(X, y - 1)
    with pytest.raises(ValueError, match="`C`"):
        crammer_singer_primal(X, y, C=-1.0)
    with pytest.raises(ValueError, match="`intercept_scaling`"):
        crammer_singer_primal(X, y, intercept_scaling=0.0)


# --- the estimator ----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
def test_every_problem_is_certified_and_no_worse_than_linearsvc(seed, classes, loss) -> None:
    X, y = _data(seed, classes=classes)
    ours = MaxMarginLinearClassifier(loss=loss, C=0.5, tol=1e-8, max_iter=100_000,
                                     random_state=seed).fit(X, y)
    assert all(s.status == "optimal" for s in ours.solutions_)
    assert all(c.gap <= 1e-8 for c in ours.certificates_)
    theirs = LinearSVC(loss=loss, C=0.5, tol=1e-8, max_iter=100_000, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs.fit(X, y)
    for mine, peer in zip(certify(ours, X, y, tol=1e-6) if classes > 2
                          else [certify(ours, X, y, tol=1e-6)],
                          certify(theirs, X, y, tol=1e-6) if classes > 2
                          else [certify(theirs, X, y, tol=1e-6)], strict=True):
        assert mine.primal_objective <= peer.primal_objective * (1 + 1e-7)
        assert mine.dual_objective <= peer.primal_objective * (1 + 1e-12)  # weak duality
    assert (ours.predict(X) == theirs.predict(X)).mean() >= 0.95


@pytest.mark.parametrize("kw", [dict(penalty="l1", dual=False), dict(solver="cvxpy"),
                                dict(loss="hinge", solver="cvxpy")])
def test_the_oracle_solvers_are_certified(kw) -> None:
    # a fixed coordinate order: on raw iris some of l1_cdn's orders need more than the 1000
    # passes of LinearSVC's default max_iter (random_state=None draws one from np.random)
    X, y = load_iris(return_X_y=True)
    model = MaxMarginLinearClassifier(**kw, random_state=0).fit(X, y)
    assert model.coef_.shape == (3, 4) and model.intercept_.shape == (3,)
    assert all(s.status == "optimal" for s in model.solutions_)


def test_dense_and_sparse_fits_agree_and_inputs_are_unchanged() -> None:
    X, y = _data(3, classes=3)
    X0, y0 = X.copy(), y.copy()
    dense = MaxMarginLinearClassifier(random_state=0).fit(X, y)
    sparse = MaxMarginLinearClassifier(random_state=0).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(dense.coef_, sparse.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)


def test_the_same_random_state_gives_the_same_bits() -> None:
    X, y = _data(5, n=200, d=8)
    a = MaxMarginLinearClassifier(loss="hinge", random_state=7).fit(X, y)
    b = MaxMarginLinearClassifier(loss="hinge", random_state=7).fit(X, y)
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_)


def test_zero_weights_leave_samples_out() -> None:
    X, y = _data(2)
    w = np.ones(len(y))
    w[::3] = 0.0
    a = MaxMarginLinearClassifier(tol=1e-9, random_state=0).fit(X, y, sample_weight=w)
    b = MaxMarginLinearClassifier(tol=1e-9, random_state=0).fit(X[w > 0], y[w > 0])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-5, atol=1e-7)


def test_class_weight_scales_each_class_box() -> None:
    X, y = _data(4)
    model = MaxMarginLinearClassifier(class_weight={0: 3.0, 1: 1.0}, random_state=0).fit(X, y)
    cert = certify(model, X, y)
    assert cert.gap <= 1e-3


@pytest.mark.parametrize("kw, match", [
    (dict(penalty="l3"), "`penalty`"), (dict(loss="log"), "`loss`"), (dict(C=0.0), "`C`"),
    (dict(tol=-1.0), "`tol`"), (dict(max_iter=0), "`max_iter`"),
    (dict(multi_class="ovo"), "`multi_class`"), (dict(solver="smo"), "`solver`"),
    (dict(intercept_scaling=0.0), "`intercept_scaling`"),
    (dict(penalty="l1", loss="hinge"), "Unsupported set of arguments"),
    (dict(penalty="l1", solver="dcd", dual=False), "`solver`"),
])
def test_bad_parameters_are_refused_before_any_work(kw, match) -> None:
    X, y = _data(0)
    with pytest.raises(ValueError, match=match):
        MaxMarginLinearClassifier(**kw).fit(X, y)


def test_a_capped_fit_warns_in_linearsvc_words_and_counts_passes() -> None:
    from maxmargin import ConvergenceWarning

    X, y = _data(6, n=300, d=10)
    model = MaxMarginLinearClassifier(max_iter=2, tol=1e-10, random_state=0)
    with pytest.warns(ConvergenceWarning, match="Liblinear failed to converge"):
        model.fit(X, y)
    assert model.n_iter_ == 2 and isinstance(model.n_iter_, int)
    assert model.solutions_[0].status == "max_iter"
