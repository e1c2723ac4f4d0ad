"""Pass ``share``: an index sum of several terms is a local, shared by the accesses of its scope.

A sum that reads no register and is more than one scaled index (e.g. ``8 * (tid.x % 16) + 256 *
(tid.x / 16) + 128 * (bid.x % f)``) is declared as a local the first time an access needs it, and
the accesses of the same C scope (or of scopes inside it) that differ from it by a constant add
that constant to the local. NVRTC then parses, inlines and CSEs each sum once instead of once per
access. The plan's ``share`` turns it on; ``shareable(e)`` says which sums it takes (the printer
declares the locals, following the scopes of the code it prints).
"""

from __future__ import annotations

from typing import Any

from ..ir.nodes import KernelIR
from ..ir.symbolic import DynDiv, Lin, Mul, Swz

# index variables that keep their value within a C scope (thread and block indices, scalar
# arguments, loop variables): an expression of only these has the same value wherever its C text
# is in scope; a register (RegVar, "reg.") may be assigned in between
PURE = ("tid.", "bid.", "arg.", "loop.")


def shareable(e: Lin) -> bool:
    """Whether the terms of the pure sum e are worth a local: more than one (scaled) index, or one
    division, product or swizzle."""
    terms = e.terms
    return not (len(terms) == 1 and not isinstance(terms[0][0], (DynDiv, Mul, Swz)))


def run(ir: KernelIR, plan: Any, options: Any) -> None:
    plan.share = True
