"""maxmargin audit --problem nu-svc|one-class: other solvers' ν-SVC and one-class answers.

A user's module ``numodule`` is written to a temporary directory: ``good``/``one_good`` are
maxmargin's ``nu_smo``/``one_class_smo`` at tol 1e-6; ``start`` returns LIBSVM's feasible
starting point (not the optimum) called converged; ``scaled`` the optimum with ``alpha``
times 1.5 (infeasible); ``shifted`` the optimum with ``b`` moved by ``rho`` (the offsets off);
``honest`` the starting point said not converged; ``uniform`` the one-class point ``alpha =
1/l`` (feasible, the optimum only at ``nu = 1``) called converged.
"""

from __future__ import annotations

import json
import sys
import textwrap

import numpy as np
import pytest

from maxmargin.algorithms import nu_smo, one_class_smo
from maxmargin.cli import main
from maxmargin.kernels import make_kernel
from maxmargin.verification import audit_cli
from maxmargin.verification.audit_nu import (
    NU_FRACTIONS,
    NU_PEERS,
    ONE_CLASS_NUS,
    NuTask,
    _offsets_and_violation,
    _refutation,
    nu_cases,
    nu_of,
)
from maxmargin.verification.cases import catalogue

MODULE = '''
import numpy as np
from maxmargin.algorithms import nu_smo, one_class_smo
from maxmargin.algorithms.smo.nu import initial_alpha


def good(X, y, nu, kernel="linear", gamma=1.0, degree=3, coef0=0.0):
    sol = nu_smo(X, y, nu, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, tol=1e-6)
    return np.array(sol.alpha), sol.b, sol.rho, sol.status == "optimal"


def start(X, y, nu, **kw):
    return initial_alpha(len(y), nu, y) / len(y), 0.0, 1.0


def scaled(X, y, nu, **kw):
    alpha, b, rho, _ = good(X, y, nu, **kw)
    return 1.5 * alpha, b, rho


def shifted(X, y, nu, **kw):
    alpha, b, rho, _ = good(X, y, nu, **kw)
    return alpha, b + rho, rho


def honest(X, y, nu, **kw):
    return start(X, y, nu) + (False,)


def one_good(X, nu, kernel="linear", gamma=1.0, degree=3, coef0=0.0):
    sol = one_class_smo(X, nu, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                        tol=1e-6)
    return np.array(sol.alpha), sol.rho


def uniform(X, nu, **kw):
    return np.full(X.shape[0], 1.0 / X.shape[0]), 0.0
'''

CASES = "two_points,overlap_n40*,xor_poly2"


