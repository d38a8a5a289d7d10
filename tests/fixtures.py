"""Tiny problems whose answers are derived by hand (derivations in the docstrings).

These are the independent answers the oracles and the algorithms are tested against.
Everything here is plain data: no maxmargin code is used to produce an expected value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class SVMExample:
    """An SVM problem with its hand-derived optimum."""

    name: str
    X: np.ndarray
    y: np.ndarray
    C: float | None
    kernel: str
    kernel_params: dict = field(default_factory=dict)
    alpha: np.ndarray | None = None  # None where alpha is not unique
    w: np.ndarray | None = None
    b: float | None = None  # None where b is not unique; see b_interval
    b_interval: tuple[float, float] | None = None
    objective: float = math.nan  # primal = dual optimum
    margin: float | None = None  # geometric margin 1/||w|| (hard margin only)


# --- Two points -----------------------------------------------------------------------------
# x+ = (2, 0), x- = (0, 0). The separator is the perpendicular bisector x1 = 1 with
# w . x+ + b = 1 and w . x- + b = -1, so w = (1, 0), b = -1. Stationarity w = a (x+ - x-) with
# a+ = a- = a (from y . alpha = 0) gives a = 1/2. Objective 1/2 ||w||^2 = 1/2;
# dual: sum(alpha) - 1/2 ||w||^2 = 1 - 1/2 = 1/2. Margin 1/||w|| = 1; hull distance 2.
TWO_POINTS = SVMExample(
    name="two_points",
    X=np.array([[2.0, 0.0], [0.0, 0.0]]),
    y=np.array([1.0, -1.0]),
    C=None,
    kernel="linear",
    alpha=np.array([0.5, 0.5]),
    w=np.array([1.0, 0.0]),
    b=-1.0,
    objective=0.5,
    margin=1.0,
)

# --- Li Hang, "Statistical Learning Methods", Examples 7.1 / 7.2 (hard margin) ---------------
# x1 = (3, 3), x2 = (4, 3) positive; x3 = (1, 1) negative. With alpha2 = 0 and alpha1 = alpha3 = a
# (y . alpha = 0), w = a ((3,3) - (1,1)) = (2a, 2a). Dual: 2a - 1/2 * 8 a^2 -> a = 1/4.
# So w = (1/2, 1/2), b = y1 - w . x1 = 1 - 3 = -2; x2 has y f = 1.5 > 1 (alpha2 = 0 is consistent).
# Objective 1/2 ||w||^2 = 1/4 = 2a - 4a^2 (dual). Margin 1/||w|| = sqrt(2).
# The hulls conv{x1, x2} and {x3}: nearest points (3,3) and (1,1), distance 2 sqrt(2) = 2/||w||.
LI_HANG = SVMExample(
    name="li_hang_7_1",
    X=np.array([[3.0, 3.0], [4.0, 3.0], [1.0, 1.0]]),
    y=np.array([1.0, 1.0, -1.0]),
    C=None,
    kernel="linear",
    alpha=np.array([0.25, 0.0, 0.25]),
    w=np.array([0.5, 0.5]),
    b=-2.0,
    objective=0.25,
    margin=math.sqrt(2.0),
)

# --- All alpha at the bound (no free support vector), 1-D -----------------------------------
# x+ = 1, x- = -1, C = 0.1. The hard-margin alpha would be 1/2 > C, so both alpha = C = 0.1:
# w = 0.1 * 1 + 0.1 * 1 = 0.2. alpha = C requires y f <= 1: 0.2 + b <= 1 and 0.2 - b <= 1, so
# the KKT interval of intercepts is [-0.8, 0.8], midpoint 0.
# Primal 1/2 (0.04) + 0.1 * ((1 - 0.2) + (1 - 0.2)) = 0.02 + 0.16 = 0.18 (for any b in the
# interval: xi+ + xi- = 1.6). Dual 0.2 - 1/2 (0.04) = 0.18.
ALL_BOUND = SVMExample(
    name="all_bound_1d",
    X=np.array([[1.0], [-1.0]]),
    y=np.array([1.0, -1.0]),
    C=0.1,
    kernel="linear",
    alpha=np.array([0.1, 0.1]),
    w=np.array([0.2]),
    b=None,
    b_interval=(-0.8, 0.8),
    objective=0.18,
)

# --- XOR with K(x, z) = (1 + x . z)^2 (kernel="poly", gamma=1, coef0=1, degree=2), hard margin --
# Points (1,1), (-1,-1) labelled +1 and (1,-1), (-1,1) labelled -1. K(x,x) = 9, K = 1 between
# any two distinct points (x . z is 0 or -2). Every row of Q = yy^T * K sums to 9 + 1 - 1 - 1 = 8,
# so by symmetry alpha_i = a: D = 4a - 1/2 a^2 * 32 -> a = 1/8, D = 1/2 - 1/4 = 1/4.
# f(x) = (1/8)[(1+x1+x2)^2 + (1-x1-x2)^2 - (1+x1-x2)^2 - (1-x1+x2)^2] = x1 x2, so b = 0 and
# every point has y f = 1.
XOR_POLY = SVMExample(
    name="xor_poly2",
    X=np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]]),
    y=np.array([1.0, 1.0, -1.0, -1.0]),
    C=None,
    kernel="poly",
    kernel_params={"gamma": 1.0, "coef0": 1.0, "degree": 2},
    alpha=np.full(4, 0.125),
    b=0.0,
    objective=0.25,
)

SVM_EXAMPLES = (TWO_POINTS, LI_HANG, ALL_BOUND, XOR_POLY)

# --- Not linearly separable: XOR with the linear kernel -------------------------------------
XOR_X = XOR_POLY.X
XOR_Y = XOR_POLY.y


# --- Perceptron: Li Hang, Examples 2.1 / 2.2 ------------------------------------------------
# Same data as LI_HANG, eta = 1, w = 0, b = 0, cyclic order, update on y (w . x + b) <= 0.
# The updates fall on x1, x3, x3, x3, x1, x3, x3 (7 mistakes): w = (1, 1), b = -3, and in the
# dual form alpha = (2, 0, 5) (x1 updated twice, x3 five times). By hand, pass by pass:
#   1: x1 (w=(3,3), b=1), x3 (w=(2,2), b=0)     2: x3 (w=(1,1), b=-1)
#   3: x3 (w=(0,0), b=-2)                        4: x1 (w=(3,3), b=-1), x3 (w=(2,2), b=-2)
#   5: x3 (w=(1,1), b=-3)                        6: clean (y f = 3, 4, 1)
# so 6 passes, the last one clean.
PERCEPTRON_LI_HANG = {
    "X": LI_HANG.X,
    "y": LI_HANG.y,
    "eta": 1.0,
    "w": np.array([1.0, 1.0]),
    "b": -3.0,
    "alpha": np.array([2.0, 0.0, 5.0]),
    "mistakes": 7,
    "update_sequence": (0, 2, 2, 2, 0, 2, 2),
    "epochs": 6,
}


# --- Polytope distance --------------------------------------------------------------------------
# Q = {(1, 0), (0, 1)}: the nearest point of the segment to 0 is its midpoint (1/2, 1/2),
# distance 1/sqrt(2), weights (1/2, 1/2).
POLYTOPE_SEGMENT = {
    "Q": np.array([[1.0, 0.0], [0.0, 1.0]]),
    "weights": np.array([0.5, 0.5]),
    "point": np.array([0.5, 0.5]),
    "distance": 1.0 / math.sqrt(2.0),
}
# Q = {(2, 1), (2, -1), (3, 0)}: the triangle's nearest point is (2, 0), the midpoint of the
# edge x1 = 2 (every point of the triangle has x1 >= 2); weights (1/2, 1/2, 0), distance 2.
POLYTOPE_TRIANGLE = {
    "Q": np.array([[2.0, 1.0], [2.0, -1.0], [3.0, 0.0]]),
    "weights": np.array([0.5, 0.5, 0.0]),
    "point": np.array([2.0, 0.0]),
    "distance": 2.0,
}

# --- Distance between two hulls -----------------------------------------------------------------
# P = segment from (0,0) to (0,2); Q = segment from (3,1) to (4,0). Every point of Q has x1 >= 3
# and the point (3, 1) reaches x1 = 3 at height 1, which P contains as (0, 1): p = (0, 1),
# q = (3, 1), distance 3, weights_p = (1/2, 1/2), weights_q = (1, 0).
HULL_PAIR = {
    "P": np.array([[0.0, 0.0], [0.0, 2.0]]),
    "Q": np.array([[3.0, 1.0], [4.0, 0.0]]),
    "p": np.array([0.0, 1.0]),
    "q": np.array([3.0, 1.0]),
    "weights_p": np.array([0.5, 0.5]),
    "weights_q": np.array([1.0, 0.0]),
    "distance": 3.0,
}
# Intersecting hulls: two crossing segments, distance 0.
HULL_CROSSING = {
    "P": np.array([[-1.0, 0.0], [1.0, 0.0]]),
    "Q": np.array([[0.0, -1.0], [0.0, 1.0]]),
    "distance": 0.0,
}
