"""Float maxima as integer maxima: the bit casts that let SMO's scans vectorise.

Non-negative float64 values order as their IEEE bits read as int64, and with the bits of a
negative value flipped (all but the sign) every float64 does (:func:`ordered`). Integer maxima
vectorise where float ones do not, so the working-set scans take their maxima over these
integers and then find the position with :func:`last_of`.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import intrinsic

from maxmargin._jit import INLINE, njit

__all__ = ["bits", "as_float", "ordered", "unordered", "last_of", "SEARCH_BLOCK"]

#: Block length of :func:`last_of`'s backward search (tested a block at a time).
SEARCH_BLOCK = 64


@intrinsic
def bits(typingctx, x):  # noqa: ANN001, ANN202
    """The IEEE bits of a float64 as an int64 (a bit cast): for ``x >= +0`` and ``x = -1`` they
    order as ``x`` does."""
    if x != types.float64:
        return None

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        return builder.bitcast(args[0], context.get_value_type(types.int64))

    return types.int64(types.float64), codegen


@intrinsic
def as_float(typingctx, b):  # noqa: ANN001, ANN202
    """:func:`bits`' inverse."""
    if b != types.int64:
        return None

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        return builder.bitcast(args[0], context.get_value_type(types.float64))

    return types.float64(types.int64), codegen


@njit(**INLINE)
def ordered(x: float) -> int:
    """An int64 that orders as the float64 ``x`` does, signs included (the bits of a negative
    ``x`` with all but the sign flipped; ``-0.0`` below ``+0.0``)."""
    b = bits(x)
    return b ^ ((b >> 63) & 0x7FFFFFFFFFFFFFFF)


@njit(**INLINE)
def unordered(o: int) -> float:
    """:func:`ordered`'s inverse (the same flip undoes it)."""
    return as_float(o ^ ((o >> 63) & 0x7FFFFFFFFFFFFFFF))


@njit(**INLINE)
def last_of(values: np.ndarray, top: float) -> int:
    """The last ``k`` with ``values[k] == top`` (``top`` must occur): blocks of ``SEARCH_BLOCK``
    from the end are tested with a loop that vectorises (an OR over the block), then the block
    that holds ``top`` is searched backwards."""
    k = values.shape[0]
    while k > SEARCH_BLOCK:
        block = values[k - SEARCH_BLOCK : k]
        hit = False
        for t in range(block.shape[0]):  # a run-time trip count: vectorised, not unrolled
            hit |= block[t] == top
        if hit:
            break
        k -= SEARCH_BLOCK
    k -= 1
    while values[k] != top:
        k -= 1
    return k
