"""C types of cutelab's element types: storage and compute types (``ctype``), the conversions
between them (``to_compute``/``to_storage``: bf16 and fp16 are 16-bit words converted by inline
helpers, fp8 by cutelab/fp8.py's) and the bits of an f16/bf16 constant (``half_bits``).
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import numpy as np

from ...errors import TraceError

__all__ = ["ctype", "to_compute", "to_storage", "half_bits"]

# storage type, compute type, printf format of the compute value
_TYPES: Dict[str, Tuple[str, str, str]] = {
    "bf16": ("unsigned short", "float", "%f"),
    "f16": ("unsigned short", "float", "%f"),
    "f32": ("float", "float", "%f"),
    "f64": ("double", "double", "%f"),
    "i8": ("signed char", "int", "%d"),
    "i16": ("short", "int", "%d"),
    "i32": ("int", "int", "%d"),
    "i64": ("long long", "long long", "%lld"),
    "u8": ("unsigned char", "unsigned int", "%u"),
    "u16": ("unsigned short", "unsigned int", "%u"),
    "u32": ("unsigned int", "unsigned int", "%u"),
    "u64": ("unsigned long long", "unsigned long long", "%llu"),
    "i1": ("unsigned char", "int", "%d"),
    "f8E4M3FN": ("unsigned char", "float", "%f"),  # conversions: cutelab/fp8.py CUDA_HELPERS
    "f8E5M2": ("unsigned char", "float", "%f"),
}
_FP8 = {"f8E4M3FN": "e4m3", "f8E5M2": "e5m2"}


def half_bits(v: Any, name: str) -> Optional[int]:
    """The 16 bits of constant v as f16 or bf16, as the kernel's conversion of the float literal
    ``v`` computes them at run time (``cl_f32_to_f16``: cvt.rn; ``cl_f32_to_bf16``: round to
    nearest even); None where the printer keeps the conversion (v not exactly a float32, not finite).

    >>> [hex(half_bits(x, "f16")) for x in (0.0, 1.0, -2.5, 65520.0)]
    ['0x0', '0x3c00', '0xc100', '0x7c00']
    >>> [hex(half_bits(x, "bf16")) for x in (0.0, 1.0, -2.5, 1.00390625)]
    ['0x0', '0x3f80', '0xc020', '0x3f80']
    """
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    with np.errstate(over="ignore"):
        f32 = np.float32(f)
    if not np.isfinite(f32) or float(f32) != f:
        return None
    if name == "f16":
        with np.errstate(over="ignore"):
            return int(f32.astype(np.float16).view(np.uint16))
    u = int(f32.view(np.uint32))
    return ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFFFFFF) >> 16


def _printf_kind(dt: Any) -> str:
    return "float" if dt.kind == "float" else "bool" if dt.kind == "bool" else dt.kind


def ctype(dtype: Any) -> Tuple[str, str, str]:
    try:
        return _TYPES[dtype.name]
    except KeyError:
        raise TraceError(f"the CUDA back end has no type for element type {dtype}") from None


def _to_compute(code: str, dtype: Any) -> str:
    if dtype.name == "bf16":
        return f"cl_bf16_to_f32({code})"
    if dtype.name == "f16":
        return f"cl_f16_to_f32({code})"
    if dtype.name in _FP8:
        return f"cl_{_FP8[dtype.name]}_to_f32({code})"
    return code


def _to_storage(code: str, dtype: Any) -> str:
    if dtype.name == "bf16":
        return f"cl_f32_to_bf16({code})"
    if dtype.name == "f16":
        return f"cl_f32_to_f16({code})"
    if dtype.name == "i1":
        return f"(unsigned char)(({code}) != 0)"
    if dtype.name in _FP8:
        return f"cl_f32_to_{_FP8[dtype.name]}({code})"
    return f"({ctype(dtype)[0]})({code})"


to_compute = _to_compute
to_storage = _to_storage
