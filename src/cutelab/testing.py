"""``cute.testing``: timing and checking helpers of CuTe DSL examples (benchmark, JitArguments,
assert_).

``benchmark`` times a compiled function (``cute.compile``'s result) over fresh workspaces: on a
GPU with CUDA events around each call... here with ``time.perf_counter`` after a device
synchronize (torch's, when the arguments live on a GPU), so CPU-interpreted kernels time too.

>>> JitArguments(1, 2, k=3)
JitArguments(args=(1, 2), kwargs={'k': 3})
"""

from __future__ import annotations

import time
from typing import Any, Callable, Optional

__all__ = ["JitArguments", "benchmark", "assert_", "get_workspace_count"]


class JitArguments:
    """The arguments of one call of a compiled function (a benchmark workspace)."""

    def __init__(self, *args: Any, **kwargs: Any):
        self.args = args
        self.kwargs = kwargs

    def __repr__(self) -> str:
        return f"JitArguments(args={self.args!r}, kwargs={self.kwargs!r})"


def _sync(args: Any) -> None:
    for a in args:
        owner = getattr(getattr(a, "engine", None), "obj", None)
        cand = owner if owner is not None else a
        if type(cand).__module__.startswith("torch") and getattr(cand, "is_cuda", False):
            import torch

            torch.cuda.synchronize(cand.device)
            return


def benchmark(callable: Callable, *, warmup_iterations: int = 10, iterations: int = 100,
              stream: Any = None, kernel_arguments: Optional[JitArguments] = None,
              workspace_generator: Optional[Callable[[], JitArguments]] = None, workspace_count: int = 1,
              use_cuda_graphs: bool = False) -> float:
    """Average microseconds per call of callable, after warmup_iterations untimed calls; with a
    workspace_generator, calls cycle through workspace_count fresh argument sets (cold caches)."""
    if iterations < 1 or warmup_iterations < 0 or workspace_count < 1:
        raise ValueError(f"benchmark: iterations ({iterations}) must be >= 1, warmup_iterations "
                         f"({warmup_iterations}) >= 0 and workspace_count ({workspace_count}) >= 1")
    if workspace_generator is not None:
        spaces = [workspace_generator() for _ in range(workspace_count)]
    elif kernel_arguments is not None:
        spaces = [kernel_arguments]
    else:
        spaces = [JitArguments()]
    for i in range(warmup_iterations):
        w = spaces[i % len(spaces)]
        callable(*w.args, **w.kwargs)
    _sync(spaces[0].args)
    t0 = time.perf_counter()
    for i in range(iterations):
        w = spaces[i % len(spaces)]
        callable(*w.args, **w.kwargs)
    _sync(spaces[0].args)
    return (time.perf_counter() - t0) / iterations * 1e6


def assert_(cond: Any, msg: Optional[str] = None) -> None:
    """Check cond; a false (static) condition raises AssertionError with msg."""
    from .kernel.control import _is_dynamic
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
