"""What every oracle shares: solver choice and tolerances, status mapping, error capture,
and turning solved CVXPY variables into maxmargin's result dataclasses.

Solvers and their ground-truth tolerances
-----------------------------------------
The oracles are the ground truth of the suite, so each known solver is run far tighter than its
default (user-supplied options always override these):

========  ======================================================================================
CLARABEL  ``tol_gap_abs = tol_gap_rel = tol_feas = 1e-10``, ``tol_ktratio = 1e-8``,
          ``max_iter = 500`` (the default solver; interior point, so the result is accurate).
OSQP      ``eps_abs = eps_rel = 1e-9``, solution polishing on, ``max_iter = 200_000``
          (CVXPY's OSQP defaults stop at 1e-5 and OSQP's own at 1e-3: visibly wrong ``b``).
SCS       ``eps_abs = eps_rel = 1e-9``, ``max_iters = 200_000``.
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
2. active-set polish (:func:`polish_alpha`): the KKT equations are solved exactly on the free
   set found in step 1; the polished alpha is kept only if LIBSVM's maximal violation
   (:func:`max_violation`) does not grow. It takes interior-point answers (~1e-7 on alpha for
   some problems) to round-off. ``Formulation.polish = False`` switches it off;
3. ``b`` by the KKT rules (:func:`maxmargin.results.recover_intercept`), objectives from
   alpha, ``w`` and ``b`` (:func:`svm_solution`).
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import cvxpy as cp
import cvxpy.settings as cps
import numpy as np

from maxmargin.exceptions import ConvergenceWarning
from maxmargin.kernels import Kernel, LinearKernel
from maxmargin.results import SVMSolution, recover_intercept

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
    "polish_alpha",
]

#: The solver used when ``solve(solver=None)``.
DEFAULT_SOLVER = "CLARABEL"

#: Relative threshold under which an interior-point alpha (or convex weight) is snapped onto
#: its bound: ``alpha_i < SNAP_RTOL * scale`` becomes 0 and ``alpha_i > C - SNAP_RTOL * scale``
#: becomes ``C``, with ``scale = C`` (soft margin) or ``max_i alpha_i`` (hard margin).
#: Interior-point iterates never reach a bound exactly; with the gap at 1e-10 an inactive
#: alpha is ~1e-11 relative, far below this threshold, while a free alpha is far above it.
SNAP_RTOL = 1e-9


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
        }
    if solver == "OSQP":
        polish_key = "polishing" if _osqp_major() >= 1 else "polish"
        return {"eps_abs": 1e-9, "eps_rel": 1e-9, polish_key: True, "max_iter": 200_000}
    if solver == "SCS":
        return {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200_000}
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


def run_solver(
    problem: cp.Problem, solver: str, options: Mapping[str, Any], what: str
) -> SolveOutcome:
    """Solve ``problem`` with ``solver`` and map the outcome; never raises for solver failures.

    Any exception raised inside ``problem.solve`` (``cvxpy.SolverError``, a solver's own
    exception, a bad option name) is recorded as ``"solver_error"`` with its text. An iteration
    cap warns :class:`~maxmargin.exceptions.ConvergenceWarning`.
    """
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            # CVXPY's generic "Solution may be inaccurate" warning: the status says it better.
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            problem.solve(solver=solver, **options)
    except Exception as exc:  # every solver failure becomes a status, never an exception
        runtime = time.perf_counter() - start
        return SolveOutcome(
            "solver_error", "error", f"{type(exc).__name__}: {exc}", 0, runtime, solver
        )
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
    if status == "max_iter":
        warnings.warn(
            f"{what}: {solver} stopped at its iteration/time limit ({cvx_status}); "
            "the result is not certified optimal.",
            ConvergenceWarning,
            stacklevel=3,
        )
    return SolveOutcome(status, cvx_status, message, int(iterations or 0), runtime, solver)


class Formulation:
    """A CVXPY model of one max-margin problem, ready to solve and to read.

    Attributes
    ----------
    name : str
        ``"hard_margin_primal"``, ``"svm_dual"``, ... (used in ``method`` strings).
    problem : cvxpy.Problem
        The model; read it, or build a variant with :meth:`with_constraints`.
    variables : mapping of str to cvxpy.Variable
        The named variables (``w``, ``b``, ``xi``, ``alpha``, ``lam``, ``mu``...).
    polish : bool
        SVM forms: polish the solver's alpha on its active set (:func:`polish_alpha`) before
        building the solution (default True). Set it to False to see the solver's raw answer.

    ``solve(solver=None, **solver_options)`` solves with the ground-truth defaults of
    :func:`solver_options` and returns the result dataclass of the problem family; the
    ``method`` of the result is ``"cvxpy/<name>/<SOLVER>"``.
    """

    __slots__ = ("name", "problem", "variables", "polish", "_extract")

    def __init__(
        self,
        name: str,
        problem: cp.Problem,
        variables: Mapping[str, cp.Variable],
        extract: Callable[[SolveOutcome, str, bool], Any],
    ) -> None:
        self.name = name
        self.problem = problem
        self.variables = MappingProxyType(dict(variables))
        self.polish = True
        self._extract = extract

    def __repr__(self) -> str:
        return f"Formulation({self.name!r}, variables={list(self.variables)})"

    def with_constraints(self, *constraints: cp.Constraint) -> Formulation:
        """A new formulation: the same objective and constraints plus ``constraints``.

        The result is built from the same variables and original constraints, so ``solve``
        still reads ``alpha`` from the margin constraints' duals. The variant has
        ``polish = False``: the active-set polish solves the KKT system of the *plain* SVM,
        which the extra constraints change.
        """
        problem = cp.Problem(self.problem.objective, self.problem.constraints + list(constraints))
        variant = Formulation(self.name, problem, self.variables, self._extract)
        variant.polish = False
        return variant

    def solve(self, solver: str | None = None, **solver_opts: Any) -> Any:
        """Solve and return an ``SVMSolution``, ``PolytopeSolution`` or ``HullPairSolution``.

        Parameters
        ----------
        solver : str, optional
            An installed CVXPY solver name; default ``"CLARABEL"``.
        **solver_opts
            Passed to the solver, overriding the ground-truth defaults.
        """
        name = check_solver(solver)
        outcome = run_solver(self.problem, name, solver_options(name, solver_opts), self.name)
        return self._extract(outcome, f"cvxpy/{self.name}/{outcome.solver}", self.polish)


def clean_alpha(
    alpha: np.ndarray, C: float | None, margins: np.ndarray | None = None
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
    scale = C if C is not None else (float(alpha.max()) if alpha.size else 0.0)
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
        alpha[to_upper & ~to_zero] = C
    return alpha


def _hinge(margins: np.ndarray) -> np.ndarray:
    return np.maximum(0.0, 1.0 - margins)


def max_violation(alpha: np.ndarray, y: np.ndarray, g: np.ndarray, C: float | None) -> float:
    """LIBSVM's maximal violation ``max(0, m(alpha) - M(alpha))``, independent of ``b``.

    .. math::

        r_i = y_i - g_i, \\quad m = \\max_{i \\in I_{up}} r_i,
        \\quad M = \\min_{i \\in I_{low}} r_i,

    with ``I_up = {alpha_i < C, y_i = +1} U {alpha_i > 0, y_i = -1}`` and
    ``I_low = {alpha_i < C, y_i = -1} U {alpha_i > 0, y_i = +1}`` (``C = inf`` for the hard
    margin); 0 when either set is empty.
    """
    upper = math.inf if C is None else C
    r = y - g
    below, above = alpha < upper, alpha > 0
    up = (below & (y > 0)) | (above & (y < 0))
    low = (below & (y < 0)) | (above & (y > 0))
    if not np.any(up) or not np.any(low):
        return 0.0
    return max(0.0, float(np.max(r[up]) - np.min(r[low])))


def polish_alpha(
    alpha: np.ndarray,
    y: np.ndarray,
    C: float | None,
    gram_rows: Callable[[np.ndarray], np.ndarray],
) -> np.ndarray | None:
    """Solve the KKT equations exactly on the active set of an interior-point alpha.

    With the free set ``F`` (``0 < alpha_i < C``) and the bound set ``U`` (``alpha_i = C``) held
    fixed, optimality is the linear system (``Q_ij = y_i y_j K_ij``)

    .. math::

        Q_{FF} \\alpha_F + y_F b = 1 - C Q_{FU} 1, \\qquad y_F^T \\alpha_F = -C y_U^T 1,

    solved by least squares (``numpy.linalg.lstsq``). Like OSQP's polishing, this turns an
    iterate whose active set is right into the optimum up to round-off. Returns the polished
    alpha, or None when there is no free alpha or the solution leaves ``(0, C)`` (active set
    not identified): the caller then keeps the interior-point alpha.

    ``gram_rows(idx)`` returns the rows ``K[idx, :]`` of the Gram matrix.
    """
    upper = math.inf if C is None else C
    free = np.flatnonzero((alpha > 0) & (alpha < upper))
    if free.size == 0:
        return None
    at_c = np.flatnonzero(alpha >= upper)
    rows = gram_rows(free)
    yF = y[free]
    Q_FF = yF[:, None] * rows[:, free] * yF[None, :]
    m = free.size
    rhs = np.ones(m)
    eq = 0.0
    if at_c.size:
        rhs -= yF * (rows[:, at_c] @ (upper * y[at_c]))
        eq = -upper * float(y[at_c].sum())
    M = np.zeros((m + 1, m + 1))
    M[:m, :m] = Q_FF
    M[:m, m] = yF
    M[m, :m] = yF
    sol = np.linalg.lstsq(M, np.append(rhs, eq), rcond=None)[0]
    a_free = sol[:m]
    if not (np.all(a_free > 0.0) and np.all(a_free < upper)):
        return None
    polished = alpha.copy()
    polished[free] = a_free
    return polished


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
) -> SVMSolution:
    """Build an :class:`~maxmargin.results.SVMSolution` from a solved model.

    ``alpha=None`` (the solve produced no point) gives NaN alpha, w, b and objectives.
    Otherwise:

    1. ``alpha`` is cleaned by :func:`clean_alpha` using the margins ``y_i f(x_i) - 1`` of the
       solver's own point (``f = X w + b`` with the primal variables, or ``f = K (alpha*y) + b``
       with ``b`` the dual of ``y . alpha = 0`` in the dual QP).
    2. With ``polish=True`` the active set is polished by :func:`polish_alpha`. The polished
       alpha replaces the solver's only if its :func:`max_violation` (with
       ``g = K (alpha*y)``) is no larger than the solver's own (with ``g = X w`` for the primal
       forms); ``w`` is then ``X^T (alpha*y)`` for every form.
    3. With ``v = alpha * y``: ``w`` is the primal variable (primal forms, unpolished) or
       ``X^T v`` (linear kernel), else None; ``g_i = sum_j v_j K(x_j, x_i)`` (``x_i . w`` for the
       linear kernel); ``b`` and ``b_interval`` by :func:`~maxmargin.results.recover_intercept`
       (mean of ``y_i - g_i`` over free SVs, else the midpoint of the KKT interval);
       ``dual_objective = sum(alpha) - 1/2 v^T K v``;
       ``primal_objective = 1/2 ||w||^2 + C sum_i max(0, 1 - y_i (g_i + b))`` with
       ``||w||^2 = v^T K v`` for a kernel (no hinge term for the hard margin).
    """
    linear = isinstance(kernel, LinearKernel)
    if alpha is None:
        n, d = X.shape
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
        point = _solved_point(alpha, X, y, C, K, b_solver, w, polish)
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
    )


def _solved_point(
    alpha: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    C: float | None,
    K: np.ndarray | None,
    b_solver: float | None,
    w: np.ndarray | None,
    polish: bool,
) -> dict[str, Any]:
    """Steps 1-3 of :func:`svm_solution`; ``K`` is None for the linear kernel."""
    linear = K is None
    w_primal = None if w is None else np.asarray(w, dtype=np.float64).ravel()

    def kernel_values(a: np.ndarray) -> np.ndarray:
        """``g = K (a * y)``."""
        return X @ (X.T @ (a * y)) if linear else K @ (a * y)

    def solver_values(a: np.ndarray) -> np.ndarray:
        """``g`` as the solver's point gives it: ``X w`` for the primal forms."""
        return kernel_values(a) if w_primal is None else X @ w_primal

    raw = np.clip(np.asarray(alpha, dtype=np.float64).ravel(), 0.0, None)
    margins = None if b_solver is None else y * (solver_values(raw) + float(b_solver)) - 1.0
    alpha = clean_alpha(raw, C, margins)
    g = solver_values(alpha)
    if polish:
        def gram_rows(idx: np.ndarray) -> np.ndarray:
            return X[idx] @ X.T if linear else K[idx]

        polished = polish_alpha(alpha, y, C, gram_rows)
        if polished is not None:
            g_polished = kernel_values(polished)
            if max_violation(polished, y, g_polished, C) <= max_violation(alpha, y, g, C):
                alpha, g, w_primal = polished, g_polished, None
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
    b, interval = recover_intercept(alpha, y, g, C)
    return {
        "alpha": alpha,
        "b": b,
        "w": w_out,
        "b_interval": interval,
        "primal_objective": 0.5 * ww + (0.0 if C is None else C * float(_hinge(y * (g + b)).sum())),
        "dual_objective": float(alpha.sum()) - 0.5 * vKv,
    }
