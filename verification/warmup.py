"""Compiled code warmed up before the checks that run it: each check names the pieces it needs
(``Method.warm``), and :func:`warm_up` compiles (or loads from Numba's on-disk cache) their
specialisations once per process, on a four-point problem, so that forked workers inherit them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable

import numpy as np

from maxmargin._jit import cache_is_cold
from maxmargin.algorithms import (
    gilbert_svm,
    kernel_perceptron,
    mdm_hulls,
    nu_smo,
    one_class_hull,
    one_class_smo,
    perceptron,
    smo,
)
from maxmargin.algorithms.smo.loops import solve_pairs, warm_large_data

__all__ = ["WARM_UPS", "warm_up", "numba_cache_is_cold", "COMPILE_GUARD_S"]


def numba_cache_is_cold() -> bool:
    """Whether SMO's compiled driver has no entry in Numba's on-disk cache yet (a first run
    compiles the loops, which takes tens of seconds)."""
    return cache_is_cold(solve_pairs)


#: A guard (seconds) long enough for a worker to compile its methods' code itself.
COMPILE_GUARD_S = 60.0
_WARM_X = np.array([[0.0, 0.0], [1.0, 0.2], [2.0, 2.0], [3.0, 2.5]])
_WARM_Y = np.array([-1.0, -1.0, 1.0, 1.0])
_KERNELS = ("linear", "rbf", "poly")


def _warm_smo(working_sets: tuple[str, ...]) -> Callable[[], None]:
    def warm() -> None:
        for kernel in _KERNELS:
            for working_set in working_sets:
                for precision in ("auto", "double"):
                    for C in (1.0, None):
                        smo(_WARM_X, _WARM_Y, C=C, kernel=kernel, working_set=working_set,
                            precision=precision)

    return warm


def _warm_nearest() -> None:
    for kernel in _KERNELS:
        for method in ("gilbert", "mdm", "wolfe"):
            gilbert_svm(_WARM_X, _WARM_Y, method=method, kernel=kernel)
    mdm_hulls(_WARM_X[_WARM_Y > 0], _WARM_X[_WARM_Y < 0])


def _warm_nu() -> None:
    for kernel in _KERNELS:
        nu_smo(_WARM_X, _WARM_Y, 0.5, kernel=kernel)
        one_class_smo(_WARM_X, 0.5, kernel=kernel)


def _warm_nu_hulls() -> None:
    for kernel in _KERNELS:  # nu = 0.9 and 0.5: bounds below 1, the reduced hulls' loops
        for method in ("mdm", "wolfe"):
            gilbert_svm(_WARM_X, _WARM_Y, nu=0.9, method=method, kernel=kernel)
            one_class_hull(_WARM_X, 0.5, method=method, kernel=kernel)


def _warm_perceptrons() -> None:
    for kernel in _KERNELS:
        kernel_perceptron(_WARM_X, _WARM_Y, kernel=kernel)
    perceptron(_WARM_X, _WARM_Y)


#: The compiled code of the methods (``Method.warm``), by piece: each call compiles (or loads
#: from Numba's on-disk cache) its specialisations, on a four-point problem.
WARM_UPS: dict[str, Callable[[], None]] = {
    "smo": _warm_smo(("wss2", "wss1")),
    "smo_large": warm_large_data,  # the drivers only large problems select
    "platt": _warm_smo(("platt",)),
    "nearest": _warm_nearest,
    "perceptron": _warm_perceptrons,
    "nu": _warm_nu,  # nu_smo and one_class_smo (the nu checks, verification/nu_checks.py)
    "nu_hulls": _warm_nu_hulls,  # MDM and Wolfe on reduced hulls (the same)
}
_WARMED: set[str] = set()


def warm_up(pieces: Iterable[str] | None = None) -> None:
    """Compile (or load from Numba's on-disk cache) the specialisations of ``pieces`` (keys of
    :data:`WARM_UPS`; all when None) in this process, once. ``maxmargin compile`` warms all of
    them up after an install; ``verify`` warms up each case's pieces before forking its
    worker, so that the worker inherits them and the first rows come before all is compiled."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for piece in WARM_UPS if pieces is None else pieces:
            if piece not in _WARMED:
                WARM_UPS[piece]()
                _WARMED.add(piece)
