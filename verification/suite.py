"""The verification runner: every (case x method) of the catalogue into one results table.

For each case of :func:`maxmargin.verification.cases.catalogue` the runner solves the ground
truth once (``svm_dual(...).solve()``, Clarabel at interior-point accuracy) and then runs every
method that applies (:data:`METHODS`, module docstring of :mod:`.cases`). Each run becomes one
:class:`Row` with the fixed schema :data:`COLUMNS`. A method that raises is caught *per row*:
the row records the exception's last line and fails; nothing is swallowed.

A row passes when its status is the expected one, the candidate agrees with the oracle within
the named tolerance preset (:func:`~maxmargin.verification.crosscheck.cross_check`), every
theorem checked on it holds (:mod:`~maxmargin.verification.bounds`) and nothing raised.

Artifacts
---------
The report's figures need more than the table: convergence histories and decision functions.
The runner collects them in :class:`Artifacts` (plain arrays, deterministic: fixed seeds, no
timings): ``histories[(case, method)]`` (SMO: ``iteration``, ``violation``; Gilbert/MDM:
``steps``, ``h`` = f_k - rho and the seed's ``bound``) and ``pictures[case]`` for the 2-D cases
(the oracle's decision values on a grid, its support vectors). The tables of the report are
built from the rows alone.

Test hook
---------
:func:`extra_methods` (a context manager) adds methods -- e.g. a deliberately wrong candidate --
to every run made inside it, including ``maxmargin verify``; a :class:`Method` with an
``applies`` predicate runs on the cases it accepts.
"""

from __future__ import annotations

import contextlib
import math
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

import numpy as np

from maxmargin.results import SVMSolution
from maxmargin.verification import bounds as thm
from maxmargin.verification.bounds import BoundCheck
from maxmargin.verification.cases import Case, catalogue, select
from maxmargin.verification.crosscheck import CrossCheck, cross_check, dual_objective
from maxmargin.verification.tolerances import LOOSE, MEDIUM, ORACLE, TIGHT, Tolerances

__all__ = [
    "COLUMNS",
    "SECTIONS",
    "Row",
    "Outcome",
    "Method",
    "Context",
    "Artifacts",
    "SuiteRun",
    "METHODS",
    "run_suite",
    "extra_methods",
]

#: The results table's columns, in order, with their meaning (the schema of results.json/csv).
COLUMNS: tuple[tuple[str, str], ...] = (
    ("case", "case name (verification/cases.py)"),
    ("area", "the case's area: worked, synthetic, degenerate, scale, kernel, infeasible, real"),
    ("section", "report table: consensus, smo, nearest_point, perceptron, kernels, "
                "infeasibility, theorems"),
    ("method", "the method checked (candidate)"),
    ("oracle", "what it is checked against (a CVXPY oracle, a hand answer or a theorem)"),
    ("tolerances", "the tolerance preset used (verification/tolerances.py)"),
    ("status", "the candidate's status"),
    ("expected_status", "the status it must have"),
    ("iterations", "iterations (or perceptron mistakes); -1 when not applicable"),
    ("runtime", "seconds (the only non-deterministic column)"),
    ("objective_error", "|D_c - D_o| / max(1, |D_o|)"),
    ("w_error", "||w_c - w_o|| / ||w_o|| (linear kernel)"),
    ("b_error", "|b_c - b_o| / max(1, |b_o|), or the distance to the KKT interval of b"),
    ("alpha_error", "max |alpha_c - alpha_o| / max alpha_o, where alpha is unique"),
    ("alpha_unique", "whether the oracle shows alpha is unique (empty when not compared)"),
    ("decision_error", "max |f_c - f_o| / max(1, max |f_o|) on the training points"),
    ("kkt_max", "the candidate's largest pointwise KKT residual (certified rows: its "
                "certificate's maximal KKT violation m - M)"),
    ("duality_gap", "the candidate's relative duality gap |P - D| / max(1, |P|) (certified "
                    "rows: (P - D) / max(1, |P|), P minimised over b)"),
    ("bounds", "theorem checks: name, value, bound, holds"),
    ("verdict", "pass or fail"),
    ("reasons", "why a row failed ('; '-separated)"),
    ("exception", "type and last line of an exception raised by the method, else empty"),
)

