r"""The reduced-hull oracles' own finish: one exact solve on the face an interior point found.

The ν-SVC and one-class duals and the reduced-hull distances are one problem,

.. math::

    \min_a \tfrac12 v^T K v, \quad v = y \circ a, \quad 0 \le a_i \le U_i, \quad
    \textstyle\sum_{i \in G_k} a_i = t_k \; (k = 1, \dots),

with groups ``G_k`` (the classes, or all points) and one bound ``U`` for every point or one per
point (sample weights). On a face -- ``a_i = 0`` or ``U_i`` fixed, the
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

__all__ = ["face_polish", "face_active_set", "FACE_CUTS"]

Bound = float | np.ndarray

#: Relative cuts tried for the free set: ``cut U_i < a_i < (1 - cut) U_i`` is free, above it
#: at ``U_i``, below it at 0 (an interior point is never exactly on a bound).
FACE_CUTS = (1e-10, 1e-8, 1e-6, 1e-4)
#: A face solve whose free weights leave ``[0, U_i]`` by more than this times ``U_i`` is
#: rejected.
FACE_BOX_RTOL = 1e-12
#: The active set's steps (each one face solve) at most, beyond one for each weight free at
#: the start (near ``nu_max`` most weights sit a hair below their bound and leave one a step),
#: and its largest free set.
ACTIVE_SET_STEPS = 60
ACTIVE_SET_MAX_FREE = 1500
#: A bound weight whose multiplier has the wrong sign by more than this times ``max |G|`` is
#: released (round-off below).
RELEASE_RTOL = 1e-13


class _Face:
    """The data of one problem: ``Q`` through ``K`` or the points ``X`` (with ``offset``);
    ``upper`` one bound per point."""

    def __init__(self, y: np.ndarray, upper: np.ndarray, groups: list[np.ndarray],
                 targets: list[float], K: np.ndarray | None, X: np.ndarray | None,
                 offset: np.ndarray | None) -> None:
        self.y, self.upper, self.targets = y, upper, np.asarray(targets, dtype=np.float64)
        self.K, self.X, self.offset = K, X, offset
        self.label = np.zeros(y.shape[0], dtype=np.int64)
        for k, idx in enumerate(groups):
            self.label[idx] = k
        self.ng = len(groups)

    def gradient(self, a: np.ndarray) -> np.ndarray:
        """``G = Q a`` (with the offset's linear term)."""
        v = self.y * a
        if self.K is not None:
            return self.y * (self.K @ v)
        return self.y * (self.X @ (self.X.T @ v + (0.0 if self.offset is None else self.offset)))

    def solve(self, F: np.ndarray, a: np.ndarray) -> np.ndarray | None:
        """The free weights ``a_F`` minimising on the face (the others held at their values
        in ``a``), by least squares of the KKT system; None if not finite."""
        B = np.setdiff1d(np.flatnonzero(a > 0.0), F)
        y = self.y
        if self.K is not None:
            QFF = (y[F, None] * self.K[np.ix_(F, F)]) * y[None, F]
            rhs_top = -y[F] * (self.K[np.ix_(F, B)] @ (y[B] * a[B]))
        else:
            G = y[F, None] * self.X[F]
            QFF = G @ G.T
            rest = self.X[B].T @ (y[B] * a[B]) + (0.0 if self.offset is None else self.offset)
            rhs_top = -G @ rest
        E = np.zeros((self.ng, F.size))
        E[self.label[F], np.arange(F.size)] = 1.0
        # Q / q with q its largest diagonal entry (the multipliers scale, a_F does not): the
        # constraint rows keep singular values ~1 instead of ~1 / ||Q||, which least squares
        # would cut at data far from unit scale (and then miss the group sums)
        q = float(np.max(np.abs(np.diag(QFF))))
        q = q if q > 0.0 and np.isfinite(q) else 1.0
        M = np.block([[QFF / q, E.T], [E, np.zeros((self.ng, self.ng))]])
        rhs = np.concatenate([rhs_top / q, self.targets - np.bincount(
            self.label[B], weights=a[B], minlength=self.ng)])
        with np.errstate(all="ignore"):
            solution = np.linalg.lstsq(M, rhs, rcond=None)[0][: F.size]
        return solution if np.all(np.isfinite(solution)) else None

    def release(self, a: np.ndarray, free: np.ndarray) -> list[int]:
        """The bound weights to free: per group, LIBSVM's violation ``max_{a_i > 0} G_i -
        min_{a_i < U} G_i``; the worst group's pair (one index if the other is free already),
        or [] when every violation is within :data:`RELEASE_RTOL` of ``max |G|``."""
        G = self.gradient(a)
        tol = RELEASE_RTOL * max(float(np.max(np.abs(G))), 1e-300)
        worst, pair = tol, []
        for k in range(self.ng):
            idx = np.flatnonzero(self.label == k)
            up, low = idx[a[idx] > 0.0], idx[a[idx] < self.upper[idx]]
            if up.size == 0 or low.size == 0:
                continue
            i, j = up[np.argmax(G[up])], low[np.argmin(G[low])]
            if G[i] - G[j] > worst:
                worst, pair = G[i] - G[j], [int(t) for t in (i, j) if not free[t]]
        return pair


def _per_point(upper: Bound, alpha: np.ndarray) -> np.ndarray:
    """The bounds as one per point (a read-only view for a common bound)."""
    return np.broadcast_to(np.asarray(upper, dtype=np.float64), alpha.shape)


def face_polish(alpha: np.ndarray, y: np.ndarray, upper: Bound, groups: list[np.ndarray],
                targets: list[float], *, K: np.ndarray | None = None,
                X: np.ndarray | None = None, offset: np.ndarray | None = None
                ) -> list[np.ndarray]:
    """The distinct exact face solutions (module docstring) for the free sets of
    :data:`FACE_CUTS`; ``upper`` one bound or one per point; ``K`` the Gram matrix, or ``X``
    the points of a linear kernel, with
    ``offset``: the objective ``1/2 ||X^T v + offset||^2`` (points moved by a centre ``c``
    that the fixed sums turn into the constant ``offset = sum_k t_k y_k c``: the same problem,
    better conditioned far from the origin)."""
    upper = _per_point(upper, alpha)
    face = _Face(y, upper, groups, targets, K, X, offset)
    out: list[np.ndarray] = []
    seen: set[bytes] = set()
    for cut in FACE_CUTS:
        free = (alpha > cut * upper) & (alpha < (1.0 - cut) * upper)
        at_upper = alpha >= (1.0 - cut) * upper
        key = free.tobytes() + at_upper.tobytes()
        if key in seen:
            continue
        seen.add(key)
        a = np.where(at_upper, upper, 0.0)
        if not free.any():  # a vertex: a candidate when it meets the group sums
            sums = [float(a[idx].sum()) for idx in groups]
            if np.allclose(sums, targets, rtol=FACE_BOX_RTOL, atol=0.0):
                out.append(a)
            continue
        F = np.flatnonzero(free)
        solution = face.solve(F, a)
        cap = upper[F]
        if solution is None or np.any(solution < -FACE_BOX_RTOL * cap) or (
                np.any(solution > (1.0 + FACE_BOX_RTOL) * cap)):
            continue
        a[F] = np.clip(solution, 0.0, cap)
        out.append(a)
    return out


def face_active_set(alpha: np.ndarray, y: np.ndarray, upper: Bound, groups: list[np.ndarray],
                    targets: list[float], *, K: np.ndarray | None = None,
                    X: np.ndarray | None = None, offset: np.ndarray | None = None
                    ) -> np.ndarray | None:
    """A primal active-set method from a feasible ``alpha``: a face solve; if it leaves the
    box, the step to the first bound (that weight fixed there); else the bound pair of
    :meth:`_Face.release` freed, until none is left (at most :data:`ACTIVE_SET_STEPS` solves
    more than the weights free at the start, free sets up to :data:`ACTIVE_SET_MAX_FREE`).
    The objective never rises. None when it cannot start (a free set too large); ``upper`` as
    :func:`face_polish`'s."""
    upper = _per_point(upper, alpha)
    face = _Face(y, upper, groups, targets, K, X, offset)
    a = np.asarray(alpha, dtype=np.float64).copy()
    free = (a > 0.0) & (a < upper)
    for _ in range(ACTIVE_SET_STEPS + int(np.count_nonzero(free))):
        F = np.flatnonzero(free)
        if F.size > ACTIVE_SET_MAX_FREE:
            return None
        target = a[F] if F.size == 0 else face.solve(F, a)
        if target is None:
            return a
        d = target - a[F]
        with np.errstate(divide="ignore", invalid="ignore"):
            limits = np.where(d < 0.0, -a[F] / d,
                              np.where(d > 0.0, (upper[F] - a[F]) / d, np.inf))
        tau = min(1.0, float(np.min(limits))) if F.size else 1.0
        a[F] = a[F] + tau * d
        if tau < 1.0:  # the blocking weight(s) leave the free set, exactly on their bound
            hit = F[limits <= tau]
            a[hit] = np.where(d[limits <= tau] < 0.0, 0.0, upper[hit])
            free[hit] = False
            continue
        a[F] = np.clip(a[F], 0.0, upper[F])
        pair = face.release(a, free)
        if not pair:
            return a
        free[pair] = True
    return a
