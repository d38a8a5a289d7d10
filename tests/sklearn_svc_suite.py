"""scikit-learn's own SVM tests, run with maxmargin's estimators in their peers' places.

The installed scikit-learn ships its SVM tests (``sklearn/svm/tests/test_svm.py`` and
``test_sparse.py``). :func:`write_adapted` copies them with one change of substance, per
:data:`ADAPTATIONS`: every ``svm.SVC`` becomes ``MaxMarginClassifier`` (and the class name in the
two messages that quote it), or every ``LinearSVC`` becomes ``MaxMarginLinearClassifier``, or
every ``NuSVC`` and ``OneClassSVM`` become ``MaxMarginNuClassifier`` and ``MaxMarginOneClass``,
so they follow the installed scikit-learn's version. This module is also the pytest plugin (``-p
sklearn_svc_suite``, the adaptation named by the environment variable :data:`ENV`) that keeps,
of the adapted files, the tests that concern the estimators: those whose code names one or that
take one as a parameter, without a parameter that is another scikit-learn estimator (those
maxmargin does not offer); the others are deselected.

Each adaptation's ``exceptions`` lists, with the reason, the tests expected to fail: those that
read or write the peer's private attributes. ``tests/test_sklearn_svc_suite.py``,
``tests/test_sklearn_linearsvc_suite.py`` and ``tests/test_sklearn_nu_suite.py`` run the adapted
files in a subprocess (scikit-learn's own ``conftest`` loaded as a plugin, for its fixtures) and
assert that every other kept test passes. By hand::

    python tests/sklearn_svc_suite.py OUTDIR [svc|linearsvc|nu]  # writes them, prints the command
"""

from __future__ import annotations

import ast
import inspect
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sklearn
from sklearn.base import BaseEstimator

from maxmargin import (
    MaxMarginClassifier,
    MaxMarginLinearClassifier,
    MaxMarginNuClassifier,
    MaxMarginOneClass,
)

NAME = "MaxMarginClassifier"
#: The environment variable that names the plugin's adaptation (a key of ADAPTATIONS).
ENV = "MAXMARGIN_SKLEARN_SUITE"
#: The files of ``sklearn/svm/tests`` that are adapted.
FILES = ("test_svm.py", "test_sparse.py")
#: The substitutions, in order: the class, then the class name in the two expected messages.
SUBSTITUTIONS = (
    ("svm.SVC", NAME),
    ("cannot use sparse input in 'SVC' trained on dense data",
     f"cannot use sparse input in '{NAME}' trained on dense data"),
    (r".*\bSVC\b.*\bnot\b.*\bfitted\b", rf".*\b{NAME}\b.*\bnot\b.*\bfitted\b"),
)

PRIVATE = "reads or writes SVC's private attribute {} (LIBSVM's internal representation)"
#: ``file::test`` (every parametrization) -> why it is expected to fail.
EXCEPTIONS = {
    "test_svm.py::test_tweak_params": PRIVATE.format("`_dual_coef_`"),
    "test_svm.py::test_gamma_scale": PRIVATE.format("`_gamma`"),
    "test_svm.py::test_svc_raises_error_internal_representation": PRIVATE.format("`_n_support`"),
}


@dataclass(frozen=True)
class Adaptation:
    """One adaptation of the files: the estimators' names and classes (in the same order), the
    substitutions in order, and the tests expected to fail (``file::test`` -> why)."""

    names: tuple[str, ...]
    classes: tuple[type, ...]
    substitutions: tuple[tuple[str, str], ...]
    exceptions: dict[str, str]


LINEAR = "MaxMarginLinearClassifier"
NU, ONE_CLASS = "MaxMarginNuClassifier", "MaxMarginOneClass"
ADAPTATIONS = {
    "svc": Adaptation((NAME,), (MaxMarginClassifier,), SUBSTITUTIONS, EXCEPTIONS),
    "linearsvc": Adaptation(
        (LINEAR,), (MaxMarginLinearClassifier,),
        (("svm.LinearSVC", LINEAR), ("(LinearSVC, {", f"({LINEAR}, {{")),
        {"test_svm.py::test_linear_svm_convergence_warnings": (
            "asserts that LIBLINEAR cannot converge in 2 passes on a 6-point problem "
            "(max_iter=2): the primal Newton method (dual='auto', n > d) certifies it")}),
    "nu": Adaptation(
        (NU, ONE_CLASS), (MaxMarginNuClassifier, MaxMarginOneClass),
        (("svm.NuSVC", NU), ("svm.OneClassSVM", ONE_CLASS),
         ("(OneClassSVM, SVR, NuSVR)", f"({ONE_CLASS}, SVR, NuSVR)"),
         ("cannot use sparse input in 'OneClassSVM' trained on dense data",
          f"cannot use sparse input in '{ONE_CLASS}' trained on dense data")),
        {}),
}


def adaptation() -> Adaptation:
    """The adaptation the plugin applies (:data:`ENV`, default ``"svc"``)."""
    return ADAPTATIONS[os.environ.get(ENV, "svc")]


def source_dir() -> Path:
    """The installed scikit-learn's SVM tests."""
    return Path(sklearn.__file__).parent / "svm" / "tests"


