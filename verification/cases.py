"""The named, deterministic case catalogue of the verification suite.

Each :class:`Case` is one SVM problem (data, ``C``, kernel) with the methods that apply to it
and the status every method must reach. Everything is generated from fixed seeds, so the
catalogue -- and every column of the results table except the timings -- is the same on every
run. ``catalogue("quick")`` is the default suite (a subset that runs in seconds once
compiled), ``catalogue("full")`` everything.

Areas: ``worked`` (hand-solved examples, with their answers), ``synthetic`` (Gaussian clouds),
``degenerate`` (duplicates, collinear points, all alpha at the bound), ``scale`` (1e-3, 1e3),
``kernel`` (a circle with poly and RBF kernels), ``infeasible`` (hard margin on non-separable
data: every method must say ``"infeasible"``), ``real`` (scikit-learn's iris, wine and breast
cancer, LIBSVM's heart_scale).

Methods (run by :mod:`maxmargin.verification.suite`):

==================  ==========================================================================
consensus           the dual oracle solved by OSQP against Clarabel (every case), and the
                    oracle's own KKT residuals
hand                the oracle against the hand-derived answer (worked examples)
primal, hinge       the primal (hard or soft) and hinge-loss forms against the dual (linear)
smo/wss2, smo/wss1  SMO at tol 1e-6 with the second-order / maximal-violating-pair rule
smo/platt           SMO with the seed's heuristic at tol 1e-3
gilbert, mdm, wolfe ``gilbert_svm`` with ``method="gilbert"`` / ``"mdm"`` / ``"wolfe"``
                    (hard margin)
hulls/gilbert,      ``gilbert_hulls`` / ``mdm_hulls`` / ``wolfe_hulls`` on the two classes, and
hulls/mdm,          the recovery identities (margin = distance / 2, w, b, alpha) against the
hulls/wolfe         oracle
perceptron          (kernel) perceptron against Novikoff's bound (separable cases)
sv_count            <= d + 1 support vectors (linear hard margin in general position)
feature_map         phi(x) . phi(z) = (1 + x . z)^2 (cases with that kernel)
hard_primal,        infeasible cases: ``hard_margin_primal`` and ``svm_dual(C=None)`` must say
dual_hard           ``"infeasible"`` too
==================  ==========================================================================
"""

from __future__ import annotations

import dataclasses

import numpy as np
from sklearn.datasets import load_breast_cancer, load_iris, load_wine

from maxmargin._validation import check_choice
from maxmargin.datasets import load_heart_scale
from maxmargin.kernels import CallableKernel, PrecomputedKernel, RBFKernel
from maxmargin.kernels import StringSubsequenceKernel as SSK
from maxmargin.verification.campaign import random_case
from maxmargin.verification.case import (
    AREAS,
    DATA_DEFAULT,
    DATA_METHODS,
    SUITES,
    Answer,
    Case,
    data_cases,
    make_case,
    make_nu_case,
    select,
)

__all__ = ["Answer", "Case", "catalogue", "data_cases", "SUITES", "AREAS", "DATA_METHODS",
           "DATA_DEFAULT", "select"]

