"""Pass ``coarsen``: each CUDA block runs F consecutive logical blocks.

The CUDA block runs them statement by statement (all their loads before their stores), so each
thread has F times the bytes in flight. F is ``Options.coarsen`` (``CUTELAB_CUDA_COARSEN``, 1 by
default: off), halved until it divides the grid. Same kernels as ``remap``. ``schedule_of``
combines the two passes' decisions into the schedule the printer prints and the launch uses.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

from ..ir.nodes import KernelIR
from .remap import schedulable


def run(ir: KernelIR, plan: Any, options: Any) -> None:
    if not schedulable(ir):
        return
    G, f = ir.grid[0], options.coarsen
    while f > 1 and G % f:
        f //= 2
    plan.coarsen = f


def schedule_of(G: int, coarsen: int, order: Optional[List[Tuple[int, int, int]]]) -> dict:
    """The schedule of G logical blocks run F = coarsen per CUDA block in the order of ``order``
    (mixed-radix modes (d, s, stride) of bid.x, least significant first; None: as numbered)."""

    def logical_to_bid(L: Any) -> Any:
        """Logical block L (in run order) -> bid.x, in Python (numpy-friendly)."""
        if order is None:
            return L
        out, D = 0, 1
        for md, ms, _ in order:
            out = out + ((L // D) % ms) * md
            D *= ms
        return out

    return {"grid": (G // coarsen, 1, 1), "coarsen": coarsen, "order": order, "remapped": order is not None,
            "logical_to_bid": logical_to_bid}
