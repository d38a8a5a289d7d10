"""The built-in kernels, with scikit-learn SVC's meanings: linear, rbf, poly, sigmoid.

Each evaluates inner products (or squared distances) with BLAS and turns them into kernel
values with the compiled formulas of :mod:`maxmargin.kernels.formulas` -- the same code the
Q-matrix engine of the algorithms uses. The RBF kernel is translation invariant: its blocks are
computed on data centred at the second argument's mean, with near-duplicate pairs recomputed
from their differences (``||a - b||^2 < CANCEL_RTOL (a.a + b.b)``), so ``K(x, x) = 1`` exactly
and a large ``gamma`` does not amplify round-off.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from maxmargin._jit import njit
from maxmargin._validation import check_finite_scalar, check_positive, check_positive_int
from maxmargin.kernels.base import Kernel, dot_block, row_norms2
from maxmargin.kernels.formulas import (
    KIND_LINEAR,
    KIND_POLY,
    KIND_RBF,
    KIND_SIGMOID,
    cancelled,
    expanded_distance,
    finish_block,
    finish_values,
)
from maxmargin.tolerances import CANCEL_RTOL

__all__ = ["LinearKernel", "RBFKernel", "PolyKernel", "SigmoidKernel"]


@njit
def _rbf_weighted_rows(
    D: np.ndarray, A: np.ndarray, B: np.ndarray, a2: np.ndarray, b2: np.ndarray, gamma: float,
    coef: np.ndarray, out: np.ndarray,
) -> None:
    """``out[i] = sum_j coef_j exp(-gamma ||a_i - b_j||^2)`` from the products ``D = A B^T``.

    ``||a - b||^2 = a.a + b.b - 2 a.b``; where that is below ``CANCEL_RTOL (a.a + b.b)`` (near
    duplicates: :func:`~maxmargin.kernels.formulas.cancelled`) it is recomputed from the
    differences, as :meth:`RBFKernel._block` does. One pass over each row of ``D``.
    """
    k = D.shape[1]
    d2 = np.empty(k)
    bits = np.empty(k, dtype=np.int64)
    for i in range(D.shape[0]):
        row = D[i]
        a2_i = a2[i]
        near = False
        for j in range(k):
            v = expanded_distance(row[j], a2_i, b2[j])
            d2[j] = v
            near |= cancelled(v, a2_i, b2[j])
        if near:
            for j in range(k):
                if cancelled(d2[j], a2_i, b2[j]):
                    s = 0.0
                    for f in range(A.shape[1]):
                        t = A[i, f] - B[j, f]
                        s += t * t
                    d2[j] = s
        # int64, not literals: the one specialisation every caller shares
        finish_values(np.int64(KIND_RBF), gamma, 0.0, np.int64(1), d2, bits)
        s = 0.0
        for j in range(k):
            s += coef[j] * d2[j]
        out[i] = s


@njit
def _poly_weighted_rows(
    D: np.ndarray, gamma: float, coef0: float, degree: int, coef: np.ndarray, out: np.ndarray
) -> None:
    """``out[i] = sum_j coef_j (gamma D_ij + coef0)^degree`` from the products ``D = A B^T``.

    The power is :func:`~maxmargin.kernels.formulas.finish_values`' (the compiled engine's);
    one pass over each row of ``D``, no temporaries of its size.
    """
    k = D.shape[1]
    values = np.empty(k)
    bits = np.empty(k, dtype=np.int64)
    for i in range(D.shape[0]):
        row = D[i]
        for j in range(k):
            values[j] = row[j]
        finish_values(np.int64(KIND_POLY), gamma, coef0, degree, values, bits)  # not a literal
        s = 0.0
        for j in range(k):
            s += coef[j] * values[j]
        out[i] = s


@dataclass(frozen=True)
class LinearKernel(Kernel):
    """``K(x, z) = x . z``."""

    name = "linear"
    kind = KIND_LINEAR

    def _block(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        return dot_block(A, B)

    def _diag(self, X: np.ndarray) -> np.ndarray:
        return row_norms2(X)


@dataclass(frozen=True)
class RBFKernel(Kernel):
    """``K(x, z) = exp(-gamma ||x - z||^2)`` with ``gamma > 0``."""

    gamma: float = 1.0
    name = "rbf"
    kind = KIND_RBF

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
        a2 = row_norms2(A)
        b2 = row_norms2(B)
        d2 = dot_block(A, B)  # in place from here: one m x k array, few passes over it
        d2 *= -2.0
        d2 += a2[:, None]
        d2 += b2[None, :]
        # candidates for cancellation against the largest possible scale, then the exact test
        if np.any(d2 < CANCEL_RTOL * (float(a2.max()) + float(b2.max()))):
            i, j = np.nonzero(d2 < CANCEL_RTOL * (a2[:, None] + b2[None, :]))
            for lo in range(0, i.size, 65536):  # bounded temporaries
                ii, jj = i[lo : lo + 65536], j[lo : lo + 65536]
                d2[ii, jj] = row_norms2(A[ii] - B[jj])
        np.maximum(d2, 0.0, out=d2)
        finish_block(KIND_RBF, self.gamma, 0.0, 1, d2)
        return d2

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
        b2 = row_norms2(Bc)
        coef = np.ascontiguousarray(coef, dtype=np.float64)
        out = np.empty(A.shape[0])
        for start in range(0, A.shape[0], rows):
            stop = min(A.shape[0], start + rows)
            a = np.ascontiguousarray(A[start:stop] - centre)
            a2 = row_norms2(a)
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
    kind = KIND_POLY

    def __post_init__(self) -> None:
        object.__setattr__(self, "gamma", check_positive(self.gamma, "gamma"))
        object.__setattr__(self, "degree", check_positive_int(self.degree, "degree"))
        object.__setattr__(self, "coef0", check_finite_scalar(self.coef0, "coef0"))

    @property
    def params(self) -> tuple[float, float, float]:
        return (self.gamma, self.coef0, float(self.degree))

    def _block(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        block = np.ascontiguousarray(dot_block(A, B))
        finish_block(KIND_POLY, self.gamma, self.coef0, self.degree, block)
        return block

    def _diag(self, X: np.ndarray) -> np.ndarray:
        values = np.ascontiguousarray(row_norms2(X), dtype=np.float64)[None, :]
        finish_block(KIND_POLY, self.gamma, self.coef0, self.degree, values)
        return values[0]

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
    kind = KIND_SIGMOID

    def __post_init__(self) -> None:
        object.__setattr__(self, "gamma", check_positive(self.gamma, "gamma"))
        object.__setattr__(self, "coef0", check_finite_scalar(self.coef0, "coef0"))

    @property
    def params(self) -> tuple[float, float, float]:
        return (self.gamma, self.coef0, 1.0)

    def _block(self, A: Any, B: Any) -> np.ndarray:
        block = np.ascontiguousarray(dot_block(A, B))
        finish_block(KIND_SIGMOID, self.gamma, self.coef0, 1, block)
        return block

    def _diag(self, X: Any) -> np.ndarray:
        values = np.ascontiguousarray(row_norms2(X), dtype=np.float64)[None, :]
        finish_block(KIND_SIGMOID, self.gamma, self.coef0, 1, values)
        return values[0]

    def describe(self) -> str:
        return f"sigmoid(gamma={self.gamma:.6g}, coef0={self.coef0:.6g})"
