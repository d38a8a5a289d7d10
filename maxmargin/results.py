"""Result types shared by the oracles, the algorithms and the verification suite.

All are frozen dataclasses; every array they hold is a read-only copy, and ``history`` is a
read-only mapping of read-only arrays. One sign convention everywhere:

.. math::

    f(x) = \\sum_i \\alpha_i y_i K(x_i, x) + b, \\qquad
    \\text{linear kernel: } f(x) = w \\cdot x + b.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from maxmargin._validation import check_X_new
from maxmargin.certificate import Certificate, HullCertificate, decision_values
from maxmargin.kernels import Kernel, LinearKernel, own_points

__all__ = [
    "SVM_STATUSES",
    "PERCEPTRON_STATUSES",
    "SVMSolution",
    "PolytopeSolution",
    "HullPairSolution",
    "PerceptronResult",
    "LiblinearSolution",
    "MulticlassScores",
    "MulticlassSolution",
    "recover_intercept",
    "uncentred_intercept",
    "adopt_svm_solution",
    "join_messages",
    "infeasible_svm",
]

#: The statuses an SVM solution, polytope or hull-pair solution can have.
SVM_STATUSES = ("optimal", "inaccurate", "infeasible", "max_iter", "solver_error")
#: The statuses of a perceptron run: a clean pass happened, or ``max_epochs`` ran out.
PERCEPTRON_STATUSES = ("converged", "max_iter")


#: Set while :func:`adopt_svm_solution` constructs a solution (per thread).
_adopting = threading.local()


def _frozen_array(value: Any, copy: bool = True) -> Any:
    """A read-only float64 copy (a scipy.sparse matrix stays sparse, its arrays read-only);
    ``copy=False``: ``value`` itself made read-only where it is already of that kind."""
    if value is None:
        return None
    if not copy and type(value) is np.ndarray and value.dtype == np.float64:  # the common case
        value.flags.writeable = False
        return value
    if isinstance(value, np.ndarray) and value.dtype == object:  # strings of a string kernel
        out = value.copy() if copy else value
        out.flags.writeable = False
        return out
    if hasattr(value, "tocsr"):
        out = value.tocsr().astype(np.float64, copy=copy)
        for part in (out.data, out.indices, out.indptr):
            part.flags.writeable = False
        return out
    arr = np.array(value, dtype=np.float64, copy=True if copy else None)
    arr.flags.writeable = False
    return arr


class FrozenHistory(Mapping[str, np.ndarray]):
    """A read-only mapping of read-only arrays (picklable, unlike ``MappingProxyType``)."""

    __slots__ = ("_data",)

    def __init__(self, history: Mapping[str, Any] | None = None, copy: bool = True) -> None:
        data = {}
        for key, value in ({} if history is None else history).items():
            arr = np.array(value, copy=True if copy else None)
            arr.flags.writeable = False
            data[str(key)] = arr
        object.__setattr__(self, "_data", MappingProxyType(data))

    def __getitem__(self, key: str) -> np.ndarray:
        return self._data[key]

    def __iter__(self) -> Any:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"FrozenHistory({dict(self._data)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenHistory, (dict(self._data),))


class _Frozen:
    """Freezing of a result's arrays at construction and again after unpickling."""

    _ARRAYS: tuple[str, ...] = ()

    def _freeze(self) -> None:
        copy = not getattr(_adopting, "active", False)
        for name in self._ARRAYS:
            object.__setattr__(self, name, _frozen_array(getattr(self, name), copy))
        object.__setattr__(self, "history", FrozenHistory(self.history, copy))

    def __setstate__(self, state: dict[str, Any]) -> None:
        for key, value in state.items():
            object.__setattr__(self, key, value)
        self._freeze()

    def _settle(self, floats: tuple[str, ...]) -> None:
        """``__post_init__`` of a solver's answer: its status checked (``SVM_STATUSES``), its
        arrays frozen, ``floats`` made floats and ``iterations`` an int."""
        _check_status(self.status, SVM_STATUSES)  # type: ignore[attr-defined]
        self._freeze()
        for name in floats:
            object.__setattr__(self, name, float(getattr(self, name)))
        object.__setattr__(self, "iterations", int(self.iterations))  # type: ignore[attr-defined]


