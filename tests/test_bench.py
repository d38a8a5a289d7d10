"""Tests of the benchmark harness (``python -m benchmarks``): the smoke suite end to end, and
each measuring helper.

No test asserts a wall-clock time; the timings are only checked to exist and be positive.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fixtures import HULL_PAIR, SVM_EXAMPLES
from hypothesis import given, settings
from hypothesis import strategies as st

import benchmarks.__main__ as cli
from benchmarks import data, harness, report, smo, startup, suites, verify
from maxmargin.kernels import make_kernel
from maxmargin.tolerances import HULL_CERT_FACTOR

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path, dict]:
    """Run the whole smoke suite once into a temporary folder."""
    out = tmp_path_factory.mktemp("bench")
    code = cli.main(["--suite", "smoke", "--out", str(out)])
    return code, out, json.loads((out / "benchmarks.json").read_text())


def _rows(results: dict, **match: object) -> list[dict]:
    return [r for r in results["rows"] if all(r.get(k) == v for k, v in match.items())]


# --- the smoke suite end to end ----------------------------------------------------------------


def test_smoke_suite_runs_clean(smoke: tuple[int, Path, dict]) -> None:
    code, _, results = smoke
    problems = [r for r in results["rows"] if r["status"] in ("error", "timeout", "crashed")]
    assert problems == []
    assert code == 0


def test_smoke_json_schema(smoke: tuple[int, Path, dict]) -> None:
    _, _, results = smoke
    for key in ("schema", "suite", "date", "versions", "machine", "rows", "targets", "repeats"):
        assert key in results
    assert results["schema"] == harness.SCHEMA
    assert results["suite"] == "smoke"
    for dist in ("numpy", "scikit-learn", "numba", "cvxpy", "clarabel"):
        assert results["versions"][dist]
    assert results["machine"]["cpu_count"] >= 1
    assert {r["benchmark"] for r in results["rows"]} == {
        "smo_svc",
        "smo_hard",
        "smo_cvxpy",
        "hulls",
        "linear",
        "linear_cs",
        "linear_svc",
        "nu_svc",
        "one_class",
        "reduced_hulls",
        "perceptron",
        "estimator",
        "grid_search",
        "predict",
    }
    for row in results["rows"]:
        assert tuple(row) == harness.ROW_KEYS
        assert row["role"] in ("maxmargin", "peer", "oracle")
        assert row["time_s"] > 0 and row["time_s"] == min(row["times_s"])
        assert row["warmup_s"] is not None
        assert row["peak_rss_mb"] >= row["rss_base_mb"] - 1.0 > 0
        assert isinstance(row["params"], dict) and isinstance(row["extra"], dict)
    assert len(results["targets"]) == 5
    assert all(t["met"] in (True, False, None) for t in results["targets"])


def test_smoke_markdown_and_figures(smoke: tuple[int, Path, dict]) -> None:
    _, out, results = smoke
    md = (out / "benchmarks.md").read_text()
    assert md.startswith("# maxmargin benchmarks")
    for heading in (
        "## Headline ratios",
        "## Targets",
        "### SMO vs scikit-learn SVC (LIBSVM)",
        "### SMO vs the CVXPY dual oracle (Clarabel, OSQP)",
        "### Nearest points of two hulls: Gilbert, MDM, Wolfe, Clarabel, PIQP",
        "### nu-SVC: nu_smo vs scikit-learn NuSVC (LIBSVM), one thread",
        "### nu-SVC by the nearest points of reduced hulls (MDM, Wolfe) vs nu_smo",
        "### One-class SVM: one_class_smo vs scikit-learn OneClassSVM (LIBSVM), one thread",
        "### One-class SVM by the nearest point of a reduced hull (MDM, Wolfe) vs one_class_smo",
        "### Nearest points of two reduced hulls: Gilbert, MDM, Wolfe vs Clarabel, PIQP",
        "### Perceptron vs scikit-learn Perceptron",
        "### MaxMarginClassifier().fit vs SVC().fit",
        "### GridSearchCV over C and gamma: MaxMarginClassifier vs SVC",
        "### Prediction: decision_function of MaxMarginClassifier vs SVC",
    ):
        assert heading in md
    assert results["versions"]["numpy"] in md
    assert md.count("NOT MEASURED") + md.count("NOT MET") + md.count("**MET**") >= 5
    for name in ("bench_time_vs_n.png", "bench_hulls.png"):
        assert (out / "figures" / name).read_bytes()[:8] == PNG_MAGIC
        assert f"figures/{name}" in md
    assert not list(out.glob(".*"))  # no temp files left behind by the atomic writes
    assert (out / "benchmarks.md").stat().st_mode & 0o644 == 0o644  # readable by all


def test_smoke_smo_agrees_with_svc(smoke: tuple[int, Path, dict]) -> None:
    _, _, results = smoke
    pairs = _rows(results, benchmark="smo_svc", method="maxmargin.smo")
    assert {r["params"]["kernel"] for r in pairs} == {"rbf", "linear"}
    for r in pairs:
        assert r["status"] == "optimal"
        assert r["reference"] == "sklearn.SVC"
        # both stop at m - M < 1e-3: the dual objectives agree far better than that
        assert r["rel_objective_diff"] < 1e-3
        assert abs(r["accuracy_diff"]) <= 0.01
        assert r["b_diff"] < 0.05
        assert r["time_ratio"] > 0
        # the solver's own objective equals the one recomputed from its support vectors
        # (SMO's gradient accumulates float32 kernel-cache round-off: ~1e-7 relative seen)
        assert r["objective"] == pytest.approx(r["extra"]["reported_objective"], rel=1e-6)


def test_smoke_liblinear_rows_on_linear_cases(smoke: tuple[int, Path, dict]) -> None:
    """LIBLINEAR (another problem: regularised bias) appears beside the linear SMO rows; its
    (w, b) is feasible for the SVM primal, so by weak duality its primal value is at least the
    dual objective SMO certified, up to SMO's tolerance."""
    _, out, results = smoke
    lin = _rows(results, benchmark="smo_svc", method="sklearn.LinearSVC (LIBLINEAR)")
    assert len(lin) == 1 and lin[0]["params"]["kernel"] == "linear"
    ours = _rows(results, benchmark="smo_svc", case=lin[0]["case"], method="maxmargin.smo")[0]
    assert lin[0]["status"] == "optimal" and lin[0]["time_s"] > 0
    assert lin[0]["objective"] >= ours["objective"] * (1 - 1e-3)
    assert ours["extra"]["ratio_vs_liblinear"] > 0
    rbf_cases = {r["case"] for r in _rows(results, benchmark="smo_svc")
                 if r["params"].get("kernel") == "rbf"}
    assert rbf_cases and not [r for r in lin if r["case"] in rbf_cases]
    assert "- SMO / LIBLINEAR (LinearSVC" in (out / "benchmarks.md").read_text()


