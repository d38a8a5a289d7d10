r"""The judge of Crammer and Singer's multi-class SVM (LIBLINEAR's ``-s 4``, scikit-learn's
``LinearSVC(multi_class="crammer_singer")``), in float64.

With ``K`` classes, the rows ``x_i`` (the bias column ``s = intercept_scaling`` appended when an
intercept is fitted, its weight regularised like the others), the class index ``y_i`` and the
per-sample bounds ``C_i``, the primal problem over ``W = (w_1, ..., w_K)`` is

.. math::

    P(W) = \tfrac12 \sum_m \|w_m\|^2
           + \sum_i C_i \max_m \big(e_i^m + (w_m - w_{y_i}) \cdot x_i\big),
    \qquad e_i^m = [m \ne y_i].

Its Lagrangian dual, over ``lambda_i^m >= 0`` with ``sum_m lambda_i^m = C_i`` (the multipliers of
``xi_i >= e_i^m + (w_m - w_{y_i}) . x_i``), is

.. math::

    D(\lambda) = \sum_{i, m} \lambda_i^m e_i^m - \tfrac12 \sum_m \|w_m(\lambda)\|^2, \qquad
    w_m(\lambda) = \sum_{i : y_i = m} C_i x_i - \sum_i \lambda_i^m x_i,

so ``D(lambda) <= P(W')`` for every ``W'`` (weak duality); LIBLINEAR's dual variables are
``alpha_i^m = C_i [m = y_i] - lambda_i^m``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from maxmargin.certificate import Certificate, relative_gap, rows_dot, rows_tdot

__all__ = ["certify_crammer_singer", "crammer_singer_objective"]


def _scores(W: np.ndarray, X: Any, s: float | None = None) -> np.ndarray:
    """``S[i, m] = w_m . x_i`` (dense or sparse rows; the bias column ``s`` implied when not
    None: :func:`~maxmargin.certificate.rows_dot`)."""
    return rows_dot(X, W.T, s)


def _excess(S: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``e_i^m + (w_m - w_{y_i}) . x_i`` for every ``(i, m)``."""
    n = S.shape[0]
    E = S - S[np.arange(n), y][:, None] + 1.0
    E[np.arange(n), y] = 0.0
    return E


def crammer_singer_objective(W: np.ndarray, X: Any, y: np.ndarray, C: np.ndarray) -> float:
    """``P(W)`` (module docstring)."""
    E = _excess(_scores(W, X), y)
    return 0.5 * float(np.sum(W * W)) + float(C @ np.max(E, axis=1))


def _project_rows(lam: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Each row of ``lam`` projected (Euclidean) onto ``{l >= 0, sum l = C_i}``."""
    n, K = lam.shape
    u = -np.sort(-lam, axis=1)
    css = np.cumsum(u, axis=1) - C[:, None]
    ks = np.arange(1, K + 1)
    cond = u - css / ks > 0
    rho = K - 1 - np.argmax(cond[:, ::-1], axis=1)
    theta = css[np.arange(n), rho] / (rho + 1)
    return np.maximum(lam - theta[:, None], 0.0)


def _dual(lam: np.ndarray, X: Any, s: float | None, y: np.ndarray, C: np.ndarray
          ) -> tuple[float, np.ndarray]:
    """``D(lambda)`` and ``W(lambda)`` (module docstring)."""
    A = -lam.copy()
    A[np.arange(lam.shape[0]), y] += C
    W = rows_tdot(X, A, s).T  # (K, p): w_m = sum_i A[i, m] x_i
    e_sum = float(np.sum(lam) - np.sum(lam[np.arange(lam.shape[0]), y]))
    return e_sum - 0.5 * float(np.sum(W * W)), W


def certify_crammer_singer(
    W: np.ndarray, X: Any, y: np.ndarray, C: np.ndarray, *, lam: np.ndarray | None = None,
    intercept_scaling: float | None = None,
) -> Certificate:
    """The :class:`~maxmargin.certificate.Certificate` of ``W`` (``(K, p)``) in Crammer and
    Singer's problem (module docstring): the ``p`` columns of the rows are ``X``'s and, when
    ``intercept_scaling`` is given, the bias column it implies (never formed), else ``X``'s
    alone (e.g. :func:`~maxmargin.certificate.liblinear_rows`); ``y`` class indices in
    ``0..K-1``, ``C`` the per-sample bounds.

    Dual points tried (each projected onto ``{lambda_i >= 0, sum_m lambda_i^m = C_i}``):
    ``lam`` when given (e.g. a solver's constraint duals); the KKT map of ``W``, ``C_i`` shared
    equally among the classes ``m`` whose ``e_i^m + (w_m - w_{y_i}) . x_i`` is within
    ``tau`` of the row's maximum, for ``tau`` in ``(0, 1e-9, 1e-6, 1e-3)`` times the largest
    ``|w . x|``. ``dual_objective`` is the best ``D``; ``gap = (P - D) / max(|P|, tiny)``.
    Without ``lam`` the bound is loose (a ``W`` that is optimal to 1e-5 may show a gap of
    order 1); a solver's own duals give the tight one.
    ``kkt_violation`` is the stationarity residual of that point, ``max_{i,m} |(w_m -
    w_m(lambda)) . x_i|`` (units of the scores); ``b`` is NaN (the biases are inside ``W``).
    """
    W = np.asarray(W, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    C = np.asarray(C, dtype=np.float64)
    sc = None if intercept_scaling is None else float(intercept_scaling)
    if W.shape[1] != X.shape[1] + (sc is not None):
        raise ValueError(f"`W` must have one column per column of `X`"
                         f"{' and one for the bias' if sc is not None else ''}; got "
                         f"{W.shape[1]} for {X.shape[1]} columns.")
    S = _scores(W, X, sc)
    E = _excess(S, y)
    top = np.max(E, axis=1)
    primal = 0.5 * float(np.sum(W * W)) + float(C @ top)
    scale = max(1.0, float(np.max(np.abs(S))) if S.size else 1.0)
    candidates = [] if lam is None else [np.asarray(lam, dtype=np.float64)]
    for tau in (0.0, 1e-9, 1e-6, 1e-3):
        near = E >= top[:, None] - tau * scale
        candidates.append(C[:, None] * near / near.sum(axis=1, keepdims=True))
    best, best_W = -math.inf, W
    for cand in candidates:
        if cand.shape != E.shape or not np.all(np.isfinite(cand)):
            continue
        dual, W_lam = _dual(_project_rows(cand, C), X, sc, y, C)
        if dual > best:
            best, best_W = dual, W_lam
    kkt = float(np.max(np.abs(_scores(W - best_W, X, sc)))) if S.size else 0.0
    return Certificate(kkt, relative_gap(primal, best), primal, best, math.nan, 0.0, math.nan)
