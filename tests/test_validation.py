"""maxmargin._validation: one test per error message, and inputs are never modified."""

from __future__ import annotations

import numpy as np
import pytest

from maxmargin._validation import (
    check_array,
    check_bool,
    check_C,
    check_choice,
    check_finite_scalar,
    check_hull_pair,
    check_max_iter,
    check_nonnegative,
    check_points,
    check_positive,
    check_positive_int,
    check_X_new,
    check_Xy,
)

X_OK = np.array([[0.0, 1.0], [2.0, 3.0]])
Y_OK = np.array([1.0, -1.0])


# --- check_array (through check_Xy's `X`) ------------------------------------------------------


@pytest.mark.parametrize(
    ("X", "match"),
    [
        (None, r"`X` must be an array; got None\."),
        ([["a", "b"], ["c", "d"]], r"`X` must be a numeric array; got \[\['a'"),
        ([[1.0, 2.0], [3.0]], r"`X` must be a numeric array"),  # ragged
        ([[1 + 2j, 0.0], [1.0, 0.0]], r"`X` must be real; got complex values"),
        (np.array([[1 + 0j], [2 + 0j]]), r"`X` must be real; got complex values"),
        ([1.0, 2.0], r"`X` must be a 2-D array of shape \(n_samples, n_features\); got ndim=1"),
        (np.zeros((2, 2, 1)), r"`X` must be a 2-D array .* got ndim=3 with shape \(2, 2, 1\)"),
        (np.zeros((0, 2)), r"`X` must have at least one row; got shape \(0, 2\)"),
        (np.zeros((2, 0)), r"`X` must have at least one column; got shape \(2, 0\)"),
        ([[np.nan, 1.0], [np.inf, 0.0]], r"`X` must be finite; got 2 NaN or infinite value\(s\)"),
    ],
)
def test_bad_X(X, match):
    with pytest.raises(ValueError, match=match):
        check_Xy(X, Y_OK)


def test_check_array_1d_message_and_copy():
    with pytest.raises(ValueError, match=r"`v` must be a 1-D array of shape \(n_samples,\)"):
        check_array(np.zeros((2, 2)), "v", ndim=1)
    src = np.array([1, 2, 3], dtype=np.int32)
    out = check_array(src, "v", ndim=1)
    assert out.dtype == np.float64 and out.flags.c_contiguous and out.flags.writeable
    out[0] = 99.0
    assert src[0] == 1  # a fresh copy, never a view
    f_order = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    assert check_array(f_order, "X", ndim=2).flags.c_contiguous


# --- check_Xy's `y` ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("y", "match"),
    [
        (None, r"`y` must be an array of -1/\+1 labels; got None\."),
        (["a", "b"], r"`y` must contain only the labels -1 and \+1; got \['a', 'b'\]\."),
        (np.array([1 + 1j, -1]), r"`y` must be real; got complex values"),
        ([[1.0], [-1.0]], r"`y` must be a 1-D array of shape \(n_samples,\); got ndim=2"),
        ([1.0, -1.0, 1.0], r"`y` must have one label per row of `X`: `X` has 2 rows, `y` has "),
        ([1.0, np.nan], r"`y` must contain only the labels -1 and \+1; got NaN or inf\."),
        ([1.0, 0.0], r"`y` must contain only the labels -1 and \+1; got other values \[0\.0\]"),
        ([2.0, -1.0], r"got other values \[2\.0\]"),
        ([-1.0, -1.0], r"`y` must contain both classes -1 and \+1; got only -1\."),
        ([1, 1], r"`y` must contain both classes -1 and \+1; got only \+1\."),
    ],
)
def test_bad_y(y, match):
    with pytest.raises(ValueError, match=match):
        check_Xy(X_OK, y)


