"""``dcd_svc``: SVC's linear problem (hinge loss, unregularised bias), by dual coordinate
descent and the method of multipliers on ``y . alpha = 0``, certified as ``smo``'s answers.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from maxmargin.algorithms.active_set import Finished, finish_alpha
from maxmargin.algorithms.dcd.api import (
    DCD_FIRST_CHECK,
    checked_arguments,
    finish_status,
    history_of,
)
from maxmargin.algorithms.dcd.finish import Handover, data_bytes, feature_finish, passes_work
from maxmargin.algorithms.dcd.loop import CONVERGED, Coordinates
from maxmargin.algorithms.dcd.smoothed import path_applies, path_finish
from maxmargin.certificate import (
    TINY,
    Certificate,
    certify_svm,
    kkt_roundoff,
    max_violation,
    unresolved_status,
)
from maxmargin.kernels import LinearKernel
from maxmargin.kernels.base import far_from_origin, row_norms2
from maxmargin.results import (
    SVMSolution,
    adopt_svm_solution,
    join_messages,
    recover_intercept,
    uncentred_intercept,
)
from maxmargin.tolerances import (
    DCD_FINISH_KKT,
    DCD_FINISH_MIN_BYTES,
    DCD_PG_SHRINK,
    DCD_PG_TOL,
    DCD_SMOOTH_AFTER,
    DCD_SMOOTH_GAP,
    DCD_SVC_EPS,
    DCD_SVC_FINISH_AFTER,
    DCD_SVC_FINISH_MATRICES,
    DCD_SVC_GROWTH,
    DCD_SVC_SCALING,
    SMO_TOL,
)

__all__ = ["BiasSearch", "balanced", "certify_svc", "dcd_svc", "solve_svc"]


def balanced(alpha: np.ndarray, y: np.ndarray, box: np.ndarray) -> np.ndarray:
    """``alpha`` moved onto ``y . alpha = 0`` inside the box, changing the free alphas
    (``0 < alpha_i < C_i``) only, each in proportion to its room in the direction that
    lowers ``|y . alpha|``; when their room is short, the class of the larger sum is scaled
    down as well. Bounded alphas stay on their bounds (KKT-consistent)."""
    a = alpha.copy()
    excess = float(y @ a)
    if excess == 0.0:
        return a
    sign = 1.0 if excess > 0 else -1.0
    free = (a > 0.0) & (a < box)
    down = free & (y == sign)  # lowering these lowers |y . alpha|
    up = free & (y == -sign)  # raising these too
    room = np.where(down, a, np.where(up, box - a, 0.0))
    total = float(room.sum())
    t = min(1.0, abs(excess) / total) if total > 0.0 else 0.0
    a[down] -= t * room[down]
    a[up] += t * room[up]
    a = np.clip(a, 0.0, box)
    if total >= abs(excess):  # balanced to round-off
        return a
    pos, neg = y > 0, y < 0  # the room is short: scale the larger class down
    sum_p, sum_n = float(a[pos].sum()), float(a[neg].sum())
    if sum_p > sum_n:
        a[pos] *= sum_n / sum_p
    elif sum_n > sum_p:
        a[neg] *= sum_p / sum_n
    return a


def row_scale(X: Any) -> float:
    """The root mean square of the rows' norms, ``sqrt(mean_i ||x_i||^2)`` (1 for zero
    rows), O(nnz)."""
    sq = row_norms2(X)
    return float(np.sqrt(sq.mean())) or 1.0


def certify_svc(X: Any, y: np.ndarray, alpha: np.ndarray, box: np.ndarray, tol: float
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, Certificate | None]:
    """``(a, w, g, m - M, certificate)`` of ``a = balanced(alpha, y, box)`` in SVC's problem:
    ``m - M`` (:func:`~maxmargin.certificate.max_violation`, O(nnz)) and, only when it is below
    ``tol`` or float64's resolution of it (:func:`~maxmargin.certificate.kkt_roundoff`, O(nnz)),
    the certificate (:func:`~maxmargin.certificate.certify_svm`, linear kernel, O(nnz
    + n log n); None otherwise)."""
    a = balanced(alpha, y, box)
    w = np.asarray(X.T @ (a * y), dtype=np.float64).ravel()
    g = np.asarray(X @ w, dtype=np.float64).ravel()
    violation = max_violation(a, y, g, box)
    judged = violation < tol or violation <= kkt_roundoff(a, X, LinearKernel())
    cert = certify_svm(a, X, y, box, LinearKernel(), g=g) if judged else None
    return a, w, g, violation, cert


@dataclass
class BiasSearch:
    """The search on the bias ``B`` for a root of ``r(B) = y . alpha(B)``, ``alpha(B)`` the
    inner solution at the whole bias ``B`` (non-increasing in ``B``: the derivative of the
    concave dual function of ``y . alpha = 0``). Samples ``(B, rho r)`` are kept while the
    inner tolerance is the same; a new one drops the others (looser solves may mislead).

    The next multiplier ``b`` (whose inner solution lands between ``b`` and the root) is
    the root of the secant through the last two samples: before a sign change, capped at
    ``DCD_SVC_GROWTH`` times the last move (the plain update ``b <- B`` when the secant
    points away); after one, kept strictly inside the bracket ``lo < B < hi`` (regula falsi on
    the bracket otherwise, bisection when the bracket did not halve in two steps)."""

    points: list[tuple[float, float]] = field(default_factory=list)
    widths: list[float] = field(default_factory=list)
    eps: float = math.nan

    def add(self, bias: float, residual: float, eps: float) -> None:
        """One inner solve at tolerance ``eps``: ``residual = rho y . alpha`` at ``bias``."""
        if eps != self.eps:
            self.points.clear()
            self.widths.clear()
            self.eps = eps
        self.points.append((bias, residual))
        lo, hi = self.bracket()
        if lo is not None and hi is not None:
            self.widths.append(hi[0] - lo[0])

    def bracket(self) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
        """The highest sample with ``r > 0`` and the lowest with ``r < 0`` (None if none)."""
        lo = max((p for p in self.points if p[1] > 0.0), default=None)
        hi = min((p for p in self.points if p[1] < 0.0), default=None)
        return lo, hi

    def settled(self, b: float, step: float) -> bool:
        """The bias is found to round-off: the last step, or the bracket, is at ``b``'s
        round-off."""
        unit = 4.0 * np.finfo(float).eps * max(1.0, abs(b))
        return abs(step) <= unit or (bool(self.widths) and self.widths[-1] <= unit)

    def next_bias(self) -> float:
        """The next multiplier (class docstring)."""
        b1, r1 = self.points[-1]
        if r1 == 0.0 or len(self.points) < 2:
            return b1
        b0, r0 = self.points[-2]
        secant = b1 - r1 * (b1 - b0) / (r1 - r0) if r1 != r0 else math.nan
        lo, hi = self.bracket()
        if lo is None or hi is None:  # one side seen: extrapolate, capped
            move = secant - b1
            if not math.isfinite(move) or move * r1 <= 0.0:
                return b1
            return b1 + math.copysign(min(abs(move), DCD_SVC_GROWTH * abs(b1 - b0)), r1)
        if len(self.widths) >= 3 and self.widths[-1] > 0.5 * self.widths[-3]:
            return 0.5 * (lo[0] + hi[0])
        if math.isfinite(secant) and lo[0] < secant < hi[0]:
            return secant
        return lo[0] + (hi[0] - lo[0]) * lo[1] / (lo[1] - hi[1])


def exact_finish(X: Any, y: np.ndarray, alpha: np.ndarray, box: np.ndarray, tol: float,
                 budget: float) -> Finished | None:
    """The active-set method (:func:`~maxmargin.algorithms.active_set.finish_alpha`) from the
    balanced ``alpha``, within ``budget`` floating-point operations, kept when its certificate
    has ``m - M < tol``; not tried (None) when the first factorisation of the free set,
    ``|F|^3``, would already exceed the budget (the active set is still far off), or when its
    dense matrices, ``DCD_SVC_FINISH_MATRICES`` of ``(|F| + 1)^2`` float64, would take more
    than the data's own bytes (at least ``DCD_FINISH_MIN_BYTES``)."""
    free = int(np.count_nonzero((alpha > 0.0) & (alpha < box)))
    if (float(free) ** 3 > budget or DCD_SVC_FINISH_MATRICES * 8.0 * (free + 1) ** 2
            > max(data_bytes(X), DCD_FINISH_MIN_BYTES)):
        return None
    return finish_alpha(alpha, X, y, box, LinearKernel(), accept=lambda c: c.final(tol),
                        max_work=budget, kkt_tol=0.25 * tol)


