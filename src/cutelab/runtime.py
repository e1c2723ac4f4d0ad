"""from_dlpack: a cutelab Tensor over a numpy array, a torch tensor, a GPU array with
__cuda_array_interface__ (CuPy, Numba) or any CPU DLPack producer.

Host memory (numpy, torch on the CPU) is in CuTe DSL's ``generic`` address space, GPU memory in
``gmem``, as CuTe DSL prints them. The layout is read off the array's shape and strides (in elements), as CuTe DSL does:
a row-major (8192, 8192) array becomes ``(8192,8192):(8192,1)``. The tensor is a view: writes
through it (or through any partition of it) change the array.

>>> import numpy as np
>>> print(from_dlpack(np.zeros((4, 6), np.float32), assumed_align=16))
tensor<ptr<f32, generic, align<16>> o (4,6):(6,1)>
"""

from __future__ import annotations

import collections
import copy
import ctypes
import enum
import sys
import weakref
from typing import Any, Dict

import numpy as np

from .dynamic_layout import mark_compact_shape_dynamic, mark_layout_dynamic  # noqa: F401 (cute.runtime's names)
from .errors import TensorError
from .layout import Layout
from .numeric import Numeric, is_numeric_type, numeric_from_numpy, numeric_from_torch
from .tensor import NumpyEngine, Pointer, PointerInfo, Tensor
from .tensor_engines import Packed4Engine  # noqa: F401  (imported from here too)
from .tensor import retype_to_4bit  # noqa: F401
from .tensor import make_tensor as _make_tensor
from .tracing import hooks as _hooks

__all__ = ["from_dlpack", "DeviceEngine", "make_fake_stream", "make_fake_tensor", "make_fake_compact_tensor", "mark_layout_dynamic", "mark_compact_shape_dynamic",
           "AddressSpace", "make_ptr", "nullptr", "recast_ptr"]


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


def _is_torch_fake(t: Any) -> bool:
    """t is a tensor of torch's FakeTensorMode (shape, strides and dtype without storage)."""
    import sys

    fake = sys.modules.get("torch._subclasses.fake_tensor")
    return fake is not None and isinstance(t, fake.FakeTensor)


def _from_torch_fp4x2(t: Any, assumed_align: int) -> Tensor:
    """A torch.float4_e2m1fn_x2 tensor (two e2m1 elements a byte, the even one in the low nibble) as CuTe
    DSL 4.8.1's from_dlpack gives it: a tensor of Float4E2M1FN elements whose contiguous (stride-1) mode
    is twice as long and whose other strides count elements (twice the bytes); read-only on the CPU
    (cutelab's 4-bit memory, Packed4Engine)."""
    import torch

    from .numeric import Float4E2M1FN

    shape, strides = tuple(t.shape), tuple(t.stride())
    unit = [i for i, d in enumerate(strides) if d == 1]
    if not unit:
        raise TensorError(f"from_dlpack: a torch.float4_e2m1fn_x2 tensor of shape {shape} and strides {strides} has "
                          f"no contiguous mode (stride 1) holding the packed pairs")
    k = next((i for i in reversed(unit) if shape[i] > 1), unit[-1])
    lshape = tuple(2 * n if i == k else n for i, n in enumerate(shape))
    lstrides = tuple(d if i == k else 2 * d for i, d in enumerate(strides))
    layout = _layout_of(lshape, lstrides, f"the torch tensor of shape {shape} (float4_e2m1fn_x2)")
    address = t.data_ptr()
    _check_align(address, assumed_align, "the torch tensor")
    align = assumed_align or 1
    span = _span(shape, strides)  # bytes
    if t.device.type != "cpu":
        return Tensor(DeviceEngine(t, Float4E2M1FN, address, 2 * span, align, t.device), layout, 0)
    raw = torch.as_strided(t.view(torch.uint8), (span,), (1,), t.storage_offset()).numpy()
    space = "gmem" if t.is_cuda else "generic"
    return Tensor(Packed4Engine(raw, Float4E2M1FN, space, align, t, address), layout, 0)


