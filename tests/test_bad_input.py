"""Bad input at every public door: one catalogue of bad arrays fed to every entry point.

Each public callable that takes data (algorithms, oracles, kernel objects and their methods,
result methods) is registered in ``DOORS`` with the argument it takes the data as. A property-
based test draws a door and a bad input and insists on a ``ValueError`` that names the argument,
raised before any work, with the input left untouched; a new entry point only needs a line in
``DOORS`` to be held to the same standard.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from fixtures import LI_HANG
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import maxmargin.algorithms as ma
import maxmargin.formulations as mf
from maxmargin import LinearKernel, MaxMarginClassifier, PolyKernel, RBFKernel, make_kernel

X_OK = LI_HANG.X
Y_OK = LI_HANG.y
Q_OK = X_OK[Y_OK > 0]
P_OK = X_OK[Y_OK < 0]
KERNELS = [LinearKernel(), RBFKernel(0.5), PolyKernel(gamma=1.0, degree=2, coef0=1.0)]
SOLUTION = ma.smo(X_OK, Y_OK, C=None, kernel="rbf", gamma=0.5)
LINEAR_SOLUTION = ma.smo(X_OK, Y_OK, C=None)
PERCEPTRON = ma.kernel_perceptron(X_OK, Y_OK, kernel="rbf", gamma=0.5)
ESTIMATOR = MaxMarginClassifier(gamma=0.5).fit(X_OK, ["a", "a", "b"])
#: The estimator keeps scikit-learn's wording (its estimator checks expect it) after the name.
SKLEARN_WORDS = {
    "none": r"Expected 2D array", "text": r"could not convert string", "ragged": r"inhomogeneous",
    "complex": r"Complex data not supported", "1-D of the wrong length": r"Expected 2D array",
    "3-D": r"Found array with dim 3", "no rows": r"Found array with 0 sample",
    "no columns": r"Found array with 0 feature", "NaN": r"Input X contains NaN",
    "inf": r"Input X contains infinity",
}


def _doors() -> dict[str, tuple[str, object]]:
    """door name -> (name of the data argument in messages, callable of that one argument)."""
    doors: dict[str, tuple[str, object]] = {
        "smo": ("X", lambda X: ma.smo(X, Y_OK)),
        "smo/rbf": ("X", lambda X: ma.smo(X, Y_OK, kernel="rbf")),
        "gilbert_svm": ("X", lambda X: ma.gilbert_svm(X, Y_OK)),
        "gilbert_svm/mdm": ("X", lambda X: ma.gilbert_svm(X, Y_OK, method="mdm")),
        "perceptron": ("X", lambda X: ma.perceptron(X, Y_OK)),
        "kernel_perceptron": ("X", lambda X: ma.kernel_perceptron(X, Y_OK, kernel="poly")),
        "gilbert": ("Q", lambda Q: ma.gilbert(Q)),
        "gilbert_hulls/P": ("P", lambda P: ma.gilbert_hulls(P, Q_OK)),
        "gilbert_hulls/Q": ("Q", lambda Q: ma.gilbert_hulls(P_OK, Q)),
        "mdm_hulls/P": ("P", lambda P: ma.mdm_hulls(P, Q_OK)),
        "mdm_hulls/Q": ("Q", lambda Q: ma.mdm_hulls(P_OK, Q)),
        "hard_margin_primal": ("X", lambda X: mf.hard_margin_primal(X, Y_OK)),
        "soft_margin_primal": ("X", lambda X: mf.soft_margin_primal(X, Y_OK, 1.0)),
        "hinge_loss": ("X", lambda X: mf.hinge_loss(X, Y_OK, 1.0)),
        "svm_dual": ("X", lambda X: mf.svm_dual(X, Y_OK, 1.0, kernel="rbf")),
        "polytope_distance": ("Q", lambda Q: mf.polytope_distance(Q)),
        "hull_distance/P": ("P", lambda P: mf.hull_distance(P, Q_OK)),
        "hull_distance/Q": ("Q", lambda Q: mf.hull_distance(P_OK, Q)),
        "make_kernel": ("X", lambda X: make_kernel("rbf", X=X)),
        "SVMSolution.decision_function": ("X", SOLUTION.decision_function),
        "SVMSolution.predict": ("X", SOLUTION.predict),
        "SVMSolution.decision_function/linear": ("X", LINEAR_SOLUTION.decision_function),
        "PerceptronResult.decision_function": ("X", PERCEPTRON.decision_function),
        "PerceptronResult.predict": ("X", PERCEPTRON.predict),
        "MaxMarginClassifier.fit": ("X", lambda X: MaxMarginClassifier().fit(X, [0, 1, 0])),
        "MaxMarginClassifier.predict": ("X", ESTIMATOR.predict),
        "MaxMarginClassifier.decision_function": ("X", ESTIMATOR.decision_function),
    }
    for k in KERNELS:
        doors[f"{k.name}(A, B)"] = ("A", lambda A, k=k: k(A, X_OK))
        doors[f"{k.name}(A, B)/B"] = ("B", lambda B, k=k: k(X_OK, B))
        doors[f"{k.name}.gram"] = ("X", k.gram)
        doors[f"{k.name}.diag"] = ("X", k.diag)
        doors[f"{k.name}.column"] = ("X", lambda X, k=k: k.column(X, 0))
        doors[f"{k.name}.columns"] = ("X", lambda X, k=k: k.columns(X, [0]))
    return doors


DOORS = _doors()

# (what is wrong, a bad value, the words the message must contain after the argument's name)
BAD = [
    ("none", None, r"must be an array; got None"),
    ("text", [["a", "b"], ["c", "d"]], r"must be a numeric array"),
    ("ragged", [[1.0, 2.0], [3.0]], r"must be a numeric array"),
    ("complex", np.array([[1 + 1j, 0.0], [1.0, 0.0]]), r"must be real; got complex values"),
    ("1-D of the wrong length", np.ones(5), r"must be a 2-D array"),
    ("3-D", np.ones((3, 2, 1)), r"must be a 2-D array .* got ndim=3"),
    ("no rows", np.ones((0, 2)), r"must have at least one row"),
    ("no columns", np.ones((3, 0)), r"must have at least one column"),
    ("NaN", np.array([[1.0, np.nan], [0.0, 0.0], [1.0, 1.0]]), r"must be finite; got 1 NaN"),
    ("inf", np.array([[1.0, 2.0], [-np.inf, 0.0], [1.0, 1.0]]), r"must be finite; got 1 NaN"),
    ("overflowing magnitude", np.array([[1e200, 0.0], [0.0, 1.0], [1.0, 1.0]]),
     r"has entries up to 1e\+200 in magnitude"),
]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(door=st.sampled_from(sorted(DOORS)), bad=st.sampled_from(BAD),
       row=st.integers(0, 2), col=st.integers(0, 1))
def test_every_door_rejects_every_bad_input(door, bad, row, col) -> None:
    name, call = DOORS[door]
    what, value, words = bad
    assume(not (door == "make_kernel" and value is None))  # make_kernel(X=None) is valid
    if isinstance(value, np.ndarray) and value.shape == (3, 2) and what in ("NaN", "inf"):
        value = np.zeros((3, 2))  # the bad entry at a drawn position
        value[row, col] = np.nan if what == "NaN" else -np.inf
    before = value.copy() if isinstance(value, np.ndarray) else None
    if door.startswith("MaxMarginClassifier") and what in SKLEARN_WORDS:
        words = rf".*{SKLEARN_WORDS[what]}"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy warning leaks before the error
        with pytest.raises(ValueError, match=rf"`{name}`( |: ){words}"):
            call(value)
    if isinstance(value, np.ndarray):  # untouched
        np.testing.assert_array_equal(value, before)


MISMATCH_DOORS = [d for d in DOORS if d.startswith(("SVMSolution", "PerceptronResult"))]


@pytest.mark.parametrize("door", MISMATCH_DOORS)
def test_wrong_number_of_features(door) -> None:
    """Points with 3 features where the training data has 2."""
    with pytest.raises(ValueError, match=r"`X` must have 2 features \(columns\) like the "
                                         r"training data; got 3\."):
        DOORS[door][1](np.ones((2, 3)))


# --- kernel objects: one test per message -------------------------------------------------------


@pytest.mark.parametrize("kern", KERNELS, ids=lambda k: k.name)
def test_kernel_block_shapes_and_features(kern) -> None:
    with pytest.raises(ValueError, match=r"`A` and `B` must have the same number of features "
                                         r"\(columns\); got 3 and 2\."):
        kern(np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(ValueError, match=r"`A` must be a 2-D array"):
        kern(np.ones(2), np.ones((4, 2)))
    assert kern(np.ones((2, 3)), np.ones((4, 3))).shape == (2, 4)


@pytest.mark.parametrize("kern", KERNELS, ids=lambda k: k.name)
def test_kernel_column_indices(kern) -> None:
    X = np.eye(3)
    with pytest.raises(ValueError, match=r"`i` must lie in \[0, 3\) \(the rows of `X`\); got "
                                         r"values from 3 to 3\."):
        kern.column(X, 3)
    with pytest.raises(ValueError, match=r"`i` must lie in \[0, 3\)"):
        kern.column(X, -1)
    with pytest.raises(ValueError, match=r"`i` must be an integer index or a 1-D array of them; "
                                         r"got 1\.5\."):
        kern.column(X, 1.5)
    with pytest.raises(ValueError, match=r"`i` must be an integer index .* got True"):
        kern.column(X, True)
    with pytest.raises(ValueError, match=r"`i` must be a single integer index; got shape"):
        kern.column(X, [1])
    with pytest.raises(ValueError, match=r"`idx` must lie in \[0, 3\)"):
        kern.columns(X, [0, 5])
    np.testing.assert_allclose(kern.columns(X, np.array([0, 2])), kern.gram(X)[:, [0, 2]])
    np.testing.assert_allclose(kern.column(X, np.int64(1)), kern.gram(X)[:, 1])


def test_kernel_overflow_is_named_not_nan() -> None:
    """poly on features of 1e60 overflows float64: every door says so before any work."""
    X = X_OK * 1e60
    kern = PolyKernel(gamma=1.0, degree=3, coef0=0.0)
    words = r"kernel poly\(gamma=1, degree=3, coef0=0\) on `X` overflows float64 \(\d+ non-finite"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for call in (
            lambda: kern.gram(X), lambda: kern.diag(X),
            lambda: ma.smo(X, Y_OK, kernel=kern),
            lambda: ma.kernel_perceptron(X, Y_OK, kernel=kern),
            lambda: ma.gilbert_svm(X, Y_OK, kernel=kern),
            lambda: mf.svm_dual(X, Y_OK, 1.0, kernel="poly", gamma=1.0, degree=3),
        ):
            with pytest.raises(ValueError, match=words):
                call()
        with pytest.raises(ValueError, match=r"on `A` and `B` overflows float64"):
            kern(X, X)


def test_single_precision_refuses_kernel_values_out_of_float32_range() -> None:
    with pytest.raises(ValueError, match=r"`precision`='single' keeps kernel values in float32, "
                                         r"which cannot hold these \(max K\(x, x\) = "):
        ma.smo(X_OK * 1e20, Y_OK, precision="single")


@pytest.mark.parametrize("scale", [1e-140, 1e-20, 1e20, 1e149])
def test_extreme_magnitudes_are_solved_or_honest(scale) -> None:
    """Any magnitude the validation accepts: a finite certified answer equal to the unit-scale
    one (scaled back), or an honest non-optimal status -- never 'optimal' with NaN, and no numpy
    warning."""
    X = X_OK * scale
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        svm = {
            "smo": ma.smo(X, Y_OK, C=None),
            "gilbert_svm": ma.gilbert_svm(X, Y_OK),
            "mdm": ma.gilbert_svm(X, Y_OK, method="mdm"),
            "hard_margin_primal": mf.hard_margin_primal(X, Y_OK).solve(),
        }
        hulls = {
            "gilbert_hulls": ma.gilbert_hulls(P_OK * scale, Q_OK * scale),
            "mdm_hulls": ma.mdm_hulls(P_OK * scale, Q_OK * scale),
            "hull_distance": mf.hull_distance(P_OK * scale, Q_OK * scale).solve(),
        }
    # Li Hang's example: w = (1/2, 1/2), b = -2, hull distance 2 / ||w|| = 2 sqrt(2)
    for name, sol in svm.items():
        assert sol.status == "optimal", (name, sol.message)
        np.testing.assert_allclose(sol.w * scale, [0.5, 0.5], rtol=1e-6, err_msg=name)
        np.testing.assert_allclose(sol.b, -2.0, rtol=1e-6, err_msg=name)
    for name, sol in hulls.items():
        assert sol.status == "optimal", (name, sol.message)
        np.testing.assert_allclose(sol.distance / scale, 2 * np.sqrt(2), rtol=1e-6, err_msg=name)
