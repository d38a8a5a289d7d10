"""``maxmargin audit``: other solvers' answers judged by the certificate and the oracle.

Each audited solver (a :class:`Peer`) is run on the cases of the verification catalogue, a
random campaign or a user's data, once per tolerance preset (:data:`PRESETS`: ``loose`` 1e-3,
``tight`` 1e-6; a solver that takes a tolerance is asked for the preset's), and each answer is
judged afresh in float64:

* **SVM-dual solvers** (LIBSVM through scikit-learn's ``SVC``, oneDAL through scikit-learn-
  intelex, ThunderSVM, cuML, a user's function, maxmargin's own SMO as the reference): the
  certificate of :func:`maxmargin.certify_dual` at the preset (``m - M < tol``, intercept within
  ``tol``, feasibility) and weak duality against the case's CVXPY oracle both ways
  (``D_solver <= P_oracle`` and ``D_oracle <= P_solver`` up to round-off).
* **LIBLINEAR** (``LinearSVC``), in its own problem (:mod:`maxmargin.formulations.liblinear`):
  the relative weak-duality gap of :func:`~maxmargin.certificate.certify_liblinear` at the
  preset, and weak duality against the LIBLINEAR oracle.

A **wrong answer** is one the solver called converged that is refuted at the loose preset,
whatever the row's preset: SVM dual -- ``m - M >= 1e-3`` (LIBSVM's own stopping rule, ``m - M <
tol``, recomputed in float64), or the intercept more than 1e-3 from the interval its ``alpha``
allows, or dual infeasibility above 1e-6 (``AUDIT_FEASIBILITY`` in :mod:`maxmargin.tolerances`:
what single precision explains), judged as returned or with weights within 1e-6 of a bound on it
(:func:`_on_bounds`), whichever is better; LIBLINEAR -- its objective more than 1e-3 (relative,
``(P - P_oracle) / |P_oracle|``) above the oracle's certified optimum, a proof since
``P_oracle >= P*``; the reason also says whether LIBLINEAR's own stopping rule holds
(:func:`_liblinear_own_rule`: its rules are relative to the gradient at 0 or bound only its own
dual's gap, so "converged" need not mean near the optimum); either -- weak duality broken,
non-finite values, or "converged" on a hard margin that has no solution.
``maxmargin audit`` exits 1 when any row is a wrong answer.

Rows have the suite's columns (:data:`~maxmargin.verification.suite.COLUMNS`), read as follows:
``status`` is the solver's claim (``optimal`` = it said converged, ``max_iter``/``inaccurate`` =
it did not), ``expected_status`` the certificate's verdict at the preset (``optimal`` or
``inaccurate``), ``verdict`` ``pass``, ``fail`` (a wrong answer), ``error`` (the solver raised,
timed out or died: not a wrong answer) or ``skip`` (a case the solver cannot take: hard margin,
a kernel it lacks; ``reasons`` says why), ``kkt_max``/``duality_gap`` the certificate's
``m - M``/gap, ``objective_error`` the relative distance of its objective from the oracle's.

A user's solver ``MODULE:CALLABLE`` is ``f(X, y, C, kernel=..., gamma=..., degree=..., coef0=...)
-> (alpha, b)`` or ``(alpha, b, converged)`` with ``y`` in -1/+1, ``C`` a float (``None`` for the
hard margin), ``kernel`` one of ``"linear"``, ``"rbf"``, ``"poly"`` and ``gamma`` a number (1.0
for the linear kernel); it also gets ``tol=`` when its signature names a ``tol`` parameter.
Without a third value it is taken to claim convergence. It is imported again where it runs
(forked workers inherit it; on a Dask cluster each worker imports it from the same directory,
so on remote machines the module must be importable there too).
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import inspect
import math
import os
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from maxmargin.certificate import TINY, certify_liblinear, decision_values, liblinear_rows
from maxmargin.certify_models import ModelCertificate, certify_dual, fitted_array
from maxmargin.formulations.liblinear import LiblinearSolution, liblinear_primal
from maxmargin.kernels import Kernel
from maxmargin.methods import METHODS, MethodSpec, register
from maxmargin.results import SVMSolution
from maxmargin.tolerances import AUDIT_FEASIBILITY
from maxmargin.verification.case import Case
from maxmargin.verification.checks import extra_methods, weak_duality_vs_oracle
from maxmargin.verification.context import Context, Method, Outcome
from maxmargin.verification.suite import run_suite
from maxmargin.verification.table import Row

__all__ = [
    "PRESETS", "WRONG_PRESET", "SHIFT_S", "Answer", "Peer", "PEERS", "AuditRun", "Summary",
    "resolve_peers", "audit_methods", "run_audit", "summarise", "user_peer", "user_callable",
    "call_user", "AuditOutcome", "AUDIT_COLUMNS",
]

#: The tolerance presets (qpbenchmark's "low"/"high accuracy"): the solver's stopping
#: tolerance and the certificate's limit (SVM dual: ``m - M``; LIBLINEAR: the relative gap).
PRESETS: dict[str, float] = {"loose": 1e-3, "tight": 1e-6}
#: The preset at which a "converged" answer is refuted (a wrong answer).
WRONG_PRESET = "loose"
#: Shift of the shifted geometric mean of run times, seconds (a hundredth of a second: the
#: solves take milliseconds to seconds; qpbenchmark's shift is a hundredth of its time limit).
SHIFT_S = 0.01
_LINEAR_KERNELS = ("linear",)
_NAMED_KERNELS = ("linear", "rbf", "poly")


@dataclass(frozen=True)
class Answer:
    """What an audited solver returned: the SVM dual's ``(alpha, b)`` or LIBLINEAR's ``w~``."""

    converged: bool
    runtime: float
    alpha: np.ndarray | None = None
    b: float = math.nan
    w_tilde: np.ndarray | None = None
    iterations: int = -1
    rho: float = math.nan  # nu-SVC and one-class (:mod:`.audit_nu`): the margin
    claim: str = ""  # the status shown: "optimal" when converged, else why not
    algorithm: str = ""  # LIBLINEAR: "dual_cd" (coordinate descent on the dual) or "tron"

    @property
    def status(self) -> str:
        return self.claim or ("optimal" if self.converged else "inaccurate")


@dataclass(frozen=True)
class Task:
    """One problem as a solver is given it."""

    X: np.ndarray
    y: np.ndarray
    C: float | None
    kernel: Kernel
    tol: float


@dataclass(frozen=True)
class Peer:
    """A solver under audit.

    ``fit(task) -> Answer``; ``problem`` is ``"svm"`` (the SVM dual), ``"liblinear"``,
    ``"nu-svc"`` or ``"one-class"``; ``kernels`` the named kernels it takes; ``hard_margin``
    whether it takes ``C=None``; ``takes_tol`` whether it is run at each preset's tolerance
    (else once, judged at both); ``requires`` the module it needs (the peer is unavailable
    without it); ``loss`` and ``intercept_scaling`` LIBLINEAR's problem; ``judge(ctx, peer,
    tol) -> AuditOutcome`` runs and judges it on a case itself (:mod:`.audit_nu`; None: the SVM
    dual's or LIBLINEAR's judge here, which use the case's C-SVC oracle); ``reference(ctx)``
    the ground truth such a judge needs instead of the C-SVC oracle (solved once per case and
    timed on its own in a guarded run, ``Method.reference``), None when it needs none.
    """

    name: str
    summary: str
    fit: Callable[[Task], Answer]
    problem: str = "svm"
    kernels: tuple[str, ...] = _NAMED_KERNELS
    hard_margin: bool = False
    takes_tol: bool = True
    requires: str = ""
    loss: str = "hinge"
    intercept_scaling: float | None = 1.0
    judge: Callable[..., Any] | None = None
    reference: Callable[..., Any] | None = None

    def refusal(self, case: Case) -> str | None:
        """Why this solver cannot take ``case`` (a skipped row), or None."""
        if case.problem != "c_svc":
            return f"{self.name} solves the C-SVC; this case is a {case.problem} problem"
        if not isinstance(case.kernel, str) or case.kernel not in self.kernels:
            return f"{self.name} takes the kernels {'/'.join(self.kernels)}; " \
                   f"this case's is {case.kernel_name}"
        if case.C is None and not self.hard_margin:
            return f"{self.name} solves the soft margin only (finite C); this case is a " \
                   "hard margin"
        return None

    def available(self) -> str | None:
        """None when it can run here, else why not."""
        if self.requires and importlib.util.find_spec(self.requires) is None:
            return f"{self.name} needs the module {self.requires!r}, which is not installed"
        return None


# --- the built-in solvers -----------------------------------------------------------------
def _svc_keywords(kernel: Kernel) -> dict[str, Any]:
    """SVC's ``kernel``, ``gamma``, ``degree``, ``coef0`` for a named kernel object."""
    out: dict[str, Any] = {"kernel": kernel.name}
    if kernel.name in ("rbf", "poly"):
        out["gamma"] = float(kernel.gamma)
    if kernel.name == "poly":
        out.update(degree=int(kernel.degree), coef0=float(kernel.coef0))
    return out


def _sklearn_fit(estimator: Any, X: np.ndarray, y: np.ndarray) -> tuple[Any, bool, float]:
    """Fit, time it, and read its claim: converged unless it warned ``ConvergenceWarning`` (or
    set a non-zero ``fit_status_``)."""
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        estimator.fit(X, y)
        runtime = time.perf_counter() - start
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    status = getattr(estimator, "fit_status_", 0)
    return estimator, not warned and not status, runtime


#: Training rows on which a peer's reading of ``(alpha, b)`` is checked against its own
#: ``decision_function`` (:func:`_dual_answer`).
SIGN_CHECK_ROWS = 20


def _dual_answer(model: Any, task: Task, converged: bool, runtime: float) -> Answer:
    """``(alpha, b)`` of a fitted binary SVC-like model (``classes_ = [-1, 1]``).

    ``dual_coef_`` holds ``alpha_i y_i`` up to one sign, and ``intercept_`` holds ``b`` or
    ``-b`` (ThunderSVM keeps LIBSVM's ``rho = -b``): the reading is the one of the four under
    which ``decision_function`` equals ``+-(sum_i dual_coef_i K(x_i, x) +- intercept_)`` on the
    first training rows (:func:`_orientation`); without ``decision_function``, scikit-learn's.
    ``alpha`` and ``b`` are then oriented so that ``alpha >= 0``."""
    y = task.y
    alpha = np.zeros(y.shape[0])
    support = fitted_array(model.support_).astype(np.int64)
    coef = fitted_array(model.dual_coef_).astype(np.float64).ravel()
    b = float(fitted_array(model.intercept_).ravel()[0])
    if hasattr(model, "decision_function"):
        b *= _orientation(model, task, support, coef, b)
    alpha[support] = coef * y[support]
    if np.any(alpha < 0) and not np.any(alpha > 0):  # LIBSVM's raw orientation
        alpha, b = -alpha, -b
    iterations = int(np.max(fitted_array(getattr(model, "n_iter_", [-1]))))
    return Answer(converged, runtime, alpha=alpha, b=b, iterations=iterations,
                  claim="optimal" if converged else "max_iter")


#: A reading of a peer's fitted attributes must reproduce its own ``decision_function`` to
#: this relative error (single-precision solvers included: ThunderSVM keeps float32 support
#: vectors and coefficients).
READING_RTOL = 1e-4


def _orientation(model: Any, task: Task, support: np.ndarray, coef: np.ndarray,
                 intercept: float) -> float:
    """The sign ``s`` with ``b = s intercept_``: the reading of ``(dual_coef_, intercept_)``
    that reproduces the model's ``decision_function`` (either overall sign) on the first
    :data:`SIGN_CHECK_ROWS` training rows, scikit-learn's (``s = 1``) when both do (the sums
    vanish beside the intercept). Raises ValueError when neither does."""
    rows = task.X[:SIGN_CHECK_ROWS]
    theirs = fitted_array(model.decision_function(rows)).astype(np.float64).ravel()
    sums = decision_values(task.kernel, rows, task.X[support], coef)
    # the size of the terms, |K(x, z)| <= sqrt(K(x, x) K(z, z)): what rounding is relative to
    roots = np.sqrt(np.abs(task.kernel.diag(task.X[support])))
    terms = float(np.sqrt(np.max(np.abs(task.kernel.diag(rows)))) * (np.abs(coef) @ roots))
    scale = max(1.0, terms + abs(intercept))
    for s in (1.0, -1.0):
        f = sums + s * intercept
        if min(np.max(np.abs(theirs - f)), np.max(np.abs(theirs + f))) <= READING_RTOL * scale:
            return s
    raise ValueError(f"{type(model).__name__}: decision_function disagrees with "
                     "dual_coef_ K(support_vectors_, x) +- intercept_ (either sign); "
                     "its dual cannot be read")


def _svc_peer(factory: Callable[..., Any]) -> Callable[[Task], Answer]:
    def fit(task: Task) -> Answer:
        model = factory(C=task.C, tol=task.tol, **_svc_keywords(task.kernel))
        model, converged, runtime = _sklearn_fit(model, task.X, task.y)
        return _dual_answer(model, task, converged, runtime)

    return fit


def _libsvm(**kw: Any) -> Any:
    from sklearn.svm import SVC

    return SVC(**kw)


def _sklearnex(**kw: Any) -> Any:
    from sklearnex.svm import SVC

    return SVC(**kw)


def _thundersvm(**kw: Any) -> Any:
    from thundersvm import SVC

    if kw.get("kernel") == "poly":  # ThunderSVM's name; "poly" makes it exit the process
        kw["kernel"] = "polynomial"
    return SVC(**kw)


def _cuml(**kw: Any) -> Any:  # tested with a GPU-free stand-in (tests/test_audit.py)
    from cuml.svm import SVC

    return SVC(**kw)


def _liblinear_peer(loss: str) -> Callable[[Task], Answer]:
    def fit(task: Task) -> Answer:
        from sklearn.svm import LinearSVC

        # LinearSVC's dual="auto": the primal (TRON) when n >= d and the loss allows it
        dual = loss == "hinge" or task.X.shape[0] < task.X.shape[1]
        model = LinearSVC(C=task.C, loss=loss, tol=task.tol, dual=dual, intercept_scaling=1.0,
                          random_state=0)  # dual coordinate descent draws its order
        model, converged, runtime = _sklearn_fit(model, task.X, task.y)
        w = np.append(model.coef_.ravel(), model.intercept_[0] / model.intercept_scaling)
        return Answer(converged, runtime, w_tilde=w, b=float(model.intercept_[0]),
                      iterations=int(np.max(model.n_iter_)),
                      claim="optimal" if converged else "max_iter",
                      algorithm="dual_cd" if dual else "tron")

    return fit


def _smo_peer(task: Task) -> Answer:
    sol = METHODS["smo"].solve(task.X, task.y, C=task.C, kernel=task.kernel, tol=task.tol)
    converged = sol.status == "optimal"
    return Answer(converged, sol.runtime, alpha=np.array(sol.alpha), b=sol.b,
                  iterations=sol.iterations, claim=sol.status)


#: The built-in solvers by name (``maxmargin audit --solver NAME``).
PEERS: dict[str, Peer] = {p.name: p for p in (
    Peer("libsvm", "LIBSVM (scikit-learn's SVC)", _svc_peer(_libsvm)),
    Peer("liblinear", "LIBLINEAR (scikit-learn's LinearSVC, squared hinge, its own problem)",
         _liblinear_peer("squared_hinge"), problem="liblinear", kernels=_LINEAR_KERNELS,
         loss="squared_hinge"),
    Peer("liblinear-hinge", "LIBLINEAR (LinearSVC, hinge loss, dual coordinate descent)",
         _liblinear_peer("hinge"), problem="liblinear", kernels=_LINEAR_KERNELS),
    Peer("sklearnex", "oneDAL (scikit-learn-intelex's SVC)", _svc_peer(_sklearnex),
         requires="sklearnex"),
    Peer("thundersvm", "ThunderSVM's SVC", _svc_peer(_thundersvm), requires="thundersvm"),
    Peer("cuml", "cuML's SVC", _svc_peer(_cuml), requires="cuml"),
    Peer("smo", "maxmargin's SMO (the reference)", _smo_peer, hard_margin=True),
)}
#: The reference of the run-time ratios.
REFERENCE = "smo"


def _method_spec(peer: Peer) -> MethodSpec:
    """An SVM-dual peer as a method of the registry: its answer as a certified SVMSolution."""

    def solve(X: Any, y: np.ndarray, *, C: float | None, kernel: Kernel,
              tol: float | None = None, max_iter: int | None = None,
              sample_weight: Any = None, **options: Any) -> SVMSolution:
        tol = PRESETS["loose"] if tol is None else tol
        answer = peer.fit(Task(X, y, C, kernel, tol))
        return _solution(answer, X, y, C, kernel, peer.name, tol)

    return MethodSpec(peer.name, solve, "svm", peer.summary, family="third_party")


for _peer in PEERS.values():
    if _peer.problem == "svm" and _peer.name != REFERENCE and _peer.name not in METHODS:
        register(_method_spec(_peer))


def user_peer(spec: str) -> Peer:
    """The peer of ``MODULE:CALLABLE`` (module docstring), imported now from ``sys.path`` and
    the current directory; a ``ValueError`` naming what is wrong."""
    module_name, attr, takes_tol = user_callable(spec, tuple(PEERS))
    return Peer(spec, f"{spec} (user's function)", _UserFit(module_name, attr, os.getcwd()),
                hard_margin=True, takes_tol=takes_tol)


def user_callable(spec: str, builtin: Sequence[str]) -> tuple[str, str, bool]:
    """``(module, attribute, takes_tol)`` of ``MODULE:CALLABLE``, imported now (from
    ``sys.path`` and the current directory) to fail before any work; ``builtin``: the names
    the error message offers instead."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ValueError(f"--solver {spec!r}: expected a built-in name {tuple(builtin)} or "
                         "MODULE:CALLABLE.")
    function = _import_callable(module_name, attr, os.getcwd())
    return module_name, attr, "tol" in inspect.signature(function).parameters


def call_user(module: str, attr: str, directory: str, args: tuple[Any, ...], kernel: Kernel,
              tol: float) -> tuple[Any, float]:
    """Import ``module:attr`` again (where it runs: a Dask worker is a new process) and call it
    on copies of ``args`` with the kernel's ``kernel``, ``gamma``, ``degree``, ``coef0`` (and
    ``tol`` when it names that parameter); ``(what it returned, seconds)``."""
    function = _import_callable(module, attr, directory)
    keywords: dict[str, Any] = {"kernel": kernel.name, "gamma": getattr(kernel, "gamma", 1.0),
                                "degree": int(getattr(kernel, "degree", 3)),
                                "coef0": float(getattr(kernel, "coef0", 0.0))}
    if "tol" in inspect.signature(function).parameters:
        keywords["tol"] = tol
    copies = tuple(a.copy() if hasattr(a, "copy") else a for a in args)  # arrays, sparse
    start = time.perf_counter()
    out = function(*copies, **keywords)
    return out, time.perf_counter() - start


def _import_callable(module_name: str, attr: str, directory: str) -> Callable[..., Any]:
    if directory not in sys.path:
        sys.path.insert(0, directory)
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise ValueError(f"--solver {module_name}:{attr}: cannot import {module_name!r} "
                         f"({type(exc).__name__}: {exc}).") from None
    function: Any = module
    for part in attr.split("."):  # "module:object.method" too
        function = getattr(function, part, None)
    if not callable(function):
        raise ValueError(f"--solver {module_name}:{attr}: {module_name!r} has no callable "
                         f"{attr!r}.")
    return function


@dataclass(frozen=True)
class _UserFit:
    """A user's function, imported again where it runs (a Dask worker is a new process)."""

    module: str
    attr: str
    directory: str

    def __call__(self, task: Task) -> Answer:
        out, runtime = call_user(self.module, self.attr, self.directory,
                                 (task.X, task.y, task.C), task.kernel, task.tol)
        if not isinstance(out, tuple | list) or len(out) not in (2, 3):
            raise TypeError(f"{self.module}:{self.attr} must return (alpha, b) or (alpha, b, "
                            f"converged); got {type(out).__name__}")
        converged = bool(out[2]) if len(out) == 3 else True
        alpha = np.asarray(out[0], dtype=np.float64).ravel()
        return Answer(converged, runtime, alpha=alpha, b=float(out[1]))


