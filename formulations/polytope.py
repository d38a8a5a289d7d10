"""Polytope-distance oracles: the nearest point of a hull to the origin, and of two hulls.

.. math::

    \\text{polytope:} \\quad \\min_{\\lambda \\in \\Delta_m} \\|Q^T \\lambda\\|^2, \\qquad
    \\text{hulls:} \\quad \\min_{\\lambda \\in \\Delta_m, \\mu \\in \\Delta_k}
    \\|P^T \\lambda - Q^T \\mu\\|^2,

with ``Delta`` the probability simplex (rows of ``P``, ``Q`` are the points); with ``mu < 1``
the reduced hulls ``RCH(mu)`` (weights also ``<= mu``, Bennett & Bredensteiner 2000; ``mu >= 1``
is the ordinary hull, solved by the same code as without ``mu``). The model is
built on the points divided by the power of two nearest their largest norm (the same weights
solve it; distances and points are computed from the original data), so any magnitude the
validation accepts is solved at unit scale. Two hulls are first moved by their common mean
(their distance does not depend on the origin, and neither does the model then); the
polytope's origin is part of its problem.

Zero distances. The squared objective is solved to an absolute gap ~1e-10 (times the squared
scale), which pins a *zero* distance only to ~1e-5. So when the computed distance is below
``ZERO_RTOL`` times the scale of the points, the oracle asks an exact question instead: is the
origin in the hull (does ``P^T lam = Q^T mu`` have a solution in the simplices)? That is a
linear feasibility problem solved by HiGHS' simplex method; if it is feasible, the distance is
exactly 0 and the weights are the vertex solution it returns.
"""

from __future__ import annotations

import math
from typing import Any

import cvxpy as cp
import numpy as np

from maxmargin._validation import check_hull_pair, check_mu, check_points
from maxmargin.certificate import HullCertificate, certify_hulls
from maxmargin.certificate_nu import box_fill, certify_reduced_hulls
from maxmargin.formulations._common import Formulation, SolveOutcome
from maxmargin.formulations._face import face_polish
from maxmargin.formulations._hulls_lp import hulls_meet, simplex_clean
from maxmargin.results import HullPairSolution, PolytopeSolution, join_messages
from maxmargin.tolerances import ORACLE_HULL_GAP, SNAP_RTOL, ZERO_RTOL

__all__ = ["polytope_distance", "hull_distance"]

#: Relative weight cuts tried for the support of :func:`_affine_polish` (an interior point's
#: weights of the points off the optimal face are small but not zero).
POLISH_SUPPORT_CUTS = (0.0, 1e-8, 1e-6, 1e-4)


def _affine_polish(blocks: list[np.ndarray], weights: list[np.ndarray]) -> list[np.ndarray] | None:
    """Exact nearest point on the support an interior-point answer identified.

    With ``S_k`` the points of block ``k`` with positive weight and ``a_i = +-x_i`` (first
    block +, the others -), minimise ``||sum_i c_i a_i||^2`` over the affine constraints
    ``sum_{i in S_k} c_i = 1`` (the KKT system ``[A A^T, E^T; E, 0] [c; nu] = [0; 1]``, by
    least squares). When the support is the optimal one, the result is the optimum up to
    round-off (Wolfe's affine step); None when a weight comes out negative.
    """
    support = [np.flatnonzero(w > 0) for w in weights]
    signs = [1.0] + [-1.0] * (len(blocks) - 1)
    A = np.vstack([s * B[idx] for s, B, idx in zip(signs, blocks, support, strict=True)])
    k, nb = A.shape[0], len(blocks)
    M = np.zeros((k + nb, k + nb))
    M[:k, :k] = A @ A.T
    start = 0
    for b, idx in enumerate(support):
        M[k + b, start : start + idx.size] = 1.0
        M[start : start + idx.size, k + b] = 1.0
        start += idx.size
    rhs = np.zeros(k + nb)
    rhs[k:] = 1.0
    c = np.linalg.lstsq(M, rhs, rcond=None)[0][:k]
    if not np.all(c >= 0.0):
        return None
    out, start = [], 0
    for w, idx in zip(weights, support, strict=True):
        new = np.zeros_like(w)
        new[idx] = c[start : start + idx.size]
        out.append(new / new.sum())
        start += idx.size
    return out


