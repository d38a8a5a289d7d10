"""Markdown tables and figure helpers shared by the families' reports."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def find_rows(rows: list[dict], **match: Any) -> list[dict]:
    """The rows whose fields equal every ``match``."""
    return [r for r in rows if all(r.get(k) == v for k, v in match.items())]


def peak_delta(row: dict) -> float | None:
    """The row's peak memory increase, measured alone in a fresh process where that was done."""
    return row["extra"].get("isolated_peak_delta_mb", row.get("peak_delta_mb"))


def fmt(x: Any, spec: str = ".3g") -> str:
    """A table cell: ``-`` for None, floats in ``spec``."""
    if x is None:
        return "-"
    if isinstance(x, float):
        return format(x, spec)
    return str(x)


def md_table(title: str, header: Sequence[str], body: list[list[Any]], note: str = "") -> str:
    """A titled Markdown table with an optional note above it."""
    lines = [f"### {title}", ""]
    if note:
        lines += [note, ""]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join("---" for _ in header) + "|")
    lines += ["| " + " | ".join(fmt(c) for c in row) + " |" for row in body]
    if not body:
        lines.append("| " + " | ".join("-" for _ in header) + " |")
    return "\n".join(lines) + "\n"


def pairs(rows: list[dict], family: str) -> list[tuple[dict, dict]]:
    """(peer, maxmargin) rows of each case of a two-method family, in run order."""
    out = []
    for case in dict.fromkeys(r["case"] for r in rows if r["benchmark"] == family):
        peer = find_rows(rows, benchmark=family, case=case, role="peer")
        ours = find_rows(rows, benchmark=family, case=case, role="maxmargin")
        if peer and ours:
            out.append((peer[0], ours[0]))
    return out


def md_multi(rows: list[dict], family: str, title: str, note: str, tol_col: str) -> str:
    """The table of a family with several methods per case (``smo_cvxpy``, ``hulls``)."""
    body = []
    for r in find_rows(rows, benchmark=family):
        gap = r["extra"].get("gap_reached") if family == "hulls" else None
        body.append(
            [
                r["case"],
                r["method"],
                r["params"].get(tol_col),
                r["status"],
                r["iterations"],
                r["time_s"],
                r["time_ratio"],
                fmt(r["objective"], ".10g") if family == "hulls" else fmt(r["objective"], ".8g"),
                fmt(r["rel_objective_diff"], ".1e"),
                fmt(gap, ".1e") if family == "hulls" else fmt(r["b_diff"], ".1e"),
                r["peak_delta_mb"],
            ]
        )
    last = "gap reached" if family == "hulls" else "abs db"
    obj = "distance" if family == "hulls" else "D"
    return md_table(
        title,
        [
            "case",
            "method",
            tol_col,
            "status",
            "iter",
            "time s",
            "ratio",
            obj,
            f"rel d{obj}",
            last,
            "peak +MB",
        ],
        body,
        note,
    )


def decorate(ax: Any, title: str, xlabel: str) -> None:
    """Title, axis labels, grid and legend of a timing panel."""
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("time (s), best of k")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)


def panel_grid(plt: Any, count: int, width: float = 4.4, height: float = 3.6) -> tuple[Any, list]:
    """A figure of ``count`` panels, at most three a row (readable at a page's width: about
    1,450 pixels at the reports' 110 dpi), and its axes in reading order; extra cells removed."""
    ncols = min(3, count)
    nrows = -(-count // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)
    flat = list(axes.ravel())
    for ax in flat[count:]:
        ax.remove()
    return fig, flat[:count]
