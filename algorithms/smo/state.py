"""The SMO solver's state: LIBSVM's ``Solver`` members, named.

The arrays are indexed by variable (``alpha``, ``status``, ``G_bar``, ``C``, ``y``, ``QD``) or
by *layout position* (``G``, ``in_up``, ``in_low``, ``yT``, ``QDT``): the kernel cache keeps
the active variables at the front of an order ``act`` (``pos`` is its inverse), and position
``k`` holds variable ``act[k]``. The scalars that change are the named fields of one record
(:data:`SCALARS`), which compiled code reads and writes in place (``st.scalars.iteration +=
1``).

A variable's status is ``LOWER`` (``alpha_t = 0``), ``UPPER`` (``alpha_t = C_t``) or ``FREE``;
with it, ``I_up = {t: y_t = +1, alpha_t < C_t} u {t: y_t = -1, alpha_t > 0}`` and ``I_low =
{t: y_t = +1, alpha_t > 0} u {t: y_t = -1, alpha_t < C_t}`` (both empty for a shrunk variable).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from maxmargin._jit import INLINE, INTERNAL, njit
from maxmargin.kernels.qmatrix import QMatrix

__all__ = [
    "LOWER",
    "UPPER",
    "FREE",
    "STALE",
    "HISTORY_CAP",
    "PERIODIC",
    "FINAL",
    "SCALARS",
    "SolverState",
    "new_state",
    "update_alpha_status",
    "record_history",
]

LOWER, UPPER, FREE = 0, 1, 2
#: ``scalars.i_max`` when the argmax of ``-y G`` over ``I_up`` must be recomputed.
STALE = -2
#: The history keeps at most this many points (then every other one is dropped).
HISTORY_CAP = 2048
# Compile time: Numba types a call while its arguments' types are still being inferred, so a
# variable that starts as a literal (``False``) compiles the callee once for the literal type
# and again for ``bool``; ``record_history`` is called with ``PERIODIC`` (a NumPy bool, which
# Numba does not type as literal).
PERIODIC = np.bool_(False)
#: ``force`` for the final point (a NumPy bool too).
FINAL = np.bool_(True)

#: The scalars of the solver's state, in one record.
SCALARS = np.dtype([
    ("dual", np.float64),  # D(alpha), tracked exactly per step
    ("alpha_sum", np.float64),  # sum(alpha)
    ("linear", np.float64),  # the linear term p = linear e of f = 1/2 a'Qa + p'a (-1 for C-SVC)
    ("tol_r", np.float64),  # > 0: stop at m - M < tol min(1, tol_r r) (working_set.py)
    ("g_max", np.float64),  # m = max_{I_up} -y_t G_t after the last step (with i_max)
    ("i_max", np.int64),  # its argmax (a variable), or STALE
    ("work", np.float64),  # entries of G updated so far (the exact finish's budget)
    ("iteration", np.int64),
    ("n_active", np.int64),  # variables not shrunk
    ("unshrunk", np.bool_),  # the one unshrinking before the final steps was done
    ("n_pending", np.int64),  # entries of `touched` (G_bar owed outside the layout)
    ("n_hist", np.int64),  # history points stored
    ("stride", np.int64),  # history recording stride
    ("platt_b", np.float64),  # Platt's threshold b
    ("platt_tau", np.float64),  # Platt: the violation a pair must exceed
])
#: SCALARS as records (``np.rec.array``'s dtype): its items are ``np.record`` views
_RECORD = np.dtype((np.record, SCALARS))


class SolverState(NamedTuple):
    """The solver's arrays and scalars (preallocated; shared by the compiled functions)."""

    alpha: np.ndarray
    G: np.ndarray  # gradient Q alpha + p by layout position: G[k] of variable act[k]
    G_bar: np.ndarray  # sum over alpha_j = C_j of C_j Q_:j (all rows, by variable)
    C: np.ndarray  # per-sample upper bounds C_i (inf for the hard margin)
    status: np.ndarray  # LOWER / UPPER / FREE
    in_up: np.ndarray  # by position: act[k] in I_up (y alpha can increase)
    in_low: np.ndarray  # by position: act[k] in I_low (y alpha can decrease)
    act: np.ndarray  # the cache's layout order (QMatrix.order): act[:L] holds the active
    pos: np.ndarray  # its inverse (QMatrix.pos): the position of each variable
    yT: np.ndarray  # y by position (QMatrix.yT)
    QDT: np.ndarray  # QD by position
    scratch: np.ndarray  # (n,) int64: a permutation of the layout (do_shrinking)
    score: np.ndarray  # (n,) float64: the gains of second_order_j, -y G of argmax_up
    pend: np.ndarray  # G_bar outside the layout is owed sum_j pend_j Q_:j (update_G_bar)
    touched: np.ndarray  # the j with pend_j set, scalars.n_pending of them
    QD: np.ndarray  # Q_ii = K_ii in float64
    y: np.ndarray
    h_iter: np.ndarray  # history: iteration, m - M before the step, D
    h_viol: np.ndarray
    h_dual: np.ndarray
    scalars: np.record  # SCALARS, read and written in place
    tol: float  # stop when m - M < tol
    hard: bool  # hard margin (no upper bounds)


