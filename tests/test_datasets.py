"""maxmargin.datasets: heart_scale, the user's files (svmlight, CSV, npz) and binary problems."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
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
    assert sp.issparse(X2) and X2.format == "csr"  # kept sparse: memory of the order of the file
    np.testing.assert_array_equal(X2.toarray(), X)
    np.testing.assert_array_equal(y2, y)


def test_a_wide_sparse_file_stays_small(tmp_path):
    # 400 rows x 5,000,000 columns, 20 non-zeros a row: dense it would take 16 GB
    rng = np.random.default_rng(0)
    rows = np.repeat(np.arange(400), 20)
    cols = rng.integers(0, 5_000_000, size=rows.size)
    X = sp.csr_matrix((rng.normal(size=rows.size), (rows, cols)), shape=(400, 5_000_000))
    path = tmp_path / "wide.svm"
    dump_svmlight_file(X, np.where(np.arange(400) % 2, 1.0, -1.0), str(path))
    X2, _ = load_data(path)
    assert sp.issparse(X2) and X2.nnz <= X.nnz and X2.shape[0] == 400


@pytest.mark.parametrize("label_column", [None, 4, "4", -1, "-1", "species"])
def test_csv_label_column_by_index_or_name_with_a_header(tmp_path, label_column):
    path = tmp_path / "iris.csv"
    path.write_text("sl,sw,pl,pw,species\n5.1,3.5,1.4,0.2,setosa\n7.0,3.2,4.7,1.4,versicolor\n")
    X, labels = load_data(path, label_column=label_column)
    np.testing.assert_array_equal(X, [[5.1, 3.5, 1.4, 0.2], [7.0, 3.2, 4.7, 1.4]])
    assert labels.tolist() == ["setosa", "versicolor"]


def test_csv_label_column_errors_say_what_the_file_has(tmp_path):
    path = tmp_path / "iris.csv"
    path.write_text("sl,sw,species\n5.1,3.5,setosa\n7.0,3.2,versicolor\n")
    with pytest.raises(ValueError, match=r"not a column of the header \['sl', 'sw', 'species'\]"):
        load_data(path, label_column="nosuch")
    path.write_text("5.1,3.5,setosa\n7.0,3.2,versicolor\n")
    with pytest.raises(ValueError, match="no header row"):
        load_data(path, label_column="nosuch")


def test_continuous_or_too_many_labels_are_refused_with_the_count():
    with pytest.raises(ValueError, match=r"300 distinct values .* continuous .* 44850 binary"):
        binary_problems(np.random.default_rng(0).normal(size=300))
    with pytest.raises(ValueError, match=r"60 distinct values .*--positive"):
        binary_problems(np.arange(300) % 60)
    assert len(binary_problems(np.arange(300) % 60, positive=3)) == 1


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
        ("a,b\n1,2\n", {"label_column": "c"}, r"`label_column` 'c' is not a column of the header"),
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
