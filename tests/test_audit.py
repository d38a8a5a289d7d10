"""maxmargin audit: third-party solvers judged by the certificate and the oracle.

A user's module ``mymodule`` is written to a temporary directory: ``good`` is maxmargin's SMO
at tol 1e-6 (an exact solver), ``bad`` the same answer with alpha scaled by 0.9 (every KKT
condition on the margin is then off by 10 %: ``m - M`` is 0.2 on a two-point problem).
"""

from __future__ import annotations

import json
import math
import sys
import textwrap
import warnings

import numpy as np
import pytest

from maxmargin.certificate import infeasibility_slack
from maxmargin.certify_models import certify_dual
from maxmargin.cli import main
from maxmargin.formulations import svm_dual
from maxmargin.kernels import make_kernel
from maxmargin.methods import METHODS
from maxmargin.results import SVMSolution
from maxmargin.verification.audit import (
    PEERS,
    Answer,
    AuditRun,
    Peer,
    _svc_peer,
    run_audit,
    shifted_geometric_mean,
    summarise,
)
from maxmargin.verification.cases import catalogue
from maxmargin.verification.suite import Row

MODULE = '''
import os
import numpy as np
from maxmargin.algorithms import smo


def good(X, y, C, kernel="linear", gamma=1.0, degree=3, coef0=0.0):
    sol = smo(X, y, C=C, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, tol=1e-6)
    return np.array(sol.alpha), sol.b, sol.status == "optimal"


def bad(X, y, C, kernel="linear", gamma=1.0, degree=3, coef0=0.0):
    alpha, b, _ = good(X, y, C, kernel, gamma, degree, coef0)
    return 0.9 * alpha, b


def honest(X, y, C, **kw):
    alpha, b, _ = good(X, y, C, **kw)
    return 0.9 * alpha, b, False


def crash(X, y, C, **kw):
    raise RuntimeError("boom")


def counted(X, y, C, **kw):
    with open(os.environ["MM_CALLS"], "a") as fh:
        fh.write("call\\n")
    return good(X, y, C, **kw)


def no_doubt(X, y, C, **kw):
    return np.full(len(y), 0.5), 0.0  # finite, "converged", whatever the problem


def single(X, y, C, **kw):
    alpha, b, _ = good(X, y, C, **kw)  # kept in float32, as single-precision solvers do
    return alpha.astype(np.float32).astype(np.float64), float(np.float32(b))


def with_tol(X, y, C, kernel="linear", gamma=1.0, degree=3, coef0=0.0, tol=1e-3):
    sol = smo(X, y, C=C, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, tol=tol)
    return np.array(sol.alpha), sol.b
'''


@pytest.fixture
def mymodule(tmp_path, monkeypatch):
    (tmp_path / "mymodule.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MM_CALLS", str(tmp_path / "calls.txt"))
    sys.modules.pop("mymodule", None)
    yield tmp_path
    sys.modules.pop("mymodule", None)


