"""The SVM dual QP oracle, for any kernel.

.. math::

    \\max_{\\alpha} \\; \\sum_i \\alpha_i - \\tfrac12 \\big\\| F^T (\\alpha \\circ y) \\big\\|^2
    \\quad \\text{s.t.} \\quad 0 \\le \\alpha_i \\le C, \\; y \\cdot \\alpha = 0,

where ``F F^T = K`` is a factor of the Gram matrix, so ``||F^T (alpha*y)||^2 = alpha^T Q alpha``
with ``Q_ij = y_i y_j K(x_i, x_j)``. ``F = X`` for the linear kernel; otherwise ``F = V sqrt(L)``
from the eigendecomposition ``K = V L V^T``, keeping the eigenvalues above
``EIG_RTOL * max(L)`` (the others are round-off and dropped as zero). The quadratic term is
positive semi-definite by construction, unlike ``quad_form`` of a raw Gram matrix that is PSD
only up to round-off.

Two equivalent models of that quadratic term (``model=``):

``"factor"``
    ``cp.sum_squares(F.T @ cp.multiply(y, alpha))``: an extra variable ``u = F^T (alpha*y)``
    with ``r = rank`` dense rows. Best when ``r`` is small (linear kernel, low-degree
    polynomial kernels).
``"gram"``
    ``cp.quad_form(alpha, psd_wrap(G G^T))`` with ``G = diag(y) F``: the same PSD matrix,
    formed from the factor (so still PSD by construction, never the raw Gram matrix).
    Needed when ``r`` is close to ``n`` (RBF): the interior-point solver's sparse LDL
    fills the dense ``r x n`` block of the factor model (the measurements are in the
    performance notes of the docs).
``"auto"`` (default)
    ``"factor"`` when ``r <= FACTOR_MAX_RANK_RATIO * n``, else ``"gram"``.
"""

from __future__ import annotations

from typing import Any

import cvxpy as cp
import numpy as np

from maxmargin._validation import check_C, check_choice, check_sample_weight, check_Xy
from maxmargin.formulations._common import (
    Formulation,
    SolveOutcome,
    feature_centre,
    hard_margin_precheck,
    judge_svm,
    svm_fallback,
    svm_solution,
    twin_scales,
)
from maxmargin.kernels import Kernel, LinearKernel, make_kernel, own_points, precomputed
from maxmargin.kernels.base import dot_block
from maxmargin.results import SVMSolution
from maxmargin.tolerances import EIG_RTOL, NEG_EIG_RTOL

__all__ = ["svm_dual", "gram_factor", "EIG_RTOL", "NEG_EIG_RTOL", "FACTOR_MAX_RANK_RATIO"]

#: ``model="auto"`` uses the factor model when ``rank <= FACTOR_MAX_RANK_RATIO * n``.
FACTOR_MAX_RANK_RATIO = 0.25


def gram_factor(kernel: Kernel, X: Any) -> tuple[Any, np.ndarray | None, np.ndarray | None]:
    """A factor ``F`` with ``F F^T = K(X, X)`` (up to a centring that leaves the dual's
    objective unchanged), the Gram matrix (None for the linear kernel), and the centring's
    shift ``u`` (None when there is none): ``F F^T v = K v - (u . v) 1`` for ``1 . v = 0``, so an
    intercept ``b'`` of the factor's model is ``b = b' - u . v`` in the user's units.

    Linear kernel: ``F = X - mean(X)`` when ``d <= n`` and ``X`` is dense (``X`` itself when it
    is sparse: centring would fill it); otherwise (wide data) the factor of the ``n x n`` Gram
    matrix of the centred points, whose rank is at most ``n``. Centring changes ``K`` into
    ``K_c = K - 1 m^T - m 1^T + mu 1 1^T``, and ``v^T K_c v = v^T K v`` for every
    ``v = alpha * y`` with ``y . alpha = 0``: the same dual, but without the cancellation of
    data far from the origin. (The RBF kernel's Gram matrix is computed on centred data
    already; see :class:`~maxmargin.kernels.RBFKernel`.)

    Raises
    ------
    ValueError
        If the Gram matrix has a clearly negative eigenvalue (e.g. ``poly`` with ``coef0 < 0``).
    """
    if isinstance(kernel, LinearKernel):
        if not hasattr(X, "tocsr"):
            c = feature_centre(X)
            Xc = X - c
            if X.shape[1] <= X.shape[0]:
                return Xc, None, X @ c
            return _eigen_factor(Xc @ Xc.T, kernel), None, X @ c
        if X.shape[1] <= X.shape[0]:
            return X, None, None  # sparse and narrow: its own sparse factor (not centred)
        K = dot_block(X, X)  # sparse and wide: n x n, dense; centred: H K H with H = I - 1 1^T / n
        m = K.mean(axis=0)
        K = K - m[:, None] - m[None, :] + m.mean()
        return _eigen_factor(0.5 * (K + K.T), kernel), None, m
    K = kernel.gram(X)
    return _eigen_factor(K, kernel), K, None


def _eigen_factor(K: np.ndarray, kernel: Kernel) -> np.ndarray:
    """``V sqrt(L)`` over the eigenvalues above ``EIG_RTOL`` times the largest."""
    lam, V = np.linalg.eigh(K)
    top = float(lam[-1])
    if lam[0] < -NEG_EIG_RTOL * max(1.0, top):
        raise ValueError(
            f"`kernel` must give a positive semi-definite Gram matrix on `X`; "
            f"{kernel.describe()} has the eigenvalue {lam[0]:.3g} (largest {top:.3g}). "
            "A polynomial kernel needs coef0 >= 0."
        )
    keep = lam > EIG_RTOL * top
    return V[:, keep] * np.sqrt(lam[keep])


