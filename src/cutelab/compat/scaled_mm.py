"""``torch._scaled_mm`` with block scaling, for tensors on the emulated CUDA device.

CPU torch computes ``_scaled_mm`` with tensor-wise and row-wise scales only; CUTLASS's block-scaled
examples check their kernels against cuBLAS's block-scaled ``_scaled_mm`` on the GPU:

- MXFP8: A, B float8 (e4m3 / e5m2), scales float8_e8m0fnu, one per 32 elements of K;
- MXFP4: A, B float4_e2m1fn_x2 (two e2m1 to a byte), scales float8_e8m0fnu, one per 32;
- NVFP4: A, B float4_e2m1fn_x2, scales float8_e4m3fn, one per 16.

The scales come "blocked" as cuBLAS wants them (the examples' ``to_blocked``): the (rows, K/V)
matrix padded to 128 rows and 4 columns, cut into 128 x 4 blocks in row-major block order, each
block stored as 32 x 16 with element (r, c) of the block at [r % 32, 4 * (r // 32) + c], flattened.
The product is computed exactly in float64 from the decoded values and rounded once to out_dtype
(cuBLAS sums in float32: results can differ in the last bits).

>>> import torch
>>> a = torch.full((128, 64), 0.5).to(torch.float8_e4m3fn)
>>> b = torch.full((128, 64), 2.0).to(torch.float8_e4m3fn)
>>> s = torch.full((128 * 4,), 1.0).to(torch.float8_e8m0fnu)  # 128 rows x 2 scales, padded to 4 columns
>>> scaled_mm(a, b.t(), s, s, out_dtype=torch.float32)[0, 0].item()
64.0
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

__all__ = ["is_block_scaled", "scaled_mm", "unblock_scales"]


def _kind(a: Any, scale: Any) -> Optional[tuple]:
    """(element format, block size) of a block-scaled _scaled_mm, None for other scalings."""
    import torch

    sd = getattr(scale, "dtype", None)
    if sd not in (torch.float8_e8m0fnu, torch.float8_e4m3fn):
        return None
    if a.dtype == torch.float4_e2m1fn_x2:
        return ("e2m1", 16 if sd == torch.float8_e4m3fn else 32)
    if a.dtype in (torch.float8_e4m3fn, torch.float8_e5m2) and sd == torch.float8_e8m0fnu:
        return ("fp8", 32)
    return None


def is_block_scaled(args: Any, kwargs: Any) -> bool:
    """Whether a torch._scaled_mm call has block scales (which CPU torch does not compute)."""
    if len(args) < 3 and "scale_a" not in kwargs:
        return False
    a = args[0] if args else kwargs.get("self")
    sa = args[2] if len(args) > 2 else kwargs.get("scale_a")
    return a is not None and sa is not None and _kind(a, sa) is not None


def _values(t: Any) -> np.ndarray:
    """The float64 values of a 2-D A or B operand (fp8, or fp4 two to a byte: the K extent doubles)."""
    import torch

    if t.dtype == torch.float4_e2m1fn_x2:
        from ..kernel.instr.tcgen05_blockscaled import values
        from ..numeric import Float4E2M1FN

        u = t.view(torch.uint8).numpy() if t.is_contiguous() else t.contiguous().view(torch.uint8).numpy()
        out = np.empty((u.shape[0], 2 * u.shape[1]), dtype=np.float64)
        out[:, 0::2] = values(u & 0xF, Float4E2M1FN)
        out[:, 1::2] = values(u >> 4, Float4E2M1FN)
        return out
    return t.to(torch.float64).numpy()


def unblock_scales(flat: Any, rows: int, cols: int) -> np.ndarray:
    """The (rows, cols) scale values of cuBLAS's blocked layout (the examples' to_blocked, inverted).

    >>> x = np.arange(128 * 8, dtype=np.float64).reshape(128, 8)
    >>> blocked = x.reshape(1, 128, 2, 4).transpose(0, 2, 1, 3).reshape(-1, 4, 32, 4).transpose(0, 2, 1, 3)
    >>> bool((unblock_scales(blocked.reshape(-1), 128, 8) == x).all())
    True
    """
    import torch

    v = flat.to(torch.float64).numpy() if isinstance(flat, torch.Tensor) else np.asarray(flat, np.float64)
    rb, cb = -(-rows // 128), -(-cols // 4)
    if v.size != rb * cb * 512:
        raise ValueError(f"torch._scaled_mm (emulated): {v.size} block scales for a {rows} x {cols} scale matrix; "
                         f"cuBLAS's blocked layout has {rb * cb * 512} (rows padded to 128, columns to 4)")
    m = v.reshape(rb, cb, 32, 4, 4).transpose(0, 1, 3, 2, 4).reshape(rb, cb, 128, 4)
    return m.transpose(0, 2, 1, 3).reshape(rb * 128, cb * 4)[:rows, :cols]


def scaled_mm(a: Any, b: Any, scale_a: Any, scale_b: Any, bias: Any = None, scale_result: Any = None,
              out_dtype: Any = None, use_fast_accum: bool = False) -> Any:
    """torch._scaled_mm(a, b, scale_a, scale_b, ...) with block scales: (A * SA) @ (B * SB) (+ bias)."""
    import torch

    kind = _kind(a, scale_a)
    if kind is None or _kind(b, scale_b) != kind:
        raise TypeError(f"torch._scaled_mm (emulated): A {a.dtype} with scales {getattr(scale_a, 'dtype', None)} and "
                        f"B {b.dtype} with scales {getattr(scale_b, 'dtype', None)} are not one of the block scalings "
                        f"MXFP8, MXFP4, NVFP4")
    if scale_result is not None:
        raise TypeError("torch._scaled_mm (emulated): scale_result is not supported with block scales")
    A = _values(a)  # (M, K)
    Bt = _values(b.t())  # (N, K): b is (K, N)
    M, K = A.shape
    N = Bt.shape[0]
    if Bt.shape[1] != K:
        raise ValueError(f"torch._scaled_mm (emulated): A is {M} x {K} but B is {Bt.shape[1]} x {N}")
    V = kind[1]
    if K % V:
        raise ValueError(f"torch._scaled_mm (emulated): K = {K} is not a multiple of the scale block {V}")
    sa = np.repeat(unblock_scales(scale_a.reshape(-1), M, K // V), V, axis=1)
    sb = np.repeat(unblock_scales(scale_b.reshape(-1), N, K // V), V, axis=1)
    out = (A * sa) @ (Bt * sb).T
    if bias is not None:
        out = out + bias.to(torch.float64).numpy()
    return torch.from_numpy(out).to(out_dtype if out_dtype is not None else torch.bfloat16)
