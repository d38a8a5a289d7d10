r"""Sequential minimal optimization (SMO) for the SVM dual, built to LIBSVM's standard.

.. math::

    \max_\alpha \sum_i \alpha_i - \tfrac12 \alpha^T Q \alpha, \quad
    Q_{ij} = y_i y_j K(x_i, x_j), \quad 0 \le \alpha_i \le C_i, \quad y^T \alpha = 0,

solved as LIBSVM does, as the minimisation of ``f = 1/2 alpha^T Q alpha - e^T alpha`` with its
gradient ``G = Q alpha - e`` kept up to date. The modules follow LIBSVM's ``Solver``:

* :mod:`.state` -- the solver's named state, ``update_alpha_status``, the history;
* :mod:`.working_set` -- ``select_working_set`` (``"wss2"``, ``"wss1"``); :mod:`.platt` --
  Platt's heuristic;
* :mod:`.pair` -- the two-variable update and the gradient update;
* :mod:`.shrinking` -- ``do_shrinking``, ``reconstruct_gradient``;
* :mod:`.hard_margin` -- the hard margin's infeasibility rule;
* :mod:`.loops` -- the compiled drivers;
* :mod:`.solver` -- one run in Python: phases, certificates, restarts;
* :mod:`.precision` -- the float32 / float64 policy; :mod:`.finish` -- the exact finish;
* :mod:`.result` -- ``calculate_rho`` and the :class:`~maxmargin.results.SVMSolution`;
* :mod:`.api` -- :func:`smo`;
* :mod:`.classwise` -- ν-SVC's working set and shrinking (LIBSVM's ``Solver_NU``);
  :mod:`.nu` -- :func:`nu_smo` and :func:`one_class_smo`.

``docs/algorithms/smo.md`` gives the derivations and the measurements.
"""

from __future__ import annotations

from maxmargin.algorithms.smo.api import WORKING_SETS, smo
from maxmargin.algorithms.smo.hard_margin import (
    HARD_MARGIN_HULL_EPS,
    HARD_MARGIN_HULL_EPS_DOUBLE,
)
from maxmargin.algorithms.smo.nu import nu_smo, one_class_smo
from maxmargin.algorithms.smo.precision import PRECISIONS

__all__ = [
    "smo",
    "nu_smo",
    "one_class_smo",
    "WORKING_SETS",
    "PRECISIONS",
    "HARD_MARGIN_HULL_EPS",
    "HARD_MARGIN_HULL_EPS_DOUBLE",
]
