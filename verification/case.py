"""What a verification case is: :class:`Case` (one SVM problem, the checks that apply to it and
the status they must reach), :func:`make_case`, name selection, and a user's data as cases.

The named catalogue is :mod:`maxmargin.verification.cases`; the random campaign is
:mod:`maxmargin.verification.campaign`. The checks a case lists are those of
:mod:`maxmargin.verification.checks` (see the table in :mod:`maxmargin.verification.cases`).
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from maxmargin._validation import check_array, check_choice, check_positive, check_Xy
from maxmargin.datasets import binary_problems
from maxmargin.kernels import Kernel, make_kernel, own_points
from maxmargin.tolerances import REFERENCE_LINEAR_KKT

__all__ = ["Answer", "Case", "make_case", "make_nu_case", "nu_methods", "case_methods",
           "data_cases", "select", "SUITES", "AREAS", "PROBLEMS", "DATA_METHODS",
           "DATA_DEFAULT", "REFERENCES", "plan_reference", "ORACLE_MAX_GRAM_N",
           "ORACLE_MAX_FACTOR"]

SUITES = ("quick", "full")
AREAS = (
    "worked", "synthetic", "degenerate", "scale", "kernel", "infeasible", "real", "strings",
    "theorems", "random", "data", "nu",
)
#: The problems a case can pose: the C-SVC (``C``), Schölkopf's ν-SVC and one-class SVM
#: (``nu``; :mod:`maxmargin.formulations.nu`).
PROBLEMS = ("c_svc", "nu_svc", "one_class")
#: Methods that judge any data by the float64 certificate and weak duality against the oracle.
DATA_METHODS = ("oracle", "smo", "smo/tight", "smo/platt/certified", "primal/certified",
                "dcd_svc")
#: The ones a data run uses unless told otherwise (SMO at SVC's tol 1e-3; the others can take
#: millions of iterations on unscaled data).
DATA_DEFAULT = ("oracle", "smo", "primal/certified", "dcd_svc")
#: The ground truths a case can have (:func:`plan_reference`).
REFERENCES = ("oracle", "smo", "dcd")
#: The CVXPY oracle takes problems whose Gram matrix has at most this many rows (its
#: eigendecomposition and the interior-point steps cost O(n^3); 2,500 rows take seconds).
ORACLE_MAX_GRAM_N = 2500
#: ... or, linear kernel on dense data with d <= n, at most this many entries of the data.
ORACLE_MAX_FACTOR = 20_000_000
#: The wall-clock guard per (case x method), seconds, unless the user sets one (``--timeout``).
DEFAULT_TIMEOUT_S = 120.0
#: ``verify --data``: the guard is at least one second per this many stored entries of a problem.
DATA_ENTRIES_PER_S = 100_000
#: SMO is left out of a data run's defaults for linear problems of more rows than this.
SMO_LINEAR_MAX_ROWS = 10_000


@dataclass(frozen=True, eq=False)
class Answer:
    """A hand-derived optimum (None where the quantity is not unique or not derived)."""

    alpha: np.ndarray | None = None
    w: np.ndarray | None = None
    b: float | None = None
    b_interval: tuple[float, float] | None = None
    objective: float = math.nan


@dataclass(frozen=True, eq=False)
class Case:
    """One verification problem.

    Attributes
    ----------
    name : str
        Unique, used by ``maxmargin verify --case PATTERN``.
    area : str
        One of :data:`AREAS`.
    X, y : arrays
        The data (read-only).
    C : float or None
        ``None`` is the hard margin.
    kernel : str or Kernel
        ``"linear"``, ``"rbf"``, ``"poly"`` (``kernel_params`` holds gamma/degree/coef0), or a
        kernel object (strings, precomputed, callables: ``X`` is then what it takes).
    methods : tuple of str
        The methods of the suite that apply (see the module docstring).
    expected_status : str
        ``"optimal"``, or ``"infeasible"`` for a hard margin on non-separable data.
    quick : bool
        Part of the quick suite (every case is part of the full one).
    tags : tuple of str
        ``separable``, ``general_position``, ``2d`` (drawn in the report), ...
    reference : {"oracle", "smo"}
        The ground truth of the case: the CVXPY oracle, or (a problem too large for it, see
        :func:`plan_reference`) a float64 SMO run to ``tol = 1e-9`` judged by its own
        certificate.
    answer : Answer or None
        The hand-derived optimum of a worked example.
    problem : {"c_svc", "nu_svc", "one_class"}
        What is solved: the C-SVC (``C``), or with ``nu`` (``C`` None) the ν-SVC of ``(X, y)``
        or the one-class SVM of ``X`` (``y`` is then all ``+1``); the reference of a ν case is
        the CVXPY oracle ``nu_svm_dual`` / ``one_class_dual``.
    nu : float or None
        ``0 < nu <= nu_max = 2 * min(l+, l-) / l`` (ν-SVC) or ``<= 1`` (one-class).
    """

    name: str
    area: str
    X: np.ndarray
    y: np.ndarray
    C: float | None
    kernel: str | Kernel = "linear"
    kernel_params: Mapping[str, Any] = field(default_factory=dict)
    methods: tuple[str, ...] = ()
    expected_status: str = "optimal"
    quick: bool = False
    tags: tuple[str, ...] = ()
    answer: Answer | None = None
    reference: str = "oracle"
    problem: str = "c_svc"
    nu: float | None = None

    def __post_init__(self) -> None:
        check_choice(self.problem, "problem", PROBLEMS)
        if self.problem == "one_class":
            X, y = self._one_class_data()
        else:
            X, y = check_Xy(self.X, self.y, sparse=True, points=own_points(self.kernel))
        if self.problem != "c_svc":
            from maxmargin.formulations.nu import check_nu  # CVXPY: imported when needed

            if self.C is not None or self.reference != "oracle":
                raise ValueError("a ν case takes `nu` (with `C` None) and the CVXPY oracle as "
                                 f"its reference; got C={self.C!r}, "
                                 f"reference={self.reference!r}.")
            object.__setattr__(self, "nu", check_nu(self.nu, None if self.problem ==
                                                    "one_class" else y))
        elif self.nu is not None:
            raise ValueError(f"`nu` is for the ν problems; got nu={self.nu!r} with "
                             "problem='c_svc'.")
        for part in (X.data, X.indices, X.indptr) if hasattr(X, "tocsr") else (X,):
            part.flags.writeable = False
        y.flags.writeable = False
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "kernel_params", MappingProxyType(dict(self.kernel_params)))
        check_choice(self.area, "area", AREAS)
        check_choice(self.reference, "reference", REFERENCES)

    def _one_class_data(self) -> tuple[Any, np.ndarray]:
        """``X`` of a one-class case, and its ``y``: all ``+1``, one per row."""
        points = own_points(self.kernel)
        X = (check_array(self.X, "X", ndim=2, sparse=True) if points is None
             else points(self.X, "X"))
        y = np.array(self.y, dtype=np.float64, copy=True)
        if y.shape != (X.shape[0],) or not np.all(y == 1.0):
            raise ValueError("`y` of a one-class case must be all +1, one per row of `X`; got "
                             f"shape {y.shape}.")
        return X, y

    def make_kernel(self) -> Kernel:
        """The kernel object (``gamma="scale"`` resolved on this case's ``X``)."""
        return make_kernel(self.kernel, X=self.X, **self.kernel_params)

    @property
    def is_2d(self) -> bool:
        """A 2-D C-SVC case: drawn in the report (its panels draw the margins ``f = +-1``)."""
        return self.problem == "c_svc" and self.X.ndim == 2 and self.X.shape[1] == 2

    @property
    def kernel_name(self) -> str:
        """``"linear"``, ``"rbf"``, ... or the kernel object's name (``"string"``, ...)."""
        return self.kernel if isinstance(self.kernel, str) else self.kernel.name


def case_methods(
    C: float | None, kernel: str, separable: bool, perceptron: bool, tags: tuple[str, ...]
) -> tuple[str, ...]:
    """The methods that apply to a problem with these properties (module docstring)."""
    if C is None and not separable:
        return ("hard_primal", "dual_hard", "smo/wss2", "gilbert", "mdm", "wolfe")
    methods = ["consensus"]
    if kernel == "linear":
        methods += ["primal"] + (["hinge"] if C is not None else [])
    methods += ["smo/wss2", "smo/wss1", "smo/platt"]
    if C is None:
        methods += ["gilbert", "mdm", "wolfe"]
        if kernel == "linear":
            methods += ["hulls/gilbert", "hulls/mdm", "hulls/wolfe"]
            if "general_position" in tags:
                methods.append("sv_count")
    if perceptron:
        methods.append("perceptron")
    if "quadratic_kernel" in tags:
        methods.append("feature_map")
    return tuple(methods)


def make_case(
    name: str,
    area: str,
    X: np.ndarray,
    y: np.ndarray,
    C: float | None,
    *,
    separable: bool,
    quick: bool,
    perceptron: bool | None = None,
    kernel: str | Kernel = "linear",
    tags: tuple[str, ...] = (),
    answer: Answer | None = None,
    **kernel_params: Any,
) -> Case:
    tags = tags + (("separable",) if separable else ()) + (("2d",) if X.shape[1] == 2 else ())
    if kernel == "poly" and kernel_params == {"gamma": 1.0, "degree": 2, "coef0": 1.0}:
        tags += ("quadratic_kernel",)
    expected = "infeasible" if C is None and not separable else "optimal"
    perceptron = separable if perceptron is None else perceptron
    methods = case_methods(C, kernel, separable, perceptron, tags)
    if answer is not None:
        methods += ("hand",)
    return Case(
        name=name, area=area, X=X, y=y, C=C, kernel=kernel, kernel_params=kernel_params,
        methods=methods, expected_status=expected, quick=quick, tags=tags, answer=answer,
    )


def nu_methods(problem: str, kernel: str, nu: float, tags: tuple[str, ...] = (),
               hulls: bool = True) -> tuple[str, ...]:
    """The checks of a ν case (:mod:`maxmargin.verification.nu_checks`): the oracle's own
    certificate, the primal oracle (linear kernel), the SMO solver at tol 1e-3 and 1e-6, with
    ``hulls`` MDM and Wolfe on the reduced hulls, the ν-property and the refusal of an
    infeasible ``nu``; ν-SVC also the ν <-> C equivalence and, tagged ``hulls_meet``, ``w = 0``
    reported; one-class at ``nu = 1`` the centroid."""
    solver = "one_class_smo" if problem == "one_class" else "nu_smo"
    methods = ["nu/oracle"] + (["nu/primal"] if kernel == "linear" else [])
    methods += [solver, f"{solver}/tight"] + (["nu/mdm", "nu/wolfe"] if hulls else [])
    methods += ["nu_property", "nu_refuses"]
    if problem == "nu_svc":
        methods.append("nu_c_equivalence")
        if "hulls_meet" in tags:
            methods.append("nu_hulls_meet")
    elif nu == 1.0:
        methods.append("one_class_centroid")
    return tuple(methods)


def make_nu_case(
    name: str, X: np.ndarray, y: np.ndarray | None, nu: float, *, quick: bool,
    kernel: str = "linear", tags: tuple[str, ...] = (), area: str = "nu", **kernel_params: Any,
) -> Case:
    """A ν-SVC case (labels ``y``) or a one-class case (``y`` None) with the checks of
    :func:`nu_methods` (the reduced hulls' outside the quick suite: their compiled loops
    would double the first run's compile)."""
    problem = "one_class" if y is None else "nu_svc"
    labels = np.ones(X.shape[0]) if y is None else y
    methods = nu_methods(problem, kernel, nu, tags, hulls=not quick)
    return Case(name=name, area=area, X=X, y=labels, C=None, kernel=kernel,
                kernel_params=kernel_params, methods=methods, quick=quick,
                tags=(problem, *tags), problem=problem, nu=nu)


def select(cases: tuple[Case, ...], pattern: str | None) -> tuple[Case, ...]:
    """The cases whose name matches the shell-style ``pattern`` (a plain substring also
    matches); all of them for ``None``."""
    if pattern is None:
        return cases
    if not isinstance(pattern, str) or not pattern:
        raise ValueError(f"`case` must be a non-empty name pattern; got {pattern!r}.")
    return tuple(c for c in cases if fnmatch.fnmatch(c.name, pattern) or pattern in c.name)


def data_cases(
    X: np.ndarray,
    labels: Any,
    *,
    name: str = "data",
    C: float = 1.0,
    kernel: str | Kernel = "linear",
    methods: tuple[str, ...] | None = None,
    positive: Any = None,
    **kernel_params: Any,
) -> tuple[Case, ...]:
    """A user's labelled data as cases (area ``data``): one per binary problem of
    :func:`maxmargin.datasets.binary_problems` (the two classes; or each pair of classes; or
    ``positive`` against the rest), each judged by the certified methods (``methods``, among
    :data:`DATA_METHODS`, default :data:`DATA_DEFAULT`: the oracle's own certificate, SMO at
    tol 1e-3 (``smo/tight``: 1e-6), Platt's SMO, and for the linear kernel the primal form;
    every answer called optimal must meet its float64 certificate and weak duality against the
    oracle both ways). ``gamma="scale"`` is resolved on all of ``X``
    (as SVC does), so every pair uses the same kernel.
    """
    C = check_positive(C, "C")
    kern = make_kernel(kernel, X=X, **kernel_params)
    params = {} if kern.name == "linear" else dict(zip(("gamma", "coef0", "degree"),
                                                     kern.params, strict=True))
    if "degree" in params:
        params["degree"] = int(params["degree"])
    if kern.name == "rbf":
        params = {"gamma": params["gamma"]}
    linear_only = ("primal/certified", "dcd_svc")
    allowed = tuple(m for m in DATA_METHODS if m not in linear_only or kern.name == "linear")
    chosen = tuple(m for m in DATA_DEFAULT if m in allowed) if methods is None else tuple(methods)
    for m in chosen:
        if m not in allowed:
            raise ValueError(
                f"`methods` must be among {', '.join(allowed)} for this kernel; got {m!r}."
            )
    cases = []
    for problem in binary_problems(labels, positive):
        Xp = X[problem.index]
        reference, why = plan_reference(Xp, kern.name)
        picked = chosen if methods is not None else tuple(
            m for m in chosen if (m != "primal/certified" or _primal_fits(Xp))
            and (m not in ("smo", "smo/tight") or _smo_fits(Xp, kern.name)))
        if len(picked) < len(chosen):
            why += "; " + ", ".join(m for m in chosen if m not in picked) + (
                " left out by default at this size (ask with --methods)")
        cases.append(Case(
            name=f"{name}:{problem.name}", area="data", X=Xp, y=problem.y, C=C,
            kernel=kern.name, kernel_params=params, methods=picked,
            tags=(problem.describe(), why), reference=reference,
        ))
    return tuple(cases)


def _gram_bytes(n: int) -> int:
    return 8 * n * n


def plan_reference(X: Any, kernel_name: str) -> tuple[str, str]:
    """The ground truth a data problem can afford, and why, before any work.

    The CVXPY oracle needs a factor of the Gram matrix: ``n x d`` (the centred data) for the
    linear kernel with ``d <= n``, else the ``n x n`` Gram matrix and its
    eigendecomposition (``O(n^3)``). Above :data:`ORACLE_MAX_GRAM_N` rows in that case, or
    :data:`ORACLE_MAX_FACTOR` entries of ``n x d``, the reference is a float64 SMO run to
    ``tol = 1e-9`` instead, judged by its own certificate (memory ``O(n)`` plus its cache).
    """
    n, d = X.shape[0], X.shape[1]
    dense_linear = kernel_name == "linear" and d <= n
    if dense_linear and n * d <= ORACLE_MAX_FACTOR:
        return "oracle", f"reference: CVXPY oracle on the {n} x {d} centred data"
    if not dense_linear and n <= ORACLE_MAX_GRAM_N:
        return "oracle", (f"reference: CVXPY oracle on the {n} x {n} Gram matrix "
                          f"({_gram_bytes(n) / 2**20:.0f} MB)")
    need = (f"a {n} x {d} factor" if dense_linear else
            f"the {n} x {n} Gram matrix ({_gram_bytes(n) / 2**30:.1f} GB) and its eigenvectors")
    if kernel_name == "linear":  # the n x d data suffice: the certified linear solver
        return "dcd", (f"reference: dcd_svc (certified linear solver) to m - M <= "
                       f"{REFERENCE_LINEAR_KKT:g} (the CVXPY oracle would need {need})")
    return "smo", f"reference: float64 SMO to tol 1e-9 (the CVXPY oracle would need {need})"


def _smo_fits(X: Any, kernel_name: str) -> bool:
    """Whether SMO is a fair default at this size: a linear problem of more than
    :data:`SMO_LINEAR_MAX_ROWS` rows takes it (like LIBSVM) tens of minutes (its iterations grow
    faster than ``n``, and the cache holds ever fewer columns); the reference model, which
    works on the ``n x d`` data, is the right tool there."""
    return kernel_name != "linear" or X.shape[0] <= SMO_LINEAR_MAX_ROWS


def _primal_fits(X: Any) -> bool:
    """Whether the primal form's ``d + 1 + n`` variables are a fair second oracle: ``d <= n``
    and at most :data:`ORACLE_MAX_FACTOR` entries."""
    n, d = X.shape[0], X.shape[1]
    return d <= n and n * d <= ORACLE_MAX_FACTOR
