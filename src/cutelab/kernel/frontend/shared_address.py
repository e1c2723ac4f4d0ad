"""The 32-bit shared-memory address of a pointer inside a kernel, as an inline-PTX operand
(``SharedAddress``): what ``SmemEngine.address_value`` (trace.py) answers for
``smem_ptr.toint().ir_value()``. Re-exported by ``smem``."""

from __future__ import annotations

from typing import Any

from ...errors import TraceError

__all__ = ["SharedAddress"]


class SharedAddress:
    """The 32-bit shared-memory address of a pointer inside a kernel (CuTe DSL's
    ``smem_ptr.toint().ir_value()``, an operand of inline PTX): ``ptr`` is the pointer, into this
    CTA's shared memory or, after PTX ``mapa``, into a peer CTA's (a ``DsmemEngine`` pointer).

    cutelab has no machine addresses: inline PTX whose operands are such addresses is lowered to
    the IR's own ops when it is an instruction they cover (``instr.inline_asm.asm_on_addresses``:
    ``mapa``, ``st.async``); anything else is refused by name. As a value it is an Int32
    (``Int32(addr)`` is the address itself)."""

    __slots__ = ("ptr",)
    _cute_numeric_value = True  # isinstance(a, cutlass.Int32), Int32(a) (numeric.NumericMeta)

    def __init__(self, ptr: Any):
        self.ptr = ptr

    @property
    def dtype(self) -> Any:
        from ...numeric import Int32

        return Int32

    def ir_value(self, *, loc: Any = None, ip: Any = None) -> "SharedAddress":
        return self

    def to(self, dtype: Any) -> "SharedAddress":
        if getattr(dtype, "is_integer", False) and dtype.width >= 32:
            return self
        raise TraceError(f"{dtype}({self}): a 32-bit shared-memory address cannot be converted to {dtype}")

    def _refuse(self, *a: Any) -> Any:
        raise TraceError(f"{self}: arithmetic on a shared-memory address passed to inline PTX is not supported; move "
                         f"the pointer (ptr + k) before taking its address")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __and__ = __or__ = __xor__ = _refuse

    def __str__(self) -> str:
        return f"address of {self.ptr}"

    __repr__ = __str__

