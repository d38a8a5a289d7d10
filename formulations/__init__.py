"""CVXPY ground-truth oracles for max-margin problems.

Each function validates its input and returns a :class:`Formulation` with ``.problem`` (the
``cvxpy.Problem``), ``.variables`` (the named variables) and ``.solve(solver=None, **options)``
(Clarabel with tolerances tightened for ground truth by default). :func:`oracle_consensus`
solves one formulation with two independent solvers and reports their disagreement.
"""

from maxmargin.formulations._common import Formulation
from maxmargin.formulations.consensus import ConsensusReport, oracle_consensus
from maxmargin.formulations.crammer_singer import CrammerSingerSolution, crammer_singer_primal
from maxmargin.formulations.dual import svm_dual
from maxmargin.formulations.liblinear import LiblinearSolution, liblinear_primal
from maxmargin.formulations.nu import (
    NuSolution,
    nu_svm_dual,
    nu_svm_primal,
    one_class_dual,
    one_class_primal,
)
from maxmargin.formulations.polytope import hull_distance, polytope_distance
from maxmargin.formulations.primal import hard_margin_primal, hinge_loss, soft_margin_primal

__all__ = [
    "ConsensusReport",
    "CrammerSingerSolution",
    "crammer_singer_primal",
    "Formulation",
    "hard_margin_primal",
    "hinge_loss",
    "hull_distance",
    "LiblinearSolution",
    "liblinear_primal",
    "NuSolution",
    "nu_svm_dual",
    "nu_svm_primal",
    "one_class_dual",
    "one_class_primal",
    "oracle_consensus",
    "polytope_distance",
    "soft_margin_primal",
    "svm_dual",
]
