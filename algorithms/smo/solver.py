"""One SMO run in Python: the compiled state, its kernel cache and the phases that drive it.

:class:`Solver` holds what LIBSVM's ``Solver`` holds (the state of :mod:`.state`, the cache)
and runs the compiled loop (:mod:`.loops`) in phases of one cache precision each. At
checkpoints a run that has not converged is offered to the exact finish (:mod:`.finish`).
Between phases it certifies the current alpha in float64 (:meth:`Solver.certify`) and can
restart the loop from it with the exact gradient (:meth:`Solver.restart_from`); the precision
policy (:mod:`.precision`) decides which phases to run.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from maxmargin._jit import note_compile
from maxmargin._threads import blas_threads
from maxmargin.algorithms._kernel_cache import S_ROWS, ColumnCache, block_size, make_cache
from maxmargin.algorithms.smo import column_sums
from maxmargin.algorithms.smo.column_sums import cached_sums
from maxmargin.algorithms.smo.finish import exact_finish, first_checkpoint, smo_work
from maxmargin.algorithms.smo.hard_margin import HULL_EPS
from maxmargin.algorithms.smo.loops import (
    FLOOR_FRACTION,
    MAX_ITER,
    OPTIMAL,
    Limits,
    prefetching_for,
    solve_pairs,
    solve_platt,
)
from maxmargin.algorithms.smo.state import FREE, LOWER, STALE, UPPER, SolverState
from maxmargin.certificate import Certificate, certify_svm, decision_values
from maxmargin.kernels import Kernel
from maxmargin.kernels.formulas import KIND_LINEAR
from maxmargin.kernels.qmatrix import (
    QMatrix,
    rounding_error,
    value_cost,
    without_rounded_features,
)
from maxmargin.kernels.sums import has_weighted_sums, weighted_sums

__all__ = ["CACHE_DTYPE", "Problem", "Options", "Solver"]

#: The kernel cache's dtype for each ``precision`` (``"auto"`` starts in float32).
CACHE_DTYPE = {"auto": np.float32, "single": np.float32, "double": np.float64}


@dataclass(frozen=True)
class Problem:
    """The validated data of one run."""

    X: Any  # (n, d) array, CSR matrix, or what the kernel object takes (the solver's data)
    y: np.ndarray  # (n,) of -1/+1
    C: float | None  # the user's C (None: the hard margin)
    sample_weight: np.ndarray | None
    kernel: Kernel
    kd: QMatrix
    radius2: float  # max_t K_tt
    X_user: Any = None  # the user's data when X is their centred copy (linear kernel)


@dataclass(frozen=True)
class Options:
    """The validated settings of one run."""

    tol: float
    working_set: str
    shrinking: bool
    max_iter: int
    cache_size: float
    exact_finish: bool
    #: k (``smo`` passes 1 for ``n_jobs=None``): the certificate from the Q-matrix's compiled
    #: blocks (:func:`~maxmargin.kernels.sums.weighted_sums`) and its BLAS calls on k
    #: threads, long kernel columns split over k threads; the loop's BLAS blocks on one thread
    #: either way (``smo``'s ``n_jobs`` says what changes with k)
    threads: int = 1


class Certified(NamedTuple):
    """What the last :meth:`Solver.certify` computed, for the next one and for
    :meth:`Solver.restart_from`."""

    alpha: np.ndarray  # a copy of alpha then
    at: np.ndarray  # alpha >= C then
    g_bounded: np.ndarray | None  # sum_{alpha_j = C_j} C_j y_j K(x_j, .) (None: not computed)
    g: np.ndarray  # K (alpha o y)


class Solver:
    """One SMO run: the state, its kernel, and the phases (float32, float64 continuations)."""

    #: :func:`~.loops.solve_pairs`' ``classwise``: None (C-SVC, one-class), True (ν-SVC)
    classwise: bool | None = None

    def __init__(self, problem: Problem, options: Options, st: SolverState) -> None:
        self.problem, self.options, self.st = problem, options, st
        self.box = None if problem.C is None else st.C  # per-sample bounds C_i
        self.cache: ColumnCache | None = None
        self.kernel_values = 0  # computed by the caches before the current one
        self.phases: list[str] = []
        self.exact_finish_note = ""  # what the exact finish did, for the message
        self.hull_eps = HULL_EPS["auto"]
        #: ``precision="auto"``: the float32 rounding floor of ``m - M`` is estimated as this
        #: times ``sqrt(sum alpha^2)`` (:func:`~.loops.alpha_norm`; recalibrated by a
        #: refinement); columns from rounded features err ``rounding_error`` times more
        rounded = rounding_error(problem.kd) if problem.kd.XT32.shape[0] > 0 else 1.0
        self.floor_coeff = rounded * 2.0**-24 * problem.radius2
        self.last_certified: Certified | None = None
        #: spare flat blocks for the caches' columns, by dtype (a batch's, which its problems
        #: reuse: no fresh pages a problem); the current cache's block is ``block``
        self.spare: dict[np.dtype, np.ndarray] = {}
        self.block: np.ndarray | None = None
        #: :meth:`kernel_sums` from a float64 cache below ``COMPILED_SUMS_MIN_TERMS`` terms too
        #: (set where the cached-column pass has run anyway: no compile to save)
        self.small_sums_cached = False

    @property
    def iterations(self) -> int:
        return int(self.st.scalars.iteration)

    def solve(self, precision: str, refine: bool = False, warm: bool = False) -> int:
        """Run the loop with a fresh ``precision`` cache (``refine``: the last one, still warm;
        ``warm``: the one :meth:`start_cache` made) until it stops; a run that reaches a
        checkpoint without converging is offered to the exact finish, and goes on from where
        it was (same cache) if that does not certify it."""
        max_iter = self.options.max_iter
        checkpoint, keep_cache = max_iter, refine or warm
        if self.options.exact_finish:
            checkpoint = first_checkpoint(self.st.alpha.shape[0])
        while True:
            outcome = self.run_loop(precision, min(checkpoint, max_iter), keep_cache, refine)
            keep_cache = True
            if outcome != MAX_ITER or not self.options.exact_finish:
                return outcome
            if self.try_exact_finish():
                return OPTIMAL
            if self.iterations >= max_iter:
                return outcome
            self.restart_from(self.certify()[0])
            checkpoint *= 4

    def run_loop(self, precision: str, cap: int, keep_cache: bool, refine: bool) -> int:
        """The compiled loop with a fresh ``precision`` cache (``keep_cache``: the current one,
        in a new epoch), to at most ``cap`` iterations; ``refine`` names the phase."""
        st, opt = self.st, self.options
        self.start_cache(precision, keep_cache)
        kd = self.problem.kd
        phase = ("float64" if precision == "double" else "float32") + (
            " refinement" if refine else "")
        if not self.phases or self.phases[-1] != phase:
            self.phases.append(phase)
        self.hull_eps = HULL_EPS[precision]
        limits = Limits(
            max_iter=cap, hull_bound2=self.hull_eps**2 * self.problem.radius2,
            floor_coeff=self.floor_coeff if precision == "auto" else 0.0,
            floor_limit=FLOOR_FRACTION * opt.tol,
        )
        platt = opt.working_set == "platt"
        note_compile(solve_platt if platt else solve_pairs, "SMO's loops", "several seconds of CPU")
        if platt:
            return solve_platt(st, self.cache, kd, limits, 0, prefetching_for(kd))
        # the BLAS blocks of wide data on one thread whatever n_jobs (its threads split long
        # columns instead): two pools on two shared cores took 3x the time
        with blas_threads(1) if kd.block.shape[0] > 0 else contextlib.nullcontext():
            return solve_pairs(st, self.cache, kd, opt.working_set == "wss2", opt.shrinking,
                               limits, prefetching_for(kd), self.classwise)

    def start_cache(self, precision: str, keep: bool = False) -> ColumnCache:
        """The kernel cache of a phase of ``precision``: the current one when ``keep`` and of
        that dtype (a kept cache serves every variable as it is: a driver leaves the layout at
        all ``n``; ``solve_pairs`` ends with ``reconstruct_gradient``, Platt's loop never
        shrinks), else a fresh one (on the spare block of that dtype when it has room).
        Float64 columns never read rounded features: a float64 cache drops them from the
        Q-matrix for good (no driver of their type)."""
        kd, n, opt = self.problem.kd, self.st.alpha.shape[0], self.options
        dtype = CACHE_DTYPE[precision]
        if dtype == np.float64 and kd.XT32.shape[0] > 0:
            self.problem = dataclasses.replace(self.problem, kd=without_rounded_features(kd))
        if not (keep and self.cache is not None and self.cache.data.dtype == dtype):
            if self.cache is not None:
                self.kernel_values += int(self.cache.state[S_ROWS])
                self.spare[self.block.dtype] = self.block
            block = self.spare.pop(np.dtype(dtype), None)
            if block is not None and block.size < block_size(n, opt.cache_size, block.itemsize):
                block = None
            self.cache = make_cache(n, opt.cache_size, dtype, block)
            self.block = self.cache.data if block is None else block
        return self.cache

    def kernel_sums(self, idx: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """``sum_k coef_k K(., x_{idx_k})`` on the solver's data in float64: from the float64
        cache's columns where it holds them (:func:`~.column_sums.cached_sums`), else by the
        Q-matrix's compiled blocks on ``options.threads`` threads where they apply, else (and
        where those give a value that is not finite, or on problems of fewer than
        ``COMPILED_SUMS_MIN_TERMS`` terms, unless :attr:`small_sums_cached` and the cache
        serves them) by the kernel object (:func:`~maxmargin.certificate.decision_values`)."""
        p, threads = self.problem, self.options.threads
        small = p.kd.y.shape[0] * idx.shape[0] < column_sums.COMPILED_SUMS_MIN_TERMS
        # None unless every sum is finite
        g = None if small and not self.small_sums_cached else cached_sums(self.cache, p.kd,
                                                                          idx, coef)
        if g is not None:
            return g
        if small:
            return decision_values(p.kernel, p.X, p.X[idx], coef)
        if idx.size and has_weighted_sums(p.kd):
            with blas_threads(threads):
                g = weighted_sums(p.kd, idx, coef, threads)
            if np.all(np.isfinite(g)):
                return g
        return decision_values(p.kernel, p.X, p.X[idx], coef)

    def try_exact_finish(self) -> bool:
        """The exact finish (:mod:`.finish`) from the current alpha, its two tries
        together within SMO's work so far; True, and its alpha kept, only if its float64
        certificate meets ``tol``."""
        p, alpha = self.problem, self.st.alpha
        values = self.kernel_values + int(self.cache.state[S_ROWS])
        work = smo_work(float(self.st.scalars.work), values, value_cost(p.kd))
        done = exact_finish(alpha, p.X, p.y, self.box, p.kernel, self.options.tol, work)
        if done is None:
            return False
        alpha[:] = done.alpha
        self.exact_finish_note = (
            f"; finished exactly by the active-set method (from {done.n_free} free alphas at "
            f"iteration {self.iterations})")
        return True

    def certify(self) -> tuple[np.ndarray, Certificate]:
        """``g = K (alpha y)`` in float64 (blocked) and the certificate of the current alpha.

        ``g`` is summed from the bounded and the free support vectors (linear kernel: ``X w``
        over all of them at once), and the bounded part ``g_B = sum_{alpha_j = C_j} C_j y_j
        K(x_j, .)`` is kept for :meth:`restart_from` (its ``G_bar``), so a continuation needs no
        second kernel pass. After a continuation that moved few alphas (set ``S``), both are
        updated instead: ``g += K(., X_S) (d_alpha_S o y_S)``, and ``g_B`` by the columns that
        entered or left the bound. With the Q-matrix's compiled blocks,
        ``g`` is one pass over every support vector and ``g_B`` is left to
        :meth:`restart_from`, which computes it only when a continuation needs it."""
        p = self.problem
        alpha, y, C, kern = self.st.alpha, p.y, self.box, p.kernel
        sums = self.kernel_sums
        at = np.zeros(alpha.shape, dtype=bool) if C is None else alpha >= C
        last = self.last_certified
        if kern.kind != KIND_LINEAR and last is not None and last.g_bounded is not None:
            moved = np.flatnonzero(alpha != last.alpha)
            crossed = np.flatnonzero(at != last.at)
            if moved.size + crossed.size < np.count_nonzero(alpha):
                g = last.g + sums(moved, (alpha[moved] - last.alpha[moved]) * y[moved])
                g_at = last.g_bounded
                if crossed.size:  # +C_j y_j K(x_j, .) entering the bound, - leaving it
                    sign = np.where(at[crossed], 1.0, -1.0)
                    g_at = g_at + sums(crossed, sign * C[crossed] * y[crossed])
                return self._certified(at, g_at, g)
        if has_weighted_sums(p.kd):
            sv = np.flatnonzero(alpha > 0)
            return self._certified(at, None, sums(sv, alpha[sv] * y[sv]))
        free = np.flatnonzero((alpha > 0) & ~at)
        bounded = np.flatnonzero(at)
        g_at = sums(bounded, alpha[bounded] * y[bounded])
        if kern.kind == KIND_LINEAR:  # X w over all support vectors: as cheap as the parts,
            sv = np.flatnonzero(alpha > 0)  # and free of their cancellation on unscaled data
            g = sums(sv, alpha[sv] * y[sv])
        else:
            g = g_at + sums(free, alpha[free] * y[free])
        return self._certified(at, g_at, g)

    def _certified(
        self, at: np.ndarray, g_at: np.ndarray | None, g: np.ndarray
    ) -> tuple[np.ndarray, Certificate]:
        """Keep :class:`Certified` for the next :meth:`certify` and :meth:`restart_from`;
        return ``g`` and the certificate."""
        self.last_certified = Certified(self.st.alpha.copy(), at, g_at, g)
        return g, self.judge(g)

    def judge(self, g: np.ndarray) -> Certificate:
        """The float64 certificate of the current alpha, given ``g = K (alpha o y)``."""
        p = self.problem
        return certify_svm(self.st.alpha, p.X, p.y, self.box, p.kernel, g=g)

    def restart_from(self, g: np.ndarray, g_bounded: np.ndarray | None = None) -> None:
        """Reset the solver's state around the current alpha: exact ``G = y g + p`` and
        ``G_bar`` (``y g_bounded`` when the caller has ``g_bounded = sum_{alpha_j = C_j} C_j
        y_j K(x_j, .)``), every variable active, statuses from alpha (the iteration count, the
        work and the history go on)."""
        st, y, C = self.st, self.problem.y, self.box
        alpha, sc = st.alpha, st.scalars
        n = alpha.shape[0]
        st.G[:] = (y * g + sc.linear)[st.act]  # by layout position
        if C is None:
            st.G_bar[:] = 0.0
        elif g_bounded is not None:
            st.G_bar[:] = y * g_bounded
        elif ((last := self.last_certified) is not None and np.array_equal(last.alpha, alpha)
              and last.g_bounded is not None):
            st.G_bar[:] = y * last.g_bounded  # from the certificate's kernel pass
        else:
            at = np.flatnonzero(alpha >= C)
            g_at = self.kernel_sums(at, C[at] * y[at])
            st.G_bar[:] = y * g_at
            if last is not None and np.array_equal(last.alpha, alpha):  # for the next update
                self.last_certified = last._replace(g_bounded=g_at)
        upper = np.inf if C is None else C
        status = np.where(alpha >= upper, UPPER, np.where(alpha <= 0.0, LOWER, FREE))
        st.status[:] = status
        pos = y > 0
        st.in_up[:] = np.where(pos, status != UPPER, status != LOWER)[st.act]
        st.in_low[:] = np.where(pos, status != LOWER, status != UPPER)[st.act]
        st.pend[:] = 0.0  # G_bar is exact on every row
        sc.n_pending = 0
        sc.alpha_sum = float(alpha.sum())
        sc.dual = -sc.linear * float(alpha.sum()) - 0.5 * float((alpha * y) @ g)
        sc.n_active = n
        sc.unshrunk = False
        sc.i_max = STALE
