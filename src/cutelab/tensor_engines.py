"""Engines and pointers: where a tensor's elements live (cutelab.tensor's Tensor is an engine + an
offset + a layout).

``NumpyEngine`` keeps them in a flat numpy array (a view of the user's array: writes go through);
``IdentityEngine`` has no storage: the value at an offset is the offset, a coordinate (identity
tensors). ``PointerInfo`` is how an engine describes a pointer into itself (alignment and the DSL's
``ptr<...>`` text); ``Pointer`` is a tensor's iterator (an engine and an offset) and ``PointerType``
its type. cutelab.tensor re-exports every name here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import int_tuple as it
from .errors import LayoutError, TensorError
from .swizzle import ComposedLayout, Swizzle
from .layout import Layout, ScaledBasis, _ArithTuple, evaluate_all
from .numeric import Numeric, numeric_from_numpy
from .tensor_ssa import TensorSSA, _checked_values, _is_ssa, _to_real, _type_name


# --------------------------------------------------------------------------- helpers

def _is_batch(x: Any) -> bool:
    return isinstance(x, np.ndarray)


def _layout_extent(layout: Layout) -> tuple[int, int]:
    """(lowest offset, highest offset) the layout reaches, without enumerating it."""
    if isinstance(layout, ComposedLayout):  # a swizzled layout: enumerate (vectorized)
        offs = layout.offsets()
        return (int(offs.min()), int(offs.max())) if offs.size else (0, 0)
    lo = hi = 0
    for s, d in zip(it.flatten_to_tuple(layout.shape), it.flatten_to_tuple(layout.stride)):
        if isinstance(d, ScaledBasis):
            raise LayoutError("layout with basis strides has no integer extent")
        if d > 0:
            hi += (s - 1) * d
        else:
            lo += (s - 1) * d
    return lo, hi


def _pow2_divisor(n: int) -> int:
    n = abs(int(n))
    return n & -n if n else 0


# --------------------------------------------------------------------------- engines

class PointerInfo:
    """How an engine with ``dtype``, ``align`` (bytes), ``address`` and ``memspace`` describes a
    pointer into itself: alignment at an offset, and the DSL's ptr<...> / raw_ptr(...) text."""

    __slots__ = ()

    def alignment(self, offset: Any) -> int:
        """Bytes of alignment known for the element at offset (for printing)."""
        b = self.dtype.bytes
        if _is_batch(offset):
            g = int(np.gcd.reduce(offset.astype(np.int64).ravel())) if offset.size else 0
        elif isinstance(offset, (int, np.integer)):
            g = int(offset)
        else:
            return b
        return self.align if g == 0 else max(min(self.align, _pow2_divisor(g * b)), b)

    def ptr_str(self, offset: Any) -> str:
        a = self.alignment(offset)
        al = f", align<{a}>" if a > self.dtype.bytes else ""
        return f"ptr<{mem_type_name(self.dtype)}, {self.memspace}{al}>"

    def raw_ptr_str(self, offset: Any) -> str:
        addr = self.address + int(offset) * self.dtype.bytes if not _is_batch(offset) else self.address
        return f"raw_ptr(0x{addr:016x}: {self.dtype.name}, {self.memspace}, align<{self.alignment(offset)}>)"


_RMEM_ALIGN = 32  # CuTe DSL 4.8.1 allocates register tensors 32-byte aligned (prints align<32>)


def mem_type_name(dtype: Any) -> str:
    """The element type a tensor's pointer or type prints: CuTe DSL keeps Booleans in memory (and
    registers) as bytes, so a Boolean tensor is ``ptr<i8, ...>`` / ``memref<i8, ...>``; and its MLIR
    integer types are signless, so a Uint16 tensor is ``ptr<i16, ...>``."""
    kind = getattr(dtype, "kind", None)
    if kind == "bool":
        return "i8"
    return f"i{dtype.width}" if kind == "uint" else dtype.name


