"""Tests of the throughput work: batches of SMO problems, the kernel engine's block paths
(BLAS columns on wide data, weighted sums for certificates), ``n_jobs`` and the per-problem
shortcuts (the cache's block size, the diagonal, the centred transposed features).

Independent answers: plain NumPy (BLAS products, sequential sums in Python floats), the kernel
objects' own blocks, one-problem-at-a-time ``smo`` runs, and the float64 certificate.
"""

from __future__ import annotations

import functools
import operator

import numpy as np
import pytest
import scipy.sparse as sp
from column_checks import check_symmetric_and_one_pass
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from sklearn.datasets import load_digits, load_iris

from maxmargin import MaxMarginClassifier
from maxmargin._threads import blas_threads, check_n_jobs
from maxmargin.algorithms import _kernel_cache as kc
from maxmargin.algorithms import active_set
from maxmargin.algorithms.smo import precision as smo_precision
from maxmargin.algorithms.smo import smo
from maxmargin.algorithms.smo.api import default_max_iter, problem_of
from maxmargin.algorithms.smo.batch import SMOBatch
from maxmargin.algorithms.smo.solver import Options
from maxmargin.certificate import certify_svm, decision_values
from maxmargin.kernels import PrecomputedKernel, make_kernel, sums
from maxmargin.kernels import qmatrix as qmx
from maxmargin.kernels.formulas import kernel_entry

KINDS = ("linear", "rbf", "poly", "sigmoid")


def _kernel(kind: str, d: int, X: np.ndarray):
    return make_kernel(kind, gamma=0.5 / d, degree=3, coef0=0.25, X=X)


def _same(a, b) -> bool:
    """Two SVMSolutions with the same alpha, b, iterations, status and certificate, bit for
    bit."""
    ca, cb = a.certificate, b.certificate
    return (np.array_equal(a.alpha, b.alpha) and a.b == b.b and a.iterations == b.iterations
            and a.status == b.status and ca.kkt_violation == cb.kkt_violation
            and ca.dual_objective == cb.dual_objective and ca.gap == cb.gap and ca.b == cb.b)


# --- the per-problem shortcuts ------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), kind=st.sampled_from(KINDS), sparse=st.booleans(),
       d=st.integers(1, 12))
