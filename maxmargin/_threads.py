"""Threads: the ``n_jobs`` setting, Numba's thread pool and the BLAS thread pools the kernel
blocks run on.

Compiled code calls BLAS through SciPy's library (Numba's ``np.dot``), NumPy through its
own; both are loaded here before the process's thread pools are listed, so a limit reaches
them.

**Numba's threading layer.** ``n_jobs > 1`` starts Numba's thread pool
(:func:`start_numba_threads`) on OpenMP's layer when it loads, ahead of TBB, unless the user
has chosen (``NUMBA_THREADING_LAYER``, ``NUMBA_THREADING_LAYER_PRIORITY``, Numba's config file
or its config set in code): Numba picks TBB whenever it can load it, and oneDAL
(scikit-learn-intelex) uses TBB too, whose ``daalinit(1)`` then caps every TBB parallel region
of the process at one thread, ``n_jobs=2`` included (docs/development/performance-notes.md
has the measurement). This is a choice for the whole process, made once: Numba starts
one pool. GNU OpenMP is not fork-safe: a process forked after its threads ran must not run
``n_jobs > 1`` again (use multiprocessing's ``spawn`` or ``forkserver``, as Dask does); with
``n_jobs`` at 1 (the default) no pool starts.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Iterator
from typing import Any

import numba
import scipy.linalg.cython_blas  # noqa: F401  (loaded before the pools are listed)
from threadpoolctl import ThreadpoolController

from maxmargin._validation import check_positive_int

__all__ = ["check_n_jobs", "blas_threads", "start_numba_threads", "prefer_openmp_layer"]

#: Numba's own ranking of its threading layers (what it uses unless told otherwise).
NUMBA_LAYER_PRIORITY = ["tbb", "omp", "workqueue"]


def check_n_jobs(n_jobs: Any) -> int | None:
    """``n_jobs``: None (the default: one thread for maxmargin's own loops, BLAS as the process
    has it), a positive thread count, or -1 for every core."""
    if n_jobs is None:
        return None
    if isinstance(n_jobs, int) and not isinstance(n_jobs, bool) and n_jobs == -1:
        return max(1, os.cpu_count() or 1)
    return check_positive_int(n_jobs, "n_jobs")


def prefer_openmp_layer() -> None:
    """Rank Numba's threading layers OpenMP, TBB, workqueue (module docstring), unless the user
    has chosen a layer or an order; no effect once Numba's pool has started."""
    chosen = {"NUMBA_THREADING_LAYER", "NUMBA_THREADING_LAYER_PRIORITY"} & set(os.environ)
    if (not chosen and str(numba.config.THREADING_LAYER).lower() == "default"
            and list(numba.config.THREADING_LAYER_PRIORITY) == NUMBA_LAYER_PRIORITY):
        numba.config.THREADING_LAYER_PRIORITY = ["omp", "tbb", "workqueue"]


def start_numba_threads() -> int:
    """Start Numba's thread pool (on OpenMP's layer where the user has not chosen:
    :func:`prefer_openmp_layer`), if it has not started; its thread count."""
    prefer_openmp_layer()
    return numba.get_num_threads()


@functools.cache
def _pools() -> ThreadpoolController:
    """The process's thread pools, listed once (a fresh listing is slow next to a set-up)."""
    return ThreadpoolController()


_limit = threading.local()  # the limit this thread set and is inside of, if any


@contextlib.contextmanager
def blas_threads(threads: int) -> Iterator[None]:
    """BLAS on ``threads`` threads inside the block (cheap to set and restore; nothing
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
