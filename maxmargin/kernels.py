"""Kernels with scikit-learn SVC semantics.

=========  =====================================  ==========
name       K(x, z)                                 kernel_id
=========  =====================================  ==========
linear     x . z                                   0
rbf        exp(-gamma ||x - z||^2)                 1
poly       (gamma x . z + coef0)^degree            2
=========  =====================================  ==========

A kernel object gives the cross matrix ``K(A, B)`` (``kernel(A, B)``), the Gram matrix
(``gram``), single columns on demand (``column``) and the diagonal (``diag``). Everything is
computed with BLAS-backed NumPy (one matrix product per block). ``kernel_id`` and ``params``
let compiled code (the SMO and perceptron loops) evaluate the same kernel.

``make_kernel`` turns the user-facing ``kernel=..., gamma=..., degree=..., coef0=...`` keywords
into a kernel object, resolving ``gamma="scale"`` (1 / (d * X.var())) and ``gamma="auto"``
(1 / d) exactly as scikit-learn's SVC does.
"""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from maxmargin._validation import (
    check_array,
    check_choice,
    check_finite_scalar,
    check_index,
    check_kernel_input,
    check_kernel_pair,
    check_kernel_values,
    check_positive,
    check_positive_int,
)
from maxmargin.tolerances import CANCEL_RTOL

__all__ = [
    "Kernel", "LinearKernel", "RBFKernel", "PolyKernel", "SigmoidKernel", "CallableKernel",
    "StringSubsequenceKernel", "PrecomputedKernel", "make_kernel", "precomputed",
    "KERNEL_NAMES",
]

KERNEL_NAMES = ("linear", "rbf", "poly", "sigmoid")
_LOG2E = 1.4426950408889634
_LN2_HI = 0.6931471803691238
_LN2_LO = 1.9082149292705877e-10
_INV_FACT = tuple(1.0 / math.factorial(m) for m in range(14))  # Taylor coefficients of exp


@njit(cache=True, fastmath={"contract"})
def exp_nonpositive(x: float) -> tuple[float, int]:
    """``exp(x) = p 2^k`` for ``x <= 0``: returns ``(p, k)``.

    ``k = round(x / ln 2)``, ``r = x - k ln 2`` (``ln 2`` split in two, so ``r`` is exact to
    float64 rounding, ``|r| <= ln 2 / 2``), ``p = sum_{m=0}^{13} r^m / m!`` (truncation below
    ``(ln 2 / 2)^14 / 14! = 4e-18``, so ``p`` is float64-accurate up to Horner's rounding).
    ``x`` is clamped at -700 (``exp(-700) = 1e-304``). Unlike ``math.exp`` it vectorises: see
    :func:`exp_scaled_inplace`. Horner's steps may be fused multiply-adds (``contract``): one
    rounding a step instead of two.
    """
    x = max(x, -700.0)
    k = np.floor(x * _LOG2E + 0.5)
    r = (x - k * _LN2_HI) - k * _LN2_LO
    p = _INV_FACT[13]
    for m in range(12, -1, -1):  # Horner; constant trip count, unrolled by the compiler
        p = p * r + _INV_FACT[m]
    return p, np.int64(k)


@njit(cache=True)
def exp_scaled_inplace(values: np.ndarray, bits: np.ndarray, scale: float) -> None:
    """``values[k] <- exp(-scale values[k])`` in place for ``values >= 0`` (``bits``: an int64
    scratch of the same length), with index-free loops that vectorise: the polynomial part of
    :func:`exp_nonpositive`, then the power of two built from its exponent bits."""
    m = values.shape[0]
    for k in range(m):
        p, e = exp_nonpositive(-scale * values[k])
        values[k] = p
        bits[k] = (e + 1023) << 52
    powers = bits[:m].view(np.float64)
    for k in range(m):
        values[k] *= powers[k]


