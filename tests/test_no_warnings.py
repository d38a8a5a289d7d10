"""No warning leaks from a public entry point, on any input.

Every public formulation (the CVXPY oracles) and every public algorithm is run on nasty small
inputs -- features scaled from 1e-5 to 1e5, offsets up to 1e6, ``C`` from 1e-300 to 1e300,
duplicated points, opposite duplicates (one point with both labels), two to eight points -- and
must not let a warning out except maxmargin's documented
:class:`~maxmargin.exceptions.ConvergenceWarning` (non-convergence, with its cause and remedy).
Warnings of inner attempts (NumPy's floating-point warnings, CVXPY's and the solvers') are
caught and reported in the answer's ``message``.

Warnings are *recorded* (``simplefilter("always")``) rather than turned into errors: an error
raised inside a solver's retry chain would be caught there as a failed attempt and change the
answer, while a record sees exactly what a user would see.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maxmargin.algorithms import (
    gilbert_hulls,
    gilbert_svm,
    kernel_perceptron,
    mdm_hulls,
    perceptron,
    smo,
    wolfe_hulls,
)
from maxmargin.exceptions import ConvergenceWarning
from maxmargin.formulations import (
    hard_margin_primal,
    hinge_loss,
    hull_distance,
    liblinear_primal,
    polytope_distance,
    soft_margin_primal,
    svm_dual,
)

C_VALUES = [1e-300, 1e-12, 1e-3, 1.0, 1e3, 1e12, 1e300]


@st.composite
def nasty_data(draw: Any, max_n: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)``: 2 to ``max_n`` points in 1 to 3 dimensions, both labels present, features
    ``~ 10^[-5, 5]`` around an offset of up to ``1e6``, with duplicated and opposite-duplicated
    points at times."""
    n = draw(st.integers(2, max_n))
    d = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 10.0 ** draw(st.floats(-5.0, 5.0))
    if draw(st.booleans()):
        X = X + draw(st.sampled_from([1.0, -1.0])) * 10.0 ** draw(st.floats(0.0, 6.0))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0
    kind = draw(st.sampled_from(["plain", "duplicates", "opposite", "constant"]))
    if kind == "duplicates" and n >= 3:
        X[2] = X[0]
    elif kind == "opposite":
        X[1] = X[0]  # one point with both labels
    elif kind == "constant":
        X[:, 0] = X[0, 0]  # a constant feature
    return X, y


