"""``dcd``'s exact finish of the hinge (LIBLINEAR's problem, no equality constraint:
:func:`~maxmargin.algorithms.dcd.finish.feature_finish` with ``scaling``) against the CVXPY
oracle ``liblinear_primal``, on degenerate rows, and its hand-over from ``dcd``'s passes."""

from __future__ import annotations

import importlib
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.bench_dcd import make_dense
from maxmargin.algorithms import dcd
from maxmargin.algorithms.dcd.finish import Handover, feature_finish
from maxmargin.certificate import certify_liblinear, liblinear_rows
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.formulations import liblinear_primal
from maxmargin.tolerances import DCD_FINISH_MIN_WORK

API = importlib.import_module("maxmargin.algorithms.dcd.api")


def problem(n: int, d: int, seed: int, noise: float = 0.7):
    """:func:`~benchmarks.bench_dcd.make_dense`'s rows and labels with extra Gaussian noise on
    the score (a soft margin), both classes present."""
    X, y = make_dense(n, d, seed)
    flip = np.random.default_rng(seed).standard_normal(n) * noise > 1.0
    y = np.where(flip, -y, y)
    y[:2] = [1.0, -1.0]
    return X, y


def weights(X, y, alpha, s):
    """``w~ = sum_i alpha_i y_i x~_i`` recomputed here (bias weight last when ``s``)."""
    v = alpha * y
    w = np.asarray(X.T @ v).ravel()
    return np.append(w, s * v.sum()) if s is not None else w


def judged(X, y, alpha, box, s):
    """The float64 certificate of ``alpha`` in LIBLINEAR's hinge problem."""
    return certify_liblinear(weights(X, y, alpha, s), liblinear_rows(X, s), y, box,
                             loss="hinge", alpha=alpha)


def finish(X, y, alpha, box, s):
    return feature_finish(X, y, alpha, box, 1e-6, 1e12, scaling=0.0 if s is None else s)


def check_against_oracle(X, y, alpha, box, C, s, rel=1e-7):
    """``alpha`` is in the box, its certificate is exact and the oracle agrees."""
    dense = X.toarray() if sp.issparse(X) else X
    assert alpha is not None
    assert np.all(alpha >= 0.0) and np.all(alpha <= box)
    cert = judged(dense, y, alpha, box, s)
    assert cert.gap <= 1e-9
    ref = liblinear_primal(dense, y, C, loss="hinge", intercept_scaling=s,
                           sample_weight=box / C).solve()
    assert cert.primal_objective == pytest.approx(ref.primal_objective, rel=rel, abs=1e-9)
    w = weights(dense, y, alpha, s)
    np.testing.assert_allclose(w, ref.w_tilde, atol=1e-4 * max(1.0, np.abs(w).max()))
    return cert


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize(("n", "d", "C", "s"), [(60, 3, 1.0, 1.0), (120, 8, 5.0, 2.0),
                                                (40, 12, 0.3, None), (80, 4, 1.0, 0.25)])
def test_the_finish_reaches_the_oracles_optimum(sparse, n, d, C, s):
    X, y = problem(n, d, seed=n + d)
    box = np.full(n, C)
    rows = sp.csr_matrix(X) if sparse else X
    start = np.random.default_rng(1).uniform(0.0, 1.0, n) * box
    alpha = finish(rows, y, start, box, s)
    check_against_oracle(rows, y, alpha, box, C, s)
    # a generic optimum: at most as many free alphas as columns of x~
    assert np.count_nonzero((alpha > 0.0) & (alpha < box)) <= d + (s is not None)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(4, 60), d=st.integers(1, 6),
       C=st.floats(0.05, 20.0), s=st.sampled_from([None, 0.5, 1.0, 3.0]),
       sparse=st.booleans(), weighted=st.booleans(), passes=st.integers(0, 30))
def test_property_the_finish_is_exact(seed, n, d, C, s, sparse, weighted, passes):
    """From a random start, or from a few of ``dcd``'s passes (few free alphas), the finish is
    LIBLINEAR's optimum to round-off."""
    X, y = problem(n, d, seed=seed, noise=1.0)
    rng = np.random.default_rng(seed + 1)
    box = C * (rng.uniform(0.5, 2.0, n) if weighted else np.ones(n))
    rows = sp.csr_matrix(np.where(rng.random(X.shape) < 0.4, 0.0, X)) if sparse else X
    if passes:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            start = dcd(rows, y, C, loss="hinge", intercept_scaling=s, sample_weight=box / C,
                        tol=1e-12, max_iter=passes).alpha
    else:
        start = rng.uniform(0.0, 1.0, n) * box
    alpha = finish(rows, y, start, box, s)
    check_against_oracle(rows, y, alpha, box, C, s, rel=1e-6)


