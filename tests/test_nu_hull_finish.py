"""MDM and Gilbert on reduced hulls that meet: a run stopped at ``max_iter`` with nothing
showing the hulls apart (no positive lower bound) is finished by Wolfe's method, whose exact
affine steps reach ``w = 0``; checked against the CVXPY oracle on cases of the random campaign
where MDM stopped at its cap of 10^6 iterations. The converse: a Wolfe run stalled by
round-off short of the certificate is finished by MDM from its weights (a warm start).

Run alone: ``python -m pytest tests/test_nu_hull_finish.py -q -p no:cacheprovider``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from fixtures_stress import near_coincident_copies

from maxmargin.algorithms import gilbert_svm, nu_smo, one_class_hull, wolfe_hulls
from maxmargin.algorithms._meet_lp import MEET_LP_MAX_RANK, meeting_weights
from maxmargin.algorithms._nearest_point import OPTIMAL, run_nearest_point
from maxmargin.algorithms.mdm import mdm_loop
from maxmargin.certificate_nu import certify_nu_svm
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.formulations import nu_svm_dual, one_class_dual
from maxmargin.kernels import make_kernel
from maxmargin.verification.campaign import random_case


@pytest.mark.parametrize("index", [58, 928])
@pytest.mark.parametrize("method", ["mdm", "gilbert"])
def test_a_capped_run_on_meeting_hulls_is_finished_by_wolfe(index: int, method: str) -> None:
    c = random_case(23, index)  # nu-SVC, rbf, collinear points: the reduced hulls meet
    assert c.problem == "nu_svc"
    oracle = nu_svm_dual(c.X, c.y, c.nu, kernel=c.kernel, **c.kernel_params).solve()
    assert oracle.status == "optimal" and oracle.hulls_meet
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # certified: nothing to warn about
        sol = gilbert_svm(c.X, c.y, nu=c.nu, kernel=c.kernel, method=method, max_iter=2000,
                          **c.kernel_params)
    assert sol.status == "optimal" and sol.hulls_meet
    assert "at max_iter with nothing showing the hulls apart" in sol.message
    assert sol.rho == 0.0 and sol.method == method
    assert np.all(np.asarray(sol.alpha) >= 0.0)
    assert abs(float(np.sum(sol.alpha)) - c.nu) <= 1e-9 * c.nu


def test_a_capped_run_on_hulls_apart_stays_max_iter_without_the_finish() -> None:
    """``finish=False``: a capped run on hulls apart is the method's own honest answer; with
    the default ``finish=True`` Wolfe's method finishes it, certified, with the CVXPY
    oracle's ``rho``."""
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(size=(40, 2)) + 4.0, rng.normal(size=(40, 2)) - 4.0])
    y = np.repeat([1.0, -1.0], 40)
    with pytest.warns(ConvergenceWarning, match="not certified"):
        sol = gilbert_svm(X, y, nu=0.2, kernel="rbf", method="gilbert", max_iter=2,
                          finish=False)
    assert sol.status == "max_iter" and "Wolfe" not in sol.message
    for method in ("gilbert", "mdm"):
        done = gilbert_svm(X, y, nu=0.2, kernel="rbf", method=method, max_iter=2)
        assert done.status == "optimal" and "finished by Wolfe's method" in done.message
        ref = nu_svm_dual(X, y, nu=0.2, kernel="rbf").solve()
        assert done.rho == pytest.approx(ref.rho, rel=1e-5)


def test_a_wolfe_run_stalled_by_round_off_is_finished_by_mdm() -> None:
    # Campaign seed 57, case 1,952: nu-SVC, RBF with gamma 2e-9 on duplicated points (every
    # kernel value within 6e-3 of 1). Wolfe's affine minimisations stall at a relative gap of
    # 6e-6; MDM's pairwise steps from its weights reach the certificate.
    c = random_case(57, 1952)
    assert c.problem == "nu_svc" and c.kernel == "rbf"
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = gilbert_svm(c.X, c.y, nu=c.nu, kernel=c.kernel, method="wolfe",
                          **c.kernel_params)
    assert sol.status == "optimal" and sol.method == "wolfe"
    assert "finished by MDM's pairwise steps from its weights" in sol.message
    oracle = nu_svm_dual(c.X, c.y, c.nu, kernel=c.kernel, **c.kernel_params).solve()
    assert sol.dual_objective == pytest.approx(oracle.dual_objective, rel=1e-7)


