"""The emulated CUDA device, as torch sees it, on a machine without a GPU.

While :func:`enable` is in effect:
- tensors created on ``"cuda"`` (``device=``, ``.cuda()``, ``.to("cuda")``, and what operations on them
  allocate) are created in host memory (a TorchFunctionMode maps the device to the CPU), at addresses
  that are multiples of 256 bytes as cudaMalloc's are (``aligned_new``); ``t.is_cuda`` is True for them and for
  what is computed from them, and the program sees ``t.device`` as cuda:0 (cutelab's and torch's own
  code see the CPU, where the memory is);
- ``torch.cuda.is_available()`` is True; capability and properties describe the emulated part
  (:mod:`cutelab.compat.device`);
- ``torch._scaled_mm`` with block scales (MXFP8, MXFP4, NVFP4: cutelab.compat.scaled_mm) computes
  on "cuda" tensors what cuBLAS computes there;
- streams and events exist; every launch runs on the CPU interpreter at once, so ``synchronize``
  returns at once and ``Event.elapsed_time`` measures the interpreter's run between two records;
- a CUDA graph records cutelab's launches, device copies (``cuMemcpyDtoDAsync``) and the in-place
  torch operations made while it is captured, each on its stream with the waits between streams
  (``wait_stream``, events), and replays them: with several streams, each on a thread of its own,
  so that a kernel polling a flag another stream's kernel sets sees it set (see CUDAGraph);
- a half-precision matrix product of "cuda" tensors (``matmul``/``mm``/``bmm``/``@`` of float16 or
  bfloat16, and ``einsum`` of two such tensors contracting one index) rounds as a tensor-core GEMM does, not as torch's CPU kernels do: it accumulates in
  float32 one 16-wide step of K at a time, in K's order, each step's exact dot product added with
  one rounding (what cutelab's interpreter does for each mma/wgmma instruction), then rounds to the
  inputs' type. A program that checks its GEMM against torch at a tight tolerance, as it would on
  the GPU against cuBLAS, compares like with like;
- ``torch.profiler.profile`` asked for CUDA activity profiles the CPU's (the launches run there);
- a custom operator's "cuda" kernel (``torch.library.custom_op(..., device_types="cuda")``) runs
  for "cuda" tensors (:mod:`cutelab.compat.torch_ops`);
- any other public ``torch.cuda`` function raises NotEmulatedError naming it and the user's line.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional

from . import device as _device
from .where import NotEmulatedError, user_line

_ON_CUDA = "_cutelab_on_cuda"


def _is_cuda_device(d: Any) -> bool:
    import torch

    if isinstance(d, torch.device):
        return d.type == "cuda"
    if isinstance(d, str):
        return d == "cuda" or d.startswith("cuda:")
    return False


def _check_index(d: Any, what: str) -> None:
    import torch

    idx = None
    if isinstance(d, torch.device):
        idx = d.index
    elif isinstance(d, str) and d.startswith("cuda:"):
        idx = int(d[5:])
    elif isinstance(d, int) and not isinstance(d, bool):
        idx = d
    if idx is not None and not _device.index_ok(idx):
        n = _device.count()
        raise NotEmulatedError(f"{what} on cuda:{idx}", "the emulated CUDA device has one GPU, cuda:0" if n == 1 else
                               f"the emulated machine has {n} GPUs (LOCAL_WORLD_SIZE), cuda:0..cuda:{n - 1}",
                               where=user_line(3))


# --------------------------------------------------------------------------- streams and events

_HANDLES = itertools.count(0x7000)
_local = threading.local()


class Stream:
    """torch.cuda.Stream of the emulated device: launches on it run at once, on the CPU."""

    def __init__(self, device: Any = None, priority: int = 0, *, _handle: Optional[int] = None, **kwargs: Any):
        _check_index(device, "torch.cuda.Stream")
        self.device_index = 0
        self.priority = priority
        self.cuda_stream = next(_HANDLES) if _handle is None else _handle

    @property
    def device(self) -> Any:
        import torch

        return torch.device("cuda", 0)

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True

    def wait_stream(self, stream: Any) -> None:
        g = capturing()
        if g is not None:  # in a graph: this stream's next step waits for stream's work so far
            g.wait(self, g.mark(stream))

    def wait_event(self, event: Any) -> None:
        g = capturing()
        if g is not None and getattr(event, "marks", None):
            g.wait(self, event.marks)

    def record_event(self, event: Any = None) -> "Event":
        event = event or Event()
        event.record(self)
        return event

    def __int__(self) -> int:
        return self.cuda_stream

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Stream) and other.cuda_stream == self.cuda_stream

    def __hash__(self) -> int:
        return hash(("cutelab-stream", self.cuda_stream))

    def __enter__(self) -> "Stream":
        stack = _stream_stack()
        stack.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _stream_stack().pop()

    def __repr__(self) -> str:
        return f"<torch.cuda.Stream device=cuda:0 cuda_stream={self.cuda_stream:#x} (cutelab)>"


class ExternalStream(Stream):
    def __init__(self, stream_ptr: int, device: Any = None, **kwargs: Any):
        super().__init__(device, _handle=int(stream_ptr))


DEFAULT_STREAM = Stream(_handle=0)


def _stream_stack() -> List[Stream]:
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


def current_stream(device: Any = None) -> Stream:
    _check_index(device, "torch.cuda.current_stream")
    stack = _stream_stack()
    return stack[-1] if stack else DEFAULT_STREAM


def default_stream(device: Any = None) -> Stream:
    _check_index(device, "torch.cuda.default_stream")
    return DEFAULT_STREAM


def set_stream(stream: Stream) -> None:
    stack = _stream_stack()
    if stack:
        stack[-1] = stream
    else:
        stack.append(stream)


@contextlib.contextmanager
def stream(s: Optional[Stream]):
    if s is None:
        yield
        return
    with s:
        yield


class Event:
    """torch.cuda.Event: record() notes the host clock; the interpreter has already finished the
    work launched before it, so elapsed_time is the interpreter's time between two records."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False,
                 **kwargs: Any):
        self.enable_timing = enable_timing
        self.t: Optional[float] = None

    def record(self, stream: Any = None) -> None:
        self.t = time.perf_counter()
        g = capturing()
        self.marks = g.mark(stream) if g is not None else ()  # in a graph: the work a wait for it waits for

    @property
    def cuda_event(self) -> int:
        """The event's handle: 0 until its first record (torch creates the CUDA event lazily), then its own."""
        if self.t is None:
            return 0
        if getattr(self, "_handle", None) is None:
            self._handle = next(_HANDLES)
        return self._handle

    def wait(self, stream: Any = None) -> None:
        (stream or current_stream()).wait_event(self)

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end_event: "Event") -> float:
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("torch.cuda.Event.elapsed_time: both events must be created with enable_timing=True")
        if self.t is None or end_event.t is None:
            raise RuntimeError("torch.cuda.Event.elapsed_time: both events must be recorded first")
        return (end_event.t - self.t) * 1e3

    def __repr__(self) -> str:
        return "<torch.cuda.Event (cutelab)>"


