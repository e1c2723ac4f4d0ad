"""The launch pipeline: trace a kernel for its arguments, prove its accesses, then print and
compile it for the GPU or keep its IR for the CPU interpreter (``_prepare``); a ``_Plan`` replays
that launch with new storages. ``last_launch`` and ``capture`` show what a launch made.
"""

from __future__ import annotations

import inspect
import os
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ... import tracing as _tracing_protocol
from ...dynamic import dyn_scalar
from ...errors import LaunchError, TraceError
from ..analysis.bounds import check_bounds, check_deferred
from ..cuda.driver import CUstream as _CUstream
from ...runtime import EnvStream as _EnvStream
from ..frontend.host import _local  # the launch record of this thread
from ..frontend.engines import GmemEngine
from ..frontend.trace import Tracer, tracing
from ..ir.nodes import KernelIR, dim_values, pow2_divisor
from .args import (
    _has_tensors, _skeleton_key,
    _is_storage_pointer, _is_storage_tensor,
    _replace_tensors,
    _scalar_in_kernel,
    _scalar_type,
    _scalar_value,
    _static_key,
    _Storage,
    _tensor_leaves,
    _want_interpret,
)


class LaunchInfo:
    """What the last launch did (for tests, benchmarks and curious users)."""

    def __init__(self, ir: KernelIR, mode: str, source: Optional[str] = None, compile_seconds: float = 0.0,
                 cached: bool = False, trace_seconds: float = 0.0, cubin: Optional[bytes] = None):
        self.ir = ir
        self.mode = mode
        self.source = source
        self.compile_seconds = compile_seconds
        self.cached = cached
        self.trace_seconds = trace_seconds
        self.cubin = cubin
        self.phases: Dict[str, float] = {}  # seconds per phase of a first launch on the GPU (trace, render, ...)


def _host_tracing() -> bool:
    """A @cute.jit body (or cute.compile's trace) runs on the host, outside kernels."""
    return getattr(_local, "recorder", None) is not None and not tracing()


_tracing_protocol.install(host_tracing=_host_tracing, host_scalar=dyn_scalar)  # Int32(3) in a jit body: a runtime value


_SPILLS_SHOWN: set = set()  # compile keys whose spills were reported (once per process)


def _report_spills(name: str, res: Any) -> None:
    """A warning when ptxas spilled registers to local memory: the kernel runs, slower than it
    could (e.g. a warpgroup holding a 128x256 f32 accumulator: 256 values per thread)."""
    import warnings

    from ..cuda.nvrtc import spill_report

    rep = spill_report(res.log)
    if rep is None or not (rep[0] or rep[1]) or res.key in _SPILLS_SHOWN:
        return
    _SPILLS_SHOWN.add(res.key)
    stores, loads, regs = rep
    warnings.warn(f"kernel {name}: ptxas spilled registers to local memory ({stores} bytes of spill stores, "
                  f"{loads} bytes of spill loads per thread, {regs} registers in use); it runs, but slower than "
                  f"it could: fewer values per thread (a smaller tile per thread, or more threads) avoid it",
                  stacklevel=4)


def last_launch() -> Optional[LaunchInfo]:
    return getattr(_local, "last", None)


