"""cross_check: agreeing and disagreeing solutions, b intervals, alpha uniqueness, statuses."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fixtures import ALL_BOUND, LI_HANG, XOR_POLY, SVMExample
from sklearn.datasets import load_breast_cancer, load_iris, make_blobs

from maxmargin.algorithms import smo
from maxmargin.formulations import svm_dual
from maxmargin.kernels import make_kernel
from maxmargin.results import SVMSolution
from maxmargin.verification.crosscheck import alpha_uniqueness, cross_check, dual_objective
from maxmargin.verification.tolerances import LOOSE, PRESETS, TIGHT, get_tolerances


def hand_solution(ex: SVMExample, **changes) -> SVMSolution:
    """An SVMSolution holding a fixture's hand-derived optimum (optionally altered)."""
    kernel = make_kernel(ex.kernel, X=ex.X, **ex.kernel_params)
    lo, hi = ex.b_interval if ex.b_interval is not None else (ex.b, ex.b)
    fields = dict(
        alpha=ex.alpha, b=0.5 * (lo + hi), w=ex.w, dual_objective=ex.objective,
        primal_objective=ex.objective, status="optimal", iterations=0, method="hand",
        X_train=ex.X, y_train=ex.y, kernel=kernel, C=ex.C, b_interval=(lo, hi),
    )
    fields.update(changes)
    return SVMSolution(**fields)


def test_identical_solutions_agree_exactly():
    sol = hand_solution(LI_HANG)
    chk = cross_check(sol, sol)
    assert chk.passed, chk.reasons
    assert chk.objective_error == 0.0 and chk.w_error == 0.0 and chk.b_error == 0.0
    assert chk.alpha_unique and chk.alpha_error == 0.0
    assert chk.kkt_max < 1e-12


def test_the_oracle_agrees_with_the_hand_answer():
    from maxmargin.formulations import svm_dual

    for ex in (LI_HANG, ALL_BOUND, XOR_POLY):
        oracle = svm_dual(ex.X, ex.y, ex.C, kernel=ex.kernel, **ex.kernel_params).solve()
        chk = cross_check(oracle, hand_solution(ex), tolerances="oracle")
        assert chk.passed, (ex.name, chk.reasons)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"w": np.array([0.5, 0.51])}, "w error"),
        ({"b": -2.1}, "b error"),
        ({"alpha": np.array([0.3, 0.0, 0.3])}, "objective error"),
        ({"dual_objective": 0.3}, "reported dual objective"),
        ({"status": "max_iter"}, "candidate status"),
    ],
)
def test_a_perturbed_candidate_fails_and_says_why(change, reason):
    oracle = hand_solution(LI_HANG)
    chk = cross_check(hand_solution(LI_HANG, **change), oracle, tolerances=TIGHT)
    assert not chk.passed
    assert any(reason in r for r in chk.reasons), chk.reasons


def test_alpha_is_compared_where_unique():
    # alpha = (0.26, 0, 0.26) keeps w's direction but is not the optimum: alpha and w disagree
    wrong = hand_solution(LI_HANG, alpha=np.array([0.26, 0.0, 0.26]))
    chk = cross_check(wrong, hand_solution(LI_HANG), tolerances=TIGHT)
    assert chk.alpha_unique
    assert chk.alpha_error == pytest.approx(0.01 / 0.25)
    assert any("alpha error" in r for r in chk.reasons)


def test_b_interval_when_no_free_support_vector():
    # ALL_BOUND: every b in [-0.8, 0.8] is optimal (derivation in tests/fixtures.py)
    oracle = hand_solution(ALL_BOUND)
    inside = cross_check(hand_solution(ALL_BOUND, b=0.7, b_interval=(0.7, 0.7)), oracle)
    assert inside.passed, inside.reasons
    assert not inside.b_unique and inside.b_error == 0.0
    assert inside.b_interval == (-0.8, 0.8)
    outside = cross_check(hand_solution(ALL_BOUND, b=1.0, b_interval=(1.0, 1.0)), oracle)
    assert outside.b_error == pytest.approx(0.2 / 1.0)
    assert any("b error" in r for r in outside.reasons)


