r"""The ν-SVM from the nearest points of the classes' reduced hulls (``gilbert_svm(nu=...)``).

Schölkopf's ν-SVC (:mod:`maxmargin.certificate_nu`, ``l`` points) has the dual
``min 1/2 v^T K v`` over ``0 <= alpha_i <= 1/l``, ``y . alpha = 0``, ``sum alpha >= nu``
(``v = alpha * y``). At an optimum with ``rho > 0`` each class carries ``nu / 2`` of the mass
(Crisp & Burges 2000; Bennett & Bredensteiner 2000), so with

.. math::

    \lambda_i = \frac{2 \alpha_i}{\nu}, \qquad \mu = \frac{2}{\nu l}, \qquad
    \sum_{y_i = +1} \lambda_i = \sum_{y_i = -1} \lambda_i = 1, \; 0 \le \lambda_i \le \mu,

the dual is ``(nu / 2)^2`` times the nearest-points problem of ``RCH(mu)`` of the positives and
of the negatives: ``z = p - q = sum_i y_i lam_i phi(x_i)``, ``w = (nu / 2) z``,
``alpha = (nu / 2) lam``. ``nu <= nu_max = 2 * min(l_+, l_-) / l`` is ``mu >= 1 / min(l_+,
l_-)`` (the reduced hulls are not empty); ``nu <= 2 / l`` is ``mu >= 1``, the convex hulls.

Given ``alpha``, the best ``b`` and ``rho`` are order statistics of each class's margins
(:func:`~maxmargin.certificate_nu.nu_offsets`, LIBSVM's ``calculate_rho``): the judge's, as for
``nu_smo``, so ``f(x) = sum_i alpha_i y_i K(x_i, x) + b`` is ``nu_smo``'s decision function.
The ν-SVC gap is ``(nu / 2)^2`` times the hulls' Frank-Wolfe gap: with ``m_i = y_i <w,
phi(x_i)>``, ``min_{b, rho} (-nu rho + sum_i (rho - m_i - y_i b)_+ / l) = -(nu / 2)
(min_{RCH(P)} m + min_{RCH(Q)} m)`` (the sorted partial sum), so ``P - D = (nu / 2)^2 (||z||^2
- min_{RCH(P) - RCH(Q)} <z, .>)``, about twice the relative gap the loops stop on.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

import maxmargin.exceptions as exceptions
from maxmargin.algorithms._meet_lp import meeting_weights
from maxmargin.algorithms._nearest_point import (
    INTERSECT,
    MAX_ITER,
    STALLED,
    NearestPointRun,
    centred,
    run_nearest_point,
    status_of,
)
from maxmargin.certificate import roundoff_gamma
from maxmargin.certificate_nu import (
    below_resolution,
    certify_nu_svm,
    certify_one_class,
    hull_weight,
    rho_unresolved,
)
from maxmargin.kernels import Kernel
from maxmargin.kernels.formulas import KIND_LINEAR
from maxmargin.results import join_messages
from maxmargin.tolerances import HULL_CERT_FACTOR, HULLS_MEET_ATOL, WOLFE_TOL

if TYPE_CHECKING:  # the result container lives beside the oracles (imported when solving)
    from maxmargin.formulations.nu import NuSolution

__all__ = ["nu_mu", "nu_svm_by_hulls", "nu_svm_from_run", "nu_zero_rtol", "wolfe_nu_finish"]

#: :func:`wolfe_nu_finish` runs on at most this many points (its corral holds a weight vector
#: of length ``l`` per vertex).
FINISH_MAX_POINTS = 5000
#: Major cycles of :func:`wolfe_nu_finish`, whichever solver it finishes.
WOLFE_FINISH_ITER = 10_000
#: MDM's steps per point when it finishes a Wolfe run stalled by round-off (at most MDM's own
#: cap): from Wolfe's weights MDM needs tens to hundreds of steps per point, or reaches the
#: certificate's resolution no better than Wolfe did.
POLISH_STEPS_PER_POINT = 1000


def nu_mu(nu: float, l: int) -> float:
    """The reduced hulls' bound ``mu = 2 / (nu l)`` of the ν-SVC with ``l`` points."""
    return 2.0 / (nu * l)