def test_smoke_linear_rows_are_certified(smoke: tuple[int, Path, dict]) -> None:
    """The linear families: maxmargin's answer meets its gap (LIBLINEAR's problems: relative
    duality gap; SVC's: m - M) by the certificate, LinearSVC's gap is measured beside it, and
    on LIBLINEAR's problems the two primal objectives agree to what the gaps allow."""
    _, out, results = smoke
    for family in ("linear", "linear_cs", "linear_svc"):
        ours = _rows(results, benchmark=family, role="maxmargin")
        assert ours
        for row in ours:
            peer = _rows(results, benchmark=family, case=row["case"], role="peer")[0]
            assert row["status"] == "optimal" and row["extra"]["gap"] < row["params"]["tol"]
            assert peer["extra"]["gap"] >= 0 and row["time_ratio"] > 0
            if family in ("linear", "linear_cs"):
                # each P - P* <= gap |P| (relative duality gaps): |P - P_peer| / |P_peer| within
                # their sum, up to a factor 1 + gap
                slack = row["extra"]["gap"] + peer["extra"]["gap"] + 1e-12
                assert row["rel_objective_diff"] <= 1.01 * slack
            else:
                assert row["extra"]["solver"] in ("dcd_svc", "smo/wss2")
    assert "Linear SVMs vs LIBLINEAR" in (out / "benchmarks.md").read_text()


