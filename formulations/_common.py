"""What every oracle shares: solver choice and tolerances, status mapping, error capture,
and turning solved CVXPY variables into maxmargin's result dataclasses.

Solvers and their ground-truth tolerances
-----------------------------------------
The oracles are the ground truth of the suite, so each known solver is run far tighter than its
default (user-supplied options always override these):

========  ======================================================================================
CLARABEL  ``tol_gap_abs = tol_gap_rel = tol_feas = 1e-10``, ``tol_ktratio = 1e-8``,
          ``max_iter = 500``, ``max_threads = 1`` (the default solver; interior point, so the
          result is accurate; one thread, as a forked child cannot use a started thread pool).
OSQP      ``eps_abs = eps_rel = 1e-9``, solution polishing on, ``max_iter = 200_000``
          (CVXPY's OSQP defaults stop at 1e-5 and OSQP's own at 1e-3: visibly wrong ``b``).
SCS       ``eps_abs = eps_rel = 1e-9``, ``max_iters = 200_000``.
PIQP      ``eps_abs = eps_rel = 1e-10``, ``max_iter = 500`` (a proximal interior-point method:
          the second interior-point solver of the retry chain).
========  ======================================================================================

Any other installed CVXPY solver can be named; its options are passed through unchanged.

Statuses
--------
CVXPY ``optimal`` -> ``"optimal"``; ``optimal_inaccurate`` -> ``"inaccurate"``; ``infeasible``,
``infeasible_inaccurate``, ``unbounded``, ``unbounded_inaccurate`` (an unbounded *dual* means an
infeasible primal, e.g. the hard-margin dual of non-separable data) and
``infeasible_or_unbounded`` -> ``"infeasible"``; ``user_limit`` (iteration or time cap) ->
``"max_iter"`` (with a :class:`~maxmargin.exceptions.ConvergenceWarning`); any exception raised
by CVXPY or the solver -> ``"solver_error"`` with the exception text in ``message``.

From solver output to an SVMSolution
------------------------------------
1. alpha: the margin constraints' duals (primal forms) or the variable (dual form), clipped to
   ``[0, C]`` and put exactly on a bound where complementarity says it belongs
   (:func:`clean_alpha`);
2. active-set polish (:func:`~maxmargin.formulations._polish.active_set_polish`, the oracles'
   own: dense KKT solves on the free set, no code shared with :mod:`maxmargin.algorithms`): a
   primal active-set method started on the free set found in step 1 (one Newton step when that
   set is right; singular faces of low-rank Gram matrices included); the polished alpha is
   kept only if its float64 certificate is no worse. It takes interior-point answers (~1e-7 on
   alpha for some problems) to round-off. ``Formulation.polish = False`` switches it off;
3. ``b`` by the KKT rules (:func:`~maxmargin.formulations._polish.kkt_intercept`), objectives
   from alpha, ``w`` and ``b`` (:func:`svm_solution`).
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import math
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import cvxpy as cp
import cvxpy.settings as cps
import numpy as np

import maxmargin.exceptions as exceptions
from maxmargin.certificate import (
    certify_infeasible,
    certify_svm,
    max_violation,
    opposite_duplicates,
    opposite_duplicates_message,
)
from maxmargin.formulations._hulls_lp import hulls_meet
from maxmargin.formulations._polish import (
    EIG_CUTOFFS,
    active_set_polish,
    balance,
    kkt_intercept,
)
from maxmargin.kernels import Kernel, LinearKernel
from maxmargin.kernels.base import row_norms2
from maxmargin.results import SVMSolution, infeasible_svm, join_messages
from maxmargin.tolerances import HULLS_MEET_ATOL, ORACLE_GAP, ORACLE_KKT, SNAP_RTOL

__all__ = [
    "DEFAULT_SOLVER",
    "SNAP_RTOL",
    "Formulation",
    "SolveOutcome",
    "solver_options",
    "run_solver",
    "clean_alpha",
    "svm_solution",
    "check_solver",
    "max_violation",
    "active_set_polish",
    "judge_svm",
    "twin_scales",
    "feature_centre",
    "c_output_silenced",
    "centred",
    "svm_fallback",
]

#: The solver used when ``solve(solver=None)``.
DEFAULT_SOLVER = "CLARABEL"

#: The active-set polish's budget in floating-point operations (counted by
#: :func:`~maxmargin.formulations._polish.active_set_polish`, never timed: the same answer under
#: any load): ``30 n k^2`` (``k = d`` for the linear kernel, ``n`` for a Gram matrix: three
#: eigendecompositions of a free set of ``n``), and at least ``POLISH_MIN_WORK``.
POLISH_MIN_WORK = 1e10
#: The polish's own bar on the KKT multipliers (decision-function units): far below
#: ``ORACLE_KKT``, so a certified answer is taken on to round-off where the work allows.
POLISH_KKT_TOL = 1e-12


def _osqp_major() -> int:
    import osqp

    return int(str(osqp.__version__).split(".")[0])


def _default_options(solver: str) -> dict[str, Any]:
    if solver == "CLARABEL":
        return {
            "tol_gap_abs": 1e-10,
            "tol_gap_rel": 1e-10,
            "tol_feas": 1e-10,
            "tol_ktratio": 1e-8,
            "max_iter": 500,
            # one thread: faer's rayon pool, once started, deadlocks a forked child (the
            # suite's wall-clock guard forks); single-threaded is also deterministic
            "max_threads": 1,
        }
    if solver == "OSQP":
        polish_key = "polishing" if _osqp_major() >= 1 else "polish"
        return {"eps_abs": 1e-9, "eps_rel": 1e-9, polish_key: True, "max_iter": 200_000}
    if solver == "SCS":
        return {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200_000}
    if solver == "PIQP":
        return {"eps_abs": 1e-10, "eps_rel": 1e-10, "max_iter": 500}
    return {}


def check_solver(solver: Any) -> str:
    """``None`` (the default, Clarabel) or the name of an installed CVXPY solver, upper-cased."""
    if solver is None:
        return DEFAULT_SOLVER
    installed = tuple(cp.installed_solvers())
    if not isinstance(solver, str) or solver.upper() not in installed:
        raise ValueError(
            f"`solver` must be None or one of the installed CVXPY solvers {installed}; "
            f"got {solver!r}."
        )
    return solver.upper()


def solver_options(solver: str, user_options: Mapping[str, Any]) -> dict[str, Any]:
    """The ground-truth defaults of ``solver`` updated with ``user_options`` (user wins).

    For OSQP >= 1 a user ``polish`` is renamed ``polishing`` (the option's new name).
    """
    options = _default_options(solver)
    user = dict(user_options)
    if solver == "OSQP" and "polish" in user and _osqp_major() >= 1:
        user["polishing"] = user.pop("polish")
    options.update(user)
    return options


_STATUS_MAP = {
    cps.OPTIMAL: "optimal",
    cps.OPTIMAL_INACCURATE: "inaccurate",
    cps.INFEASIBLE: "infeasible",
    cps.INFEASIBLE_INACCURATE: "infeasible",
    cps.UNBOUNDED: "infeasible",
    cps.UNBOUNDED_INACCURATE: "infeasible",
    cps.INFEASIBLE_OR_UNBOUNDED: "infeasible",
    cps.USER_LIMIT: "max_iter",
}


@dataclass(frozen=True)
class SolveOutcome:
    """What one ``problem.solve`` call produced, before any post-processing.

    ``has_values`` says whether the variables (and duals) hold a point to build a result from:
    true for ``optimal``, ``inaccurate`` and ``max_iter``.
    """

    status: str
    cvxpy_status: str
    message: str
    iterations: int
    runtime: float
    solver: str

    @property
    def has_values(self) -> bool:
        return self.status in ("optimal", "inaccurate", "max_iter")


def _flush_c_streams() -> None:
    """``fflush(NULL)``: the C library's buffered output written now, to the descriptor it was
    meant for (a fully buffered stream would otherwise write it after the block)."""
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):  # pragma: no cover - no C library to ask
        pass


@contextlib.contextmanager
def c_output_captured(into: list[str] | None) -> Iterator[None]:
    """Standard output and error of compiled code (OSQP's and PIQP's notes from C and C++,
    past Python's streams) sent to a temporary file inside the block; its text, if any, is
    appended to ``into`` (discarded when ``into`` is None)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile() as sink:
        try:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            yield
        finally:
            _flush_c_streams()
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
        if into is not None:
            sink.seek(0)
            text = " ".join(sink.read().decode("utf-8", errors="replace").split())
            if text:
                into.append(text)


@contextlib.contextmanager
def c_output_silenced(on: bool) -> Iterator[None]:
    """:func:`c_output_captured` with the text discarded; nothing when ``on`` is False."""
    if not on:
        yield
        return
    with c_output_captured(None):
        yield


@contextlib.contextmanager
def warnings_recorded(notes: list[str], *, reissue: bool = True) -> Iterator[None]:
    """Warnings raised inside the block are recorded, never shown: each distinct one (category
    and text, with its count) is appended to ``notes`` for the answer's ``message``, except a
    :class:`~maxmargin.exceptions.ConvergenceWarning` (maxmargin's documented warning), issued
    again after the block when ``reissue`` (dropped otherwise: an inner attempt's)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    counts: dict[str, int] = {}
    for record in caught:
        if issubclass(record.category, exceptions.ConvergenceWarning):
            if reissue:
                warnings.warn_explicit(record.message, record.category, record.filename,
                                       record.lineno)
            continue
        text = f"{record.category.__name__}: {record.message}"
        counts[text] = counts.get(text, 0) + 1
    notes.extend(text if k == 1 else f"{text} (x{k})" for text, k in counts.items())


def warning_note(notes: list[str]) -> str:
    """``notes`` of :func:`warnings_recorded` as one clause of a message ('' when none)."""
    return f"warnings caught: {'; '.join(notes)}" if notes else ""


def run_solver(
    problem: cp.Problem, solver: str, options: Mapping[str, Any], what: str
) -> SolveOutcome:
    """Solve ``problem`` with ``solver`` and map the outcome; never raises for solver failures.

    Any exception raised inside ``problem.solve`` (``cvxpy.SolverError``, a solver's own
    exception, a bad option name) is recorded as ``"solver_error"`` with its text. What the
    solver's compiled code prints is captured (:func:`c_output_captured`) and its first 300
    characters join the message, unless ``options`` has ``verbose=True``. An iteration cap
    warns :class:`~maxmargin.exceptions.ConvergenceWarning`.
    """
    start = time.perf_counter()
    # what compiled code prints goes into the message (PIQP's notes are dropped), unless the
    # caller asked the solver to talk (``verbose=True``)
    printed: list[str] = []
    output = (contextlib.nullcontext() if options.get("verbose") else
              c_output_captured(None if solver == "PIQP" else printed))
    try:
        with warnings.catch_warnings(), output:
            # CVXPY's generic "Solution may be inaccurate" warning: the status says it better.
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            problem.solve(solver=solver, **options)
    except Exception as exc:  # every solver failure becomes a status, never an exception
        runtime = time.perf_counter() - start
        text = join_messages(f"{type(exc).__name__}: {exc}",
                             f"{solver} printed: {printed[0][:300]}" if printed else "")
        return SolveOutcome("solver_error", "error", text, 0, runtime, solver)
    runtime = time.perf_counter() - start
    cvx_status = str(problem.status)
    status = _STATUS_MAP.get(cvx_status, "solver_error")
    iterations = getattr(problem.solver_stats, "num_iters", None)
    extra = getattr(problem.solver_stats, "extra_stats", None)
    if iterations is None and extra is not None and hasattr(extra, "info"):
        iterations = getattr(extra.info, "iter", None)  # OSQP keeps it in its info record
    message = "" if status == "optimal" else f"CVXPY status {cvx_status!r} from {solver}"
    if cvx_status in (cps.UNBOUNDED, cps.UNBOUNDED_INACCURATE):
        message += " (the maximisation is unbounded: the primal problem is infeasible)"
    if printed:
        message = join_messages(message, f"{solver} printed: {printed[0][:300]}")
    if status == "max_iter":
        warnings.warn(
            f"{what}: {solver} stopped at its iteration/time limit ({cvx_status}); "
            "the result is not certified optimal.",
            exceptions.ConvergenceWarning,
            stacklevel=3,
        )
    return SolveOutcome(status, cvx_status, message, int(iterations or 0), runtime, solver)



Model = Callable[[float], tuple[cp.Problem, Mapping[str, cp.Variable], Callable[..., Any]]]
Judge = Callable[[Any], Any]


class Formulation:
    """A CVXPY model of one max-margin problem, ready to solve and to read.

    Attributes
    ----------
    name : str
        ``"hard_margin_primal"``, ``"svm_dual"``, ... (used in ``method`` strings).
    problem : cvxpy.Problem
        The model in the user's units; read it, or build a variant with
        :meth:`with_constraints`.
    variables : mapping of str to cvxpy.Variable
        The named variables (``w``, ``b``, ``xi``, ``alpha``, ``lam``, ``mu``...); after
        ``solve()`` they hold the answer in the user's units.
    polish : bool
        SVM forms: polish the solver's alpha on its active set (:func:`active_set_polish`) before
        building the solution (default True). Set it to False to see the solver's raw answer.

    ``solve(solver=None, **solver_options)`` solves an exactly equivalent, well-scaled twin of
    the model (data divided by ``s``; for the SVM ``C`` times ``s^2``, see each family), maps the
    answer back, and judges it by its float64 certificate (:mod:`maxmargin.certificate`):
    ``"optimal"`` only when it meets ``ORACLE_KKT``/``ORACLE_GAP`` (``ORACLE_HULL_GAP`` for the
    nearest-point forms; where ``ORACLE_KKT`` is below the float64 resolution of ``m - M``, an
    ``m - M`` within that resolution and the gap,
    :meth:`~maxmargin.certificate.Certificate.final`). Otherwise it retries -- (when no solver
    was named) PIQP on the twin, the unscaled model, then (soft margin) the hard-margin optimum
    when ``max alpha <= C`` (:func:`svm_fallback`), then (when no solver was named) OSQP -- and
    returns the best answer found, ``"inaccurate"`` with a
    :class:`~maxmargin.exceptions.ConvergenceWarning` if none is certified. ``message`` lists
    the attempts. The ``method`` of the result is
    ``"cvxpy/<name>/<SOLVER>"``.
    """

    __slots__ = ("name", "problem", "variables", "polish", "_extract", "_model", "_scales",
                 "_judge", "_variant", "_precheck", "_fallback")

    def __init__(
        self,
        name: str,
        problem: cp.Problem,
        variables: Mapping[str, cp.Variable],
        extract: Callable[[SolveOutcome, str, bool], Any],
        *,
        model: Model | None = None,
        scales: tuple[float, ...] = (),
        judge: Judge | None = None,
        precheck: Callable[[], Any] | None = None,
        fallback: Callable[[str | None, dict[str, Any]], Any] | None = None,
    ) -> None:
        self.name = name
        self.problem = problem
        self.variables = MappingProxyType(dict(variables))
        self.polish = True
        self._extract = extract
        self._model = model
        self._scales = tuple(float(x) for x in scales)
        self._judge = judge
        self._variant = False
        self._precheck = precheck
        self._fallback = fallback

    def __repr__(self) -> str:
        return f"Formulation({self.name!r}, variables={list(self.variables)})"

    def with_constraints(self, *constraints: cp.Constraint) -> Formulation:
        """A new formulation: the same objective and constraints plus ``constraints``.

        The result is built from the same variables and original constraints, so ``solve``
        still reads ``alpha`` from the margin constraints' duals. The variant has
        ``polish = False`` (the active-set polish solves the KKT system of the *plain* SVM,
        which the extra constraints change), is solved as written (no scaled twin, no retry:
        the constraints are in the user's units), and keeps the solver's status (the
        certificate of the plain problem is attached for information).
        """
        problem = cp.Problem(self.problem.objective, self.problem.constraints + list(constraints))
        variant = Formulation(self.name, problem, self.variables, self._extract,
                              judge=self._judge)
        variant.polish = False
        variant._variant = True
        return variant

    def solve(self, solver: str | None = None, **solver_opts: Any) -> Any:
        """Solve and return an ``SVMSolution``, ``PolytopeSolution`` or ``HullPairSolution``.

        Parameters
        ----------
        solver : str, optional
            An installed CVXPY solver name; default ``"CLARABEL"`` (then OSQP as a fallback).
        **solver_opts
            Passed to the named solver, overriding the ground-truth defaults.
        """
        name = check_solver(solver)
        caught: list[str] = []
        if self._variant or self._model is None:
            with warnings_recorded(caught):
                outcome = run_solver(self.problem, name, solver_options(name, solver_opts),
                                     self.name)
                sol = self._extract(outcome, f"cvxpy/{self.name}/{outcome.solver}", self.polish)
                sol = sol if self._judge is None else self._judge(sol, strict=False)
            return _with_note(sol, warning_note(caught))
        if self._precheck is not None:
            with warnings_recorded(caught):
                infeasible = self._precheck()
            if infeasible is not None:
                return _with_note(infeasible, warning_note(caught))
        attempts: list[tuple[float | None, str]] = [(x, name) for x in self._scales]
        if 1.0 not in self._scales:
            attempts.append((1.0, name))
        if self._fallback is not None:
            attempts.append((None, name))  # the hard-margin shortcut (see svm_fallback)
        if solver is None and self._scales:
            # a second interior-point method (PIQP's proximal steps take ill-conditioned
            # twins Clarabel stops short on), then a first-order one
            if "PIQP" in cp.installed_solvers():
                attempts.insert(1, (self._scales[0], "PIQP"))
            attempts.append((self._scales[0], "OSQP"))
        notes: list[str] = []
        best = None
        for scale, sname in attempts:
            inner: list[str] = []
            # an attempt's own warnings (NumPy's, CVXPY's, a solver's) go to its note; its
            # ConvergenceWarning is dropped: the outcome says it, and the answer warns once
            with warnings_recorded(inner, reissue=False):
                if scale is None:
                    sol = self._fallback(solver, dict(solver_opts))
                    if sol is None:
                        continue
                    what, extra = "the hard-margin solution", ""
                else:
                    if scale == 1.0:
                        problem, variables, extract = self.problem, self.variables, self._extract
                    else:
                        problem, variables, extract = self._model(scale)
                    options = solver_options(sname, solver_opts if sname == name else {})
                    outcome = run_solver(problem, sname, options, self.name)
                    sol = extract(outcome, f"cvxpy/{self.name}/{outcome.solver}", self.polish)
                    sol = self._judge(sol, strict=True)
                    what = f"the model scaled by 1/{scale:.3g}"
                    extra = f" ({outcome.message})" if outcome.message else ""
            if inner:
                extra += f" [{warning_note(inner)}]"
            notes.append(f"{sname} on {what}: {sol.status}{extra}")
            if best is None or _better(sol, best):
                best = sol
            if sol.status in ("optimal", "infeasible"):
                break
        assert best is not None
        self._set_values(best)
        message = join_messages(warning_note(caught), "attempts: " + " | ".join(notes),
                                best.message)
        if best.status not in ("optimal", "infeasible"):
            warnings.warn(
                f"{self.name}: no attempt was certified optimal ({' | '.join(notes)}); "
                f"the best answer is returned with status {best.status!r}"
                + (" (the solver stopped at its iteration limit)." if best.status == "max_iter"
                   else "."),
                exceptions.ConvergenceWarning,
                stacklevel=2,
            )
        return dataclasses.replace(best, message=message)

    def _set_values(self, sol: Any) -> None:
        """Put the answer (user's units) into the public variables where they exist."""
        values = {
            "alpha": getattr(sol, "alpha", None), "w": getattr(sol, "w", None),
            "b": getattr(sol, "b", None), "lam": getattr(sol, "weights", None),
        }
        if hasattr(sol, "weights_p"):
            values.update(lam=sol.weights_p, mu=sol.weights_q)
        for key, var in self.variables.items():
            value = values.get(key)
            if value is None:
                continue
            try:
                arr = np.asarray(value, dtype=np.float64).reshape(var.shape)
                if np.all(np.isfinite(arr)):
                    var.value = arr
            except (ValueError, TypeError):  # pragma: no cover - shapes come from the model
                pass


def _with_note(sol: Any, note: str) -> Any:
    """``sol`` with ``note`` joined to its message (``sol`` itself when the note is empty)."""
    return dataclasses.replace(sol, message=join_messages(sol.message, note)) if note else sol


def _better(a: Any, b: Any) -> bool:
    """Whether answer ``a`` is better than ``b``: certified beats not, then the smaller
    certificate residual, then having values at all."""
    rank = {"optimal": 0, "infeasible": 0, "inaccurate": 1, "max_iter": 1, "solver_error": 2}
    ra, rb = rank[a.status], rank[b.status]
    if ra != rb:
        return ra < rb
    ca, cb = getattr(a, "certificate", None), getattr(b, "certificate", None)
    if ca is None or cb is None:
        return ca is not None
    return _residual(ca) < _residual(cb)


def _residual(cert: Any) -> float:
    value = max(getattr(cert, "kkt_violation", 0.0), getattr(cert, "gap", 0.0))
    return value if math.isfinite(value) else math.inf


def twin_scales(F: np.ndarray, C: float | np.ndarray | None) -> tuple[float, ...]:
    """The scales ``s`` of the well-scaled twins (data ``/ s``, box ``C s^2``), best first.

    Hard margin: ``s = max_i ||f_i||`` (unit data). Soft margin: ``s = (max_i ||f_i||^2 /
    C)^(1/4)``, which makes the box and the largest kernel value equal (both
    ``sqrt(C max_i K_ii)``): scaling to unit data alone would put the whole conditioning
    ``C max K_ii`` into the box, which interior-point solvers handle worse. ``s^2 / C`` out
    of the float range (a spread of 1e-20 with ``C = 1e300``) is taken through square roots;
    a scale whose ``s``, ``1 / s`` or box ``C s^2`` is still out of the normal range is
    replaced by 1.
    """
    s = data_scale(F)
    if C is not None:
        c_max = float(np.max(C))
        ratio = s * s / c_max
        # (s^2 / C)^(1/4), through square roots where s^2 / C leaves the float range
        s = ratio**0.25 if 0.0 < ratio < math.inf else math.sqrt(s) * c_max**-0.25
    box = 1.0 if C is None else c_max * s * s
    lo, hi = sys.float_info.min, sys.float_info.max
    if not (lo <= s <= hi and s * hi >= 1.0 and lo <= box <= hi):
        return (1.0,)  # s, 1 / s or C s^2 out of the normal range: the model as it is
    return (s,)


def svm_fallback(
    hard: Callable[[], Formulation], judge: Judge, C: float | None, name: str,
    sample_weight: np.ndarray | None = None,
) -> Callable[[str | None, dict[str, Any]], SVMSolution | None] | None:
    """The hard-margin shortcut of a soft-margin oracle (None for the hard margin).

    If the classes are separable and the hard-margin optimum has ``max alpha <= C``, it is
    also the soft-margin optimum (it satisfies every KKT condition of the soft problem with
    ``xi = 0``). With a large ``C max K_ii`` this is far better conditioned than the soft
    problem. The answer is judged with the soft problem's certificate.
    """
    if C is None:
        return None

    def fallback(solver: str | None, options: dict[str, Any]) -> SVMSolution | None:
        form = hard()
        form._precheck = None  # if the hulls meet, the hard QP fails and so does the shortcut
        sol = form.solve(solver, **options)
        box = C if sample_weight is None else C * sample_weight
        if sol.status != "optimal" or np.any(sol.alpha > box):
            return None
        return judge(dataclasses.replace(
            sol, C=C, sample_weight=sample_weight,
            method=f"{sol.method} (hard-margin optimum, alpha <= C)",
        ), strict=True)

    return fallback


def feature_centre(X: Any) -> np.ndarray:
    """The mean of the rows of dense ``X`` (zeros for sparse ``X``: centring would fill it)."""
    if hasattr(X, "tocsr"):
        return np.zeros(X.shape[1])
    return np.asarray(X, dtype=np.float64).mean(axis=0)


def centred(X: Any) -> Any:
    """``X`` minus :func:`feature_centre` (sparse ``X`` unchanged)."""
    return X if hasattr(X, "tocsr") else X - feature_centre(X)


def data_scale(F: np.ndarray) -> float:
    """``s = max_i ||f_i||`` (1 for all-zero data): the twin model divides the data by ``s``."""
    s = float(np.sqrt(np.max(row_norms2(F))))
    return s if s > 0.0 and math.isfinite(s) else 1.0


def hard_margin_precheck(
    name: str, F: np.ndarray, X: np.ndarray, y: np.ndarray, kernel: Kernel,
    eig_min: float = 0.0,
) -> Callable[[], SVMSolution | None]:
    """The hard margin's infeasibility certificate, asked before any QP is solved.

    With ``f_i`` the rows of a feature-space factor ``F`` (``X`` itself for the linear kernel)
    scaled by ``1 / max_i ||f_i||``, the classes are not separable exactly when their convex
    hulls meet: the linear feasibility problem ``sum_{y_i=+1} lam_i f_i = sum_{y_j=-1} mu_j f_j``
    with ``lam``, ``mu`` in simplices, up to ``HULLS_MEET_ATOL`` in the max norm (an LP solved
    by HiGHS' simplex method, :func:`~maxmargin.formulations._hulls_lp.hulls_meet`): hulls
    within ``1e-8 R`` leave no margin to certify (the factor of a kernel's Gram matrix is itself
    only accurate to ~1e-11 R). Then the status is ``"infeasible"``; otherwise the QP is
    solved. A Gram matrix of full rank with smallest eigenvalue ``eig_min > 0`` needs no LP: any
    two convex combinations differ by ``v`` with ``v^T K v >= eig_min ||v||^2 >= eig_min
    (1 / n_+ + 1 / n_-)``, which already proves the hulls apart.
    """

    def infeasible(message: str, solver: str, start: float, weights: np.ndarray) -> SVMSolution:
        cert = certify_infeasible(weights, X, y, kernel)
        return infeasible_svm(X, y, kernel, f"cvxpy/{name}/{solver}", message, cert,
                              runtime=time.perf_counter() - start)

    def precheck() -> SVMSolution | None:
        start = time.perf_counter()
        clash = opposite_duplicates(X, y)
        if clash is not None:
            pair = np.zeros(X.shape[0])
            pair[list(clash)] = 1.0
            return infeasible(opposite_duplicates_message(clash), "exact", start, pair)
        s = data_scale(F)
        n_pos, n_neg = int(np.sum(y > 0)), int(np.sum(y < 0))
        lower2 = eig_min * (1.0 / n_pos + 1.0 / n_neg) / (s * s)
        if lower2 > F.shape[1] * HULLS_MEET_ATOL**2:
            return None
        Fs = F / s
        weights = hulls_meet([Fs[y > 0], Fs[y < 0]], HULLS_MEET_ATOL)
        if weights is None:
            return None
        evidence = np.zeros(X.shape[0])
        evidence[y > 0], evidence[y < 0] = weights
        return infeasible(
            "hard margin: the classes' convex hulls (in feature space) are within "
            f"{HULLS_MEET_ATOL:g} R (HiGHS LP on the data scaled to unit radius R: convex "
            "combinations of the two classes agree to that in every coordinate): not separable "
            "at this resolution, no margin can be certified; use a finite C", "HIGHS", start,
            evidence)

    return precheck


def judge_svm(
    X: np.ndarray, y: np.ndarray, C: float | np.ndarray | None, kernel: Kernel
) -> Callable[..., SVMSolution]:
    """The judge of an SVM oracle: certificate attached; with ``strict`` the status becomes
    ``"optimal"`` exactly when it meets ``ORACLE_KKT`` and ``ORACLE_GAP``, or has ``m - M``
    within its float64 resolution where that is above ``ORACLE_KKT`` and meets the gap
    (:meth:`~maxmargin.certificate.Certificate.final`)."""

    def judge(sol: SVMSolution, strict: bool = True) -> SVMSolution:
        if strict and sol.status == "infeasible":
            # A soft margin is never infeasible, and a hard margin's infeasibility is decided by
            # the hull certificate before any QP (hard_margin_precheck): the solver's claim is
            # a numerical failure of this attempt.
            return dataclasses.replace(sol, status="solver_error", message=(
                f"{sol.message}; a solver's infeasibility claim is not a certificate here"
            ).lstrip("; "))
        if sol.status in ("infeasible", "solver_error") or not np.all(np.isfinite(sol.alpha)):
            if sol.status in ("optimal", "inaccurate", "max_iter"):
                return dataclasses.replace(sol, status="inaccurate", message=(
                    sol.message + "; the solver returned non-finite values").lstrip("; "))
            return sol
        cert = certify_svm(sol.alpha, X, y, C, kernel)
        status = sol.status
        if strict:
            if cert.final(ORACLE_KKT, ORACLE_GAP):  # m - M at float64's resolution at worst
                status = "optimal"
            elif status == "optimal":
                status = "inaccurate"
        b, interval = sol.b, sol.b_interval
        if not math.isfinite(b):
            b, interval = cert.b, (cert.b, cert.b)
        return dataclasses.replace(
            sol, status=status, certificate=cert, b=b, b_interval=interval,
            message=join_messages(sol.message, cert.summary()),
        )

    return judge


def clean_alpha(
    alpha: np.ndarray, C: float | np.ndarray | None, margins: np.ndarray | None = None
) -> np.ndarray:
    """Project interior-point duals onto ``[0, C]`` and put each alpha that belongs on a bound
    exactly on it.

    An interior-point solution is never exactly on a bound; what is known at convergence is the
    complementary pair: ``alpha_i`` vs ``m_i = y_i f(x_i) - 1`` (alpha_i = 0 needs m_i >= 0, a free
    alpha needs m_i = 0) and ``C - alpha_i`` vs ``m_i`` (alpha_i = C needs m_i <= 0). With
    ``scale = C`` (or ``max_i alpha_i`` for the hard margin) and the margins from the solver's own
    ``b``, the smaller member of each pair is the one that is zero:

    .. math::

        \\alpha_i \\leftarrow 0 \\text{ if } \\alpha_i / s \\le \\min(|m_i|, (C - \\alpha_i)/s),
        \\qquad \\alpha_i \\leftarrow C \\text{ if } (C - \\alpha_i)/s \\le |m_i|
        \\text{ and } C - \\alpha_i < \\alpha_i

    (ties go to the bound), otherwise alpha_i is free and kept. Without ``margins`` (or in
    addition to it) alphas within ``SNAP_RTOL * scale`` of a bound are snapped onto it. This is
    what makes ``support()``, the free set and so ``b`` right: an interior-point alpha at
    ``C - 1e-8`` on a point with ``m_i = -3e-3`` is at the bound, not a free support vector.
    """
    alpha = np.asarray(alpha, dtype=np.float64).ravel().copy()
    upper = math.inf if C is None else C
    np.clip(alpha, 0.0, upper, out=alpha)
    scale = float(np.max(C)) if C is not None else (float(alpha.max()) if alpha.size else 0.0)
    if scale <= 0.0:
        return np.zeros_like(alpha)
    to_zero = alpha < SNAP_RTOL * scale
    to_upper = np.zeros_like(to_zero) if C is None else alpha > C - SNAP_RTOL * scale
    if margins is not None:
        d0 = alpha / scale
        dC = np.full_like(alpha, math.inf) if C is None else (C - alpha) / scale
        dm = np.abs(np.asarray(margins, dtype=np.float64))
        to_zero |= (d0 <= dm) & (d0 <= dC)
        to_upper |= (dC <= dm) & (dC < d0)
    alpha[to_zero] = 0.0
    if C is not None:
        snap = to_upper & ~to_zero
        alpha[snap] = np.broadcast_to(C, alpha.shape)[snap]
    return alpha


def _hinge(margins: np.ndarray) -> np.ndarray:
    return np.maximum(0.0, 1.0 - margins)


def svm_solution(
    outcome: SolveOutcome,
    method: str,
    *,
    alpha: np.ndarray | None,
    X: np.ndarray,
    y: np.ndarray,
    C: float | None,
    kernel: Kernel,
    b_solver: float | None = None,
    w: np.ndarray | None = None,
    gram: np.ndarray | None = None,
    polish: bool = True,
    sample_weight: np.ndarray | None = None,
) -> SVMSolution:
    """Build an :class:`~maxmargin.results.SVMSolution` from a solved model.

    ``alpha=None`` (the solve produced no point) gives NaN alpha, w, b and objectives.
    Otherwise:

    1. ``alpha`` is cleaned by :func:`clean_alpha` using the margins ``y_i f(x_i) - 1`` of the
       solver's own point (``f = X w + b`` with the primal variables, or ``f = K (alpha*y) + b``
       with ``b`` the dual of ``y . alpha = 0`` in the dual QP), and ``y . alpha = 0`` restored
       by :func:`~maxmargin.formulations._polish.balance`.
    2. With ``polish=True`` the active set is polished by :func:`active_set_polish` (within
       ``POLISH_MIN_WORK`` or ``30 n k^2`` operations), with the eigenvalue cutoff
       ``EIG_CUTOFFS[0]``, then ``EIG_CUTOFFS[1]`` from the best alpha so far when the first
       leaves the answer uncertified. The polished alpha replaces the current one only if its
       float64 certificate (:func:`~maxmargin.certificate.certify_svm`, ``g = K (alpha*y)``)
       is no worse: certified beats not, then the larger of ``kkt / ORACLE_KKT`` and
       ``gap / ORACLE_GAP``; ``w`` is then ``X^T (alpha*y)`` for every form. Sparse linear
       data are polished densified (``n d <= POLISH_MAX_DENSE``) or through their Gram
       matrix (``n <= POLISH_MAX_GRAM``), larger ones not at all.
    3. With ``v = alpha * y``: ``w`` is the primal variable (primal forms, unpolished) or
       ``X^T v`` (linear kernel), else None; ``g_i = sum_j v_j K(x_j, x_i)`` (``x_i . w`` for the
       linear kernel); ``b`` and ``b_interval`` by
       :func:`~maxmargin.formulations._polish.kkt_intercept` (mean of ``y_i - g_i`` over free
       SVs, else the midpoint of the KKT interval);
       ``dual_objective = sum(alpha) - 1/2 v^T K v``;
       ``primal_objective = 1/2 ||w||^2 + C sum_i max(0, 1 - y_i (g_i + b))`` with
       ``||w||^2 = v^T K v`` for a kernel (no hinge term for the hard margin).

    With ``sample_weight`` the box is ``C_i = C sample_weight_i`` throughout.
    """
    linear = isinstance(kernel, LinearKernel)
    if alpha is None:
        n, d = X.shape[0], (X.shape[1] if X.ndim == 2 else 0)
        nan = math.nan
        point: dict[str, Any] = {
            "alpha": np.full(n, nan),
            "b": nan,
            "w": np.full(d, nan) if linear else None,
            "b_interval": (nan, nan),
            "primal_objective": nan,
            "dual_objective": nan,
        }
    else:
        K = None if linear else (kernel.gram(X) if gram is None else gram)
        box = C if C is None or sample_weight is None else C * sample_weight
        k = X.shape[1] if linear else X.shape[0]
        work = max(POLISH_MIN_WORK, 30.0 * X.shape[0] * k * k)
        point = _solved_point(alpha, X, y, box, K, b_solver, w, polish, work, kernel)
    return SVMSolution(
        **point,
        status=outcome.status,
        iterations=outcome.iterations,
        method=method,
        X_train=X,
        y_train=y,
        kernel=kernel,
        C=C,
        message=outcome.message,
        runtime=outcome.runtime,
        sample_weight=sample_weight,
        tol=ORACLE_KKT,
    )


def _solved_point(
    alpha: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    C: float | np.ndarray | None,
    K: np.ndarray | None,
    b_solver: float | None,
    w: np.ndarray | None,
    polish: bool,
    max_work: float | None = None,
    kernel: Kernel | None = None,
) -> dict[str, Any]:
    """Steps 1-3 of :func:`svm_solution`; ``K`` is None for the linear kernel (``kernel``
    defaults to it)."""
    linear = K is None
    kernel = LinearKernel() if kernel is None else kernel
    w_primal = None if w is None else np.asarray(w, dtype=np.float64).ravel()
    upper = np.array(np.broadcast_to(math.inf if C is None else C, y.shape), dtype=np.float64)

    def kernel_values(a: np.ndarray) -> np.ndarray:
        """``g = K (a * y)``."""
        return X @ (X.T @ (a * y)) if linear else K @ (a * y)

    def solver_values(a: np.ndarray) -> np.ndarray:
        """``g`` as the solver's point gives it: ``X w`` for the primal forms."""
        return kernel_values(a) if w_primal is None else X @ w_primal

    raw = np.clip(np.asarray(alpha, dtype=np.float64).ravel(), 0.0, None)
    margins = None if b_solver is None else y * (solver_values(raw) + float(b_solver)) - 1.0
    alpha = balance(clean_alpha(raw, C, margins), y, upper)
    g = solver_values(alpha)
    points, gram = _polish_operands(X, K, kernel) if polish else (None, None)
    if points is not None or gram is not None:
        # judged by the float64 certificate of alpha (g = K (alpha*y)), as the judge will
        best = _polish_score(certify_svm(alpha, X, y, C, kernel, g=kernel_values(alpha)))
        for cutoff in EIG_CUTOFFS:
            with np.errstate(all="ignore"):
                polished = active_set_polish(alpha, y, upper, K=gram, X=points,
                                             kkt_tol=POLISH_KKT_TOL, cutoff=cutoff,
                                             max_work=max_work or math.inf)
            if polished is not None:
                g_polished = kernel_values(polished)
                score = _polish_score(certify_svm(polished, X, y, C, kernel, g=g_polished))
                if score <= best:
                    alpha, g, w_primal, best = polished, g_polished, None, score
            if best[0] == 0:
                break  # the finer cutoff only where the first try left the answer uncertified
    v = alpha * y
    w_out = None
    if linear:
        w_alpha = X.T @ v
        vKv = float(w_alpha @ w_alpha)
        w_out = w_alpha if w_primal is None else w_primal
        ww = float(w_out @ w_out)
    else:
        vKv = float(v @ (K @ v))
        ww = vKv
    b, interval = kkt_intercept(alpha, y, g, upper)
    return {
        "alpha": alpha,
        "b": b,
        "w": w_out,
        "b_interval": interval,
        "primal_objective": 0.5 * ww + (
            0.0 if C is None else float(np.sum(C * _hinge(y * (g + b))))
        ),
        "dual_objective": float(alpha.sum()) - 0.5 * vKv,
    }


#: Sparse linear data are polished densified when ``n d`` is at most this, else through their
#: dense Gram matrix when ``n`` is at most :data:`POLISH_MAX_GRAM`, else not at all.
POLISH_MAX_DENSE = 20_000_000
POLISH_MAX_GRAM = 4000


def _polish_operands(X: Any, K: np.ndarray | None,
                     kernel: Kernel) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(points, gram)`` for :func:`active_set_polish`: the dense points of a linear kernel,
    or a dense Gram matrix; ``(None, None)`` when neither fits (sparse data too large)."""
    if K is not None:
        return None, K
    if isinstance(X, np.ndarray):
        return X, None
    n, d = X.shape
    if n * d <= POLISH_MAX_DENSE:
        return np.asarray(X.toarray(), dtype=np.float64), None
    return (None, kernel.gram(X)) if n <= POLISH_MAX_GRAM else (None, None)


def _polish_score(cert: Any) -> tuple[int, float]:
    """``(0 if certified else 1, the worst of kkt / ORACLE_KKT, gap / ORACLE_GAP)``: smaller is
    better; non-finite residuals are worst."""
    worst = max(cert.kkt_violation / ORACLE_KKT, cert.gap / ORACLE_GAP)
    return (0 if cert.final(ORACLE_KKT, ORACLE_GAP) else 1,
            worst if math.isfinite(worst) else math.inf)
