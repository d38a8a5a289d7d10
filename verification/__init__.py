"""Cross-checks of the algorithms against the oracles and the theorems.

- :func:`kkt_residuals` -- how far a solution is from the KKT conditions of the SVM.
- :func:`cross_check` -- a candidate solution against an oracle's, with named tolerance presets.
- ``bounds`` -- the theorems: perceptron mistake bound, Gilbert's rate, hull recovery, ...
- :func:`catalogue` / :func:`run_suite` / :func:`write_report` -- the named cases, the runner
  behind ``maxmargin verify`` and the report behind ``maxmargin report``.
"""

from __future__ import annotations

from maxmargin.verification.bounds import (
    BoundCheck,
    diameter,
    feature_map_identity,
    gilbert_rate,
    gilbert_rate_curve,
    hull_recovery,
    mistake_bound,
    quadratic_feature_map,
    separation_margin,
    support_vector_count,
)
from maxmargin.verification.cases import Case, catalogue
from maxmargin.verification.crosscheck import (
    CrossCheck,
    alpha_limit,
    alpha_uniqueness,
    cross_check,
)
from maxmargin.verification.kkt import KKTResiduals, kkt_residuals
from maxmargin.verification.report import write_report
from maxmargin.verification.suite import (
    COLUMNS,
    Method,
    Row,
    SuiteRun,
    extra_methods,
    run_suite,
)
from maxmargin.verification.tolerances import (
    LOOSE,
    MEDIUM,
    ORACLE,
    PRESETS,
    TIGHT,
    Tolerances,
    get_tolerances,
)

__all__ = [
    "COLUMNS",
    "LOOSE",
    "MEDIUM",
    "ORACLE",
    "PRESETS",
    "TIGHT",
    "BoundCheck",
    "Case",
    "CrossCheck",
    "KKTResiduals",
    "Method",
    "Row",
    "SuiteRun",
    "Tolerances",
    "alpha_limit",
    "alpha_uniqueness",
    "catalogue",
    "cross_check",
    "diameter",
    "extra_methods",
    "feature_map_identity",
    "get_tolerances",
    "gilbert_rate",
    "gilbert_rate_curve",
    "hull_recovery",
    "kkt_residuals",
    "mistake_bound",
    "quadratic_feature_map",
    "run_suite",
    "separation_margin",
    "support_vector_count",
    "write_report",
]
