"""maxmargin._probability and MaxMarginClassifier(probability=True): LIBSVM's Platt scaling.

Independent answers: scikit-learn's compiled generator (``sklearn.svm._newrand``, the one its
LIBSVM draws the folds from), a general-purpose optimiser for Platt's likelihood, the exact
minimiser of the pairwise-coupling quadratic, and ``SVC(probability=True)`` itself.

Agreement with SVC (same ``random_state``, so the same folds), measured over the cases below:
with ``tol=1e-10`` on both sides ``probA_``, ``probB_`` and ``predict_proba`` agree to about
1e-6 (asserted: 1e-5); at the default ``tol=1e-3`` to about 1e-3 (asserted: 5e-3 for
``predict_proba``), the two SMO runs stopping at different points within the tolerance.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from sklearn.datasets import load_breast_cancer, load_iris, load_wine, make_blobs
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.svm._newrand import bounded_rand_int_wrap, set_seed_wrap

from maxmargin import MaxMarginClassifier
from maxmargin._probability import (
    LibsvmRandom,
    multiclass_probability,
    platt_parameters,
    sigmoid_predict,
    sigmoid_train,
)
from maxmargin.estimators import PROBABILITY_DEPRECATED

#: ``probA_``, ``probB_``, ``predict_proba`` against SVC with ``tol=1e-10`` on both sides.
TIGHT = 1e-5
#: ``predict_proba`` against SVC at the default ``tol=1e-3``.
DEFAULT_TOL_PROBA = 5e-3


@pytest.fixture(autouse=True)
def _no_deprecation_noise():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # scikit-learn 1.9 deprecates probability
        yield


# --- the folds' generator ---------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 2),
       ranges=st.lists(st.one_of(st.integers(1, 1000), st.integers(2**30, 2**32 - 1)),
                       min_size=1, max_size=50))
def test_bounded_draws_are_scikit_learns(seed: int, ranges: list[int]) -> None:
    """Ranges near 2^32 make Lemire's rejection frequent: both branches are compared."""
    set_seed_wrap(seed)
    expected = [bounded_rand_int_wrap(r) for r in ranges]
    rng = LibsvmRandom(seed)
    assert [rng.bounded(r) for r in ranges] == expected


@pytest.mark.parametrize("seed", [0, 1, 42, 2**31 - 2])
@pytest.mark.parametrize("n", [1, 2, 5, 150, 1000])
def test_permutation_is_libsvms_shuffle(seed: int, n: int) -> None:
    set_seed_wrap(seed)
    perm = list(range(n))
    for i in range(n):  # svm_binary_svc_probability's loop
        j = i + bounded_rand_int_wrap(n - i)
        perm[i], perm[j] = perm[j], perm[i]
    rng = LibsvmRandom(seed)
    np.testing.assert_array_equal(rng.permutation(n), perm)
    # the stream continues where LIBSVM's does, and reseed() returns to the start
    assert rng.bounded(1000) == bounded_rand_int_wrap(1000)
    rng.reseed()
    set_seed_wrap(seed)
    assert rng.bounded(7) == bounded_rand_int_wrap(7)


class _Zeros:
    """A bit generator whose first draws are 0 (rejected for every range that does not divide
    2^32), then ordinary MT19937 draws: forces the rejection branch of the block shuffle."""

    def __init__(self, zeros: int, seed: int) -> None:
        self.zeros, self.rest = zeros, np.random.MT19937(seed)

    def random_raw(self, count: int) -> np.ndarray:
        head = np.zeros(min(count, self.zeros), dtype=np.uint64)
        self.zeros -= head.size
        return np.concatenate([head, self.rest.random_raw(count - head.size)])


@pytest.mark.parametrize("zeros", [1, 3, 10])
def test_permutation_redraws_rejected_offsets_in_stream_order(zeros: int) -> None:
    n = 12
    block, one_by_one = LibsvmRandom(0), LibsvmRandom(0)
    block._bits, one_by_one._bits = _Zeros(zeros, 5), _Zeros(zeros, 5)
    perm = list(range(n))
    for i in range(n):
        j = i + one_by_one.bounded(n - i)
        perm[i], perm[j] = perm[j], perm[i]
    np.testing.assert_array_equal(block.permutation(n), perm)


