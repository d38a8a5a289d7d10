"""Families ``estimator`` (``MaxMarginClassifier().fit`` vs ``SVC().fit``), ``grid_search``
(``GridSearchCV`` over C and gamma with each) and ``predict`` (``decision_function`` of fitted
models on many new points): the scikit-learn estimator against scikit-learn's SVC (LIBSVM),
every call on one thread (BLAS limited to one, maxmargin's ``n_jobs=None``)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.data import make_clouds
from benchmarks.harness import Case, Measured, compare, make_row, measure_many
from benchmarks.tables import fmt, md_table, pairs

#: The grid of ``grid_search`` (digits' ``gamma="scale"`` is about 4.4e-4).
GRID = {"C": [0.1, 1.0, 10.0], "gamma": [1e-4, 5e-4, 2e-3]}
SMOKE_GRID = {"C": [1.0, 10.0], "gamma": [5e-4, 2e-3]}


def fit_cases(suite: str) -> list[Case]:
    """Digits (10 classes, 45 one-vs-one problems) and the scaled breast-cancer data (two)."""
    if suite == "smoke":
        return [Case("estimator", "digits n=500", {"data": "digits", "n": 500, "d": 64})]
    return [Case("estimator", "digits", {"data": "digits", "n": 1797, "d": 64}),
            Case("estimator", "breast_cancer scaled", {"data": "breast_cancer", "n": 569,
                                                       "d": 30})]


def grid_cases(suite: str) -> list[Case]:
    """``GridSearchCV`` on digits, 3-fold, over :data:`GRID` (smoke: a 2 x 2 grid)."""
    if suite == "smoke":
        return [Case("grid_search", "digits n=500 2x2 cv=3",
                     {"data": "digits", "n": 500, "d": 64, "grid": SMOKE_GRID})]
    return [Case("grid_search", "digits 3x3 cv=3",
                 {"data": "digits", "n": 1797, "d": 64, "grid": GRID})]


def predict_cases(suite: str) -> list[Case]:
    """``decision_function`` of RBF models (two Gaussian clouds, d = 20, C = 1) on new points."""
    n_train, n_new = (1000, 5000) if suite == "smoke" else (4000, 100_000)
    return [Case("predict", f"rbf n_train={n_train} n_new={n_new}",
                 {"n": n_train, "n_new": n_new, "d": 20})]


def _data(p: dict, warm: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The case's ``X, y`` (``warm``: a small problem of the same kind)."""
    from sklearn.datasets import load_breast_cancer, load_digits
    from sklearn.preprocessing import StandardScaler

    if p["data"] == "digits":
        X, y = load_digits(return_X_y=True)
    else:
        X, y = load_breast_cancer(return_X_y=True)
        X = StandardScaler().fit_transform(X)
    n = 100 if warm else p["n"]
    return np.ascontiguousarray(X[:n]), y[:n]


