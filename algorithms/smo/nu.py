r"""ν-SVC and one-class SVM by SMO: LIBSVM's ``solve_nu_svc`` and ``solve_one_class``.

Both run the SMO package's loop (:func:`~.loops.solve_pairs`) on LIBSVM's scaling of their
duals, box ``[0, 1]`` and linear term ``p = 0`` (``scalars.linear``, so ``G = Q a`` and the
tracked objective is ``-1/2 a^T Q a``):

* ν-SVC, ``a = l alpha``: ``min 1/2 a^T Q a``, ``sum_{y = +1} a = sum_{y = -1} a = nu l / 2``;
  start ``a_t = min(1, rest)`` in each class in index order; pairs within one class and
  shrinking by class (:mod:`.classwise`, ``Solver_NU``);
* one-class, ``a = nu l alpha``, ``y = e``, ``Q = K``: ``sum a = nu l``; start ``a = 1`` on the
  first ``floor(nu l)`` points and the fraction on the next; the plain working set (``Solver``).

``sample_weight`` (positive ``w``; LIBSVM's ``C_i = W_i``) makes the box ``[0, c_i]``, ``c = l w /
sum w`` (mean 1; the judge's bounds :func:`~maxmargin.certificate_nu.bounds_of` the weights), the
start ``a_t = min(c_t, rest)`` in index order (LIBSVM's, which the above is at ``c = 1``).

``calculate_rho`` is the judge's (:func:`~maxmargin.certificate_nu.certify_nu_svm`,
:func:`~maxmargin.certificate_nu.certify_one_class`): ``rho`` and ``b`` are the exact best
offsets of the answer, in Schölkopf's scaling (``alpha = a / l``, resp. ``a / (nu l)``).

**Tolerance.** The judge's ``kkt_violation`` is LIBSVM's ``m - M`` divided by its ``r`` (``l
rho``, resp. ``nu l rho``): the violation in the units of the decision function LIBSVM returns,
the equivalent C-SVC's. A ν-SVC run stops at LIBSVM's ``m - M < tol min(1, FIRST_FRACTION
r)``, ``r`` estimated in the loop from each class's extremes (:func:`~.classwise.stop_factor`;
``m - M < tol`` alone while that estimate is below ``tol``), so that one run meets ``tol``
where ``r < 1`` (small ``nu``); a one-class run likewise, ``r`` from the extremes of ``G``
(:func:`~.working_set.relative_stop`; ``r < 1`` where ``nu l`` is small or ``gamma`` large:
``K`` near the identity, ``rho`` near ``1 / (nu l)``). When the float64
certificate does not meet ``tol`` the run continues from its ``alpha`` with the exact
gradient, the warm cache and the stop ``m - M < TOL_FRACTION tol r`` (``r`` from the
certificate; at most ``MAX_ROUNDS``); ``precision="auto"`` continues in float64 after the
float32 floor stopped a run and from the second continuation on. The precision policy of the
first run is :func:`~.precision.first_precision`'s; the exact finish of C-SVC does not apply.

**Units.** LIBSVM's ``G = Q a`` grows with the square of the features' scale while ``a`` does
not, so its ``m - M < tol`` (and the squares of ``G`` in the working-set choice) depend on the
units: at features of 1e15 a run cannot stop, at 1e-100 the squares underflow. For the linear
kernel the loop therefore runs on ``X 2^-k`` (:func:`unit_exponent`: an exact rescaling, the
largest entry in ``[1, 2)``), whose ``Q`` is the user's times ``4^-k`` with the same ``a``; the
judge, ``rho``, ``b`` and ``w`` are the user's data's, so a change of units changes no verdict.

**Nearly meeting hulls.** Where ``rho`` falls below what the certificate resolves (the reduced
hulls nearly meet; one-class: the reduced hull nearly holds the origin, as centred data under
the linear kernel), SMO's steps shrink with ``rho`` and ``m - M / rho`` says
little; the verdict then needs the gap too. The first run is therefore certified at
checkpoints (:func:`_run`: ``rho`` shrinks as a run goes on), and a run whose ``rho``
is below the resolution gets one short continuation
(:func:`held_iterations`: where the hulls meet SMO often settles on ``w = 0`` in a few steps);
if that does not certify it, it is finished by Wolfe's method on the reduced hulls from their
own start
(:func:`~maxmargin.algorithms._reduced_hull.wolfe_nu_finish`), whose exact affine minimisations
reach ``w = 0`` at the judge's resolution where the hulls meet; its certified answer is
returned (the message says so), else the continuations go on as above, from Wolfe's answer
where it is the better one and has ``rho > 0`` (at ``rho = 0`` SMO's stop ``m - M < tol r``
is out of reach); when they end less
accurate than Wolfe's answer, that answer is returned as "inaccurate" (with the warning). Not with
``sample_weight`` (the reduced hulls bound every weight alike).
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

import maxmargin._validation as valid
import maxmargin.certificate_nu as nu_judge
import maxmargin.exceptions as exceptions
from maxmargin._threads import check_n_jobs
from maxmargin.algorithms._kernel_cache import S_SLOTS
from maxmargin.algorithms._reduced_hull import wolfe_nu_finish
from maxmargin.algorithms.smo.api import default_max_iter, problem_of
from maxmargin.algorithms.smo.column_sums import cached_sums
from maxmargin.algorithms.smo.loops import MAX_ITER, PRECISION, record_final
from maxmargin.algorithms.smo.precision import PRECISIONS
from maxmargin.algorithms.smo.result import status_and_message
from maxmargin.algorithms.smo.solver import CACHE_DTYPE, Options, Problem, Solver
from maxmargin.algorithms.smo.state import SolverState, new_state
from maxmargin.certificate import Certificate
from maxmargin.kernels import Kernel, make_kernel, own_points, precomputed
from maxmargin.kernels.formulas import KIND_LINEAR
from maxmargin.results import join_messages
from maxmargin.tolerances import SMO_TOL

if TYPE_CHECKING:  # the result container lives beside the oracles (imported when solving)
    from maxmargin.formulations.nu import NuSolution

__all__ = ["nu_smo", "one_class_smo", "MAX_ROUNDS", "TOL_FRACTION", "FIRST_FRACTION",
           "initial_alpha", "unit_exponent"]

#: At most this many continuations after the first run.
MAX_ROUNDS = 4
#: A continuation stops at LIBSVM's ``m - M`` below this fraction of ``tol r``.
TOL_FRACTION = 0.5
#: A first run stops at LIBSVM's ``m - M`` below this fraction of ``tol r`` too where ``r < 1 /
#: FIRST_FRACTION`` (``r`` estimated in the loop: :func:`~.working_set.relative_stop`).
FIRST_FRACTION = 0.6
#: A continuation held while ``rho`` is below the certificate's resolution runs at most this
#: many iterations per variable, and at least :data:`HELD_MIN_ITER`.
HELD_ITER_PER_POINT = 20
HELD_MIN_ITER = 2_000


def initial_alpha(l: int, nu: float, y: np.ndarray | None = None,
                  box: np.ndarray | None = None) -> np.ndarray:
    """LIBSVM's starting point in its scaling (module docstring): ν-SVC (labels ``y``) ``a_t =
    min(1, rest)`` in each class from ``rest = nu l / 2``; one-class (``y`` None) 1 on the
    first ``floor(nu l)`` points and ``nu l - floor(nu l)`` on the next; ``a_t = min(box_t,
    rest)`` from ``rest = nu l`` with per-sample bounds ``box``."""
    a = np.zeros(l)
    groups = [np.arange(l)] if y is None else [np.flatnonzero(y == s) for s in (1.0, -1.0)]
    for idx in groups:
        rest = nu * l if y is None else 0.5 * nu * l
        if box is None:  # 1 on the first k = floor(rest), then rest - k (each 1 subtracted
            k = min(int(rest), idx.shape[0])  # from rest exactly: the same bits)
            a[idx[:k]] = 1.0
            if k < idx.shape[0]:
                a[idx[k]] = rest - k
            continue
        for t in idx:
            a[t] = min(box[t], rest)
            rest -= a[t]
    return a


def unit_exponent(X: Any) -> int:
    """``k`` with the largest ``|X_ij| 2^-k`` in ``[1, 2)`` (0 for an all-zero ``X``; within
    ``[-500, 500]``, so that ``4^k`` is a float64): ``X 2^-k`` is exact (barring subnormal
    entries) and has ``Q`` of order one."""
    top = float(abs(X).max()) if X.shape[0] * X.shape[1] else 0.0
    k = math.frexp(top)[1] - 1 if top > 0.0 and math.isfinite(top) else 0
    return min(max(k, -500), 500)


class NuSolver(Solver):
    """:class:`~.solver.Solver` on LIBSVM's ν-SVC or one-class dual: its certificate is the
    ν judge's, in Schölkopf's scaling (``alpha = a / scale``)."""

    def __init__(self, problem: Problem, options: Options, st: SolverState, nu: float,
                 one_class: bool, weights: np.ndarray | None = None, unit: float = 1.0) -> None:
        super().__init__(problem, options, st)
        self.nu, self.one_class, self.weights = nu, one_class, weights
        self.unit = unit  # the user's Q over the loop's (module docstring, "Units")
        self.classwise = None if one_class else True
        l = problem.y.shape[0]
        self.scale = nu * l if one_class else float(l)
        self.user_X = problem.X if problem.X_user is None else problem.X_user

    def schoelkopf(self) -> np.ndarray:
        """``alpha`` of the judge: ``a / scale``, projected onto the feasible set."""
        a = self.st.alpha / self.scale
        if self.one_class:
            return nu_judge.project_one_class(a, self.nu, self.weights)
        return nu_judge.project_nu(a, self.problem.y, self.nu, self.weights)

    def judge(self, g: np.ndarray | None) -> Certificate:
        """The ν judge's certificate of ``alpha / scale``, with ``g / scale`` when that
        ``alpha`` is already feasible and the data are the user's (else, or ``g`` None, the
        judge sums ``g`` itself, as the outside judge does: linear data from their mean)."""
        p = self.problem
        alpha = self.st.alpha / self.scale
        own = (g is not None and p.X is self.user_X and p.kernel.kind != KIND_LINEAR
               and np.array_equal(self.schoelkopf(), alpha))
        gs = g / self.scale if own else None
        if self.one_class:
            return nu_judge.certify_one_class(alpha, self.user_X, self.nu, p.kernel, g=gs,
                                              weights=self.weights)
        return nu_judge.certify_nu_svm(alpha, self.user_X, p.y, self.nu, p.kernel, g=gs,
                                       weights=self.weights)

    def start_sums(self, first: str) -> tuple[np.ndarray, np.ndarray]:
        """``(g_B, g)`` at the starting point: ``g = K (a o y)`` and its bounded part ``g_B =
        sum_{a_j = C_j} C_j y_j K(x_j, .)`` (``G_bar``), in float64. When the first phase is
        float64 and its cache has a slot for every starting column, they are computed into
        it, as LIBSVM's start computes them (:func:`~.column_sums.cached_sums` with
        ``keep``): the loop then finds them cached, and the certificate sums from that cache
        too (:attr:`~.solver.Solver.small_sums_cached`); else by the kernel pass
        (:meth:`~.solver.Solver.kernel_sums`)."""
        st, y = self.st, self.problem.y
        at = np.flatnonzero(st.alpha >= st.C)
        part = np.flatnonzero((st.alpha > 0.0) & (st.alpha < st.C))
        warm = (CACHE_DTYPE[first] == np.float64
                and at.size + part.size <= self.start_cache(first).state[S_SLOTS])
        self.small_sums_cached = warm

        def sums(idx: np.ndarray, coef: np.ndarray) -> np.ndarray:
            g = cached_sums(self.cache, self.problem.kd, idx, coef, keep=True) if warm else None
            return self.kernel_sums(idx, coef) if g is None else g

        g_at = sums(at, st.C[at] * y[at])
        return g_at, g_at + sums(part, st.alpha[part] * y[part]) if part.size else g_at

    def unresolved(self, cert: Certificate) -> bool:
        """Whether ``cert`` has ``rho`` below its resolution
        (:func:`~maxmargin.certificate_nu.rho_unresolved`: the reduced hulls nearly meet; the
        one-class SVM: its reduced hull nearly holds the origin)."""
        return nu_judge.rho_unresolved(cert, self.schoelkopf(),
                                       nu_judge.hull_weight(self.nu, self.one_class))

    def start_from(self, alpha: np.ndarray) -> None:
        """Move the state to ``alpha`` (Schölkopf's scaling, feasible) with its exact
        gradient."""
        self.st.alpha[:] = alpha * self.scale
        self.restart_from(self.certify()[0])

    def set_max_iter(self, max_iter: int) -> None:
        """The cap on all iterations from now on."""
        self.options = dataclasses.replace(self.options, max_iter=max_iter)

    def set_tol(self, tol: float) -> None:
        """The loop's stop ``m - M < tol`` (LIBSVM's scaling) from now on, without the first
        run's relative stop."""
        self.st.scalars.tol_r = 0.0
        self.st = self.st._replace(tol=tol)
        self.options = dataclasses.replace(self.options, tol=tol)