def test_check_Xy_returns_copies_and_never_modifies():
    X = X_OK.copy()
    y = np.array([1, -1])  # integer labels are accepted
    X2, y2 = check_Xy(X, y)
    assert X2.dtype == y2.dtype == np.float64
    X2[0, 0] = 7.0
    y2[0] = 7.0
    np.testing.assert_array_equal(X, X_OK)
    np.testing.assert_array_equal(y, [1, -1])
    X3, _ = check_Xy([[0, 1], [2, 3]], [1, -1])  # plain lists work
    np.testing.assert_array_equal(X3, X_OK)


# --- check_X_new --------------------------------------------------------------------------------


def test_check_X_new():
    np.testing.assert_array_equal(check_X_new([1.0, 2.0], 2), [[1.0, 2.0]])  # one point
    with pytest.raises(ValueError, match=r"`X` must have 2 features \(columns\) like the training"):
        check_X_new([[1.0, 2.0, 3.0]], 2)
    with pytest.raises(ValueError, match=r"`X_test` must have 2 features .* got 1\."):
        check_X_new([[1.0]], 2, name="X_test")
    with pytest.raises(ValueError, match=r"`X_test` must be a 2-D array .* got ndim=1"):
        check_X_new([1.0], 2, name="X_test")  # a 1-D point of the wrong length
    with pytest.raises(ValueError, match=r"`X` must be a numeric array"):
        check_X_new([["a", "b"]], 2)  # the argument is named, not numpy's bare message
    with pytest.raises(ValueError, match=r"`X` must be finite"):
        check_X_new([[np.inf, 0.0]], 2)
    with pytest.raises(ValueError, match=r"`X` must be an array; got None"):
        check_X_new(None, 2)


# --- scalars --------------------------------------------------------------------------------


def test_check_finite_scalar():
    assert check_finite_scalar(np.float32(2.5), "t") == 2.5
    assert check_finite_scalar(3, "t") == 3.0
    with pytest.raises(ValueError, match=r"`t` must be a real number; got 'x'\."):
        check_finite_scalar("x", "t")
    with pytest.raises(ValueError, match=r"`t` must be a real number; got True\."):
        check_finite_scalar(True, "t")
    with pytest.raises(ValueError, match=r"`t` must be a real number"):
        check_finite_scalar(1j, "t")
    with pytest.raises(ValueError, match=r"`t` must be finite; got inf\."):
        check_finite_scalar(np.inf, "t")


def test_check_positive_and_nonnegative():
    assert check_positive(1e-300, "tol") == 1e-300
    assert check_nonnegative(0, "atol") == 0.0
    with pytest.raises(ValueError, match=r"`tol` must be positive; got 0\.0\."):
        check_positive(0.0, "tol")
    with pytest.raises(ValueError, match=r"`tol` must be positive; got -1\.0\."):
        check_positive(-1, "tol")
    with pytest.raises(ValueError, match=r"`atol` must be non-negative; got -1e-09\."):
        check_nonnegative(-1e-9, "atol")
    with pytest.raises(ValueError, match=r"`tol` must be finite; got nan\."):
        check_positive(float("nan"), "tol")


@pytest.mark.parametrize(
    ("C", "match"),
    [
        ("1", r"`C` must be a positive number or None; got '1'\."),
        (True, r"`C` must be a positive number or None; got True\."),
        ([1.0], r"`C` must be a positive number or None"),
        (np.inf, r"`C` must be finite \(use C=None for the hard margin\); got inf\."),
        (np.nan, r"`C` must be finite; got nan\."),
        (0.0, r"`C` must be positive; got 0\.0\."),
        (-2, r"`C` must be positive; got -2\.0\."),
    ],
)
def test_bad_C(C, match):
    with pytest.raises(ValueError, match=match):
        check_C(C)


def test_check_C():
    assert check_C(None) is None  # the hard margin
    assert check_C(2) == 2.0 and isinstance(check_C(np.float32(0.5)), float)
    with pytest.raises(ValueError, match=r"`C` must be a positive finite number for this problem"):
        check_C(None, allow_none=False)


