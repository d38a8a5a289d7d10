"""``dcd``'s smoothed primal path for the hinge (:mod:`maxmargin.algorithms.dcd.smoothed`):
each level's minimiser against an independent solver, its alpha in the dual box, and the
runs where coordinate passes crawl (``C ||x||^2`` large) certified against the CVXPY oracle."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from benchmarks.bench_dcd import make_dense
from maxmargin.algorithms import dcd
from maxmargin.algorithms.dcd.smoothed import _level, smoothed_path
from maxmargin.formulations import liblinear_primal

API = importlib.import_module("maxmargin.algorithms.dcd.api")
SMOOTHED = importlib.import_module("maxmargin.algorithms.dcd.smoothed")


def huber_objective(w, X, y, box, s, delta):
    """The level's objective and gradient, written out here from the module docstring."""
    Xt = np.hstack([X, np.full((X.shape[0], 1), s)])
    slack = 1.0 - y * (Xt @ w)
    loss = np.where(slack <= 0.0, 0.0,
                    np.where(slack < delta, slack**2 / (2.0 * delta), slack - delta / 2.0))
    coef = box * np.clip(slack / delta, 0.0, 1.0)
    return 0.5 * w @ w + box @ loss, w - Xt.T @ (coef * y)


@pytest.mark.parametrize("delta", [1.0, 0.1, 0.01])
def test_a_level_is_the_smoothed_minimiser(delta):
    """Newton's steps on one level reach the minimiser L-BFGS finds on the same objective."""
    X, y = make_dense(300, 5, seed=3)
    box = np.random.default_rng(1).uniform(0.5, 20.0, 300)
    w, _, work = _level(X, y, box, 1.0, np.zeros(6), delta, 1e12, np.ones(6))
    ref = minimize(huber_objective, np.zeros(6), args=(X, y, box, 1.0, delta), jac=True,
                   method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10000})
    assert work > 0.0
    value, grad = huber_objective(w, X, y, box, 1.0, delta)
    assert value <= ref.fun + 1e-9 * abs(ref.fun)
    assert np.linalg.norm(grad) <= 1e-7 * max(1.0, np.linalg.norm(w))


@pytest.mark.parametrize("sparse", [False, True])
def test_the_path_ends_in_the_box_with_few_free(sparse):
    X, y = make_dense(3000, 10, seed=4)
    X[np.abs(X) < 0.5] = 0.0
    rows = sp.csr_matrix(X) if sparse else X
    box = np.full(3000, 100.0)
    alpha, work = smoothed_path(rows, y, box, 1.0, 44, 1e12)
    free = np.count_nonzero((alpha > 0.0) & (alpha < box))
    assert np.all(alpha >= 0.0) and np.all(alpha <= box) and free <= 44 and work > 0.0
    again, _ = smoothed_path(rows, y, box, 1.0, 44, 1e12)
    assert np.array_equal(alpha, again)
    if sparse:  # the same path on the same rows, dense or CSR, to round-off
        dense, _ = smoothed_path(X, y, box, 1.0, 44, 1e12)
        assert np.allclose(alpha, dense, rtol=1e-8, atol=1e-8 * 100.0)


def test_a_budget_too_small_leaves_the_start():
    X, y = make_dense(500, 5, seed=2)
    alpha, work = smoothed_path(X, y, np.full(500, 10.0), 1.0, 24, 1.0)
    assert work == 0.0 and np.all(alpha == 10.0)  # w~ = 0: every margin 0, slack 1 >= delta


@pytest.mark.parametrize(("C", "s", "weighted"), [(100.0, 1.0, False), (1e3, None, False),
                                                  (300.0, 2.0, True)])
