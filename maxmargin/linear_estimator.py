"""A drop-in for scikit-learn's ``LinearSVC`` whose every binary problem is certified.

:class:`MaxMarginLinearClassifier` takes LinearSVC's whole signature with its defaults and
meanings and solves LIBLINEAR's problems (:mod:`maxmargin.formulations.liblinear`): the
L2-regularised hinge or squared hinge, the L1-regularised squared hinge, with the bias column
``intercept_scaling`` regularised like the other weights, one problem per class against the rest
(two classes: one problem, ``classes_[1]`` as +1), or Crammer and Singer's multi-class problem
(:mod:`maxmargin.formulations.crammer_singer`). Each problem is judged by its float64 certificate
(:func:`~maxmargin.certificate.certify_liblinear`,
:func:`~maxmargin.certificate_multiclass.certify_crammer_singer`) and kept in ``solutions_``.

``solver=``: ``"dcd"`` (dual coordinate descent, :func:`maxmargin.algorithms.dcd`: the
L2-regularised problems; :func:`maxmargin.algorithms.cs_dcd`: Crammer and Singer's),
``"cdn"`` (primal coordinate descent, :func:`maxmargin.algorithms.l1_cdn`: the L1-regularised
squared hinge), ``"cvxpy"`` (the oracles: every problem, small data), or ``"auto"``
(``"dcd"`` or ``"cdn"`` where it applies). ``dual`` is validated as LinearSVC does and
otherwise changes nothing: the problem is the same whichever side a solver works on.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.validation import check_is_fitted

import maxmargin.exceptions as exceptions
from maxmargin._validation import (
    check_C,
    check_choice,
    check_estimator_X,
    check_estimator_Xy,
    check_positive,
)
from maxmargin.certify_models import liblinear_problems
from maxmargin.estimators import estimator_sample_weights
from maxmargin.tolerances import LINEAR_GAP_FLOOR

__all__ = ["MaxMarginLinearClassifier", "LINEAR_SOLVERS"]

#: The solvers of ``solver=`` (besides ``"auto"``).
LINEAR_SOLVERS = ("dcd", "cdn", "cvxpy")
_UNSUPPORTED = ("Unsupported set of arguments: The combination of penalty='{}' and loss='{}' is "
                "not supported when dual={}")
#: scikit-learn's words for a capped fit (its tests match them), then maxmargin's account.
_CAPPED = "Liblinear failed to converge, increase the number of iterations."


def _check_combination(penalty: str, loss: str, dual: Any, n: int, d: int) -> bool:
    """LinearSVC's rule for ``(penalty, loss, dual)``: the resolved ``dual`` (``"auto"``: the
    primal when ``n > d`` and it applies), or LinearSVC's ``ValueError``."""
    if dual == "auto":
        primal_ok = not (penalty == "l2" and loss == "hinge")
        dual_ok = penalty == "l2"
        dual = dual_ok and not (n > d and primal_ok)
        if not (primal_ok or dual_ok):
            dual = False
    elif not isinstance(dual, (bool, np.bool_)):
        raise ValueError(f"`dual` must be True, False or 'auto'; got {dual!r}.")
    if (penalty == "l1" and loss == "hinge") or (penalty == "l2" and loss == "hinge"
                                                 and not dual) or (penalty == "l1" and dual):
        raise ValueError(_UNSUPPORTED.format(penalty, loss, dual)
                         + f", Parameters: penalty={penalty!r}, loss={loss!r}, dual={dual!r}")
    return bool(dual)