class _Plan:
    """A traced and compiled launch, replayable with new storages of the same description.

    On the GPU its kernel parameters live in one prepared buffer (driver.Launcher, made at the
    first launch): a launch writes the storages' addresses and the scalars into it and calls
    cuLaunchKernel; nothing else is redone."""

    def __init__(self, ir: KernelIR, storages: List[_Storage], mode: str, fn: Any = None,
                 grid: Optional[Tuple[int, int, int]] = None):
        self.ir = ir
        self.storages = [st.description() for st in storages]  # sizes for the overlap check; nothing kept alive
        self.mode = mode
        self.fn = fn
        self.grid = grid or ir.grid  # the CUDA grid (differs from ir.grid when blocks are coarsened)
        self.source: Optional[str] = None
        self.deferred: List[Any] = []  # accesses checked at each launch with the scalar arguments' values
        self.restrict = False  # rendered with __restrict__ pointers: storages must not overlap when written
        self.sparams = [p for p in ir.params if p.kind == "scalar"]
        self.launcher: Any = None
        self.epoch = 0  # the driver it was loaded with (driver._EPOCH)
        self._scalars_ok: Dict[Tuple[Any, ...], bool] = {}  # scalar values whose deferred checks passed
        self.error_word: Any = None  # cuda.errorword.ErrorWord of a kernel with guarded accesses
        self.tensor_maps: Any = None  # SM90 TMA: CUtensorMap parameters after the others
        if mode == "gpu":
            from ..instr.tma import TensorMapArgs

            self.tensor_maps = TensorMapArgs(ir)

    @property
    def smem(self) -> int:
        ir = self.ir
        from ..ir.nodes import dynamic_smem_layout

        return dynamic_smem_layout(ir.shared)[1] if ir.shared else 0

    @property
    def params_buf(self) -> Any:
        return self._launcher().params

    def _launcher(self) -> Any:
        if self.launcher is None:
            from ..cuda.driver import Launcher

            self.launcher = Launcher(self.fn, self.grid, self.ir.block, self.smem,
                                     len(self.ir.params) + len(self.tensor_maps or ()), cluster=self.ir.cluster,
                                     cooperative=getattr(self.ir, "cooperative", False))
        return self.launcher

    def check_scalars(self, scalars: Sequence[Any]) -> None:
        """The deferred bounds checks for these scalar values (remembered once they pass)."""
        if len(scalars) != len(self.sparams):
            raise LaunchError(f"{self.ir.name}: expected {len(self.sparams)} scalar arguments, got {len(scalars)}")
        if not self.deferred:
            return
        key = tuple(scalars)
        if key in self._scalars_ok:
            return
        vals = {f"arg.{p.name}": int(v) for p, v in zip(self.sparams, scalars)}
        vals.update(dim_values(self.ir.grid, self.ir.block, self.ir.cluster))  # (ir.nodes.DimVar)
        check_deferred(self.ir, self.deferred, vals)
        if len(self._scalars_ok) < 1024:
            self._scalars_ok[key] = True

    def scalar_slots(self, scalars: Sequence[Any]) -> List[Tuple[int, int]]:
        """(parameter index, 64-bit slot) of each scalar argument."""
        return [(p.index, _scalar_bits(p.dtype, v)) for p, v in zip(self.sparams, scalars)]

    def run(self, storages: Sequence[_Storage], stream: Any = None, scalars: Sequence[Any] = ()) -> None:
        ir = self.ir
        self.check_scalars(scalars)
        for p in ir.params:
            st = storages[p.index] if getattr(p, "need_align", 0) and p.index < len(storages) else None
            if st is not None and st.address % p.need_align:
                raise LaunchError(f"{ir.name}: {st.name} starts at 0x{st.address:x}, but the raw-pointer copy at "
                                  f"{p.need_align_where} needs it aligned to {p.need_align} bytes")
        if self.mode == "gpu":
            if self.error_word is not None:  # a guarded access of an earlier launch left its tensor
                self.error_word.check(f"at the next launch of {ir.name}")
            if self.restrict:
                _check_no_alias(self, [st.address for st in storages])
            launcher = self.launcher or self._launcher()
            vals = launcher.params.values
            for i, st in enumerate(storages):
                vals[i] = st.address
            for i, bits in self.scalar_slots(scalars):
                vals[i] = bits
            if self.tensor_maps is not None and len(self.tensor_maps):
                self.tensor_maps.fill(launcher.params, [st.address for st in storages], len(ir.params))
            launcher(_stream_for(storages, stream))
        else:
            from ..cpu.interpreter import interpret

            global cpu_launches, launch_stream
            cpu_launches += 1
            buffers = {}
            for i, st in enumerate(storages):
                if st.data is None:
                    raise LaunchError(f"{ir.name}: the interpreter needs host memory for {st.name}")
                buffers[i] = st.data
            launch_stream = stream  # for a CUDA graph being captured (compat.torch_cuda): the launch's stream
            try:
                interpret(ir, buffers, {i: st.address for i, st in enumerate(storages)},
                          scalars={p.index: v for p, v in zip(self.sparams, scalars)})
            finally:
                launch_stream = None


