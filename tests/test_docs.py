"""The documentation cannot rot: the user guide states no measured times (they belong to the
generated reports and to the development notes), every count it states is the code's, and the
committed reports agree with the catalogue and with what the pages say about them.

Files are found from the repository root; the package is read through its imported modules
(CI also runs these tests from a folder without the package's sources).
"""

from __future__ import annotations

import importlib
import json
import math
import re
from pathlib import Path

import pytest

from maxmargin import methods as registry
from maxmargin.verification import Tolerances

cases = importlib.import_module("maxmargin.verification.cases")
suite = importlib.import_module("maxmargin.verification.suite")
case_module = importlib.import_module("maxmargin.verification.case")
campaign = importlib.import_module("maxmargin.verification.campaign")

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
REPORTS = ROOT / "reports"

#: The user guide: every page of docs/ and docs/algorithms/ (the development notes, in
#: docs/development/, keep dated measurements on purpose).
USER_GUIDE = sorted([*DOCS.glob("*.md"), *(DOCS / "algorithms").glob("*.md")])

#: A measured time or speed ratio: "38 s", "14.5 ms", "5 to 9 minutes", "0.96x",
#: "1.4 times faster", "0.11 times SVC's time".
TIMING = re.compile(
    r"\b\d[\d,.]*\s*(?:µs|us|ms|s|secs?|seconds?|min|mins|minutes?|h|hrs?|hours?)\b"
    r"|\b\d+(?:\.\d+)?x\b"
    r"|\b\d[\d,.]*\s+times\s+(?:faster|slower|as\s+(?:long|fast|quick)|\S+'s\s+time)",
    re.IGNORECASE)

#: Times in the user guide that are not measurements: (page, the line's text around the
#: match) -> why it may stay.
ALLOWED = {
    ("dask.md", "at most every 2 s"): "a setting of the code (STREAM_EVERY_S, tested below)",
    ("verification.md", "(quick suite) in 0.8 s"): "the last line of a printed example table",
}


def timings(text: str) -> list[str]:
    return [m.group() for m in TIMING.finditer(text)]


def test_the_timing_pattern_finds_measurements_and_only_them():
    measured = ["took 38 s", "14.5 ms against 24.7 ms", "5 to 9 minutes", "(0.96x; 1.30x before)",
                "1.4 times faster", "0.11 times `SVC`'s time", "2 min 44 s", "12 seconds",
                "1.25 to 1.4 times as long"]
    assert all(timings(text) for text in measured)
    settings = ["`--timeout S`", "--timeout 120", "400 x 5,000,000", "digits 3x3", "d = 300",
                "`cache_size` megabytes (200 by default)", "1e-3", "O(n^3)", "blocks of 8 MB"]
    assert not any(timings(text) for text in settings)


def test_the_user_guide_states_no_measured_times():
    """Times and speed ratios are in the generated reports (shown on the performance page by
    inclusion) and in docs/development/; a page of the user guide only points to them."""
    assert len(USER_GUIDE) > 15 and not any("development" in p.parts for p in USER_GUIDE)
    found = []
    for page in USER_GUIDE:
        for number, line in enumerate(page.read_text().splitlines(), 1):
            for match in timings(line):
                if not any(page.name == name and text in line and match in text
                           for name, text in ALLOWED):
                    found.append(f"{page.relative_to(ROOT)}:{number}: {match!r} in {line!r}")
    assert not found, "\n".join(found)


def test_every_allowed_time_is_still_there():
    """The allow-list lists only what the pages say (a stale entry is removed)."""
    for name, text in ALLOWED:
        assert text in (DOCS / name).read_text(), (name, text)


def test_the_stream_interval_is_the_codes():
    text = (DOCS / "dask.md").read_text()
    stated = float(re.search(r"at most every (\d+(?:\.\d+)?) s\b", text).group(1))
    assert stated == suite.STREAM_EVERY_S


