"""A register fragment read or written at a runtime base offset: ``frag[i]`` with ``i`` a loop
variable or a value computed in the kernel, or a slice of it loaded or stored whole
(``frag[(None, None, s)].load()`` inside ``cutlass.range``, as CUTLASS's blockwise GEMM scales its
accumulator one subtile per iteration). CuTe DSL compiles both: the loop is an ``scf.for`` whose body
is traced once, the fragment a stack array indexed at run time (registers again once the loop is
unrolled, local memory if not). Registers have no addresses here, so the tracer selects among the
fragment's registers.

The base offset's candidates are the values it can take that keep the whole layout inside the
fragment: for an index expression, the multiples of its divisor in its range (a subtile index
``s * 32`` with ``s`` in 0..3 has four); for a value in a register, every such offset. A read is a
tree of selects on the candidate number's bits (log2(candidates) levels, each one vector
``select`` over every element); a write sets each register a candidate covers to
``base == candidate ? value : old`` (one comparison and one select per group of candidates that
cover disjoint registers). A base that may fall outside the candidates gets a check that raises on
the CPU (``ir.fault.Fault``) and traps on the GPU when a thread runs it out of range, naming the
user's line; one proved in range gets none.

Used by ``engines.RmemEngine`` (``read_one``/``write_one``, ``load``/``store``).
"""

from __future__ import annotations

from typing import Any, List, Sequence

from ..ir.fault import Fault
from ..ir.symbolic import is_sym, sym_div, sym_range
from .trace import TraceValue, current

__all__ = ["read_at", "write_at", "read_block", "write_block", "is_runtime_index", "candidates"]


def is_runtime_index(off: Any) -> bool:
    """off is a value known only when the kernel runs (a symbolic index over a range, or a value in
    a register), not a static offset."""
    if is_sym(off):
        lo, hi = sym_range(off)
        return lo != hi
    return isinstance(off, TraceValue)


