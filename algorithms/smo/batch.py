"""Many SMO problems on subsets of one data set, validated once: the one-vs-one pairs of a
multi-class fit and the folds of its probability model.

:class:`SMOBatch` checks the data, the kernel (its values on the data finite) and the settings
once; :meth:`SMOBatch.solve` then solves the problem of the samples ``idx`` with labels ``y``
as :func:`~maxmargin.algorithms.smo.smo` solves ``smo(X[idx], y, ..., n_jobs=1)`` -- the same
Q-matrix, iterates, certificate and answer, bit for bit -- without validating ``X[idx]`` again.
A soft margin's certificate, ``b`` and objectives come from one compiled pass
(:mod:`.summary`, the same bits as ``smo``'s NumPy).
"""

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
    check_X,
)
from maxmargin.algorithms.smo.api import WORKING_SETS, default_max_iter, problem_of
from maxmargin.algorithms.smo.precision import PRECISIONS, solve_certified
from maxmargin.algorithms.smo.result import make_result
from maxmargin.algorithms.smo.routing import dcd_pays, dcd_settings, solve_by_dcd
from maxmargin.algorithms.smo.solver import Certified, Options, Solver
from maxmargin.algorithms.smo.state import new_state
from maxmargin.algorithms.smo.summary import Summary, summarise
from maxmargin.certificate import Certificate, kkt_roundoff
from maxmargin.kernels import Kernel, own_points
from maxmargin.results import SVMSolution
from maxmargin.tolerances import SMO_TOL

__all__ = ["SMOBatch"]


class SMOBatch:
    """SMO on subsets of ``X`` with one kernel object and one set of settings.

    Parameters
    ----------
    X : (n, d) array, CSR matrix, or the points a kernel object takes (e.g. strings)
        Validated once here (finite; the kernel's values on it finite).
    kernel : Kernel
        A ready kernel object (``gamma`` resolved).
    tol, max_iter, working_set, cache_size, shrinking, precision, finish, history_every
        As :func:`~maxmargin.algorithms.smo.smo`; ``max_iter=None`` is LIBSVM's cap for each
        problem's own size.
    checked : bool
        ``X`` is validated already and the kernel's values on it are finite (the estimator
        checks both before it builds the batch); not checked again.
    n_jobs : int or None
        Threads of the certificates' and kernel columns' blocks (``smo``'s ``n_jobs``); None
        is one. Either way the certificates come from the Q-matrix's compiled blocks, whose
        fixed cost suits small problems (``smo``'s default computes them by the kernel object:
        the same values up to the last bits of the sums); run the batch inside
        :func:`~maxmargin._threads.blas_threads` of that count to pay for the limit once.
    """

    def __init__(self, X: Any, kernel: Kernel, *, tol: float = SMO_TOL, max_iter: int | None = None,
                 working_set: str = "wss2", cache_size: float = 200.0, shrinking: bool = True,
                 precision: str = "auto", finish: bool = True, history_every: int = 1,
                 n_jobs: int | None = None, checked: bool = False) -> None:
        if not isinstance(kernel, Kernel):
            raise TypeError(f"`kernel` must be a maxmargin Kernel object; got "
                            f"{type(kernel).__name__}.")
        if not checked:  # the caller's word that X and K(x, x) are valid (the estimator's)
            X = check_X(X, sparse=True, points=own_points(kernel), copy=False)
            kernel.diag(X)  # as smo's make_kernel: finite kernel values on the data
        self.X = X
        self.kernel = kernel
        self._cap = None if max_iter is None else check_max_iter(max_iter)
        self.options = Options(
            tol=check_positive(tol, "tol"),
            working_set=check_choice(working_set, "working_set", WORKING_SETS),
            shrinking=check_bool(shrinking, "shrinking"),
            max_iter=1 if self._cap is None else self._cap,
            cache_size=check_positive(cache_size, "cache_size"),
            exact_finish=check_bool(finish, "finish"),
            threads=check_n_jobs(n_jobs) or 1,
        )
        self.precision = check_choice(precision, "precision", PRECISIONS)
        self._options: dict[int, Options] = {}  # the options of each iteration cap
        self._spare: dict[np.dtype, np.ndarray] = {}  # the caches' blocks, for the next problem
        self.history_every = check_positive_int(history_every, "history_every")

    def solve(self, idx: Any, y: Any, C: float | None = 1.0,
              sample_weight: Any = None) -> SVMSolution:
        """``smo(X[idx], y, C, sample_weight=sample_weight, n_jobs=...)`` with the batch's
        kernel and settings: ``idx`` indexes the rows of ``X``, ``y`` holds their -1/+1 labels
        (both present), ``C`` and ``sample_weight`` as :func:`~maxmargin.algorithms.smo.smo`'s."""
        idx = np.asarray(idx)
        if idx.ndim != 1 or idx.dtype.kind not in "iu":
            raise ValueError(f"`idx` must be a 1-D array of row indices; got {idx.dtype} array "
                             f"of shape {idx.shape}.")
        y = _labels(y, idx.shape[0])
        C = check_C(C)
        return self.solve_checked(idx, y, C, check_sample_weight(sample_weight, y))

    def solve_checked(self, idx: np.ndarray, y: np.ndarray, C: float | None,
                      sample_weight: np.ndarray | None) -> SVMSolution:
        """:meth:`solve` on arguments its checks would pass unchanged (the estimator's: 1-D
        integer ``idx``, float64 -1/+1 labels holding both, ``C`` a positive float or None,
        ``sample_weight`` None or positive float64, one per label)."""
        X = self.X[idx]  # this problem's rows, a fresh copy
        if dcd_settings(self.kernel, C, self.options.working_set, self.precision,
                        self._cap is None, self.options.exact_finish) and dcd_pays(X):
            # as smo (:mod:`.routing`)
            sol = solve_by_dcd(X, y, C, sample_weight, self.options.tol)
            if sol is not None:
                return sol
        cap = default_max_iter(idx.shape[0]) if self._cap is None else self._cap
        options = self._options.get(cap)
        if options is None:  # each iteration cap's options, made once (most sizes share one)
            options = self.options
            if cap != options.max_iter:
                options = dataclasses.replace(options, max_iter=cap)
            self._options[cap] = options
        start = time.perf_counter()
        problem, QD, first = problem_of(X, y, C, sample_weight, self.kernel, options,
                                        self.precision)
        box = None if C is None else (C if sample_weight is None else C * sample_weight)
        state = new_state(problem.kd, QD, box, options.tol, self.history_every)
        solver = _SummarisingSolver(problem, options, state)
        solver.spare, self._spare = self._spare, {}  # taken: one problem uses them at a time
        outcome, g, cert = solve_certified(solver, first, self.precision)
        result = make_result(solver, outcome, g, cert, start, self.precision, solver.summary,
                             own_rows=True)  # X[idx]: a fresh copy
        solver.spare[solver.block.dtype] = solver.block  # the solution keeps no cache
        self._spare = solver.spare
        return result


