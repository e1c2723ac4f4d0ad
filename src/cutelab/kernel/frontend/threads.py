"""Threads inside a traced kernel: a thread's lane and warp, the block barrier and ``elect_one``;
``cute.arch`` (``arch.py``) names them, instructions (``kernel.instr``) use them.
"""

from __future__ import annotations

from .trace import current, thread_idx

__all__ = ["lane_idx", "warp_idx", "sync_threads", "elect_one"]


def lane_idx():
    """The thread's lane in its warp (thread_idx().x % 32 for 1-D blocks)."""
    tx, ty, tz = thread_idx()
    bx, by, _ = current("cute.arch.lane_idx()").block  # the traced launch's block: indices stay linear
    return (tx + ty * bx + tz * bx * by) % 32


def warp_idx():
    """The warp's index in the block."""
    tx, ty, tz = thread_idx()
    bx, by, _ = current("cute.arch.warp_idx()").block
    return (tx + ty * bx + tz * bx * by) // 32


def sync_threads() -> None:
    """A block-wide barrier (``__syncthreads()``): shared-memory writes before it are seen by
    every thread of the block after it."""
    from ..ir.nodes import Barrier
    from .trace import current

    current("cute.arch.sync_threads()").emit(Barrier())


class _ElectOne:
    """``with cute.arch.elect_one():``: the body runs in one thread of each warp (lane 0)."""

    def __enter__(self) -> None:
        from .trace import current

        t = current("cute.arch.elect_one()")
        self._op = t.begin_if(lane_idx() == 0)
        self._outer = t.cur
        t.cur = self._op.then

    def __exit__(self, *exc) -> None:
        from .trace import current

        current("cute.arch.elect_one()").cur = self._outer


def elect_one(*, loc=None, ip=None) -> _ElectOne:
    """A context whose body one thread of each warp runs (``elect.sync``; here lane 0)."""
    return _ElectOne()
