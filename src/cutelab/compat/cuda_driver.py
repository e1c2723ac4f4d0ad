"""``cuda.bindings.driver`` (and ``cuda.bindings.runtime``) of the emulated CUDA device.

The common stream, event, context and device calls, answered as cuda-python answers them (a
tuple whose first item is ``CUresult.CUDA_SUCCESS``); launches run on the CPU interpreter at
once, so synchronising returns at once. Device-to-device copies (``cuMemcpyDtoD``,
``cuMemcpyDtoDAsync``) copy between symmetric memory and the arrays or tensors the program holds
(a step of the CUDA graph being captured, on its stream). Any other name raises NotEmulatedError
naming it and the user's line.

>>> err, dev = cuDeviceGet(0)
>>> err == CUresult.CUDA_SUCCESS, cuDeviceGetAttribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)[1] >= 8
(True, True)
"""

from __future__ import annotations

import enum
import itertools
import time
import types
from typing import Any

import numpy as np

from ..kernel.cuda.driver import CUstream, CUstream_flags  # noqa: F401  (the launch path knows these)
from . import device as _device
from .where import NotEmulatedAttributeError, NotEmulatedError, user_line

__path__: list = []  # cuda.bindings.driver is a module; cuda.cuda too


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_INVALID_DEVICE = 101
    CUDA_ERROR_NOT_READY = 600


class CUdevice_attribute(enum.IntEnum):  # noqa: N801
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8
    CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10
    CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
    CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81
    CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
    CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH = 120


def _attribute(a: Any) -> int:
    p = _device.DeviceProperties()
    A = CUdevice_attribute
    table = {
        A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: 1024,
        A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: p.shared_memory_per_block,
        A.CU_DEVICE_ATTRIBUTE_WARP_SIZE: 32,
        A.CU_DEVICE_ATTRIBUTE_CLOCK_RATE: p.clock_rate,
        A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: p.multi_processor_count,
        A.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: p.L2_cache_size,
        A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: 2048,
        A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: p.major,
        A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: p.minor,
        A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: p.shared_memory_per_multiprocessor,
        A.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: p.regs_per_multiprocessor,
        A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: p.shared_memory_per_block_optin,
        A.CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: int(p.major >= 9),
    }
    try:
        return table[CUdevice_attribute(int(a))]
    except (ValueError, KeyError):
        raise NotEmulatedError(f"cuda.bindings.driver.cuDeviceGetAttribute({a!r})", where=user_line(3)) from None


class CUdevice(int):
    def getPtr(self) -> int:  # noqa: N802
        return int(self)


class CUcontext:
    def __init__(self, handle: int = 1):
        self.handle = handle

    def __int__(self) -> int:
        return self.handle


class CUevent:
    def __init__(self, init: Any = 0) -> None:  # CUevent(handle) wraps an existing event (torch's)
        self.t = None
        self.handle = int(init or 0)

    def __int__(self) -> int:
        return self.handle


_OK = CUresult.CUDA_SUCCESS
_HANDLES = itertools.count(0x9000)


def _dev(d: Any) -> None:
    from . import device as _device

    if not _device.index_ok(int(d)):
        raise NotEmulatedError(f"CUDA device {int(d)}", "the emulated CUDA device has one GPU, device 0",
                               where=user_line(3))


def cuInit(flags: int = 0):  # noqa: N802 - the driver's names
    return (_OK,)


def cuDriverGetVersion():  # noqa: N802
    return (_OK, 12080)


def cuDeviceGetCount():  # noqa: N802
    from . import device as _device

    return (_OK, _device.count())


def cuDeviceGet(ordinal: int):  # noqa: N802
    _dev(ordinal)
    return (_OK, CUdevice(int(ordinal)))


def cuDeviceGetName(length: int, dev: Any):  # noqa: N802
    return (_OK, _device.DeviceProperties().name.encode()[:length])


def cuDeviceGetAttribute(attrib: Any, dev: Any):  # noqa: N802
    _dev(dev)
    return (_OK, _attribute(attrib))


def cuDeviceTotalMem(dev: Any):  # noqa: N802
    return (_OK, _device.DeviceProperties().total_memory)


def cuDevicePrimaryCtxRetain(dev: Any):  # noqa: N802
    _dev(dev)
    return (_OK, CUcontext())


def cuDevicePrimaryCtxRelease(dev: Any):  # noqa: N802
    return (_OK,)


def cuCtxCreate(flags: int, dev: Any):  # noqa: N802
    _dev(dev)
    return (_OK, CUcontext())


def cuCtxGetCurrent():  # noqa: N802
    return (_OK, CUcontext())


def cuCtxSetCurrent(ctx: Any):  # noqa: N802
    return (_OK,)


def cuCtxGetDevice():  # noqa: N802
    return (_OK, CUdevice(0))


