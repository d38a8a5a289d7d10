"""The ν problems in the verification suite: ``nu_smo`` and ``one_class_smo`` judged by the ν
certificates against the CVXPY oracle, and the ν theorems checked on actual answers.

A ν case (``Case.problem`` ``"nu_svc"`` or ``"one_class"``, :mod:`.case`) has the CVXPY oracle
``nu_svm_dual`` / ``one_class_dual`` as its reference (:class:`~.context.Context`). Answers are
:class:`~maxmargin.formulations.nu.NuSolution` in Schölkopf's scaling; decision values are
compared in units of the oracle's ``rho`` (the margin: LIBSVM's ``f / rho``, the equivalent
C-SVC's units, in which SMO's ``tol`` is stated).

===================  ==========================================================================
check                what it checks
===================  ==========================================================================
nu/oracle            the oracle meets its own float64 certificate, recomputed here (``m - M <
                     ORACLE_KKT``, gap <= ORACLE_GAP) and reports the offsets the judge gives
nu/primal            linear kernel: the primal oracle against the dual one (ORACLE preset)
nu_smo, ...          ``nu_smo`` / ``one_class_smo`` at tol 1e-3 (MEDIUM) and ``/tight`` 1e-6
                     (TIGHT): "optimal" only with the recomputed certificate below ``tol``; weak
                     duality both ways with the oracle; objective, decision values and
                     ``hulls_meet`` against the oracle's
nu/mdm, nu/wolfe     the nearest points of the reduced hulls (``gilbert_svm(nu=...)``,
                     ``one_class_hull``) by MDM and Wolfe at their default relative gap
                     ``tol``: "optimal" only with the certificate's gap <= ``HULL_CERT_FACTOR
                     tol``; against the oracle as ``/tight`` (TIGHT)
nu_property          Schölkopf et al. (2000): margin errors / l <= nu <= support vectors / l,
                     on the oracle's answer and on the tight solver's (:func:`nu_property`)
nu_c_equivalence     Chang & Lin (2001): with ``rho > 0`` the ν answer over ``rho`` is the C-SVC
                     answer at ``C = 1 / (rho l)`` (:func:`nu_c_equivalence`)
nu_refuses           ``nu > nu_max`` (one-class: ``> 1``) and ``nu <= 0`` raise a ValueError
                     naming the bound before any kernel evaluation (:func:`nu_refusal`)
nu_hulls_meet        reduced hulls that meet: every answer reports ``w = 0``, ``rho = 0``, no
                     equivalent C (:func:`hulls_meet_reported`)
one_class_centroid   one-class at ``nu = 1``: every ``alpha_i = 1 / l`` and ``f(x) = mean_i
                     K(x_i, x) - rho`` (:func:`one_class_centroid`)
===================  ==========================================================================
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from maxmargin.algorithms import gilbert_svm, nu_smo, one_class_hull, one_class_smo, smo
from maxmargin.algorithms.gilbert import NEAREST_POINT_METHODS
from maxmargin.certificate import (
    TINY,
    Certificate,
    certify_svm,
    kernel_width,
    objective_roundoff,
    roundoff_gamma,
    weak_duality,
)
from maxmargin.certificate_nu import (
    BOUND_ULPS,
    certify_nu_svm,
    certify_one_class,
    hull_weight,
    nu_max,
    project_nu,
    rho_unresolved,
    w_floor,
)
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.formulations import (
    nu_svm_dual,
    nu_svm_primal,
    one_class_dual,
    one_class_primal,
    svm_dual,
)
from maxmargin.formulations.nu import NuSolution
from maxmargin.kernels import CallableKernel, Kernel
from maxmargin.results import SVMSolution, recover_intercept
from maxmargin.tolerances import (
    HULL_CERT_FACTOR,
    MEDIUM,
    NU_C_TIGHT,
    ORACLE,
    ORACLE_GAP,
    ORACLE_KKT,
    TIGHT,
    Tolerances,
)
from maxmargin.verification.bounds import BoundCheck, _check
from maxmargin.verification.context import Context, Method, Outcome
from maxmargin.verification.crosscheck import CrossCheck, cross_check

__all__ = ["NU_METHODS", "certify", "certified_decision_bound", "compare_nu", "nu_property",
           "nu_c_equivalence", "with_kkt_interval", "g_roundoff", "nu_refusal",
           "hulls_meet_reported", "one_class_centroid"]

#: The relative round-off allowed where a check recomputes an exact identity.
IDENTITY_RTOL = 1e-9


def certify(sol: NuSolution, X: Any, y: np.ndarray, kernel: Kernel) -> Certificate:
    """The ν judge's certificate of ``sol.alpha``, recomputed from the data (not the
    producer's own)."""
    if sol.problem == "one_class":
        return certify_one_class(sol.alpha, X, sol.nu, kernel)
    return certify_nu_svm(sol.alpha, X, y, sol.nu, kernel)


