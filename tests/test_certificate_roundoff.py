"""The gap's round-off discount (issue 41): answers whose ``P - D`` lies below the float64
round-off of evaluating ``P`` and ``D`` are not refuted by it, and it lets no wrong answer pass,
at any scale or origin."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from maxmargin.algorithms import smo
from maxmargin.certificate import certify_svm, objective_roundoff, relative_gap, roundoff_gamma
from maxmargin.certificate_nu import certify_nu_svm, project_nu
from maxmargin.formulations import svm_dual
from maxmargin.formulations.nu import nu_svm_dual
from maxmargin.kernels import make_kernel
from maxmargin.tolerances import ORACLE_GAP, ORACLE_KKT

#: The perturbed answers' objective, relative to the optimum's.
OFF = 1e-6


def _clouds(seed: int, n: int = 60, d: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    return rng.normal(size=(n, d)) + 1.2 * y[:, None], y


def _off_by(alpha: np.ndarray, start: np.ndarray, dual: object, target: float) -> np.ndarray:
    """``(1 - t) alpha + t start`` (feasible for a convex feasible set) with ``dual`` lower than
    ``dual(alpha)`` by ``target`` relative, ``t`` by bisection."""
    best = dual(alpha)
    lo, hi = 0.0, 1.0
    for _ in range(100):
        t = 0.5 * (lo + hi)
        if (best - dual((1 - t) * alpha + t * start)) / abs(best) < target:
            lo = t
        else:
            hi = t
    return (1 - hi) * alpha + hi * start


def test_relative_gap_discounts_the_roundoff_only() -> None:
    assert relative_gap(2.0, 1.0, 0.5) == pytest.approx(0.25)
    assert relative_gap(2.0, 1.0, 3.0) == 0.0
    assert relative_gap(2.0, 3.0, 0.5) == -0.5  # weak duality broken: kept as it is
    assert relative_gap(float("inf"), 1.0, 1.0) == float("inf")


def test_roundoff_gamma_is_highams_bound_on_a_float64_sum() -> None:
    """``gamma_N`` counts ``n + nnz + width + 8`` terms, and bounds the error of an actual
    float64 sum of ``N`` terms of mixed sign against the exact (rational) sum."""
    from fractions import Fraction

    u = np.finfo(np.float64).eps / 2
    alpha = np.array([0.0, 0.5, 0.0, 2.0])
    N = 4 + 2 + 3 + 8
    assert roundoff_gamma(alpha, width=3) == N * u / (1 - N * u)
    assert roundoff_gamma(terms=10) == 18 * u / (1 - 18 * u)
    rng = np.random.default_rng(0)
    for _ in range(200):
        terms = rng.normal(size=50) * 10.0 ** rng.integers(-8, 8, size=50)
        computed = 0.0
        for t in terms:
            computed += float(t)
        exact = sum(Fraction(float(t)) for t in terms)
        size = float(np.sum(np.abs(terms)))
        assert abs(Fraction(computed) - exact) <= roundoff_gamma(terms=50 - 8) * size


def test_the_roundoff_counts_only_the_hinges_that_can_be_positive() -> None:
    alpha = np.array([0.5, 0.5, 0.0])
    everything = objective_roundoff(alpha, 1.0, 1.0, 0.0)
    two = objective_roundoff(alpha, 1.0, 1.0, 0.0, hinges=np.array([0.3, 0.0, -0.5]))
    assert two == pytest.approx(everything * (1.0 + 2.0) / (1.0 + 3.0))


@pytest.mark.parametrize("kernel_name", ["linear", "rbf"])
def test_c_svc_answer_off_by_1e_6_fails_at_every_scale_and_origin(kernel_name: str) -> None:
    X, y = _clouds(0)
    C = 1.0
    params = {} if kernel_name == "linear" else {"gamma": 0.3}
    ref = svm_dual(X, y, C, make_kernel(kernel_name, **params)).solve()
    assert ref.status == "optimal"

    def dual(a: np.ndarray) -> float:
        return certify_svm(a, X, y, C, make_kernel(kernel_name, **params)).dual_objective

    bad = _off_by(np.asarray(ref.alpha), np.zeros_like(y), dual, OFF)
    offsets = (0.0, 10.0, 1e3) if kernel_name == "linear" else (0.0, 10.0)
    for s in (1e-3, 1.0, 1e3):
        for offset in offsets:
            Xs = s * (X + offset)
            kern = make_kernel(kernel_name, **({} if not params else {"gamma": 0.3 / s**2}))
            box = C / s**2 if kernel_name == "linear" else C  # rbf: the same Gram matrix
            unit = s**2 if kernel_name == "linear" else 1.0
            good = certify_svm(np.asarray(ref.alpha) / unit, Xs, y, box, kern)
            wrong = certify_svm(bad / unit, Xs, y, box, kern)
            assert good.meets(ORACLE_KKT, ORACLE_GAP), (s, offset, good.summary())
            assert wrong.gap > 0.5 * OFF and not wrong.meets(ORACLE_KKT, ORACLE_GAP), (
                s, offset, wrong.summary())


@pytest.mark.parametrize("kernel_name", ["linear", "rbf"])
def test_nu_svc_answer_off_by_1e_6_fails_at_every_scale_and_origin(kernel_name: str) -> None:
    X, y = _clouds(1)
    nu = 0.4
    params = {} if kernel_name == "linear" else {"gamma": 0.3}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = nu_svm_dual(X, y, nu, kernel=kernel_name, **params).solve()
    assert ref.status == "optimal"
    start = project_nu(np.full(y.shape, 1.0 / y.shape[0]), y, nu)

    def dual(a: np.ndarray) -> float:
        return certify_nu_svm(a, X, y, nu, make_kernel(kernel_name, **params)).dual_objective

    bad = _off_by(np.asarray(ref.alpha), start, dual, OFF)
    offsets = (0.0, 10.0, 1e3) if kernel_name == "linear" else (0.0, 10.0)
    for s in (1e-3, 1.0, 1e3):
        for offset in offsets:
            Xs = s * (X + offset)
            kern = make_kernel(kernel_name, **({} if not params else {"gamma": 0.3 / s**2}))
            good = certify_nu_svm(ref.alpha, Xs, y, nu, kern)
            wrong = certify_nu_svm(bad, Xs, y, nu, kern)
            assert good.meets(ORACLE_KKT, ORACLE_GAP), (s, offset, good.summary())
            assert wrong.gap > 0.5 * OFF and not wrong.meets(ORACLE_KKT, ORACLE_GAP), (
                s, offset, wrong.summary())


@pytest.mark.parametrize(("seed", "index"), [(23, 722), (5, 232)])
def test_exact_nu_optimum_below_the_objectives_roundoff_is_optimal(seed: int, index: int
                                                                    ) -> None:
    """Campaign cases (RBF, collinear points, ``rho`` 6e-12 and 7e-13): the exact solution's
    ``P - D`` (1.8e-19, 5e-22 on one machine; 0 on another, whose BLAS rounds otherwise) can
    be above ``1e-7 |P|`` yet is below the float64 round-off of ``P`` and ``D``. The oracle's
    answer is the exact face optimum (checked in 50-digit arithmetic, CHANGELOG) and is
    "optimal" whichever way the sums round."""
    from maxmargin.verification.campaign import random_case

    case = random_case(seed, index)
    sol = nu_svm_dual(case.X, case.y, case.nu, kernel=case.kernel,
                      **case.kernel_params).solve()
    assert sol.status == "optimal" and not sol.hulls_meet
    cert = sol.certificate
    assert cert.gap == 0.0 and cert.kkt_violation < ORACLE_KKT
    bound = objective_roundoff(sol.alpha, 1.0 / case.y.size, cert.radius**2, sol.b,
                               offset=sol.rho, width=case.X.shape[1])
    assert abs(cert.primal_objective - cert.dual_objective) <= bound


def test_the_c_svc_gap_takes_no_roundoff_discount() -> None:
    """At a large C the worst-case round-off bound is a sizeable fraction of ``|P|`` (here
    above 1e-6) and would excuse a real gap: the C-SVC's gap is ``(P - D) / |P|`` as
    computed."""
    rng = np.random.default_rng(0)
    n, d, C = 2000, 20, 100.0
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    alpha = smo(X, y, C=C, kernel="linear").alpha
    cert = certify_svm(alpha, X, y, C, make_kernel("linear"))
    bound = objective_roundoff(alpha, C, float(np.max(np.sum(X * X, axis=1))), cert.b, width=d)
    assert bound > 1e-6 * abs(cert.primal_objective)
    assert cert.gap == relative_gap(cert.primal_objective, cert.dual_objective)
