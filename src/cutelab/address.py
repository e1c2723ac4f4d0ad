"""A pointer's address as an integer: CuTe DSL's ``Pointer.toint()`` and ``make_ptr`` of it.

CuTe DSL's ``ptr.toint()`` is the address (an Int64 for global and generic memory, an Int32 for
shared memory), and ``cute.make_ptr(dtype, address, memspace, assumed_align=...)`` makes a
pointer from one. Libraries use the pair to move a pointer by a 64-bit offset::

    cute.make_ptr(t.element_type, t.iterator.toint() + off * t.element_type.width // 8, t.memspace)

cutelab's pointers are an engine (the memory) and an element offset into it, so that every access
is checked against its storage. The address of a pointer inside a kernel, or of one whose offset
is not a known number, is therefore kept as ``PointerInt``: the pointer plus a byte offset. Adding
or subtracting integers (Python ints, cutlass integers, kernel indices) moves the byte offset; the
difference of two addresses of the same memory is their distance in bytes; ``make_ptr`` of it gives
the pointer back, at the new offset. A kernel's shared arrays are aligned (1024 bytes), so the bits
of a shared address below that alignment are the bits of its offset: ``a & mask`` of them is known
(``AddressBits``), and ``a ^ ((a & yyy) >> s)`` is the address swizzled (quack's ``swizzle_ptr``, the
swizzle CuTe applies to a swizzled pointer's address), a pointer into the same array at the swizzled
offset. Anything else done with the address (multiplying it, masking its high bits, passing it to
inline PTX) is refused by name: cutelab does not know where the memory is.

>>> import numpy as np, cutelab as cute
>>> t = cute.make_tensor(np.arange(8, dtype=np.float32), cute.make_layout(8))
>>> a = PointerInt(t.iterator, 0)
>>> p = cute.make_ptr(cute.Float32, a + 3 * 4, assumed_align=4)
>>> float(cute.make_tensor(p, cute.make_layout(2))[1])
4.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import TensorError
from .tracing import SymbolicIndex, TracedValue

__all__ = ["AddressBits", "AddressUnits", "PointerInt", "pointer_toint", "pointer_from_int"]


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _is_offset(x: Any) -> bool:
    """An integer a pointer's byte offset can take: a number, a kernel index, an integer kernel value."""
    if _is_int(x) or isinstance(x, SymbolicIndex):
        return True
    return isinstance(x, TracedValue) and getattr(x, "shape", None) == () and x.dtype.is_integer


