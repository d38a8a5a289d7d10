"""The verification runner: every (case x method) of the catalogue into one results table.

For each case of :func:`maxmargin.verification.cases.catalogue` the runner solves the ground
truth once (``svm_dual(...).solve()``, Clarabel at interior-point accuracy) and then runs every
method that applies (:data:`METHODS`, module docstring of :mod:`.cases`). Each run becomes one
:class:`Row` with the fixed schema :data:`COLUMNS`. A method that raises is caught *per row*:
the row records the exception's last line and fails; nothing is swallowed.

A row passes when its status is the expected one, the candidate agrees with the oracle within
the named tolerance preset (:func:`~maxmargin.verification.crosscheck.cross_check`), every
theorem checked on it holds (:mod:`~maxmargin.verification.bounds`) and nothing raised.

Artifacts
---------
The report's figures need more than the table: convergence histories and decision functions.
The runner collects them in :class:`Artifacts` (plain arrays, deterministic: fixed seeds, no
timings): ``histories[(case, method)]`` (SMO: ``iteration``, ``violation``; Gilbert/MDM:
``steps``, ``h`` = f_k - rho and the seed's ``bound``) and ``pictures[case]`` for the 2-D cases
(the oracle's decision values on a grid, its support vectors). The tables of the report are
built from the rows alone.

Test hook
---------
:func:`extra_methods` (a context manager) adds methods -- e.g. a deliberately wrong candidate --
to every run made inside it, including ``maxmargin verify``; a :class:`Method` with an
``applies`` predicate runs on the cases it accepts.
"""

from __future__ import annotations

import contextlib
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from maxmargin._validation import check_choice, check_positive, check_positive_int
from maxmargin.verification import warmup
from maxmargin.verification.campaign import FAMILIES, random_cases, reproducer
from maxmargin.verification.case import Case, select
from maxmargin.verification.cases import catalogue
from maxmargin.verification.checks import METHODS, extra_methods, methods_for
from maxmargin.verification.context import Artifacts, Context, Method, Outcome
from maxmargin.verification.execution import (
    case_rows_guarded,
    case_rows_inline,
    failed_row,
    last_line,
)
from maxmargin.verification.progress import progress_for
from maxmargin.verification.sweep import case_recipe, run_case_task
from maxmargin.verification.table import COLUMNS, SECTIONS, Row, write_rows
from maxmargin.verification.warmup import WARM_UPS, numba_cache_is_cold, warm_up

__all__ = [
    "COLUMNS",
    "SECTIONS",
    "Row",
    "Outcome",
    "Method",
    "Context",
    "Artifacts",
    "SuiteRun",
    "SuiteInterrupted",
    "METHODS",
    "WARM_UPS",
    "run_suite",
    "extra_methods",
    "numba_cache_is_cold",
    "warm_up",
]


class SuiteInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run_suite`: the rows that finished (written to ``stream`` when one
    was given) travel with it."""

    def __init__(self, rows: tuple[Row, ...], stream: str | None) -> None:
        super().__init__(f"interrupted after {len(rows)} rows")
        self.rows, self.stream = rows, stream


@dataclass(frozen=True)
class SuiteRun:
    """Rows, artifacts and what was run."""

    suite: str
    pattern: str | None
    rows: tuple[Row, ...]
    artifacts: Artifacts
    elapsed: float

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.rows)


#: ``run_suite(stream=...)``: the results file is rewritten at most this often (and at the end).
STREAM_EVERY_S = 2.0


def run_suite(
    suite: str = "quick",
    pattern: str | Sequence[str] | None = None,
    *,
    progress: TextIO | None = sys.stderr,
    cases: Sequence[Case] | None = None,
    count: int | None = None,
    seed: int = 0,
    start: int = 0,
    timeout: float | None = None,
    client: Any = None,
    resume: Sequence[Row] | None = None,
    stream: str | None = None,
) -> SuiteRun:
    """Run every method on every case of ``suite`` whose name matches ``pattern``.

    Parameters
    ----------
    suite : {"quick", "full", "random", "conditioned"}
        ``"random"`` is the adversarial campaign (:mod:`.campaign`): ``count`` cases from
        ``seed``, starting at case ``start``; ``"conditioned"`` its ill-conditioned family
        (``C max K_ii`` from 1e3 to 1e7, judged against an outside solver).
    pattern : str or sequence of str, optional
        Shell-style patterns or substrings of case names (:func:`.cases.select`); a case runs
        when it matches any of them.
    progress : text stream or None
        Where the progress (checks done of all, failures so far, time left: a bar on a
        terminal, plain lines elsewhere, :mod:`.progress`) and one line per failed row go
        (default stderr); None for silence. A failed random case also prints
        its one-line reproducer.
    cases : sequence of Case, optional
        Run these instead of the catalogue (``suite`` is then only a label).
    count, seed, start : int
        The random campaign's size, seed and first case index.
    timeout : float, optional
        Wall-clock guard in seconds per (case x method): each case runs in a forked worker and a
        method that runs longer (or crashes its process) becomes a failed row with the reason;
        the other rows are kept. None runs everything in this process, unguarded.
    client : dask.distributed.Client, optional
        Run each case as a task on this Dask cluster (:mod:`.sweep`); the rows are the same as
        a serial run's, in the same order.
    resume : sequence of Row, optional
        Rows already computed (:func:`.sweep.load_rows`): their ``(case, method)`` are not run
        again, and they are part of the result.
    stream : path, optional
        Write the results (JSON, as ``maxmargin verify --json``) atomically as rows arrive
        (at most every :data:`STREAM_EVERY_S` seconds, and at the end).

    Returns
    -------
    SuiteRun
    """
    t0 = time.perf_counter()
    check_choice(suite, "suite", ("quick", "full", "random", "conditioned", "data"))
    if cases is not None:
        pool = tuple(cases)
    elif suite in FAMILIES:
        if count is None:
            raise ValueError("`count` is needed for the random suite (e.g. --count 100).")
        count = check_positive_int(count, "count")
        start = check_positive_int(start, "start", minimum=0)
        seed = check_positive_int(seed, "seed", minimum=0)
        pool = random_cases(count, seed, start, suite)
    else:
        pool = catalogue(suite)
    patterns = [pattern] if pattern is None or isinstance(pattern, str) else list(pattern)
    chosen = tuple(c for c in pool if any(c in select((c,), p) for p in patterns))
    if not chosen:
        shown = ", ".join(repr(p) for p in patterns)
        raise ValueError(f"`case` pattern {shown} matches no case of the {suite} suite.")
    if timeout is not None:
        timeout = check_positive(timeout, "timeout")
    label = (suite if suite not in FAMILIES
             else f"{suite}(seed={seed}, start={start}, count={count})")
    shown_pattern = pattern if isinstance(pattern, str | None) else ",".join(pattern)
    artifacts = Artifacts()
    done = {(r.case, r.method): r for r in (resume or ())}
    plan = [(case, [m for m in methods_for(case) if (case.name, m.name) not in done])
            for case in chosen]
    new_rows: dict[tuple[str, str], Row] = {}
    total = sum(len(ms) for _, ms in plan)
    bar = None if progress is None else progress_for(total, progress)
    failures = 0
    last_write = 0.0

    def ordered() -> list[Row]:
        """Every row so far in plan order (resumed ones included)."""
        out = []
        for case in chosen:
            for m in methods_for(case):
                row = new_rows.get((case.name, m.name)) or done.get((case.name, m.name))
                if row is not None:
                    out.append(row)
        return out

    def record(case: Case, row: Row, elapsed: float) -> None:
        nonlocal failures, last_write
        new_rows[(case.name, row.method)] = row
        if stream is not None and time.perf_counter() - last_write > STREAM_EVERY_S:
            write_rows(stream, ordered(), label, shown_pattern)
            last_write = time.perf_counter()
        if bar is None:
            return
        failures += not row.passed
        bar.set_postfix_str(f"{failures} failed; {case.name} {row.method}", refresh=False)
        bar.update(1)
        if not row.passed:
            bar.write(f"FAIL {case.name} / {row.method} ({elapsed:.2f} s): {row.reasons}",
                      file=progress)
            if case.area == "random":
                index = int(case.name.rsplit("_i", 1)[1])
                family = case.name.split("_s", 1)[0]
                bar.write(f"      reproduce: {reproducer(seed, index, family)}",
                          file=progress)

    try:
        if client is None:
            # guarded: each worker inherits the compiled code of its case's methods, warmed up
            # here first; on an empty Numba cache (and a guard that allows a compile) the worker
            # compiles them into the cache instead, so that rows come while the rest compiles,
            # and this process loads them from the cache afterwards. The worker then runs the
            # methods that need no compiled code first (the oracles': rows within seconds);
            # ordered() keeps the plan's order for the table.
            defer = (timeout is not None and timeout >= warmup.COMPILE_GUARD_S
                     and warmup.numba_cache_is_cold())
            for case, methods in plan:
                pieces = [piece for m in methods for piece in m.warm]
                if defer:
                    methods = sorted(methods, key=lambda m: bool(m.warm))
                if timeout is not None and not defer:
                    warm_up(pieces)
                produce = (case_rows_inline(case, methods, artifacts) if timeout is None
                           else case_rows_guarded(case, methods, artifacts, timeout))
                for row, elapsed in produce:
                    record(case, row, elapsed)
                if defer:
                    warm_up(pieces)
        else:
            _run_on_client(client, plan, suite, seed, timeout, artifacts, record)
    except KeyboardInterrupt:  # Ctrl-C: keep what finished (the streamed results), then stop
        if bar is not None:
            bar.close()
        rows = ordered()
        if stream is not None:
            write_rows(stream, rows, label, shown_pattern)
        raise SuiteInterrupted(tuple(rows), stream) from None
    if bar is not None:
        bar.close()
    rows = ordered()
    if stream is not None:
        write_rows(stream, rows, label, shown_pattern)
    return SuiteRun(suite=label, pattern=shown_pattern, rows=tuple(rows), artifacts=artifacts,
                    elapsed=time.perf_counter() - t0)


def _run_on_client(
    client: Any, plan: Sequence[tuple[Case, list[Method]]], suite: str, seed: int,
    timeout: float | None, artifacts: Artifacts, record: Callable[[Case, Row, float], None],
) -> None:
    """Every case of ``plan`` as one Dask task (:func:`.sweep.run_case_task`); a task that
    fails as a whole gives one failed row per method, with the reason."""
    from dask.distributed import as_completed  # an optional dependency (the distributed extra)

    if timeout is not None:  # each worker loads the plan's compiled code once (not every
        # piece: on an empty cache that compiled all of them); its forks inherit it. A worker
        # lost meanwhile (a closed connection) loads it on first use instead
        pieces = sorted({piece for _, methods in plan for m in methods for piece in m.warm})
        with contextlib.suppress(OSError):
            client.run(warm_up, pieces)
    futures = {}
    for case, methods in plan:
        if methods:
            future = client.submit(run_case_task, case_recipe(case, suite, seed), methods,
                                   timeout, pure=False)
            futures[future] = (case, methods)
    for future in as_completed(list(futures)):
        case, methods = futures.pop(future)
        try:
            pairs, produced = future.result()
        except Exception as exc:  # KilledWorker, a lost worker, a task that raised
            why = f"the Dask task failed: {last_line(exc)}"
            for m in methods:
                record(case, *failed_row(case, m, why, math.nan))
            continue
        artifacts.update(produced)
        for row, elapsed in pairs:
            record(case, row, elapsed)
