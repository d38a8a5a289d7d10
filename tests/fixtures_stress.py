"""Problems of a symmetry stress run, rebuilt from their seeds: the draws of its generator,
kept here so that a regression test reproduces the exact data that exposed a defect."""

from __future__ import annotations

import numpy as np


def _sizes(rng: np.random.Generator) -> tuple[int, int]:
    """The run's ``(n, d)``: points and features, drawn with its weights."""
    n = int(rng.choice([3, 5, 8, 12, 20, 40, 80, 150, 250, 400],
                       p=[.04, .06, .08, .1, .14, .16, .16, .1, .08, .08]))
    d = int(rng.choice([1, 2, 3, 5, 10, 20, 50], p=[.1, .25, .2, .15, .15, .1, .05]))
    return n, d


def _labels(rng: np.random.Generator, n: int, share: float) -> np.ndarray:
    """Labels +1 with probability ``share``, the first two points one of each class."""
    y = np.where(rng.random(n) < share, 1.0, -1.0)
    y[0], y[1 % n] = 1.0, -1.0
    return y


def _separated(rng: np.random.Generator, n: int, d: int, gap: float
               ) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian points moved to at least ``gap`` from a random hyperplane through the origin,
    on their label's side."""
    X, u = rng.normal(size=(n, d)), rng.normal(size=d)
    u /= np.linalg.norm(u)
    y = _labels(rng, n, rng.uniform(0.2, 0.8))
    s = X @ u
    X += np.outer(y * gap - s, u) * (np.abs(s) < gap)[:, None]
    s = X @ u
    X += np.outer(np.where(y * s < 0, -2 * s, 0.0), u)
    return X, y


def near_coincident_copies(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Separated clouds (gap 0.3) with a tenth of the points copied 1e-12, 1e-9 or 1e-6 away,
    the copies' labels flipped or kept by a coin."""
    rng = np.random.default_rng(seed)
    n, d = _sizes(rng)
    X, y = _separated(rng, n, d, 0.3)
    k = max(1, n // 10)
    idx = rng.choice(n, size=k, replace=False)
    eps = float(rng.choice([1e-12, 1e-9, 1e-6]))
    X = np.vstack([X, X[idx] + eps * rng.normal(size=(k, d))])
    return X, np.concatenate([y, -y[idx] if rng.random() < 0.5 else y[idx]])


def mixed_scale(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Separated clouds (gap 0.3) or unlabelled noise, by a coin, each feature then scaled by
    ``10^U(-3, 5)``."""
    rng = np.random.default_rng(seed)
    n, d = _sizes(rng)
    if rng.random() < 0.5:
        X, y = _separated(rng, n, d, 0.3)
    else:
        X = rng.normal(size=(n, d))
        y = _labels(rng, n, 0.5)
    return X * 10.0 ** rng.uniform(-3, 5, size=d), y