def cuCtxSynchronize():  # noqa: N802
    return (_OK,)


def cuCtxDestroy(ctx: Any):  # noqa: N802
    return (_OK,)


def cuStreamCreate(flags: int = 0):  # noqa: N802
    return (_OK, CUstream(next(_HANDLES)))


def cuStreamCreateWithPriority(flags: int, priority: int):  # noqa: N802
    return (_OK, CUstream(next(_HANDLES)))


def cuStreamSynchronize(stream: Any):  # noqa: N802
    return (_OK,)


def cuStreamQuery(stream: Any):  # noqa: N802
    return (_OK,)


def cuStreamDestroy(stream: Any):  # noqa: N802
    return (_OK,)


def cuStreamWaitEvent(stream: Any, event: Any, flags: int = 0):  # noqa: N802
    return (_OK,)


def cuEventCreate(flags: int = 0):  # noqa: N802
    return (_OK, CUevent())


def cuEventRecord(event: CUevent, stream: Any = 0):  # noqa: N802
    event.t = time.perf_counter()
    return (_OK,)


def cuEventSynchronize(event: Any):  # noqa: N802
    return (_OK,)


def cuEventQuery(event: Any):  # noqa: N802
    return (_OK,)


def cuEventElapsedTime(start: CUevent, end: CUevent):  # noqa: N802
    if start.t is None or end.t is None:
        return (CUresult.CUDA_ERROR_NOT_READY, 0.0)
    return (_OK, (end.t - start.t) * 1e3)


def cuEventDestroy(event: Any):  # noqa: N802
    return (_OK,)


def _bytes_at(address: int, nbytes: int, what: str) -> np.ndarray:
    """The nbytes of host memory at address, as a uint8 array: in symmetric memory mapped by this
    process, or in a numpy array or emulated-CUDA torch tensor that the program holds (a variable of
    a calling function, or an item of a list, tuple or dict in one). The whole range must lie in it."""
    import sys

    from ..kernel.cpu.addresses import _range_bytes
    from ..kernel.cpu.interpreter import SHARED
    from ..runtime import DEVICE_MEMORY, _holds, _torch_storage_bytes

    for lo, hi in list(SHARED):
        if lo <= address and address + nbytes <= hi:
            return _range_bytes(lo, hi)[address - lo: address - lo + nbytes]

    def whole(obj: Any) -> Any:
        """(first address, uint8 array) of all of obj's memory, or None."""
        if isinstance(obj, np.ndarray):
            return (obj.__array_interface__["data"][0], obj.reshape(-1).view(np.uint8)) if obj.flags.c_contiguous \
                else None
        b = _torch_storage_bytes(obj)
        return (obj.untyped_storage().data_ptr(), b) if b is not None else None

    found = [a for base, a in DEVICE_MEMORY.items() if base <= address < base + a.nbytes]
    frame = sys._getframe(2)
    while frame is not None and not found:
        for space in (frame.f_locals, frame.f_globals):
            for v in list(space.values()):
                items = list(v.values()) if type(v) is dict else list(v) if type(v) in (list, tuple) else [v]
                found += [x for x in items if _holds(x, address)]
                if found:
                    break
            if found:
                break
        frame = frame.f_back
    for obj in found:
        got = whole(obj)
        if got is not None:
            lo, b = got
            if lo <= address and address + nbytes <= lo + b.nbytes:
                return b[address - lo: address - lo + nbytes]
    raise NotEmulatedError(f"{what}: {nbytes} bytes at 0x{address:x}", "cutelab finds memory by address in "
                           "symmetric memory and in the numpy arrays or emulated CUDA tensors the program holds; this "
                           "range is in none of them (or runs past its end)", where=user_line(3))


def _copy(dst: Any, src: Any, nbytes: Any, stream: Any, what: str) -> tuple:
    """A device-to-device copy: at once, or as a step of the CUDA graph being captured (on stream)."""
    from .torch_cuda import capturing

    d = _bytes_at(int(dst), int(nbytes), what)
    s_ = _bytes_at(int(src), int(nbytes), what)
    g = capturing()
    if g is not None:
        g.add(lambda: np.copyto(d, s_), stream)
    else:
        np.copyto(d, s_)
    return (_OK,)


def cuMemcpyDtoDAsync(dst: Any, src: Any, nbytes: Any, stream: Any = 0):  # noqa: N802
    return _copy(dst, src, nbytes, stream if stream is not None else 0, "cuMemcpyDtoDAsync")


def cuMemcpyDtoD(dst: Any, src: Any, nbytes: Any):  # noqa: N802
    return _copy(dst, src, nbytes, None, "cuMemcpyDtoD")


def cuGetErrorString(err: Any):  # noqa: N802
    return (_OK, CUresult(int(err)).name.encode())


