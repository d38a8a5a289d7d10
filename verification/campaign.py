"""The randomized adversarial campaign: ``maxmargin verify --suite random --count N --seed S``.

Case ``i`` of seed ``S`` is drawn from ``numpy.random.default_rng([S, i])`` alone, so the same
seed gives the same cases whatever ``N``, and ``--start i --count 1`` reruns exactly case ``i``
(its name ``random_s<S>_i<i>`` is printed with every failure). Each case draws:

=============  ==================================================================================
n, d           n log-uniform in [2, 300], d log-uniform in [1, 50] (``n < d`` included)
data           two Gaussian clouds; integer-valued clouds; collinear points (exactly on a line);
               clouds with duplicated rows (for the soft margin also with opposite labels)
labels         by cloud, minority fraction log-uniform in [1/200, 1/2] (at least one of each)
scale          features times s, log-uniform in [1e-4, 1e5]
kernel         linear (1/2), rbf (1/4, gamma log-uniform in [1e-3, 1e2] / s^2 times the
               dimension-free factor), poly (1/4, degree 2 or 3, coef0 0 or 1, gamma = g / (d s^2))
C              None (1/4) or log-uniform in [1e-3, 1e4], capped so that ``C max_i K_ii <=``
               :data:`KAPPA_MAX` (see below)
=============  ==================================================================================

**Hard margin.** Expected statuses must be known without asking any solver, so hard-margin
cases are built to be clearly one or the other: separable clouds cut by a slab of half-width
``0.05 R`` (linear kernel, or an RBF kernel wide enough that its Gram matrix is diagonally
dominant), or a point duplicated with the opposite label (not separable by any kernel).
Hulls closer than ``~1e-4 R`` are where methods may disagree about separability (each states
its resolution), so the campaign does not draw them.

**The ν problems.** A quarter of the cases (:data:`NU_SHARE`, chosen by the stream
``default_rng([S, i, 2])``, so the C-SVC draw of every other index is unchanged) are ν-SVC or
one-class problems (:func:`nu_case`, half each), judged by :mod:`.nu_checks`: n log-uniform in
[3, 200], d in [1, 30], the same kernels and scales; ν-SVC on the soft margin's data (clouds,
integers, collinear, duplicates with flipped labels; classes down to 1:200); one-class on a
blob 0.1 to 10 spreads from the origin (integer-valued, on a line, or with duplicated rows);
``nu`` near 0, near ``nu_max`` (one-class: 1), at it, or in between
(:func:`_nu_value`).

**The conditioning cap.** ``kappa = C max_i K_ii`` is the soft margin's conditioning. SMO's
iteration count (like LIBSVM's) grows about linearly with it on non-separable data, so the
standard family caps C at ``KAPPA_MAX / max_i K_ii`` to keep a case under a second (the cap
can fall below 1e-3 on data of scale 1e5). Extreme magnitudes are still drawn in full: they are
what the certificates must survive.

**The conditioned family** (``maxmargin verify --suite conditioned --count N --seed S``,
:func:`conditioned_case`) is that regime, reported on its own: soft margins with ``kappa``
log-uniform in :data:`KAPPA_RANGE`, clouds of any separation, scales from 1e-3 to 1e4 and,
for the translation-invariant kernels, offsets far from the origin. An outside solver (PIQP on
the plain dual, the ``outside`` row) judges each case: a maxmargin answer that is not
certified where PIQP's is counts as a failure; where neither certifies, an honest
``max_iter`` or ``inaccurate`` is not one. Answers labelled optimal must meet their
certificate and weak duality against the oracle, as everywhere.
"""

from __future__ import annotations

import math

import numpy as np

from maxmargin.certificate_nu import nu_max
from maxmargin.verification.case import Case, nu_methods

__all__ = ["random_cases", "random_case", "svc_case", "nu_case", "conditioned_case", "KAPPA_MAX",
           "KAPPA_RANGE", "NU_SHARE", "FAMILIES", "reproducer"]

#: Largest ``C max_i K_ii`` drawn by the standard family (see the module docstring).
KAPPA_MAX = 1e3
#: The conditioned family draws ``C max_i K_ii`` log-uniform in this range.
KAPPA_RANGE = (1e3, 1e7)
#: The share of the standard family's cases that are ν problems (half ν-SVC, half one-class).
NU_SHARE = 0.25
#: The campaign's families: the suite names ``random`` and ``conditioned``.
FAMILIES = ("random", "conditioned")