def test_smoke_nu_rows_are_certified(smoke: tuple[int, Path, dict]) -> None:
    """The nu families: maxmargin's nu-SVC and one-class answers meet m - M < tol by the judge,
    LIBSVM's are judged beside them, and the dual objectives agree to what the gaps allow; a
    reduced-hull answer (nu-SVC, one-class) called optimal meets its gap, and its distance is
    the oracle's."""
    _, _, results = smoke
    for family in ("nu_svc", "one_class"):
        for peer in _rows(results, benchmark=family, role="peer"):
            ours = _rows(results, benchmark=family, case=peer["case"], role="maxmargin")[0]
            assert ours["status"] == "optimal" and ours["extra"]["verdict"] == "optimal"
            assert ours["extra"]["kkt_violation"] < ours["params"]["tol"]
            assert peer["extra"]["verdict"] in ("optimal", "not optimal")
            assert ours["reference"] == peer["method"] and ours["time_ratio"] > 0
            # D* - D <= gap |P*| on each side, and |P*| is |D| within its gap
            slack = ours["extra"]["gap"] + peer["extra"]["gap"]
            assert ours["rel_objective_diff"] <= 1.1 * slack + 1e-12
    for family, smo_name, hull_name in (("nu_svc", "nu_smo", "gilbert_svm(nu)"),
                                        ("one_class", "one_class_smo", "one_class_hull")):
        hull_svm = [r for r in _rows(results, benchmark=family, role="maxmargin")
                    if r["case"].startswith("reduced hull")]
        assert {r["method"] for r in hull_svm} == {
            f"maxmargin.{smo_name}", f"maxmargin.{hull_name}/mdm", f"maxmargin.{hull_name}/wolfe"}
        for r in hull_svm:
            if r["status"] == "optimal" and r["method"] != f"maxmargin.{smo_name}":
                assert r["extra"]["gap"] <= HULL_CERT_FACTOR * r["params"]["tol"]
                assert r["reference"] == f"maxmargin.{smo_name}"
    hulls = _rows(results, benchmark="reduced_hulls")
    assert len(_rows(results, benchmark="reduced_hulls", role="oracle")) == 1
    for r in hulls:
        if r["status"] == "optimal" and r["role"] == "maxmargin":
            assert r["extra"]["gap_reached"] <= HULL_CERT_FACTOR * r["params"]["tol"]
            assert r["rel_objective_diff"] <= 1e-6
    assert "maxmargin.wolfe_hulls" in {r["method"] for r in hulls if r["status"] == "optimal"}


def test_smoke_smo_hard_regimes(smoke: tuple[int, Path, dict]) -> None:
    _, out, results = smoke
    high_c, raw = _rows(results, benchmark="smo_hard", method="maxmargin.smo")[:2]
    assert high_c["params"]["C"] == 100.0 and high_c["status"] == "optimal"
    assert high_c["reference"] == "sklearn.SVC" and high_c["rel_objective_diff"] < 1e-3
    # unscaled breast cancer: SMO certifies its answer; LIBSVM's float32 cache leaves it
    # below the optimum, so the recomputed dual objective of SMO is the larger one
    assert raw["params"]["data"] == "breast_cancer" and raw["status"] == "optimal"
    svc = _rows(results, benchmark="smo_hard", case=raw["case"], method="sklearn.SVC")[0]
    assert raw["objective"] >= svc["objective"] * (1 - 1e-9)
    hard = [r for r in _rows(results, benchmark="smo_hard") if r["case"].startswith("hard")]
    assert [r["method"] for r in hard] == ["maxmargin.smo", "maxmargin.gilbert_svm/mdm",
                                          "maxmargin.gilbert_svm/wolfe"]
    for r in hard:
        assert r["status"] == "optimal" and r["params"]["C"] is None
    for r in hard[1:]:  # the nearest-point methods against SMO on the same hard margin
        assert r["reference"] == "maxmargin.smo" and r["rel_objective_diff"] < 1e-3
    md = (out / "benchmarks.md").read_text()
    assert "### SMO on the hard regimes" in md
    assert "- SMO / SVC, hard regimes: worst " in md


def test_smoke_smo_agrees_with_cvxpy(smoke: tuple[int, Path, dict]) -> None:
    _, _, results = smoke
    clarabel = _rows(results, benchmark="smo_cvxpy", method="cvxpy.svm_dual/CLARABEL")[0]
    assert clarabel["status"] == "optimal"
    tight = [
        r
        for r in _rows(results, benchmark="smo_cvxpy", method="maxmargin.smo")
        if r["params"]["tol"] == 1e-6
    ]
    assert len(tight) == 1
    assert tight[0]["reference"] == clarabel["method"]
    assert tight[0]["rel_objective_diff"] < 1e-6
    osqp = _rows(results, benchmark="smo_cvxpy", method="cvxpy.svm_dual/OSQP")[0]
    assert osqp["status"] in ("optimal", "inaccurate", "max_iter", "solver_error")