def _solve(solver: NuSolver, first: str, precision: str, tol: float,
           hold: bool = False, warm: bool = False) -> tuple[int, Certificate, bool]:
    """The first run at LIBSVM's ``m - M < tol``, then continuations until the certificate
    meets ``tol`` (module docstring), each run in checkpointed stretches (:func:`_run`);
    ``hold``: while ``rho`` is below the certificate's resolution
    (:meth:`NuSolver.unresolved`) one continuation of at most :func:`held_iterations` more,
    then none, whether ``rho`` is resolved after it or not (a ``rho`` that was once
    unresolved stays small: SMO's iterations grow with ``1 / rho``).
    ``warm``: the first run keeps the cache :meth:`NuSolver.start_sums` filled. Returns
    ``(outcome, certificate, held)``, ``held`` when the hold stopped it (the caller tries
    Wolfe's finish, then goes on)."""
    outcome, g, cert = _run(solver, first, tol, hold, warm=warm)
    phase, held, cap = first, False, solver.options.max_iter
    for rounds in range(MAX_ROUNDS):
        unresolved = hold and solver.unresolved(cert)
        if cert.meets(tol) or solver.iterations >= cap or held:
            break
        held = held or unresolved
        r = cert.margin * solver.scale / solver.unit  # LIBSVM's r in the loop's units
        target = TOL_FRACTION * tol * r if r > 0.0 and math.isfinite(r) else 0.0
        solver.set_tol(max(min(target, 0.5 * solver.st.tol), 1e-15 * solver.problem.radius2))
        solver.set_max_iter(min(cap, solver.iterations + held_iterations(solver)) if unresolved
                            else cap)
        solver.restart_from(g)
        if precision == "auto" and (outcome == PRECISION or rounds > 0):
            phase = "double"  # the float32 floor, or a second continuation: float64
        outcome, g, cert = _run(solver, phase, tol, hold, refine=True)  # the warm cache
    solver.set_max_iter(cap)
    return outcome, cert, held and not cert.meets(tol)


