"""The runner: schema of the rows, per-row exception capture, a wrong candidate fails."""

from __future__ import annotations

import dataclasses
import io
import json
import math

import numpy as np
import pytest

from maxmargin.results import SVMSolution
from maxmargin.verification.checks import compare
from maxmargin.verification.suite import (
    COLUMNS,
    SECTIONS,
    Method,
    Outcome,
    Row,
    extra_methods,
    run_suite,
)
from maxmargin.verification.tolerances import TIGHT


def perturbed_oracle(ctx) -> Outcome:
    """A deliberately wrong candidate: the oracle with w scaled by 1.01."""
    o = ctx.oracle
    wrong = dataclasses.replace(o, w=1.01 * o.w, method="perturbed")
    return compare(ctx, wrong, TIGHT)


def exploding(ctx) -> Outcome:
    raise FloatingPointError("boom\nlast line of the message")


@pytest.fixture(scope="module")
def li_hang_run():
    return run_suite("quick", "li_hang_7_1", progress=None)


def test_rows_follow_the_schema(li_hang_run):
    names = [name for name, _ in COLUMNS]
    assert [f.name for f in dataclasses.fields(Row)] == names
    for row in li_hang_run.rows:
        d = row.to_dict()
        assert list(d) == names
        json.dumps(d)  # JSON-ready (NaN -> None)
        assert row.section in SECTIONS and row.verdict in ("pass", "fail")


def test_li_hang_passes_every_check(li_hang_run):
    rows = li_hang_run.rows
    assert li_hang_run.passed, [(r.method, r.reasons) for r in rows if not r.passed]
    methods = {r.method for r in rows}
    assert {"consensus", "hand", "primal", "smo/wss2", "smo/wss1", "smo/platt", "gilbert", "mdm",
            "hulls/gilbert", "hulls/mdm", "perceptron"} <= methods
    perceptron = next(r for r in rows if r.method == "perceptron")
    assert perceptron.iterations == 7  # Li Hang's seven mistakes (tests/fixtures.py)
    assert perceptron.bounds[0].bound == pytest.approx(117.0, rel=1e-6)
    smo = next(r for r in rows if r.method == "smo/wss2")
    assert smo.w_error < TIGHT.w and smo.alpha_unique is True
    assert ("li_hang_7_1", "smo/wss2") in li_hang_run.artifacts.histories
    assert "li_hang_7_1" in li_hang_run.artifacts.pictures


def test_a_wrong_candidate_fails_with_its_reason():
    wrong = Method("perturbed", "smo", perturbed_oracle, applies=lambda c: c.kernel == "linear")
    with extra_methods(wrong):
        run = run_suite("quick", "two_points", progress=None)
    row = next(r for r in run.rows if r.method == "perturbed")
    assert row.verdict == "fail" and "w error" in row.reasons
    assert not run.passed
    assert all(r.passed for r in run.rows if r.method != "perturbed")
    # the hook is gone after the block
    assert "perturbed" not in {r.method for r in run_suite("quick", "two_points",
                                                           progress=None).rows}


def test_an_exception_fails_its_row_only():
    with extra_methods(Method("exploding", "smo", exploding)):
        stream = io.StringIO()
        run = run_suite("quick", "li_hang_7_1", progress=stream)
    row = next(r for r in run.rows if r.method == "exploding")
    assert row.verdict == "fail" and row.status == "error"
    assert row.exception.startswith("FloatingPointError: boom")
    assert "raised FloatingPointError" in row.reasons
    assert sum(not r.passed for r in run.rows) == 1
    assert "FAIL li_hang_7_1" in stream.getvalue() and "exploding" in stream.getvalue()


def test_infeasible_case_every_method_says_infeasible():
    run = run_suite("quick", "xor_linear_hard", progress=None)
    assert {r.method for r in run.rows} == {"hard_primal", "dual_hard", "smo/wss2", "gilbert",
                                            "mdm", "wolfe"}
    for row in run.rows:
        assert row.status == "infeasible" and row.passed, (row.method, row.reasons)
        assert row.section == "infeasibility"


