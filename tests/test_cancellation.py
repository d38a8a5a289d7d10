"""The cancellation rule in every compiled path that turns inner products into rbf distances.

``||a - b||^2 = a.a + b.b - 2 a.b`` cancels for near duplicates; where it falls below
``CANCEL_RTOL (a.a + b.b)`` every path sums it from the differences instead
(:func:`~maxmargin.kernels.formulas.cancelled`). Independent answers: ``exp(-gamma D)`` in
NumPy with ``D = sum_f (a_f - b_f)^2`` summed from the differences of the points the engine
holds (rbf dense data are centred first, float32 columns come from the rounded features:
those points), ``math.exp``-accurate; a fresh float64 certificate; the campaign's own checks.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from maxmargin.algorithms._nearest_point import engine_gram, kernel_column
from maxmargin.algorithms.smo import smo
from maxmargin.certificate import certify_svm
from maxmargin.kernels import make_kernel
from maxmargin.kernels import qmatrix as qmx
from maxmargin.tolerances import CANCEL_RTOL
from maxmargin.verification.campaign import random_case
from maxmargin.verification.suite import run_suite

EPS = float(np.finfo(np.float64).eps)


@njit
def _columns(qm, cols, L, data, offsets, acc):  # noqa: ANN001, ANN202 (compiled callers only)
    qmx.fill_columns(qm, cols, cols.shape[0], L, data, offsets, acc)


def _by_fill_columns(kd: qmx.QMatrix, dtype: type, block: int) -> np.ndarray:
    """Every column by ``fill_columns``, ``block`` columns a call, as rows of a matrix."""
    n = kd.y.shape[0]
    out = np.empty((n, n))
    acc = np.empty((qmx.MAX_BLOCK, qmx.BLOCK_ROWS))
    for b0 in range(0, n, block):
        cols = np.arange(b0, min(n, b0 + block), dtype=np.int64)
        data = np.full(cols.size * n, np.nan, dtype=dtype)
        _columns(kd, cols, n, data, np.arange(cols.size, dtype=np.int64) * n, acc)
        out[b0 : b0 + cols.size] = data.reshape(cols.size, n)
    return out


def _by_fill_column(kd: qmx.QMatrix, dtype: type) -> np.ndarray:
    n = kd.y.shape[0]
    out, col = np.empty((n, n)), np.empty(n, dtype=dtype)
    for i in range(n):
        qmx.fill_column(kd, i, 0, n, col)
        out[i] = col
    return out


def _reference(P: np.ndarray, gamma: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(K, D, S)``: ``K = exp(-gamma D)`` with ``D_ij = sum_f (p_if - p_jf)^2`` summed in
    feature order from the differences, and ``S_ij = p_i . p_i + p_j . p_j``."""
    D = np.zeros((P.shape[0], P.shape[0]))
    sq = np.zeros(P.shape[0])
    for f in range(P.shape[1]):
        e = P[:, f][:, None] - P[:, f][None, :]
        D += e * e
        sq += P[:, f] * P[:, f]
    with np.errstate(under="ignore"):
        K = np.exp(-gamma * D)
    return K, D, sq[:, None] + sq[None, :]


def _check(got: np.ndarray, ref: tuple, gamma: float, what: str, rounding: float = 0.0,
           symmetric: bool = True) -> None:
    """``got`` agrees with ``K``: to a relative 1e-12 (or 1e-300) on the near duplicates
    (``D < CANCEL_RTOL S / 2``: the expansion cancels there, the rule recomputes them), and on
    the other pairs within the expansion's own error besides (``(d + 4) eps S`` in ``D``,
    unchanged by the rule); ``rounding``: a float32 column's relative rounding. Bit-for-bit
    symmetric (``symmetric=False``: on the near duplicates only) and exactly 1 on the
    diagonal."""
    K, D, S = ref
    d = got.shape[0]
    near = D < 0.5 * CANCEL_RTOL * S
    with np.errstate(over="ignore"):
        expansion = np.where(near, 0.0, np.expm1(gamma * (d + 4) * EPS * S))
    bound = K * (1e-12 + rounding + expansion) + (2.0**-149 if rounding else 1e-300)
    bad = np.argwhere(~(np.abs(got - K) <= bound))
    assert bad.size == 0, (what, bad[:5], got[tuple(bad[0])], K[tuple(bad[0])])
    assert np.all(np.diagonal(got) == 1.0), what
    same = got == got.T
    assert np.all(same | ~near) if not symmetric else np.all(same), what