def _resolution(sol: NuSolution, cert: Certificate) -> float:
    """``w_floor^2 / 2`` (:func:`~maxmargin.certificate_nu.w_floor`): the float64 resolution of
    the objectives ``-1/2 ||w||^2``."""
    hull = hull_weight(sol.nu, sol.problem == "one_class")
    return 0.5 * w_floor(np.asarray(sol.alpha), cert.radius, hull) ** 2


def g_roundoff(alpha: np.ndarray, kernel_max: float, width: int = 0) -> float:
    """How far two float64 evaluations of ``g = K v`` (summed in any order) may differ: twice
    the forward-error bound ``gamma_N sum(alpha) kernel_max`` (``gamma_N`` of
    :func:`~maxmargin.certificate.roundoff_gamma`, ``width`` the products in one kernel
    value)."""
    gamma = roundoff_gamma(alpha, width=width)
    return 2.0 * gamma * float(np.sum(np.abs(alpha))) * kernel_max


def _offset_reasons(sol: NuSolution, cert: Certificate) -> list[str]:
    """Whether the reported ``rho``, ``b``, ``C`` (and ``w = 0``) are the judge's: to
    :data:`IDENTITY_RTOL` of ``max(|rho|, |b|)`` plus twice the float64 forward-error bound
    of ``g = K v`` summed another way (:func:`g_roundoff`)."""
    if sol.hulls_meet:
        zero_w = sol.w is None or not np.any(sol.w)
        if sol.rho != 0.0 or sol.b != 0.0 or not math.isnan(sol.C) or not zero_w:
            return [f"reports hulls_meet but rho = {sol.rho:.6g}, b = {sol.b:.6g}, "
                    f"C = {sol.C:.6g} (w = 0, rho = b = 0 and no C expected)"]
        return []
    reasons = []
    X = sol.X_train
    roundoff = g_roundoff(np.asarray(sol.alpha), cert.radius**2,
                          0 if X is None else kernel_width(X))
    limit = IDENTITY_RTOL * max(abs(cert.margin), abs(cert.b)) + roundoff
    for name, mine, judged in (("rho", sol.rho, cert.margin), ("b", sol.b, cert.b)):
        if not abs(mine - judged) <= limit:
            reasons.append(f"reported {name} = {mine:.10g} != the judge's {judged:.10g}")
    if sol.problem == "nu_svc" and sol.rho > 0.0:
        C = 1.0 / (sol.rho * sol.alpha.shape[0])
        if not abs(sol.C - C) <= IDENTITY_RTOL * C:
            reasons.append(f"reported C = {sol.C:.10g} != 1 / (rho l) = {C:.10g}")
    return reasons


@dataclasses.dataclass
class NuComparison:
    """What :func:`compare_nu` measured, and what is wrong (``reasons``)."""

    certificate: Certificate
    objective_error: float = math.nan
    decision_error: float = math.nan
    reasons: list[str] = dataclasses.field(default_factory=list)