class PointerInt:
    """The address of ``ptr`` plus ``delta`` bytes, as an integer of type ``dtype`` (Int64, or Int32
    for shared memory). Prints ``?``, as CuTe DSL prints a runtime integer."""

    __slots__ = ("ptr", "delta", "dtype")
    _cute_numeric_value = True  # isinstance(a, cutlass.Int64) holds (numeric.NumericMeta)

    def __init__(self, ptr: Any, delta: Any = 0, dtype: Any = None):
        from .numeric import Int32, Int64

        self.ptr = ptr
        self.delta = delta
        self.dtype = dtype if dtype is not None else (Int64 if str(ptr.memspace) in ("gmem", "generic") else Int32)

    # ---- what can be done with an address
    def __add__(self, k: Any) -> Any:
        if isinstance(k, PointerInt):
            return self._refuse("+", "the sum of two addresses")
        if not _is_offset(k):
            return NotImplemented
        return PointerInt(self.ptr, self.delta + k, self.dtype)

    __radd__ = __add__

    def __sub__(self, k: Any) -> Any:
        if isinstance(k, PointerInt):
            if k.ptr.engine is not self.ptr.engine:
                return self._refuse("-", "the distance between addresses of two different memories")
            return (self.ptr.offset - k.ptr.offset) * self.ptr.engine.dtype.bytes + self.delta - k.delta
        if not _is_offset(k):
            return NotImplemented
        return PointerInt(self.ptr, self.delta - k, self.dtype)

    def _refuse(self, op: str, what: str = "") -> Any:
        raise TensorError(
            f"{self.ptr}.toint() {op} ...: {what or 'arithmetic on an address'} is not supported; cutelab "
            f"keeps a pointer as its memory and an offset, so an address can only be moved by adding or "
            f"subtracting integers and turned back into a pointer with cute.make_ptr"
        )

    def __mul__(self, o: Any) -> Any:
        return self._refuse("*")

    __rmul__ = __mul__

    def __floordiv__(self, o: Any) -> Any:
        return self._refuse("//")

    def __mod__(self, o: Any) -> Any:
        return self._refuse("%", "the address modulo a number (an alignment test)")

    def __and__(self, o: Any) -> Any:
        span = _array_alignment(self)
        if span and _is_int(o) and 0 <= int(o) < span:  # bits below the array's alignment: the offset's bits
            return AddressBits(self, int(o), 0)
        if span and _is_int(o) and int(o) & WINDOW_MASK == WINDOW_MASK:  # every bit a shared address can have
            return self
        return self._refuse("&", "masking the bits of an address" + (
            f" above its shared array's {span}-byte alignment" if span else ""))

    __rand__ = __and__

    def __xor__(self, o: Any) -> Any:
        """``a ^ ((a & yyy) >> s)``: a swizzle of a shared-memory address's bits (quack's ``swizzle_int``, which
        CuTe applies to a swizzled pointer's address), or ``a ^ k`` with k below the array's alignment. The
        array is aligned above every bit that changes, so only the offset inside it changes: the result is
        the array's address plus the swizzled offset."""
        from .tracing import hooks

        span = _array_alignment(self)
        if span and isinstance(o, AddressBits) and o.addr._same(self):
            m, k = o.mask, o.shift
            low = (m & -m).bit_length() - 1
            b = (m >> low).bit_length() if m else 0
            if m and m == ((1 << b) - 1) << low and low - k >= 0 and k >= b:
                off = self._offset()
                if _is_int(off):
                    off = int(off)
                    sw = off ^ ((off & m) >> k)
                elif hooks.swizzle_index is not None:
                    sw = hooks.swizzle_index(off, b, low - k, k)
                else:
                    return self._refuse("^", "a swizzle of a symbolic address outside a kernel")
                return PointerInt(type(self.ptr)(self.ptr.engine, 0), sw, self.dtype)
        if span and _is_int(o) and 0 <= int(o) < span:
            off = self._offset()
            if _is_int(off):
                return PointerInt(type(self.ptr)(self.ptr.engine, 0), int(off) ^ int(o), self.dtype)
        return self._refuse("^", "this XOR of an address (cutelab follows an address's bits below its shared "
                                 "array's alignment: a & mask, a ^ ((a & mask) >> s) (a swizzle), a ^ k)" if span
                            else "flipping bits of an address")

    __rxor__ = __xor__

    def _offset(self) -> Any:
        """The address's byte offset from the start of its memory (an int or an index expression)."""
        ptr = self.ptr
        return ptr.offset * ptr.engine.dtype.bytes + self.delta

    def _same(self, other: "PointerInt") -> bool:
        """Whether other is the same address (same memory, same offset expression)."""
        if other.ptr.engine is not self.ptr.engine and getattr(other.ptr.engine, "param", 0) is not \
                getattr(self.ptr.engine, "param", 1):
            return False
        a, b = self._offset(), other._offset()
        ka, kb = getattr(a, "key", a), getattr(b, "key", b)
        return type(ka) is type(kb) and ka == kb

    def __or__(self, o: Any) -> Any:
        return self._refuse("|", "setting bits of an address")

    def __rshift__(self, k: Any) -> Any:
        """``a >> k`` of a shared-memory address: the address in units of 2**k bytes (AddressUnits), the
        start-address field of a UMMA/GMMA shared-memory descriptor built by hand (k = 4)."""
        if _array_alignment(self) and _is_int(k) and 0 < int(k) < WINDOW_BITS:
            return AddressUnits(self, int(k))
        return self._refuse(">>", "shifting an address other than a kernel's shared-memory address")

    __ror__ = __or__

    def __rsub__(self, o: Any) -> Any:
        return self._refuse("-", "a number minus an address")

    def __int__(self) -> int:
        raise TensorError(f"int({self.ptr}.toint()): the address of memory inside a kernel (or of a pointer at a "
                          f"runtime offset) is not a number cutelab knows")

    __index__ = __int__

    def __bool__(self) -> bool:
        raise TensorError(f"bool({self.ptr}.toint()): the address is not a number cutelab knows, so it cannot be "
                          f"tested; compare pointers' offsets instead")

    def ir_value(self, *, loc: Any = None, ip: Any = None) -> Any:
        """The address as an operand of inline PTX, where the memory has one (a kernel's shared
        memory: kernel.frontend.smem.SharedAddress); refused otherwise."""
        mk = getattr(self.ptr.engine, "address_value", None)
        if mk is not None:
            return mk(self)
        if getattr(self.ptr.engine, "param", None) is not None and str(self.ptr.memspace) in ("gmem", "generic"):
            return self  # a kernel argument's address: inline PTX's ld/st/atom on it (kernel/instr/atomics.py)
        raise TensorError(
            f"{self.ptr}.toint().ir_value(): passing this address to llvm.inline_asm is not supported in cutelab "
            f"(its pointers are a memory and an offset, not a machine address; the addresses of a kernel's "
            f"shared memory and of its global-memory arguments are)"
        )

    def to(self, dtype: Any) -> Any:
        """``Int64(a)``: the same address; a narrower integer type would cut it and is refused."""
        if getattr(dtype, "is_integer", False) and dtype.width >= self.dtype.width:
            return PointerInt(self.ptr, self.delta, dtype)
        raise TensorError(f"{dtype}({self.ptr}.toint()): an address of type {self.dtype} cannot be converted to "
                          f"{dtype}")

    def __str__(self) -> str:
        return "?"

    def __repr__(self) -> str:
        return f"PointerInt({self.ptr} + {self.delta} bytes: {self.dtype})"


