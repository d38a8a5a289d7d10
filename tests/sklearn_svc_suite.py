"""scikit-learn's own SVC tests, run with MaxMarginClassifier in SVC's place.

The installed scikit-learn ships its SVM tests (``sklearn/svm/tests/test_svm.py`` and
``test_sparse.py``). :func:`write_adapted` copies them with one change of substance: every
``svm.SVC`` becomes ``MaxMarginClassifier`` (and the class name in the two messages that quote
it), so they follow the installed scikit-learn's version. This module is also the pytest plugin
(``-p sklearn_svc_suite``) that keeps, of the adapted files, the tests that concern the estimator:
those whose code names ``MaxMarginClassifier`` or that take it as a parameter, without a
parameter that is another scikit-learn estimator (NuSVC, SVR, LinearSVC, OneClassSVM: estimators
maxmargin does not offer); the others are deselected.

:data:`EXCEPTIONS` lists, with the reason, the tests expected to fail: those that read or write
SVC's private attributes. ``tests/test_sklearn_svc_suite.py`` runs the adapted files in a
subprocess (scikit-learn's own ``conftest`` loaded as a plugin, for its fixtures) and asserts that
every other kept test passes. By hand::

    python tests/sklearn_svc_suite.py OUTDIR   # writes the files, prints the pytest command
"""

from __future__ import annotations

import ast
import inspect
import sys
from pathlib import Path

import sklearn
from sklearn.base import BaseEstimator

from maxmargin import MaxMarginClassifier

NAME = "MaxMarginClassifier"
#: The files of ``sklearn/svm/tests`` that are adapted.
FILES = ("test_svm.py", "test_sparse.py")
#: The substitutions, in order: the class, then the class name in the two expected messages.
SUBSTITUTIONS = (
    ("svm.SVC", NAME),
    ("cannot use sparse input in 'SVC' trained on dense data",
     f"cannot use sparse input in '{NAME}' trained on dense data"),
    (r".*\bSVC\b.*\bnot\b.*\bfitted\b", rf".*\b{NAME}\b.*\bnot\b.*\bfitted\b"),
)
IMPORT = f"\nfrom maxmargin import {NAME}  # the adaptation\n"

PRIVATE = "reads or writes SVC's private attribute {} (LIBSVM's internal representation)"
#: ``file::test`` (every parametrization) -> why it is expected to fail.
EXCEPTIONS = {
    "test_svm.py::test_tweak_params": PRIVATE.format("`_dual_coef_`"),
    "test_svm.py::test_gamma_scale": PRIVATE.format("`_gamma`"),
    "test_svm.py::test_svc_raises_error_internal_representation": PRIVATE.format("`_n_support`"),
}


def source_dir() -> Path:
    """The installed scikit-learn's SVM tests."""
    return Path(sklearn.__file__).parent / "svm" / "tests"


def adapt(source: str) -> str:
    """One test file with MaxMarginClassifier in SVC's place (its import added after the
    module's last top-level import)."""
    for old, new in SUBSTITUTIONS:
        source = source.replace(old, new)
    imports = [node for node in ast.parse(source).body
               if isinstance(node, ast.Import | ast.ImportFrom)]
    lines = source.splitlines(keepends=True)
    end = imports[-1].end_lineno if imports else 0
    return "".join(lines[:end]) + IMPORT + "".join(lines[end:])


def write_adapted(out: Path) -> list[Path]:
    """Write the adapted files and an empty ``pytest.ini`` (so the project's pytest settings
    do not apply) into ``out``; returns the test files."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "pytest.ini").write_text("[pytest]\n")
    paths = []
    for name in FILES:
        path = out / name
        path.write_text(adapt((source_dir() / name).read_text()))
        paths.append(path)
    return paths


def run_command(out: Path, junit: Path | None = None) -> list[str]:
    """The command that runs the adapted files of ``out`` (from any working directory, with this
    module's folder on ``PYTHONPATH``)."""
    cmd = [sys.executable, "-m", "pytest", str(out), "-c", str(out / "pytest.ini"),
           "--rootdir", str(out), "-p", "sklearn.conftest", "-p", "sklearn_svc_suite",
           "-p", "no:cacheprovider", "-q", "-W", "ignore::pytest.PytestUnknownMarkWarning"]
    return cmd + ([f"--junitxml={junit}"] if junit is not None else [])


def _is_ours(value: object) -> bool:
    return value is MaxMarginClassifier or isinstance(value, MaxMarginClassifier)


def _is_other_estimator(value: object) -> bool:
    cls = value if isinstance(value, type) else type(value)
    return issubclass(cls, BaseEstimator) and not _is_ours(value)


def concerns_the_estimator(item: object) -> bool:
    """Whether a collected test exercises MaxMarginClassifier (see the module docstring)."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    if any(_is_other_estimator(v) for v in params.values()):
        return False
    function = getattr(item, "function", None)
    named = function is not None and NAME in inspect.getsource(function)
    return named or any(_is_ours(v) for v in params.values())


def pytest_collection_modifyitems(config, items) -> None:  # noqa: ANN001 (pytest hook)
    aside = [item for item in items if not concerns_the_estimator(item)]
    if aside:
        config.hook.pytest_deselected(items=aside)
        items[:] = [item for item in items if concerns_the_estimator(item)]


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "sklearn_svc_suite")
    write_adapted(target)
    print(f"PYTHONPATH={Path(__file__).parent} " + " ".join(run_command(target)))
