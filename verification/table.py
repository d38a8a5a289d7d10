"""The results table: its columns, its rows, and the one JSON document they are saved as.

One :class:`Row` per (case x check) with the fixed schema :data:`COLUMNS`; :data:`SECTIONS`
are the report's tables. :func:`write_rows` is the only writer of the results document
(``maxmargin verify --json``, the streamed results of a sweep, the report's ``results.json``):
``{"schema", "suite", "pattern", "rows": [...]}``, written atomically; :func:`load_rows` reads it
back (``--resume``).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from maxmargin._io import atomic_write_text
from maxmargin.verification.bounds import BoundCheck

__all__ = ["COLUMNS", "SECTIONS", "Row", "row_from_dict", "rows_document", "write_rows",
           "load_rows"]

#: The results table's columns, in order, with their meaning (the schema of results.json/csv).
COLUMNS: tuple[tuple[str, str], ...] = (
    ("case", "case name (verification/cases.py)"),
    ("area", "the case's area: worked, synthetic, degenerate, scale, kernel, infeasible, real, "
             "strings, theorems, nu, random, data"),
    ("section", "report table: consensus, smo, nearest_point, perceptron, kernels, nu, "
                "infeasibility, theorems"),
    ("method", "the method checked (candidate)"),
    ("oracle", "what it is checked against (a CVXPY oracle, a hand answer or a theorem)"),
    ("tolerances", "the tolerance preset used (maxmargin/tolerances.py)"),
    ("status", "the candidate's status"),
    ("expected_status", "the status it must have"),
    ("iterations", "iterations (or perceptron mistakes); -1 when not applicable"),
    ("runtime", "seconds (the only non-deterministic column)"),
    ("objective_error", "|D_c - D_o| / |D_o|"),
    ("w_error", "||w_c - w_o|| / ||w_o|| (linear kernel)"),
    ("b_error", "|b_c - b_o| / max(1, |b_o|), or the distance to the KKT interval of b"),
    ("alpha_error", "max |alpha_c - alpha_o| / max alpha_o, where alpha is unique"),
    ("alpha_unique", "whether the oracle shows alpha is unique (empty when not compared)"),
    ("decision_error", "max |f_c - f_o| / max(1, max |f_o|) on the training points"),
    ("kkt_max", "the candidate's largest pointwise KKT residual (certified rows: its "
                "certificate's maximal KKT violation m - M)"),
    ("duality_gap", "the candidate's relative duality gap |P - D| / |P| (certified "
                    "rows: (P - D) / |P|, P minimised over b)"),
    ("bounds", "theorem checks: name, value, bound, holds"),
    ("verdict", "pass or fail"),
    ("reasons", "why a row failed ('; '-separated)"),
    ("exception", "type and last line of an exception raised by the method, else empty"),
)

#: Report sections (one table each), in order, with their one-line titles.
SECTIONS: dict[str, str] = {
    "consensus": "Oracle consensus: OSQP, primal forms and hand answers against the Clarabel dual",
    "smo": "SMO (three working-set rules) against the oracle",
    "nearest_point": "Gilbert, MDM and Wolfe (nearest points of the class hulls) against the "
                     "oracle",
    "perceptron": "Perceptron mistakes against Novikoff's bound (R / gamma)^2",
    "kernels": "Kernel cases (poly, RBF, strings, precomputed, callables): every method against "
               "the oracle",
    "infeasibility": "Hard margin on non-separable data: every method must say infeasible",
    "theorems": "Theorems: support vectors <= d + 1, kernel = explicit feature map (quadratic, "
                "strings), the perceptron's forms, one kernel engine = the built-ins, the nu "
                "theorems (nu-property, nu <-> C, nu_max, w = 0, the centroid)",
    "nu": "nu-SVC and one-class SVM: SMO and the primal oracle against the CVXPY dual oracle, "
          "judged by the nu certificates",
    "random": "Certified answers (hard problems, random campaigns): every answer labelled "
              "optimal meets its float64 certificate and weak duality against the oracle",
}


@dataclass(frozen=True)
class Row:
    """One line of the results table (fields = :data:`COLUMNS`)."""

    case: str
    area: str
    section: str
    method: str
    oracle: str
    tolerances: str
    status: str
    expected_status: str
    iterations: int
    runtime: float
    objective_error: float
    w_error: float
    b_error: float
    alpha_error: float
    alpha_unique: bool | None
    decision_error: float
    kkt_max: float
    duality_gap: float
    bounds: tuple[BoundCheck, ...]
    verdict: str
    reasons: str
    exception: str

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: NaN -> None, bounds -> list of {name, value, bound, holds}."""
        out: dict[str, Any] = {}
        for name, _ in COLUMNS:
            value = getattr(self, name)
            if name == "bounds":
                value = [
                    {"name": b.name, "value": _json_float(b.value),
                     "bound": _json_float(b.bound), "holds": b.holds}
                    for b in value
                ]
            elif isinstance(value, float):
                value = _json_float(value)
            out[name] = value
        return out


def _json_float(x: float) -> float | None | str:
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(x)


def _float(value: Any) -> float:
    if value is None:
        return math.nan
    if value in ("inf", "-inf"):
        return math.inf if value == "inf" else -math.inf
    return float(value)


def row_from_dict(d: dict[str, Any]) -> Any:
    """A :class:`~maxmargin.verification.suite.Row` from its JSON form (``Row.to_dict``)."""
    values = {}
    for name, _ in COLUMNS:
        value = d.get(name)
        if name == "bounds":
            value = tuple(BoundCheck(b["name"], _float(b["value"]), _float(b["bound"]),
                                     bool(b["holds"])) for b in value or ())
        elif name in ("iterations",):
            value = int(value) if value is not None else -1
        elif name == "alpha_unique":
            value = None if value is None else bool(value)
        elif name in ("case", "area", "section", "method", "oracle", "tolerances", "status",
                      "expected_status", "verdict", "reasons", "exception"):
            value = "" if value is None else str(value)
        else:
            value = _float(value)
        values[name] = value
    return Row(**values)


def load_rows(path: str | os.PathLike[str]) -> list[Any]:
    """The rows of a results file (``maxmargin verify --json``); ``ValueError`` naming the file
    when it is not one."""
    path = Path(path)
    try:
        payload = json.loads(path.read_text())
        return [row_from_dict(r) for r in payload["rows"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"`resume` {str(path)!r} is not a results file of maxmargin verify "
                         f"--json ({type(exc).__name__}: {exc}).") from None


def rows_document(rows: Sequence[Row], suite: str, pattern: str | None) -> dict[str, Any]:
    """The results document: the schema (:data:`COLUMNS`), what was run and the rows."""
    return {"schema": [{"name": n, "description": d} for n, d in COLUMNS],
            "suite": suite, "pattern": pattern, "rows": [r.to_dict() for r in rows]}


def write_rows(path: str | os.PathLike[str], rows: Sequence[Row], suite: str,
               pattern: str | None) -> None:
    """The results document (:func:`rows_document`) written atomically (a temporary file, then
    a rename): an interrupted run leaves the previous complete file, never half of one."""
    text = json.dumps(rows_document(rows, suite, pattern), indent=1) + "\n"
    atomic_write_text(Path(path), text)
