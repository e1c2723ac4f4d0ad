"""A register fragment read as another element type (``cute.recast_ptr(frag.iterator, dtype=...)`` /
``cute.recast_tensor`` of a register tensor inside a kernel), as CuTe DSL views a register array's
bits: CUTLASS's Blackwell FMHA writes the f16 probabilities into the f32 fragment it then stores to
tensor memory with a 32-bit ``tcgen05.st``.

The view keeps no registers of its own: element ``i`` of a view of narrower elements (k of them to a
register of the fragment) is bits ``[w*(i%k), w*(i%k+1))`` of register ``i//k`` (little-endian, as on
the GPU); one of wider elements joins k consecutive registers; one of the same width is the
register's bits. Reads and writes go through the fragment's own registers (so its rules for loops
and branches hold) with ``BitcastOp``s between the two types; a write of part of a register reads
the register and writes it back whole.

>>> from cutelab import Float16, Float32
>>> v = RmemView(_Frag(Float32, 4), Float16)
>>> v.slot_parts([0, 1, 5])
{0: [(0, 0), (1, 1)], 2: [(2, 1)]}
"""

from __future__ import annotations

from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from ...errors import TraceError, user_location
from ...layout import Layout
from ...tensor import PointerInfo
from ..frontend.trace import TraceValue, _refs_of, _static_offsets
from .bitcast import bitcast

__all__ = ["RmemView", "recast"]


class _Frag:  # the doctest's stand-in of a fragment: a dtype, a length and the registers' alignment
    align = 32

    def __init__(self, dtype: Any, n: int):
        self.dtype, self.n = dtype, n

    def __len__(self) -> int:
        return self.n


def recast(base: Any, offset: Any, dtype: Any) -> Tuple[Any, Any]:
    """(engine, offset) of ``recast_ptr`` of a pointer at offset into a register fragment (an RmemEngine or
    a view of one), read as dtype."""
    if isinstance(base, RmemView):
        offset, base = base.base_offset(offset), base.base
    old = base.dtype
    if dtype.name == old.name:
        return base, offset
    if isinstance(offset, (int, np.integer)):
        off = int(offset)
    else:
        off = base._static(offset, f"recast_ptr(register fragment, dtype={dtype})")
    bits = off * old.width
    if bits % dtype.width or (dtype.width % old.width and old.width % dtype.width):
        raise TraceError(f"recast_ptr(ptr<{old.name}, rmem> + {off}, dtype={dtype}): the pointer is not at a whole "
                         f"{dtype.width}-bit element of the {old.width}-bit registers{_at()}")
    return RmemView(base, dtype), bits // dtype.width


def _at() -> str:
    where = user_location()
    return f" (at {where})" if where else ""


