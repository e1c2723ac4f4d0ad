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
- ``tcgen05_ld(shape, tmem, num=n, pack=)``: ``tcgen05.ld.sync.aligned.<shape>.x<n>[.pack::16b]``, every shape
  (32x32b: lane l of the warp reads columns c..c+n-1 of TMEM lane (row of the address) + l; the 16-lane shapes as
  PTX's fragments place them, kernel/instr/tcgen05_ldst.py); returns a Vector of the registers as elements of
  the TMEM Array's type (two f16 to a register; with pack=True the low halves of two adjacent columns, as an
  f16 accumulator of a UMMA holds them). ``tcgen05_st(shape, tmem, vec, unpack=)`` writes them. A warp reaches only
  its lane
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


def _shape_name(shape: Any) -> str:
    return str(getattr(shape, "value", shape)).lower().replace("shape_", "")


def _ldst_table(op: str, shape: Any, tmem: Any, nregs: int, packed: bool, offset: Any, what: str) -> Any:
    """(TMEM pointer, PTX shape, repetitions, table): lane l of the warp, value v (element v % e of register
    v // e, e = 32 / bits elements to a register) at TMEM element ``address + table[l, v]``, as PTX's fragment of
    the shape places register r of lane l (kernel/instr/tcgen05_ldst.py); with pack (loads) / unpack (stores) a
    register's two 16-bit halves are the low halves of two adjacent 32-bit columns."""
    import numpy as np

    from ...kernel.instr.tcgen05_ldst import SHAPES, fragment
    from ...nvgpu.tcgen05.tmem import _elems_per_column, tmem_dp_stride

    sh = _shape_name(shape)
    if sh not in SHAPES:
        raise TraceError(f"{what}: the shape is one of {', '.join(SHAPES)}, not {sh} ({user_line(3)})")
    per = SHAPES[sh][2]
    n = nregs // per
    if nregs % per or n < 1 or n > 128 or n & (n - 1):
        raise TraceError(f"{what}: {nregs} registers; rule: a {sh} tcgen05.{op} moves {per} register(s) per "
                         f"repetition, "
                         f"a power of two of 1..128 repetitions ({user_line(3)})")
    if nregs > 128:
        raise TraceError(f"{what}: {nregs} registers; rule: one tcgen05.{op} moves at most 128 ({user_line(3)})")
    p = _tmem_pointer(tmem, what)
    dt = p.engine.dtype
    epc = _elems_per_column(dt)
    if dt.width not in (8, 16, 32):
        raise TraceError(f"{what}: the TMEM Array holds {dt}; cutelab moves 8-, 16- and 32-bit elements "
                         f"({user_line(3)})")
    if packed and dt.width != 16:
        raise TraceError(f"{what}: {'pack' if op == 'ld' else 'unpack'}=True moves 16-bit elements, the TMEM Array "
                         f"holds {dt} ({user_line(3)})")
    if sh == "16x32bx2":
        want = n * (2 if packed else 1)
        if offset is None:
            raise TraceError(f"{what}: the 16x32bx2 shape needs offset= (the second half's column offset) "
                             f"({user_line(3)})")
        if int(getattr(offset, "value", offset)) != want:
            raise TraceError(f"{what}: offset={offset}: cutelab places the second half of a 16x32bx2.x{n} right after "
                             f"the first (offset={want}) only ({user_line(3)})")
    elif offset is not None:
        raise TraceError(f"{what}: offset= is for the 16x32bx2 shape only, not {sh} ({user_line(3)})")
    lane, col = fragment(sh, n)  # (32, nregs): the 32-bit cell of each register
    dp = tmem_dp_stride(dt)
    h = np.arange(epc, dtype=np.int64)
    if packed:  # halves: the low 16 bits of columns 2c and 2c + 1
        elem = (2 * col[:, :, None] + h[None, None, :]) * epc
    else:
        elem = col[:, :, None] * epc + h[None, None, :]
    return p, sh, n, (lane[:, :, None] * dp + elem).reshape(32, -1)


def tcgen05_ld(shape: Any, tmem_addr: Any, *, num: Any = 1, pack: Any = None, offset: Any = None, loc: Any = None,
               ip: Any = None) -> Any:
    """``tcgen05.ld.sync.aligned.<shape>.x<num>[.pack::16b].b32``: the warp reads num repetitions of the shape;
    a Vector of the registers as elements of the TMEM Array's type (PTX's fragment: kernel/instr/tcgen05_ldst.py)."""
    import numpy as np

    from ...kernel.frontend.trace import current
    from ...kernel.instr.tcgen05_ldst import SHAPES
    from ...kernel.instr.tcgen05_tmem import TmemCopyOp, _where
    from ...layout import make_layout
    from ...tensor import make_rmem_tensor
    from .vector import Vector

    n = int(getattr(num, "value", num))
    what = f"cutlass.experimental.primitives.tcgen05_ld({shape!r}, ..., num={n}{', pack=True' if pack else ''})"
    per = SHAPES.get(_shape_name(shape), (0, 0, 1))[2]
    p, sh, n, table = _ldst_table("ld", shape, tmem_addr, n * per, bool(pack), offset, what)
    dt = p.engine.dtype
    nv = table.shape[1]
    t = current(what)
    regs = make_rmem_tensor(make_layout(nv), dt)
    eng = regs.engine
    if eng.reg is None:
        eng.make_mutable(t)
    t.emit(TmemCopyOp(True, dt, p.offset, table, eng.reg, np.arange(nv, dtype=np.int64), None, (sh, n, bool(pack)),
                      _where(t)))
    return Vector.from_elements(tuple(regs[i] for i in range(nv)), dt)


def tcgen05_st(shape: Any, tmem_addr: Any, val: Any, *, unpack: Any = None, offset: Any = None, loc: Any = None,
               ip: Any = None) -> None:
    """``tcgen05.st.sync.aligned.<shape>.x<n>[.unpack::16b].b32``: the warp writes its values (a Vector or one
    scalar, as 32-bit registers: n the registers over the shape's registers per repetition) to tensor memory."""
    import numpy as np

    from ...kernel.frontend.trace import current
    from ...kernel.instr.tcgen05_tmem import TmemCopyOp, _where
    from ...layout import make_layout
    from ...tensor import make_rmem_tensor
    from .vector import Vector

    vals = val.elements() if isinstance(val, Vector) else [val]
    what = f"cutlass.experimental.primitives.tcgen05_st({shape!r}, ..., <{len(vals)} values>)"
    p = _tmem_pointer(tmem_addr, what)
    vdt = getattr(val, "dtype", None) or p.engine.dtype
    if vdt.width != p.engine.dtype.width:
        raise TraceError(f"{what}: the values are {vdt}, the TMEM Array holds {p.engine.dtype}; cutelab stores values "
                         f"of the Array's width ({user_line(2)})")
    epr = 32 // vdt.width
    if len(vals) % epr:
        raise TraceError(f"{what}: {len(vals)} values of {vdt} are not whole 32-bit registers ({user_line(2)})")
    p, sh, n, table = _ldst_table("st", shape, tmem_addr, len(vals) // epr, bool(unpack), offset, what)
    t = current(what)
    regs = make_rmem_tensor(make_layout(len(vals)), vdt)
    for i, v in enumerate(vals):
        regs[i] = v
    refs = tuple(regs.load().refs)
    t.emit(TmemCopyOp(False, vdt, p.offset, table, None, np.arange(len(vals), dtype=np.int64), refs,
                      (sh, n, bool(unpack)), _where(t)))


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