def compare_nu(candidate: NuSolution, oracle: NuSolution | None, X: Any, y: np.ndarray,
               kernel: Kernel, kkt: float, gap: float | None, preset: Tolerances | None
               ) -> NuComparison:
    """``candidate`` judged by its recomputed certificate and against ``oracle``.

    "optimal" must come with ``m - M < kkt`` (and ``gap <= gap``) and the judge's offsets;
    against a certified oracle (``preset`` given): weak duality both ways
    (:func:`~maxmargin.certificate.weak_duality`, round-off ``w_floor^2 / 2`` of each),
    ``(|D_c - D_o| - that round-off)_+ / max(|D_o|, that round-off) <= preset.objective``,
    ``max_i |f_c(x_i) - f_o(x_i)| / rho_o <= preset.decision`` and the same ``hulls_meet``.
    """
    cert = certify(candidate, X, y, kernel)
    out = NuComparison(certificate=cert)
    if candidate.status == "optimal":
        if not cert.meets(kkt, gap):
            limit = f"kkt < {kkt:g}" + ("" if gap is None else f", gap <= {gap:g}")
            out.reasons.append(f"labelled optimal but its {cert.summary()} misses {limit}")
        out.reasons += _offset_reasons(candidate, cert)
    if preset is None or oracle is None or oracle.status != "optimal" or candidate is oracle:
        return out
    co = certify(oracle, X, y, kernel)
    res = _resolution(candidate, cert) + _resolution(oracle, co)
    # differences within the objectives' float64 resolution are not errors (both answers of
    # reduced hulls that meet have D = 0 at that resolution)
    out.objective_error = max(abs(cert.dual_objective - co.dual_objective) - res, 0.0) / max(
        abs(co.dual_objective), res, TINY)
    if candidate.status != "optimal":
        return out
    out.reasons += [r.replace("the reference's", "the oracle's")
                    for r in weak_duality(cert, co, roundoff=res)]
    if out.objective_error > preset.objective:
        out.reasons.append(f"objective {out.objective_error:.3g} from the oracle's > "
                           f"{preset.objective:g}")
    if candidate.hulls_meet != oracle.hulls_meet:
        out.reasons.append(f"hulls_meet = {candidate.hulls_meet} where the oracle's is "
                           f"{oracle.hulls_meet}")
    elif not oracle.hulls_meet:
        diff = candidate.decision_function(X) - oracle.decision_function(X)
        rho = max(oracle.rho, TINY)
        out.decision_error = float(np.max(np.abs(diff))) / rho
        allowed = max(preset.decision, certified_decision_bound(cert, co, res) / rho)
        if out.decision_error > allowed:
            out.reasons.append(f"decision values {out.decision_error:.3g} rho from the "
                               f"oracle's > {allowed:.3g} rho (the larger of {preset.decision:g} "
                               "and the two certificates' bound)")
    return out


def certified_decision_bound(cert: Certificate, oracle: Certificate, roundoff: float) -> float:
    """How far two answers' decision values on the training points may lie apart, both
    certificates being right: ``2 R (sqrt(2 (P_c - D_o + r)) + sqrt(2 (P_o - D_o + r)))``.

    The primal is ``1/2 ||w||^2`` plus terms linear in the rest, so a feasible point has
    ``1/2 ||w - w*||^2 <= P - P* <= P - D_o`` (``P`` its certificate's primal value, never above
    the point's; ``r`` the objectives' round-off); ``|g(x_i) - g*(x_i)| <= ||w - w*|| R`` (``R``
    the certificates' radius, from the data's centre for the linear ν-SVC), and the offsets,
    order statistics of the margins, move by as much again."""
    def dist(c: Certificate) -> float:
        return math.sqrt(2.0 * max(c.primal_objective - oracle.dual_objective + roundoff, 0.0))

    return 2.0 * cert.radius * (dist(cert) + dist(oracle))


def _outcome(ctx: Context, sol: NuSolution, kkt: float, gap: float | None,
             preset: Tolerances | None, tolerances: str) -> Outcome:
    c = ctx.case
    cmp = compare_nu(sol, ctx.oracle, c.X, c.y, ctx.kernel, kkt, gap, preset)
    return Outcome(status=sol.status, oracle=ctx.oracle.method, tolerances=tolerances,
                   iterations=sol.iterations, runtime=sol.runtime, reasons=cmp.reasons,
                   objective_error=cmp.objective_error, kkt_max=cmp.certificate.kkt_violation,
                   duality_gap=cmp.certificate.gap)


def _run_solver(ctx: Context, tol: float) -> NuSolution:
    c = ctx.case
    if c.problem == "one_class":
        return one_class_smo(c.X, c.nu, kernel=ctx.kernel, tol=tol)
    return nu_smo(c.X, c.y, c.nu, kernel=ctx.kernel, tol=tol)


def _hull_solver(method: str) -> Callable[[Context], Outcome]:
    """``method`` on the reduced hulls at its default tol, judged at the gap its "optimal"
    promises."""
    tol = NEAREST_POINT_METHODS[method][1]

    def run(ctx: Context) -> Outcome:
        c = ctx.case
        sol = (one_class_hull(c.X, c.nu, kernel=ctx.kernel, method=method)
               if c.problem == "one_class"
               else gilbert_svm(c.X, c.y, nu=c.nu, kernel=ctx.kernel, method=method))
        gap = HULL_CERT_FACTOR * tol
        return _outcome(ctx, sol, math.inf, gap, TIGHT, f"gap<={gap:g}")

    return run


def _oracle_self(ctx: Context) -> Outcome:
    return _outcome(ctx, ctx.oracle, ORACLE_KKT, ORACLE_GAP, None, f"kkt<{ORACLE_KKT:g}")


