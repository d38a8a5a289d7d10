r"""Float64 certificates of ν-SVC, one-class SVM and reduced-hull answers, in the user's units.

ν-SVC (Schölkopf et al. 2000; the primal keeps ``rho >= 0``), with ``l`` points:

.. math::

    P = \min_{w, b, \rho \ge 0, \xi \ge 0} \tfrac12 \|w\|^2 - \nu\rho + \tfrac1l \textstyle\sum_i
    \xi_i \;\text{s.t.}\; y_i (w \cdot \phi(x_i) + b) \ge \rho - \xi_i, \qquad
    D = \max_\alpha -\tfrac12 v^T K v \;\text{s.t.}\; 0 \le \alpha_i \le \tfrac1l,\;
    y \cdot \alpha = 0,\; \textstyle\sum_i \alpha_i \ge \nu,

with ``v = alpha * y`` (Schölkopf's scaling; LIBSVM's ``Solver_NU`` works with ``l alpha``).
One-class (Schölkopf et al. 2001): ``min 1/2 ||w||^2 + sum_i xi_i / (nu l) - rho`` s.t.
``w . phi(x_i) >= rho - xi_i``, dual ``max -1/2 alpha^T K alpha`` s.t. ``0 <= alpha_i <= 1 /
(nu l)``, ``sum_i alpha_i = 1`` (LIBSVM's one-class solver works with ``nu l alpha``).

Exact primal value of a dual point. With ``w = sum_i v_i phi(x_i)`` fixed and ``g = K v``, the
best offsets solve a piecewise-linear convex problem. ν-SVC: with ``s = rho - b`` and ``t = rho
+ b`` the slack term separates, ``phi_+(s) + phi_-(t)`` with ``phi_c(s) = -nu s / 2 +
sum_{i in c} (s - m_i)_+ / l`` and ``m_i = y_i g_i``; ``phi_c`` has slope ``-nu/2 + k/l`` past
its ``k``-th smallest margin, so its minimiser is the order statistic ``m_c(ceil(nu l / 2))``
(LIBSVM's ``r1``, ``r2``: ``rho = (r1 + r2) / 2``, ``b = (r2 - r1) / 2``). When ``r1 + r2 < 0``
(``rho >= 0`` binds) ``rho = 0`` and ``b`` minimises ``sum_i (-y_i (g_i + b))_+``
(:func:`~maxmargin.certificate.minimise_hinge_over_b`). One-class: ``rho = g(ceil(nu l))``.
``P* = min(P(w), 0)`` (``w = 0`` with zero offsets and slacks is a primal point too).

The gap is :func:`~maxmargin.certificate.relative_gap` with the denominator kept above
``w_floor^2 / 2`` (:func:`w_floor`: the larger of the ``||w||`` of reduced hulls
:data:`~maxmargin.tolerances.HULLS_MEET_ATOL` ``R`` apart, ``R = max_i sqrt(K_ii)``, centred for
the linear kernel of ν-SVC, and the float64 round-off of ``v^T K v``): at ``w = 0`` (the
reduced hulls meet) every relative measure is 0 / 0, and below that floor ``w = 0`` at that
resolution (``alpha`` is not unique): the gap and ``kkt_violation`` are reported as 0.
Otherwise ``kkt_violation`` is LIBSVM's per-class ``m - M`` (``max_{alpha_i > 0} m_i -
min_{alpha_i < U} m_i`` in each class; one class for one-class) divided by ``rho``
(``radius`` holds ``R``): LIBSVM's violation in the units of the decision function ``f / rho``
it returns, the equivalent C-SVC's. Where ``rho < w_floor R`` that ratio is not resolved
(``rho`` may be 0 at a point that is not optimal) and the gap decides too (:func:`_certificate`).
Under ``X -> s X``
(linear kernel) ``alpha`` is unchanged, ``g``, ``rho``, ``b`` and the objectives scale by
``s^2``, ``w`` by ``s``: every quantity judged is a ratio and the verdict does not change.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from maxmargin.certificate import (
    TINY,
    Certificate,
    HullCertificate,
    decision_values,
    kernel_width,
    minimise_hinge_over_b,
    objective_roundoff,
    own_decision_values,
    relative_gap,
    roundoff_gamma,
)
from maxmargin.kernels import Kernel, LinearKernel
from maxmargin.tolerances import HULLS_MEET_ATOL

__all__ = [
    "below_resolution",
    "bounds_of",
    "box_fill",
    "certify_nu_svm",
    "certify_one_class",
    "certify_reduced_hulls",
    "hull_weight",
    "nu_max",
    "nu_offsets",
    "one_class_offset",
    "project_nu",
    "project_one_class",
    "reduced_support",
    "rho_unresolved",
    "w_floor",
]


def nu_max(y: np.ndarray, weights: np.ndarray | None = None) -> float:
    """``2 * min(l_+, l_-) / l``: the largest ν for which the ν-SVC dual is feasible; with
    positive sample ``weights`` (bounds ``alpha_i <= w_i / sum w``), ``2 * min(W_+, W_-) / W``
    of the class sums."""
    if weights is not None:
        w_pos = float(np.sum(weights[y > 0]))
        return 2.0 * min(w_pos, float(np.sum(weights[y < 0]))) / float(np.sum(weights))
    n_pos = int(np.sum(y > 0))
    return 2.0 * min(n_pos, y.shape[0] - n_pos) / y.shape[0]


def bounds_of(weights: np.ndarray | None, l: int, nu: float = 1.0) -> float | np.ndarray:
    """The upper bounds of ``alpha``: ``1 / (nu l)`` (ν-SVC: ``nu = 1``), or ``w_i / (nu sum w)``
    for positive sample ``weights`` (LIBSVM's ``C_i = W_i``, in Schölkopf's scaling)."""
    if weights is None:
        return 1.0 / (nu * l)
    w = np.asarray(weights, dtype=np.float64)
    return w / (nu * float(w.sum()))


def box_fill(a: np.ndarray, upper: float | np.ndarray, target: float) -> np.ndarray:
    """``a`` (in ``[0, upper]``, a bound or one per entry) moved to sum ``target``, the box
    kept: the free entries
    (``0 < a_i < upper``) scaled when that suffices (the bounds stay exact, and so do LIBSVM's
    index sets); else all scaled down when above it, or ``a + theta (upper - a)`` when below
    (needs ``sum upper >= target``). A sum within the round-off of summing ``a``
    (``a.size`` units of ``target``) is left as it is."""
    total = float(a.sum())
    if abs(total - target) <= a.shape[0] * np.finfo(np.float64).eps * target:
        return a
    free = (a > 0.0) & (a < upper)
    s_free = float(a[free].sum())
    if s_free > 0.0:
        factor = (target - (total - s_free)) / s_free
        fits = (factor * float(np.max(a[free])) <= upper if np.ndim(upper) == 0
                else bool(np.all(factor * a[free] <= upper[free])))
        if factor >= 0.0 and fits:
            out = a.copy()
            out[free] *= factor
            return out
    if total >= target:
        return a * (target / total) if total > 0.0 else a
    room = a.shape[0] * upper if np.ndim(upper) == 0 else float(np.sum(upper))
    theta = (target - total) / (room - total)
    return a + min(theta, 1.0) * (upper - a)


#: Weights within this many units of round-off (relative to the largest weight the
#: constraints allow, ``min(U, sum alpha)``) of 0 or ``U`` are put on the bound by the
#: projections: an answer read back from another scaling (LIBSVM's ``dual_coef_ = y a / r``)
#: or made of affine combinations (the weights of Wolfe's corral on reduced hulls) carries
#: thousands of them, and the index sets ``a > 0``, ``a < U`` are not continuous there. The
#: judged point moves by at most ``BOUND_ULPS eps min(U, sum alpha)`` (4e-12 of it) in a
#: weight. Not ``U`` alone: where ``nu l < 1`` the bound ``U = 1/(nu l)`` (one-class) exceeds
#: the sum of all the weights, and a weight of a few ``1e-9`` that the answer needs (at
#: ``K_ii`` 1e4 times ``rho`` it moves ``g`` by 1e-5 of ``rho``) would be put on 0.
BOUND_ULPS = 2**14


def _part(upper: float | np.ndarray, mask: np.ndarray) -> float | np.ndarray:
    """The bounds of the entries ``mask`` (a common bound as it is)."""
    return upper if np.ndim(upper) == 0 else upper[mask]


def _snapped(alpha: np.ndarray, upper: float | np.ndarray) -> np.ndarray:
    """``alpha`` clipped to ``[0, upper]`` with the entries within :data:`BOUND_ULPS` of a
    bound put on it (units of round-off of ``min(upper, sum alpha)``: no weight of a
    feasible point exceeds either)."""
    a = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, upper)
    near = BOUND_ULPS * np.finfo(np.float64).eps * np.minimum(upper, float(a.sum()))
    a[a <= near] = 0.0
    at = a >= upper - near
    a[at] = _part(upper, at)
    return a


def project_nu(alpha: np.ndarray, y: np.ndarray, nu: float,
               weights: np.ndarray | None = None) -> np.ndarray:
    """A feasible ν-SVC point near ``alpha``: clipped to ``[0, 1/l]`` (:func:`_snapped`;
    :func:`bounds_of` the ``weights``), then each class moved by
    :func:`box_fill` to the common sum ``max(min(S_+, S_-), nu / 2)``, so ``y . alpha = 0`` and
    ``sum alpha >= nu``."""
    upper = bounds_of(weights, y.shape[0])
    a = _snapped(alpha, upper)
    pos, neg = y > 0, y < 0
    target = max(0.5 * nu, min(float(a[pos].sum()), float(a[neg].sum())))
    a[pos] = box_fill(a[pos], _part(upper, pos), target)
    a[neg] = box_fill(a[neg], _part(upper, neg), target)
    return a


def project_one_class(alpha: np.ndarray, nu: float,
                      weights: np.ndarray | None = None) -> np.ndarray:
    """A feasible one-class point near ``alpha``: clipped to ``[0, 1/(nu l)]`` (:func:`_snapped`;
    :func:`bounds_of` the ``weights``), then moved by :func:`box_fill` to ``sum alpha = 1``."""
    upper = bounds_of(weights, alpha.shape[0], nu)
    return box_fill(_snapped(alpha, upper), upper, 1.0)


def _order_minimum(m: np.ndarray, k: float, weight: float) -> tuple[float, float]:
    """``(s, value)`` minimising ``-k weight s + weight sum_i (s - m_i)_+`` (convex, piecewise
    linear, slope ``weight (j - k)`` past the ``j``-th smallest ``m_i``): the ``ceil(k)``-th
    smallest ``m_i``. When ``k`` is an integer (to round-off) the function is flat between the
    ``k``-th and ``(k+1)``-th and the midpoint is taken (LIBSVM's ``(ub + lb) / 2``): the same
    ``s`` whatever the order and the rounding of the data."""
    ms = np.sort(m)
    n = ms.shape[0]
    r = round(k)
    if abs(k - r) <= 1e-12 * max(k, 1.0) and 1 <= r < n:
        s = 0.5 * (float(ms[r - 1]) + float(ms[r]))
    else:
        s = float(ms[min(max(math.ceil(k) - 1, 0), n - 1)])
    return s, weight * (-k * s + float(np.sum(np.maximum(s - ms, 0.0))))


def _weighted_order_minimum(m: np.ndarray, c: np.ndarray, k: float) -> tuple[float, float]:
    """``(s, value)`` minimising ``-k s + sum_i c_i (s - m_i)_+`` (``c > 0``, ``sum c >= k``):
    slope ``C_j - k`` past the ``j``-th smallest ``m_i`` (``C_j`` the sum of the ``c`` up to
    it), so the first ``m`` with ``C_j >= k``; the midpoint to the next when ``C_j = k`` to
    round-off (as :func:`_order_minimum`)."""
    order = np.argsort(m, kind="stable")
    ms, cum = m[order], np.cumsum(c[order])
    j = min(int(np.searchsorted(cum, k * (1.0 - 1e-12))), ms.shape[0] - 1)
    if abs(cum[j] - k) <= 1e-12 * max(k, float(cum[-1])) and j + 1 < ms.shape[0]:
        s = 0.5 * (float(ms[j]) + float(ms[j + 1]))
    else:
        s = float(ms[j])
    return s, -k * s + float(np.sum(c * np.maximum(s - m, 0.0)))


def nu_offsets(g: np.ndarray, y: np.ndarray, nu: float,
               weights: np.ndarray | None = None) -> tuple[float, float, float]:
    """``(b, rho, slack)``: the offsets minimising ``-nu rho + sum_i (rho - y_i (g_i + b))_+ / l``
    (``/ l``: the bounds :func:`bounds_of` the ``weights``) over ``rho >= 0`` and that minimum
    (module docstring)."""
    l = y.shape[0]
    m = y * g
    pos, neg = y > 0, y < 0
    if weights is None:
        r1, v1 = _order_minimum(m[pos], 0.5 * nu * l, 1.0 / l)
        r2, v2 = _order_minimum(m[neg], 0.5 * nu * l, 1.0 / l)
        c = np.full(l, 1.0 / l)
    else:
        c = np.asarray(bounds_of(weights, l))
        r1, v1 = _weighted_order_minimum(m[pos], c[pos], 0.5 * nu)
        r2, v2 = _weighted_order_minimum(m[neg], c[neg], 0.5 * nu)
    if r1 + r2 >= 0.0:
        return 0.5 * (r2 - r1), 0.5 * (r1 + r2), v1 + v2
    b = minimise_hinge_over_b(-g, y, c)
    slack = np.maximum(-y * (g + b), 0.0)
    return b, 0.0, float(np.sum(slack)) / l if weights is None else float(c @ slack)


def one_class_offset(g: np.ndarray, nu: float,
                     weights: np.ndarray | None = None) -> tuple[float, float]:
    """``(rho, value)`` minimising ``-rho + sum_i (rho - g_i)_+ / (nu l)``: ``g(ceil(nu l))``
    (``1 / (nu l)``: the bounds :func:`bounds_of` the ``weights``)."""
    l = g.shape[0]
    if weights is not None:
        return _weighted_order_minimum(g, np.asarray(bounds_of(weights, l, nu)), 1.0)
    return _order_minimum(g, nu * l, 1.0 / (nu * l))


def _radius(kernel: Kernel, X: Any, centre: bool) -> float:
    """``R = max_i sqrt(K_ii)``; the linear kernel on dense data measured from the mean when
    ``centre`` (a problem that does not depend on the origin)."""
    if centre and isinstance(kernel, LinearKernel) and isinstance(X, np.ndarray):
        X = X - X.mean(axis=0)
    return math.sqrt(max(float(np.max(kernel.diag(X))), 0.0))


def _violation(m: np.ndarray, a: np.ndarray, upper: float | np.ndarray,
               groups: list[np.ndarray]) -> float:
    """The largest per-group ``max_{a_i > 0} m_i - min_{a_i < upper} m_i`` (0 if one is empty)."""
    worst = 0.0
    for idx in groups:
        mi, ai = m[idx], a[idx]
        up, low = ai > 0.0, ai < _part(upper, idx)
        if up.any() and low.any():
            worst = max(worst, float(np.max(mi[up])) - float(np.min(mi[low])))
    return worst


def hull_weight(nu: float, one_class: bool) -> float:
    """The weight of one reduced hull in ``alpha``: ``nu / 2`` for ν-SVC (each class's
    ``alpha`` sums to it), 1 for one-class (``alpha`` sums to 1)."""
    return 1.0 if one_class else 0.5 * nu


def w_floor(alpha: np.ndarray, R: float, hull: float) -> float:
    """The smallest ``||w||`` a certificate resolves: the larger of ``hull HULLS_MEET_ATOL R``
    (``hull = nu / 2`` for ν-SVC, 1 one-class: reduced hulls that far apart) and the float64
    round-off of ``v^T K v``, ``sqrt(gamma_N) A R`` with ``A = sum alpha`` and ``gamma_N``
    :func:`~maxmargin.certificate.roundoff_gamma`'s."""
    gamma = roundoff_gamma(alpha)
    return max(hull * HULLS_MEET_ATOL * R, math.sqrt(gamma) * float(np.sum(alpha)) * R)


def below_resolution(cert: Certificate, alpha: np.ndarray, hull: float) -> bool:
    """Whether ``cert`` (of ``alpha``) has ``||w|| <= w_floor``: the optimum ``w = 0`` at the
    resolution of :func:`w_floor`."""
    floor = w_floor(alpha, cert.radius, hull)
    return -2.0 * cert.dual_objective <= floor * floor


def rho_unresolved(cert: Certificate, alpha: np.ndarray, hull: float) -> bool:
    """Whether ``cert`` (of ``alpha``) has ``rho < w_floor R``: too small for ``m - M / rho``
    to be resolved (the reduced hulls nearly meet; :func:`_certificate`)."""
    return cert.margin < w_floor(alpha, cert.radius, hull) * cert.radius


def _certificate(g: np.ndarray, a: np.ndarray, v: np.ndarray,
                 primal_terms: tuple[float, float, float], hull: float, R: float,
                 violation: float, feas: float, roundoff: float) -> Certificate:
    """The :class:`Certificate` from ``g = K v``, ``(b, rho, slack term)``, the raw ``m - M``,
    the raw point's infeasibility and the objectives' round-off ``E``
    (:func:`~maxmargin.certificate.objective_roundoff` with ``offset = rho``, discounted from
    the gap by :func:`~maxmargin.certificate.relative_gap` when ``P* < 0``; ``P* = 0`` is the
    exact value of ``w = 0``, and ``P - D = ||w||^2 / 2`` is then judged against ``w_floor``
    alone); ``radius`` is ``R``. At ``||w||
    <=`` :func:`w_floor`
    the answer is the optimum ``w = 0`` at that resolution (``alpha`` is not unique, ``D`` and
    ``P* <= 0`` are both within ``w_floor^2 / 2`` of 0) and the gap and ``m - M`` are reported
    as 0; otherwise the gap's denominator is at least ``w_floor^2 / 2``. ``kkt_violation`` is
    ``m - M`` over ``rho`` when ``rho >= w_floor R`` (``|g_i| <= ||w|| R``); below that ``m -
    M`` bounds nothing the certificate resolves, and it is the larger of ``(m - M) / (w_floor
    R)`` and the gap, so that an answer whose ``rho`` is that small is "optimal" only when its
    objective is."""
    b, rho, slack = primal_terms
    vKv = max(float(v @ g), 0.0)
    dual = -0.5 * vKv
    primal = min(0.5 * vKv + slack, 0.0)
    floor_w = w_floor(a, R, hull)
    if vKv <= floor_w * floor_w:
        return Certificate(0.0, 0.0, primal, dual, b, feas, margin=rho, radius=R)
    floor = 0.5 * floor_w * floor_w
    if primal >= 0.0:  # P* = 0 is the point w = 0, exact: P - D = ||w||^2 / 2, against w_floor
        roundoff = 0.0
    gap = (relative_gap(primal, dual, roundoff) * max(abs(primal), TINY)
           / max(abs(primal), floor, TINY))
    resolved = floor_w * R  # the smallest rho that m - M can be measured against
    kkt = violation / rho if rho >= resolved else max(violation / max(resolved, TINY), gap)
    return Certificate(kkt, gap, primal, dual, b, feas, margin=rho, radius=R)


def certify_nu_svm(alpha: np.ndarray, X: Any, y: np.ndarray, nu: float, kernel: Kernel,
                   g: np.ndarray | None = None, weights: np.ndarray | None = None
                   ) -> Certificate:
    """The ν-SVC :class:`Certificate` of ``alpha`` (Schölkopf's scaling, module docstring).

    ``alpha`` is judged at :func:`project_nu` of it; ``feasibility`` is the raw point's
    ``max(l max_i (-alpha_i, alpha_i - 1/l)_+, |y . alpha| / nu, (nu - sum alpha)_+ / nu)``.
    ``b`` and ``margin`` (= ``rho``) are the best offsets; ``gap`` exact (module docstring).
    ``g``: ``K (p * y)`` of the projected ``p`` when the caller has it. Positive sample
    ``weights`` make the bounds ``1/l`` :func:`bounds_of` them (the slacks weighted alike).
    """
    raw = np.asarray(alpha, dtype=np.float64)
    nan = math.nan
    if not np.all(np.isfinite(raw)):
        return Certificate(nan, nan, nan, nan, nan, nan)
    l = y.shape[0]
    upper = bounds_of(weights, l)
    box = (l * float(np.max(np.maximum(-raw, raw - upper))) if weights is None
           else float(np.max(np.maximum(-raw, raw - upper) / upper)))
    feas = max(box, 0.0, abs(float(y @ raw)) / nu, (nu - float(raw.sum())) / nu)
    a = project_nu(raw, y, nu, weights)
    v = a * y
    shift = 0.0
    if g is None:
        g, shift = own_decision_values(kernel, X, v)
    R = _radius(kernel, X, centre=True)
    violation = _violation(y * g, a, upper, [np.flatnonzero(y > 0), np.flatnonzero(y < 0)])
    b, rho, slack = nu_offsets(g, y, nu, weights)
    roundoff = objective_roundoff(a, upper, R * R, b, offset=rho, width=kernel_width(X),
                                  hinges=rho - y * (g + b))
    return _certificate(g, a, v, (b - shift, rho, slack), hull_weight(nu, False), R, violation,
                        feas, roundoff)


def certify_one_class(alpha: np.ndarray, X: Any, nu: float, kernel: Kernel,
                      g: np.ndarray | None = None, weights: np.ndarray | None = None
                      ) -> Certificate:
    """The one-class :class:`Certificate` of ``alpha`` (Schölkopf's scaling, module docstring).

    ``alpha`` is judged at :func:`project_one_class` of it; ``feasibility`` is the raw point's
    ``max(nu l max_i (-alpha_i, alpha_i - 1/(nu l))_+, |sum alpha - 1|)``; ``margin`` is
    ``rho``, ``b`` is ``-rho`` (``f(x) = g(x) - rho``). Positive sample ``weights`` make the
    bounds :func:`bounds_of` them.
    """
    raw = np.asarray(alpha, dtype=np.float64)
    nan = math.nan
    if not np.all(np.isfinite(raw)):
        return Certificate(nan, nan, nan, nan, nan, nan)
    l = raw.shape[0]
    upper = bounds_of(weights, l, nu)
    feas = max(float(np.max(np.maximum(-raw, raw - upper) / upper)), 0.0,
               abs(float(raw.sum()) - 1.0))
    a = project_one_class(raw, nu, weights)
    if g is None:
        sv = np.flatnonzero(a != 0.0)
        g = decision_values(kernel, X, X[sv], a[sv])
    R = _radius(kernel, X, centre=False)
    rho, value = one_class_offset(g, nu, weights)
    violation = _violation(g, a, upper, [np.arange(l)])
    roundoff = objective_roundoff(a, upper, R * R, rho, offset=rho, width=kernel_width(X),
                                  hinges=rho - g)
    return _certificate(g, a, a, (-rho, rho, value), 1.0, R, violation, feas, roundoff)


def reduced_support(values: np.ndarray, mu: float) -> float:
    """``min over RCH(mu)`` of the linear function with ``values`` at the points: the sorted
    partial sum, weight ``mu`` on the ``floor(1/mu)`` smallest values and the rest of the unit
    mass on the next (``mu >= 1``: the smallest value)."""
    if mu >= 1.0:
        return float(np.min(values))
    vs = np.sort(values)
    k = min(int(math.floor(1.0 / mu)), vs.shape[0])
    rest = max(1.0 - k * mu, 0.0)
    return mu * float(np.sum(vs[:k])) + (rest * float(vs[k]) if k < vs.shape[0] else 0.0)


def certify_reduced_hulls(P: np.ndarray, Q: np.ndarray, weights_p: np.ndarray,
                          weights_q: np.ndarray, mu: float) -> HullCertificate:
    """The :class:`~maxmargin.certificate.HullCertificate` of weights in ``RCH(mu)`` of ``P``
    and of ``Q`` (``Q`` empty: the nearest point of ``RCH(mu)`` of ``P`` to the origin).

    With ``z = P^T lam - Q^T nu`` (on the points less their common mean for two sets), Wolfe's
    gap ``(||z||^2 - min_{p in RCH(P)} <z, p> + max_{q in RCH(Q)} <z, q>) / ||z||^2``, the
    extremes by :func:`reduced_support`; ``kkt_violation`` per set ``max <z, +-x_i>`` over
    ``w_i > 0`` less ``min`` over ``w_i < mu`` (0 at an optimum), relative to ``||z||^2``;
    ``feasibility`` the largest violation of ``0 <= w <= mu`` and ``sum w = 1``.
    """
    lam = np.asarray(weights_p, dtype=np.float64)
    wq = np.asarray(weights_q, dtype=np.float64)
    nan = math.nan
    if not (np.all(np.isfinite(lam)) and np.all(np.isfinite(wq))):
        return HullCertificate(nan, nan, nan, nan)
    two = Q.shape[0] > 0
    if two:
        centre = np.vstack([P, Q]).mean(axis=0)
        P, Q = P - centre, Q - centre
    with np.errstate(over="ignore", invalid="ignore"):
        z = P.T @ lam - (Q.T @ wq if two else 0.0)
        zz = float(z @ z)
        sp = P @ z
        sq = Q @ z if two else np.zeros(0)
        low = reduced_support(sp, mu) + (reduced_support(-sq, mu) if two else 0.0)
        denom = max(zz, TINY)
        kkt = _violation(np.concatenate([sp, -sq]), np.concatenate([lam, wq]), mu,
                         [np.arange(sp.shape[0]), sp.shape[0] + np.arange(sq.shape[0])])
        feas = 0.0
        for w in (lam, wq) if two else (lam,):
            feas = max(feas, float(np.max(np.maximum(-w, w - mu))), abs(float(w.sum()) - 1.0))
    return HullCertificate(max(0.0, (zz - low) / denom), kkt / denom, feas, math.sqrt(zz))
