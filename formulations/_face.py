r"""The reduced-hull oracles' own finish: one exact solve on the face an interior point found.

The ν-SVC and one-class duals and the reduced-hull distances are one problem,

.. math::

    \min_a \tfrac12 v^T K v, \quad v = y \circ a, \quad 0 \le a_i \le U, \quad
    \textstyle\sum_{i \in G_k} a_i = t_k \; (k = 1, \dots),

with groups ``G_k`` (the classes, or all points). On a face -- ``a_i = 0`` or ``U`` fixed, the
free set ``F`` open -- the optimum solves the KKT system

.. math::

    \begin{pmatrix} Q_{FF} & E^T \\ E & 0 \end{pmatrix}
    \begin{pmatrix} a_F \\ \lambda \end{pmatrix} =
    \begin{pmatrix} -Q_{FU} a_U \\ t - E_U a_U \end{pmatrix}, \qquad Q = \operatorname{diag}(y)
    K \operatorname{diag}(y),

(``E`` the group indicators; least squares, so singular faces of low-rank Gram matrices are
covered): Wolfe's affine step with bounds. When the face is the optimal one, the answer is the
optimum to round-off. Reference code, kept apart from :mod:`maxmargin.algorithms`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["face_polish", "FACE_CUTS"]

#: Relative cuts tried for the free set: ``cut U < a_i < (1 - cut) U`` is free, above it at
#: ``U``, below it at 0 (an interior point is never exactly on a bound).
FACE_CUTS = (1e-10, 1e-8, 1e-6, 1e-4)
#: A face solve whose free weights leave ``[0, U]`` by more than this times ``U`` is rejected.
FACE_BOX_RTOL = 1e-12


def face_polish(alpha: np.ndarray, y: np.ndarray, upper: float, groups: list[np.ndarray],
                targets: list[float], *, K: np.ndarray | None = None,
                X: np.ndarray | None = None, offset: np.ndarray | None = None
                ) -> list[np.ndarray]:
    """The distinct exact face solutions (module docstring) for the free sets of
    :data:`FACE_CUTS`; ``K`` the Gram matrix, or ``X`` the points of a linear kernel, with
    ``offset``: the objective ``1/2 ||X^T v + offset||^2`` (points moved by a centre ``c``
    that the fixed sums turn into the constant ``offset = sum_k t_k y_k c``: the same problem,
    better conditioned far from the origin)."""
    out: list[np.ndarray] = []
    seen: set[bytes] = set()
    label = np.zeros(alpha.shape[0], dtype=np.int64)
    for k, idx in enumerate(groups):
        label[idx] = k
    for cut in FACE_CUTS:
        free = (alpha > cut * upper) & (alpha < (1.0 - cut) * upper)
        at_upper = alpha >= (1.0 - cut) * upper
        key = free.tobytes() + at_upper.tobytes()
        if key in seen:
            continue
        seen.add(key)
        F, B = np.flatnonzero(free), np.flatnonzero(at_upper)
        a = np.where(at_upper, upper, 0.0)
        if F.size == 0:  # a vertex: a candidate when it meets the group sums
            sums = [float(a[idx].sum()) for idx in groups]
            if np.allclose(sums, targets, rtol=FACE_BOX_RTOL, atol=0.0):
                out.append(a)
            continue
        if K is not None:
            QFF = (y[F, None] * K[np.ix_(F, F)]) * y[None, F]
            rhs_top = -y[F] * (K[np.ix_(F, B)] @ (y[B] * a[B]))
        else:
            G = y[F, None] * X[F]
            QFF = G @ G.T
            rhs_top = -G @ (X[B].T @ (y[B] * a[B]) + (0.0 if offset is None else offset))
        ng = len(groups)
        E = np.zeros((ng, F.size))
        E[label[F], np.arange(F.size)] = 1.0
        M = np.block([[QFF, E.T], [E, np.zeros((ng, ng))]])
        rhs = np.concatenate([rhs_top, np.asarray(targets) - np.bincount(
            label[B], weights=a[B], minlength=ng)])
        with np.errstate(all="ignore"):
            solution = np.linalg.lstsq(M, rhs, rcond=None)[0][: F.size]
        if not np.all(np.isfinite(solution)) or np.any(solution < -FACE_BOX_RTOL * upper) or (
                np.any(solution > (1.0 + FACE_BOX_RTOL) * upper)):
            continue
        a[F] = np.clip(solution, 0.0, upper)
        out.append(a)
    return out