def test_smoke_hulls_reach_their_gaps(smoke: tuple[int, Path, dict]) -> None:
    _, _, results = smoke
    ref = _rows(results, benchmark="hulls", role="oracle")[0]
    assert ref["status"] == "optimal" and ref["extra"]["gap_reached"] < 1e-8
    for r in _rows(results, benchmark="hulls", role="maxmargin"):
        gap = r["extra"]["gap_reached"]
        if r["status"] == "optimal":
            assert gap <= r["params"]["tol"] * (1 + 1e-6)
        else:
            assert r["status"] == "max_iter" and r["iterations"] == r["params"]["max_iter"]
        # weak duality: ||z||^2 (1 - gap) = min <z, v> <= ||z|| rho over the Minkowski
        # difference, so (||z|| - rho) / rho <= gap / (1 - gap)
        assert r["rel_objective_diff"] <= gap / (1.0 - gap) + 1e-9
    mdm = [
        r
        for r in _rows(results, benchmark="hulls", method="maxmargin.mdm_hulls")
        if r["params"]["tol"] == 1e-8
    ]
    assert mdm[0]["status"] == "optimal" and mdm[0]["rel_objective_diff"] < 1e-8


def test_smoke_perceptron_equals_sklearn(smoke: tuple[int, Path, dict]) -> None:
    _, _, results = smoke
    ours = _rows(results, benchmark="perceptron", role="maxmargin")[0]
    peer = _rows(results, benchmark="perceptron", role="peer")[0]
    assert ours["status"] == "converged"
    assert ours["objective"] == 0 and peer["objective"] == 0  # training errors
    assert peer["iterations"] == ours["params"]["epochs"] == peer["params"]["epochs"]
    # same cyclic updates on y (w.x + b) <= 0 with eta = 1: the same w and b
    assert ours["extra"]["w_diff"] <= 1e-9
    assert ours["b_diff"] <= 1e-9


def test_smoke_estimator_families_agree_with_svc(smoke: tuple[int, Path, dict]) -> None:
    """The estimator, GridSearchCV and prediction rows: each compares MaxMarginClassifier with
    SVC on the same data, one thread each, and the two agree as solutions to tol 1e-3 do."""
    _, _, results = smoke
    for family in ("estimator", "grid_search", "predict"):
        peer = _rows(results, benchmark=family, role="peer")
        ours = _rows(results, benchmark=family, role="maxmargin")
        assert [r["method"] for r in peer] == ["sklearn.SVC"]
        assert [r["method"] for r in ours] == ["maxmargin.MaxMarginClassifier"]
        assert ours[0]["reference"] == "sklearn.SVC" and ours[0]["time_ratio"] > 0
        assert peer[0]["params"]["threads"] == ours[0]["params"]["threads"] == 1
    fit = _rows(results, benchmark="estimator", role="maxmargin")[0]
    assert fit["status"] == "optimal" and fit["extra"]["problems"] == 45  # digits: 10 classes
    assert fit["extra"]["agree_with_svc"] >= 0.99 and abs(fit["accuracy_diff"]) <= 0.01
    search = _rows(results, benchmark="grid_search", role="maxmargin")[0]
    assert abs(search["accuracy_diff"]) <= 0.02  # best mean CV accuracy of the same grid
    assert search["extra"]["fits"] == 12
    pred = _rows(results, benchmark="predict", role="maxmargin")[0]
    assert pred["extra"]["max_abs_diff"] < 1e-2  # two fits to tol 1e-3 of the same problem
    assert pred["peak_delta_mb"] is not None


def test_rebuild_from_json_gives_the_same_markdown(
    smoke: tuple[int, Path, dict], tmp_path: Path
) -> None:
    _, out, _ = smoke
    code = cli.main(["--from-json", str(out / "benchmarks.json"), "--out", str(tmp_path)])
    assert code == 0
    assert (tmp_path / "benchmarks.md").read_text() == (out / "benchmarks.md").read_text()


# --- independent accuracy measures against hand-derived answers --------------------------------


@pytest.mark.parametrize("example", SVM_EXAMPLES, ids=lambda e: e.name)
def test_svm_scores_on_hand_examples(example) -> None:
    kernel = make_kernel(example.kernel, **example.kernel_params)
    sv = np.flatnonzero(example.alpha > 0)
    b = example.b if example.b is not None else 0.5 * sum(example.b_interval)
    scores = data.svm_scores(
        example.X, example.y, sv, example.alpha[sv] * example.y[sv], b, kernel
    )
    assert scores["dual_objective"] == pytest.approx(example.objective, abs=1e-12)
    assert scores["accuracy"] == 1.0


