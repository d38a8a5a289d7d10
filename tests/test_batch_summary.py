"""Tests of a batch's one-pass summary (certificate, ``b``, objectives) and of the answers it
gives: the same bits as ``smo``'s NumPy path, on runs that converge, stop at ``max_iter``, go
through the exact finish or a float64 continuation, and on the hard margin (the NumPy path).

Independent answers: :func:`~maxmargin.certificate.certify_svm` and
:func:`~maxmargin.results.recover_intercept` (NumPy), one-problem-at-a-time ``smo`` runs, and
the estimator's pairs laid out by a per-pair loop.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_digits, load_iris

from maxmargin import MaxMarginClassifier
from maxmargin.algorithms import _kernel_cache as kc
from maxmargin.algorithms.smo import precision as smo_precision
from maxmargin.algorithms.smo import smo
from maxmargin.algorithms.smo.batch import SMOBatch
from maxmargin.algorithms.smo.summary import summarise
from maxmargin.certificate import certify_svm
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.kernels import make_kernel
from maxmargin.results import recover_intercept


def _identical(a, b) -> bool:
    """Two SVMSolutions alike in every number they report (NaN equal to NaN)."""
    def same(u, v) -> bool:
        return u == v or (isinstance(u, float) and math.isnan(u) and math.isnan(v))

    ca, cb = a.certificate, b.certificate
    fields = ("kkt_violation", "gap", "primal_objective", "dual_objective", "b", "feasibility")
    return (np.array_equal(a.alpha, b.alpha) and a.b == b.b and a.b_interval == b.b_interval
            and a.primal_objective == b.primal_objective
            and a.dual_objective == b.dual_objective and a.iterations == b.iterations
            and a.status == b.status and a.message == b.message
            and all(same(getattr(ca, f), getattr(cb, f)) for f in fields)
            and all(np.array_equal(a.history[k], b.history[k]) for k in a.history))


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 300), free=st.sampled_from([0.0, 0.3, 1.0]),
       weighted=st.booleans())
def test_the_summary_is_the_numpy_certificate_and_intercept(seed, n, free, weighted) -> None:
    """``summarise`` gives ``certify_svm``'s certificate and ``recover_intercept``'s ``b``,
    bit for bit, and make_result's ``||w||^2`` and slack, with and without free alphas."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    C = rng.uniform(0.5, 2.0, n) if weighted else np.full(n, 1.5)
    where = rng.random(n)
    alpha = np.where(where < 0.4, 0.0, C)  # at the bounds, and free with probability `free`
    inside = rng.random(n) < free
    alpha[inside] = rng.uniform(0.0, 1.0, inside.sum()) * C[inside]
    g = rng.normal(size=n) * 3
    got = summarise(alpha, y, g, C)
    want = certify_svm(alpha, None, y, C, make_kernel("linear"), g=g)
    assert got is not None and got.certificate == want
    b, interval = recover_intercept(alpha, y, g, C)
    assert (got.b, got.interval) == (b, interval)
    assert got.w2 == max(float((alpha * y) @ g), 0.0)
    assert got.slack == float(C @ np.maximum(0.0, 1.0 - y * (g + b)))


def test_the_summary_leaves_non_finite_values_to_numpy() -> None:
    y = np.array([1.0, -1.0, 1.0])
    C = np.ones(3)
    assert summarise(np.array([0.5, np.nan, 0.0]), y, np.zeros(3), C) is None
    assert summarise(np.array([0.5, 0.5, 0.0]), y, np.array([0.0, np.inf, 1.0]), C) is None


def _digits_pairs(m: int = 500):
    X, y = load_digits(return_X_y=True)
    X, y = X[:m] / 16.0, y[:m]
    for i, j in ((0, 1), (3, 5), (8, 9)):
        idx = np.flatnonzero((y == i) | (y == j))
        yield X, idx, np.where(y[idx] == i, 1.0, -1.0)


@pytest.mark.parametrize("C", [0.01, 1.0, 30.0])
def test_a_batch_reports_what_smo_reports(C) -> None:
    """Every number of a batch's answer (objectives, ``b`` and its interval, the certificate,
    the message, the history) is ``smo``'s, weighted or not, small C (no free alpha) to large."""
    rng = np.random.default_rng(7)
    for X, idx, labels in _digits_pairs():
        kern = make_kernel("rbf", gamma="scale", X=X)
        batch = SMOBatch(X, kern)
        for w in (None, rng.uniform(0.5, 2.0, idx.size)):
            got = batch.solve(idx, labels, C, w)
            want = smo(X[idx], labels, C=C, kernel=kern, sample_weight=w, n_jobs=1)
            assert _identical(got, want)
            assert got.status == "optimal" and got.certificate.meets(1e-3)