# --- worked examples (the same hand derivations as tests/fixtures.py, kept independent) -------
def _worked() -> list[Case]:
    # Two points x+ = (2, 0), x- = (0, 0): the bisector x1 = 1 with w . x+ + b = 1 and
    # w . x- + b = -1 gives w = (1, 0), b = -1; w = a (x+ - x-) with a+ = a- = a gives a = 1/2.
    # Objective 1/2 ||w||^2 = 1/2 = sum(alpha) - 1/2 ||w||^2.
    two = make_case(
        "two_points", "worked", np.array([[2.0, 0.0], [0.0, 0.0]]), np.array([1.0, -1.0]),
        None, separable=True, quick=True, tags=("worked",),
        answer=Answer(alpha=np.array([0.5, 0.5]), w=np.array([1.0, 0.0]), b=-1.0, objective=0.5),
    )
    # Li Hang, Example 7.1: x1 = (3,3), x2 = (4,3) positive, x3 = (1,1) negative. With
    # alpha2 = 0 and alpha1 = alpha3 = a, w = a ((3,3) - (1,1)) = (2a, 2a); the dual
    # 2a - 4a^2 is maximal at a = 1/4: w = (1/2, 1/2), b = 1 - w . x1 = -2, objective 1/4.
    li_hang = make_case(
        "li_hang_7_1", "worked", np.array([[3.0, 3.0], [4.0, 3.0], [1.0, 1.0]]),
        np.array([1.0, 1.0, -1.0]), None, separable=True, quick=True, tags=("worked",),
        answer=Answer(alpha=np.array([0.25, 0.0, 0.25]), w=np.array([0.5, 0.5]), b=-2.0,
                      objective=0.25),
    )
    # All alpha at C: x+ = 1, x- = -1, C = 0.1 < 1/2 (the hard-margin alpha), so alpha = C and
    # w = 0.2; alpha = C needs y f <= 1: 0.2 + b <= 1 and 0.2 - b <= 1, so b in [-0.8, 0.8].
    # Dual 0.2 - 1/2 * 0.04 = 0.18 = primal 0.02 + 0.1 * 1.6.
    all_bound = make_case(
        "all_bound_1d", "worked", np.array([[1.0], [-1.0]]), np.array([1.0, -1.0]), 0.1,
        separable=True, quick=True, tags=("worked", "all_bound"),
        answer=Answer(alpha=np.array([0.1, 0.1]), w=np.array([0.2]), b_interval=(-0.8, 0.8),
                      objective=0.18),
    )
    # XOR with (1 + x . z)^2: K(x, x) = 9 and K = 1 between distinct points, so every row of
    # Q sums to 8 and alpha_i = a by symmetry: 4a - 16 a^2 is maximal at a = 1/8, D = 1/4;
    # f(x) = x1 x2, b = 0, every point on the margin.
    xor_poly = make_case(
        "xor_poly2", "worked", np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]]),
        np.array([1.0, 1.0, -1.0, -1.0]), None, separable=True, quick=True, kernel="poly",
        tags=("worked",), answer=Answer(alpha=np.full(4, 0.125), b=0.0, objective=0.25),
        gamma=1.0, degree=2, coef0=1.0,
    )
    return [two, li_hang, all_bound, xor_poly]