def _best_weights(
    points: list[np.ndarray], unit: list[np.ndarray], weights: list[np.ndarray], polish: bool
) -> list[np.ndarray]:
    """The interior-point weights, or their :func:`_affine_polish` when its float64 certificate
    (on the original points) is better."""
    if not polish:
        return weights
    empty = np.zeros((0, points[0].shape[1]))

    def gap(ws: list[np.ndarray]) -> float:
        other = points[1] if len(points) > 1 else empty
        cert = certify_hulls(points[0], other, ws[0], ws[1] if len(ws) > 1 else np.zeros(0))
        return cert.gap if math.isfinite(cert.gap) else math.inf

    best, best_gap = weights, gap(weights)
    for cut in POLISH_SUPPORT_CUTS:  # supports without the interior point's near-zero weights
        trimmed = [np.where(w > cut * w.max(), w, 0.0) for w in weights]
        candidate = _affine_polish(unit, trimmed)
        if candidate is not None and gap(candidate) < best_gap:
            best, best_gap = candidate, gap(candidate)
    return best


def _unit(*point_sets: np.ndarray) -> tuple[float, list[np.ndarray]]:
    """``(s, [S / s, ...])`` with ``s`` the power of two nearest ``max_i ||point_i||``: the
    model solved is well scaled (distances of order 1) and has exactly the original weights."""
    r = max(float(np.max(np.linalg.norm(S, axis=1))) for S in point_sets)
    s = 2.0 ** round(math.log2(r)) if r > 0.0 else 1.0
    return s, [S / s for S in point_sets]


def _meta(outcome: SolveOutcome, method: str) -> dict[str, Any]:
    """The result fields every polytope/hull solution takes from the solve."""
    return {
        "status": outcome.status,
        "iterations": outcome.iterations,
        "method": method,
        "message": outcome.message,
        "runtime": outcome.runtime,
    }


def _judged(common: dict[str, Any], cert: HullCertificate, distance: float) -> dict[str, Any]:
    """``common`` with the status judged by the float64 certificate: a positive distance is
    ``"optimal"`` only with a relative Wolfe gap ``<= ORACLE_HULL_GAP``; a zero distance is
    certified by the LP (:func:`hulls_meet`)."""
    out = dict(common)
    out["message"] = join_messages(common["message"], cert.summary())
    if distance > 0.0 and out["status"] == "optimal" and not cert.meets(ORACLE_HULL_GAP):
        out["status"] = "inaccurate"
    return out


def _relative_gap(z: np.ndarray, lowest: float) -> float:
    """``(||z||^2 - lowest) / ||z||^2`` where ``lowest = min over the hull of <z, point>``."""
    zz = float(z @ z)
    return (zz - lowest) / zz if zz > 0.0 else math.nan


def polytope_distance(Q: np.ndarray, mu: float = 1.0) -> Formulation:
    """Nearest point of ``conv(rows of Q)`` (or of ``RCH(mu)``, weights ``<= mu``) to the origin.

    .. math::

        \\min_{\\lambda} \\|Q^T \\lambda\\|^2 \\quad \\text{s.t.} \\quad \\lambda \\ge 0, \\;
        \\textstyle\\sum_i \\lambda_i = 1.

    ``solve()`` returns a :class:`~maxmargin.results.PolytopeSolution` with
    ``point = Q^T weights``, ``distance = ||point||`` (exactly 0 when the origin is certified to
    be in the hull, see the module docstring) and
    ``gap = (||z||^2 - min_i <z, q_i>) / ||z||^2`` (NaN at z = 0, 0 when certified).

    Parameters
    ----------
    Q : (m, d) array
        The points, one per row.
    mu : float, default 1.0
        The reduced hull's bound on each weight, ``>= 1 / m`` (``ValueError`` otherwise: the
        reduced hull is empty); ``mu >= 1`` is the convex hull.

    Returns
    -------
    Formulation
        Variable ``lam`` (m,).
    """
    Q = check_points(Q, "Q")
    mu = check_mu(mu, {"Q": Q})
    if mu < 1.0:
        return _reduced(Q, None, mu)
    s, (Qs,) = _unit(Q)
    lam = cp.Variable(Q.shape[0], name="lam")
    problem = cp.Problem(cp.Minimize(cp.sum_squares(Qs.T @ lam)), [lam >= 0, cp.sum(lam) == 1])

    def extract(outcome: SolveOutcome, method: str, polish: bool) -> PolytopeSolution:
        nan = math.nan
        common = _meta(outcome, method)
        if not outcome.has_values or lam.value is None:
            m, d = Q.shape
            return PolytopeSolution(np.full(m, nan), np.full(d, nan), nan, **common)
        (weights,) = _best_weights([Q], [Qs], [simplex_clean(lam.value)], polish)
        point = Q.T @ weights
        distance = float(np.linalg.norm(point))
        gap = _relative_gap(point, float(np.min(Q @ point)))
        if distance <= ZERO_RTOL * s:
            certificate = hulls_meet([Qs])
            if certificate is not None:
                weights = certificate[0]
                point, distance, gap = Q.T @ weights, 0.0, 0.0
        cert = certify_hulls(Q, np.zeros((0, Q.shape[1])), weights, np.zeros(0))
        return PolytopeSolution(weights, point, distance, gap=gap, certificate=cert,
                                **_judged(common, cert, distance))

    return Formulation("polytope_distance", problem, {"lam": lam}, extract)


