"""The primal perceptron against hand derivations, a plain-Python loop, Novikoff's theorem and
scikit-learn's Perceptron."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from fixtures import PERCEPTRON_LI_HANG, XOR_X, XOR_Y
from fixtures_perceptron import (
    RUN_STRATEGIES,
    augmented_max_margin,
    random_labels,
    reference_perceptron,
    separable_data,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import Perceptron

from maxmargin.algorithms.perceptron import MAX_RECORDED_UPDATES, perceptron
from maxmargin.exceptions import ConvergenceWarning

LH = PERCEPTRON_LI_HANG


def quiet_perceptron(*args, **kwargs):
    """``perceptron`` with its ConvergenceWarning silenced (for runs cut short on purpose)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return perceptron(*args, **kwargs)


# --- Li Hang, Example 2.1 ----------------------------------------------------------------------


def test_li_hang_example_2_1_exact():
    res = perceptron(LH["X"], LH["y"], eta=LH["eta"])
    np.testing.assert_array_equal(res.w, LH["w"])
    assert res.b == LH["b"]
    np.testing.assert_array_equal(res.alpha, LH["alpha"])
    assert res.mistakes == LH["mistakes"] == 7
    assert res.epochs == LH["epochs"] == 6
    assert res.converged and res.status == "converged" and res.method == "perceptron"
    np.testing.assert_array_equal(res.history["updates"], LH["update_sequence"])
    # pass by pass, from the fixture's derivation: x1 x3 | x3 | x3 | x1 x3 | x3 | clean
    np.testing.assert_array_equal(res.history["mistakes"], [2, 1, 1, 2, 1, 0])


# (w, b) after each pass, derived by hand in tests/fixtures.py
LI_HANG_PASSES = [((2, 2), 0), ((1, 1), -1), ((0, 0), -2), ((2, 2), -2), ((1, 1), -3)]


@pytest.mark.parametrize("epochs", range(1, 6))
def test_li_hang_walk_pass_by_pass(epochs):
    with pytest.warns(ConvergenceWarning, match="max_epochs=" + str(epochs)):
        res = perceptron(LH["X"], LH["y"], max_epochs=epochs)
    w, b = LI_HANG_PASSES[epochs - 1]
    np.testing.assert_array_equal(res.w, w)
    assert res.b == b
    assert res.status == "max_iter" and not res.converged and res.epochs == epochs
    k = res.mistakes
    np.testing.assert_array_equal(res.history["updates"], LH["update_sequence"][:k])


def test_eta_only_scales_the_run():
    res = perceptron(LH["X"], LH["y"], eta=0.5)
    np.testing.assert_array_equal(res.w, 0.5 * LH["w"])
    assert res.b == 0.5 * LH["b"]
    np.testing.assert_array_equal(res.alpha, 0.5 * LH["alpha"])
    assert res.mistakes == 7 and res.epochs == 6
    np.testing.assert_array_equal(res.history["updates"], LH["update_sequence"])


def test_homogeneous_form_cannot_separate_li_hang():
    # x1 = (3,3) (+1) and x3 = (1,1) (-1) lie on one ray: no hyperplane through 0 separates them.
    with pytest.warns(ConvergenceWarning):
        res = perceptron(LH["X"], LH["y"], bias=False, max_epochs=50)
    assert res.status == "max_iter" and res.b == 0.0 and res.epochs == 50
    assert np.all(res.history["mistakes"] > 0)


# --- the textbook loop, the dual representation and separation ------------------------------