# --------------------------------------------------------------------------- graphs

_CAPTURING: List["CUDAGraph"] = []


def _handle(stream: Any) -> int:
    """The handle of a stream given to a launch or a copy (a torch stream, a CUstream, an int; None:
    the current stream)."""
    if stream is None:
        return current_stream().cuda_stream
    from ..kernel.launch.plan import _stream_handle

    return _stream_handle(stream)


class CUDAGraph:
    """torch.cuda.CUDAGraph: between capture_begin and capture_end, cutelab's launches, copies and
    torch's in-place operations are recorded (not run), each on its stream, with the waits between
    streams that ``wait_stream``/``wait_event`` made while capturing. replay() runs them again: the
    steps of one stream in order; with several streams, each stream on a thread of its own, a step
    starting once the steps of other streams it waits for have finished, so that a kernel polling a
    flag that another stream's kernel sets (as on the GPU, where the streams run concurrently)
    sees it set. replay() returns when every stream has finished."""

    def __init__(self, keep_graph: bool = False) -> None:
        self.steps: List[Any] = []  # (stream handle, callable, ((stream handle, steps of it), ...))
        self.captured = False
        self._counts: Dict[int, int] = {}  # stream -> steps recorded on it
        self._waits: Dict[int, Dict[int, int]] = {}  # stream -> what its next step waits for

    def capture_begin(self, pool: Any = None, capture_error_mode: str = "global") -> None:
        if _CAPTURING:
            raise RuntimeError("torch.cuda.CUDAGraph.capture_begin: another graph is being captured")
        self.steps, self._counts, self._waits = [], {}, {}
        _CAPTURING.append(self)

    def capture_end(self) -> None:
        if not _CAPTURING or _CAPTURING[-1] is not self:
            raise RuntimeError("torch.cuda.CUDAGraph.capture_end: this graph is not being captured")
        _CAPTURING.pop()
        self.captured = True

    def add(self, fn: Callable[[], Any], stream: Any = None) -> None:
        """Record fn as the next step of stream (None: the current stream)."""
        h = _handle(stream)
        self.steps.append((h, fn, tuple(self._waits.pop(h, {}).items())))
        self._counts[h] = self._counts.get(h, 0) + 1

    def mark(self, stream: Any) -> tuple:
        """What a wait for stream's work recorded so far waits for (an event's record)."""
        h = _handle(stream)
        got = dict(self._waits.get(h, {}))
        if self._counts.get(h):
            got[h] = self._counts[h]
        return tuple(got.items())

    def wait(self, stream: Any, marks: tuple) -> None:
        """stream's next step waits for marks (see mark)."""
        h = _handle(stream)
        mine = self._waits.setdefault(h, {})
        for o, n in marks:
            if o != h:
                mine[o] = max(mine.get(o, 0), n)

    def replay(self) -> None:
        if not self.captured:
            raise RuntimeError("torch.cuda.CUDAGraph.replay: the graph was never captured")
        if len({h for h, _, _ in self.steps}) <= 1:
            for _, step, _ in self.steps:
                step()
            return
        _run_streams(self.steps)

    def reset(self) -> None:
        self.steps, self.captured = [], False

    def pool(self) -> Any:
        return ("cutelab-pool", id(self))

    def instantiate(self) -> None:
        pass

    def enable_debug_mode(self) -> None:
        pass

    def debug_dump(self, path: str) -> None:
        raise NotEmulatedError("torch.cuda.CUDAGraph.debug_dump")


