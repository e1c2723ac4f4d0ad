"""When the interpreter may drop a register: the last op of the kernel body that refers to it.

The interpreter holds every register of a batch as a (threads, n) array. A kernel whose loops the
trace unrolled (CUTLASS's experimental tutorials 02/03 accumulate a Python float over K = 1024) has
thousands of registers, each live for a few ops; kept to the end of the batch, they made the
batches small (the register budget is per batch) and the run slow in Python overhead.

``plan(ir)`` finds, for each register that a ``Load`` or a ``Compute`` writes and that is not
mutable, the position in the kernel body (``ir.body.ops``) of the last top-level op that refers to
it, its own regions included: once the body has gone past that op, no op reads the register again
(a value made inside a region is not read after it: the tracer refuses that). The scheduler
(``warps.py``) drops such registers when a group of warps is back in the body past that position.
Registers that other ops write (atoms, which may complete later: wgmma, tensor-memory loads) and
mutable ones are kept to the end, as before.

``peak`` is the most register elements per thread that are ever held at once under that plan,
which sizes the batches (``interpreter.py``).

May import: ``kernel.ir``.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from ..ir.nodes import Block, Compute, KernelIR, Load, Param, Reg, Shared, walk

__all__ = ["plan"]


_LEAVES = (type, np.ndarray, np.generic, Param, Shared, KernelIR, types.ModuleType, types.FunctionType,
           types.BuiltinFunctionType, types.MethodType)
_MAX_WALK = 1 << 20  # objects one op may lead to; past it the kernel's registers are all kept


def _refs(x: Any, out: set[int], seen: set[int]) -> bool:
    """Add the ids of every register x refers to, through tuples, lists, dicts, sets, objects' fields and
    nested blocks (not a block's parent, the kernel, parameters, shared arrays, functions); False when
    the walk went past _MAX_WALK objects (then out is not complete)."""
    stack = [x]
    while stack:
        x = stack.pop()
        t = type(x)
        if t is Reg:
            out.add(x.id)
            continue
        if x is None or t in (int, float, bool, str, bytes, complex) or isinstance(x, _LEAVES):
            continue
        if id(x) in seen:
            continue
        seen.add(id(x))
        if len(seen) > _MAX_WALK:
            return False
        if t is Block:
            stack.extend(x.ops)
        elif t in (tuple, list, set, frozenset):
            stack.extend(x)
        elif t is dict:
            stack.extend(x.values())
        else:
            d = getattr(x, "__dict__", None)
            if d is not None:
                stack.extend(d.values())
            for c in t.__mro__:
                for n in getattr(c, "__slots__", ()):
                    v = getattr(x, n, None)
                    if v is not None:
                        stack.append(v)
    return True


def plan(ir: Any) -> tuple[dict[int, list[int]], int]:
    """({top-level position p: ids of the registers to drop once the body is past p}, peak register
    elements per thread); cached on the IR."""
    got = ir.__dict__.get("_cpu_liveness")
    if got is not None:
        return got
    ops = ir.body.ops
    droppable: dict[int, int] = {}  # register id -> its elements
    for op in walk(ir.body):
        if type(op) in (Load, Compute) and not op.dst.mutable:
            droppable[op.dst.id] = op.dst.n
    last: dict[int, int] = {}
    first: dict[int, int] = {}
    for p, op in enumerate(ops):
        found: set[int] = set()
        if not _refs(op, found, set()):  # an op that leads too far to be sure what it reads: keep everything
            got = ir.__dict__["_cpu_liveness"] = ({}, max(1, sum(r.n for r in ir.regs)))
            return got
        for r in found:
            if r in droppable:
                last[r] = p
                first.setdefault(r, p)
    drop: dict[int, list[int]] = {}
    for r, p in last.items():
        drop.setdefault(p, []).append(r)
    kept = sum(r.n for r in ir.regs) - sum(droppable[r] for r in last)  # held from first write to the end
    delta = np.zeros(len(ops) + 1, dtype=np.int64)
    for r, p in last.items():
        delta[first[r]] += droppable[r]
        delta[p + 1] -= droppable[r]
    peak = kept + (int(np.cumsum(delta).max()) if len(ops) else 0)
    got = ir.__dict__["_cpu_liveness"] = (drop, max(1, peak))
    return got