class _SummarisingSolver(Solver):
    """A :class:`Solver` whose soft-margin certificates come from :func:`summarise`, with the
    answer's ``b`` and objectives (kept as ``summary``)."""

    summary: Summary | None = None

    def _certified(
        self, at: np.ndarray, g_at: np.ndarray | None, g: np.ndarray
    ) -> tuple[np.ndarray, Certificate]:
        p, alpha = self.problem, self.st.alpha
        same_units = p.X_user is None or p.X_user is p.X
        summary = summarise(alpha, p.y, g, self.box, kkt_roundoff(alpha, p.X, p.kernel)) \
            if self.box is not None and same_units else None
        if summary is None:
            self.summary = None
            return super()._certified(at, g_at, g)
        self.last_certified = Certified(alpha.copy(), at, g_at, g)
        self.summary = summary
        return g, summary.certificate


def _labels(y: Any, n: int) -> np.ndarray:
    """``y`` as a float64 copy holding both labels -1 and +1, one per row (``check_Xy``'s
    words)."""
    y = np.array(y, dtype=np.float64)
    if y.shape != (n,):
        raise ValueError(f"`y` must have one label per row of `X[idx]`: {n} rows, `y` has shape "
                         f"{y.shape}.")
    bad = ~((y == 1.0) | (y == -1.0))
    if np.any(bad):
        raise ValueError(f"`y` must contain only the labels -1 and +1; got other values "
                         f"{np.unique(y[bad])[:5].tolist()}.")
    if np.all(y == y[0]):
        raise ValueError(f"`y` must contain both classes -1 and +1; got only {int(y[0]):+d}.")
    return y