@pytest.mark.parametrize("kind", ["repeated rows", "duplicate column", "zero column",
                                  "zero rows", "raw scales", "all at C", "all at 0 but few",
                                  "no intercept"])
def test_degenerate_rows_are_finished(kind):
    X, y = problem(80, 4, seed=7)
    C, s = 2.0, 1.0
    if kind == "repeated rows":
        X, y = np.vstack([X, X[:30], X[:10]]), np.concatenate([y, y[:30], y[:10]])
    elif kind == "duplicate column":
        X = np.hstack([X, X[:, :1]])
    elif kind == "zero column":
        X = np.hstack([X, np.zeros((80, 1))])
    elif kind == "zero rows":
        X[:5] = 0.0
    elif kind == "raw scales":
        X = X * np.array([1e-3, 1.0, 1e3, 1e4])
    elif kind == "all at C":  # tiny C: every margin below 1, every alpha on C
        C = 1e-4
    elif kind == "all at 0 but few":  # separable with a wide margin: few support vectors
        y = np.where(X[:, 0] > 0, 1.0, -1.0)
        X[:, 0] += 3.0 * y
    else:
        s = None
    box = np.full(y.size, C)
    alpha = finish(X, y, np.random.default_rng(3).uniform(0.0, 1.0, y.size) * box, box, s)
    check_against_oracle(X, y, alpha, box, C, s, rel=1e-6)
    if kind == "all at C":
        np.testing.assert_array_equal(alpha, box)


