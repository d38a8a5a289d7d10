"""scikit-learn estimators wrapping maxmargin's algorithms and oracles.

:class:`MaxMarginClassifier` is a drop-in for scikit-learn's ``SVC``: SVC's parameters with
SVC's defaults and meanings, SVC's fitted attributes (sparse where SVC's are), its warnings and
errors, and ``predict_proba`` by LIBSVM's Platt scaling. Each binary problem is solved by a
method of the registry (:mod:`maxmargin.methods`, ``solver=``) and keeps its certified
:class:`~maxmargin.results.SVMSolution` (or :class:`~maxmargin.results.PerceptronResult`).

Multi-class data is handled one-vs-one exactly as LIBSVM: one binary problem per pair of classes
``(i, j)``, ``i < j`` in the order of ``classes_``, with class ``i`` as ``+1``; ``predict`` counts
the votes (``f_ij(x) > 0`` votes for ``i``, else ``j``) and ties go to the class that comes
first, while the ``"ovr"`` decision function counts ``f_ij(x) >= 0`` for ``i`` (SVC's transform,
which ``break_ties`` maximises). A binary problem has ``classes_[1]`` as ``+1``:
``decision_function = dual_coef_ K(support_vectors_, x) + intercept_`` with maxmargin's single
sign convention ``f(x) = sum_i alpha_i y_i K(x_i, x) + b``, and ``f(x) > 0`` predicts
``classes_[1]`` (scikit-learn's rule ``predict == (decision_function > 0)``; at exactly ``f = 0``
SVC predicts ``classes_[1]``, LIBSVM's vote, and this estimator ``classes_[0]``).

Per-sample weights multiply the box bound: ``C_i = C * class_weight[y_i] * sample_weight_i``
(the weight of each sample's *own* class); samples of weight zero or below are left out.
"""

from __future__ import annotations

import contextlib
import numbers
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.fixes import parse_version
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _num_samples,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
)

import maxmargin.exceptions as exceptions
from maxmargin._probability import LibsvmRandom, coupled_probabilities, platt_parameters
from maxmargin._threads import blas_threads, check_n_jobs
from maxmargin._validation import check_C, check_choice, check_estimator_X, check_sample_weight
from maxmargin.algorithms.smo.batch import SMOBatch
from maxmargin.certificate import BLOCK_BYTES
from maxmargin.kernels import Kernel, PrecomputedKernel, own_points
from maxmargin.kernels.objects import training_kernel
from maxmargin.methods import METHODS, MethodSpec, get_method, method_names
from maxmargin.methods import _weights as fold_weights
from maxmargin.results import PerceptronResult, SVMSolution
from maxmargin.tolerances import SMO_TOL

__all__ = ["MaxMarginClassifier", "DENSE_SOLVE_BYTES", "PROBABILITY_DEPRECATED"]

#: scikit-learn 1.9 deprecated SVC's ``probability`` (default ``"deprecated"``; setting it warns
#: ``FutureWarning``, and so does reading ``probA_``/``probB_``). The estimator follows the
#: installed scikit-learn.
PROBABILITY_DEPRECATED = parse_version(sklearn.__version__).release[:2] >= (1, 9)
_PROBABILITY_DEFAULT: bool | str = "deprecated" if PROBABILITY_DEPRECATED else False
_DEPRECATION = ("was deprecated in scikit-learn 1.9 and will be removed in 1.11 (SVC's; "
                "MaxMarginClassifier follows SVC)")
#: Sparse training data whose dense copy takes at most this many bytes is solved in dense form:
#: the compiled kernels (sparse kernel columns are computed through Python), and the very same
#: model as the dense fit, bit for bit (as SVC's dense and sparse fits). The fitted attributes
#: stay sparse.
DENSE_SOLVE_BYTES = 16 * 2**20
#: The registry's SMO: the method that takes ``cache_size``, ``shrinking`` and ``precision``.
_SMO_SOLVE = METHODS["smo"].solve
_EARLY = ("Solver terminated early (max_iter={}).  Consider pre-processing your data with "
          "StandardScaler or MinMaxScaler.")
_DONE = ("optimal", "converged")
#: The binary problems' samples are found for blocks of pairs whose ``(pairs, n)`` mask holds
#: at most this many entries.
PAIR_MASK_ENTRIES = 2**22


