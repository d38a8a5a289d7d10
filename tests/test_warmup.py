"""The warm-up of a cold ``verify``: pieces compiled ahead in other processes while the checks
run (waited for, not compiled twice), the tasks covering what the quick suite needs, and the
compiled specialisations (no function compiled twice for types that differ only in width,
layout, mutability or literalness; Platt's driver without the wide-data prefetch)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from maxmargin.verification import warmup
from maxmargin.verification.cases import catalogue
from maxmargin.verification.suite import methods_for


def _recorder(path: Path, name: str, die_in_child: bool = False):  # noqa: ANN202
    """A warm-up piece that appends ``name pid`` to ``path`` (``os._exit(3)`` instead in a
    process other than this one when ``die_in_child``)."""
    parent = os.getpid()

    def piece() -> None:
        if die_in_child and os.getpid() != parent:
            os._exit(3)
        with open(path, "a") as fh:
            fh.write(f"{name} {os.getpid()}\n")

    return piece


@pytest.fixture
def probes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Two probe pieces as the only tasks; ``b`` dies in the compiling processes."""
    log = tmp_path / "log"
    monkeypatch.setattr(warmup, "_WARMED", set())
    monkeypatch.setattr(warmup, "COMPILE_TASKS", (("a",), ("b",)))
    monkeypatch.setitem(warmup.WARM_UPS, "a", _recorder(log, "a"))
    monkeypatch.setitem(warmup.WARM_UPS, "b", _recorder(log, "b", die_in_child=True))
    return log


def test_warm_up_waits_for_a_piece_compiled_ahead_and_then_loads_it(probes: Path) -> None:
    """Inside ``compiling_ahead`` the cache does not count as cold (no case compiles in its
    worker); ``warm_up`` runs a piece only after a compiling process has run it (it then loads
    what that process put in the cache), and runs a piece itself when the process that took
    it died; on leaving, the processes are joined and the state is cleared."""
    me = str(os.getpid())
    with warmup.compiling_ahead(2):
        assert not warmup.numba_cache_is_cold()
        warmup.warm_up(["a", "b"])
        lines = [line.split() for line in probes.read_text().splitlines()]
        assert lines[0][0] == "a" and lines[0][1] != me  # compiled ahead, in another process
        assert ["a", me] in lines and ["b", me] in lines  # then here, once each
        assert lines.index(["a", me]) > 0
        assert [name for name, _ in lines].count("b") == 1  # its process died: here only
    assert warmup._AHEAD == {}
    assert warmup.compile_tasks(False) == [("a",), ("b",)]


def test_compile_all_warms_every_task_up_in_turn_or_in_processes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``maxmargin compile``'s pieces: one triple per piece, in task order, here (one job) or
    in forked processes (two), SMO's driver for wide data only when asked for."""
    log = tmp_path / "log"
    monkeypatch.setattr(warmup, "COMPILE_TASKS", (("a", "smo_large"), ("b",)))
    for name in ("a", "b", "smo_large"):
        monkeypatch.setitem(warmup.WARM_UPS, name, _recorder(log, name))
    for jobs, large in ((1, False), (2, True)):
        monkeypatch.setattr(warmup, "_WARMED", set())
        done = warmup.compile_all(jobs, large=large)
        assert [piece for piece, _, _ in done] == (["a", "smo_large", "b"] if large
                                                   else ["a", "b"])
        assert all(wall >= 0.0 and cpu >= 0.0 for _, wall, cpu in done)
    pids = {line.split()[1] for line in log.read_text().splitlines()}
    assert str(os.getpid()) in pids and len(pids) >= 2


def _slow(path: Path):  # noqa: ANN202
    """A piece that says it started (with its pid), then would take ten minutes."""

    def piece() -> None:
        with open(path, "a") as fh:
            fh.write(f"start {os.getpid()}\n")
        time.sleep(600.0)
        with open(path, "a") as fh:
            fh.write("end\n")

    return piece


def test_a_block_that_raises_stops_the_compiling_processes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A block that raises (Ctrl-C) kills the compiling process mid-piece rather than waiting
    for it: the piece never ends, its process is gone, the state is cleared."""
    log = tmp_path / "log"
    monkeypatch.setattr(warmup, "_WARMED", set())
    monkeypatch.setattr(warmup, "COMPILE_TASKS", (("slow",),))
    monkeypatch.setitem(warmup.WARM_UPS, "slow", _slow(log))
    with pytest.raises(KeyboardInterrupt), warmup.compiling_ahead(1):
        for _ in range(600):  # until the piece has started (at most a minute)
            if log.exists() and log.read_text():
                break
            time.sleep(0.1)
        raise KeyboardInterrupt
    lines = log.read_text().split()
    assert lines[0] == "start" and "end" not in lines
    with pytest.raises(ProcessLookupError):  # killed and joined (reaped)
        os.kill(int(lines[1]), 0)
    assert warmup._AHEAD == {}


def test_a_process_forked_while_compiling_ahead_does_not_wait_for_it(probes: Path) -> None:
    """A case's worker, forked inside the block, starts with no compiling processes to wait
    for (the pipes' messages are the parent's to read)."""
    import multiprocessing

    def child() -> None:
        os._exit(0 if warmup._AHEAD == {} else 1)

    with warmup.compiling_ahead(1):
        assert warmup._AHEAD
        proc = multiprocessing.get_context("fork").Process(target=child)
        proc.start()
        proc.join()
        assert proc.exitcode == 0
        warmup.warm_up(["a"])  # the parent still waits for, and reads, its processes


def test_the_tasks_compile_what_the_quick_suite_needs_and_the_nu_solvers_last() -> None:
    """Every piece a quick-suite check names is compiled ahead (none is left to a case), each
    once; the ν-solvers' piece, needed by the catalogue's last cases only, is the last task
    (the first cases run while it compiles); SMO's driver for wide data only for data files."""
    needed = {p for case in catalogue("quick") for m in methods_for(case) for p in m.warm}
    tasks = warmup.compile_tasks(False)
    ahead = [p for task in tasks for p in task]
    assert needed <= set(ahead) and len(ahead) == len(set(ahead))
    assert set(ahead) <= set(warmup.WARM_UPS) and "smo_large" not in ahead
    assert tasks[-1] == ("nu",)
    first = {p for case in catalogue("quick")[:26] for m in methods_for(case) for p in m.warm}
    assert "nu" not in first
    assert "smo_large" in {p for task in warmup.compile_tasks(True) for p in task}


