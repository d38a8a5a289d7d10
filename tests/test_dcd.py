"""Dual coordinate descent (``dcd``) against the CVXPY oracle of LIBLINEAR's problem,
scikit-learn's ``LinearSVC``, a plain-Python loop, and its own properties."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.svm import LinearSVC

from maxmargin.algorithms import dcd, dcd_svc, smo
from maxmargin.algorithms.dcd import balanced, duality_gap, next_random
from maxmargin.certificate import certify_liblinear, liblinear_objectives, liblinear_rows
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.formulations import liblinear_primal, svm_dual

LOSSES = ("hinge", "squared_hinge")


def problem(n: int = 40, d: int = 5, seed: int = 0, sparse: bool = False, noise: float = 0.5):
    """Labels from a random hyperplane with Gaussian noise (a soft margin); sparse rows keep
    about a third of their entries."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    if sparse:
        X[rng.random((n, d)) < 0.65] = 0.0
    y = np.where(X @ rng.standard_normal(d) + 0.3 + noise * rng.standard_normal(n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    return (sp.csr_matrix(X) if sparse else X), y


def primal(w_tilde, X, y, C, loss, s):
    """``P(w~)`` recomputed here from the rows LIBLINEAR sees."""
    return liblinear_objectives(w_tilde, liblinear_rows(X, s), y, np.broadcast_to(C, y.shape),
                                loss, "l2")[0]


# --- the oracle ---------------------------------------------------------------------------------


SOLVERS = [("hinge", "dual"), ("squared_hinge", "dual"), ("squared_hinge", "primal")]


@pytest.mark.parametrize(("loss", "solver"), SOLVERS)
@pytest.mark.parametrize("s", [1.0, None, 3.0])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_agrees_with_the_oracle(loss, solver, s, sparse, weighted):
    X, y = problem(seed=7 + sparse, sparse=sparse)
    sw = np.random.default_rng(3).uniform(0.2, 3.0, y.shape) if weighted else None
    C = 0.7
    res = dcd(X, y, C, loss=loss, intercept_scaling=s, sample_weight=sw, tol=1e-6,
              solver=solver)
    assert res.method in ({f"newton/{loss}"} if solver == "primal"
                          else {f"dcd/{loss}", f"dcd+finish/{loss}"})  # the hinge's finish
    ref = liblinear_primal(X, y, C, loss=loss, intercept_scaling=s, sample_weight=sw).solve()
    assert ref.status == "optimal" and res.status == "optimal"
    assert res.certificate.gap <= 1e-6
    assert abs(res.primal_objective - ref.primal_objective) <= 1e-6 * ref.primal_objective
    # both certified: each primal is above the other's dual bound
    assert res.primal_objective >= ref.dual_objective * (1 - 1e-12)
    assert ref.primal_objective >= res.dual_objective * (1 - 1e-12)
    np.testing.assert_allclose(res.w, ref.w, atol=2e-3 * max(1.0, np.abs(ref.w).max()))
    assert abs(res.b - ref.b) <= 2e-3 * max(1.0, abs(ref.b))
    box = C * (1.0 if sw is None else sw)
    assert res.primal_objective == pytest.approx(primal(res.w_tilde, X, y, box, loss, s),
                                                 rel=1e-12)
    if s is None:
        assert res.b == 0.0 and res.w_tilde.shape == res.w.shape
    else:
        assert res.b == pytest.approx(s * res.w_tilde[-1], rel=1e-15)
    rows = liblinear_rows(X, s)
    if solver == "dual":  # w~ is recomputed from alpha: the dual's own weights
        np.testing.assert_allclose(res.w_tilde, np.asarray(rows.T @ (res.alpha * y)).ravel(),
                                   rtol=1e-12, atol=1e-12)
    else:  # alpha is the KKT map of w~
        margins = y * np.asarray(rows @ res.w_tilde).ravel()
        np.testing.assert_allclose(res.alpha, 2 * box * np.maximum(0.0, 1.0 - margins),
                                   rtol=1e-12, atol=1e-15)
    assert np.all(res.alpha >= 0)
    if loss == "hinge":
        assert np.all(res.alpha <= box * (1 + 1e-15))


def test_a_zero_row_without_intercept_takes_its_bound():
    X, y = problem(seed=4)
    X[5] = 0.0
    for loss in LOSSES:
        res = dcd(X, y, 2.0, loss=loss, intercept_scaling=None, tol=1e-6)
        ref = liblinear_primal(X, y, 2.0, loss=loss, intercept_scaling=None).solve()
        assert res.status == "optimal"
        assert res.primal_objective == pytest.approx(ref.primal_objective, rel=1e-6)
        if loss == "hinge":
            assert res.alpha[5] == 2.0


# --- scikit-learn's LinearSVC -------------------------------------------------------------------


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("sparse", [False, True])
def test_no_worse_than_linearsvc(loss, sparse):
    X, y = problem(n=300, d=8, seed=11, sparse=sparse)
    C, s = 1.5, 1.0
    res = dcd(X, y, C, loss=loss, intercept_scaling=s, tol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = LinearSVC(C=C, loss=loss, intercept_scaling=s, dual=True, tol=1e-6,
                        max_iter=100_000, random_state=0).fit(X, y)
    theirs = primal(np.append(clf.coef_.ravel(), clf.intercept_[0] / s), X, y, C, loss, s)
    assert res.status == "optimal"
    assert res.primal_objective <= theirs * (1 + 1e-6)
    assert res.primal_objective >= theirs * (1 - 1e-5)  # the same problem
    assert np.mean(res.predict(X) == clf.predict(X)) >= 0.99


# --- the loop, step by step ---------------------------------------------------------------------


def splitmix(state: list[int]) -> int:
    """SplitMix64 in Python integers."""
    mask = (1 << 64) - 1
    state[0] = (state[0] + 0x9E3779B97F4A7C15) & mask
    z = state[0]
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return z ^ (z >> 31)


def reference_passes(X, y, C, loss, s, seed, passes):
    """LIBLINEAR's ``solve_l2r_l1l2_svc`` without shrinking, in plain Python, for ``passes``
    passes from ``alpha = 0``."""
    n, d = X.shape
    Xt = np.hstack([X, np.full((n, 1), s)])
    U = math.inf if loss == "squared_hinge" else C
    D = 0.5 / C if loss == "squared_hinge" else 0.0
    alpha, w, order, state = np.zeros(n), np.zeros(d + 1), list(range(n)), [seed]
    for _ in range(passes):
        for k in range(n - 1):
            j = k + splitmix(state) % (n - k)
            order[k], order[j] = order[j], order[k]
        for i in order:
            G = y[i] * float(Xt[i] @ w) - 1.0 + D * alpha[i]
            PG = min(G, 0.0) if alpha[i] == 0 else (max(G, 0.0) if alpha[i] == U else G)
            if abs(PG) > 1e-12:
                old = alpha[i]
                alpha[i] = min(max(old - G / (float(Xt[i] @ Xt[i]) + D), 0.0), U)
                w += (alpha[i] - old) * y[i] * Xt[i]
    return alpha


@pytest.mark.parametrize("loss", LOSSES)
def test_the_passes_are_the_textbook_loop(loss):
    X, y = problem(n=30, d=4, seed=5)
    state = np.array([123], dtype=np.uint64)
    bits = [int(next_random(state)) for _ in range(3)]
    ref_state = [123]
    assert bits == [splitmix(ref_state) for _ in range(3)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = dcd(X, y, 1.0, loss=loss, tol=1e-300, max_iter=3, shrinking=False,
                  solver="dual")
    seed = int(np.random.default_rng(0).integers(0, 2**63 - 1, dtype=np.int64))
    np.testing.assert_allclose(res.alpha, reference_passes(X, y, 1.0, loss, 1.0, seed, 3),
                               rtol=1e-12, atol=1e-14)


# --- properties ---------------------------------------------------------------------------------


@pytest.mark.parametrize("loss", LOSSES)
def test_dense_and_csr_give_the_same_answer(loss):
    X, y = problem(n=80, d=6, seed=9, sparse=True)
    a = dcd(X, y, 1.0, loss=loss, tol=1e-8)
    b = dcd(X.toarray(), y, 1.0, loss=loss, tol=1e-8)
    assert a.iterations == b.iterations
    np.testing.assert_allclose(a.alpha, b.alpha, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.w_tilde, b.w_tilde, rtol=1e-9, atol=1e-12)
    X32 = sp.csr_matrix(X, dtype=np.float32)
    c = dcd(X32, y, 1.0, loss=loss, tol=1e-8)
    e = dcd(X32.astype(np.float64), y, 1.0, loss=loss, tol=1e-8)
    np.testing.assert_array_equal(c.alpha, e.alpha)  # float32 values are float64 exactly


@pytest.mark.parametrize("sparse", [False, True])
def test_the_same_random_state_gives_the_same_bits(sparse):
    X, y = problem(n=120, d=6, seed=2, sparse=sparse)
    runs = [dcd(X, y, 1.0, loss="hinge", random_state=r) for r in (5, 5, 6)]
    np.testing.assert_array_equal(runs[0].alpha, runs[1].alpha)
    np.testing.assert_array_equal(runs[0].w, runs[1].w)
    assert runs[0].iterations == runs[1].iterations and runs[0].b == runs[1].b
    assert not np.array_equal(runs[0].alpha, runs[2].alpha)  # the seed changes the order
    gen = dcd(X, y, 1.0, random_state=np.random.default_rng(5))
    assert np.array_equal(gen.alpha, dcd(X, y, 1.0, random_state=5).alpha)


def test_shrinking_changes_the_path_not_the_answer():
    X, y = problem(n=150, d=5, seed=12)
    for loss in LOSSES:
        on = dcd(X, y, 1.0, loss=loss, tol=1e-7)
        off = dcd(X, y, 1.0, loss=loss, tol=1e-7, shrinking=False)
        assert on.status == off.status == "optimal"
        assert on.primal_objective == pytest.approx(off.primal_objective, rel=2e-7)


def test_inputs_are_not_modified():
    X, y = problem(n=50, d=4, seed=1)
    Xs = sp.csr_matrix(X)
    sw = np.linspace(0.5, 2.0, 50)
    copies = [X.copy(), y.copy(), Xs.data.copy(), Xs.indices.copy(), Xs.indptr.copy(), sw.copy()]
    for data in (X, Xs):
        dcd(data, y, 1.0, sample_weight=sw, loss="hinge")
    for before, after in zip(copies, [X, y, Xs.data, Xs.indices, Xs.indptr, sw], strict=True):
        np.testing.assert_array_equal(before, after)


def test_the_result_is_frozen_and_predicts():
    X, y = problem(n=60, d=3, seed=3)
    res = dcd(X, y, 1.0)
    with pytest.raises(ValueError):
        res.alpha[0] = 1.0
    np.testing.assert_allclose(res.decision_function(X), X @ res.w + res.b)
    np.testing.assert_array_equal(res.predict(X), np.where(X @ res.w + res.b > 0, 1.0, -1.0))
    assert res.method == "newton/squared_hinge" and res.tol == 1e-3  # auto: n > d
    assert res.history["gap"][-1] <= 1e-3 and res.history["iterations"][-1] == res.iterations
    wide = dcd(X[:, :2].repeat(40, axis=1)[:30], y[:30], 1.0)
    assert wide.method == "dcd/squared_hinge"  # auto: n <= d


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"C": 0.0}, "C"),
        ({"C": None}, "C"),
        ({"loss": "log"}, "loss"),
        ({"intercept_scaling": -1.0}, "intercept_scaling"),
        ({"intercept_scaling": math.nan}, "intercept_scaling"),
        ({"sample_weight": -np.ones(10)}, "sample_weight"),
        ({"sample_weight": np.ones(9)}, "sample_weight"),
        ({"tol": 0.0}, "tol"),
        ({"max_iter": 0}, "max_iter"),
        ({"random_state": -1}, "random_state"),
        ({"random_state": "seed"}, "random_state"),
        ({"shrinking": "yes"}, "shrinking"),
        ({"solver": "newton"}, "solver"),
        ({"solver": "primal", "loss": "hinge"}, "solver"),
        ({"X": np.full((10, 2), np.nan)}, "X"),
        ({"y": np.zeros(10)}, "y"),
        ({"y": np.ones(9)}, "y"),
    ],
)
def test_bad_input_names_the_argument(kwargs, name):
    X, y = problem(n=10, d=2)
    args = {"X": X, "y": y, **kwargs}
    with pytest.raises(ValueError, match=f"`{name}`"):
        dcd(args.pop("X"), args.pop("y"), **args)