# --- synthetic data -----------------------------------------------------------------------------
def _clouds(n: int, d: int, seed: int, *, separation: float, slab: float | None):
    """Two Gaussian clouds at +-``separation``/2 along a random unit direction ``u``; with a
    ``slab``, points with ``y (x . u) < slab`` are dropped, which makes the data separable
    with margin >= ``slab`` (and keeps them in general position)."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(n, d)) + 0.5 * separation * y[:, None] * u
    if slab is not None:
        keep = y * (X @ u) >= slab
        X, y = X[keep], y[keep]
    return X, y


def _synthetic() -> list[Case]:
    cases = []
    for n, d, quick in ((20, 2, True), (60, 5, True), (200, 10, False)):
        X, y = _clouds(n, d, seed=100 + n + d, separation=3.0, slab=0.3)
        cases.append(make_case(f"separable_n{n}_d{d}", "synthetic", X, y, None, separable=True,
                           quick=quick, tags=("general_position",)))
    for n, d, C, quick in ((40, 2, 1.0, True), (100, 3, 0.5, True), (300, 8, 1.0, False),
                           (500, 20, 0.1, False)):
        X, y = _clouds(n, d, seed=200 + n + d, separation=2.0, slab=None)
        cases.append(make_case(f"overlap_n{n}_d{d}_C{C:g}", "synthetic", X, y, C, separable=False,
                           quick=quick))
    return cases


def _degenerate() -> list[Case]:
    X, y = _clouds(16, 2, seed=301, separation=3.0, slab=0.5)
    # every point twice: the duplicated support vectors make alpha non-unique
    dup = make_case("duplicates", "degenerate", np.vstack([X, X]), np.concatenate([y, y]), None,
                separable=True, quick=True)
    # collinear margin points: each class on a vertical line (x1 = +-1), plus points behind;
    # six points on the margin in 2-D, so alpha is not unique
    h = np.array([0.0, 1.0, 2.0, -1.5])
    Xc = np.vstack([np.column_stack([np.ones(4), h]), np.column_stack([-np.ones(4), h]),
                    [[2.5, 0.5], [-3.0, 1.0]]])
    col = make_case("collinear", "degenerate", Xc, np.array([1.0] * 4 + [-1.0] * 4 + [1.0, -1.0]),
                None, separable=True, quick=True)
    # symmetric square: four points on the margin in 2-D (d + 2 = 4 > d + 1 margin points)
    sq = make_case("square_margin", "degenerate",
               np.array([[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0]]),
               np.array([1.0, 1.0, -1.0, -1.0]), None, separable=True, quick=False)
    Xo, yo = _clouds(60, 3, seed=302, separation=1.0, slab=None)
    small_c = make_case("overlap_small_C", "degenerate", Xo, yo, 0.01, separable=False, quick=False,
                    tags=("all_bound",))
    return [dup, col, sq, small_c]


def _scale() -> list[Case]:
    X, y = _clouds(30, 3, seed=401, separation=3.0, slab=0.3)
    Xo, yo = _clouds(40, 2, seed=402, separation=2.0, slab=None)
    # Scaling X by s with the box C is the unit-scale problem with C s^2 (substitute w = w'/s and
    # multiply the objective by s^2). The soft cases keep C s^2 moderate, so they test extreme
    # magnitudes (K ~ 1e-6 or 1e6, alpha ~ 1e6 or 1e-6) and not a huge effective C, which is a
    # conditioning question of its own (1e3 X with C = 1 would be C = 1e6: SMO, like LIBSVM,
    # needs ~1e8 iterations there).
    return [
        make_case("scale_1e-3", "scale", 1e-3 * X, y, None, separable=True, quick=True,
              tags=("general_position",)),
        make_case("scale_1e3", "scale", 1e3 * X, y, None, separable=True, quick=True,
              tags=("general_position",)),
        make_case("scale_1e3_soft", "scale", 1e3 * Xo, yo, 1e-6, separable=False, quick=False),
        make_case("scale_1e-3_soft", "scale", 1e-3 * Xo, yo, 1e3, separable=False, quick=False),
    ]


def _scaled_linear(n: int, d: int, scale: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian features of magnitude ``scale`` with random labels (both classes present)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * scale
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0
    return X, y


def _reproducers() -> list[Case]:
    """The trust issue's reproducers: unscaled features (|X| ~ 1e4) with n < d and a large
    ``C`` (every oracle used to fail: the hard-margin shortcut now certifies them), a badly
    scaled non-separable problem (``C max K_ii ~ 2e8``: the oracles certify it; SMO, like
    LIBSVM, needs more than its 10 million iterations there and is not run), the collinear
    RBF hard margin that used to give ``D = -2.7e23`` labelled optimal, and identical points
    with opposite labels under an RBF kernel (not separable by any kernel). From the random
    campaign: ``random_s77_i199``, a cubic kernel on 127 collinear points of magnitude 2e-3
    (Gram matrix of rank 4), where every solver stopped short (m - M = 1.7e-4) until the
    oracles' polish became an active-set method; ``random_s2_i3998``, an RBF kernel of numerical
    rank ~8 on 360 duplicated 2-D points with ``C = 1000``, where the active-set finish wandered
    among flat directions until it kept the last stationary point within SMO's tolerance."""
    certified = ("oracle", "smo", "smo/tight", "primal/certified")
    X5, y5 = _scaled_linear(5, 34, 3e4, seed=0)
    X24, y24 = _scaled_linear(24, 43, 3e4, seed=1)
    X380, y380 = _scaled_linear(380, 15, 2.6e4, seed=0)
    t = np.linspace(-3.0, 3.0, 30)
    Xc, yc = np.column_stack([t, 2.0 * t]), np.where(np.sin(3.0 * t) > 0, 1.0, -1.0)
    Xd, yd = _clouds(30, 2, seed=701, separation=2.0, slab=None)
    Xd, yd = np.vstack([Xd, Xd[:1]]), np.append(yd, -yd[0])

    low_rank = dataclasses.replace(
        random_case(77, 199), name="collinear_poly3_rank4", area="kernel", quick=True,
        tags=("random_s77_i199", "separable"))
    flat = dataclasses.replace(
        random_case(2, 3998), name="flat_rbf_duplicates", area="kernel", quick=False,
        tags=("random_s2_i3998", "duplicates"))
    return [low_rank, flat, *_conditioning(certified),
        Case("scaled_wide_n5_d34", "scale", X5, y5, 58.0, methods=certified, quick=True,
             tags=("separable",)),
        Case("scaled_wide_n24_d43", "scale", X24, y24, 4.55, methods=certified, quick=False,
             tags=("separable",)),
        Case("scaled_n380_d15", "scale", X380, y380, 0.008,
             methods=("oracle", "primal/certified"), quick=False),
        Case("collinear_rbf_hard", "kernel", Xc, yc, None, kernel="rbf",
             kernel_params={"gamma": 0.15}, quick=True, tags=("separable",),
             methods=("oracle", "smo", "smo/wss2", "mdm/certified", "mdm")),
        Case("opposite_duplicate_rbf_hard", "infeasible", Xd, yd, None, kernel="rbf",
             kernel_params={"gamma": 1.0}, expected_status="infeasible", quick=True,
             methods=("oracle", "dual_hard", "smo", "smo/wss2", "gilbert", "mdm", "wolfe")),
    ]


