r"""``maxmargin audit --problem nu-svc|one-class``: other solvers' ν-SVC and one-class answers.

**Problems.** Each case of the catalogue, a campaign or a data file gives its ``(X, y,
kernel)`` (``C`` is ignored) and, per grid point, one problem (a case named
``<case>/nu<f>max`` or ``<case>/nu<nu>``, :func:`nu_cases`):

* ν-SVC at ``nu = f nu_max`` for ``f`` in :data:`NU_FRACTIONS` (0.1, 0.5, 0.9), ``nu_max = 2
  min(l_+, l_-) / l`` (a case with one class alone has none);
* one-class on ``X`` (``y`` ignored) at ``nu`` in :data:`ONE_CLASS_NUS` (0.05, 0.5).

**Solvers** (:data:`NU_PEERS`): ``libsvm`` (scikit-learn's ``NuSVC`` / ``OneClassSVM``),
``sklearnex`` (oneDAL's ``NuSVC``; it has no one-class solver), ``thundersvm`` (both) when
installed, ``MODULE:CALLABLE``, and maxmargin's ``nu_smo`` / ``one_class_smo`` as the
reference. A fitted model is read in Schölkopf's scaling (that of
:mod:`maxmargin.certificate_nu`): ``NuSVC`` keeps ``dual_coef_ = y a / r``, ``intercept_ = b_L
/ r`` (LIBSVM's ``a = l alpha``, ``r = l rho``), so with ``t = sum |dual_coef_| / nu``,
``alpha = |dual_coef_| / t``, ``b = intercept_ / t``, ``rho = 1 / t``; ``OneClassSVM`` keeps
``dual_coef_ = nu l alpha`` and ``intercept_ = -nu l rho``. The intercept's sign is the one
that reproduces the model's own ``decision_function`` (:func:`.audit._orientation`).

A user's ``MODULE:CALLABLE`` is ``f(X, y, nu, kernel=..., gamma=..., degree=..., coef0=...)
-> (alpha, b, rho)`` or ``(alpha, b, rho, converged)`` for ν-SVC (``y`` in -1/+1, ``f(x) =
sum_i alpha_i y_i K(x_i, x) + b``, margin ``rho``) and ``f(X, nu, kernel=..., ...) -> (alpha,
rho)`` or ``(alpha, rho, converged)`` for one-class (``f(x) = sum_i alpha_i K(x_i, x) -
rho``), ``alpha`` in Schölkopf's scaling (ν-SVC: ``0 <= alpha_i <= 1/l``, ``y . alpha = 0``,
``sum alpha >= nu``; one-class: ``0 <= alpha_i <= 1/(nu l)``, ``sum alpha = 1``), as
:func:`~maxmargin.algorithms.nu_smo` and :func:`~maxmargin.algorithms.one_class_smo` return
them; it also gets ``tol=`` when it names that parameter, and is taken to claim convergence
without the last value.

**Judging** (:func:`judge_nu`), in float64: the certificate of
:func:`~maxmargin.certificate_nu.certify_nu_svm` / :func:`~maxmargin.certificate_nu.
certify_one_class` (``kkt_max`` is LIBSVM's per-class ``m - M`` over ``rho``, the units of the
decision function LIBSVM returns; ``m_i = y_i g_i``, ``g = K (alpha y)``), the offsets against
the interval ``alpha`` allows (each class ``c``, ``s_+ = rho - b``, ``s_- = rho + b``, one-class
``s = rho``, must lie between ``max_{alpha_i > 0} m_i`` and ``min_{alpha_i < U} m_i`` of its
class), feasibility, and weak duality both ways against the CVXPY oracle
(:func:`~maxmargin.formulations.nu_svm_dual`, :func:`~maxmargin.formulations.one_class_dual`;
up to :data:`~.case.ORACLE_MAX_GRAM_N` points). A row is certified when ``m - M < tol``, the
offsets within ``tol`` and the feasibility within ``AUDIT_FEASIBILITY``. A **wrong answer** is
one called converged that is refuted at the loose preset (1e-3): ``m - M`` or the offsets'
distance from their interval at or above it both in the decision function's units (over
``rho``) and in LIBSVM's own (``l`` times Schölkopf's, one-class ``nu l`` times: LIBSVM's
stopping rule ``m - M < tol`` recomputed), dual infeasibility above ``AUDIT_FEASIBILITY``,
weak duality broken, or a non-finite answer. At ``||w||`` below the certificate's resolution
(:func:`~maxmargin.certificate_nu.below_resolution`: the reduced hulls meet) ``m - M`` is 0
and the offsets are not judged.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from maxmargin.certificate import TINY, decision_values, objective_roundoff, weak_duality
from maxmargin.certificate_nu import (
    below_resolution,
    certify_nu_svm,
    certify_one_class,
    hull_weight,
    nu_max,
    project_nu,
    project_one_class,
    w_floor,
)
from maxmargin.certify_models import fitted_array
from maxmargin.kernels import Kernel, LinearKernel
from maxmargin.tolerances import AUDIT_FEASIBILITY
from maxmargin.verification.audit import (
    PRESETS,
    WRONG_PRESET,
    Answer,
    AuditOutcome,
    AuditRun,
    Peer,
    _dual_answer,
    _orientation,
    _sklearn_fit,
    _svc_keywords,
    _UserFit,
    call_user,
    resolve_peers,
    run_audit,
    user_callable,
)
from maxmargin.verification.case import ORACLE_MAX_GRAM_N, Case
from maxmargin.verification.context import Context

__all__ = ["PROBLEMS", "NU_FRACTIONS", "ONE_CLASS_NUS", "NU_PEERS", "NU_REFERENCES", "NuTask",
           "nu_cases", "nu_of", "judge_nu", "resolve_nu_peers", "run_nu_audit", "solve_nu_oracle"]

#: The problems of ``maxmargin audit --problem`` besides the default ``c-svc``.
PROBLEMS = ("nu-svc", "one-class")
#: ν-SVC's grid: these fractions of ``nu_max = 2 * min(l_+, l_-) / l``.
NU_FRACTIONS = (0.1, 0.5, 0.9)
#: One-class's grid of ``nu``.
ONE_CLASS_NUS = (0.05, 0.5)
_TAG = "nu="


@dataclass(frozen=True)
class NuTask:
    """One problem as a solver is given it (``y`` None: one-class)."""

    X: Any
    y: np.ndarray | None
    nu: float
    kernel: Kernel
    tol: float


# --- the problems -----------------------------------------------------------------------------
def nu_cases(cases: Sequence[Case], problem: str) -> list[Case]:
    """Each case's problems of ``problem`` on the grid (module docstring), as cases named
    ``<case>/nu<f>max`` (ν-SVC) or ``<case>/nu<nu>`` (one-class) carrying a tag ``nu=<nu>``."""
    out = []
    for case in cases:
        if problem == "one-class":
            grid = [(f"{case.name}/nu{nu:g}", nu) for nu in ONE_CLASS_NUS]
        else:
            top = nu_max(case.y)
            grid = [(f"{case.name}/nu{f:g}max", f * top) for f in NU_FRACTIONS if top > 0]
        out += [dataclasses.replace(case, name=name, methods=(), expected_status="optimal",
                                    answer=None, tags=(*case.tags, f"{_TAG}{nu!r}"))
                for name, nu in grid]
    return out


def nu_of(case: Case) -> float:
    """The ``nu`` of a problem of :func:`nu_cases`."""
    for tag in case.tags:
        if tag.startswith(_TAG):
            return float(tag[len(_TAG):])
    raise ValueError(f"case {case.name!r} is not a nu-SVC or one-class problem (no nu tag).")


# --- the solvers ------------------------------------------------------------------------------
def _nu_svc_fit(factory: Callable[..., Any]) -> Callable[[NuTask], Answer]:
    def fit(task: NuTask) -> Answer:
        model = factory(nu=task.nu, tol=task.tol, **_svc_keywords(task.kernel))
        model, converged, runtime = _sklearn_fit(model, task.X, task.y)
        read = _dual_answer(model, task, converged, runtime)  # alpha = l alpha_S / r, b / r
        t = float(np.sum(read.alpha)) / task.nu
        t = t if t > 0 else math.nan
        return dataclasses.replace(read, alpha=read.alpha / t, b=read.b / t, rho=1.0 / t)

    return fit


def _one_class_fit(factory: Callable[..., Any]) -> Callable[[NuTask], Answer]:
    def fit(task: NuTask) -> Answer:
        model = factory(nu=task.nu, tol=task.tol, **_svc_keywords(task.kernel))
        model, converged, runtime = _sklearn_fit(model, task.X, None)
        support = fitted_array(model.support_).astype(np.int64)
        coef = fitted_array(model.dual_coef_).astype(np.float64).ravel()
        intercept = float(fitted_array(model.intercept_).ravel()[0])
        intercept *= _orientation(model, task, support, coef, intercept)
        if np.any(coef < 0) and not np.any(coef > 0):  # the other overall sign
            coef, intercept = -coef, -intercept
        scale = task.nu * task.X.shape[0]  # LIBSVM's a = nu l alpha, rho_L = nu l rho
        alpha = np.zeros(task.X.shape[0])
        alpha[support] = coef / scale
        iterations = int(np.max(fitted_array(getattr(model, "n_iter_", [-1]))))
        return Answer(converged, runtime, alpha=alpha, b=intercept / scale,
                      rho=-intercept / scale, iterations=iterations,
                      claim="optimal" if converged else "max_iter")

    return fit


@dataclass(frozen=True)
class _Estimator:
    """``module.name(**kw)``, imported when called (ThunderSVM's poly kernel is
    ``"polynomial"``: its ``"poly"`` makes it exit the process)."""

    module: str
    name: str

    def __call__(self, **kw: Any) -> Any:
        import importlib

        if self.module == "thundersvm" and kw.get("kernel") == "poly":
            kw["kernel"] = "polynomial"
        return getattr(importlib.import_module(self.module), self.name)(**kw)


def _maxmargin_fit(task: NuTask) -> Answer:
    from maxmargin.algorithms import nu_smo, one_class_smo

    if task.y is None:
        sol = one_class_smo(task.X, task.nu, kernel=task.kernel, tol=task.tol)
    else:
        sol = nu_smo(task.X, task.y, task.nu, kernel=task.kernel, tol=task.tol)
    return Answer(sol.status == "optimal", sol.runtime, alpha=np.array(sol.alpha), b=sol.b,
                  rho=sol.rho, iterations=sol.iterations, claim=sol.status)


class _UserNuFit(_UserFit):
    """A user's function (module docstring), imported again where it runs."""

    def __call__(self, task: NuTask) -> Answer:  # type: ignore[override]
        one = task.y is None
        args = (task.X, task.nu) if one else (task.X, task.y, task.nu)
        out, runtime = call_user(self.module, self.attr, self.directory, args, task.kernel,
                                 task.tol)
        size = 2 if one else 3
        if not isinstance(out, tuple | list) or len(out) not in (size, size + 1):
            shape = "(alpha, rho[, converged])" if one else "(alpha, b, rho[, converged])"
            raise TypeError(f"{self.module}:{self.attr} must return {shape}; got "
                            f"{type(out).__name__}")
        converged = bool(out[size]) if len(out) > size else True
        alpha = np.asarray(out[0], dtype=np.float64).ravel()
        rho = float(out[size - 1])
        return Answer(converged, runtime, alpha=alpha, b=-rho if one else float(out[1]),
                      rho=rho)