def test_the_cap_warns_with_cause_and_remedy():
    X, y = problem(n=200, d=5, seed=8)
    with pytest.warns(ConvergenceWarning, match=r"max_iter=2.*raise `max_iter`"):
        res = dcd(X, y, 10.0, loss="hinge", tol=1e-9, max_iter=2)
    assert res.status == "max_iter" and res.iterations == 2
    assert res.certificate.gap > 1e-9 and "max_iter" in res.message


@pytest.mark.parametrize("loss", LOSSES)
def test_the_ends_of_float64_leak_no_warning(loss):
    """C = 1e-300 is solved and certified (``w = 0``; the certificate's dual is computed for
    ``a / max a``, which would underflow to ``-inf`` else); C = 1e300 (``C ||x||^2`` beyond
    float64) ends with a status and a ConvergenceWarning only, never a RuntimeWarning."""
    X, y = problem(n=20, d=3, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tiny = dcd(X, y, 1e-300, loss=loss)
    assert tiny.status == "optimal" and tiny.certificate.gap <= 1e-3
    assert np.all(np.abs(tiny.w) <= 1e-295)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        huge = dcd(X, y, 1e300, loss=loss, max_iter=50)
    assert huge.status != "optimal"
    assert caught and all(issubclass(w.category, ConvergenceWarning) for w in caught)


@pytest.mark.parametrize("loss", LOSSES)
def test_the_liblinear_certificate_is_invariant_to_the_scale_of_C(loss):
    """``X -> s X``, ``C -> C / s^2`` (``w -> w / s``, ``alpha -> alpha / s^2``): the same
    classifier, the same relative gap and weak duality, down to scales where ``a^2`` and
    ``t^2`` underflow."""
    X, y = problem(n=30, d=3, seed=3)
    ref = dcd(X, y, 1.0, loss=loss, tol=1e-7)
    gaps = []
    for scale in (1.0, 1e-100, 1e100, 1e150):
        cert = certify_liblinear(ref.w_tilde / scale, liblinear_rows(X * scale, scale), y,
                                 1.0 / scale**2, loss=loss, alpha=ref.alpha / scale**2)
        # weak duality to round-off: a few ulps of P below 0 where the answer is the optimum
        assert -8 * np.finfo(np.float64).eps <= cert.gap <= 1e-7
        gaps.append(cert.gap)
    assert max(gaps) - min(gaps) <= 1e-10


def test_the_stop_gap_bounds_the_judges_gap():
    """The solver's O(nnz) gap uses alpha alone; the judge tries more dual points."""
    X, y = problem(n=100, d=5, seed=6)
    for loss in LOSSES:
        res = dcd(X, y, 1.0, loss=loss, tol=1e-4, solver="dual")
        own = duality_gap(X, y, res.alpha, res.w_tilde, 1.0, np.ones(100),
                          loss == "squared_hinge")
        assert res.certificate.gap <= own + 1e-12 and own == res.history["gap"][-1]
        full = certify_liblinear(res.w_tilde, liblinear_rows(X, 1.0), y, 1.0, loss=loss,
                                 alpha=res.alpha)
        assert full.gap <= res.certificate.gap + 1e-12


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(4, 40),
    d=st.integers(1, 6),
    C=st.floats(0.01, 10.0),
    loss=st.sampled_from(LOSSES),
    s=st.sampled_from([1.0, None, 0.5, 2.0]),
    sparse=st.booleans(),
    solver=st.sampled_from(["auto", "dual"]),
)
def test_property_certified_and_symmetric(seed, n, d, C, loss, s, sparse, solver):
    X, y = problem(n=n, d=d, seed=seed, sparse=sparse, noise=1.0)
    opts = {"loss": loss, "intercept_scaling": s, "tol": 1e-5, "max_iter": 200_000,
            "solver": solver}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = dcd(X, y, C, **opts)
        flip = dcd(X, -y, C, **opts)
    assert res.status == "optimal" and res.certificate.gap <= 1e-5
    assert res.dual_objective <= res.primal_objective * (1 + 1e-12)  # weak duality
    # labels negated: the same steps on the same alphas, w negated
    np.testing.assert_array_equal(flip.alpha, res.alpha)
    np.testing.assert_array_equal(flip.w_tilde, -res.w_tilde)
    # X -> t X, C -> C / t^2, s -> t s: the same classifier, w -> w / t
    t = 4.0
    scaled = dcd(X * t, y, C / t**2, **{**opts, "intercept_scaling": None if s is None
                                        else t * s})
    assert scaled.status == "optimal"
    assert scaled.primal_objective == pytest.approx(res.primal_objective / t**2, rel=3e-5)


