"""Drop-ins for scikit-learn's ``NuSVC`` and ``OneClassSVM`` whose every problem is certified.

:class:`MaxMarginNuClassifier` solves one ν-SVC problem per pair of classes (one-vs-one, as
LIBSVM; :class:`~maxmargin.estimators.MaxMarginClassifier`'s layout, prediction and probability
model) and reports each in LIBSVM's units: the ν-SVC answer ``(alpha, b, rho)`` in Schölkopf's
scaling (:mod:`maxmargin.formulations.nu`) is the C-SVC answer at ``C = 1 / (rho l)`` divided
by ``rho``, so ``dual_coef_ = y alpha / rho``, ``intercept_ = b / rho`` and the decision function
is ``f / rho``, NuSVC's. :class:`MaxMarginOneClass` reports the one-class answer (``sum alpha =
1``) in LIBSVM's scaling ``nu l alpha``: ``score_samples = nu l sum_i alpha_i K(x_i, x)``,
``offset_ = nu l rho``, ``decision_function = score_samples - offset_``.

``solver=``: ``"nu_smo"`` (LIBSVM's ν and one-class solvers on the SMO package,
:func:`maxmargin.algorithms.nu_smo`, :func:`~maxmargin.algorithms.one_class_smo`; the default,
``"auto"``) or ``"cvxpy"`` (the oracles, certified; small and medium data); the one-class
model also takes ``"mdm"``, ``"wolfe"`` or ``"gilbert"`` (the nearest point of a reduced hull
to the origin, :func:`maxmargin.algorithms.one_class_hull`). Each problem's
certified answer is kept in ``solutions_`` (a :class:`~maxmargin.formulations.NuSolution`).
Sample weights are LIBSVM's per-sample bounds ``C_i = W_i`` (``alpha_i <= w_i / sum w`` in
Schölkopf's scaling; ``nu_max`` of the class sums of the weights; OneClassSVM's scaling ``nu
sum w``), by ``nu_smo`` and the oracles (``"cvxpy"``); the nearest-point methods of the one-class
model (``"mdm"``, ``"wolfe"``, ``"gilbert"``) have one bound for every sample and refuse
unequal weights; zero and negative weights leave samples out. Unequal class weights are refused:
LIBSVM's ν solvers ignore them silently (scikit-learn issue 30332).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, OutlierMixin
from sklearn.utils.validation import check_is_fitted

import maxmargin.exceptions as exceptions
from maxmargin._validation import check_choice, check_estimator_X, check_positive
from maxmargin.algorithms import nu_smo, one_class_hull, one_class_smo
from maxmargin.algorithms.gilbert import NEAREST_POINT_METHODS
from maxmargin.certificate import decision_values
from maxmargin.estimators import (
    _PROBABILITY_DEFAULT,
    MaxMarginClassifier,
    _pair_samples,
    estimator_sample_weights,
)
from maxmargin.formulations.nu import NuSolution, check_nu, nu_svm_dual, one_class_dual
from maxmargin.kernels.objects import training_kernel
from maxmargin.tolerances import SMO_TOL

__all__ = ["MaxMarginNuClassifier", "MaxMarginOneClass", "NU_SOLVERS", "ONE_CLASS_SOLVERS",
           "NuPair"]

#: The solvers of ``solver=`` (besides ``"auto"``).
NU_SOLVERS = ("nu_smo", "cvxpy")
#: :class:`MaxMarginOneClass`'s: also the methods of :func:`~maxmargin.algorithms.one_class_hull`.
ONE_CLASS_SOLVERS = (*NU_SOLVERS, *NEAREST_POINT_METHODS)
#: The choices of ``solver=`` that run LIBSVM's solvers.
_LIBSVM_SOLVERS = ("auto", "nu_smo")
#: The choices of ``solver=`` with per-sample bounds (the nearest-point methods have one).
_WEIGHTED_SOLVERS = (*_LIBSVM_SOLVERS, "cvxpy")


@dataclass(frozen=True)
class NuPair:
    """A ν-SVC answer in LIBSVM's units (module docstring): ``alpha / rho``, ``b / rho``; when
    the reduced hulls meet (``w = 0``, ``rho = 0``) the classifier is the constant 0."""

    solution: NuSolution

    @property
    def _scale(self) -> float:
        rho = self.solution.rho
        return 1.0 / rho if rho > 0 and not self.solution.hulls_meet else 0.0

    @property
    def alpha(self) -> np.ndarray:
        return np.asarray(self.solution.alpha) * self._scale

    @property
    def b(self) -> float:
        return float(self.solution.b) * self._scale

    @property
    def status(self) -> str:
        return self.solution.status

    @property
    def message(self) -> str:
        return self.solution.message

    @property
    def iterations(self) -> int:
        return self.solution.iterations

    def decision_function(self, X_new: Any) -> np.ndarray:
        """NuSVC's ``f / rho``."""
        return self.solution.decision_function(X_new) * self._scale


