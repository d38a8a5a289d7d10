"""Numba for the package: the decorator of its compiled code, whose on-disk cache is never stale
and safe for concurrent writers, the option sets of its functions, and the first-compile notice.

**The cache.** :func:`njit` is ``numba.njit`` with ``cache=True`` in the folder Numba chooses
(``NUMBA_CACHE_DIR`` when set, else the ``__pycache__`` beside the source or the user-wide
cache), with two guards (:class:`GuardedCache`):

* *Never stale.* Numba keys a cached function by its own source file only, yet its machine code
  holds every compiled function it calls: after an edit of a callee's module (an editable
  install, an upgrade that keeps some files) the cached caller would still run the old callee.
  Here each entry is stamped with :func:`source_stamp`, a hash of the sources of its module and
  of every module it imports, transitively, that holds compiled code (or the constants compiled
  code reads, :data:`CONSTANT_MODULES`), and of the package's extensions of Numba
  (:data:`EXTENSION_MODULES`); an entry with another stamp is stale, compiled again and
  overwritten.
* *One writer at a time.* Numba writes a function's index (all its specialisations) by reading
  it, adding an entry and writing it back: two processes compiling one function at once lose an
  entry, or point an entry at the other's code. Saving holds an exclusive ``flock`` on a lock
  file of the cache folder, loading a shared one.

**Options.** :data:`HELPER` is for functions that allocate nothing (no reference counting,
no C-callback wrapper; their CPython wrapper stays, so Python and the tests may call them);
:data:`ENTRY`, the same options, names the drivers Python calls; :data:`INTERNAL` is for
functions only compiled code calls (no CPython wrapper: calling one from Python crashes;
compiled link-only, :mod:`maxmargin._link_only`: IR their callers link, no machine code);
:data:`INLINE` is for small ones of those, inlined by LLVM into every caller (Numba's own
inlining copies and retypes the callee at every call site, which costs compile time; tests
call them through a compiled lambda). A CPython wrapper unboxes every array of its
arguments' tuples: for the solver's state, cache and Q-matrix it is the largest function of
a small helper's module. Drivers hand such tuples to their helpers by reference
(:func:`maxmargin._byref.byref`).

**Compile time.** Importing this module puts :mod:`maxmargin._numba_flags`' equivalent, faster
comparison of Numba's compile flags in place (a tenth of a first call's compile).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

from numba import njit as _numba_njit
from numba.core.caching import FunctionCache

from maxmargin import (
    _byref,  # noqa: F401 - registers its Numba type for all compiled code
    _numba_flags,
)
from maxmargin._link_only import LinkOnlyCompiler

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no lock (one writer at a time is then
    fcntl = None  # the user's to ensure, as with Numba's own cache)

__all__ = [
    "CONSTANT_MODULES",
    "ENTRY",
    "EXTENSION_MODULES",
    "HELPER",
    "INLINE",
    "INTERNAL",
    "GuardedCache",
    "cache_is_cold",
    "njit",
    "note_compile",
    "notices_off",
    "source_stamp",
]

#: Options of functions that compiled code calls and that allocate nothing (Python may call
#: them too: tests do).
HELPER: dict[str, Any] = {"no_cfunc_wrapper": True, "_nrt": False}
#: Options of the drivers Python calls (they allocate nothing either).
ENTRY: dict[str, Any] = HELPER
#: Options of functions only compiled code calls: no CPython wrapper either (calling one from
#: Python crashes the interpreter).
INTERNAL: dict[str, Any] = {**HELPER, "no_cpython_wrapper": True}
#: Options of small helpers that only compiled code calls and LLVM inlines into every caller.
INLINE: dict[str, Any] = {**INTERNAL, "forceinline": True}
#: Modules without compiled code whose constants compiled code reads (part of the stamp of
#: the modules that import them).
CONSTANT_MODULES = frozenset({"maxmargin.tolerances"})
#: Modules that extend Numba for the package's compiled code (types, their attributes, code
#: generation and its libraries), imported here: part of every stamp (a function compiled for a
#: :class:`~maxmargin._byref.Ref` need not import the module that defines it).
EXTENSION_MODULES = frozenset({"maxmargin._byref", "maxmargin._link_only"})
#: The name of the lock file in a cache folder.
LOCK_NAME = "maxmargin-cache.lock"

_numba_flags.install()  # Numba's flag comparisons, faster (the same answers)
_log = logging.getLogger("maxmargin")
_noted: set[str] = set()
_state = {"on": True}
_compiled_modules: set[str] = set()  # modules with functions of `njit`
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
    depend on. Computed on the first load or save of one of them (every module ``module``
    imports is imported then), once per process."""
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
def _locked(folder: str, shared: bool) -> Iterator[None]:
    """An exclusive (``shared``: shared) ``flock`` on the cache folder's lock file."""
    if fcntl is None:
        yield
        return
    os.makedirs(folder, exist_ok=True)
    fd = os.open(os.path.join(folder, LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


class GuardedCache(FunctionCache):
    """Numba's cache of one function, in Numba's folder, with entries stamped by
    :func:`source_stamp` and the cache folder locked while they are read or written."""

    def __init__(self, py_func: Callable[..., Any]) -> None:
        super().__init__(py_func)
        self._module = py_func.__module__

    def _stamped(self) -> Any:
        """The index file, stamped with the module's :func:`source_stamp`."""
        self._cache_file._source_stamp = source_stamp(self._module)
        return self._cache_file

    def is_empty(self) -> bool:
        """No fresh entry in the index (none, or all stale)."""
        index = self._stamped()
        with _locked(self._cache_path, shared=True):
            return not index._load_index()

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        self._stamped()
        with _locked(self._cache_path, shared=True):
            return super().load_overload(sig, target_context)

    def save_overload(self, sig: Any, data: Any) -> None:
        self._stamped()
        with _locked(self._cache_path, shared=False):
            super().save_overload(sig, data)


def njit(func: Callable[..., Any] | None = None, /, **options: Any) -> Any:
    """``numba.njit(**options)`` with the on-disk cache of :class:`GuardedCache` (module
    docstring); usable as ``@njit`` or ``@njit(**options)``."""
    options.pop("cache", None)

    def decorate(f: Callable[..., Any]) -> Any:
        _compiled_modules.add(f.__module__)
        if options.get("no_cpython_wrapper"):  # only compiled code calls it: IR to link
            options.setdefault("pipeline_class", LinkOnlyCompiler)
        dispatcher = _numba_njit(**options)(f)
        dispatcher._cache = GuardedCache(dispatcher.py_func)
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


def _index_path(dispatcher: Any) -> str | None:
    """The index file Numba's cache keeps for ``dispatcher`` (``None`` if it has no cache)."""
    cache = getattr(dispatcher, "_cache", None)
    cache_file = getattr(cache, "_cache_file", None)
    return getattr(cache_file, "_index_path", None)


def cache_is_cold(dispatcher: Any) -> bool:
    """Whether Numba's on-disk cache (``NUMBA_CACHE_DIR`` when set, else the ``__pycache__``
    beside the source or the user-wide cache) has no entry yet for the compiled function
    ``dispatcher`` (for :func:`njit`'s functions: no fresh one), so that its first call in a
    process compiles it."""
    cache = getattr(dispatcher, "_cache", None)
    if isinstance(cache, GuardedCache):
        return cache.is_empty()
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
