"""The CVXPY oracle of LIBLINEAR's SVM problem (scikit-learn's ``LinearSVC``).

LIBLINEAR does not solve the SVM of :func:`~maxmargin.formulations.svm_dual`: with an intercept
it appends the constant column ``s = intercept_scaling`` to the data and regularises the bias
weight like the others (``intercept_ = s * v``):

.. math::

    \\min_{w, v} \\; R(\\tilde w) + \\sum_i C_i \\, \\ell\\big(y_i (w \\cdot x_i + s v)\\big),
    \\qquad \\tilde w = (w, v),

with ``R = 1/2 ||w~||^2`` (``penalty="l2"``) or ``||w~||_1`` (``"l1"``), ``l(m) = (1 - m)_+``
(``loss="hinge"``) or ``(1 - m)_+^2`` (``"squared_hinge"``, LinearSVC's default) and
``C_i = C sample_weight_i``. It is modelled with slacks, ``y_i w~ . x~_i >= 1 - xi_i`` (and
``xi >= 0`` for the hinge), whose constraint duals are LIBLINEAR's dual variables. The answer
is judged by :func:`~maxmargin.certificate.certify_liblinear`: ``"optimal"`` only when its
relative weak-duality gap is at most ``ORACLE_GAP`` (a proof that ``P`` is that close to the
optimum; the KKT violation, in units of ``y f``, grows with ``C max ||x||^2`` times the error
in ``w`` and is reported, not judged). Interior-point answers are polished first: snapped to
exact zeros (l1), then exact Newton steps on the active pieces (squared hinge).
"""

from __future__ import annotations

import math
from typing import Any

import cvxpy as cp
import numpy as np

from maxmargin._validation import (
    check_C,
    check_choice,
    check_positive,
    check_sample_weight,
    check_Xy,
)
from maxmargin.certificate import (
    LIBLINEAR_LOSSES,
    LIBLINEAR_PENALTIES,
    certify_liblinear,
    liblinear_rows,
)
from maxmargin.formulations._common import (
    Formulation,
    SolveOutcome,
    clean_alpha,
)
from maxmargin.results import LiblinearSolution, join_messages
from maxmargin.tolerances import ORACLE_GAP, SNAP_RTOL

__all__ = ["LiblinearSolution", "liblinear_primal", "newton_polish"]


#: :func:`newton_polish` works on dense ``(p, p)`` Hessians up to this many weights.
POLISH_MAX_WEIGHTS = 2000


def newton_polish(w: np.ndarray, X: Any, y: np.ndarray, C: np.ndarray, penalty: str = "l2",
                  max_steps: int = 20) -> np.ndarray:
    r"""Squared hinge: exact Newton steps from ``w`` on its active pieces.

    On ``S = {i : y_i w . x_i < 1}`` (and, for l1, the support ``J = {j : w_j != 0}`` with its
    signs ``s``) the objective is a quadratic, minimised by

    .. math::

        \text{l2: } (I + 2 X_S^T C_S X_S) w = 2 X_S^T C_S y_S, \qquad
        \text{l1: } 2 X_{SJ}^T C_S X_{SJ} w_J = 2 X_{SJ}^T C_S y_S - s, \; w_{J^c} = 0;

    the step is repeated until ``S`` no longer changes (the finite Newton method), which takes
    an interior-point answer to round-off. A step is kept when ``P`` grows by at most round-off
    (``1e-12`` relative) and (l1) keeps the signs it assumed; a Hessian singular in floating
    point (``C ||x||^2`` beyond ``1 / eps``) stops the steps.
    """
    if X.shape[1] > POLISH_MAX_WEIGHTS:
        return w

    def objective(v: np.ndarray) -> tuple[float, np.ndarray]:
        m = y * np.asarray(X @ v).ravel()
        slack = np.maximum(0.0, 1.0 - m)
        reg = 0.5 * float(v @ v) if penalty == "l2" else float(np.abs(v).sum())
        return reg + float(C @ (slack * slack)), m < 1.0

    best, (best_value, active) = w, objective(w)
    support = np.flatnonzero(w != 0.0)
    signs = np.sign(w[support])
    for _ in range(max_steps):
        rows = X[np.flatnonzero(active)]
        rows = rows.toarray() if hasattr(rows, "toarray") else rows
        c = C[active]
        if penalty == "l2":
            H = np.eye(X.shape[1]) + 2.0 * (rows.T * c) @ rows
            try:
                v = np.linalg.solve(H, 2.0 * rows.T @ (c * y[active]))
            except np.linalg.LinAlgError:  # singular in floating point (C x^2 >> 1): keep w
                break
        else:
            cols = rows[:, support]
            v = np.zeros_like(w)
            v[support] = np.linalg.lstsq(2.0 * (cols.T * c) @ cols,
                                         2.0 * cols.T @ (c * y[active]) - signs, rcond=None)[0]
            if not np.array_equal(np.sign(v[support]), signs):
                break
        value, new_active = objective(v)
        if value <= best_value + 1e-12 * max(1.0, abs(best_value)):  # round-off is no loss
            best, best_value = v, value
        if np.array_equal(new_active, active):
            break
        active = new_active
    return best


