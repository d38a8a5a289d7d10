"""Sweeps: the suite's cases on a Dask cluster, resumable, with results streamed to disk.

Each case (all its methods) is one task. A task carries a *recipe* for its case, not its arrays
where it can: ``("catalogue", suite, name)`` and ``("random", seed, index)`` are regenerated on
the worker (the catalogue and the campaign are deterministic), only a user's data case travels
whole. On the worker the case runs exactly as in a serial run (under the same fork-based
wall-clock guard when ``timeout`` is set), so a row does not depend on the number of workers or
on the order in which tasks finish: the runner puts rows back in plan order.

A task that fails as a whole (its worker died, Dask gave up with ``KilledWorker``, the task
raised) becomes one failed row per method of the case, with the reason; the other tasks go on.

:func:`load_rows` reads a results file written by :func:`write_rows` (the same JSON document as
``maxmargin verify --json``), so a run can skip the ``(case, method)`` rows already done.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
from collections.abc import Sequence
from typing import Any

from maxmargin._jit import notices_off
from maxmargin.verification.campaign import conditioned_case, random_case
from maxmargin.verification.case import Case
from maxmargin.verification.cases import catalogue
from maxmargin.verification.context import Artifacts
from maxmargin.verification.execution import case_rows_guarded, case_rows_inline
from maxmargin.verification.table import load_rows, row_from_dict, write_rows

__all__ = ["case_recipe", "local_client", "load_rows", "write_rows", "row_from_dict"]


def case_recipe(case: Case, suite: str, seed: int) -> tuple[Any, ...]:
    """How a worker gets ``case``: regenerated from its name or seed where possible."""
    if case.area == "random":
        family = case.name.split("_s", 1)[0]
        return (family, int(seed), int(case.name.rsplit("_i", 1)[1]))
    if suite in ("quick", "full") and case.area != "data":
        return ("catalogue", "full", case.name)
    return ("case", case)


@functools.lru_cache(maxsize=2)
def _catalogue(suite: str) -> dict[str, Case]:
    return {c.name: c for c in catalogue(suite)}


def materialise(recipe: tuple[Any, ...]) -> Case:
    """The case of a :func:`case_recipe` (on the worker)."""
    kind = recipe[0]
    if kind == "random":
        return random_case(recipe[1], recipe[2])
    if kind == "conditioned":
        return conditioned_case(recipe[1], recipe[2])
    if kind == "catalogue":
        return _catalogue(recipe[1])[recipe[2]]
    return recipe[1]


def run_case_task(recipe: tuple[Any, ...], methods: Sequence[Any], timeout: float | None) -> Any:
    """One case on a worker: its rows (with elapsed times) and its figure artifacts."""
    case = materialise(recipe)
    artifacts = Artifacts()
    if timeout is None:
        with notices_off():  # each worker's first compiles: the caller's notice covers them
            rows = list(case_rows_inline(case, methods, artifacts))
    else:
        # Dask's worker processes are daemonic by default, and a daemonic process may not start
        # the forked child of the wall-clock guard: the guard's child is always reaped (killed
        # and joined) by the guard itself, so the flag is lifted for it.
        me = multiprocessing.current_process()
        daemon = me._config.get("daemon")
        me._config["daemon"] = False
        try:
            with notices_off():
                rows = list(case_rows_guarded(case, methods, artifacts, timeout))
        finally:
            me._config["daemon"] = daemon
    return rows, artifacts


def local_client(workers: int) -> Any:
    """A Dask ``Client`` on a new local cluster: ``workers`` processes of one thread each, with
    BLAS, OpenMP and Numba capped at one thread per worker, workers allowed to fork (the
    wall-clock guard), no dashboard."""
    import dask  # an optional dependency (the distributed extra)
    from dask.distributed import Client, LocalCluster

    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "NUMBA_NUM_THREADS"):
        os.environ.setdefault(var, "1")  # inherited by the worker processes
    dask.config.set({"distributed.worker.daemon": False})
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    return Client(cluster)
