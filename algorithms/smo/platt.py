r"""Platt's working-set heuristic (1998): ``examineExample`` and ``takeStep``.

An outer loop alternates sweeps over all examples with sweeps over the free ones (``0 < alpha <
C``). An example violating the KKT conditions by more than ``tol / 2`` (with Platt's threshold
``b``) is the second variable; the first maximises ``|E_1 - E_2|`` among the free ones, else
(Platt's fallbacks) the first free one, then any one, that makes progress, each sweep starting
at a random position (fixed seed). A pair is stepped on only if it violates the optimality
condition by more than

.. math::

    \tau = \max(\mathrm{tol}, 0.1\,(m - M)),

which guarantees termination (Keerthi & Gilbert 2002). ``b`` is updated after each step from a
free one of the two, else the midpoint.
"""

from __future__ import annotations

import numpy as np

from maxmargin._jit import INTERNAL, njit
from maxmargin.algorithms._kernel_cache import ColumnCache, get_column
from maxmargin.algorithms.smo.pair import two_variable_update, update_pair
from maxmargin.algorithms.smo.state import FREE, PERIODIC, SolverState, record_history
from maxmargin.algorithms.smo.working_set import violation
from maxmargin.kernels.qmatrix import QMatrix, kernel_value
from maxmargin.tolerances import PLATT_EPS

__all__ = ["PLATT_PAIR_FRACTION", "platt_take_step", "platt_examine_example"]

#: A pair must violate by this fraction of ``m - M`` (or ``tol``).
PLATT_PAIR_FRACTION = 0.1


@njit(**INTERNAL)
def platt_take_step(st: SolverState, c: ColumnCache, kd: QMatrix, i1: int, i2: int) -> bool:
    """Platt's ``takeStep``: the two-variable update unless it makes no progress; updates ``b``.

    The pair must be a ``tau``-violating pair (one in ``I_up``, the other in ``I_low``, with
    ``-y G`` larger by more than ``tau = scalars.platt_tau`` on the ``I_up`` side), and Platt's
    own test ``|a2 - a2_old| < eps (a2 + a2_old + eps)`` must fail. ``b`` (seed 004): ``b_k =
    y_k - g_k = -y_k G_k`` for a free one of the pair (the mean if both are free), else the
    mean of the two.
    """
    if i1 == i2:
        return False
    y, alpha, G, sc = st.y, st.alpha, st.G, st.scalars
    k1, k2 = st.pos[i1], st.pos[i2]
    v1, v2, tau = -y[i1] * G[k1], -y[i2] * G[k2], sc.platt_tau
    if not (
        (st.in_up[k1] and st.in_low[k2] and v1 - v2 > tau)
        or (st.in_up[k2] and st.in_low[k1] and v2 - v1 > tau)
    ):
        return False
    Q_12 = y[i1] * y[i2] * kernel_value(kd, i1, i2)
    eta = st.QD[i1] + st.QD[i2] - 2.0 * y[i1] * y[i2] * Q_12
    a1, a2 = two_variable_update(
        alpha[i1], alpha[i2], y[i1], y[i2], G[k1], G[k2], eta, st.C[i1], st.C[i2]
    )
    if abs(a2 - alpha[i2]) < PLATT_EPS * (a2 + alpha[i2] + PLATT_EPS):
        return False
    Q_1 = get_column(c, kd, i1)
    Q_2 = get_column(c, kd, i2)
    if sc.iteration % sc.stride == 0:
        record_history(st, violation(st, c), PERIODIC)
    sc.iteration += 1
    update_pair(st, c, kd, i1, i2, a1, a2, Q_1, Q_2, Q_12)
    b1, b2 = -y[i1] * G[k1], -y[i2] * G[k2]
    free1, free2 = st.status[i1] == FREE, st.status[i2] == FREE
    if free1 and not free2:
        sc.platt_b = b1
    elif free2 and not free1:
        sc.platt_b = b2
    else:
        sc.platt_b = 0.5 * (b1 + b2)
    return True


@njit(**INTERNAL)
def platt_examine_example(st: SolverState, c: ColumnCache, kd: QMatrix, i2: int) -> int:
    """Platt's ``examineExample``: 1 if a step was taken with ``i2`` as the second variable."""
    y, alpha, G, status = st.y, st.alpha, st.G, st.status
    n = alpha.shape[0]
    b = st.scalars.platt_b
    G2 = G[st.pos[i2]]
    r2 = G2 + y[i2] * b  # y2 E2 = y2 f(x2) - 1
    ktol = 0.5 * st.tol
    if not ((r2 < -ktol and alpha[i2] < st.C[i2]) or (r2 > ktol and alpha[i2] > 0.0)):
        return 0
    e2 = y[i2] * G2  # E2 - b
    n_free, best, i1 = 0, -1.0, np.int64(-1)
    for t in range(n):
        if status[t] == FREE:
            n_free += 1
            gap = abs(y[t] * G[st.pos[t]] - e2)
            if gap > best:
                best, i1 = gap, t
    if n_free > 1 and platt_take_step(st, c, kd, i1, i2):
        return 1
    for free_only in (True, False):
        start = np.random.randint(0, n)  # noqa: NPY002
        for k in range(n):
            t = (start + k) % n
            if (status[t] == FREE or not free_only) and platt_take_step(st, c, kd, t, i2):
                return 1
    return 0
