"""Non-tensor bulk copies (SM90 ``cp.async.bulk``, no tensor map): a run of contiguous bytes moved
by the asynchronous copy unit.

- ``cute.copy(make_copy_atom(cpasync.CopyBulkG2SOp(), T), gmem, smem, mbar_ptr=bar)`` becomes a
  ``BulkCopyG2SOp``: the whole source (contiguous in global memory, the destination contiguous in
  shared memory, a multiple of 16 bytes, both 16-byte aligned) lands in shared memory and its bytes
  complete on the mbarrier (``mbarrier::complete_tx::bytes``). It is not elected: each thread that
  runs the copy issues one (quack's ``cpasync_bulk_get_copy_fn`` runs it under ``elect_one``).
  CPU: the issuing thread's copy lands at once and completes its bytes, as a TMA load does
  (kernel/instr/tma.py); an element outside the tensor or the shared array is a LaunchError.
  CUDA: ``cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [smem], [gmem], n, [bar]``.
- ``BulkCopyS2GOp`` (``cutlass.experimental.primitives.cp_async_bulk_global_shared_cta``, through
  ``bulk_store``): the other direction, n contiguous elements of shared memory into global memory, in a
  bulk group (``cp.async.bulk.global.shared::cta.bulk_group [gmem], [smem], n``). CPU: stored when
  issued, as the TMA stores of kernel/instr/tma_store.py (the bulk groups have no CPU effect).
  ``bulk_load`` is the pointer form of the load above (the primitive
  ``cp_async_bulk_shared_cluster_global``): it emits the same ``BulkCopyG2SOp``.
- ``BulkReduceAddOp``: ``cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [gmem], [smem], n``
  (inline PTX of quack's ``cpasync_reduce_bulk_add_f32``, lowered by kernel/instr/inline_asm.py): n bytes
  of f32 in shared memory added to global memory. CPU: added when issued, in issue order (several CTAs
  may add to the same elements), as the TMA reductions of kernel/instr/tma_store.py; the bulk groups
  have no CPU effect there either.
"""

from __future__ import annotations

from typing import Any, List

import numpy as np

from ...errors import LaunchError, TraceError
from ..frontend.trace import _static_offsets, current
from ..ir.nodes import Access, Op
from ..ir.symbolic import is_sym
from .mbarrier import complete_tx, mbar_ref, smem_addr

__all__ = ["BulkCopyG2SOp", "BulkCopyS2GOp", "BulkReduceAddOp", "bulk_copy", "bulk_load", "bulk_store",
           "bulk_reduce_add"]


def _code(r: Any, e: Any) -> str:
    return r.expr(e)[0] if is_sym(e) else str(int(e))


def _elems(b: Any, base: Any, act: np.ndarray, n: int) -> np.ndarray:
    """(active threads, n) element indices base + 0..n-1 of each active thread."""
    first = np.broadcast_to(np.asarray(b.index(base), dtype=np.int64), (b.n,))[act]
    return first[:, None] + np.arange(n, dtype=np.int64)[None, :]


class BulkCopyG2SOp(Op):
    """``n`` contiguous elements of global ``param`` from element ``base`` into ``shared`` from
    element ``sbase``, completing n * bytes on barrier ``bar_shared[bar_base]``."""

    __slots__ = ("param", "base", "shared", "sbase", "n", "bar_shared", "bar_base", "where")

    def __init__(self, param: Any, base: Any, shared: Any, sbase: Any, n: int, bar_shared: Any, bar_base: Any,
                 where: str = ""):
        self.param, self.base, self.shared, self.sbase, self.n = param, base, shared, sbase, n
        self.bar_shared, self.bar_base, self.where = bar_shared, bar_base, where

    @property
    def nbytes(self) -> int:
        return self.n * self.param.dtype.bytes

    def __repr__(self) -> str:
        return (f"cp.async.bulk {self.shared.name}[{self.sbase} + :{self.n}] <- {self.param.name}[{self.base} + "
                f":{self.n}] on {self.bar_shared.name}[{self.bar_base}]")

    def accesses(self) -> List[Access]:
        return [Access(self.param, self.base, (0, self.n - 1), False, self),
                Access(self.shared, self.sbase, (0, self.n - 1), True, self),
                Access(self.bar_shared, self.bar_base, (0,), False, self)]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        act = np.arange(b.n) if mask is None else np.nonzero(mask)[0]
        if act.size == 0:
            return
        data = buffers[self.param.index]
        g = _elems(b, self.base, act, self.n)
        if g.min() < 0 or g.max() >= len(data):
            raise LaunchError(f"{b.ir.name}{self.where}: bulk copy from {self.param.name}: elements "
                              f"{int(g.min())}..{int(g.max())} fall outside its {len(data)} elements; nothing was "
                              f"copied")
        s = _elems(b, self.sbase, act, self.n)
        if s.min() < 0 or s.max() >= self.shared.length:
            raise LaunchError(f"{b.ir.name}{self.where}: bulk copy into {self.shared.name}: elements "
                              f"{int(s.min())}..{int(s.max())} fall outside its {self.shared.length} elements")
        blk = b.block_of[act]
        smem = b.shared[self.shared.index]
        vals = data[g]  # bytes, not values: a bulk copy between two types of one width moves the bits
        smem[(blk * self.shared.length)[:, None] + s] = vals if vals.dtype == smem.dtype else vals.view(smem.dtype)
        bar = np.broadcast_to(np.asarray(b.index(self.bar_base), dtype=np.int64), (b.n,))[act]
        complete_tx(b, self.bar_shared, blk, bar, self.nbytes)

    def cuda(self, r: Any) -> None:
        ins = "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
        r.emit(f'asm volatile("{ins}" :: "r"({smem_addr(r, self.shared, self.sbase)}), '
               f'"l"({self.param.name} + ({_code(r, self.base)})), "r"({self.nbytes}u), '
               f'"r"({smem_addr(r, self.bar_shared, self.bar_base)}) : "memory");')


