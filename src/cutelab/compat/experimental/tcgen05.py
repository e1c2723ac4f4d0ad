"""The tensor-memory wrappers of ``cutlass.experimental.primitives`` (CuTe DSL 4.8.1's
``tcgen05_alloc``, ``tcgen05_relinquish_alloc_permit``, ``tcgen05_dealloc``, ``make_tmem_ptr``,
``TmemAddr``, ``tcgen05_ld``, ``tcgen05_st``), lowered onto cutelab's tensor-memory ops (``kernel.instr.tcgen05_tmem``):
the same allocation rules, the same per-CTA tensor memory on the CPU, the same inline PTX on the GPU.

- ``tcgen05_alloc(addr, n_cols, group=...)``: ``cute.arch.alloc_tmem`` writing the address to the
  32-bit shared word ``addr`` (a ``cutlass.Array`` or ``Pointer``); ``tcgen05_dealloc(taddr, n_cols)``
  frees from a TMEM Array of ``make_tmem_ptr``; ``tcgen05_relinquish_alloc_permit``.
- ``make_tmem_ptr(addr, dtype)``: a one-element TMEM ``Array`` at the 32-bit address ``addr``
  (lane << 16 | column), as ``cute.arch.retrieve_tmem_ptr`` makes it.
- ``TmemAddr(v)``: the address with its ``col_id`` (bits 0..15) and ``row_id`` (bits 16..31),
  ``TmemAddr.from_row_col(row, col)`` and ``as_ptr(dtype)``.
- ``tcgen05_ld(shape, tmem, num=n)``: ``tcgen05.ld.sync.aligned.32x32b.x<n>``: lane l of the warp reads
  columns c..c+n-1 of TMEM lane (row of the address) + l; returns a Vector of n elements of the TMEM
  Array's type. ``tcgen05_st(shape, tmem, vec)`` writes them. Only the 32x32b shape on 32-bit elements
  (the one the CUDA back end prints); the others are refused by name. A warp reaches only its lane
  quarter (the interpreter's rule, as for ``cute.copy`` with a TMEM atom). ``tcgen05_wait(Tcgen05Wait.LOAD
  / STORE)`` is ``tcgen05.wait::ld`` / ``::st``, ``tcgen05_fence`` the tcgen05 fences.
- ``cutlass.inttoptr(addr, 6, dtype)``: a ``cutlass.Pointer`` into tensor memory (other spaces refused).

Not here yet (refused by name in ``wrappers.namespace``): ``exit``, the descriptor-driven
``tcgen05_mma`` (``Tcgen05SmemDesc``, ``Tcgen05InstrDesc``), ``tcgen05_commit``, ``tcgen05_cp``.
"""

from __future__ import annotations

from typing import Any, Dict

from ...errors import TraceError
from ..where import user_line
from .enums import _enum
from .memory import Array, Pointer, cute_pointer


def _is_two_cta(group: Any, what: str) -> bool:
    name = getattr(group, "name", None) if group is not None else "CTA_1"
    if name not in ("CTA_1", "CTA_2"):
        raise TraceError(f"{what}: group={group!r} is not a CTAGroup (CTA_1 or CTA_2)")
    return name == "CTA_2"


def _smem_word_pointer(addr: Any, what: str) -> Any:
    """The cutelab pointer to the 32-bit shared word of a cutlass.Array / Pointer."""
    p, peer = cute_pointer(addr, what)
    if peer is not None:
        raise TraceError(f"{what}: the address word must be in this CTA's shared memory, not a mapa pointer")
    return p


def tcgen05_alloc(addr: Any, n_cols: Any, *, is_exclusive: Any = None, group: Any = None, loc: Any = None,
                  ip: Any = None) -> None:
    """``tcgen05.alloc``: the warp allocates n_cols columns (a compile-time power of two, 32..512) and
    writes their TMEM address to the 32-bit shared word addr."""
    from ...kernel.instr.tcgen05_tmem import alloc_tmem

    what = f"cutlass.experimental.primitives.tcgen05_alloc(..., {n_cols})"
    if is_exclusive:
        raise TraceError(f"{what}: is_exclusive=True (the Rubin .exclusive allocation) is not supported by cutelab "
                         f"({user_line(2)})")
    alloc_tmem(n_cols, _smem_word_pointer(addr, what), _is_two_cta(group, what))


