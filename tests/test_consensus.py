"""Oracle consensus: two independent solvers certify one ground truth (or say they disagree)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fixtures import ALL_BOUND, HULL_CROSSING, HULL_PAIR, LI_HANG, POLYTOPE_TRIANGLE, XOR_X, XOR_Y

from maxmargin.formulations import (
    ConsensusReport,
    hard_margin_primal,
    hull_distance,
    oracle_consensus,
    polytope_distance,
    soft_margin_primal,
    svm_dual,
)

TOL = 1e-7


def _noisy(seed: int, n: int = 60, d: int = 3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, np.where(X @ rng.normal(size=d) + 0.7 * rng.normal(size=n) > 0, 1.0, -1.0)


@pytest.mark.parametrize("make", [soft_margin_primal, svm_dual], ids=["primal", "dual"])
def test_clarabel_and_osqp_agree_on_linear_soft_margin(make):
    X, y = _noisy(0)
    report = oracle_consensus(lambda: make(X, y, 0.8))
    assert isinstance(report, ConsensusReport)
    assert report.solvers == ("CLARABEL", "OSQP")
    assert report.statuses == ("optimal", "optimal")
    assert report.agree
    assert report.b_unique
    for field in ("objective_diff", "solution_diff", "b_diff", "decision_diff", "alpha_diff"):
        assert getattr(report, field) < TOL, field
    assert [s.method.split("/")[-1] for s in report.solutions] == ["CLARABEL", "OSQP"]


def test_consensus_on_kernel_dual():
    X, y = _noisy(1, 50, 2)
    report = oracle_consensus(svm_dual(X, y, 2.0, kernel="rbf", gamma=0.8))
    assert report.agree
    assert math.isnan(report.solution_diff)  # no w for a kernel
    assert report.decision_diff < TOL and report.objective_diff < TOL


def test_consensus_on_hard_margin_fixture():
    report = oracle_consensus(hard_margin_primal(LI_HANG.X, LI_HANG.y))
    assert report.agree and report.b_unique and report.b_diff < TOL


def test_consensus_when_b_is_not_unique():
    report = oracle_consensus(soft_margin_primal(ALL_BOUND.X, ALL_BOUND.y, ALL_BOUND.C))
    assert not report.b_unique
    assert report.b_intervals_overlap
    assert report.agree
    for sol in report.solutions:
        assert sol.b_interval == pytest.approx((-0.8, 0.8), abs=TOL)


@pytest.mark.parametrize(
    "make",
    [
        lambda: polytope_distance(POLYTOPE_TRIANGLE["Q"]),
        lambda: hull_distance(HULL_PAIR["P"], HULL_PAIR["Q"]),
        lambda: hull_distance(HULL_CROSSING["P"], HULL_CROSSING["Q"]),
    ],
    ids=["polytope", "hulls", "crossing"],
)
def test_consensus_on_geometry(make):
    report = oracle_consensus(make)
    assert report.agree
    assert report.objective_diff < TOL and report.solution_diff < TOL
    assert math.isnan(report.b_diff) and math.isnan(report.decision_diff)


def test_consensus_detects_a_sloppy_solver():
    # The check can fail: OSQP stopped at 1e-2 with no polishing disagrees with Clarabel.
    X, y = _noisy(2)
    form = soft_margin_primal(X, y, 1.0)
    form.polish = False
    report = oracle_consensus(
        form,
        solver_options={"OSQP": {"eps_abs": 1e-2, "eps_rel": 1e-2, "polish": False}},
    )
    assert not report.agree
    assert report.solution_diff > 1e-4


def test_consensus_on_infeasible_problem_does_not_agree():
    report = oracle_consensus(hard_margin_primal(XOR_X, XOR_Y))
    assert report.statuses == ("infeasible", "infeasible")
    assert not report.agree


def test_consensus_with_other_solvers_and_rtol():
    report = oracle_consensus(
        svm_dual(LI_HANG.X, LI_HANG.y, None), solvers=("osqp", "SCS"), rtol=1e-4
    )
    assert report.solvers == ("OSQP", "SCS")
    assert report.rtol == 1e-4
    assert report.objective_diff < 1e-4


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"formulation": 3}, r"`formulation` must be a Formulation or a function returning one"),
        ({"formulation": lambda: 3}, r"`formulation` must be a Formulation"),
        ({"solvers": ("CLARABEL",)}, r"`solvers` must be a pair of solver names"),
        ({"solvers": "CLARABEL"}, r"`solvers` must be a pair of solver names"),
        ({"solvers": ("OSQP", "osqp")}, r"`solvers` must name two different solvers"),
        ({"solvers": ("CLARABEL", "NOPE")}, r"`solver` must be None or one of the installed"),
        ({"rtol": 0.0}, r"`rtol` must be positive"),
        ({"rtol": math.nan}, r"`rtol` must be finite"),
    ],
)
def test_consensus_validation(kwargs, match):
    args = {"formulation": svm_dual(LI_HANG.X, LI_HANG.y, None)} | kwargs
    with pytest.raises(ValueError, match=match):
        oracle_consensus(**args)
