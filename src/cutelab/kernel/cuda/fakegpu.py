"""A pretend GPU for the host side of launches: a fake CUDA driver and NVRTC, and arrays that
claim to live on device 0, so that the GPU launch path (argument checks, tracing, CUDA printing,
compile cache, parameter buffers, cuLaunchKernel) runs, and can be timed and tested, on a
machine without a GPU. Nothing executes: the fake driver records each launch (function,
grid, block, shared memory, stream and the kernel parameters it was given).

>>> import numpy as np
>>> with fake_gpu() as gpu:
...     a = FakeDeviceArray(np.zeros(8, np.float32))
...     from cutelab.runtime import from_dlpack
...     print(from_dlpack(a).engine.device)
cuda:0
"""

from __future__ import annotations

import contextlib
import ctypes
import re
import struct
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np

__all__ = ["FakeDriver", "FakeNvrtc", "fake_tensor_map", "FakeDeviceArray", "fake_gpu", "fake_cuda_tensor"]


class FakeDeviceArray:
    """A numpy array dressed as a GPU array (``__cuda_array_interface__``): from_dlpack gives a
    Tensor on "cuda:0" whose address is the array's. Keep the array alive while it is used."""

    def __init__(self, array: np.ndarray):
        self.array = array

    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]:
        a = self.array
        return {"shape": a.shape, "typestr": a.dtype.str, "data": (a.__array_interface__["data"][0], False),
                "strides": a.strides, "version": 3}

    def __dlpack_device__(self) -> Tuple[int, int]:
        return (2, 0)


def fake_cuda_tensor(t: Any) -> Any:
    """A CPU torch tensor that reports device cuda:0 (its memory stays on the host): the torch
    argument path of a launch runs as on a GPU."""
    import torch

    global _FAKE_CUDA
    if _FAKE_CUDA is None:
        cuda0 = torch.device("cuda", 0)

        class _FakeCuda(torch.Tensor):
            __module__ = "torch"  # what from_dlpack looks at to take the torch path

            @property
            def device(self) -> Any:  # type: ignore[override]
                return cuda0

            __torch_function__ = torch._C._disabled_torch_function_impl  # as fast as a plain tensor

        _FAKE_CUDA = _FakeCuda
    return torch.Tensor._make_subclass(_FAKE_CUDA, t)


_FAKE_CUDA: Any = None


class _Attr:
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76


class _Handle:
    def __init__(self, value: int, **kw: Any):
        self.value = value
        self.__dict__.update(kw)

    def __int__(self) -> int:
        return self.value


