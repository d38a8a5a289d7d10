"""MDM (pairwise) nearest points against hand derivations, the Clarabel oracles and Gilbert."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from fixtures import LI_HANG, TWO_POINTS, XOR_POLY, XOR_X, XOR_Y
from fixtures_nearest_point import (
    assert_distance_matches_oracle,
    assert_hull_fixtures,
    assert_svm_matches,
    gaussian_pair,
    labelled,
    oracle_hulls,
    quiet,
    rbf_disc_case,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from maxmargin.algorithms.gilbert import gilbert_hulls, gilbert_svm
from maxmargin.algorithms.mdm import mdm_hulls
from maxmargin.algorithms.wolfe import wolfe_hulls
from maxmargin.certificate import certify_hulls
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.formulations.primal import hard_margin_primal


def test_hull_fixtures() -> None:
    assert_hull_fixtures(mdm_hulls, "mdm", tol=1e-8)


@pytest.mark.parametrize("ex", [TWO_POINTS, LI_HANG], ids=lambda e: e.name)
def test_svm_fixtures(ex) -> None:  # noqa: ANN001
    sol = gilbert_svm(ex.X, ex.y, method="mdm")
    assert_svm_matches(sol, ex)
    assert sol.method == "mdm"
    assert 1.0 / np.linalg.norm(sol.w) == pytest.approx(ex.margin, rel=1e-12)


def test_svm_xor() -> None:
    assert gilbert_svm(XOR_X, XOR_Y, method="mdm").status == "infeasible"
    sol = gilbert_svm(XOR_POLY.X, XOR_POLY.y, method="mdm", kernel="poly", **XOR_POLY.kernel_params)
    assert_svm_matches(sol, XOR_POLY)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hulls_against_oracle(seed: int) -> None:
    P, Q = gaussian_pair(40, 4, 5.0, seed)
    ora = oracle_hulls(P, Q)
    sol = mdm_hulls(P, Q)
    assert sol.status == "optimal" and sol.gap <= 1e-8
    assert sol.distance == pytest.approx(ora.distance, rel=1e-7)
    d, d_ora = sol.p - sol.q, ora.p - ora.q
    assert np.linalg.norm(d - d_ora) <= 1e-6 * np.linalg.norm(d_ora)
    for w in (sol.weights_p, sol.weights_q):
        assert w.min() >= 0 and w.sum() == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    n=st.integers(1, 7),
    m=st.integers(1, 7),
    d=st.integers(1, 3),
    shift=st.floats(0.0, 5.0),
    shared=st.booleans(),
)
def test_distance_property_against_oracle(
    seed: int, n: int, m: int, d: int, shift: float, shared: bool
) -> None:
    assert_distance_matches_oracle(mdm_hulls, seed, n, m, d, shift, shared)


def test_kernel_infeasible() -> None:
    # poly of degree 1 is linear in disguise: XOR stays inseparable, detected through K
    sol = gilbert_svm(XOR_X, XOR_Y, method="mdm", kernel="poly", degree=1, gamma=1.0, coef0=0.5)
    assert sol.status == "infeasible" and sol.w is None and np.all(np.isnan(sol.alpha))


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_svm_against_hard_margin_oracle(seed: int) -> None:
    X, y = labelled(*gaussian_pair(30, 4, 5.0, seed))
    ora = hard_margin_primal(X, y).solve()
    sol = gilbert_svm(X, y, method="mdm")
    assert sol.status == "optimal" and ora.status == "optimal"
    w_scale = np.linalg.norm(ora.w)
    assert np.linalg.norm(sol.w - ora.w) <= 1e-6 * w_scale
    assert sol.b == pytest.approx(ora.b, abs=1e-6 * (1 + abs(ora.b)))
    np.testing.assert_allclose(sol.alpha, ora.alpha, atol=1e-6 * ora.alpha.max())
    assert sol.dual_objective == pytest.approx(ora.dual_objective, rel=1e-7)
    yf = y * sol.decision_function(X)
    assert yf.min() == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("store_gram", [True, False], ids=["gram", "columns"])
def test_kernel_svm_against_dual_oracle(store_gram: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    X, y, ora = rbf_disc_case(40, store_gram, monkeypatch)
    sol = gilbert_svm(X, y, method="mdm", kernel="rbf", gamma=2.0)
    assert sol.status == "optimal" and sol.w is None
    assert sol.dual_objective == pytest.approx(ora.dual_objective, rel=1e-6)
    f_ora = ora.decision_function(X)
    np.testing.assert_allclose(sol.decision_function(X), f_ora, atol=1e-5 * np.abs(f_ora).max())


def test_mdm_reaches_tolerance_where_gilbert_cannot() -> None:
    P, Q = gaussian_pair(100, 10, 5.0, 8)
    rho = oracle_hulls(P, Q).distance
    mdm = mdm_hulls(P, Q, tol=1e-8, max_iter=20_000)
    with pytest.warns(ConvergenceWarning):
        gil = gilbert_hulls(P, Q, tol=1e-8, max_iter=20_000, finish=False)
    assert mdm.status == "optimal" and mdm.gap <= 1e-8
    assert gil.status == "max_iter" and gil.gap > 100 * mdm.gap
    assert abs(mdm.distance - rho) < abs(gil.distance - rho)
    assert gil.distance >= rho * (1 - 1e-9)  # Gilbert's iterate is feasible: an upper bound


@pytest.mark.parametrize("solve", [mdm_hulls, gilbert_hulls], ids=["mdm", "gilbert"])
@pytest.mark.parametrize("mu", [1.0, 0.1])
def test_a_capped_run_is_finished_by_wolfe(solve, mu: float) -> None:  # noqa: ANN001
    """A run stopped at ``max_iter`` (here after 5 steps: as on elongated hulls, where MDM's
    linear rate crawls for 10^6 steps) is solved again by Wolfe's method: "optimal", no
    warning, the message says so, the distance the oracle's (convex hulls) or Wolfe's own
    (reduced hulls), the same on a permuted copy; ``finish=False`` keeps the capped run."""
    P, Q = gaussian_pair(40, 3, 2.0, 4)
    P[:, 2] *= 40.0  # elongated along one axis
    Q[:, 2] *= 40.0
    ref = oracle_hulls(P, Q).distance if mu >= 1.0 else wolfe_hulls(P, Q, mu=mu).distance
    rng = np.random.default_rng(0)
    for A, B in ((P, Q), (P[rng.permutation(40)], Q[rng.permutation(40)])):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            sol = solve(A, B, tol=1e-8, max_iter=5, mu=mu)
        assert sol.status == "optimal" and "finished by Wolfe's method" in sol.message
        assert sol.method == solve.__name__.split("_")[0]
        assert sol.certificate.meets(1e-6)
        assert sol.distance == pytest.approx(ref, rel=1e-6)
    with pytest.warns(ConvergenceWarning, match="max_iter=5"):
        raw = solve(P, Q, tol=1e-8, max_iter=5, mu=mu, finish=False)
    assert raw.status == "max_iter" and raw.iterations == 5


def test_max_iter_warns_and_returns() -> None:
    P, Q = gaussian_pair(50, 10, 4.0, 0)
    with pytest.warns(ConvergenceWarning, match="mdm: max_iter=2"):
        sol = mdm_hulls(P, Q, tol=1e-12, max_iter=2, finish=False)
    assert sol.status == "max_iter" and sol.iterations == 2 and sol.gap > 1e-12
    assert sol.weights_p.sum() == pytest.approx(1.0) and sol.weights_q.min() >= 0
    with pytest.warns(ConvergenceWarning, match="mdm: max_iter=2"):
        svm = gilbert_svm(*labelled(P, Q), method="mdm", max_iter=2, finish=False)
    assert svm.status == "max_iter"


@pytest.mark.parametrize(
    ("P", "Q", "kwargs", "match"),
    [
        ([[np.inf, 0.0]], [[1.0, 0.0]], {}, "`P` must be finite"),
        ([[0.0, 0.0]], [[1.0, 0.0]], {"tol": -1.0}, "`tol` must be positive"),
        ([[0.0, 0.0]], [[1.0, 0.0]], {"max_iter": 1.5}, "`max_iter` must be an integer"),
        ([[0.0, 0.0]], [[1.0]], {}, "`P` and `Q` must have the same dimension"),
    ],
)
def test_bad_input(P, Q, kwargs, match) -> None:  # noqa: ANN001
    with pytest.raises(ValueError, match=match):
        mdm_hulls(P, Q, **kwargs)


def test_inputs_unchanged() -> None:
    P, Q = gaussian_pair(10, 2, 4.0, 1)
    copies = (P.copy(), Q.copy())
    quiet(mdm_hulls, P, Q)
    np.testing.assert_array_equal(P, copies[0])
    np.testing.assert_array_equal(Q, copies[1])


@pytest.mark.parametrize("method", [gilbert_hulls, mdm_hulls, wolfe_hulls])
@pytest.mark.parametrize("seed", [0, 1, 5])
def test_intersecting_hulls_are_certified_by_the_distance_of_the_weights(method, seed) -> None:
    """Overlapping clouds: the loops stop at ``||z||`` within their zero tolerance and report
    distance 0. The certificate's gap and KKT terms are relative to ``||z||^2`` (1e5 to 1e8
    for the raw weights, however small ``||z||``); it judges by its own float64 ``||z||``
    instead, the same in either order of the sets."""
    rng = np.random.default_rng(seed)
    P, Q = rng.normal(size=(30, 3)), rng.normal(size=(25, 3)) + 0.3
    for a, b in ((P, Q), (Q, P)):
        sol = method(a, b)
        raw = certify_hulls(a, b, sol.weights_p, sol.weights_q)
        assert sol.status == "optimal" and sol.distance == 0.0
        assert sol.certificate.gap == 0.0 and sol.certificate.kkt_violation == 0.0
        assert sol.certificate.meets(1e-7)
        assert sol.certificate.distance == raw.distance <= 1e-5