def resolve_peers(names: Sequence[str], table: dict[str, Peer] | None = None,
                  user: Callable[[str], Peer] = user_peer, what: str = "a built-in solver"
                  ) -> list[Peer]:
    """The peers named (names in ``table``, default :data:`PEERS`, or ``MODULE:CALLABLE``,
    made by ``user``), checked before any work; ``what`` the table's solvers, in words."""
    table = PEERS if table is None else table
    peers = []
    for name in names:
        if name in table:
            missing = table[name].available()
            if missing:
                raise ValueError(f"--solver {name}: {missing}.")
            peers.append(table[name])
        elif ":" in name:
            peers.append(user(name))
        else:
            raise ValueError(f"--solver {name!r}: not {what} {tuple(table)} nor "
                             "MODULE:CALLABLE.")
    if not peers:
        raise ValueError("--solver: name at least one solver.")
    return peers


# --- judging one answer -----------------------------------------------------------------------
@dataclass
class AuditOutcome(Outcome):
    """An audited row's numbers (see :func:`_audit_row`)."""

    certified: bool | None = None
    wrong: list[str] = field(default_factory=list)
    w_error: float = math.nan
    decision_error: float = math.nan


def _on_bounds(alpha: np.ndarray, C: float | None) -> np.ndarray:
    """``alpha`` with entries within ``AUDIT_FEASIBILITY * s`` of 0 or ``C`` put on the bound
    (``s = min(C, max alpha)``, the size of the weights): an answer kept in single precision
    cannot place them closer, and LIBSVM's ``m - M`` counts a weight a rounding below ``C`` as
    free. The same array when nothing moves."""
    scale = float(np.max(alpha, initial=0.0))
    scale = scale if C is None else min(C, scale)
    near = AUDIT_FEASIBILITY * scale
    low = (alpha != 0.0) & (np.abs(alpha) <= near)
    high = np.zeros_like(low) if C is None else (alpha != C) & (np.abs(alpha - C) <= near)
    if not (low.any() or high.any()):
        return alpha
    out = alpha.copy()
    out[low] = 0.0
    out[high] = C
    return out