#: kernels run on the CPU interpreter so far in this process (cute.testing.benchmark reads it)
cpu_launches = 0
#: the stream of the CPU launch running now (None: none given, or no launch)
launch_stream: Any = None


def _check_no_alias(plan: _Plan, addresses: Sequence[int]) -> None:
    """A kernel printed with __restrict__ pointers must not get a written storage that overlaps another."""
    ps = plan.ir.params
    spans = [(a, a + st.length * st.dtype.bytes, p.written) for a, st, p in zip(addresses, plan.storages, ps)]
    for i in range(len(spans)):
        for j in range(i + 1, len(spans)):
            a, b = spans[i], spans[j]
            if a[0] < b[1] and b[0] < a[1] and (a[2] or b[2]):
                raise LaunchError(
                    f"{plan.ir.name}: {ps[i].name} and {ps[j].name} overlap in memory and one of them is written, "
                    f"but the kernel was compiled for storages that do not overlap (__restrict__); call "
                    f"cute.compile again with these tensors (or pass copies). Nothing was launched."
                )


def _scalar_bits(dt: Any, v: Any) -> int:
    """The 64-bit parameter slot holding scalar v of type dt (little-endian, low bytes used)."""
    from ...dtypes import to_storage

    arr = np.zeros(1, dtype=np.uint64)
    arr.view(dt.storage)[0] = to_storage(np.asarray(v), dt)  # bf16: its 16-bit word, rounded to nearest even
    return int(arr[0])


def _check_arch(ir: Any, arch: str) -> None:
    """A LaunchError naming the first op (and its line) that this GPU's architecture does not have
    (a tcgen05 op on an H100), before NVRTC fails on it."""
    from ..ir.nodes import walk

    try:
        have = int(arch.removeprefix("sm_").rstrip("af"))
    except ValueError:
        return
    for op in walk(ir.body):
        need = getattr(op, "min_sm", 0)
        if need > have:
            loc = getattr(op, "loc", None)
            raise LaunchError(
                f"{ir.name}: {type(op).__name__}{f' ({loc})' if loc else ''} needs sm_{need}a (Blackwell), and this "
                f"GPU is {arch}; run the program on the CPU interpreter (CUTELAB_INTERPRET=1), which runs tcgen05 "
                f"and tensor memory, or on a Blackwell GPU. Nothing was launched.")


def _torch_stream(device_index: int) -> int:
    """torch's current CUDA stream on that device, as a raw handle (fakegpu replaces this)."""
    global _RAW_STREAM
    if _RAW_STREAM is None:
        import torch

        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        _RAW_STREAM = raw if raw is not None else (lambda i: int(torch.cuda.current_stream(i).cuda_stream))
    return _RAW_STREAM(device_index)


_RAW_STREAM: Any = None


def env_stream_now() -> Any:
    """What a TVM-FFI env stream (runtime.EnvStream) stands for where no device is known: torch's current
    CUDA stream as a CUstream (the emulation's without a GPU), else the default stream."""
    torch = sys.modules.get("torch")
    if torch is not None:
        try:  # (no is_available() first: it costs more than the launch, at every call)
            return _CUstream(int(torch.cuda.current_stream().cuda_stream))
        except Exception:  # noqa: BLE001 - a torch without CUDA: the default stream
            pass
    return _CUstream(0)


def _env_stream(device_index: Optional[int]) -> int:
    """The handle of a TVM-FFI env stream for a launch on that device: torch's current stream there
    (_torch_stream, which fakegpu replaces); without a device, env_stream_now()'s."""
    if device_index is None:
        return env_stream_now().handle
    try:
        return _torch_stream(device_index)
    except Exception:  # noqa: BLE001 - a torch without CUDA: the default stream
        return 0


