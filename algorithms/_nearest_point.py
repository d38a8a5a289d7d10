"""Shared machinery of the nearest-point algorithms (Gilbert in ``gilbert.py``, MDM in ``mdm.py``).

One representation serves the polytope, the hull-pair and the SVM problems. The points are the
rows ``x_i`` of one array with signs ``y_i`` (+1 for the first set ``P``, -1 for the second set
``Q``) and convex weights ``lam`` on each set (``sum_{y_i=+1} lam_i = sum_{y_i=-1} lam_i = 1``).
The iterate is the point of the Minkowski difference ``conv(P) - conv(Q)``

.. math::

    z = \\sum_i y_i \\lambda_i \\phi(x_i) = p - q,

never formed from the ``n m`` difference points: its inner products ``g_i = <z, phi(x_i)>`` give
the support point of ``P - Q`` in direction ``-z`` as ``x_j - x_k`` with
``j = argmin_{y_i=+1} g_i`` and ``k = argmax_{y_i=-1} g_i``, so that

.. math::

    \\min_{m \\in P - Q} \\langle z, m \\rangle = g_j - g_k, \\qquad
    \\text{gap} = \\|z\\|^2 - (g_j - g_k) \\ge \\|z\\|^2 - \\rho \\|z\\| \\ge 0,

the Frank-Wolfe duality gap (``rho`` = distance of the hulls). Both algorithms stop when the
relative gap ``gap / ||z||^2`` is ``<= tol``; then ``omega = (g_j - g_k) / ||z||`` is a lower
bound on ``rho`` (the hyperplane ``<z, x> = omega ||z||`` separates), so
``(1 - tol) ||z|| <= rho <= ||z||``.

The polytope problem ``min ||Q^T lam||`` is the hull pair ``(Q, {0})``: a zero point is appended
as the second set. The SVM uses ``X`` and ``y`` directly.

Linear kernel: ``z`` is kept explicitly in R^d and ``g = X z`` is one BLAS matrix-vector product per
step (exact, no drift). Other kernels: ``g`` is updated incrementally with two kernel columns
``K[:, u]``, ``K[:, v]`` per step: rows of the stored Gram matrix (``O(n)``) when it fits in
``GRAM_MAX_BYTES``, else computed from one BLAS product ``X x_u`` each (``O(n d)``). Distances
computed through a Gram matrix have an absolute resolution of about ``sqrt(eps) R``
(``R = max ||phi(x_i)||``). BLAS runs on one thread inside the loops (see
:func:`run_nearest_point`).

Hulls that intersect (distance 0) cannot meet a relative rule; the run stops with distance 0 when
``||z|| <= zero_atol`` where ``zero_atol = max(tol * S, floor)``, ``S = max_i ||phi(x_i) -
phi(x_0)||`` (translation-invariant data scale, between half and all of the diameter) and
``floor = 1e3 eps R`` (linear) or ``10 sqrt(eps) R`` (kernels). Since ``rho <= ||z||`` always,
this certifies ``rho <= zero_atol``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

import maxmargin.exceptions as exceptions
from maxmargin._jit import njit, note_compile
from maxmargin._validation import (
    check_hull_pair,
    check_max_iter,
    check_positive,
    check_positive_int,
)
from maxmargin.algorithms.active_set import finish_alpha
from maxmargin.certificate import (
    Certificate,
    certify_hulls,
    certify_infeasible,
    certify_svm,
    decision_values,
    infeasible_message,
)
from maxmargin.kernels import Kernel, LinearKernel
from maxmargin.kernels.formulas import KIND_GRAM, KIND_LINEAR
from maxmargin.kernels.qmatrix import fill_column, make_qmatrix
from maxmargin.kernels.qmatrix import kernel_value as engine_value
from maxmargin.results import HullPairSolution, SVMSolution, infeasible_svm, join_messages
from maxmargin.tolerances import HULL_CERT_FACTOR, SVM_HULL_EPS

__all__ = [
    "OPTIMAL",
    "MAX_ITER",
    "INTERSECT",
    "STALLED",
    "NearestPointRun",
    "check_common",
    "run_nearest_point",
    "solve_hull_pair",
    "svm_from_run",
    "centred",
]

#: Loop exit codes.
OPTIMAL, MAX_ITER, INTERSECT, STALLED = 0, 1, 2, 3
#: Target number of history records.
HISTORY_POINTS = 2000
#: Records per doubling of the iteration count, besides the uniform ones (see ``on_log_grid``).
LOG_GRID = 64
#: Non-linear kernels store the Gram matrix when it takes at most this many bytes (n <= 4096);
#: then a kernel column is a row read, O(n), instead of O(n d) arithmetic and n exponentials.
GRAM_MAX_BYTES = 128 * 2**20


# --------------------------------------------------------------------------------------------
# Compiled helpers. The loops pass four tuples around:
#   data  = (X, kd, y, kp, G, ke) points (the linear kernel's; a placeholder otherwise),
#                                kernel diagonal K_ii, signs, kp = (kind,)
#                                with kind 0 linear (z kept in R^d) and 1 any other kernel, the
#                                Gram matrix G (0 x 0 when not stored), and ke the kernel
#                                engine's data (maxmargin.algorithms._kernel_cache: compiled
#                                built-ins, any other kernel object called from here)
#   state = (lam, g, z, col)     weights, g_i = <z, phi(x_i)>, z (linear kernel only), a buffer
#   stop  = (tol, zero_atol, max_iter, every)
#   hist  = (hist_it, hist_gap, hist_dist)
# --------------------------------------------------------------------------------------------


@njit
def sqdist(data: tuple, u: int, v: int) -> float:
    """``||phi(x_u) - phi(x_v)||^2 = K_uu + K_vv - 2 K_uv`` (direct difference when linear)."""
    X, diag, _, kp, G, ke = data
    if G.shape[0] > 0:
        return max(G[u, u] + G[v, v] - 2.0 * G[u, v], 0.0)
    if kp[0] == 0:
        s = 0.0
        for c in range(X.shape[1]):
            diff = X[u, c] - X[v, c]
            s += diff * diff
        return s
    return max(diag[u] + diag[v] - 2.0 * engine_value(ke, u, v), 0.0)


@njit
def kernel_column(data: tuple, j: int, out: np.ndarray) -> None:
    """``out[i] = K(x_i, x_j)``: row ``j`` of the stored Gram matrix, one BLAS product ``X x_j``
    (linear), else a column of the kernel engine."""
    X, _, _, kp, G, ke = data
    if G.shape[0] > 0:
        row = G[j]
        for i in range(out.shape[0]):  # a loop: a slice assignment compiles Numba's string code
            out[i] = row[i]
    elif kp[0] == 0:
        np.dot(X, X[j], out)
    else:
        fill_column(ke, j, np.int64(0), out.shape[0], out)  # ke.y = 1: K; int64: not a literal


@njit
def engine_gram(ke: Any, n: int) -> np.ndarray:
    """The ``n x n`` Gram matrix from the kernel engine's columns (compiled kernels only)."""
    G = np.empty((n, n))
    for j in range(n):
        fill_column(ke, j, np.int64(0), n, G[j])
    return G


