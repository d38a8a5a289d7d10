"""Float64 optimality certificates of SVM and nearest-point answers, in the user's units.

A solver stops on its own criterion; its answer is judged here, afresh, from the data alone.
For an SVM answer ``(alpha, b)`` with ``v = alpha * y`` and ``g_i = sum_j v_j K(x_j, x_i)``:

.. math::

    D(\\alpha) &= \\textstyle\\sum_i \\alpha_i - \\tfrac12 v^T K v, \\\\
    P(b) &= \\tfrac12 v^T K v + \\textstyle\\sum_i C_i \\max(0, 1 - y_i (g_i + b)),
        \\qquad P^* = \\min_b P(b), \\\\
    \\text{gap} &= (P^* - D) / \\max(|P^*|, \\text{tiny}), \\qquad
    m - M = \\max_{I_{up}} (y_i - g_i) - \\min_{I_{low}} (y_i - g_i).

For the soft margin ``P^*`` is the smaller of that and ``P`` at ``(t w, t b)``
(:func:`rescaled_primal`: margins a hair below 1 cleared). For the hard margin the primal
point is ``w / mu`` with ``mu = max_b min_i y_i (g_i + b)`` (the largest functional margin
``w`` reaches), so ``P^* = ||w||^2 / (2 mu^2)``, and ``inf`` when ``mu <= 0`` (``w`` separates
nothing). ``P^* >= D`` holds for any feasible ``alpha`` (weak
duality), so a small gap proves near-optimality of both. The gap is relative to the objective's
own size (:func:`relative_gap`): under ``X -> s X``, ``C -> C / s^2`` (linear kernel; the same
classifier) every objective scales by ``1 / s^2`` and the verdict does not change. ``g`` is
evaluated in row blocks (:data:`BLOCK_BYTES` of kernel values at a time).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

import maxmargin.exceptions as exceptions
from maxmargin.kernels import Kernel, LinearKernel
from maxmargin.kernels.formulas import KIND_SIGMOID
from maxmargin.tolerances import PRIMAL_RESCALE_BAND

__all__ = [
    "BLOCK_BYTES",
    "ROUNDOFF_BLOCK_BYTES",
    "Certificate",
    "HullCertificate",
    "roundoff_gamma",
    "kkt_roundoff",
    "unresolved_advice",
    "unresolved_status",
    "certify_svm",
    "certify_hulls",
    "certify_infeasible",
    "within_resolution",
    "weak_duality",
    "relative_gap",
    "rescaled_primal",
    "infeasibility_slack",
    "objective_roundoff",
    "kernel_width",
    "certify_liblinear",
    "liblinear_rows",
    "rows_dot",
    "rows_tdot",
    "decision_values",
    "own_decision_values",
    "max_violation",
    "minimise_hinge_over_b",
    "opposite_duplicates",
    "opposite_duplicates_message",
]

#: Kernel values evaluated at once by :func:`decision_values` (bounded memory; the block's
#: passes stay in the processor's cache).
BLOCK_BYTES = 8 * 2**20
#: Rows of ``|X - mean|`` formed at once by :func:`kkt_roundoff` (a small transient beside
#: the data: solvers that keep one copy of it stay within their memory).
ROUNDOFF_BLOCK_BYTES = 2**20
#: The smallest denominator of a relative quantity (a zero objective gives a finite ratio).
TINY = 1e-300


@dataclass(frozen=True)
class Certificate:
    """How optimal an SVM answer is, computed in float64 from the data (module docstring).

    Attributes
    ----------
    kkt_violation : float
        LIBSVM's maximal violation ``max(0, m - M)`` in decision-function units.
    gap : float
        Relative weak-duality gap ``(P* - D) / max(|P*|, tiny)`` (:func:`relative_gap`);
        ``inf`` when no primal point is recovered (hard margin, ``mu <= 0``).
    primal_objective, dual_objective : float
        ``P*`` and ``D(alpha)``.
    b : float
        The intercept minimising ``P(b)`` (hard margin: maximising ``mu``).
    feasibility : float
        Dual infeasibility ``max(max_i max(0, -alpha_i, alpha_i - C_i) / s,
        |y . alpha| / max(||alpha||_1, tiny))`` with ``s = max(C)`` (``max alpha`` for the hard
        margin).
    margin : float
        Hard margin: ``mu`` (1 at an exact optimum); NaN for the soft margin.
    hull_distance : float
        Hard margin on non-separable data (:func:`certify_infeasible`): a float64 upper bound on
        the distance between the two classes' convex hulls in feature space, computed from the
        convex weights found (the evidence); NaN otherwise.
    radius : float
        ``R = max_i sqrt(K(x_i, x_i))``, the scale ``hull_distance`` is judged against (NaN
        when not computed).
    roundoff : float
        The float64 resolution of ``kkt_violation`` (:func:`kkt_roundoff`, C-SVC and hard
        margin; 0 where not computed): a tolerance at or below it is never met, whatever the
        computed ``m - M``, so that rounding luck does not decide a verdict.
    """

    kkt_violation: float
    gap: float
    primal_objective: float
    dual_objective: float
    b: float
    feasibility: float
    margin: float = math.nan
    hull_distance: float = math.nan
    radius: float = math.nan
    roundoff: float = 0.0

    @property
    def infeasible(self) -> bool:
        """Whether this certifies a hard-margin problem infeasible (``hull_distance`` known)."""
        return not math.isnan(self.hull_distance)

    def meets(self, kkt: float, gap: float | None = None, feasibility: float = 1e-9) -> bool:
        """Whether ``kkt_violation < kkt`` with ``kkt`` above the violation's float64 resolution
        ``roundoff``, ``gap <= gap`` (if given) and the point is feasible.

        Every quantity must be finite: NaN or inf never meets anything.
        """
        values = (self.kkt_violation, self.feasibility, self.dual_objective)
        if not all(math.isfinite(v) for v in values):
            return False
        ok = self.kkt_violation < kkt and self.roundoff < kkt and self.feasibility <= feasibility
        if gap is not None:
            ok = ok and math.isfinite(self.gap) and self.gap <= gap
        return ok

    def summary(self) -> str:
        """One line for ``message``: ``certificate: m - M = ..., gap = ..., feasibility = ...``."""
        if self.infeasible:
            relative = self.hull_distance / self.radius if self.radius > 0 else math.nan
            return (f"certificate (float64): the classes' hulls are within "
                    f"{self.hull_distance:.3g} = {relative:.3g} R (R = {self.radius:.3g})")
        resolved = (f" (float64 resolves it to {self.roundoff:.3g} only)"
                    if self.roundoff > self.kkt_violation else "")
        return (
            f"certificate (float64): m - M = {self.kkt_violation:.3g}{resolved}, "
            f"gap = {self.gap:.3g}, feasibility = {self.feasibility:.3g}"
        )

    def unresolved(self, kkt: float) -> bool:
        """Whether ``kkt`` is at or below the violation's float64 resolution: no answer can
        meet it (a finite ``roundoff`` only)."""
        return math.isfinite(self.roundoff) and self.roundoff >= kkt

    def settled(self, kkt: float) -> bool:
        """Whether ``kkt`` is :meth:`unresolved` and the answer is as optimal as float64 tells:
        ``kkt_violation <= roundoff``, feasible, finite. A solver stops there ("inaccurate",
        :func:`unresolved_advice`): going on cannot certify it."""
        return (self.unresolved(kkt) and self.meets(math.inf)
                and self.kkt_violation <= self.roundoff)

    def final(self, kkt: float, gap: float | None = None) -> bool:
        """Whether a solver may stop at this answer: it :meth:`meets` ``kkt`` (and ``gap``, if
        given) or is :meth:`settled` at float64's resolution (with ``gap <= gap``)."""
        return self.meets(kkt, gap) or (self.settled(kkt) and (
            gap is None or (math.isfinite(self.gap) and self.gap <= gap)))


