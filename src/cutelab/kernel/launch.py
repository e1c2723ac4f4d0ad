"""@cute.kernel, @cute.jit, ``kernel(...).launch(grid=..., block=...)`` and cute.compile.

A launch

1. checks the grid and block shapes;
2. turns each Tensor argument into a kernel parameter (one per distinct storage) and every
   other argument (layouts, shapes, ints) into a trace-time constant;
3. traces the kernel function once with symbolic thread and block indices (``trace.Tracer``);
4. proves every load and store in bounds for every thread of this grid (interval arithmetic
   on the index expressions, or exact evaluation over all threads when that is not enough): a
   launch that would touch memory outside a tensor is refused with a LaunchError, before
   anything runs;
5. on a GPU: prints CUDA C++ (``cuda.render``), compiles it with NVRTC through the disk cache
   (``compile.compile_cuda``) and launches it on the tensors' stream; on the CPU: runs the IR
   with numpy (``interpret.interpret``).

A compiled call (``f = cute.compile(fn, ...)``; ``f(...)``) and a remembered @cute.jit call
(JitFunction.__call__) skip all of that: each tensor argument passes a check prepared for its
compiled signature (kind of object, element type, layout, offset, storage size, device) and only
its address is read; an address must still be aligned as compiled, and when addresses change,
storages that were one must still be one and no written storage may overlap another under
__restrict__. The addresses go into a parameter buffer prepared once (driver.Launcher); scalar
arguments and deferred bounds checks are settled when the call is prepared. Anything else takes
the full check, whose error names what differs. A compiled call's checks and launches are
written out once as one generated Python function (``_direct_call``; CUTELAB_DIRECT_CALL=0
turns it off): it either launches or returns having done nothing, and the general path then
runs the same checks one by one.

Where a kernel runs: on the GPU when its tensors live on a GPU, in the CPU interpreter when
they live in host memory (numpy arrays, CPU torch tensors), or when ``interpret=True`` is
given to ``launch`` or ``@cute.kernel``, or ``CUTELAB_INTERPRET=1`` is set.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import LaunchError, TraceError
from ..layout import Layout
from .driver import CUstream as _CUstream
from .symbolic import evaluate, sym_range
from .trace import GmemEngine, KernelIR, Load, Store, Tracer, pow2_divisor, tracing

__all__ = ["kernel", "jit", "compile", "Kernel", "JitFunction", "CompiledFunction", "Constexpr",
           "last_launch", "LaunchInfo"]

_MAX_BLOCK = (1024, 1024, 64)
_MAX_GRID = ((1 << 31) - 1, 65535, 65535)


class Constexpr:
    """Marks a jit argument as a compile-time constant: ``n: cutlass.Constexpr[cutlass.Int32]``.

    In cutelab every non-tensor argument is a compile-time constant already; this is for
    annotations only.
    """

    def __class_getitem__(cls, item: Any) -> Any:
        return cls


# --------------------------------------------------------------------------- arguments

def _dims(x: Any, what: str, kernel: str) -> Tuple[int, int, int]:
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        x = (int(x),)
    if not isinstance(x, (tuple, list)) or not 1 <= len(x) <= 3:
        raise LaunchError(f"{kernel}.launch: {what} must be 1 to 3 ints (x, y, z), got {x!r}")
    out = []
    for v in x:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise LaunchError(
                f"{kernel}.launch: {what} entries must be static ints, got {v!r} ({type(v).__name__}) in {x!r}"
            )
        out.append(int(v))
    while len(out) < 3:
        out.append(1)
    limits = _MAX_BLOCK if what == "block" else _MAX_GRID
    for axis, v, lim in zip("xyz", out, limits):
        if v < 1:
            raise LaunchError(f"{kernel}.launch: {what}.{axis} = {v}; every {what} dimension must be at least 1")
        if v > lim:
            raise LaunchError(f"{kernel}.launch: {what}.{axis} = {v} exceeds CUDA's limit of {lim}")
    if what == "block" and out[0] * out[1] * out[2] > 1024:
        raise LaunchError(
            f"{kernel}.launch: block {tuple(out)} has {out[0] * out[1] * out[2]} threads; CUDA allows at most 1024"
        )
    return tuple(out)  # type: ignore[return-value]


class _Storage:
    """What a launch needs to know of one tensor storage (an engine of cutelab.tensor)."""

    def __init__(self, engine: Any, name: str):
        self.engine = engine
        self.name = name
        self.dtype = engine.dtype
        self.address = int(getattr(engine, "address", 0) or 0)
        self.align = int(getattr(engine, "align", None) or self.dtype.bytes)
        self.length = len(engine)
        data = getattr(engine, "data", None)
        self.data = data if isinstance(data, np.ndarray) else None
        owner = getattr(engine, "obj", None)
        self.owner = owner if owner is not None else getattr(engine, "owner", None)
        self.device = _device_of(engine, self.data)

    @property
    def on_gpu(self) -> bool:
        return self.device[0] == "cuda"

    def description(self) -> "_Storage":
        """The same facts without the storage itself (no engine, array or owner kept alive)."""
        d = _Storage.__new__(_Storage)
        d.__dict__.update(self.__dict__)
        d.engine = d.data = d.owner = None
        return d


def _device_of(engine: Any, data: Any) -> Tuple[str, int]:
    if isinstance(data, np.ndarray):
        return ("cpu", 0)
    dev = getattr(engine, "device", None)
    if dev is not None:
        t = getattr(dev, "type", None)
        if t is not None:  # torch.device
            return ("cuda" if t == "cuda" else t, int(getattr(dev, "index", 0) or 0))
        if isinstance(dev, tuple) and len(dev) == 2:  # DLPack (device_type, id)
            return ("cuda" if int(dev[0]) in (2, 13) else "cpu", int(dev[1]))
        if isinstance(dev, str):
            return (dev.split(":")[0], int(dev.split(":")[1]) if ":" in dev else 0)
    raise LaunchError(f"cannot tell where the storage {type(engine).__name__} lives (CPU or GPU)")


def _is_storage_tensor(x: Any) -> bool:
    eng = getattr(x, "engine", None)
    return (eng is not None and isinstance(getattr(x, "layout", None), Layout)
            and hasattr(eng, "dtype") and getattr(eng, "dtype", None) is not None
            and hasattr(eng, "address") and not isinstance(eng, GmemEngine))


def _want_interpret(flag: Optional[bool]) -> Optional[bool]:
    if flag is not None:
        return bool(flag)
    env = os.environ.get("CUTELAB_INTERPRET", "")
    if env not in ("", "0"):
        return True
    return None


# --------------------------------------------------------------------------- bounds

def _exact_check(ir: KernelIR, e: Any, omin: int, omax: int, length: int,
                 guards: Sequence[Tuple[Any, bool]] = (), extra: Optional[Dict[str, int]] = None,
                 loop: Any = None) -> Tuple[int, int, Any]:
    """(min, max) of e over every thread of the launch (for which every guard (cond, polarity)
    holds), and the first thread (in launch order) whose access [e + omin, e + omax] leaves
    [0, length), or None."""
    from .interpret import thread_env

    nt = ir.num_threads
    nblocks = ir.grid[0] * ir.grid[1] * ir.grid[2]
    step = max(1, (1 << 22) // nt)
    lo = hi = None
    first_bad = None
    for first in range(0, nblocks, step):
        k = min(step, nblocks - first)
        env = thread_env(ir.grid, ir.block, first, k)
        if extra:
            env.update(extra)
        runs = None
        if loop is not None:  # bind the loop variable to its first or last value; threads with no trip are out
            f, end = loop
            lo_v = np.broadcast_to(np.asarray(evaluate(f.lo, env), dtype=np.int64), (k * nt,))
            hi_v = np.broadcast_to(np.asarray(evaluate(f.hi, env), dtype=np.int64), (k * nt,))
            st = f.step
            trips = np.maximum(0, (hi_v - lo_v + (st - 1 if st > 0 else st + 1)) // st)
            runs = trips > 0
            env[f.var.name] = lo_v if end == "first" else lo_v + (np.maximum(trips, 1) - 1) * st
        v = np.broadcast_to(np.asarray(evaluate(e, env), dtype=np.int64), (k * nt,))
        if guards or runs is not None:
            m = np.ones(k * nt, dtype=bool) if runs is None else runs.copy()
            for c, pol in guards:
                cv = np.broadcast_to(np.asarray(evaluate(c, env)) != 0, (k * nt,))
                m &= cv if pol else ~cv
            if not m.any():
                continue
            env = {n: (np.broadcast_to(a, (k * nt,))[m] if isinstance(a, np.ndarray) else a) for n, a in env.items()}
            v = v[m]
        vlo, vhi = int(v.min()), int(v.max())
        lo = vlo if lo is None else min(lo, vlo)
        hi = vhi if hi is None else max(hi, vhi)
        if first_bad is None and (vlo + omin < 0 or vhi + omax >= length):
            i = int(np.argmax((v + omin < 0) | (v + omax >= length)))
            first_bad = ({n: (int(a[i]) if isinstance(a, np.ndarray) else int(a)) for n, a in env.items()}, int(v[i]))
    return lo, hi, first_bad


def _where(at: Dict[str, int]) -> str:
    return (f"block ({at['bid.x']},{at['bid.y']},{at['bid.z']}) thread ({at['tid.x']},{at['tid.y']},{at['tid.z']})")


def _accesses(block: Any, guards: List[Tuple[Any, bool]], loops: Tuple[Any, ...]):
    """(Load or Store, the If conditions guarding it as (cond, polarity), the enclosing loops)."""
    from .trace import For, If, While

    from .trace import Op

    for op in block.ops:
        if isinstance(op, (Load, Store)):
            yield op, guards, loops
        elif isinstance(op, Op):
            for a in op.accesses():
                yield a, guards + list(getattr(a, "guards", ())), loops  # an op's own predicate guards it too
        elif isinstance(op, If):
            yield from _accesses(op.then, guards + [(op.cond, True)], loops)
            yield from _accesses(op.orelse, guards + [(op.cond, False)], loops)
        elif isinstance(op, For):
            yield from _accesses(op.body, guards, loops + (op,))
        elif isinstance(op, While):
            yield from _accesses(op.before, guards, loops + (op,))
            yield from _accesses(op.body, guards, loops + (op,))


def _is_store(s: Any) -> bool:
    return isinstance(s, Store) or bool(getattr(s, "is_store", False))


def _linear_in(e: Any, var: Any) -> bool:
    """e = (terms without var) + c * var: its extremes over var are at var's ends."""
    from .symbolic import Expr, Lin, atoms

    if not isinstance(e, Expr):
        return True
    if e is var or (isinstance(e, Expr) and e.key == var.key):
        return True
    if isinstance(e, Lin):
        return all(a.key == var.key or not any(v.key == var.key for v in atoms(a)) for a, _ in e.terms)
    return not any(v.key == var.key for v in atoms(e))


