"""Dual coordinate descent for LIBLINEAR's linear SVM (Hsieh et al., ICML 2008).

The problem (``LinearSVC``'s, LIBLINEAR's ``-s 3`` hinge and ``-s 1`` squared hinge) is over
the rows ``x~_i = (x_i, s)``, ``s = intercept_scaling`` (the bias weight regularised like the
others; ``x~_i = x_i`` without an intercept):

.. math::

    \\min_{\\tilde w} \\tfrac12 \\|\\tilde w\\|^2
        + \\sum_i C_i \\,\\ell(y_i \\tilde w \\cdot \\tilde x_i),
    \\qquad
    \\min_{\\alpha} \\tfrac12 \\alpha^T \\bar Q \\alpha - e^T \\alpha,
    \\quad 0 \\le \\alpha_i \\le U_i,

with ``Q~_ij = y_i y_j x~_i . x~_j + D_ii [i = j]``: hinge ``D_ii = 0``, ``U_i = C_i``; squared
hinge ``D_ii = 1 / (2 C_i)``, ``U_i = inf``. Keeping ``w~ = sum_i alpha_i y_i x~_i``, the
coordinate step on ``alpha_i`` costs the non-zeros of one row:

.. math::

    G = y_i \\tilde w \\cdot \\tilde x_i - 1 + D_{ii} \\alpha_i, \\qquad
    \\alpha_i \\leftarrow \\min(\\max(\\alpha_i - G / \\bar Q_{ii}, 0), U_i), \\qquad
    \\tilde w \\leftarrow \\tilde w + (\\alpha_i^{new} - \\alpha_i^{old}) y_i \\tilde x_i .

Each pass visits the active samples in a random order (a permutation drawn from a generator
seeded by ``random_state``); samples whose projected gradient ``PG`` lies beyond the previous
pass's ``[PGmin, PGmax]`` at a bound are shrunk (set aside), and the pass loop stops when
``PGmax - PGmin <= eps`` over all samples (LIBLINEAR's rule). Then ``w~`` is recomputed from
``alpha`` (the kept one drifts) and the duality gap ``(P(w~) - D(alpha)) / |P|`` is evaluated
in O(nnz); if it exceeds ``tol``, ``eps`` is divided by ``DCD_PG_SHRINK`` and the passes go
on. The gap is also checked after ``DCD_FIRST_CHECK`` passes and at each doubling of the
passes, so that a rule slower than the gap costs at most twice the passes the gap needed.
The answer is judged by :func:`~maxmargin.certificate.certify_liblinear`: ``"optimal"`` only
when its relative gap is at most ``tol``.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from maxmargin import exceptions
from maxmargin._jit import njit
from maxmargin._validation import (
    check_array,
    check_bool,
    check_C,
    check_choice,
    check_max_iter,
    check_positive,
    check_positive_int,
    check_sample_weight,
    check_Xy,
)
from maxmargin.certificate import (
    LIBLINEAR_LOSSES,
    TINY,
    Certificate,
    certify_liblinear,
    certify_svm,
    liblinear_rows,
)
from maxmargin.kernels import LinearKernel
from maxmargin.results import LiblinearSolution, SVMSolution, join_messages, recover_intercept
from maxmargin.tolerances import (
    DCD_PG_SHRINK,
    DCD_PG_TOL,
    DCD_SVC_EPS,
    DCD_SVC_SCALING,
    DCD_TOL,
    SMO_TOL,
)

__all__ = ["dcd", "dcd_svc", "dcd_loop", "balanced", "DCD_MAX_ITER"]

#: Default cap on the passes over the data (LIBLINEAR's is 1000; the hinge at a tight ``tol``
#: may need more).
DCD_MAX_ITER = 10_000
#: The values of ``dcd``'s ``solver``.
DCD_SOLVERS = ("auto", "dual", "primal")
#: The gap is also checked after this many passes, then at each doubling of the passes.
DCD_FIRST_CHECK = 10
#: Loop outcomes.
CONVERGED, MAX_ITER = 0, 1
#: A coordinate whose projected gradient is below this is not moved (LIBLINEAR's 1e-12).
PG_SKIP = 1e-12


@njit
def next_random(rng: np.ndarray) -> np.uint64:
    """SplitMix64: the next 64 random bits of the state ``rng[0]``."""
    rng[0] += np.uint64(0x9E3779B97F4A7C15)
    z = rng[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit
def shuffle(order: np.ndarray, active: int, rng: np.ndarray) -> None:
    """Fisher-Yates on ``order[:active]``."""
    for k in range(active - 1):
        j = k + np.int64(next_random(rng) % np.uint64(active - k))
        order[k], order[j] = order[j], order[k]


@njit
def row_dot(rows: tuple, i: int, w: np.ndarray) -> float:
    """``x~_i . w`` (``rows = (X, indptr, indices, data, s)``; dense when ``indptr`` is
    empty; ``w[-1]`` is the bias weight, ``s = 0`` without an intercept)."""
    X, indptr, indices, data, s = rows
    d = w.shape[0] - 1
    total = s * w[d]
    if indptr.shape[0] == 0:
        for j in range(d):
            total += X[i, j] * w[j]
    else:
        for k in range(indptr[i], indptr[i + 1]):
            total += data[k] * w[indices[k]]
    return total


@njit
def row_axpy(rows: tuple, i: int, step: float, w: np.ndarray) -> None:
    """``w += step * x~_i``."""
    X, indptr, indices, data, s = rows
    d = w.shape[0] - 1
    w[d] += step * s
    if indptr.shape[0] == 0:
        for j in range(d):
            w[j] += step * X[i, j]
    else:
        for k in range(indptr[i], indptr[i + 1]):
            w[indices[k]] += step * data[k]


@njit
def dcd_loop(rows: tuple, y: np.ndarray, upper: np.ndarray, diag: np.ndarray, QD: np.ndarray,
             alpha: np.ndarray, w: np.ndarray, order: np.ndarray, rng: np.ndarray,
             shrunk: np.ndarray, eps: float, max_passes: int, shrinking: bool,
             offset: float = 0.0) -> tuple:
    """LIBLINEAR's ``solve_l2r_l1l2_svc`` passes (module docstring), on the margins
    ``y_i (w~ . x~_i + offset)`` (a fixed unregularised bias; 0 for LIBLINEAR), until
    ``PGmax - PGmin <= eps`` over all samples or ``max_passes``. ``alpha``, ``w``, ``order``,
    ``rng`` and the shrinking state ``shrunk = (active, PGmax_old, PGmin_old)`` are updated in
    place (a later call goes on where this one stopped). Returns ``(passes, CONVERGED or
    MAX_ITER)``."""
    n = y.shape[0]
    active, pg_max_old, pg_min_old = int(shrunk[0]), shrunk[1], shrunk[2]
    passes, converged = 0, False
    while passes < max_passes and not converged:
        pg_max, pg_min = -math.inf, math.inf
        shuffle(order, active, rng)
        s = 0
        while s < active:
            i = order[s]
            G = y[i] * (row_dot(rows, i, w) + offset) - 1.0 + diag[i] * alpha[i]
            if alpha[i] == 0.0:
                if shrinking and G > pg_max_old:  # stays at 0: set aside
                    active -= 1
                    order[s], order[active] = order[active], order[s]
                    continue
                PG = min(G, 0.0)
            elif alpha[i] == upper[i]:
                if shrinking and G < pg_min_old:  # stays at U: set aside
                    active -= 1
                    order[s], order[active] = order[active], order[s]
                    continue
                PG = max(G, 0.0)
            else:
                PG = G
            pg_max = max(pg_max, PG)
            pg_min = min(pg_min, PG)
            if abs(PG) > PG_SKIP:
                old = alpha[i]
                alpha[i] = min(max(old - G / QD[i], 0.0), upper[i])
                row_axpy(rows, i, (alpha[i] - old) * y[i], w)
            s += 1
        passes += 1
        if pg_max - pg_min <= eps:
            converged = active == n
            active = n  # check the set-aside samples too, from scratch
            pg_max_old, pg_min_old = math.inf, -math.inf
            continue
        pg_max_old = pg_max if pg_max > 0.0 else math.inf
        pg_min_old = pg_min if pg_min < 0.0 else -math.inf
    shrunk[0], shrunk[1], shrunk[2] = active, pg_max_old, pg_min_old
    return passes, CONVERGED if converged else MAX_ITER


def _weights(X: Any, y: np.ndarray, alpha: np.ndarray, s: float) -> np.ndarray:
    """``w~ = sum_i alpha_i y_i x~_i`` in float64, O(nnz) (bias weight last; 0 when ``s``
    is 0)."""
    v = alpha * y
    return np.append(np.asarray(X.T @ v, dtype=np.float64).ravel(), s * float(v.sum()))


def duality_gap(X: Any, y: np.ndarray, alpha: np.ndarray, w: np.ndarray, s: float,
                box: np.ndarray, squared: bool, u: np.ndarray | None = None) -> float:
    """``(P(w~) - D(alpha)) / max(|P|, tiny)`` with ``D(alpha) = sum alpha - 1/2 ||u||^2
    - sum alpha_i^2 / (4 C_i)`` (squared hinge), ``u = sum_i alpha_i y_i x~_i`` (``w~`` when
    not given), O(nnz)."""
    margins = y * (np.asarray(X @ w[:-1]).ravel() + s * w[-1])
    slack = np.maximum(0.0, 1.0 - margins)
    ww = float(w @ w)
    uu = ww if u is None else float(u @ u)
    if squared:
        primal = 0.5 * ww + float(box @ (slack * slack))
        dual = float(alpha.sum()) - 0.5 * uu - float(alpha @ (alpha / (4.0 * box)))
    else:
        primal = 0.5 * ww + float(box @ slack)
        dual = float(alpha.sum()) - 0.5 * uu
    return (primal - dual) / max(abs(primal), TINY)


def _rows_times(X: Any, s: float, v: np.ndarray) -> np.ndarray:
    """``x~_i . v`` for every row, O(nnz)."""
    return np.asarray(X @ v[:-1], dtype=np.float64).ravel() + s * v[-1]


def newton_step(X: Any, y: np.ndarray, s: float, w: np.ndarray, grad: np.ndarray,
                curv: np.ndarray, forcing: float) -> np.ndarray:
    """The Newton direction ``d`` of the squared hinge: ``(I + X~^T diag(curv) X~) d =
    -grad`` (``curv_i = 2 C_i`` on the samples below the margin, else 0) by conjugate
    gradients to ``||r|| <= forcing ||grad||``, each product O(nnz)."""

    def hess(v: np.ndarray) -> np.ndarray:
        return v + _weights(X, np.ones_like(y), curv * _rows_times(X, s, v), s)

    d = np.zeros_like(w)
    r = -grad
    p, rr = r.copy(), float(r @ r)
    stop = (forcing * math.sqrt(rr)) ** 2
    for _ in range(w.shape[0]):
        if rr <= stop:
            break
        Hp = hess(p)
        step = rr / float(p @ Hp)
        d += step * p
        r -= step * Hp
        rr, rr_old = float(r @ r), rr
        p = r + (rr / rr_old) * p
    return d


def exact_line_search(w: np.ndarray, d: np.ndarray, margins: np.ndarray, delta: np.ndarray,
                      box: np.ndarray) -> float:
    """The ``t`` minimising ``phi(t) = 1/2 ||w + t d||^2 + sum_i C_i (1 - m_i - t delta_i)_+^2``
    (convex, piecewise quadratic): the root of its increasing piecewise-linear derivative
    by Newton's steps safeguarded by bisection of a bracket."""
    wd, dd = float(w @ d), float(d @ d)

    def slope(t: float) -> tuple[float, float]:
        low = margins + t * delta < 1.0
        c = 2.0 * box[low] * delta[low]
        return wd + t * dd - float(c @ (1.0 - margins[low] - t * delta[low])), dd + float(
            c @ delta[low])

    lo, hi, t = 0.0, math.inf, 1.0
    for _ in range(100):
        value, curvature = slope(t)
        if value == 0.0:
            return t
        lo, hi = (t, hi) if value < 0 else (lo, t)
        new = t - value / curvature
        if not lo < new < hi:
            new = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * t
        if abs(new - t) <= 1e-15 * max(1.0, t):
            return new
        t = new
    return t