def _stream_handle(stream: Any, device_index: Optional[int] = None) -> int:
    """A stream given to a launch (torch.cuda.Stream, cuda.CUstream, cutelab's CUstream, an int; a
    TVM-FFI env stream: the current stream of device_index)."""
    if type(stream) is int:
        return stream
    if type(stream) is _CUstream:
        return stream.handle
    if type(stream) is _EnvStream:
        return _env_stream(device_index)
    for attr in ("cuda_stream", "handle"):  # torch's default stream has cuda_stream 0: test presence, not truth
        h = getattr(stream, attr, None)
        if h is not None:
            return int(h)
    try:
        return int(stream)
    except (TypeError, ValueError):
        raise LaunchError(f"a launch's stream must be a torch.cuda.Stream, a cuda CUstream or an int handle, "
                          f"got {type(stream).__name__}") from None


def _launch_device(storages: Sequence[_Storage]) -> Optional[int]:
    """The device index of a launch's GPU storages (the first's), or None."""
    for st in storages:
        if st.on_gpu:
            return st.device[1]
    return None


def _torch_device(storages: Sequence[_Storage]) -> Optional[int]:
    """The device index of the first storage owned by a torch tensor (whose current stream a launch
    without an explicit stream uses), or None."""
    for st in storages:
        mod = type(st.owner).__module__ if st.owner is not None else ""
        if mod.startswith("torch"):
            return st.device[1]
    return None


def _stream_for(storages: Sequence[_Storage], stream: Any) -> int:
    if stream is not None:
        return _stream_handle(stream, _launch_device(storages))
    dev = _torch_device(storages)
    return 0 if dev is None else _torch_stream(dev)


def _view_annotated(fn: Any, args: Dict[str, Any]) -> None:
    """A kernel parameter annotated with a class that has ``_cl_kernel_arg`` (CuTe DSL's ``cutlass.Array``,
    compat/experimental/memory.py) sees its argument through it: the traced tensor as that class's view."""
    from ..frontend.host import _annotation

    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return
    for name, p in params.items():
        view = getattr(_annotation(fn, p), "_cl_kernel_arg", None) if p.annotation is not p.empty else None
        if view is not None and name in args:
            args[name] = view(args[name])


def _gmem(param: Any, address: int, t: Any) -> Any:
    """The kernel's global memory of host tensor t; a TMA tensor's (make_tiled_tma_atom's coordinate view)
    knows its TMA dimensions (its iterator is their coordinates: kernel/frontend/tma_coords.py)."""
    eng = GmemEngine(param, address, getattr(t.engine, "memspace", ""))
    dims = getattr(t, "tma_dims", None)
    if dims is not None:
        eng.tma_dims = dims
    return eng


