"""Element types' data in one table: storage, compute type, conversions and C names.

One row per element type of ``cutelab.numeric`` (keyed by its name, ``Row``):

- ``compute``: the numpy dtype kernels compute in, as the CUDA back end's compute type does
  (f16, bf16 and fp8 widen to float32; Booleans to int32; others compute in their storage);
- ``values``: the numpy dtype that shows the values to a user exactly (``TensorSSA.numpy()``):
  the storage where numpy has the type (f16 stays float16, Booleans bool), float32 for bf16/fp8;
- ``c_storage``, ``c_compute``, ``c_printf``: the C type of the bits in memory, of the value
  computed with, and the printf format of the computed value;
- ``c_to_compute``, ``c_to_storage``: C conversions, as format strings of the code (``{}``).

The conversions, written once (``to_compute``: storage bits -> compute values, exact;
``to_storage``: values -> storage bits). Rules of ``to_storage``:

- to a float type: round to nearest, ties to even. f16 overflows to inf; bf16 rounds the float32
  bits (NaN becomes 0x7FFF, the sign dropped, as PTX cvt.rn.bf16.f32 gives on the GPU); fp8 saturates to the largest
  finite value and keeps NaN (0x7F with the sign) as PTX ``cvt.rn.satfinite`` (cutelab/fp8.py).
  bf16 rounds from float32 (a float64 value is rounded to float32 first, as the GPU, which
  computes in float, does); fp8 rounds the value itself;
- float to an integer type: as the CUDA code's ``(T)((C)(x))``: truncate toward zero to the C
  compute type C (int, unsigned int, long long, unsigned long long), where NaN becomes 0 and
  values past C's range saturate to its bounds (PTX ``cvt.rzi``), then keep T's low bits (an Int8
  of 300.0 is 44, as on the GPU; an Int32 of 3e9 is 2**31 - 1);
- integer to integer: the low bits (two's complement wrap), as C;
- to a Boolean: ``x != 0`` (NaN is true);
- values are always numbers: a uint8 array converted to fp8 is the numbers 0..255, never
  the fp8 bytes (raw bits go into storage without a conversion).

numpy is imported on first use only (``import cutelab`` must not load it).

>>> import numpy as np
>>> from cutelab.numeric import BFloat16, Float8E4M3FN, Int8, Uint8
>>> to_storage(np.array([1.0, np.nan, 3.0039], np.float32), BFloat16).tolist()
[16256, 32767, 16448]
>>> to_storage(np.array([2.7, -2.7, 300.0, np.nan, 1e10]), Int8).tolist()
[2, -2, 44, 0, -1]
>>> to_compute(to_storage(np.array([3], np.uint8), Float8E4M3FN), Float8E4M3FN).tolist()
[3.0]
>>> row(Uint8).c_storage, row(BFloat16).c_to_compute.format("x")
('unsigned char', 'cl_bf16_to_f32(x)')
"""

from __future__ import annotations

import sys
from typing import Any, Dict, NamedTuple

from .numeric import NUMERICS, Numeric

__all__ = ["Row", "TABLE", "row", "compute_dtype", "values_dtype", "to_compute", "to_storage", "to_values",
           "convert"]


class Row(NamedTuple):
    """What one element type is in memory, in arithmetic and in C."""

    compute: str  # numpy name of the dtype computed with
    values: str  # numpy name of the dtype showing the values exactly
    c_storage: str
    c_compute: str
    c_printf: str
    c_to_compute: str  # "{}" where the storage is the compute type
    c_to_storage: str


def _r(compute: str, values: str, c_storage: str, c_compute: str, c_printf: str,
       c_to_compute: str = "{}", c_to_storage: str = "") -> Row:
    return Row(compute, values, c_storage, c_compute, c_printf, c_to_compute,
               c_to_storage or "(" + c_storage + ")({})")


TABLE: Dict[str, Row] = {
    "f64": _r("float64", "float64", "double", "double", "%f"),
    "f32": _r("float32", "float32", "float", "float", "%f"),
    "tf32": _r("float32", "float32", "float", "float", "%f"),
    "f16": _r("float32", "float16", "unsigned short", "float", "%f", "cl_f16_to_f32({})", "cl_f32_to_f16({})"),
    "bf16": _r("float32", "float32", "unsigned short", "float", "%f", "cl_bf16_to_f32({})", "cl_f32_to_bf16({})"),
    "f8E4M3FN": _r("float32", "float32", "unsigned char", "float", "%f", "cl_e4m3_to_f32({})", "cl_f32_to_e4m3({})"),
    "f8E5M2": _r("float32", "float32", "unsigned char", "float", "%f", "cl_e5m2_to_f32({})", "cl_f32_to_e5m2({})"),
    "i8": _r("int8", "int8", "signed char", "int", "%d"),
    "i16": _r("int16", "int16", "short", "int", "%d"),
    "i32": _r("int32", "int32", "int", "int", "%d"),
    "i64": _r("int64", "int64", "long long", "long long", "%lld"),
    "u8": _r("uint8", "uint8", "unsigned char", "unsigned int", "%u"),
    "u16": _r("uint16", "uint16", "unsigned short", "unsigned int", "%u"),
    "u32": _r("uint32", "uint32", "unsigned int", "unsigned int", "%u"),
    "u64": _r("uint64", "uint64", "unsigned long long", "unsigned long long", "%llu"),
    "i1": _r("int32", "bool", "unsigned char", "int", "%d", "{}", "(unsigned char)(({}) != 0)"),
}
assert set(TABLE) == set(NUMERICS), "every element type has a row"