def _run(solver: NuSolver, phase: str, tol: float, hold: bool, refine: bool = False,
         warm: bool = False) -> tuple[int, np.ndarray, Certificate]:
    """One run of the loop (:meth:`~.solver.Solver.solve` with ``phase``, ``refine``,
    ``warm``) and ``(outcome, g, certificate)`` of its answer (:func:`_certified`). ``hold``:
    in stretches of :func:`held_iterations` times ``4^k`` (k = 0, 1, ...), each certified and
    the next restarted from the exact gradient, until one stops by itself, meets ``tol`` or
    ends with ``rho`` below the certificate's resolution (:meth:`NuSolver.unresolved`):
    ``rho`` shrinks as a run goes on, and there SMO's iterations grow with ``1 / rho``, so the
    caller holds it and tries Wolfe's finish before the run spends ``max_iter``; a stalled
    float32 run is caught at a checkpoint as well."""
    cap = solver.options.max_iter
    stretch = held_iterations(solver) if hold else cap
    while True:
        solver.set_max_iter(min(cap, solver.iterations + stretch))
        outcome = solver.solve(phase, refine=refine, warm=warm)
        g, cert = _certified(solver, tol)
        if (outcome != MAX_ITER or solver.iterations >= cap or cert.meets(tol)
                or solver.unresolved(cert)):
            solver.set_max_iter(cap)
            return outcome, g, cert
        solver.restart_from(g)
        warm, stretch = True, 4 * stretch