def _run_streams(steps: List[Any]) -> None:
    """Each stream's steps in order on a thread of its own, each step after the steps it waits for;
    the first error of any stream is raised once every stream has stopped."""
    done: Dict[int, int] = {h: 0 for h, _, _ in steps}
    cond = threading.Condition()
    errors: List[BaseException] = []

    def worker(h: int, mine: List[Any]) -> None:
        for fn, waits in mine:
            with cond:
                while not errors and any(done[o] < n for o, n in waits):
                    cond.wait(0.05)
                if errors:
                    return
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 - raised again by replay
                with cond:
                    errors.append(e)
                    cond.notify_all()
                return
            with cond:
                done[h] += 1
                cond.notify_all()

    order: List[int] = []
    for h, _, _ in steps:
        if h not in order:
            order.append(h)
    threads = [threading.Thread(target=worker, args=(h, [(fn, w) for g, fn, w in steps if g == h]),
                                name=f"cutelab-stream-{h:#x}", daemon=True) for h in order]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


class graph:  # noqa: N801 - torch's name
    """``with torch.cuda.graph(g):`` captures into g."""

    def __init__(self, cuda_graph: CUDAGraph, pool: Any = None, stream: Any = None,
                 capture_error_mode: str = "global") -> None:
        self.g = cuda_graph
        self.stream = stream  # as torch: the capture runs with this stream current

    def __enter__(self) -> None:
        if self.stream is not None:
            self.stream.__enter__()
        self.g.capture_begin()

    def __exit__(self, *exc: Any) -> None:
        self.g.capture_end()
        if self.stream is not None:
            self.stream.__exit__(*exc)


def capturing() -> Optional[CUDAGraph]:
    return _CAPTURING[-1] if _CAPTURING else None


def is_current_stream_capturing() -> bool:
    return bool(_CAPTURING)


def graph_pool_handle() -> Any:
    return ("cutelab-pool", 0)


def _wrap_interpreter() -> None:
    """While a graph is captured, a kernel launch is recorded in it instead of run."""
    from ..kernel.cpu import interpreter as _interp

    if getattr(_interp.interpret, "_cutelab_graph", False):
        return
    run = _interp.interpret

    def interpret(ir: Any, buffers: Any, addresses: Any = None, out: Any = None, scalars: Any = None) -> None:
        g = capturing()
        if g is None:
            return run(ir, buffers, addresses, out, scalars)
        from ..kernel.launch import plan

        g.add(lambda: run(ir, buffers, addresses, out, scalars), plan.launch_stream)

    interpret._cutelab_graph = True
    interpret.__wrapped__ = run
    _interp.interpret = interpret


# --------------------------------------------------------------------------- the device

def is_available() -> bool:
    return True


def device_count() -> int:
    return _device.count()


def can_device_access_peer(d: Any, peer: Any) -> bool:
    """Whether GPU d reaches GPU peer's memory: every two GPUs of the emulated machine do (the ranks'
    symmetric memory is host memory mapped into each of them), a GPU not its own peer, as CUDA says."""
    import torch

    _check_index(d, "torch.cuda.can_device_access_peer")
    _check_index(peer, "torch.cuda.can_device_access_peer")

    def index(x: Any) -> int:
        return int(x.index or 0) if isinstance(x, torch.device) else int(str(x).split(":")[-1])

    return index(d) != index(peer)


_CURRENT = {"device": None}


def current_device() -> int:
    d = _CURRENT["device"]
    if d is None:  # under a launcher, rank r's device is cuda:LOCAL_RANK until set_device says otherwise
        d = int(os.environ.get("LOCAL_RANK", "0")) if _device.count() > 1 else 0
    return d


def set_device(d: Any) -> None:
    _check_index(d, "torch.cuda.set_device")
    import torch

    idx = d.index if isinstance(d, torch.device) else int(d[5:]) if isinstance(d, str) and d.startswith("cuda:") else d
    if isinstance(idx, int) and not isinstance(idx, bool):
        _CURRENT["device"] = idx


