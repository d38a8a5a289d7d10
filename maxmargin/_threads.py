"""Threads: the ``n_jobs`` setting and the BLAS thread pools the kernel blocks run on.

Compiled code calls BLAS through SciPy's library (Numba's ``np.dot`` and
:func:`~maxmargin.kernels.qmatrix.gemm`), NumPy through its own; both are loaded here before
the process's thread pools are listed, so a limit reaches them.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Iterator
from typing import Any

import scipy.linalg.cython_blas  # noqa: F401  (loaded before the pools are listed)
from threadpoolctl import ThreadpoolController

from maxmargin._validation import check_positive_int

__all__ = ["check_n_jobs", "blas_threads"]


def check_n_jobs(n_jobs: Any) -> int | None:
    """``n_jobs``: None (the default: one thread for maxmargin's own loops, BLAS as the process
    has it), a positive thread count, or -1 for every core."""
    if n_jobs is None:
        return None
    if isinstance(n_jobs, int) and not isinstance(n_jobs, bool) and n_jobs == -1:
        return max(1, os.cpu_count() or 1)
    return check_positive_int(n_jobs, "n_jobs")


@functools.cache
def _pools() -> ThreadpoolController:
    """The process's thread pools, listed once (a fresh listing costs about 0.4 ms)."""
    return ThreadpoolController()


_limit = threading.local()  # the limit this thread set and is inside of, if any


@contextlib.contextmanager
def blas_threads(threads: int) -> Iterator[None]:
    """BLAS on ``threads`` threads inside the block (about 15 us to set and restore; nothing
    inside a block of this thread that set the same limit)."""
    outer = getattr(_limit, "threads", None)
    if outer == threads:
        yield
        return
    with _pools().limit(limits=threads, user_api="blas"):
        _limit.threads = threads
        try:
            yield
        finally:
            _limit.threads = outer
