"""Hand-written max-margin algorithms: SMO, dual coordinate descent, Gilbert/MDM/Wolfe,
perceptrons.

Each lives in its own module and returns the result types of :mod:`maxmargin.results`.
"""

from __future__ import annotations

from maxmargin.algorithms.dcd import cs_dcd, dcd, dcd_svc, l1_cdn
from maxmargin.algorithms.gilbert import gilbert, gilbert_hulls, gilbert_svm, one_class_hull
from maxmargin.algorithms.kernel_perceptron import kernel_perceptron
from maxmargin.algorithms.mdm import mdm_hulls
from maxmargin.algorithms.perceptron import perceptron
from maxmargin.algorithms.smo import nu_smo, one_class_smo, smo
from maxmargin.algorithms.wolfe import wolfe_hulls

__all__ = [
    "cs_dcd",
    "dcd",
    "dcd_svc",
    "gilbert",
    "gilbert_hulls",
    "gilbert_svm",
    "kernel_perceptron",
    "l1_cdn",
    "mdm_hulls",
    "nu_smo",
    "one_class_hull",
    "one_class_smo",
    "perceptron",
    "smo",
    "wolfe_hulls",
]
