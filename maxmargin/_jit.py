"""Numba's on-disk cache as the algorithms see it: whether a compiled loop is in it, and a notice
when a first call is about to compile one."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from typing import Any

__all__ = ["cache_is_cold", "note_compile", "notices_off"]

_log = logging.getLogger("maxmargin")
_noted: set[str] = set()
_state = {"on": True}


@contextlib.contextmanager
def notices_off() -> Iterator[None]:
    """No first-compile notices (:func:`note_compile`) inside the block, nor in processes forked
    there (``maxmargin verify`` and ``maxmargin compile`` say it their own way)."""
    previous = _state["on"]
    _state["on"] = False
    try:
        yield
    finally:
        _state["on"] = previous


def _index_path(dispatcher: Any) -> str | None:
    """The index file Numba's cache keeps for ``dispatcher`` (``None`` if it has no cache)."""
    cache = getattr(dispatcher, "_cache", None)
    cache_file = getattr(cache, "_cache_file", None)
    return getattr(cache_file, "_index_path", None)


def cache_is_cold(dispatcher: Any) -> bool:
    """Whether Numba's on-disk cache (``NUMBA_CACHE_DIR`` when set, else the ``__pycache__``
    beside the source or the user-wide cache) has no entry yet for the compiled function
    ``dispatcher``, so that its first call in a process compiles it."""
    path = _index_path(dispatcher)
    return path is not None and not os.path.exists(path)


def note_compile(dispatcher: Any, what: str, about: str) -> None:
    """Say once per process, at WARNING on the ``maxmargin`` logger (shown on stderr when
    logging is not configured, as matplotlib's font-cache notice), that ``what`` is about to be
    compiled because the on-disk cache has no entry for ``dispatcher``; ``about`` is the time
    it takes. Nothing when it is compiled in this process already or notices are off."""
    func = getattr(dispatcher, "py_func", None)
    key = None if func is None else f"{func.__module__}.{func.__qualname__}"
    if not _state["on"] or key is None or key in _noted or getattr(dispatcher, "signatures", ()):
        return
    _noted.add(key)
    if cache_is_cold(dispatcher):
        _log.warning(
            "compiling %s into Numba's on-disk cache (first use after an install, %s); later "
            "calls and new processes load it. `maxmargin compile` does this ahead of time.",
            what, about,
        )
