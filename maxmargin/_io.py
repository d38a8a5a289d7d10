"""Atomic file writes: a temporary file in the target's folder, then ``os.replace``.

An interrupted write leaves the previous complete file (or none), never half of one. Used by
every writer of results, reports and benchmark outputs.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

__all__ = ["atomic_write", "atomic_write_text"]


def atomic_write(path: str | os.PathLike[str], write: Callable[[IO[Any]], None], *,
                 binary: bool = False, mode: int = 0o644) -> None:
    """Call ``write(file)`` on a temporary file next to ``path``, then move it onto ``path``.

    ``mode`` is the permission of the result (``mkstemp`` makes 0600; outputs are meant to be
    shared).
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent if str(path.parent)
                               else ".")
    try:
        with os.fdopen(fd, "wb" if binary else "w") as fh:
            write(fh)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically (:func:`atomic_write`)."""
    atomic_write(path, lambda fh: fh.write(text))
