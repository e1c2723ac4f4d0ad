"""Swizzled shared memory inside traced kernels.

A swizzled shared-memory tensor is kept as CuTe keeps a swizzled pointer: a plain layout (its
offsets linear in the coordinates, so slicing and partitioning with thread-dependent
coordinates stay symbolic sums) over an engine that swizzles the final element offset, counted
from the start of the shared array: element ``i`` of the tensor lives at
``swizzle(offset + layout(i))``. A ``ComposedLayout`` ``S o 0 o L`` allocated in shared memory
becomes this (layout L, swizzle S in element units, as CuTe DSL evaluates a ComposedLayout); a
pointer swizzle given in byte units (``get_tensor(layout, swizzle=S<3,4,3>)``) is turned into
element units first.

Accesses split into runs the swizzle keeps contiguous (it never moves the bits below m), each a
``Load``/``Store`` whose base is the symbolic ``swizzle(...)`` expression
(``cutelab.kernel.symbolic.Swz``), so both back ends and the launch's bounds checks see
ordinary accesses.
"""

from __future__ import annotations

from typing import Any, List, Sequence, Tuple

from ..errors import TraceError
from .symbolic import add, is_sym, sym_div, swizzle_expr
from .trace import Load, Store, SmemEngine, TraceValue, _refs_of, _static_offsets, current

__all__ = ["SwizzledSmemEngine", "element_swizzle", "smem_runs"]


def _log2(n: int) -> int:
    return n.bit_length() - 1


def element_swizzle(sw: Any, elem_bytes: int, units: str, what: str) -> Any:
    """The Swizzle acting on element offsets for sw given in 'elements' or 'bytes'."""
    from ..swizzle import Swizzle

    if units == "elements" or sw.num_bits == 0:
        return sw
    e = _log2(elem_bytes)
    if sw.num_base < e:
        raise TraceError(f"{what}: the byte swizzle {sw} moves bits inside one {elem_bytes}-byte element "
                         f"(its base {sw.num_base} < log2({elem_bytes})); it has no element form")
    return Swizzle(sw.num_bits, sw.num_base - e, sw.num_shift)


def smem_runs(sw: Any, base: Any, offsets: Sequence[int]) -> List[Tuple[Any, Tuple[int, ...], List[int]]]:
    """Split the accesses ``swizzle(base + offsets[i])`` into runs of consecutive elements that
    the swizzle keeps together: a list of (swizzled base, offsets inside the run, positions i).

    >>> from cutelab.swizzle import Swizzle
    >>> from cutelab.kernel.symbolic import Var
    >>> t = Var("tid.x", 32)
    >>> [(b.expr_str(), o, p) for b, o, p in smem_runs(Swizzle(3, 3, 3), t * 64, range(16))]
    [('swizzle<3,3,3>((64 * tid.x))', (0, 1, 2, 3, 4, 5, 6, 7), [0, 1, 2, 3, 4, 5, 6, 7]), ('swizzle<3,3,3>((64 * tid.x + 8))', (0, 1, 2, 3, 4, 5, 6, 7), [8, 9, 10, 11, 12, 13, 14, 15])]
    """
    b, m, s = sw.num_bits, sw.num_base, sw.num_shift
    chunk = 1 << m
    aligned = sym_div(base) % chunk == 0  # then base + o sits at o % chunk inside its chunk
    runs: List[Tuple[Any, Tuple[int, ...], List[int]]] = []
    cur: List[int] = []
    offsets = [int(o) for o in offsets]

    def flush() -> None:
        if cur:
            o0 = offsets[cur[0]]
            runs.append((swizzle_expr(add(base, o0) if is_sym(base) else int(base) + o0, b, m, s),
                         tuple(offsets[i] - o0 for i in cur), list(cur)))
            cur.clear()

    for i, o in enumerate(offsets):
        if cur and aligned and o == offsets[cur[-1]] + 1 and o % chunk != 0:
            cur.append(i)
            continue
        flush()
        cur.append(i)
    flush()
    return runs


class SwizzledSmemEngine(SmemEngine):
    """A shared array read and written through a swizzle of its element offsets."""

    def __init__(self, param: Any, swizzle: Any):
        super().__init__(param)
        self.swizzle = swizzle  # element units

    def alignment(self, offset: Any) -> int:
        a = super().alignment(offset)
        return min(a, max(self.dtype.bytes, (1 << self.swizzle.num_base) * self.dtype.bytes))

    def ptr_str(self, offset: Any) -> str:
        a = self.alignment(offset)
        al = f", align<{a}>" if a > self.dtype.bytes else ""
        return f"ptr<{self.dtype.name}, {self.memspace}{al}, {self.swizzle}>"

    def runs(self, offset: Any, offsets: Sequence[int]) -> List[Tuple[Any, Tuple[int, ...], List[int]]]:
        return smem_runs(self.swizzle, offset, offsets)

    def load(self, offset: Any, layout: Any) -> TraceValue:
        t = current("loading from a tensor")
        t.check_index(offset, "load")
        offs = _static_offsets(layout, "load")
        refs: List[Any] = [None] * len(offs)
        self.param.read = True
        for base, run, pos in self.runs(offset, offs):
            dst = t.new_reg(self.dtype, len(run))
            t.emit(Load(dst, self.param, base, run))
            for j, p in enumerate(pos):
                refs[p] = (dst, j)
        return TraceValue(refs, layout.shape, self.dtype)

    def store(self, offset: Any, layout: Any, value: Any) -> None:
        t = current("storing to a tensor")
        t.check_index(offset, "store")
        offs = _static_offsets(layout, "store")
        refs = _refs_of(value, len(offs), self.dtype, "store", f"a swizzled {self.param.name} tensor of layout {layout}")
        self.param.written = True
        for base, run, pos in self.runs(offset, offs):
            t.emit(Store(self.param, base, run, tuple(refs[p] for p in pos)))

    def read_one(self, off: Any) -> TraceValue:
        t = current("reading a tensor element")
        t.check_index(off, "read")
        dst = t.new_reg(self.dtype, 1)
        self.param.read = True
        sw = self.swizzle
        t.emit(Load(dst, self.param, swizzle_expr(off, sw.num_bits, sw.num_base, sw.num_shift), (0,)))
        return TraceValue([(dst, 0)], (), self.dtype)

    def write_one(self, off: Any, v: Any) -> None:
        t = current("writing a tensor element")
        t.check_index(off, "write")
        refs = _refs_of(v, 1, self.dtype, "store", f"an element of {self.param.name}")
        self.param.written = True
        sw = self.swizzle
        t.emit(Store(self.param, swizzle_expr(off, sw.num_bits, sw.num_base, sw.num_shift), (0,), refs))
