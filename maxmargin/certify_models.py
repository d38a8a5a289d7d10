"""Certificates of other solvers' answers, each judged in the problem that model solves.

:func:`certify` takes a fitted model and its training data and returns, for each binary problem
the model solved, a :class:`ModelCertificate`: the float64 certificate of
:mod:`maxmargin.certificate` plus a label, the tolerance and a verdict.

=============================  =================================================================
model                          problem judged
=============================  =================================================================
SVC, sklearnex SVC,            the SVM dual with unregularised bias, per-sample boxes
MaxMarginClassifier, any       ``C_i = C class_weight_[y_i] sample_weight_i``, the model's
object with SVC's fitted       kernel (``_gamma`` when fitted); one problem per pair of classes
attributes                     (one-vs-one, class ``i`` of the pair ``(i, j)`` as +1), one for
                               two classes (``classes_[1]`` as +1). Verdict: ``m - M < tol``,
                               the model's intercept within ``tol`` of the interval of
                               intercepts its ``alpha`` allows, feasibility ``<= 1e-9``.
LinearSVC                      LIBLINEAR's primal (:func:`~maxmargin.certificate.
                               certify_liblinear`): bias regularised through the column
                               ``intercept_scaling``, hinge or squared hinge, l2 or l1 penalty;
                               one problem per class against the rest (LIBLINEAR's weights:
                               ``C class_weight[k] sample_weight_i`` on the class ``k``, ``C
                               sample_weight_i`` on the rest; two classes: each class its own
                               weight). Verdict: relative weak-duality gap ``<= tol`` (a proof
                               that the objective is that close to the optimum; LIBLINEAR's own
                               stopping quantities need its dual point, which LinearSVC drops).
NuSVC, OneClassSVM,            Schölkopf's ν-SVC, one problem per pair of classes as for SVC,
MaxMarginNuClassifier,         and the one-class problem (:mod:`maxmargin.certificate_nu`), with
MaxMarginOneClass              the bounds ``W_i / sum W`` (one-class ``W_i / (nu sum W)``) of the
                               positive ``sample_weight`` (class weights are not applied:
                               LIBSVM's ν solvers ignore them).
                               Verdict: ``m - M`` over ``rho`` ``< tol``, feasibility ``<= 1e-9``.
=============================  =================================================================

The verdict's tolerance is 1e-3 unless given. :func:`certify_dual` judges raw solver
output ``(alpha, b)`` of the SVM dual in maxmargin's convention (``y`` in -1/+1,
``f(x) = sum_i alpha_i y_i K(x_i, x) + b``).

Intercept interval: with ``r_i = y_i - g_i`` and LIBSVM's index sets (``I_up``, ``I_low``,
:func:`~maxmargin.certificate.max_violation`), ``m = max_{I_up} r`` and ``M = min_{I_low} r``;
an optimal ``alpha`` admits exactly the intercepts in ``[m, M]``. ``intercept_error`` is the
distance of the model's ``b`` from the interval between ``m`` and ``M``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from maxmargin._validation import (
    check_array,
    check_C,
    check_finite_scalar,
    check_positive,
    check_sample_weight,
    check_Xy,
)
from maxmargin.certificate import (
    LIBLINEAR_LOSSES,
    LIBLINEAR_PENALTIES,
    Certificate,
    certify_liblinear,
    certify_svm,
    decision_values,
)
from maxmargin.kernels import Kernel, PrecomputedKernel, make_kernel, own_points, precomputed
from maxmargin.tolerances import FEASIBILITY, SMO_TOL

__all__ = ["ModelCertificate", "certify", "certify_dual", "fitted_array", "intercept_interval"]


@dataclass(frozen=True)
class ModelCertificate(Certificate):
    """A :class:`~maxmargin.certificate.Certificate` of one binary problem of a model, with
    its verdict.

    Attributes
    ----------
    label : str
        Which problem: ``"1 vs 0"`` (positive class first), ``"setosa vs rest"``, ...
    problem : str
        ``"svm_dual"``, ``"svm_dual/hard_margin"`` or ``"liblinear/<penalty>/<loss>"``.
    tol : float
        The tolerance of the verdict.
    criterion : str
        ``"kkt"`` (``m - M < tol``, the intercept within ``tol``) or ``"gap"`` (relative gap
        ``<= tol``).
    intercept : float
        The model's own intercept.
    intercept_error : float
        SVM dual: distance of ``intercept`` from the interval its ``alpha`` allows (module
        docstring); NaN when not judged.
    """

    label: str = ""
    problem: str = ""
    tol: float = math.nan
    criterion: str = "kkt"
    intercept: float = math.nan
    intercept_error: float = math.nan

    @property
    def optimal(self) -> bool:
        """Whether the answer meets the tolerance (the class docstring's criterion)."""
        if self.criterion == "gap":
            return (math.isfinite(self.gap) and self.gap <= self.tol
                    and self.feasibility <= FEASIBILITY)
        return self.meets(self.tol, feasibility=FEASIBILITY) and not (
            self.intercept_error > self.tol)

    @property
    def verdict(self) -> str:
        """``"optimal"`` or ``"not optimal"`` at :attr:`tol`; ``"unresolved"`` when
        :attr:`tol` is at or below the float64 resolution of ``m - M`` (criterion ``"kkt"``,
        :meth:`~maxmargin.certificate.Certificate.unresolved`) and the answer is within it:
        float64 cannot tell either way."""
        if self.optimal:
            return "optimal"
        if self.criterion == "kkt" and self.settled(self.tol) and not (
                self.intercept_error > self.tol):
            return "unresolved"
        return "not optimal"

    def summary(self) -> str:
        rule = f"m - M < {self.tol:g}" if self.criterion == "kkt" else f"gap <= {self.tol:g}"
        extra = ("" if math.isnan(self.intercept_error)
                 else f", intercept error = {self.intercept_error:.3g}")
        label = f"{self.label}: " if self.label else ""
        return (f"{label}{self.verdict} ({rule}); {super().summary()}{extra}; "
                f"P = {self.primal_objective:.10g}, D = {self.dual_objective:.10g}")


def intercept_interval(alpha: np.ndarray, y: np.ndarray, g: np.ndarray, box: Any
                       ) -> tuple[float, float]:
    """``(m, M)`` of the module docstring (``-inf`` / ``inf`` for an empty index set)."""
    upper = math.inf if box is None else box
    r = y - g
    below, above = alpha < upper, alpha > 0
    up = (below & (y > 0)) | (above & (y < 0))
    low = (below & (y < 0)) | (above & (y > 0))
    m = float(np.max(r[up])) if np.any(up) else -math.inf
    M = float(np.min(r[low])) if np.any(low) else math.inf
    return m, M


def _judge_dual(alpha: np.ndarray, b: float | None, X: Any, y: np.ndarray, box: Any,
                kernel: Kernel, tol: float, label: str) -> ModelCertificate:
    """The certificate of ``(alpha, b)`` in the SVM dual (``box`` None: hard margin)."""
    sv = np.flatnonzero(alpha != 0.0)
    g = decision_values(kernel, X, X[sv], (alpha * y)[sv])
    cert = certify_svm(alpha, X, y, box, kernel, g=g)
    error = math.nan
    if b is not None:
        m, M = intercept_interval(alpha, y, g, box)
        lo, hi = min(m, M), max(m, M)
        error = max(0.0, lo - b, b - hi)
    problem = "svm_dual" if box is not None else "svm_dual/hard_margin"
    return ModelCertificate(**dataclasses.asdict(cert), label=label, problem=problem, tol=tol,
                            intercept=math.nan if b is None else float(b),
                            intercept_error=error)


def certify_dual(
    alpha: Any,
    b: float | None,
    X: Any,
    y: Any,
    C: float | None = 1.0,
    kernel: str | Kernel = "linear",
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 0.0,
    *,
    sample_weight: Any = None,
    tol: float = SMO_TOL,
    label: str = "",
) -> ModelCertificate:
    """The certificate of raw SVM-dual output ``(alpha, b)`` from any solver.

    Parameters
    ----------
    alpha : (n,) array
        The dual variables (not ``alpha * y``); values outside the box are measured by
        ``feasibility``, not refused.
    b : float or None
        The solver's intercept (``f(x) = sum_i alpha_i y_i K(x_i, x) + b``); None: not judged.
    X, y : the training data, ``y`` in -1/+1
    C : float or None
        The box (None: the hard margin).
    kernel, gamma, degree, coef0
        As :func:`maxmargin.kernels.make_kernel` (``"precomputed"``: ``X`` is the Gram matrix).
    sample_weight : (n,) array, optional
        Per-sample boxes ``C sample_weight_i``.
    tol : float
        The tolerance of the verdict (``m - M < tol``; default SVC's 1e-3).
    label : str
        A name for the problem.
    """
    kernel, X = precomputed(kernel, X)
    X, y = check_Xy(X, y, sparse=True, points=own_points(kernel))
    a = check_array(alpha, "alpha", ndim=1)
    if a.shape[0] != y.shape[0]:
        raise ValueError(f"`alpha` must have one value per row of `X`: `X` has {y.shape[0]} "
                         f"rows, `alpha` has length {a.shape[0]}.")
    b = None if b is None else check_finite_scalar(b, "b")
    C = check_C(C)
    sw = None if C is None else check_sample_weight(sample_weight, y)
    tol = check_positive(tol, "tol")
    kern = make_kernel(kernel, gamma=gamma, degree=degree, coef0=coef0, X=X)
    if kern.name == "sigmoid":
        raise ValueError("`kernel`: the sigmoid kernel is not positive semi-definite, so the "
                         "SVM dual is not convex and has no certificate.")
    box = None if C is None else (C if sw is None else C * sw)
    return _judge_dual(a, b, X, y, box, kern, tol, label)


# --- fitted models ----------------------------------------------------------------------------

def fitted_array(value: Any) -> np.ndarray:
    """A NumPy copy of a fitted attribute (CuPy/cuDF arrays included)."""
    if hasattr(value, "to_numpy"):  # cuDF, pandas (whose .get(key) is another thing)
        value = value.to_numpy()
    elif hasattr(value, "get") and not isinstance(value, dict):  # CuPy
        value = value.get()
    if hasattr(value, "toarray"):  # scipy.sparse dual_coef_
        value = value.toarray()
    return np.array(value, copy=True)


def _class_indices(model: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(classes_, index of each label in classes_)``; a ``ValueError`` for unknown labels."""
    classes = fitted_array(model.classes_)
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"`y` must be a 1-D array of labels; got shape {labels.shape}.")
    order = np.argsort(classes, kind="stable")
    pos = np.clip(np.searchsorted(classes[order], labels), 0, classes.size - 1)
    idx = order[pos]
    unknown = classes[idx] != labels
    if np.any(unknown):
        raise ValueError(f"`y` has labels that are not among the model's classes_ "
                         f"{classes.tolist()}: {np.unique(labels[unknown])[:5].tolist()}.")
    return classes, idx


def _sample_weights(sample_weight: Any, n: int) -> np.ndarray:
    if sample_weight is None:
        return np.ones(n)
    w = check_array(sample_weight, "sample_weight", ndim=1)
    if w.shape[0] != n:
        raise ValueError(f"`sample_weight` must have one weight per row of `X`: `X` has {n} "
                         f"rows, `sample_weight` has length {w.shape[0]}.")
    if np.any(w < 0):
        raise ValueError("`sample_weight` must be non-negative; got negative weights.")
    return w


def _class_weights(class_weight: Any, classes: np.ndarray, labels: Any,
                   sample_weight: np.ndarray | None = None) -> np.ndarray:
    """scikit-learn's per-class multipliers of ``C`` (``class_weight`` None, a dict or
    ``"balanced"``), as the model computed them when fitted."""
    from sklearn.utils.class_weight import compute_class_weight  # scikit-learn models only

    return compute_class_weight(class_weight, classes=classes, y=np.asarray(labels),
                                sample_weight=sample_weight)


def _is_liblinear(model: Any) -> bool:
    """LinearSVC-like: ``coef_``, ``loss``, ``C``, ``intercept_scaling`` (not SGDClassifier,
    whose problem is another)."""
    return all(hasattr(model, a) for a in ("coef_", "loss", "C", "intercept_scaling",
                                           "fit_intercept")) and not hasattr(model, "dual_coef_")


def certify(model: Any, X: Any, y: Any = None, sample_weight: Any = None, *,
            tol: float = SMO_TOL) -> ModelCertificate | list[ModelCertificate]:
    """The certificate of each binary problem of a fitted model, in the model's own problem.

    Parameters
    ----------
    model : fitted SVC, NuSVC, OneClassSVM, LinearSVC, sklearnex SVC, a maxmargin estimator
        or an SVC-like object (module docstring).
    X, y : the training data, ``y`` with the model's own labels (None for a one-class model).
    sample_weight : (n,) array, optional
        The weights the model was fitted with (zero: left out, as LIBSVM and LIBLINEAR do).
    tol : float
        The verdict's tolerance (default 1e-3: SVC's default ``tol`` and the audit's loose
        preset). ``tol=model.tol`` asks whether the model met its own stopping tolerance.

    Returns
    -------
    ModelCertificate, or a list of them (one per pair or per class) for more than two classes.
    """
    impl = getattr(model, "_impl", "c_svc")  # scikit-learn's name of the LIBSVM problem
    if impl == "one_class":
        if not hasattr(model, "dual_coef_"):
            raise ValueError(f"`model` must be fitted (no dual_coef_ on "
                             f"{type(model).__name__}); fit it first.")
    elif not hasattr(model, "classes_"):
        raise ValueError(f"`model` must be a fitted classifier (no classes_ on "
                         f"{type(model).__name__}); fit it first.")
    elif y is None:
        raise ValueError("`y`: the labels the model was fitted with are needed (only a "
                         "one-class model takes none).")
    if impl not in ("c_svc", "nu_svc", "one_class"):
        raise ValueError(f"`model`: {type(model).__name__} solves LIBSVM's {impl!r} problem, "
                         "which this does not certify (C-SVC, nu-SVC, one-class, LinearSVC "
                         "and SVC-like models).")
    tol = check_positive(tol, "tol")
    if impl == "one_class":
        return _one_class_certificate(model, X, sample_weight, tol)
    if impl == "nu_svc":
        certs = list(_nu_certificates(model, X, y, sample_weight, tol))
    elif _is_liblinear(model):
        certs = list(_liblinear_certificates(model, X, y, sample_weight, tol))
    elif hasattr(model, "dual_coef_") and hasattr(model, "support_"):
        certs = list(_svc_certificates(model, X, y, sample_weight, tol))
    else:
        raise ValueError(f"`model`: {type(model).__name__} exposes neither SVC's fitted "
                         "attributes (dual_coef_, support_, intercept_) nor LinearSVC's "
                         "(coef_, intercept_, loss).")
    return certs[0] if len(certs) == 1 else certs


def _svc_kernel(model: Any, X: Any) -> tuple[Kernel, Any]:
    """The model's kernel and the points it takes (indices for a precomputed Gram matrix)."""
    own = getattr(model, "_kernel", None)
    name = getattr(model, "kernel", "rbf")
    if isinstance(own, PrecomputedKernel) or (isinstance(name, str) and name == "precomputed"):
        kern = PrecomputedKernel(check_array(X, "X", ndim=2))
        return kern, kern.training_points()
    if isinstance(own, Kernel):
        points = own_points(own)
        return own, points(X, "X") if points is not None else check_array(X, "X", ndim=2,
                                                                            sparse=True)
    points = check_array(X, "X", ndim=2, sparse=True)
    gamma = getattr(model, "_gamma", None)  # SVC resolves "scale"/"auto" when fitted
    gamma = getattr(model, "gamma", "scale") if gamma is None else gamma
    gamma = gamma if isinstance(gamma, str) else float(fitted_array(gamma))
    kern = make_kernel(name, gamma=gamma, degree=getattr(model, "degree", 3),
                       coef0=getattr(model, "coef0", 0.0), X=points)
    if kern.name == "sigmoid":
        raise ValueError("`model`: the sigmoid kernel is not positive semi-definite, so its "
                         "SVM dual is not convex and has no certificate.")
    return kern, points


