"""Tests of SMO (maxmargin.algorithms.smo) and its kernel cache.

Independent answers: the hand-derived fixtures (tests/fixtures.py), the CVXPY oracles
(maxmargin.formulations), scikit-learn's SVC (LIBSVM) at tol=1e-8, and the KKT conditions.
"""

from __future__ import annotations

import contextlib
import math
import os
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator

import numba
import numpy as np
import pytest
from fixtures import ALL_BOUND, LI_HANG, TWO_POINTS, XOR_POLY, XOR_X, XOR_Y
from fixtures_stress import mixed_scale
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from sklearn.svm import SVC

from maxmargin.algorithms import _kernel_cache as kc
from maxmargin.algorithms.smo import (
    HARD_MARGIN_HULL_EPS_DOUBLE,
    WORKING_SETS,
    loops,
    smo,
    state,
    working_set,
)
from maxmargin.algorithms.smo.pair import two_variable_update as _two_variable_update
from maxmargin.algorithms.smo.solver import Options, Problem, Solver
from maxmargin.datasets import load_heart_scale
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.formulations.dual import svm_dual
from maxmargin.formulations.primal import hard_margin_primal, soft_margin_primal
from maxmargin.kernels import LinearKernel, PolyKernel, RBFKernel, make_kernel
from maxmargin.kernels import qmatrix as qmx
from maxmargin.kernels.formulas import KIND_GRAM
from maxmargin.verification.kkt import kkt_residuals

# compiled callers only: the small helpers have no CPython wrapper
two_variable_update = njit(
    lambda a_i, a_j, y_i, y_j, G_i, G_j, eta, C_i, C_j: _two_variable_update(
        a_i, a_j, y_i, y_j, G_i, G_j, eta, C_i, C_j))
grow_layout = njit(lambda c, kd, new_len: kc.grow_layout(c, kd, new_len))
load_columns = njit(lambda c, kd, m: kc.load_columns(c, kd, m))  # compiled callers only

RULES = WORKING_SETS  # ("wss2", "wss1", "platt")
OBJ_RTOL = 1e-6  # dual objective agreement at tol = 1e-6 (relative)