@dataclass
class Coordinates:
    """The state of the coordinate descent on one problem: the rows (``(X, indptr, indices,
    data, s)``, :func:`row_dot`), the box ``upper``, ``diag = D_ii``, ``QD = Q~_ii``, ``alpha``,
    ``w`` (``w~``, bias weight last), the visiting ``order``, the generator ``rng`` and the
    shrinking state ``shrunk`` (:func:`dcd_loop`)."""

    X: Any
    y: np.ndarray
    s: float
    rows: tuple
    upper: np.ndarray
    diag: np.ndarray
    QD: np.ndarray
    alpha: np.ndarray
    w: np.ndarray
    order: np.ndarray
    rng: np.ndarray
    shrunk: np.ndarray
    shrinking: bool

    @classmethod
    def start(cls, X: Any, y: np.ndarray, box: np.ndarray, squared: bool, s: float,
              rng: np.ndarray, shrinking: bool) -> Coordinates:
        """``alpha = 0``, ``w~ = 0`` on validated rows (CSR or C-contiguous float64)."""
        n, d = X.shape
        diag = 0.5 / box if squared else np.zeros(n)
        if hasattr(X, "tocsr"):
            norms = np.asarray(X.multiply(X).sum(axis=1)).ravel()
            rows = (np.empty((0, 0)), X.indptr, X.indices, X.data, s)
        else:
            norms = np.einsum("ij,ij->i", X, X)
            empty = np.empty(0, dtype=np.int32)
            rows = (X, empty, empty, np.empty(0), s)
        QD = diag + norms + s * s
        QD[QD <= 0.0] = TINY  # hinge, a zero row without intercept: one step puts it on C_i
        return cls(X, y, s, rows, np.full(n, math.inf) if squared else box, diag, QD,
                   np.zeros(n), np.zeros(d + 1), np.arange(n, dtype=np.int64), rng,
                   np.array([n, math.inf, -math.inf]), shrinking)

    def passes(self, eps: float, budget: int, offset: float = 0.0) -> tuple[int, int]:
        """:func:`dcd_loop` for at most ``budget`` passes, then ``w~`` recomputed from
        ``alpha`` (the kept one drifts). Returns ``(passes, code)``."""
        done, code = dcd_loop(self.rows, self.y, self.upper, self.diag, self.QD, self.alpha,
                              self.w, self.order, self.rng, self.shrunk, eps, budget,
                              self.shrinking, offset)
        self.w[:] = _weights(self.X, self.y, self.alpha, self.s)
        return done, code

    def unshrink(self) -> None:
        """Every sample active again (the problem changed)."""
        self.shrunk[:] = (self.y.shape[0], math.inf, -math.inf)