def mark_on_cuda(t: Any) -> Any:
    """Mark a host tensor as living on the emulated CUDA device (cutelab.distributed's symmetric
    memory makes its tensors over shared memory and marks them).

    The tensor and its memory (its storage's Python object, which torch keeps for the storage's
    life) are marked, and the memory is remembered by its address (cutelab.runtime.device_memory) for
    kernels that read a tensor's address from memory (grouped GEMMs): a tensor that torch hands out again as another Python object (what
    ``ctx.saved_tensors`` gives back in an autograd Function's backward) is on the device too."""
    setattr(t, _ON_CUDA, True)
    try:
        st = t.untyped_storage()
        setattr(st, _ON_CUDA, True)
    except Exception:  # noqa: BLE001 - a tensor without storage (meta, sparse): only the tensor is marked
        return t
    from ..runtime import register_device_storage

    register_device_storage(st)  # kernels on the CPU reach it by its address (kernel/instr/address_access.py)
    return t


#: the alignment of the emulated device's allocations: cudaMalloc's guarantee (the caching allocator's blocks, 512-byte
#: multiples, keep it), which programs rely on (TMA's 128-byte global addresses, CUTLASS's "16B aligned" checks)
ALLOC_ALIGN = 256


def aligned_new(t: Any, args: Any = ()) -> Any:
    """t, or a copy of it at an address that is a multiple of ALLOC_ALIGN, when t is a tensor that an operation on
    the emulated device just allocated (a new storage: not a view, not one of the operation's arguments).

    torch's CPU allocator aligns to 64 bytes; on a GPU every allocation starts at a multiple of 256. The copy has
    t's size, strides, dtype and bytes, in a storage of as many bytes at the first aligned byte of a host buffer
    ALLOC_ALIGN bytes longer (which the storage keeps alive). Views keep their base's memory, so a view at an odd offset stays odd, as on the GPU."""
    import torch

    if not isinstance(t, torch.Tensor) or t.grad_fn is not None or t.is_sparse or t.device.type != "cpu" \
            or t.layout != torch.strided or t.is_conj() or t.is_neg() or t.is_quantized:
        return t
    try:
        if t._base is not None or t.storage_offset() or not t.data_ptr() % ALLOC_ALIGN:
            return t
        st = t.untyped_storage()
    except Exception:  # noqa: BLE001 - no storage (a tensor subclass, a functional wrapper): left as it is
        return t
    if any(isinstance(a, torch.Tensor) and a.data_ptr() == t.data_ptr() for a in args):
        return t
    n = st.nbytes()
    if not n:
        return t
    import numpy as np

    raw = np.empty(n + ALLOC_ALIGN, dtype=np.uint8)
    off = (-raw.ctypes.data) % ALLOC_ALIGN
    mem = torch.frombuffer(raw[off:off + n], dtype=torch.uint8)  # a storage of exactly n bytes (bounds checks see them)
    mem.copy_(torch.empty(0, dtype=torch.uint8).set_(st))
    out = torch.empty(0, dtype=t.dtype).set_(mem.untyped_storage(), 0, t.size(), t.stride())
    return out.requires_grad_(True) if t.requires_grad else out  # a leaf made with requires_grad=True stays one


def _aligned_out(out: Any, args: Any) -> Any:
    """aligned_new of an operation's result: a tensor, or each tensor of a tuple or list of results (torch.max's
    values and indices keep their named-tuple type)."""
    import torch

    if isinstance(out, torch.Tensor):
        return aligned_new(out, args)
    if isinstance(out, (tuple, list)) and any(isinstance(x, torch.Tensor) for x in out):
        new = [aligned_new(x, args) for x in out]
        if all(a is b for a, b in zip(new, out)):
            return out
        if isinstance(out, list):
            return new
        try:
            return type(out)(new)  # torch.return_types.* are built from a sequence
        except TypeError:
            return type(out)(*new) if hasattr(out, "_fields") else tuple(new)
    return out


def on_cuda(t: Any) -> bool:
    """True when the tensor lives on the emulated CUDA device: it was marked, or (not marked either
    way itself) its memory was."""
    d = t.__dict__.get(_ON_CUDA)
    if d is not None:
        return bool(d)
    try:
        return bool(getattr(t.untyped_storage(), _ON_CUDA, False))
    except Exception:  # noqa: BLE001 - no storage
        return False


def get_device_capability(d: Any = None) -> tuple:
    _check_index(d, "torch.cuda.get_device_capability")
    return _device.capability()


def get_device_properties(d: Any = None) -> _device.DeviceProperties:
    _check_index(d, "torch.cuda.get_device_properties")
    return _device.DeviceProperties()


def get_device_name(d: Any = None) -> str:
    return get_device_properties(d).name


def get_arch_list() -> List[str]:
    major, minor = _device.capability()
    return [f"sm_{major}{minor}"]


def synchronize(d: Any = None) -> None:
    _check_index(d, "torch.cuda.synchronize")


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return True


def empty_cache() -> None:
    pass


class device:  # noqa: N801 - torch's name
    """``with torch.cuda.device(0):``."""

    def __init__(self, d: Any) -> None:
        _check_index(d, "torch.cuda.device")

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        pass


