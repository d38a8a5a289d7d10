"""``one_class_smo``'s first run: its starting gradient computed into the kernel cache
(:meth:`~maxmargin.algorithms.smo.nu.NuSolver.start_sums`) and its stop relative to LIBSVM's
``r`` (:func:`~maxmargin.algorithms.smo.working_set.relative_stop`).

Independent answers: the starting gradient by the kernel object's dense Gram matrix; the stop
against its definition from the extremes of ``G`` computed here in NumPy; the answers by the
float64 judge (``certify_one_class``) and the CVXPY oracle (``one_class_dual``).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maxmargin.algorithms import _kernel_cache as kc
from maxmargin.algorithms import nu_smo, one_class_smo
from maxmargin.algorithms.smo import nu as nu_module
from maxmargin.algorithms.smo import state, working_set
from maxmargin.certificate_nu import certify_nu_svm, certify_one_class
from maxmargin.formulations import one_class_dual
from maxmargin.kernels import make_kernel
from maxmargin.kernels import qmatrix as qmx


def _runs(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """A list that gets one entry per SMO run of :class:`~.nu.NuSolver` (first or
    continuation), ``True`` for a run on the cache :meth:`~.nu.NuSolver.start_sums` filled."""
    runs: list[bool] = []
    solve = nu_module.NuSolver.solve

    def counted(self, precision: str, refine: bool = False, warm: bool = False) -> int:
        runs.append(warm and self.cache is not None)
        return solve(self, precision, refine, warm)

    monkeypatch.setattr(nu_module.NuSolver, "solve", counted)
    return runs


@settings(max_examples=20, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), n=st.integers(2, 200), nu=st.floats(0.01, 1.0),
       weighted=st.booleans())
def test_start_sums_are_the_gram_matrixs(seed: int, n: int, nu: float, weighted: bool) -> None:
    """At LIBSVM's starting point (box ``c``, ``sum a = nu l``), ``g = K a`` and its bounded
    part ``g_B = K[:, a = c] c`` from the float64 cache agree with the dense Gram matrix's to
    summation error, and every starting column is then cached for the loop."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * rng.choice([0.1, 1.0, 3.0])
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    kern = make_kernel("rbf", gamma=0.5)
    solver = _solver(X, nu, kern, w)
    st_ = solver.st
    g_at, g = solver.start_sums("double")
    K = kern(X, X)
    a, C = st_.alpha, st_.C
    at = a >= C
    terms = np.abs(K) @ np.abs(a)
    assert np.all(np.abs(g - K @ a) <= 1e-13 * terms + 1e-300)
    assert np.all(np.abs(g_at - K[:, at] @ C[at]) <= 1e-13 * terms + 1e-300)
    assert solver.small_sums_cached
    assert np.all(solver.cache.slot_of[np.flatnonzero(a > 0)] >= 0)


def _solver(X: np.ndarray, nu: float, kern, weights: np.ndarray | None = None):
    """A one-class :class:`~.nu.NuSolver` at LIBSVM's starting point (no run)."""
    from maxmargin.algorithms.smo.solver import Options, Problem

    n = X.shape[0]
    y = np.ones(n)
    kd = qmx.make_qmatrix(kern, X, y)
    box = None if weights is None else n * weights / weights.sum()
    st_ = state.new_state(kd, qmx.diagonal(kd), 1.0 if box is None else box, 1e-3, 1)
    st_.scalars.linear = 0.0
    st_.alpha[:] = nu_module.initial_alpha(n, nu, None, box)
    problem = Problem(X, y, 1.0, None, kern, kd, radius2=1.0, X_user=X)
    options = Options(1e-3, "wss2", True, 10**6, 200.0, exact_finish=False)
    return nu_module.NuSolver(problem, options, st_, nu, True, weights)


@pytest.mark.parametrize("tol_r", [0.0, 0.6])
def test_stop_is_libsvms_or_relative_to_its_r(tol_r: float) -> None:
    """The second-order working set stops at LIBSVM's ``m - M < tol``, or with ``tol_r`` at
    ``m - M < tol min(1, tol_r r)``, ``r = -(m + M) / 2`` (one-class: ``y = e``; computed
    here from ``G = K a``), at a nearly optimal point whose ``r < 1``."""
    rng = np.random.default_rng(5)
    n, nu = 150, 0.05
    X = rng.normal(size=(n, 3))
    kern = make_kernel("rbf", gamma=3.0)
    a = np.clip(nu * n * one_class_smo(X, nu=nu, kernel=kern).alpha, 0.0, 1.0)
    kd = qmx.make_qmatrix(kern, X, np.ones(n))
    st_ = state.new_state(kd, qmx.diagonal(kd), 1.0, 1e-3, 1)
    st_.alpha[:] = a
    G = kern(X, X) @ a
    st_.G[:] = G[st_.act]
    st_.scalars.linear = 0.0
    for t in range(n):
        state.update_alpha_status(st_, t)
    m, M = np.max(-G[a < 1.0]), np.min(-G[a > 0.0])
    gap, r = m - M, -0.5 * (m + M)
    assert 0.0 < gap < 0.1 * r < 0.1  # r < 1: the relative stop is the tighter one
    st_.scalars.tol_r = tol_r
    cache = kc.make_cache(n, 1.0, np.float64)
    for tol in [0.5 * gap, 2.0 * gap, 0.9 * gap / (0.6 * r), 1.1 * gap / (0.6 * r)]:
        stop = gap < (tol * min(1.0, tol_r * r) if tol_r > 0 and r >= tol else tol)
        st_.scalars.i_max = state.STALE
        i, _, found = working_set.select_wss2(st_._replace(tol=tol), cache, kd, None)
        assert found == pytest.approx(gap, rel=1e-9)
        assert (i < 0) == stop