def _peer(problem: str, name: str, summary: str, fit: Callable[[NuTask], Answer],
          requires: str = "") -> Peer:
    return Peer(name, summary, fit, problem=problem, hard_margin=True, requires=requires,
                judge=judge_nu, reference=functools.partial(
                    solve_nu_oracle, one_class=problem == "one-class"))


def resolve_nu_peers(names: Sequence[str], problem: str) -> list[Peer]:
    """The peers named for ``problem`` (built-in names or ``MODULE:CALLABLE``), checked before
    any work: a ``ValueError`` naming the solver that does not exist, is not installed or has
    no solver of that problem (:func:`~.audit.resolve_peers`)."""
    return resolve_peers(names, NU_PEERS[problem], functools.partial(_user_peer, problem),
                         f"a {problem} solver")


def _user_peer(problem: str, spec: str) -> Peer:
    """The peer of a user's ``MODULE:CALLABLE`` (module docstring), imported now."""
    module, attr, takes_tol = user_callable(spec, tuple(NU_PEERS[problem]))
    peer = _peer(problem, spec, f"{spec} (user's function)",
                 _UserNuFit(module, attr, os.getcwd()))
    return dataclasses.replace(peer, takes_tol=takes_tol)


def run_nu_audit(peers: Sequence[Peer], cases: Sequence[Case], problem: str,
                 **options: Any) -> AuditRun:
    """:func:`~.audit.run_audit` of ``peers`` on the ``problem``'s grid of each case
    (:func:`nu_cases`), the problem's reference beside them; ``options`` as ``run_audit``'s."""
    reference = NU_PEERS[problem][NU_REFERENCES[problem]]
    return run_audit(peers, nu_cases(cases, problem), reference_peer=reference,
                     problem=problem, **options)


