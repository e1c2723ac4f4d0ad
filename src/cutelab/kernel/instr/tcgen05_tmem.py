"""Blackwell tensor memory (TMEM) inside traced kernels: its allocation (``cute.arch.alloc_tmem``,
``relinquish_tmem_alloc_permit``, ``dealloc_tmem``, ``retrieve_tmem_ptr``), the ``tcgen05.ld`` /
``tcgen05.st`` copies between TMEM and registers (``cute.copy`` with an atom of
``tcgen05.make_tmem_copy``) and the tcgen05 fences.

Tensor memory is, per CTA, 128 lanes x 512 columns of 32-bit cells. A TMEM address is
``lane << 16 | column``; a tensor's element address (cutelab.nvgpu.tcgen05.tmem) counts elements
of its type, 32/bits of them to a column. The CPU interpreter keeps, per CTA of the batch, the
cells, which columns are allocated and whether the CTA gave up its allocation permit
(``ctx.common["tmem"]``, shared by every group of warps). The hardware's rules are checked, each
violation an error naming the rule, the kernel and the user's line:

- an allocation is a power of two of at least 32 columns (at most 512), made by a whole warp (a
  2-CTA allocation, ``is_two_cta=True``, by a warp of each CTA of the pair: each allocates in its own
  tensor memory, which the CUDA back end does not print yet);
  it takes the lowest free columns aligned to its size, and asking for more columns than are
  free is an error (the hardware would wait for a deallocation that this kernel may never make:
  cutelab reports the overuse instead of hanging); no allocation after the CTA relinquished its
  permit;
- ``dealloc_tmem`` frees columns that are allocated;
- ``tcgen05.ld``/``st`` and UMMAs touch only allocated columns; a warp reads and writes only its
  lane quarter (warp w of the CTA: lanes 32 * (w % 4) to 32 * (w % 4) + 31);
- a 32x32b copy through a TMEM tensor partitioned with the copy's register-side layout (``partition_D``
  of a load: one lane per thread, each thread's own address, as CuTe DSL emits it) moves lane
  32 * (w % 4) + l for lane l of warp w: a thread whose tensor names another lane is an error.

CUDA: ``tcgen05.alloc/dealloc/relinquish_alloc_permit.cta_group::1``, ``tcgen05.ld/st.sync.aligned
.<shape>.x<r>[.pack::16b / .unpack::16b].b32`` (every shape, 32-, 16- and 8-bit elements: tcgen05_ldst.py),
``tcgen05.wait::ld/st`` and the fences are printed as inline PTX for sm_100a.
"""

from __future__ import annotations

from typing import Any, List, Tuple

import numpy as np

from ... import int_tuple as it
from ...errors import LaunchError, TraceError
from ...numeric import Int32
from ..ir.nodes import Access, Op, Shared
from ..ir.symbolic import floordiv, is_sym, mod
from ..frontend.engines import RmemEngine
from .rmem_view import RmemView
from ..frontend.trace import TraceValue, _static_offsets, current

__all__ = ["TMEM_LANES", "TMEM_COLUMNS", "tmem_state", "TmemAllocOp", "TmemDeallocOp", "TmemRelinquishOp",
           "TmemCopyOp", "Tcgen05FenceOp", "alloc_tmem", "dealloc_tmem", "relinquish_tmem_alloc_permit",
           "retrieve_tmem_ptr", "tmem_copy", "fence_view_async_tmem_load", "fence_view_async_tmem_store",
           "tmem_cells", "check_columns", "smem_word", "check_freed_at_exit"]

TMEM_LANES, TMEM_COLUMNS = 128, 512


# --------------------------------------------------------------------------- the CPU state

class _Tmem:
    """Tensor memory of the CTAs of a batch: cells (blocks, 128, 512) of 32 bits, allocated columns,
    the relinquished permits."""

    def __init__(self, nblk: int):
        self.cells = np.zeros((nblk, TMEM_LANES, TMEM_COLUMNS), dtype=np.uint32)
        self.owned = np.zeros((nblk, TMEM_COLUMNS), dtype=bool)
        self.relinquished = np.zeros(nblk, dtype=bool)
        self.freed: dict = {}  # block -> [(first column, columns, the dealloc's line)] of its deallocations
        self.allocs: dict = {}  # block -> {first column: (columns, the alloc's line)} of its live allocations


def tmem_state(b: Any) -> _Tmem:
    """The tensor memory of the batch of b (one for every group of warps)."""
    st = b.common.get("tmem")
    if st is None:
        st = b.common["tmem"] = _Tmem(b.nblk)
    return st


def _epc(dtype: Any) -> int:
    from ...nvgpu.tcgen05.tmem import _elems_per_column

    return _elems_per_column(dtype)