def test_alpha_uniqueness_detects_duplicated_support_vectors():
    # LI_HANG with x1 = (3, 3) twice: the weight 1/4 of x1 may be split in any way
    X = np.vstack([LI_HANG.X[:1], LI_HANG.X])
    y = np.concatenate([[1.0], LI_HANG.y])
    split = SVMExample(name="dup", X=X, y=y, C=None, kernel="linear",
                       alpha=np.array([0.125, 0.125, 0.0, 0.25]), w=LI_HANG.w, b=-2.0,
                       objective=0.25)
    oracle = hand_solution(split)
    unique, note = alpha_uniqueness(oracle, X, y)
    assert not unique and "not unique" in note
    # another optimal alpha (all the weight on the first copy) is accepted, alpha not compared
    other = hand_solution(split, alpha=np.array([0.25, 0.0, 0.0, 0.25]))
    chk = cross_check(other, oracle)
    assert chk.passed, chk.reasons
    assert not chk.alpha_unique and math.isnan(chk.alpha_error)


def test_alpha_uniqueness_more_margin_points_than_d_plus_1():
    # the square (+-1, +-1) labelled by x1: four margin points in 2-D, w = (1, 0), b = 0,
    # alpha = 1/4 each is one of infinitely many optimal alphas
    X = np.array([[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0]])
    ex = SVMExample(name="square", X=X, y=np.array([1.0, 1.0, -1.0, -1.0]), C=None,
                    kernel="linear", alpha=np.full(4, 0.25), w=np.array([1.0, 0.0]), b=0.0,
                    objective=0.5)
    unique, note = alpha_uniqueness(hand_solution(ex), ex.X, ex.y)
    assert not unique and "rank" in note


def test_alpha_uniqueness_strict_complementarity_and_unique_cases():
    unique, note = alpha_uniqueness(hand_solution(LI_HANG), LI_HANG.X, LI_HANG.y)
    assert unique and "strict complementarity holds" in note
    # ALL_BOUND at its midpoint b: no point on the margin, alpha = C is forced
    unique, note = alpha_uniqueness(hand_solution(ALL_BOUND), ALL_BOUND.X, ALL_BOUND.y)
    assert unique and "no point on the margin" in note
    # XOR with (1 + x.z)^2: four margin points, independent in feature space
    unique, _ = alpha_uniqueness(hand_solution(XOR_POLY), XOR_POLY.X, XOR_POLY.y)
    assert unique


def test_infeasible_oracle_needs_an_infeasible_candidate():
    nan4 = np.full(4, np.nan)
    infeasible = SVMSolution(alpha=nan4, b=np.nan, w=None, dual_objective=np.inf,
                             primal_objective=np.inf, status="infeasible", iterations=3,
                             method="x", X_train=XOR_POLY.X, y_train=XOR_POLY.y)
    assert cross_check(infeasible, infeasible).passed
    optimal = hand_solution(XOR_POLY)
    chk = cross_check(optimal, infeasible)
    assert not chk.passed and "candidate status 'optimal'" in chk.reasons[0]
    chk = cross_check(infeasible, optimal)
    assert not chk.passed


def test_loose_preset_does_not_judge_the_index_set_violation():
    # alpha_2 = 1e-12 on x2 (y f = 1.5): LIBSVM's violation counts x2 as a support vector
    sol = hand_solution(LI_HANG, alpha=np.array([0.25, 1e-12, 0.25 + 1e-12]))
    tight = cross_check(sol, hand_solution(LI_HANG), tolerances=TIGHT)
    loose = cross_check(sol, hand_solution(LI_HANG), tolerances=LOOSE)
    assert tight.kkt_max > 0.1 and not tight.passed
    assert loose.kkt_max < 1e-9 and loose.passed, loose.reasons


def test_dual_objective_formula():
    K = LI_HANG.X @ LI_HANG.X.T
    assert dual_objective(LI_HANG.alpha, LI_HANG.y, K) == pytest.approx(LI_HANG.objective)


