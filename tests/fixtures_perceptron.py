"""Independent references for the perceptron tests (no perceptron code is used here).

- ``separable_data``: random data separated by a known hyperplane with a known gap.
- ``random_labels``, ``RUN_STRATEGIES``: random labels and runs for property tests.
- ``reference_perceptron``: the textbook loop in plain Python, one sample at a time.
- ``augmented_max_margin``: the margin ``gamma`` of Novikoff's theorem, from the CVXPY oracle
  ``hard_margin_primal``.
- ``quadratic_features``: the explicit feature map of the ``(1 + x . z)^2`` kernel (seed 003).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable

import numpy as np
from hypothesis import strategies as st

from maxmargin.formulations.primal import hard_margin_primal


def separable_data(
    rng: np.random.Generator, n: int, d: int, *, gap: float = 0.2, bias: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points in ``[-1, 1]^d`` labelled by a random hyperplane, none within ``gap`` of it.

    With ``bias=False`` the hyperplane passes through the origin (homogeneous separability).
    Both classes are present (the draw is repeated until they are).
    """
    while True:
        w = rng.normal(size=d)
        w /= np.linalg.norm(w)
        b = rng.uniform(-0.3, 0.3) if bias else 0.0
        X = rng.uniform(-1.0, 1.0, size=(20 * n, d))
        X = X[np.abs(X @ w + b) > gap][:n]
        y = np.where(X @ w + b > 0, 1.0, -1.0)
        if X.shape[0] == n and 0 < np.sum(y > 0) < n:
            return X, y


def random_labels(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random -1/+1 labels with both classes present (the first two are +1, -1)."""
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    y[:2] = (1.0, -1.0)
    return y


#: Hypothesis strategies for a perceptron run on random data (separable or not).
RUN_STRATEGIES = {
    "seed": st.integers(0, 2**32 - 1),
    "n": st.integers(2, 25),
    "d": st.integers(1, 4),
    "bias": st.booleans(),
    "order": st.sampled_from(["cyclic", "random"]),
}


def reference_perceptron(
    X: np.ndarray, y: np.ndarray, orders: Iterable[Iterable[int]], *, eta: float, bias: bool
) -> dict:
    """The textbook perceptron in plain Python over the given visiting orders (one per pass).

    Stops after the first clean pass. Returns w, b, the per-sample update counts, the update
    sequence and the mistakes per pass.
    """
    n, d = X.shape
    w = [0.0] * d
    b = 0.0
    counts = [0] * n
    sequence: list[int] = []
    per_pass: list[int] = []
    for order in orders:
        mistakes = 0
        for i in order:
            f = sum(w[j] * X[i, j] for j in range(d)) + b
            if y[i] * f <= 0:
                w = [w[j] + eta * y[i] * X[i, j] for j in range(d)]
                if bias:
                    b += eta * y[i]
                counts[i] += 1
                sequence.append(int(i))
                mistakes += 1
        per_pass.append(mistakes)
        if mistakes == 0:
            break
    return {
        "w": np.array(w),
        "b": b,
        "counts": np.array(counts, dtype=float),
        "sequence": sequence,
        "per_pass": per_pass,
    }


def augmented_max_margin(X: np.ndarray, y: np.ndarray, *, bias: bool) -> tuple[np.ndarray, float]:
    """A unit separator ``u`` of the augmented points and its margin ``gamma`` (Novikoff).

    Novikoff's theorem uses augmented points ``z_i = (x_i, 1)`` (``z_i = x_i`` for the
    homogeneous perceptron, ``bias=False``) and a unit ``u``; the best
    ``gamma = max_{||u|| = 1} min_i y_i u . z_i`` is ``1 / ||v*||`` for
    ``v* = argmin ||v||^2 s.t. y_i v . z_i >= 1`` -- the max-margin separator *through the
    origin* of the z-space (the bias is penalised, unlike the SVM's).

    It is computed by the oracle ``hard_margin_primal`` (which has a free, unpenalised ``b``) on
    the symmetric set ``{y_i z_i}`` labelled +1 and ``{-y_i z_i}`` labelled -1: if ``(v, b)`` is
    optimal so is ``(v, -b)``, hence (convexity) ``(v, 0)``, and with ``b = 0`` the constraints
    are exactly ``y_i v . z_i >= 1``.

    The returned ``gamma`` is the exact margin ``min_i y_i u . z_i`` of the returned unit ``u``,
    so Novikoff's bound with it holds whatever the solver's accuracy.
    """
    Z = np.hstack([X, np.ones((X.shape[0], 1))]) if bias else X
    Zy = Z * y[:, None]
    labels = np.r_[np.ones(len(y)), -np.ones(len(y))]
    sol = hard_margin_primal(np.vstack([Zy, -Zy]), labels).solve()
    assert sol.status == "optimal", sol.message
    u = sol.w / np.linalg.norm(sol.w)
    return u, float(np.min(Zy @ u))


def quadratic_features(X: np.ndarray) -> np.ndarray:
    """``phi(x) = (x_1^2..x_d^2, sqrt2 x_i x_j (i<j), sqrt2 x_1..sqrt2 x_d, 1)`` (seed 003).

    Then ``phi(x) . phi(z) = (1 + x . z)^2``.
    """
    d = X.shape[1]
    r2 = math.sqrt(2.0)
    cols = [X[:, i] ** 2 for i in range(d)]
    cols += [r2 * X[:, i] * X[:, j] for i, j in itertools.combinations(range(d), 2)]
    cols += [r2 * X[:, i] for i in range(d)]
    cols.append(np.ones(X.shape[0]))
    return np.column_stack(cols)
