"""Oracle consensus: certify a ground truth by solving one formulation with two solvers.

An interior-point method (Clarabel) and an operator-splitting method with polishing (OSQP) share
no code and no algorithm, so when both report ``"optimal"`` and agree on the objective, on ``w``
(or the nearest points), on ``b`` and on the decision values, the answer is certified rather
than assumed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from maxmargin._validation import check_positive
from maxmargin.certificate import Certificate, weak_duality
from maxmargin.formulations._common import Formulation, check_solver
from maxmargin.results import HullPairSolution, PolytopeSolution, SVMSolution

__all__ = ["ConsensusReport", "oracle_consensus"]


@dataclass(frozen=True, eq=False)
class ConsensusReport:
    """How far two solvers' answers to one formulation are apart.

    With ``s1``, ``s2`` the two solutions (``s1`` from the first solver, the reference):

    Attributes
    ----------
    solvers, statuses : tuple of str
    solutions : tuple
        The two result dataclasses themselves.
    objective_diff : float
        SVM: ``max`` over the primal and the dual objective of ``|o1 - o2| / max(1, |o1|)``;
        polytope/hull: the same for the distance.
    solution_diff : float
        ``||w1 - w2|| / max(1, ||w1||)`` (linear SVM; NaN for a kernel), or the same for
        ``point`` (polytope) and ``max`` over ``p`` and ``q`` (hulls).
    b_diff : float
        ``|b1 - b2| / max(1, |b1|)`` (NaN for polytopes).
    b_unique : bool
        Both solutions fix ``b`` by a free support vector (``b_interval`` of zero width).
    b_intervals_overlap : bool
        The two KKT intervals of intercepts intersect (up to ``rtol``); what must hold when
        ``b`` is not unique.
    decision_diff : float
        ``max_i |f1(x_i) - f2(x_i)| / max(1, max_i |f1(x_i)|)`` on the training points (SVM).
    alpha_diff : float
        ``max_i |alpha1_i - alpha2_i| / max(1, C or max alpha1)``: informative only, alpha need
        not be unique.
    rtol : float
        The tolerance ``agree`` uses.
    weak_duality : tuple of str
        SVM: the weak-duality inequalities between the two answers' float64 certificates that
        fail (:func:`~maxmargin.certificate.weak_duality`; empty when both hold).
    agree : bool
        Both statuses ``"optimal"``, weak duality both ways (SVM), and ``objective_diff``,
        ``solution_diff``, ``decision_diff`` (NaNs skipped) and ``b_diff`` (when ``b_unique``;
        else ``b_intervals_overlap``) within ``rtol``.
    """

    solvers: tuple[str, str]
    statuses: tuple[str, str]
    solutions: tuple[Any, Any]
    objective_diff: float
    solution_diff: float
    b_diff: float
    b_unique: bool
    b_intervals_overlap: bool
    decision_diff: float
    alpha_diff: float
    rtol: float
    agree: bool
    weak_duality: tuple[str, ...] = ()


def _rel(a: Any, b: Any) -> float:
    """``||a - b|| / max(1, ||a||)`` for scalars or arrays (NaN if either is None)."""
    if a is None or b is None:
        return math.nan
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return float(np.linalg.norm(a - b) / max(1.0, float(np.linalg.norm(a))))


def _svm_fields(s1: SVMSolution, s2: SVMSolution, rtol: float) -> dict[str, Any]:
    if "infeasible" in (s1.status, s2.status):  # no decision function to compare
        f1 = f2 = np.full(s1.alpha.shape, math.nan)
    else:
        f1, f2 = s1.decision_function(s1.X_train), s2.decision_function(s1.X_train)
    lo1, hi1 = s1.b_interval
    lo2, hi2 = s2.b_interval
    slack = rtol * max(1.0, abs(s1.b))
    scale = max(1.0, s1.C if s1.C is not None else float(np.max(s1.alpha)))
    return {
        "objective_diff": max(
            _rel(s1.primal_objective, s2.primal_objective),
            _rel(s1.dual_objective, s2.dual_objective),
        ),
        "solution_diff": _rel(s1.w, s2.w),
        "b_diff": _rel(s1.b, s2.b),
        "b_unique": bool(lo1 == hi1 and lo2 == hi2),
        "b_intervals_overlap": bool(max(lo1, lo2) <= min(hi1, hi2) + slack),
        "decision_diff": float(np.max(np.abs(f1 - f2)) / max(1.0, float(np.max(np.abs(f1))))),
        "alpha_diff": float(np.max(np.abs(s1.alpha - s2.alpha)) / scale),
    }


def _geometry_fields(s1: Any, s2: Any) -> dict[str, Any]:
    if isinstance(s1, PolytopeSolution):
        solution_diff = _rel(s1.point, s2.point)
    else:
        solution_diff = max(_rel(s1.p, s2.p), _rel(s1.q, s2.q))
    return {
        "objective_diff": _rel(s1.distance, s2.distance),
        "solution_diff": solution_diff,
        "b_diff": math.nan,
        "b_unique": False,
        "b_intervals_overlap": False,
        "decision_diff": math.nan,
        "alpha_diff": math.nan,
    }


def oracle_consensus(
    formulation: Formulation | Callable[[], Formulation],
    solvers: Sequence[str] = ("CLARABEL", "OSQP"),
    *,
    rtol: float = 1e-6,
    solver_options: Mapping[str, Mapping[str, Any]] | None = None,
) -> ConsensusReport:
    """Solve one formulation with two solvers and report their disagreement.

    Parameters
    ----------
    formulation : Formulation or callable
        A formulation (e.g. ``svm_dual(X, y, C=1)``), or a function of no argument returning a
        fresh one.
    solvers : pair of str
        Two different installed CVXPY solvers; the first is the reference.
    rtol : float
        Agreement tolerance of :attr:`ConsensusReport.agree`.
    solver_options : mapping, optional
        Extra options per solver name, e.g. ``{"OSQP": {"eps_abs": 1e-10}}``.

    Returns
    -------
    ConsensusReport
    """
    if isinstance(formulation, Formulation):
        instance = formulation
    elif callable(formulation):
        instance = formulation()
    else:
        instance = None
    if not isinstance(instance, Formulation):
        raise ValueError(
            "`formulation` must be a Formulation or a function returning one; "
            f"got {type(formulation).__name__}."
        )
    if isinstance(solvers, str) or len(solvers) != 2:
        raise ValueError(f"`solvers` must be a pair of solver names; got {solvers!r}.")
    names = (check_solver(solvers[0]), check_solver(solvers[1]))
    if names[0] == names[1]:
        raise ValueError(f"`solvers` must name two different solvers; got {names[0]!r} twice.")
    rtol = check_positive(rtol, "rtol")
    options = {str(k).upper(): dict(v) for k, v in (solver_options or {}).items()}
    s1 = instance.solve(names[0], **options.get(names[0], {}))
    s2 = instance.solve(names[1], **options.get(names[1], {}))
    # NaN answers (a failed or infeasible solve) give NaN differences, silently
    with np.errstate(invalid="ignore", over="ignore"):
        if isinstance(s1, SVMSolution):
            fields = _svm_fields(s1, s2, rtol)
        elif isinstance(s1, PolytopeSolution | HullPairSolution):
            fields = _geometry_fields(s1, s2)
        else:  # pragma: no cover - every Formulation returns one of the three
            raise TypeError(f"unexpected solution type {type(s1).__name__}")
    statuses = (s1.status, s2.status)
    diffs = [fields["objective_diff"], fields["solution_diff"], fields["decision_diff"]]
    if fields["b_unique"]:
        diffs.append(fields["b_diff"])
    b_ok = fields["b_unique"] or fields["b_intervals_overlap"] or isinstance(s1, PolytopeSolution)
    b_ok = b_ok or isinstance(s1, HullPairSolution)
    broken: tuple[str, ...] = ()
    c1, c2 = getattr(s1, "certificate", None), getattr(s2, "certificate", None)
    if isinstance(s1, SVMSolution) and isinstance(c1, Certificate) and isinstance(
            c2, Certificate):
        broken = tuple(weak_duality(c2, c1))
    agree = (
        statuses == ("optimal", "optimal")
        and all(d <= rtol for d in diffs if not math.isnan(d))
        and b_ok
        and not broken
    )
    return ConsensusReport(
        solvers=names,
        statuses=statuses,
        solutions=(s1, s2),
        rtol=rtol,
        agree=bool(agree),
        weak_duality=broken,
        **fields,
    )
