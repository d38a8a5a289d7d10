"""Primal SVM oracles (linear kernel): hard margin, soft margin with slacks, hinge loss.

All three are vectorised CVXPY models (``cp.multiply(y, X @ w + b)``, no loop over samples),
so the soft-margin oracle solves n = 50,000, d = 20 in seconds.

The decision function is ``f(x) = w . x + b``. ``solve()`` returns an
:class:`~maxmargin.results.SVMSolution` whose ``w`` is the primal variable, whose ``alpha`` is
the dual of the margin constraints ``y_i f(x_i) >= 1 (- xi_i)`` (recovered from the optimality
conditions for the unconstrained hinge form, see :func:`hinge_loss`), and whose ``b`` follows the
KKT rules of the oracles' own :func:`~maxmargin.formulations._polish.kkt_intercept`.
"""

from __future__ import annotations

from collections.abc import Callable

import cvxpy as cp
import numpy as np
from scipy.optimize import lsq_linear

from maxmargin._validation import check_C, check_Xy
from maxmargin.formulations._common import (
    Formulation,
    Model,
    SolveOutcome,
    centred,
    feature_centre,
    hard_margin_precheck,
    judge_svm,
    max_violation,
    svm_fallback,
    svm_solution,
    twin_scales,
)
from maxmargin.kernels import LinearKernel
from maxmargin.results import SVMSolution
from maxmargin.tolerances import HINGE_MARGIN_TOL

__all__ = ["hard_margin_primal", "soft_margin_primal", "hinge_loss", "HINGE_MARGIN_TOL"]



def _margin_expression(
    X: np.ndarray, y: np.ndarray, w: cp.Variable, b: cp.Variable
) -> cp.Expression:
    """``y_i (w . x_i + b)`` for all i, one vectorised expression."""
    return cp.multiply(y, X @ w + b)


def _primal_model(X: np.ndarray, y: np.ndarray, C: float | None, kind: str) -> Model:
    """``model(s)``: the ``kind`` form on the data ``(X - c) / s`` with ``C s^2``, and an
    ``extract`` that maps its answer back (``w = w' / s``, ``b = b' - w . c``,
    ``alpha = alpha' / s^2``).

    ``c`` is the mean of the rows for a twin (``s != 1``) of dense data and 0 for the model in
    the user's units (``s = 1``) and for sparse data (centring would fill it). With an
    unregularised bias the problem is translation invariant: ``y_i (w . (x_i - c) + b') =
    y_i (w . x_i + b)`` for ``b = b' - w . c``, so the optimum is the same, far better
    conditioned when the data sit far from the origin (features ~1e4 with a spread of ~3).
    """
    kernel = LinearKernel()
    centre = feature_centre(X)

    def model(s: float) -> tuple[cp.Problem, dict[str, cp.Variable], Callable[..., SVMSolution]]:
        c = centre if s != 1.0 else np.zeros(X.shape[1])
        Xs = (X - c) / s if not hasattr(X, "tocsr") else X / s
        Cs = None if C is None else C * s * s
        w = cp.Variable(X.shape[1], name="w")
        b = cp.Variable(name="b")
        variables: dict[str, cp.Variable] = {"w": w, "b": b}
        if kind == "hinge":
            loss = cp.sum(cp.pos(1 - _margin_expression(Xs, y, w, b)))
            problem = cp.Problem(cp.Minimize(loss + (0.5 / Cs) * cp.sum_squares(w)))

            def alpha_of(w_val: np.ndarray, b_val: float) -> np.ndarray:
                return hinge_alpha(Xs, y, Cs, w_val, b_val)
        else:
            if Cs is None:
                margin = _margin_expression(Xs, y, w, b) >= 1
                problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w)), [margin])
            else:
                xi = cp.Variable(X.shape[0], name="xi")
                variables["xi"] = xi
                margin = _margin_expression(Xs, y, w, b) >= 1 - xi
                problem = cp.Problem(
                    cp.Minimize(0.5 * cp.sum_squares(w) + Cs * cp.sum(xi)), [margin, xi >= 0]
                )

            def alpha_of(w_val: np.ndarray, b_val: float) -> np.ndarray | None:
                """The margin constraints' duals, or (soft margin) the alpha recovered from
                ``(w, b)`` by :func:`hinge_alpha` when that one violates KKT less."""
                duals = margin.dual_value
                if Cs is None or duals is None:
                    return duals
                candidates = [np.clip(np.asarray(duals, dtype=np.float64), 0.0, Cs),
                              hinge_alpha(Xs, y, Cs, w_val, b_val)]
                return min(candidates, key=lambda a: max_violation(
                    a, y, Xs @ (Xs.T @ (a * y)), Cs))

        def extract(outcome: SolveOutcome, method: str, polish: bool) -> SVMSolution:
            solved = outcome.has_values and w.value is not None and b.value is not None
            alpha = alpha_of(w.value, float(b.value)) if solved else None
            if alpha is not None:
                alpha = np.asarray(alpha, dtype=np.float64) / (s * s)
            w_user = None if not solved else np.asarray(w.value) / s
            return svm_solution(
                outcome, method, alpha=alpha, X=X, y=y, C=C, kernel=kernel,
                b_solver=float(b.value) - float(w_user @ c) if solved else None,
                w=w_user, polish=polish,
            )

        return problem, variables, extract

    return model


