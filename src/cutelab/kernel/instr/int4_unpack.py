"""Sign extension of 4-bit integers unpacked one a byte: CuTe DSL's ``cute.arch.sext_unpacked_i4_i8_intrinsic``.

An unpacking TMA (``internal_type=Int8`` over an Int4 tensor) and ``ldmatrix ... .b8x16.b4x16_p64``
(``LdMatrix*x8bOp(unpack_bits=4)``) leave each Int4 value zero-extended in a byte, 0..15; the intrinsic turns
those bytes into the Int8 values -8..7 (CuTe DSL adds and xors 0x78 on each byte of a 32-bit word, four at a time;
for such bytes that is ``(b ^ 8) - 8``, what cutelab computes). Bytes with any of their upper 4 bits set are not
unpacked values: in a kernel they are not checked (the intrinsic's result for them is undefined here).
"""

from __future__ import annotations

from typing import Any

from ...errors import TraceError

__all__ = ["sext_unpacked_i4_i8_intrinsic"]


def sext_unpacked_i4_i8_intrinsic(vec_unpacked_i4: Any, length: int, *, loc: Any = None, ip: Any = None) -> Any:
    """The Int8 values of ``length`` unpacked 4-bit integers (a kernel's Int8 or Uint8 vector, a TensorSSA's
    ``.maybe_downcast()``), sign-extended from their low 4 bits."""
    from ...numeric import Int8

    dt = getattr(vec_unpacked_i4, "dtype", None)
    n = len(getattr(vec_unpacked_i4, "refs", ()))
    where = f"cute.arch.sext_unpacked_i4_i8_intrinsic({vec_unpacked_i4!r}, {length})"
    if dt is None or dt.width != 8 or not dt.is_integer:
        raise TraceError(f"{where}: needs a kernel vector of 8-bit integers (unpacked 4-bit values), got {dt}")
    if int(length) % 4 or int(length) != n:
        raise TraceError(f"{where}: length must be the vector's {n} elements and a multiple of 4")
    v = vec_unpacked_i4.to(Int8) if dt is not Int8 else vec_unpacked_i4
    return (v ^ 8) - 8
