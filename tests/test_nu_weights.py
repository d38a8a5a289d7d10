"""Per-sample weights of the ν-SVC and one-class problems: oracles, drop-ins and ``certify``.

LIBSVM's weights are per-sample bounds ``C_i = W_i``; in Schölkopf's scaling ``alpha_i <= W_i /
sum W`` (one-class ``W_i / (nu sum W)``) and the slacks weighted alike. Each weighted answer is
checked against an independent one: the same problem with the rows repeated (integer weights),
the SMO solvers (:func:`~maxmargin.algorithms.nu_smo`, :func:`one_class_smo`), scikit-learn's
``NuSVC`` and ``OneClassSVM`` (LIBSVM) fitted with the same ``sample_weight``, and the primal
oracles against the duals.

Run alone: ``python -m pytest tests/test_nu_weights.py -q -p no:cacheprovider``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.svm import NuSVC, OneClassSVM

import maxmargin
from maxmargin import MaxMarginNuClassifier, MaxMarginOneClass
from maxmargin.algorithms import nu_smo, one_class_smo
from maxmargin.certificate_nu import (
    certify_nu_svm,
    certify_one_class,
    nu_max,
    project_nu,
    project_one_class,
)
from maxmargin.formulations import nu_svm_dual, nu_svm_primal, one_class_dual, one_class_primal
from maxmargin.formulations._face import face_active_set, face_polish
from maxmargin.kernels import make_kernel
from maxmargin.tolerances import ORACLE_GAP, ORACLE_KKT

NU, NU_ONE = 0.4, 0.3
SETTINGS = settings(max_examples=6, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
#: Agreement of two certified answers of one problem, relative to the decision values' range.
AGREE = 1e-6
#: Agreement of the objectives of two certified answers (relative).
OBJECTIVE = 1e-7
#: Agreement with LIBSVM at tol 1e-10: its float32 kernel cache leaves ``m - M`` near 1e-6 on
#: data off the origin (its fits certify at 1e-6, not at 1e-9).
LIBSVM_AGREE = 1e-5
GAMMA = 0.5


def _data(seed: int, n: int = 30) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two overlapping classes off the origin and positive real weights."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 3 == 0, -1.0, 1.0)
    X = rng.normal(size=(n, 2))
    X[:, 0] += 0.8 * y
    return X + 3.0, y, rng.uniform(0.2, 3.0, n)


def _solve(oracle, *args, **kwargs):
    sol = oracle(*args, **kwargs).solve()
    assert sol.status == "optimal", sol.message
    assert not sol.hulls_meet and sol.rho > 0.0
    return sol


def _close_values(ours: np.ndarray, theirs: np.ndarray, agree: float = AGREE) -> None:
    np.testing.assert_allclose(ours, theirs, atol=agree * max(np.max(np.abs(theirs)), 1e-300))


def _exploding_kernel(A, B):
    raise AssertionError("the kernel was evaluated before the arguments were checked")


# --- the oracles against the SMO solvers and against each other ------------------------------

@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_weighted_oracles_agree_with_weighted_smo(kernel: str, seed: int) -> None:
    X, y, w = _data(seed)
    ours = _solve(nu_svm_dual, X, y, NU, kernel=kernel, gamma=GAMMA, sample_weight=w)
    smo = nu_smo(X, y, NU, kernel=kernel, gamma=GAMMA, tol=1e-9, sample_weight=w)
    assert smo.status == "optimal"
    assert ours.dual_objective == pytest.approx(smo.dual_objective, rel=OBJECTIVE)
    assert ours.rho == pytest.approx(smo.rho, rel=1e-6)
    _close_values(ours.decision_function(X), smo.decision_function(X))
    assert np.all(ours.alpha <= w / w.sum() * (1 + 1e-12))  # the per-sample bounds hold

    one = _solve(one_class_dual, X, NU_ONE, kernel=kernel, gamma=GAMMA, sample_weight=w)
    smo1 = one_class_smo(X, NU_ONE, kernel=kernel, gamma=GAMMA, tol=1e-9, sample_weight=w)
    assert smo1.status == "optimal"
    assert one.dual_objective == pytest.approx(smo1.dual_objective, rel=OBJECTIVE)
    assert one.rho == pytest.approx(smo1.rho, rel=1e-6)
    _close_values(one.decision_function(X), smo1.decision_function(X))
    assert np.all(one.alpha <= w / (NU_ONE * w.sum()) * (1 + 1e-12))


@pytest.mark.parametrize("seed", [0, 1])
def test_weighted_primals_agree_with_weighted_duals(seed: int) -> None:
    """The weighted slacks ``W_i / sum W`` of the primal are dual to the bounds of the dual."""
    X, y, w = _data(seed)
    pairs = ((nu_svm_primal(X, y, NU, sample_weight=w), nu_svm_dual(X, y, NU, sample_weight=w)),
             (one_class_primal(X, NU_ONE, sample_weight=w),
              one_class_dual(X, NU_ONE, sample_weight=w)))
    for primal, dual in pairs:
        p, d = primal.solve(), dual.solve()
        assert p.status == d.status == "optimal"
        assert p.primal_objective == pytest.approx(d.primal_objective, rel=OBJECTIVE)
        np.testing.assert_allclose(p.w, d.w, atol=AGREE * np.max(np.abs(d.w)))
        assert p.rho == pytest.approx(d.rho, rel=1e-6)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_the_face_methods_take_per_sample_bounds(kernel: str) -> None:
    """The oracles' active-set method with one bound per sample, from a feasible point far from
    the optimum, ends certified (by the weighted judge) at SMO's objective; one face solve
    (:func:`face_polish`) from SMO's answer stays there."""
    X, y, w = _data(11)
    kern = make_kernel(kernel, gamma=GAMMA)
    data = {"K": kern.gram(X)} if kernel == "rbf" else {"X": X - X.mean(axis=0)}
    groups = [np.flatnonzero(y > 0), np.flatnonzero(y < 0)]
    upper = w / w.sum()
    ref = nu_smo(X, y, NU, kernel=kern, tol=1e-9, sample_weight=w)
    start = project_nu(np.random.default_rng(0).random(y.shape[0]) * upper, y, NU, w)
    a = project_nu(face_active_set(start, y, upper, groups, [NU / 2, NU / 2], **data), y, NU, w)
    assert np.all(a <= upper)
    cert = certify_nu_svm(a, X, y, NU, kern, weights=w)
    assert cert.meets(ORACLE_KKT, ORACLE_GAP), cert
    assert cert.dual_objective == pytest.approx(ref.dual_objective, rel=1e-9)
    polished = [certify_nu_svm(project_nu(p, y, NU, w), X, y, NU, kern, weights=w)
                for p in face_polish(np.asarray(ref.alpha), y, upper, groups,
                                     [NU / 2, NU / 2], **data)]
    assert polished and min(c.kkt_violation for c in polished) <= ORACLE_KKT
    # one-class: the points themselves (the origin matters), bounds W_i / (nu sum W)
    ones = np.ones(y.shape[0])
    ref1 = one_class_smo(X, NU_ONE, kernel=kern, tol=1e-9, sample_weight=w)
    start = project_one_class(np.random.default_rng(1).random(y.shape[0]), NU_ONE, w)
    data = {"K": kern.gram(X)} if kernel == "rbf" else {"X": X - X.mean(axis=0),
                                                        "offset": X.mean(axis=0)}
    a = project_one_class(face_active_set(start, ones, upper / NU_ONE, [np.arange(y.shape[0])],
                                          [1.0], **data), NU_ONE, w)
    cert = certify_one_class(a, X, NU_ONE, kern, weights=w)
    assert cert.meets(ORACLE_KKT, ORACLE_GAP), cert
    assert cert.dual_objective == pytest.approx(ref1.dual_objective, rel=1e-9)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_integer_weights_are_repeated_rows(kernel: str) -> None:
    """Weight ``k`` is the point ``k`` times (their ``alpha`` share one bound ``k / sum W``):
    an independent answer, the unweighted problem on the repeated rows."""
    X, y, _ = _data(2, n=24)
    w = np.random.default_rng(2).integers(1, 4, y.shape[0]).astype(float)
    reps = w.astype(int)
    Xr, yr = np.repeat(X, reps, axis=0), np.repeat(y, reps)
    T = np.random.default_rng(3).normal(size=(15, 2)) + 3.0
    for weighted, repeated in (
            (_solve(nu_svm_dual, X, y, NU, kernel=kernel, gamma=GAMMA, sample_weight=w),
             _solve(nu_svm_dual, Xr, yr, NU, kernel=kernel, gamma=GAMMA)),
            (_solve(one_class_dual, X, NU_ONE, kernel=kernel, gamma=GAMMA, sample_weight=w),
             _solve(one_class_dual, Xr, NU_ONE, kernel=kernel, gamma=GAMMA))):
        assert weighted.dual_objective == pytest.approx(repeated.dual_objective, rel=OBJECTIVE)
        assert weighted.primal_objective == pytest.approx(repeated.primal_objective,
                                                          rel=OBJECTIVE)
        assert weighted.rho == pytest.approx(repeated.rho, rel=1e-6)
        _close_values(weighted.decision_function(T), repeated.decision_function(T))
        # the repeated rows' alpha, summed per original point, is a weighted optimum too
        summed = np.bincount(np.repeat(np.arange(y.shape[0]), reps), weights=repeated.alpha)
        cert = (certify_one_class(summed, X, NU_ONE, weighted.kernel, weights=w)
                if weighted.problem == "one_class" else
                certify_nu_svm(summed, X, y, NU, weighted.kernel, weights=w))
        assert cert.meets(ORACLE_KKT, ORACLE_GAP) and cert.feasibility <= 1e-12, cert.summary()


