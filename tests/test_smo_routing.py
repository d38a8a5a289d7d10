"""Large linear soft margins that ``smo`` hands to ``dcd_svc`` (``algorithms/smo/routing.py``).

Independent answers: SMO itself on the same problem (forced by a setting that keeps it), the
float64 certificate of each answer, and the primal objective both give.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from maxmargin import MaxMarginClassifier
from maxmargin.algorithms import smo
from maxmargin.algorithms.smo import routing
from maxmargin.certificate import certify_svm
from maxmargin.kernels import LinearKernel


def _data(n: int, d: int = 6, seed: int = 0, offset: float = 0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + offset
    y = np.where(X[:, 0] - offset + 0.6 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _primal(sol, X, y, C) -> float:
    w = np.asarray(X.T @ (sol.alpha * y)).ravel()
    return 0.5 * float(w @ w) + C * float(np.maximum(0.0, 1.0 - y * (X @ w + sol.b)).sum())


@pytest.mark.parametrize("sparse", [False, True])
def test_large_linear_problems_go_to_dcd_and_agree_with_smo(sparse) -> None:
    """At ``DCD_MIN_ROWS`` rows (sparse: ``DCD_MIN_ROWS_SPARSE``) ``smo`` answers by
    ``dcd_svc``: certified (``m - M < tol`` recomputed here), within the tolerances' reach of
    SMO's own answer (``precision="double"`` keeps SMO) on the dual and primal objectives."""
    n = routing.DCD_MIN_ROWS_SPARSE if sparse else routing.DCD_MIN_ROWS
    X, y = _data(n)
    A = sp.csr_matrix(X) if sparse else X
    C, tol = 0.5, 1e-6
    sol = smo(A, y, C, tol=tol)
    ref = smo(A, y, C, tol=tol, precision="double")
    assert sol.method == "dcd_svc" and sol.status == "optimal"
    assert ref.method == "smo/wss2" and ref.status == "optimal"
    cert = certify_svm(sol.alpha, X, y, C, LinearKernel())
    assert cert.kkt_violation < tol
    scale = max(1.0, abs(ref.dual_objective))
    assert abs(sol.dual_objective - ref.dual_objective) <= 1e-5 * scale
    assert abs(_primal(sol, X, y, C) - _primal(ref, X, y, C)) <= 1e-5 * scale
    again = smo(A, y, C, tol=tol)  # deterministic: the same bits
    np.testing.assert_array_equal(again.alpha, sol.alpha)
    assert again.b == sol.b


@pytest.mark.parametrize("case", ["small", "wss1", "max_iter", "hard", "rbf", "single",
                                  "no_finish", "offset"])
def test_smo_keeps_what_dcd_does_not_take(case) -> None:
    """Below the row threshold, with a setting of SMO's own, a hard margin, another kernel or
    data far from the origin (SMO centres them), ``smo`` runs SMO."""
    n = routing.DCD_MIN_ROWS - 1 if case == "small" else routing.DCD_MIN_ROWS
    X, y = _data(n, offset=1e4 if case == "offset" else 0.0)
    kwargs = {"wss1": {"working_set": "wss1"}, "max_iter": {"max_iter": 10**7},
              "hard": {"C": None}, "rbf": {"kernel": "rbf"}, "single": {"precision": "single"},
              "no_finish": {"finish": False}}.get(case, {})
    if case == "hard":
        X, y = X[:200], np.where(X[:200, 0] > 0, 1.0, -1.0)
    sol = smo(X, y, **{"C": 1.0, **kwargs})
    assert sol.method.startswith("smo/")


def test_an_uncertified_dcd_run_goes_back_to_smo(monkeypatch) -> None:
    """``dcd_svc`` not certified within its passes: SMO solves the problem from the start, and
    no warning of the abandoned run reaches the caller."""
    monkeypatch.setattr(routing, "DCD_MAX_PASSES", 1)
    X, y = _data(routing.DCD_MIN_ROWS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sol = smo(X, y, 1.0)
    assert sol.method == "smo/wss2" and sol.status == "optimal"


def test_the_estimator_routes_each_pair_as_smo() -> None:
    """``MaxMarginClassifier(kernel="linear")``'s binary problems follow ``smo``'s rule: the
    large pair by ``dcd_svc``, the same answer as ``smo`` on it; the small pairs by SMO."""
    X, y = _data(routing.DCD_MIN_ROWS + 300, seed=3)
    labels = np.where(y > 0, 1, 0)
    labels[:300] = 2  # a third class: the pairs with it are small
    X[:300] += 3.0
    clf = MaxMarginClassifier(kernel="linear", C=0.5).fit(X, labels)
    methods = [s.method for s in clf.solutions_]
    assert methods.count("dcd_svc") == 1 and sum(m.startswith("smo/") for m in methods) == 2
    pair = labels < 2
    direct = smo(X[pair], np.where(labels[pair] == 0, 1.0, -1.0), 0.5)
    sol = clf.solutions_[methods.index("dcd_svc")]
    assert direct.method == "dcd_svc"
    np.testing.assert_allclose(np.sort(sol.alpha), np.sort(direct.alpha), atol=0, rtol=0)


def test_a_routed_answer_keeps_the_validated_copy_not_a_second_one() -> None:
    """The answer holds ``smo``'s validated copy of ``X`` (read-only), not the user's array
    and not a copy of its own: at most one copy of the data is made beyond its transients."""
    import tracemalloc

    X, y = _data(max(routing.DCD_MIN_ROWS * 2, 8192), d=100)  # transients small beside X
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    X[:, 0] += y  # a wide margin: few support vectors, so the answer's transients are small
    smo(X[: routing.DCD_MIN_ROWS], y[: routing.DCD_MIN_ROWS], kernel="linear")  # compiled
    before = X.copy()
    tracemalloc.start()
    try:
        sol = smo(X, y, kernel="linear")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sol.method == "dcd_svc" and sol.status == "optimal"
    assert not np.shares_memory(sol.X_train, X) and not sol.X_train.flags.writeable
    assert np.array_equal(X, before) and X.flags.writeable
    assert peak < 1.6 * X.nbytes, (peak, X.nbytes)  # two copies would be 2 X.nbytes