def _exactly_checkable(base: Any, guards: List[Tuple[Any, bool]], loops: Tuple[Any, ...]) -> bool:
    """An access whose index and guards are expressions of the thread and block indices (and
    scalar arguments), outside loops or inside one runtime For loop whose bounds are such
    expressions and in whose variable the index is linear: evaluate it for every thread (at
    both ends of the loop)."""
    from .symbolic import Expr, atoms
    from .trace import For, LoopVar

    if len(loops) > 1 or (loops and not isinstance(loops[0], For)):
        return False
    var = loops[0].var if loops else None
    if loops:
        f = loops[0]
        for b in (f.lo, f.hi):
            if isinstance(b, Expr) and any(isinstance(v, LoopVar) for v in atoms(b)):
                return False
        if not _linear_in(base, var):
            return False
    for e in [base] + [c for c, _ in guards]:
        if isinstance(e, tuple):  # a register condition: data-dependent
            return False
        if isinstance(e, Expr) and any(v.name.startswith("reg.") for v in atoms(e)):
            return False  # an index read from a register (trace.RegVar): data-dependent
        if isinstance(e, Expr) and any(isinstance(v, LoopVar) and v is not var for v in atoms(e)):
            return False
        if var is not None and e is not base and isinstance(e, Expr) and any(v is var for v in atoms(e)):
            return False  # a guard that depends on the loop variable
    return True


def check_bounds(ir: KernelIR, mode: str = "cpu", scalars: Optional[Dict[str, int]] = None,
                 launch_scalars: Optional[Dict[str, int]] = None) -> List[Any]:
    """Refuse the launch if any load or store of any thread would leave its tensor's storage.

    Straight-line kernels are checked here, exactly, for every thread. In structured kernels
    (loops, branches, scalar arguments) an access the index ranges do not prove in bounds is
    checked by the CPU interpreter as it runs (on copies, committed at the end); on the GPU it is
    checked exactly for every thread when it lies outside loops and its index and guarding
    conditions are expressions of the indices (and of scalar arguments: those accesses are
    returned, to be checked at each launch with the scalars' values, see check_deferred), and
    otherwise the access is guarded (see guards.py: the CUDA tests it, skips it when out of range
    and records it in an error word the host turns into a LaunchError), or, for an op that cannot
    be guarded, the launch is refused. Before guarding, the registers' value ranges (ranges.py)
    may prove the access: for every scalar argument, or for ``launch_scalars`` (the values of the
    launch being prepared; the proof is returned with the deferred checks, to be checked again at
    each launch with other values). The guarded accesses are set on ir (ir.guards)."""
    from .guards import plan_guards
    from .ranges import reads_registers
    from .symbolic import atoms
    from .trace import ArgVar

    structured = ir.structured
    deferred: List[Any] = []
    guarded: List[Any] = []
    analysis = None  # the registers' value ranges, computed when an access needs them
    for s, guards, looped in _accesses(ir.body, [], ()):
        p = s.param
        omin, omax = min(s.offsets), max(s.offsets)
        lo, hi = sym_range(s.base)
        if lo + omin >= 0 and hi + omax < p.length:
            continue
        if structured or reads_registers(s.base):  # (an index read from memory: not exactly checkable)
            if mode == "cpu":
                continue
            if _exactly_checkable(s.base, guards, looped):
                exprs = [s.base] + [c for c, _ in guards] + ([looped[0].lo, looped[0].hi] if looped else [])
                uses_args = any(isinstance(v, ArgVar) for e in exprs for v in atoms(e))
                if uses_args and scalars is None:
                    deferred.append((s, guards, looped))
                    continue
                _raise_if_out(ir, s, guards, scalars or {}, looped)
                continue
            proof = False
            if analysis is None:
                from .ranges import Threads, analyze

                try:
                    analysis = analyze(ir)
                except (TypeError, ValueError, KeyError, AttributeError, TraceError):  # an IR it does not know:
                    analysis = False  # prove nothing with it (guard as before)
                threads = Threads(ir)
            if analysis:
                from .ranges import prove

                try:
                    proof = prove(ir, s, analysis.record_for(s), launch_scalars, threads)
                except (TypeError, ValueError, KeyError, AttributeError, TraceError):
                    proof = False
            if proof is not False:
                if proof is not True:
                    deferred.append(proof)  # proved for these scalar values: checked again for others
                continue
            if isinstance(s, (Load, Store)) or getattr(getattr(s, "op", None), "guardable", False):
                guarded.append((s, s if isinstance(s, (Load, Store)) else s.op))
                continue
            what = "store to" if _is_store(s) else "load from"
            raise LaunchError(
                f"{ir.name}: cannot prove the {what} {p.name} in bounds for every thread (its offsets range "
                f"over [{lo + omin}, {hi + omax}] as far as the tracer can tell, and {p.name} has {p.length} "
                f"elements); on the GPU cutelab launches only kernels whose accesses are proved in bounds "
                f"(accesses inside runtime loops must be provable from the loop's bounds). Run it with "
                f"interpret=True (which checks every access as it runs). Nothing was launched."
            )
        _raise_if_out(ir, s, (), {})
    plan_guards(ir, guarded)
    # on the GPU every access not guarded is proved in bounds (or the launch was refused): the CUDA
    # printer may then compute its offset modulo 2**32 (cuda.CudaRenderer.base_var)
    ir.bounds_proved = mode != "cpu"
    return deferred


def check_deferred(ir: KernelIR, deferred: List[Any], scalars: Dict[str, int]) -> None:
    """The exact check of accesses that depend on scalar arguments, with this launch's values."""
    threads = None
    for entry in deferred:
        if not isinstance(entry, tuple):  # a range proof (ranges.RangeCheck)
            if threads is None:
                from .ranges import Threads

                threads = Threads(ir)
            entry.check(ir, scalars, threads)
            continue
        s, guards, loops = entry
        _raise_if_out(ir, s, guards, scalars, loops)


def _raise_if_out(ir: KernelIR, s: Any, guards: Any, extra: Dict[str, int], loops: Tuple[Any, ...] = ()) -> None:
    p = s.param
    omin, omax = min(s.offsets), max(s.offsets)
    if loops:  # the index at the loop's first and last value, for the threads that run the loop
        f = loops[0]
        bad = None
        elo = ehi = None
        for end in ("first", "last"):
            r = _exact_check(ir, s.base, omin, omax, p.length, guards, extra, (f, end))
            if r[0] is not None:
                elo = r[0] if elo is None else min(elo, r[0])
                ehi = r[1] if ehi is None else max(ehi, r[1])
            bad = bad or r[2]
    else:
        elo, ehi, bad = _exact_check(ir, s.base, omin, omax, p.length, guards, extra)
    if bad is None:
        return
    what = "store to" if _is_store(s) else "load from"
    at, v = bad
    vals = "".join(f", {k[4:]} = {x}" for k, x in extra.items())
    raise LaunchError(
        f"{ir.name}: the {what} {p.name} reaches element offsets [{elo + omin}, {ehi + omax}], but {p.name} "
        f"has {p.length} elements; the first thread out of range is {_where(at)} (offsets "
        f"[{v + omin}, {v + omax}]), with grid {ir.grid} and block {ir.block}{vals}. Is the grid too large for "
        f"the tiles? Nothing was launched."
    )


