"""scikit-learn's LinearSVC tests (``test_svm.py``, ``test_sparse.py`` of the installed version),
run with MaxMarginLinearClassifier in LinearSVC's place: every test that concerns the estimator
passes, except the listed ones (see ``sklearn_svc_suite.ADAPTATIONS``).
"""

from __future__ import annotations

import pytest
import sklearn
import sklearn_svc_suite as suite

ADAPTATION = suite.ADAPTATIONS["linearsvc"]
#: A guard against an adaptation that silently selects nothing.
MIN_TESTS = 12


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return suite.run_adapted(tmp_path_factory.mktemp("sklearn_linearsvc_suite"), "linearsvc")


def test_the_adaptation_substitutes_the_class() -> None:
    source = (suite.source_dir() / "test_svm.py").read_text()
    adapted = suite.adapt(source, "linearsvc")
    assert "svm.LinearSVC(" in source and "svm.LinearSVC(" not in adapted
    assert "(LinearSVC, {" not in adapted
    assert adapted.count("MaxMarginLinearClassifier(") == source.count("svm.LinearSVC(")
    compile(adapted, "test_svm.py", "exec")


def test_every_test_of_the_estimator_passes(outcomes: dict[str, str]) -> None:
    assert len(outcomes) >= MIN_TESTS, sorted(outcomes)
    failed = {name for name, status in outcomes.items() if status == "failed"}
    unexpected = sorted(name for name in failed
                        if name.split("[")[0] not in ADAPTATION.exceptions)
    assert not unexpected, unexpected


@pytest.mark.parametrize("name", sorted(ADAPTATION.exceptions) or ["(none)"])
def test_listed_exceptions_still_fail(outcomes: dict[str, str], name: str) -> None:
    """A listed exception that passes (or is gone) means the list is out of date."""
    if name == "(none)":
        assert not ADAPTATION.exceptions
        return
    runs = [status for test, status in outcomes.items() if test.split("[")[0] == name]
    if not runs:
        pytest.skip(f"{name} is not among scikit-learn {sklearn.__version__}'s tests")
    assert set(runs) == {"failed"}, (name, ADAPTATION.exceptions[name], runs)