def test_diagonal_is_the_kernel_value_of_each_point(seed, kind, sparse, d) -> None:
    """``diagonal`` equals ``kernel_entry`` of the sequential sum ``sum_f x_f x_f`` (Python
    floats: the order ``kernel_value`` sums in; rbf: of the distance 0), bit for bit, on dense
    and sparse data."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, d)) * rng.choice([1e-3, 1.0, 50.0])
    X[rng.random(X.shape) < 0.4] = 0.0
    kern = _kernel(kind, d, X)
    kd = qmx.make_qmatrix(kern, sp.csr_matrix(X) if sparse else X, np.ones(40))
    rows = X if sparse else kd.X  # the Q-matrix's data (rbf: centred)
    expected = []
    for i in range(40):
        s = 0.0
        for v in rows[i]:
            s += float(v) * float(v)
        value = 0.0 if kind == "rbf" else s  # rbf: x_i's distance to itself
        expected.append(kernel_entry(kd.kind, kd.gamma, kd.coef0, kd.degree, value))
    assert np.array_equal(qmx.diagonal(kd), np.array(expected))


def test_diagonal_of_a_stored_gram_matrix() -> None:
    G = np.array([[2.0, 0.5, 0.1], [0.5, 3.0, 0.2], [0.1, 0.2, 4.0]])
    kern, points = PrecomputedKernel(G), np.arange(3.0)[:, None]
    assert np.array_equal(qmx.diagonal(qmx.make_qmatrix(kern, points, np.ones(3))), [2, 3, 4])


@pytest.mark.parametrize("n", [1, 2, 3, 50, 1000])
@pytest.mark.parametrize("cache_size", [1e-4, 0.05, 200.0])
def test_the_cache_block_holds_at_most_every_column(n, cache_size) -> None:
    """The block is the budget, but never more than every column at full length (``max(n, 2)
    n``) and never less than two columns; the slots and the LRU ring are those of the full
    budget (a circular list head -> 0 -> ... -> slots - 1 -> head)."""
    for dtype in (np.float32, np.float64):
        c = kc.make_cache(n, cache_size, dtype)
        budget = int(cache_size * 2**20) // np.dtype(dtype).itemsize
        assert c.data.size == max(min(budget, max(n, 2) * n), 2 * n)
        slots = kc.n_slots_for(n, cache_size, np.dtype(dtype).itemsize)
        assert c.state[kc.S_SLOTS] == slots
        head, seen, s = max(n, 2), [], max(n, 2)
        for _ in range(slots + 1):
            s = c.next[s]
            seen.append(s)
            assert c.next[c.prev[s]] == s
        assert seen == [*range(slots), head]


@pytest.mark.parametrize("kind", KINDS)
def test_the_qmatrix_features_are_numpys_centred_and_transposed(kind) -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 7)) + 40.0
    kd = qmx.make_qmatrix(_kernel(kind, 7, X), X, np.ones(300))
    Xd = X - X.mean(axis=0) if kind == "rbf" else X
    assert np.array_equal(kd.X, Xd) and np.array_equal(kd.XT, Xd.T)
    in_order = [functools.reduce(operator.add, (v * v for v in row), 0.0) for row in Xd]
    assert np.array_equal(kd.sq, in_order)  # summed in feature order, as the columns' products
    if kind == "rbf":  # so x_i . x_i - sq_i = 0 exactly: K_ii = 1
        assert np.all(qmx.diagonal(kd) == 1.0)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 3000), d=st.integers(1, 70),
       scale=st.sampled_from([1e-6, 1.0, 1e6]))
def test_rbf_data_are_centred_by_numpys_means(seed, n, d, scale) -> None:
    """The compiled means that centre rbf data are NumPy's ``mean(axis=0)``, bit for bit (its
    rows summed in order; one feature: NumPy's own pairwise sum), and the squared norms are
    summed in feature order."""
    X = np.random.default_rng(seed).normal(size=(n, d)) * scale + 3.0 * scale
    kd = qmx.make_qmatrix(_kernel("rbf", d, X), X, np.ones(n))
    assert np.array_equal(kd.X, X - X.mean(axis=0))
    assert np.array_equal(kd.XT, kd.X.T)
    in_order = np.zeros(n)
    for row in kd.XT:
        in_order = in_order + row * row
    assert np.array_equal(kd.sq, in_order)


@pytest.mark.parametrize("kind", KINDS)
def test_the_diagonal_is_kernel_value_in_any_layout(kind) -> None:
    """``diagonal`` sums each ``x_i . x_i`` over the layout's features: ``kernel_value``'s
    ``(i, i)`` entries bit for bit, in the identity layout and in a permuted one."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(50, 9)) + 3.0
    kd = qmx.make_qmatrix(_kernel(kind, 9, X), X, np.ones(50))
    expected = []
    for i in range(50):
        s = 0.0
        for v in kd.X[i]:
            s += float(v) * float(v)
        value = 0.0 if kind == "rbf" else s  # rbf: x_i's distance to itself
        expected.append(kernel_entry(kd.kind, kd.gamma, kd.coef0, kd.degree, value))
    assert np.array_equal(qmx.diagonal(kd), expected)
    perm = rng.permutation(50)
    kd.order[:] = perm
    kd.pos[perm] = np.arange(50)
    kd.XT[:] = kd.X[perm].T
    assert np.array_equal(qmx.diagonal(kd), expected)


# --- BLAS products ------------------------------------------------------------------------


_load = njit(lambda c, k, m: kc.load_columns(c, k, m))  # compiled callers only
grow_layout = njit(lambda c, k, n: kc.grow_layout(c, k, n))


