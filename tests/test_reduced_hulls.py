"""Gilbert, MDM and Wolfe on reduced convex hulls ``RCH(mu)``, and ``gilbert_svm(nu=...)``,
against independent answers: the CVXPY oracles ``hull_distance(P, Q, mu=...)`` and
``nu_svm_dual``, ``nu_smo`` (LIBSVM's ``Solver_NU``), the judge ``certify_reduced_hulls`` and a
brute-force sort for the linear-minimisation step.

Run alone: ``python -m pytest tests/test_reduced_hulls.py -q -p no:cacheprovider``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maxmargin.algorithms import gilbert_hulls, gilbert_svm, mdm_hulls, nu_smo, wolfe_hulls
from maxmargin.algorithms._nearest_point import smallest_mass
from maxmargin.certificate_nu import certify_reduced_hulls, nu_max, reduced_support
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.formulations import hull_distance, nu_svm_dual
from maxmargin.tolerances import HULL_CERT_FACTOR

SETTINGS = settings(max_examples=12, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
#: Each method at the tolerance it reaches on these small problems, and the relative distance
#: error that tolerance allows: ``(1 - tol) ||z|| <= distance <= ||z||``.
HULL_METHODS = {"gilbert": (gilbert_hulls, 1e-6), "mdm": (mdm_hulls, 1e-9),
                "wolfe": (wolfe_hulls, 1e-9)}


def _pair(seed: int, n: int, m: int, d: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    P = rng.standard_normal((n, d)) + 0.5
    Q = rng.standard_normal((m, d)) + 0.5
    Q[:, 0] += shift
    return P, Q


def _mu(fraction: float, n: int, m: int) -> float:
    """A bound between the smallest feasible ``1 / min(n, m)`` and 1."""
    low = 1.0 / min(n, m)
    return low + fraction * (1.0 - low)


def _check_answer(sol, P: np.ndarray, Q: np.ndarray, mu: float, tol: float) -> None:  # noqa: ANN001
    """Weights in ``RCH(mu)`` exactly; ``"optimal"`` only when the judge certifies it."""
    for w in (sol.weights_p, sol.weights_q):
        assert np.all(w >= 0.0) and np.all(w <= mu)
        assert abs(w.sum() - 1.0) <= 1e-12
    cert = certify_reduced_hulls(P, Q, sol.weights_p, sol.weights_q, mu)
    if sol.status == "optimal" and sol.distance > 0.0:
        assert cert.meets(HULL_CERT_FACTOR * tol), cert.summary()
    np.testing.assert_allclose(sol.p, P.T @ sol.weights_p, rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", sorted(HULL_METHODS))
@SETTINGS
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(3, 25), m=st.integers(3, 25),
       d=st.integers(1, 4), shift=st.sampled_from([0.0, 1.5, 4.0]),
       fraction=st.sampled_from([0.0, 0.1, 0.37, 0.5, 0.9]))
def test_reduced_hull_distance_matches_the_oracle(method: str, seed: int, n: int, m: int, d: int,
                                                  shift: float, fraction: float) -> None:
    """Random pairs (overlapping and apart) at several ``mu``: the distance of the CVXPY oracle
    to the tolerance's relative accuracy (0 where the oracle proves the reduced hulls meet),
    weights in the reduced hulls, status certified."""
    solver, tol = HULL_METHODS[method]
    P, Q = _pair(seed, n, m, d, shift)
    mu = _mu(fraction, n, m)
    oracle = hull_distance(P, Q, mu=mu).solve()
    assert oracle.status == "optimal", oracle.message
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = solver(P, Q, tol=tol, max_iter=1_000_000, mu=mu)
    assert sol.status == "optimal", sol.message
    _check_answer(sol, P, Q, mu, tol)
    scale = max(1.0, float(np.abs(np.vstack([P, Q])).max()))
    if oracle.distance == 0.0:
        assert sol.distance <= 1e-6 * scale
    else:
        assert abs(sol.distance - oracle.distance) <= 2.0 * tol * oracle.distance + 1e-9 * scale


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mu", [0.05, 0.2, 0.5, 0.75])
def test_seeded_reduced_hulls_all_methods_agree(seed: int, mu: float) -> None:
    """Seeded campaign, larger sets: the three methods and the oracle agree to 1e-6 relative."""
    P, Q = _pair(1000 + seed, 40, 30, 3, [0.5, 2.0, 5.0][seed % 3])
    oracle = hull_distance(P, Q, mu=mu).solve()
    for name, (solver, tol) in HULL_METHODS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sol = solver(P, Q, tol=tol, max_iter=1_000_000, mu=mu)
        assert sol.status == "optimal", (name, sol.message)
        _check_answer(sol, P, Q, mu, tol)
        assert abs(sol.distance - oracle.distance) <= 2e-6 * max(oracle.distance, 1e-3), name


@pytest.mark.parametrize("mu", [0.01, 0.07, 0.3])
@pytest.mark.parametrize("d", [12, 30])
def test_wolfe_large_corral_matches_the_oracle(mu: float, d: int) -> None:
    """Close reduced hulls in ``d`` dimensions: Wolfe's corral holds up to ``d + 2`` vertices
    (more than its first room of 16, so its sparse vertex arrays grow) of up to ``floor(1 / mu)
    + 1`` points, and takes both sides' vertices in one cycle. Distance of the CVXPY oracle to
    1e-9 relative, weights in ``RCH(mu)``, certified; deterministic."""
    rng = np.random.default_rng(d)
    P, Q = rng.standard_normal((150, d)), rng.standard_normal((120, d))
    P[:, 0], Q[:, 0] = np.abs(P[:, 0]) + 0.05, -np.abs(Q[:, 0]) - 0.05
    oracle = hull_distance(P, Q, mu=mu).solve()
    assert oracle.status == "optimal", oracle.message
    sol = wolfe_hulls(P, Q, tol=1e-10, mu=mu)
    assert sol.status == "optimal", sol.message
    _check_answer(sol, P, Q, mu, 1e-10)
    assert abs(sol.distance - oracle.distance) <= 1e-9 * oracle.distance
    again = wolfe_hulls(P, Q, tol=1e-10, mu=mu)
    assert again.weights_p.tobytes() == sol.weights_p.tobytes()
    assert again.iterations == sol.iterations


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_wolfe_nu_svm_with_a_large_corral_matches_the_oracle(kernel: str) -> None:
    """``gilbert_svm(nu=..., method="wolfe")`` on 10-dimensional data, where the corral of
    reduced-hull vertices outgrows its first room (kernel columns for rbf, points in R^d for the
    linear kernel): certified, the oracle's decision function."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(160, 10))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=160) > 0, 1.0, -1.0)
    nu = 0.3 * nu_max(y)
    sol = gilbert_svm(X, y, nu=nu, method="wolfe", kernel=kernel, tol=1e-8)
    ora = nu_svm_dual(X, y, nu, kernel=kernel).solve()
    assert sol.status == ora.status == "optimal", sol.message
    assert sol.iterations > 16
    f, f_ora = sol.decision_function(X), ora.decision_function(X)
    assert np.abs(f - f_ora).max() <= 1e-4 * float(np.abs(f_ora).max())


