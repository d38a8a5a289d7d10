"""Data sets: the one shipped with maxmargin, and a user's own files.

``heart_scale`` is LIBSVM's sample data set (270 samples, 13 features scaled to [-1, 1]),
redistributed under LIBSVM's BSD licence (``maxmargin/data/LIBSVM-COPYRIGHT``).

:func:`load_data` reads a labelled data set from a file: LIBSVM/svmlight text (scikit-learn's
``load_svmlight_file``; zero- or one-based feature indices detected), CSV (the label in one
column, named or numbered), or NumPy ``.npz`` (arrays ``X`` and ``y``). :func:`binary_problems`
turns any labels into the -1/+1 problems maxmargin solves: the two classes of a binary file, one
problem per pair of classes (one-vs-one, as LIBSVM), or one chosen class against the rest.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from maxmargin._validation import check_array

__all__ = [
    "BinaryProblem",
    "FORMATS",
    "MAX_CLASSES",
    "binary_problems",
    "load_data",
    "load_heart_scale",
]

FORMATS = ("svmlight", "csv", "npz")
#: More distinct labels than this are refused by :func:`binary_problems` (one-vs-one would make
#: over a thousand problems; such labels are usually continuous targets).
MAX_CLASSES = 50


def load_heart_scale() -> tuple[np.ndarray, np.ndarray]:
    """LIBSVM's ``heart_scale``: ``X`` of shape (270, 13), ``y`` in {-1, +1}."""
    from sklearn.datasets import load_svmlight_file

    path = resources.files("maxmargin").joinpath("data/heart_scale")
    with resources.as_file(path) as file:
        X, y = load_svmlight_file(str(file), n_features=13)
    return X.toarray(), np.asarray(y, dtype=np.float64)


def _format_of(path: Path, fmt: str | None) -> str:
    if fmt is not None:
        if fmt not in FORMATS:
            raise ValueError(f"`format` must be one of {FORMATS}; got {fmt!r}.")
        return fmt
    suffix = path.suffix.lower()
    if suffix == ".npz":
        return "npz"
    if suffix in (".csv", ".tsv"):
        return "csv"
    return "svmlight"  # .svm, .libsvm, .svmlight, .dat, .txt, no suffix: LIBSVM's own habit