@pytest.mark.parametrize("nu", [0.05, 0.3])
def test_weighted_reduced_hulls_that_meet(nu: float) -> None:
    """Classes from one distribution: the weighted reduced hulls meet (the LP with one bound
    per point says so), ``w = 0``, ``rho = 0``, no ``C``; the point it returns keeps the
    per-sample bounds and the class sums; SMO with the same weights finds ``w = 0`` too."""
    rng = np.random.default_rng(12)
    n = 40
    X = rng.normal(size=(n, 2)) + 3.0
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    w = rng.uniform(0.2, 3.0, n)
    sol = nu_svm_dual(X, y, nu, sample_weight=w).solve()
    assert sol.status == "optimal" and sol.hulls_meet, sol.message
    assert sol.rho == 0.0 and math.isnan(sol.C) and np.all(sol.w == 0.0)
    assert np.all(sol.alpha <= w / w.sum()) and np.all(sol.alpha >= 0.0)
    for cls in (y > 0, y < 0):
        assert sol.alpha[cls].sum() == pytest.approx(nu / 2, rel=1e-9)
    assert nu_smo(X, y, nu, sample_weight=w, tol=1e-9).hulls_meet
    # one-class: the origin inside the weighted reduced hull of the points
    one = one_class_dual(X - X.mean(axis=0), NU_ONE, sample_weight=w).solve()
    assert one.status == "optimal" and one.hulls_meet and one.rho == 0.0
    assert np.all(one.alpha <= w / (NU_ONE * w.sum())) and one.alpha.sum() == pytest.approx(1.0)