def _certified(solver: NuSolver, tol: float) -> tuple[np.ndarray, Certificate]:
    """``g`` and the certificate of a run's answer. :meth:`~.solver.Solver.certify`
    updates the last ``g`` by the columns that moved, whose round-off adds up over
    continuations; so an answer that meets ``tol`` is judged again with ``g`` summed afresh, as
    the outside judge sums it (the verdict is the outside judge's: where it is not met, the
    continuations go on). The first certificate of a solver sums ``g`` afresh already."""
    fresh = solver.last_certified is None
    g, cert = solver.certify()
    return g, solver.judge(None) if cert.meets(tol) and not fresh else cert


def held_iterations(solver: NuSolver) -> int:
    """The iterations of a held continuation: ``HELD_ITER_PER_POINT`` per variable, at least
    ``HELD_MIN_ITER`` (a run whose hulls meet settles on ``w = 0`` in a few)."""
    return max(HELD_MIN_ITER, HELD_ITER_PER_POINT * solver.st.alpha.shape[0])


def _result(solver: NuSolver, outcome: int, cert: Certificate, tol: float, precision: str,
            start: float) -> NuSolution:
    """The :class:`~maxmargin.formulations.nu.NuSolution` of a finished run."""
    from maxmargin.formulations.nu import NuSolution

    p, st = solver.problem, solver.st
    alpha = solver.schoelkopf()
    X, l = solver.user_X, p.y.shape[0]
    meet = nu_judge.below_resolution(cert, alpha,
                                     nu_judge.hull_weight(solver.nu, solver.one_class))
    rho, b = (0.0, 0.0) if meet else (cert.margin, cert.b)
    w = None
    if p.kernel.kind == KIND_LINEAR:
        v = alpha if solver.one_class else alpha * p.y
        rows = X - X.mean(axis=0) if not solver.one_class and isinstance(X, np.ndarray) else X
        w = np.zeros(X.shape[1]) if meet else np.asarray(rows.T @ v).ravel()
    iterations = int(st.scalars["iteration"])
    gap = float(record_final(st, solver.cache))  # m - M; nu-SVC: by class
    if not solver.one_class:  # max_s (m_s - M_s) over the classes (the loop ends unshrunk)
        v = -st.yT * st.G
        gap = max(float(np.max(v[st.in_up & cls], initial=-np.inf))
                  + float(np.max(-v[st.in_low & cls], initial=-np.inf))
                  for cls in (st.yT > 0, st.yT < 0))
    dtype = "float32" if solver.cache.data.dtype == np.float32 else "float64"
    stats = (f"{iterations} iterations ({' then '.join(solver.phases)} kernel cache), solver's "
             f"m - M = {gap * solver.unit:.3g} (LIBSVM's scaling); {cert.summary()}")
    if meet:
        stats += "; ||w|| is below the certificate's float64 resolution: w = 0, rho = 0"
    # the equivalent C-SVC's C max K_ii, 1 / r in LIBSVM's scaling: large when rho is small
    r = cert.margin * solver.scale
    kappa = p.radius2 * solver.unit / r if r > 0.0 else math.inf
    status, message = status_and_message(
        outcome, cert, tol, precision, iterations, solver.hull_eps, dtype, stats, kappa,
        "the reduced hulls nearly meet (rho small: the equivalent C-SVC's C max K(x, x) = "
        "{kappa:.3g}), and SMO's iterations grow with 1 / rho; raise nu")
    one = solver.one_class
    C = 1.0 / (rho * l) if not one and rho > 0.0 else math.nan
    return NuSolution(
        alpha, b, rho, w, cert.primal_objective, cert.dual_objective, status, iterations,
        "one_class_smo" if one else "nu_smo", solver.nu, "one_class" if one else "nu_svc",
        C=C, hulls_meet=bool(meet), X_train=X, y_train=None if one else p.y, kernel=p.kernel,
        message=message, runtime=time.perf_counter() - start, certificate=cert)


