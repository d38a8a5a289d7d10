"""Link-only compilation for the functions that only compiled code calls (``INTERNAL``,
``INLINE`` in :mod:`maxmargin._jit`): LLVM IR for their callers, no machine code of their own.

Numba compiles each function into a library of its own. A caller's library links in the LLVM
IR of its callees and optimises the whole module again, and each library, once compiled, is
optimised at module level and turned into machine code, which the on-disk cache stores. For a
function that Python never calls, that work is wasted: every caller emits the code it runs
itself. :class:`LinkOnlyCompiler` is Numba's nopython pipeline whose last step
(:class:`LinkOnlyLowering`) keeps the function's library as IR for linking
(:class:`LinkOnlyLibrary`): its function passes run, its module passes and machine code do not
(the caller's module passes optimise it with the caller). The cache stores it as LLVM bitcode,
Numba's other serialisation, which loads as an ordinary library. The first ``smo`` call's
compile fell from about 12.4 s to 10.7 s of CPU on this machine, with the same machine code's
results and speed (``docs/development/performance-notes.md``).

Such a function has no entry point for Python: its dispatcher holds a null one, so calling it
from Python crashes the interpreter, as calling a function without a CPython wrapper always
did (tests call them through compiled lambdas).
"""

from __future__ import annotations

from typing import Any

from numba import _dynfunc
from numba.core import codegen
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import PassManager, register_pass
from numba.core.typed_passes import NativeLowering

__all__ = ["LinkOnlyCompiler", "LinkOnlyLibrary", "LinkOnlyLowering"]


class LinkOnlyLibrary(codegen.JITCodeLibrary):
    """A code library that only callers link: finalised without module passes and without
    machine code; serialised as bitcode."""

    def _optimize_final_module(self) -> None:
        """No module passes: each caller's run over the linked module."""

    def _finalize_final_module(self) -> None:
        """Ready for linking; not added to the JIT engine (no machine code)."""
        self._finalize_dynamic_globals()
        self._verify_declare_only_symbols()
        self._finalized = True

    def serialize_using_object_code(self) -> tuple[str, str, bytes]:
        """The cache's form of the library: its module for linking, as bitcode (loaded by
        Numba as an ordinary library)."""
        self._ensure_finalized()
        return (self.name, "bitcode", self._get_module_for_linking().as_bitcode())


@register_pass(mutates_CFG=True, analysis_only=False)
class LinkOnlyLowering(NativeLowering):
    """Numba's native lowering into a :class:`LinkOnlyLibrary`, registered for callers to link
    without an executable entry point."""

    _name = "maxmargin_link_only_lowering"

    def run_pass(self, state: Any) -> bool:
        if state.library is None:
            state.library = LinkOnlyLibrary(state.targetctx.codegen(),
                                            state.func_id.func_qualname)
        flags = state.flags
        compiled = flags.no_compile
        flags.no_compile = True  # lowering only: no get_executable, no machine code
        try:
            super().run_pass(state)
        finally:
            flags.no_compile = compiled
        lowered, library = state["cr"], state.library
        fndesc = lowered.fndesc
        entry = _dynfunc.make_function(fndesc.lookup_module(), fndesc.qualname.split(".")[-1],
                                       "compiled code only", 0, lowered.env, (library,))
        state.targetctx.insert_user_function(entry, fndesc, [library])
        state.reload_init.extend(library._reload_init)
        state["cr"] = lowered._replace(cfunc=entry)
        return True


class LinkOnlyCompiler(CompilerBase):
    """Numba's nopython pipeline with :class:`LinkOnlyLowering` for its native lowering."""

    def define_pipelines(self) -> list[PassManager]:
        pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pm.passes = [(LinkOnlyLowering, "link-only lowering") if pss is NativeLowering
                     else (pss, text) for pss, text in pm.passes]
        pm.finalize()
        return [pm]
