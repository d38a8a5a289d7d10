"""Tests of the kernel engine on several threads: long columns of dense data split over
threads (``make_qmatrix(threads=k)``), the certificate's fused weighted sums, and ``smo``'s
``n_jobs`` on narrow data, where no BLAS call is left to split its sums by thread count.

Independent answers: the one-thread columns (themselves checked against ``kernel_entry`` in
``test_smo.py``), the kernel objects' blocks, and a fresh process loading the compiled code
from Numba's cache.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from maxmargin.algorithms.smo import scans, smo
from maxmargin.certificate import decision_values
from maxmargin.kernels import make_kernel, sums
from maxmargin.kernels import qmatrix as qmx

KINDS = ("linear", "rbf", "poly", "sigmoid")


def _kernel(kind: str, d: int, X: np.ndarray):
    return make_kernel(kind, gamma=0.5 / d, degree=3, coef0=0.25, X=X)


def _same(a, b) -> bool:
    """Two SVMSolutions with the same alpha, b, iterations and certificate, bit for bit."""
    ca, cb = a.certificate, b.certificate
    return (np.array_equal(a.alpha, b.alpha) and a.b == b.b and a.iterations == b.iterations
            and a.status == b.status and ca.kkt_violation == cb.kkt_violation
            and ca.dual_objective == cb.dual_objective and ca.gap == cb.gap)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), kind=st.sampled_from(KINDS), d=st.integers(1, 70),
       threads=st.integers(2, 3), double=st.booleans())
def test_threaded_columns_are_the_one_thread_columns(seed, kind, d, threads, double) -> None:
    """``fill_column`` of a Q-matrix built for several threads equals the one-thread column
    bit for bit, on whole and partial ranges of positions (long ones go to the threads:
    ``(hi - lo) (d + 32) >= THREAD_WORK``), in a permuted layout."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4000, 6000))
    X = rng.normal(size=(n, d)) * rng.choice([0.1, 1.0, 20.0])
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    kern = _kernel(kind, d, X)
    one, many = qmx.make_qmatrix(kern, X, y), qmx.make_qmatrix(kern, X, y, threads=threads)
    assert many.pool.shape == (threads, 2) and one.pool.ndim == 1
    perm = rng.permutation(n)  # a layout other than the identity, as after a compaction
    for kd in (one, many):
        kd.order[:] = perm
        kd.pos[perm] = np.arange(n)
        kd.XT[:] = kd.X[perm].T
        kd.yT[:], kd.sqT[:] = kd.y[perm], kd.sq[perm]
    dtype = np.float64 if double else np.float32
    a, b = np.zeros(n, dtype=dtype), np.zeros(n, dtype=dtype)
    ranges = [(0, n), (int(rng.integers(0, n // 3)), n), (0, int(rng.integers(1, 600)))]
    assert any((hi - lo) * (d + 32) >= qmx.THREAD_WORK for lo, hi in ranges)
    for lo, hi in ranges:
        for i in rng.choice(n, size=3, replace=False):
            qmx.fill_column(one, i, lo, hi, a)
            qmx.fill_column(many, i, lo, hi, b)
            assert np.array_equal(a[lo:hi], b[lo:hi])
            exact = kern(X[perm[lo:hi]], X[i : i + 1])[:, 0] * y[perm[lo:hi]] * y[i]
            tol = 1e-6 if dtype == np.float32 else 1e-11
            atol = tol * np.max(np.abs(exact)) + np.finfo(dtype).tiny  # float32 underflows
            assert np.allclose(a[lo:hi], exact, rtol=tol, atol=atol)


@pytest.mark.parametrize("kind", KINDS[1:])
def test_fused_sums_are_the_kernel_objects_sums_at_scale(kind) -> None:
    """The fused weighted sums (narrow data, several tiles of points and rows, a ragged last
    tile) equal the kernel object's ``K(X, X[idx]) coef`` to float64 rounding, on 1, 2 and 3
    threads the same array."""
    rng = np.random.default_rng(3)
    n, d = 1500, 13
    X = rng.normal(size=(n, d)) + 5.0
    kern = _kernel(kind, d, X)
    kd = qmx.make_qmatrix(kern, X, np.ones(n))
    idx = rng.choice(n, size=777, replace=False)
    coef = rng.normal(size=idx.size)
    got = [sums.weighted_sums(kd, idx, coef, threads=k) for k in (1, 2, 3)]
    assert np.array_equal(got[0], got[1]) and np.array_equal(got[0], got[2])
    expected = decision_values(kern, X, X[idx], coef)
    scale = np.abs(kern(X, X[idx])) @ np.abs(coef)
    assert np.all(np.abs(got[0] - expected) <= 1e-12 * scale)


@pytest.mark.parametrize("kind", KINDS[1:])
def test_n_jobs_on_narrow_data_gives_the_one_thread_bits(kind) -> None:
    """On narrow data (no BLAS columns, fused certificate sums) ``smo(n_jobs=2)`` computes
    its long columns on two threads and is ``smo(n_jobs=1)`` bit for bit, certified."""
    rng = np.random.default_rng(8)
    n, d = 4000, 8
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=n) > 0, 1.0, -1.0)
    assert n * (d + 32) >= qmx.THREAD_WORK
    kw = {"C": 1.0, "kernel": kind, "gamma": 0.2, "coef0": 0.3, "tol": 1e-4}
    one, two = smo(X, y, n_jobs=1, **kw), smo(X, y, n_jobs=2, **kw)
    assert _same(one, two)
    assert one.status == "optimal" and one.certificate.kkt_violation < 1e-4


def test_threaded_loop_loads_from_the_cache_in_a_fresh_process() -> None:
    """A fresh process that loads the threaded loop from Numba's cache (compiled here first)
    starts Numba's thread pool before calling it (it crashed before) and gets the same bits
    as this process, on narrow and on wide data."""
    code = textwrap.dedent("""
        import sys
        import numpy as np
        from maxmargin.algorithms.smo import smo
        rng = np.random.default_rng(4)
        for n, d in ((3000, 8), (1500, 90)):
            X = rng.normal(size=(n, d))
            y = np.where(X[:, 0] + 0.7 * rng.normal(size=n) > 0, 1.0, -1.0)
            s = smo(X, y, C=1.0, kernel="rbf", gamma=0.5 / d, n_jobs=2)
            sys.stdout.write(f"{s.iterations} {s.b!r} {s.alpha.tobytes().hex()[:64]}\\n")
    """)
    here = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=900)
    assert here.returncode == 0, here.stderr[-2000:]
    fresh = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=900)
    assert fresh.returncode == 0, fresh.stderr[-2000:]
    assert fresh.stdout == here.stdout and len(here.stdout.splitlines()) == 2


