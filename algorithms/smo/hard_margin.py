r"""The hard margin's infeasibility rule: when the classes' hulls provably (nearly) meet.

With ``C = None`` the dual is unbounded on data no hyperplane separates. Writing ``alpha = s
(lam, mu)`` with convex weights over each class (``s = sum(alpha) / 2``), ``w = s (p - q)``
with ``p``, ``q`` in the two hulls, so

.. math::

    \delta(\alpha) = \|w\| / s = 2 \|w\| / \textstyle\sum_t \alpha_t

bounds the hulls' distance from above. SMO stops with ``"infeasible"`` when ``delta <= eps R``
(``R = max_t sqrt(K_tt)``, from the data's mean for a linear kernel on dense data, which
:func:`~.api.smo` solves centred; ``eps`` = :data:`~maxmargin.tolerances.SVM_HULL_EPS_SINGLE`
with a float32 cache, :data:`~maxmargin.tolerances.SVM_HULL_EPS` with float64, the resolutions
the judge, :func:`~maxmargin.certificate.certify_infeasible`, reads too): no separating
hyperplane has a geometric margin above about ``eps R / 2``. ``||w||^2 = 2 (sum(alpha) - D)``
is tracked at no cost (:func:`hulls_may_be_within`) and confirmed from the full gradient
(:func:`hulls_within`).
Since ``D > 0`` after any step, ``delta^2 < 8 / sum(alpha)``: ``sum(alpha) > SUM_CAP / (eps
R)^2`` proves the hulls within ``eps R`` with no kernel value (:func:`alpha_sum_proves_within`).
"""

from __future__ import annotations

import math

import numpy as np

from maxmargin._jit import INLINE, INTERNAL, njit
from maxmargin.algorithms.smo.state import SolverState
from maxmargin.tolerances import SVM_HULL_EPS, SVM_HULL_EPS_SINGLE

__all__ = [
    "HARD_MARGIN_HULL_EPS",
    "HARD_MARGIN_HULL_EPS_DOUBLE",
    "HULL_EPS",
    "SUM_CAP",
    "alpha_sum_proves_within",
    "hulls_may_be_within",
    "hulls_within",
    "hull_bound",
]

#: Hard margin: stop as infeasible when the classes' hulls are provably within this times R
#: (the resolution of the float32 kernel cache; :mod:`maxmargin.tolerances` defines it).
HARD_MARGIN_HULL_EPS = SVM_HULL_EPS_SINGLE
#: The same with ``precision="double"`` (float64 cache), ``gilbert_svm``'s resolution.
HARD_MARGIN_HULL_EPS_DOUBLE = SVM_HULL_EPS
#: The threshold of each precision.
HULL_EPS = {
    "auto": SVM_HULL_EPS_SINGLE, "single": SVM_HULL_EPS_SINGLE, "double": SVM_HULL_EPS,
}
#: ``sum(alpha) > SUM_CAP / (eps R)^2`` proves the hulls within ``eps R``.
SUM_CAP = 8.0 * (1.0 + 1e-6)


@njit(**INLINE)
def alpha_sum_proves_within(st: SolverState, bound2: float) -> bool:
    """``sum(alpha) bound2 > SUM_CAP`` with ``bound2 = (eps R)^2``: the hulls are within
    ``eps R`` by the sum alone (it stops runs whose alpha grows geometrically before float
    overflow)."""
    return st.hard and st.scalars.alpha_sum * bound2 > SUM_CAP


@njit(**INLINE)
def hulls_may_be_within(st: SolverState, bound2: float) -> bool:
    """May ``delta^2 = 4 ||w||^2 / sum(alpha)^2`` be at most ``bound2``? A screen with the
    tracked ``||w||^2 = 2 (sum(alpha) - D)``."""
    total = st.scalars.alpha_sum
    return total > 0.0 and 8.0 * (total - st.scalars.dual) <= bound2 * total * total * (
        1.0 + 1e-6)


@njit(**INTERNAL)
def hulls_within(st: SolverState, bound2: float) -> bool:
    """``delta^2 <= bound2`` confirmed with the full gradient, ``||w||^2 = sum_t alpha_t (G_t +
    1)`` (after :func:`~.shrinking.reconstruct_gradient`)."""
    w2 = 0.0
    total = 0.0
    for k in range(st.alpha.shape[0]):
        t = st.act[k]
        w2 += st.alpha[t] * (st.G[k] + 1.0)
        total += st.alpha[t]
    return total > 0.0 and 4.0 * w2 <= bound2 * total * total


def hull_bound(alpha: np.ndarray, y: np.ndarray, g: np.ndarray) -> float:
    """``delta(alpha)`` in float64 from ``g = K (alpha o y)``."""
    total = float(alpha.sum())
    if total <= 0.0:
        return math.inf
    return 2.0 * math.sqrt(max(float((alpha * y) @ g), 0.0)) / total
