"""The perceptron in its primal form (Rosenblatt; Li Hang, "Statistical Learning Methods", 2.3).

Starting from ``w = 0, b = 0``, the samples are visited one pass (epoch) at a time and every
mistake triggers a stochastic-gradient step on the perceptron loss
``L(w, b) = -sum_{i in M} y_i (w . x_i + b)``:

.. math::

    y_i (w \\cdot x_i + b) \\le 0 \\;\\Rightarrow\\;
    w \\leftarrow w + \\eta y_i x_i, \\qquad b \\leftarrow b + \\eta y_i .

The run stops after the first pass without a mistake (``status="converged"``) or after
``max_epochs`` passes (``status="max_iter"``, with a :class:`~maxmargin.ConvergenceWarning`).
With ``bias=False`` the bias stays 0: the homogeneous perceptron ``w <- w + y x``.

Novikoff's theorem: if some unit ``(w_opt, b_opt)`` has ``y_i (w_opt . x_i + b_opt) >= gamma > 0``
for all ``i``, the number of mistakes is at most ``(R / gamma)^2`` with
``R = max_i ||(x_i, 1)||`` (``R = max_i ||x_i||`` for the homogeneous form), whatever ``eta``.

The passes are compiled with Numba; the loop over epochs stays in Python so that
``order="random"`` can draw each pass's permutation from ``np.random.default_rng(seed)``.
This module also holds the helpers shared with :mod:`maxmargin.algorithms.kernel_perceptron`.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

import maxmargin.exceptions as exceptions
from maxmargin._jit import njit
from maxmargin._validation import (
    check_bool,
    check_choice,
    check_positive,
    check_positive_int,
    check_Xy,
)
from maxmargin.kernels import Kernel, LinearKernel
from maxmargin.results import PerceptronResult

__all__ = ["perceptron", "ORDERS", "MAX_RECORDED_UPDATES"]

#: The visiting orders: index order every pass, or a fresh random permutation every pass.
ORDERS = ("cyclic", "random")
#: ``history["updates"]`` keeps the sample indices of at most this many first updates.
MAX_RECORDED_UPDATES = 10_000


@dataclass(frozen=True)
class _Options:
    """The validated run options shared by both perceptrons."""

    eta: float
    max_epochs: int
    bias: bool
    order: str
    seed: int | None


def _check_options(eta: Any, max_epochs: Any, bias: Any, order: Any, seed: Any) -> _Options:
    """Validate the options common to :func:`perceptron` and ``kernel_perceptron``."""
    return _Options(
        eta=check_positive(eta, "eta"),
        max_epochs=check_positive_int(max_epochs, "max_epochs"),
        bias=check_bool(bias, "bias"),
        order=check_choice(order, "order", ORDERS),
        seed=None if seed is None else check_positive_int(seed, "seed", minimum=0),
    )


def _epoch_orders(n: int, opts: _Options) -> Iterator[np.ndarray]:
    """The visiting order of each pass: ``0..n-1``, or ``rng.permutation(n)`` per pass."""
    if opts.order == "cyclic":
        cyclic = np.arange(n, dtype=np.int64)
        for _ in range(opts.max_epochs):
            yield cyclic
    else:
        rng = np.random.default_rng(opts.seed)
        for _ in range(opts.max_epochs):
            yield rng.permutation(n).astype(np.int64, copy=False)


@dataclass
class _RunState:
    """What a run accumulates: the bias, the updates per sample and the first updated indices."""

    b: float
    counts: np.ndarray
    updates: np.ndarray
    n_updates: int = 0

    @classmethod
    def empty(cls, n: int, opts: _Options) -> _RunState:
        cap = min(MAX_RECORDED_UPDATES, n * opts.max_epochs)
        return cls(b=0.0, counts=np.zeros(n), updates=np.zeros(cap, dtype=np.int64))


def _train(
    X: np.ndarray,
    y: np.ndarray,
    opts: _Options,
    state: _RunState,
    one_pass: Callable[[np.ndarray], int],
    *,
    w: np.ndarray | None,
    kernel: Kernel,
    method: str,
) -> PerceptronResult:
    """Run passes until one is clean or ``max_epochs`` is reached, then build the result.

    ``one_pass(order)`` performs one pass in the given visiting order, updating ``state`` (and
    ``w``), and returns its number of mistakes. Not converging warns
    :class:`ConvergenceWarning`. ``alpha`` is the update counts times ``eta``.
    """
    start = time.perf_counter()
    per_epoch: list[int] = []
    for order in _epoch_orders(X.shape[0], opts):
        per_epoch.append(one_pass(order))
        if per_epoch[-1] == 0:
            break
    converged = per_epoch[-1] == 0
    if not converged:
        warnings.warn(
            f"{method} made {per_epoch[-1]} mistake(s) in its last pass and stopped at "
            f"max_epochs={opts.max_epochs}; the data may not be separable"
            + (" by this kernel." if w is None else " by a hyperplane."),
            exceptions.ConvergenceWarning,
            stacklevel=3,
        )
    recorded = state.updates[: min(state.n_updates, state.updates.shape[0])]
    return PerceptronResult(
        w=w,
        b=state.b,
        alpha=state.counts * opts.eta,
        mistakes=state.n_updates,
        epochs=len(per_epoch),
        converged=converged,
        status="converged" if converged else "max_iter",
        history={"mistakes": np.asarray(per_epoch, dtype=np.int64), "updates": recorded},
        X_train=X,
        y_train=y,
        kernel=kernel,
        method=method,
        runtime=time.perf_counter() - start,
    )


@njit
def _perceptron_pass(X, y, order, eta, bias, w, b, counts, updates, n_updates):  # pragma: no cover
    """One pass of the textbook loop in the given order; updates ``w, counts, updates`` in place.

    Returns ``(mistakes in this pass, b, n_updates)``.
    """
    d = X.shape[1]
    d4 = d - d % 4
    mistakes = 0
    for i in order:
        # f(x_i) = w . x_i + b in four interleaved partial sums: independent chains instead of
        # one that waits on every addition (n = 100,000, d = 100: 20 % faster; the pass is then
        # bound by streaming X from memory)
        x = X[i]
        f0 = f1 = f2 = f3 = 0.0
        for j in range(0, d4, 4):
            f0 += w[j] * x[j]
            f1 += w[j + 1] * x[j + 1]
            f2 += w[j + 2] * x[j + 2]
            f3 += w[j + 3] * x[j + 3]
        for j in range(d4, d):
            f0 += w[j] * x[j]
        f = ((f0 + f1) + (f2 + f3)) + b
        if y[i] * f <= 0.0:  # a mistake (the first sample always is one: f = 0)
            step = eta * y[i]
            for j in range(d):
                w[j] += step * X[i, j]  # w <- w + eta y_i x_i
            if bias:
                b += step  # b <- b + eta y_i
            counts[i] += 1.0
            if n_updates < updates.shape[0]:
                updates[n_updates] = i
            n_updates += 1
            mistakes += 1
    return mistakes, b, n_updates


def perceptron(
    X: Any,
    y: Any,
    eta: float = 1.0,
    max_epochs: int = 1000,
    bias: bool = True,
    order: str = "cyclic",
    seed: int | None = None,
) -> PerceptronResult:
    """Train the primal perceptron until a pass makes no mistake.

    Starting at ``w = 0, b = 0``, each pass visits every sample once and, when
    ``y_i (w . x_i + b) <= 0``, updates ``w <- w + eta y_i x_i`` and ``b <- b + eta y_i``
    (``b`` stays 0 when ``bias=False``: the homogeneous form of the lecture notes).

    Parameters
    ----------
    X : array of shape (n, d)
    y : array of shape (n,) with values -1 and +1
    eta : float
        Learning rate ``eta > 0``. Starting from zero, it only scales ``(w, b)``: the updates
        made are the same for every ``eta``.
    max_epochs : int
        Maximum number of passes over the data.
    bias : bool
        Learn the bias ``b`` (True) or keep ``b = 0`` (False).
    order : {"cyclic", "random"}
        ``"cyclic"`` visits the samples in index order each pass (the textbook algorithm);
        ``"random"`` draws a new permutation each pass from ``np.random.default_rng(seed)``.
    seed : int or None
        Seed for ``order="random"`` (ignored for ``"cyclic"``).

    Returns
    -------
    PerceptronResult
        ``w``, ``b``; ``alpha`` = updates per sample times ``eta``, so that
        ``w = sum_i alpha_i y_i x_i`` and (with a bias) ``b = sum_i alpha_i y_i``;
        ``mistakes`` = total updates; ``epochs`` = passes made, the clean one included;
        ``status`` ``"converged"`` or ``"max_iter"`` (then a ``ConvergenceWarning`` is issued).
        ``history["mistakes"]`` holds the mistakes of each pass and ``history["updates"]`` the
        sample index of each update, for the first :data:`MAX_RECORDED_UPDATES` updates.

    Raises
    ------
    ValueError
        On invalid data or options (before any work).
    """
    X, y = check_Xy(X, y)
    opts = _check_options(eta, max_epochs, bias, order, seed)
    w = np.zeros(X.shape[1])
    state = _RunState.empty(X.shape[0], opts)

    def one_pass(visit: np.ndarray) -> int:
        mistakes, state.b, state.n_updates = _perceptron_pass(
            X,
            y,
            visit,
            opts.eta,
            opts.bias,
            w,
            state.b,
            state.counts,
            state.updates,
            state.n_updates,
        )
        return mistakes

    return _train(X, y, opts, state, one_pass, w=w, kernel=LinearKernel(), method="perceptron")