def _from_torch(t: Any, assumed_align: int) -> Tensor:
    import torch

    if str(t.dtype) == "torch.float4_e2m1fn_x2":
        return _from_torch_fp4x2(t, assumed_align)
    if str(t.dtype) == "torch.int4":  # torch's one-byte int4 elements: Int8 over the bytes, as CuTe DSL 4.8.1 reads
        t = t.view(torch.int8)      # them (``t.element_type = cutlass.Int4`` then packs two values a byte)
    dtype = numeric_from_torch(t.dtype)
    shape, strides = tuple(t.shape), tuple(t.stride())
    if _is_torch_fake(t):  # torch's FakeTensorMode: no storage, compile-only (as CuTe DSL allows)
        from .fake import make_fake_tensor

        return make_fake_tensor(dtype, shape, strides, memspace="generic" if t.device.type == "cpu" else "gmem",
                                assumed_align=assumed_align or dtype.bytes)
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
    elif str(t.dtype).startswith("torch.float8_"):  # bytes (numpy has no 8-bit floats): the element type says which
        arr = flat.view(torch.uint8).numpy()
    else:
        arr = flat.numpy()
    # a tensor torch reports as CUDA while its memory is the host's (cutelab's emulated CUDA device):
    # device memory to the program, as from_dlpack of a CUDA tensor is
    space = "gmem" if t.is_cuda else "generic"
    return Tensor(NumpyEngine(arr, dtype, space, align=align, owner=t, address=address), layout, 0)