@pytest.mark.parametrize("solver", [gilbert_hulls, mdm_hulls, wolfe_hulls])
def test_mu_one_and_above_is_the_convex_hull_bit_for_bit(solver) -> None:  # noqa: ANN001
    """``mu >= 1`` runs the convex-hull code itself: the same bits as without ``mu``."""
    P, Q = _pair(5, 30, 20, 3, 1.0)
    base = solver(P, Q)
    for mu in (1.0, 1.5, 100.0):
        sol = solver(P, Q, mu=mu)
        for name in ("weights_p", "weights_q", "p", "q"):
            assert getattr(sol, name).tobytes() == getattr(base, name).tobytes()
        assert sol.iterations == base.iterations and sol.distance == base.distance
        assert sol.history["gap"].tobytes() == base.history["gap"].tobytes()


@pytest.mark.parametrize("method", ["gilbert", "mdm", "wolfe"])
def test_gilbert_svm_without_nu_is_unchanged_by_the_new_argument(method: str) -> None:
    """``nu=None`` is the hard margin as before (same bits as the default call)."""
    P, Q = _pair(6, 15, 15, 2, 4.0)
    X, y = np.vstack([P, Q]), np.r_[np.ones(15), -np.ones(15)]
    a = gilbert_svm(X, y, method=method)
    b = gilbert_svm(X, y, method=method, nu=None)
    assert a.alpha.tobytes() == b.alpha.tobytes() and a.b == b.b and a.status == b.status


