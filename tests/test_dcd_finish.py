"""``dcd_svc``'s exact finish in feature space (:mod:`maxmargin.algorithms.dcd.finish`) against
the CVXPY oracle and ``smo``, its drop steps against a direct recomputation, and its use by
``dcd_svc``."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import scipy.sparse as sp
from fixtures_stress import near_coincident_copies
from hypothesis import example, given, settings
from hypothesis import strategies as st

from maxmargin.algorithms import dcd, dcd_svc, smo
from maxmargin.algorithms.dcd import balanced
from maxmargin.algorithms.dcd.finish import drop_steps, feature_finish, finish_work
from maxmargin.certificate import certify_svm
from maxmargin.formulations import liblinear_primal, svm_dual
from maxmargin.kernels import LinearKernel

SVC = importlib.import_module("maxmargin.algorithms.dcd.svc")


def problem(n: int, d: int, seed: int, noise: float = 0.7):
    """Gaussian rows, labels from a random hyperplane with noise (a soft margin)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X @ rng.standard_normal(d) + 0.3 + noise * rng.standard_normal(n) > 0,
                 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    return X, y


def start(y: np.ndarray, box: np.ndarray, seed: int) -> np.ndarray:
    """A feasible start: uniform alphas in the box, balanced onto ``y . alpha = 0``."""
    return balanced(np.random.default_rng(seed).uniform(0.0, 1.0, y.shape) * box, y, box)


def certify(X, y, alpha, box):
    return certify_svm(alpha, X, y, box, LinearKernel())


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize(("n", "d", "C"), [(60, 3, 1.0), (120, 8, 5.0), (40, 12, 0.3)])
def test_the_finish_reaches_the_oracles_optimum(sparse, n, d, C):
    X, y = problem(n, d, seed=n + d)
    box = np.full(n, C)
    rows = sp.csr_matrix(X) if sparse else X
    alpha = feature_finish(rows, y, start(y, box, 1), box, 1e-4, 1e12)
    assert alpha is not None
    assert np.all(alpha >= 0.0) and np.all(alpha <= box)
    cert = certify(X, y, alpha, box)
    assert cert.kkt_violation < 1e-9 and cert.feasibility <= 1e-12
    oracle = svm_dual(X, y, C).solve()
    assert cert.dual_objective == pytest.approx(oracle.dual_objective, rel=1e-7)
    np.testing.assert_allclose(X.T @ (alpha * y), oracle.w,
                               atol=1e-5 * max(1.0, np.abs(oracle.w).max()))
    # free alphas: at most d + 1 (a generic optimum)
    assert np.count_nonzero((alpha > 0.0) & (alpha < box)) <= d + 1


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(4, 80), d=st.integers(1, 6),
       C=st.floats(0.05, 20.0), sparse=st.booleans(), weighted=st.booleans())
@example(seed=918, n=22, d=1, C=0.8125, sparse=False, weighted=False)  # a release among many
def test_property_the_finish_is_exact_and_matches_smo(seed, n, d, C, sparse, weighted):
    X, y = problem(n, d, seed=seed, noise=1.0)
    rng = np.random.default_rng(seed + 1)
    box = C * (rng.uniform(0.5, 2.0, n) if weighted else np.ones(n))
    rows = sp.csr_matrix(np.where(rng.random(X.shape) < 0.4, 0.0, X)) if sparse else X
    dense = rows.toarray() if sparse else rows
    alpha = feature_finish(rows, y, start(y, box, seed), box, 1e-4, 1e12)
    assert alpha is not None
    cert = certify(dense, y, alpha, box)
    ref = smo(dense, y, C, kernel="linear", sample_weight=box / C, tol=1e-9)
    assert cert.kkt_violation < 1e-7
    scale = max(abs(ref.dual_objective), 1e-12)
    assert abs(cert.dual_objective - ref.dual_objective) <= (1e-8 + ref.certificate.gap) * scale


@pytest.mark.parametrize("kind", ["duplicate column", "zero column", "repeated rows", "raw scales"])
def test_degenerate_rows_are_finished(kind):
    X, y = problem(80, 4, seed=7)
    if kind == "duplicate column":
        X = np.hstack([X, X[:, :1]])
    elif kind == "zero column":
        X = np.hstack([X, np.zeros((80, 1))])
    elif kind == "repeated rows":
        X, y = np.vstack([X, X[:20]]), np.concatenate([y, y[:20]])
    else:  # features of unlike scales
        X = X * np.array([1e-3, 1.0, 1e3, 1e4])
    box = np.full(y.size, 2.0)
    alpha = feature_finish(X, y, start(y, box, 3), box, 1e-4, 1e12)
    assert alpha is not None
    cert = certify(X, y, alpha, box)
    oracle = svm_dual(X, y, 2.0).solve()
    assert cert.kkt_violation < 1e-6 and cert.feasibility <= 1e-12
    assert cert.dual_objective == pytest.approx(oracle.dual_objective, rel=1e-6)