# --- Platt's sigmoid and the coupling -----------------------------------------------------------

def _platt_objective(params: np.ndarray, dec: np.ndarray, labels: np.ndarray) -> float:
    n_pos, n_neg = np.sum(labels > 0), np.sum(labels <= 0)
    t = np.where(labels > 0, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))
    z = dec * params[0] + params[1]
    return float(np.sum(np.logaddexp(0.0, z) - (1 - t) * z))  # -sum t log p + (1-t) log(1-p)


@pytest.mark.parametrize("seed", range(5))
def test_sigmoid_train_minimises_platts_likelihood(seed: int) -> None:
    rng = np.random.default_rng(seed)
    labels = np.where(rng.random(200) < 0.4, 1.0, -1.0)
    dec = labels * rng.gamma(2.0, 1.0, 200) + rng.normal(0, 1.5, 200)
    A, B = sigmoid_train(dec, labels)
    ref = minimize(_platt_objective, [0.0, 0.0], args=(dec, labels), method="BFGS",
                   options={"gtol": 1e-10})
    np.testing.assert_allclose([A, B], ref.x, atol=1e-5)
    assert A < 0  # p(+1) grows with the decision value


def test_sigmoid_predict_is_the_logistic_without_overflow() -> None:
    dec = np.array([-1e308, -800.0, -1.0, 0.0, 2.0, 800.0, 1e308])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = sigmoid_predict(dec, -1.0, 0.5)
    np.testing.assert_allclose(p[2:5], 1 / (1 + np.exp(-dec[2:5] + 0.5)), rtol=1e-15)
    np.testing.assert_array_equal(p[[0, 1, 5, 6]], [0.0, 0.0, 1.0, 1.0])


@pytest.mark.parametrize("k", [2, 3, 5, 8])
def test_coupling_solves_wu_lin_wengs_quadratic(k: int) -> None:
    """min p^T Q p over sum(p) = 1 (its KKT system), to LIBSVM's stopping tolerance."""
    rng = np.random.default_rng(k)
    r = np.zeros((20, k, k))
    upper = rng.uniform(0.05, 0.95, (20, k, k))
    for i in range(k):
        for j in range(i + 1, k):
            r[:, i, j], r[:, j, i] = upper[:, i, j], 1 - upper[:, i, j]
    p = multiclass_probability(r)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    for row in range(20):
        Q = np.array([[np.sum(r[row, :, t] ** 2) - r[row, t, t] ** 2 if t == j
                       else -r[row, j, t] * r[row, t, j] for j in range(k)] for t in range(k)])
        kkt = np.block([[2 * Q, np.ones((k, 1))], [np.ones((1, k)), np.zeros((1, 1))]])
        exact = np.linalg.solve(kkt, np.r_[np.zeros(k), 1.0])[:k]
        np.testing.assert_allclose(p[row], exact, atol=0.01 / k)
    if k == 2:  # two classes: the minimiser is (r_01, r_10), reached to the same tolerance
        np.testing.assert_allclose(p, np.c_[r[:, 0, 1], r[:, 1, 0]], atol=0.01 / k)


def test_folds_with_one_class_give_its_sign_as_libsvm() -> None:
    """Two samples: three folds train on both (one of them empty), two on one class."""
    calls = []

    def fit_and_decide(train: np.ndarray, test: np.ndarray) -> np.ndarray:
        calls.append((train.size, test.size))
        return np.zeros(test.size)

    labels = np.array([1.0, -1.0])
    A, B = platt_parameters(labels, LibsvmRandom(0), fit_and_decide)
    assert calls == []  # every fold with a test point trains on one class only
    # each sample's value is the sign of the one class the other fold holds: -label
    assert (A, B) == sigmoid_train(-labels, labels)


# --- the estimator against SVC -----------------------------------------------------------------

def _cases() -> dict[str, tuple[np.ndarray, np.ndarray, str]]:
    wine_X, wine_y = load_wine(return_X_y=True)
    cancer_X, cancer_y = load_breast_cancer(return_X_y=True)
    blobs_X, blobs_y = make_blobs(200, centers=4, random_state=0, cluster_std=2.0)
    return {
        "wine-rbf": (StandardScaler().fit_transform(wine_X), wine_y, "rbf"),
        "wine-linear": (StandardScaler().fit_transform(wine_X), wine_y, "linear"),
        "cancer-rbf (binary)": (StandardScaler().fit_transform(cancer_X), cancer_y, "rbf"),
        "blobs-rbf": (blobs_X, blobs_y, "rbf"),
    }


