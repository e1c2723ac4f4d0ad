"""The CUDA driver, through cuda-python's cuda.bindings: context, modules, launches.

Exported as ``cutelab.cuda`` so that CuTe DSL's ``cutlass.cuda.initialize_cuda_context()``
ports with the import line alone. Every driver call's result is checked.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any, Dict, Optional, Sequence, Tuple

from ...errors import CompileError, LaunchError
from ...runtime import CUstream  # noqa: F401 (cutlass.cuda.CUstream)

__all__ = ["initialize_cuda_context", "gpu_available", "device_arch", "load_module", "launch_raw",
           "synchronize", "stream_create", "stream_sync", "stream_destroy", "ParamBuffer", "Launcher"]


_DRIVER: Any = None  # the driver module, imported once (fakegpu.fake_gpu puts its fake here)
_EPOCH = 0  # changes when the driver is swapped: functions loaded under another driver are not reused


def _driver() -> Any:
    global _DRIVER
    if _DRIVER is not None:
        return _DRIVER
    try:
        from cuda.bindings import driver
    except ImportError:
        try:
            from cuda import cuda as driver  # type: ignore[no-redef]  # older cuda-python
        except ImportError as e:
            raise LaunchError(
                "running a kernel on the GPU needs cuda-python: pip install 'cutelab[gpu]'"
            ) from e
    _DRIVER = driver
    return driver


def _ok(res: Any, what: str) -> Any:
    err = res[0] if isinstance(res, tuple) else res
    if int(err) != 0:
        name = ""
        try:
            d = _driver()
            if type(err) is int and hasattr(d, "CUresult"):
                err = d.CUresult(err)
            e2, s = d.cuGetErrorString(err)
            name = s.decode() if isinstance(s, bytes) else str(s)
        except Exception:  # pragma: no cover
            pass
        raise LaunchError(f"CUDA driver call {what} failed: {err!r} {name}".rstrip())
    if isinstance(res, tuple):
        return res[1] if len(res) == 2 else (res[1:] if len(res) > 2 else None)
    return None


_INIT = False
_AVAILABLE: Optional[bool] = None


def gpu_available() -> bool:
    """True when cuda-python is installed and the driver sees at least one GPU."""
    global _AVAILABLE
    if _AVAILABLE is None:
        if os.environ.get("CUTELAB_INTERPRET", "") not in ("", "0"):
            _AVAILABLE = False
            return False
        try:
            d = _driver()
            if int(d.cuInit(0)[0]) != 0:
                _AVAILABLE = False
            else:
                err, n = d.cuDeviceGetCount()
                _AVAILABLE = int(err) == 0 and n > 0
        except Exception:
            _AVAILABLE = False
    return _AVAILABLE


def initialize_cuda_context(device: int = 0) -> None:
    """Make device's primary context current on this thread (the one PyTorch uses).

    Without a GPU (or without cuda-python) this does nothing: kernels then run in cutelab's
    CPU interpreter.
    """
    if not gpu_available():
        return
    _ensure_context(device)


_CTX: Dict[int, Any] = {}


def _ensure_context(device: int = 0) -> Any:
    global _INIT
    d = _driver()
    if not _INIT:
        _ok(d.cuInit(0), "cuInit")
        _INIT = True
    cur = _ok(d.cuCtxGetCurrent(), "cuCtxGetCurrent")
    if cur is not None and int(cur) != 0:
        return cur
    if device not in _CTX:
        dev = _ok(d.cuDeviceGet(device), "cuDeviceGet")
        _CTX[device] = _ok(d.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    _ok(d.cuCtxSetCurrent(_CTX[device]), "cuCtxSetCurrent")
    return _CTX[device]


def use_device(index: int) -> None:
    """Make `index`'s primary context current unless a context of that device already is."""
    d = _driver()
    _ensure_context(index)
    if int(_ok(d.cuCtxGetDevice(), "cuCtxGetDevice")) != index:
        if index not in _CTX:
            dev = _ok(d.cuDeviceGet(index), "cuDeviceGet")
            _CTX[index] = _ok(d.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
        _ok(d.cuCtxSetCurrent(_CTX[index]), "cuCtxSetCurrent")


def current_device() -> int:
    d = _driver()
    _ensure_context()
    return int(_ok(d.cuCtxGetDevice(), "cuCtxGetDevice"))


_ARCH: Dict[int, str] = {}


def device_arch(device: Optional[int] = None) -> str:
    """The device's compute capability as an NVRTC target, e.g. "sm_90"."""
    dev_i = current_device() if device is None else device
    if dev_i not in _ARCH:
        d = _driver()
        dev = _ok(d.cuDeviceGet(dev_i), "cuDeviceGet")
        A = d.CUdevice_attribute
        major = _ok(d.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "attribute")
        minor = _ok(d.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "attribute")
        _ARCH[dev_i] = f"sm_{major}{minor}"
    return _ARCH[dev_i]


_MODULES: Dict[Tuple[int, str], Any] = {}


def load_module(cubin: bytes, key: str, name: str) -> Any:
    """The CUfunction `name` of a cubin, loaded once per context."""
    d = _driver()
    ctx = _ensure_context()
    k = (int(ctx), key)
    if k not in _MODULES:
        try:
            mod = _ok(d.cuModuleLoadData(cubin), "cuModuleLoadData")
        except LaunchError as e:
            raise CompileError(f"the GPU could not load the compiled kernel {name}: {e}") from None
        fn = _ok(d.cuModuleGetFunction(mod, name.encode()), "cuModuleGetFunction")
        _MODULES[k] = (mod, fn)
    return _MODULES[k][1]


def default_stream() -> Any:
    """``cutlass.cuda.default_stream()``: the legacy default stream, ``CUstream(0)``."""
    return CUstream(0)


def stream_create(id: int = 0) -> Any:
    """``cutlass.cuda.stream_create(flags)``: a new stream (cuStreamCreate)."""
    _ensure_context()
    return _ok(_driver().cuStreamCreate(id), "cuStreamCreate")


def stream_sync(stream: Any) -> None:
    """``cutlass.cuda.stream_sync(stream)``: wait for the stream's work (cuStreamSynchronize)."""
    _ensure_context()
    _ok(_driver().cuStreamSynchronize(stream), "cuStreamSynchronize")


def stream_destroy(stream: Any) -> None:
    """``cutlass.cuda.stream_destroy(stream)`` (cuStreamDestroy)."""
    _ok(_driver().cuStreamDestroy(stream), "cuStreamDestroy")


class CUstream_flags:  # noqa: N801 - cuda.bindings.driver's name
    """cuda.bindings.driver.CUstream_flags: the flags of cuStreamCreate (the default stream is 0)."""

    CU_STREAM_DEFAULT = 0
    CU_STREAM_NON_BLOCKING = 1


class ParamBuffer:
    """Kernel arguments in 64-bit slots laid out for cuLaunchKernel's kernelParams: ``values``
    holds the slots (pointers, or scalars in their low bytes), ``address`` is the void*[]
    that points at them. Built once; a launch only writes the slots."""

    def __init__(self, n: int):
        m = max(n, 1)
        self.values = (ctypes.c_uint64 * m)()
        base = ctypes.addressof(self.values)
        self.ptrs = (ctypes.c_void_p * m)(*[base + 8 * i for i in range(m)])
        self.n = n
        self.address = ctypes.addressof(self.ptrs) if n else 0

    def set(self, i: int, v: int) -> None:
        self.values[i] = v


_NON_PORTABLE_SET: set = set()  # CUfunctions that may launch clusters above 8 CTAs


def allow_non_portable(d: Any, fn: Any, cluster: Sequence[int]) -> None:
    """A cluster of more than 8 CTAs needs the function's non-portable opt-in (once per function),
    as CuTe DSL sets it on every kernel (CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED)."""
    if int(cluster[0]) * int(cluster[1]) * int(cluster[2]) <= 8:
        return
    try:
        key = int(fn)
    except TypeError:
        key = id(fn)
    if key in _NON_PORTABLE_SET:
        return
    attr = d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
    _ok(d.cuFuncSetAttribute(fn, attr, 1), "cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED)")
    _NON_PORTABLE_SET.add(key)


class Launcher:
    """cuLaunchKernel of one function with a fixed grid, block and dynamic shared memory size,
    its parameters in a ParamBuffer (``params.values[i] = ...`` before each launch).

    The driver call's arguments are built once (and again only when the stream changes): a
    launch is one call with a prepared argument tuple. ``via``: "cuda-python" (the default:
    cuda.bindings' cuLaunchKernel, given a CUstream object, which it takes faster than an int)
    or "ctypes" (libcuda's cuLaunchKernel called directly with ctypes objects of the types
    cuda.h declares, made once; ``CUTELAB_LAUNCH=ctypes``).

    >>> # launcher = Launcher(fn, (8, 1, 1), (256, 1, 1), 0, 2); launcher.params.values[0] = ptr
    >>> # launcher(stream)
    """

    __slots__ = ("fn", "grid", "block", "smem", "params", "via", "_call", "_head", "_tail", "_stream_arg",
                 "_h", "_args", "_ok0", "cluster", "_cfg", "cooperative")

    def __init__(self, fn: Any, grid: Sequence[int], block: Sequence[int], smem: int, nparams: int,
                 via: Optional[str] = None, cluster: Optional[Sequence[int]] = None, cooperative: bool = False):
        d = _driver()
        self.fn, self.grid, self.block, self.smem = fn, tuple(grid), tuple(block), int(smem)
        self.params = ParamBuffer(nparams)
        self.via = via or os.environ.get("CUTELAB_LAUNCH", "") or "cuda-python"
        self.cluster = tuple(cluster) if cluster is not None and tuple(cluster) != (1, 1, 1) else None
        self._cfg: Any = None
        self.cooperative = bool(cooperative)
        _allow_smem(d, fn, int(smem))
        dims = (int(grid[0]), int(grid[1]), int(grid[2]), int(block[0]), int(block[1]), int(block[2]), int(smem))
        if self.cluster is not None or self.cooperative:  # cuLaunchKernelEx with attributes (cuda/cluster.py)
            from .cluster import launch_config

            if self.cluster is not None:
                allow_non_portable(d, fn, self.cluster)

            self.via = "cuda-python"
            self._cfg = launch_config(d, grid, block, int(smem), self.cluster or (1, 1, 1), self.cooperative)
            self._call = d.cuLaunchKernelEx
            self._head = (self._cfg, fn, self.params.address, 0)
            self._tail = ()
            self._stream_arg = int
            self._ok0 = getattr(getattr(d, "CUresult", None), "CUDA_SUCCESS", 0)
        elif self.via == "ctypes":  # libcuda's cuLaunchKernel called directly (the function handle as a pointer)
            P, U = ctypes.c_void_p, ctypes.c_uint
            self._call = _libcuda_launch()
            self._head = (P(int(fn)),) + tuple(U(v) for v in dims)
            self._tail = (P(self.params.address or None), None)
            self._stream_arg = lambda h: P(h or None)
            self._ok0 = 0
        elif self.via == "cuda-python":
            self._call = d.cuLaunchKernel
            self._head = (fn,) + dims
            self._tail = (self.params.address, 0)
            mk = getattr(d, "CUstream", None)  # cuda.bindings converts an int to its CUstream at every call
            self._stream_arg = mk if mk is not None else int
            self._ok0 = getattr(getattr(d, "CUresult", None), "CUDA_SUCCESS", 0)
        else:
            raise LaunchError(f"CUTELAB_LAUNCH={self.via!r}: launches go through 'cuda-python' (the default) or 'ctypes'")
        self._h: Any = None  # the stream handle self._args holds
        self._args: Tuple[Any, ...] = ()

    def bind(self, stream: int) -> None:
        """Prepares the driver call's arguments for this stream (the call's own, else kept)."""
        if self._cfg is not None:  # a cluster launch: the stream lives in the launch config
            from .cluster import bind_stream

            bind_stream(_driver(), self._cfg, stream)
            self._args = self._head
        else:
            self._args = self._head + (self._stream_arg(stream),) + self._tail
        self._h = stream

    def __call__(self, stream: int = 0) -> None:
        if stream != self._h:
            self.bind(stream)
        res = self._call(*self._args)
        if type(res) is int:  # ctypes: the CUresult itself
            if res:
                _ok((res,), "cuLaunchKernel")
            return
        err = res[0]
        if err is not self._ok0 and int(err) != 0:
            if self.cooperative and int(err) == 720:  # CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE
                from ...errors import CudaRuntimeError

                raise CudaRuntimeError(82, "cudaErrorCooperativeLaunchTooLarge",
                                       f"a cooperative launch of grid {self.grid} x block {self.block}: the GPU "
                                       f"cannot hold every CTA at once")
            _ok(res, "cuLaunchKernel")


_LIBCUDA: Any = None
LIBCUDA = "libcuda.so.1"  # where CUTELAB_LAUNCH=ctypes finds cuLaunchKernel (tests point it at a stand-in)


def _libcuda_launch() -> Any:
    """libcuda's cuLaunchKernel as a ctypes function returning its CUresult. It has no argtypes:
    Launcher passes ctypes objects of the types cuda.h declares (converting plain ints by
    argtypes costs microseconds per call)."""
    global _LIBCUDA
    if _LIBCUDA is None or _LIBCUDA[0] != LIBCUDA:
        try:
            lib = ctypes.CDLL(LIBCUDA)
        except OSError as e:
            raise LaunchError(f"CUTELAB_LAUNCH=ctypes: cannot load {LIBCUDA} ({e})") from None
        f = lib["cuLaunchKernel"]  # a function object of our own (lib.cuLaunchKernel is shared)
        f.restype = ctypes.c_int
        _LIBCUDA = (LIBCUDA, f)
    return _LIBCUDA[1]


_SMEM_SET: Dict[int, int] = {}  # CUfunction -> the dynamic shared memory it was allowed


def _allow_smem(d: Any, fn: Any, smem: int) -> None:
    """Above 48 KiB of dynamic shared memory a kernel must opt in (once per function and size)."""
    if smem > 48 * 1024:
        try:
            key = int(fn)
        except TypeError:
            key = id(fn)
        if _SMEM_SET.get(key, 0) < smem:
            attr = d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            _ok(d.cuFuncSetAttribute(fn, attr, smem), "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)")
            _SMEM_SET[key] = smem


def launch_raw(fn: Any, grid: Sequence[int], block: Sequence[int], params: ParamBuffer, stream: int = 0,
               smem: int = 0) -> None:
    d = _driver()
    _allow_smem(d, fn, smem)
    _ok(d.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], smem,
                         stream, params.address, 0), "cuLaunchKernel")


def synchronize() -> None:
    d = _driver()
    _ok(d.cuCtxSynchronize(), "cuCtxSynchronize")