#: Report sections (one table each), in order, with their one-line titles.
SECTIONS: dict[str, str] = {
    "consensus": "Oracle consensus: OSQP, primal forms and hand answers against the Clarabel dual",
    "smo": "SMO (three working-set rules) against the oracle",
    "nearest_point": "Gilbert and MDM (nearest points of the class hulls) against the oracle",
    "perceptron": "Perceptron mistakes against Novikoff's bound (R / gamma)^2",
    "kernels": "Kernel cases (poly, RBF, strings, precomputed, callables): every method against "
               "the oracle",
    "infeasibility": "Hard margin on non-separable data: every method must say infeasible",
    "theorems": "Theorems: support vectors <= d + 1, kernel = explicit feature map (quadratic, "
                "strings), the seeds' perceptron forms, one kernel engine = the built-ins",
    "random": "Certified answers (trust reproducers, random campaign): every answer labelled "
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


@dataclass
class Outcome:
    """What a method's run returns to the runner (everything else of the row is derived)."""

    status: str
    oracle: str
    tolerances: str = ""
    iterations: int = -1
    runtime: float = math.nan
    check: CrossCheck | None = None
    bounds: tuple[BoundCheck, ...] = ()
    reasons: list[str] = field(default_factory=list)
    #: the certified rows' numbers (rows with a ``check`` take them from it)
    objective_error: float = math.nan
    kkt_max: float = math.nan
    duality_gap: float = math.nan


@dataclass
class Artifacts:
    """Data for the figures (see the module docstring); deterministic."""

    histories: dict[tuple[str, str], dict[str, np.ndarray]] = field(default_factory=dict)
    pictures: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: per case: ``"n"``, ``"C"``, ``"kernel"`` (for the figures' panel titles)
    cases: dict[str, dict[str, Any]] = field(default_factory=dict)

    def update(self, other: Artifacts) -> None:
        """Take in another run's artifacts (a guarded worker's)."""
        self.histories.update(other.histories)
        self.pictures.update(other.pictures)
        self.cases.update(other.cases)


class Context:
    """What the methods of one case share: the case, its kernel, the oracle, the artifacts."""

    def __init__(self, case: Case, artifacts: Artifacts) -> None:
        self.case = case
        self.kernel = case.make_kernel()
        self.artifacts = artifacts
        artifacts.cases[case.name] = {"n": case.X.shape[0], "C": case.C,
                                      "kernel": self.kernel.describe()}
        self._oracle: SVMSolution | None = None
        self._oracle_error: Exception | None = None

    @property
    def oracle(self) -> SVMSolution:
        """The ground truth: ``svm_dual(X, y, C, kernel).solve()`` (Clarabel), solved once;
        for the linear kernel, a primal form when the dual's answer is not certified.

        An exception is kept and raised again to every method that needs the oracle.
        """
        if self._oracle_error is not None:
            raise RuntimeError(f"the oracle failed: {self._oracle_error}")
        if self._oracle is None:
            from maxmargin.formulations import svm_dual

            c = self.case
            try:
                self._oracle = svm_dual(c.X, c.y, c.C, kernel=self.kernel).solve()
                if self._oracle.status not in ("optimal", "infeasible") and (
                    self.kernel.name == "linear"
                ):
                    self._oracle = self._primal_oracle(self._oracle)
            except Exception as exc:
                self._oracle_error = exc
                raise
        return self._oracle

    def _primal_oracle(self, dual: SVMSolution) -> SVMSolution:
        """Linear kernel, dual not certified: the primal forms (also CVXPY oracles) in turn;
        the first certified one is the ground truth, else the dual's answer stays."""
        import warnings

        from maxmargin.formulations import hard_margin_primal, hinge_loss, soft_margin_primal

        c = self.case
        forms = ([lambda: hard_margin_primal(c.X, c.y)] if c.C is None else
                 [lambda: soft_margin_primal(c.X, c.y, c.C), lambda: hinge_loss(c.X, c.y, c.C)])
        for form in forms:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sol = form().solve()
            if sol.status == "optimal":
                return sol
        return dual

    @property
    def solved(self) -> bool:
        """Whether the oracle has been solved to optimality."""
        return self._oracle is not None and self._oracle.status == "optimal"

    def keep_history(self, method: str, **arrays: Any) -> None:
        self.artifacts.histories[(self.case.name, method)] = {
            k: np.asarray(v, dtype=np.float64) for k, v in arrays.items()
        }


@dataclass(frozen=True)
class Method:
    """A method of the suite: ``run(context) -> Outcome``.

    The standard methods (:data:`METHODS`) run on the cases that list their name in
    ``Case.methods``; an extra method (:func:`extra_methods`) runs on the cases its optional
    ``applies`` predicate accepts (all cases without one).
    """

    name: str
    section: str
    run: Callable[[Context], Outcome]
    applies: Callable[[Case], bool] | None = None
    #: the compiled code it runs, as keys of :data:`WARM_UPS` (warmed up before its worker forks)
    warm: tuple[str, ...] = ()
    #: ``row(case, method, outcome, exception) -> Row``: a method that judges its own rows (the
    #: audit of other solvers, :mod:`.audit`); None: the suite's rule (:func:`_row`)
    row: Callable[..., Row] | None = None


# --- the methods ------------------------------------------------------------------------------
def _compare(ctx: Context, candidate: SVMSolution, tol: Tolerances) -> Outcome:
    """``candidate`` against the case's oracle with the preset ``tol`` (:func:`cross_check`)."""
    oracle = ctx.oracle
    check = cross_check(candidate, oracle, ctx.case.X, ctx.case.y, tolerances=tol)
    runtime = candidate.runtime
    return Outcome(status=candidate.status, oracle=oracle.method, tolerances=tol.name,
                   iterations=candidate.iterations, runtime=runtime, check=check)


def _consensus(ctx: Context) -> Outcome:
    """Clarabel and OSQP on one formulation, OSQP's answer judged against the oracle.

    The formulation is the dual, except for a linear hard margin: there the dual's box is
    unbounded and OSQP's first-order iterations stall before 1e-9 (seen: 200,000 iterations on
    ``separable_n200_d10``), while the primal (d + 1 variables) converges in under 1,000; the
    primal is then the second solver's problem, which also makes the check independent of the
    dual model.
    """
    from maxmargin.formulations import hard_margin_primal, oracle_consensus, svm_dual
    from maxmargin.verification.kkt import kkt_residuals

    c = ctx.case
    if c.C is None and ctx.kernel.name == "linear":
        form = hard_margin_primal(c.X, c.y)
    else:
        form = svm_dual(c.X, c.y, c.C, kernel=ctx.kernel)
    report = oracle_consensus(form)
    out = _compare(ctx, report.solutions[1], ORACLE)
    own = kkt_residuals(ctx.oracle, c.X, c.y).max  # the ground truth must satisfy KKT itself
    if not own <= ORACLE.kkt:
        out.reasons.append(f"the oracle's own KKT residual {own:.3g} > {ORACLE.kkt:.3g}")
    return out


def _primal(ctx: Context) -> Outcome:
    from maxmargin.formulations import hard_margin_primal, soft_margin_primal

    c = ctx.case
    form = hard_margin_primal(c.X, c.y) if c.C is None else soft_margin_primal(c.X, c.y, c.C)
    return _compare(ctx, form.solve(), ORACLE)


def _hinge(ctx: Context) -> Outcome:
    from maxmargin.formulations import hinge_loss

    c = ctx.case
    return _compare(ctx, hinge_loss(c.X, c.y, c.C).solve(), ORACLE)


def _hand(ctx: Context) -> Outcome:
    """The oracle against the case's hand-derived answer (the oracle is the candidate here)."""
    c, a = ctx.case, ctx.case.answer
    if a is None:
        raise RuntimeError(f"case {c.name!r} has no hand-derived answer")
    lo, hi = a.b_interval if a.b_interval is not None else (a.b, a.b)
    hand = SVMSolution(
        alpha=a.alpha, b=0.5 * (lo + hi), w=a.w, dual_objective=a.objective,
        primal_objective=a.objective, status="optimal", iterations=0, method="hand derivation",
        X_train=c.X, y_train=c.y, kernel=ctx.kernel, C=c.C, b_interval=(lo, hi),
    )
    oracle = ctx.oracle
    check = cross_check(oracle, hand, c.X, c.y, tolerances=ORACLE)
    return Outcome(status=oracle.status, oracle=hand.method, tolerances=ORACLE.name,
                   iterations=oracle.iterations, runtime=oracle.runtime, check=check)


def _smo(
    working_set: str, tol: float, preset: Tolerances, precision: str = "single"
) -> Callable[[Context], Outcome]:
    """SMO at ``tol``; the TIGHT rows (tol 1e-6) use ``precision="double"`` (float64 kernel
    cache): float32's rounding of the gradient (~2^-24 max K_tt sum(alpha)) exceeds 1e-6 on
    unscaled data (iris_versicolor_virginica, scale_1e3_soft). Platt's row uses the default
    ``"auto"``, whose specialisations :func:`warm_up` compiles."""

    def run(ctx: Context) -> Outcome:
        from maxmargin.algorithms.smo import smo

        c = ctx.case
        sol = smo(c.X, c.y, C=c.C, kernel=ctx.kernel, tol=tol, working_set=working_set,
                  precision=precision)
        if "violation" in sol.history:
            ctx.keep_history(f"smo/{working_set}", iteration=sol.history["iteration"],
                             violation=sol.history["violation"])
        return _compare(ctx, sol, preset)

    return run


def _rho_and_diameter(ctx: Context) -> tuple[float, float]:
    """The hull distance ``rho = 2 / ||w*||`` from the oracle (``||w*||^2 = (alpha y)^T K
    (alpha y)``) and ``diam(P) + diam(Q)`` in feature space (a bound on the diameter of the
    Minkowski difference)."""
    c, oracle = ctx.case, ctx.oracle
    K = ctx.kernel.gram(c.X)
    ww = 2.0 * (float(np.sum(oracle.alpha)) - dual_objective(oracle.alpha, c.y, K))
    diam = 0.0
    for label in (1.0, -1.0):
        idx = c.y == label
        if ctx.kernel.name == "linear":
            diam += thm.diameter(c.X[idx])
        else:
            Kc = K[np.ix_(idx, idx)]
            dk = np.diag(Kc)
            diam += math.sqrt(max(float(np.max(dk[:, None] + dk[None, :] - 2.0 * Kc)), 0.0))
    return 2.0 / math.sqrt(ww), diam


#: Settings of the nearest-point solvers: vanilla Gilbert converges as O(1/k), so it is run to a
#: relative duality gap of 1e-5 (judged with LOOSE); MDM and Wolfe keep their default 1e-8
#: (TIGHT).
_NEAREST_OPTIONS: dict[str, dict[str, Any]] = {
    "gilbert": {"tol": 1e-5, "max_iter": 3_000_000},
    "mdm": {},
    "wolfe": {},
}


def _nearest(method: str, preset: Tolerances) -> Callable[[Context], Outcome]:
    def run(ctx: Context) -> Outcome:
        from maxmargin.algorithms.gilbert import gilbert_svm

        c = ctx.case
        options = _NEAREST_OPTIONS[method]
        sol = gilbert_svm(c.X, c.y, method=method, kernel=ctx.kernel, **options)
        out = _compare(ctx, sol, preset)
        if c.expected_status == "optimal" and sol.status == "optimal" and "distance" in (
            sol.history
        ):
            rho, diam = _rho_and_diameter(ctx)
            steps, dist = sol.history["iteration"], sol.history["distance"]
            ctx.keep_history(method, steps=steps, h=dist - rho,
                             bound=thm.gilbert_rate_curve(steps, rho, diam))
            if method == "gilbert":  # the seed's theorem is about Gilbert's steps
                out.bounds = (thm.gilbert_rate(dist, steps, rho, diam),)
        return out

    return run


def _hulls(method: str, preset: Tolerances) -> Callable[[Context], Outcome]:
    def run(ctx: Context) -> Outcome:
        c = ctx.case
        P, Q = c.X[c.y > 0], c.X[c.y < 0]
        from maxmargin.algorithms import gilbert_hulls, mdm_hulls, wolfe_hulls

        solve = {"gilbert": gilbert_hulls, "mdm": mdm_hulls, "wolfe": wolfe_hulls}[method]
        hull = solve(P, Q, **_NEAREST_OPTIONS[method])
        check = thm.hull_recovery(hull, ctx.oracle, c.X, c.y, rtol=preset.w)
        return Outcome(status=hull.status, oracle=ctx.oracle.method, tolerances=preset.name,
                       iterations=hull.iterations, runtime=hull.runtime, bounds=(check,))

    return run


def _perceptron(ctx: Context) -> Outcome:
    c = ctx.case
    if ctx.kernel.name == "linear":
        from maxmargin.algorithms.perceptron import perceptron

        res = perceptron(c.X, c.y)
    else:
        from maxmargin.algorithms.kernel_perceptron import kernel_perceptron

        res = kernel_perceptron(c.X, c.y, kernel=ctx.kernel)
    out = Outcome(status=res.status, oracle="separation-margin model (CVXPY)",
                  iterations=res.mistakes, runtime=res.runtime,
                  bounds=(thm.mistake_bound(res, c.X, c.y, bias=True, kernel=ctx.kernel),))
    wrong = int(np.sum(res.predict(c.X) != c.y))
    if res.converged and wrong:
        out.reasons.append(f"converged but misclassifies {wrong} training point(s)")
    return out


def _sv_count(ctx: Context) -> Outcome:
    oracle = ctx.oracle
    return Outcome(status=oracle.status, oracle=oracle.method, iterations=oracle.iterations,
                   runtime=oracle.runtime, bounds=(thm.support_vector_count(oracle),))


def _feature_map(ctx: Context) -> Outcome:
    t0 = time.perf_counter()
    check = thm.feature_map_identity(ctx.case.X)
    return Outcome(status="optimal", oracle="PolyKernel(gamma=1, degree=2, coef0=1)",
                   runtime=time.perf_counter() - t0, bounds=(check,))


def _theorem(check: Callable[[Context], Any], oracle: str) -> Callable[[Context], Outcome]:
    """A method whose row is one theorem check (status "optimal" when it ran)."""

    def run(ctx: Context) -> Outcome:
        t0 = time.perf_counter()
        result = check(ctx)
        return Outcome(status=ctx.case.expected_status, oracle=oracle,
                       runtime=time.perf_counter() - t0, bounds=(result,))

    return run


def _same_as_builtin(ctx: Context) -> Any:
    """The oracle through the kernel engine (a Gram matrix, a callable) against the oracle of
    the catalogue case with the built-in kernel it reproduces (tag ``same_as:NAME``): relative
    difference of the dual objectives and of the decision values on the training points."""
    from maxmargin.verification.cases import catalogue

    name = next(t.split(":", 1)[1] for t in ctx.case.tags if t.startswith("same_as:"))
    builtin = next(c for c in catalogue("full") if c.name == name)
    other = Context(builtin, Artifacts()).oracle
    mine = ctx.oracle
    scale = max(1.0, abs(other.dual_objective))
    err = max(abs(mine.dual_objective - other.dual_objective) / scale,
              float(np.max(np.abs(mine.decision_function(ctx.case.X)
                                  - other.decision_function(builtin.X)))) / scale)
    return thm._check("same_as_builtin", err, 1e-7, builtin=0.0)


def _infeasible_form(kind: str) -> Callable[[Context], Outcome]:
    def run(ctx: Context) -> Outcome:
        from maxmargin.formulations import hard_margin_primal, svm_dual

        c = ctx.case
        form = hard_margin_primal(c.X, c.y) if kind == "primal" else svm_dual(c.X, c.y, None)
        sol = form.solve()
        return Outcome(status=sol.status, oracle="expected status", iterations=sol.iterations,
                       runtime=sol.runtime)

    return run


# --- the random campaign's checks (verification/campaign.py) --------------------------------
def _weak_duality(ctx: Context, sol: SVMSolution) -> list[str]:
    """Weak duality against the oracle, both ways: ``D_c <= P_o`` and ``D_o <= P_c`` (each
    dual value is a lower bound of every primal value), up to round-off."""
    oracle = ctx.oracle
    co, cc = oracle.certificate, sol.certificate
    if oracle.status != "optimal" or co is None or cc is None:
        return []
    slack = 1e-10 * max(1.0, abs(co.primal_objective), abs(cc.primal_objective),
                        float(np.sum(oracle.alpha)), float(np.sum(sol.alpha)))
    reasons = []
    if cc.dual_objective > co.primal_objective + slack:
        reasons.append(f"weak duality broken: D = {cc.dual_objective:.10g} > the oracle's "
                       f"P = {co.primal_objective:.10g}")
    if co.dual_objective > cc.primal_objective + slack:
        reasons.append(f"weak duality broken: the oracle's D = {co.dual_objective:.10g} > "
                       f"P = {cc.primal_objective:.10g}")
    return reasons


def _certified(ctx: Context, sol: SVMSolution, kkt: float | None, gap: float | None) -> Outcome:
    """A candidate judged by its own float64 certificate and weak duality with the oracle:
    ``"optimal"`` must come with ``m - M < kkt`` (and ``gap <= gap``) and with both
    ``D_c <= P_o`` and ``D_o <= P_c``."""
    out = Outcome(status=sol.status, oracle=f"certificate + weak duality vs {ctx.oracle.method}",
                  tolerances=f"kkt<{kkt:g}" if kkt is not None else f"gap<={gap:g}",
                  iterations=sol.iterations, runtime=sol.runtime)
    cert = sol.certificate
    if cert is not None:
        out.kkt_max, out.duality_gap = cert.kkt_violation, cert.gap
        if ctx.oracle.status == "optimal" and sol is not ctx.oracle:
            D_o = ctx.oracle.certificate.dual_objective
            out.objective_error = abs(cert.dual_objective - D_o) / max(1.0, abs(D_o))
    if sol.status != "optimal":
        return out
    if cert is None:
        out.reasons.append("labelled optimal without a certificate")
        return out
    if kkt is not None and not cert.meets(kkt, gap):
        out.reasons.append(f"labelled optimal but its {cert.summary()} misses kkt < {kkt:g}")
    if kkt is None and not (cert.gap <= gap and cert.feasibility <= 1e-9):
        out.reasons.append(f"labelled optimal but its {cert.summary()} misses gap <= {gap:g}")
    out.reasons += _weak_duality(ctx, sol)
    return out


def _oracle_self(ctx: Context) -> Outcome:
    """The oracle's own status and certificate (it is the ground truth of the other rows)."""
    from maxmargin.tolerances import ORACLE_GAP, ORACLE_KKT

    return _certified(ctx, ctx.oracle, ORACLE_KKT, ORACLE_GAP)


def _smo_certified(tol: float, working_set: str = "wss2") -> Callable[[Context], Outcome]:
    def run(ctx: Context) -> Outcome:
        from maxmargin.algorithms.smo import smo

        c = ctx.case
        sol = smo(c.X, c.y, C=c.C, kernel=ctx.kernel, tol=tol, working_set=working_set)
        return _certified(ctx, sol, tol, None)

    return run


def _primal_certified(ctx: Context) -> Outcome:
    from maxmargin.formulations import hard_margin_primal, soft_margin_primal
    from maxmargin.tolerances import ORACLE_GAP, ORACLE_KKT

    c = ctx.case
    form = hard_margin_primal(c.X, c.y) if c.C is None else soft_margin_primal(c.X, c.y, c.C)
    return _certified(ctx, form.solve(), ORACLE_KKT, ORACLE_GAP)


def _nearest_certified(method: str) -> Callable[[Context], Outcome]:
    def run(ctx: Context) -> Outcome:
        from maxmargin.algorithms.gilbert import gilbert_svm

        c = ctx.case
        sol = gilbert_svm(c.X, c.y, method=method, kernel=ctx.kernel)
        return _certified(ctx, sol, None, 1e-6)

    return run


NEAREST = ("nearest",)

#: Every standard method by name (cases list the names that apply to them).
METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("consensus", "consensus", _consensus),
        Method("hand", "consensus", _hand),
        Method("primal", "consensus", _primal),
        Method("hinge", "consensus", _hinge),
        Method("smo/wss2", "smo", _smo("wss2", 1e-6, TIGHT, "double"), warm=("smo",)),
        Method("smo/wss1", "smo", _smo("wss1", 1e-6, TIGHT, "double"), warm=("smo",)),
        Method("smo/platt", "smo", _smo("platt", 1e-3, MEDIUM, "auto"), warm=("platt",)),
        Method("gilbert", "nearest_point", _nearest("gilbert", LOOSE), warm=NEAREST),
        Method("mdm", "nearest_point", _nearest("mdm", TIGHT), warm=NEAREST),
        Method("wolfe", "nearest_point", _nearest("wolfe", TIGHT), warm=NEAREST),
        Method("hulls/gilbert", "nearest_point", _hulls("gilbert", LOOSE), warm=NEAREST),
        Method("hulls/mdm", "nearest_point", _hulls("mdm", TIGHT), warm=NEAREST),
        Method("hulls/wolfe", "nearest_point", _hulls("wolfe", TIGHT), warm=NEAREST),
        Method("perceptron", "perceptron", _perceptron, warm=("perceptron",)),
        Method("sv_count", "theorems", _sv_count),
        Method("feature_map", "theorems", _feature_map),
        Method("string_feature_map", "theorems", _theorem(
            lambda ctx: thm.string_feature_map_identity(ctx.case.X, ctx.kernel),
            "enumeration of seed 004's definition")),
        Method("same_as_builtin", "theorems", _theorem(
            _same_as_builtin, "the oracle with the built-in kernel")),
        Method("perceptron_variant", "theorems", _theorem(
            lambda ctx: thm.perceptron_variant(ctx.case.X, ctx.case.y),
            "seed 001: (T + 1) <= (R / gamma)^2"), warm=("perceptron",)),
        Method("one_hot", "theorems", _theorem(
            lambda ctx: thm.one_hot_separable(ctx.case.X, ctx.case.y),
            "seed 003: w* = y separates the one-hot map"), warm=("perceptron",)),
        Method("homogeneous", "theorems", _theorem(
            lambda ctx: thm.homogeneous_form(ctx.case.X, ctx.case.y),
            "seed 000: bias folded into w"), warm=("perceptron",)),
        Method("hard_primal", "infeasibility", _infeasible_form("primal")),
        Method("dual_hard", "infeasibility", _infeasible_form("dual")),
        Method("oracle", "random", _oracle_self),
        Method("smo", "random", _smo_certified(1e-3), warm=("smo",)),
        Method("smo/tight", "random", _smo_certified(1e-6), warm=("smo",)),
        Method("smo/platt/certified", "random", _smo_certified(1e-3, "platt"), warm=("platt",)),
        Method("primal/certified", "random", _primal_certified),
        Method("mdm/certified", "random", _nearest_certified("mdm"), warm=NEAREST),
        Method("wolfe/certified", "random", _nearest_certified("wolfe"), warm=NEAREST),
    )
}

