"""Warnings raised by maxmargin."""

from __future__ import annotations

__all__ = ["ConvergenceWarning"]


class ConvergenceWarning(UserWarning):
    """An iterative method stopped at its iteration cap before meeting its tolerance.

    The result is still returned, with ``status="max_iter"`` (or ``converged=False``).
    """
