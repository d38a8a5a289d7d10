"""The one place where user input is checked.

Every public entry point of maxmargin (formulations, algorithms, verification) calls these
functions *before any work*. Each returns a fresh, C-contiguous float64 array (so inputs are
never modified) or a normalised scalar, and raises ``ValueError`` whose message names the
argument in backticks and says what was received.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

#: Largest feature magnitude accepted: (1e150)^2 times 1e4 features stays below 1.8e308.
MAX_MAGNITUDE = 1e150

__all__ = [
    "check_class_indices",
    "MAX_MAGNITUDE",
    "check_array",
    "check_Xy",
    "check_X_new",
    "check_C",
    "check_points",
    "check_hull_pair",
    "check_mu",
    "check_positive",
    "check_nonnegative",
    "check_positive_int",
    "check_max_iter",
    "check_choice",
    "check_finite_scalar",
    "check_magnitude",
    "check_finite_values",
    "check_bool",
    "check_kernel_input",
    "check_sparse",
    "check_kernel_pair",
    "check_index",
    "check_kernel_values",
    "check_sample_weight",
    "check_estimator_X",
    "check_strings",
    "is_text",
    "check_estimator_Xy",
]


def _describe(value: Any) -> str:
    """A short description of a received value for error messages."""
    if isinstance(value, np.ndarray):
        return f"array of shape {value.shape} and dtype {value.dtype}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _reject_complex(value: Any, name: str) -> None:
    """Complex input would be cast to float64 by dropping the imaginary part: refuse it."""
    try:
        is_complex = np.iscomplexobj(value)
    except (TypeError, ValueError):  # ragged or odd input: the conversion reports it
        return
    if is_complex:
        raise ValueError(f"`{name}` must be real; got complex values ({_describe(value)}).")


def _is_sparse(value: Any) -> bool:
    import scipy.sparse

    return scipy.sparse.issparse(value)


def check_sparse(value: Any, name: str, *, copy: bool = True) -> Any:
    """A scipy.sparse matrix as a finite float64 CSR matrix with >= 1 row and column and
    canonical (sorted, summed) indices; a new matrix unless ``copy=False`` and it already is
    one."""
    import scipy.sparse

    if np.iscomplexobj(value.data):
        raise ValueError(f"`{name}` must be real; got complex values ({value.format} matrix).")
    if value.ndim != 2:
        raise ValueError(f"`{name}` must be 2-D; got a sparse array of shape {value.shape}.")
    out = scipy.sparse.csr_matrix(value, dtype=np.float64, copy=copy)
    if not out.has_canonical_format:
        out = out.copy() if out is value else out
        out.sum_duplicates()
    if out.shape[0] == 0:
        raise ValueError(f"`{name}` must have at least one row; got shape {out.shape}.")
    if out.shape[1] == 0:
        raise ValueError(f"`{name}` must have at least one column; got shape {out.shape}.")
    if out.data.size:
        check_finite_values(out.data, name)
        check_magnitude(out.data, name)
    return out


def check_array(
    value: Any, name: str, *, ndim: int, copy: bool = True, sparse: bool = False
) -> np.ndarray:
    """Convert ``value`` to a finite float64 array with ``ndim`` dimensions and >= 1 row.

    Returns a new C-contiguous array (never a view of the input); with ``copy=False`` a float64
    C-contiguous input is returned as it is (for read-only uses such as kernel evaluation).
    With ``sparse=True`` a scipy.sparse matrix is accepted and returned as CSR
    (:func:`check_sparse`); otherwise it is refused with a message that says so.
    """
    if value is None:
        raise ValueError(f"`{name}` must be an array; got None.")
    if _is_sparse(value):
        if sparse and ndim == 2:
            return check_sparse(value, name, copy=copy)
        raise ValueError(
            f"`{name}` must be a dense array here; got a scipy.sparse {value.format} matrix "
            f"of shape {value.shape} (sparse input is taken by smo, the kernels, the linear "
            "oracles, kkt_residuals and MaxMarginClassifier; otherwise use .toarray())."
        )
    _reject_complex(value, name)
    try:
        arr = np.array(value, dtype=np.float64, copy=True if copy else None, order="C")
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"`{name}` must be a numeric array; got {_describe(value)} ({exc})."
        ) from None
    if arr.ndim != ndim:
        shape = "(n_samples, n_features)" if ndim == 2 else "(n_samples,)"
        raise ValueError(
            f"`{name}` must be a {ndim}-D array of shape {shape}; got ndim={arr.ndim} "
            f"with shape {arr.shape}."
        )
    if arr.shape[0] == 0:
        raise ValueError(f"`{name}` must have at least one row; got shape {arr.shape}.")
    if ndim == 2 and arr.shape[1] == 0:
        raise ValueError(f"`{name}` must have at least one column; got shape {arr.shape}.")
    check_finite_values(arr, name)
    if ndim == 2:
        check_magnitude(arr, name)
    return arr


def check_finite_values(arr: np.ndarray, name: str) -> None:
    """Refuse a non-empty float64 array with a NaN or infinite entry (its largest and smallest
    entries are finite exactly when all are: no temporary array of the data's size)."""
    if not (np.isfinite(arr.max()) and np.isfinite(arr.min())):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"`{name}` must be finite; got {bad} NaN or infinite value(s).")


