"""Tests of rbf and poly columns from the features rounded to float32 (``XT32``, and for rbf
``sqT32``; the linear kernel's are tested in ``test_throughput.py``).

Independent answers: the rbf kernel of the rounded points summed in feature order in NumPy
(exact products, then the package's one exponential), the kernel object on the original
points (the documented bound), the one-thread and unshrunk columns, float64 runs
(``precision="double"``) and LIBSVM's dual objective.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from column_checks import check_symmetric_and_one_pass, grow_layout
from hypothesis import given, settings
from hypothesis import strategies as st

from maxmargin.algorithms import _kernel_cache as kc
from maxmargin.algorithms.smo import loops, smo
from maxmargin.algorithms.smo.api import problem_of
from maxmargin.algorithms.smo.solver import Options
from maxmargin.kernels import make_kernel
from maxmargin.kernels import qmatrix as qmx
from maxmargin.kernels.formulas import exp_scaled_inplace


def _rounded_reference(kd: qmx.QMatrix, X: np.ndarray, y: np.ndarray, gamma: float):
    """``col(i, rows)``: ``y_i y_t exp(-gamma D)`` in float32 with ``D`` from the centred
    points rounded to float32, their products summed in feature order (exact in float64)."""
    Xc = X - X.mean(axis=0)
    X32 = Xc.astype(np.float32).astype(np.float64)
    sq = np.zeros(X.shape[0])
    for f in range(X.shape[1]):
        sq += X32[:, f] * X32[:, f]

    def col(i: int, rows: np.ndarray) -> np.ndarray:
        s = np.zeros(rows.size)
        for f in range(X.shape[1]):
            s += X32[rows, f] * X32[i, f]
        D = np.maximum(sq[rows] + sq[i] - 2.0 * s, 0.0)
        exp_scaled_inplace(D, np.empty(rows.size, dtype=np.int64), gamma)
        return (y[rows] * y[i] * D).astype(np.float32)

    return col, sq


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10**6), d=st.integers(8, 40), offset=st.sampled_from([0.0, 1e3]))
def test_rounded_rbf_columns_are_the_kernel_of_the_rounded_points(seed, d, offset) -> None:
    """A float32 rbf column of a Q-matrix with rounded features is the kernel of the rounded
    centred points bit for bit (one at a time, on two threads, in one pass, after a compaction
    and a growth); ``Q_ii = 1`` and ``Q_ij = Q_ji`` exactly; within the documented bound of the
    exact kernel; float64 columns still come from ``XT``; the data are not modified."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2000, 3000))
    X = rng.normal(size=(n, d)) + offset
    X_before = X.copy()
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    gamma = 1.0 / (d * X.var())
    kern = make_kernel("rbf", gamma=gamma)
    plain = qmx.make_qmatrix(kern, X, y)
    assert plain.XT32.size == 0 and plain.sqT32.size == 0
    kd = qmx.with_rounded_features(plain)
    assert kd.XT32.dtype == np.float32 and np.array_equal(kd.XT32, kd.XT.astype(np.float32))
    col, sq32 = _rounded_reference(kd, X, y, gamma)
    np.testing.assert_array_equal(kd.sqT32, sq32)
    threaded = qmx.with_rounded_features(qmx.make_qmatrix(kern, X, y, threads=2))
    cols = rng.choice(n, size=kc.MAX_BLOCK, replace=False)
    out32, out64 = np.empty(n, dtype=np.float32), np.empty(n)
    every = np.arange(n)
    columns = {}
    R = math.sqrt(float(np.max(kd.sqT)))
    for i in cols:
        qmx.fill_column(kd, i, 0, n, out32)
        columns[i] = out32.copy()
        np.testing.assert_array_equal(out32, col(i, every))
        assert out32[i] == 1.0
        qmx.fill_column(threaded, i, 0, n, out32)
        np.testing.assert_array_equal(out32, columns[i])
        qmx.fill_column(kd, i, 0, n, out64)
        ref64 = np.empty(n)
        qmx.fill_column(plain, i, 0, n, ref64)
        np.testing.assert_array_equal(out64, ref64)
        exact = y * y[i] * kern(X, X[i : i + 1])[:, 0]
        bound = 2.0**-24 + 2.0**-22 * math.sqrt(gamma / (2.0 * math.e)) * R
        assert np.all(np.abs(columns[i] - exact) <= 1.01 * bound + 1e-13)
    cache = check_symmetric_and_one_pass(kd, cols, columns)  # one pass over XT32, sqT32
    keep = np.sort(rng.choice(n, size=n // 3, replace=False))
    perm = np.concatenate([keep, np.setdiff1d(every, keep)]).astype(np.int64)
    kc.compact_layout(cache, kd, perm, keep.size)
    np.testing.assert_array_equal(kd.sqT32[: keep.size], sq32[keep])  # permuted with it
    fresh = int(np.setdiff1d(keep, cols)[0])
    for i in (cols[0], fresh):
        np.testing.assert_array_equal(kc.get_column(cache, kd, i), col(i, keep))
    grow_layout(cache, kd, n)  # the prefixes completed on demand
    for i in (cols[0], fresh):
        np.testing.assert_array_equal(kc.get_column(cache, kd, i), col(i, kd.order))
    np.testing.assert_array_equal(X, X_before)


def test_rounding_error_and_where_rbf_data_keep_rounded_features() -> None:
    """``rounding_error`` is ``1 + sqrt(8/e) sqrt(gamma R^2 / d)`` for rbf and
    ``ROUNDED_FEATURES_ERROR`` for linear; rbf data keep ``XT32`` only while it is at most that
    constant, and only when dense (not sparse, not a Gram matrix); sigmoid never."""
    rng = np.random.default_rng(2)
    n, d = 500, 10
    X = rng.normal(size=(n, d))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    Xc = X - X.mean(axis=0)
    R2 = float(np.max(np.sum(Xc * Xc, axis=1)))
    for gamma in (0.01, 0.1, 1.0, 10.0):
        kd = qmx.make_qmatrix(make_kernel("rbf", gamma=gamma), X, y)
        err = qmx.rounding_error(kd)
        assert err == pytest.approx(1.0 + math.sqrt(8.0 / math.e) * math.sqrt(gamma * R2 / d),
                                    rel=1e-12)
        kept = qmx.with_rounded_features(kd).XT32.size > 0
        assert kept == (err <= qmx.ROUNDED_FEATURES_ERROR)
    lin = qmx.make_qmatrix(make_kernel("linear"), X, y)
    assert qmx.rounding_error(lin) == qmx.ROUNDED_FEATURES_ERROR
    assert not qmx.with_rounded_features(lin).XT32.size  # no BLAS blocks: narrow data
    rbf = make_kernel("rbf", gamma=0.1)
    assert not qmx.with_rounded_features(qmx.make_qmatrix(rbf, sp.csr_matrix(X), y)).XT32.size
    other = qmx.make_qmatrix(make_kernel("sigmoid", gamma=0.1), X, y)
    assert not qmx.with_rounded_features(other).XT32.size


def test_smo_on_rbf_data_with_rounded_features_is_certified() -> None:
    """``smo`` keeps the rounded features when its float32 cache cannot hold every column
    (not when it can, not in float64), certifies its answer, and solves the same problem as
    the float64 run and LIBSVM to tol; ``n_jobs=2`` gives the same bits."""
    from sklearn.svm import SVC

    rng = np.random.default_rng(9)
    n, d = 2000, 20  # the float32 Q-matrix (16 MB) is 8 times the 2 MB cache
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + X[:, 1] ** 2 - 1.0 + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    gamma = 1.0 / (d * X.var())
    kern = make_kernel("rbf", gamma=gamma)

    def kept(cache_size: float, precision: str = "auto") -> bool:
        options = Options(1e-3, "wss2", True, 10**6, cache_size, True)
        return problem_of(X, y, 1.0, None, kern, options, precision)[0].kd.XT32.size > 0

    assert kept(2.0) and kept(2.0, "single")
    assert not kept(200.0) and not kept(2.0, "double")
    for C in (1.0, 30.0):
        kw = {"C": C, "kernel": "rbf", "gamma": gamma, "cache_size": 2.0}
        auto, double = smo(X, y, **kw), smo(X, y, precision="double", **kw)
        assert auto.status == double.status == "optimal"
        assert auto.certificate.kkt_violation < 1e-3 and double.certificate.kkt_violation < 1e-3
        assert auto.dual_objective == pytest.approx(double.dual_objective, rel=1e-6)
        svc = SVC(kernel="rbf", C=C, gamma=gamma, tol=1e-3).fit(X, y)
        coef = svc.dual_coef_[0]
        K = kern(X[svc.support_], X[svc.support_])
        dual = float(np.sum(np.abs(coef)) - 0.5 * coef @ K @ coef)
        assert auto.dual_objective == pytest.approx(dual, rel=1e-5)
        two = smo(X, y, n_jobs=2, **kw)
        assert np.array_equal(two.alpha, auto.alpha) and two.b == auto.b


def test_a_float64_continuation_drops_the_rounded_features() -> None:
    """A run with rounded features that needs a float64 continuation (C = 100, tol 1e-8, a
    cache too small for every column): the float64 phase computes its columns from the
    features themselves, through the Q-matrix type without ``XT32`` (``smo``'s float64
    driver, compiled already), and the answer is certified and the float64 run's."""
    rng = np.random.default_rng(5)
    n, d = 1500, 8
    X = rng.normal(size=(n, d)) * 3
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=n) > 0, 1.0, -1.0)
    gamma = 1.0 / (d * X.var())
    options = Options(1e-8, "wss2", True, 10**7, 1.0, True)
    problem = problem_of(X, y, 100.0, None, make_kernel("rbf", gamma=gamma), options, "auto")[0]
    assert problem.kd.XT32.size and problem.kd.sqT32.size
    assert not qmx.without_rounded_features(problem.kd).XT32.size
    kw = {"C": 100.0, "kernel": "rbf", "gamma": gamma, "tol": 1e-8, "cache_size": 1.0}
    auto, double = smo(X, y, **kw), smo(X, y, precision="double", **kw)
    assert "then float64" in auto.message
    assert auto.status == double.status == "optimal"
    assert auto.certificate.kkt_violation < 1e-8
    assert auto.dual_objective == pytest.approx(double.dual_objective, rel=1e-10)
    for sig in loops.solve_pairs.overloads:  # no float64 driver for the rounded type
        cache, kd = sig[1], sig[2]
        if cache.types[cache.fields.index("data")].dtype == numba.float64:
            assert kd.types[kd.fields.index("XT32")].dtype == numba.float64