def clouds(n: int, d: int, sep: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two Gaussian clouds N(+-sep/2 e_1, I) with balanced random labels."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    rng.shuffle(y)
    X = rng.standard_normal((n, d))
    X[:, 0] += 0.5 * sep * y
    return X, y


def exact_dual(alpha: np.ndarray, y: np.ndarray, K: np.ndarray) -> float:
    v = alpha * y
    return float(alpha.sum() - 0.5 * v @ K @ v)


def svc_dual(model: SVC, K: np.ndarray) -> tuple[np.ndarray, float]:
    """alpha (full length) and the dual objective of a fitted SVC on the Gram matrix K."""
    alpha = np.zeros(K.shape[0])
    alpha[model.support_] = np.abs(model.dual_coef_[0])
    y_sign = np.zeros(K.shape[0])
    y_sign[model.support_] = np.sign(model.dual_coef_[0])
    v = alpha * y_sign
    return alpha, float(alpha.sum() - 0.5 * v @ K @ v)


def assert_b_in(sol_b: float, oracle, atol: float) -> None:
    """``b`` equals the oracle's, or lies in its KKT interval when b is not unique."""
    lo, hi = oracle.b_interval
    if lo == hi:
        assert sol_b == pytest.approx(oracle.b, abs=atol)
    else:
        assert lo - atol <= sol_b <= hi + atol


# --- hand-derived examples ----------------------------------------------------------------


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("ex", [TWO_POINTS, LI_HANG], ids=lambda e: e.name)
def test_hard_margin_hand_examples_exact(rule: str, ex) -> None:
    sol = smo(ex.X, ex.y, C=None, tol=1e-10, working_set=rule)
    assert sol.status == "optimal"
    assert sol.method == f"smo/{rule}"
    np.testing.assert_allclose(sol.alpha, ex.alpha, atol=1e-9)
    np.testing.assert_allclose(sol.w, ex.w, atol=1e-9)
    assert sol.b == pytest.approx(ex.b, abs=1e-9)
    assert sol.b_interval == (pytest.approx(ex.b, abs=1e-9), pytest.approx(ex.b, abs=1e-9))
    assert sol.dual_objective == pytest.approx(ex.objective, rel=1e-9)
    assert sol.primal_objective == pytest.approx(ex.objective, rel=1e-9)
    np.testing.assert_array_equal(sol.predict(ex.X), ex.y)


@pytest.mark.parametrize("rule", RULES)
def test_all_bound_b_is_midpoint_of_kkt_interval(rule: str) -> None:
    ex = ALL_BOUND
    sol = smo(ex.X, ex.y, C=ex.C, tol=1e-10, working_set=rule)
    np.testing.assert_allclose(sol.alpha, ex.alpha, atol=1e-12)
    np.testing.assert_allclose(sol.w, ex.w, atol=1e-12)
    lo, hi = sol.b_interval
    assert (lo, hi) == (pytest.approx(ex.b_interval[0]), pytest.approx(ex.b_interval[1]))
    assert sol.b == pytest.approx(0.5 * (lo + hi), abs=1e-12)  # LIBSVM: (ub + lb) / 2
    assert sol.dual_objective == pytest.approx(ex.objective, rel=1e-12)
    assert sol.primal_objective == pytest.approx(ex.objective, rel=1e-12)


@pytest.mark.parametrize("rule", RULES)
def test_xor_with_quadratic_kernel(rule: str) -> None:
    ex = XOR_POLY
    sol = smo(ex.X, ex.y, C=None, kernel="poly", tol=1e-10, working_set=rule, **ex.kernel_params)
    assert sol.status == "optimal"
    assert sol.w is None
    np.testing.assert_allclose(sol.alpha, ex.alpha, atol=1e-9)
    assert sol.b == pytest.approx(ex.b, abs=1e-9)
    assert sol.dual_objective == pytest.approx(ex.objective, rel=1e-9)
    # f(x) = x1 x2 (fixtures): check off the training points too
    Z = np.array([[0.5, 2.0], [-3.0, 1.0], [0.2, -0.1]])
    np.testing.assert_allclose(sol.decision_function(Z), Z[:, 0] * Z[:, 1], atol=1e-7)


# --- against the oracles --------------------------------------------------------------------

KERNEL_CASES = [
    ("linear", {}),
    ("rbf", {"gamma": 0.3}),
    ("poly", {"gamma": 0.5, "degree": 3, "coef0": 1.0}),
]


@pytest.mark.parametrize("kernel,params", KERNEL_CASES, ids=[k for k, _ in KERNEL_CASES])
@pytest.mark.parametrize("seed", [0, 1])
def test_matches_cvxpy_dual_oracle(kernel: str, params: dict, seed: int) -> None:
    X, y = clouds(50, 3, sep=2.0, seed=seed)
    C = 0.7
    oracle = svm_dual(X, y, C=C, kernel=kernel, **params).solve()
    assert oracle.status == "optimal"
    K = make_kernel(kernel, X=X, **params).gram(X)
    for rule in RULES:
        sol = smo(X, y, C=C, kernel=kernel, tol=1e-6, working_set=rule, **params)
        assert sol.status == "optimal"
        d_exact = exact_dual(sol.alpha, y, K)
        assert d_exact == pytest.approx(oracle.dual_objective, rel=OBJ_RTOL)
        assert sol.dual_objective == pytest.approx(d_exact, rel=1e-12)  # recomputed in float64
        assert sol.primal_objective >= sol.dual_objective - 1e-6 * abs(sol.dual_objective)
        assert_b_in(sol.b, oracle, atol=1e-3)
        if kernel == "linear":
            scale = max(1.0, np.abs(oracle.w).max())
            np.testing.assert_allclose(sol.w, oracle.w, atol=1e-4 * scale)
        pred_agree = np.mean(sol.predict(X) == oracle.predict(X))
        assert pred_agree >= 0.96


@pytest.mark.parametrize("rule", RULES)
def test_hard_margin_separable_matches_primal_oracle(rule: str) -> None:
    X, y = clouds(40, 2, sep=7.0, seed=3)
    oracle = hard_margin_primal(X, y).solve()
    assert oracle.status == "optimal"
    sol = smo(X, y, C=None, tol=1e-7, working_set=rule)
    assert sol.status == "optimal"
    np.testing.assert_allclose(sol.w, oracle.w, rtol=1e-4, atol=1e-5)
    assert sol.b == pytest.approx(oracle.b, abs=1e-4)
    assert sol.dual_objective == pytest.approx(0.5 * oracle.w @ oracle.w, rel=OBJ_RTOL)
    assert np.all(y * sol.decision_function(X) >= 1 - 1e-5)


@pytest.mark.parametrize("kernel,params", KERNEL_CASES, ids=[k for k, _ in KERNEL_CASES])
def test_matches_libsvm(kernel: str, params: dict) -> None:
    X, y = clouds(120, 4, sep=1.5, seed=7)
    K = make_kernel(kernel, X=X, **params).gram(X)
    model = SVC(kernel=kernel, C=2.0, tol=1e-8, **params).fit(X, y)
    alpha_svc, d_svc = svc_dual(model, K)
    sol = smo(X, y, C=2.0, kernel=kernel, tol=1e-6, **params)
    assert exact_dual(sol.alpha, y, K) == pytest.approx(d_svc, rel=OBJ_RTOL)
    assert sol.b == pytest.approx(float(model.intercept_[0]), abs=1e-3)
    np.testing.assert_allclose(sol.alpha, alpha_svc, atol=1e-3 * 2.0)


def test_large_C_objective_is_exact_not_float32() -> None:
    """alpha ~ 1000: the float32 cache's rounding would show in D; the reported D is exact."""
    X, y = clouds(56, 3, sep=1.0, seed=3813)
    K = X @ X.T
    model = SVC(kernel="linear", C=1000.0, tol=1e-7).fit(X, y)
    _, d_svc = svc_dual(model, K)
    sol = smo(X, y, C=1000.0, tol=1e-6)
    assert sol.status == "optimal"
    assert sol.dual_objective == pytest.approx(exact_dual(sol.alpha, y, K), rel=1e-12)
    assert sol.dual_objective == pytest.approx(d_svc, rel=1e-9)


def test_heart_scale_matches_libsvm() -> None:
    X, y = load_heart_scale()
    K = RBFKernel(1.0 / (X.shape[1] * X.var()))(X, X)
    model = SVC(kernel="rbf", C=1.0, gamma="scale", tol=1e-8).fit(X, y)
    _, d_svc = svc_dual(model, K)
    for rule in RULES:
        sol = smo(X, y, C=1.0, kernel="rbf", gamma="scale", tol=1e-6, working_set=rule)
        assert sol.status == "optimal"
        assert exact_dual(sol.alpha, y, K) == pytest.approx(d_svc, rel=OBJ_RTOL)
        assert sol.b == pytest.approx(float(model.intercept_[0]), abs=1e-3)
        np.testing.assert_array_equal(sol.predict(X), model.predict(X))


def test_iteration_count_like_libsvm() -> None:
    """Same working-set rule and stopping test: the iteration counts agree closely."""
    X, y = clouds(600, 10, sep=2.0, seed=11)
    gamma = 1.0 / (X.shape[1] * X.var())
    model = SVC(kernel="rbf", C=1.0, gamma=gamma, tol=1e-3).fit(X, y)
    sol = smo(X, y, C=1.0, kernel="rbf", gamma=gamma, tol=1e-3)
    assert abs(sol.iterations - int(model.n_iter_[0])) <= 0.1 * model.n_iter_[0]


# --- KKT conditions of its own answer ---------------------------------------------------------


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("tol", [1e-2, 1e-4])
def test_kkt_residuals_within_tol(rule: str, tol: float) -> None:
    X, y = clouds(80, 3, sep=1.0, seed=5)
    C = 1.5
    sol = smo(X, y, C=C, kernel="rbf", gamma=0.5, tol=tol, working_set=rule)
    res = kkt_residuals(sol, X, y)  # with the exact kernel (smo's test uses the float32 cache)
    assert res.max_violation < tol * 1.001
    assert res.max < tol * 1.001  # complementary slackness, duality gap, feasibility too
    assert sol.history["violation"][-1] < tol
    assert res.dual_box == 0.0
    assert res.dual_equality < 1e-12
    assert np.all((sol.alpha >= 0) & (sol.alpha <= C))
    assert abs(sol.alpha @ y) < 1e-12 * max(1.0, sol.alpha.sum())


# --- the three working-set rules agree ----------------------------------------------------


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(6, 40),
    C=st.sampled_from([0.05, 1.0, 20.0]),
    kernel=st.sampled_from(["linear", "rbf"]),
)
def test_rules_agree(seed: int, n: int, C: float, kernel: str) -> None:
    X, y = clouds(n, 3, sep=1.0, seed=seed)
    sols = [smo(X, y, C=C, kernel=kernel, tol=1e-7, working_set=r) for r in RULES]
    K = make_kernel(kernel, X=X).gram(X)
    d = [exact_dual(s.alpha, y, K) for s in sols]
    scale = max(1.0, abs(d[0]))
    for s, di in zip(sols, d, strict=True):
        assert s.status == "optimal"
        assert di == pytest.approx(d[0], rel=1e-6, abs=1e-9 * scale)
        if kernel == "linear":
            w_scale = max(1.0, np.abs(sols[0].w).max())
            np.testing.assert_allclose(s.w, sols[0].w, atol=1e-3 * w_scale)


@pytest.mark.parametrize("rule", ["wss2", "wss1"])
def test_shrinking_on_off_same_answer(rule: str) -> None:
    X, y = clouds(400, 5, sep=1.0, seed=2)
    a = smo(X, y, C=1.0, kernel="rbf", tol=1e-5, working_set=rule, shrinking=True)
    b = smo(X, y, C=1.0, kernel="rbf", tol=1e-5, working_set=rule, shrinking=False)
    assert a.dual_objective == pytest.approx(b.dual_objective, rel=1e-7)
    assert a.b == pytest.approx(b.b, abs=1e-4)
    assert np.max(np.abs(a.alpha - b.alpha)) < 1e-3