class BulkCopyS2GOp(Op):
    """``n`` contiguous elements of ``shared`` from element ``sbase`` into global ``param`` from element
    ``base`` (``cp.async.bulk.global.shared::cta.bulk_group``)."""

    __slots__ = ("param", "base", "shared", "sbase", "n", "where")

    def __init__(self, param: Any, base: Any, shared: Any, sbase: Any, n: int, where: str = ""):
        self.param, self.base, self.shared, self.sbase, self.n, self.where = param, base, shared, sbase, n, where

    def __repr__(self) -> str:
        return (f"cp.async.bulk {self.param.name}[{self.base} + :{self.n}] <- {self.shared.name}[{self.sbase} + "
                f":{self.n}]")

    def accesses(self) -> List[Access]:
        return [Access(self.param, self.base, (0, self.n - 1), True, self),
                Access(self.shared, self.sbase, (0, self.n - 1), False, self)]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        act = np.arange(b.n) if mask is None else np.nonzero(mask)[0]
        if act.size == 0:
            return
        data = buffers[self.param.index]
        g = _elems(b, self.base, act, self.n)
        if g.min() < 0 or g.max() >= len(data):
            raise LaunchError(f"{b.ir.name}{self.where}: bulk copy into {self.param.name}: elements "
                              f"{int(g.min())}..{int(g.max())} fall outside its {len(data)} elements; nothing was "
                              f"stored")
        s = _elems(b, self.sbase, act, self.n)
        if s.min() < 0 or s.max() >= self.shared.length:
            raise LaunchError(f"{b.ir.name}{self.where}: bulk copy from {self.shared.name}: elements "
                              f"{int(s.min())}..{int(s.max())} fall outside its {self.shared.length} elements")
        vals = b.shared[self.shared.index][(b.block_of[act] * self.shared.length)[:, None] + s]
        data[g] = vals if vals.dtype == data.dtype else vals.view(data.dtype)  # the bits, as in the load

    def cuda(self, r: Any) -> None:
        ins = "cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
        r.emit(f'asm volatile("{ins}" :: "l"({self.param.name} + ({_code(r, self.base)})), '
               f'"r"({smem_addr(r, self.shared, self.sbase)}), "r"({self.n * self.param.dtype.bytes}u) : "memory");')


class BulkReduceAddOp(Op):
    """``n`` f32 elements of ``shared`` from element ``sbase`` added to global ``param`` from element
    ``base`` (``cp.reduce.async.bulk...add.f32``, in a bulk group)."""

    __slots__ = ("param", "base", "shared", "sbase", "n", "where")

    def __init__(self, param: Any, base: Any, shared: Any, sbase: Any, n: int, where: str = ""):
        self.param, self.base, self.shared, self.sbase, self.n, self.where = param, base, shared, sbase, n, where

    def __repr__(self) -> str:
        return (f"cp.reduce.async.bulk.add {self.param.name}[{self.base} + :{self.n}] += "
                f"{self.shared.name}[{self.sbase} + :{self.n}]")

    def accesses(self) -> List[Access]:
        return [Access(self.param, self.base, (0, self.n - 1), True, self),
                Access(self.shared, self.sbase, (0, self.n - 1), False, self)]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        act = np.arange(b.n) if mask is None else np.nonzero(mask)[0]
        if act.size == 0:
            return
        data = buffers[self.param.index]
        g = _elems(b, self.base, act, self.n)
        if g.min() < 0 or g.max() >= len(data):
            raise LaunchError(f"{b.ir.name}{self.where}: bulk reduce-add into {self.param.name}: elements "
                              f"{int(g.min())}..{int(g.max())} fall outside its {len(data)} elements; nothing was "
                              f"added")
        s = _elems(b, self.sbase, act, self.n)
        if s.min() < 0 or s.max() >= self.shared.length:
            raise LaunchError(f"{b.ir.name}{self.where}: bulk reduce-add from {self.shared.name}: elements "
                              f"{int(s.min())}..{int(s.max())} fall outside its {self.shared.length} elements")
        vals = b.shared[self.shared.index][(b.block_of[act] * self.shared.length)[:, None] + s]
        np.add.at(data, g.reshape(-1), vals.reshape(-1).astype(data.dtype, copy=False))

    def cuda(self, r: Any) -> None:
        ins = "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;"
        r.emit(f'asm volatile("{ins}" :: "l"({self.param.name} + ({_code(r, self.base)})), '
               f'"r"({smem_addr(r, self.shared, self.sbase)}), "r"({self.n * 4}u) : "memory");')