def tmem_cells(st: _Tmem, dtype: Any) -> np.ndarray:
    """The cells as an array (blocks, 128, 512 * elements per column) of dtype's storage."""
    if dtype.width not in (8, 16, 32):
        raise LaunchError(f"tensor memory of {dtype} elements ({dtype.width} bits) is not modelled by cutelab's "
                          f"interpreter (8-, 16- and 32-bit elements are)")
    return st.cells.view(np.dtype(dtype.storage))


def check_columns(b: Any, st: _Tmem, blk: np.ndarray, col: np.ndarray, what: str, where: str) -> None:
    """Refuse accesses to columns the CTA has not allocated (blk, col: arrays of the same shape)."""
    bad = ~st.owned[blk, col]
    if bad.any():
        i = np.unravel_index(int(np.argmax(bad)), bad.shape)
        k = int(blk[i])
        have = np.nonzero(st.owned[k])[0]
        held = f"columns {int(have.min())}..{int(have.max())}" if have.size else "no columns"
        c = int(col[i])
        freed = [f for f in st.freed.get(k, []) if f[0] <= c < f[0] + f[1]]
        after = ""
        if freed:
            c0, n, at = freed[-1]
            after = (f"; the CTA freed columns {c0}..{c0 + n - 1} before this access (cute.arch.dealloc_tmem"
                     f"{f' at {at}' if at else ''}), and nothing in the kernel (a barrier, an mbarrier wait) makes this "
                     f"access happen before that deallocation")
        raise LaunchError(f"{b.ir.name}{where}: {what} touches tensor-memory column {c} of block "
                          f"{b.block_name(k)}, which that CTA has not allocated (it holds {held}){after}; rule: a CTA "
                          f"reads and writes only the tensor memory it allocated and has not freed "
                          f"(cute.arch.alloc_tmem / TmemAllocator)")


def _at(where: Any) -> str:
    return f" (at {where})" if where else ""


def _warp_issuers(b: Any, mask: Any, what: str, where: str) -> np.ndarray:
    """The first thread of each warp that runs a .sync.aligned warp instruction (all its lanes)."""
    w = b.whole_warps(mask, f"{what}{_at(where)}", what)
    return np.nonzero(w)[0] * 32


# --------------------------------------------------------------------------- shared-memory words

def smem_word(ptr: Any, what: str) -> Tuple[Shared, Any]:
    """(shared array, element offset) of a pointer to a 32-bit word of shared memory (the TMEM
    allocator's holding buffer): a ``cute.struct`` field's ``.ptr``, an smem Pointer or Tensor."""
    from ...tensor import Pointer, Tensor
    from ..frontend.smem import SmemPtr
    from ..frontend.engines import SmemEngine

    t = current(what)
    if hasattr(ptr, "ptr") and not isinstance(ptr, (Pointer, Tensor, SmemPtr)):
        ptr = ptr.ptr  # a struct's scalar field
    if isinstance(ptr, SmemPtr):
        from ...layout import make_layout

        dt = ptr.dtype or Int32
        if dt.width != 32:
            raise TraceError(f"kernel {t.name}: {what}: the TMEM address lives in a 32-bit word of shared memory; "
                             f"the pointer is to {dt}{_at(_where(t))}")
        first = SmemPtr(ptr.region, 0, dt).tensor(make_layout(1), dt)
        eng, off = first.engine, first.offset + ptr.byte_offset // dt.bytes
    elif isinstance(ptr, (Pointer, Tensor)):
        eng, off = ptr.engine, ptr.offset
    else:
        raise TraceError(f"kernel {t.name}: {what}: expected a pointer to a 32-bit word of shared memory, got "
                         f"{type(ptr).__name__}{_at(_where(t))}")
    if not isinstance(eng, SmemEngine):
        raise TraceError(f"kernel {t.name}: {what}: the TMEM address must be written to shared memory, got a "
                         f"{getattr(eng, 'memspace', '?')} pointer{_at(_where(t))}")
    if eng.dtype.width != 32:
        raise TraceError(f"kernel {t.name}: {what}: the TMEM address is a 32-bit word; the pointer is to "
                         f"{eng.dtype}{_at(_where(t))}")
    if isinstance(off, TraceValue):
        raise TraceError(f"kernel {t.name}: {what}: the word's offset must be an index expression{_at(_where(t))}")
    return eng.param, off


def _cols_arg(n: Any, what: str) -> int:
    """A static column count obeying the allocation rule."""
    from ...dynamic import value_of

    t = current(what)
    if is_sym(n) or isinstance(n, TraceValue):
        raise TraceError(f"kernel {t.name}: {what}: cutelab needs a static number of columns{_at(_where(t))}")
    n = int(value_of(getattr(n, "value", n)))
    if n < 32 or n > TMEM_COLUMNS or n & (n - 1):
        raise TraceError(f"kernel {t.name}: {what}: {n} columns; rule: a tensor-memory allocation is a power of "
                         f"two of at least 32 and at most {TMEM_COLUMNS} columns{_at(_where(t))}")
    return n


