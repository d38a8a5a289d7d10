"""``dcd``: LIBLINEAR's L2-regularised linear SVM (``LinearSVC``'s problem), certified.

The dual coordinate descent of :mod:`maxmargin.algorithms.dcd.loop` (for the hinge, handed to
the exact active-set finish of :mod:`maxmargin.algorithms.dcd.finish` once affordable, from
the smoothed primal path of :mod:`maxmargin.algorithms.dcd.smoothed` where the passes crawl), or for
the squared hinge with ``n > d`` the primal finite Newton method of
:mod:`maxmargin.algorithms.dcd.newton`; the answer judged by
:func:`~maxmargin.certificate.certify_liblinear`.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from maxmargin import exceptions
from maxmargin._validation import (
    check_array,
    check_bool,
    check_C,
    check_choice,
    check_max_iter,
    check_positive,
    check_sample_weight,
    check_Xy,
)
from maxmargin.algorithms.dcd.finish import Handover, feature_finish
from maxmargin.algorithms.dcd.loop import (
    CONVERGED,
    Coordinates,
    dual_weights,
    duality_gap,
    seed_state,
)
from maxmargin.algorithms.dcd.newton import primal_newton
from maxmargin.algorithms.dcd.smoothed import path_applies, path_finish
from maxmargin.certificate import (
    LIBLINEAR_LOSSES,
    Certificate,
    certify_liblinear,
)
from maxmargin.results import LiblinearSolution, join_messages
from maxmargin.tolerances import (
    DCD_FINISH_KKT,
    DCD_PG_SHRINK,
    DCD_PG_TOL,
    DCD_SMOOTH_AFTER,
    DCD_SMOOTH_GAP,
    DCD_TOL,
)

__all__ = ["dcd", "checked_arguments", "checked_settings", "finish_status", "gap_met", "history_of",
           "DCD_MAX_ITER", "DCD_SOLVERS"]

#: Default cap on the passes over the data (LIBLINEAR's is 1000; SVC's problem and the hinge
#: at a tight ``tol`` may need far more, and passes over a shrunk set are cheap).
DCD_MAX_ITER = 100_000
#: The values of ``dcd``'s ``solver``.
DCD_SOLVERS = ("auto", "dual", "primal")
#: The gap is also checked after this many passes, then at each doubling of the passes.
DCD_FIRST_CHECK = 10

def gap_met(cert: Certificate, tol: float) -> bool:
    """Whether the certificate's relative gap is finite and at most ``tol`` (the linear
    solvers' status rule)."""
    return math.isfinite(cert.gap) and cert.gap <= tol


def finish_status(met: bool, cause: str) -> tuple[str, str]:
    """``("optimal", "")`` when the certificate met the tolerance, else ``("max_iter",
    message)`` with a :class:`~maxmargin.exceptions.ConvergenceWarning` (cause and remedy)."""
    if met:
        return "optimal", ""
    message = (f"{cause}; raise `max_iter`, loosen `tol`, or rescale the features / lower C "
               "(coordinate descent slows as C max ||x||^2 grows).")
    warnings.warn(message, exceptions.ConvergenceWarning, stacklevel=3)
    return "max_iter", message


def history_of(names: tuple[str, ...], trace: list[tuple]) -> dict[str, np.ndarray]:
    """The columns of ``trace`` (one tuple per check) by name."""
    return {name: np.array(column) for name, column in
            zip(names, zip(*trace, strict=True), strict=True)}


def checked_arguments(X: Any, y: Any, C: Any, sample_weight: Any, tol: Any, max_iter: Any,
             random_state: Any, shrinking: Any) -> tuple:
    """The validated common arguments: ``(X, y, C, box, tol, max_iter, rng, shrinking)``
    with ``X`` CSR or C-contiguous float64 (the caller's own when it already is) and
    ``box = C sample_weight``."""
    X, y = check_Xy(X, y, points=lambda v, name: check_array(v, name, ndim=2, copy=False,
                                                             sparse=True))
    return (X, y, *checked_settings(y, C, sample_weight, tol, max_iter, random_state,
                                    shrinking))


