"""Sequential minimal optimization (SMO) for the SVM dual, built to LIBSVM's standard.

The problem (seed 004; CONTRACT.md) is the dual

.. math::

    \\max_\\alpha D(\\alpha) = \\sum_i \\alpha_i - \\tfrac12 \\alpha^T Q \\alpha,
    \\quad Q_{ij} = y_i y_j K(x_i, x_j), \\quad 0 \\le \\alpha_i \\le C, \\quad y^T \\alpha = 0,

solved, like LIBSVM, as the minimisation of ``f(alpha) = 1/2 alpha^T Q alpha - e^T alpha`` whose
gradient ``G = Q alpha - e`` is kept up to date (``E_i = g(x_i) - y_i = y_i G_i + b`` in the
seed's notation, so ``E_i - E_j = y_i G_i - y_j G_j`` needs no ``b``).

**Two-variable subproblem** (seed 004). With ``eta = K_ii + K_jj - 2 K_ij``,

.. math::

    \\alpha_j^{unc} = \\alpha_j + y_j (E_i - E_j) / \\eta, \\quad
    \\alpha_j^{new} = \\mathrm{clip}_{[L, H]}(\\alpha_j^{unc}), \\quad
    \\alpha_i^{new} = \\alpha_i + y_i y_j (\\alpha_j - \\alpha_j^{new}),

``L, H`` the ends of the feasible segment (``y_i != y_j``: ``L = max(0, a_j - a_i)``,
``H = min(C, C + a_j - a_i)``; ``y_i = y_j``: ``L = max(0, a_i + a_j - C)``,
``H = min(C, a_i + a_j)``). It is implemented in LIBSVM's form (clip the pair on the line
``a_i -+ a_j = const`` so both land exactly on a bound), and ``eta <= 0`` (duplicate points,
round-off) is replaced by ``tau = 1e-12`` as in LIBSVM.

**Optimality and stopping.** With ``I_up = {t: y_t = +1, a_t < C} u {t: y_t = -1, a_t > 0}`` and
``I_low = {t: y_t = +1, a_t > 0} u {t: y_t = -1, a_t < C}``, the KKT conditions hold iff
``m(alpha) = max_{I_up} -y_t G_t <= M(alpha) = min_{I_low} -y_t G_t``. Every rule stops when
``m - M < tol``: ``tol`` means exactly what it means in LIBSVM and scikit-learn's SVC, including
that ``G`` is built from the kernel cache, i.e. in the cache's precision (see **Precision**).

**Working sets.** ``"wss2"`` (default): LIBSVM's second-order rule (Fan, Chen & Lin 2005):
``i = argmax_{I_up} -y_t G_t``, then ``j`` minimises ``-(b_it)^2 / a_it`` over
``t in I_low`` with ``b_it = m + y_t G_t > 0`` and ``a_it = K_ii + K_tt - 2 K_it`` (``tau`` if
``<= 0``). ``"wss1"``: the maximal violating pair, ``j = argmax_{I_low} y_t G_t``. ``"platt"``:
the seed's heuristic -- an outer loop over all examples alternating with loops over the free ones
(``0 < a < C``); an example violating the KKT conditions by more than ``tol / 2`` (with Platt's
threshold ``b``) is the first variable; the second maximises ``|E_1 - E_2|`` among the free ones,
else (Platt's fallbacks) the first free one, then any one, that makes progress, each sweep starting
at a random position (fixed seed). A pair is only stepped on if it violates the optimality
condition by more than ``max(tol, 0.1 (m - M))`` (see ``_platt_take_step``), which guarantees
termination. ``b`` is updated after each step as in the seed (from a free one of the two, else
the midpoint). When Platt's loop finds nothing to do it would stop; if then ``m - M >= tol``
still (no violation above ``tol / 2`` implies ``m - M <= tol``, but rejected pairs can leave
some), one maximal-violating-pair step is taken, so the ``m - M < tol`` rule is met honestly.

**Intercept.** ``b`` from LIBSVM's ``calculate_rho``: the mean of ``-y_t G_t`` over the free
``alpha`` when there are any, else the midpoint of the KKT interval (``b_interval``), via
:func:`maxmargin.results.recover_intercept`.

**Kernel cache and shrinking.** Columns of ``Q`` come from an LRU cache of float32 (or, with
``precision="double"``, float64) columns bounded by ``cache_size`` MB
(:mod:`maxmargin.algorithms._kernel_cache`); memory never grows as ``n^2``. With ``shrinking=True``
(LIBSVM's ``do_shrinking``, every ``min(n, 1000)`` iterations) variables at a bound that cannot
enter a violating pair are removed from the active set; the gradient of the others is rebuilt
(``reconstruct_gradient``, from ``G_bar = sum_{a_j = C} C Q_{:j}``) before the final check, so the
answer is the same. When the active set falls below ``COMPACT_FRACTION`` of the cache's layout,
the layout is compacted to it: cached columns then hold only the active rows, and the budget holds
correspondingly more of them (LIBSVM's active-length columns). ``G`` stays exact on the whole
layout; the rows of ``G_bar`` outside it are brought up to date when they are next needed.

**Precision.** ``precision="single"`` (LIBSVM's ``Qfloat``) stores the cached ``Q`` in
float32 (the first phase of the default ``"auto"``, which continues in float64 when the float64
certificate asks for it, and skips float32 when ``max K_ii`` is outside :data:`FLOAT32_RANGE`);
the gradient ``G`` and ``alpha`` are float64, but ``G = Q alpha - e`` is then the exact
gradient of the float32-rounded problem, not of the true one. With ``|dQ_ij| <= 2^-24 |Q_ij|
<= 2^-24 max_t K_tt`` (Cauchy-Schwarz), each entry of ``G`` is off by at most about
``2^-24 max_t K_tt sum(alpha)``, and ``m - M`` by twice that. This is an accuracy *floor*: when
it is not far below ``tol``, the true (float64) ``m - M`` at the returned ``alpha`` can exceed
``tol`` although the solver's stop test passed (iris versicolor/virginica, raw features,
linear, ``C=1``, ``tol=1e-6``: solver's ``m - M = 7.7e-7``, true ``m - M ~ 1.8e-5``), and when
it exceeds ``tol`` the float32 problem may have no point where the test passes at all, so SMO
runs to ``max_iter`` (the same data times ``1e3``: ``m - M`` stuck at ``4.26``; LIBSVM/SVC fails
there too). ``precision="double"`` keeps the cache in float64 (half as many columns per MB, so
more kernel evaluations once the cache is full; otherwise about the same speed), which lowers
the floor by ``2^29``: use it when ``tol`` is not far above ``1e-7 max_t K_tt sum(alpha)`` --
unscaled features, large ``C``, tight ``tol``. ``"auto"`` continues from the current alpha
with the exact float64 gradient: in float32 with the warm cache (*refinement*, at most
``MAX_REFINEMENTS`` times) when the measured error of the float32 gradient,
``max_t |G_t - (y_t g_t - 1)|``, is at most ``FLOOR_FRACTION tol`` (the floor estimate is then
recalibrated by that measurement), else with a float64 cache. The reported
``history["violation"]``, the stop test and the ``m - M`` in ``message`` are in the cache's
precision; ``dual_objective`` and ``primal_objective`` are recomputed in float64 either way.

**Hard margin** (``C=None``, no upper bound). On data that no hyperplane (in feature space)
separates, the dual is unbounded and SMO would run forever. Rule: write ``alpha = s (lam, mu)``
with ``lam``, ``mu`` convex weights over the positive and the negative examples (``s =
sum(alpha) / 2``, since ``y^T alpha = 0``). Then ``w = s (p - q)`` with ``p`` in the hull of the
positives and ``q`` in that of the negatives, so the hull distance is at most
``delta(alpha) = ||w|| / s`` -- and every separating hyperplane has geometric margin at most
``delta / 2``. ``||w||^2 = 2 (sum(alpha) - D(alpha))`` is tracked at no cost and checked every
``min(n, 1000)`` iterations (then confirmed from the full gradient). When
``delta <= HARD_MARGIN_HULL_EPS * R`` with ``R = max_t sqrt(K(x_t, x_t))`` the run stops with
``status="infeasible"``: no hyperplane separates the classes with a geometric margin above
about ``5.6e-4 R`` (half of ``sqrt(1e-6 + 2.4e-7) R``, the threshold plus the float32 error).
The threshold is the resolution of the float32 kernel cache: its rounding errors
(``|dQ_ij| <= 6e-8 |Q_ij|``) perturb ``delta^2`` by up to ``2.4e-7 R^2``, so smaller distances
cannot be told from zero. (For separable data ``delta(alpha) >=`` the true distance at every
iterate, so a margin above that never triggers the rule.) With ``precision="double"`` that
rounding bound is ``4 * 2^-53 R^2 ~ 4.4e-16 R^2``, and the threshold is
:data:`HARD_MARGIN_HULL_EPS_DOUBLE` ``= 1e-4`` (``delta^2 <= 1e-8 R^2``, far above the
rounding): margins above ``~5e-5 R`` are resolved, ten times finer than in single precision. It
is not smaller because the certificate gets expensive: ``delta(alpha)`` shrinks slowly on
non-separable data (measured: hard-margin linear XOR, 356 iterations at ``1e-3``, 3,540 at
``1e-4``, 35,356 at ``1e-5``; two overlapping clouds with an RBF kernel of width ``gamma=0.01``:
300 / 12,060 (wss2) and 19,620 / 1,065,960 (wss1) iterations at ``1e-3`` / ``1e-4``, and no
certificate within 10 million iterations at ``1e-5``).

A second test needs no kernel value and runs every iteration: every step raises the dual
objective from ``D = 0``, so ``D(alpha) > 0``, i.e. ``||w||^2 < 2 sum(alpha)``, and then
``delta(alpha)^2 = 4 ||w||^2 / sum(alpha)^2 < 8 / sum(alpha)``: ``sum(alpha) > 8 / (eps R)^2``
proves ``delta < eps R``. It stops runs whose alpha grows geometrically (identical points with
opposite labels, zero curvature ``eta``: each step multiplies alpha) before float overflow;
the float64 bound is then checked as for the first test.

**Finish.** A run that has not converged after ``max(FINISH_AFTER, FINISH_AFTER_PER_POINT
n)`` iterations (then 4, 16, ... times as many), or at ``max_iter``, is handed, when at most
``FINISH_MAX_FREE`` alphas are free, to the primal active-set method of
:mod:`maxmargin.algorithms.active_set` started from the current alpha: Newton steps on the
free set, releasing and fixing bounds, exact in float64. Its answer is kept only if its float64
certificate meets ``tol`` (``message`` says so); otherwise SMO goes on from where it was. Each
finish may take at most half the time SMO has run (at least 0.2 s).
``finish=False`` runs SMO alone. (SMO converges linearly at a rate set by the conditioning
and crawls on low-rank Gram matrices, duplicates and large ``C max K_ii``; the README gives the
measurements.)

**Iteration cap.** ``max_iter=None`` is LIBSVM's ``max(10_000_000, 100 n)``. Reaching it warns
:class:`~maxmargin.exceptions.ConvergenceWarning` and returns ``status="max_iter"``.

**History.** ``history["iteration"]``, ``["violation"]`` (``m - M`` on the active set before the
step) and ``["dual_objective"]`` (tracked exactly per step, ``Delta f = G_i d_i + G_j d_j +
1/2 (Q_ii d_i^2 + 2 Q_ij d_i d_j + Q_jj d_j^2)``), recorded every ``history_every`` iterations;
when 2048 points are stored every other one is dropped and the stride doubles, so the history
stays bounded; the final state is always the last point.
"""

