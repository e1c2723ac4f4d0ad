"""from_dlpack: a cutelab Tensor over a numpy array, a torch tensor, a GPU array with
__cuda_array_interface__ (CuPy, Numba) or any CPU DLPack producer.

The layout is read off the array's shape and strides (in elements), as CuTe DSL does:
a row-major (8192, 8192) array becomes ``(8192,8192):(8192,1)``. The tensor is a view: writes
through it (or through any partition of it) change the array.

>>> import numpy as np
>>> print(from_dlpack(np.zeros((4, 6), np.float32), assumed_align=16))
tensor<ptr<f32, gmem, align<16>> o (4,6):(6,1)>
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import TensorError
from .layout import Layout
from .numeric import Numeric, numeric_from_numpy, numeric_from_torch
from .tensor import NumpyEngine, PointerInfo, Tensor

__all__ = ["from_dlpack", "DeviceEngine", "make_fake_stream"]


def _layout_of(shape: tuple, strides: tuple, what: str) -> Layout:
    if len(shape) == 0:
        raise TensorError(f"from_dlpack: {what} is 0-dimensional; a tensor needs at least one mode")
    for st in strides:
        if st < 0:
            raise TensorError(f"from_dlpack: {what} has a negative stride {strides}; only non-negative strides are supported")
    if any(s == 0 for s in shape):
        raise TensorError(f"from_dlpack: {what} is empty (shape {shape})")
    return Layout(tuple(int(s) for s in shape), tuple(int(d) for d in strides))


def _span(shape: tuple, strides: tuple) -> int:
    return 1 + sum((s - 1) * d for s, d in zip(shape, strides))


def _check_align(address: int, assumed_align: int, what: str) -> None:
    if assumed_align is None:
        return
    if assumed_align < 1 or assumed_align & (assumed_align - 1):
        raise TensorError(f"from_dlpack: assumed_align must be a power of two, got {assumed_align}")
    if address % assumed_align:
        raise TensorError(
            f"from_dlpack: {what} starts at address 0x{address:x}, which is not aligned to "
            f"assumed_align={assumed_align} bytes"
        )


class DeviceEngine(PointerInfo):
    """Storage on a GPU: usable by kernels, not readable from Python."""

    memspace = "gmem"

    def __init__(self, obj: Any, dtype: Numeric, address: int, span: int, align: int, device: Any):
        self.obj = obj
        self.dtype = dtype
        self.address = address
        self.span = span
        self.align = align
        self.device = device

    def __len__(self) -> int:
        return self.span

    def _refuse(self, *a: Any) -> Any:
        raise TensorError(
            f"this tensor lives on {self.device}; read or write it in a kernel, or copy it to the CPU first"
        )

    load = store = read_one = write_one = _refuse


def _from_torch(t: Any, assumed_align: int) -> Tensor:
    import torch

    dtype = numeric_from_torch(t.dtype)
    shape, strides = tuple(t.shape), tuple(t.stride())
    layout = _layout_of(shape, strides, f"the torch tensor of shape {shape}")
    address = t.data_ptr()
    _check_align(address, assumed_align, "the torch tensor")
    align = assumed_align or dtype.bytes
    span = _span(shape, strides)
    if t.device.type != "cpu":
        return Tensor(DeviceEngine(t, dtype, address, span, align, t.device), layout, 0)
    flat = torch.as_strided(t, (span,), (1,), t.storage_offset())
    if dtype.torch_name == "bfloat16":
        arr = flat.view(torch.int16).numpy().view(np.uint16)
    else:
        arr = flat.numpy()
    return Tensor(NumpyEngine(arr, dtype, "gmem", align=align, owner=t, address=address), layout, 0)


def _from_numpy(a: np.ndarray, assumed_align: int) -> Tensor:
    dtype = numeric_from_numpy(a.dtype)
    item = a.itemsize
    if any(st % item for st in a.strides):
        raise TensorError(f"from_dlpack: strides {a.strides} (bytes) are not multiples of the element size {item}")
    shape, strides = tuple(a.shape), tuple(st // item for st in a.strides)
    layout = _layout_of(shape, strides, f"the array of shape {shape}")
    address = a.__array_interface__["data"][0]
    _check_align(address, assumed_align, "the array")
    span = _span(shape, strides)
    flat = np.lib.stride_tricks.as_strided(a, shape=(span,), strides=(item,))
    return Tensor(NumpyEngine(flat, dtype, "gmem", align=assumed_align or item, owner=a, address=address), layout, 0)


def _from_cuda_array(a: Any, assumed_align: int | None) -> Tensor:
    """A GPU array that publishes __cuda_array_interface__ (CuPy, Numba, ...): kernels can use it."""
    cai = a.__cuda_array_interface__
    dt = np.dtype(cai["typestr"])
    dtype = numeric_from_numpy(dt)
    shape = tuple(int(x) for x in cai["shape"])
    if cai.get("strides") is None:
        strides, acc = [], 1
        for n in reversed(shape):
            strides.append(acc)
            acc *= n
        strides = tuple(reversed(strides))
    else:
        if any(st % dt.itemsize for st in cai["strides"]):
            raise TensorError(f"from_dlpack: strides {cai['strides']} (bytes) are not multiples of the element size {dt.itemsize}")
        strides = tuple(int(st) // dt.itemsize for st in cai["strides"])
    layout = _layout_of(shape, strides, f"the GPU array of shape {shape}")
    address = int(cai["data"][0])
    _check_align(address, assumed_align, "the GPU array")
    device = 0
    if hasattr(a, "__dlpack_device__"):
        device = int(a.__dlpack_device__()[1])
    engine = DeviceEngine(a, dtype, address, _span(shape, strides), assumed_align or dtype.bytes, f"cuda:{device}")
    return Tensor(engine, layout, 0)


def from_dlpack(array: Any, assumed_align: int | None = None) -> Tensor:
    """A Tensor viewing array (numpy, torch on CPU or GPU, or any DLPack producer)."""
    mod = type(array).__module__
    if mod.startswith("torch"):
        return _from_torch(array, assumed_align)
    if isinstance(array, np.ndarray):
        return _from_numpy(array, assumed_align)
    if hasattr(array, "__cuda_array_interface__"):
        return _from_cuda_array(array, assumed_align)
    if hasattr(array, "__dlpack__"):
        try:
            a = np.from_dlpack(array)
        except (TypeError, RuntimeError, BufferError) as e:
            raise TensorError(f"from_dlpack: cannot read {type(array).__name__} on the CPU ({e})") from None
        return _from_numpy(a, assumed_align)
    raise TensorError(f"from_dlpack: {type(array).__name__} is not a numpy array, torch tensor or DLPack producer")


def make_fake_stream() -> Any:
    """A stand-in stream for ahead-of-time compiles (cute.compile(..., stream)); cutelab launches
    on torch's current stream (or on the CPU interpreter), so it is the default stream, None.

    >>> make_fake_stream() is None
    True
    """
    return None
