"""Compiled code warmed up before the checks that run it: each check names the pieces it needs
(``Method.warm``), and :func:`warm_up` compiles (or loads from Numba's on-disk cache) their
specialisations once per process, on a four-point problem, so that forked workers inherit them.

On an empty cache, :func:`compiling_ahead` compiles the pieces into the on-disk cache in
parallel processes while the checks run: :func:`warm_up` waits for a piece that one of them
is compiling (then loads it) instead of compiling it a second time, so that the checks of the
first cases run while the last pieces compile.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.connection import Connection, wait
from typing import Any

import numpy as np

from maxmargin._jit import cache_is_cold, notices_off
from maxmargin.algorithms import (
    gilbert_svm,
    kernel_perceptron,
    mdm_hulls,
    nu_smo,
    one_class_hull,
    one_class_smo,
    perceptron,
    smo,
)
from maxmargin.algorithms.smo.loops import solve_pairs, warm_large_data

__all__ = [
    "COMPILE_GUARD_S",
    "COMPILE_TASKS",
    "WARM_UPS",
    "compile_all",
    "compile_pieces",
    "compile_tasks",
    "compiling_ahead",
    "numba_cache_is_cold",
    "warm_up",
]


def numba_cache_is_cold() -> bool:
    """Whether SMO's compiled driver has no entry in Numba's on-disk cache yet (a first run
    compiles the loops, which takes tens of seconds) and no process of
    :func:`compiling_ahead` is compiling it."""
    return not _AHEAD and cache_is_cold(solve_pairs)


#: A guard (seconds) long enough for a worker to compile its methods' code itself.
COMPILE_GUARD_S = 60.0
_WARM_X = np.array([[0.0, 0.0], [1.0, 0.2], [2.0, 2.0], [3.0, 2.5]])
_WARM_Y = np.array([-1.0, -1.0, 1.0, 1.0])
_KERNELS = ("linear", "rbf", "poly")


def _warm_smo(working_sets: tuple[str, ...]) -> Callable[[], None]:
    def warm() -> None:
        for kernel in _KERNELS:
            for working_set in working_sets:
                for precision in ("auto", "double"):
                    for C in (1.0, None):
                        smo(_WARM_X, _WARM_Y, C=C, kernel=kernel, working_set=working_set,
                            precision=precision)

    return warm


def _warm_nearest() -> None:
    for kernel in _KERNELS:
        for method in ("gilbert", "mdm", "wolfe"):
            gilbert_svm(_WARM_X, _WARM_Y, method=method, kernel=kernel)
    mdm_hulls(_WARM_X[_WARM_Y > 0], _WARM_X[_WARM_Y < 0])


def _warm_nu() -> None:
    for kernel in _KERNELS:
        nu_smo(_WARM_X, _WARM_Y, 0.5, kernel=kernel)
        one_class_smo(_WARM_X, 0.5, kernel=kernel)


def _warm_nu_hulls() -> None:
    for kernel in _KERNELS:  # nu = 0.9 and 0.5: bounds below 1, the reduced hulls' loops
        for method in ("mdm", "wolfe"):
            gilbert_svm(_WARM_X, _WARM_Y, nu=0.9, method=method, kernel=kernel)
            one_class_hull(_WARM_X, 0.5, method=method, kernel=kernel)


def _warm_perceptrons() -> None:
    for kernel in _KERNELS:
        kernel_perceptron(_WARM_X, _WARM_Y, kernel=kernel)
    perceptron(_WARM_X, _WARM_Y)


#: The compiled code of the methods (``Method.warm``), by piece: each call compiles (or loads
#: from Numba's on-disk cache) its specialisations, on a four-point problem.
WARM_UPS: dict[str, Callable[[], None]] = {
    "smo": _warm_smo(("wss2", "wss1")),
    "smo_large": warm_large_data,  # the drivers only large problems select
    "platt": _warm_smo(("platt",)),
    "nearest": _warm_nearest,
    "perceptron": _warm_perceptrons,
    "nu": _warm_nu,  # nu_smo and one_class_smo (the nu checks, verification/nu_checks.py)
    "nu_hulls": _warm_nu_hulls,  # MDM and Wolfe on reduced hulls (the same)
}
_WARMED: set[str] = set()
#: The pieces as tasks, in the order compiling processes take them (each process the next task
#: when it is done): SMO's and the nearest-point methods' (the largest) first, then Platt's
#: (its callees are SMO's, in the cache by then) and the perceptrons': the first cases of the
#: catalogue need all four. The ν-solvers' come last: their checks are the catalogue's last,
#: so the other cases run while they compile. SMO's driver for wide data follows SMO in its
#: task (it loads the callees it shares with SMO from the cache); only data files select it.
COMPILE_TASKS: tuple[tuple[str, ...], ...] = (
    ("smo", "smo_large"), ("nearest",), ("platt",), ("perceptron",), ("nu",))
#: The state of :func:`compiling_ahead` while it runs: ``pending`` (pieces not compiled yet),
#: ``taken`` (by connection: the pieces its process took).
_AHEAD: dict[str, Any] = {}
# A process forked while they compile (a case's worker) does not wait for them: its pieces
# were warmed up before the fork, and the pipes' messages are this process's to read.
os.register_at_fork(after_in_child=_AHEAD.clear)


def warm_up(pieces: Iterable[str] | None = None) -> None:
    """Compile (or load from Numba's on-disk cache) the specialisations of ``pieces`` (keys of
    :data:`WARM_UPS`; all when None) in this process, once. ``maxmargin compile`` warms all of
    them up after an install; ``verify`` warms up each case's pieces before forking its
    worker, so that the worker inherits them and the first rows come before all is compiled.
    A piece that a process of :func:`compiling_ahead` is compiling is waited for, then loaded."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for piece in WARM_UPS if pieces is None else pieces:
            if piece not in _WARMED:
                _await(piece)
                WARM_UPS[piece]()
                _WARMED.add(piece)