class MulticlassScores:
    """``decision_function`` and ``predict`` of an answer holding ``W`` (``(K, d)``) and ``b``
    (``(K,)``)."""

    W: np.ndarray
    b: np.ndarray

    def decision_function(self, X_new: Any) -> np.ndarray:
        """``(n, K)`` scores ``w_m . x + b_m``."""
        return np.asarray(check_X_new(X_new, self.W.shape[1]) @ self.W.T) + self.b

    def predict(self, X_new: Any) -> np.ndarray:
        """The class index of the largest score."""
        return np.argmax(self.decision_function(X_new), axis=1)


def _check_status(status: str, allowed: tuple[str, ...]) -> None:
    if status not in allowed:
        raise ValueError(f"`status` must be one of {allowed}; got {status!r}.")


def join_messages(*parts: str) -> str:
    """The non-empty ``parts`` joined by ``"; "`` (messages of solvers and certificates)."""
    return "; ".join(p for p in parts if p)


def uncentred_intercept(shift: float, b: float, interval: tuple[float, float],
                        cert: Certificate) -> tuple[float, tuple[float, float], Certificate]:
    """``b``, its interval and the certificate's ``b`` of a linear SVM solved on data centred at
    ``mean``, in the user's units: ``f(x) = <w, x - mean> + b = <w, x> + (b - shift)`` with
    ``shift = <w, mean>``."""
    return (b - shift, (interval[0] - shift, interval[1] - shift),
            replace(cert, b=cert.b - shift))