def test_svm_scores_blocks_agree_with_one_block() -> None:
    X, y = data.make_clouds(300, 4, seed=3)
    rng = np.random.default_rng(0)
    sv = np.sort(rng.choice(300, size=120, replace=False))
    coef = rng.uniform(0, 1, size=120) * y[sv]
    kernel = make_kernel("rbf", gamma=0.3)
    tiny = data.svm_scores(X, y, sv, coef, 0.1, kernel, block_mb=1e-3)  # one row per block
    full = data.svm_scores(X, y, sv, coef, 0.1, kernel)
    K = kernel(X[sv], X[sv])
    assert full["dual_objective"] == pytest.approx(np.abs(coef).sum() - 0.5 * coef @ K @ coef)
    assert tiny["dual_objective"] == pytest.approx(full["dual_objective"], rel=1e-12)
    assert tiny["accuracy"] == full["accuracy"]


def test_hull_gap_on_hand_example() -> None:
    P, Q = HULL_PAIR["P"], HULL_PAIR["Q"]
    exact = data.hull_gap(P, Q, HULL_PAIR["weights_p"], HULL_PAIR["weights_q"])
    assert exact["distance"] == pytest.approx(HULL_PAIR["distance"])
    assert exact["gap"] == pytest.approx(0.0, abs=1e-15)
    # unnormalised and slightly negative weights are projected onto the simplex first
    scaled = data.hull_gap(P, Q, [1.0, 1.0], [2.0, -1e-12])
    assert scaled["distance"] == pytest.approx(HULL_PAIR["distance"])
    # p = (0, 0), q = (3, 1): z = (-3, -1); min_P <z,p> = -2, max_Q <z,q> = -10: gap 2/10
    worse = data.hull_gap(P, Q, [1.0, 0.0], [1.0, 0.0])
    assert worse["distance"] == pytest.approx(math.sqrt(10.0))
    assert worse["gap"] == pytest.approx((10.0 - (-2.0 + 10.0)) / 10.0)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(1, 6), k=st.integers(1, 6))
def test_hull_gap_is_nonnegative(seed: int, m: int, k: int) -> None:
    """Weak duality: min_P <z,p> - max_Q <z,q> <= <z, p - q> = ||z||^2 for p, q in the hulls."""
    rng = np.random.default_rng(seed)
    P, Q = rng.normal(size=(m, 3)) + 4.0, rng.normal(size=(k, 3))
    out = data.hull_gap(P, Q, rng.uniform(size=m), rng.uniform(size=k))
    assert out["gap"] >= -1e-12


def test_data_generators() -> None:
    X, y = data.make_clouds(101, 7, seed=0)
    assert X.shape == (101, 7) and abs(np.sum(y)) <= 1
    P, Q = data.make_hulls(500, 5, seed=0)
    assert P[:, 0].min() > 0 > Q[:, 0].max()  # the hyperplane x1 = 0 separates the hulls
    Xs, ys = data.make_separable(400, 5, seed=0, margin=0.2)
    assert Xs.shape == (400, 5) and set(np.unique(ys)) == {-1.0, 1.0}
    # separable: a perceptron pass without mistakes exists only for separable data
    from maxmargin.algorithms.perceptron import perceptron

    assert perceptron(Xs, ys, max_epochs=5000).converged


# --- measuring ---------------------------------------------------------------------------------


def test_measure_sees_peak_memory_and_repeats() -> None:
    m = harness.measure(lambda: float(np.ones(20_000_000).sum()), warm=lambda: 0, repeats=2)
    assert m.value == 20_000_000.0 and not m.error
    assert len(m.times) == 2 and m.best == min(m.times) and m.warmup_s is not None
    if m.peak_rss_mb is not None:  # Linux: the 160 MB array shows in the peak
        assert m.peak_rss_mb - m.rss_base_mb > 140.0


def test_measure_records_errors_and_warnings() -> None:
    import warnings

    from maxmargin.exceptions import ConvergenceWarning

    def warns() -> int:
        warnings.warn("stopped early", ConvergenceWarning, stacklevel=1)
        return 1

    m = harness.measure(warns, repeats=1)
    assert m.value == 1 and "ConvergenceWarning: stopped early" in m.message
    bad = harness.measure(lambda: 1 / 0, repeats=3)
    assert bad.error and "ZeroDivisionError" in bad.message and bad.times == []


def test_measure_many_interleaves_rounds() -> None:
    log: list[str] = []

    def call(name: str) -> Callable[[], Any]:
        return lambda: log.append(name) or name

    def boom() -> None:
        raise RuntimeError("solver blew up")

    calls = [(call("a"), call("warm a")), (call("b"), call("warm b")), (boom, None)]
    a, b, bad = harness.measure_many(calls, repeats=2, budget_s=1e9)
    assert log == ["warm a", "warm b", "a", "b", "a", "b"]
    assert (a.value, b.value, len(a.times), len(b.times)) == ("a", "b", 2, 2)
    assert bad.error and "RuntimeError: solver blew up" in bad.message and bad.times == []
    log.clear()
    harness.measure_many(calls[:2], repeats=3, budget_s=0.0)  # no time left for repeats
    assert log == ["warm a", "warm b", "a", "b"]