class FakeDriver:
    """The calls of cuda.bindings.driver that cutelab makes, answering as a device of compute
    capability ``arch`` would; ``launches`` records every cuLaunchKernel (kernel name, grid,
    block, shared bytes, stream, the parameters' 64-bit slots)."""

    CUdevice_attribute = _Attr

    def __init__(self, arch: Tuple[int, int] = (9, 0), record: bool = True):
        self.arch = arch
        self.record = record
        self.launch_error = 0  # a CUresult every cuLaunchKernel returns (tests of the error path)
        self.launches: List[Dict[str, Any]] = []
        self.calls: Dict[str, int] = {}
        self._ctx: Optional[_Handle] = None
        self._next = 0x1000

    def _count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    def cuInit(self, flags: int) -> Tuple[int]:  # noqa: N802 - the driver's names
        return (0,)

    def cuDeviceGetCount(self) -> Tuple[int, int]:  # noqa: N802
        return (0, 1)

    def cuDeviceGet(self, i: int) -> Tuple[int, Any]:  # noqa: N802
        return (0, _Handle(int(i)))

    def cuDevicePrimaryCtxRetain(self, dev: Any) -> Tuple[int, Any]:  # noqa: N802
        return (0, _Handle(0xC0), )

    def cuCtxGetCurrent(self) -> Tuple[int, Any]:  # noqa: N802
        return (0, self._ctx if self._ctx is not None else _Handle(0))

    def cuCtxSetCurrent(self, ctx: Any) -> Tuple[int]:  # noqa: N802
        self._ctx = ctx
        return (0,)

    def cuCtxGetDevice(self) -> Tuple[int, int]:  # noqa: N802
        return (0, 0)

    def cuDeviceGetAttribute(self, attr: int, dev: Any) -> Tuple[int, int]:  # noqa: N802
        return (0, self.arch[0] if attr == _Attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR else self.arch[1])

    def cuGetErrorString(self, err: Any) -> Tuple[int, bytes]:  # noqa: N802
        return (0, b"fake error")

    def cuModuleLoadData(self, image: bytes) -> Tuple[int, Any]:  # noqa: N802
        self._count("cuModuleLoadData")
        self._next += 0x100
        return (0, _Handle(self._next, image=bytes(image)))

    def cuModuleGetFunction(self, mod: Any, name: bytes) -> Tuple[int, Any]:  # noqa: N802
        text = mod.image.decode(errors="replace")
        m = re.search(r'__global__ void[^\n]*\b' + re.escape(name.decode()) + r'\(([^)]*)\)', text)
        params = [p.strip() for p in m.group(1).split(",")] if m and m.group(1).strip() else []
        self._next += 0x10
        return (0, _Handle(self._next, name=name.decode(), params=params))

    class CUfunction_attribute:  # noqa: N801 - the driver's name
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
        CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14

    def cuFuncSetAttribute(self, fn: Any, attr: Any, value: int) -> Tuple[int]:  # noqa: N802
        self._count("cuFuncSetAttribute")
        self.func_attrs = getattr(self, "func_attrs", []) + [(attr, value)]
        return (0,)

    # the error word of kernels with guarded accesses (errorword.ErrorWord): mapped host memory
    def cuMemHostAlloc(self, size: int, flags: int) -> Tuple[int, int]:  # noqa: N802
        buf = ctypes.create_string_buffer(max(int(size), 8))
        self._host = getattr(self, "_host", []) + [buf]
        return (0, ctypes.addressof(buf))

    def cuMemHostGetDevicePointer(self, host: int, flags: int) -> Tuple[int, int]:  # noqa: N802
        return (0, int(host))

    def cuModuleGetGlobal(self, mod: Any, name: bytes) -> Tuple[int, int, int]:  # noqa: N802
        buf = ctypes.create_string_buffer(8)
        self._host = getattr(self, "_host", []) + [buf]
        return (0, ctypes.addressof(buf), 8)

    def cuMemcpyHtoD(self, dst: int, src: int, n: int) -> Tuple[int]:  # noqa: N802
        ctypes.memmove(int(dst), int(src), int(n))
        return (0,)

    def cuLaunchKernel(self, fn: Any, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, smem: int,  # noqa: N802
                       stream: Any, params: Any, extra: Any) -> Tuple[int]:
        if self.launch_error:
            return (self.launch_error,)
        if not self.record:
            return (0,)
        n = len(fn.params)
        slots: List[int] = []
        if n:
            ptrs = (ctypes.c_uint64 * n).from_address(int(params))
            slots = [struct.unpack("<Q", ctypes.string_at(int(p), 8))[0] for p in ptrs]
        maps = {}  # the 128 bytes of each tensor-map parameter (const __grid_constant__ cl_tensormap ...)
        for k, decl in enumerate(fn.params):
            if "cl_tensormap" in decl:
                maps[decl.split()[-1]] = ctypes.string_at(int(ptrs[k]), 128)
        self.launches.append({"kernel": fn.name, "grid": (gx, gy, gz), "block": (bx, by, bz), "smem": smem,
                              "stream": int(stream), "params": slots, "tensor_maps": maps})
        return (0,)

    # cluster launches (cuda/cluster.py): the launch config and its cluster-dimension attribute
    class CUlaunchAttributeID:  # noqa: N801 - the driver's name
        CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4

    class CUlaunchAttribute:  # noqa: N801
        def __init__(self) -> None:
            import types

            self.id = 0
            self.value = types.SimpleNamespace(clusterDim=types.SimpleNamespace(x=1, y=1, z=1))

    class CUlaunchConfig:  # noqa: N801
        def __init__(self) -> None:
            self.gridDimX = self.gridDimY = self.gridDimZ = 1
            self.blockDimX = self.blockDimY = self.blockDimZ = 1
            self.sharedMemBytes, self.hStream, self.attrs, self.numAttrs = 0, 0, [], 0

    def cuLaunchKernelEx(self, cfg: Any, fn: Any, params: Any, extra: Any) -> Tuple[int]:  # noqa: N802
        """cuLaunchKernel with a config; the record gets its "cluster" (x, y, z)."""
        res = self.cuLaunchKernel(fn, cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ, cfg.blockDimX, cfg.blockDimY,
                                  cfg.blockDimZ, cfg.sharedMemBytes, cfg.hStream, params, extra)
        if res == (0,) and self.record:
            cl = (1, 1, 1)
            for a in cfg.attrs[:cfg.numAttrs]:
                if a.id == self.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
                    cl = (a.value.clusterDim.x, a.value.clusterDim.y, a.value.clusterDim.z)
            self.launches[-1]["cluster"] = cl
        return res

    def cuCtxSynchronize(self) -> Tuple[int]:  # noqa: N802
        return (0,)

    # TMA tensor maps (kernel.tma.encode_tensor_map): the enum and integer wrappers are ints here
    CUtensorMapDataType = CUtensorMapInterleave = CUtensorMapSwizzle = int
    CUtensorMapL2promotion = CUtensorMapFloatOOBfill = cuuint64_t = cuuint32_t = int

    def cuTensorMapEncodeTiled(self, dtype: int, rank: int, address: int, dims: Any, strides: Any, box: Any,  # noqa: N802
                               estrides: Any, interleave: int, swizzle: int, l2: int, oob: int) -> Tuple[int, Any]:
        """A stand-in CUtensorMap whose 16 words spell out what was asked (see fake_tensor_map)."""
        self._count("cuTensorMapEncodeTiled")
        if not 1 <= int(rank) <= 5 or int(address) % 16:
            return (1, None)
        # the driver's own checks of the geometry (CUDA_ERROR_INVALID_VALUE): extents in [1, 2^32], byte strides
        # multiples of 16 below 2^40, boxes of 1 to 256 and element strides of 1 to 8 per dimension
        if (any(not 1 <= int(x) <= 1 << 32 for x in dims) or any(int(x) % 16 or int(x) >= 1 << 40 for x in strides)
                or any(not 1 <= int(x) <= 256 for x in box) or any(not 1 <= int(x) <= 8 for x in estrides)):
            return (1, None)
        return (0, _Handle(0, opaque=fake_tensor_map(dtype, rank, address, dims, strides, box, estrides, interleave,
                                                     swizzle, l2, oob)))