def test_equal_weights_are_the_unweighted_problem() -> None:
    X, y, _ = _data(4)
    w = np.full(y.shape[0], 2.5)
    for make in (lambda sw: nu_svm_dual(X, y, NU, kernel="rbf", gamma=GAMMA, sample_weight=sw),
                 lambda sw: one_class_dual(X, NU_ONE, kernel="rbf", gamma=GAMMA,
                                           sample_weight=sw),
                 lambda sw: nu_svm_primal(X, y, NU, sample_weight=sw),
                 lambda sw: one_class_primal(X, NU_ONE, sample_weight=sw)):
        weighted, plain = make(w).solve(), make(None).solve()
        assert weighted.status == plain.status == "optimal"
        assert weighted.dual_objective == pytest.approx(plain.dual_objective, rel=OBJECTIVE)
        assert weighted.rho == pytest.approx(plain.rho, rel=1e-6)
        _close_values(weighted.decision_function(X), plain.decision_function(X))


# --- scikit-learn (LIBSVM) fitted with the same weights; certify of its fits ------------------

@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_weighted_oracles_agree_with_libsvm(kernel: str, seed: int) -> None:
    """NuSVC's decision function is ``f / rho``; OneClassSVM's ``nu sum W`` times ``f``."""
    X, y, w = _data(seed)
    ours = _solve(nu_svm_dual, X, y, NU, kernel=kernel, gamma=GAMMA, sample_weight=w)
    theirs = NuSVC(nu=NU, kernel=kernel, gamma=GAMMA, tol=1e-10).fit(X, y, sample_weight=w)
    sign = 1.0 if theirs.classes_[1] == 1.0 else -1.0
    _close_values(ours.decision_function(X) / ours.rho, sign * theirs.decision_function(X),
                  LIBSVM_AGREE)
    one = _solve(one_class_dual, X, NU_ONE, kernel=kernel, gamma=GAMMA, sample_weight=w)
    lib = OneClassSVM(nu=NU_ONE, kernel=kernel, gamma=GAMMA, tol=1e-10).fit(X, sample_weight=w)
    _close_values(NU_ONE * w.sum() * one.decision_function(X), lib.decision_function(X),
                  LIBSVM_AGREE)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_certify_judges_weighted_libsvm_fits_in_their_problem(kernel: str) -> None:
    """A tight LIBSVM fit with weights (some of them zero: left out) is optimal in its own
    weighted problem; a fit with positive weights is not optimal in the unweighted problem
    (its ``alpha`` leaves the box ``1 / l``)."""
    X, y, w = _data(5)
    libsvm = dict(kernel=kernel, gamma=GAMMA, tol=1e-10)
    for weights, zeros in ((w, False), (np.where(np.arange(w.size) < 2, 0.0, w), True)):
        nusvc = NuSVC(nu=NU, **libsvm).fit(X, y, sample_weight=weights)
        ocsvm = OneClassSVM(nu=NU_ONE, **libsvm).fit(X, sample_weight=weights)
        for model, labels in ((nusvc, y), (ocsvm, None)):
            cert = maxmargin.certify(model, X, labels, sample_weight=weights, tol=1e-6)
            assert cert.optimal and cert.feasibility <= 1e-9, cert.summary()
            if not zeros:  # (with zeros, support_ numbers the kept samples: refused unweighted)
                ignored = maxmargin.certify(model, X, labels, tol=1e-6)
                assert not ignored.optimal, ignored.summary()
        # the one-class margin is LIBSVM's offset in Schölkopf's scaling
        cert = maxmargin.certify(ocsvm, X, sample_weight=weights, tol=1e-6)
        scale = NU_ONE * weights.sum()
        assert cert.margin * scale == pytest.approx(float(ocsvm.offset_[0]), rel=1e-6)