@njit(cache=True)
def _rbf_weighted_rows(
    D: np.ndarray, A: np.ndarray, B: np.ndarray, a2: np.ndarray, b2: np.ndarray, gamma: float,
    coef: np.ndarray, out: np.ndarray,
) -> None:
    """``out[i] = sum_j coef_j exp(-gamma ||a_i - b_j||^2)`` from the products ``D = A B^T``.

    ``||a - b||^2 = a.a + b.b - 2 a.b``; where that is below ``CANCEL_RTOL (a.a + b.b)`` (near
    duplicates) it is recomputed from the differences, as :meth:`RBFKernel._block` does. One
    pass over each row of ``D``.
    """
    k = D.shape[1]
    d2 = np.empty(k)
    bits = np.empty(k, dtype=np.int64)
    for i in range(D.shape[0]):
        row = D[i]
        a2_i = a2[i]
        near = False
        for j in range(k):
            v = a2_i + b2[j] - 2.0 * row[j]
            d2[j] = v
            near |= v < CANCEL_RTOL * (a2_i + b2[j])
        if near:
            for j in range(k):
                if d2[j] < CANCEL_RTOL * (a2_i + b2[j]):
                    s = 0.0
                    for f in range(A.shape[1]):
                        t = A[i, f] - B[j, f]
                        s += t * t
                    d2[j] = s
        for j in range(k):
            d2[j] = max(d2[j], 0.0)
        exp_scaled_inplace(d2, bits, gamma)
        s = 0.0
        for j in range(k):
            s += coef[j] * d2[j]
        out[i] = s


@njit(cache=True)
def _poly_weighted_rows(
    D: np.ndarray, gamma: float, coef0: float, degree: int, coef: np.ndarray, out: np.ndarray
) -> None:
    """``out[i] = sum_j coef_j (gamma D_ij + coef0)^degree`` from the products ``D = A B^T``.

    The power is taken by ``degree - 1`` multiplications, as :meth:`PolyKernel._power` and the
    compiled engine do; one pass over each row of ``D``, no temporaries of its size.
    """
    k = D.shape[1]
    base = np.empty(k)
    value = np.empty(k)
    for i in range(D.shape[0]):
        row = D[i]
        for j in range(k):
            base[j] = gamma * row[j] + coef0
            value[j] = base[j]
        for _ in range(degree - 1):
            for j in range(k):
                value[j] *= base[j]
        s = 0.0
        for j in range(k):
            s += coef[j] * value[j]
        out[i] = s


def _dot(A: Any, B: Any) -> np.ndarray:
    """``A @ B.T`` as a dense float64 array (either operand may be scipy.sparse CSR)."""
    out = A @ B.T
    return out.toarray() if hasattr(out, "toarray") else np.asarray(out)


def _row_norms2(X: Any) -> np.ndarray:
    """``x_i . x_i`` for every row (dense or scipy.sparse)."""
    if hasattr(X, "multiply"):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def _variance(X: Any) -> float:
    """``X.var()`` over all entries (scikit-learn's rule for a sparse ``X``)."""
    if hasattr(X, "multiply"):
        return float(X.multiply(X).mean() - X.mean() ** 2)
    return float(np.asarray(X).var())


