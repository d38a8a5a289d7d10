"""Every named tolerance of maxmargin: the one place where "close enough" is defined.

The module holds two kinds of numbers. First, the **constants** that decide what a certificate
accepts, when a hard margin is declared infeasible, the default stopping tolerances of the
algorithms and the numerical thresholds of their linear algebra (each documented where it is
defined below). Second, the **presets** of the cross-checks.

Every comparison of the verification suite (``cross_check``, the theorem checks, the runner, the
CLI, the report and the tests) takes its limits from one of these presets, by name. A preset is
chosen by how accurately the *candidate* is asked to solve the problem:

=========  ================================================================================
preset     used for
=========  ================================================================================
TIGHT      SMO at ``tol=1e-6``, MDM at ``tol=1e-8``: agreement to interior-point accuracy
MEDIUM     SMO at ``tol=1e-3`` (LIBSVM's default stopping rule)
LOOSE      vanilla Gilbert (sublinear O(1/k) rate, stopped on a relative gap of ~1e-6)
ORACLE     one oracle against another (Clarabel vs OSQP, primal vs dual form)
=========  ================================================================================

The errors the limits apply to are defined in :mod:`maxmargin.verification.crosscheck`:

* ``objective``: ``|D_c - D_o| / |D_o|``
* ``w``: ``||w_c - w_o|| / max(||w_o||, tiny)``
* ``decision``: ``max_i |f_c(x_i) - f_o(x_i)| / max(1, max_i |f_o(x_i)|)``
* ``b``: ``|b_c - b_o| / max(1, |b_o|)``, or the distance of ``b_c`` to the oracle's KKT interval
* ``alpha``: ``max_i |alpha_c,i - alpha_o,i| / max(max_i alpha_o,i, tiny)`` (only when unique)
* ``kkt``: the candidate's largest pointwise KKT residual (the fields of ``kkt_residuals``
  other than ``duality_gap``: feasibility, box, ``y . alpha``, complementary slackness,
  stationarity, LIBSVM's violation -- all in units of ``y f`` or of alpha)
* ``gap``: the candidate's relative duality gap ``|P - D| / |P|``. It has its own limit
  because it is a sum over the points: ``P - D = sum_i [alpha_i (y_i f_i - 1) + C xi_i]`` and
  each term is at most ``C v_i`` for a pointwise violation ``v_i``, so a solution within
  ``kkt`` pointwise may have a gap up to ``n C kkt / |P|``. (The objective itself is
  compared with the oracle's through ``objective``.)

``kkt_exclude`` names KKT residuals (fields of ``kkt_residuals``) that a preset does not judge.
LOOSE excludes ``max_violation``: vanilla Gilbert is a Frank-Wolfe method without away steps,
so every point it ever stepped towards keeps a vanishing but positive weight ``alpha_i``, and
LIBSVM's index-set violation counts such a point as a support vector however small its weight
(it is discontinuous at ``alpha_i = 0``). The continuous residual ``alpha_i (y_i f_i - 1)``
(``complementary_zero``) measures the same condition weighted by the weight, and is judged.

``margin`` is the relative tolerance used to decide that a point lies on the margin
(``|y_i f(x_i) - 1| <= margin``) when deciding whether alpha is unique, and ``bound`` the
relative slack allowed in an inequality of a theorem (round-off only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = [
    "Tolerances", "TIGHT", "MEDIUM", "LOOSE", "ORACLE", "PRESETS", "get_tolerances",
    "preset_for",
]

# Numba compiles module-level constants into its cached machine code. This module is part of
# every compiled module's source stamp (`maxmargin._jit.CONSTANT_MODULES`): after an edit here,
# the cached code that may read these constants is cleared on the next import and recompiled.

# --- certificates and verdicts ---------------------------------------------------------------

#: ``Certificate.meets``: dual infeasibility (box and ``y . alpha``, relative) allowed.
FEASIBILITY = 1e-9
#: ``maxmargin audit``: the dual infeasibility another solver's answer may carry and still be
#: judged on its optimality. Solvers that keep ``alpha`` in single precision (ThunderSVM)
#: round it by float32's unit round-off, 6e-8, and accumulate it over a solve; above this, a
#: "converged" claim is refuted.
AUDIT_FEASIBILITY = 1e-6
#: An oracle answer is ``"optimal"`` only when its float64 certificate has ``m - M <=``
#: ``ORACLE_KKT`` (decision-function units) and a relative weak-duality gap ``<= ORACLE_GAP``.
ORACLE_KKT = 1e-6
ORACLE_GAP = 1e-7
#: Nearest-point oracles: ``"optimal"`` needs a relative Wolfe gap ``<= ORACLE_HULL_GAP``.
ORACLE_HULL_GAP = 1e-6
#: Hard margin, oracles: hulls within this distance (max norm, data scaled to unit radius) are
#: taken to meet (an LP decides it before any QP).
HULLS_MEET_ATOL = 1e-8
#: Hard margin, ``gilbert_svm`` and ``smo(precision="double")``: hulls within this times
#: ``R = max ||phi(x)||`` are not separable at the resolution the methods certify. ``R`` is
#: measured from the data's mean for the linear kernel on dense data (a translation changes no
#: verdict; rbf has ``K(x, x) = 1``), by the solvers and by the judge
#: (:func:`~maxmargin.certificate.certify_infeasible`) alike.
SVM_HULL_EPS = 1e-4
#: Hard margin, ``smo`` with its float32 kernel cache: the same resolution (its rounding).
SVM_HULL_EPS_SINGLE = 1e-3
#: Soft-margin certificate: margins in ``[1 - PRIMAL_RESCALE_BAND, 1)`` are cleared by also
#: trying the primal point ``(t w, t b)``, ``t = 1 / min`` of them (any ``t`` gives a primal
#: value; this one removes the round-off a hinge term charges ``C_i`` times).
PRIMAL_RESCALE_BAND = 1e-6
#: Nearest-point methods: a stop on the relative gap ``tol`` is confirmed by the float64
#: certificate up to this factor.
HULL_CERT_FACTOR = 10.0
#: Polytope oracles: below ``ZERO_RTOL * s`` (``s`` the power of two nearest the points' largest
#: norm; two hulls' points measured from their common mean) a distance is checked for being
#: exactly 0 (an LP).
ZERO_RTOL = 1e-4
#: The reference of a problem too large for the CVXPY oracle: float64 SMO to this ``m - M``.
REFERENCE_KKT = 1e-9
#: ... and ``dcd_svc``'s ``m - M`` when it is the reference of a linear problem too large for
#: the CVXPY oracle (``verify --data``; coordinate descent's last digits cost many passes).
REFERENCE_LINEAR_KKT = 1e-6
#: Theorem checks: relative slack of every inequality (round-off only).
BOUND_RTOL = 1e-9

# --- default stopping tolerances ---------------------------------------------------------------

#: SMO: ``m - M < tol`` (LIBSVM's and SVC's default).
SMO_TOL = 1e-3
#: Nearest-point methods: relative duality gap of the distance.
GILBERT_TOL = 1e-6
MDM_TOL = 1e-8
WOLFE_TOL = 1e-8
#: Dual coordinate descent (``dcd``): the relative duality gap its float64 certificate must
#: meet (issue 43's target at the defaults; ``tol=1e-6`` on request).
DCD_TOL = 1e-3
#: ``dcd``: the first projected-gradient tolerance of its stop rule ``PGmax - PGmin <= eps``
#: (LIBLINEAR's default ``eps`` for its dual solvers); divided by :data:`DCD_PG_SHRINK` each
#: time the certificate that follows a stop does not meet ``tol``.
DCD_PG_TOL = 0.1
DCD_PG_SHRINK = 10.0
#: ``dcd_svc``: the inner solves at a fixed bias stop at ``PGmax - PGmin <= DCD_SVC_EPS * tol``
#: (the same units as ``m - M``, with room for the balancing of ``alpha``).
DCD_SVC_EPS = 0.25
#: ``dcd_svc``: the bias column of its inner problems is ``s = DCD_SVC_SCALING`` times the
#: rows' RMS norm (penalty ``rho = s^2`` of the method of multipliers on ``y . alpha = 0``).
DCD_SVC_SCALING = 1.0
#: ``dcd_svc``: before a sign change of ``y . alpha``, its search on the bias moves at most
#: this many times its last move.
DCD_SVC_GROWTH = 10.0
#: ``dcd_svc``: a run not yet certified after this many passes (then 4, 16, ... times as
#: many) is handed to the exact active-set finish, as ``smo``'s stalled runs are.
DCD_SVC_FINISH_AFTER = 100
#: The exact finishes of ``dcd_svc`` and of ``dcd``'s hinge (``Handover``): a finish may do
#: as many floating-point operations as the passes so far times its budget (``dcd_svc`` 1,
#: ``dcd``'s hinge :data:`DCD_HINGE_FINISH_BUDGET`), and at least ``DCD_FINISH_MIN_WORK``. A
#: pass's visit of a row with ``r`` non-zeros counts ``DCD_VISIT_WORK + DCD_VISIT_ENTRY_WORK
#: (r + 1)``: what the finish's dense steps do in the time of a visit (its fixed cost, and
#: the scattered reads and writes of ``w``; docs/development/measurements.md).
DCD_FINISH_MIN_WORK = 1e7
DCD_VISIT_WORK = 256.0
DCD_VISIT_ENTRY_WORK = 4.0
DCD_HINGE_FINISH_BUDGET = 2.0
#: ``dcd_svc``: the finish holds about this many float64 ``(k + 1) x (k + 1)`` matrices at its
#: peak (``k`` free variables: the KKT matrix, its factor or eigendecomposition, the Gram
#: block). Either finish is tried only while its arrays take at most the data's own bytes, and
#: at least ``DCD_FINISH_MIN_BYTES``.
DCD_SVC_FINISH_MATRICES = 8
DCD_FINISH_MIN_BYTES = 32 * 2**20
#: ``dcd``'s hinge: when a check after at least ``DCD_SMOOTH_AFTER`` passes finds the relative
#: gap above ``DCD_SMOOTH_GAP`` (the passes crawl: ``C ||x||^2`` large), the smoothed primal
#: path (:mod:`~maxmargin.algorithms.dcd.smoothed`) is run once, on at most
#: ``DCD_SMOOTH_MAX_FEATURES`` features (its Hessian is ``(d + 1)``-square), with the work of
#: ``DCD_SMOOTH_PASSES`` passes, until at most ``DCD_SMOOTH_FREE`` times ``d + 1`` alphas are
#: free; its answer goes to the exact finish, or else restarts the passes when its dual
#: objective is the better.
DCD_SMOOTH_AFTER = 20
DCD_SMOOTH_GAP = 0.5
DCD_SMOOTH_MAX_FEATURES = 1000
DCD_SMOOTH_PASSES = 1000
DCD_SMOOTH_FREE = 4
#: After a finish that failed, the next waits until the passes' work has grown this many
#: times, or the estimate of its own work has fallen as many.
DCD_FINISH_GROWTH = 4.0
#: A finish whose work runs out returns its last stationary point whose bound margins were
#: wrong by at most this times ``tol`` (``m - M`` about twice that).
DCD_FINISH_KKT = 0.25
#: ``dcd``'s hinge finish (``feature_finish``): ``r`` counts as zero (the subproblem
#: consistent) when ``max |r_i|`` is at most ``DCD_FINISH_NULL_RTOL`` (``y_F`` has entries
#: +-1); singular values of the equilibrated ``Z`` below ``DCD_FINISH_RANK_RTOL`` times the
#: largest count as zero (in ``drop_steps``, eigenvalues of ``M`` below its square); a row
#: whose leverage ``z_j . G z_j`` exceeds ``DCD_FINISH_LEVERAGE_MAX`` leaves ``M`` near
#: singular (the eigendecomposition takes over); the finish ends where no bound margin is wrong
#: by more than ``DCD_FINISH_KKT_RTOL`` times ``max(1, max |m_i|)``.
DCD_FINISH_NULL_RTOL = 1e-9
DCD_FINISH_RANK_RTOL = 1e-10
DCD_FINISH_LEVERAGE_MAX = 1.0 - 1e-8
DCD_FINISH_KKT_RTOL = 1e-12
#: ``dcd``: a coordinate whose projected gradient is below this is not moved (LIBLINEAR's).
DCD_PG_SKIP = 1e-12
#: ``l1_cdn``: the first ``eps`` of LIBLINEAR's shrinking rule (divided by ``DCD_PG_SHRINK``
#: each time the rule is met, every feature then active again); LIBLINEAR's floor of ``L''_j``
#: and the smallest direction it moves on, here relative (the floor times ``sum_i C_i x_ij^2``,
#: the direction times ``max_i |x_ij|``: the same steps whatever the features' units).
L1_CDN_EPS = 0.01
L1_CDN_H_FLOOR = 1e-12
L1_CDN_D_SKIP = 1e-12
#: ``l1_cdn``'s exact finish: its Hessian's ridge, relative to the largest diagonal entry, and
#: how far above 1 a zero weight's ``|q_j|`` may stay when its model's minimiser is declared.
L1_FINISH_RIDGE = 1e-12
L1_FINISH_VIOLATION = 1e-12
#: Wolfe's minor cycle: a relative residual of its KKT system above ``WOLFE_KKT_RTOL`` redoes
#: the solve (from a fresh factor, then densely); a point whose Cholesky pivot is below
#: ``WOLFE_PIVOT_RTOL`` of its diagonal is affinely dependent on the corral in round-off (the
#: factor is given up and the solve done densely).
WOLFE_KKT_RTOL = 1e-8
WOLFE_PIVOT_RTOL = 1e-12
#: Platt's SMO: the "no progress" test ``|a2 - a2_old| < eps (a2 + a2_old + eps)``.
PLATT_EPS = 1e-12

# --- numerical thresholds ----------------------------------------------------------------------

#: Interior-point alphas (or convex weights) below ``SNAP_RTOL * scale`` are snapped onto their
#: bound (``scale = C``, or ``max alpha`` for the hard margin): at a gap of 1e-10 an inactive
#: alpha is ~1e-11 relative, a free one far above this.
SNAP_RTOL = 1e-9
#: SMO, linear kernel: data whose squared offset ``||mean||^2`` exceeds this times their mean
#: squared spread are solved centred (an equivalence with ``y . alpha = 0``).
CENTRE_OFFSET_RATIO = 100.0
#: RBF: a squared distance below this fraction of ``a.a + b.b`` is recomputed from differences.
CANCEL_RTOL = 1e-6
#: ``hinge_loss``: a sample with ``|y_i f(x_i) - 1| <= HINGE_MARGIN_TOL`` is on the margin.
HINGE_MARGIN_TOL = 1e-6
#: Gram factor: eigenvalues below ``EIG_RTOL * max eigenvalue`` are zero; one below
#: ``-NEG_EIG_RTOL * max(1, max eigenvalue)`` shows the kernel is not positive semi-definite.
EIG_RTOL = 1e-12
NEG_EIG_RTOL = 1e-8


@dataclass(frozen=True)
class Tolerances:
    """Limits for the errors of a candidate against an oracle (see the module docstring)."""

    name: str
    objective: float
    w: float
    decision: float
    b: float
    alpha: float
    kkt: float
    gap: float
    margin: float = 1e-5
    bound: float = 1e-9
    kkt_exclude: tuple[str, ...] = ()


#: SMO at tol=1e-6 and MDM at tol=1e-8 against an interior-point oracle (accuracy ~1e-8).
TIGHT = Tolerances(
    name="tight", objective=1e-6, w=1e-4, decision=1e-4, b=1e-4, alpha=1e-3, kkt=1e-5, gap=1e-5
)
#: SMO at tol=1e-3: the maximal violation of the KKT conditions is 1e-3 in units of y f.
MEDIUM = Tolerances(
    name="medium", objective=1e-3, w=2e-2, decision=2e-2, b=2e-2, alpha=5e-2, kkt=2e-3, gap=1e-2
)
#: Vanilla Gilbert: sublinear convergence, a relative gap of ~1e-6 on the distance.
LOOSE = Tolerances(
    name="loose", objective=1e-3, w=2e-2, decision=2e-2, b=2e-2, alpha=5e-2, kkt=5e-2, gap=5e-2,
    kkt_exclude=("max_violation",),
)
#: Two oracles (different solvers or forms of the same problem) against each other.
ORACLE = Tolerances(
    name="oracle", objective=1e-5, w=1e-3, decision=1e-3, b=1e-3, alpha=1e-2, kkt=1e-4, gap=1e-4
)
#: A ν-SVC answer over ``rho`` against the C-SVC at ``C = 1 / (rho l)`` (Chang & Lin 2001):
#: TIGHT, but the scaled answer's own C-SVC relative gap is not judged. Its ``m - M`` is the ν
#: answer's (in the units of ``f / rho``), so a certified ν answer meets TIGHT's ``kkt``; its
#: relative gap in C units is not the ν answer's gap and is not implied by it.
NU_C_TIGHT = Tolerances(
    name="tight (nu -> C)", objective=TIGHT.objective, w=TIGHT.w, decision=TIGHT.decision,
    b=TIGHT.b, alpha=TIGHT.alpha, kkt=TIGHT.kkt, gap=math.inf)

PRESETS: dict[str, Tolerances] = {t.name: t for t in (TIGHT, MEDIUM, LOOSE, ORACLE)}


def get_tolerances(spec: str | Tolerances) -> Tolerances:
    """The preset named ``spec`` (``"tight"``, ``"medium"``, ``"loose"``, ``"oracle"``).

    A :class:`Tolerances` instance is returned unchanged; anything else is a ``ValueError``
    naming the argument ``tolerances``.
    """
    if isinstance(spec, Tolerances):
        return spec
    if not isinstance(spec, str) or spec not in PRESETS:
        raise ValueError(f"`tolerances` must be one of {tuple(PRESETS)} or a Tolerances; "
                         f"got {spec!r}.")
    return PRESETS[spec]


def preset_for(tol: float, method: str = "") -> Tolerances:
    """The preset a candidate asked to solve to ``tol`` is judged by.

    ``tol`` is the candidate's own stopping tolerance (``SVMSolution.tol``): LIBSVM's ``m - M``
    for SMO, the relative gap for the nearest-point methods. Vanilla Gilbert (``method``
    ``"gilbert"``) converges sublinearly and is judged LOOSE; otherwise ``tol <= 1e-6`` is
    TIGHT, ``tol <= 1e-3`` MEDIUM, anything looser (or unknown, NaN) LOOSE.
    """
    if method.split("/")[0] == "gilbert" or not math.isfinite(tol) or tol > 1e-3:
        return LOOSE
    return TIGHT if tol <= 1e-6 else MEDIUM

#: ``MaxMarginLinearClassifier``: the smallest relative duality gap its ``tol`` asks of a
#: problem's certificate (below it the float64 objectives' round-off decides, not the solver).
LINEAR_GAP_FLOOR = 1e-14
