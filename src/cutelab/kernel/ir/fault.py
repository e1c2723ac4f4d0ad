"""A traced operation that is an error only if a thread runs it: CuTe DSL compiles it (a register
fragment read at a static index past its end), and what it does on the GPU is undefined. A kernel may
hold one in a branch its threads never take (flash_attn.cute 4.0.0b27's LSE epilogue loops over the
columns of a fragment with one register per row, under a row predicate that is false for those
indices). The CPU interpreter raises LaunchError naming the operation and the user's line when an
active thread reaches it; the CUDA printer prints ``__trap()`` there, so the GPU stops instead of
reading an undefined value.
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
