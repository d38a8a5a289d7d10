"""Warnings raised by maxmargin.

:class:`ConvergenceWarning` subclasses scikit-learn's ``sklearn.exceptions.ConvergenceWarning``,
so one filter or ``pytest.warns`` catches both. Importing scikit-learn costs more than the whole
of ``import maxmargin`` (it pulls in ``scipy.stats``), so the class is made on first access
(:pep:`562`): the core refers to it as ``exceptions.ConvergenceWarning`` where it warns, and
``import maxmargin`` does not import scikit-learn.
"""

from __future__ import annotations

__all__ = ["ConvergenceWarning"]  # noqa: F822 (made on first access, below)


def _make_convergence_warning() -> type:
    """The class, built once: a subclass of scikit-learn's ``ConvergenceWarning`` (itself a
    ``UserWarning``)."""
    from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning

    class ConvergenceWarning(SklearnConvergenceWarning):
        """An iterative method stopped at its iteration cap before meeting its tolerance.

        The result is still returned, with ``status="max_iter"`` (or ``converged=False``).
        A subclass of scikit-learn's ``ConvergenceWarning``.
        """

    ConvergenceWarning.__module__ = __name__
    ConvergenceWarning.__qualname__ = "ConvergenceWarning"
    return ConvergenceWarning


def __getattr__(name: str) -> type:
    if name == "ConvergenceWarning":
        cls = _make_convergence_warning()
        globals()["ConvergenceWarning"] = cls  # later lookups find it without this hook
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
