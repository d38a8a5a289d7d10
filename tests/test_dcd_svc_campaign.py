"""A seeded campaign for ``dcd_svc``: every case certified "optimal" (``m - M < tol``) and
within a relative 1e-5 of ``smo(kernel="linear", tol=1e-6)``'s dual objective, each primal
above the other's dual (weak duality both ways)."""

from __future__ import annotations

import importlib
import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer, load_iris

from maxmargin.algorithms import dcd_svc, smo


def standardised(X: np.ndarray) -> np.ndarray:
    return (X - X.mean(axis=0)) / X.std(axis=0)


def iris_pair(first: int, second: int, standardise: bool):
    X, y = load_iris(return_X_y=True)
    keep = (y == first) | (y == second)
    X = standardised(X[keep]) if standardise else X[keep]
    return X, np.where(y[keep] == second, 1.0, -1.0)


def breast_cancer(standardise: bool):
    X, y = load_breast_cancer(return_X_y=True)
    return (standardised(X) if standardise else X), np.where(y == 1, 1.0, -1.0)


def clouds(n: int, d: int, seed: int, sparse: bool):
    """Two overlapping Gaussian clouds (means 1.5 apart along a random direction, one class
    twice the other's spread, on a random scale), 10% of the labels flipped; sparse rows keep
    about 40% of their entries."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    direction = rng.standard_normal(d)
    X = rng.standard_normal((n, d)) * np.where(y > 0, 2.0, 1.0)[:, None]
    X += 0.75 * np.outer(y, direction / np.linalg.norm(direction)) + rng.normal(size=d)
    X *= rng.uniform(0.2, 5.0)
    flip = rng.random(n) < 0.1
    flip[:2] = False
    y[flip] = -y[flip]
    if sparse:
        X[rng.random((n, d)) < 0.6] = 0.0
        return sp.csr_matrix(X), y
    return X, y


IRIS = [(f"iris{a}{b}-{'std' if s else 'raw'}-C{C:g}", lambda a=a, b=b, s=s: iris_pair(a, b, s), C)
        for (a, b), s, C in itertools.product([(0, 1), (0, 2), (1, 2)], [False, True],
                                              [1e-2, 1.0, 1e2])]
CANCER = [(f"cancer-std-C{C:g}", lambda: breast_cancer(True), C) for C in (1e-2, 1.0, 1e2)]
CANCER += [(f"cancer-raw-C{C:g}", lambda: breast_cancer(False), C) for C in (1e-2, 1.0, 1e2)]


def _clouds_cases():
    rng = np.random.default_rng(2026)
    cases = []
    for k, (n, d) in enumerate([(20, 1), (20, 5), (60, 2), (100, 50), (200, 10), (500, 3),
                                (800, 20), (1500, 5), (3000, 2), (3000, 8)]):
        for sparse in (False, True):
            C = float(10.0 ** rng.uniform(-2, 2))
            cases.append((f"clouds-n{n}-d{d}-{'csr' if sparse else 'dense'}-C{C:.3g}",
                          lambda n=n, d=d, k=k, s=sparse: clouds(n, d, 100 + k, s), C))
    for k in range(16):  # drawn: n log-uniform in [20, 1200], d in [1, 50], C in [1e-2, 1e2]
        n = int(round(10.0 ** rng.uniform(np.log10(20), np.log10(1200))))
        d = int(rng.integers(1, 51))
        sparse, C = bool(rng.random() < 0.5), float(10.0 ** rng.uniform(-2, 2))
        cases.append((f"drawn{k}-n{n}-d{d}-{'csr' if sparse else 'dense'}-C{C:.3g}",
                      lambda n=n, d=d, k=k, s=sparse: clouds(n, d, 200 + k, s), C))
    return cases


CASES = IRIS + CANCER + _clouds_cases()


def check(make, C: float, tol: float) -> None:
    X, y = make()
    res = dcd_svc(X, y, C, tol=tol)
    ref = smo(X, y, C, kernel="linear", tol=1e-6)
    assert ref.status == "optimal"
    assert res.status == "optimal", res.message
    assert res.certificate.kkt_violation < tol and res.certificate.feasibility <= 1e-9
    assert res.dual_objective == pytest.approx(ref.dual_objective, rel=1e-5)
    # weak duality both ways, up to the round-off of the objectives' sums (raw features of
    # norm ~5e3 cost about 1e-11 of them)
    assert res.primal_objective >= ref.dual_objective * (1 - 1e-9) - 1e-12
    assert ref.primal_objective >= res.dual_objective * (1 - 1e-9) - 1e-12
    box = np.full(y.shape, C)
    assert np.all(res.alpha >= 0.0) and np.all(res.alpha <= box)
    assert abs(float(y @ res.alpha)) <= 1e-9 * max(1.0, float(res.alpha.sum()))


@pytest.mark.parametrize(("name", "make", "C"), CASES, ids=[c[0] for c in CASES])
def test_campaign_default_tol(name, make, C):
    check(make, C, 1e-3)


TIGHT = [c for c in CASES if c[0].startswith(("iris12", "cancer-std-C1", "cancer-raw-C1",
                                               "clouds-n20",
                                               "clouds-n200", "clouds-n1500-d5-dense"))]


@pytest.mark.parametrize(("name", "make", "C"), TIGHT, ids=[c[0] for c in TIGHT])
def test_campaign_tight_tol(name, make, C):
    check(make, C, 1e-6)


# --- the search on the bias alone (no active-set finish) ----------------------------------------

SVC = importlib.import_module("maxmargin.algorithms.dcd.svc")
OUTER = ["iris12-raw-C1", "iris02-raw-C1", "iris12-std-C100", "cancer-std-C1",
         "clouds-n20-d5-dense-C0.74", "clouds-n1500-d5-dense-C1.15", "clouds-n3000-d8-csr-C0.0804"]


@pytest.mark.parametrize(("name", "make", "C"), [c for c in CASES if c[0] in OUTER], ids=OUTER)
def test_the_bias_search_alone_converges(name, make, C, monkeypatch):
    monkeypatch.setattr(SVC, "DCD_SVC_FINISH_AFTER", 10**9)
    X, y = make()
    res = dcd_svc(X, y, C)
    ref = smo(X, y, C, kernel="linear", tol=1e-6)
    assert res.status == "optimal" and res.certificate.kkt_violation < 1e-3
    assert len(res.history["b"]) <= 8  # inner solves: the multiplier no longer creeps
    assert res.dual_objective == pytest.approx(ref.dual_objective, rel=1e-5)


def samples(search, root: float, slope: float, jump: float, biases) -> None:
    """Exact samples of ``r(B) = slope (root - B) + jump sign(root - B)``."""
    for bias in biases:
        search.add(bias, slope * (root - bias) + jump * np.sign(root - bias), 1e-3)


def test_the_search_steps():
    search = SVC.BiasSearch()
    samples(search, 2.0, 0.5, 0.0, [0.0])
    assert search.next_bias() == 0.0  # one sample: the plain multiplier update
    samples(search, 2.0, 0.5, 0.0, [0.1])
    assert search.next_bias() == pytest.approx(1.1)  # the secant, capped at 10 x the move
    samples(search, 2.0, 0.5, 0.0, [1.1])
    assert search.next_bias() == pytest.approx(2.0)  # linear: the root
    search = SVC.BiasSearch()
    samples(search, 2.0, 0.0, 1.0, [0.0, 3.0])  # a jump at the root: bracketing
    nxt = [search.next_bias()]
    for _ in range(40):
        samples(search, 2.0, 0.0, 1.0, [nxt[-1]])
        nxt.append(search.next_bias())
        lo, hi = search.bracket()
        assert lo[0] < 2.0 < hi[0]
    assert abs(nxt[-1] - 2.0) <= 1e-9
    search.add(5.0, 1.0, 1e-4)  # a new inner tolerance drops the samples
    assert search.points == [(5.0, 1.0)] and search.next_bias() == 5.0
