"""The :class:`~maxmargin.results.SVMSolution` of a run: ``b`` (LIBSVM's ``calculate_rho``),
the objectives in float64, the status from the float64 certificate, the message and history.

``b`` is the mean of ``-y_t G_t`` over the free alphas when there are any, else the midpoint of
the KKT interval (:func:`~maxmargin.results.recover_intercept`), from ``g = K (alpha o y)`` in
float64; ``primal_objective = 1/2 ||w||^2 + sum_t C_t max(0, 1 - y_t (g_t + b))``, and for
the hard margin the certificate's ``||w||^2 / (2 mu^2)``, the value of the feasible point
``w / mu`` (``mu`` the largest functional margin), an upper bound of the optimum.
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np

import maxmargin.exceptions as exceptions
from maxmargin.algorithms._kernel_cache import S_HITS, S_MISSES, n_slots_for
from maxmargin.algorithms.smo.loops import INFEASIBLE, MAX_ITER, record_final
from maxmargin.algorithms.smo.solver import Solver
from maxmargin.algorithms.smo.summary import Summary
from maxmargin.certificate import (
    Certificate,
    certify_infeasible,
    infeasible_message,
    unresolved_status,
    within_resolution,
)
from maxmargin.kernels.formulas import KIND_LINEAR
from maxmargin.results import (
    SVMSolution,
    adopt_svm_solution,
    infeasible_svm,
    recover_intercept,
    uncentred_intercept,
)

__all__ = ["make_result", "status_and_message", "KAPPA_HINT"]

#: Above this ``C max_i K_ii`` a run that reaches ``max_iter`` is told to scale the features
#: or lower C (SMO's iteration count grows about linearly with it on non-separable data).
KAPPA_HINT = 1e3


def make_result(
    solver: Solver, outcome: int, g: np.ndarray, cert: Certificate, start: float, precision: str,
    summary: Summary | None = None, own_rows: bool = False,
) -> SVMSolution:
    """The run's :class:`SVMSolution` (module docstring); ``start`` is the run's
    ``time.perf_counter()`` at its start (for ``runtime`` only); ``summary``: ``b`` and the
    objectives already computed from this ``g`` (:mod:`.summary`, the same bits);
    ``own_rows``: the problem's data are the caller's fresh copy, which the solution keeps
    (read-only) instead of copying it, with the solver's ``alpha`` and the history (the labels
    and weights, the caller's, are copied)."""
    st, p, C, tol = solver.st, solver.problem, solver.box, solver.options.tol
    X, y, alpha, cache = p.X, p.y, st.alpha, solver.cache
    w = X.T @ (alpha * y) if p.kernel.kind == KIND_LINEAR else None
    shift = 0.0
    if p.X_user is not None and p.X_user is not X:  # centred for the solver (linear): judged
        # there, without the offset's cancellation (the same m - M, objectives and margin: g
        # shifts by <w, mean>), answered in the user's units: b - <w, mean>
        shift = float(w @ p.X_user.mean(axis=0))
        X = p.X_user
    solver_gap = float(record_final(st, cache))
    h = int(st.scalars["n_hist"])
    history = {
        "iteration": st.h_iter[:h].copy(),
        "violation": st.h_viol[:h].copy(),
        "dual_objective": st.h_dual[:h].copy(),
    }
    if summary is not None and summary.g is g and summary.certificate is cert:
        b, interval, w2, slack = summary.b, summary.interval, summary.w2, summary.slack
        C_max = summary.box_max
    else:
        b, interval = recover_intercept(alpha, y, g, C)
        with np.errstate(over="ignore", invalid="ignore"):  # C ~ 1e300: inf, as the certificate
            w2 = max(float((alpha * y) @ g), 0.0)
            slack = 0.0 if C is None else float(C @ np.maximum(0.0, 1.0 - y * (g + b)))
        C_max = math.inf if C is None else float(np.max(C))
    if shift:
        b, interval, cert = uncentred_intercept(shift, b, interval, cert)
    iterations = int(st.scalars["iteration"])
    hits, misses = int(cache.state[S_HITS]), int(cache.state[S_MISSES])
    dtype = "float32" if cache.data.dtype == np.float32 else "float64"
    full = n_slots_for(alpha.shape[0], solver.options.cache_size, cache.data.dtype.itemsize)
    stats = (
        f"{iterations} iterations ({' then '.join(solver.phases)} kernel cache), solver's "
        f"m - M = {solver_gap:.3g}, last cache {full} columns of {dtype} at full length, "
        f"more as the active set shrinks ({hits} hits, {misses} misses)"
        f"{solver.exact_finish_note}; {cert.summary()}"
    )
    kappa = C_max * p.radius2
    status, message = status_and_message(outcome, cert, tol, precision, iterations,
                                          solver.hull_eps, dtype, stats, kappa)
    evidence = (within_resolution(alpha, X, y, p.kernel, solver.hull_eps)
                if p.C is None and status == "optimal" else None)
    if evidence is not None:  # a certified margin below the resolution: infeasible there
        status, message = "infeasible", (
            f"{infeasible_message(evidence, solver.hull_eps, ' by a certified margin')}. "
            f"{stats}.")
    if status == "infeasible":  # the one infeasible shape, with its float64 evidence
        evidence = evidence or certify_infeasible(alpha, X, y, p.kernel)
        return infeasible_svm(X, y, p.kernel, f"smo/{solver.options.working_set}", message,
                              evidence, iterations=iterations, history=history,
                              runtime=time.perf_counter() - start)
    sw = p.sample_weight
    if own_rows:  # adopted below: the caller's labels and weights stay theirs, writeable
        y, sw = y.copy(), None if sw is None else sw.copy()
    return (adopt_svm_solution if own_rows else SVMSolution)(
        alpha=alpha, b=b, w=w, dual_objective=cert.dual_objective,
        primal_objective=cert.primal_objective if p.C is None else 0.5 * w2 + slack,
        status=status, iterations=iterations,
        method=f"smo/{solver.options.working_set}", history=history, X_train=X, y_train=y,
        kernel=p.kernel, C=p.C, b_interval=interval, message=message, sample_weight=sw,
        runtime=time.perf_counter() - start, certificate=cert, tol=tol,
    )


