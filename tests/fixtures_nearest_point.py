"""Data and oracle helpers for the nearest-point tests (Gilbert, MDM, Wolfe).

Every expected value comes from an independent source: the hand fixtures in ``fixtures.py``, the
CVXPY/Clarabel oracles of ``maxmargin.formulations`` or a theorem.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from fixtures import HULL_CROSSING, HULL_PAIR
from scipy.spatial.distance import pdist

from maxmargin.algorithms import _nearest_point
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.formulations.dual import svm_dual
from maxmargin.formulations.polytope import hull_distance, polytope_distance


def gaussian_pair(n_per: int, d: int, sep: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two standard Gaussian clouds of ``n_per`` points; the second shifted by ``sep`` along x1."""
    rng = np.random.default_rng(seed)
    P = rng.standard_normal((n_per, d))
    Q = rng.standard_normal((n_per, d))
    Q[:, 0] += sep
    return P, Q


def labelled(P: np.ndarray, Q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``X = [P; Q]`` with ``y = +1`` on ``P`` and ``-1`` on ``Q`` (the SVM view of a hull pair)."""
    return np.vstack([P, Q]), np.concatenate([np.ones(len(P)), -np.ones(len(Q))])


def oracle_hulls(P: np.ndarray, Q: np.ndarray) -> Any:
    """Clarabel's nearest points of ``conv(P)`` and ``conv(Q)`` (a ``HullPairSolution``)."""
    sol = hull_distance(P, Q).solve()
    assert sol.status == "optimal", sol.message
    return sol


def assert_distance_matches_oracle(
    solver: Callable, seed: int, n: int, m: int, d: int, shift: float, shared: bool
) -> None:
    """``solver(P, Q)`` on random clouds (``Q`` shifted by ``shift`` along ``e_1``; with
    ``shared`` a common point, so the hulls certainly intersect) against Clarabel: the distance
    to ``1e-6`` of the data scale (0 exactly when shared), weights on the simplices."""
    rng = np.random.default_rng(seed)
    P, Q = rng.standard_normal((n, d)), rng.standard_normal((m, d))
    Q[:, 0] += shift
    if shared:
        Q[0] = P[0]
    ora = oracle_hulls(P, Q)
    sol = solver(P, Q)
    assert sol.status == "optimal"
    scale = max(1.0, pdist(np.vstack([P, Q])).max()) if n + m > 1 else 1.0
    assert abs(sol.distance - ora.distance) <= 1e-6 * scale
    if shared:
        assert sol.distance == 0.0
    for w in (sol.weights_p, sol.weights_q):
        assert w.min() >= 0 and w.sum() == pytest.approx(1.0, abs=1e-12)


def oracle_polytope(Q: np.ndarray) -> Any:
    """Clarabel's nearest point of ``conv(Q)`` to the origin (a ``PolytopeSolution``)."""
    sol = polytope_distance(Q).solve()
    assert sol.status == "optimal", sol.message
    return sol


def quiet(fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """Call ``fn`` with its ``ConvergenceWarning`` silenced (runs cut short on purpose)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fn(*args, **kwargs)


def assert_svm_matches(sol: Any, ex: Any, atol: float = 1e-9) -> None:
    """An ``SVMSolution`` against a hand-derived ``SVMExample`` (alpha, w, b, objective)."""
    assert sol.status == "optimal", sol.message
    np.testing.assert_allclose(sol.alpha, ex.alpha, atol=atol)
    if ex.w is not None:
        np.testing.assert_allclose(sol.w, ex.w, atol=atol)
    assert abs(sol.b - ex.b) <= atol
    assert abs(sol.dual_objective - ex.objective) <= atol
    assert abs(sol.primal_objective - ex.objective) <= atol
    assert sol.C is None


def assert_hull_fixtures(solver: Callable, method: str, tol: float) -> None:
    """``solver(P, Q, tol=tol)`` on the hand-derived hull pairs: exact nearest points and weights
    for ``HULL_PAIR``; distance 0 (status optimal) for the crossing segments, with
    ``||p - q|| <= tol * scale`` (scale = largest distance to the first point, 2 here)."""
    sol = solver(HULL_PAIR["P"], HULL_PAIR["Q"], tol=tol)
    assert sol.status == "optimal" and sol.method == method and sol.gap <= tol
    for key in ("p", "q", "weights_p", "weights_q"):
        np.testing.assert_allclose(getattr(sol, key), HULL_PAIR[key], atol=1e-12)
    assert abs(sol.distance - HULL_PAIR["distance"]) <= 1e-12
    P, Q = HULL_CROSSING["P"], HULL_CROSSING["Q"]
    sol = solver(P, Q, tol=tol)
    assert sol.status == "optimal" and sol.distance == HULL_CROSSING["distance"]
    assert "within the zero tolerance" in sol.message
    np.testing.assert_allclose(sol.p, P.T @ sol.weights_p)
    np.testing.assert_allclose(sol.q, Q.T @ sol.weights_q)
    assert np.linalg.norm(sol.p - sol.q) <= tol * 2.0


def rbf_disc_case(n: int, store_gram: bool, monkeypatch: Any) -> tuple:
    """``n`` uniform points of [-1, 1]^2 labelled +1 inside the disc of radius 0.6 (not linearly
    separable; separable with ``rbf``, gamma = 2), and Clarabel's hard-margin dual on them.

    ``store_gram=False`` makes the nearest-point loops compute kernel columns themselves, as they
    do when the Gram matrix is too large to store.
    """
    if not store_gram:
        monkeypatch.setattr(_nearest_point, "GRAM_MAX_BYTES", 0)
    rng = np.random.default_rng(7)
    X = rng.uniform(-1, 1, size=(n, 2))
    y = np.where(np.hypot(X[:, 0], X[:, 1]) < 0.6, 1.0, -1.0)
    oracle = svm_dual(X, y, C=None, kernel="rbf", gamma=2.0).solve()
    assert oracle.status == "optimal", oracle.message
    return X, y, oracle
