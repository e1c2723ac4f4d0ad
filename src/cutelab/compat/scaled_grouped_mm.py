"""``torch._scaled_grouped_mm_v2`` (``torch.nn.functional.scaled_grouped_mm``) with block scales, for tensors on the
emulated CUDA device: CPU torch has no kernel for it; CUTLASS's MoE example (torch_scaled_grouped_mm.py) checks its
kernel against it.

The groups (``offs``: the cumulative ends of the groups along the grouped dimension):

- 2D x 3D: A (M_total, K) cut into groups of rows, B (G, K, N); out (M_total, N). A's scales: each group's
  (M_g, K / V) matrix in cuBLAS's blocked layout (``scaled_mm.unblock_scales``: rows padded to 128, columns to 4),
  one after the other (a 2-D tensor of sum of the padded rows); B's: one blocked (N, K / V) matrix per group.
- 2D x 2D: A (M, K_total) and B (K_total, N) cut into groups of K; out (G, M, N). Each operand's scales: each
  group's (rows, K_g / V) matrix blocked, one after the other.

Recipes: ``BlockWise1x32`` (MXFP8, MXFP4: float8_e8m0fnu scales) and ``BlockWise1x16`` with a ``TensorWise``
scale per group (NVFP4: float8_e4m3fn block scales and a float32 scale per group, as a list of two tensors), with
the ``SWIZZLE_32_4_4`` (blocked) scale layout. Exact in float64, rounded once to the output type.

>>> import torch
>>> a = torch.full((3, 64), 0.5).to(torch.float8_e4m3fn)
>>> b = torch.full((2, 64, 16), 2.0).to(torch.float8_e4m3fn).transpose(1, 2).contiguous().transpose(1, 2)
>>> sa = torch.ones(256, 4).to(torch.float8_e8m0fnu)  # groups of 1 and 2 rows, each padded to 128
>>> sb = torch.ones(2, 512).to(torch.float8_e8m0fnu)
>>> out = scaled_grouped_mm_v2(a, b, [sa], [3], [1], [sb], [3], [1], torch.tensor([1, 3], dtype=torch.int32))
>>> out.shape, out[2, 0].item()
(torch.Size([3, 16]), 64.0)
"""

from __future__ import annotations

from typing import Any, List

import numpy as np

from .scaled_mm import _kind, _values, unblock_scales

__all__ = ["scaled_grouped_mm_v2"]

_TENSORWISE, _BLOCK16, _BLOCK32 = 0, 2, 3
_SWIZZLE_32_4_4 = 1


def _err(msg: str) -> ValueError:
    return ValueError(f"torch._scaled_grouped_mm_v2 (emulated): {msg}")


def _recipe(scales: Any, recipes: Any, swizzles: Any, x: Any, which: str) -> tuple:
    """(block scales, block size, per-group float scales or None) of one operand."""
    scales = list(scales) if isinstance(scales, (list, tuple)) else [scales]
    recipes = [int(r) for r in recipes]
    swizzles = [int(s) for s in swizzles]
    if recipes == [_BLOCK32] and len(scales) == 1:
        block, glob = scales[0], None
    elif recipes == [_BLOCK16, _TENSORWISE] and len(scales) == 2:
        block, glob = scales
    else:
        raise _err(f"{which}: the recipes {recipes} with {len(scales)} scale tensors are not supported (BlockWise1x32; "
                   f"BlockWise1x16 with a TensorWise scale)")
    if not swizzles or swizzles[0] != _SWIZZLE_32_4_4:
        raise _err(f"{which}: only block scales in the SWIZZLE_32_4_4 (blocked) layout are supported, got {swizzles}")
    kind = _kind(x, block)
    if kind is None or kind[1] != (16 if recipes[0] == _BLOCK16 else 32):
        raise _err(f"{which}: {x.dtype} with {block.dtype} scales does not match the recipe {recipes}")
    g = None if glob is None else glob.to(__import__("torch").float64).reshape(-1).numpy()
    return block, kind[1], g


