"""The cross-checks' tolerance presets (defined in :mod:`maxmargin.tolerances`, re-exported)."""

from maxmargin.tolerances import (
    LOOSE,
    MEDIUM,
    ORACLE,
    PRESETS,
    TIGHT,
    Tolerances,
    get_tolerances,
    preset_for,
)

__all__ = ["Tolerances", "TIGHT", "MEDIUM", "LOOSE", "ORACLE", "PRESETS", "get_tolerances",
           "preset_for"]