# --- SVC's problem: the unregularised bias ------------------------------------------------------


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_svc_agrees_with_smo_and_the_oracle(sparse, weighted):
    X, y = problem(n=60, d=5, seed=21 + sparse, sparse=sparse)
    sw = np.random.default_rng(4).uniform(0.5, 2.0, y.shape) if weighted else None
    C = 0.8
    res = dcd_svc(X, y, C, sample_weight=sw, tol=1e-6)
    ref = smo(X, y, C, kernel="linear", sample_weight=sw, tol=1e-6)
    dense = X.toarray() if sparse else X
    oracle = svm_dual(dense, y, C, sample_weight=sw).solve()
    assert res.status == ref.status == "optimal" and res.method == "dcd_svc"
    assert res.certificate.kkt_violation < 1e-6 and res.certificate.feasibility <= 1e-9
    assert abs(float(y @ res.alpha)) <= 1e-12 * res.alpha.sum()
    box = C * (1.0 if sw is None else sw)
    assert np.all(res.alpha >= 0) and np.all(res.alpha <= box)
    for other in (ref, oracle):
        assert res.dual_objective == pytest.approx(other.dual_objective, rel=1e-6)
        np.testing.assert_allclose(res.w, other.w, atol=1e-4 * max(1.0, np.abs(other.w).max()))
    lo, hi = oracle.b_interval
    assert lo - 1e-4 <= res.b <= hi + 1e-4 or res.b == pytest.approx(oracle.b, abs=1e-4)
    np.testing.assert_allclose(res.w, np.asarray(X.T @ (res.alpha * y)).ravel(), atol=1e-12)


