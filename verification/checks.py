"""The checks of the verification suite, by name: each runs one method on a case and judges it.

A check (:class:`~maxmargin.verification.context.Method`) is ``run(context) -> Outcome``:
a candidate against the case's oracle with a tolerance preset
(:func:`~maxmargin.verification.crosscheck.cross_check`), a theorem
(:mod:`~maxmargin.verification.bounds`), or a certified answer judged by its own float64
certificate and weak duality against the oracle. :data:`METHODS` holds every standard check;
a case lists the names that apply to it (:mod:`~maxmargin.verification.cases`); the ν-SVC and
one-class checks are :mod:`~maxmargin.verification.nu_checks`.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from maxmargin.algorithms import (
    dcd_svc,
    gilbert_hulls,
    mdm_hulls,
    wolfe_hulls,
)
from maxmargin.certificate import TINY, infeasibility_slack, objective_roundoff, weak_duality
from maxmargin.formulations import (
    hard_margin_primal,
    hinge_loss,
    oracle_consensus,
    soft_margin_primal,
    svm_dual,
)
from maxmargin.methods import get_method
from maxmargin.results import SVMSolution
from maxmargin.tolerances import (
    LOOSE,
    MEDIUM,
    ORACLE,
    ORACLE_GAP,
    ORACLE_KKT,
    REFERENCE_LINEAR_KKT,
    SVM_HULL_EPS_SINGLE,
    TIGHT,
    Tolerances,
)
from maxmargin.verification import bounds as thm
from maxmargin.verification.case import Case
from maxmargin.verification.cases import catalogue
from maxmargin.verification.context import Artifacts, Context, Method, Outcome
from maxmargin.verification.crosscheck import cross_check, dual_objective
from maxmargin.verification.kkt import kkt_residuals
from maxmargin.verification.nu_checks import NU_METHODS

__all__ = ["METHODS", "compare", "extra_methods", "methods_for", "infeasible_shape",
           "weak_duality_vs_oracle"]


# --- the methods ------------------------------------------------------------------------------
def compare(ctx: Context, candidate: SVMSolution, tol: Tolerances) -> Outcome:
    """``candidate`` against the case's oracle with the preset ``tol`` (:func:`cross_check`);
    an infeasible answer must have the one infeasible shape (:func:`infeasible_shape`)."""
    oracle = ctx.oracle
    check = cross_check(candidate, oracle, ctx.case.X, ctx.case.y, tolerances=tol)
    runtime = candidate.runtime
    out = Outcome(status=candidate.status, oracle=oracle.method, tolerances=tol.name,
                  iterations=candidate.iterations, runtime=runtime, check=check)
    if candidate.status == "infeasible":
        out.reasons += infeasible_shape(candidate)
    return out


def infeasible_shape(sol: SVMSolution) -> list[str]:
    """What is wrong with an ``"infeasible"`` answer's shape (empty when nothing): NaN alpha and
    b, ``+inf`` objectives, a certificate whose evidence ``hull_distance`` is at most
    ``SVM_HULL_EPS_SINGLE R`` (the coarsest resolution any method claims), and a ``predict``
    that refuses."""
    reasons = []
    if not (np.all(np.isnan(sol.alpha)) and math.isnan(sol.b)):
        reasons.append("infeasible answer with a finite alpha or b")
    if not (sol.primal_objective == sol.dual_objective == math.inf):
        reasons.append("infeasible answer whose objectives are not +inf")
    cert = sol.certificate
    if cert is None or not cert.infeasible:
        reasons.append("infeasible answer without the evidence (certificate.hull_distance)")
    elif not cert.hull_distance <= SVM_HULL_EPS_SINGLE * cert.radius * (1.0 + 1e-9):
        reasons.append(f"its evidence {cert.summary()} does not show the hulls within "
                       f"{SVM_HULL_EPS_SINGLE:g} R")
    try:
        sol.predict(sol.X_train)
    except ValueError:
        pass
    else:
        reasons.append("predict answered on an infeasible answer")
    return reasons


def _consensus(ctx: Context) -> Outcome:
    """Clarabel and OSQP on one formulation, OSQP's answer judged against the oracle.

    The formulation is the dual, except for a linear hard margin: there the dual's box is
    unbounded and OSQP's first-order iterations stall before 1e-9, while the primal (d + 1
    variables) converges in under 1,000 iterations; the primal is then the second solver's
    problem, which also makes the check independent of the dual model.
    """
    c = ctx.case
    if c.C is None and ctx.kernel.name == "linear":
        form = hard_margin_primal(c.X, c.y)
    else:
        form = svm_dual(c.X, c.y, c.C, kernel=ctx.kernel)
    report = oracle_consensus(form)
    out = compare(ctx, report.solutions[1], ORACLE)
    own = kkt_residuals(ctx.oracle, c.X, c.y).max  # the ground truth must satisfy KKT itself
    if not own <= ORACLE.kkt:
        out.reasons.append(f"the oracle's own KKT residual {own:.3g} > {ORACLE.kkt:.3g}")
    return out


def _primal(ctx: Context) -> Outcome:
    c = ctx.case
    form = hard_margin_primal(c.X, c.y) if c.C is None else soft_margin_primal(c.X, c.y, c.C)
    return compare(ctx, form.solve(), ORACLE)


def _hinge(ctx: Context) -> Outcome:
    c = ctx.case
    return compare(ctx, hinge_loss(c.X, c.y, c.C).solve(), ORACLE)


def _hand(ctx: Context) -> Outcome:
    """The oracle against the case's hand-derived answer (the oracle is the candidate here)."""
    c, a = ctx.case, ctx.case.answer
    if a is None:
        raise RuntimeError(f"case {c.name!r} has no hand-derived answer")
    lo, hi = a.b_interval if a.b_interval is not None else (a.b, a.b)
    hand = SVMSolution(
        alpha=a.alpha, b=0.5 * (lo + hi), w=a.w, dual_objective=a.objective,
        primal_objective=a.objective, status="optimal", iterations=0, method="hand derivation",
        X_train=c.X, y_train=c.y, kernel=ctx.kernel, C=c.C, b_interval=(lo, hi),
    )
    oracle = ctx.oracle
    check = cross_check(oracle, hand, c.X, c.y, tolerances=ORACLE)
    return Outcome(status=oracle.status, oracle=hand.method, tolerances=ORACLE.name,
                   iterations=oracle.iterations, runtime=oracle.runtime, check=check)


