"""maxmargin: a convex-optimization reference suite for max-margin classifiers.

Every max-margin question is answered twice: by a CVXPY oracle (:mod:`maxmargin.formulations`)
and by a hand-written algorithm (:mod:`maxmargin.algorithms`), and the two are cross-checked
(:mod:`maxmargin.verification`).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from maxmargin.kernels import Kernel, LinearKernel, PolyKernel, RBFKernel, make_kernel
from maxmargin.results import (
    HullPairSolution,
    PerceptronResult,
    PolytopeSolution,
    SVMSolution,
    recover_intercept,
)

try:
    __version__ = version("maxmargin")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """``maxmargin.MaxMarginClassifier``, ``maxmargin.MaxMarginLinearClassifier``,
    ``maxmargin.certify``, ``maxmargin.certify_dual`` and ``maxmargin.ConvergenceWarning`` are
    imported on first use (they pull in scikit-learn, and
    the estimator every solver)."""
    if name == "MaxMarginClassifier":
        from maxmargin.estimators import MaxMarginClassifier

        return MaxMarginClassifier
    if name in ("MaxMarginNuClassifier", "MaxMarginOneClass"):
        import maxmargin.nu_estimators as nu_module

        return getattr(nu_module, name)
    if name == "MaxMarginLinearClassifier":
        from maxmargin.linear_estimator import MaxMarginLinearClassifier

        return MaxMarginLinearClassifier
    if name in ("certify", "certify_dual"):  # certifying a fitted model pulls in scikit-learn
        import maxmargin.certify_models as module

        return getattr(module, name)
    if name == "ConvergenceWarning":
        import maxmargin.exceptions as exceptions

        return exceptions.ConvergenceWarning
    raise AttributeError(f"module 'maxmargin' has no attribute {name!r}")


__all__ = [
    "ConvergenceWarning",
    "HullPairSolution",
    "Kernel",
    "LinearKernel",
    "MaxMarginClassifier",
    "MaxMarginLinearClassifier",
    "MaxMarginNuClassifier",
    "MaxMarginOneClass",
    "PerceptronResult",
    "PolyKernel",
    "PolytopeSolution",
    "RBFKernel",
    "SVMSolution",
    "__version__",
    "certify",
    "certify_dual",
    "make_kernel",
    "recover_intercept",
]