def _formulation(name: str, X: np.ndarray, y: np.ndarray, C: float | None, kind: str):
    """The public :class:`Formulation` of a primal form: the model in the user's units, solved
    through its well-scaled twin (``s = max_i ||x_i||``) and judged by its certificate."""
    model = _primal_model(X, y, C, kind)
    problem, variables, extract = model(1.0)
    kernel = LinearKernel()
    precheck = None if C is not None else hard_margin_precheck(name, X, X, y, kernel)
    judge = judge_svm(X, y, C, kernel)
    return Formulation(
        name, problem, variables, extract, model=model,
        scales=twin_scales(centred(X), C),
        judge=judge, precheck=precheck,
        fallback=svm_fallback(lambda: hard_margin_primal(X, y), judge, C, name),
    )


def hard_margin_primal(X: np.ndarray, y: np.ndarray) -> Formulation:
    """The hard-margin SVM in the primal.

    .. math::

        \\min_{w, b} \\tfrac12 \\|w\\|^2 \\quad \\text{s.t.} \\quad y_i (w \\cdot x_i + b) \\ge 1.

    ``alpha`` is the dual of the margin constraints. Non-separable data gives
    ``status="infeasible"`` (alpha, w, b NaN), never an exception.

    Parameters
    ----------
    X : (n, d) array
    y : (n,) array of -1/+1

    Returns
    -------
    Formulation
        Variables ``w`` (d,) and ``b``.
    """
    X, y = check_Xy(X, y, sparse=True)
    return _formulation("hard_margin_primal", X, y, None, "slack")


def soft_margin_primal(X: np.ndarray, y: np.ndarray, C: float = 1.0) -> Formulation:
    """The soft-margin SVM in the primal, with slacks.

    .. math::

        \\min_{w, b, \\xi} \\tfrac12 \\|w\\|^2 + C \\sum_i \\xi_i \\quad \\text{s.t.} \\quad
        y_i (w \\cdot x_i + b) \\ge 1 - \\xi_i, \\; \\xi_i \\ge 0.

    ``alpha`` is the dual of the margin constraints (``0 <= alpha <= C`` at the optimum).

    Parameters
    ----------
    X : (n, d) array
    y : (n,) array of -1/+1
    C : float > 0
        Default 1.0 (as ``smo`` and SVC).

    Returns
    -------
    Formulation
        Variables ``w`` (d,), ``b`` and ``xi`` (n,).
    """
    X, y = check_Xy(X, y, sparse=True)
    C = check_C(C, allow_none=False)
    return _formulation("soft_margin_primal", X, y, C, "slack")


def hinge_alpha(
    X: np.ndarray, y: np.ndarray, C: float, w: np.ndarray, b: float, tol: float = HINGE_MARGIN_TOL
) -> np.ndarray:
    """Dual variables of the soft-margin SVM recovered from a primal ``(w, b)``.

    The optimality conditions of the hinge form are those of the soft-margin dual:
    ``alpha_i = C`` where ``y_i f_i < 1``, ``alpha_i = 0`` where ``y_i f_i > 1``, and on the margin
    ``M = {i : |y_i f_i - 1| <= tol}`` the ``alpha_M`` must satisfy stationarity and the
    equality constraint. They are found by bounded least squares (``scipy.optimize.lsq_linear``,
    BVLS):

    .. math::

        \\min_{0 \\le \\alpha_M \\le C}
        \\Big\\| \\sum_{i \\in M} \\alpha_i y_i x_i - \\big(w - C \\sum_{i \\in U} y_i x_i\\big)
        \\Big\\|^2 + \\Big( \\sum_{i \\in M} \\alpha_i y_i + C \\sum_{i \\in U} y_i \\Big)^2,

    with ``U = {i : y_i f_i < 1 - tol}``. The minimiser is exact (residual 0) at an optimal
    ``(w, b)``; it is unique when the margin vectors ``(y_i x_i, y_i)`` are independent.
    """
    margins = y * (X @ w + b)
    alpha = np.where(margins < 1.0 - tol, C, 0.0)
    on = np.abs(margins - 1.0) <= tol
    if np.any(on):
        off = ~on
        rhs = np.concatenate([w - X[off].T @ (alpha[off] * y[off]), [-(alpha[off] @ y[off])]])
        X_on = X[on].toarray() if hasattr(X, "toarray") else X[on]  # the margin SVs only
        A = np.vstack([(X_on * y[on, None]).T, y[on][None, :]])
        fit = lsq_linear(A, rhs, bounds=(0.0, C), method="bvls", tol=1e-15)
        alpha[on] = fit.x
    return alpha


def hinge_loss(X: np.ndarray, y: np.ndarray, C: float = 1.0) -> Formulation:
    """The soft-margin SVM as regularised hinge-loss minimisation (no constraints).

    .. math::

        \\min_{w, b} \\sum_i \\max(0, 1 - y_i (w \\cdot x_i + b)) + \\frac{1}{2C} \\|w\\|^2,

    which is the soft-margin objective divided by ``C`` (same minimiser). Having no constraints,
    it has no duals: ``alpha`` is recovered from the optimality conditions by
    :func:`hinge_alpha`. ``primal_objective`` is reported on the SVM scale,
    ``1/2 ||w||^2 + C sum(hinge)``, like every other SVM solution.

    Takes ``X``, ``y`` and ``C`` as :func:`soft_margin_primal` does; returns a
    :class:`~maxmargin.formulations.Formulation` with the variables ``w`` (d,) and ``b``.
    """
    X, y = check_Xy(X, y, sparse=True)
    C = check_C(C, allow_none=False)
    return _formulation("hinge_loss", X, y, C, "hinge")