def test_the_development_notes_are_apart_from_the_user_guide():
    """The measurement pages sit under docs/development/, reached from their own toctree."""
    index = (DOCS / "index.md").read_text()
    trees = re.findall(r"```\{toctree\}\n(.*?)```", index, flags=re.S)
    development = [t for t in trees if "development/index" in t]
    assert len(development) == 1 and ":caption: Development notes" in development[0]
    assert all("development/" not in t for t in trees if t is not development[0])
    notes = (DOCS / "development" / "index.md").read_text()
    for page in ("measurements", "performance-notes", "smo-notes"):
        assert (DOCS / "development" / f"{page}.md").is_file()
        assert re.search(rf"^{page}$", notes, flags=re.M), page
    assert not (DOCS / "performance-notes.md").exists()
    assert not (DOCS / "algorithms" / "smo-notes.md").exists()


# --- counts the pages state -------------------------------------------------------------------
SUITE_COUNT = re.compile(r"`--suite (quick|full)`[^;|\n]*?(?:\|[^;|\n]*?)?\b(\d+) (?:named )?cases")


def suite_sizes() -> dict[str, int]:
    return {name: len(cases.catalogue(name)) for name in ("quick", "full")}


@pytest.mark.parametrize("page", [README, DOCS / "verification.md"], ids=lambda p: p.name)
def test_the_suite_sizes_are_the_catalogues(page):
    """README's command table and the verification page give each suite's number of cases."""
    stated = dict(SUITE_COUNT.findall(page.read_text()))
    assert {name: int(n) for name, n in stated.items()} == suite_sizes()


def test_every_count_of_named_cases_is_a_suite_size():
    """Any "N named cases" of the README or the user guide is the quick or the full suite's."""
    sizes = set(suite_sizes().values())
    for page in [README, *USER_GUIDE]:
        for n in re.findall(r"\b(\d+) named cases", page.read_text()):
            assert int(n) in sizes, (page.name, n)


def markdown_table(text: str, header: str) -> list[list[str]]:
    """The rows (cells, stripped) of the Markdown table whose header line starts with
    ``header``."""
    start = text.index(header)
    block = text[start:text.index("\n\n", start)].splitlines()[2:]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in block]


def test_the_areas_are_the_catalogues():
    rows = markdown_table((DOCS / "verification.md").read_text(), "| area | cases |")
    assert {row[0] for row in rows} == {c.area for c in cases.catalogue("full")}


def test_the_methods_table_names_every_method_of_the_suite():
    """The verification page's method table has a row for each method the runner knows."""
    rows = markdown_table((DOCS / "verification.md").read_text(), "| method | what it checks |")
    named = {name for row in rows for name in re.findall(r"`([^`]+)`", row[0])}
    assert named == set(suite.METHODS)


def test_the_estimator_page_names_every_solver():
    text = (DOCS / "estimator.md").read_text()
    bullet = text[text.index("- `solver=`"):text.index("- `solutions_`")]
    own = {name for name, spec in registry.METHODS.items() if spec.family != "third_party"}
    assert set(re.findall(r'`"(\w+)"`', bullet)) == own  # not the audit's peers it registers


def test_the_data_page_states_the_codes_limits():
    """The sizes that decide the reference of ``verify --data`` are the constants the planner
    uses."""
    text = " ".join((DOCS / "your-data.md").read_text().split())
    assert f"a Gram matrix of at most {case_module.ORACLE_MAX_GRAM_N:,} rows" in text
    assert f"a factor of at most {case_module.ORACLE_MAX_FACTOR:.0e}".replace("e+0", "e") in text
    assert f"linear problem above {case_module.SMO_LINEAR_MAX_ROWS:,} rows" in text


def test_the_campaigns_conditioning_is_the_codes():
    """The cap on C max K_ii of the random campaign and the range of the conditioned family."""
    low, high = (f"{v:.0e}".replace("e+0", "e") for v in campaign.KAPPA_RANGE)
    assert f"(C max K_ii from {low} to {high}," in " ".join(README.read_text().split())
    text = " ".join((DOCS / "verification.md").read_text().split())
    power = {v: f"$10^{round(math.log10(v))}$" for v in (*campaign.KAPPA_RANGE, campaign.KAPPA_MAX)}
    low, high = (power[v] for v in campaign.KAPPA_RANGE)
    assert f"$\\kappa$ drawn log-uniformly from {low} to {high}" in text
    assert f"$\\kappa = C \\max_i K_{{ii}} \\le {power[campaign.KAPPA_MAX][1:-1]}$" in text