EMULATED: Dict[str, Any] = {
    "is_available": is_available, "device_count": device_count, "current_device": current_device,
    "can_device_access_peer": can_device_access_peer,
    "set_device": set_device, "get_device_capability": get_device_capability,
    "get_device_properties": get_device_properties, "get_device_name": get_device_name,
    "get_arch_list": get_arch_list, "synchronize": synchronize, "is_bf16_supported": is_bf16_supported,
    "empty_cache": empty_cache, "device": device, "Stream": Stream, "ExternalStream": ExternalStream,
    "Event": Event, "current_stream": current_stream, "default_stream": default_stream,
    "set_stream": set_stream, "stream": stream, "StreamContext": stream, "CUDAGraph": CUDAGraph, "graph": graph,
    "is_current_stream_capturing": is_current_stream_capturing, "graph_pool_handle": graph_pool_handle,
}

#: torch.cuda functions that work without a GPU as torch writes them (random seeds are queued)
NATIVE = {"is_initialized", "manual_seed", "manual_seed_all", "seed", "seed_all", "init", "is_tf32_supported"}


# --------------------------------------------------------------------------- tensors on "cuda"

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # cutelab's own files
_TORCH = os.sep + "torch" + os.sep


def _internal(frame: Any) -> bool:
    """True when the frame is cutelab's or torch's own code (they see where the memory really is)."""
    f = frame.f_code.co_filename
    return f.startswith(_HERE) or _TORCH in f

def _with_device(r: str, dev: str) -> str:
    """torch's repr of a CPU tensor with the device suffix torch prints for a CUDA one (its first suffix)."""
    import re

    if not (r.startswith("tensor(") and r.endswith(")")):
        return r
    body = r[len("tensor("):-1]
    m = re.compile(r",\s*(size|nnz|dtype|layout|grad_fn|requires_grad|tangent)=").search(body, body.rfind("]") + 1)
    at = m.start() if m else len(body)
    return f"tensor({body[:at]}, device='{dev}'{body[at:]})"


def _tensor_core_steps(a: Any, b: Any, ka: int, kb: int, product: Callable[[Any, Any], Any],
                       dtype: Any = None) -> Any:
    """product(a, b) of float16/bfloat16 tensors contracting a's axis ka with b's axis kb, as a
    tensor-core GEMM rounds it: float32 accumulation over 16-wide steps of K, each step's product
    exact (in float64) and added with one rounding; the result in a's type (or ``dtype``)."""
    a64, b64 = a.double(), b.double()
    acc = None
    for k0 in range(0, a.shape[ka], _MMA_K):
        w = min(_MMA_K, a.shape[ka] - k0)
        part = product(a64.narrow(ka, k0, w), b64.narrow(kb, k0, w))
        acc = part.float() if acc is None else (acc.double() + part).float()
    return acc.to(a.dtype if dtype is None else dtype)


def _mm_out_dtype(func: Any, args: Any, kwargs: Dict[str, Any]) -> Any:
    """torch.mm / torch.bmm with ``out_dtype=`` (``aten::mm.dtype``, CUDA only in torch): float16/bfloat16
    operands into a float32 result (the tensor-core accumulation, not rounded to the operands' type), or
    into their own type; ``out=`` receives it (quack's gemm_ref calls ``torch.mm(A, B, out_dtype=torch.float32,
    out=None)``). Other types raise, as torch's CUDA kernel does."""
    import torch

    kw = dict(kwargs)
    od, out = kw.pop("out_dtype"), kw.pop("out", None)
    name = f"torch.{getattr(func, '__name__', 'mm')}(out_dtype={od})"
    if kw or len(args) != 2 or not all(isinstance(x, torch.Tensor) for x in args):
        raise TypeError(f"{name} (emulated CUDA): takes two tensors, out_dtype= and out= only, got "
                        f"{len(args)} arguments and {sorted(kw)}")
    a, b = args
    want = 3 if func is torch.bmm else 2
    if a.dim() != want or b.dim() != want or a.shape[-1] != b.shape[-2] or (want == 3 and a.shape[0] != b.shape[0]):
        raise RuntimeError(f"{name} (emulated CUDA): shapes {tuple(a.shape)} and {tuple(b.shape)} do not multiply")
    if b.dtype != a.dtype or not (od == a.dtype or (od == torch.float32 and a.dtype in (torch.float16, torch.bfloat16))):
        raise RuntimeError(f"{name} (emulated CUDA): out_dtype must be the operands' type or, for float16/bfloat16 "
                           f"operands, float32; got {a.dtype} x {b.dtype} -> {od}")
    if a.dtype in (torch.float16, torch.bfloat16) and a.shape[-1] > 0:
        r = _tensor_core_steps(a, b, -1, -2, lambda x, y: x @ y, od)
    else:
        r = (a.to(od) @ b.to(od)) if a.shape[-1] > 0 else torch.zeros(*a.shape[:-1], b.shape[-1], dtype=od)
    if out is None:
        return r
    out.copy_(r)
    return out