def _prepare(k: Any, bound: inspect.BoundArguments, grid: Tuple[int, int, int],
             block: Tuple[int, int, int], interpret: Optional[bool],
             cluster: Tuple[int, int, int] = (1, 1, 1),
             min_blocks: int = 0, cooperative: bool = False) -> Tuple[_Plan, List[_Storage], List[Any]]:
    from ...tensor import Pointer, Tensor

    # storages: one kernel parameter per distinct engine; scalars: runtime values
    storages: List[_Storage] = []
    by_engine: Dict[int, int] = {}
    tensor_args: Dict[str, Tuple[Any, int]] = {}
    scalar_args: Dict[str, Tuple[Any, Any]] = {}
    for name, val in bound.arguments.items():
        dt = _scalar_type(k, name, val)
        if dt is not None:
            scalar_args[name] = (dt, val)
        elif _is_storage_pointer(val):  # a pointer argument (make_ptr of memory): its memory is a parameter
            eid = id(val.engine)
            if eid not in by_engine:
                by_engine[eid] = len(storages)
                storages.append(_Storage(val.engine, name))
            tensor_args[name] = (val, by_engine[eid])
        elif _is_storage_tensor(val) or _has_tensors(val):
            for path, t in _tensor_leaves(val, name):
                eid = id(t.engine)
                if eid not in by_engine:
                    if not hasattr(t.engine, "__len__"):  # make_ptr of a bare address: no memory behind it here
                        from ...errors import user_location

                        raise LaunchError(
                            f"{k.name}.launch at {user_location() or '?'}: argument {path} is a tensor over "
                            f"{t.engine.raw_ptr_str(t.offset if isinstance(t.offset, int) else 0)}, a pointer made "
                            f"by make_ptr from a bare integer address that no numpy array or torch tensor among the "
                            f"caller's variables holds, so cutelab cannot run the kernel on it; make the pointer "
                            f"from a variable's data_ptr() or a numpy array's ctypes pointer (or, to compile without "
                            f"memory, pass the placeholder pointers to cute.compile and the real ones at the call)")
                    by_engine[eid] = len(storages)
                    storages.append(_Storage(t.engine, path))
                tensor_args[path] = (t, by_engine[eid])
        elif isinstance(val, np.ndarray) or type(val).__module__.startswith("torch"):
            raise LaunchError(
                f"{k.name}: argument {name} is a {type(val).__name__}; wrap arrays with "
                f"cutelab.runtime.from_dlpack(...) to pass them to a kernel"
            )
    for name, val in bound.arguments.items():
        # a TMA atom carries its tensor (CuTe DSL's atom holds the tensor map): where no argument is a tensor over
        # that memory, it is a parameter of its own (CUTLASS's mixed-input FMHA decode passes the TMA tensor of the
        # K scales only, and loads the V scales through their atom at the same coordinates)
        eng = getattr(val, "host_engine", None)
        if eng is not None and id(eng) not in by_engine and hasattr(eng, "__len__") and hasattr(val, "desc"):
            by_engine[id(eng)] = len(storages)
            storages.append(_Storage(eng, f"{name}_tensor"))  # (a parameter's name in the CUDA)
    flag = _want_interpret(interpret if interpret is not None else k.interpret)
    on_gpu = {st.on_gpu for st in storages}
    if flag:
        if True in on_gpu:
            names = [st.name for st in storages if st.on_gpu]
            raise LaunchError(f"{k.name}: interpret=True, but {names} live on a GPU; move them to the CPU first")
        mode = "cpu"
    elif on_gpu == {True}:
        mode = "gpu"
    elif on_gpu == {False}:
        mode = "cpu"
    elif not on_gpu:
        from ..cuda.driver import gpu_available

        mode = "gpu" if gpu_available() else "cpu"
    else:
        where = ", ".join(f"{st.name} on {st.device[0]}" for st in storages)
        raise LaunchError(f"{k.name}: tensors live on different devices ({where}); a kernel runs on one")

    scalar_vals = [_scalar_value(k, name, dt, v) for name, (dt, v) in scalar_args.items()]
    key = _plan_key(k, bound, grid, block, mode, storages, tensor_args, scalar_args)
    if key is not None and cluster != (1, 1, 1):
        key = key + (("cluster", cluster),)
    if key is not None and min_blocks:
        key = key + (("min_blocks", min_blocks),)
    if key is not None and cooperative:
        key = key + (("cooperative", True),)
    plan = k.plans.get(key) if key is not None else None
    if plan is not None and (plan.mode == "cpu" or plan.epoch == _driver_epoch()):
        _local.last = LaunchInfo(plan.ir, plan.mode, plan.source, 0.0, True, 0.0, None)
        return plan, storages, scalar_vals
    t0 = time.perf_counter()
    with Tracer(k.name, grid, block) as tr:
        tr.cluster = cluster
        params = [tr.add_param(st.name, st.dtype, st.align, st.length) for st in storages]
        scalar_params = {name: tr.add_scalar(name, dt) for name, (dt, _) in scalar_args.items()}
        for st, p in zip(storages, params):
            if mode == "gpu" and st.address:  # the plan is keyed by address % 16: the code may use what it proves
                p.code_align = max(st.align, min(16, pow2_divisor(st.address)))
            if st.address % st.align:
                raise LaunchError(
                    f"{k.name}: {st.name} starts at 0x{st.address:x}, not aligned to the {st.align} bytes it was "
                    f"declared with (from_dlpack(..., assumed_align={st.align}))"
                )
        args = dict(bound.arguments)
        traced = {path: (Tensor(_gmem(params[idx], storages[idx].address, t), t.layout, t.offset, _checked=True)
                         if not isinstance(t, Pointer) else
                         Pointer(GmemEngine(params[idx], storages[idx].address, "gmem"), t.offset))
                  for path, (t, idx) in tensor_args.items()}
        # host tensor engine -> its parameter (copy_tensormap finds a TMA atom's tensor: instr/tensormap.py)
        tr.host_params = {eid: params[idx] for eid, idx in by_engine.items()}
        for name in list(args):
            if name in traced or _has_tensors(args[name]):
                args[name] = _replace_tensors(args[name], name, traced)
        for name, sp in scalar_params.items():
            args[name] = _scalar_in_kernel(sp)
        _view_annotated(k.fn, args)
        ret = k.traced_fn()(**args)
        if ret is not None:
            raise TraceError(f"kernel {k.name} returned {ret!r}; kernels return nothing (write results to tensors)")
    ir = tr.finish()
    ir.min_blocks = min_blocks
    ir.cooperative = bool(cooperative)
    t_checks = time.perf_counter()
    trace_s = t_checks - t0
    launch_scalars = {f"arg.{sp.name}": int(v) for sp, v in zip(scalar_params.values(), scalar_vals)
                      if getattr(sp.dtype, "kind", "") in ("int", "uint", "bool")}
    launch_scalars.update(dim_values(ir.grid, ir.block, ir.cluster))  # (ir.nodes.DimVar)
    deferred = check_bounds(ir, mode, launch_scalars=launch_scalars)
    checks_s = time.perf_counter() - t_checks
    if mode == "cpu":
        _local.last = LaunchInfo(ir, "cpu", trace_seconds=trace_s)
        plan = _Plan(ir, storages, "cpu")
        if key is not None:
            k.plans[key] = plan
        return plan, storages, scalar_vals

    from ..cuda.driver import device_arch, load_module, use_device
    from ..cuda.build import build
    from ..cuda.nvrtc import compile_cuda

    dev = next((st.device[1] for st in storages if st.on_gpu), 0)
    use_device(dev)
    _check_arch(ir, device_arch())
    restrict = not _aliasing(ir, storages)
    t_render = time.perf_counter()
    from ..instr.wgmma import target_arch

    arch = target_arch(ir, device_arch())  # sm_90a where wgmma is used
    times = []

    def _compile(source: str) -> Any:
        t = time.perf_counter()
        out = compile_cuda(source, k.name, arch)
        times.append(time.perf_counter() - t)
        return out

    renderer, src, res = build(ir, _compile, restrict)  # printed again where ptxas spills (passes/loopidx.py)
    t_load = time.perf_counter()
    t1 = t_load - sum(times)
    fn = load_module(res.cubin, res.key, k.name)
    t2 = time.perf_counter()
    _local.last = LaunchInfo(ir, "gpu", src, t2 - t1, res.cached, trace_s, res.cubin)
    _report_spills(k.name, res)
    _local.last.phases = {"trace": trace_s, "bounds checks": checks_s, "render": t1 - t_render,
                          "nvrtc" if not res.cached else "compile cache": t_load - t1, "module load": t2 - t_load}
    plan = _Plan(ir, storages, "gpu", fn, renderer.launch_grid)
    if getattr(ir, "guards", None):
        from ..cuda.errorword import ErrorWord
        from ..cuda import driver as _drv

        mod = next(m for (_, key), (m, f) in _drv._MODULES.items() if key == res.key and f is fn)
        plan.error_word = ErrorWord.attach(mod, ir.guard_infos)
    plan.source = src
    plan.deferred = deferred
    plan.restrict = restrict
    plan.epoch = _driver_epoch()
    if key is not None:
        k.plans[key] = plan
    return plan, storages, scalar_vals