def test_child_crash_and_timeout_become_rows() -> None:
    env = dict(os.environ)
    params = {"n": 50, "d": 3, "margin": 0.1, "max_epochs": 100}
    good = harness.Case("perceptron", "fine", params)
    crash = harness.Case("perceptron", "broken", {"n": 10})  # no `d`: the child raises KeyError
    after = harness.Case("perceptron", "after", params)
    assert harness.groups([good, crash, after]) == [[good, crash, after]]
    logged: list[str] = []
    rows = harness.run_group([good, crash, after], 1, 1.0, env, logged.append)
    # the case done before the crash keeps its rows; the crash and the rest become rows too
    assert [r["case"] for r in rows] == ["fine"] * 2 + ["broken", "after"]
    assert [r["status"] for r in rows[2:]] == ["crashed", "crashed"]
    assert "KeyError" in rows[2]["message"]
    assert len(logged) == 3
    slow = harness.Case("perceptron", "slow", {"n": 10, "d": 2, "margin": 0.1}, timeout_s=0.01)
    rows = harness.run_group([slow], 1, 1.0, env)
    assert [r["status"] for r in rows] == ["timeout"]
    assert tuple(rows[0]) == harness.ROW_KEYS


def test_isolated_memory_probe() -> None:
    case = smo._svm_case("smo_svc", "rbf", 600, 1e-3)
    for method in ("maxmargin.smo", "sklearn.SVC"):
        out = smo._isolated_memory(case, method)
        assert out["isolated_status"] == "done"
        assert out["isolated_time_s"] > 0
        assert out["isolated_peak_rss_mb"] >= out["isolated_rss_base_mb"] - 1.0
        # n = 600: the solver's cache and arrays are a few MB, nowhere near the parent's size
        assert out["isolated_peak_delta_mb"] < 100.0


def test_groups_isolate_large_cases() -> None:
    cases = suites.plan_suite("scale", ["smo_svc"])
    groups = harness.groups(cases)
    big = [g for g in groups if g[0].params["n"] >= 20_000]
    assert big and all(len(g) == 1 for g in big)
    assert sum(len(g) for g in groups) == len(cases)


def test_verify_family_records_exit_code() -> None:
    ok = verify.run(harness.Case("verify", "help", {"argv": ["--help"]}), 1, 1.0)
    assert ok[0]["status"] == "passed" and ok[0]["extra"]["exit_code"] == 0
    assert ok[0]["method"] == "maxmargin --help" and ok[0]["time_s"] > 0
    assert ok[0]["extra"]["cpu_s"] > 0 and ok[0]["params"]["numba_cache"] == "warm"
    cold = verify.run(harness.Case("verify", "help", {"argv": ["--help"], "cache": "empty"}),
                      1, 1.0)
    assert cold[0]["status"] == "passed" and cold[0]["params"]["numba_cache"] == "empty"
    assert [c.params["cache"] for c in verify.cases("standard")] == ["warm", "empty"]
    bad = verify.run(harness.Case("verify", "bad", {"argv": ["no-such-command"]}), 1, 1.0)
    assert bad[0]["status"] == "failed" and bad[0]["extra"]["exit_code"] not in (0, None)


def test_compile_family_with_warm_cache() -> None:
    rows = startup.run(harness.Case("compile", "warm", {"cache": "warm"}), 1, 1.0)
    assert {r["method"] for r in rows} >= {"maxmargin.smo", "maxmargin.perceptron"}
    for r in rows:
        assert r["status"] == "done", r["message"]
        assert r["extra"]["first_call_s"] > 0 and r["extra"]["second_call_s"] > 0


# --- targets and merging -----------------------------------------------------------------------


def _smo_row(n: int, ratio: float, diff: float, tol: float = 1e-3, **extra: object) -> dict:
    row = dict.fromkeys(harness.ROW_KEYS)
    row.update(
        benchmark="smo_svc",
        case=f"rbf n={n} tol={tol:g}",
        method="maxmargin.smo",
        role="maxmargin",
        time_s=ratio,
        time_ratio=ratio,
        rel_objective_diff=diff,
        params={"kernel": "rbf", "tol": tol},
        extra=dict(extra),
    )
    return row