def test_the_one_class_wolfe_run_stalled_by_round_off_is_finished_by_mdm() -> None:
    # Integer points 1.3e-4 apart with duplicates, RBF gamma 1.58e8: neighbours' kernel values
    # 0.07, duplicates' 1, the nearest point near the centroid (no weight at the bound).
    rng = np.random.default_rng(6)
    X = np.round(rng.normal(size=(174, 7)) * 3.0) * 1.3e-4
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = one_class_hull(X, 0.024, kernel="rbf", gamma=1.58e8, method="wolfe")
    assert sol.status == "optimal"
    assert "finished by MDM's pairwise steps from its weights" in sol.message
    oracle = one_class_dual(X, nu=0.024, kernel="rbf", gamma=1.58e8).solve()
    assert sol.dual_objective == pytest.approx(oracle.dual_objective, rel=1e-7)
    assert sol.rho == pytest.approx(oracle.rho, rel=1e-6)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_a_warm_start_resumes_at_the_given_weights(kernel: str) -> None:
    # run_nearest_point(warm=lam) recomputes z and g from lam: an optimal run's weights are
    # optimal again at once, with the same distance.
    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(-1.0, 1.0, (30, 3)), rng.normal(1.0, 1.0, (30, 3))])
    y = np.r_[-np.ones(30), np.ones(30)]
    kern = make_kernel(kernel, gamma=0.3, X=X)
    hulls = {"y": y, "kernel": kern, "mu": 0.2, "every": 10**6}
    cold = run_nearest_point(mdm_loop, X, tol=1e-10, max_iter=10**6, **hulls)
    assert cold.code == OPTIMAL and cold.iterations > 0
    warm = run_nearest_point(mdm_loop, X, tol=1e-10, max_iter=10**6, warm=cold.lam, **hulls)
    assert warm.code == OPTIMAL and warm.iterations == 0
    assert warm.zz == pytest.approx(cold.zz, rel=1e-12)
    np.testing.assert_allclose(warm.g, cold.g, rtol=0, atol=1e-12 * np.abs(cold.g).max())
    later = run_nearest_point(mdm_loop, X, tol=1e-10, max_iter=10**6,
                              warm=np.full(60, 1.0 / 30), **hulls)
    assert later.code == OPTIMAL and later.zz == pytest.approx(cold.zz, rel=1e-9)


# --- the exact linear programme where the hulls meet -----------------------------------------
def test_wolfe_and_smo_stalled_above_the_resolution_are_settled_by_the_meeting_lp() -> None:
    """Campaign case seed 77, i1116 (ν-SVC, RBF, duplicated points on a line, the oracle's
    reduced hulls meet): Wolfe stalled by round-off with ``||w||^2`` 1e-15 above the
    certificate's resolution, MDM's polish too, and ``nu_smo`` (finished by Wolfe) with them.
    The linear programme's vertex puts ``||w||`` below it: ``w = 0``, as the oracle says."""
    c = random_case(77, 1116)
    kernel = make_kernel(c.kernel, **c.kernel_params)
    oracle = nu_svm_dual(c.X, c.y, c.nu, kernel=kernel).solve()
    assert oracle.status == "optimal" and oracle.hulls_meet
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        wolfe = gilbert_svm(c.X, c.y, nu=c.nu, kernel=kernel, method="wolfe")
        smo_answer = nu_smo(c.X, c.y, nu=c.nu, kernel=kernel, tol=1e-6)
    for sol in (wolfe, smo_answer):
        assert sol.status == "optimal" and sol.hulls_meet and sol.rho == 0.0, sol.message
        assert "linear programme" in sol.message
        assert certify_nu_svm(sol.alpha, c.X, c.y, c.nu, kernel).dual_objective <= 0.0


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_the_meeting_lp_finds_a_common_point_and_not_one_where_there_is_none(kernel) -> None:
    """Brute force: a point of the first class's hull (a convex combination, or for the RBF
    kernel a duplicated point) placed in the second class makes ``z = 0`` reachable; the LP's
    weights reach it to round-off. Moved off that point (the hulls apart), the LP's ``||z||`` is
    positive, and no larger than that of the nearest points Wolfe's method finds."""
    rng = np.random.default_rng(3)
    P = rng.normal(size=(6, 3))
    common = P[0] if kernel == "rbf" else np.full(6, 1 / 6) @ P
    kern = make_kernel(kernel, gamma=0.5)
    for shift, meets in ((0.0, True), (3.0, False)):
        Q = np.vstack([rng.normal(size=(5, 3)) + shift + 4.0, common + shift])
        X, y = np.vstack([P, Q]), np.r_[np.ones(6), -np.ones(6)]
        lam = meeting_weights(X, y, kern, 1.0)
        v = lam * y
        zz = float(v @ kern(X, X) @ v)
        assert np.allclose([lam[:6].sum(), lam[6:].sum()], 1.0) and lam.min() >= 0.0
        if meets:
            assert zz <= 1e-24, zz
        else:
            values, vectors = np.linalg.eigh(kern(X, X))  # the hulls in feature space
            F = vectors * np.sqrt(np.clip(values, 0.0, None))
            nearest = wolfe_hulls(F[:6], F[6:])
            assert 0.0 < zz and math.sqrt(zz) <= math.sqrt(F.shape[1]) * nearest.distance


