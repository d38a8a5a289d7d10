r"""``cs_dcd``'s exact finish: a primal active-set method on the Crammer-Singer dual, for runs
whose sequential dual passes crawl (large ``C`` on nearly separable data).

With the upper bounds ``U_i^m = C_i [m = y_i]`` of the dual (:mod:`.crammer_singer`) and the
set ``B`` of entries held at them, each step solves the equality-constrained problem on the
free entries of the samples with two or more free classes (a sample's only free entry is
fixed by ``sum_m alpha_i^m = 0``):

.. math::

    G_i^m + \sum_j K_{ij} d_j^m = \beta_i \quad ((i, m) \text{ free}), \qquad
    \sum_{m \text{ free}} d_i^m = 0,

``K = X~ X~^T`` (classes do not couple: one block of ``K`` per class), ``G_i^m = w_m . x~_i +
[m != y_i]``. If the system is consistent, ``d`` is the Newton step; if not, its least-squares
residual is a direction of zero curvature that descends (as in the C-SVC's finish,
:func:`~maxmargin.algorithms.active_set.polish_alpha`). The step is followed to the first free
entry that reaches its bound, which joins ``B``. At a stationary point an entry held at its
bound with ``G_i^m > beta_i`` is released, the worst first (one whose release gave a step of
length 0 is not released again until a step moves). The work is counted, never timed.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["CS_FINISH_MAX_SIZE", "CS_FINISH_MIN_WORK", "cs_finish"]

#: At most this many rows in the Newton system (free entries and their samples; dense, solved
#: afresh each step, cubic in its size): the finish is for small supports, where the passes
#: crawl and its steps cost little.
CS_FINISH_MAX_SIZE = 250
#: The finish may always do this much work (floating-point operations, estimated): each step
#: solves its Newton system afresh (``10 (N + S)^3`` for ``N`` free entries of ``S`` samples).
CS_FINISH_MIN_WORK = 1e9
#: A multiplier wrong by at most this fraction of ``max(1, max |G|)`` counts as right.
CS_FINISH_KKT_RTOL = 1e-12
#: The Newton system counts as consistent when its least-squares residual is at most this
#: fraction of ``1 + max |G_F|`` (else the residual is the zero-curvature direction).
CS_FINISH_NULL_RTOL = 1e-9
#: Full Newton steps on one face (the first, then iterative refinement) before its multipliers
#: are read.
CS_FINISH_REFINE = 2


def _support_gram(X: Any, s: float, idx: np.ndarray) -> np.ndarray:
    """``X~_idx X~_idx^T`` (bias column ``s`` included), dense; sparse rows stay sparse."""
    rows = X[idx]
    gram = rows @ rows.T
    gram = gram.toarray() if sp.issparse(gram) else np.asarray(gram, dtype=np.float64)
    return gram + s * s


def _scores(X: Any, s: float, a: np.ndarray) -> np.ndarray:
    """``w_m . x~_i`` for every sample and class, ``W = X~^T a``."""
    W = np.asarray(X.T @ a, dtype=np.float64)
    return np.asarray(X @ W, dtype=np.float64) + s * s * a.sum(axis=0)


def _balance(a: np.ndarray, free: np.ndarray, U: np.ndarray) -> None:
    """``sum_m a_i^m = 0`` restored in place after the steps' round-off: each sample's sum
    taken off its free entry with the most room below its bound."""
    room = np.where(free, U - a, -np.inf)
    best = np.argmax(room, axis=1)
    rows = np.flatnonzero(np.isfinite(room[np.arange(a.shape[0]), best]))
    a[rows, best[rows]] -= a[rows].sum(axis=1)


def cs_finish(X: Any, s: float, y: np.ndarray, box: np.ndarray, alpha: np.ndarray,
              max_work: float) -> np.ndarray | None:
    """The finished ``alpha`` (module docstring) from the passes' ``alpha`` (``(n, K)``), or
    None when it takes more than ``4 n K + 100`` steps, more than ``max(max_work,
    CS_FINISH_MIN_WORK)`` floating-point operations (estimated), meets a Newton system of more
    than :data:`CS_FINISH_MAX_SIZE` rows, or finds no step. The caller's certificate judges
    the answer."""
    n, K = alpha.shape
    nnz = X.nnz if sp.issparse(X) else X.size
    onehot = np.zeros((n, K), dtype=bool)
    onehot[np.arange(n), y] = True
    U = np.where(onehot, box[:, None], 0.0)
    a = np.minimum(np.array(alpha, dtype=np.float64), U)
    held = a >= U
    stuck = np.zeros((n, K), dtype=bool)
    linear = np.where(onehot, 0.0, 1.0)
    budget = max(max_work, CS_FINISH_MIN_WORK)
    work = 0.0
    released = (-1, -1)
    refined, face = 0, b""  # full Newton steps taken on the face ``face`` (held entries)
    for _ in range(4 * n * K + 100):
        if work > budget:
            return None
        G = _scores(X, s, a) + linear
        work += 4.0 * nnz * K
        free = ~held
        support = np.flatnonzero(free.sum(axis=1) >= 2)
        at, cls = np.nonzero(free[support])  # positions in support, classes
        N, S = at.size, support.size
        if N + S > CS_FINISH_MAX_SIZE:
            return None
        if N and refined < CS_FINISH_REFINE:
            if work + 10.0 * (N + S) ** 3 > budget:  # a step's solve alone would exceed it
                return None
            gram = _support_gram(X, s, support)
            work += 2.0 * S * S * (nnz / max(n, 1))
            M = np.zeros((N + S, N + S))
            M[:N, :N] = gram[at[:, None], at[None, :]] * (cls[:, None] == cls[None, :])
            # the border in the Gram block's units (beta / sigma the unknowns): the system's
            # conditioning, and so its verdict of consistency, the same in any units
            sigma = float(np.mean(np.diag(M)[:N])) or 1.0
            M[np.arange(N), N + at] = -sigma
            M[N + at, np.arange(N)] = -sigma
            rhs = np.concatenate([-G[support[at], cls], np.zeros(S)])
            sol = np.linalg.lstsq(M, rhs, rcond=None)[0]
            work += 10.0 * (N + S) ** 3
            residual = rhs - M @ sol
            scale = float(np.max(np.abs(rhs), initial=0.0)) + 1.0
            newton = float(np.max(np.abs(residual), initial=0.0)) <= CS_FINISH_NULL_RTOL * scale
            d = sol[:N] if newton else residual[:N]  # zero curvature, descent (docstring)
            # sum_m d_i^m = 0 exactly: the solve leaves round-off, which a long step along a
            # zero-curvature direction would magnify
            d -= (np.bincount(at, d, S) / np.bincount(at, minlength=S))[at]
            cur = a[support[at], cls]
            room = np.maximum(U[support[at], cls] - cur, 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                to_bound = np.where(d > 0.0, room / d, math.inf)
            cap = 1.0  # the Newton step; along a "zero-curvature" direction, the line's
            if not newton:  # minimum when round-off left it a curvature, else a bound
                curv = float(d @ (M[:N, :N] @ d))
                slope = float(-rhs[:N] @ d)  # G_F . d < 0
                cap = -slope / curv if curv > 0.0 and slope < 0.0 else math.inf
            block = int(np.argmin(to_bound))
            hit = float(to_bound[block]) <= cap
            length = float(to_bound[block]) if hit else cap
            if not math.isfinite(length):
                return None
            if float(np.max(np.abs(d), initial=0.0)) > 0.0:
                a[support[at], cls] = cur + length * d
                if hit:  # a free entry reached its bound
                    i, m = support[at[block]], cls[block]
                    a[i, m], held[i, m] = U[i, m], True
                    if length == 0.0 and (int(i), int(m)) == released:
                        stuck[i, m] = True  # not released again until a step moves
                    if length > 0.0:
                        stuck[:] = False
                    refined, face = 0, b""
                    continue
                stuck[:] = False
                key = held.tobytes()  # a Newton step: refined on this face, G recomputed
                refined, face = (refined + 1 if newton and key == face else int(newton)), key
                continue
        # stationary on this face: the bound multipliers
        beta = np.where(free, G, 0.0).sum(axis=1) / np.maximum(free.sum(axis=1), 1)
        wrong = np.where(held & ~stuck, G - beta[:, None], 0.0)
        i, m = np.unravel_index(int(np.argmax(wrong)), wrong.shape)
        if wrong[i, m] <= CS_FINISH_KKT_RTOL * max(1.0, float(np.max(np.abs(G)))):
            _balance(a, free, U)
            return a
        held[i, m], released = False, (int(i), int(m))
        refined, face = 0, b""
    return None