def _contiguous(x: Any, what: str, side: str) -> int:
    """The element count of tensor x, whose elements must be consecutive from its offset."""
    offs = _static_offsets(x.layout, "cute.copy")
    n = len(offs)
    if n == 0 or not np.array_equal(offs, np.arange(n)):
        raise TraceError(f"{what}: the {side} {x.layout} is not contiguous; a bulk copy moves one run of "
                         f"consecutive elements")
    return n


def _aligned16(x: Any, what: str, side: str) -> None:
    a = x.engine.alignment(x.offset)
    if a < 16:
        raise TraceError(f"{what}: the {side} is aligned to {a} bytes only; a bulk copy needs 16-byte aligned "
                         f"addresses")


def bulk_copy(atom: Any, src: Any, dst: Any, kwargs: dict) -> bool:
    """cute.copy with a CopyBulkG2SOp atom inside a kernel; False for other atoms."""
    from ...nvgpu.cpasync.copy import CopyBulkG2SOp
    from ..frontend.engines import GmemEngine, SmemEngine

    if not isinstance(getattr(atom, "op", None), CopyBulkG2SOp):
        return False
    t = current("cute.copy")
    what = f"kernel {t.name}: cute.copy with a bulk copy (CopyBulkG2SOp){t.where()}"
    bar = kwargs.pop("mbar_ptr", None)
    pred = kwargs.pop("pred", None)
    kwargs.pop("cache_policy", None)
    kwargs.pop("loc", None), kwargs.pop("ip", None)
    # CuTe DSL's trait drops other keywords ("so that the user can write common code for ... loads")
    if pred is not None:
        raise TraceError(f"{what}: a bulk copy takes no pred=")
    if bar is None:
        raise TraceError(f"{what}: a bulk copy completes on an mbarrier: pass mbar_ptr=")
    g, s = src.engine, dst.engine
    if not isinstance(g, GmemEngine) or isinstance(g, SmemEngine) or not hasattr(g, "param"):
        raise TraceError(f"{what}: the source must be a kernel argument's global memory, got a "
                         f"{getattr(g, 'memspace', '?')} tensor")
    if type(s) is not SmemEngine:
        raise TraceError(f"{what}: the destination must be unswizzled shared memory, got a "
                         f"{getattr(s, 'memspace', '?')} tensor{' (swizzled)' if isinstance(s, SmemEngine) else ''}")
    vt = atom.value_type
    for side, x in (("source", src), ("destination", dst)):
        if x.element_type.width != vt.width:
            raise TraceError(f"{what}: the {side} holds {x.element_type} but the atom copies {vt}")
    n = _contiguous(src, what, "source")
    if _contiguous(dst, what, "destination") != n:
        raise TraceError(f"{what}: sizes differ ({src.layout}, {dst.layout})")
    if (n * g.dtype.bytes) % 16:
        raise TraceError(f"{what}: {n * g.dtype.bytes} bytes; a bulk copy moves a multiple of 16 bytes")
    _aligned16(src, what, "source")
    _aligned16(dst, what, "destination")
    t.check_index(src.offset, what)
    t.check_index(dst.offset, what)
    bsh, bbase = mbar_ref(bar, f"{what} (mbar_ptr=)")
    g.param.read = True
    s.param.written = True
    t.emit(BulkCopyG2SOp(g.param, src.offset, s.param, dst.offset, n, bsh, bbase, t.where()))
    return True