def _driver_epoch() -> int:
    from ..cuda import driver

    return driver._EPOCH


def _plan_key(k: Any, bound: Any, grid: Any, block: Any, mode: str, storages: List[_Storage],
              tensor_args: Dict[str, Any], scalar_args: Dict[str, Any]) -> Any:
    """What a trace depends on: launch shape, back end, tensors' types/layouts/alignment/sizes,
    scalars' types and every other argument's value; None when some argument cannot be a key.
    Dynamic values (cutelab.dynamic.DynInt) are keyed by value and by which leaves are dynamic
    (with their types and divisibilities): a trace prints '?' for those, and loops over them."""
    from ...dynamic import dynamic_key

    if os.environ.get("CUTELAB_NO_TRACE_CACHE"):
        return None
    parts: List[Any] = [grid, block, mode]
    try:
        for name, val in bound.arguments.items():
            if name in scalar_args:
                parts.append((name, "scalar", scalar_args[name][0]))  # the type itself: a subclass of Float32 is another key
            elif _is_storage_pointer(val):
                t, idx = tensor_args[name]
                st = storages[idx]
                parts.append((name, "pointer", idx, st.dtype, int(t.offset), st.align, st.length, st.device[0],
                              st.address % 16 if mode == "gpu" else 0))
            elif _is_storage_tensor(val) or _has_tensors(val):
                if not _is_storage_tensor(val):  # a dataclass, tuple or list: its other values too
                    parts.append((name, "holder", _skeleton_key(val)))
                for path, _ in _tensor_leaves(val, name):
                    t, idx = tensor_args[path]
                    st = storages[idx]
                    if not hasattr(t, "layout"):  # a pointer inside a dataclass or tuple argument
                        parts.append((path, "pointer", idx, st.dtype, int(t.offset), st.align, st.length,
                                      st.device[0], st.address % 16 if mode == "gpu" else 0))
                        continue
                    parts.append((path, "tensor", idx, st.dtype, t.layout, _static_key(t.offset), st.align,
                                  st.length, st.device[0], st.address % 16 if mode == "gpu" else 0,
                                  dynamic_key(t.layout)))
            else:  # dynamic values (DynInt) are specialized on: their value, and where they are (for '?' prints)
                parts.append((name, _static_key(val), dynamic_key(val)))
        if mode == "gpu":  # which storages overlap decides __restrict__: part of what the source depends on
            spans = [(st.address, st.address + st.length * st.dtype.bytes) for st in storages]
            parts.append(tuple((i, j) for i in range(len(spans)) for j in range(i + 1, len(spans))
                               if spans[i][0] < spans[j][1] and spans[j][0] < spans[i][1]))
        key = tuple(parts)
        hash(key)
        return key
    except TypeError:
        return None


