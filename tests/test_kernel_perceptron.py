"""The kernel perceptron: Li Hang's dual form, equivalence with the primal perceptron (linear
kernel, and the explicit quadratic feature map of (1 + x.z)^2), XOR, and any labelling with RBF."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from fixtures import PERCEPTRON_LI_HANG, XOR_POLY, XOR_X, XOR_Y
from fixtures_perceptron import RUN_STRATEGIES, quadratic_features, random_labels, separable_data
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel

from maxmargin.algorithms.kernel_perceptron import kernel_perceptron
from maxmargin.algorithms.perceptron import perceptron
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.kernels import PolyKernel

LH = PERCEPTRON_LI_HANG
QUADRATIC = {"kernel": "poly", "gamma": 1.0, "coef0": 1.0, "degree": 2}  # (1 + x.z)^2


def quietly(fn, *args, **kwargs):
    """Call ``fn`` with ConvergenceWarning silenced (for runs cut short on purpose)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fn(*args, **kwargs)


def assert_same_run(kern, prim):
    """The same updates in the same order, the same alpha, b, passes and status."""
    np.testing.assert_array_equal(kern.history["updates"], prim.history["updates"])
    np.testing.assert_array_equal(kern.history["mistakes"], prim.history["mistakes"])
    np.testing.assert_array_equal(kern.alpha, prim.alpha)
    assert kern.mistakes == prim.mistakes and kern.epochs == prim.epochs
    assert kern.status == prim.status and kern.converged == prim.converged
    assert kern.b == pytest.approx(prim.b, abs=1e-12)


def test_li_hang_example_2_2_dual_form():
    res = kernel_perceptron(LH["X"], LH["y"], kernel="linear")
    np.testing.assert_array_equal(res.alpha, LH["alpha"])
    assert res.b == LH["b"] and res.w is None
    assert res.mistakes == 7 and res.epochs == 6 and res.converged
    assert res.method == "kernel_perceptron"
    np.testing.assert_array_equal(res.history["updates"], LH["update_sequence"])
    # f(x) = sum alpha_i y_i x_i . x + b = (1, 1) . x - 3
    np.testing.assert_array_equal(res.decision_function(LH["X"]), [3.0, 4.0, -1.0])


@settings(max_examples=25, deadline=None)
@given(eta=st.sampled_from([1.0, 0.5, 2.0]), **RUN_STRATEGIES)
def test_linear_kernel_reproduces_perceptron_exactly(seed, n, d, bias, eta, order):
    """Small-integer data and power-of-two eta make both sums exact: the runs must coincide."""
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, size=(n, d)).astype(float)
    y = random_labels(rng, n)
    opts = {"eta": eta, "bias": bias, "order": order, "seed": 5, "max_epochs": 10}
    prim = quietly(perceptron, X, y, **opts)
    kern = quietly(kernel_perceptron, X, y, "linear", **opts)
    assert_same_run(kern, prim)
    np.testing.assert_array_equal(X.T @ (kern.alpha * y), prim.w)
    np.testing.assert_allclose(kern.decision_function(X), prim.decision_function(X), atol=1e-12)


def test_linear_kernel_reproduces_perceptron_on_real_valued_data():
    X, y = separable_data(np.random.default_rng(8), 400, 6, gap=0.02)
    prim = perceptron(X, y)
    kern = kernel_perceptron(X, y, kernel="linear")
    assert_same_run(kern, prim)
    np.testing.assert_allclose(X.T @ (kern.alpha * y), prim.w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("bias", [True, False])
def test_quadratic_kernel_is_perceptron_on_explicit_features(bias):
    """Seed 003: the (1 + x.z)^2 kernel perceptron is the perceptron run on phi(X)."""
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(80, 3))
    y = np.where(np.sum(X**2, axis=1) > 0.9, 1.0, -1.0)  # a sphere: separable by a quadratic
    kern = kernel_perceptron(X, y, max_epochs=2000, bias=bias, **QUADRATIC)
    prim = perceptron(quadratic_features(X), y, max_epochs=2000, bias=bias)
    assert kern.converged and prim.converged
    assert_same_run(kern, prim)
    X_new = rng.uniform(-1.5, 1.5, size=(50, 3))
    np.testing.assert_allclose(
        kern.decision_function(X_new),
        prim.decision_function(quadratic_features(X_new)),
        rtol=1e-9,
        atol=1e-9,
    )


@pytest.mark.parametrize(
    "params", [QUADRATIC, {"kernel": "rbf"}, {"kernel": "rbf", "gamma": 2.0, "bias": False}]
)
def test_xor_is_solved_by_nonlinear_kernels(params):
    res = kernel_perceptron(XOR_X, XOR_Y, **params)
    assert res.converged and res.status == "converged"
    assert np.all(XOR_Y * res.decision_function(XOR_X) > 0)
    np.testing.assert_array_equal(res.predict(XOR_X), XOR_Y)


