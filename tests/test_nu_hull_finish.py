"""MDM and Gilbert on reduced hulls that meet: a run stopped at ``max_iter`` with nothing
showing the hulls apart (no positive lower bound) is finished by Wolfe's method, whose exact
affine steps reach ``w = 0``; checked against the CVXPY oracle on cases of the random campaign
where MDM stopped at its cap of 10^6 iterations. The converse: a Wolfe run stalled by
round-off short of the certificate is finished by MDM from its weights (a warm start).

Run alone: ``python -m pytest tests/test_nu_hull_finish.py -q -p no:cacheprovider``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from maxmargin.algorithms import gilbert_svm, one_class_hull
from maxmargin.algorithms._nearest_point import OPTIMAL, run_nearest_point
from maxmargin.algorithms.mdm import mdm_loop
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