def _conditioning(certified: tuple[str, ...]) -> list[Case]:
    """Two problems where the oracles used to give up while an outside interior-point solver
    (PIQP) certified them: features offset far from the origin (~1.9e4, spread ~3, n = 63,
    d = 34, C = 403: every oracle was 'inaccurate' until they centred the data), and scaled
    normal data, nearly separable (|X| ~ 8.5e3, n = 429, d = 46, C = 0.256). Each is judged
    against PIQP on the plain dual too (the ``outside`` row)."""
    rng = np.random.default_rng(429)
    X1 = 1.9e4 + 3.0 * rng.normal(size=(63, 34))
    y1 = np.where((X1 - X1.mean(axis=0)) @ rng.normal(size=34) + 2.0 * rng.normal(size=63) > 0,
                  1.0, -1.0)
    Z = rng.normal(size=(429, 46))
    y2 = np.where(Z @ rng.normal(size=46) + 0.05 * rng.normal(size=429) > 0, 1.0, -1.0)
    methods = certified + ("outside",)
    return [
        Case("offset_linear_n63_d34", "scale", X1, y1, 403.0, methods=methods, quick=True,
             tags=("conditioned", "separable")),
        Case("scaled_near_separable_n429_d46", "scale", 8.5e3 * Z, y2, 0.256, methods=methods,
             quick=False, tags=("conditioned", "separable")),
    ]


def _circle(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Radius < 1 labelled +1, radius in (1.5, 2.2) labelled -1: a circle separates them."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    r = np.where(y > 0, rng.uniform(0.0, 1.0, n), rng.uniform(1.5, 2.2, n))
    phi = rng.uniform(0.0, 2.0 * np.pi, n)
    return np.column_stack([r * np.cos(phi), r * np.sin(phi)]), y


def _kernel_cases() -> list[Case]:
    X, y = _circle(40, seed=501)
    Xx = np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]])
    yx = np.array([1.0, 1.0, -1.0, -1.0])
    rng = np.random.default_rng(502)
    Xn = np.vstack([Xx + 0.2 * rng.normal(size=(4, 2)) for _ in range(10)])
    return [
        make_case("circle_poly2", "kernel", X, y, None, separable=True, quick=True, kernel="poly",
              gamma=1.0, degree=2, coef0=1.0),
        make_case("circle_rbf", "kernel", X, y, 10.0, separable=True, quick=True, kernel="rbf",
              gamma=0.5),
        make_case("circle_rbf_hard", "kernel", X, y, None, separable=True, quick=False,
              kernel="rbf", gamma=0.5),
        make_case("xor_rbf_soft", "kernel", Xn, np.tile(yx, 10), 1.0, separable=True, quick=False,
              kernel="rbf", gamma=1.0),
    ]