def _seed(random_state: Any) -> np.ndarray:
    """The SplitMix64 state drawn from ``np.random.default_rng(random_state)`` (an int >= 0
    or a ``numpy.random.Generator``)."""
    if not isinstance(random_state, np.random.Generator):
        random_state = check_positive_int(random_state, "random_state", minimum=0)
    rng = np.random.default_rng(random_state)
    return np.array([rng.integers(0, 2**63 - 1, dtype=np.int64)], dtype=np.uint64)


def primal_newton(X: Any, y: np.ndarray, box: np.ndarray, s: float, tol: float,
                  max_iter: int) -> tuple[np.ndarray, np.ndarray, int, list[tuple]]:
    """The squared hinge's primal by the finite Newton method (Keerthi and DeCoste 2005;
    LIBLINEAR's ``-s 2`` uses trust-region Newton): from ``w~ = 0``, the generalised Newton
    direction on the samples below the margin (:func:`newton_step`) and an exact line search
    (:func:`exact_line_search`), until the duality gap at the KKT map ``alpha = 2 C (1 -
    m)_+`` is at most ``tol``. Returns ``(w~, alpha, steps, trace)``."""
    w = np.zeros(X.shape[1] + 1)
    trace: list[tuple] = []
    steps = 0
    while True:
        margins = y * _rows_times(X, s, w)
        alpha = 2.0 * box * np.maximum(0.0, 1.0 - margins)
        u = _weights(X, y, alpha, s)
        gap = duality_gap(X, y, alpha, w, s, box, True, u)
        trace.append((steps, math.nan, gap))
        if gap <= tol or steps >= max_iter:
            return w, alpha, steps, trace
        curv = np.where(margins < 1.0, 2.0 * box, 0.0)
        d = newton_step(X, y, s, w, w - u, curv, min(0.1, math.sqrt(max(gap, 0.0))))
        w = w + exact_line_search(w, d, margins, y * _rows_times(X, s, d), box) * d
        steps += 1


