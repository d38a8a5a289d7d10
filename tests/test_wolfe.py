"""Wolfe's minimum-norm-point method against hand derivations, the Clarabel oracles and MDM."""

from __future__ import annotations

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
    rbf_disc_case,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from maxmargin.algorithms import _nearest_point, wolfe, wolfe_hulls
from maxmargin.algorithms.gilbert import gilbert_svm
from maxmargin.algorithms.mdm import mdm_hulls
from maxmargin.algorithms.wolfe import (
    _FACTOR_MIN,
    _affine_minimiser,
    _dense_affine,
    _drop_step,
    _Factor,
    _triangular,
)
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.formulations.dual import svm_dual
from maxmargin.formulations.primal import hard_margin_primal


def close_hulls(m: int, d: int, seed: int, distance: float = 0.1) -> tuple[np.ndarray, ...]:
    """Standard-normal points cut by the slab ``|x_1| < distance / 2``: ``x_1 > 0`` is ``P``,
    ``x_1 < 0`` is ``Q``. Many points lie near the two faces (the hard case of the issue)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((3 * m, d))
    P = X[X[:, 0] >= distance / 2][:m]
    Q = X[X[:, 0] <= -distance / 2][:m]
    return P, Q


def test_hull_fixtures() -> None:
    assert_hull_fixtures(wolfe_hulls, "wolfe", tol=1e-8)


@pytest.mark.parametrize("ex", [TWO_POINTS, LI_HANG], ids=lambda e: e.name)
def test_svm_fixtures(ex) -> None:  # noqa: ANN001
    sol = gilbert_svm(ex.X, ex.y, method="wolfe", finish=False)
    assert_svm_matches(sol, ex)
    assert sol.method == "wolfe"
    assert 1.0 / np.linalg.norm(sol.w) == pytest.approx(ex.margin, rel=1e-12)


def test_svm_xor() -> None:
    assert gilbert_svm(XOR_X, XOR_Y, method="wolfe").status == "infeasible"
    sol = gilbert_svm(XOR_POLY.X, XOR_POLY.y, method="wolfe", kernel="poly", finish=False,
                      **XOR_POLY.kernel_params)
    assert_svm_matches(sol, XOR_POLY)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    n=st.integers(1, 9),
    m=st.integers(1, 9),
    d=st.integers(1, 4),
    shift=st.floats(0.0, 5.0),
    shared=st.booleans(),
)
def test_distance_property_against_oracle(
    seed: int, n: int, m: int, d: int, shift: float, shared: bool
) -> None:
    assert_distance_matches_oracle(wolfe_hulls, seed, n, m, d, shift, shared)


@pytest.mark.parametrize(("m", "d"), [(2000, 2), (2000, 20), (500, 60), (400, 120)])
def test_close_hulls_to_1e8_against_clarabel(m: int, d: int) -> None:
    # The hard instance at test size: the exact corral gives the oracle's distance to
    # round-off, and the float64 certificate confirms the 1e-8 gap.
    P, Q = close_hulls(m, d, seed=m + d)
    sol = wolfe_hulls(P, Q, tol=1e-8)
    ora = oracle_hulls(P, Q)
    assert sol.status == "optimal" and sol.gap <= 1e-8 and sol.certificate.gap <= 1e-7
    assert sol.distance == pytest.approx(ora.distance, rel=1e-7)
    assert np.count_nonzero(sol.weights_p) + np.count_nonzero(sol.weights_q) <= d + 2
    mdm = mdm_hulls(P, Q, tol=1e-8)
    assert sol.distance <= mdm.distance * (1 + 1e-8)


def test_factor_updates_match_a_fresh_factorisation() -> None:
    # Wolfe's O(s^2) updates against the dense KKT solve and a Cholesky factor computed anew,
    # through appends, deletions (inner and last) and an affinely dependent point.
    rng = np.random.default_rng(7)
    s, d = _FACTOR_MIN + 6, 90
    A = rng.standard_normal((s + 4, d))
    y = np.where(rng.random(s + 4) < 0.5, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    Ya = y[:, None] * A
    G = Ya @ Ya.T
    c = float(np.max(np.diag(G)))
    idx = list(range(s))
    inP = lambda: (y[idx] > 0).astype(float)  # noqa: E731
    f = _Factor(G[np.ix_(idx, idx)], inP(), c)
    for step in ("append", "append", "remove", "remove-last", "append"):
        if step == "append":  # at most 3 appends: max(idx) + 1 <= s + 2
            idx.append(max(idx) + 1)
            f.append(G[np.ix_(idx, idx)][-1], inP())
        else:
            k = 3 if step == "remove" else len(idx) - 1
            f.remove(np.array([k]))
            del idx[k]
        Gs = G[np.ix_(idx, idx)]
        fresh = _Factor(Gs, inP(), c)
        np.testing.assert_allclose(f.R.T @ f.R, fresh.R.T @ fresh.R, atol=1e-10)
        np.testing.assert_allclose(f.solve(Gs, inP()), _affine_minimiser(Gs, inP(), c),
                                   atol=1e-8)
    # a point in the affine hull of the corral (the same point twice) has no pivot
    idx.append(idx[0])
    f.append(G[np.ix_(idx, idx)][-1], inP())
    assert f.R is None and f.solve(G[np.ix_(idx, idx)], inP()) is None
    # small corrals are solved densely
    assert _Factor(G[:4, :4], (y[:4] > 0).astype(float), c).R is None


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), s=st.integers(2, 12), dependent=st.booleans())
def test_compiled_dense_solve_matches_lapack(seed: int, s: int, dependent: bool) -> None:
    # The compiled minor cycle's elimination against LAPACK on the same equilibrated system;
    # a corral with a repeated point has no unique solution: refused, not a wrong answer.
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((s, 3)) * rng.uniform(0.1, 10.0)
    if dependent:
        A[-1] = A[0]
    inP = np.zeros(s)
    inP[: max(1, s // 2)] = 1.0
    y = 2.0 * inP - 1.0
    G = (y[:, None] * A) @ (y[:, None] * A).T
    scale = float(np.max(np.diag(G)))
    ok = _dense_affine(G, s, inP, scale, np.empty((s + 2, s + 2)), x := np.empty(s + 2))
    M = np.block([[G / scale, np.column_stack([inP, 1.0 - inP])],
                  [np.vstack([inP, 1.0 - inP]), np.zeros((2, 2))]])
    rhs = np.r_[np.zeros(s), 1.0, 1.0]
    if dependent and s > 2 and inP[0] == inP[-1]:
        assert not ok  # singular: the duplicate's row equals the first
    if ok:
        assert np.linalg.norm(M @ x - rhs) <= 1e-8
        if np.linalg.cond(M) < 1e8:
            np.testing.assert_allclose(x[:s], np.linalg.solve(M, rhs)[:s], atol=1e-6)


def test_drop_step() -> None:
    # ratios w / (w - target) where target <= 0: [0.5, 0 (w = target = 0), inf, 0]. A point at 0
    # that target keeps at 0 leaves at once: step 0, w unchanged but rescaled per side
    w, keep = np.array([0.5, 0.0, 0.2, 0.0]), np.empty(4, dtype=bool)
    _drop_step(w, np.array([-0.5, 0.0, 0.3, -1.0]), np.array([1.0, 1.0, 0.0, 0.0]), 4, keep)
    np.testing.assert_array_equal(keep, [True, False, True, False])
    np.testing.assert_array_equal(w[keep], [1.0, 1.0])
    # by hand: ratio 0.5 / (0.5 + 0.5) = 0.5 for point 1, so w = (1, 0, 1) and point 1 leaves
    w, keep = np.array([0.5, 0.5, 1.0]), np.empty(3, dtype=bool)
    _drop_step(w, np.array([1.5, -0.5, 1.0]), np.array([1.0, 1.0, 0.0]), 3, keep)
    np.testing.assert_array_equal(keep, [True, False, True])
    np.testing.assert_array_equal(w[keep], [1.0, 1.0])


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_compiled_cycles_hand_over_to_the_factor_loop(
    kernel: str, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The compiled loop runs corrals below _FACTOR_MIN points; with the bound at 3 it hands the
    # run to the Python loop (Cholesky updates) after one cycle. Same optimum either way.
    X, y = labelled(*gaussian_pair(40, 6, 4.0, seed))
    kw = {"kernel": kernel, "gamma": 0.5} if kernel == "rbf" else {}
    whole = gilbert_svm(X, y, method="wolfe", finish=False, **kw)
    monkeypatch.setattr(wolfe, "_FACTOR_MIN", 3)
    handed = gilbert_svm(X, y, method="wolfe", finish=False, **kw)
    assert whole.status == handed.status == "optimal"
    assert handed.dual_objective == pytest.approx(whole.dual_objective, rel=1e-8)
    ora = svm_dual(X, y, C=None, **kw).solve()
    assert whole.dual_objective == pytest.approx(ora.dual_objective, rel=1e-6)


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_svm_against_hard_margin_oracle(seed: int) -> None:
    X, y = labelled(*gaussian_pair(30, 4, 5.0, seed))
    ora = hard_margin_primal(X, y).solve()
    sol = gilbert_svm(X, y, method="wolfe", finish=False)
    assert sol.status == "optimal" and ora.status == "optimal"
    assert np.linalg.norm(sol.w - ora.w) <= 1e-6 * np.linalg.norm(ora.w)
    assert sol.b == pytest.approx(ora.b, abs=1e-6 * (1 + abs(ora.b)))
    np.testing.assert_allclose(sol.alpha, ora.alpha, atol=1e-6 * ora.alpha.max())
    assert sol.dual_objective == pytest.approx(ora.dual_objective, rel=1e-7)


@pytest.mark.parametrize("store_gram", [True, False], ids=["gram", "columns"])
def test_kernel_svm_against_dual_oracle(store_gram: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    X, y, ora = rbf_disc_case(40, store_gram, monkeypatch)
    sol = gilbert_svm(X, y, method="wolfe", kernel="rbf", gamma=2.0, finish=False)
    assert sol.status == "optimal" and sol.w is None
    assert sol.dual_objective == pytest.approx(ora.dual_objective, rel=1e-6)
    f_ora = ora.decision_function(X)
    np.testing.assert_allclose(sol.decision_function(X), f_ora, atol=1e-5 * np.abs(f_ora).max())


@pytest.mark.parametrize("store_gram", [True, False], ids=["gram", "columns"])
def test_large_kernel_corral_against_dual_oracle(store_gram: bool,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # RBF gamma = 50 on 200 points: a corral of over 100 points, so the column slots grow
    # (16 -> 128) and are reused, and the Cholesky factor (>= 64 points) carries the solves.
    if not store_gram:
        monkeypatch.setattr(_nearest_point, "GRAM_MAX_BYTES", 0)
    rng = np.random.default_rng(7)
    X = rng.uniform(-1, 1, size=(200, 2))
    y = np.where(np.hypot(X[:, 0], X[:, 1]) < 0.6, 1.0, -1.0)
    ora = svm_dual(X, y, C=None, kernel="rbf", gamma=50.0).solve()
    sol = gilbert_svm(X, y, method="wolfe", kernel="rbf", gamma=50.0, finish=False)
    assert ora.status == "optimal" and sol.status == "optimal"
    assert np.count_nonzero(sol.alpha) > 100
    assert sol.dual_objective == pytest.approx(ora.dual_objective, rel=1e-6)
    f_ora = ora.decision_function(X)
    np.testing.assert_allclose(sol.decision_function(X), f_ora, atol=1e-5 * np.abs(f_ora).max())


def test_max_iter_warns_and_returns() -> None:
    P, Q = close_hulls(500, 20, seed=0)
    with pytest.warns(ConvergenceWarning, match="wolfe: max_iter=2"):
        sol = wolfe_hulls(P, Q, tol=1e-12, max_iter=2)
    assert sol.status == "max_iter" and sol.iterations == 2 and sol.gap > 1e-12
    assert sol.weights_p.sum() == pytest.approx(1.0) and sol.weights_q.min() >= 0


def test_bad_input_and_inputs_unchanged() -> None:
    with pytest.raises(ValueError, match="`tol` must be positive"):
        wolfe_hulls([[0.0, 0.0]], [[1.0, 0.0]], tol=-1.0)
    P, Q = gaussian_pair(10, 2, 4.0, 1)
    copies = (P.copy(), Q.copy())
    wolfe_hulls(P, Q)
    np.testing.assert_array_equal(P, copies[0])
    np.testing.assert_array_equal(Q, copies[1])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), s=st.integers(1, 40), cols=st.integers(1, 3))
def test_triangular_solves_against_the_matrix(seed: int, s: int, cols: int) -> None:
    """``_triangular`` (LAPACK ``dtrtrs`` on the transpose's memory) solves ``R x = b`` and
    ``R^T x = b`` for a C-ordered upper triangular ``R``: the residuals, computed with ``R``
    itself, are at round-off; ``b`` and ``R`` are left as they were; a zero pivot raises."""
    rng = np.random.default_rng(seed)
    R = np.triu(rng.normal(size=(s, s))) + np.diag(rng.uniform(1.0, 2.0, s))
    b = rng.normal(size=(s, cols)) if cols > 1 else rng.normal(size=s)
    R0, b0 = R.copy(), b.copy()
    x = _triangular(R, b)
    xt = _triangular(R, b, trans=True)
    # the factor may be a slice or Fortran-ordered (after qr_delete): the same answers
    wide = np.zeros((s + 2, s + 2))
    wide[:s, :s] = R
    for other in (np.asfortranarray(R), wide[:s, :s]):
        np.testing.assert_array_equal(_triangular(other, b), x)
        np.testing.assert_array_equal(_triangular(other, b, trans=True), xt)
    scale = np.abs(R).sum(axis=1).max() * np.abs(x).max() + np.abs(b).max()
    assert np.abs(R @ x - b).max() <= 1e-13 * scale
    scale_t = np.abs(R).sum(axis=0).max() * np.abs(xt).max() + np.abs(b).max()
    assert np.abs(R.T @ xt - b).max() <= 1e-13 * scale_t
    assert np.array_equal(R, R0) and np.array_equal(b, b0)
    R[s // 2, s // 2] = 0.0
    with pytest.raises(np.linalg.LinAlgError, match="dtrtrs"):
        _triangular(R, b)
