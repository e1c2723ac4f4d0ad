"""Element types, named as in cutlass (Float32, BFloat16, Int32, ...).

Each type knows its width in bits, its short name as CuTe DSL prints it (``bf16``, ``i32``),
its numpy storage dtype (bf16 is stored as raw 16-bit words, bit for bit, since numpy has no
bfloat16) and the torch dtype name.

numpy is imported only when a storage dtype is first asked for (``Float32.storage``) or a scalar is
rounded: the types themselves, and the layout algebra that names them, work without it.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np


def _np() -> Any:
    import numpy

    return numpy


def _np_int_types() -> tuple:
    """(int,) and numpy's integer type once numpy is imported (no numpy value can exist before)."""
    npm = sys.modules.get("numpy")
    return (int, npm.integer) if npm is not None else (int,)


def _np_real_types() -> tuple:
    npm = sys.modules.get("numpy")
    return (int, float, npm.integer, npm.floating) if npm is not None else (int, float)

__all__ = [
    "Numeric", "Float64", "Float32", "Float16", "BFloat16", "Int8", "Int16", "Int32", "Int64",
    "Uint8", "Uint16", "Uint32", "Uint64", "Boolean", "numeric_from_numpy", "numeric_from_torch",
    "NUMERICS", "TFloat32", "Float8E4M3FN", "Float8E5M2", "IntValue", "FloatValue", "Int4", "Int128",
    "Uint128",
    "Float4E2M1FN", "Float6E2M3FN", "Float6E3M2FN", "Float8E8M0FNU",
]


class Numeric:
    """An element type. Calling it converts a Python value (``Int32(3)`` -> 3)."""

    __slots__ = ("name", "width", "kind", "_storage_name", "_storage", "torch_name", "cuda")

    def __init__(self, name: str, width: int, kind: str, storage: str, torch_name: str, cuda: str):
        self.name = name  # as CuTe DSL prints: bf16, f32, i32
        self.width = width  # bits
        self.kind = kind  # "float", "int", "uint", "bool"
        self._storage_name = storage  # numpy's name of the dtype holding the bits ("float32", "uint16")
        self._storage = None
        self.torch_name = torch_name
        self.cuda = cuda  # CUDA C++ type name

    @property
    def storage(self) -> "np.dtype":
        """The numpy dtype holding the bits (numpy is imported on first use)."""
        st = self._storage
        if st is None:
            st = self._storage = _np().dtype(self._storage_name)
        return st

    @property
    def bytes(self) -> int:
        return self.width // 8

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_fp8(self) -> bool:
        """An 8-bit float (Float8E4M3FN, Float8E5M2): bytes converted by cutelab/fp8.py."""
        return self.name in _FP8_NAMES

    @property
    def is_half(self) -> bool:
        """A 16-bit float (Float16, BFloat16): kept as 16-bit words, computed as float32."""
        return self.name in ("f16", "bf16")

    @property
    def is_bool(self) -> bool:
        return self.kind == "bool"

    @property
    def inf(self) -> float:
        """A float type's infinity, as CuTe DSL's ``Float32.inf`` (a Python float)."""
        self._need_float("inf")
        return float("inf")

    @property
    def nan(self) -> float:
        self._need_float("nan")
        return float("nan")

    @property
    def zero(self) -> Any:
        return 0.0 if self.kind == "float" else 0

    def _need_float(self, what: str) -> None:
        if self.kind != "float":
            raise AttributeError(f"{self.name}.{what}: only float types have {what}")

    def __call__(self, v: Any) -> Any:
        """A scalar of this type, as CuTe DSL makes one: integers wrap around to the bit width
        (``Int8(300)`` is 44), floats round to the type (``Float32(0.1)`` is the f32 nearest
        0.1). The result is a Python int or float (usable wherever one is) that knows its type.

        >>> import numpy as np
        >>> Int8(300), Int32(42).to(Float32), Float32(0.1).value == float(np.float32(0.1))
        (44, 42.0, True)
        """
        if isinstance(v, (IntValue, FloatValue)):
            return v.to(self)
        from .dynamic import dyn_scalar, in_host_trace

        if in_host_trace():  # inside a @cute.jit trace CuTe DSL makes a runtime value: prints '?'
            d = dyn_scalar(self, v)
            if d is not None:
                return d
        if self.kind == "float":
            return FloatValue(self, v)
        return IntValue(self, v)

    @property
    def is_integer(self) -> bool:
        return self.kind in ("int", "uint", "bool")

    @property
    def signed(self) -> bool:
        return self.kind in ("int", "float")

    def is_same_kind(self, other: "Numeric") -> bool:
        """True when both are floats or both integers (CuTe DSL's is_same_kind)."""
        return self.is_float == other.is_float

    def __class_getitem__(cls, item: Any) -> Any:  # allow Numeric[...] in annotations
        return cls

    def __repr__(self) -> str:
        return self.name

    def __str__(self) -> str:
        """The type's name as CuTe DSL prints its class: ``Float32`` (``.name`` is the MLIR name, ``f32``)."""
        return _class_name(self)

    @property
    def __name__(self) -> str:  # noqa: A003 - CuTe DSL's types are classes: Int32.__name__ is 'Int32'
        return _class_name(self)

    def __reduce__(self) -> Any:
        return (_by_name, (self.name,))