# --- judging ----------------------------------------------------------------------------------
def _answer(ctx: Context, peer: Peer, tol: float) -> Answer:
    """The peer's answer on the case's problem (a peer without a tolerance runs once)."""
    cache = ctx.__dict__.setdefault("audit_answers", {})
    key = (peer.name, tol if peer.takes_tol else None)
    if key not in cache:
        c = ctx.case
        y = None if peer.problem == "one-class" else c.y
        cache[key] = peer.fit(NuTask(c.X, y, nu_of(c), ctx.kernel, tol))
    return cache[key]


def solve_nu_oracle(ctx: Context, one_class: bool) -> Any:
    """The CVXPY oracle of the case's ν-SVC (or one-class) problem: the ν peers' reference
    (``Peer.reference``), solved once per case before their rows and timed on its own in a
    guarded run; a ``RuntimeError`` when the case is too large for it."""
    from maxmargin.formulations import nu_svm_dual, one_class_dual

    c = ctx.case
    if c.reference != "oracle" or c.X.shape[0] > ORACLE_MAX_GRAM_N:
        raise RuntimeError(f"no CVXPY oracle for {c.X.shape[0]} points (the certificate "
                           "alone judges)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        form = (one_class_dual(c.X, nu_of(c), kernel=ctx.kernel) if one_class else
                nu_svm_dual(c.X, c.y, nu_of(c), kernel=ctx.kernel))
        return form.solve()