def _one_thread(calls: list, repeats: int, budget: float) -> list[Measured]:
    """:func:`~benchmarks.harness.measure_many` with BLAS limited to one thread."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        return measure_many(calls, repeats, budget)


def _pair_calls(make: Callable[[Any], Callable[[np.ndarray, np.ndarray], Any]],
                X: np.ndarray, y: np.ndarray, Xw: np.ndarray, yw: np.ndarray) -> list:
    """``(run, warm)`` of SVC and of MaxMarginClassifier, one thread each; ``make(estimator)``
    returns ``call(X, y)``."""
    from sklearn.svm import SVC

    from maxmargin import MaxMarginClassifier

    out = []
    for est in (SVC(), MaxMarginClassifier()):
        call = make(est)
        out.append((lambda call=call: call(X, y), lambda call=call: call(Xw, yw)))
    return out


def _rows(case: Case, measured: list[Measured], fill: Callable[[dict, Any], None]) -> list[dict]:
    """The SVC row (the reference) and the maxmargin row, filled by ``fill(row, value)``."""
    rows = [make_row(case, "sklearn.SVC", "peer", measured[0], params={"threads": 1}),
            make_row(case, "maxmargin.MaxMarginClassifier", "maxmargin", measured[1],
                     params={"threads": 1})]
    for row, m in zip(rows, measured, strict=True):
        if m.value is not None:
            fill(row, m.value)
    compare(rows, rows[0])
    return rows


def run_fit(case: Case, repeats: int, budget: float) -> list[dict]:
    """``SVC().fit`` and ``MaxMarginClassifier().fit`` (defaults: RBF, gamma ``scale``,
    C = 1) on the same data: training accuracy, the one-vs-one problems' iterations, support
    vectors and the agreement of the predictions."""
    X, y = _data(case.params)
    Xw, yw = _data(case.params, warm=True)
    measured = _one_thread(_pair_calls(lambda est: lambda A, b: est.fit(A, b), X, y, Xw, yw),
                           repeats, budget)
    predictions = [None if m.value is None else m.value.predict(X) for m in measured]

    def fill(row: dict, model: Any) -> None:
        row.update(status=_fit_status(model), iterations=int(np.sum(model.n_iter_)),
                   accuracy=float(np.mean(model.predict(X) == y)),
                   extra={"n_support": int(model.support_.size), "problems":
                          len(np.atleast_1d(model.intercept_))})
        if predictions[0] is not None:
            row["extra"]["agree_with_svc"] = float(np.mean(model.predict(X) == predictions[0]))

    return _rows(case, measured, fill)


def _fit_status(model: Any) -> str:
    """``optimal`` when every binary problem met its tolerance (SVC: ``fit_status_`` 0)."""
    return "optimal" if getattr(model, "fit_status_", 0) == 0 else "inaccurate"


def run_grid(case: Case, repeats: int, budget: float) -> list[dict]:
    """``GridSearchCV(estimator, grid, cv=3)`` with SVC and with MaxMarginClassifier (the
    same folds): the best parameters and the best mean accuracy of each."""
    from sklearn.model_selection import GridSearchCV

    X, y = _data(case.params)
    Xw, yw = _data(case.params, warm=True)
    grid = case.params["grid"]

    def make(est: Any) -> Callable[[np.ndarray, np.ndarray], Any]:
        return lambda A, b: GridSearchCV(est, grid, cv=3).fit(A, b)

    measured = _one_thread(_pair_calls(make, X, y, Xw, yw), repeats, budget)

    def fill(row: dict, search: Any) -> None:
        row.update(status="done", accuracy=float(search.best_score_),
                   extra={"best_params": dict(search.best_params_),
                          "fits": len(search.cv_results_["params"]) * 3})
        if measured[0].value is not None:
            row["extra"]["same_best"] = search.best_params_ == measured[0].value.best_params_

    rows = _rows(case, measured, fill)
    for row in rows:
        row["params"]["grid"] = grid
    return rows


def run_predict(case: Case, repeats: int, budget: float) -> list[dict]:
    """``decision_function`` of an SVC and a MaxMarginClassifier fitted on the same clouds
    (RBF, gamma ``scale``, C = 1; untimed), on the same new points: time, peak memory and the
    largest difference of the decision values (both fits stop at tol 1e-3)."""
    from sklearn.svm import SVC

    from maxmargin import MaxMarginClassifier

    p = case.params
    X, y = make_clouds(p["n"], p["d"], seed=p["n"])
    X_new, _ = make_clouds(p["n_new"], p["d"], seed=1)
    models = [est.fit(X, y) for est in (SVC(), MaxMarginClassifier())]
    calls = [(lambda m=m: m.decision_function(X_new), lambda m=m: m.decision_function(X_new[:100]))
             for m in models]
    measured = _one_thread(calls, repeats, budget)
    values = [m.value for m in measured]

    def fill(row: dict, dec: np.ndarray) -> None:
        model = models[0] if row["role"] == "peer" else models[1]
        row.update(status="done", extra={"n_support": int(model.support_.size)})
        if values[0] is not None:
            row["extra"]["max_abs_diff"] = float(np.max(np.abs(dec - values[0])))

    rows = _rows(case, measured, fill)
    for row in rows:
        row["params"].update(n_new=p["n_new"], kernel="rbf", C=1.0)
    return rows


def markdown(rows: list[dict]) -> str:
    """The tables of the three families (those measured)."""
    out = []
    body = [[ours["case"], peer["time_s"], ours["time_s"], ours["time_ratio"],
             ours["extra"].get("problems"), peer["iterations"], ours["iterations"],
             fmt(peer["accuracy"], ".4f"), fmt(ours["accuracy"], ".4f"),
             fmt(ours["extra"].get("agree_with_svc"), ".4f"), peer["extra"].get("n_support"),
             ours["extra"].get("n_support"), ours["status"]]
            for peer, ours in pairs(rows, "estimator")]
    if body:
        out.append(md_table(
            "MaxMarginClassifier().fit vs SVC().fit",
            ["data", "SVC s", "maxmargin s", "ratio", "problems", "SVC iter", "maxmargin iter",
             "SVC train acc", "maxmargin train acc", "same predictions", "SVC SVs",
             "maxmargin SVs", "status"],
            body,
            "Defaults of both (RBF, gamma `scale`, C = 1, tol 1e-3; one-vs-one), one thread "
            "each (BLAS limited to one, `n_jobs=None`); digits = scikit-learn's 8 x 8 digits "
            "(1,797 x 64, 10 classes: 45 problems), breast_cancer standardised. same "
            "predictions = fraction of training points both predict alike.",
        ))
    body = [[ours["case"], peer["time_s"], ours["time_s"], ours["time_ratio"],
             ours["extra"].get("fits"), fmt(peer["accuracy"], ".4f"),
             fmt(ours["accuracy"], ".4f"), peer["extra"].get("best_params"),
             ours["extra"].get("best_params")]
            for peer, ours in pairs(rows, "grid_search")]
    if body:
        out.append(md_table(
            "GridSearchCV over C and gamma: MaxMarginClassifier vs SVC",
            ["case", "SVC s", "maxmargin s", "ratio", "fits", "SVC best score",
             "maxmargin best score", "SVC best", "maxmargin best"],
            body,
            "`GridSearchCV(estimator, {C, gamma}, cv=3).fit` on digits (the same folds), one "
            "thread each; scores are mean cross-validated accuracy.",
        ))
    body = [[ours["case"], peer["time_s"], ours["time_s"], ours["time_ratio"],
             ours["extra"].get("n_support"), fmt(ours["extra"].get("max_abs_diff"), ".1e"),
             peer["peak_delta_mb"], ours["peak_delta_mb"]]
            for peer, ours in pairs(rows, "predict")]
    if body:
        out.append(md_table(
            "Prediction: decision_function of MaxMarginClassifier vs SVC",
            ["case", "SVC s", "maxmargin s", "ratio", "maxmargin SVs", "max abs d f",
             "SVC peak +MB", "maxmargin peak +MB"],
            body,
            "Models fitted on the same clouds (RBF, d = 20, C = 1, gamma `scale`, untimed); "
            "`decision_function` on the same new points, one thread each. max abs d f = the "
            "largest difference of the two models' decision values (both fits stop at tol "
            "1e-3).",
        ))
    return "\n".join(out)