# --------------------------------------------------------------------------- allocation ops

class TmemAllocOp(Op):
    """``tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [dst], ncols``: a warp allocates
    ncols columns and writes their address to the 32-bit shared word dst."""

    min_sm = 100  # tcgen05: sm_100a

    __slots__ = ("ncols", "shared", "base", "where", "group")

    def __init__(self, ncols: int, shared: Shared, base: Any, where: str, group: int = 1):
        self.ncols, self.shared, self.base, self.where, self.group = ncols, shared, base, where, group

    def __repr__(self) -> str:
        from ..ir.nodes import _ref_str

        return f"tcgen05.alloc {self.ncols} -> {self.shared.name}[{_ref_str(self.base)}]"

    def accesses(self) -> List[Access]:
        return [Access(self.shared, self.base, (0,), True, self)]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        st = tmem_state(b)
        what = f"cute.arch.alloc_tmem({self.ncols})"
        rows = _warp_issuers(b, mask, what, self.where)
        base = np.broadcast_to(np.asarray(b.index(self.base), dtype=np.int64), (b.n,))
        mem = b.shared[self.shared.index]
        n = self.ncols
        for r in rows.tolist():
            k = int(b.block_of[r])
            if st.relinquished[k]:
                raise LaunchError(f"{b.ir.name}{_at(self.where)}: {what} in block {b.block_name(k)} after the CTA "
                                  f"relinquished its allocation permit; rule: no tensor-memory allocation after "
                                  f"relinquish_tmem_alloc_permit")
            free = ~st.owned[k]
            start = next((c for c in range(0, TMEM_COLUMNS, n) if free[c:c + n].all()), None)
            if start is None:
                used = int(st.owned[k].sum())
                raise LaunchError(f"{b.ir.name}{_at(self.where)}: {what} in block {b.block_name(k)}: the CTA already "
                                  f"holds {used} of the {TMEM_COLUMNS} columns, no {n} free columns aligned to {n} "
                                  f"remain; rule: no tensor-memory overuse (the GPU would wait for a deallocation)")
            st.owned[k, start:start + n] = True
            st.allocs.setdefault(k, {})[start] = (n, self.where)
            off = int(base[r])
            if not 0 <= off < self.shared.length:
                raise LaunchError(f"{b.ir.name}{_at(self.where)}: {what}: the address word {off} is outside "
                                  f"{self.shared.name}")
            mem[k * self.shared.length + off] = start  # lane 0, column start

    def cuda(self, r: Any) -> None:
        from .mbarrier import smem_addr

        r.emit(f'asm volatile("tcgen05.alloc.cta_group::{self.group}.sync.aligned.shared::cta.b32 [%0], {self.ncols};" '
               f':: "r"({smem_addr(r, self.shared, self.base)}) : "memory");')


class TmemRelinquishOp(Op):
    """``tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned``: the CTA allocates no more."""

    min_sm = 100  # tcgen05: sm_100a

    __slots__ = ("where", "group")

    def __init__(self, where: str, group: int = 1):
        self.where, self.group = where, group

    def __repr__(self) -> str:
        return "tcgen05.relinquish_alloc_permit"

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        rows = _warp_issuers(b, mask, "cute.arch.relinquish_tmem_alloc_permit", self.where)
        tmem_state(b).relinquished[b.block_of[rows]] = True

    def cuda(self, r: Any) -> None:
        r.emit(f'asm volatile("tcgen05.relinquish_alloc_permit.cta_group::{self.group}.sync.aligned;" ::: "memory");')


