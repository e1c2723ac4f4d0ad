"""``cute.testing``: timing and checking helpers of CuTe DSL examples (benchmark, JitArguments,
assert_).

``benchmark`` times what CuTe DSL's does: ``warmup_iterations`` calls, then ``iterations`` calls
cycling through the workspaces, between two CUDA events recorded on ``stream`` (the GPU time from
the first call's work to the last one's: a call whose host side is slower than its kernel shows
its host time); with ``use_cuda_graphs=True`` the calls are captured into a CUDA graph and the
graph's replay is timed. The loop does nothing per iteration but the call. Without a GPU the same
loop is timed with ``time.perf_counter``; when the call runs kernels on the CPU interpreter, it runs
once instead (CPU timings of GPU code say nothing about the GPU), and a note on stderr says so.

>>> JitArguments(1, 2, k=3)
JitArguments(args=(1, 2), kwargs={'k': 3})
>>> benchmark(lambda x: x + 1, kernel_arguments=JitArguments(1), warmup_iterations=1, iterations=5) > 0
True
"""

from __future__ import annotations

import time
from typing import Any, Callable, List, Optional, Tuple

__all__ = ["JitArguments", "benchmark", "assert_", "get_workspace_count"]


class JitArguments:
    """The arguments of one call of a compiled function (a benchmark workspace)."""

    def __init__(self, *args: Any, **kwargs: Any):
        self.args = args
        self.kwargs = kwargs
        self.references: List[Any] = []

    def add_to_scope(self, references: Any) -> None:
        """Keep objects alive as long as these arguments (e.g. the tensors behind a view)."""
        self.references.extend(references)

    def __repr__(self) -> str:
        return f"JitArguments(args={self.args!r}, kwargs={self.kwargs!r})"


def _host_sync(args: Any) -> None:
    """Wait for the device when there is one: torch's synchronize for torch CUDA tensors, else
    the driver's (nothing on the CPU interpreter)."""
    for a in args:
        owner = getattr(getattr(a, "engine", None), "obj", None)
        cand = owner if owner is not None else a
        if type(cand).__module__.startswith("torch") and getattr(cand, "is_cuda", False):
            import torch

            torch.cuda.synchronize(cand.device)
            return


def _gpu_driver() -> Any:
    """The CUDA driver when a GPU is there to time with events; None otherwise (no GPU, or the
    fake driver of cutelab.kernel.cuda.fakegpu, which has no events: the host clock times then)."""
    from .kernel.cuda import driver

    if not driver.gpu_available():
        return None
    d = driver._driver()
    if not hasattr(d, "cuEventCreate"):
        return None
    driver._ensure_context()
    return d


def _ok(res: Any, what: str) -> Any:
    from .kernel.cuda.driver import _ok as ok

    return ok(res, f"{what} (cute.testing.benchmark)")


def _stream_handle(stream: Any) -> int:
    if stream is None:
        return 0
    from .kernel.launch.plan import _stream_handle as handle

    return handle(stream)


_SAID: set = set()


def _say_once(msg: str) -> None:
    import sys

    if msg not in _SAID:
        _SAID.add(msg)
        print(msg, file=sys.stderr)