def _status(met: bool, cause: str) -> tuple[str, str]:
    """``("optimal", "")`` when the certificate met the tolerance, else ``("max_iter",
    message)`` with a :class:`~maxmargin.exceptions.ConvergenceWarning` (cause and remedy)."""
    if met:
        return "optimal", ""
    message = (f"{cause}; raise `max_iter`, loosen `tol`, or rescale the features / lower C "
               "(coordinate descent slows as C max ||x||^2 grows).")
    warnings.warn(message, exceptions.ConvergenceWarning, stacklevel=3)
    return "max_iter", message


def _history(names: tuple[str, ...], trace: list[tuple]) -> dict[str, np.ndarray]:
    """The columns of ``trace`` (one tuple per check) by name."""
    return {name: np.array(column) for name, column in
            zip(names, zip(*trace, strict=True), strict=True)}


def _checked(X: Any, y: Any, C: Any, sample_weight: Any, tol: Any, max_iter: Any,
             random_state: Any, shrinking: Any) -> tuple:
    """The validated common arguments: ``(X, y, C, box, tol, max_iter, rng, shrinking)``
    with ``X`` CSR or C-contiguous float64 (the caller's own when it already is) and
    ``box = C sample_weight``."""
    X, y = check_Xy(X, y, points=lambda v, name: check_array(v, name, ndim=2, copy=False,
                                                             sparse=True))
    C = check_C(C, allow_none=False)
    sw = check_sample_weight(sample_weight, y)
    box = np.full(y.shape[0], C) if sw is None else C * sw
    tol = check_positive(tol, "tol")
    max_iter = check_max_iter(max_iter, default=DCD_MAX_ITER)
    return X, y, C, box, tol, max_iter, _seed(random_state), check_bool(shrinking, "shrinking")


