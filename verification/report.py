"""The validation report: Markdown, figures and machine-readable results, written atomically.

:func:`write_report` turns one :class:`~maxmargin.verification.suite.SuiteRun` into

* ``validation.md``: a header (versions, date, machine), a summary (pass/fail per area and per
  section), the failures, one table per section with a one-line title, and the figures;
* ``results.json`` (schema + rows) and ``results.csv`` (one line per row, the columns of
  :data:`~maxmargin.verification.suite.COLUMNS`);
* ``figures/*.png`` (matplotlib, Agg): SMO's KKT violation per iteration for the three
  working-set rules, Gilbert's and MDM's ``h_k = f_k - rho`` against the seed's O(1/k) bound,
  the perceptron's mistakes against ``(R / gamma)^2``, and the 2-D cases with the oracle's
  decision boundary, margins and support vectors.

The tables come from the rows alone; the figures from the rows and the runner's
:class:`~maxmargin.verification.suite.Artifacts`. Apart from the date in the Markdown header
and the ``runtime`` column of the JSON/CSV, the output is deterministic.

Atomicity: everything is first written into a fresh temporary directory beside ``out``; only
when all of it is complete are the files moved into ``out``, each by an atomic ``os.replace``
(figures first, ``validation.md`` last). A failure while building the report leaves the previous
report untouched. Only the report's own files are replaced (``validation.md``,
``results.json``, ``results.csv`` and the figures of :data:`FIGURES`): other files in ``out``,
such as the benchmarks' report of ``python -m benchmarks``, are left alone.
"""

from __future__ import annotations

import csv
import datetime as _dt
import json
import math
import os
import platform
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from maxmargin.verification.context import Artifacts
from maxmargin.verification.suite import SuiteRun
from maxmargin.verification.table import COLUMNS, SECTIONS, Row, rows_document

__all__ = ["write_report", "versions", "render_markdown", "FIGURES"]

#: The figures written (file names under ``figures/``) and their captions.
FIGURES: dict[str, str] = {
    "smo_convergence.png": "SMO: largest KKT violation m - M on the active set per iteration for "
    "the three working-set rules (log scale; a jump is the gradient rebuilt when shrinking "
    "ends; Platt's rule runs at tol 1e-3).",
    "gilbert_rate.png": "Gilbert and MDM: h_k = f_k - rho against Gilbert's bound "
    "2 D^2 / (rho (k + 1)) (log-log; rho from the oracle, D = diam(P) + diam(Q); records "
    "with h_k <= 0, i.e. at the oracle's accuracy, are not drawn).",
    "perceptron_bound.png": "Perceptron: mistakes against Novikoff's bound (R / gamma)^2; every "
    "point must lie below the line y = x.",
    "cases_2d.png": "2-D cases: the oracle's decision boundary f = 0 (solid), margins f = +-1 "
    "(dashed), support vectors circled.",
}

_PACKAGES = ("maxmargin", "numpy", "scipy", "cvxpy", "clarabel", "osqp", "numba", "matplotlib",
             "scikit-learn")


def versions() -> dict[str, str]:
    """Installed versions of maxmargin and its numerical dependencies, plus Python."""
    out = {}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    out["python"] = platform.python_version()
    return out


def _fmt(x: Any) -> str:
    if x is None:
        return ""
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        if math.isnan(x):
            return "-"
        return f"{x:.2e}"
    return str(x)


def _bounds_text(row: Row) -> str:
    return "; ".join(
        f"{b.name} {b.value:.4g} <= {b.bound:.4g}: {'holds' if b.holds else 'VIOLATED'}"
        for b in row.bounds
    )


def _alpha_cell(r: Row) -> Any:
    if r.alpha_unique is None:
        return "-"
    return r.alpha_error if r.alpha_unique else "not unique"