class TmemDeallocOp(Op):
    """``tcgen05.dealloc.cta_group::1.sync.aligned.b32 taddr, ncols``: a warp frees ncols columns
    from the TMEM address ``addr`` (an index expression: lane << 16 | column)."""

    min_sm = 100  # tcgen05: sm_100a

    __slots__ = ("addr", "ncols", "where", "group")

    def __init__(self, addr: Any, ncols: int, where: str, group: int = 1):
        self.addr, self.ncols, self.where, self.group = addr, ncols, where, group

    def __repr__(self) -> str:
        from ..ir.nodes import _ref_str

        return f"tcgen05.dealloc {_ref_str(self.addr)}, {self.ncols}"

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        st = tmem_state(b)
        what = f"cute.arch.dealloc_tmem(..., {self.ncols})"
        rows = _warp_issuers(b, mask, what, self.where)
        addr = np.broadcast_to(np.asarray(b.index(self.addr), dtype=np.int64), (b.n,))
        for r in rows.tolist():
            k, a = int(b.block_of[r]), int(addr[r])
            col = a & 0xFFFF
            if a >> 16 or col + self.ncols > TMEM_COLUMNS or not st.owned[k, col:col + self.ncols].all():
                raise LaunchError(f"{b.ir.name}{_at(self.where)}: {what} in block {b.block_name(k)} frees columns "
                                  f"{col}..{col + self.ncols - 1} (address 0x{a:x}), which the CTA has not allocated; "
                                  f"rule: deallocate only allocated tensor memory, from the address the allocation gave")
            st.owned[k, col:col + self.ncols] = False
            st.freed.setdefault(k, []).append((col, self.ncols, self.where))
            live = st.allocs.get(k, {})
            for c0 in [c0 for c0, (m, _) in live.items() if c0 < col + self.ncols and col < c0 + m]:
                if not st.owned[k, c0:c0 + live[c0][0]].any():
                    del live[c0]

    def cuda(self, r: Any) -> None:
        a = r.expr(self.addr)[0] if is_sym(self.addr) else str(int(self.addr))
        r.emit(f'asm volatile("tcgen05.dealloc.cta_group::{self.group}.sync.aligned.b32 %0, {self.ncols};" '
               f':: "r"((unsigned)({a})) : "memory");')


def check_freed_at_exit(b: Any) -> None:
    """At the end of a batch (its CTAs exited): refuse tensor memory a CTA allocated and never freed,
    naming the allocation's line (the hardware requires every allocation to be deallocated before the
    CTA exits)."""
    st = b.common.get("tmem")
    if st is None or not st.owned.any():
        return
    k = int(np.nonzero(st.owned.any(axis=1))[0][0])
    live = sorted(st.allocs.get(k, {}).items())
    held = [(c0, n, at) for c0, (n, at) in live if st.owned[k, c0:c0 + n].any()]
    if held:
        c0, n, at = held[0]
        what = (f"the {n} columns {c0}..{c0 + n - 1} allocated by cute.arch.alloc_tmem({n})"
                f"{f' at {at}' if at else ''}")
    else:  # not reached: every owned column comes from a recorded allocation
        cols = np.nonzero(st.owned[k])[0]
        what = f"columns {int(cols.min())}..{int(cols.max())}"
    more = f" ({len(held) - 1} more allocation(s) of this CTA also not freed)" if len(held) > 1 else ""
    raise LaunchError(f"{b.ir.name}: block {b.block_name(k)} exited holding tensor memory: {what}{more}; rule: a CTA "
                      f"deallocates all the tensor memory it allocated (cute.arch.dealloc_tmem / "
                      f"TmemAllocator.free) before it exits")


class Tcgen05FenceOp(Op):
    """``tcgen05.fence::before_thread_sync`` / ``after_thread_sync``, ``tcgen05.wait::ld/st``: GPU
    ordering of the asynchronous tcgen05 operations; no CPU effect (the interpreter runs them in order)."""

    min_sm = 100  # tcgen05: sm_100a

    __slots__ = ("kind",)

    def __init__(self, kind: str):
        self.kind = kind

    def __repr__(self) -> str:
        return f"tcgen05.{self.kind}"

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        return None

    def cuda(self, r: Any) -> None:
        r.emit(f'asm volatile("tcgen05.{self.kind};" ::: "memory");')


def _where(t: Any) -> str:
    """The user's line being traced (the innermost frame outside cutelab), else the statement's."""
    from ..frontend.trace import user_location

    return user_location() or getattr(t, "location", None) or ""


def alloc_tmem(num_columns: Any, smem_ptr_to_write_address: Any, is_two_cta: Any = None, *, arch: str = "sm_100",
               loc: Any = None, ip: Any = None) -> None:
    """``cute.arch.alloc_tmem``: the warp allocates num_columns columns (a static power of two, 32 to
    512) and writes their TMEM address to the 32-bit shared word."""
    what = f"cute.arch.alloc_tmem({num_columns})"
    t = current(what)
    n = _cols_arg(num_columns, what)
    sh, base = smem_word(smem_ptr_to_write_address, what)
    t.emit(TmemAllocOp(n, sh, base, _where(t), 2 if is_two_cta else 1))


def relinquish_tmem_alloc_permit(is_two_cta: Any = None, *, loc: Any = None, ip: Any = None) -> None:
    """``cute.arch.relinquish_tmem_alloc_permit``: the CTA promises to allocate no more TMEM."""
    t = current("cute.arch.relinquish_tmem_alloc_permit")
    t.emit(TmemRelinquishOp(_where(t), 2 if is_two_cta else 1))


