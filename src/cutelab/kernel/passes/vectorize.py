"""Pass ``vectorize``: the elements of a load or store that are contiguous in memory and provably
aligned move as one access of 16, 8, 4 or 2 bytes, as CuTe's copy does.

Alignment is proved from the base pointer's alignment (``from_dlpack(..., assumed_align=16)``,
or what the launch proved of the actual pointer: ``Param.code_align``) and the divisibility of
the symbolic offset. The plan's ``vectors[id(op)]`` lists (first element, elements) over the
op's offsets for every Load and Store of the kernel. Off: one access per element.
"""

from __future__ import annotations

from math import gcd
from typing import Any, List, Optional, Tuple

from ..ir.nodes import KernelIR, Load, Param, Store, pow2_divisor, walk
from ..ir.symbolic import Expr, sym_div


def addr_align(param: Param, base: Any, off: int) -> int:
    """Bytes of alignment provable for &param[base + off]."""
    e = param.dtype.bytes
    if isinstance(base, Expr):
        d = gcd(sym_div(base), abs(off)) if off else sym_div(base)
    else:
        d = abs(int(base) + off)
    align = getattr(param, "code_align", None) or param.align  # the launch's proved alignment of the pointer
    if d == 0:
        return align
    return min(align, pow2_divisor(d * e))


def vector_plan(param: Param, base: Any, offsets: Tuple[int, ...], reg_start: Optional[Any] = None) -> List[Tuple[int, int]]:
    """Split element positions [0, n) into (start, count) accesses: count elements at once where
    they are contiguous in memory and the address is aligned to count * element bytes (at most 16).

    ``reg_start(i, k)`` may veto a vector (e.g. when the register side is not aligned).
    """
    e = param.dtype.bytes
    n = len(offsets)
    out = []
    i = 0
    while i < n:
        k_done = 1
        for w in (16, 8, 4, 2):
            k = w // e
            if k <= 1 or i + k > n or (i * e) % w:
                continue
            o = offsets[i]
            if any(offsets[i + j] != o + j for j in range(k)):
                continue
            if addr_align(param, base, o) < w:
                continue
            if reg_start is not None and not reg_start(i, k):
                continue
            k_done = k
            break
        out.append((i, k_done))
        i += k_done
    return out


def run(ir: KernelIR, plan: Any, options: Any) -> None:
    for op in walk(ir.body):
        if isinstance(op, (Load, Store)):
            plan.vectors[id(op)] = vector_plan(op.param, op.base, op.offsets)