def nu_zero_rtol(l: int, sets: int = 2) -> float:
    """The loops' zero tolerance on ``||z||`` over ``R`` for the ν-SVC of ``l`` points (``sets =
    2``; the one-class SVM: 1): the judge's resolution :func:`~maxmargin.certificate_nu.w_floor`
    in the units of ``z = (2 / nu) w`` (one-class: ``z = w``), ``max(HULLS_MEET_ATOL, sets
    sqrt(gamma_N))`` with ``N = l + 8`` (:func:`~maxmargin.certificate.roundoff_gamma`; the
    judge's ``N`` counts the support too, so its floor is never below this): a run stopped
    there is ``w = 0`` to the judge as well."""
    return max(HULLS_MEET_ATOL, sets * math.sqrt(roundoff_gamma(terms=l)))


def nu_svm_from_run(run: NearestPointRun, X: Any, y: np.ndarray | None, kernel: Kernel,
                    nu: float, method: str, tol: float) -> NuSolution:
    """The ν-SVC answer (a :class:`~maxmargin.formulations.nu.NuSolution`, as ``nu_smo``'s) from
    the nearest points of ``RCH(2 / (nu l))`` (module docstring), judged by
    :func:`~maxmargin.certificate_nu.certify_nu_svm` in the user's units (``X`` the user's data);
    ``y`` None: the one-class SVM's (as ``one_class_smo``'s) from the nearest point of ``RCH(1 /
    (nu l))`` to the origin, ``alpha = lam``, judged by
    :func:`~maxmargin.certificate_nu.certify_one_class`.

    ``alpha = (nu / 2) lam``; ``b``, ``rho`` the judge's best offsets; ``C = 1 / (rho l)``.
    ``||w||`` below the judge's resolution (:func:`~maxmargin.certificate_nu.below_resolution`;
    the reduced hulls meet): ``w = 0``, ``rho = b = 0``, ``C`` NaN and ``hulls_meet``, as
    ``nu_smo`` reports it. ``"optimal"`` exactly when the certificate is feasible with relative
    gap ``<= HULL_CERT_FACTOR * tol`` (or ``w = 0`` at its resolution), however the loop
    stopped; else ``"inaccurate"`` or ``"max_iter"`` (the caller warns).
    """
    from maxmargin.formulations.nu import NuSolution

    l, one_class = X.shape[0], y is None
    hull = hull_weight(nu, one_class)
    alpha = hull * run.lam
    cert = (certify_one_class(alpha, X, nu, kernel) if one_class
            else certify_nu_svm(alpha, X, y, nu, kernel))
    meet = below_resolution(cert, alpha, hull)
    status = status_of(run, method, warn=False)
    ok = meet or cert.meets(math.inf, HULL_CERT_FACTOR * tol)
    notes = [run.message]
    if meet:
        notes.append("||w|| is below the certificate's float64 resolution (the reduced "
                     + ("hull holds the origin): w = 0, rho = 0" if one_class else
                        "hulls meet): w = 0, rho = 0, no equivalent C"))
    if ok:  # the certificate, not the loop's own stop, decides
        if status != "optimal":
            notes.append("the float64 certificate confirms the answer as it is")
        status = "optimal"
    elif status == "optimal":
        status = "inaccurate"
    rho, b = (0.0, 0.0) if meet else (cert.margin, cert.b)
    w = None
    if kernel.kind == KIND_LINEAR:
        v = alpha if one_class else alpha * y
        rows = X - X.mean(axis=0) if isinstance(X, np.ndarray) and not one_class else X
        w = np.zeros(X.shape[1]) if meet else np.asarray(rows.T @ v).ravel()
    C = 1.0 / (rho * l) if rho > 0.0 and not one_class else math.nan
    return NuSolution(
        alpha, b, rho, w, cert.primal_objective, cert.dual_objective, status, run.iterations,
        method, nu, "one_class" if one_class else "nu_svc", C=C, hulls_meet=bool(meet),
        X_train=X, y_train=y, kernel=kernel, message=join_messages(*notes, cert.summary()),
        runtime=run.runtime, certificate=cert)