def check_magnitude(arr: np.ndarray, name: str) -> None:
    """Refuse a finite float64 array with an entry above ``MAX_MAGNITUDE`` in magnitude (its
    squared norms and kernel values would overflow float64)."""
    top = max(float(arr.max()), -float(arr.min()))  # max |x| without a copy
    if top > MAX_MAGNITUDE:
        raise ValueError(
            f"`{name}` has entries up to {top:.3g} in magnitude: squared norms and kernel "
            f"values would overflow float64 (limit {MAX_MAGNITUDE:g}); rescale the features "
            "(for the linear SVM, X / s with C s^2 has the same solution up to w -> w / s)."
        )


def check_X(X: Any, *, sparse: bool = False, points: Any = None, copy: bool = True) -> Any:
    """Validate the data of a problem: a finite ``(n, d)`` array (a copy unless ``copy=False``;
    with ``sparse=True`` a scipy.sparse matrix is accepted and returned as CSR), or whatever
    ``points(X, "X")`` accepts when the kernel validates its own points (``own_points``)."""
    if points is not None:
        return points(X, "X")
    return check_array(X, "X", ndim=2, sparse=sparse, copy=copy)


def check_Xy(
    X: Any, y: Any, *, sparse: bool = False, points: Any = None
) -> tuple[Any, np.ndarray]:
    """Validate a labelled data set.

    ``X`` must be a finite ``(n, d)`` array (or, with ``sparse=True``, a scipy.sparse matrix,
    returned as CSR; or whatever ``points(X, "X")`` accepts, e.g. a string kernel's sequence
    of strings) and ``y`` a length-``n`` array whose values are exactly -1 and +1, with both
    classes present. Returns copies ``(X, y)``.
    """
    X = check_X(X, sparse=sparse, points=points)
    if y is None:
        raise ValueError("`y` must be an array of -1/+1 labels; got None.")
    _reject_complex(y, "y")
    try:
        y_arr = np.array(y, dtype=np.float64, copy=True)
    except (TypeError, ValueError):
        raise ValueError(
            f"`y` must contain only the labels -1 and +1; got {_describe(y)}."
        ) from None
    if y_arr.ndim != 1:
        raise ValueError(
            f"`y` must be a 1-D array of shape (n_samples,); got ndim={y_arr.ndim} "
            f"with shape {y_arr.shape}."
        )
    if y_arr.shape[0] != X.shape[0]:
        raise ValueError(
            f"`y` must have one label per row of `X`: `X` has {X.shape[0]} rows, "
            f"`y` has length {y_arr.shape[0]}."
        )
    if not np.all(np.isfinite(y_arr)):
        raise ValueError("`y` must contain only the labels -1 and +1; got NaN or inf.")
    bad = ~((y_arr == 1.0) | (y_arr == -1.0))
    if np.any(bad):
        others = np.unique(y_arr[bad])[:5]
        raise ValueError(
            f"`y` must contain only the labels -1 and +1; got other values {others.tolist()}."
        )
    if np.all(y_arr == y_arr[0]):
        raise ValueError(
            f"`y` must contain both classes -1 and +1; got only {int(y_arr[0]):+d}."
        )
    return X, y_arr


