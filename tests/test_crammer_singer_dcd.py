"""``cs_dcd``: Crammer and Singer's multi-class SVM by the sequential dual method, against the
CVXPY oracle (``crammer_singer_primal``) and the float64 judge."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from maxmargin import MaxMarginLinearClassifier
from maxmargin.algorithms import cs_dcd
from maxmargin.algorithms.dcd.crammer_singer import sub_problem
from maxmargin.certificate import liblinear_rows
from maxmargin.certificate_multiclass import certify_crammer_singer, crammer_singer_objective
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.formulations import crammer_singer_primal


def _blobs(seed: int, n: int, d: int, K: int, *, sparse: bool = False,
           spread: float = 1.0) -> tuple:
    """``K`` Gaussian clusters (centres ``3 spread`` apart on average), every class present;
    sparse: about half of the entries zeroed, CSR."""
    rng = np.random.default_rng(seed)
    centres = 3.0 * spread * rng.standard_normal((K, d))
    y = np.arange(n) % K
    rng.shuffle(y)
    X = centres[y] + rng.standard_normal((n, d))
    if sparse:
        X = sp.csr_matrix(X * (rng.random((n, d)) < 0.5))
    return X, y


def _agree(sol, ref, X, scaling) -> None:
    """Same objective to 1e-6 relative; same predictions away from ties; both certified."""
    assert sol.status == "optimal" and ref.status == "optimal"
    assert abs(sol.primal_objective - ref.primal_objective) <= 1e-6 * abs(ref.primal_objective)
    # P is 1-strongly convex in W: ||W - W*||^2 <= 2 (P(W) - P*) bounds the weights' distance
    bound = np.sqrt(2.0 * abs(sol.primal_objective) * 2e-6) + 1e-6
    assert np.linalg.norm(sol.W_tilde - ref.W_tilde) <= 2.0 * bound
    S_ref = np.asarray(ref.decision_function(X))
    top = np.sort(S_ref, axis=1)
    clear = top[:, -1] - top[:, -2] > 1e-3
    assert np.array_equal(sol.predict(X)[clear], ref.predict(X)[clear])
    if scaling is None:
        assert np.all(sol.b == 0.0)


@pytest.mark.parametrize("K", [2, 3, 4, 5])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("scaling", [1.0, None, 2.5])
def test_agrees_with_the_cvxpy_oracle(K, sparse, scaling) -> None:
    seed = 10 * K + sparse
    X, y = _blobs(seed, 40 + 7 * K, 4, K, sparse=sparse, spread=0.4)
    sw = np.random.default_rng(seed).uniform(0.2, 3.0, y.size)
    for weights in (None, sw):
        sol = cs_dcd(X, y, 0.7, intercept_scaling=scaling, sample_weight=weights, tol=1e-9,
                     random_state=seed)
        ref = crammer_singer_primal(X, y, 0.7, intercept_scaling=scaling,
                                    sample_weight=weights).solve()
        _agree(sol, ref, X, scaling)


def test_sample_weight_is_C_per_sample() -> None:
    """Integer weights solve the problem with the rows repeated."""
    X, y = _blobs(3, 30, 3, 3, spread=0.3)
    reps = np.arange(30) % 3 + 1
    sol = cs_dcd(X, y, 1.0, sample_weight=reps, tol=1e-10)
    big = cs_dcd(np.repeat(X, reps, axis=0), np.repeat(y, reps), 1.0, tol=1e-10)
    assert np.isclose(sol.primal_objective, big.primal_objective, rtol=1e-8)
    np.testing.assert_allclose(sol.W_tilde, big.W_tilde, atol=1e-4)


@pytest.mark.parametrize("sparse", [False, True])
def test_certificate_verdict_and_dual_feasibility(sparse) -> None:
    X, y = _blobs(5, 120, 6, 4, sparse=sparse, spread=0.3)
    C = np.full(y.size, 2.0)
    sol = cs_dcd(X, y, 2.0, tol=1e-6)
    rows = liblinear_rows(X, 1.0)
    lam = -np.array(sol.alpha)
    lam[np.arange(y.size), y] += C
    cert = certify_crammer_singer(sol.W_tilde, rows, y, C, lam=lam)
    assert sol.status == "optimal" and cert.gap <= 1e-6 and sol.certificate.gap <= 1e-6
    assert np.isclose(cert.primal_objective, crammer_singer_objective(sol.W_tilde, rows, y, C))
    np.testing.assert_allclose(sol.alpha.sum(axis=1), 0.0, atol=1e-12)
    assert np.all(lam >= -1e-12)
    # W~ is the dual variables' own weights, recomputed
    np.testing.assert_allclose(sol.W_tilde, np.asarray(rows.T @ sol.alpha).T, atol=1e-12)
    np.testing.assert_allclose(sol.b, sol.W_tilde[:, -1])
    assert sol.history["gap"][-1] <= 1e-6


@pytest.mark.parametrize("sparse", [False, True])
def test_same_bits_for_a_fixed_seed(sparse) -> None:
    X, y = _blobs(7, 200, 5, 3, sparse=sparse, spread=0.2)
    a = cs_dcd(X, y, 1.0, tol=1e-5, random_state=4)
    b = cs_dcd(X, y, 1.0, tol=1e-5, random_state=4)
    c = cs_dcd(X, y, 1.0, tol=1e-5, random_state=5)
    assert a.W.tobytes() == b.W.tobytes() and a.alpha.tobytes() == b.alpha.tobytes()
    assert a.iterations == b.iterations
    assert a.alpha.tobytes() != c.alpha.tobytes()  # the order does depend on the seed


def test_inputs_are_not_modified_and_sparse_is_not_densified() -> None:
    X, y = _blobs(8, 60, 4, 3, sparse=True)
    Xc, yc = X.copy(), y.copy()
    sol = cs_dcd(X, y, 1.0, tol=1e-6)
    assert (X != Xc).nnz == 0 and np.array_equal(y, yc)
    dense = cs_dcd(X.toarray(), y, 1.0, tol=1e-6)
    assert np.isclose(sol.primal_objective, dense.primal_objective, rtol=1e-5)


def test_zero_rows_and_no_intercept() -> None:
    """A zero row without intercept: its multipliers sit on the other classes at once."""
    X, y = _blobs(9, 30, 3, 3)
    X[:4] = 0.0
    sol = cs_dcd(X, y, 1.0, intercept_scaling=None, tol=1e-9)
    ref = crammer_singer_primal(X, y, 1.0, intercept_scaling=None).solve()
    assert sol.status == "optimal"
    assert np.isclose(sol.primal_objective, ref.primal_objective, rtol=1e-6)


@pytest.mark.parametrize("s", [1e-4, 1e4])
def test_the_verdict_is_invariant_under_units(s: float) -> None:
    """No intercept: ``X -> s X``, ``C -> C / s^2`` is the same problem (``alpha`` and the
    objectives scale by ``1 / s^2``). At ``C`` of 4e-16 every step of ``alpha`` is below 1e-12;
    each must still reach ``W`` (a step skipped by its size left ``W`` behind ``alpha``, and the
    run at ``max_iter`` with a relative gap near 1)."""
    X, y = _blobs(164, 40, 4, 3)
    base = cs_dcd(X, y, 4.0, intercept_scaling=None, tol=1e-3)
    scaled = cs_dcd(s * X, y, 4.0 / s**2, intercept_scaling=None, tol=1e-3)
    assert base.status == scaled.status == "optimal"
    assert scaled.dual_objective * s**2 == pytest.approx(base.dual_objective, rel=1e-2)
    assert scaled.certificate.gap <= 1e-3


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("C", [1783.0, 1e5])
def test_the_exact_finish_where_the_passes_crawl(seed, C) -> None:
    """Nearly separable classes at large ``C``: the passes alone crawl (at ``tol = 1e-8``
    they took 60,000 to 100,000 passes, and 7 of these 12 problems ended ``max_iter`` at
    relative gaps of 0.06 to 0.98); the active-set finish ends at the first check with the
    oracle's objective and a certified gap below ``tol = 1e-6``; with a bias column and
    without."""
    rng = np.random.default_rng(seed)
    n, d, K = 40, 10, 3
    y = rng.integers(0, K, n)
    y[:K] = np.arange(K)
    X = rng.normal(size=(n, d)) + 1.5 * np.eye(K, d)[y]
    for scaling in (1.0, None):
        sol = cs_dcd(X, y, C, intercept_scaling=scaling, tol=1e-6)
        assert sol.status == "optimal" and "finished exactly" in sol.message, sol.message
        assert sol.iterations <= 20 and sol.certificate.gap <= 1e-6
        np.testing.assert_allclose(sol.alpha.sum(axis=1), 0.0, atol=1e-12 * C)
        ref = crammer_singer_primal(X, y, C, intercept_scaling=scaling).solve()
        assert sol.primal_objective <= ref.primal_objective * (1 + 1e-6)
        assert sol.primal_objective >= ref.dual_objective * (1 - 1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("s", [2.0**-13, 2.0**-7, 2.0**7, 2.0**13])
def test_the_exact_finish_is_the_same_in_any_units(seed, s) -> None:
    """``X -> s X``, ``C -> C / s^2`` (powers of 2: exact, so the passes are the same bits):
    the finish's Newton system keeps its conditioning (its border in the Gram block's units),
    so the same verdict at the same pass and the objective ``P / s^2`` (a symmetry stress
    run: the border of ones made systems of scaled copies inconsistent, and ``max_iter``)."""
    rng = np.random.default_rng(seed)
    n, d, K = 40, 3, 3
    y = rng.integers(0, K, n)
    y[:K] = np.arange(K)
    X = rng.normal(size=(n, d)) + 2.0 * np.eye(K, d)[y]
    C = 1e4
    base = cs_dcd(X, y, C, intercept_scaling=None, tol=1e-6)
    scaled = cs_dcd(X * s, y, C / s**2, intercept_scaling=None, tol=1e-6)
    assert base.status == scaled.status == "optimal", (base.message, scaled.message)
    assert "finished exactly" in base.message and "finished exactly" in scaled.message
    assert scaled.iterations == base.iterations
    assert s**2 * scaled.primal_objective == pytest.approx(base.primal_objective, rel=1e-6)


def test_max_iter_warns_with_cause_and_remedy() -> None:
    X, y = _blobs(11, 300, 5, 4, spread=0.1)
    with pytest.warns(ConvergenceWarning, match="raise `max_iter`"):
        sol = cs_dcd(X, y, 100.0, tol=1e-12, max_iter=3)
    assert sol.status == "max_iter" and sol.iterations == 3
    assert sol.certificate.gap > 1e-12


@pytest.mark.parametrize("kwargs, match", [
    (dict(C=-1.0), "`C`"), (dict(C=0.0), "`C`"), (dict(tol=0.0), "`tol`"),
    (dict(max_iter=0), "`max_iter`"), (dict(intercept_scaling=0.0), "`intercept_scaling`"),
    (dict(n_classes=1), "`n_classes`"), (dict(n_classes=2), "n_classes"),
    (dict(sample_weight=np.ones(3)), "`sample_weight`"), (dict(random_state=-1), "random_state"),
    (dict(shrinking="yes"), "`shrinking`"),
])
def test_bad_input(kwargs, match) -> None:
    X, y = _blobs(12, 20, 3, 3)
    with pytest.raises((ValueError, TypeError), match=match):
        cs_dcd(X, y, **kwargs)


def test_bad_labels() -> None:
    X, _ = _blobs(12, 20, 3, 3)
    for y in (-np.ones(20), np.zeros(20), np.full(20, 0.5), np.arange(19)):
        with pytest.raises(ValueError, match="`y`"):
            cs_dcd(X, y)
    with pytest.raises(ValueError, match="`X`"):
        cs_dcd(np.full((20, 3), np.nan), np.arange(20) % 3)


def _random_problem(seed: int, n: int, d: int, K: int, weighted: bool) -> tuple:
    """Gaussian rows of a random scale, random labels (classes 0 and 1 present), weights from
    [0, 2) when ``weighted``."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.1, 3.0)
    y = rng.integers(0, K, n)
    y[:2] = [0, 1]
    return X, y, (rng.uniform(0.0, 2.0, n) if weighted else None)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 30), d=st.integers(1, 5),
       K=st.integers(2, 5), C=st.floats(0.01, 50.0), scaling=st.sampled_from([None, 1.0, 3.0]),
       weighted=st.booleans())