def _solution(answer: Answer, X: Any, y: np.ndarray, C: float | None, kernel: Kernel,
              method: str, tol: float) -> SVMSolution:
    """An SVM-dual answer as an SVMSolution with its certificate (status: certified or not):
    judged as returned, or with its weights on their bounds (:func:`_on_bounds`) when that
    reading has the smaller ``m - M`` (its feasibility still as returned)."""
    alpha = answer.alpha
    cert = certify_dual(alpha, answer.b, X, y, C, kernel=kernel, tol=tol)
    bounded = _on_bounds(alpha, C)
    if bounded is not alpha:  # judged by the better of the two readings
        snapped = certify_dual(bounded, answer.b, X, y, C, kernel=kernel, tol=tol)
        if snapped.kkt_violation < cert.kkt_violation:
            alpha, cert = bounded, dataclasses.replace(
                snapped, feasibility=max(cert.feasibility, snapped.feasibility))
    w = None
    if kernel.name == "linear":
        w = np.asarray(X.T @ (alpha * y)).ravel()
    return SVMSolution(alpha=alpha, b=answer.b, w=w, dual_objective=cert.dual_objective,
                       primal_objective=cert.primal_objective,
                       status="optimal" if cert.optimal else "inaccurate",
                       iterations=answer.iterations, method=method, X_train=X, y_train=y,
                       kernel=kernel, C=C, certificate=cert, runtime=answer.runtime, tol=tol,
                       message=cert.summary())


