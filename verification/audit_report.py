"""The audit report: ``reports/audit.md`` and ``reports/audit.json`` from audit runs.

Written by ``maxmargin audit --solver ... --report DIR`` (:func:`write_report`): a header
(versions, machine, the command), the rules, then for each run (the full catalogue, the random
campaign) the qpbenchmark-style summary per preset and the findings per solver, generated from
the rows: the wrong answers with the rule they break and how far off they are (``m - M`` or the
gap, the objective's relative distance from the oracle's, the decision values' largest relative
difference), the errors (time-outs), and the answers called converged that miss the tight
preset without being wrong. Every row is in the JSON document.

``--problem nu-svc|one-class`` (:mod:`.audit_nu`) writes its own section of ``audit.md``,
between the lines :func:`_markers` gives, and ``audit-PROBLEM.json``; each problem's report
keeps the other problems' sections of the file.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
import os
import platform
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from maxmargin.verification.audit import (
    AUDIT_COLUMNS,
    PRESETS,
    REFERENCE,
    SHIFT_S,
    WRONG_PRESET,
    AuditRun,
    Summary,
    summarise,
)
from maxmargin.verification.report import versions
from maxmargin.verification.table import COLUMNS, Row

__all__ = ["write_report", "render_markdown", "findings", "payload", "summary_table"]

#: Wrong answers listed by name per solver and run (the rest are counted; all are in the JSON).
LISTED = 12
_PACKAGES = ("maxmargin", "numpy", "scipy", "cvxpy", "clarabel", "scikit-learn")


def summary_table(summaries: Sequence[Summary], reference: str = REFERENCE) -> list[str]:
    """The qpbenchmark-style summary as Markdown table lines (run times relative to
    ``reference``'s)."""
    lines = ["| solver | preset | cases | success | correct | wrong | errors | worst m-M / gap "
             f"| time vs {reference} (shifted geo. mean) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for s in summaries:
        lines.append(f"| {s.solver} | {s.preset} ({PRESETS[s.preset]:g}) | {s.cases} | "
                     f"{100 * s.success:.1f} % | {100 * s.correct:.1f} % | {s.wrong} | "
                     f"{s.errors} | {s.worst:.3g} | {s.time_ratio:.2f} |")
    return lines


def payload(run: AuditRun) -> dict[str, Any]:
    """The JSON document of ``--json``: the suite's (schema, suite, pattern, rows; the schema
    with :data:`AUDIT_COLUMNS`' meanings) plus the problem, the solvers, the presets and the
    summary."""

    return {"schema": [{"name": n, "description": AUDIT_COLUMNS.get(n, d)} for n, d in COLUMNS],
            "suite": run.suite, "pattern": run.pattern, "problem": run.problem,
            "rows": [r.to_dict() for r in run.rows],
            "solvers": {name: run.title(name) for name in run.peers},
            "presets": {p: PRESETS[p] for p in run.presets},
            "summary": [{k: (None if isinstance(v, float) and v != v else v)
                         for k, v in dataclasses.asdict(s).items()} for s in summarise(run)]}


def _num(x: float) -> str:
    return "-" if x != x else f"{x:.3g}"


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _measure(r: Row) -> float:
    return r.duality_gap if r.tolerances.startswith("gap") else r.kkt_max


def _wrong_line(r: Row) -> str:
    preset = r.method.rsplit("/", 1)[1]
    how = r.reasons.removeprefix("wrong answer: ")
    return (f"`{r.case}` ({preset}): {how}; objective {_num(r.objective_error)} from the "
            f"oracle's (relative), decision values {_num(r.decision_error)} off")


def findings(run: AuditRun, solver: str) -> list[str]:
    """Markdown bullet lines stating what ``solver`` did in ``run``."""
    rows = [r for r in run.rows if r.method.rsplit("/", 1)[0] == solver]
    taken = sorted({r.case for r in rows if r.verdict != "skip"})
    cases = len({r.case for r in rows})
    title = run.title(solver)
    out = [f"- **{solver}** -- {title}: took {len(taken)} of {cases} cases "
           f"({len(rows) - sum(r.verdict == 'skip' for r in rows)} rows)."]
    wrong = sorted((r for r in rows if r.verdict == "fail"), key=_measure, reverse=True)
    if wrong:
        on = len({r.case for r in wrong})
        limit = PRESETS[WRONG_PRESET]
        marginal = sum(r.tolerances.startswith("kkt") and r.kkt_max < 2 * limit for r in wrong)
        note = (f"; {marginal} of them marginal, m - M below {2 * limit:g}" if marginal else "")
        out.append(f"  - **{_count(len(wrong), 'wrong answer')}** on {_count(on, 'case')} "
                   f"(called converged, refuted at {WRONG_PRESET} {limit:g}{note}), worst "
                   "first:")
        out += [f"    - {_wrong_line(r)}" for r in wrong[:LISTED]]
        if len(wrong) > LISTED:
            out.append(f"    - ... and {len(wrong) - LISTED} more (audit.json)")
    else:
        out.append("  - no wrong answers.")
    errors = [r for r in rows if r.verdict == "error"]
    if errors:
        listed = ", ".join(f"`{r.case}` ({r.method.rsplit('/', 1)[1]}: "
                           f"{r.reasons[:80]})" for r in errors[:LISTED])
        out.append(f"  - {_count(len(errors), 'error')} (raised, timed out or died; not wrong "
                   f"answers): {listed}" + (" ..." if len(errors) > LISTED else ""))
    honest = [r for r in rows if r.verdict == "pass" and r.status not in ("optimal",)
              and r.expected_status != "infeasible"]
    if honest:
        out.append(f"  - {_count(len(honest), 'answer')} it did not call converged (honest: "
                   "status "
                   f"{', '.join(sorted({r.status for r in honest}))}), "
                   f"{sum(r.expected_status == 'optimal' for r in honest)} of them certified "
                   "anyway.")
    short = [r for r in rows if r.verdict == "pass" and r.status == "optimal"
             and r.expected_status == "inaccurate"]
    if short:
        worst = max(short, key=_measure)
        out.append(f"  - {_count(len(short), 'answer')} called converged that miss their preset "
                   "but are "
                   f"within the {WRONG_PRESET} one (not wrong); worst `{worst.case}` "
                   f"({worst.method.rsplit('/', 1)[1]}, {worst.tolerances}): "
                   f"{_num(_measure(worst))}.")
    return out


def in_brief(runs: Sequence[AuditRun]) -> list[str]:
    """One bullet per solver over every run: its wrong answers (the worst stated), errors."""
    out = []
    for solver in dict.fromkeys(p for run in runs for p in run.peers):
        rows = [(run, r) for run in runs for r in run.rows
                if r.method.rsplit("/", 1)[0] == solver and r.verdict != "skip"]
        wrong = [(run, r) for run, r in rows if r.verdict == "fail"]
        errors = sum(r.verdict == "error" for _, r in rows)
        per_run = ", ".join(f"{'catalogue' if run.suite == 'full' else run.suite} "
                            f"{sum(x is run for x, _ in wrong)}" for run in runs)
        line = (f"- **{solver}**: {_count(len(wrong), 'wrong answer')} in {len(rows):,} judged "
                f"rows ({per_run})")
        if wrong:
            worst = max((r for _, r in wrong), key=_measure)
            line += f"; the worst, {_wrong_line(worst)}"
        out.append(line + (f"; {_count(errors, 'error')} (time-outs or exceptions)."
                           if errors else "."))
    return out


def render_markdown(runs: Sequence[AuditRun], info: dict[str, str], command: str) -> str:
    """The Markdown of the report."""
    lines = ["# maxmargin audit: other SVM solvers judged by the certificate", "",
             f"Regenerate: `{command}` (from the repository root). Every row: `audit.json`.",
             "", "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in info.items()]
    lines += ["", "## In brief", ""] + in_brief(runs)
    lines += ["", "## What is judged", "",
              "Each solver runs at each preset's tolerance (loose 1e-3, tight 1e-6) and each "
              "answer is judged afresh in float64 (`maxmargin/certify_models.py`, "
              "`verification/audit.py`):",
              "",
              "- SVM-dual solvers (LIBSVM, oneDAL, maxmargin's SMO): LIBSVM's maximal KKT "
              "violation `m - M` must be below the preset, the intercept within it of the "
              "interval `alpha` allows, `alpha` feasible; weak duality against the CVXPY "
              "oracle both ways.",
              "- LIBLINEAR (LinearSVC) in its own problem (bias regularised through the "
              "column `intercept_scaling`, `formulations/liblinear.py`): the relative "
              "weak-duality gap of a dual point built from `coef_` must be below the preset; "
              "weak duality against the LIBLINEAR oracle.",
              f"- **Wrong answer**: called converged, refuted at {WRONG_PRESET} "
              f"({PRESETS[WRONG_PRESET]:g}): `m - M` at or above it (LIBSVM's own stopping "
              "rule, recomputed in float64), the intercept or feasibility off; LIBLINEAR: "
              "its objective more than that (relative) above the certified optimum (each "
              "reason also says whether LIBLINEAR's own, gradient-relative stopping test "
              "holds); or weak duality broken. `maxmargin audit` exits 1 on any.",
              "- **success**: certified at the preset; **correct**: the converged flag not "
              "refuted; **worst**: largest `m - M` (LIBLINEAR: gap); **time**: shifted "
              f"geometric mean (shift {SHIFT_S:g} s) relative to maxmargin's SMO on the same "
              "cases, an uncertified answer charged the time limit (qpbenchmark's rules).",
              "- Cases a solver cannot take (hard margin for LIBSVM/LIBLINEAR/oneDAL, kernels "
              "other than linear for LIBLINEAR, string/precomputed/callable kernels) are "
              "skipped, never failures."]
    return "\n".join(lines + _run_sections(runs)) + "\n"


def _run_sections(runs: Sequence[AuditRun], prefix: str = "") -> list[str]:
    """Per run: its heading (``prefix`` before the run's name), summary and findings."""
    lines: list[str] = []
    for run in runs:
        name = "Full catalogue" if run.suite == "full" else (
            "Random campaign" if run.suite == "random" else run.suite)
        cases = len({r.case for r in run.rows})
        unit = "cases" if run.problem == "c-svc" else "problems"
        lines += ["", f"## {prefix}{name} ({cases} {unit}, {len(run.rows)} rows, "
                      f"{run.elapsed / 60:.1f} min)", ""]
        lines += summary_table(summarise(run), run.reference)
        lines += ["", "### Findings", ""]
        for solver in run.peers:
            lines += findings(run, solver)
    return lines


#: The title of each problem's section of the report.
TITLES = {"nu-svc": "ν-SVC (NuSVC)", "one-class": "one-class SVM (OneClassSVM)"}


def _nu_rules(problem: str) -> list[str]:
    """What is judged in a ν-SVC or one-class run (:mod:`.audit_nu`)."""
    from maxmargin.verification.audit_nu import NU_FRACTIONS, ONE_CLASS_NUS

    grid = (f"`nu` = {', '.join(f'{f:g}' for f in NU_FRACTIONS)} times `nu_max = 2 * min(l+, "
            "l-) / l` per case (`<case>/nu<f>max`)" if problem == "nu-svc" else
            f"`nu` = {', '.join(f'{v:g}' for v in ONE_CLASS_NUS)} on each case's points, "
            "labels ignored (`<case>/nu<nu>`)")
    return ["Each case's `(X, y, kernel)` gives the problems " + grid + ". Each solver runs "
            "at each preset's tolerance (loose 1e-3, tight 1e-6), its answer read in "
            "Schölkopf's scaling and judged afresh in float64 (`maxmargin/certificate_nu.py`, "
            "`verification/audit_nu.py`):", "",
            "- certified: LIBSVM's per-class `m - M` over `rho` (the units of the decision "
            "function LIBSVM returns) below the preset, the offsets `rho`, `b` within it of "
            "the interval `alpha` allows, `alpha` feasible within 1e-6; weak duality against "
            "the CVXPY oracle both ways.",
            f"- **Wrong answer**: called converged, refuted at {WRONG_PRESET} "
            f"({PRESETS[WRONG_PRESET]:g}): `m - M` or the offsets off both over `rho` and in "
            "LIBSVM's own units (its stopping rule `m - M < tol`, recomputed), `alpha` "
            "infeasible, weak duality broken, or a non-finite answer. `maxmargin audit` exits "
            "1 on any.",
            "- **worst**: the largest `m - M` over `rho`; **time**: shifted geometric mean "
            f"(shift {SHIFT_S:g} s) relative to the reference on the same problems.",
            "- Problems a solver cannot take (string/precomputed/callable kernels) are "
            "skipped, never failures."]


def render_section(problem: str, runs: Sequence[AuditRun], info: dict[str, str],
                   command: str) -> str:
    """The Markdown of a ν-SVC or one-class report: its section of ``audit.md``, between the
    problem's markers (:func:`_markers`)."""
    title = TITLES[problem]
    start, end = _markers(problem)
    lines = [start, f"# maxmargin audit, {title}: other solvers judged by the certificate",
             "", f"Regenerate: `{command}` (from the repository root). Every row: "
             f"`audit-{problem}.json`.", "", "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in info.items()]
    lines += ["", f"## {title}: in brief", ""] + in_brief(runs)
    lines += ["", f"## {title}: what is judged", ""] + _nu_rules(problem)
    return "\n".join(lines + _run_sections(runs, f"{title}: ") + [end]) + "\n"


def _markers(problem: str) -> tuple[str, str]:
    """The lines around ``problem``'s section of ``audit.md``."""
    return (f"<!-- maxmargin audit --problem {problem} -->",
            f"<!-- end of maxmargin audit --problem {problem} -->")


def _sections(text: str) -> dict[str, str]:
    """The ν-SVC and one-class sections of an ``audit.md`` (markers included), by problem."""
    found = {}
    for problem in TITLES:
        start, end = _markers(problem)
        match = re.search(re.escape(start) + ".*?" + re.escape(end) + "\n?", text, re.S)
        if match:
            found[problem] = match.group(0)
    return found


def _header(runs: Sequence[AuditRun], seed: int, count: int) -> dict[str, str]:
    v = versions()
    info = {name: v[name] for name in _PACKAGES if name in v}
    try:
        from importlib.metadata import version

        info["scikit-learn-intelex"] = version("scikit-learn-intelex")
    except Exception:  # optional: not installed
        info["scikit-learn-intelex"] = "not installed"
    info["python"] = v.get("python", platform.python_version())
    info["date"] = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    info["machine"] = f"{platform.platform()}, {platform.machine()}, {os.cpu_count()} CPUs"
    info["campaign"] = f"seed {seed}, {count} cases"
    info["time limit"] = f"{runs[0].timeout:g} s per row" if runs else "-"
    return info


#: The columns of the report's JSON rows (the suite's columns an audit row fills).
REPORT_COLUMNS = ("case", "method", "status", "expected_status", "tolerances", "iterations",
                  "runtime", "objective_error", "w_error", "decision_error", "kkt_max",
                  "duality_gap", "verdict", "reasons")


def _short(value: Any) -> Any:
    """Floats to 6 significant digits (the JSON stays small); the rest unchanged."""
    return float(f"{value:.6g}") if isinstance(value, float) else value


def _one_row_per_line(document: dict[str, Any]) -> str:
    """``document`` as indented JSON except each row, which takes one line (a small file whose
    diffs stay readable)."""
    runs = []
    for part in document["runs"]:
        rest = json.dumps({k: v for k, v in part.items() if k != "rows"}, indent=1)
        rows = ",\n".join(json.dumps(r) for r in part["rows"])
        runs.append(f"{rest[:-2]},\n\"rows\": [\n{rows}\n]\n}}")
    head = json.dumps({k: v for k, v in document.items() if k != "runs"}, indent=1)
    return f"{head[:-2]},\n\"runs\": [\n" + ",\n".join(runs) + "\n]\n}"


def write_report(out: str | os.PathLike[str], runs: Sequence[AuditRun], *, command: str,
                 seed: int = 0, count: int = 0, problem: str = "c-svc") -> Path:
    """Write ``out/audit.md`` and ``out/audit.json`` and return the Markdown's path; another
    ``problem`` writes its section of ``out/audit.md`` (the rest of the file kept) and
    ``out/audit-PROBLEM.json``.

    The JSON holds every judged row as a list in the order of ``columns``
    (:data:`REPORT_COLUMNS`, floats to 6 digits), one per line; skipped rows are counted, not
    listed (``maxmargin audit --json`` keeps every column of every row)."""
    out = Path(out)
    info = _header(runs, seed, count)
    document: dict[str, Any] = {"command": command, "header": info,
                                "runs": [payload(run) for run in runs]}
    for part, run in zip(document["runs"], runs, strict=True):
        meaning = {c["name"]: c["description"] for c in part.pop("schema")}
        part["elapsed"] = None if math.isnan(run.elapsed) else run.elapsed
        part["skipped"] = sum(r["verdict"] == "skip" for r in part["rows"])
        part["columns"] = [{"name": n, "description": meaning[n]} for n in REPORT_COLUMNS]
        part["rows"] = [[_short(r[n]) for n in REPORT_COLUMNS] for r in part["rows"]
                        if r["verdict"] != "skip"]
    name = "audit.json" if problem == "c-svc" else f"audit-{problem}.json"
    (out / name).write_text(_one_row_per_line(document) + "\n")
    path = out / "audit.md"
    old = path.read_text() if path.exists() else ""
    kept = _sections(old)
    if problem == "c-svc":
        text = render_markdown(runs, info, command) + "".join(
            "\n" + section for section in kept.values())
    else:
        section = render_section(problem, runs, info, command)
        if problem in kept:
            text = old.replace(kept[problem], section)
        else:
            text = (old + "\n" if old else "") + section
    path.write_text(text)
    return path