from __future__ import annotations

import math
import time
import warnings
from typing import Any, NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

from maxmargin import exceptions
from maxmargin._jit import note_compile
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
from maxmargin.algorithms._kernel_cache import (
    MAX_BLOCK,
    S_HITS,
    S_LEN,
    S_MISSES,
    S_SLOTS,
    ColumnCache,
    KernelData,
    compact_layout,
    fill_column,
    get_column,
    grow_layout,
    kernel_value,
    load_columns,
    make_cache,
    make_kernel_data,
    n_slots_for,
    permute_prefix,
    python_kernel,
)
from maxmargin.algorithms.active_set import finish_alpha
from maxmargin.certificate import Certificate, certify_svm, decision_values
from maxmargin.kernels import Kernel, make_kernel, own_points, precomputed
from maxmargin.results import SVMSolution, recover_intercept

__all__ = [
    "smo",
    "WORKING_SETS",
    "PRECISIONS",
    "HARD_MARGIN_HULL_EPS",
    "HARD_MARGIN_HULL_EPS_DOUBLE",
]

WORKING_SETS = ("wss2", "wss1", "platt")
#: Hard margin: stop as infeasible when the classes' hulls are provably within this times R.
HARD_MARGIN_HULL_EPS = 1e-3
#: The same with ``precision="double"`` (float64 cache; see the module docstring).
HARD_MARGIN_HULL_EPS_DOUBLE = 1e-4
PRECISIONS = ("auto", "single", "double")
_CACHE_DTYPE = {"auto": np.float32, "single": np.float32, "double": np.float64}
_HULL_EPS = {
    "auto": HARD_MARGIN_HULL_EPS, "single": HARD_MARGIN_HULL_EPS,
    "double": HARD_MARGIN_HULL_EPS_DOUBLE,
}
TAU = 1e-12  # LIBSVM's replacement for a non-positive curvature eta
PLATT_EPS = 1e-12  # Platt's "no progress" test |a2 - a2_old| < eps (a2 + a2_old + eps)
HISTORY_CAP = 2048
# Compile time: Numba types a call while its arguments' types are still being inferred, so a
# variable that starts as a literal (``k = 0``, ``False``) compiles the callee once for the
# literal type and again for ``int64``/``bool``. Such arguments start as ``np.int64(0)``, and
# ``_record`` is called with ``PERIODIC`` (a NumPy bool, which Numba does not type as literal).
# Helpers that only compiled code calls are compiled with ``no_cpython_wrapper=True``: the
# wrapper unboxes the ~40 arrays of (_State, ColumnCache, KernelData) and cost ~0.2 s of compile
# per function. Calling such a helper from Python crashes the interpreter: keep the wrapper on
# anything Python calls (``_record``, ``_violation``, ``_float32_floor``, ``grow_layout``, ...).
PERIODIC = np.bool_(False)

LOWER, UPPER, FREE = 0, 1, 2
# float state fs[...]
F_C, F_TOL, F_DUAL, F_SUM, F_B, F_GMAX, F_PAIR = 0, 1, 2, 3, 4, 5, 6
PLATT_PAIR_FRACTION = 0.1  # Platt: a pair must violate by this fraction of m - M (or tol)
# int state ist[...]
I_ACTIVE, I_ITER, I_UNSHRUNK, I_HIST, I_STRIDE, I_IMAX, I_NPEND = 0, 1, 2, 3, 4, 5, 6
STALE = -2  # ist[I_IMAX] when the argmax of -y G over I_up must be recomputed
# outcomes of the compiled drivers
OPTIMAL, MAX_ITER, INFEASIBLE, PRECISION = 0, 1, 2, 3
#: ``precision="auto"``: leave the float32 cache when its estimated rounding floor of ``m - M``
#: exceeds this fraction of ``tol``.
FLOOR_FRACTION = 0.125
#: ``precision="auto"``: at most this many float64 continuations after the float32 run.
MAX_CONTINUATIONS = 3
#: ``precision="auto"``: at most this many float32 refinements (exact gradient, warm float32
#: cache) before the float64 continuations.
MAX_REFINEMENTS = 2
#: The float32 cache is used only when ``max_i K(x_i, x_i)`` lies in this range (far from
#: float32's overflow at 3.4e38 and its subnormals below 1.2e-38); ``"auto"`` otherwise runs
#: in float64 from the start, ``"single"`` is refused.
FLOAT32_RANGE = (1e-30, 1e30)
#: Hard margin: ``sum(alpha) > SUM_CAP / (eps R)^2`` proves the hulls within ``eps R``
#: (module docstring, **Hard margin**).
SUM_CAP = 8.0 * (1.0 + 1e-6)
#: The exact finish (module docstring, **Finish**): first tried after
#: ``max(FINISH_AFTER, FINISH_AFTER_PER_POINT n)`` iterations, then after 4 times as many...
FINISH_AFTER = 200_000
FINISH_AFTER_PER_POINT = 100
#: Shrinking: the cache's layout is compacted to the active variables when fewer than this
#: fraction of its positions are active (see :mod:`maxmargin.algorithms._kernel_cache`), except
#: when the cache holds every column at the layout's length and kernel values are dear
#: (``EXPENSIVE_FEATURES`` features or more, or a kernel evaluated in Python): compaction then
#: gains no columns, and those filled on the shorter layout must be completed after unshrinking.
COMPACT_FRACTION = 0.8
EXPENSIVE_FEATURES = 64
#: When kernel values are dear (``EXPENSIVE_FEATURES`` or more, compiled kernels), the layout's
#: features outgrow the processor's caches (``PREFETCH_BYTES`` of float64) and the cache holds
#: every column at the layout's length, a missing column is computed together with the columns
#: of up to ``PREFETCH - 1`` more of the most violating uncached variables, in one pass over the
#: features (:func:`_prefetch`; the iterates are unchanged, only the cache's content).
PREFETCH = MAX_BLOCK
PREFETCH_BYTES = 8 * 2**20
#: Block length of :func:`_last_of`'s backward search (tested a block at a time).
SEARCH_BLOCK = 64


class _State(NamedTuple):
    """The solver's arrays (preallocated; shared by the compiled functions)."""

    alpha: np.ndarray
    G: np.ndarray  # gradient Q alpha - e by layout position: G[k] of variable act[k]
    G_bar: np.ndarray  # sum over alpha_j = C_j of C_j Q_:j (all rows)
    Cs: np.ndarray  # per-sample upper bounds C_i (inf for the hard margin)
    status: np.ndarray  # LOWER / UPPER / FREE
    in_up: np.ndarray  # by position: act[k] in I_up (y alpha can increase)
    in_low: np.ndarray  # by position: act[k] in I_low (y alpha can decrease); both False if shrunk
    act: np.ndarray  # the cache's layout order (KernelData.order): act[:L] holds the active
    pos: np.ndarray  # its inverse (KernelData.pos): the position of each variable
    yT: np.ndarray  # y by position (KernelData.yT)
    QDT: np.ndarray  # QD by position
    scratch: np.ndarray
    score: np.ndarray  # (n,) float64 scratch: the gains of _second_order_j, -y G of _argmax_up
    pend: np.ndarray  # G_bar outside the layout is owed sum_j pend_j Q_:j (see _owe_bounded)
    touched: np.ndarray  # the j with pend_j set, ist[I_NPEND] of them
    QD: np.ndarray  # Q_ii = K_ii in float64
    y: np.ndarray
    fs: np.ndarray  # max C_i (inf = hard margin), tol, dual objective, sum(alpha), Platt's b, m
    ist: np.ndarray  # active size, iterations, unshrunk flag, history count/stride, argmax of m
    h_iter: np.ndarray
    h_viol: np.ndarray
    h_dual: np.ndarray