@dataclass
class Finish:
    """When and how :func:`solve_svc` hands its balanced ``alpha`` to an exact finish, kept only
    when certified (never before ``DCD_SVC_FINISH_AFTER`` passes). While the ``k`` free alphas
    outnumber ``d + 1``: in feature space (:func:`~.finish.feature_finish`, ``PEAK_COPIES k (d +
    1)`` floats, at most the data's bytes or ``DCD_FINISH_MIN_BYTES``), once its estimated work
    (:func:`~.finish.finish_work`) is within that of the passes so far
    (:func:`~.finish.passes_work`), its budget; after a failure, only when the passes' work has
    grown ``DCD_FINISH_GROWTH`` times or the estimate has fallen as many times
    (:meth:`~.finish.Handover.due`, as ``dcd``'s). Else, or when
    that gave nothing, in kernel space (:func:`exact_finish`) after ``DCD_SVC_FINISH_AFTER``
    passes (then 4, 16, ... times as many), once the bias is located (an inner solve has
    sampled ``y . alpha(B)``; from ``16 DCD_SVC_FINISH_AFTER`` passes on regardless)."""

    X: Any
    y: np.ndarray
    box: np.ndarray
    tol: float
    finish_at: int = 0
    smooth: bool = True
    handover: Handover = field(init=False)

    def __post_init__(self) -> None:
        self.handover = Handover(self.X)

    def smoothed(self, a: np.ndarray, w: np.ndarray, g: np.ndarray, passes: int
                 ) -> Finished | None:
        """Once, where the passes crawl (after ``DCD_SMOOTH_AFTER`` passes the balanced
        ``a``'s relative duality gap is above ``DCD_SMOOTH_GAP``), on fewer than
        ``DCD_SMOOTH_MAX_FEATURES`` features: the smoothed path with a free bias
        (:func:`~.smoothed.smoothed_path`, ``y . alpha = 0`` at its levels' minimisers),
        balanced and handed to the feature-space finish (:func:`~.smoothed.path_finish`); the
        certified answer, else None."""
        X, y, box, tol = self.X, self.y, self.box, self.tol
        if not self.smooth or passes < DCD_SMOOTH_AFTER or not path_applies(X):
            return None
        b, _ = recover_intercept(a, y, g, box)
        ww = float(w @ w)
        primal = 0.5 * ww + float(box @ np.maximum(0.0, 1.0 - y * (g + b)))
        if not primal - (float(a.sum()) - 0.5 * ww) > DCD_SMOOTH_GAP * max(abs(primal), TINY):
            return None
        self.smooth = False
        with np.errstate(over="ignore", invalid="ignore"):
            _, out, free = path_finish(X, y, box, tol, None,
                                       start=lambda alpha: balanced(alpha, y, box))
            if out is None:
                return None
            a, _, g, _, cert = certify_svc(X, y, out, box, tol)
        return Finished(a, g, cert, free) if cert is not None and cert.final(tol) else None

    def attempt(self, a: np.ndarray, passes: int, visits: float, located: bool
                ) -> Finished | None:
        """The certified finish from ``a`` (balanced) after ``passes`` passes that visited
        ``visits`` samples, or None (not tried, or not certified)."""
        X, y, box, tol = self.X, self.y, self.box, self.tol
        if passes < DCD_SVC_FINISH_AFTER:
            return None
        (n, d), nnz = X.shape, (X.nnz if hasattr(X, "tocsr") else X.size)
        free = int(np.count_nonzero((a > 0.0) & (a < box)))
        if d + 1 < free:
            finished = self.in_feature_space(a, free, passes_work(visits, nnz, n))
            if finished is not None:
                return finished
        self.finish_at = max(self.finish_at, DCD_SVC_FINISH_AFTER)
        if passes < self.finish_at or not (located or passes >= 16 * DCD_SVC_FINISH_AFTER):
            return None
        while self.finish_at <= passes:
            self.finish_at *= 4
        return exact_finish(X, y, a, box, tol, passes_work(float(passes) * n, nnz, n))

    def in_feature_space(self, a: np.ndarray, free: int, work: float) -> Finished | None:
        """The feature-space finish from ``a`` (``free`` alphas free) within ``work``, when
        affordable (class docstring), certified; else None."""
        X, y, box, tol = self.X, self.y, self.box, self.tol
        if not self.handover.due(free, work):
            return None
        alpha = feature_finish(X, y, a, box, DCD_FINISH_KKT * tol, work)
        if alpha is None:
            return None
        a, _, g, _, cert = certify_svc(X, y, alpha, box, tol)
        return Finished(a, g, cert, free) if cert is not None and cert.final(tol) else None