def candidates(off: Any, n: int, offs: Sequence[int]) -> List[int]:
    """The base offsets off can take at run time that keep every static offset of offs inside a
    fragment of n registers: multiples of off's divisor in its range for an index expression,
    every such offset for a value in a register.

    >>> from cutelab.kernel.ir.nodes import LoopVar
    >>> s = LoopVar("s", 0, 3, 1)
    >>> candidates(s * 32, 128, range(32))
    [0, 32, 64, 96]
    >>> candidates(s * 32, 100, range(32))  # 96 + 31 is past the fragment
    [0, 32, 64]
    """
    vlo, vhi = -int(min(offs)), n - 1 - int(max(offs))
    if is_sym(off):
        lo, hi = sym_range(off)
        d = abs(sym_div(off)) or 1
        lo, hi = max(lo, vlo), min(hi, vhi)
        first = -((-lo) // d) * d  # the least multiple of d at or above lo
        return list(range(first, hi + 1, d))
    return list(range(vlo, vhi + 1))


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


def _where(op: str, off: Any, n: int, what: str) -> str:
    from ...errors import user_location

    at = user_location()
    shown = off.expr_str() if is_sym(off) else str(off)
    return f"{op}{f' at {at}' if at else ''}: {what} of a fragment of {n} registers at the runtime offset {shown}"


def _prepare(frag: Any, off: Any, offs: Sequence[int], op: str) -> tuple:
    """(tracer, the index as a TraceValue, the candidate bases) with the range check emitted."""
    from ...errors import TraceError

    t = current("indexing a register fragment")
    n = len(frag.slots)
    offs = list(offs)
    cands = candidates(off, n, offs)
    what = "an element" if len(offs) == 1 and offs[0] == 0 else f"{len(offs)} elements"
    if not cands:
        lo, hi = sym_range(off) if is_sym(off) else (None, None)
        raise TraceError(_where(op, off, n, what) + (f", which takes values {lo}..{hi}" if lo is not None else "")
                         + f": no value of it keeps the static offsets {min(offs)}..{max(offs)} inside the fragment")
    idx = _index(off, op)
    lo, hi = sym_range(off) if is_sym(off) else (None, None)
    if lo is None or lo < cands[0] or hi > cands[-1]:
        out = (idx < cands[0]) | (idx > cands[-1])
        (ref,) = out.refs
        branch = t.begin_if(ref)
        outer = t.cur
        t.cur = branch.then
        t.emit(Fault(f"{op}: the runtime index of a register fragment left its {n} registers"
                     if what == "an element" else
                     f"{op}: the runtime offset of {what} of a register fragment left its {n} registers"))
        t.cur = outer
    return t, idx, cands


def read_block(frag: Any, off: Any, offs: Sequence[int], shape: Any, op: str = "load") -> TraceValue:
    """The elements of frag (an engines.RmemEngine) at off + each of the static offsets offs, for a
    runtime off, as a value of the given shape."""
    _, idx, cands = _prepare(frag, off, offs, op)
    n, w = len(frag.slots), len(offs)
    every = list(frag._get(range(n), (n,)).refs)
    groups = [[every[c + int(o)] for o in offs] for c in cands]
    if len(groups) > 1:
        k = idx - cands[0]
        d = cands[1] - cands[0]
        if d > 1:
            k = k // d
        bit = 1
        while len(groups) > 1:
            if len(groups) % 2:
                groups.append(groups[-1])  # past the last candidate: the range check stops such a thread
            m = len(groups) // 2
            take_hi = (k & bit) != 0
            hi = TraceValue([r for g in groups[1::2] for r in g], (m * w,), frag.dtype)
            lo = TraceValue([r for g in groups[0::2] for r in g], (m * w,), frag.dtype)
            got = list(take_hi._emit("select", (take_hi, hi, lo), frag.dtype, frag.dtype).refs)
            groups = [got[j * w:(j + 1) * w] for j in range(m)]
            bit <<= 1
    return TraceValue(groups[0], shape, frag.dtype)


def write_block(frag: Any, off: Any, offs: Sequence[int], refs: Sequence[Any], op: str = "store") -> None:
    """frag[off + offs[e]] = refs[e] for a runtime off (refs: element references of frag's type)."""
    from ...numeric import Boolean, Int32

    _, idx, cands = _prepare(frag, off, offs, op)
    offs = [int(o) for o in offs]
    if len(cands) == 1:
        frag._put([cands[0] + o for o in offs], list(refs))
        return
    n = len(frag.slots)
    new = list(frag._get(range(n), (n,)).refs)
    # candidates in groups that cover disjoint registers: one comparison and one select per group
    groups: List[tuple] = []
    for c in cands:
        regs = {c + o for o in offs}
        for g in groups:
            if not (g[0] & regs):
                g[0].update(regs)
                g[1].append(c)
                break
        else:
            groups.append((set(regs), [c]))
    touched: set = set()
    for _, cs in groups:
        pos = [c + o for c in cs for o in offs]
        which = [c for c in cs for _ in offs]
        vals = [r for _ in cs for r in refs]
        m = len(pos)
        wide = TraceValue(list(idx.refs) * m, (m,), Int32)
        hit = wide._emit("eq", (wide, TraceValue(which, (m,), Int32)), Boolean, Int32)
        old = TraceValue([new[p] for p in pos], (m,), frag.dtype)
        got = hit._emit("select", (hit, TraceValue(vals, (m,), frag.dtype), old), frag.dtype, frag.dtype).refs
        for p, r in zip(pos, got):
            new[p] = r
        touched.update(pos)
    keep = sorted(touched)
    frag._put(keep, [new[p] for p in keep])


def read_at(frag: Any, off: Any, op: str = "read") -> Any:
    """frag[off] for a runtime off (frag: an engines.RmemEngine)."""
    return read_block(frag, off, [0], (), op)


def write_at(frag: Any, off: Any, ref: Any, op: str = "write") -> None:
    """frag[off] = ref for a runtime off (ref: one element reference of frag's type)."""
    write_block(frag, off, [0], [ref], op)