# --- the pieces of one SMO step ------------------------------------------------------------


@njit(cache=True, inline="always")
def _two_variable_update(
    a_i: float, a_j: float, y_i: float, y_j: float, G_i: float, G_j: float, eta: float,
    C_i: float, C_j: float,
) -> tuple[float, float]:
    """The seed's two-variable step, in LIBSVM's exact-clipping form (see the module docstring).

    ``a_j += y_j (E_i - E_j) / eta`` with ``y_j (E_i - E_j) = y_j (y_i G_i - y_j G_j)``, i.e.
    ``(-G_i - G_j) / eta`` when ``y_i != y_j`` (``a_i - a_j`` fixed) and ``(G_i - G_j) / eta``
    when ``y_i = y_j`` (``a_i + a_j`` fixed), then both clipped to their boxes ``[0, C_i]``,
    ``[0, C_j]`` along that line (per-sample bounds, as LIBSVM's ``get_C``). ``C = inf`` (hard
    margin) leaves only the lower bounds.
    """
    if eta <= 0.0:
        eta = TAU
    if y_i != y_j:
        delta = (-G_i - G_j) / eta
        diff = a_i - a_j
        ni = a_i + delta
        nj = a_j + delta
        if diff > 0.0:
            if nj < 0.0:
                nj = 0.0
                ni = diff
        else:
            if ni < 0.0:
                ni = 0.0
                nj = -diff
        if diff > C_i - C_j:
            if ni > C_i:
                ni = C_i
                nj = C_i - diff
        else:
            if nj > C_j:
                nj = C_j
                ni = C_j + diff
    else:
        delta = (G_i - G_j) / eta
        total = a_i + a_j
        ni = a_i - delta
        nj = a_j + delta
        if total > C_i:
            if ni > C_i:
                ni = C_i
                nj = total - C_i
        else:
            if nj < 0.0:
                nj = 0.0
                ni = total
        if total > C_j:
            if nj > C_j:
                nj = C_j
                ni = total - C_j
        else:
            if ni < 0.0:
                ni = 0.0
                nj = total
    return ni, nj


@njit(cache=True, no_cpython_wrapper=True)
def _extremes(st: _State, c: ColumnCache) -> tuple[float, int, float, int]:
    """``m = max_{I_up} -y G`` and ``-M = max_{I_low} y G`` over the active set, with argmaxes."""
    G, yT, in_up, in_low = st.G, st.yT, st.in_up, st.in_low
    g_up, k_up, g_low, k_low = -np.inf, -1, -np.inf, -1
    for k in range(c.state[S_LEN]):
        v = -yT[k] * G[k]
        if in_up[k] and v >= g_up:
            g_up, k_up = v, k
        if in_low[k] and -v >= g_low:
            g_low, k_low = -v, k
    i_up = st.act[k_up] if k_up >= 0 else -1
    i_low = st.act[k_low] if k_low >= 0 else -1
    return g_up, i_up, g_low, i_low


@njit(cache=True, no_cpython_wrapper=True)
def _select_wss1(st: _State, c: ColumnCache) -> tuple[int, int, float]:
    """Maximal violating pair; ``(-1, -1, gap)`` when ``gap = m - M < tol``."""
    g_up, i, g_low, j = _extremes(st, c)
    gap = g_up + g_low
    if gap < st.fs[F_TOL] or i < 0 or j < 0:
        return -1, -1, gap
    return i, j, gap


@njit(cache=True, no_cpython_wrapper=True)
def _prefetch(st: _State, c: ColumnCache, kd: KernelData, i: int) -> bool:
    """If kernel values are dear, the features large and every column fits in the cache (see
    ``PREFETCH``), compute the missing column ``i`` together with those of the
    ``PREFETCH - 1`` most violating uncached active variables (largest ``-y_t G_t`` over
    ``I_up``, ``y_t G_t`` over ``I_low``: the candidates of the next working sets) by
    :func:`load_columns`; False (nothing done) otherwise."""
    n, d, L = st.alpha.shape[0], kd.XT.shape[0], c.state[S_LEN]
    if (d < EXPENSIVE_FEATURES or 8 * d * L < PREFETCH_BYTES or c.state[S_SLOTS] < n
            or c.slot_of[i] >= 0):
        return False
    G, yT, in_up, in_low, act = st.G, st.yT, st.in_up, st.in_low, st.act
    cols, score = c.picks[0], c.score
    cols[0] = i
    nb = np.int64(1)  # not a literal (see the note on literals)
    for k in range(L):
        t = act[k]
        if t == i or c.slot_of[t] >= 0:
            continue
        v = -yT[k] * G[k]
        s = v if in_up[k] else -np.inf
        if in_low[k] and -v > s:
            s = -v
        if s == -np.inf:
            continue
        if nb < PREFETCH:
            at = nb
            nb += 1
        elif s > score[nb - 1]:
            at = nb - 1
        else:
            continue
        while at > 1 and score[at - 1] < s:  # cols[1:nb] by decreasing score
            score[at], cols[at] = score[at - 1], cols[at - 1]
            at -= 1
        score[at], cols[at] = s, t
    load_columns(c, kd, nb)
    return True


@intrinsic
def _bits(typingctx, x):  # noqa: ANN001, ANN202
    """The IEEE bits of a float64 as an int64 (a bit cast): for ``x >= +0`` and ``x = -1`` they
    order as ``x`` does, and integer maxima vectorise where float ones do not."""
    if x != types.float64:
        return None

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        return builder.bitcast(args[0], context.get_value_type(types.int64))

    return types.int64(types.float64), codegen


@intrinsic
def _float(typingctx, b):  # noqa: ANN001, ANN202
    """:func:`_bits`' inverse."""
    if b != types.int64:
        return None

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        return builder.bitcast(args[0], context.get_value_type(types.float64))

    return types.float64(types.int64), codegen


@njit(cache=True, inline="always")
def _ordered(x: float) -> int:
    """An int64 that orders as the float64 ``x`` does, signs included (the bits of a negative
    ``x`` with all but the sign flipped; ``-0.0`` below ``+0.0``)."""
    b = _bits(x)
    return b ^ ((b >> 63) & 0x7FFFFFFFFFFFFFFF)


@njit(cache=True, inline="always")
def _unordered(o: int) -> float:
    """:func:`_ordered`'s inverse (the same flip undoes it)."""
    return _float(o ^ ((o >> 63) & 0x7FFFFFFFFFFFFFFF))


@njit(cache=True, inline="always")
def _last_of(values: np.ndarray, top: float) -> int:
    """The last ``k`` with ``values[k] == top`` (``top`` must occur): blocks of ``SEARCH_BLOCK``
    from the end are tested with a loop that vectorises (an OR over the block), then the block
    that holds ``top`` is searched backwards."""
    k = values.shape[0]
    while k > SEARCH_BLOCK:
        block = values[k - SEARCH_BLOCK : k]
        hit = False
        for t in range(block.shape[0]):  # a run-time trip count: vectorised, not unrolled
            hit |= block[t] == top
        if hit:
            break
        k -= SEARCH_BLOCK
    k -= 1
    while values[k] != top:
        k -= 1
    return k


@njit(cache=True, inline="always")
def _second_order_j(
    G: np.ndarray, yT: np.ndarray, QDT: np.ndarray, in_low: np.ndarray, Q_i: np.ndarray,
    QD_i: float, y_i: float, g_max: float, score: np.ndarray,
) -> tuple[int, float]:
    """LIBSVM's second-order choice of ``j`` for a given ``i``: the layout position ``k`` of
    the last maximum of ``score_t = b_it^2 / a_it`` over the candidates ``t`` (in ``I_low``
    with ``b_it = m + y_t G_t > 0``; ``a_it = Q_ii + Q_tt - 2 y_i y_t Q_it``, ``TAU`` if not
    positive; -1 when there are none), and ``m - M = max_t b_it`` over the candidates (0 when
    there are none: then ``m - M <= 0``).

    The scores (-1 for the others) are written to ``score`` by a loop whose every step is a
    select, with both maxima taken over the values' bits (:func:`_bits`: non-negative floats
    order as their bits), so it vectorises, reductions included; a backward search then finds
    the maximum (:func:`_last_of`).
    """
    best, gap = _bits(-1.0), np.int64(0)
    for k in range(Q_i.shape[0]):
        b_it = g_max + yT[k] * G[k]
        a_it = QD_i + QDT[k] - 2.0 * y_i * yT[k] * Q_i[k]
        a_it = a_it if a_it > 0.0 else TAU
        candidate = in_low[k] and b_it > 0.0
        v = b_it * b_it / a_it if candidate else -1.0
        score[k] = v
        best = max(best, _bits(v))
        gap = max(gap, _bits(b_it) if candidate else np.int64(0))
    top = _float(best)
    if top < 0.0:
        return -1, _float(gap)
    return _last_of(score[: Q_i.shape[0]], top), _float(gap)