def _smo(
    working_set: str, tol: float, preset: Tolerances, precision: str = "single"
) -> Callable[[Context], Outcome]:
    """SMO at ``tol``; the TIGHT rows (tol 1e-6) use ``precision="double"`` (float64 kernel
    cache): float32's rounding of the gradient (~2^-24 max K_tt sum(alpha)) exceeds 1e-6 on
    unscaled data (iris_versicolor_virginica, scale_1e3_soft). Platt's row uses the default
    ``"auto"``, whose specialisations :func:`warm_up` compiles."""

    def run(ctx: Context) -> Outcome:
        c = ctx.case
        sol = get_method("smo")(c.X, c.y, C=c.C, kernel=ctx.kernel, tol=tol,
                                working_set=working_set, precision=precision)
        if "violation" in sol.history:
            ctx.keep_history(f"smo/{working_set}", iteration=sol.history["iteration"],
                             violation=sol.history["violation"])
        return compare(ctx, sol, preset)

    return run


def _rho_and_diameter(ctx: Context) -> tuple[float, float]:
    """The hull distance ``rho = 2 / ||w*||`` from the oracle (``||w*||^2 = (alpha y)^T K
    (alpha y)``) and ``diam(P) + diam(Q)`` in feature space (a bound on the diameter of the
    Minkowski difference)."""
    c, oracle = ctx.case, ctx.oracle
    K = ctx.kernel.gram(c.X)
    ww = 2.0 * (float(np.sum(oracle.alpha)) - dual_objective(oracle.alpha, c.y, K))
    diam = 0.0
    for label in (1.0, -1.0):
        idx = c.y == label
        if ctx.kernel.name == "linear":
            diam += thm.diameter(c.X[idx])
        else:
            Kc = K[np.ix_(idx, idx)]
            dk = np.diag(Kc)
            diam += math.sqrt(max(float(np.max(dk[:, None] + dk[None, :] - 2.0 * Kc)), 0.0))
    return 2.0 / math.sqrt(ww), diam