def row(dt: Numeric) -> Row:
    """dt's row (KeyError for a type without one: Int4, Int128, ...)."""
    return TABLE[dt.name]


_DTYPES: Dict[Any, Any] = {}  # (name, column) -> numpy dtype, made on first use


def _dtype(dt: Numeric, col: int) -> Any:
    key = (dt.name, col)
    d = _DTYPES.get(key)
    if d is None:
        import numpy as np

        d = _DTYPES[key] = np.dtype(TABLE[dt.name][col] if dt.name in TABLE else dt.storage)
    return d


def compute_dtype(dt: Numeric) -> Any:
    """The numpy dtype kernels compute dt's values in."""
    return _dtype(dt, 0)


def values_dtype(dt: Numeric) -> Any:
    """The numpy dtype that holds dt's values exactly, as users see them."""
    return _dtype(dt, 1)


def _np() -> Any:
    return sys.modules.get("numpy") or __import__("numpy")


def to_compute(bits: Any, dt: Numeric) -> Any:
    """Storage bits of dt (an array of dt.storage) as compute values (compute_dtype(dt)), exactly."""
    np = _np()
    name = dt.name
    if name == "bf16":
        return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
    if name == "f16":
        return bits.view(np.float16).astype(np.float32) if bits.dtype != np.float16 else bits.astype(np.float32)
    if name == "i1":
        return bits.astype(np.int32)
    if dt.is_fp8:
        from . import fp8

        return fp8.to_f32(bits, dt)
    if name == "f8E8M0FNU":  # block scales on the host (bytes 2^(c - 127)); kernels move them as bytes
        from . import fp8

        return fp8.e8m0_to_f32(bits)
    return bits


def to_values(bits: Any, dt: Numeric) -> Any:
    """Storage bits of dt as the values users see (values_dtype(dt)): the storage itself where
    numpy has the type (f16, Booleans), else the compute values."""
    if dt.name in ("f16", "i1"):
        return bits
    return to_compute(bits, dt)


def convert(x: Any, dt: Numeric) -> Any:
    """Compute values of any type (a numpy array) as compute values of dt, as a C cast to dt's
    compute type: float to integer by the rule of to_storage (truncate, NaN 0, saturate), else
    numpy's cast (ints to floats round to nearest even; ints to ints wrap)."""
    cd = compute_dtype(dt)
    if x.dtype.kind == "f" and cd.kind in "iu":
        return _float_to_int(x, dt, cd)
    return x.astype(cd, copy=False)


def to_storage(x: Any, dt: Numeric) -> Any:
    """Values as storage bits of dt, by the rules in the module's docstring."""
    np = _np()
    x = np.asarray(x)
    name = dt.name
    if name == "bf16":
        f = x.astype(np.float32)
        u = f.view(np.uint32)
        r = ((u + np.uint32(0x7FFF) + ((u >> 16) & np.uint32(1))) >> 16).astype(np.uint16)
        return np.where(np.isnan(f), np.uint16(0x7FFF), r)
    if name == "f16":
        h = x.astype(np.float16)
        return h.view(np.uint16) if dt.storage == np.uint16 else h.astype(dt.storage)
    if name == "i1":
        return (x != 0).astype(dt.storage)
    if dt.is_fp8:
        from . import fp8

        return fp8.from_f32(x, dt)
    if name == "f8E8M0FNU":  # rounded toward +infinity, as CuTe DSL converts (fp8.e8m0_from_f32)
        from . import fp8

        return fp8.e8m0_from_f32(x)
    st = dt.storage
    if x.dtype.kind == "f" and st.kind in "iu":
        return _float_to_int(x, dt, st)
    return x.astype(st)


_C_INT = {"int": "int32", "unsigned int": "uint32", "long long": "int64", "unsigned long long": "uint64"}


def _float_to_int(x: Any, dt: Numeric, out: Any) -> Any:
    """Floats as integers of numpy dtype out, as the CUDA code's ``(T)((C)(x))`` computes them: to
    dt's C compute type C truncating toward zero, NaN -> 0, saturating to C's range (PTX cvt.rzi),
    then C's integer cast to out (the low bits)."""
    np = _np()
    r = TABLE.get(dt.name)
    sat = np.dtype(_C_INT.get(r.c_compute, "int64") if r is not None else dt.storage)
    with np.errstate(invalid="ignore", over="ignore"):
        t = np.trunc(x)
        res = t.astype(sat)
        bits = sat.itemsize * 8
        lo = 0 if sat.kind == "u" else -(2 ** (bits - 1))
        top = 2.0 ** bits if sat.kind == "u" else 2.0 ** (bits - 1)  # first value past the range, exact
        bad = ~(t < top) | (t < lo)  # NaN too
        if bad.any():
            info = np.iinfo(sat)
            res = np.where(t >= top, sat.type(info.max), np.where(t < lo, sat.type(info.min), res))
            res = np.where(np.isnan(t), sat.type(0), res).astype(sat)
    return res.astype(out, copy=False)