def _bulk_ptrs(gptr: Any, sptr: Any, nbytes: Any, what: str) -> tuple:
    """(global engine, its offset, shared engine, its offset, element count) of a bulk copy of ``nbytes``
    between a pointer into a kernel argument's global memory and one into unswizzled shared memory."""
    from ..frontend.engines import GmemEngine, SmemEngine

    t = current(what)
    g, s = getattr(gptr, "engine", None), getattr(sptr, "engine", None)
    if not isinstance(g, GmemEngine) or isinstance(g, SmemEngine) or not hasattr(g, "param"):
        raise TraceError(f"kernel {t.name}: {what}: the global address must be a pointer into a kernel argument's "
                         f"global memory, got a {getattr(g, 'memspace', type(gptr).__name__)} pointer{t.where()}")
    if type(s) is not SmemEngine:
        raise TraceError(f"kernel {t.name}: {what}: the shared address must be a pointer into unswizzled shared "
                         f"memory, got a {getattr(s, 'memspace', type(sptr).__name__)} pointer"
                         f"{' (swizzled)' if isinstance(s, SmemEngine) else ''}{t.where()}")
    if g.dtype.width != s.dtype.width or g.dtype.width % 8:
        raise TraceError(f"kernel {t.name}: {what}: the global memory holds {g.dtype} and the shared memory "
                         f"{s.dtype}; cutelab copies between pointers to elements of one whole-byte width{t.where()}")
    if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)):
        raise TraceError(f"kernel {t.name}: {what}: the size must be a compile-time number of bytes, got "
                         f"{type(nbytes).__name__}{t.where()}")
    nb = int(nbytes)
    if nb <= 0 or nb % 16:
        raise TraceError(f"kernel {t.name}: {what}: {nb} bytes; a bulk copy moves a positive multiple of 16 "
                         f"bytes{t.where()}")
    for name, p in (("global", gptr), ("shared", sptr)):
        a = p.engine.alignment(p.offset)
        if a < 16:
            raise TraceError(f"kernel {t.name}: {what}: the {name} address is aligned to {a} bytes only; a bulk "
                             f"copy needs 16-byte aligned addresses{t.where()}")
        t.check_index(p.offset, what)
    return g, gptr.offset, s, sptr.offset, nb // g.dtype.bytes


def bulk_load(gptr: Any, sptr: Any, bar: Any, nbytes: Any, what: str) -> None:
    """``cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [smem], [gmem], nbytes, [bar]``
    issued by every thread that runs it, with cutelab pointers (``.engine``, ``.offset``): a BulkCopyG2SOp."""
    t = current(what)
    g, goff, s, soff, n = _bulk_ptrs(gptr, sptr, nbytes, what)
    bsh, bbase = mbar_ref(bar, f"{what} (mbar)")
    g.param.read = True
    s.param.written = True
    t.emit(BulkCopyG2SOp(g.param, goff, s.param, soff, n, bsh, bbase, t.where()))


def bulk_store(gptr: Any, sptr: Any, nbytes: Any, what: str) -> None:
    """``cp.async.bulk.global.shared::cta.bulk_group [gmem], [smem], nbytes`` issued by every thread that
    runs it: a BulkCopyS2GOp."""
    t = current(what)
    g, goff, s, soff, n = _bulk_ptrs(gptr, sptr, nbytes, what)
    g.param.written = True
    t.emit(BulkCopyS2GOp(g.param, goff, s.param, soff, n, t.where()))


def bulk_reduce_add(gptr: Any, sptr: Any, nbytes: Any, what: str) -> None:
    """``cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [gmem], [smem], nbytes`` with gptr a
    pointer into a kernel argument's f32 global memory and sptr one into unswizzled shared memory."""
    from ..frontend.engines import GmemEngine, SmemEngine

    t = current(what)
    g, s = getattr(gptr, "engine", None), getattr(sptr, "engine", None)
    if not isinstance(g, GmemEngine) or isinstance(g, SmemEngine) or not hasattr(g, "param"):
        raise TraceError(f"{what}: the global address must be a pointer into a kernel argument's global memory")
    if type(s) is not SmemEngine:
        raise TraceError(f"{what}: the shared address must be a pointer into unswizzled shared memory")
    for name, e in (("global", g), ("shared", s)):
        if e.dtype.name != "f32":
            raise TraceError(f"{what}: the {name} memory holds {e.dtype}; .add.f32 adds f32 elements")
    if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)):
        raise TraceError(f"{what}: the size must be a compile-time number of bytes, got {type(nbytes).__name__}")
    nb = int(nbytes)
    if nb <= 0 or nb % 16:
        raise TraceError(f"{what}: {nb} bytes; a bulk reduction moves a positive multiple of 16 bytes")
    for name, p in (("global", gptr), ("shared", sptr)):
        off = p.offset
        a = p.engine.alignment(off)
        if a < 16:
            raise TraceError(f"{what}: the {name} address is aligned to {a} bytes only; a bulk reduction needs 16")
        if not (is_sym(off) or isinstance(off, (int, np.integer))):
            raise TraceError(f"{what}: the {name} address's offset must be an index expression")
        t.check_index(off, what)
    g.param.written = True
    g.param.read = True
    t.emit(BulkReduceAddOp(g.param, gptr.offset, s.param, sptr.offset, nb // 4, t.where()))