@pytest.mark.parametrize("coef0", [0.0, 1.0])
def test_rounded_poly_columns_are_the_kernel_of_the_rounded_points(coef0) -> None:
    """A float32 poly column from rounded features is ``(gamma s + coef0)^p`` of the rounded
    points' inner products summed in feature order (the power by repeated products) bit for
    bit, on one thread and two; within the worst-case bound of the exact kernel;
    ``rounding_error`` is ``1 + 2 p g (g + |c|)^(p-1) / (max K_tt sqrt(d))``, and data whose
    count is above 3 (``coef0`` cancelling ``gamma |x|^2``) keep the float64 features."""
    rng = np.random.default_rng(21)
    n, d, degree = 2500, 16, 3
    X = rng.normal(size=(n, d)) + 0.5
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    gamma = 1.0 / (d * X.var())
    kern = make_kernel("poly", gamma=gamma, degree=degree, coef0=coef0)
    plain = qmx.make_qmatrix(kern, X, y)
    sq = np.sum(X * X, axis=1)
    g = gamma * sq.max()
    top = np.max(np.abs(gamma * sq + coef0)) ** degree
    expected = 1.0 + 2.0 * degree * g * (g + coef0) ** (degree - 1) / (top * math.sqrt(d))
    assert qmx.rounding_error(plain) == pytest.approx(expected, rel=1e-12)
    kd = qmx.with_rounded_features(plain)
    assert kd.XT32.size and not kd.sqT32.size
    threaded = qmx.with_rounded_features(qmx.make_qmatrix(kern, X, y, threads=2))
    X32 = X.astype(np.float32).astype(np.float64)
    out, out2 = np.empty(n, dtype=np.float32), np.empty(n, dtype=np.float32)
    for i in rng.choice(n, size=6, replace=False):
        s = np.zeros(n)
        for f in range(d):
            s += X32[:, f] * X32[i, f]
        base = gamma * s + coef0
        value = base.copy()
        for _ in range(degree - 1):
            value *= base
        qmx.fill_column(kd, i, 0, n, out)
        qmx.fill_column(threaded, i, 0, n, out2)
        np.testing.assert_array_equal(out, (y * y[i] * value).astype(np.float32))
        np.testing.assert_array_equal(out, out2)
        exact = y * y[i] * kern(X, X[i : i + 1])[:, 0]
        assert np.all(np.abs(out - exact) <= 1.01 * (expected - 1.0) * math.sqrt(d) * 2.0**-24
                      * top + 2.0**-24 * np.abs(exact) + 1e-12 * top)
    cancelling = qmx.make_qmatrix(make_kernel("poly", gamma=gamma, degree=degree,
                                              coef0=-gamma * float(np.median(sq))), X, y)
    assert qmx.rounding_error(cancelling) > qmx.ROUNDED_FEATURES_ERROR
    assert not qmx.with_rounded_features(cancelling).XT32.size