def recover_intercept(
    alpha: np.ndarray,
    y: np.ndarray,
    g: np.ndarray,
    C: float | None,
    *,
    atol: float = 0.0,
) -> tuple[float, tuple[float, float]]:
    """The intercept ``b`` from the KKT conditions, as LIBSVM computes ``rho = -b``.

    With ``g_i = sum_j alpha_j y_j K(x_j, x_i)`` (the decision value without ``b``), the KKT
    conditions of the soft-margin dual are

    .. math::

        0 < \\alpha_i < C &\\Rightarrow y_i (g_i + b) = 1 \\;\\Leftrightarrow\\; b = y_i - g_i, \\\\
        \\alpha_i = 0 &\\Rightarrow y_i (g_i + b) \\ge 1, \\qquad
        \\alpha_i = C \\Rightarrow y_i (g_i + b) \\le 1.

    If any ``alpha_i`` is free (``atol < alpha_i < C - atol``), ``b`` is the mean of
    ``y_i - g_i`` over the free ones and the interval is ``(b, b)``. Otherwise the bound
    constraints leave an interval ``[lo, hi]`` of valid intercepts and ``b`` is its midpoint
    (a one-sided interval gives its finite end).

    Parameters
    ----------
    alpha, y, g : arrays of shape (n,)
    C : float, (n,) array of per-sample bounds, or None
        ``None`` is the hard margin (no upper bound on alpha).
    atol : float
        How far from a bound an alpha must be to count as free (0 for exact algorithms,
        a small positive number for interior-point oracles).

    Returns
    -------
    b : float
    interval : (float, float)
        The KKT interval of intercepts ``(lo, hi)``.
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    g = np.asarray(g, dtype=np.float64)
    upper = math.inf if C is None else np.asarray(C, dtype=np.float64)
    r = y - g  # b = r_i makes y_i f(x_i) = 1
    free = (alpha > atol) & (alpha < upper - atol)
    if np.any(free):
        b = float(np.mean(r[free]))
        return b, (b, b)
    at_zero = alpha <= atol
    at_upper = ~at_zero  # not free and not at zero: at C
    # alpha = 0: y = +1 -> b >= r ; y = -1 -> b <= r.  alpha = C: the reverse.
    lower_mask = (at_zero & (y > 0)) | (at_upper & (y < 0))
    upper_mask = (at_zero & (y < 0)) | (at_upper & (y > 0))
    lo = float(np.max(r[lower_mask])) if np.any(lower_mask) else -math.inf
    hi = float(np.min(r[upper_mask])) if np.any(upper_mask) else math.inf
    if math.isfinite(lo) and math.isfinite(hi):
        b = 0.5 * (lo + hi)
    elif math.isfinite(lo):
        b = lo
    elif math.isfinite(hi):
        b = hi
    else:
        b = 0.0
    return b, (lo, hi)


def adopt_svm_solution(**fields: Any) -> SVMSolution:
    """``SVMSolution(**fields)`` whose arrays (and history's) are fresh ones that nothing else
    holds (a batch problem's ``X[idx]``, labels, ``alpha``): made read-only in place instead
    of copied."""
    _adopting.active = True
    try:
        return SVMSolution(**fields)
    finally:
        _adopting.active = False


def _decision_function(model: SVMSolution | PerceptronResult, X_new: Any) -> np.ndarray:
    """``w . x + b`` when ``w`` is known, else ``sum_{alpha_i > 0} alpha_i y_i K(x_i, x) + b``
    (evaluated in row blocks, :func:`~maxmargin.certificate.decision_values`)."""
    if model.status == "infeasible":
        raise ValueError(
            f"this solution is infeasible ({model.method}): the hard-margin problem has no "
            "separating hyperplane at the certified resolution, so there is no decision "
            "function; solve with a finite C (see `message` and `certificate`)."
        )
    if model.w is not None:
        X_new = check_X_new(X_new, model.w.shape[0])
        return X_new @ model.w + model.b
    if model.X_train is None or model.y_train is None:
        what = "solution" if isinstance(model, SVMSolution) else "result"
        raise ValueError(f"this {what} holds no training data to evaluate a kernel with.")
    if own_points(model.kernel) is not None:  # strings, precomputed blocks, ...
        X_new = model.kernel.check_points(X_new, "X")
    else:
        X_new = check_X_new(X_new, model.X_train.shape[1])
    sv = np.flatnonzero(model.alpha > 0)
    coef = model.alpha[sv] * model.y_train[sv]
    # row blocks of at most BLOCK_BYTES of kernel values: bounded memory for any n_new
    return decision_values(model.kernel, X_new, model.X_train[sv], coef) + model.b


def _predict(model: SVMSolution | PerceptronResult, X_new: Any) -> np.ndarray:
    """Labels ``+1`` where ``f(x) > 0`` and ``-1`` elsewhere."""
    return np.where(_decision_function(model, X_new) > 0, 1.0, -1.0)


@dataclass(frozen=True, eq=False)
class SVMSolution(_Frozen):
    """A solution of the (soft- or hard-margin) SVM.

    Attributes
    ----------
    alpha : (n,) array
        Dual variables, ``0 <= alpha <= C``.
    b : float
        Intercept; ``f(x) = sum_i alpha_i y_i K(x_i, x) + b``.
    w : (d,) array or None
        ``w = sum_i alpha_i y_i x_i`` for the linear kernel, else None.
    dual_objective : float
        ``D(alpha) = sum(alpha) - 1/2 alpha^T Q alpha`` with ``Q_ij = y_i y_j K(x_i, x_j)``.
    primal_objective : float
        ``1/2 ||w||^2 + C sum_i max(0, 1 - y_i f(x_i))`` (no slack term for the hard margin).
    status : str
        One of :data:`SVM_STATUSES`.
    iterations : int
    method : str
        Who produced it, e.g. ``"smo"`` or ``"cvxpy/svm_dual/CLARABEL"``.
    history : mapping of str to arrays
        Per-iteration records (possibly empty).
    X_train, y_train : arrays
        The training data the solution refers to (needed for kernel predictions).
    kernel : Kernel
    C : float or None
        ``None`` is the hard margin.
    b_interval : (float, float)
        The KKT interval of valid intercepts; ``(b, b)`` when a free support vector fixes ``b``.
    message : str
        Solver messages (errors, warnings) and the certificate's summary.
    runtime : float
        Wall-clock seconds spent solving (not part of any comparison).
    certificate : Certificate or None
        The float64 certificate (:func:`maxmargin.certificate.certify_svm`): KKT violation
        ``m - M``, weak-duality gap with ``P`` minimised over ``b``, feasibility. ``"optimal"``
        is only given when it meets the producer's tolerance. None for hand-built solutions.
    sample_weight : (n,) array or None
        Per-sample weights of the box: ``0 <= alpha_i <= C sample_weight_i`` (see :attr:`box`).
    tol : float
        The tolerance the producer was asked to meet (SMO: ``m - M``; nearest-point methods:
        their relative gap; oracles: their certificate's ``m - M``); NaN when unknown.
        :func:`~maxmargin.verification.cross_check` judges by the preset it implies.
    """

    alpha: np.ndarray
    b: float
    w: np.ndarray | None
    dual_objective: float
    primal_objective: float
    status: str
    iterations: int
    method: str
    history: Mapping[str, np.ndarray] = field(default_factory=dict)
    X_train: np.ndarray | None = field(default=None, repr=False)
    y_train: np.ndarray | None = field(default=None, repr=False)
    kernel: Kernel = field(default_factory=LinearKernel)
    C: float | None = None
    b_interval: tuple[float, float] = (math.nan, math.nan)
    message: str = ""
    runtime: float = math.nan
    certificate: Certificate | None = None
    sample_weight: np.ndarray | None = field(default=None, repr=False)
    tol: float = math.nan
    _ARRAYS: ClassVar[tuple[str, ...]] = ("alpha", "w", "X_train", "y_train", "sample_weight")

    def __post_init__(self) -> None:
        _check_status(self.status, SVM_STATUSES)
        self._freeze()
        object.__setattr__(self, "b", float(self.b))
        object.__setattr__(self, "dual_objective", float(self.dual_objective))
        object.__setattr__(self, "primal_objective", float(self.primal_objective))
        object.__setattr__(self, "iterations", int(self.iterations))
        object.__setattr__(self, "tol", float(self.tol))
        lo, hi = self.b_interval
        object.__setattr__(self, "b_interval", (float(lo), float(hi)))

    @property
    def box(self) -> float | np.ndarray | None:
        """The upper bounds of ``alpha``: ``C``, ``C * sample_weight`` (per sample), or None
        (hard margin)."""
        if self.C is None or self.sample_weight is None:
            return self.C
        return self.C * self.sample_weight

    def support(self, tol: float = 0.0) -> np.ndarray:
        """Indices of the support vectors, ``alpha_i > tol``."""
        return np.flatnonzero(self.alpha > tol)

    def decision_function(self, X_new: Any) -> np.ndarray:
        """``f(x) = sum_i alpha_i y_i K(x_i, x) + b`` (``w . x + b`` for the linear kernel)."""
        return _decision_function(self, X_new)

    def predict(self, X_new: Any) -> np.ndarray:
        """Labels ``+1`` where ``f(x) > 0`` and ``-1`` elsewhere."""
        return _predict(self, X_new)


@dataclass(frozen=True, eq=False)
class PolytopeSolution(_Frozen):
    """Nearest point of ``conv(rows of Q)`` to the origin.

    ``point = Q^T weights`` with ``weights`` in the simplex; ``distance = ||point||``.
    ``gap`` is the final duality gap ``||z||^2 - min_i <z, q_i>`` relative to ``||z||^2``
    (NaN where not computed). ``certificate`` is the float64
    :class:`~maxmargin.certificate.HullCertificate` of the weights.
    """

    weights: np.ndarray
    point: np.ndarray
    distance: float
    status: str
    iterations: int
    method: str
    history: Mapping[str, np.ndarray] = field(default_factory=dict)
    gap: float = math.nan
    message: str = ""
    runtime: float = math.nan
    certificate: HullCertificate | None = None
    _ARRAYS: ClassVar[tuple[str, ...]] = ("weights", "point")

    def __post_init__(self) -> None:
        _check_status(self.status, SVM_STATUSES)
        self._freeze()
        object.__setattr__(self, "distance", float(self.distance))
        object.__setattr__(self, "iterations", int(self.iterations))


@dataclass(frozen=True, eq=False)
class HullPairSolution(_Frozen):
    """Nearest points ``p in conv(P)`` and ``q in conv(Q)``.

    ``p = P^T weights_p``, ``q = Q^T weights_q``, ``distance = ||p - q||`` (0 when the hulls
    intersect). ``gap`` is the final relative duality gap (NaN where not computed);
    ``certificate`` the float64 :class:`~maxmargin.certificate.HullCertificate` of the weights.
    """

    weights_p: np.ndarray
    weights_q: np.ndarray
    p: np.ndarray
    q: np.ndarray
    distance: float
    status: str
    iterations: int
    method: str
    history: Mapping[str, np.ndarray] = field(default_factory=dict)
    gap: float = math.nan
    message: str = ""
    runtime: float = math.nan
    certificate: HullCertificate | None = None
    _ARRAYS: ClassVar[tuple[str, ...]] = ("weights_p", "weights_q", "p", "q")

    def __post_init__(self) -> None:
        _check_status(self.status, SVM_STATUSES)
        self._freeze()
        object.__setattr__(self, "distance", float(self.distance))
        object.__setattr__(self, "iterations", int(self.iterations))


@dataclass(frozen=True, eq=False)
class PerceptronResult(_Frozen):
    """The outcome of a (kernel) perceptron run.

    Attributes
    ----------
    w : (d,) array or None
        Final weights (None for the kernel perceptron).
    b : float
        Final bias (0 when ``bias=False``).
    alpha : (n,) array
        Updates made on each sample, times ``eta``: ``w = sum_i alpha_i y_i x_i``.
    mistakes : int
        Total number of updates.
    epochs : int
        Passes over the data made (the last, clean one included when converged).
    converged : bool
        Whether a full pass made no mistake.
    status : str
        ``"converged"`` or ``"max_iter"`` (:data:`PERCEPTRON_STATUSES`).
    history : mapping
        For example the mistakes per epoch.
    X_train, y_train, kernel : for kernel predictions
        ``f(x) = sum_i alpha_i y_i K(x_i, x) + b``.
    """

    w: np.ndarray | None
    b: float
    alpha: np.ndarray
    mistakes: int
    epochs: int
    converged: bool
    status: str
    history: Mapping[str, np.ndarray] = field(default_factory=dict)
    X_train: np.ndarray | None = field(default=None, repr=False)
    y_train: np.ndarray | None = field(default=None, repr=False)
    kernel: Kernel = field(default_factory=LinearKernel)
    method: str = "perceptron"
    runtime: float = math.nan
    _ARRAYS: ClassVar[tuple[str, ...]] = ("w", "alpha", "X_train", "y_train")

    def __post_init__(self) -> None:
        _check_status(self.status, PERCEPTRON_STATUSES)
        self._freeze()
        object.__setattr__(self, "b", float(self.b))
        object.__setattr__(self, "mistakes", int(self.mistakes))
        object.__setattr__(self, "epochs", int(self.epochs))
        object.__setattr__(self, "converged", bool(self.converged))

    def decision_function(self, X_new: Any) -> np.ndarray:
        """``f(x) = w . x + b``, or ``sum_i alpha_i y_i K(x_i, x) + b`` for the kernel form."""
        return _decision_function(self, X_new)

    def predict(self, X_new: Any) -> np.ndarray:
        """Labels ``+1`` where ``f(x) > 0`` and ``-1`` elsewhere."""
        return _predict(self, X_new)


@dataclass(frozen=True, eq=False)
class LiblinearSolution(_Frozen):
    """An answer of LIBLINEAR's SVM problem (``LinearSVC``'s): ``min R(w~) + sum_i C_i
    l(y_i w~ . x~_i)`` over the rows ``x~_i = (x_i, s)``, ``s = intercept_scaling`` (``x_i``
    alone without an intercept; :mod:`maxmargin.formulations.liblinear`).

    Attributes
    ----------
    w : (d,) array
        The feature weights (``coef_``).
    b : float
        The intercept ``s v`` (``intercept_``; 0 without an intercept).
    w_tilde : (d + 1,) or (d,) array
        The weights LIBLINEAR regularises (``v = b / s`` last, with an intercept).
    alpha : (n,) array
        The dual point of the certificate's bound (the constraint duals; a dual solver's own
        variables).
    primal_objective, dual_objective : float
        ``P(w~)`` and the certificate's lower bound ``D``.
    status : str
        ``"optimal"`` (certified), ``"inaccurate"``, ``"max_iter"`` or ``"solver_error"``.
    iterations : int
    method : str
        ``"cvxpy/liblinear_primal/<SOLVER>"``, ``"dcd/<loss>"``.
    certificate : Certificate
        :func:`~maxmargin.certificate.certify_liblinear` of ``w~``.
    loss, penalty : str
    intercept_scaling : float or None
        ``s``; None without an intercept.
    message : str
    runtime : float
        Wall-clock seconds (not part of any comparison).
    C : float
        NaN when not recorded.
    tol : float
        The relative gap the producer was asked to meet (NaN when unknown).
    history : mapping of str to arrays
        Per-check records (possibly empty).
    """

    w: np.ndarray
    b: float
    w_tilde: np.ndarray
    alpha: np.ndarray
    primal_objective: float
    dual_objective: float
    status: str
    iterations: int
    method: str
    certificate: Certificate | None
    loss: str
    penalty: str
    intercept_scaling: float | None
    message: str = ""
    runtime: float = math.nan
    C: float = math.nan
    tol: float = math.nan
    history: Mapping[str, np.ndarray] = field(default_factory=dict)
    _ARRAYS: ClassVar[tuple[str, ...]] = ("w", "w_tilde", "alpha")

    def __post_init__(self) -> None:
        self._settle(("b", "primal_objective", "dual_objective", "C", "tol"))

    def decision_function(self, X_new: Any) -> np.ndarray:
        """``w . x + b``."""
        return np.asarray(check_X_new(X_new, self.w.shape[0]) @ self.w).ravel() + self.b

    def predict(self, X_new: Any) -> np.ndarray:
        """Labels ``+1`` where ``w . x + b > 0`` and ``-1`` elsewhere."""
        return np.where(self.decision_function(X_new) > 0, 1.0, -1.0)


@dataclass(frozen=True, eq=False)
class MulticlassSolution(MulticlassScores, _Frozen):
    """An answer of Crammer and Singer's multi-class problem (LIBLINEAR's ``-s 4``;
    :mod:`maxmargin.certificate_multiclass`) from a hand-written solver.

    Attributes
    ----------
    W, b, W_tilde : arrays
        ``coef_`` (``(K, d)``), the intercepts ``s v_m`` and ``W~ = (W, v)``, as in
        :class:`~maxmargin.formulations.CrammerSingerSolution`.
    alpha : (n, K) array
        LIBLINEAR's dual variables, ``alpha_i^m = C_i [m = y_i] - lambda_i^m`` (``sum_m
        alpha_i^m = 0``, ``alpha_i^m <= C_i [m = y_i]``; ``W~ = alpha^T X~``).
    primal_objective, dual_objective : float
        ``P(W~)`` and the certificate's lower bound ``D``.
    status : str
        ``"optimal"`` (certified) or ``"max_iter"``.
    iterations : int
    method : str
    certificate : Certificate
        :func:`~maxmargin.certificate_multiclass.certify_crammer_singer` of ``W~``.
    intercept_scaling : float or None
    message : str
    runtime : float
        Wall-clock seconds (not part of any comparison).
    C, tol : float
    history : mapping of str to arrays
        Per-check records.
    """

    W: np.ndarray
    b: np.ndarray
    W_tilde: np.ndarray
    alpha: np.ndarray
    primal_objective: float
    dual_objective: float
    status: str
    iterations: int
    method: str
    certificate: Certificate | None
    intercept_scaling: float | None
    message: str = ""
    runtime: float = math.nan
    C: float = math.nan
    tol: float = math.nan
    history: Mapping[str, np.ndarray] = field(default_factory=dict)
    _ARRAYS: ClassVar[tuple[str, ...]] = ("W", "b", "W_tilde", "alpha")

    def __post_init__(self) -> None:
        self._settle(("primal_objective", "dual_objective", "C", "tol"))


def infeasible_svm(
    X: Any, y: np.ndarray, kernel: Kernel, method: str, message: str, certificate: Certificate,
    *, iterations: int = 0, history: Mapping[str, Any] | None = None, runtime: float = 0.0,
) -> SVMSolution:
    """The one shape of a hard-margin problem found infeasible, by every entry point.

    ``alpha``, ``b`` (and ``w`` for the linear kernel) are NaN, ``primal_objective =
    dual_objective = +inf`` (the primal is infeasible, the dual unbounded), ``status =
    "infeasible"`` and ``certificate`` carries the evidence
    (:func:`~maxmargin.certificate.certify_infeasible`: a float64 upper bound on the distance
    between the classes' hulls); ``decision_function`` and ``predict`` raise ``ValueError``.
    """
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    linear = isinstance(kernel, LinearKernel)
    return SVMSolution(
        alpha=np.full(n, np.nan), b=math.nan,
        w=np.full(X.shape[1], np.nan) if linear else None,
        dual_objective=math.inf, primal_objective=math.inf, status="infeasible",
        iterations=iterations, method=method, history=history or {}, X_train=X, y_train=y,
        kernel=kernel, C=None, b_interval=(math.nan, math.nan),
        message=join_messages(message, certificate.summary()), runtime=runtime,
        certificate=certificate,
    )  # fmt: skip
