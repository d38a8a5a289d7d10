"""``l1_cdn``: LIBLINEAR's L1-regularised squared-hinge SVM (``-s 5``) by coordinate descent.

The problem (``LinearSVC(penalty="l1", loss="squared_hinge", dual=False)``) is over the rows
``x~_i = (x_i, s)``, ``s = intercept_scaling`` (the bias weight regularised like the others;
``x~_i = x_i`` without an intercept), as :func:`~maxmargin.formulations.liblinear_primal`:

.. math::

    \\min_{\\tilde w} \\|\\tilde w\\|_1 + \\sum_i C_i \\, b_i(\\tilde w)_+^2,
    \\qquad b_i = 1 - y_i \\tilde w \\cdot \\tilde x_i .

CDN (Yuan, Chang, Hsieh and Lin, JMLR 2010; LIBLINEAR's ``solve_l1r_l2_svc``) visits the
features in a random order per pass (a permutation from a generator seeded by
``random_state``), keeping every ``b_i``; on feature ``j`` (column access to the signed rows
``y_i x~_i``: CSC, or Fortran-order dense) with ``L'_j = -2 sum_{b_i > 0} C_i y_i x_ij b_i`` and
``L''_j = 2 sum_{b_i > 0} C_i x_ij^2`` it takes the one-variable Newton direction of the
quadratic model plus ``|w_j + d|``,

.. math::

    d = -(L'_j + 1) / L''_j \\text{ if } L'_j + 1 < L''_j w_j, \\quad
    d = -(L'_j - 1) / L''_j \\text{ if } L'_j - 1 > L''_j w_j, \\quad d = -w_j \\text{ else},

and halves it until ``|w_j + d| - |w_j| + L(w + d e_j) - L(w) <= sigma (|w_j + d| - |w_j| + L'_j
d)`` (Armijo, ``sigma = 0.01``; accepted early by the bound ``L(w + d e_j) - L(w) <= L'_j d +
d^2 sum_i C_i x_ij^2``); a search that fails leaves ``w_j`` where it was. A feature at zero
whose ``|L'_j|`` lies below ``1 - Gmax / n`` (``Gmax`` the largest violation of the last pass)
is shrunk (set aside) until LIBLINEAR's ``sum of violations <= eps x (the first pass's)`` rule
brings every feature back (``eps``, first ``L1_CDN_EPS``, is then divided by ``DCD_PG_SHRINK``:
LIBLINEAR stops there instead). After each pass over many features a few rounds of steps go to
those of largest violation (columns of at most 1/8 of the pass's entries): on text-like rows the
bias and the frequent features, coupled with all the rare ones, otherwise keep ``||u||_inf``
above 1 long after ``P`` has converged.

**Stop rule.** ``u = -L'(w~) = sum_i a_i y_i x~_i`` at ``a = 2 C b_+`` is the certificate's dual
point (:func:`~maxmargin.certificate.certify_liblinear`, scaled to ``||u||_inf <= 1``): each
pass estimates its gap from the ``|L'_j|`` it computed, and when the estimate is at most the
target, ``b`` is recomputed from ``w~`` and the certificate itself is evaluated, O(nnz); the run
stops when the certificate's relative gap is at most ``tol`` (else the features are unshrunk and
the estimate's target halved). The certificate is also evaluated after ``CHECK_EVERY`` passes,
then at each doubling; on a failed one the exact finish is tried first: CDN alone crawls along
correlated or badly scaled features (offsets, scales spread over ``e^6``), where the finish,
proximal Newton (:func:`proximal_newton`: the L1 model of the piecewise quadratic loss on the
rows below the margin minimised exactly by feature-sign search, an exact line search on ``P``),
ends in a few steps once the rows below the margin and the signs settle. The certificate is
judged at the KKT map and, when that misses ``tol`` (rounding of ``b`` magnified by large
columns), at the nearest point meeting the support's optimality equations
(:func:`support_dual`).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.linalg import solve_triangular

from maxmargin._jit import njit
from maxmargin._validation import check_positive
from maxmargin.algorithms.dcd.api import checked_arguments, finish_status, gap_met, history_of
from maxmargin.algorithms.dcd.loop import shuffle
from maxmargin.certificate import TINY, certify_liblinear
from maxmargin.results import LiblinearSolution, join_messages
from maxmargin.tolerances import (
    DCD_PG_SHRINK,
    DCD_TOL,
    L1_CDN_D_SKIP,
    L1_CDN_EPS,
    L1_CDN_H_FLOOR,
    L1_FINISH_RIDGE,
    L1_FINISH_VIOLATION,
)

__all__ = ["l1_cdn", "cdn_loop", "column_rows", "ESTIMATE_MET", "MAX_ITER", "PASS_STATE"]

#: Loop outcomes: the pass's gap estimate met the target (evaluate the certificate), or the
#: passes ran out.
ESTIMATE_MET, MAX_ITER = 0, 1
#: Armijo's constant and the most halvings of one line search (LIBLINEAR's 0.01 and 20).
SIGMA, MAX_LINESEARCH = 0.01, 20
#: The most halvings of the gap estimate's target.
TARGET_HALVINGS = 10
#: The passes' state carried from one call to the next, as one record.
PASS_STATE = np.dtype((np.record, [
    ("active", np.int64),  # features not shrunk
    ("gmax_old", np.float64),  # the largest violation of the last pass (the shrinking rule)
    ("gnorm1_init", np.float64),  # the first pass's sum of violations (-1: none yet)
    ("eps", np.float64),  # LIBLINEAR's eps of that rule (divided when it is met)
    ("estimate", np.float64),  # the last pass's gap estimate
]))
#: The exact finish: at most this many weights in its working set (its Newton systems are
#: dense) and proximal Newton steps per finish; the passes between certificates (doubled after
#: each).
FINISH_MAX_SUPPORT, FINISH_STEPS, CHECK_EVERY = 500, 50, 50
#: The most floats of the finish's dense block of rows (:func:`weighted_block`), and its
#: budget for all its factorisations (``rows x columns^2`` each): ``FINISH_WORK_SHARE`` times
#: the entries the passes so far have read (the finish waits where CDN alone is cheaper).
FINISH_MAX_ENTRIES, FINISH_WORK_SHARE = 2**22, 16.0
#: Feature-sign search's steps per weight of its model (:func:`feature_sign`).
FEATURE_SIGN_STEPS = 4
#: After each pass over at least ``HEAVY_MIN_FEATURES`` features, ``HEAVY_ROUNDS`` rounds of
#: steps on the most violating ones whose columns hold at most ``1 / HEAVY_SHARE`` of the
#: entries the pass read (fewer features: the passes themselves revisit each often enough).
HEAVY_ROUNDS, HEAVY_SHARE, HEAVY_MIN_FEATURES = 4, 8, 256


@njit
def column_derivatives(X: Any, indptr: Any, indices: Any, data: Any, j: int, C: np.ndarray,
                       b: np.ndarray) -> tuple[float, float]:
    """``(L'_j, L''_j)`` over column ``j`` (module docstring): ``X`` Fortran-order dense when
    ``indptr`` is None, else the CSC arrays (``X`` None; Numba compiles each layout's loop
    alone, as :func:`~maxmargin.algorithms.dcd.loop.row_dot`). Rows with ``b_i <= 0`` add
    ``+-0`` (a select, not a branch: the signs of ``b`` are unpredictable), the same sums."""
    g, h = 0.0, 0.0
    if indptr is None:
        if X is not None:
            for i in range(X.shape[0]):
                on = b[i] > 0.0
                t = C[i] * X[i, j]
                g -= t * (b[i] if on else 0.0)
                h += t * (X[i, j] if on else 0.0)
    else:
        for k in range(indptr[j], indptr[j + 1]):
            i = indices[k]
            on = b[i] > 0.0
            t = C[i] * data[k]
            g -= t * (b[i] if on else 0.0)
            h += t * (data[k] if on else 0.0)
    return 2.0 * g, 2.0 * h


@njit
def column_shift(X: Any, indptr: Any, indices: Any, data: Any, j: int, C: np.ndarray,
                 b: np.ndarray, step: float) -> tuple[float, float]:
    """``b_i -= step y_i x_ij`` over column ``j`` (``w_j += step``; columns as
    :func:`column_derivatives`); returns ``sum C_i b_{i+}^2`` over its rows before and after."""
    before, after = 0.0, 0.0
    if indptr is None:
        if X is not None:
            for i in range(X.shape[0]):
                old = b[i] if b[i] > 0.0 else 0.0
                before += C[i] * old * old
                b[i] -= step * X[i, j]
                new = b[i] if b[i] > 0.0 else 0.0
                after += C[i] * new * new
    else:
        for k in range(indptr[j], indptr[j + 1]):
            i = indices[k]
            old = b[i] if b[i] > 0.0 else 0.0
            before += C[i] * old * old
            b[i] -= step * data[k]
            new = b[i] if b[i] > 0.0 else 0.0
            after += C[i] * new * new
    return before, after


@njit
def column_move(X: Any, indptr: Any, indices: Any, data: Any, j: int, b: np.ndarray,
                step: float) -> None:
    """:func:`column_shift` without the losses (a step the bound already accepted)."""
    if indptr is None:
        if X is not None:
            for i in range(X.shape[0]):
                b[i] -= step * X[i, j]
    else:
        for k in range(indptr[j], indptr[j + 1]):
            b[indices[k]] -= step * data[k]


@njit
def newton_step(X: Any, indptr: Any, indices: Any, data: Any, j: int, C: np.ndarray,
                b: np.ndarray, w: np.ndarray, G: float, H: float,
                xj_sq: float, xj_max: float) -> None:
    """CDN's direction on ``w_j`` and its line search (module docstring), ``w_j`` and ``b``
    updated in place (columns as :func:`column_derivatives`). A direction that moves no margin
    by ``L1_CDN_D_SKIP`` (``|d| max_i |x_ij|``; LIBLINEAR's ``|d| < 1e-12``, in units that do
    not change with the features') is not taken."""
    Gp, Gn = G + 1.0, G - 1.0
    if Gp < H * w[j]:
        d = -Gp / H
    elif Gn > H * w[j]:
        d = -Gn / H
    else:
        d = -w[j]
    if abs(d) * xj_max < L1_CDN_D_SKIP:
        return
    delta = abs(w[j] + d) - abs(w[j]) + G * d
    d_old, loss_old = 0.0, 0.0
    for search in range(MAX_LINESEARCH):
        cond = abs(w[j] + d) - abs(w[j]) - SIGMA * delta
        if xj_sq * d * d + G * d + cond <= 0.0:  # the bound already proves the decrease
            column_move(X, indptr, indices, data, j, b, d - d_old)
            w[j] += d
            return
        before, after = column_shift(X, indptr, indices, data, j, C, b, d - d_old)
        if search == 0:
            loss_old = before
        if cond + after - loss_old <= 0.0:
            w[j] += d
            return
        d_old = d
        d *= 0.5
        delta *= 0.5
    column_move(X, indptr, indices, data, j, b, -d_old)  # no sufficient decrease: w_j stays


@njit
def column_size(n: int, indptr: Any, j: int) -> int:
    """The entries of column ``j`` of ``n`` rows (``indptr`` None: dense, else CSC)."""
    if indptr is None:
        return n
    return indptr[j + 1] - indptr[j]


@njit
def heavy_steps(X: Any, indptr: Any, indices: Any, data: Any, C: np.ndarray,
                xj_sq: np.ndarray, xj_max: np.ndarray, w: np.ndarray, b: np.ndarray,
                visited: np.ndarray,
                violation: np.ndarray, budget: int) -> None:
    """``HEAVY_ROUNDS`` rounds of Newton steps on the ``visited`` features of largest
    ``violation`` whose columns hold at most ``budget`` entries together (columns as
    :func:`column_derivatives`)."""
    ranked = visited[np.argsort(-violation[visited])]
    size, work = 0, 0
    while size < ranked.shape[0] and violation[ranked[size]] > 0.0:
        work += column_size(b.shape[0], indptr, ranked[size])
        if work > budget:
            break
        size += 1
    for _ in range(HEAVY_ROUNDS):
        for k in range(size):
            j = ranked[k]
            G, H = column_derivatives(X, indptr, indices, data, j, C, b)
            newton_step(X, indptr, indices, data, j, C, b, w, G,
                        max(H, L1_CDN_H_FLOOR * xj_sq[j]), xj_sq[j], xj_max[j])


@njit
def cdn_loop(X: Any, indptr: Any, indices: Any, data: Any, C: np.ndarray,
             xj_sq: np.ndarray, xj_max: np.ndarray, w: np.ndarray, b: np.ndarray,
             order: np.ndarray,
             rng: np.ndarray, state: Any, target: float, max_passes: int,
             shrinking: bool) -> tuple:
    """CDN passes (module docstring; columns as :func:`column_derivatives`) until a pass's
    gap estimate is ``<= target`` or ``max_passes``. ``w``, ``b``, ``order``, ``rng`` and
    ``state`` (a :data:`PASS_STATE` record) are updated in place (a later
    call goes on where this one stopped). Returns ``(passes, ESTIMATE_MET or MAX_ITER)``."""
    n, p = b.shape[0], w.shape[0]
    active, gmax_old, gnorm1_init, eps = state.active, state.gmax_old, state.gnorm1_init, state.eps
    violations = np.zeros(p)
    passes, met = 0, False
    while passes < max_passes and not met:
        gmax, gnorm1, umax = 0.0, 0.0, 0.0
        work = 0
        shuffle(order, active, rng)
        s = 0
        while s < active:
            j = order[s]
            G, H = column_derivatives(X, indptr, indices, data, j, C, b)
            H = max(H, L1_CDN_H_FLOOR * xj_sq[j])  # of the column's curvature: no units
            umax = max(umax, abs(G))
            if w[j] == 0.0:
                violation = max(-(G + 1.0), G - 1.0, 0.0)
                if (violation == 0.0 and shrinking and G + 1.0 > gmax_old / n
                        and G - 1.0 < -gmax_old / n):  # stays at 0: set aside
                    active -= 1
                    order[s], order[active] = order[active], order[s]
                    continue
            else:
                violation = abs(G + 1.0) if w[j] > 0.0 else abs(G - 1.0)
            gmax = max(gmax, violation)
            gnorm1 += violation
            violations[j] = violation
            work += column_size(n, indptr, j)
            newton_step(X, indptr, indices, data, j, C, b, w, G, H, xj_sq[j], xj_max[j])
            s += 1
        passes += 1
        if active >= HEAVY_MIN_FEATURES:
            heavy_steps(X, indptr, indices, data, C, xj_sq, xj_max, w, b, order[:active],
                        violations, work // HEAVY_SHARE)
        estimate = pass_estimate(C, b, w, umax)
        state.estimate = estimate
        met = estimate <= target
        if gnorm1_init < 0.0:
            gnorm1_init = gnorm1
        if gnorm1 <= eps * gnorm1_init:  # LIBLINEAR's rule: every feature back, a tighter rule
            eps /= DCD_PG_SHRINK
            active = p
            gmax_old = math.inf
            continue
        gmax_old = gmax
    state.active, state.gmax_old, state.gnorm1_init, state.eps = active, gmax_old, gnorm1_init, eps
    return passes, ESTIMATE_MET if met else MAX_ITER


@njit
def pass_estimate(C: np.ndarray, b: np.ndarray, w: np.ndarray, umax: float) -> float:
    """The certificate's relative gap (:func:`~maxmargin.certificate.certify_liblinear`) with
    ``||u||_inf`` estimated by ``umax``: ``P = ||w~||_1 + sum C_i b_{i+}^2``, ``a = 2 C b_+``,
    ``D = t S - t^2 Q / 2`` at ``S = sum a``, ``Q = sum a^2 / (2 C)``, ``t = min(1 / umax,
    S / Q)``."""
    loss, S = 0.0, 0.0
    for i in range(b.shape[0]):
        if b[i] > 0.0:
            loss += C[i] * b[i] * b[i]
            S += 2.0 * C[i] * b[i]
    primal = loss
    for j in range(w.shape[0]):
        primal += abs(w[j])
    dual = 0.0
    if S > 0.0:
        Q = 2.0 * loss
        t = S / Q
        if umax > 0.0:
            t = min(t, 1.0 / umax)
        dual = t * S - 0.5 * t * t * Q
    return (primal - dual) / max(abs(primal), TINY)


def column_rows(X: Any, s: float | None, y: np.ndarray) -> Any:
    """The signed rows ``z_i = y_i x~_i`` for column access: CSC, or Fortran-order float64
    dense, with the column ``s`` appended (none when None), written once (sparse never
    densified; ``y_i w~ . x~_i = w~ . z_i`` exactly: ``y_i`` is +-1)."""
    n, d = X.shape
    extra = 0 if s is None else 1
    if not sp.issparse(X):
        Z = np.empty((n, d + extra), dtype=np.float64, order="F")
        np.multiply(X, y[:, None], out=Z[:, :d])
        if extra:
            Z[:, d] = s * y
        return Z
    if not X.has_canonical_format:  # duplicate entries: summed on a copy
        X = X.copy()
        X.sum_duplicates()
    nnz = X.nnz + extra * n
    index = np.int32 if max(nnz, n) < np.iinfo(np.int32).max else np.int64
    indptr = np.zeros(d + extra + 1, dtype=index)
    indices, data = np.empty(nnz, dtype=index), np.empty(nnz)
    csr_to_signed_csc(X.indptr, X.indices, np.asarray(X.data, dtype=np.float64), y,
                      0.0 if s is None else float(s), indptr, indices, data)
    return sp.csc_matrix((data, indices, indptr), shape=(n, d + extra))


@njit
def csr_to_signed_csc(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                      y: np.ndarray, s: float, col_ptr: np.ndarray, col_idx: np.ndarray,
                      col_data: np.ndarray) -> None:
    """The CSC arrays of ``z_i = y_i (x_i, s)`` (no column when ``col_ptr`` has one entry
    fewer) from canonical CSR, rows sorted within each column, written in place."""
    n, p = y.shape[0], col_ptr.shape[0] - 1
    bias = indptr[n] < col_idx.shape[0]
    for k in range(indptr[n]):
        col_ptr[indices[k] + 1] += 1
    if bias:
        col_ptr[p] += n
    for j in range(p):
        col_ptr[j + 1] += col_ptr[j]
    fill = col_ptr[:p].copy()
    for i in range(n):
        for k in range(indptr[i], indptr[i + 1]):
            q = fill[indices[k]]
            col_idx[q], col_data[q] = i, data[k] * y[i]
            fill[indices[k]] += 1
        if bias:
            q = fill[p - 1]
            col_idx[q], col_data[q] = i, s * y[i]
            fill[p - 1] += 1


@njit
def column_weights(X: Any, indptr: Any, indices: Any, data: Any, C: np.ndarray,
                   p: int) -> np.ndarray:
    """``sum_i C_i x_ij^2`` of each column (columns as :func:`column_derivatives`)."""
    out = np.zeros(p)
    for j in range(p):
        if indptr is None:
            if X is not None:
                for i in range(X.shape[0]):
                    out[j] += C[i] * X[i, j] * X[i, j]
        else:
            for k in range(indptr[j], indptr[j + 1]):
                out[j] += C[indices[k]] * data[k] * data[k]
    return out


def l1_cdn(
    X: Any,
    y: Any,
    C: float = 1.0,
    *,
    intercept_scaling: float | None = 1.0,
    sample_weight: Any = None,
    tol: float = DCD_TOL,
    max_iter: int | None = None,
    random_state: Any = 0,
    shrinking: bool = True,
) -> LiblinearSolution:
    """LIBLINEAR's L1-regularised squared-hinge SVM by CDN (module docstring).

    Parameters
    ----------
    X : (n, d) array or scipy.sparse matrix
        Copied once into column-major rows (CSC, or Fortran-order dense). Not modified.
    y : (n,) array of -1/+1
    C : float > 0
    intercept_scaling : float > 0 or None
        ``s`` of the appended constant column (``b = s v``, ``v`` regularised); None fits no
        intercept.
    sample_weight : (n,) array of positive numbers, optional
        ``C_i = C sample_weight_i``.
    tol : float > 0
        The relative duality gap of the float64 certificate to reach (default 1e-3).
    max_iter : int, optional
        Cap on the passes over the features (default ``DCD_MAX_ITER``); reaching it returns
        ``status="max_iter"`` with a :class:`~maxmargin.exceptions.ConvergenceWarning`.
    random_state : int >= 0 or numpy.random.Generator
        Seeds the order of the features in each pass: the same value gives the same bits.
    shrinking : bool
        Set aside features that stay at zero (LIBLINEAR's rule).

    Returns
    -------
    LiblinearSolution
        ``w``, ``b``, ``w_tilde``, ``alpha = 2 C b_+`` (or the finish's dual point,
        :func:`support_dual`, when the certificate was evaluated there), ``status``
        (``"optimal"`` when the certificate's relative gap is ``<= tol``, else
        ``"max_iter"``), ``iterations`` (passes), ``certificate`` and ``history`` (per
        certificate: passes, estimate, gap).
    """
    start = time.perf_counter()
    if intercept_scaling is not None:
        intercept_scaling = check_positive(intercept_scaling, "intercept_scaling")
    X, y, C, box, tol, max_iter, rng, shrinking = checked_arguments(
        X, y, C, sample_weight, tol, max_iter, random_state, shrinking)
    d = X.shape[1]
    Z = column_rows(X, intercept_scaling, y)
    w, alpha, passes, trace, cert = _solve(Z, box, tol, max_iter, rng, shrinking)
    status, message = finish_status(
        gap_met(cert, tol),
        f"l1_cdn: {passes} passes (max_iter={max_iter}) left the certified relative gap at "
        f"{cert.gap:.3g} > tol={tol:g}")
    margins = np.asarray(Z @ w).ravel()
    b = 0.0 if intercept_scaling is None else intercept_scaling * float(w[d])
    return LiblinearSolution(
        w=w[:d].copy(), b=b, w_tilde=w,
        alpha=2.0 * box * np.maximum(0.0, 1.0 - margins) if alpha is None else alpha,
        primal_objective=cert.primal_objective, dual_objective=cert.dual_objective,
        status=status, iterations=passes, method="cdn/l1/squared_hinge", certificate=cert,
        loss="squared_hinge", penalty="l1", intercept_scaling=intercept_scaling, C=C, tol=tol,
        message=join_messages(message, cert.summary()), runtime=time.perf_counter() - start,
        history=history_of(("iterations", "estimate", "gap"), trace),
    )  # fmt: skip


def feature_sign(M: np.ndarray, g: np.ndarray, w: np.ndarray,
                 budget: float) -> tuple[np.ndarray, float]:
    r"""The minimiser of the model ``f(x) = g . (x - w) + ||M (x - w)||^2 / 2 + ||x||_1``
    (``M`` of full column rank) by feature-sign search (Lee, Battle, Raina and Ng, NIPS 2006),
    from ``x = w``.

    With ``q = g + M^T M (x - w)``: on the signs ``theta`` of the nonzero ``x_j`` (and of one
    zero ``x_j`` entering with ``theta_j = -sign(q_j)`` where ``|q_j| > 1``) the model is the
    quadratic whose minimiser is ``x_A - (M_A^T M_A)^{-1} (q_A + theta_A)`` (from the QR
    factor of ``M_A``: ``M^T M`` itself would square its condition number); the step there is
    cut at the point, among it and those where a weight crosses zero, of least ``f`` (so ``f``
    never rises). Ends when the nonzeros are stationary and every zero has ``|q_j| <= 1 +
    L1_FINISH_VIOLATION``, after ``FEATURE_SIGN_STEPS`` per weight, or when its factorisations
    (``rows x |A|^2`` each) would exceed ``budget``. Returns ``(x, work done)``."""
    x = w.copy()
    enter, work = -1, 0.0
    q = g  # at x = w; updated whenever x moves
    for _ in range(FEATURE_SIGN_STEPS * (x.shape[0] + 1)):
        theta = np.sign(x)
        if enter >= 0:
            theta[enter] = -np.sign(q[enter])
        A = np.flatnonzero(theta)
        if A.size:
            work += float(M.shape[0]) * A.size**2
            if work > budget:
                break
            R = np.linalg.qr(M[:, A], mode="r")
            try:
                step = -solve_triangular(R, solve_triangular(R, q[A] + theta[A], trans="T"))
            except np.linalg.LinAlgError:
                break
            here = x[A]
            target = here + step
            crossing = (here != 0.0) & (np.sign(target) != np.sign(here))
            cuts = np.concatenate(([1.0], here[crossing] / (here[crossing] - target[crossing])))
            slope, curvature = float(q[A] @ step), float(np.sum((M[:, A] @ step) ** 2))
            change = (cuts * slope + 0.5 * cuts**2 * curvature
                      + np.abs(here + cuts[:, None] * step).sum(axis=1) - np.abs(here).sum())
            pick = int(np.argmin(change))
            if not change[pick] < 0.0:  # no decrease left (round-off)
                break
            best = here + cuts[pick] * step
            best[np.flatnonzero(crossing)[cuts[1:] == cuts[pick]]] = 0.0  # the weight crossing
            x[A] = best
            q = g + M.T @ (M @ (x - w))
            if not np.array_equal(np.sign(best), theta[A]):  # cut at a crossing: solve again
                enter = -1
                continue
        violation = np.where(x == 0.0, np.abs(q) - 1.0, -np.inf)
        enter = int(np.argmax(violation))
        if violation[enter] <= L1_FINISH_VIOLATION:
            break
    return x, work


def exact_step(w: np.ndarray, d: np.ndarray, b: np.ndarray, e: np.ndarray,
               C: np.ndarray) -> float:
    r"""The ``t >= 0`` minimising the convex piecewise quadratic

    .. math::

        \phi(t) = \|w + t d\|_1 + \sum_i C_i (b_i - t e_i)_+^2 ,

    from its slope, nondecreasing and linear between the breakpoints ``-w_j / d_j`` and
    ``b_i / e_i`` (and beyond the last, where it ends positive): bisection over those finds the
    piece where it changes sign, and its line's root is clipped to the piece."""
    def slope(t: float) -> float:
        return float(d @ np.sign(w + t * d) - 2.0 * (C * e) @ np.maximum(b - t * e, 0.0))

    with np.errstate(divide="ignore", invalid="ignore"):
        points = np.concatenate((-w / d, b / e))
    points = np.unique(points[np.isfinite(points) & (points > 0.0)])
    edges = np.concatenate(([0.0], points, [math.inf]))  # piece k: [edges[k], edges[k + 1]]

    def line(k: int) -> tuple[float, float]:
        """The slope's value at the start of piece ``k`` and its rate there (affine inside)."""
        left = edges[k]
        length = edges[k + 1] - left if k + 2 < edges.shape[0] else max(1.0, left)
        t1, t2 = left + length / 3.0, left + 2.0 * length / 3.0
        s1, s2 = slope(t1), slope(t2)
        rate = (s2 - s1) / (t2 - t1)
        return s1 - rate * (t1 - left), rate

    def ends_up(k: int) -> bool:
        """Whether the slope is >= 0 at the end of piece ``k`` (the last's ends positive)."""
        if k + 2 >= edges.shape[0]:
            return True
        start, rate = line(k)
        return start + rate * (edges[k + 1] - edges[k]) >= 0.0

    lo, hi = 0, edges.shape[0] - 2  # the first piece at whose end the slope is >= 0
    while lo < hi:
        mid = (lo + hi) // 2
        if ends_up(mid):
            hi = mid
        else:
            lo = mid + 1
    start, rate = line(lo)
    if start >= 0.0 or rate <= 0.0:  # the slope jumps up at the piece's start
        return float(edges[lo])
    return float(min(edges[lo] - start / rate, edges[lo + 1]))


def weighted_block(ZW: Any, C: np.ndarray, S: np.ndarray, budget: float) -> np.ndarray | None:
    """The dense rows ``sqrt(2 C_i) z_i`` of ``S`` over the columns of ``ZW``; None when they
    would hold more than ``FINISH_MAX_ENTRIES`` floats or one factorisation, ``|S| |W|^2``,
    would exceed ``budget``."""
    size = int(np.count_nonzero(S)) * ZW.shape[1]
    if size > FINISH_MAX_ENTRIES or float(size) * ZW.shape[1] > budget:
        return None
    root = np.sqrt(2.0 * C[S])
    if sp.issparse(ZW):
        return np.asarray(ZW[S].multiply(root[:, None]).toarray())
    return ZW[S] * root[:, None]


def support_dual(Z: Any, C: np.ndarray, w: np.ndarray, budget: float) -> np.ndarray | None:
    r"""A dual point for the certificate that float64's KKT map ``a = 2 C b_+`` misses when
    ``Z`` is ill-conditioned (``b`` rounded to ``eps |z_i| |w|``, magnified by ``2 C |z_j|`` in
    ``u``): on the support ``J`` with signs ``sigma`` and ``S = {i : b_i > 0}``, the point
    nearest ``a`` (in the metric ``1 / C`` of the dual's quadratic) with ``Z_{SJ}^T a_S =
    sigma``, as optimality asks,

    .. math::

        a_S = a_S + \sqrt{2 C_S} \, v, \qquad v = \operatorname{lstsq}(K, \sigma - Z_{SJ}^T a_S),
        \quad K = (\sqrt{2 C_S} Z_{SJ})^T ,

    clipped at 0 (the certificate scales it into ``||u||_inf <= 1``). None without a support or
    when the block is too large (:func:`weighted_block`)."""
    J = np.flatnonzero(w)
    b = 1.0 - np.asarray(Z @ w).ravel()
    S = b > 0.0
    a = 2.0 * C * np.maximum(b, 0.0)
    rows = weighted_block(Z[:, J], C, S, budget) if J.size else None
    if rows is None or not rows.size:
        return None
    residual = np.sign(w[J]) - np.asarray(Z[:, J].T @ a).ravel()
    v = np.linalg.lstsq(rows.T, residual, rcond=None)[0]
    a[S] = np.maximum(a[S] + np.sqrt(2.0 * C[S]) * v, 0.0)
    return a


def support_newton(Z: Any, C: np.ndarray, w: np.ndarray) -> np.ndarray:
    r"""The finite Newton method on the support ``J`` of ``w`` with its signs ``sigma`` kept,
    on the signed rows ``z_i`` (:func:`column_rows`): on ``S = {i : w . z_i < 1}`` the
    objective is the quadratic minimised by

    .. math::

        2 Z_{SJ}^T C_S Z_{SJ} w_J = 2 Z_{SJ}^T C_S 1 - \sigma, \qquad w_{J^c} = 0,

    repeated until ``S`` stays (at most ``FINISH_STEPS``); a step is kept when it keeps the
    signs and does not raise ``P``. Returns the best point (``w`` itself when none is)."""
    J = np.flatnonzero(w)
    if J.size == 0 or J.size > FINISH_MAX_SUPPORT:
        return w
    ZJ = Z[:, J]  # a CSC slice of sparse rows, never densified
    sigma = np.sign(w[J])

    def objective(v: np.ndarray) -> tuple[float, np.ndarray]:
        slack = 1.0 - np.asarray(ZJ @ v).ravel()
        return float(np.abs(v).sum() + C @ np.maximum(slack, 0.0) ** 2), slack > 0.0

    best = w[J]
    best_value, active = objective(best)
    for _ in range(FINISH_STEPS):
        A, c = ZJ[active], C[active]
        H = A.T @ (A.multiply(c[:, None]) if sp.issparse(A) else A * c[:, None])
        H = H.toarray() if sp.issparse(H) else H
        try:
            v = np.linalg.solve(2.0 * H, 2.0 * np.asarray(A.T @ c).ravel() - sigma)
        except np.linalg.LinAlgError:  # singular: no finish
            break
        if not np.array_equal(np.sign(v), sigma):
            break
        value, new_active = objective(v)
        if value <= best_value:
            best, best_value = v, value
        if np.array_equal(new_active, active):
            break
        active = new_active
    out = np.zeros_like(w)
    out[J] = best
    return out


def proximal_newton(Z: Any, C: np.ndarray, w: np.ndarray, budget: float) -> np.ndarray:
    r"""The exact finish: proximal Newton on the working set ``W`` (the support and the
    zero weights of largest ``|u_j|``, at most ``FINISH_MAX_SUPPORT``; every feature when
    there are that few), the others held at zero, on the signed rows ``z_i``
    (:func:`column_rows`). On ``S = {i : b_i > 0}`` the loss is the quadratic with

    .. math::

        H = M^T M, \quad M = \begin{pmatrix} \sqrt{2 C_S} Z_{SW} \\ \sqrt{\nu} \end{pmatrix},
        \qquad g = -2 Z_{SW}^T C_S b_S ,

    ``nu_j`` = ``L1_FINISH_RIDGE`` times ``H_jj`` (at least ``L1_FINISH_RIDGE`` times the
    largest): positive definite when ``|S| < |W|``. Its L1 model ``g . d + ||M d||^2 / 2 +
    ||w_W + d||_1`` is minimised exactly (:func:`feature_sign`) and ``P`` along ``d``
    (:func:`exact_step`): a finite method once ``S`` and the signs settle. At most
    ``FINISH_STEPS`` steps, their factorisations within ``budget`` (:func:`weighted_block`,
    :func:`feature_sign`); stops when a step no longer lowers ``P``. Returns the new ``w``."""
    p = Z.shape[1]
    w = w.copy()
    value = math.inf
    for _ in range(FINISH_STEPS):
        b = 1.0 - np.asarray(Z @ w).ravel()
        new_value = float(np.abs(w).sum() + C @ np.maximum(b, 0.0) ** 2)
        if not new_value < value:
            break
        value = new_value
        S = b > 0.0
        if p <= FINISH_MAX_SUPPORT:
            W = np.arange(p)
        else:
            J = np.flatnonzero(w)
            if J.size >= FINISH_MAX_SUPPORT:
                break
            u = np.abs(np.asarray(Z.T @ (2.0 * C * np.maximum(b, 0.0))).ravel())
            zero = np.flatnonzero(w == 0.0)
            top = zero[np.argsort(-u[zero], kind="stable")[:FINISH_MAX_SUPPORT - J.size]]
            W = np.sort(np.concatenate((J, top)))
        ZW = Z[:, W]
        rows = weighted_block(ZW, C, S, budget)
        if rows is None:
            break
        root = np.sqrt(2.0 * C[S])
        weight = np.einsum("ij,ij->j", rows, rows)
        floor = L1_FINISH_RIDGE * max(float(np.max(weight, initial=0.0)), TINY)
        M = np.vstack((rows, np.diag(np.sqrt(L1_FINISH_RIDGE * np.maximum(weight, floor)))))
        g = -(rows.T @ (root * b[S]))
        x, work = feature_sign(M, g, w[W], budget)
        budget -= work
        d = x - w[W]
        if not np.any(d):
            break
        e = np.asarray(ZW @ d).ravel()
        t = exact_step(w[W], d, b, e, C)
        if t <= 0.0:
            break
        w[W] += t * d
    return w


def finished(Z: Any, C: np.ndarray, w: np.ndarray, tol: float, budget: float) -> tuple:
    """The exact finish from ``w`` and its certificate (rows ``z_i``, labels 1): Newton on the
    support (:func:`support_newton`, exact when its signs and rows are the optimum's), then, if
    that misses ``tol``, proximal Newton (:func:`proximal_newton`); the certificate at the
    KKT map or, when that misses ``tol``, also at :func:`support_dual`'s point. Returns ``(w,
    alpha, certificate)``, ``alpha`` None unless that point was the better; ``budget`` bounds
    the dense factorisations (:func:`weighted_block`)."""
    ones = np.ones(Z.shape[0])
    w = support_newton(Z, C, w)
    cert = certify_liblinear(w, Z, ones, C, loss="squared_hinge", penalty="l1")
    if cert.gap > tol:
        w = proximal_newton(Z, C, w, budget)
        cert = certify_liblinear(w, Z, ones, C, loss="squared_hinge", penalty="l1")
    dual = support_dual(Z, C, w, budget) if cert.gap > tol else None
    if dual is not None:
        polished = certify_liblinear(w, Z, ones, C, loss="squared_hinge", penalty="l1", alpha=dual)
        if polished.gap < cert.gap:
            return w, dual, polished
    return w, None, cert


def _solve(Z: Any, box: np.ndarray, tol: float, max_iter: int, rng: np.ndarray,
           shrinking: bool) -> tuple:
    """The passes of :func:`l1_cdn` on the signed rows ``Z`` (:func:`column_rows`; judged
    as rows ``z_i`` with labels 1) and its stop rule: ``(w~, alpha, passes, trace,
    certificate)`` (``alpha`` the finish's dual point when the certificate used it, else None).
    """
    n, p = Z.shape
    cols = (None, Z.indptr, Z.indices, Z.data) if sp.issparse(Z) else (Z, None, None, None)
    xj_sq = column_weights(*cols, box, p)
    xj_max = (abs(Z).max(axis=0).toarray().ravel() if sp.issparse(Z)
              else np.max(np.abs(Z), axis=0, initial=0.0))
    ones = np.ones(n)
    nnz = Z.nnz if sp.issparse(Z) else n * p
    w, b = np.zeros(p), np.ones(n)
    order = np.arange(p, dtype=np.int64)
    fields = np.zeros(1, PASS_STATE)
    fields["active"], fields["gmax_old"], fields["gnorm1_init"] = p, math.inf, -1.0
    fields["eps"], fields["estimate"] = L1_CDN_EPS, math.inf
    state = fields[0]  # a view: the compiled passes' writes land in it
    target, passes, check_at = tol, 0, CHECK_EVERY
    cert = certify_liblinear(w, Z, ones, box, loss="squared_hinge", penalty="l1")
    trace = [(0, math.nan, cert.gap)]  # w~ = 0: optimal when C is small enough
    alpha = None
    while cert.gap > tol and passes < max_iter:
        done, code = cdn_loop(*cols, box, xj_sq, xj_max, w, b, order, rng, state, target,
                              min(check_at, max_iter) - passes, shrinking)
        passes += done
        cert = certify_liblinear(w, Z, ones, box, loss="squared_hinge", penalty="l1")
        alpha = None
        if cert.gap > tol:
            budget = FINISH_WORK_SHARE * passes * float(nnz)
            finish, dual, judged = finished(Z, box, w, tol, budget)
            if judged.primal_objective <= cert.primal_objective:
                w[:], alpha, cert = finish, dual, judged
        b[:] = 1.0 - np.asarray(Z @ w).ravel()  # the kept b drifts
        trace.append((passes, float(state.estimate), cert.gap))
        if code == ESTIMATE_MET and cert.gap > tol:  # shrunk features or drift: look closer
            state.active, state.gmax_old = p, math.inf
            target = max(target / 2.0, tol / 2.0**TARGET_HALVINGS)
        if passes >= check_at:
            check_at *= 2
    return w, alpha, passes, trace, cert