# --------------------------------------------------------------------------- launch records

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


_local = threading.local()
_SPILLS_SHOWN: set = set()  # compile keys whose spills were reported (once per process)


def _report_spills(name: str, res: Any) -> None:
    """A warning when ptxas spilled registers to local memory: the kernel runs, slower than it
    could (e.g. a warpgroup holding a 128x256 f32 accumulator: 256 values per thread)."""
    import warnings

    from .compile import spill_report

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
        self.error_word: Any = None  # guards.ErrorWord of a kernel with guarded accesses
        self.tensor_maps: Any = None  # SM90 TMA: CUtensorMap parameters after the others
        if mode == "gpu":
            from .tma import TensorMapArgs

            self.tensor_maps = TensorMapArgs(ir)

    @property
    def smem(self) -> int:
        ir = self.ir
        return sum(sh.bytes for sh in ir.shared if sh.dynamic) if ir.shared else 0

    @property
    def params_buf(self) -> Any:
        return self._launcher().params

    def _launcher(self) -> Any:
        if self.launcher is None:
            from .driver import Launcher

            self.launcher = Launcher(self.fn, self.grid, self.ir.block, self.smem,
                                     len(self.ir.params) + len(self.tensor_maps or ()))
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
        check_deferred(self.ir, self.deferred, {f"arg.{p.name}": int(v) for p, v in zip(self.sparams, scalars)})
        if len(self._scalars_ok) < 1024:
            self._scalars_ok[key] = True

    def scalar_slots(self, scalars: Sequence[Any]) -> List[Tuple[int, int]]:
        """(parameter index, 64-bit slot) of each scalar argument."""
        return [(p.index, _scalar_bits(p.dtype, v)) for p, v in zip(self.sparams, scalars)]

    def run(self, storages: Sequence[_Storage], stream: Any = None, scalars: Sequence[Any] = ()) -> None:
        ir = self.ir
        self.check_scalars(scalars)
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
            from .interpret import interpret

            buffers = {}
            for i, st in enumerate(storages):
                if st.data is None:
                    raise LaunchError(f"{ir.name}: the interpreter needs host memory for {st.name}")
                buffers[i] = st.data
            interpret(ir, buffers, {i: st.address for i, st in enumerate(storages)},
                      scalars={p.index: v for p, v in zip(self.sparams, scalars)})


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
    arr = np.zeros(1, dtype=np.uint64)
    if dt.name == "bf16":
        from ..numeric import BFloat16

        f = np.float32(BFloat16(v).value)
        arr.view(np.uint16)[0] = int(np.asarray(f).view(np.uint32)) >> 16
    else:
        arr.view(dt.storage)[0] = v
    return int(arr[0])


def _torch_stream(device_index: int) -> int:
    """torch's current CUDA stream on that device, as a raw handle (fakegpu replaces this)."""
    global _RAW_STREAM
    if _RAW_STREAM is None:
        import torch

        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        _RAW_STREAM = raw if raw is not None else (lambda i: int(torch.cuda.current_stream(i).cuda_stream))
    return _RAW_STREAM(device_index)


_RAW_STREAM: Any = None


def _stream_handle(stream: Any) -> int:
    """A stream given to a launch (torch.cuda.Stream, cuda.CUstream, cutelab's CUstream, an int)."""
    if type(stream) is int:
        return stream
    if type(stream) is _CUstream:
        return stream.handle
    return int(getattr(stream, "cuda_stream", None) or getattr(stream, "handle", None) or int(stream))


def _respecialize(cf: Any, args: Any) -> Any:
    """host.respecialize, imported at the first call (host.py imports this module)."""
    global _respecialize
    from .host import respecialize

    _respecialize = respecialize
    return respecialize(cf, args)


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
        return _stream_handle(stream)
    dev = _torch_device(storages)
    return 0 if dev is None else _torch_stream(dev)


# --------------------------------------------------------------------------- kernels

def _c_name(name: str) -> str:
    n = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return n if n and not n[0].isdigit() else "k_" + n


class Kernel:
    """A @cute.kernel function. Calling it binds arguments; ``.launch(grid=, block=)`` runs it."""

    def __init__(self, fn: Callable, interpret: Optional[bool] = None):
        self.fn = fn
        self.interpret = interpret
        self.name = _c_name(fn.__name__)
        # the function's own names, as CuTe DSL's kernel objects keep them (kernel.__name__ in programs' prints)
        self.__name__, self.__qualname__, self.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
        self.__module__ = getattr(fn, "__module__", None)
        self.signature = inspect.signature(fn)
        self.plans: Dict[Any, Any] = {}  # traced (and compiled) launches, by what the trace depends on
        self._rewritten: Optional[Callable] = None

    def traced_fn(self) -> Callable:
        """The function traced: fn with its for/if/while rewritten into runtime regions where needed."""
        if self._rewritten is None:
            from .rewrite import rewrite_function

            self._rewritten = rewrite_function(self.fn) or self.fn
        return self._rewritten

    def set_name_prefix(self, prefix: str) -> None:
        """Name the generated CUDA function after prefix (CuTe DSL's set_name_prefix)."""
        name = _c_name(str(prefix))
        if name != self.name:  # programs call this on every run of their jit function: keep the plans then
            self.name = name
            self.plans.clear()

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """@cute.kernel on a method: binds self (a compile-time argument)."""
        if obj is None:
            return self
        bound = _BoundKernel(self, obj)
        return bound

    def __call__(self, *args: Any, **kwargs: Any) -> "KernelCall":
        if tracing():
            raise TraceError(f"kernel {self.name} was called inside a kernel; kernels cannot launch kernels")
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise LaunchError(f"{self.name}{self.signature}: {e}") from None
        return KernelCall(self, bound)

    def __repr__(self) -> str:
        return f"<cute.kernel {self.name}>"


class _BoundKernel:
    """A @cute.kernel method bound to its object."""

    def __init__(self, k: "Kernel", obj: Any):
        self.k, self.obj = k, obj

    def __call__(self, *args: Any, **kwargs: Any) -> "KernelCall":
        return self.k(self.obj, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.k, name)


class KernelCall:
    """A kernel with its arguments, ready to launch."""

    def __init__(self, kernel: Kernel, bound: inspect.BoundArguments):
        self.kernel = kernel
        self.bound = bound

    def launch(self, grid: Any = (1, 1, 1), block: Any = (1, 1, 1), smem: int = 0, stream: Any = None,
               interpret: Optional[bool] = None, cluster: Any = None, **kw: Any) -> None:
        k = self.kernel
        # CuTe DSL's options that change no result here: programmatic dependent launch (kernels still run in
        # stream order, so griddepcontrol waits are met) and cooperative launch (no grid-wide sync in cutelab)
        kw.pop("use_pdl", None)
        kw.pop("cooperative", None)
        if kw:
            raise LaunchError(f"{k.name}.launch: unknown options {sorted(kw)}")
        if smem is None:
            smem = 0
        if isinstance(smem, bool) or not isinstance(smem, (int, np.integer)) or smem < 0:
            raise LaunchError(f"{k.name}.launch: smem must be a number of bytes, got {smem!r}")
        if cluster is not None and tuple(cluster) not in ((1,), (1, 1), (1, 1, 1)):
            raise LaunchError(f"{k.name}.launch: thread block clusters ({cluster}) are not supported by cutelab yet")
        grid3 = _dims(grid, "grid", k.name)
        block3 = _dims(block, "block", k.name)
        plan, storages, scalars = _prepare(k, self.bound, grid3, block3, interpret)
        used = sum(sh.bytes for sh in plan.ir.shared)
        rec = getattr(_local, "recorder", None)
        if smem and used > smem:
            msg = f"{k.name}.launch: the kernel allocates {used} bytes of shared memory but the launch gives it smem={smem}"
            if rec is None:
                raise LaunchError(msg)
            # compiling (cute.compile / a @cute.jit function): CuTe DSL compiles this and reports it when the
            # kernel runs; cutelab warns now and launches the kernel with the shared memory it allocates
            import warnings

            warnings.warn(msg + f"; cutelab gives it the {used} bytes it allocates", stacklevel=3)
        if rec is not None:
            if stream is not None and getattr(rec, "keeps_streams", False):  # a jit function's launch: its stream
                from .host import StreamedPlan

                plan = StreamedPlan(plan, stream)
            rec.append((plan, storages, scalars))
            streams = getattr(_local, "streams", None)
            if streams is not None:  # the stream of record entry i (others record other things too)
                streams[len(rec) - 1] = stream
            return None
        plan.run(storages, stream, scalars)
        return None


