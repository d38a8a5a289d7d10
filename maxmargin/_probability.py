"""Probability estimates as LIBSVM's ``-b 1`` (scikit-learn's ``SVC(probability=True)``).

**Platt scaling per binary problem** (Platt 1999, in the form of Lin, Lin & Weng 2007). For the
problem of classes ``i < j`` (``+1`` = class ``i``, LIBSVM's orientation), the decision value
``f_k`` of each of its ``l`` samples comes from a model fitted without it: the samples are
shuffled, cut into 5 folds, and each fold's values come from the SVM fitted on the other four
(with the same per-sample C). Then ``(A, B)`` minimise the cross-entropy

.. math::

    F(A, B) = -\\sum_k t_k \\log p_k + (1 - t_k) \\log (1 - p_k), \\quad
    p_k = \\frac{1}{1 + e^{A f_k + B}}, \\quad
    t_k = \\frac{N_+ + 1}{N_+ + 2} \\;(y_k = +1), \\; \\frac{1}{N_- + 2} \\;(y_k = -1),

by Newton's method on ``H + 1e-12 I`` with a backtracking line search (step halved until
``F`` decreases by ``1e-4 step g.d``, given up below ``1e-10``), from ``A = 0``,
``B = log((N_- + 1) / (N_+ + 1))``, until ``|g| < 1e-5`` in both coordinates or 100 iterations:
:func:`sigmoid_train`. ``P(i | x, i or j) = 1 / (1 + exp(A f(x) + B))``, clipped to
``[1e-7, 1 - 1e-7]``.

**Pairwise coupling** (Wu, Lin & Weng 2004, method 2): with ``r_ij = P(i | i or j)``, the class
probabilities ``p`` minimise ``p^T Q p`` over the simplex, ``Q_tt = sum_{j != t} r_jt^2``,
``Q_tj = -r_jt r_tj``; LIBSVM's fixed-point iteration (one coordinate at a time, then
renormalise) stops when ``max_t |(Q p)_t - p^T Q p| < 0.005 / k`` or after ``max(100, k)``
sweeps: :func:`multiclass_probability`.

**The folds** are scikit-learn's: its LIBSVM draws them from ``std::mt19937`` seeded with the
seed that ``SVC.fit`` draws from ``random_state`` (``randint(2**31 - 1)``), through Lemire's
bounded integers, and re-seeds the generator at the start of every training (so also after
each fold's fit). :class:`LibsvmRandom` reproduces that stream (numpy's legacy seeding of
MT19937 is ``std::mt19937(seed)``), so the same ``random_state`` gives the same folds as SVC.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = [
    "N_FOLDS",
    "MIN_PROB",
    "LibsvmRandom",
    "platt_parameters",
    "sigmoid_train",
    "sigmoid_predict",
    "multiclass_probability",
    "coupled_probabilities",
]

#: Folds of the internal cross-validation.
N_FOLDS = 5
#: Pairwise probabilities are clipped to ``[MIN_PROB, 1 - MIN_PROB]`` before coupling.
MIN_PROB = 1e-7
_MASK32 = np.uint64(0xFFFFFFFF)
_TWO32 = np.uint64(1 << 32)


class LibsvmRandom:
    """scikit-learn's LIBSVM generator: ``std::mt19937(seed)`` and ``bounded_rand_int``.

    ``bounded(r)`` is Lemire's multiply-shift ``(x r) >> 32`` of a 32-bit draw ``x``, the draw
    rejected while the low 32 bits of ``x r`` are below ``2^32 mod r``. :meth:`reseed` returns the
    generator to its seeded state (LIBSVM's ``set_seed`` at the start of every training).
    """

    def __init__(self, seed: int) -> None:
        if not 0 <= int(seed) < 2**32:
            raise ValueError(f"`seed` must be in [0, 2**32); got {seed!r}.")
        self.seed = int(seed)
        self.reseed()

    def reseed(self) -> None:
        """Back to the state right after ``std::mt19937(seed)``."""
        legacy = np.random.RandomState(self.seed).get_state()  # init_genrand(seed)
        self._bits = np.random.MT19937()
        self._bits.state = {"bit_generator": "MT19937",
                            "state": {"key": legacy[1], "pos": legacy[2]}}
        self._buffer = np.empty(0, dtype=np.uint64)
        self._next = 0

    def _peek(self, count: int) -> np.ndarray:
        """The next ``count`` 32-bit draws (as uint64), not yet consumed."""
        have = self._buffer.size - self._next
        if have < count:
            self._buffer = np.concatenate([self._buffer[self._next:],
                                           self._bits.random_raw(count - have)])
            self._next = 0
        return self._buffer[self._next:self._next + count]

    def bounded(self, r: int) -> int:
        """One integer uniform on ``[0, r)``, ``1 <= r < 2^32`` (``bounded_rand_int``)."""
        r64 = np.uint64(r)
        threshold = (_TWO32 - r64) % r64
        while True:
            m = self._peek(1)[0] * r64
            self._next += 1
            if (m & _MASK32) >= threshold:
                return int(m >> np.uint64(32))

    def permutation(self, n: int) -> np.ndarray:
        """LIBSVM's shuffle of ``0..n-1``: ``swap(perm[i], perm[i + bounded(n - i)])`` for
        ``i = 0, ..., n - 1``. The offsets are drawn a block at a time; a rejected draw (rare:
        probability below ``(n - i) / 2^32``) is redrawn one at a time, in the stream's order."""
        ranges = np.arange(n, 0, -1, dtype=np.uint64)
        offsets = np.empty(n, dtype=np.int64)
        i = 0
        while i < n:
            m = self._peek(n - i) * ranges[i:]
            rejected = (m & _MASK32) < (_TWO32 - ranges[i:]) % ranges[i:]
            ok = int(np.argmax(rejected)) if rejected.any() else n - i
            offsets[i:i + ok] = (m[:ok] >> np.uint64(32)).astype(np.int64)
            self._next += ok
            i += ok
            if i < n:
                offsets[i] = self.bounded(n - i)
                i += 1
        perm = np.arange(n)
        for i, offset in enumerate(offsets.tolist()):
            j = i + offset
            perm[i], perm[j] = perm[j], perm[i]
        return perm


def platt_parameters(
    labels: np.ndarray, rng: LibsvmRandom,
    fit_and_decide: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> tuple[float, float]:
    """``(A, B)`` of one binary problem from 5-fold cross-validated decision values
    (``svm_binary_svc_probability``).

    Parameters
    ----------
    labels : (l,) array of -1/+1
        The problem's labels in LIBSVM's order (+1 = the first class).
    rng : LibsvmRandom
        The fit's generator, in the state LIBSVM's would be in.
    fit_and_decide : callable
        ``fit_and_decide(train, test)``: the decision values (``+`` for ``+1``) at the samples
        ``test`` of the SVM fitted on the samples ``train`` (positions in ``labels``). Called
        for a fold only when its training part holds both classes; otherwise the fold's values
        are ``+1`` or ``-1`` (the one class present), as LIBSVM's.
    """
    labels = np.asarray(labels, dtype=np.float64)
    n = labels.size
    perm = rng.permutation(n)
    dec = np.empty(n)
    for fold in range(N_FOLDS):
        begin, end = fold * n // N_FOLDS, (fold + 1) * n // N_FOLDS
        test = perm[begin:end]
        train = np.concatenate([perm[:begin], perm[end:]])
        positives = int(np.count_nonzero(labels[train] > 0))
        negatives = train.size - positives
        if positives and negatives:
            if test.size:  # LIBSVM fits the fold even when it has nothing to decide
                dec[test] = fit_and_decide(train, test)
            rng.reseed()  # LIBSVM's svm_train of the fold re-seeds its generator
        else:
            dec[test] = 1.0 if positives else (-1.0 if negatives else 0.0)
    return sigmoid_train(dec, labels)


def _log_likelihood_terms(dec: np.ndarray, t: np.ndarray, A: float, B: float) -> float:
    """``F(A, B)`` (module docstring), in LIBSVM's overflow-free form."""
    f = dec * A + B
    e = np.exp(-np.abs(f))
    return float(np.sum(np.where(f >= 0, t * f, (t - 1.0) * f) + np.log(1.0 + e)))


def sigmoid_train(dec: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """Platt's ``(A, B)`` by LIBSVM's Newton method (``sigmoid_train``; module docstring)."""
    dec = np.asarray(dec, dtype=np.float64)
    positive = np.asarray(labels) > 0
    prior1 = float(np.count_nonzero(positive))
    prior0 = float(positive.size) - prior1
    max_iter, min_step, sigma, eps = 100, 1e-10, 1e-12, 1e-5
    t = np.where(positive, (prior1 + 1.0) / (prior1 + 2.0), 1.0 / (prior0 + 2.0))
    A, B = 0.0, float(np.log((prior0 + 1.0) / (prior1 + 1.0)))
    fval = _log_likelihood_terms(dec, t, A, B)
    for _ in range(max_iter):
        f = dec * A + B
        e = np.exp(-np.abs(f))
        p = np.where(f >= 0, e / (1.0 + e), 1.0 / (1.0 + e))  # 1 / (1 + exp(f))
        q = np.where(f >= 0, 1.0 / (1.0 + e), e / (1.0 + e))  # 1 - p
        d2 = p * q
        h11 = sigma + float(np.sum(dec * dec * d2))
        h22 = sigma + float(np.sum(d2))
        h21 = float(np.sum(dec * d2))
        d1 = t - p
        g1 = float(np.sum(dec * d1))
        g2 = float(np.sum(d1))
        if abs(g1) < eps and abs(g2) < eps:
            break
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        step = 1.0
        while step >= min_step:
            new_f = _log_likelihood_terms(dec, t, A + step * dA, B + step * dB)
            if new_f < fval + 1e-4 * step * gd:
                A, B, fval = A + step * dA, B + step * dB, new_f
                break
            step /= 2.0
        if step < min_step:
            break  # LIBSVM: "Line search fails in two-class probability estimates"
    return A, B


def sigmoid_predict(dec: np.ndarray, A: float, B: float) -> np.ndarray:
    """``1 / (1 + exp(A f + B))`` without overflow (``sigmoid_predict``)."""
    f = np.asarray(dec, dtype=np.float64) * A + B
    e = np.exp(-np.abs(f))
    return np.where(f >= 0, e / (1.0 + e), 1.0 / (1.0 + e))


def multiclass_probability(r: np.ndarray) -> np.ndarray:
    """Class probabilities ``(n, k)`` from pairwise ones ``r`` ``(n, k, k)``
    (``r[:, i, j] = P(i | i or j)``, ``r[:, j, i] = 1 - r[:, i, j]``) by LIBSVM's iteration
    (``multiclass_probability``; module docstring), run for every row until it stops."""
    n, k = r.shape[0], r.shape[1]
    Q = -r.transpose(0, 2, 1) * r  # Q_tj = -r_jt r_tj
    idx = np.arange(k)
    Q[:, idx, idx] = np.sum(r * r, axis=1) - r[:, idx, idx] ** 2  # sum_{j != t} r_jt^2
    p = np.full((n, k), 1.0 / k)
    eps = 0.005 / k
    active = np.arange(n)
    for _ in range(max(100, k)):
        Qa, pa = Q[active], p[active]
        Qp = np.einsum("ntj,nj->nt", Qa, pa)
        pQp = np.sum(pa * Qp, axis=1)
        going = np.max(np.abs(Qp - pQp[:, None]), axis=1) >= eps
        active, Qa, pa, Qp, pQp = (active[going], Qa[going], pa[going], Qp[going],
                                   pQp[going])
        if active.size == 0:
            break
        for t in range(k):
            diff = (-Qp[:, t] + pQp) / Qa[:, t, t]
            pa[:, t] += diff
            scale = 1.0 + diff
            pQp = (pQp + diff * (diff * Qa[:, t, t] + 2.0 * Qp[:, t])) / scale / scale
            Qp = (Qp + diff[:, None] * Qa[:, t, :]) / scale[:, None]
            pa /= scale[:, None]
        p[active] = pa
    return p


def coupled_probabilities(dec: np.ndarray, prob_a: np.ndarray, prob_b: np.ndarray,
                          pairs: list[tuple[int, int]], k: int) -> np.ndarray:
    """``(n, k)`` class probabilities from the ``(n, n_pairs)`` decision values ``dec``
    (LIBSVM's orientation: ``+`` for the pair's first class) and each pair's Platt ``(A, B)``
    (``svm_predict_probability``)."""
    r = np.zeros((dec.shape[0], k, k))
    for p, (i, j) in enumerate(pairs):
        r_ij = np.clip(sigmoid_predict(dec[:, p], prob_a[p], prob_b[p]), MIN_PROB, 1 - MIN_PROB)
        r[:, i, j] = r_ij
        r[:, j, i] = 1.0 - r_ij
    return multiclass_probability(r)