# --- the committed reports ----------------------------------------------------------------------
def module_of(path: str):
    """The imported module a repository path names (``maxmargin/tolerances.py`` ->
    ``maxmargin.tolerances``, ``verification/cases.py`` -> ``maxmargin.verification.cases``),
    checked to be that file of the installed package."""
    dotted = path.removesuffix(".py").replace("/", ".")
    module = importlib.import_module(dotted if dotted.startswith("maxmargin.")
                                     else f"maxmargin.{dotted}")
    assert Path(module.__file__).as_posix().endswith(path), (path, module.__file__)
    return module


def test_the_validation_report_is_the_full_catalogue():
    """reports/validation.md states the full suite, as many cases as the catalogue has, and the
    rows and cases of results.json; ``maxmargin report --suite full --out reports``
    regenerates all three."""
    text = (REPORTS / "validation.md").read_text()
    rows = json.loads((REPORTS / "results.json").read_text())["rows"]
    suite_name, n_cases, n_rows = re.search(r"^\| suite \| (\w+): (\d+) cases, (\d+) rows \|$",
                                            text, flags=re.M).groups()
    assert suite_name == "full"
    assert int(n_cases) == len(cases.catalogue("full")) == len({r["case"] for r in rows})
    assert int(n_rows) == len(rows)
    summary = re.search(r"^(\d+) checks on (\d+) cases:", text, flags=re.M).groups()
    assert (int(summary[0]), int(summary[1])) == (int(n_rows), int(n_cases))


def test_the_reports_point_to_the_modules_that_define_things():
    """The report's header and results.json's schema name the files that hold the tolerance
    presets and the cases (not a module that only re-exports them)."""
    header = (REPORTS / "validation.md").read_text().split("\n\n")[1]
    named = dict(re.findall(r"(Tolerance presets|cases): `([\w/]+\.py)`", header))
    assert module_of(named["Tolerance presets"]).__name__ == Tolerances.__module__
    assert module_of(named["cases"]).catalogue is cases.catalogue
    schema = json.loads((REPORTS / "results.json").read_text())["schema"]
    files = {c["name"]: re.findall(r"\(([\w/]+\.py)\)", c["description"]) for c in schema}
    assert module_of(files["tolerances"][0]).__name__ == Tolerances.__module__
    assert module_of(files["case"][0]).catalogue is cases.catalogue


def audit_summary() -> dict[tuple[str, str], int]:
    """Wrong answers per (run's suite, solver) of the committed audit, both presets."""
    audit = json.loads((REPORTS / "audit.json").read_text())
    wrong: dict[tuple[str, str], int] = {}
    for run in audit["runs"]:
        for row in run["summary"]:
            key = (run["suite"], row["solver"])
            wrong[key] = wrong.get(key, 0) + row["wrong"]
    return wrong


def test_the_audit_findings_the_pages_state():
    """README and the audit page: LIBSVM, LIBLINEAR (both losses) and oneDAL gave wrong answers,
    maxmargin's SMO none; LIBSVM's include raw breast cancer and the offset linear case, all of
    oneDAL's are in the campaign, LIBLINEAR's in the campaign and on the offset case."""
    wrong = audit_summary()
    total = {s: sum(n for (_, solver), n in wrong.items() if solver == s)
             for s in ("libsvm", "liblinear", "liblinear-hinge", "sklearnex", "smo")}
    assert total["smo"] == 0 and all(total[s] > 0 for s in total if s != "smo")
    assert wrong[("full", "sklearnex")] == 0
    assert wrong[("random", "liblinear")] > 0 and wrong[("random", "liblinear-hinge")] > 0
    audit = json.loads((REPORTS / "audit.json").read_text())
    full = next(run for run in audit["runs"] if run["suite"] == "full")
    columns = [c["name"] for c in full["columns"]]
    failed = {(row[columns.index("case")], row[columns.index("method")].split("/")[0])
              for row in full["rows"] if row[columns.index("verdict")] == "fail"}
    assert {("breast_cancer_raw", "libsvm"), ("offset_linear_n63_d34", "libsvm"),
            ("offset_linear_n63_d34", "liblinear")} <= failed
    readme = " ".join(README.read_text().split())
    assert "found wrong answers in all three (maxmargin's SMO, judged the same way: none)" in readme
    page = " ".join((DOCS / "audit.md").read_text().split())
    assert "maxmargin's SMO, judged by the same rules, gave none" in page
