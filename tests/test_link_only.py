"""Compile-time machinery: link-only libraries for the functions only compiled code calls, and
the faster comparison of Numba's compile flags (both must leave every answer unchanged)."""

from __future__ import annotations

import numba
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numba.core import targetconfig
from numba.core.compiler import Flags

from maxmargin import _numba_flags
from maxmargin._jit import ENTRY, INLINE, INTERNAL, njit
from maxmargin._link_only import LinkOnlyCompiler, LinkOnlyLibrary


@njit(**INTERNAL)
def _scaled_sum(v: np.ndarray, scale: float) -> float:
    s = 0.0
    for x in v:
        s += scale * x
    return s


@njit(**INLINE)
def _square(x: float) -> float:
    return x * x


@njit(**ENTRY)
def _caller(v: np.ndarray) -> float:
    return _scaled_sum(v, 2.0) + _square(v[0])


def test_internal_functions_are_linked_by_their_callers_only() -> None:
    """``INTERNAL`` and ``INLINE`` functions compile link-only; Python's entry points do not.
    A link-only function's library is IR that its caller links and turns into machine code (no
    machine code of its own, serialised as bitcode for the cache); the caller's answer is the
    plain computation's (here without the on-disk cache, so compiled in this process)."""
    v = np.array([1.5, -2.0, 4.25])
    expected = 2.0 * 1.5 + 2.0 * -2.0 + 2.0 * 4.25 + 1.5 * 1.5
    assert _caller(v) == expected
    for helper in (_scaled_sum, _square):
        assert helper._compiler.pipeline_class is LinkOnlyCompiler
    assert _caller._compiler.pipeline_class is not LinkOnlyCompiler  # Python calls it
    scaled = numba.njit(**INTERNAL, pipeline_class=LinkOnlyCompiler)(_scaled_sum.py_func)
    square = numba.njit(**INLINE, pipeline_class=LinkOnlyCompiler)(_square.py_func)

    def call(v: np.ndarray) -> float:
        return scaled(v, 2.0) + square(v[0])

    assert numba.njit(**ENTRY)(call)(v) == expected
    for helper in (scaled, square):
        (cres,) = helper.overloads.values()
        library = cres.library
        assert isinstance(library, LinkOnlyLibrary)
        assert not library.codegen._engine.is_symbol_defined(cres.fndesc.llvm_func_name)
        _, kind, data = library.serialize_using_object_code()
        assert kind == "bitcode" and len(data) > 0
        assert cres.fndesc.llvm_func_name in library.get_llvm_str()


@settings(max_examples=60, deadline=None)
@given(choices=st.lists(st.tuples(st.integers(0, 200), st.booleans()), max_size=12))
def test_the_fast_flag_values_are_numbas(choices) -> None:
    """With :mod:`maxmargin._numba_flags` installed, a set of compile flags gives the values,
    their order, its hash and equality of Numba's own method, whatever options are set."""
    assert _numba_flags.installed()
    names = [k for k, opt in Flags.options.items() if isinstance(opt.default, bool)]
    a, b = Flags(), Flags()
    for k, value in choices:
        setattr(a, names[k % len(names)], value)
        setattr(b, names[(k * 7) % len(names)], value)
    for flags in (a, b, Flags(a)):
        fast, slow = flags.values(), _numba_flags._original(flags)
        assert fast == slow and list(fast) == list(slow)
    assert (a == b) == (_numba_flags._original(a) == _numba_flags._original(b))
    assert hash(a) == hash(tuple(sorted(_numba_flags._original(a))))
    assert targetconfig.TargetConfig.values is _numba_flags._values
