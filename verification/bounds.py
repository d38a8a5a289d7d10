"""Theorems of the lecture notes, checked numerically on actual runs.

Each check returns a :class:`BoundCheck`: the measured ``value``, the theorem's ``bound``, and
``holds = value <= bound * (1 + rtol)`` (``rtol`` absorbs round-off only), plus the numbers that
went into the bound in ``details``.

=====================  =======================================================================
check                  theorem
=====================  =======================================================================
mistake_bound          Novikoff (1962): the perceptron makes at most (R / gamma)^2
                       mistakes, R = max ||x_hat_i||, gamma the best margin of a unit separator
gilbert_rate           Gilbert (1966): after k steps h_k = f_k - rho <= 2 D^2 / (rho (k + 1))
hull_recovery          margin = hull distance / 2 and w = 2d/||d||^2,
                       b = (||q||^2 - ||p||^2)/||d||^2, alpha = 2 lambda/||d||^2 (d = p - q)
support_vector_count   in general position, at most d + 1 support vectors (linear kernel)
feature_map_identity   phi(x) . phi(z) = (1 + x . z)^2 for the quadratic phi with
                       sqrt(2) factors
=====================  =======================================================================
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from maxmargin._validation import (
    check_array,
    check_nonnegative,
    check_points,
    check_positive,
    check_Xy,
)
from maxmargin.kernels import Kernel, PolyKernel, own_points
from maxmargin.results import HullPairSolution, PerceptronResult, SVMSolution
from maxmargin.tolerances import BOUND_RTOL

__all__ = [
    "BoundCheck",
    "gram_features",
    "separation_margin",
    "mistake_bound",
    "diameter",
    "gilbert_rate_curve",
    "gilbert_rate",
    "hull_recovery",
    "support_vector_count",
    "quadratic_feature_map",
    "feature_map_identity",
]

#: Relative slack of every inequality: round-off of the quantities involved, nothing more.
RTOL = BOUND_RTOL


@dataclass(frozen=True)
class BoundCheck:
    """One theorem checked on one run: ``holds = value <= bound * (1 + rtol)``."""

    name: str
    value: float
    bound: float
    holds: bool
    note: str = ""
    details: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", float(self.value))
        object.__setattr__(self, "bound", float(self.bound))
        object.__setattr__(self, "holds", bool(self.holds))
        object.__setattr__(
            self, "details", MappingProxyType({k: float(v) for k, v in self.details.items()})
        )

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Picklable (the suite's guarded workers send rows between processes)."""
        return (BoundCheck, (self.name, self.value, self.bound, self.holds, self.note,
                             dict(self.details)))


def _check(name: str, value: float, bound: float, note: str = "", **details: float) -> BoundCheck:
    holds = bool(value <= bound * (1.0 + RTOL) + 1e-300)
    return BoundCheck(name=name, value=value, bound=bound, holds=holds, note=note,
                      details=details)


def gram_features(X: np.ndarray, bias: bool, kernel: Kernel | None) -> np.ndarray:
    """Rows ``z_i`` with ``z_i . z_j = K(x_i, x_j) (+ 1 with a bias)``.

    Linear: ``z = x`` or ``(x, 1)``. A kernel: a factor ``Z`` of ``K (+ 1 1^T) = Z Z^T`` from
    its eigendecomposition (eigenvalues below ``1e-12`` of the largest are dropped).
    """
    if kernel is None or kernel.name == "linear":
        return np.hstack([X, np.ones((X.shape[0], 1))]) if bias else X
    G = kernel.gram(X) + (1.0 if bias else 0.0)
    lam, U = np.linalg.eigh(G)
    keep = lam > 1e-12 * max(float(lam[-1]), 1e-300)
    return U[:, keep] * np.sqrt(lam[keep])


