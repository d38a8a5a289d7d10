r"""ν-SVC and one-class SVM oracles (CVXPY), primal and dual, certified in float64.

ν-SVC (Schölkopf et al. 2000), ``l`` points, Schölkopf's scaling (LIBSVM's ``Solver_NU``
works with ``l alpha``, its decision function divided by its ``r = l rho``):

.. math::

    \min_{w, b, \rho \ge 0, \xi \ge 0} \tfrac12 \|w\|^2 - \nu\rho + \tfrac1l \textstyle\sum_i \xi_i
    \;\text{s.t.}\; y_i (w \cdot \phi(x_i) + b) \ge \rho - \xi_i; \qquad
    \min_\alpha \tfrac12 \alpha^T Q \alpha \;\text{s.t.}\; 0 \le \alpha_i \le \tfrac1l,\;
    y^T \alpha = 0,\; e^T \alpha \ge \nu,

``f(x) = sum_i alpha_i y_i K(x_i, x) + b``. Feasible for ``0 < nu <= nu_max = 2 * min(l_+, l_-) /
l``. One-class (Schölkopf et al. 2001; LIBSVM works with ``nu l alpha``):

.. math::

    \min_{w, \rho, \xi \ge 0} \tfrac12 \|w\|^2 + \tfrac{1}{\nu l} \textstyle\sum_i \xi_i - \rho
    \;\text{s.t.}\; w \cdot \phi(x_i) \ge \rho - \xi_i; \qquad
    \min_\alpha \tfrac12 \alpha^T K \alpha \;\text{s.t.}\; 0 \le \alpha_i \le \tfrac{1}{\nu l},\;
    e^T \alpha = 1,

``f(x) = sum_i alpha_i K(x_i, x) - rho``, ``0 < nu <= 1``. Geometrically the ν-SVC dual is
``(nu / 2)`` times the nearest points of the classes' reduced hulls ``RCH(2 / (nu l))`` and the
one-class dual the point of ``RCH(1 / (nu l))`` nearest the origin.

``sample_weight`` (positive ``W``) gives LIBSVM's per-sample bounds ``C_i = W_i``: ``1 / l``
becomes ``W_i / sum W`` in the bound of ``alpha_i`` and in the weight of ``xi_i`` (one-class:
``W_i / (nu sum W)``), ``nu_max = 2 * min(W_+, W_-) / W`` of the class sums
(:func:`~maxmargin.certificate_nu.bounds_of`); integer weights are repeated samples.

Every answer is read as ``alpha`` (the variable, or the margin constraints' duals), snapped onto
its bounds, projected onto the feasible set (:func:`~maxmargin.certificate_nu.project_nu`),
polished on its face (:func:`~maxmargin.formulations._face.face_polish`) and judged by
:func:`~maxmargin.certificate_nu.certify_nu_svm` / :func:`certify_one_class`, which also give
``b`` and ``rho`` (the order statistics of LIBSVM's ``calculate_rho``). ``C = 1 / (rho l)`` is
the C-SVC whose solution is ``alpha / rho`` (Chang & Lin 2001; with weights its boxes are ``C l
W_i / sum W``, as :func:`~maxmargin.algorithms.nu_smo`'s). When ``w`` is within
``ZERO_RTOL R`` of 0 the HiGHS LP decides whether the reduced hulls meet; then ``w = 0``, ``rho
= b = 0`` and ``C`` is NaN (``hulls_meet`` on the result): no division by ``rho``. The same
below the certificate's resolution (:func:`~maxmargin.certificate_nu.w_floor`: float64 cannot
tell that ``w`` from 0). An answer not certified after the face solves is taken on by an
active-set method (:func:`~maxmargin.formulations._face.face_active_set`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import cvxpy as cp
import numpy as np

from maxmargin._validation import check_positive, check_sample_weight, check_X, check_Xy
from maxmargin.certificate import Certificate, decision_values
from maxmargin.certificate_nu import (
    below_resolution,
    bounds_of,
    certify_nu_svm,
    certify_one_class,
    hull_weight,
    nu_max,
    project_nu,
    project_one_class,
)
from maxmargin.formulations._common import Formulation, SolveOutcome, data_scale
from maxmargin.formulations._face import face_active_set, face_polish
from maxmargin.formulations._hulls_lp import hulls_meet
from maxmargin.formulations.dual import FACTOR_MAX_RANK_RATIO, gram_factor
from maxmargin.kernels import Kernel, LinearKernel, make_kernel, own_points, precomputed
from maxmargin.results import join_messages
from maxmargin.tolerances import HULLS_MEET_ATOL, ORACLE_GAP, ORACLE_KKT, SNAP_RTOL, ZERO_RTOL

__all__ = ["NuSolution", "nu_svm_primal", "nu_svm_dual", "one_class_primal", "one_class_dual",
           "check_nu"]

NU_SVC, ONE_CLASS = "nu_svc", "one_class"


@dataclass(frozen=True, eq=False)
class NuSolution:
    """A ν-SVC or one-class answer (``problem`` is ``"nu_svc"`` or ``"one_class"``).

    ``alpha`` in Schölkopf's scaling (module docstring); ``rho`` and ``b`` the best offsets of
    ``alpha`` (one-class: ``b = -rho``); ``w`` for the linear kernel (zeros when
    ``hulls_meet``); ``C`` the equivalent C-SVC's ``1 / (rho l)`` (ν-SVC with ``rho > 0``, else
    NaN); objectives ``P*`` and ``D`` of the certificate (:mod:`maxmargin.certificate_nu`).
    """

    alpha: np.ndarray
    b: float
    rho: float
    w: np.ndarray | None
    primal_objective: float
    dual_objective: float
    status: str
    iterations: int
    method: str
    nu: float
    problem: str
    C: float = math.nan
    hulls_meet: bool = False
    X_train: Any = field(default=None, repr=False)
    y_train: np.ndarray | None = field(default=None, repr=False)
    kernel: Kernel = field(default_factory=LinearKernel)
    message: str = ""
    runtime: float = math.nan
    certificate: Certificate | None = None

    def __post_init__(self) -> None:
        for name in ("alpha", "w", "y_train"):
            value = getattr(self, name)
            if value is not None:
                value = np.array(value, dtype=np.float64)
                value.setflags(write=False)
                object.__setattr__(self, name, value)

    def support(self, tol: float = 0.0) -> np.ndarray:
        """Indices of the support vectors, ``alpha_i > tol``."""
        return np.flatnonzero(self.alpha > tol)

    def decision_function(self, X_new: Any) -> np.ndarray:
        """``sum_i alpha_i y_i K(x_i, x) + b`` (one-class: ``sum_i alpha_i K(x_i, x) - rho``);
        ``b`` everywhere when ``hulls_meet`` (``w = 0``)."""
        n = X_new.shape[0]
        if self.hulls_meet:
            return np.full(n, self.b)
        if self.w is not None:  # the linear kernel: w from centred rows keeps its digits
            return np.asarray(X_new @ self.w).ravel() + self.b
        coef = self.alpha if self.y_train is None else self.alpha * self.y_train
        sv = np.flatnonzero(coef != 0.0)
        return decision_values(self.kernel, X_new, self.X_train[sv], coef[sv]) + self.b

    def predict(self, X_new: Any) -> np.ndarray:
        """``+1`` where the decision function is positive, ``-1`` elsewhere."""
        return np.where(self.decision_function(X_new) > 0.0, 1.0, -1.0)


def check_nu(nu: Any, y: np.ndarray | None, weights: np.ndarray | None = None) -> float:
    """``0 < nu <= nu_max`` (ν-SVC, labels ``y``; of the class sums of positive sample
    ``weights`` when given) or ``<= 1`` (one-class, ``y`` None)."""
    nu = check_positive(nu, "nu")
    if y is None:
        if nu > 1.0:
            raise ValueError(f"`nu` must be in (0, 1] for the one-class SVM; got {nu!r}.")
        return nu
    top = nu_max(y, weights)
    if nu > top:
        n_pos = int(np.sum(y > 0))
        counts = "l+, l-) / l" if weights is None else "W+, W-) / W of the sample weights"
        raise ValueError(
            f"`nu` must be at most nu_max = 2 * min({counts} = {top:.6g} for these labels "
            f"({n_pos} positive, {y.shape[0] - n_pos} negative); got {nu!r}: the nu-SVC dual is "
            "infeasible.")
    return nu


class _Problem:
    """One ν-SVC (``y`` given) or one-class (``y`` None) instance: data, bounds (one, or one
    per sample with ``weights``), factor."""

    def __init__(self, X: Any, y: np.ndarray | None, nu: float, kern: Kernel,
                 weights: np.ndarray | None = None) -> None:
        self.kind = ONE_CLASS if y is None else NU_SVC
        self.X, self.nu, self.kernel, self.weights = X, nu, kern, weights
        self.l = X.shape[0]
        self.y = np.ones(self.l) if y is None else y
        self.linear = isinstance(kern, LinearKernel)
        self.upper = bounds_of(weights, self.l, 1.0 if self.kind == NU_SVC else nu)
        if self.kind == NU_SVC:
            self.groups = [np.flatnonzero(self.y > 0), np.flatnonzero(self.y < 0)]
            self.targets = [0.5 * nu, 0.5 * nu]
            F, self.K, _ = gram_factor(kern, X)
        else:
            self.groups, self.targets = [np.arange(self.l)], [1.0]
            # one-class is not translation invariant: the points themselves, never centred
            F, self.K = (X, None) if self.linear else gram_factor(kern, X)[:2]
        self.F = np.asarray(F.toarray() if hasattr(F, "toarray") else F, dtype=np.float64)
        self.scale = data_scale(self.F)
        self._K_face: np.ndarray | None = None

    def certify(self, alpha: np.ndarray) -> Certificate:
        if self.kind == NU_SVC:
            return certify_nu_svm(alpha, self.X, self.y, self.nu, self.kernel,
                                  weights=self.weights)
        return certify_one_class(alpha, self.X, self.nu, self.kernel, weights=self.weights)

    def project(self, alpha: np.ndarray) -> np.ndarray:
        if self.kind == NU_SVC:
            return project_nu(alpha, self.y, self.nu, self.weights)
        return project_one_class(alpha, self.nu, self.weights)

    def hulls_meet(self, alpha: np.ndarray) -> np.ndarray | None:
        """``alpha`` of a point where the reduced hulls meet (one-class: hold the origin),
        certified by the LP, when ``||w||`` is within ``ZERO_RTOL`` of the scale; else None."""
        v = alpha * self.y
        w_norm = float(np.linalg.norm(self.F.T @ v))
        if w_norm > ZERO_RTOL * self.scale * float(np.sum(alpha)):
            return None
        Fs = self.F / self.scale
        blocks = [Fs[idx] for idx in self.groups]
        upper = np.broadcast_to(self.upper, (self.l,))
        mu = np.concatenate([upper[idx] for idx in self.groups]) / self.targets[0]
        weights = hulls_meet(blocks, HULLS_MEET_ATOL, mu=mu)
        if weights is None:
            return None
        out = np.zeros(self.l)
        for idx, wk, t in zip(self.groups, weights, self.targets, strict=True):
            out[idx] = np.minimum(t * wk, upper[idx])  # (t mu_i may round above U_i)
        return out

    def candidates(self, alpha: np.ndarray, polish: bool) -> list[np.ndarray]:
        """The snapped and projected ``alpha`` and its face solutions."""
        a = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, self.upper)
        a[a < SNAP_RTOL * self.upper] = 0.0
        a = np.where(a > (1.0 - SNAP_RTOL) * self.upper, self.upper, a)
        a = self.project(a)
        if not polish:
            return [a]
        return [a, *face_polish(a, self.y, self.upper, self.groups, self.targets,
                                **self._face_data())]

    def refine(self, alpha: np.ndarray) -> np.ndarray | None:
        """:func:`~maxmargin.formulations._face.face_active_set` from ``alpha``, projected."""
        a = face_active_set(alpha, self.y, self.upper, self.groups, self.targets,
                            **self._face_data())
        return None if a is None else self.project(a)

    def _face_data(self) -> dict[str, Any]:
        """``K``, or the linear kernel's rows of ``F``: centred for ν-SVC (``y . alpha = 0``:
        no offset); one-class keeps the origin, so the centre returns as the offset (``sum
        alpha = 1``). ``K`` is centred too (:func:`_centred_gram`)."""
        if self.K is not None:
            if self._K_face is None:
                self._K_face = _centred_gram(self.K, self.kind)
            return {"K": self._K_face}
        if self.kind == NU_SVC:
            return {"X": self.F}
        centre = self.F.mean(axis=0)
        return {"X": self.F - centre, "offset": centre}


def _centred_gram(K: np.ndarray, kind: str) -> np.ndarray:
    """The Gram matrix the face solves use, with the same objective on the feasible set:
    ν-SVC ``P K P`` (``P = I - 1 1^T / l``; ``v = y * alpha`` sums to 0, so ``P v = v``);
    one-class ``K - k 1 1^T`` (``k`` the mean entry; ``sum alpha = 1``: a constant less).
    A Gram matrix near a constant (an RBF kernel of small ``gamma``) keeps its digits in
    the face's least squares."""
    if kind == NU_SVC:
        row = K.mean(axis=0)
        return K - row[:, None] - row[None, :] + float(row.mean())
    return K - float(K.mean())