def test_a_batchs_problems_reuse_one_cache_block() -> None:
    """The problems of a batch take their caches' columns from one block (no fresh pages a
    problem), largest first: each answer is ``smo``'s all the same, bit for bit."""
    X, _, _ = next(_digits_pairs())
    kern = make_kernel("rbf", gamma="scale", X=X)
    batch = SMOBatch(X, kern)
    problems = sorted(_digits_pairs(), key=lambda p: -p[1].size)
    blocks = []
    for _, idx, labels in problems + problems[::-1]:
        got = batch.solve(idx, labels)
        assert _identical(got, smo(X[idx], labels, kernel=kern, n_jobs=1))
        assert "(float64 kernel cache)" in got.message
        blocks.append(batch._spare[np.dtype(np.float64)])
    assert all(b is blocks[0] for b in blocks)
    assert blocks[0].size == problems[0][1].size ** 2  # the largest problem's every column
    small = kc.make_cache(10, 1.0, np.float64, blocks[0])
    assert np.shares_memory(small.data, blocks[0]) and small.data.size == 100
    assert not np.shares_memory(kc.make_cache(10, 1.0, np.float64, blocks[0][:99]).data,
                                blocks[0])  # too small for its columns: a new block
    assert not np.shares_memory(kc.make_cache(10, 1.0, np.float32, blocks[0]).data, blocks[0])


def test_a_batch_through_the_exact_finish_and_a_cap() -> None:
    """Stopped at ``max_iter = 3``, the exact finish certifies the answer in float64
    (``"optimal"``), as ``smo``'s; without the finish the run ends at the cap, uncertified
    (``"max_iter"``), as ``smo``'s."""
    X, idx, labels = next(_digits_pairs())
    kern = make_kernel("rbf", gamma="scale", X=X)
    finished = SMOBatch(X, kern, max_iter=3).solve(idx, labels)
    assert _identical(finished, smo(X[idx], labels, kernel=kern, max_iter=3, n_jobs=1))
    assert finished.status == "optimal" and "finished exactly" in finished.message
    assert finished.certificate.kkt_violation < 1e-3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        capped = SMOBatch(X, kern, max_iter=3, finish=False).solve(idx, labels)
        want = smo(X[idx], labels, kernel=kern, max_iter=3, finish=False, n_jobs=1)
    assert _identical(capped, want)
    assert capped.status == "max_iter" and not capped.certificate.meets(1e-3)


def test_a_batch_through_a_float64_continuation_and_the_hard_margin(monkeypatch) -> None:
    """A tight tolerance at large C (float32 cannot certify it: a float64 continuation), and
    the hard margin (the NumPy certificate): ``smo``'s answers, bit for bit."""
    monkeypatch.setattr(smo_precision, "DOUBLE_FIRST_BYTES", 0)  # start in float32
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 5)) * 3
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=300) > 0, 1.0, -1.0)
    kern = make_kernel("rbf", gamma=0.5)
    idx = np.arange(0, 300, 2)
    got = SMOBatch(X, kern, tol=1e-8).solve(idx, y[idx], 100.0)
    want = smo(X[idx], y[idx], C=100.0, kernel=kern, tol=1e-8, n_jobs=1)
    assert _identical(got, want) and "then float64 kernel cache" in got.message
    assert got.status == "optimal" and got.certificate.kkt_violation < 1e-8
    Xs, ys = load_iris(return_X_y=True)
    sep = np.flatnonzero(ys < 2)
    labels = np.where(ys[sep] == 0, 1.0, -1.0)
    hard = SMOBatch(Xs, make_kernel("linear")).solve(sep, labels, None)
    assert _identical(hard, smo(Xs[sep], labels, C=None, kernel="linear", n_jobs=1))


def test_a_batchs_answer_keeps_its_own_rows_read_only() -> None:
    """The answer holds ``X[idx]`` (not copied again): equal to it, read-only, and unchanged
    when the batch's data change afterwards."""
    X, idx, labels = next(_digits_pairs())
    X = X.copy()
    sol = SMOBatch(X, make_kernel("rbf", gamma="scale", X=X)).solve(idx, labels)
    np.testing.assert_array_equal(sol.X_train, X[idx])
    assert not sol.X_train.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        sol.X_train[0, 0] = 1.0
    before = sol.decision_function(X[idx])
    X[:] = 0.0
    np.testing.assert_array_equal(sol.decision_function(sol.X_train), before)


def test_the_estimators_layout_is_each_pairs_coefficients() -> None:
    """``support_`` and ``dual_coef_`` hold each pair's ``alpha y`` where LIBSVM puts them
    (class ``i``'s in row ``j - 1``, class ``j``'s in row ``i``), against a per-pair loop."""
    X, y = load_digits(return_X_y=True)
    X, y = X[:400], y[:400]
    model = MaxMarginClassifier(C=2.0).fit(X, y)
    k = 10
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    support = sorted({int(t) for (i, j), sol in zip(pairs, model.solutions_, strict=True)
                      for t in np.flatnonzero((y == i) | (y == j))[sol.alpha != 0.0]},
                     key=lambda t: (y[t], t))
    assert model.support_.tolist() == support
    column = {t: c for c, t in enumerate(support)}
    dual = np.zeros((k - 1, len(support)))
    for (i, j), sol in zip(pairs, model.solutions_, strict=True):
        idx = np.flatnonzero((y == i) | (y == j))
        for t, a, lab in zip(idx, sol.alpha, np.where(y[idx] == i, 1.0, -1.0), strict=True):
            if a != 0.0:
                dual[j - 1 if y[t] == i else i, column[int(t)]] = a * lab
    np.testing.assert_array_equal(model.dual_coef_, dual)