def _typed_scalar(v: Any, dtype: Numeric) -> Any:
    """One element as CuTe DSL reads it: a scalar of the tensor's cutlass type (Float32: prints
    with cute.printf as 10.000000), a Python bool for Booleans."""
    from .numeric import FloatValue, IntValue

    if dtype.kind == "bool":
        return bool(v)
    if dtype.kind == "float":
        return FloatValue(dtype, float(v))
    return IntValue(dtype, int(v))


class NumpyEngine(PointerInfo):
    """Storage in a flat numpy array (a view of the user's array: writes go through)."""

    __slots__ = ("data", "dtype", "memspace", "align", "owner", "address", "declared")

    def __init__(self, data: np.ndarray, dtype: Numeric | None = None, memspace: str = "generic",
                 align: int | None = None, owner: Any = None, address: int | None = None):
        if data.ndim != 1:
            raise TensorError(f"engine storage must be a flat array, got shape {data.shape}")
        self.data = data
        self.dtype = dtype or numeric_from_numpy(data.dtype)
        self.memspace = memspace
        self.align = align if align is not None else max(self.dtype.bytes, 1)
        self.declared = align is not None  # an alignment given (from_dlpack, fragments), not the element's by default
        self.owner = owner
        self.address = address if address is not None else data.__array_interface__["data"][0]

    def __len__(self) -> int:
        return self.data.shape[0]

    def _check(self, lo: Any, hi: Any, what: str) -> None:
        n = self.data.shape[0]
        if lo < 0 or hi >= n:
            raise TensorError(
                f"{what}: offsets [{int(lo)}, {int(hi)}] fall outside the storage of {n} elements; nothing was {what[:4]}d"
            )

    def _offsets(self, offset: Any, layout: Layout, what: str) -> Any:
        offs = layout.offsets() if isinstance(layout, ComposedLayout) else evaluate_all(layout)
        if _is_batch(offset):
            lo, hi = _layout_extent(layout)
            self._check(int(offset.min()) + lo, int(offset.max()) + hi, what)
            return offset.astype(np.int64)[..., None] + offs
        if not isinstance(offset, (int, np.integer)):
            raise TensorError(f"{what}: a numpy engine needs a concrete offset, got {offset!r}")
        if offs.size:
            self._check(offset + int(offs.min()), offset + int(offs.max()), what)
        return offs + int(offset)

    def load(self, offset: Any, layout: Layout) -> TensorSSA:
        idx = self._offsets(offset, layout, "load")
        return TensorSSA(self.data[idx], layout.shape, self.dtype)

    def store(self, offset: Any, layout: Layout, value: Any) -> None:
        idx = self._offsets(offset, layout, "store")
        if _is_ssa(value):
            if value.dtype is not self.dtype:
                raise TensorError(
                    f"store: the values are {value.dtype.name} but the tensor holds {self.dtype.name}; CuTe DSL "
                    f"requires matching element types: convert first with .to({_type_name(self.dtype)}); nothing was written"
                )
            vals = value.values
        else:
            vals = _checked_values(value, self.dtype, "store")
        try:
            vals = np.broadcast_to(vals, idx.shape)
        except ValueError:
            raise TensorError(
                f"store: {np.shape(vals)} values do not fit a tensor of {idx.shape[-1]} elements"
                + (f" in a batch of {idx.shape[:-1]}" if idx.ndim > 1 else "")
            ) from None
        self.data[idx] = vals

    def read_one(self, off: Any) -> Any:
        if _is_batch(off):
            self._check(int(off.min()), int(off.max()), "load")
            return _to_real(self.data[off], self.dtype)
        self._check(off, off, "load")
        return _typed_scalar(_to_real(self.data[off], self.dtype)[()], self.dtype)

    def write_one(self, off: Any, v: Any) -> None:
        if _is_batch(off):
            self._check(int(off.min()), int(off.max()), "store")
        else:
            self._check(off, off, "store")
        vals = _checked_values(v, self.dtype, "store")
        if not _is_batch(off) and np.ndim(vals) != 0:
            raise TensorError(
                f"store: one element takes one value, got an array of shape {np.shape(vals)}; "
                f"slice with None (T[i, None]) to store several; nothing was written"
            )
        try:
            self.data[off] = vals
        except ValueError:
            raise TensorError(
                f"store: values of shape {np.shape(vals)} do not fit {np.shape(off)} elements; nothing was written"
            ) from None

    @classmethod
    def make_fragment(cls, tensor: "Tensor", layout: Layout, dtype: Numeric | None = None,
                      align: int = _RMEM_ALIGN) -> tuple:
        """Fresh register storage for one fragment per batch element: (engine, offset)."""
        dtype = dtype or tensor.element_type
        n = max(_layout_extent(layout)[1] + 1, 1)
        if _is_batch(tensor.offset):
            b = int(np.prod(tensor.offset.shape))
            data = np.zeros(b * n, dtype=dtype.storage)
            off = (np.arange(b, dtype=np.int64) * n).reshape(tensor.offset.shape)
            return cls(data, dtype, "rmem", align=align), off
        return cls(np.zeros(n, dtype=dtype.storage), dtype, "rmem", align=align), 0