def _svc_box(model: Any) -> float | None:
    """``C``, or None for a hard-margin model (``C = inf``, or a hard-margin solver)."""
    solver = getattr(model, "solver", None)
    if solver in ("perceptron", "kernel_perceptron"):
        raise ValueError(f"`model`: solver={solver!r} finds a separating hyperplane, not a "
                         "max-margin one: there is no margin problem to certify.")
    if solver in ("gilbert", "mdm", "wolfe"):
        return None
    C = float(fitted_array(getattr(model, "C", 1.0)))
    return None if math.isinf(C) else C


def _support(model: Any, points: Any, weights: np.ndarray, gram: bool) -> np.ndarray:
    """``support_`` as rows of ``X``. scikit-learn's SVC numbers the support vectors among the
    samples of positive weight (LIBSVM drops the others first), MaxMarginClassifier among all;
    ``support_vectors_`` tells which, and that ``X`` is the training data."""
    n = weights.shape[0]
    support = fitted_array(model.support_).astype(np.int64)
    kept = np.flatnonzero(weights > 0)
    candidates = [support] + ([kept[support]] if kept.size < n and support.size and
                              support.max() < kept.size else [])
    candidates = [c for c in candidates if not c.size or (c.min() >= 0 and c.max() < n)]
    if not candidates:
        raise ValueError("`X` is not the data the model was fitted on: support_ indexes "
                         f"rows up to {int(support.max())}, `X` has {n}.")
    given = getattr(model, "support_vectors_", None)
    if (gram or given is None or np.size(given) == 0 or not isinstance(points, np.ndarray)
            or points.dtype == object):  # (a callable kernel keeps no support vectors)
        # nothing to compare: scikit-learn's numbering for its own models
        sklearn = type(model).__module__.startswith("sklearn")
        return candidates[-1] if sklearn else candidates[0]
    given = fitted_array(given)  # on the host (CuPy, cuDF), dense data only
    for c in candidates:
        if given.shape == points[c].shape and np.array_equal(given, points[c]):
            return c
    raise ValueError("`X` is not the data the model was fitted on (or `sample_weight` is not "
                     "the one it was fitted with): support_vectors_ differ from X[support_].")