def _score(cert: Certificate) -> tuple[int, float]:
    """Certified first, then the worst of ``kkt / ORACLE_KKT`` and ``gap / ORACLE_GAP``."""
    worst = max(cert.kkt_violation / ORACLE_KKT, cert.gap / ORACLE_GAP)
    return (0 if cert.meets(ORACLE_KKT, ORACLE_GAP) else 1,
            worst if math.isfinite(worst) else math.inf)


def _extractor(prob: _Problem, read_alpha: Any) -> Any:
    """``extract(outcome, method, polish)``: the judged :class:`NuSolution` of a solve."""

    def extract(outcome: SolveOutcome, method: str, polish: bool) -> NuSolution:
        alpha = read_alpha() if outcome.has_values else None
        common = dict(iterations=outcome.iterations, method=method, nu=prob.nu,
                      problem=prob.kind, X_train=prob.X, kernel=prob.kernel,
                      y_train=None if prob.kind == ONE_CLASS else prob.y,
                      runtime=outcome.runtime)
        if alpha is None or not np.all(np.isfinite(alpha)):
            nan = math.nan
            return NuSolution(np.full(prob.l, nan), nan, nan, None, nan, nan,
                              outcome.status, message=outcome.message, **common)
        scored = sorted(((prob.certify(a), a) for a in prob.candidates(alpha, polish)),
                        key=lambda pair: _score(pair[0]))
        cert, alpha = scored[0]
        # not certified: an active-set method from each candidate, the best first (the best
        # by score may be a point just off the feasible set, e.g. a class's weights all
        # snapped to the bound where its sum must stay a hair below, from which the method's
        # faces keep the wrong sum)
        for _, start in scored if polish and _score(cert)[0] else ():
            refined = prob.refine(start)
            if refined is not None:
                cert, alpha = min([(cert, alpha), (prob.certify(refined), refined)],
                                  key=lambda pair: _score(pair[0]))
            if not _score(cert)[0]:
                break
        meet = prob.hulls_meet(alpha)
        notes = [outcome.message]
        if meet is not None:
            alpha, cert = meet, prob.certify(meet)
            notes.append("the reduced hulls meet (HiGHS LP): w = 0, rho = 0, no equivalent C")
        elif below_resolution(cert, alpha, hull_weight(prob.nu, prob.kind != NU_SVC)):
            meet = alpha
            notes.append("||w|| is below the certificate's float64 resolution (w_floor): "
                         "w = 0, rho = 0, no equivalent C")
        status = outcome.status
        if cert.meets(ORACLE_KKT, ORACLE_GAP):
            status = "optimal"
        elif status == "optimal":
            status = "inaccurate"
        rho, b = (0.0, 0.0) if meet is not None else (cert.margin, cert.b)
        w = None
        if prob.linear:
            w = np.zeros(prob.X.shape[1]) if meet is not None else _weights(prob, alpha)
        C = 1.0 / (rho * prob.l) if prob.kind == NU_SVC and rho > 0.0 else math.nan
        return NuSolution(alpha, b, rho, w, cert.primal_objective, cert.dual_objective, status,
                          C=C, hulls_meet=meet is not None, certificate=cert,
                          message=join_messages(*notes, cert.summary()), **common)

    return extract