def test_drop_steps_keep_w_and_the_balance_and_track_the_residual():
    X, y = problem(50, 3, seed=11)
    Z = np.hstack([X, np.ones((50, 1))])
    box = np.full(50, 1.0)
    a0 = start(y, box, 2)
    a = a0.copy()
    M = Z.T @ Z
    G = np.linalg.inv(M)
    r = y - Z @ (G @ (Z.T @ y))
    alive = np.ones(50, dtype=bool)
    steps, work, consistent, moved = drop_steps(Z, y, a, box, alive, G, r, 1e-9, 10)
    assert steps == 10 and work > 0.0 and not consistent and moved
    assert np.count_nonzero(~alive) == 10
    assert np.all((a[~alive] == 0.0) | (a[~alive] == box[~alive]))
    assert np.all((a >= 0.0) & (a <= box))
    # moving along the null space of Z^T: w and y . alpha unchanged
    np.testing.assert_allclose(X.T @ (a * y), X.T @ (a0 * y), atol=1e-12)
    assert abs(float(y @ a) - float(y @ a0)) <= 1e-12
    # the downdated G and r are those of the rows left
    rows = Z[alive]
    np.testing.assert_allclose(G, np.linalg.inv(rows.T @ rows), rtol=1e-9, atol=1e-12)
    direct = y[alive] - rows @ np.linalg.solve(rows.T @ rows, rows.T @ y[alive])
    np.testing.assert_allclose(r[alive], direct, atol=1e-12)
    # the objective went down (sum alpha up at a fixed w)
    assert a.sum() > a0.sum()


def test_the_work_is_counted_and_a_short_budget_gives_up():
    X, y = problem(400, 5, seed=5)
    box = np.ones(400)
    a0 = start(y, box, 4)
    assert feature_finish(X, y, a0, box, 1e-4, 1e3) is None  # one step is more than that
    one = feature_finish(X, y, a0, box, 1e-4, 1e12)
    two = feature_finish(X, y, a0, box, 1e-4, 1e12)
    assert one is not None and np.array_equal(one, two)  # the same bits
    assert finish_work(400, 5, X.size, 400) > finish_work(100, 5, X.size, 400)


def test_dcd_svc_hands_its_run_to_the_feature_space_finish(monkeypatch):
    X, y = problem(3000, 5, seed=3)
    calls = []
    finish = SVC.feature_finish
    monkeypatch.setattr(SVC, "feature_finish",
                        lambda *a, **k: calls.append(k) or finish(*a, **k))
    res = dcd_svc(X, y, 1.0, tol=1e-3)
    assert calls and res.status == "optimal"
    assert res.certificate.kkt_violation < 1e-3
    ref = smo(X, y, 1.0, kernel="linear", tol=1e-6)
    assert res.dual_objective == pytest.approx(ref.dual_objective, rel=1e-6)
    again = dcd_svc(X, y, 1.0, tol=1e-3)
    assert np.array_equal(res.alpha, again.alpha) and res.b == again.b


def test_a_released_alpha_dropped_by_the_drop_phase_is_no_longer_tracked():
    """The finish's released alpha was looked up among the free rows after a drop phase had
    taken it out (an IndexError, or a wrong row's flag) when the next drop phase came before
    any step: near-coincident copies with flipped labels, SVC's problem and LIBLINEAR's hinge.
    Both now end at the oracle's optimum."""
    X, y = near_coincident_copies(2165)
    C = 0.6557770683128611
    svc, hinge = dcd_svc(X, y, C=C), dcd(X, y, C=C, loss="hinge", intercept_scaling=1.0)
    assert svc.status == "optimal" and hinge.status == "optimal", (svc.message, hinge.message)
    oracle = svm_dual(X, y, C).solve()
    assert abs(svc.dual_objective - oracle.dual_objective) <= 1e-6 * abs(oracle.dual_objective)
    bias = liblinear_primal(X, y, C, loss="hinge", intercept_scaling=1.0).solve()
    assert abs(hinge.dual_objective - bias.dual_objective) <= 1e-6 * abs(bias.dual_objective)