def svm_dual(
    X: np.ndarray,
    y: np.ndarray,
    C: float | None = 1.0,
    kernel: str | Kernel = "linear",
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 0.0,
    *,
    model: str = "auto",
    sample_weight: Any = None,
) -> Formulation:
    """The SVM dual (``C=1.0`` like ``smo``; the hard margin for ``C=None``) with any kernel.

    .. math::

        \\max_{\\alpha} \\sum_i \\alpha_i - \\tfrac12 \\alpha^T Q \\alpha \\quad \\text{s.t.}
        \\quad 0 \\le \\alpha \\le C, \\; y \\cdot \\alpha = 0,
        \\qquad Q_{ij} = y_i y_j K(x_i, x_j),

    modelled with a Gram factor ``F`` as ``cp.sum_squares(F.T @ cp.multiply(y, alpha))`` or,
    for a factor of high rank, as ``quad_form`` of ``(yF)(yF)^T`` (module docstring). For
    non-separable data with ``C=None`` the maximisation is unbounded: the one infeasible
    shape (:func:`~maxmargin.results.infeasible_svm`), decided before any QP, no exception.

    Parameters
    ----------
    X : (n, d) array
    y : (n,) array of -1/+1
    C : float > 0 or None
        Default 1.0 (as ``smo`` and SVC); ``None`` is the hard margin.
    kernel, gamma, degree, coef0
        As scikit-learn's SVC (see :func:`maxmargin.kernels.make_kernel`), or a kernel object.
    model : {"auto", "factor", "gram"}
        How the quadratic term is modelled (module docstring); the optimum is the same.
    sample_weight : (n,) array of positive numbers, optional
        Per-sample boxes ``0 <= alpha_i <= C sample_weight_i`` (ignored by the hard margin).

    Returns
    -------
    Formulation
        Variable ``alpha`` (n,). ``solve()`` gives ``w = X^T (alpha * y)`` for the linear kernel
        and the KKT intercept.
    """
    kernel, X = precomputed(kernel, X)  # "precomputed": the Gram matrix and indices
    X, y = check_Xy(X, y, sparse=True, points=own_points(kernel))
    if not isinstance(kernel, LinearKernel | str) or (isinstance(kernel, str)
                                                      and kernel != "linear"):
        X = X.toarray() if hasattr(X, "toarray") else X  # the Gram matrix is dense anyway
    C = check_C(C)
    sw = None if C is None else check_sample_weight(sample_weight, y)
    box = C if C is None or sw is None else C * sw
    kern = make_kernel(kernel, gamma=gamma, degree=degree, coef0=coef0, X=X)
    check_choice(model, "model", ("auto", "factor", "gram"))
    F, K, shift = gram_factor(kern, X)
    n = X.shape[0]
    if model == "auto":  # sparse data keeps its sparse factor (the Gram form is n x n dense)
        model = ("factor" if hasattr(F, "tocsr") or F.shape[1] <= FACTOR_MAX_RANK_RATIO * n
                 else "gram")

    def build(s: float) -> tuple[cp.Problem, dict[str, cp.Variable], Any]:
        """The dual with the factor ``F / s`` and the box ``C s^2``; ``alpha = alpha' / s^2``."""
        Fs = F / s
        Cs = None if box is None else box * (s * s)
        alpha = cp.Variable(n, name="alpha")
        if model == "factor":
            quadratic = cp.sum_squares(Fs.T @ cp.multiply(y, alpha))
        else:
            G = Fs.multiply(y[:, None]).toarray() if hasattr(Fs, "tocsr") else y[:, None] * Fs
            quadratic = cp.quad_form(alpha, cp.psd_wrap(G @ G.T))
        objective = cp.sum(alpha) - 0.5 * quadratic
        balance = y @ alpha == 0  # its dual value is the intercept b
        constraints: list[Any] = [alpha >= 0, balance]
        if Cs is not None:
            constraints.append(alpha <= Cs)
        problem = cp.Problem(cp.Maximize(objective), constraints)

        def extract(outcome: SolveOutcome, method: str, polish: bool) -> SVMSolution:
            solved = outcome.has_values and alpha.value is not None
            b_dual = balance.dual_value if solved else None
            if b_dual is not None and shift is not None:  # the factor's b' -> the user's b
                b_dual = float(b_dual) - float(shift @ (y * alpha.value)) / (s * s)
            return svm_solution(
                outcome, method, alpha=alpha.value / (s * s) if solved else None, X=X, y=y,
                C=C, kernel=kern, b_solver=None if b_dual is None else float(b_dual), gram=K,
                polish=polish, sample_weight=sw,
            )

        return problem, {"alpha": alpha}, extract

    problem, variables, extract = build(1.0)
    eig_min = 0.0
    if K is not None and F.shape[1] == n:  # full rank: the kept eigenvalues are all of them
        eig_min = float(np.min(np.einsum("ij,ij->j", F, F)))
    precheck = None if C is not None else hard_margin_precheck(
        "svm_dual", F, X, y, kern, eig_min)
    judge = judge_svm(X, y, box, kern)
    return Formulation(
        "svm_dual", problem, variables, extract, model=build, scales=twin_scales(F, box),
        judge=judge, precheck=precheck,
        fallback=svm_fallback(lambda: svm_dual(X, y, None, kern), judge, C, "svm_dual", sw),
    )
