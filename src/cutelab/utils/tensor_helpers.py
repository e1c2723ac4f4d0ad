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
    return bool(getattr(dtype, "is_fp8", False))


def create_cute_tensor_for_fp8(storage_tensor: Any, dtype: Any, leading_dim: int,
                               source_f32_tensor: Optional[Any] = None, assumed_align: int = 16,
                               mark_dynamic_layout: bool = True) -> Any:
    """A kernel tensor of dtype over storage_tensor (from_dlpack), its layout dynamic except along
    leading_dim when mark_dynamic_layout; for TFloat32, float32 storage whose elements are TFloat32.
    For fp8 (which DLPack cannot carry) storage_tensor holds bytes (uint8 or int8; another type is
    viewed as bytes), the tensor's element type is set to dtype
    and the values of source_f32_tensor (same shape) are converted into the storage (round to nearest
    even, saturating, as the GPU's cvt; cutelab.fp8), as CuTe DSL does with a conversion kernel."""
    from ..runtime import from_dlpack

    fp8 = is_fp8_dtype(dtype)
    if fp8:
        if source_f32_tensor is None:
            raise ValueError(f"create_cute_tensor_for_fp8(dtype={dtype}): source_f32_tensor is required for fp8 types")
        if tuple(source_f32_tensor.shape) != tuple(storage_tensor.shape):
            raise ValueError(f"create_cute_tensor_for_fp8(dtype={dtype}): the source's shape {tuple(source_f32_tensor.shape)} "
                             f"differs from the storage's {tuple(storage_tensor.shape)}")
        import torch

        if storage_tensor.dtype not in (torch.int8, torch.uint8):
            storage_tensor = storage_tensor.view(dtype=torch.uint8)
    t = from_dlpack(storage_tensor, assumed_align=assumed_align)
    if fp8 or getattr(dtype, "name", None) == "tf32":  # tf32: float32 storage read as TFloat32 (CuTe DSL's force_tf32)
        t.element_type = dtype
    if mark_dynamic_layout:
        t = t.mark_layout_dynamic(leading_dim=leading_dim)
    if fp8:
        _fill_fp8(storage_tensor, source_f32_tensor, dtype)
    return t


def _fill_fp8(storage: Any, source: Any, dtype: Any) -> None:
    """storage (a torch tensor of bytes) <- the fp8 bytes of source's values, element by element."""
    import torch

    from ..fp8 import from_f32

    src = source.detach().to("cpu", torch.float32).contiguous().numpy()
    b = torch.from_numpy(from_f32(src, dtype).reshape(src.shape))
    storage.copy_(b.view(storage.dtype).to(storage.device))