#: a shared-memory address (of the CTA's window, at most 228 KiB) has at most 18 bits
WINDOW_BITS = 18
WINDOW_MASK = (1 << WINDOW_BITS) - 1


class AddressUnits:
    """``bits | (a >> shift)`` for a shared-memory address ``a`` (a PointerInt): the address in units
    of 2**shift bytes, in the low ``18 - shift`` bits, with other bits set above them. This is how
    a UMMA/GMMA shared-memory descriptor is built by hand (flash_attn.cute's mma_sm100_desc:
    ``(smem_ptr.toint() & 0x3FFFF) >> 4``, OR'd with the descriptor's other fields): adding ``k``
    moves the address by ``k`` units, as on the GPU (within the window, the field never carries).
    Passed to inline PTX, ``tcgen05.mma`` reads it as a descriptor (kernel/instr/ptx_umma.py)."""

    __slots__ = ("addr", "shift", "bits")
    _cute_numeric_value = True  # Int32(x) is x (numeric.NumericMeta)

    def __init__(self, addr: PointerInt, shift: int, bits: int = 0):
        self.addr, self.shift, self.bits = addr, shift, bits

    @property
    def dtype(self) -> Any:
        from .numeric import Int32

        return Int32

    @property
    def field(self) -> int:
        """The mask of the bits the address takes."""
        return (1 << (WINDOW_BITS - self.shift)) - 1

    def byte_offset(self) -> Any:
        """The address's byte offset from the start of its shared array."""
        return self.addr._offset()

    def _refuse(self, op: str) -> Any:
        raise TensorError(f"({self.addr.ptr}.toint() >> {self.shift}) {op} ...: cutelab follows a shared address in "
                          f"units of {1 << self.shift} bytes through | with bits above its {WINDOW_BITS - self.shift}-bit "
                          f"field and + / - of integers (a descriptor's start address); not this")

    def __or__(self, o: Any) -> Any:
        if _is_int(o) and int(o) >= 0 and not int(o) & self.field:
            return AddressUnits(self.addr, self.shift, self.bits | int(o))
        return self._refuse("|")

    __ror__ = __or__

    def __add__(self, k: Any) -> Any:
        if isinstance(k, (AddressUnits, PointerInt)) or not _is_offset(k):
            return self._refuse("+") if isinstance(k, (AddressUnits, PointerInt)) else NotImplemented
        return AddressUnits(self.addr + k * (1 << self.shift), self.shift, self.bits)

    __radd__ = __add__

    def __sub__(self, k: Any) -> Any:
        if isinstance(k, (AddressUnits, PointerInt)) or not _is_offset(k):
            return self._refuse("-") if isinstance(k, (AddressUnits, PointerInt)) else NotImplemented
        return AddressUnits(self.addr - k * (1 << self.shift), self.shift, self.bits)

    def __and__(self, o: Any) -> Any:
        return self._refuse("&")

    __rand__ = __mul__ = __rmul__ = __xor__ = __rxor__ = __and__

    def to(self, dtype: Any) -> "AddressUnits":
        if getattr(dtype, "is_integer", False) and dtype.width >= 32:
            return self
        return self._refuse(f"as {dtype}")

    def ir_value(self, *, loc: Any = None, ip: Any = None) -> "AddressUnits":
        return self

    def __str__(self) -> str:
        return "?"

    def __repr__(self) -> str:
        return f"AddressUnits(0x{self.bits:x} | ({self.addr!r} >> {self.shift}))"


