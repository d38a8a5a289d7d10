"""Seed 004's string subsequence kernel against the definition, and the kernels the one engine
adds (sigmoid, callables) in SMO and the dual oracle."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics.pairwise import sigmoid_kernel
from sklearn.svm import SVC

from maxmargin.algorithms import smo
from maxmargin.formulations import svm_dual
from maxmargin.kernels import CallableKernel, SigmoidKernel, StringSubsequenceKernel, make_kernel


def _phi(s: str, n: int, lam: float) -> dict[str, float]:
    """The definition: [phi_n(s)]_u = sum over index tuples i with s[i] = u of
    lam^(i_last - i_first + 1)."""
    out: dict[str, float] = {}
    for idx in itertools.combinations(range(len(s)), n):
        u = "".join(s[i] for i in idx)
        out[u] = out.get(u, 0.0) + lam ** (idx[-1] - idx[0] + 1)
    return out


def _brute(s: str, t: str, n: int, lam: float, all_lengths: bool) -> float:
    total = 0.0
    for k in range(1, n + 1) if all_lengths else (n,):
        a, b = _phi(s, k, lam), _phi(t, k, lam)
        total += sum(v * b.get(u, 0.0) for u, v in a.items())
    return total


@settings(max_examples=60, deadline=None)
@given(
    strings=st.lists(st.text(alphabet="abc", min_size=3, max_size=8), min_size=2, max_size=6),
    n=st.integers(1, 3),
    lam=st.floats(0.1, 1.0),
    all_lengths=st.booleans(),
)
def test_dynamic_programme_equals_enumeration(strings, n, lam, all_lengths) -> None:
    k = StringSubsequenceKernel(n, lam, normalize=False, all_lengths=all_lengths)
    G = k.gram(strings)
    B = np.array([[_brute(s, t, n, lam, all_lengths) for t in strings] for s in strings])
    np.testing.assert_allclose(G, B, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(G, G.T)
    assert np.linalg.eigvalsh(G).min() >= -1e-12 * max(1.0, np.abs(G).max())  # PSD


def test_lodhi_cat_car_example() -> None:
    """Lodhi et al. (2002): for length 2, K(cat, car) = lam^4 and K(cat, cat) = 2 lam^4 + lam^6,
    so the normalised K(cat, car) = 1 / (2 + lam^2); cat and bar share no 2-subsequence."""
    lam = 0.5
    raw = StringSubsequenceKernel(2, lam, normalize=False)
    assert raw(["cat"], ["car"])[0, 0] == pytest.approx(lam**4)
    assert raw(["cat"], ["cat"])[0, 0] == pytest.approx(2 * lam**4 + lam**6)
    k = StringSubsequenceKernel(2, lam)
    K = k(["cat", "car", "bat", "bar"], ["cat", "car", "bat", "bar"])
    assert K[0, 1] == pytest.approx(1.0 / (2.0 + lam**2))
    assert K[0, 3] == 0.0 and K[0, 0] == pytest.approx(1.0)


def test_conventions_differ_and_are_named() -> None:
    one = StringSubsequenceKernel(2, 0.5, normalize=False)
    every = StringSubsequenceKernel(2, 0.5, normalize=False, all_lengths=True)
    k1 = StringSubsequenceKernel(1, 0.5, normalize=False)
    s, t = ["science"], ["silence"]
    assert every(s, t)[0, 0] == pytest.approx(one(s, t)[0, 0] + k1(s, t)[0, 0])
    assert "all lengths 1..2" in every.describe() and "length 2" in one.describe()


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ("abc", r"`X` must be a sequence of strings, not one string"),
        (["ab", 3], r"`X` must hold only strings; item 1 is int"),
        (["ab", ""], r"`X`: every string must have at least 2 character\(s\) .* item 1 is ''"),
        (["abc", "a"], r"item 1 is 'a'"),
        ([], r"`X` must hold at least one string"),
        (None, r"`X` must be a sequence of strings; got None"),
        (np.array([["ab"], ["cd"]]), r"`X` must be a 1-D sequence of strings"),
    ],
)
def test_string_input_validation(value, match) -> None:
    k = StringSubsequenceKernel(2, 0.5)
    with pytest.raises(ValueError, match=match):
        k.gram(value)
    y = np.array([1.0, -1.0])
    with pytest.raises(ValueError, match=match):
        smo(value, y, kernel=k)


def test_parameters_validated() -> None:
    with pytest.raises(ValueError, match=r"`lam` must be in \(0, 1\]; got 1.5"):
        StringSubsequenceKernel(2, 1.5)
    with pytest.raises(ValueError, match=r"`length` must be an integer >= 1"):
        StringSubsequenceKernel(0, 0.5)


def _motif_data(n: int, seed: int) -> tuple[list[str], np.ndarray]:
    """Strings over {a, b, c, d}; the positive ones contain the motif 'ab'."""
    rng = np.random.default_rng(seed)
    X, y = [], np.where(np.arange(n) % 2 == 1, 1.0, -1.0)
    for label in y:
        s = "".join(rng.choice(list("acd"), size=int(rng.integers(6, 10))))
        if label > 0:
            p = int(rng.integers(0, len(s) - 2))
            s = s[:p] + "ab" + s[p + 2 :]
        X.append(s)
    return X, y


@pytest.mark.parametrize("working_set", ["wss2", "platt"])
def test_smo_on_strings_matches_the_oracle(working_set) -> None:
    X, y = _motif_data(40, 0)
    k = StringSubsequenceKernel(2, 0.5)
    fast = smo(X, y, C=1.0, kernel=k, tol=1e-7, working_set=working_set)
    oracle = svm_dual(X, y, 1.0, kernel=k).solve()
    assert fast.status == oracle.status == "optimal"
    assert fast.dual_objective == pytest.approx(oracle.dual_objective, rel=1e-7)
    np.testing.assert_allclose(fast.decision_function(X), oracle.decision_function(X),
                               atol=1e-5)
    assert np.all(fast.predict(["ccabdd", "ab" + "cd" * 3]) == 1.0)
    assert fast.predict(["cdcdcdc"])[0] == -1.0
    # precomputed-by-hand Gram matrix through a callable: the same problem
    same = smo(X, y, C=1.0, kernel=CallableKernel(lambda A, B: k(A, B)), tol=1e-7)
    assert same.dual_objective == pytest.approx(fast.dual_objective, rel=1e-9)


def test_sigmoid_matches_svc() -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1.0, -1.0)
    k = make_kernel("sigmoid", gamma=0.1, coef0=0.0)
    assert isinstance(k, SigmoidKernel)
    np.testing.assert_allclose(k(X, X[:5]), sigmoid_kernel(X, X[:5], gamma=0.1, coef0=0.0))
    ours = smo(X, y, C=1.0, kernel="sigmoid", gamma=0.1, tol=1e-8)
    svc = SVC(kernel="sigmoid", gamma=0.1, coef0=0.0, C=1.0, tol=1e-8).fit(X, y)
    np.testing.assert_allclose(ours.decision_function(X), svc.decision_function(X), atol=1e-5)


def test_callable_kernel_equals_builtin() -> None:
    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 4))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    a = smo(X, y, kernel=lambda A, B: np.exp(-0.3 * ((A[:, None] - B[None]) ** 2).sum(-1)),
            tol=1e-9)
    b = smo(X, y, kernel="rbf", gamma=0.3, tol=1e-9)
    assert a.dual_objective == pytest.approx(b.dual_objective, rel=1e-10)
    with pytest.raises(ValueError, match=r"must return a block of shape \(1, 1\) for k\(A, B\)"):
        smo(X, y, kernel=lambda A, B: np.ones((2, 2)))