def status_and_message(
    outcome: int, cert: Certificate, tol: float, precision: str, iterations: int,
    hull_eps: float, dtype: str, stats: str, kappa: float = math.nan,
    conditioning: str = "C max K(x, x) = {kappa:.3g}: SMO's iterations grow with it; scale the "
    "features (e.g. to unit variance) or lower C",
) -> tuple[str, str]:
    """Status and message of a finished run; warns :class:`ConvergenceWarning` unless it is
    ``"optimal"`` or ``"infeasible"``, with the likely cause and the remedy (``kappa = C max_i
    K_ii``, the soft margin's conditioning, told by ``conditioning`` above ``KAPPA_HINT``)."""
    if outcome == INFEASIBLE:
        return "infeasible", (
            "hard margin: the classes' convex hulls (in feature space) are within "
            f"{hull_eps:g} R of each other (R = max ||phi(x)||): not separable at this resolution "
            f"(no geometric margin above ~{hull_eps / 2:.2g} R, which the {dtype} kernel cache "
            f"resolves); use a finite C. {stats}."
        )
    if cert.unresolved(tol):  # then it cannot meet tol
        return unresolved_status("smo", cert, tol, stats)
    if outcome == MAX_ITER and not cert.meets(tol):
        cause = (conditioning.format(kappa=kappa) + ", or raise max_iter"
                 if math.isfinite(kappa) and kappa > KAPPA_HINT else
                 "raise max_iter, or use precision='double' if float32 rounding stalls it")
        warnings.warn(
            f"smo stopped at max_iter={iterations} with m - M = {cert.kkt_violation:.3g} "
            f">= tol = {tol:g} (float64); {cause}.",
            exceptions.ConvergenceWarning,
            stacklevel=4,
        )
        return "max_iter", f"reached max_iter before m - M < tol = {tol:g} ({cause}); {stats}."
    if cert.meets(tol):
        return "optimal", f"m - M < tol = {tol:g} in float64; {stats}."
    if precision == "single":
        advice = ("the float32 kernel cache's rounding hides violations of this size: use "
                  "precision='auto' (the default) or 'double', or scale the features")
    else:
        advice = ("float64 continuations did not certify it: scale the features, lower C, or "
                  "use precision='double' with a larger max_iter")
    warnings.warn(
        f"smo: the answer is not certified: float64 m - M = {cert.kkt_violation:.3g} >= tol = "
        f"{tol:g} (feasibility {cert.feasibility:.3g}); {advice}.",
        exceptions.ConvergenceWarning,
        stacklevel=4,
    )
    return "inaccurate", f"not certified ({advice}); {stats}."