def separation_margin(
    X: Any, y: Any, *, bias: bool = True, kernel: Kernel | None = None
) -> tuple[float, float]:
    """``(gamma, R)``: the best margin of a unit separator and the radius of the data.

    With ``z_i = (x_i, 1)`` (``bias=True``; ``z_i = x_i`` without a bias; ``phi(x_i)`` in place
    of ``x_i`` for a kernel), solve by CVXPY/Clarabel

    .. math::

        \\min_v \\|v\\|^2 \\quad \\text{s.t.} \\quad y_i \\, v \\cdot z_i \\ge 1,

    so that ``gamma = max_{||u|| = 1} min_i y_i u . z_i = 1 / ||v*||`` and
    ``R = max_i ||z_i||``. Data that no separator through the origin of the z-space separates
    give ``gamma = 0``.
    """
    import cvxpy as cp

    X, y = check_Xy(X, y, points=own_points(kernel))
    Z = gram_features(X, bool(bias), kernel)
    R = float(np.max(np.linalg.norm(Z, axis=1)))
    v = cp.Variable(Z.shape[1])
    problem = cp.Problem(cp.Minimize(cp.sum_squares(v)), [cp.multiply(y, Z @ v) >= 1])
    with warnings.catch_warnings():  # an inaccurate solve is judged by its status below
        warnings.simplefilter("ignore", UserWarning)
        problem.solve(solver=cp.CLARABEL)
    if problem.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        return 0.0, R
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        raise RuntimeError(f"the separation-margin model ended with status {problem.status!r}.")
    # The margin of the solver's own v: exact for this v, so gamma never exceeds the optimum.
    v_opt = np.asarray(v.value)
    gamma = float(np.min(y * (Z @ v_opt)) / np.linalg.norm(v_opt))
    return gamma, R


def mistake_bound(
    result: PerceptronResult,
    X: Any,
    y: Any,
    *,
    bias: bool = True,
    kernel: Kernel | None = None,
) -> BoundCheck:
    """Novikoff's theorem: ``mistakes <= (R / gamma)^2`` (with ``gamma, R`` of
    :func:`separation_margin` in the augmented space ``(x, 1)`` when the perceptron has a bias).

    ``kernel`` defaults to the result's kernel for a kernel perceptron (``result.w is None``).
    On data that are not separable the theorem makes no claim: ``bound = inf`` and a note.
    """
    if not isinstance(result, PerceptronResult):
        raise ValueError(f"`result` must be a PerceptronResult; got {type(result).__name__}.")
    if kernel is None and result.w is None:
        kernel = result.kernel
    gamma, R = separation_margin(X, y, bias=bias, kernel=kernel)
    if gamma <= 0:
        return _check("mistake_bound", result.mistakes, math.inf,
                      "not separable: the theorem makes no claim", R=R, gamma=gamma)
    return _check("mistake_bound", result.mistakes, (R / gamma) ** 2, R=R, gamma=gamma)


def diameter(points: Any) -> float:
    """``max_{i,j} ||q_i - q_j||`` of the rows of ``points``."""
    Q = check_points(points, "points")
    sq = np.einsum("ij,ij->i", Q, Q)
    d2 = sq[:, None] + sq[None, :] - 2.0 * (Q @ Q.T)
    return float(np.sqrt(max(float(np.max(d2)), 0.0)))


def gilbert_rate_curve(steps: Any, rho: float, diam: float) -> np.ndarray:
    """Seed 001's bound ``2 D^2 / (rho (k + 1))`` on ``h_k = f_k - rho``, with ``k = steps + 1``.

    The seed numbers the iterates from ``x_1 = q_0`` (the starting point, 0 steps), so the
    iterate after ``t`` steps is ``x_{t+1}``.
    """
    k = np.asarray(steps, dtype=np.float64) + 1.0
    return 2.0 * diam**2 / (rho * (k + 1.0))


def gilbert_rate(
    distances: Any, steps: Any, rho: float, diam: float, *, name: str = "gilbert_rate"
) -> BoundCheck:
    """Seed 001's rate along a run: ``h_k = f_k - rho <= 2 D^2 / (rho (k + 1))`` for ``k >= 2``.

    Parameters
    ----------
    distances : (m,) array
        ``f_k = ||x_k||``, the distance of the current iterate after ``steps[j]`` steps.
    steps : (m,) array
        Steps done at each record (0 = the starting point ``x_1``).
    rho : float
        The true distance (from an oracle), ``> 0``.
    diam : float
        ``D >= 0``, the diameter of the point set (for two hulls, ``diam(P) + diam(Q)`` bounds the
        diameter of their Minkowski difference and keeps the bound valid).

    The seed's proof gives ``h'_{k+1} <= h'_k (1 - h'_k)`` for ``h' = rho h / (2 D^2)``, hence
    ``h'_1 <= 1``, ``h'_2 <= 1/4`` and by induction ``h'_k <= 1/(k+1)`` for ``k >= 2``. Its
    base case ``k = 1`` needs more than it proves, so records with ``k = 1`` are not judged.
    ``value`` is the largest ratio ``h_k / bound_k``; the theorem says it is ``<= 1``.
    """
    f = check_array(distances, "distances", ndim=1)
    t = check_array(steps, "steps", ndim=1)
    if f.shape != t.shape:
        raise ValueError(
            f"`distances` and `steps` must have the same length; got {f.shape[0]} and "
            f"{t.shape[0]}."
        )
    rho = check_positive(rho, "rho")
    diam = check_nonnegative(diam, "diam")
    judged = t + 1.0 >= 2.0
    if not np.any(judged):
        return _check(name, 0.0, 1.0, "no record after the first step", rho=rho, D=diam)
    h = f[judged] - rho
    bound = gilbert_rate_curve(t[judged], rho, diam)
    # D = 0 (a single point): the bound is 0 and h may only be round-off
    h = np.where(h <= 1e-12 * rho, np.minimum(h, 0.0), h)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(bound > 0, h / np.where(bound > 0, bound, 1.0),
                         np.where(h > 0, np.inf, 0.0))
    worst = int(np.argmax(ratio))
    return _check(name, float(ratio[worst]), 1.0, rho=rho, D=diam,
                  worst_step=float(t[judged][worst]), records=float(judged.sum()))