def dcd(
    X: Any,
    y: Any,
    C: float = 1.0,
    *,
    loss: str = "squared_hinge",
    intercept_scaling: float | None = 1.0,
    sample_weight: Any = None,
    tol: float = DCD_TOL,
    max_iter: int | None = None,
    random_state: Any = 0,
    shrinking: bool = True,
    solver: str = "auto",
) -> LiblinearSolution:
    """LIBLINEAR's L2-regularised linear SVM by dual coordinate descent (module docstring).

    Parameters
    ----------
    X : (n, d) array or scipy.sparse matrix
        Dense rows are read as a C-contiguous float64 array, sparse ones as CSR (never
        densified). Not modified.
    y : (n,) array of -1/+1
    C : float > 0
    loss : {"squared_hinge", "hinge"}
        LIBLINEAR's ``-s 1`` and ``-s 3`` (``LinearSVC``'s ``loss``).
    intercept_scaling : float > 0 or None
        The value ``s`` of the appended constant column (``b = s v``, ``v`` regularised);
        None fits no intercept.
    sample_weight : (n,) array of positive numbers, optional
        ``C_i = C sample_weight_i``.
    tol : float > 0
        The relative duality gap of the float64 certificate to reach (default
        ``DCD_TOL = 1e-3``; 1e-6 for interior-point agreement).
    max_iter : int, optional
        Cap on the passes over the data (default :data:`DCD_MAX_ITER`); reaching it returns
        ``status="max_iter"`` with a :class:`~maxmargin.exceptions.ConvergenceWarning`.
    random_state : int >= 0 or numpy.random.Generator
        Seeds the order of the samples in each pass: the same value gives the same bits.
    shrinking : bool
        Set aside samples that stay at a bound (LIBLINEAR's ``PGmax``/``PGmin`` rule).
    solver : {"auto", "dual", "primal"}
        ``"dual"``: the coordinate descent; ``"primal"`` (squared hinge only): the finite
        Newton method (:func:`primal_newton`; ``max_iter`` caps its steps); ``"auto"``: the
        primal for the squared hinge when ``n > d`` (as ``LinearSVC(dual="auto")``), else
        the dual. ``method`` says which ran.

    Returns
    -------
    LiblinearSolution
        ``w``, ``b``, ``alpha``, ``status`` (``"optimal"`` when the certificate's relative gap
        is ``<= tol``, else ``"max_iter"``), ``iterations`` (passes) and ``certificate``.
    """
    start = time.perf_counter()
    check_choice(loss, "loss", LIBLINEAR_LOSSES)
    check_choice(solver, "solver", DCD_SOLVERS)
    if solver == "primal" and loss == "hinge":
        raise ValueError("`solver`: 'primal' takes loss='squared_hinge' only; got "
                         "loss='hinge'.")
    s = 0.0 if intercept_scaling is None else check_positive(intercept_scaling,
                                                             "intercept_scaling")
    X, y, C, box, tol, max_iter, rng, shrinking = _checked(
        X, y, C, sample_weight, tol, max_iter, random_state, shrinking)
    n, d = X.shape
    squared = loss == "squared_hinge"
    primal = solver == "primal" or (solver == "auto" and squared and n > d)
    if primal:
        w, alpha, passes, trace = primal_newton(X, y, box, s, tol, max_iter)
    else:
        w, alpha, passes, trace = _dual(X, y, box, squared, s, rng, shrinking, tol, max_iter)
    w_tilde = w if intercept_scaling is not None else w[:d].copy()
    cert = certify_liblinear(w_tilde, liblinear_rows(X, intercept_scaling), y, box,
                             loss=loss, penalty="l2", alpha=alpha, margin_fits=False)
    what = "Newton steps" if primal else "passes"
    status, message = _status(
        math.isfinite(cert.gap) and cert.gap <= tol,
        f"dcd: {passes} {what} (max_iter={max_iter}) left the certified relative gap at "
        f"{cert.gap:.3g} > tol={tol:g}")
    b = 0.0 if intercept_scaling is None else s * float(w[d])
    return LiblinearSolution(
        w=w[:d].copy(), b=b, w_tilde=w_tilde, alpha=alpha,
        primal_objective=cert.primal_objective, dual_objective=cert.dual_objective,
        status=status, iterations=passes,
        method=f"{'newton' if primal else 'dcd'}/{loss}", certificate=cert, loss=loss,
        penalty="l2", intercept_scaling=intercept_scaling, C=C, tol=tol,
        message=join_messages(message, cert.summary()), runtime=time.perf_counter() - start,
        history=_history(("iterations", "eps", "gap"), trace),
    )  # fmt: skip