def _aliasing(ir: KernelIR, storages: List[_Storage]) -> bool:
    """True when two storages overlap in memory and one of them is written by the kernel, or when
    the kernel stores through a runtime address (which may reach any of them)."""
    from ..ir.nodes import stores_by_address

    if stores_by_address(ir):
        return True
    spans = []
    for p, st in zip(ir.params, storages):
        spans.append((st.address, st.address + st.length * st.dtype.bytes, p.written))
    for i in range(len(spans)):
        for j in range(i + 1, len(spans)):
            a, b = spans[i], spans[j]
            if a[0] < b[1] and b[0] < a[1] and (a[2] or b[2]):
                return True
    return False


class capture:
    """``with capture() as launches:`` traces (and, on a GPU, compiles) every kernel launched
    inside, without running it; ``launches`` is a list of KernelIR (use cuda.render on them).

    >>> # with capture() as ks: launch_copy(S, D, (1, 16), 256)
    >>> # print(cuda.render(ks[0]))
    """

    def __init__(self) -> None:
        self.kernels: List[KernelIR] = []

    def __enter__(self) -> List[KernelIR]:
        if getattr(_local, "recorder", None) is not None:
            raise LaunchError("capture() cannot be nested (nor used inside cute.compile)")
        _local.recorder = []
        return self.kernels

    def __exit__(self, *exc: Any) -> None:
        rec = _local.recorder
        _local.recorder = None
        self.kernels.extend(plan.ir for plan, _, _ in rec if plan.ir is not None)  # not host prints
