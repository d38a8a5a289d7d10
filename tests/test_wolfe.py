"""Wolfe's minimum-norm-point method against hand derivations, the Clarabel oracles and MDM."""

from __future__ import annotations

import dataclasses

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
from numba import njit

from maxmargin.algorithms import _nearest_point, wolfe_hulls
from maxmargin.algorithms.gilbert import gilbert_svm
from maxmargin.algorithms.mdm import mdm_hulls
from maxmargin.algorithms.wolfe import (
    _FIRST_CAP,
    _add_point,
    _dense_affine,
    _dense_minimiser,
    _drop_points,
    _drop_step,
    _factor_append,
    _factor_remove,
    _factor_solve,
    _start_corral,
    wolfe_loop,
)
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.formulations.dual import svm_dual
from maxmargin.formulations.primal import hard_margin_primal
from maxmargin.kernels import make_kernel
from maxmargin.kernels.qmatrix import make_qmatrix


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


def _kkt(G: np.ndarray, inP: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray]:
    """The minor cycle's KKT matrix and right-hand side, equilibrated by ``c``."""
    s = inP.size
    E = np.column_stack([inP, 1.0 - inP])
    M = np.block([[G / c, E], [E.T, np.zeros((2, 2))]])
    return M, np.r_[np.zeros(s), 1.0, 1.0]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), s=st.integers(2, 30), d=st.integers(1, 40),
       drops=st.lists(st.integers(0, 10**6), min_size=1, max_size=4))
def test_factor_updates_match_numpy(seed: int, s: int, d: int, drops: list[int]) -> None:
    # The compiled factor of H = G / c + E E^T, grown a point at a time and shrunk by Givens
    # rotations, against H itself, and its affine minimiser against numpy's solve of the KKT
    # system; a point it refuses makes H (numerically) singular.
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((s, d)) * rng.uniform(0.1, 10.0)
    inP = np.zeros(s)
    inP[: max(1, s // 2)] = 1.0
    y = 2.0 * inP - 1.0
    G = (y[:, None] * A) @ (y[:, None] * A).T
    c = float(np.max(np.diag(G)))
    H = G / c + np.outer(inP, inP) + np.outer(1.0 - inP, 1.0 - inP)
    L = np.zeros((s, s))
    order = list(range(s))
    Gw, pw = np.zeros((s, s)), np.zeros(s)  # the corral's G and memberships in factor order
    for k, i in enumerate(order):
        pw[k] = inP[i]
        Gw[: k + 1, k] = Gw[k, : k + 1] = G[order[: k + 1], i]
        if not _factor_append(L, Gw, pw, c, k):
            assert np.linalg.eigvalsh(H[np.ix_(order[: k + 1], order[: k + 1])]).min() <= (
                1e-9 * np.abs(H).max())
            return
    for drop in drops:
        if len(order) <= 2:
            break
        k = drop % len(order)
        assert _factor_remove(L, len(order), k)
        del order[k]
    m = len(order)
    Hm = H[np.ix_(order, order)]
    Lm = np.tril(L[:m, :m])
    assert np.abs(L[:m, :m] - Lm).max() == 0.0  # lower triangular, exactly
    np.testing.assert_allclose(Lm @ Lm.T, Hm, atol=1e-10 * np.abs(Hm).max())
    Gm, pm = G[np.ix_(order, order)], inP[order]
    out, W = np.empty(m), np.empty((2, m))
    if pm.min() == 0.0 and pm.max() == 1.0:  # both sides in the corral
        ok = _factor_solve(L, Gm, pm, c, m, out, W)
        M, rhs = _kkt(Gm, pm, c)
        if np.linalg.cond(M) < 1e6:  # well posed: the factor must solve it
            assert ok
            np.testing.assert_allclose(out, np.linalg.solve(M, rhs)[:m], atol=1e-7)
        if ok:
            assert np.linalg.norm(M @ np.r_[out, np.linalg.lstsq(M, rhs)[0][m:]] - rhs) <= 1e-7


def test_factor_refuses_a_repeated_point() -> None:
    # The same point twice (or d + 3 points in R^d: rank H <= d + 2) has no pivot.
    rng = np.random.default_rng(5)
    A = rng.standard_normal((6, 3))
    inP = np.array([1.0, 0.0, 1.0, 0.0, 1.0, 1.0])
    y = 2.0 * inP - 1.0
    A[5] = A[2]
    G = (y[:, None] * A) @ (y[:, None] * A).T
    c = float(np.max(np.diag(G)))
    L = np.zeros((6, 6))
    assert all(_factor_append(L, G, inP, c, k) for k in range(5))
    assert not _factor_append(L, G, inP, c, 5)


def test_dense_minimiser_on_a_singular_corral() -> None:
    # A repeated point makes the KKT system singular: the Tikhonov fallback still gives weights
    # that solve it (both sides summing to 1, the same point as any solution), as lstsq would.
    rng = np.random.default_rng(3)
    A = rng.standard_normal((6, 3))
    A[5] = A[1]
    inP = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 1.0])
    y = 2.0 * inP - 1.0
    G = (y[:, None] * A) @ (y[:, None] * A).T
    c = float(np.max(np.diag(G)))
    out = np.empty(6)
    _dense_minimiser(G, 6, inP, c, out)
    assert out[inP > 0].sum() == pytest.approx(1.0, abs=1e-9)
    assert out[inP == 0].sum() == pytest.approx(1.0, abs=1e-9)
    M, rhs = _kkt(G, inP, c)
    ref = np.linalg.lstsq(M, rhs, rcond=None)[0][:6]
    z_out, z_ref = (y * out) @ A, (y * ref) @ A  # the affine minimiser's point is unique
    np.testing.assert_allclose(z_out, z_ref, atol=1e-7)
    assert out[1] == pytest.approx(out[5], abs=1e-6)  # least norm: the twins share the weight


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
    ok = _dense_affine(G, s, inP, scale, np.empty((s + 2, s + 2)), x := np.empty(s + 2), 0.0)
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


