"""Pass ``index32``: offsets of accesses the launch proved in bounds are computed in 32 bits.

Where the launch proved an access in bounds (``analysis/bounds.py`` set ``ir.bounds_proved``;
the access is not guarded), its offsets lie in [0, param.length); with the lowest offset at or
above 0 and fewer than 2**32 elements, the base offset is computed as an ``unsigned int`` modulo
2**32, which is exact there (a 64-bit sum of products becomes 32-bit instructions; CuTe DSL
computes these in i32). The printer does so where the offset would otherwise need a 64-bit type.
The plan's ``index32`` turns it on; ``Plan.narrow(op, param, offsets)`` says which accesses it takes.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..ir.nodes import KernelIR


def narrow(ir: KernelIR, op: Any, param: Any, offsets: Sequence[int]) -> bool:
    """Whether the access of op to param at offsets (from a base) may be computed modulo 2**32."""
    guards = getattr(ir, "guards", None) or {}
    return (param is not None and min(offsets, default=0) >= 0 and id(op) not in guards
            and param.length <= (1 << 32))


def run(ir: KernelIR, plan: Any, options: Any) -> None:
    plan.index32 = bool(getattr(ir, "bounds_proved", False))