def _infeasible() -> list[Case]:
    X, y = _clouds(40, 2, seed=601, separation=1.0, slab=None)
    return [
        make_case("xor_linear_hard", "infeasible",
              np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]]),
              np.array([1.0, 1.0, -1.0, -1.0]), None, separable=False, quick=True),
        make_case("overlap_hard", "infeasible", X, y, None, separable=False, quick=True),
    ]


def _pair(X: np.ndarray, labels: np.ndarray, pos: int, neg: int, scale: bool):
    keep = (labels == pos) | (labels == neg)
    Xp = X[keep]
    if scale:
        Xp = (Xp - Xp.mean(axis=0)) / Xp.std(axis=0)
    return Xp, np.where(labels[keep] == pos, 1.0, -1.0)


def _real(full: bool) -> list[Case]:

    iris = load_iris()
    Xi, yi = _pair(iris.data, iris.target, 0, 1, scale=False)
    cases = [make_case("iris_setosa_versicolor", "real", Xi, yi, None, separable=True, quick=True)]
    Xh, yh = load_heart_scale()
    cases.append(make_case("heart_scale", "real", Xh, yh, 1.0, separable=False, quick=True))
    if not full:
        return cases
    Xv, yv = _pair(iris.data, iris.target, 1, 2, scale=False)
    Xs, ys = _pair(iris.data, iris.target, 0, 2, scale=False)
    wine = load_wine()
    Xw, yw = _pair(wine.data, wine.target, 0, 1, scale=True)
    Xw2, yw2 = _pair(wine.data, wine.target, 1, 2, scale=True)
    bc = load_breast_cancer()
    Xb = (bc.data - bc.data.mean(axis=0)) / bc.data.std(axis=0)
    yb = np.where(bc.target == 1, 1.0, -1.0)
    cases += [
        make_case("iris_versicolor_virginica", "real", Xv, yv, 1.0, separable=False, quick=False),
        make_case("iris_setosa_virginica", "real", Xs, ys, None, separable=True, quick=False),
        make_case("wine_0_1", "real", Xw, yw, 1.0, separable=True, quick=False),
        make_case("wine_1_2", "real", Xw2, yw2, 0.5, separable=True, quick=False),
        # separable, but with a tiny margin: (R / gamma)^2 ~ 1e8, too slow for the perceptron
        make_case("breast_cancer", "real", Xb, yb, 1.0, separable=True, perceptron=False,
              quick=False),
        # raw features (|x| up to ~4e3): float32 SMO used to return a wrong "optimal" here;
        # separable like its standardised twin (an affine map per feature keeps separability)
        Case("breast_cancer_raw", "real", bc.data, yb, 1.0, tags=("separable",),
             methods=("oracle", "smo", "primal/certified"), quick=False),
        # separable in the RBF feature space (its Gram matrix is positive definite)
        make_case("heart_scale_rbf", "real", Xh, yh, 1.0, separable=True, quick=False,
              kernel="rbf", gamma="scale"),
    ]
    return cases


def motif_strings(n: int, seed: int, motif: str = "ab") -> tuple[list[str], np.ndarray]:
    """Strings over ``{a, c, d}`` of length 6-9; the positive ones (odd indices) get ``motif``
    at a random place, so the motif decides the class."""
    rng = np.random.default_rng(seed)
    X, y = [], np.where(np.arange(n) % 2 == 1, 1.0, -1.0)
    for label in y:
        s = "".join(rng.choice(list("acd"), size=int(rng.integers(6, 10))))
        if label > 0:
            p = int(rng.integers(0, len(s) - len(motif)))
            s = s[:p] + motif + s[p + len(motif):]
        X.append(s)
    return X, y