def _refutation(cert: ModelCertificate) -> list[str]:
    """Which rule of the loose preset the SVM-dual certificate breaks (empty: none)."""
    limit = PRESETS[WRONG_PRESET]
    out = []
    if not cert.kkt_violation < limit:
        out.append(f"m - M = {cert.kkt_violation:.4g} >= {limit:g}")
    if cert.intercept_error > limit:
        out.append(f"its intercept is {cert.intercept_error:.3g} outside the interval "
                   "its alpha allows")
    if not cert.feasibility <= AUDIT_FEASIBILITY:
        out.append(f"dual infeasibility {cert.feasibility:.3g} > {AUDIT_FEASIBILITY:g}")
    return out


def _judge_svm(ctx: Context, answer: Answer, tol: float, name: str) -> AuditOutcome:
    c = ctx.case
    out = AuditOutcome(status=answer.status, oracle="", iterations=answer.iterations,
                       runtime=answer.runtime, tolerances=f"kkt<{tol:g}")
    said = answer.converged
    finite = answer.alpha is not None and answer.alpha.shape == c.y.shape and bool(
        np.all(np.isfinite(answer.alpha))) and math.isfinite(answer.b)
    if c.expected_status == "infeasible":
        out.oracle = "the oracle's infeasibility certificate"
        out.certified = False
        if said and finite:
            out.wrong.append("wrong answer: said converged on a hard margin with no solution "
                             "(the classes' hulls are within the oracle's resolution)")
        return out
    if not finite:
        out.certified = False
        if said:
            out.wrong.append("wrong answer: said converged but returned no finite (alpha, b) "
                             "of the right shape")
        return out
    sol = _solution(answer, c.X, c.y, c.C, ctx.kernel, name, tol)
    cert = sol.certificate
    out.kkt_max, out.duality_gap = cert.kkt_violation, cert.gap
    out.certified = cert.meets(tol, feasibility=AUDIT_FEASIBILITY) and not (
        cert.intercept_error > tol)
    oracle = _oracle_or_none(ctx)
    out.oracle = "certificate" + (f" + weak duality vs {oracle.method}" if oracle else "")
    if oracle is not None and oracle.status == "optimal":
        D_o = oracle.certificate.dual_objective
        out.objective_error = abs(cert.dual_objective - D_o) / max(abs(D_o), TINY)
        f_o = oracle.decision_function(c.X)
        out.decision_error = float(np.max(np.abs(sol.decision_function(c.X) - f_o))) / max(
            1.0, float(np.max(np.abs(f_o))))
        if sol.w is not None and oracle.w is not None:
            out.w_error = float(np.linalg.norm(sol.w - oracle.w)) / max(
                float(np.linalg.norm(oracle.w)), 1e-300)
    if said:
        broken = _refutation(cert) + (weak_duality_vs_oracle(ctx, sol) if oracle else [])
        if broken:
            out.wrong.append("wrong answer: said converged, but " + "; ".join(broken))
    return out