def hull_recovery(
    hull: HullPairSolution,
    oracle: SVMSolution,
    X: Any,
    y: Any,
    *,
    rtol: float = 1e-4,
) -> BoundCheck:
    """The hard-margin SVM recovered from the nearest points ``p, q`` of the two class hulls.

    With ``P = X[y = +1]``, ``Q = X[y = -1]`` (in index order), ``d = p - q``:

    .. math::

        \\text{margin} = 1/\\|w^*\\| = \\|d\\|/2, \\quad w = 2 d / \\|d\\|^2, \\quad
        b = (\\|q\\|^2 - \\|p\\|^2) / \\|d\\|^2, \\quad
        \\alpha_{P} = 2 \\lambda / \\|d\\|^2, \\ \\alpha_{Q} = 2 \\mu / \\|d\\|^2.

    ``value`` is the largest relative error of these against the hard-margin ``oracle``
    (alpha only where it is unique, see :func:`~maxmargin.verification.crosscheck.
    alpha_uniqueness`); ``bound`` is ``rtol``.
    """
    from maxmargin.verification.crosscheck import alpha_uniqueness

    X, y = check_Xy(X, y)
    rtol = check_nonnegative(rtol, "rtol")
    if not isinstance(hull, HullPairSolution):
        raise ValueError(f"`hull` must be a HullPairSolution; got {type(hull).__name__}.")
    if not isinstance(oracle, SVMSolution) or oracle.w is None:
        raise ValueError("`oracle` must be a linear-kernel SVMSolution (with `w`).")
    d = hull.p - hull.q
    dd = float(d @ d)
    if dd <= 0.0:
        return _check("hull_recovery", math.inf, rtol, "the hulls intersect: no margin")
    w = 2.0 * d / dd
    b = (float(hull.q @ hull.q) - float(hull.p @ hull.p)) / dd
    norm_w = float(np.linalg.norm(oracle.w))
    errors = {
        "margin_error": abs(0.5 * math.sqrt(dd) - 1.0 / norm_w) * norm_w,
        "w_error": float(np.linalg.norm(w - oracle.w)) / norm_w,
        "b_error": abs(b - oracle.b) / max(1.0, abs(oracle.b)),
    }
    alpha_unique, note = alpha_uniqueness(oracle, X, y)
    if alpha_unique:
        alpha = np.empty_like(y)
        alpha[y > 0] = 2.0 * hull.weights_p / dd
        alpha[y < 0] = 2.0 * hull.weights_q / dd
        errors["alpha_error"] = float(np.max(np.abs(alpha - oracle.alpha)) / np.max(oracle.alpha))
    return _check("hull_recovery", max(errors.values()), rtol,
                  "" if alpha_unique else "alpha " + note,
                  margin=0.5 * math.sqrt(dd), **errors)


def support_vector_count(solution: SVMSolution, *, tol: float = 1e-6) -> BoundCheck:
    """Seed 001: at most ``d + 1`` support vectors for data in general position.

    Counts ``alpha_i > tol * max(alpha)`` (an interior-point oracle leaves ~1e-9 on the
    others); ``d`` is the dimension of the training data, or ``n - 1`` points at most for a
    kernel whose feature space has more dimensions than there are points.
    """
    if not isinstance(solution, SVMSolution) or solution.X_train is None:
        raise ValueError("`solution` must be an SVMSolution holding its training data.")
    tol = check_nonnegative(tol, "tol")
    n_sv = int(np.sum(solution.alpha > tol * float(np.max(solution.alpha))))
    d = solution.X_train.shape[1]
    return _check("support_vector_count", n_sv, d + 1, d=d)