def test_smo_on_poly_data_with_rounded_features_is_certified() -> None:
    """``smo`` with a poly kernel and a cache too small for every column keeps the rounded
    features, certifies its answer and solves the problem of the float64 run and of LIBSVM to
    tol."""
    from sklearn.svm import SVC

    rng = np.random.default_rng(13)
    n, d = 2500, 20
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] * X[:, 1] + X[:, 2] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    gamma = 1.0 / (d * X.var())
    kw = {"C": 1.0, "kernel": "poly", "gamma": gamma, "degree": 3, "coef0": 0.0,
          "cache_size": 2.0}
    options = Options(1e-3, "wss2", True, 10**6, 2.0, True)
    kern = make_kernel("poly", gamma=gamma, degree=3, coef0=0.0)
    assert problem_of(X, y, 1.0, None, kern, options, "auto")[0].kd.XT32.size
    auto, double = smo(X, y, **kw), smo(X, y, precision="double", **kw)
    assert auto.status == double.status == "optimal"
    assert auto.certificate.kkt_violation < 1e-3 and double.certificate.kkt_violation < 1e-3
    assert auto.dual_objective == pytest.approx(double.dual_objective, rel=1e-6)
    svc = SVC(kernel="poly", C=1.0, gamma=gamma, degree=3, coef0=0.0, tol=1e-3).fit(X, y)
    coef = svc.dual_coef_[0]
    K = kern(X[svc.support_], X[svc.support_])
    dual = float(np.sum(np.abs(coef)) - 0.5 * coef @ K @ coef)
    assert auto.dual_objective == pytest.approx(dual, rel=1e-5)