@dataclass(frozen=True)
class HullCertificate:
    """How optimal a nearest-point answer ``z = sum lam_i p_i - sum mu_j q_j`` is.

    ``gap = (||z||^2 - min_{i,j} <z, p_i - q_j>) / max(||z||^2, tiny)`` (Wolfe's test; the
    support point of the Minkowski difference is found without forming it), ``kkt_violation``
    the same with the minimum replaced by the largest ``<z, p_i - q_j>`` over the weighted
    points (0 at an exact optimum, relative to ``||z||^2``), ``feasibility`` the distance of
    the weights from their simplices.
    """

    gap: float
    kkt_violation: float
    feasibility: float
    distance: float

    def meets(self, gap: float, feasibility: float = 1e-9) -> bool:
        """``gap <= gap`` and feasible; NaN or inf never meets."""
        values = (self.gap, self.feasibility, self.distance)
        return all(math.isfinite(v) for v in values) and self.gap <= gap and (
            self.feasibility <= feasibility
        )

    def summary(self) -> str:
        return (
            f"certificate (float64): gap = {self.gap:.3g}, kkt = {self.kkt_violation:.3g}, "
            f"feasibility = {self.feasibility:.3g}"
        )


def decision_values(
    kernel: Kernel, X: np.ndarray, X_sv: np.ndarray, coef: np.ndarray
) -> np.ndarray:
    """``g_i = sum_j coef_j K(x_i, xsv_j)`` for every row of ``X``, evaluated in row blocks."""
    if isinstance(kernel, LinearKernel):
        return X @ (X_sv.T @ coef)
    n, m = X.shape[0], X_sv.shape[0]
    if m == 0:
        return np.zeros(n)
    X, X_sv = kernel._check_pair(X, X_sv)  # once; the blocks are slices of valid data
    rows = max(1, BLOCK_BYTES // (8 * m))
    return kernel._values(lambda: kernel._weighted(X, X_sv, coef, rows), "`X`")


def own_decision_values(kernel: Kernel, X: Any, v: np.ndarray) -> tuple[np.ndarray, float]:
    """``(g, shift)``: ``g = K' v`` on the rows a certificate evaluates, with ``g + b - shift``
    the decision values of an intercept ``b`` found from ``g``. The linear kernel on dense data
    is evaluated on the points less their mean ``c`` (``K' = (X - c)(X - c)^T``, ``shift = c .
    w``, ``w = (X - c)^T v``): the same ``v^T K v`` and margins when ``sum v = 0``, without the
    offset's cancellation (far from the origin ``x_i . w`` keeps a few digits), so the round-off
    and the verdict do not depend on the origin. The centred rows are formed
    :data:`BLOCK_BYTES` at a time, never all at once. Otherwise ``K' = K``, ``shift = 0``."""
    sv = np.flatnonzero(v != 0.0)
    if isinstance(kernel, LinearKernel) and isinstance(X, np.ndarray) and X.ndim == 2:
        centre = X.mean(axis=0)
        w = (X[sv] - centre).T @ v[sv]
        g = np.empty(X.shape[0])
        rows = max(1, BLOCK_BYTES // (8 * max(X.shape[1], 1)))
        for start in range(0, X.shape[0], rows):
            g[start:start + rows] = (X[start:start + rows] - centre) @ w
        return g, float(centre @ w)
    return decision_values(kernel, X, X[sv], v[sv]), 0.0


def max_violation(alpha: np.ndarray, y: np.ndarray, g: np.ndarray, C: Any) -> float:
    """LIBSVM's maximal violation ``max(0, m(alpha) - M(alpha))``, independent of ``b``.

    .. math::

        r_i = y_i - g_i, \\quad m = \\max_{i \\in I_{up}} r_i,
        \\quad M = \\min_{i \\in I_{low}} r_i,

    with ``I_up = {alpha_i < C_i, y_i = +1} U {alpha_i > 0, y_i = -1}`` and
    ``I_low = {alpha_i < C_i, y_i = -1} U {alpha_i > 0, y_i = +1}`` (``C = inf`` for the hard
    margin; ``C`` may be per sample); 0 when either set is empty.
    """
    alpha, y, g = (np.ascontiguousarray(a, dtype=np.float64) for a in (alpha, y, g))
    return float(_violation_and_box(alpha, y, g, _bounds(C))[0])


def _bounds(C: Any) -> np.ndarray:
    """``C`` as a float64 array of one bound (``inf`` for None) or one per sample."""
    return np.full(1, math.inf) if C is None else np.atleast_1d(np.asarray(C, dtype=np.float64))


def _violation_and_box(alpha: np.ndarray, y: np.ndarray, g: np.ndarray,
                       upper: np.ndarray) -> tuple[float, float, float]:
    """``(max(0, m - M), max_i max(-alpha_i, alpha_i - C_i, 0), max_i C_i)``
    (:func:`max_violation`; ``upper`` holds one bound or one per sample); maxima and minima,
    exact in any order (a NaN ``r_i`` in either set gives a NaN violation)."""
    if alpha.shape[0] == 0:
        return 0.0, 0.0, -math.inf
    u = np.broadcast_to(upper, alpha.shape)
    below, above, pos, neg = alpha < u, alpha > 0, y > 0, y < 0
    r = y - g
    up, low = (below & pos) | (above & neg), (below & neg) | (above & pos)
    m = float(np.max(r[up])) if up.any() else -math.inf
    M = float(np.min(r[low])) if low.any() else math.inf
    violation = 0.0 if m == -math.inf or M == math.inf else max(0.0, m - M)
    if math.isnan(m) or math.isnan(M):
        violation = math.nan
    box = max(0.0, float(np.max(np.maximum(-alpha, alpha - u))))  # 0.0, not -0.0, if none
    return violation, box, float(np.max(upper))


def minimise_hinge_over_b(r: np.ndarray, y: np.ndarray, c: np.ndarray) -> float:
    """The ``b`` minimising ``h(b) = sum_{y_i=+1} c_i (r_i - b)_+ + sum_{y_i=-1} c_i (b - r_i)_+``.

    ``h`` is convex and piecewise linear with kinks at the ``r_i = y_i - g_i``, so its minimum is
    at a kink. With each class's kinks sorted and the prefix sums ``S_k = sum_{q<k} c_q r_q``,
    ``W_k = sum_{q<k} c_q`` (in order: NumPy's ``cumsum``), ``k = #{r+ <= b}`` and
    ``j = #{r- < b}`` (``searchsorted``), ``h(b) = (S+_P - S+_k) - (W+_P - W+_k) b + W-_j b -
    S-_j`` at every kink (the positives', then the negatives'), ``O(n log n)``; the first
    smallest is kept (the first kink where ``h`` is NaN, if any). NumPy, not compiled: the
    batch's compiled twin (:mod:`maxmargin.algorithms.smo.summary`) gives the same bits.
    """
    r, y = (np.ascontiguousarray(a, dtype=np.float64) for a in (r, y))
    c = np.broadcast_to(np.asarray(c, dtype=np.float64), r.shape)
    pos, neg = y > 0, y < 0
    order_p, order_n = np.argsort(r[pos]), np.argsort(r[neg])
    rp, cp = r[pos][order_p], c[pos][order_p]
    rn, cn = r[neg][order_n], c[neg][order_n]
    crp, cp_sum = (np.concatenate(([0.0], np.cumsum(v))) for v in (cp * rp, cp))
    crn, cn_sum = (np.concatenate(([0.0], np.cumsum(v))) for v in (cn * rn, cn))
    kinks = np.concatenate((rp, rn))
    if kinks.size == 0:
        return math.nan
    k = np.searchsorted(rp, kinks, side="right")
    j = np.searchsorted(rn, kinks, side="left")
    with np.errstate(invalid="ignore", over="ignore"):
        h = ((crp[-1] - crp[k]) - (cp_sum[-1] - cp_sum[k]) * kinks) + (cn_sum[j] * kinks - crn[j])
    nan = np.flatnonzero(np.isnan(h))
    if nan.size:
        return float(kinks[nan[0]])
    best = int(np.argmin(h))
    if rp.size == 0 and h[best] == math.inf:
        return math.nan
    return float(kinks[best])


def rescaled_primal(vKv: float, margins: np.ndarray, c: np.ndarray, primal: float) -> float:
    """The smaller of ``primal = P(w, b)`` and ``P(t w, t b) = t^2 vKv / 2 + sum_i c_i (1 - t
    m_i)_+`` at ``t = 1 / min{m_i : 1 - PRIMAL_RESCALE_BAND <= m_i < 1}`` (``m_i = y_i (g_i +
    b)``; ``primal`` when no margin is in that band): ``(t w, t b)`` is a primal point too, so
    either value bounds the optimum from above. The soft margin's ``w / mu``: margins that
    round-off leaves a hair below 1 cost ``c_i (1 - m_i)`` each in the hinge term, which
    dwarfs a small objective (a large ``C`` relative to the data's scale); ``t`` clears them.
    """
    band = margins[(margins < 1.0) & (margins >= 1.0 - PRIMAL_RESCALE_BAND)]
    if band.size == 0:
        return primal
    t = 1.0 / float(np.min(band))
    rescaled = 0.5 * t * t * vKv + float(c @ np.maximum(0.0, 1.0 - t * margins))
    return rescaled if rescaled < primal else primal


def relative_gap(primal: float, dual: float, roundoff: float = 0.0) -> float:
    """``(P - D - E)_+ / max(|P|, tiny)``: the weak-duality gap beyond round-off, relative to the
    primal value itself (``P - D <= 0``, weak duality broken, is kept as it is).

    ``E >= 0`` bounds the float64 round-off of evaluating ``P`` and ``D`` themselves
    (:func:`objective_roundoff`): a gap below it is not resolved, and counts as 0. Only the ν
    certificates pass an ``E`` (their objectives cancel to far below their terms where ``rho``
    is small, and their terms are of order one); the C-SVC's and LIBLINEAR's judges pass none,
    because the worst-case ``E`` grows with ``C max K_ii`` and ``n`` to a sizeable fraction of
    ``|P|`` on large problems with a large C. Relative to the objective's own size, not to ``max(1,
    |P|)``: the latter is an absolute gap whenever ``|P| < 1``, which a change of units (``X ->
    s X``, ``C -> C / s^2``) makes as small as one likes (``E`` scales like ``P``). ``inf`` when
    ``P`` is not finite (no feasible primal point).
    """
    if not math.isfinite(primal):
        return math.inf
    excess = primal - dual
    if excess > 0.0 and roundoff > 0.0:
        excess = max(excess - roundoff, 0.0)
    return float(excess) / max(abs(primal), TINY)


def certify_svm(
    alpha: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    C: Any,
    kernel: Kernel,
    g: np.ndarray | None = None,
) -> Certificate:
    """The :class:`Certificate` of ``alpha`` (module docstring), from the data alone.

    Parameters
    ----------
    alpha : (n,) array
    X, y : the training data (float64; ``y`` in -1/+1)
    C : float, (n,) array of per-sample bounds, or None (hard margin)
    kernel : Kernel
    g : (n,) array, optional
        ``K (alpha * y)`` when the caller already has it in float64; computed otherwise.
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    nan = math.nan
    if not np.all(np.isfinite(alpha)):
        return Certificate(nan, nan, nan, nan, nan, nan)
    v = alpha * y
    shift = 0.0
    if g is None:
        g, shift = own_decision_values(kernel, X, v)
    with np.errstate(over="ignore", invalid="ignore"):
        vKv = max(float(v @ g), 0.0)
        dual = float(alpha.sum()) - 0.5 * vKv
        hard = C is None
        upper = _bounds(C)
        violation, box, scale = _violation_and_box(alpha, y, g, upper)
        l1 = float(np.abs(alpha).sum())
        if hard:
            scale = float(np.max(alpha))
        feas = max(box / max(scale, 1e-300), abs(float(y @ alpha)) / max(l1, 1e-300))
        if hard:
            pos_min = float(np.min(g[y > 0]))
            neg_max = float(np.max(g[y < 0]))
            mu = 0.5 * (pos_min - neg_max)
            b = -0.5 * (pos_min + neg_max)
            primal = 0.5 * vKv / (mu * mu) if mu > 0 else math.inf
            margin = mu
        else:
            c = np.broadcast_to(upper, alpha.shape)
            b = minimise_hinge_over_b(y - g, y, c)
            margins = y * (g + b)
            primal = rescaled_primal(vKv, margins, c,
                                     0.5 * vKv + float(c @ np.maximum(0.0, 1.0 - margins)))
            margin = nan
        gap = relative_gap(primal, dual)
    if not math.isfinite(dual):
        gap = nan
    return Certificate(violation, gap, primal, dual, b - shift, feas, margin,
                       roundoff=kkt_roundoff(alpha, X, kernel))


def unresolved_advice(cert: Certificate, tol: float) -> str:
    """Why an answer whose certificate has :meth:`Certificate.unresolved` ``tol`` is not
    certified, and the remedy."""
    reached = ("as small as float64 resolves" if cert.kkt_violation <= cert.roundoff
               else "above that resolution")
    return (f"tol = {tol:g} is at or below the float64 resolution of m - M for this problem "
            f"({cert.roundoff:.3g}: the sums g_i = sum_j alpha_j y_j K(x_j, x_i) are that much "
            f"larger than the violations they must show), so no answer can be certified at it "
            f"(this one has m - M = {cert.kkt_violation:.3g}, {reached}); loosen tol above "
            f"{cert.roundoff:.2g}, or scale the features / lower C")


def unresolved_status(method: str, cert: Certificate, tol: float, stats: str = ""
                      ) -> tuple[str, str]:
    """``("inaccurate", message)`` for an answer of ``method`` whose ``tol`` is
    :meth:`~Certificate.unresolved`, with a :class:`~maxmargin.exceptions.ConvergenceWarning`
    (:func:`unresolved_advice`); ``stats`` ends the message."""
    advice = unresolved_advice(cert, tol)
    warnings.warn(f"{method}: {advice}.", exceptions.ConvergenceWarning, stacklevel=4)
    return "inaccurate", f"not certified: {advice}" + (f"; {stats}." if stats else ".")


def kkt_roundoff(alpha: np.ndarray, X: Any, kernel: Kernel) -> float:
    r"""The float64 resolution of ``m - M``: ``2 u max_i s_i`` (``u`` the unit round-off), with
    ``s_i`` a bound on the size of the terms of ``g_i = sum_j alpha_j y_j K_ij``.

    Each ``g_i`` is a sum whose terms total ``s_i = sum_j alpha_j |K_ij|``, so it is known to
    about ``u s_i`` (the first-order term of the worst-case bound, without its factor of the
    sum's length), and ``m - M``, a difference of two of them, to about ``2 u max_i s_i``: a
    smaller computed ``m - M`` is rounding luck, which a permutation of the samples or a change
    of origin or units turns into bad luck. An estimate of scale, not a bound: on random linear
    problems the realised error of ``m - M`` (twice that of ``g``) was 1/30 to 1.1 times it, and
    it varied by a factor of 10 over permutations of the samples. Linear kernel: the terms of
    ``x_i . w`` and of ``w = X^T v`` themselves, ``s = |X'| (|X'|^T alpha)`` on the rows the
    certificate evaluates (``X'`` the centred points for dense data, as
    :func:`own_decision_values`), in blocks. Other kernels: ``|K_ij| <= sqrt(K_ii K_jj)``
    (positive semidefinite), ``s_i <= sqrt(K_ii) sum_j alpha_j sqrt(K_jj)``; the sigmoid kernel
    (not semidefinite, ``|K| <= 1``): ``s_i <= sum alpha``. Invariant under ``X -> s X``, ``C
    -> C / s^2`` and under translations (linear kernel, dense data); 0 when it cannot be
    evaluated (no points, non-finite values)."""
    if X is None:  # g given without its points: not evaluated
        return 0.0
    a = np.abs(np.asarray(alpha, dtype=np.float64))
    u = 0.5 * np.finfo(np.float64).eps
    with np.errstate(over="ignore", invalid="ignore"):
        if isinstance(kernel, LinearKernel):
            size = _linear_term_sizes(a, X)
        elif kernel.kind == KIND_SIGMOID:
            size = float(a.sum())
        else:
            root = np.sqrt(np.abs(kernel.check_diag(X)))  # X validated by the caller
            size = float(np.max(root, initial=0.0)) * float(a @ root)
        bound = 2.0 * u * size
    return bound if math.isfinite(bound) else 0.0


def _linear_term_sizes(a: np.ndarray, X: Any) -> float:
    """``max_i (|X'| (|X'|^T a))_i`` for :func:`kkt_roundoff` (``X'``: dense rows less their
    mean, sparse rows as they are), :data:`ROUNDOFF_BLOCK_BYTES` of rows at a time."""
    sparse = not isinstance(X, np.ndarray)
    centre = 0.0 if sparse else X.mean(axis=0)
    rows = max(1, ROUNDOFF_BLOCK_BYTES // (8 * max(X.shape[1], 1)))

    def blocks() -> Iterator[tuple[int, Any]]:
        for start in range(0, X.shape[0], rows):
            if sparse:
                yield start, abs(X[start:start + rows])
            else:
                block = X[start:start + rows] - centre
                yield start, np.abs(block, out=block)

    column = np.zeros(X.shape[1])
    for start, block in blocks():
        column += np.asarray(block.T @ a[start:start + block.shape[0]]).ravel()
    largest = 0.0
    for _, block in blocks():
        largest = max(largest, float(np.max(np.asarray(block @ column).ravel(), initial=0.0)))
    return largest


def certify_infeasible(
    weights: np.ndarray, X: Any, y: np.ndarray, kernel: Kernel
) -> Certificate:
    r"""The evidence that a hard-margin problem is infeasible at a resolution, in float64.

    ``weights >= 0`` on the points are normalised per class to convex weights ``lam`` (positives)
    and ``mu`` (negatives); ``p - q = sum_i y_i nu_i phi(x_i)`` (``nu`` = ``lam`` on the
    positives, ``mu`` on the negatives) lies in the difference of the two hulls, so

    .. math::

        \operatorname{dist}(\operatorname{conv} \phi(X_+), \operatorname{conv} \phi(X_-))
        \le \|p - q\| = \sqrt{v^T K v}, \qquad v = y \circ \nu,

    and every separating hyperplane has geometric margin at most half of it. ``alpha`` of an
    SVM run (``alpha = s nu``, ``y . alpha = 0``) is a valid ``weights``. The certificate has
    NaN ``kkt_violation``, ``gap`` and ``b``, infinite objectives (the primal is infeasible, the
    dual unbounded), ``hull_distance`` that bound and ``radius`` ``R = max_i sqrt(K_ii)``,
    measured from the data's mean for the linear kernel on dense data (``max_i ||x_i -
    mean||``): the hulls' distance does not change under a translation, and neither does the
    resolution ``eps R`` it is judged at (rbf: ``K_ii = 1`` already; other kernels, which are
    not translation-invariant, keep the origin).
    """
    w = np.asarray(weights, dtype=np.float64)
    nan = math.nan
    if isinstance(kernel, LinearKernel) and isinstance(X, np.ndarray) and X.ndim == 2:
        X = X - X.mean(axis=0)  # v sums to 0: the same p - q, without the offset's round-off
    radius = math.sqrt(max(float(np.max(kernel.diag(X))), 0.0))
    pos, neg = y > 0, y < 0
    s_pos, s_neg = float(w[pos].sum()), float(w[neg].sum())
    if not (np.all(np.isfinite(w)) and np.all(w >= 0) and s_pos > 0 and s_neg > 0):
        return Certificate(nan, nan, math.inf, math.inf, nan, nan, nan, math.inf, radius)
    nu = np.where(pos, w / s_pos, w / s_neg)
    v = y * nu
    sv = np.flatnonzero(nu != 0.0)
    g = decision_values(kernel, X, X[sv], v[sv])
    distance = math.sqrt(max(float(v @ g), 0.0))
    return Certificate(nan, nan, math.inf, math.inf, nan, 0.0, nan, distance, radius)


def within_resolution(alpha: np.ndarray, X: Any, y: np.ndarray, kernel: Kernel,
                      eps: float) -> Certificate | None:
    """The evidence (:func:`certify_infeasible` of a hard-margin answer's ``alpha``) when it
    puts the classes' hulls within ``eps R``, else None. The resolution is the verdict's: a
    method that certifies a margin below ``eps R / 2`` and one that stops once it has shown the
    hulls that close have solved the same problem, and the order, units and origin of the data
    must not decide which answer is given, so both are ``"infeasible"`` there."""
    evidence = certify_infeasible(alpha, X, y, kernel)
    return evidence if evidence.hull_distance <= eps * evidence.radius else None


def infeasible_message(cert: Certificate, eps: float, how: str = "") -> str:
    """The message of an infeasible hard margin: what was shown, at which resolution."""
    shown = (f"the classes' convex hulls (in feature space) are within {eps:g} R "
             f"(R = max ||phi(x)|| = {cert.radius:.3g}; evidence: convex combinations "
             f"{cert.hull_distance:.3g} apart)")
    return (f"hard margin: {shown}{how}: not separable at this resolution (no margin above "
            f"{eps / 2:.2g} R can be certified); use a finite C")


def weak_duality(candidate: Certificate, reference: Certificate, *,
                 scale: float = 0.0, rtol: float = 1e-10, dual_slack: float = 0.0,
                 roundoff: float = 0.0) -> list[str]:
    """Weak duality between two answers of one problem, both ways: every dual value is a lower
    bound of every primal value, so ``D_c <= P_r`` and ``D_r <= P_c`` must hold up to round-off
    (``rtol`` times the largest of ``scale`` and the primal values, relative like the gap, plus
    ``roundoff``, the float64 error the objectives may carry: :func:`objective_roundoff`).
    ``dual_slack`` widens the first for a candidate whose ``alpha`` is not exactly feasible
    (:func:`infeasibility_slack`). Returns the broken inequalities, in words (empty when both
    hold)."""
    slack = rtol * max(scale, abs(candidate.primal_objective),
                       abs(reference.primal_objective), TINY) + roundoff
    reasons = []
    if candidate.dual_objective > reference.primal_objective + slack + dual_slack:
        reasons.append(f"weak duality broken: D = {candidate.dual_objective:.10g} > the "
                       f"reference's P = {reference.primal_objective:.10g}")
    if reference.dual_objective > candidate.primal_objective + slack:
        reasons.append(f"weak duality broken: the reference's D = "
                       f"{reference.dual_objective:.10g} > P = {candidate.primal_objective:.10g}")
    return reasons


def roundoff_gamma(alpha: np.ndarray | None = None, *, terms: int = 0, width: int = 0) -> float:
    """Higham's ``gamma_N = N u / (1 - N u)`` (``u`` the unit round-off) for the sums the
    judges evaluate: ``N = n + #{alpha_i != 0} + width + 8`` for ``alpha`` of length ``n``
    (``terms`` more counted as well; ``width`` the products summed in one kernel value), so a
    sum of ``N`` float64 terms of total size ``T`` errs by at most ``gamma_N T``."""
    count = int(terms) + max(int(width), 0) + 8
    if alpha is not None:
        count += int(alpha.shape[0]) + int(np.count_nonzero(alpha))
    u = 0.5 * np.finfo(np.float64).eps
    return count * u / (1.0 - count * u)


def objective_roundoff(alpha: np.ndarray, C: Any, kernel_max: float, b: float, *,
                       offset: float = 1.0, width: int = 0,
                       hinges: np.ndarray | None = None) -> float:
    r"""A rigorous bound on the float64 round-off of ``P - D`` as the certificates evaluate them
    from the data (``kernel_max = max_i K(x_i, x_i)``, which bounds every ``|K_ij|``; ``b`` the
    intercept; ``offset`` the constant of the hinge terms: 1 for the C-SVC's ``1 - y_i (g_i +
    b)``, ``rho`` for the ν problems' ``rho - y_i (g_i + b)``; ``width`` the number of products
    summed in one kernel value, ``d`` for dot products and distances).

    With ``A = sum |alpha_i|`` each ``g_i = sum_j alpha_j y_j K_ij`` is a sum of terms of total
    size at most ``A kernel_max``, so it carries an error of at most ``gamma_N A kernel_max``
    (:func:`roundoff_gamma`, whose ``N`` counts the kernel values' own rounding and the sums);
    ``v^T K v = v . g`` then errs by at most ``gamma_N A^2 kernel_max``, ``sum alpha`` by
    ``gamma_N A``, and each hinge argument ``h_i = offset - y_i (g_i + b)`` by at most ``delta =
    gamma_N (A kernel_max + |b| + offset)``, so the hinge sum ``sum_i C_i max(0, h_i)``
    (``max(0, .)`` is 1-Lipschitz) by at most ``gamma_N S (A kernel_max + |b| + offset)``, ``S``
    the sum of the ``C_i`` whose computed ``hinges`` ``h_i > -delta`` (the others are 0, exact
    and computed; all ``C_i`` when ``hinges`` is None). Together:

    .. math:: E = \gamma_N (A + S) (A\, K_{max} + |b| + \mathrm{offset}).

    The ν certificates discount it (:func:`relative_gap`): there ``A`` is at most 1 and the
    bound is of order ``n u``, which matters only where ``rho`` is far below ``A kernel_max``
    (terms of size ``A^2`` cancelling to far less). For a C-SVC with a large ``C`` it is a
    worst case far above the actual round-off (``n = 5,000``, ``C = 1000``, 50 standardised
    features: about 5e-4 of ``|P|``), so that judge does not use it. Under ``X -> s X``, ``C ->
    C / s^2`` (linear kernel) it scales like the objectives. 0 (no allowance) when an input is
    not finite."""
    alpha = np.asarray(alpha, dtype=np.float64)
    A = float(np.sum(np.abs(alpha)))
    gamma = roundoff_gamma(alpha, width=width)
    size = A * max(kernel_max, 0.0) + abs(b) + abs(offset)
    weights = np.zeros(0) if C is None else np.broadcast_to(
        np.asarray(C, dtype=np.float64), alpha.shape)
    if hinges is not None and weights.size:
        weights = weights[np.asarray(hinges) > -gamma * size]
    bound = gamma * (A + float(np.sum(weights))) * size
    return bound if math.isfinite(bound) else 0.0


def kernel_width(X: Any) -> int:
    """The number of products summed in one kernel value of rows of ``X`` (its columns; 0 for
    data that is not a 2-d array: strings, precomputed kernels' indices)."""
    shape = getattr(X, "shape", ())
    return int(shape[1]) if len(shape) == 2 else 0


def infeasibility_slack(alpha: np.ndarray, y: np.ndarray, C: Any, b: float,
                        kernel_max: float) -> float:
    """How far ``D(alpha)`` of a slightly infeasible ``alpha`` may exceed a primal value ``P``
    whose intercept is ``b``, with ``kernel_max = max_i K(x_i, x_i)``.

    With ``alpha'`` the projection onto the box and ``delta = ||alpha - alpha'||_1``: for the
    problem with ``b`` fixed, ``D(alpha') - b y.alpha' <= P``, and
    ``|D(alpha) - D(alpha')| <= delta (1 + kernel_max ||alpha||_1)``, so
    ``D(alpha) <= P + |b| (|y.alpha| + delta) + delta (1 + kernel_max ||alpha||_1)``.
    0 for a feasible ``alpha`` (``C`` None: the hard margin's box ``alpha >= 0``)."""
    upper = np.inf if C is None else np.broadcast_to(np.asarray(C, dtype=np.float64), alpha.shape)
    delta = float(np.sum(np.maximum(alpha - upper, 0.0) + np.maximum(-alpha, 0.0)))
    equality = abs(float(np.dot(y, alpha)))
    return (abs(b) * (equality + delta)
            + delta * (1.0 + kernel_max * float(np.sum(np.abs(alpha)))))


def opposite_duplicates(X: np.ndarray, y: np.ndarray) -> tuple[int, int] | None:
    """Indices ``(i, j)`` of identical rows with opposite labels, or None.

    Such a pair lies in both classes' hulls in every feature space: an exact certificate that
    no hard-margin separator exists (found by sorting the rows, ``O(n d log n)``).
    """
    if hasattr(X, "tocsr"):  # sparse rows: identical rows have identical (indices, values)
        X = X.tocsr(copy=True)  # canonicalised on a copy: the input is never modified
        X.sum_duplicates()
        X.eliminate_zeros()
        keys: dict[bytes, int] = {}
        inverse = np.empty(X.shape[0], dtype=np.int64)
        for i in range(X.shape[0]):
            part = slice(X.indptr[i], X.indptr[i + 1])
            key = X.indices[part].tobytes() + b"|" + X.data[part].tobytes()
            inverse[i] = keys.setdefault(key, len(keys))
        first = np.zeros(len(keys), dtype=np.int64)
    elif X.ndim == 1:  # strings
        _, first, inverse = np.unique(X.astype(str), return_index=True, return_inverse=True)
    else:  # rows as raw bytes (+ 0.0 turns -0.0 into 0.0): float equality of finite rows
        rows = np.ascontiguousarray(X + 0.0)
        rows = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
        _, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
    pos = np.full(first.size, -1)
    neg = np.full(first.size, -1)
    pos[inverse[y > 0]] = np.flatnonzero(y > 0)
    neg[inverse[y < 0]] = np.flatnonzero(y < 0)
    both = np.flatnonzero((pos >= 0) & (neg >= 0))
    return None if both.size == 0 else (int(pos[both[0]]), int(neg[both[0]]))


def opposite_duplicates_message(pair: tuple[int, int]) -> str:
    """The infeasibility certificate of :func:`opposite_duplicates`, in words."""
    return (f"hard margin: x_{pair[0]} = x_{pair[1]} with opposite labels lies in both classes' "
            "convex hulls in every feature space: no hyperplane separates them; use a finite C")


def certify_hulls(
    P: np.ndarray, Q: np.ndarray, weights_p: np.ndarray, weights_q: np.ndarray
) -> HullCertificate:
    """The :class:`HullCertificate` of convex weights on ``P`` and ``Q`` (``Q`` may be empty:
    the nearest point of ``conv(P)`` to the origin). Two hulls are judged on the points less
    their common mean: every quantity is a difference ``<z, p_i - q_j>`` and ``z`` itself is
    one, so the verdict does not depend on where the origin lies."""
    lam = np.asarray(weights_p, dtype=np.float64)
    mu = np.asarray(weights_q, dtype=np.float64)
    nan = math.nan
    if not (np.all(np.isfinite(lam)) and np.all(np.isfinite(mu))):
        return HullCertificate(nan, nan, nan, nan)
    if Q.shape[0]:
        centre = np.vstack([P, Q]).mean(axis=0)
        P, Q = P - centre, Q - centre
    with np.errstate(over="ignore", invalid="ignore"):
        z = P.T @ lam - (Q.T @ mu if Q.shape[0] else 0.0)
        zz = float(z @ z)
        sp = P @ z
        sq = Q @ z if Q.shape[0] else np.zeros(1)
        low = float(np.min(sp)) - (float(np.max(sq)) if Q.shape[0] else 0.0)
        high = float(np.max(sp[lam > 0])) - (float(np.min(sq[mu > 0])) if Q.shape[0] else 0.0)
        denom = max(zz, 1e-300)
        feas = max(
            float(np.max(np.maximum(-lam, 0.0))), abs(float(lam.sum()) - 1.0),
            float(np.max(np.maximum(-mu, 0.0))) if mu.size else 0.0,
            abs(float(mu.sum()) - 1.0) if mu.size else 0.0,
        )
        gap = max(0.0, (zz - low) / denom)
        kkt = max(0.0, (high - low) / denom)
    return HullCertificate(gap, kkt, feas, math.sqrt(zz))


# --- LIBLINEAR's problem (scikit-learn's LinearSVC) -------------------------------------------

#: The losses and penalties of LIBLINEAR's SVM problems that :func:`certify_liblinear` judges.
LIBLINEAR_LOSSES = ("hinge", "squared_hinge")
LIBLINEAR_PENALTIES = ("l2", "l1")
#: Hinge loss: the widths ``tau`` of the margin set ``|m_i - 1| <= tau`` on which a dual point is
#: fitted by bounded least squares (0: no margin set, the clipped map ``a = C [m < 1]``).
MARGIN_TAUS = (0.0, 1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-2)


def liblinear_rows(X: Any, intercept_scaling: float | None) -> Any:
    """The rows LIBLINEAR sees: ``X`` with the constant column ``intercept_scaling`` appended
    (``X`` itself when None: no intercept). A copy of ``X``: the certificates take ``X`` and
    ``intercept_scaling`` instead (:func:`rows_dot`, :func:`rows_tdot`)."""
    if intercept_scaling is None:
        return X
    column = np.full((X.shape[0], 1), float(intercept_scaling))
    if hasattr(X, "tocsr"):
        import scipy.sparse as sp

        return sp.hstack([X, sp.csr_matrix(column)], format="csr")
    return np.hstack([X, column])


def rows_dot(X: Any, W: np.ndarray, intercept_scaling: float | None) -> np.ndarray:
    """``X~ W`` for the rows ``X~`` of :func:`liblinear_rows` (``W`` of ``p`` rows, 1-D or 2-D,
    the bias weight last), without forming ``X~``: ``X W[:-1] + s W[-1]``, O(nnz)."""
    if intercept_scaling is None:
        out = np.asarray(X @ W, dtype=np.float64)
    else:
        out = np.asarray(X @ W[:-1], dtype=np.float64) + intercept_scaling * W[-1]
    return out.ravel() if np.ndim(W) == 1 else out


def rows_tdot(X: Any, V: np.ndarray, intercept_scaling: float | None) -> np.ndarray:
    """``X~^T V`` for the rows ``X~`` of :func:`liblinear_rows` (``V`` of ``n`` rows, 1-D or
    2-D), without forming ``X~``: ``X^T V`` and then ``s sum_i V_i``, O(nnz)."""
    out = np.asarray(X.T @ V, dtype=np.float64)
    if np.ndim(V) == 1:
        out = out.ravel()
    if intercept_scaling is None:
        return out
    return np.concatenate([out, intercept_scaling * np.sum(V, axis=0, keepdims=True)])


def liblinear_objectives(
    w: np.ndarray, X: Any, y: np.ndarray, C: np.ndarray, loss: str, penalty: str,
    intercept_scaling: float | None = None,
) -> tuple[float, np.ndarray]:
    """``P(w)`` of LIBLINEAR's primal (:func:`certify_liblinear`) and the margins ``y_i w.x_i``
    (the rows of :func:`liblinear_rows`: ``X`` and ``intercept_scaling``)."""
    margins = y * rows_dot(X, w, intercept_scaling)
    slack = np.maximum(0.0, 1.0 - margins)
    reg = 0.5 * float(w @ w) if penalty == "l2" else float(np.abs(w).sum())
    data = float(C @ (slack if loss == "hinge" else slack * slack))
    return reg + data, margins


def _liblinear_dual(a: np.ndarray, u: np.ndarray, C: np.ndarray, loss: str, penalty: str
                    ) -> float:
    """``D(t a)`` at the best feasible ``t >= 0`` (:func:`certify_liblinear`), computed for
    ``a / max a`` (``D(t a)`` depends on ``t a`` only), so that ``a`` near the ends of float64
    (``C`` of 1e-300 or 1e300) neither underflows ``Q`` to 0 nor overflows it."""
    top_a = float(np.max(a)) if a.size else 0.0
    if not top_a > 0.0:
        return 0.0
    a, u = a / top_a, u / top_a
    S = float(a.sum())
    Q = (float(u @ u) if penalty == "l2" else 0.0) + (
        float(a @ (a / (2.0 * C))) if loss == "squared_hinge" else 0.0)
    t_max = math.inf
    if loss == "hinge":
        t_max = float(np.min(C[a > 0] / a[a > 0]))
    if penalty == "l1":
        top = float(np.max(np.abs(u)))
        t_max = min(t_max, 1.0 / top) if top > 0 else t_max
    t = t_max if Q <= 0.0 else min(t_max, S / Q)
    return t * (S - 0.5 * t * Q)  # not t * t * Q: t^2 underflows where t Q does not


def _liblinear_kkt(w: np.ndarray, X: Any, s: float | None, C: np.ndarray, a: np.ndarray,
                   u: np.ndarray, margins: np.ndarray, loss: str, penalty: str) -> float:
    """The KKT violation of the pair ``(w, a)`` (:func:`certify_liblinear`)."""
    if loss == "hinge":
        free = (a > 0) & (a < C)
        comp = np.where(a <= 0, np.maximum(0.0, 1.0 - margins),
                        np.where(free, np.abs(margins - 1.0), np.maximum(0.0, margins - 1.0)))
    else:
        comp = np.where(a <= 0, np.maximum(0.0, 1.0 - margins),
                        np.abs(margins - 1.0 + a / (2.0 * C)))
    if penalty == "l2":
        stat = float(np.max(np.abs(rows_dot(X, w - u, s))))
    else:
        stat = float(np.max(np.where(w != 0, np.abs(u - np.sign(w)),
                                     np.maximum(0.0, np.abs(u) - 1.0))))
    return max(stat, float(np.max(comp)))


def _hinge_dual_points(w: np.ndarray, X: Any, s: float | None, y: np.ndarray, C: np.ndarray,
                       margins: np.ndarray, taus: tuple[float, ...] = MARGIN_TAUS
                       ) -> list[np.ndarray]:
    """Hinge loss: ``a = C`` below the margin set, 0 above it, bounded least squares of
    ``w = X~^T (a y)`` on it, for each width in ``taus`` (distinct sets only)."""
    from scipy.optimize import lsq_linear

    points, seen = [], set()
    for tau in taus:
        low = margins < 1.0 - tau
        mid = np.flatnonzero(np.abs(margins - 1.0) <= tau)
        key = (low.tobytes(), mid.tobytes())
        if key in seen:
            continue
        seen.add(key)
        a = np.where(low, C, 0.0)
        if mid.size:
            rest = w - rows_tdot(X, a * y, s)
            M = liblinear_rows(X[mid], s)
            A = M.T.multiply(y[mid]).tocsr() if hasattr(M, "tocsr") else M.T * y[mid]
            solver = "lsmr" if hasattr(A, "tocsr") else "exact"
            fit = lsq_linear(A, rest, bounds=(np.zeros(mid.size), C[mid]), lsq_solver=solver)
            a[mid] = np.clip(fit.x, 0.0, C[mid])
        points.append(a)
    return points


def certify_liblinear(
    w: np.ndarray,
    X: Any,
    y: np.ndarray,
    C: float | np.ndarray,
    *,
    loss: str = "squared_hinge",
    penalty: str = "l2",
    alpha: np.ndarray | None = None,
    margin_fits: bool = True,
    intercept_scaling: float | None = None,
) -> Certificate:
    r"""The :class:`Certificate` of ``w`` in LIBLINEAR's primal SVM problem, in float64.

    The rows ``x_i`` are those LIBLINEAR sees: ``X``'s, with the column ``s =
    intercept_scaling`` appended when it is given (never formed: :func:`rows_dot`), or ``X``
    already holding it (:func:`liblinear_rows`); ``w`` the weights over them (the bias weight
    last, regularised like the others). With the margins ``m_i = y_i w . x_i``:

    .. math::

        P(w) = R(w) + \sum_i C_i \ell(m_i), \quad R = \tfrac12 \|w\|^2 \;(\text{l2})
        \text{ or } \|w\|_1 \;(\text{l1}), \quad \ell(m) = (1 - m)_+ \text{ or } (1 - m)_+^2,

        D(a) = \sum_i a_i - \tfrac12 \|u\|^2 \,[\text{l2}] - \sum_i \frac{a_i^2}{4 C_i}
        \,[\text{squared}], \quad u = \textstyle\sum_i a_i y_i x_i,

    over ``a >= 0`` (``a <= C`` for the hinge; ``||u||_inf <= 1`` for l1), so ``D(a) <= P(w')``
    for every ``w'``. Dual points tried: the KKT map ``a = 2 C (1 - m)_+`` (squared hinge); for
    the hinge ``a = C`` where ``m < 1 - tau``, 0 where ``m > 1 + tau`` and a bounded
    least-squares fit of ``w = u`` on the rest, for each ``tau`` of :data:`MARGIN_TAUS`;
    ``alpha`` when given (e.g. a solver's own dual, clipped to the box). Each is scaled by the
    ``t`` in its feasible range that maximises ``D(t a)``; ``dual_objective`` is the best, and
    ``gap = (P - D) / max(|P|, tiny)`` (:func:`relative_gap`) bounds how far ``P(w)`` is from
    the optimum.

    ``kkt_violation`` is the smallest, over those points, KKT violation of the pair ``(w, a)``:
    the largest of the complementarity residuals ``(1 - m_i)_+`` (``a_i = 0``), ``(m_i - 1)_+``
    (hinge, ``a_i = C_i``), ``|m_i - 1 + a_i / (2 C_i)|`` (else; no ``a`` term for the hinge) and
    of stationarity: ``max_i |x_i . (w - u)|`` for l2 (all in units of ``y f``, like SVC's
    ``m - M``); ``max_j dist(u_j, d|w_j|)`` for l1 (per unit of ``w``). With the KKT map it is
    ``max_i |x_i . grad P(w)|``. ``b`` is NaN (the bias is inside ``w``), ``feasibility`` 0 (the
    dual points are feasible by construction). ``margin_fits=False`` (a solver's own ``alpha``
    given) tries the hinge's ``tau = 0`` point only: O(nnz) but for the exact-margin fit.
    """
    w = np.asarray(w, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64)
    C = np.broadcast_to(np.asarray(C, dtype=np.float64), y.shape).copy()
    s = None if intercept_scaling is None else float(intercept_scaling)
    if w.shape[0] != X.shape[1] + (s is not None):
        raise ValueError(f"`w` must have one weight per column of `X`"
                         f"{' and one for the bias' if s is not None else ''}; got "
                         f"{w.shape[0]} for {X.shape[1]} columns.")
    nan = math.nan
    if not np.all(np.isfinite(w)):
        return Certificate(nan, nan, nan, nan, nan, nan)
    with np.errstate(over="ignore", invalid="ignore"):
        primal, margins = liblinear_objectives(w, X, y, C, loss, penalty, s)
        if loss == "hinge":
            taus = MARGIN_TAUS if margin_fits or alpha is None else MARGIN_TAUS[:1]
            points = _hinge_dual_points(w, X, s, y, C, margins, taus)
        else:
            points = [2.0 * C * np.maximum(0.0, 1.0 - margins)]
        if alpha is not None:
            a = np.maximum(np.asarray(alpha, dtype=np.float64).ravel(), 0.0)
            points.append(np.minimum(a, C) if loss == "hinge" else a)
        kkt, dual = math.inf, -math.inf
        for a in points:
            u = rows_tdot(X, a * y, s)
            kkt = min(kkt, _liblinear_kkt(w, X, s, C, a, u, margins, loss, penalty))
            dual = max(dual, _liblinear_dual(a, u, C, loss, penalty))
        gap = relative_gap(primal, dual) if math.isfinite(primal) else nan
    return Certificate(kkt, gap, primal, dual, nan, 0.0)
