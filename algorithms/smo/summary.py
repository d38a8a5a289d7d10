"""A soft-margin run's float64 summary in one compiled pass: the certificate's numbers
(:func:`~maxmargin.certificate.certify_svm`) and the answer's ``b`` and objectives
(:mod:`.result`), bit for bit as their NumPy computations, for the many small problems of a
batch (:mod:`.batch`), whose per-problem cost is mostly NumPy's per-call overhead.

With ``v = alpha o y``, ``r = y - g`` and the box ``C``:

* ``v^T K v = v . g`` and ``y . alpha`` are NumPy's dot products, as there;
* ``sum(alpha)``, ``sum |alpha|`` and ``b = mean_{0 < alpha_t < C_t} r_t`` are NumPy's pairwise
  sums (:func:`pairwise_sum`, its order: blocks of eight partial sums, halves above 128);
* ``m - M``, the box violation and the KKT interval are maxima and minima (exact in any order);
* the certificate's ``b`` is :func:`~maxmargin.certificate.minimise_hinge_over_b`'s minimiser
  on the same sorted kinks, and each slack ``C . max(0, 1 - y o (g + b))`` a NumPy dot product
  of the same vector.

Hard margins, non-finite values and any other shape take the NumPy path (None here).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from maxmargin._jit import njit
from maxmargin.certificate import Certificate, _hinge_minimiser

__all__ = ["Summary", "pairwise_sum", "summarise"]


class Summary(NamedTuple):
    """What :func:`summarise` computes from ``g = K (alpha o y)``."""

    certificate: Certificate
    b: float  # LIBSVM's b (recover_intercept's)
    interval: tuple[float, float]  # its KKT interval
    w2: float  # ||w||^2 = max(v . g, 0)
    slack: float  # C . max(0, 1 - y o (g + b))
    g: np.ndarray  # the g it summarises


@njit
def _block_sum(a: np.ndarray, lo: int, n: int) -> float:
    """NumPy's pairwise sum of ``a[lo:lo + n]`` for ``n <= 128``: sequential below 8 values,
    else eight partial sums combined as a tree, then the rest."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i, whole = lo + 8, lo + n - n % 8
    while i < whole:
        r0 += a[i]
        r1 += a[i + 1]
        r2 += a[i + 2]
        r3 += a[i + 3]
        r4 += a[i + 4]
        r5 += a[i + 5]
        r6 += a[i + 6]
        r7 += a[i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < lo + n:
        res += a[i]
        i += 1
    return res


@njit
def pairwise_sum(a: np.ndarray, lo: int, n: int) -> float:
    """``a[lo:lo + n].sum()`` in NumPy's order for contiguous float64 (its ``pairwise_sum``):
    blocks of at most 128 values (:func:`_block_sum`); above, the two halves (the first a
    multiple of 8) summed alike and added. The tree is walked with a stack, not recursion
    (Numba's cache does not keep recursive functions)."""
    if n <= 128:
        return _block_sum(a, lo, n)
    start, size, half = np.empty(64, np.int64), np.empty(64, np.int64), np.empty(64, np.int64)
    left, right_next = np.empty(64), np.zeros(64, np.bool_)
    top, start[0], size[0] = 0, lo, n
    while True:
        if size[top] > 128:  # descend into the left half
            h = size[top] // 2
            half[top] = h - h % 8
            right_next[top] = False
            start[top + 1], size[top + 1] = start[top], half[top]
            top += 1
            continue
        v = _block_sum(a, start[top], size[top])
        while True:  # climb: a finished left half starts its right half, a right half adds up
            top -= 1
            if top < 0:
                return v
            if not right_next[top]:
                left[top], right_next[top] = v, True
                start[top + 1] = start[top] + half[top]
                size[top + 1] = size[top] - half[top]
                top += 1
                break
            v = left[top] + v


@njit
def _one_pass(alpha: np.ndarray, y: np.ndarray, g: np.ndarray, upper: np.ndarray,
              work: np.ndarray) -> tuple[bool, float, float, float, float, float, float, float,
                                         float, int, int]:
    """Fill ``work`` (rows: ``v``, ``|alpha|``, the free ``r``, the positives' kinks and
    bounds, the negatives' kinks and bounds) and return ``(finite, m - M, box violation,
    max C, sum alpha, sum |alpha|, b, lo, hi, positives, negatives)`` (``b``: the free ``r``'s
    mean, NaN when none is free; ``lo``, ``hi``: the KKT interval then)."""
    n = alpha.shape[0]
    v, mag, free_r = work[0], work[1], work[2]
    rp, cp, rn, cn = work[3], work[4], work[5], work[6]
    m, M, box, top = -np.inf, np.inf, 0.0, -np.inf
    lo, hi = -np.inf, np.inf
    n_free = n_pos = n_neg = 0
    finite = True
    for i in range(n):
        a, u, yi, gi = alpha[i], upper[i], y[i], g[i]
        finite = finite and math.isfinite(a) and math.isfinite(gi)
        v[i] = a * yi
        mag[i] = abs(a)
        r = yi - gi
        below, above = a < u, a > 0
        if (below and yi > 0) or (above and yi < 0):
            m = max(m, r)
        if (below and yi < 0) or (above and yi > 0):
            M = min(M, r)
        box = max(box, max(max(-a, a - u), 0.0))
        top = max(top, u)
        if above and below:
            free_r[n_free] = r
            n_free += 1
        elif (not above and yi > 0) or (above and yi < 0):  # b >= r_t
            lo = max(lo, r)
        else:
            hi = min(hi, r)
        if yi > 0:
            rp[n_pos], cp[n_pos] = r, u
            n_pos += 1
        elif yi < 0:
            rn[n_neg], cn[n_neg] = r, u
            n_neg += 1
    violation = 0.0 if m == -np.inf or M == np.inf else max(0.0, m - M)
    b = pairwise_sum(free_r, 0, n_free) / n_free if n_free else math.nan
    return (finite, violation, box, top, pairwise_sum(alpha, 0, n), pairwise_sum(mag, 0, n), b,
            lo, hi, n_pos, n_neg)


@njit
def _hinges(y: np.ndarray, g: np.ndarray, b_cert: float, b: float, out: np.ndarray) -> None:
    """``out[0] = max(0, 1 - y o (g + b_cert))``, ``out[1]`` the same at ``b``."""
    for i in range(y.shape[0]):
        out[0, i] = max(0.0, 1.0 - y[i] * (g[i] + b_cert))
        out[1, i] = max(0.0, 1.0 - y[i] * (g[i] + b))


def summarise(alpha: np.ndarray, y: np.ndarray, g: np.ndarray, C: np.ndarray) -> Summary | None:
    """The :class:`Summary` of ``alpha`` (labels ``y``, ``g = K (alpha o y)``, per-sample bounds
    ``C``, all float64 of one length): ``certify_svm(alpha, X, y, C, kernel, g=g)`` and
    :func:`~maxmargin.results.recover_intercept`'s ``b``, bit for bit; None when a value is not
    finite or ``y`` is not -1/+1 (the NumPy path then)."""
    n = alpha.shape[0]
    work = np.empty((7, n))
    (finite, violation, box, top, total, l1, b, lo, hi, n_pos,
     n_neg) = _one_pass(alpha, y, g, C, work)
    if not finite or n_pos == 0 or n_neg == 0 or n_pos + n_neg != n:
        return None
    v = work[0]
    vKv = max(float(v @ g), 0.0)
    dual = total - 0.5 * vKv
    feas = max(box / max(top, 1e-300), abs(float(y @ alpha)) / max(l1, 1e-300))
    rp, cp, rn, cn = work[3, :n_pos], work[4, :n_pos], work[5, :n_neg], work[6, :n_neg]
    order_p, order_n = np.argsort(rp), np.argsort(rn)
    b_cert = float(_hinge_minimiser(rp[order_p], cp[order_p], rn[order_n], cn[order_n]))
    if math.isnan(b):  # no free alpha: the KKT interval's midpoint (or its finite end)
        b = (0.5 * (lo + hi) if math.isfinite(lo) and math.isfinite(hi)
             else lo if math.isfinite(lo) else hi if math.isfinite(hi) else 0.0)
        interval = (lo, hi)
    else:
        interval = (b, b)
    hinge = work[:2]
    _hinges(y, g, b_cert, b, hinge)
    primal = 0.5 * vKv + float(C @ hinge[0])
    gap = (primal - dual) / max(1.0, abs(primal)) if math.isfinite(primal) else math.inf
    if not math.isfinite(dual):
        gap = math.nan
    cert = Certificate(violation, gap, primal, dual, b_cert, feas, math.nan)
    return Summary(cert, b, interval, vKv, float(C @ hinge[1]), g)
