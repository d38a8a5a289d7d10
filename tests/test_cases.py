"""The case catalogue: deterministic, truthful tags, worked answers = the independent fixtures."""

from __future__ import annotations

import numpy as np
import pytest
from fixtures import ALL_BOUND, LI_HANG, TWO_POINTS, XOR_POLY

from maxmargin.verification.bounds import separation_margin
from maxmargin.verification.cases import AREAS, Case, catalogue, select
from maxmargin.verification.suite import METHODS


@pytest.fixture(scope="module")
def full():
    return catalogue("full")


def test_catalogue_is_deterministic_and_named_uniquely(full):
    again = catalogue("full")
    assert [c.name for c in full] == [c.name for c in again]
    assert len({c.name for c in full}) == len(full)
    for a, b in zip(full, again, strict=True):
        np.testing.assert_array_equal(a.X, b.X)
        np.testing.assert_array_equal(a.y, b.y)


def test_quick_is_a_subset_and_every_area_is_covered(full):
    quick = catalogue()
    assert {c.name for c in quick} < {c.name for c in full}
    own = {"random", "data"}  # the campaign's and the user's data files' own areas
    assert {c.area for c in full} == set(AREAS) - own
    assert {c.area for c in quick} == set(AREAS) - own


def test_every_method_named_by_a_case_exists(full):
    for case in full:
        assert case.methods, case.name
        assert set(case.methods) <= set(METHODS), case.name
        assert ("hand" in case.methods) == (case.answer is not None), case.name


def test_separable_tags_are_true(full):
    """``separable`` must be what the separation-margin model says, in the kernel's space
    (a tag of the C-SVC cases; the ν cases are judged by their own checks)."""
    for case in (c for c in full if c.problem == "c_svc"):
        gamma, _ = separation_margin(case.X, case.y, kernel=case.make_kernel())
        assert (gamma > 0) == ("separable" in case.tags), case.name


def test_infeasible_cases_are_hard_margin_on_non_separable_data(full):
    infeasible = [c for c in full if c.expected_status == "infeasible"]
    assert {c.name for c in infeasible} >= {"xor_linear_hard", "overlap_hard"}
    for case in infeasible:
        assert case.C is None and "separable" not in case.tags
        needed = {"dual_hard", "smo/wss2", "gilbert", "mdm"}
        if case.kernel == "linear":
            needed.add("hard_primal")
        assert needed <= set(case.methods), case.name


def test_worked_answers_match_the_independent_fixtures(full):
    by_name = {c.name: c for c in full}
    for ex in (TWO_POINTS, LI_HANG, ALL_BOUND, XOR_POLY):
        case = by_name[ex.name]
        assert "hand" in case.methods  # the suite checks the oracle against the answer
        np.testing.assert_array_equal(case.X, ex.X)
        np.testing.assert_array_equal(case.y, ex.y)
        assert case.C == ex.C and case.kernel == ex.kernel
        np.testing.assert_allclose(case.answer.alpha, ex.alpha)
        assert case.answer.objective == ex.objective
        if ex.w is not None:
            np.testing.assert_allclose(case.answer.w, ex.w)
        assert case.answer.b == ex.b
        assert case.answer.b_interval == ex.b_interval


def test_degenerate_cases_are_degenerate(full):
    by_name = {c.name: c for c in full}
    dup = by_name["duplicates"]
    assert len(np.unique(dup.X, axis=0)) == len(dup.X) // 2
    col = by_name["collinear"]
    assert np.sum(np.abs(col.X[:, 0]) == 1.0) >= 6  # on the lines x1 = +-1
    sc = by_name["scale_1e3"].X
    assert np.max(np.abs(sc)) > 100 and np.max(np.abs(by_name["scale_1e-3"].X)) < 0.1


def test_cases_are_read_only(full):
    with pytest.raises(ValueError):
        full[0].X[0, 0] = 1.0


def test_select():
    quick = catalogue()
    assert [c.name for c in select(quick, "li_hang*")] == ["li_hang_7_1"]
    assert {c.name for c in select(quick, "circle")} == {"circle_poly2", "circle_rbf",
                                                         "circle_rbf_precomputed"}
    assert select(quick, None) == quick
    assert select(quick, "no-such-case") == ()


def test_validation_messages():
    with pytest.raises(ValueError, match="`suite` must be one of"):
        catalogue("medium")
    with pytest.raises(ValueError, match="`case` must be a non-empty name pattern"):
        select(catalogue(), "")
    with pytest.raises(ValueError, match="`area` must be one of"):
        Case(name="x", area="nowhere", X=[[0.0], [1.0]], y=[1, -1], C=None)
