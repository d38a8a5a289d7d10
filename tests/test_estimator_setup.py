"""The one-vs-one fit's set-up around its binary problems: each problem's samples and labels
(against a per-pair reference), the validation of ``X`` (once, no copy, same refusals), equal
weights folded into ``C``, answers that adopt their fresh arrays, and the summary with negative
alphas."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_digits

import maxmargin.estimators as estimators
from maxmargin import MaxMarginClassifier
from maxmargin._validation import MAX_MAGNITUDE, check_estimator_X
from maxmargin.algorithms.smo.batch import SMOBatch
from maxmargin.algorithms.smo.summary import summarise
from maxmargin.certificate import certify_svm
from maxmargin.kernels import make_kernel
from maxmargin.results import SVMSolution, adopt_svm_solution


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 8), n=st.integers(8, 300),
       block=st.sampled_from([1, 3, 2**22]))
def test_pair_samples_are_each_pairs_kept_samples_and_labels(seed, k, n, block) -> None:
    """Every pair's samples are the kept samples of its two classes in the data's order, with
    class ``i`` as +1 (``classes_[1]`` for two classes), whatever the block of pairs."""
    rng = np.random.default_rng(seed)
    y_idx = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])  # every class present
    kept = rng.random(n) > 0.2
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    previous = estimators.PAIR_MASK_ENTRIES
    estimators.PAIR_MASK_ENTRIES = block * n
    try:
        members, labels = estimators._pair_samples(y_idx, kept, pairs)
    finally:
        estimators.PAIR_MASK_ENTRIES = previous
    assert len(members) == len(labels) == len(pairs)
    for (i, j), idx, lab in zip(pairs, members, labels, strict=True):
        want = np.array([t for t in range(n) if kept[t] and y_idx[t] in (i, j)], dtype=np.intp)
        plus = j if k == 2 else i
        assert idx.dtype == np.intp and np.array_equal(idx, want)
        assert lab.dtype == np.float64
        assert lab.tolist() == [1.0 if y_idx[t] == plus else -1.0 for t in want]


def test_the_estimators_X_is_validated_without_a_copy_and_refused_as_before() -> None:
    """A float64 C-ordered ``X`` is taken as it is (not copied, not modified); NaN, infinity
    and entries above the magnitude limit are refused naming ``X``."""
    X, y = load_digits(return_X_y=True)
    X = np.ascontiguousarray(X[:200], dtype=np.float64)
    before = X.copy()
    assert check_estimator_X(MaxMarginClassifier(), X, reset=True) is X
    model = MaxMarginClassifier().fit(X, y[:200])
    np.testing.assert_array_equal(X, before)
    assert X.flags.writeable
    assert model.support_vectors_.base is not X
    for bad, words in ((np.nan, "NaN"), (np.inf, "infinity"), (2 * MAX_MAGNITUDE, "magnitude")):
        Xb = X.copy()
        Xb[3, 5] = bad
        with pytest.raises(ValueError, match=f"`X`.*{words}"):
            MaxMarginClassifier().fit(Xb, y[:200])
        Xb[3, 5] = -bad
        with pytest.raises(ValueError, match="`X`"):
            MaxMarginClassifier().fit(Xb, y[:200])


def test_equal_weights_fold_into_C_as_each_pairs_weights_did() -> None:
    """Equal sample weights (folded into ``C`` once) give the model of ``C`` times the weight,
    bit for bit; unequal ones keep a box per sample."""
    X, y = load_digits(return_X_y=True)
    X, y = X[:300] / 16.0, y[:300]
    folded = MaxMarginClassifier(C=0.5).fit(X, y, sample_weight=np.full(300, 4.0))
    plain = MaxMarginClassifier(C=2.0).fit(X, y)
    np.testing.assert_array_equal(folded.dual_coef_, plain.dual_coef_)
    np.testing.assert_array_equal(folded.intercept_, plain.intercept_)
    w = np.where(np.arange(300) % 3 == 0, 2.0, 1.0)
    weighted = MaxMarginClassifier().fit(X, y, sample_weight=w)
    assert all(s.sample_weight is not None for s in weighted.solutions_)


def test_an_adopted_solution_keeps_its_arrays_read_only_and_the_constructor_copies() -> None:
    """``adopt_svm_solution`` holds the very arrays it was given, read-only; the constructor
    keeps read-only copies and leaves the caller's arrays writeable."""
    rng = np.random.default_rng(0)
    fields = dict(alpha=rng.random(5), b=0.5, w=None, dual_objective=1.0,
                  primal_objective=1.0, status="optimal", iterations=3, method="smo/wss2",
                  history={"iteration": np.arange(3.0)}, X_train=rng.random((5, 2)),
                  y_train=np.array([1.0, -1.0, 1.0, -1.0, 1.0]), C=1.0,
                  sample_weight=rng.random(5) + 0.5)
    copied = SVMSolution(**fields)
    for name in ("alpha", "X_train", "y_train", "sample_weight"):
        assert not np.shares_memory(getattr(copied, name), fields[name])
        assert fields[name].flags.writeable and not getattr(copied, name).flags.writeable
    adopted = adopt_svm_solution(**fields)
    for name in ("alpha", "X_train", "y_train", "sample_weight"):
        assert getattr(adopted, name) is fields[name] and not fields[name].flags.writeable
    assert adopted.history["iteration"] is fields["history"]["iteration"]
    assert not adopted.history["iteration"].flags.writeable
    again = SVMSolution(**{**fields, "alpha": rng.random(5)})  # the flag does not linger
    assert not np.shares_memory(again.X_train, fields["X_train"])


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 200))
def test_the_summary_with_negative_alphas_is_the_numpy_certificate(seed, n) -> None:
    """Alphas below zero (an infeasible point: ``sum |alpha|`` differs from ``sum alpha``)
    give ``certify_svm``'s certificate bit for bit, and ``max C``."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    C = rng.uniform(0.5, 2.0, n)
    alpha = rng.uniform(-0.5, 1.0, n) * C
    g = rng.normal(size=n) * 3
    got = summarise(alpha, y, g, C)
    want = certify_svm(alpha, None, y, C, make_kernel("linear"), g=g)
    assert got is not None and got.certificate == want and got.box_max == float(np.max(C))


def test_a_batch_leaves_the_callers_labels_and_weights_writeable() -> None:
    """``solve_checked`` adopts only what the batch made (the rows, ``alpha``, the history):
    the caller's labels and weights stay writeable, and solving again with them gives the same
    answer."""
    X, y = load_digits(return_X_y=True)
    idx = np.flatnonzero((y == 3) | (y == 5))
    labels = np.where(y[idx] == 3, 1.0, -1.0)
    weights = np.linspace(0.5, 2.0, idx.size)
    batch = SMOBatch(X, make_kernel("rbf", gamma="scale", X=X))
    first = batch.solve_checked(idx, labels, 1.0, weights)
    assert labels.flags.writeable and weights.flags.writeable
    assert not first.y_train.flags.writeable and not first.alpha.flags.writeable
    again = batch.solve_checked(idx, labels, 1.0, weights)
    np.testing.assert_array_equal(first.alpha, again.alpha)
    assert first.b == again.b and first.sample_weight is not weights