def tcgen05_relinquish_alloc_permit(*, group: Any = None, loc: Any = None, ip: Any = None) -> None:
    """``tcgen05.relinquish_alloc_permit``: the CTA allocates no more tensor memory."""
    from ...kernel.instr.tcgen05_tmem import relinquish_tmem_alloc_permit

    relinquish_tmem_alloc_permit(_is_two_cta(group, "cutlass.experimental.primitives.tcgen05_relinquish_alloc_permit"))


def _tmem_pointer(taddr: Any, what: str) -> Any:
    """The cutelab TMEM pointer of a TMEM Array / Pointer (make_tmem_ptr, TmemAddr.as_ptr)."""
    from ...nvgpu.tcgen05.tmem import TmemEngine

    p, _ = cute_pointer(taddr, what) if isinstance(taddr, (Array, Pointer)) else (taddr, None)
    if not isinstance(getattr(p, "engine", None), TmemEngine):
        raise TraceError(f"{what}: expected a tensor-memory Array (make_tmem_ptr / TmemAddr.as_ptr), got "
                         f"{type(taddr).__name__} ({user_line(3)})")
    return p


def tcgen05_dealloc(taddr: Any, n_cols: Any, *, is_exclusive: Any = None, group: Any = None, loc: Any = None,
                    ip: Any = None) -> None:
    """``tcgen05.dealloc``: the warp frees n_cols columns from the TMEM address of taddr."""
    from ...kernel.instr.tcgen05_tmem import dealloc_tmem

    what = f"cutlass.experimental.primitives.tcgen05_dealloc(..., {n_cols})"
    if is_exclusive:
        raise TraceError(f"{what}: is_exclusive=True is not supported by cutelab ({user_line(2)})")
    dealloc_tmem(_tmem_pointer(taddr, what), n_cols, _is_two_cta(group, what))


def _index(v: Any) -> Any:
    """A compile-time int or an index expression of a (traced) integer."""
    from ...kernel.frontend.trace import TraceValue

    v = getattr(v, "_v", v) if isinstance(v, TmemAddr) else v
    if isinstance(v, TraceValue):
        return v.as_index()
    return int(getattr(v, "value", v))


def make_tmem_ptr(tmem_addr: Any, dtype: Any, *, loc: Any = None, ip: Any = None) -> Array:
    """A one-element TMEM Array of dtype at the 32-bit TMEM address tmem_addr (lane << 16 | column)."""
    from ...kernel.ir.symbolic import floordiv, mod
    from ...layout import make_layout
    from ...nvgpu.tcgen05.tmem import TmemEngine, _elems_per_column, tmem_dp_stride
    from ...tensor import Tensor

    a = _index(tmem_addr)
    epc = _elems_per_column(dtype)
    off = a if epc == 1 else floordiv(a, 65536) * tmem_dp_stride(dtype) + mod(a, 65536) * epc
    return Array._view(Tensor(TmemEngine(dtype), make_layout(1), off, _checked=True), (1,))


class TmemAddr:
    """A 32-bit tensor-memory address: ``col_id`` bits 0..15, ``row_id`` (the lane) bits 16..31."""

    def __init__(self, value: Any) -> None:
        self._v = getattr(value, "_v", value)

    @property
    def value(self) -> Any:
        return self._v

    def ir_value(self, *, loc: Any = None, ip: Any = None) -> Any:
        return self._v

    @property
    def col_id(self) -> Any:
        return self._v & 0xFFFF

    @property
    def row_id(self) -> Any:
        v = self._v
        return (v >> 16) & 0xFFFF

    @staticmethod
    def from_row_col(row: Any, col: Any) -> "TmemAddr":
        from ...numeric import Int32

        row = row if hasattr(row, "as_index") else Int32(row)
        return TmemAddr((row << 16) | (col & 0xFFFF))

    def as_ptr(self, dtype: Any) -> Array:
        return make_tmem_ptr(self._v, dtype)

    def __repr__(self) -> str:
        return f"TmemAddr({self._v!r})"


