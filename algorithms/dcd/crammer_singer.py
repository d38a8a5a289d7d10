r"""``cs_dcd``: Crammer and Singer's multi-class linear SVM (LIBLINEAR's ``-s 4``,
``LinearSVC(multi_class="crammer_singer")``) by the sequential dual method of Keerthi et al.
(KDD 2008), certified in float64.

Over the rows ``x~_i = (x_i, s)`` (``s = intercept_scaling``; ``x_i`` alone without an
intercept) and LIBLINEAR's dual variables ``alpha_i^m = C_i [m = y_i] - lambda_i^m``
(:mod:`maxmargin.certificate_multiclass`), the dual is

.. math::

    \min_\alpha \tfrac12 \sum_m \|w_m\|^2 - \sum_i \alpha_i^{y_i}, \quad
    w_m = \sum_i \alpha_i^m \tilde x_i, \quad
    \sum_m \alpha_i^m = 0, \quad \alpha_i^m \le C_i [m = y_i].

Keeping ``W`` (one row of ``K`` class weights per feature), the step on sample ``i`` solves its
``K``-variable sub-problem exactly: with ``A = ||x~_i||^2`` and the gradient ``G_m = w_m .
x~_i + [m != y_i]``, ``alpha_i^m <- min(U_m, (beta - B_m) / A)``, ``B_m = G_m - A alpha_i^m``,
``U_m = C_i [m = y_i]``, where ``beta`` solves ``sum_m alpha_i^m = 0`` (found by sorting ``D_m
= B_m + A U_m``: :func:`sub_problem`); then ``W`` moves by the row's non-zeros times the
changed classes. The sub-problem is optimal when ``max_m G_m - min_{m: alpha_i^m < U_m} G_m``
is below ``eps``; a class stuck at its bound with ``G_m`` below that minimum is shrunk (set
aside), a sample left with one class too, until a pass's largest violation falls below
``eps_shrink`` (then all return and ``eps_shrink`` halves, down to ``eps``: LIBLINEAR's rule).

``W`` is recomputed from ``alpha`` (``O(nnz K)``) after ``DCD_FIRST_CHECK`` passes, at each
doubling, and whenever the passes meet ``eps``, and the relative duality gap ``(P(W) -
D(alpha)) / P(W)`` is evaluated; while it exceeds ``tol``, ``eps`` is divided by
``DCD_PG_SHRINK`` and the exact finish (:mod:`.cs_finish`, on small supports) is tried, kept
when certified. The answer is judged by
:func:`~maxmargin.certificate_multiclass.certify_crammer_singer` with ``lambda`` from
``alpha``: ``"optimal"`` only when its relative gap is at most ``tol``.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from maxmargin._jit import njit
from maxmargin._validation import (
    check_array,
    check_class_indices,
    check_positive,
    check_positive_int,
)
from maxmargin.algorithms.dcd.api import (
    DCD_FIRST_CHECK,
    checked_settings,
    finish_status,
    gap_met,
    history_of,
)
from maxmargin.algorithms.dcd.cs_finish import cs_finish
from maxmargin.algorithms.dcd.loop import (
    CONVERGED,
    MAX_ITER,
    row_layout,
    shuffle,
)
from maxmargin.certificate import TINY, Certificate
from maxmargin.certificate_multiclass import certify_crammer_singer
from maxmargin.results import MulticlassSolution, join_messages
from maxmargin.tolerances import DCD_PG_SHRINK, DCD_PG_SKIP, DCD_PG_TOL, DCD_TOL

__all__ = ["cs_dcd", "cs_passes", "sub_problem", "cs_weights", "cs_gap", "PASS_STATE",
           "CS_FINISH_WORK"]

#: The exact finish (:mod:`.cs_finish`) may spend this many times the passes' work so far.
CS_FINISH_WORK = 2.0


#: The passes' state carried from one call to the next, as one record.
PASS_STATE = np.dtype((np.record, [
    ("active", np.int64),  # samples not set aside
    ("eps_shrink", np.float64),  # the shrinking rule's threshold (halved down to eps)
    ("from_all", np.bool_),  # the last pass started with every sample and class active
]))


@njit
def sub_problem(A: float, B: np.ndarray, k: int, y_at: int, C: float, D: np.ndarray,
                new: np.ndarray) -> None:
    """The exact minimiser of ``A/2 ||a||^2 + B . a`` over the ``k`` active classes, ``a_m <=
    U_m`` (``U = C`` at position ``y_at``, the true class, or -1 when it is set aside at ``C``;
    else 0), ``sum_m a_m = -C [y_at < 0]``: ``new[m] = min(U_m, (beta - B_m) / A)`` with
    ``beta = (sum_{r' < r} D_(r') - A C) / r`` over the ``r`` largest ``D_m = B_m + A U_m``,
    ``r`` the least for which ``beta >= D_(r)``."""
    for m in range(k):
        D[m] = B[m]
    if y_at >= 0:
        D[y_at] += A * C
    for m in range(1, k):  # insertion sort, descending (k is small)
        v, j = D[m], m - 1
        while j >= 0 and D[j] < v:
            D[j + 1] = D[j]
            j -= 1
        D[j + 1] = v
    total, r = D[0] - A * C, 1
    while r < k and total < r * D[r]:
        total += D[r]
        r += 1
    beta = total / r
    for m in range(k):
        upper = C if m == y_at else 0.0
        new[m] = min(upper, (beta - B[m]) / A)


@njit
def add_scores(X: Any, indptr: Any, indices: Any, data: Any, s: float, i: int, W: np.ndarray,
               cls: np.ndarray, k: int, G: np.ndarray) -> None:
    """``G[m] += x~_i . W[:, cls[m]]`` for ``m < k`` (``W[-1]`` the bias row; rows as
    :func:`~maxmargin.algorithms.dcd.loop.row_dot`: dense ``X`` when ``indptr`` is None), one
    class at a time into a local sum."""
    d = W.shape[0] - 1
    for m in range(k):
        c = cls[m]
        total = s * W[d, c]
        if indptr is None:
            if X is not None:
                for j in range(d):
                    total += X[i, j] * W[j, c]
        else:
            for t in range(indptr[i], indptr[i + 1]):
                total += data[t] * W[indices[t], c]
        G[m] += total


@njit
def add_row(X: Any, indptr: Any, indices: Any, data: Any, s: float, i: int, W: np.ndarray,
            cls: np.ndarray, delta: np.ndarray, k: int) -> None:
    """``W[:, cls[m]] += delta[m] x~_i`` for ``m < k`` (rows as :func:`add_scores`)."""
    d = W.shape[0] - 1
    for m in range(k):
        c, step = cls[m], delta[m]
        W[d, c] += s * step
        if indptr is None:
            if X is not None:
                for j in range(d):
                    W[j, c] += step * X[i, j]
        else:
            for t in range(indptr[i], indptr[i + 1]):
                W[indices[t], c] += step * data[t]


@njit
def cs_passes(rows: tuple, y: np.ndarray, box: np.ndarray, QD: np.ndarray, alpha: np.ndarray,
              W: np.ndarray, order: np.ndarray, rng: np.ndarray, classes: np.ndarray,
              n_cls: np.ndarray, state: Any, eps: float, max_passes: int,
              shrinking: bool) -> tuple:
    """The sequential dual passes (module docstring) until a pass that started with every sample
    and class active has ``max_i (max G - min G) < eps``, or ``max_passes``. ``alpha`` (``(n,
    K)``), ``W`` (``(p, K)``, bias row last), ``order``, ``rng``, the active classes
    ``classes[i, :n_cls[i]]`` and ``state`` (a :data:`PASS_STATE` record: the active samples,
    ``eps_shrink``, whether the pass started with all) are updated in place (a later call goes
    on where this one stopped). Returns ``(passes, CONVERGED or MAX_ITER)``."""
    X, indptr, indices, data, s_col = rows
    n, K = alpha.shape
    G, B, D = np.empty(K), np.empty(K), np.empty(K)
    new, delta = np.empty(K), np.empty(K)
    moved = np.empty(K, dtype=np.int64)
    active, eps_shrink, from_all = state.active, state.eps_shrink, state.from_all
    passes, converged = 0, False
    while passes < max_passes and not converged:
        worst = -math.inf
        shuffle(order, active, rng)
        t = 0
        while t < active:
            i = order[t]
            A = QD[i]
            if A <= 0.0:  # a zero row: its alpha was set once (no class can move W)
                t += 1
                continue
            cls, k, yi = classes[i], n_cls[i], y[i]
            for m in range(k):
                G[m] = 0.0 if cls[m] == yi else 1.0
            add_scores(X, indptr, indices, data, s_col, i, W, cls, k, G)
            g_min, g_max = math.inf, -math.inf
            for m in range(k):
                upper = box[i] if cls[m] == yi else 0.0
                if alpha[i, cls[m]] < upper and G[m] < g_min:
                    g_min = G[m]
                g_max = max(g_max, G[m])
            if shrinking:
                m = 0
                while m < k:  # at its bound, wanting to rise past every movable class
                    upper = box[i] if cls[m] == yi else 0.0
                    if alpha[i, cls[m]] == upper and G[m] < g_min:
                        k -= 1
                        cls[m], cls[k] = cls[k], cls[m]
                        G[m], G[k] = G[k], G[m]
                    else:
                        m += 1
                n_cls[i] = k
                if k <= 1:  # nothing left to move: set the sample aside
                    active -= 1
                    order[t], order[active] = order[active], order[t]
                    continue
            t += 1
            if g_max - g_min <= DCD_PG_SKIP:
                continue
            worst = max(worst, g_max - g_min)
            y_at = np.int64(-1)
            for m in range(k):
                B[m] = G[m] - A * alpha[i, cls[m]]
                if cls[m] == yi:
                    y_at = m
            sub_problem(A, B, k, y_at, box[i], D, new)
            changed = np.int64(0)
            for m in range(k):
                step = new[m] - alpha[i, cls[m]]
                alpha[i, cls[m]] = new[m]
                if step != 0.0:  # every move reaches W (a size test would not scale with C)
                    moved[changed], delta[changed] = cls[m], step
                    changed += 1
            add_row(X, indptr, indices, data, s_col, i, W, moved, delta, changed)
        passes += 1
        if worst < eps_shrink:
            converged = worst < eps and from_all
            active = n  # every sample and class back, the rule tightened
            n_cls[:] = K
            eps_shrink = max(0.5 * eps_shrink, eps)
            from_all = True
        else:
            from_all = False
    state.active, state.eps_shrink, state.from_all = active, eps_shrink, from_all
    return passes, CONVERGED if converged else MAX_ITER


def cs_weights(X: Any, alpha: np.ndarray, s: float) -> np.ndarray:
    """``W = X~^T alpha`` as ``(p, K)`` (bias row ``s sum_i alpha_i`` last), float64, O(nnz
    K)."""
    W = np.asarray(X.T @ alpha, dtype=np.float64)
    return np.vstack([W, s * alpha.sum(axis=0)[None, :]])


def cs_gap(X: Any, y: np.ndarray, alpha: np.ndarray, W: np.ndarray, s: float,
           box: np.ndarray) -> float:
    """``(P(W) - D(alpha)) / max(|P|, tiny)`` with ``D(alpha) = sum_i alpha_i^{y_i} - 1/2
    ||W||^2`` (module docstring; ``W = W(alpha)``), O(nnz K)."""
    n = y.shape[0]
    S = np.asarray(X @ W[:-1], dtype=np.float64) + s * W[-1]
    own = S[np.arange(n), y]
    E = S - own[:, None] + 1.0
    E[np.arange(n), y] = 0.0
    ww = float(np.sum(W * W))
    primal = 0.5 * ww + float(box @ E.max(axis=1))
    dual = float(alpha[np.arange(n), y].sum()) - 0.5 * ww
    return (primal - dual) / max(abs(primal), TINY)


def _checked(X: Any, y: Any, C: Any, n_classes: Any, intercept_scaling: Any,
             sample_weight: Any, tol: Any, max_iter: Any, random_state: Any,
             shrinking: Any) -> tuple:
    """The validated arguments of :func:`cs_dcd`, before any work."""
    X = check_array(X, "X", ndim=2, copy=False, sparse=True)
    if n_classes is not None:
        n_classes = check_positive_int(n_classes, "n_classes", minimum=2)
    y = check_class_indices(y, X.shape[0], n_classes)
    K = int(y.max()) + 1 if n_classes is None else n_classes
    s = 0.0 if intercept_scaling is None else check_positive(intercept_scaling,
                                                             "intercept_scaling")
    C, box, tol, max_iter, rng, shrinking = checked_settings(
        y, C, sample_weight, tol, max_iter, random_state, shrinking)
    return X, y, K, C, s, box, tol, max_iter, rng, shrinking


def cs_dcd(
    X: Any,
    y: Any,
    C: float = 1.0,
    *,
    n_classes: int | None = None,
    intercept_scaling: float | None = 1.0,
    sample_weight: Any = None,
    tol: float = DCD_TOL,
    max_iter: int | None = None,
    random_state: Any = 0,
    shrinking: bool = True,
) -> MulticlassSolution:
    """Crammer and Singer's multi-class linear SVM by the sequential dual method (module
    docstring).

    Parameters
    ----------
    X : (n, d) array or scipy.sparse matrix
        Dense rows are read as a C-contiguous float64 array, sparse ones as CSR (never
        densified). Not modified.
    y : (n,) array of class indices ``0 .. K-1``
    C : float > 0
    n_classes : int >= 2, optional
        ``K`` (default ``max(y) + 1``).
    intercept_scaling : float > 0 or None
        The value ``s`` of the appended constant column (``b_m = s v_m``, ``v`` regularised);
        None fits no intercept.
    sample_weight : (n,) array of non-negative numbers, optional
        ``C_i = C sample_weight_i`` (``class_weight`` enters here too).
    tol : float > 0
        The relative duality gap of the float64 certificate to reach (default
        ``DCD_TOL = 1e-3``).
    max_iter : int, optional
        Cap on the passes over the data (default :data:`DCD_MAX_ITER`); reaching it returns
        ``status="max_iter"`` with a :class:`~maxmargin.exceptions.ConvergenceWarning`.
    random_state : int >= 0 or numpy.random.Generator
        Seeds the order of the samples in each pass: the same value gives the same bits.
    shrinking : bool
        Set aside classes (and samples) that stay at their bound (LIBLINEAR's rule).

    Returns
    -------
    MulticlassSolution
        ``W`` (``(K, d)``), ``b``, ``alpha`` (``(n, K)``), ``status`` (``"optimal"`` when the
        certificate's relative gap is ``<= tol``, else ``"max_iter"``), ``iterations``
        (passes), ``certificate`` and ``history`` (passes, ``eps`` and gap at each check).
    """
    start = time.perf_counter()
    X, y, K, C, s, box, tol, max_iter, rng, shrinking = _checked(
        X, y, C, n_classes, intercept_scaling, sample_weight, tol, max_iter, random_state,
        shrinking)
    n, d = X.shape

    def judge(W: np.ndarray, alpha: np.ndarray) -> Certificate:
        """:func:`certify_crammer_singer` of ``W`` (``(p, K)``) with ``lambda`` from
        ``alpha``."""
        lam = -alpha
        lam[np.arange(n), y] += box
        Wt = W.T if intercept_scaling is not None else W[:d].T
        return certify_crammer_singer(Wt, X, y, box, lam=np.maximum(lam, 0.0),
                                      intercept_scaling=intercept_scaling)

    rows, norms = row_layout(X, s)
    QD = norms + s * s
    alpha = np.zeros((n, K))
    zero = np.flatnonzero(QD <= 0.0)  # a zero row's optimum: lambda_i on the other classes
    alpha[zero] = -box[zero, None] / (K - 1)
    alpha[zero, y[zero]] = box[zero]
    W = np.zeros((d + 1, K))
    order = np.arange(n, dtype=np.int64)
    classes = np.tile(np.arange(K, dtype=np.int64), (n, 1))
    n_cls = np.full(n, K, dtype=np.int64)
    fields = np.zeros(1, PASS_STATE)
    fields["active"], fields["from_all"] = n, True
    fields["eps_shrink"] = max(10.0 * DCD_PG_TOL, 1.0)
    state = fields[0]  # a view: the compiled passes' writes land in it
    eps, passes, check_at = DCD_PG_TOL, 0, DCD_FIRST_CHECK
    trace: list[tuple[int, float, float]] = []
    nnz = X.nnz if hasattr(X, "nnz") else X.size
    cert, finished = None, -1
    while True:
        done, code = cs_passes(rows, y, box, QD, alpha, W, order, rng, classes, n_cls, state,
                               eps, np.int64(min(check_at, max_iter) - passes),
                               np.bool_(shrinking))
        passes += done
        W = cs_weights(X, alpha, s)  # the kept one drifts
        gap = cs_gap(X, y, alpha, W, s, box)
        if gap > tol:  # the passes crawl: the exact finish, kept when it is certified
            done_alpha = cs_finish(X, s, y, box, alpha, CS_FINISH_WORK * passes * nnz * K)
            if done_alpha is not None:
                W_done = cs_weights(X, done_alpha, s)
                if cs_gap(X, y, done_alpha, W_done, s, box) <= tol:
                    done_cert = judge(W_done, done_alpha)
                    if gap_met(done_cert, tol):
                        alpha, W, cert, finished = done_alpha, W_done, done_cert, passes
                        trace.append((passes, eps, done_cert.gap))
                        break
        trace.append((passes, eps, gap))
        if gap <= tol:
            cert = judge(W, alpha)
            if gap_met(cert, tol):
                break
        if passes >= max_iter:
            break
        if code == CONVERGED or gap <= tol:  # the rule is met but not the certificate
            eps /= DCD_PG_SHRINK
        if passes >= check_at:
            check_at = 2 * passes
    cert = judge(W, alpha) if cert is None else cert
    status, message = finish_status(
        gap_met(cert, tol),
        f"cs_dcd: {passes} passes (max_iter={max_iter}) left the certified relative gap at "
        f"{cert.gap:.3g} > tol={tol:g}")
    if finished >= 0:
        message = join_messages(message, "finished exactly by the active-set method after "
                                f"{finished} passes")
    W_tilde = np.ascontiguousarray(W.T if intercept_scaling is not None else W[:d].T)
    b = np.zeros(K) if intercept_scaling is None else s * W[d]
    return MulticlassSolution(
        W=np.ascontiguousarray(W[:d].T), b=b, W_tilde=W_tilde, alpha=alpha,
        primal_objective=cert.primal_objective, dual_objective=cert.dual_objective,
        status=status, iterations=passes, method="cs_dcd", certificate=cert,
        intercept_scaling=intercept_scaling, C=C, tol=tol,
        message=join_messages(message, cert.summary()), runtime=time.perf_counter() - start,
        history=history_of(("iterations", "eps", "gap"), trace),
    )  # fmt: skip
