"""The kernel engine: every kernel maxmargin evaluates, and the only code that knows their
formulas.

=========  =====================================  ============================================
name       K(x, z)                                class
=========  =====================================  ============================================
linear     x . z                                  :class:`LinearKernel`
rbf        exp(-gamma ||x - z||^2)                :class:`RBFKernel`
poly       (gamma x . z + coef0)^degree           :class:`PolyKernel`
sigmoid    tanh(gamma x . z + coef0)              :class:`SigmoidKernel`
callable   k(A, B), a Gram block                  :class:`CallableKernel`
strings    Lodhi et al.'s subsequence kernel      :class:`StringSubsequenceKernel`
=========  =====================================  ============================================

plus ``kernel="precomputed"`` (:class:`PrecomputedKernel`, scikit-learn's semantics). A kernel
object gives blocks ``k(A, B)``, the Gram matrix (``gram``), columns (``column``,
``columns``) and the diagonal (``diag``), validated and checked finite
(:mod:`.base`). The formulas are compiled once (:mod:`.formulas`) and serve both the kernel
objects and the algorithms' Q-matrix (:mod:`.qmatrix`: columns, blocks of columns and the
diagonal of ``Q_ij = y_i y_j K(x_i, x_j)``, compiled for the built-ins on dense and sparse
data, read from the Gram matrix for the others). A new kernel is one class.

:func:`make_kernel` turns SVC-style keywords (``kernel=..., gamma=..., degree=..., coef0=...``)
into a kernel object, resolving ``gamma="scale"`` (``1 / (d X.var())``) and ``"auto"``
(``1 / d``) as scikit-learn's SVC does.
"""

from maxmargin.kernels.base import Kernel
from maxmargin.kernels.builtin import LinearKernel, PolyKernel, RBFKernel, SigmoidKernel
from maxmargin.kernels.objects import (
    KERNEL_NAMES,
    CallableKernel,
    PrecomputedKernel,
    make_kernel,
    own_points,
    precomputed,
)
from maxmargin.kernels.strings import StringSubsequenceKernel

__all__ = [
    "Kernel", "LinearKernel", "RBFKernel", "PolyKernel", "SigmoidKernel", "CallableKernel",
    "StringSubsequenceKernel", "PrecomputedKernel", "make_kernel", "precomputed",
    "KERNEL_NAMES", "own_points",
]