def test_tiny_cache_same_answer() -> None:
    X, y = clouds(400, 5, sep=1.0, seed=4)
    assert kc.n_slots_for(400, 0.01) == 6  # 10485 bytes / (4 * 400)
    big = smo(X, y, C=1.0, kernel="rbf", tol=1e-5, cache_size=200)
    for shrinking in (True, False):
        tiny = smo(X, y, C=1.0, kernel="rbf", tol=1e-5, cache_size=0.01, shrinking=shrinking)
        assert "6 columns" in tiny.message
        assert tiny.dual_objective == pytest.approx(big.dual_objective, rel=1e-7)
        assert np.max(np.abs(tiny.alpha - big.alpha)) < 1e-3
    minimal = smo(X, y, C=1.0, kernel="rbf", tol=1e-5, cache_size=1e-9)  # still 2 columns
    assert "2 columns" in minimal.message
    assert minimal.dual_objective == pytest.approx(big.dual_objective, rel=1e-7)


# --- hard margin on non-separable data ----------------------------------------------------


@pytest.mark.parametrize("rule", RULES)
def test_hard_margin_linear_xor_is_infeasible(rule: str) -> None:
    sol = smo(XOR_X, XOR_Y, C=None, working_set=rule)
    assert sol.status == "infeasible"
    assert "hulls" in sol.message and "not separable at this resolution" in sol.message
    assert np.all(np.isnan(sol.alpha)) and sol.dual_objective == math.inf
    # the evidence: convex combinations of the two hulls within 1e-3 R of each other, recomputed
    # here from the certificate's own numbers (R by hand)
    R = np.sqrt(np.max(np.einsum("ij,ij->i", XOR_X, XOR_X)))
    assert sol.certificate.radius == pytest.approx(R)
    assert sol.certificate.hull_distance <= 1e-3 * R * (1 + 1e-6)


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_hard_margin_overlapping_clouds_is_infeasible(rule: str, kernel: str) -> None:
    X, y = clouds(60, 2, sep=0.5, seed=1)
    if kernel == "rbf":  # duplicate a point with the other label: not separable by any kernel
        X = np.vstack([X, X[:1]])
        y = np.append(y, -y[0])
    assert svm_dual(X, y, C=None, kernel=kernel).solve().status == "infeasible"
    sol = smo(X, y, C=None, kernel=kernel, working_set=rule)
    assert sol.status == "infeasible"


# --- iteration cap, history -----------------------------------------------------------------


@pytest.mark.parametrize("rule", RULES)
def test_max_iter_warns_and_returns(rule: str) -> None:
    X, y = clouds(60, 3, sep=1.0, seed=0)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        sol = smo(X, y, C=1.0, kernel="rbf", max_iter=3, working_set=rule, finish=False)
    assert sol.status == "max_iter"
    assert sol.iterations == 3
    assert np.all(np.isfinite(sol.alpha)) and math.isfinite(sol.b)
    assert abs(sol.alpha @ y) < 1e-12
    assert sol.history["violation"][-1] >= 1e-3