def test_svc_default_tol_and_determinism():
    X, y = problem(n=400, d=6, seed=30)
    a = dcd_svc(X, y, 2.0)
    b = dcd_svc(X, y, 2.0)
    assert a.status == "optimal" and a.certificate.kkt_violation < 1e-3 and a.tol == 1e-3
    np.testing.assert_array_equal(a.alpha, b.alpha)
    assert a.b == b.b and a.iterations == b.iterations
    ref = smo(X, y, 2.0, kernel="linear")
    assert a.certificate.gap <= 1e-3 and ref.certificate.gap <= 1e-3
    assert abs(a.primal_objective - ref.primal_objective) <= 2e-3 * ref.primal_objective
    assert np.mean(a.predict(X) == ref.predict(X)) >= 0.99


def test_svc_balancing_keeps_bounds_and_the_box():
    y = np.array([1.0, 1.0, 1.0, -1.0, -1.0])
    box = np.full(5, 2.0)
    a = balanced(np.array([2.0, 0.5, 0.0, 2.0, 0.2]), y, box)  # y . alpha = 0.3
    assert a[0] == 2.0 and a[2] == 0.0 and a[3] == 2.0  # bounded ones stay
    assert float(y @ a) == pytest.approx(0.0, abs=1e-15)
    assert np.all((a >= 0) & (a <= box))
    short = balanced(np.array([2.0, 2.0, 2.0, 2.0, 0.0]), y, box)  # no free alpha: scaled
    assert float(y @ short) == pytest.approx(0.0, abs=1e-15) and np.all(short <= box)