def _sample_bounds(weights: np.ndarray, solver: str) -> np.ndarray | None:
    """The weights as per-sample bounds (positive where kept), or None when the kept ones are
    all equal (the problem of one bound); refused for the nearest-point methods (module
    docstring)."""
    kept = weights[weights > 0]
    if not kept.size or np.all(kept == kept[0]):
        return None
    if solver not in _WEIGHTED_SOLVERS:
        raise ValueError(f"`sample_weight`: solver={solver!r} (a nearest point of a reduced "
                         "hull) has one bound for every sample; unequal weights (LIBSVM's C_i "
                         "= W_i) need solver='nu_smo' or 'cvxpy'.")
    return weights


class MaxMarginNuClassifier(MaxMarginClassifier):
    """NuSVC's model, certified (module docstring). NuSVC's parameters with its defaults, plus
    ``solver``; NuSVC's fitted attributes (``support_``, ``support_vectors_``, ``n_support_``,
    ``dual_coef_``, ``intercept_``, ``classes_``, ``fit_status_``, ``n_iter_``), and
    ``solutions_``."""

    _impl = "nu_svc"  # scikit-learn's name of the LIBSVM problem (maxmargin.certify reads it)

    def __init__(
        self,
        *,
        nu: float = 0.5,
        kernel: Any = "rbf",
        degree: int = 3,
        gamma: float | str = "scale",
        coef0: float = 0.0,
        shrinking: bool = True,
        probability: bool | str = _PROBABILITY_DEFAULT,
        tol: float = SMO_TOL,
        cache_size: float = 200,
        class_weight: dict | str | None = None,
        verbose: bool = False,
        max_iter: int = -1,
        decision_function_shape: str = "ovr",
        break_ties: bool = False,
        random_state: Any = None,
        solver: str = "auto",
    ) -> None:
        self.nu = nu
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.probability = probability
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.verbose = verbose
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.random_state = random_state
        self.solver = solver

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> MaxMarginNuClassifier:
        """Fit one ν-SVC problem per pair of classes; every ``nu`` is checked against each
        pair's ``nu_max`` before any kernel work.

        Parameters
        ----------
        X : (n_samples, n_features) array or sparse matrix (or a Gram matrix, precomputed)
        y : (n_samples,) labels
        sample_weight : (n_samples,) array, optional
            Per-sample bounds (LIBSVM's ``C_i = W_i``); zero or below leaves a sample out.

        Returns
        -------
        self
        """
        from sklearn.utils import check_random_state

        from maxmargin._probability import LibsvmRandom

        check_choice(self.solver, "solver", ("auto", *NU_SOLVERS))
        check_choice(self.decision_function_shape, "decision_function_shape", ("ovr", "ovo"))
        nu = check_positive(self.nu, "nu")
        probability = self._probability_requested()
        seed = check_random_state(self.random_state).randint(np.iinfo("i").max)
        X = self._training_X(X, y)
        n = X.shape[0] if hasattr(X, "shape") else len(X)
        y_idx, weights = self._targets_and_weights(y, sample_weight, n)
        if np.any(self.class_weight_ != self.class_weight_[0]):
            raise ValueError("`class_weight`: the ν problems take no class weights (LIBSVM's "
                             "ν solvers ignore them, scikit-learn issue 30332); weigh the "
                             "samples (sample_weight) instead.")
        bounds = _sample_bounds(weights, self.solver)
        k = len(self.classes_)
        pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
        members, labels = _pair_samples(y_idx, weights > 0, pairs)
        for idx, y_pair in zip(members, labels, strict=True):  # before any kernel work
            try:
                check_nu(nu, y_pair, None if bounds is None else bounds[idx])
            except ValueError as exc:
                raise ValueError(f"specified nu is infeasible: {exc}") from None
        points, kern = self._training_kernel(X)
        self._orientation = -1.0 if k == 2 else 1.0

        oracle, cap = self.solver == "cvxpy", self._iteration_cap()

        def solve(idx: np.ndarray, y_pair: np.ndarray) -> NuPair:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", exceptions.ConvergenceWarning)  # one, below
                weights = None if bounds is None else bounds[idx]
                if oracle:
                    return NuPair(nu_svm_dual(points[idx], y_pair, nu, kernel=kern,
                                              sample_weight=weights).solve())
                return NuPair(nu_smo(points[idx], y_pair, nu, kernel=kern, tol=self.tol,
                                     max_iter=cap, cache_size=self.cache_size,
                                     shrinking=self.shrinking, sample_weight=weights))

        rng = LibsvmRandom(seed) if probability else None
        solutions, prob_a, prob_b = [], [], []
        for (i, _j), idx, y_pair in zip(pairs, members, labels, strict=True):
            sol = solve(idx, y_pair)
            solutions.append(sol)
            if probability:
                a, b = self._platt(solve, points, idx, y_pair, y_idx[idx] == i, rng)
                prob_a.append(a)
                prob_b.append(b)
            if self.verbose:
                print(f"[maxmargin] nu-SVC pair {len(solutions)}: {sol.status}")
        self._probA = np.array(prob_a, dtype=np.float64)
        self._probB = np.array(prob_b, dtype=np.float64)
        self._pairs = pairs
        self.solutions_ = solutions  # the layout reads them in LIBSVM's units
        self._layout(X, y_idx, pairs, members, labels)
        self.solutions_ = [s.solution for s in solutions]  # kept: the certified answers
        self.solution_ = self.solutions_[0] if k == 2 else self.solutions_
        self.n_iter_ = np.array([s.iterations for s in solutions], dtype=np.int32)
        self.fit_status_ = int(any(s.status != "optimal" for s in solutions))
        if self.fit_status_:
            lines = "; ".join(f"{s.status}: {s.message}" for s in solutions
                              if s.status != "optimal")
            warnings.warn(f"A ν-SVC problem was not certified optimal: {lines}",
                          exceptions.ConvergenceWarning, stacklevel=2)
        return self


    def _targets_and_weights(self, y: Any, sample_weight: Any,
                             n: int) -> tuple[np.ndarray, np.ndarray]:
        """MaxMarginClassifier's, with NuSVC's words when the positive weights leave one
        class: ``nu_max = 0``, every ``nu`` is infeasible."""
        try:
            return super()._targets_and_weights(y, sample_weight, n)
        except ValueError as exc:
            if "belong to the same class" not in str(exc):
                raise
            raise ValueError(f"`nu`: specified nu is infeasible: {exc} (nu_max = 0)") from None


