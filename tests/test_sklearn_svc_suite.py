"""scikit-learn's SVC tests (``test_svm.py``, ``test_sparse.py`` of the installed version), run
with MaxMarginClassifier in SVC's place: every test that concerns the estimator passes, except
the listed ones that read SVC's private attributes (see ``sklearn_svc_suite``).

The adapted files run in a subprocess (their own pytest session, with scikit-learn's ``conftest``
for its fixtures); about 30 s on one core.
"""

from __future__ import annotations

import pytest
import sklearn
import sklearn_svc_suite as suite

#: A guard against an adaptation that silently selects nothing (135 tests with scikit-learn 1.9).
MIN_TESTS = 60


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return suite.run_adapted(tmp_path_factory.mktemp("sklearn_svc_suite"), "svc")


def test_the_adaptation_substitutes_the_class_and_its_name() -> None:
    source = (suite.source_dir() / "test_svm.py").read_text()
    adapted = suite.adapt(source)
    assert "svm.SVC(" in source and "svm.SVC(" not in adapted
    assert adapted.count("MaxMarginClassifier(") == source.count("svm.SVC(")
    compile(adapted, "test_svm.py", "exec")


def test_every_test_of_the_estimator_passes(outcomes: dict[str, str]) -> None:
    assert len(outcomes) >= MIN_TESTS, sorted(outcomes)
    failed = {name for name, status in outcomes.items() if status == "failed"}
    unexpected = sorted(name for name in failed if name.split("[")[0] not in suite.EXCEPTIONS)
    assert not unexpected, unexpected


@pytest.mark.parametrize("name", sorted(suite.EXCEPTIONS))
def test_listed_exceptions_still_fail(outcomes: dict[str, str], name: str) -> None:
    """A listed exception that passes (or is gone) means the list is out of date."""
    runs = [status for test, status in outcomes.items() if test.split("[")[0] == name]
    if not runs:
        pytest.skip(f"{name} is not among scikit-learn {sklearn.__version__}'s tests")
    assert set(runs) == {"failed"}, (name, suite.EXCEPTIONS[name], runs)
