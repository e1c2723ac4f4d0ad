"""``cute.arch``: the thread and block indices of a traced kernel.

Indices are symbolic integers (``?`` when printed); dimensions are static ints, because a
kernel is traced for its launch shape.
"""

from __future__ import annotations

from ..errors import TraceError
from .trace import block_dim, block_idx, grid_dim, thread_idx

from .cpasync import cp_async_commit_group, cp_async_wait_group  # noqa: E402  (cp.async groups)

__all__ = ["thread_idx", "block_idx", "block_dim", "grid_dim", "lane_idx", "warp_idx", "sync_threads", "barrier",
           "cp_async_commit_group", "cp_async_wait_group"]


def lane_idx():
    """The thread's lane in its warp (thread_idx().x % 32 for 1-D blocks)."""
    tx, ty, tz = thread_idx()
    bx, by, _ = block_dim()
    return (tx + ty * bx + tz * bx * by) % 32


def warp_idx():
    """The warp's index in the block."""
    tx, ty, tz = thread_idx()
    bx, by, _ = block_dim()
    return (tx + ty * bx + tz * bx * by) // 32


def sync_threads() -> None:
    """A block-wide barrier (``__syncthreads()``): shared-memory writes before it are seen by
    every thread of the block after it."""
    from .trace import Barrier, current

    current("cute.arch.sync_threads()").emit(Barrier())


barrier = sync_threads