def hull_distance(P: np.ndarray, Q: np.ndarray, mu: float = 1.0) -> Formulation:
    """Nearest points of ``conv(rows of P)`` and ``conv(rows of Q)`` (or of their reduced hulls
    ``RCH(mu)``).

    .. math::

        \\min_{\\lambda, \\mu} \\|P^T \\lambda - Q^T \\mu\\|^2 \\quad \\text{s.t.} \\quad
        \\lambda, \\mu \\ge 0, \\; \\textstyle\\sum_i \\lambda_i = \\sum_j \\mu_j = 1.

    ``solve()`` returns a :class:`~maxmargin.results.HullPairSolution` with ``p = P^T lam``,
    ``q = Q^T mu``, ``distance = ||p - q||`` (exactly 0, status ``"optimal"``, when the hulls are
    certified to intersect) and, with ``z = p - q``,
    ``gap = (||z||^2 - (min_i <z, p_i> - max_j <z, q_j>)) / ||z||^2``.

    Parameters
    ----------
    P, Q : (m, d) and (k, d) arrays
        The two point sets, one point per row, same dimension.
    mu : float, default 1.0
        The reduced hulls' bound on each weight, ``>= 1 / min(m, k)``; ``>= 1``: the hulls.

    Returns
    -------
    Formulation
        Variables ``lam`` (m,) and ``mu`` (k,).
    """
    P, Q = check_hull_pair(P, Q)
    mu = check_mu(mu, {"P": P, "Q": Q})
    if mu < 1.0:
        return _reduced(P, Q, mu)
    centre = np.vstack([P, Q]).mean(axis=0)  # z = p - q is the same from any origin
    Pc, Qc = P - centre, Q - centre
    s, (Ps, Qs) = _unit(Pc, Qc)
    lam = cp.Variable(P.shape[0], name="lam")
    mu = cp.Variable(Q.shape[0], name="mu")
    problem = cp.Problem(
        cp.Minimize(cp.sum_squares(Ps.T @ lam - Qs.T @ mu)),
        [lam >= 0, mu >= 0, cp.sum(lam) == 1, cp.sum(mu) == 1],
    )

    def extract(outcome: SolveOutcome, method: str, polish: bool) -> HullPairSolution:
        nan = math.nan
        common = _meta(outcome, method)
        if not outcome.has_values or lam.value is None or mu.value is None:
            d = P.shape[1]
            return HullPairSolution(
                np.full(P.shape[0], nan), np.full(Q.shape[0], nan),
                np.full(d, nan), np.full(d, nan), nan, **common,
            )
        wp, wq = _best_weights([Pc, Qc], [Ps, Qs],
                               [simplex_clean(lam.value), simplex_clean(mu.value)], polish)
        p, q = P.T @ wp, Q.T @ wq
        z = Pc.T @ wp - Qc.T @ wq  # p - q without the offset's round-off
        distance = float(np.linalg.norm(z))
        gap = _relative_gap(z, float(np.min(Pc @ z) - np.max(Qc @ z)))
        if distance <= ZERO_RTOL * s:
            certificate = hulls_meet([Ps, Qs])
            if certificate is not None:
                wp, wq = certificate
                p, q, distance, gap = P.T @ wp, Q.T @ wq, 0.0, 0.0
        cert = certify_hulls(P, Q, wp, wq)
        return HullPairSolution(wp, wq, p, q, distance, gap=gap, certificate=cert,
                                **_judged(common, cert, distance))

    return Formulation("hull_distance", problem, {"lam": lam, "mu": mu}, extract)


