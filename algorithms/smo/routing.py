"""Linear soft margins that :func:`~maxmargin.algorithms.smo.smo` hands to dual coordinate
descent (:func:`~maxmargin.algorithms.dcd.dcd_svc`): the same problem (hinge loss,
unregularised bias, ``y . alpha = 0``), the same float64 certificate and status rules.

SMO's cost on a linear kernel grows with ``n`` columns of ``n`` kernel values; ``dcd_svc`` keeps
``w`` and pays the non-zeros of one row a step. A problem goes to ``dcd_svc`` when it is large
enough for that to pay (:data:`DCD_MIN_ROWS` dense rows, :data:`DCD_MIN_ROWS_SPARSE` sparse
ones), SMO's own choices are the defaults (``working_set="wss2"``, ``precision="auto"``, no
iteration cap of the caller's, the exact finish on) and dense data are not far from the
origin (:func:`far_from_origin`: SMO solves those centred). Its answer is kept when its
certificate meets ``tol`` within :data:`DCD_MAX_PASSES` passes; otherwise SMO solves the
problem from the start, so a hand-over never costs an answer. The result's ``method`` says
which ran (``"dcd_svc"`` or ``"smo/wss2"``).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from maxmargin import exceptions
from maxmargin.algorithms.dcd.svc import solve_svc
from maxmargin.kernels import Kernel
from maxmargin.kernels.base import far_from_origin
from maxmargin.kernels.formulas import KIND_LINEAR
from maxmargin.results import SVMSolution

__all__ = ["DCD_MIN_ROWS", "DCD_MIN_ROWS_SPARSE", "DCD_MAX_PASSES", "dcd_pays",
           "dcd_settings", "far_from_origin", "solve_by_dcd"]

#: Dense linear problems from this many rows on go to ``dcd_svc`` (from 1,000 rows on it was
#: faster than SMO on every benchmark cloud, d = 5 to 100, C = 0.01 to 100).
DCD_MIN_ROWS = 1000
#: Sparse ones from this many rows on (SMO's sparse linear columns cost far more).
DCD_MIN_ROWS_SPARSE = 1024
#: ``dcd_svc``'s passes before the problem goes back to SMO.
DCD_MAX_PASSES = 20_000


def dcd_settings(kernel: Kernel, C: float | None, working_set: str, precision: str,
                 default_cap: bool, exact_finish: bool) -> bool:
    """Whether :func:`~.api.smo`'s settings let its problem go to ``dcd_svc``: a linear soft
    margin with SMO's default working set and precision, no iteration cap of the caller's
    (``default_cap``) and the exact finish on."""
    return (kernel.kind == KIND_LINEAR and C is not None and working_set == "wss2"
            and precision == "auto" and default_cap and exact_finish)


def dcd_pays(X: Any) -> bool:
    """Whether the validated data are large enough for ``dcd_svc`` to pay
    (:data:`DCD_MIN_ROWS`, :data:`DCD_MIN_ROWS_SPARSE`) and, dense, not far from the origin."""
    if not isinstance(X, np.ndarray):  # sparse
        return X.shape[0] >= DCD_MIN_ROWS_SPARSE
    return X.shape[0] >= DCD_MIN_ROWS and not far_from_origin(X)


def solve_by_dcd(X: Any, y: np.ndarray, C: float, sample_weight: np.ndarray | None,
                 tol: float) -> SVMSolution | None:
    """``dcd_svc``'s answer when its float64 certificate meets ``tol`` (``m - M < tol``), else
    None (its warning withheld: SMO then solves the problem). ``X`` is a fresh array of the
    caller's (``smo``'s validated copy, a batch's ``X[idx]``): a certified answer keeps it
    (read-only) rather than a copy of its own."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", exceptions.ConvergenceWarning)  # made on first use
        sol = solve_svc(X, np.array(y), C, sample_weight, tol, DCD_MAX_PASSES, own=True)
    return sol if sol.status == "optimal" else None