def _weights(prob: _Problem, alpha: np.ndarray) -> np.ndarray:
    """``w = X^T (alpha * y)``; for ν-SVC on dense data from the rows less their mean (the
    same ``w``, as ``y . alpha = 0``, without the cancellation of data far from the origin)."""
    v = alpha * prob.y
    if prob.kind == NU_SVC and isinstance(prob.X, np.ndarray):
        return (prob.X - prob.X.mean(axis=0)).T @ v
    return np.asarray(prob.X.T @ v).ravel()


def _judge(sol: NuSolution, strict: bool = True) -> NuSolution:
    """The extract judges already (its status follows the certificate)."""
    return sol


def _formulation(name: str, prob: _Problem, build: Any) -> Formulation:
    problem, variables, extract = build(1.0)
    return Formulation(name, problem, variables, extract, model=build, scales=(prob.scale,),
                       judge=_judge)


def _dual_build(prob: _Problem) -> Any:
    """``build(s)``: the dual on the factor ``F / s`` (the same ``alpha`` for every ``s``)."""
    n = prob.l
    gram = prob.F.shape[1] > FACTOR_MAX_RANK_RATIO * n

    def build(s: float) -> tuple[cp.Problem, dict[str, cp.Variable], Any]:
        Fs = prob.F / s
        alpha = cp.Variable(n, name="alpha")
        if gram:
            G = prob.y[:, None] * Fs
            quadratic = cp.quad_form(alpha, cp.psd_wrap(G @ G.T))
        else:
            quadratic = cp.sum_squares(Fs.T @ cp.multiply(prob.y, alpha))
        constraints: list[Any] = [alpha >= 0, alpha <= prob.upper]
        if prob.kind == NU_SVC:
            constraints += [prob.y @ alpha == 0, cp.sum(alpha) >= prob.nu]
        else:
            constraints.append(cp.sum(alpha) == 1)
        problem = cp.Problem(cp.Minimize(0.5 * quadratic), constraints)
        return problem, {"alpha": alpha}, _extractor(prob, lambda: alpha.value)

    return build


