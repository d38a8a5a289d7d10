"""Numba's compile flags compared in one dictionary merge: the same answers, a tenth of the time.

Numba keeps each overload's typing under a key that holds the compile flags (a
``numba.core.targetconfig.TargetConfig``); hashing and comparing that key calls the flags'
``values()``, which reads every option, about 40 of them, through a property each, three times
per look-up. A first ``smo`` call makes about 27,000 such look-ups: 1.3 s of its 14.5 s of
compile on this machine (``docs/development/performance-notes.md``, "Compile time").

:func:`install` replaces ``TargetConfig.values`` with the same dictionary built at once: the
options' defaults (read once per class) updated by the values set (``_values``, which the
options' setters fill). It installs it only if this Numba's flags are built that way -- every
option a property whose getter reads ``_values`` with the option's default -- checked on its
own flags classes with options set and unset; otherwise Numba's method stays. Nothing else
changes: the same keys, the same values, the same order.
"""

from __future__ import annotations

from typing import Any

from numba.core import targetconfig

__all__ = ["install", "installed"]

_original = targetconfig.TargetConfig.values
_defaults: dict[type, dict[str, Any]] = {}


def _values(self: targetconfig.TargetConfig) -> dict[str, Any]:
    """``{option: value}`` for every option of the flags' class, in the class's order."""
    cls = type(self)
    defaults = _defaults.get(cls)
    if defaults is None:
        defaults = _defaults[cls] = {k: opt.default for k, opt in cls.options.items()}
    return {**defaults, **self._values}


def _equivalent() -> bool:
    """Whether :func:`_values` gives Numba's answer on this Numba's compile flags: unset,
    with options set to other values and to their defaults, and on a copy."""
    from numba.core.compiler import Flags

    flags = Flags()
    if not isinstance(getattr(flags, "_values", None), dict):
        return False
    if _values(flags) != _original(flags):
        return False
    for name, opt in list(Flags.options.items())[::3]:
        try:
            setattr(flags, name, opt.default)
        except (TypeError, ValueError):  # an option whose type does not take its default
            continue
    flags.nrt, flags.no_cpython_wrapper, flags.boundscheck = True, True, False
    return all(_values(f) == _original(f) and list(_values(f)) == list(_original(f))
               for f in (flags, Flags(flags)))


def installed() -> bool:
    """Whether the fast ``values`` is in place."""
    return targetconfig.TargetConfig.values is _values


def install() -> bool:
    """Put :func:`_values` in place of ``TargetConfig.values`` when it is equivalent on this
    Numba (module docstring); returns :func:`installed`."""
    if not installed() and _equivalent():
        targetconfig.TargetConfig.values = _values
    return installed()
