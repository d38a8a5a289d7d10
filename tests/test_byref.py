"""Named tuples passed to compiled functions by reference (:mod:`maxmargin._byref`): the fields
read and written through a ``Ref``, the types it refuses, and its functions in the on-disk
cache of a fresh process."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

from maxmargin import _jit
from maxmargin._byref import Ref, byref

_RECORD = np.dtype([("count", np.int64), ("total", np.float64)])


class _Probe(NamedTuple):
    values: np.ndarray
    flags: np.ndarray
    record: np.record
    scale: float
    on: bool


def _probe() -> _Probe:
    record = np.zeros(1, np.dtype((np.record, _RECORD)))[0]
    return _Probe(np.arange(5.0), np.zeros(3, dtype=np.bool_), record, 2.5, True)


@njit(**_jit.INTERNAL)
def _bump(p, k):  # noqa: ANN001, ANN202 - typed by Numba (a Ref or the tuple itself)
    """Through ``p``: scale entry ``k``, flag it, count it in the record; the new value."""
    p.values[k] *= p.scale
    p.flags[k % p.flags.shape[0]] = p.on
    p.record.count += 1
    p.record.total += p.values[k]
    return p.values[k]


@njit(**_jit.ENTRY)
def _drive(probe, k):  # noqa: ANN001, ANN202
    """:func:`_bump` on a Ref to ``probe``, twice."""
    p = byref(probe)
    return _bump(p, k) + _bump(p, k)


@njit(**_jit.ENTRY)
def _drive_tuple(probe, k):  # noqa: ANN001, ANN202
    """:func:`_bump` on the tuple itself, twice."""
    return _bump(probe, k) + _bump(probe, k)


def test_a_ref_reads_and_writes_the_tuples_fields() -> None:
    """Arrays and the record written through a Ref are the tuple's own (Python sees them);
    scalars read through it are the tuple's; the values are those of the tuple passed by value."""
    by_ref, by_value = _probe(), _probe()
    assert _drive(by_ref, 3) == _drive_tuple(by_value, 3) == 3.0 * 2.5 + 3.0 * 2.5 * 2.5
    for a, b in ((by_ref.values, by_value.values), (by_ref.flags, by_value.flags)):
        np.testing.assert_array_equal(a, b)
    assert by_ref.values[3] == 3.0 * 2.5 * 2.5 and by_ref.flags[0]
    assert by_ref.record.count == 2 and by_ref.record.total == by_value.record.total
    assert [str(s[0]).startswith("Ref(") for s in _bump.signatures] == [True, False]


def test_a_ref_is_one_pointer_whatever_the_tuple() -> None:
    """The Ref's native value is a pointer to the tuple's (not the ~7 values of each array)."""
    from numba.core.registry import cpu_target  # noqa: PLC0415 - the CPU target's models

    ref = Ref(_drive.signatures[0][0])
    model = cpu_target.target_context.data_model_manager.lookup(ref)
    assert model.get_value_type().is_pointer
    assert ref.key == ref.inner and str(ref) == f"Ref({ref.inner})"


def test_byref_takes_named_tuples_only() -> None:
    with pytest.raises(TypingError):
        njit(lambda a: byref(a))(np.zeros(3))
    with pytest.raises(TypingError):
        njit(lambda a, b: byref((a, b)))(np.zeros(3), np.zeros(2))


def test_a_ref_has_the_tuples_fields_only() -> None:
    with pytest.raises(TypingError, match="missing"):
        njit(lambda p: byref(p).missing)(_probe())


def test_every_stamp_covers_the_extension_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    """A function compiled for a Ref depends on :mod:`maxmargin._byref`'s code generation even
    when its module does not import it: an edit there makes every stamp change."""
    module = "maxmargin.algorithms.smo.bits"  # imports nothing of _byref's
    assert "_byref" not in Path(importlib.import_module(module).__file__).read_text()
    monkeypatch.setattr(_jit, "_stamps", {})
    before = _jit.source_stamp(module)
    real = _jit._source
    monkeypatch.setattr(_jit, "_source",
                        lambda name: b"# edited" if name == "maxmargin._byref" else real(name))
    monkeypatch.setattr(_jit, "_stamps", {})
    assert _jit.source_stamp(module) != before


_HELPER = """
from maxmargin._jit import INTERNAL, njit


@njit(**INTERNAL)
def grow(p, k):
    p.values[k] += p.step
    return p.values[k]
"""

_DRIVER = """
from typing import NamedTuple

import numpy as np

from maxmargin._byref import byref
from maxmargin._jit import ENTRY, njit

from {pkg}.helper import grow


class Pair(NamedTuple):
    values: np.ndarray
    step: float


@njit(**ENTRY)
def run(pair, k):
    return grow(byref(pair), k) + grow(byref(pair), k)


@njit(**ENTRY)
def run_again(pair, k):
    return grow(byref(pair), k)
"""

_RUN = """
import sys
sys.path.insert(0, {root!r})
import numpy as np
from {pkg}.driver import Pair, run, run_again
from {pkg}.helper import grow
pair = Pair(np.zeros(3), 0.5)
print(run(pair, 1), pair.values[1], len(run.stats.cache_hits), len(grow.stats.cache_hits))
if len(sys.argv) > 1:  # a new caller of the helper: the helper's Ref entry is loaded
    print(run_again(pair, 1), len(run.stats.cache_hits), len(grow.stats.cache_hits),
          len(grow.stats.cache_misses))
"""


def test_ref_functions_load_from_the_cache_in_a_fresh_process(tmp_path: Path) -> None:
    """A driver and its helper compiled for a Ref are saved to the on-disk cache and loaded,
    not compiled, by the next process (same answer)."""
    root, cache, pkg = tmp_path / "src", tmp_path / "cache", "mm_byref_probe"
    (root / pkg).mkdir(parents=True)
    (root / pkg / "__init__.py").write_text("")
    (root / pkg / "helper.py").write_text(textwrap.dedent(_HELPER))
    (root / pkg / "driver.py").write_text(textwrap.dedent(_DRIVER.format(pkg=pkg)))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    code = _RUN.format(root=str(root), pkg=pkg)
    outputs = [subprocess.run([sys.executable, "-c", code, *extra], env=env,
                              capture_output=True, text=True, check=True,
                              timeout=300).stdout.split()
               for extra in ([], ["again"])]
    assert outputs[0] == ["1.5", "1.0", "0", "0"]  # 0.5 + 1.0, both compiled
    # loaded: the driver (its helper's code is in it), then the helper for a new caller
    assert outputs[1] == ["1.5", "1.0", "1", "0", "1.5", "1", "1", "0"]
