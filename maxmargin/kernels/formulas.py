"""The kernel formulas, compiled: the one place that turns inner products into kernel values.

=========  =====================================  ====  ======================================
name       K(x, z)                                kind  from
=========  =====================================  ====  ======================================
linear     x . z                                  0     ``x . z``
rbf        exp(-gamma ||x - z||^2)                1     ``||x - z||^2`` (see below)
poly       (gamma x . z + coef0)^degree           2     ``x . z``
sigmoid    tanh(gamma x . z + coef0)              3     ``x . z``
=========  =====================================  ====  ======================================

Every evaluation of a built-in kernel -- a kernel object's blocks (:mod:`.builtin`), the
compiled Q-matrix columns of SMO and the nearest-point methods (:mod:`.qmatrix`), the weighted
row sums of the certificate and of prediction -- computes the inner products (or squared
distances) its own way and then calls :func:`finish_values` (or :func:`kernel_entry` for one
value), so the formulas exist once. ``KIND_GRAM`` (4) marks a Q-matrix that reads a stored Gram
matrix (precomputed, callable and string kernels).

An rbf squared distance comes from the inner product and the squared norms,
:func:`expanded_distance` ``= max(a.a + b.b - 2 a.b, 0)``, except where that has cancelled
(:func:`cancelled`: below ``CANCEL_RTOL (a.a + b.b)``, near duplicates): there it is summed
from the differences ``sum_f (a_f - b_f)^2`` in feature order (symmetric in ``a``, ``b``, 0 for
a point and itself), in every path that evaluates the kernel from norms (the kernel objects'
blocks and sums, the Q-matrix's columns and entries), so a large ``gamma`` does not amplify the
expansion's round-off.

The RBF exponential is :func:`exp_nonpositive`: range reduction and a degree-13 Taylor
polynomial, float64-accurate, and, unlike ``math.exp``, it vectorises.
"""

from __future__ import annotations

import math

import numpy as np

from maxmargin._jit import ENTRY, HELPER, INLINE, INTERNAL, njit
from maxmargin.tolerances import CANCEL_RTOL

__all__ = [
    "KIND_LINEAR", "KIND_RBF", "KIND_POLY", "KIND_SIGMOID", "KIND_GRAM", "KINDS",
    "exp_nonpositive", "exp_scaled_inplace", "finish_values", "finish_block", "kernel_entry",
    "power", "expanded_distance", "cancelled",
]

KIND_LINEAR, KIND_RBF, KIND_POLY, KIND_SIGMOID, KIND_GRAM = 0, 1, 2, 3, 4
#: The kinds by kernel name (``Kernel.name``); any other kernel is read from its Gram matrix.
KINDS = {"linear": KIND_LINEAR, "rbf": KIND_RBF, "poly": KIND_POLY, "sigmoid": KIND_SIGMOID}

_LOG2E = 1.4426950408889634
_LN2_HI = 0.6931471803691238
_LN2_LO = 1.9082149292705877e-10
_INV_FACT = tuple(1.0 / math.factorial(m) for m in range(14))  # Taylor coefficients of exp
#: ``exp(x)`` is taken as 0 below this (the smallest normal float64 is ``exp(-708.3964)``).
EXP_ZERO_BELOW = -708.3964


@njit(**INLINE, fastmath={"contract"})
def exp_nonpositive(x: float) -> tuple[float, int]:
    """``exp(x) = p 2^k`` for ``x <= 0``: returns ``(p, k)``.

    ``k = round(x / ln 2)``, ``r = x - k ln 2`` (``ln 2`` split in two, so ``r`` is exact to
    float64 rounding, ``|r| <= ln 2 / 2``), ``p = sum_{m=0}^{13} r^m / m!`` (truncation below
    ``(ln 2 / 2)^14 / 14! = 4e-18``). ``x`` is clamped at -700 (``exp(-700) = 1e-304``).
    Horner's steps may be fused multiply-adds (``contract``): one rounding a step.
    """
    x = max(x, -700.0)
    k = np.floor(x * _LOG2E + 0.5)
    r = (x - k * _LN2_HI) - k * _LN2_LO
    p = _INV_FACT[13]
    for m in range(12, -1, -1):  # Horner; constant trip count, unrolled by the compiler
        p = p * r + _INV_FACT[m]
    return p, np.int64(k)


