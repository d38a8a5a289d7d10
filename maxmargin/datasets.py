"""Small data sets shipped with maxmargin.

``heart_scale`` is LIBSVM's sample data set (270 samples, 13 features scaled to [-1, 1]),
redistributed under LIBSVM's BSD licence (``maxmargin/data/LIBSVM-COPYRIGHT``).
"""

from __future__ import annotations

from importlib import resources

import numpy as np

__all__ = ["load_svmlight_text", "load_heart_scale"]


def load_svmlight_text(text: str, n_features: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Parse LIBSVM/svmlight text (``label index:value ...``, 1-based indices) into dense X, y."""
    labels: list[float] = []
    rows: list[dict[int, float]] = []
    for line_no, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        labels.append(float(parts[0]))
        row: dict[int, float] = {}
        for token in parts[1:]:
            index, sep, value = token.partition(":")
            if not sep:
                raise ValueError(f"line {line_no}: expected `index:value`, got {token!r}.")
            if int(index) < 1:
                raise ValueError(f"line {line_no}: feature indices start at 1, got {token!r}.")
            row[int(index) - 1] = float(value)
        rows.append(row)
    width = max((max(r) + 1 for r in rows if r), default=0)
    width = max(width, n_features or 0)
    X = np.zeros((len(rows), width))
    for i, row in enumerate(rows):
        for j, v in row.items():
            X[i, j] = v
    return X, np.asarray(labels, dtype=np.float64)


def load_heart_scale() -> tuple[np.ndarray, np.ndarray]:
    """LIBSVM's ``heart_scale``: ``X`` of shape (270, 13), ``y`` in {-1, +1}."""
    text = resources.files("maxmargin").joinpath("data/heart_scale").read_text()
    return load_svmlight_text(text, n_features=13)
