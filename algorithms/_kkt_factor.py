r"""The free set's KKT system of the active-set method, factored once and then bordered.

On the free set ``F`` (bounds held fixed) each step of
:func:`~maxmargin.algorithms.active_set.polish_alpha` solves the equilibrated system

.. math::

    M_F \begin{bmatrix} d / \rho \\ \lambda / g_{max} \end{bmatrix}
    = \begin{bmatrix} -g_F / g_{max} \\ 0 \end{bmatrix}, \qquad
    M_F = \begin{bmatrix} Q_{FF} / s & y_F \\ y_F^T & 0 \end{bmatrix},
    \quad \rho = g_{max} / s.

An alpha joining or leaving ``F`` changes ``M_F`` by one row and column. So ``M_0``, the matrix
of the free set ``F_0`` at the last factorization, is LU-factored once (``O(m^3)``), and every
change since is a border (:class:`BorderedKKT`): an alpha ``a`` that joined adds the column
``w_a = (Q_{F_0 a} / s, y_a)`` with ``D_{aa'} = Q_{aa'} / s``; an alpha ``r`` of ``F_0`` that
left adds the unit vector ``e_r`` (``d_r = 0``; its multiplier absorbs its row). With
``W = [w, e]``:

.. math::

    \begin{bmatrix} M_0 & W \\ W^T & D \end{bmatrix}
    \begin{bmatrix} x \\ z \end{bmatrix} = \begin{bmatrix} f \\ h \end{bmatrix}, \quad
    S = D - W^T M_0^{-1} W, \quad z = S^{-1} (h - W^T M_0^{-1} f), \quad
    x = M_0^{-1} (f - W z),

``O(m^2)`` a step (``M_0^{-1} W`` and ``S`` are kept, a column a border). ``M_0`` is factored
afresh after ``BORDER_LIMIT`` borders, and whenever ``S`` is singular to round-off
(:meth:`BorderedKKT._bordered`), a bordered solution is above ``1 / RCOND_MIN`` (the
right-hand side has entries up to 1: a near-singular system) or its residual
``Q_FF d + lambda y_F + g_F`` is above round-off. A matrix whose reciprocal condition number
(LAPACK's estimate) is below ``RCOND_MIN`` is not factored: such a step is left to the
eigendecomposition (:func:`eigh_step`), which also finds the zero-curvature directions of
singular subproblems. The entries of ``Q`` are computed once each and kept.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import scipy.linalg
from scipy.linalg.lapack import dgecon

__all__ = ["BORDER_LIMIT", "FACTOR_MIN_FREE", "RCOND_MIN", "RESIDUAL_RTOL", "NULL_ROW_TOL",
           "FACTOR_WORK",
           "SOLVE_WORK", "EIGH_WORK", "Step", "BorderedKKT", "eigh_step"]

#: Borders (alphas that joined or left ``F`` since the factorization) before ``M_0`` is
#: factored afresh.
BORDER_LIMIT = 48
#: Matrices with a smaller reciprocal condition number (1-norm, LAPACK's ``gecon``) are left
#: to :func:`eigh_step` (the coarse eigenvalue cutoff of the polish); so are bordered systems
#: whose bound on it is smaller (:meth:`BorderedKKT._bordered`).
RCOND_MIN = 1e-12
#: A bordered solution is kept when ``|Q_FF d + lambda y_F + g_F|`` is at most this times
#: ``max |g_F| + max |Q_FF| max |d| + |lambda|`` (else ``M_0`` is factored afresh).
RESIDUAL_RTOL = 1e-13
#: Free sets smaller than this are solved by :func:`eigh_step` alone, from ``block`` (as before
#: the factors; nothing is kept): its ``9 (m + 1)^3`` is then below the bordered path's fixed
#: cost (some 20 NumPy calls a step).
FACTOR_MIN_FREE = 64
#: A row of the orthonormal null basis ``N`` at most this long is round-off: the alpha that
#: leaves is not in the null space, which keeps its dimension (:meth:`BorderedKKT._null_step`).
NULL_ROW_TOL = 1e-10
#: Counted floating-point operations (never timed): ``EIGH_WORK (m + 1)^3`` for an
#: eigendecomposition, ``FACTOR_WORK (m + 1)^3`` for an LU factorization with its condition
#: estimate, ``SOLVE_WORK (m + 1)^2`` for a solve with the factors.
EIGH_WORK = 9.0
FACTOR_WORK = 1.0
SOLVE_WORK = 4.0


class Step(NamedTuple):
    """A step on the free set.

    Attributes
    ----------
    d : (m,) array
        The step, in ``free``'s order.
    newton : bool
        Whether it is the Newton step (else a zero-curvature descent direction).
    lam : float or None
        The multiplier ``lambda`` of ``y . alpha = 0`` (None for a descent direction or an
        empty free set).
    noise : float
        ``max |g_F| / sigma``, the unit of the solve's round-off in ``d``.
    sigma : float
        ``max |Q_FF|``: from the factors, ``max_i |Q_ii|`` over ``F`` (the same for a
        semidefinite ``Q``, whose largest entry is on its diagonal).
    """

    d: np.ndarray
    newton: bool
    lam: float | None
    noise: float
    sigma: float


def kkt_matrix(Q: np.ndarray, yF: np.ndarray) -> tuple[np.ndarray, float]:
    """``M_F = [[Q_FF / s, y_F], [y_F^T, 0]]`` with ``s = max |Q_FF|`` (1 for a zero ``Q_FF``),
    and ``s``."""
    m = yF.size
    s = float(np.max(np.abs(Q))) or 1.0
    M = np.zeros((m + 1, m + 1))
    M[:m, :m] = Q / s
    M[:m, m] = M[m, :m] = yF
    return M, s


def eigh_step(Q: np.ndarray, yF: np.ndarray, gF: np.ndarray, eig_rtol: float,
              ) -> tuple[Step, np.ndarray | None]:
    """The step from the eigendecomposition of ``M_F`` (``Q = Q_FF``, ``s = max |Q_FF|``),
    eigenvalues below ``eig_rtol`` times the largest dropped, and the dropped eigenvectors'
    first ``m`` entries (their last is ``lambda``'s, 0 for a null vector), or None when ``Q_FF``
    is not semidefinite on ``y_F^T d = 0`` (``M_F`` has more than one negative eigenvalue: the
    null space can then grow as alphas leave). If the system is consistent, ``d`` is the Newton
    step; if not, its least-squares residual (its projection on the dropped eigenvectors) is a
    direction with ``Q_FF d = 0``, ``y_F^T d = 0`` and ``g_F^T d < 0`` (zero curvature,
    descent)."""
    m = yF.size
    if m == 0:
        return Step(np.zeros(0), True, None, 0.0, 0.0), None
    M, sigma = kkt_matrix(Q, yF)
    # the right-hand side -g_F / sigma, solved as a unit vector times rho (no overflow in
    # norms when sigma is tiny: data of magnitude 1e-140 has alpha ~ 1e280)
    g_max = float(np.max(np.abs(gF))) or 1.0
    rho = g_max / sigma
    rhs = np.append(-gF / g_max, 0.0)
    eig, V = np.linalg.eigh(M)
    keep = np.abs(eig) > eig_rtol * float(np.max(np.abs(eig)))
    coef = V.T @ rhs
    residual = V[:, ~keep] @ coef[~keep]
    semidefinite = int(np.count_nonzero(keep & (eig < 0.0))) <= 1
    null = V[:m, ~keep] if semidefinite else None
    if (np.linalg.norm(residual) > 1e-10 * np.linalg.norm(rhs)
            and float(residual[:m] @ rhs[:m]) > 0.0):
        return Step(residual[:m], False, None, 0.0, sigma), null
    z = V[:, keep] @ (coef[keep] / eig[keep])
    return Step(z[:m] * rho, True, float(z[m]) * g_max, rho, sigma), null


class BorderedKKT:
    """The KKT systems of a sequence of free sets (module docstring).

    Parameters
    ----------
    y : (n,) array of -1/+1
    columns : callable
        ``columns(idx, a)``: ``K[idx, a]`` (float64) for an index array ``idx`` and one index
        ``a``.
    block : callable
        ``block(idx)``: ``K[idx][:, idx]``.
    min_factored : int
        Free sets smaller than this go to :func:`eigh_step` (:data:`FACTOR_MIN_FREE`).

    ``work`` counts the floating-point operations of the factorizations and solves
    (:data:`FACTOR_WORK`, :data:`SOLVE_WORK`, :data:`EIGH_WORK`); ``columns`` and ``block``
    count their own.
    """

    def __init__(self, y: np.ndarray, columns: Callable[[np.ndarray, int], np.ndarray],
                 block: Callable[[np.ndarray], np.ndarray],
                 min_factored: int = FACTOR_MIN_FREE) -> None:
        self.y, self.columns, self.block = y, columns, block
        self.min_factored = min_factored
        self.work = 0.0
        # Q over the indices met so far: Q[known[p], known[q]] = self.Q[p, q], in a buffer that
        # doubles when full
        self.known = np.zeros(0, dtype=np.int64)
        self.where = np.full(y.size, -1, dtype=np.int64)  # index -> position in known
        self.buffer = np.zeros((0, 0))
        self.base: np.ndarray | None = None  # F_0, as positions in known
        self.lu: tuple[np.ndarray, np.ndarray] | None = None
        self.s0 = 1.0
        self.borders = np.zeros(0, dtype=np.int64)  # positions: joined F, then left F_0
        self.W = self.U = np.zeros((0, 0))  # (m_0 + 1) x borders: W and M_0^{-1} W
        self.S = self.T = np.zeros((0, 0))  # D - W^T U and |D| + |W|^T |U|
        #: the free set and an orthonormal basis of ``M``'s null space there, after a
        #: zero-curvature step (:meth:`_null_step`)
        self.null: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def Q(self) -> np.ndarray:
        k = self.known.size
        return self.buffer[:k, :k]

    def _know(self, free: np.ndarray) -> np.ndarray:
        """The positions of ``free`` in ``known``, computing the entries of ``Q`` it lacks."""
        missing = free[self.where[free] < 0]
        if missing.size:
            k, total = self.known.size, self.known.size + missing.size
            if total > self.buffer.shape[0]:
                grown = np.zeros((max(total, 2 * self.buffer.shape[0]),) * 2)
                grown[:k, :k] = self.Q
                self.buffer = grown
            idx = np.append(self.known, missing)
            if k == 0:
                K = self.block(missing)
            else:
                K = np.empty((total, missing.size))
                for t, a in enumerate(missing):
                    K[:k + t + 1, t] = self.columns(idx[:k + t + 1], int(a))
                K[k:] = np.triu(K[k:]) + np.triu(K[k:], 1).T
            block = self.y[idx][:, None] * K * self.y[missing][None, :]
            self.buffer[:total, k:total] = block
            self.buffer[k:total, :k] = block[:k].T
            self.where[missing] = np.arange(k, total)
            self.known = idx
        return self.where[free]

    def gram(self, free: np.ndarray) -> np.ndarray:
        """``Q_FF`` in ``free``'s order."""
        pos = self._know(free)
        return self.Q[np.ix_(pos, pos)]

    def _forget_all_but(self, pos: np.ndarray) -> np.ndarray:
        """Keep the entries of ``Q`` between the positions ``pos`` only (in a buffer twice
        their size); their new positions."""
        m = pos.size
        kept = np.zeros((2 * m, 2 * m))
        kept[:m, :m] = self.Q[np.ix_(pos, pos)]
        self.where[self.known] = -1
        self.known = self.known[pos]
        self.where[self.known] = np.arange(m)
        self.buffer = kept
        return np.arange(m)

    def _factor(self, pos: np.ndarray) -> np.ndarray | None:
        """LU-factor ``M_0`` on the positions ``pos`` (first forgetting the entries of ``Q``
        beyond them when they are most of those kept): the positions after, or None (nothing
        kept) when its reciprocal condition number is below ``RCOND_MIN``."""
        m = pos.size
        self.base, self.lu = None, None
        if self.known.size > 2 * m + BORDER_LIMIT:
            pos = self._forget_all_but(pos)
        M, self.s0 = kkt_matrix(self.Q[np.ix_(pos, pos)], self.y[self.known[pos]])
        self.work += FACTOR_WORK * (m + 1) ** 3
        lu, piv, info = scipy.linalg.lapack.dgetrf(M)
        if info != 0:
            return None
        rcond, info = dgecon(lu, float(np.max(np.sum(np.abs(M), axis=0))), norm="1")
        if info != 0 or not rcond >= RCOND_MIN:
            return None
        self.base, self.lu = pos, (lu, piv)
        self.borders = np.zeros(0, dtype=np.int64)
        self.W = self.U = np.zeros((m + 1, 0))
        self.S = self.T = np.zeros((0, 0))
        return pos

    def _solve0(self, rhs: np.ndarray) -> np.ndarray:
        """``M_0^{-1} rhs``."""
        self.work += SOLVE_WORK * rhs.shape[0] ** 2
        x, _ = scipy.linalg.lapack.dgetrs(self.lu[0], self.lu[1], rhs)
        return x

    def _sync(self, pos: np.ndarray) -> bool:
        """The borders of the free set ``pos``: those that joined ``F`` (in ``pos``'s order),
        then those that left ``F_0``, with ``W``, ``U = M_0^{-1} W`` and ``S`` (the columns
        and entries of borders kept are reused); False when there would be more than
        ``BORDER_LIMIT``."""
        base, k = self.base, self.known.size
        in_base, in_free = np.zeros(k, dtype=bool), np.zeros(k, dtype=bool)
        in_base[base], in_free[pos] = True, True
        wanted = np.concatenate([pos[~in_base[pos]], base[~in_free[base]]])
        if wanted.size > BORDER_LIMIT:
            return False
        if np.array_equal(wanted, self.borders):
            return True
        where = np.full(k, -1, dtype=np.int64)
        where[self.borders] = np.arange(self.borders.size)
        old = where[wanted]
        reused, new = np.flatnonzero(old >= 0), np.flatnonzero(old < 0)
        m0, r = base.size, wanted.size
        W, U = np.empty((m0 + 1, r)), np.empty((m0 + 1, r))
        S, T = np.empty((r, r)), np.empty((r, r))
        W[:, reused], U[:, reused] = self.W[:, old[reused]], self.U[:, old[reused]]
        S[np.ix_(reused, reused)] = self.S[np.ix_(old[reused], old[reused])]
        T[np.ix_(reused, reused)] = self.T[np.ix_(old[reused], old[reused])]
        row = np.full(k, -1, dtype=np.int64)
        row[base] = np.arange(m0)
        for t in new:
            b = wanted[t]
            w = np.zeros(m0 + 1)
            if row[b] >= 0:  # left F_0: d_b = 0, its multiplier absorbs its row
                w[row[b]] = 1.0
            else:  # joined: its column of M
                w[:m0] = self.Q[base, b] / self.s0
                w[m0] = self.y[self.known[b]]
            W[:, t], U[:, t] = w, self._solve0(w)
        if new.size:  # S = D - W^T U, D = Q / s0 between borders that joined
            joined = row[wanted] < 0
            D = np.where(joined[:, None] & joined[new][None, :],
                         self.Q[np.ix_(wanted, wanted[new])] / self.s0, 0.0)
            S[:, new] = D - W.T @ U[:, new]
            S[new, :] = S[:, new].T
            T[:, new] = np.abs(D) + np.abs(W).T @ np.abs(U[:, new])
            T[new, :] = T[:, new].T
            self.work += 4.0 * (m0 + 1) * r * new.size
        self.borders, self.W, self.U, self.S, self.T = wanted, W, U, S, T
        return True

    def _bordered(self, pos: np.ndarray, gF: np.ndarray) -> tuple[np.ndarray, float] | None:
        """The solution ``(d / rho, lambda / g_max)`` of the bordered system for ``gF / g_max``
        (already scaled), ``d`` in ``pos``'s order; None when it is near singular.

        ``M_F = [[I, 0], [U^T, I]] diag(M_0, S) [[I, U], [0, I]]``, so with ``M_0`` regular
        ``M_F`` is singular with ``S``. A singular ``S`` is round-off left by the cancellation
        of its terms ``D - W^T U``: the system is refused when the smallest singular value of
        ``S`` is at most ``RCOND_MIN`` times the largest of ``|D| + |W|^T |U|`` (a solution
        would carry a null part of arbitrary size and sign)."""
        base, m0, k = self.base, self.base.size, self.known.size
        grad = np.zeros(k)
        grad[pos] = gF
        x = self._solve0(np.append(-grad[base], 0.0))
        out = np.zeros(k)
        r = self.borders.size
        if r:
            in_free = np.zeros(k, dtype=bool)
            in_free[pos] = True
            joined = in_free[self.borders]
            h = np.where(joined, -grad[self.borders], 0.0) - self.W.T @ x
            self.work += 8.0 * (m0 + 1) * r + 3.0 * r ** 3
            singular = np.linalg.svd(self.S, compute_uv=False)
            if not singular[-1] > RCOND_MIN * float(np.max(self.T)):
                return None
            z = np.linalg.solve(self.S, h)
            x = x - self.U @ z
            out[self.borders[joined]] = z[joined]
        out[base] = x[:m0]
        return out[pos], float(x[m0])

    def step(self, free: np.ndarray, g: np.ndarray, eig_rtol: float,
             q_times: Callable[[np.ndarray, np.ndarray], np.ndarray],
             ) -> tuple[Step, np.ndarray | None]:
        """The step on the free set.

        Parameters
        ----------
        free : (m,) int array
            The free set ``F``, sorted.
        g : (n,) array
            The gradient ``Q alpha - 1``.
        eig_rtol : float
            The eigenvalue cutoff of :func:`eigh_step`, where it is used.
        q_times : callable
            ``q_times(free, d)``: ``Q[:, F] d`` (length ``n``).

        Returns
        -------
        step : Step
        Qd : (n,) array or None
            ``Q[:, F] d`` when it was computed (to judge a factored step).
        """
        m = free.size
        if m == 0:
            return Step(np.zeros(0), True, None, 0.0, 0.0), None
        if m < self.min_factored:  # the eigendecomposition alone, nothing kept
            self.base = self.lu = self.null = None
            self.work += EIGH_WORK * (m + 1) ** 3
            yF = self.y[free]
            return eigh_step(yF[:, None] * self.block(free) * yF[None, :], yF, g[free],
                             eig_rtol)[0], None
        pos = self._know(free)
        if self.base is None and self.known.size > 2 * m + BORDER_LIMIT:
            pos = self._forget_all_but(pos)  # no factors refer to positions: keep Q's size
        yF, gF = self.y[free], g[free]
        g_max = float(np.max(np.abs(gF))) or 1.0
        sigma = float(np.max(np.abs(np.diagonal(self.Q)[pos]))) or 1.0
        walked = self._null_step(free, -gF / g_max, sigma)
        if walked is not None:
            return walked, None
        factored = self._factored_step(free, pos, gF, g_max, sigma, q_times)
        if factored is not None:
            return factored
        self.base, self.lu = None, None
        self.work += EIGH_WORK * (m + 1) ** 3
        found, null = eigh_step(self.gram(free), yF, gF, eig_rtol)
        if not found.newton and null is not None:  # zero curvature: walk on in this null space
            self.work += 2.0 * m * null.shape[1] ** 2
            self.null = (free, np.linalg.qr(null)[0])
        return found, None

    def _factored_step(self, free: np.ndarray, pos: np.ndarray, gF: np.ndarray, g_max: float,
                       sigma: float, q_times: Callable[[np.ndarray, np.ndarray], np.ndarray],
                       ) -> tuple[Step, np.ndarray] | None:
        """The Newton step from the factors (bordered, else factored afresh on ``free``) and
        ``Q[:, F] d``; None when the system is too near singular for them."""
        fresh = False
        while True:
            if self.base is None or not self._sync(pos):
                fresh = True
                factored = self._factor(pos)
                if factored is None:
                    return None
                pos = factored
            solved = self._bordered(pos, gF / g_max)
            if solved is not None and max(float(np.max(np.abs(solved[0]))),
                                          abs(solved[1])) * RCOND_MIN <= 1.0:
                z, lam_scaled = solved
                d, lam = z * (g_max / self.s0), lam_scaled * g_max
                if np.all(np.isfinite(d)) and math.isfinite(lam):
                    dg = q_times(free, d)
                    residual = float(np.max(np.abs(dg[free] + lam * self.y[free] + gF)))
                    scale = g_max + sigma * float(np.max(np.abs(d))) + abs(lam)
                    if residual <= RESIDUAL_RTOL * scale:
                        return Step(d, True, lam, g_max / sigma, sigma), dg
            if fresh:
                return None
            self.base = None  # factor afresh on this free set

    def _null_step(self, free: np.ndarray, rhs: np.ndarray, sigma: float) -> Step | None:
        """The zero-curvature direction from the null space ``N`` of ``M`` kept since the last
        eigendecomposition, while alphas have only left ``F``: the null vectors of the smaller
        matrix are those of ``N`` with a 0 at each alpha that left (``Q_FF v = 0`` with
        ``v_j = 0`` holds without row and column ``j``; no others, ``Q`` being semidefinite),
        found by a Householder reflection of ``N``'s columns for each (``O(m k)``). The
        direction is ``N N^T rhs`` when it is not negligible (as in :func:`eigh_step`); None
        (and ``N`` forgotten) otherwise, or when an alpha joined ``F``."""
        if self.null is None:
            return None
        kept, N = self.null
        self.null = None
        inside = np.isin(kept, free)
        if int(np.count_nonzero(inside)) != free.size:
            return None
        for j in np.flatnonzero(~inside):  # rotate a column onto e_j, then drop it
            u = N[j].copy()
            norm = float(np.linalg.norm(u))
            if norm > NULL_ROW_TOL:  # else e_j is not in span(N) but for round-off
                u[0] += math.copysign(norm, u[0])
                N = (N - np.outer(N @ u, u) * (2.0 / float(u @ u)))[:, 1:]
            self.work += 4.0 * N.shape[0] * (N.shape[1] + 1)
        N = N[inside]
        if N.shape[1] == 0:
            return None
        residual = N @ (N.T @ rhs)
        self.work += 4.0 * N.size
        if (np.linalg.norm(residual) <= 1e-10 * np.linalg.norm(rhs)
                or float(residual @ rhs) <= 0.0):
            return None
        self.null = (free, N)
        return Step(residual, False, None, 0.0, sigma)
