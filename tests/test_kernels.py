"""maxmargin.kernels against scikit-learn's pairwise kernels and SVC's gamma, and the
quadratic feature map identity of seed 003."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from fixtures_perceptron import quadratic_features
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel
from sklearn.svm import SVC

from maxmargin.kernels import KERNEL_NAMES, LinearKernel, PolyKernel, RBFKernel, make_kernel
from maxmargin.kernels.objects import training_kernel

RNG = np.random.default_rng(0)
A = RNG.normal(size=(7, 3))
B = RNG.normal(size=(5, 3))
Y7 = np.array([1.0, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0])


@pytest.mark.parametrize(
    ("kern", "reference"),
    [
        (LinearKernel(), lambda P, Q: linear_kernel(P, Q)),
        (RBFKernel(gamma=0.7), lambda P, Q: rbf_kernel(P, Q, gamma=0.7)),
        (RBFKernel(gamma=3.0), lambda P, Q: rbf_kernel(P, Q, gamma=3.0)),
        (PolyKernel(1.0, 2, 1.0), lambda P, Q: polynomial_kernel(P, Q, degree=2, gamma=1, coef0=1)),
        (
            PolyKernel(gamma=0.3, degree=3, coef0=-0.5),
            lambda P, Q: polynomial_kernel(P, Q, degree=3, gamma=0.3, coef0=-0.5),
        ),
        (PolyKernel(2.0, 1, 0.0), lambda P, Q: polynomial_kernel(P, Q, degree=1, gamma=2, coef0=0)),
        (
            PolyKernel(0.4, 5, 1.5),
            lambda P, Q: polynomial_kernel(P, Q, degree=5, gamma=0.4, coef0=1.5),
        ),
    ],
)
def test_kernels_match_sklearn(kern, reference):
    np.testing.assert_allclose(kern(A, B), reference(A, B), rtol=1e-12, atol=1e-14)
    G = kern.gram(A)
    np.testing.assert_allclose(G, reference(A, A), rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(G, G.T)  # exactly symmetric
    np.testing.assert_allclose(kern.diag(A), np.diag(reference(A, A)), rtol=1e-12)
    for i in (0, 4):
        np.testing.assert_allclose(kern.column(A, i), G[:, i], rtol=1e-12, atol=1e-14)
    idx = np.array([5, 1, 1])
    np.testing.assert_allclose(kern.columns(A, idx), G[:, idx], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(
    "kern", [LinearKernel(), RBFKernel(0.5), PolyKernel(0.5, 3, 1.0), PolyKernel(1.0, 2, 0.0)]
)
def test_gram_is_psd(kern):
    X = np.vstack([RNG.normal(size=(30, 4)), RNG.normal(size=(2, 4))])
    X[-1] = X[0]  # a duplicate point: singular but still PSD
    eig = np.linalg.eigvalsh(kern.gram(X))
    assert eig.min() >= -1e-10 * max(1.0, eig.max())


def test_rbf_gram_has_unit_diagonal_and_no_negative_distances():
    X = np.array([[1e8, 1.0], [1e8, 1.0], [1e8 + 1.0, 1.0]])
    G = RBFKernel(gamma=1.0).gram(X)
    np.testing.assert_array_equal(np.diag(G), 1.0)
    assert np.all(G <= 1.0) and np.all(G >= 0.0)
    assert G[0, 1] == 1.0  # ||x - z||^2 rounding below 0 is clipped


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), d=st.integers(1, 5))
def test_quadratic_feature_map_identity(seed, d):
    """Seed 003: phi(x) . phi(z) = (1 + x . z)^2 for the map with sqrt(2) factors."""
    rng = np.random.default_rng(seed)
    X, Z = rng.normal(size=(6, d)), rng.normal(size=(4, d))
    phi_x, phi_z = quadratic_features(X), quadratic_features(Z)
    assert phi_x.shape[1] == d + d * (d - 1) // 2 + d + 1
    expected = (1.0 + X @ Z.T) ** 2
    np.testing.assert_allclose(phi_x @ phi_z.T, expected, rtol=1e-10, atol=1e-10)
    quad = make_kernel("poly", gamma=1.0, degree=2, coef0=1.0)
    np.testing.assert_allclose(quad(X, Z), phi_x @ phi_z.T, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("gamma", ["scale", "auto"])
@pytest.mark.parametrize("name", ["rbf", "poly"])
def test_gamma_strings_match_svc(gamma, name):
    X = RNG.normal(scale=3.0, size=(7, 3))
    svc = SVC(kernel=name, gamma=gamma).fit(X, Y7)
    kern = make_kernel(name, gamma=gamma, X=X)
    assert kern.gamma == pytest.approx(svc._gamma, rel=1e-14)
    if name == "poly":
        assert kern.degree == 3 and kern.coef0 == 0.0  # SVC's defaults


def test_gamma_scale_with_constant_X_matches_svc():
    X = np.ones((7, 2))
    svc = SVC(kernel="rbf", gamma="scale").fit(X, Y7)
    assert make_kernel("rbf", X=X).gamma == svc._gamma == 1.0


def test_make_kernel():
    assert isinstance(make_kernel("linear"), LinearKernel)
    assert make_kernel("linear", gamma="bogus") == LinearKernel()  # gamma is not used
    k = RBFKernel(2.0)
    assert make_kernel(k, gamma=-5) is k  # a kernel object passes through unchanged
    p = make_kernel("poly", gamma=0.5, degree=4.0, coef0=1)
    assert p == PolyKernel(0.5, 4, 1.0) and isinstance(p.degree, int)
    assert set(KERNEL_NAMES) == {"linear", "rbf", "poly", "sigmoid"}


@pytest.mark.parametrize("name", KERNEL_NAMES)
@pytest.mark.parametrize("gamma", ["scale", "auto", 0.3])
def test_training_kernel_is_make_kernel_on_validated_data(name, gamma):
    """The estimator's kernel (data validated by the caller) is :func:`make_kernel`'s, and
    kernel values that overflow on the data are refused in the same words."""
    X = np.random.default_rng(2).normal(size=(40, 5)) * 3.0 + 1.0
    assert training_kernel(name, gamma, 3, 0.5, X) == make_kernel(
        name, gamma=gamma, degree=3, coef0=0.5, X=X)
    k = RBFKernel(2.0)
    assert training_kernel(k, "scale", 3, 0.0, X) is k
    big = np.full((3, 2), 1e60)  # below the magnitude limit; (x . x)^3 overflows
    for make in (lambda: make_kernel("poly", gamma=1.0, degree=3, X=big),
                 lambda: training_kernel("poly", 1.0, 3, 0.0, big)):
        with pytest.raises(ValueError, match=r"`X`.*finite"):
            make()


def test_ids_params_and_descriptions():
    assert (LinearKernel().kind, RBFKernel().kind, PolyKernel().kind) == (0, 1, 2)
    assert LinearKernel().params == (0.0, 0.0, 1.0)
    assert RBFKernel(0.25).params == (0.25, 0.0, 1.0)
    assert PolyKernel(0.5, 3, 2.0).params == (0.5, 2.0, 3.0)
    assert LinearKernel().describe() == "linear"
    assert RBFKernel(0.25).describe() == "rbf(gamma=0.25)"
    assert PolyKernel(0.5, 3, 2.0).describe() == "poly(gamma=0.5, degree=3, coef0=2)"
    with pytest.raises(dataclasses.FrozenInstanceError):
        RBFKernel(1.0).gamma = 2.0


def test_kernels_do_not_modify_inputs():
    A0, B0 = A.copy(), B.copy()
    for kern in (LinearKernel(), RBFKernel(1.0), PolyKernel(1.0, 2, 1.0)):
        kern(A, B)
        kern.gram(A)
        kern.diag(A)
        kern.columns(A, [0, 1])
    np.testing.assert_array_equal(A, A0)
    np.testing.assert_array_equal(B, B0)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: make_kernel("tanh"),
         r"`kernel` must be one of 'linear', 'rbf', 'poly', 'sigmoid'"),
        (lambda: make_kernel(None), r"`kernel` must be one of"),
        (lambda: make_kernel("rbf", gamma=-1.0), r"`gamma` must be positive; got -1\.0"),
        (lambda: make_kernel("rbf", gamma=0), r"`gamma` must be positive; got 0\.0"),
        (lambda: make_kernel("rbf", gamma=np.inf), r"`gamma` must be finite"),
        (
            lambda: make_kernel("rbf", gamma=None),
            r"`gamma` must be a positive number, 'scale' or 'auto'; got None",
        ),
        (lambda: make_kernel("poly", gamma=True), r"`gamma` must be a positive number, 'scale'"),
        (lambda: make_kernel("rbf", gamma="big", X=A), r"`gamma` must be one of 'scale', 'auto'"),
        (lambda: make_kernel("rbf", gamma="scale"), r"`gamma`='scale' needs the training data"),
        (lambda: make_kernel("rbf", gamma="auto", X=[[np.nan]]), r"`X` must be finite"),
        (lambda: make_kernel("poly", gamma=1.0, degree=0), r"`degree` must be an integer >= 1"),
        (lambda: make_kernel("poly", gamma=1.0, degree=2.5), r"`degree` must be an integer >= 1"),
        (lambda: make_kernel("poly", gamma=1.0, coef0=np.nan), r"`coef0` must be finite"),
        (lambda: make_kernel("poly", gamma=1.0, coef0="1"), r"`coef0` must be a real number"),
        (lambda: RBFKernel(gamma=-0.5), r"`gamma` must be positive"),
        (lambda: PolyKernel(gamma=1.0, degree=-1), r"`degree` must be an integer >= 1"),
    ],
)
def test_bad_kernel_parameters(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 40), d=st.integers(1, 30),
       density=st.floats(0.0, 1.0), block=st.sampled_from([1, 2, 7, 64, 1 << 20]))
def test_sparse_row_norms_in_blocks_are_the_same_bits(seed, n, d, density, block):
    """``row_norms2`` squares a CSR matrix's entries a block at a time (empty rows, a trailing
    empty row and blocks smaller than a row included) and gives the bits of
    ``X.multiply(X).sum(axis=1)``, its brute-force definition; ``X`` is not modified."""
    import scipy.sparse as sp

    from maxmargin.kernels import base

    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=rng) * 1e3
    X = sp.csr_matrix(X.toarray() * (rng.random((n, 1)) < 0.7))  # whole rows empty
    before = X.copy()
    got = base.row_norms2(X, block)
    assert np.array_equal(got, np.asarray(X.multiply(X).sum(axis=1)).ravel())
    assert np.array_equal(got, np.einsum("ij,ij->i", X.toarray(), X.toarray())) or np.allclose(
        got, np.einsum("ij,ij->i", X.toarray(), X.toarray()), rtol=1e-14, atol=0.0)
    assert (X != before).nnz == 0