def _tensor_core_matmul(a: Any, b: Any) -> Any:
    """a @ b (torch.matmul's broadcasting, both at least 2-D), rounded as _tensor_core_steps says."""
    return _tensor_core_steps(a, b, -1, -2, lambda x, y: x @ y)


_MMA_K = 16  # the K of one f16/bf16 mma.sync / wgmma instruction


def _einsum_contraction(args: Any) -> Any:
    """(equation, a, b, axis of K in a, axis of K in b) for torch.einsum of two float16/bfloat16
    tensors that contract one index (a GEMM, batched or not, in any layout); None otherwise."""
    import torch

    if len(args) == 2 and isinstance(args[1], (list, tuple)):
        args = (args[0], *args[1])
    if len(args) != 3 or not isinstance(args[0], str):
        return None
    eq, a, b = args
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or a.dtype not in (
            torch.float16, torch.bfloat16) or b.dtype != a.dtype:
        return None
    e = eq.replace(" ", "")
    if "->" not in e or "." in e:
        return None
    lhs, out = e.split("->")
    ia, _, ib = lhs.partition(",")
    if len(set(ia)) != len(ia) or len(set(ib)) != len(ib) or len(ia) != a.dim() or len(ib) != b.dim():
        return None
    k = [c for c in ia if c in ib and c not in out]
    if len(k) != 1 or a.shape[ia.index(k[0])] == 0:
        return None
    return e, a, b, ia.index(k[0]), ib.index(k[0])


def _tensor_core_einsum(eq: str, a: Any, b: Any, ka: int, kb: int) -> Any:
    """torch.einsum of one contracted index, rounded as _tensor_core_steps says."""
    import torch

    return _tensor_core_steps(a, b, ka, kb, lambda x, y: torch.einsum(eq, x, y))


