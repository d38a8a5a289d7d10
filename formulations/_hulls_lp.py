"""Do two convex hulls meet? The linear programme that certifies it, solved by HiGHS.

.. math::

    \\min_{t, w} t \\quad \text{s.t.} \\quad -t \\le B_1^T w_1 - B_2^T w_2 \\le t,
    \\quad 1^T w_k = 1, \\quad w_k \\ge 0,

the smallest max-norm distance between the hulls of the rows of ``B_1`` and ``B_2`` (a point
and a hull when ``B_2`` is one row). Used by the hard-margin oracles (is the problem
infeasible?) and the polytope oracles (is a distance exactly 0?). HiGHS' dual simplex is
stopped by an iteration count, never by the clock, so the answer does not depend on the load.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from maxmargin.tolerances import SNAP_RTOL

__all__ = ["hulls_meet", "simplex_clean", "LP_ITERATIONS_PER_VARIABLE"]

#: HiGHS may take this many simplex iterations per variable and constraint of the LP; without
#: an answer there is no certificate (degenerate data can make the simplex method stall).
LP_ITERATIONS_PER_VARIABLE = 50


def simplex_clean(weights: np.ndarray) -> np.ndarray:
    """Clip to >= 0, snap entries below ``SNAP_RTOL * max`` to 0 and renormalise to sum 1."""
    w = np.clip(np.asarray(weights, dtype=np.float64).ravel(), 0.0, None)
    w[w < SNAP_RTOL * w.max()] = 0.0
    return w / w.sum()


def hulls_meet(blocks: list[np.ndarray], atol: float = 1e-10,
               mu: float | np.ndarray = 1.0) -> list[np.ndarray] | None:
    """Convex weights with ``||sum_k sign_k B_k^T w_k||_inf <= atol`` (first block +, others -),
    or None; with ``mu < 1`` the weights are also at most ``mu`` (reduced convex hulls; ``mu``
    one bound, or one per row of the blocks in their order).

    Solves the linear programme ``min t`` s.t. ``-t <= B_1^T w_1 - B_2^T w_2 <= t``,
    ``1^T w_k = 1``, ``w_k >= 0`` with HiGHS (simplex, tolerances 1e-10): the smallest
    ``L_inf`` distance between the hulls (``||v||_2 <= sqrt(d) ||v||_inf``).
    """
    d = blocks[0].shape[1]
    sizes = [B.shape[0] for B in blocks]
    total = sum(sizes)
    signs = [1.0] + [-1.0] * (len(blocks) - 1)
    if any(hasattr(B, "tocsr") for B in blocks):  # sparse data: a sparse LP
        D = sp.hstack([s * sp.csr_matrix(B).T for s, B in zip(signs, blocks, strict=True)])
        ones = sp.csr_matrix(np.ones((d, 1)))
        A_ub = sp.vstack([sp.hstack([D, -ones]), sp.hstack([-D, -ones])]).tocsc()
    else:
        D = np.hstack([s * B.T for s, B in zip(signs, blocks, strict=True)])  # (d, total)
        ones = np.ones((d, 1))
        A_ub = np.vstack([np.hstack([D, -ones]), np.hstack([-D, -ones])])
    A_eq = np.zeros((len(blocks), total + 1))
    start = 0
    for k, size in enumerate(sizes):
        A_eq[k, start : start + size] = 1.0
        start += size
    cost = np.zeros(total + 1)
    cost[-1] = 1.0
    mu = np.broadcast_to(np.asarray(mu, dtype=np.float64), (total,))
    hard = bool(np.all(mu >= 1.0))
    lp = linprog(
        cost, A_ub=A_ub, b_ub=np.zeros(2 * d), A_eq=A_eq, b_eq=np.ones(len(blocks)),
        bounds=(0.0, None) if hard else [(0.0, float(m)) for m in mu] + [(0.0, None)],
        method="highs-ds",
        options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10,
                 "maxiter": LP_ITERATIONS_PER_VARIABLE * (total + 2 * d)},
    )
    if lp.status != 0 or lp.x[-1] > atol:
        return None
    out, start = [], 0
    for size in sizes:
        w = lp.x[start : start + size]
        cap = mu[start : start + size]
        out.append(simplex_clean(w) if hard else np.clip(w, 0.0, cap) / np.sum(w))
        start += size
    return out