def _nu_oracle(ctx: Context, one_class: bool) -> Any:
    """The case's ν oracle (:func:`solve_nu_oracle`), or None when it is too large or failed
    (the certificate alone judges)."""
    try:
        return ctx.reference(functools.partial(solve_nu_oracle, one_class=one_class))
    except Exception:
        return None


def _kernel_sums(kernel: Kernel, X: Any, coef: np.ndarray, centre: bool
                 ) -> tuple[np.ndarray, float]:
    """``(g, shift)``: ``g = K coef`` on the training points and the amount it is lowered by
    (the linear kernel on dense data, ``centre``: the points less their mean ``c``, ``shift =
    c . w``, as the certificate computes it)."""
    sv = np.flatnonzero(coef != 0.0)
    if centre and isinstance(kernel, LinearKernel) and isinstance(X, np.ndarray):
        Xc = X - X.mean(axis=0)
        shift = float(X.mean(axis=0) @ (Xc[sv].T @ coef[sv]))
        return decision_values(kernel, Xc, Xc[sv], coef[sv]), shift
    return decision_values(kernel, X, X[sv], coef[sv]), 0.0


def _class_extremes(m: np.ndarray, a: np.ndarray, upper: float, band: float
                    ) -> tuple[float, float]:
    """``(max_{a_i > band} m_i, min_{a_i < upper - band} m_i)`` (``-inf`` / ``inf`` for an
    empty set): a weight within ``band`` of a bound counts as on it."""
    up, low = a > band, a < upper - band
    return (float(np.max(m[up])) if up.any() else -math.inf,
            float(np.min(m[low])) if low.any() else math.inf)