def _layer_run(code: str, args: list[str] | None = None, **env: str) -> str:
    """``code``'s output in a fresh process (arguments ``args``) whose environment names no
    Numba threading layer, plus ``env``."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_THREADING_LAYER")}
    run = subprocess.run([sys.executable, "-c", code, *(args or [])], capture_output=True,
                         text=True, timeout=900, env={**base, **env})
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.strip()


def test_n_jobs_runs_on_openmp_unless_the_user_names_a_layer() -> None:
    """``n_jobs > 1`` starts Numba's pool on OpenMP's layer, ranked ahead of TBB (which oneDAL
    loads and caps at its own thread count); importing maxmargin or running on one thread
    changes nothing, and an order the user set (environment or code) is kept."""
    try:
        import numba.np.ufunc.omppool  # noqa: F401
    except ImportError:  # pragma: no cover - this machine's Numba has no OpenMP layer
        pytest.skip("Numba's OpenMP threading layer does not load here")
    code = textwrap.dedent("""
        import sys
        import numba
        import numpy as np
        if len(sys.argv) > 1:
            numba.config.THREADING_LAYER_PRIORITY = sys.argv[1].split()
        from maxmargin.algorithms.smo import smo
        rng = np.random.default_rng(4)
        X = rng.normal(size=(3000, 8))
        y = np.where(X[:, 0] + 0.7 * rng.normal(size=3000) > 0, 1.0, -1.0)
        smo(X[:300], y[:300], C=1.0, kernel="rbf", gamma=0.1)  # one thread: no pool
        print(*numba.config.THREADING_LAYER_PRIORITY, end=" / ")
        s = smo(X, y, C=1.0, kernel="rbf", gamma=0.1, n_jobs=2)
        print(s.status, numba.threading_layer(), *numba.config.THREADING_LAYER_PRIORITY)
    """)
    assert _layer_run(code) == "tbb omp workqueue / optimal omp omp tbb workqueue"
    chosen = _layer_run(code, NUMBA_THREADING_LAYER_PRIORITY="workqueue omp tbb")
    assert chosen == "workqueue omp tbb / optimal workqueue workqueue omp tbb"
    in_code = _layer_run(code, args=["workqueue tbb omp"])
    assert in_code == "workqueue tbb omp / optimal workqueue workqueue tbb omp"


@pytest.mark.parametrize("kind", KINDS[1:])
@pytest.mark.parametrize("points", ["all", "repeated", "some"])
def test_wide_sums_from_the_triangle(kind, points) -> None:
    """Wide data: the rows of the points themselves come from the upper triangle of their
    products (each value once, added to two sums); every point, a subset, and a list with
    repeated points (then every row against every listed point) all give the kernel object's
    sums to float64 rounding, including near-duplicate points (rbf's cancellation fix)."""
    rng = np.random.default_rng(6)
    n, d = 700, 48
    X = rng.normal(size=(n, d)) + 3.0
    X[5] = X[9] + 1e-9  # a near duplicate of a listed point
    kern = _kernel(kind, d, X)
    kd = qmx.make_qmatrix(kern, X, np.ones(n))
    idx = {"all": rng.permutation(n), "repeated": np.r_[np.arange(0, n, 3), 9, 9],
           "some": rng.choice(n, size=301, replace=False)}[points]
    idx = np.r_[idx, 9] if points == "some" and 9 not in idx else idx
    coef = rng.normal(size=idx.size)
    got = sums.weighted_sums(kd, idx, coef)
    expected = decision_values(kern, X, X[idx], coef)
    scale = np.abs(kern(X, X[idx])) @ np.abs(coef)
    assert np.all(np.abs(got - expected) <= 1e-12 * scale)


_update_and_argmax = njit(lambda kd, G, Q_i, Q_j, d_i, d_j, yT, in_up, score:
                          scans.update_and_argmax(kd, G, Q_i, Q_j, d_i, d_j, yT, in_up, score))
_add_column = njit(lambda kd, G_bar, act, Q_t, coef: scans.add_column(kd, G_bar, act, Q_t, coef))
_second_order_scan = njit(lambda kd, G, yT, QDT, in_low, Q_i, QD_i, y_i, g_max, score:
                          scans.second_order_scan(kd, G, yT, QDT, in_low, Q_i, QD_i, y_i, g_max,
                                                  score))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), threads=st.integers(2, 3), extra=st.integers(0, 5000),
       ties=st.booleans(), empty=st.sampled_from(["none", "up", "low"]))