def test_targets_verdicts() -> None:
    rows = [
        _smo_row(5000, 0.9, 1e-7),
        _smo_row(10000, 0.6, 1e-7),
        _smo_row(100_000, 1.0, 0.0, memory_bound_mb=300.0, gram_matrix_mb=76293.0),
    ]
    rows[2].update(peak_delta_mb=250.0, peak_rss_mb=400.0)
    targets = report.evaluate_targets(rows)
    assert [t["met"] for t in targets] == [True, False, True, None, None]
    rows[0]["rel_objective_diff"] = 2e-6  # fast but not the same objective
    rows[2]["peak_delta_mb"] = 301.0
    assert [t["met"] for t in report.evaluate_targets(rows)][:3] == [False, False, False]
    rows[2]["extra"]["isolated_peak_delta_mb"] = 290.0  # measured alone: this one counts
    assert report.evaluate_targets(rows)[2]["met"] is True


def test_merge_keeps_families_not_rerun() -> None:
    first = {"suite": "standard", "only": None, "date": "d0"}
    first["rows"] = [{"benchmark": "hulls"}, {"benchmark": "verify"}, {"benchmark": "smo_svc"}]
    second = {
        "suite": "scale",
        "only": ["smo_svc"],
        "date": "d1",
        "rows": [{"benchmark": "smo_svc"}],
    }
    merged = harness.merge_results(first, second)
    assert merged["rows"] == first["rows"][:2] + second["rows"]
    assert merged["merged_from"] == [
        {"suite": "standard", "only": None, "date": "d0", "families": ["hulls", "verify"]}
    ]
    third = {"suite": "standard", "only": ["hulls"], "date": "d2", "rows": [{"benchmark": "hulls"}]}
    again = harness.merge_results(merged, third)
    assert [r["benchmark"] for r in again["rows"]] == ["verify", "smo_svc", "hulls"]
    assert again["merged_from"] == [
        {"suite": "standard", "only": None, "date": "d0", "families": ["verify"]},
        {"suite": "scale", "only": ["smo_svc"], "date": "d1", "families": ["smo_svc"]},
    ]
    assert report._command(again) == (
        "python -m benchmarks --suite standard`, then `python -m benchmarks --suite scale "
        "--only smo_svc --merge`, then `python -m benchmarks --suite standard --only hulls --merge"
    )


def test_a_merged_run_on_another_machine_says_so() -> None:
    """Rows measured on another CPU than the last run's are named with it, in the report's
    provenance lines and in the README table's footnote."""
    from benchmarks import readme_table

    machine = {"cpu": "CPU A", "cpu_count": 2, "threads": {}}
    first = {"suite": "standard", "only": None, "date": "2026-01-01", "repeats": 5,
             "machine": {**machine, "cpu": "CPU B"},
             "rows": [{"benchmark": "hulls", "role": "peer", "case": "c", "extra": {}},
                      {"benchmark": "verify", "role": "maxmargin", "case": "quick", "extra": {}}]}
    second = {"suite": "standard", "only": ["verify"], "date": "2026-01-02", "repeats": 5,
              "machine": machine,
              "rows": [{"benchmark": "verify", "role": "maxmargin", "case": "quick", "extra": {}}]}
    merged = harness.merge_results(first, second)
    assert merged["merged_from"][0]["cpu"] == "CPU B"
    assert report._provenance(merged) == [
        "- rows of hulls from the `standard` run of 2026-01-01 on CPU B"]
    assert "on CPU A and CPU B (" in readme_table.render(merged)
    assert "on CPU A, 2 CPUs" in readme_table.render({**second, "machine": machine})


def test_merge_keeps_the_cases_a_smaller_suite_does_not_run() -> None:
    """A ``standard`` run of a family measured by a ``scale`` run keeps the scale run's cases
    it does not run (credited to that run, case by case) while a suite still defines them,
    through later merges too; the report and the README table name them and their date."""
    big, huge, gone = "rbf n=1000", "rbf n=100000", "rbf n=7"
    first = {"suite": "scale", "only": None, "date": "2026-01-01T00", "rows": [
        {"benchmark": "hulls", "case": "h"}, {"benchmark": "smo_svc", "case": big},
        {"benchmark": "smo_svc", "case": huge}, {"benchmark": "smo_svc", "case": gone}]}
    known = {("smo_svc", big), ("smo_svc", huge), ("hulls", "h")}
    second = {"suite": "standard", "only": ["smo_svc"], "date": "2026-01-02T00",
              "rows": [{"benchmark": "smo_svc", "case": big, "new": True}]}
    merged = harness.merge_results(first, second, known)
    assert [(r["benchmark"], r["case"], r.get("new", False)) for r in merged["rows"]] == [
        ("hulls", "h", False), ("smo_svc", huge, False), ("smo_svc", big, True)]
    credit = {"suite": "scale", "only": None, "date": "2026-01-01T00", "families": ["hulls"],
              "cases": {"smo_svc": [huge]}}
    assert merged["merged_from"] == [credit]
    third = {"suite": "standard", "only": ["smo_svc"], "date": "2026-01-03T00",
             "rows": [{"benchmark": "smo_svc", "case": big}]}
    again = harness.merge_results(merged, third, known)
    assert [(r["benchmark"], r["case"]) for r in again["rows"]] == [
        ("hulls", "h"), ("smo_svc", huge), ("smo_svc", big)]
    assert again["merged_from"] == [credit]
    line = "- rows of hulls; smo_svc's rbf n=100000 from the `scale` run of 2026-01-01T00"
    assert report._provenance(again) == [line]