def _primal(ctx: Context) -> Outcome:
    """The linear kernel's primal oracle (variables ``w``, ``b``, ``rho``, ``xi``) against the
    dual one."""
    c = ctx.case
    form = (one_class_primal(c.X, c.nu) if c.problem == "one_class"
            else nu_svm_primal(c.X, c.y, c.nu))
    return _outcome(ctx, form.solve(), ORACLE_KKT, ORACLE_GAP, ORACLE, ORACLE.name)


def _solver(tol: float, preset: Tolerances) -> Callable[[Context], Outcome]:
    def run(ctx: Context) -> Outcome:
        return _outcome(ctx, _run_solver(ctx, tol), tol, None, preset, preset.name)

    return run


# --- the theorems --------------------------------------------------------------------------------
def nu_property(sol: NuSolution, X: Any, y: np.ndarray, accuracy: float, who: str
                ) -> tuple[BoundCheck, BoundCheck]:
    """Schölkopf et al. (2000), Proposition 5 (one-class: 2001, Proposition 4): with ``rho >
    0``, the fraction of margin errors is at most ``nu`` and ``nu`` is at most the fraction of
    support vectors.

    With ``m_i = y_i f(x_i)`` (one-class: ``g_i = f(x_i) - b``, ``b = -rho``) and ``eps =
    accuracy * rho`` (the answer's certified accuracy: its ``m - M`` is below ``accuracy`` in
    units of ``rho``) plus :func:`g_roundoff` (``f`` evaluated here another way than by the
    certificate; ``kernel_max = max_i K(x_i, x_i)``: it matters where ``rho`` is near it):

    * a margin error is ``m_i < rho - eps`` (``xi_i > eps``; a point within ``eps`` of the
      margin is on it at that accuracy);
    * a support vector is ``alpha_i > 0`` with ``m_i <= rho + eps`` (on or inside the margin: an
      ``alpha_i > 0`` strictly outside contradicts complementary slackness and is not counted).

    Returns ``(errors / l <= nu, nu <= support vectors / l)``. With ``rho = 0`` (the reduced
    hulls meet) the first makes no claim (``bound = inf``), nor where a ν-SVC's certificate
    does not resolve ``rho`` (:func:`~maxmargin.certificate_nu.rho_unresolved`: ``rho < w_floor
    R``, the hulls meet at its resolution, and its ``m - M`` is in units of ``w_floor R``, not
    of ``rho``: margins within that of ``rho`` are not told apart); there ``eps`` is ``accuracy
    w_floor R`` (plus the round-off), the accuracy the certificate vouches for.
    """
    l = sol.alpha.shape[0]
    f = sol.decision_function(X)
    m = f - sol.b if sol.problem == "one_class" else y * f
    kernel_max = float(np.max(sol.kernel.diag(X))) if l else 0.0
    alpha = np.asarray(sol.alpha)
    unresolved = _rho_unresolved(sol)
    # the unit of the answer's m - M: rho, or the certificate's resolution w_floor R above it
    unit = (max(sol.rho, w_floor(alpha, sol.certificate.radius, hull_weight(sol.nu, False))
                * sol.certificate.radius) if unresolved else sol.rho)
    eps = accuracy * unit + g_roundoff(alpha, kernel_max, kernel_width(X))
    errors = int(np.sum(m < sol.rho - eps))
    support = int(np.sum((alpha > 0.0) & (m <= sol.rho + eps)))
    if sol.rho > 0.0 and not unresolved:
        first = _check(f"nu_errors[{who}]", errors / l, sol.nu, rho=sol.rho, eps=eps,
                       errors=errors)
    else:
        why = ("rho below the certificate's resolution (the reduced hulls meet at it)"
               if unresolved else "rho = 0 (the reduced hulls meet)")
        first = _check(f"nu_errors[{who}]", errors / l, math.inf, f"{why}: no claim",
                       errors=errors)
    return first, _check(f"nu_support[{who}]", sol.nu, support / l, eps=eps, support=support)