def _offsets_and_violation(m: np.ndarray, a: np.ndarray, upper: float, k: float,
                           groups: list[tuple[np.ndarray, float]]) -> tuple[float, float]:
    """``(distance, violation)`` in Schölkopf's units: the largest distance of a group's
    offset ``s`` from the interval between its extremes (:func:`_class_extremes`), and the
    largest ``max_{a_i > 0} m_i - min_{a_i < upper} m_i`` (0 when a set is empty). ``k``: the
    group's mass in bounds (``nu l / 2``, one-class ``nu l``); weights within ``1e-12 max(k,
    1)`` bounds of a bound count as on it, as the certificate takes ``k`` within that of an
    integer for one (a weight a rounding of ``k`` below ``upper`` is not free)."""
    band = 1e-12 * max(k, 1.0) * upper
    distance = violation = 0.0
    for idx, s in groups:
        hi, lo = _class_extremes(m[idx], a[idx], upper, band)
        if math.isfinite(hi) and math.isfinite(lo):
            violation = max(violation, hi - lo)
        low, high = min(hi, lo), max(hi, lo)
        distance = max(distance, low - s, s - high, 0.0)
    return distance, violation


def judge_nu(ctx: Context, peer: Peer, tol: float) -> AuditOutcome:
    """The peer's answer on a ν-SVC or one-class problem, judged (module docstring)."""
    c, nu = ctx.case, nu_of(ctx.case)
    one = peer.problem == "one-class"
    answer = _answer(ctx, peer, tol)
    out = AuditOutcome(status=answer.status, oracle="certificate",
                       iterations=answer.iterations, runtime=answer.runtime,
                       tolerances=f"kkt<{tol:g}")
    l = c.X.shape[0]
    alpha = answer.alpha
    if alpha is None or alpha.shape != (l,) or not (
            np.all(np.isfinite(alpha)) and math.isfinite(answer.b) and
            math.isfinite(answer.rho)):
        out.certified = False
        if answer.converged:
            out.wrong.append("wrong answer: said converged but returned no finite (alpha, b, "
                             "rho) of the right shape")
        return out
    y = np.ones(l) if one else c.y
    p = project_one_class(alpha, nu) if one else project_nu(alpha, y, nu)
    upper, units = (1.0 / (nu * l), nu * l) if one else (1.0 / l, float(l))
    g, shift = _kernel_sums(ctx.kernel, c.X, p * y, centre=not one)
    cert = (certify_one_class(alpha, c.X, nu, ctx.kernel, g=g) if one else
            certify_nu_svm(alpha, c.X, y, nu, ctx.kernel, g=g))
    out.kkt_max, out.duality_gap = cert.kkt_violation, cert.gap
    b, rho = answer.b + shift, answer.rho  # b in the frame of g
    groups = ([(np.arange(l), rho)] if one else
              [(np.flatnonzero(y > 0), rho - b), (np.flatnonzero(y < 0), rho + b)])
    distance, violation = _offsets_and_violation(y * g, p, upper,
                                                 nu * l if one else 0.5 * nu * l, groups)
    hull = hull_weight(nu, one)
    meet = below_resolution(cert, p, hull)
    floor = w_floor(p, cert.radius, hull) * cert.radius  # the smallest |f| resolved
    per_rho = max(cert.margin, floor, TINY)
    offsets = 0.0 if meet else distance / per_rho
    out.certified = cert.kkt_violation < tol and offsets <= tol and (
        cert.feasibility <= AUDIT_FEASIBILITY)
    oracle = _nu_oracle(ctx, one)
    broken = []
    if oracle is not None and oracle.status == "optimal":
        out.oracle = f"certificate + weak duality vs {oracle.method}"
        co = oracle.certificate
        D_o = co.dual_objective
        # relative, the sizes kept above what the certificate resolves (D = -||w||^2 / 2)
        out.objective_error = abs(cert.dual_objective - D_o) / max(
            abs(D_o), 0.5 * (floor / max(cert.radius, TINY)) ** 2, TINY)
        f_o = oracle.decision_function(c.X)
        out.decision_error = float(np.max(np.abs(g + b - f_o))) / max(
            float(np.max(np.abs(f_o))), floor, TINY)
        kernel_max = float(np.max(np.abs(ctx.kernel.diag(c.X))))
        roundoff = sum(objective_roundoff(a, upper, kernel_max, abs(o_b) + o_rho)
                       for a, o_b, o_rho in ((p, b, rho), (oracle.alpha, oracle.b, oracle.rho)))
        broken = [r.replace("the reference's", "the oracle's") for r in weak_duality(
            cert, co, scale=float(np.sum(p)), roundoff=roundoff)]
    if answer.converged:
        broken = _refutation(cert.kkt_violation, violation * units, offsets,
                             0.0 if meet else distance * units, cert.feasibility) + broken
        if broken:
            out.wrong.append("wrong answer: said converged, but " + "; ".join(broken))
    return out


