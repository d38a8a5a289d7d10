"""The float64 resolution of ``m - M`` (issue 41): a tolerance at or below it is never met, so
rounding luck does not decide a verdict, and every copy of such a problem (permuted, relabelled,
translated, rescaled) gets the same one: "inaccurate", at the optimum, with the reason."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from maxmargin.algorithms import dcd_svc, smo
from maxmargin.certificate import Certificate, certify_svm, kkt_roundoff
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.kernels import make_kernel


def _mixed_scales(seed: int, n: int = 8) -> tuple[np.ndarray, np.ndarray, float]:
    """Features of spreads 1, 3e4 and 6e-3, ``C = 4.5e5``: ``C max K ~ 1e15``, the labels the
    narrow feature's signs, so that the optimal ``alpha`` (~1e5) times ``K`` (~1e9) makes
    the sums ``g_i`` some 1e15 times the violations they must show."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * np.array([1.0, 3e4, 6e-3])
    y = np.where(X[:, 2] > 0.0, 1.0, -1.0)
    return X, y, 4.5e5


def _copies(X: np.ndarray, y: np.ndarray, C: float):
    rng = np.random.default_rng(7)
    order = rng.permutation(y.size)
    yield "as is", X, y, C
    yield "permuted", X[order], y[order], C
    yield "relabelled", X, -y, C
    yield "translated", X + np.array([2.9e6, -1.6e6, 1.5e6]), y, C
    yield "rescaled", X * 1e3, y, C / 1e6


def test_meets_refuses_a_tolerance_below_the_resolution() -> None:
    cert = Certificate(0.0, 0.0, 1.0, 1.0, 0.0, 0.0, roundoff=1e-3)
    assert not cert.meets(1e-3) and cert.unresolved(1e-3) and cert.settled(1e-3)
    assert cert.meets(2e-3) and not cert.unresolved(2e-3) and cert.final(2e-3)
    worse = Certificate(5e-3, 0.0, 1.0, 1.0, 0.0, 0.0, roundoff=1e-3)
    assert not worse.settled(1e-3) and not worse.final(1e-3)
    assert "resolves it to" in worse.summary() or worse.kkt_violation > worse.roundoff


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("kernel_name", ["linear", "rbf", "poly"])
def test_roundoff_bounds_the_error_of_g(seed: int, kernel_name: str) -> None:
    """The error of the float64 ``g`` (against an 80-bit-or-better evaluation of the same
    kernel values) is below half the resolution, for alphas of any size, near and far from the
    origin."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 4)) * np.array([1.0, 1e3, 1e-2, 10.0]) + 50.0 * seed
    y = np.where(rng.random(40) < 0.5, 1.0, -1.0)
    alpha = rng.random(40) * 10.0 ** rng.uniform(0, 6, size=40)
    kernel = make_kernel(kernel_name, gamma=1e-6, degree=2, coef0=1.0)
    cert = certify_svm(alpha, X, y, 1e7, kernel)
    Xc = X - X.mean(axis=0) if kernel_name == "linear" else X
    K = kernel.gram(Xc).astype(np.longdouble)
    exact = K @ (alpha * y).astype(np.longdouble)
    g = kernel.gram(Xc) @ (alpha * y)
    assert float(np.max(np.abs(g - exact))) <= 0.5 * cert.roundoff
    assert cert.roundoff > 0.0


@pytest.mark.parametrize("seed", [0, 1])
def test_resolution_is_free_of_units_origin_and_order(seed: int) -> None:
    X, y, C = _mixed_scales(seed)
    alpha = np.random.default_rng(seed).random(y.size) * C
    base = kkt_roundoff(alpha, X, make_kernel("linear"))
    order = np.random.default_rng(3).permutation(y.size)
    for other in (kkt_roundoff(alpha[order], X[order], make_kernel("linear")),
                  kkt_roundoff(alpha / 1e6, X * 1e3, make_kernel("linear")),
                  kkt_roundoff(alpha, X + 1e6, make_kernel("linear"))):
        assert other == pytest.approx(base, rel=1e-6)


@pytest.mark.parametrize("solver", ["smo", "dcd_svc"])
@pytest.mark.parametrize("seed", [0, 3])
def test_unresolvable_tolerance_gives_one_verdict_for_every_copy(solver: str, seed: int
                                                                 ) -> None:
    X, y, C = _mixed_scales(seed)
    duals = []
    for name, Xc, yc, Cc in _copies(X, y, C):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if solver == "smo":
                sol = smo(Xc, yc, C=Cc, kernel="linear", tol=1e-3)
            else:
                sol = dcd_svc(Xc, yc, C=Cc, tol=1e-3)
        cert = sol.certificate
        assert sol.status == "inaccurate", (name, sol.message)
        assert cert.unresolved(1e-3) and cert.settled(1e-3), (name, cert)
        assert "resolution" in sol.message, name
        assert any(issubclass(w.category, ConvergenceWarning)
                   and "resolution" in str(w.message) for w in caught), name
        scale = 1e-6 if name == "rescaled" else 1.0  # objectives scale like 1 / s^2
        duals.append(cert.dual_objective / scale)
    # the same optimum on every copy (the objective is well resolved where m - M is not; the
    # translated copy holds the narrow feature to 5e-8 of its spread only)
    assert max(duals) - min(duals) <= 1e-7 * max(duals)


def test_a_resolvable_tolerance_is_still_met() -> None:
    """The resolution takes nothing from ordinary problems: the same data at ``C = 1e-3`` (``C
    max K ~ 1e6`` still) are certified at the default tol, by both solvers."""
    X, y, _ = _mixed_scales(0)
    for sol in (smo(X, y, C=1e-3, kernel="linear"), dcd_svc(X, y, C=1e-3)):
        assert sol.status == "optimal", sol.message
        assert sol.certificate.roundoff < 1e-6


def test_verify_judges_an_unresolvable_tolerance_as_the_right_verdict() -> None:
    """``maxmargin verify`` on such a case: ``smo``'s "inaccurate" passes (the verdict the
    certificate's resolution calls for), weak duality against the oracle still applied."""
    from maxmargin.verification.case import Case
    from maxmargin.verification.suite import run_suite

    X, y, C = _mixed_scales(0)
    case = Case("resolution_n8", "scale", X, y, C, methods=("smo", "smo/tight", "dcd_svc"),
                quick=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        run = run_suite("quick", cases=[case], progress=None)
    rows = [r for r in run.rows if r.method != "oracle"]
    assert rows and all(r.status == "inaccurate" and r.passed for r in rows), [
        (r.method, r.status, r.reasons) for r in rows]


def test_certify_says_unresolved_where_float64_cannot_tell() -> None:
    """``maxmargin.certify_dual`` on ``smo``'s settled answer: neither "optimal" nor "not
    optimal" at a tolerance below the resolution; "optimal" above it."""
    from maxmargin import certify_dual

    X, y, C = _mixed_scales(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sol = smo(X, y, C=C, kernel="linear")
    below = certify_dual(sol.alpha, sol.b, X, y, C, kernel="linear", tol=1e-3)
    assert below.verdict == "unresolved" and not below.optimal
    above = certify_dual(sol.alpha, sol.b, X, y, C, kernel="linear",
                         tol=4.0 * sol.certificate.roundoff)
    assert above.verdict == "optimal", above.summary()