def _property(ctx: Context) -> Outcome:
    """:func:`nu_property` on the oracle's answer and on the tight solver's; an answer that is
    not certified claims no accuracy to judge it at: the row fails with that reason."""
    t0 = time.perf_counter()
    c = ctx.case
    sol = _run_solver(ctx, TIGHT_TOL)
    out = Outcome(status=ctx.oracle.status, oracle="Schölkopf et al. (2000): errors/l <= nu "
                  "<= SVs/l", runtime=time.perf_counter() - t0)
    checks = nu_property(ctx.oracle, c.X, c.y, ORACLE_KKT, "oracle")
    if sol.status == "optimal":
        checks += nu_property(sol, c.X, c.y, TIGHT_TOL, sol.method)
    else:
        out.reasons.append(f"{sol.method} not certified ({sol.status}) at tol {TIGHT_TOL:g}")
    out.bounds = checks
    return out


def as_c_svc(sol: NuSolution) -> SVMSolution:
    """The C-SVC answer a ν-SVC answer with ``rho > 0`` claims (Chang & Lin 2001): ``alpha /
    rho``, ``b / rho``, ``w / rho`` at ``C = 1 / (rho l)``, from the point the ν certificate
    judges (:func:`~maxmargin.certificate_nu.project_nu`: weights within round-off of 0 or
    ``1 / l`` on the bound); an ``alpha_i`` at ``1 / l`` is put on ``C`` exactly (dividing
    would leave it an ulp off, free in LIBSVM's index sets, as a weight of 1e-16 left above 0
    would be)."""
    rho = sol.rho
    l = sol.alpha.shape[0]
    C = 1.0 / (rho * l)
    judged = project_nu(np.asarray(sol.alpha), np.asarray(sol.y_train), sol.nu)
    alpha = np.where(judged >= 1.0 / l, C, judged / rho)
    ww = -2.0 * sol.dual_objective / rho**2
    return SVMSolution(
        alpha=alpha, b=sol.b / rho, w=None if sol.w is None else np.asarray(sol.w) / rho,
        dual_objective=float(alpha.sum()) - 0.5 * ww, primal_objective=math.nan,
        status=sol.status, iterations=sol.iterations, method=f"{sol.method} / rho",
        X_train=sol.X_train, y_train=sol.y_train, kernel=sol.kernel, C=C)


def with_kkt_interval(ref: SVMSolution, X: Any, y: np.ndarray) -> SVMSolution:
    """``ref`` (a soft-margin answer) with the KKT interval of its intercepts recomputed with
    the weights within :data:`~maxmargin.certificate_nu.BOUND_ULPS` roundings of 0 or ``C``
    counted on their bound (:func:`~maxmargin.results.recover_intercept`'s ``atol``): an
    ``alpha_i`` an ulp below ``C`` fixes no ``b``. With no weight free, every ``b`` of the
    interval ``[lo, hi]`` that the bound weights' conditions leave (``y_i (g_i + b) >= 1`` at
    0, ``<= 1`` at ``C``) minimises the primal, Chang & Lin's ``b / rho`` among them, and
    :func:`~maxmargin.verification.crosscheck.cross_check` judges the candidate's ``b`` by its
    distance to it."""
    C = float(np.max(np.asarray(ref.box)))
    g = ref.decision_function(X) - ref.b
    atol = BOUND_ULPS * np.finfo(np.float64).eps * C
    _, interval = recover_intercept(np.asarray(ref.alpha), y, g, ref.box, atol=atol)
    return dataclasses.replace(ref, b_interval=interval)


def _objective_within_roundoff(check: CrossCheck, scaled: SVMSolution, ref: SVMSolution,
                               X: Any, kernel: Kernel) -> CrossCheck:
    """``check`` without its objective reason where the two dual values differ by at most
    ``NU_C_TIGHT.objective |D_o|`` plus their float64 round-off
    (:func:`~maxmargin.certificate.objective_roundoff` of each, ``D`` alone: no hinge): at
    ``C = 1 / (rho l)`` with ``rho`` far below ``K_max`` the C-SVC's dual sums terms of size
    ``(nu / rho)^2 K_max``, and its relative resolution can be far above the preset's."""
    if not (math.isfinite(check.objective_error)
            and any(r.startswith("objective") for r in check.reasons)):
        return check
    kernel_max = float(np.max(kernel.diag(X)))
    roundoff = sum(objective_roundoff(np.asarray(a.alpha), None, kernel_max, 0.0,
                                      width=kernel_width(X)) for a in (scaled, ref))
    scale = max(abs(ref.dual_objective), TINY)
    if (check.objective_error - NU_C_TIGHT.objective) * scale > roundoff:
        return check
    reasons = tuple(r for r in check.reasons if not r.startswith("objective"))
    return dataclasses.replace(check, reasons=reasons, passed=not reasons)