@pytest.mark.parametrize("rule", RULES)
def test_the_exact_finish_certifies_a_stopped_run(rule: str) -> None:
    # At max_iter = 3 the active-set finish takes over from SMO's alpha; its answer must be the
    # oracle's optimum, certified in float64 at tol, with no warning left.
    X, y = clouds(60, 3, sep=1.0, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = smo(X, y, C=1.0, kernel="rbf", max_iter=3, working_set=rule, tol=1e-9)
    ref = svm_dual(X, y, 1.0, "rbf").solve()
    assert sol.status == "optimal" and "active-set" in sol.message and sol.iterations == 3
    assert sol.certificate.kkt_violation < 1e-9
    assert sol.dual_objective == pytest.approx(ref.dual_objective, rel=1e-9)
    np.testing.assert_allclose(sol.alpha, ref.alpha, atol=1e-7)


@contextlib.contextmanager
def machine_busy() -> Iterator[None]:
    """Every core busy: one more spinning process than there are cores, stopped after."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range((os.cpu_count() or 1) + 1)]
    try:
        time.sleep(0.3)  # let them start
        yield
    finally:
        for proc in spinners:
            proc.kill()
            proc.wait()


def test_the_exact_finish_gives_the_same_bits_under_load() -> None:
    """Same input, same bits, on an idle and on a busy machine: raw breast cancer, RBF, C = 1,
    stopped at max_iter = 2, so the exact finish does the work (some 370 active-set steps from
    alpha ~ 0). Its budget is counted in work: with a wall-clock budget (the former 0.2 s) this
    run was "optimal" idle and "max_iter" with the cores busy."""
    from sklearn.datasets import load_breast_cancer

    X, y01 = load_breast_cancer(return_X_y=True)
    y = 2.0 * y01 - 1.0
    idle = smo(X, y, C=1.0, kernel="rbf", max_iter=2)
    with machine_busy():
        busy = smo(X, y, C=1.0, kernel="rbf", max_iter=2)
    assert idle.status == "optimal" and "active-set" in idle.message
    assert np.array_equal(idle.alpha, busy.alpha) and idle.b == busy.b
    assert (idle.status, idle.iterations, idle.message) == (busy.status, busy.iterations,
                                                            busy.message)
    assert idle.dual_objective == busy.dual_objective


def test_a_hard_margin_with_opposite_twins_stops_before_overflow() -> None:
    # Zero curvature (identical points, opposite labels) multiplies alpha at every step: the
    # sum test proves the hulls meet long before float overflow (it used to run to max_iter
    # with alpha ~ 1e161 in float32). Points as in campaign case random_s1_i4411.
    rng = np.random.default_rng(4411)
    X = rng.normal(size=(150, 1)) * 7.5e3
    y = np.where(rng.random(150) < 0.5, 1.0, -1.0)
    X[149], y[149] = X[9], -y[9]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sol = smo(X, y, C=None, kernel="rbf", gamma=2e-11, tol=1e-3)
    assert sol.status == "infeasible" and sol.iterations < 1000


def test_default_max_iter_is_libsvms() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sol = smo(LI_HANG.X, LI_HANG.y, C=1.0)
    assert sol.status == "optimal"


def test_history_is_bounded_and_monotone() -> None:
    X, y = clouds(300, 3, sep=0.5, seed=9)
    sol = smo(X, y, C=10.0, kernel="rbf", gamma=2.0, tol=1e-8, shrinking=False)
    h = sol.history
    assert sol.iterations > 2048  # enough to force the thinning
    assert 1024 <= len(h["iteration"]) <= 2049
    it = h["iteration"]
    assert it[0] == 0 and it[-1] == sol.iterations and np.all(np.diff(it) > 0)
    stride = it[1] - it[0]
    assert np.all(it[:-1] % stride == 0)
    # SMO increases D at every step; the tracked value ends at the reported objective
    assert np.all(np.diff(h["dual_objective"]) >= -1e-12 * abs(sol.dual_objective))
    assert h["dual_objective"][-1] == pytest.approx(sol.dual_objective, rel=1e-6)  # float32 Q
    assert h["violation"][-1] < 1e-8


def test_history_every() -> None:
    X, y = clouds(60, 3, sep=1.0, seed=0)
    sol = smo(X, y, C=1.0, kernel="rbf", history_every=5)
    it = sol.history["iteration"]
    assert np.all(it[:-1] % 5 == 0)


# --- input handling -----------------------------------------------------------------------

BAD_ARGS = [
    ({"X": np.array([[0.0, np.nan], [1.0, 1.0]])}, r"`X` must be finite"),
    ({"y": np.array([1.0, 2.0, -1.0])}, r"`y` must contain only the labels -1 and \+1"),
    ({"y": np.array([1.0, 1.0, 1.0])}, r"`y` must contain both classes"),
    ({"y": np.array([1.0, -1.0])}, r"`y` must have one label per row of `X`"),
    ({"C": -1.0}, r"`C` must be positive"),
    ({"C": math.inf}, r"`C` must be finite \(use C=None for the hard margin\)"),
    ({"kernel": "tanh"}, r"`kernel` must be one of"),
    ({"kernel": "rbf", "gamma": -1.0}, r"`gamma` must be positive"),
    ({"kernel": "poly", "degree": 1.5}, r"`degree` must be an integer"),
    ({"tol": 0.0}, r"`tol` must be positive"),
    ({"max_iter": 0}, r"`max_iter` must be an integer >= 1"),
    ({"working_set": "wss3"}, r"`working_set` must be one of 'wss2', 'wss1', 'platt'"),
    ({"cache_size": 0}, r"`cache_size` must be positive"),
    ({"shrinking": "yes"}, r"`shrinking` must be True or False"),
    ({"history_every": 0}, r"`history_every` must be an integer >= 1"),
    ({"precision": "half"}, r"`precision` must be one of 'auto', 'single', 'double'"),
]


@pytest.mark.parametrize("kwargs,match", BAD_ARGS, ids=[m for _, m in BAD_ARGS])
def test_bad_input(kwargs: dict, match: str) -> None:
    args = {"X": LI_HANG.X, "y": LI_HANG.y, **kwargs}
    with pytest.raises(ValueError, match=match):
        smo(**args)


def test_any_kernel_object_goes_through_the_kernel_engine() -> None:
    """A kernel object compiled code does not know is evaluated by its own ``_block`` (called
    from the compiled loop): the same answer as the built-in it imitates."""

    class Custom(LinearKernel):
        kind = KIND_GRAM  # not a formula the compiled code knows

    X, y = clouds(40, 3, sep=1.0, seed=2)
    for ws in RULES:
        a = smo(X, y, kernel=Custom(), tol=1e-9, working_set=ws)
        b = smo(X, y, kernel="linear", tol=1e-9, working_set=ws)
        assert a.status == b.status == "optimal"
        assert a.dual_objective == pytest.approx(b.dual_objective, rel=1e-12)


def test_kernel_objects_accepted() -> None:
    X, y = clouds(30, 2, sep=2.0, seed=0)
    a = smo(X, y, kernel=RBFKernel(0.7), tol=1e-8)
    b = smo(X, y, kernel="rbf", gamma=0.7, tol=1e-8)
    np.testing.assert_allclose(a.alpha, b.alpha, atol=1e-12)
    c = smo(X, y, kernel=PolyKernel(gamma=1.0, degree=2, coef0=1.0), tol=1e-8)
    d = smo(X, y, kernel="poly", gamma=1.0, degree=2, coef0=1.0, tol=1e-8)
    np.testing.assert_allclose(c.alpha, d.alpha, atol=1e-12)


def test_inputs_not_modified() -> None:
    X, y = clouds(50, 3, sep=1.0, seed=0)
    X0, y0 = X.copy(), y.copy()
    Xf = np.asfortranarray(X)
    for rule in RULES:
        smo(X, y, C=1.0, kernel="rbf", working_set=rule)
        smo(Xf, y.astype(np.int64), C=None if rule == "platt" else 1.0, working_set=rule)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(Xf, X0)
    np.testing.assert_array_equal(y, y0)


# --- the building blocks --------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    a_i=st.floats(0, 1),
    a_j=st.floats(0, 1),
    same=st.booleans(),
    G_i=st.floats(-3, 3),
    G_j=st.floats(-3, 3),
    eta=st.floats(1e-3, 5),
    hard=st.booleans(),
    C_i=st.floats(1.0, 4.0),
    C_j=st.floats(1.0, 4.0),
)
def test_two_variable_update_is_the_seeds_clipped_step(
    a_i: float, a_j: float, same: bool, G_i: float, G_j: float, eta: float, hard: bool,
    C_i: float, C_j: float,
) -> None:
    """LIBSVM's clipping equals the seed's L/H formula (seed 004), with per-sample bounds
    ``C_i``, ``C_j`` (the seed's ``C`` when they are equal)."""
    if hard:
        C_i = C_j = math.inf
    y_i, y_j = 1.0, (1.0 if same else -1.0)
    new_i, new_j = two_variable_update(a_i, a_j, y_i, y_j, G_i, G_j, eta, C_i, C_j)
    # seed: E_i - E_j = y_i G_i - y_j G_j; a_j^unc = a_j + y_j (E_i - E_j) / eta
    unc = a_j + y_j * (y_i * G_i - y_j * G_j) / eta
    if y_i != y_j:
        L, H = max(0.0, a_j - a_i), min(C_j, C_i + a_j - a_i)
    else:
        L, H = max(0.0, a_i + a_j - C_i), min(C_j, a_i + a_j)
    expect_j = min(max(unc, L), H)
    expect_i = a_i + y_i * y_j * (a_j - expect_j)
    assert new_j == pytest.approx(expect_j, abs=1e-12)
    assert new_i == pytest.approx(expect_i, abs=1e-12)
    assert -1e-12 <= new_i <= C_i + 1e-12 and -1e-12 <= new_j <= C_j + 1e-12
    assert y_i * new_i + y_j * new_j == pytest.approx(y_i * a_i + y_j * a_j, abs=1e-12)


def test_fast_exp_accuracy() -> None:
    x = -np.concatenate([np.linspace(0, 1, 1001), np.geomspace(1e-12, 700, 5000)])
    X = np.sqrt(x * -1.0)[:, None]  # gamma = 1, x_0 = 0: K(x_t, 0) = exp(-x_t^2)
    X = np.vstack([np.zeros((1, 1)), X])
    kd = qmx.make_qmatrix(RBFKernel(1.0), X, np.ones(len(X)))
    out = np.empty(len(X), dtype=np.float32)
    qmx.fill_column(kd, 0, 0, len(X), out)
    np.testing.assert_allclose(out, np.exp(-X[:, 0] ** 2).astype(np.float32), rtol=1e-7, atol=0)
    # RBF data are centred (translation invariance); the exponent is the same expansion
    # x.x + z.z - 2 x.z on the centred data, so the fast exp is checked against np.exp of it
    Xc = kd.X[:, 0]
    d2 = np.maximum(kd.sq + kd.sq[0] - 2.0 * Xc * Xc[0], 0.0)
    np.testing.assert_allclose(kd.dots[1:], np.exp(-d2[1:]), rtol=1e-13, atol=0)  # not float32


def _check_cache_invariants(cache: kc.ColumnCache) -> None:
    """Every cached column sits in a live slot that names it; the LRU ring holds the slots."""
    slots = int(cache.state[kc.S_SLOTS])
    for i in np.flatnonzero(cache.slot_of >= 0):
        s = cache.slot_of[i]
        assert s < slots and cache.owner[s] == i
    head, ring, s = cache.owner.shape[0], [], cache.next[cache.owner.shape[0]]
    while s != head:
        ring.append(int(s))
        s = cache.next[s]
    assert sorted(ring) == list(range(slots))


@pytest.mark.parametrize(
    "kernel", [LinearKernel(), RBFKernel(0.4), PolyKernel(gamma=0.5, degree=3, coef0=1.0)],
    ids=["linear", "rbf", "poly"],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cache_columns_are_exact_q_columns(kernel, dtype) -> None:
    X, y = clouds(70, 4, sep=1.0, seed=0)
    Q = (y[:, None] * y[None, :]) * kernel(X, X)
    kd = qmx.make_qmatrix(kernel, X, y)
    cache = kc.make_cache(70, 0.05, dtype)
    assert cache.data.dtype == dtype
    # float32: Q rounded to float32 (within the fast exp's error); float64: Q itself
    rtol, atol = (2e-7, 1e-7) if dtype == np.float32 else (1e-13, 1e-15)
    for i in (0, 13, 69):
        col = kc.get_column(cache, kd, i)
        np.testing.assert_allclose(col, Q[:, i].astype(dtype), rtol=rtol, atol=atol)
    # a compacted layout: 20 variables, in a new order, columns over them alone
    keep = np.sort(np.random.default_rng(0).choice(70, 20, replace=False))
    perm = np.concatenate([keep, np.setdiff1d(np.arange(70), keep)]).astype(np.int64)
    kc.compact_layout(cache, kd, perm, 20)
    np.testing.assert_array_equal(kd.order[:20], keep)
    np.testing.assert_array_equal(kd.pos[kd.order], np.arange(70))
    for i in (13, 5):  # a repacked cached column, a new one
        col = kc.get_column(cache, kd, i)
        assert col.shape == (20,)
        np.testing.assert_allclose(col, Q[keep, i].astype(dtype), rtol=rtol, atol=atol)
    grow_layout(cache, kd, 70)  # cached prefixes are completed on demand
    for i in (13, 5, 40):
        col = kc.get_column(cache, kd, i)
        np.testing.assert_allclose(col, Q[kd.order, i].astype(dtype), rtol=rtol, atol=atol)
    _check_cache_invariants(cache)


@settings(max_examples=40, deadline=None)
@given(ops=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2**31)), min_size=1,
                    max_size=40), budget=st.integers(2, 12), d=st.sampled_from([1, 3]))
