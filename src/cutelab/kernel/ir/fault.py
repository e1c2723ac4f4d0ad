"""A traced operation that is an error only if a thread runs it: CuTe DSL compiles it (a register
fragment read at a static index past its end), and what it does on the GPU is undefined. A kernel may
hold one in a branch its threads never take (flash_attn.cute 4.0.0b27's LSE epilogue loops over the
columns of a fragment with one register per row, under a row predicate that is false for those
indices). The CPU interpreter raises LaunchError naming the operation and the user's line when an
active thread reaches it; the CUDA printer prints ``__trap()`` there, so the GPU stops instead of
reading an undefined value.

Such a read gives an ``UndefinedValue`` (frontend/engines.py): the Fault is placed where the value is *used* (each time
its registers are taken), not at the read, and a store of the value itself to global or shared
memory is dropped. That is what CuTe DSL's compiled kernel does: LLVM makes the out-of-range read
of the register array a poison value and erases the store of it (CuTe DSL 4.8.1, sm_90a: the PTX of
``for m in range_constexpr(4): if tidx < 64: g[100 + tidx + 7 * m] = r[m]`` with a fragment ``r``
of 2 registers has the stores of m = 0 and 1 only). flash_attn.cute's SM90 forward runs such stores
(its LSE epilogue's extra rows are not predicated off there, as the row step of its accumulator
mode is 0); any other use of the value still faults when a thread runs it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import LaunchError
from .nodes import Op


class Fault(Op):
    """Raises (CPU) or traps (GPU) when an active thread reaches it: ``what`` says why."""

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        self.what = what

    def __repr__(self) -> str:
        return f"fault({self.what!r})"

    def accesses(self) -> list:
        return []

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        if mask is None or np.any(mask):
            where = getattr(self, "loc", None)
            raise LaunchError(f"{b.ir.name}: {self.what}" + (f" at {where}" if where else "")
                              + ", and a thread ran it (on the GPU the result would be undefined)")

    def cuda(self, r: Any) -> None:
        r.emit("__trap();  // " + self.what.replace("\n", " "))
