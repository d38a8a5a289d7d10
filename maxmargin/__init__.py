"""maxmargin: a convex-optimization reference suite for max-margin classifiers.

Every max-margin question is answered twice: by a CVXPY oracle (:mod:`maxmargin.formulations`)
and by a hand-written algorithm (:mod:`maxmargin.algorithms`), and the two are cross-checked
(:mod:`maxmargin.verification`).
"""

from __future__ import annotations

from maxmargin.exceptions import ConvergenceWarning
from maxmargin.kernels import Kernel, LinearKernel, PolyKernel, RBFKernel, make_kernel
from maxmargin.results import (
    HullPairSolution,
    PerceptronResult,
    PolytopeSolution,
    SVMSolution,
    recover_intercept,
)

__version__ = "0.1.0"

__all__ = [
    "ConvergenceWarning",
    "HullPairSolution",
    "Kernel",
    "LinearKernel",
    "PerceptronResult",
    "PolyKernel",
    "PolytopeSolution",
    "RBFKernel",
    "SVMSolution",
    "__version__",
    "make_kernel",
    "recover_intercept",
]