class MaxMarginClassifier(ClassifierMixin, BaseEstimator):
    """Support-vector classification by a maxmargin solver, with scikit-learn's SVC interface.

    The binary problems are the SVM dual ``max sum(alpha) - 1/2 alpha^T Q alpha`` with
    ``Q_ij = y_i y_j K(x_i, x_j)``, ``0 <= alpha_i <= C_i``, ``y^T alpha = 0`` (one per pair of
    classes), each solved by ``solver`` and returned with its certificate in ``solutions_``.

    Parameters
    ----------
    C : float or None, default=1.0
        Box bound of the soft margin (SVC's ``C``); ``np.inf`` or ``None`` is the hard margin
        (``C_i = inf``), which must exist (else ``ValueError``).
    kernel : {"linear", "poly", "rbf", "sigmoid", "precomputed"}, callable or Kernel, default="rbf"
        SVC's meanings. ``"precomputed"``: ``X`` is the Gram matrix at ``fit`` and the
        ``(n_new, n_train)`` kernel values at prediction. A callable is called as SVC calls it:
        once on the whole training data, ``k(X, X)``, whose Gram matrix is then solved as
        precomputed, and once on ``(X_new, X_train)`` at prediction (``X`` passed as given:
        sparse, lists, strings). A maxmargin :class:`~maxmargin.kernels.Kernel` object is
        evaluated by the solver itself (e.g. SMO's kernel cache); with
        :class:`~maxmargin.kernels.StringSubsequenceKernel`, ``X`` is a list of strings.
    degree : int, default=3
        Degree of ``"poly"``.
    gamma : {"scale", "auto"} or float, default="scale"
        ``"rbf"``, ``"poly"``, ``"sigmoid"``: ``"scale"`` is ``1 / (n_features X.var())`` on the
        whole training set, ``"auto"`` is ``1 / n_features``.
    coef0 : float, default=0.0
        Offset of ``"poly"`` and ``"sigmoid"``.
    shrinking : bool, default=True
        SMO's shrinking heuristic.
    probability : bool, default=SVC's
        Fit Platt's probability model (5-fold cross-validation per binary problem, LIBSVM's
        ``-b 1``; see :mod:`maxmargin._probability`) for ``predict_proba``. With
        scikit-learn >= 1.9 the default is ``"deprecated"`` (False) and setting it warns
        ``FutureWarning``, as SVC.
    tol : float or None, default=1e-3
        The solver's stopping tolerance (SMO: ``m - M < tol``, SVC's meaning; the
        nearest-point methods: relative duality gap); None is the method's own default.
    cache_size : float, default=200
        SMO's kernel cache in MB.
    class_weight : dict, "balanced" or None, default=None
        Multiplies ``C`` for the samples of each class.
    verbose : bool, default=False
        Print one line per binary problem (method, status, iterations).
    max_iter : int, default=-1
        Iteration cap of each binary problem (epochs for the perceptrons); ``-1`` (or None) is
        no cap of the user's (the method's own safety cap applies). A capped run stops as
        LIBSVM's does (no exact finish) and warns ``ConvergenceWarning``.
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
        Shape of ``decision_function`` for more than two classes.
    break_ties : bool, default=False
        More than two classes and ``"ovr"``: predict the argmax of ``decision_function`` instead
        of the one-vs-one vote.
    random_state : int, RandomState instance or None, default=None
        Seeds the folds of the probability model; the same value gives SVC's folds.
    solver : str, default="smo"
        A method of :data:`maxmargin.methods.METHODS`: ``"smo"`` (LIBSVM's algorithm),
        ``"wolfe"``, ``"gilbert"``, ``"mdm"`` (the hard margin through the nearest points of
        the classes' hulls; ``C`` is not used, the data must be separable), ``"perceptron"``
        (linear kernel), ``"kernel_perceptron"``, ``"cvxpy"`` (the dual oracle), or any
        registered one.
    precision : {"auto", "single", "double"}, default="auto"
        SMO's kernel-cache precision.
    n_jobs : int or None, default=None
        SMO's threads (opt-in; -1 for every core): its certificates' compiled blocks and every
        BLAS call of the fit (the kernel columns of wide data) run on ``n_jobs`` threads; None
        is one, whatever the machine; more pay off on otherwise idle cores only. BLAS splits
        its sums by thread count, so models fitted with different ``n_jobs`` may differ in the
        last bits (each certified all the same); see :func:`~maxmargin.algorithms.smo.smo`.
        Other solvers run on one thread.

    Attributes
    ----------
    classes_ : (n_classes,) array
    class_weight_ : (n_classes,) array
        The multipliers of ``C`` per class.
    support_ : (n_SV,) int32 array
        Indices of the support vectors, grouped by class.
    support_vectors_ : (n_SV, n_features) array or CSR matrix
        Sparse after a sparse fit; empty ``(0, 0)`` for precomputed and callable kernels.
    n_support_ : (n_classes,) int32 array
    dual_coef_ : (n_classes - 1, n_SV) array or CSR matrix
        ``alpha y`` in LIBSVM's one-vs-one layout; sparse after a sparse fit.
    coef_ : (n_classes * (n_classes - 1) / 2, n_features) array or CSR matrix
        Linear kernel only: ``w`` of each binary problem (read-only).
    intercept_ : (n_classes * (n_classes - 1) / 2,) array
    probA_, probB_ : (n_classes * (n_classes - 1) / 2,) arrays
        Platt's ``A``, ``B`` per binary problem (empty without ``probability``); deprecated with
        scikit-learn >= 1.9, as SVC's.
    fit_status_ : int
        0 when every binary problem met its tolerance, else 1 (with a ConvergenceWarning).
    n_iter_ : (n_classes * (n_classes - 1) / 2,) int32 array
        Iterations of each binary problem (updates for the perceptrons).
    shape_fit_ : tuple
        Shape of the training ``X``.
    n_features_in_, feature_names_in_
        As scikit-learn (not set for callable kernels).
    solutions_ : list of SVMSolution or PerceptronResult
        The binary problems' answers, in the order of ``intercept_``, each with its status,
        message and (SVM methods) float64 ``certificate``.
    solution_ : SVMSolution, PerceptronResult or list
        ``solutions_[0]`` for two classes, else ``solutions_``.
    """

    def __init__(
        self,
        *,
        C: float | None = 1.0,
        kernel: Any = "rbf",
        degree: int = 3,
        gamma: float | str = "scale",
        coef0: float = 0.0,
        shrinking: bool = True,
        probability: bool | str = _PROBABILITY_DEFAULT,
        tol: float | None = SMO_TOL,
        cache_size: float = 200,
        class_weight: dict | str | None = None,
        verbose: bool = False,
        max_iter: int | None = -1,
        decision_function_shape: str = "ovr",
        break_ties: bool = False,
        random_state: Any = None,
        solver: str = "smo",
        precision: str = "auto",
        n_jobs: int | None = None,
    ) -> None:
        self.C = C
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
        self.precision = precision
        self.n_jobs = n_jobs

    # --- parameters -------------------------------------------------------------------------

    def _hard_margin_C(self) -> float | None:
        """``C``, with ``None`` for the hard margin (``C=None`` or ``C=inf``)."""
        C = self.C
        if C is None:
            return None
        if isinstance(C, bool) or not isinstance(C, numbers.Real):
            raise ValueError(f"`C` must be a positive number, np.inf or None (the hard margin); "
                             f"got {C!r}.")
        if C == np.inf:
            return None
        if not C > 0 or not np.isfinite(C):
            raise ValueError(f"`C` must be positive; got {C!r}.")
        return float(C)

    def _iteration_cap(self) -> int | None:
        """``max_iter`` as the methods take it: None for no cap (-1 or None)."""
        cap = self.max_iter
        if cap is None or (isinstance(cap, numbers.Integral) and not isinstance(cap, bool)
                           and cap == -1):
            return None
        if isinstance(cap, bool) or not isinstance(cap, numbers.Integral) or cap < 1:
            raise ValueError(f"`max_iter` must be -1 (no limit) or a positive integer; got "
                             f"{cap!r}.")
        return int(cap)

    def _probability_requested(self) -> bool:
        """Whether to fit the probability model; SVC's FutureWarning when set (sklearn >= 1.9)."""
        value = self.probability
        if isinstance(value, str) and value == "deprecated":
            return False
        if not isinstance(value, bool | np.bool_):
            raise ValueError(f"`probability` must be True or False; got {value!r}.")
        if PROBABILITY_DEPRECATED:
            warnings.warn(
                f"The `probability` parameter {_DEPRECATION}. Use "
                "`CalibratedClassifierCV(MaxMarginClassifier(), ensemble=False)` instead of "
                "`MaxMarginClassifier(probability=True)`.",
                FutureWarning,
                stacklevel=3,
            )
        return bool(value)

    def _kernel_is_function(self) -> bool:
        """A plain callable (SVC's callable kernel), not a maxmargin kernel object."""
        return callable(self.kernel) and not isinstance(self.kernel, Kernel | str)

    def _kernel_is_precomputed(self) -> bool:
        return isinstance(self.kernel, str) and self.kernel == "precomputed"

    def _own_points(self) -> Any:
        """The validation of a kernel object whose points are not float arrays (strings)."""
        return own_points(self.kernel) if isinstance(self.kernel, Kernel) else None

    # --- fitting ----------------------------------------------------------------------------

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> MaxMarginClassifier:
        """Fit one binary problem per pair of classes (one for two classes).

        Parameters
        ----------
        X : (n_samples, n_features) array or sparse matrix, or (n_samples, n_samples) Gram
            matrix for ``kernel="precomputed"``
        y : (n_samples,) labels of any kind (at least two classes)
        sample_weight : (n_samples,) array, optional
            Per-sample multipliers of ``C``; zero or negative leaves a sample out (SVC's rule).

        Returns
        -------
        self
        """
        spec = get_method(self.solver, families=("maxmargin", "oracle"))  # not third parties
        C = self._hard_margin_C()
        max_iter = self._iteration_cap()
        check_choice(self.decision_function_shape, "decision_function_shape", ("ovr", "ovo"))
        check_n_jobs(self.n_jobs)
        probability = self._probability_requested()
        seed = check_random_state(self.random_state).randint(np.iinfo("i").max)  # as SVC
        X = self._training_X(X, y)
        y_idx, weights = self._targets_and_weights(y, sample_weight, _num_samples(X))
        points, kern = self._training_kernel(X)
        if not spec.supports_kernel(kern):
            raise ValueError(f"`kernel`: solver={spec.name!r} takes the kernels {spec.kernels}; "
                             f"got {kern.describe()!r}.")
        k = len(self.classes_)
        pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
        members, labels = _pair_samples(y_idx, weights > 0, pairs)
        self._check_weights_apply(spec, C, weights, members)
        self._orientation = -1.0 if k == 2 else 1.0  # our f times this is LIBSVM's
        rng = LibsvmRandom(seed) if probability else None  # set up only when it is used
        solve = self._binary_solver(spec, C, kern, max_iter, points, weights)
        solutions, prob_a, prob_b = [], [], []
        with warnings.catch_warnings(), self._threads(spec):
            warnings.simplefilter("ignore", exceptions.ConvergenceWarning)  # one summary below
            for (i, j), idx, y_pair in zip(pairs, members, labels, strict=True):
                sol = solve(idx, y_pair)
                self._refuse_infeasible(sol, spec, C, i, j)
                solutions.append(sol)
                if probability:
                    a, b = self._platt(solve, points, idx, y_pair, y_idx[idx] == i, rng)
                    prob_a.append(a)
                    prob_b.append(b)
                if self.verbose:
                    print(f"[maxmargin] {spec.name} ({_label(self.classes_[i])}, "
                          f"{_label(self.classes_[j])}): {sol.status}, {_iterations(sol)} "
                          "iterations")
        self.solutions_ = solutions
        self.solution_ = solutions[0] if k == 2 else solutions
        self._probA = np.array(prob_a, dtype=np.float64)
        self._probB = np.array(prob_b, dtype=np.float64)
        self._pairs = pairs
        self._layout(X, y_idx, pairs, members, labels)
        self.n_iter_ = np.array([_iterations(s) for s in solutions], dtype=np.int32)
        self.fit_status_ = int(any(s.status not in _DONE for s in solutions))
        self._warn_from_fit_status(max_iter)
        return self

    def _training_X(self, X: Any, y: Any) -> Any:
        """The training data, validated (as given for a callable kernel, as SVC). Sets
        ``shape_fit_`` and ``_sparse``."""
        if y is None:
            raise ValueError("`y`: MaxMarginClassifier requires y to be passed, but the target "
                             "y is None.")
        if sp.issparse(X) and self._kernel_is_precomputed():
            raise TypeError("`X`: Sparse precomputed kernels are not supported.")
        self._sparse = sp.issparse(X) and not self._kernel_is_function()
        if self._kernel_is_function():
            check_consistent_length(X, y)
        else:
            X = self._validate_X(X, reset=True)
            if self._kernel_is_precomputed() and X.shape[0] != X.shape[1]:
                raise ValueError(f"`X`: Precomputed matrix must be a square matrix. Input is a "
                                 f"{X.shape[0]}x{X.shape[1]} matrix.")
        self.shape_fit_ = X.shape if hasattr(X, "shape") else (_num_samples(X),)
        return X

    def _training_kernel(self, X: Any) -> tuple[Any, Kernel]:
        """``(points, kernel)``: the points the methods see (training indices for precomputed
        and callable kernels; a dense copy of small sparse data) and the kernel object, set up
        once for every binary problem."""
        self._kernel = None  # precomputed and callable: no kernel object at prediction
        if self._kernel_is_function():
            n = _num_samples(X)
            gram = self._call_kernel(X, X)
            if gram.shape != (n, n):
                raise ValueError(
                    f"`kernel`: the callable must return the Gram matrix k(X, X) of shape "
                    f"({n}, {n}); got shape {gram.shape} (X.shape[0] should be equal to "
                    "X.shape[1])."
                )
            self._X_fit = X  # as SVC: k(X_new, X_fit) at prediction
        elif self._kernel_is_precomputed():
            gram = X
        else:
            self._kernel = training_kernel(self.kernel, self.gamma, self.degree, self.coef0, X)
            small = sp.issparse(X) and 8 * X.shape[0] * X.shape[1] <= DENSE_SOLVE_BYTES
            return (X.toarray() if small else X), self._kernel
        kern = PrecomputedKernel(gram)
        return kern.training_points(), kern

    def _validate_X(self, X: Any, *, reset: bool) -> Any:
        """:func:`~maxmargin._validation.check_estimator_X`: scikit-learn's ``validate_data``
        (its messages) and maxmargin's checks; at ``fit``, entries too large for float64 kernel
        values are refused in SVC's words too."""
        try:
            return check_estimator_X(self, X, reset=reset, points=self._own_points())
        except ValueError as exc:
            if reset and "in magnitude" in str(exc):  # check_array's overflow limit
                raise ValueError(f"{exc} The dual coefficients or intercepts are not finite at "
                                 "that scale.") from None
            raise

    def _call_kernel(self, A: Any, B: Any) -> np.ndarray:
        """The callable kernel's ``k(A, B)`` as a dense float64 array (SVC's conversion)."""
        values = self.kernel(A, B)
        if sp.issparse(values):
            values = values.toarray()
        try:
            values = np.asarray(values, dtype=np.float64, order="C")
        except (TypeError, ValueError) as exc:
            raise ValueError(f"`kernel`: the callable must return numbers; {exc}") from None
        if values.ndim != 2:
            raise ValueError(f"`kernel`: the callable must return a 2-D array; got shape "
                             f"{values.shape}.")
        return values

    def _targets_and_weights(self, y: Any, sample_weight: Any,
                             n: int) -> tuple[np.ndarray, np.ndarray]:
        """``classes_``, ``class_weight_``, the class index of each sample and its weight
        ``sample_weight_i * class_weight_[y_i]`` (zero where SVC leaves the sample out)."""
        try:
            y = column_or_1d(y, warn=True)
            check_consistent_length(np.empty(n), y)
            check_classification_targets(y)
        except ValueError as exc:
            raise ValueError(f"`y`: {exc}") from None
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"`y` must contain at least two classes to fit a classifier (the number of "
                f"classes has to be greater than one); got one class ({_label(self.classes_[0])})."
            )
        self.class_weight_ = (np.ones(len(self.classes_)) if self.class_weight is None  # its ones
                              else compute_class_weight(self.class_weight, classes=self.classes_,
                                                        y=y))
        given = estimator_sample_weights(sample_weight, n)
        weights = np.where(given > 0, given, 0.0) * self.class_weight_[y_idx]
        if not np.any(weights > 0):
            raise ValueError("`sample_weight`/`class_weight`: Invalid input - all samples have "
                             "zero or negative weights.")
        if np.count_nonzero(np.bincount(y_idx[weights > 0], minlength=2)) < 2:
            raise ValueError("`sample_weight`/`class_weight`: Invalid input - all samples with "
                             "positive weights belong to the same class.")
        return y_idx, weights

    def _check_weights_apply(self, spec: MethodSpec, C: float | None,
                             weights: np.ndarray, members: list[np.ndarray]) -> None:
        """Refuse, before any problem is solved, weights a method cannot apply: unequal positive
        weights within a binary problem need a box bound per sample (the hard margin has none
        to scale: only zero weights, leaving samples out, act there)."""
        if C is None or spec.problem == "hard_margin" or spec.sample_weight:
            return
        if any(np.any(weights[idx] != weights[idx[0]]) for idx in members):
            raise ValueError(
                f"`sample_weight`/`class_weight`: solver={spec.name!r} has no box bound to weigh "
                "(only zero weights, which leave samples out, apply); use one of "
                f"{method_names(problem='svm')}."
            )

    def _binary_solver(self, spec: MethodSpec, C: float | None, kern: Kernel, max_iter: int | None,
                       points: Any, weights: np.ndarray) -> Any:
        """``solve(idx, y)``: the binary problem of the samples ``idx`` with labels ``y`` by the
        method ``spec`` (per-sample bounds ``C weights``), with the fit's options."""
        hard = C is None or spec.problem == "hard_margin"
        if spec.solve is _SMO_SOLVE:  # one batch: validated once, each pair solved as smo's
            batch = SMOBatch(points, kern, tol=spec.default_tol if self.tol is None else self.tol,
                             max_iter=max_iter, cache_size=self.cache_size,
                             shrinking=self.shrinking, precision=self.precision,
                             finish=max_iter is None,  # a user's cap stops SMO as LIBSVM's
                             n_jobs=self.n_jobs, checked=True, **spec.options)
            if hard:
                fixed: tuple[float | None, None] | None = (None, None)
            elif np.all(weights == weights[0]):  # equal weights (the default): one C for all
                fixed = (check_C(C * float(weights[0])), None)
            else:
                fixed = None

            def solve_smo(idx: np.ndarray, y: np.ndarray) -> SVMSolution:
                if fixed is not None:
                    return batch.solve_checked(idx, y, *fixed)
                C_pair, w = fold_weights(C, weights[idx])  # idx, y: the fit's (checked)
                return batch.solve_checked(idx, y, check_C(C_pair), check_sample_weight(w, y))

            return solve_smo

        def solve(idx: np.ndarray, y: np.ndarray) -> SVMSolution | PerceptronResult:
            w = None if hard or spec.problem == "perceptron" else weights[idx]
            return spec(points[idx], y, C=None if hard else C, kernel=kern, tol=self.tol,
                        max_iter=max_iter, sample_weight=w)

        return solve

    def _threads(self, spec: MethodSpec) -> contextlib.AbstractContextManager:
        """SMO's BLAS threads for the whole fit (``n_jobs``, one by default)."""
        if spec.solve is not _SMO_SOLVE:
            return contextlib.nullcontext()
        return blas_threads(check_n_jobs(self.n_jobs) or 1)

    def _refuse_infeasible(self, sol: Any, spec: MethodSpec, C: float | None, i: int,
                           j: int) -> None:
        """A hard margin that does not exist is a ``ValueError`` naming the classes."""
        if sol.status != "infeasible":
            return
        pair = f"classes {_label(self.classes_[i])} and {_label(self.classes_[j])}"
        if spec.problem == "hard_margin":
            raise ValueError(
                f"solver={spec.name!r} solves the hard-margin SVM, which {pair} do not admit "
                f"({sol.message}); use solver='smo' (soft margin, finite C)."
            )
        raise ValueError(
            f"`C`: the hard margin (C={self.C!r}) does not exist for {pair}: no hyperplane "
            f"separates them ({sol.message}); use a finite C."
        )

    def _platt(self, solve: Any, points: Any, idx: np.ndarray, y_pair: np.ndarray,
               first: np.ndarray, rng: LibsvmRandom) -> tuple[float, float]:
        """Platt's ``(A, B)`` of one binary problem (samples ``idx``, labels ``y_pair``,
        ``first``: of its first class) in LIBSVM's orientation, from 5-fold decision values
        of the same method. The folds cut LIBSVM's order of the problem (the first class's
        samples, then the second's); each fold is solved in the data's order, as the problem."""
        libsvm = np.concatenate([np.flatnonzero(first), np.flatnonzero(~first)])
        sign = self._orientation

        def fit_and_decide(train: np.ndarray, test: np.ndarray) -> np.ndarray:
            part = np.sort(libsvm[train])
            fold = solve(idx[part], y_pair[part])
            if fold.status == "infeasible":
                raise ValueError("`probability`: a fold of the probability model's "
                                 f"cross-validation has no hard margin ({fold.message}).")
            return sign * fold.decision_function(points[idx[libsvm[test]]])

        return platt_parameters(np.where(first[libsvm], 1.0, -1.0), rng, fit_and_decide)

    def _layout(self, X: Any, y_idx: np.ndarray, pairs: list[tuple[int, int]],
                members: list[np.ndarray], labels: list[np.ndarray]) -> None:
        """Support vectors grouped by class, and LIBSVM's ``dual_coef_`` layout: the
        coefficient ``alpha y`` of a support vector of class ``i`` in the problem ``(i, j)`` is
        in row ``j - 1``, that of class ``j`` in row ``i``."""
        k, n = len(self.classes_), y_idx.size
        rows = np.concatenate(members)  # every problem's samples, problem after problem
        coef = np.concatenate([sol.alpha for sol in self.solutions_]) * np.concatenate(labels)
        sizes = [idx.size for idx in members]
        first = np.repeat([i for i, _ in pairs], sizes)  # each entry's problem (i, j)
        second = np.repeat([j for _, j in pairs], sizes)
        sv = np.flatnonzero(coef != 0.0)
        used = np.zeros(n, dtype=bool)
        used[rows[sv]] = True
        order = np.argsort(y_idx, kind="stable")  # by class, then index
        self.support_ = order[used[order]].astype(np.int32)
        self.n_support_ = np.bincount(y_idx[self.support_], minlength=k).astype(np.int32)
        column = np.full(n, -1)
        column[self.support_] = np.arange(self.support_.size)
        dual = np.zeros((max(k - 1, 1), self.support_.size))
        of_first = y_idx[rows[sv]] == first[sv]
        row = 0 if k == 2 else np.where(of_first, second[sv] - 1, first[sv])
        dual[row, column[rows[sv]]] = coef[sv]
        intercept = np.array([float(s.b) for s in self.solutions_])
        if not (np.all(np.isfinite(dual)) and np.all(np.isfinite(intercept))):
            raise ValueError("The dual coefficients or intercepts are not finite. The input data "
                             "may contain large values and need to be preprocessed.")
        self.intercept_ = intercept
        if self._kernel is None:  # precomputed or callable: SVC keeps no support vectors
            self.support_vectors_ = np.empty((0, 0))
        else:
            self.support_vectors_ = X[self.support_]
        self.dual_coef_ = sp.csr_matrix(dual) if self._sparse else dual

    def _warn_from_fit_status(self, max_iter: int | None) -> None:
        """One ConvergenceWarning for the fit: SVC's words when a cap stopped a problem, then
        each problem that did not meet its tolerance."""
        if not self.fit_status_:
            return
        lines = [f"({_label(self.classes_[i])}, {_label(self.classes_[j])}): {s.status}"
                 + (f": {s.message}" if getattr(s, "message", "") else "")
                 for (i, j), s in zip(self._pairs, self.solutions_, strict=True)
                 if s.status not in _DONE]
        capped = any(s.status == "max_iter" for s in self.solutions_)
        cap = int(self.n_iter_.max()) if max_iter is None else max_iter  # the method's own cap
        head = _EARLY.format(cap) if capped else "A binary problem did not meet its tolerance."
        warnings.warn(f"{head} Binary problems: " + "; ".join(lines),
                      exceptions.ConvergenceWarning, stacklevel=3)

    # --- prediction -------------------------------------------------------------------------

    @property
    def coef_(self) -> Any:
        """``w`` of each binary problem (linear kernel only), shape ``(n_pairs, n_features)``;
        read-only, sparse after a sparse fit."""
        if not (isinstance(self.kernel, str) and self.kernel == "linear"):
            raise AttributeError("coef_ is only available when using a linear kernel")
        check_is_fitted(self)
        coef = self._primal_coef()
        if self._sparse:
            coef = sp.csr_matrix(coef)
            coef.data.flags.writeable = False
        else:
            coef.flags.writeable = False
        return coef

    def _primal_coef(self) -> np.ndarray:
        """``w`` of each binary problem as a dense ``(n_pairs, n_features)`` array."""
        return np.asarray(self._pair_coefficients() @ self.support_vectors_)

    def _pair_coefficients(self) -> np.ndarray:
        """``(n_pairs, n_SV)`` coefficients ``alpha y`` of each problem over all SVs."""
        dual = self.dual_coef_.toarray() if sp.issparse(self.dual_coef_) else self.dual_coef_
        k = len(self.classes_)
        if k == 2:
            return np.array(dual, dtype=np.float64)
        sv_class = np.repeat(np.arange(k), self.n_support_)
        out = np.zeros((len(self._pairs), sv_class.size))
        for p, (i, j) in enumerate(self._pairs):
            out[p, sv_class == i] = dual[j - 1, sv_class == i]
            out[p, sv_class == j] = dual[i, sv_class == j]
        return out

    def _validate_for_predict(self, X: Any) -> Any:
        """Points to predict, as the fit's: kernel values ``(n, n_train)`` for precomputed and
        callable kernels, CSR after a sparse fit (dense input converted, as SVC), dense after
        a dense fit (sparse input refused, as SVC)."""
        check_is_fitted(self)
        if self.n_support_.sum() != self.support_.size:
            raise ValueError("The internal representation of MaxMarginClassifier was altered")
        if self._kernel_is_function():
            X = self._call_kernel(X, self._X_fit)
        else:
            if sp.issparse(X) and not self._sparse:
                raise ValueError("`X`: cannot use sparse input in 'MaxMarginClassifier' trained "
                                 "on dense data")
            X = self._validate_X(X, reset=False)
            if self._sparse and not sp.issparse(X):
                X = sp.csr_matrix(X)
        if self._kernel is None and X.shape[1] != self.shape_fit_[0]:
            raise ValueError(f"`X`: X.shape[1] = {X.shape[1]} should be equal to "
                             f"{self.shape_fit_[0]}, the number of samples at training time")
        return X

    def _pair_decisions(self, X: Any) -> np.ndarray:
        """``f_p(x)`` of every binary problem, ``(n, n_pairs)``, in row blocks of at most
        :data:`~maxmargin.certificate.BLOCK_BYTES` of kernel values."""
        X = self._validate_for_predict(X)
        coef = self._pair_coefficients()  # (n_pairs, n_SV)
        if self._kernel is None:  # X: kernel values against the training points
            return np.asarray(X[:, self.support_] @ coef.T) + self.intercept_
        if self._kernel.name == "linear":
            return np.asarray(X @ self._primal_coef().T) + self.intercept_
        sv = self.support_vectors_
        n = X.shape[0] if hasattr(X, "shape") else len(X)
        out = np.zeros((n, coef.shape[0]))
        rows = max(1, BLOCK_BYTES // (8 * max(1, coef.shape[1])))
        for start in range(0, n if coef.shape[1] else 0, rows):
            stop = min(n, start + rows)
            out[start:stop] = self._kernel(X[start:stop], sv) @ coef.T
        return out + self.intercept_

    def decision_function(self, X: Any) -> np.ndarray:
        """Binary: ``f(x)`` (positive for ``classes_[1]``), shape ``(n,)``. More classes:
        ``(n, n_classes)`` votes plus scaled confidences (``"ovr"``, SVC's transform) or the
        ``(n, n_pairs)`` one-vs-one values (``"ovo"``)."""
        dec = self._pair_decisions(X)
        if len(self.classes_) == 2:
            return dec[:, 0]
        if self.decision_function_shape == "ovo":
            return dec
        return self._ovr(dec)

    def _ovr(self, dec: np.ndarray) -> np.ndarray:
        """SVC's ``"ovr"`` transform: one-vs-one votes (``f_ij >= 0`` votes ``i``, as SVC's
        transform; the vote of ``predict`` is LIBSVM's ``f_ij > 0``) plus the summed
        confidences scaled into ``(-1/3, 1/3)``."""
        k = len(self.classes_)
        votes = np.zeros((dec.shape[0], k))
        confidence = np.zeros((dec.shape[0], k))
        for p, (i, j) in enumerate(self._pairs):
            wins = dec[:, p] >= 0
            votes[wins, i] += 1
            votes[~wins, j] += 1
            confidence[:, i] += dec[:, p]
            confidence[:, j] -= dec[:, p]
        return votes + confidence / (3.0 * (np.abs(confidence) + 1.0))

    def predict(self, X: Any) -> np.ndarray:
        """The class of each row: ``classes_[1]`` where ``f > 0`` for two classes, else the
        one-vs-one vote (``f_ij > 0`` votes ``i``; ties to the class that comes first, as
        LIBSVM), or with ``break_ties`` the argmax of the ``"ovr"`` decision function."""
        check_is_fitted(self)
        if self.break_ties and self.decision_function_shape == "ovo":
            raise ValueError("`break_ties`: break_ties must be False when "
                             "decision_function_shape is 'ovo'")
        dec = self._pair_decisions(X)
        k = len(self.classes_)
        if k == 2:
            return self.classes_[(dec[:, 0] > 0).astype(int)]
        if self.break_ties:
            return self.classes_[np.argmax(self._ovr(dec), axis=1)]
        votes = np.zeros((dec.shape[0], k), dtype=np.int64)
        for p, (i, j) in enumerate(self._pairs):
            wins = dec[:, p] > 0
            votes[wins, i] += 1
            votes[~wins, j] += 1
        return self.classes_[np.argmax(votes, axis=1)]

    def _check_proba(self) -> bool:
        """``predict_proba`` exists when ``probability`` is set (SVC's rule)."""
        value = self.probability
        if (isinstance(value, str) and value == "deprecated") or not value:
            raise AttributeError("predict_proba is not available when probability=False")
        return True

    @available_if(_check_proba)
    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities ``(n, n_classes)`` (columns in the order of ``classes_``):
        Platt's sigmoid of each binary problem's decision value, coupled pairwise (LIBSVM's
        ``svm_predict_probability``; :mod:`maxmargin._probability`)."""
        check_is_fitted(self)
        if self._probA.size == 0 or self._probB.size == 0:
            raise NotFittedError("predict_proba is not available when fitted with "
                                 "probability=False")
        dec = self._pair_decisions(X) * self._orientation
        return coupled_probabilities(dec, self._probA, self._probB, self._pairs,
                                     len(self.classes_))

    @available_if(_check_proba)
    def predict_log_proba(self, X: Any) -> np.ndarray:
        """``log(predict_proba(X))``."""
        return np.log(self.predict_proba(X))

    @property
    def probA_(self) -> np.ndarray:
        """Platt's ``A`` of each binary problem (LIBSVM's orientation), empty without
        ``probability``."""
        self._warn_deprecated("probA_")
        return self._probA

    @property
    def probB_(self) -> np.ndarray:
        """Platt's ``B`` of each binary problem, empty without ``probability``."""
        self._warn_deprecated("probB_")
        return self._probB

    @staticmethod
    def _warn_deprecated(name: str) -> None:
        if PROBABILITY_DEPRECATED:
            warnings.warn(f"Attribute `{name}` {_DEPRECATION}, with `probability=True`.",
                          FutureWarning, stacklevel=3)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        pairwise = self._kernel_is_precomputed()
        tags.input_tags.sparse = not pairwise
        tags.input_tags.pairwise = pairwise
        return tags