@pytest.fixture
def numodule(tmp_path, monkeypatch):
    (tmp_path / "numodule.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.chdir(tmp_path)
    sys.modules.pop("numodule", None)
    yield tmp_path
    sys.modules.pop("numodule", None)


def _audit(capsys, *argv):
    code = main(["audit", "--quiet", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _rows(text):
    return json.loads(text)["rows"]


# --- usage errors: one line, exit 2, before any work ------------------------------------------
@pytest.mark.parametrize("argv, message", [
    (["--problem", "nu_svc", "--solver", "libsvm"], "--problem 'nu_svc': one of c-svc, nu-svc"),
    (["--problem", "one-class", "--solver", "sklearnex"], "not a one-class solver"),
    (["--problem", "nu-svc", "--solver", "liblinear"], "not a nu-svc solver"),
    (["--problem", "one-class", "--solver", "numodule:missing"], "has no callable 'missing'"),
])
def test_usage_errors_exit_2_with_one_line_before_any_work(numodule, capsys, monkeypatch,
                                                           argv, message):
    def no_work(*args, **kwargs):
        raise AssertionError("the audit ran")

    monkeypatch.setattr(audit_cli, "_run", no_work)
    with pytest.raises(SystemExit) as info:
        main(["audit", *argv])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


# --- the problems -----------------------------------------------------------------------------
def test_each_case_gives_the_documented_grid():
    cases = [c for c in catalogue("quick") if c.name in ("two_points", "xor_poly2")]
    nu = nu_cases(cases, "nu-svc")
    assert [c.name for c in nu] == [f"{c.name}/nu{f:g}max" for c in cases for f in NU_FRACTIONS]
    for c in nu:
        l, pos = c.y.shape[0], int(np.sum(c.y > 0))
        top = 2 * min(pos, l - pos) / l
        assert any(nu_of(c) == pytest.approx(f * top) for f in NU_FRACTIONS)
        assert c.expected_status == "optimal" and not c.methods
    one = nu_cases(cases, "one-class")
    assert [nu_of(c) for c in one] == list(ONE_CLASS_NUS) * len(cases)


@pytest.mark.parametrize("problem", ["nu-svc", "one-class"])
def test_libsvm_is_read_in_schoelkopfs_scaling(problem):
    """The reading of NuSVC/OneClassSVM (module docstring of audit_nu) against maxmargin's own
    solvers at tol 1e-9 on the same problem: alpha, b and rho agree."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=50) > 0, 1.0, -1.0)
    kernel = make_kernel("rbf", gamma=0.4, X=X)
    one = problem == "one-class"
    answer = NU_PEERS[problem]["libsvm"].fit(NuTask(X, None if one else y, 0.3, kernel, 1e-9))
    sol = (one_class_smo(X, 0.3, kernel=kernel, tol=1e-9) if one else
           nu_smo(X, y, 0.3, kernel=kernel, tol=1e-9))
    assert answer.converged  # (LIBSVM's kernel cache is float32: agreement to ~1e-5)
    np.testing.assert_allclose(answer.alpha, sol.alpha, atol=1e-4 * np.max(sol.alpha))
    assert answer.rho == pytest.approx(sol.rho, rel=1e-4)
    assert answer.b == pytest.approx(sol.b, rel=1e-4, abs=1e-4 * sol.rho)


# --- seeded runs: rows with verdicts, the reference passes -------------------------------------
@pytest.mark.parametrize("problem, reference", [("nu-svc", "nu_smo"),
                                                ("one-class", "one_class_smo")])
def test_a_seeded_libsvm_campaign_gives_judged_rows(capsys, problem, reference):
    code, out, err = _audit(capsys, "--problem", problem, "--solver", "libsvm", "--suite",
                            "random", "--count", "3", "--seed", "3", "--json", "-")
    rows = _rows(out)
    grid = len(NU_FRACTIONS) if problem == "nu-svc" else len(ONE_CLASS_NUS)
    assert len({r["case"] for r in rows}) == 3 * grid
    assert {r["method"] for r in rows} == {f"{s}/{p}" for s in ("libsvm", reference)
                                          for p in ("loose", "tight")}
    assert all(r["verdict"] in ("pass", "fail", "error", "skip") for r in rows)
    judged = [r for r in rows if r["verdict"] in ("pass", "fail")]
    assert judged and all(r["tolerances"].startswith("kkt<") for r in judged)
    assert all(r["kkt_max"] == r["kkt_max"] for r in judged)  # a number, not NaN
    mine = [r for r in rows if r["method"].startswith(reference)]
    assert all(r["verdict"] == "pass" for r in mine)
    assert code == (1 if any(r["verdict"] == "fail" for r in rows) else 0)
    assert json.loads(out)["problem"] == problem


def test_maxmargins_own_answers_pass_and_the_reference_rows_too(numodule, capsys):
    code, out, _ = _audit(capsys, "--problem", "nu-svc", "--solver", "numodule:good",
                          "--case", CASES)
    assert code == 0 and "0 wrong answers" in out
    assert "| numodule:good | loose (0.001) | 9 | 100.0 % | 100.0 % | 0 |" in out
    assert "| nu_smo | tight (1e-06) | 9 | 100.0 % | 100.0 % | 0 |" in out
    code, out, _ = _audit(capsys, "--problem", "one-class", "--solver", "numodule:one_good",
                          "--case", CASES)
    assert code == 0 and "| numodule:one_good | loose (0.001) | 6 | 100.0 % |" in out


# --- wrong answers are flagged ----------------------------------------------------------------
@pytest.mark.parametrize("name, problem, reason", [
    ("start", "nu-svc", "m - M = "),  # feasible, not optimal
    ("scaled", "nu-svc", "dual infeasibility"),
    ("shifted", "nu-svc", "outside the interval its alpha allows"),
    ("uniform", "one-class", "m - M = "),
])
def test_a_wrong_answer_called_converged_is_flagged(numodule, capsys, name, problem, reason):
    code, out, _ = _audit(capsys, "--problem", problem, "--solver", f"numodule:{name}",
                          "--case", CASES, "--preset", "loose")
    assert code == 1
    wrong = [x for x in out.splitlines() if x.startswith("  WRONG")]
    assert wrong and all(f"numodule:{name}/loose" in x for x in wrong)
    assert any(reason in x for x in wrong)


def test_an_honest_solver_is_not_wrong(numodule, capsys):
    code, out, _ = _audit(capsys, "--problem", "nu-svc", "--solver", "numodule:honest",
                          "--case", CASES, "--preset", "loose")
    assert code == 0 and "| numodule:honest | loose (0.001) | 9 |" in out


def test_a_claim_is_refuted_only_when_both_units_refute_it():
    assert _refutation(0.5, 1e-4, 0.0, 0.0, 0.0) == []  # LIBSVM's own rule holds
    assert _refutation(1e-4, 0.5, 0.0, 0.0, 0.0) == []  # within the preset over rho
    assert "m - M = 0.5" in _refutation(0.5, 0.2, 0.0, 0.0, 0.0)[0]
    assert "offsets" in _refutation(0.0, 0.0, 0.1, 0.1, 0.0)[0]
    assert "infeasibility" in _refutation(0.0, 0.0, 0.0, 0.0, 1e-3)[0]


# --- the report -------------------------------------------------------------------------------
def test_the_report_gains_a_section_per_problem_and_keeps_the_rest(tmp_path, capsys):
    (tmp_path / "audit.md").write_text("# the C-SVC audit\n\nkept as it is\n")
    argv = ["--problem", "one-class", "--solver", "libsvm", "--report", str(tmp_path),
            "--case", "two_points", "--count", "1", "--seed", "3", "--preset", "loose"]
    for _ in range(2):  # regenerating replaces the section
        code, out, _ = _audit(capsys, *argv)
        assert code == 0 and "report written to" in out
    md = (tmp_path / "audit.md").read_text()
    assert md.startswith("# the C-SVC audit\n\nkept as it is\n")
    assert md.count("<!-- maxmargin audit --problem one-class -->") == 1
    assert "## one-class SVM (OneClassSVM): Full catalogue (2 problems" in md
    assert "time vs one_class_smo" in md
    document = json.loads((tmp_path / "audit-one-class.json").read_text())
    assert [run["problem"] for run in document["runs"]] == ["one-class", "one-class"]
    # the C-SVC report, regenerated, keeps the one-class section
    code, out, _ = _audit(capsys, "--solver", "libsvm", "--report", str(tmp_path), "--case",
                          "two_points", "--count", "1", "--seed", "3", "--preset", "loose")
    md = (tmp_path / "audit.md").read_text()
    assert md.startswith("# maxmargin audit: other SVM solvers")
    assert md.count("<!-- end of maxmargin audit --problem one-class -->") == 1


def test_a_weight_a_rounding_below_its_bound_is_not_free():
    """nu l / 2 = 2 up to rounding: the second weight lacks a rounding of the bound, so the
    offsets between the 2nd and 3rd margins (the certificate's midpoint 2.5) are allowed; a
    truly free second weight pins the offset at its margin, 2, and 2.5 is 0.5 off."""
    m, U = np.array([1.0, 2.0, 3.0]), 0.25
    group = [(np.arange(3), 2.5)]
    rounded = np.array([U, U * (1.0 - 4e-16), 0.0])
    assert _offsets_and_violation(m, rounded, U, 2.0 - 4e-16, group) == (0.0, 0.0)
    free = np.array([U, 0.5 * U, 0.0])
    assert _offsets_and_violation(m, free, U, 1.5, group) == (0.5, 0.0)