def new_state(
    kd: QMatrix, QD: np.ndarray, C: float | np.ndarray | None, tol: float, stride: int
) -> SolverState:
    """The state at ``alpha = 0``: ``G = p = -e`` (C-SVC; a solver with another linear term
    sets ``scalars.linear`` and restarts from its own point), every variable active and at its
    lower bound."""
    y = kd.y
    QD = np.ascontiguousarray(QD, dtype=np.float64)
    n = y.shape[0]
    # few allocations (a batch builds a state a problem): the arrays of each dtype are rows of
    # one block; alpha has its own (a solution keeps it)
    floats = np.zeros((4, n))
    G, G_bar, Cs, pend = floats
    G.fill(-1.0)
    if C is None or not isinstance(C, np.ndarray):  # None or a number
        Cs.fill(math.inf if C is None else float(C))
    else:
        Cs[:] = np.broadcast_to(np.asarray(C, dtype=float), (n,))
    history = np.zeros((2, HISTORY_CAP + 1))
    ints = np.zeros(2 * n + HISTORY_CAP + 1, dtype=np.int64)
    status = np.empty(n, dtype=np.int8)
    status.fill(LOWER)
    fields = np.zeros(1, _RECORD)
    fields["i_max"], fields["n_active"], fields["stride"] = STALE, n, stride
    fields["linear"] = -1.0
    scalars = fields[0]  # a view: compiled writes land in it
    return SolverState(
        alpha=np.zeros(n),
        G=G,
        G_bar=G_bar,
        C=Cs,
        status=status,
        in_up=kd.yT > 0,
        in_low=kd.yT < 0,
        act=kd.order,
        pos=kd.pos,
        yT=kd.yT,
        QDT=QD[kd.order],
        scratch=ints[:n],
        score=np.empty(n),
        pend=pend,
        touched=ints[n:2 * n],
        QD=QD,
        y=y,
        h_iter=ints[2 * n:],
        h_viol=history[0],
        h_dual=history[1],
        scalars=scalars,
        tol=float(tol),
        hard=C is None,
    )


@njit(**INLINE)
def update_alpha_status(st: SolverState, t: int) -> None:
    """LIBSVM's ``update_alpha_status``: the status of ``alpha_t`` and its membership of
    ``I_up`` / ``I_low``."""
    a = st.alpha[t]
    s = UPPER if a >= st.C[t] else (LOWER if a <= 0.0 else FREE)
    st.status[t] = s
    positive = st.y[t] > 0
    k = st.pos[t]
    st.in_up[k] = s != (UPPER if positive else LOWER)
    st.in_low[k] = s != (LOWER if positive else UPPER)


@njit(**INTERNAL)
def record_history(st: SolverState, gap: float, force: bool) -> None:
    """Store ``(iteration, gap, D)`` every ``stride`` iterations; thin by 2 when full (the
    stride doubles), so the history stays bounded; ``force`` stores the current point."""
    sc = st.scalars
    it = sc.iteration
    if not force and it % sc.stride != 0:
        return
    h = sc.n_hist
    if h > 0 and st.h_iter[h - 1] == it:
        h -= 1  # the same iteration again (the final point): overwrite
    elif h == HISTORY_CAP and not force:
        for k in range(HISTORY_CAP // 2):
            st.h_iter[k] = st.h_iter[2 * k]
            st.h_viol[k] = st.h_viol[2 * k]
            st.h_dual[k] = st.h_dual[2 * k]
        h = HISTORY_CAP // 2
        sc.stride *= 2
        if it % sc.stride != 0:
            sc.n_hist = h
            return
    st.h_iter[h] = it
    st.h_viol[h] = gap
    st.h_dual[h] = sc.dual
    sc.n_hist = h + 1
