"""scipy.sparse CSR input: smo, the kernels, the linear oracles, kkt_residuals and the estimator
give the dense answer, and nothing densifies the whole matrix."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import SVC

import maxmargin.formulations as mf
from maxmargin import LinearKernel, MaxMarginClassifier, PolyKernel, RBFKernel, make_kernel
from maxmargin.algorithms import smo
from maxmargin.verification import kkt_residuals

RNG = np.random.default_rng(0)
X = RNG.normal(size=(120, 40)) * (RNG.random((120, 40)) < 0.15)
Y = np.where(X[:, :6].sum(axis=1) + 0.3 * RNG.normal(size=120) > 0, 1.0, -1.0)
XS = sp.csr_matrix(X)


@pytest.mark.parametrize("kern", [LinearKernel(), RBFKernel(0.2), PolyKernel(0.5, 2, 1.0)],
                         ids=lambda k: k.name)
def test_kernels_on_sparse_equal_dense(kern) -> None:
    np.testing.assert_allclose(kern(XS, XS[:7]), kern(X, X[:7]), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kern.gram(XS), kern.gram(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kern.diag(XS), kern.diag(X), rtol=1e-12)
    np.testing.assert_allclose(kern.column(XS, 3), kern.column(X, 3), rtol=1e-12, atol=1e-12)
    assert make_kernel("rbf", X=XS).gamma == pytest.approx(make_kernel("rbf", X=X).gamma)


@pytest.mark.parametrize("working_set", ["wss2", "wss1", "platt"])
@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
def test_smo_sparse_equals_dense(kernel, working_set) -> None:
    a = smo(X, Y, kernel=kernel, gamma=0.2, tol=1e-8, working_set=working_set)
    b = smo(XS, Y, kernel=kernel, gamma=0.2, tol=1e-8, working_set=working_set)
    assert a.status == b.status == "optimal"
    assert b.dual_objective == pytest.approx(a.dual_objective, rel=1e-9)
    np.testing.assert_allclose(b.decision_function(XS), a.decision_function(X), atol=1e-6)
    np.testing.assert_allclose(b.decision_function(X), b.decision_function(XS), atol=1e-12)
    assert kkt_residuals(b, XS, Y).max < 1e-6


@pytest.mark.parametrize("form", ["hard_margin_primal", "soft_margin_primal", "hinge_loss",
                                  "svm_dual", "svm_dual_hard"])
def test_linear_oracles_sparse_equal_dense(form) -> None:
    build = {
        "hard_margin_primal": lambda Z: mf.hard_margin_primal(Z, Y),
        "soft_margin_primal": lambda Z: mf.soft_margin_primal(Z, Y, 1.0),
        "hinge_loss": lambda Z: mf.hinge_loss(Z, Y, 1.0),
        "svm_dual": lambda Z: mf.svm_dual(Z, Y, 1.0),
        "svm_dual_hard": lambda Z: mf.svm_dual(Z, Y, None),
    }[form]
    a, b = build(X).solve(), build(XS).solve()
    assert a.status == b.status == "optimal"
    assert b.dual_objective == pytest.approx(a.dual_objective, rel=1e-8)
    np.testing.assert_allclose(b.w, a.w, atol=1e-6)


def test_sparse_hard_margin_infeasibility() -> None:
    Xn = sp.vstack([XS, XS[:3]]).tocsr()
    yn = np.r_[Y, -Y[:3]]
    assert mf.svm_dual(Xn, yn, None).solve().status == "infeasible"
    assert mf.hard_margin_primal(Xn, yn).solve().status == "infeasible"
    assert smo(Xn, yn, C=None).status == "infeasible"


def test_estimator_sparse_matches_svc() -> None:
    ours = MaxMarginClassifier(kernel="rbf", gamma=0.2, tol=1e-8).fit(XS, Y)
    svc = SVC(kernel="rbf", gamma=0.2, tol=1e-8).fit(XS, Y)
    np.testing.assert_allclose(ours.decision_function(XS), svc.decision_function(XS), atol=1e-6)
    assert sp.issparse(ours.support_vectors_)


def test_wide_sparse_data_is_never_densified() -> None:
    """n = 400 rows of 5,000,000 features: a dense copy would need 16 GB."""
    rng = np.random.default_rng(1)
    n, d = 400, 5_000_000
    rows = np.repeat(np.arange(n), 20)
    cols = rng.integers(0, d, size=rows.size)
    Xw = sp.csr_matrix((rng.normal(size=rows.size), (rows, cols)), shape=(n, d))
    yw = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    sol = smo(Xw, yw, C=1.0)
    assert sol.status == "optimal" and sol.certificate.meets(1e-3)
    assert sol.w.shape == (d,)
    svc = SVC(kernel="linear", C=1.0, tol=1e-3).fit(Xw, yw)  # LIBSVM on the same CSR matrix
    coef = svc.dual_coef_.toarray().ravel() if sp.issparse(svc.dual_coef_) else svc.dual_coef_[0]
    w = np.asarray(svc.support_vectors_.T @ coef).ravel()
    a = np.abs(coef)
    assert sol.dual_objective == pytest.approx(a.sum() - 0.5 * w @ w, rel=1e-3)


def test_dense_only_doors_say_so() -> None:
    from maxmargin.algorithms import gilbert

    with pytest.raises(ValueError, match=r"`Q` must be a dense array here; got a scipy.sparse "
                                         r"csr matrix"):
        gilbert(XS)