def _ldst_args(op: str, shape: Any, tmem: Any, n: int, extra: bool, what: str) -> Any:
    sh = str(getattr(shape, "value", shape)).lower().replace("shape_", "")
    if sh != "32x32b":
        raise TraceError(f"{what}: cutelab's primitive tcgen05_{op} supports the 32x32b shape, not {sh} "
                         f"({user_line(3)})")
    if extra:
        raise TraceError(f"{what}: pack/unpack and offset= (16x32bx2) are not supported by cutelab ({user_line(3)})")
    if n < 1 or n > 128 or n & (n - 1):
        raise TraceError(f"{what}: {n} columns; rule: a 32x32b tcgen05.{op} moves a power of two of 1..128 columns "
                         f"({user_line(3)})")
    p = _tmem_pointer(tmem, what)
    if p.engine.dtype.width != 32:
        raise TraceError(f"{what}: the TMEM Array holds {p.engine.dtype}; the 32x32b shape moves 32-bit elements "
                         f"({user_line(3)})")
    return p


def _table(dtype: Any, n: int) -> Any:
    """Lane l of the warp, value j: TMEM lane (address's lane) + l, column (address's column) + j."""
    import numpy as np

    from ...nvgpu.tcgen05.tmem import tmem_dp_stride

    return np.arange(32, dtype=np.int64)[:, None] * tmem_dp_stride(dtype) + np.arange(n, dtype=np.int64)[None, :]


def tcgen05_ld(shape: Any, tmem_addr: Any, *, num: Any = 1, pack: Any = None, offset: Any = None, loc: Any = None,
               ip: Any = None) -> Any:
    """``tcgen05.ld.sync.aligned.32x32b.x<num>.b32``: lane l of the warp reads num consecutive columns of
    TMEM lane (the address's lane) + l; a Vector of num elements of the TMEM Array's type."""
    import numpy as np

    from ...kernel.frontend.trace import current
    from ...kernel.instr.tcgen05_tmem import TmemCopyOp, _where
    from ...layout import make_layout
    from ...tensor import make_rmem_tensor
    from .vector import Vector

    n = int(getattr(num, "value", num))
    what = f"cutlass.experimental.primitives.tcgen05_ld({shape!r}, ..., num={n})"
    p = _ldst_args("ld", shape, tmem_addr, n, bool(pack) or offset is not None, what)
    dt = p.engine.dtype
    t = current(what)
    regs = make_rmem_tensor(make_layout(n), dt)
    eng = regs.engine
    if eng.reg is None:
        eng.make_mutable(t)
    t.emit(TmemCopyOp(True, dt, p.offset, _table(dt, n), eng.reg, np.arange(n, dtype=np.int64), None,
                      ("32x32b", n), _where(t)))
    return Vector.from_elements(tuple(regs[i] for i in range(n)), dt)


def tcgen05_st(shape: Any, tmem_addr: Any, val: Any, *, unpack: Any = None, offset: Any = None, loc: Any = None,
               ip: Any = None) -> None:
    """``tcgen05.st.sync.aligned.32x32b.x<n>.b32``: lane l of the warp writes its n values (a Vector or
    one scalar) to n consecutive columns of TMEM lane (the address's lane) + l."""
    import numpy as np

    from ...kernel.frontend.trace import current
    from ...kernel.instr.tcgen05_tmem import TmemCopyOp, _where
    from ...layout import make_layout
    from ...tensor import make_rmem_tensor
    from .vector import Vector

    vals = val.elements() if isinstance(val, Vector) else [val]
    n = len(vals)
    what = f"cutlass.experimental.primitives.tcgen05_st({shape!r}, ..., <{n} values>)"
    p = _ldst_args("st", shape, tmem_addr, n, bool(unpack) or offset is not None, what)
    vdt = getattr(val, "dtype", None) or p.engine.dtype
    if getattr(vdt, "width", 32) != 32:
        raise TraceError(f"{what}: the values are {vdt}; cutelab stores 32-bit values with the 32x32b shape "
                         f"({user_line(2)})")
    t = current(what)
    regs = make_rmem_tensor(make_layout(n), vdt)
    for i, v in enumerate(vals):
        regs[i] = v
    refs = tuple(regs.load().refs)
    t.emit(TmemCopyOp(False, vdt, p.offset, _table(vdt, n), None, np.arange(n, dtype=np.int64), refs,
                      ("32x32b", n), _where(t)))