#: Settings of the nearest-point solvers: vanilla Gilbert converges as O(1/k), so it is run to a
#: relative duality gap of 1e-5 (judged with LOOSE); MDM and Wolfe keep their default 1e-8
#: (TIGHT).
_NEAREST_OPTIONS: dict[str, dict[str, Any]] = {
    "gilbert": {"tol": 1e-5, "max_iter": 3_000_000},
    "mdm": {},
    "wolfe": {},
}


def _nearest(method: str, preset: Tolerances) -> Callable[[Context], Outcome]:
    def run(ctx: Context) -> Outcome:
        c = ctx.case
        options = _NEAREST_OPTIONS[method]
        sol = get_method(method)(c.X, c.y, kernel=ctx.kernel, **options)
        out = compare(ctx, sol, preset)
        if c.expected_status == "optimal" and sol.status == "optimal" and "distance" in (
            sol.history
        ):
            rho, diam = _rho_and_diameter(ctx)
            steps, dist = sol.history["iteration"], sol.history["distance"]
            ctx.keep_history(method, steps=steps, h=dist - rho,
                             bound=thm.gilbert_rate_curve(steps, rho, diam))
            if method == "gilbert":  # the seed's theorem is about Gilbert's steps
                out.bounds = (thm.gilbert_rate(dist, steps, rho, diam),)
        return out

    return run


def _hulls(method: str, preset: Tolerances) -> Callable[[Context], Outcome]:
    def run(ctx: Context) -> Outcome:
        c = ctx.case
        P, Q = c.X[c.y > 0], c.X[c.y < 0]

        solve = {"gilbert": gilbert_hulls, "mdm": mdm_hulls, "wolfe": wolfe_hulls}[method]
        # each method judged alone: no finish by Wolfe's method for Gilbert's and MDM's runs
        alone = {} if method == "wolfe" else {"finish": False}
        hull = solve(P, Q, **_NEAREST_OPTIONS[method], **alone)
        check = thm.hull_recovery(hull, ctx.oracle, c.X, c.y, rtol=preset.w)
        return Outcome(status=hull.status, oracle=ctx.oracle.method, tolerances=preset.name,
                       iterations=hull.iterations, runtime=hull.runtime, bounds=(check,))

    return run


def _perceptron(ctx: Context) -> Outcome:
    c = ctx.case
    name = "perceptron" if ctx.kernel.name == "linear" else "kernel_perceptron"
    res = get_method(name)(c.X, c.y, kernel=ctx.kernel)
    out = Outcome(status=res.status, oracle="separation-margin model (CVXPY)",
                  iterations=res.mistakes, runtime=res.runtime,
                  bounds=(thm.mistake_bound(res, c.X, c.y, bias=True, kernel=ctx.kernel),))
    wrong = int(np.sum(res.predict(c.X) != c.y))
    if res.converged and wrong:
        out.reasons.append(f"converged but misclassifies {wrong} training point(s)")
    return out


def _sv_count(ctx: Context) -> Outcome:
    oracle = ctx.oracle
    return Outcome(status=oracle.status, oracle=oracle.method, iterations=oracle.iterations,
                   runtime=oracle.runtime, bounds=(thm.support_vector_count(oracle),))


def _feature_map(ctx: Context) -> Outcome:
    t0 = time.perf_counter()
    check = thm.feature_map_identity(ctx.case.X)
    return Outcome(status="optimal", oracle="PolyKernel(gamma=1, degree=2, coef0=1)",
                   runtime=time.perf_counter() - t0, bounds=(check,))


def _theorem(check: Callable[[Context], Any], oracle: str) -> Callable[[Context], Outcome]:
    """A method whose row is one theorem check (status "optimal" when it ran)."""

    def run(ctx: Context) -> Outcome:
        t0 = time.perf_counter()
        result = check(ctx)
        return Outcome(status=ctx.case.expected_status, oracle=oracle,
                       runtime=time.perf_counter() - t0, bounds=(result,))

    return run