def test_crawling_passes_go_to_the_smoothed_path(C, s, weighted):
    """``C ||x||^2`` in the thousands: the passes crawl (a gap above ``DCD_SMOOTH_GAP`` after
    20 passes), the smoothed path and the finish certify it, and the oracle agrees."""
    X, y = make_dense(3000, 8, seed=11)
    sw = np.random.default_rng(5).uniform(0.5, 2.0, 3000) if weighted else None
    res = dcd(X, y, C, loss="hinge", intercept_scaling=s, sample_weight=sw, tol=1e-6)
    assert res.status == "optimal" and res.method == "dcd+smoothed/hinge"
    assert res.certificate.gap <= 1e-6 and res.iterations == 20
    ref = liblinear_primal(X, y, C, loss="hinge", intercept_scaling=s,
                           sample_weight=sw).solve()
    assert ref.status == "optimal"
    scale = max(abs(ref.primal_objective), 1.0)
    assert res.primal_objective >= ref.dual_objective - 1e-6 * scale
    assert ref.primal_objective >= res.dual_objective - 1e-6 * scale
    again = dcd(X, y, C, loss="hinge", intercept_scaling=s, sample_weight=sw, tol=1e-6)
    assert np.array_equal(res.alpha, again.alpha) and res.b == again.b


def test_without_the_finish_the_passes_go_on_from_the_path(monkeypatch):
    """A finish that gives nothing: the passes restart from the path's alpha (its dual
    objective the higher) and still certify."""
    X, y = make_dense(2000, 6, seed=8)
    seen = []

    def nothing(X, y, alpha, box, *args, **kwargs):
        seen.append(np.count_nonzero((alpha > 0.0) & (alpha < box)))
        return None

    monkeypatch.setattr(SMOOTHED, "feature_finish", nothing)  # the path's finish
    monkeypatch.setattr(API, "feature_finish", nothing)  # and the passes'
    res = dcd(X, y, 50.0, loss="hinge", tol=1e-3)
    assert seen and seen[0] <= 4 * 7
    assert res.status == "optimal" and res.method == "dcd/hinge"
    assert res.certificate.gap <= 1e-3


def test_small_c_never_takes_the_path(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the passes do not crawl here")

    monkeypatch.setattr(SMOOTHED, "smoothed_path", refuse)
    X, y = make_dense(5000, 20, seed=1)
    for C in (0.01, 0.1, 1.0):
        assert dcd(X, y, C, loss="hinge").status == "optimal"


@pytest.mark.parametrize(("C", "weighted"), [(100.0, False), (300.0, True)])
def test_svc_problem_crawling_goes_to_the_smoothed_path(C, weighted, monkeypatch):
    """SVC's problem (free bias) where the passes crawl: the path with a free bias
    (``y . alpha = 0`` at its minimisers) and the finish certify ``m - M < tol``, and the
    dual objective is the oracle's."""
    from maxmargin.algorithms import dcd_svc
    from maxmargin.formulations import svm_dual

    calls = []
    path = SMOOTHED.smoothed_path

    def spy(*args, **kwargs):
        calls.append(kwargs.get("free_bias"))
        return path(*args, **kwargs)

    monkeypatch.setattr(SMOOTHED, "smoothed_path", spy)
    X, y = make_dense(2000, 8, seed=12)
    sw = np.random.default_rng(3).uniform(0.5, 2.0, 2000) if weighted else None
    res = dcd_svc(X, y, C, sample_weight=sw, tol=1e-6)
    assert calls == [True]
    assert res.status == "optimal" and res.certificate.kkt_violation < 1e-6
    assert abs(float(y @ res.alpha)) <= 1e-9 * C * 2000
    ref = svm_dual(X, y, C=C, kernel="linear", sample_weight=sw).solve()
    assert ref.status == "optimal"
    assert res.dual_objective == pytest.approx(ref.dual_objective, rel=1e-6)


def test_a_free_bias_level_balances_the_classes():
    """The free bias's derivative at a level's minimiser is ``-y . alpha``: zero."""
    X, y = make_dense(1000, 4, seed=6)
    box = np.full(1000, 50.0)
    ridge = np.ones(5)
    ridge[-1] = 0.0
    w, _, _ = _level(X, y, box, 1.0, np.zeros(5), 0.1, 1e12, ridge)
    slack = 1.0 - y * (X @ w[:4] + w[4])
    alpha = box * np.clip(slack / 0.1, 0.0, 1.0)
    assert abs(float(alpha @ y)) <= 1e-8 * float(alpha.sum())