class Kernel(ABC):
    """A positive semi-definite kernel ``K(x, z)``.

    The public methods (``k(A, B)``, ``gram``, ``column``, ``columns``, ``diag``) validate their
    arguments (finite 2-D float arrays with matching columns, indices in range) and check that
    the values computed are finite; a subclass implements the two computations on validated
    float64 arrays, :meth:`_block` and :meth:`_diag`.
    """

    name: str = "kernel"
    kernel_id: int = -1

    @abstractmethod
    def _block(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """``K[i, j] = K(A[i], B[j])`` for validated float64 ``A`` (m, d) and ``B`` (k, d)."""

    @abstractmethod
    def _diag(self, X: np.ndarray) -> np.ndarray:
        """``K(x_i, x_i)`` for a validated float64 ``X`` (n, d)."""

    def _values(self, compute: Any, names: str) -> np.ndarray:
        """Run ``compute()`` with float64 overflow silenced, then insist on finite values."""
        with np.errstate(over="ignore", invalid="ignore"):
            values = compute()
        return check_kernel_values(values, self.describe(), names)

    def check_points(self, value: Any, name: str) -> Any:
        """The kernel's points, validated: a finite ``(n, d)`` float array or scipy.sparse CSR
        matrix (string kernels: a sequence of strings). Used by every public method and by the
        algorithms for their ``X``."""
        return check_kernel_input(value, name)

    def _check_pair(self, A: Any, B: Any) -> tuple[Any, Any]:
        return check_kernel_pair(A, B)

    def _weighted(self, A: Any, B: Any, coef: np.ndarray, rows: int) -> np.ndarray:
        """``K(A, B) @ coef`` for validated ``A``, ``B``, evaluated ``rows`` rows of ``A`` at a
        time (bounded memory); values checked finite."""
        out = np.empty(A.shape[0])
        for start in range(0, A.shape[0], rows):
            stop = min(A.shape[0], start + rows)
            block = self._values(lambda a=A[start:stop]: self._block(a, B), "`X`")
            out[start:stop] = block @ coef
        return out

    def __call__(self, A: Any, B: Any) -> np.ndarray:
        """The cross matrix ``K[i, j] = K(A[i], B[j])`` of shape ``(len(A), len(B))``."""
        A, B = self._check_pair(A, B)
        return self._values(lambda: self._block(A, B), "`A` and `B`")

    def diag(self, X: Any) -> np.ndarray:
        """The diagonal ``K(x_i, x_i)`` of the Gram matrix, shape ``(n,)``."""
        X = self.check_points(X, "X")
        return self._values(lambda: self._diag(X), "`X`")

    @property
    def params(self) -> tuple[float, float, float]:
        """``(gamma, coef0, degree)`` as floats, for compiled kernel evaluation."""
        return (0.0, 0.0, 1.0)

    def gram(self, X: Any) -> np.ndarray:
        """The symmetric Gram matrix ``K(X, X)`` (symmetrised exactly)."""
        X = self.check_points(X, "X")
        G = self._values(lambda: self._block(X, X), "`X`")
        return 0.5 * (G + G.T)

    def column(self, X: Any, i: Any) -> np.ndarray:
        """Column ``i`` of the Gram matrix, ``K(x_j, x_i)`` for all ``j``; shape ``(n,)``."""
        X = self.check_points(X, "X")
        if np.ndim(i) != 0:
            raise ValueError(f"`i` must be a single integer index; got shape {np.shape(i)}.")
        i = int(check_index(i, "i", X.shape[0]))
        return self._values(lambda: self._block(X, X[i : i + 1])[:, 0], "`X`")

    def columns(self, X: Any, idx: Any) -> np.ndarray:
        """Columns ``idx`` of the Gram matrix in one BLAS call; shape ``(n, len(idx))``."""
        X = self.check_points(X, "X")
        idx = check_index(idx, "idx", X.shape[0]).reshape(-1)
        return self._values(lambda: self._block(X, X[idx]), "`X`")

    def describe(self) -> str:
        """A short human-readable name with parameters, e.g. ``rbf(gamma=0.5)``."""
        return self.name


@dataclass(frozen=True)
class LinearKernel(Kernel):
    """``K(x, z) = x . z``."""

    name = "linear"
    kernel_id = 0

    def _block(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        return _dot(A, B)

    def _diag(self, X: np.ndarray) -> np.ndarray:
        return _row_norms2(X)


@dataclass(frozen=True)
class RBFKernel(Kernel):
    """``K(x, z) = exp(-gamma ||x - z||^2)`` with ``gamma > 0``."""

    gamma: float = 1.0
    name = "rbf"
    kernel_id = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "gamma", check_positive(self.gamma, "gamma"))

    @property
    def params(self) -> tuple[float, float, float]:
        return (self.gamma, 0.0, 1.0)

    def _block(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """``exp(-gamma ||a - b||^2)`` with ``||a - b||^2 = a.a + b.b - 2 a.b`` (one BLAS
        product) on data centred at ``B``'s mean (the kernel is translation invariant), and the
        pairs where that expansion cancels (``||a - b||^2 < CANCEL_RTOL (a.a + b.b)``: near
        duplicates) recomputed from their differences, so ``K(x, x) = 1`` exactly and large
        ``gamma`` does not amplify round-off."""
        if not hasattr(A, "multiply") and not hasattr(B, "multiply"):
            centre = B.mean(axis=0)  # dense data only: centring would fill a sparse matrix
            A = A - centre
            B = B - centre
        a2 = _row_norms2(A)
        b2 = _row_norms2(B)
        d2 = _dot(A, B)  # in place from here: one m x k array, few passes over it
        d2 *= -2.0
        d2 += a2[:, None]
        d2 += b2[None, :]
        # candidates for cancellation against the largest possible scale, then the exact test
        if np.any(d2 < CANCEL_RTOL * (float(a2.max()) + float(b2.max()))):
            i, j = np.nonzero(d2 < CANCEL_RTOL * (a2[:, None] + b2[None, :]))
            for lo in range(0, i.size, 65536):  # bounded temporaries
                ii, jj = i[lo : lo + 65536], j[lo : lo + 65536]
                d2[ii, jj] = _row_norms2(A[ii] - B[jj])
        np.maximum(d2, 0.0, out=d2)
        d2 *= -self.gamma
        return np.exp(d2, out=d2)

    def _diag(self, X: np.ndarray) -> np.ndarray:
        return np.ones(X.shape[0])

    def _weighted(self, A: Any, B: Any, coef: np.ndarray, rows: int) -> np.ndarray:
        """``K(A, B) @ coef``: on dense data one BLAS product per block of rows, then one
        compiled pass (:func:`_rbf_weighted_rows`: distances, cancellation fix, exponential
        and the sum) instead of the block's NumPy passes; the same centring as :meth:`_block`."""
        if hasattr(A, "multiply") or hasattr(B, "multiply"):
            return super()._weighted(A, B, coef, rows)
        centre = B.mean(axis=0)
        Bc = np.ascontiguousarray(B - centre)
        b2 = _row_norms2(Bc)
        coef = np.ascontiguousarray(coef, dtype=np.float64)
        out = np.empty(A.shape[0])
        for start in range(0, A.shape[0], rows):
            stop = min(A.shape[0], start + rows)
            a = np.ascontiguousarray(A[start:stop] - centre)
            a2 = _row_norms2(a)
            if not math.isfinite(4.0 * (float(a2.max()) + float(b2.max()))):
                # squared norms near overflow: the checked NumPy block reports them by name
                out[start:stop] = super()._weighted(A[start:stop], B, coef, rows)
                continue
            _rbf_weighted_rows(a @ Bc.T, a, Bc, a2, b2, self.gamma, coef, out[start:stop])
        return out

    def gram(self, X: Any) -> np.ndarray:
        G = super().gram(X)
        np.fill_diagonal(G, 1.0)
        return G

    def describe(self) -> str:
        return f"rbf(gamma={self.gamma:.6g})"


@dataclass(frozen=True)
class PolyKernel(Kernel):
    """``K(x, z) = (gamma x . z + coef0)^degree`` with ``gamma > 0`` and integer ``degree >= 1``.

    It is positive semi-definite for ``coef0 >= 0`` (and for any ``coef0`` when ``degree == 1``).
    """

    gamma: float = 1.0
    degree: int = 3
    coef0: float = 0.0
    name = "poly"
    kernel_id = 2

    def __post_init__(self) -> None:
        object.__setattr__(self, "gamma", check_positive(self.gamma, "gamma"))
        object.__setattr__(self, "degree", check_positive_int(self.degree, "degree"))
        object.__setattr__(self, "coef0", check_finite_scalar(self.coef0, "coef0"))

    @property
    def params(self) -> tuple[float, float, float]:
        return (self.gamma, self.coef0, float(self.degree))

    def _block(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        return self._power(self.gamma * _dot(A, B) + self.coef0)

    def _diag(self, X: np.ndarray) -> np.ndarray:
        return self._power(self.gamma * _row_norms2(X) + self.coef0)

    def _power(self, base: np.ndarray) -> np.ndarray:
        """``base^degree`` by ``degree - 1`` in-place multiplications, the compiled engine's
        order (bit-identical values; numpy's ``**`` with an integer exponent above 2 calls
        ``pow``, about ten times slower)."""
        out = base.copy()
        for _ in range(self.degree - 1):
            out *= base
        return out

    def _weighted(self, A: Any, B: Any, coef: np.ndarray, rows: int) -> np.ndarray:
        """``K(A, B) @ coef``: on dense data one BLAS product per block of rows, then one
        compiled pass (:func:`_poly_weighted_rows`: base, power and the sum) instead of the
        block's NumPy passes and copies."""
        if hasattr(A, "multiply") or hasattr(B, "multiply"):
            return super()._weighted(A, B, coef, rows)
        Bc = np.ascontiguousarray(B)
        coef = np.ascontiguousarray(coef, dtype=np.float64)
        out = np.empty(A.shape[0])
        for start in range(0, A.shape[0], rows):
            stop = min(A.shape[0], start + rows)
            _poly_weighted_rows(A[start:stop] @ Bc.T, self.gamma, self.coef0, self.degree, coef,
                                out[start:stop])
        return out

    def describe(self) -> str:
        return f"poly(gamma={self.gamma:.6g}, degree={self.degree}, coef0={self.coef0:.6g})"


@dataclass(frozen=True)
class SigmoidKernel(Kernel):
    """``K(x, z) = tanh(gamma x . z + coef0)`` (scikit-learn SVC's ``"sigmoid"``; not positive
    semi-definite in general, so a dual oracle may refuse its Gram matrix)."""

    gamma: float = 1.0
    coef0: float = 0.0
    name = "sigmoid"

    def __post_init__(self) -> None:
        object.__setattr__(self, "gamma", check_positive(self.gamma, "gamma"))
        object.__setattr__(self, "coef0", check_finite_scalar(self.coef0, "coef0"))

    def _block(self, A: Any, B: Any) -> np.ndarray:
        return np.tanh(self.gamma * _dot(A, B) + self.coef0)

    def _diag(self, X: Any) -> np.ndarray:
        return np.tanh(self.gamma * _row_norms2(X) + self.coef0)

    def describe(self) -> str:
        return f"sigmoid(gamma={self.gamma:.6g}, coef0={self.coef0:.6g})"


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
        from maxmargin._validation import check_strings, is_text

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


def _resolve_gamma(gamma: Any, X: np.ndarray | None) -> float:
    """scikit-learn's SVC rules: 'scale' = 1 / (d * X.var()), 'auto' = 1 / d, else gamma > 0."""
    if isinstance(gamma, str):
        check_choice(gamma, "gamma", ("scale", "auto"))
        if X is None:
            raise ValueError(f"`gamma`={gamma!r} needs the training data `X` to be resolved.")
        X = check_array(X, "X", ndim=2, copy=False, sparse=True)
        d = X.shape[1]
        if gamma == "auto":
            return 1.0 / d
        var = _variance(X)
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


def _named_kernel(
    kernel: Any, gamma: float | str, degree: int, coef0: float, X: np.ndarray | None
) -> Kernel:
    """The kernel object of an SVC-style name (or a callable) and keywords."""
    if callable(kernel) and not isinstance(kernel, str):
        return CallableKernel(kernel)
    check_choice(kernel, "kernel", KERNEL_NAMES)
    if kernel == "linear":
        return LinearKernel()
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real | str):
        raise ValueError(f"`gamma` must be a positive number, 'scale' or 'auto'; got {gamma!r}.")
    g = _resolve_gamma(gamma, X)
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


# --- strings ----------------------------------------------------------------------------------


@njit(cache=True)
def _ssk_pair(s: np.ndarray, t: np.ndarray, n: int, lam: float, all_lengths: bool) -> float:
    """Lodhi et al.'s subsequence kernel by the ``O(n |s| |t|)`` dynamic programme.

    With ``K'_0 = 1`` and, for ``i = 1 .. n - 1`` (prefixes ``s[:a]``, ``t[:b]``),

    .. math::

        K''_i(s_{:a}, t_{:b}) &= \\lambda K''_i(s_{:a}, t_{:b-1})
            + [s_a = t_b] \\lambda^2 K'_{i-1}(s_{:a-1}, t_{:b-1}), \\
        K'_i(s_{:a}, t_{:b}) &= \\lambda K'_i(s_{:a-1}, t_{:b}) + K''_i(s_{:a}, t_{:b}), \\
        K_i(s, t) &= \textstyle\\sum_{a, b: s_a = t_b} \\lambda^2 K'_{i-1}(s_{:a-1}, t_{:b-1}),

    returns ``K_n`` (or ``K_1 + ... + K_n`` with ``all_lengths``).
    """
    S, T = s.shape[0], t.shape[0]
    prev = np.ones((S + 1, T + 1))  # K'_{i-1}, starting with K'_0 = 1
    lam2 = lam * lam
    total = 0.0
    for i in range(1, n + 1):
        k_i = 0.0
        for a in range(1, S + 1):
            for b in range(1, T + 1):
                if s[a - 1] == t[b - 1]:
                    k_i += lam2 * prev[a - 1, b - 1]
        if all_lengths or i == n:
            total += k_i
        if i == n:
            break
        cur = np.zeros((S + 1, T + 1))
        kpp = np.zeros(T + 1)
        for a in range(i, S + 1):
            kpp[:] = 0.0
            for b in range(i, T + 1):
                kpp[b] = lam * kpp[b - 1]
                if s[a - 1] == t[b - 1]:
                    kpp[b] += lam2 * prev[a - 1, b - 1]
                cur[a, b] = lam * cur[a - 1, b] + kpp[b]
        prev = cur
    return total


@njit(cache=True)
def _ssk_block(codes_a, starts_a, codes_b, starts_b, n, lam, all_lengths, symmetric):  # noqa: ANN001, ANN202
    m, k = starts_a.shape[0] - 1, starts_b.shape[0] - 1
    out = np.empty((m, k))
    for i in range(m):
        si = codes_a[starts_a[i] : starts_a[i + 1]]
        for j in range(k):
            if symmetric and j < i:
                out[i, j] = out[j, i]
                continue
            out[i, j] = _ssk_pair(si, codes_b[starts_b[j] : starts_b[j + 1]], n, lam,
                                  all_lengths)
    return out


@njit(cache=True)
def _ssk_self(codes, starts, n, lam, all_lengths):  # noqa: ANN001, ANN202
    out = np.empty(starts.shape[0] - 1)
    for i in range(out.shape[0]):
        si = codes[starts[i] : starts[i + 1]]
        out[i] = _ssk_pair(si, si, n, lam, all_lengths)
    return out


def _encode(strings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated code points and start offsets of a sequence of strings."""
    starts = np.zeros(len(strings) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in strings], out=starts[1:])
    text = "".join(strings)
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    return codes, starts


@dataclass(frozen=True)
class StringSubsequenceKernel(Kernel):
    """Lodhi et al.'s string subsequence kernel (2002).

    ``[phi_n(s)]_u = sum over index tuples i with s[i] = u of lam^(i_last - i_first + 1)`` and
    ``K_n(s, t) = <phi_n(s), phi_n(t)>``, computed by the dynamic programme of
    :func:`_ssk_pair`. ``all_lengths=True`` sums ``K_1 + ... + K_length`` (the convention of
    Shogun's ``SubsequenceStringKernel``); ``normalize=True`` divides by
    ``sqrt(K(s, s) K(t, t))``. The points are strings (a list, tuple or 1-D array of ``str``),
    each at least ``length`` characters long.
    """

    length: int = 2
    lam: float = 0.5
    normalize: bool = True
    all_lengths: bool = False
    name = "string"

    def __post_init__(self) -> None:
        object.__setattr__(self, "length", check_positive_int(self.length, "length"))
        lam = check_positive(self.lam, "lam")
        if lam > 1.0:
            raise ValueError(f"`lam` must be in (0, 1]; got {lam!r}.")
        object.__setattr__(self, "lam", lam)
        from maxmargin._validation import check_bool

        object.__setattr__(self, "normalize", check_bool(self.normalize, "normalize"))
        object.__setattr__(self, "all_lengths", check_bool(self.all_lengths, "all_lengths"))

    def check_points(self, value: Any, name: str) -> np.ndarray:
        from maxmargin._validation import check_strings

        return check_strings(value, name, self.length)

    def _check_pair(self, A: Any, B: Any) -> tuple[Any, Any]:
        return self.check_points(A, "A"), self.check_points(B, "B")

    def _raw(self, A: np.ndarray, B: np.ndarray, symmetric: bool = False) -> np.ndarray:
        ca, sa = _encode(A)
        cb, sb = _encode(B)
        return _ssk_block(ca, sa, cb, sb, self.length, self.lam, self.all_lengths, symmetric)

    def _self(self, X: np.ndarray) -> np.ndarray:
        """``K(s, s)`` of each string (remembered per string: normalisation needs them for
        every block)."""
        cache = self.__dict__.setdefault("_self_cache", {})
        missing = [x for x in dict.fromkeys(X) if x not in cache]
        if missing:
            codes, starts = _encode(np.array(missing, dtype=object))
            for x, v in zip(missing, _ssk_self(codes, starts, self.length, self.lam,
                                               self.all_lengths), strict=True):
                cache[x] = float(v)
        return np.array([cache[x] for x in X])

    def _block(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        K = self._raw(A, B, symmetric=A is B)
        if self.normalize:
            K = K / np.sqrt(np.outer(self._self(A), self._self(B)))
        return K

    def _diag(self, X: np.ndarray) -> np.ndarray:
        return np.ones(len(X)) if self.normalize else self._self(X)

    def describe(self) -> str:
        kind = "all lengths 1.." if self.all_lengths else "length "
        norm = ", normalized" if self.normalize else ""
        return f"string({kind}{self.length}, lam={self.lam:g}{norm})"