def test_a_wrong_status_fails():
    def claims_optimal(ctx):
        return Outcome(status="optimal", oracle="none")

    with extra_methods(Method("liar", "infeasibility", claims_optimal)):
        run = run_suite("quick", "xor_linear_hard", progress=None)
    row = next(r for r in run.rows if r.method == "liar")
    assert not row.passed and "status 'optimal' != expected 'infeasible'" in row.reasons


def test_row_to_dict_encodes_nan_and_bounds(li_hang_run):
    row = next(r for r in li_hang_run.rows if r.method == "perceptron")
    d = row.to_dict()
    assert d["objective_error"] is None and math.isnan(row.objective_error)
    assert d["bounds"][0]["name"] == "mistake_bound" and d["bounds"][0]["holds"] is True


def test_validation_messages():
    with pytest.raises(ValueError, match="`case` pattern 'zzz' matches no case"):
        run_suite("quick", "zzz", progress=None)
    with pytest.raises(ValueError, match="`methods` must be Method instances"):
        with extra_methods("smo"):
            pass
    with pytest.raises(ValueError, match="`suite` must be one of"):
        run_suite("huge", progress=None)


def test_svm_solution_replace_keeps_arrays_frozen():
    # the hook above relies on dataclasses.replace re-running the freezing __post_init__
    sol = SVMSolution(alpha=[1.0], b=0.0, w=[1.0], dual_objective=0.0, primal_objective=0.0,
                      status="optimal", iterations=0, method="x")
    new = dataclasses.replace(sol, w=np.array([2.0]))
    assert not new.w.flags.writeable


def test_the_quick_suite_passes():
    """The default suite of ``maxmargin verify``, once: every row must pass."""
    run = run_suite("quick", progress=None)
    failed = [(r.case, r.method, r.reasons) for r in run.rows if not r.passed]
    assert not failed
    assert len({r.case for r in run.rows}) == 33 and {r.section for r in run.rows} == set(SECTIONS)


@pytest.mark.parametrize("cold", [False, True])
def test_workers_inherit_the_warm_up_or_compile_first_on_a_cold_cache(monkeypatch, cold):
    """Guarded runs warm a case's compiled code up in this process before forking its worker.
    On an empty Numba cache the first case's worker compiles it itself (its rows come while
    the rest compiles) and this process warms up (loads it from the cache) after the case."""
    from maxmargin.verification import warmup

    calls = []
    monkeypatch.setattr(warmup, "numba_cache_is_cold", lambda: cold)
    monkeypatch.setattr(warmup, "_WARMED", set())
    monkeypatch.setitem(warmup.WARM_UPS, "probe", lambda: calls.append("probe"))

    def reports(ctx):
        raise RuntimeError(f"warmed={'probe' in warmup._WARMED}")

    with extra_methods(Method("reports", "smo", reports, warm=("probe",))):
        run = run_suite("quick", ["two_points", "li_hang_7_1"], progress=None, timeout=120.0)
    seen = [r.exception for r in run.rows if r.method == "reports"]
    assert seen == [f"RuntimeError: warmed={not cold}", "RuntimeError: warmed=True"]
    assert calls == ["probe"]  # once, in this process


_RUN_ORDER = iter(range(10**6))


@pytest.mark.parametrize("cold", [False, True])
def test_a_cold_cache_runs_the_uncompiled_methods_first(monkeypatch, cold):
    """On an empty Numba cache a case's worker runs the methods that need no compiled code
    (no warm-up pieces) before the ones that compile, so rows come within seconds; the rows
    keep the plan's order either way."""
    from maxmargin.verification import warmup

    monkeypatch.setattr(warmup, "numba_cache_is_cold", lambda: cold)
    monkeypatch.setattr(warmup, "_WARMED", set())
    monkeypatch.setitem(warmup.WARM_UPS, "probe", lambda: None)

    def turn(ctx):  # the worker's own count: its position in the worker's run
        raise RuntimeError(str(next(_RUN_ORDER)))

    with extra_methods(Method("compiles", "smo", turn, warm=("probe",)),
                       Method("plain", "smo", turn)):
        run = run_suite("quick", ["two_points"], progress=None, timeout=120.0)
    names = [r.method for r in run.rows]
    assert names[-2:] == ["compiles", "plain"]  # plan order
    at = {r.method: int(r.exception.split(": ")[1]) for r in run.rows[-2:]}
    assert (at["plain"] < at["compiles"]) == cold
