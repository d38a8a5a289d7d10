"""Gilbert's nearest-point algorithm (1966), for a polytope, two hulls and the hard-margin SVM.

Polytope distance: the point of ``conv(Q)`` nearest the origin,
``min ||Q^T lam||^2`` over the simplex. Gilbert's algorithm (a Frank-Wolfe method with exact
line search) starts at the vertex nearest the origin, ``x_1 = q_0``, and repeats

.. math::

    q_i = \\arg\\min_{q \\in Q} \\langle x_i, q \\rangle, \\qquad
    x_{i+1} = \\arg\\min_{x \\in [x_i, q_i]} \\|x\\|
           = x_i + t (q_i - x_i),\\;
    t = \\operatorname{clip}\\Big(
        \\frac{\\langle x_i, x_i - q_i \\rangle}{\\|x_i - q_i\\|^2}, 0, 1\\Big),

keeping the convex weights ``lam <- (1 - t) lam + t e_j``. With ``f_i = ||x_i||``,
``omega_i = <x_i, q_i> / ||x_i||``, ``g_i = f_i - omega_i``, ``rho`` the distance and ``D`` the
diameter of ``Q``, the seed proves ``h_k = f_k - rho <= 2 D^2 / (rho (k + 1))``, so
``k = Theta(D^2 / (eps rho^2))`` steps give a ``(1 + eps)`` approximation: the rate is O(1/k)
(see :func:`maxmargin.algorithms.mdm.mdm_hulls` for a linearly convergent method).

Stopping rule: the duality gap ``||x||^2 - min_q <x, q> = f (f - omega)`` relative to ``||x||^2``
is ``<= tol``, i.e. ``omega >= (1 - tol) f``, which brackets ``rho`` in ``[(1 - tol) f, f]``.
The origin inside the hull (``rho = 0``) is detected by ``||x|| <= zero_atol``; see
:mod:`maxmargin.algorithms._nearest_point` for the rule.

Two hulls: ``conv(P) - conv(Q)`` is the hull of the ``n m`` points ``p_i - q_j``, but
its support point in direction ``-z`` is ``argmin_P <z, p> - argmax_Q <z, q>``, so the
difference points are never formed. The SVM is the hull pair of the two classes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from maxmargin._jit import njit
from maxmargin._validation import check_bool, check_choice, check_points, check_X, check_Xy
from maxmargin.algorithms._nearest_point import (
    SVM_HULL_EPS,
    centred,
    check_common,
    examine,
    infeasible_solution,
    retried_by_wolfe,
    run_nearest_point,
    solve_hull_pair,
    svm_from_run,
    vertex_move,
    vertex_sqnorm,
)
from maxmargin.algorithms._reduced_hull import nu_svm_by_hulls
from maxmargin.algorithms.mdm import MDM_MAX_ITER, mdm_loop
from maxmargin.algorithms.wolfe import WOLFE_MAX_ITER, wolfe_loop
from maxmargin.certificate import (
    opposite_duplicates,
    opposite_duplicates_message,
)
from maxmargin.kernels import Kernel, make_kernel, own_points, precomputed
from maxmargin.results import HullPairSolution, PolytopeSolution, SVMSolution
from maxmargin.tolerances import GILBERT_TOL, MDM_TOL, WOLFE_TOL

if TYPE_CHECKING:  # the nu-SVC's result container lives beside the oracles
    from maxmargin.formulations.nu import NuSolution

__all__ = [
    "gilbert", "gilbert_hulls", "gilbert_svm", "gilbert_loop", "one_class_hull",
    "NEAREST_POINT_METHODS",
]

GILBERT_MAX_ITER = 100_000


@njit
def gilbert_loop(data: tuple, state: tuple, stop: tuple, hist: tuple,
                 mu: float | None) -> tuple:
    """Gilbert's iteration on ``H(P) - H(Q)`` (``P``: ``y = +1``, ``Q``: ``y = -1``; ``H`` the
    convex hull for ``mu = None``, else the reduced hull ``RCH(mu)``).

    ``z = sum_i y_i lam_i phi(x_i)``, ``g_i = <z, phi(x_i)>``. Each step: the
    linear-minimisation step (:func:`~maxmargin.algorithms._nearest_point.examine`) gives the
    vertex ``s`` of the difference with ``<z, s> = lower`` (convex hulls: ``x_j - x_k``,
    ``j = argmin_P g``, ``k = argmax_Q g``; reduced hulls: the sorted partial sums);
    ``t = clip((||z||^2 - <z, s>) / ||z - s||^2, 0, 1)``; ``z <- (1 - t) z + t s``;
    ``lam <- (1 - t) lam + t w_s`` (``w_s`` the vertex's weights, kept ``<= mu``). Arguments as
    in :func:`maxmargin.algorithms._nearest_point.run_nearest_point`; returns
    ``(iterations, code, n_hist)``.
    """
    lam, _, _, _, vidx, vw, _ = state
    n_hist = np.int64(0)  # not literals: a literal argument compiles examine once more
    it = np.int64(0)
    while True:
        code, n_hist, _, _, _, _, zz, nv, zs = examine(it, data, state, stop, hist, n_hist,
                                                       mu)
        if code >= 0:
            return it, code, n_hist
        denom = zz - 2.0 * zs + vertex_sqnorm(data, state, nv, mu)  # ||z - s||^2
        t = min(1.0, (zz - zs) / denom) if denom > 0.0 else 1.0
        for i in range(lam.shape[0]):
            lam[i] *= 1.0 - t
        for a in range(nv):
            lam[vidx[a]] += t * vw[a]
            if mu is not None:
                lam[vidx[a]] = min(lam[vidx[a]], mu)
        vertex_move(data, state, 1.0 - t, t, mu)
        it += 1


def gilbert(
    Q: Any,
    tol: float = GILBERT_TOL,
    max_iter: int = GILBERT_MAX_ITER,
    *,
    history_every: int | None = None,
) -> PolytopeSolution:
    """The point of ``conv(rows of Q)`` nearest the origin, by Gilbert's algorithm.

    Solves ``min ||Q^T lam||^2`` s.t. ``lam >= 0``, ``sum lam = 1``, as the hull pair
    ``(Q, {0})`` (:func:`gilbert_hulls` without its finish: the textbook method alone, judged
    by the same float64 certificate), starting at the row of ``Q`` nearest the origin
    (Gilbert's start).

    Parameters
    ----------
    Q : (m, d) array
        The points (rows).
    tol : float, > 0
        Stop when ``||z||^2 - min_i <z, q_i> <= tol ||z||^2`` (relative duality gap); then
        ``(1 - tol) ||z|| <= distance <= ||z||``.
    max_iter : int
        Iteration cap; reaching it returns status ``"max_iter"`` and warns
        :class:`~maxmargin.exceptions.ConvergenceWarning`.
    history_every : int, optional
        Record ``(iteration, relative gap, ||z||)`` every this many steps (default: about 2000
        records over ``max_iter``), plus a log-spaced grid (every step below 64, then 64 per
        doubling of the step count) for log-scale plots, plus the final state.

    Returns
    -------
    PolytopeSolution
        ``point = Q^T weights``, ``distance = ||point||``. When the origin is in the hull
        (``||z|| <= zero_atol``, see :mod:`maxmargin.algorithms._nearest_point`), distance 0 and
        status ``"optimal"``.
    """
    Q = check_points(Q, "Q")
    pair = solve_hull_pair(gilbert_loop, "gilbert", Q, np.zeros((1, Q.shape[1])), tol,
                           max_iter, history_every, GILBERT_MAX_ITER, finish=False)
    return PolytopeSolution(
        weights=pair.weights_p, point=pair.p, distance=pair.distance, status=pair.status,
        iterations=pair.iterations, method="gilbert", history=pair.history, gap=pair.gap,
        message=pair.message, runtime=pair.runtime, certificate=pair.certificate,
    )  # fmt: skip


def gilbert_hulls(
    P: Any,
    Q: Any,
    tol: float = GILBERT_TOL,
    max_iter: int = GILBERT_MAX_ITER,
    *,
    history_every: int | None = None,
    mu: float = 1.0,
    finish: bool = True,
) -> HullPairSolution:
    """Nearest points ``p in conv(P)``, ``q in conv(Q)`` by Gilbert's algorithm on ``P - Q``.

    The Minkowski difference is handled implicitly: the support point in direction ``-z``
    (``z = p - q``) is ``argmin_{p in P} <z, p> - argmax_{q in Q} <z, q>``; only ``weights_p``
    and ``weights_q`` are kept. Stopping rule as in :func:`gilbert` with ``z = p - q``;
    intersecting hulls give distance 0 and status ``"optimal"`` (message says so).

    Parameters
    ----------
    P, Q : (n, d) and (m, d) arrays
    tol, max_iter, history_every : as in :func:`gilbert`.
    mu : float, default 1.0
        ``< 1``: the reduced hulls ``RCH(mu)`` (weights also ``<= mu``; ``mu >= 1 / n`` and
        ``>= 1 / m``, a ``ValueError`` naming ``mu`` otherwise, before any work). The
        linear-minimisation step is then the sorted partial sum (Frank-Wolfe on ``RCH(P) -
        RCH(Q)``, same gap and stopping rule).
    finish : bool, default True
        A run that does not end "optimal" (``max_iter``: Frank-Wolfe's sublinear rate) is
        solved again by Wolfe's method at the same ``tol``, kept when that ends "optimal":
        method ``"gilbert"`` still, the message saying so (``iterations`` and ``history`` are
        then Wolfe's, ``runtime`` both runs'). False: Gilbert's own answer.

    Returns
    -------
    HullPairSolution
    """
    return solve_hull_pair(gilbert_loop, "gilbert", P, Q, tol, max_iter, history_every,
                           GILBERT_MAX_ITER, mu, finish, (wolfe_loop, WOLFE_MAX_ITER))


#: ``gilbert_svm(method=...)``: the loop, its default ``tol`` (from :mod:`maxmargin.tolerances`)
#: and ``max_iter``, whether to store the Gram matrix when it fits (Gilbert and MDM read two
#: kernel columns per step; Wolfe keeps only its corral's columns itself) and a summary. The
#: method registry (:mod:`maxmargin.methods`) registers one method per entry, from this table.
NEAREST_POINT_METHODS = {
    "wolfe": (wolfe_loop, WOLFE_TOL, WOLFE_MAX_ITER, False,
              "Wolfe's minimum-norm point of the hulls' difference (exact active-set steps)"),
    "gilbert": (gilbert_loop, GILBERT_TOL, GILBERT_MAX_ITER, True,
                "Gilbert's nearest-point algorithm (Frank-Wolfe, O(1/k))"),
    "mdm": (mdm_loop, MDM_TOL, MDM_MAX_ITER, True, "MDM pairwise nearest-point steps "
            "(linear rate)"),
}


def gilbert_svm(
    X: Any,
    y: Any,
    tol: float | None = None,
    max_iter: int | None = None,
    method: str = "wolfe",
    kernel: str | Kernel = "linear",
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 0.0,
    *,
    history_every: int | None = None,
    finish: bool = True,
    nu: float | None = None,
) -> SVMSolution | NuSolution:
    """The hard-margin SVM (or with ``nu``, the ν-SVC) from the nearest points of the two
    classes' hulls (reduced hulls).

    Let ``p = sum_{y_i=+1} lam_i phi(x_i)`` and ``q = sum_{y_i=-1} lam_i phi(x_i)`` be the nearest
    points of the hulls of the positives and the negatives, ``d = p - q``. The maximal-margin
    hyperplane is the perpendicular bisector of ``[q, p]``; scaled so that ``f(p) = 1`` and
    ``f(q) = -1``:

    .. math::

        w = \\frac{2 d}{\\|d\\|^2}, \\qquad b = \\frac{\\|q\\|^2 - \\|p\\|^2}{\\|d\\|^2},
        \\qquad \\alpha_i = \\frac{2 \\lambda_i}{\\|d\\|^2}.

    Indeed ``f(p) - f(q) = 2 <d, d> / ||d||^2 = 2`` and ``f(p) + f(q) = 2 <d, p + q> / ||d||^2 +
    2 b = 0``. Optimality of ``p`` gives ``<d, x_i> >= <d, p>`` on the positives (so
    ``f(x_i) >= 1``), that of ``q`` gives ``<d, x_i> <= <d, q>`` on the negatives
    (``f(x_i) <= -1``), with equality where ``lam_i > 0``; and ``w = sum alpha_i y_i phi(x_i)``.
    The margin is ``1 / ||w|| = ||d|| / 2``, ``1/2 ||w||^2 = 2 / ||d||^2`` and, since
    ``sum alpha = 4 / ||d||^2``, ``D(alpha) = sum alpha - 1/2 alpha^T Q alpha = 2 / ||d||^2``
    too (equal for every iterate by this scaling: suboptimality shows as ``y_i f(x_i) < 1``).
    Through a kernel, ``<d, phi(x_i)> = g_i = sum_j y_j lam_j K_ji``, ``||d||^2 = sum lam_i y_i
    g_i`` and ``||p||^2 - ||q||^2 = <d, p + q> = sum_i lam_i g_i``.

    Parameters
    ----------
    X : (n, d) array
    y : (n,) array of -1/+1
    tol : float, optional
        Relative duality-gap tolerance (see :func:`gilbert`); default 1e-6 for ``"gilbert"``,
        1e-8 for ``"mdm"`` and ``"wolfe"``.
    max_iter : int, optional
        Default 100,000 (``"gilbert"``), 1,000,000 (``"mdm"``) or 100,000 major cycles
        (``"wolfe"``).
    method : {"wolfe", "gilbert", "mdm"}
        Wolfe's minimum-norm-point method with exact active-set steps
        (:func:`maxmargin.algorithms.wolfe.wolfe_hulls`; the default, the fastest on close
        hulls), Gilbert's O(1/k) algorithm (the seed's textbook method), or the linearly
        convergent MDM pairwise steps (:func:`maxmargin.algorithms.mdm.mdm_hulls`).
    kernel, gamma, degree, coef0 : as scikit-learn's SVC (``"linear"``, ``"rbf"``, ``"poly"``)
        Non-linear kernels work on the hulls in feature space through kernel columns; ``w`` is
        then None.
    history_every : int, optional
        As in :func:`gilbert`.
    finish : bool
        A run stopped at ``max_iter`` or not confirmed by the certificate is finished exactly by
        the active-set method from its alpha (:mod:`maxmargin.algorithms.active_set`), kept
        when certified (default True); a Gilbert or MDM run that still ends neither "optimal"
        nor "infeasible" is solved again by Wolfe's method (kept when it does; the message
        says so). False returns the nearest-point method's own answer.
    nu : float, optional
        Schölkopf's ν-SVC instead of the hard margin, in ``(0, nu_max]``, ``nu_max = 2 *
        min(l_+, l_-) / l`` (a ``ValueError`` naming ``nu_max``, before any kernel work):
        the nearest points of the reduced hulls ``RCH(2 / (nu l))``, ``alpha = (nu / 2) lam``
        (:mod:`maxmargin.algorithms._reduced_hull`), by any ``method``; with ``finish`` a
        Gilbert or MDM run stopped at ``max_iter`` is finished by Wolfe's method on the
        reduced hulls instead (kept when certified; the message says so).

    Returns
    -------
    SVMSolution
        ``C=None``. Status ``"infeasible"`` when the hulls come within ``SVM_HULL_EPS R = 1e-4 R``
        (``R = max ||phi(x_i) - c||``, ``c`` the mean for the linear kernel on dense data,
        which is run centred (:func:`~maxmargin.algorithms._nearest_point.centred`), the origin
        otherwise; margins below ``5e-5 R`` are not certified, as in ``smo``):
        the one infeasible shape of :func:`~maxmargin.results.infeasible_svm` (NaN ``alpha``,
        ``b``, ``w``, infinite objectives, the certificate's ``hull_distance`` the evidence).
        Otherwise ``certificate`` is the float64 hard-margin certificate. With ``nu``: a
        :class:`~maxmargin.formulations.nu.NuSolution` as ``nu_smo``'s (``alpha`` in
        Schölkopf's scaling, ``b``, ``rho`` and ``C = 1 / (rho l)`` from
        :func:`~maxmargin.certificate_nu.certify_nu_svm`; reduced hulls that meet give
        ``w = 0``, ``rho = b = 0`` and ``hulls_meet``).
    """
    kernel, X = precomputed(kernel, X)  # "precomputed": the Gram matrix and indices
    X, y = check_Xy(X, y, points=own_points(kernel))
    method = check_choice(method, "method", tuple(NEAREST_POINT_METHODS))
    loop, default_tol, default_iter, gram, _ = NEAREST_POINT_METHODS[method]
    tol, max_iter, every = check_common(
        default_tol if tol is None else tol, max_iter, history_every, default_iter
    )
    if nu is not None:
        from maxmargin.formulations.nu import check_nu

        nu = check_nu(nu, y)
    finish = check_bool(finish, "finish")
    kern = make_kernel(kernel, gamma=gamma, degree=degree, coef0=coef0, X=X)
    if nu is not None:
        return nu_svm_by_hulls(loop, method, X, y, kern, nu, tol, max_iter=max_iter,
                               every=every, gram=gram, finish=finish)
    Xc, mean = centred(X, kern)
    clash = opposite_duplicates(X, y)
    if clash is not None:
        weights = np.zeros(X.shape[0])
        weights[list(clash)] = 1.0
        return infeasible_solution(X, y, kern, method, weights, opposite_duplicates_message(clash))

    def solve(step: Any, cap: int, uses_gram: bool) -> SVMSolution:
        run = run_nearest_point(step, Xc, y, kern, tol, cap, every, hull_eps=SVM_HULL_EPS,
                                gram=uses_gram)
        return svm_from_run(run, Xc, y, kern, method, tol, finish,
                            X_user=None if mean is None else X, mean=mean)

    if not finish or method == "wolfe":
        return solve(loop, max_iter, gram)
    return retried_by_wolfe(lambda: solve(loop, max_iter, gram),
                            lambda: solve(wolfe_loop, WOLFE_MAX_ITER, False), method,
                            ("optimal", "infeasible"), stacklevel=3)


def one_class_hull(
    X: Any,
    nu: float = 0.5,
    kernel: str | Kernel = "linear",
    tol: float | None = None,
    max_iter: int | None = None,
    method: str = "mdm",
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 0.0,
    *,
    history_every: int | None = None,
    finish: bool = True,
) -> NuSolution:
    """Schölkopf's one-class SVM from the nearest point of a reduced hull to the origin.

    The dual ``min 1/2 alpha^T K alpha`` over ``0 <= alpha_i <= 1/(nu l)``, ``sum alpha = 1``
    is ``1/2 ||z||^2`` for ``z = sum_i alpha_i phi(x_i)`` in ``RCH(1 / (nu l))`` of the points:
    the nearest point of that reduced hull to the origin (Schölkopf et al. 2001), found by the
    nearest-point loops with one set (the reduced hulls' linear-minimisation step on it alone).
    ``w = z``; given ``alpha``, the best ``rho`` is the judge's order statistic of the margins
    ``<w, phi(x_i)>`` (:func:`~maxmargin.certificate_nu.certify_one_class`), so ``f(x) = sum_i
    alpha_i K(x_i, x) - rho`` is ``one_class_smo``'s decision function.

    Parameters
    ----------
    X : (l, d) array
    nu : float in (0, 1]
    kernel, gamma, degree, coef0 : as :func:`gilbert_svm`
    tol : float, optional
        The loop's relative gap and the judge's (relative duality gap ``<= HULL_CERT_FACTOR
        tol``); default that of ``method`` (:data:`NEAREST_POINT_METHODS`).
    max_iter : int, optional
        As in :func:`gilbert_svm`.
    method : {"mdm", "gilbert", "wolfe"}
        MDM's pairwise steps (the default), Gilbert's steps, or Wolfe's affine minimisations
        (the origin is one atom of the corral).
    history_every : int, optional
        As in :func:`gilbert`.
    finish : bool
        A Gilbert or MDM run stopped at ``max_iter`` and not certified is finished by Wolfe's
        method on the reduced hull (kept when certified; the message says so; default True).
        False returns the method's own answer.

    Returns
    -------
    NuSolution
        As ``one_class_smo``'s (problem ``"one_class"``, ``b = -rho``, ``w`` for the linear
        kernel); ``"optimal"`` exactly when the float64 certificate says so, else a
        :class:`~maxmargin.exceptions.ConvergenceWarning`. A reduced hull that holds the
        origin (at the certificate's resolution) gives ``w = 0``, ``rho = 0``,
        ``hulls_meet``.
    """
    from maxmargin.formulations.nu import check_nu

    kernel, X = precomputed(kernel, X)
    X = check_X(X, points=own_points(kernel))
    nu = check_nu(nu, None)
    method = check_choice(method, "method", tuple(NEAREST_POINT_METHODS))
    loop, default_tol, default_iter, gram, _ = NEAREST_POINT_METHODS[method]
    tol, max_iter, every = check_common(
        default_tol if tol is None else tol, max_iter, history_every, default_iter
    )
    finish = check_bool(finish, "finish")
    kern = make_kernel(kernel, gamma=gamma, degree=degree, coef0=coef0, X=X)
    return nu_svm_by_hulls(loop, method, X, None, kern, nu, tol, max_iter=max_iter,
                           every=every, gram=gram, finish=finish)