def _primal_build(prob: _Problem) -> Any:
    """``build(s)``: the primal on the rows of ``F / s``; ``alpha`` is the margin constraints'
    dual, the same for every ``s``."""
    n = prob.l

    def build(s: float) -> tuple[cp.Problem, dict[str, cp.Variable], Any]:
        Fs = prob.F / s
        w = cp.Variable(Fs.shape[1], name="w")
        rho = cp.Variable(name="rho")
        xi = cp.Variable(n, name="xi")
        variables = {"w": w, "rho": rho, "xi": xi}
        # the slacks weighted as the bounds: 1 / l, 1 / (nu l), or W_i / sum W (/ nu)
        slack = (cp.sum(xi) * prob.upper if prob.weights is None
                 else cp.sum(cp.multiply(prob.upper, xi)))
        if prob.kind == NU_SVC:
            b = cp.Variable(name="b")
            variables["b"] = b
            margin = cp.multiply(prob.y, Fs @ w + b) >= rho - xi
            objective = 0.5 * cp.sum_squares(w) - prob.nu * rho + slack
            constraints = [margin, xi >= 0, rho >= 0]
        else:
            margin = Fs @ w >= rho - xi
            objective = 0.5 * cp.sum_squares(w) + slack - rho
            constraints = [margin, xi >= 0]
        problem = cp.Problem(cp.Minimize(objective), constraints)
        return problem, variables, _extractor(prob, lambda: margin.dual_value)

    return build


