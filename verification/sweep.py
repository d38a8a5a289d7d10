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
import json
import math
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from maxmargin.verification.bounds import BoundCheck
from maxmargin.verification.cases import Case

__all__ = ["case_recipe", "local_client", "load_rows", "write_rows", "row_from_dict"]


def case_recipe(case: Case, suite: str, seed: int) -> tuple[Any, ...]:
    """How a worker gets ``case``: regenerated from its name or seed where possible."""
    if case.area == "random":
        return ("random", int(seed), int(case.name.rsplit("_i", 1)[1]))
    if suite in ("quick", "full") and case.area != "data":
        return ("catalogue", "full", case.name)
    return ("case", case)


@functools.lru_cache(maxsize=2)
def _catalogue(suite: str) -> dict[str, Case]:
    from maxmargin.verification.cases import catalogue

    return {c.name: c for c in catalogue(suite)}


def materialise(recipe: tuple[Any, ...]) -> Case:
    """The case of a :func:`case_recipe` (on the worker)."""
    kind = recipe[0]
    if kind == "random":
        from maxmargin.verification.campaign import random_case

        return random_case(recipe[1], recipe[2])
    if kind == "catalogue":
        return _catalogue(recipe[1])[recipe[2]]
    return recipe[1]


def run_case_task(recipe: tuple[Any, ...], methods: Sequence[Any], timeout: float | None) -> Any:
    """One case on a worker: its rows (with elapsed times) and its figure artifacts."""
    import multiprocessing

    from maxmargin._jit import notices_off
    from maxmargin.verification import suite as s

    case = materialise(recipe)
    artifacts = s.Artifacts()
    if timeout is None:
        with notices_off():  # each worker's first compiles: the caller's notice covers them
            rows = list(s._case_rows_inline(case, methods, artifacts))
    else:
        # Dask's worker processes are daemonic by default, and a daemonic process may not start
        # the forked child of the wall-clock guard: the guard's child is always reaped (killed
        # and joined) by the guard itself, so the flag is lifted for it.
        me = multiprocessing.current_process()
        daemon = me._config.get("daemon")
        me._config["daemon"] = False
        try:
            with notices_off():
                rows = list(s._case_rows_guarded(case, methods, artifacts, timeout))
        finally:
            me._config["daemon"] = daemon
    return rows, artifacts


def local_client(workers: int) -> Any:
    """A Dask ``Client`` on a new local cluster: ``workers`` processes of one thread each, with
    BLAS, OpenMP and Numba capped at one thread per worker, workers allowed to fork (the
    wall-clock guard), no dashboard."""
    import dask
    from dask.distributed import Client, LocalCluster

    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "NUMBA_NUM_THREADS"):
        os.environ.setdefault(var, "1")  # inherited by the worker processes
    dask.config.set({"distributed.worker.daemon": False})
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    return Client(cluster)


def _float(value: Any) -> float:
    if value is None:
        return math.nan
    if value in ("inf", "-inf"):
        return math.inf if value == "inf" else -math.inf
    return float(value)


def row_from_dict(d: dict[str, Any]) -> Any:
    """A :class:`~maxmargin.verification.suite.Row` from its JSON form (``Row.to_dict``)."""
    from maxmargin.verification.suite import COLUMNS, Row

    values = {}
    for name, _ in COLUMNS:
        value = d.get(name)
        if name == "bounds":
            value = tuple(BoundCheck(b["name"], _float(b["value"]), _float(b["bound"]),
                                     bool(b["holds"])) for b in value or ())
        elif name in ("iterations",):
            value = int(value) if value is not None else -1
        elif name == "alpha_unique":
            value = None if value is None else bool(value)
        elif name in ("case", "area", "section", "method", "oracle", "tolerances", "status",
                      "expected_status", "verdict", "reasons", "exception"):
            value = "" if value is None else str(value)
        else:
            value = _float(value)
        values[name] = value
    return Row(**values)


def load_rows(path: str | os.PathLike[str]) -> list[Any]:
    """The rows of a results file (``maxmargin verify --json``); ``ValueError`` naming the file
    when it is not one."""
    path = Path(path)
    try:
        payload = json.loads(path.read_text())
        return [row_from_dict(r) for r in payload["rows"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"`resume` {str(path)!r} is not a results file of maxmargin verify "
                         f"--json ({type(exc).__name__}: {exc}).") from None


def write_rows(path: str | os.PathLike[str], rows: Sequence[Any], suite: str,
               pattern: str | None) -> None:
    """The JSON results document, written atomically (a temporary file, then a rename): an
    interrupted run leaves the previous complete file, never half of one."""
    from maxmargin.verification.suite import COLUMNS

    payload = {"schema": [{"name": n, "description": d} for n, d in COLUMNS],
               "suite": suite, "pattern": pattern, "rows": [r.to_dict() for r in rows]}
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(payload, fh, indent=1)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