class MaxMarginLinearClassifier(ClassifierMixin, BaseEstimator):
    """LinearSVC's model, certified (module docstring).

    Parameters
    ----------
    penalty : {"l2", "l1"}, default "l2"
    loss : {"squared_hinge", "hinge"}, default "squared_hinge"
    dual : bool or "auto", default "auto"
        Validated as LinearSVC (the combinations it refuses are refused).
    tol : float, default 1e-4
        The relative duality gap each problem's float64 certificate must reach (at least
        ``LINEAR_GAP_FLOOR``, the certificate's round-off; the oracles reach ``ORACLE_GAP``).
    C : float, default 1.0
    multi_class : {"ovr", "crammer_singer"}, default "ovr"
    fit_intercept : bool, default True
    intercept_scaling : float, default 1.0
        ``s`` of the bias column (regularised with the weights; ``intercept_ = s v``).
    class_weight : dict, "balanced" or None
    verbose : int, default 0
    random_state : int, RandomState or None
        The seed of the coordinate order (``"dcd"``, ``"cdn"``): a fixed seed gives the same
        bits.
    max_iter : int, default 1000
        Passes over the data (``"dcd"``, ``"cdn"``); iterations of the interior-point solver
        (oracles).
    solver : {"auto", "dcd", "cdn", "cvxpy"}, default "auto"

    Attributes
    ----------
    coef_ : (1, n_features) or (n_classes, n_features) array
    intercept_ : (1,) or (n_classes,) array
    classes_, n_features_in_, feature_names_in_
    n_iter_ : int
        The most iterations any binary problem took.
    solutions_ : list
        Each problem's certified answer (:class:`~maxmargin.formulations.LiblinearSolution`,
        :class:`~maxmargin.results.LinearSolution`,
        :class:`~maxmargin.results.MulticlassSolution` or
        :class:`~maxmargin.formulations.CrammerSingerSolution`).
    certificates_ : list of Certificate
    """

    def __init__(
        self,
        penalty: str = "l2",
        loss: str = "squared_hinge",
        *,
        dual: bool | str = "auto",
        tol: float = 1e-4,
        C: float = 1.0,
        multi_class: str = "ovr",
        fit_intercept: bool = True,
        intercept_scaling: float = 1.0,
        class_weight: Any = None,
        verbose: int = 0,
        random_state: Any = None,
        max_iter: int = 1000,
        solver: str = "auto",
    ) -> None:
        self.penalty = penalty
        self.loss = loss
        self.dual = dual
        self.tol = tol
        self.C = C
        self.multi_class = multi_class
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.verbose = verbose
        self.random_state = random_state
        self.max_iter = max_iter
        self.solver = solver

    # --- fitting ----------------------------------------------------------------------------

    def _check_params(self) -> tuple[float, float | None, int]:
        check_choice(self.penalty, "penalty", ("l2", "l1"))
        check_choice(self.loss, "loss", ("squared_hinge", "hinge"))
        check_choice(self.multi_class, "multi_class", ("ovr", "crammer_singer"))
        check_choice(self.solver, "solver", ("auto", *LINEAR_SOLVERS))
        C = check_C(self.C, allow_none=False)
        check_positive(self.tol, "tol")
        if (not isinstance(self.max_iter, numbers.Integral) or isinstance(self.max_iter, bool)
                or self.max_iter < 1):
            raise ValueError(f"`max_iter` must be a positive integer; got {self.max_iter!r}.")
        if self.fit_intercept:
            scaling = check_positive(self.intercept_scaling, "intercept_scaling")
        else:
            scaling = None
        return C, scaling, int(self.max_iter)

    def _solver_for(self) -> str:
        """The solver of each problem: the one asked for (``"auto"``: ``"dcd"`` for
        Crammer-Singer, whose penalty and loss are its own, else ``"cdn"`` for the L1 penalty,
        ``"dcd"`` for L2)."""
        fast = "cdn" if self.penalty == "l1" else "dcd"
        if self.multi_class == "crammer_singer":
            fast = "dcd"
        if self.solver not in ("auto", "cvxpy", fast):
            what = {"dcd": "the L2-regularised", "cdn": "the L1-regularised"}[self.solver]
            raise ValueError(f"`solver`: {self.solver!r} solves {what} one-vs-rest problems; "
                             f"got penalty={self.penalty!r}, multi_class={self.multi_class!r} "
                             "(use solver='cvxpy' or 'auto').")
        return fast if self.solver == "auto" else self.solver

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> MaxMarginLinearClassifier:
        """Fit each binary problem (or Crammer and Singer's), certified.

        Parameters
        ----------
        X : (n_samples, n_features) array or sparse matrix
        y : (n_samples,) labels (at least two classes)
        sample_weight : (n_samples,) array, optional
            Per-sample multipliers of ``C``; zero leaves a sample out.

        Returns
        -------
        self
        """
        C, scaling, max_iter = self._check_params()
        X, y = check_estimator_Xy(self, X, y)
        _check_combination(self.penalty, self.loss, self.dual, X.shape[0], X.shape[1])
        solver = self._solver_for()
        seed = int(check_random_state(self.random_state).randint(np.iinfo("i").max))
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        k = self.classes_.size
        if k < 2:
            raise ValueError("`y`: This solver needs samples of at least 2 classes in the data, "
                             f"but the data contains only one class: {self.classes_[0]!r}")
        weights = estimator_sample_weights(sample_weight, X.shape[0])
        weights = np.where(weights > 0, weights, 0.0)  # LinearSVC leaves them out
        class_w = compute_class_weight(self.class_weight, classes=self.classes_, y=y,
                                       sample_weight=weights)
        keep = np.flatnonzero(weights > 0)
        if np.unique(y_idx[keep]).size < 2:
            raise ValueError("`sample_weight`: the samples of positive weight must hold at least "
                             "two classes.")
        Xk = X[keep]
        if self.multi_class == "crammer_singer":
            solutions = [self._crammer_singer(Xk, y_idx[keep], C * class_w[y_idx[keep]]
                                              * weights[keep], scaling, max_iter, solver, seed)]
        else:
            solutions = [self._binary(Xk, yb, box, scaling, max_iter, solver, seed, label)
                         for label, yb, box in liblinear_problems(
                             y_idx[keep], self.classes_, C, class_w, weights[keep])]
        self._set_coefficients(solutions, k)
        self.solutions_ = solutions
        self.certificates_ = [s.certificate for s in solutions]
        self.n_iter_ = int(max(s.iterations for s in solutions))
        self._warn_unless_certified(solutions, max_iter)
        return self

    def _binary(self, X: Any, y: np.ndarray, box: np.ndarray, scaling: float | None,
                max_iter: int, solver: str, seed: int, label: str) -> Any:
        if solver == "dcd":
            from maxmargin.algorithms import dcd

            side = "auto" if self.dual == "auto" else ("dual" if self.dual else "primal")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", exceptions.ConvergenceWarning)  # one, below
                sol = dcd(X, y, 1.0, loss=self.loss, intercept_scaling=scaling,
                          sample_weight=box, tol=max(self.tol, LINEAR_GAP_FLOOR),
                          max_iter=max_iter, random_state=seed, solver=side)
        elif solver == "cdn":
            from maxmargin.algorithms import l1_cdn

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", exceptions.ConvergenceWarning)  # one, below
                sol = l1_cdn(X, y, 1.0, intercept_scaling=scaling, sample_weight=box,
                             tol=max(self.tol, LINEAR_GAP_FLOOR), max_iter=max_iter,
                             random_state=seed)
        else:
            from maxmargin.formulations import liblinear_primal

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", exceptions.ConvergenceWarning)  # one, below
                sol = liblinear_primal(X, y, 1.0, loss=self.loss, penalty=self.penalty,
                                       intercept_scaling=scaling, sample_weight=box).solve()
        if self.verbose:
            print(f"[maxmargin] {solver} ({label}): {sol.status}, {sol.iterations} iterations")
        return sol

    def _crammer_singer(self, X: Any, y_idx: np.ndarray, box: np.ndarray,
                        scaling: float | None, max_iter: int, solver: str, seed: int) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", exceptions.ConvergenceWarning)  # one, in fit
            if solver == "dcd":
                from maxmargin.algorithms import cs_dcd

                sol = cs_dcd(X, y_idx, 1.0, n_classes=self.classes_.size,
                             intercept_scaling=scaling, sample_weight=box,
                             tol=max(self.tol, LINEAR_GAP_FLOOR), max_iter=max_iter,
                             random_state=seed)
            else:
                from maxmargin.formulations import crammer_singer_primal

                sol = crammer_singer_primal(X, y_idx, 1.0, n_classes=self.classes_.size,
                                            intercept_scaling=scaling,
                                            sample_weight=box).solve()
        if self.verbose:
            print(f"[maxmargin] {solver} (crammer_singer): {sol.status}, {sol.iterations} "
                  "iterations")
        return sol

    def _set_coefficients(self, solutions: list[Any], k: int) -> None:
        if self.multi_class == "crammer_singer":
            W, b = solutions[0].W, solutions[0].b
            if k == 2:  # one score difference, as LinearSVC
                W, b = (W[1] - W[0])[None, :], np.array([b[1] - b[0]])
        else:
            W = np.vstack([s.w for s in solutions])
            b = np.array([s.b for s in solutions], dtype=np.float64)
        self.coef_ = np.ascontiguousarray(W, dtype=np.float64)
        self.intercept_ = b if self.fit_intercept else np.zeros_like(b)

    def _warn_unless_certified(self, solutions: list[Any], max_iter: int) -> None:
        bad = [s for s in solutions if s.status != "optimal"]
        if not bad:
            return
        capped = any(s.status == "max_iter" for s in bad)
        head = (f"{_CAPPED} (max_iter={max_iter} stopped a problem short of its certified "
                "optimum; raise max_iter, or scale the features.)" if capped
                else "A binary problem was not certified optimal.")
        detail = "; ".join(f"{s.status}: {getattr(s, 'message', '')}" for s in bad)
        warnings.warn(f"{head} {detail}", exceptions.ConvergenceWarning, stacklevel=3)

    # --- prediction -------------------------------------------------------------------------

    def decision_function(self, X: Any) -> np.ndarray:
        """``X coef_^T + intercept_``: ``(n,)`` for two classes, else ``(n, n_classes)``."""
        check_is_fitted(self)
        X = check_estimator_X(self, X, reset=False)
        scores = X @ self.coef_.T  # sparse after sparsify() on sparse X
        scores = (scores.toarray() if sp.issparse(scores) else np.asarray(scores)) + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X: Any) -> np.ndarray:
        """The class of the largest score (two classes: ``classes_[1]`` where it is > 0)."""
        scores = self.decision_function(X)
        idx = (scores > 0).astype(int) if scores.ndim == 1 else np.argmax(scores, axis=1)
        return self.classes_[idx]

    def densify(self) -> MaxMarginLinearClassifier:
        """``coef_`` as a dense array (LinearSVC's)."""
        check_is_fitted(self)
        if sp.issparse(self.coef_):
            self.coef_ = self.coef_.toarray()
        return self

    def sparsify(self) -> MaxMarginLinearClassifier:
        """``coef_`` as a CSR matrix (LinearSVC's)."""
        check_is_fitted(self)
        self.coef_ = sp.csr_matrix(self.coef_)
        return self

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