def test_a_refinement_then_a_release_keeps_its_bookkeeping():
    """Regression: a refinement left the candidate for release marked as released (an index
    error once the drop steps looked for it among the free rows)."""
    rng = np.random.default_rng(5466)
    X = rng.standard_normal((150, 3))
    y = np.where(X @ rng.standard_normal(3) + 0.3 + rng.standard_normal(150) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    X, y = np.vstack([X, X[:75]]), np.concatenate([y, y[:75]])
    box = np.full(225, 100.0)
    start = np.random.default_rng(5467).uniform(0.0, 1.0, 225) * box
    check_against_oracle(X, y, finish(X, y, start, box, 3.0), box, 100.0, 3.0, rel=1e-6)


def test_the_finish_leaves_its_input_and_gives_the_same_bits():
    X, y = problem(300, 5, seed=5)
    box = np.ones(300)
    start = np.random.default_rng(0).uniform(0.0, 1.0, 300)
    copy = start.copy()
    one = finish(X, y, start, box, 1.0)
    np.testing.assert_array_equal(start, copy)
    assert np.array_equal(one, finish(X, y, start, box, 1.0))
    assert feature_finish(X, y, start, box, 1e-6, 1e3, scaling=1.0) is None  # out of work


def test_the_hand_over_waits_and_backs_off():
    X, _ = problem(2000, 5, seed=1)
    handover = Handover(X)
    # the passes are about to meet tol (the last fall once more): not due
    assert handover.budget(10, 1e6, 1e-3, 1e-2, 1e-4) is None
    # the finish would cost more than the passes so far: not due
    assert handover.budget(2000, 10.0, 1e-2, 1e-1, 1e-9) is None
    budget = handover.budget(50, 1e6, 1e-2, 1e-1, 1e-9)
    assert budget is not None and budget >= DCD_FINISH_MIN_WORK
    # after a failure: not again until the passes' work has grown or the estimate fallen
    assert handover.budget(50, 1.5e6, 1e-2, 1e-1, 1e-9) is None
    assert handover.budget(50, 1e8, 1e-2, 1e-1, 1e-9) is not None


@pytest.fixture(scope="module")
def dense20k():
    return make_dense(20_000, 20, seed=20_020)


def test_dcd_hands_the_20k_hinge_to_the_finish(dense20k, monkeypatch):
    """The issue's case: 27 free alphas left after 10,240 passes; the finish ends it after a
    few hundred, certified to round-off, between the bounds of the passes alone."""
    X, y = dense20k
    res = dcd(X, y, 1.0, loss="hinge", intercept_scaling=1.0, tol=1e-6)
    assert res.status == "optimal" and res.method == "dcd+finish/hinge"
    assert res.history["eps"][-1] == 0.0 and res.history["gap"][-1] <= 1e-12
    assert res.iterations < 2_560 and res.certificate.gap <= 1e-12
    assert np.count_nonzero((res.alpha > 0.0) & (res.alpha < 1.0)) <= 21
    again = dcd(X, y, 1.0, loss="hinge", intercept_scaling=1.0, tol=1e-6)
    assert np.array_equal(res.alpha, again.alpha) and res.b == again.b
    monkeypatch.setattr(Handover, "budget", lambda *args: None)  # the passes alone
    slow = dcd(X, y, 1.0, loss="hinge", intercept_scaling=1.0, tol=1e-7)
    assert slow.method == "dcd/hinge" and slow.iterations > 10_000
    assert slow.dual_objective <= res.primal_objective <= slow.primal_objective


def test_a_finish_the_judge_rejects_is_not_kept(dense20k, monkeypatch):
    """Never a worse answer: a finish whose certificate misses tol leaves the passes' run."""
    X, y = dense20k
    calls = []

    def bad(X, y, alpha, box, *args, **kwargs):
        calls.append(1)
        return np.zeros_like(alpha)

    monkeypatch.setattr(API, "feature_finish", bad)
    res = dcd(X, y, 1.0, loss="hinge", tol=1e-6)
    assert calls and res.method == "dcd/hinge" and res.status == "optimal"
    assert res.certificate.gap <= 1e-6 and np.all(res.history["eps"] > 0.0)


def test_the_squared_hinge_never_hands_over(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the squared hinge has no exact finish")

    monkeypatch.setattr(API, "feature_finish", refuse)
    X, y = problem(3000, 5, seed=2)
    for solver in ("dual", "primal"):
        res = dcd(X, y, 1.0, loss="squared_hinge", tol=1e-8, solver=solver)
        assert res.status == "optimal" and not res.method.startswith("dcd+finish")


@pytest.mark.parametrize(("s", "weighted"), [(None, False), (2.0, True)])
def test_dcd_with_the_finish_matches_the_oracle(s, weighted):
    X, y = problem(4000, 3, seed=9, noise=1.0)
    sw = np.random.default_rng(2).uniform(0.5, 2.0, y.size) if weighted else None
    res = dcd(X, y, 1.0, loss="hinge", intercept_scaling=s, sample_weight=sw, tol=1e-9)
    assert res.status == "optimal" and res.certificate.gap <= 1e-9
    ref = liblinear_primal(X, y, 1.0, loss="hinge", intercept_scaling=s,
                           sample_weight=sw).solve()
    assert res.primal_objective == pytest.approx(ref.primal_objective, rel=1e-6)
    assert math.isfinite(res.b)


def short_sparse_rows(seed: tuple[int, int]):
    """Rows of 0 to 60 features of scales ``e^-3`` to ``e^3``, seven in ten entries zeroed
    (CSR), noisy labels and ``C`` from 1e-3 to 1e3: the shapes of the symmetry stress."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(5, 300)), int(rng.integers(1, 60))
    X = rng.standard_normal((n, d)) * np.exp(rng.uniform(-3, 3, d))
    if rng.random() < 0.3:
        X += rng.standard_normal(d) * 10 ** rng.uniform(0, 4)
    if rng.random() < 0.3:
        X = np.round(X, int(rng.integers(0, 2)))
    score = X @ rng.standard_normal(d) + rng.normal(size=n) * rng.uniform(0, 3)
    y = np.where(score > 0.0, 1.0, -1.0)
    rng.standard_normal(d)  # unused: keeps the stress generator's draws, so seeds match its cases
    if np.all(y == y[0]):
        y[0] = -y[0]
    rng.random()  # unused: the stress's dense-or-sparse draw (these rows are always sparse)
    X[rng.random(X.shape) < 0.7] = 0.0
    return sp.csr_matrix(X), y, 10 ** rng.uniform(-3, 3)


def test_short_sparse_rows_are_handed_to_the_finish_in_time():
    """Short sparse rows with ``C max ||x||^2`` about 4e5: the passes crawl (a relative gap of
    0.35 after 100,000 of them), and the finish's budget counts a visit's fixed cost
    (:func:`~maxmargin.algorithms.dcd.finish.passes_work`), so the finish is tried with
    enough work to certify, as the oracle confirms (before, ``max_iter``)."""
    X, y, C = short_sparse_rows((7, 42))
    assert X.shape == (172, 38) and C == pytest.approx(93.525, rel=1e-4)
    res = dcd(X, y, C, loss="hinge", intercept_scaling=None)
    assert res.status == "optimal" and res.method == "dcd+finish/hinge"
    ref = liblinear_primal(X.toarray(), y, C, loss="hinge", intercept_scaling=None).solve()
    assert ref.status == "optimal"
    assert res.primal_objective >= ref.dual_objective * (1 - 1e-9)
    assert ref.primal_objective >= res.dual_objective * (1 - 1e-9)
    assert res.primal_objective == pytest.approx(ref.primal_objective, rel=1e-6)