def _oracle_or_none(ctx: Context) -> Any:
    try:
        return ctx.oracle
    except Exception:  # the oracle's failure is the suite's finding; the audit goes on
        return None


def _liblinear_oracle(ctx: Context, peer: Peer) -> LiblinearSolution:
    """LIBLINEAR's problem solved by CVXPY, once per case and loss."""
    cache = ctx.__dict__.setdefault("liblinear_oracles", {})
    key = (peer.loss, peer.intercept_scaling)
    if key not in cache:
        c = ctx.case
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cache[key] = liblinear_primal(c.X, c.y, c.C, loss=peer.loss,
                                          intercept_scaling=peer.intercept_scaling).solve()
    return cache[key]


def _judge_liblinear(ctx: Context, answer: Answer, tol: float, peer: Peer) -> AuditOutcome:
    c = ctx.case
    out = AuditOutcome(status=answer.status, oracle="", iterations=answer.iterations,
                       runtime=answer.runtime, tolerances=f"gap<={tol:g}")
    w = answer.w_tilde
    if w is None or not np.all(np.isfinite(w)):
        out.certified = False
        if answer.converged:
            out.wrong.append("wrong answer: said converged but returned non-finite weights")
        return out
    rows = liblinear_rows(c.X, peer.intercept_scaling)
    cert = certify_liblinear(w, rows, c.y, c.C, loss=peer.loss)
    out.kkt_max, out.duality_gap = cert.kkt_violation, cert.gap
    out.certified = math.isfinite(cert.gap) and cert.gap <= tol
    oracle = _liblinear_oracle(ctx, peer)
    out.oracle = f"certificate + weak duality vs {oracle.method}"
    if oracle.status != "optimal":
        return out
    P_o, D_o = oracle.primal_objective, oracle.dual_objective
    P_s, D_s = cert.primal_objective, cert.dual_objective
    scale = max(abs(P_o), TINY)  # relative to the objective's own size: free of units
    out.objective_error = abs(P_s - P_o) / scale
    out.w_error = float(np.linalg.norm(w - oracle.w_tilde)) / max(
        float(np.linalg.norm(oracle.w_tilde)), 1e-300)
    f_o = np.asarray(rows @ oracle.w_tilde).ravel()
    out.decision_error = float(np.max(np.abs(np.asarray(rows @ w).ravel() - f_o))) / max(
        1.0, float(np.max(np.abs(f_o))))
    if not answer.converged:
        return out
    slack = 1e-10 * max(scale, abs(P_s))
    broken, limit = [], PRESETS[WRONG_PRESET]
    if (P_s - P_o) / scale > limit:
        broken.append(
            f"its objective is {(P_s - P_o) / scale:.4g} (relative) above the certified optimum "
            f"(> {limit:g}; P = {P_s:.10g}, optimum {P_o:.10g}); "
            + _liblinear_own_rule(answer, w, rows, c.y, c.C, peer.loss, P_s - P_o))
    if D_s > P_o + slack:
        broken.append(f"weak duality broken: D = {D_s:.10g} > the oracle's P = {P_o:.10g}")
    if D_o > P_s + slack:
        broken.append(f"weak duality broken: the oracle's D = {D_o:.10g} > P = {P_s:.10g}")
    if broken:
        out.wrong.append("wrong answer: said converged, but " + "; ".join(broken))
    return out