@njit
def move(data: tuple, state: tuple, a: float, b: float, u: int, v: int) -> None:
    """The step ``z <- a z + b (phi(x_u) - phi(x_v))`` and ``g_i = <z, phi(x_i)>`` with it.

    Linear kernel: update ``z`` in R^d and recompute ``g = X z`` (one BLAS product, no drift).
    Otherwise ``g <- a g + b (K[:, u] - K[:, v])`` with two kernel columns.
    """
    X, _, _, kp, _, _ = data
    _, g, z, col = state
    if kp[0] == 0:
        for c in range(X.shape[1]):
            z[c] = a * z[c] + b * (X[u, c] - X[v, c])
        np.dot(X, z, g)
        return
    kernel_column(data, u, col)
    for i in range(g.shape[0]):
        g[i] = a * g[i] + b * col[i]
    kernel_column(data, v, col)
    for i in range(g.shape[0]):
        g[i] -= b * col[i]


@njit
def scan(y: np.ndarray, lam: np.ndarray, g: np.ndarray) -> tuple:
    """Toward and away vertices of both sets in one pass.

    Returns ``(fp, fq, ap, aq)``: ``fp = argmin_{y=+1} g`` and ``fq = argmax_{y=-1} g`` (the
    support point ``x_fp - x_fq`` of ``P - Q`` in direction ``-z``), ``ap = argmax g`` over the
    active (``lam > 0``) points of ``P`` and ``aq = argmin g`` over the active points of ``Q``.
    """
    fp = fq = ap = aq = -1
    for i in range(y.shape[0]):
        if y[i] > 0:
            if fp < 0 or g[i] < g[fp]:
                fp = i
            if lam[i] > 0.0 and (ap < 0 or g[i] > g[ap]):
                ap = i
        else:
            if fq < 0 or g[i] > g[fq]:
                fq = i
            if lam[i] > 0.0 and (aq < 0 or g[i] < g[aq]):
                aq = i
    return fp, fq, ap, aq