_EXTRA: list[Method] = []


@contextlib.contextmanager
def extra_methods(*methods: Method) -> Iterator[None]:
    """Add ``methods`` to every suite run inside the ``with`` block (a test hook)."""
    for m in methods:
        if not isinstance(m, Method):
            raise ValueError(f"`methods` must be Method instances; got {type(m).__name__}.")
    _EXTRA.extend(methods)
    try:
        yield
    finally:
        for m in methods:
            _EXTRA.remove(m)


def _methods_for(case: Case) -> list[Method]:
    chosen = [METHODS[name] for name in case.methods]
    chosen += [m for m in _EXTRA if m.applies is None or m.applies(case)]
    return chosen


def _section(case: Case, method: Method) -> str:
    if case.expected_status == "infeasible":
        return "infeasibility"
    if case.kernel_name != "linear" and method.section in ("consensus", "smo",
                                                           "nearest_point"):
        return "kernels"
    return method.section


def _last_line(exc: BaseException) -> str:
    lines = traceback.format_exception_only(type(exc), exc)
    return lines[-1].strip() if lines else type(exc).__name__


def _row(case: Case, method: Method, outcome: Outcome | None, exception: str) -> Row:
    if method.row is not None:
        return method.row(case, method, outcome, exception)
    nan = math.nan
    o = outcome or Outcome(status="error", oracle="")
    chk = o.check
    reasons = list(o.reasons)
    if exception:
        reasons.insert(0, f"raised {exception}")
    elif o.status != case.expected_status and method.section != "perceptron":
        reasons.insert(0, f"status {o.status!r} != expected {case.expected_status!r}")
    elif method.section == "perceptron" and o.status != "converged":
        reasons.insert(0, f"status {o.status!r}: the perceptron did not converge")
    if chk is not None:
        reasons += [r for r in chk.reasons if not r.startswith("candidate status")]
    for b in o.bounds:
        if not b.holds:
            reasons.append(f"{b.name}: {b.value:.6g} > bound {b.bound:.6g}")
    expected = "converged" if method.section == "perceptron" else case.expected_status
    return Row(
        case=case.name, area=case.area, section=_section(case, method), method=method.name,
        oracle=o.oracle, tolerances=o.tolerances, status=o.status, expected_status=expected,
        iterations=int(o.iterations), runtime=float(o.runtime),
        objective_error=chk.objective_error if chk else o.objective_error,
        w_error=chk.w_error if chk else nan,
        b_error=chk.b_error if chk else nan,
        alpha_error=chk.alpha_error if chk else nan,
        alpha_unique=chk.alpha_unique if chk and not math.isnan(chk.objective_error) else None,
        decision_error=chk.decision_error if chk else nan,
        kkt_max=chk.kkt_max if chk else o.kkt_max,
        duality_gap=chk.duality_gap if chk else o.duality_gap,
        bounds=tuple(o.bounds), verdict="fail" if reasons else "pass",
        reasons="; ".join(reasons), exception=exception,
    )