def _prepare(k: Kernel, bound: inspect.BoundArguments, grid: Tuple[int, int, int],
             block: Tuple[int, int, int], interpret: Optional[bool]) -> Tuple[_Plan, List[_Storage], List[Any]]:
    from ..tensor import Tensor

    # storages: one kernel parameter per distinct engine; scalars: runtime values
    storages: List[_Storage] = []
    by_engine: Dict[int, int] = {}
    tensor_args: Dict[str, Tuple[Any, int]] = {}
    scalar_args: Dict[str, Tuple[Any, Any]] = {}
    for name, val in bound.arguments.items():
        dt = _scalar_type(k, name, val)
        if dt is not None:
            scalar_args[name] = (dt, val)
        elif _is_storage_tensor(val) or _has_tensors(val):
            for path, t in _tensor_leaves(val, name):
                eid = id(t.engine)
                if eid not in by_engine:
                    by_engine[eid] = len(storages)
                    storages.append(_Storage(t.engine, path))
                tensor_args[path] = (t, by_engine[eid])
        elif isinstance(val, np.ndarray) or type(val).__module__.startswith("torch"):
            raise LaunchError(
                f"{k.name}: argument {name} is a {type(val).__name__}; wrap arrays with "
                f"cutelab.runtime.from_dlpack(...) to pass them to a kernel"
            )
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
        from .driver import gpu_available

        mode = "gpu" if gpu_available() else "cpu"
    else:
        where = ", ".join(f"{st.name} on {st.device[0]}" for st in storages)
        raise LaunchError(f"{k.name}: tensors live on different devices ({where}); a kernel runs on one")

    scalar_vals = [_scalar_value(k, name, dt, v) for name, (dt, v) in scalar_args.items()]
    key = _plan_key(k, bound, grid, block, mode, storages, tensor_args, scalar_args)
    plan = k.plans.get(key) if key is not None else None
    if plan is not None and (plan.mode == "cpu" or plan.epoch == _driver_epoch()):
        _local.last = LaunchInfo(plan.ir, plan.mode, plan.source, 0.0, True, 0.0, None)
        return plan, storages, scalar_vals
    t0 = time.perf_counter()
    with Tracer(k.name, grid, block) as tr:
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
        traced = {path: Tensor(GmemEngine(params[idx], storages[idx].address, getattr(t.engine, "memspace", "")),
                               t.layout, t.offset, _checked=True)
                  for path, (t, idx) in tensor_args.items()}
        for name in list(args):
            if name in traced or _has_tensors(args[name]):
                args[name] = _replace_tensors(args[name], name, traced)
        for name, sp in scalar_params.items():
            args[name] = _scalar_in_kernel(sp)
        ret = k.traced_fn()(**args)
        if ret is not None:
            raise TraceError(f"kernel {k.name} returned {ret!r}; kernels return nothing (write results to tensors)")
    ir = tr.finish()
    t_checks = time.perf_counter()
    trace_s = t_checks - t0
    deferred = check_bounds(ir, mode, launch_scalars={
        f"arg.{sp.name}": int(v) for sp, v in zip(scalar_params.values(), scalar_vals)
        if getattr(sp.dtype, "kind", "") in ("int", "uint", "bool")})
    checks_s = time.perf_counter() - t_checks
    if mode == "cpu":
        _local.last = LaunchInfo(ir, "cpu", trace_seconds=trace_s)
        plan = _Plan(ir, storages, "cpu")
        if key is not None:
            k.plans[key] = plan
        return plan, storages, scalar_vals

    from .compile import compile_cuda
    from .cuda import CudaRenderer
    from .driver import device_arch, load_module, use_device

    dev = next((st.device[1] for st in storages if st.on_gpu), 0)
    use_device(dev)
    restrict = not _aliasing(ir, storages)
    t_render = time.perf_counter()
    renderer = CudaRenderer(ir, restrict=restrict)
    src = renderer.render()
    t1 = time.perf_counter()
    from .wgmma import target_arch

    res = compile_cuda(src, k.name, target_arch(ir, device_arch()))  # sm_90a where wgmma is used
    t_load = time.perf_counter()
    fn = load_module(res.cubin, res.key, k.name)
    t2 = time.perf_counter()
    _local.last = LaunchInfo(ir, "gpu", src, t2 - t1, res.cached, trace_s, res.cubin)
    _report_spills(k.name, res)
    _local.last.phases = {"trace": trace_s, "bounds checks": checks_s, "render": t1 - t_render,
                          "nvrtc" if not res.cached else "compile cache": t_load - t1, "module load": t2 - t_load}
    plan = _Plan(ir, storages, "gpu", fn, renderer.launch_grid)
    if getattr(ir, "guards", None):
        from . import driver as _drv
        from .guards import ErrorWord

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
    from . import driver

    return driver._EPOCH


# --------------------------------------------------------------------------- scalar arguments

def _scalar_type(k: "Kernel", name: str, val: Any) -> Any:
    """The element type of a runtime scalar argument (annotated cutlass.Int32 etc., or a value made
    by one, e.g. cutlass.Float32(2.0)); None for compile-time arguments."""
    from ..numeric import FloatValue, IntValue, Numeric

    ann = k.signature.parameters[name].annotation if name in k.signature.parameters else None
    if isinstance(ann, str):  # from __future__ import annotations
        try:
            ann = eval(ann, k.fn.__globals__)  # noqa: S307 - the user's own annotation, in its module
        except Exception:  # noqa: BLE001 - an annotation we cannot read is not a scalar type
            ann = None
    if isinstance(val, (IntValue, FloatValue)):
        return val.dtype
    if isinstance(ann, Numeric) and isinstance(val, (int, float, bool, np.integer, np.floating)):
        return ann
    return None


def _scalar_value(k: "Kernel", name: str, dt: Any, v: Any) -> Any:
    if dt.width > 64 or dt.name == "i4":
        raise LaunchError(f"{k.name}: scalar argument {name} of type {dt} cannot be passed to a kernel "
                          f"(kernel scalars are 8 to 64 bits wide)")
    if dt.is_integer and isinstance(v, float) and not float(v).is_integer():
        raise LaunchError(f"{k.name}: argument {name} is declared {dt} but got the float {v!r}")
    return dt(v).value


def _scalar_in_kernel(sp: Any) -> Any:
    """What the kernel function sees for a scalar argument: a symbolic integer (usable in index
    math and layouts) or a one-element tensor value for floats."""
    from .trace import ArgVar, ParamRef, TraceValue

    if sp.dtype.is_float:
        return TraceValue([ParamRef(sp)], (), sp.dtype)
    return ArgVar(sp)


def _static_key(v: Any) -> Any:
    from ..numeric import Numeric

    if isinstance(v, (int, float, str, bool, type(None), Layout, Numeric)):
        return (type(v).__name__, v)
    if isinstance(v, (tuple, list)):
        return (type(v).__name__,) + tuple(_static_key(x) for x in v)
    if callable(v):
        return ("fn", id(v))
    hash(v)  # raises TypeError for unhashable values: no caching then
    return (type(v).__name__, v)