def _mode_class() -> Any:
    import torch
    from torch.overrides import TorchFunctionMode

    Tensor = torch.Tensor
    to_cpu = {Tensor.cpu}
    tensor_repr = Tensor.__repr__
    matmuls = {torch.matmul, torch.mm, torch.bmm, Tensor.matmul, Tensor.mm, Tensor.bmm, Tensor.__matmul__}
    halves = (torch.float16, torch.bfloat16)

    def tensor_core(func: Any, args: Any, kwargs: Dict[str, Any]) -> bool:
        if func not in matmuls or kwargs or len(args) != 2:
            return False
        a, b = args
        return (isinstance(a, Tensor) and isinstance(b, Tensor) and a.dtype in halves and b.dtype == a.dtype
                and a.dim() >= 2 and b.dim() >= 2 and a.shape[-1] == b.shape[-2] and a.shape[-1] > 0)
    device_attr = Tensor.device
    grad_attr = Tensor.grad
    get_device = Tensor.get_device

    def mark(x: Any) -> None:
        if isinstance(x, Tensor):
            try:
                mark_on_cuda(x)
            except Exception:  # noqa: BLE001 - a tensor that takes no attributes stays unmarked
                pass
        elif isinstance(x, (tuple, list)):
            for y in x:
                if isinstance(y, Tensor):
                    mark(y)

    def marked(args: Any, kwargs: Dict[str, Any]) -> bool:
        for a in itertools.chain(args, kwargs.values()):
            if isinstance(a, Tensor):
                if on_cuda(a):
                    return True
            elif isinstance(a, (tuple, list)):
                for y in a:
                    if isinstance(y, Tensor) and on_cuda(y):
                        return True
        return False

    class EmulatedCuda(TorchFunctionMode):
        """Maps device "cuda" to the CPU and keeps track of which tensors are "on cuda"."""

        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            name = getattr(func, "__name__", "")
            if name == "__get__":
                desc = getattr(func, "__self__", None)
                if desc is Tensor.is_cuda:
                    return on_cuda(args[0])
                if desc is device_attr and on_cuda(args[0]) and not _internal(sys._getframe(1)):
                    return torch.device("cuda", current_device())  # what the program sees; cutelab and torch themselves see the CPU
                if desc is grad_attr:  # a leaf's gradient, accumulated by the engine in C++ (unmarked), is on its device
                    g = func(*args, **kwargs)
                    if isinstance(g, Tensor) and on_cuda(args[0]) and not on_cuda(g):
                        mark(g)
                    return g
                return func(*args, **kwargs)
            if func is get_device and args and on_cuda(args[0]) and not _internal(sys._getframe(1)):
                return current_device()
            if func is tensor_repr and args and on_cuda(args[0]):  # as torch prints a CUDA tensor
                return _with_device(func(*args, **kwargs), f"cuda:{current_device()}")
            to_cuda = False
            if "device" in kwargs and _is_cuda_device(kwargs["device"]):
                _check_index(kwargs["device"], f"torch.{name}")
                kwargs = dict(kwargs, device="cpu")
                to_cuda = True
            if kwargs.get("pin_memory"):
                kwargs = dict(kwargs, pin_memory=False)
            if func is Tensor.cuda or func is Tensor.pin_memory:
                if func is Tensor.pin_memory or on_cuda(args[0]):
                    return args[0]  # as torch: .cuda() of a tensor on the device is the tensor
                out = aligned_new(args[0].clone())  # a copy in its own memory, as on a GPU (the memory is marked)
                mark(out)
                return out
            if name == "to":
                new = []
                for a in args:
                    if _is_cuda_device(a):
                        _check_index(a, "Tensor.to")
                        a, to_cuda = "cpu", True
                    new.append(a)
                args = tuple(new)
            was_cuda = to_cuda or marked(args, kwargs)
            g = capturing()
            if g is not None and was_cuda and (name.endswith("_") and not name.endswith("__") or "out" in kwargs):
                g.add(lambda: func(*args, **kwargs))  # an in-place operation: run at replay
                return args[0] if args and isinstance(args[0], Tensor) and "out" not in kwargs else kwargs.get("out")
            if func is torch._scaled_mm and was_cuda:
                from . import scaled_mm

                if scaled_mm.is_block_scaled(args, kwargs):  # cuBLAS's block scaling, which CPU torch lacks
                    out = scaled_mm.scaled_mm(*args, **kwargs)
                    mark(out)
                    return out
            if was_cuda and func is getattr(torch, "_scaled_grouped_mm_v2", None):  # CPU torch has no kernel for it
                from .scaled_grouped_mm import scaled_grouped_mm_v2

                out = _aligned_out(scaled_grouped_mm_v2(*args, **kwargs), args)
                mark(out)
                return out
            ein = _einsum_contraction(args) if was_cuda and func is torch.einsum and not kwargs else None
            if was_cuda and func in (torch.mm, torch.bmm) and kwargs.get("out_dtype") is not None:
                out = _mm_out_dtype(func, args, kwargs)  # aten::mm.dtype, which CPU torch lacks
            elif ein is not None:
                out = _tensor_core_einsum(*ein)
            elif was_cuda and tensor_core(func, args, kwargs):
                out = _tensor_core_matmul(*args)
            else:
                out = func(*args, **kwargs)
            if func in to_cpu or (name == "to" and not to_cuda and any(
                    (isinstance(a, str) and a == "cpu") or (isinstance(a, torch.device) and a.type == "cpu")
                    for a in itertools.chain(args, kwargs.values()))):
                if out is (args[0] if args else None) and on_cuda(out):
                    out = out.clone()  # a CPU copy of a "cuda" tensor: a new tensor in its own memory, not marked
                if isinstance(out, Tensor):
                    out.__dict__.pop(_ON_CUDA, None)
                return out
            if was_cuda:
                if out is (args[0] if args else None) and name == "to" and to_cuda and not on_cuda(args[0]):
                    out = out.clone()  # .to("cuda") of a CPU tensor: a copy "on cuda", in its own memory
                if "out" not in kwargs and not (name.endswith("_") and not name.endswith("__")):
                    out = _aligned_out(out, args)  # at cudaMalloc's alignment
                mark(out)
                if g is not None and isinstance(out, Tensor) and not any(out is a for a in args):
                    g.add(lambda: out.copy_(func(*args, **kwargs)))
            return out

    return EmulatedCuda


# --------------------------------------------------------------------------- switching it on

_STATE: Dict[str, Any] = {}


def enable() -> None:
    """Emulate the CUDA device in torch (once; see the module's docstring)."""
    if _STATE.get("on"):
        return
    import torch.cuda as tc

    saved: Dict[str, Any] = {}
    for n in dir(tc):
        if n.startswith("_") or n in NATIVE:
            continue
        v = getattr(tc, n)
        if n in EMULATED:
            saved[n] = v
            setattr(tc, n, EMULATED[n])
        elif callable(v) and not isinstance(v, type) and type(v).__name__ in ("function", "builtin_function_or_method"):
            saved[n] = v
            setattr(tc, n, _refuse(f"torch.cuda.{n}"))
    for n, v in EMULATED.items():
        if n not in saved:
            saved[n] = getattr(tc, n, None)
            setattr(tc, n, v)
    _STATE["saved"] = saved
    _patch_profiler()
    _wrap_interpreter()
    cls = _mode_class()
    mode = cls()
    mode.__enter__()
    _STATE["mode"] = mode
    _STATE["on"] = True
    _wrap_backward(cls)