def test_xor_quadratic_run_by_hand():
    """By hand, with K(x, x) = 9 and K = 1 between distinct XOR points:
    pass 1: x1 f = 0 -> update (alpha1 = 1, b = 1); x2 f = 1 + 1 = 2 ok; x3 f = 1 + 1 = 2,
    y f = -2 -> update (alpha3 = 1, b = 0); x4 f = 1 - 1 + 0 = 0 -> update (alpha4 = 1, b = -1).
    pass 2: x1 f = 9 - 1 - 1 - 1 = 6 ok; x2 f = 1 - 1 - 1 - 1 = -2 -> update (alpha2 = 1, b = 0).
    Now f(x) = 8 x1 x2 (eight times the SVM solution of XOR_POLY); pass 3 is clean.
    """
    res = kernel_perceptron(XOR_POLY.X, XOR_POLY.y, **QUADRATIC)
    np.testing.assert_array_equal(res.history["updates"], [0, 2, 3, 1])
    np.testing.assert_array_equal(res.alpha, [1.0, 1.0, 1.0, 1.0])
    assert res.b == 0.0 and res.epochs == 3
    X_new = np.array([[0.5, 2.0], [-1.0, 3.0], [0.2, -0.1]])
    np.testing.assert_allclose(res.decision_function(X_new), 8 * X_new[:, 0] * X_new[:, 1])


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 30))
def test_rbf_separates_any_labelling(seed, n):
    """Distinct points have a positive definite RBF Gram matrix, so every labelling is separable
    in feature space (seed 003's theorem) and the kernel perceptron converges without a bias."""
    rng = np.random.default_rng(seed)
    cells = rng.choice(36, size=n, replace=False)  # distinct points of a 6 x 6 grid, step 0.5
    X = 0.5 * np.column_stack([cells // 6, cells % 6]).astype(float)
    y = random_labels(rng, n)
    res = kernel_perceptron(X, y, kernel="rbf", gamma=1.0, bias=False, max_epochs=10_000)
    assert res.converged
    # the decision values, from scikit-learn's kernel and the dual formula
    f = rbf_kernel(X, X, gamma=1.0) @ (res.alpha * y)
    np.testing.assert_allclose(res.decision_function(X), f, rtol=1e-9, atol=1e-9)
    assert np.all(y * f > 0)


def test_non_separable_with_the_linear_kernel():
    with pytest.warns(ConvergenceWarning, match="kernel_perceptron .* by this kernel"):
        res = kernel_perceptron(XOR_X, XOR_Y, kernel="linear", max_epochs=15)
    assert res.status == "max_iter" and not res.converged and res.epochs == 15


def test_random_order_is_reproducible():
    X, y = separable_data(np.random.default_rng(4), 50, 2)
    a = kernel_perceptron(X, y, kernel="rbf", order="random", seed=3)
    b = kernel_perceptron(X, y, kernel="rbf", order="random", seed=3)
    c = kernel_perceptron(X, y, kernel="rbf", order="random", seed=4)
    assert_same_run(a, b)
    assert not np.array_equal(a.history["updates"], c.history["updates"])


def test_column_cache_does_not_change_the_run():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(300, 3))
    X = X[np.abs(X[:, 0] * X[:, 1]) > 0.1][:120]  # XOR-like labels with a gap
    y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    opts = {"kernel": "poly", "degree": 2, "coef0": 1.0, "gamma": 0.5, "max_epochs": 500}
    cached = kernel_perceptron(X, y, **opts)
    tiny = kernel_perceptron(X, y, cache_size=0.002, **opts)  # room for 2 columns: evictions
    uncached = kernel_perceptron(X, y, cache_size=0, **opts)
    assert cached.converged
    assert_same_run(tiny, cached)
    assert_same_run(uncached, cached)
    # sklearn's polynomial kernel gives the same decision values
    K = polynomial_kernel(X, X, degree=2, gamma=0.5, coef0=1.0)
    np.testing.assert_allclose(cached.decision_function(X), K @ (cached.alpha * y) + cached.b)


def test_kernel_object_and_read_only_result():
    X, y = XOR_X.copy(), XOR_Y.copy()
    res = kernel_perceptron(X, y, PolyKernel(gamma=1.0, degree=2, coef0=1.0))
    np.testing.assert_array_equal(X, XOR_X)
    np.testing.assert_array_equal(y, XOR_Y)
    assert res.converged and isinstance(res.kernel, PolyKernel)
    with pytest.raises(ValueError, match="read-only"):
        res.alpha[0] = 1.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"kernel": "tanh"}, "`kernel` must be one of 'linear', 'rbf', 'poly', 'sigmoid'"),
        ({"gamma": -1.0}, "`gamma` must be positive"),
        ({"kernel": "poly", "degree": 0}, "`degree` must be an integer >= 1"),
        ({"cache_size": -1.0}, "`cache_size` must be non-negative"),
        ({"eta": -0.5}, "`eta` must be positive"),
        ({"max_epochs": 0}, "`max_epochs` must be an integer >= 1"),
        ({"order": "sorted"}, "`order` must be one of"),
        ({"bias": "no"}, "`bias` must be True or False"),
    ],
)
def test_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        kernel_perceptron(XOR_X, XOR_Y, **kwargs)