def _pair_problems(model: Any, X: Any, labels: Any, sample_weight: Any
                   ) -> Iterator[tuple[str, int, np.ndarray, np.ndarray, np.ndarray, Any,
                                       Kernel, np.ndarray]]:
    """Each one-vs-one problem of an SVC-like fit (LIBSVM's ``dual_coef_`` layout): ``(label,
    p, members, y_pair, alpha, points, kernel, class_w)``, ``alpha`` the model's ``|dual
    coefficient|`` of each member, in its units."""
    kern, points = _svc_kernel(model, X)
    classes, y_idx = _class_indices(model, labels)
    n, k = y_idx.shape[0], classes.size
    if points.shape[0] != n:
        raise ValueError(f"`y` must have one label per row of `X`: `X` has {points.shape[0]} "
                         f"rows, `y` has length {n}.")
    weights = _sample_weights(sample_weight, n)
    support = _support(model, points, weights, isinstance(kern, PrecomputedKernel))
    class_w = getattr(model, "class_weight_", None)
    class_w = (fitted_array(class_w) if class_w is not None and np.size(class_w) == k else
               _class_weights(getattr(model, "class_weight", None), classes, labels))
    dual = fitted_array(model.dual_coef_)
    sv_class = y_idx[support]
    pairs = [(1, 0)] if k == 2 else [(i, j) for i in range(k) for j in range(i + 1, k)]
    for p, (i, j) in enumerate(pairs):
        coef = np.zeros(n)
        if k == 2:
            coef[support] = dual[0]
        else:  # LIBSVM's layout: class i's SVs in row j - 1, class j's in row i
            on_i, on_j = sv_class == i, sv_class == j
            coef[support[on_i]] = dual[j - 1, on_i]
            coef[support[on_j]] = dual[i, on_j]
        members = np.flatnonzero(((y_idx == i) | (y_idx == j)) & (weights > 0))
        y_pair = np.where(y_idx[members] == i, 1.0, -1.0)
        if np.all(y_pair > 0) or np.all(y_pair < 0):
            raise ValueError(f"`y`/`sample_weight`: classes {classes[i]!r} and {classes[j]!r} "
                             "need samples of positive weight each.")
        box_w = class_w[y_idx[members]] * weights[members]
        yield (f"{classes[i]} vs {classes[j]}", p, members, y_pair, coef[members] * y_pair,
               points, kern, box_w)


