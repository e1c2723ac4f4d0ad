"""Element types, named as in cutlass (Float32, BFloat16, Int32, ...).

Each type knows its width in bits, its short name as CuTe DSL prints it (``bf16``, ``i32``),
its numpy storage dtype (bf16 is stored as raw 16-bit words, bit for bit, since numpy has no
bfloat16) and the torch dtype name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "Numeric", "Float64", "Float32", "Float16", "BFloat16", "Int8", "Int16", "Int32", "Int64",
    "Uint8", "Uint16", "Uint32", "Uint64", "Boolean", "numeric_from_numpy", "numeric_from_torch",
    "NUMERICS", "TFloat32", "Float8E4M3FN", "Float8E5M2",
]


class Numeric:
    """An element type. Calling it converts a Python value (``Int32(3)`` -> 3)."""

    __slots__ = ("name", "width", "kind", "storage", "torch_name", "cuda")

    def __init__(self, name: str, width: int, kind: str, storage: Any, torch_name: str, cuda: str):
        self.name = name  # as CuTe DSL prints: bf16, f32, i32
        self.width = width  # bits
        self.kind = kind  # "float", "int", "uint", "bool"
        self.storage = np.dtype(storage)  # numpy dtype holding the bits
        self.torch_name = torch_name
        self.cuda = cuda  # CUDA C++ type name

    @property
    def bytes(self) -> int:
        return self.width // 8

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    def __call__(self, v: Any) -> Any:
        if self.kind == "float":
            return float(v)
        if self.kind == "bool":
            return bool(v)
        return int(v)

    def __class_getitem__(cls, item: Any) -> Any:  # allow Numeric[...] in annotations
        return cls

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __reduce__(self) -> Any:
        return (_by_name, (self.name,))


Float64 = Numeric("f64", 64, "float", np.float64, "float64", "double")
Float32 = Numeric("f32", 32, "float", np.float32, "float32", "float")
Float16 = Numeric("f16", 16, "float", np.float16, "float16", "__half")
BFloat16 = Numeric("bf16", 16, "float", np.uint16, "bfloat16", "__nv_bfloat16")
Int8 = Numeric("i8", 8, "int", np.int8, "int8", "signed char")
Int16 = Numeric("i16", 16, "int", np.int16, "int16", "short")
Int32 = Numeric("i32", 32, "int", np.int32, "int32", "int")
Int64 = Numeric("i64", 64, "int", np.int64, "int64", "long long")
Uint8 = Numeric("u8", 8, "uint", np.uint8, "uint8", "unsigned char")
Uint16 = Numeric("u16", 16, "uint", np.uint16, "uint16", "unsigned short")
Uint32 = Numeric("u32", 32, "uint", np.uint32, "uint32", "unsigned int")
Uint64 = Numeric("u64", 64, "uint", np.uint64, "uint64", "unsigned long long")
Boolean = Numeric("i1", 8, "bool", np.bool_, "bool", "bool")
# MMA operand types (stored as raw bits or, for tf32, as the f32 it rounds): names as MLIR prints them
TFloat32 = Numeric("tf32", 32, "float", np.float32, "tfloat32", "float")
Float8E4M3FN = Numeric("f8E4M3FN", 8, "float", np.uint8, "float8_e4m3fn", "__nv_fp8_e4m3")
Float8E5M2 = Numeric("f8E5M2", 8, "float", np.uint8, "float8_e5m2", "__nv_fp8_e5m2")

NUMERICS = {t.name: t for t in (Float64, Float32, Float16, BFloat16, Int8, Int16, Int32, Int64,
                                Uint8, Uint16, Uint32, Uint64, Boolean, TFloat32, Float8E4M3FN,
                                Float8E5M2)}


def _by_name(name: str) -> Numeric:
    return NUMERICS[name]


_FROM_NUMPY = {
    np.dtype(np.float64): Float64, np.dtype(np.float32): Float32, np.dtype(np.float16): Float16,
    np.dtype(np.int8): Int8, np.dtype(np.int16): Int16, np.dtype(np.int32): Int32,
    np.dtype(np.int64): Int64, np.dtype(np.uint8): Uint8, np.dtype(np.uint16): Uint16,
    np.dtype(np.uint32): Uint32, np.dtype(np.uint64): Uint64, np.dtype(np.bool_): Boolean,
}


def numeric_from_numpy(dtype: Any) -> Numeric:
    dt = np.dtype(dtype)
    if dt not in _FROM_NUMPY:
        raise TypeError(f"no cutelab element type for numpy dtype {dt}")
    return _FROM_NUMPY[dt]


def numeric_from_torch(dtype: Any) -> Numeric:
    name = str(dtype).replace("torch.", "")
    for t in NUMERICS.values():
        if t.torch_name == name:
            return t
    raise TypeError(f"no cutelab element type for torch dtype {dtype}")