def liblinear_primal(
    X: Any,
    y: Any,
    C: float = 1.0,
    *,
    loss: str = "squared_hinge",
    penalty: str = "l2",
    intercept_scaling: float | None = 1.0,
    sample_weight: Any = None,
) -> Formulation:
    """LIBLINEAR's primal problem (module docstring) as a CVXPY oracle.

    Parameters
    ----------
    X : (n, d) array or scipy.sparse matrix
    y : (n,) array of -1/+1
    C : float > 0
    loss : {"squared_hinge", "hinge"}
    penalty : {"l2", "l1"}
        ``"l1"`` takes the squared hinge only (as LIBLINEAR).
    intercept_scaling : float > 0 or None
        ``s`` of the bias column; None fits no intercept (``fit_intercept=False``).
    sample_weight : (n,) array of positive numbers, optional
        ``C_i = C sample_weight_i``.

    Returns
    -------
    Formulation
        Variable ``w_tilde``; ``solve()`` returns a :class:`LiblinearSolution`.
    """
    X, y = check_Xy(X, y, sparse=True)
    C = check_C(C, allow_none=False)
    check_choice(loss, "loss", LIBLINEAR_LOSSES)
    check_choice(penalty, "penalty", LIBLINEAR_PENALTIES)
    if penalty == "l1" and loss == "hinge":
        raise ValueError("`loss`: penalty='l1' takes loss='squared_hinge' only (as LIBLINEAR); "
                         "got loss='hinge'.")
    if intercept_scaling is not None:
        intercept_scaling = check_positive(intercept_scaling, "intercept_scaling")
    sw = check_sample_weight(sample_weight, y)
    box = np.full(y.shape, C) if sw is None else C * sw
    Xt = liblinear_rows(X, intercept_scaling)
    n, p = Xt.shape
    w_tilde = cp.Variable(p, name="w_tilde")
    xi = cp.Variable(n, name="xi")
    margin = cp.multiply(y, Xt @ w_tilde) >= 1 - xi
    constraints: list[Any] = [margin]
    if loss == "hinge":
        constraints.append(xi >= 0)
        data = box @ xi
    else:
        data = cp.sum(cp.multiply(box, cp.square(xi)))
    reg = 0.5 * cp.sum_squares(w_tilde) if penalty == "l2" else cp.norm1(w_tilde)
    problem = cp.Problem(cp.Minimize(reg + data), constraints)

    def extract(outcome: SolveOutcome, method: str, polish: bool) -> LiblinearSolution:
        d = p - (intercept_scaling is not None)
        nan = math.nan
        if not outcome.has_values or w_tilde.value is None:
            return LiblinearSolution(
                w=np.full(d, nan), b=nan, w_tilde=np.full(p, nan), alpha=np.full(n, nan),
                primal_objective=nan, dual_objective=nan, status=outcome.status,
                iterations=outcome.iterations, method=method, certificate=None, loss=loss,
                penalty=penalty, intercept_scaling=intercept_scaling, message=outcome.message,
                runtime=outcome.runtime)
        wt = np.asarray(w_tilde.value, dtype=np.float64).copy()
        if penalty == "l1" and polish:  # interior-point zeros are ~1e-12: put them on 0
            wt[np.abs(wt) <= SNAP_RTOL * max(1.0, float(np.max(np.abs(wt))))] = 0.0
        if loss == "squared_hinge" and polish:
            wt = newton_polish(wt, Xt, y, box, penalty)
        # the constraint duals, each put on its bound where complementarity says it belongs
        a = np.maximum(np.asarray(margin.dual_value, dtype=np.float64).ravel(), 0.0)
        slack = y * np.asarray(Xt @ wt).ravel() - 1.0
        a = clean_alpha(a, box, slack) if loss == "hinge" else np.where(slack >= 0, 0.0, a)
        cert = certify_liblinear(wt, Xt, y, box, loss=loss, penalty=penalty, alpha=a)
        status = outcome.status
        if math.isfinite(cert.gap) and cert.gap <= ORACLE_GAP:
            status = "optimal"
        elif status == "optimal":
            status = "inaccurate"
        b = 0.0 if intercept_scaling is None else intercept_scaling * float(wt[-1])
        return LiblinearSolution(
            w=wt[:d].copy(), b=b, w_tilde=wt, alpha=a, primal_objective=cert.primal_objective,
            dual_objective=cert.dual_objective, status=status, iterations=outcome.iterations,
            method=method, certificate=cert, loss=loss, penalty=penalty,
            intercept_scaling=intercept_scaling,
            message=join_messages(outcome.message, cert.summary()), runtime=outcome.runtime)

    return Formulation("liblinear_primal", problem, {"w_tilde": w_tilde, "xi": xi}, extract)