@pytest.mark.parametrize("kind", KINDS)
def test_blas_columns_are_the_kernel_columns(kind) -> None:
    """On wide data (d = 600, n = 1,800: 8.6 MB of features) the Q-matrix built with
    ``blocks=True`` computes up to ``BLAS_BLOCK`` columns by one BLAS product; each equals
    ``fill_column``'s to float64 rounding (float32 storage: at most one unit in the last
    place), in its own slot."""
    rng = np.random.default_rng(11)
    n, d = 1800, 600
    X = rng.normal(size=(n, d))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    kd = qmx.make_qmatrix(_kernel(kind, d, X), X, y, blocks=True)
    assert kd.block.shape == (qmx.BLAS_BLOCK, n)
    assert not qmx.make_qmatrix(_kernel(kind, d, X), X, y).block.size  # not asked for
    for dtype in (np.float64, np.float32):
        cache = kc.make_cache(n, 200.0, dtype)
        cols = rng.choice(n, size=qmx.BLAS_BLOCK, replace=False)
        cache.picks[0, :] = cols
        _load(cache, kd, qmx.BLAS_BLOCK)
        one = np.empty(n)
        for i in cols:
            s = cache.slot_of[i]
            assert s >= 0 and cache.len_of[s] == n
            qmx.fill_column(kd, i, 0, n, one)
            got = cache.data[s * n : (s + 1) * n].astype(np.float64)
            rtol = 1e-12 if dtype == np.float64 else 2.0**-23
            np.testing.assert_allclose(got, one, rtol=rtol, atol=rtol * np.max(np.abs(one)))


def test_rounded_features_of_wide_linear_data() -> None:
    """Wide linear data (d = 600, n = 1,800) with ``XT32``, the features rounded to float32: a
    float32 column is the float64 sum in feature order of the rounded features' (exact)
    products, rounded once, bit for bit, on every path (one at a time, on two threads, eight in
    one pass, after a compaction and a growth); within about the documented bound of the exact
    kernel (``2^-24 |K_ij| + 2^-23 |x_i| |x_j|``); symmetric. Float64 columns still come from
    ``XT``; neither sigmoid nor linear data without the BLAS buffers take the copy."""
    rng = np.random.default_rng(12)
    n, d = 1800, 600
    X = rng.normal(size=(n, d)) * np.exp(rng.normal(size=(n, 1)))
    X_before = X.copy()
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    lin = make_kernel("linear")
    plain = qmx.make_qmatrix(lin, X, y, blocks=True)
    assert plain.XT32.size == 0 and plain.XT32.dtype == np.float64  # its own type: see below
    kd = qmx.with_rounded_features(plain)
    assert kd.XT32.dtype == np.float32 and np.array_equal(kd.XT32, kd.XT.astype(np.float32))
    assert not qmx.with_rounded_features(qmx.make_qmatrix(lin, X, y)).XT32.size  # no blocks
    other = qmx.make_qmatrix(_kernel("sigmoid", d, X), X, y, blocks=True)  # (rbf, poly:
    assert not qmx.with_rounded_features(other).XT32.size  # test_rounded_features.py)
    X32 = X.astype(np.float32).astype(np.float64)

    def rounded_column(i: int, rows: np.ndarray) -> np.ndarray:
        s = np.zeros(rows.size)
        for f in range(d):  # feature order; the products are exact
            s += X32[rows, f] * X32[i, f]
        return (y[rows] * y[i] * s).astype(np.float32)

    norms = np.linalg.norm(X, axis=1)
    cols = rng.choice(n, size=kc.MAX_BLOCK, replace=False)
    threaded = qmx.with_rounded_features(qmx.make_qmatrix(lin, X, y, blocks=True, threads=2))
    out32, out64 = np.empty(n, dtype=np.float32), np.empty(n)
    columns = {}
    for i in cols:
        qmx.fill_column(kd, i, 0, n, out32)
        columns[i] = out32.copy()
        np.testing.assert_array_equal(out32, rounded_column(i, np.arange(n)))
        qmx.fill_column(threaded, i, 0, n, out32)
        np.testing.assert_array_equal(out32, columns[i])
        qmx.fill_column(kd, i, 0, n, out64)
        exact = y * y[i] * (X @ X[i])
        assert np.all(np.abs(out64 - exact) <= 1e-12 * norms * norms[i])
        bound = 2.0**-24 * np.abs(exact) + 2.0**-23 * norms * norms[i]
        assert np.all(np.abs(columns[i] - exact) <= 1.01 * bound)
    cache = check_symmetric_and_one_pass(kd, cols, columns)  # eight in one pass over XT32
    keep = np.sort(rng.choice(n, size=700, replace=False))
    perm = np.concatenate([keep, np.setdiff1d(np.arange(n), keep)]).astype(np.int64)
    kc.compact_layout(cache, kd, perm, keep.size)
    assert np.array_equal(kd.XT32, kd.XT.astype(np.float32))  # permuted with the layout
    fresh = int(np.setdiff1d(keep, cols)[0])
    for i in (cols[0], fresh):  # a repacked column, a new one
        np.testing.assert_array_equal(kc.get_column(cache, kd, i), rounded_column(i, keep))
    grow_layout(cache, kd, n)  # the prefixes completed on demand
    for i in (cols[0], fresh):
        np.testing.assert_array_equal(kc.get_column(cache, kd, i),
                                      rounded_column(i, kd.order))
    np.testing.assert_array_equal(X, X_before)