def reproducer(seed: int, index: int, family: str = "random") -> str:
    """The command that reruns exactly case ``index`` of ``seed`` in ``family``."""
    return f"maxmargin verify --suite {family} --seed {seed} --start {index} --count 1"


def _log_uniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def _labels(rng: np.random.Generator, n: int) -> np.ndarray:
    """+1/-1 with a minority fraction log-uniform in [1/200, 1/2], both classes present."""
    frac = _log_uniform(rng, 1 / 200, 0.5)
    k = min(n - 1, max(1, round(frac * n)))
    y = np.ones(n)
    y[rng.choice(n, size=k, replace=False)] = -1.0
    if rng.random() < 0.5:
        y = -y
    return y


def _clouds(rng: np.random.Generator, y: np.ndarray, d: int, sep: float) -> tuple[
    np.ndarray, np.ndarray
]:
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    X = rng.normal(size=(y.size, d)) + 0.5 * sep * y[:, None] * u
    return X, u


def _hard_case(rng: np.random.Generator, n: int, d: int, kernel: str):
    """Clearly separable (expected optimal) or clearly not (expected infeasible) data."""
    y = _labels(rng, max(n, 2))
    separable = rng.random() < 0.5
    if separable and kernel in ("linear", "rbf"):
        X, u = _clouds(rng, y, d, sep=rng.uniform(0.5, 3.0))
        R = float(np.max(np.linalg.norm(X, axis=1)))
        proj = X @ u
        slab = 0.05 * R
        # push every point out of the slab |x . u| < slab on its own side
        X += np.outer(np.maximum(0.0, slab - y * proj) * y, u)
        return X, y, "optimal", "slab"
    # a point duplicated with the opposite label: the hulls meet in any feature space
    X, _ = _clouds(rng, y, d, sep=rng.uniform(0.0, 3.0))
    i = int(rng.integers(y.size))
    X = np.vstack([X, X[i : i + 1]])
    y = np.append(y, -y[i])
    return X, y, "infeasible", "opposite_duplicate"