def _same_as_builtin(ctx: Context) -> Any:
    """The oracle through the kernel engine (a Gram matrix, a callable) against the oracle of
    the catalogue case with the built-in kernel it reproduces (tag ``same_as:NAME``): relative
    difference of the dual objectives and of the decision values on the training points."""
    name = next(t.split(":", 1)[1] for t in ctx.case.tags if t.startswith("same_as:"))
    builtin = next(c for c in catalogue("full") if c.name == name)
    other = Context(builtin, Artifacts()).oracle
    mine = ctx.oracle
    scale = max(1.0, abs(other.dual_objective))
    err = max(abs(mine.dual_objective - other.dual_objective) / scale,
              float(np.max(np.abs(mine.decision_function(ctx.case.X)
                                  - other.decision_function(builtin.X)))) / scale)
    return thm._check("same_as_builtin", err, 1e-7, builtin=0.0)


def _infeasible_form(kind: str) -> Callable[[Context], Outcome]:
    def run(ctx: Context) -> Outcome:
        c = ctx.case
        form = hard_margin_primal(c.X, c.y) if kind == "primal" else svm_dual(c.X, c.y, None)
        sol = form.solve()
        return Outcome(status=sol.status, oracle="expected status", iterations=sol.iterations,
                       runtime=sol.runtime)

    return run


# --- the random campaign's checks (verification/campaign.py) --------------------------------
def weak_duality_vs_oracle(ctx: Context, sol: SVMSolution) -> list[str]:
    """Weak duality against the oracle, both ways
    (:func:`~maxmargin.certificate.weak_duality`), when the oracle is optimal, up to the
    float64 round-off both answers' objectives may carry
    (:func:`~maxmargin.certificate.objective_roundoff`); the candidate's dual value may exceed
    by what its own infeasibility allows (:func:`~maxmargin.certificate.infeasibility_slack`: 0
    for an exactly feasible ``alpha``, round-off for maxmargin's, float32 rounding for a
    single-precision solver's)."""
    oracle = ctx.oracle
    co, cc = oracle.certificate, sol.certificate
    if oracle.status != "optimal" or co is None or cc is None:
        return []
    scale = max(float(np.sum(oracle.alpha)), float(np.sum(sol.alpha)))
    alpha = np.asarray(sol.alpha, dtype=np.float64)
    y = np.asarray(ctx.case.y, dtype=np.float64)
    box = sol.box
    kernel_max = float(np.max(np.abs(ctx.kernel.diag(ctx.case.X))))
    slack = infeasibility_slack(alpha, y, box, co.b, kernel_max)
    roundoff = (objective_roundoff(alpha, box, kernel_max, float(sol.b))
                + objective_roundoff(oracle.alpha, oracle.box, kernel_max, float(oracle.b)))
    return [r.replace("the reference's", "the oracle's")
            for r in weak_duality(cc, co, scale=scale, dual_slack=slack, roundoff=roundoff)]