@pytest.mark.parametrize("n,nu,gamma", [(200, 0.05, 2.0), (300, 0.01, 0.2), (400, 0.2, 5.0)])
def test_small_r_is_certified_in_one_run(monkeypatch: pytest.MonkeyPatch, n: int, nu: float,
                                         gamma: float) -> None:
    """``r = nu l rho < 1`` (small ``nu l``, or ``K`` near the identity): LIBSVM's ``m - M <
    tol`` would not meet the certificate's ``m - M / r < tol``; the relative stop does in the
    first run, on the cache the start filled. The float64 judge agrees, and the answer is the
    CVXPY oracle's to the accuracy ``tol`` implies."""
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, 4))
    runs = _runs(monkeypatch)
    s = one_class_smo(X, nu=nu, kernel="rbf", gamma=gamma, tol=1e-3)
    assert runs == [True], s.message
    kern = make_kernel("rbf", gamma=gamma)
    cert = certify_one_class(s.alpha, X, nu, kern)
    assert s.status == "optimal" and cert.meets(1e-3)
    assert cert.margin * nu * n < 1.0  # LIBSVM's r: its own stop was not enough
    o = one_class_dual(X, nu=nu, kernel=kern).solve()
    assert o.status == "optimal"
    assert s.dual_objective <= o.dual_objective + 1e-8 * abs(o.dual_objective)
    assert s.dual_objective == pytest.approx(o.dual_objective, rel=1e-4)
    assert s.rho == pytest.approx(o.rho, rel=1e-2)


@pytest.mark.parametrize("nu", [0.1, 0.5])
def test_large_r_keeps_libsvms_stop(nu: float) -> None:
    """Where ``r >= 1 / FIRST_FRACTION`` the relative factor is 1: the run is the one with
    LIBSVM's stop alone (``tol_r = 0``), bit for bit, and its ``r`` is LIBSVM's
    (scikit-learn's ``-intercept_``)."""
    from sklearn.svm import OneClassSVM

    rng = np.random.default_rng(11)
    X = rng.normal(size=(500, 5))
    s = one_class_smo(X, nu=nu, kernel="rbf", gamma=0.1, tol=1e-3)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(nu_module, "FIRST_FRACTION", 0.0)
        t = one_class_smo(X, nu=nu, kernel="rbf", gamma=0.1, tol=1e-3)
    assert s.rho * nu * X.shape[0] > 1.0 / nu_module.FIRST_FRACTION
    assert s.status == "optimal"
    assert s.iterations == t.iterations and np.array_equal(s.alpha, t.alpha)
    m = OneClassSVM(nu=nu, kernel="rbf", gamma=0.1, tol=1e-3).fit(X)
    assert -m.intercept_[0] == pytest.approx(s.rho * nu * X.shape[0], rel=1e-3)


def test_nu_svc_start_from_the_cache_is_certified() -> None:
    """ν-SVC's start shares :meth:`~.nu.NuSolver.start_sums`: its float64 answer, on the
    cache the start filled, is certified by the judge and matches the answer with the start
    summed by the kernel object (the same problem: objectives to the certificate's accuracy)."""
    rng = np.random.default_rng(2)
    n = 300
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(n, 4))
    X[:, 0] += y
    s = nu_smo(X, y, nu=0.3, kernel="rbf", gamma=0.3, tol=1e-6)
    cert = certify_nu_svm(s.alpha, X, y, 0.3, make_kernel("rbf", gamma=0.3))
    assert s.status == "optimal" and cert.meets(1e-6)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(nu_module, "cached_sums", lambda *args, **kwargs: None)
        t = nu_smo(X, y, nu=0.3, kernel="rbf", gamma=0.3, tol=1e-6)
    assert t.status == "optimal"
    assert s.dual_objective == pytest.approx(t.dual_objective, rel=1e-9)


@pytest.mark.parametrize("seed", [11, 12])
def test_a_reduced_hull_that_holds_the_origin_is_finished_by_wolfe(seed: int) -> None:
    """Centred data under the linear kernel (feature scales 1e-2.3 to 1e2.5): the reduced hull
    ``RCH(1 / (nu l))`` holds the origin, so ``w = 0`` and ``rho = 0`` (the oracle's answer).
    SMO's steps shrink with ``rho`` there, and ``one_class_smo`` spent its ten million
    iterations ("max_iter"); a run whose ``rho`` falls below the certificate's resolution is
    now held and finished by Wolfe's method, as ``nu_smo``'s is."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(250, 5)) * 10.0 ** np.array([0.5, 1.5, 2.5, -2.3, -1.1])
    X -= X.mean(axis=0)
    oracle = one_class_dual(X, 0.43, kernel="linear").solve()
    assert oracle.status == "optimal" and oracle.hulls_meet
    sol = one_class_smo(X, nu=0.43, kernel="linear")
    assert sol.status == "optimal" and sol.hulls_meet and sol.rho == 0.0, sol.message
    assert sol.method == "one_class_smo" and "holds the origin" in sol.message
    assert np.all(sol.w == 0.0)