@pytest.mark.parametrize("solver", [gilbert_hulls, mdm_hulls, wolfe_hulls])
def test_mu_below_the_bound_is_refused_before_any_work(solver) -> None:  # noqa: ANN001
    P, Q = _pair(0, 10, 4, 2, 1.0)
    with pytest.raises(ValueError, match=r"`mu` must be at least 1 / 4 = 0\.25 .* of `Q`"):
        solver(P, Q, mu=0.2)
    with pytest.raises(ValueError, match=r"`mu` must be at least 1 / 4 = 0\.25 .* of `P`"):
        solver(Q, P, mu=0.2)
    with pytest.raises(ValueError, match="`P`"):  # the points are checked before mu
        solver(np.full((3, 2), np.nan), Q, mu=0.01)
    for bad in (0.0, -1.0, math.nan, "a"):
        with pytest.raises(ValueError, match="`mu`"):
            solver(P, Q, mu=bad)


@pytest.mark.parametrize("solver", [gilbert_hulls, mdm_hulls, wolfe_hulls])
def test_smallest_feasible_mu_is_the_centroids(solver) -> None:  # noqa: ANN001
    """``mu = 1 / m`` for both sets: every weight is ``mu``, the points are the centroids."""
    P, Q = _pair(2, 8, 8, 3, 1.0)
    sol = solver(P, Q, mu=1.0 / 8)
    np.testing.assert_allclose(sol.p, P.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(sol.q, Q.mean(axis=0), atol=1e-12)
    assert sol.status == "optimal"


@pytest.mark.parametrize("solver", [gilbert_hulls, mdm_hulls, wolfe_hulls])
def test_inputs_are_not_modified(solver) -> None:  # noqa: ANN001
    P, Q = _pair(3, 12, 9, 2, 0.5)
    P0, Q0 = P.copy(), Q.copy()
    solver(P, Q, mu=0.3)
    assert P.tobytes() == P0.tobytes() and Q.tobytes() == Q0.tobytes()


@settings(max_examples=200, derandomize=True, deadline=None)
@given(values=st.lists(st.sampled_from([-2.0, -1.0, 0.0, 0.5, 1.0, 3.0]), min_size=1,
                       max_size=12),
       fraction=st.floats(0.0, 1.0))
def test_the_linear_minimisation_step_is_the_sorted_partial_sum(values: list[float],
                                                                fraction: float) -> None:
    """The compiled selection against a stable sort: weight ``mu`` on the ``floor(1/mu)``
    smallest values (ties by position), the rest on the next; the value is the judge's
    :func:`reduced_support`, the weights sum to 1 and stay ``<= mu``."""
    v = np.array(values)
    m = v.shape[0]
    mu = 1.0 / m + fraction * (1.0 - 1.0 / m)
    # the set's values, negated, interleaved with points of the other set (never taken)
    sign = -1.0
    y = np.tile([sign, -sign, -sign], m)
    g = np.tile([0.0, -9.0, 9.0], m)
    g[::3] = sign * v
    ids = np.arange(m, dtype=np.int64) * 3  # the set's positions in g
    vidx, vw = np.zeros(m, np.int64), np.zeros(m)
    nv, total, best = smallest_mass(g, y, sign, mu, vidx, vw, 0)
    order = np.argsort(v, kind="stable")
    k = min(int(math.floor(1.0 / mu)), m) if mu < 1.0 else 0
    rest = 1.0 if mu >= 1.0 else (min(max(1.0 - k * mu, 0.0), mu) if k < m else 0.0)
    expected = np.zeros(m)
    expected[order[:k]] = mu
    if k < m and rest > 0.0:
        expected[order[k]] = rest
    got = np.zeros(m)
    got[vidx[:nv] // 3] = vw[:nv]
    assert got.tobytes() == expected.tobytes()
    assert best == ids[order[0]]
    assert np.all(vw[:nv] <= mu) and abs(vw[:nv].sum() - 1.0) <= 1e-12
    assert total == pytest.approx(reduced_support(v, mu), abs=1e-12)
    assert list(vidx[:nv]) == sorted(vidx[:nv])


@pytest.mark.parametrize("seed", range(6))
def test_both_selections_give_the_stable_sorts_partial_sum(seed: int) -> None:
    """Large sets with many ties, ``mu`` from a few points (the heap) to most of them
    (``np.partition``): the same weights as a stable sort, bit for bit."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(200, 5000))
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    g = np.round(rng.standard_normal(n), int(rng.integers(1, 4)))  # ties
    for sign in (1.0, -1.0):
        members = np.flatnonzero(y == sign)
        m = members.size
        for need in sorted({1, 2, 3, m // 40, m // 32, m // 31, m // 3, m - 1, m} - {0}):
            mu = 1.0 / need if need > 1 else 0.9
            mu = float(np.nextafter(mu, 1.0)) if rng.random() < 0.5 else mu
            vidx, vw = np.zeros(m, np.int64), np.zeros(m)
            nv, total, best = smallest_mass(g, y, sign, mu, vidx, vw, 0)
            values = sign * g[members]
            order = np.argsort(values, kind="stable")
            k = min(int(math.floor(1.0 / mu)), m)
            rest = min(max(1.0 - k * mu, 0.0), mu) if k < m else 0.0
            expected = np.zeros(n)
            expected[members[order[:k]]] = mu
            if k < m and rest > 0.0:
                expected[members[order[k]]] = rest
            got = np.zeros(n)
            got[vidx[:nv]] = vw[:nv]
            assert got.tobytes() == expected.tobytes(), (sign, need, mu)
            assert best == members[order[0]]
            assert list(vidx[:nv]) == sorted(vidx[:nv])
            assert total == pytest.approx(reduced_support(values, mu), abs=1e-12)


# --- the nu-SVC through the reduced hulls ------------------------------------------------------


def _nu_data(seed: int, n: int = 40, noise: float = 0.7) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + noise * rng.normal(size=n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    return X + 1.5, y


NU_METHODS = {"gilbert": 1e-6, "mdm": 1e-8, "wolfe": 1e-8}


@pytest.mark.parametrize("method", sorted(NU_METHODS))
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("fraction", [0.15, 0.5, 0.9])
def test_gilbert_svm_nu_matches_nu_smo_and_the_oracle(method: str, kernel: str, seed: int,
                                                      fraction: float) -> None:
    """The decision function, ``rho``, ``b`` and ``hulls_meet`` of ``nu_smo`` and of the CVXPY
    ν-SVC dual (same scaling: ``alpha = (nu / 2) lam``); ``alpha`` within ``[0, 1/l]``, each
    class summing to ``nu / 2``."""
    X, y = _nu_data(seed)
    nu = fraction * nu_max(y)
    tol = NU_METHODS[method]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = gilbert_svm(X, y, nu=nu, method=method, kernel=kernel, tol=tol,
                          max_iter=200_000 if method == "gilbert" else 1_000_000)
    ref = nu_smo(X, y, nu, kernel=kernel, tol=1e-7)
    ora = nu_svm_dual(X, y, nu, kernel=kernel).solve()
    assert ref.status == ora.status == "optimal"
    l = y.shape[0]
    assert np.all(sol.alpha >= 0.0) and np.all(sol.alpha <= 1.0 / l)
    for c in (1.0, -1.0):
        assert abs(sol.alpha[y == c].sum() - 0.5 * nu) <= 1e-12
    if sol.status != "optimal":  # Gilbert's O(1/k) on nearly meeting rbf hulls: judged so
        assert method == "gilbert" and sol.status == "max_iter", sol.message
        assert not sol.certificate.meets(math.inf, HULL_CERT_FACTOR * tol)
        return
    assert sol.hulls_meet == ora.hulls_meet == ref.hulls_meet
    f, f_ref, f_ora = (s.decision_function(X) for s in (sol, ref, ora))
    scale = max(1e-12, float(np.abs(f_ora).max()), abs(ora.rho))
    assert np.abs(f - f_ora).max() <= 1e-4 * scale
    assert np.abs(f - f_ref).max() <= 1e-4 * scale
    assert sol.rho == pytest.approx(ora.rho, rel=1e-4, abs=1e-9)
    if not sol.hulls_meet:
        assert sol.C == pytest.approx(1.0 / (sol.rho * l))
        assert np.all(np.sign(f) == np.sign(f_ora)) or np.abs(f_ora).min() < 1e-6 * scale


@settings(max_examples=10, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(8, 60), d=st.integers(1, 4),
       noise=st.sampled_from([0.1, 1.0]), scale=st.sampled_from([0.01, 1.0, 100.0]),
       fraction=st.floats(0.02, 1.0), kernel=st.sampled_from(["linear", "rbf"]))
def test_wolfe_nu_svm_is_certified_and_matches_the_oracle(seed: int, n: int, d: int,
                                                          noise: float, scale: float,
                                                          fraction: float, kernel: str) -> None:
    """Random ν-SVC problems (any scale, reduced hulls apart or meeting): Wolfe's answer (the
    default method) is certified and has the oracle's decision function and ``hulls_meet``."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * scale
    y = np.where(X[:, 0] + noise * scale * rng.normal(size=n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    nu = fraction * nu_max(y)
    sol = gilbert_svm(X, y, nu=nu, kernel=kernel)
    ora = nu_svm_dual(X, y, nu, kernel=kernel).solve()
    assert sol.status == ora.status == "optimal", sol.message
    assert sol.hulls_meet == ora.hulls_meet
    f, f_ora = sol.decision_function(X), ora.decision_function(X)
    assert np.abs(f - f_ora).max() <= 1e-4 * max(float(np.abs(f_ora).max()), 1e-300)


def test_a_stalled_run_is_certified_as_the_oracle_or_honestly_not() -> None:
    """Reduced hulls that meet to within round-off (rbf, one feature; the oracle: ``w = 0``).
    Where Wolfe's minor cycle gets below the judge's resolution (one machine's rounding), the
    answer is ``w = 0`` and "optimal", and MDM's capped run, with nothing showing the hulls
    apart, is finished by Wolfe's method to the same answer; where it stalls above it (``||z||``
    about twice the zero rule, another machine's BLAS), no method calls its answer optimal,
    and each warns. Never a certified ``w != 0``."""
    rng = np.random.default_rng(25)
    n = int(rng.integers(10, 120))
    d = int(rng.integers(1, 5))
    X = rng.normal(size=(n, d)) * rng.choice([0.01, 1, 100])
    y = np.where(X[:, 0] + rng.normal(size=n) * rng.choice([0.1, 1.0]) > 0, 1.0, -1.0)
    y[:2] = [1, -1]
    nu = float(rng.uniform(0.02, 1.0)) * nu_max(y)
    ora = nu_svm_dual(X, y, nu, kernel="rbf").solve()
    assert ora.status == "optimal" and ora.hulls_meet
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = gilbert_svm(X, y, nu=nu, kernel="rbf")
        slow = gilbert_svm(X, y, nu=nu, kernel="rbf", method="mdm", max_iter=20_000)
    for answer in (sol, slow):
        assert answer.hulls_meet == (answer.status == "optimal")
    if sol.status == "optimal":
        assert slow.status == "optimal" and "finished by Wolfe's method" in slow.message
    else:
        assert slow.status != "optimal"
        assert len([w for w in caught if issubclass(w.category, ConvergenceWarning)]) == 2


def test_gilbert_svm_nu_refuses_infeasible_nu_before_kernel_work() -> None:
    X, y = _nu_data(0, n=20)
    calls = []

    def kernel(A: np.ndarray, B: np.ndarray) -> np.ndarray:
        calls.append(1)
        return A @ B.T

    top = nu_max(y)
    with pytest.raises(ValueError, match="nu_max"):
        gilbert_svm(X, y, nu=top * 1.01, kernel=kernel, method="mdm")
    with pytest.raises(ValueError, match="`nu`"):
        gilbert_svm(X, y, nu=0.0, kernel=kernel, method="mdm")
    assert not calls


@pytest.mark.parametrize("method", sorted(NU_METHODS))
def test_gilbert_svm_nu_reports_meeting_hulls_as_w_zero(method: str) -> None:
    """Classes drawn from one cloud at small ``nu``: the reduced hulls meet; ``w = 0``, ``rho =
    b = 0``, ``C`` NaN and ``hulls_meet``, as ``nu_smo`` says, status ``"optimal"``."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 2))
    y = np.where(np.arange(40) % 2 == 0, 1.0, -1.0)
    sol = gilbert_svm(X, y, nu=0.2, method=method)
    ref = nu_smo(X, y, 0.2)
    assert sol.hulls_meet and ref.hulls_meet
    assert sol.status == "optimal" and sol.rho == 0.0 and sol.b == 0.0
    assert np.all(sol.w == 0.0) and math.isnan(sol.C)
    np.testing.assert_array_equal(sol.decision_function(X), np.zeros(40))


@pytest.mark.parametrize("method", ["mdm", "wolfe"])
def test_gilbert_svm_nu_small_is_the_hard_margin_scaled(method: str) -> None:
    """``nu <= 2 / l`` gives ``mu >= 1``: the convex hulls; ``w`` is ``nu / 2`` times the hulls'
    ``z = p - q``, i.e. parallel to the hard margin's ``w`` and ``f / rho`` its decision
    function (Chang & Lin: the C-SVC at ``C = 1 / (rho l)``, here large). (At ``nu l / 2``
    an integer the best ``rho`` is not unique; below it, it is the hard margin's.)"""
    P, Q = _pair(8, 15, 15, 2, 5.0)
    X, y = np.vstack([P, Q]), np.r_[np.ones(15), -np.ones(15)]
    nu = 1.9 / 30
    sol = gilbert_svm(X, y, nu=nu, method=method)
    hard = gilbert_svm(X, y, method=method)
    assert sol.status == hard.status == "optimal"
    hull = mdm_hulls(P, Q)
    np.testing.assert_allclose(sol.w, 0.5 * nu * (hull.p - hull.q), rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(sol.decision_function(X) / sol.rho, hard.decision_function(X),
                               rtol=1e-5, atol=1e-6)


def test_gilbert_svm_nu_does_not_modify_inputs() -> None:
    X, y = _nu_data(1)
    X0, y0 = X.copy(), y.copy()
    gilbert_svm(X, y, nu=0.4, kernel="rbf")  # the default method, Wolfe
    assert X.tobytes() == X0.tobytes() and y.tobytes() == y0.tobytes()


def test_gilbert_svm_nu_scale_invariance_of_the_verdict() -> None:
    """``X -> s X`` (linear kernel): ``alpha`` is the same problem's, ``rho`` scales by ``s^2``."""
    X, y = _nu_data(2)
    a = gilbert_svm(X, y, nu=0.5, method="mdm")
    b = gilbert_svm(8.0 * X, y, nu=0.5, method="mdm")
    assert a.status == b.status == "optimal"
    assert b.rho == pytest.approx(64.0 * a.rho, rel=1e-6)
