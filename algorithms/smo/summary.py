"""A soft-margin run's float64 summary in one compiled pass: the certificate's numbers
(:func:`~maxmargin.certificate.certify_svm`) and the answer's ``b`` and objectives
(:mod:`.result`), bit for bit as their NumPy computations, for the many small problems of a
batch (:mod:`.batch`), whose per-problem cost is mostly NumPy's per-call overhead.

With ``v = alpha o y``, ``r = y - g`` and the box ``C``:

* ``v^T K v = v . g``, ``y . alpha``, ``sum(alpha)``, ``sum |alpha|`` and ``b = mean_{0 <
  alpha_t < C_t} r_t`` are NumPy's, on the same values in the same order, as there;
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
from maxmargin.certificate import Certificate, relative_gap, rescaled_primal

__all__ = ["Summary", "summarise"]


class Summary(NamedTuple):
    """What :func:`summarise` computes from ``g = K (alpha o y)``."""

    certificate: Certificate
    b: float  # LIBSVM's b (recover_intercept's)
    interval: tuple[float, float]  # its KKT interval
    w2: float  # ||w||^2 = max(v . g, 0)
    slack: float  # C . max(0, 1 - y o (g + b))
    g: np.ndarray  # the g it summarises
    box_max: float  # max_t C_t


@njit
def _one_pass(alpha: np.ndarray, y: np.ndarray, g: np.ndarray, upper: np.ndarray,
              work: np.ndarray, out: np.ndarray) -> int:
    """Fill ``work`` (rows: ``v``, the free ``r``, the positives' kinks and bounds, the
    negatives' kinks and bounds) and ``out``: ``m - M``, the box violation, ``max C``, the KKT
    interval ``lo``, ``hi`` (of the non-free alphas), the number of free alphas and of
    negatives, 1 if every ``alpha_t`` and ``g_t`` is finite (else 0) and 1 if an ``alpha_t``
    is negative (else 0); returns the number of positives."""
    n = alpha.shape[0]
    m, M, box, top = -np.inf, np.inf, 0.0, -np.inf
    lo, hi = -np.inf, np.inf
    n_free = n_pos = n_neg = 0
    finite, negative = True, False
    for i in range(n):
        a, u, yi, gi = alpha[i], upper[i], y[i], g[i]
        finite = finite and math.isfinite(a) and math.isfinite(gi)
        negative = negative or a < 0.0
        work[0, i] = a * yi
        r = yi - gi
        below, above = a < u, a > 0
        if (below and yi > 0) or (above and yi < 0):
            m = max(m, r)
        if (below and yi < 0) or (above and yi > 0):
            M = min(M, r)
        box = max(box, max(max(-a, a - u), 0.0))
        top = max(top, u)
        if above and below:
            work[1, n_free] = r
            n_free += 1
        elif (not above and yi > 0) or (above and yi < 0):  # b >= r_t
            lo = max(lo, r)
        else:
            hi = min(hi, r)
        if yi > 0:
            work[2, n_pos], work[3, n_pos] = r, u
            n_pos += 1
        elif yi < 0:
            work[4, n_neg], work[5, n_neg] = r, u
            n_neg += 1
    out[0] = 0.0 if m == -np.inf or M == np.inf else max(0.0, m - M)
    out[1], out[2], out[3], out[4] = box, top, lo, hi
    out[5], out[6], out[7] = n_free, n_neg, 1.0 if finite else 0.0
    out[8] = 1.0 if negative else 0.0
    return n_pos


@njit
def _hinge_minimiser(rp: np.ndarray, cp: np.ndarray, rn: np.ndarray, cn: np.ndarray,
                     sums: np.ndarray) -> float:
    """:func:`~maxmargin.certificate.minimise_hinge_over_b` compiled, bit for bit, on each
    class's kinks, sorted, with their weights: prefix sums of ``c r`` and ``c`` (in the rows
    of ``sums``, at least ``max(P, N) + 1`` long); ``h`` at every kink (the positives', then
    the negatives', in sorted order; the positions in the sorted kinks, NumPy's
    ``searchsorted``, by sweeps), the first smallest kept (a NaN, if any, as NumPy's
    ``argmin`` would)."""
    P, N = rp.shape[0], rn.shape[0]
    crp, cp_sum = sums[0, : P + 1], sums[1, : P + 1]
    crn, cn_sum = sums[2, : N + 1], sums[3, : N + 1]
    crp[0] = cp_sum[0] = crn[0] = cn_sum[0] = 0.0
    for k in range(P):
        crp[k + 1] = crp[k] + cp[k] * rp[k]
        cp_sum[k + 1] = cp_sum[k] + cp[k]
    for k in range(N):
        crn[k + 1] = crn[k] + cn[k] * rn[k]
        cn_sum[k + 1] = cn_sum[k] + cn[k]
    best, best_b = np.inf, np.nan
    for side in range(2):
        kinks = rp if side == 0 else rn
        k = j = 0  # kinks ascend: so do #{rp <= b} and #{rn < b}
        for q in range(kinks.shape[0]):
            b = kinks[q]
            while k < P and rp[k] <= b:
                k += 1
            while j < N and rn[j] < b:
                j += 1
            h = ((crp[P] - crp[k]) - (cp_sum[P] - cp_sum[k]) * b) + (cn_sum[j] * b - crn[j])
            if np.isnan(h):
                return b
            if h < best or (side == 0 and q == 0):
                best, best_b = h, b
    return best_b


@njit
def _sorted_minimiser(work: np.ndarray, n_pos: int, n_neg: int, order_p: np.ndarray,
                      order_n: np.ndarray) -> float:
    """:func:`_hinge_minimiser` on the kinks and bounds of ``work``'s
    rows 2 to 5 taken in the orders ``order_p`` and ``order_n`` (gathered into rows 6 to 9;
    rows 2 to 5 then hold its prefix sums: ``n_pos, n_neg < n`` when both classes are
    there)."""
    for k in range(n_pos):
        work[6, k], work[7, k] = work[2, order_p[k]], work[3, order_p[k]]
    for k in range(n_neg):
        work[8, k], work[9, k] = work[4, order_n[k]], work[5, order_n[k]]
    return _hinge_minimiser(work[6, :n_pos], work[7, :n_pos], work[8, :n_neg], work[9, :n_neg],
                            work[2:6])


@njit
def _hinges(y: np.ndarray, g: np.ndarray, b_cert: float, b: float, out: np.ndarray) -> None:
    """``out[0] = max(0, 1 - y o (g + b_cert))``, ``out[1]`` the same at ``b``."""
    for i in range(y.shape[0]):
        out[0, i] = max(0.0, 1.0 - y[i] * (g[i] + b_cert))
        out[1, i] = max(0.0, 1.0 - y[i] * (g[i] + b))


def summarise(alpha: np.ndarray, y: np.ndarray, g: np.ndarray, C: np.ndarray,
              roundoff: float = 0.0) -> Summary | None:
    """The :class:`Summary` of ``alpha`` (labels ``y``, ``g = K (alpha o y)``, per-sample bounds
    ``C``, all float64 of one length; ``roundoff`` the certificate's, from the points,
    :func:`~maxmargin.certificate.kkt_roundoff`): ``certify_svm(alpha, X, y, C, kernel, g=g)`` and
    :func:`~maxmargin.results.recover_intercept`'s ``b``, bit for bit; None when a value is not
    finite or ``y`` is not -1/+1 (the NumPy path then)."""
    n = alpha.shape[0]
    work, out = np.empty((10, n)), np.empty(9)
    n_pos = _one_pass(alpha, y, g, C, work, out)
    violation, box, top, lo, hi, n_free, n_neg, finite, negative = out.tolist()
    n_free, n_neg = int(n_free), int(n_neg)
    if finite == 0.0 or n_pos == 0 or n_neg == 0 or n_pos + n_neg != n:
        return None
    vKv = max(float(work[0] @ g), 0.0)
    total = float(alpha.sum())
    dual = total - 0.5 * vKv
    l1 = float(np.abs(alpha).sum()) if negative else total  # |alpha| = alpha when none is < 0
    feas = max(box / max(top, 1e-300), abs(float(y @ alpha)) / max(l1, 1e-300))
    b_cert = _sorted_minimiser(work, n_pos, n_neg, np.argsort(work[2, :n_pos]),
                               np.argsort(work[4, :n_neg]))
    if n_free:
        b = float(work[1, :n_free].sum()) / n_free  # np.mean's sum and division
        interval = (b, b)
    else:  # the KKT interval's midpoint (or its finite end)
        b = (0.5 * (lo + hi) if math.isfinite(lo) and math.isfinite(hi)
             else lo if math.isfinite(lo) else hi if math.isfinite(hi) else 0.0)
        interval = (lo, hi)
    hinge = work[:2]
    _hinges(y, g, b_cert, b, hinge)
    primal = rescaled_primal(vKv, y * (g + b_cert), C, 0.5 * vKv + float(C @ hinge[0]))
    gap = relative_gap(primal, dual)
    if not math.isfinite(dual):
        gap = math.nan
    cert = Certificate(violation, gap, primal, dual, b_cert, feas, math.nan,
                       roundoff=roundoff)
    return Summary(cert, b, interval, vKv, float(C @ hinge[1]), g, top)