def _dual(X: Any, y: np.ndarray, box: np.ndarray, squared: bool, s: float, rng: np.ndarray,
          shrinking: bool, tol: float, max_iter: int) -> tuple:
    """The dual coordinate descent of :func:`dcd` (module docstring): ``(w~, alpha, passes,
    trace)``."""
    run = Coordinates.start(X, y, box, squared, s, rng, shrinking)
    alpha, w = run.alpha, run.w
    eps, passes, check_at = DCD_PG_TOL, 0, DCD_FIRST_CHECK
    trace: list[tuple[int, float, float]] = []
    while True:
        done, code = run.passes(eps, min(check_at, max_iter) - passes)
        passes += done
        gap = duality_gap(X, y, alpha, w, s, box, squared)
        trace.append((passes, eps, gap))
        if gap <= tol or passes >= max_iter:
            break
        if code == CONVERGED:  # the PG rule is met but not the gap: a tighter rule
            eps /= DCD_PG_SHRINK
        else:  # the passes between checks ran out: check half as often
            check_at = 2 * passes
    return w, alpha, passes, trace


def balanced(alpha: np.ndarray, y: np.ndarray, box: np.ndarray) -> np.ndarray:
    """``alpha`` moved onto ``y . alpha = 0`` inside the box, changing the free alphas
    (``0 < alpha_i < C_i``) only, each in proportion to its room in the direction that
    lowers ``|y . alpha|``; when their room is short, the class of the larger sum is scaled
    down as well. Bounded alphas stay on their bounds (KKT-consistent)."""
    a = alpha.copy()
    excess = float(y @ a)
    if excess == 0.0:
        return a
    sign = 1.0 if excess > 0 else -1.0
    free = (a > 0.0) & (a < box)
    down = free & (y == sign)  # lowering these lowers |y . alpha|
    up = free & (y == -sign)  # raising these too
    room = np.where(down, a, np.where(up, box - a, 0.0))
    total = float(room.sum())
    t = min(1.0, abs(excess) / total) if total > 0.0 else 0.0
    a[down] -= t * room[down]
    a[up] += t * room[up]
    a = np.clip(a, 0.0, box)
    if total >= abs(excess):  # balanced to round-off
        return a
    pos, neg = y > 0, y < 0  # the room is short: scale the larger class down
    sum_p, sum_n = float(a[pos].sum()), float(a[neg].sum())
    if sum_p > sum_n:
        a[pos] *= sum_n / sum_p
    elif sum_n > sum_p:
        a[neg] *= sum_p / sum_n
    return a