def _svc_certificates(model: Any, X: Any, labels: Any, sample_weight: Any, tol: float
                      ) -> Iterator[ModelCertificate]:
    C = _svc_box(model)
    intercepts = fitted_array(model.intercept_).ravel()
    for label, p, members, y_pair, alpha, points, kern, box_w in _pair_problems(
            model, X, labels, sample_weight):
        box = None if C is None else C * box_w
        yield _judge_dual(alpha, float(intercepts[p]), points[members], y_pair, box, kern, tol,
                          label)


def _nu_certificates(model: Any, X: Any, labels: Any, sample_weight: Any, tol: float
                     ) -> Iterator[ModelCertificate]:
    """NuSVC-like fits: LIBSVM's ``dual_coef_`` is ``y alpha / r`` with ``sum alpha = nu l``
    (``nu sum W`` with sample weights, ``alpha_i <= W_i``; class weights are not applied), so
    Schölkopf's ``alpha = nu |coef| / sum |coef|`` per pair, judged by
    :func:`~maxmargin.certificate_nu.certify_nu_svm` with the pair's positive weights."""
    from maxmargin.certificate_nu import certify_nu_svm

    nu = check_positive(model.nu, "model.nu")
    weights = (None if sample_weight is None
               else _sample_weights(sample_weight, np.asarray(labels).shape[0]))
    for label, _, members, y_pair, alpha, points, kern, _w in _pair_problems(
            model, X, labels, sample_weight):
        total = float(np.abs(alpha).sum())
        a = nu * np.abs(alpha) / total if total > 0 else np.zeros_like(alpha)
        cert = certify_nu_svm(a, points[members], y_pair, nu, kern,
                              weights=None if weights is None else weights[members])
        yield ModelCertificate(**dataclasses.asdict(cert), label=label, problem="nu_svc",
                               tol=tol)