def test_cache_layout_against_brute_force(ops, budget, d) -> None:
    """Random gets, compactions and growths with a cache of a few columns: every column served
    is ``Q[order[:L], i]`` (float32), every slot is consistent, the most recent two survive,
    and the caller's points are untouched (d = 1: ``X.T`` is contiguous, a view of ``X``)."""
    n = 23
    X, y = clouds(n, d, sep=1.0, seed=3)
    X_before = X.copy()
    kernel = RBFKernel(0.7)
    Q = ((y[:, None] * y[None, :]) * kernel(X, X)).astype(np.float32)
    kd = qmx.make_qmatrix(kernel, X, y)
    cache = kc.make_cache(n, budget * n * 4 / 2**20)
    assert cache.state[kc.S_SLOTS] == budget
    recent: list[int] = []
    for op, seed in ops:
        rng = np.random.default_rng(seed)
        L = int(cache.state[kc.S_LEN])
        if op == 0 and L > 2:  # shrink to a random subset, kept in order
            new_len = int(rng.integers(2, L))
            keep = np.sort(rng.choice(L, new_len, replace=False))
            perm = np.concatenate([keep, np.setdiff1d(np.arange(L), keep)]).astype(np.int64)
            kc.compact_layout(cache, kd, perm, new_len)
        elif op == 1:
            grow_layout(cache, kd, int(rng.integers(L, n + 1)))
        else:
            i = int(rng.integers(0, n))
            col = kc.get_column(cache, kd, i)
            np.testing.assert_allclose(col, Q[kd.order[:L], i], rtol=2e-7, atol=1e-7)
            recent = [i, *[j for j in recent if j != i]][:2]
        _check_cache_invariants(cache)
        np.testing.assert_array_equal(np.sort(kd.order), np.arange(n))
        np.testing.assert_array_equal(kd.pos[kd.order], np.arange(n))
        np.testing.assert_allclose(kd.XT.T, kd.X[kd.order])
        np.testing.assert_array_equal(kd.yT, kd.y[kd.order])
    for i in recent:
        assert cache.slot_of[i] >= 0
    np.testing.assert_array_equal(X, X_before)


def test_lru_eviction() -> None:
    X, y = clouds(10, 2, sep=1.0, seed=0)
    kd = qmx.make_qmatrix(LinearKernel(), X, y)
    cache = kc.make_cache(10, 3 * 40 / 2**20)  # room for 3 columns of 10 float32
    assert cache.state[kc.S_SLOTS] == 3
    for i in (0, 1, 2):
        kc.get_column(cache, kd, i)
    kc.get_column(cache, kd, 0)  # hit: 0 becomes most recent
    kc.get_column(cache, kd, 3)  # evicts 1, the least recently used
    assert cache.slot_of[1] == -1
    assert all(cache.slot_of[i] >= 0 for i in (0, 2, 3))
    hits, misses = cache.state[kc.S_HITS], cache.state[kc.S_MISSES]
    assert (hits, misses) == (1, 4)


@pytest.mark.parametrize(
    "kernel", [LinearKernel(), RBFKernel(0.4), PolyKernel(gamma=0.5, degree=3, coef0=1.0)],
    ids=["linear", "rbf", "poly"],
)
def test_quadratic_form_is_exact(kernel) -> None:
    X, y = clouds(600, 4, sep=1.0, seed=1)
    idx = np.flatnonzero(np.arange(600) % 3 != 0)  # 400 rows: two blocks of 256
    v = np.random.default_rng(0).standard_normal(idx.size)
    kd = qmx.make_qmatrix(kernel, X, y)
    K = kernel(X[idx], X[idx])
    assert qmx.quadratic_form(kd, idx, v) == pytest.approx(v @ K @ v, rel=1e-12)


def test_duplicate_points_zero_curvature() -> None:
    """eta = K_ii + K_jj - 2 K_ij = 0 for duplicates (LIBSVM's tau): still the optimum."""
    X, y = clouds(30, 2, sep=1.0, seed=8)
    X = np.vstack([X, X[:6], X[:3]])
    y = np.concatenate([y, y[:6], -y[:3]])  # same-label and opposite-label duplicates
    oracle = svm_dual(X, y, C=2.0).solve()
    K = X @ X.T
    for rule in RULES:
        sol = smo(X, y, C=2.0, tol=1e-7, working_set=rule)
        assert sol.status == "optimal"
        assert exact_dual(sol.alpha, y, K) == pytest.approx(oracle.dual_objective, rel=OBJ_RTOL)
        np.testing.assert_allclose(sol.w, oracle.w, atol=1e-4 * max(1.0, np.abs(oracle.w).max()))


