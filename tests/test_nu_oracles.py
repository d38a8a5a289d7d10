"""ν-SVC, one-class and reduced-hull oracles and their float64 judges: theorems as tests.

Each theorem is checked against an independent answer: the primal oracle against the dual, the
judges' exact best offsets against a CVXPY LP, the ν-SVC against the C-SVC at ``C = 1 / (rho
l)`` (Chang & Lin 2001), its dual against the reduced hulls' nearest points (Bennett &
Bredensteiner 2000), and both against scikit-learn's ``NuSVC`` and ``OneClassSVM`` (LIBSVM).

Run alone: ``python -m pytest tests/test_nu_oracles.py -q -p no:cacheprovider``.
"""

from __future__ import annotations

import math
import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from maxmargin.certificate_nu import (
    certify_nu_svm,
    certify_one_class,
    certify_reduced_hulls,
    nu_max,
    nu_offsets,
    one_class_offset,
    project_nu,
    project_one_class,
    reduced_support,
)
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.formulations import (
    hull_distance,
    nu_svm_dual,
    nu_svm_primal,
    one_class_dual,
    one_class_primal,
    polytope_distance,
    svm_dual,
)
from maxmargin.kernels import make_kernel
from maxmargin.tolerances import ORACLE_GAP, ORACLE_KKT
from maxmargin.verification.campaign import random_case

