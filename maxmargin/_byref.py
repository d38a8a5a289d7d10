"""Tuples passed to compiled functions by reference: :func:`byref`.

Numba passes a tuple to a compiled function by value, each array of it flattened into its
seven values (data pointer, shape, strides, ...): a call that takes SMO's state, column cache
and Q-matrix (about 50 arrays) passes about 370 values, and LLVM handles every one of them in
every caller and callee. ``byref(t)`` stores the tuple once in its caller's stack frame and
gives a :class:`Ref`, one pointer, whose attributes are the tuple's fields (read-only: the
arrays and records they hold are written through as usual). A compiled function typed on a
``Ref`` takes that pointer; its body is the same code as for the tuple itself.

A ``Ref`` lives as long as the frame of the function that made it: it may be passed down to
the functions it calls, never returned or stored.
"""

from __future__ import annotations

from typing import Any

from numba import types
from numba.core import cgutils
from numba.core.typing.templates import AttributeTemplate
from numba.extending import (
    infer_getattr,
    intrinsic,
    lower_getattr_generic,
    models,
    register_model,
)

__all__ = ["Ref", "byref"]


class Ref(types.Type):
    """A pointer to a named tuple ``inner`` (a ``types.BaseNamedTuple``) in a caller's frame."""

    def __init__(self, inner: types.BaseNamedTuple) -> None:
        self.inner = inner
        super().__init__(name=f"Ref({inner})")

    @property
    def key(self) -> Any:
        return self.inner


@register_model(Ref)
class _RefModel(models.PrimitiveModel):
    def __init__(self, dmm: Any, fe_type: Ref) -> None:
        super().__init__(dmm, fe_type, dmm.lookup(fe_type.inner).get_value_type().as_pointer())


@infer_getattr
class _RefAttributes(AttributeTemplate):
    key = Ref

    def generic_resolve(self, ty: Ref, attr: str) -> Any:
        inner = ty.inner
        if attr in inner.fields:
            return inner.types[inner.fields.index(attr)]
        return None


@lower_getattr_generic(Ref)
def _ref_getattr(context: Any, builder: Any, typ: Ref, value: Any, attr: str) -> Any:
    index = typ.inner.fields.index(attr)
    field = builder.load(cgutils.gep_inbounds(builder, value, 0, index))
    if context.enable_nrt:  # a new reference to the field, as Numba's own attributes give
        context.nrt.incref(builder, typ.inner.types[index], field)
    return field


@intrinsic
def byref(typingctx: Any, t: Any) -> Any:  # noqa: ARG001
    """A :class:`Ref` to the named tuple ``t``, stored in the caller's frame."""
    if not isinstance(t, types.BaseNamedTuple):
        return None

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        return cgutils.alloca_once_value(builder, args[0])

    return Ref(t)(t), codegen