def test_svc_cap_warns():
    X, y = problem(n=300, d=5, seed=8)
    with pytest.warns(ConvergenceWarning, match=r"dcd_svc stopped at max_iter=3"):
        res = dcd_svc(X, y, 10.0, tol=1e-9, max_iter=3)
    assert res.status == "max_iter" and res.iterations == 3


@pytest.mark.parametrize(("kwargs", "name"), [({"C": -1.0}, "C"), ({"tol": -1.0}, "tol"),
                                              ({"max_iter": 1.5}, "max_iter")])
def test_svc_bad_input_names_the_argument(kwargs, name):
    X, y = problem(n=10, d=2)
    with pytest.raises(ValueError, match=f"`{name}`"):
        dcd_svc(X, y, **kwargs)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(4, 40), d=st.integers(1, 5),
       C=st.floats(0.05, 5.0), sparse=st.booleans())
def test_property_svc_is_certified_and_matches_smo(seed, n, d, C, sparse):
    X, y = problem(n=n, d=d, seed=seed, sparse=sparse, noise=1.0)
    res = dcd_svc(X, y, C, tol=1e-5, max_iter=500_000)
    ref = smo(X, y, C, kernel="linear", tol=1e-5)
    assert res.status == "optimal" and res.certificate.kkt_violation < 1e-5
    # both within their certified gaps of the optimum
    gaps = (res.certificate.gap + ref.certificate.gap) * max(abs(ref.primal_objective), 1e-12)
    assert abs(res.certificate.dual_objective - ref.certificate.dual_objective) <= gaps + 1e-9



