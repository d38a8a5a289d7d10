"""One shape of "infeasible", from every entry point that solves a hard margin.

XOR (linear kernel) and a point repeated with the opposite label (any kernel) have no
separating hyperplane: every solver must answer ``status="infeasible"`` with NaN ``alpha`` and
``b``, both objectives ``+inf``, a certificate whose evidence (``hull_distance``, recomputed
here from the data) shows the hulls within the solver's resolution, and a ``predict`` that
refuses.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from maxmargin import MaxMarginClassifier
from maxmargin.algorithms import gilbert_svm, smo
from maxmargin.formulations import hard_margin_primal, svm_dual
from maxmargin.kernels import make_kernel
from maxmargin.methods import METHODS, method_names

XOR_X = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
XOR_Y = np.array([1.0, 1.0, -1.0, -1.0])
rng = np.random.default_rng(7)
DUP_X = np.vstack([rng.normal(size=(20, 3)), np.zeros((1, 3))])
DUP_X[0] = 0.0  # the last point repeats the first, with the other label
DUP_Y = np.concatenate([np.where(np.arange(20) % 2 == 0, 1.0, -1.0), [-1.0]])

def _gilbert(method):
    return lambda X, y, k: gilbert_svm(X, y, method=method, kernel=k)


def _registered(name):
    return lambda X, y, k: METHODS[name](X, y, C=None, kernel=k)


ENTRY_POINTS = {
    "smo": lambda X, y, k: smo(X, y, C=None, kernel=k),
    "smo/double": lambda X, y, k: smo(X, y, C=None, kernel=k, precision="double"),
    "smo/platt": lambda X, y, k: smo(X, y, C=None, kernel=k, working_set="platt"),
    "svm_dual": lambda X, y, k: svm_dual(X, y, None, kernel=k).solve(),
    "svm_dual/osqp": lambda X, y, k: svm_dual(X, y, None, kernel=k).solve("OSQP"),
    **{f"gilbert_svm/{m}": _gilbert(m) for m in ("wolfe", "gilbert", "mdm")},
    **{f"registry/{n}": _registered(n) for n in method_names(hard_margin=True, family="maxmargin")},
}


@pytest.mark.parametrize("data", ["xor_linear", "duplicate_rbf"])
@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_every_entry_point_says_infeasible_in_one_shape(entry, data):
    X, y, kernel = (XOR_X, XOR_Y, "linear") if data == "xor_linear" else (DUP_X, DUP_Y, "rbf")
    kern = make_kernel(kernel, X=X)
    sol = ENTRY_POINTS[entry](X, y, kern)
    assert sol.status == "infeasible", sol.message
    assert np.all(np.isnan(sol.alpha)) and math.isnan(sol.b)
    assert sol.primal_objective == sol.dual_objective == math.inf
    cert = sol.certificate
    assert cert is not None and cert.infeasible
    # R = max ||phi(x_i)||, from the data's mean for the linear kernel (translation-free)
    R = math.sqrt(float(np.max(kern.diag(X - X.mean(axis=0) if kernel == "linear" else X))))
    assert cert.radius == pytest.approx(R)
    assert cert.hull_distance <= 1e-3 * R  # the coarsest resolution any method claims
    assert "not separable at this resolution" in sol.message or "opposite labels" in sol.message
    assert "intersect" not in sol.message or "x_" in sol.message  # only shown when shown
    with pytest.raises(ValueError, match="infeasible"):
        sol.predict(X)
    with pytest.raises(ValueError, match="infeasible"):
        sol.decision_function(X)


def test_hard_margin_primal_says_infeasible_too():
    sol = hard_margin_primal(XOR_X, XOR_Y).solve()
    assert sol.status == "infeasible" and sol.certificate.infeasible
    assert np.all(np.isnan(sol.w))


@pytest.mark.parametrize("C", [None, np.inf])
def test_the_estimator_refuses_a_hard_margin_with_no_solution(C):
    with pytest.raises(ValueError, match="hard margin"):
        MaxMarginClassifier(C=C, kernel="linear").fit(XOR_X, XOR_Y)


def _mixed_scales(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """150 points in 5 dimensions cut by a slab of half-width 0.3, each feature then scaled by
    ``10^U(-3, 5)``: separable, the hulls within ``1e-4 R`` or about it."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(150) < 0.5, -1.0, 1.0)
    u = rng.normal(size=5)
    u /= np.linalg.norm(u)
    X = rng.normal(size=(150, 5))
    s = X @ u
    X += np.outer(y * 0.3 - s, u) * (np.abs(s) < 0.3)[:, None]
    s = X @ u
    X += np.outer(np.where(y * s < 0, -2.0 * s, 0.0), u)
    return X * 10.0 ** rng.uniform(-3, 5, size=5), y


@pytest.mark.parametrize(("seed", "methods"), [(13, ("mdm", "wolfe", "gilbert")),
                                               (10, ("mdm", "wolfe", "gilbert"))])
def test_a_margin_below_the_resolution_is_infeasible_whatever_the_method_or_order(
        seed: int, methods: tuple[str, ...]) -> None:
    """Hulls within ``SVM_HULL_EPS R`` (1e-4 R): a method that certifies the tiny margin and one
    that stops once it has shown the hulls that close have solved the same problem, and both
    answer "infeasible" with the evidence, in every permuted, translated or relabelled copy.
    (Before, the answer depended on the path: on seed 13 MDM, Gilbert and SMO certified a
    margin where Wolfe stopped at the resolution, and on a permuted copy SMO did not; on seed
    10 MDM reached max_iter on three of the four copies: Wolfe's method now finishes it.)"""
    X, y = _mixed_scales(seed)
    perm = np.random.default_rng(1).permutation(y.size)
    copies = [(X, y), (X[perm], y[perm]), (X + 1e3 * X.std(axis=0), y), (X, -y)]
    for Xc, yc in copies:
        answers = [gilbert_svm(Xc, yc, method=m) for m in methods]
        answers.append(smo(Xc, yc, C=None))
        for sol in answers:
            assert sol.status == "infeasible", (sol.method, sol.message)
            cert = sol.certificate
            assert cert.hull_distance <= 1e-4 * cert.radius