def _picture(ctx: Context, size: int = 121) -> None:
    """The oracle's decision values on a grid around a 2-D case (for the report's figures);
    the points alone (``F`` None) when the oracle has no separator (an infeasible case)."""
    c = ctx.case
    oracle = ctx.oracle if ctx.solved else None
    lo, hi = c.X.min(axis=0), c.X.max(axis=0)
    centre = 0.5 * (lo + hi)
    span = float(np.max(hi - lo))
    half = 0.65 * span if span > 0 else 1.0  # a square window with a margin around the data
    xs = np.linspace(centre[0] - half, centre[0] + half, size)
    ys = np.linspace(centre[1] - half, centre[1] + half, size)
    gx, gy = np.meshgrid(xs, ys)
    F, sv, at_C = None, np.zeros(0, dtype=int), np.zeros(0, dtype=int)
    if oracle is not None:
        grid = np.column_stack([gx.ravel(), gy.ravel()])
        F = oracle.decision_function(grid).reshape(gx.shape)
        top = float(np.max(oracle.alpha))
        sv = oracle.support(1e-6 * top)
        if c.C is not None:  # alpha = C (margin errors or on the margin at the bound)
            at_C = sv[oracle.alpha[sv] >= c.C * (1.0 - 1e-6)]
            sv = np.setdiff1d(sv, at_C)
    ctx.artifacts.pictures[c.name] = {
        "X": c.X, "y": c.y, "gx": gx, "gy": gy, "F": F, "sv": sv, "at_C": at_C,
        "kernel": ctx.kernel.describe(), "C": c.C, "status": c.expected_status,
    }