def _setup(X: Any, y: Any, nu: Any, kernel: Any, gamma: Any, degree: int, coef0: float,
           primal: bool, sample_weight: Any = None) -> _Problem:
    """Validated data and weights, ``nu`` checked against its bound (of the weights) before
    any kernel work, the kernel."""
    if primal and not (kernel == "linear" or isinstance(kernel, LinearKernel)):
        raise ValueError("`kernel` of a primal oracle must be 'linear' (explicit features); "
                         f"got {kernel!r}: use the dual oracle for other kernels.")
    kernel, X = precomputed(kernel, X)
    if y is None:
        X = check_X(X, sparse=True, points=own_points(kernel))
        labels = None
    else:
        X, labels = check_Xy(X, y, sparse=True, points=own_points(kernel))
    weights = check_sample_weight(sample_weight, np.ones(X.shape[0]) if labels is None
                                  else labels)
    nu = check_nu(nu, labels, weights)
    if not (kernel == "linear" or isinstance(kernel, LinearKernel)) and hasattr(X, "toarray"):
        X = X.toarray()
    kern = make_kernel(kernel, gamma=gamma, degree=degree, coef0=coef0, X=X)
    return _Problem(X, labels, nu, kern, weights)


def nu_svm_dual(X: Any, y: Any, nu: float = 0.5, kernel: str | Kernel = "linear",
                gamma: float | str = "scale", degree: int = 3, coef0: float = 0.0, *,
                sample_weight: Any = None) -> Formulation:
    """The ν-SVC dual (module docstring), any kernel, as scikit-learn's NuSVC takes it.

    ``solve()`` returns a :class:`NuSolution`. ``sample_weight`` (positive): bounds ``alpha_i
    <= W_i / sum W``. Raises ``ValueError`` naming ``nu_max`` when ``nu > 2 * min(l_+, l_-) /
    l`` (of the class sums of the weights), before any kernel is evaluated.
    """
    return _formulation("nu_svm_dual", prob := _setup(X, y, nu, kernel, gamma, degree, coef0,
                                                      False, sample_weight), _dual_build(prob))