def _take(flat: np.ndarray, at: int, rows: int, cols: int, which: str) -> tuple:
    """(the (rows, cols) scales of a blocked matrix starting at element ``at`` of flat, the next start)."""
    n = -(-rows // 128) * 128 * (-(-cols // 4) * 4)
    if at + n > flat.size:
        raise _err(f"{which}: the scales hold {flat.size} values; a group needs {n} from {at} (its {rows} x {cols} "
                   f"scales, blocked)")
    return unblock_scales(flat[at:at + n], rows, cols), at + n


def scaled_grouped_mm_v2(mat_a: Any, mat_b: Any, scale_a: Any, recipe_a: Any, swizzle_a: Any, scale_b: Any,
                         recipe_b: Any, swizzle_b: Any, offs: Any = None, bias: Any = None, output_dtype: Any = None,
                         contraction_dim: Any = (), use_fast_accum: bool = False) -> Any:
    """The grouped product (see the module docstring) of block-scaled A and B."""
    import torch

    if offs is None or bias is not None or tuple(contraction_dim):
        raise _err("only grouped products with offs, no bias and the default contraction dimensions are supported")
    sa, va, ga = _recipe(scale_a, recipe_a, swizzle_a, mat_a, "A")
    sb, vb, gb = _recipe(scale_b, recipe_b, swizzle_b, mat_b, "B")
    if va != vb:
        raise _err(f"A's scale blocks are {va} elements, B's {vb}")
    V = va
    ends = [int(x) for x in offs.reshape(-1).tolist()]
    G = len(ends)
    starts = [0] + ends[:-1]
    fa = sa.to(torch.float64).reshape(-1).numpy()
    fb = sb.to(torch.float64).reshape(-1).numpy()
    out_dtype = output_dtype if output_dtype is not None else torch.bfloat16

    def glob(g: Any, k: int) -> float:
        return 1.0 if g is None else float(g[k])

    if mat_a.dim() == 2 and mat_b.dim() == 3:
        A = _values(mat_a)  # (M_total, K)
        K = A.shape[1]
        if mat_b.shape[0] != G or K % V:
            raise _err(f"B has {mat_b.shape[0]} groups for {G} offsets, or K = {K} is not a multiple of {V}")
        N = mat_b.shape[2]
        out = np.zeros((A.shape[0], N))
        at = 0
        per_b = fb.size // G
        for k in range(G):
            r0, r1 = starts[k], ends[k]
            if r1 < r0 or r1 > A.shape[0]:
                raise _err(f"offs {ends} do not cut A's {A.shape[0]} rows")
            Bt = _values(mat_b[k].t())  # (N, K)
            s_b, _ = _take(fb[k * per_b:(k + 1) * per_b], 0, N, K // V, "B")
            if r1 == r0:
                continue
            s_a, at = _take(fa, at, r1 - r0, K // V, "A")
            out[r0:r1] = (A[r0:r1] * np.repeat(s_a, V, axis=1)) @ (Bt * np.repeat(s_b, V, axis=1)).T \
                * glob(ga, k) * glob(gb, k)
    elif mat_a.dim() == 2 and mat_b.dim() == 2:
        A, Bt = _values(mat_a), _values(mat_b.t())  # (M, K_total), (N, K_total)
        M, N = A.shape[0], Bt.shape[0]
        out = np.zeros((G, M, N))
        at_a = at_b = 0
        for k in range(G):
            k0, k1 = starts[k], ends[k]
            if k1 < k0 or k1 > A.shape[1] or (k1 - k0) % V:
                raise _err(f"group {k}'s K range {k0}..{k1} is not a multiple of {V} inside A's {A.shape[1]} columns")
            if k1 == k0:
                continue
            s_a, at_a = _take(fa, at_a, M, (k1 - k0) // V, "A")
            s_b, at_b = _take(fb, at_b, N, (k1 - k0) // V, "B")
            out[k] = (A[:, k0:k1] * np.repeat(s_a, V, axis=1)) @ (Bt[:, k0:k1] * np.repeat(s_b, V, axis=1)).T \
                * glob(ga, k) * glob(gb, k)
    else:
        raise _err(f"A of {mat_a.dim()} and B of {mat_b.dim()} dimensions: only 2D x 3D and 2D x 2D are supported")
    return torch.from_numpy(out).to(out_dtype)
