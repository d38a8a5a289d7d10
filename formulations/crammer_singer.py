r"""The CVXPY oracle of Crammer and Singer's multi-class SVM, as LIBLINEAR poses it (``-s 4``,
scikit-learn's ``LinearSVC(multi_class="crammer_singer")``).

One weight vector per class, ``W = (w_1, ..., w_K)``, over the rows ``x~_i`` (the column
``s = intercept_scaling`` appended with an intercept, its weight regularised like the others,
``intercept_m = s v_m``), modelled with one slack per sample:

.. math::

    \min_{W, \xi} \tfrac12 \sum_m \|w_m\|^2 + \sum_i C_i \xi_i \quad \text{s.t.} \quad
    \xi_i \ge [m \ne y_i] + (w_m - w_{y_i}) \cdot \tilde x_i \;\; \forall i, m,

``C_i = C sample_weight_i``. The constraints' duals are the multipliers ``lambda`` of the judge,
:func:`~maxmargin.certificate_multiclass.certify_crammer_singer`: ``"optimal"`` only when its
relative weak-duality gap is at most ``ORACLE_GAP``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import numpy as np

from maxmargin._validation import (
    check_array,
    check_C,
    check_class_indices,
    check_positive,
    check_sample_weight,
)
from maxmargin.certificate import Certificate, liblinear_rows
from maxmargin.certificate_multiclass import certify_crammer_singer
from maxmargin.formulations._common import Formulation, SolveOutcome
from maxmargin.results import MulticlassScores, join_messages
from maxmargin.tolerances import ORACLE_GAP

__all__ = ["CrammerSingerSolution", "crammer_singer_primal"]


@dataclass(frozen=True, eq=False)
class CrammerSingerSolution(MulticlassScores):
    """An answer of Crammer and Singer's problem (module docstring).

    Attributes
    ----------
    W : (K, d) array
        One weight vector per class (``coef_``).
    b : (K,) array
        The intercepts ``s v_m`` (zeros without an intercept).
    W_tilde : (K, d + 1) or (K, d) array
        The weights the problem regularises (``v = b / s`` last, with an intercept).
    lam : (n, K) array
        The constraint duals (the certificate's dual point).
    primal_objective, dual_objective : float
    status : str
        ``"optimal"`` (certified), ``"inaccurate"``, ``"max_iter"`` or ``"solver_error"``.
    iterations : int
    method : str
        ``"cvxpy/crammer_singer_primal/<SOLVER>"``.
    certificate : Certificate or None
    intercept_scaling : float or None
    message : str
    runtime : float
    """

    W: np.ndarray
    b: np.ndarray
    W_tilde: np.ndarray
    lam: np.ndarray
    primal_objective: float
    dual_objective: float
    status: str
    iterations: int
    method: str
    certificate: Certificate | None
    intercept_scaling: float | None
    message: str = ""
    runtime: float = math.nan



def crammer_singer_primal(
    X: Any,
    y: Any,
    C: float = 1.0,
    *,
    n_classes: int | None = None,
    intercept_scaling: float | None = 1.0,
    sample_weight: Any = None,
) -> Formulation:
    """Crammer and Singer's primal problem (module docstring) as a CVXPY oracle.

    Parameters
    ----------
    X : (n, d) array or scipy.sparse matrix
    y : (n,) array of class indices ``0 .. K-1``
    C : float > 0
    n_classes : int, optional
        ``K`` (default ``max(y) + 1``).
    intercept_scaling : float > 0 or None
        ``s`` of the bias column; None fits no intercept.
    sample_weight : (n,) array of non-negative numbers, optional
        ``C_i = C sample_weight_i``.

    Returns
    -------
    Formulation
        Variable ``W_tilde``; ``solve()`` returns a :class:`CrammerSingerSolution`.
    """
    X = check_array(X, "X", ndim=2, sparse=True)
    y = check_class_indices(y, X.shape[0], n_classes)
    K = int(y.max()) + 1 if n_classes is None else int(n_classes)
    C = check_C(C, allow_none=False)
    if intercept_scaling is not None:
        intercept_scaling = check_positive(intercept_scaling, "intercept_scaling")
    sw = check_sample_weight(sample_weight, y)
    box = np.full(X.shape[0], C) if sw is None else C * sw
    Xt = liblinear_rows(X, intercept_scaling)
    n, p = Xt.shape
    onehot = np.zeros((n, K))
    onehot[np.arange(n), y] = 1.0
    W_tilde = cp.Variable((K, p), name="W_tilde")
    xi = cp.Variable(n, name="xi")
    S = Xt @ W_tilde.T  # (n, K)
    own = cp.sum(cp.multiply(S, onehot), axis=1)
    excess = (1.0 - onehot) + S - cp.reshape(own, (n, 1), order="C") @ np.ones((1, K))
    margin = cp.reshape(xi, (n, 1), order="C") @ np.ones((1, K)) >= excess
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(W_tilde) + box @ xi), [margin])

    def extract(outcome: SolveOutcome, method: str, polish: bool) -> CrammerSingerSolution:
        d = p - (intercept_scaling is not None)
        nan = math.nan
        if not outcome.has_values or W_tilde.value is None:
            return CrammerSingerSolution(
                W=np.full((K, d), nan), b=np.full(K, nan), W_tilde=np.full((K, p), nan),
                lam=np.full((n, K), nan), primal_objective=nan, dual_objective=nan,
                status=outcome.status, iterations=outcome.iterations, method=method,
                certificate=None, intercept_scaling=intercept_scaling, message=outcome.message,
                runtime=outcome.runtime)
        Wt = np.asarray(W_tilde.value, dtype=np.float64).copy()
        lam = np.maximum(np.asarray(margin.dual_value, dtype=np.float64), 0.0)
        cert = certify_crammer_singer(Wt, Xt, y, box, lam=lam)
        status = outcome.status
        if math.isfinite(cert.gap) and cert.gap <= ORACLE_GAP:
            status = "optimal"
        elif status == "optimal":
            status = "inaccurate"
        b = np.zeros(K) if intercept_scaling is None else intercept_scaling * Wt[:, -1]
        return CrammerSingerSolution(
            W=Wt[:, :d].copy(), b=b, W_tilde=Wt, lam=lam,
            primal_objective=cert.primal_objective, dual_objective=cert.dual_objective,
            status=status, iterations=outcome.iterations, method=method, certificate=cert,
            intercept_scaling=intercept_scaling,
            message=join_messages(outcome.message, cert.summary()), runtime=outcome.runtime)

    return Formulation("crammer_singer_primal", problem, {"W_tilde": W_tilde, "xi": xi},
                       extract)
