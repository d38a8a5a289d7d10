"""Numba for the package, through its public API: the decorator of its compiled code, whose
on-disk cache is never stale, the option sets of its functions, and the first-compile notice.

**The cache.** :func:`njit` is ``numba.njit(cache=True, **options)``: Numba keeps each
function's machine code in its cache folder (``NUMBA_CACHE_DIR`` when set, else the
``__pycache__`` beside the source or the user-wide cache). Numba keys an entry by its own
source file only, yet its machine code holds every compiled function it calls: after an edit
of a callee's module (an editable install, an upgrade that keeps some files) the cached caller
would still run the old callee. So, when a module's first function is decorated, its
:func:`source_stamp` -- a hash of the sources of the module and of every module it imports,
transitively, that holds compiled code (or the constants compiled code reads,
:data:`CONSTANT_MODULES`), and of the package's extensions of Numba
(:data:`EXTENSION_MODULES`) -- is compared with the one stored beside the module's entries in
that folder (``<module>.maxmargin-stamp``); when they differ, the module's index and data files
(``<module>.*.nbi``, ``.nbc``) are deleted and the new stamp is written, under an exclusive
``flock`` of the folder's lock file (:data:`LOCK_NAME`), so that processes importing the
package at once clear it once. Numba's global configuration is left as it was.

**Options.** The package's functions take Numba's documented options only; :data:`HELPER`,
:data:`ENTRY`, :data:`INTERNAL` and :data:`INLINE` name their roles (functions compiled code
calls, drivers Python calls, functions only compiled code calls, small ones of those) and are
Numba's defaults: every function is an ordinary dispatcher, which Python may call, and LLVM
inlines small callees into their callers by its own measure. Drivers hand the tuples of the
solver's state, cache and Q-matrix to their helpers by reference
(:func:`maxmargin._byref.byref`), one pointer instead of every array's fields.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import logging
import os
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numba

from maxmargin import _byref  # noqa: F401 - registers its Numba type for all compiled code

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no lock (one clearing process at a time
    fcntl = None  # is then the user's to ensure)

__all__ = [
    "CONSTANT_MODULES",
    "ENTRY",
    "EXTENSION_MODULES",
    "HELPER",
    "INLINE",
    "INTERNAL",
    "LOCK_NAME",
    "cache_is_cold",
    "njit",
    "note_compile",
    "notices_off",
    "source_stamp",
]

#: Options of functions that compiled code calls.
HELPER: dict[str, Any] = {}
#: Options of the drivers Python calls.
ENTRY: dict[str, Any] = HELPER
#: Options of functions only compiled code calls.
INTERNAL: dict[str, Any] = HELPER
#: Options of small helpers that only compiled code calls (LLVM inlines them by its measure).
INLINE: dict[str, Any] = HELPER
#: Modules without compiled code whose constants compiled code reads (part of the stamp of
#: the modules that import them).
CONSTANT_MODULES = frozenset({"maxmargin.tolerances"})
#: Modules that extend Numba for the package's compiled code (types, their attributes and code
#: generation): part of every stamp (a function compiled for a :class:`~maxmargin._byref.Ref`
#: need not import the module that defines it).
EXTENSION_MODULES = frozenset({"maxmargin._byref"})
#: The name of the lock file in a cache folder.
LOCK_NAME = "maxmargin-cache.lock"
#: The suffix of a module's stamp file in a cache folder.
STAMP_SUFFIX = ".maxmargin-stamp"

_log = logging.getLogger("maxmargin")
_noted: set[str] = set()
_state = {"on": True}
_compiled_modules: set[str] = set()  # modules with functions of `njit`
_checked_modules: set[str] = set()  # modules whose cache folder was checked in this process
_stamps: dict[str, str] = {}
_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)|import[ \t]+([\w.]+))",
    re.MULTILINE,
)


def _imports(name: str, source: str) -> set[str]:
    """The modules of ``name``'s top-level package that ``source`` imports: ``X`` of ``import
    X`` and ``from X import a`` (the package itself only through its submodules: its
    ``__init__`` re-exports no compiled code), and ``X.a`` when that is a module."""
    top = name.split(".")[0]
    found = set()
    for frm, names, plain in _IMPORT.findall(source):
        module = frm or plain
        if module != top and not module.startswith(top + "."):
            continue
        if module != top:
            found.add(module)
        for item in names.strip("()").replace("\n", " ").split(","):
            sub = f"{module}.{item.split(' as ')[0].strip()}"
            if sub in sys.modules:
                found.add(sub)
    return found


def _source(name: str) -> bytes | None:
    """The source bytes of the imported module ``name`` (None if it is not imported or has
    no source file)."""
    path = getattr(sys.modules.get(name), "__file__", None)
    if not path or not path.endswith(".py"):
        return None
    with open(path, "rb") as fh:
        return fh.read()


def source_stamp(module: str) -> str:
    """A hash of the sources of ``module``, of every module it imports, transitively, that
    holds compiled code (:func:`njit`) or is in :data:`CONSTANT_MODULES`, and of the
    :data:`EXTENSION_MODULES`: what the machine code of ``module``'s compiled functions can
    depend on. Computed when ``module``'s first function is decorated (its imports are done
    then), once per process."""
    stamp = _stamps.get(module)
    if stamp is not None:
        return stamp
    seen, todo, digest = {module}, [module], hashlib.sha256()
    sources: dict[str, bytes] = {}
    while todo:
        name = todo.pop()
        source = _source(name)
        if source is None:
            continue
        sources[name] = source
        for other in _imports(name, source.decode("utf-8", "replace")) - seen:
            seen.add(other)
            todo.append(other)
    for name in EXTENSION_MODULES - seen:
        source = _source(name)
        if source is not None:
            sources[name] = source
    for name in sorted(sources):
        if (name == module or name in _compiled_modules or name in CONSTANT_MODULES
                or name in EXTENSION_MODULES):
            digest.update(name.encode() + b"\0" + hashlib.sha256(sources[name]).digest())
    _stamps[module] = stamp = digest.hexdigest()
    return stamp


@contextlib.contextmanager
def _locked(folder: str) -> Iterator[None]:
    """An exclusive ``flock`` on the cache folder's lock file."""
    if fcntl is None:  # pragma: no cover - not POSIX
        yield
        return
    fd = os.open(os.path.join(folder, LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _stem(func: Callable[..., Any]) -> str:
    """The name of ``func``'s source file without ``.py``: how Numba's file names begin."""
    return os.path.splitext(os.path.basename(func.__code__.co_filename))[0]


def _read(path: str) -> str | None:
    """The text of the file ``path`` (None if it cannot be read)."""
    try:
        with open(path, encoding="ascii") as fh:
            return fh.read()
    except (OSError, ValueError):
        return None


def clear_if_stale(dispatcher: Any, module: str) -> bool:
    """Delete ``module``'s entries in ``dispatcher``'s cache folder when the stamp stored there
    is not ``module``'s :func:`source_stamp` (module docstring), then store the stamp; returns
    whether it cleared. A folder that cannot be written is left as it is (Numba then compiles
    without saving)."""
    folder = dispatcher.stats.cache_path
    if not folder:
        return False
    stem = _stem(dispatcher.py_func)
    stamp_path = os.path.join(folder, stem + STAMP_SUFFIX)
    stamp = source_stamp(module)
    if _read(stamp_path) == stamp:
        return False
    try:
        os.makedirs(folder, exist_ok=True)
        with _locked(folder):
            if _read(stamp_path) == stamp:  # another process cleared it meanwhile
                return False
            for path in glob.glob(glob.escape(os.path.join(folder, stem)) + ".*.nb[ic]"):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(path)
            tmp = f"{stamp_path}.{os.getpid()}"
            with open(tmp, "w", encoding="ascii") as fh:
                fh.write(stamp)
            os.replace(tmp, stamp_path)
    except OSError:
        return False
    return True


def njit(func: Callable[..., Any] | None = None, /, **options: Any) -> Any:
    """``numba.njit(cache=True, **options)`` whose module's entries in Numba's cache are
    cleared when stale (module docstring); usable as ``@njit`` or ``@njit(**options)``."""
    options.pop("cache", None)

    def decorate(f: Callable[..., Any]) -> Any:
        module = f.__module__
        _compiled_modules.add(module)
        dispatcher = numba.njit(cache=True, **options)(f)
        if module not in _checked_modules:
            _checked_modules.add(module)
            clear_if_stale(dispatcher, module)
        return dispatcher

    return decorate if func is None else decorate(func)


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


def cache_is_cold(dispatcher: Any) -> bool:
    """Whether Numba's on-disk cache (``NUMBA_CACHE_DIR`` when set, else the ``__pycache__``
    beside the source or the user-wide cache) has no index file yet for the compiled function
    ``dispatcher``, so that its first call in a process compiles it (False for a function
    without an on-disk cache: nothing to announce)."""
    stats = getattr(dispatcher, "stats", None)
    folder = getattr(stats, "cache_path", None)
    if not folder:
        return False
    func = dispatcher.py_func
    qualname = func.__qualname__.replace("<", "").replace(">", "")
    name = f"{_stem(func)}.{qualname}-{func.__code__.co_firstlineno}.py*.nbi"
    return not glob.glob(os.path.join(glob.escape(folder), name))


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