def fake_tensor_map(dtype: int, rank: int, address: int, dims: Any, strides: Any, box: Any, estrides: Any,
                    interleave: int = 0, swizzle: int = 0, l2: int = 2, oob: int = 0) -> List[int]:
    """The 16 words of FakeDriver's CUtensorMap: word 0 packs data type, rank, swizzle, interleave,
    L2 promotion and OOB fill (a byte each), word 1 is the address, words 2-6 the dimensions, 7-10
    the byte strides, 11-15 the box (low 32 bits) and element strides (high)."""
    w = [0] * 16
    w[0] = int(dtype) | int(rank) << 8 | int(swizzle) << 16 | int(interleave) << 24 | int(l2) << 32 | int(oob) << 40
    w[1] = int(address)
    for j, x in enumerate(dims):
        w[2 + j] = int(x)
    for j, x in enumerate(strides):
        w[7 + j] = int(x)
    for j, (x, e) in enumerate(zip(box, estrides)):
        w[11 + j] = int(x) | int(e) << 32
    return w


class FakeNvrtc:
    """NVRTC answering with the source itself as the "cubin" (so the fake driver can read the
    kernel's parameter list); counts compiles. With ``nvcc`` (a path), each compile also runs
    nvcc on the source with NVRTC's options, so that the source is checked and the time spent
    is a real compile's (nvcc's, an upper bound of NVRTC's: a process, and a host pass)."""

    def __init__(self, nvcc: Optional[str] = None) -> None:
        self.compiles = 0
        self.nvcc = nvcc

    def nvrtcVersion(self) -> Tuple[int, int, int]:  # noqa: N802 - NVRTC's names
        return (0, 0, 0)

    def nvrtcCreateProgram(self, src: bytes, name: bytes, n: int, h: Any, i: Any) -> Tuple[int, Any]:  # noqa: N802
        return (0, _Handle(1, src=src))

    def nvrtcCompileProgram(self, prog: Any, n: int, opts: Any) -> Tuple[int]:  # noqa: N802
        self.compiles += 1
        prog.log = b""
        if self.nvcc:
            import subprocess
            import tempfile

            flags = []
            for o in (x.decode() for x in opts):
                if o.startswith("--gpu-architecture="):
                    flags.append("-arch=" + o.split("=", 1)[1])
                elif o != "-default-device":  # NVRTC only: cutelab's helpers are __device__ already
                    flags.append(o)
            with tempfile.TemporaryDirectory(prefix="cutelab-nvcc-") as d:
                with open(f"{d}/k.cu", "wb") as f:
                    f.write(prog.src)
                p = subprocess.run([self.nvcc, "-cubin", *flags, "-o", f"{d}/k.cubin", f"{d}/k.cu"],
                                   capture_output=True)
            prog.log = p.stdout + p.stderr  # ptxas's report (--ptxas-options=-v) too
            if p.returncode:
                return (6,)  # NVRTC_ERROR_COMPILATION
        return (0,)

    def nvrtcGetProgramLogSize(self, prog: Any) -> Tuple[int, int]:  # noqa: N802
        return (0, len(getattr(prog, "log", b"")) + 1)

    def nvrtcGetProgramLog(self, prog: Any, buf: Any) -> Tuple[int]:  # noqa: N802
        log = getattr(prog, "log", b"")
        ctypes.memmove(buf, log, len(log))
        return (0,)

    def nvrtcGetCUBINSize(self, prog: Any) -> Tuple[int, int]:  # noqa: N802
        return (0, len(prog.src))

    def nvrtcGetCUBIN(self, prog: Any, buf: Any) -> Tuple[int]:  # noqa: N802
        ctypes.memmove(buf, prog.src, len(prog.src))
        return (0,)

    def nvrtcDestroyProgram(self, prog: Any) -> Tuple[int]:  # noqa: N802
        return (0,)