def checked_settings(y: np.ndarray, C: Any, sample_weight: Any, tol: Any, max_iter: Any,
                     random_state: Any, shrinking: Any) -> tuple:
    """The validated settings every linear solver takes, for checked labels ``y``: ``(C,
    box, tol, max_iter, rng, shrinking)`` with ``box = C sample_weight``."""
    C = check_C(C, allow_none=False)
    sw = check_sample_weight(sample_weight, y)
    box = np.full(y.shape[0], C) if sw is None else C * sw
    tol = check_positive(tol, "tol")
    max_iter = check_max_iter(max_iter, default=DCD_MAX_ITER)
    return C, box, tol, max_iter, seed_state(random_state), check_bool(shrinking, "shrinking")


def dcd(
    X: Any,
    y: Any,
    C: float = 1.0,
    *,
    loss: str = "squared_hinge",
    intercept_scaling: float | None = 1.0,
    sample_weight: Any = None,
    tol: float = DCD_TOL,
    max_iter: int | None = None,
    random_state: Any = 0,
    shrinking: bool = True,
    solver: str = "auto",
) -> LiblinearSolution:
    """LIBLINEAR's L2-regularised linear SVM by dual coordinate descent (module docstring).

    Parameters
    ----------
    X : (n, d) array or scipy.sparse matrix
        Dense rows are read as a C-contiguous float64 array, sparse ones as CSR (never
        densified). Not modified.
    y : (n,) array of -1/+1
    C : float > 0
    loss : {"squared_hinge", "hinge"}
        LIBLINEAR's ``-s 1`` and ``-s 3`` (``LinearSVC``'s ``loss``).
    intercept_scaling : float > 0 or None
        The value ``s`` of the appended constant column (``b = s v``, ``v`` regularised);
        None fits no intercept.
    sample_weight : (n,) array of positive numbers, optional
        ``C_i = C sample_weight_i``.
    tol : float > 0
        The relative duality gap of the float64 certificate to reach (default
        ``DCD_TOL = 1e-3``; 1e-6 for interior-point agreement).
    max_iter : int, optional
        Cap on the passes over the data (default :data:`DCD_MAX_ITER`); reaching it returns
        ``status="max_iter"`` with a :class:`~maxmargin.exceptions.ConvergenceWarning`.
    random_state : int >= 0 or numpy.random.Generator
        Seeds the order of the samples in each pass: the same value gives the same bits.
    shrinking : bool
        Set aside samples that stay at a bound (LIBLINEAR's ``PGmax``/``PGmin`` rule).
    solver : {"auto", "dual", "primal"}
        ``"dual"``: the coordinate descent; ``"primal"`` (squared hinge only): the finite
        Newton method (:func:`primal_newton`; ``max_iter`` caps its steps); ``"auto"``: the
        primal for the squared hinge when ``n > d`` (as ``LinearSVC(dual="auto")``), else
        the dual, and the primal when the dual's passes end uncertified. ``method`` says
        which ran: ``"dcd+finish/hinge"`` when the hinge's passes were handed to the exact
        active-set finish (:func:`dual_solve`), ``"dcd+smoothed/hinge"`` when the smoothed
        primal path was (:func:`smoothed_finish`), ``"dcd+newton/squared_hinge"`` when the
        primal finished the squared hinge (``iterations`` then counts both).

    Returns
    -------
    LiblinearSolution
        ``w``, ``b``, ``alpha``, ``status`` (``"optimal"`` when the certificate's relative gap
        is ``<= tol``, else ``"max_iter"``), ``iterations`` (passes) and ``certificate``.
    """
    start = time.perf_counter()
    check_choice(loss, "loss", LIBLINEAR_LOSSES)
    check_choice(solver, "solver", DCD_SOLVERS)
    if solver == "primal" and loss == "hinge":
        raise ValueError("`solver`: 'primal' takes loss='squared_hinge' only; got "
                         "loss='hinge'.")
    s = 0.0 if intercept_scaling is None else check_positive(intercept_scaling,
                                                             "intercept_scaling")
    X, y, C, box, tol, max_iter, rng, shrinking = checked_arguments(
        X, y, C, sample_weight, tol, max_iter, random_state, shrinking)
    n, d = X.shape
    squared = loss == "squared_hinge"
    primal = solver == "primal" or (solver == "auto" and squared and n > d)

    def judge(w: np.ndarray, alpha: np.ndarray) -> Certificate:
        """:func:`certify_liblinear` of ``w~`` (bias weight last) and its ``alpha``."""
        return certify_liblinear(w if intercept_scaling is not None else w[:d], X, y, box,
                                 loss=loss, penalty="l2", alpha=alpha, margin_fits=False,
                                 intercept_scaling=intercept_scaling)

    if primal:
        w, alpha, passes, trace = primal_newton(X, y, box, s, tol, max_iter)
        cert, method = judge(w, alpha), "newton"
    else:
        w, alpha, passes, trace, cert, method = dual_solve(X, y, box, squared, s, rng,
                                                           shrinking, tol, max_iter, judge)
        cert = judge(w, alpha) if cert is None else cert
        if solver == "auto" and squared and not gap_met(cert, tol):
            # the passes stalled (rows of very different scales: C max ||x||^2 large): the
            # primal Newton method from the start, kept when certified
            w_n, alpha_n, steps, trace_n = primal_newton(X, y, box, s, tol, max_iter)
            cert_n = judge(w_n, alpha_n)
            if gap_met(cert_n, tol):
                w, alpha, cert, method, primal = w_n, alpha_n, cert_n, "dcd+newton", True
                trace += [(passes + k, eps, gap) for k, eps, gap in trace_n]
                passes += steps
    w_tilde = w if intercept_scaling is not None else w[:d].copy()
    what = "Newton steps" if primal else "passes"
    status, message = finish_status(
        gap_met(cert, tol),
        f"dcd: {passes} {what} (max_iter={max_iter}) left the certified relative gap at "
        f"{cert.gap:.3g} > tol={tol:g}")
    b = 0.0 if intercept_scaling is None else s * float(w[d])
    return LiblinearSolution(
        w=w[:d].copy(), b=b, w_tilde=w_tilde, alpha=alpha,
        primal_objective=cert.primal_objective, dual_objective=cert.dual_objective,
        status=status, iterations=passes,
        method=f"{method}/{loss}",
        certificate=cert, loss=loss,
        penalty="l2", intercept_scaling=intercept_scaling, C=C, tol=tol,
        message=join_messages(message, cert.summary()), runtime=time.perf_counter() - start,
        history=history_of(("iterations", "eps", "gap"), trace),
    )  # fmt: skip