@njit(cache=True, inline="always")
def _argmax_up(
    G: np.ndarray, yT: np.ndarray, in_up: np.ndarray, score: np.ndarray,
) -> tuple[float, int]:
    """``m = max_{I_up} -y_t G_t`` over the layout's ``len(G)`` positions and the last position
    that attains it, as LIBSVM's ``-y[t]*G[t] >= Gmax`` scan; ``(-inf, -1)`` if ``I_up`` is empty.

    ``score`` receives ``-y_t G_t`` (``-inf`` outside ``I_up``) by a loop of selects with an
    integer maximum over :func:`_ordered` values, which vectorises; :func:`_last_of` then finds
    the position (a float comparison: ``-0.0`` and ``+0.0`` tie there, as in LIBSVM's scan).
    """
    L = G.shape[0]
    up, best = score[:L], _ordered(-np.inf)
    for k in range(L):
        v = -yT[k] * G[k] if in_up[k] else -np.inf
        up[k] = v
        best = max(best, _ordered(v))
    g_max = _unordered(best)
    return g_max, (_last_of(up, g_max) if g_max > -np.inf else -1)


@njit(cache=True, inline="always")
def _select_wss2(st: _State, c: ColumnCache, kd: KernelData) -> tuple[int, int, float]:
    """LIBSVM's second-order working set; ``(-1, -1, gap)`` when ``gap = m - M < tol``.

    ``i = argmax_{I_up} -y_t G_t`` comes from the previous gradient update when it is fresh.
    ``j`` minimises ``-b_it^2 / a_it`` (the last of equal ones, as LIBSVM;
    :func:`_second_order_j`).
    """
    i = st.ist[I_IMAX]
    g_max = st.fs[F_GMAX]
    if i == STALE:
        g_max, i, _, _ = _extremes(st, c)
    gap, j = -np.inf, -1
    if i >= 0:
        if c.slot_of[i] < 0:
            _prefetch(st, c, kd, i)
        Q_i = get_column(c, kd, i)
        k, gap = _second_order_j(st.G, st.yT, st.QDT, st.in_low, Q_i, st.QD[i], st.y[i], g_max,
                              st.score)
        if k >= 0:
            j = st.act[k]
    if gap < st.fs[F_TOL] or j < 0:
        return -1, -1, gap
    return i, j, gap


@njit(cache=True, inline="always")
def _set_status(st: _State, t: int) -> None:
    """Status of ``alpha_t`` and its membership of ``I_up`` / ``I_low``."""
    a = st.alpha[t]
    s = UPPER if a >= st.Cs[t] else (LOWER if a <= 0.0 else FREE)
    st.status[t] = s
    positive = st.y[t] > 0
    k = st.pos[t]
    st.in_up[k] = s != (UPPER if positive else LOWER)
    st.in_low[k] = s != (LOWER if positive else UPPER)


@njit(cache=True, inline="always")
def _apply_step(
    st: _State,
    c: ColumnCache,
    kd: KernelData,
    i: int,
    j: int,
    new_i: float,
    new_j: float,
    Q_i: np.ndarray,
    Q_j: np.ndarray,
    Q_ij: float,
) -> None:
    """Move ``alpha_i, alpha_j`` to their new values and update ``G``, ``D``, status, ``G_bar``.

    ``G_t += Q_ti d_i + Q_tj d_j`` on the layout's rows (a loop that vectorises); ``D -= G_i d_i
    + G_j d_j + 1/2 (Q_ii d_i^2 + 2 Q_ij d_i d_j + Q_jj d_j^2)`` (with the old gradient). A second
    pass finds ``m = max_{I_up} -y_t G_t`` and its last argmax for the next working-set selection
    (an integer maximum over :func:`_ordered` values and :func:`_last_of`, as in
    :func:`_second_order_j`).
    """
    alpha, G, act, yT, in_up = st.alpha, st.G, st.act, st.yT, st.in_up
    d_i = new_i - alpha[i]
    d_j = new_j - alpha[j]
    st.fs[F_DUAL] -= G[st.pos[i]] * d_i + G[st.pos[j]] * d_j + 0.5 * (
        st.QD[i] * d_i * d_i + 2.0 * Q_ij * d_i * d_j + st.QD[j] * d_j * d_j
    )
    st.fs[F_SUM] += d_i + d_j
    was_upper_i = st.status[i] == UPPER
    was_upper_j = st.status[j] == UPPER
    alpha[i] = new_i
    alpha[j] = new_j
    _set_status(st, i)
    _set_status(st, j)
    L = Q_i.shape[0]
    Gl, Qi, Qj = G[:L], Q_i[:L], Q_j[:L]
    for k in range(L):  # vectorised
        Gl[k] = Gl[k] + Qi[k] * d_i + Qj[k] * d_j
    g_max, k_max = _argmax_up(Gl, yT, in_up, st.score)
    st.fs[F_GMAX] = g_max
    st.ist[I_IMAX] = act[k_max] if k_max >= 0 else -1
    for t, was_upper in ((i, was_upper_i), (j, was_upper_j)):
        if was_upper != (st.status[t] == UPPER):
            _owe_bounded(st, c, kd, t, -st.Cs[t] if was_upper else st.Cs[t])


@njit(cache=True, no_cpython_wrapper=True)
def _owe_bounded(st: _State, c: ColumnCache, kd: KernelData, t: int, coef: float) -> None:
    """``G_bar += coef Q_:t`` (``alpha_t`` reached or left its upper bound ``C_t``).

    The layout's rows are updated now from the cached column; the rows outside it are owed
    (``pend_t += coef``) until :func:`_settle_bounded` computes them, once per variable.
    """
    Q_t = get_column(c, kd, t)
    act, G_bar = st.act, st.G_bar
    for k in range(Q_t.shape[0]):
        G_bar[act[k]] += coef * Q_t[k]
    if Q_t.shape[0] == act.shape[0]:
        return
    if st.ist[I_NPEND] == act.shape[0]:
        _settle_bounded(st, c, kd)
    if st.pend[t] == 0.0:
        st.touched[st.ist[I_NPEND]] = t
        st.ist[I_NPEND] += 1
    st.pend[t] += coef


@njit(cache=True, no_cpython_wrapper=True)
def _settle_bounded(st: _State, c: ColumnCache, kd: KernelData) -> None:
    """Pay what :func:`_owe_bounded` owes: ``G_bar_t += sum_j pend_j Q_tj`` for the rows ``t``
    outside the layout (columns computed there only, rounded to the cache's dtype)."""
    L = c.state[S_LEN]
    n = st.act.shape[0]
    for q in range(st.ist[I_NPEND]):
        j = st.touched[q]
        coef = st.pend[j]
        if coef == 0.0:
            continue
        st.pend[j] = 0.0
        fill_column(kd, j, L, n, c.col)
        for k in range(L, n):
            st.G_bar[st.act[k]] += coef * c.col[k]
    st.ist[I_NPEND] = 0


@njit(cache=True, inline="always")
def _step(st: _State, c: ColumnCache, kd: KernelData, i: int, j: int) -> None:
    """One SMO iteration on the pair ``(i, j)`` (columns from the cache)."""
    if c.slot_of[j] < 0:  # before Q_i is taken: load_columns may reuse any slot
        _prefetch(st, c, kd, j)
    Q_i = get_column(c, kd, i)
    Q_j = get_column(c, kd, j)
    y = st.y
    Q_ij = float(Q_i[kd.pos[j]])
    eta = st.QD[i] + st.QD[j] - 2.0 * y[i] * y[j] * Q_ij
    new_i, new_j = _two_variable_update(
        st.alpha[i], st.alpha[j], y[i], y[j], st.G[st.pos[i]], st.G[st.pos[j]], eta, st.Cs[i],
        st.Cs[j],
    )
    _apply_step(st, c, kd, i, j, new_i, new_j, Q_i, Q_j, Q_ij)


# --- shrinking (LIBSVM's do_shrinking / reconstruct_gradient / be_shrunk) --------------------


@njit(cache=True, no_cpython_wrapper=True)
def _reconstruct_gradient(st: _State, c: ColumnCache, kd: KernelData) -> None:
    """Exact ``G`` on the rows outside the layout, then make every variable active again.

    Inside the layout ``G`` is kept exact (shrunk variables there are only left out of the
    selection). Outside it, ``G_t = G_bar_t - 1 + sum_{free j} alpha_j Q_tj``: by columns of
    the outside ``t`` over the layout, or by the free ``j``'s columns completed to all ``n``
    rows, whichever is cheaper (LIBSVM's choice); the layout then grows to all ``n``.
    """
    n = st.alpha.shape[0]
    L = c.state[S_LEN]
    if L == n and st.ist[I_ACTIVE] == n:
        return
    alpha, G, act, status = st.alpha, st.G, st.act, st.status
    if L < n:
        _settle_bounded(st, c, kd)
        for k in range(L, n):
            G[k] = st.G_bar[act[k]] - 1.0
        n_free = 0
        for k in range(L):
            if status[act[k]] == FREE:
                n_free += 1
        if n_free * n > 2 * L * (n - L):
            for k in range(L, n):
                t = act[k]
                Q_t = get_column(c, kd, t)
                s = 0.0
                for k2 in range(L):
                    u = act[k2]
                    if status[u] == FREE:
                        s += alpha[u] * Q_t[k2]
                G[k] += s
            grow_layout(c, kd, n)
        else:
            grow_layout(c, kd, n)
            for k2 in range(L):
                u = act[k2]
                if status[u] == FREE:
                    Q_u = get_column(c, kd, u)
                    a_u = alpha[u]
                    for k in range(L, n):
                        G[k] += a_u * Q_u[k]
    for t in range(n):
        _set_status(st, t)
    st.ist[I_ACTIVE] = n
    st.ist[I_IMAX] = STALE