@dataclass(frozen=True)
class SuiteRun:
    """Rows, artifacts and what was run."""

    suite: str
    pattern: str | None
    rows: tuple[Row, ...]
    artifacts: Artifacts
    elapsed: float

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.rows)


def _one_row(ctx: Context, case: Case, method: Method) -> tuple[Row, float]:
    """Run ``method`` on ``ctx``'s case; an exception becomes the row's failure."""
    outcome, exception = None, ""
    t = time.perf_counter()
    try:
        outcome = method.run(ctx)
    except Exception as exc:  # recorded in the row, which fails
        exception = _last_line(exc)
    if outcome is not None and math.isnan(outcome.runtime):
        outcome.runtime = time.perf_counter() - t
    return _row(case, method, outcome, exception), time.perf_counter() - t


def _case_rows_inline(case: Case, methods: Sequence[Method], artifacts: Artifacts) -> Iterator[
    tuple[Row, float]
]:
    """Every row of one case, in this process (no guard)."""
    ctx = Context(case, artifacts)
    for method in methods:
        yield _one_row(ctx, case, method)
    if case.is_2d and case.area not in ("random", "data"):
        _picture(ctx)


def _worker(case: Case, methods: Sequence[Method], conn: Any) -> None:  # pragma: no cover
    """The forked worker of :func:`_case_rows_guarded` (runs in the child process)."""
    import warnings

    warnings.simplefilter("ignore")
    artifacts = Artifacts()
    for k, row_and_time in enumerate(_case_rows_inline(case, methods, artifacts)):
        try:
            conn.send(("row", row_and_time))
        except Exception as exc:  # a row that cannot travel still becomes a (failed) row
            conn.send(("row", _failed_row(case, methods[k], "the row could not be sent "
                                          f"from the worker: {_last_line(exc)}",
                                          row_and_time[1])))
    conn.send(("artifacts", artifacts))
    conn.close()