@settings(max_examples=25, deadline=None)
@given(eta=st.sampled_from([1.0, 0.5, 0.1, 3.0]), **RUN_STRATEGIES)
def test_matches_plain_python_loop(seed, n, d, bias, eta, order):
    """Any data (separable or not), cyclic or seeded random order: the same run as the textbook."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = random_labels(rng, n)
    max_epochs = 8
    res = quiet_perceptron(X, y, eta=eta, max_epochs=max_epochs, bias=bias, order=order, seed=7)
    if order == "random":
        perm_rng = np.random.default_rng(7)
        orders = [perm_rng.permutation(n) for _ in range(max_epochs)]
    else:
        orders = [range(n)] * max_epochs
    ref = reference_perceptron(X, y, orders, eta=eta, bias=bias)
    np.testing.assert_array_equal(res.history["updates"], ref["sequence"])
    np.testing.assert_array_equal(res.history["mistakes"], ref["per_pass"])
    np.testing.assert_allclose(res.w, ref["w"], rtol=1e-12, atol=1e-12)
    assert res.b == pytest.approx(ref["b"], abs=1e-12)
    np.testing.assert_array_equal(res.alpha, eta * ref["counts"])
    assert res.converged == (ref["per_pass"][-1] == 0)
    assert res.epochs == len(ref["per_pass"])
    # dual representation: w = sum alpha_i y_i x_i, b = sum alpha_i y_i (0 without bias)
    np.testing.assert_allclose(res.w, X.T @ (res.alpha * y), rtol=1e-10, atol=1e-10)
    assert res.b == pytest.approx(np.sum(res.alpha * y) if bias else 0.0, abs=1e-10)
    assert res.mistakes == res.history["mistakes"].sum() == round(res.alpha.sum() / eta)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), bias=st.booleans(), d=st.integers(2, 5))
def test_novikoff_mistake_bound(seed, bias, d):
    """mistakes <= (R / gamma)^2, R = max ||x_hat||, gamma = margin of a unit separator u.

    The proof's two inequalities hold for the final augmented weights w_hat after k updates:
    w_hat . u >= k eta gamma and ||w_hat||^2 <= k eta^2 R^2.
    """
    rng = np.random.default_rng(seed)
    X, y = separable_data(rng, 40, d, gap=0.1, bias=bias)
    eta = 0.7
    res = perceptron(X, y, eta=eta, bias=bias)
    assert res.converged
    u, gamma = augmented_max_margin(X, y, bias=bias)
    assert gamma > 0.09  # the generating hyperplane has margin > 0.1 / ||(w, b)||
    Xh = np.hstack([X, np.ones((40, 1))]) if bias else X
    R = np.max(np.linalg.norm(Xh, axis=1))
    k = res.mistakes
    assert k <= (R / gamma) ** 2
    w_hat = np.append(res.w, res.b) if bias else res.w
    assert w_hat @ u >= k * eta * gamma * (1 - 1e-9)
    assert w_hat @ w_hat <= k * eta**2 * R**2 * (1 + 1e-9)
    # a converged perceptron separates the training data
    assert np.all(y * res.decision_function(X) > 0)
    np.testing.assert_array_equal(res.predict(X), y)


def test_mistake_bound_is_attained_in_one_dimension():
    # x = 1 (+1), x = -1 (-1), no bias: one mistake, and (R / gamma)^2 = 1.
    res = perceptron([[1.0], [-1.0]], [1.0, -1.0], bias=False)
    assert res.mistakes == 1 and res.epochs == 2
    np.testing.assert_array_equal(res.w, [1.0])


def test_non_separable_xor_stops_at_max_epochs():
    with pytest.warns(ConvergenceWarning, match="not be separable") as record:
        res = perceptron(XOR_X, XOR_Y, max_epochs=20)
    assert record[0].filename == __file__  # the warning points at the caller
    assert res.status == "max_iter" and not res.converged
    assert res.epochs == 20 and res.history["mistakes"].shape == (20,)
    assert np.all(res.history["mistakes"] > 0)
    # the run is still returned in full: the dual representation holds
    np.testing.assert_allclose(res.w, XOR_X.T @ (res.alpha * XOR_Y))


def test_random_order_is_reproducible_and_seed_dependent():
    X, y = separable_data(np.random.default_rng(3), 60, 3)
    a = perceptron(X, y, order="random", seed=11)
    b = perceptron(X, y, order="random", seed=11)
    c = perceptron(X, y, order="random", seed=12)
    np.testing.assert_array_equal(a.history["updates"], b.history["updates"])
    np.testing.assert_array_equal(a.w, b.w)
    assert a.b == b.b
    assert not np.array_equal(a.history["updates"], c.history["updates"])
    # the visiting order does not matter for the guarantee: all three separate the data
    for res in (a, b, c):
        assert res.converged and np.all(y * res.decision_function(X) > 0)


def test_update_record_is_bounded():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = perceptron(np.tile(XOR_X, (800, 1)), np.tile(XOR_Y, 800), max_epochs=5)
    assert res.mistakes > MAX_RECORDED_UPDATES
    assert res.history["updates"].shape == (MAX_RECORDED_UPDATES,)


# --- scikit-learn ----------------------------------------------------------------------------


def sklearn_perceptron(X, y, epochs):
    """sklearn's Perceptron with the textbook rule: update on y (w.x + b) <= 0, eta0 = 1."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns when max_iter ends the run
        return Perceptron(
            shuffle=False, tol=None, max_iter=epochs, eta0=1.0, alpha=0.0, fit_intercept=True
        ).fit(X, y)


