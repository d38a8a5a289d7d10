"""The kernel interface: :class:`Kernel`, what every kernel object gives (blocks, columns,
the diagonal, weighted row sums), with validation and finiteness checks in one place.

A subclass implements two computations on validated float64 data, :meth:`Kernel._block` and
:meth:`Kernel._diag`; everything else is shared. ``kind`` is the kernel's formula in the compiled
engine (:mod:`maxmargin.kernels.formulas`), ``KIND_GRAM`` for kernels read from their Gram
matrix.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from maxmargin._validation import (
    check_index,
    check_kernel_input,
    check_kernel_pair,
    check_kernel_values,
)
from maxmargin.kernels.formulas import KIND_GRAM
from maxmargin.tolerances import CENTRE_OFFSET_RATIO

__all__ = ["Kernel", "dot_block", "row_norms2", "variance"]


def dot_block(A: Any, B: Any) -> np.ndarray:
    """``A @ B.T`` as a dense float64 array (either operand may be scipy.sparse CSR)."""
    out = A @ B.T
    return out.toarray() if hasattr(out, "toarray") else np.asarray(out)


#: Stored entries squared at once by :func:`row_norms2` on CSR rows (bounded extra memory).
ROW_NORM_BLOCK = 1 << 16


def far_from_origin(X: np.ndarray) -> bool:
    """The rule for centring dense data (``smo``, ``dcd_svc``): ``||mean||^2 >
    CENTRE_OFFSET_RATIO`` times the mean squared distance to the mean, that distance summed
    over blocks of centred rows (no centred copy of the data, and no cancellation of ``mean
    ||x||^2 - ||mean||^2``)."""
    n = X.shape[0]
    centre = X.mean(axis=0)
    rows = max(1, 2**16 // max(1, X.shape[1]))  # blocks of 512 KB
    spread = 0.0
    for start in range(0, n, rows):
        block = X[start:start + rows] - centre
        spread += float(np.einsum("ij,ij->", block, block))
    return float(centre @ centre) > CENTRE_OFFSET_RATIO * spread / max(1, n)


def row_norms2(X: Any, block: int = ROW_NORM_BLOCK) -> np.ndarray:
    """``x_i . x_i`` for every row (dense, or scipy.sparse: CSR in blocks of about ``block``
    stored entries, no copy of ``X``)."""
    if not hasattr(X, "multiply"):
        return np.einsum("ij,ij->i", X, X)
    if X.format != "csr" or not X.has_canonical_format:  # duplicates would be squared apart
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    out = np.zeros(X.shape[0])
    indptr = X.indptr
    rows = np.flatnonzero(np.diff(indptr))  # rows with stored entries
    starts = indptr[rows]
    first = 0
    while first < rows.size:  # the rows whose entries start in the next block
        last = max(int(np.searchsorted(starts, starts[first] + block)), first + 1)
        lo, hi = starts[first], indptr[rows[last - 1] + 1]
        out[rows[first:last]] = np.add.reduceat(np.square(X.data[lo:hi]),
                                                starts[first:last] - lo)
        first = last
    return out


def variance(X: Any) -> float:
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
    #: the compiled formula (:mod:`maxmargin.kernels.formulas`); KIND_GRAM: read from a Gram matrix
    kind: int = KIND_GRAM

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
        return self.check_diag(self.check_points(X, "X"))

    def check_diag(self, X: Any) -> np.ndarray:
        """:meth:`diag` of points :meth:`check_points` has validated (not checked again); its
        values must be finite (a ``ValueError`` naming ``X`` otherwise)."""
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