#: ``run_suite(stream=...)``: the results file is rewritten at most this often (and at the end).
STREAM_EVERY_S = 2.0


def _progress_bar(total: int, stream: TextIO) -> Any:
    """A tqdm bar (i/N, failures so far, elapsed and remaining time) on ``stream``, redrawn on
    every row: with a minimum interval, the last rows of a burst stayed hidden until the next
    row, which on a cold cache comes after a compile (the oracles' rows at 2 s showed at 14 s)."""
    from tqdm import tqdm

    return tqdm(total=total, file=stream, unit="check", dynamic_ncols=True, mininterval=0.0,
                miniters=1)


def numba_cache_is_cold() -> bool:
    """Whether SMO's compiled driver has no entry in Numba's on-disk cache yet (a first run
    compiles the loops, which takes tens of seconds)."""
    from maxmargin._jit import cache_is_cold
    from maxmargin.algorithms.smo import _solve_pairs

    return cache_is_cold(_solve_pairs)


#: A guard (seconds) long enough for a worker to compile its methods' code itself.
COMPILE_GUARD_S = 60.0
_WARM_X = np.array([[0.0, 0.0], [1.0, 0.2], [2.0, 2.0], [3.0, 2.5]])
_WARM_Y = np.array([-1.0, -1.0, 1.0, 1.0])
_KERNELS = ("linear", "rbf", "poly")