def _one_class_certificate(model: Any, X: Any, sample_weight: Any, tol: float
                           ) -> ModelCertificate:
    """OneClassSVM-like fits: ``dual_coef_`` is ``alpha`` with ``sum alpha = nu l`` (``nu sum
    W`` over the samples of positive weight, ``alpha_i <= W_i``, with sample weights); judged
    by :func:`~maxmargin.certificate_nu.certify_one_class` in Schölkopf's scaling on those
    samples, with their weights."""
    from maxmargin.certificate_nu import certify_one_class

    kern, points = _svc_kernel(model, X)
    nu = check_positive(model.nu, "model.nu")
    n = points.shape[0]
    weights = _sample_weights(sample_weight, n)
    kept = np.flatnonzero(weights > 0)
    if kept.size == 0:
        raise ValueError("`sample_weight`: every weight is zero; the model was fitted on none.")
    support = _support(model, points, weights, isinstance(kern, PrecomputedKernel))
    alpha = np.zeros(n)
    alpha[support] = np.abs(fitted_array(model.dual_coef_).ravel())
    alpha /= nu * float(weights[kept].sum())
    cert = certify_one_class(alpha[kept], points[kept], nu, kern,
                             weights=None if sample_weight is None else weights[kept])
    return ModelCertificate(**dataclasses.asdict(cert), label="one class", problem="one_class",
                            tol=tol)


