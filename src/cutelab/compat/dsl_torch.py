"""``cutlass.torch`` helpers beyond cutelab.torch: tensors made and initialised as CuTe DSL's
examples make them (``create_and_permute_torch_tensor``, ``matrix``, ``cute_tensor_like``,
``convert_cute_tensor``) and the driver streams of torch's (``default_stream``, ``current_stream``).

>>> TensorInitType.RANDOM.name, RandomInitConfig().min_val
('RANDOM', -2)
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
import numpy as np
from typing import Any, Dict, Optional


class TensorInitType(enum.Enum):
    SKIP = "skip"
    SCALAR = "scalar"
    RANDOM = "random"
    GAUSSIAN = "gaussian"


@dataclass
class ScalarInitConfig:
    value: float = 0.0


@dataclass
class RandomInitConfig:
    min_val: int = -2
    max_val: int = 2


@dataclass
class GaussianInitConfig:
    mean: float = 0.0
    std: float = 1.0
    scale: float = 1.0


def create_and_permute_torch_tensor(shape: Any, dtype: Any, permute_order: Any = None,
                                    init_type: TensorInitType = TensorInitType.RANDOM,
                                    init_config: Any = None, device: Any = None) -> Any:
    """A torch tensor of shape, initialised (random integers in [min_val, max_val), a scalar or a
    Gaussian), then permuted by permute_order and converted to dtype."""
    import torch

    init_dtype = torch.int32 if init_type == TensorInitType.RANDOM else torch.float32
    t = torch.empty(*shape, dtype=init_dtype, device=device)
    if init_type == TensorInitType.SCALAR:
        t.fill_((init_config or ScalarInitConfig()).value)
    elif init_type == TensorInitType.RANDOM:
        c = init_config or RandomInitConfig()
        t.random_(int(c.min_val), int(c.max_val))
    elif init_type == TensorInitType.GAUSSIAN:
        c = init_config or GaussianInitConfig()
        t.normal_(c.mean, c.std)
        t *= c.scale
    elif init_type != TensorInitType.SKIP:
        raise ValueError(f"create_and_permute_torch_tensor: unknown init_type {init_type!r}")
    if permute_order is not None:
        t = t.permute(permute_order)
    return t.to(dtype=dtype)


def _torch_dtype(cutlass_dtype: Any) -> Any:
    from ..torch import dtype as tdtype
    from ..utils.tensor_helpers import is_fp8_dtype

    if is_fp8_dtype(cutlass_dtype):
        import torch

        return torch.uint8
    return tdtype(cutlass_dtype)


def matrix(l: int, mode0: int, mode1: int, is_mode0_major: bool, cutlass_dtype: Any,
           init_type: TensorInitType = TensorInitType.RANDOM, init_config: Any = None, device: Any = "cuda") -> Any:
    """cutlass.torch.matrix: an (mode0, mode1, l) torch tensor, mode0- or mode1-major, initialised as
    create_and_permute_torch_tensor does (fp8 types: float32 values, converted by cute_tensor_like)."""
    import torch

    from ..utils.tensor_helpers import is_fp8_dtype

    shape = (l, mode1, mode0) if is_mode0_major else (l, mode0, mode1)
    order = (2, 1, 0) if is_mode0_major else (1, 2, 0)
    tdt = torch.float32 if is_fp8_dtype(cutlass_dtype) else _torch_dtype(cutlass_dtype)
    return create_and_permute_torch_tensor(shape, tdt, permute_order=order, init_type=init_type,
                                           init_config=init_config, device=device)


def convert_cute_tensor(f32_torch_tensor: Any, cute_tensor: Any, dtype: Any, is_dynamic_layout: bool = True) -> Any:
    """Write f32_torch_tensor's values, converted to dtype, into cute_tensor's storage; returns cute_tensor."""
    import torch

    from ..utils.tensor_helpers import _fill_fp8, is_fp8_dtype

    eng = cute_tensor.engine
    owner = getattr(eng, "owner", None)  # a host view's torch tensor
    if owner is None or type(owner).__module__.split(".")[0] != "torch":
        owner = getattr(eng, "obj", None)  # a GPU tensor's (runtime.DeviceEngine)
    if owner is None or type(owner).__module__.split(".")[0] != "torch":
        raise TypeError("convert_cute_tensor: the cute tensor must view a torch tensor (from_dlpack)")
    if is_fp8_dtype(dtype):
        _fill_fp8(owner, f32_torch_tensor, dtype)
    elif getattr(dtype, "name", "") == "f8E8M0FNU":  # rounded toward +infinity, as CuTe DSL's cvt.rp.ue8m0x2.f32
        from ..fp8 import e8m0_from_f32

        src = f32_torch_tensor.detach().to("cpu", torch.float32).contiguous().numpy()
        b = torch.from_numpy(e8m0_from_f32(src).reshape(src.shape))
        owner.copy_(b.view(owner.dtype) if owner.dtype in (torch.uint8, torch.float8_e8m0fnu) else b)
    else:
        owner.copy_(f32_torch_tensor.to(owner.dtype))
    return cute_tensor


def cute_tensor_like(data_ref: Any, cutlass_dtype: Any, is_dynamic_layout: bool, assumed_align: Optional[int] = None) -> Any:
    """(cute tensor, torch tensor): storage like data_ref's (shape, strides) of cutlass_dtype, on the GPU, holding
    data_ref's values converted; the cute tensor's layout dynamic (but the leading dimension) if asked."""
    import torch

    from ..runtime import from_dlpack
    from ..utils.tensor_helpers import is_fp8_dtype

    # On the GPU, as CuTe DSL allocates it, whatever device data_ref is on (on the emulated device too); with
    # no CUDA at all (cutelab used without `cutelab run`), beside data_ref.
    where = "cuda" if torch.cuda.is_available() else data_ref.device
    if getattr(cutlass_dtype, "name", "") in ("f4E2M1FN", "i4"):
        return _fp4_tensor_like(data_ref, where, is_dynamic_layout, assumed_align, cutlass_dtype)
    storage = torch.empty_strided(tuple(data_ref.shape), tuple(data_ref.stride()), dtype=_torch_dtype(cutlass_dtype),
                                  device=where)
    t = from_dlpack(storage, assumed_align=assumed_align)
    if is_fp8_dtype(cutlass_dtype) or getattr(cutlass_dtype, "name", "") == "tf32":  # tf32: float32 storage
        t.element_type = cutlass_dtype
    if is_dynamic_layout:
        strides = tuple(data_ref.stride())
        leading = next((i for i, s in enumerate(strides) if s == 1), None)
        t = t.mark_layout_dynamic(leading_dim=leading)
    convert_cute_tensor(data_ref.to(torch.float32) if is_fp8_dtype(cutlass_dtype) else data_ref, t, cutlass_dtype)
    return t, storage


_E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)


def e2m1_codes(x: Any) -> Any:
    """The e2m1 codes (4 bits: sign, 2 exponent, 1 mantissa) of float values x, rounded to nearest, ties to an
    even code, saturated at +-6 (the PTX cvt.rn.satfinite.e2m1x2.f32).

    >>> e2m1_codes(np.array([0.5, 1.25, 2.5, -6.0, 100.0, -0.2])).tolist()
    [1, 2, 4, 15, 7, 8]
    """
    a = np.abs(np.asarray(x, dtype=np.float64))
    table = np.asarray(_E2M1)
    d = np.abs(a[..., None] - table)
    best = d.min(axis=-1, keepdims=True)
    near = d == best
    # the lowest even code among the nearest, else the lowest nearest
    even = near & (np.arange(8) % 2 == 0)
    code = np.where(even.any(axis=-1), np.argmax(even, axis=-1), np.argmax(near, axis=-1))
    return (code | np.where(np.signbit(np.asarray(x, dtype=np.float64)), 8, 0)).astype(np.uint8)


def int4_codes(x: Any) -> Any:
    """The 4-bit two's-complement codes of integer values x in [-8, 7] (a ValueError names any other value:
    cutelab never wraps or clamps them silently).

    >>> int4_codes(np.array([0.0, 7.0, -1.0, -8.0])).tolist()
    [0, 7, 15, 8]
    """
    v = np.asarray(x, dtype=np.float64)
    bad = (v != np.trunc(v)) | (v < -8) | (v > 7) | np.isnan(v)
    if bad.any():
        raise ValueError(f"cute_tensor_like(..., Int4): {int(bad.sum())} value(s) are not integers in [-8, 7] "
                         f"(the first: {v[bad].reshape(-1)[0]!r}); Int4 holds only those")
    return (v.astype(np.int64) & 0xF).astype(np.uint8)


def _fp4_tensor_like(data_ref: Any, where: Any, is_dynamic_layout: bool, assumed_align: Optional[int],
                     dtype: Any) -> Any:
    """cute_tensor_like for 4-bit types (Float4E2M1FN, Int4), as CuTe DSL 4.8.1 makes it: a byte torch tensor of
    data_ref's shape and strides (viewed as torch.int4 for Int4, as CuTe DSL returns it, where torch has it),
    and a cute tensor of 4-bit elements with that layout over its bytes (two elements a byte, the even one in
    the low nibble, so half of it is used), holding data_ref's values rounded to e2m1 or, for Int4, its
    integers."""
    import torch

    from ..layout import Layout
    from ..runtime import Packed4Engine, _check_align
    from ..tensor import Tensor

    shape, strides = tuple(data_ref.shape), tuple(data_ref.stride())
    storage = torch.zeros_like(data_ref, dtype=torch.uint8, device=where)  # zeros_like keeps the strides
    address = storage.data_ptr()
    _check_align(address, assumed_align, "cute_tensor_like's storage")
    n = storage.untyped_storage().nbytes()
    raw = torch.empty(0, dtype=torch.uint8).set_(storage.untyped_storage()).numpy()[:n] if storage.device.type == \
        "cpu" else None
    if raw is None:
        raise TypeError("cute_tensor_like: 4-bit tensors are made on the CPU (cutelab's emulated GPU) only")
    layout = Layout._raw(shape, strides) if shape else Layout._raw(1, 0)
    offs = np.asarray(np.indices(shape).reshape(len(shape), -1).T @ np.asarray(strides, dtype=np.int64)) \
        if shape else np.zeros(1, np.int64)
    vals = data_ref.detach().to(torch.float32).cpu().numpy().reshape(-1)
    codes = int4_codes(vals) if dtype.name == "i4" else e2m1_codes(vals)
    lo = (offs % 2) == 0
    np.bitwise_or.at(raw, offs[lo] // 2, codes[lo])
    np.bitwise_or.at(raw, offs[~lo] // 2, codes[~lo] << 4)
    space = "gmem" if storage.is_cuda else "generic"
    t = Tensor(Packed4Engine(raw, dtype, space, assumed_align or 1, storage, address), layout, 0)
    if is_dynamic_layout:
        leading = next((i for i, d in enumerate(strides) if d == 1), None)
        t = t.mark_layout_dynamic(leading_dim=leading)
    if dtype.name == "i4" and hasattr(torch, "int4"):
        storage = storage.view(torch.int4)
    return t, storage


def as_tensor(pointer: Any, shape: Any, torch_type: Any) -> Any:
    """cutlass.torch.as_tensor: a torch tensor of shape and torch_type over the memory at address pointer
    (a peer's buffer from ``symm_mem``'s ``buffer_ptrs``, say). On the emulated device, the memory
    must be symmetric memory or an array or tensor the program holds (a range in none of them is a
    NotEmulatedError naming it); the tensor is a view of it, on "cuda"."""
    import math

    from . import torch_cuda
    from .cuda_driver import _bytes_at

    shape = tuple(int(x) for x in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    nbytes = math.prod(shape) * torch_type.itemsize
    raw = _bytes_at(int(pointer), nbytes, "cutlass.torch.as_tensor")
    import torch

    t = torch.from_numpy(raw).view(torch_type).view(shape) if nbytes else torch.empty(shape, dtype=torch_type)
    torch_cuda.mark_on_cuda(t)
    return t


def _cu_stream(s: Any) -> Any:
    from ..kernel.cuda.driver import CUstream

    return CUstream(int(s.cuda_stream))


def default_stream() -> Any:
    """torch's default CUDA stream, as a cuda.CUstream."""
    import torch

    return _cu_stream(torch.cuda.default_stream())