def test_shrunk_partial_columns_are_used_and_exact() -> None:
    """With shrinking the layout is compacted and columns are computed on it alone."""
    n = 600
    X, y = clouds(n, 5, sep=4.0, seed=2)
    kern = RBFKernel(0.5)
    kd = qmx.make_qmatrix(kern, X, y)
    st = state.new_state(kd, kern.diag(X), 10.0, 1e-6, 1)
    cache = kc.make_cache(n, 0.05)
    outcome = loops.solve_pairs(st, cache, kd, True, True, loops.Limits(10**6, 0.0, 0.0, 0.0),
                                loops.prefetching_for(kd))
    assert outcome == loops.OPTIMAL
    rows_computed, misses = int(cache.state[kc.S_ROWS]), int(cache.state[kc.S_MISSES])
    assert rows_computed < n * misses  # some columns were short (the active rows only)
    assert cache.state[kc.S_COMPACTIONS] >= 1
    assert cache.state[kc.S_LEN] == n  # and everything was made active again at the end
    K = kern(X, X)
    Q = (y[:, None] * y[None, :]) * K
    # G by layout position; float32 Q, alpha <= 10
    np.testing.assert_allclose(st.G, (Q @ st.alpha - 1.0)[st.act], atol=1e-4)
    reference = smo(X, y, C=10.0, kernel=kern, tol=1e-6, shrinking=False)
    assert exact_dual(st.alpha, y, K) == pytest.approx(reference.dual_objective, rel=1e-8)


# --- precision="double": the float64 kernel cache -------------------------------------------


def true_violation(alpha: np.ndarray, y: np.ndarray, K: np.ndarray, C: float) -> float:
    """``m(alpha) - M(alpha)`` with the float64 gradient ``G = Q alpha - e`` (module docstring)."""
    v = -y * ((y[:, None] * y[None, :] * K) @ alpha - 1.0)
    up = ((y > 0) & (alpha < C)) | ((y < 0) & (alpha > 0))
    low = ((y > 0) & (alpha > 0)) | ((y < 0) & (alpha < C))
    return float(v[up].max() - v[low].min())


def iris_versicolor_virginica() -> tuple[np.ndarray, np.ndarray]:
    """Iris classes 1 (+1) and 2 (-1), raw features: max K_tt ~ 94, the float32 floor ~ 1e-5."""
    from sklearn.datasets import load_iris

    iris = load_iris()
    keep = iris.target > 0
    return iris.data[keep], np.where(iris.target[keep] == 1, 1.0, -1.0)


@pytest.mark.parametrize("rule", ["wss2", "wss1"])
def test_double_precision_reaches_tol_exactly_on_unscaled_iris(rule: str) -> None:
    X, y = iris_versicolor_virginica()
    K = X @ X.T
    tol = 1e-6
    double = smo(X, y, C=1.0, tol=tol, working_set=rule, precision="double")
    assert double.status == "optimal"
    assert "float64" in double.message
    assert true_violation(double.alpha, y, K, 1.0) < tol
    # the float32 cache's floor: its own test passes, the float64 violation is ~1.8e-5 > tol,
    # and the float64 certificate says so: "inaccurate", with a warning that says what to do
    with pytest.warns(ConvergenceWarning, match="precision='auto'"):
        single = smo(X, y, C=1.0, tol=tol, working_set=rule, precision="single")
    assert single.status == "inaccurate" and single.history["violation"][-1] < tol
    assert true_violation(single.alpha, y, K, 1.0) > 10 * tol
    assert single.certificate.kkt_violation == pytest.approx(
        true_violation(single.alpha, y, K, 1.0), rel=1e-6)
    # the default ("auto") continues in float64 from the float32 answer and is certified
    auto = smo(X, y, C=1.0, tol=tol, working_set=rule)
    assert auto.status == "optimal" and "float32 then float64" in auto.message
    assert true_violation(auto.alpha, y, K, 1.0) < tol
    oracle = svm_dual(X, y, C=1.0).solve()
    assert double.dual_objective == pytest.approx(oracle.dual_objective, rel=1e-9)


def test_double_precision_converges_on_scaled_data() -> None:
    """Clouds times 100 (scale_1e3_soft's data at a tenth of its scale), linear, C = 1.

    The float32 rounding of G is up to ~2^-24 max K_tt sum(alpha) = 2^-24 * 1.3e5 * 20 ~ 0.15
    per entry: float32 SMO stalls with ``m - M > 1`` (seen: ~2.3 still after 3 million
    iterations); float64 is optimal in ~690,000 iterations with the oracle's objective. (At the
    case's own 1e3 scale, float64 SMO needs ~8e7 iterations (wss2) -- too slow for a test.)
    """
    from maxmargin.verification.cases import catalogue

    case = next(c for c in catalogue("full") if c.name == "scale_1e3_soft")
    X, y, C = case.X / 10.0, case.y, 1.0  # C = 1 at scale 100 acts as C = 1e4 at unit scale
    oracle = svm_dual(X, y, C=C).solve()
    double = smo(X, y, C=C, tol=1e-6, precision="double")
    assert double.status == "optimal"
    assert true_violation(double.alpha, y, X @ X.T, C) < 1e-6
    assert double.dual_objective == pytest.approx(oracle.dual_objective, rel=1e-6)
    with pytest.warns(ConvergenceWarning):
        single = smo(X, y, C=C, tol=1e-6, max_iter=2 * double.iterations, precision="single",
                     finish=False)
    assert single.status == "max_iter"
    assert single.history["violation"][-1] > 1.0


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_single_and_double_agree_on_well_scaled_data(kernel: str) -> None:
    X, y = clouds(120, 4, sep=1.0, seed=11)
    single = smo(X, y, C=2.0, kernel=kernel, tol=1e-6)
    double = smo(X, y, C=2.0, kernel=kernel, tol=1e-6, precision="double")
    assert single.status == double.status == "optimal"
    assert double.dual_objective == pytest.approx(single.dual_objective, rel=1e-6)
    assert double.b == pytest.approx(single.b, abs=1e-4)


def test_double_cache_holds_half_the_columns() -> None:
    X, y = clouds(400, 5, sep=1.0, seed=4)
    assert kc.n_slots_for(400, 0.01, 8) == 3  # 10485 bytes / (8 * 400)
    big = smo(X, y, C=1.0, kernel="rbf", tol=1e-5, precision="double")
    tiny = smo(X, y, C=1.0, kernel="rbf", tol=1e-5, cache_size=0.01, precision="double")
    assert "3 columns of float64" in tiny.message
    assert tiny.dual_objective == pytest.approx(big.dual_objective, rel=1e-9)