@njit(**ENTRY)
def exp_scaled_inplace(values: np.ndarray, bits: np.ndarray, scale: float) -> None:
    """``values[k] <- exp(-scale values[k])`` in place for ``values >= 0`` (``bits``: an int64
    scratch of the same length), with index-free loops that vectorise: the polynomial part of
    :func:`exp_nonpositive`, then the power of two built from its exponent bits; 0 where
    ``-scale values[k] < EXP_ZERO_BELOW``."""
    m = values.shape[0]
    for k in range(m):
        x = -scale * values[k]
        p, e = exp_nonpositive(x)
        values[k] = p
        # below float64's normal range the power is 0 (its bits all 0): exactly 0, as libm's
        # exp gives a far point (a pairwise decision value of exactly 0 stays one)
        bits[k] = ((e + 1023) << 52) * (x >= EXP_ZERO_BELOW)
    powers = bits[:m].view(np.float64)
    for k in range(m):
        values[k] *= powers[k]


@njit(**INLINE)
def power(base: float, degree: int) -> float:
    """``base^degree`` by ``degree - 1`` multiplications (the one order every path uses)."""
    v = base
    for _ in range(degree - 1):
        v *= base
    return v


@njit(**INTERNAL)
def finish_values(kind: int, gamma: float, coef0: float, degree: int, values: np.ndarray,
                  bits: np.ndarray) -> None:
    """Turn inner products into kernel values, in place (module table): ``values`` holds
    ``x . z`` (``||x - z||^2`` for rbf) on entry; ``bits`` is an int64 scratch as long."""
    if kind == KIND_RBF:
        exp_scaled_inplace(values, bits, gamma)
    elif kind == KIND_POLY:  # power()'s order, vectorised: the base kept in bits' memory
        m = values.shape[0]
        base = bits[:m].view(np.float64)
        for k in range(m):
            base[k] = gamma * values[k] + coef0
            values[k] = base[k]
        for _ in range(degree - 1):
            for k in range(m):
                values[k] *= base[k]
    elif kind == KIND_SIGMOID:
        for k in range(values.shape[0]):
            values[k] = np.tanh(gamma * values[k] + coef0)


@njit
def finish_block(kind: int, gamma: float, coef0: float, degree: int, block: np.ndarray) -> None:
    """:func:`finish_values` on every row of a C-contiguous 2-D block, in place."""
    bits = np.empty(block.shape[1], dtype=np.int64)
    for i in range(block.shape[0]):
        finish_values(kind, gamma, coef0, degree, block[i], bits)


@njit(**HELPER)
def kernel_entry(kind: int, gamma: float, coef0: float, degree: int, value: float) -> float:
    """One kernel value from ``value = a . b`` (``||a - b||^2`` for rbf), as
    :func:`finish_values` (``math.exp`` for rbf)."""
    if kind == KIND_RBF:
        return math.exp(-gamma * value)
    if kind == KIND_POLY:
        return power(gamma * value + coef0, degree)
    if kind == KIND_SIGMOID:
        return math.tanh(gamma * value + coef0)
    return value


@njit(**INLINE)
def expanded_distance(dot: float, sq_a: float, sq_b: float) -> float:
    """``||a - b||^2 = max(a.a + b.b - 2 a.b, 0)`` from ``dot = a . b`` and the squared norms
    ``sq_a = a . a``, ``sq_b = b . b`` (to be replaced where :func:`cancelled`)."""
    return max(sq_a + sq_b - 2.0 * dot, 0.0)


@njit(**INLINE)
def cancelled(d2: float, sq_a: float, sq_b: float) -> bool:
    """Whether the :func:`expanded_distance` ``d2`` of ``a``, ``b`` has cancelled:
    ``d2 < CANCEL_RTOL (a.a + b.b)`` (near duplicates). Such a distance is summed from the
    differences instead (module docstring); never where ``a.a + b.b = 0``."""
    return d2 < CANCEL_RTOL * (sq_a + sq_b)
