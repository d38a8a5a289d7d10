"""The active-set method's KKT solves: LU factors with borders, the null-space walk, and the
eigendecomposition they replace, step by step on the same free sets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from maxmargin.algorithms._kkt_factor import BORDER_LIMIT, BorderedKKT, eigh_step, kkt_matrix
from maxmargin.algorithms.active_set import polish_alpha
from maxmargin.algorithms.smo.finish import first_checkpoint
from maxmargin.certificate import certify_svm
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.formulations import svm_dual
from maxmargin.kernels import LinearKernel


def _system(rng: np.random.Generator, n: int, rank: int):
    X = rng.normal(size=(n, rank)) * 10.0 ** rng.uniform(-2, 2)
    K = X @ X.T
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    Q = y[:, None] * K * y[None, :]
    kkt = BorderedKKT(y, lambda idx, j: K[idx, j], lambda idx: K[np.ix_(idx, idx)],
                      min_factored=1)  # the factors on every free set, however small
    return K, y, Q, kkt


def _same_step(kkt: BorderedKKT, Q: np.ndarray, y: np.ndarray, free: np.ndarray,
               g: np.ndarray) -> str:
    """Compare ``kkt``'s step with the eigendecomposition's; which way it was found."""
    before = (kkt.base is not None, kkt.null is not None)
    step, dg = kkt.step(free, g, 1e-12, lambda idx, v: Q[:, idx] @ v)
    ref, _ = eigh_step(Q[np.ix_(free, free)], y[free], g[free], 1e-12)
    assert step.newton == ref.newton
    # the solve's unit is max |g_F| / sigma (ref.noise; 0 for a descent direction); two
    # backward-stable solves of one system agree to ~ kappa eps of its kept spectrum (kappa up
    # to 1e12 with eigh's cutoff): 1e-7, or m kappa eps when the system is worse conditioned
    scale = float(np.max(np.abs(ref.d), initial=0.0)) + ref.noise + 1e-300
    eig = np.abs(np.linalg.eigvalsh(kkt_matrix(Q[np.ix_(free, free)], y[free])[0]))
    kappa = float(eig.max() / eig[eig > 1e-12 * eig.max()].min())
    rel = max(1e-7, free.size * kappa * np.finfo(float).eps)
    assert np.max(np.abs(step.d - ref.d), initial=0.0) <= rel * scale
    if ref.newton:
        assert step.lam == pytest.approx(ref.lam, rel=rel, abs=1e-9 * abs(g[free]).max())
        if dg is not None:
            np.testing.assert_allclose(dg, Q[:, free] @ step.d, rtol=0, atol=1e-12 * scale
                                       * float(np.abs(Q).max()) * free.size)
    else:  # a zero-curvature descent direction
        assert np.max(np.abs(Q[np.ix_(free, free)] @ step.d)) <= 1e-8 * np.abs(Q).max() * scale
        assert abs(y[free] @ step.d) <= 1e-8 * scale
        assert g[free] @ step.d < 0.0
    return "bordered" if before[0] else ("null" if before[1] else "fresh")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**31 - 1), st.booleans())
@example(322, False)  # kappa ~ 1e9: the two solves differ by 2e-7 of the step
def test_bordered_steps_match_the_eigendecomposition(seed, full_rank):
    # A random walk of free sets (alphas join and leave, one or two at a time, past
    # BORDER_LIMIT so that M_0 is factored afresh): every step equals eigh's, Newton or not.
    rng = np.random.default_rng(seed)
    n = 80
    _, y, Q, kkt = _system(rng, n, n if full_rank else 12)
    free = np.sort(rng.choice(n, size=int(rng.integers(2, 11 if not full_rank else 40)),
                              replace=False))
    ways = set()
    for _ in range(3 * BORDER_LIMIT):
        g = rng.normal(size=n)
        ways.add(_same_step(kkt, Q, y, free, g))
        out = np.setdiff1d(np.arange(n), free)
        if free.size > 2 and (rng.random() < 0.5 or out.size == 0):
            free = np.delete(free, rng.integers(free.size, size=int(rng.integers(1, 3))))
        else:
            free = np.union1d(free, rng.choice(out, size=min(out.size, 2), replace=False))
    if full_rank:
        assert "bordered" in ways  # the borders were used, not only fresh factors


def test_null_walk_follows_the_eigendecomposition_as_alphas_leave():
    # Rank 5 with 40 free: zero-curvature steps; as alphas leave, the kept null space shrinks
    # by one a step and gives eigh's direction, until the system is no longer singular.
    rng = np.random.default_rng(3)
    _, y, Q, kkt = _system(rng, 60, 5)
    free = np.arange(40)
    g = rng.normal(size=60)
    ways = []
    while free.size > 3:
        ways.append(_same_step(kkt, Q, y, free, g))
        free = np.delete(free, rng.integers(free.size))
    assert ways[0] == "fresh" and ways.count("null") >= 30


def test_a_near_singular_bordered_system_is_left_to_the_eigendecomposition():
    # Four free alphas on rank-2 data: the bordered solve would give a step of ~1e14 times
    # the right-hand side (an alpha released and fixed again without end); it is refused.
    rng = np.random.default_rng(1)
    _, y, Q, kkt = _system(rng, 20, 2)
    g = rng.normal(size=20)
    for free in (np.arange(3), np.arange(4), np.arange(3), np.arange(4)):
        _same_step(kkt, Q, y, free, g)


def _wide(seed: int, n: int, d: int):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.3, 3, size=(n, 1))
    y = np.where(X[:, :3].sum(1) + rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def test_the_polish_finishes_wide_linear_data_from_an_early_smo_iterate():
    # n = 3 d, C = 10: SMO crawls (about d + 1 free alphas at the optimum). From its iterate
    # at 500 iterations (205 free alphas on 150 features: a zero-curvature face) the polish
    # reaches the oracle's optimum. Its counted work is that of O(m^2) steps and a few
    # factorizations: under 20 eigendecompositions' 9 (m + 1)^3, where the method that
    # decomposed the KKT matrix at every step spent one a step, some 200.
    from maxmargin.algorithms import smo

    X, y = _wide(0, 450, 150)
    C = 10.0
    with pytest.warns(ConvergenceWarning):
        start = smo(X, y, kernel="linear", C=C, max_iter=500, finish=False)
    n_free = int(np.count_nonzero((start.alpha > 0) & (start.alpha < C)))
    assert n_free > X.shape[1] + 1
    work: list[float] = []
    polished = polish_alpha(start.alpha, y, C, lambda idx: X[idx] @ X.T, linear_X=X,
                            work_done=work)
    assert polished is not None
    cert = certify_svm(polished, X, y, C, LinearKernel())
    assert cert.meets(1e-9, 1e-10), cert.summary()
    ref = svm_dual(X, y, C, LinearKernel()).solve()
    assert cert.dual_objective == pytest.approx(ref.dual_objective, rel=1e-9)
    assert work[0] < 20 * 9.0 * (n_free + 1) ** 3


def test_smo_on_wide_linear_data_is_finished_at_its_first_checkpoint():
    from maxmargin.algorithms import smo

    X, y = _wide(0, 900, 300)
    sol = smo(X, y, kernel="linear", C=10.0)
    assert sol.status == "optimal"
    assert sol.iterations == first_checkpoint(900)
    assert "finished exactly by the active-set method" in sol.message
    assert sol.certificate.meets(1e-3, 1e-9)


def test_one_margin_violator_on_low_rank_data_is_finished_exactly():
    # From an exact optimum on rank-r linear data (r + 1 free alphas), one point at alpha = 0
    # is moved just inside its margin: releasing it makes the free set's system singular
    # (r + 2 free on rank r). A bordered solve of it has a null part of arbitrary sign, which
    # once sent the step uphill; the polish must end at the optimum, as the eigendecomposition
    # does (its Schur complement bound refuses such a system).
    rng = np.random.default_rng(0)
    checked = 0
    while checked < 40:
        n, r = int(rng.integers(20, 60)), int(rng.integers(1, 4))
        X = rng.normal(size=(n, r))
        y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
        C = float(10.0 ** rng.uniform(-1, 2))
        alpha = polish_alpha(np.zeros(n), y, C, lambda i, X=X: X[i] @ X.T, linear_X=X)
        free, zero = np.flatnonzero((alpha > 0) & (alpha < C)), np.flatnonzero(alpha == 0)
        w = X.T @ (alpha * y)
        if free.size != r + 1 or zero.size == 0 or float(w @ w) < 1e-8:
            continue
        f = X @ w
        b = float(np.mean(y[free] - f[free]))
        j = int(rng.choice(zero))
        for eps in (1e-6, 1e-9):
            Xj = X.copy()
            Xj[j] = X[j] + ((1 - eps) * y[j] - b - f[j]) / float(w @ w) * w
            polished = polish_alpha(alpha, y, C, lambda i, Xj=Xj: Xj[i] @ Xj.T, linear_X=Xj)
            cert = certify_svm(polished, Xj, y, C, LinearKernel())
            assert cert.kkt_violation < 1e-11, (n, r, C, eps, cert.summary())
        checked += 1


def test_the_null_walk_keeps_directions_an_alpha_outside_it_does_not_touch():
    # Two groups of points in orthogonal feature blocks: three in general position (no null
    # direction among them) and 27 of rank 1. The null vectors vanish on the first group, so
    # its alphas leaving F (their rows of N are round-off) must keep every null direction:
    # 25 of them, as the eigendecomposition of each smaller system finds.
    rng = np.random.default_rng(5)
    A = np.zeros((30, 4))
    A[:3, :3] = rng.normal(size=(3, 3))
    A[3:, 3] = rng.normal(size=27)
    K = A @ A.T
    y = np.where(rng.random(30) < 0.5, 1.0, -1.0)
    Q = y[:, None] * K * y[None, :]
    kkt = BorderedKKT(y, lambda idx, j: K[idx, j], lambda idx: K[np.ix_(idx, idx)],
                      min_factored=1)
    g = rng.normal(size=30)
    free = np.arange(30)
    for _ in range(3):
        _same_step(kkt, Q, y, free, g)
        assert kkt.null is not None and kkt.null[1].shape[1] == 25
        free = free[1:]  # the first group leaves, one alpha at a time


def test_no_null_walk_on_an_indefinite_system():
    # An indefinite Q (a sigmoid-like Gram matrix) can gain null directions as alphas leave;
    # the null space is then not kept, and each step is the eigendecomposition's.
    rng = np.random.default_rng(2)
    B = rng.normal(size=(25, 3))
    K = B @ np.diag([1.0, 1.0, -1.0]) @ B.T
    y = np.where(rng.random(25) < 0.5, 1.0, -1.0)
    Q = y[:, None] * K * y[None, :]
    kkt = BorderedKKT(y, lambda idx, j: K[idx, j], lambda idx: K[np.ix_(idx, idx)],
                      min_factored=1)
    g = rng.normal(size=25)
    step, _ = kkt.step(np.arange(20), g, 1e-12, lambda idx, v: Q[:, idx] @ v)
    assert not step.newton and kkt.null is None