def _liblinear_own_rule(answer: Answer, w: np.ndarray, rows: Any, y: np.ndarray, C: float,
                        loss: str, excess: float) -> str:
    """What LIBLINEAR's own stopping rule at the loose tolerance ``eps`` says of the answer (a
    note beside a refutation: its rules are not a bound on the objective's error).

    TRON (the primal, squared hinge) stops at ``||grad P(w)|| <= eps max(min(n+, n-), 1) / n
    ||grad P(0)||``, recomputed here in float64. Dual coordinate descent stops when its
    projected gradients are within ``eps``, which bounds the gap of its own dual point (not
    exposed by LinearSVC) by ``eps sum C_i`` (hinge) or ``eps^2 sum C_i`` (squared hinge).
    """
    eps = PRESETS[WRONG_PRESET]
    n = y.shape[0]
    if answer.algorithm == "tron":
        m = y * np.asarray(rows @ w).ravel()
        a = 2.0 * C * np.maximum(0.0, 1.0 - m)
        grad = float(np.linalg.norm(w - np.asarray(rows.T @ (a * y)).ravel()))
        grad0 = float(np.linalg.norm(np.asarray(rows.T @ (2.0 * C * y)).ravel()))
        share = max(min(int(np.sum(y > 0)), int(np.sum(y < 0))), 1) / n
        holds = "holds" if grad <= eps * share * grad0 else "fails"
        return (f"LIBLINEAR's own test at {eps:g} {holds} (TRON: ||grad P|| = {grad:.3g} vs "
                f"{eps:g} x {share:.3g} x ||grad P(0)|| = {eps * share * grad0:.3g})")
    bound = (eps if loss == "hinge" else eps * eps) * C * n
    holds = "within" if excess <= bound else "beyond"
    return (f"{holds} the {bound:.3g} LIBLINEAR's dual stopping rule at {eps:g} allows "
            "(projected gradients within eps)")


