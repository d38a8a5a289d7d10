"""A linearly convergent nearest-point method: MDM (Mitchell-Demyanov-Malozemov) pairwise steps.

Gilbert's algorithm (:mod:`maxmargin.algorithms.gilbert`) only ever moves *toward* a vertex, so
weight on a wrong vertex decays like ``prod (1 - t_i)`` and the gap falls as O(1/k). The MDM
step moves weight *from* the worst active vertex *to* the best vertex of the same set, which is a
pairwise Frank-Wolfe step; on a polytope it converges linearly (Lacoste-Julien & Jaggi, 2015).

For ``min ||p - q||^2`` with ``p = P^T lam``, ``q = Q^T mu`` and ``z = p - q``,
``g_i = <z, phi(x_i)>``:

* within ``P``: toward ``j = argmin_P g``, away ``a = argmax_{P, lam_a > 0} g``; the step
  ``z <- z + delta (x_j - x_a)`` (``lam_j += delta``, ``lam_a -= delta``) has
  ``d/d delta ||z||^2 / 2 = -(g_a - g_j)`` at 0, so the exact line search is
  ``delta = min(lam_a, (g_a - g_j) / ||x_j - x_a||^2)``;
* within ``Q``: toward ``k = argmax_Q g``, away ``a = argmin_{Q, mu_a > 0} g``, the step
  ``z <- z - delta (x_k - x_a)``, ``delta = min(mu_a, (g_k - g_a) / ||x_k - x_a||^2)``.

Each iteration takes the set whose pairwise gap (``g_a - g_j`` or ``g_k - g_a``) is larger. The
Frank-Wolfe gap ``||z||^2 - (min_P g - max_Q g)`` is at most the sum of the two pairwise gaps and
is the stopping rule, relative to ``||z||^2``, as in Gilbert's algorithm.

Reduced hulls ``RCH(mu)`` (weights also ``<= mu``; Mavroforakis & Theodoridis 2006): the toward
point is the best one *with room* (``lam_j < mu``), the step is clipped to
``0 <= delta <= min(lam_a, mu - lam_j)`` (SMO's maximal violating pair within one class of the
ν-SVM dual), and the stop is the Frank-Wolfe gap of the reduced hulls' linear-minimisation step
(the sorted partial sum), a valid certificate as for the convex hulls.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from maxmargin._jit import njit
from maxmargin.algorithms._nearest_point import examine, move, solve_hull_pair, sqdist
from maxmargin.algorithms.wolfe import WOLFE_MAX_ITER, wolfe_loop
from maxmargin.results import HullPairSolution
from maxmargin.tolerances import MDM_TOL

__all__ = ["mdm_hulls", "mdm_loop", "MDM_TOL", "MDM_MAX_ITER"]

MDM_MAX_ITER = 1_000_000


@njit
def mdm_loop(data: tuple, state: tuple, stop: tuple, hist: tuple, mu: float | None) -> tuple:
    """MDM pairwise steps on ``H(P) - H(Q)`` (``P``: ``y = +1``, ``Q``: ``y = -1``; ``H`` the
    convex hull for ``mu = None``, else ``RCH(mu)``).

    Same arguments and return value as :func:`maxmargin.algorithms.gilbert.gilbert_loop`. The
    toward point is the best one with room (``lam < mu``) and the step is clipped to
    ``0 <= delta <= min(lam_away, mu - lam_to)``; the stop is the Frank-Wolfe gap of the hulls'
    own linear-minimisation step. Code 3 (stalled) when no pair gives a descent step although the
    gap is above ``tol`` (round-off).
    """
    bound = np.inf if mu is None else mu
    lam, g = state[0], state[1]
    n_hist = np.int64(0)  # not literals: a literal argument compiles examine once more
    it = np.int64(0)
    while True:
        code, n_hist, fp, fq, ap, aq, _, _, _ = examine(it, data, state, stop, hist, n_hist,
                                                        mu)
        if code >= 0:
            return it, code, n_hist
        gap_p = g[ap] - g[fp] if fp >= 0 else -np.inf
        gap_q = g[fq] - g[aq] if fq >= 0 else -np.inf
        if gap_p >= gap_q:  # move weight in P from ap to fp: z += delta (x_fp - x_ap)
            to, away, sign, pair_gap = fp, ap, 1.0, gap_p
        else:  # move weight in Q from aq to fq: z -= delta (x_fq - x_aq)
            to, away, sign, pair_gap = fq, aq, -1.0, gap_q
        if pair_gap <= 0.0:
            return it, 3, n_hist
        d2 = sqdist(data, to, away)
        room = bound - lam[to]
        cap = min(lam[away], room)
        delta = cap if d2 <= 0.0 else min(cap, pair_gap / d2)
        lam[to] = bound if delta == room else lam[to] + delta
        lam[away] = 0.0 if delta == lam[away] else lam[away] - delta
        move(data, state, 1.0, sign * delta, to, away)
        it += 1


def mdm_hulls(
    P: Any,
    Q: Any,
    tol: float = MDM_TOL,
    max_iter: int = MDM_MAX_ITER,
    *,
    history_every: int | None = None,
    mu: float = 1.0,
    finish: bool = True,
) -> HullPairSolution:
    """Nearest points ``p in conv(P)``, ``q in conv(Q)`` by MDM pairwise steps (linear rate).

    With ``mu < 1`` the nearest points of the reduced hulls ``RCH(mu)`` (weights also
    ``<= mu``): the pair steps move weight from the worst active point to the best point with
    room, and the stop is the gap of the sorted-partial-sum vertex (module docstring).

    Parameters
    ----------
    P, Q : (n, d) and (m, d) arrays
    tol : float, > 0
        Stop when ``||z||^2 - min_{m in P-Q} <z, m> <= tol ||z||^2`` with ``z = p - q``
        (relative Frank-Wolfe duality gap); then ``(1 - tol) ||z|| <= distance <= ||z||``.
    max_iter : int
        Iteration cap (status ``"max_iter"`` and a
        :class:`~maxmargin.exceptions.ConvergenceWarning` when reached, unless ``finish``
        solves the problem: then ``iterations`` and ``history`` are Wolfe's).
    history_every : int, optional
        Record ``(iteration, relative gap, ||p - q||)`` every this many steps (default: about
        2000 records over ``max_iter``), plus the final state.
    mu : float, default 1.0
        The reduced hulls' weight bound, ``>= 1 / n`` and ``>= 1 / m`` (a ``ValueError``
        naming ``mu`` otherwise, before any work); ``>= 1``: the convex hulls.
    finish : bool, default True
        A run that does not end "optimal" (``max_iter``: the pairwise steps' linear rate can be
        very slow on elongated hulls) is solved again by Wolfe's method at the same ``tol``,
        kept when that ends "optimal": method ``"mdm"`` still, the message saying so
        (``runtime`` both runs'). False: MDM's own answer.

    Returns
    -------
    HullPairSolution
        Method ``"mdm"``. Intersecting hulls: distance 0, status ``"optimal"`` (see
        :mod:`maxmargin.algorithms._nearest_point` for the zero rule).
    """
    return solve_hull_pair(mdm_loop, "mdm", P, Q, tol, max_iter, history_every, MDM_MAX_ITER,
                           mu, finish, (wolfe_loop, WOLFE_MAX_ITER))
