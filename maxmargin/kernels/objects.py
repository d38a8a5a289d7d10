"""Kernels that are not formulas: a callable, a precomputed Gram matrix; and the factory that
turns SVC-style keywords into a kernel object (:func:`make_kernel`).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from maxmargin._validation import (
    check_array,
    check_choice,
    check_kernel_input,
    check_kernel_pair,
    check_positive,
    check_strings,
    is_text,
)
from maxmargin.kernels.base import Kernel, variance
from maxmargin.kernels.builtin import LinearKernel, PolyKernel, RBFKernel, SigmoidKernel

__all__ = ["CallableKernel", "PrecomputedKernel", "make_kernel", "precomputed", "own_points",
           "training_kernel", "KERNEL_NAMES"]

KERNEL_NAMES = ("linear", "rbf", "poly", "sigmoid")


@dataclass(frozen=True, eq=False)
class CallableKernel(Kernel):
    """A kernel given as a function ``k(A, B) -> (len(A), len(B))`` Gram block (scikit-learn's
    callable kernels); its values are checked for shape and finiteness on every call."""

    function: Any = None
    name = "callable"

    def __post_init__(self) -> None:
        if not callable(self.function):
            raise TypeError(f"`kernel` must be callable; got {type(self.function).__name__}.")

    def check_points(self, value: Any, name: str) -> Any:
        """Float arrays (dense or CSR) as for any kernel, or a sequence of strings."""
        return check_strings(value, name) if is_text(value) else check_kernel_input(value, name)

    def _check_pair(self, A: Any, B: Any) -> tuple[Any, Any]:
        A, B = self.check_points(A, "A"), self.check_points(B, "B")
        if A.ndim == 2 and B.ndim == 2 and A.shape[1] != B.shape[1]:
            return check_kernel_pair(A, B)  # its message about the columns
        return A, B

    def _block(self, A: Any, B: Any) -> np.ndarray:
        out = np.asarray(self.function(A, B), dtype=np.float64)
        if out.shape != (A.shape[0], B.shape[0]):
            raise ValueError(
                f"`kernel` (a callable) must return a block of shape ({A.shape[0]}, "
                f"{B.shape[0]}) for k(A, B); got shape {out.shape}."
            )
        return out

    def _diag(self, X: Any) -> np.ndarray:
        return np.array([self._block(X[i : i + 1], X[i : i + 1])[0, 0]
                         for i in range(X.shape[0])])

    def describe(self) -> str:
        return f"callable({getattr(self.function, '__name__', type(self.function).__name__)})"


@dataclass(frozen=True, eq=False)
class PrecomputedKernel(Kernel):
    """``kernel="precomputed"`` with scikit-learn's semantics: the Gram matrix ``G`` of the
    training points is given, and new points are given by their kernel values against the
    training points (an ``(n_new, n_train)`` block).

    Inside maxmargin the training points are their indices, an ``(n, 1)`` column
    (:meth:`training_points`), so ``K(i, j) = G[i, j]``; a block ``B`` of new points has
    ``K(b, j) = B[b, j]``.
    """

    gram_matrix: Any = None
    name = "precomputed"

    def __post_init__(self) -> None:
        G = check_array(self.gram_matrix, "X", ndim=2)
        if G.shape[0] != G.shape[1]:
            raise ValueError(
                f"`X` must be the square Gram matrix of the training points for "
                f"kernel='precomputed'; got shape {G.shape}."
            )
        asym = float(np.max(np.abs(G - G.T))) if G.size else 0.0
        if asym > 1e-8 * max(1.0, float(np.max(np.abs(G)))):
            raise ValueError(
                f"`X` must be symmetric for kernel='precomputed' (a Gram matrix); "
                f"max |X - X.T| = {asym:.3g}."
            )
        G = 0.5 * (G + G.T)
        G.flags.writeable = False
        object.__setattr__(self, "gram_matrix", G)

    @property
    def n_train(self) -> int:
        return int(self.gram_matrix.shape[0])

    def training_points(self) -> np.ndarray:
        """The training points as maxmargin sees them: their indices, shape ``(n, 1)``."""
        return np.arange(self.n_train, dtype=np.float64)[:, None]

    def check_points(self, value: Any, name: str) -> np.ndarray:
        """Index columns ``(m, 1)`` of training points, or blocks ``(m, n_train)`` of kernel
        values of new points against the training points."""
        A = check_array(value, name, ndim=2)
        if A.shape[1] == 1 and self.n_train != 1:
            idx = A[:, 0]
            if np.any(idx != np.round(idx)) or idx.min() < 0 or idx.max() >= self.n_train:
                raise ValueError(
                    f"`{name}` with one column must hold training indices in [0, "
                    f"{self.n_train}) for kernel='precomputed'."
                )
        elif A.shape[1] != self.n_train:
            raise ValueError(
                f"`{name}` must be the kernel values against the {self.n_train} training points "
                f"for kernel='precomputed' (shape (n, {self.n_train})); got shape {A.shape}."
            )
        return A

    def _check_pair(self, A: Any, B: Any) -> tuple[Any, Any]:
        return self.check_points(A, "A"), self.check_points(B, "B")

    def _block(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        cols = B[:, 0].astype(np.int64)
        if A.shape[1] == 1 and self.n_train != 1:
            return self.gram_matrix[np.ix_(A[:, 0].astype(np.int64), cols)]
        return A[:, cols]

    def _diag(self, X: np.ndarray) -> np.ndarray:
        idx = X[:, 0].astype(np.int64)
        return self.gram_matrix[idx, idx]


def own_points(kernel: Any) -> Any:
    """The point validation of a kernel object whose points are not float arrays (string
    kernels), else None (the ordinary array checks apply)."""
    if isinstance(kernel, Kernel) and type(kernel).check_points is not Kernel.check_points:
        return kernel.check_points
    return None


def _resolve_gamma(gamma: Any, X: np.ndarray | None, checked: bool = False) -> float:
    """scikit-learn's SVC rules: 'scale' = 1 / (d * X.var()), 'auto' = 1 / d, else gamma > 0
    (``checked``: ``X`` is validated already)."""
    if isinstance(gamma, str):
        check_choice(gamma, "gamma", ("scale", "auto"))
        if X is None:
            raise ValueError(f"`gamma`={gamma!r} needs the training data `X` to be resolved.")
        if not checked:
            X = check_array(X, "X", ndim=2, copy=False, sparse=True)
        d = X.shape[1]
        if gamma == "auto":
            return 1.0 / d
        var = variance(X)
        return 1.0 / (d * var) if var != 0.0 else 1.0
    return check_positive(gamma, "gamma")


def make_kernel(
    kernel: str | Kernel = "linear",
    *,
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 0.0,
    X: np.ndarray | None = None,
) -> Kernel:
    """Build a kernel object from SVC-style keywords.

    Parameters
    ----------
    kernel : {"linear", "rbf", "poly"} or Kernel
        A name, or a ready kernel object (returned unchanged; the keywords are then ignored).
    gamma : float or {"scale", "auto"}
        ``rbf``/``poly`` scale; ``"scale"`` is ``1 / (n_features * X.var())``, ``"auto"`` is
        ``1 / n_features`` (both need ``X``).
    degree : int
        ``poly`` degree (>= 1).
    coef0 : float
        ``poly`` offset.
    X : array, optional
        Training data: resolves ``gamma="scale"``/``"auto"``, and its kernel values
        ``K(x, x)`` must be finite (an overflow is a ``ValueError`` naming ``X``).
    """
    kern = kernel if isinstance(kernel, Kernel) else _named_kernel(kernel, gamma, degree, coef0, X)
    if X is not None:
        kern.diag(X)  # kernel values on the training data must be finite (rejects overflow)
    return kern


def training_kernel(kernel: str | Kernel, gamma: float | str, degree: int, coef0: float,
                    X: Any) -> Kernel:
    """:func:`make_kernel` for training data validated already as a finite float64 array or
    CSR matrix (an estimator's): ``X`` is not checked again, its values ``K(x, x)`` are (a
    kernel object with points of its own checks them as :func:`make_kernel` does)."""
    kern = (kernel if isinstance(kernel, Kernel)
            else _named_kernel(kernel, gamma, degree, coef0, X, checked=True))
    if own_points(kern) is None:
        kern.check_diag(X)
    else:
        kern.diag(X)
    return kern


def _named_kernel(
    kernel: Any, gamma: float | str, degree: int, coef0: float, X: np.ndarray | None,
    checked: bool = False,
) -> Kernel:
    """The kernel object of an SVC-style name (or a callable) and keywords (``checked``: as
    :func:`_resolve_gamma`'s)."""
    if callable(kernel) and not isinstance(kernel, str):
        return CallableKernel(kernel)
    check_choice(kernel, "kernel", KERNEL_NAMES)
    if kernel == "linear":
        return LinearKernel()
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real | str):
        raise ValueError(f"`gamma` must be a positive number, 'scale' or 'auto'; got {gamma!r}.")
    g = _resolve_gamma(gamma, X, checked)
    if kernel == "rbf":
        return RBFKernel(gamma=g)
    if kernel == "sigmoid":
        return SigmoidKernel(gamma=g, coef0=coef0)
    return PolyKernel(gamma=g, degree=degree, coef0=coef0)


def precomputed(kernel: Any, X: Any) -> tuple[Any, Any]:
    """``(kernel, X)`` as the algorithms use them: for ``kernel="precomputed"`` the
    :class:`PrecomputedKernel` of the Gram matrix ``X`` and the training indices; otherwise
    unchanged."""
    if isinstance(kernel, str) and kernel == "precomputed":
        k = PrecomputedKernel(X)
        return k, k.training_points()
    return kernel, X