def liblinear_problems(y_idx: np.ndarray, classes: np.ndarray, C: float, class_w: np.ndarray,
                       weights: np.ndarray) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """LIBLINEAR's binary problems of a LinearSVC fit, as ``(label, y, C_i)``: two classes give
    one (``classes[1]`` as +1, each class its own weighted ``C``); more give one per class
    against the rest (the rest keep the plain ``C``, as LIBLINEAR's ``train``). ``y_idx`` are
    the kept samples' class indices, ``weights`` their sample weights, ``class_w`` the
    per-class multipliers."""
    k = classes.size
    for c in [1] if k == 2 else range(k):
        own = y_idx == c
        y = np.where(own, 1.0, -1.0)
        if k == 2:
            yield f"{classes[1]} vs {classes[0]}", y, C * class_w[y_idx] * weights
        else:
            yield f"{classes[c]} vs rest", y, C * np.where(own, class_w[c], 1.0) * weights


def _liblinear_certificates(model: Any, X: Any, labels: Any, sample_weight: Any, tol: float
                            ) -> Iterator[ModelCertificate]:
    loss, penalty = model.loss, getattr(model, "penalty", "l2")
    if getattr(model, "multi_class", "ovr") != "ovr":
        raise ValueError(f"`model`: multi_class={model.multi_class!r} (Crammer-Singer) is not "
                         "certified; only LIBLINEAR's one-vs-rest problems are.")
    if loss not in LIBLINEAR_LOSSES or penalty not in LIBLINEAR_PENALTIES:
        raise ValueError(f"`model`: loss={loss!r}, penalty={penalty!r} is not a LIBLINEAR SVM "
                         f"problem ({LIBLINEAR_LOSSES} x {LIBLINEAR_PENALTIES}).")
    X = check_array(X, "X", ndim=2, sparse=True)
    classes, y_idx = _class_indices(model, labels)
    n = X.shape[0]
    if y_idx.shape[0] != n:
        raise ValueError(f"`y` must have one label per row of `X`: `X` has {n} rows, `y` has "
                         f"length {y_idx.shape[0]}.")
    coef = np.atleast_2d(fitted_array(model.coef_))
    if coef.shape[1] != X.shape[1]:
        raise ValueError(f"`X` has {X.shape[1]} features; the model was fitted on "
                         f"{coef.shape[1]}.")
    intercepts = np.broadcast_to(fitted_array(model.intercept_), (coef.shape[0],))
    scaling = float(model.intercept_scaling) if model.fit_intercept else None
    weights = _sample_weights(sample_weight, n)
    class_w = _class_weights(model.class_weight, classes, labels, weights)
    keep = np.flatnonzero(weights > 0)
    rows = X if keep.size == n else X[keep]
    for p, (label, y, box) in enumerate(
            liblinear_problems(y_idx[keep], classes, float(model.C), class_w, weights[keep])):
        w = coef[p] if scaling is None else np.append(coef[p], intercepts[p] / scaling)
        cert = certify_liblinear(w, rows, y, box, loss=loss, penalty=penalty,
                                 intercept_scaling=scaling)
        yield ModelCertificate(
            **{**dataclasses.asdict(cert), "b": float(intercepts[p])}, label=label,
            problem=f"liblinear/{penalty}/{loss}", tol=tol, criterion="gap",
            intercept=float(intercepts[p]))