@njit
def on_log_grid(it: int) -> bool:
    """Every ``it < LOG_GRID``, then ``LOG_GRID`` evenly spaced records per doubling of ``it``.

    At most ``LOG_GRID * (log2(max_iter) + 1)`` records in all.
    """
    if it < LOG_GRID:
        return True
    octave = 1
    while 2 * octave <= it:
        octave *= 2
    return it % (octave // LOG_GRID) == 0


@njit
def examine(it: int, data: tuple, state: tuple, stop: tuple, hist: tuple, n_hist: int) -> tuple:
    """The top of iteration ``it``: vertices, stopping tests and the bounded history.

    ``||z||^2`` is ``z . z`` (linear) or ``sum_i y_i lam_i g_i``; ``lower = g_fp - g_fq`` is
    ``min_{m in P-Q} <z, m>`` and ``gap = ||z||^2 - lower``. Code ``INTERSECT`` (2) if
    ``||z|| <= zero_atol``, ``OPTIMAL`` (0) if ``gap <= tol ||z||^2``, ``MAX_ITER`` (1) if
    ``it == max_iter``, else -1 (go on). ``(it, gap / ||z||^2, ||z||)`` is recorded when ``it``
    is a multiple of ``every``, on :func:`on_log_grid` (so log-scale plots see the early
    iterations too) and at the end.

    Returns ``(code, n_hist, fp, fq, ap, aq, zz)`` (see :func:`scan`).
    """
    _, _, y, kp, _, _ = data
    lam, g, z, _ = state
    tol, zero_atol, max_iter, every = stop
    fp, fq, ap, aq = scan(y, lam, g)
    zz = 0.0
    if kp[0] == 0:
        for c in range(z.shape[0]):
            zz += z[c] * z[c]
    else:
        for i in range(g.shape[0]):
            zz += y[i] * lam[i] * g[i]
    f = math.sqrt(max(zz, 0.0))
    gap = zz - (g[fp] - g[fq])
    code = -1
    if f <= zero_atol:
        code = 2
    elif gap <= tol * zz:
        code = 0
    elif it >= max_iter:
        code = 1
    if it % every == 0 or code >= 0 or on_log_grid(it):
        hist[0][n_hist] = it
        hist[1][n_hist] = gap / zz if zz > 0.0 else np.nan
        hist[2][n_hist] = f
        n_hist += 1
    return code, n_hist, fp, fq, ap, aq, zz


@njit
def start(data: tuple, state: tuple) -> None:
    """Start at a vertex pair: ``a`` = first point of ``Q``, ``j`` = the point of ``P`` nearest
    to ``x_a``, ``k`` = the point of ``Q`` nearest to ``x_j`` (all distances through ``K``).

    For the polytope (``Q = {0}``) this is the seed's start: the vertex nearest the origin.
    Sets ``lam = e_j + e_k``, ``z = phi(x_j) - phi(x_k)`` and ``g``.
    """
    _, kd, y, _, _, _ = data
    lam, g, z, col = state
    a = 0
    while y[a] > 0:
        a += 1
    nearest = np.array([-1, -1])  # j in P, then k in Q
    for side in range(2):
        kernel_column(data, a, col)
        best = np.inf
        for i in range(y.shape[0]):
            if (y[i] > 0) == (side == 0):
                d2 = kd[i] - 2.0 * col[i]
                if d2 < best:
                    best, nearest[side] = d2, i
        a = nearest[0]
    lam[:] = 0.0
    lam[nearest[0]] = 1.0
    lam[nearest[1]] = 1.0
    z[:] = 0.0
    g[:] = 0.0
    move(data, state, 0.0, 1.0, nearest[0], nearest[1])


# --------------------------------------------------------------------------------------------
# Python driver
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NearestPointRun:
    """The raw outcome of a nearest-point loop, with ``g`` recomputed exactly from ``lam``.

    ``zz = ||z||^2``, ``lower = min_{m in P-Q} <z, m>``, ``gap = (zz - lower) / zz``.
    """

    lam: np.ndarray
    g: np.ndarray
    zz: float
    lower: float
    gap: float
    code: int
    iterations: int
    history: dict[str, np.ndarray]
    message: str
    runtime: float
    zero_atol: float


@functools.cache
def _blas() -> ThreadpoolController:
    """The process's thread pools, found once (a fresh search is slow next to a step)."""
    return ThreadpoolController()


def check_common(tol: Any, max_iter: Any, history_every: Any, default_iter: int) -> tuple:
    """Validate ``tol > 0``, ``max_iter`` (None -> ``default_iter``) and ``history_every``
    (None -> ``ceil(max_iter / 2000)``, so at most about 2000 records)."""
    tol = check_positive(tol, "tol")
    max_iter = check_max_iter(max_iter, default=default_iter)
    if history_every is None:
        every = max(1, -(-max_iter // HISTORY_POINTS))
    else:
        every = check_positive_int(history_every, "history_every")
    return tol, max_iter, every


def exact_g(X: np.ndarray, y: np.ndarray, lam: np.ndarray, kernel: Kernel) -> np.ndarray:
    """``g_i = <z, phi(x_i)> = sum_j y_j lam_j K(x_j, x_i)`` from scratch (row blocks)."""
    S = np.flatnonzero(lam)
    return decision_values(kernel, X, X[S], y[S] * lam[S])


def run_nearest_point(
    loop: Callable,
    X: np.ndarray,
    y: np.ndarray,
    kernel: Kernel,
    tol: float,
    max_iter: int,
    every: int,
    hull_eps: float = 0.0,
    gram: bool = True,
) -> NearestPointRun:
    """Run a compiled nearest-point ``loop`` (Gilbert or MDM) on validated data.

    ``loop(data, state, stop, hist) -> (iterations, code, n_hist)`` (tuples described above),
    starting from :func:`start`. ``hull_eps > 0`` (the SVM) raises the zero tolerance to
    ``hull_eps R``: hulls provably that close leave no margin the SVM can certify.
    """
    t0 = time.perf_counter()
    linear = kernel.kind == KIND_LINEAR and isinstance(X, np.ndarray)
    kp = (0,) if linear else (1,)
    n = X.shape[0]
    d = X.shape[1] if linear else 1
    # the engine's columns K(., x_j) (labels 1: Q = K); a placeholder for the linear kernel
    ke = make_qmatrix(kernel, X if not linear else X[:1], np.ones(n if not linear else 1))
    points = X if linear else np.zeros((n, 1))
    diag = kernel.diag(X)
    R = math.sqrt(max(float(diag.max()), 0.0))
    spread = diag + diag[0] - 2.0 * kernel.column(X, 0)
    scale = math.sqrt(max(float(spread.max()), 0.0))
    eps = float(np.finfo(float).eps)
    floor = 1e3 * eps * R if linear else 10.0 * math.sqrt(eps) * R
    zero_atol = max(tol * scale, floor, hull_eps * R)

    lam, g, col = np.zeros(n), np.zeros(n), np.zeros(n)
    z = np.zeros(d)
    size = max_iter // every + 2 + LOG_GRID * (max_iter.bit_length() + 1)
    hist_it = np.zeros(size, dtype=np.int64)
    hist_gap, hist_dist = np.zeros(size), np.zeros(size)
    G = np.zeros((0, 0))
    if ke.kind == KIND_GRAM:  # the Q-matrix holds this kernel's Gram matrix already
        G = ke.G
    elif gram and kp[0] != 0 and 8 * n * n <= GRAM_MAX_BYTES:
        G = engine_gram(ke, n)  # from the compiled columns (vectorised exponential)
    data, state = (points, diag, y, kp, G, ke), (lam, g, z, col)
    # One BLAS thread: a threaded gemv of this size spends more on synchronisation than it
    # saves on matrices of this size, and far more when the other core is busy.
    note_compile(loop, f"the nearest-point loop ({loop.__name__})", "several seconds of CPU")
    with _blas().limit(limits=1, user_api="blas"):
        start(data, state)
        iterations, code, n_hist = loop(
            data, state, (tol, zero_atol, max_iter, every), (hist_it, hist_gap, hist_dist)
        )

    g = exact_g(X, y, lam, kernel)
    zz = float(np.dot(y * lam, g))
    lower = float(g[y > 0].min() - g[y < 0].max())
    gap = (zz - lower) / zz if zz > 0 else math.nan
    dist = math.sqrt(max(zz, 0.0))
    if code == INTERSECT:
        message = (
            f"the hulls are within the zero tolerance: ||p - q|| = {dist:.3g} <= "
            f"{zero_atol:.3g} (distance reported as 0)"
        )
    elif code == MAX_ITER:
        message = f"max_iter={max_iter} reached at relative gap {gap:.3g} > tol={tol:.3g}"
        if lower <= 0:
            message += "; the lower bound min <z, m> <= 0 does not show the hulls are apart"
    elif code == STALLED:
        message = f"no descent step left at relative gap {gap:.3g} (round-off); stopped"
    else:
        message = ""
    history = {
        "iteration": hist_it[:n_hist].copy(),
        "gap": hist_gap[:n_hist].copy(),
        "distance": hist_dist[:n_hist].copy(),
    }
    return NearestPointRun(
        lam=lam, g=g, zz=zz, lower=lower, gap=gap, code=int(code), iterations=int(iterations),
        history=history, message=message, runtime=time.perf_counter() - t0, zero_atol=zero_atol,
    )  # fmt: skip


def status_of(
    run: NearestPointRun, name: str, *, intersect: str = "optimal", stacklevel: int = 4,
    warn: bool = True,
) -> str:
    """Map a loop code to a status (warning ``ConvergenceWarning`` at ``max_iter`` if ``warn``;
    ``stacklevel`` 4 points at the caller of a public function that calls a helper that calls
    this)."""
    if run.code == MAX_ITER:
        if warn:
            warnings.warn(f"{name}: {run.message}", exceptions.ConvergenceWarning,
                          stacklevel=stacklevel)
        return "max_iter"
    if run.code == STALLED:
        return "inaccurate"
    if run.code == INTERSECT:
        return intersect
    return "optimal"


def solve_hull_pair(
    loop: Callable,
    method: str,
    P: Any,
    Q: Any,
    tol: Any,
    max_iter: Any,
    history_every: Any,
    default_iter: int,
) -> HullPairSolution:
    """Validate, run ``loop`` on ``rows of P`` (+1) and ``rows of Q`` (-1), build the solution.

    ``p = P^T lam_P``, ``q = Q^T lam_Q``, ``distance = ||p - q||`` (0 when the hulls intersect).
    """
    P, Q = check_hull_pair(P, Q)
    tol, max_iter, every = check_common(tol, max_iter, history_every, default_iter)
    X = np.vstack([P, Q])
    X -= X.mean(axis=0)  # the pair's distance is the centred pair's (resolutions from the mean)
    y = np.concatenate([np.ones(P.shape[0]), -np.ones(Q.shape[0])])
    run = run_nearest_point(loop, X, y, LinearKernel(), tol, max_iter, every)
    status = status_of(run, method)
    wp, wq = run.lam[: P.shape[0]], run.lam[P.shape[0] :]
    p, q = P.T @ wp, Q.T @ wq
    distance = 0.0 if run.code == INTERSECT else float(np.linalg.norm(p - q))
    cert = certify_hulls(P, Q, wp, wq)
    if run.code != INTERSECT:
        status = _confirmed(status, cert.meets(HULL_CERT_FACTOR * tol), method, cert.summary())
    message = join_messages(run.message, cert.summary())
    return HullPairSolution(
        weights_p=wp, weights_q=wq, p=p, q=q, distance=distance, status=status,
        iterations=run.iterations, method=method, history=run.history, gap=run.gap,
        message=message, runtime=run.runtime, certificate=cert,
    )  # fmt: skip


def _confirmed(status: str, certified: bool, method: str, summary: str) -> str:
    """An ``"optimal"`` stop the float64 certificate does not confirm becomes ``"inaccurate"``
    (with a :class:`ConvergenceWarning`); any other status is kept."""
    if status != "optimal" or certified:
        return status
    warnings.warn(f"{method}: the float64 certificate does not confirm the stop: {summary}",
                  exceptions.ConvergenceWarning, stacklevel=4)
    return "inaccurate"


def infeasible_solution(
    X: np.ndarray, y: np.ndarray, kernel: Kernel, method: str, weights: np.ndarray,
    message: str = "", iterations: int = 0, history: dict[str, np.ndarray] | None = None,
    runtime: float = 0.0,
) -> SVMSolution:
    """The hard-margin answer on non-separable data (:func:`~maxmargin.results.infeasible_svm`),
    with the convex ``weights`` found as the evidence
    (:func:`~maxmargin.certificate.certify_infeasible`)."""
    cert = certify_infeasible(weights, X, y, kernel)
    if not message:
        message = infeasible_message(cert, SVM_HULL_EPS)
    return infeasible_svm(X, y, kernel, method, message, cert, iterations=iterations,
                          history=history, runtime=runtime)


def centred(X: Any, kernel: Kernel) -> tuple[Any, np.ndarray | None]:
    """``(X - mean, mean)`` for dense data and the linear kernel, else ``(X, None)``.

    The hull distance and the SVM do not change under a translation of the data, and for the
    linear kernel neither do ``z = p - q`` nor ``w`` (``b`` shifts by ``-<w, mean>``): run on
    centred data, the methods' resolutions (``zero_atol``, ``SVM_HULL_EPS R``) are measured
    from the data's centre, not from an origin the data may lie far from. Translation-invariant
    kernels (rbf: ``K(x, x) = 1``) need nothing; other kernels (poly, sigmoid, callables) are
    not translation-invariant and keep the user's origin.
    """
    if kernel.kind != KIND_LINEAR or not isinstance(X, np.ndarray):
        return X, None
    mean = X.mean(axis=0)
    return X - mean, mean


def svm_from_run(
    run: NearestPointRun, X: np.ndarray, y: np.ndarray, kernel: Kernel, method: str, tol: float,
    finish: bool = True, X_user: np.ndarray | None = None, mean: np.ndarray | None = None,
) -> SVMSolution:
    """The hard-margin SVM from the nearest points ``p``, ``q`` of the two classes' hulls.

    With ``d = p - q`` (``||d||^2 = zz``), ``w = 2 d / ||d||^2``,
    ``b = (||q||^2 - ||p||^2) / ||d||^2 = -<d, p + q> / ||d||^2 = -(sum_i lam_i g_i) / zz`` and
    ``alpha_i = 2 lam_i / ||d||^2``. Intersecting hulls give status ``"infeasible"`` with NaN
    ``alpha``/``b``/``w`` and infinite objectives (the hard-margin primal is infeasible, its dual
    unbounded). The float64 certificate (:func:`maxmargin.certificate.certify_svm`, hard margin)
    must confirm an ``"optimal"`` stop: functional margin ``mu > 0`` and weak-duality gap
    ``<= HULL_CERT_FACTOR * tol``. With ``finish``, a run that is not confirmed (stopped or
    at ``max_iter``) is finished by the active-set method from its alpha
    (:func:`~maxmargin.algorithms.active_set.finish_alpha`), kept when it meets that
    certificate; otherwise a stop is ``"inaccurate"`` (with a warning). A run at ``max_iter``
    whose answer the certificate confirms as it is is ``"optimal"``, as ``smo``'s is: the
    certificate, not the method's own gap, says what is optimal.

    ``primal_objective`` is the certificate's ``||w||^2 / (2 mu^2)``, the value of the feasible
    primal point ``w / mu`` (``mu`` the largest functional margin ``w`` reaches; ``inf`` when
    ``mu <= 0``), never ``||w||^2 / 2`` of a ``w`` whose margins are below 1: only a feasible
    point's value bounds the optimum from above. ``X_user``: the user's data when ``X`` is
    their copy centred on ``mean`` (linear kernel, :func:`centred`); the run, the finish and
    the certificate use ``X`` (the same classifier, translated), the answer is the user's:
    ``X_train = X_user`` and ``b`` (and the certificate's ``b``) shifted by ``-<w, mean>``.
    """
    status = status_of(run, method, intersect="infeasible", warn=False)
    X_out = X if X_user is None else X_user
    if status == "infeasible":
        return infeasible_solution(X_out, y, kernel, method, run.lam, "", run.iterations,
                                   run.history, run.runtime)
    alpha = 2.0 * run.lam / run.zz
    b = -float(np.dot(run.lam, run.g)) / run.zz
    wx = 2.0 * run.g / run.zz  # <w, phi(x_i)>
    cert = certify_svm(alpha, X, y, None, kernel, g=wx)

    def accept(c: Certificate) -> bool:
        return c.margin > 0 and c.gap <= HULL_CERT_FACTOR * tol

    ok, message = accept(cert), run.message
    if finish and not ok and status in ("optimal", "max_iter") and np.all(np.isfinite(alpha)):
        done = finish_alpha(alpha, X, y, None, kernel, accept)  # the exact finish, as in smo
        if done is not None:
            alpha, wx, cert, b = done.alpha, done.g, done.certificate, done.certificate.b
            ok, status = True, "optimal"
            message = join_messages(message, (
                f"finished exactly by the active-set method (from {done.n_free} free alphas)"))
    if status == "max_iter" and ok:  # the cap cut the method's own gap short, not the answer
        status = "optimal"
        message = join_messages(message, "the float64 certificate confirms the answer as it is")
    quad = float(np.dot(alpha * y, wx))  # alpha^T Q alpha = ||w||^2
    w = X.T @ (alpha * y) if kernel.kind == KIND_LINEAR else None
    if X_user is not None:  # f(x) = <w, x - mean> + b = <w, x> + (b - <w, mean>)
        shift = float(w @ mean)
        b -= shift
        cert = dataclasses.replace(cert, b=cert.b - shift)
    if status == "max_iter":
        warnings.warn(f"{method}: {run.message}", exceptions.ConvergenceWarning, stacklevel=3)
    status = _confirmed(status, ok, method, cert.summary())
    return SVMSolution(
        alpha=alpha, b=b, w=w, dual_objective=float(alpha.sum()) - 0.5 * quad,
        primal_objective=cert.primal_objective, status=status, iterations=run.iterations,
        method=method, history=run.history, X_train=X_out, y_train=y, kernel=kernel, C=None,
        b_interval=(b, b),
        message=join_messages(message, cert.summary()), runtime=run.runtime,
        certificate=cert, tol=tol,
    )  # fmt: skip