def _finished(answer: NuSolution, start: float, note: str, status: str | None = None
              ) -> NuSolution:
    """Wolfe's answer (:func:`~maxmargin.algorithms._reduced_hull.wolfe_nu_finish`) as
    ``nu_smo``'s (``one_class_smo``'s), its message led by ``note``."""
    method = "one_class_smo" if answer.problem == "one_class" else "nu_smo"
    return dataclasses.replace(answer, method=method, runtime=time.perf_counter() - start,
                               status=answer.status if status is None else status,
                               message=join_messages(note, answer.message))


def _fit(X: Any, y: Any, nu: Any, kernel: Any, tol: Any, max_iter: Any, settings: dict
         ) -> NuSolution:
    """Validate (``nu`` against ``nu_max`` before any kernel work), build the Q-matrix and the
    solver at LIBSVM's starting point, run, report; ``y`` None is the one-class problem."""
    from maxmargin.formulations.nu import check_nu

    start = time.perf_counter()
    kernel, X = precomputed(kernel, X)
    points = own_points(kernel)
    one_class = y is None
    if one_class:
        X = valid.check_X(X, sparse=True, points=points)
    else:
        X, y = valid.check_Xy(X, y, sparse=True, points=points)
    labels = np.ones(X.shape[0]) if one_class else y
    weights = valid.check_sample_weight(settings["sample_weight"], labels)
    nu = check_nu(nu, y, weights)
    options = Options(
        tol=valid.check_positive(tol, "tol"), working_set="wss2",
        shrinking=valid.check_bool(settings["shrinking"], "shrinking"),
        max_iter=valid.check_max_iter(max_iter, default=default_max_iter(X.shape[0])),
        cache_size=valid.check_positive(settings["cache_size"], "cache_size"), exact_finish=False,
        threads=check_n_jobs(settings["n_jobs"]) or 1)
    precision = valid.check_choice(settings["precision"], "precision", PRECISIONS)
    kern = make_kernel(kernel, gamma=settings["gamma"], degree=settings["degree"],
                       coef0=settings["coef0"], X=X)
    k = unit_exponent(X) if kern.kind == KIND_LINEAR else 0
    problem, QD, first = problem_of(X * 2.0**-k if k else X, labels, 1.0, None, kern, options,
                                    precision, centre=not one_class)
    problem = dataclasses.replace(problem, X_user=X)
    l = labels.shape[0]
    box = None if weights is None else l * weights / float(weights.sum())
    st = new_state(problem.kd, QD, 1.0 if box is None else box, options.tol, 1)
    st.scalars.linear = 0.0
    st.scalars.tol_r = FIRST_FRACTION
    st.alpha[:] = initial_alpha(l, nu, y, box)
    solver = NuSolver(problem, options, st, nu, one_class, weights, unit=4.0**k)
    g_at, g = solver.start_sums(first)
    solver.restart_from(g, g_bounded=g_at)
    finish = weights is None  # Wolfe's reduced hulls have one bound for every point
    outcome, cert, held = _solve(solver, first, precision, options.tol, hold=finish, warm=True)
    went_on = ""  # SMO went on from Wolfe's answer
    if held:
        rho = cert.margin
        meet = ("the reduced hull nearly holds the origin" if one_class
                else "the reduced hulls nearly meet")
        hulls = "the reduced hull" if one_class else "the reduced hulls"
        answer = wolfe_nu_finish(solver.user_X, y, kern, nu, options.tol)
        if answer is not None and (answer.hulls_meet or answer.certificate.meets(options.tol)):
            return _finished(answer, start, f"SMO's rho fell below the certificate's "
                             f"resolution (it stopped at rho = {rho:.3g}: {meet}); Wolfe's "
                             f"method on {hulls} finished it")
        if (answer is not None and answer.certificate.margin > 0.0
                and answer.certificate.kkt_violation < cert.kkt_violation):
            solver.start_from(answer.alpha)  # SMO goes on from Wolfe's answer, the better one
            went_on = (f"SMO's rho fell below the certificate's resolution (rho = {rho:.3g}: "
                       f"{meet}); SMO went on from the answer of Wolfe's method on {hulls}")
        outcome, cert, _ = _solve(solver, first, precision, options.tol)
        if answer is not None and (answer.certificate.kkt_violation < cert.kkt_violation
                                   or not math.isfinite(cert.kkt_violation)):
            note = (f"not certified: {meet} (rho = {rho:.3g}, below the certificate's "
                    f"resolution) and neither SMO nor Wolfe's method on {hulls} reached tol = "
                    f"{options.tol:g}; this is Wolfe's answer, the better one. Raise nu (the "
                    "hulls then stand further apart) or tol")
            warnings.warn(f"nu_smo: {note}: {answer.certificate.summary()}",
                          exceptions.ConvergenceWarning, stacklevel=3)
            return _finished(answer, start, note, status="inaccurate")
    result = _result(solver, outcome, cert, options.tol, precision, start)
    return dataclasses.replace(result, message=join_messages(went_on, result.message))


