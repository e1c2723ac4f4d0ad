"""Thread-block clusters inside traced kernels: cluster indices, the cluster barrier, distributed
shared memory (DSMEM) and mbarrier operations on a peer CTA's barrier.

A kernel launched with ``cluster=(cx, cy, cz)`` (``launch/cluster.py`` checks the shape) is traced
for that shape, as it is for its grid and block:

- indices (``cute.arch`` names of CuTe DSL 4.8.1): ``block_in_cluster_idx()`` is
  ``blockIdx % cluster`` per dimension (PTX ``%cluster_ctaid``), ``block_idx_in_cluster()`` the
  CTA's rank ``x + cx * (y + cy * z)`` of it (``%cluster_ctarank``), ``cluster_idx()``
  ``blockIdx // cluster`` (``%clusterid``): clusters tile the grid in order, so these equal the
  special registers; as index expressions over ``blockIdx`` the launch's bounds proofs see through
  them. ``block_in_cluster_dim()`` (``%cluster_nctaid``), ``cluster_dim()`` (``%nclusterid``) and
  ``cluster_size()`` (``%cluster_nctarank``) are runtime integers, as in CuTe DSL (``ir.nodes.DimVar``);
- ``cluster_arrive()`` / ``cluster_arrive_relaxed()`` / ``cluster_wait()``: ``ClusterBarrierOp``,
  PTX ``barrier.cluster.arrive[.relaxed][.aligned]`` and ``barrier.cluster.wait``. Each thread
  arrives, then waits until every thread of its cluster that has not exited has arrived as often;
- ``map_dsmem_ptr(smem_ptr, rank)``: a pointer into CTA ``rank``'s copy of the same shared
  array (``DsmemEngine``). As in CuTe DSL 4.8.1, tensors over it are not loaded or stored element
  by element: ``cute.copy(make_copy_atom(cpasync.CopyDsmemStoreOp(), dtype), src, dst,
  mbar_ptr=...)`` and ``store_async_dsmem(smem_ptr, value, mbar_ptr, rank)`` write them with
  ``AsyncDsmemStoreOp`` (PTX ``mapa.shared::cluster``, then ``st.async...mbarrier::complete_tx::bytes``
  completing on the written CTA's barrier), and the peer reads its own shared memory after its wait;
- ``mbarrier_arrive(ptr, peer_cta_rank_in_cluster=r)``, ``mbarrier_expect_tx(..., r)``,
  ``mbarrier_arrive_and_expect_tx(..., r)``: ``RemoteMbarrierOp`` (``mapa.shared::cluster`` then
  ``mbarrier.*.shared::cluster``). Arrives on a peer are printed with the semantics the program
  asks for, as CuTe DSL 4.8.1 prints them: ``scope`` (``nvvm.MemScopeKind.CTA``, the default, or
  ``CLUSTER``) and ``relaxed``. The default, ``.release.cta``, is what a pipeline's "buffer empty"
  signal needs (the arriving warps only read the buffer); a DSMEM hand-off, whose earlier writes
  the peer must see, passes ``scope=CLUSTER`` (``.release.cluster``, a cluster-wide memory fence
  on the GPU: at 8192^3 it made CUTLASS's Hopper dense_gemm.py 1.7x slower when printed for every
  pipeline release);
- TMA multicast (``CopyBulkTensorTileG2SMulticastOp`` atoms, ``cute.copy(..., mcast_mask=m)``):
  ``TmaMulticastLoadOp``, the atom's box (the whole tile, or with ``num_multicast=n`` the CTA's
  slice of it from ``tma_partition``) into every CTA of the mask and its bytes completed on each of
  their barriers (``.multicast::cluster``); a mask naming CTAs outside the cluster is refused;
- ``cute.make_layout_image_mask(cluster_layout, coord, mode)``: the multicast mask of the CTAs
  sharing ``coord`` outside ``mode``; at a run-time coordinate ``MaskShiftOp`` (pattern << offset).

The CPU interpreter runs the CTAs of a cluster in one batch, in rank order (``cpu/interpreter.py``
and ``cpu/context.py``): CTA r of the cluster of a thread is block ``block_of - rank + r`` of the
batch, whose shared arrays and mbarriers it reads and writes. A rank outside the cluster is an
error naming the kernel and the user's line; a ``cluster_wait`` that can never complete is part
of the interpreter's deadlock report, never a hang.

May import: what ``kernel.instr`` may (see its ``__init__``).
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np

from ...errors import LaunchError, TraceError
from ..ir.nodes import Access, Op, Shared
from ..ir.symbolic import is_sym
from ..frontend.trace import TraceValue, current
from . import mbarrier as mb
from .mbarrier import _int_arg, complete_tx, mbar_ref, smem_addr

__all__ = ["ClusterBarrierOp", "AsyncDsmemStoreOp", "RemoteMbarrierOp", "DsmemEngine", "cluster_idx", "cluster_dim",
           "cluster_size", "block_in_cluster_idx", "block_in_cluster_dim", "block_idx_in_cluster", "cluster_arrive",
           "cluster_arrive_relaxed", "cluster_wait", "map_dsmem_ptr", "store_async_dsmem",
           "remote_mbarrier", "dsmem_copy", "tma_multicast_op", "MaskShiftOp", "make_layout_image_mask",
           "mbarrier_arrive", "mbarrier_expect_tx", "mbarrier_arrive_and_expect_tx"]


# --------------------------------------------------------------------------- indices

def _tracer(what: str) -> Any:
    return current(f"cute.arch.{what}()")


def block_in_cluster_idx(*, loc: Any = None, ip: Any = None) -> tuple:
    """The CTA's (x, y, z) index in its cluster (``%cluster_ctaid``): blockIdx % cluster shape."""
    t = _tracer("block_in_cluster_idx")
    return tuple(b % c if c > 1 else 0 for b, c in zip(t.bid, t.cluster))


def block_in_cluster_dim(*, loc: Any = None, ip: Any = None) -> tuple:
    """The cluster's shape in CTAs (``%cluster_nctaid``): runtime integers (``ir.nodes.DimVar``), as in CuTe DSL."""
    from ..frontend.trace import dims

    return dims("cluster_nctaid", "cute.arch.block_in_cluster_dim()")