def test_threaded_scans_are_the_one_thread_scans(seed, threads, extra, ties, empty) -> None:
    """On a long layout (``PARALLEL_SCAN`` positions or more) the scans of a Q-matrix with
    threads are the one-thread scans bit for bit: the updated ``G``, ``m`` and its last
    position (ties and ``-0.0``/``+0.0`` included), the second-order choice and ``m - M``, and
    ``G_bar`` after a column is added through the layout's permutation; and both are NumPy's
    (the last maximum, the permuted sum)."""
    rng = np.random.default_rng(seed)
    L = scans.PARALLEL_SCAN + extra
    n = L + int(rng.integers(0, 50))  # G and the masks may be longer than the layout
    values = np.array([-1.0, -0.0, 0.0, 0.5, 1.0])
    G = rng.choice(values, size=n) if ties else rng.normal(size=n)
    yT = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    in_up = (rng.random(n) < 0.6) & (empty != "up")
    in_low = (rng.random(n) < 0.6) & (empty != "low")
    Q_i = rng.choice(values, size=L).astype(np.float32) if ties else rng.random(L).astype(
        np.float32)
    Q_j = rng.random(L + 7).astype(np.float32)
    QDT = np.where(rng.random(n) < 0.05, 0.0, 1.0) + (0.0 if ties else rng.random(n))
    Xs, ys = np.zeros((2, 1)), np.ones(2)
    one = qmx.make_qmatrix(make_kernel("linear"), Xs, ys)
    many = qmx.make_qmatrix(make_kernel("linear"), Xs, ys, threads=threads)
    d_i, d_j = (0.0, -0.0) if ties else (rng.normal(), rng.normal())
    act = rng.permutation(n)
    G_bar = rng.normal(size=n)
    got = []
    for kd in (one, many):
        g, score, g_bar = G.copy(), np.full(n, np.nan), G_bar.copy()
        m, k = _update_and_argmax(kd, g, Q_i, Q_j, d_i, d_j, yT, in_up, score)
        j, gap = _second_order_scan(kd, g, yT, QDT, in_low, Q_i, 1.0, yT[0], max(m, 0.0),
                                    score)
        _add_column(kd, g_bar, act, Q_i, d_i)
        got.append((g.tobytes(), m, k, j, gap, g_bar.tobytes()))
    assert got[0] == got[1]
    expected = G_bar.copy()
    expected[act[:L]] += d_i * Q_i.astype(np.float64)
    assert got[0][5] == expected.tobytes()
    _, m, k, j, gap, _ = got[0]
    Gl = G[:L] + Q_i.astype(np.float64) * d_i + Q_j[:L].astype(np.float64) * d_j
    up = np.where(in_up[:L], -yT[:L] * Gl, -np.inf)
    if empty == "up":
        assert (m, k) == (-np.inf, -1)
    else:
        assert m == up.max() and k == L - 1 - int(np.argmax(up[::-1] == m))
    assert (j == -1) == (empty == "low" or gap == 0.0)


def test_n_jobs_on_a_long_layout_gives_the_one_thread_bits() -> None:
    """``smo(n_jobs=2)`` on a layout longer than ``PARALLEL_SCAN`` (its scans and ``G_bar``
    updates on two threads, its columns from rounded features) is ``smo(n_jobs=1)`` bit for
    bit, certified, with variables reaching their upper bound."""
    rng = np.random.default_rng(11)
    n, d = scans.PARALLEL_SCAN + 1500, 4
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + X[:, 1] * X[:, 2] + 0.8 * rng.normal(size=n) > 0, 1.0, -1.0)
    kw = {"C": 1.0, "kernel": "rbf", "gamma": 0.25, "cache_size": 20.0}
    one, two = smo(X, y, n_jobs=1, **kw), smo(X, y, n_jobs=2, **kw)
    assert _same(one, two)
    assert one.status == "optimal" and one.certificate.kkt_violation < 1e-3
    assert np.count_nonzero(one.alpha >= 1.0) > 1000
