"""maxmargin.datasets: heart_scale, the user's files (svmlight, CSV, npz) and binary problems."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from maxmargin.datasets import binary_problems, load_data, load_heart_scale


def test_heart_scale_shape_and_labels():
    X, y = load_heart_scale()
    assert X.shape == (270, 13) and y.shape == (270,)
    assert X.dtype == y.dtype == np.float64
    assert set(np.unique(y)) == {-1.0, 1.0}
    assert np.sum(y == 1.0) == 120 and np.sum(y == -1.0) == 150
    assert np.all(np.isfinite(X)) and np.all(np.abs(X) <= 1.0)  # scaled to [-1, 1]


@pytest.mark.parametrize("zero_based", [True, False])
def test_svmlight_zero_and_one_based(tmp_path, zero_based):
    X = np.array([[0.5, 0.0, -2.0], [0.0, 1e-3, 0.0], [1.0, 2.0, 3.0]])
    y = np.array([1.0, -1.0, 1.0])
    path = tmp_path / "d.svm"
    dump_svmlight_file(X, y, str(path), zero_based=zero_based)
    X2, y2 = load_data(path)
    np.testing.assert_array_equal(X2, X)
    np.testing.assert_array_equal(y2, y)


def test_csv_with_header_and_named_label(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("label,x1,x2\nspam,1,2\nham,3,4.5\nspam,-1,0\n")
    X, labels = load_data(path, label_column="label")
    np.testing.assert_array_equal(X, [[1, 2], [3, 4.5], [-1, 0]])
    assert labels.tolist() == ["spam", "ham", "spam"]
    path.write_text("1,2,0\n3,4,1\n")  # no header, label last
    X, labels = load_data(path)
    np.testing.assert_array_equal(X, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(labels, [0.0, 1.0])


def test_npz(tmp_path):
    path = tmp_path / "d.npz"
    np.savez(path, X=np.eye(3), y=np.array([0, 1, 1]))
    X, labels = load_data(path)
    np.testing.assert_array_equal(X, np.eye(3))
    np.savez(path, X=np.eye(3))
    with pytest.raises(ValueError, match=r"must hold arrays 'X' and 'y'; missing \['y'\]"):
        load_data(path)


@pytest.mark.parametrize(
    ("text", "kwargs", "match"),
    [
        ("a,b\n1,x\n", {"label_column": "a"}, r"every column but the label must be numeric"),
        ("a,b\n1,2\n3\n", {}, r"every row must have 2 columns"),
        ("a,b\n1,2\n", {"label_column": "c"}, r"`label_column` 'c' is not a column name"),
        ("1,2\n", {"label_column": 5}, r"`label_column` must be in \[0, 2\); got 5"),
        ("1,nan,1\n", {}, r"`X` must be finite"),
    ],
)
def test_csv_errors(tmp_path, text, kwargs, match):
    path = tmp_path / "d.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=match):
        load_data(path, **kwargs)


def test_unreadable_files(tmp_path):
    with pytest.raises(ValueError, match=r"`path` .* is not a readable file"):
        load_data(tmp_path / "none.svm")
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:2\n-1 zz\n")
    with pytest.raises(ValueError, match=r"`path` .* could not be read as svmlight"):
        load_data(bad)


def test_binary_problems_mapping():
    (p,) = binary_problems(np.array([0, 1, 1, 0]))
    np.testing.assert_array_equal(p.y, [-1, 1, 1, -1])  # +1 = the label that sorts last
    assert (p.positive, p.negative) == (1, 0)
    pairs = binary_problems(np.array(["a", "b", "c", "a"]))
    assert [q.name for q in pairs] == ["a_vs_b", "a_vs_c", "b_vs_c"]
    np.testing.assert_array_equal(pairs[1].index, [0, 2, 3])
    np.testing.assert_array_equal(pairs[1].y, [1, -1, 1])  # one-vs-one: +1 = the first class
    (rest,) = binary_problems(np.array([1.0, 2.0, 3.0]), positive="2")
    np.testing.assert_array_equal(rest.y, [-1, 1, -1])
    with pytest.raises(ValueError, match=r"`labels` must hold at least two classes"):
        binary_problems(np.array([1, 1]))
