"""Block-scaled UMMA arithmetic (``tcgen05.mma.kind::mxf8f6f4`` / ``mxf4`` / ``mxf4nvf4`` with
``.block_scale``) for the CPU interpreter: the operand formats' values, the scale factors' values,
where a UMMA reads its scale factors in tensor memory, and the scaled product.

Formats (OCP Microscaling, PTX ISA "block scaling"): A and B elements are e4m3 / e5m2 (8 bits,
cutelab.fp8), e2m3 / e3m2 (6 bits, no infinities or NaNs) or e2m1 (4 bits: 0, 0.5, 1, 1.5, 2, 3, 4, 6
and their negatives), stored one element per storage byte (the low bits). Scale factors are ue8m0
(the power of two 2^(bits - 127); 0xff is NaN) or, for ``mxf4nvf4`` with 16-element blocks, ue4m3
(e4m3 bits with the sign bit clear).

The product: ``D[m, n] (+)= sum_k A[m, k] * SFA[m, k // V] * B[n, k] * SFB[n, k // V]`` with V the
scale-factor vector size (32 for mx, 16 for nvf4), computed exactly in float64 over one instruction's
K (32 or 64) and added to the f32 accumulator, rounded to f32 once per instruction.

Scale factors in tensor memory (CuTe's tmem_sf_frg, the layout ``make_tmem_layout_sfa/sfb`` give and
``tcgen05.cp.32x128b.warpx4`` writes): row r of A (or B) reads its K/V scale factors of one UMMA from
lane r % 32 of each lane quarter, column ``col + r // 32``, bytes ``byte .. byte + K/V - 1`` of it,
where (lane 0, col, byte) is the address the atom's SFA/SFB field points to. The four lane quarters
hold copies; the interpreter reads them all and refuses a UMMA whose copies differ (the hardware
reads one of them, which this model does not pin down).

>>> import numpy as np
>>> from cutelab.numeric import Float4E2M1FN, Float8E8M0FNU
>>> values(np.arange(8, dtype=np.uint8), Float4E2M1FN).tolist()
[0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
>>> values(np.array([127, 128, 120], dtype=np.uint8), Float8E8M0FNU).tolist()
[1.0, 2.0, 0.0078125]
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ...errors import LaunchError

__all__ = ["values", "scale_values", "scaled_mma", "read_scale_factors"]

# mlir name -> (exponent bits, mantissa bits, bias) of the finite-only small float formats
_SMALL = {"f4E2M1FN": (2, 1, 1), "f6E2M3FN": (2, 3, 1), "f6E3M2FN": (3, 2, 3)}


@lru_cache(maxsize=None)
def _table(name: str) -> np.ndarray:
    """Every value of a finite-only ExMy format (no infinities, no NaNs), indexed by its bits."""
    e_bits, m_bits, bias = _SMALL[name]
    n = 1 << (1 + e_bits + m_bits)
    out = np.zeros(n, dtype=np.float64)
    for b in range(n):
        s = -1.0 if b >> (e_bits + m_bits) else 1.0
        e = (b >> m_bits) & ((1 << e_bits) - 1)
        m = b & ((1 << m_bits) - 1)
        out[b] = s * (m / (1 << m_bits)) * 2.0 ** (1 - bias) if e == 0 else \
            s * (1 + m / (1 << m_bits)) * 2.0 ** (e - bias)
    return out


def values(bits: Any, dtype: Any) -> np.ndarray:
    """The float64 values of A/B operand elements of dtype given as their bits (one element per byte)."""
    from ... import fp8

    b = np.asarray(bits)
    name = dtype.name
    if name in _SMALL:
        w = dtype.width
        if (b.astype(np.int64) >> w).any():
            raise ValueError(f"{dtype}: element bits above its {w} bits are set")
        return _table(name)[b.astype(np.int64)]
    if name in ("f8E4M3FN", "f8E5M2"):
        return fp8.to_f32(b.astype(np.uint8), dtype).astype(np.float64)
    if name == "f8E8M0FNU":
        return scale_values(b, dtype)
    raise ValueError(f"block-scaled UMMA operands are e4m3, e5m2, e2m3, e3m2 or e2m1, not {dtype}")


def scale_values(bits: Any, dtype: Any) -> np.ndarray:
    """The float64 values of scale factors: ue8m0 (2^(b-127), 0xff NaN) or ue4m3 (Float8E4M3FN bits,
    sign bit clear)."""
    from ... import fp8

    b = np.asarray(bits).astype(np.int64)
    if dtype.name == "f8E8M0FNU":
        out = np.ldexp(1.0, b - 127)
        return np.where(b == 0xFF, np.nan, out)
    if dtype.name == "f8E4M3FN":
        if (b & 0x80).any():
            raise ValueError("ue4m3 scale factors are unsigned: a scale factor has its sign bit set")
        return fp8.to_f32(b.astype(np.uint8), dtype).astype(np.float64)
    raise ValueError(f"block-scale factors are Float8E8M0FNU (ue8m0) or Float8E4M3FN (ue4m3), not {dtype}")


def scaled_mma(a: np.ndarray, b: np.ndarray, sfa: np.ndarray, sfb: np.ndarray, vec: int) -> np.ndarray:
    """sum_k a[m,k] sfa[m,k//vec] b[n,k] sfb[n,k//vec] for values a (M,K), b (N,K) and scale values
    sfa (M,K/vec), sfb (N,K/vec): an (M,N) float64 array.

    >>> a, b = np.ones((2, 32)), np.ones((3, 32))
    >>> float(scaled_mma(a, b, np.array([[1.0, 2.0]] * 2), np.array([[4.0, 1.0]] * 3), 16)[0, 0])
    96.0
    """
    K = a.shape[1]
    if K % vec or sfa.shape[1] != K // vec or sfb.shape[1] != K // vec:
        raise ValueError(f"scaled_mma: K = {K} with {sfa.shape[1]}/{sfb.shape[1]} scale factors of blocks of {vec}")
    sa = np.repeat(sfa, vec, axis=1)
    sb = np.repeat(sfb, vec, axis=1)
    return (a * sa) @ (b * sb).T


def read_scale_factors(cells8: np.ndarray, blk: int, addr: int, dp: int, rows: int, nsf: int, what: str) -> np.ndarray:
    """The scale-factor bits (rows, nsf) one UMMA reads from a CTA's tensor memory: cells8 the TMEM
    as bytes (blocks, 128 lanes, 2048), addr the field's TMEM address in bytes (lane * dp + byte)."""
    lane0, e = addr // dp, addr % dp
    col, byte = e // 4, e % 4
    if lane0 != 0:
        raise LaunchError(f"{what}: the scale-factor address is at lane {lane0}; a block-scaled UMMA's scale factors "
                          f"start at lane 0 (each row r at lane r % 32 of every lane quarter)")
    if byte + nsf > 4:
        raise LaunchError(f"{what}: {nsf} scale factors per row from byte {byte} of a 32-bit column cross into the "
                          f"next column; the UMMA's scale-factor id selects bytes within one column")
    r = np.arange(rows)
    cols = col + r // 32
    if cols.max() >= cells8.shape[2] // 4:
        raise LaunchError(f"{what}: the scale factors reach past tensor-memory column 511")
    copies = []
    for q in range(4):
        lanes = r % 32 + 32 * q
        copies.append(cells8[blk, lanes[:, None], 4 * cols[:, None] + byte + np.arange(nsf)[None, :]])
    for q in range(1, 4):
        if not np.array_equal(copies[0], copies[q]):
            bad = int(np.argmax((copies[0] != copies[q]).any(axis=1)))
            raise LaunchError(f"{what}: the scale factors of row {bad} differ between lane quarter 0 and {q} (lanes "
                              f"{bad % 32} and {bad % 32 + 32 * q}); the block-scaled UMMA model reads them with the "
                              f"four quarters holding copies, as tcgen05.cp.32x128b.warpx4 (Cp4x32x128bOp) writes them")
    return copies[0]