def nu_smo(X: Any, y: Any, nu: float = 0.5, kernel: str | Kernel = "linear",
           tol: float = SMO_TOL, max_iter: int | None = None, *, gamma: float | str = "scale",
           degree: int = 3, coef0: float = 0.0, cache_size: float = 200.0,
           shrinking: bool = True, precision: str = "auto",
           n_jobs: int | None = None, sample_weight: Any = None) -> NuSolution:
    """Schölkopf's ν-SVC by SMO (LIBSVM's ``Solver_NU``; module docstring).

    ``min 1/2 ||w||^2 - nu rho + (1/l) sum xi_i`` s.t. ``y_i (w . phi(x_i) + b) >= rho -
    xi_i``; dual ``min 1/2 alpha^T Q alpha``, ``0 <= alpha <= 1/l``, ``y . alpha = 0``, ``sum
    alpha >= nu``. Arguments as :func:`~.api.smo`'s (no history is kept); ``nu`` in ``(0,
    nu_max]``, ``nu_max = 2 * min(l_+, l_-) / l`` (a ``ValueError`` naming ``nu_max`` before
    any kernel work). ``sample_weight`` (positive): bounds ``alpha_i <= w_i / sum w`` (LIBSVM's
    ``C_i = W_i``; ``nu_max`` of the class sums of ``w``).

    Returns
    -------
    NuSolution
        ``alpha`` in Schölkopf's scaling, ``rho``, ``b`` (``f(x) = sum alpha_i y_i K(x_i, x) +
        b``), ``C = 1 / (rho l)`` (the C-SVC with the same classifier, solution ``alpha /
        rho``); ``status`` ``"optimal"`` only when the float64 certificate's ``kkt_violation``
        (LIBSVM's ``m - M`` over ``l rho``) is below ``tol``; else ``"max_iter"`` or
        ``"inaccurate"`` with a :class:`~maxmargin.exceptions.ConvergenceWarning`.
    """
    return _fit(X, y, nu, kernel, tol, max_iter, {
        "gamma": gamma, "degree": degree, "coef0": coef0, "cache_size": cache_size,
        "shrinking": shrinking, "precision": precision, "n_jobs": n_jobs,
        "sample_weight": sample_weight})