def _from_numpy(a: np.ndarray, assumed_align: int, dtype: Numeric | None = None) -> Tensor:
    """dtype: the element type the array's storage holds (BFloat16 in uint16, ...); default: the array's."""
    dtype = dtype or numeric_from_numpy(a.dtype)
    item = a.itemsize
    if any(st % item for st in a.strides):
        raise TensorError(f"from_dlpack: strides {a.strides} (bytes) are not multiples of the element size {item}")
    shape, strides = tuple(a.shape), tuple(st // item for st in a.strides)
    layout = _layout_of(shape, strides, f"the array of shape {shape}")
    address = a.__array_interface__["data"][0]
    _check_align(address, assumed_align, "the array")
    span = _span(shape, strides)
    flat = np.lib.stride_tricks.as_strided(a, shape=(span,), strides=(item,))
    return Tensor(NumpyEngine(flat, dtype, "generic", align=assumed_align or item, owner=a, address=address), layout, 0)


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


def make_tensor(engine: Any, layout: Any) -> Tensor:
    """``cute.make_tensor``: a tensor over engine with the given layout or shape (cutelab.tensor's
    make_tensor), where engine may also be a torch tensor or any DLPack array, viewed with
    from_dlpack (the layout then indexes its memory as a flat array).

    >>> print(make_tensor(np.arange(6, dtype=np.float32), (2, 3)).layout)
    (2,3):(1,2)
    """
    if not isinstance(engine, (np.ndarray, Pointer, Tensor)) and (
            hasattr(engine, "__dlpack__") or type(engine).__module__.startswith("torch")):
        engine = from_dlpack(engine)
    return _make_tensor(engine, layout)


# --------------------------------------------------------------------------- pointers

class AddressSpace(str, enum.Enum):
    """CuTe DSL's address spaces (cute.AddressSpace); each compares equal to, and prints as, its name."""

    generic = "generic"
    gmem = "gmem"
    smem = "smem"
    dsmem = "dsmem"
    rmem = "rmem"
    tmem = "tmem"

    def __str__(self) -> str:
        return self.value


class RawAddressEngine(PointerInfo):
    """The engine of a pointer made from a bare integer address: it prints and moves like any pointer,
    but cutelab knows nothing of the memory behind it, so it refuses to read or write it on the CPU
    (reading an unknown address could crash the interpreter)."""

    def __init__(self, dtype: Numeric, address: int, align: int, memspace: str):
        self.dtype, self.address, self.align, self.memspace = dtype, address, align, memspace

    def _refuse(self, *a: Any) -> Any:
        raise TensorError(
            f"{self.raw_ptr_str(0)}: a pointer made by make_ptr from a bare integer address that no numpy "
            f"array or CPU torch tensor among the caller's variables holds, so cutelab cannot check accesses through it on the CPU; make it "
            f"from a numpy array's ctypes "
            f"pointer (make_ptr(dtype, a.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))) or use from_dlpack(a)"
        )

    load = store = read_one = write_one = _refuse




def _owner_engine(owner: np.ndarray, dtype: Numeric, address: int, align: int, memspace: str) -> Any:
    """A NumpyEngine over owner's buffer from address on, read as dtype (None if address is outside it)."""
    if not (owner.flags.c_contiguous or owner.flags.f_contiguous):
        return None
    base = owner.__array_interface__["data"][0]
    start = address - base
    if not 0 <= start <= owner.nbytes:
        return None
    raw = owner.reshape(-1, order="A").view(np.uint8)[start:]
    if dtype.width == 4:
        return Packed4Engine(raw, dtype, memspace, align, owner, address)
    n = raw.shape[0] // dtype.bytes
    data = raw[: n * dtype.bytes].view(dtype.storage)
    return NumpyEngine(data, dtype, memspace, align=align, owner=owner, address=address)


def _torch_storage_bytes(t: Any) -> Any:
    """The whole CPU storage of a torch tensor as a uint8 numpy array (None for a GPU tensor)."""
    import torch

    if t.device.type != "cpu":
        return None
    st = t.untyped_storage()
    return torch.empty(0, dtype=torch.uint8).set_(st).numpy()


def _holds(obj: Any, address: int) -> bool:
    """True when obj is a numpy array or a torch tensor (CPU or GPU) whose memory holds address. Looks
    only at type(obj) (never isinstance, which can run an object's own __class__ code)."""
    t = type(obj)
    if issubclass(t, np.ndarray):
        base = obj.__array_interface__["data"][0]
        return base <= address < base + max(obj.nbytes, 1) and (obj.flags.c_contiguous or obj.flags.f_contiguous)
    torch = sys.modules.get("torch")
    if torch is not None and issubclass(t, torch.Tensor):
        try:
            st = obj.untyped_storage()
            return (obj.device.type in ("cpu", "cuda")
                    and st.data_ptr() <= address < st.data_ptr() + max(st.nbytes(), 1))
        except (RuntimeError, TypeError, NotImplementedError):
            return False
    return False


def _device_owner_engine(t: Any, dtype: Numeric, address: int, align: int) -> Any:
    """A DeviceEngine from address to the end of the GPU torch tensor t's storage, read as dtype: what
    a kernel on the GPU may reach through make_ptr(dtype, t.data_ptr())."""
    st = t.untyped_storage()
    span = (st.data_ptr() + st.nbytes() - address) * 8 // dtype.width
    return DeviceEngine(t, dtype, address, span, align, t.device)
#: memory the emulated CUDA device allocated (cuda.bindings.runtime.cudaMalloc, cutelab.compat.cuda_driver),
#: by start address: make_ptr of an address inside one reads and writes it, checked
DEVICE_MEMORY: Dict[int, np.ndarray] = {}


#: the storages of the emulated CUDA device's torch tensors (cutelab.compat.torch_cuda marks them), by
#: their first address: a kernel on the CPU reads and writes them through runtime addresses
_DEVICE_STORAGES: "weakref.WeakValueDictionary[int, Any]" = weakref.WeakValueDictionary()


#: the most recent storages of the emulated device, held alive (CACHED_BYTES in all) as CUDA's caching
#: allocator keeps freed blocks: a program that frees a tensor and then launches a kernel on its address
#: (CUTLASS's grouped GEMM benchmark drops its workspace tensors and keeps their addresses) reads and
#: writes memory that is still there, as on the GPU
CACHED_BYTES = 64 << 20
_CACHED: "collections.deque[Any]" = collections.deque()
_cached_bytes = [0]


def register_device_storage(storage: Any) -> None:
    """Remember a torch storage (host memory) of the emulated CUDA device: by address while it lives,
    and alive itself while it is among the most recent CACHED_BYTES of them."""
    try:
        n = storage.nbytes()
        if not n:
            return
        _DEVICE_STORAGES[int(storage.data_ptr())] = storage
    except (TypeError, RuntimeError):  # a storage without data or weak references: not reachable by address
        return
    if n <= CACHED_BYTES:
        _CACHED.append(storage)
        _cached_bytes[0] += n
        while _cached_bytes[0] > CACHED_BYTES:
            _cached_bytes[0] -= _CACHED.popleft().nbytes()


def device_memory(address: int) -> Any:
    """(first address, bytes as a uint8 numpy array) of the emulated device's memory holding
    address (cudaMalloc's DEVICE_MEMORY, the storages of "cuda" torch tensors), or None."""
    for base, arr in DEVICE_MEMORY.items():
        if base <= address < base + arr.nbytes:
            return base, arr.reshape(-1).view(np.uint8)
    for base, st in list(_DEVICE_STORAGES.items()):
        if base <= address < base + st.nbytes():
            import torch

            return base, torch.empty(0, dtype=torch.uint8).set_(st).numpy()
    return None


def _find_owner(address: int) -> Any:
    """The numpy array or CPU torch tensor whose memory holds address, among the variables (locals and
    globals) of make_ptr's callers, or None.

    make_ptr from a bare integer (``a.data_ptr()``, ``a.ctypes.data``) does not say what memory it
    points into; the array is almost always a variable of the code that calls make_ptr, and finding it
    keeps every read and write through the pointer inside that buffer, checked. Not found: the
    pointer prints and moves but cannot be read on the CPU.
    """
    for base, arr in DEVICE_MEMORY.items():
        if base <= address < base + arr.nbytes:
            return arr
    frame = sys._getframe(2)
    seen_globals = set()
    while frame is not None:
        spaces = [frame.f_locals]
        if id(frame.f_globals) not in seen_globals:
            seen_globals.add(id(frame.f_globals))
            spaces.append(frame.f_globals)
        for space in spaces:
            for v in list(space.values()):
                if _holds(v, address):
                    return v
        frame = frame.f_back
    return None


def make_ptr(dtype: Any, value: Any, mem_space: Any = AddressSpace.generic, assumed_align: int | None = None) -> Pointer:
    """A pointer to elements of dtype at an address (an int, or a ctypes pointer), as CuTe DSL's
    cute.runtime.make_ptr; ``make_tensor(ptr, layout)`` makes a tensor over it.

    A ctypes pointer into a numpy array (``a.ctypes.data_as(...)``, which keeps the array alive) gives
    a pointer that reads and writes that array, with every access checked against its extent. For
    a bare integer address (``t.data_ptr()``, ``a.ctypes.data``) cutelab finds the numpy array or CPU
    torch tensor that holds it among the caller's variables (see _find_owner); where none does, the
    pointer prints and moves but cannot be read on the CPU.

    >>> import ctypes, numpy as np, cutelab as cute
    >>> a = np.arange(8, dtype=np.float32)
    >>> p = make_ptr(cute.Float32, a.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), assumed_align=16)
    >>> print(p, p + 1)
    ptr<f32, generic, align<16>> ptr<f32, generic>
    >>> cute.make_tensor(p + 2, cute.make_layout(3)).load().numpy().tolist()
    [2.0, 3.0, 4.0]
    """
    if not is_numeric_type(dtype):
        raise TensorError(f"make_ptr: the element type must be a cutlass numeric type (cutlass.Float32, ...), "
                          f"got {dtype!r}")
    owner = None
    from .address import PointerInt, pointer_from_int

    if isinstance(value, PointerInt):  # ptr.toint() + bytes: the pointer it came from, moved
        return pointer_from_int(dtype, value, mem_space, assumed_align)
    if isinstance(value, Pointer):  # an LLVM pointer (ptr.to_llvm_ptr(), llvm.addrspacecast of one): the same memory
        if value.engine.dtype.name != dtype.name:
            raise TensorError(f"make_ptr({dtype}, {value}): an LLVM pointer of {value.engine.dtype} elements made a "
                              f"pointer of {dtype} elements; cutelab takes the pointer's own element type "
                              f"(cute.recast_ptr moves between types)")
        return Pointer(value.engine, value.offset)
    if str(getattr(mem_space, "value", mem_space)).split(".")[-1] == "tmem":
        # a TMEM address (lane << 16 | column; flash_attn.cute's SM100 backward makes its TMEM tensors from
        # make_ptr(Float32, 0, tmem)): a tensor-memory pointer, as retrieve_tmem_ptr gives one
        from .nvgpu.tcgen05.tmem import TmemEngine

        if hasattr(value, "as_index"):  # a kernel's runtime value
            value = value.as_index()
        if isinstance(value, bool) or not (isinstance(value, (int, np.integer)) or hasattr(value, "lo")):
            raise TensorError(f"make_ptr({dtype}, {value!r}, tmem): a tensor-memory address must be an integer "
                              f"(lane << 16 | column)")
        return Pointer(TmemEngine(dtype), TmemEngine.element_offset(dtype, value))
    if _hooks.runtime_pointer is not None:  # an address the kernel holds in a register (instr/address_access.py)
        made = _hooks.runtime_pointer(dtype, value, mem_space, assumed_align)
        if made is not None:
            return made
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        address = int(value)
    elif isinstance(value, ctypes._Pointer):
        address = ctypes.cast(value, ctypes.c_void_p).value or 0
        owner = getattr(value, "_arr", None)  # numpy's data_as keeps the array here
    else:
        raise TensorError(f"make_ptr({dtype}, {value!r}): expected an int address or a ctypes pointer, "
                          f"got {type(value).__name__}")
    space = AddressSpace(str(getattr(mem_space, "value", mem_space)).split(".")[-1])
    align = dtype.bytes if assumed_align is None else int(assumed_align)
    if align < 1 or align & (align - 1):
        raise TensorError(f"make_ptr({dtype}, 0x{address:x}): assumed_align must be a power of two, got {assumed_align}")
    if address % align:
        raise TensorError(f"make_ptr({dtype}, 0x{address:x}): the address is not aligned to assumed_align={align} bytes")
    engine = None
    if owner is None and address:
        owner = _find_owner(address)
    if owner is not None and type(owner).__module__.startswith("torch"):
        if owner.device.type == "cuda":  # GPU memory: kernels read it on the GPU
            return Pointer(_device_owner_engine(owner, dtype, address, align), 0)
        owner = _torch_storage_bytes(owner)
    if isinstance(owner, np.ndarray):
        engine = _owner_engine(owner, dtype, address, align, space.value)
    if engine is None:
        engine = RawAddressEngine(dtype, address, align, space.value)
    return Pointer(engine, 0)


def nullptr(dtype: Any, mem_space: Any = AddressSpace.generic, assumed_align: int | None = None) -> Pointer:
    """A null pointer of dtype (CuTe DSL's cute.runtime.nullptr): it prints, it cannot be read."""
    return make_ptr(dtype, 0, mem_space, assumed_align)


def recast_ptr(ptr: Pointer, swizzle_: Any = None, dtype: Any = None) -> Pointer:
    """The same address read as elements of another dtype (CuTe DSL's cute.recast_ptr); the alignment
    in bytes is kept.

    >>> import numpy as np, cutelab as cute
    >>> t = cute.make_tensor(np.zeros(8, np.float32), cute.make_layout(8))
    >>> print(recast_ptr(t.iterator, dtype=cute.Int16))
    ptr<i16, generic, align<4>>
    """
    if getattr(ptr, "_smem_ptr", False) and swizzle_ is None and dtype is not None:  # SmemAllocator's pointers
        return ptr.recast(dtype)
    if not isinstance(ptr, Pointer):
        raise TensorError(f"recast_ptr: expected a pointer (make_ptr, tensor.iterator), got {type(ptr).__name__}")
    if swizzle_ is None and getattr(ptr.engine, "ptr_swizzle", None) is not None:
        # a swizzled shared-memory pointer: CuTe DSL's result type has only the swizzle given (here none), the address
        ptr = Pointer(ptr.engine.unswizzled(), ptr.offset)
    if swizzle_ is not None and _hooks.recast_smem_ptr is not None:  # a kernel's shared memory, swizzled
        made = _hooks.recast_smem_ptr(ptr, swizzle_, dtype)
        if made is not None:
            return made
    if swizzle_ is not None:
        raise TensorError(
            f"recast_ptr({ptr}, swizzle_={swizzle_}): swizzled pointers are not supported in cutelab outside a "
            f"kernel's shared memory; put the swizzle in the layout instead: make_tensor(ptr, make_composed_layout("
            f"{swizzle_}, 0, layout))"
        )
    if dtype is None:
        return ptr
    if not is_numeric_type(dtype):
        raise TensorError(f"recast_ptr({ptr}): dtype must be a cutlass numeric type, got {dtype!r}")
    eng, off = ptr.engine, ptr.offset
    if hasattr(eng, "recast"):  # a kernel's shared or global memory (kernel.frontend.engines): the same bytes
        return Pointer(*eng.recast(off, dtype))
    if not isinstance(off, (int, np.integer)):
        raise TensorError(f"recast_ptr({ptr}, dtype={dtype}): needs a pointer at a known offset, got {off!r}")
    old = eng.dtype
    nbytes = int(off) * old.bytes
    align = eng.alignment(off) if hasattr(eng, "alignment") else old.bytes
    address = eng.address + nbytes
    if address % dtype.bytes:
        raise TensorError(f"recast_ptr({ptr}, dtype={dtype}): the address 0x{address:x} is not aligned to the "
                          f"{dtype.bytes}-byte elements of {dtype}")
    if isinstance(eng, NumpyEngine):
        raw = eng.data.view(np.uint8)[nbytes:]
        n = raw.shape[0] // dtype.bytes
        data = raw[: n * dtype.bytes].view(dtype.storage)
        return Pointer(NumpyEngine(data, dtype, eng.memspace, align=max(align, dtype.bytes), owner=eng.owner,
                                   address=address), 0)
    if isinstance(eng, DeviceEngine):
        span = (eng.span * old.bytes - nbytes) // dtype.bytes
        return Pointer(DeviceEngine(eng.obj, dtype, address, span, max(align, dtype.bytes), eng.device), 0)
    if isinstance(eng, RawAddressEngine):
        return Pointer(RawAddressEngine(dtype, address, max(align, dtype.bytes), eng.memspace), 0)
    raise TensorError(f"recast_ptr({ptr}, dtype={dtype}): cannot recast a pointer into {type(eng).__name__}")


from .fake import make_fake_compact_tensor, make_fake_tensor  # noqa: E402,F401  (cute.runtime's names)


class CUstream:
    """A CUDA stream handle (cuda.bindings.driver.CUstream's role): ``CUstream(torch_stream.cuda_stream)``;
    0 is the default stream (and what CPU-interpreted launches ignore)."""

    def __init__(self, handle: Any = 0):
        self.handle = int(handle or 0)

    def __int__(self) -> int:
        return self.handle

    def getPtr(self) -> int:  # noqa: N802 - cuda-python's name
        return self.handle

    def __repr__(self) -> str:
        return f"<CUstream 0x{self.handle:x}>"


class EnvStream(CUstream):
    """The TVM-FFI calling style's stream (``make_fake_stream(use_tvm_ffi_env_stream=True)``, quack's and
    flash_attn.cute's): "the current stream of the environment" at each launch. A launch given one runs
    on torch's current stream of the launch's device (on the CPU interpreter: torch's current stream, the
    emulation's); its handle (0) is only what a trace sees."""

    def __repr__(self) -> str:
        return "<CUstream env (TVM-FFI)>"


#: the EnvStream a TVM-FFI call passes where its caller left the stream out (compat.tvm_ffi)
ENV_STREAM = EnvStream(0)


def make_fake_stream() -> Any:
    """A stand-in stream for ahead-of-time compiles (cute.compile(..., stream)): a stream argument,
    so the compiled function takes any stream at each call (the default stream, 0, if it is used
    to launch).

    >>> make_fake_stream()
    <CUstream 0x0>
    """
    return CUstream(0)