@njit
def _corral_after(data, lam, scale, adds, keeps):  # noqa: ANN001, ANN202 (compiled callers only)
    """The corral of ``lam``, then for each round ``r`` point ``adds[r]`` added and the points
    with ``keeps[r, a]`` False dropped."""
    c = _start_corral(data, lam, scale)
    linear = data[3][0] == 0
    for r in range(adds.shape[0]):
        c = _add_point(c, data, adds[r], scale)
        for a in range(c.counts[0].n_points):
            c.keep[a] = keeps[r, a]
        _drop_points(c, linear)
    return c


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), linear=st.booleans(), rounds=st.integers(1, 40),
       stay=st.sampled_from([0.6, 0.97]))
def test_the_corral_keeps_its_gram_block_columns_and_factor(seed, linear, rounds, stay) -> None:
    """Points added one at a time (past the first room of ``_FIRST_CAP``, so the arrays grow)
    and random ones dropped: the corral's Gram block is ``y_a y_b K(x_a, x_b)`` of its points in
    order, each kernel column sits in its own slot, the slots in use and the free ones make up
    those handed out, and the factor (while kept) has ``L L^T = G / c + E E^T``."""
    rng = np.random.default_rng(seed)
    n, d = 60, 3
    X = rng.standard_normal((n, d))
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    kernel = make_kernel("linear" if linear else "rbf", gamma=0.5)
    K = kernel(X, X)
    ke = make_qmatrix(kernel, X[:1] if linear else X, np.ones(1 if linear else n))
    data = (X if linear else np.zeros((n, 1)), np.diag(K).copy(), y, (0,) if linear else (1,),
            np.zeros((0, 0)), ke)
    lam = np.zeros(n)
    lam[rng.choice(n, size=2, replace=False)] = 0.5
    scale = float(np.max(np.diag(K)))
    members = list(np.flatnonzero(lam))
    adds, keeps = np.empty(rounds, dtype=np.int64), np.ones((rounds, n), dtype=bool)
    for r in range(rounds):
        new = int(rng.choice(np.setdiff1d(np.arange(n), members)))
        adds[r] = new
        members.append(new)
        keeps[r, : len(members)] = rng.random(len(members)) < stay
        members = [m for m, k in zip(members, keeps[r], strict=False) if k]
    c = _corral_after(data, lam, scale, adds, keeps)
    counts = c.counts[0]  # a NumPy record: fields by name
    s = int(counts["n_points"])
    assert list(c.index[:s]) == members and c.index.shape[0] >= min(_FIRST_CAP, s)
    idx = np.array(members, dtype=np.int64)
    G = (y[idx, None] * K[np.ix_(idx, idx)]) * y[None, idx]
    np.testing.assert_allclose(c.gram[:s, :s], G, rtol=0, atol=1e-13 * scale)
    np.testing.assert_array_equal(c.in_p[:s], (y[idx] > 0).astype(float))
    if not linear:
        slots = c.slot[:s]
        free = c.free_slots[: counts["slots_free"]]
        assert len(set(slots) | set(free)) == s + free.size == counts["slots_used"]
        np.testing.assert_allclose(c.columns[slots], K[idx], rtol=0, atol=1e-13)
    if counts["factored"] and s > 0:
        inP = c.in_p[:s]
        H = G / scale + np.outer(inP, inP) + np.outer(1.0 - inP, 1.0 - inP)
        L = np.tril(c.factor[:s, :s])
        np.testing.assert_allclose(L @ L.T, H, atol=1e-9 * np.abs(H).max())


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_repeated_points_against_the_oracle(kernel: str, seed: int) -> None:
    # Every point twice, and the points of a face in a line: corrals that are affinely dependent
    # in round-off, where the factor gives up and the dense solves take over. Same optimum as the
    # oracle and as the data without the repeats.
    X, y = labelled(*gaussian_pair(40, 6, 4.0, seed))
    kw = {"kernel": kernel, "gamma": 0.5} if kernel == "rbf" else {}
    once = gilbert_svm(X, y, method="wolfe", finish=False, **kw)
    twice = gilbert_svm(np.vstack([X, X]), np.r_[y, y], method="wolfe", finish=False, **kw)
    assert once.status == twice.status == "optimal"
    assert twice.dual_objective == pytest.approx(once.dual_objective, rel=1e-8)
    ora = svm_dual(X, y, C=None, **kw).solve()
    assert once.dual_objective == pytest.approx(ora.dual_objective, rel=1e-6)
    line = np.array([[1.0, t] for t in np.linspace(-1, 1, 7)])
    P, Q = line, line * [-1.0, 1.0]
    sol = wolfe_hulls(np.vstack([P, P]), Q)
    assert sol.status == "optimal" and sol.distance == pytest.approx(2.0, rel=1e-12)


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
    # RBF gamma = 50 on 200 points: a corral of over 100 points, so the corral's arrays and
    # column slots grow (16 -> 128) and slots are reused, the factor updated throughout.
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


