"""Pass ``remap``: logical blocks run in the order of the memory they touch.

When the accessed offsets depend on ``bid.x`` only through mixed-radix digits
``((bid.x // d) % s) * stride`` and the digits are not already in stride order, the plan's
``block_order`` lists them sorted by stride: CUDA block b then runs the logical block whose digits
are b's read in that order, so blocks running together stream through memory. Blocks share
nothing and CUDA runs them in any order, so any order is a schedule CUDA itself could have
chosen. Straight-line kernels with a 1-D grid and no printf only (whose output order would change).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ..ir.nodes import KernelIR, Load, Printf, Store
from ..ir.symbolic import Expr, FloorDiv, Lin, Mod, Var, atoms


def schedulable(ir: KernelIR) -> bool:
    """Whether the block schedule may change (``remap`` and ``coarsen``): never in a cluster launch,
    whose CTAs are grouped by their CUDA block index, nor in a kernel that reads the grid's size
    (``cute.arch.grid_dim()``: a coarsened launch's gridDim is not the grid the kernel was written for)."""
    return (not ir.structured and getattr(ir, "cluster", (1, 1, 1)) == (1, 1, 1) and ir.grid[1] == 1 and ir.grid[2] == 1
            and not any(isinstance(s, Printf) for s in ir.stmts)
            and not ({"nctaid", "nclusterid"} & getattr(ir, "dims_read", frozenset())))


def bid_modes(ir: KernelIR) -> Optional[List[Tuple[int, int, int]]]:
    """The block index's role in the accessed offsets as mixed-radix modes (d, s, |coef|):
    offsets depend on bid.x only through ((bid.x // d) % s) * coef. None if they do not."""
    G = ir.grid[0]
    modes: Dict[Tuple[int, int], int] = {}

    def classify(atom: Any) -> Optional[Tuple[int, int]]:
        if isinstance(atom, Var):
            return (1, G) if atom.name == "bid.x" else (0, 0)
        if isinstance(atom, Mod):
            a = atom.a
            if isinstance(a, Var) and a.name == "bid.x":
                return (1, atom.c)
            if isinstance(a, FloorDiv) and isinstance(a.a, Var) and a.a.name == "bid.x":
                return (a.c, atom.c)
        if isinstance(atom, FloorDiv) and isinstance(atom.a, Var) and atom.a.name == "bid.x":
            return (atom.c, -(-G // atom.c))
        if any(v.name == "bid.x" for v in atoms(atom)):
            return None  # bid.x mixed with something else
        return (0, 0)

    for st in ir.stmts:
        if isinstance(st, (Load, Store)) and isinstance(st.base, Expr):
            terms = st.base.terms if isinstance(st.base, Lin) else ((st.base, 1),)
            for atom, c in terms:
                m = classify(atom)
                if m is None:
                    return None
                if m != (0, 0):
                    modes[m] = min(modes.get(m, abs(c)), abs(c))
    ordered = sorted(modes.items())
    d = 1
    out = []
    for (md, ms), c in ordered:
        if md != d:
            return None
        out.append((md, ms, c))
        d *= ms
    if d != G:
        return None
    return out


def run(ir: KernelIR, plan: Any, options: Any) -> None:
    if not schedulable(ir):
        return
    modes = bid_modes(ir)
    if modes and len(modes) > 1:
        by_stride = sorted(modes, key=lambda m: m[2])
        if by_stride != modes:
            plan.block_order = by_stride
