"""Pass ``uniform``: a warp index (``tid.x // 32``, a warpgroup index ``tid.x // 128``, the warp of a
warpgroup ``(tid.x % 128) // 32``) is the same in every lane of a warp, but ptxas cannot see that in
``threadIdx.x / 32u``: it keeps such a value in per-thread registers, a branch on it (``if warp_idx
== 0:``, the producer warp of a pipeline) is divergent for it, and every value the branch's arms
assign (a pipeline's stage counter, the k-tile index of a TMA load) is then per-thread too, so a
wgmma descriptor or TMA operand built from it moves to the uniform datapath with ``R2UR`` at each
use (or, for TMA, in a loop over the lanes' distinct values). CuTe DSL's ``make_warp_uniform``
broadcasts lane 0's value with ``shfl.sync.idx``, which ptxas knows is warp-uniform. This pass
has the printer do so for every such division of the thread index: a local computed once at the
kernel's entry, ``__shfl_sync(0xffffffffu, threadIdx.x / 32u, 0)``.

Sound where a warp's 32 lanes agree on ``tid.x // c`` (c a multiple of 32) and all of them run the
kernel's entry: the block has a multiple of 32 threads, and either is one-dimensional or its x
extent is a multiple of 32 (a warp then lies in one row). The plan's ``uniform`` turns it on;
``warp_uniform(e)`` says which expressions it takes.
"""

from __future__ import annotations

from typing import Any

from ..ir.nodes import KernelIR
from ..ir.symbolic import FloorDiv, Mod, Var


def _tid_x(e: Any) -> bool:
    return type(e) is Var and e.name == "tid.x"


def warp_uniform(e: Any) -> bool:
    """Whether e is ``tid.x // c`` or ``(tid.x % m) // c``, c and m multiples of 32 (the same in
    every lane of a warp of a block whose warps lie in one row)."""
    if not isinstance(e, FloorDiv) or e.c <= 0 or e.c % 32:
        return False
    a = e.a
    return _tid_x(a) or (isinstance(a, Mod) and a.c > 0 and a.c % 32 == 0 and _tid_x(a.a))


def run(ir: KernelIR, plan: Any, options: Any) -> None:
    bx, by, bz = (tuple(ir.block) + (1, 1, 1))[:3]
    n = bx * by * bz
    plan.uniform = n % 32 == 0 and (bx % 32 == 0 or by * bz == 1)