def _reduced(P: np.ndarray, Q: np.ndarray | None, mu: float) -> Formulation:
    """The reduced-hull forms (``mu < 1``) of :func:`polytope_distance` (``Q`` None) and
    :func:`hull_distance`: the box ``w <= mu`` added; weights snapped onto their bounds, summed
    to 1 by :func:`~maxmargin.certificate_nu.box_fill`, polished on their face
    (:func:`~maxmargin.formulations._face.face_polish`) and judged by
    :func:`~maxmargin.certificate_nu.certify_reduced_hulls`."""
    sets = [P] if Q is None else [P, Q]
    centre = np.vstack(sets).mean(axis=0) if Q is not None else np.zeros(P.shape[1])
    moved = [S - centre for S in sets]
    s, unit = _unit(*moved)
    names = ["lam", "mu"][: len(sets)]
    variables = {name: cp.Variable(S.shape[0], name=name) for name, S in zip(names, sets,
                                                                            strict=True)}
    lams = list(variables.values())
    z = unit[0].T @ lams[0] - (unit[1].T @ lams[1] if Q is not None else 0.0)
    constraints = [c for lam in lams for c in (lam >= 0, lam <= mu, cp.sum(lam) == 1)]
    problem = cp.Problem(cp.Minimize(cp.sum_squares(z)), constraints)
    sizes = [S.shape[0] for S in sets]
    signs = np.concatenate([np.full(k, 1.0 if i == 0 else -1.0) for i, k in enumerate(sizes)])
    groups = np.split(np.arange(sum(sizes)), np.cumsum(sizes)[:-1])
    stacked = np.vstack(unit)
    empty = np.zeros((0, P.shape[1]))

    def certify(ws: list[np.ndarray]) -> HullCertificate:
        return certify_reduced_hulls(P, empty if Q is None else Q, ws[0],
                                     np.zeros(0) if Q is None else ws[1], mu)

    def clean(w: np.ndarray) -> np.ndarray:
        w = np.clip(np.asarray(w, dtype=np.float64), 0.0, mu)
        w[w < SNAP_RTOL * mu] = 0.0
        w[w > (1.0 - SNAP_RTOL) * mu] = mu
        return box_fill(w, mu, 1.0)

    def extract(outcome: SolveOutcome, method: str, polish: bool) -> Any:
        nan = math.nan
        common = _meta(outcome, method)
        d = P.shape[1]
        if not outcome.has_values or any(lam.value is None for lam in lams):
            blank = [np.full(k, nan) for k in sizes]
            if Q is None:
                return PolytopeSolution(blank[0], np.full(d, nan), nan, **common)
            return HullPairSolution(*blank, np.full(d, nan), np.full(d, nan), nan, **common)
        a = np.concatenate([clean(lam.value) for lam in lams])
        found = [a, *(face_polish(a, signs, mu, groups, [1.0] * len(sets), X=stacked)
                      if polish else [])]
        best = min(([a[idx] for idx in groups] for a in found),
                   key=lambda ws: _finite(certify(ws).gap))
        zv = sum(sg * (M.T @ w) for sg, M, w in zip((1.0, -1.0), moved, best, strict=False))
        distance = float(np.linalg.norm(zv))
        if distance <= ZERO_RTOL * s:
            meet = hulls_meet(unit, mu=mu)
            if meet is not None:
                best, distance = meet, 0.0
        cert = certify(best)
        gap = 0.0 if distance == 0.0 else cert.gap
        judged = _judged(common, cert, distance)
        if Q is None:
            return PolytopeSolution(best[0], P.T @ best[0], distance, gap=gap, certificate=cert,
                                    **judged)
        return HullPairSolution(best[0], best[1], P.T @ best[0], Q.T @ best[1], distance,
                                gap=gap, certificate=cert, **judged)

    name = "polytope_distance" if Q is None else "hull_distance"
    return Formulation(name, problem, variables, extract)


def _finite(value: float) -> float:
    return value if math.isfinite(value) else math.inf