class RmemView(PointerInfo):
    """A register fragment's registers read as elements of dtype (see the module docstring)."""

    memspace = "rmem"

    def __init__(self, base: Any, dtype: Any):
        self.base, self.dtype = base, dtype
        self.align = base.align

    def __len__(self) -> int:
        return len(self.base) * self.base.dtype.width // self.dtype.width

    def base_offset(self, offset: Any) -> int:
        bits = self._static(offset, "recast_ptr") * self.dtype.width
        if bits % self.base.dtype.width:
            raise TraceError(f"recast_ptr(ptr<{self.dtype.name}, rmem> + {offset}): element {offset} of a "
                             f"{self.dtype.name} view of {self.base.dtype.name} registers is not at a whole "
                             f"{self.base.dtype.name} register{_at()}")
        return bits // self.base.dtype.width

    def recast(self, offset: Any, dtype: Any) -> Tuple[Any, Any]:
        return recast(self, offset, dtype)

    def raw_ptr_str(self, offset: Any) -> str:
        return f"raw_ptr(0x{0:016x}: {self.dtype.name}, rmem, align<{self.alignment(offset)}>)"

    def _static(self, offset: Any, op: str) -> int:
        return self.base._static(offset, op)

    # ---- which registers hold which elements
    def slot_parts(self, elems: Sequence[int]) -> Dict[int, List[Tuple[int, int]]]:
        """Narrower elements: {register: [(position in elems, part of the register)]}, in order."""
        k = self.base.dtype.width // self.dtype.width
        out: Dict[int, List[Tuple[int, int]]] = {}
        for p, e in enumerate(elems):
            out.setdefault(int(e) // k, []).append((p, int(e) % k))
        return out

    def _offsets(self, offset: Any, layout: Layout, op: str) -> np.ndarray:
        offs = _static_offsets(layout, op) + self._static(offset, op)
        if len(offs) and (offs.min() < 0 or offs.max() >= len(self)):
            raise TraceError(f"{op}: layout {layout} at offset {offset} reaches [{int(offs.min())}, "
                             f"{int(offs.max())}], "
                             f"outside the {len(self)} {self.dtype} elements of the fragment's {len(self.base)} "
                             f"{self.base.dtype} registers")
        return offs

    def _read(self, elems: Sequence[int], shape: Any, op: str) -> TraceValue:
        wb, wv = self.base.dtype.width, self.dtype.width
        if wv == wb:
            return bitcast(self.base._get([int(e) for e in elems], shape), self.dtype, op)
        refs: List[Any] = [None] * len(elems)
        if wv < wb:
            k = wb // wv
            for slot, parts in self.slot_parts(elems).items():
                got = bitcast(self.base._get([slot], ()), self.dtype, op, n=k)
                for p, j in parts:
                    refs[p] = got.refs[j]
        else:
            k = wv // wb
            for p, e in enumerate(elems):
                got = bitcast(self.base._get(list(range(int(e) * k, int(e) * k + k)), (k,)), self.dtype, op, n=1)
                refs[p] = got.refs[0]
        return TraceValue(refs, shape, self.dtype)

    def _write(self, elems: Sequence[int], refs: Sequence[Any], op: str) -> None:
        wb, wv = self.base.dtype.width, self.dtype.width
        if wv == wb:
            v = bitcast(TraceValue(list(refs), (len(refs),), self.dtype), self.base.dtype, op)
            self.base._put([int(e) for e in elems], v.refs)
            return
        if wv < wb:
            k = wb // wv
            for slot, parts in self.slot_parts(elems).items():
                if len({j for _, j in parts}) == k:  # the whole register: its parts joined
                    cur: List[Any] = [None] * k
                else:  # part of it: the register's other parts kept
                    cur = list(bitcast(self.base._get([slot], ()), self.dtype, op, n=k).refs)
                for p, j in parts:
                    cur[j] = refs[p]
                v = bitcast(TraceValue(cur, (k,), self.dtype), self.base.dtype, op, n=1)
                self.base._put([slot], v.refs)
            return
        k = wv // wb
        for p, e in enumerate(elems):
            v = bitcast(TraceValue([refs[p]], (), self.dtype), self.base.dtype, op, n=k)
            self.base._put(list(range(int(e) * k, int(e) * k + k)), v.refs)

    # ---- the engine's interface (cutelab.tensor.Tensor)
    def load(self, offset: Any, layout: Layout) -> TraceValue:
        return self._read(self._offsets(offset, layout, "load"), layout.shape, "load")

    def store(self, offset: Any, layout: Layout, value: Any) -> None:
        offs = self._offsets(offset, layout, "store")
        refs = _refs_of(value, len(offs), self.dtype, "store", f"a {self.dtype} view of a register fragment")
        self._write(offs, refs, "store")

    def read_one(self, off: Any) -> TraceValue:
        o = self._static(off, "read")
        if not 0 <= o < len(self):
            raise TraceError(f"read: element {o} is outside the {len(self)} {self.dtype} elements of the fragment")
        return self._read([o], (), "read")

    def write_one(self, off: Any, v: Any) -> None:
        o = self._static(off, "write")
        if not 0 <= o < len(self):
            raise TraceError(f"write: element {o} is outside the {len(self)} {self.dtype} elements of the fragment")
        self._write([o], [_refs_of(v, 1, self.dtype, "store", "a register")[0]], "write")
