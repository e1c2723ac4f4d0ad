"""``cutlass.torch``: conversions between cutelab's element types and torch (dtype,
current_stream); torch is imported only when these are called.

>>> import cutelab
>>> dtype(cutelab.Float32)  # doctest: +SKIP
torch.float32
"""

from __future__ import annotations

from typing import Any

__all__ = ["dtype", "current_stream"]


def dtype(t: Any) -> Any:
    """The torch dtype of a cutelab element type (Float32 -> torch.float32)."""
    import torch

    name = getattr(t, "torch_name", None)
    if name == "tfloat32":  # as CuTe DSL: TFloat32 is held in float32 tensors
        name = "float32"
    if not name or not hasattr(torch, name):
        raise TypeError(f"cutlass.torch.dtype: no torch dtype for element type {t}")
    return getattr(torch, name)


def current_stream() -> Any:
    """torch's current CUDA stream (None without a GPU: launches then run on the CPU)."""
    import torch

    if not torch.cuda.is_available():
        return None
    return torch.cuda.current_stream()