def _wrap(t: Numeric, v: int) -> int:
    if t.kind == "bool":
        return int(bool(v))
    m = 1 << t.width
    v %= m
    if t.kind == "int" and v >= m >> 1:
        v -= m
    return v


def _round(t: Numeric, v: float) -> float:
    if t.width == 64:
        return float(v)
    if t.is_fp8:
        raise TypeError(f"{t}({v!r}): scalars of 8-bit float types are not supported (no rounding for them yet)")
    np = _np()
    if t.name == "tf32":
        v = float(np.float32(v))
        b = int(np.asarray(np.float32(v)).view(np.uint32))
        if not np.isfinite(np.float32(v)):
            return v
        b = ((b + 0xFFF + ((b >> 13) & 1)) >> 13) << 13  # round to nearest even at 10 mantissa bits
        return float(np.asarray(np.uint32(b & 0xFFFFFFFF)).view(np.float32))
    if t.name == "bf16":
        b = np.asarray(np.float32(v)).view(np.uint32)
        if np.isnan(np.float32(v)):
            return float("nan")
        b = (int(b) + 0x7FFF + ((int(b) >> 16) & 1)) >> 16 << 16
        return float(np.asarray(np.uint32(b & 0xFFFFFFFF)).view(np.float32))
    with np.errstate(over="ignore"):
        return float(t.storage.type(v)) if t.storage != np.uint16 else float(np.float16(v))


