"""Pass ``hoist``: a runtime division of thread/block indices and scalar arguments only (e.g.
``bid.x // raster``) has the same value everywhere in the kernel: it is computed once, at the
kernel's entry (a division by zero there does not trap: its value is only used where the code
used it). A division that reads registers or loop variables stays where it is, and so does one by a
launch dimension's expression that is 0 for the launch being printed (a mode the launch leaves empty,
``ir.symbolic._launch_zero``): it can only be in code that does not run, and at the entry every thread
would divide by zero, which C leaves undefined (a compiler may then take the divisor for nonzero).

Not under a block schedule (``remap``/``coarsen``), where ``bid.x`` differs per logical block.
The plan's ``hoist`` turns it on; ``hoistable(e)`` says which divisions it takes.
"""

from __future__ import annotations

from typing import Any

from ..ir.nodes import KernelIR
from ..ir.symbolic import Expr, Var, atoms


def hoistable(e: Any) -> bool:
    """Whether the runtime division e reads only thread/block indices and scalar arguments, and does not
    divide by a launch dimension's expression that is 0 for this launch."""
    if not all(isinstance(v, Var) and v.name.startswith(("tid.", "bid.", "arg.")) for v in atoms(e)):
        return False
    divisor = getattr(e, "b", None)
    return not (isinstance(divisor, Expr) and divisor.launch_value() == 0)


def run(ir: KernelIR, plan: Any, options: Any) -> None:
    plan.hoist = plan.schedule is None