def check_X_new(X_new: Any, n_features: int, name: str = "X") -> Any:
    """Validate points to evaluate a fitted model on: a finite ``(m, n_features)`` array (or a
    scipy.sparse matrix, returned as CSR).

    A single 1-D point of length ``n_features`` is accepted and treated as one row.
    """
    if X_new is not None and _is_sparse(X_new):
        X_new = check_sparse(X_new, name, copy=False)
        if X_new.shape[1] != n_features:
            raise ValueError(
                f"`{name}` must have {n_features} features (columns) like the training data; "
                f"got {X_new.shape[1]}."
            )
        return X_new
    _reject_complex(X_new, name)
    try:
        arr = np.asarray(X_new, dtype=np.float64) if X_new is not None else None
    except (TypeError, ValueError):  # not numeric: check_array below names the argument
        arr = None
    if arr is not None and arr.ndim == 1 and arr.shape[0] == n_features:
        X_new = arr.reshape(1, -1)
    X_new = check_array(X_new, name, ndim=2)
    if X_new.shape[1] != n_features:
        raise ValueError(
            f"`{name}` must have {n_features} features (columns) like the training data; "
            f"got {X_new.shape[1]}."
        )
    return X_new


def check_finite_scalar(value: Any, name: str) -> float:
    """A real, finite number (bools are rejected)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"`{name}` must be a real number; got {_describe(value)}.")
    out = float(value)
    if not np.isfinite(out):
        raise ValueError(f"`{name}` must be finite; got {out!r}.")
    return out


def check_positive(value: Any, name: str) -> float:
    """A real, finite number > 0."""
    out = check_finite_scalar(value, name)
    if out <= 0:
        raise ValueError(f"`{name}` must be positive; got {out!r}.")
    return out


def check_nonnegative(value: Any, name: str) -> float:
    """A real, finite number >= 0."""
    out = check_finite_scalar(value, name)
    if out < 0:
        raise ValueError(f"`{name}` must be non-negative; got {out!r}.")
    return out


def check_C(C: Any, *, allow_none: bool = True) -> float | None:
    """The box bound of the soft margin: ``None`` (hard margin, C = infinity) or a finite C > 0."""
    if C is None:
        if allow_none:
            return None
        raise ValueError("`C` must be a positive finite number for this problem; got None.")
    if isinstance(C, bool) or not isinstance(C, numbers.Real):
        raise ValueError(f"`C` must be a positive number or None; got {_describe(C)}.")
    C = float(C)
    if not np.isfinite(C):
        hint = " (use C=None for the hard margin)" if C == np.inf else ""
        raise ValueError(f"`C` must be finite{hint}; got {C!r}.")
    if C <= 0:
        raise ValueError(f"`C` must be positive; got {C!r}.")
    return C


def check_positive_int(value: Any, name: str, *, minimum: int = 1) -> int:
    """An integer >= ``minimum`` (bools and non-integral floats are rejected)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ValueError(f"`{name}` must be an integer >= {minimum}; got {_describe(value)}.")
    value = int(value)
    if value < minimum:
        raise ValueError(f"`{name}` must be an integer >= {minimum}; got {value}.")
    return value


def check_max_iter(value: Any, name: str = "max_iter", *, default: int | None = None) -> int:
    """An iteration cap: a positive integer, or ``None`` for ``default``."""
    if value is None:
        if default is None:
            raise ValueError(f"`{name}` must be a positive integer; got None.")
        return int(default)
    return check_positive_int(value, name)


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """One of a fixed set of strings."""
    if not isinstance(value, str) or value not in choices:
        options = ", ".join(repr(c) for c in choices)
        raise ValueError(f"`{name}` must be one of {options}; got {_describe(value)}.")
    return value


def check_points(P: Any, name: str) -> np.ndarray:
    """A finite, non-empty point set: an ``(m, d)`` array whose rows are the points."""
    return check_array(P, name, ndim=2)


def check_hull_pair(P: Any, Q: Any) -> tuple[np.ndarray, np.ndarray]:
    """Two point sets in the same dimension, for the distance between their convex hulls."""
    P = check_points(P, "P")
    Q = check_points(Q, "Q")
    _same_columns(P, Q, "P", "Q", "dimension")
    return P, Q


