"""The precision policy: which kernel-cache precision each phase of a run uses.

``precision="single"`` (LIBSVM's ``Qfloat``) caches ``Q`` in float32: ``G`` and ``alpha`` are
float64, but ``G = Q alpha - e`` is then the exact gradient of the float32-rounded problem.
With ``|dQ_ij| <= 2^-24 max_t K_tt``, each ``G_i`` is off by up to about ``2^-24 max_t K_tt
sum(alpha)``, and ``m - M`` by twice that: an accuracy floor, which can hide violations above
``tol`` (the solver's stop test passes, the float64 certificate does not), or make ``m - M <
tol`` unreachable. ``"double"`` caches float64 (half the columns per MB), lowering the floor by
``2^29``.

``"auto"`` (the default) runs a small soft-margin problem of an rbf, poly or sigmoid kernel
(``DOUBLE_FIRST_KINDS``) in float64 from the start: when the float64 ``Q`` of the whole
problem, ``8 n^2`` bytes, is at most ``DOUBLE_FIRST_BYTES`` and within the cache budget, every
column fits either way, float32 saves nothing, and its rounding floor would only cost
continuations (and keep the float64 certificate from the cached columns,
:meth:`~.solver.Solver.kernel_sums`). Any other problem it runs in float32, stopping early
(``PRECISION``) when the estimated floor ``2^-24 max K_tt ||alpha||`` exceeds ``FLOOR_FRACTION
tol``, and then, while the float64 certificate does not meet ``tol``, continues from the
current alpha with the exact float64 gradient: in float32 with the warm cache (a
*refinement*, at most ``MAX_REFINEMENTS``) when the measured error of the float32 gradient is
at most ``FLOOR_FRACTION tol`` (the floor estimate is then recalibrated by it), else with a
float64 cache (at most ``MAX_CONTINUATIONS``). It skips float32 when ``max K_ii`` is outside
``FLOAT32_RANGE``.
"""

from __future__ import annotations

import math

import numpy as np

from maxmargin.algorithms.smo.hard_margin import hull_bound
from maxmargin.algorithms.smo.loops import (
    FLOOR_FRACTION,
    INFEASIBLE,
    OPTIMAL,
    PRECISION,
    alpha_norm,
)
from maxmargin.algorithms.smo.solver import Problem, Solver
from maxmargin.certificate import Certificate
from maxmargin.kernels.formulas import KIND_POLY, KIND_RBF, KIND_SIGMOID
from maxmargin.tolerances import SVM_HULL_EPS, SVM_HULL_EPS_SINGLE

__all__ = [
    "PRECISIONS",
    "FLOAT32_RANGE",
    "MAX_CONTINUATIONS",
    "MAX_REFINEMENTS",
    "DOUBLE_FIRST_BYTES",
    "DOUBLE_FIRST_KINDS",
    "first_precision",
    "solve_certified",
]

PRECISIONS = ("auto", "single", "double")
#: At most this many float64 continuations after the float32 run.
MAX_CONTINUATIONS = 3
#: At most this many float32 refinements (exact gradient, warm float32 cache) before them.
MAX_REFINEMENTS = 2
#: The float32 cache is used only when ``max_i K(x_i, x_i)`` lies in this range (far from
#: float32's overflow at 3.4e38 and its subnormals below 1.2e-38).
FLOAT32_RANGE = (1e-30, 1e30)
#: ``"auto"`` runs a soft margin in float64 from the start when its float64 ``Q`` (``8 n^2``
#: bytes) takes at most this many bytes and fits ``cache_size``: ``n <= 1024``.
DOUBLE_FIRST_BYTES = 8 * 2**20
#: ... and its kernel is one of these. The linear kernel and the kernels read from a Gram
#: matrix (callables, ``"precomputed"``) keep LIBSVM's float32 start: ``X X^T`` precomputed
#: gives the linear kernel's model, and a callable SVC's, only where both round to the same
#: float32 values (their float64 values differ in the last bits, and float64 iterates follow
#: them).
DOUBLE_FIRST_KINDS = (KIND_RBF, KIND_POLY, KIND_SIGMOID)


def first_precision(precision: str, problem: Problem, cache_size: float) -> str:
    """The first phase's precision: ``precision``, or ``"double"`` for ``"auto"`` when ``max
    K_ii`` is outside ``FLOAT32_RANGE`` (where ``"single"`` is refused) or when ``problem`` is a
    soft margin of a kernel of ``DOUBLE_FIRST_KINDS`` whose float64 ``Q``, ``8 n^2`` bytes, is
    at most ``DOUBLE_FIRST_BYTES`` and ``cache_size`` MB."""
    n, radius2 = problem.y.shape[0], problem.radius2
    if (precision == "auto" and problem.C is not None and problem.kd.kind in DOUBLE_FIRST_KINDS
            and 8 * n * n <= min(DOUBLE_FIRST_BYTES, cache_size * 2**20)):
        return "double"
    if FLOAT32_RANGE[0] <= radius2 <= FLOAT32_RANGE[1]:
        return precision
    if precision == "single":
        raise ValueError(
            f"`precision`='single' keeps kernel values in float32, which cannot hold these "
            f"(max K(x, x) = {radius2:.3g} is outside [{FLOAT32_RANGE[0]:g}, "
            f"{FLOAT32_RANGE[1]:g}]): use 'auto' or 'double', or rescale `X`."
        )
    return "double"


def solve_certified(solver: Solver, first: str,
                    precision: str | None = None) -> tuple[int, np.ndarray, Certificate]:
    """Run ``solver`` from ``first`` under the policy of ``precision`` (the user's; default
    ``first``; module docstring); the outcome, ``g = K (alpha o y)`` in float64 and the
    certificate of the final alpha."""
    st, y, tol = solver.st, solver.problem.y, solver.options.tol
    R = math.sqrt(solver.problem.radius2)
    outcome = solver.solve(first)
    g, cert = solver.certify()
    rounds = refinements = 0
    while (precision or first) == "auto" and rounds < MAX_CONTINUATIONS and (
        (outcome in (OPTIMAL, PRECISION) and not cert.kkt_violation < tol
         and not cert.settled(tol))
        # float32 cannot resolve hull distances below 1e-3 R: re-check in float64 unless the
        # float64 bound already shows the hulls within 1e-4 R
        or (outcome == INFEASIBLE and rounds == 0
            and hull_bound(st.alpha, y, g) > SVM_HULL_EPS * R)
    ):
        drift = float(np.max(np.abs(st.G - (y * g + st.scalars.linear)[st.act])))
        refine = (refinements < MAX_REFINEMENTS and drift <= FLOOR_FRACTION * tol and (
            (outcome == OPTIMAL and solver.phases[-1].startswith("float32"))
            or (outcome == PRECISION and solver.phases[-1] == "float32")))
        solver.restart_from(g)
        if refine:  # the floor estimate, calibrated by the error measured at this alpha
            solver.floor_coeff = drift / max(alpha_norm(st.alpha), 1e-300)
            outcome = solver.solve("auto", refine=True)
            refinements += 1
        else:
            outcome = solver.solve("double")
            rounds += 1
        g, cert = solver.certify()
    if (solver.problem.C is None and outcome != INFEASIBLE and not cert.meets(tol)
            and hull_bound(st.alpha, y, g) <= SVM_HULL_EPS_SINGLE * R):
        outcome = INFEASIBLE  # the float64 bound on the hull distance is the certificate
        solver.hull_eps = SVM_HULL_EPS_SINGLE
    return outcome, g, cert
