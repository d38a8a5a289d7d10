"""maxmargin.datasets: the shipped heart_scale against scikit-learn's svmlight reader."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file

from maxmargin.datasets import load_heart_scale, load_svmlight_text


def test_heart_scale_shape_and_labels():
    X, y = load_heart_scale()
    assert X.shape == (270, 13) and y.shape == (270,)
    assert X.dtype == y.dtype == np.float64
    assert set(np.unique(y)) == {-1.0, 1.0}
    assert np.sum(y == 1.0) == 120 and np.sum(y == -1.0) == 150
    assert np.all(np.isfinite(X)) and np.all(np.abs(X) <= 1.0)  # scaled to [-1, 1]


def test_heart_scale_matches_sklearn_reader():
    path = resources.files("maxmargin").joinpath("data/heart_scale")
    with resources.as_file(path) as file:
        X_ref, y_ref = load_svmlight_file(str(file), n_features=13)
    X, y = load_heart_scale()
    np.testing.assert_array_equal(X, X_ref.toarray())
    np.testing.assert_array_equal(y, y_ref)


def test_svmlight_text_parsing():
    text = "# a comment line\n+1 1:0.5 3:-2 # trailing comment\n\n-1 2:1e-3\n1\n"
    X, y = load_svmlight_text(text)
    np.testing.assert_array_equal(X, [[0.5, 0.0, -2.0], [0.0, 1e-3, 0.0], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(y, [1.0, -1.0, 1.0])
    X, _ = load_svmlight_text(text, n_features=5)  # padded to n_features
    assert X.shape == (3, 5)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("1 1:2\n-1 3\n", r"line 2: expected `index:value`, got '3'\."),
        ("1 0:5 2:1\n", r"line 1: feature indices start at 1, got '0:5'\."),
    ],
)
def test_svmlight_text_errors(text, match):
    with pytest.raises(ValueError, match=match):
        load_svmlight_text(text)