def check_mu(mu: Any, sets: dict[str, np.ndarray]) -> float:
    """``mu > 0`` with ``mu * m >= 1`` for every point set (``RCH(mu)`` of ``m`` points is
    empty below ``1 / m``)."""
    mu = check_positive(mu, "mu")
    for name, S in sets.items():
        m = S.shape[0]
        if mu * m < 1.0 - 4.0 * np.finfo(np.float64).eps:
            raise ValueError(f"`mu` must be at least 1 / {m} = {1.0 / m:.6g} for the {m} points "
                             f"of `{name}` (the reduced hull RCH(mu) is empty below); got {mu!r}.")
    return mu


def _same_columns(A: Any, B: Any, a: str, b: str, what: str) -> None:
    """``A`` and ``B`` have as many columns; else a ``ValueError`` naming both."""
    if A.shape[1] != B.shape[1]:
        raise ValueError(
            f"`{a}` and `{b}` must have the same {what} (columns); got {A.shape[1]} and "
            f"{B.shape[1]}."
        )


def check_bool(value: Any, name: str) -> bool:
    """A flag: ``True`` or ``False`` (NumPy booleans accepted; 0/1 and strings are rejected)."""
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"`{name}` must be True or False; got {_describe(value)}.")
    return bool(value)


def check_kernel_input(value: Any, name: str) -> Any:
    """Points to evaluate a kernel on: a finite ``(n, d)`` float64 array or scipy.sparse CSR
    matrix (not copied when it already is one; kernels only read it)."""
    return check_array(value, name, ndim=2, copy=False, sparse=True)


def check_kernel_pair(A: Any, B: Any) -> tuple[np.ndarray, np.ndarray]:
    """The two point sets of a kernel block ``K(A, B)``: finite 2-D arrays with the same number
    of columns."""
    A = check_kernel_input(A, "A")
    B = check_kernel_input(B, "B")
    _same_columns(A, B, "A", "B", "number of features")
    return A, B


def check_index(value: Any, name: str, n: int) -> np.ndarray:
    """Row indices into ``n`` rows: integers in ``[0, n)`` (a scalar or a 1-D array)."""
    arr = np.asarray(value)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer) or arr.ndim > 1:
        raise ValueError(
            f"`{name}` must be an integer index or a 1-D array of them; got {_describe(value)}."
        )
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        raise ValueError(
            f"`{name}` must lie in [0, {n}) (the rows of `X`); got values from {int(arr.min())} "
            f"to {int(arr.max())}."
        )
    return arr.astype(np.int64)


def check_kernel_values(values: np.ndarray, kernel: str, names: str) -> np.ndarray:
    """Kernel values computed from valid points must be finite: an overflow (for example the
    ``poly`` kernel on large features) is reported naming the points and what to do."""
    finite = np.isfinite(values)
    if not np.all(finite):
        bad = int(finite.size - np.count_nonzero(finite))
        raise ValueError(
            f"kernel {kernel} on {names} overflows float64 ({bad} non-finite value(s)): "
            "rescale the features (or lower `gamma`) so that kernel values stay finite."
        )
    return values


def check_sample_weight(value: Any, y: np.ndarray) -> np.ndarray | None:
    """Per-sample weights of the box bound (``C_i = C w_i``): None, or a finite 1-D array of
    positive numbers, one per label. (Zero weights mean "leave the sample out": do that.)"""
    if value is None:
        return None
    w = check_array(value, "sample_weight", ndim=1)
    if w.shape[0] != y.shape[0]:
        raise ValueError(
            f"`sample_weight` must have one weight per row of `X`: `X` has {y.shape[0]} rows, "
            f"`sample_weight` has length {w.shape[0]}."
        )
    if np.any(w <= 0.0):
        raise ValueError(
            f"`sample_weight` must be positive (leave zero-weight samples out); got minimum "
            f"{float(w.min())!r}."
        )
    return w