def _warm_smo(working_sets: tuple[str, ...]) -> Callable[[], None]:
    def warm() -> None:
        from maxmargin.algorithms import smo

        for kernel in _KERNELS:
            for working_set in working_sets:
                for precision in ("auto", "double"):
                    for C in (1.0, None):
                        smo(_WARM_X, _WARM_Y, C=C, kernel=kernel, working_set=working_set,
                            precision=precision)

    return warm


def _warm_nearest() -> None:
    from maxmargin.algorithms import gilbert_svm, mdm_hulls

    for kernel in _KERNELS:
        for method in ("gilbert", "mdm", "wolfe"):
            gilbert_svm(_WARM_X, _WARM_Y, method=method, kernel=kernel)
    mdm_hulls(_WARM_X[_WARM_Y > 0], _WARM_X[_WARM_Y < 0])


def _warm_perceptrons() -> None:
    from maxmargin.algorithms import kernel_perceptron, perceptron

    for kernel in _KERNELS:
        kernel_perceptron(_WARM_X, _WARM_Y, kernel=kernel)
    perceptron(_WARM_X, _WARM_Y)


#: The compiled code of the methods (``Method.warm``), by piece: each call compiles (or loads
#: from Numba's on-disk cache) its specialisations, on a four-point problem.
WARM_UPS: dict[str, Callable[[], None]] = {
    "smo": _warm_smo(("wss2", "wss1")),
    "platt": _warm_smo(("platt",)),
    "nearest": _warm_nearest,
    "perceptron": _warm_perceptrons,
}
_WARMED: set[str] = set()


