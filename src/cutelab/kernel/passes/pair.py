"""Pass ``pair``: two adjacent lanes share their 2 x 16-byte runs, so every access moves whole
32-byte sectors.

Where a global load of a read-only tensor or a global store moves a contiguous 32-byte run as two
16-byte accesses (``vectorize``) and lanes 2p and 2p+1 (same warp) access runs exactly 32 bytes
apart, lane 2p loads/stores the first 16 bytes of both runs and lane 2p+1 the second ones; a
shuffle swaps the halves. The plan's ``pairs[id(op)]`` holds the starts i of the vector pairs
(i, h), (i + h, h). Straight-line kernels only, and not the accesses ``retile`` took.
"""

from __future__ import annotations

from typing import Any, List, Set, Tuple

import numpy as np

from ..ir.nodes import KernelIR, Load, Param, Shared, Store
from ..ir.symbolic import Expr, Lin, add, atoms, evaluate, mul


def pairable(ir: KernelIR, base: Any, span: int) -> bool:
    """True when lanes 2p and 2p+1 (same warp, same tid.y/z) access runs exactly `span`
    elements apart: base = f(other indices) + g(tid.x) with g(2p+1) - g(2p) == span."""
    if ir.block[0] % 2 or ir.num_threads % 32 or not isinstance(base, Expr):
        return False
    terms = base.terms if isinstance(base, Lin) else ((base, 1),)
    g: Any = 0
    for atom, c in terms:
        names = {v.name for v in atoms(atom)}
        if "tid.x" in names:
            if names != {"tid.x"}:
                return False
            g = add(g, mul(atom, c))
    if not isinstance(g, Expr):
        return False
    v = np.asarray(evaluate(g, {"tid.x": np.arange(ir.block[0], dtype=np.int64)}))
    return bool(np.all(v[1::2] - v[0::2] == span))


def pair_groups(ir: KernelIR, p: Param, base: Any, offsets: Tuple[int, ...], plan: List[Tuple[int, int]]) -> Set[int]:
    """Starts i of plan entries (i, h), (i + h, h) forming one contiguous 32-byte run that lane pairs can share."""
    e = p.dtype.bytes
    h = 16 // e
    out = set()
    k = 0
    while k + 1 < len(plan):
        (i, a), (j, b) = plan[k], plan[k + 1]
        if a == h and b == h and j == i + h and offsets[j] == offsets[i] + h and pairable(ir, base, 2 * h):
            out.add(i)
            k += 2
        else:
            k += 1
    return out


def run(ir: KernelIR, plan: Any, options: Any) -> None:
    if ir.structured:
        return
    for op in ir.stmts:
        if not isinstance(op, (Load, Store)) or id(op) in plan.retiled or isinstance(op.param, Shared):
            continue
        if isinstance(op, Load) and op.param.written:
            continue
        got = pair_groups(ir, op.param, op.base, op.offsets, plan.vector(op))
        if got:
            plan.pairs[id(op)] = got
