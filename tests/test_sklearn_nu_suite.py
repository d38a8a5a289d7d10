"""scikit-learn's NuSVC and OneClassSVM tests (``test_svm.py``, ``test_sparse.py`` of the
installed version), run with MaxMarginNuClassifier and MaxMarginOneClass in their places: every
test that concerns them passes, except the listed ones (see ``sklearn_svc_suite.ADAPTATIONS``).

The adapted files run in a subprocess (their own pytest session, with scikit-learn's
``conftest`` for its fixtures). The sample weights those tests give (LIBSVM's per-sample bounds)
are checked here against independent answers: repeated samples and LIBSVM.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import sklearn
import sklearn_svc_suite as suite
from sklearn.svm import NuSVC, OneClassSVM

from maxmargin import MaxMarginNuClassifier, MaxMarginOneClass

ADAPTATION = suite.ADAPTATIONS["nu"]
#: A guard against an adaptation that silently selects nothing (94 tests with scikit-learn 1.9).
MIN_TESTS = 60
outcomes = suite.outcomes_fixture("nu")


def test_the_adaptation_substitutes_both_classes() -> None:
    for name in suite.FILES:
        source = (suite.source_dir() / name).read_text()
        adapted = suite.adapt(source, "nu")
        assert "svm.NuSVC" not in adapted and "svm.OneClassSVM" not in adapted
        assert adapted.count("MaxMarginNuClassifier") == source.count("svm.NuSVC") + 1
        assert "'OneClassSVM' trained on dense" not in adapted
        compile(adapted, name, "exec")
    adapted = suite.adapt((suite.source_dir() / "test_svm.py").read_text(), "nu")
    assert "(OneClassSVM, SVR, NuSVR)" not in adapted


def test_both_estimators_are_exercised(outcomes: dict[str, str]) -> None:
    names = {name.split("[")[0].split("::")[1] for name in outcomes}
    assert {"test_oneclass", "test_sparse_oneclasssvm", "test_probability",
            "test_decision_function_shape"} <= names, sorted(names)


def test_every_test_of_the_estimators_passes(outcomes: dict[str, str]) -> None:
    assert len(outcomes) >= MIN_TESTS, sorted(outcomes)
    assert not suite.unexpected_failures(outcomes, "nu")


@pytest.mark.parametrize("name", sorted(ADAPTATION.exceptions) or ["(none)"])
def test_listed_exceptions_still_fail(outcomes: dict[str, str], name: str) -> None:
    """A listed exception that passes (or is gone) means the list is out of date."""
    if name == "(none)":
        assert not ADAPTATION.exceptions
        return
    runs = suite.runs_of(outcomes, name)
    if not runs:
        pytest.skip(f"{name} is not among scikit-learn {sklearn.__version__}'s tests")
    assert runs == {"failed"}, (name, ADAPTATION.exceptions[name], runs)


# --- sample weights: LIBSVM's per-sample bounds, checked against independent answers ---------


def _weighted_data(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.RandomState(seed)
    X = rng.randn(30, 2)
    y = np.where(X[:, 0] + 0.3 * rng.randn(30) > 0, 1, -1)
    X[:, 0] += y + 3.0  # classes apart (rho > 0), the origin outside (one-class, linear)
    return X, y, rng.randint(1, 4, 30).astype(float)


def _fitted(estimator: Any, X: np.ndarray, y: np.ndarray, w: np.ndarray | None) -> Any:
    if isinstance(estimator, MaxMarginOneClass | OneClassSVM):
        return estimator.fit(X, sample_weight=w)
    return estimator.fit(X, y, sample_weight=w)


#: The estimators' tolerance here, and the agreement asked of the decision functions
#: (absolute between certified answers; of their range against LIBSVM).
TIGHT, AGREE, NU = 1e-6, 1e-4, 0.3
#: gamma fixed: the repeated samples have another variance.
ESTIMATORS = {
    "nu": lambda kernel: MaxMarginNuClassifier(nu=NU, kernel=kernel, gamma=0.5, tol=TIGHT),
    "one_class": lambda kernel: MaxMarginOneClass(nu=NU, kernel=kernel, gamma=0.5, tol=TIGHT)}


def _certified_apart(estimator: Any) -> bool:
    """Every problem certified optimal with ``rho > 0`` (not the constant classifier)."""
    return estimator.fit_status_ == 0 and all(s.rho > 0 for s in np.ravel(estimator.solution_))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("which", sorted(ESTIMATORS))
def test_integer_weights_are_repeated_samples(which: str, kernel: str, seed: int) -> None:
    """Weight ``w_i`` is ``w_i`` copies of sample ``i`` (their ``alpha`` sum to one bound
    ``w_i / sum w``): the same problem, the same decision function (both certified)."""
    X, y, w = _weighted_data(seed)
    reps = w.astype(int)
    weighted = _fitted(ESTIMATORS[which](kernel), X, y, w)
    repeated = _fitted(ESTIMATORS[which](kernel), np.repeat(X, reps, axis=0),
                       np.repeat(y, reps), None)
    assert _certified_apart(weighted) and _certified_apart(repeated)
    T = np.random.RandomState(seed + 10).randn(20, 2)
    np.testing.assert_allclose(weighted.decision_function(T), repeated.decision_function(T),
                               atol=AGREE)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_weighted_problems_agree_with_libsvm(kernel: str, seed: int) -> None:
    """NuSVC and OneClassSVM (LIBSVM, tol 1e-9) with real-valued weights, zero and negative
    ones leaving samples out: the decision functions agree to ``AGREE`` of their range."""
    X, y, _ = _weighted_data(seed)
    w = np.random.RandomState(seed).uniform(0.2, 3.0, y.shape[0])
    w[:2] = (0.0, -1.0)
    libsvm = dict(nu=NU, kernel=kernel, gamma=0.5, tol=1e-9)
    for ours, theirs in ((ESTIMATORS["nu"](kernel), NuSVC(**libsvm)),
                         (ESTIMATORS["one_class"](kernel), OneClassSVM(**libsvm))):
        _fitted(ours, X, y, w)
        _fitted(theirs, X, y, w)
        assert _certified_apart(ours)
        expected = theirs.decision_function(X)
        np.testing.assert_allclose(ours.decision_function(X), expected,
                                   atol=AGREE * np.max(np.abs(expected)))


def test_the_nearest_point_methods_refuse_unequal_weights() -> None:
    """One bound for every sample (the oracles take per-sample bounds: tests/test_nu_weights)."""
    X, y, w = _weighted_data(0)
    for method in ("mdm", "wolfe", "gilbert"):
        with pytest.raises(ValueError, match="sample_weight"):
            _fitted(MaxMarginOneClass(solver=method), X, y, w)
