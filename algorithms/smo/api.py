"""The public entry point :func:`smo`: validate, build the solver, run the policy, report."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from maxmargin._threads import check_n_jobs
from maxmargin._validation import (
    check_bool,
    check_C,
    check_choice,
    check_max_iter,
    check_positive,
    check_positive_int,
    check_sample_weight,
    check_Xy,
)
from maxmargin.algorithms._kernel_cache import block_size
from maxmargin.algorithms.smo.precision import PRECISIONS, first_precision, solve_certified
from maxmargin.algorithms.smo.result import make_result
from maxmargin.algorithms.smo.routing import (
    dcd_pays,
    dcd_settings,
    far_from_origin,
    solve_by_dcd,
)
from maxmargin.algorithms.smo.solver import Options, Problem, Solver
from maxmargin.algorithms.smo.state import new_state
from maxmargin.kernels import Kernel, make_kernel, own_points, precomputed
from maxmargin.kernels.formulas import KIND_LINEAR
from maxmargin.kernels.qmatrix import diagonal, make_qmatrix, with_rounded_features
from maxmargin.results import SVMSolution
from maxmargin.tolerances import SMO_TOL

__all__ = ["smo", "WORKING_SETS", "default_max_iter", "problem_of", "solve_checked"]

WORKING_SETS = ("wss2", "wss1", "platt")


def _centred_if_offset(X: Any, always: bool = False) -> Any:
    """Dense data far from the origin, centred: the solver then works on them (the same dual
    with ``y . alpha = 0``, without the cancellation of ``x . z`` on data whose offset dwarfs
    their spread: ``||mean||^2 > CENTRE_OFFSET_RATIO`` times the mean squared distance to the
    mean); the answer and its certificate stay in the user's units (:mod:`.result`). Other
    data are left as they are (their iterates are LIBSVM's, bit for bit as before, except on
    wide data with rounded features: see :func:`problem_of`), unless ``always`` (the hard
    margin: its resolution ``eps R`` is then measured from the data's mean, so a translation
    changes no verdict; sparse data keep the origin)."""
    if not isinstance(X, np.ndarray):
        return X
    return X - X.mean(axis=0) if always or far_from_origin(X) else X


def smo(
    X: Any,
    y: Any,
    C: float | None = 1.0,
    kernel: str | Kernel = "linear",
    tol: float = SMO_TOL,
    max_iter: int | None = None,
    working_set: str = "wss2",
    *,
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 0.0,
    cache_size: float = 200.0,
    shrinking: bool = True,
    history_every: int = 1,
    precision: str = "auto",
    sample_weight: Any = None,
    finish: bool = True,
    n_jobs: int | None = None,
) -> SVMSolution:
    """Solve the SVM dual ``max sum(alpha) - 1/2 alpha^T Q alpha``, ``0 <= alpha <= C``,
    ``y^T alpha = 0`` by SMO (LIBSVM's algorithm; the steps are the package's modules).

    Parameters
    ----------
    X : (n, d) array
    y : (n,) array of -1/+1
    C : float or None
        Box bound ``0 <= alpha_i <= C_i = C sample_weight_i``; ``None`` is the hard margin
        (:mod:`.hard_margin`'s infeasibility rule).
    kernel : {"linear", "rbf", "poly", ...} or a maxmargin kernel object
        With ``gamma``, ``degree``, ``coef0`` as in scikit-learn's SVC.
    tol : float
        Stop when ``m(alpha) - M(alpha) < tol`` (LIBSVM's ``eps``, SVC's ``tol``).
    max_iter : int or None
        Iteration cap; ``None`` is LIBSVM's ``max(10_000_000, 100 n)``.
    working_set : {"wss2", "wss1", "platt"}
        Second-order (LIBSVM), maximal violating pair, or Platt's heuristic (1998).
    cache_size : float
        Kernel cache budget in MB: ``cache_size 2^20 / (itemsize L)`` columns of the layout's
        length ``L`` (``n`` at first, the active set's size once shrinking has compacted it),
        itemsize 4 for float32 and 8 for float64 (at least two columns are always kept).
    shrinking : bool
        LIBSVM's shrinking heuristic (``"wss2"``/``"wss1"``; Platt's loop ignores it).
    history_every : int
        Initial recording stride of ``history`` (doubled whenever 2048 points are stored).
    precision : {"auto", "single", "double"}
        dtype of the cached ``Q`` (:mod:`.precision`). ``"auto"`` (default): float32, then a
        continuation from the current alpha with the exact gradient when the float64
        certificate asks for it; float64 throughout for a soft margin of an rbf, poly or
        sigmoid kernel whose float64 ``Q`` takes at most 8 MiB (``n <= 1024``) and
        ``cache_size``. ``"single"``/``"double"``: one cache dtype throughout.
    sample_weight : (n,) array of positive numbers, optional
        Per-sample bounds ``C_i = C sample_weight_i`` (SVC's ``sample_weight``). Ignored by the
        hard margin.
    finish : bool
        Hand a run that has not converged at a checkpoint or at ``max_iter`` to the exact
        active-set finish (:mod:`.finish`; default True). False runs SMO alone.
    n_jobs : int or None
        Threads (opt-in; -1 for every core). None (default) is one thread, as in
        scikit-learn: the same bits as ``n_jobs=1``. For otherwise idle cores only: each long
        column or scan is a parallel region, which waits for any thread another process holds
        off its core (then many times slower than one thread). With ``k``, the certificate's
        sums (the Q-matrix's compiled blocks, :func:`~maxmargin.kernels.sums.weighted_sums`,
        unless a float64 cache holds the columns: then one thread, in one order), their BLAS
        products, the long kernel columns of dense data and the scans of a long layout (bit
        for bit the one-thread columns and scans, :mod:`.scans`) run on ``k`` threads; the
        BLAS blocks of kernel columns of wide data run on one thread whatever ``k``. BLAS
        splits its sums by thread count, so on wide data the last bits of the certificate's
        sums (and from them ``b``, and the iterates after a continuation) may differ between
        values of ``k`` (rbf, poly and sigmoid on dense data of fewer than 32 features: none,
        every ``k`` gives the one-thread bits); every answer is certified in float64 all the
        same, and a given ``k`` gives the same bits on every run.

    Returns
    -------
    SVMSolution
        ``method="smo/<working_set>"``, or ``"dcd_svc"`` for a large linear soft margin that
        dual coordinate descent solved (:mod:`.routing`: the same problem, certificate and
        status rules); ``status`` is ``"optimal"`` only when the float64
        certificate (``solution.certificate``) has ``m - M < tol``; else ``"inaccurate"`` or
        ``"max_iter"`` (with a :class:`ConvergenceWarning`), or ``"infeasible"`` (hard margin,
        non-separable data). ``b`` and the objectives come from ``g = K (alpha y)`` in float64
        (:mod:`.result`); ``history`` (``iteration``, ``violation``, ``dual_objective``) is in
        the cache's precision.
    """
    kernel, X = precomputed(kernel, X)  # "precomputed": the Gram matrix and indices
    X, y = check_Xy(X, y, sparse=True, points=own_points(kernel))
    C = check_C(C)
    sw = check_sample_weight(sample_weight, y)
    kern = make_kernel(kernel, gamma=gamma, degree=degree, coef0=coef0, X=X)
    options = Options(
        tol=check_positive(tol, "tol"),
        working_set=check_choice(working_set, "working_set", WORKING_SETS),
        shrinking=check_bool(shrinking, "shrinking"),
        max_iter=check_max_iter(max_iter, default=default_max_iter(X.shape[0])),
        cache_size=check_positive(cache_size, "cache_size"),
        exact_finish=check_bool(finish, "finish"),
        threads=check_n_jobs(n_jobs) or 1,  # None: one thread, as scikit-learn's n_jobs
    )
    history_every = check_positive_int(history_every, "history_every")
    precision = check_choice(precision, "precision", PRECISIONS)
    if dcd_settings(kern, C, options.working_set, precision, max_iter is None,
                    options.exact_finish) and dcd_pays(X):
        sol = solve_by_dcd(X, y, C, sw, options.tol)
        if sol is not None:
            return sol
    return solve_checked(X, y, C, sw, kern, options, precision, history_every)


def default_max_iter(n: int) -> int:
    """LIBSVM's iteration cap for ``n`` variables: ``max(10_000_000, 100 n)``."""
    return max(10_000_000, 100 * n)


def problem_of(X: Any, y: np.ndarray, C: float | None, sw: np.ndarray | None,
               kern: Kernel, options: Options, precision: str, centre: bool = True
               ) -> tuple[Problem, np.ndarray, str]:
    """The :class:`Problem` of validated arguments (its Q-matrix, long columns on
    ``options.threads`` threads; linear data far from the origin centred), its diagonal
    ``K_ii`` and the first phase's precision (:func:`~.precision.first_precision`). Wide linear
    data whose first phase is float32 and whose float32 columns do not all fit in the cache
    keep their features rounded to float32 for those columns
    (:func:`~maxmargin.kernels.qmatrix.with_rounded_features`). A linear hard margin on dense
    data is always solved centred (its ``R`` measured from the mean). ``centre=False`` keeps
    the origin (the one-class SVM depends on it)."""
    linear = kern.kind == KIND_LINEAR and centre
    Xs = _centred_if_offset(X, always=C is None) if linear else X
    kd = make_qmatrix(kern, Xs, y, blocks=True, threads=options.threads)
    QD = diagonal(kd)  # K_ii from the data the columns come from (centred for linear and rbf)
    problem = Problem(Xs, y, C, sw, kern, kd, radius2=float(np.max(QD)), X_user=X)
    first = first_precision(precision, problem, options.cache_size)
    n = y.shape[0]
    if first != "double" and block_size(n, options.cache_size, 4) < n * n:
        problem = dataclasses.replace(problem, kd=with_rounded_features(kd))
    return problem, QD, first


def solve_checked(X: Any, y: np.ndarray, C: float | None, sw: np.ndarray | None, kern: Kernel,
                  options: Options, precision: str, history_every: int) -> SVMSolution:
    """:func:`smo` on validated arguments: build the Q-matrix and the solver, run the precision
    policy, report (:mod:`.batch` runs the same steps for each problem of a batch)."""
    start = time.perf_counter()
    problem, QD, first = problem_of(X, y, C, sw, kern, options, precision)
    box = None if C is None else (C if sw is None else C * sw)
    solver = Solver(problem, options, new_state(problem.kd, QD, box, options.tol, history_every))
    outcome, g, cert = solve_certified(solver, first, precision)
    return make_result(solver, outcome, g, cert, start, precision)