def benchmark(callable: Callable, *, warmup_iterations: int = 10, iterations: int = 100,
              stream: Any = None, kernel_arguments: Optional[JitArguments] = None,
              workspace_generator: Optional[Callable[[], JitArguments]] = None, workspace_count: int = 1,
              use_cuda_graphs: bool = False, use_cupti: bool = False, nvtx_tag: Optional[str] = None) -> float:
    """Average microseconds per call of callable (CuTe DSL's cute.testing.benchmark).

    ``warmup_iterations`` untimed calls, then ``iterations`` timed ones; calls cycle through
    ``workspace_count`` argument sets from ``workspace_generator`` (cold caches), or use
    ``kernel_arguments``. On a GPU: CUDA events on ``stream`` around the timed calls (with
    several workspaces, twice the L2 cache is cleared first, as CuTe DSL does); a non-default
    ``stream`` is checked to be the one the callable launches on (one extra call, captured);
    ``use_cuda_graphs``: the calls are captured into a CUDA graph (on a non-default stream) and
    its replay is timed. Elsewhere the host clock times the same loop, ending with a device
    synchronize. ``use_cupti`` and ``nvtx_tag`` are accepted; CUDA events time in their place.

    >>> benchmark(lambda: None, kernel_arguments=JitArguments(), warmup_iterations=0, iterations=3) >= 0
    True
    """
    if workspace_count < 1:
        raise ValueError("cute.testing.benchmark: workspace_count must be at least 1 "
                         f"(got {workspace_count})")
    if iterations < 1 or warmup_iterations < 0:
        raise ValueError(f"cute.testing.benchmark: iterations ({iterations}) must be >= 1 and "
                         f"warmup_iterations ({warmup_iterations}) >= 0")
    if workspace_generator is None:
        if workspace_count != 1:
            raise ValueError("cute.testing.benchmark: workspace_count > 1 needs a workspace_generator "
                             f"(got workspace_count={workspace_count} and none)")
        if kernel_arguments is None:
            raise ValueError("cute.testing.benchmark: pass kernel_arguments=JitArguments(...) or a "
                             "workspace_generator")
        spaces = [kernel_arguments]
    else:
        spaces = [workspace_generator() for _ in range(workspace_count)]
    for w in spaces:
        if not isinstance(w, JitArguments):
            raise TypeError("cute.testing.benchmark: workspace_generator and kernel_arguments must give "
                            f"JitArguments, got {type(w).__name__}")
    calls: List[Tuple[Tuple[Any, ...], dict]] = [(w.args, w.kwargs) for w in spaces]

    with_kwargs = any(kw for _, kw in calls)

    def order(n: int, start: int) -> List[Tuple[Tuple[Any, ...], dict]]:
        """The argument sets of n calls from workspace start on (made before the timing starts)."""
        return [calls[(start + i) % len(calls)] for i in range(n)]

    def loop(todo: List[Tuple[Tuple[Any, ...], dict]]) -> None:
        """The calls, and nothing else per iteration."""
        if with_kwargs:
            for a, kw in todo:
                callable(*a, **kw)
        else:
            for a, _ in todo:
                callable(*a)

    warm, timed = order(warmup_iterations, 0), order(iterations, warmup_iterations)
    d = _gpu_driver()
    if d is None:  # the CPU interpreter, or the fake driver: the host clock
        from .kernel.launch import plan as _plan

        # the first call (of the warm-up, else of the timed loop) shows whether kernels run on the interpreter
        before = _plan.cpu_launches
        t0 = time.perf_counter()
        loop((warm or timed)[:1])
        t1 = time.perf_counter()
        if _plan.cpu_launches != before:  # GPU kernels on the CPU interpreter: that one call is the measure
            _say_once("cute.testing.benchmark: no GPU, so the kernels ran on cutelab's CPU interpreter; the call "
                      f"ran once instead of {warmup_iterations} warm-up and {iterations} timed iterations, and "
                      "its time is the interpreter's, which says nothing about the GPU's")
            return (t1 - t0) * 1e6
        if warm:
            loop(warm[1:])
            _host_sync(spaces[0].args)
            t0 = time.perf_counter()
            loop(timed)
        else:
            loop(timed[1:])
        _host_sync(spaces[0].args)
        return (time.perf_counter() - t0) / iterations * 1e6

    h = _stream_handle(stream)
    s = d.CUstream(h) if hasattr(d, "CUstream") else h
    if use_cuda_graphs and h == 0:
        raise ValueError("cute.testing.benchmark: use_cuda_graphs=True needs the kernel launched on a "
                         "non-default stream, passed as stream=")
    if not use_cuda_graphs and h != 0 and not _uses_stream(d, s, lambda: loop(order(1, 0))):
        raise ValueError("cute.testing.benchmark: CUDA stream passed to benchmark does not match the stream "
                         "the kernel was launched in")
    if len(spaces) > 1:
        _clear_l2(d, s)
    start = _ok(d.cuEventCreate(0), "cuEventCreate")
    end = _ok(d.cuEventCreate(0), "cuEventCreate")
    try:
        if use_cuda_graphs:
            g_warm = _capture(d, s, lambda: loop(warm), len(warm))
            try:
                g_timed = _capture(d, s, lambda: loop(timed), len(timed))
            except BaseException:
                d.cuGraphExecDestroy(g_warm)
                raise
            try:
                _ok(d.cuGraphLaunch(g_warm, s), "cuGraphLaunch")
                _ok(d.cuEventRecord(start, s), "cuEventRecord")
                _ok(d.cuGraphLaunch(g_timed, s), "cuGraphLaunch")
                _ok(d.cuEventRecord(end, s), "cuEventRecord")
                _ok(d.cuEventSynchronize(end), "cuEventSynchronize")
            finally:
                d.cuGraphExecDestroy(g_warm)
                d.cuGraphExecDestroy(g_timed)
        else:
            loop(warm)
            _ok(d.cuEventRecord(start, s), "cuEventRecord")
            loop(timed)
            _ok(d.cuEventRecord(end, s), "cuEventRecord")
            _ok(d.cuEventSynchronize(end), "cuEventSynchronize")
        ms = _ok(d.cuEventElapsedTime(start, end), "cuEventElapsedTime")
    finally:
        d.cuEventDestroy(start)
        d.cuEventDestroy(end)
    return float(ms) / iterations * 1e3