def test_a_merge_keeps_larger_suites_cases_only() -> None:
    """``--merge`` after a standard run keeps the scale suite's cases, never smoke's."""
    from benchmarks import suites

    kept = suites.cases_kept("standard", ["smo_svc", "hulls"])
    names = {case for _, case in kept}
    assert "rbf n=100000 tol=0.001" in names and "rbf n=1000 tol=0.001" in names
    smoke_only = ({(c.family, c.name) for c in suites.plan_suite("smoke", ["smo_svc", "hulls"])}
                  - {(c.family, c.name) for c in suites.plan_suite("standard",
                                                                  ["smo_svc", "hulls"])})
    assert smoke_only and not smoke_only & kept
    assert suites.cases_kept("scale", ["smo_svc"]) == {
        (c.family, c.name) for c in suites.plan_suite("scale", ["smo_svc"])}


def test_failed_render_leaves_previous_outputs(tmp_path: Path) -> None:
    good = {
        "schema": harness.SCHEMA,
        "suite": "smoke",
        "date": "now",
        "repeats": 1,
        "versions": {"numpy": "1"},
        "machine": {"cpu": "x", "cpu_count": 1, "memory_gb": 1, "platform": "p"},
        "rows": [],
    }
    report.write_outputs(good, tmp_path)
    before = (tmp_path / "benchmarks.json").read_text(), (tmp_path / "benchmarks.md").read_text()
    broken = dict(good, machine={})  # render_markdown fails on the missing machine fields
    with pytest.raises(KeyError):
        report.write_outputs(broken, tmp_path)
    after = (tmp_path / "benchmarks.json").read_text(), (tmp_path / "benchmarks.md").read_text()
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["benchmarks.json", "benchmarks.md"]


# --- bad input ---------------------------------------------------------------------------------


def test_bad_suite() -> None:
    with pytest.raises(ValueError, match="`suite` must be one of"):
        suites.plan_suite("huge")


def test_bad_only_name() -> None:
    with pytest.raises(ValueError, match="`only` must be one of"):
        cli.main(["--suite", "smoke", "--only", "smo_svc,nope"])


def test_empty_only() -> None:
    with pytest.raises(ValueError, match="`only` must name at least one"):
        cli.main(["--suite", "smoke", "--only", ","])


def test_bad_repeats() -> None:
    with pytest.raises(ValueError, match="`repeats` must be an integer >= 1"):
        cli.main(["--suite", "smoke", "--repeats", "0"])


def test_bad_threads() -> None:
    with pytest.raises(ValueError, match="`threads` must be an integer >= 1"):
        suites.run_suite("smoke", ["perceptron"], threads=0)


def test_cli_module_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for option in ("--suite", "--only", "--out", "--repeats", "--merge", "--from-json"):
        assert option in text


def test_runs_as_python_m_benchmarks_and_stays_out_of_the_package(tmp_path: Path) -> None:
    # `python -m benchmarks` from the repository root, in a process of its own (the families'
    # children find the package through PYTHONPATH whatever their working directory) ...
    import subprocess
    import sys

    root = Path(harness.__file__).resolve().parent.parent
    argv = [sys.executable, "-m", "benchmarks", "--suite", "smoke", "--only", "perceptron",
            "--out", str(tmp_path)]
    proc = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads((tmp_path / "benchmarks.json").read_text())
    assert {r["benchmark"] for r in results["rows"]} == {"perceptron"}
    assert results["only"] == ["perceptron"]
    # ... and the installed package has neither the harness nor a `bench` command
    from maxmargin.cli import build_parser

    assert "bench" not in build_parser()._subparsers._group_actions[0].choices
    with pytest.raises(ModuleNotFoundError):
        __import__("maxmargin.bench")
