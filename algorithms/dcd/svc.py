"""``dcd_svc``: SVC's linear problem (hinge loss, unregularised bias), by dual coordinate
descent and the method of multipliers on ``y . alpha = 0``, certified as ``smo``'s answers.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from maxmargin.algorithms.dcd.api import checked_arguments, finish_status, history_of
from maxmargin.algorithms.dcd.loop import Coordinates
from maxmargin.certificate import Certificate, certify_svm
from maxmargin.kernels import LinearKernel
from maxmargin.results import SVMSolution, join_messages, recover_intercept
from maxmargin.tolerances import (
    DCD_PG_SHRINK,
    DCD_PG_TOL,
    DCD_SVC_EPS,
    DCD_SVC_SCALING,
    SMO_TOL,
)

__all__ = ["balanced", "certify_svc", "dcd_svc"]


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


def certify_svc(X: Any, y: np.ndarray, alpha: np.ndarray, box: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, Certificate]:
    """``(a, w, g, certificate)`` of ``a = balanced(alpha, y, box)`` in SVC's problem, O(nnz +
    n log n) (:func:`~maxmargin.certificate.certify_svm`, linear kernel)."""
    a = balanced(alpha, y, box)
    w = np.asarray(X.T @ (a * y), dtype=np.float64).ravel()
    g = np.asarray(X @ w, dtype=np.float64).ravel()
    return a, w, g, certify_svm(a, X, y, box, LinearKernel(), g=g)


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
    the multiplier ``b`` and the penalty ``rho / 2 (y . alpha)^2``, ``rho = s^2``, the inner
    problem is LIBLINEAR's hinge problem with the bias column ``s`` (:func:`dcd_loop`) on the
    margins ``y_i (w . x_i + s v + b)``, ``s v = rho y . alpha``; each inner solve is
    warm-started from the last ``alpha`` and followed by the update ``b <- b + rho y . alpha``
    (the inner problem's whole bias). Its tolerance ``eps`` starts at ``DCD_PG_TOL`` and is
    divided by ``DCD_PG_SHRINK`` after each solve, down to ``DCD_SVC_EPS * tol``. After each
    solve ``alpha`` is moved onto ``y . alpha = 0`` (:func:`balanced`) and judged by
    :func:`~maxmargin.certificate.certify_svm`; the run stops when it meets ``tol``
    (``m - M < tol``, as ``smo``).

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
    start = time.perf_counter()
    X, y, C, box, tol, max_iter, rng, shrinking = checked_arguments(
        X, y, C, sample_weight, tol, max_iter, random_state, shrinking)
    s = DCD_SVC_SCALING
    run = Coordinates.start(X, y, box, False, s, rng, shrinking)
    b, eps, floor, passes = 0.0, DCD_PG_TOL, DCD_SVC_EPS * tol, 0
    trace: list[tuple[float, float, float]] = []
    while True:
        run.unshrink()  # the offset moved: every sample may violate again
        done, code = run.passes(eps, max_iter - passes, offset=b)
        passes += done
        step = s * float(run.w[-1])  # rho (y . alpha), rho = s^2
        a, w, g, cert = certify_svc(X, y, run.alpha, box)
        trace.append((b, step / (s * s), cert.kkt_violation))
        if cert.meets(tol) or passes >= max_iter:
            break
        if eps <= floor and abs(step) <= 4 * np.finfo(float).eps * max(1.0, abs(b)):
            floor /= DCD_PG_SHRINK  # b is found to round-off: the inner solves go tighter
        eps = max(eps / DCD_PG_SHRINK, floor)
        b += step  # the multiplier update
    status, message = finish_status(
        cert.meets(tol),
        f"dcd_svc stopped at max_iter={max_iter} passes with m - M = "
        f"{cert.kkt_violation:.3g} >= tol = {tol:g} (float64)")
    b_fit, interval = recover_intercept(a, y, g, box)
    margins = y * (g + b_fit)
    return SVMSolution(
        alpha=a, b=b_fit, w=w, dual_objective=cert.dual_objective,
        primal_objective=0.5 * float(w @ w) + float(box @ np.maximum(0.0, 1.0 - margins)),
        status=status, iterations=passes, method="dcd_svc",
        history=history_of(("b", "y_alpha", "kkt"), trace),
        X_train=X, y_train=y, kernel=LinearKernel(), C=C, b_interval=interval,
        message=join_messages(message, cert.summary()), runtime=time.perf_counter() - start,
        certificate=cert, sample_weight=None if sample_weight is None else box / C, tol=tol,
    )  # fmt: skip