def _not_certified(method: str, one_class: bool, status: str, summary: str) -> None:
    warnings.warn(f"{method}: the {'one-class SVM' if one_class else 'nu-SVC'} answer is not "
                  f"certified ({status}): {summary}", exceptions.ConvergenceWarning, stacklevel=4)


def nu_svm_by_hulls(loop: Any, method: str, X: Any, y: np.ndarray | None, kernel: Kernel,
                    nu: float, tol: float, *, max_iter: int, every: int, gram: bool,
                    loop_tol: float | None = None, finish: bool = False,
                    fine_zero: bool = False) -> NuSolution:
    """The ν-SVC by a nearest-point ``loop`` on ``RCH(2 / (nu l))`` of the classes (the data
    centred where that changes nothing: :func:`~maxmargin.algorithms._nearest_point.centred`),
    stopped at the relative gap ``loop_tol`` (default ``tol``) and judged at ``tol`` by
    :func:`nu_svm_from_run` in the user's units. ``y`` None: the one-class SVM, the nearest
    point of ``RCH(1 / (nu l))`` of the points to the origin (not centred: the origin is part
    of the problem).

    A Gilbert or MDM run stopped at the loops' zero tolerance (:data:`INTERSECT`: ``||z||``
    within ``10 sqrt(eps) R``, their resolution through kernel columns) that the judge does not
    confirm as ``w = 0`` (its resolution is finer), or stopped at ``max_iter`` with no positive
    lower bound (nothing shows the hulls apart: they may meet, where the relative gap of MDM's
    and Gilbert's steps does not shrink), or with ``finish`` stopped at ``max_iter`` at all
    (hulls that nearly meet slow those steps down too), is finished by Wolfe's method
    (:func:`wolfe_nu_finish`, ``fine_zero``: its zero tolerance the judge's, below the kernel
    columns' floor), whose exact affine steps reach ``w = 0`` where the hulls meet: kept when
    certified, said in the message; so is a Wolfe run stopped at that floor. A Wolfe run
    stalled by round-off short of the certificate (its affine minimisations on nearly dependent
    atoms) is finished by MDM's pairwise steps from its weights (at most
    :data:`POLISH_STEPS_PER_POINT` per point). An answer not certified warns
    (:class:`~maxmargin.exceptions.ConvergenceWarning`, pointing at the public function's
    caller)."""
    l = X.shape[0]
    one_class = y is None
    Xc = X if one_class else centred(X, kernel)[0]
    hulls = {"y": np.ones(l) if one_class else y, "kernel": kernel, "gram": gram,
             "mu": 1.0 / (nu * l) if one_class else nu_mu(nu, l),
             "zero_rtol": nu_zero_rtol(l, 1 if one_class else 2)}
    run = run_nearest_point(loop, Xc, tol=tol if loop_tol is None else loop_tol,
                            max_iter=max_iter, every=every, zero_floor=not fine_zero, **hulls)
    may_meet = run.code == INTERSECT or (run.code == MAX_ITER and not run.lower > 0.0)
    if method == "wolfe":  # stopped at the loops' floor: Wolfe again, below it
        finish = run.code == INTERSECT and not fine_zero
    else:
        finish = may_meet or (finish and run.code == MAX_ITER)
    answer = nu_svm_from_run(run, X, y, kernel, nu, method, tol)
    if answer.status == "optimal":
        return answer

    def mdm_from(lam: np.ndarray) -> tuple[NearestPointRun, NuSolution]:
        """MDM's pairwise steps from the weights ``lam`` (at most POLISH_STEPS_PER_POINT a
        point), judged."""
        from maxmargin.algorithms.mdm import MDM_MAX_ITER, mdm_loop

        steps = min(POLISH_STEPS_PER_POINT * l, MDM_MAX_ITER)
        polish = run_nearest_point(mdm_loop, Xc, tol=tol, max_iter=steps, every=steps,
                                   warm=lam, **hulls)
        return polish, nu_svm_from_run(polish, X, y, kernel, nu, method, tol)

    if method == "wolfe" and run.code == STALLED:
        polish, polished = mdm_from(run.lam)
        if polished.status == "optimal":
            note = (f"wolfe: {run.message}, which the certificate does not confirm; finished "
                    f"by MDM's pairwise steps from its weights ({polish.iterations} steps)")
            return dataclasses.replace(polished, message=join_messages(note, polished.message))
    wolfe = wolfe_nu_finish(X, y, kernel, nu, tol) if finish else None
    if wolfe is not None and wolfe.status == "optimal":
        why = ("at its zero tolerance" if run.code == INTERSECT
               else "at max_iter with nothing showing the hulls apart" if may_meet
               else "at max_iter")
        note = (f"{method} stopped {why} ({run.message}), which the certificate does not "
                "confirm; finished by Wolfe's method on the reduced hulls")
        return dataclasses.replace(wolfe, method=method,
                                   message=join_messages(note, wolfe.message))
    exact = (None if wolfe is not None
             else _meeting_answer(run, answer, Xc, hulls["y"], hulls["mu"], X, y, kernel, nu,
                                  tol, mdm_from))
    if exact is not None:
        return exact
    _not_certified(method, one_class, answer.status, answer.certificate.summary())
    return answer