def _refutation(kkt: float, own: float, offsets: float, own_offsets: float,
                feasibility: float) -> list[str]:
    """Which rule of the loose preset a ν answer breaks (empty: none); ``kkt``, ``offsets`` in
    the decision function's units, ``own``, ``own_offsets`` in LIBSVM's."""
    limit = PRESETS[WRONG_PRESET]
    out = []
    if not (kkt < limit or own < limit):
        out.append(f"m - M = {kkt:.4g} >= {limit:g} (over rho; LIBSVM's own m - M = "
                   f"{own:.4g})")
    if offsets > limit and own_offsets > limit:
        out.append(f"its offsets (rho, b) are {offsets:.3g} (over rho; {own_offsets:.3g} in "
                   "LIBSVM's units) outside the interval its alpha allows")
    if not feasibility <= AUDIT_FEASIBILITY:
        out.append(f"dual infeasibility {feasibility:.3g} > {AUDIT_FEASIBILITY:g}")
    return out


#: The built-in solvers of each problem, by name (the reference last).
NU_PEERS: dict[str, dict[str, Peer]] = {
    "nu-svc": {p.name: p for p in (
        _peer("nu-svc", "libsvm", "LIBSVM (scikit-learn's NuSVC)",
              _nu_svc_fit(_Estimator("sklearn.svm", "NuSVC"))),
        _peer("nu-svc", "sklearnex", "oneDAL (scikit-learn-intelex's NuSVC)",
              _nu_svc_fit(_Estimator("sklearnex.svm", "NuSVC")), requires="sklearnex"),
        _peer("nu-svc", "thundersvm", "ThunderSVM's NuSVC",
              _nu_svc_fit(_Estimator("thundersvm", "NuSVC")), requires="thundersvm"),
        _peer("nu-svc", "nu_smo", "maxmargin's nu_smo (the reference)", _maxmargin_fit),
    )},
    "one-class": {p.name: p for p in (
        _peer("one-class", "libsvm", "LIBSVM (scikit-learn's OneClassSVM)",
              _one_class_fit(_Estimator("sklearn.svm", "OneClassSVM"))),
        _peer("one-class", "thundersvm", "ThunderSVM's OneClassSVM",
              _one_class_fit(_Estimator("thundersvm", "OneClassSVM")), requires="thundersvm"),
        _peer("one-class", "one_class_smo", "maxmargin's one_class_smo (the reference)",
              _maxmargin_fit),
    )},
}
#: The reference solver of each problem.
NU_REFERENCES = {"nu-svc": "nu_smo", "one-class": "one_class_smo"}
