"""8-bit floats (Float8E4M3FN, Float8E5M2): their bytes to float32 and back, exactly as NVIDIA's converts.

* E4M3FN: sign, 4 exponent bits (bias 7), 3 mantissa bits; no infinities, 0x7f/0xff are NaN; the
  largest finite value is 448. E5M2: sign, 5 exponent bits (bias 15), 2 mantissa bits, IEEE-like
  (infinities and NaNs at exponent 31); the largest finite value is 57344.
* to float32 (``to_f32``): exact (every value is a float32).
* from float32 (``from_f32``): round to nearest, ties to even, saturating to the largest finite value
  (PTX ``cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32``, the only rounding PTX has for it); NaN stays NaN
  (0x7f, the sign kept).

``CUDA_HELPERS`` is the same pair of conversions in CUDA C (integer arithmetic, any architecture),
for the CUDA printer.

>>> import numpy as np
>>> from cutelab.numeric import Float8E4M3FN, Float8E5M2
>>> b = from_f32(np.array([1.0, -2.5, 0.1, 500.0, 1e-9], np.float32), Float8E4M3FN)
>>> [hex(x) for x in b], to_f32(b, Float8E4M3FN).tolist()
(['0x38', '0xc2', '0x1d', '0x7e', '0x0'], [1.0, -2.5, 0.1015625, 448.0, 0.0])
>>> to_f32(from_f32(np.array([3.0, 70000.0], np.float32), Float8E5M2), Float8E5M2).tolist()
[3.0, 57344.0]
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

__all__ = ["is_fp8", "to_f32", "from_f32", "e8m0_from_f32", "e8m0_to_f32", "CUDA_HELPERS"]

_FMT = {"f8E4M3FN": (4, 3, 7), "f8E5M2": (5, 2, 15)}  # exponent bits, mantissa bits, bias


def is_fp8(dtype: Any) -> bool:
    return bool(getattr(dtype, "is_fp8", False))


@lru_cache(maxsize=None)
def _table(name: str) -> np.ndarray:
    """The float32 value of each of the 256 bytes."""
    e_bits, m_bits, bias = _FMT[name]
    out = np.empty(256, np.float64)
    for code in range(256):
        s = -1.0 if code & 0x80 else 1.0
        e = (code >> m_bits) & ((1 << e_bits) - 1)
        m = code & ((1 << m_bits) - 1)
        if name == "f8E4M3FN" and e == 15 and m == 7:
            v = float("nan")
        elif name == "f8E5M2" and e == 31:
            v = float("inf") if m == 0 else float("nan")
        elif e == 0:
            v = m / (1 << m_bits) * 2.0 ** (1 - bias)
        else:
            v = (1 + m / (1 << m_bits)) * 2.0 ** (e - bias)
        out[code] = s * v
    return out.astype(np.float32)


def to_f32(bits: Any, dtype: Any) -> np.ndarray:
    """The float32 values of fp8 bytes (an array of uint8)."""
    return _table(dtype.name)[np.asarray(bits).astype(np.uint8)]


@lru_cache(maxsize=None)
def _positive(name: str) -> tuple:
    """(finite non-negative values ascending, their codes)."""
    t = _table(name)[:128].astype(np.float64)
    codes = np.array([c for c in range(128) if np.isfinite(t[c])])
    return t[codes], codes


def from_f32(x: Any, dtype: Any) -> np.ndarray:
    """fp8 bytes of float values: round to nearest even, saturate to the largest finite value, NaN -> 0x7f."""
    x = np.asarray(x, dtype=np.float64)
    vals, codes = _positive(dtype.name)
    a = np.abs(x)
    hi = np.clip(np.searchsorted(vals, a, side="left"), 0, len(vals) - 1)  # first value >= a
    lo = np.clip(hi - 1, 0, len(vals) - 1)
    dlo, dhi = np.abs(a - vals[lo]), np.abs(vals[hi] - a)
    pick_hi = (dhi < dlo) | ((dhi == dlo) & (codes[hi] % 2 == 0) & (hi != lo))
    c = np.where(pick_hi, codes[hi], codes[lo])
    c = np.where(a >= vals[-1], codes[-1], c)  # satfinite (infinities too)
    c = np.where(np.signbit(x), c | 0x80, c)
    c = np.where(np.isnan(x), 0x7F | (np.signbit(x) * 0x80), c)
    return c.astype(np.uint8)


def e8m0_from_f32(x: Any) -> np.ndarray:
    """Float8E8M0FNU bytes (unsigned powers of two 2^(code - 127), 0xFF NaN) of float values, as CuTe DSL 4.8.1
    converts them (``TensorSSA.to(Float8E8M0FNU)`` and its ``cute.testing.convert`` print ``cvt.rp.ue8m0x2.f32``
    for sm_100a): rounded toward +infinity, to the smallest power of two not below the value. So 3.0 -> 4, 2.5 -> 4
    (torch's own conversion, round-to-nearest on the mantissa, gives 4 and 2). Values past 2^127 and +inf, with
    no .satfinite, are NaN (0xFF), as NaN is; values up to 2^-127, and zero and negative values (which an
    unsigned power of two cannot hold; the nearest toward +infinity is the smallest, 2^-127), are 0x00. The
    rounding is the DSL's; the edge cases (zero, negatives, overflow) are PTX's rule for rounding toward
    +infinity and saturation, not measured on a Blackwell part."""
    x = np.asarray(x, dtype=np.float32)
    u = x.view(np.uint32).astype(np.int64)
    e = (u >> 23) & 0xFF
    m = u & 0x7FFFFF
    code = np.where(m != 0, e + 1, e)  # a mantissa above 1.0 rounds up to the next power
    sub = e == 0  # zero and subnormals: 2^-127 (code 0) when at most 2^-127 (m <= 0x400000), else 2^-126
    code = np.where(sub, np.where(m > 0x400000, 1, 0), code)
    code = np.where(np.signbit(x) & ~np.isnan(x), 0, code)
    code = np.where(np.isnan(x) | (code > 0xFE), 0xFF, code)
    return code.astype(np.uint8)


def e8m0_to_f32(bits: Any) -> np.ndarray:
    """The float32 values of Float8E8M0FNU bytes: 2^(code - 127), 0xFF NaN (2^-127 is a float32 subnormal)."""
    c = np.asarray(bits).astype(np.int64)
    with np.errstate(over="ignore"):  # code 0xFF (2^128) is NaN, set below
        out = np.ldexp(np.float32(1.0), (c - 127).astype(np.int32)).astype(np.float32)
    return np.where(c == 0xFF, np.float32(np.nan), out).astype(np.float32)


CUDA_HELPERS = r"""
__device__ __forceinline__ float cl_fp8_to_f32(unsigned char c, int e_bits, int m_bits, int bias) {
  int s = c >> 7, e = (c >> m_bits) & ((1 << e_bits) - 1), m = c & ((1 << m_bits) - 1);
  float v;
  if (e_bits == 4 && e == 15 && m == 7) v = __int_as_float(0x7fc00000);
  else if (e_bits == 5 && e == 31) v = m ? __int_as_float(0x7fc00000) : __int_as_float(0x7f800000);
  else if (e == 0) v = ldexpf((float)m, 1 - bias - m_bits);
  else v = ldexpf((float)((1 << m_bits) + m), e - bias - m_bits);
  return s ? -v : v;
}
__device__ __forceinline__ unsigned char cl_f32_to_fp8(float f, int e_bits, int m_bits, int bias, unsigned char max_code) {
  unsigned int u = __float_as_uint(f), sign = (u >> 24) & 0x80u;
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned char)(sign | 0x7fu);
  float a = fabsf(f);
  float maxv = cl_fp8_to_f32(max_code, e_bits, m_bits, bias);
  if (a >= maxv) return (unsigned char)(sign | max_code);
  if (a == 0.0f) return (unsigned char)sign;
  int e; frexpf(a, &e);  /* a = frac * 2^e, frac in [0.5, 1) */
  int q = e - 1 - m_bits;  /* the spacing of values at a's exponent: 2^q */
  if (q < 1 - bias - m_bits) q = 1 - bias - m_bits;  /* subnormals: fixed spacing */
  float n = ldexpf(a, -q);  /* exact: a in units of the spacing */
  float r = rintf(n);  /* ties to even */
  unsigned int k = (unsigned int)r;  /* the value r * 2^q; its code: */
  unsigned int code;
  if (q == 1 - bias - m_bits && k < (1u << m_bits)) code = k;  /* subnormal (or zero) */
  else {
    int ee = q + m_bits + bias;  /* the exponent field of k * 2^q with k in [2^m, 2^(m+1)] */
    if (k == (2u << m_bits)) { k >>= 1; ee += 1; }
    code = ((unsigned int)ee << m_bits) | (k - (1u << m_bits));
  }
  if (code > max_code) code = max_code;
  return (unsigned char)(sign | code);
}
__device__ __forceinline__ float cl_e4m3_to_f32(unsigned char c) { return cl_fp8_to_f32(c, 4, 3, 7); }
__device__ __forceinline__ float cl_e5m2_to_f32(unsigned char c) { return cl_fp8_to_f32(c, 5, 2, 15); }
__device__ __forceinline__ unsigned char cl_f32_to_e4m3(float f) { return cl_f32_to_fp8(f, 4, 3, 7, 0x7eu); }
__device__ __forceinline__ unsigned char cl_f32_to_e5m2(float f) { return cl_f32_to_fp8(f, 5, 2, 15, 0x7bu); }
"""