def nu_c_equivalence(sol: NuSolution, X: Any, y: np.ndarray, kernel: Kernel
                     ) -> tuple[BoundCheck, CrossCheck | None]:
    """Chang & Lin (2001): a ν-SVC answer with ``rho > 0`` over ``rho`` (:func:`as_c_svc`) is
    the C-SVC answer at ``C = 1 / (rho l)``: SMO (float64, tol 1e-6) at that ``C`` and the
    cross-check against it (:data:`~maxmargin.tolerances.NU_C_TIGHT`: decision values,
    objective, the scaled answer's own C-SVC KKT residuals). Where SMO does not certify that
    C-SVC at 1e-6 (``rho`` small: ``C max K_ii`` beyond what float64 SMO certifies so tightly),
    the C-SVC oracle at that ``C`` is the reference instead; where neither is certified, the
    scaled answer's own C-SVC ``m - M`` (:func:`~maxmargin.certificate.certify_svm`) against
    the cross-check's KKT tolerance. ``value`` is the decision error, ``bound`` TIGHT's. With
    ``rho = 0`` no C is equivalent: the answer must say so (``C`` NaN). ``alpha / rho`` carries
    the round-off of ``rho`` (:func:`_rho_roundoff`: ``rho`` is a difference of margins that can
    be far larger than it): where it exceeds the cross-check's KKT tolerance, that tolerance is
    it, and the objectives' twice it."""
    if not sol.rho > 0.0:
        return _check("nu_c_equivalence", 0.0 if math.isnan(sol.C) else math.inf, 0.0,
                      "rho = 0: no equivalent C-SVC (C must be NaN)"), None
    scaled = as_c_svc(sol)
    with warnings.catch_warnings():  # an uncertified reference is handled below
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref = smo(X, y, C=scaled.C, kernel=kernel, tol=TIGHT_TOL, precision="double")
        if ref.status != "optimal":
            ref = svm_dual(X, y, C=scaled.C, kernel=kernel).solve()
    spread = _rho_roundoff(sol, X, kernel)
    if ref.status != "optimal":  # no reference: the scaled answer's own C-SVC m - M decides
        own = certify_svm(np.asarray(scaled.alpha), X, y, scaled.C, kernel)
        return _check("nu_c_equivalence", own.kkt_violation, max(NU_C_TIGHT.kkt, spread),
                      f"neither smo nor the oracle at C = {scaled.C:.6g} is certified "
                      f"({ref.status!r}): alpha / rho judged by the C-SVC certificate",
                      C=scaled.C, rho=sol.rho, rho_roundoff=spread), None
    tolerances = NU_C_TIGHT
    if spread > NU_C_TIGHT.kkt:  # alpha / rho carries the round-off of rho
        tolerances = dataclasses.replace(NU_C_TIGHT, kkt=spread,
                                         objective=max(NU_C_TIGHT.objective, 2.0 * spread))
    check = cross_check(scaled, with_kkt_interval(ref, X, y), X, y, tolerances=tolerances)
    check = _objective_within_roundoff(check, scaled, ref, X, kernel)
    return _check("nu_c_equivalence", check.decision_error, TIGHT.decision,
                  C=scaled.C, rho=sol.rho, rho_roundoff=spread), check


def _rho_roundoff(sol: NuSolution, X: Any, kernel: Kernel) -> float:
    """The float64 round-off of ``rho`` relative to itself: ``rho`` is a difference of margins
    ``sum_j alpha_j y_j K_ij``, each off by up to ``gamma_N sum(alpha) max K_ii`` (half of
    :func:`g_roundoff`, which bounds the difference of two such evaluations)."""
    alpha = np.asarray(sol.alpha)
    kernel_max = float(np.max(kernel.diag(X))) if alpha.size else 0.0
    return 0.5 * g_roundoff(alpha, kernel_max, kernel_width(X)) / sol.rho


def _rho_unresolved(sol: NuSolution) -> bool:
    """Whether ``sol`` is a ν-SVC answer whose certificate does not resolve its ``rho > 0``
    (:func:`~maxmargin.certificate_nu.rho_unresolved`)."""
    return (sol.problem != "one_class" and sol.rho > 0.0 and sol.certificate is not None
            and rho_unresolved(sol.certificate, np.asarray(sol.alpha), hull_weight(sol.nu, False)))