def quadratic_feature_map(X: Any) -> np.ndarray:
    """Seed 003's map ``phi(x) = (x_1^2, ..., x_d^2, sqrt2 x_i x_j (i < j), sqrt2 x_1, ...,
    sqrt2 x_d, 1)``, for which ``phi(x) . phi(z) = (1 + x . z)^2``."""
    X = check_array(X, "X", ndim=2)
    d = X.shape[1]
    i, j = np.triu_indices(d, k=1)
    r2 = math.sqrt(2.0)
    return np.hstack([X**2, r2 * X[:, i] * X[:, j], r2 * X, np.ones((X.shape[0], 1))])


def feature_map_identity(
    X: Any,
    Z: Any = None,
    *,
    feature_map: Callable[[np.ndarray], np.ndarray] = quadratic_feature_map,
    rtol: float = 1e-12,
) -> BoundCheck:
    """The kernel trick: ``phi(x) . phi(z) = K(x, z)`` for every pair of rows, with
    ``K = PolyKernel(gamma=1, degree=2, coef0=1)``, i.e. ``(1 + x . z)^2``.

        max over pairs of |phi(x) . phi(z) - K(x, z)| / sqrt(K(x, x) K(z, z)) <= rtol

    The scale is the Cauchy-Schwarz bound ``|phi(x) . phi(z)| <= ||phi(x)|| ||phi(z)||`` (for
    the right map), which is also what a floating-point dot product's round-off is proportional
    to; dividing by ``|K|`` instead would flag round-off wherever ``1 + x . z`` cancels.
    """
    X = check_array(X, "X", ndim=2)
    Z = X if Z is None else check_array(Z, "Z", ndim=2)
    rtol = check_nonnegative(rtol, "rtol")
    kernel = PolyKernel(gamma=1.0, degree=2, coef0=1.0)
    K = kernel(X, Z)
    scale = np.sqrt(np.outer(kernel.diag(X), kernel.diag(Z)))  # >= 1, as K(x, x) >= 1
    explicit = feature_map(X) @ feature_map(Z).T
    err = float(np.max(np.abs(explicit - K) / scale))
    return _check("feature_map_identity", err, rtol)


# --- the string kernel's explicit feature map (Lodhi et al., 2002) -------------------------


def string_feature_map(strings: Any, length: int, lam: float) -> tuple[np.ndarray, list[str]]:
    """Seed 004's map by enumeration: ``[phi_n(s)]_u = sum over index tuples i with s[i] = u of
    lam^(i_last - i_first + 1)``, one column per subsequence ``u`` that occurs; ``O(C(|s|, n))``
    per string (short strings only)."""
    import itertools

    rows: list[dict[str, float]] = []
    for s_ in strings:
        phi: dict[str, float] = {}
        for idx in itertools.combinations(range(len(s_)), length):
            u = "".join(s_[i] for i in idx)
            phi[u] = phi.get(u, 0.0) + lam ** (idx[-1] - idx[0] + 1)
        rows.append(phi)
    words = sorted({u for r in rows for u in r})
    column = {u: k for k, u in enumerate(words)}
    F = np.zeros((len(rows), len(words)))
    for i, r in enumerate(rows):
        for u, v in r.items():
            F[i, column[u]] = v
    return F, words


def string_feature_map_identity(strings: Any, kernel: Any, rtol: float = 1e-12) -> BoundCheck:
    """The dynamic programme equals the definition: ``max |K(s, t) - phi(s) . phi(t)| /
    sqrt(K(s, s) K(t, t)) <= rtol`` with the unnormalised kernel of ``kernel``'s length and
    ``lam`` (all lengths summed when it does)."""
    from maxmargin.kernels import StringSubsequenceKernel

    raw = StringSubsequenceKernel(kernel.length, kernel.lam, normalize=False,
                                  all_lengths=kernel.all_lengths)
    strings = raw.check_points(strings, "strings")
    lengths = range(1, kernel.length + 1) if kernel.all_lengths else (kernel.length,)
    explicit = sum(F @ F.T for F in (string_feature_map(strings, n, kernel.lam)[0]
                                     for n in lengths))
    K = raw.gram(strings)
    scale = np.sqrt(np.outer(np.diag(K), np.diag(K)))
    err = float(np.max(np.abs(explicit - K) / np.maximum(scale, 1e-300)))
    return _check("string_feature_map_identity", err, rtol)


