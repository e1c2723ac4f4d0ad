"""C types of cutelab's element types, read from the one table (cutelab/dtypes.py): storage and
compute types (``ctype``), the conversions between them (``to_compute``/``to_storage``: bf16 and
fp16 are 16-bit words converted by inline helpers, fp8 by cutelab/fp8.py's) and the bits of an
f16/bf16 constant (``half_bits``).
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from ...dtypes import TABLE
from ...dtypes import to_storage as _bits_of
from ...numeric import BFloat16
from ...errors import TraceError

__all__ = ["ctype", "to_compute", "to_storage", "half_bits"]

_NO_C: frozenset = frozenset()  # every type of the table has a C type (tf32: the f32 word it is kept in)
_FP8 = {"f8E4M3FN": "e4m3", "f8E5M2": "e5m2"}  # the fp8 helpers' names (cutelab/fp8.py CUDA_HELPERS)


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
    return int(_bits_of(f32, BFloat16))


def _printf_kind(dt: Any) -> str:
    return "float" if dt.is_float else dt.kind


#: types the kernels only move (TMA, tcgen05.cp, copies of bytes), stored as bytes: block scales
_BYTES_ONLY = frozenset(("f8E8M0FNU",))


def _bytes_only(dtype: Any, what: str) -> None:
    raise TraceError(f"the CUDA back end moves {dtype} values as bytes only (block-scaled UMMAs' scale factors); "
                     f"{what} of them is not supported")


def ctype(dtype: Any) -> Tuple[str, str, str]:
    """(storage C type, compute C type, printf format of the compute value) of dtype."""
    if dtype.name in _BYTES_ONLY:
        return "unsigned char", "unsigned char", "%u"
    r = TABLE.get(dtype.name)
    if r is None or dtype.name in _NO_C:
        raise TraceError(f"the CUDA back end has no type for element type {dtype}")
    return r.c_storage, r.c_compute, r.c_printf


def _to_compute(code: str, dtype: Any) -> str:
    if dtype.name in _BYTES_ONLY:
        _bytes_only(dtype, "arithmetic on")
    r = TABLE.get(dtype.name)
    return code if r is None else r.c_to_compute.format(code)


def _to_storage(code: str, dtype: Any) -> str:
    if dtype.name in _BYTES_ONLY:
        _bytes_only(dtype, "conversion to")
    if dtype.name not in TABLE or dtype.name in _NO_C:
        ctype(dtype)  # raises
    return TABLE[dtype.name].c_to_storage.format(code)


to_compute = _to_compute
to_storage = _to_storage