def test_property_feasible_duals_and_an_honest_verdict(seed, n, d, K, C, scaling,
                                                       weighted) -> None:
    """Any problem: the dual variables are feasible, and the status is ``"optimal"`` exactly
    when the judge, run here on the answer alone, finds the gap within ``tol`` (else
    ``"max_iter"`` with a warning: on degenerate problems, few features and many samples at
    large C, the sequential dual method's tail is slow)."""
    X, y, sw = _random_problem(seed, n, d, K, weighted)
    box = C * (np.ones(n) if sw is None else sw)
    tol = 1e-6
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        sol = cs_dcd(X, y, C, n_classes=K, intercept_scaling=scaling, sample_weight=sw,
                     tol=tol, max_iter=3_000, random_state=seed)
    alpha = np.array(sol.alpha)
    scale = max(1.0, float(box.max()))
    np.testing.assert_allclose(alpha.sum(axis=1), 0.0, atol=1e-9 * scale)
    upper = np.zeros((n, K))
    upper[np.arange(n), y] = box
    assert np.all(alpha <= upper + 1e-12 * scale)
    assert np.all(alpha[np.arange(n), y] >= -1e-9 * scale)
    cert = certify_crammer_singer(sol.W_tilde, liblinear_rows(X, scaling), y, box,
                                  lam=upper - alpha)
    assert (sol.status == "optimal") == (cert.gap <= tol)
    assert (sol.status == "max_iter") == bool(caught)
    assert np.isclose(cert.gap, sol.certificate.gap, rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("seed", range(40))
def test_small_random_problems_are_certified(seed) -> None:
    """A seeded campaign at ``tol = 1e-4``, C up to 10: every answer certified."""
    rng = np.random.default_rng(1000 + seed)
    n, d, K = int(rng.integers(2, 40)), int(rng.integers(1, 6)), int(rng.integers(2, 6))
    C = float(10.0 ** rng.uniform(-2, 1))
    scaling = [None, 1.0, 3.0][seed % 3]
    X, y, sw = _random_problem(seed, n, d, K, seed % 2 == 0)
    sol = cs_dcd(X, y, C, n_classes=K, intercept_scaling=scaling, sample_weight=sw, tol=1e-4,
                 random_state=seed)
    assert sol.status == "optimal" and sol.certificate.gap <= 1e-4


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 6), y_active=st.booleans(),
       A=st.floats(1e-3, 100.0), C=st.floats(0.0, 10.0))