def _capture_mode(d: Any) -> Any:
    modes = getattr(d, "CUstreamCaptureMode", None)
    return modes.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL if modes is not None else 1


def _record(d: Any, s: Any, body: Callable[[], Any]) -> Tuple[Any, int, Optional[BaseException]]:
    """Capture what body launches on stream s: (graph or None, its node count, body's error)."""
    _ok(d.cuStreamBeginCapture(s, _capture_mode(d)), "cuStreamBeginCapture")
    err: Optional[BaseException] = None
    try:
        body()
    except Exception as e:  # noqa: BLE001 - ended below, then raised or reported
        err = e
    res = d.cuStreamEndCapture(s)
    if int(res[0]) != 0:
        if err is not None:
            raise err
        _ok(res, "cuStreamEndCapture")
    graph = res[1]
    nodes = int(_ok(d.cuGraphGetNodes(graph, 0), "cuGraphGetNodes")[1])
    return graph, nodes, err


def _uses_stream(d: Any, s: Any, body: Callable[[], Any]) -> bool:
    """Does body launch its work on stream s? (CuTe DSL's check: capture one call.)"""
    graph, nodes, err = _record(d, s, body)
    d.cuGraphDestroy(graph)
    if nodes and err is not None:
        raise err
    return nodes > 0


def _capture(d: Any, s: Any, body: Callable[[], Any], calls: int) -> Any:
    """An executable CUDA graph of what body launches on stream s (at least one node per call)."""
    graph, nodes, err = _record(d, s, body)
    try:
        if err is not None:
            raise err
        if nodes < calls:
            raise ValueError("cute.testing.benchmark: CUDA stream passed to benchmark does not match the "
                             f"stream the kernel was launched in ({nodes} launches captured for {calls} calls)")
        return _ok(d.cuGraphInstantiate(graph, 0), "cuGraphInstantiate")
    finally:
        d.cuGraphDestroy(graph)


def _clear_l2(d: Any, s: Any) -> None:
    """Write twice the L2 cache's size of scratch memory on stream s (the workspaces' last writes
    leave L2 warm otherwise)."""
    from .kernel.cuda import driver

    dev = _ok(d.cuDeviceGet(driver.current_device()), "cuDeviceGet")
    l2 = int(_ok(d.cuDeviceGetAttribute(d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev),
                 "cuDeviceGetAttribute(L2_CACHE_SIZE)"))
    n = max(4, 2 * l2)
    ptr = _ok(d.cuMemAlloc(n), "cuMemAlloc")
    try:
        _ok(d.cuMemsetD32Async(ptr, 0, n // 4, s), "cuMemsetD32Async")
    finally:
        _ok(d.cuMemFree(ptr), "cuMemFree")


def assert_(cond: Any, msg: Optional[str] = None) -> None:
    """Check cond; a false (static) condition raises AssertionError with msg."""
    from .kernel.frontend.control import _is_dynamic
    from .errors import TraceError

    if _is_dynamic(cond):
        raise TraceError("cute.testing.assert_: runtime (per-thread) assertions inside kernels are not supported "
                         "by cutelab yet; the condition must be known at trace time")
    if not cond:
        raise AssertionError(msg or "cute.testing.assert_ failed")


def get_workspace_count(one_workspace_bytes: int, warmup_iterations: int, iterations: int) -> int:
    """How many workspaces of one_workspace_bytes make every benchmark call start with a cold L2
    (three L2 caches' worth, at most one per call), as CuTe DSL's testing.get_workspace_count.
    The L2 size is the GPU's (torch's device properties), 50 MiB (an H100's) without one.

    >>> get_workspace_count(1 << 30, 2, 10)
    1
    """
    l2 = 50 * 1024 * 1024
    try:
        import torch

        if torch.cuda.is_available():
            l2 = int(getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "L2_cache_size", l2))
    except ImportError:
        pass
    n = (l2 * 3) // max(1, int(one_workspace_bytes)) + 1
    return min(warmup_iterations + iterations, n)