#: Five points on feature scales from 1 to 2e4 (a symmetry stress run's case).
FIVE_X = np.array([[1.0891163662700354, -11.085026010314648, -23576.41982035581],
                   [1.4056064665659203, -169.48064445546314, -9941.396388112815],
                   [3.5228809009807125, -59.030595835629555, -19539.021435170616],
                   [-0.9267170541232476, -379.771434173677, 6138.2967699012115],
                   [0.17964081709520865, 38.73368767601545, 5397.97658214779]])
FIVE_Y = np.array([-1.0, -1.0, 1.0, -1.0, 1.0])


def test_a_round_off_stall_the_certificate_confirms_is_optimal() -> None:
    """Five points on feature scales from 1 to 2e4 (a symmetry stress run's case): in this
    order Wolfe's corral finds no descent step at a relative gap of 1e-8 (round-off), in
    another it stops at its tolerance; the certificate confirms both answers, so both are
    "optimal" (a stall was "inaccurate"), with the same dual, as the hard-margin oracle's."""
    X, y = FIVE_X, FIVE_Y
    ref = hard_margin_primal(X, y).solve()
    for order in ([0, 1, 2, 3, 4], [2, 3, 4, 1, 0]):
        for finish in (False, True):
            sol = gilbert_svm(X[order], y[order], method="wolfe", finish=finish)
            assert sol.status == "optimal", sol.message
            assert sol.certificate.gap <= 10 * 1e-8
            assert sol.dual_objective == pytest.approx(ref.primal_objective, rel=1e-6)


def test_a_stall_is_judged_by_the_certificate() -> None:
    """The stall path itself, whatever the machine's rounding: Wolfe's run on the five points
    above marked stalled (code ``STALLED``) is "optimal" when the certificate confirms its
    answer, saying so; the same weights moved off the optimum are not (the exact finish
    then solves it, or without ``finish`` the stop is "inaccurate" with a warning)."""
    X, y = FIVE_X, FIVE_Y
    Xc = X - X.mean(axis=0)
    kern = make_kernel("linear")
    run = _nearest_point.run_nearest_point(wolfe_loop, Xc, y, kern, 1e-8, 1000, 1000,
                                           hull_eps=_nearest_point.SVM_HULL_EPS)
    stalled = dataclasses.replace(run, code=_nearest_point.STALLED, message="stalled")
    sol = _nearest_point.svm_from_run(stalled, Xc, y, kern, "wolfe", 1e-8, finish=False)
    assert sol.status == "optimal" and "confirms the answer as it is" in sol.message
    lam = run.lam.copy()
    lam[y > 0] = np.where(lam[y > 0] > 0, 0.0, 1.0) / max(int(np.sum(lam[y > 0] <= 0)), 1)
    g = _nearest_point.exact_g(Xc, y, lam, kern)
    zz = float(np.dot(y * lam, g))
    off = dataclasses.replace(stalled, lam=lam, g=g, zz=zz)
    with pytest.warns(ConvergenceWarning, match="does not confirm"):
        raw = _nearest_point.svm_from_run(off, Xc, y, kern, "wolfe", 1e-8, finish=False)
    assert raw.status == "inaccurate"
    done = _nearest_point.svm_from_run(off, Xc, y, kern, "wolfe", 1e-8, finish=True)
    assert done.status == "optimal" and "finished exactly" in done.message


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
