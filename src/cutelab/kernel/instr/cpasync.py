"""``cp.async`` inside a kernel: ``cute.copy`` with a ``cpasync.CopyG2SOp`` atom (global -> shared,
asynchronous), ``cute.arch.cp_async_commit_group()`` and ``cute.arch.cp_async_wait_group(n)``.

Semantics, as PTX defines them and CuTe DSL lowers them:

- each copy atom instance moves 4, 8 or 16 contiguous, aligned bytes from global to shared
  memory (``cp.async.ca.shared.global``, ``.cg`` for ``LoadCacheMode.GLOBAL``, 16 bytes only);
- with ``pred=``, one flag per atom instance: a false flag copies nothing from global memory and
  writes zeros to the destination (CuTe DSL emits ``src-size = pred ? n : 0``, which zero-fills;
  cutelab also points the unused source address at the tensor's start, so it is never out of
  bounds);
- copies issued by a thread join its next group at ``cp_async_commit_group()``;
  ``cp_async_wait_group(n)`` waits until at most the newest n committed groups of the thread
  are still in flight. Only then is the data in shared memory.

The CPU interpreter follows that: a copy reads global memory when it is issued but writes shared
memory only at the ``cp_async_wait_group`` that completes its group (older than the newest n),
so a program that reads shared memory before waiting sees the old contents on the CPU too (and
on the GPU it would race). Copies never waited for do not land.

>>> import cutelab as cute
>>> from cutelab.kernel.instr.cpasync import cp_async_wait_group
>>> cp_async_wait_group(0)
Traceback (most recent call last):
...
cutelab.errors.TraceError: cute.arch.cp_async_wait_group is only available inside a @cute.kernel function while it is launched
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np

from ... import int_tuple as it
from ...errors import TraceError
from ..ir.symbolic import Expr, is_sym
from ..ir.nodes import Access, Op
from ..frontend.engines import GmemEngine, RmemEngine, SmemEngine
from ..frontend.trace import TraceValue, _static_offsets, current, user_line

__all__ = ["CpAsyncCopy", "CpAsyncFromAddress", "CpAsyncCommit", "CpAsyncWait", "GuardedAccess", "is_cp_async", "cp_async_copy",
           "cp_async_commit_group", "cp_async_wait_group"]


class GuardedAccess(Access):
    """An access that happens only where ``guards`` (a list of (condition, polarity)) hold."""

    __slots__ = ("guards",)

    def __init__(self, param: Any, base: Any, offsets: Tuple[int, ...], is_store: bool, op: Any = None,
                 guards: Tuple[Any, ...] = ()):
        Access.__init__(self, param, base, offsets, is_store, op)
        self.guards = tuple(guards)


def _state(b: Any) -> Any:
    st = getattr(b, "cp_async", None)
    if st is None:
        st = _CpState(b.n)
        b.cp_async = st
    return st


class _CpState:
    """Per batch of threads: each thread's count of committed groups, and the copies in flight."""

    def __init__(self, n: int):
        self.seq = np.zeros(n, dtype=np.int64)  # groups committed so far, per thread
        self.useq: Any = 0  # the same as one int while every commit was made by every thread (else None)
        self.flight: List[list] = []  # [issued mask, group per thread, shared index, flat dst index, values]
        # (the dst index may be a pair (fixed, c) of ExecContext.index_at: the indices fixed + c; the
        # issued mask None and the group an int: a copy by every thread while useq held)


def _active(b: Any, mask: Any) -> np.ndarray:
    return np.ones(b.n, dtype=bool) if mask is None else mask


def _pred_column(b: Any, pred: Any) -> np.ndarray:
    if isinstance(pred, tuple):
        return np.asarray(b.column(pred, pred[0].dtype, real=True) != 0)
    return np.broadcast_to(np.asarray(b.index(pred)) != 0, (b.n,))