def test_double_hard_margin_threshold() -> None:
    """Linear XOR: infeasible with the finer certificate ``delta <= 1e-4 R`` in float64."""
    eps = HARD_MARGIN_HULL_EPS_DOUBLE
    assert eps == 1e-4
    sol = smo(XOR_X, XOR_Y, C=None, precision="double")
    assert sol.status == "infeasible"
    assert "within 0.0001 R" in sol.message
    R = np.sqrt(np.max(np.einsum("ij,ij->i", XOR_X, XOR_X)))
    assert sol.certificate.hull_distance <= eps * R * (1 + 1e-6)
    # separable with geometric margin e = 2e-4 ~ R / 5000, below float32's resolution: by hand
    # w = (0, 1/e), b = 0, D = ||w||^2 / 2 = 1 / (2 e^2). float32 gives up, float64 solves it.
    e = 2e-4
    X = np.array([[0.0, e], [1.0, e], [0.0, -e], [1.0, -e]])
    y = np.array([1.0, 1.0, -1.0, -1.0])
    for rule in RULES:
        single = smo(X, y, C=None, tol=1e-3, working_set=rule, precision="single")
        assert single.status == "infeasible"
        # "auto" (the default) does not take float32's word for it: it goes on in float64
        auto = smo(X, y, C=None, tol=1e-3, working_set=rule)
        assert auto.status == "optimal" and "float32 then float64" in auto.message
        # tol = 1e-3 on m - M; the path (float32 stops at sum(alpha) > 8 / (1e-3 R)^2, then
        # float64) decides the last digits: 1.4e-7 relative seen
        np.testing.assert_allclose(auto.w, [0.0, 1.0 / e], rtol=1e-6, atol=1e-3)
        sol = smo(X, y, C=None, tol=1e-3, working_set=rule, precision="double")
        assert sol.status == "optimal"
        np.testing.assert_allclose(sol.w, [0.0, 1.0 / e], rtol=1e-8, atol=1e-8)
        assert sol.b == pytest.approx(0.0, abs=1e-8)
        assert sol.dual_objective == pytest.approx(1.0 / (2.0 * e * e), rel=1e-8)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), moves=st.integers(0, 12))
def test_certificate_after_a_continuation_is_the_fresh_one(seed: int, moves: int) -> None:
    """The certificate updated by the alphas that moved (``g += K (d_alpha o y)``, the bounded
    part by the columns that crossed the bound) equals the one computed afresh from the data:
    ``g = K (alpha o y)`` and ``g_B = K_:B (C o y)_B`` by a dense float64 Gram matrix."""
    from maxmargin.certificate import certify_svm

    rng = np.random.default_rng(seed)
    X, y = clouds(80, 3, sep=1.0, seed=seed % 97)
    kern, C = RBFKernel(0.7), 2.0
    kd = qmx.make_qmatrix(kern, X, y)
    st_ = state.new_state(kd, kern.diag(X), C, 1e-3, 1)
    run = Solver(Problem(X, y, C, None, kern, kd, radius2=1.0),
                 Options(1e-3, "wss2", True, 10**6, 1.0, exact_finish=True), st_)
    run.solve("double")
    run.restart_from(run.certify()[0])  # as a continuation does: g_B kept for the update
    alpha = st_.alpha
    # a continuation's moves: some alphas to the bound, some off it, some within the box
    idx = rng.choice(80, size=moves, replace=False)
    alpha[idx] = rng.choice([0.0, C, 0.5 * C, rng.uniform(0, C)], size=moves)
    g, cert = run.certify()
    K = kern(X, X)
    at = alpha >= C
    np.testing.assert_allclose(g, K @ (alpha * y), rtol=0, atol=1e-12 * C * 80)
    np.testing.assert_allclose(run.last_certified.g_bounded, K[:, at] @ (C * y[at]),
                               rtol=0, atol=1e-12 * C * 80)
    fresh = certify_svm(alpha, X, y, C, kern)
    assert cert.kkt_violation == pytest.approx(fresh.kkt_violation, rel=1e-9, abs=1e-12)
    assert cert.gap == pytest.approx(fresh.gap, rel=1e-9, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), kind=st.sampled_from(["linear", "rbf", "poly"]),
       nb=st.integers(1, kc.MAX_BLOCK), d=st.integers(1, 9), double=st.booleans())
def test_load_columns_equals_one_column_at_a_time(seed, kind, nb, d, double) -> None:
    """Columns computed together (one pass over the features, 256-row blocks) are bit for bit
    the columns of ``fill_column`` (same summation order), stored in their own slots, and
    become the most recently used."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(nb + 1, 700))
    X = rng.normal(size=(n, d)) * rng.choice([1e-2, 1.0, 30.0])
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    kern = make_kernel(kind, gamma=0.7 / d, degree=3, coef0=0.5, X=X)
    kd = qmx.make_qmatrix(kern, X, y)
    dtype = np.float64 if double else np.float32
    cache = kc.make_cache(n, n * n * 8 / 2**20, dtype)
    cols = rng.choice(n, size=nb, replace=False)
    cache.picks[0, :nb] = cols
    load_columns(cache, kd, nb)  # one dispatcher: each type compiles once, not each example
    out = np.empty(n, dtype=dtype)
    for i in cols:
        s = cache.slot_of[i]
        assert s >= 0 and cache.owner[s] == i and cache.len_of[s] == n
        qmx.fill_column(kd, i, 0, n, out)
        assert np.array_equal(cache.data[s * n : (s + 1) * n], out)
    assert cache.next[cache.prev[cache.owner.shape[0]]] == cache.owner.shape[0]
    assert cache.owner[cache.prev[cache.owner.shape[0]]] == cols[0]  # most recently used
    assert cache.state[kc.S_MISSES] == nb


def test_columns_computed_ahead_leave_the_iterates_unchanged(monkeypatch) -> None:
    """On wide data (d = 900, n = 1,200: features of 8.6 MB) with a cache that holds every
    column, a missing column is computed with those of the most violating uncached variables
    (``PREFETCH``); the cache's content is the only difference, so the run is the one with a
    cache too small for it, bit for bit (its columns from the features themselves, not rounded
    ones: ``test_rounded_features.py``)."""
    from maxmargin.algorithms.smo import api

    X, y = clouds(1200, 900, sep=0.3, seed=5)
    monkeypatch.setattr(api, "with_rounded_features", lambda kd: kd)
    big = smo(X, y, C=1.0, kernel="rbf", cache_size=200.0)
    small = smo(X, y, C=1.0, kernel="rbf", cache_size=2.0)
    assert big.status == small.status == "optimal"
    assert big.iterations == small.iterations
    assert np.array_equal(big.alpha, small.alpha)


def _driver_functions(prefetching: bool | None) -> set[str]:
    """The functions in the machine code of ``solve_pairs`` (float32 cache) compiled for
    ``prefetching``'s type (None or a bool)."""
    want = numba.typeof(prefetching)
    for sig, cres in loops.solve_pairs.overloads.items():
        if sig[6] == want and sig[1].types[0].dtype == numba.float32:
            module = cres.library._get_module_for_linking()
            return {f.name for f in module.functions if not f.is_declaration}
    raise AssertionError(f"no driver compiled for prefetching={prefetching}")