def dual_solve(X: Any, y: np.ndarray, box: np.ndarray, squared: bool, s: float, rng: np.ndarray,
               shrinking: bool, tol: float, max_iter: int,
               judge: Callable[[np.ndarray, np.ndarray], Certificate]) -> tuple:
    """The dual coordinate descent of :func:`dcd` (module docstring): ``(w~, alpha, passes,
    trace, certificate, method)``. For the hinge, at each check of the gap that does not meet
    ``tol``, ``alpha`` is handed to the exact finish (:func:`exact_finish`) when
    :class:`~.finish.Handover` says it is due; its answer is kept (with ``judge``'s
    certificate; ``eps = 0`` in the trace) only when that certificate meets ``tol``, else the
    passes go on. Once, where the passes crawl (:data:`DCD_SMOOTH_GAP`), the smoothed path's
    answer goes to the finish first (:func:`smoothed_finish`). The certificate is None when
    no finish was kept; ``method`` is ``"dcd"``, ``"dcd+finish"`` or ``"dcd+smoothed"``."""
    run = Coordinates.start(X, y, box, squared, s, rng, shrinking)
    alpha, w = run.alpha, run.w
    handover = None if squared else Handover(X)
    smooth = handover is not None and path_applies(X)
    eps, passes, check_at = DCD_PG_TOL, 0, DCD_FIRST_CHECK
    trace: list[tuple[int, float, float]] = []
    while True:
        done, code = run.passes(eps, min(check_at, max_iter) - passes)
        passes += done
        gap = duality_gap(X, y, alpha, w, s, box, squared)
        trace.append((passes, eps, gap))
        if gap <= tol or passes >= max_iter:
            break
        if handover is not None:
            finished, how = None, "dcd+finish"
            if smooth and passes >= DCD_SMOOTH_AFTER and gap > DCD_SMOOTH_GAP:
                smooth, how = False, "dcd+smoothed"
                finished = smoothed_finish(X, y, box, s, tol, run, judge)
            if finished is None:
                before = trace[-2][2] if len(trace) > 1 else math.inf
                finished, how = exact_finish(X, y, alpha, box, s, tol, handover,
                                             (run.visits, gap, before), judge), "dcd+finish"
            if finished is not None:
                w_f, alpha_f, cert = finished
                trace.append((passes, 0.0, duality_gap(X, y, alpha_f, w_f, s, box, False)))
                return w_f, alpha_f, passes, trace, cert, how
        if code == CONVERGED:  # the PG rule is met but not the gap: a tighter rule
            eps /= DCD_PG_SHRINK
        else:  # the passes between checks ran out: check half as often
            check_at = 2 * passes
    return w, alpha, passes, trace, None, "dcd"


