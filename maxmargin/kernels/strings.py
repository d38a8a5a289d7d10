"""Lodhi et al.'s string subsequence kernel (2002): kernels on strings, not vectors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from maxmargin._jit import njit
from maxmargin._validation import check_bool, check_positive, check_positive_int, check_strings
from maxmargin.kernels.base import Kernel

__all__ = ["StringSubsequenceKernel"]


@njit
def _ssk_pair(s: np.ndarray, t: np.ndarray, n: int, lam: float, all_lengths: bool) -> float:
    """Lodhi et al.'s subsequence kernel by the ``O(n |s| |t|)`` dynamic programme.

    With ``K'_0 = 1`` and, for ``i = 1 .. n - 1`` (prefixes ``s[:a]``, ``t[:b]``),

    .. math::

        K''_i(s_{:a}, t_{:b}) &= \\lambda K''_i(s_{:a}, t_{:b-1})
            + [s_a = t_b] \\lambda^2 K'_{i-1}(s_{:a-1}, t_{:b-1}), \\
        K'_i(s_{:a}, t_{:b}) &= \\lambda K'_i(s_{:a-1}, t_{:b}) + K''_i(s_{:a}, t_{:b}), \\
        K_i(s, t) &= \textstyle\\sum_{a, b: s_a = t_b} \\lambda^2 K'_{i-1}(s_{:a-1}, t_{:b-1}),

    returns ``K_n`` (or ``K_1 + ... + K_n`` with ``all_lengths``).
    """
    S, T = s.shape[0], t.shape[0]
    prev = np.ones((S + 1, T + 1))  # K'_{i-1}, starting with K'_0 = 1
    lam2 = lam * lam
    total = 0.0
    for i in range(1, n + 1):
        k_i = 0.0
        for a in range(1, S + 1):
            for b in range(1, T + 1):
                if s[a - 1] == t[b - 1]:
                    k_i += lam2 * prev[a - 1, b - 1]
        if all_lengths or i == n:
            total += k_i
        if i == n:
            break
        cur = np.zeros((S + 1, T + 1))
        kpp = np.zeros(T + 1)
        for a in range(i, S + 1):
            kpp[:] = 0.0
            for b in range(i, T + 1):
                kpp[b] = lam * kpp[b - 1]
                if s[a - 1] == t[b - 1]:
                    kpp[b] += lam2 * prev[a - 1, b - 1]
                cur[a, b] = lam * cur[a - 1, b] + kpp[b]
        prev = cur
    return total


@njit
def _ssk_block(codes_a, starts_a, codes_b, starts_b, n, lam, all_lengths, symmetric):  # noqa: ANN001, ANN202
    m, k = starts_a.shape[0] - 1, starts_b.shape[0] - 1
    out = np.empty((m, k))
    for i in range(m):
        si = codes_a[starts_a[i] : starts_a[i + 1]]
        for j in range(k):
            if symmetric and j < i:
                out[i, j] = out[j, i]
                continue
            out[i, j] = _ssk_pair(si, codes_b[starts_b[j] : starts_b[j + 1]], n, lam,
                                  all_lengths)
    return out


@njit
def _ssk_self(codes, starts, n, lam, all_lengths):  # noqa: ANN001, ANN202
    out = np.empty(starts.shape[0] - 1)
    for i in range(out.shape[0]):
        si = codes[starts[i] : starts[i + 1]]
        out[i] = _ssk_pair(si, si, n, lam, all_lengths)
    return out


def _encode(strings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated code points and start offsets of a sequence of strings."""
    starts = np.zeros(len(strings) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in strings], out=starts[1:])
    text = "".join(strings)
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    return codes, starts


@dataclass(frozen=True)
class StringSubsequenceKernel(Kernel):
    """Lodhi et al.'s string subsequence kernel (2002).

    ``[phi_n(s)]_u = sum over index tuples i with s[i] = u of lam^(i_last - i_first + 1)`` and
    ``K_n(s, t) = <phi_n(s), phi_n(t)>``, computed by the dynamic programme of
    :func:`_ssk_pair`. ``all_lengths=True`` sums ``K_1 + ... + K_length`` (the convention of
    Shogun's ``SubsequenceStringKernel``); ``normalize=True`` divides by
    ``sqrt(K(s, s) K(t, t))``. The points are strings (a list, tuple or 1-D array of ``str``),
    each at least ``length`` characters long.
    """

    length: int = 2
    lam: float = 0.5
    normalize: bool = True
    all_lengths: bool = False
    name = "string"

    def __post_init__(self) -> None:
        object.__setattr__(self, "length", check_positive_int(self.length, "length"))
        lam = check_positive(self.lam, "lam")
        if lam > 1.0:
            raise ValueError(f"`lam` must be in (0, 1]; got {lam!r}.")
        object.__setattr__(self, "lam", lam)
        object.__setattr__(self, "normalize", check_bool(self.normalize, "normalize"))
        object.__setattr__(self, "all_lengths", check_bool(self.all_lengths, "all_lengths"))

    def check_points(self, value: Any, name: str) -> np.ndarray:
        return check_strings(value, name, self.length)

    def _check_pair(self, A: Any, B: Any) -> tuple[Any, Any]:
        return self.check_points(A, "A"), self.check_points(B, "B")

    def _raw(self, A: np.ndarray, B: np.ndarray, symmetric: bool = False) -> np.ndarray:
        ca, sa = _encode(A)
        cb, sb = _encode(B)
        return _ssk_block(ca, sa, cb, sb, self.length, self.lam, self.all_lengths, symmetric)

    def _self(self, X: np.ndarray) -> np.ndarray:
        """``K(s, s)`` of each string (remembered per string: normalisation needs them for
        every block)."""
        cache = self.__dict__.setdefault("_self_cache", {})
        missing = [x for x in dict.fromkeys(X) if x not in cache]
        if missing:
            codes, starts = _encode(np.array(missing, dtype=object))
            for x, v in zip(missing, _ssk_self(codes, starts, self.length, self.lam,
                                               self.all_lengths), strict=True):
                cache[x] = float(v)
        return np.array([cache[x] for x in X])

    def _block(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        K = self._raw(A, B, symmetric=A is B)
        if self.normalize:
            K = K / np.sqrt(np.outer(self._self(A), self._self(B)))
        return K

    def _diag(self, X: np.ndarray) -> np.ndarray:
        return np.ones(len(X)) if self.normalize else self._self(X)

    def describe(self) -> str:
        kind = "all lengths 1.." if self.all_lengths else "length "
        norm = ", normalized" if self.normalize else ""
        return f"string({kind}{self.length}, lam={self.lam:g}{norm})"