def load_data(
    path: str | Path, *, label_column: str | int | None = None, fmt: str | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """A labelled data set ``(X, labels)`` from a file.

    ``X`` is float64 ``(n, d)``: dense for CSV and ``.npz``, scipy.sparse CSR for LIBSVM/svmlight
    files (kept sparse end to end: memory of the order of the file).

    Parameters
    ----------
    path : str or Path
        ``.npz`` (arrays ``X`` and ``y``), ``.csv``/``.tsv`` (a header row is detected by a
        non-numeric first line), anything else LIBSVM/svmlight text.
    label_column : str or int, optional
        CSV: the label column, by header name or 0-based index (default: the last column).
    fmt : {"svmlight", "csv", "npz"}, optional
        Overrides the guess from the file name.

    Returns
    -------
    X : (n, d) float64 array or CSR matrix
    labels : (n,) array of the file's labels (numbers or strings, unmapped)
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"`path` {str(path)!r} is not a readable file.")
    kind = _format_of(path, fmt)
    try:
        if kind == "npz":
            X, labels = _load_npz(path)
        elif kind == "csv":
            X, labels = _load_csv(path, label_column)
        else:
            from sklearn.datasets import load_svmlight_file

            X, labels = load_svmlight_file(str(path), zero_based="auto")  # CSR, kept sparse
    except (OSError, UnicodeDecodeError, KeyError) as exc:
        raise ValueError(f"`path` {str(path)!r} could not be read as {kind}: {exc}") from None
    except ValueError as exc:
        if str(exc).startswith("`"):
            raise
        raise ValueError(f"`path` {str(path)!r} could not be read as {kind}: {exc}") from None
    X = check_array(X, "X", ndim=2, sparse=True)
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.shape[0] != X.shape[0]:
        raise ValueError(
            f"`path` {str(path)!r}: the labels must be one per row of X; got shape "
            f"{labels.shape} for {X.shape[0]} rows."
        )
    return X, labels


def _load_npz(path: Path) -> tuple[np.ndarray, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        missing = [k for k in ("X", "y") if k not in data.files]
        if missing:
            raise ValueError(
                f"`path` {str(path)!r} must hold arrays 'X' and 'y'; missing {missing} "
                f"(found {data.files})."
            )
        return np.array(data["X"]), np.array(data["y"])


def _load_csv(path: Path, label_column: str | int | None) -> tuple[np.ndarray, np.ndarray]:
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    with path.open(newline="") as fh:
        rows = [r for r in csv.reader(fh, delimiter=delimiter) if r and any(c.strip() for c in r)]
    if not rows:
        raise ValueError(f"`path` {str(path)!r} holds no rows.")
    header = [c.strip() for c in rows[0]] if _is_header(rows, label_column) else None
    body = rows[1:] if header is not None else rows
    width = len(rows[0])
    if any(len(r) != width for r in body):
        raise ValueError(f"`path` {str(path)!r}: every row must have {width} columns.")
    col = _label_index(label_column, header, width)
    labels = np.array([r[col].strip() for r in body])
    features = [[c for k, c in enumerate(r) if k != col] for r in body]
    try:
        X = np.array(features, dtype=np.float64)
    except ValueError as exc:
        raise ValueError(
            f"`path` {str(path)!r}: every column but the label must be numeric ({exc})."
        ) from None
    return X, _as_numbers(labels)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _is_header(rows: list[list[str]], label_column: str | int | None) -> bool:
    """Whether the first row names the columns: it holds ``label_column`` when that is a name,
    or a cell that is not a number where the next row's cell is one (a label column of text
    does not make a header by itself)."""
    first = [c.strip() for c in rows[0]]
    if isinstance(label_column, str) and not _is_index(label_column) and label_column in first:
        return True
    if len(rows) == 1:
        return not all(_is_number(c) for c in first[:-1])
    second = [c.strip() for c in rows[1]]
    return any(not _is_number(a) and _is_number(b) for a, b in zip(first, second, strict=False))


def _is_index(text: str) -> bool:
    """A column given by number (``"4"``, ``"-1"``) rather than by name."""
    return text.lstrip("-").isdigit()


def _label_index(label_column: str | int | None, header: list[str] | None, width: int) -> int:
    if label_column is None:
        return width - 1
    if isinstance(label_column, str) and not (_is_index(label_column) and (
            header is None or label_column not in header)):
        if header is None:
            raise ValueError(
                f"`label_column` {label_column!r} names a column, but the file has no header row "
                f"(its first row is data); give the column's 0-based index instead."
            )
        if label_column not in header:
            raise ValueError(
                f"`label_column` {label_column!r} is not a column of the header {header}."
            )
        return header.index(label_column)
    index = int(label_column)
    if not -width <= index < width:
        raise ValueError(f"`label_column` must be in [0, {width}); got {index}.")
    return index % width


def _as_numbers(labels: np.ndarray) -> np.ndarray:
    """Labels as float when every one is a number, else the strings."""
    try:
        return labels.astype(np.float64)
    except ValueError:
        return labels


@dataclass(frozen=True)
class BinaryProblem:
    """A -1/+1 problem taken from labelled data: rows ``index`` of ``X`` with ``y`` in -1/+1;
    ``positive`` and ``negative`` name the original labels mapped to +1 and -1."""

    name: str
    index: np.ndarray
    y: np.ndarray
    positive: Any
    negative: Any

    def describe(self) -> str:
        pos, neg = (x.item() if isinstance(x, np.generic) else x
                    for x in (self.positive, self.negative))
        return f"+1 = {pos!r}, -1 = {neg!r} ({self.index.size} samples)"


def binary_problems(labels: Any, positive: Any = None) -> list[BinaryProblem]:
    """The binary problems of a labelled data set.

    Two classes: one problem, ``+1`` for the class that sorts last (so -1/+1 and 0/1 files keep
    their meaning). More classes: one problem per pair ``(a, b)`` of classes (``a < b``,
    ``+1 = a``, LIBSVM's one-vs-one), or with ``positive`` one problem ``positive`` (+1) against
    the rest (-1). ``positive`` is matched against the labels as given or as their text. More
    than :data:`MAX_CLASSES` classes without ``positive`` are refused (``ValueError`` with the
    count and the remedy).
    """
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.size == 0:
        raise ValueError(f"`labels` must be a non-empty 1-D array; got shape {labels.shape}.")
    classes = np.unique(labels)
    if classes.size < 2:
        raise ValueError(f"`labels` must hold at least two classes; got only {classes[0]!r}.")
    if positive is None and classes.size > MAX_CLASSES:
        shown = ", ".join(f"{c:.4g}" if isinstance(c, float | np.floating) else str(_tag(c))
                          for c in classes[:4])
        continuous = labels.dtype.kind == "f" and not np.all(np.mod(classes, 1.0) == 0.0)
        raise ValueError(
            f"`labels` hold {classes.size} distinct values ({shown}, ...)"
            + (", not whole numbers: continuous targets, not classes" if continuous else "")
            + f"; one-vs-one would make {classes.size * (classes.size - 1) // 2} binary "
            f"problems (at most {MAX_CLASSES} classes are taken). Give class labels, or one "
            "class against the rest (--positive LABEL)."
        )
    if positive is not None:
        match = [c for c in classes if c == positive or str(c) == str(positive)
                 or _same_number(c, positive)]
        if not match:
            raise ValueError(
                f"`positive` {positive!r} is not one of the labels {classes.tolist()[:10]}."
            )
        pos = match[0]
        y = np.where(labels == pos, 1.0, -1.0)
        return [BinaryProblem(f"{_tag(pos)}_vs_rest", np.arange(labels.size), y, pos, "rest")]
    if classes.size == 2:
        neg, pos = classes
        y = np.where(labels == pos, 1.0, -1.0)
        return [BinaryProblem(f"{_tag(pos)}_vs_{_tag(neg)}", np.arange(labels.size), y, pos, neg)]
    out = []
    for i, a in enumerate(classes):
        for b in classes[i + 1 :]:
            index = np.flatnonzero((labels == a) | (labels == b))
            y = np.where(labels[index] == a, 1.0, -1.0)
            out.append(BinaryProblem(f"{_tag(a)}_vs_{_tag(b)}", index, y, a, b))
    return out


def _same_number(a: Any, b: Any) -> bool:
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return False


def _tag(label: Any) -> str:
    """A label as a short name fragment (``1.0`` -> ``1``)."""
    if isinstance(label, float | np.floating) and float(label).is_integer():
        return str(int(label))
    return str(label).replace(" ", "_")