class _FakeGpu:
    def __init__(self, driver: FakeDriver, nvrtc: FakeNvrtc):
        self.driver = driver
        self.nvrtc = nvrtc

    @property
    def launches(self) -> List[Dict[str, Any]]:
        return self.driver.launches


@contextlib.contextmanager
def fake_gpu(arch: Tuple[int, int] = (9, 0), record: bool = True, cache_dir: Optional[str] = None,
             nvcc: Optional[str] = None) -> Iterator[_FakeGpu]:
    """Within the block, cutelab's driver and NVRTC are fakes (see FakeDriver): launches on
    "GPU" tensors (FakeDeviceArray, fake_cuda_tensor) run the whole host path and are recorded.
    Compiled images of the fake go to ``cache_dir`` (a fresh temporary folder by default), never
    to the real kernel cache. ``nvcc``: compile each kernel with it too (see FakeNvrtc)."""
    import importlib
    import os
    import tempfile

    kcompile = importlib.import_module("cutelab.kernel.cuda.nvrtc")  # the package's name `compile` is cute.compile
    kdriver = importlib.import_module("cutelab.kernel.cuda.driver")
    klaunch = importlib.import_module("cutelab.kernel.launch.plan")

    fd, fn = FakeDriver(arch, record), FakeNvrtc(nvcc)
    saved = (kdriver._DRIVER, kdriver._AVAILABLE, kdriver._INIT, dict(kdriver._CTX), dict(kdriver._ARCH),
             dict(kdriver._MODULES), kcompile._NVRTC, kcompile._VERSION, dict(kcompile._MEMORY),
             klaunch._torch_stream, os.environ.get("CUTELAB_CACHE_DIR"))
    tmp = None
    if cache_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="cutelab-fake-cache-")
        cache_dir = tmp.name
    kdriver._DRIVER, kdriver._AVAILABLE, kdriver._INIT = fd, True, False
    kdriver._EPOCH += 1
    kdriver._CTX.clear(), kdriver._ARCH.clear(), kdriver._MODULES.clear()
    kcompile._NVRTC, kcompile._VERSION = fn, None
    kcompile._MEMORY.clear()
    klaunch._torch_stream = lambda owner: 0
    os.environ["CUTELAB_CACHE_DIR"] = cache_dir
    try:
        yield _FakeGpu(fd, fn)
    finally:
        (kdriver._DRIVER, kdriver._AVAILABLE, kdriver._INIT, ctx, arch_, mods, kcompile._NVRTC, kcompile._VERSION,
         mem, klaunch._torch_stream, env) = saved
        kdriver._EPOCH += 1
        kdriver._CTX.clear(), kdriver._CTX.update(ctx)
        kdriver._ARCH.clear(), kdriver._ARCH.update(arch_)
        kdriver._MODULES.clear(), kdriver._MODULES.update(mods)
        kcompile._MEMORY.clear(), kcompile._MEMORY.update(mem)
        if env is None:
            os.environ.pop("CUTELAB_CACHE_DIR", None)
        else:
            os.environ["CUTELAB_CACHE_DIR"] = env
        if tmp is not None:
            tmp.cleanup()