def test_sub_problem_is_the_projection(seed, k, y_active, A, C) -> None:
    """The sorted solution against the KKT conditions of ``min A/2 ||a||^2 + B . a``, ``a <=
    U``, ``sum a = -C [y set aside]``: ``a_m = min(U_m, (beta - B_m) / A)`` for one ``beta``,
    checked by bisection on ``beta``."""
    rng = np.random.default_rng(seed)
    B = rng.standard_normal(k) * 3.0
    y_at = int(rng.integers(0, k)) if y_active else -1
    new, D = np.empty(k), np.empty(k)
    sub_problem(A, B.copy(), k, y_at, C, D, new)
    U = np.zeros(k)
    if y_at >= 0:
        U[y_at] = C
    target = 0.0 if y_active else -C
    assert np.all(new <= U + 1e-12)
    assert abs(new.sum() - target) <= 1e-9 * max(1.0, C)
    lo, hi = -1e6, 1e6
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if np.minimum(U, (mid - B) / A).sum() < target else (lo, mid)
    np.testing.assert_allclose(new, np.minimum(U, (lo - B) / A), atol=1e-7 * max(1.0, C))


@pytest.mark.parametrize("sparse", [False, True])
def test_estimator_uses_cs_dcd_and_matches_the_oracle(sparse) -> None:
    X, y = _blobs(13, 90, 4, 3, sparse=sparse, spread=0.5)
    labels = np.array(["a", "b", "c"])[y]
    sw = np.random.default_rng(13).uniform(0.5, 2.0, y.size)
    fast = MaxMarginLinearClassifier(multi_class="crammer_singer", C=0.5, tol=1e-8,
                                     class_weight="balanced", random_state=0)
    fast.fit(X, labels, sample_weight=sw)
    slow = MaxMarginLinearClassifier(multi_class="crammer_singer", C=0.5, tol=1e-8,
                                     class_weight="balanced", solver="cvxpy")
    slow.fit(X, labels, sample_weight=sw)
    assert fast.solutions_[0].method == "cs_dcd"
    assert slow.solutions_[0].method.startswith("cvxpy/crammer_singer_primal")
    assert fast.solutions_[0].status == "optimal" and slow.solutions_[0].status == "optimal"
    p_fast, p_slow = fast.solutions_[0].primal_objective, slow.solutions_[0].primal_objective
    assert abs(p_fast - p_slow) <= 1e-6 * abs(p_slow)
    np.testing.assert_allclose(fast.coef_, slow.coef_, atol=1e-3)
    np.testing.assert_allclose(fast.intercept_, slow.intercept_, atol=1e-3)
    assert np.mean(fast.predict(X) == slow.predict(X)) >= 0.97
    with pytest.raises(ValueError, match="`solver`"):
        MaxMarginLinearClassifier(multi_class="crammer_singer", solver="cdn").fit(X, labels)


def test_estimator_two_classes_and_max_iter_warning() -> None:
    X, y = _blobs(14, 80, 3, 2, spread=0.3)
    clf = MaxMarginLinearClassifier(multi_class="crammer_singer", tol=1e-8).fit(X, y)
    W, b = clf.solutions_[0].W, clf.solutions_[0].b
    np.testing.assert_allclose(clf.coef_, (W[1] - W[0])[None, :])
    np.testing.assert_allclose(clf.intercept_, [b[1] - b[0]])
    assert np.array_equal(clf.predict(X), clf.solutions_[0].predict(X))
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        MaxMarginLinearClassifier(multi_class="crammer_singer", C=100.0, tol=1e-12,
                                  max_iter=2).fit(X, y)