def adapt(source: str, which: str = "svc") -> str:
    """One test file with the estimator of ``ADAPTATIONS[which]`` in its peer's place (its
    import added after the module's last top-level import)."""
    chosen = ADAPTATIONS[which]
    for old, new in chosen.substitutions:
        source = source.replace(old, new)
    imports = [node for node in ast.parse(source).body
               if isinstance(node, ast.Import | ast.ImportFrom)]
    lines = source.splitlines(keepends=True)
    end = imports[-1].end_lineno if imports else 0
    line = f"\nfrom maxmargin import {', '.join(chosen.names)}  # the adaptation\n"
    return "".join(lines[:end]) + line + "".join(lines[end:])


def write_adapted(out: Path, which: str = "svc") -> list[Path]:
    """Write the adapted files and an empty ``pytest.ini`` (so the project's pytest settings
    do not apply) into ``out``; returns the test files."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "pytest.ini").write_text("[pytest]\n")
    paths = []
    for name in FILES:
        path = out / name
        path.write_text(adapt((source_dir() / name).read_text(), which))
        paths.append(path)
    return paths


def run_command(out: Path, junit: Path | None = None) -> list[str]:
    """The command that runs the adapted files of ``out`` (from any working directory, with this
    module's folder on ``PYTHONPATH``)."""
    cmd = [sys.executable, "-m", "pytest", str(out), "-c", str(out / "pytest.ini"),
           "--rootdir", str(out), "-p", "sklearn.conftest", "-p", "sklearn_svc_suite",
           "-p", "no:cacheprovider", "-q", "-W", "ignore::pytest.PytestUnknownMarkWarning"]
    return cmd + ([f"--junitxml={junit}"] if junit is not None else [])


def outcomes_of(junit: Path) -> dict[str, str]:
    """``file::test[params]`` -> "passed", "failed" or "skipped", from pytest's JUnit XML."""
    import xml.etree.ElementTree as ET

    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        module = case.get("classname", "").rsplit(".", 1)[-1]
        tags = {child.tag for child in case}
        status = ("failed" if tags & {"failure", "error"} else
                  "skipped" if "skipped" in tags else "passed")
        out[f"{module}.py::{case.get('name')}"] = status
    return out


def run_adapted(out: Path, which: str) -> dict[str, str]:
    """Write the adaptation ``which`` into ``out``, run it in a subprocess (this module's
    folder on ``PYTHONPATH``) and return :func:`outcomes_of` its JUnit report."""
    import subprocess

    write_adapted(out, which)
    junit = out / "junit.xml"
    env = dict(os.environ)
    env[ENV] = which
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(__file__).parent), *filter(None, [env.get("PYTHONPATH")])])
    run = subprocess.run(run_command(out, junit), cwd=out, env=env, capture_output=True,
                         text=True, timeout=1500)
    assert junit.exists(), run.stdout[-3000:] + run.stderr[-3000:]
    return outcomes_of(junit)


def outcomes_fixture(which: str) -> Any:
    """A module-scoped pytest fixture with :func:`run_adapted`'s outcomes of ``which``."""
    import pytest

    def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
        return run_adapted(tmp_path_factory.mktemp(f"sklearn_{which}_suite"), which)

    return pytest.fixture(scope="module", name="outcomes")(outcomes)


def unexpected_failures(outcomes: dict[str, str], which: str) -> list[str]:
    """The failed tests of :func:`outcomes_of` that ``ADAPTATIONS[which]`` does not list."""
    listed = ADAPTATIONS[which].exceptions
    return sorted(name for name, status in outcomes.items()
                  if status == "failed" and name.split("[")[0] not in listed)


def runs_of(outcomes: dict[str, str], test: str) -> set[str]:
    """The statuses of ``file::test`` over its parametrizations (empty when it is not run)."""
    return {status for name, status in outcomes.items() if name.split("[")[0] == test}


def _is_ours(value: object) -> bool:
    classes = adaptation().classes
    return any(value is cls for cls in classes) or isinstance(value, classes)


def _is_other_estimator(value: object) -> bool:
    cls = value if isinstance(value, type) else type(value)
    return issubclass(cls, BaseEstimator) and not _is_ours(value)


def concerns_the_estimator(item: object) -> bool:
    """Whether a collected test exercises the adaptation's estimators (module docstring)."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    if any(_is_other_estimator(v) for v in params.values()):
        return False
    function = getattr(item, "function", None)
    named = function is not None and any(
        name in inspect.getsource(function) for name in adaptation().names)
    return named or any(_is_ours(v) for v in params.values())


def pytest_collection_modifyitems(config, items) -> None:  # noqa: ANN001 (pytest hook)
    aside = [item for item in items if not concerns_the_estimator(item)]
    if aside:
        config.hook.pytest_deselected(items=aside)
        items[:] = [item for item in items if concerns_the_estimator(item)]


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "sklearn_svc_suite")
    which = sys.argv[2] if len(sys.argv) > 2 else "svc"
    write_adapted(target, which)
    print(f"{ENV}={which} PYTHONPATH={Path(__file__).parent} " + " ".join(run_command(target)))