@pytest.mark.parametrize("seed", [0, 1])
def test_same_as_sklearn_when_converged(seed):
    X, y = separable_data(np.random.default_rng(seed), 300, 5, gap=0.05)
    res = perceptron(X, y)
    assert res.converged
    sk = sklearn_perceptron(X, y, res.epochs)
    np.testing.assert_allclose(sk.coef_[0], res.w, rtol=1e-12, atol=1e-12)
    assert sk.intercept_[0] == pytest.approx(res.b, abs=1e-12)
    assert sk.score(X, y) == 1.0


def test_same_training_errors_as_sklearn_when_not_separable():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 4))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=200) > 0, 1.0, -1.0)
    for epochs in (1, 3, 10):
        res = quiet_perceptron(X, y, max_epochs=epochs)
        assert not res.converged and res.epochs == epochs
        sk = sklearn_perceptron(X, y, epochs)
        np.testing.assert_allclose(sk.coef_[0], res.w, rtol=1e-12, atol=1e-12)
        assert sk.intercept_[0] == pytest.approx(res.b, abs=1e-12)
        assert np.sum(sk.predict(X) != y) == np.sum(res.predict(X) != y)


# --- results and validation --------------------------------------------------------------------


def test_result_is_read_only_and_inputs_untouched():
    X, y = LH["X"].copy(), LH["y"].copy()
    res = perceptron(X, y)
    np.testing.assert_array_equal(X, LH["X"])
    np.testing.assert_array_equal(y, LH["y"])
    for arr in (res.w, res.alpha, res.history["mistakes"], res.X_train):
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 5.0
    assert res.runtime >= 0.0
    np.testing.assert_array_equal(res.decision_function([[3.0, 3.0], [1.0, 1.0]]), [3.0, -1.0])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"eta": 0.0}, "`eta` must be positive"),
        ({"eta": float("nan")}, "`eta` must be finite"),
        ({"max_epochs": 0}, "`max_epochs` must be an integer >= 1"),
        ({"max_epochs": 2.5}, "`max_epochs` must be an integer >= 1"),
        ({"order": "shuffled"}, "`order` must be one of 'cyclic', 'random'"),
        ({"seed": -1}, "`seed` must be an integer >= 0"),
        ({"seed": "a"}, "`seed` must be an integer >= 0"),
        ({"bias": 1}, "`bias` must be True or False"),
    ],
)
def test_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        perceptron(LH["X"], LH["y"], **kwargs)


@pytest.mark.parametrize(
    ("X", "y", "match"),
    [
        ([[0.0, np.nan], [1.0, 1.0]], [1, -1], "`X` must be finite"),
        ([[0.0], [1.0]], [1, -1, 1], "`y` must have one label per row of `X`"),
        ([[0.0], [1.0]], [1, 0], "`y` must contain only the labels -1 and \\+1"),
        ([[0.0], [1.0]], [1, 1], "`y` must contain both classes"),
    ],
)
def test_bad_data(X, y, match):
    with pytest.raises(ValueError, match=match):
        perceptron(X, y)
