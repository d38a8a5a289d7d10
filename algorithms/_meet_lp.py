r"""Do the reduced hulls meet? An exact linear programme for a run stalled near ``w = 0``.

Where the reduced hulls ``RCH(mu)`` of the classes meet (or nearly), the iterative methods'
steps shrink with ``||z||`` and can stall a little above the certificate's resolution
(nearly coincident points of both classes, a kernel that makes most points orthogonal). A
point where the hulls meet is then a vertex of the linear programme

.. math::

    \min_{\lambda, e^+, e^-} 1^T (e^+ + e^-) \quad \text{s.t.} \quad
    Z^T (s \circ \lambda) = e^+ - e^-, \quad \sum_{i \in G_k} \lambda_i = 1, \quad
    0 \le \lambda \le \mu, \; e^\pm \ge 0,

the smallest L1 norm of ``z = sum_i s_i lam_i phi(x_i)`` in the coordinates of a factor ``Z Z^T
= K`` (``Z`` the data for the linear kernel; else the eigenvectors of ``K`` times the square
roots of its eigenvalues above round-off), ``s`` the labels and ``G_k`` the classes (the
one-class SVM: ``s = 1``, one group, the origin in the hull). HiGHS' dual simplex solves it
to round-off at a vertex, stopped by an iteration count (never the clock). Its weights are an
answer like any other: the caller's float64 certificate decides whether ``||w||`` is below
its resolution.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg
from scipy.optimize import linprog

from maxmargin.kernels import Kernel
from maxmargin.kernels.base import row_norms2
from maxmargin.kernels.formulas import KIND_LINEAR

__all__ = ["MEET_LP_MAX_POINTS", "MEET_LP_MAX_RANK", "meeting_weights"]

#: The programme is tried on at most this many points, with a factor of at most
#: :data:`MEET_LP_MAX_RANK` columns (``l + 2 rank`` variables, ``rank + 2`` dense rows; for a
#: nonlinear kernel ``rank <= l``, after a dense eigendecomposition of ``K``): the dual
#: simplex's work grows about as the cube of the rank.
MEET_LP_MAX_POINTS = 5000
MEET_LP_MAX_RANK = 400
#: HiGHS may take this many simplex iterations per variable and constraint.
ITERATIONS_PER_ROW = 50


def _factor(X: np.ndarray, kernel: Kernel) -> np.ndarray:
    """``Z`` with ``Z Z^T = K`` (up to round-off), scaled to rows of norm at most 1."""
    if kernel.kind == KIND_LINEAR:
        Z = np.array(X, dtype=np.float64)
    else:
        values, vectors = scipy.linalg.eigh(kernel(X, X))
        keep = values > X.shape[0] * np.finfo(np.float64).eps * max(float(values[-1]), 0.0)
        Z = vectors[:, keep] * np.sqrt(values[keep])
    radius = float(np.sqrt(np.max(row_norms2(Z)))) if Z.size else 0.0
    return Z / radius if radius > 0.0 else Z


def meeting_weights(X: Any, signs: np.ndarray, kernel: Kernel, mu: float) -> np.ndarray | None:
    """The weights ``lam`` of the programme above (module docstring), or None when HiGHS gives
    no optimal vertex, the data are sparse, have more than :data:`MEET_LP_MAX_POINTS` rows or
    (a nonlinear kernel: points; linear: features) more than :data:`MEET_LP_MAX_RANK`.
    ``signs`` are the ``s_i`` (the groups ``G_k`` are the points of each sign: one group for
    the one-class SVM, ``s = 1``), ``mu`` the bound."""
    rank = X.shape[1] if kernel.kind == KIND_LINEAR else X.shape[0]
    if (not isinstance(X, np.ndarray) or X.shape[0] > MEET_LP_MAX_POINTS
            or rank > MEET_LP_MAX_RANK):
        return None
    groups = [g for g in (np.flatnonzero(signs > 0), np.flatnonzero(signs < 0)) if g.size]
    upper = min(mu, 1.0)
    Z = _factor(X, kernel)
    l, r = Z.shape
    A_eq = np.zeros((r + len(groups), l + 2 * r))
    A_eq[:r, :l] = (Z * signs[:, None]).T
    A_eq[:r, l:l + r] = -np.eye(r)
    A_eq[:r, l + r:] = np.eye(r)
    for k, idx in enumerate(groups):
        A_eq[r + k, idx] = 1.0
    b_eq = np.concatenate([np.zeros(r), np.ones(len(groups))])
    cost = np.concatenate([np.zeros(l), np.ones(2 * r)])
    bounds = [(0.0, upper)] * l + [(0.0, None)] * (2 * r)
    lp = linprog(cost, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs-ds",
                 options={"primal_feasibility_tolerance": 1e-10,
                          "dual_feasibility_tolerance": 1e-10,
                          "maxiter": ITERATIONS_PER_ROW * (l + 3 * r)})
    if lp.status != 0:
        return None
    return np.clip(lp.x[:l], 0.0, upper)
