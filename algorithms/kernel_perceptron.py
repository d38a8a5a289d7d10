"""The kernel perceptron (the dual form of the perceptron with a kernel).

The perceptron only touches the data through dot products: with ``alpha_k`` the number of
updates made on ``x_k`` (times ``eta``), its weights are ``w = sum_k alpha_k y_k phi(x_k)``, so
replacing ``phi(x) . phi(z)`` by a kernel ``K(x, z)`` gives

.. math::

    f(x) = \\sum_k \\alpha_k y_k K(x_k, x) + b, \\qquad
    y_i f(x_i) \\le 0 \\;\\Rightarrow\\; \\alpha_i \\leftarrow \\alpha_i + \\eta,
    \\quad b \\leftarrow b + \\eta y_i .

Implementation: the decision values without the bias, ``g_j = sum_k alpha_k y_k K(x_k, x_j)``,
are kept for all training points. Checking a sample is then O(1) (a compiled scan finds the
next mistake of the pass), and an update on ``x_k`` is one kernel column:
``g += eta y_k K(X, x_k)``, computed on demand with BLAS by :mod:`maxmargin.kernels`. No
``n x n`` Gram matrix is formed; memory is O(n) plus a bounded cache of the columns of the
samples already updated (``cache_size`` megabytes, as in LIBSVM), which a sample updated again
in a later pass reuses. (SMO's cache in ``_kernel_cache`` stores float32 columns of
``Q = yy^T * K``; the perceptron keeps float64 columns of ``K`` so that its decisions match the
primal perceptron's.) The runs are the same as the primal perceptron's for the linear kernel
(same updates, same ``alpha``; ``w = X^T (alpha * y)``), up to the rounding of the two sums.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from maxmargin._jit import njit
from maxmargin._validation import check_nonnegative, check_Xy
from maxmargin.algorithms.perceptron import _check_options, _RunState, _train
from maxmargin.kernels import Kernel, make_kernel, own_points, precomputed
from maxmargin.kernels.qmatrix import fill_column, make_qmatrix
from maxmargin.results import PerceptronResult

__all__ = ["kernel_perceptron"]


@njit
def _next_mistake(g, b, y, order, start):  # pragma: no cover
    """The first position ``p >= start`` of ``order`` with ``y_i (g_i + b) <= 0``, else ``n``."""
    for p in range(start, order.shape[0]):
        i = order[p]
        if y[i] * (g[i] + b) <= 0.0:
            return p
    return order.shape[0]


class _ColumnCache:
    """Kernel columns ``K(X, x_k)`` on demand from the kernel engine's Q-matrix (labels 1, the
    data as they are), keeping at most ``capacity`` of them (FIFO)."""

    def __init__(self, kernel: Kernel, X: Any, cache_size_mb: float) -> None:
        n = X.shape[0] if hasattr(X, "shape") else len(X)
        self.qm = make_qmatrix(kernel, X, np.ones(n))
        self.capacity = int(cache_size_mb * 2**20 // (8 * n))
        self.columns: dict[int, np.ndarray] = {}

    def __getitem__(self, k: int) -> np.ndarray:
        col = self.columns.get(k)
        if col is None:
            n = self.qm.y.shape[0]
            col = np.empty(n)
            fill_column(self.qm, k, 0, n, col)
            if self.capacity > 0:
                if len(self.columns) >= self.capacity:
                    del self.columns[next(iter(self.columns))]
                self.columns[k] = col
        return col


def kernel_perceptron(
    X: Any,
    y: Any,
    kernel: str | Kernel = "rbf",
    max_epochs: int = 1000,
    *,
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 0.0,
    eta: float = 1.0,
    bias: bool = True,
    order: str = "cyclic",
    seed: int | None = None,
    cache_size: float = 200.0,
) -> PerceptronResult:
    """Train the kernel perceptron until a pass makes no mistake.

    Starting at ``alpha = 0, b = 0``, each pass visits every sample once and, when
    ``y_i (sum_k alpha_k y_k K(x_k, x_i) + b) <= 0``, updates ``alpha_i <- alpha_i + eta`` and
    ``b <- b + eta y_i`` (``b`` stays 0 when ``bias=False``).

    Parameters
    ----------
    X : array of shape (n, d)
    y : array of shape (n,) with values -1 and +1
    kernel : {"linear", "rbf", "poly"} or Kernel
        ``rbf``: ``exp(-gamma ||x - z||^2)``; ``poly``: ``(gamma x . z + coef0)^degree``
        (scikit-learn SVC semantics). ``poly`` with ``gamma=1, coef0=1, degree=2`` is the
        ``(1 + x . z)^2`` kernel of the quadratic feature map.
    max_epochs : int
        Maximum number of passes over the data.
    gamma : float or {"scale", "auto"}
    degree : int
    coef0 : float
    eta : float
        Learning rate ``eta > 0`` (from zero it only scales ``alpha`` and ``b``).
    bias : bool
        Learn the bias ``b`` (True) or keep ``b = 0`` (False).
    order : {"cyclic", "random"}
        Index order each pass, or a new permutation each pass from
        ``np.random.default_rng(seed)``.
    seed : int or None
        Seed for ``order="random"``.
    cache_size : float
        Megabytes of kernel columns kept for samples updated again (0 disables the cache).
        Without the cache the memory is O(n); with it, at most ``cache_size`` MB more.

    Returns
    -------
    PerceptronResult
        ``w=None``; ``alpha`` = updates per sample times ``eta``; ``b``; ``X_train``,
        ``y_train`` and ``kernel`` so that ``decision_function`` evaluates
        ``f(x) = sum_i alpha_i y_i K(x_i, x) + b``; ``history`` as for ``perceptron``
        (``"mistakes"`` per pass, ``"updates"``: the first updated sample indices).
        ``status="max_iter"`` comes with a ``ConvergenceWarning``.

    Raises
    ------
    ValueError
        On invalid data, kernel or options (before any work).
    """
    kernel, X = precomputed(kernel, X)  # "precomputed": the Gram matrix and indices
    X, y = check_Xy(X, y, points=own_points(kernel))
    kern = make_kernel(kernel, gamma=gamma, degree=degree, coef0=coef0, X=X)
    opts = _check_options(eta, max_epochs, bias, order, seed)
    cache = _ColumnCache(kern, X, check_nonnegative(cache_size, "cache_size"))
    n = X.shape[0]
    g = np.zeros(n)  # g_j = sum_k alpha_k y_k K(x_k, x_j), the decision values without b
    state = _RunState.empty(n, opts)

    def one_pass(visit: np.ndarray) -> int:
        mistakes = 0
        p = _next_mistake(g, state.b, y, visit, 0)
        while p < n:
            k = int(visit[p])
            step = opts.eta * y[k]
            np.add(g, step * cache[k], out=g)  # g += eta y_k K(X, x_k): alpha_k <- alpha_k + eta
            if opts.bias:
                state.b += step  # b <- b + eta y_k
            state.counts[k] += 1.0
            if state.n_updates < state.updates.shape[0]:
                state.updates[state.n_updates] = k
            state.n_updates += 1
            mistakes += 1
            p = _next_mistake(g, state.b, y, visit, p + 1)
        return mistakes

    return _train(X, y, opts, state, one_pass, w=None, kernel=kern, method="kernel_perceptron")