class IdentityEngine:
    """The engine of an identity tensor: the value at an offset is the offset (a coordinate).

    ``profile`` is the identity's shape with every leaf 0: coordinates are padded to it, so that
    they print as CuTe DSL prints them ((2,0), not (2,), for rank 2; (0,(1,0)) for (4,(2,3))).
    """

    dtype = None
    memspace = "coord"

    def __init__(self, profile: Any = 0):
        if isinstance(profile, int):  # a rank
            profile = (0,) * profile if profile else 0
        self.profile = profile
        self.rank = len(profile) if isinstance(profile, tuple) else 0

    def pad(self, off: Any) -> Any:
        """off with the trailing zero modes that the sum of basis strides leaves out put back."""
        return _pad_coord(off, self.profile)

    def read_one(self, off: Any) -> Any:
        return self.pad(off)

    def write_one(self, off: Any, v: Any) -> None:
        raise TensorError("an identity tensor is read-only")

    def store(self, offset: Any, layout: Layout, value: Any) -> None:
        raise TensorError("an identity tensor is read-only")

    def load(self, offset: Any, layout: Layout) -> list:
        n = it.product(layout.shape)
        return [self.read_one(_add(offset, layout(i))) for i in range(n)]

    def ptr_str(self, offset: Any) -> str:
        off = self.pad(offset)
        return it.tuple_str(off) if isinstance(off, tuple) else str(off)

    raw_ptr_str = ptr_str


def _pad_coord(x: Any, profile: Any) -> Any:
    if not isinstance(profile, tuple):
        return tuple(x) if isinstance(x, tuple) else x
    if isinstance(x, tuple):
        xs = tuple(x)
    elif isinstance(x, (int, np.integer)) and x == 0:
        xs = ()
    else:
        xs = (x,)
    xs = xs + (0,) * (len(profile) - len(xs))
    return tuple(_pad_coord(a, p) for a, p in zip(xs, profile)) + xs[len(profile):]


def _add(a: Any, b: Any) -> Any:
    if isinstance(a, tuple) or isinstance(b, tuple):
        r = _ArithTuple.of(0) + _ArithTuple(a if isinstance(a, tuple) else ()) + _ArithTuple(b if isinstance(b, tuple) else ())
        return tuple(r)
    return a + b