def _patch_profiler() -> None:
    """``torch.profiler.profile(activities=[ProfilerActivity.CUDA, ...])`` profiles the CPU activity instead
    (torch without CUDA refuses a CUDA-only profile): the emulated device's kernels run on the CPU interpreter,
    inside the torch calls that launch them. CUTLASS's MoE grouped GEMM (moe/torch_grouped_mm.py) runs its
    kernel inside such a profile and prints its table."""
    import torch.profiler as tp

    base = tp.profile
    if getattr(base, "_cutelab_cuda", False):
        return

    class profile(base):  # noqa: N801 - torch's name
        _cutelab_cuda = True

        def __init__(self, *args: Any, activities: Any = None, **kwargs: Any) -> None:
            if activities is not None:
                acts = [a for a in activities if a != tp.ProfilerActivity.CUDA]
                if tp.ProfilerActivity.CPU not in acts:
                    acts.append(tp.ProfilerActivity.CPU)
                activities = acts
            super().__init__(*args, activities=activities, **kwargs)

    profile.__doc__ = base.__doc__
    _STATE["profiler"] = base
    tp.profile = profile


_OUTS_ON_CUDA = "_cutelab_outputs_on_cuda"


def _wrap_backward(mode_cls: Any) -> None:
    """torch's autograd engine runs an autograd Function's ``backward`` without the Python
    TorchFunctionMode stack, so there the emulation would be off (``t.is_cuda`` False for the
    saved "cuda" tensors, ``device="cuda"`` refused). Run each backward under the emulation.

    The gradients the engine hands to that backward are made in C++ (``out.sum().backward()``'s
    ``ones_like`` expanded to the output's shape: a zero-stride view; what a built-in op's backward
    computes), where no "cuda" mark is set. On a GPU a Function's gradient lives on the device of the
    output it belongs to: ``Function.apply`` records which of its outputs are "on cuda" on the
    backward node, and the backward marks the gradients of those outputs (with their memory)."""
    import torch
    from torch.autograd.function import BackwardCFunction
    from torch.overrides import _get_current_function_mode_stack

    run = BackwardCFunction.apply
    if getattr(run, "_cutelab_cuda", False):
        return

    def apply(self: Any, *args: Any) -> Any:
        flags = getattr(self, _OUTS_ON_CUDA, None)
        if flags and _STATE.get("on"):
            for a, f in zip(args, flags):
                if f and isinstance(a, torch.Tensor) and not on_cuda(a):
                    try:
                        mark_on_cuda(a)
                    except Exception:  # noqa: BLE001 - a tensor that takes no attributes stays unmarked
                        pass
        if not _STATE.get("on") or any(isinstance(m, mode_cls) for m in _get_current_function_mode_stack()):
            return run(self, *args)
        with mode_cls():
            return run(self, *args)

    apply._cutelab_cuda = True
    apply.__wrapped__ = run
    BackwardCFunction.apply = apply
    _STATE["backward"] = run

    fwd = torch.autograd.Function.__dict__["apply"]

    def function_apply(cls: Any, *args: Any, **kwargs: Any) -> Any:
        out = fwd.__func__(cls, *args, **kwargs)
        if _STATE.get("on"):
            outs = out if isinstance(out, tuple) else (out,)
            node = next((o.grad_fn for o in outs if isinstance(o, torch.Tensor) and o.grad_fn is not None), None)
            if isinstance(node, BackwardCFunction):
                try:
                    setattr(node, _OUTS_ON_CUDA, tuple(isinstance(o, torch.Tensor) and on_cuda(o) for o in outs))
                except Exception:  # noqa: BLE001 - a node that takes no attributes: its gradients stay as made
                    pass
        return out

    torch.autograd.Function.apply = classmethod(function_apply)
    _STATE["function_apply"] = fwd


def _refuse(name: str) -> Callable[..., Any]:
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise NotEmulatedError(name, "cutelab's emulated CUDA device (no GPU here) provides streams, events, graphs, "
                               "synchronize, capability and properties", where=user_line(2))

    refused.__name__ = name.rsplit(".", 1)[-1]
    return refused


def disable() -> None:
    """Undo :func:`enable` (tests use it)."""
    if not _STATE.get("on"):
        return
    import torch.cuda as tc

    for n, v in _STATE["saved"].items():
        if v is None:
            try:
                delattr(tc, n)
            except AttributeError:
                pass
        else:
            setattr(tc, n, v)
    _STATE["mode"].__exit__(None, None, None)
    if "profiler" in _STATE:
        import torch.profiler as tp

        tp.profile = _STATE["profiler"]
    if "backward" in _STATE:
        from torch.autograd.function import BackwardCFunction

        BackwardCFunction.apply = _STATE["backward"]
    if "function_apply" in _STATE:
        import torch

        torch.autograd.Function.apply = _STATE["function_apply"]
    _STATE.clear()


def enabled() -> bool:
    return bool(_STATE.get("on"))


@contextlib.contextmanager
def tensor_mode_paused() -> Any:
    """Within the block, the TorchFunctionMode of :func:`enable` (which maps "cuda" tensors to the CPU) is
    off; torch.cuda's functions stay emulated. For timing what a call reads of torch tensors as it would
    cost on a GPU, on tensors that say they live there (fakegpu.fake_cuda_tensor; benchmarks/quack_host.py)."""
    mode = _STATE.get("mode")
    if mode is None:
        yield
        return
    mode.__exit__(None, None, None)
    try:
        yield
    finally:
        mode.__enter__()