def compile_pieces(pieces: Iterable[str]) -> list[tuple[str, float, float]]:
    """Warm ``pieces`` up in turn in this process, without first-compile notices: ``(piece,
    wall seconds, CPU seconds)`` each."""
    done = []
    for piece in pieces:
        wall, cpu = time.perf_counter(), time.process_time()
        with notices_off():
            warm_up([piece])
        done.append((piece, time.perf_counter() - wall, time.process_time() - cpu))
    return done


def compile_tasks(large: bool) -> list[tuple[str, ...]]:
    """:data:`COMPILE_TASKS`, SMO's driver for wide data only when ``large``."""
    return [tuple(p for p in task if large or p != "smo_large") for task in COMPILE_TASKS]


def compile_all(jobs: int, large: bool = True) -> list[tuple[str, float, float]]:
    """Warm the pieces of :func:`compile_tasks` up in ``jobs`` forked processes (here when 1),
    each taking the next task when it is done: :func:`compile_pieces`' triples."""
    tasks = compile_tasks(large)
    if jobs == 1:
        return compile_pieces(sum(tasks, ()))
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(jobs, mp_context=context) as pool:
        return [t for done in pool.map(compile_pieces, tasks) for t in done]


def _compile_worker(tasks: list[tuple[str, ...]], counter: Any, sender: Connection) -> None:
    """A process of :func:`compiling_ahead`: take the next task until none is left; say
    ``("taken", piece)`` and ``("done", piece)`` for each of its pieces. A piece that fails
    here counts as done: :func:`warm_up` then compiles it in the process that needs it (and
    raises there)."""
    while True:
        with counter.get_lock():
            k = counter.value
            counter.value = k + 1
        if k >= len(tasks):
            break
        for piece in tasks[k]:
            sender.send(("taken", piece))
            with contextlib.suppress(Exception):
                compile_pieces([piece])
            sender.send(("done", piece))
    sender.close()


@contextlib.contextmanager
def compiling_ahead(jobs: int, large: bool = False) -> Iterator[None]:
    """Compile the pieces of :data:`COMPILE_TASKS` (SMO's driver for wide data only when
    ``large``) into Numba's on-disk cache in ``jobs`` forked processes while the block runs;
    :func:`warm_up` waits for a piece they have not compiled yet (module docstring). On leaving
    the block, wait for them (stop them when the block raised)."""
    context = multiprocessing.get_context("fork")
    tasks = compile_tasks(large)
    counter = context.Value("i", 0)
    procs, conns = [], []
    for _ in range(max(1, min(jobs, len(tasks)))):
        receiver, sender = context.Pipe(duplex=False)
        proc = context.Process(target=_compile_worker, args=(tasks, counter, sender),
                               daemon=True)
        proc.start()
        sender.close()
        procs.append(proc)
        conns.append(receiver)
    _AHEAD.update(pending={p for task in tasks for p in task}, taken={c: set() for c in conns})
    try:
        yield
    except BaseException:
        for proc in procs:
            proc.kill()
        raise
    finally:
        _AHEAD.clear()
        for proc in procs:
            proc.join()
        for conn in conns:
            conn.close()


def _await(piece: str) -> None:
    """Wait until no process of :func:`compiling_ahead` is to compile ``piece`` any more: it
    reported it done, or the process that took it ended (then this one compiles it)."""
    pending, taken = _AHEAD.get("pending", set()), _AHEAD.get("taken", {})
    while piece in pending and taken:
        for conn in wait(list(taken)):
            try:
                kind, done = conn.recv()
            except EOFError:  # its process ended: what it took and did not finish is ours
                pending.difference_update(taken.pop(conn))
                continue
            if kind == "taken":
                taken[conn].add(done)
            else:
                taken[conn].discard(done)
                pending.discard(done)