def _answer(ctx: Context, peer: Peer, tol: float) -> Answer:
    """The peer's answer on the case (a peer without a tolerance runs once per case)."""
    cache = ctx.__dict__.setdefault("audit_answers", {})
    key = (peer.name, tol if peer.takes_tol else None)
    if key not in cache:
        c = ctx.case
        cache[key] = peer.fit(Task(c.X, c.y, c.C, ctx.kernel, tol))
    return cache[key]


def _audit_run(peer: Peer, preset: str) -> Callable[[Context], AuditOutcome]:
    tol = PRESETS[preset]

    def run(ctx: Context) -> AuditOutcome:
        if peer.judge is not None:
            return peer.judge(ctx, peer, tol)
        answer = _answer(ctx, peer, tol)
        if peer.problem == "liblinear":
            return _judge_liblinear(ctx, answer, tol, peer)
        return _judge_svm(ctx, answer, tol, peer.name)

    return run


def _audit_row(case: Case, method: Method, outcome: Outcome | None, exception: str) -> Row:
    """A row of the audit (module docstring for the columns' meaning)."""
    nan = math.nan
    o = outcome if outcome is not None else Outcome(status="error", oracle="")
    audit = o if isinstance(o, AuditOutcome) else None
    if exception or audit is None:
        verdict, reasons = "error", ([f"raised {exception}"] if exception else []) + o.reasons
        status, expected = "error", ""
    else:
        verdict = "fail" if audit.wrong else "pass"
        reasons, status = audit.wrong, audit.status
        expected = ("infeasible" if case.expected_status == "infeasible" else
                    "optimal" if audit.certified else "inaccurate")
    return Row(
        case=case.name, area=case.area, section="audit", method=method.name, oracle=o.oracle,
        tolerances=o.tolerances, status=status, expected_status=expected,
        iterations=int(o.iterations), runtime=float(o.runtime),
        objective_error=o.objective_error,
        w_error=audit.w_error if audit else nan, b_error=nan, alpha_error=nan,
        alpha_unique=None, decision_error=audit.decision_error if audit else nan,
        kkt_max=o.kkt_max, duality_gap=o.duality_gap, bounds=(), verdict=verdict,
        reasons="; ".join(reasons), exception=exception,
    )


def _skipped_row(case: Case, name: str, why: str) -> Row:
    nan = math.nan
    return Row(case=case.name, area=case.area, section="audit", method=name, oracle="",
               tolerances="", status="skipped", expected_status="", iterations=-1, runtime=nan,
               objective_error=nan, w_error=nan, b_error=nan, alpha_error=nan,
               alpha_unique=None, decision_error=nan, kkt_max=nan, duality_gap=nan, bounds=(),
               verdict="skip", reasons=f"skipped: {why}", exception="")


def audit_methods(peers: Sequence[Peer], presets: Sequence[str]) -> list[Method]:
    """One suite method per (peer, preset), run on the cases the peer takes."""
    return [Method(f"{p.name}/{preset}", "audit", _audit_run(p, preset),
                   applies=_Accepts(p), row=_audit_row,
                   needs_oracle=p.judge is None or p.reference is not None, reference=p.reference)
            for p in peers for preset in presets]


@dataclass(frozen=True)
class _Accepts:
    peer: Peer

    def __call__(self, case: Case) -> bool:
        return self.peer.refusal(case) is None


# --- the run --------------------------------------------------------------------------------
@dataclass(frozen=True)
class AuditRun:
    """Rows (suite columns, :func:`_audit_row`), the solvers and presets, the elapsed time;
    the problem audited (``"c-svc"``: the SVM dual and LIBLINEAR's; ``"nu-svc"``,
    ``"one-class"``: :mod:`.audit_nu`), the reference solver and each solver's description."""

    suite: str
    pattern: str | None
    rows: tuple[Row, ...]
    peers: tuple[str, ...]
    presets: tuple[str, ...]
    elapsed: float
    timeout: float
    problem: str = "c-svc"
    reference: str = "smo"
    titles: tuple[str, ...] = ()

    def title(self, solver: str) -> str:
        """The description of ``solver``."""
        return dict(zip(self.peers, self.titles, strict=False)).get(solver, "user's function")

    @property
    def wrong(self) -> list[Row]:
        """The wrong answers (exit code 1)."""
        return [r for r in self.rows if r.verdict == "fail"]