def _certified(ctx: Context, sol: SVMSolution, kkt: float | None, gap: float | None) -> Outcome:
    """A candidate judged by its own float64 certificate and weak duality with the oracle:
    ``"optimal"`` must come with ``m - M < kkt`` (and ``gap <= gap``) and with both
    ``D_c <= P_o`` and ``D_o <= P_c``; ``"inaccurate"`` where ``kkt`` is below the
    certificate's resolution of ``m - M`` is the right verdict, with weak duality."""
    out = Outcome(status=sol.status, oracle=f"certificate + weak duality vs {ctx.oracle.method}",
                  tolerances=f"kkt<{kkt:g}" if kkt is not None else f"gap<={gap:g}",
                  iterations=sol.iterations, runtime=sol.runtime)
    cert = sol.certificate
    if "conditioned" in ctx.case.tags:  # judged against the outside solver (below)
        out.status_judged = True
        outside = ctx.outside
        unresolved = cert is not None and kkt is not None and cert.unresolved(kkt)
        if sol.status != "optimal" and outside.gap <= ORACLE_GAP and not unresolved:
            out.reasons.append(
                f"not certified ({sol.status}) where an outside solver certifies the problem "
                f"(PIQP on the plain dual: gap = {outside.gap:.2g})")
    if cert is not None:
        out.kkt_max, out.duality_gap = cert.kkt_violation, cert.gap
        if ctx.oracle.status == "optimal" and sol is not ctx.oracle:
            D_o = ctx.oracle.certificate.dual_objective
            out.objective_error = abs(cert.dual_objective - D_o) / max(abs(D_o), TINY)
    if (sol.status == "inaccurate" and cert is not None and kkt is not None
            and cert.unresolved(kkt)):
        # the tolerance is below float64's resolution of m - M here: not certifying it is the
        # right verdict; the answer must still not be refuted by weak duality
        out.status_judged = True
        out.reasons += weak_duality_vs_oracle(ctx, sol)
        return out
    if sol.status != "optimal":
        return out
    if cert is None:
        out.reasons.append("labelled optimal without a certificate")
        return out
    # an oracle (a CVXPY model) is optimal at float64's resolution of m - M where kkt is below
    # it (its judge, formulations._common.judge_svm); an algorithm only below kkt
    oracle = sol is ctx.oracle or str(sol.method).startswith("cvxpy/")
    if kkt is not None and not (cert.final(kkt, gap) if oracle else cert.meets(kkt, gap)):
        out.reasons.append(f"labelled optimal but its {cert.summary()} misses kkt < {kkt:g}")
    if kkt is None and not (cert.gap <= gap and cert.feasibility <= 1e-9):
        out.reasons.append(f"labelled optimal but its {cert.summary()} misses gap <= {gap:g}")
    out.reasons += weak_duality_vs_oracle(ctx, sol)
    return out


def _outside(ctx: Context) -> Outcome:
    """The outside solver's certificate (:attr:`Context.outside`), for the table: a row that
    informs and never fails (it judges the other rows)."""
    cert = ctx.outside
    certified = cert.gap <= ORACLE_GAP and cert.feasibility <= 1e-9
    return Outcome(status="optimal" if certified else "inaccurate",
                   oracle="PIQP on the plain dual (the outside solver)",
                   tolerances=f"gap<={ORACLE_GAP:g}", duality_gap=cert.gap,
                   status_judged=True)


def _oracle_self(ctx: Context) -> Outcome:
    """The oracle's own status and certificate (it is the ground truth of the other rows); a
    ``dcd_svc`` reference (large linear data) is judged at the ``m - M`` it was run to."""
    if ctx.case.reference == "dcd":
        return _certified(ctx, ctx.oracle, REFERENCE_LINEAR_KKT, None)
    return _certified(ctx, ctx.oracle, ORACLE_KKT, ORACLE_GAP)


def _smo_certified(tol: float, working_set: str = "wss2") -> Callable[[Context], Outcome]:
    def run(ctx: Context) -> Outcome:
        c = ctx.case
        sol = get_method("smo")(c.X, c.y, C=c.C, kernel=ctx.kernel, tol=tol,
                                working_set=working_set)
        return _certified(ctx, sol, tol, None)

    return run


def _dcd_certified(tol: float) -> Callable[[Context], Outcome]:
    def run(ctx: Context) -> Outcome:
        c = ctx.case
        if ctx.kernel.name != "linear":
            raise ValueError("dcd_svc solves the linear kernel's problem only")
        sol = dcd_svc(c.X, c.y, C=c.C, tol=tol, sample_weight=None)
        return _certified(ctx, sol, tol, None)

    return run


def _primal_certified(ctx: Context) -> Outcome:
    c = ctx.case
    form = hard_margin_primal(c.X, c.y) if c.C is None else soft_margin_primal(c.X, c.y, c.C)
    return _certified(ctx, form.solve(), ORACLE_KKT, ORACLE_GAP)


def _nearest_certified(method: str) -> Callable[[Context], Outcome]:
    def run(ctx: Context) -> Outcome:
        c = ctx.case
        sol = get_method(method)(c.X, c.y, kernel=ctx.kernel)
        return _certified(ctx, sol, None, 1e-6)

    return run


NEAREST = ("nearest",)