def _points(rng: np.random.Generator, m: int, d: int, scale: float, offset: float,
            delta: float) -> np.ndarray:
    """``m`` points of clouds at ``offset`` (some far from the origin), each with near
    duplicates ``x + delta * scale * u`` (``delta`` and a thousandth of it) or an exact one."""
    centres = offset * scale * rng.choice([-1.0, 0.0, 1.0], size=(3, d))
    base = centres[rng.integers(0, 3, size=m)] + scale * rng.normal(size=(m, d))
    base[rng.random((m, d)) < 0.2] = 0.0  # zeros: sparse rows of different patterns
    parts = [base]
    for factor in (1.0, 1e-3):
        u = rng.normal(size=(m, d)) * (rng.random((m, d)) < 0.7)
        parts.append(base + factor * delta * scale * u)
    parts.append(base[: max(1, m // 4)])  # exact duplicates
    X = np.concatenate(parts)
    return X[rng.permutation(X.shape[0])]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), d=st.sampled_from([1, 2, 3, 5, 9, 64, 70]),
       m=st.integers(2, 12), log_scale=st.floats(-3, 3), log_offset=st.floats(-1, 4),
       log_delta=st.floats(-9, -3), log_g=st.floats(-2, 8))
def test_every_path_recomputes_near_duplicates(seed, d, m, log_scale, log_offset, log_delta,
                                               log_g) -> None:
    """Near duplicates (``x + delta``, ``delta`` 1e-12 to 1e-3 of the scale, clouds up to 1e4
    scales from the origin), ``gamma`` up to 1e8 / scale^2: every path's values agree with the
    kernel summed from the differences (:func:`_check`), symmetric, ``K_ii = 1``: columns one
    at a time, several in one pass, by one BLAS product (wide data), from the float32 rounded
    features (one at a time and in one pass), single entries, the nearest-point methods'
    columns and Gram matrix, and sparse rows."""
    rng = np.random.default_rng(seed)
    scale = 10.0**log_scale
    X = _points(rng, m, d, scale, 10.0**log_offset, 10.0**log_delta)
    X_before = X.copy()
    n = X.shape[0]
    gamma = 10.0**log_g / scale**2
    kern = make_kernel("rbf", gamma=gamma)
    y = np.ones(n)
    kd = qmx.make_qmatrix(kern, X, y)
    ref = _reference(kd.X, gamma)  # the centred points the engine holds
    _check(_by_fill_column(kd, np.float64), ref, gamma, "fill_column")
    _check(_by_fill_columns(kd, np.float64, qmx.MAX_BLOCK), ref, gamma, "fill_columns")
    values = np.array([[qmx.kernel_value(kd, i, j) for j in range(n)] for i in range(n)])
    _check(values, ref, gamma, "kernel_value")
    assert np.all(qmx.diagonal(kd) == 1.0)
    col = np.empty(n)
    data = (np.zeros((n, 1)), qmx.diagonal(kd), y, (1,), np.zeros((0, 0)), kd)
    columns = np.empty((n, n))
    for j in range(n):
        kernel_column(data, j, col)
        columns[j] = col
    _check(columns, ref, gamma, "nearest-point kernel_column")
    _check(engine_gram(kd, n), ref, gamma, "nearest-point engine_gram")

    k32 = qmx.rounded_copy(kd)  # float32 columns: the kernel of the rounded points
    ref32 = _reference(k32.XT32.T.astype(np.float64), gamma)
    _check(_by_fill_column(k32, np.float32), ref32, gamma, "float32 fill_column", 2.0**-24)
    _check(_by_fill_columns(k32, np.float32, qmx.MAX_BLOCK), ref32, gamma,
           "float32 fill_columns", 2.0**-24)

    if d >= qmx.EXPENSIVE_FEATURES:  # wide data: the BLAS product (at any size here)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(qmx, "BLAS_BYTES", 0)
            wide = qmx.make_qmatrix(kern, X, y, blocks=True)
        assert qmx.blas_columns(wide, n, np.empty(n)) and n <= wide.block.shape[0]
        _check(_by_fill_columns(wide, np.float64, n), ref, gamma, "BLAS fill_columns",
               symmetric=False)

    sparse = qmx.make_qmatrix(kern, sp.csr_matrix(X), y)  # not centred: the points as given
    ref_sparse = _reference(X, gamma)
    _check(_by_fill_column(sparse, np.float64), ref_sparse, gamma, "sparse fill_column")
    values = np.array([[qmx.kernel_value(sparse, i, j) for j in range(n)] for i in range(n)])
    _check(values, ref_sparse, gamma, "sparse kernel_value")
    assert np.all(qmx.diagonal(sparse) == 1.0)
    np.testing.assert_array_equal(X, X_before)


def test_the_rule_follows_the_layout() -> None:
    """After the layout is permuted (SMO's shrinking), the differences are read at the new
    positions: the columns are the same values in the new order."""
    rng = np.random.default_rng(4)
    X = _points(rng, 10, 3, 1.0, 1e3, 1e-8)
    n = X.shape[0]
    gamma = 1e6
    kd = qmx.make_qmatrix(make_kernel("rbf", gamma=gamma), X, np.ones(n))
    before = _by_fill_column(kd, np.float64)
    perm = rng.permutation(n)
    kd.order[:] = perm
    kd.pos[perm] = np.arange(n)
    kd.XT[:] = kd.X[perm].T
    kd.sqT[:] = kd.sq[perm]
    col = np.empty(n)
    for i in range(n):
        qmx.fill_column(kd, i, 0, n, col)
        np.testing.assert_array_equal(col, before[i, perm])
    _check(before, _reference(kd.X, gamma), gamma, "fill_column")


def test_campaign_case_random_s2026_i7399() -> None:
    """``random_s2026_i7399`` (rbf hard margin, gamma 2.5e7, 1-D data with near duplicates):
    SMO's cached columns had lost the near duplicates' distances, so its certificate's dual
    value exceeded the primal value (weak duality broken at kkt < 1e-6). Its checks pass, and
    SMO's certificate agrees with a fresh float64 certificate of the same alpha."""
    case = random_case(2026, 7399)
    assert case.kernel == "rbf" and case.C is None and case.X.shape[1] == 1
    assert len(np.unique(case.X)) < case.X.shape[0]  # duplicates
    run = run_suite("random", cases=(case,), progress=None)
    rows = {r.method: r for r in run.rows}
    assert rows["smo/tight"].passed, rows["smo/tight"].reasons
    assert run.passed, [(r.method, r.reasons) for r in run.rows if not r.passed]

    kernel = case.make_kernel()
    assert kernel.gamma > 1e7
    sol = smo(case.X, case.y, C=None, kernel=kernel, tol=1e-6)
    fresh = certify_svm(sol.alpha, case.X, case.y, None, kernel)
    assert sol.status == "optimal"
    assert sol.certificate.dual_objective <= fresh.primal_objective
    assert math.isclose(sol.certificate.dual_objective, fresh.dual_objective, rel_tol=1e-12)
