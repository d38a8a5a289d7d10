"""What the checks of one case share: the case, its kernel, the oracle (solved once), the
figures' artifacts; what a check returns (:class:`Outcome`) and what a check is
(:class:`Method`).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cvxpy as cp
import numpy as np

from maxmargin.algorithms import dcd_svc, smo
from maxmargin.certificate import Certificate, certify_svm
from maxmargin.certificate_nu import (
    below_resolution,
    certify_nu_svm,
    certify_one_class,
    hull_weight,
)
from maxmargin.formulations import (
    hard_margin_primal,
    hinge_loss,
    nu_svm_dual,
    nu_svm_primal,
    one_class_dual,
    one_class_primal,
    soft_margin_primal,
    svm_dual,
)
from maxmargin.formulations._common import c_output_silenced
from maxmargin.formulations.nu import NuSolution
from maxmargin.kernels import Kernel
from maxmargin.results import SVMSolution
from maxmargin.tolerances import ORACLE_GAP, ORACLE_KKT, REFERENCE_KKT, REFERENCE_LINEAR_KKT
from maxmargin.verification.bounds import BoundCheck, gram_features
from maxmargin.verification.case import Case
from maxmargin.verification.crosscheck import CrossCheck

__all__ = ["Outcome", "Artifacts", "Context", "Method"]


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
    #: the check judged the status itself (an honest non-convergence is not a failure there)
    status_judged: bool = False


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

    def __init__(
        self, case: Case, artifacts: Artifacts, *, oracle: SVMSolution | None = None,
        oracle_error: str | None = None,
    ) -> None:
        self.case = case
        self.kernel = case.make_kernel()
        self.artifacts = artifacts
        artifacts.cases[case.name] = {"n": case.X.shape[0], "C": case.C,
                                      "kernel": self.kernel.describe()}
        if case.problem != "c_svc":
            artifacts.cases[case.name]["nu"] = case.nu
        self._oracle = oracle
        self._oracle_error = oracle_error
        self._outside: Certificate | None = None

    @property
    def oracle(self) -> SVMSolution:
        """The ground truth, solved once: ``svm_dual(X, y, C, kernel).solve()`` (Clarabel; for
        the linear kernel a primal form when the dual's answer is not certified), or for a case
        whose ``reference`` is ``"smo"`` (too large for the CVXPY oracle) a float64 SMO run to
        ``tol = REFERENCE_KKT`` (its certificate is judged by the ``oracle`` row). A ν case's
        is ``nu_svm_dual`` / ``one_class_dual`` (a certified
        :class:`~maxmargin.formulations.nu.NuSolution`), or when that is not certified the
        primal oracle on a factor of the Gram matrix (:func:`_nu_primal_oracle`).

        A failure is kept and raised again, naming the reference, to every method that needs it.
        """
        return self.reference(Context._solve_oracle)

    def _solve_oracle(self) -> Any:
        """The case's ground truth (:attr:`oracle`), solved now."""
        c = self.case
        if c.problem != "c_svc":
            return self._nu_oracle()
        if c.reference == "dcd":
            sol = dcd_svc(c.X, c.y, C=c.C, tol=REFERENCE_LINEAR_KKT)
            return dataclasses.replace(
                sol, method=f"{sol.method} (reference: tol {REFERENCE_LINEAR_KKT:g})")
        if c.reference == "smo":
            sol = smo(c.X, c.y, C=c.C, kernel=self.kernel, tol=REFERENCE_KKT,
                      precision="double")
            return dataclasses.replace(
                sol, method=f"{sol.method} (reference: float64, tol {REFERENCE_KKT:g})")
        sol = svm_dual(c.X, c.y, c.C, kernel=self.kernel).solve()
        if sol.status not in ("optimal", "infeasible") and self.kernel.name == "linear":
            sol = self._primal_oracle(sol)
        return sol

    @property
    def outside(self) -> Certificate:
        """An outside solver's certificate of the case: PIQP (a proximal interior-point method)
        on the plain dual ``max sum(a) - 1/2 a^T Q a``, ``0 <= a <= C``, ``y . a = 0``, in the
        user's units (no centring, scaling or polish of maxmargin's), its answer judged by the
        float64 certificate (its weak-duality gap; the KKT violation of an interior point is
        not meaningful before its alphas are put on their bounds). Solved once."""
        if self._outside is None:
            self._outside = outside_certificate(self.case.X, self.case.y, self.case.C,
                                                self.kernel)
        return self._outside

    def prepare(self, solve: Callable[[Context], Any] | None = None
                ) -> tuple[Any | None, str | None]:
        """Solve the reference now (the guarded runner times it on its own): the oracle, or
        ``solve(self)`` when given (:meth:`reference`); ``(answer, None)`` or ``(None, why it
        failed)``."""
        try:
            return self.reference(Context._solve_oracle if solve is None else solve), None
        except Exception:  # kept in _oracle_error, with its text
            return None, self._oracle_error

    def reference(self, solve: Callable[[Context], Any]) -> Any:
        """``solve(self)``, solved once and kept: the case's oracle (:attr:`oracle`), or the
        reference of a method that judges against another problem's ground truth
        (``Method.reference``, the ν audit's), in the oracle's place. A later worker of a
        guarded run is given it, or its failure, which is raised again."""
        if self._oracle_error is not None:
            raise RuntimeError(f"the reference failed: {self._oracle_error}")
        if self._oracle is None:
            try:
                self._oracle = solve(self)
            except Exception as exc:
                self._oracle_error = f"{type(exc).__name__}: {exc}"
                raise
        return self._oracle

    def _nu_oracle(self) -> NuSolution:
        """The ν dual oracle; not certified, the primal oracle on ``Z`` with ``Z Z^T = K``
        (the data for the linear kernel; else :func:`~.bounds.gram_features`), its ``alpha``
        (the margin constraints' duals) judged on the case's kernel (:func:`_nu_primal_oracle`);
        the first certified answer, else the dual's."""
        c = self.case
        one = c.problem == "one_class"
        dual = (one_class_dual(c.X, c.nu, kernel=self.kernel) if one
                else nu_svm_dual(c.X, c.y, c.nu, kernel=self.kernel)).solve()
        if dual.status == "optimal":
            return dual
        primal = _nu_primal_oracle(c.X, None if one else c.y, c.nu, self.kernel)
        return primal if primal.status == "optimal" else dual

    def _primal_oracle(self, dual: SVMSolution) -> SVMSolution:
        """Linear kernel, dual not certified: the primal forms (also CVXPY oracles) in turn;
        the first certified one is the ground truth, else the dual's answer stays."""


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


def _nu_primal_oracle(X: Any, y: np.ndarray | None, nu: float, kernel: Kernel) -> NuSolution:
    """The ν primal oracle (``nu_svm_primal`` / ``one_class_primal``, ``y`` None) on ``Z`` with
    ``Z Z^T = K`` (eigenvalues below 1e-12 of the largest dropped), its ``alpha`` judged by the
    ν certificate on ``(X, kernel)``: "optimal" only at ``ORACLE_KKT`` and ``ORACLE_GAP``; the
    offsets are the judge's (``w = 0`` below its resolution)."""
    linear = kernel.name == "linear"
    Z = X if linear else gram_features(X, False, kernel)
    with warnings.catch_warnings():  # judged below
        warnings.simplefilter("ignore")
        sol = (one_class_primal(Z, nu) if y is None else nu_svm_primal(Z, y, nu)).solve()
    if y is None:
        cert = certify_one_class(sol.alpha, X, nu, kernel)
    else:
        cert = certify_nu_svm(sol.alpha, X, y, nu, kernel)
    meet = sol.hulls_meet or (
        math.isfinite(cert.dual_objective)
        and below_resolution(cert, np.asarray(sol.alpha), hull_weight(nu, y is None)))
    status = "optimal" if cert.meets(ORACLE_KKT, ORACLE_GAP) else (
        "inaccurate" if sol.status == "optimal" else sol.status)
    rho, b = (0.0, 0.0) if meet else (cert.margin, cert.b)
    l = X.shape[0]
    return dataclasses.replace(
        sol, b=b, rho=rho, w=(np.zeros(X.shape[1]) if meet else sol.w) if linear else None,
        primal_objective=cert.primal_objective, dual_objective=cert.dual_objective,
        status=status, C=1.0 / (rho * l) if y is not None and rho > 0.0 else math.nan,
        hulls_meet=bool(meet), X_train=X, kernel=kernel, certificate=cert,
        method=f"{sol.method} on Z Z^T = K (the dual oracle was not certified)",
        message=f"{sol.message}; judged on the case's kernel: {cert.summary()}")


def outside_certificate(X: Any, y: np.ndarray, C: float | None, kernel: Kernel) -> Certificate:
    """The certificate of PIQP's answer to the plain dual (:attr:`Context.outside`); NaN
    fields when PIQP fails."""
    n = y.shape[0]
    G = kernel.gram(X.toarray() if hasattr(X, "toarray") else X)
    Q = 0.5 * (y[:, None] * G * y[None, :] + (y[:, None] * G * y[None, :]).T)
    a = cp.Variable(n)
    constraints = [a >= 0, y @ a == 0] + ([] if C is None else [a <= C])
    problem = cp.Problem(cp.Maximize(cp.sum(a) - 0.5 * cp.quad_form(a, cp.psd_wrap(Q))),
                         constraints)
    try:
        with warnings.catch_warnings(), c_output_silenced(True):
            warnings.simplefilter("ignore")
            problem.solve(solver="PIQP", eps_abs=1e-10, eps_rel=1e-10, max_iter=500)
    except Exception:  # the outside solver failed: it certifies nothing
        return Certificate(*([math.nan] * 6))
    if a.value is None:
        return Certificate(*([math.nan] * 6))
    alpha = np.clip(np.asarray(a.value, dtype=np.float64), 0.0, math.inf if C is None else C)
    return certify_svm(alpha, X, y, C, kernel)


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
    #: whether it needs the case's reference (solved, and timed, before it in a guarded run)
    needs_oracle: bool = True
    #: ``reference(context)``: the reference it needs when not the case's oracle (solved once
    #: per case, as the oracle is: :meth:`Context.reference`); None: the oracle
    reference: Callable[[Context], Any] | None = None
    #: ``row(case, method, outcome, exception) -> Row``: a method that judges its own rows (the
    #: audit of other solvers, :mod:`.audit`); None: the suite's rule
    row: Callable[..., Any] | None = None