def warm_up(pieces: Iterable[str] | None = None) -> None:
    """Compile (or load from Numba's on-disk cache) the specialisations of ``pieces`` (keys of
    :data:`WARM_UPS`; all when None) in this process, once. ``maxmargin compile`` warms all of
    them up after an install; ``verify`` warms up each case's pieces before forking its
    worker, so that the worker inherits them and the first rows come before all is compiled."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for piece in WARM_UPS if pieces is None else pieces:
            if piece not in _WARMED:
                WARM_UPS[piece]()
                _WARMED.add(piece)


def _failed_row(case: Case, method: Method, why: str, elapsed: float) -> tuple[Row, float]:
    outcome = Outcome(status="error", oracle="", runtime=elapsed, reasons=[why])
    return _row(case, method, outcome, ""), elapsed


def _case_rows_guarded(
    case: Case, methods: Sequence[Method], artifacts: Artifacts, timeout: float
) -> Iterator[tuple[Row, float]]:
    """Every row of one case, run in a forked worker; a method that runs past ``timeout``
    seconds (or kills its process) becomes a failed row and a new worker takes the rest."""
    import multiprocessing as mp

    context = mp.get_context("fork")
    remaining = list(methods)
    while remaining:
        receiver, sender = context.Pipe(duplex=False)
        worker = context.Process(target=_worker, args=(case, remaining, sender), daemon=True)
        worker.start()
        sender.close()
        started = time.perf_counter()
        try:
            while remaining:
                if not receiver.poll(timeout):
                    worker.kill()
                    yield _failed_row(case, remaining.pop(0), f"timed out after {timeout:g} s "
                                      "(wall-clock guard); the run was stopped",
                                      time.perf_counter() - started)
                    break
                try:
                    kind, payload = receiver.recv()
                except EOFError:
                    worker.join(1.0)
                    yield _failed_row(case, remaining.pop(0), "the worker process died "
                                      f"(exit code {worker.exitcode})",
                                      time.perf_counter() - started)
                    break
                if kind == "row":
                    remaining.pop(0)
                    yield payload
                    started = time.perf_counter()
            else:
                if receiver.poll(timeout):
                    kind, payload = receiver.recv()
                    if kind == "artifacts":
                        artifacts.update(payload)
        finally:
            receiver.close()
            worker.join(5.0)
            if worker.is_alive():
                worker.kill()


def run_suite(
    suite: str = "quick",
    pattern: str | Sequence[str] | None = None,
    *,
    progress: TextIO | None = sys.stderr,
    cases: Sequence[Case] | None = None,
    count: int | None = None,
    seed: int = 0,
    start: int = 0,
    timeout: float | None = None,
    client: Any = None,
    resume: Sequence[Row] | None = None,
    stream: str | None = None,
) -> SuiteRun:
    """Run every method on every case of ``suite`` whose name matches ``pattern``.

    Parameters
    ----------
    suite : {"quick", "full", "random"}
        ``"random"`` is the adversarial campaign (:mod:`.campaign`): ``count`` cases from
        ``seed``, starting at case ``start``.
    pattern : str or sequence of str, optional
        Shell-style patterns or substrings of case names (:func:`.cases.select`); a case runs
        when it matches any of them.
    progress : text stream or None
        Where the progress bar (checks done of all, failures so far, time left) and one line
        per failed row go (default stderr); None for silence. A failed random case also prints
        its one-line reproducer.
    cases : sequence of Case, optional
        Run these instead of the catalogue (``suite`` is then only a label).
    count, seed, start : int
        The random campaign's size, seed and first case index.
    timeout : float, optional
        Wall-clock guard in seconds per (case x method): each case runs in a forked worker and a
        method that runs longer (or crashes its process) becomes a failed row with the reason;
        the other rows are kept. None runs everything in this process, unguarded.
    client : dask.distributed.Client, optional
        Run each case as a task on this Dask cluster (:mod:`.sweep`); the rows are the same as
        a serial run's, in the same order.
    resume : sequence of Row, optional
        Rows already computed (:func:`.sweep.load_rows`): their ``(case, method)`` are not run
        again, and they are part of the result.
    stream : path, optional
        Write the results (JSON, as ``maxmargin verify --json``) atomically as rows arrive
        (at most every :data:`STREAM_EVERY_S` seconds, and at the end).

    Returns
    -------
    SuiteRun
    """
    from maxmargin._validation import check_choice

    t0 = time.perf_counter()
    check_choice(suite, "suite", ("quick", "full", "random", "data"))
    if cases is not None:
        pool = tuple(cases)
    elif suite == "random":
        from maxmargin._validation import check_positive_int
        from maxmargin.verification.campaign import random_cases

        if count is None:
            raise ValueError("`count` is needed for the random suite (e.g. --count 100).")
        count = check_positive_int(count, "count")
        start = check_positive_int(start, "start", minimum=0)
        seed = check_positive_int(seed, "seed", minimum=0)
        pool = random_cases(count, seed, start)
    else:
        pool = catalogue(suite)
    patterns = [pattern] if pattern is None or isinstance(pattern, str) else list(pattern)
    chosen = tuple(c for c in pool if any(c in select((c,), p) for p in patterns))
    if not chosen:
        shown = ", ".join(repr(p) for p in patterns)
        raise ValueError(f"`case` pattern {shown} matches no case of the {suite} suite.")
    if timeout is not None:
        from maxmargin._validation import check_positive

        timeout = check_positive(timeout, "timeout")
    label = suite if suite != "random" else f"random(seed={seed}, start={start}, count={count})"
    shown_pattern = pattern if isinstance(pattern, str | None) else ",".join(pattern)
    artifacts = Artifacts()
    done = {(r.case, r.method): r for r in (resume or ())}
    plan = [(case, [m for m in _methods_for(case) if (case.name, m.name) not in done])
            for case in chosen]
    new_rows: dict[tuple[str, str], Row] = {}
    total = sum(len(ms) for _, ms in plan)
    bar = None if progress is None else _progress_bar(total, progress)
    failures = 0
    last_write = 0.0

    def ordered() -> list[Row]:
        """Every row so far in plan order (resumed ones included)."""
        out = []
        for case in chosen:
            for m in _methods_for(case):
                row = new_rows.get((case.name, m.name)) or done.get((case.name, m.name))
                if row is not None:
                    out.append(row)
        return out

    def record(case: Case, row: Row, elapsed: float) -> None:
        nonlocal failures, last_write
        new_rows[(case.name, row.method)] = row
        if stream is not None and time.perf_counter() - last_write > STREAM_EVERY_S:
            from maxmargin.verification.sweep import write_rows

            write_rows(stream, ordered(), label, shown_pattern)
            last_write = time.perf_counter()
        if bar is None:
            return
        failures += not row.passed
        bar.set_postfix_str(f"{failures} failed; {case.name} {row.method}", refresh=False)
        bar.update(1)
        if not row.passed:
            bar.write(f"FAIL {case.name} / {row.method} ({elapsed:.2f} s): {row.reasons}",
                      file=progress)
            if case.area == "random":
                from maxmargin.verification.campaign import reproducer

                index = int(case.name.rsplit("_i", 1)[1])
                bar.write(f"      reproduce: {reproducer(seed, index)}", file=progress)

    if client is None:
        # guarded: each worker inherits the compiled code of its case's methods, warmed up
        # here first; on an empty Numba cache (and a guard that allows a compile) the worker
        # compiles them into the cache instead, so that rows come while the rest compiles,
        # and this process loads them from the cache afterwards. The worker then runs the
        # methods that need no compiled code first (the oracles': rows within seconds);
        # ordered() keeps the plan's order for the table.
        defer = (timeout is not None and timeout >= COMPILE_GUARD_S
                 and numba_cache_is_cold())
        for case, methods in plan:
            pieces = [piece for m in methods for piece in m.warm]
            if defer:
                methods = sorted(methods, key=lambda m: bool(m.warm))
            if timeout is not None and not defer:
                warm_up(pieces)
            produce = (_case_rows_inline(case, methods, artifacts) if timeout is None
                       else _case_rows_guarded(case, methods, artifacts, timeout))
            for row, elapsed in produce:
                record(case, row, elapsed)
            if defer:
                warm_up(pieces)
    else:
        _run_on_client(client, plan, suite, seed, timeout, artifacts, record)
    if bar is not None:
        bar.close()
    rows = ordered()
    if stream is not None:
        from maxmargin.verification.sweep import write_rows

        write_rows(stream, rows, label, shown_pattern)
    return SuiteRun(suite=label, pattern=shown_pattern, rows=tuple(rows), artifacts=artifacts,
                    elapsed=time.perf_counter() - t0)


def _run_on_client(
    client: Any, plan: Sequence[tuple[Case, list[Method]]], suite: str, seed: int,
    timeout: float | None, artifacts: Artifacts, record: Callable[[Case, Row, float], None],
) -> None:
    """Every case of ``plan`` as one Dask task (:func:`.sweep.run_case_task`); a task that
    fails as a whole gives one failed row per method, with the reason."""
    from dask.distributed import as_completed

    from maxmargin.verification.sweep import case_recipe, run_case_task

    if timeout is not None:  # each worker loads the compiled code once; its forks inherit it
        client.run(warm_up)
    futures = {}
    for case, methods in plan:
        if methods:
            future = client.submit(run_case_task, case_recipe(case, suite, seed), methods,
                                   timeout, pure=False)
            futures[future] = (case, methods)
    for future in as_completed(list(futures)):
        case, methods = futures.pop(future)
        try:
            pairs, produced = future.result()
        except Exception as exc:  # KilledWorker, a lost worker, a task that raised
            why = f"the Dask task failed: {_last_line(exc)}"
            for m in methods:
                record(case, *_failed_row(case, m, why, math.nan))
            continue
        artifacts.update(produced)
        for row, elapsed in pairs:
            record(case, row, elapsed)