def assert_no_leak(call: Callable[[], Any]) -> Any:
    """Run ``call``; fail on any warning it lets out except a ConvergenceWarning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    leaks = [f"{w.category.__name__}: {w.message} ({w.filename}:{w.lineno})" for w in caught
             if not issubclass(w.category, ConvergenceWarning)]
    assert not leaks, "\n".join(leaks)
    return result


SETTINGS = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

FORMULATIONS: dict[str, Callable[[np.ndarray, np.ndarray, float], Any]] = {
    "svm_dual": lambda X, y, C: svm_dual(X, y, C),
    "svm_dual_rbf": lambda X, y, C: svm_dual(X, y, C, kernel="rbf"),
    "svm_dual_hard": lambda X, y, C: svm_dual(X, y, None),
    "soft_margin_primal": soft_margin_primal,
    "hard_margin_primal": lambda X, y, C: hard_margin_primal(X, y),
    "hinge_loss": hinge_loss,
    "liblinear_primal": liblinear_primal,
    "liblinear_primal_l1_hinge": lambda X, y, C: liblinear_primal(X, y, C, loss="hinge"),
    "polytope_distance": lambda X, y, C: polytope_distance(X),
    "hull_distance": lambda X, y, C: hull_distance(X[y > 0], X[y < 0]),
}


@pytest.mark.parametrize("name", list(FORMULATIONS))
@SETTINGS
@given(data=nasty_data(), C=st.sampled_from(C_VALUES))
def test_formulations_leak_no_warning(name, data, C):
    X, y = data
    sol = assert_no_leak(lambda: FORMULATIONS[name](X, y, C).solve())
    assert sol.status in ("optimal", "inaccurate", "infeasible", "max_iter", "solver_error")


def test_inner_warnings_are_reported_in_the_message():
    # features ~5e4 and C = 1e-300: an inner attempt's CVXPY bound propagation warns
    # "invalid value encountered in matmul" (0 * inf); the warning is caught and its text
    # goes into the attempts listed in the answer's message
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3)) * 3 + 5e4
    y = np.where(X[:, 0] - 5e4 + 0.5 * rng.normal(size=30) > 0, 1.0, -1.0)
    sol = assert_no_leak(lambda: hinge_loss(X, y, 1e-300).solve())
    assert sol.status == "optimal"
    assert "warnings caught: RuntimeWarning: invalid value encountered in matmul" in sol.message


def test_liblinear_polish_survives_a_hessian_singular_in_floating_point():
    # C = 1e12 on features ~2e4: I + 2 C X_S^T X_S is singular in float64 (the identity is
    # lost), and np.linalg.solve raised LinAlgError out of solve(); the Newton polish now stops
    X = np.array([[-22684.86865866991, 21122.873766092755],
                  [22330.320622910745, -24031.244134542954],
                  [-19178.363146966494, 36345.246415634014],
                  [13859.56729214566, 27150.45764949641]])
    y = np.array([1.0, -1.0, 1.0, 1.0])
    sol = assert_no_leak(lambda: liblinear_primal(X, y, 1e12).solve())
    assert sol.status in ("optimal", "inaccurate")
    assert np.all(np.isfinite(sol.w))


def test_a_twin_scale_out_of_float_range_is_not_used():
    # Three copies of one point: centring leaves a spread of 2.7e-20 (the mean's round-off),
    # so with C = 1e300 the twin scale (s^2 / C)^(1/4) underflowed to 0 and hinge_loss raised
    # ZeroDivisionError building its model (0.5 / (C s^2)); now computed through square roots
    X = np.full((3, 1), float.fromhex("0x1.9425b4fcc0772p-13"))
    y = np.array([1.0, -1.0, 1.0])
    for make in (hinge_loss, soft_margin_primal, svm_dual):
        form = make(X, y, 1e300)
        (s,) = form._scales
        assert 0.0 < s and 0.0 < 1e300 * s * s < np.inf
        sol = assert_no_leak(form.solve)
        assert sol.status in ("optimal", "inaccurate", "max_iter")


def test_what_compiled_code_prints_is_captured_not_shown(capfd):
    # OSQP and PIQP print from C/C++, past Python's streams ("ERROR in LDL_factor: ..."): inside
    # a solve that text goes into the answer's message, never to the terminal
    import ctypes

    from maxmargin.formulations._common import c_output_captured

    capfd.readouterr()
    into: list[str] = []
    with c_output_captured(into):
        ctypes.CDLL(None).printf(b"ERROR in LDL_factor: from C\n")
    assert into == ["ERROR in LDL_factor: from C"]
    out, err = capfd.readouterr()
    assert out == err == ""


ALGORITHMS: dict[str, Callable[[np.ndarray, np.ndarray, float], Any]] = {
    "smo": lambda X, y, C: smo(X, y, C),
    "smo_rbf": lambda X, y, C: smo(X, y, C, kernel="rbf"),
    "smo_hard": lambda X, y, C: smo(X, y, None),
    "gilbert_svm": lambda X, y, C: gilbert_svm(X, y),
    "gilbert_svm_gilbert": lambda X, y, C: gilbert_svm(X, y, method="gilbert"),
    "gilbert_hulls": lambda X, y, C: gilbert_hulls(X[y > 0], X[y < 0]),
    "mdm_hulls": lambda X, y, C: mdm_hulls(X[y > 0], X[y < 0]),
    "wolfe_hulls": lambda X, y, C: wolfe_hulls(X[y > 0], X[y < 0]),
    "perceptron": lambda X, y, C: perceptron(X, y, max_epochs=50),
    "kernel_perceptron": lambda X, y, C: kernel_perceptron(X, y, max_epochs=50),
}


@pytest.mark.parametrize("name", list(ALGORITHMS))
@SETTINGS
@given(data=nasty_data(), C=st.sampled_from(C_VALUES))
def test_algorithms_leak_no_warning(name, data, C):
    X, y = data
    assert_no_leak(lambda: ALGORITHMS[name](X, y, C))


def test_smo_leaks_no_warning_on_opposite_duplicates_with_a_huge_C():
    # One point with both labels, C = 1e300: alpha runs to C and the result's ||w||^2 overflows
    # (RuntimeWarning: overflow encountered in matmul). Found by the fuzz above.
    X = np.array([[0.12573022], [0.12573022]])
    y = np.array([1.0, -1.0])
    assert_no_leak(lambda: smo(X, y, 1e300))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["svm_dual", "hinge_loss", "soft_margin_primal"])
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=nasty_data(max_n=60), C=st.sampled_from(C_VALUES))
def test_formulations_leak_no_warning_on_larger_data(name, data, C):
    X, y = data
    assert_no_leak(lambda: FORMULATIONS[name](X, y, C).solve())