def current_stream() -> Any:
    """torch's current CUDA stream, as a cuda.CUstream (CuTe DSL's cutlass.torch.current_stream)."""
    import torch

    return _cu_stream(torch.cuda.current_stream())


def get_leading_dim(torch_tensor: Any) -> Any:
    """cutlass.torch.get_leading_dim: the first dimension of stride 1 (None if none)."""
    for i, st in enumerate(torch_tensor.stride()):
        if st == 1:
            return i
    return None


def _from_dlpack(*args: Any, **kwargs: Any) -> Any:
    from ..runtime import from_dlpack

    return from_dlpack(*args, **kwargs)


EXTRAS: Dict[str, Any] = {
    "get_leading_dim": get_leading_dim, "from_dlpack": _from_dlpack,  # (cutlass.torch imports both)
    "TensorInitType": TensorInitType, "ScalarInitConfig": ScalarInitConfig, "RandomInitConfig": RandomInitConfig,
    "GaussianInitConfig": GaussianInitConfig, "create_and_permute_torch_tensor": create_and_permute_torch_tensor,
    "matrix": matrix, "convert_cute_tensor": convert_cute_tensor, "cute_tensor_like": cute_tensor_like,
    "default_stream": default_stream, "current_stream": current_stream, "as_tensor": as_tensor,
}