def _soft_data(rng: np.random.Generator, n: int, d: int):
    kind = ("clouds", "integer", "collinear", "duplicates")[int(rng.integers(4))]
    y = _labels(rng, n)
    X, u = _clouds(rng, y, d, sep=rng.uniform(0.0, 4.0))
    if kind == "integer":
        X = np.round(X * rng.choice([1.0, 3.0]))
    elif kind == "collinear":
        X = np.outer(X @ u, u) + rng.normal(size=d)
    elif kind == "duplicates":
        k = max(1, n // 3)
        idx = rng.choice(n, size=k)
        flip = np.where(rng.random(k) < 0.3, -1.0, 1.0)
        X = np.vstack([X, X[idx]])
        y = np.concatenate([y, y[idx] * flip])
    if np.all(y == y[0]):
        y[0] = -y[0]
    return X, y, kind


def random_case(seed: int, index: int) -> Case:
    """Case ``index`` of the campaign ``seed`` (module docstring): a ν problem
    (:func:`nu_case`) with probability :data:`NU_SHARE`, drawn from its own stream
    ``default_rng([seed, index, 2])``, else the C-SVC draw (:func:`svc_case`)."""
    pick = float(np.random.default_rng([int(seed), int(index), 2]).random())
    if pick < NU_SHARE:
        return nu_case(seed, index, "nu_svc" if pick < 0.5 * NU_SHARE else "one_class")
    return svc_case(seed, index)


def svc_case(seed: int, index: int) -> Case:
    """The C-SVC draw of case ``index`` of the campaign ``seed`` (module docstring)."""
    rng = np.random.default_rng([int(seed), int(index)])
    n = max(2, round(_log_uniform(rng, 2, 300)))
    d = max(1, round(_log_uniform(rng, 1, 50)))
    r = rng.random()
    kernel = "linear" if r < 0.5 else ("rbf" if r < 0.75 else "poly")
    hard = rng.random() < 0.25
    scale = _log_uniform(rng, 1e-4, 1e5)
    params: dict[str, float] = {}
    if hard:
        X, y, expected, kind = _hard_case(rng, n, d, kernel)
    else:
        X, y, kind = _soft_data(rng, n, d)
        expected = "optimal"
    if kernel == "rbf" and hard and expected == "optimal":
        # wide enough that K is diagonally dominant: off-diagonal <= exp(-2) / n
        # Same-label (near) duplicates, e.g. the slab's points in d = 1 that land an ulp
        # apart, act as one point: distances below 1e-12 of the spread are not used (a
        # gamma from a round-off distance would make the kernel itself round-off).
        d2 = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
        usable = d2[d2 > 1e-12 * float(d2.max())]
        params["gamma"] = (math.log(X.shape[0]) + 2.0) / float(usable.min()) / scale**2
    else:
        params = _kernel_params(rng, kernel, X.shape[1], scale)
    X = X * scale
    C = None
    if not hard:
        C = _log_uniform(rng, 1e-3, 1e4)
        case = Case(name="probe", area="random", X=X, y=y, C=1.0, kernel=kernel,
                    kernel_params=params)
        kmax = float(np.max(case.make_kernel().diag(case.X)))
        if kmax > 0 and C * kmax > KAPPA_MAX:
            C = KAPPA_MAX / kmax
    methods = _methods(kernel, C, expected, X.shape[0])
    tags = (kind, f"n{X.shape[0]}", f"d{X.shape[1]}", f"scale{scale:.1e}")
    return Case(
        name=f"random_s{seed}_i{index}", area="random", X=X, y=y, C=C, kernel=kernel,
        kernel_params=params, methods=methods, expected_status=expected, tags=tags,
    )


def _kernel_params(rng: np.random.Generator, kernel: str, d: int, scale: float
                   ) -> dict[str, float]:
    """RBF ``gamma`` log-uniform in ``[1e-3, 1e2] / (d s^2)``; poly degree 2 or 3, coef0 0 or
    1, ``gamma`` log-uniform in ``[0.1, 10] / (d s^2)``; nothing for the linear kernel."""
    if kernel == "rbf":
        return {"gamma": _log_uniform(rng, 1e-3, 1e2) / (scale**2 * d)}
    if kernel == "poly":
        return {"degree": int(rng.integers(2, 4)), "coef0": float(rng.integers(0, 2)),
                "gamma": _log_uniform(rng, 0.1, 10.0) / (d * scale**2)}
    return {}


def _nu_value(rng: np.random.Generator, top: float) -> tuple[float, str]:
    """``nu`` in ``(0, top]``: near 0 (``top`` times log-uniform in [1e-4, 0.05]), near ``top``
    (``top (1 - t)``, ``t`` log-uniform in [1e-9, 0.1]), ``top`` itself, or uniform in
    ``[0.05, 0.95] top``."""
    r = rng.random()
    if r < 0.25:
        return top * _log_uniform(rng, 1e-4, 0.05), "nu_small"
    if r < 0.5:
        return top * (1.0 - _log_uniform(rng, 1e-9, 0.1)), "nu_near_max"
    if r < 0.6:
        return top, "nu_max"
    return top * rng.uniform(0.05, 0.95), "nu_mid"


def _one_class_data(rng: np.random.Generator, n: int, d: int) -> tuple[np.ndarray, str]:
    """A Gaussian blob at a random offset (0.1 to 10 spreads from the origin), integer-valued,
    on a line, or with duplicated rows."""
    kind = ("blob", "integer", "collinear", "duplicates")[int(rng.integers(4))]
    centre = rng.normal(size=d) * _log_uniform(rng, 0.1, 10.0)
    X = rng.normal(size=(n, d)) + centre
    if kind == "integer":
        X = np.round(X * rng.choice([1.0, 3.0]))
    elif kind == "collinear":
        u = rng.normal(size=d)
        X = np.outer(rng.normal(size=n), u / np.linalg.norm(u)) + centre
    elif kind == "duplicates":
        X = np.vstack([X, X[rng.choice(n, size=max(1, n // 3))]])
    return X, kind


def nu_case(seed: int, index: int, problem: str) -> Case:
    """The ν draw of case ``index`` of the campaign ``seed`` (module docstring, **The ν
    problems**): ``problem`` ``"nu_svc"`` or ``"one_class"``, from the stream
    ``default_rng([seed, index, 3])``."""
    rng = np.random.default_rng([int(seed), int(index), 3])
    n = max(3, round(_log_uniform(rng, 3, 200)))
    d = max(1, round(_log_uniform(rng, 1, 30)))
    r = rng.random()
    kernel = "linear" if r < 0.5 else ("rbf" if r < 0.75 else "poly")
    scale = _log_uniform(rng, 1e-4, 1e5)
    if problem == "one_class":
        X, kind = _one_class_data(rng, n, d)
        y = np.ones(X.shape[0])
        top = 1.0
    else:
        X, y, kind = _soft_data(rng, n, d)
        top = nu_max(y)
    params = _kernel_params(rng, kernel, X.shape[1], scale)
    nu, regime = _nu_value(rng, top)
    tags = (problem, kind, regime, f"n{X.shape[0]}", f"d{X.shape[1]}", f"scale{scale:.1e}")
    return Case(name=f"random_s{seed}_i{index}", area="random", X=X * scale, y=y, C=None,
                kernel=kernel, kernel_params=params, methods=nu_methods(problem, kernel, nu),
                tags=tags, problem=problem, nu=nu)


def _methods(kernel: str, C: float | None, expected: str, n: int) -> tuple[str, ...]:
    if expected == "infeasible":
        methods = ["oracle", "hard_primal" if kernel == "linear" else None, "smo",
                   "mdm/certified", "wolfe/certified"]
        return tuple(m for m in methods if m)
    methods = ["oracle", "smo", "smo/tight"]
    if n <= 150:
        methods.append("smo/platt/certified")
    if kernel == "linear":
        methods.append("primal/certified")
    if C is None:
        methods += ["mdm/certified", "wolfe/certified"]
    return tuple(methods)


def conditioned_case(seed: int, index: int) -> Case:
    """Case ``index`` of the conditioned family of ``seed``: the regime the standard family
    leaves out (module docstring, **The conditioned family**).

    Soft margin only; ``kappa = C max_i K_ii`` log-uniform in :data:`KAPPA_RANGE`; clouds of
    any separation (nearly separable ones included) scaled by ``s`` log-uniform in
    ``[1e-3, 1e4]`` and, for the translation-invariant kernels, moved far from the origin
    (an offset log-uniform in ``[1, 1e5]`` times their spread: features ~1e4 with a spread of
    ~3 look like this). Each case is judged against PIQP on the plain dual (the ``outside``
    row): a maxmargin answer that is not certified where PIQP's is counts as a failure.
    """
    rng = np.random.default_rng([int(seed), int(index), 1])
    n = max(10, round(_log_uniform(rng, 10, 300)))
    d = max(1, round(_log_uniform(rng, 1, 50)))
    r = rng.random()
    kernel = "linear" if r < 0.5 else ("rbf" if r < 0.75 else "poly")
    y = _labels(rng, n)
    X, _ = _clouds(rng, y, d, sep=_log_uniform(rng, 0.1, 6.0))
    scale = _log_uniform(rng, 1e-3, 1e4)
    params: dict[str, float] = {}
    offset = 0.0
    if kernel in ("linear", "rbf"):
        offset = _log_uniform(rng, 1.0, 1e5)
        X = X + offset * rng.normal(size=d)[None, :] / math.sqrt(d)
    if kernel == "rbf":
        params["gamma"] = _log_uniform(rng, 1e-2, 1e1) / (scale**2 * d)
    elif kernel == "poly":
        params.update(degree=int(rng.integers(2, 4)), coef0=1.0,
                      gamma=_log_uniform(rng, 0.1, 1.0) / (d * scale**2))
    X = X * scale
    probe = Case(name="probe", area="random", X=X, y=y, C=1.0, kernel=kernel,
                 kernel_params=params)
    kmax = float(np.max(probe.make_kernel().diag(probe.X)))
    kappa = _log_uniform(rng, *KAPPA_RANGE)
    C = kappa / kmax
    methods = ["oracle", "outside", "smo", "smo/tight"]
    if kernel == "linear":
        methods.append("primal/certified")
    tags = ("conditioned", f"n{n}", f"d{d}", f"scale{scale:.1e}", f"offset{offset:.1e}",
            f"kappa{kappa:.1e}")
    return Case(name=f"conditioned_s{seed}_i{index}", area="random", X=X, y=y, C=C,
                kernel=kernel, kernel_params=params, methods=tuple(methods), tags=tags)


def random_cases(count: int, seed: int, start: int = 0, family: str = "random"
                 ) -> tuple[Case, ...]:
    """Cases ``start .. start + count - 1`` of the campaign ``seed`` in ``family``."""
    make = conditioned_case if family == "conditioned" else random_case
    return tuple(make(seed, i) for i in range(start, start + count))
