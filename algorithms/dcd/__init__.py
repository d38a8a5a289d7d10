"""Linear SVMs at scale: LIBLINEAR's problem (:func:`dcd`) and SVC's linear problem
(:func:`dcd_svc`) by dual coordinate descent (Hsieh et al. 2008), every answer certified in
float64.

* :mod:`~maxmargin.algorithms.dcd.loop`: the compiled coordinate-descent passes;
* :mod:`~maxmargin.algorithms.dcd.newton`: the squared hinge's primal finite Newton method;
* :mod:`~maxmargin.algorithms.dcd.api`: :func:`dcd`;
* :mod:`~maxmargin.algorithms.dcd.svc`: :func:`dcd_svc`;
* :mod:`~maxmargin.algorithms.dcd.l1`: :func:`l1_cdn`, LIBLINEAR's L1-regularised squared
  hinge by primal coordinate descent (CDN);
* :mod:`~maxmargin.algorithms.dcd.crammer_singer`: :func:`cs_dcd`, Crammer and Singer's
  multi-class problem by the sequential dual method (Keerthi et al. 2008);
* :mod:`~maxmargin.algorithms.dcd.finish`: ``dcd_svc``'s exact finish in feature space.
"""

from __future__ import annotations

from maxmargin.algorithms.dcd.api import DCD_MAX_ITER, DCD_SOLVERS, dcd
from maxmargin.algorithms.dcd.crammer_singer import cs_dcd
from maxmargin.algorithms.dcd.l1 import l1_cdn
from maxmargin.algorithms.dcd.loop import (
    Coordinates,
    dcd_loop,
    dual_weights,
    duality_gap,
    next_random,
    seed_state,
)
from maxmargin.algorithms.dcd.newton import primal_newton
from maxmargin.algorithms.dcd.svc import balanced, dcd_svc

__all__ = [
    "DCD_MAX_ITER",
    "DCD_SOLVERS",
    "Coordinates",
    "balanced",
    "cs_dcd",
    "dcd",
    "dcd_loop",
    "dcd_svc",
    "dual_weights",
    "duality_gap",
    "l1_cdn",
    "next_random",
    "primal_newton",
    "seed_state",
]
