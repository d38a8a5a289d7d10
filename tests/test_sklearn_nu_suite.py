"""scikit-learn's NuSVC and OneClassSVM tests (``test_svm.py``, ``test_sparse.py`` of the
installed version), run with MaxMarginNuClassifier and MaxMarginOneClass in their places: every
test that concerns them passes, except the listed ones (see ``sklearn_svc_suite.ADAPTATIONS``).

The adapted files run in a subprocess (their own pytest session, with scikit-learn's
``conftest`` for its fixtures).
"""

from __future__ import annotations

import pytest
import sklearn
import sklearn_svc_suite as suite

ADAPTATION = suite.ADAPTATIONS["nu"]
#: A guard against an adaptation that silently selects nothing (94 tests with scikit-learn 1.9).
MIN_TESTS = 60
outcomes = suite.outcomes_fixture("nu")


def test_the_adaptation_substitutes_both_classes() -> None:
    for name in suite.FILES:
        source = (suite.source_dir() / name).read_text()
        adapted = suite.adapt(source, "nu")
        assert "svm.NuSVC" not in adapted and "svm.OneClassSVM" not in adapted
        assert adapted.count("MaxMarginNuClassifier") == source.count("svm.NuSVC") + 1
        assert "'OneClassSVM' trained on dense" not in adapted
        compile(adapted, name, "exec")
    adapted = suite.adapt((suite.source_dir() / "test_svm.py").read_text(), "nu")
    assert "(OneClassSVM, SVR, NuSVR)" not in adapted


def test_both_estimators_are_exercised(outcomes: dict[str, str]) -> None:
    names = {name.split("[")[0].split("::")[1] for name in outcomes}
    assert {"test_oneclass", "test_sparse_oneclasssvm", "test_probability",
            "test_decision_function_shape"} <= names, sorted(names)


def test_every_test_of_the_estimators_passes(outcomes: dict[str, str]) -> None:
    assert len(outcomes) >= MIN_TESTS, sorted(outcomes)
    assert not suite.unexpected_failures(outcomes, "nu")


@pytest.mark.parametrize("name", sorted(ADAPTATION.exceptions) or ["(none)"])
def test_listed_exceptions_still_fail(outcomes: dict[str, str], name: str) -> None:
    """A listed exception that passes (or is gone) means the list is out of date."""
    if name == "(none)":
        assert not ADAPTATION.exceptions
        return
    runs = suite.runs_of(outcomes, name)
    if not runs:
        pytest.skip(f"{name} is not among scikit-learn {sklearn.__version__}'s tests")
    assert runs == {"failed"}, (name, ADAPTATION.exceptions[name], runs)