def test_the_prefetch_is_compiled_only_for_wide_data() -> None:
    """``prefetching_for`` offers columns computed ahead only where ``prefetch`` can act (at
    least 64 features and 8 MiB of them); with None the driver's code holds no prefetch at all
    (Numba drops the branches before typing), and on data where it cannot act both drivers
    take the same steps, bit for bit."""
    kern = RBFKernel(0.5)
    for shape, expected in (((1024, 1024), True), ((1023, 1024), None), ((4096, 63), None)):
        X = np.zeros(shape)
        y = np.where(np.arange(shape[0]) % 2 == 0, 1.0, -1.0)
        assert loops.prefetching_for(qmx.make_qmatrix(kern, X, y, blocks=True)) is expected
    X, y = clouds(300, 5, sep=1.0, seed=2)
    runs = []
    for prefetching in (None, True):
        kd = qmx.make_qmatrix(kern, X, y, blocks=True)
        st = state.new_state(kd, kern.diag(X), 1.0, 1e-3, 1)
        cache = kc.make_cache(300, 200.0)
        limits = loops.Limits(10**6, 0.0, 0.0, 0.0)
        assert loops.solve_pairs(st, cache, kd, True, True, limits, prefetching) == loops.OPTIMAL
        runs.append((st.alpha.copy(), int(st.scalars.iteration)))
    assert runs[0][1] == runs[1][1] and np.array_equal(runs[0][0], runs[1][0])
    assert not any("prefetch" in name for name in _driver_functions(None))
    assert any("prefetch" in name for name in _driver_functions(True))


_scores = njit(  # compiled callers only
    lambda G, yT, QDT, in_low, Q_i, QD_i, y_i, g_max, score: working_set.second_order_j(
        G, yT, QDT, in_low, Q_i, QD_i, y_i, g_max, score))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 300), st.integers(0, 2**31), st.booleans())
def test_second_order_j_picks_libsvms_second_order_pair(L, seed, ties):
    """The vectorised gains and backward search pick LIBSVM's ``j`` (``select_working_set``:
    the last minimiser of ``-b^2 / a`` over ``t`` in ``I_low`` with ``b = m + y_t G_t > 0``)
    and its ``m - M``, against a plain transcription of LIBSVM's loop; ``ties`` draws the
    gradients from a few values (equal gains, and ``b = 0``), non-positive curvatures included."""
    rng = np.random.default_rng(seed)
    yT = np.where(rng.random(L) < 0.5, 1.0, -1.0)
    G = rng.choice([-1.5, -1.0, 0.0, 0.5], L) if ties else rng.normal(size=L)
    QDT = rng.choice([1.0, 0.5], L) if ties else rng.uniform(0.1, 2.0, L)
    in_low = rng.random(L) < 0.6
    Q_i = (rng.choice([0.0, 0.5, 1.0], L) if ties else rng.normal(size=L)).astype(np.float32)
    QD_i, y_i = 1.0, float(rng.choice([-1.0, 1.0]))
    # ties: b = m + y_t G_t = 0 exactly for some t (not candidates)
    g_max = float(rng.choice([1.0, 0.5, 0.0]) if ties else rng.uniform(-1.0, 2.0))
    score = np.empty(L)
    j, gap = _scores(G, yT, QDT, in_low, Q_i, QD_i, y_i, g_max, score)
    # LIBSVM: obj_diff_min = INF; for t in I_low: grad_diff = Gmax + y_t G_t; if > 0: ...
    want_j, obj_min, g_max2 = -1, math.inf, -math.inf
    for t in range(L):
        if not in_low[t]:
            continue
        g_max2 = max(g_max2, yT[t] * G[t])
        grad_diff = g_max + yT[t] * G[t]
        if grad_diff > 0.0:
            quad = QD_i + QDT[t] - 2.0 * y_i * yT[t] * float(Q_i[t])
            obj = -(grad_diff * grad_diff) / (quad if quad > 0.0 else working_set.TAU)
            if obj <= obj_min:
                want_j, obj_min = t, obj
    assert j == want_j
    if want_j >= 0:
        assert gap == g_max + g_max2  # m - M, rounded once, as LIBSVM's Gmax + Gmax2
    else:
        assert gap == 0.0 and g_max + g_max2 <= 0.0


_argmax_up = njit(lambda G, yT, in_up, score: working_set.argmax_up(G, yT, in_up, score))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 400), st.integers(0, 2**31), st.booleans())
def test_argmax_up_is_libsvms_last_maximum(L, seed, ties):
    """The vectorised ``m = max_{I_up} -y_t G_t`` and its position are those of LIBSVM's scan
    (``if (-y[t]*G[t] >= Gmax)``: the last of equal maxima, ``+0.0`` equal to ``-0.0``), against
    a plain transcription; ``ties`` draws ``G`` from a few values, zeros of both signs included,
    and ``I_up`` may be empty."""
    rng = np.random.default_rng(seed)
    yT = np.where(rng.random(L) < 0.5, 1.0, -1.0)
    G = rng.choice([-1.0, -0.0, 0.0, 0.5, 2.0], L) if ties else rng.normal(size=L)
    in_up = rng.random(L) < rng.choice([0.0, 0.1, 0.7, 1.0])
    score = np.full(L + 3, np.nan)  # longer than the layout, as the solver's scratch
    m, k = _argmax_up(G, yT, in_up, score)
    want_m, want_k = -math.inf, -1
    for t in range(L):
        if in_up[t] and -yT[t] * G[t] >= want_m:
            want_m, want_k = -yT[t] * G[t], t
    assert k == want_k
    assert m == want_m


def test_the_exact_finish_takes_the_steps_a_far_active_set_needs():
    """At ``C max K_ii`` 1.7e11 SMO crawls (after 200,000 iterations no alpha is at ``C``; the
    optimum has 51 there) and the exact finish must release and fix hundreds of bounds: its cap
    of ``2 n + 4 |F| + 100`` steps stopped it short, so the run spent ten million iterations
    and returned "max_iter" with the dual at 1.85 of 32,050, while the same problem with its
    labels swapped was finished at the first checkpoint. Both are now, within 1e-6 of the
    primal value of the CVXPY oracle's ``(w, b)`` (an upper bound by weak duality, whatever
    the oracle's own status: its solvers call this problem inaccurate)."""
    X, y = mixed_scale(2337)
    C = 572.3350550587774
    with warnings.catch_warnings():  # its status does not matter: its (w, b) is judged here
        warnings.simplefilter("ignore", ConvergenceWarning)
        oracle = soft_margin_primal(X, y, C).solve()
    hinge = np.maximum(0.0, 1.0 - y * (X @ oracle.w + oracle.b))
    upper = 0.5 * oracle.w @ oracle.w + C * hinge.sum()
    for labels in (y, -y):
        sol = smo(X, labels, C=C, kernel="linear", tol=1e-3)
        assert sol.status == "optimal" and "finished exactly" in sol.message, sol.message
        assert upper * (1.0 - 1e-6) <= sol.dual_objective <= upper