#: Table columns per kind of section (row attributes, or the cell functions of ``_CELLS``).
_TABLES: dict[str, tuple[str, ...]] = {
    "compare": ("case", "method", "oracle", "tolerances", "status", "iterations",
                "objective_error", "w_error", "b_error", "alpha", "decision_error", "kkt_max",
                "duality_gap", "bounds", "verdict"),
    "theorem": ("case", "method", "status", "iterations", "bounds", "verdict"),
    "infeasibility": ("case", "method", "status", "expected_status", "iterations", "verdict"),
}
_KIND = {"perceptron": "theorem", "theorems": "theorem", "infeasibility": "infeasibility"}
_CELLS: dict[str, Callable[[Row], Any]] = {
    "alpha": _alpha_cell,
    "bounds": _bounds_text,
    "iterations": lambda r: r.iterations if r.iterations >= 0 else None,
}
_HEADERS = {"tolerances": "tol", "iterations": "iter", "objective_error": "objective",
            "w_error": "w", "b_error": "b", "decision_error": "decision", "kkt_max": "KKT",
            "duality_gap": "gap", "bounds": "theorems", "expected_status": "expected"}


def _table(rows: Sequence[Row], columns: tuple[str, ...]) -> list[str]:
    def cell(row: Row, column: str) -> str:
        value = _CELLS[column](row) if column in _CELLS else getattr(row, column)
        return _fmt(value).replace("|", "\\|")

    lines = ["| " + " | ".join(_HEADERS.get(c, c) for c in columns) + " |",
             "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(cell(r, c) for c in columns) + " |" for r in rows]
    return lines


def _counts_table(rows: Sequence[Row], key: str) -> list[str]:
    total, fails = Counter(), Counter()
    for r in rows:
        total[getattr(r, key)] += 1
        fails[getattr(r, key)] += not r.passed
    lines = [f"| {key} | rows | pass | fail |", "|---|---|---|---|"]
    lines += [f"| {k} | {n} | {n - fails[k]} | {fails[k]} |" for k, n in total.items()]
    return lines


def _presets_table() -> list[str]:
    """The tolerance presets (limits on the relative errors of ``cross_check``)."""
    from maxmargin.verification.tolerances import PRESETS

    fields = ("objective", "w", "decision", "b", "alpha", "kkt", "gap")
    lines = ["Tolerance presets (limits of the relative errors; alpha also allows for the "
             "conditioning of the margin set, see `cross_check`):", "",
             "| preset | " + " | ".join(fields) + " | KKT residuals not judged |",
             "|---" * (len(fields) + 2) + "|"]
    for t in PRESETS.values():
        cells = " | ".join(f"{getattr(t, f):.0e}" for f in fields)
        lines.append(f"| {t.name} | {cells} | {', '.join(t.kkt_exclude) or '-'} |")
    return lines


def render_markdown(run: SuiteRun, info: dict[str, str], figures: Sequence[str]) -> str:
    """The Markdown of the report (``info``: header fields; ``figures``: files written)."""
    rows = run.rows
    n_fail = sum(not r.passed for r in rows)
    lines = ["# maxmargin validation report", "",
             "Generated by `maxmargin report` from the results table (`results.json`, "
             "`results.csv`). Tolerance presets: `maxmargin/tolerances.py`; cases: "
             "`verification/cases.py`.", "",
             "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in info.items()]
    lines += ["", "## Summary", "",
              f"{len(rows)} checks on {len({r.case for r in rows})} cases: "
              f"**{len(rows) - n_fail} pass, {n_fail} fail**.", ""]
    lines += _counts_table(rows, "area") + [""] + _counts_table(rows, "section") + [""]
    lines += _presets_table() + [""]
    failed = [r for r in rows if not r.passed]
    if failed:
        lines += ["## Failures", "", "| case | method | reasons |", "|---|---|---|"]
        lines += [f"| {r.case} | {r.method} | {r.reasons.replace('|', '/')} |" for r in failed]
        lines.append("")
    for section, title in SECTIONS.items():
        chosen = [r for r in rows if r.section == section]
        if not chosen:
            continue
        lines += [f"## {title}", ""]
        lines += _table(chosen, _TABLES[_KIND.get(section, "compare")]) + [""]
    if figures:
        lines += ["## Figures", ""]
        for name in figures:
            lines += [f"![{FIGURES[name]}](figures/{name})", "", FIGURES[name], ""]
    return "\n".join(lines).rstrip() + "\n"


# --- figures ----------------------------------------------------------------------------------
def _new_figure(ncols: int, nrows: int = 1, size: float = 4.2) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(size * ncols, size * 0.85 * nrows), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Any, path: Path) -> None:
    fig.savefig(path, dpi=110, metadata={"Software": None})


def _cases_with(hist: dict, methods: Sequence[str], prefer: Sequence[str], most: int) -> list:
    cases = [c for c in dict.fromkeys(k[0] for k in hist) if all((c, m) in hist for m in methods)]
    ordered = [c for c in prefer if c in cases] + [c for c in cases if c not in prefer]
    return ordered[:most]


def _panel_title(art: Artifacts, case: str) -> str:
    """``case`` with its n, C and kernel (for every panel)."""
    meta = art.cases.get(case)
    if meta is None:
        return case
    C = "hard margin" if meta["C"] is None else f"C={meta['C']:g}"
    return f"{case}\nn={meta['n']}, {C}, {meta['kernel']}"


#: The stopping tolerances of the suite's SMO rows (verification/suite.py), drawn on the plot.
SMO_TOLERANCES = {"smo/wss2": 1e-6, "smo/wss1": 1e-6, "smo/platt": 1e-3}


def _fig_smo(art: Artifacts, path: Path) -> bool:
    rules = ("smo/wss2", "smo/wss1", "smo/platt")
    cases = _cases_with(art.histories, rules, ("heart_scale", "circle_rbf"), 2)
    if not cases:
        return False
    fig = _new_figure(len(cases))
    for ax, case in zip(np.atleast_1d(fig.subplots(1, len(cases))), cases, strict=True):
        for rule in rules:
            h = art.histories[(case, rule)]
            v = h["violation"]
            ok = v > 0
            ax.semilogy(h["iteration"][ok], v[ok], label=rule, lw=1.2)
        for tol in sorted(set(SMO_TOLERANCES.values())):
            users = "/".join(r.split("/")[1] for r, t in SMO_TOLERANCES.items() if t == tol)
            ax.axhline(tol, color="k", ls=":", lw=1.0)
            ax.annotate(f"tol {tol:g} ({users})", (0.99, tol), xycoords=("axes fraction", "data"),
                        ha="right", va="bottom", fontsize=7)
        ax.set(xlabel="iteration", ylabel="max KKT violation m - M")
        ax.set_title(_panel_title(art, case), fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    _save(fig, path)
    return True


def _fig_gilbert(art: Artifacts, path: Path) -> bool:
    longest = sorted((k[0] for k in art.histories if k[1] == "gilbert"),
                     key=lambda c: -len(art.histories[(c, "gilbert")]["steps"]))
    prefer = ["separable_n60_d5", "circle_poly2", *longest]
    cases = _cases_with(art.histories, ("gilbert", "mdm"), prefer, 2)
    if not cases:
        return False
    fig = _new_figure(len(cases))
    for ax, case in zip(np.atleast_1d(fig.subplots(1, len(cases))), cases, strict=True):
        for method, style in (("gilbert", "-"), ("mdm", "o-")):
            h = art.histories[(case, method)]
            k = h["steps"] + 1.0
            ok = h["h"] > 0
            ax.loglog(k[ok], h["h"][ok], style, label=f"{method}: h_k = f_k - rho", lw=1.2,
                      markersize=3)
        h = art.histories[(case, "gilbert")]
        ax.loglog(h["steps"] + 1.0, h["bound"], "k--", label="2 D^2 / (rho (k + 1))", lw=1.0)
        ax.set(xlabel="k (iterate number)", ylabel="h_k")
        ax.set_title(_panel_title(art, case), fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    _save(fig, path)
    return True


def _fig_perceptron(rows: Sequence[Row], path: Path) -> bool:
    """Mistakes over Novikoff's bound ``(R / gamma)^2``, one bar per case (the theorem says
    every bar ends left of 1); the bound itself is printed at the end of each bar."""
    points = sorted(((r.case, b.bound, b.value) for r in rows for b in r.bounds
                     if b.name == "mistake_bound" and math.isfinite(b.bound) and b.bound > 0),
                    key=lambda p: p[2] / p[1])
    if not points:
        return False
    fig = _new_figure(1, size=6.0)
    fig.set_figheight(max(2.5, 0.28 * len(points) + 1.2))
    ax = fig.subplots()
    ratio = np.array([max(p[2], 0.5) / p[1] for p in points])
    pos = np.arange(len(points))
    ax.barh(pos, ratio, color="C0", height=0.6)
    for k, p in enumerate(points):
        ax.annotate(f"{p[2]:g} of {p[1]:.3g}", (ratio[k], k), xytext=(3, 0),
                    textcoords="offset points", va="center", fontsize=7)
    ax.axvline(1.0, color="k", ls="--", lw=1.0, label="the bound (mistakes = (R / gamma)^2)")
    ax.set_xscale("log")
    ax.set_xlim(min(float(ratio.min()) / 3, 0.1), 3.0)
    ax.set_yticks(pos, [p[0] for p in points], fontsize=7)
    ax.set(xlabel="perceptron mistakes / (R / gamma)^2", ylabel="case",
           title="Novikoff's bound: mistakes <= (R / gamma)^2")
    ax.grid(True, axis="x", which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    _save(fig, path)
    return True


def _no_separator_caption(claim: dict[str, str] | None) -> str:
    """Why a panel shows no separator, from the oracle's own answer (never assumed)."""
    if claim is None:
        return "(no separator drawn: the oracle was not run)"
    if claim["status"] == "infeasible":
        return "(no separator: the oracle certifies the hard margin infeasible)"
    return f"(no separator drawn: the oracle's status is {claim['status']!r})"


def _fig_cases(art: Artifacts, path: Path) -> bool:
    names = list(art.pictures)
    if not names:
        return False
    ncols = min(4, len(names))
    nrows = math.ceil(len(names) / ncols)
    fig = _new_figure(ncols, nrows, size=3.6)
    axes = np.atleast_1d(fig.subplots(nrows, ncols)).ravel()
    for ax, name in zip(axes, names, strict=False):
        p = art.pictures[name]
        X, y = p["X"], p["y"]
        if p["F"] is not None:
            ax.contourf(p["gx"], p["gy"], p["F"], levels=[-1e300, 0, 1e300],
                        colors=["#f4d6d6", "#d6e2f4"], alpha=0.6)
            ax.contour(p["gx"], p["gy"], p["F"], levels=[-1, 0, 1], colors="k",
                       linestyles=["--", "-", "--"], linewidths=[0.8, 1.4, 0.8])
        ax.scatter(X[y > 0, 0], X[y > 0, 1], c="C0", s=18, marker="o", label="+1")
        ax.scatter(X[y < 0, 0], X[y < 0, 1], c="C3", s=18, marker="s", label="-1")
        sv, at_C = p["sv"], p["at_C"]
        ax.scatter(X[sv, 0], X[sv, 1], s=90, facecolors="none", edgecolors="k", lw=1.0,
                   label="support vectors, 0 < alpha < C")
        if at_C.size:
            ax.scatter(X[at_C, 0], X[at_C, 1], s=110, marker="D", facecolors="none",
                       edgecolors="darkorange", lw=1.2, label="alpha = C")
        title = _panel_title(art, name) if name in art.cases else name
        if p["F"] is None:
            title += "\n" + _no_separator_caption(p.get("oracle"))
        ax.set_title(title, fontsize=8)
        ax.set(xlim=(p["gx"].min(), p["gx"].max()), ylim=(p["gy"].min(), p["gy"].max()),
               xlabel="x1", ylabel="x2")
        ax.set_aspect("equal", adjustable="box")
        ax.tick_params(labelsize=7)
    for ax in axes[len(names):]:
        ax.remove()  # no empty panels
    handles = {}
    for ax in axes[: len(names)]:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, h)
    fig.legend(list(handles.values()), list(handles), loc="outside lower center",
               ncols=len(handles), fontsize=7)
    _save(fig, path)
    return True


# --- writing ----------------------------------------------------------------------------------
def _write_results(run: SuiteRun, directory: Path) -> None:
    payload = rows_document(run.rows, run.suite, run.pattern) | {"versions": versions()}
    (directory / "results.json").write_text(json.dumps(payload, indent=1) + "\n")
    with open(directory / "results.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow([n for n, _ in COLUMNS])
        for r in run.rows:
            d = r.to_dict()
            d["bounds"] = _bounds_text(r)
            writer.writerow(["" if d[n] is None else d[n] for n, _ in COLUMNS])


def _header(run: SuiteRun) -> dict[str, str]:
    v = versions()
    info = {name: v[name] for name in _PACKAGES}
    info["python"] = v["python"]
    info["date"] = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    info["machine"] = f"{platform.platform()}, {platform.machine()}, {os.cpu_count()} CPUs"
    cases = len({r.case for r in run.rows})
    pattern = "" if run.pattern is None else f", cases matching {run.pattern!r}"
    info["suite"] = f"{run.suite}{pattern}: {cases} cases, {len(run.rows)} rows"
    info["elapsed"] = f"{run.elapsed:.1f} s"
    return info


def write_report(run: SuiteRun, out: str | os.PathLike[str] = "reports") -> Path:
    """Write the report of ``run`` into the directory ``out`` (atomically, see the module
    docstring) and return its path."""
    if not isinstance(run, SuiteRun):
        raise ValueError(f"`run` must be a SuiteRun; got {type(run).__name__}.")
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-tmp-", dir=out.parent))
    try:
        (tmp / "figures").mkdir()
        info = _header(run)
        makers = {
            "smo_convergence.png": lambda p: _fig_smo(run.artifacts, p),
            "gilbert_rate.png": lambda p: _fig_gilbert(run.artifacts, p),
            "perceptron_bound.png": lambda p: _fig_perceptron(run.rows, p),
            "cases_2d.png": lambda p: _fig_cases(run.artifacts, p),
        }
        figures = [name for name, make in makers.items() if make(tmp / "figures" / name)]
        _write_results(run, tmp)
        (tmp / "validation.md").write_text(render_markdown(run, info, figures))
        _install(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _install(new: Path, out: Path) -> None:
    """Move the finished report files from ``new`` into ``out`` by ``os.replace``; a figure of
    :data:`FIGURES` that this run did not draw is removed. Other files are left alone."""
    drawn = [name for name in FIGURES if (new / "figures" / name).exists()]
    if drawn:  # no empty figures/ folder when nothing was drawn (e.g. a data run)
        (out / "figures").mkdir(exist_ok=True)
    for name in FIGURES:
        source, target = new / "figures" / name, out / "figures" / name
        if source.exists():
            os.replace(source, target)
        elif target.exists():
            target.unlink()
    if not drawn and (out / "figures").is_dir() and not any((out / "figures").iterdir()):
        (out / "figures").rmdir()
    for name in ("results.json", "results.csv", "validation.md"):
        os.replace(new / name, out / name)
