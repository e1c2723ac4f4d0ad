"""Reinterpreting a value's bits as another type of the same width (``vector.bitcast`` of CuTe DSL
programs, e.g. Lamport's -0.0 marker built as the Int32 0x80000000 seen as a Float32).

Constant elements are converted while tracing; register elements by a ``BitcastOp``: the CPU
interpreter views the register's storage as the new type, the CUDA printer copies the bits.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import TraceError
from ..ir.nodes import Op
from ..frontend.trace import TraceValue, current


class BitcastOp(Op):
    """dst[i] = the bits of src[i] (of src_dtype) read as dst's type."""

    __slots__ = ("dst", "src", "src_dtype")

    def __init__(self, dst: Any, src: tuple, src_dtype: Any):
        self.dst, self.src, self.src_dtype = dst, src, src_dtype

    def __repr__(self) -> str:
        return f"{self.dst!r} = bitcast<{self.dst.dtype}>({len(self.src)} x {self.src_dtype})"

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        cols = np.stack([np.asarray(b.column(r, self.src_dtype, real=False), dtype=self.src_dtype.storage)
                         for r in self.src], axis=1)
        got = np.ascontiguousarray(cols).view(self.dst.dtype.storage)
        cur = b.regs.get(self.dst.id)
        if cur is None or mask is None:
            b.regs[self.dst.id] = got.copy()
        else:
            cur[mask] = got[mask]

    def cuda(self, r: Any) -> None:
        r.declare(self.dst)
        st, _, _ = r.ctype(self.src_dtype)
        n = self.src_dtype.width // 8
        if self.dst.dtype.width == self.src_dtype.width:
            for i, ref in enumerate(self.src):
                v = r.stored(ref, self.src_dtype)
                r.emit(f"{{ {st} cl_b = {v}; memcpy(&{r.reg(self.dst)}[{i}], &cl_b, {n}); }}")
            return
        vals = ", ".join(r.stored(ref, self.src_dtype) for ref in self.src)  # the whole vector's bytes at once
        k = len(self.src)
        r.emit(f"{{ {st} cl_b[{k}] = {{{vals}}}; memcpy(&{r.reg(self.dst)}[0], cl_b, {n * k}); }}")


def bitcast(value: TraceValue, dtype: Any, what: str = "bitcast", n: Any = None) -> TraceValue:
    """value's elements with their bits read as dtype: element by element (same width), or, with n,
    the whole value's bits as n elements of dtype (MLIR's vector.bitcast of vector<2xf32> to
    vector<1xi64>; elements in little-endian order, as on the GPU)."""
    src = value.dtype
    k = len(value.refs)
    if n is None and src.width != dtype.width:
        raise TraceError(f"{what}: {src} ({src.width} bits) cannot be read as {dtype} ({dtype.width} bits)")
    if n is not None and n * dtype.width != k * src.width:
        raise TraceError(f"{what}: {k} x {src} ({k * src.width} bits) cannot be read as {n} x {dtype} "
                         f"({n * dtype.width} bits)")
    m = k if n is None else n
    shape = value.shape if m == k else (m,)
    if all(not isinstance(r, tuple) and isinstance(r, (int, float, np.integer, np.floating)) for r in value.refs):
        from ...dtypes import to_compute, to_storage

        bits = np.asarray(to_storage(np.asarray([r for r in value.refs]), src), dtype=src.storage)
        conv = to_compute(np.ascontiguousarray(bits).view(dtype.storage), dtype)
        return TraceValue([v.item() for v in np.asarray(conv)], shape, dtype)
    t = current(what)
    t.check_refs(value.refs, what)
    dst = t.new_reg(dtype, m)
    t.emit(BitcastOp(dst, tuple(value.refs), src))
    return TraceValue([(dst, i) for i in range(m)], shape, dtype)