def test_smo_keeps_rounded_features_where_they_pay() -> None:
    """``problem_of`` keeps ``XT32`` for wide linear data whose first phase is float32 and whose
    float32 columns do not all fit in the cache; not with a cache that holds them (the BLAS
    blocks are faster), not for ``precision="double"``; for rbf and poly data too (see
    ``test_rounded_features.py``), not for sigmoid."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1800, 600))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    lin, rbf = make_kernel("linear"), make_kernel("rbf", gamma=1e-3)
    poly, sigmoid = make_kernel("poly", gamma=1e-3), make_kernel("sigmoid", gamma=1e-3)

    def kept(kern, cache_size: float, precision: str = "auto") -> bool:
        options = Options(1e-3, "wss2", True, 10**6, cache_size, True)
        return problem_of(X, y, 1.0, None, kern, options, precision)[0].kd.XT32.size > 0

    assert kept(lin, 5.0) and kept(lin, 5.0, "single")
    assert not kept(lin, 200.0)  # 1,800 float32 columns of 1,800: 13 MB
    assert not kept(lin, 5.0, "double")
    assert kept(rbf, 5.0) and kept(poly, 5.0) and not kept(sigmoid, 5.0)


def test_polish_tries_share_a_budget_only_when_asked() -> None:
    """``polish_tries``: with ``shared_work`` the second try gets what the first left (none
    when it used all); without, each try gets the whole ``max_work``."""
    budgets: list[float | None] = []

    def fake(alpha, y, C, rows, eig_rtol, max_work, work_done, **options):  # noqa: ANN001
        budgets.append(max_work)
        work_done.append(0.75 * max_work)
        return None

    original = active_set.polish_alpha
    active_set.polish_alpha = fake
    try:
        list(active_set.polish_tries(lambda: np.zeros(2), np.ones(2), 1.0, None, max_work=8.0))
        list(active_set.polish_tries(lambda: np.zeros(2), np.ones(2), 1.0, None, max_work=8.0,
                                     shared_work=True))
    finally:
        active_set.polish_alpha = original
    assert budgets == [8.0, 8.0, 8.0, 2.0]


def test_wide_linear_data_certify_with_rounded_features() -> None:
    """SMO on wide linear data with a cache too small for every column, with float32 columns
    from the rounded features (the default) and with float64 ones (``precision="double"``):
    both certified, the same problem to tol, and LIBSVM's dual objective."""
    from sklearn.svm import SVC

    rng = np.random.default_rng(4)
    n, d = 1500, 700
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + X[:, 1] + 2.0 * rng.normal(size=n) > 0, 1.0, -1.0)
    options = Options(1e-3, "wss2", True, 10**6, 2.0, True)
    assert problem_of(X, y, 0.01, None, make_kernel("linear"), options, "auto")[0].kd.XT32.size
    auto = smo(X, y, C=0.01, kernel="linear", cache_size=2.0)
    double = smo(X, y, C=0.01, kernel="linear", precision="double", cache_size=2.0)
    assert auto.status == double.status == "optimal"
    assert auto.certificate.kkt_violation < 1e-3 and double.certificate.kkt_violation < 1e-3
    assert auto.dual_objective == pytest.approx(double.dual_objective, rel=1e-5)
    svc = SVC(kernel="linear", C=0.01, tol=1e-3).fit(X, y)
    coef = svc.dual_coef_[0]
    K = X[svc.support_] @ X[svc.support_].T
    dual = float(np.sum(np.abs(coef)) - 0.5 * coef @ K @ coef)
    assert auto.dual_objective == pytest.approx(dual, rel=1e-4)


