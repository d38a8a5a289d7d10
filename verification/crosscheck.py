"""A candidate SVM solution against an oracle's: objective, w, decision values, b, alpha, KKT.

What is unique at the optimum decides what is compared:

* the dual objective ``D(alpha) = sum(alpha) - 1/2 alpha^T Q alpha`` is unique, and so is the
  function ``g(x) = sum_i alpha_i y_i K(x_i, x)`` (for the linear kernel ``w``);
* ``b`` is unique when a free support vector (``0 < alpha_i < C``) fixes it; otherwise every
  ``b`` of the oracle's KKT interval ``[lo, hi]`` is optimal and the candidate's ``b`` is judged
  by its distance to that interval, and the decision values are compared without ``b``;
* ``alpha`` is unique exactly when the optimality conditions pin it down. With the oracle's
  primal solution fixed, every dual solution has ``alpha_i = 0`` where ``y_i f_i > 1`` and
  ``alpha_i = C`` where ``y_i f_i < 1``; on the margin set ``M = {i : y_i f_i = 1}`` the
  alphas solve ``sum_{i in M} alpha_i y_i (phi(x_i), 1) = (w_M, -s)`` (stationarity and
  ``y . alpha = 0``). That system has one solution iff the augmented feature vectors
  ``(phi(x_i), 1), i in M`` are linearly independent, i.e. iff the matrix
  ``K_MM + 1 1^T`` has full rank ``|M|``. (Strict complementarity -- no ``alpha_i = 0`` or
  ``alpha_i = C`` on the margin -- is reported in the note: when it fails alpha may still be
  unique by the rank test.) Duplicated support vectors, more than ``d + 1`` linear
  support vectors, or collinear ones make the rank deficient: alpha is then not compared.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from maxmargin._validation import check_Xy
from maxmargin.certificate import TINY
from maxmargin.kernels import own_points
from maxmargin.results import SVMSolution
from maxmargin.tolerances import Tolerances, get_tolerances, preset_for
from maxmargin.verification.kkt import check_solution, kkt_residuals

__all__ = [
    "CrossCheck",
    "cross_check",
    "alpha_uniqueness",
    "alpha_limit",
    "margin_gram",
    "dual_objective",
]




@dataclass(frozen=True)
class CrossCheck:
    """The outcome of :func:`cross_check` (errors as defined in :mod:`.tolerances`).

    Errors that cannot be computed (no ``w`` for a kernel, alpha not unique, an infeasible
    problem) are NaN and are not judged. ``reasons`` lists every failed comparison;
    ``passed`` is true iff it is empty.
    """

    candidate_method: str
    oracle_method: str
    candidate_status: str
    oracle_status: str
    tolerances: str
    objective_error: float
    w_error: float
    decision_error: float
    b_error: float
    b_unique: bool
    b_interval: tuple[float, float]
    alpha_error: float
    alpha_unique: bool
    alpha_note: str
    kkt_max: float
    duality_gap: float
    passed: bool
    reasons: tuple[str, ...]


def dual_objective(alpha: np.ndarray, y: np.ndarray, K: np.ndarray) -> float:
    """``D(alpha) = sum(alpha) - 1/2 (alpha y)^T K (alpha y)``, recomputed from scratch."""
    ay = alpha * y
    return float(np.sum(alpha) - 0.5 * ay @ K @ ay)


def margin_gram(
    oracle: SVMSolution, X: np.ndarray, y: np.ndarray, *, margin_tol: float = 1e-5
) -> tuple[np.ndarray, np.ndarray]:
    """The margin set ``M = {i : |y_i f(x_i) - 1| <= margin_tol}`` (with the oracle's ``f``)
    and the eigenvalues, ascending, of ``G = K_MM + 1 1^T``."""
    yf = y * oracle.decision_function(X)
    margin = np.flatnonzero(np.abs(yf - 1.0) <= margin_tol)
    if margin.size == 0:
        return margin, np.empty(0)
    G = oracle.kernel(X[margin], X[margin]) + 1.0
    return margin, np.linalg.eigvalsh(0.5 * (G + G.T))


def alpha_uniqueness(
    oracle: SVMSolution, X: np.ndarray, y: np.ndarray, *, margin_tol: float = 1e-5
) -> tuple[bool, str]:
    """Whether the oracle shows that the optimal alpha is unique, and why (or why not).

    With the margin set ``M`` of :func:`margin_gram`, alpha is unique iff
    ``rank(K_MM + 1 1^T) = |M|`` (see the module docstring). The rank counts eigenvalues above
    ``1e-10`` times the largest (a Gram matrix squares the condition of the features).
    """
    margin, eig = margin_gram(oracle, X, y, margin_tol=margin_tol)
    upper = math.inf if oracle.C is None else oracle.box
    scale = max(float(np.max(oracle.alpha)), TINY)
    a_m = oracle.alpha[margin]
    at_bound = margin[(a_m <= 1e-6 * scale) | (a_m >= upper - 1e-6 * scale)]
    strict = (
        "strict complementarity holds"
        if at_bound.size == 0
        else f"strict complementarity fails at {at_bound.size} margin point(s)"
    )
    if margin.size == 0:
        return True, f"no point on the margin: every alpha is at a bound; {strict}"
    rank = int(np.sum(eig > 1e-10 * max(float(eig[-1]), TINY)))
    if rank == margin.size:
        return True, f"{margin.size} margin point(s) with independent (phi(x), 1); {strict}"
    return False, (
        f"not unique: {margin.size} margin points but rank(K_MM + 11^T) = {rank} "
        f"(duplicated, collinear or more than d+1 support vectors); {strict}"
    )


def alpha_limit(
    oracle: SVMSolution, X: np.ndarray, y: np.ndarray, tol: Tolerances
) -> float:
    """The alpha error a candidate within ``tol`` can have: ``tol.alpha`` plus the amplification
    of a KKT residual ``tol.kkt`` by the margin system.

    On the margin set the optimal ``u = y_M * alpha_M`` and ``b`` solve
    ``K_MM u + b 1 = c`` and ``1^T u = const``; a residual ``dc`` (each entry at most
    ``tol.kkt``, in units of ``y f``) moves ``u`` within ``1^perp``, where ``v^T K_MM v =
    v^T (K_MM + 1 1^T) v >= lambda_min ||v||^2``, hence
    ``||d alpha||_inf <= sqrt(|M|) tol.kkt / lambda_min``, divided by ``max alpha`` to be
    relative. Ill-conditioned margin sets (nearly dependent support vectors) thus determine
    alpha only loosely, and a tolerance of 1e-3 on the KKT conditions allows it.
    """
    margin, eig = margin_gram(oracle, X, y, margin_tol=_margin_tol(tol))
    if margin.size == 0:
        return tol.alpha
    scale = max(float(np.max(oracle.alpha)), TINY)
    lam = max(float(eig[0]), TINY)
    return tol.alpha + math.sqrt(margin.size) * tol.kkt / (lam * scale)


def _kkt(candidate: SVMSolution, X: np.ndarray, y: np.ndarray, tol: Tolerances
         ) -> tuple[float, float]:
    """The candidate's largest pointwise KKT residual (without ``tol.kkt_exclude`` and the
    duality gap) and its relative duality gap."""
    res = kkt_residuals(candidate, X, y)
    skip = {*tol.kkt_exclude, "duality_gap"}
    values = [float(getattr(res, f)) for f in res.RESIDUALS if f not in skip]
    worst = math.nan if any(math.isnan(v) for v in values) else max(values)
    return worst, float(res.duality_gap)


def cross_check(
    candidate: SVMSolution,
    oracle: SVMSolution,
    X: np.ndarray | None = None,
    y: np.ndarray | None = None,
    *,
    tolerances: str | Tolerances | None = None,
) -> CrossCheck:
    """Compare ``candidate`` with ``oracle`` on the training data ``(X, y)``.

    Parameters
    ----------
    candidate, oracle : SVMSolution
        Solutions of the same problem (same data, ``C`` and kernel); the oracle is trusted.
    X, y : arrays, optional
        The training data; default the oracle's ``X_train``/``y_train``.
    tolerances : str, Tolerances or None
        A preset name of :mod:`maxmargin.tolerances` or a ``Tolerances``; None (default) is
        the preset the candidate's own tolerance implies (:func:`~maxmargin.tolerances.
        preset_for` of ``candidate.tol``): a default ``smo`` answer (``tol=1e-3``) is judged
        MEDIUM, one asked for ``tol=1e-6`` TIGHT.

    Returns
    -------
    CrossCheck
        With, for ``f_c``/``f_o`` the decision values on the training points and ``g = f - b``:

        * ``objective_error = |D(alpha_c) - D(alpha_o)| / max(|D(alpha_o)|, tiny)`` (both
          recomputed from alpha, and each reported ``dual_objective`` must match its alpha);
        * ``w_error = ||w_c - w_o|| / max(||w_o||, tiny)`` (linear kernel, else NaN);
        * ``decision_error = max |f_c - f_o| / max(1, max |f_o|)``, using ``g`` in place of
          ``f`` when ``b`` is not unique;
        * ``b_error = |b_c - b_o| / max(1, |b_o|)``, or the distance of ``b_c`` to the
          oracle's interval ``[lo, hi]`` divided by ``max(1, |lo|, |hi|)`` when ``lo < hi``;
        * ``alpha_error = max |alpha_c - alpha_o| / max(max alpha_o, tiny)`` when alpha is
          unique (:func:`alpha_uniqueness`), else NaN; judged against :func:`alpha_limit`
          (``tol.alpha`` plus the conditioning of the margin set);
        * ``kkt_max``: the largest pointwise residual of ``kkt_residuals(candidate, X, y)``
          (those the preset judges, see ``Tolerances.kkt_exclude``), and ``duality_gap``, its
          relative duality gap, judged against ``tol.gap``.

        An oracle that is ``"infeasible"`` (a non-separable hard margin) makes the check pass
        iff the candidate is ``"infeasible"`` too; otherwise both must be ``"optimal"``.
    """
    candidate = check_solution(candidate, "candidate")
    oracle = check_solution(oracle, "oracle")
    tol = (preset_for(candidate.tol, candidate.method) if tolerances is None
           else get_tolerances(tolerances))
    if X is None or y is None:
        X, y = oracle.X_train, oracle.y_train
    X, y = check_Xy(X, y, points=own_points(getattr(oracle, "kernel", None)))
    nan = math.nan
    reasons: list[str] = []
    common = dict(
        candidate_method=candidate.method,
        oracle_method=oracle.method,
        candidate_status=candidate.status,
        oracle_status=oracle.status,
        tolerances=tol.name,
    )
    if oracle.status != "optimal" or candidate.status != "optimal":
        if oracle.status not in ("optimal", "infeasible"):
            reasons.append(f"oracle status {oracle.status!r} (expected 'optimal')")
        if candidate.status != oracle.status:
            reasons.append(f"candidate status {candidate.status!r} != oracle {oracle.status!r}")
        return CrossCheck(
            **common, objective_error=nan, w_error=nan, decision_error=nan, b_error=nan,
            b_unique=False, b_interval=(nan, nan), alpha_error=nan, alpha_unique=False,
            alpha_note="not compared: no optimal solution", kkt_max=nan, duality_gap=nan,
            passed=not reasons, reasons=tuple(reasons),
        )

    if oracle.alpha.shape[0] != X.shape[0] or candidate.alpha.shape[0] != X.shape[0]:
        raise ValueError(
            f"`candidate` and `oracle` must have one alpha per row of `X` ({X.shape[0]}); got "
            f"{candidate.alpha.shape[0]} and {oracle.alpha.shape[0]}."
        )
    K = oracle.kernel.gram(X)
    d_o = dual_objective(oracle.alpha, y, K)
    d_c = dual_objective(candidate.alpha, y, K)
    objective_error = abs(d_c - d_o) / max(abs(d_o), TINY)  # relative: free of units
    _judge(reasons, "objective", objective_error, tol.objective)
    for who, sol, d in (("candidate", candidate, d_c), ("oracle", oracle, d_o)):
        if abs(sol.dual_objective - d) / max(abs(d), TINY) > tol.objective:
            reasons.append(
                f"{who}'s reported dual objective {sol.dual_objective:.10g} != D(alpha) = "
                f"{d:.10g}"
            )

    w_error = nan
    if oracle.w is not None:
        w_c = candidate.w if candidate.w is not None else X.T @ (candidate.alpha * y)
        w_error = float(np.linalg.norm(w_c - oracle.w) / max(np.linalg.norm(oracle.w), TINY))
        _judge(reasons, "w", w_error, tol.w)

    lo, hi = oracle.b_interval
    b_unique = not lo < hi  # (b, b) from a free SV, or (nan, nan) when not reported
    f_c = candidate.decision_function(X)
    f_o = oracle.decision_function(X)
    if b_unique:
        b_error = abs(candidate.b - oracle.b) / max(1.0, abs(oracle.b))
        diff = f_c - f_o
    else:
        outside = max(lo - candidate.b, candidate.b - hi, 0.0)
        finite = [abs(v) for v in (lo, hi) if math.isfinite(v)]
        b_error = outside / max([1.0, *finite])
        diff = (f_c - candidate.b) - (f_o - oracle.b)
    _judge(reasons, "b", b_error, tol.b)
    decision_error = float(np.max(np.abs(diff)) / max(1.0, float(np.max(np.abs(f_o)))))
    _judge(reasons, "decision", decision_error, tol.decision)

    alpha_unique, alpha_note = alpha_uniqueness(oracle, X, y, margin_tol=_margin_tol(tol))
    alpha_error = nan
    if alpha_unique:
        scale = max(float(np.max(oracle.alpha)), TINY)
        alpha_error = float(np.max(np.abs(candidate.alpha - oracle.alpha)) / scale)
        _judge(reasons, "alpha", alpha_error, alpha_limit(oracle, X, y, tol))

    try:
        kkt_max, gap = _kkt(candidate, X, y, tol)
    except Exception as exc:  # recorded as a failure, never swallowed
        kkt_max = gap = nan
        reasons.append(f"kkt_residuals failed: {type(exc).__name__}: {exc}")
    else:
        _judge(reasons, "kkt", kkt_max, tol.kkt)
        _judge(reasons, "duality gap", gap, tol.gap)

    return CrossCheck(
        **common,
        objective_error=float(objective_error),
        w_error=float(w_error),
        decision_error=decision_error,
        b_error=float(b_error),
        b_unique=bool(b_unique),
        b_interval=(float(lo), float(hi)),
        alpha_error=alpha_error,
        alpha_unique=alpha_unique,
        alpha_note=alpha_note,
        kkt_max=kkt_max,
        duality_gap=gap,
        passed=not reasons,
        reasons=tuple(reasons),
    )


def _margin_tol(tol: Tolerances) -> float:
    """The margin set a candidate within ``tol`` may put weight on: the points within
    ``tol.kkt`` of the margin, not only those on it (``tol.margin``): a candidate's KKT residual
    of ``tol.kkt`` lets such a point carry alpha, so alpha is compared only when that larger
    set pins it down."""
    return max(tol.margin, tol.kkt)


def _judge(reasons: list[str], name: str, value: float, limit: float) -> None:
    """Append a reason when ``value`` exceeds ``limit`` (or is NaN)."""
    if not value <= limit:
        reasons.append(f"{name} error {value:.3g} > {limit:.3g}")