def _strings_and_engine() -> list[Case]:
    """Seed 004's string kernel, and kernels given as a Gram matrix or a callable (checked
    against the built-in they reproduce by the ``same_as_builtin`` method)."""

    X, y = motif_strings(40, 701)
    short, y_short = motif_strings(12, 702)
    Xc, yc = _circle(40, seed=501)
    rbf = RBFKernel(0.5)
    pre = PrecomputedKernel(rbf.gram(Xc))
    call = CallableKernel(rbf.__call__)
    smo_rules = ("consensus", "smo/wss2", "smo/wss1", "smo/platt")
    return [
        Case("motif_ssk", "strings", X, y, 1.0, kernel=SSK(2, 0.5), quick=True,
             methods=smo_rules + ("string_feature_map",), tags=("strings", "separable")),
        Case("motif_ssk_hard", "strings", X, y, None, kernel=SSK(2, 0.5), quick=False,
             methods=smo_rules + ("gilbert", "mdm", "wolfe", "perceptron"),
             tags=("strings", "separable")),
        Case("short_ssk_all_lengths", "strings", short, y_short, 1.0,
             kernel=SSK(3, 0.7, normalize=False, all_lengths=True), quick=False,
             methods=smo_rules + ("string_feature_map",), tags=("strings", "separable")),
        Case("circle_rbf_precomputed", "kernel", pre.training_points(), yc, 10.0, kernel=pre,
             quick=True, methods=smo_rules + ("same_as_builtin",),
             tags=("same_as:circle_rbf", "separable")),
        Case("circle_rbf_callable", "kernel", Xc, yc, 10.0, kernel=call, quick=False,
             methods=smo_rules + ("same_as_builtin",), tags=("same_as:circle_rbf", "separable")),
    ]


def _perceptron_forms() -> list[Case]:
    """The lecture notes' perceptron theorems on separable data (homogeneous form, variant
    bound, one-hot separability)."""
    X, y = _clouds(60, 5, seed=801, separation=4.0, slab=0.5)
    Xs, ys = _clouds(30, 2, seed=802, separation=3.0, slab=0.5)
    methods = ("perceptron_variant", "one_hot", "homogeneous")
    return [
        Case("perceptron_forms_d5", "theorems", X, y, None, quick=True, methods=methods,
             tags=("separable",)),
        Case("perceptron_forms_d2", "theorems", Xs, ys, None, quick=False, methods=methods,
             tags=("separable",)),
    ]