def dcd_svc(
    X: Any,
    y: Any,
    C: float = 1.0,
    *,
    sample_weight: Any = None,
    tol: float = SMO_TOL,
    max_iter: int | None = None,
    random_state: Any = 0,
    shrinking: bool = True,
) -> SVMSolution:
    """SVC's linear problem (hinge loss, unregularised bias: what ``smo(kernel="linear")``
    solves) by dual coordinate descent over a search on the bias.

    The constraint ``y . alpha = 0`` of SVC's dual is kept by the method of multipliers: with
    the multiplier ``b`` and the penalty ``rho / 2 (y . alpha)^2``, ``rho = s^2``, ``s =
    DCD_SVC_SCALING sqrt(mean_i ||x_i||^2)`` (:func:`row_scale`: the penalty on the scale of
    the dual function's curvature in ``b``), the inner problem is LIBLINEAR's hinge problem
    with the bias column ``s`` (:func:`dcd_loop`) on the margins ``y_i (w . x_i + s v + b)``,
    warm-started from the last ``alpha``. Its solution is that of the unpenalised problem at
    the whole bias ``B = b + rho y . alpha``, a sample of the monotone ``y . alpha(B)``; the
    next ``b`` is the root that :class:`BiasSearch` predicts from the samples (secant,
    bracketing; the plain update ``b <- B`` from one sample). The inner tolerance ``eps``
    starts at ``DCD_PG_TOL`` and is divided by ``DCD_PG_SHRINK`` after each solve, down to
    ``DCD_SVC_EPS * tol``. After ``DCD_FIRST_CHECK`` passes of a solve and at each doubling,
    ``alpha`` is moved onto ``y . alpha = 0`` (:func:`balanced`) and judged by
    :func:`~maxmargin.certificate.certify_svm` (once its ``m - M``, O(nnz), is below ``tol``);
    the run stops when it meets ``tol`` (``m - M < tol``, as ``smo``). A run not yet certified
    is handed to an exact active-set finish (:class:`Finish`: in feature space while the free
    alphas outnumber ``d + 1``, once affordable beside the passes so far, else in kernel
    space; counted work), kept only when certified; where the passes crawl, once, from the
    smoothed primal path (:meth:`Finish.smoothed`). Dense data far from the origin
    (:func:`~maxmargin.kernels.base.far_from_origin`) are solved centred, as ``smo`` does: the
    problem does not change under a translation, ``b`` shifts by ``-<w, mean>``.

    Parameters
    ----------
    X, y, C, sample_weight, random_state, shrinking
        As :func:`dcd`.
    tol : float > 0
        ``m - M`` (LIBSVM's maximal violation, float64) to reach (default ``SMO_TOL``).
    max_iter : int, optional
        Cap on all passes over the data (default :data:`DCD_MAX_ITER`); reaching it returns
        ``status="max_iter"`` with a :class:`~maxmargin.exceptions.ConvergenceWarning`.

    Returns
    -------
    SVMSolution
        ``method="dcd_svc"``; ``iterations`` counts the passes; ``history`` the multiplier
        ``b``, ``y . alpha`` and the certificate's ``m - M`` after each inner solve.
    """
    return solve_svc(X, y, C, sample_weight, tol, max_iter, random_state, shrinking)