def _array_alignment(a: PointerInt) -> int:
    """The alignment in bytes of the shared array a points into (its address's bits below it are the
    offset's), or 0 where a is not the address of a kernel's shared array."""
    if str(a.ptr.memspace) != "smem" or not _is_int(a.ptr.offset) and not isinstance(a.ptr.offset, SymbolicIndex):
        return 0
    if not isinstance(a.delta, SymbolicIndex) and not _is_int(a.delta):
        return 0
    param = getattr(a.ptr.engine, "param", None)
    root = getattr(param, "base", param)
    return int(getattr(root, "align", 0) or 0)


class AddressBits:
    """``(a & mask) >> shift`` of a shared-memory address ``a`` (a PointerInt), mask below its array's
    alignment: the bits of the array's offset. XORed into the same address it is a swizzle of it
    (PointerInt.__xor__); any other use takes its value, the offset's bits (an Int32)."""

    __slots__ = ("addr", "mask", "shift")
    _cute_numeric_value = True

    def __init__(self, addr: PointerInt, mask: int, shift: int):
        self.addr, self.mask, self.shift = addr, mask, shift

    @property
    def dtype(self) -> Any:
        return self.addr.dtype

    def __rshift__(self, k: Any) -> Any:
        if _is_int(k) and int(k) >= 0:
            return AddressBits(self.addr, self.mask, self.shift + int(k))
        return self.value() >> k

    def value(self) -> Any:
        """The bits as an integer: ``(offset & mask) >> shift`` of the address's offset in its array."""
        off = self.addr._offset()
        if _is_int(off):
            return (int(off) & self.mask) >> self.shift
        v = off & self.mask
        return v >> self.shift if self.shift else v

    def __str__(self) -> str:
        return "?"

    __repr__ = __str__


def _delegate(name: str) -> Any:
    def op(self: AddressBits, *a: Any) -> Any:
        return getattr(self.value(), name)(*a)
    op.__name__ = name
    return op


for _n in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__and__", "__rand__", "__or__",
           "__ror__", "__xor__", "__rxor__", "__lshift__", "__floordiv__", "__mod__", "__eq__", "__ne__", "__lt__",
           "__le__", "__gt__", "__ge__", "to", "ir_value"):
    setattr(AddressBits, _n, _delegate(_n))
AddressBits.__hash__ = None  # type: ignore[assignment]


def pointer_toint(ptr: Any) -> Any:
    """``ptr.toint()``: a number (an Int64, or Int32 for shared memory) for a host pointer at a known
    offset outside a trace, else (in a kernel or a @cute.jit function, where CuTe DSL's address is a
    runtime value) a ``PointerInt``."""
    from .dynamic import in_host_trace
    from .numeric import Int32, Int64
    from .tracing import hooks

    dtype = Int64 if str(ptr.memspace) in ("gmem", "generic") else Int32
    eng, off = ptr.engine, ptr.offset
    if hasattr(eng, "address_of"):  # a pointer at a runtime address (kernel/instr/address_access.py): its value
        return eng.address_of(off)
    addr = getattr(eng, "address", None)
    if (not hooks.kernel_tracing() and not in_host_trace() and _is_int(off) and _is_int(addr)
            and not hasattr(eng, "param")):
        return dtype(int(addr) + int(off) * eng.dtype.bytes)
    return PointerInt(ptr, 0, dtype)