# --- the perceptron's forms in the lecture notes ----------------------------------------------


def perceptron_variant(X: Any, y: Any, start: int = 0, max_updates: int = 100_000) -> BoundCheck:
    """Seed 001's perceptron: homogeneous coordinates ``z_i = (x_i, 1)``, start at
    ``w = y_s z_s``, update ``w <- w + y_i z_i`` on the first mistake of each scan until a scan
    makes none (``T`` updates), output ``w / ||w||``. Novikoff with that start:
    ``w . u >= (T + 1) gamma`` and ``||w||^2 <= (T + 1) R^2`` give
    ``T + 1 <= (R / gamma)^2``; each update costs at most one scan, ``n d`` operations, so the
    cost is ``O(n d (R / gamma)^2)`` (the seed's ``Theta(n d / gamma^2)`` for ``R = 1``).
    ``value`` is ``T + 1``, ``bound`` ``(R / gamma)^2``; details hold the dot products spent
    and their bound ``n (T + 1)``, and whether the normalised output separates the data."""
    X, y = check_Xy(X, y)
    Z = np.hstack([X, np.ones((X.shape[0], 1))])
    w = y[start] * Z[start]
    T = dots = 0
    while T < max_updates:
        margins = y * (Z @ w)
        dots += Z.shape[0]
        wrong = np.flatnonzero(margins <= 0.0)
        if wrong.size == 0:
            break
        w = w + y[wrong[0]] * Z[wrong[0]]
        T += 1
    u = w / np.linalg.norm(w)
    separates = bool(np.all(y * (Z @ u) > 0.0))
    gamma, R = separation_margin(X, y, bias=True)
    bound = (R / gamma) ** 2 if gamma > 0 else math.inf
    return _check("perceptron_variant", T + 1, bound, "" if separates else "output fails",
                  R=R, gamma=gamma, dot_products=dots,
                  cost_bound=X.shape[0] * (T + 1) + X.shape[0], separates=float(separates))


def one_hot_separable(X: Any, y: Any) -> BoundCheck:
    """Seed 003: after the one-hot map ``phi(x_i) = e_i`` of distinct points, any labelling is
    separated through the origin by ``w* = y`` (``y_i w* . e_i = 1``), with margin
    ``1 / sqrt(n)``; so the perceptron (no bias) on ``phi`` makes at most ``(R / gamma)^2 = n``
    mistakes. ``value``: the perceptron's mistakes on the one-hot data with *every* labelling
    here flipped to ``-y`` as well as ``y``; ``bound``: ``n``; details: ``min_i y_i w* . phi_i``
    (must be 1)."""
    from maxmargin.algorithms.perceptron import perceptron

    X, y = check_Xy(X, y)
    _, first = np.unique(X, axis=0, return_index=True)
    keep = np.sort(first)
    Xd, yd = X[keep], y[keep]
    if np.all(yd == yd[0]):
        return _check("one_hot_separable", 0.0, 0.0, "one class after removing duplicates")
    Phi = np.eye(Xd.shape[0])
    worst = 0
    for labels in (yd, -yd):
        res = perceptron(Phi, labels, bias=False, max_epochs=10 * Phi.shape[0])
        if not res.converged:
            return _check("one_hot_separable", math.inf, Phi.shape[0], "did not converge")
        worst = max(worst, res.mistakes)
    margin = float(np.min(yd * (Phi @ yd)))
    return _check("one_hot_separable", worst, Phi.shape[0], w_star_margin=margin)


def homogeneous_form(X: Any, y: Any) -> BoundCheck:
    """Seed 000: the bias folded into ``w`` -- the perceptron with a bias on ``x`` and the one
    without on ``(x, 1)`` make the same updates; ``value``: the largest difference of their
    ``(w, b)`` (must be 0), ``bound`` 0."""
    from maxmargin.algorithms.perceptron import perceptron

    X, y = check_Xy(X, y)
    a = perceptron(X, y, bias=True)
    b = perceptron(np.hstack([X, np.ones((X.shape[0], 1))]), y, bias=False)
    diff = float(np.max(np.abs(np.append(a.w, a.b) - b.w))) + abs(a.mistakes - b.mistakes)
    return _check("homogeneous_form", diff, 0.0, mistakes=a.mistakes)