def nu_svm_primal(X: Any, y: Any, nu: float = 0.5, kernel: str | Kernel = "linear", *,
                  sample_weight: Any = None) -> Formulation:
    """The ν-SVC primal (module docstring) with the linear kernel (explicit features); variables
    ``w``, ``b``, ``rho``, ``xi``. ``alpha`` is the dual of the margin constraints.
    ``sample_weight`` (positive): the slack ``xi_i`` weighs ``W_i / sum W``."""
    return _formulation("nu_svm_primal", prob := _setup(X, y, nu, kernel, "scale", 3, 0.0, True,
                                                        sample_weight), _primal_build(prob))


def one_class_dual(X: Any, nu: float = 0.5, kernel: str | Kernel = "linear",
                   gamma: float | str = "scale", degree: int = 3, coef0: float = 0.0, *,
                   sample_weight: Any = None) -> Formulation:
    """The one-class SVM dual (module docstring), any kernel, as scikit-learn's OneClassSVM
    takes it (which defaults to ``kernel="rbf"``); ``solve()`` returns a :class:`NuSolution`.
    ``sample_weight`` (positive): bounds ``alpha_i <= W_i / (nu sum W)``."""
    return _formulation("one_class_dual", prob := _setup(X, None, nu, kernel, gamma, degree,
                                                         coef0, False, sample_weight),
                        _dual_build(prob))


def one_class_primal(X: Any, nu: float = 0.5, kernel: str | Kernel = "linear", *,
                     sample_weight: Any = None) -> Formulation:
    """The one-class SVM primal (module docstring), linear kernel; variables ``w``, ``rho``,
    ``xi``. ``alpha`` is the dual of the constraints ``w . x_i >= rho - xi_i``.
    ``sample_weight`` (positive): the slack ``xi_i`` weighs ``W_i / (nu sum W)``."""
    return _formulation("one_class_primal", prob := _setup(X, None, nu, kernel, "scale", 3, 0.0,
                                                           True, sample_weight),
                        _primal_build(prob))