class IntValue(int):
    """An integer scalar of a cutlass type (Int32(7)): a Python int, wrapped to the bit width,
    whose arithmetic with ints stays in the type."""

    dtype: Numeric

    def __new__(cls, dtype: Numeric, v: Any) -> "IntValue":
        if dtype.kind == "bool":  # any nonzero value, nan and inf included, is true (CuTe DSL: Boolean(nan) is 1)
            v = bool(v)
        elif isinstance(v, float):
            v = int(v)  # truncates toward zero, as a C conversion; nan and inf are refused (ValueError, OverflowError)
        obj = int.__new__(cls, _wrap(dtype, int(v)))
        obj.dtype = dtype
        return obj

    @property
    def value(self) -> int:
        return int(self)

    def to(self, dtype: Numeric) -> Any:
        return dtype(int(self)) if dtype.is_integer else dtype(float(int(self)))

    def _op(self, o: Any, f: Any) -> Any:
        if isinstance(o, FloatValue) or isinstance(o, float):
            return NotImplemented
        if isinstance(o, _np_int_types()):
            return IntValue(self.dtype, f(int(self), int(o)))
        return NotImplemented

    def __add__(self, o): return self._op(o, lambda a, b: a + b)
    def __radd__(self, o): return self._op(o, lambda a, b: b + a)
    def __sub__(self, o): return self._op(o, lambda a, b: a - b)
    def __rsub__(self, o): return self._op(o, lambda a, b: b - a)
    def __mul__(self, o): return self._op(o, lambda a, b: a * b)
    def __rmul__(self, o): return self._op(o, lambda a, b: b * a)
    def __floordiv__(self, o): return self._op(o, lambda a, b: a // b)
    def __rfloordiv__(self, o): return self._op(o, lambda a, b: b // a)
    def __mod__(self, o): return self._op(o, lambda a, b: a % b)
    def __rmod__(self, o): return self._op(o, lambda a, b: b % a)
    def __neg__(self): return IntValue(self.dtype, -int(self))

    def __repr__(self) -> str:
        return str(int(self))

    __str__ = __repr__

    def __reduce__(self) -> Any:
        return (IntValue, (self.dtype, int(self)))


class FloatValue(float):
    """A floating-point scalar of a cutlass type (Float32(0.1)): a Python float rounded to the
    type, whose arithmetic with numbers rounds to the type after each operation."""

    dtype: Numeric

    def __new__(cls, dtype: Numeric, v: Any) -> "FloatValue":
        obj = float.__new__(cls, _round(dtype, float(v)))
        obj.dtype = dtype
        return obj

    @property
    def value(self) -> float:
        return float(self)

    def to(self, dtype: Numeric) -> Any:
        return dtype(float(self))

    def _op(self, o: Any, f: Any) -> Any:
        if isinstance(o, _np_real_types()):
            return FloatValue(self.dtype, f(float(self), float(o)))
        return NotImplemented

    def __add__(self, o): return self._op(o, lambda a, b: a + b)
    def __radd__(self, o): return self._op(o, lambda a, b: b + a)
    def __sub__(self, o): return self._op(o, lambda a, b: a - b)
    def __rsub__(self, o): return self._op(o, lambda a, b: b - a)
    def __mul__(self, o): return self._op(o, lambda a, b: a * b)
    def __rmul__(self, o): return self._op(o, lambda a, b: b * a)
    def __truediv__(self, o): return self._op(o, lambda a, b: a / b)
    def __rtruediv__(self, o): return self._op(o, lambda a, b: b / a)
    def __neg__(self): return FloatValue(self.dtype, -float(self))

    def __repr__(self) -> str:
        return repr(float(self))

    __str__ = __repr__

    def __reduce__(self) -> Any:
        return (FloatValue, (self.dtype, float(self)))


Float64 = Numeric("f64", 64, "float", "float64", "float64", "double")
Float32 = Numeric("f32", 32, "float", "float32", "float32", "float")
Float16 = Numeric("f16", 16, "float", "float16", "float16", "__half")
BFloat16 = Numeric("bf16", 16, "float", "uint16", "bfloat16", "__nv_bfloat16")
Int8 = Numeric("i8", 8, "int", "int8", "int8", "signed char")
Int16 = Numeric("i16", 16, "int", "int16", "int16", "short")
Int32 = Numeric("i32", 32, "int", "int32", "int32", "int")
Int64 = Numeric("i64", 64, "int", "int64", "int64", "long long")
Uint8 = Numeric("u8", 8, "uint", "uint8", "uint8", "unsigned char")
Uint16 = Numeric("u16", 16, "uint", "uint16", "uint16", "unsigned short")
Uint32 = Numeric("u32", 32, "uint", "uint32", "uint32", "unsigned int")
Uint64 = Numeric("u64", 64, "uint", "uint64", "uint64", "unsigned long long")
Boolean = Numeric("i1", 8, "bool", "bool", "bool", "bool")
# scalar-only integer widths (no numpy storage of their own: kernels keep them in wider words)
Int4 = Numeric("i4", 4, "int", "int8", "int8", "signed char")
Int128 = Numeric("i128", 128, "int", "object", "", "__int128")
Uint128 = Numeric("u128", 128, "uint", "object", "", "unsigned __int128")
# MMA operand types (stored as raw bits or, for tf32, as the f32 it rounds): names as MLIR prints them
TFloat32 = Numeric("tf32", 32, "float", "float32", "tfloat32", "float")
Float8E4M3FN = Numeric("f8E4M3FN", 8, "float", "uint8", "float8_e4m3fn", "__nv_fp8_e4m3")
Float8E5M2 = Numeric("f8E5M2", 8, "float", "uint8", "float8_e5m2", "__nv_fp8_e5m2")
# Blackwell (tcgen05) operand and scale-factor types: they name the operands of UMMA atoms and their
# layouts; cutelab keeps no host values of them yet, so they stay out of NUMERICS (no storage rows)
Float4E2M1FN = Numeric("f4E2M1FN", 4, "float", "uint8", "float4_e2m1fn_x2", "__nv_fp4_e2m1")
Float6E2M3FN = Numeric("f6E2M3FN", 6, "float", "uint8", "", "__nv_fp6_e2m3")
Float6E3M2FN = Numeric("f6E3M2FN", 6, "float", "uint8", "", "__nv_fp6_e3m2")
Float8E8M0FNU = Numeric("f8E8M0FNU", 8, "float", "uint8", "float8_e8m0fnu", "__nv_fp8_e8m0")

_FP8_NAMES = frozenset(("f8E4M3FN", "f8E5M2"))
NUMERICS = {t.name: t for t in (Float64, Float32, Float16, BFloat16, Int8, Int16, Int32, Int64,
                                Uint8, Uint16, Uint32, Uint64, Boolean, TFloat32, Float8E4M3FN,
                                Float8E5M2)}


def _by_name(name: str) -> Numeric:
    return NUMERICS[name]


_FROM_NUMPY: dict = {}  # numpy dtype -> element type, made on first use (the types numpy stores natively)


def numeric_from_numpy(dtype: Any) -> Numeric:
    if not _FROM_NUMPY:
        _FROM_NUMPY.update((t.storage, t) for t in (Float64, Float32, Float16, Int8, Int16, Int32, Int64, Uint8,
                                                    Uint16, Uint32, Uint64, Boolean))
    dt = _np().dtype(dtype)
    if dt not in _FROM_NUMPY:
        raise TypeError(f"no cutelab element type for numpy dtype {dt}")
    return _FROM_NUMPY[dt]


def numeric_from_torch(dtype: Any) -> Numeric:
    name = str(dtype).replace("torch.", "")
    for t in NUMERICS.values():
        if t.torch_name == name:
            return t
    raise TypeError(f"no cutelab element type for torch dtype {dtype}")


def _class_name(t: Numeric) -> str:
    """Float32 for Float32: the name this module binds t to (the first, for aliases)."""
    for k, v in globals().items():
        if v is t and k[:1].isupper() and k not in ("NUMERICS",):
            return k
    return t.name
