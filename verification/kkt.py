"""KKT residuals of an SVM solution: how far it is from satisfying the optimality conditions.

For the soft-margin SVM (``C = infinity`` for the hard margin) with decision values
``f_i = sum_j alpha_j y_j K(x_j, x_i) + b`` (``w . x_i + b`` when the solution has a linear
``w``) and slacks ``xi_i = max(0, 1 - y_i f_i)``, the KKT conditions are

.. math::

    &y_i f_i \\ge 1 - \\xi_i, \\; \\xi_i \\ge 0 && \\text{(primal feasibility)} \\\\
    &0 \\le \\alpha_i \\le C, \\; y \\cdot \\alpha = 0 && \\text{(dual feasibility)} \\\\
    &\\alpha_i (y_i f_i - 1 + \\xi_i) = 0, \\; (C - \\alpha_i) \\xi_i = 0
        && \\text{(complementary slackness)} \\\\
    &w = \\textstyle\\sum_i \\alpha_i y_i x_i && \\text{(stationarity)}

and at an optimum the primal and dual objectives are equal. Every residual below is 0 at an
exact optimum; each is scaled so that "1e-7" means the same on every problem:

* quantities in units of ``alpha`` are divided by ``s = C`` (soft margin) or
  ``s = max_i alpha_i`` (hard margin);
* quantities in units of the decision function are left as they are (the margin is 1);
* sums are divided by their own size (see each field), never by ``max(1, ...)``: every residual
  is the same under ``X -> s X``, ``C -> C / s^2`` (linear kernel; the same classifier).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from maxmargin._validation import check_Xy
from maxmargin.certificate import (
    TINY,
    Certificate,
    certify_svm,
    decision_values,
    max_violation,
    relative_gap,
)
from maxmargin.kernels import LinearKernel, own_points
from maxmargin.results import SVMSolution

__all__ = ["KKTResiduals", "kkt_residuals"]


@dataclass(frozen=True)
class KKTResiduals:
    """The KKT residuals of an :class:`~maxmargin.results.SVMSolution` (NaN where undefined).

    Attributes
    ----------
    primal_feasibility : float
        Hard margin: :math:`\\max_i \\max(0, 1 - y_i f_i)`. Soft margin: the slacks are free, so
        with :math:`\\xi_i = \\max(0, 1 - y_i f_i)` the margin constraints hold exactly and this is
        :math:`\\max_i \\max(0, 1 - \\xi_i - y_i f_i) = 0` (``hinge_total`` tells what the slacks
        are).
    dual_box : float
        :math:`\\max_i \\max(0, -\\alpha_i, \\alpha_i - C) / s`.
    dual_equality : float
        :math:`|y \\cdot \\alpha| / \\|\\alpha\\|_1`.
    complementary_zero : float
        :math:`\\max_i |\\alpha_i| \\max(0, y_i f_i - 1) / s` (a support vector must not be
        strictly outside the margin).
    complementary_upper : float
        :math:`\\max_i |C - \\alpha_i| \\xi_i / s` (a margin error must have ``alpha_i = C``);
        0 for the hard margin.
    stationarity : float
        :math:`\\|w - X^T(\\alpha \\circ y)\\| / \\|w\\|` for a linear solution carrying
        ``w``; 0 for a kernel solution, whose decision function is defined by alpha (stationarity
        holds by construction).
    duality_gap : float
        :math:`|P - D| / |P|` with :math:`P = \\tfrac12 \\|w\\|^2 + C \\sum_i \\xi_i`
        (``||w||^2 = v^T K v``, ``v = alpha * y``, for a kernel; no slack term for the hard
        margin) and :math:`D = \\sum_i \\alpha_i - \\tfrac12 v^T K v`, recomputed from the data.
    max_violation : float
        LIBSVM's maximal violation :math:`\\max(0, m(\\alpha) - M(\\alpha))`, independent of
        ``b``: with :math:`r_i = y_i - g_i`, :math:`g_i = f_i - b`,
        :math:`m = \\max_{i \\in I_{up}} r_i`, :math:`M = \\min_{i \\in I_{low}} r_i`,
        :math:`I_{up} = \\{\\alpha_i < C, y_i = 1\\} \\cup \\{\\alpha_i > 0, y_i = -1\\}`,
        :math:`I_{low} = \\{\\alpha_i < C, y_i = -1\\} \\cup \\{\\alpha_i > 0, y_i = 1\\}`.
        In decision-function units (LIBSVM stops when it is below ``tol``).
    hinge_total : float
        :math:`\\sum_i \\xi_i` (information; not part of ``max``).
    alpha_scale : float
        The ``s`` used above.
    max : float
        The largest of the eight residuals (NaN if any is NaN).
    certificate : Certificate or None
        The solution's float64 :class:`~maxmargin.certificate.Certificate` from the same
        decision values: the residuals above are its pointwise view (``max_violation`` is its
        ``kkt_violation``; its ``gap`` minimises the primal over ``b`` where ``duality_gap``
        takes the solution's own ``b``).
    """

    primal_feasibility: float
    dual_box: float
    dual_equality: float
    complementary_zero: float
    complementary_upper: float
    stationarity: float
    duality_gap: float
    max_violation: float
    hinge_total: float
    alpha_scale: float
    max: float
    certificate: Certificate | None = None

    #: The fields that make up ``max``.
    RESIDUALS = (
        "primal_feasibility",
        "dual_box",
        "dual_equality",
        "complementary_zero",
        "complementary_upper",
        "stationarity",
        "duality_gap",
        "max_violation",
    )


def check_solution(
    solution: Any, name: str = "solution", n: int | None = None, d: int | None = None
) -> SVMSolution:
    """``solution`` is an :class:`SVMSolution` (and, given ``n``/``d``, sized for ``X``)."""
    if not isinstance(solution, SVMSolution):
        raise ValueError(f"`{name}` must be an SVMSolution; got {type(solution).__name__}.")
    if n is not None and solution.alpha.shape != (n,):
        raise ValueError(
            f"`solution` does not match `X`: `solution.alpha` has shape {solution.alpha.shape} "
            f"but `X` has {n} rows."
        )
    if d is not None and solution.w is not None and solution.w.shape != (d,):
        raise ValueError(
            f"`solution` does not match `X`: `solution.w` has shape {solution.w.shape} "
            f"but `X` has {d} features."
        )
    return solution


def kkt_residuals(solution: SVMSolution, X: Any, y: Any) -> KKTResiduals:
    """The KKT residuals of ``solution`` on the training data ``(X, y)``.

    See :class:`KKTResiduals` for each formula and its scaling. A solution without a point
    (``alpha`` NaN, e.g. status ``"infeasible"``) gives NaN everywhere.

    Parameters
    ----------
    solution : SVMSolution
    X : (n, d) array
    y : (n,) array of -1/+1
        The data the solution was computed on (``len(alpha) == n``, ``len(w) == d``).

    Returns
    -------
    KKTResiduals
    """
    X, y = check_Xy(X, y, sparse=True, points=own_points(getattr(solution, "kernel", None)))
    sol = check_solution(solution, "solution", *X.shape[:2])
    alpha = np.asarray(sol.alpha, dtype=np.float64)
    hard = sol.C is None
    C = math.inf if hard else np.broadcast_to(np.asarray(sol.box, dtype=np.float64), alpha.shape)
    if not (np.all(np.isfinite(alpha)) and math.isfinite(sol.b)):
        nan = math.nan
        return KKTResiduals(nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan)
    v = alpha * y
    linear = isinstance(sol.kernel, LinearKernel)
    if linear:
        w_alpha = X.T @ v
        vKv = float(w_alpha @ w_alpha)
        w = w_alpha if sol.w is None else np.asarray(sol.w, dtype=np.float64)
        g = X @ w
        ww = float(w @ w)
        stationarity = float(np.linalg.norm(w - w_alpha)) / max(math.sqrt(ww), TINY)
    else:
        sv = np.flatnonzero(alpha != 0.0)
        g = decision_values(sol.kernel, X, X[sv], v[sv])
        vKv = float(v[sv] @ g[sv])
        ww = vKv
        stationarity = 0.0
    yf = y * (g + sol.b)
    xi = np.maximum(0.0, 1.0 - yf)
    scale = max(float(alpha.max()), TINY) if hard else float(C.max())
    primal_feas = float(np.max(xi)) if hard else 0.0
    box = float(np.max(np.maximum(np.maximum(-alpha, alpha - C), 0.0))) / scale
    equality = abs(float(y @ alpha)) / max(float(np.abs(alpha).sum()), TINY)
    comp_zero = float(np.max(np.abs(alpha) * np.maximum(0.0, yf - 1.0))) / scale
    comp_upper = 0.0 if hard else float(np.max(np.abs(C - alpha) * xi)) / scale
    primal = 0.5 * ww + (0.0 if hard else float(C @ xi))
    dual = float(alpha.sum()) - 0.5 * vKv
    gap = abs(relative_gap(primal, dual))
    violation = max_violation(alpha, y, g, None if hard else C)
    values = (
        primal_feas, box, equality, comp_zero, comp_upper, stationarity, gap, violation,
    )
    worst = math.nan if any(math.isnan(x) for x in values) else max(values)
    certificate = certify_svm(alpha, X, y, None if hard else C, sol.kernel,
                              g=X @ w_alpha if linear else g)
    return KKTResiduals(*values, hinge_total=float(xi.sum()), alpha_scale=scale, max=worst,
                        certificate=certificate)
