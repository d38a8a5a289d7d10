"""ν-SVC and one-class SVM in ``maxmargin verify``: the catalogue's ν cases pass, every ν
theorem check fails on a corrupted answer, the campaign's ν draws are deterministic by seed."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from maxmargin.algorithms import nu_smo
from maxmargin.certificate_nu import w_floor
from maxmargin.formulations import nu_svm_dual, one_class_dual
from maxmargin.kernels import make_kernel
from maxmargin.verification.campaign import NU_SHARE, nu_case, random_case, random_cases, svc_case
from maxmargin.verification.case import Case, make_nu_case
from maxmargin.verification.cases import catalogue
from maxmargin.verification.nu_checks import (
    certify,
    compare_nu,
    hulls_meet_reported,
    nu_c_equivalence,
    nu_property,
    nu_refusal,
    one_class_centroid,
)
from maxmargin.verification.suite import METHODS, run_suite


def _case(name: str) -> Case:
    return next(c for c in catalogue("full") if c.name == name)


def _oracle(case: Case):
    kernel = case.make_kernel()
    if case.problem == "one_class":
        return one_class_dual(case.X, case.nu, kernel=kernel).solve(), kernel
    return nu_svm_dual(case.X, case.y, case.nu, kernel=kernel).solve(), kernel


# --- the catalogue ---------------------------------------------------------------------------
def test_the_quick_suites_nu_cases_pass_and_cover_what_they_promise():
    cases = [c for c in catalogue("quick") if c.problem != "c_svc"]
    assert {c.problem for c in cases} == {"nu_svc", "one_class"}
    assert {c.kernel for c in cases} >= {"linear", "rbf"}
    methods = {m for c in cases for m in c.methods}
    assert {"nu_property", "nu_c_equivalence", "nu_refuses", "nu_hulls_meet",
            "one_class_centroid", "nu_smo", "one_class_smo"} <= methods
    assert any(c.nu == 1.0 for c in cases if c.problem == "one_class")
    at_max = [c for c in cases if "nu_max" in c.tags]
    assert at_max and all(c.nu == 2 * min(np.sum(c.y > 0), np.sum(c.y < 0)) / c.y.size
                          for c in at_max)
    run = run_suite("quick", cases=cases, progress=None)
    failed = [(r.case, r.method, r.reasons) for r in run.rows if not r.passed]
    assert not failed
    for row in run.rows:
        if row.method in ("nu_smo", "one_class_smo", "nu_smo/tight", "one_class_smo/tight"):
            assert row.status == "optimal" and row.kkt_max < 1e-3, row


def test_every_nu_method_of_the_catalogue_exists():
    for case in catalogue("full"):
        assert set(case.methods) <= set(METHODS), case.name


def test_a_nu_case_validates_its_problem():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    y = np.array([1.0, -1.0, -1.0, -1.0])
    with pytest.raises(ValueError, match="nu_max"):
        Case("x", "nu", X, y, None, problem="nu_svc", nu=0.6)
    with pytest.raises(ValueError, match="all \\+1"):
        Case("x", "nu", X, y, None, problem="one_class", nu=0.5)
    with pytest.raises(ValueError, match="`nu` is for the ν problems"):
        Case("x", "nu", X, y, 1.0, nu=0.5)
    with pytest.raises(ValueError, match="takes `nu`"):
        Case("x", "nu", X, y, 1.0, problem="nu_svc", nu=0.5)
    with pytest.raises(ValueError, match="`problem` must be one of"):
        Case("x", "nu", X, y, None, problem="svr", nu=0.5)
    case = make_nu_case("x", X, None, 1.0, quick=True)
    assert case.problem == "one_class" and np.all(case.y == 1.0)
    assert "one_class_centroid" in case.methods and not case.is_2d


# --- each theorem check fails on a corrupted answer ----------------------------------------
def test_the_nu_property_holds_and_fails_on_corrupted_answers():
    for name in ("nu_clouds_linear", "one_class_blob_rbf"):
        case = _case(name)
        sol, _ = _oracle(case)
        assert all(b.holds for b in nu_property(sol, case.X, case.y, 1e-9, "oracle"))
        # a margin twice as wide: more margin errors than nu allows
        wide = dataclasses.replace(sol, rho=2.0 * sol.rho)
        errors, _ = nu_property(wide, case.X, case.y, 1e-9, "corrupt")
        assert not errors.holds, name
        # alpha emptied on half its support: fewer support vectors than nu l
        alpha = np.array(sol.alpha)
        alpha[np.flatnonzero(alpha > 0)[::2]] = 0.0
        _, support = nu_property(dataclasses.replace(sol, alpha=alpha), case.X, case.y, 1e-9,
                                 "corrupt")
        assert not support.holds, name


def test_the_nu_property_makes_no_error_claim_where_rho_is_unresolved():
    """Campaign case s23/i7535 (RBF, gamma 7.5e-9): ``rho`` 2.5e-10 is below the certificate's
    resolution ``w_floor R`` (4.6e-8), where its ``m - M`` is in units of ``w_floor R``: free
    support vectors within 2e-4 ``rho`` of the margin are not told apart, so the count of margin
    errors makes no claim there (it counted 37 > nu l = 35.1); the support count still does."""
    case = random_case(23, 7535)
    sol = nu_smo(case.X, case.y, case.nu, kernel=case.make_kernel(), tol=1e-6)
    assert sol.status == "optimal"
    assert 0.0 < sol.certificate.margin < w_floor(sol.alpha, 1.0, 0.5 * case.nu)
    errors, support = nu_property(sol, case.X, case.y, 1e-6, "nu_smo")
    assert errors.bound == math.inf and "resolution" in errors.note
    assert support.holds


def test_the_support_count_where_rho_is_unresolved_uses_the_certificates_resolution():
    """Campaign case s74/i328 (RBF, gamma 5e-10 on points up to 4e4 on a line): ``rho`` 4.1e-11
    is below the resolution; the answer's free support vectors sit within 4e-15 of ``rho``, the
    accuracy its certificate vouches for (``tol w_floor R``), not within ``tol rho`` (4e-17):
    counted against ``rho`` alone, one of them fell outside the margin (3 < nu l = 3.2)."""
    case = random_case(74, 328)
    sol = nu_smo(case.X, case.y, case.nu, kernel=case.make_kernel(), tol=1e-6)
    assert sol.status == "optimal"
    R = sol.certificate.radius
    assert 0.0 < sol.certificate.margin < w_floor(sol.alpha, R, 0.5 * case.nu) * R
    _, support = nu_property(sol, case.X, case.y, 1e-6, "nu_smo")
    assert support.holds and support.value >= case.nu
    # a support vector moved off the margin by 1e3 times that accuracy is still caught
    far = dataclasses.replace(sol, rho=sol.rho - 1e3 * 1e-6 * w_floor(sol.alpha, R,
                                                                        0.5 * case.nu) * R)
    _, moved = nu_property(far, case.X, case.y, 1e-6, "corrupt")
    assert not moved.holds


def test_the_nu_c_equivalence_allows_for_the_round_off_of_rho():
    """Campaign case s23/i9920 (nu = 2.6e-5, 11 points): ``rho`` 1.3e-16 is a difference of
    margins near 1e-5, resolved to about 1e-3 of itself in float64, and ``alpha / rho`` at
    ``C`` 7e14 carries that round-off: the C-SVC's KKT residuals missed the tight 1e-5 by 2e-5.
    The cross-check allows for it, and still fails a corrupted ``rho``."""
    case = random_case(23, 9920)
    sol, kernel = _oracle(case)
    check, cross = nu_c_equivalence(sol, case.X, case.y, kernel)
    assert 1e-5 < check.details["rho_roundoff"] < 1e-2
    # at C = 7e14 the C-SVC's m - M is below float64's resolution at 1e-6: without a certified
    # reference the scaled answer's own certificate decides
    assert check.holds and (cross is None or cross.passed), cross
    wrong = dataclasses.replace(sol, rho=1.5 * sol.rho)
    assert not nu_c_equivalence(wrong, case.X, case.y, kernel)[0].holds


def test_without_a_certified_c_svc_the_scaled_answers_own_certificate_decides():
    """Campaign case s71/i1473 (RBF, gamma 2.5e-10 on collinear points 6.7e4 wide, nu =
    0.107): ``rho`` 2e-12 puts the equivalent C at 1e10, where neither SMO at 1e-6 nor the
    C-SVC oracle is certified. ``alpha / rho`` is then judged by the C-SVC certificate at that C
    (its ``m - M`` against the cross-check's KKT tolerance), which a corrupted ``rho`` fails."""
    case = random_case(71, 1473)
    sol, kernel = _oracle(case)
    check, cross = nu_c_equivalence(sol, case.X, case.y, kernel)
    assert cross is None and "judged by the C-SVC certificate" in check.note
    assert check.holds and check.details["C"] > 1e9
    wrong = dataclasses.replace(sol, rho=1.5 * sol.rho)
    check, cross = nu_c_equivalence(wrong, case.X, case.y, kernel)
    assert cross is None and not check.holds


def test_the_nu_c_equivalence_holds_and_fails_on_a_corrupted_answer():
    case = _case("nu_clouds_rbf")
    sol, kernel = _oracle(case)
    check, cross = nu_c_equivalence(sol, case.X, case.y, kernel)
    assert check.holds and cross is not None and cross.passed
    for wrong in (dataclasses.replace(sol, rho=1.5 * sol.rho),
                  dataclasses.replace(sol, b=sol.b + 0.1 * sol.rho)):
        check, _ = nu_c_equivalence(wrong, case.X, case.y, kernel)
        assert not check.holds
    # rho = 0 must come without an equivalent C
    zero = dataclasses.replace(sol, rho=0.0)
    assert not nu_c_equivalence(zero, case.X, case.y, kernel)[0].holds
    assert nu_c_equivalence(dataclasses.replace(zero, C=math.nan), case.X, case.y,
                            kernel)[0].holds


@pytest.mark.parametrize("index", [1003, 1343])
def test_the_nu_c_equivalence_at_a_huge_equivalent_C(index: int):
    """Campaign cases (seed 1) with ``rho`` about 1e-10: the equivalent C is about 1e9, where
    float64 SMO does not certify the C-SVC at 1e-6; the C-SVC oracle at that C is the reference,
    and the theorem holds for the right answer and fails for a corrupted one."""
    case = random_case(1, index)
    sol, kernel = _oracle(case)
    assert sol.rho > 0.0 and sol.C > 1e8
    check, cross = nu_c_equivalence(sol, case.X, case.y, kernel)
    assert check.holds and cross is not None and cross.passed
    wrong = dataclasses.replace(sol, rho=1.5 * sol.rho)
    assert not nu_c_equivalence(wrong, case.X, case.y, kernel)[0].holds


def test_the_refusal_check_holds_and_fails_on_a_solver_that_does_not_refuse():
    case = _case("nu_at_nu_max")
    kernel = case.make_kernel()
    assert nu_refusal(case.X, case.y, kernel).holds
    assert nu_refusal(case.X, None, kernel).holds  # one-class: nu > 1

    def computes_first(X, y, nu, k):
        k.gram(X)
        return nu_smo(X, y, nu, kernel=k)

    def vague(X, y, nu, k):
        raise ValueError("bad value")

    def accepts(X, y, nu, k):
        return None

    for entry in (computes_first, vague, accepts):
        assert not nu_refusal(case.X, case.y, kernel, {"x": entry}).holds, entry.__name__


def test_the_hulls_meet_check_holds_and_fails_when_an_answer_hides_it():
    case = _case("nu_meet_centroids")
    sol, kernel = _oracle(case)
    assert sol.hulls_meet
    smo_sol = nu_smo(case.X, case.y, case.nu, tol=1e-6)
    assert hulls_meet_reported((sol, smo_sol), case.X, case.y, kernel).holds
    hidden = dataclasses.replace(smo_sol, hulls_meet=False)
    assert not hulls_meet_reported((sol, hidden), case.X, case.y, kernel).holds
    # a problem whose reduced hulls do not meet has no witness
    apart = _case("nu_clouds_linear")
    other, kernel = _oracle(apart)
    assert not other.hulls_meet
    assert not hulls_meet_reported((dataclasses.replace(other, hulls_meet=True),), apart.X,
                                   apart.y, kernel).holds


def test_the_centroid_check_holds_and_fails_on_a_corrupted_answer():
    case = _case("one_class_ring_centroid")
    sol, kernel = _oracle(case)
    assert one_class_centroid(sol, case.X, kernel).holds
    alpha = np.array(sol.alpha)
    alpha[0], alpha[1] = alpha[0] * 1.01, alpha[1] * 0.99
    assert not one_class_centroid(dataclasses.replace(sol, alpha=alpha), case.X, kernel).holds
    shifted = dataclasses.replace(sol, rho=sol.rho * 1.001, b=sol.b * 1.001)
    assert not one_class_centroid(shifted, case.X, kernel).holds


def test_the_solver_rows_judge_the_certificate_and_the_oracle():
    case = _case("nu_clouds_rbf")
    oracle, kernel = _oracle(case)
    good = nu_smo(case.X, case.y, case.nu, kernel=kernel, tol=1e-6)
    from maxmargin.tolerances import TIGHT

    assert not compare_nu(good, oracle, case.X, case.y, kernel, 1e-6, None, TIGHT).reasons
    alpha = np.array(good.alpha)
    support = np.flatnonzero((alpha > 0) & (alpha < 1 / alpha.size))
    alpha[support[0]] *= 0.5  # labelled optimal, no longer certified (y . alpha != 0)
    bad = dataclasses.replace(good, alpha=alpha)
    assert compare_nu(bad, oracle, case.X, case.y, kernel, 1e-6, None, TIGHT).reasons
    off = dataclasses.replace(good, b=good.b + 0.01 * good.rho)
    assert any("b" in r for r in compare_nu(off, oracle, case.X, case.y, kernel, 1e-6, None,
                                            TIGHT).reasons)


@pytest.mark.parametrize("index,tol", [(1558, 1e-3), (2098, 1e-6)])
def test_decisions_are_judged_within_what_the_certificates_allow(index: int, tol: float):
    """Campaign one-class cases (seed 1) whose certified answers differ from the oracle's by
    more than the preset's decision tolerance (7 % and 1.9e-4 of rho) but within the two
    certificates' bound (strong convexity in w): they pass; the same answer with its offset
    moved past that bound fails."""
    from maxmargin.algorithms import one_class_smo
    from maxmargin.tolerances import MEDIUM, TIGHT
    from maxmargin.verification.nu_checks import certified_decision_bound, certify

    case = random_case(1, index)
    oracle, kernel = _oracle(case)
    preset = MEDIUM if tol == 1e-3 else TIGHT
    sol = one_class_smo(case.X, case.nu, kernel=kernel, tol=tol)
    cmp = compare_nu(sol, oracle, case.X, case.y, kernel, tol, None, preset)
    assert cmp.decision_error > preset.decision and not cmp.reasons
    cert, co = certify(sol, case.X, case.y, kernel), certify(oracle, case.X, case.y, kernel)
    bound = certified_decision_bound(cert, co, 0.0) / oracle.rho
    assert cmp.decision_error <= bound
    moved = dataclasses.replace(sol, b=sol.b - 2.0 * bound * oracle.rho)
    reasons = compare_nu(moved, oracle, case.X, case.y, kernel, tol, None, preset).reasons
    assert any("decision values" in r for r in reasons)


def test_the_scaled_answers_c_gap_is_not_the_nu_answers():
    """Campaign case (seed 1, i2824): a ν answer with ``y . alpha`` off by 3e-12 of a weight
    (as the oracle's was before its face solves were normalised) over rho has a C-SVC relative
    gap of 1.2e-5, above TIGHT's 1e-5, while its decision values agree with the oracle's: the
    theorem check judges decisions, objective and m - M, not that gap."""
    from maxmargin.tolerances import TIGHT
    from maxmargin.verification.crosscheck import cross_check
    from maxmargin.verification.nu_checks import as_c_svc

    case = random_case(1, 2824)
    sol, kernel = _oracle(case)
    alpha = sol.alpha.copy()
    alpha[1] *= 1.0 + 3e-12  # the first negative weight (y = +1, -1, ...)
    sol = dataclasses.replace(sol, alpha=alpha,
                              w=(case.X - case.X.mean(axis=0)).T @ (alpha * case.y))
    check, cross = nu_c_equivalence(sol, case.X, case.y, kernel)
    assert check.holds and cross.passed
    scaled = as_c_svc(sol)
    strict = cross_check(scaled, _c_svc_reference(scaled, case, kernel), case.X, case.y,
                         tolerances=TIGHT)
    assert any(r.startswith("duality gap") for r in strict.reasons)


def _c_svc_reference(scaled, case: Case, kernel):
    from maxmargin.algorithms import smo

    return smo(case.X, case.y, C=scaled.C, kernel=kernel, tol=1e-6, precision="double")


# --- the campaign -------------------------------------------------------------------------------
def test_the_nu_draws_are_deterministic_by_seed_and_beside_the_c_svc_ones():
    a, b = random_cases(60, seed=5), random_cases(60, seed=5)
    for x, y in zip(a, b, strict=True):
        assert x.name == y.name and x.problem == y.problem and x.nu == y.nu
        np.testing.assert_array_equal(x.X, y.X)
        np.testing.assert_array_equal(x.y, y.y)
        assert dict(x.kernel_params) == dict(y.kernel_params) and x.methods == y.methods
    later = random_cases(10, seed=5, start=50)
    assert [c.name for c in later] == [c.name for c in a[50:]]
    assert [c.problem for c in later] == [c.problem for c in a[50:]]
    other = random_cases(60, seed=6)
    assert any(x.X.shape != y.X.shape or not np.array_equal(x.X, y.X)
               for x, y in zip(a, other, strict=True))
    for c in a:  # every other index keeps its C-SVC draw
        if c.problem == "c_svc":
            np.testing.assert_array_equal(c.X, svc_case(5, int(c.name.rsplit("_i", 1)[1])).X)


def test_the_nu_draws_cover_the_adversarial_regimes():
    cases = [c for c in random_cases(600, seed=11) if c.problem != "c_svc"]
    assert abs(len(cases) / 600 - NU_SHARE) < 0.06
    assert {c.problem for c in cases} == {"nu_svc", "one_class"}
    tags = {t for c in cases for t in c.tags}
    assert {"nu_small", "nu_near_max", "nu_max", "nu_mid", "duplicates", "collinear",
            "integer"} <= tags
    assert {c.kernel for c in cases} == {"linear", "rbf", "poly"}
    scales = [float(np.abs(c.X).max()) for c in cases]
    assert min(scales) < 1e-2 and max(scales) > 1e4
    nu_svc = [c for c in cases if c.problem == "nu_svc"]
    assert min(min(np.sum(c.y > 0), np.sum(c.y < 0)) / c.y.size for c in nu_svc) < 0.05
    assert min(c.nu for c in cases) < 1e-3
    for c in cases:
        assert c.area == "random" and c.name.startswith("random_s11_i")
        again = nu_case(11, int(c.name.rsplit("_i", 1)[1]), c.problem)
        np.testing.assert_array_equal(again.X, c.X)


def test_a_few_campaign_nu_cases_pass_guarded():
    cases = [c for c in random_cases(40, seed=20261206) if c.problem != "c_svc"][:6]
    assert cases
    run = run_suite("random", cases=cases, seed=20261206, timeout=120, progress=None)
    failed = [(r.case, r.method, r.reasons) for r in run.rows if not r.passed]
    assert not failed


def test_the_audit_skips_nu_cases():
    from maxmargin.verification.audit import PEERS

    case = random_case(11, next(i for i in range(100)
                                if random_case(11, i).problem == "nu_svc"))
    for peer in PEERS.values():
        assert "nu_svc" in peer.refusal(case)


def test_the_kernel_of_a_nu_case_is_its_own():
    case = _case("nu_clouds_scale_1e3_rbf")
    assert case.make_kernel().describe() == make_kernel("rbf", gamma=0.5e-6).describe()


def test_nu_c_equivalence_takes_b_from_the_kkt_interval_when_no_weight_is_free() -> None:
    """Campaign case seed 23, i6630 (linear, collinear points, ``nu = nu_max``, ``C`` 1e-8):
    every weight is at a bound, so every ``b`` of the reference's KKT interval is optimal;
    SMO's weight one ulp below ``C`` had pinned it to one end (b error 6e-3)."""
    from maxmargin.verification.nu_checks import as_c_svc, with_kkt_interval

    case = random_case(23, 6630)
    kernel = make_kernel(case.kernel, **case.kernel_params)
    oracle = nu_svm_dual(case.X, case.y, case.nu, kernel=kernel).solve()
    assert oracle.status == "optimal"
    bound, check = nu_c_equivalence(oracle, case.X, case.y, kernel)
    assert bound.holds and check is not None and check.passed, check
    lo, hi = check.b_interval
    assert lo < hi and lo - 1e-12 <= as_c_svc(oracle).b <= hi + 1e-12
    # a weight clearly free keeps b unique: the interval is a point
    from maxmargin.algorithms import smo

    rng = np.random.default_rng(0)
    y = np.where(np.arange(40) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(40, 2)) + y[:, None]
    sol = smo(X, y, C=1.0, tol=1e-9)
    assert np.any((sol.alpha > 1e-6) & (sol.alpha < 1.0 - 1e-6))
    lo, hi = with_kkt_interval(sol, X, y).b_interval
    assert lo == hi


def test_nu_smo_verdict_is_the_outside_judges() -> None:
    """Campaign case seed 23, i4953 (RBF, gamma 2.2e-11 at scale 4e3, ``rho`` 5.3e-15):
    ``nu_smo`` said "optimal" with its own gap -4.4e-11 where the recomputed certificate's was
    4.33e-6 (both round-off of the objectives); its certificate is now the judge's, and the
    C-SVC objective at ``C = 1 / (rho l)`` is compared within its float64 round-off."""
    case = random_case(23, 4953)
    kernel = make_kernel(case.kernel, **case.kernel_params)
    sol = nu_smo(case.X, case.y, case.nu, kernel=kernel, tol=1e-6)
    outside = certify(sol, case.X, case.y, kernel)
    assert sol.status == "optimal" and sol.certificate == outside
    oracle = nu_svm_dual(case.X, case.y, case.nu, kernel=kernel).solve()
    bound, check = nu_c_equivalence(oracle, case.X, case.y, kernel)
    # at C = 7e12 the C-SVC's m - M is below float64's resolution at 1e-6: without a certified
    # reference the scaled answer's own certificate decides
    assert bound.holds and (check is None or check.passed), check


def test_nu_c_equivalence_reads_the_point_the_nu_certificate_judges() -> None:
    """Campaign case seed 77, i1850 (poly kernel, integer points, ``nu = nu_max``): the oracle's
    weights were all at ``1 / l`` but one of 4e-16, which ``alpha / rho`` made a free weight
    at ``C`` 2.5e-4 and LIBSVM's ``m - M`` then read a KKT error of 0.037. The C-SVC answer
    is taken from the ν certificate's own point (round-off weights on their bounds); a weight
    clearly above round-off is kept, and fails."""
    from maxmargin.verification.nu_checks import as_c_svc

    case = random_case(77, 1850)
    kernel = make_kernel(case.kernel, **case.kernel_params)
    sol = nu_smo(case.X, case.y, nu=case.nu, kernel=kernel, tol=1e-9)
    zero = np.flatnonzero(sol.alpha == 0.0)
    assert sol.status == "optimal" and zero.size
    same = np.flatnonzero((case.y == case.y[zero[0]]) & (sol.alpha > 0.0))
    for tiny, holds in ((4e-16, True), (1e-4 / case.y.size, False)):
        alpha = sol.alpha.copy()  # a weight moved within a class: still feasible
        alpha[zero[0]] += tiny
        alpha[same[0]] -= tiny
        moved = dataclasses.replace(sol, alpha=alpha)
        bound, check = nu_c_equivalence(moved, case.X, case.y, kernel)
        assert (check is not None and check.passed) is holds, (tiny, check)
        assert bool(as_c_svc(moved).alpha[zero[0]] == 0.0) is holds