class Pointer:
    """A tensor's iterator: an engine and an offset into it. Adding an int moves it."""

    __slots__ = ("engine", "offset")

    def __init__(self, engine: Any, offset: Any = 0):
        self.engine = engine
        self.offset = offset

    def __add__(self, k: Any) -> "Pointer":
        v = getattr(k, "value", None) if isinstance(k, Numeric) else None
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):  # a static Int32(5): the offset stays an int
            k = int(v)
        elif hasattr(k, "as_index") and hasattr(k, "refs"):  # a runtime Int32 in a kernel: a register index
            k = k.as_index()
        return Pointer(self.engine, self.offset + k)

    @property
    def element_type(self) -> Any:
        return self.engine.dtype

    dtype = element_type  # CuTe DSL's Pointer.dtype
    value_type = element_type  # and its Pointer.value_type

    # CuTe DSL's JitArgument / DynamicExpression protocols, as a user type that wraps a pointer
    # forwards them (``self.ptr.__extract_mlir_values__()``): the pointer is its own one value.
    def __extract_mlir_values__(self) -> list:
        return [self]

    def __new_from_mlir_values__(self, values: Any) -> "Pointer":
        (v,) = values
        return v

    def __get_mlir_types__(self) -> list:
        return [type(self)]

    @property
    def type(self) -> "PointerType":
        """The pointer's type as CuTe DSL has it (``!cute.ptr<bf16, smem, align<16>, S<3,4,3>>``): its
        ``swizzle_type`` is the swizzle of a swizzled shared-memory pointer (byte units), else the
        identity ``S<0,4,3>``."""
        return PointerType(self)

    def raw_ptr(self, *, loc: Any = None, ip: Any = None) -> Any:
        """CuTe DSL's Pointer.raw_ptr(): this pointer as a ``cutlass.Pointer`` (``p + k``, ``p.load()``,
        ``p.store(v)``, ... inside a kernel), which the compatibility layer provides
        (compat/experimental/memory.py, through ``tracing.hooks.raw_pointer``)."""
        from .tracing import hooks

        if hooks.raw_pointer is None:
            raise TensorError(f"Pointer.raw_ptr() of {self}: CuTe DSL's cutlass.Pointer comes with cutelab's "
                              f"compatibility layer; run the program with `cutelab run` or call "
                              f"cutelab.compat.install() first")
        return hooks.raw_pointer(self)

    @property
    def _pointer(self) -> int:
        """CuTe DSL's runtime pointer's address (``ptr._pointer``, which programs pass to cudaFree): the
        address of a host-side pointer at a known offset."""
        addr = getattr(self.engine, "address", None)
        if not isinstance(addr, (int, np.integer)) or not isinstance(self.offset, (int, np.integer)) \
                or hasattr(self.engine, "param"):
            raise TensorError(f"{self}._pointer: the address of a pointer inside a kernel, or at a runtime offset, "
                              f"is not a number cutelab knows")
        return int(addr) + int(self.offset) * self.engine.dtype.bytes

    @property
    def llvm_ptr(self) -> "Pointer":
        """CuTe DSL's raw LLVM pointer of this pointer; cutelab's instructions (cute.arch.load,
        atomic_add, ...) take the pointer itself, so it is the same pointer."""
        return self

    def to_llvm_ptr(self, *, loc: Any = None, ip: Any = None) -> "Pointer":
        """CuTe DSL's Pointer.to_llvm_ptr(): ``llvm_ptr``, the same pointer."""
        return self

    @property
    def value(self) -> "Pointer":
        """CuTe DSL's Pointer.value (its MLIR value, which dialect operations take): the same pointer."""
        return self

    @property
    def memspace(self) -> str:
        return self.engine.memspace

    @property
    def alignment(self) -> int:
        """Bytes of alignment known for the address (CuTe DSL's Pointer.alignment)."""
        eng = self.engine
        return eng.alignment(self.offset) if hasattr(eng, "alignment") else 1

    @property
    def max_alignment(self) -> int:
        """CuTe DSL's Pointer.max_alignment: the alignment before any swizzle; cutelab's pointers
        carry no swizzle, so it is ``alignment``."""
        return self.alignment

    def toint(self, *, loc: Any = None, ip: Any = None) -> Any:
        """CuTe DSL's Pointer.toint(): the address as an Int64 (Int32 for shared memory). Inside a
        kernel it is a ``cutelab.address.PointerInt``, which ``make_ptr`` turns back into a pointer."""
        from .address import pointer_toint

        return pointer_toint(self)

    def align(self, min_align: int) -> "Pointer":
        """The pointer, asserted to be min_align-byte aligned (CuTe DSL's Pointer.align). cutelab
        derives alignment itself, so the pointer is unchanged; an assertion that a static offset
        contradicts is refused."""
        if not isinstance(min_align, int) or min_align < 1 or min_align & (min_align - 1):
            raise TensorError(f"Pointer.align({min_align!r}): the alignment must be a power of two")
        off = self.offset
        if isinstance(off, (int, np.integer)) and hasattr(self.engine, "align"):
            b = self.engine.dtype.bytes
            if self.engine.align >= min_align and (int(off) * b) % min_align:  # the base is aligned, the offset is not
                raise TensorError(f"Pointer.align({min_align}): the pointer {self} at element offset {int(off)} "
                                  f"is not {min_align}-byte aligned")
        return Pointer(self.engine, off)

    def __str__(self) -> str:
        return self.engine.ptr_str(self.offset)

    __repr__ = __str__