def test_certify_refuses_bad_weights_of_one_class_models() -> None:
    X, _, w = _data(6)
    model = OneClassSVM(nu=NU_ONE, kernel="linear").fit(X, sample_weight=w)
    for bad in (w[:-1], -w, np.where(np.arange(w.size) == 0, np.nan, w), np.zeros_like(w)):
        with pytest.raises(ValueError, match="sample_weight"):
            maxmargin.certify(model, X, sample_weight=bad)


# --- validation: before any kernel work, inputs untouched -----------------------------------

def test_nu_above_the_weighted_nu_max_refused_before_kernel_work() -> None:
    X, y, _ = _data(7, n=30)  # 10 negatives of 30: nu_max = 2/3 unweighted
    w = np.where(y < 0, 0.5, 1.0)  # W_- = 5, W = 25: nu_max = 0.4
    assert nu_max(y, w) == pytest.approx(0.4)
    for oracle in (nu_svm_dual, nu_svm_primal):
        kernel = _exploding_kernel if oracle is nu_svm_dual else "linear"
        with pytest.raises(ValueError, match=r"`nu`.*nu_max.*0\.4\b"):
            oracle(X, y, nu=0.5, kernel=kernel, sample_weight=w)
        oracle(X, y, nu=0.5, kernel="linear")  # feasible without the weights
    sol = nu_svm_dual(X, y, nu=0.4, kernel="linear", sample_weight=w).solve()  # nu_max itself
    assert sol.status == "optimal"
    assert np.sum(sol.alpha[y < 0]) == pytest.approx(0.2, rel=1e-9)  # every negative at bound


@pytest.mark.parametrize("oracle", ["nu_svm_dual", "nu_svm_primal", "one_class_dual",
                                    "one_class_primal"])