def _hw_address(ptr: Any, what: str) -> Any:
    """The 32-bit TMEM address (lane << 16 | column) of a TMEM pointer or tensor."""
    from ...nvgpu.tcgen05.tmem import TmemEngine, tmem_dp_stride

    eng, off = getattr(ptr, "engine", None), getattr(ptr, "offset", 0)
    if not isinstance(eng, TmemEngine):
        t = current(what)
        raise TraceError(f"kernel {t.name}: {what}: expected a tensor-memory pointer (retrieve_tmem_ptr), got "
                         f"{ptr!r}{_at(_where(t))}")
    epc = _epc(eng.dtype)
    if epc == 1:
        return off
    dp = tmem_dp_stride(eng.dtype)
    if is_sym(off):
        return floordiv(off, dp) * 65536 + floordiv(mod(off, dp), epc)
    return (int(off) // dp) * 65536 + (int(off) % dp) // epc


def dealloc_tmem(tmem_ptr: Any, num_columns: Any, is_two_cta: Any = None, *, arch: str = "sm_100", loc: Any = None,
                 ip: Any = None) -> None:
    """``cute.arch.dealloc_tmem``: the warp frees num_columns columns from tmem_ptr."""
    what = f"cute.arch.dealloc_tmem(..., {num_columns})"
    t = current(what)
    n = _cols_arg(num_columns, what)
    t.emit(TmemDeallocOp(_hw_address(tmem_ptr, what), n, _where(t), 2 if is_two_cta else 1))


def retrieve_tmem_ptr(element_type: Any, alignment: Any, ptr_to_buffer_holding_addr: Any, *, loc: Any = None,
                      ip: Any = None) -> Any:
    """``cute.arch.retrieve_tmem_ptr``: a TMEM pointer to element_type at the address the allocation
    wrote to the shared word (read now: call it after the allocating warp's barrier)."""
    from ...layout import make_layout
    from ...nvgpu.tcgen05.tmem import TmemEngine, tmem_dp_stride
    from ...tensor import Pointer, Tensor

    what = "cute.arch.retrieve_tmem_ptr"
    sh, base = smem_word(ptr_to_buffer_holding_addr, what)
    from ..frontend.engines import SmemEngine

    word = Tensor(SmemEngine(sh), make_layout(1), base, _checked=True)[0]  # the 32-bit address, read now
    a = word.as_index() if isinstance(word, TraceValue) else int(word)
    epc = _epc(element_type)
    off = a if epc == 1 else floordiv(a, 65536) * tmem_dp_stride(element_type) + mod(a, 65536) * epc
    return Pointer(TmemEngine(element_type), off)


def fence_view_async_tmem_load(*, loc: Any = None, ip: Any = None) -> None:
    """``cute.arch.fence_view_async_tmem_load``: ``tcgen05.wait::ld`` (the thread's TMEM loads are done)."""
    current("cute.arch.fence_view_async_tmem_load").emit(Tcgen05FenceOp("wait::ld.sync.aligned"))


def fence_view_async_tmem_store(*, loc: Any = None, ip: Any = None) -> None:
    """``cute.arch.fence_view_async_tmem_store``: ``tcgen05.wait::st`` (the thread's TMEM stores are done)."""
    current("cute.arch.fence_view_async_tmem_store").emit(Tcgen05FenceOp("wait::st.sync.aligned"))


# --------------------------------------------------------------------------- tcgen05.ld / st

class TmemCopyOp(Op):
    """One cute.copy between TMEM and registers (``tcgen05.ld``: load, or ``tcgen05.st``).

    Thread t (lane l = t % 32) moves value j of ``regs``: register ``reg_offs[j]`` of the fragment
    ``reg`` and the TMEM element at ``base + tmem_offs[l, j]`` (element units of dtype). ``own_lane``: the
    TMEM tensor was partitioned with the register-side layout, so each thread's base holds its own lane,
    which must be lane 32 * (w % 4) + l for lane l of warp w (what a 32x32b copy moves for it)."""

    min_sm = 100  # tcgen05: sm_100a

    __slots__ = ("load", "dtype", "base", "tmem_offs", "reg", "reg_offs", "src", "ptx", "where", "own_lane")

    def __init__(self, load: bool, dtype: Any, base: Any, tmem_offs: np.ndarray, reg: Any, reg_offs: np.ndarray,
                 src: Any, ptx: Tuple[str, int], where: str, own_lane: bool = False):
        self.load, self.dtype, self.base, self.tmem_offs = load, dtype, base, tmem_offs
        self.reg, self.reg_offs, self.src, self.ptx, self.where = reg, reg_offs, src, ptx, where
        self.own_lane = own_lane

    def __repr__(self) -> str:
        from ..ir.nodes import _ref_str

        d = "ld" if self.load else "st"
        regs = self.reg.name if self.reg is not None else "registers"
        return f"tcgen05.{d} {regs}[{self.reg_offs.size}] <-> tmem[{_ref_str(self.base)} + ...]"

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        from ...nvgpu.tcgen05.tmem import tmem_dp_stride
        from ..cpu.context import warp_of, warps_per_block

        what = f"tcgen05.{'ld' if self.load else 'st'} (cute.copy with a TMEM {'load' if self.load else 'store'} atom)"
        w = b.whole_warps(mask, f"{what}{_at(self.where)}", what)
        act = np.repeat(w, 32)
        rows = np.nonzero(act)[0]
        if rows.size == 0:
            return
        st = tmem_state(b)
        base = np.broadcast_to(np.asarray(b.index(self.base), dtype=np.int64), (b.n,))[rows]
        lane_in_warp = rows % 32
        addr = base[:, None] + self.tmem_offs[lane_in_warp]  # (rows, values)
        dp = tmem_dp_stride(self.dtype)
        epc = _epc(self.dtype)
        lane, e = addr // dp, addr % dp
        blk = b.block_of[rows]
        quarter = (warp_of(b)[rows] % warps_per_block(b)) % 4
        bad = (lane // 32) != quarter[:, None]
        if (addr < 0).any() or (lane >= TMEM_LANES).any() or bad.any():
            i = np.unravel_index(int(np.argmax(bad | (addr < 0) | (lane >= TMEM_LANES))), bad.shape)
            r = int(rows[i[0]])
            wib = (r % b.nt) // 32
            raise LaunchError(
                f"{b.ir.name}{_at(self.where)}: {what}: warp {wib} of block {b.block_name(int(b.block_of[r]))} "
                f"touches tensor-memory lane {int(lane[i])}; rule: warp w of a CTA may access only its lane quarter "
                f"(lanes {32 * (wib % 4)}..{32 * (wib % 4) + 31} for warp {wib}) with tcgen05.ld/st")
        if self.own_lane:
            mine = (quarter * 32 + lane_in_warp)[:, None]
            if (lane != mine).any():
                i = np.unravel_index(int(np.argmax(lane != mine)), lane.shape)
                r = int(rows[i[0]])
                raise LaunchError(
                    f"{b.ir.name}{_at(self.where)}: {what}: thread {r % b.nt} of block "
                    f"{b.block_name(int(b.block_of[r]))} gives the address of tensor-memory lane {int(lane[i])} "
                    f"(its TMEM tensor is partitioned with the copy's register-side layout, one lane per thread); "
                    f"rule: a 32x32b tcgen05.ld/st moves lane {int(mine[i[0], 0])} for this thread (lane "
                    f"{int(lane_in_warp[i[0]])} of warp {(r % b.nt) // 32})")
        col = e // epc
        check_columns(b, st, np.broadcast_to(blk[:, None], col.shape), col, what, _at(self.where))
        _check_no_pending_umma(b, blk, col, what, _at(self.where))
        cells = tmem_cells(st, self.dtype)
        if self.load:
            vals = cells[blk[:, None], lane, e]
            from ..cpu.context import from_real, to_real

            if np.dtype(self.reg.dtype.storage) != vals.dtype or self.reg.dtype.name != self.dtype.name:
                vals = from_real(to_real(vals, self.dtype), self.reg.dtype)
            regs = b.regs[self.reg.id]
            regs[rows[:, None], self.reg_offs[None, :]] = vals
        else:
            vals = b.matrix(self.src, self.dtype)[rows]
            cells[blk[:, None], lane, e] = vals

    def cuda(self, r: Any) -> None:
        """One ``tcgen05.ld/st.sync.aligned.32x32b.x<r>.b32`` per instance of the atom (lane l of the warp
        moves columns c..c+r-1 of its lane, register j holding column c+j), then ``tcgen05.wait::ld/st``; the
        other shapes, element widths and packings through tcgen05_ldst.print_tmem_copy."""
        shape, rep = self.ptx[0], self.ptx[1]
        d = "ld" if self.load else "st"
        if shape != "32x32b" or self.dtype.width != 32 or (len(self.ptx) > 2 and self.ptx[2]):
            from .tcgen05_ldst import print_tmem_copy

            print_tmem_copy(self, r, f"kernel {r.ir.name}{_at(self.where)}")
            return
        n = self.reg_offs.size
        if n % rep:
            raise TraceError(f"kernel {r.ir.name}{_at(self.where)}: tcgen05.{d}: {n} values are not whole x{rep} copies")
        if self.load:
            r.declare(self.reg)
            reg = r.reg(self.reg)
        ops = ", ".join(f"%{i}" for i in range(rep))
        for k in range(n // rep):
            a0 = self.base + int(self.tmem_offs[0, k * rep]) if is_sym(self.base) else \
                int(self.base) + int(self.tmem_offs[0, k * rep])
            addr = r.expr(a0)[0] if is_sym(a0) else str(int(a0))
            part = range(k * rep, (k + 1) * rep)
            if self.load:
                outs = ", ".join(f'"=r"(*(unsigned*)&{reg}[{int(self.reg_offs[j])}])' for j in part)
                r.emit(f'asm volatile("tcgen05.ld.sync.aligned.32x32b.x{rep}.b32 {{{ops}}}, [%{rep}];" : {outs} : '
                       f'"r"((unsigned)({addr})) : "memory");')
            else:
                def bits(ref: Any) -> str:
                    v = r.stored(ref, self.dtype)
                    return f"__float_as_uint({v})" if self.dtype.kind == "float" else f"(unsigned)({v})"

                ins = ", ".join(f'"r"({bits(self.src[j])})' for j in part)
                r.emit(f'asm volatile("tcgen05.st.sync.aligned.32x32b.x{rep}.b32 [%{rep}], {{{ops}}};" :: {ins}, '
                       f'"r"((unsigned)({addr})) : "memory");')
        r.emit(f'asm volatile("tcgen05.wait::{d}.sync.aligned;" ::: "memory");')


def _check_no_pending_umma(b: Any, blk: np.ndarray, col: np.ndarray, what: str, where: str) -> None:
    """Refuse a TMEM access to columns that a UMMA or a tcgen05.cp issued by the CTA (or by its pair's leader)
    and not yet committed writes: on the GPU it races with them (tcgen05.commit, then a wait on its mbarrier,
    orders them)."""
    pend = b.common.get("umma_pending")
    if not pend:
        return
    from ...nvgpu.tcgen05.tmem import tmem_dp_stride

    csize = int(getattr(b, "cluster_size", 1))
    for k in np.unique(blk).tolist():
        leader = k - (k % csize) % 2 if csize % 2 == 0 else k
        for issuer in {k, leader}:
            for op, _a, _b, acc0, _f in pend.get(issuer, []):
                cols = getattr(op, "written_columns", None)
                group = getattr(getattr(getattr(op, "op", None), "cta_group", None), "value", 1)
                if issuer != k and group != 2:
                    continue
                if cols is not None:  # a tcgen05.cp
                    ucols, who = cols(acc0), f"a tcgen05.cp.{op.ptx_shape()}"
                else:
                    adt = getattr(op.op, "acc_dtype", None)  # the accumulator's element addresses -> 32-bit columns
                    if adt is None:
                        continue
                    ucols = set((((acc0 + op.acc_offs.reshape(-1)) % tmem_dp_stride(adt)) // _epc(adt)).tolist())
                    who = "a UMMA"
                mine = set(col[blk == k].reshape(-1).tolist())
                if ucols & mine:
                    raise LaunchError(f"{b.ir.name}{where}: {what} in block {b.block_name(k)} touches tensor-memory "
                                      f"column {min(ucols & mine)}, which {who} issued{op.where and ' at ' + op.where} "
                                      f"writes and no tcgen05.commit has completed yet; rule: read or write tensor "
                                      f"memory that a tcgen05.mma or tcgen05.cp writes only after a tcgen05.commit of "
                                      f"them and a wait on its mbarrier (tcgen05.wait::ld/st order only tcgen05.ld/st; "
                                      f"PipelineUmmaAsync: acquire, wait)")


def _value_tables(atom: Any, S: Any, D: Any, what: str) -> Tuple[np.ndarray, np.ndarray, bool]:
    """For the TMEM side S and the register side D of one thread's copy: (tmem element offsets per
    lane and register value (32, n), register offsets (n,), own_lane), n the register side's size; own_lane:
    the TMEM tensor is the thread's own lane (partitioned with the register-side layout), its offsets the
    same for every lane."""
    from ...layout import Layout

    load = S.memspace == "tmem"
    tm, rg = (S, D) if load else (D, S)
    op_shape = getattr(getattr(atom, "op", None), "_SHAPE", None)
    tv_t = atom.layout_src_tv if load else atom.layout_dst_tv
    tv_r = atom.layout_dst_tv if load else atom.layout_src_tv
    nt = it.product(tv_t.shape[1])
    nr = it.product(tv_r.shape[1])
    sh_t, sh_r = tm.layout.shape, rg.layout.shape
    m0t = it.product(sh_t[0]) if isinstance(sh_t, tuple) else it.product(sh_t)
    m0r = it.product(sh_r[0]) if isinstance(sh_r, tuple) else it.product(sh_r)
    nrest_t = it.product(sh_t) // max(1, m0t)
    nrest_r = it.product(sh_r) // max(1, m0r)
    if m0t == nr and nt != nr and m0r == nr and nrest_t == nrest_r and op_shape == "32x32b":
        # the TMEM tensor partitioned with the copy's register-side layout (CUTLASS's FMHA prefill d512:
        # thr_load.partition_D(tmem) of a load, then loads and stores through it): thread t's values are at its
        # own lane (its offset holds lane t), in the register values' order; CuTe DSL passes each thread its own
        # address (lane t) to tcgen05.ld/st, and the interpreter checks that it is lane 32 * (w % 4) + t % 32
        # (TmemCopyOp.own_lane)
        off_t = _static_offsets(tm.layout, what).reshape(nrest_t, nr)
        off_r = _static_offsets(rg.layout, what).reshape(nrest_r, nr) + rg.engine._static(rg.offset, what)
        return np.tile(off_t.reshape(1, -1), (32, 1)), off_r.reshape(-1), True
    if m0t != nt or m0r != nr or nrest_t != nrest_r:
        raise TraceError(f"{what}: the TMEM tensor {tm.layout} and the register tensor {rg.layout} are not one "
                         f"thread's partition of this TMEM copy (the atom has {nt} TMEM values and {nr} register "
                         f"values per thread); partition them with tiled_copy.get_slice(tidx).partition_S/D")
    off_t = _static_offsets(tm.layout, what).reshape(nrest_t, nt)
    off_r = _static_offsets(rg.layout, what).reshape(nrest_r, nr) + rg.engine._static(rg.offset, what)
    tvt = np.asarray(Layout.offsets(tv_t)).reshape(nt, 32).T  # (lane, value) -> reference index
    tvr = np.asarray(Layout.offsets(tv_r)).reshape(nr, 32).T
    table = np.zeros((32, nrest_r * nr), dtype=np.int64)
    for lane in range(32):
        inv = {int(x): u for u, x in enumerate(tvt[lane])}
        try:
            u = np.array([inv[int(x)] for x in tvr[lane]], dtype=np.int64)
        except KeyError:
            raise TraceError(f"{what}: the atom's register values of lane {lane} are not all among its TMEM values")
        table[lane] = off_t[:, u].reshape(-1)
    return table, off_r.reshape(-1), False


def tmem_copy(atom: Any, src: Any, dst: Any, kwargs: dict) -> bool:
    """cute.copy with a TMEM load/store atom inside a kernel; False for other atoms."""
    from ...nvgpu.tcgen05.copy import _LdBase, _StBase
    from ...nvgpu.tcgen05.tmem import TmemEngine

    op = getattr(atom, "op", None)
    if not isinstance(op, (_LdBase, _StBase)):
        return False
    t = current("cute.copy")
    load = isinstance(op, _LdBase)
    what = f"kernel {t.name}: cute.copy with {type(op).__name__}{_at(_where(t))}"
    if kwargs.get("pred") is not None:
        raise TraceError(f"{what}: a TMEM copy has no predicate")
    tm, rg = (src, dst) if load else (dst, src)
    if not isinstance(getattr(tm, "engine", None), TmemEngine):
        raise TraceError(f"{what}: the {'source' if load else 'destination'} must be a tensor-memory tensor, got "
                         f"{getattr(tm, 'memspace', tm)}")

    eng = getattr(rg, "engine", None)
    # a store's source may be a view of a fragment as another type of the width of the cells (the FMHA's bf16
    # probabilities stored as f32 words through recast_ptr; flash_attn.cute's SM100 backward's bf16 dS through
    # cute.recast_tensor): only read; a load writes the fragment's own registers
    if not (isinstance(eng, RmemEngine) or (not load and isinstance(eng, RmemView))):
        raise TraceError(f"{what}: the {'destination' if load else 'source'} must be a register tensor "
                         f"(cute.make_rmem_tensor{'' if load else ', or a recast_ptr / recast_tensor view of one'}), got "
                         f"{getattr(rg, 'memspace', rg)}{' (a recast view of registers)' if isinstance(eng, RmemView) else ''}")
    dt = tm.element_type
    if eng.dtype.width != dt.width:
        raise TraceError(f"{what}: the registers hold {eng.dtype}, the tensor memory {dt}")
    table, roffs, own = _value_tables(atom, src, dst, what)
    ptx = (op._SHAPE, op.repeat.value, bool(getattr(op, "_packed", False)))
    if load:
        if eng.reg is None:
            eng.make_mutable(t)
        if eng.reg is None:
            raise TraceError(f"{what}: the register fragment was made in a region that has ended")
        t.emit(TmemCopyOp(True, dt, tm.offset, table, eng.reg, roffs, None, ptx, _where(t), own))
    else:
        refs = tuple(rg.load().refs)  # in the register tensor's layout order
        order = _static_offsets(rg.layout, what) + int(rg.offset)
        pos = {int(o): i for i, o in enumerate(order)}
        refs = tuple(refs[pos[int(o)]] for o in roffs)
        t.emit(TmemCopyOp(False, dt, tm.offset, table, None, roffs, refs, ptx, _where(t), own))
    return True