class MaxMarginOneClass(OutlierMixin, BaseEstimator):
    """OneClassSVM's model, certified (module docstring).

    Parameters
    ----------
    kernel, degree, gamma, coef0, tol, nu, shrinking, cache_size, verbose, max_iter
        OneClassSVM's, with its defaults (``kernel="rbf"``, ``nu=0.5``).
    solver : {"auto", "nu_smo", "cvxpy", "mdm", "wolfe", "gilbert"}
        The last three: :func:`~maxmargin.algorithms.one_class_hull`'s methods (``tol`` its
        relative gap).

    Attributes
    ----------
    support_, support_vectors_, n_support_, dual_coef_ (LIBSVM's ``nu l alpha``),
    intercept_ (``-offset_``), offset_ (``nu l rho``), fit_status_, n_iter_, solution_
    """

    _impl = "one_class"  # scikit-learn's name of the LIBSVM problem (maxmargin.certify reads it)

    def __init__(self, *, kernel: Any = "rbf", degree: int = 3, gamma: float | str = "scale",
                 coef0: float = 0.0, tol: float = SMO_TOL, nu: float = 0.5,
                 shrinking: bool = True, cache_size: float = 200, verbose: bool = False,
                 max_iter: int = -1, solver: str = "auto") -> None:
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.nu = nu
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter
        self.solver = solver

    def fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> MaxMarginOneClass:
        """Fit the one-class problem (``y`` is ignored).

        Parameters
        ----------
        X : (n_samples, n_features) array or sparse matrix
        y : ignored
        sample_weight : (n_samples,) array, optional
            Per-sample bounds (LIBSVM's ``C_i = W_i``); zero or below leaves a sample out.

        Returns
        -------
        self
        """
        check_choice(self.solver, "solver", ("auto", *ONE_CLASS_SOLVERS))
        nu = check_nu(self.nu, None)
        if not (isinstance(self.kernel, str) and self.kernel in ("linear", "rbf", "poly",
                                                                  "sigmoid")):
            raise ValueError(f"`kernel` must be 'linear', 'rbf', 'poly' or 'sigmoid'; got "
                             f"{self.kernel!r}.")
        X = check_estimator_X(self, X, reset=True)
        self._sparse = sp.issparse(X)
        weights = estimator_sample_weights(sample_weight, X.shape[0])
        if not np.any(weights > 0):
            raise ValueError("`sample_weight`: Invalid input - all samples have zero or "
                             "negative weights.")
        bounds = _sample_bounds(weights, self.solver)
        keep = np.flatnonzero(weights > 0)
        kept_bounds = None if bounds is None else bounds[keep]
        self._kernel = training_kernel(self.kernel, self.gamma, self.degree, self.coef0, X)
        points = X.toarray() if sp.issparse(X) else X
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", exceptions.ConvergenceWarning)
            cap = None if self.max_iter in (-1, None) else int(self.max_iter)
            if self.solver == "cvxpy":
                sol = one_class_dual(points[keep], nu, kernel=self._kernel,
                                     sample_weight=kept_bounds).solve()
            elif self.solver not in _LIBSVM_SOLVERS:
                sol = one_class_hull(points[keep], nu, kernel=self._kernel, tol=self.tol,
                                     max_iter=cap, method=self.solver)
            else:
                sol = one_class_smo(points[keep], nu, kernel=self._kernel, tol=self.tol,
                                    max_iter=cap, cache_size=self.cache_size,
                                    shrinking=self.shrinking, sample_weight=kept_bounds)
        self.solution_ = sol
        self._constant = bool(sol.hulls_meet)  # w = 0 at the certificate's resolution
        scale = nu * float(np.sum(weights[keep]))  # LIBSVM's scaling of alpha and rho
        coef = np.asarray(sol.alpha) * scale
        sv = np.flatnonzero(coef != 0.0)
        self.support_ = keep[sv].astype(np.int32)
        self.support_vectors_ = X[self.support_]
        self.n_support_ = np.array([sv.size], dtype=np.int32)
        self.dual_coef_ = sp.csr_matrix(coef[sv][None, :]) if self._sparse else coef[sv][None, :]
        self.offset_ = np.array([float(sol.rho) * scale])
        self.intercept_ = -self.offset_
        self.n_iter_ = int(sol.iterations)  # OneClassSVM's: an int
        self.fit_status_ = int(sol.status != "optimal")
        if self.fit_status_:
            warnings.warn(f"The one-class problem was not certified optimal: {sol.message}",
                          exceptions.ConvergenceWarning, stacklevel=2)
        if self.verbose:
            print(f"[maxmargin] one-class: {sol.status}")
        return self

    @property
    def coef_(self) -> Any:
        """``w = dual_coef_ support_vectors_`` (linear kernel only), shape ``(1, n_features)``;
        read-only, sparse after a sparse fit (OneClassSVM's)."""
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel")
        check_is_fitted(self)
        coef = self._coefficients() @ self.support_vectors_
        if self._sparse:
            coef = sp.csr_matrix(coef)
            coef.data.flags.writeable = False
        else:
            coef = np.asarray(coef).reshape(1, -1)
            coef.flags.writeable = False
        return coef

    def _coefficients(self) -> np.ndarray:
        """``dual_coef_[0]`` as a dense array."""
        dual = self.dual_coef_
        return (dual.toarray() if sp.issparse(dual) else dual)[0]

    def score_samples(self, X: Any) -> np.ndarray:
        """``nu l sum_i alpha_i K(x_i, x)`` (OneClassSVM's; 0 when the certificate found ``w =
        0``); sparse input only after a sparse fit (as OneClassSVM)."""
        check_is_fitted(self)
        if sp.issparse(X) and not self._sparse:
            raise ValueError("`X`: cannot use sparse input in 'MaxMarginOneClass' trained on "
                             "dense data")
        X = check_estimator_X(self, X, reset=False)
        if self.support_.size == 0 or self._constant:  # w = 0: the constant 0, exactly
            return np.zeros(X.shape[0])
        return decision_values(self._kernel, X, self.support_vectors_, self._coefficients())

    def decision_function(self, X: Any) -> np.ndarray:
        """``score_samples(X) - offset_``: positive inside the estimated support."""
        return self.score_samples(X) - self.offset_

    def predict(self, X: Any) -> np.ndarray:
        """``+1`` inside (decision function ``> 0``), ``-1`` outside."""
        return np.where(self.decision_function(X) > 0, 1, -1).astype(np.intp)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