def _equivalence(ctx: Context) -> Outcome:
    t0 = time.perf_counter()
    c = ctx.case
    bound, check = nu_c_equivalence(ctx.oracle, c.X, c.y, ctx.kernel)
    out = Outcome(status=ctx.oracle.status, oracle="smo at C = 1 / (rho l) (Chang & Lin 2001)",
                  tolerances=TIGHT.name, runtime=time.perf_counter() - t0, bounds=(bound,))
    if check is not None:
        out.reasons += [f"C-SVC cross-check: {r}" for r in check.reasons
                        if not r.startswith("candidate status")]
    return out


def nu_refusal(X: Any, y: np.ndarray | None, kernel: Kernel,
               entries: dict[str, Callable[..., Any]] | None = None) -> BoundCheck:
    """Infeasible ``nu`` refused before any kernel work: ``nu = nu_max (1 + 1e-9)`` (one-class,
    ``y`` None: ``1 + 1e-9``) and ``nu = 0`` must raise a ``ValueError`` naming ``nu_max``
    (one-class: ``(0, 1]``; ``nu = 0``: ```nu```) from the solver and the oracle (``entries``:
    name -> ``f(X, y, nu, kernel)``, default both), with a kernel that records every
    evaluation. ``value`` counts the failures (``bound`` 0)."""
    calls: list[int] = []

    def counted(A: Any, B: Any) -> np.ndarray:
        calls.append(1)
        return kernel(A, B)

    spy = CallableKernel(counted)
    one_class = y is None
    top = 1.0 if one_class else nu_max(y)
    if entries is None:
        entries = ({"one_class_smo": lambda X, y, nu, k: one_class_smo(X, nu, kernel=k),
                    "one_class_dual": lambda X, y, nu, k: one_class_dual(X, nu, kernel=k)}
                   if one_class else
                   {"nu_smo": lambda X, y, nu, k: nu_smo(X, y, nu, kernel=k),
                    "nu_svm_dual": lambda X, y, nu, k: nu_svm_dual(X, y, nu, kernel=k)})
    wrong = []
    for name, entry in entries.items():
        for nu, words in ((top * (1.0 + 1e-9), "(0, 1]" if one_class else "nu_max"),
                          (0.0, "`nu`")):
            calls.clear()
            try:
                entry(X, y, nu, spy)
            except ValueError as exc:
                if words not in str(exc):
                    wrong.append(f"{name}(nu={nu:.10g}): its message does not name {words}")
                elif calls:
                    wrong.append(f"{name}(nu={nu:.10g}): {len(calls)} kernel evaluation(s) "
                                 "before the refusal")
            else:
                wrong.append(f"{name}(nu={nu:.10g}) did not raise")
    return _check("nu_refuses", len(wrong), 0.0, "; ".join(wrong), nu_max=top)


def _refuses(ctx: Context) -> Outcome:
    t0 = time.perf_counter()
    c = ctx.case
    check = nu_refusal(c.X, None if c.problem == "one_class" else c.y, ctx.kernel)
    return Outcome(status="optimal", oracle="ValueError naming the bound, no kernel work",
                   runtime=time.perf_counter() - t0, bounds=(check,))


def hulls_meet_reported(answers: tuple[NuSolution, ...], X: Any, y: np.ndarray, kernel: Kernel
                        ) -> BoundCheck:
    """Reduced hulls that meet: ``w = 0`` is the optimum (``D = -1/2 ||w||^2 <= 0`` for every
    feasible ``alpha``), shown by a witness, and every answer must report it (``hulls_meet``,
    ``rho = b = 0``, ``C`` NaN, ``w`` zeros).

    The witness is the class centroids (weights ``1 / l_c <= 2 / (nu l)`` for every feasible
    ``nu``, scaled to ``nu / 2``) or the first answer's ``alpha``, whichever is smaller:
    feasible to round-off with ``||w|| <= w_floor`` (:func:`~maxmargin.certificate_nu.w_floor`),
    ``||w||^2`` recomputed from the Gram matrix. ``value`` counts the failures (``bound`` 0).
    """
    nu = answers[0].nu
    K = kernel.gram(X)
    R = math.sqrt(max(float(np.max(np.diag(K))), 0.0))
    l = y.shape[0]
    centroid = np.where(y > 0, 0.5 * nu / np.sum(y > 0), 0.5 * nu / np.sum(y < 0))
    wrong = []
    best = math.inf
    for alpha in (centroid, np.asarray(answers[0].alpha)):
        v = alpha * y
        feasible = (np.all(alpha >= 0.0) and np.all(alpha <= (1.0 + 1e-12) / l)
                    and abs(float(v.sum())) <= 1e-12 and float(alpha.sum()) >= nu * (1 - 1e-12))
        if feasible:
            best = min(best, math.sqrt(max(float(v @ K @ v), 0.0)))
    floor = w_floor(centroid, R, hull_weight(nu, False))
    if not best <= floor:
        wrong.append(f"no witness: the smallest ||w|| of a feasible alpha found is {best:.3g} "
                     f"> w_floor {floor:.3g}")
    for sol in answers:
        wrong += [f"{sol.method}: {r}" for r in _offset_reasons(sol, certify(sol, X, y, kernel))]
        if not sol.hulls_meet:
            wrong.append(f"{sol.method} does not report that the reduced hulls meet "
                         f"(rho = {sol.rho:.3g})")
    return _check("nu_hulls_meet", len(wrong), 0.0, "; ".join(wrong), witness_w=best,
                  w_floor=floor)