def test_the_meeting_lp_declines_what_it_cannot_solve_quickly() -> None:
    X = np.zeros((MEET_LP_MAX_RANK + 1, 2))
    y = np.r_[np.ones(X.shape[0] - 1), -1.0]
    assert meeting_weights(X, y, make_kernel("rbf", gamma=1.0), 1.0) is None
    wide = np.zeros((4, MEET_LP_MAX_RANK + 1))
    signs = np.r_[1.0, 1.0, -1.0, -1.0]
    assert meeting_weights(wide, signs, make_kernel("linear"), 1.0) is None
    assert meeting_weights(sp.csr_matrix(np.eye(4)), signs, make_kernel("linear"), 1.0) is None


def test_the_meeting_lp_puts_the_origin_in_one_reduced_hull() -> None:
    """The one-class form (one group, signs 1): points around the origin hold it in their
    reduced hull (``mu = 0.25``: at least four points share the weight); shifted by 10 in
    every coordinate (the points' spread is about 1), the LP's ``||z||`` is well above 0."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 3))
    X -= X.mean(axis=0)
    kern = make_kernel("linear")
    for shift in (0.0, 10.0):
        lam = meeting_weights(X + shift, np.ones(40), kern, 0.25)
        assert np.isclose(lam.sum(), 1.0) and lam.max() <= 0.25
        z = lam @ (X + shift)
        assert (np.linalg.norm(z) <= 1e-12) if shift == 0.0 else np.linalg.norm(z) > 1.0


@pytest.mark.parametrize("seed", [0, 10, 20])
def test_the_meeting_lp_weights_are_polished_by_mdm_where_their_length_is_above_0(seed):
    """Near-coincident copies (1e-6 apart, labels flipped) whose reduced hulls meet to within
    the certificate's resolution (the oracle's ``||w||`` 7.1e-8, the floor 7.4e-8), translated
    by 10 spreads and back (round-off of 1e-15): Gilbert stopped at ``max_iter``, Wolfe's
    finish stalled, and the LP's vertex, which minimises the L1 norm of ``z``, has ``||w||``
    1.1e-7. MDM's pairwise steps from the LP's weights reach the floor: ``w = 0``."""
    X, y = near_coincident_copies(2583)
    nu = 0.13359831622680732
    spread = float(np.sqrt(np.mean(np.sum((X - X.mean(axis=0)) ** 2, axis=1))))
    u = np.random.default_rng(seed).normal(size=X.shape[1])
    t = 10.0 * spread * u / np.linalg.norm(u)
    X = (X + t) - t
    oracle = nu_svm_dual(X, y, nu).solve()
    assert oracle.status == "optimal" and oracle.hulls_meet
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = gilbert_svm(X, y, nu=nu, method="gilbert")
    assert sol.status == "optimal" and sol.hulls_meet and sol.rho == 0.0, sol.message
    assert "MDM's pairwise steps from them" in sol.message