def _meeting_answer(run: NearestPointRun, answer: NuSolution, Xc: Any, signs: np.ndarray,
                    mu: float, X: Any, y: np.ndarray | None, kernel: Kernel, nu: float, tol: float,
                    mdm_from: Callable[[np.ndarray], tuple[NearestPointRun, NuSolution]]
                    ) -> NuSolution | None:
    """Where ``answer``'s ``rho`` is below the certificate's resolution (the hulls nearly
    meet), the weights of :func:`~maxmargin.algorithms._meet_lp.meeting_weights` on ``RCH(mu)``
    of the loop's points ``Xc`` and ``signs`` (centred where that changes nothing, so that an
    offset does not swamp the LP's tolerances) judged by :func:`nu_svm_from_run`, or where the
    certificate does not put their ``||w||`` at 0 (the LP's vertex minimises the L1 norm of
    ``z``, not its length) ``mdm_from`` them: the answer when the certificate puts its ``||w||``
    at 0, else None."""
    one_class = y is None
    if not rho_unresolved(answer.certificate, np.asarray(answer.alpha),
                          hull_weight(nu, one_class)):
        return None
    lam = meeting_weights(Xc, signs, kernel, mu)
    if lam is None:
        return None
    note = (f"{answer.method} stopped short of the certificate's resolution ({run.message}); "
            "the weights where the reduced hulls meet found by a linear programme")
    exact = nu_svm_from_run(dataclasses.replace(run, lam=lam, message=note), X, y, kernel, nu,
                            answer.method, tol)
    if not (exact.hulls_meet and exact.status == "optimal"):
        polish, exact = mdm_from(lam)
        exact = dataclasses.replace(exact, message=join_messages(
            f"{note}, then MDM's pairwise steps from them ({polish.iterations} steps)",
            exact.message))
    return exact if exact.hulls_meet and exact.status == "optimal" else None


def wolfe_nu_finish(X: Any, y: np.ndarray | None, kernel: Kernel, nu: float,
                    tol: float) -> NuSolution | None:
    """The ν-SVC by Wolfe's method on the reduced hulls (``gilbert_svm(nu=...,
    method="wolfe")``, at most :data:`WOLFE_FINISH_ITER` major cycles), for a run whose
    ``rho`` is below the certificate's resolution
    (:func:`~maxmargin.certificate_nu.rho_unresolved`: the hulls nearly meet, where SMO's steps
    shrink with ``rho``). Wolfe's affine minimisations reach ``||w||`` below the judge's
    resolution (hulls that meet: ``w = 0``) in a few major cycles. Returns its answer, judged
    by the ν certificate (:func:`nu_svm_from_run`), its warnings not passed on (the caller
    reports its own); None for sparse data or more than :data:`FINISH_MAX_POINTS` points.
    ``y`` None: the one-class SVM's."""
    from maxmargin.algorithms.wolfe import wolfe_loop

    if X.shape[0] > FINISH_MAX_POINTS or not isinstance(X, np.ndarray):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", exceptions.ConvergenceWarning)
        return nu_svm_by_hulls(wolfe_loop, "wolfe", X, y, kernel, nu, tol,
                               max_iter=WOLFE_FINISH_ITER, every=WOLFE_FINISH_ITER, gram=False,
                               loop_tol=WOLFE_TOL, fine_zero=True)