#: Every standard method by name (cases list the names that apply to them).
METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("consensus", "consensus", _consensus),
        Method("hand", "consensus", _hand),
        Method("primal", "consensus", _primal),
        Method("hinge", "consensus", _hinge),
        Method("smo/wss2", "smo", _smo("wss2", 1e-6, TIGHT, "double"), warm=("smo",)),
        Method("smo/wss1", "smo", _smo("wss1", 1e-6, TIGHT, "double"), warm=("smo",)),
        Method("smo/platt", "smo", _smo("platt", 1e-3, MEDIUM, "auto"), warm=("platt",)),
        Method("gilbert", "nearest_point", _nearest("gilbert", LOOSE), warm=NEAREST),
        Method("mdm", "nearest_point", _nearest("mdm", TIGHT), warm=NEAREST),
        Method("wolfe", "nearest_point", _nearest("wolfe", TIGHT), warm=NEAREST),
        Method("hulls/gilbert", "nearest_point", _hulls("gilbert", LOOSE), warm=NEAREST),
        Method("hulls/mdm", "nearest_point", _hulls("mdm", TIGHT), warm=NEAREST),
        Method("hulls/wolfe", "nearest_point", _hulls("wolfe", TIGHT), warm=NEAREST),
        Method("perceptron", "perceptron", _perceptron, warm=("perceptron",),
               needs_oracle=False),
        Method("sv_count", "theorems", _sv_count),
        Method("feature_map", "theorems", _feature_map, needs_oracle=False),
        Method("string_feature_map", "theorems", _theorem(
            lambda ctx: thm.string_feature_map_identity(ctx.case.X, ctx.kernel),
            "enumeration of the subsequence kernel's definition"), needs_oracle=False),
        Method("same_as_builtin", "theorems", _theorem(
            _same_as_builtin, "the oracle with the built-in kernel")),
        Method("perceptron_variant", "theorems", _theorem(
            lambda ctx: thm.perceptron_variant(ctx.case.X, ctx.case.y),
            "the perceptron variant's bound (T + 1) <= (R / gamma)^2"), warm=("perceptron",),
            needs_oracle=False),
        Method("one_hot", "theorems", _theorem(
            lambda ctx: thm.one_hot_separable(ctx.case.X, ctx.case.y),
            "w* = y separates the one-hot feature map"), warm=("perceptron",),
            needs_oracle=False),
        Method("homogeneous", "theorems", _theorem(
            lambda ctx: thm.homogeneous_form(ctx.case.X, ctx.case.y),
            "the bias folded into w"), warm=("perceptron",), needs_oracle=False),
        Method("hard_primal", "infeasibility", _infeasible_form("primal"), needs_oracle=False),
        Method("dual_hard", "infeasibility", _infeasible_form("dual"), needs_oracle=False),
        Method("oracle", "random", _oracle_self),
        Method("outside", "random", _outside, needs_oracle=False),
        Method("smo", "random", _smo_certified(1e-3), warm=("smo",)),
        Method("smo/tight", "random", _smo_certified(1e-6), warm=("smo",)),
        Method("smo/platt/certified", "random", _smo_certified(1e-3, "platt"), warm=("platt",)),
        Method("primal/certified", "random", _primal_certified),
        Method("dcd_svc", "random", _dcd_certified(1e-3)),
        Method("mdm/certified", "random", _nearest_certified("mdm"), warm=NEAREST),
        Method("wolfe/certified", "random", _nearest_certified("wolfe"), warm=NEAREST),
        *NU_METHODS,
    )
}

_EXTRA: list[Method] = []


@contextlib.contextmanager
def extra_methods(*methods: Method) -> Iterator[None]:
    """Add ``methods`` to every suite run inside the ``with`` block (a test hook)."""
    for m in methods:
        if not isinstance(m, Method):
            raise ValueError(f"`methods` must be Method instances; got {type(m).__name__}.")
    _EXTRA.extend(methods)
    try:
        yield
    finally:
        for m in methods:
            _EXTRA.remove(m)


def methods_for(case: Case) -> list[Method]:
    chosen = [METHODS[name] for name in case.methods]
    chosen += [m for m in _EXTRA if m.applies is None or m.applies(case)]
    return chosen
