"""``exit``: a thread stops running the kernel (PTX ``exit``; ``cutlass.experimental.primitives.exit``).

The threads that run the op leave the kernel there; the others go on. On the CPU the op records the
exiting threads (``ctx.common["exiting"]``) and the scheduler (``kernel.cpu.warps``) takes them out of
every mask of their group's position and counts them as finished: ``sync_threads`` (``bar.sync 0``)
then waits only for the threads that have not exited, as PTX guarantees for CTA barriers; an mbarrier
is not completed for them (a wait on arrivals an exited thread never made is a deadlock, reported as
such). CUDA: ``asm volatile("exit;")``.

May import: ``kernel.ir``, ``kernel.frontend``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir.nodes import Op
from ..frontend.trace import current

__all__ = ["ExitOp", "exit_thread"]


class ExitOp(Op):
    """The threads that run it leave the kernel."""

    __slots__ = ("where",)
    exits = True  # the scheduler takes the exiting threads out of their group (kernel/cpu/warps.py)

    def __init__(self, where: str):
        self.where = where

    def __repr__(self) -> str:
        return "exit"

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        act = np.ones(b.n, dtype=bool) if mask is None else mask.copy()
        prev = b.common.get("exiting")
        b.common["exiting"] = act if prev is None else (prev | act)

    def cuda(self, r: Any) -> None:
        r.emit('asm volatile("exit;" ::: "memory");')


def exit_thread(where: str = "") -> None:
    """Emit an ExitOp: the threads that reach it stop running the kernel."""
    current("exit").emit(ExitOp(where))