@njit(cache=True, no_cpython_wrapper=True)
def _be_shrunk(st: _State, k: int, g_up: float, g_low: float) -> bool:
    """The variable at position ``k`` is at a bound and its gradient keeps it out of every
    violating pair."""
    s = st.status[st.act[k]]
    if s == UPPER:
        return -st.G[k] > (g_up if st.yT[k] > 0 else g_low)
    if s == LOWER:
        return st.G[k] > (g_low if st.yT[k] > 0 else g_up)
    return False


@njit(cache=True, no_cpython_wrapper=True)
def _do_shrinking(st: _State, c: ColumnCache, kd: KernelData, g_up: float, g_low: float) -> None:
    """Leave out of the selection the variables :func:`_be_shrunk` says cannot move (with
    ``m = g_up``, ``-M = g_low`` from before the call), and compact the cache's layout to the
    active ones when they are fewer than ``COMPACT_FRACTION`` of it."""
    act, perm, in_up, in_low = st.act, st.scratch, st.in_up, st.in_low
    L = c.state[S_LEN]
    kept = np.int64(0)
    for k in range(L):
        if not (in_up[k] or in_low[k]):
            continue
        if _be_shrunk(st, k, g_up, g_low):
            in_up[k] = in_low[k] = False
        else:
            perm[kept] = k
            kept += 1
    st.ist[I_ACTIVE] = kept
    st.ist[I_IMAX] = STALE
    roomy = c.state[S_SLOTS] >= act.shape[0]  # every column fits at the current length
    dear = kd.kind == 3 or kd.XT.shape[0] >= EXPENSIVE_FEATURES
    if 0 < kept < COMPACT_FRACTION * L and not (roomy and dear):
        _settle_bounded(st, c, kd)
        dropped = kept
        for k in range(L):
            if not (in_up[k] or in_low[k]):
                perm[dropped] = k
                dropped += 1
        permute_prefix(st.G, perm[:L], kd.dots)
        permute_prefix(st.QDT, perm[:L], kd.dots)
        compact_layout(c, kd, perm[:L], kept)
        for k in range(L):  # the kept are the active ones, the others shrunk
            if k < kept:
                _set_status(st, act[k])
            else:
                in_up[k] = in_low[k] = False


# --- history, hard-margin check ----------------------------------------------------------