def _audit(capsys, *argv):
    code = main(["audit", "--quiet", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


# --- the "done means" -----------------------------------------------------------------
def test_good_solver_passes_the_quick_suite(mymodule, capsys):
    code, out, _ = _audit(capsys, "--solver", "mymodule:good")
    assert code == 0
    assert "0 wrong answers" in out
    assert "| mymodule:good | loose (0.001) |" in out and " 100.0 % | 100.0 % | 0 |" in out


def test_bad_solver_fails_the_quick_suite_with_the_rows_that_show_why(mymodule, capsys):
    code, out, _ = _audit(capsys, "--solver", "mymodule:bad")
    assert code == 1
    # the two-point case: m - M = 0.2 exactly (alpha 0.9 of the optimum, see the module doc)
    line = next(x for x in out.splitlines() if x.startswith("two_points") and
                "mymodule:bad/loose" in x)
    assert " optimal " in line and " inaccurate " in line and line.endswith("fail")
    assert "why: wrong answer: said converged, but m - M = 0.2 >= 0.001" in out
    assert "WRONG two_points / mymodule:bad/loose" in out
    # maxmargin's own SMO rows (the reference) all pass
    assert not any(x.startswith("  WRONG") and "/ smo/" in x for x in out.splitlines())


def test_a_finite_answer_called_converged_on_an_infeasible_hard_margin_is_wrong(
        mymodule, capsys):
    code, out, _ = _audit(capsys, "--solver", "mymodule:no_doubt", "--case", "xor_linear_hard")
    assert code == 1
    assert "said converged on a hard margin with no solution" in out
    # NaN, the one shape of "no solution", called converged, is no wrong answer there
    code, out, _ = _audit(capsys, "--solver", "mymodule:bad", "--case", "xor_linear_hard")
    assert code == 0


def test_an_honest_solver_is_not_wrong(mymodule, capsys):
    code, out, _ = _audit(capsys, "--solver", "mymodule:honest", "--preset", "loose",
                          "--case", "two_points,overlap_n40*")
    assert code == 0
    assert "| mymodule:honest | loose (0.001) | 2 | 0.0 % | 100.0 % | 0 |" in out


def test_a_crashing_solver_gives_error_rows_not_wrong_answers(mymodule, capsys):
    code, out, _ = _audit(capsys, "--solver", "mymodule:crash", "--case", "two_points",
                          "--preset", "loose")
    assert code == 0
    assert "raised RuntimeError: boom" in out and "1 errors" in out


@pytest.mark.parametrize("name, message", [
    ("nosuchmodule:f", "cannot import 'nosuchmodule'"),
    ("mymodule:missing", "has no callable 'missing'"),
    ("libsvn", "not a built-in solver"),
    (":f", "MODULE:CALLABLE"),
])
def test_bad_solver_names_exit_2_before_any_work(mymodule, capsys, name, message):
    with pytest.raises(SystemExit) as info:
        main(["audit", "--solver", name])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_your_data_file_and_a_dotted_callable(mymodule, capsys):
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    rows = [",".join([*map(str, x), str(label)]) for x, label in zip(X, y, strict=True)]
    (mymodule / "flowers.csv").write_text("\n".join(rows) + "\n")
    (mymodule / "holder.py").write_text("from mymodule import good\n\n\nclass Box:\n"
                                        "    solve = staticmethod(good)\n")
    code, out, _ = _audit(capsys, "--solver", "holder:Box.solve,libsvm", "--data",
                          "flowers.csv", "--preset", "loose")
    assert code == 0
    cases = {x.split()[0] for x in out.splitlines() if "/loose" in x}
    assert len(cases) == 3 and all(c.startswith("flowers") for c in cases)  # one per pair
    assert "| holder:Box.solve | loose (0.001) | 3 | 100.0 % |" in out


def test_the_solver_gets_tol_when_it_names_it(mymodule, capsys):
    code, out, _ = _audit(capsys, "--solver", "mymodule:with_tol", "--case", "heart_scale")
    assert code == 0
    # asked for 1e-6 at the tight preset, it meets it; asked for 1e-3 it does not reach 1e-6
    assert "| mymodule:with_tol | tight (1e-06) | 1 | 100.0 % |" in out


# --- LIBSVM, LIBLINEAR ------------------------------------------------------------------------
def test_libsvm_on_raw_breast_cancer_is_a_wrong_answer(capsys):
    code, out, _ = _audit(capsys, "--solver", "libsvm", "--suite", "full", "--case",
                          "breast_cancer_raw", "--preset", "loose")
    assert code == 1
    line = next(x for x in out.splitlines() if "WRONG breast_cancer_raw / libsvm/loose" in x)
    m_minus_M = float(line.split("m - M = ")[1].split(" ")[0])
    assert 0.5 < m_minus_M < 2.0


def test_liblinear_is_judged_in_its_own_problem(capsys):
    code, out, _ = _audit(capsys, "--solver", "liblinear,liblinear-hinge", "--suite", "full",
                          "--case", "overlap_n100*,heart_scale*,circle_rbf")
    assert code == 0
    rows = [x for x in out.splitlines() if "liblinear" in x and "/" in x.split()[1]]
    judged = [x for x in rows if not x.endswith("skip")]
    assert judged and all("gap<=" in x for x in judged)
    skipped = [x for x in rows if x.startswith("circle_rbf")]
    assert skipped and all(x.endswith("skip") for x in skipped)


def _liblinear_case():
    return next(c for c in catalogue("full") if c.name == "overlap_n100_d3_C0.5")


def _capped(claim: bool) -> Peer:
    def fit(task):
        from sklearn.svm import LinearSVC

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = LinearSVC(C=task.C, dual=False, max_iter=1, tol=1e-12).fit(task.X, task.y)
        w = np.append(model.coef_.ravel(), model.intercept_[0])
        return Answer(claim, 0.0, w_tilde=w, b=float(model.intercept_[0]), algorithm="tron")

    return Peer("capped", "LinearSVC stopped after one step", fit, problem="liblinear",
                kernels=("linear",), loss="squared_hinge")


def test_a_capped_liblinear_claiming_convergence_is_refuted():
    run = run_audit([_capped(True)], [_liblinear_case()], presets=("loose",), reference=False,
                    progress=None, timeout=None)
    (row,) = run.rows
    assert row.verdict == "fail" and "above the certified optimum" in row.reasons
    assert "LIBLINEAR's own test at 0.001 fails (TRON" in row.reasons
    assert row.status == "optimal" and row.expected_status == "inaccurate"
    honest = run_audit([_capped(False)], [_liblinear_case()], presets=("loose",),
                       reference=False, progress=None, timeout=None)
    assert honest.rows[0].verdict == "pass" and not honest.wrong


class _OtherSign:
    """An SVC-like library whose binary convention is the negative of scikit-learn's."""

    def __init__(self, broken=False, **kw):
        from sklearn.svm import SVC

        self.inner, self.broken = SVC(**kw), broken

    def fit(self, X, y):
        m = self.inner.fit(X, y)
        self.support_, self.dual_coef_ = m.support_, -m.dual_coef_
        self.intercept_, self.fit_status_ = -m.intercept_ + (1.0 if self.broken else 0.0), 0
        return self

    def decision_function(self, X):
        return -self.inner.decision_function(X)


def test_a_library_with_the_other_sign_convention_is_read_correctly():
    case = next(c for c in catalogue("full") if c.name == "heart_scale")
    flipped = Peer("flipped", "SVC with flipped signs", _svc_peer(_OtherSign))
    run = run_audit([flipped, PEERS["libsvm"]], [case], presets=("loose",), reference=False,
                    progress=None, timeout=None)
    mine, libsvm = run.rows
    assert mine.verdict == "pass" and mine.expected_status == "optimal"
    assert mine.kkt_max == libsvm.kkt_max
    broken = Peer("broken", "decision_function disagrees", _svc_peer(
        lambda **kw: _OtherSign(broken=True, **kw)))
    (row,) = run_audit([broken], [case], presets=("loose",), reference=False, progress=None,
                       timeout=None).rows
    assert row.verdict == "error" and "its dual cannot be read" in row.reasons


class _SinglePrecisionRho(_OtherSign):
    """An SVC-like library that keeps its answer in float32 and LIBSVM's ``rho = -b`` in
    ``intercept_`` (ThunderSVM's conventions), and exits on a kernel name it does not know."""

    def __init__(self, **kw):
        if kw.get("kernel") == "poly":
            raise SystemExit(0)  # what ThunderSVM does with "poly"
        super().__init__(**{**kw, "kernel": {"polynomial": "poly"}.get(kw["kernel"],
                                                                       kw["kernel"])})

    def fit(self, X, y):
        m = self.inner.fit(X, y)
        self.support_, self.fit_status_ = m.support_, 0
        self.dual_coef_ = m.dual_coef_.astype(np.float32)
        self.intercept_ = (-m.intercept_).astype(np.float32)
        return self

    def decision_function(self, X):
        return self.inner.decision_function(X).astype(np.float32)


def _beside_libsvm(peer: str, names: tuple[str, ...]) -> list[tuple[str, Row, Row]]:
    """``(case, peer's row, LIBSVM's row)`` of an audit of ``peer`` beside LIBSVM on the named
    catalogue cases (loose preset, no oracle)."""
    cases = [c for c in catalogue("full") if c.name in names]
    run = run_audit([PEERS[peer], PEERS["libsvm"]], cases, presets=("loose",),
                    reference=False, progress=None, timeout=None)
    rows = {(r.case, r.method.split("/")[0]): r for r in run.rows}
    assert len(rows) == 2 * len(names)
    return [(name, rows[(name, peer)], rows[(name, "libsvm")]) for name in names]


def test_a_single_precision_library_with_rho_is_read_and_judged_fairly(monkeypatch):
    """ThunderSVM's conventions: intercept_ = rho = -b, float32 answers. Read as b, judged as
    LIBSVM's answer is (weights a float32 rounding off a bound on it, feasibility within
    AUDIT_FEASIBILITY); "poly" is passed as "polynomial"."""
    fake = type(sys)("thundersvm")
    fake.SVC = _SinglePrecisionRho
    monkeypatch.setitem(sys.modules, "thundersvm", fake)
    names = ("heart_scale", "overlap_n100_d3_C0.5", "all_bound_1d", "collinear_poly3_rank4",
             "circle_rbf")
    for name, single, double in _beside_libsvm("thundersvm", names):
        assert single.verdict == double.verdict == "pass", (name, single.reasons)
        assert single.expected_status == double.expected_status, name
        assert single.kkt_max == pytest.approx(double.kkt_max, rel=1e-2, abs=1e-6), name


class _DeviceArray:
    """A CuPy array seen from the host: its shape, size and dtype, its values behind
    ``.get()`` (CuPy refuses NumPy's implicit conversion)."""

    def __init__(self, values):
        self._values = np.asarray(values)
        self.shape, self.size, self.ndim = self._values.shape, self._values.size, \
            self._values.ndim
        self.dtype = self._values.dtype

    def get(self):
        return self._values.copy()

    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed.")


class _DeviceSeries:
    """A cuDF series: its values behind ``.to_numpy()``; its ``.get(key)``, as pandas', looks up
    an index (so it must not be taken for CuPy's)."""

    def __init__(self, values):
        self._values = np.asarray(values)
        self.size = self._values.size

    def to_numpy(self):
        return self._values.copy()

    def get(self, key, default=None):
        return self._values[key] if 0 <= key < self.size else default


class _CumlSVC:
    """cuML's SVC as the host sees it (GPU-free stand-in): scikit-learn's answer, its fitted
    attributes and decision values on the device (CuPy arrays, the intercept a cuDF series),
    no ``n_iter_``."""

    def __init__(self, **kw):
        from sklearn.svm import SVC

        self._inner = SVC(**kw)
        self.C, self.kernel, self.gamma = kw.get("C", 1.0), kw.get("kernel", "rbf"), \
            kw.get("gamma", "scale")
        self.degree, self.coef0 = kw.get("degree", 3), kw.get("coef0", 0.0)

    def fit(self, X, y):
        m = self._inner.fit(X, y)
        self.classes_ = _DeviceArray(m.classes_)
        self.support_ = _DeviceArray(m.support_.astype(np.int32))
        self.support_vectors_ = _DeviceArray(m.support_vectors_)
        self.dual_coef_ = _DeviceArray(m.dual_coef_)
        self.intercept_ = _DeviceSeries(m.intercept_)
        self.fit_status_ = 0
        return self

    def decision_function(self, X):
        return _DeviceArray(self._inner.decision_function(X))


def _fake_cuml(monkeypatch):
    """``cuml`` and ``cuml.svm`` with :class:`_CumlSVC` as ``cuml.svm.SVC``."""
    package, svm = type(sys)("cuml"), type(sys)("cuml.svm")
    svm.SVC, package.svm = _CumlSVC, svm
    monkeypatch.setitem(sys.modules, "cuml", package)
    monkeypatch.setitem(sys.modules, "cuml.svm", svm)


def test_cumls_device_arrays_are_read_and_judged_as_libsvms_answer(monkeypatch):
    """The cuML peer reads a model whose attributes live on the device (CuPy arrays, a cuDF
    intercept whose ``.get`` is pandas', no ``n_iter_``): the same verdicts and KKT violations
    as LIBSVM's own answer, and ``certify`` gives the model the certificate of the SVC it
    wraps."""
    _fake_cuml(monkeypatch)
    names = ("heart_scale", "overlap_n100_d3_C0.5", "all_bound_1d", "collinear_poly3_rank4")
    for name, device, host in _beside_libsvm("cuml", names):
        assert device.verdict == host.verdict == "pass", (name, device.reasons)
        assert device.kkt_max == host.kkt_max, name
    from sklearn.svm import SVC

    from maxmargin.certify_models import certify

    case = next(c for c in catalogue("full") if c.name == "heart_scale")
    X, y = case.X, np.where(case.y > 0, "yes", "no")
    mine = certify(_CumlSVC(C=0.5, kernel="rbf", gamma="scale").fit(X, y), X, y)
    theirs = certify(SVC(C=0.5, kernel="rbf", gamma="scale").fit(X, y), X, y)
    assert mine.kkt_violation == theirs.kkt_violation and mine.gap == theirs.gap
    assert mine.optimal and mine.label == theirs.label


def test_a_float32_rounding_of_a_good_answer_is_wrong_only_where_float32_cannot_hold_it(
        mymodule, capsys):
    """Rounding to float32 is not refuted, except on the data whose kernel values (~1e10:
    features ~1.9e4) magnify alpha's rounding: there the decision values move by ~40."""
    code, out, _ = _audit(capsys, "--solver", "mymodule:single")
    wrong = [line for line in out.splitlines() if line.lstrip().startswith("WRONG")]
    assert code == 1 and len(wrong) == 2, out
    assert all("offset_linear_n63_d34" in line and "intercept" in line for line in wrong)


@pytest.mark.parametrize("seed", range(20))
def test_infeasibility_slack_bounds_the_dual_of_a_perturbed_optimum(seed):
    """Theorem check of ``infeasibility_slack``: any alpha off the feasible set by a little
    has ``D(alpha) <= P* + slack``; the slack is 0 for a feasible alpha."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((30, 3))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(30) > 0, 1.0, -1.0)
    C = float(rng.choice([0.1, 1.0, 10.0]))
    kernel = make_kernel("rbf" if seed % 2 else "linear", X=X, gamma=0.5)
    opt = svm_dual(X, y, C=C, kernel=kernel).solve()
    assert opt.status == "optimal"
    P = opt.certificate.primal_objective
    assert infeasibility_slack(np.clip(opt.alpha, 0, C), y, C, opt.b, 1.0) == pytest.approx(
        opt.b * abs(y @ np.clip(opt.alpha, 0, C)), abs=1e-12)
    kmax = float(np.max(kernel.diag(X)))
    for size in (1e-9, 1e-6, 1e-3):
        alpha = opt.alpha + size * C * rng.standard_normal(30)
        alpha[rng.random(30) < 0.3] = C * (1 + size)  # over the box
        D = certify_dual(alpha, opt.b, X, y, C, kernel=kernel).dual_objective
        assert D <= P + infeasibility_slack(alpha, y, C, opt.b, kmax) + 1e-12 * max(1, P)


# --- the summary --------------------------------------------------------------------------
def _row(case, method, verdict="pass", expected="optimal", kkt=1e-4, runtime=0.1,
         tolerances="kkt<0.001"):
    nan = math.nan
    return Row(case=case, area="synthetic", section="audit", method=method, oracle="",
               tolerances=tolerances, status="optimal", expected_status=expected, iterations=1,
               runtime=runtime, objective_error=nan, w_error=nan, b_error=nan, alpha_error=nan,
               alpha_unique=None, decision_error=nan, kkt_max=kkt, duality_gap=nan, bounds=(),
               verdict=verdict, reasons="", exception="")


def test_summary_rates_and_times_by_hand():
    rows = (
        _row("a", "x/loose", runtime=0.09),
        _row("b", "x/loose", verdict="fail", expected="inaccurate", kkt=1.5, runtime=0.01),
        _row("c", "x/loose", verdict="error", expected="", kkt=math.nan),
        _row("d", "x/loose", verdict="skip", expected=""),
        _row("a", "smo/loose", runtime=0.01), _row("b", "smo/loose", runtime=0.01),
        _row("c", "smo/loose", runtime=0.01),
    )
    run = AuditRun("quick", None, rows, ("x", "smo"), ("loose",), 1.0, 100.0)
    x = next(s for s in summarise(run) if s.solver == "x")
    assert x.cases == 3 and x.success == pytest.approx(1 / 3)
    assert x.correct == pytest.approx(2 / 3) and x.wrong == 1 and x.errors == 1
    assert x.worst == 1.5
    # failures are charged the time limit (100 s): times (0.09, 100, 100) vs (0.01, 0.01, 0.01)
    expected = shifted_geometric_mean([0.09, 100.0, 100.0]) / shifted_geometric_mean([0.01] * 3)
    assert x.time_ratio == pytest.approx(expected)
    assert shifted_geometric_mean([0.09, 100.0, 100.0], 0.01) == pytest.approx(
        math.exp((math.log(0.1) + 2 * math.log(100.01)) / 3) - 0.01)


# --- JSON, resume, Dask -------------------------------------------------------------------------
def test_json_document_and_resume(mymodule, capsys):
    out_file = mymodule / "audit.json"
    args = ("--solver", "mymodule:counted", "--case", "two_points,overlap_n40*", "--preset",
            "loose")
    code, _, _ = _audit(capsys, *args, "--json", str(out_file))
    assert code == 0
    calls = (mymodule / "calls.txt").read_text().count("call")
    assert calls == 2
    document = json.loads(out_file.read_text())
    assert {"schema", "suite", "pattern", "rows", "summary", "solvers", "presets"} <= set(
        document)
    methods = {r["method"] for r in document["rows"]}
    assert methods == {"mymodule:counted/loose", "smo/loose"}
    code, _, _ = _audit(capsys, *args, "--resume", str(out_file))
    assert code == 0
    assert (mymodule / "calls.txt").read_text().count("call") == calls  # nothing ran again
    again = json.loads(out_file.read_text())
    strip = [(r["case"], r["method"], r["verdict"], r["kkt_max"]) for r in again["rows"]]
    assert strip == [(r["case"], r["method"], r["verdict"], r["kkt_max"])
                     for r in document["rows"]]


def test_json_to_stdout(mymodule, capsys):
    code, out, err = _audit(capsys, "--solver", "mymodule:good", "--case", "two_points",
                            "--json", "-")
    assert code == 0
    document = json.loads(out)
    assert document["summary"][0]["solver"] == "mymodule:good" and "verdict" in err


def test_dask_workers_give_the_serial_rows(mymodule, capsys):
    pytest.importorskip("dask.distributed")
    args = ("--solver", "mymodule:good", "--case", "two_points,overlap_n40*,circle_rbf",
            "--json", "-")
    serial = json.loads(_audit(capsys, *args)[1])
    code, out, _ = _audit(capsys, *args, "--workers", "1")
    assert code == 0
    dask = json.loads(out)

    def key(doc):
        return [(r["case"], r["method"], r["status"], r["verdict"], r["kkt_max"])
                for r in doc["rows"]]

    assert key(dask) == key(serial)


# --- the method registry ----------------------------------------------------------------------
def test_third_party_solvers_are_registered_methods():
    from maxmargin.kernels import make_kernel

    spec = METHODS["libsvm"]
    assert spec.family == "third_party" and spec.problem == "svm"
    X = np.array([[0.0], [2.0]])
    y = np.array([-1.0, 1.0])
    sol = spec.solve(X, y, C=1.0, kernel=make_kernel("linear"), tol=1e-6)
    assert isinstance(sol, SVMSolution) and sol.status == "optimal"
    assert sol.alpha == pytest.approx([0.5, 0.5]) and sol.b == pytest.approx(-1.0)
    assert "liblinear" not in METHODS  # LIBLINEAR solves another problem than the SVM dual
    assert PEERS["sklearnex"].requires == "sklearnex"


def test_report_writes_markdown_and_json(tmp_path, capsys):
    code, out, _ = _audit(capsys, "--solver", "libsvm", "--report", str(tmp_path), "--case",
                          "two_points,breast_cancer_raw", "--count", "2", "--preset", "loose")
    assert code == 1 and "report written to" in out
    md = (tmp_path / "audit.md").read_text()
    assert "## Full catalogue (2 cases" in md and "## Random campaign (2 cases" in md
    assert "`breast_cancer_raw` (loose): said converged, but m - M = 1.03" in md
    document = json.loads((tmp_path / "audit.json").read_text())
    full, campaign = document["runs"]
    assert full["suite"] == "full" and campaign["suite"] == "random"
    names = [c["name"] for c in full["columns"]]
    rows = [dict(zip(names, r, strict=True)) for r in full["rows"]]
    assert all(r["verdict"] != "skip" for r in rows) and full["skipped"] == 1
    wrong = [r for r in rows if r["verdict"] == "fail"]
    assert [(r["case"], r["method"]) for r in wrong] == [("breast_cancer_raw", "libsvm/loose")]
    assert 1.0 < wrong[0]["kkt_max"] < 1.1
    assert "- **libsvm**: 1 wrong answer in " in md and "(catalogue 1, random 0)" in md