def test_maxmargin_compile_warms_every_piece_once() -> None:
    """``maxmargin compile`` (every=True) takes every piece of :data:`WARM_UPS` once, the
    quick suite's first; ``verify``'s tasks leave out the pieces no quick check needs."""
    every = [p for task in warmup.compile_tasks(True, every=True) for p in task]
    assert sorted(every) == sorted(warmup.WARM_UPS) and len(every) == len(set(every))
    assert every[:len(every) - len(warmup.LATER_TASKS)] == [
        p for task in warmup.compile_tasks(True) for p in task]


def test_the_linear_piece_compiles_what_linear_fits_run() -> None:
    """After the ``linear`` piece, fits of every linear solver on other data (dense and CSR,
    both losses, tight tolerances that reach the hinge's exact finish, with and without an
    intercept) compile no further specialisation."""
    import gc
    import warnings
    import weakref

    import numpy as np
    import scipy.sparse as sp
    from numba.core.registry import CPUDispatcher

    from maxmargin.algorithms import cs_dcd, dcd, dcd_svc, l1_cdn

    def signatures() -> set[tuple[str, str]]:
        # type() first: isinstance() on a weak proxy whose object is gone raises
        live = [o for o in gc.get_objects() if type(o) not in weakref.ProxyTypes]
        return {(o.py_func.__qualname__, str(sig)) for o in live
                if isinstance(o, CPUDispatcher) and o.py_func.__module__.startswith("maxmargin")
                for sig in o.signatures}

    warmup.WARM_UPS["linear"]()
    before = signatures()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 6))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=300) > 0, 1.0, -1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rows in (X, sp.csr_matrix(X)):
            for loss in ("hinge", "squared_hinge"):
                for tol, scaling in ((1e-3, 1.0), (1e-8, 1.0), (1e-3, None)):
                    dcd(rows, y, loss=loss, tol=tol, intercept_scaling=scaling)
            for tol in (1e-3, 1e-8):
                dcd_svc(rows, y, tol=tol)
                l1_cdn(rows, y, tol=tol)
            for scaling in (1.0, None):
                cs_dcd(rows, np.arange(300) % 4, n_classes=4, intercept_scaling=scaling)
    assert signatures() - before == set()


_SIGNATURES = """
import gc
from numba import types
from numba.core.registry import CPUDispatcher
from maxmargin.algorithms.smo import columns, loops
from maxmargin.verification.warmup import compile_tasks, warm_up

warm_up([p for task in compile_tasks(False) for p in task])


def norm(t):
    '''The type with integer width, array layout and mutability, and literalness erased.'''
    if isinstance(t, types.Literal):
        return norm(t.literal_type)
    if isinstance(t, types.Integer):
        return "int"
    if isinstance(t, types.Boolean):
        return "bool"
    if isinstance(t, types.Array):
        return ("array", norm(t.dtype), t.ndim)
    if isinstance(t, types.BaseTuple) and not isinstance(t, types.BaseNamedTuple):
        return ("tuple", *map(norm, t.types))
    return str(t)


for o in gc.get_objects():
    if isinstance(o, CPUDispatcher) and o.py_func.__module__.startswith("maxmargin"):
        seen = {}
        for sig in o.signatures:
            key = tuple(map(norm, sig))
            if key in seen:
                print("twice", o.py_func.__qualname__, seen[key], sig)
            seen[key] = sig
print("drivers", len(loops.solve_pairs.signatures), len(loops.solve_platt.signatures),
      len(columns.prefetch.signatures))
"""


def test_the_quick_suites_warm_up_compiles_each_specialisation_once() -> None:
    """After the quick suite's warm-up (loaded from the cache, or compiled): no compiled
    function has two signatures that differ only in integer width, array layout or
    mutability, or a literal argument (the same machine code twice); SMO's driver has its four
    (C-SVC and ν-SVC, float32 and float64 caches), Platt's its two, and the wide-data prefetch
    none (no small problem compiles it)."""
    out = subprocess.run([sys.executable, "-c", _SIGNATURES], capture_output=True, text=True,
                         check=True, timeout=1800).stdout
    assert out.strip().splitlines() == ["drivers 4 2 0"]