class CpAsyncCopy(Op):
    """One cp.async per thread: ``len(src_offsets)`` contiguous elements, global -> shared.

    ``pred`` is None (always), 0 (never: zero-fill only) or a condition (an Expr or a register
    Ref); ``cache`` is "ca" or "cg"; ``where`` the user's source line."""

    __slots__ = ("src", "src_base", "src_offsets", "dst", "dst_base", "dst_offsets", "pred", "cache", "where")

    def __init__(self, src: Any, src_base: Any, src_offsets: Tuple[int, ...], dst: Any, dst_base: Any,
                 dst_offsets: Tuple[int, ...], pred: Any, cache: str, where: str = ""):
        self.src, self.src_base, self.src_offsets = src, src_base, tuple(src_offsets)
        self.dst, self.dst_base, self.dst_offsets = dst, dst_base, tuple(dst_offsets)
        self.pred, self.cache, self.where = pred, cache, where

    @property
    def nbytes(self) -> int:
        return len(self.src_offsets) * self.src.dtype.bytes

    def __repr__(self) -> str:
        p = "" if self.pred is None else f" if {self.pred if not isinstance(self.pred, tuple) else self.pred[0].name}"
        return (f"cp.async.{self.cache} {self.dst.name}[{self.dst_base} + {list(self.dst_offsets)}] <- "
                f"{self.src.name}[{self.src_base} + {list(self.src_offsets)}] ({self.nbytes} B){p}")

    def accesses(self) -> List[Access]:
        out: List[Access] = [Access(self.dst, self.dst_base, self.dst_offsets, True, self)]
        if isinstance(self.pred, int) and not isinstance(self.pred, bool) and self.pred == 0:
            return out  # zero-fill only: no global read
        guards = () if self.pred is None else ((self.pred, True),)
        out.insert(0, GuardedAccess(self.src, self.src_base, self.src_offsets, False, self, guards))
        return out

    def profile(self, access: Access) -> dict:
        """For cutelab.profile: both accesses are one LDGSTS instruction (see trace.Op)."""
        return {"op": "ldgsts", "name": f"cp.async.{self.cache} {self.nbytes}B"}

    # ---- CPU
    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:

        act = _active(b, mask)
        ir = b.ir
        k = len(self.src_offsets)
        go = act.copy()
        if self.pred is not None:
            go &= _pred_column(b, self.pred) if not isinstance(self.pred, int) else bool(self.pred)
        if mask is None and go.all():  # every thread: indices at fixed + c, fixed made once per batch
            data, length, _ = b.memory(self.src, buffers)
            src = b.index_at(self.src_base, self.src_offsets, length, None,
                             f"{ir.name}: cp.async from {self.src.name}", _at(self.where))
            _, dlen, shift = b.memory(self.dst, buffers)
            dst = b.index_at(self.dst_base, self.dst_offsets, dlen, shift,
                             f"{ir.name}: cp.async to {self.dst.name}", _at(self.where))
            if src is not None and dst is not None:
                fixed, c = src
                vals = (np.take(data[c:], fixed) if c >= 0 else np.take(data, fixed + c)).astype(
                    self.src.dtype.storage, copy=False)
                st = _state(b)
                group = st.useq if st.useq is not None else st.seq.copy()
                st.flight.append([None, group, self.dst.index, dst, vals])
                return
        if go.all():  # every thread copies: the accesses of all threads, unmasked
            data, length, _ = b.memory(self.src, buffers)
            idx = b.access_index(self.src_base, self.src_offsets, length,
                                 f"{ir.name}: cp.async from {self.src.name}", None, _at(self.where))
            vals = data[idx].astype(self.src.dtype.storage, copy=False)
        else:
            vals = np.zeros((b.n, k), dtype=self.src.dtype.storage)
            if go.any():
                data, length, _ = b.memory(self.src, buffers)
                idx = b.access_index(self.src_base, self.src_offsets, length,
                                     f"{ir.name}: cp.async from {self.src.name}", go, _at(self.where))
                vals[go] = data[idx[go]]
        _, dlen, shift = b.memory(self.dst, buffers)
        didx = b.access_index(self.dst_base, self.dst_offsets, dlen,
                             f"{ir.name}: cp.async to {self.dst.name}", mask, _at(self.where))
        didx = didx + shift[:, None]
        st = _state(b)
        st.flight.append([act.copy(), st.seq.copy(), self.dst.index, didx, vals])

    guardable = True  # the launch may guard its global read (guards.py): out of range, it zero-fills

    # ---- CUDA
    def cuda(self, r: Any) -> None:
        n = self.nbytes
        src, dst = self.src, self.dst
        so = r.base(self.src_base, self.src_offsets, src, self)
        do = r.base(self.dst_base, self.dst_offsets, dst, self)
        code = r.guard_code(self)
        if code is not None:  # not proved in bounds: test it; out of range, record it and touch nothing
            acc = r.guard_accesses(self)
            src_ok = r.guard_cond(self, [a for a in acc if not a.is_store])
            dst_ok = r.guard_cond(self, [a for a in acc if a.is_store])
            want = "true" if self.pred is None else (
                ("true" if self.pred else "false") if isinstance(self.pred, int) else r.cond(self.pred))
            pv = r.fresh("cp")
            r.emit(f"const bool {pv}w = {want};")
            r.emit(f"const bool {pv}d = {dst_ok};")
            r.emit(f"const bool {pv} = {pv}w && ({src_ok});")
            r.emit(f"if (({pv}w && !{pv}) || !{pv}d) cl_fail({code}u);")
            # an out-of-range destination: no copy at all (not even the zero-fill)
            with r.braces(f"if ({pv}d) {{"):
                self._emit(r, pv, so, do)
            return
        s_off, d_off = self._offs(r, so, do)
        saddr = r.shared_address(dst, f"{do}{d_off}")
        if self.pred is None:
            r.emit(f'asm volatile("cp.async.{self.cache}.shared.global [%0], [%1], {n};\\n" :: '
                   f'"r"({saddr}), "l"({src.name} + {so}{s_off}) : "memory");')
            return
        if isinstance(self.pred, int) and not isinstance(self.pred, bool):
            cond = "true" if self.pred else "false"
        else:
            cond = r.cond(self.pred)
        pv = r.fresh("cp")
        r.emit(f"const bool {pv} = {cond};")
        self._emit(r, pv, so, do)

    def _offs(self, r: Any, so: str, do: str) -> tuple:
        """The constant parts of the source and destination addresses (what the base locals so and
        do do not already include: LoweringContext.base_shift)."""
        s = self.src_offsets[0] - r.base_shift(so)
        d = self.dst_offsets[0] - r.base_shift(do)
        return (f" + {s}" if s else ""), (f" + {d}" if d else "")

    def _emit(self, r: Any, pv: str, so: str, do: str) -> None:
        """cp.async with src-size pv ? n : 0 (a false pv reads nothing and zero-fills: the source
        address is not dereferenced then, as in CUTLASS, so it is passed as it is: no select of a
        64-bit pointer per copy)."""
        n = self.nbytes
        s_off, d_off = self._offs(r, so, do)
        saddr = r.shared_address(self.dst, f"{do}{d_off}")
        ins = f"cp.async.{self.cache}.shared.global [%0], [%1], {n}, %2;\\n"
        r.emit(f'asm volatile("{ins}" :: "r"({saddr}), "l"({self.src.name} + {so}{s_off}), '
               f'"r"({pv} ? {n}u : 0u) : "memory");')