@njit(cache=True)
def _record(st: _State, gap: float, force: bool) -> None:
    """Store ``(iteration, gap, D)`` every ``stride`` iterations; thin by 2 when full."""
    it = st.ist[I_ITER]
    if not force and it % st.ist[I_STRIDE] != 0:
        return
    h = st.ist[I_HIST]
    if h > 0 and st.h_iter[h - 1] == it:
        h -= 1  # the same iteration again (the final point): overwrite
    elif h == HISTORY_CAP and not force:
        for k in range(HISTORY_CAP // 2):
            st.h_iter[k] = st.h_iter[2 * k]
            st.h_viol[k] = st.h_viol[2 * k]
            st.h_dual[k] = st.h_dual[2 * k]
        h = HISTORY_CAP // 2
        st.ist[I_STRIDE] *= 2
        if it % st.ist[I_STRIDE] != 0:
            st.ist[I_HIST] = h
            return
    st.h_iter[h] = it
    st.h_viol[h] = gap
    st.h_dual[h] = st.fs[F_DUAL]
    st.ist[I_HIST] = h + 1


@njit(cache=True, no_cpython_wrapper=True)
def _hulls_may_be_within(st: _State, bound2: float) -> bool:
    """Hard margin: may the hull-distance bound ``delta^2 = 4 ||w||^2 / sum(alpha)^2`` be at
    most ``bound2``? A screen with the tracked ``||w||^2 = 2 (sum(alpha) - D)``."""
    total = st.fs[F_SUM]
    return total > 0.0 and 8.0 * (total - st.fs[F_DUAL]) <= bound2 * total * total * (1.0 + 1e-6)


@njit(cache=True, no_cpython_wrapper=True)
def _hulls_within(st: _State, bound2: float) -> bool:
    """Hard margin: ``delta^2 <= bound2`` confirmed with the full gradient, ``||w||^2 = sum_t
    alpha_t (G_t + 1)`` (after :func:`_reconstruct_gradient`)."""
    w2 = 0.0
    total = 0.0
    for k in range(st.alpha.shape[0]):
        t = st.act[k]
        w2 += st.alpha[t] * (st.G[k] + 1.0)
        total += st.alpha[t]
    return total > 0.0 and 4.0 * w2 <= bound2 * total * total


@njit(cache=True)
def _float32_floor(st: _State) -> float:
    """``sqrt(sum_t alpha_t^2)``: times ``2^-24 max_t K_tt`` it estimates the rounding of ``G``.

    Each ``G_i`` is ``sum_j alpha_j Q_ij`` with every ``Q_ij`` rounded to float32 (relative
    ``2^-24``, ``|Q_ij| <= max_t K_tt``); independent roundings add up like a random walk.
    """
    s = 0.0
    for t in range(st.alpha.shape[0]):
        s += st.alpha[t] * st.alpha[t]
    return math.sqrt(s)


# --- the drivers ----------------------------------------------------------------------------


# The drivers are compiled without Numba's reference counting (_nrt=False): they allocate
# nothing, and every array in the state tuples outlives them; with it, each access to a tuple's
# array cost an atomic incref/decref, about 0.5 us per iteration (measured with perf: 30 % of
# the samples in NRT_incref; 0.65 -> 0.15 us per iteration on n = 50).
@njit(cache=True, _nrt=False)
def _solve_pairs(
    st: _State,
    c: ColumnCache,
    kd: KernelData,
    second_order: bool,
    shrinking: bool,
    max_iter: int,
    hull_bound2: float,
    floor_coeff: float,
) -> int:
    """LIBSVM's ``Solver::Solve`` loop with the ``wss2`` or ``wss1`` working set.

    With ``floor_coeff > 0`` (a float32 cache), every ``min(n, 1000)`` iterations the rounding
    floor of the cached gradient is estimated (:func:`_float32_floor`); the loop returns
    ``PRECISION`` when it is no longer far below ``tol``.
    """
    n = st.alpha.shape[0]
    hard = math.isinf(st.fs[F_C])
    period = min(n, 1000)
    counter = period + 1
    outcome = OPTIMAL
    while True:
        if st.ist[I_ITER] >= max_iter:
            outcome = MAX_ITER
            break
        if hard and st.fs[F_SUM] * hull_bound2 > SUM_CAP:
            outcome = INFEASIBLE  # the hull bound by the sum alone (module docstring)
            break
        counter -= 1
        if counter == 0:
            counter = period
            if shrinking:
                g_up, _, g_low, _ = _extremes(st, c)
                if st.ist[I_UNSHRUNK] == 0 and g_up + g_low <= 10.0 * st.fs[F_TOL]:
                    st.ist[I_UNSHRUNK] = 1  # unshrink once, as LIBSVM, before the final steps
                    _reconstruct_gradient(st, c, kd)
                _do_shrinking(st, c, kd, g_up, g_low)
            if hard and _hulls_may_be_within(st, hull_bound2):
                _reconstruct_gradient(st, c, kd)
                if _hulls_within(st, hull_bound2):
                    outcome = INFEASIBLE
                    break
            if floor_coeff > 0.0 and floor_coeff * _float32_floor(st) > FLOOR_FRACTION * st.fs[
                F_TOL
            ]:
                outcome = PRECISION
                break
        if second_order:
            i, j, gap = _select_wss2(st, c, kd)
        else:
            i, j, gap = _select_wss1(st, c)
        if i < 0:
            _reconstruct_gradient(st, c, kd)
            if second_order:
                i, j, gap = _select_wss2(st, c, kd)
            else:
                i, j, gap = _select_wss1(st, c)
            if i < 0:
                break
            counter = 1  # shrink at the next iteration
        if st.ist[I_ITER] % st.ist[I_STRIDE] == 0:
            _record(st, gap, PERIODIC)
        st.ist[I_ITER] += 1
        _step(st, c, kd, i, j)
    _reconstruct_gradient(st, c, kd)
    return outcome


@njit(cache=True, no_cpython_wrapper=True)
def _platt_take_step(st: _State, c: ColumnCache, kd: KernelData, i1: int, i2: int) -> bool:
    """Platt's ``takeStep``: the two-variable update unless it makes no progress; updates ``b``.

    The pair must be a ``tau``-violating pair (one in ``I_up``, the other in ``I_low``, with
    ``-y G`` larger by more than ``tau`` on the ``I_up`` side), ``tau = max(tol, 0.1 (m - M))``
    with ``m - M`` from the end of the previous pass. Each accepted step then gains a fixed
    amount, so the loop terminates (Keerthi & Gilbert 2002), and Platt's loop over the free
    variables does not grind through pairs whose violation is negligible next to the worst one
    (with the plain heuristic it can take endless tiny steps there). Platt's own test
    ``|a2 - a2_old| < eps (a2 + a2_old + eps)`` is kept.
    ``b`` (seed 004): ``b_k = y_k - g_k = -y_k G_k`` for a free one of the pair (the mean if both
    are free), else the mean of the two.
    """
    if i1 == i2:
        return False
    y, alpha, G = st.y, st.alpha, st.G
    k1, k2 = st.pos[i1], st.pos[i2]
    v1, v2, tol = -y[i1] * G[k1], -y[i2] * G[k2], st.fs[F_PAIR]
    if not (
        (st.in_up[k1] and st.in_low[k2] and v1 - v2 > tol)
        or (st.in_up[k2] and st.in_low[k1] and v2 - v1 > tol)
    ):
        return False
    Q_12 = y[i1] * y[i2] * kernel_value(kd, i1, i2)
    eta = st.QD[i1] + st.QD[i2] - 2.0 * y[i1] * y[i2] * Q_12
    a1, a2 = _two_variable_update(
        alpha[i1], alpha[i2], y[i1], y[i2], G[k1], G[k2], eta, st.Cs[i1], st.Cs[i2]
    )
    if abs(a2 - alpha[i2]) < PLATT_EPS * (a2 + alpha[i2] + PLATT_EPS):
        return False
    Q_1 = get_column(c, kd, i1)
    Q_2 = get_column(c, kd, i2)
    if st.ist[I_ITER] % st.ist[I_STRIDE] == 0:
        _record(st, _violation(st, c), PERIODIC)
    st.ist[I_ITER] += 1
    _apply_step(st, c, kd, i1, i2, a1, a2, Q_1, Q_2, Q_12)
    b1, b2 = -y[i1] * G[k1], -y[i2] * G[k2]
    free1, free2 = st.status[i1] == FREE, st.status[i2] == FREE
    if free1 and not free2:
        st.fs[F_B] = b1
    elif free2 and not free1:
        st.fs[F_B] = b2
    else:
        st.fs[F_B] = 0.5 * (b1 + b2)
    return True


@njit(cache=True, no_cpython_wrapper=True)
def _platt_examine(st: _State, c: ColumnCache, kd: KernelData, i2: int) -> int:
    """Platt's ``examineExample``: 1 if a step was taken with ``i2`` as the second variable."""
    y, alpha, G, status = st.y, st.alpha, st.G, st.status
    n = alpha.shape[0]
    b = st.fs[F_B]
    G2 = G[st.pos[i2]]
    r2 = G2 + y[i2] * b  # y2 E2 = y2 f(x2) - 1
    ktol = 0.5 * st.fs[F_TOL]
    if not ((r2 < -ktol and alpha[i2] < st.Cs[i2]) or (r2 > ktol and alpha[i2] > 0.0)):
        return 0
    e2 = y[i2] * G2  # E2 - b
    n_free, best, i1 = 0, -1.0, np.int64(-1)
    for t in range(n):
        if status[t] == FREE:
            n_free += 1
            gap = abs(y[t] * G[st.pos[t]] - e2)
            if gap > best:
                best, i1 = gap, t
    if n_free > 1 and _platt_take_step(st, c, kd, i1, i2):
        return 1
    for free_only in (True, False):
        start = np.random.randint(0, n)  # noqa: NPY002
        for k in range(n):
            t = (start + k) % n
            if (status[t] == FREE or not free_only) and _platt_take_step(st, c, kd, t, i2):
                return 1
    return 0


@njit(cache=True)
def _violation(st: _State, c: ColumnCache) -> float:
    """``m(alpha) - M(alpha)`` over the active set."""
    g_up, _, g_low, _ = _extremes(st, c)
    return g_up + g_low


@njit(cache=True, _nrt=False)  # see _solve_pairs
def _solve_platt(
    st: _State, c: ColumnCache, kd: KernelData, max_iter: int, hull_bound2: float, seed: int
) -> int:
    """Platt's outer loop (seed 004) with the honest ``m - M < tol`` stop (module docstring)."""
    np.random.seed(seed)  # noqa: NPY002 (Numba's generator is the legacy global one)
    n = st.alpha.shape[0]
    hard = math.isinf(st.fs[F_C])
    examine_all = True
    st.fs[F_PAIR] = max(st.fs[F_TOL], PLATT_PAIR_FRACTION * _violation(st, c))
    while True:
        changed = 0
        for t in range(n):
            if st.ist[I_ITER] >= max_iter:
                break
            if hard and st.fs[F_SUM] * hull_bound2 > SUM_CAP:
                return INFEASIBLE  # the hull bound by the sum alone (module docstring)
            if examine_all or st.status[t] == FREE:
                changed += _platt_examine(st, c, kd, t)
        gap = _violation(st, c)
        if gap < st.fs[F_TOL]:
            return OPTIMAL
        st.fs[F_PAIR] = max(st.fs[F_TOL], PLATT_PAIR_FRACTION * gap)
        if st.ist[I_ITER] >= max_iter:
            return MAX_ITER
        if hard and _hulls_may_be_within(st, hull_bound2):
            _reconstruct_gradient(st, c, kd)
            if _hulls_within(st, hull_bound2):
                return INFEASIBLE
        if examine_all:
            if changed == 0:
                i, j, gap = _select_wss1(st, c)
                _record(st, gap, PERIODIC)
                st.ist[I_ITER] += 1
                _step(st, c, kd, i, j)
            examine_all = False
        elif changed == 0:
            examine_all = True


# --- the public function ---------------------------------------------------------------------


def _new_state(
    kd: KernelData, QD: np.ndarray, C: float | np.ndarray | None, tol: float, stride: int
) -> _State:
    y = kd.y
    QD = np.ascontiguousarray(QD, dtype=np.float64)
    n = y.shape[0]
    Cs = np.full(n, math.inf) if C is None else np.array(np.broadcast_to(C, (n,)), dtype=float)
    fs = np.zeros(7)
    fs[F_C] = math.inf if C is None else float(Cs.max())
    fs[F_TOL] = tol
    ist = np.zeros(7, dtype=np.int64)
    ist[I_IMAX] = STALE
    ist[I_ACTIVE] = n
    ist[I_STRIDE] = stride
    return _State(
        alpha=np.zeros(n),
        G=-np.ones(n),
        G_bar=np.zeros(n),
        Cs=Cs,
        status=np.full(n, LOWER, dtype=np.int8),
        in_up=kd.yT > 0,
        in_low=kd.yT < 0,
        act=kd.order,
        pos=kd.pos,
        yT=kd.yT,
        QDT=QD[kd.order],
        scratch=np.empty(n, dtype=np.int64),
        score=np.empty(n),
        pend=np.zeros(n),
        touched=np.zeros(n, dtype=np.int64),
        QD=QD,
        y=y,
        fs=fs,
        ist=ist,
        h_iter=np.zeros(HISTORY_CAP + 1, dtype=np.int64),
        h_viol=np.zeros(HISTORY_CAP + 1),
        h_dual=np.zeros(HISTORY_CAP + 1),
    )


def smo(
    X: Any,
    y: Any,
    C: float | None = 1.0,
    kernel: str | Kernel = "linear",
    tol: float = 1e-3,
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
) -> SVMSolution:
    """Solve the SVM dual by SMO (LIBSVM's algorithm; see the module docstring for the formulas).

    Parameters
    ----------
    X : (n, d) array
    y : (n,) array of -1/+1
    C : float or None
        Box bound ``0 <= alpha_i <= C_i = C sample_weight_i``; ``None`` is the hard margin (see
        the infeasibility rule).
    kernel : {"linear", "rbf", "poly"} or a maxmargin kernel object
        With ``gamma``, ``degree``, ``coef0`` as in scikit-learn's SVC.
    tol : float
        Stop when ``m(alpha) - M(alpha) < tol`` (LIBSVM's ``eps``, SVC's ``tol``).
    max_iter : int or None
        Iteration cap; ``None`` is LIBSVM's ``max(10_000_000, 100 n)``.
    working_set : {"wss2", "wss1", "platt"}
        Second-order (LIBSVM), maximal violating pair, or the seed's (Platt's) heuristic.
    cache_size : float
        Kernel cache budget in MB: ``cache_size 2^20 / (itemsize L)`` columns of the layout's
        length ``L`` (``n`` at first, the active set's size once shrinking has compacted it),
        itemsize 4 for "single" and 8 for "double" (at least two columns are always kept).
    shrinking : bool
        LIBSVM's shrinking heuristic (``"wss2"``/``"wss1"``; Platt's loop has its own focus on
        the free variables and ignores it).
    history_every : int
        Initial recording stride of ``history`` (doubled whenever 2048 points are stored).
    precision : {"auto", "single", "double"}
        dtype of the cached ``Q``. ``"auto"`` (default): float32 (LIBSVM's speed), then, when the
        float64 certificate (or the estimated float32 rounding floor) says the float32 cache
        hides violations, a continuation from the current alpha with the exact gradient (float32
        with the warm cache when its measured error is small, else float64). ``"single"``/
        ``"double"``: one cache dtype throughout. See the module docstring (**Precision**).
    sample_weight : (n,) array of positive numbers, optional
        Per-sample bounds ``C_i = C sample_weight_i`` (LIBSVM's weighted C; SVC's
        ``sample_weight``). Ignored by the hard margin.
    finish : bool
        Hand a run that has not converged at a checkpoint or at ``max_iter`` to the exact
        active-set finish (module docstring, **Finish**; default True). False runs SMO alone.

    Returns
    -------
    SVMSolution
        ``method="smo/<working_set>"``; ``status`` is ``"optimal"`` only when the float64
        certificate (``solution.certificate``, :func:`maxmargin.certificate.certify_svm`) has
        ``m - M < tol``; else ``"inaccurate"`` or ``"max_iter"`` (with a
        :class:`ConvergenceWarning`), or ``"infeasible"`` (hard margin, non-separable data).
        ``b``, ``dual_objective`` and ``primal_objective = 1/2 ||w||^2 + C sum_t max(0, 1 -
        y_t f(x_t))`` come from ``g = K (alpha y)`` recomputed in float64. ``history`` is in the
        solver's arithmetic (the cache's precision).
    """
    kernel, X = precomputed(kernel, X)  # "precomputed": the Gram matrix and indices
    X, y = check_Xy(X, y, sparse=True, points=own_points(kernel))
    C = check_C(C)
    sw = check_sample_weight(sample_weight, y)
    box = None if C is None else (C if sw is None else C * sw)
    kern = make_kernel(kernel, gamma=gamma, degree=degree, coef0=coef0, X=X)
    tol = check_positive(tol, "tol")
    n = X.shape[0]
    max_iter = check_max_iter(max_iter, default=max(10_000_000, 100 * n))
    working_set = check_choice(working_set, "working_set", WORKING_SETS)
    cache_size = check_positive(cache_size, "cache_size")
    shrinking = check_bool(shrinking, "shrinking")
    history_every = check_positive_int(history_every, "history_every")
    precision = check_choice(precision, "precision", PRECISIONS)
    kd = make_kernel_data(kern, X, y)

    start = time.perf_counter()
    QD = kern.diag(X)
    radius2 = float(np.max(QD))
    first = precision
    if not FLOAT32_RANGE[0] <= radius2 <= FLOAT32_RANGE[1]:
        if precision == "single":
            raise ValueError(
                f"`precision`='single' keeps kernel values in float32, which cannot hold these "
                f"(max K(x, x) = {radius2:.3g} is outside [{FLOAT32_RANGE[0]:g}, "
                f"{FLOAT32_RANGE[1]:g}]): use 'auto' or 'double', or rescale `X`."
            )
        first = "double"  # "auto": no float32 phase
    st = _new_state(kd, QD, box, tol, history_every)
    run = _Run(st, kd, kern, X, y, C, sw, tol, working_set, shrinking, max_iter, cache_size,
               radius2)
    run.finish_enabled = check_bool(finish, "finish")
    outcome = run.solve(first)
    g, cert = run.certify()
    rounds = refinements = 0
    while first == "auto" and rounds < MAX_CONTINUATIONS and (
        (outcome in (OPTIMAL, PRECISION) and not cert.kkt_violation < tol)
        # float32 cannot resolve hull distances below 1e-3 R: re-check in float64 unless the
        # float64 bound already shows the hulls within 1e-4 R
        or (outcome == INFEASIBLE and rounds == 0
            and _hull_bound(st.alpha, y, g) > HARD_MARGIN_HULL_EPS_DOUBLE * math.sqrt(radius2))
    ):
        # a continuation from the current alpha with the exact float64 gradient (warm start):
        # with the warm float32 cache (iterative refinement) when the float32 gradient's
        # measured error is far below tol, else with a float64 cache
        drift = float(np.max(np.abs(st.G - (y * g - 1.0)[st.act])))
        refine = (refinements < MAX_REFINEMENTS and drift <= FLOOR_FRACTION * tol and (
            (outcome == OPTIMAL and run.phases[-1].startswith("float32"))
            or (outcome == PRECISION and run.phases[-1] == "float32")))
        run.restart_from(g)
        if refine:  # the floor estimate, calibrated by the error measured at this alpha
            run.floor_coeff = drift / max(_float32_floor(st), 1e-300)
            outcome = run.solve("auto", refine=True)
            refinements += 1
        else:
            outcome = run.solve("double")
            rounds += 1
        g, cert = run.certify()
    if (C is None and outcome != INFEASIBLE and not cert.meets(tol)
            and _hull_bound(st.alpha, y, g) <= HARD_MARGIN_HULL_EPS * math.sqrt(radius2)):
        outcome = INFEASIBLE  # the float64 bound on the hull distance is the certificate
        run.hull_eps = HARD_MARGIN_HULL_EPS
    return run.finish(outcome, g, cert, start, precision)


def _hull_bound(alpha: np.ndarray, y: np.ndarray, g: np.ndarray) -> float:
    """``delta(alpha) = ||w|| / s`` with ``s = sum(alpha) / 2``, in float64 from ``g = K v``:
    an upper bound on the distance of the classes' hulls (module docstring, **Hard margin**)."""
    total = float(alpha.sum())
    if total <= 0.0:
        return math.inf
    return 2.0 * math.sqrt(max(float((alpha * y) @ g), 0.0)) / total


class _Certified(NamedTuple):
    """What the last :meth:`_Run.certify` computed, for the next one and for
    :meth:`_Run.restart_from`."""

    alpha: np.ndarray  # a copy of alpha then
    at: np.ndarray  # alpha >= C then
    g_bounded: np.ndarray  # sum_{alpha_j = C_j} C_j y_j K(x_j, .)
    g: np.ndarray  # K (alpha o y)


class _Run:
    """One SMO run: the state, its kernel, and the phases (float32, float64 continuations)."""

    def __init__(
        self, st: _State, kd: KernelData, kern: Kernel, X: np.ndarray, y: np.ndarray,
        C: float | None, sw: np.ndarray | None, tol: float, working_set: str, shrinking: bool,
        max_iter: int, cache_size: float, radius2: float,
    ) -> None:
        self.st, self.kd, self.kern, self.X, self.y, self.C = st, kd, kern, X, y, C
        self.sample_weight = sw
        self.box = None if C is None else st.Cs  # per-sample bounds C_i
        self.tol, self.working_set, self.shrinking = tol, working_set, shrinking
        self.max_iter, self.cache_size, self.radius2 = max_iter, cache_size, radius2
        self.cache: ColumnCache | None = None
        self.phases: list[str] = []
        self.finished = ""  # what the exact finish did, for the message
        self.finish_enabled = True
        self.start = time.perf_counter()
        #: ``precision="auto"``: the float32 rounding floor of ``m - M`` is estimated as this
        #: times ``sqrt(sum alpha^2)`` (``_float32_floor``; recalibrated by a refinement)
        self.floor_coeff = 2.0**-24 * radius2
        self._last_certified: _Certified | None = None

    def solve(self, precision: str, refine: bool = False) -> int:
        """Run the chosen loop with a fresh ``precision`` cache (``refine``: the last one, still
        warm) until it stops; a run that reaches a checkpoint (``FINISH_AFTER``...) without
        converging is handed to the exact finish, and goes on from where it was (same cache)
        if that does not certify it."""
        n = self.st.alpha.shape[0]
        checkpoint, keep_cache = self.max_iter, refine
        if self.finish_enabled:
            checkpoint = max(FINISH_AFTER, FINISH_AFTER_PER_POINT * n)
        while True:
            outcome = self._loop(precision, min(checkpoint, self.max_iter), keep_cache, refine)
            keep_cache = True
            if outcome != MAX_ITER or not self.finish_enabled:
                return outcome
            if self.finish_exactly():
                return OPTIMAL
            if int(self.st.ist[I_ITER]) >= self.max_iter:
                return outcome
            self.restart_from(self.certify()[0])
            checkpoint *= 4

    def _loop(self, precision: str, cap: int, keep_cache: bool, refine: bool) -> int:
        """The compiled loop with a fresh ``precision`` cache (``keep_cache``: the current one,
        in a new epoch), to at most ``cap`` iterations; ``refine`` names the phase."""
        st, kd = self.st, self.kd
        n = st.alpha.shape[0]
        dtype = _CACHE_DTYPE[precision]
        if keep_cache and self.cache is not None and self.cache.data.dtype == dtype:
            grow_layout(self.cache, kd, n)  # every variable is active again
        else:
            self.cache = make_cache(n, self.cache_size, dtype)
        phase = "float64" if precision == "double" else "float32"
        if refine:
            phase += " refinement"
        self.hull_eps = _HULL_EPS[precision]
        hull_bound2 = (self.hull_eps**2) * self.radius2
        floor_coeff = self.floor_coeff if precision == "auto" else 0.0
        if not self.phases or self.phases[-1] != phase:
            self.phases.append(phase)
        driver = _solve_platt if self.working_set == "platt" else _solve_pairs
        note_compile(driver, "SMO's loops", "10-20 s")
        with python_kernel(kd, self.kern, self.X):
            if self.working_set == "platt":
                return _solve_platt(st, self.cache, kd, cap, hull_bound2, 0)
            return _solve_pairs(
                st, self.cache, kd, self.working_set == "wss2", self.shrinking, cap,
                hull_bound2, floor_coeff,
            )

    def finish_exactly(self) -> bool:
        """The exact finish (module docstring, **Finish**): the active-set method from the
        current alpha (:func:`~maxmargin.algorithms.active_set.finish_alpha`); kept, and True,
        only if its float64 certificate meets ``tol``."""
        alpha = self.st.alpha
        # at most half the time SMO has run so far (at least 0.2 s): never a slowdown of more
        # than 1.5x when the finish does not succeed
        budget = max(0.2, 0.5 * (time.perf_counter() - self.start))
        done = finish_alpha(alpha, self.X, self.y, self.box, self.kern,
                            accept=lambda cert: cert.meets(self.tol), seconds=budget,
                            kkt_tol=0.25 * self.tol)
        if done is None:
            return False
        alpha[:] = done.alpha
        self.finished = (f"; finished exactly by the active-set method (from {done.n_free} free "
                         f"alphas at iteration {int(self.st.ist[I_ITER])})")
        return True

    def certify(self) -> tuple[np.ndarray, Certificate]:
        """``g = K (alpha y)`` in float64 (blocked) and the certificate of the current alpha.

        ``g`` is summed from the bounded and the free support vectors (linear kernel: ``X w``
        over all of them at once), and the bounded part ``g_B = sum_{alpha_j = C_j} C_j y_j
        K(x_j, .)`` is kept for :meth:`restart_from` (its ``G_bar``), so a continuation needs no
        second kernel pass. After a continuation that moved few alphas (set ``S``), both are
        updated instead: ``g += K(., X_S) (d_alpha_S o y_S)``, and ``g_B`` by the columns that
        entered or left the bound."""
        alpha, X, y, C = self.st.alpha, self.X, self.y, self.box
        at = np.zeros(alpha.shape, dtype=bool) if C is None else alpha >= C
        last = self._last_certified
        if self.kern.kernel_id != 0 and last is not None:
            moved = np.flatnonzero(alpha != last.alpha)
            crossed = np.flatnonzero(at != last.at)
            if moved.size + crossed.size < np.count_nonzero(alpha):
                d = (alpha[moved] - last.alpha[moved]) * y[moved]
                g = last.g + decision_values(self.kern, X, X[moved], d)
                g_at = last.g_bounded
                if crossed.size:  # +C_j y_j K(x_j, .) entering the bound, - leaving it
                    sign = np.where(at[crossed], 1.0, -1.0)
                    g_at = g_at + decision_values(self.kern, X, X[crossed],
                                                  sign * C[crossed] * y[crossed])
                return self._certified(at, g_at, g)
        free = np.flatnonzero((alpha > 0) & ~at)
        bounded = np.flatnonzero(at)
        g_at = decision_values(self.kern, X, X[bounded], alpha[bounded] * y[bounded])
        if self.kern.kernel_id == 0:  # X w over all support vectors: as cheap as the two parts,
            sv = np.flatnonzero(alpha > 0)  # and free of their cancellation on unscaled data
            g = decision_values(self.kern, X, X[sv], alpha[sv] * y[sv])
        else:
            g = g_at + decision_values(self.kern, X, X[free], alpha[free] * y[free])
        return self._certified(at, g_at, g)

    def _certified(
        self, at: np.ndarray, g_at: np.ndarray, g: np.ndarray
    ) -> tuple[np.ndarray, Certificate]:
        """Keep :class:`_Certified` for the next :meth:`certify` and :meth:`restart_from`;
        return ``g`` and the certificate."""
        alpha = self.st.alpha
        self._last_certified = _Certified(alpha.copy(), at, g_at, g)
        return g, certify_svm(alpha, self.X, self.y, self.box, self.kern, g=g)

    def restart_from(self, g: np.ndarray) -> None:
        """Reset the solver's state around the current alpha: exact ``G = y g - 1`` and
        ``G_bar``, every variable active, statuses from alpha (the iteration count and history
        go on)."""
        st, y, C = self.st, self.y, self.box
        alpha = st.alpha
        n = alpha.shape[0]
        st.G[:] = (y * g - 1.0)[st.act]  # by layout position
        if C is None:
            st.G_bar[:] = 0.0
        elif (last := self._last_certified) is not None and np.array_equal(last.alpha, alpha):
            st.G_bar[:] = y * last.g_bounded  # from the certificate's kernel pass
        else:
            at = np.flatnonzero(alpha >= C)
            st.G_bar[:] = y * decision_values(self.kern, self.X, self.X[at], C[at] * y[at])
        upper = np.inf if C is None else C
        status = np.where(alpha >= upper, UPPER, np.where(alpha <= 0.0, LOWER, FREE))
        st.status[:] = status
        pos = y > 0
        st.in_up[:] = np.where(pos, status != UPPER, status != LOWER)[st.act]
        st.in_low[:] = np.where(pos, status != LOWER, status != UPPER)[st.act]
        st.pend[:] = 0.0  # G_bar is exact on every row
        st.ist[I_NPEND] = 0
        st.fs[F_SUM] = float(alpha.sum())
        st.fs[F_DUAL] = float(alpha.sum()) - 0.5 * float((alpha * y) @ g)
        st.ist[I_ACTIVE] = n
        st.ist[I_UNSHRUNK] = 0
        st.ist[I_IMAX] = STALE

    def finish(
        self, outcome: int, g: np.ndarray, cert: Certificate, start: float, precision: str
    ) -> SVMSolution:
        """The :class:`SVMSolution`: ``b`` and objectives from the float64 ``g``, status from
        the certificate (module docstring, **Certificate**)."""
        st, X, y, C, tol = self.st, self.X, self.y, self.box, self.tol
        alpha = st.alpha
        cache = self.cache
        solver_gap = float(_violation(st, cache))
        _record(st, solver_gap, True)
        h = int(st.ist[I_HIST])
        history = {
            "iteration": st.h_iter[:h].copy(),
            "violation": st.h_viol[:h].copy(),
            "dual_objective": st.h_dual[:h].copy(),
        }
        b, interval = recover_intercept(alpha, y, g, C)
        w = X.T @ (alpha * y) if self.kern.kernel_id == 0 else None
        w2 = max(float((alpha * y) @ g), 0.0)
        slack = 0.0 if C is None else float(C @ np.maximum(0.0, 1.0 - y * (g + b)))
        iterations = int(st.ist[I_ITER])
        hits, misses = int(cache.state[S_HITS]), int(cache.state[S_MISSES])
        dtype = "float32" if cache.data.dtype == np.float32 else "float64"
        full = n_slots_for(alpha.shape[0], self.cache_size, cache.data.dtype.itemsize)
        stats = (
            f"{iterations} iterations ({' then '.join(self.phases)} kernel cache), solver's "
            f"m - M = {solver_gap:.3g}, last cache {full} columns of {dtype} at full length, "
            f"more as the active set shrinks ({hits} hits, {misses} misses){self.finished}; "
            f"{cert.summary()}"
        )
        status, message = _status(outcome, cert, tol, precision, iterations, self.hull_eps,
                                  dtype, stats)
        return SVMSolution(
            alpha=alpha, b=b, w=w, dual_objective=cert.dual_objective,
            primal_objective=0.5 * w2 + slack, status=status, iterations=iterations,
            method=f"smo/{self.working_set}", history=history, X_train=X, y_train=y,
            kernel=self.kern, C=self.C, b_interval=interval, message=message,
            sample_weight=self.sample_weight,
            runtime=time.perf_counter() - start, certificate=cert, tol=tol,
        )


def _status(
    outcome: int, cert: Certificate, tol: float, precision: str, iterations: int,
    hull_eps: float, dtype: str, stats: str,
) -> tuple[str, str]:
    """Status and message of a finished run; warns :class:`ConvergenceWarning` unless it is
    ``"optimal"`` or ``"infeasible"``."""
    if outcome == INFEASIBLE:
        return "infeasible", (
            "hard margin: the classes' convex hulls (in feature space) are within "
            f"{hull_eps:g} R of each other (R = max ||phi(x)||): not separable, or only with a "
            f"geometric margin below ~{hull_eps / 2:.2g} R, which the {dtype} kernel cache is not "
            f"trusted to resolve. Use a finite C. {stats}."
        )
    if outcome == MAX_ITER and not cert.meets(tol):
        warnings.warn(
            f"smo stopped at max_iter={iterations} with m - M = {cert.kkt_violation:.3g} "
            f">= tol = {tol:g} (float64).",
            exceptions.ConvergenceWarning,
            stacklevel=4,
        )
        return "max_iter", f"reached max_iter before m - M < tol = {tol:g}; {stats}."
    if cert.meets(tol):
        return "optimal", f"m - M < tol = {tol:g} in float64; {stats}."
    if precision == "single":
        advice = ("the float32 kernel cache's rounding hides violations of this size: use "
                  "precision='auto' (the default) or 'double', or scale the features")
    else:
        advice = ("float64 continuations did not certify it: scale the features, lower C, or "
                  "use precision='double' with a larger max_iter")
    warnings.warn(
        f"smo: the answer is not certified: float64 m - M = {cert.kkt_violation:.3g} >= tol = "
        f"{tol:g} (feasibility {cert.feasibility:.3g}); {advice}.",
        exceptions.ConvergenceWarning,
        stacklevel=4,
    )
    return "inaccurate", f"not certified ({advice}); {stats}."