def _certify_svc(X: Any, y: np.ndarray, alpha: np.ndarray, box: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, Certificate]:
    """``(a, w, g, certificate)`` of ``a = balanced(alpha, y, box)`` in SVC's problem, O(nnz +
    n log n) (:func:`~maxmargin.certificate.certify_svm`, linear kernel)."""
    a = balanced(alpha, y, box)
    w = np.asarray(X.T @ (a * y), dtype=np.float64).ravel()
    g = np.asarray(X @ w, dtype=np.float64).ravel()
    return a, w, g, certify_svm(a, X, y, box, LinearKernel(), g=g)


def dcd_svc(
    X: Any,
    y: Any,
    C: float = 1.0,
    *,
    sample_weight: Any = None,
    tol: float = SMO_TOL,
    max_iter: int | None = None,
    random_state: Any = 0,
    shrinking: bool = True,
) -> SVMSolution:
    """SVC's linear problem (hinge loss, unregularised bias: what ``smo(kernel="linear")``
    solves) by dual coordinate descent over a search on the bias.

    The constraint ``y . alpha = 0`` of SVC's dual is kept by the method of multipliers: with
    the multiplier ``b`` and the penalty ``rho / 2 (y . alpha)^2``, ``rho = s^2``, the inner
    problem is LIBLINEAR's hinge problem with the bias column ``s`` (:func:`dcd_loop`) on the
    margins ``y_i (w . x_i + s v + b)``, ``s v = rho y . alpha``; each inner solve is
    warm-started from the last ``alpha`` and followed by the update ``b <- b + rho y . alpha``
    (the inner problem's whole bias). Its tolerance ``eps`` starts at ``DCD_PG_TOL`` and is
    divided by ``DCD_PG_SHRINK`` after each solve, down to ``DCD_SVC_EPS * tol``. After each
    solve ``alpha`` is moved onto ``y . alpha = 0`` (:func:`balanced`) and judged by
    :func:`~maxmargin.certificate.certify_svm`; the run stops when it meets ``tol``
    (``m - M < tol``, as ``smo``).

    Parameters
    ----------
    X, y, C, sample_weight, random_state, shrinking
        As :func:`dcd`.
    tol : float > 0
        ``m - M`` (LIBSVM's maximal violation, float64) to reach (default ``SMO_TOL``).
    max_iter : int, optional
        Cap on all passes over the data (default :data:`DCD_MAX_ITER`); reaching it returns
        ``status="max_iter"`` with a :class:`~maxmargin.exceptions.ConvergenceWarning`.

    Returns
    -------
    SVMSolution
        ``method="dcd_svc"``; ``iterations`` counts the passes; ``history`` the multiplier
        ``b``, ``y . alpha`` and the certificate's ``m - M`` after each inner solve.
    """
    start = time.perf_counter()
    X, y, C, box, tol, max_iter, rng, shrinking = _checked(
        X, y, C, sample_weight, tol, max_iter, random_state, shrinking)
    s = DCD_SVC_SCALING
    run = Coordinates.start(X, y, box, False, s, rng, shrinking)
    b, eps, floor, passes = 0.0, DCD_PG_TOL, DCD_SVC_EPS * tol, 0
    trace: list[tuple[float, float, float]] = []
    while True:
        run.unshrink()  # the offset moved: every sample may violate again
        done, code = run.passes(eps, max_iter - passes, offset=b)
        passes += done
        step = s * float(run.w[-1])  # rho (y . alpha), rho = s^2
        a, w, g, cert = _certify_svc(X, y, run.alpha, box)
        trace.append((b, step / (s * s), cert.kkt_violation))
        if cert.meets(tol) or passes >= max_iter:
            break
        if eps <= floor and abs(step) <= 4 * np.finfo(float).eps * max(1.0, abs(b)):
            floor /= DCD_PG_SHRINK  # b is found to round-off: the inner solves go tighter
        eps = max(eps / DCD_PG_SHRINK, floor)
        b += step  # the multiplier update
    status, message = _status(
        cert.meets(tol),
        f"dcd_svc stopped at max_iter={max_iter} passes with m - M = "
        f"{cert.kkt_violation:.3g} >= tol = {tol:g} (float64)")
    b_fit, interval = recover_intercept(a, y, g, box)
    margins = y * (g + b_fit)
    return SVMSolution(
        alpha=a, b=b_fit, w=w, dual_objective=cert.dual_objective,
        primal_objective=0.5 * float(w @ w) + float(box @ np.maximum(0.0, 1.0 - margins)),
        status=status, iterations=passes, method="dcd_svc",
        history=_history(("b", "y_alpha", "kkt"), trace),
        X_train=X, y_train=y, kernel=LinearKernel(), C=C, b_interval=interval,
        message=join_messages(message, cert.summary()), runtime=time.perf_counter() - start,
        certificate=cert, sample_weight=None if sample_weight is None else box / C, tol=tol,
    )  # fmt: skip