def test_bad_weights_refused_naming_sample_weight(oracle: str) -> None:
    X, y, w = _data(8)
    bad_weights = (w[:-1], np.append(w, 1.0), -w, np.where(np.arange(w.size) == 3, 0.0, w),
                   np.where(np.arange(w.size) == 3, np.nan, w), np.where(
                       np.arange(w.size) == 3, np.inf, w), w[:, None], "heavy")
    dual = oracle.endswith("dual")
    for bad in bad_weights:
        with pytest.raises(ValueError, match="sample_weight"):
            if oracle.startswith("nu"):
                getattr(maxmargin.formulations, oracle)(
                    X, y, NU, kernel=_exploding_kernel if dual else "linear", sample_weight=bad)
            else:
                getattr(maxmargin.formulations, oracle)(
                    X, NU_ONE, kernel=_exploding_kernel if dual else "linear",
                    sample_weight=bad)


def test_inputs_not_modified() -> None:
    X, y, w = _data(9)
    w[0] = 40.0  # a weight whose bound binds
    copies = [a.copy() for a in (X, y, w)]
    nu_svm_dual(X, y, NU, kernel="rbf", gamma=GAMMA, sample_weight=w).solve()
    nu_svm_primal(X, y, NU, sample_weight=w).solve()
    one_class_dual(X, NU_ONE, kernel="rbf", gamma=GAMMA, sample_weight=w).solve()
    one_class_primal(X, NU_ONE, sample_weight=w).solve()
    for a, b in zip((X, y, w), copies, strict=True):
        np.testing.assert_array_equal(a, b)
        assert a.flags.writeable


# --- the drop-ins ------------------------------------------------------------------------------

def test_drop_ins_take_weights_with_the_oracles() -> None:
    """``solver="cvxpy"`` now takes unequal weights and agrees with ``"nu_smo"``; the
    nearest-point methods (one bound for every sample) still refuse them."""
    X, y, w = _data(10)
    w[:2] = 0.0  # left out (certify refuses negative weights; the drop-ins leave them out)
    for make in (lambda s: MaxMarginNuClassifier(nu=NU, kernel="rbf", gamma=GAMMA, tol=1e-9,
                                                 solver=s),
                 lambda s: MaxMarginOneClass(nu=NU_ONE, kernel="rbf", gamma=GAMMA, tol=1e-9,
                                             solver=s)):
        oracle = make("cvxpy").fit(X, y, sample_weight=w)
        smo = make("nu_smo").fit(X, y, sample_weight=w)
        assert oracle.fit_status_ == smo.fit_status_ == 0
        _close_values(oracle.decision_function(X), smo.decision_function(X))
        labels = None if isinstance(oracle, MaxMarginOneClass) else y
        cert = maxmargin.certify(oracle, X, labels, sample_weight=w, tol=1e-6)
        assert cert.optimal, cert.summary()
    for method in ("mdm", "wolfe", "gilbert"):
        with pytest.raises(ValueError, match=r"sample_weight.*one bound.*'cvxpy'"):
            MaxMarginOneClass(nu=NU_ONE, solver=method).fit(X, sample_weight=w)


# --- a property: random small problems, integer weights as repeated rows ----------------------

@SETTINGS
@given(seed=st.integers(0, 2**16), n=st.integers(8, 14), one_class=st.booleans(),
       fraction=st.floats(0.15, 0.95))
def test_weights_are_repeated_rows_property(seed: int, n: int, one_class: bool,
                                            fraction: float) -> None:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2)) + 2.0
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    w = rng.integers(1, 4, n).astype(float)
    reps = w.astype(int)
    Xr, yr = np.repeat(X, reps, axis=0), np.repeat(y, reps)
    if one_class:
        nu = fraction
        weighted = one_class_dual(X, nu, kernel="rbf", gamma=GAMMA, sample_weight=w).solve()
        repeated = one_class_dual(Xr, nu, kernel="rbf", gamma=GAMMA).solve()
    else:
        nu = fraction * nu_max(y, w)
        weighted = nu_svm_dual(X, y, nu, kernel="rbf", gamma=GAMMA, sample_weight=w).solve()
        repeated = nu_svm_dual(Xr, yr, nu, kernel="rbf", gamma=GAMMA).solve()
    assert weighted.status == repeated.status == "optimal"
    scale = max(abs(repeated.dual_objective), 1e-12)
    assert abs(weighted.dual_objective - repeated.dual_objective) <= OBJECTIVE * scale
    assert weighted.hulls_meet == repeated.hulls_meet
    if not weighted.hulls_meet:
        _close_values(weighted.decision_function(X), repeated.decision_function(X))
    assert math.isfinite(weighted.rho)