class CpAsyncFromAddress(Op):
    """One cp.async per thread whose source is a pointer at a runtime address (address_access: a
    register element ``addr`` holding the byte address, ``src_base`` an element offset from it):
    ``len(src_offsets)`` contiguous elements of ``dtype`` into ``dst``. ``pred`` as CpAsyncCopy's.
    On the CPU the address is found, per thread, among the memory the launch knows (a kernel
    argument or memory of the emulated device) and checked; an address in none is a LaunchError
    naming the copy and the line."""

    __slots__ = ("addr", "src_base", "src_offsets", "dtype", "dst", "dst_base", "dst_offsets", "pred", "cache",
                 "where")
    stores_by_address = False  # it reads at the address and writes only its shared memory

    def __init__(self, addr: Any, src_base: Any, src_offsets: Tuple[int, ...], dtype: Any, dst: Any, dst_base: Any,
                 dst_offsets: Tuple[int, ...], pred: Any, cache: str, where: str = ""):
        self.addr, self.src_base, self.src_offsets, self.dtype = addr, src_base, tuple(src_offsets), dtype
        self.dst, self.dst_base, self.dst_offsets = dst, dst_base, tuple(dst_offsets)
        self.pred, self.cache, self.where = pred, cache, where

    @property
    def nbytes(self) -> int:
        return len(self.src_offsets) * self.dtype.bytes

    def __repr__(self) -> str:
        from ..ir.nodes import _ref_str

        return (f"cp.async.{self.cache} {self.dst.name}[{self.dst_base} + {list(self.dst_offsets)}] <- "
                f"(({self.dtype.name}*){_ref_str(self.addr)})[{self.src_base} + {list(self.src_offsets)}] "
                f"({self.nbytes} B)")

    def accesses(self) -> List[Access]:
        return [Access(self.dst, self.dst_base, self.dst_offsets, True, self)]  # the source: checked when it runs

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        from ...numeric import Int64
        from .address_access import resolve

        act = _active(b, mask)
        go = act.copy()
        if self.pred is not None:
            go &= _pred_column(b, self.pred) if not isinstance(self.pred, int) else bool(self.pred)
        k = len(self.src_offsets)
        vals = np.zeros((b.n, k), dtype=self.dtype.storage)
        if go.any():
            addr = np.broadcast_to(np.asarray(b.column(self.addr, Int64, real=True), dtype=np.int64), (b.n,))[go]
            base = np.broadcast_to(np.asarray(b.index(self.src_base), dtype=np.int64), (b.n,))[go]
            byte = addr[:, None] + (base[:, None] + np.asarray(self.src_offsets, dtype=np.int64)[None, :]) \
                * self.dtype.bytes
            got = np.zeros(byte.shape, dtype=self.dtype.storage)
            for elems, inside, idx in resolve(b, buffers, byte, self.dtype,
                                              f"{b.ir.name}: cp.async from a pointer made from a runtime address"
                                              f"{_at(self.where)}"):
                got[inside] = elems[idx]
            vals[go] = got
        _, dlen, shift = b.memory(self.dst, buffers)
        didx = b.access_index(self.dst_base, self.dst_offsets, dlen,
                              f"{b.ir.name}: cp.async to {self.dst.name}", mask, _at(self.where))
        didx = didx + shift[:, None]
        st = _state(b)
        st.flight.append([act.copy(), st.seq.copy(), self.dst.index, didx, vals])

    def cuda(self, r: Any) -> None:
        from ...numeric import Int64

        n = self.nbytes
        st = r.ctype(self.dtype)[0]
        do = r.base(self.dst_base, self.dst_offsets, self.dst, self)
        d = self.dst_offsets[0] - r.base_shift(do)
        saddr = f"(unsigned int)__cvta_generic_to_shared({self.dst.name} + {do}{f' + {d}' if d else ''})"
        base = r.expr(self.src_base)[0] if not isinstance(self.src_base, (int, np.integer)) else str(int(self.src_base))
        src = f"(const {st}*)(unsigned long long)({r.value(self.addr, Int64)}) + ({base}) + {self.src_offsets[0]}"
        if self.pred is None:
            r.emit(f'asm volatile("cp.async.{self.cache}.shared.global [%0], [%1], {n};\\n" :: '
                   f'"r"({saddr}), "l"({src}) : "memory");')
            return
        cond = ("true" if self.pred else "false") if isinstance(self.pred, int) else r.cond(self.pred)
        r.emit(f'asm volatile("cp.async.{self.cache}.shared.global [%0], [%1], {n}, %2;\\n" :: '
               f'"r"({saddr}), "l"({src}), "r"(({cond}) ? {n}u : 0u) : "memory");')