def cuGetErrorName(err: Any):  # noqa: N802
    return (_OK, CUresult(int(err)).name.encode())


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotEmulatedAttributeError(f"cuda.bindings.driver.{name}", "cutelab emulates the common device, context, stream "
                           "and event calls of the driver API without a GPU", where=user_line(2))


# ------------------------------------------------------------------ cuda, cuda.bindings, cuda.bindings.runtime

def _package(name: str, **attrs: Any) -> types.ModuleType:
    m = types.ModuleType(name, f"{name} of cutelab's emulated CUDA device")
    m.__path__ = []
    m.__dict__.update(attrs)
    return m


class cudaError_t(enum.IntEnum):  # noqa: N801
    cudaSuccess = 0
    cudaErrorInvalidValue = 1
    cudaErrorMemoryAllocation = 2
    cudaErrorInvalidDevicePointer = 17
    cudaErrorCooperativeLaunchTooLarge = 82


def cudaMalloc(size: int):  # noqa: N802 - the runtime's names
    """Device memory of the emulated device: host memory (256-byte aligned, as cudaMalloc's), which
    make_ptr of its address reads and writes (cutelab.runtime.DEVICE_MEMORY)."""
    from ..runtime import DEVICE_MEMORY

    n = int(size)
    if n < 0:
        return (cudaError_t.cudaErrorInvalidValue, 0)
    raw = np.zeros(max(n, 1) + 256, np.uint8)
    start = (-raw.ctypes.data) % 256
    buf = raw[start:start + max(n, 1)]
    DEVICE_MEMORY[buf.ctypes.data] = buf
    return (cudaError_t.cudaSuccess, buf.ctypes.data)


def _allocation(ptr: Any, count: int = 0):
    from ..runtime import DEVICE_MEMORY

    p = int(getattr(ptr, "getPtr", lambda: ptr)())
    for base, buf in DEVICE_MEMORY.items():
        if base <= p and p + int(count) <= base + buf.nbytes:
            return buf, p - base
    return None, 0


def cudaMemset(ptr: Any, value: int, count: int):  # noqa: N802
    buf, off = _allocation(ptr, count)
    if buf is None:
        return (cudaError_t.cudaErrorInvalidValue,)
    buf[off:off + int(count)] = int(value) & 0xFF
    return (cudaError_t.cudaSuccess,)


def cudaFree(ptr: Any):  # noqa: N802
    from ..runtime import DEVICE_MEMORY

    p = int(getattr(ptr, "getPtr", lambda: ptr)())
    if p == 0:
        return (cudaError_t.cudaSuccess,)
    if DEVICE_MEMORY.pop(p, None) is None:
        return (cudaError_t.cudaErrorInvalidDevicePointer,)
    return (cudaError_t.cudaSuccess,)


class _Handle(int):
    """A runtime handle type (cudaStream_t, cudaEvent_t): an int, as cuda.bindings' wrappers convert."""

    def __new__(cls, init: Any = 0) -> "_Handle":
        return super().__new__(cls, int(getattr(init, "cuda_stream", init) or 0))

    def getPtr(self) -> int:  # noqa: N802 - cuda.bindings' name
        return int(self)


class cudaStream_t(_Handle):  # noqa: N801
    """cuda.bindings.runtime.cudaStream_t of the emulated device (its stream handle)."""


class cudaEvent_t(_Handle):  # noqa: N801
    """cuda.bindings.runtime.cudaEvent_t of the emulated device (launches complete when they return)."""


def _rt_getattr(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotEmulatedAttributeError(f"cuda.bindings.runtime.{name}", where=user_line(2))


runtime = _package(
    "cuda.bindings.runtime", cudaError_t=cudaError_t,
    cudaGetDeviceCount=lambda: (cudaError_t.cudaSuccess, 1),
    cudaGetDevice=lambda: (cudaError_t.cudaSuccess, 0),
    cudaSetDevice=lambda d: (_dev(d), (cudaError_t.cudaSuccess,))[1],
    cudaDeviceSynchronize=lambda: (cudaError_t.cudaSuccess,),
    cudaStreamSynchronize=lambda s: (cudaError_t.cudaSuccess,),
    cudaStream_t=cudaStream_t, cudaEvent_t=cudaEvent_t,
    cudaEventSynchronize=lambda e: (cudaError_t.cudaSuccess,),
    cudaEventQuery=lambda e: (cudaError_t.cudaSuccess,),
    cudaMalloc=cudaMalloc, cudaMemset=cudaMemset, cudaFree=cudaFree,
    __getattr__=_rt_getattr,
)
bindings_pkg = _package("cuda.bindings")
cuda_pkg = _package("cuda", bindings=bindings_pkg)


def _link() -> None:
    import sys

    bindings_pkg.driver = sys.modules[__name__]
    bindings_pkg.runtime = runtime


_link()
