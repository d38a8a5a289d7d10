"""Every validation message of every oracle entry point, one ``pytest.raises`` each."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fixtures import HULL_PAIR, LI_HANG

import maxmargin.formulations as mf

X_OK = LI_HANG.X
Y_OK = LI_HANG.y

ENTRY_POINTS = {
    "hard_margin_primal": lambda X, y: mf.hard_margin_primal(X, y),
    "soft_margin_primal": lambda X, y: mf.soft_margin_primal(X, y, 1.0),
    "hinge_loss": lambda X, y: mf.hinge_loss(X, y, 1.0),
    "svm_dual": lambda X, y: mf.svm_dual(X, y, 1.0, kernel="rbf"),
}

BAD_DATA = [
    ("X_none", None, Y_OK, r"`X` must be an array; got None"),
    ("X_text", [["a", "b"]] * 3, Y_OK, r"`X` must be a numeric array"),
    ("X_1d", np.ones(3), Y_OK, r"`X` must be a 2-D array"),
    ("X_3d", np.ones((3, 2, 1)), Y_OK, r"`X` must be a 2-D array"),
    ("X_no_rows", np.ones((0, 2)), Y_OK, r"`X` must have at least one row"),
    ("X_no_columns", np.ones((3, 0)), Y_OK, r"`X` must have at least one column"),
    ("X_nan", np.array([[1.0, np.nan], [0, 0], [1, 1]]), Y_OK, r"`X` must be finite"),
    ("X_inf", np.array([[1.0, np.inf], [0, 0], [1, 1]]), Y_OK, r"`X` must be finite"),
    ("y_none", X_OK, None, r"`y` must be an array of -1/\+1 labels; got None"),
    ("y_text", X_OK, ["a", "b", "c"], r"`y` must contain only the labels -1 and \+1"),
    ("y_2d", X_OK, Y_OK[:, None], r"`y` must be a 1-D array"),
    ("y_length", X_OK, Y_OK[:2], r"`y` must have one label per row of `X`"),
    ("y_nan", X_OK, [1.0, np.nan, -1.0], r"`y` must contain only .* got NaN or inf"),
    ("y_01", X_OK, [1.0, 0.0, 1.0], r"`y` must contain only .* got other values \[0.0\]"),
    ("y_one_class", X_OK, [1.0, 1.0, 1.0], r"`y` must contain both classes"),
]


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.parametrize(("case", "X", "y", "match"), BAD_DATA, ids=[c[0] for c in BAD_DATA])
def test_bad_data_is_rejected(entry, case, X, y, match):
    with pytest.raises(ValueError, match=match):
        ENTRY_POINTS[entry](X, y)


C_ENTRY_POINTS = {
    "soft_margin_primal": mf.soft_margin_primal,
    "hinge_loss": mf.hinge_loss,
    "svm_dual": mf.svm_dual,
}

BAD_C = [
    ("zero", 0.0, r"`C` must be positive; got 0.0"),
    ("negative", -1.0, r"`C` must be positive; got -1.0"),
    ("inf", math.inf, r"`C` must be finite \(use C=None for the hard margin\)"),
    ("nan", math.nan, r"`C` must be finite; got nan"),
    ("text", "1", r"`C` must be a positive number or None"),
    ("bool", True, r"`C` must be a positive number or None"),
]


@pytest.mark.parametrize("entry", sorted(C_ENTRY_POINTS))
@pytest.mark.parametrize(("case", "C", "match"), BAD_C, ids=[c[0] for c in BAD_C])
def test_bad_C_is_rejected(entry, case, C, match):
    with pytest.raises(ValueError, match=match):
        C_ENTRY_POINTS[entry](X_OK, Y_OK, C)


@pytest.mark.parametrize("entry", [mf.soft_margin_primal, mf.hinge_loss])
def test_soft_margin_forms_need_a_C(entry):
    with pytest.raises(ValueError, match=r"`C` must be a positive finite number .* got None"):
        entry(X_OK, Y_OK, None)


BAD_KERNEL = [
    ("name", {"kernel": "tanh"}, r"`kernel` must be one of 'linear', 'rbf', 'poly', 'sigmoid'"),
    ("gamma_negative", {"kernel": "rbf", "gamma": -0.5}, r"`gamma` must be positive"),
    ("gamma_zero", {"kernel": "poly", "gamma": 0.0}, r"`gamma` must be positive"),
    ("gamma_string", {"kernel": "rbf", "gamma": "big"}, r"`gamma` must be one of 'scale'"),
    ("gamma_type", {"kernel": "rbf", "gamma": [1.0]}, r"`gamma` must be a positive number"),
    ("degree", {"kernel": "poly", "degree": 0}, r"`degree` must be an integer >= 1"),
    ("coef0", {"kernel": "poly", "coef0": math.nan}, r"`coef0` must be finite"),
    (
        "not_psd",
        {"kernel": "poly", "gamma": 1.0, "degree": 3, "coef0": -5.0},
        r"`kernel` must give a positive semi-definite Gram matrix",
    ),
]


@pytest.mark.parametrize(("case", "kw", "match"), BAD_KERNEL, ids=[c[0] for c in BAD_KERNEL])
def test_bad_kernel_is_rejected(case, kw, match):
    with pytest.raises(ValueError, match=match):
        mf.svm_dual(X_OK, Y_OK, 1.0, **kw)


BAD_POINTS = [
    ("none", None, r"`Q` must be an array; got None"),
    ("empty", np.ones((0, 2)), r"`Q` must have at least one row"),
    ("1d", np.ones(3), r"`Q` must be a 2-D array"),
    ("nan", np.array([[np.nan, 1.0]]), r"`Q` must be finite"),
]


@pytest.mark.parametrize(("case", "Q", "match"), BAD_POINTS, ids=[c[0] for c in BAD_POINTS])
def test_bad_polytope_is_rejected(case, Q, match):
    with pytest.raises(ValueError, match=match):
        mf.polytope_distance(Q)


BAD_HULLS = [
    ("dims", HULL_PAIR["P"], np.ones((2, 3)), r"`P` and `Q` must have the same dimension"),
    ("P_empty", np.ones((0, 2)), HULL_PAIR["Q"], r"`P` must have at least one row"),
    ("P_inf", np.array([[np.inf, 0.0]]), HULL_PAIR["Q"], r"`P` must be finite"),
    ("Q_nan", HULL_PAIR["P"], np.array([[0.0, np.nan]]), r"`Q` must be finite"),
    ("Q_none", HULL_PAIR["P"], None, r"`Q` must be an array; got None"),
]


@pytest.mark.parametrize(("case", "P", "Q", "match"), BAD_HULLS, ids=[c[0] for c in BAD_HULLS])
def test_bad_hulls_are_rejected(case, P, Q, match):
    with pytest.raises(ValueError, match=match):
        mf.hull_distance(P, Q)


@pytest.mark.parametrize("solver", ["NO_SUCH_SOLVER", 3, ""])
def test_bad_solver_name_is_rejected(solver):
    form = mf.svm_dual(X_OK, Y_OK)
    with pytest.raises(ValueError, match=r"`solver` must be None or one of the installed"):
        form.solve(solver)


def test_solver_name_is_case_insensitive():
    assert mf.svm_dual(X_OK, Y_OK).solve("clarabel").method == "cvxpy/svm_dual/CLARABEL"


def test_bad_dual_model_is_rejected():
    with pytest.raises(ValueError, match=r"`model` must be one of 'auto', 'factor', 'gram'"):
        mf.svm_dual(X_OK, Y_OK, model="cholesky")