def run_audit(
    peers: Sequence[Peer], cases: Sequence[Case], *, suite: str = "quick",
    presets: Sequence[str] = tuple(PRESETS), reference: bool = True, seed: int = 0,
    pattern: str | None = None, progress: Any = sys.stderr, timeout: float | None = 120.0,
    client: Any = None, resume: Sequence[Row] | None = None, stream: str | None = None,
    reference_peer: Peer | None = None, problem: str = "c-svc",
) -> AuditRun:
    """Every peer (and the reference, ``reference_peer`` or maxmargin's SMO) on every case, at
    every preset; ``problem`` labels the run (:class:`AuditRun`).

    The cases run through :func:`~maxmargin.verification.suite.run_suite` (forked guarded
    workers with ``timeout``, a Dask ``client``, ``resume`` and ``stream`` as for ``verify``);
    the cases a peer cannot take become skipped rows. ``cases`` keep their names (random
    campaign cases ``random_s<seed>_i<index>``: pass ``seed``).
    """
    for preset in presets:
        if preset not in PRESETS:
            raise ValueError(f"`presets` must be among {tuple(PRESETS)}; got {preset!r}.")
    chosen = list(peers)
    reference_peer = PEERS[REFERENCE] if reference_peer is None else reference_peer
    if reference and reference_peer.name not in [p.name for p in chosen]:
        chosen.append(reference_peer)
    methods = audit_methods(chosen, presets)
    bare = [dataclasses.replace(c, methods=()) for c in cases]
    start = time.perf_counter()
    runnable = [c for c in bare if any(m.applies(c) for m in methods)]
    rows: dict[tuple[str, str], Row] = {}
    if runnable:
        with extra_methods(*methods):
            run = run_suite("random" if suite == "random" else suite if suite in (
                "quick", "full") else "data", cases=runnable, seed=seed, progress=progress,
                timeout=timeout, client=client, resume=resume, stream=stream)
        rows = {(r.case, r.method): r for r in run.rows}
    ordered = []
    for case in bare:
        for m in methods:
            row = rows.get((case.name, m.name))
            if row is None:
                peer = m.applies.peer
                row = _skipped_row(case, m.name, peer.refusal(case) or "not run")
            ordered.append(row)
    return AuditRun(suite=suite, pattern=pattern, rows=tuple(ordered),
                    peers=tuple(p.name for p in chosen), presets=tuple(presets),
                    elapsed=time.perf_counter() - start,
                    timeout=math.inf if timeout is None else float(timeout), problem=problem,
                    reference=reference_peer.name, titles=tuple(p.summary for p in chosen))


# --- the qpbenchmark-style summary ------------------------------------------------------------
@dataclass(frozen=True)
class Summary:
    """One solver at one preset over the cases it took (skipped ones excluded).

    ``success``: share certified at the preset (a hard margin with no solution: not called
    converged); ``correct``: share whose "converged" flag is
    not refuted (not a wrong answer); ``worst``: the largest certificate measure (SVM dual:
    ``m - M``; LIBLINEAR: the relative gap); ``time_ratio``: shifted geometric mean
    (:data:`SHIFT_S`) of the run times over the cases both it and the reference took, divided
    by the reference's, an uncertified answer charged the time limit (qpbenchmark's rule);
    ``errors``: rows where it raised, timed out or died.
    """

    solver: str
    preset: str
    cases: int
    success: float
    correct: float
    wrong: int
    errors: int
    worst: float
    time_ratio: float


def shifted_geometric_mean(times: Sequence[float], shift: float = SHIFT_S) -> float:
    """``exp(mean(log(t + shift))) - shift``."""
    t = np.asarray(times, dtype=np.float64)
    return float(np.exp(np.mean(np.log(t + shift))) - shift) if t.size else math.nan


def _succeeded(row: Row) -> bool:
    """Certified at the row's preset; on a hard margin with no solution: said so (did not
    claim convergence)."""
    if row.verdict == "error":
        return False
    if row.expected_status == "infeasible":
        return row.verdict == "pass"
    return row.expected_status == "optimal"


def _charged(row: Row, limit: float) -> float:
    if not _succeeded(row) or not math.isfinite(row.runtime):
        return limit
    return row.runtime


def summarise(run: AuditRun) -> list[Summary]:
    """One :class:`Summary` per (solver, preset) of ``run``."""
    limit = run.timeout if math.isfinite(run.timeout) else 120.0
    by_method = {}
    for r in run.rows:
        by_method.setdefault(r.method, {})[r.case] = r
    out = []
    for preset in run.presets:
        reference = by_method.get(f"{run.reference}/{preset}", {})
        for peer in run.peers:
            mine = {k: r for k, r in by_method.get(f"{peer}/{preset}", {}).items()
                    if r.verdict != "skip"}
            n = len(mine)
            if not n:
                continue
            measured = [r.duality_gap if r.tolerances.startswith("gap") else r.kkt_max
                        for r in mine.values()]
            finite = [v for v in measured if v == v]
            both = [k for k in mine if k in reference and reference[k].verdict != "skip"]
            ratio = math.nan
            if both:
                ratio = shifted_geometric_mean([_charged(mine[k], limit) for k in both]) / \
                    shifted_geometric_mean([_charged(reference[k], limit) for k in both])
            wrong = sum(r.verdict == "fail" for r in mine.values())
            out.append(Summary(
                solver=peer, preset=preset, cases=n,
                success=sum(_succeeded(r) for r in mine.values()) / n,
                correct=1.0 - wrong / n, wrong=wrong,
                errors=sum(r.verdict == "error" for r in mine.values()),
                worst=max(0.0, *finite) if finite else math.nan, time_ratio=ratio))
    return out


#: What the suite's columns mean in an audit row (the others keep the suite's meaning).
AUDIT_COLUMNS = {
    "method": "the solver and the preset it ran at (solver/loose, solver/tight)",
    "oracle": "what the answer is judged by: its certificate and weak duality vs the oracle",
    "tolerances": "the certificate's test: kkt<tol (m - M) or gap<=tol (LIBLINEAR)",
    "status": "the solver's claim: optimal = it said converged; max_iter / inaccurate = it "
              "did not; error; skipped",
    "expected_status": "the certificate's verdict at the preset: optimal or inaccurate "
                       "(infeasible: a hard margin with no solution)",
    "verdict": "pass, fail (a wrong answer: called converged, refuted), error (raised, timed "
               "out) or skip (a case the solver cannot take)",
    "reasons": "why a row is a wrong answer, an error or skipped",
}