class CpAsyncCommit(Op):
    """``cp.async.commit_group``: the thread's uncommitted copies become its newest group."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "cp.async.commit_group"

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        st = _state(b)
        st.seq[_active(b, mask)] += 1
        st.useq = st.useq + 1 if mask is None and st.useq is not None else None

    def cuda(self, r: Any) -> None:
        r.emit('asm volatile("cp.async.commit_group;\\n" ::: "memory");')


class CpAsyncWait(Op):
    """``cp.async.wait_group n``: all but the newest n committed groups of the thread have landed."""

    __slots__ = ("n",)

    def __init__(self, n: int):
        self.n = n

    def __repr__(self) -> str:
        return f"cp.async.wait_group {self.n}"

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        st = getattr(b, "cp_async", None)
        if st is None:
            return
        act = _active(b, mask)
        keep = []
        for rec in st.flight:
            issued, group, sh, didx, vals = rec
            if issued is None:  # issued by every thread, in group `group` of every thread
                if mask is None and st.useq is not None:  # and every thread waits: all land, or none
                    if group < st.useq - self.n:
                        fixed, c = didx if type(didx) is tuple else (didx, 0)
                        (b.shared[sh][c:] if c >= 0 else b.shared[sh])[fixed if c >= 0 else fixed + c] = vals
                    else:
                        keep.append(rec)
                    continue
                issued = rec[0] = np.ones(b.n, dtype=bool)
                if type(group) is not np.ndarray:
                    group = rec[1] = np.full(b.n, group, dtype=np.int64)
            land = issued & act & (group < st.seq - self.n)
            if type(didx) is tuple:  # (fixed, c): the indices are fixed + c
                fixed, c = didx
                if land.all() and c >= 0:
                    b.shared[sh][c:][fixed] = vals
                    rec[0] = issued = issued & ~land
                    if issued.any():
                        keep.append(rec)
                    continue
                didx = rec[3] = fixed + c
            if land.all():  # every thread's copy lands
                b.shared[sh][didx] = vals
                issued &= ~land
            elif land.any():
                b.shared[sh][didx[land]] = vals[land]
                issued &= ~land
            if issued.any():
                keep.append(rec)
        st.flight = keep

    def cuda(self, r: Any) -> None:
        r.emit(f'asm volatile("cp.async.wait_group {self.n};\\n" ::: "memory");')


class CpAsyncMbarrierArrive(Op):
    """``cp.async.mbarrier.arrive[.noinc].shared::cta.b64 [mbar]``: an arrival on the mbarrier once
    every cp.async this thread issued before it (committed or not) has landed. ``.noinc``: the
    arrival counts against the barrier's expected count; without it the instruction first adds
    one pending arrival, so its own arrival leaves the count as it was.

    On the CPU the thread's copies land at once (completion may come any time before the arrival),
    then, with noinc, the thread arrives (kernel/instr/mbarrier.py)."""

    __slots__ = ("shared", "base", "noinc", "where")

    def __init__(self, shared: Any, base: Any, noinc: bool, where: str = ""):
        self.shared, self.base, self.noinc, self.where = shared, base, noinc, where

    def __repr__(self) -> str:
        noinc = ".noinc" if self.noinc else ""
        return f"cp.async.mbarrier.arrive{noinc} {self.shared.name}[{self.base}]"

    def accesses(self) -> List[Access]:
        return [Access(self.shared, self.base, (0,), False, self)]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        from .mbarrier import MbarrierOp

        CpAsyncWait(-1).interpret(b, mask, buffers)  # -1: the uncommitted copies too
        if self.noinc:
            MbarrierOp("arrive", self.shared, self.base, where=self.where).interpret(b, mask, buffers)

    def cuda(self, r: Any) -> None:
        from .mbarrier import smem_addr

        noinc = ".noinc" if self.noinc else ""
        r.emit(f'asm volatile("cp.async.mbarrier.arrive{noinc}.shared::cta.b64 [%0];\\n" :: '
               f'"r"({smem_addr(r, self.shared, self.base)}) : "memory");')


def cp_async_mbarrier_arrive(mbar_ptr: Any, noinc: bool = False) -> None:
    """cp.async.mbarrier.arrive on this CTA's mbarrier at mbar_ptr (CpAsyncMbarrierArrive): the copies
    this thread issued so far are tracked by the barrier, not by a commit group."""
    from .mbarrier import mbar_ref

    what = "cp.async.mbarrier.arrive"
    t = current(what)
    sh, base = mbar_ref(mbar_ptr, what)
    t.emit(CpAsyncMbarrierArrive(sh, base, bool(noinc), t.where()))
    t.cp_async_uncommitted = 0


def _at(where: str) -> str:
    return f" (at {where})" if where else ""


# --------------------------------------------------------------------------- tracing

def is_cp_async(atom: Any) -> bool:
    from ...nvgpu.cpasync import CopyG2SOp

    return isinstance(getattr(atom, "op", None), CopyG2SOp)


def _space(t: Any) -> str:
    eng = getattr(t, "engine", None)
    if isinstance(eng, SmemEngine):
        return "shared memory"
    if isinstance(eng, GmemEngine):
        return "global memory"
    if isinstance(eng, RmemEngine):
        return "registers"
    return type(eng).__name__


def _raw_alignment(x: Any, off: Any, nbytes: int) -> int:
    """The alignment of a raw pointer's copy (``prims.cp_async_shared_global``) into a kernel's
    tensor argument: what the offset proves if the argument starts at a multiple of nbytes (CuTe
    DSL's raw pointers carry no alignment: the address decides, as on the GPU). That start is then
    required of this launch's address (checked now) and of every later launch's (``Param.need_align``,
    checked by the launch plan); a shortfall of the offset itself is the caller's TraceError."""
    from ..ir.nodes import _align_of

    eng = x.engine
    if isinstance(eng, SmemEngine) or not isinstance(eng, GmemEngine):
        return 0
    if _align_of(nbytes, eng.dtype.bytes, off) < nbytes:
        return 0
    p = eng.param
    addr = int(getattr(eng, "address", 0) or 0)
    if addr % nbytes:
        return 0
    if getattr(p, "need_align", 0) < nbytes:
        p.need_align, p.need_align_where = nbytes, user_line()
    return nbytes


def cp_async_copy(atom: Any, src: Any, dst: Any, pred: Optional[Any] = None, raw: bool = False) -> None:
    """cute.copy(atom_or_tiled_copy, src, dst, pred=) for a CopyG2SOp atom inside a kernel; ``raw``:
    a raw-pointer copy (``prims.cp_async_shared_global``), aligned as its addresses are
    (_raw_alignment)."""
    from ...nvgpu.universal_copy import LoadCacheMode
    from ..frontend.control import predicate_flag as _flag

    t = current("cute.copy")
    where = user_line()
    what = f"kernel {t.name}: cute.copy with cp.async (CopyG2SOp) at {where}"
    from .address_access import AddressEngine

    by_address = isinstance(getattr(src, "engine", None), AddressEngine)  # make_ptr of a runtime Int64
    if not by_address and not (isinstance(getattr(src, "engine", None), GmemEngine)
                               and not isinstance(src.engine, SmemEngine)):
        raise TraceError(f"{what}: the source must be a tensor in global memory, got one in {_space(src)}")
    if not isinstance(getattr(dst, "engine", None), SmemEngine):
        raise TraceError(f"{what}: the destination must be a tensor in shared memory, got one in {_space(dst)} "
                         f"(cp.async copies global -> shared only)")
    vt = atom.value_type
    for name, x in (("source", src), ("destination", dst)):
        if x.element_type.width != vt.width:
            raise TraceError(f"{what}: the {name} holds {x.element_type} but the atom copies {vt}")
    bits = atom.num_bits_per_copy or vt.width
    V = bits // vt.width
    nbytes = bits // 8
    if nbytes not in (4, 8, 16):
        raise TraceError(f"{what}: cp.async copies 4, 8 or 16 bytes per thread, the atom copies {nbytes}")
    cache = "cg" if atom.op.cache_mode is LoadCacheMode.GLOBAL else "ca"
    if cache == "cg" and nbytes != 16:
        raise TraceError(f"{what}: cp.async.cg (LoadCacheMode.GLOBAL) copies 16 bytes only, the atom copies {nbytes}")
    if atom.op.cache_mode not in (LoadCacheMode.ALWAYS, LoadCacheMode.GLOBAL):
        raise TraceError(f"{what}: cp.async has cache modes ALWAYS (.ca) and GLOBAL (.cg), got {atom.op.cache_mode}")
    n = it.product(src.layout.shape)
    if n != it.product(dst.layout.shape):
        raise TraceError(f"{what}: sizes differ ({src.layout} has {n} elements, {dst.layout} "
                         f"{it.product(dst.layout.shape)})")
    if n % V:
        raise TraceError(f"{what}: {n} elements are not a whole number of {V}-element copies")
    soffs = _static_offsets(src.layout, "cute.copy")
    doffs = _static_offsets(dst.layout, "cute.copy")
    groups = n // V
    flags: List[Any] = [True] * groups
    if pred is not None:
        n_pred = it.product(pred.layout.shape)
        if n_pred != groups:
            raise TraceError(f"{what}: pred {pred.layout} has {n_pred} flags; expected one per {V}-element copy "
                             f"({groups})")
        flags = [_flag(pred[r]) for r in range(groups)]
    if not isinstance(src.offset, TraceValue):
        t.check_index(src.offset, "cute.copy")
    t.check_index(dst.offset, "cute.copy")
    for g in range(groups):
        so = [int(x) for x in soffs[g * V:(g + 1) * V]]
        do = [int(x) for x in doffs[g * V:(g + 1) * V]]
        for side, offs in (("source", so), ("destination", do)):
            if any(offs[j] != offs[0] + j for j in range(V)):
                raise TraceError(f"{what}: the {V} elements of copy {g} are not contiguous in the {side} "
                                 f"(offsets {offs}); a {nbytes}-byte cp.async needs contiguous elements")
        for side, x, o in (("source", src, so[0]), ("destination", dst, do[0])):
            off = x.offset + o if o else x.offset
            a = x.engine.alignment(off)
            if a < nbytes and raw:
                a = max(a, _raw_alignment(x, off, nbytes))
            if a < nbytes:
                raise TraceError(f"{what}: the {side} of copy {g} is aligned to {a} bytes only; a {nbytes}-byte "
                                 f"cp.async needs {nbytes}-byte aligned addresses (from_dlpack(..., assumed_align=16) "
                                 f"and shapes divisible by the vector)")
        f = flags[g]
        if f is False:
            p: Any = 0
        elif f is True:
            p = None
        else:
            t.check_refs([f], "a cp.async predicate")
            p = f
        dst.engine.param.written = True
        dbase, do = dst.offset, tuple(do)
        if hasattr(dst.engine, "runs"):  # swizzled shared memory (kernel/frontend/smem.py): the swizzled address
            runs = dst.engine.runs(dst.offset, do)
            if len(runs) != 1:
                raise TraceError(f"{what}: the {V} destination elements of copy {g} are not contiguous after the "
                                 f"swizzle {dst.engine.swizzle}; a {nbytes}-byte cp.async needs contiguous elements")
            dbase, do = runs[0][0], runs[0][1]
        if by_address:
            addr, sbase = src.engine.addr, src.offset
            if isinstance(sbase, TraceValue):  # an offset computed in registers: move the address
                moved = src.engine.address_of(sbase)
                t.check_refs(moved.refs, what)
                addr, sbase = moved.refs[0], 0
            t.emit(CpAsyncFromAddress(addr, sbase, tuple(so), src.engine.dtype, dst.engine.param, dbase, do, p,
                                      cache, where))
            continue
        src.engine.param.read = True
        t.emit(CpAsyncCopy(src.engine.param, src.offset, tuple(so), dst.engine.param, dbase, do, p,
                           cache, where))
    t.cp_async_uncommitted = getattr(t, "cp_async_uncommitted", 0) + groups


def cp_async_commit_group() -> None:
    """cute.arch.cp_async_commit_group(): the copies this thread issued since the last commit form a group."""
    t = current("cute.arch.cp_async_commit_group")
    t.emit(CpAsyncCommit())
    t.cp_async_uncommitted = 0
    t.cp_async_commits = getattr(t, "cp_async_commits", 0) + 1


def cp_async_wait_group(n: Any = 0) -> None:
    """cute.arch.cp_async_wait_group(n): wait until at most the newest n committed groups are in flight."""
    t = current("cute.arch.cp_async_wait_group")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or is_sym(n) or isinstance(n, Expr) or n < 0:
        raise TraceError(f"kernel {t.name}: cute.arch.cp_async_wait_group({n!r}) at {user_line()}: n must be a "
                         f"static int >= 0 (the number of newest groups left in flight)")
    pending = getattr(t, "cp_async_uncommitted", 0)
    if pending:
        raise TraceError(
            f"kernel {t.name}: cute.arch.cp_async_wait_group({int(n)}) at {user_line()}: {pending} cp.async copies (per thread) "
            f"were issued since the last cute.arch.cp_async_commit_group(); wait_group waits for committed groups "
            f"only, so they would never be waited for. Call cute.arch.cp_async_commit_group() first."
        )
    t.emit(CpAsyncWait(int(n)))
