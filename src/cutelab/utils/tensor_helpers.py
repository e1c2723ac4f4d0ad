"""``cutlass.utils.tensor_helpers``: making kernel tensors from framework tensors.

>>> import cutelab
>>> is_fp8_dtype(cutelab.Float16)
False
"""

from __future__ import annotations

from typing import Any, Optional

__all__ = ["is_fp8_dtype", "create_cute_tensor_for_fp8"]


def is_fp8_dtype(dtype: Any) -> bool:
    """True for Float8E4M3FN and Float8E5M2 (the types DLPack cannot carry)."""
    from ..numeric import Float8E4M3FN, Float8E5M2

    return dtype in (Float8E4M3FN, Float8E5M2)


def create_cute_tensor_for_fp8(storage_tensor: Any, dtype: Any, leading_dim: int,
                               source_f32_tensor: Optional[Any] = None, assumed_align: int = 16,
                               mark_dynamic_layout: bool = True) -> Any:
    """A kernel tensor over storage_tensor (from_dlpack), its layout dynamic except along
    leading_dim when mark_dynamic_layout. FP8 tensors (byte storage filled from an f32 source
    on the GPU in CuTe DSL) are not supported by cutelab yet: they raise."""
    from ..runtime import from_dlpack

    if is_fp8_dtype(dtype):
        raise NotImplementedError(
            f"create_cute_tensor_for_fp8(dtype={dtype}): fp8 tensors (byte storage converted from an f32 "
            f"source) are not supported by cutelab yet"
        )
    t = from_dlpack(storage_tensor, assumed_align=assumed_align)
    if mark_dynamic_layout:
        t = t.mark_layout_dynamic(leading_dim=leading_dim)
    return t
