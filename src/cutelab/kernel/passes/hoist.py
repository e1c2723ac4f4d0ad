"""Pass ``hoist``: a runtime division of thread/block indices and scalar arguments only (e.g.
``bid.x // raster``) has the same value everywhere in the kernel: it is computed once, at the
kernel's entry (a division by zero there does not trap: its value is only used where the code
used it). A division that reads registers or loop variables stays where it is.

Not under a block schedule (``remap``/``coarsen``), where ``bid.x`` differs per logical block.
The plan's ``hoist`` turns it on; ``hoistable(e)`` says which divisions it takes.
"""

from __future__ import annotations

from typing import Any

from ..ir.nodes import KernelIR
from ..ir.symbolic import Var, atoms


def hoistable(e: Any) -> bool:
    """Whether the runtime division e reads only thread/block indices and scalar arguments."""
    return all(isinstance(v, Var) and v.name.startswith(("tid.", "bid.", "arg.")) for v in atoms(e))


def run(ir: KernelIR, plan: Any, options: Any) -> None:
    plan.hoist = plan.schedule is None
