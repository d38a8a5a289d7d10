"""The method registry: every solver maxmargin runs, by name, with what it supports.

One table read by the estimator (``MaxMarginClassifier(solver=...)``), the verification suite,
the random campaign, the command line (``--methods``) and the benchmarks. Every entry is called
the same way::

    spec = METHODS["smo"]
    answer = spec(X, y, C=1.0, kernel=kern, tol=None, max_iter=None, sample_weight=None)

with ``X``, ``y`` validated (``y`` in -1/+1), ``kern`` a :class:`~maxmargin.kernels.Kernel`
object, ``C=None`` for the hard margin, and ``sample_weight`` per-sample multipliers of ``C``
(``None``: all ones). SVM methods return an :class:`~maxmargin.results.SVMSolution`, the
perceptrons a :class:`~maxmargin.results.PerceptronResult`.

A method's :class:`MethodSpec` says which problem it solves (``"svm"``: the soft- or hard-margin
dual; ``"hard_margin"``: only ``C=None``; ``"perceptron"``: a separating hyperplane, no margin
maximised), which kernels it takes (``None``: any kernel object), whether it takes sparse ``X``
(calling a spec densifies it for the others), per-sample weights, and the tolerance it runs to
when none is given (from :mod:`maxmargin.tolerances`; the nearest-point methods' entries come
from :data:`~maxmargin.algorithms.gilbert.NEAREST_POINT_METHODS`).
:func:`register` adds a method (the third-party SVM-dual solvers, ``libsvm``, ``sklearnex``, ...,
are registered when :mod:`maxmargin.verification.audit` is imported).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from maxmargin.algorithms import dcd_svc, gilbert_svm, kernel_perceptron, perceptron, smo
from maxmargin.algorithms.gilbert import NEAREST_POINT_METHODS
from maxmargin.formulations import svm_dual
from maxmargin.kernels import Kernel
from maxmargin.results import PerceptronResult, SVMSolution
from maxmargin.tolerances import SMO_TOL

__all__ = ["MethodSpec", "METHODS", "PROBLEMS", "register", "get_method", "method_names"]

#: The problems a method can solve: the SVM (soft and hard margin), the soft margin only, the
#: hard margin only, a separating hyperplane.
PROBLEMS = ("svm", "soft_margin", "hard_margin", "perceptron")

Solve = Callable[..., SVMSolution | PerceptronResult]


@dataclass(frozen=True)
class MethodSpec:
    """One registered method.

    Attributes
    ----------
    name : str
        Its registry name (``solver=`` of the estimator, ``--methods`` of the CLI).
    solve : callable
        ``solve(X, y, *, C, kernel, tol, max_iter, sample_weight, **options)`` (module docstring).
    problem : {"svm", "hard_margin", "perceptron"}
    summary : str
        One line for tables and ``--help``.
    kernels : tuple of str or None
        Kernel names it takes (``Kernel.name``), None for any kernel object.
    sparse : bool
        Takes scipy.sparse CSR ``X`` as it is (calling the spec densifies it for the others).
    sample_weight : bool
        Takes per-sample weights of ``C`` (a method without them only accepts equal weights).
    default_tol : float
        The tolerance calling the spec runs it to when ``tol`` is None or not given (NaN: the
        method's own default, e.g. a perceptron's, which has none).
    family : str
        ``"maxmargin"`` (hand-written), ``"oracle"`` (CVXPY) or ``"third_party"``.
    options : mapping
        Keyword arguments always passed to ``solve`` (a variant of a method, e.g. a working set).
    """

    name: str
    solve: Solve
    problem: str
    summary: str
    kernels: tuple[str, ...] | None = None
    sparse: bool = False
    sample_weight: bool = False
    default_tol: float = float("nan")
    family: str = "maxmargin"
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.problem not in PROBLEMS:
            raise ValueError(f"`problem` must be one of {PROBLEMS}; got {self.problem!r}.")
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))

    @property
    def soft_margin(self) -> bool:
        """Whether it solves the soft margin (a finite ``C``)."""
        return self.problem in ("svm", "soft_margin")

    @property
    def hard_margin(self) -> bool:
        """Whether it solves the hard margin (``C=None``)."""
        return self.problem in ("svm", "hard_margin")

    def supports_kernel(self, kernel: Kernel) -> bool:
        """Whether ``kernel`` is one it takes."""
        return self.kernels is None or kernel.name in self.kernels

    def __call__(self, X: Any, y: np.ndarray, **kwargs: Any) -> SVMSolution | PerceptronResult:
        """``solve(X, y, **options, **kwargs)`` with ``tol`` (None or not given)
        :attr:`default_tol` when that is finite, and sparse ``X`` densified unless
        :attr:`sparse`."""
        if kwargs.get("tol") is None and math.isfinite(self.default_tol):
            kwargs["tol"] = self.default_tol
        if not self.sparse and hasattr(X, "toarray"):
            X = X.toarray()
        return self.solve(X, y, **{**self.options, **kwargs})


def _weights(C: float | None, sample_weight: np.ndarray | None) -> tuple[float | None, Any]:
    """``(C, sample_weight)`` with equal weights folded into ``C`` (no per-sample box)."""
    if sample_weight is None or C is None:
        return C, None
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.size and np.all(w == w[0]):
        return C * float(w[0]), None
    return C, w


def _smo(X: Any, y: np.ndarray, *, C: float | None, kernel: Kernel, tol: float | None = None,
         max_iter: int | None = None, sample_weight: Any = None, **options: Any) -> SVMSolution:
    C, w = _weights(C, sample_weight)
    return smo(X, y, C=C, kernel=kernel, tol=SMO_TOL if tol is None else tol,
               max_iter=max_iter, sample_weight=w, **options)


def _dcd_svc(X: Any, y: np.ndarray, *, C: float | None, kernel: Kernel,
             tol: float | None = None, max_iter: int | None = None, sample_weight: Any = None,
             **options: Any) -> SVMSolution:
    if C is None:
        raise ValueError("`C`: method 'dcd_svc' solves the soft margin only (a finite C); got "
                         "C=None. Use 'smo' or a nearest-point method for the hard margin.")
    if kernel.name != "linear":
        raise ValueError(f"`kernel`: method 'dcd_svc' solves the linear SVM only; got "
                         f"{kernel.describe()!r}.")
    C, w = _weights(C, sample_weight)
    return dcd_svc(X, y, C, sample_weight=w, tol=SMO_TOL if tol is None else tol,
                   max_iter=max_iter, **options)


def _cvxpy(X: Any, y: np.ndarray, *, C: float | None, kernel: Kernel, tol: float | None = None,
           max_iter: int | None = None, sample_weight: Any = None, **options: Any
           ) -> SVMSolution:
    C, w = _weights(C, sample_weight)
    return svm_dual(X, y, C, kernel=kernel, sample_weight=w).solve(**options)


def _nearest_point(method: str) -> Solve:
    def solve(X: Any, y: np.ndarray, *, C: float | None = None, kernel: Kernel,
              tol: float | None = None, max_iter: int | None = None, sample_weight: Any = None,
              **options: Any) -> SVMSolution:
        if C is not None:
            raise ValueError(
                f"`C`: method {method!r} solves the hard-margin SVM only (C=None); got C={C!r}. "
                "Use 'smo' or 'cvxpy' for a soft margin."
            )
        return gilbert_svm(X, y, tol=tol, max_iter=max_iter, method=method, kernel=kernel,
                           **options)

    solve.__name__ = f"solve_{method}"
    return solve


def _perceptron(X: Any, y: np.ndarray, *, C: float | None = None, kernel: Kernel,
                tol: float | None = None, max_iter: int | None = None,
                sample_weight: Any = None, **options: Any) -> PerceptronResult:
    if kernel.name != "linear":
        raise ValueError(
            f"`kernel`: method 'perceptron' is the primal (linear) perceptron; got "
            f"{kernel.describe()!r}: use kernel='linear' or method 'kernel_perceptron'."
        )
    return perceptron(X, y, max_epochs=1000 if max_iter is None else max_iter, **options)


def _kernel_perceptron(X: Any, y: np.ndarray, *, C: float | None = None, kernel: Kernel,
                       tol: float | None = None, max_iter: int | None = None,
                       sample_weight: Any = None, **options: Any) -> PerceptronResult:
    return kernel_perceptron(X, y, kernel=kernel,
                             max_epochs=1000 if max_iter is None else max_iter, **options)


_REGISTRY: dict[str, MethodSpec] = {}
#: Every registered method by name (read-only; :func:`register` adds to it).
METHODS: Mapping[str, MethodSpec] = MappingProxyType(_REGISTRY)


def register(spec: MethodSpec, *, replace: bool = False) -> MethodSpec:
    """Add ``spec`` to :data:`METHODS` under ``spec.name`` (a ``ValueError`` if the name is
    taken, unless ``replace``)."""
    if not isinstance(spec, MethodSpec):
        raise TypeError(f"`spec` must be a MethodSpec; got {type(spec).__name__}.")
    if spec.name in _REGISTRY and not replace:
        raise ValueError(f"`spec`: a method named {spec.name!r} is already registered.")
    _REGISTRY[spec.name] = spec
    return spec


def get_method(name: str, *, families: tuple[str, ...] | None = None) -> MethodSpec:
    """The registered method ``name`` (of one of ``families`` when given); a ``ValueError``
    listing the names otherwise."""
    allowed = tuple(n for n, s in _REGISTRY.items() if families is None or s.family in families)
    if not isinstance(name, str) or name not in allowed:
        raise ValueError(f"`solver` must be one of {allowed}; got {name!r}.")
    return _REGISTRY[name]


def method_names(*, problem: str | None = None, family: str | None = None,
                 hard_margin: bool | None = None) -> tuple[str, ...]:
    """Names of the registered methods, filtered by ``problem``, ``family`` and whether they
    solve the hard margin."""
    return tuple(
        name for name, spec in _REGISTRY.items()
        if (problem is None or spec.problem == problem)
        and (family is None or spec.family == family)
        and (hard_margin is None or spec.hard_margin == hard_margin)
    )


for _spec in (
    MethodSpec("smo", _smo, "svm", "SMO, LIBSVM's algorithm (second-order working set, cache, "
               "shrinking)", sparse=True, sample_weight=True, default_tol=SMO_TOL),
    *(MethodSpec(name, _nearest_point(name), "hard_margin", summary, default_tol=tol)
      for name, (_, tol, _, _, summary) in NEAREST_POINT_METHODS.items()),
    MethodSpec("perceptron", _perceptron, "perceptron", "the primal perceptron (Rosenblatt)",
               kernels=("linear",)),
    MethodSpec("kernel_perceptron", _kernel_perceptron, "perceptron", "the kernel (dual) "
               "perceptron"),
    MethodSpec("dcd_svc", _dcd_svc, "soft_margin", "dual coordinate descent on the linear SVC "
               "problem (w kept explicitly; y . alpha = 0 by a search on the bias)",
               kernels=("linear",), sparse=True, sample_weight=True, default_tol=SMO_TOL),
    MethodSpec("cvxpy", _cvxpy, "svm", "the CVXPY dual oracle (Clarabel, certified)",
               sparse=True, sample_weight=True, family="oracle"),
):
    register(_spec)