def test_wide_data_runs_certify_with_blas_columns() -> None:
    """SMO on wide data with a cache that holds every column (BLAS blocks) and with one too
    small for it (one column at a time): both certified, the same problem to tol."""
    rng = np.random.default_rng(2)
    n, d = 1400, 800
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    big = smo(X, y, C=1.0, kernel="rbf", cache_size=200.0)
    small = smo(X, y, C=1.0, kernel="rbf", cache_size=2.0)
    assert big.status == small.status == "optimal"
    assert big.certificate.kkt_violation < 1e-3 and small.certificate.kkt_violation < 1e-3
    assert big.dual_objective == pytest.approx(small.dual_objective, rel=1e-4)


# --- certificates from the Q-matrix -------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), kind=st.sampled_from(KINDS[1:]), m=st.integers(0, 300),
       offset=st.sampled_from([0.0, 30.0]), d=st.sampled_from([1, 6, 31, 40]))
def test_weighted_sums_are_the_kernel_objects_sums(seed, kind, m, offset, d) -> None:
    """``weighted_sums`` (narrow data: one fused compiled pass; wide: BLAS products and
    compiled passes) equals the kernel object's ``K(X, X[idx]) coef`` to float64 rounding,
    and is the same array on one and on two threads (fixed chunks of rows)."""
    rng = np.random.default_rng(seed)
    n = 300
    m = min(m, n)
    X = rng.normal(size=(n, d)) + offset
    kern = _kernel(kind, d, X)
    kd = qmx.make_qmatrix(kern, X, np.ones(n))
    assert sums.has_weighted_sums(kd)
    idx = rng.choice(n, size=m, replace=False)
    coef = rng.normal(size=m)
    one = sums.weighted_sums(kd, idx, coef)
    assert np.array_equal(one, sums.weighted_sums(kd, idx, coef, threads=2))
    expected = decision_values(kern, X, X[idx], coef)
    scale = np.abs(kern(X, X[idx])) @ np.abs(coef) if m else np.zeros(n)
    assert np.all(np.abs(one - expected) <= 1e-12 * (scale + 1e-300))


def test_weighted_sums_take_dense_compiled_kernels_only() -> None:
    X = np.random.default_rng(0).normal(size=(20, 3))
    assert not sums.has_weighted_sums(qmx.make_qmatrix(make_kernel("linear"), X, np.ones(20)))
    assert not sums.has_weighted_sums(
        qmx.make_qmatrix(make_kernel("rbf", gamma=1.0), sp.csr_matrix(X), np.ones(20)))