def test_presets():
    assert set(PRESETS) == {"tight", "medium", "loose", "oracle"}
    assert get_tolerances("loose") is LOOSE and get_tolerances(TIGHT) is TIGHT
    for t in PRESETS.values():
        assert t.w >= t.objective > 0 and t.kkt > 0


def test_validation_messages():
    sol = hand_solution(LI_HANG)
    with pytest.raises(ValueError, match="`candidate` must be an SVMSolution"):
        cross_check("x", sol)
    with pytest.raises(ValueError, match="`oracle` must be an SVMSolution"):
        cross_check(sol, None)
    with pytest.raises(ValueError, match="`tolerances` must be one of"):
        cross_check(sol, sol, tolerances="strict")
    with pytest.raises(ValueError, match="must have one alpha per row of `X`"):
        cross_check(sol, sol, XOR_POLY.X, XOR_POLY.y)
    with pytest.raises(ValueError, match="`y` must contain only the labels"):
        cross_check(sol, sol, LI_HANG.X, np.array([1.0, 2.0, -1.0]))


def test_alpha_limit_grows_with_the_conditioning_of_the_margin_set():
    from maxmargin.verification.crosscheck import alpha_limit

    # Li Hang: M = {x1, x3}, K_MM + 11^T = [[19, 7], [7, 3]]: trace 22, determinant 8, so
    # lambda_min = (22 - sqrt(452)) / 2; max alpha = 1/4.
    lam = (22.0 - math.sqrt(452.0)) / 2.0
    expected = TIGHT.alpha + math.sqrt(2.0) * TIGHT.kkt / (lam * 0.25)
    oracle = hand_solution(LI_HANG)
    assert alpha_limit(oracle, LI_HANG.X, LI_HANG.y, TIGHT) == pytest.approx(expected)
    # no margin point (ALL_BOUND at its midpoint b): just the preset's limit
    assert alpha_limit(hand_solution(ALL_BOUND), ALL_BOUND.X, ALL_BOUND.y, TIGHT) == TIGHT.alpha


def test_duality_gap_is_judged_against_its_own_limit():
    # alpha = (0.26, 0, 0.26): w = 0.26 (2, 2), b = 1 - 3.12 = -2.12 keeps every y f >= 1;
    # P = 1/2 ||w||^2 = 0.2704, D = 0.52 - 0.2704 = 0.2496, so the gap is 0.0208 / P = 1/13.
    w = np.array([0.52, 0.52])
    sol = hand_solution(LI_HANG, alpha=np.array([0.26, 0.0, 0.26]), w=w, b=-2.12,
                        b_interval=(-2.12, -2.12), dual_objective=0.2496)
    chk = cross_check(sol, hand_solution(LI_HANG), tolerances=TIGHT)
    assert chk.duality_gap == pytest.approx(0.0208 / 0.2704, rel=1e-9)
    assert any(r.startswith("duality gap error 0.0769 >") for r in chk.reasons), chk.reasons
    assert get_tolerances("medium").gap > get_tolerances("medium").kkt


@pytest.mark.parametrize("data", ["blobs", "iris", "breast_cancer_scaled"])
def test_smo_and_the_oracle_agree_with_every_default(data):
    """The house issue's symptom: ``cross_check(smo(X, y), svm_dual(X, y).solve(), X, y)`` with
    every default passes; SMO's own tol picks the preset it is judged by."""
    if data == "blobs":
        X, y = make_blobs(n_samples=80, centers=2, cluster_std=2.5, random_state=3)
    elif data == "iris":
        X, y = load_iris(return_X_y=True)
        X, y = X[y > 0], y[y > 0]  # versicolor against virginica: overlapping classes
    else:
        X, y = load_breast_cancer(return_X_y=True)
        X = (X - X.mean(axis=0)) / X.std(axis=0)
    y = np.where(y == y.max(), 1.0, -1.0)
    chk = cross_check(smo(X, y), svm_dual(X, y).solve(), X, y)
    assert chk.passed, chk