def test_check_positive_int_and_max_iter():
    assert check_positive_int(np.int64(3), "k") == 3
    assert check_positive_int(4.0, "k") == 4  # an integral float is accepted
    assert check_positive_int(0, "k", minimum=0) == 0
    with pytest.raises(ValueError, match=r"`k` must be an integer >= 1; got 2\.5\."):
        check_positive_int(2.5, "k")
    with pytest.raises(ValueError, match=r"`k` must be an integer >= 1; got True\."):
        check_positive_int(True, "k")
    with pytest.raises(ValueError, match=r"`k` must be an integer >= 1; got 0\."):
        check_positive_int(0, "k")
    with pytest.raises(ValueError, match=r"`k` must be an integer >= 1; got inf\."):
        check_positive_int(float("inf"), "k")
    assert check_max_iter(None, default=50) == 50
    assert check_max_iter(7) == 7
    with pytest.raises(ValueError, match=r"`max_iter` must be a positive integer; got None\."):
        check_max_iter(None)
    with pytest.raises(ValueError, match=r"`max_iter` must be an integer >= 1; got -3\."):
        check_max_iter(-3)


def test_check_choice_and_bool():
    assert check_choice("b", "mode", ("a", "b")) == "b"
    with pytest.raises(ValueError, match=r"`mode` must be one of 'a', 'b'; got 'c'\."):
        check_choice("c", "mode", ("a", "b"))
    with pytest.raises(ValueError, match=r"`mode` must be one of 'a', 'b'; got 1\."):
        check_choice(1, "mode", ("a", "b"))
    assert check_bool(np.bool_(False), "flag") is False
    assert check_bool(True, "flag") is True
    with pytest.raises(ValueError, match=r"`flag` must be True or False; got 1\."):
        check_bool(1, "flag")
    with pytest.raises(ValueError, match=r"`flag` must be True or False; got 'yes'\."):
        check_bool("yes", "flag")


def test_long_values_are_abbreviated():
    with pytest.raises(ValueError, match=r"got 'aaaa.*\.\.\.\.$"):
        check_choice("a" * 100, "mode", ("b",))
    with pytest.raises(ValueError, match=r"got array of shape \(2,\) and dtype <U1"):
        check_C(np.array(["a", "b"]))


# --- point sets ----------------------------------------------------------------------------


def test_point_sets():
    P = np.array([[0.0, 1.0]])
    np.testing.assert_array_equal(check_points(P, "Q"), P)
    with pytest.raises(ValueError, match=r"`Q` must have at least one row; got shape \(0, 2\)"):
        check_points(np.zeros((0, 2)), "Q")
    with pytest.raises(ValueError, match=r"`Q` must be finite"):
        check_points([[np.nan, 0.0]], "Q")
    with pytest.raises(
        ValueError, match=r"`P` and `Q` must have the same dimension \(columns\); got 2 and 3\."
    ):
        check_hull_pair(P, np.zeros((1, 3)))
    with pytest.raises(ValueError, match=r"`P` must have at least one row"):
        check_hull_pair(np.zeros((0, 2)), P)
    with pytest.raises(ValueError, match=r"`Q` must be a 2-D array"):
        check_hull_pair(P, [1.0, 2.0])
    P2, Q2 = check_hull_pair(P, P)
    assert P2 is not P and Q2 is not P2


def test_check_sample_weight():
    from maxmargin._validation import check_sample_weight

    y = np.array([1.0, -1.0, 1.0])
    assert check_sample_weight(None, y) is None
    w = np.array([1, 2, 3])
    out = check_sample_weight(w, y)
    assert out.dtype == np.float64 and out is not w
    with pytest.raises(ValueError, match=r"`sample_weight` must have one weight per row of `X`: "
                                         r"`X` has 3 rows, `sample_weight` has length 2\."):
        check_sample_weight([1.0, 2.0], y)
    with pytest.raises(ValueError, match=r"`sample_weight` must be positive \(leave zero-weight "
                                         r"samples out\); got minimum 0\.0\."):
        check_sample_weight([1.0, 0.0, 1.0], y)
    with pytest.raises(ValueError, match=r"`sample_weight` must be finite"):
        check_sample_weight([1.0, np.nan, 1.0], y)