# --- n_jobs -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_threads_give_certified_answers_repeatably(kind) -> None:
    """``smo(n_jobs=k)``: the same bits on every run with one ``k``, the default (None) the
    bits of ``n_jobs=1`` (one thread, as scikit-learn's ``n_jobs``); between thread counts
    (BLAS splits its sums by thread count) the same problem solved to tol, each certified,
    and against the kernel object's own sums the same certificate to rounding."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(600, 8))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=600) > 0, 1.0, -1.0)
    kw = {"C": 2.0, "kernel": kind, "gamma": 0.1, "coef0": 0.5, "tol": 1e-6}
    runs = {k: smo(X, y, n_jobs=k, **kw) for k in (1, 2)}
    runs[None] = smo(X, y, **kw)
    for k in (1, 2):
        assert _same(runs[k], smo(X, y, n_jobs=k, **kw))
    assert _same(runs[None], runs[1])
    for sol in runs.values():
        assert sol.status == "optimal" and sol.certificate.kkt_violation < 1e-6
        assert sol.dual_objective == pytest.approx(runs[None].dual_objective, rel=1e-9)
    judged = certify_svm(runs[1].alpha, X, y, 2.0, runs[1].kernel)  # the kernel object's sums
    assert judged.kkt_violation == pytest.approx(runs[1].certificate.kkt_violation, abs=1e-9)
    assert judged.dual_objective == pytest.approx(runs[1].certificate.dual_objective, rel=1e-12)


def test_threads_through_a_float64_continuation(monkeypatch) -> None:
    """A run that needs a float64 continuation (C = 100, tol 1e-8): the certificate is one
    pass over the support vectors and ``G_bar``'s part is computed at the restart; the same
    iterations and objective on one thread and on two, to rounding."""
    monkeypatch.setattr(smo_precision, "DOUBLE_FIRST_BYTES", 0)  # start in float32
    rng = np.random.default_rng(5)
    X = rng.normal(size=(800, 5)) * 3
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=800) > 0, 1.0, -1.0)
    kw = {"C": 100.0, "kernel": "rbf", "gamma": 0.5, "tol": 1e-8}
    default, threaded = smo(X, y, **kw), smo(X, y, n_jobs=2, **kw)
    assert "then float64" in default.message and "then float64" in threaded.message
    assert default.status == threaded.status == "optimal"
    assert default.iterations == threaded.iterations
    assert threaded.dual_objective == pytest.approx(default.dual_objective, rel=1e-12)


def test_the_estimator_with_threads() -> None:
    """``n_jobs=None`` is one thread whatever the machine (``n_jobs=1``, bit for bit); more
    threads fit the same model to tol."""
    X, y = load_iris(return_X_y=True)
    one = MaxMarginClassifier(n_jobs=None).fit(X, y)
    same = MaxMarginClassifier(n_jobs=1).fit(X, y)
    assert all(_same(a, b) for a, b in zip(one.solutions_, same.solutions_, strict=True))
    for n_jobs in (2, -1):
        other = MaxMarginClassifier(n_jobs=n_jobs).fit(X, y)
        assert np.array_equal(one.predict(X), other.predict(X))
        np.testing.assert_allclose(one.decision_function(X), other.decision_function(X),
                                   rtol=0, atol=1e-9)


@pytest.mark.parametrize("bad", [0, -2, 1.5, "2", True])
def test_bad_n_jobs_is_named(bad) -> None:
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="n_jobs"):
        smo(X[:100], np.where(y[:100] == 0, 1.0, -1.0), n_jobs=bad)
    with pytest.raises(ValueError, match="n_jobs"):
        MaxMarginClassifier(n_jobs=bad).fit(X, y)
    assert check_n_jobs(None) is None and check_n_jobs(-1) >= 1 and check_n_jobs(3) == 3


def test_blas_threads_nest() -> None:
    from threadpoolctl import threadpool_info

    def blas() -> set[int]:
        return {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}

    with blas_threads(1):
        assert blas() == {1}
        with blas_threads(1):
            assert blas() == {1}
        assert blas() == {1}


# --- batches ------------------------------------------------------------------------------


def _pairs(y: np.ndarray):
    classes = np.unique(y)
    for a in range(len(classes)):
        for b in range(a + 1, len(classes)):
            idx = np.flatnonzero(np.isin(y, classes[[a, b]]))
            yield idx, np.where(y[idx] == classes[a], 1.0, -1.0)


@pytest.mark.parametrize("kind", KINDS)
def test_a_batch_solves_each_subset_as_smo_does(kind) -> None:
    """``SMOBatch.solve(idx, y)`` is ``smo(X[idx], y, n_jobs=1)`` bit for bit, for every
    one-vs-one pair of a digits subset, with per-sample weights on some."""
    X, y = load_digits(return_X_y=True)
    X, y = X[:400] / 16.0, y[:400]
    kern = _kernel(kind, 64, X)
    batch = SMOBatch(X, kern, tol=1e-3)
    rng = np.random.default_rng(1)
    for p, (idx, labels) in enumerate(_pairs(y)):
        w = rng.uniform(0.5, 2.0, size=idx.size) if p % 3 == 0 else None
        got = batch.solve(idx, labels, 1.5, w)
        assert _same(got, smo(X[idx], labels, C=1.5, kernel=kern, sample_weight=w, n_jobs=1))


def test_a_batch_on_sparse_precomputed_and_hard_margin_problems() -> None:
    X, y = load_iris(return_X_y=True)
    idx = np.flatnonzero(y < 2)
    labels = np.where(y[idx] == 0, 1.0, -1.0)
    csr = sp.csr_matrix(np.where(X > 3.0, X, 0.0))
    rbf = make_kernel("rbf", gamma=0.3)
    assert _same(SMOBatch(csr, rbf).solve(idx, labels),
                 smo(csr[idx], labels, kernel=rbf, n_jobs=1))
    gram = PrecomputedKernel(X @ X.T)
    points = gram.training_points()
    assert _same(SMOBatch(points, gram).solve(idx, labels, None),
                 smo(points[idx], labels, C=None, kernel=gram, n_jobs=1))


def test_the_estimators_entry_is_solve_on_checked_arguments() -> None:
    """``solve_checked`` (the estimator's entry: its own index and label arrays) and a batch
    built with ``checked=True`` give ``solve``'s answers bit for bit, weighted or not, for
    every pair and again for a size seen before (the kept options: one per iteration cap)."""
    X, y = load_iris(return_X_y=True)
    kern = make_kernel("rbf", gamma=0.3)
    batch, trusted = SMOBatch(X, kern), SMOBatch(X, kern, checked=True)
    rng = np.random.default_rng(3)
    for _ in range(2):
        for idx, labels in _pairs(y):
            w = rng.uniform(0.5, 2.0, size=idx.size)
            want = batch.solve(idx, labels, 1.5, w)
            assert _same(trusted.solve_checked(idx, labels, 1.5, w), want)
            assert _same(batch.solve_checked(idx, labels, 1.5, w), want)
            assert _same(trusted.solve(idx, labels, 0.7), batch.solve(idx, labels, 0.7))
    assert set(trusted._options) == {default_max_iter(100)}  # every pair of iris: 100 points


def test_a_batch_refuses_bad_subsets() -> None:
    X, y = load_iris(return_X_y=True)
    batch = SMOBatch(X, make_kernel("linear"))
    with pytest.raises(ValueError, match="both classes"):
        batch.solve(np.arange(10), np.ones(10))
    with pytest.raises(ValueError, match="-1 and \\+1"):
        batch.solve(np.arange(4), np.array([1.0, -1.0, 2.0, 1.0]))
    with pytest.raises(ValueError, match="idx"):
        batch.solve(np.array([0.5, 1.5]), np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="one label per row"):
        batch.solve(np.arange(4), np.array([1.0, -1.0]))
    with pytest.raises(TypeError, match="kernel"):
        SMOBatch(X, "rbf")
    with pytest.raises(ValueError, match="tol"):
        SMOBatch(X, make_kernel("linear"), tol=0.0)


def test_the_estimators_pairs_are_smo_on_each_pair() -> None:
    """Every one-vs-one problem of a fit is ``smo`` on that pair's samples (class ``i`` as +1,
    LIBSVM's orientation) with ``n_jobs=1``, bit for bit."""
    X, y = load_digits(return_X_y=True)
    X, y = X[:300], y[:300]
    model = MaxMarginClassifier(C=3.0).fit(X, y)
    kern = make_kernel("rbf", gamma="scale", X=X)
    for sol, (idx, labels) in zip(model.solutions_, _pairs(y), strict=True):
        assert _same(sol, smo(X[idx], labels, C=3.0, kernel=kern, n_jobs=1))


# --- the certificate's compiled parts -----------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 40), weighted=st.booleans(),
       ties=st.booleans())