def one_class_smo(X: Any, nu: float = 0.5, kernel: str | Kernel = "linear",
                  tol: float = SMO_TOL, max_iter: int | None = None, *,
                  gamma: float | str = "scale", degree: int = 3, coef0: float = 0.0,
                  cache_size: float = 200.0, shrinking: bool = True,
                  precision: str = "auto", n_jobs: int | None = None,
                  sample_weight: Any = None) -> NuSolution:
    """Schölkopf's one-class SVM by SMO (LIBSVM's ``solve_one_class``; module docstring).

    ``min 1/2 ||w||^2 + (1/(nu l)) sum xi_i - rho`` s.t. ``w . phi(x_i) >= rho - xi_i``; dual
    ``min 1/2 alpha^T K alpha``, ``0 <= alpha <= 1/(nu l)``, ``sum alpha = 1``; ``nu`` in ``(0,
    1]``. Returns a ``NuSolution`` with ``f(x) = sum alpha_i K(x_i, x) - rho`` (``b = -rho``;
    scikit-learn's ``OneClassSVM`` returns ``nu l`` times it); ``status`` as :func:`nu_smo`'s.
    ``sample_weight`` (positive): bounds ``alpha_i <= w_i / (nu sum w)`` (LIBSVM's ``C_i = W_i``;
    OneClassSVM's ``nu sum w`` times ``alpha``).
    """
    return _fit(X, None, nu, kernel, tol, max_iter, {
        "gamma": gamma, "degree": degree, "coef0": coef0, "cache_size": cache_size,
        "shrinking": shrinking, "precision": precision, "n_jobs": n_jobs,
        "sample_weight": sample_weight})
