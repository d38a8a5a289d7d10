"""ν-SVC and one-class verdicts invariant under the problems' symmetries.

Schölkopf's ν-SVC and one-class SVM have no ``C``: ``X -> s X`` (linear kernel) leaves
``alpha`` as it is and multiplies ``rho``, ``b`` and every objective by ``s^2``; a translation
``X -> X + t`` leaves the ν-SVC as it is (its bias absorbs it). LIBSVM's stopping rule is
stated in ``G = Q a``, which grows with ``s^2``: ``nu_smo`` and ``one_class_smo`` run their
loop on ``X 2^-k`` (:func:`~maxmargin.algorithms.smo.nu.unit_exponent`), so the verdict, the
iterations and (for ``s`` a power of two) the bits of ``alpha`` do not depend on the units,
from 1e-100 to 1e100.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maxmargin.algorithms import nu_smo, one_class_smo
from maxmargin.algorithms.smo.nu import unit_exponent
from maxmargin.certificate_nu import certify_nu_svm
from maxmargin.kernels import make_kernel

SCALES = [2.0**-330, 1e-100, 1e-20, 1e-4, 1.0, 3e2, 1e20, 1e100, 2.0**330]


def _clouds(seed: int, n: int = 60, d: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an honest answer here leaks no warning
        return fn(*args, **kwargs)


@pytest.mark.parametrize("s", SCALES)
def test_nu_svc_verdict_and_rho_are_unit_free(s):
    X, y = _clouds(1)
    ref = _quiet(nu_smo, X, y, nu=0.3)
    got = _quiet(nu_smo, X * s, y, nu=0.3)
    assert ref.status == got.status == "optimal"
    assert got.rho / s**2 == pytest.approx(ref.rho, rel=2e-3)
    assert np.array_equal(np.sign(got.decision_function(X * s)), np.sign(
        ref.decision_function(X)))
    # the user's certificate of the scaled answer: the same verdict in the user's units
    cert = certify_nu_svm(got.alpha, X * s, y, 0.3, make_kernel("linear"))
    assert cert.meets(1e-3)


@pytest.mark.parametrize("s", SCALES)
def test_one_class_verdict_and_rho_are_unit_free(s):
    X, _ = _clouds(2)
    X = X + 1.5  # off the origin: the reduced hull does not hold it, rho > 0
    ref = _quiet(one_class_smo, X, nu=0.3)
    got = _quiet(one_class_smo, X * s, nu=0.3)
    assert ref.status == got.status == "optimal" and not got.hulls_meet
    assert got.rho / s**2 == pytest.approx(ref.rho, rel=1e-3)


@pytest.mark.parametrize("k", [-330, -7, 5, 330])
def test_powers_of_two_give_the_same_bits(k):
    """``X 2^k`` is the same loop on the same numbers: same iterations, same ``alpha``."""
    X, y = _clouds(3)
    ref, got = nu_smo(X, y, nu=0.4), nu_smo(X * 2.0**k, y, nu=0.4)
    assert got.iterations == ref.iterations and np.array_equal(got.alpha, ref.alpha)
    ref, got = one_class_smo(X + 2.0, nu=0.4), one_class_smo((X + 2.0) * 2.0**k, nu=0.4)
    assert got.iterations == ref.iterations and np.array_equal(got.alpha, ref.alpha)


def test_unit_exponent():
    assert unit_exponent(np.array([[3.0, -0.5]])) == 1
    assert unit_exponent(np.array([[0.0, 0.0]])) == 0
    assert unit_exponent(np.array([[1e-320]])) == -500
    assert unit_exponent(np.array([[2.0**400]])) == 400
    for top in (1e-100, 0.75, 1.0, 7.0, 1e100):
        k = unit_exponent(np.array([[top, -top / 3]]))
        assert 1.0 <= top * 2.0**-k < 2.0


@settings(max_examples=10, derandomize=True, deadline=None)
@given(seed=st.integers(0, 2**16), s=st.sampled_from(SCALES),
       t=st.sampled_from([0.0, 3.0, 1e3]), nu=st.sampled_from([0.2, 0.5]))
def test_property_nu_svc_is_free_of_units_origin_and_order(seed, s, t, nu):
    X, y = _clouds(seed, n=40, d=3)
    ref = nu_smo(X, y, nu=nu)
    perm = np.random.default_rng(seed).permutation(y.shape[0])
    Xm = (X + t * X.std()) * s
    got = nu_smo(Xm[perm], -y[perm], nu=nu)
    assert got.status == ref.status
    if ref.status == "optimal" and not ref.hulls_meet:
        assert got.rho / s**2 == pytest.approx(ref.rho, rel=5e-3)
        assert got.certificate.kkt_violation < 1e-3