class _SwizzleType(Swizzle):
    """A pointer type's swizzle (CuTe DSL's ``!cute.swizzle<"S<3,4,3>">``): a Swizzle that prints as its type."""

    __slots__ = ()

    def __str__(self) -> str:
        return f'!cute.swizzle<"{Swizzle.__str__(self)}">'

    __repr__ = __str__


class PointerType:
    """What ``Pointer.type`` gives (CuTe DSL's ``!cute.ptr`` type): the element type (``value_type``), the
    memory space, the alignment and ``swizzle_type``: a swizzled shared-memory pointer's swizzle (byte units,
    as CuTe DSL keeps it in the type), else the identity swizzle S<0,4,3>, as CuTe DSL answers for a plain
    pointer. quack's ``swizzle_ptr`` reads its num_bits, num_base and num_shift."""

    def __init__(self, ptr: "Pointer"):
        self.value_type = ptr.engine.dtype
        self.memspace = ptr.memspace
        self.alignment = ptr.alignment
        sw = getattr(ptr.engine, "ptr_swizzle", None)
        sw = Swizzle(0, 4, 3) if sw is None else sw
        self.swizzle_type = _SwizzleType(sw.num_bits, sw.num_base, sw.num_shift)
        self.text = f"!cute.{ptr}"

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__


class Packed4Engine(NumpyEngine):
    """Memory of 4-bit elements, two to a byte, the even element in the low nibble (torch's
    float4_e2m1fn_x2, CUTLASS's sub-byte packing), read through a pointer of make_ptr. ``data`` is
    the elements one to a storage byte, unpacked from the bytes each time it is asked for (so a launch
    sees the bytes as they are then) and read-only: writing 4-bit memory is refused."""

    __slots__ = ("packed",)

    def __init__(self, packed: np.ndarray, dtype: Numeric, memspace: str, align: int, owner: Any, address: int):
        self.packed, self.dtype, self.memspace = packed, dtype, memspace
        self.align, self.declared, self.owner, self.address = align, True, owner, address

    @property  # type: ignore[override]
    def data(self) -> np.ndarray:
        out = np.empty(2 * self.packed.shape[0], dtype=np.uint8)
        out[0::2] = self.packed & 0xF
        out[1::2] = self.packed >> 4
        if self.dtype.kind == "int":  # Int4: the two's-complement nibble, sign-extended into its int8 storage
            out = ((out ^ 8).astype(np.int8) - np.int8(8)).astype(np.int8)
        out.flags.writeable = False
        return out

    def __len__(self) -> int:
        return 2 * self.packed.shape[0]

    def _refuse_write(self, *a: Any) -> Any:
        raise TensorError(f"{self.raw_ptr_str(0)}: writing memory of 4-bit elements (two to a byte) through a "
                          f"pointer is not supported by cutelab yet; it is read-only here")

    store = write_one = _refuse_write
