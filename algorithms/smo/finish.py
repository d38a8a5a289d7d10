"""The exact finish: a stalled SMO run handed to the primal active-set method.

SMO converges linearly at a rate set by the conditioning, and crawls on low-rank Gram matrices,
duplicates and large ``C max K_ii``. A run that has not converged after
``max(EXACT_FINISH_AFTER, EXACT_FINISH_AFTER_PER_POINT n)`` iterations (then 4, 16, ... times
as many), or at ``max_iter``, is handed, when at most ``FINISH_MAX_FREE`` alphas are free, to
:func:`~maxmargin.algorithms.active_set.finish_alpha` started from the current alpha: Newton
steps on the free set, releasing and fixing bounds, exact in float64. Its answer is kept only
if its float64 certificate meets ``tol``; otherwise SMO goes on from where it was.

Its work is counted, never timed, so the same input gives the same answer under any load: as
much as SMO's work so far (``EXACT_FINISH_WORK_FRACTION``) and at least
``EXACT_FINISH_MIN_WORK``, for its two tries together (the second, with a finer eigenvalue
cutoff, gets what the first left), in floating-point operations (the finish's as
:data:`~maxmargin.algorithms.active_set.EIGH_WORK` counts them; SMO's as :func:`smo_work`).
Since each checkpoint is four times the last, the finishes that fail cost at most about 4/3 of
SMO's own work.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from maxmargin.algorithms.active_set import Finished, finish_alpha

__all__ = [
    "EXACT_FINISH_AFTER",
    "EXACT_FINISH_AFTER_PER_POINT",
    "EXACT_FINISH_WORK_FRACTION",
    "EXACT_FINISH_MIN_WORK",
    "SMO_ENTRY_WORK",
    "first_checkpoint",
    "smo_work",
    "exact_finish",
]

#: The first checkpoint: ``max(EXACT_FINISH_AFTER, EXACT_FINISH_AFTER_PER_POINT n)`` iterations.
EXACT_FINISH_AFTER = 200_000
EXACT_FINISH_AFTER_PER_POINT = 100
#: A finish's budget (both tries): this fraction of SMO's work so far, at least
#: ``EXACT_FINISH_MIN_WORK``.
EXACT_FINISH_WORK_FRACTION = 1.0
EXACT_FINISH_MIN_WORK = 1e9
#: SMO's floating-point operations per entry of ``G`` updated (the update, the next ``i`` and
#: the second-order choice of ``j`` each pass over the layout).
SMO_ENTRY_WORK = 10.0


def first_checkpoint(n: int) -> int:
    """The iteration count at which a run that has not converged is first finished exactly."""
    return max(EXACT_FINISH_AFTER, EXACT_FINISH_AFTER_PER_POINT * n)


def smo_work(entries: float, kernel_values: int, d: int) -> float:
    """SMO's floating-point operations: ``SMO_ENTRY_WORK`` per entry of ``G`` updated, ``2 d``
    per kernel value computed (``d`` features, at least 1)."""
    return SMO_ENTRY_WORK * entries + 2.0 * max(1, d) * kernel_values


def exact_finish(
    alpha: np.ndarray, X: Any, y: np.ndarray, box: np.ndarray | None, kernel: Any, tol: float,
    work_so_far: float,
) -> Finished | None:
    """The active-set method from ``alpha`` within the budget that SMO's ``work_so_far``
    allows (both tries together); its answer when its float64 certificate has ``m - M < tol``
    (or is as good as float64 resolves, :meth:`~maxmargin.certificate.Certificate.final`), else
    None."""
    budget = max(EXACT_FINISH_MIN_WORK, EXACT_FINISH_WORK_FRACTION * work_so_far)
    return finish_alpha(alpha, X, y, box, kernel, accept=lambda cert: cert.final(tol),
                        max_work=budget, kkt_tol=0.25 * tol)
