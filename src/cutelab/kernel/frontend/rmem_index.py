"""A register fragment's element at a runtime index (``frag[i]`` with ``i`` a loop variable or a
value computed in the kernel): CuTe DSL compiles it (the fragment goes to local memory on the
GPU); registers have no addresses here, so the tracer selects among the fragment's registers.

A read is a tree of selects on the index's bits (log2(n) levels, each one vector ``select``); a
write replaces every register with ``index == k ? value : old``. An index that may fall outside
the fragment gets a check that raises on the CPU (``ir.fault.Fault``) and traps on the GPU
when a thread runs it out of range, naming the user's line; one proved in range gets none.

Used by ``engines.RmemEngine.read_one`` / ``write_one``.
"""

from __future__ import annotations

from typing import Any

from ..ir.fault import Fault
from ..ir.symbolic import is_sym, sym_range
from .trace import TraceValue, current

__all__ = ["read_at", "write_at", "is_runtime_index"]


def is_runtime_index(off: Any) -> bool:
    """off is a value known only when the kernel runs (a symbolic index over a range, or a value in
    a register), not a static offset."""
    if is_sym(off):
        lo, hi = sym_range(off)
        return lo != hi
    return isinstance(off, TraceValue)


def _index(off: Any, op: str) -> Any:
    from ...errors import TraceError
    from ...numeric import Int32

    if isinstance(off, TraceValue):
        if len(off.refs) != 1:
            raise TraceError(f"{op}: a register fragment's index must be one value, got a value of shape {off.shape}")
        if off.dtype.kind not in ("int", "uint"):
            raise TraceError(f"{op}: a register fragment's index must be an integer, got {off.dtype}")
        return off if off.dtype is Int32 else off.to(Int32)
    return TraceValue([off], (), Int32)


def _check_in_range(t: Any, off: Any, idx: Any, n: int, op: str) -> None:
    """Fault (CPU: LaunchError, GPU: trap) where a running thread's index leaves [0, n)."""
    if is_sym(off):
        lo, hi = sym_range(off)
        if 0 <= lo and hi < n:
            return
    out = (idx < 0) | (idx >= n)
    (ref,) = out.refs
    branch = t.begin_if(ref)
    outer = t.cur
    t.cur = branch.then
    t.emit(Fault(f"{op}: the runtime index of a register fragment left its {n} registers"))
    t.cur = outer


def read_at(frag: Any, off: Any, op: str = "read") -> Any:
    """frag[off] for a runtime off (frag: an engines.RmemEngine)."""
    t = current("reading a register fragment")
    n = len(frag.slots)
    idx = _index(off, op)
    _check_in_range(t, off, idx, n, op)
    vals = list(frag._get(range(n), (n,)).refs)
    bit = 1
    while len(vals) > 1:
        if len(vals) % 2:
            vals.append(vals[-1])  # past the end: the range check stops such a thread
        m = len(vals) // 2
        take_hi = (idx & bit) != 0
        hi = TraceValue(vals[1::2], (m,), frag.dtype)
        lo = TraceValue(vals[0::2], (m,), frag.dtype)
        vals = list(take_hi._emit("select", (take_hi, hi, lo), frag.dtype, frag.dtype).refs)
        bit <<= 1
    return TraceValue(vals[:1], (), frag.dtype)


def write_at(frag: Any, off: Any, ref: Any, op: str = "write") -> None:
    """frag[off] = ref for a runtime off (ref: one element reference of frag's type)."""
    from ...numeric import Boolean, Int32

    t = current("writing a register fragment")
    n = len(frag.slots)
    idx = _index(off, op)
    _check_in_range(t, off, idx, n, op)
    old = frag._get(range(n), (n,))
    wide = TraceValue(list(idx.refs) * n, (n,), Int32)
    hit = wide._emit("eq", (wide, TraceValue(list(range(n)), (n,), Int32)), Boolean, Int32)
    new = hit._emit("select", (hit, TraceValue([ref] * n, (n,), frag.dtype), old), frag.dtype, frag.dtype)
    frag._put(range(n), list(new.refs))