def check_class_indices(value: Any, n: int, n_classes: int | None = None) -> np.ndarray:
    """Class indices ``0 .. K-1`` (``K = n_classes``, default ``max + 1``), one per row of
    ``X`` (``n`` rows), at least two classes present: an int64 copy."""
    if value is None:
        raise ValueError("`y` must be an array of class indices; got None.")
    _reject_complex(value, "y")
    try:
        arr = np.array(value, dtype=np.float64, copy=True)
    except (TypeError, ValueError):
        raise ValueError(f"`y` must be class indices 0, 1, ...; got {_describe(value)}.") from None
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"`y` must be a 1-D array of one class index per row of `X` ({n}); "
                         f"got shape {arr.shape}.")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr != np.round(arr)):
        raise ValueError("`y` must be class indices 0, 1, ... (non-negative integers).")
    top = int(arr.max()) + 1 if n_classes is None else int(n_classes)
    if arr.max() >= top:
        raise ValueError(f"`y` has class index {int(arr.max())} >= n_classes = {top}.")
    if np.unique(arr).shape[0] < 2:
        raise ValueError("`y` must hold at least two classes.")
    return arr.astype(np.int64)


def is_text(value: Any) -> bool:
    """A sequence of strings (a list or tuple holding a ``str``, or a text/object array)."""
    if isinstance(value, list | tuple):
        return any(isinstance(v, str) for v in value)
    return isinstance(value, np.ndarray) and value.dtype.kind in "OU"


def check_estimator_X(estimator: Any, X: Any, *, reset: bool, points: Any = None) -> Any:
    """``X`` of a scikit-learn estimator: scikit-learn's ``validate_data`` (its messages, which
    its estimator checks expect, prefixed with the argument's name) and then the magnitude
    limit of :func:`check_array`. ``reset=True`` at ``fit`` (records ``n_features_in_``).
    Strings go to ``points`` (a string kernel's own validation) when it is given."""
    from sklearn.utils.validation import validate_data

    if points is not None and is_text(X):
        return points(X, "X")

    try:
        X = validate_data(estimator, X, dtype=np.float64, order="C", reset=reset,
                          accept_sparse="csr")
    except ValueError as exc:
        raise ValueError(f"`X`: {exc}") from None
    if isinstance(X, np.ndarray):  # finite float64, C-ordered, >= 1 row and column already
        check_magnitude(X, "X")
        return X
    return check_array(X, "X", ndim=2, copy=False, sparse=True)


def check_estimator_Xy(
    estimator: Any, X: Any, y: Any, points: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """``X`` and the labels ``y`` (any classification targets) at ``fit``."""
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_consistent_length, column_or_1d

    if y is None:
        raise ValueError(
            f"`y`: {type(estimator).__name__} requires y to be passed, but the target y is None."
        )
    X = check_estimator_X(estimator, X, reset=True, points=points)
    try:
        y = column_or_1d(y, warn=True)
        check_consistent_length(X, y)
        check_classification_targets(y)
    except ValueError as exc:
        raise ValueError(f"`y`: {exc}") from None
    return X, y


def check_strings(value: Any, name: str, min_length: int = 1) -> np.ndarray:
    """Points of a string kernel: a non-empty list, tuple or 1-D array of ``str``, each at least
    ``min_length`` characters long. Returns a 1-D object array (a new one)."""
    if value is None:
        raise ValueError(f"`{name}` must be a sequence of strings; got None.")
    if isinstance(value, str):
        raise ValueError(f"`{name}` must be a sequence of strings, not one string; got {value!r}.")
    try:
        items = list(value) if not isinstance(value, np.ndarray) or value.ndim == 1 else None
    except TypeError:
        items = None
    if items is None:
        raise ValueError(f"`{name}` must be a 1-D sequence of strings; got {_describe(value)}.")
    if not items:
        raise ValueError(f"`{name}` must hold at least one string; got none.")
    bad = [k for k, x in enumerate(items) if not isinstance(x, str)]
    if bad:
        raise ValueError(
            f"`{name}` must hold only strings; item {bad[0]} is {type(items[bad[0]]).__name__} "
            f"({_describe(items[bad[0]])})."
        )
    short = [k for k, x in enumerate(items) if len(x) < min_length]
    if short:
        raise ValueError(
            f"`{name}`: every string must have at least {min_length} character(s) (the "
            f"subsequence length); item {short[0]} is {items[short[0]]!r}."
        )
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out
