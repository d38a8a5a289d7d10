"""MDM and Gilbert on reduced hulls that meet: a run stopped at ``max_iter`` with nothing
showing the hulls apart (no positive lower bound) is finished by Wolfe's method, whose exact
affine steps reach ``w = 0``; checked against the CVXPY oracle on cases of the random campaign
where MDM stopped at its cap of 10^6 iterations.

Run alone: ``python -m pytest tests/test_nu_hull_finish.py -q -p no:cacheprovider``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from maxmargin.algorithms import gilbert_svm
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.formulations import nu_svm_dual
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
