"""Family ``perceptron``: ``perceptron`` vs scikit-learn ``Perceptron`` for the same epochs."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.data import make_separable
from benchmarks.harness import Case, compare, join_messages, make_row, measure, measure_many
from benchmarks.tables import fmt, md_table, pairs


def cases(suite: str) -> list[Case]:
    """The suite's separable data sets (``n``, ``d``, margin): d = 20, and d = 100 at the
    largest n (wider rows: the dot products dominate)."""
    sizes = {"smoke": [(2000, 20)]}.get(
        suite, [(10_000, 20), (30_000, 20), (100_000, 20), (100_000, 100)])
    # margin 0.01: hundreds of epochs (Novikoff's bound (R / margin)^2 is ~3e5 mistakes)
    margin = 0.03 if suite == "smoke" else 0.01
    return [
        Case("perceptron", f"n={n}" + ("" if d == 20 else f" d={d}"),
             {"n": n, "d": d, "margin": margin, "max_epochs": 5000})
        for n, d in sizes
    ]


def run(case: Case, repeats: int, budget: float) -> list[dict]:
    """maxmargin's perceptron, then scikit-learn's for the same number of epochs."""
    from sklearn.linear_model import Perceptron

    from maxmargin.algorithms.perceptron import perceptron

    p = case.params
    X, y = make_separable(p["n"], p["d"], seed=p["n"], margin=p["margin"])
    Xw, yw = make_separable(100, p["d"], seed=1, margin=p["margin"])

    def ours(A: np.ndarray, b: np.ndarray) -> Callable[[], Any]:
        return lambda: perceptron(A, b, eta=1.0, max_epochs=p["max_epochs"], bias=True)

    # one untimed run tells the epochs E that sklearn (no stop-on-a-clean-pass rule) is given
    first = measure(ours(X, y), ours(Xw, yw), 1, 0.0)
    epochs = first.value.epochs if first.value is not None else p["max_epochs"]

    def peer(A: np.ndarray, b: np.ndarray) -> Callable[[], Any]:
        return lambda: Perceptron(
            shuffle=False, tol=None, max_iter=epochs, eta0=1.0, alpha=0.0, fit_intercept=True
        ).fit(A, b)

    m_peer, m_ours = measure_many([(peer(X, y), peer(Xw, yw)), (ours(X, y), None)], repeats, budget)
    m_ours.warmup_s = first.warmup_s
    m_ours.message = join_messages(first.message, m_ours.message)
    res = m_ours.value
    params = {"epochs": epochs, "eta": 1.0, "margin": p["margin"]}
    row = make_row(case, "maxmargin.perceptron", "maxmargin", m_ours, params=params)
    ref = make_row(case, "sklearn.Perceptron", "peer", m_peer, params=dict(params))
    if res is not None:
        acc = float(np.mean(res.predict(X) == y))
        row.update(
            status=res.status,
            iterations=res.epochs,
            b=res.b,
            accuracy=acc,
            objective=int(round((1.0 - acc) * len(y))),
            extra={"mistakes": res.mistakes, "converged": res.converged},
        )
    if m_peer.value is not None:
        clf = m_peer.value
        acc = float(np.mean(clf.predict(X) == y))
        ref.update(
            status="done",
            iterations=int(clf.n_iter_),
            b=float(clf.intercept_[0]),
            accuracy=acc,
            objective=int(round((1.0 - acc) * len(y))),
        )
        if res is not None:
            row["extra"]["w_diff"] = float(np.linalg.norm(res.w - clf.coef_[0]))
    compare([ref, row], ref)
    row["rel_objective_diff"] = None  # training errors are compared as counts, not relatively
    return [ref, row]


def markdown(rows: list[dict]) -> str:
    """The perceptron table."""
    margins = ", ".join(
        sorted({f"{r['params']['margin']:g}" for _, r in pairs(rows, "perceptron")})
    )
    body = []
    for peer, ours in pairs(rows, "perceptron"):
        body.append(
            [
                ours["n"],
                ours["params"].get("epochs"),
                peer["time_s"],
                ours["time_s"],
                ours["time_ratio"],
                peer["objective"],
                ours["objective"],
                fmt(ours["extra"].get("w_diff"), ".1e"),
                ours["extra"].get("mistakes"),
                ours["status"],
            ]
        )
    return md_table(
        "Perceptron vs scikit-learn Perceptron",
        [
            "n",
            "epochs E",
            "sklearn s",
            "maxmargin s",
            "ratio",
            "sklearn errors",
            "maxmargin errors",
            "norm dw",
            "mistakes",
            "status",
        ],
        body,
        f"Separable data (margin {margins}), d = 20 unless named, cyclic order, eta = 1, w = 0, "
        "b = 0. sklearn: "
        "`Perceptron(shuffle=False, tol=None, max_iter=E, eta0=1, alpha=0)` with E = the epochs "
        "maxmargin needed (sklearn has no stop-on-a-clean-pass rule); errors = training errors "
        "after training; norm dw = ||w_maxmargin - coef_||.",
    )