def cluster_idx(*, loc: Any = None, ip: Any = None) -> tuple:
    """The cluster's (x, y, z) index in the grid (``%clusterid``): blockIdx // cluster shape."""
    t = _tracer("cluster_idx")
    return tuple(b // c if c > 1 else b for b, c in zip(t.bid, t.cluster))


def cluster_dim(*, loc: Any = None, ip: Any = None) -> tuple:
    """The grid's shape in clusters (``%nclusterid``): runtime integers (``ir.nodes.DimVar``)."""
    from ..frontend.trace import dims

    return dims("nclusterid", "cute.arch.cluster_dim()")


def cluster_size(*, loc: Any = None, ip: Any = None) -> Any:
    """CTAs per cluster (``%cluster_nctarank``): a runtime integer (``ir.nodes.DimVar``)."""
    from ..ir.nodes import DimVar

    cx, cy, cz = _tracer("cluster_size").cluster
    return DimVar("cluster_nctarank", "", cx * cy * cz)


def _rank_expr(t: Any) -> Any:
    """The CTA's rank in its cluster (``%cluster_ctarank``) as an index expression (x fastest)."""
    cx, cy, cz = t.cluster
    x, y, z = (b % c if c > 1 else 0 for b, c in zip(t.bid, t.cluster))
    return x + cx * y + cx * cy * z


def block_idx_in_cluster(*, loc: Any = None, ip: Any = None) -> Any:
    """The CTA's linear rank in its cluster (``%cluster_ctarank``): x + cx * (y + cy * z)."""
    return _rank_expr(_tracer("block_idx_in_cluster"))


def _at(op: Any) -> str:
    """" (at file.py:12)": the user's line an op was traced at."""
    loc = getattr(op, "loc", None)
    return f" (at {loc})" if loc else (op.where or "")


# --------------------------------------------------------------------------- the cluster barrier

class ClusterBarrierOp(Op):
    """``barrier.cluster.arrive`` (``kind`` "arrive" or "arrive_relaxed") or ``barrier.cluster.wait``
    ("wait"). CPU: per thread of the batch, how many times it arrived and how many waits it passed
    (``ctx.common["cluster_barrier"]``); a wait passes once every thread of the cluster that has not
    finished has arrived at least as often as the waiting thread."""

    __slots__ = ("kind", "aligned", "where")

    def __init__(self, kind: str, aligned: bool = False, where: str = ""):
        assert kind in ("arrive", "arrive_relaxed", "wait"), kind
        self.kind, self.aligned, self.where = kind, bool(aligned), where

    def __repr__(self) -> str:
        return f"cluster_{self.kind}()"

    @property
    def may_wait(self) -> bool:  # type: ignore[override]
        return self.kind == "wait"

    @staticmethod
    def _state(b: Any) -> Tuple[np.ndarray, np.ndarray]:
        st = b.common.get("cluster_barrier")
        if st is None:
            st = b.common["cluster_barrier"] = (np.zeros(b.n, dtype=np.int64), np.zeros(b.n, dtype=np.int64))
        return st

    def _act(self, b: Any, mask: Any) -> np.ndarray:
        return np.ones(b.n, dtype=bool) if mask is None else mask

    def _cluster_of(self, b: Any) -> np.ndarray:
        return b.block_of // max(1, int(getattr(b, "cluster_size", 1)))

    def _ready(self, b: Any, mask: Any) -> np.ndarray:
        """A bool per thread: active and its wait would pass now."""
        arrived, waited = self._state(b)
        act = self._act(b, mask)
        early = act & (arrived <= waited)
        if early.any():
            i = int(np.argmax(early))
            raise LaunchError(f"{b.ir.name}{_at(self)}: cute.arch.cluster_wait() in thread {i % b.nt} of block "
                              f"{b.block_name(int(b.block_of[i]))} has no cluster_arrive before it (each wait "
                              f"completes the phase the thread's own arrive started)")
        fin = b.common.get("finished")
        live = np.ones(b.n, dtype=bool) if fin is None else ~fin
        cl = self._cluster_of(b)
        ncl = int(cl.max()) + 1 if cl.size else 0
        low = np.full(ncl, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(low, cl[live], arrived[live])  # the fewest arrivals of a live thread, per cluster
        return act & (low[cl] >= arrived)

    def waits_for(self, b: Any, mask: Any) -> Optional[str]:
        if self.kind != "wait":
            return None
        ok = self._ready(b, mask)
        act = self._act(b, mask)
        if ok[act].all():
            return None
        i = int(np.argmax(act & ~ok))
        arrived, _ = self._state(b)
        cl = self._cluster_of(b)
        fin = b.common.get("finished")
        lagging = (cl == cl[i]) & (arrived < arrived[i]) & (True if fin is None else ~fin)
        blocks = sorted({b.block_name(int(k)) for k in np.unique(b.block_of[lagging])})
        return (f"cute.arch.cluster_wait() in block {b.block_name(int(b.block_of[i]))} waits for "
                f"{int(lagging.sum())} thread(s) of block(s) {', '.join(blocks)} of its cluster to reach their "
                f"cluster_arrive number {int(arrived[i])}")

    def ready_threads(self, b: Any, mask: Any) -> Any:
        return self._ready(b, mask) if self.kind == "wait" else None

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        arrived, waited = self._state(b)
        act = self._act(b, mask)
        if self.kind == "wait":
            waited[act] += 1
            return
        if self.aligned:  # .aligned: every thread of the warp executes the same arrive
            b.whole_warps(mask, "cute.arch.cluster_arrive(aligned=True)", "barrier.cluster.arrive.aligned")
        twice = act & (arrived > waited)
        if twice.any():
            i = int(np.argmax(twice))
            raise LaunchError(f"{b.ir.name}{_at(self)}: cute.arch.cluster_arrive() in thread {i % b.nt} of block "
                              f"{b.block_name(int(b.block_of[i]))} arrives again before its cluster_wait (PTX leaves "
                              f"a second barrier.cluster.arrive before the wait undefined)")
        arrived[act] += 1

    def cuda(self, r: Any) -> None:
        al = ".aligned" if self.aligned else ""
        if self.kind == "wait":
            r.emit(f'asm volatile("barrier.cluster.wait{al};" ::: "memory");')
        elif self.kind == "arrive":
            r.emit(f'asm volatile("barrier.cluster.arrive{al};" ::: "memory");')
        else:
            r.emit(f'asm volatile("barrier.cluster.arrive.relaxed{al};" ::: "memory");')


def _barrier(kind: str, aligned: Any) -> None:
    t = current(f"cute.arch.cluster_{kind}()")
    t.emit(ClusterBarrierOp(kind, bool(aligned), t.where()))


def cluster_arrive(*, aligned: Any = None, loc: Any = None, ip: Any = None) -> None:
    """``barrier.cluster.arrive``: this thread arrives at the cluster barrier (release semantics)."""
    _barrier("arrive", aligned)


def cluster_arrive_relaxed(*, aligned: Any = None, loc: Any = None, ip: Any = None) -> None:
    """``barrier.cluster.arrive.relaxed``: arrive without ordering this thread's memory accesses."""
    _barrier("arrive_relaxed", aligned)


def cluster_wait(*, loc: Any = None, ip: Any = None) -> None:
    """``barrier.cluster.wait``: wait until every thread of the cluster (that has not exited) has arrived."""
    _barrier("wait", None)


# --------------------------------------------------------------------------- peers

def _rank_arg(x: Any, what: str, t: Any) -> Any:
    """A CTA rank argument: a static int, an index expression, or an integer value held in a register."""
    if isinstance(x, TraceValue):
        x = x.as_index()
    if isinstance(x, bool):
        x = int(x)
    if isinstance(x, (int, np.integer)):
        x = int(x)
        size = t.cluster[0] * t.cluster[1] * t.cluster[2]
        if not 0 <= x < size:
            raise TraceError(f"kernel {t.name}: {what}: CTA rank {x} is outside the cluster {tuple(t.cluster)} "
                             f"(ranks 0..{size - 1}){t.where()}")
        return x
    if is_sym(x):
        t.check_index(x, what)
        return x
    v = getattr(x, "value", None)
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return _rank_arg(int(v), what, t)
    raise TraceError(f"kernel {t.name}: {what}: the CTA rank must be an integer (static or an index expression), "
                     f"got {type(x).__name__}{t.where()}")


def _peer_blocks(b: Any, mask: Any, peer: Any, self_rank: Any, what: str, where: str) -> np.ndarray:
    """The block in the batch of CTA ``peer`` of each active thread's cluster (checked in range)."""
    size = int(getattr(b, "cluster_size", 1))
    p = np.broadcast_to(np.asarray(b.index(peer), dtype=np.int64), (b.n,))
    me = np.broadcast_to(np.asarray(b.index(self_rank), dtype=np.int64), (b.n,))
    act = np.ones(b.n, dtype=bool) if mask is None else mask
    bad = act & ((p < 0) | (p >= size))
    if bad.any():
        i = int(np.argmax(bad))
        raise LaunchError(f"{b.ir.name}{where}: {what}: block {b.block_name(int(b.block_of[i]))} names CTA rank "
                          f"{int(p[i])}, outside its cluster of {size} CTA(s) {tuple(b.ir.cluster)}")
    return np.where(act, b.block_of - me + p, b.block_of)


def _ptx_rank(r: Any, peer: Any) -> str:
    return f"(unsigned)({r.expr(peer)[0]})" if is_sym(peer) else f"{int(peer)}u"


# --------------------------------------------------------------------------- distributed shared memory

class DsmemEngine:
    """The shared array ``shared`` of CTA ``peer`` of the cluster, as a tensor engine (what
    ``map_dsmem_ptr`` points into): the destination of a ``CopyDsmemStoreOp`` copy, or an mbarrier
    pointer; element loads and stores are refused, as in CuTe DSL 4.8.1."""

    memspace = "dsmem"

    def __init__(self, shared: Shared, peer: Any, self_rank: Any):
        self.shared, self.peer, self.self_rank = shared, peer, self_rank
        self.param = shared

    @property
    def dtype(self) -> Any:
        return self.shared.dtype

    @property
    def align(self) -> int:
        return self.shared.align

    def __len__(self) -> int:
        return self.shared.length

    def address_value(self, a: Any) -> Any:
        """``ptr.toint().ir_value()`` of a pointer into a peer's shared memory (a core ``PointerInt``
        ``a``, e.g. quack's ``Int32(map_dsmem_ptr(p, rank).toint())``): its shared::cluster address as
        an inline-PTX operand (the destination or mbarrier of ``st.async``: instr/inline_asm.py)."""
        from ...tensor import Pointer
        from ..frontend.shared_address import SharedAddress
        from ..frontend.engines import _address_offset

        return SharedAddress(Pointer(self, _address_offset(a)))

    def alignment(self, offset: Any) -> int:
        b = self.dtype.bytes
        if isinstance(offset, (int, np.integer)):
            g = int(offset) * b
            return self.align if g == 0 else max(b, min(self.align, g & -g))
        return b

    def raw_ptr_str(self, offset: Any) -> str:
        return f"raw_ptr(?: {self.dtype.name}, dsmem, align<{self.alignment(offset)}>)"

    def ptr_str(self, offset: Any) -> str:
        a = self.alignment(offset)
        return f"ptr<{self.dtype.name}, dsmem{f', align<{a}>' if a > self.dtype.bytes else ''}>"

    def _refuse(self, offset: Any, layout: Any = None) -> None:
        from ..frontend.trace import user_line

        t = current("a distributed shared memory access")
        line = user_line()
        at = f" (at {line})" if line else t.where()
        lay = f" o {layout}" if layout is not None else ""
        raise TraceError(f"kernel {t.name}{at}: a tensor over {self.ptr_str(offset)}{lay} doesn't support load and "
                         f"store (nor does CuTe DSL 4.8.1): write a peer CTA's shared memory with cute.copy("
                         f"cute.make_copy_atom(cpasync.CopyDsmemStoreOp(), dtype), src, dst, mbar_ptr=...) or "
                         f"cute.arch.store_async_dsmem, and read it in the peer's own shared memory")

    def load(self, offset: Any, layout: Any) -> TraceValue:
        self._refuse(offset, layout)

    def store(self, offset: Any, layout: Any, value: Any) -> None:
        self._refuse(offset, layout)

    def read_one(self, off: Any) -> TraceValue:
        self._refuse(off)

    def write_one(self, off: Any, v: Any) -> None:
        self._refuse(off)

    @classmethod
    def make_fragment(cls, tensor: Any, layout: Any, dtype: Any = None) -> tuple:
        from ..frontend.engines import RmemEngine

        return RmemEngine.make_fragment(tensor, layout, dtype)

    def address_value(self, a: Any) -> Any:
        """``ptr.toint().ir_value()`` of a pointer into a peer's shared memory: its shared::cluster
        address as an inline-PTX operand (frontend.smem.SharedAddress)."""
        from ...tensor import Pointer
        from ..frontend.smem import SharedAddress
        from ..frontend.engines import _address_offset

        return SharedAddress(Pointer(self, _address_offset(a)))


def _smem_ref(ptr: Any, what: str) -> Tuple[Shared, Any]:
    """(shared array, element offset) of a plain (unswizzled) shared-memory pointer or tensor."""
    from ...tensor import Pointer, Tensor
    from ..frontend.smem import SmemPtr
    from ..frontend.engines import SmemEngine

    t = current(what)
    if isinstance(ptr, SmemPtr):
        dt = ptr.dtype
        if dt is None:
            raise TraceError(f"kernel {t.name}: {what}: the pointer has no element type{t.where()}")
        from ...layout import make_layout

        first = SmemPtr(ptr.region, 0, dt).tensor(make_layout(1), dt)
        eng, off = first.engine, first.offset + ptr.byte_offset // dt.bytes
    elif isinstance(ptr, (Tensor, Pointer)):
        eng, off = ptr.engine, ptr.offset
    else:
        raise TraceError(f"kernel {t.name}: {what}: expected a shared-memory pointer (smem tensor.iterator), got "
                         f"{type(ptr).__name__}{t.where()}")
    if type(eng) is not SmemEngine:
        kind = "a swizzled shared-memory view" if isinstance(eng, SmemEngine) else \
            f"a {getattr(eng, 'memspace', type(eng).__name__)} pointer"
        raise TraceError(f"kernel {t.name}: {what}: expects a plain shared-memory pointer, got {kind}{t.where()}")
    if isinstance(off, TraceValue):
        off = off.as_index()
    t.check_index(off, what)
    return eng.param, off


def map_dsmem_ptr(smem_ptr: Any, cta_rank_in_cluster: Any, *, loc: Any = None, ip: Any = None) -> Any:
    """The same shared-memory address in CTA ``cta_rank_in_cluster`` of the cluster (PTX ``mapa``):
    a pointer whose tensors (``cute.make_tensor(ptr, layout)``) read and write the peer's memory."""
    from ...tensor import Pointer

    what = "cute.arch.map_dsmem_ptr"
    t = current(what)
    sh, off = _smem_ref(smem_ptr, what)
    peer = _rank_arg(cta_rank_in_cluster, what, t)
    return Pointer(DsmemEngine(sh, peer, _rank_expr(t)), off)


# st.async operand type and asm constraint per element type (32-bit elements also as .v2/.v4)
_ST_ASYNC = {"f32": ("f32", "f"), "i32": ("b32", "r"), "u32": ("b32", "r"), "f64": ("f64", "d"),
             "i64": ("b64", "l"), "u64": ("b64", "l")}


class AsyncDsmemStoreOp(Op):
    """``st.async.shared::cluster.mbarrier::complete_tx::bytes``: ``len(src)`` consecutive elements
    into CTA ``peer``'s ``shared[base..]``, completing their bytes on the barrier
    ``bar[bar_base]`` of CTA ``bar_peer`` (which must be the same CTA: the hardware completes the
    transaction where the data lands). CPU: the elements land and the bytes complete at once."""

    remote = True  # another CTA's shared memory: the race check (cpu/warps.py) leaves it out

    __slots__ = ("shared", "base", "src", "bar", "bar_base", "peer", "bar_peer", "self_rank", "where")

    def __init__(self, shared: Shared, base: Any, src: tuple, bar: Shared, bar_base: Any, peer: Any, bar_peer: Any,
                 self_rank: Any, where: str = ""):
        self.shared, self.base, self.src, self.bar, self.bar_base = shared, base, tuple(src), bar, bar_base
        self.peer, self.bar_peer, self.self_rank, self.where = peer, bar_peer, self_rank, where

    def __repr__(self) -> str:
        from ..ir.nodes import _ref_str

        return (f"st_async {self.shared.name}@cta[{_ref_str(self.peer)}][{_ref_str(self.base)} + "
                f"{len(self.src)}] on {self.bar.name}[{_ref_str(self.bar_base)}]")

    def accesses(self) -> List[Access]:  # the same offsets in the peer's copies of the arrays
        return [Access(self.shared, self.base, tuple(range(len(self.src))), True, self),
                Access(self.bar, self.bar_base, (0,), False, self)]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        what = "a distributed shared memory store (st.async)"
        peer_blk = _peer_blocks(b, mask, self.peer, self.self_rank, what, _at(self))
        act = np.ones(b.n, dtype=bool) if mask is None else mask
        if self.bar_peer is not self.peer:
            bar_blk = _peer_blocks(b, mask, self.bar_peer, self.self_rank, what, _at(self))
            bad = act & (bar_blk != peer_blk)
            if bad.any():
                i = int(np.argmax(bad))
                raise LaunchError(f"{b.ir.name}{_at(self)}: {what} of block {b.block_name(int(b.block_of[i]))} "
                                  f"writes CTA {b.block_name(int(peer_blk[i]))} but completes on the mbarrier of CTA "
                                  f"{b.block_name(int(bar_blk[i]))}; the barrier must be in the CTA written")
        sh = self.shared
        n = len(self.src)
        idx = b.access_index(self.base, tuple(range(n)), sh.length, f"{b.ir.name}: {what}", mask, _at(self))
        idx = idx + (peer_blk * sh.length)[:, None]
        vals = np.broadcast_to(b.matrix(self.src, sh.dtype), idx.shape)
        b.shared[sh.index][idx[act]] = vals[act]
        slot = np.broadcast_to(np.asarray(b.index(self.bar_base), dtype=np.int64), (b.n,))[act]
        complete_tx(b, self.bar, peer_blk[act], slot, sh.dtype.bytes * n)

    def cuda(self, r: Any) -> None:
        n = len(self.src)
        ty, con = _ST_ASYNC[self.shared.dtype.name]
        a, m = r.fresh("cl_dst"), r.fresh("cl_bar")
        base = r.expr(self.base)[0] if is_sym(self.base) else str(int(self.base))
        cast = {"f": "(float)", "r": "(unsigned)", "d": "(double)", "l": "(unsigned long long)"}[con]
        vals = [f"{cast}({r.stored(x, self.shared.dtype)})" for x in self.src]
        vec = "" if n == 1 else f".v{n}"
        regs = ", ".join(f"%{i + 2}" for i in range(n))
        regs = regs if n == 1 else "{" + regs + "}"
        with r.braces():
            r.emit(f"unsigned {a}, {m};")
            r.emit(f'asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"({a}) : '
                   f'"r"({r.shared_address(self.shared, base)}), "r"({_ptx_rank(r, self.peer)}));')
            r.emit(f'asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"({m}) : '
                   f'"r"({smem_addr(r, self.bar, self.bar_base)}), "r"({_ptx_rank(r, self.bar_peer)}));')
            ins = f"st.async.shared::cluster.mbarrier::complete_tx::bytes{vec}.{ty} [%0], {regs}, [%1];"
            ops = ", ".join(f'"{con}"({v})' for v in vals)
            r.emit(f'asm volatile("{ins}" :: "r"({a}), "r"({m}), {ops} : "memory");')


class DsmemLoadOp(Op):
    """``ld.shared::cluster``: one element of CTA ``peer``'s ``shared[base]`` into ``dst`` (after
    ``mapa``; CuTe DSL's ``cutlass.experimental.primitives.mapa`` pointers load this way, its
    ``cute`` tensors over distributed shared memory do not)."""

    remote = True  # another CTA's shared memory: the race check (cpu/warps.py) leaves it out

    __slots__ = ("dst", "shared", "base", "peer", "self_rank", "where")

    def __init__(self, dst: Any, shared: Shared, base: Any, peer: Any, self_rank: Any, where: str = ""):
        self.dst, self.shared, self.base, self.peer = dst, shared, base, peer
        self.self_rank, self.where = self_rank, where

    def __repr__(self) -> str:
        from ..ir.nodes import _ref_str

        return f"{self.dst.name} = ld_dsmem {self.shared.name}@cta[{_ref_str(self.peer)}][{_ref_str(self.base)}]"

    def accesses(self) -> List[Access]:
        return [Access(self.shared, self.base, (0,), False, self)]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        what = "a distributed shared memory load (ld.shared::cluster)"
        sh = self.shared
        peer_blk = _peer_blocks(b, mask, self.peer, self.self_rank, what, _at(self))
        idx = b.access_index(self.base, (0,), sh.length, f"{b.ir.name}: {what}", mask, _at(self))[:, 0]
        vals = b.shared[sh.index][idx + peer_blk * sh.length]
        cur = b.regs.get(self.dst.id)
        if cur is None or mask is None:
            out = np.zeros((b.n, 1), dtype=self.dst.dtype.storage) if cur is None else cur
            out[:, 0] = vals if mask is None else np.where(mask, vals, out[:, 0])
            b.regs[self.dst.id] = out
        else:
            cur[mask, 0] = vals[mask]

    def cuda(self, r: Any) -> None:
        w = self.shared.dtype.width
        ct, con = {32: ("unsigned", "r"), 64: ("unsigned long long", "l")}[w]
        a, v = r.fresh("cl_src"), r.fresh("cl_val")
        r.declare(self.dst)
        with r.braces():
            r.emit(f"unsigned {a}; {ct} {v};")
            r.emit(f'asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"({a}) : '
                   f'"r"({smem_addr(r, self.shared, self.base)}), "r"({_ptx_rank(r, self.peer)}));')
            r.emit(f'asm volatile("ld.shared::cluster.b{w} %0, [%1];" : "={con}"({v}) : "r"({a}) : "memory");')
            r.emit(f"memcpy(&{r.reg(self.dst)}[0], &{v}, {w // 8});")


def dsmem_load(smem_ptr: Any, cta_rank_in_cluster: Any, what: str) -> TraceValue:
    """One element at smem_ptr in CTA ``cta_rank_in_cluster``'s shared memory (a 32- or 64-bit type)."""
    t = current(what)
    sh, off = _smem_ref(smem_ptr, what)
    if sh.dtype.width not in (32, 64):
        raise TraceError(f"kernel {t.name}: {what}: loads 32- and 64-bit elements from a peer CTA, got "
                         f"{sh.dtype}{t.where()}")
    peer = _rank_arg(cta_rank_in_cluster, what, t)
    dst = t.new_reg(sh.dtype, 1)
    t.emit(DsmemLoadOp(dst, sh, off, peer, _rank_expr(t), t.where()))
    return TraceValue([(dst, 0)], (), sh.dtype)


def _check_vector(sh: Shared, base: Any, n: int, what: str, t: Any) -> None:
    """A .v2/.v4 st.async needs its destination aligned to the whole vector (8 or 16 bytes)."""
    from ..ir.symbolic import sym_div

    if n == 1:
        return
    d = sym_div(base)
    if (d % n and d != 0) or (sh.align * 8) % (n * sh.dtype.width):
        raise TraceError(f"kernel {t.name}: {what}: a store of {n} elements (.v{n}) needs a destination aligned to "
                         f"{n * sh.dtype.bytes} bytes; element offset {base} of {sh.name} (aligned to {sh.align} "
                         f"bytes) is not known to be{t.where()}")


def _bar_of(mbar_ptr: Any, peer: Any, what: str) -> Tuple[Shared, Any, Any]:
    """(barrier array, offset, CTA rank) of an st.async's mbarrier: a peer's barrier from
    map_dsmem_ptr, or a local barrier pointer, taken in the CTA the data goes to."""
    from ...tensor import Pointer, Tensor
    eng = getattr(mbar_ptr, "engine", None) if isinstance(mbar_ptr, (Pointer, Tensor)) else None
    if isinstance(eng, DsmemEngine):
        t = current(what)
        if eng.dtype.width != 64 or eng.dtype.kind not in ("int", "uint"):
            raise TraceError(f"kernel {t.name}: {what}: an mbarrier is a 64-bit word; the pointer is to "
                             f"{eng.dtype}{t.where()}")
        off = mbar_ptr.offset
        t.check_index(off, what)
        return eng.shared, off, eng.peer
    sh, off = mbar_ref(mbar_ptr, what)
    return sh, off, peer


def store_async_dsmem(smem_ptr: Any, value: Any, mbar_ptr: Any, peer_cta_rank: Any, *, loc: Any = None,
                      ip: Any = None) -> None:
    """Store 1, 2 or 4 32-bit integers at ``smem_ptr`` in CTA ``peer_cta_rank``'s shared memory,
    completing their bytes on that CTA's mbarrier at ``mbar_ptr`` (``st.async``)."""
    from ..frontend.trace import _refs_of

    what = "cute.arch.store_async_dsmem"
    t = current(what)
    sh, off = _smem_ref(smem_ptr, what)
    if sh.dtype.width != 32 or sh.dtype.kind not in ("int", "uint"):
        raise TraceError(f"kernel {t.name}: {what}: stores 32-bit integer words; the pointer is to {sh.dtype}"
                         f"{t.where()}")
    vals = value if isinstance(value, tuple) else (value,)
    if len(vals) not in (1, 2, 4):
        raise TraceError(f"kernel {t.name}: {what}: value must be one integer or a tuple of 2 or 4, got "
                         f"{len(vals)}{t.where()}")
    peer = _rank_arg(peer_cta_rank, what, t)
    _check_vector(sh, off, len(vals), what, t)
    bar, bar_off, bar_peer = _bar_of(mbar_ptr, peer, what)
    refs = []
    for v in vals:
        refs.extend(_refs_of(v, 1, sh.dtype, "store", f"a word for {what}"))
    t.emit(AsyncDsmemStoreOp(sh, off, tuple(refs), bar, bar_off, peer, peer if bar_peer is peer else bar_peer,
                             _rank_expr(t), t.where()))


def dsmem_copy(atom: Any, src: Any, dst: Any, kwargs: dict) -> bool:
    """``cute.copy(CopyDsmemStoreOp atom, src, dst, mbar_ptr=...)`` inside a kernel (instr/copy.py
    calls this first); False for other atoms. dst is a tensor over ``map_dsmem_ptr``; each run of
    the atom's ``num_bits_per_copy`` (one element when 0) becomes one st.async."""
    from ...nvgpu.cpasync.copy import CopyDsmemStoreOp
    from ... import int_tuple as it
    from ..frontend.trace import _static_offsets

    if not isinstance(getattr(atom, "op", None), CopyDsmemStoreOp):
        return False
    t = current("cute.copy")
    what = f"kernel {t.name}: cute.copy with a CopyDsmemStoreOp atom{t.where()}"
    mbar = kwargs.pop("mbar_ptr", None)
    pred = kwargs.pop("pred", None)
    if kwargs or pred is not None:
        raise TraceError(f"{what}: unsupported arguments {sorted(kwargs) + (['pred'] if pred is not None else [])}")
    if mbar is None:
        raise TraceError(f"{what}: the store completes on an mbarrier of the CTA written: pass mbar_ptr=")
    eng = dst.engine
    if not isinstance(eng, DsmemEngine):
        raise TraceError(f"{what}: the destination must be a tensor over cute.arch.map_dsmem_ptr(...) (a peer CTA's "
                         f"shared memory), got a {getattr(eng, 'memspace', type(eng).__name__)} tensor")
    dt = eng.dtype
    if dt.name not in _ST_ASYNC:
        raise TraceError(f"{what}: st.async stores 32- or 64-bit elements (f32, i32, u32, f64, i64, u64), not {dt}")
    n = it.product(dst.layout.shape)
    if it.product(src.layout.shape) != n:
        raise TraceError(f"{what}: sizes differ ({it.product(src.layout.shape)} != {n})")
    bits = int(getattr(atom, "_num_bits", 0) or 0) or dt.width
    v = max(1, bits // dt.width)
    if (dt.width == 64 and v != 1) or v not in (1, 2, 4) or n % v:
        raise TraceError(f"{what}: num_bits_per_copy={bits} gives {v} elements of {dt} per store; st.async stores "
                         f"1, 2 or 4 32-bit or one 64-bit element, and the copy's {n} elements must be whole stores")
    offs = _static_offsets(dst.layout, "cute.copy")
    vals = src.load()
    bar, bar_off, bar_peer = _bar_of(mbar, eng.peer, "cute.copy(mbar_ptr=...)")
    for i in range(0, n, v):
        run = [int(o) for o in offs[i:i + v]]
        if run != list(range(run[0], run[0] + v)):
            raise TraceError(f"{what}: elements {i}..{i + v - 1} of the destination are not contiguous (offsets "
                             f"{run}); one st.async stores {v} consecutive elements")
        base = dst.offset + run[0]
        t.check_index(base, "cute.copy")
        _check_vector(eng.shared, base, v, what, t)
        t.emit(AsyncDsmemStoreOp(eng.shared, base, tuple(vals.refs[i:i + v]), bar, bar_off, eng.peer, bar_peer,
                                 eng.self_rank, t.where()))
    return True


# --------------------------------------------------------------------------- inline PTX on shared addresses
# (kernel/instr/inline_asm.py's asm_on_addresses reads the PTX and lowers st.async here)

def st_async_lowered(dst: Any, vals: List[Any], mbar: Any, n: int, bits: int, op: str, where: str) -> None:
    from ..frontend.trace import _refs_of
    from .bitcast import bitcast

    what = f"inline PTX {op}"
    t = current(what)
    eng = dst.engine
    sh, off = eng.shared, dst.offset
    if len(vals) != n:
        raise TraceError(f"kernel {t.name}: {what} at {where}: {n} value(s) expected, got {len(vals)}")
    if sh.dtype.width != bits:
        raise TraceError(f"kernel {t.name}: {what} at {where}: stores {bits}-bit values into {sh.dtype} shared memory")
    if isinstance(off, TraceValue):
        off = off.as_index()
    t.check_index(off, what)
    _check_vector(sh, off, n, what, t)
    bar, bar_off, bar_peer = _bar_of(mbar, eng.peer, what)
    refs: List[Any] = []
    for v in vals:
        if isinstance(v, TraceValue) and v.dtype.width == sh.dtype.width and v.dtype.kind != sh.dtype.kind:
            v = bitcast(v, sh.dtype, what)  # the register's bits, as st.async stores them
        refs.extend(_refs_of(v, 1, sh.dtype, "store", f"a value for {what}"))
    t.emit(AsyncDsmemStoreOp(sh, off, tuple(refs), bar, bar_off, eng.peer,
                             eng.peer if bar_peer is eng.peer else bar_peer, eng.self_rank, t.where()))


# --------------------------------------------------------------------------- mbarriers of peer CTAs

class RemoteMbarrierOp(Op):
    """``mbarrier.arrive`` / ``expect_tx`` / ``arrive.expect_tx`` on the barrier ``shared[base]`` of
    CTA ``peer`` of the cluster (``kind`` as MbarrierOp's; ``arg``: the transaction bytes)."""

    remote = True  # another CTA's shared memory: the race check (cpu/warps.py) leaves it out

    __slots__ = ("kind", "shared", "base", "arg", "peer", "self_rank", "where", "sem", "scope")

    def __init__(self, kind: str, shared: Shared, base: Any, arg: Any, peer: Any, self_rank: Any, where: str = "",
                 sem: str = "release", scope: str = "cta"):
        assert kind in ("arrive", "expect_tx", "arrive_expect_tx"), kind
        assert sem in ("release", "relaxed") and scope in ("cta", "cluster"), (sem, scope)
        self.kind, self.shared, self.base, self.arg = kind, shared, base, arg
        self.peer, self.self_rank, self.where = peer, self_rank, where
        self.sem, self.scope = sem, scope

    def __repr__(self) -> str:
        from ..ir.nodes import _ref_str

        a = "" if self.arg is None else f", {_ref_str(self.arg)}"
        return f"mbarrier_{self.kind}({self.shared.name}[{_ref_str(self.base)}]@cta[{_ref_str(self.peer)}]{a})"

    def accesses(self) -> List[Access]:
        return [Access(self.shared, self.base, (0,), False, self)]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        sh = self.shared
        what = f"cute.arch.mbarrier_{self.kind} on CTA rank {self.peer if isinstance(self.peer, int) else '?'}"
        peer_blk = _peer_blocks(b, mask, self.peer, self.self_rank, what, _at(self))
        _, slot = mb._targets(b, mask, sh, self.base, what)
        blk = peer_blk if mask is None else peer_blk[mask]
        st = mb._state(b, sh)
        mb._need_init(st, blk, slot, b, sh, what)
        if self.kind in ("expect_tx", "arrive_expect_tx"):
            v = np.broadcast_to(np.asarray(b.index(self.arg), dtype=np.int64), (b.n,))
            np.add.at(st.tx, (blk, slot), v if mask is None else v[mask])
        if self.kind in ("arrive", "arrive_expect_tx"):
            mb._arrive(b, st, blk, slot, sh, what, _at(self))

    def cuda(self, r: Any) -> None:
        m = r.fresh("cl_rbar")
        arg = None
        if self.arg is not None:
            arg = r.expr(self.arg)[0] if is_sym(self.arg) else str(int(self.arg))
        with r.braces():
            r.emit(f"unsigned {m};")
            r.emit(f'asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"({m}) : '
                   f'"r"({smem_addr(r, self.shared, self.base)}), "r"({_ptx_rank(r, self.peer)}));')
            sem = f"{self.sem}.{self.scope}"
            if self.kind == "arrive":
                r.emit(f'asm volatile("mbarrier.arrive.{sem}.shared::cluster.b64 _, [%0];" :: "r"({m}) : '
                       f'"memory");')
            elif self.kind == "expect_tx":  # PTX: expect_tx is always relaxed
                r.emit(f'asm volatile("mbarrier.expect_tx.relaxed.{self.scope}.shared::cluster.b64 [%0], %1;" :: '
                       f'"r"({m}), "r"((unsigned)({arg})) : "memory");')
            else:
                r.emit(f'asm volatile("mbarrier.arrive.expect_tx.{sem}.shared::cluster.b64 _, [%0], %1;" :: '
                       f'"r"({m}), "r"((unsigned)({arg})) : "memory");')


def mbarrier_scope(scope: Any, what: str) -> str:
    """``cta`` or ``cluster`` from a program's ``scope=`` (None: CTA, CuTe DSL's default; an
    ``nvvm.MemScopeKind`` member or its value; or the name). PTX's mbarrier operations know no wider
    scope."""
    if scope is None:
        return "cta"
    name = getattr(scope, "name", None)
    v = getattr(scope, "value", scope)
    if name is None:
        name = {0: "CTA", 1: "CLUSTER", 2: "GPU", 3: "SYS"}.get(v, v) if isinstance(v, int) else str(v)
    name = str(name).lower()
    if name not in ("cta", "cluster"):
        raise TraceError(f"{what}(scope={scope!r}): an mbarrier operation's scope is CTA or CLUSTER (PTX .cta or "
                         f".cluster), got {name}")
    return name


def remote_mbarrier(kind: str, mbar_ptr: Any, peer: Any, arg: Any, what: str, relaxed: bool = False,
                    scope: Any = None) -> None:
    """Trace ``cute.arch.mbarrier_<kind>(..., peer_cta_rank_in_cluster=peer)`` (mbarrier.py calls this)."""
    t = current(what)
    sh, base = mbar_ref(mbar_ptr, what)
    p = _rank_arg(peer, what, t)
    if arg is not None:
        arg = _int_arg(arg, what, t)
    t.emit(RemoteMbarrierOp(kind, sh, base, arg, p, _rank_expr(t), t.where(), "relaxed" if relaxed else "release",
                            mbarrier_scope(scope, what)))


# --------------------------------------------------------------------------- cute.arch.mbarrier_arrive and friends
# (on this CTA's barrier they are mbarrier.py's ops; with peer_cta_rank_in_cluster, a peer CTA's)

def mbarrier_arrive(mbar_ptr: Any, peer_cta_rank_in_cluster: Any = None, arrive_count: Any = 1, *,
                    relaxed: bool = False, scope: Any = None, loc: Any = None, ip: Any = None) -> None:
    """Arrive on the mbarrier (each executing thread counts one arrival); with
    ``peer_cta_rank_in_cluster``, on that CTA's barrier of the cluster."""
    _one_arrival(arrive_count, "cute.arch.mbarrier_arrive")
    if _remote(peer_cta_rank_in_cluster, "arrive", mbar_ptr, None, "cute.arch.mbarrier_arrive", relaxed, scope):
        return
    mb._emit("arrive", mbar_ptr, None, "cute.arch.mbarrier_arrive")


def mbarrier_expect_tx(mbar_ptr: Any, bytes: Any, peer_cta_rank_in_cluster: Any = None, *, scope: Any = None,
                       loc: Any = None, ip: Any = None) -> None:
    """Add bytes to the transaction count of the mbarrier's current phase (no arrival)."""
    if _remote(peer_cta_rank_in_cluster, "expect_tx", mbar_ptr, bytes, "cute.arch.mbarrier_expect_tx", True, scope):
        return
    mb._emit("expect_tx", mbar_ptr, bytes, "cute.arch.mbarrier_expect_tx")


def mbarrier_arrive_and_expect_tx(mbar_ptr: Any, bytes: Any, peer_cta_rank_in_cluster: Any = None,
                                  relaxed: bool = False, scope: Any = None, *, loc: Any = None, ip: Any = None) -> None:
    """Add bytes to the transaction count, then arrive (one thread, usually inside elect_one)."""
    if _remote(peer_cta_rank_in_cluster, "arrive_expect_tx", mbar_ptr, bytes, "cute.arch.mbarrier_arrive_and_expect_tx",
               relaxed, scope):
        return
    mb._emit("arrive_expect_tx", mbar_ptr, bytes, "cute.arch.mbarrier_arrive_and_expect_tx")


def _remote(peer: Any, kind: str, ptr: Any, arg: Any, what: str, relaxed: Any = False, scope: Any = None) -> bool:
    """With a peer CTA rank: trace the operation on that CTA's barrier, with the program's memory
    semantics (``relaxed``, ``scope``); True if done."""
    if peer is None:
        return False
    remote_mbarrier(kind, ptr, peer, arg, what, bool(getattr(relaxed, "value", relaxed)), scope)
    return True


def _one_arrival(n: Any, what: str) -> None:
    v = getattr(n, "value", n)
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or int(v) != 1:
        raise TraceError(f"{what}: arrive_count={n!r} is not supported: cutelab kernels arrive once per thread "
                         f"(arrive_count=1)")


# --------------------------------------------------------------------------- TMA multicast

def _tma_load_op() -> Any:
    from .tma import TmaLoadOp

    return TmaLoadOp


def tma_multicast_op(desc: Any, param: Any, coords: Any, shared: Shared, sbase: Any, bar: Shared, bar_base: Any,
                     mcast: Any, what: str) -> Any:
    """The op of a TMA multicast load (instr/tma_copy.py's tma_copy calls this): mcast_mask checked
    against the cluster (a static mask now, a runtime one when the kernel runs)."""
    t = current(what)
    size = t.cluster[0] * t.cluster[1] * t.cluster[2]
    if isinstance(mcast, TraceValue):
        mcast = mcast.as_index()
    v = getattr(mcast, "value", None)
    if not is_sym(mcast) and isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        mcast = int(v)
    if isinstance(mcast, (int, np.integer)) and not isinstance(mcast, bool):
        m = int(mcast)
        if m <= 0 or m >> size:
            raise TraceError(f"{what}: mcast_mask={m:#x} names CTAs outside the cluster {tuple(t.cluster)} (ranks "
                             f"0..{size - 1}: a mask in 1..{(1 << size) - 1})")
    elif is_sym(mcast):
        t.check_index(mcast, what)
    else:
        raise TraceError(f"{what}: mcast_mask must be an integer (static or an index expression), got "
                         f"{type(mcast).__name__}")
    return TmaMulticastLoadOp(desc, param, coords, shared, sbase, bar, bar_base, mcast, _rank_expr(t), t.where())


class TmaMulticastLoadOp(_tma_load_op()):  # type: ignore[misc]
    """A TMA load with ``.multicast::cluster``: the box lands in CTA r's ``shared[sbase..]`` and
    completes its bytes on CTA r's barrier ``bar[bar_base]`` for every bit r of ``mask``."""

    __slots__ = ("mask", "self_rank")
    remote = True  # writes other CTAs' shared memory: the race check (cpu/warps.py) leaves it out

    def __init__(self, desc: Any, param: Any, coords: Any, shared: Shared, sbase: Any, bar: Shared, bar_base: Any,
                 mask: Any, self_rank: Any, where: str = ""):
        super().__init__(desc, param, coords, shared, sbase, bar, bar_base, where)
        self.mask, self.self_rank = mask, self_rank

    def __repr__(self) -> str:
        from ..ir.nodes import _ref_str

        return super().__repr__() + f" multicast to {_ref_str(self.mask)}"

    def dest_blocks(self, b: Any, mask: Any, act: np.ndarray) -> List[Tuple[Any, np.ndarray]]:
        size = int(getattr(b, "cluster_size", 1))
        m = np.broadcast_to(np.asarray(b.index(self.mask), dtype=np.int64), (b.n,))[act]
        bad = (m <= 0) | ((m >> size) != 0)
        if bad.any():
            i = int(act[int(np.argmax(bad))])
            raise LaunchError(f"{b.ir.name}{_at(self)}: a TMA multicast load of block "
                              f"{b.block_name(int(b.block_of[i]))} has mcast_mask={int(m[int(np.argmax(bad))]):#x}, "
                              f"naming CTAs outside its cluster of {size} CTA(s) {tuple(b.ir.cluster)}")
        me = np.broadcast_to(np.asarray(b.index(self.self_rank), dtype=np.int64), (b.n,))[act]
        base = b.block_of[act] - me
        return [(((m >> r) & 1) == 1, base + r) for r in range(size)]

    def cuda(self, r: Any) -> None:
        d = self.desc
        cs = ", ".join(f"%{i + 2}" for i in range(d.rank))
        ins = (f"cp.async.bulk.tensor.{d.rank}d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
               f"[%0], [%1, {{{cs}}}], [%{d.rank + 2}], %{d.rank + 3};")
        from .tma import coord_code

        coords = ", ".join(f'"r"((int)({coord_code(r, c)}))' for c in r.index_exprs(self))
        m = r.expr(self.mask)[0] if is_sym(self.mask) else str(int(self.mask))
        r.emit(f'asm volatile("{ins}" :: "r"({smem_addr(r, self.shared, self.sbase)}), '
               f'"l"((unsigned long long)&{self.tmap_name}), {coords}, '
               f'"r"({smem_addr(r, self.bar_shared, self.bar_base)}), "h"((unsigned short)({m})) : "memory");')



# --------------------------------------------------------------------------- multicast masks

class MaskShiftOp(Op):
    """``dst = pattern << shift``: a multicast mask (``make_layout_image_mask``) whose offset in the
    cluster is known only at run time (``shift``: an index expression, e.g. of the CTA's rank)."""

    __slots__ = ("dst", "pattern", "shift")

    def __init__(self, dst: Any, pattern: int, shift: Any):
        self.dst, self.pattern, self.shift = dst, int(pattern), shift

    def __repr__(self) -> str:
        from ..ir.nodes import _ref_str

        return f"{self.dst.name} = {self.pattern:#x} << {_ref_str(self.shift)}"

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        sh = np.broadcast_to(np.asarray(b.index(self.shift), dtype=np.int64), (b.n,))
        col = (np.int64(self.pattern) << sh).astype(self.dst.dtype.storage)
        cur = b.regs.get(self.dst.id)
        if cur is None or mask is None:
            b.regs[self.dst.id] = col[:, None].copy()
        else:
            cur[mask, 0] = col[mask]

    def cuda(self, r: Any) -> None:
        r.declare(self.dst)
        s = r.expr(self.shift)[0] if is_sym(self.shift) else str(int(self.shift))
        r.emit(f"{r.reg(self.dst)}[0] = ({self.pattern}u << (unsigned)({s}));")


def make_layout_image_mask(lay: Any, coord: Any, mode: int, *, loc: Any = None, ip: Any = None) -> Any:
    """``cute.make_layout_image_mask``: a 16-bit mask with bit ``lay(c)`` set for every coordinate c
    that equals ``coord`` except in ``mode``, which takes all its values (the CTA ranks of a
    cluster layout sharing this CTA's coordinates in the other modes: a multicast mask).

    A static coordinate gives an int; a coordinate that is an index expression (of the CTA's rank
    in its cluster) gives an Int16 run-time value, ``pattern << offset``."""
    from ... import int_tuple as it
    from ...layout import Layout, cosize

    if not isinstance(lay, Layout):
        raise ValueError(f"make_layout_image_mask: expects a Layout, got {type(lay).__name__}")
    shp = lay.shape if isinstance(lay.shape, tuple) else (lay.shape,)
    std = lay.stride if isinstance(lay.stride, tuple) else (lay.stride,)
    crd = coord if isinstance(coord, tuple) else (coord,)
    if len(crd) != len(shp):
        raise ValueError(f"make_layout_image_mask: the rank of the coordinate must be equal to the one of the layout "
                         f"{lay}, but got {coord!r}")
    if isinstance(mode, bool) or not isinstance(mode, int) or not 0 <= mode < len(shp):
        raise ValueError(f"make_layout_image_mask: expects `mode` to be in [0,rank(lay)), but got {mode!r}")
    if cosize(lay) > 16:
        raise ValueError(f"make_layout_image_mask({lay}): the mask may not fit into a 16-bit integer (cosize "
                         f"{cosize(lay)} > 16)")
    pattern = 0
    for i in range(it.product(shp[mode])):
        pattern |= 1 << int(it.crd2idx(i, shp[mode], std[mode]))
    offset: Any = 0
    for j, (c, s, d) in enumerate(zip(crd, shp, std)):
        if j == mode:
            continue
        if isinstance(c, TraceValue):
            c = c.as_index()
        offset = offset + it.crd2idx(c, s, d)
    if isinstance(offset, (int, np.integer)):
        return pattern << int(offset)
    t = current("cute.make_layout_image_mask")
    t.check_index(offset, "cute.make_layout_image_mask")
    from ...numeric import Int32

    dst = t.new_reg(Int32, 1)
    t.emit(MaskShiftOp(dst, pattern, offset))
    return TraceValue([(dst, 0)], (), Int32)