def _plan_key(k: "Kernel", bound: Any, grid: Any, block: Any, mode: str, storages: List[_Storage],
              tensor_args: Dict[str, Any], scalar_args: Dict[str, Any]) -> Any:
    """What a trace depends on: launch shape, back end, tensors' types/layouts/alignment/sizes,
    scalars' types and every other argument's value; None when some argument cannot be a key.
    Dynamic values (cutelab.dynamic.DynInt) are keyed by value and by which leaves are dynamic
    (with their types and divisibilities): a trace prints '?' for those, and loops over them."""
    from ..dynamic import dynamic_key

    if os.environ.get("CUTELAB_NO_TRACE_CACHE"):
        return None
    parts: List[Any] = [grid, block, mode]
    try:
        for name, val in bound.arguments.items():
            if name in scalar_args:
                parts.append((name, "scalar", scalar_args[name][0].name))
            elif _is_storage_tensor(val) or _has_tensors(val):
                for path, _ in _tensor_leaves(val, name):
                    t, idx = tensor_args[path]
                    st = storages[idx]
                    parts.append((path, "tensor", idx, st.dtype.name, t.layout, _static_key(t.offset), st.align,
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
    """True when two storages overlap in memory and one of them is written by the kernel."""
    spans = []
    for p, st in zip(ir.params, storages):
        spans.append((st.address, st.address + st.length * st.dtype.bytes, p.written))
    for i in range(len(spans)):
        for j in range(i + 1, len(spans)):
            a, b = spans[i], spans[j]
            if a[0] < b[1] and b[0] < a[1] and (a[2] or b[2]):
                return True
    return False


def kernel(fn: Optional[Callable] = None, *, interpret: Optional[bool] = None) -> Any:
    """Decorate a kernel function (``@cute.kernel``); ``interpret=True`` always runs it on the CPU."""
    if fn is None:
        return lambda f: Kernel(f, interpret)
    return Kernel(fn, interpret)


# --------------------------------------------------------------------------- jit and compile

def _is_dataclass_value(v: Any) -> bool:
    import dataclasses

    return dataclasses.is_dataclass(v) and not isinstance(v, type)


def _has_tensors(v: Any) -> bool:
    if _is_dataclass_value(v):  # e.g. a frozen dataclass of tensors passed to a kernel (CuTe DSL's dataclass_immutable)
        import dataclasses

        return any(_is_storage_tensor(getattr(v, f.name)) or _has_tensors(getattr(v, f.name))
                   for f in dataclasses.fields(v))
    return isinstance(v, (list, tuple)) and any(_is_storage_tensor(x) or _has_tensors(x) for x in v)


def _tensor_leaves(v: Any, path: str) -> List[Tuple[str, Any]]:
    """(path, tensor) for the tensors in v (a tensor, or lists/tuples/dataclasses of them): "inputs_1",
    "params_src" etc."""
    if _is_storage_tensor(v):
        return [(path, v)]
    out: List[Tuple[str, Any]] = []
    if isinstance(v, (list, tuple)):
        for i, x in enumerate(v):
            out += _tensor_leaves(x, f"{path}_{i}")
    elif _is_dataclass_value(v):
        import dataclasses

        for f in dataclasses.fields(v):
            out += _tensor_leaves(getattr(v, f.name), f"{path}_{f.name}")
    return out


def _replace_tensors(v: Any, path: str, new: Dict[str, Any]) -> Any:
    if path in new:
        return new[path]
    if isinstance(v, (list, tuple)):
        items = [_replace_tensors(x, f"{path}_{i}", new) for i, x in enumerate(v)]
        return type(v)(items) if isinstance(v, tuple) and type(v) is tuple else items if isinstance(v, list) else v
    if _is_dataclass_value(v) and _has_tensors(v):
        import dataclasses

        return dataclasses.replace(v, **{f.name: _replace_tensors(getattr(v, f.name), f"{path}_{f.name}", new)
                                         for f in dataclasses.fields(v) if f.init})
    return v


def _as_tensor_arg(x: Any) -> Any:
    """Arrays passed to a jit function (torch tensors, numpy arrays) become Tensors, as CuTe DSL
    converts them; their alignment is what their address shows (at most 16 bytes)."""
    if _is_storage_tensor(x):
        return x
    if (isinstance(x, np.ndarray) or (type(x).__module__.startswith("torch") and hasattr(x, "data_ptr"))
            or hasattr(x, "__cuda_array_interface__")):
        from ..runtime import from_dlpack

        t = from_dlpack(x)
        addr = int(getattr(t.engine, "address", 0) or 0)
        b = t.element_type.bytes
        align = 16
        while align > b and addr % align:
            align //= 2
        return from_dlpack(x, assumed_align=max(align, b)) if align > b else t
    return x


def _as_tensor_args(x: Any) -> Any:
    if isinstance(x, list):
        return [_as_tensor_args(v) for v in x]
    return _as_tensor_arg(x)


class JitFunction:
    """A @cute.jit function: host code that runs in Python (layout algebra, launches). Arrays
    among its arguments become Tensors (from_dlpack)."""

    def __init__(self, fn: Callable):
        self.fn = fn
        self.name_prefix: Optional[str] = None
        self.calls: List[CompiledFunction] = []  # remembered calls, the latest first (see __call__)
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the function. A call that launched only GPU kernels on its arguments' storages,
        printed nothing and returned None is remembered (up to 8 per function): a later call
        with arguments of the same signature (tensors: kind, element type, layout, storage size,
        device, alignment; other arguments: equal values) launches the same kernels again
        without running the Python body. CUTELAB_JIT_CACHE=0 runs the body at every call (as
        CuTe DSL 4.8.1 does; the difference shows only in side effects of the body other than
        printing; the variable is read when a call would be remembered)."""
        cache = not kwargs and getattr(_local, "recorder", None) is None
        if cache:
            for i, cf in enumerate(self.calls):
                if cf._replay(args):
                    if i:
                        self.calls.insert(0, self.calls.pop(i))
                    return None
            cache = os.environ.get("CUTELAB_JIT_CACHE", "1") != "0"
        from .host import run_jit

        raw = args
        args = tuple(_as_tensor_args(a) for a in args)
        kwargs = {k: _as_tensor_args(v) for k, v in kwargs.items()}
        if not cache:
            return run_jit(self.fn, args, kwargs)  # trace, then run the launches and host prints in order
        record: Dict[str, Any] = {}
        out, err = _CountingStream(sys.stdout), _CountingStream(sys.stderr)
        sys.stdout, sys.stderr = out, err
        try:
            ret = run_jit(self.fn, args, {}, record)
        finally:
            if sys.stdout is out:
                sys.stdout = out.inner
            if sys.stderr is err:
                sys.stderr = err.inner
        seen = record.get("recorded")
        if ret is None and not out.writes and not err.writes and seen:
            cf = _compiled_from(self.fn, raw, args, seen, {}, set(), remember=True)
            if cf is not None:
                cf.nargs = len(args)
                cf._build()
                cf.forget_tensors()
                self.calls.insert(0, cf)
                del self.calls[8:]
        return ret

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)

    def set_name_prefix(self, prefix: str) -> None:
        """CuTe DSL's name prefix of the generated function (kept for reference)."""
        self.name_prefix = str(prefix)

    def __repr__(self) -> str:
        return f"<cute.jit {self.fn.__name__}>"


def jit(fn: Optional[Callable] = None, **options: Any) -> Any:
    """Decorate a host function (``@cute.jit``). Its body runs in Python at each call, as CuTe
    DSL traces it: print() shows static values (``?`` for dynamic ones), kernel launches trace and
    compile (cached); the launches and host-side cute.printf/print_tensor then run, in order,
    after the body has returned (kernel/host.py)."""
    if fn is None:
        return lambda f: JitFunction(f)
    return JitFunction(fn)


class _CountingStream:
    """sys.stdout (or stderr) as it was, counting writes: did a @cute.jit call print?"""

    def __init__(self, inner: Any):
        self.inner = inner
        self.writes = 0

    def write(self, s: str) -> int:
        self.writes += 1
        return self.inner.write(s)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class CompiledFunction:
    """The launches of a jit function, traced and compiled once (``cute.compile``): call it
    with tensors of the same element types, layouts and alignment to run them again without
    tracing."""

    def __init__(self, name: str, plans: List[Tuple[_Plan, List[Tuple[Optional[int], _Storage]]]],
                 arg_tensors: Dict[int, Any], arg_objects: Optional[Dict[Any, Any]] = None,
                 streams: Optional[List[Any]] = None):
        self.name = name
        self.plans = plans
        self.arg_tensors = arg_tensors  # position -> the Tensor given at compile time
        self.arg_static: Dict[int, Any] = {}  # position -> other arguments given at compile time
        self.arg_objects = arg_objects or {}  # position -> what the caller gave (a Tensor, torch tensor, array)
        self.streams = streams or [None] * len(plans)  # per launch: an argument position ("arg", i), a stream or None
        self.nargs = -1  # the number of arguments a @cute.jit call replaying this must give
        self._forgotten = False
        self._fast: Any = None
        self.dyn_args: Dict[int, Any] = {}  # position -> dynamic values (DynInt) given at compile time
        self.variants: Any = None  # kernel/host.py respecialize: the traces for other dynamic values

    def __call__(self, *args: Any, stream: Any = None) -> None:
        fast = self._fast or self._build()
        direct = fast.direct
        if self.variants is not None:  # dynamic values (Int32 arguments, dynamic layouts): a trace per value
            # every tensor passing the generated checks has its compiled layout: this trace's values
            tried = direct is not None and not self.dyn_args
            if tried and direct(args, stream):
                return None
            other = _respecialize(self, args)
            if other is not self:
                return other(*args, stream=stream)
            if not tried and direct is not None and direct(args, stream):
                return None
        elif direct is not None and direct(args, stream):
            return None
        if self._forgotten:
            if not self._replay(args, stream):
                raise LaunchError(f"{self.name}: the arguments do not match this remembered call")
            return None
        if fast.cpu:
            return self._run_general(args, stream)
        # the tensors: a signature check per argument, then only the address is read
        addrs = None
        if fast.flat:  # every tensor is an argument itself (not in a list): one pass
            try:
                addrs = [get(args[pos]) for pos, get in fast.getters]
            except IndexError:
                addrs = None
            if addrs is not None and None in addrs:
                addrs = None
        if addrs is None:
            addrs = []
            for pos, get in fast.getters:
                try:
                    x = args[pos] if type(pos) is int else _at_path(args, pos, self.name)
                except IndexError:
                    x = None
                a = get(x)
                if a is None:  # another kind of object or signature: the full check (and its error)
                    a = self._check(args, pos, x)
                addrs.append(a)
        for pos, v0 in fast.static:
            if pos < len(args):
                v = args[pos]
                if v is not v0 and not _same_static(v, v0):
                    self._static_error(pos, v, v0)
        if tuple(addrs) != fast.last:
            self._new_addresses(addrs)
        self._launch(fast, args, addrs, stream)

    def _launch(self, fast: Any, args: Any, addrs: List[int], stream: Any) -> None:
        for plan, launcher, slots, tm, spos, tdev, fixed in fast.launches:
            if launcher is None:  # a recorded host action (not a kernel): it runs itself, in order
                plan.run((), stream, ())
                continue
            ew = plan.error_word
            if ew is not None and ew.word[0]:  # a guarded access of an earlier launch left its tensor
                ew.check(f"at the next launch of {plan.ir.name}")
            vals = launcher.params.values
            for i, k in slots:
                vals[i] = addrs[k]
            if tm:  # TMA descriptors hold the tensors' addresses: encode them again
                tm.fill(launcher.params, [int(vals[j]) for j in range(len(plan.ir.params))], len(plan.ir.params))
            if stream is not None:
                h = _stream_handle(stream)
            elif spos is not None:
                h = _stream_handle(args[spos]) if spos < len(args) else 0
            elif tdev is not None:
                h = _torch_stream(tdev)
            else:
                h = fixed
            launcher(h)

    def _replay(self, args: Tuple[Any, ...], stream: Any = None) -> bool:
        """For a @cute.jit call: launch again if args match this compiled signature exactly (same
        number of arguments, every tensor passing its fast check, every other argument equal);
        False, launching nothing, otherwise."""
        fast = self._fast or self._build()
        if fast.cpu or len(args) != fast.nargs:
            return False
        if fast.direct is not None:
            return fast.direct(args, stream, True)
        try:
            if fast.flat:  # every tensor is an argument itself: one pass
                addrs = [get(args[pos]) for pos, get in fast.getters]
                if None in addrs:
                    return False
            else:
                addrs = []
                for pos, get in fast.getters:
                    a = get(args[pos] if type(pos) is int else _at_path(args, pos, self.name))
                    if a is None:
                        return False
                    addrs.append(a)
            for pos, v0 in fast.static:
                v = args[pos]
                if v is not v0 and not _same_static(v, v0):
                    return False
            if tuple(addrs) != fast.last:
                self._new_addresses(addrs)  # storages now overlapping, or no longer shared: trace again
        except LaunchError:
            return False
        self._launch(fast, args, addrs, stream)
        return True

    def _build(self) -> Any:
        """What each call needs, prepared once: per tensor argument a getter that checks its
        signature and returns its address; per launch its prepared parameter buffer."""
        class Fast:
            pass

        fast = Fast()
        fast.getters = [(pos, _getter(t0, self.arg_objects.get(pos), int(getattr(t0.engine, "align", 1) or 1)))
                        for pos, t0 in self.arg_tensors.items()]
        index = {pos: k for k, (pos, _) in enumerate(fast.getters)}
        fast.flat = all(type(pos) is int for pos, _ in fast.getters)
        fast.static = list(self.arg_static.items())
        fast.nargs = self.nargs
        fast.launches = []
        fast.cpu = []
        groups: Dict[int, List[int]] = {}  # storages shared by several arguments at compile time
        for pos, t0 in self.arg_tensors.items():
            groups.setdefault(id(t0.engine), []).append(index[pos])
        fast.groups = [g for g in groups.values() if len(g) > 1]
        for (plan, sources, scalars), strm in zip(self.plans, self.streams):
            if not isinstance(plan, _Plan):  # something else recorded in order (e.g. a host-side print)
                fast.launches.append((plan, None, [], None, None, None, 0))
                continue
            plan.check_scalars(scalars)
            if plan.mode != "gpu":
                fast.cpu.append(plan)
                continue
            from .driver import Launcher

            # its own parameter buffer: the plan is shared with other compiled functions and with
            # KernelCall launches, which may hold other scalar values and fixed storages
            launcher = Launcher(plan.fn, plan.grid, plan.ir.block, plan.smem,
                                len(plan.ir.params) + len(plan.tensor_maps or ()))  # TMA maps follow
            slots = []
            for i, (pos, st) in enumerate(sources):
                if pos is None:
                    launcher.params.values[i] = st.address
                else:
                    slots.append((i, index[pos]))
            for i, bits in plan.scalar_slots(scalars):
                launcher.params.values[i] = bits
            spos = strm[1] if isinstance(strm, tuple) and strm[0] == "arg" else None
            fixed = _stream_handle(strm) if strm is not None and spos is None else 0
            tdev = _torch_device([st for _, st in sources]) if strm is None else None
            tm = plan.tensor_maps if plan.tensor_maps is not None and len(plan.tensor_maps) else None
            fast.launches.append((plan, launcher, slots, tm, spos, tdev, fixed))
        fast.last = None  # the tuple of addresses that last passed _new_addresses
        fast.passed = {}  # address tuples that passed _new_addresses
        fast.direct = None
        self._fast = fast
        if not fast.cpu and os.environ.get("CUTELAB_DIRECT_CALL", "1") != "0":
            fast.direct = _direct_call(self, fast)
        return fast

    def forget_tensors(self) -> None:
        """Drop the tensors seen at compile time (a remembered @cute.jit call must not keep its
        first arguments' memory alive); only the prepared fast checks remain, so a call that
        fails them is not launched here (_replay answers False)."""
        self.arg_tensors = {pos: None for pos in self.arg_tensors}
        self.arg_objects = {}
        self.plans = [(plan, [(pos, st.description()) for pos, st in sources], scalars)
                      for plan, sources, scalars in self.plans]
        self._forgotten = True

    def _check(self, args: Any, pos: Any, x: Any) -> int:
        """The full check of argument pos against the compiled signature (LaunchError if it does
        not match); its address when it does."""
        t0 = self.arg_tensors[pos]
        t = _at_path(args, pos, self.name)
        if not _is_storage_tensor(t):
            from ..runtime import from_dlpack

            t = from_dlpack(t, assumed_align=t0.engine.align)
        _same(self.name, pos, t0, t)
        # it matches: from now on objects like this one take a fast check too
        fast = self._fast
        k = next(k for k, (p, _) in enumerate(fast.getters) if p == pos)
        p, get = fast.getters[k]
        if len(getattr(get, "alternatives", ())) < 4:
            new = _getter(t, x, int(getattr(t0.engine, "align", 1) or 1))  # x's description, t0's alignment
            if new is not _never:
                fast.getters[k] = (p, _either(get, new))
                if fast.direct is not None:  # the generated call checks the new kind of object too
                    fast.direct = _direct_call(self, fast)
        return int(t.engine.address)

    def _run_general(self, args: Any, stream: Any) -> None:
        """Launches with interpreted kernels: storages with their host memory, as KernelCall does."""
        new: Dict[Any, _Storage] = {}
        for pos, t0 in self.arg_tensors.items():
            t = _at_path(args, pos, self.name)
            if not _is_storage_tensor(t):
                from ..runtime import from_dlpack

                t = from_dlpack(t, assumed_align=t0.engine.align)
            _same(self.name, pos, t0, t)
            new[pos] = _Storage(t.engine, f"argument {pos}")
        for pos, v0 in self.arg_static.items():
            if pos < len(args) and not _same_static(args[pos], v0):
                self._static_error(pos, args[pos], v0)
        for plan, sources, scalars in self.plans:
            sts = [new[pos] if pos is not None else st for pos, st in sources]
            plan.run(sts, stream, scalars)

    def _new_addresses(self, addrs: List[int]) -> None:
        """Checks that depend on where the storages are, not on their description: arguments that
        were one storage at compile time still are, and no written storage overlaps another in a
        kernel compiled with __restrict__ pointers. They depend on the addresses alone: the last
        addresses that passed are remembered (calls cycling through a few workspaces pay a
        dictionary lookup)."""
        fast = self._fast
        key = tuple(addrs)
        if key in fast.passed:
            fast.last = key
            return
        for g in fast.groups:
            if any(addrs[k] != addrs[g[0]] for k in g):
                names = [str(fast.getters[k][0]) for k in g]
                raise LaunchError(
                    f"{self.name}: arguments {', '.join(names)} were one storage when the function was compiled "
                    f"(one kernel parameter), but now differ; call cute.compile again with these tensors"
                )
        for plan, launcher, slots, _, _, _, _ in fast.launches:
            if launcher is not None and plan.restrict and len(plan.storages) > 1:
                vals = [launcher.params.values[i] for i in range(len(plan.storages))]
                for i, k in slots:
                    vals[i] = addrs[k]
                _check_no_alias(plan, vals)
        if len(fast.passed) >= 256:
            fast.passed.clear()
        fast.passed[key] = True
        fast.last = key

    def _static_error(self, pos: int, v: Any, v0: Any) -> None:
        raise LaunchError(
            f"{self.name}: argument {pos} is {v!r}, but the function was compiled with {v0!r}; "
            f"non-tensor arguments are compile-time constants (pass cutlass.Int32(...) etc. for a "
            f"runtime scalar, or call cute.compile again)"
        )


def _direct_call(cf: "CompiledFunction", fast: Any) -> Optional[Callable[[Any, Any], bool]]:
    """The compiled call as one generated function of (args, stream): the checks of each tensor
    argument written out (a torch tensor's type, element type, shape, strides or contiguity,
    device, address alignment; other objects through their getter), the static arguments, the
    address checks, then each launch's parameter writes and driver call. It returns False, having
    done nothing, when any check fails: CompiledFunction.__call__ then takes the general path,
    which names what differs (or finds another kind of object fine, and remembers it). With
    ``replay`` (a remembered @cute.jit call, CompiledFunction._replay) addresses that fail their
    checks give False as well: the jit function traces again. None when
    the call has something the generated code does not cover (tensors inside lists, host-side
    prints, TMA descriptors): the general path serves every call then."""
    if not fast.flat or any(lau is None or tm is not None for _, lau, _, tm, *_ in fast.launches):
        return None
    env: Dict[str, Any] = {"_same_static": _same_static, "_handle": _stream_handle, "_mod": sys.modules[__name__],
                           "LaunchError": LaunchError,
                           "_fast": fast, "_new_addresses": cf._new_addresses}
    need = 1 + max([pos for pos, _ in fast.getters] + [-1])
    lines = ["def direct(args, stream, replay=False):", "    n = len(args)"]
    if fast.nargs >= 0:
        lines.append(f"    if n != {fast.nargs}:")
        lines.append("        return False")
    elif need:
        lines.append(f"    if n < {need}:")
        lines.append("        return False")
    for k, (pos, get) in enumerate(fast.getters):
        spec = getattr(get, "torch", None)
        tspec = getattr(get, "tensor", None)
        if tspec is not None and not hasattr(get, "alternatives"):
            # a cutelab Tensor: its engine passed before and its layout (an object seen equal) and
            # offset are the compiled ones; else the getter's full check (which remembers the engine)
            tcls, engines, lay, seen, off = tspec
            env.update({f"T{k}": tcls, f"E{k}": engines, f"LY{k}": lay, f"SN{k}": seen, f"O{k}": off, f"G{k}": get})
            lines += [f"    x = args[{pos}]",
                      f"    m = E{k}.get(id(x.engine)) if type(x) is T{k} else None",
                      f"    if m is not None and m[0] is x.engine and x.offset == O{k} and "
                      f"(x.layout is LY{k} or SN{k}.get(id(x.layout)) is x.layout):",
                      f"        a{k} = m[1]",
                      "    else:",
                      f"        a{k} = G{k}(x)",
                      f"        if a{k} is None:",
                      "            return False"]
        elif spec is not None and not hasattr(get, "alternatives"):
            ttype, tdt, shape, strides, dev, align = spec
            env.update({f"T{k}": ttype, f"D{k}": tdt, f"S{k}": shape, f"ST{k}": strides, f"V{k}": dev})
            lay = "x.is_contiguous()" if strides is None else f"x.stride() == ST{k}"
            lines += [f"    x = args[{pos}]",
                      f"    if type(x) is not T{k} or x.dtype is not D{k} or x.shape != S{k} or not {lay} "
                      f"or x.device != V{k}:",
                      "        return False",
                      f"    a{k} = x.data_ptr()",
                      f"    if a{k} % {align}:",
                      "        return False"]
        else:
            env[f"G{k}"] = get
            lines += [f"    a{k} = G{k}(args[{pos}])", f"    if a{k} is None:", "        return False"]
    for j, (pos, v0) in enumerate(fast.static):
        env[f"C{j}"] = v0
        lines += [f"    if n > {pos}:", f"        v = args[{pos}]",
                  f"        if v is not C{j} and not _same_static(v, C{j}):", "            return False"]
    addrs = "".join(f"a{k}, " for k in range(len(fast.getters)))
    env["PASSED"] = fast.passed
    lines += [f"    addrs = ({addrs})", "    if addrs != _fast.last:",
              "        if addrs in PASSED:",  # a workspace seen before: as _new_addresses would
              "            _fast.last = addrs",
              "        elif not replay:",
              "            _new_addresses(addrs)",  # raises the LaunchError that names the problem
              "        else:",  # a remembered @cute.jit call: storages now overlapping, or no longer shared
              "            try:", "                _new_addresses(addrs)", "            except LaunchError:",
              "                return False"]
    for j, (plan, launcher, slots, _, spos, tdev, fixed) in enumerate(fast.launches):
        env.update({f"P{j}": plan, f"L{j}": launcher, f"W{j}": launcher.params.values,
                    f"M{j}": f"at the next launch of {plan.ir.name}"})
        lines += [f"    ew = P{j}.error_word", "    if ew is not None and ew.word[0]:", f"        ew.check(M{j})"]
        lines += [f"    W{j}[{i}] = a{k}" for i, k in slots]
        if spos is not None:
            other = f"_handle(args[{spos}]) if {spos} < n else 0"
        elif tdev is not None:
            other = f"_mod._torch_stream({int(tdev)})"  # looked up at each call: fakegpu replaces it
        else:
            other = str(int(fixed))
        lines += ["    if stream is not None:", "        h = _handle(stream)", "    else:", f"        h = {other}"]
        if getattr(launcher, "via", None) == "cuda-python":  # the driver call written out (Launcher.__call__)
            from .driver import _ok as _driver_ok

            env.update({f"DC{j}": launcher._call, f"OK{j}": launcher._ok0, "_driver_ok": _driver_ok})
            lines += [f"    if h != L{j}._h:", f"        L{j}.bind(h)", f"    r = DC{j}(*L{j}._args)[0]",
                      f"    if r is not OK{j} and int(r) != 0:", "        _driver_ok((r,), 'cuLaunchKernel')"]
        else:
            lines.append(f"    L{j}(h)")
    lines.append("    return True")
    import builtins  # this module's `compile` is cute.compile

    exec(builtins.compile("\n".join(lines), f"<cutelab compiled call {cf.name}>", "exec"), env)  # noqa: S102
    fn = env["direct"]
    fn.source = "\n".join(lines)  # type: ignore[attr-defined]
    return fn


def _never(x: Any) -> None:
    return None


def _either(*gets: Callable[[Any], Optional[int]]) -> Callable[[Any], Optional[int]]:
    """A getter trying several (one per kind of object seen at this argument)."""
    flat: List[Any] = []
    for g in gets:
        flat += list(getattr(g, "alternatives", (g,)))

    def get(x: Any) -> Optional[int]:
        for g in flat:
            a = g(x)
            if a is not None:
                return a
        return None

    get.alternatives = tuple(flat)  # type: ignore[attr-defined]
    return get


def _cai_strides(cai: Dict[str, Any]) -> Any:
    st = cai.get("strides")
    return tuple(st) if st is not None else None


def _getter(t0: Any, obj: Any, align: int) -> Callable[[Any], Optional[int]]:
    """A function of an argument: its storage address when it matches t0 (a Tensor that passed
    the full check; obj: what the caller gave for it) exactly: same kind of object, element
    type, layout, offset, storage size (at least), device, and an address aligned to align
    bytes; else None (the caller then runs the full check, which names what differs)."""
    e0 = t0.engine
    if obj is not None and type(obj).__module__.startswith("torch") and hasattr(obj, "data_ptr"):
        ttype, tdt, shape, strides, dev = type(obj), obj.dtype, tuple(obj.shape), tuple(obj.stride()), obj.device
        if obj.is_contiguous():
            # same shape and contiguous: the same strides, but for extent-1 modes, whose stride
            # moves no coordinate (an offset of 0 either way); is_contiguous() is the cheaper call
            def get_torch(x: Any) -> Optional[int]:
                if (type(x) is ttype and x.dtype is tdt and x.shape == shape and x.is_contiguous()
                        and x.device == dev):
                    a = x.data_ptr()
                    if not a % align:
                        return a
                return None
        else:
            def get_torch(x: Any) -> Optional[int]:
                if (type(x) is ttype and x.dtype is tdt and x.shape == shape and x.stride() == strides
                        and x.device == dev):
                    a = x.data_ptr()
                    if not a % align:
                        return a
                return None

        # what it compares, for CompiledFunction's generated call (strides None: is_contiguous())
        get_torch.torch = (ttype, tdt, shape, None if obj.is_contiguous() else strides, dev, align)  # type: ignore
        return get_torch
    if obj is not None and hasattr(obj, "__cuda_array_interface__") and not _is_storage_tensor(obj):
        cai = obj.__cuda_array_interface__
        has_dev = hasattr(obj, "__dlpack_device__")
        otype = type(obj)
        desc = (cai["typestr"], tuple(cai["shape"]), _cai_strides(cai), tuple(obj.__dlpack_device__()) if has_dev else None)

        def get_cai(x: Any) -> Optional[int]:
            if type(x) is otype:
                c = x.__cuda_array_interface__
                if (c["typestr"], tuple(c["shape"]), _cai_strides(c),
                        tuple(x.__dlpack_device__()) if has_dev else None) == desc:
                    a = int(c["data"][0])
                    if not a % align:
                        return a
            return None

        return get_cai
    etype, dt, lay, off, n, dev0 = type(e0), e0.dtype, t0.layout, t0.offset, len(e0), getattr(e0, "device", None)
    if type(off) is not int:
        return _never

    tcls = type(t0)
    same = _SameLayout(lay)
    # engines that passed (id -> (engine, address)): a device engine's storage, type and address
    # are fixed when it is made (retyping a tensor gives it a new engine), so a workspace's
    # tensors pay the engine checks once
    from ..runtime import DeviceEngine

    engines: Dict[int, Tuple[Any, int]] = {}
    memo = etype is DeviceEngine

    def get_tensor(x: Any) -> Optional[int]:
        if type(x) is tcls:
            e = x.engine
            L = x.layout
            if (type(e) is etype and e.dtype is dt and (L is lay or same(L)) and x.offset == off
                    and len(e) >= n and getattr(e, "device", None) == dev0):
                a = e.address
                if not a % align:
                    if memo:
                        if len(engines) >= 64:
                            engines.clear()
                        engines[id(e)] = (e, a)
                    return a
        return None

    if memo:  # what CompiledFunction's generated call checks itself before calling get_tensor
        get_tensor.tensor = (tcls, engines, lay, same.seen, off)  # type: ignore[attr-defined]
    return get_tensor


class _SameLayout:
    """``layout == ref``, remembered for the layout objects that were equal (layouts are
    immutable): a tensor whose layout holds dynamic values (DynInt, compared one by one)
    pays the comparison once per layout object, then an identity test."""

    __slots__ = ("ref", "seen")

    def __init__(self, ref: Any):
        self.ref = ref
        self.seen: Dict[int, Any] = {}  # id -> the layout itself (kept, so that the id is not reused)

    def __call__(self, layout: Any) -> bool:
        if layout is self.ref or self.seen.get(id(layout)) is layout:
            return True
        if not (layout == self.ref):
            return False
        if len(self.seen) >= 64:
            self.seen.clear()
        self.seen[id(layout)] = layout
        return True


def _at_path(args: Any, pos: Any, name: str) -> Any:
    """The argument at pos: an int, or a tuple of indices into nested lists."""
    path = pos if isinstance(pos, tuple) else (pos,)
    v = args
    for i in path:
        if not isinstance(v, (list, tuple)) or i >= len(v):
            raise LaunchError(f"{name}: expected a tensor at argument {pos}, the compiled function's signature")
        v = v[i]
    return v


def _leaves_by_index(args: Any, prefix: tuple = ()) -> Dict[Any, Any]:
    out: Dict[Any, Any] = {}
    for i, a in enumerate(args):
        p = prefix + (i,)
        if _is_storage_tensor(a):
            out[p if prefix else i] = a
        elif isinstance(a, list) and _has_tensors(a):
            out.update(_leaves_by_index(a, p))
    return out


def _same(name: str, pos: Any, t0: Any, t: Any) -> None:
    e0, e = t0.engine, t.engine
    problems = []
    if e.dtype.name != e0.dtype.name:
        problems.append(f"element type {e.dtype} instead of {e0.dtype}")
    if t.layout != t0.layout:
        from ..dynamic import value_of

        problems.append(f"layout {value_of(t.layout)} instead of {value_of(t0.layout)}")
    if t.offset != t0.offset:
        problems.append(f"offset {t.offset} instead of {t0.offset}")
    if len(e) < len(e0):
        problems.append(f"{len(e)} elements of storage instead of {len(e0)}")
    align = int(getattr(e0, "align", 1) or 1)
    if int(e.address) % align:
        problems.append(f"address 0x{int(e.address):x} not aligned to {align} bytes")
    d, d0 = _device_of(e, getattr(e, "data", None)), _device_of(e0, getattr(e0, "data", None))
    if d != d0:
        problems.append(f"device {d[0]}:{d[1]} instead of {d0[0]}:{d0[1]}")
    if problems:
        raise LaunchError(f"{name}: argument {pos} does not match the compiled kernel: " + "; ".join(problems))


def _compile(fn: Any, *args: Any, **kwargs: Any) -> CompiledFunction:
    """Trace and compile the kernel launches of a @cute.jit function once (cute.compile).

    The returned function takes the same tensor arguments (same element types, layouts and
    alignment; other data) and launches the compiled kernels without tracing again.
    """
    target = fn.fn if isinstance(fn, JitFunction) else fn
    kwargs.pop("options", None)  # CuTe DSL's compiler options (e.g. "--generate-line-info"): nothing to do here
    from ..fake import compile_fakes, has_fakes

    if has_fakes(args):  # ahead of time, for tensors described only (cutelab.fake)
        return compile_fakes(target, args, kwargs)
    raw_args = args
    args = tuple(_as_tensor_args(a) for a in args)
    from .host import dynamic_args

    args, kwargs = dynamic_args(target, args, kwargs)  # Int32 arguments are runtime values (DynInt)
    if getattr(_local, "recorder", None) is not None:
        raise LaunchError("cute.compile cannot be nested")
    _local.recorder = []
    _local.streams = {}
    from .rewrite import rewrite_host_function

    try:
        rewrite_host_function(target)(*args, **kwargs)
        recorded = _local.recorder
        streams = _local.streams
    finally:
        _local.recorder = None
        _local.streams = None
    # Constexpr parameters are part of the compiled function: its callers leave them out
    const = _constexpr_positions(target, len(args))
    cf = _compiled_from(target, raw_args, args, recorded, streams, const, remember=False)
    assert cf is not None
    from ..dynamic import is_dynamic

    if cf.dyn_args or any(isinstance(p, int) and is_dynamic(t.layout) for p, t in cf.arg_tensors.items()):
        kept = [i for i in range(len(args)) if i not in const]  # the compiled function's positions
        cf.variants = (target, args, kwargs, {j: i for j, i in enumerate(kept)})
    return cf


def _compiled_from(target: Any, raw_args: Tuple[Any, ...], args: Tuple[Any, ...], recorded: List[Any],
                   streams: Dict[int, Any], const: set, remember: bool) -> Optional[CompiledFunction]:
    """The CompiledFunction replaying the recorded launches of target(*args); for a @cute.jit call
    being remembered, None unless every launch is on the GPU and every storage it uses comes
    from the arguments."""
    arg_tensors = _leaves_by_index(args)
    engine_pos: Dict[int, Any] = {}
    for i, a in arg_tensors.items():
        engine_pos.setdefault(id(a.engine), i)
    plans = []
    streams = dict(streams)
    for n, (plan, storages, scalars) in enumerate(recorded):
        if isinstance(getattr(plan, "plan", None), _Plan):  # host.StreamedPlan: a launch and its stream=
            plan, streams[n] = plan.plan, plan.stream
        sources = [(engine_pos.get(id(st.engine)), st) for st in storages]
        if remember and (not isinstance(plan, _Plan) or plan.mode != "gpu" or any(p is None for p, _ in sources)):
            return None
        plans.append((plan, sources, scalars))

    def shift(pos: Any) -> Any:
        i = pos[0] if isinstance(pos, tuple) else pos
        j = i - sum(1 for c in const if c < i)
        return (j,) + pos[1:] if isinstance(pos, tuple) else j

    new_plans = [(plan, [(shift(p) if p is not None else None, st) for p, st in sources], scalars)
                 for plan, sources, scalars in plans]
    # a launch's stream: the argument it came from (by identity), else the stream object itself
    stream_src: List[Any] = []
    for n in range(len(recorded)):
        s = streams.get(n)
        i = next((i for i, a in enumerate(args) if s is not None and a is s), None)
        stream_src.append(("arg", shift(i)) if i is not None and i not in const else s)
    objects = {}
    for p in arg_tensors:
        try:
            objects[shift(p)] = _at_path(raw_args, p, "cute.compile")
        except LaunchError:
            pass
    cf = CompiledFunction(getattr(target, "__name__", "compiled"), new_plans,
                          {shift(p): t for p, t in arg_tensors.items()}, objects, stream_src)
    from ..dynamic import DynBool, DynFloat, DynInt

    if remember and any(isinstance(a, (DynInt, DynFloat, DynBool)) for a in args):
        return None  # a runtime value: compared by value it would be a constant; retrace instead
    cf.arg_static = {shift(i): a for i, a in enumerate(args)
                     if i not in arg_tensors and i not in const and not _has_tensors(a) and not _is_stream(a)
                     and not isinstance(a, (DynInt, DynFloat, DynBool))}
    cf.dyn_args = {shift(i): a for i, a in enumerate(args)
                   if i not in const and isinstance(a, (DynInt, DynFloat, DynBool))}
    return cf


def _constexpr_positions(fn: Any, n: int) -> set:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return set()
    out = set()
    for i, p in enumerate(params[:n]):
        ann = p.annotation
        if ann is Constexpr or (isinstance(ann, str) and "Constexpr" in ann):
            out.add(i)
    return out


def _is_stream(a: Any) -> bool:
    return type(a).__name__ == "CUstream" or (type(a).__module__.startswith("torch") and hasattr(a, "cuda_stream"))


def _same_static(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return bool(type(a) is type(b) and a == b)
    except Exception:  # noqa: BLE001 - values without a plain ==
        return False


class GenerateLineInfo:
    """A compile option of CuTe DSL (``cute.compile[cute.GenerateLineInfo(True)](...)``): accepted."""

    def __init__(self, enable: bool = True):
        self.enable = bool(enable)


class _CompileEntry:
    """``cute.compile``: call it, or give it options first (``cute.compile[options](fn, ...)``)."""

    __doc__ = _compile.__doc__

    def __call__(self, fn: Any, *args: Any, **kwargs: Any) -> CompiledFunction:
        return _compile(fn, *args, **kwargs)

    def __getitem__(self, options: Any) -> "_CompileEntry":
        return self

    def __repr__(self) -> str:
        return "<cute.compile>"


compile = _CompileEntry()  # noqa: A001 - CuTe DSL's name


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