def _pair_samples(y_idx: np.ndarray, kept: np.ndarray, pairs: list[tuple[int, int]]
                  ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Each binary problem's samples (the ``kept`` samples of its two classes, in the data's
    order) and their -1/+1 labels: for two classes ``classes_[1]`` is +1 (``f > 0`` predicts
    it); one-vs-one, class ``i`` of the pair ``(i, j)`` (LIBSVM). Built for a block of pairs
    at a time from one ``(pairs, n)`` mask; the arrays are views of the block's."""
    n = y_idx.shape[0]
    member = np.zeros((pairs[-1][1] + 1, n), dtype=bool)  # member[c, t]: t kept, of class c
    member[y_idx[kept], np.flatnonzero(kept)] = True
    counts = np.count_nonzero(member, axis=1)
    members: list[np.ndarray] = []
    labels: list[np.ndarray] = []
    step = max(1, PAIR_MASK_ENTRIES // n)
    for start in range(0, len(pairs), step):
        first, second = np.array(pairs[start:start + step]).T
        at = np.flatnonzero(member[first] | member[second])  # pair p's sample t at p n + t
        plus = second if len(pairs) == 1 else first
        y = np.where(member[plus].ravel()[at], 1.0, -1.0)
        sizes = counts[first] + counts[second]
        idx = at - np.repeat(np.arange(0, first.size * n, n), sizes)  # at % n (5x its time)
        ends = np.cumsum(sizes).tolist()
        for lo, hi in zip([0, *ends[:-1]], ends, strict=True):
            members.append(idx[lo:hi])
            labels.append(y[lo:hi])
    return members, labels


def _iterations(sol: SVMSolution | PerceptronResult) -> int:
    """Iterations of an SVM solver; updates (mistakes) of a perceptron."""
    return int(sol.iterations) if isinstance(sol, SVMSolution) else int(sol.mistakes)


def _label(value: Any) -> str:
    """A class label for messages (a numpy scalar as its Python value)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def estimator_sample_weights(sample_weight: Any, n: int) -> np.ndarray:
    """``sample_weight`` as a finite float64 ``(n,)`` array (a scalar for every sample; None is
    ones). Any sign is accepted here: SVC leaves out the samples of weight zero or below."""
    if sample_weight is None:
        return np.ones(n)
    try:
        w = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"`sample_weight` must be an array of numbers; got "
                         f"{type(sample_weight).__name__}.") from None
    if w.ndim == 0:
        w = np.full(n, float(w))
    if w.shape != (n,):
        raise ValueError(f"`sample_weight` must have shape ({n},), one weight per sample; got "
                         f"shape {w.shape}.")
    if not np.all(np.isfinite(w)):
        raise ValueError("`sample_weight` must be finite; got NaN or infinite weights.")
    return w