def smoothed_finish(X: Any, y: np.ndarray, box: np.ndarray, s: float, tol: float,
                    run: Coordinates,
                    judge: Callable[[np.ndarray, np.ndarray], Certificate]) -> tuple | None:
    """The smoothed path handed to the exact finish (:func:`~.smoothed.path_finish`):
    ``(w~, alpha, certificate)`` when ``judge``'s certificate meets ``tol``. Else None, and
    the passes go on from the path's ``alpha`` when its dual objective is the higher
    (``C ||x||^2`` beyond float64: neither)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _smoothed_finish(X, y, box, s, tol, run, judge)


def _smoothed_finish(X: Any, y: np.ndarray, box: np.ndarray, s: float, tol: float,
                     run: Coordinates,
                     judge: Callable[[np.ndarray, np.ndarray], Certificate]) -> tuple | None:
    """The body of :func:`smoothed_finish`."""
    alpha, finished, _ = path_finish(X, y, box, tol, s)
    if alpha is None:
        return None
    if finished is not None:
        w = dual_weights(X, y, finished, s)
        cert = judge(w, finished)
        if gap_met(cert, tol):
            return w, finished, cert
    path_w = dual_weights(X, y, alpha, s)
    if (float(alpha.sum()) - 0.5 * float(path_w @ path_w)
            > float(run.alpha.sum()) - 0.5 * float(run.w @ run.w)):
        run.restart(alpha)
    return None


def exact_finish(X: Any, y: np.ndarray, alpha: np.ndarray, box: np.ndarray, s: float,
                 tol: float, handover: Handover, progress: tuple[float, float, float],
                 judge: Callable[[np.ndarray, np.ndarray], Certificate]) -> tuple | None:
    """The hinge's active-set finish (:func:`~.finish.feature_finish`, LIBLINEAR's problem on
    the rows ``(x_i, s)``) from ``alpha`` after passes that visited ``visits`` samples and
    brought the gap from ``before`` to ``gap`` (``progress = (visits, gap, before)``), when
    ``handover`` says it is due: ``(w~, alpha, certificate)`` when ``judge``'s certificate
    meets ``tol``, else None (``alpha`` is not modified)."""
    free = int(np.count_nonzero((alpha > 0.0) & (alpha < box)))
    budget = handover.budget(free, *progress, tol)
    if budget is None:
        return None
    finished = feature_finish(X, y, alpha, box, DCD_FINISH_KKT * tol, budget, scaling=s)
    if finished is None:
        return None
    w = dual_weights(X, y, finished, s)
    cert = judge(w, finished)
    return (w, finished, cert) if gap_met(cert, tol) else None