def pointer_from_int(dtype: Any, a: PointerInt, mem_space: Any, assumed_align: Any) -> Any:
    """``make_ptr(dtype, a, mem_space, assumed_align)`` of a PointerInt: the pointer it came from,
    moved by its byte offset (which must be whole elements of dtype); in a kernel, for a global-memory
    pointer moved by a byte offset computed in registers, a pointer at that runtime address."""
    from .tracing import hooks

    ptr = a.ptr  # a cutelab.tensor.Pointer (this module sits below tensor.py, whose Pointer.toint uses it)
    eng = ptr.engine
    what = f"make_ptr({dtype}, {ptr}.toint() + ...)"
    space = str(getattr(mem_space, "value", mem_space)).split(".")[-1]
    here = str(ptr.memspace)
    if space != here and not {space, here} <= {"gmem", "generic"}:
        raise TensorError(f"{what}: the address is in {here} memory, but the pointer is asked for {space}")
    if dtype is not eng.dtype and getattr(dtype, "name", None) != eng.dtype.name:
        raise TensorError(f"{what}: the address points into {eng.dtype} elements; making a {dtype} pointer from it "
                          f"is not supported (use cute.recast_ptr on the pointer)")
    b = eng.dtype.bytes
    d = a.delta
    if _is_int(d):
        if int(d) % b:
            raise TensorError(f"{what}: the byte offset {int(d)} is not a whole number of {b}-byte {dtype} elements")
        step = int(d) // b
    elif isinstance(d, SymbolicIndex):
        if d.div % b:
            raise TensorError(f"{what}: the byte offset is known only to be a multiple of {d.div}, not of the "
                              f"{b}-byte {dtype} elements")
        step = _element_swizzle(d, b)
        if step is None:
            step = d // b
    elif (_is_offset(d) and here in ("gmem", "generic") and hooks.address_register is not None
          and hooks.runtime_pointer is not None):
        # a byte offset computed in the kernel's registers (flash_attn.cute's SM100 LSE row address): the address
        # as an Int64 register value and a pointer at that runtime address (kernel/instr/address_access.py), its
        # alignment the assumed_align given; each access is checked when it runs (in the memory, whole elements)
        return hooks.runtime_pointer(dtype, hooks.address_register(a), mem_space, assumed_align)
    else:
        raise TensorError(f"{what}: the byte offset is a value computed in the kernel ({type(d).__name__}); cutelab "
                          f"moves {here} pointers by index expressions (thread and block indices, loop variables)")
    if assumed_align is not None:
        al = int(assumed_align)
        if al < 1 or al & (al - 1):
            raise TensorError(f"{what}: assumed_align must be a power of two, got {assumed_align}")
    plain = getattr(eng, "unswizzled", None)  # make_ptr gives a plain pointer: the address is the raw one
    return type(ptr)(plain() if plain is not None else eng, ptr.offset + step)


def _element_swizzle(d: Any, b: int) -> Any:
    """A byte offset Swizzle<B,M,S>(x) in elements of b bytes: Swizzle<B,M-log2(b),S>(x // b), where x is a
    multiple of b and M >= log2(b) (the swizzle keeps the bits below M): the form the swizzled tensors'
    element offsets take, so that both name the same offsets. None for any other offset."""
    from .tracing import hooks

    key = getattr(d, "key", None)
    if not (isinstance(key, tuple) and key and key[0] == "swz") or hooks.swizzle_index is None:
        return None
    e = b.bit_length() - 1
    if b & (b - 1) or d.m < e or d.a.div % b:
        return None
    return hooks.swizzle_index(d.a // b, d.b, d.m - e, d.s)