def test_the_hinge_minimiser_is_a_minimum_over_the_kinks(seed, n, weighted, ties) -> None:
    """``minimise_hinge_over_b`` returns a kink at which ``h`` is smallest, against a brute
    force over every kink in Python floats (ties in ``r`` included)."""
    from maxmargin.certificate import max_violation, minimise_hinge_over_b

    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    r = np.round(rng.normal(size=n), 1) if ties else rng.normal(size=n)
    c = rng.uniform(0.5, 2.0, n) if weighted else np.ones(n)

    def h(b: float) -> float:
        return sum(ci * max(ri - b, 0.0) if yi > 0 else ci * max(b - ri, 0.0)
                   for ri, yi, ci in zip(r, y, c, strict=True))

    b = minimise_hinge_over_b(r, y, c)
    assert b in set(r.tolist())
    assert h(b) <= min(h(k) for k in r) + 1e-12 * (1.0 + np.abs(c * r).sum())
    alpha = rng.uniform(0.0, 1.0, n) * (rng.random(n) < 0.6)
    g = rng.normal(size=n)
    r = y - g
    up = ((alpha < 1.0) & (y > 0)) | ((alpha > 0) & (y < 0))
    low = ((alpha < 1.0) & (y < 0)) | ((alpha > 0) & (y > 0))
    expected = max(0.0, r[up].max() - r[low].min()) if up.any() and low.any() else 0.0
    assert max_violation(alpha, y, g, 1.0) == expected