def solve_svc(X: Any, y: Any, C: Any, sample_weight: Any, tol: Any, max_iter: Any,
              random_state: Any = 0, shrinking: Any = True, *, own: bool = False
              ) -> SVMSolution:
    """:func:`dcd_svc` with its arguments by position; ``own``: ``X`` and ``y`` are fresh
    arrays of the caller's that nothing else holds (``smo``'s validated copies), which a
    certified answer keeps read-only instead of copying them
    (:func:`~maxmargin.results.adopt_svm_solution`)."""
    start = time.perf_counter()
    X, y, C, box, tol, max_iter, rng, shrinking = checked_arguments(
        X, y, C, sample_weight, tol, max_iter, random_state, shrinking)
    X_user, mean = X, None
    if isinstance(X, np.ndarray) and far_from_origin(X):  # solved centred, as smo does
        mean = X.mean(axis=0)
        X = X - mean
    s = DCD_SVC_SCALING * row_scale(X)
    run = Coordinates.start(X, y, box, False, s, rng, shrinking)
    b, eps, floor, passes = 0.0, DCD_PG_TOL, DCD_SVC_EPS * tol, 0
    search, finish = BiasSearch(), Finish(X, y, box, tol)
    trace: list[tuple[float, float, float]] = []
    while True:
        run.unshrink()  # the offset moved: every sample may violate again
        inner, check_at = 0, DCD_FIRST_CHECK
        while True:  # the inner solve, judged after DCD_FIRST_CHECK passes and each doubling
            done, code = run.passes(eps, min(check_at - inner, max_iter - passes), offset=b)
            passes, inner = passes + done, inner + done
            a, w, g, violation, cert = certify_svc(X, y, run.alpha, box, tol)
            if cert is None:
                finished = (finish.smoothed(a, w, g, passes)
                            or finish.attempt(a, passes, run.visits, bool(search.points)))
                if finished is not None:  # certified by its own judge: the answer
                    a, g, cert = finished.alpha, finished.g, finished.certificate
                    violation = cert.kkt_violation
                    w = np.asarray(X.T @ (a * y), dtype=np.float64).ravel()
            met = cert is not None and cert.final(tol)
            if code == CONVERGED or met or passes >= max_iter:
                break
            check_at *= 2
        step = s * float(run.w[-1])  # rho (y . alpha), rho = s^2
        trace.append((b, step / (s * s), violation))
        if met or passes >= max_iter:
            break
        search.add(b + step, step, eps)  # y . alpha at the whole bias b + step
        if eps <= floor and search.settled(b, step):
            floor /= DCD_PG_SHRINK  # b is found to round-off: the inner solves go tighter
        eps = max(eps / DCD_PG_SHRINK, floor)
        b = search.next_bias()
    if cert is None:
        cert = certify_svm(a, X, y, box, LinearKernel(), g=g)
    if cert.unresolved(tol):  # then it cannot meet tol
        status, message = unresolved_status("dcd_svc", cert, tol)
    else:
        status, message = finish_status(
            cert.meets(tol),
            f"dcd_svc stopped at max_iter={max_iter} passes with m - M = "
            f"{cert.kkt_violation:.3g} >= tol = {tol:g} (float64)")
    b_fit, interval = recover_intercept(a, y, g, box)
    margins = y * (g + b_fit)
    if mean is not None:
        b_fit, interval, cert = uncentred_intercept(float(w @ mean), b_fit, interval, cert)
    make = adopt_svm_solution if own and status == "optimal" else SVMSolution
    return make(
        alpha=a, b=b_fit, w=w, dual_objective=cert.dual_objective,
        primal_objective=0.5 * float(w @ w) + float(box @ np.maximum(0.0, 1.0 - margins)),
        status=status, iterations=passes, method="dcd_svc",
        history=history_of(("b", "y_alpha", "kkt"), trace),
        X_train=X_user, y_train=y, kernel=LinearKernel(), C=C, b_interval=interval,
        message=join_messages(message, cert.summary()), runtime=time.perf_counter() - start,
        certificate=cert, sample_weight=None if sample_weight is None else box / C, tol=tol,
    )  # fmt: skip


