"""Family ``smo_hard``: SMO against LIBSVM on the hard regimes (high C, poly, wide linear data,
unscaled features, d = 500) and, on hard-margin kernel problems, SMO against the kernel
nearest-point methods (``gilbert_svm`` with MDM and Wolfe)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.data import make_clouds
from benchmarks.harness import Case, compare, measure_many
from benchmarks.smo import _gamma_scale, _smo_row, _svm_case, run_svc
from benchmarks.tables import md_multi

#: Bayes error of the clouds of the hard-margin cases: nearly separable, so the RBF hard margin
#: has a margin worth certifying and a few hundred to thousands of support vectors.
HARD_MARGIN_BAYES = 0.002


def cases(suite: str) -> list[Case]:
    """The hard regimes of the speed issue as SMO-vs-SVC cases, and hard-margin RBF cases."""
    if suite == "smoke":
        specs: list[tuple[str, int, dict]] = [
            ("rbf", 500, {"C": 100.0}),
            ("linear", 569, {"d": 30, "data": "breast_cancer"}),
        ]
        hard_n = [300]
    else:
        specs = [
            ("rbf", 10_000, {"C": 100.0}), ("rbf", 10_000, {"C": 1000.0}),
            ("rbf", 20_000, {"C": 100.0}), ("rbf", 20_000, {"C": 1000.0}),
            ("poly", 1000, {}), ("poly", 20_000, {}),
            ("linear", 1000, {"d": 300}), ("linear", 10_000, {"d": 300}),
            ("linear", 569, {"d": 30, "data": "breast_cancer"}),
            ("rbf", 5000, {"d": 500}),
        ]
        if suite == "scale":
            specs += [("rbf", 50_000, {"C": 100.0}), ("rbf", 50_000, {"C": 1000.0})]
        hard_n = [2000, 10_000]
    out = [_svm_case("smo_hard", kernel, n, 1e-3, **extra) for kernel, n, extra in specs]
    out += [
        Case("smo_hard", f"hard margin rbf n={n} d=10", {"n": n, "d": 10, "kind": "hard_margin"},
             isolate=n >= 10_000)
        for n in hard_n
    ]
    return out


def run(case: Case, repeats: int, budget: float) -> list[dict]:
    """SMO vs SVC (:func:`benchmarks.smo.run_svc`), or the hard-margin comparison."""
    if case.params.get("kind") == "hard_margin":
        return _run_hard_margin(case, repeats, budget)
    return run_svc(case, repeats, budget)


def _run_hard_margin(case: Case, repeats: int, budget: float) -> list[dict]:
    """``smo(C=None)`` (the reference) and ``gilbert_svm`` with MDM and Wolfe on nearly
    separable clouds, RBF with ``gamma = scale``, every method at its default tolerance (SMO:
    KKT violation 1e-3; MDM and Wolfe: relative hull gap 1e-8, the tighter criterion)."""
    from maxmargin.algorithms import gilbert_svm, smo
    from maxmargin.kernels import make_kernel

    p = case.params
    X, y = make_clouds(p["n"], p["d"], seed=p["n"], bayes_error=HARD_MARGIN_BAYES)
    Xw, yw = make_clouds(100, p["d"], seed=1, bayes_error=HARD_MARGIN_BAYES)
    gamma = _gamma_scale(X)
    kernel = make_kernel("rbf", gamma=gamma)

    def fit(name: str, A: np.ndarray, b: np.ndarray) -> Callable[[], Any]:
        if name == "smo":
            return lambda: smo(A, b, C=None, kernel="rbf", gamma=gamma)
        return lambda: gilbert_svm(A, b, method=name, kernel="rbf", gamma=gamma)

    names = ("smo", "mdm", "wolfe")
    measured = measure_many([(fit(k, X, y), fit(k, Xw, yw)) for k in names], repeats, budget)
    rows = []
    for name, m in zip(names, measured, strict=True):
        method = "maxmargin.smo" if name == "smo" else f"maxmargin.gilbert_svm/{name}"
        row = _smo_row(case, X, y, kernel, m, method, None)  # each at its default tolerance
        row["params"].update(kernel="rbf", gamma=gamma, C=None)
        rows.append(row)
    compare(rows, rows[0])
    return rows


def markdown(rows: list[dict]) -> str:
    """The table of the hard regimes."""
    return md_multi(
        rows,
        "smo_hard",
        "SMO on the hard regimes: vs LIBSVM, and vs MDM / Wolfe on the RBF hard margin",
        "Two Gaussian clouds (Bayes error 10%) unless named: C, d, poly degree 3 (gamma "
        "`scale`, coef0 0), `breast_cancer` = scikit-learn's data set unscaled (|x| up to "
        "4,254). ratio and rel dD are relative to SVC (LIBSVM) with the same tol; on the hard "
        "margin rows (clouds with Bayes error 0.2%, d = 10, RBF `scale`) relative to "
        "`smo(C=None)`, MDM and Wolfe stopping at their default relative gap 1e-8.",
        "tol",
    )