CASES = _cases()


@pytest.mark.parametrize("seed", [0, 7])
@pytest.mark.parametrize("case", sorted(CASES))
def test_platt_parameters_and_probabilities_match_svc(case: str, seed: int) -> None:
    X, y, kernel = CASES[case]
    ours = MaxMarginClassifier(kernel=kernel, probability=True, random_state=seed,
                               tol=1e-10).fit(X, y)
    svc = SVC(kernel=kernel, probability=True, random_state=seed, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(ours._probA, svc._probA, atol=TIGHT)
    np.testing.assert_allclose(ours._probB, svc._probB, atol=TIGHT)
    proba = ours.predict_proba(X)
    np.testing.assert_allclose(proba, svc.predict_proba(X), atol=TIGHT)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(ours.predict_log_proba(X), np.log(proba))
    # a sparse fit is the same model (small sparse data is solved in dense form)
    sparse = MaxMarginClassifier(kernel=kernel, probability=True, random_state=seed,
                                 tol=1e-10).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.predict_proba(sp.csr_matrix(X)), proba, atol=1e-12)


@pytest.mark.parametrize("case", sorted(CASES))
def test_probabilities_match_svc_at_the_default_tolerance(case: str) -> None:
    X, y, kernel = CASES[case]
    ours = MaxMarginClassifier(kernel=kernel, probability=True, random_state=3).fit(X, y)
    svc = SVC(kernel=kernel, probability=True, random_state=3).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), svc.predict_proba(X),
                               atol=DEFAULT_TOL_PROBA)


def test_other_seeds_give_other_folds() -> None:
    X, y, kernel = CASES["wine-rbf"]
    a = MaxMarginClassifier(probability=True, random_state=0).fit(X, y)._probA
    b = MaxMarginClassifier(probability=True, random_state=1).fit(X, y)._probA
    c = MaxMarginClassifier(probability=True, random_state=0).fit(X, y)._probA
    assert np.all(a != b)
    np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize("solver", ["cvxpy", "kernel_perceptron"])
def test_other_solvers_give_a_probability_model(solver: str) -> None:
    """Platt's folds are fitted by the chosen method; cvxpy solves the same problems as SMO."""
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    ours = MaxMarginClassifier(solver=solver, probability=True, random_state=0).fit(X, y)
    proba = ours.predict_proba(X)
    assert proba.shape == (150, 3) and np.allclose(proba.sum(axis=1), 1.0)
    assert np.mean(proba.argmax(axis=1) == y) > 0.9
    if solver == "cvxpy":
        svc = SVC(probability=True, random_state=0).fit(X, y)
        np.testing.assert_allclose(proba, svc.predict_proba(X), atol=DEFAULT_TOL_PROBA)


def test_predict_proba_exists_only_with_probability() -> None:
    X, y = load_iris(return_X_y=True)
    est = MaxMarginClassifier()
    assert not hasattr(est, "predict_proba") and not hasattr(est, "predict_log_proba")
    est.fit(X, y)
    assert est._probA.size == 0 and est._probB.size == 0
    est.probability = True  # switched on after fitting: there, but not fitted
    assert hasattr(est, "predict_proba")
    with pytest.raises(Exception, match="predict_proba is not available when fitted with "
                                        "probability=False"):
        est.predict_proba(X)


@pytest.mark.skipif(not PROBABILITY_DEPRECATED, reason="scikit-learn < 1.9 keeps probability")
def test_deprecation_follows_svc() -> None:
    X, y = load_iris(return_X_y=True)
    assert MaxMarginClassifier().probability == SVC().probability == "deprecated"
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        est = MaxMarginClassifier().fit(X, y)  # the default does not warn
    for value in (True, False):
        with pytest.warns(FutureWarning, match=r"probability.+parameter.+deprecated"):
            MaxMarginClassifier(probability=value).fit(X, y)
    for name in ("probA_", "probB_"):
        with pytest.warns(FutureWarning, match=rf"Attribute `{name}` was deprecated"):
            getattr(est, name)