SETTINGS = settings(max_examples=12, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
LINEAR = make_kernel("linear")


def _overlap(seed: int, n: int = 40, d: int = 2, shift: float = 1.0) -> tuple:
    """Two Gaussian classes ``2 shift`` apart along the first axis, off the origin."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 3 == 0, -1.0, 1.0)
    X = rng.normal(size=(n, d))
    X[:, 0] += shift * y
    return X + 3.0, y


def _cloud(seed: int, n: int = 30, d: int = 2) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) + np.array([2.0] + [0.5] * (d - 1))


def _optimal(sol) -> None:
    assert sol.status == "optimal", sol.message
    assert sol.certificate.meets(ORACLE_KKT, ORACLE_GAP), sol.certificate


# --- feasibility: refused before any kernel work ---------------------------------------------

def _exploding_kernel(A, B):
    raise AssertionError("the kernel was evaluated before nu was checked")


def test_nu_above_nu_max_refused_before_kernel_work():
    X, y = _overlap(0, n=30)  # 10 negatives of 30: nu_max = 2/3
    assert nu_max(y) == pytest.approx(2 / 3)
    for oracle in (nu_svm_dual, nu_svm_primal):
        kernel = _exploding_kernel if oracle is nu_svm_dual else "linear"
        with pytest.raises(ValueError, match=r"`nu`.*nu_max.*0\.666667"):
            oracle(X, y, nu=0.7, kernel=kernel)
    for bad in (0.0, -0.1, math.nan, "0.5"):
        with pytest.raises(ValueError, match="`nu`"):
            nu_svm_dual(X, y, nu=bad, kernel=_exploding_kernel)
    nu_svm_dual(X, y, nu=2 / 3)  # nu_max itself is feasible


def test_one_class_nu_range():
    X = _cloud(0)
    for bad in (0.0, 1.01, -1.0):
        with pytest.raises(ValueError, match="`nu`"):
            one_class_dual(X, nu=bad, kernel=_exploding_kernel)
    with pytest.raises(ValueError, match="`kernel`"):
        one_class_primal(X, kernel="rbf")


def test_empty_reduced_hull_refused():
    P, Q = _cloud(1, n=10), _cloud(2, n=20) - 3.0
    with pytest.raises(ValueError, match=r"`mu`.*1 / 10"):
        hull_distance(P, Q, mu=0.09)
    with pytest.raises(ValueError, match=r"`mu`.*1 / 20"):
        polytope_distance(Q, mu=0.04)
    assert hull_distance(P, Q, mu=0.1).solve().status == "optimal"


# --- the oracles agree with each other and with the theorems ---------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("nu", [0.2, 0.5])
def test_nu_primal_and_dual_agree(seed, nu):
    X, y = _overlap(seed)
    p, d = nu_svm_primal(X, y, nu).solve(), nu_svm_dual(X, y, nu).solve()
    _optimal(p)
    _optimal(d)
    assert p.primal_objective == pytest.approx(d.primal_objective, rel=1e-8, abs=1e-14)
    scale = max(1.0, float(np.max(np.abs(d.decision_function(X)))))
    assert np.max(np.abs(p.decision_function(X) - d.decision_function(X))) < 1e-7 * scale
    assert p.rho == pytest.approx(d.rho, rel=1e-7, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("nu", [0.1, 0.5])
def test_one_class_primal_and_dual_agree(seed, nu):
    X = _cloud(seed)
    p, d = one_class_primal(X, nu).solve(), one_class_dual(X, nu).solve()
    _optimal(p)
    _optimal(d)
    assert p.primal_objective == pytest.approx(d.primal_objective, rel=1e-8)
    assert np.allclose(p.decision_function(X), d.decision_function(X), atol=1e-7 * d.rho)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("nu", [0.15, 0.4, 0.6])
def test_nu_property(kernel, nu):
    """Fraction of margin errors <= nu <= fraction of support vectors (Schölkopf et al.)."""
    X, y = _overlap(3, n=60, shift=2.0)
    sol = nu_svm_dual(X, y, nu, kernel=kernel, gamma=0.5).solve()
    _optimal(sol)
    assert sol.rho > 0
    margins = y * sol.decision_function(X)
    errors = np.mean(margins < sol.rho * (1 - 1e-7))
    svs = np.mean(sol.alpha > 0)
    assert errors <= nu + 1e-12 and nu <= svs + 1e-12, (errors, nu, svs)
    assert float(sol.alpha.sum()) == pytest.approx(nu, rel=1e-12)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("nu", [0.05, 0.3, 0.7])
def test_one_class_nu_property(kernel, nu):
    X = _cloud(4, n=50)
    sol = one_class_dual(X, nu, kernel=kernel, gamma=0.5).solve()
    _optimal(sol)
    f = sol.decision_function(X)
    outliers = np.mean(f < -1e-9 * abs(sol.rho))
    assert outliers <= nu + 1e-12 and nu <= np.mean(sol.alpha > 0) + 1e-12


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("nu", [0.2, 0.5])
def test_nu_c_equivalence(kernel, nu):
    """With rho > 0 the C-SVC at C = 1 / (rho l) has the decision function f_nu / rho and the
    dual alpha / rho (Chang & Lin 2001)."""
    X, y = _overlap(5, n=40)
    sol = nu_svm_dual(X, y, nu, kernel=kernel, gamma=0.5).solve()
    _optimal(sol)
    assert sol.C == pytest.approx(1.0 / (sol.rho * X.shape[0]))
    c_svc = svm_dual(X, y, C=sol.C, kernel=kernel, gamma=0.5).solve()
    assert c_svc.status == "optimal", c_svc.message
    f_nu, f_c = sol.decision_function(X) / sol.rho, c_svc.decision_function(X)
    assert np.max(np.abs(f_nu - f_c)) < 1e-6 * max(1.0, float(np.max(np.abs(f_c))))
    assert np.max(np.abs(sol.alpha / sol.rho - c_svc.alpha)) < 1e-6 * sol.C


def test_reduced_hulls_meet_gives_w_zero():
    X, y = _overlap(6, n=40, shift=0.3)
    sol = nu_svm_dual(X, y, 0.05).solve()
    _optimal(sol)
    assert sol.hulls_meet and sol.rho == 0.0 and sol.b == 0.0 and math.isnan(sol.C)
    assert np.all(sol.w == 0.0) and np.all(sol.decision_function(X) == 0.0)
    assert "meet" in sol.message
    primal = nu_svm_primal(X, y, 0.05).solve()
    _optimal(primal)
    assert primal.hulls_meet
    # the same data with a nu whose reduced hulls are apart: rho > 0, an equivalent C
    apart = nu_svm_dual(X, y, nu_max(y)).solve()
    _optimal(apart)
    assert not apart.hulls_meet and apart.rho > 0 and apart.C > 0


def test_one_class_nu_one_is_the_centroid():
    X = _cloud(7)
    for kernel in ("linear", "rbf"):
        sol = one_class_dual(X, 1.0, kernel=kernel).solve()
        _optimal(sol)
        assert np.allclose(sol.alpha, 1.0 / X.shape[0], rtol=0, atol=1e-15)
    assert np.allclose(sol.w if sol.w is not None else X.mean(axis=0), X.mean(axis=0))
    lin = one_class_dual(X, 1.0).solve()
    assert np.allclose(lin.w, X.mean(axis=0), rtol=1e-12)


def test_nu_svm_is_the_reduced_hulls_problem():
    """The ν-SVC dual is nu / 2 times the nearest points of RCH(2 / (nu l)) of the classes:
    ||w|| = (nu / 2) dist (Bennett & Bredensteiner 2000; Crisp & Burges 2000)."""
    X, y = _overlap(8, n=40)
    for nu in (0.2, 0.5):
        sol = nu_svm_dual(X, y, nu).solve()
        hulls = hull_distance(X[y > 0], X[y < 0], mu=2.0 / (nu * X.shape[0])).solve()
        assert hulls.status == "optimal", hulls.message
        assert np.linalg.norm(sol.w) == pytest.approx(0.5 * nu * hulls.distance, rel=1e-8)


def test_mu_one_and_above_is_the_ordinary_hull_bit_for_bit():
    rng = np.random.default_rng(9)
    P, Q = rng.normal(size=(15, 3)), rng.normal(size=(12, 3))
    P[:, 0], Q[:, 0] = 1.0, -1.0  # facing faces whose projections overlap: distance 2
    base = hull_distance(P, Q).solve()
    for mu in (1.0, 1.5, 40.0):
        other = hull_distance(P, Q, mu=mu).solve()
        assert other.distance == base.distance
        assert np.array_equal(other.weights_p, base.weights_p)
    one = polytope_distance(P).solve()
    assert np.array_equal(polytope_distance(P, mu=3.0).solve().weights, one.weights)
    # the reduced code path (mu < 1) on the same problem: RCH(0.5) of each face still has
    # points whose projections overlap, so the distance stays 2; RCH(1/12) of Q is its centroid
    assert base.distance == pytest.approx(2.0, rel=1e-9)
    reduced = hull_distance(P, Q, mu=0.5).solve()
    assert reduced.status == "optimal" and reduced.distance == pytest.approx(2.0, rel=1e-9)
    centroid = hull_distance(P, Q, mu=1.0 / 12).solve()
    assert np.allclose(centroid.q, Q.mean(axis=0), atol=1e-12)


@pytest.mark.parametrize("mu", [0.1, 0.25, 0.5])
def test_reduced_polytope_agrees_with_one_class(mu):
    """The one-class dual is the point of RCH(1 / (nu l)) nearest the origin: ||w|| = dist."""
    X = _cloud(11, n=20)
    nu = 1.0 / (mu * X.shape[0])
    poly = polytope_distance(X, mu=mu).solve()
    sol = one_class_dual(X, nu).solve()
    assert poly.status == "optimal"
    _optimal(sol)
    assert poly.distance == pytest.approx(float(np.linalg.norm(sol.w)), rel=1e-8)


# --- the judges ------------------------------------------------------------------------------

def _feasible_nu_alpha(rng, y, nu):
    a = rng.random(y.shape[0]) * (1.0 / y.shape[0])
    return project_nu(a, y, nu)


@pytest.mark.parametrize("seed", range(6))
def test_nu_offsets_exact_against_an_lp(seed):
    """The best (b, rho >= 0) for a fixed w: the order statistics against CVXPY's LP."""
    rng = np.random.default_rng(seed)
    n = 25
    y = np.where(rng.random(n) < 0.4, -1.0, 1.0)
    y[:2] = (1.0, -1.0)
    g = rng.normal(size=n) * (1.0 if seed % 2 else 0.1) + (0.0 if seed < 3 else -0.5 * y)
    nu = float(rng.uniform(0.05, nu_max(y)))
    b, rho, value = nu_offsets(g, y, nu)
    bv, rv, xi = cp.Variable(), cp.Variable(), cp.Variable(n)
    lp = cp.Problem(cp.Minimize(-nu * rv + cp.sum(xi) / n),
                    [cp.multiply(y, g + bv) >= rv - xi, xi >= 0, rv >= 0])
    lp.solve(solver="CLARABEL")
    assert value == pytest.approx(lp.value, abs=1e-9)
    assert -nu * rho + np.sum(np.maximum(rho - y * (g + b), 0.0)) / n == pytest.approx(value,
                                                                                     abs=1e-15)
    assert rho >= 0.0


@pytest.mark.parametrize("seed", range(4))
def test_one_class_offset_exact_against_an_lp(seed):
    rng = np.random.default_rng(seed)
    n = 23
    g = rng.normal(size=n)
    nu = float(rng.uniform(0.02, 1.0))
    rho, value = one_class_offset(g, nu)
    rv, xi = cp.Variable(), cp.Variable(n)
    lp = cp.Problem(cp.Minimize(-rv + cp.sum(xi) / (nu * n)), [g >= rv - xi, xi >= 0])
    lp.solve(solver="CLARABEL")
    assert value == pytest.approx(lp.value, abs=1e-9)


def test_reduced_support_against_an_lp():
    rng = np.random.default_rng(0)
    for mu in (1.0, 0.5, 0.3, 0.1, 1 / 7):
        v = rng.normal(size=12)
        lp = linprog(v, A_eq=np.ones((1, 12)), b_eq=[1.0], bounds=(0.0, min(mu, 1.0)),
                     method="highs")
        assert reduced_support(v, mu) == pytest.approx(lp.fun, abs=1e-12)


def test_judges_weak_duality_on_random_points():
    """Any feasible alpha: P* >= D, so the gap is never negative beyond round-off."""
    rng = np.random.default_rng(1)
    X, y = _overlap(12, n=30)
    for _ in range(20):
        nu = float(rng.uniform(0.05, nu_max(y)))
        cert = certify_nu_svm(_feasible_nu_alpha(rng, y, nu), X, y, nu, LINEAR)
        assert cert.primal_objective >= cert.dual_objective - 1e-15
        assert cert.feasibility <= 1e-15
        nu1 = float(rng.uniform(0.05, 1.0))
        a = project_one_class(rng.random(30), nu1)
        cert1 = certify_one_class(a, X, nu1, LINEAR)
        assert cert1.primal_objective >= cert1.dual_objective - 1e-12


def _perturbations(alpha, y, upper):
    """Feasible moves of mass within one class (suboptimal) and infeasible ones."""
    out = []
    for cls in np.unique(y):
        idx = np.flatnonzero(y == cls)
        src = idx[np.argmax(alpha[idx])]
        dst = idx[np.argmin(alpha[idx])]
        step = 0.1 * min(alpha[src], upper - alpha[dst])
        a = alpha.copy()
        a[src] -= step
        a[dst] += step
        out.append(("suboptimal", a))
    a = alpha.copy()
    a[np.argmax(alpha)] *= 1 + 1e-6
    out.append(("infeasible", a))
    return out


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_judges_accept_the_oracle_and_reject_perturbations(kernel):
    X, y = _overlap(13, n=40)
    kern = make_kernel(kernel, gamma=0.5, X=X)
    sol = nu_svm_dual(X, y, 0.4, kernel=kern).solve()
    _optimal(sol)
    assert certify_nu_svm(sol.alpha, X, y, 0.4, kern).meets(ORACLE_KKT, ORACLE_GAP)
    for what, a in _perturbations(sol.alpha, y, 1.0 / 40):
        assert not certify_nu_svm(a, X, y, 0.4, kern).meets(ORACLE_KKT, ORACLE_GAP), what
    ones = np.ones(40)
    oc = one_class_dual(X, 0.3, kernel=kern).solve()
    _optimal(oc)
    for what, a in _perturbations(oc.alpha, ones, 1.0 / (0.3 * 40)):
        assert not certify_one_class(a, X, 0.3, kern).meets(ORACLE_KKT, ORACLE_GAP), what


_NU_CACHE: dict = {}


def _reference(kernel):
    if kernel not in _NU_CACHE:
        X, y = _overlap(14, n=30)
        sol = nu_svm_dual(X, y, 0.4, kernel=kernel, gamma=0.7).solve()
        oc = one_class_dual(X, 0.3, kernel=kernel, gamma=0.7).solve()
        _NU_CACHE[kernel] = (X, y, sol.alpha, oc.alpha)
    return _NU_CACHE[kernel]


def _verdicts(X, y, a, b, kern):
    """Verdicts of the ν-SVC judge on an optimal and a perturbed alpha, and of one-class."""
    bad = a.copy()
    pos = np.flatnonzero(y > 0)
    i, j = pos[np.argmax(a[pos])], pos[np.argmin(a[pos])]
    bad[i], bad[j] = a[j], a[i]
    return (certify_nu_svm(a, X, y, 0.4, kern).meets(ORACLE_KKT, ORACLE_GAP),
            certify_nu_svm(bad, X, y, 0.4, kern).meets(ORACLE_KKT, ORACLE_GAP),
            certify_one_class(b, X, 0.3, kern).meets(ORACLE_KKT, ORACLE_GAP))


@SETTINGS
@given(s=st.sampled_from([1e-4, 1e-2, 3e2, 1e4]), t=st.sampled_from([0.0, 3.0, 1e3, 1e5]),
       perm_seed=st.integers(0, 2**16), swap=st.booleans())
def test_verdicts_invariant_under_the_symmetries(s, t, perm_seed, swap):
    """X -> s X (linear: alpha unchanged, objectives and rho times s^2), translations (nu-SVC
    linear and rbf; one-class rbf only: the origin is part of its linear problem),
    permutations and label swaps leave every verdict as it was."""
    for kernel in ("linear", "rbf"):
        X, y, a, b = _reference(kernel)
        kern = make_kernel(kernel, gamma=0.7)
        base = _verdicts(X, y, a, b, kern)
        assert base[0] and base[2] and not base[1]
        perm = np.random.default_rng(perm_seed).permutation(X.shape[0])
        Xt = X[perm] + t if kernel == "rbf" else s * X[perm] + t
        yt = -y[perm] if swap else y[perm]
        moved = _verdicts(Xt, yt, a[perm], b[perm], kern)
        assert moved[:2] == base[:2]
        if kernel == "rbf" or t == 0.0:
            assert moved[2] == base[2]
        if kernel == "linear":  # objectives scale by s^2, rho too
            c0 = certify_nu_svm(a, X, y, 0.4, kern)
            c1 = certify_nu_svm(a[perm], Xt, yt, 0.4, kern)
            assert c1.dual_objective == pytest.approx(s * s * c0.dual_objective, rel=1e-6)
            assert c1.margin == pytest.approx(s * s * c0.margin, rel=1e-6)


def test_oracle_verdict_under_scaling():
    X, y = _overlap(15, n=30, shift=2.0)
    base = nu_svm_dual(X, y, 0.3).solve()
    _optimal(base)
    for s in (1e-3, 1e3):
        scaled = nu_svm_dual(s * X + 7.0, y, 0.3).solve()
        _optimal(scaled)
        assert scaled.primal_objective == pytest.approx(s * s * base.primal_objective, rel=1e-7)
        assert scaled.rho == pytest.approx(s * s * base.rho, rel=1e-7)
        assert np.allclose(scaled.alpha, base.alpha, atol=1e-9 / X.shape[0])


# --- scikit-learn's NuSVC and OneClassSVM (LIBSVM), judged by the same judges ----------------

@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("nu", [0.25, 0.5])
def test_sklearn_nusvc_certified_and_equal(kernel, nu):
    svm = pytest.importorskip("sklearn.svm")
    X, y = _overlap(16, n=50, shift=2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours = nu_svm_dual(X, y, nu, kernel=kernel, gamma=0.5).solve()
    _optimal(ours)
    model = svm.NuSVC(nu=nu, kernel=kernel, gamma=0.5, tol=1e-12).fit(X, y)
    # LIBSVM returns y_i a_i / r with sum a_i = nu l: alpha = nu |coef| / sum |coef|
    coef = np.abs(model.dual_coef_.ravel())
    alpha = np.zeros(X.shape[0])
    alpha[model.support_] = nu * coef / coef.sum()
    kern = make_kernel(kernel, gamma=0.5)
    cert = certify_nu_svm(alpha, X, y, nu, kern)
    assert cert.meets(ORACLE_KKT, ORACLE_GAP), cert
    assert cert.primal_objective == pytest.approx(ours.primal_objective, rel=1e-7)
    # LIBSVM's decision function is f / rho (its calculate_rho and ours agree); classes_ is
    # [-1, 1], so it is positive for +1
    f = ours.decision_function(X) / ours.rho
    assert np.max(np.abs(model.decision_function(X) - f)) < 1e-6 * max(1.0, np.abs(f).max())


@pytest.mark.parametrize("nu", [0.1, 0.5])
def test_sklearn_one_class_certified_and_equal(nu):
    svm = pytest.importorskip("sklearn.svm")
    X = _cloud(17, n=40)
    ours = one_class_dual(X, nu, kernel="rbf", gamma=0.5).solve()
    _optimal(ours)
    model = svm.OneClassSVM(nu=nu, kernel="rbf", gamma=0.5, tol=1e-12).fit(X)
    alpha = np.zeros(X.shape[0])
    alpha[model.support_] = model.dual_coef_.ravel() / (nu * X.shape[0])  # LIBSVM: sum = nu l
    cert = certify_one_class(alpha, X, nu, make_kernel("rbf", gamma=0.5))
    assert cert.meets(ORACLE_KKT, ORACLE_GAP), cert
    assert cert.primal_objective == pytest.approx(ours.primal_objective, rel=1e-7)
    # LIBSVM's one-class decision function is nu l (g - rho)
    f = nu * X.shape[0] * ours.decision_function(X)
    assert np.max(np.abs(model.decision_function(X) - f)) < 1e-6 * max(1.0, np.abs(f).max())


def test_reduced_hull_judge_rejects_perturbations():
    P, Q = _cloud(18, n=15), _cloud(19, n=15) - 1.0
    sol = hull_distance(P, Q, mu=0.2).solve()
    assert sol.status == "optimal"
    cert = certify_reduced_hulls(P, Q, sol.weights_p, sol.weights_q, 0.2)
    assert cert.meets(1e-9)
    wp = sol.weights_p.copy()
    i, j = np.argmax(wp), np.argmin(wp)
    wp[i] -= 0.05
    wp[j] += 0.05
    assert not certify_reduced_hulls(P, Q, wp, sol.weights_q, 0.2).meets(1e-6)
    over = sol.weights_p * 1.0
    over[np.argmax(over)] += 1e-6
    assert not certify_reduced_hulls(P, Q, over, sol.weights_q, 0.2).meets(1e-6)


# --- a seeded campaign, inputs, kernels --------------------------------------------------------

@pytest.mark.parametrize("seed", range(10))
def test_seeded_campaign(seed):
    """Random problems (units from 1e-3 to 1e3, offsets to 1e4): every oracle certified, the
    ν-SVC equal to its reduced hulls, the ν-property on both problems."""
    rng = np.random.default_rng(1000 + seed)
    n, d = int(rng.integers(8, 50)), int(rng.integers(1, 5))
    X = rng.normal(size=(n, d)) * rng.choice([1e-3, 1.0, 1e3]) + rng.choice([0.0, 5.0, 1e4])
    y = np.where(rng.random(n) < rng.uniform(0.3, 0.7), 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    X[:, 0] += rng.uniform(0.0, 3.0) * y * X.std()
    nu = float(rng.uniform(0.02, 1.0)) * nu_max(y)
    kernel = ("linear", "rbf")[seed % 2]
    sol = nu_svm_dual(X, y, nu, kernel=kernel).solve()
    _optimal(sol)
    if not sol.hulls_meet:
        margins = y * sol.decision_function(X)
        assert np.mean(margins < sol.rho * (1 - 1e-7)) <= nu + 1e-12 <= np.mean(
            sol.alpha > 0) + 2e-12
    if kernel == "linear":
        hulls = hull_distance(X[y > 0], X[y < 0], mu=min(1.0, 2.0 / (nu * n))).solve()
        assert hulls.status == "optimal"
        assert np.linalg.norm(sol.w) == pytest.approx(0.5 * nu * hulls.distance, rel=1e-6,
                                                      abs=1e-9 * nu * np.ptp(X))
        _optimal(nu_svm_primal(X, y, nu).solve())
    oc = one_class_dual(X, nu, kernel=kernel).solve()
    _optimal(oc)


def test_inputs_not_modified_and_precomputed_kernel():
    X, y = _overlap(20, n=30, shift=2.0)
    X0, y0 = X.copy(), y.copy()
    rbf = nu_svm_dual(X, y, 0.3, kernel="rbf", gamma=0.4).solve()
    K = make_kernel("rbf", gamma=0.4)(X, X)
    pre = nu_svm_dual(K, y, 0.3, kernel="precomputed").solve()
    _optimal(pre)
    assert pre.primal_objective == pytest.approx(rbf.primal_objective, rel=1e-8)
    assert pre.rho == pytest.approx(rbf.rho, rel=1e-7)
    one_class_primal(X, 0.3).solve()
    assert np.array_equal(X, X0) and np.array_equal(y, y0)


def test_sparse_input_matches_dense():
    sparse = pytest.importorskip("scipy.sparse")
    X, y = _overlap(21, n=30, shift=2.0)
    X[np.abs(X - 3.0) < 0.5] = 0.0
    dense = nu_svm_dual(X, y, 0.3).solve()
    sp = nu_svm_dual(sparse.csr_matrix(X), y, 0.3).solve()
    _optimal(sp)
    assert sp.primal_objective == pytest.approx(dense.primal_objective, rel=1e-8)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_the_active_set_finish_reaches_the_oracles_optimum(kernel):
    """The oracles' active-set method, started from a feasible point far from the optimum,
    ends certified at the interior-point oracle's objective (ν-SVC and one-class)."""
    from maxmargin.formulations._face import face_active_set

    X, y = _overlap(22, n=30, shift=1.5)
    kern = make_kernel(kernel, gamma=0.5)
    rng = np.random.default_rng(0)
    ref = nu_svm_dual(X, y, 0.4, kernel=kern).solve()
    start = _feasible_nu_alpha(rng, y, 0.4)
    data = {"K": kern.gram(X)} if kernel == "rbf" else {"X": X - X.mean(axis=0)}
    groups = [np.flatnonzero(y > 0), np.flatnonzero(y < 0)]
    a = project_nu(face_active_set(start, y, 1 / 30, groups, [0.2, 0.2], **data), y, 0.4)
    cert = certify_nu_svm(a, X, y, 0.4, kern)
    assert cert.meets(ORACLE_KKT, ORACLE_GAP), cert
    assert cert.primal_objective == pytest.approx(ref.primal_objective, rel=1e-9)
    ones = np.ones(30)
    oc_ref = one_class_dual(X, 0.2, kernel=kern).solve()
    start = project_one_class(rng.random(30), 0.2)
    data = {"K": kern.gram(X)} if kernel == "rbf" else {"X": X - X.mean(axis=0),
                                                        "offset": X.mean(axis=0)}
    a = project_one_class(face_active_set(start, ones, 1 / (0.2 * 30), [np.arange(30)], [1.0],
                                          **data), 0.2)
    cert = certify_one_class(a, X, 0.2, kern)
    assert cert.meets(ORACLE_KKT, ORACLE_GAP), cert
    assert cert.primal_objective == pytest.approx(oc_ref.primal_objective, rel=1e-9)


# --- the face solves: scale, near nu_max, a Gram matrix near a constant ----------------------

@pytest.mark.parametrize("scale", [1.0, 1e4])
def test_the_active_set_is_scale_invariant_near_nu_max(scale):
    """``alpha`` does not change under ``X -> s X``: the face solves of the active-set finish
    keep the group sums at data far from unit scale (the KKT system normalised), on a class
    whose weights all sit near their bound (``nu`` a hair below ``nu_max``, duplicated rows)."""
    from maxmargin.formulations._face import face_active_set

    rng = np.random.default_rng(3)
    y = np.where(np.arange(40) < 8, 1.0, -1.0)
    X = rng.normal(size=(40, 3))
    X[:, 0] += y
    X, y = np.vstack([X, X[:10]]), np.concatenate([y, y[:10]])
    nu = nu_max(y) * (1.0 - 1e-8)
    groups = [np.flatnonzero(y > 0), np.flatnonzero(y < 0)]
    start = project_nu(rng.random(50) / 50, y, nu)
    Xs = scale * X
    a = project_nu(face_active_set(start, y, 1 / 50, groups, [nu / 2, nu / 2],
                                   X=Xs - Xs.mean(axis=0)), y, nu)
    assert certify_nu_svm(a, Xs, y, nu, LINEAR).meets(ORACLE_KKT, ORACLE_GAP)


def test_primal_near_nu_max_with_duplicates_at_large_scale():
    """Issue 41: random_case(23, 352) -- 80 x 4, duplicated rows, scale 9.2e3, ``nu`` within
    1.4e-8 of ``nu_max`` -- the primal's ``alpha`` (the margin duals) finished on its face is
    certified, at the dual oracle's objective."""
    from maxmargin.verification.campaign import random_case

    case = random_case(23, 352)
    assert case.problem == "nu_svc" and case.kernel == "linear"
    primal = nu_svm_primal(case.X, case.y, case.nu).solve()
    _optimal(primal)
    dual = nu_svm_dual(case.X, case.y, case.nu).solve()
    _optimal(dual)
    assert primal.primal_objective == pytest.approx(dual.primal_objective, rel=1e-9)


@pytest.mark.parametrize("problem", ["nu_svc", "one_class"])
def test_the_centred_gram_has_the_objective_on_the_feasible_set(problem):
    """The face solves' Gram matrix (ν-SVC ``P K P``, one-class ``K`` less its mean entry)
    gives ``v^T K v`` on every feasible point (one-class: less a constant), and removes the
    near-constant part of an RBF kernel of small ``gamma``."""
    from maxmargin.formulations.nu import _centred_gram

    rng = np.random.default_rng(5)
    X = rng.normal(size=(20, 2)) * 30.0
    y = np.where(np.arange(20) % 3 == 0, -1.0, 1.0)
    K = make_kernel("rbf", gamma=1e-6).gram(X)
    Kc = _centred_gram(K, problem)
    assert np.max(np.abs(Kc)) < 1e-2 * np.max(np.abs(K))
    for _ in range(5):
        if problem == "nu_svc":
            a = project_nu(rng.random(20) / 20, y, 0.4)
            v, const = a * y, 0.0
        else:
            a = project_one_class(rng.random(20) / 20, 0.4)
            v, const = a, float(K.mean())
        assert v @ Kc @ v + const == pytest.approx(v @ K @ v, rel=1e-12, abs=1e-15)


def test_one_class_near_nu_max_with_near_duplicates():
    """Issue 41: random_case(23, 611) -- one-class, RBF gamma 1.7e3, 100 x 24 with rows whose
    kernel value is 1 - 1.8e-9, ``nu`` 1.9e-8 below 1: the bounds sit 1.9e-8 above ``1 / l``,
    62 weights start free and leave the face one a step; the active-set finish, which stopped
    at 60 steps, is certified, at the objective of a plain CVXPY solve of the dual."""
    from maxmargin.verification.campaign import random_case

    case = random_case(23, 611)
    assert case.problem == "one_class" and case.kernel == "rbf"
    sol = one_class_dual(case.X, case.nu, kernel="rbf", **case.kernel_params).solve()
    _optimal(sol)
    K = make_kernel("rbf", **case.kernel_params).gram(case.X)
    a = cp.Variable(case.X.shape[0])
    problem = cp.Problem(cp.Minimize(0.5 * cp.quad_form(a, cp.psd_wrap(K))),
                         [a >= 0, a <= 1 / (case.nu * case.X.shape[0]), cp.sum(a) == 1])
    problem.solve(solver="CLARABEL")
    assert sol.dual_objective == pytest.approx(-problem.value, rel=1e-9)


def test_rbf_of_tiny_gamma_near_nu_max_certified():
    """Issue 41: random_case(5, 644) -- ν-SVC, 72 x 1, RBF gamma 1e-10 (a Gram matrix within
    1e-6 of all ones), ``nu`` 2.5e-9 below ``nu_max``: the face solves on the centred Gram
    matrix keep its digits, and the answer is certified (it was "inaccurate" on every
    attempt)."""
    from maxmargin.verification.campaign import random_case

    case = random_case(5, 644)
    assert case.problem == "nu_svc" and case.kernel == "rbf"
    assert case.nu < nu_max(case.y) <= case.nu * (1.0 + 1e-7)
    sol = nu_svm_dual(case.X, case.y, case.nu, kernel="rbf", **case.kernel_params).solve()
    _optimal(sol)
    assert not sol.hulls_meet and sol.rho > 0.0


def test_the_primal_at_nu_a_hair_below_nu_max_finds_the_face_with_one_free_weight():
    """Campaign case s74/i53 (linear, 6 negatives of 173, nu = nu_max (1 - 2.1e-8)): the
    negatives' weights must sum to nu / 2, 2e-8 below their bounds' sum, so one of them is free
    and five sit on the bound. The interior point spreads the deficit over all six; snapped,
    the best candidate has all six on the bound (a hair off the feasible set) and the
    active-set method from it keeps that sum. Started from the other candidates it finds the
    face the dual oracle finds."""
    case = random_case(74, 53)
    neg = case.y < 0
    assert neg.sum() == 6 and 0.0 < 1.0 - case.nu / nu_max(case.y) < 1e-7
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        primal = nu_svm_primal(case.X, case.y, case.nu).solve()
        dual = nu_svm_dual(case.X, case.y, case.nu).solve()
    assert primal.status == dual.status == "optimal"
    U = 1.0 / case.y.shape[0]
    assert np.sum(primal.alpha[neg] == U) == 5
    assert primal.rho == pytest.approx(dual.rho, rel=1e-8)
    assert primal.dual_objective == pytest.approx(dual.dual_objective, rel=1e-9)
