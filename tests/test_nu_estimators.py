"""MaxMarginNuClassifier and MaxMarginOneClass against scikit-learn's NuSVC and OneClassSVM
(LIBSVM at a tight tolerance), their certificates, feasibility and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_classification
from sklearn.svm import NuSVC, OneClassSVM

from maxmargin import MaxMarginNuClassifier, MaxMarginOneClass


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("nu", [0.2, 0.5])
def test_nu_classifier_matches_nusvc_in_libsvm_units(kernel, nu) -> None:
    X, y = load_iris(return_X_y=True)
    ours = MaxMarginNuClassifier(kernel=kernel, nu=nu, tol=1e-6,
                                 decision_function_shape="ovo").fit(X, y)
    peer = NuSVC(kernel=kernel, nu=nu, tol=1e-10, decision_function_shape="ovo").fit(X, y)
    assert all(s.status == "optimal" for s in ours.solutions_)
    mine, theirs = ours.decision_function(X), peer.decision_function(X)
    for col in range(theirs.shape[1]):  # f / rho with (b, rho) anywhere in an interval when
        a, b = mine[:, col], theirs[:, col]  # a class has no free alpha: up to c f + s
        (c, shift), *_ = np.linalg.lstsq(np.column_stack([b, np.ones_like(b)]), a, rcond=None)
        assert 0.95 < c < 1.05 and abs(shift) < 0.05
        np.testing.assert_allclose(a, c * b + shift, atol=1e-4 * np.abs(b).max())
    assert (ours.predict(X) == peer.predict(X)).mean() >= 0.98
    assert ours.dual_coef_.shape[0] == peer.dual_coef_.shape[0]


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_the_oracle_and_nu_smo_give_the_same_classifier(kernel) -> None:
    X, y = load_iris(return_X_y=True)
    fast = MaxMarginNuClassifier(kernel=kernel, nu=0.4, tol=1e-6).fit(X, y)
    exact = MaxMarginNuClassifier(kernel=kernel, nu=0.4, solver="cvxpy").fit(X, y)
    assert [s.method.split("/")[0] for s in fast.solutions_] != [
        s.method.split("/")[0] for s in exact.solutions_]
    for a, b in zip(fast.solutions_, exact.solutions_, strict=True):
        assert a.status == b.status == "optimal"
        assert a.primal_objective == pytest.approx(b.primal_objective, rel=1e-5, abs=1e-9)


def test_infeasible_nu_is_refused_before_any_kernel_work() -> None:
    X, y = make_classification(n_samples=40, weights=[0.9], random_state=0)
    called = []

    def kernel(A, B):
        called.append(1)
        return A @ B.T

    with pytest.raises(ValueError, match="nu_max"):
        MaxMarginNuClassifier(nu=0.9, kernel=kernel).fit(X, y)
    assert not called


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("nu", [0.1, 0.5])
def test_one_class_matches_oneclasssvm(kernel, nu) -> None:
    X, _ = make_classification(n_samples=80, n_features=4, random_state=1)
    ours = MaxMarginOneClass(kernel=kernel, nu=nu, tol=1e-6).fit(X)
    peer = OneClassSVM(kernel=kernel, nu=nu, tol=1e-7).fit(X)  # linear: 1e-10 runs for ages
    assert ours.solution_.status == "optimal"
    scale = max(1.0, float(np.abs(peer.score_samples(X)).max()))
    np.testing.assert_allclose(ours.offset_, peer.offset_, rtol=1e-3, atol=1e-5 * scale)
    np.testing.assert_allclose(ours.decision_function(X), peer.decision_function(X),
                               atol=1e-3 * scale)
    np.testing.assert_allclose(ours.score_samples(X) - ours.offset_, ours.decision_function(X))
    outliers = np.mean(ours.decision_function(X) < -1e-4 * scale)  # margin errors (at tol)
    assert outliers <= nu + 1e-9  # the nu-property: at most a nu fraction


@pytest.mark.parametrize("est, kw, match", [
    (MaxMarginOneClass, dict(nu=1.5), "`nu`"),
    (MaxMarginOneClass, dict(nu=0.0), "`nu`"),
    (MaxMarginOneClass, dict(solver="smo"), "`solver`"),
    (MaxMarginNuClassifier, dict(nu=-0.1), "`nu`"),
    (MaxMarginNuClassifier, dict(class_weight={0: 2.0, 1: 1.0}), "weigh"),
])
def test_bad_input_is_refused(est, kw, match) -> None:
    X, y = make_classification(n_samples=30, random_state=2)
    with pytest.raises(ValueError, match=match):
        est(**kw).fit(X, y)


def test_certify_judges_nusvc_and_oneclasssvm_in_their_own_problems() -> None:
    import maxmargin

    X, y = load_iris(return_X_y=True)
    tight = maxmargin.certify(NuSVC(nu=0.3, tol=1e-10).fit(X, y), X, y)
    assert len(tight) == 3 and all(c.verdict == "optimal" for c in tight)
    assert all(c.problem == "nu_svc" for c in tight)
    ours = maxmargin.certify(MaxMarginNuClassifier(nu=0.3).fit(X, y), X, y)
    assert all(c.verdict == "optimal" for c in ours)
    for a, b in zip(ours, tight, strict=True):  # the same problem: the same optimum
        assert a.primal_objective == pytest.approx(b.primal_objective, rel=1e-3)
    one = maxmargin.certify(OneClassSVM(nu=0.2, tol=1e-10).fit(X), X)
    assert one.verdict == "optimal" and one.problem == "one_class"
    mine = maxmargin.certify(MaxMarginOneClass(nu=0.2).fit(X), X)
    assert mine.verdict == "optimal"
    assert mine.primal_objective == pytest.approx(one.primal_objective, rel=1e-3)
    bad = NuSVC(nu=0.3, tol=1e-10).fit(X, y)
    bad.dual_coef_[0, :5] *= 1.5  # a perturbed answer is refuted
    assert any(c.verdict != "optimal" for c in maxmargin.certify(bad, X, y))
    with pytest.raises(ValueError, match="`y`"):
        maxmargin.certify(NuSVC().fit(X, y), X)
