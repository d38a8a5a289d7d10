"""The on-disk cache of :func:`maxmargin._jit.njit` (stale entries cleared, once per edit)
and ``maxmargin compile``'s arguments, on small packages compiled in fresh folders."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from maxmargin import _jit
from maxmargin.cli import main

_HELPER = """
from maxmargin._jit import njit


@njit
def value(x):
    return x + {delta}
"""

_CALLER = """
from maxmargin._jit import njit

from {pkg}.helper import value


@njit
def twice_value(x):
    return 2 * value(x)
"""

_RUN = """
import sys
sys.path.insert(0, {root!r})
from {pkg}.caller import twice_value
print(twice_value(1), twice_value(1.5), twice_value.stats.cache_hits.most_common(),
      twice_value.stats.cache_misses.most_common())
"""


def _package(root: Path, pkg: str, delta: int) -> None:
    """``pkg.caller.twice_value(x) = 2 (x + delta)``, its callee in another module."""
    (root / pkg).mkdir(parents=True, exist_ok=True)
    (root / pkg / "__init__.py").write_text("")
    (root / pkg / "helper.py").write_text(textwrap.dedent(_HELPER.format(delta=delta)))
    caller = root / pkg / "caller.py"
    if not caller.exists():  # written once: its source (and mtime) never change
        caller.write_text(textwrap.dedent(_CALLER.format(pkg=pkg)))


def _run(root: Path, pkg: str, cache: Path) -> list[str]:
    """Call ``twice_value`` on an int and a float in a fresh process with the cache ``cache``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    out = subprocess.run([sys.executable, "-c", _RUN.format(root=str(root), pkg=pkg)], env=env,
                         capture_output=True, text=True, check=True, timeout=300).stdout
    return out.strip().splitlines()[-1].split(" ", 2)


def test_an_edited_callee_module_makes_the_caller_compile_again(tmp_path: Path) -> None:
    """Numba keys a cached function by its own file only; the guard stamps it with the sources
    of the compiled modules it imports, so an edit of the callee's module reaches the caller."""
    root, cache = tmp_path / "src", tmp_path / "cache"
    _package(root, "mm_stale_probe", delta=1)
    first = _run(root, "mm_stale_probe", cache)
    assert first[:2] == ["4", "5.0"] and first[2].startswith("[] ")  # compiled: no hit
    again = _run(root, "mm_stale_probe", cache)
    assert again[:2] == ["4", "5.0"] and again[2].startswith("[((int64,), 1), ((float64,), 1)]")
    _package(root, "mm_stale_probe", delta=10)  # the callee changes, the caller's file not
    edited = _run(root, "mm_stale_probe", cache)
    assert edited[:2] == ["22", "23.0"]  # 2 (1 + 10), 2 (1.5 + 10): not the stale 4 and 5.0
    assert edited[2].startswith("[]")  # no hit: the stale entries were compiled again


def test_two_processes_importing_at_once_clear_stale_entries_once(tmp_path: Path) -> None:
    """Two processes importing an edited package at once (each compiles and saves both
    specialisations of both functions) both run the edited callee; the stamp is stored once
    for the folder, and a third process runs the edited code too."""
    root, cache = tmp_path / "src", tmp_path / "cache"
    _package(root, "mm_race_probe", delta=1)
    assert _run(root, "mm_race_probe", cache)[:2] == ["4", "5.0"]
    _package(root, "mm_race_probe", delta=10)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    code = _RUN.format(root=str(root), pkg="mm_race_probe")
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert out.split()[:2] == ["22", "23.0"]
    assert _run(root, "mm_race_probe", cache)[:2] == ["22", "23.0"]
    stamps = sorted(p.name for p in cache.rglob("*" + _jit.STAMP_SUFFIX)
                    if p.parent.name.startswith("mm_race_probe"))
    assert stamps == ["caller" + _jit.STAMP_SUFFIX, "helper" + _jit.STAMP_SUFFIX]
    assert any(cache.rglob(_jit.LOCK_NAME))


def test_clearing_locks_exclusively_and_only_when_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module whose stored stamp differs is cleared under ``LOCK_EX`` on the cache folder's
    lock, its index and data files deleted; a module whose stamp matches takes no lock."""
    if _jit.fcntl is None:
        pytest.skip("no flock on this platform")
    taken: list[tuple[str, int]] = []
    real = _jit.fcntl.flock

    def recording(fd: int, op: int) -> None:
        taken.append((os.readlink(f"/proc/self/fd/{fd}"), op))
        real(fd, op)

    monkeypatch.setattr(_jit.fcntl, "flock", recording)
    monkeypatch.setattr(_jit, "_stamps", {})
    root = tmp_path / "src"
    _package(root, "mm_lock_probe", delta=1)
    monkeypatch.syspath_prepend(str(root))
    from mm_lock_probe.caller import twice_value  # noqa: PLC0415 - made by this test

    assert [op for _, op in taken] == [_jit.fcntl.LOCK_EX] * 2  # helper, caller: no stamps yet
    assert all(path.endswith(_jit.LOCK_NAME) for path, _ in taken)
    assert _jit.cache_is_cold(twice_value)
    assert twice_value(2) == 6
    assert not _jit.cache_is_cold(twice_value)
    folder = Path(twice_value.stats.cache_path)
    assert list(folder.glob("caller.*.nbi")) and list(folder.glob("caller.*.nbc"))
    taken.clear()
    assert not _jit.clear_if_stale(twice_value, "mm_lock_probe.caller")  # the same sources
    assert taken == []
    (folder / ("caller" + _jit.STAMP_SUFFIX)).write_text("another stamp")
    assert _jit.clear_if_stale(twice_value, "mm_lock_probe.caller")
    assert [op for _, op in taken] == [_jit.fcntl.LOCK_EX]
    assert not list(folder.glob("caller.*.nb[ic]")) and list(folder.glob("helper.*.nbi"))
    assert _jit.cache_is_cold(twice_value)


def test_source_stamp_follows_compiled_imports_only(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The stamp of the caller changes with its callee's module and not with a module of no
    compiled code that it imports."""
    root = tmp_path / "src"
    _package(root, "mm_stamp_probe", delta=1)
    (root / "mm_stamp_probe" / "plain.py").write_text("NOTE = 'a'\n")
    caller = root / "mm_stamp_probe" / "caller.py"
    caller.write_text(caller.read_text() + "from mm_stamp_probe import plain  # noqa\n")
    monkeypatch.syspath_prepend(str(root))
    import mm_stamp_probe.caller  # noqa: F401, PLC0415 - made by this test

    def stamp() -> str:
        _jit._stamps.clear()
        return _jit.source_stamp("mm_stamp_probe.caller")

    before = stamp()
    (root / "mm_stamp_probe" / "plain.py").write_text("NOTE = 'b'\n")
    assert stamp() == before
    _package(root, "mm_stamp_probe", delta=2)
    assert stamp() != before


@pytest.mark.parametrize("jobs", ["0", "-1", "two"])
def test_compile_rejects_a_bad_jobs_count(jobs: str, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["compile", "--jobs", jobs])
    assert exit_.value.code == 2 and "--jobs" in capsys.readouterr().err