Tcgen05Wait = _enum("Tcgen05Wait", "LOAD=load STORE=store")


def tcgen05_wait(kind: Any, *, loc: Any = None, ip: Any = None) -> None:
    """``tcgen05.wait::ld`` / ``::st``: the thread's TMEM loads / stores are done."""
    from ...kernel.instr.tcgen05_tmem import fence_view_async_tmem_load, fence_view_async_tmem_store

    k = str(getattr(kind, "value", kind)).lower()
    if k not in ("load", "store"):
        raise TraceError(f"cutlass.experimental.primitives.tcgen05_wait({kind!r}): the kind is Tcgen05Wait.LOAD or "
                         f"STORE ({user_line(2)})")
    (fence_view_async_tmem_load if k == "load" else fence_view_async_tmem_store)()


Tcgen05Fence = _enum("Tcgen05Fence", "BEFORE_THREAD_SYNC=before_thread_sync AFTER_THREAD_SYNC=after_thread_sync")


def tcgen05_fence(kind: Any, *, loc: Any = None, ip: Any = None) -> None:
    """``tcgen05.fence::before_thread_sync`` / ``::after_thread_sync`` (GPU ordering; the CPU runs in order)."""
    from ...kernel.frontend.trace import current
    from ...kernel.instr.tcgen05_tmem import Tcgen05FenceOp

    k = str(getattr(kind, "value", kind)).lower()
    what = f"cutlass.experimental.primitives.tcgen05_fence({kind!r})"
    if k not in ("before_thread_sync", "after_thread_sync"):
        raise TraceError(f"{what}: the kind is Tcgen05Fence.BEFORE_THREAD_SYNC or AFTER_THREAD_SYNC ({user_line(2)})")
    current(what).emit(Tcgen05FenceOp(f"fence::{k}"))


def inttoptr(value: Any, mem_space: Any, dtype: Any, *, loc: Any = None, ip: Any = None) -> Pointer:
    """``cutlass.inttoptr(value, mem_space, dtype)``: a typed pointer at an integer address. cutelab's
    kernels have addresses of tensor memory only (address space 6, ``AddressSpace.tmem``: the 32-bit
    lane << 16 | column of ``tcgen05_alloc``); the other spaces are refused by name."""
    sp = getattr(mem_space, "value", mem_space)
    if sp not in (6, "tmem"):
        raise TraceError(f"cutlass.inttoptr(..., {mem_space!r}, {dtype}): cutelab makes pointers from integers in "
                         f"tensor memory only (address space 6); a {sp} address has no cutelab tensor to point into "
                         f"({user_line(2)})")
    return Pointer(make_tmem_ptr(value, dtype).flat.iterator)


def namespace() -> Dict[str, Any]:
    return {"tcgen05_alloc": tcgen05_alloc, "tcgen05_relinquish_alloc_permit": tcgen05_relinquish_alloc_permit,
            "tcgen05_dealloc": tcgen05_dealloc, "make_tmem_ptr": make_tmem_ptr, "TmemAddr": TmemAddr,
            "tcgen05_ld": tcgen05_ld, "tcgen05_st": tcgen05_st, "tcgen05_wait": tcgen05_wait,
            "Tcgen05Wait": Tcgen05Wait, "tcgen05_fence": tcgen05_fence, "Tcgen05Fence": Tcgen05Fence}
