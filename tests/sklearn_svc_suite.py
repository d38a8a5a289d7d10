"""scikit-learn's own SVC and LinearSVC tests, run with maxmargin's estimators in their place.

The installed scikit-learn ships its SVM tests (``sklearn/svm/tests/test_svm.py`` and
``test_sparse.py``). :func:`write_adapted` copies them with one change of substance, per
:data:`ADAPTATIONS`: every ``svm.SVC`` becomes ``MaxMarginClassifier`` (and the class name in the
two messages that quote it), or every ``LinearSVC`` becomes ``MaxMarginLinearClassifier``, so they
follow the installed scikit-learn's version. This module is also the pytest plugin (``-p
sklearn_svc_suite``, the adaptation named by the environment variable :data:`ENV`) that keeps,
of the adapted files, the tests that concern the estimator: those whose code names it or that
take it as a parameter, without a parameter that is another scikit-learn estimator (those
maxmargin does not offer); the others are deselected.

Each adaptation's ``exceptions`` lists, with the reason, the tests expected to fail: those that
read or write the peer's private attributes. ``tests/test_sklearn_svc_suite.py`` and
``tests/test_sklearn_linearsvc_suite.py`` run the adapted files in a subprocess (scikit-learn's
own ``conftest`` loaded as a plugin, for its fixtures) and assert that every other kept test
passes. By hand::

    python tests/sklearn_svc_suite.py OUTDIR [svc|linearsvc]  # writes them, prints the command
"""

from __future__ import annotations

import ast
import inspect
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import sklearn
from sklearn.base import BaseEstimator

from maxmargin import MaxMarginClassifier, MaxMarginLinearClassifier

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
    """One estimator's adaptation of the files: its class, the substitutions in order, and
    the tests expected to fail (``file::test`` -> why)."""

    name: str
    cls: type
    substitutions: tuple[tuple[str, str], ...]
    exceptions: dict[str, str]


LINEAR = "MaxMarginLinearClassifier"
ADAPTATIONS = {
    "svc": Adaptation(NAME, MaxMarginClassifier, SUBSTITUTIONS, EXCEPTIONS),
    "linearsvc": Adaptation(
        LINEAR, MaxMarginLinearClassifier,
        (("svm.LinearSVC", LINEAR), ("(LinearSVC, {", f"({LINEAR}, {{")),
        {"test_svm.py::test_linear_svm_convergence_warnings": (
            "asserts that LIBLINEAR cannot converge in 2 passes on a 6-point problem "
            "(max_iter=2): the primal Newton method (dual='auto', n > d) certifies it")}),
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
    line = f"\nfrom maxmargin import {chosen.name}  # the adaptation\n"
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


def _is_ours(value: object) -> bool:
    cls = adaptation().cls
    return value is cls or isinstance(value, cls)


def _is_other_estimator(value: object) -> bool:
    cls = value if isinstance(value, type) else type(value)
    return issubclass(cls, BaseEstimator) and not _is_ours(value)


def concerns_the_estimator(item: object) -> bool:
    """Whether a collected test exercises MaxMarginClassifier (see the module docstring)."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    if any(_is_other_estimator(v) for v in params.values()):
        return False
    function = getattr(item, "function", None)
    named = function is not None and adaptation().name in inspect.getsource(function)
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