def _hulls_meet(ctx: Context) -> Outcome:
    t0 = time.perf_counter()
    c = ctx.case
    answers = (ctx.oracle, _run_solver(ctx, TIGHT_TOL))
    return Outcome(status=ctx.oracle.status, oracle="a feasible alpha with w = 0 (witness)",
                   runtime=time.perf_counter() - t0,
                   bounds=(hulls_meet_reported(answers, c.X, c.y, ctx.kernel),))


def one_class_centroid(sol: NuSolution, X: Any, kernel: Kernel) -> BoundCheck:
    """One-class at ``nu = 1``: the box ``alpha_i <= 1 / (nu l)`` and ``sum alpha = 1`` leave
    one point, ``alpha_i = 1 / l`` (LIBSVM's ``nu l alpha_i = 1``), so ``f(x) = mean_i
    K(x_i, x) - rho``; every ``rho >= max_i g_i`` (``g_i = mean_j K(x_j, x_i)``) is optimal and
    the judge's is ``max_i g_i``. ``value`` is the largest of ``max_i |l alpha_i - 1|``, ``|rho
    - max g| / s`` and ``max_i |f(x_i) - (g_i - rho)| / s`` (``s = max |K|``); ``bound``
    :data:`IDENTITY_RTOL`."""
    K = kernel.gram(X)
    l = K.shape[0]
    g = K.mean(axis=0)
    s = max(float(np.max(np.abs(K))), TINY)
    errors = {
        "alpha": float(np.max(np.abs(l * np.asarray(sol.alpha) - 1.0))),
        "rho": abs(sol.rho - float(np.max(g))) / s,
        "decision": float(np.max(np.abs(sol.decision_function(X) - (g - sol.rho)))) / s,
    }
    return _check(f"one_class_centroid[{sol.method}]", max(errors.values()), IDENTITY_RTOL,
                  **errors)


def _centroid(ctx: Context) -> Outcome:
    t0 = time.perf_counter()
    c = ctx.case
    checks = tuple(one_class_centroid(sol, c.X, ctx.kernel)
                   for sol in (ctx.oracle, _run_solver(ctx, TIGHT_TOL)))
    return Outcome(status=ctx.oracle.status, oracle="alpha = 1/l, f = mean K - rho",
                   runtime=time.perf_counter() - t0, bounds=checks)


#: The solvers' tight tolerance (the theorem rows run them at it).
TIGHT_TOL = 1e-6
_NU = ("nu",)

#: The ν checks by name (merged into :data:`~maxmargin.verification.checks.METHODS`).
NU_METHODS: tuple[Method, ...] = (
    Method("nu/oracle", "nu", _oracle_self),
    Method("nu/primal", "nu", _primal),
    Method("nu_smo", "nu", _solver(1e-3, MEDIUM), warm=_NU),
    Method("nu_smo/tight", "nu", _solver(TIGHT_TOL, TIGHT), warm=_NU),
    Method("one_class_smo", "nu", _solver(1e-3, MEDIUM), warm=_NU),
    Method("one_class_smo/tight", "nu", _solver(TIGHT_TOL, TIGHT), warm=_NU),
    Method("nu/mdm", "nu", _hull_solver("mdm"), warm=("nu_hulls",)),
    Method("nu/wolfe", "nu", _hull_solver("wolfe"), warm=("nu_hulls",)),
    Method("nu_property", "theorems", _property, warm=_NU),
    Method("nu_c_equivalence", "theorems", _equivalence, warm=("smo",)),
    Method("nu_refuses", "theorems", _refuses, needs_oracle=False),
    Method("nu_hulls_meet", "theorems", _hulls_meet, warm=_NU),
    Method("one_class_centroid", "theorems", _centroid, warm=_NU),
)
