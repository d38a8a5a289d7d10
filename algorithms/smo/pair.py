r"""The two-variable update: SMO's step on the working set ``(i, j)``.

With ``eta = K_ii + K_jj - 2 K_ij`` and ``E_t = y_t G_t + b`` (so ``E_i - E_j = y_i G_i -
y_j G_j`` needs no ``b``),

.. math::

    \alpha_j^{unc} = \alpha_j + y_j (E_i - E_j) / \eta, \quad
    \alpha_j^{new} = \mathrm{clip}_{[L, H]}(\alpha_j^{unc}), \quad
    \alpha_i^{new} = \alpha_i + y_i y_j (\alpha_j - \alpha_j^{new}),

``[L, H]`` the feasible segment (``y_i != y_j``: ``L = max(0, a_j - a_i)``, ``H = min(C, C +
a_j - a_i)``; ``y_i = y_j``: ``L = max(0, a_i + a_j - C)``, ``H = min(C, a_i + a_j)``). Then

.. math::

    G \mathrel{+}= Q_{:i} d_i + Q_{:j} d_j, \qquad
    D \mathrel{-}= G_i d_i + G_j d_j + \tfrac12 (Q_{ii} d_i^2 + 2 Q_{ij} d_i d_j + Q_{jj} d_j^2).
"""

from __future__ import annotations

import numpy as np

from maxmargin._jit import INLINE, njit
from maxmargin.algorithms._kernel_cache import ColumnCache, get_column
from maxmargin.algorithms.smo.columns import prefetch
from maxmargin.algorithms.smo.scans import TAU, update_and_argmax, update_gradient
from maxmargin.algorithms.smo.shrinking import update_G_bar
from maxmargin.algorithms.smo.state import STALE, UPPER, SolverState, update_alpha_status
from maxmargin.kernels.qmatrix import QMatrix

__all__ = ["two_variable_update", "update_pair", "take_step"]


@njit(**INLINE)
def two_variable_update(
    a_i: float, a_j: float, y_i: float, y_j: float, G_i: float, G_j: float, eta: float,
    C_i: float, C_j: float,
) -> tuple[float, float]:
    """The new ``(alpha_i, alpha_j)``, in LIBSVM's exact-clipping form.

    ``a_j += y_j (E_i - E_j) / eta`` with ``y_j (E_i - E_j) = y_j (y_i G_i - y_j G_j)``, i.e.
    ``(-G_i - G_j) / eta`` when ``y_i != y_j`` (``a_i - a_j`` fixed) and ``(G_i - G_j) / eta``
    when ``y_i = y_j`` (``a_i + a_j`` fixed), then both clipped to their boxes ``[0, C_i]``,
    ``[0, C_j]`` along that line, so a variable that reaches a bound lands on it exactly
    (per-sample bounds, as LIBSVM's ``get_C``). ``eta <= 0`` (duplicate points, round-off) is
    replaced by ``TAU``; ``C = inf`` (hard margin) leaves only the lower bounds.
    """
    if eta <= 0.0:
        eta = TAU
    if y_i != y_j:
        delta = (-G_i - G_j) / eta
        diff = a_i - a_j
        ni = a_i + delta
        nj = a_j + delta
        if diff > 0.0:
            if nj < 0.0:
                nj = 0.0
                ni = diff
        else:
            if ni < 0.0:
                ni = 0.0
                nj = -diff
        if diff > C_i - C_j:
            if ni > C_i:
                ni = C_i
                nj = C_i - diff
        else:
            if nj > C_j:
                nj = C_j
                ni = C_j + diff
    else:
        delta = (G_i - G_j) / eta
        total = a_i + a_j
        ni = a_i - delta
        nj = a_j + delta
        if total > C_i:
            if ni > C_i:
                ni = C_i
                nj = total - C_i
        else:
            if nj < 0.0:
                nj = 0.0
                ni = total
        if total > C_j:
            if nj > C_j:
                nj = C_j
                ni = total - C_j
        else:
            if ni < 0.0:
                ni = 0.0
                nj = total
    return ni, nj


@njit(inline="always")
def update_pair(
    st: SolverState,
    c: ColumnCache,
    kd: QMatrix,
    i: int,
    j: int,
    new_i: float,
    new_j: float,
    Q_i: np.ndarray,
    Q_j: np.ndarray,
    Q_ij: float,
    classwise: bool | None = None,
) -> None:
    """Move ``alpha_i, alpha_j`` to their new values and update ``G``, ``D``, the statuses and
    ``G_bar`` (module docstring).

    ``G`` is updated on the layout's rows by a loop that vectorises; a second pass finds
    ``m = max_{I_up} -y_t G_t`` and its last argmax for the next working set (both
    :func:`~.scans.update_and_argmax`, on the Q-matrix's threads where it has them); ν-SVC
    (``classwise`` True) takes the update alone (:func:`~.scans.update_gradient`: its
    selection finds each class's ``m`` itself).
    """
    alpha, G, sc = st.alpha, st.G, st.scalars
    d_i = new_i - alpha[i]
    d_j = new_j - alpha[j]
    sc.dual -= G[st.pos[i]] * d_i + G[st.pos[j]] * d_j + 0.5 * (
        st.QD[i] * d_i * d_i + 2.0 * Q_ij * d_i * d_j + st.QD[j] * d_j * d_j
    )
    sc.alpha_sum += d_i + d_j
    sc.work += Q_i.shape[0]
    was_upper_i = st.status[i] == UPPER
    was_upper_j = st.status[j] == UPPER
    alpha[i] = new_i
    alpha[j] = new_j
    update_alpha_status(st, i)
    update_alpha_status(st, j)
    if classwise is None:
        g_max, k_max = update_and_argmax(kd, G, Q_i, Q_j, d_i, d_j, st.yT, st.in_up, st.score)
        sc.g_max = g_max
        sc.i_max = st.act[k_max] if k_max >= 0 else -1
    else:
        update_gradient(G, Q_i, Q_j, d_i, d_j)
        sc.i_max = STALE  # C-SVC's argmax is not kept: a C-SVC selection recomputes it
    for t, was_upper in ((i, was_upper_i), (j, was_upper_j)):
        if was_upper != (st.status[t] == UPPER):
            update_G_bar(st, c, kd, t, -st.C[t] if was_upper else st.C[t])


@njit(inline="always")
def take_step(
    st: SolverState, c: ColumnCache, kd: QMatrix, i: int, j: int, prefetching: bool | None,
    classwise: bool | None = None,
) -> None:
    """One SMO iteration on the pair ``(i, j)``: columns from the cache, ``eta``, the
    two-variable update, then :func:`update_pair`. A missing column ``j`` is first offered to
    :func:`~.columns.prefetch` unless ``prefetching`` is None (:func:`~.loops.solve_pairs`)."""
    if prefetching is not None and c.slot_of[j] < 0:  # before Q_i: any slot may be reused
        prefetch(st, c, kd, j)
    Q_i = get_column(c, kd, i)
    Q_j = get_column(c, kd, j)
    y = st.y
    Q_ij = float(Q_i[kd.pos[j]])
    eta = st.QD[i] + st.QD[j] - 2.0 * y[i] * y[j] * Q_ij
    new_i, new_j = two_variable_update(
        st.alpha[i], st.alpha[j], y[i], y[j], st.G[st.pos[i]], st.G[st.pos[j]], eta, st.C[i],
        st.C[j],
    )
    update_pair(st, c, kd, i, j, new_i, new_j, Q_i, Q_j, Q_ij, classwise)