def _blob_and_ring(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A Gaussian blob around (3, 3) and a noisy ring of radius 2 (one-class data)."""
    rng = np.random.default_rng(seed)
    blob = rng.normal(size=(n, 2)) + 3.0
    phi = rng.uniform(0.0, 2.0 * np.pi, n)
    r = 2.0 + 0.1 * rng.normal(size=n)
    return blob, np.column_stack([r * np.cos(phi), r * np.sin(phi)])


def _nu_cases() -> list[Case]:
    """ν-SVC and one-class SVM (area ``nu``, :mod:`.nu_checks`): clouds with linear, RBF and
    poly kernels; reduced hulls that meet (classes with one centroid at any ``nu``; at ``nu =
    2 / l``, the full hulls, overlapping clouds, or a point in both classes with RBF);
    ``nu = nu_max`` on imbalanced classes; duplicates with opposite labels; scales 1e-3 and
    1e3; a blob and a ring, with ``nu = 1`` (the centroid)."""
    X, y = _clouds(40, 2, seed=901, separation=2.5, slab=None)
    rng = np.random.default_rng(902)
    half = rng.normal(size=(10, 2))
    half -= half.mean(axis=0)  # the classes +-half share the centroid 0
    Xm, ym = np.vstack([half, -half @ np.array([[0.0, 1.0], [1.0, 0.0]])]), np.repeat([1.0, -1.0],
                                                                                       10)
    Xi, yi = _clouds(32, 2, seed=903, separation=3.0, slab=None)
    yi = np.where(np.arange(32) % 4 == 0, 1.0, -1.0)  # 8 positive, 24 negative: nu_max = 1/2
    Xi = Xi + 1.5 * yi[:, None]
    Xo, _ = _clouds(40, 2, seed=904, separation=1.0, slab=None)
    yo = np.where(np.arange(40) % 2 == 0, 1.0, -1.0)
    Xd = np.vstack([X[:20], X[:6]])
    yd = np.concatenate([y[:20], -y[:6]])
    X5, y5 = _clouds(120, 5, seed=905, separation=2.0, slab=None)
    blob, ring = _blob_and_ring(40, 906)
    iris = load_iris()
    Xv, yv = _pair(iris.data, iris.target, 1, 2, scale=True)
    return [
        make_nu_case("nu_clouds_linear", X, y, 0.5, quick=True),
        make_nu_case("nu_clouds_rbf", X, y, 0.3, quick=True, kernel="rbf", gamma=0.5),
        make_nu_case("nu_meet_centroids", Xm, ym, 0.4, quick=True, tags=("hulls_meet",)),
        make_nu_case("nu_at_nu_max", Xi, yi, 0.5, quick=True, tags=("nu_max",)),
        make_nu_case("one_class_blob_rbf", blob, None, 0.2, quick=True, kernel="rbf", gamma=0.5),
        make_nu_case("one_class_blob_linear", blob, None, 0.3, quick=True),
        make_nu_case("one_class_ring_centroid", ring, None, 1.0, quick=True, kernel="rbf",
                     gamma=0.5),
        make_nu_case("nu_meet_small_nu", Xo, yo, 2.0 / 40, quick=False, tags=("hulls_meet",)),
        make_nu_case("nu_meet_duplicate_rbf", Xd, yd, 2.0 / yd.size, quick=False,
                     tags=("hulls_meet",), kernel="rbf", gamma=0.5),
        make_nu_case("nu_at_nu_max_rbf", Xi, yi, 0.5, quick=False, tags=("nu_max",),
                     kernel="rbf", gamma=0.5),
        make_nu_case("nu_opposite_duplicates", Xd, yd, 0.6, quick=False),
        make_nu_case("nu_clouds_poly_d5", X5, y5, 0.4, quick=False, kernel="poly", gamma=0.2,
                     degree=3, coef0=1.0),
        make_nu_case("nu_clouds_scale_1e-3", 1e-3 * X, y, 0.3, quick=False),
        make_nu_case("nu_clouds_scale_1e3_rbf", 1e3 * X, y, 0.3, quick=False, kernel="rbf",
                     gamma=0.5e-6),
        make_nu_case("nu_iris_versicolor_virginica", Xv, yv, 0.2, quick=False, kernel="rbf",
                     gamma=0.25),
        make_nu_case("one_class_ring_rbf", ring, None, 0.1, quick=False, kernel="rbf",
                     gamma=0.5),
        make_nu_case("one_class_ring_half", ring, None, 0.5, quick=False, kernel="rbf",
                     gamma=2.0),
        make_nu_case("one_class_blob_centroid_linear", blob, None, 1.0, quick=False),
        make_nu_case("one_class_blob_poly", blob, None, 0.25, quick=False, kernel="poly",
                     gamma=0.1, degree=2, coef0=1.0),
        make_nu_case("one_class_iris_scale_1e3", 1e3 * Xv, None, 0.15, quick=False,
                     kernel="rbf", gamma=0.25e-6),
    ]


def catalogue(suite: str = "quick") -> tuple[Case, ...]:
    """The cases of ``suite`` (``"quick"`` or ``"full"``), in a fixed order."""
    suite = check_choice(suite, "suite", SUITES)
    full = suite == "full"
    cases = (
        _worked() + _synthetic() + _degenerate() + _scale() + _kernel_cases() + _infeasible()
        + _reproducers() + _real(full) + _strings_and_engine() + _perceptron_forms()
        + _nu_cases()
    )
    return tuple(c for c in cases if full or c.quick)