def test_the_exact_finish_is_not_tried_when_its_matrices_outgrow_the_data(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from maxmargin.tolerances import DCD_FINISH_MIN_BYTES, DCD_SVC_FINISH_MATRICES

    svc = sys.modules["maxmargin.algorithms.dcd.svc"]
    calls: list[int] = []
    finish = svc.finish_alpha
    monkeypatch.setattr(svc, "finish_alpha", lambda *a, **k: calls.append(1) or finish(*a, **k))
    rng = np.random.default_rng(0)
    limit = math.isqrt(DCD_FINISH_MIN_BYTES // (8 * DCD_SVC_FINISH_MATRICES)) - 1
    n = limit + 50
    X = rng.standard_normal((n, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    box = np.ones(n)
    # every variable free: (n + 1)^2 entries per matrix, more than the data's bytes allow
    assert svc.exact_finish(X, y, np.full(n, 0.5), box, 1e-3, 1e30) is None
    assert calls == []
    few = np.zeros(n)  # four free variables: tried (its own judge decides what it returns)
    few[:4] = 0.5
    for data in (X, sp.csr_matrix(X)):
        svc.exact_finish(data, y, few, box, 1e-3, 1e30)
    assert calls == [1, 1]


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("penalty", ["l2", "l1"])
def test_the_certificate_with_an_implied_bias_column_is_the_formed_rows_one(sparse, loss,
                                                                            penalty):
    """``certify_liblinear(w~, X, ..., intercept_scaling=s)`` never forms the rows ``(x_i, s)``
    and judges as the certificate of the formed rows (:func:`liblinear_rows`) does; a ``w~``
    without its bias weight is refused."""
    X, y = problem(60, 6, seed=3, sparse=sparse)
    s = 2.5
    w = np.random.default_rng(1).standard_normal(7) * 0.3
    alpha = np.random.default_rng(2).random(60)
    implied = certify_liblinear(w, X, y, 1.5, loss=loss, penalty=penalty, alpha=alpha,
                                intercept_scaling=s)
    formed = certify_liblinear(w, liblinear_rows(X, s), y, 1.5, loss=loss, penalty=penalty,
                               alpha=alpha)
    for field in ("primal_objective", "dual_objective", "gap", "kkt_violation"):
        assert getattr(implied, field) == pytest.approx(getattr(formed, field), rel=1e-12,
                                                        abs=1e-14)
    with pytest.raises(ValueError, match="`w`"):
        certify_liblinear(w[:6], X, y, 1.5, intercept_scaling=s)


def test_linear_solvers_make_no_copy_of_sparse_rows():
    """On CSR rows ``dcd`` (both losses) and ``cs_dcd`` allocate (NumPy, traced) well under
    one copy of the data: their certificates imply the bias column, the row norms are summed
    in blocks and validation makes no temporary of the data's size (the multi-class
    certificate's ``(n, K)`` arrays aside); ``dcd_svc`` one copy, the training rows its answer
    keeps (as every :class:`~maxmargin.results.SVMSolution`)."""
    import tracemalloc

    from benchmarks.bench_dcd import make_sparse
    from maxmargin.algorithms import cs_dcd

    X, y = make_sparse(20_000, 20_000, seed=5)
    size = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    classes = (np.arange(y.size) % 3).astype(np.int64)
    calls = {"hinge": lambda: dcd(X, y, loss="hinge", solver="dual"),
             "squared_hinge": lambda: dcd(X, y, loss="squared_hinge", solver="dual"),
             "svc": lambda: dcd_svc(X, y),
             "crammer_singer": lambda: cs_dcd(X, classes, max_iter=5)}
    for name, call in calls.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            call()  # compiled, then measured
            tracemalloc.start()
            call()
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        # dcd_svc's answer keeps a copy; the multi-class certificate holds (n, K) arrays
        limit = {"svc": 1.5, "crammer_singer": 1.0}.get(name, 0.5)
        assert peak < limit * size, (name, peak, size)


@pytest.mark.parametrize("seed", range(3))
def test_stalled_squared_hinge_passes_hand_over_to_the_primal_newton_method(seed):
    """Features of very different scales far from the origin (``C max ||x||^2`` about 1e10,
    ``n < d``): the dual passes stall at a relative gap of 1, and ``solver="auto"`` then
    solves the problem by the primal Newton method (``method="dcd+newton/squared_hinge"``),
    certified, with the CVXPY oracle's objective; ``solver="dual"`` keeps the honest
    ``max_iter``."""
    rng = np.random.default_rng(seed)
    n, d = 40, 50
    X = rng.standard_normal((n, d)) * np.exp(rng.uniform(-3, 3, d))
    X += rng.standard_normal(d) * 3000.0
    score = X @ rng.standard_normal(d) + rng.normal(size=n) * X.std()
    y = np.where(score > np.median(score), 1.0, -1.0)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        stalled = dcd(X, y, 30.0, solver="dual", max_iter=300)
    assert stalled.status == "max_iter" and stalled.method == "dcd/squared_hinge"
    res = dcd(X, y, 30.0, max_iter=300, tol=1e-6)
    assert res.status == "optimal" and res.method == "dcd+newton/squared_hinge"
    assert res.certificate.gap <= 1e-6 and res.iterations > 300
    ref = liblinear_primal(X, y, 30.0, loss="squared_hinge", intercept_scaling=1.0).solve()
    assert ref.status == "optimal"
    assert res.primal_objective >= ref.dual_objective * (1 - 1e-9)
    assert ref.primal_objective >= res.dual_objective * (1 - 1e-9)
    assert res.primal_objective == pytest.approx(ref.primal_objective, rel=1e-5)


@pytest.mark.parametrize("offset", [1e2, 1e6])
def test_dcd_svc_verdict_and_answer_are_invariant_under_a_translation(offset):
    """SVC's problem does not change under ``X -> X + t`` (``b`` shifts by ``-<w, t>``); data
    far from the origin are solved centred, as ``smo`` does (uncentred, the bias column's scale
    and the penalty came from the offset, and the run reached ``max_iter``)."""
    rng = np.random.default_rng(138)
    y = np.where(rng.random(40) < 0.5, -1.0, 1.0)
    X = rng.standard_normal((40, 10)) + 0.7 * y[:, None]
    t = offset * X.std() * rng.standard_normal(10)
    base = dcd_svc(X, y, 2.19)
    moved = dcd_svc(X + t, y, 2.19)
    assert base.status == moved.status == "optimal"
    np.testing.assert_allclose(moved.w, base.w, rtol=1e-6, atol=1e-6 * np.abs(base.w).max())
    assert moved.b + moved.w @ t == pytest.approx(base.b, rel=1e-6, abs=1e-6)
    assert moved.dual_objective == pytest.approx(base.dual_objective, rel=1e-6)
    np.testing.assert_array_equal(moved.X_train, X + t)
    np.testing.assert_allclose(moved.decision_function(X + t), base.decision_function(X),
                               rtol=1e-5, atol=1e-5)
