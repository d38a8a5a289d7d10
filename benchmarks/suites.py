"""The suites (``smoke``, ``standard``, ``scale``) and their families, and running them."""
from __future__ import annotations

import datetime as _dt
import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from benchmarks import estimator, hulls, linear, nu, perceptron, smo, smo_hard, startup, verify
from benchmarks.harness import (
    SCHEMA,
    SETTINGS,
    Case,
    atomic_write,
    git_commit,
    groups,
    jsonable,
    machine_info,
    package_versions,
    run_group,
)
from maxmargin._validation import check_choice, check_positive_int

SUITES = ("smoke", "standard", "scale")
FAMILIES = ("smo_svc", "smo_hard", "smo_cvxpy", "hulls", "linear", "linear_cs", "linear_svc",
            "nu_svc", "one_class", "reduced_hulls", "perceptron", "estimator",
            "grid_search", "predict", "compile", "verify")


def plan_suite(suite: str, only: Sequence[str] | None = None) -> list[Case]:
    """The cases of a suite, restricted to the families in ``only`` (all when None).

    ``smoke`` (tiny sizes, < 60 s; used by the tests) leaves out ``compile`` and ``verify``
    unless they are named in ``only``; ``standard`` is what the README quotes; ``scale`` adds
    RBF SMO vs SVC at n = 50,000 and 100,000 (minutes each).
    """
    suite = check_choice(suite, "suite", SUITES)
    families = list(FAMILIES) if only is None else [check_choice(f, "only", FAMILIES) for f in only]
    builders: dict[str, Callable[[str], list[Case]]] = {
        "smo_svc": smo.svc_cases,
        "smo_hard": smo_hard.cases,
        "smo_cvxpy": smo.cvxpy_cases,
        "hulls": hulls.cases,
        "linear": linear.cases,
        "linear_cs": linear.cs_cases,
        "linear_svc": linear.svc_cases,
        "nu_svc": nu.nu_svc_cases,
        "one_class": nu.one_class_cases,
        "reduced_hulls": nu.reduced_hull_cases,
        "perceptron": perceptron.cases,
        "estimator": estimator.fit_cases,
        "grid_search": estimator.grid_cases,
        "predict": estimator.predict_cases,
        "compile": startup.cases,
        "verify": verify.cases,
    }
    cases: list[Case] = []
    for family in families:
        if suite == "smoke" and only is None and family in ("compile", "verify"):
            continue
        cases += builders[family](suite)
    return cases


def cases_kept(suite: str, only: Sequence[str] | None = None) -> set[tuple[str, str]]:
    """``(family, case)`` of the suites at least as large as ``suite`` (``--merge`` keeps an
    earlier run's rows of these cases when this run does not measure them: a ``standard`` run
    keeps a ``scale`` run's largest cases, never ``smoke``'s tiny ones)."""
    larger = SUITES[SUITES.index(check_choice(suite, "suite", SUITES)):]
    return {(case.family, case.name) for name in larger for case in plan_suite(name, only)}


RUNNERS: dict[str, Callable[[Case, int, float], list[dict]]] = {
    "smo_svc": smo.run_svc,
    "smo_hard": smo_hard.run,
    "smo_cvxpy": smo.run_cvxpy,
    "hulls": hulls.run,
    "linear": linear.run,
    "linear_cs": linear.run_cs,
    "linear_svc": linear.run,
    "nu_svc": nu.run_nu_svc,
    "one_class": nu.run_one_class,
    "reduced_hulls": nu.run_reduced_hulls,
    "perceptron": perceptron.run,
    "estimator": estimator.run_fit,
    "grid_search": estimator.run_grid,
    "predict": estimator.run_predict,
    "compile": startup.run,
    "verify": verify.run,
}


def child_main(spec_path: str, out_path: str) -> int:
    """Entry point of a child process (:func:`benchmarks.harness.run_group` starts it): run its
    cases in order, saving the rows after each."""
    with open(spec_path) as fh:
        spec = json.load(fh)
    rows: list[dict] = []
    for done, item in enumerate(spec["cases"], start=1):
        case = Case(**item)
        rows += RUNNERS[case.family](case, spec["repeats"], spec["budget"])
        atomic_write(Path(out_path), json.dumps({"done": done, "rows": jsonable(rows)}))
    return 0


def run_suite(
    suite: str = "standard",
    only: Sequence[str] | None = None,
    *,
    repeats: int | None = None,
    threads: int | None = None,
    log: Callable[[str], None] | None = print,
) -> dict:
    """Run a suite case by case (each in its own child process) and return the results dict.

    Parameters
    ----------
    suite : {"smoke", "standard", "scale"}
    only : sequence of family names, optional
    repeats : int, optional
        Best-of-k (default 1 for smoke, 5 otherwise; fewer when a call is slow).
    threads : int, optional
        Sets ``NUMBA_NUM_THREADS``/``OMP_NUM_THREADS``/``OPENBLAS_NUM_THREADS`` in the children.
    """
    cases = plan_suite(suite, only)
    k, budget = SETTINGS[suite]
    k = k if repeats is None else check_positive_int(repeats, "repeats")
    env = dict(os.environ)
    if threads is not None:
        threads = check_positive_int(threads, "threads")
        for key in (
            "NUMBA_NUM_THREADS",
            "OMP_NUM_THREADS",
            "OPENBLAS_NUM_THREADS",
            "MKL_NUM_THREADS",
        ):
            env[key] = str(threads)
    started = _dt.datetime.now(_dt.UTC)
    rows: list[dict] = []
    t_all = time.perf_counter()
    for group in groups(cases):
        rows += run_group(group, k, budget, env, log)
    return {
        "schema": SCHEMA,
        "suite": suite,
        "only": list(only) if only else None,
        "date": started.isoformat(timespec="seconds"),
        "wall_s": time.perf_counter() - t_all,
        "repeats": k,
        "versions": package_versions(),
        "machine": machine_info() | ({"threads_option": threads} if threads else {}),
        "git_commit": git_commit(),
        "rows": jsonable(rows),
    }

