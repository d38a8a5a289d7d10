"""scikit-learn estimators wrapping maxmargin's algorithms and oracles.

:class:`MaxMarginClassifier` is a drop-in for scikit-learn's ``SVC`` (same defaults, parameter
meanings and fitted attributes) whose binary problems are solved by the chosen maxmargin
solver and keep their certified :class:`~maxmargin.results.SVMSolution` (or
:class:`~maxmargin.results.PerceptronResult`).

Multi-class data is handled one-vs-one exactly as LIBSVM: one binary problem per pair of classes
``(i, j)``, ``i < j`` in the order of ``classes_``, with class ``i`` as ``+1``; ``predict`` counts
the votes (``f_ij(x) > 0`` votes for ``i``, else ``j``) and ties go to the class that comes
first. A binary problem has ``classes_[1]`` as ``+1``, so ``decision_function > 0`` predicts
``classes_[1]`` and ``decision_function = dual_coef_ K(support_vectors_, x) + intercept_`` holds
with maxmargin's single sign convention ``f(x) = sum_i alpha_i y_i K(x_i, x) + b``.

Per-sample weights multiply the box bound: ``C_i = C * class_weight[y_i] * sample_weight_i``
(the weight of each sample's *own* class); samples of weight zero are left out.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from maxmargin._validation import check_choice, check_estimator_X, check_estimator_Xy
from maxmargin.algorithms import gilbert_svm, kernel_perceptron, perceptron, smo
from maxmargin.certificate import BLOCK_BYTES
from maxmargin.formulations import svm_dual
from maxmargin.kernels import CallableKernel, Kernel, PrecomputedKernel, make_kernel, own_points
from maxmargin.results import PerceptronResult, SVMSolution

__all__ = ["MaxMarginClassifier", "SOLVERS"]

SOLVERS = ("smo", "gilbert", "mdm", "perceptron", "kernel_perceptron", "cvxpy")
#: Solvers of the hard-margin SVM (``C`` is not used; the data must be separable).
HARD_MARGIN_SOLVERS = ("gilbert", "mdm")
#: Solvers with no box bound to weigh: only zero weights (leaving samples out) apply. (The hard
#: margin needs none: C_i = infinity for every sample, whatever positive multiple it gets.)
UNWEIGHTED_SOLVERS = ("perceptron", "kernel_perceptron")


class MaxMarginClassifier(ClassifierMixin, BaseEstimator):
    """Support-vector classification by a maxmargin solver, with scikit-learn's SVC interface.

    Parameters
    ----------
    solver : {"smo", "gilbert", "mdm", "perceptron", "kernel_perceptron", "cvxpy"}
        ``"smo"`` (:func:`~maxmargin.algorithms.smo`, LIBSVM's algorithm; the default),
        ``"gilbert"``/``"mdm"`` (hard margin through the nearest points of the classes' hulls,
        :func:`~maxmargin.algorithms.gilbert_svm`; separable data only), ``"perceptron"`` (the
        primal perceptron; ``kernel="linear"`` only), ``"kernel_perceptron"``, or ``"cvxpy"``
        (the dual oracle :func:`~maxmargin.formulations.svm_dual`).
    C : float
        Box bound of the soft margin (SVC's ``C``).
    kernel : {"linear", "rbf", "poly", "sigmoid", "precomputed"}, a callable or a kernel object
        SVC's meanings; ``"precomputed"``: ``X`` is the Gram matrix at ``fit`` and the
        ``(n_new, n_train)`` kernel values at prediction. With a string kernel
        (:class:`~maxmargin.kernels.StringSubsequenceKernel`) ``X`` is a list of strings.
    degree, gamma, coef0
        As SVC: ``gamma="scale"`` is ``1 / (n_features X.var())`` on the whole training set.
    tol : float
        The solver's stopping tolerance (SMO: ``m - M < tol``, SVC's meaning).
    max_iter : int or None
        Iteration cap (epochs for the perceptrons); None is the solver's default.
    class_weight : dict, "balanced" or None
        Multiplies ``C`` for the samples of each class (SVC's meaning).
    cache_size : float
        SMO's kernel cache in MB.
    shrinking : bool
        SMO's shrinking heuristic.
    precision : {"auto", "single", "double"}
        SMO's kernel-cache precision.
    decision_function_shape : {"ovr", "ovo"}
        Shape of ``decision_function`` for more than two classes (SVC's meaning).
    break_ties : bool
        More than two classes: predict the argmax of the ``"ovr"`` decision function instead of
        the one-vs-one vote (SVC's meaning; default False, LIBSVM's vote).

    Attributes
    ----------
    classes_, n_features_in_, support_, support_vectors_, n_support_, dual_coef_, intercept_,
    n_iter_, fit_status_
        As SVC (LIBSVM's layout of ``dual_coef_`` for one-vs-one).
    coef_ : (n_classes * (n_classes - 1) / 2, n_features) array
        Linear kernel only: ``w`` of each binary problem.
    solutions_ : list of SVMSolution or PerceptronResult
        The binary problems' answers, in the order of ``intercept_``, each with its status,
        message and (SVM solvers) float64 ``certificate``.
    solution_ : SVMSolution or PerceptronResult
        The answer of a binary problem (``solutions_[0]``); for more classes, ``solutions_``.
    """

    def __init__(
        self,
        solver: str = "smo",
        C: float = 1.0,
        kernel: str | Kernel = "rbf",
        degree: int = 3,
        gamma: float | str = "scale",
        coef0: float = 0.0,
        tol: float = 1e-3,
        max_iter: int | None = None,
        class_weight: dict | str | None = None,
        cache_size: float = 200.0,
        shrinking: bool = True,
        precision: str = "auto",
        decision_function_shape: str = "ovr",
        break_ties: bool = False,
    ) -> None:
        self.solver = solver
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight
        self.cache_size = cache_size
        self.shrinking = shrinking
        self.precision = precision
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties

    # --- fitting ----------------------------------------------------------------------------

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> MaxMarginClassifier:
        """Fit one binary problem per pair of classes (one for two classes).

        Parameters
        ----------
        X : (n_samples, n_features) array
        y : (n_samples,) labels of any kind (at least two classes)
        sample_weight : (n_samples,) array of non-negative weights, optional
            Per-sample multipliers of ``C`` (zero leaves a sample out).
        """
        check_choice(self.solver, "solver", SOLVERS)
        check_choice(self.decision_function_shape, "decision_function_shape", ("ovr", "ovo"))
        X, y = check_estimator_Xy(self, X, y, points=self._own_points())
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        k = len(self.classes_)
        if k < 2:
            raise ValueError(
                f"`y` must contain at least two classes to fit a classifier; got one class "
                f"({self.classes_[0]!r})."
            )
        weights = _check_sample_weight(sample_weight, X, dtype=np.float64)
        if np.any(weights < 0):
            raise ValueError("`sample_weight` must be non-negative; got negative weights.")
        class_w = compute_class_weight(self.class_weight, classes=self.classes_, y=y)
        weights = weights * class_w[y_idx]
        if np.unique(y_idx[weights > 0]).size < 2:
            raise ValueError(
                "`sample_weight`/`class_weight` leave fewer than two classes with positive "
                "weight; a classifier needs two."
            )
        if self.solver in UNWEIGHTED_SOLVERS and np.unique(weights[weights > 0]).size > 1:
            raise ValueError(
                f"`sample_weight`/`class_weight`: solver={self.solver!r} has no box bound to "
                "weigh (only zero weights, which leave samples out, apply); use 'smo' or "
                "'cvxpy'."
            )
        if isinstance(self.kernel, str) and self.kernel == "precomputed":
            self._kernel = PrecomputedKernel(X)  # X: the Gram matrix; points: indices
            points = self._kernel.training_points()
        else:
            self._kernel = make_kernel(self.kernel, gamma=self.gamma, degree=self.degree,
                                       coef0=self.coef0, X=X)
            points = X
        pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
        self.solutions_, members = [], []
        for i, j in pairs:
            # binary: classes_[1] is +1; one-vs-one: class i is +1 (LIBSVM)
            pos, neg = (j, i) if k == 2 else (i, j)
            idx = np.flatnonzero(((y_idx == i) | (y_idx == j)) & (weights > 0))
            y_pair = np.where(y_idx[idx] == pos, 1.0, -1.0)
            if np.all(y_pair > 0) or np.all(y_pair < 0):
                raise ValueError(
                    f"`sample_weight`: classes {self.classes_[i]!r} and {self.classes_[j]!r} "
                    "need samples of positive weight each."
                )
            self.solutions_.append(self._solve(points[idx], y_pair, weights[idx]))
            members.append((idx, y_pair))
        self._layout(X, y_idx, pairs, members)
        self.solution_ = self.solutions_[0] if k == 2 else self.solutions_
        self.n_iter_ = np.array([_iterations(s) for s in self.solutions_], dtype=np.int32)
        self.fit_status_ = int(any(s.status not in ("optimal", "converged")
                                   for s in self.solutions_))
        return self

    def _solve(self, X: Any, y: np.ndarray, w: np.ndarray) -> SVMSolution | PerceptronResult:
        """One binary problem with the chosen solver (per-sample bounds ``C w_i``). Sparse
        ``X`` goes to ``smo`` and ``cvxpy`` as it is, densified for the other solvers."""
        kern, solver = self._kernel, self.solver
        if hasattr(X, "toarray") and solver not in ("smo", "cvxpy"):
            X = X.toarray()
        uniform = bool(np.all(w == w[0]))
        if solver == "smo":
            return smo(X, y, C=self.C * w[0] if uniform else self.C, kernel=kern, tol=self.tol,
                       max_iter=self.max_iter, cache_size=self.cache_size,
                       shrinking=self.shrinking, precision=self.precision,
                       sample_weight=None if uniform else w)
        if solver == "cvxpy":
            return svm_dual(X, y, self.C * w[0] if uniform else self.C, kernel=kern,
                            sample_weight=None if uniform else w).solve()
        if solver in HARD_MARGIN_SOLVERS:
            sol = gilbert_svm(X, y, tol=None, max_iter=self.max_iter, method=solver, kernel=kern)
            if sol.status == "infeasible":
                raise ValueError(
                    f"solver={solver!r} solves the hard-margin SVM, which these classes do not "
                    f"admit ({sol.message}); use solver='smo' (soft margin, finite C)."
                )
            return sol
        epochs = 1000 if self.max_iter is None else self.max_iter
        if solver == "perceptron":
            if kern.name != "linear":
                raise ValueError(
                    f"solver='perceptron' is the primal (linear) perceptron; got "
                    f"kernel={kern.describe()!r}: use kernel='linear' or "
                    "solver='kernel_perceptron'."
                )
            return perceptron(X, y, max_epochs=epochs)
        return kernel_perceptron(X, y, kernel=kern, max_epochs=epochs)

    def _layout(
        self, X: np.ndarray, y_idx: np.ndarray, pairs: list[tuple[int, int]],
        members: list[tuple[np.ndarray, np.ndarray]],
    ) -> None:
        """Support vectors grouped by class, and LIBSVM's ``dual_coef_`` layout: the
        coefficient ``alpha y`` of a support vector of class ``i`` in the problem ``(i, j)`` is
        in row ``j - 1``, that of class ``j`` in row ``i``."""
        k = len(self.classes_)
        coef = np.zeros((len(pairs), X.shape[0]))
        for p, (sol, (idx, y_pair)) in enumerate(zip(self.solutions_, members, strict=True)):
            coef[p, idx] = np.asarray(sol.alpha) * y_pair
        used = np.any(coef != 0.0, axis=0)
        order = np.lexsort((np.arange(X.shape[0]), y_idx))
        self.support_ = order[used[order]].astype(np.int32)
        self.n_support_ = np.bincount(y_idx[self.support_], minlength=k).astype(np.int32)
        self.support_vectors_ = X[self.support_]
        sv_class = y_idx[self.support_]
        dual = np.zeros((max(k - 1, 1), self.support_.size))
        for p, (i, j) in enumerate(pairs):
            row_i, row_j = (0, 0) if k == 2 else (j - 1, i)
            dual[row_i, sv_class == i] = coef[p, self.support_[sv_class == i]]
            dual[row_j, sv_class == j] = coef[p, self.support_[sv_class == j]]
        self.dual_coef_ = dual
        self.intercept_ = np.array([float(s.b) for s in self.solutions_])
        self._pairs = pairs

    # --- prediction -------------------------------------------------------------------------

    @property
    def coef_(self) -> np.ndarray:
        """``w`` of each binary problem (linear kernel only), shape ``(n_pairs, n_features)``."""
        check_is_fitted(self)
        if self._kernel.name != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel")
        return self._pair_coefficients() @ self.support_vectors_

    def _own_points(self) -> Any:
        """The validation of a kernel whose points are not float arrays (strings), or None."""
        kernel = CallableKernel(self.kernel) if callable(self.kernel) and not isinstance(
            self.kernel, Kernel) else self.kernel
        return own_points(kernel) if isinstance(kernel, Kernel) else None

    def _pair_coefficients(self) -> np.ndarray:
        """``(n_pairs, n_SV)`` coefficients ``alpha y`` of each problem over all SVs."""
        k = len(self.classes_)
        if k == 2:
            return self.dual_coef_.copy()
        sv_class = np.repeat(np.arange(k), self.n_support_)
        out = np.zeros((len(self._pairs), self.support_.size))
        for p, (i, j) in enumerate(self._pairs):
            out[p, sv_class == i] = self.dual_coef_[j - 1, sv_class == i]
            out[p, sv_class == j] = self.dual_coef_[i, sv_class == j]
        return out

    def _pair_decisions(self, X: Any) -> np.ndarray:
        """``f_p(x)`` of every binary problem, ``(n, n_pairs)``, in row blocks of at most
        :data:`~maxmargin.certificate.BLOCK_BYTES` of kernel values."""
        check_is_fitted(self)
        X = check_estimator_X(self, X, reset=False, points=self._own_points())
        coef = self._pair_coefficients()  # (n_pairs, n_SV)
        out = np.empty((X.shape[0], coef.shape[0]))
        sv = self.support_vectors_
        if self._kernel.name == "precomputed":  # X: kernel values against the training set
            out[:] = X[:, self.support_] @ coef.T
        elif self._kernel.name == "linear":
            out[:] = X @ (coef @ sv).T
        else:
            rows = max(1, BLOCK_BYTES // (8 * max(1, sv.shape[0])))
            for start in range(0, X.shape[0], rows):
                stop = min(X.shape[0], start + rows)
                out[start:stop] = self._kernel(X[start:stop], sv) @ coef.T if sv.size else 0.0
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
        votes, confidence = self._votes(dec)
        return votes + confidence / (3.0 * (np.abs(confidence) + 1.0))  # SVC's ovr transform

    def _votes(self, dec: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One-vs-one votes (``f_ij > 0`` votes ``i``) and summed confidences per class."""
        k = len(self.classes_)
        votes = np.zeros((dec.shape[0], k))
        confidence = np.zeros((dec.shape[0], k))
        for p, (i, j) in enumerate(self._pairs):
            wins = dec[:, p] > 0
            votes[wins, i] += 1
            votes[~wins, j] += 1
            confidence[:, i] += dec[:, p]
            confidence[:, j] -= dec[:, p]
        return votes, confidence

    def predict(self, X: Any) -> np.ndarray:
        """The class of each row: the sign of ``f`` for two classes, else the one-vs-one vote
        (ties to the class that comes first in ``classes_``, as LIBSVM)."""
        dec = self._pair_decisions(X)
        if len(self.classes_) == 2:
            return self.classes_[(dec[:, 0] > 0).astype(int)]
        votes, confidence = self._votes(dec)
        if self.break_ties:
            votes = votes + confidence / (3.0 * (np.abs(confidence) + 1.0))
        return self.classes_[np.argmax(votes, axis=1)]

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        pairwise = isinstance(self.kernel, str) and self.kernel == "precomputed"
        tags.input_tags.sparse = not pairwise  # CSR goes to smo and cvxpy as it is
        tags.input_tags.pairwise = pairwise
        return tags


def _iterations(sol: SVMSolution | PerceptronResult) -> int:
    """Iterations of an SVM solver; updates (mistakes) of a perceptron."""
    return int(sol.iterations) if isinstance(sol, SVMSolution) else int(sol.mistakes)
