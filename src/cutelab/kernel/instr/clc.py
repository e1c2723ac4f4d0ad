"""SM100 cluster launch control (CLC) inside traced kernels: ``cute.arch.issue_clc_query`` and
``cute.arch.clc_response``, as CuTe DSL 4.8.1 names them.

- ``issue_clc_query(mbar_ptr, clc_response_ptr, multicast=True)``: ``ClcQueryOp``, PTX
  ``clusterlaunchcontrol.try_cancel.async...mbarrier::complete_tx::bytes[.multicast::cluster::all].b128``.
  It asks the hardware to cancel the launch of a cluster that has not started yet. The 16-byte
  answer lands at ``clc_response_ptr`` in the issuing CTA's shared memory (with ``multicast``: in
  every CTA of its cluster, at the same offset). Its 16 bytes complete on the mbarrier at
  ``mbar_ptr`` of each CTA it lands in;
- ``clc_response(ptr)``: ``ClcResponseOp``, reads the answer (``ld.shared.b128``) and decodes it
  with ``clusterlaunchcontrol.query_cancel``. It returns four Int32 values: the blockIdx x, y and z
  of the first CTA of the cancelled cluster, then 1 if a cluster was cancelled (0 if none was left).

On the CPU the interpreter answers the query with its own scheduler (``ClcSchedule``, made by
cpu/interpreter.py for kernels that hold a ``ClcQueryOp``). It runs the clusters of the grid in
launch order (cluster by cluster, as cpu/context.py numbers the blocks), and only some of them are
resident at once. A query cancels the first cluster not yet started, so the next batch of resident
clusters starts after the last one cancelled. The answer is four 32-bit words in the
interpreter's own encoding (x, y, z of the first CTA, then 1; or 0, 0, 0, 0). The hardware's
encoding is opaque to programs, so a program reads it only through ``clc_response``.

Rules checked: the answer must be 16 bytes of shared memory at a 16-byte-aligned offset
(``ld.shared.b128``/``try_cancel`` need it), and the mbarrier must be in shared memory.

May import: what ``kernel.instr`` may (see its ``__init__``).
"""

from __future__ import annotations

from typing import Any, List, Tuple

import numpy as np

from ...errors import LaunchError, TraceError
from ..ir.nodes import Access, Op, Shared
from ..ir.symbolic import is_sym, sym_div
from ..frontend.trace import TraceValue, current

__all__ = ["ClcQueryOp", "ClcResponseOp", "ClcSchedule", "issue_clc_query", "clc_response", "RESPONSE_BYTES"]

RESPONSE_BYTES = 16


class ClcSchedule:
    """The interpreter's answer to CLC queries for one launch: the clusters of the grid in launch
    order, ``next`` the first one neither started nor cancelled."""

    def __init__(self, nclusters: int, grid: Tuple[int, int, int], cluster: Tuple[int, int, int]):
        self.nclusters, self.grid, self.cluster = nclusters, grid, cluster
        self.next = 0
        self.cancelled = 0

    def resident(self) -> int:
        """How many clusters run at once: half the grid's (rounded up). Then some queries cancel a
        cluster and take its work, and the last ones find none left."""
        return max(1, -(-self.nclusters // 2))

    def cancel(self) -> Tuple[int, int, int, int]:
        """Cancel the next cluster: (x, y, z of its first CTA, 1), or (0, 0, 0, 0) if none is left."""
        if self.next >= self.nclusters:
            return 0, 0, 0, 0
        from ..cpu.context import _cluster_major_bid

        size = self.cluster[0] * self.cluster[1] * self.cluster[2]
        blk = np.array([self.next * size], dtype=np.int64)
        xyz = [int(_cluster_major_bid(f"bid.{a}", blk, self.grid[:2], self.cluster)[0]) for a in "xyz"]
        self.next += 1
        self.cancelled += 1
        return xyz[0], xyz[1], xyz[2], 1


def _at(op: Any) -> str:
    loc = getattr(op, "loc", None)
    return f" (at {loc})" if loc else (op.where or "")


def _here(t: Any) -> str:
    """" (at prog.py:12)": the user's line being traced (the innermost frame outside cutelab)."""
    from ..frontend.trace import user_location

    w = user_location() or getattr(t, "location", None)
    return f" (at {w})" if w else ""


def _response_ref(ptr: Any, what: str) -> Tuple[Shared, Any]:
    """(shared array, element offset) of a CLC response pointer, checked: 16 bytes of 32- or 64-bit
    words at a 16-byte-aligned offset."""
    from .cluster import _smem_ref

    t = current(what)
    sh, off = _smem_ref(ptr, what)
    if sh.dtype.kind not in ("int", "uint") or sh.dtype.width not in (32, 64):
        raise TraceError(f"kernel {t.name}: {what}: the CLC response is 16 bytes of 32- or 64-bit integer words (e.g. "
                         f"a cute.struct MemRange[Int32, 4]); the pointer is to {sh.dtype}{_here(t)}")
    words = RESPONSE_BYTES // sh.dtype.bytes
    if sh.align < RESPONSE_BYTES:
        raise TraceError(f"kernel {t.name}: {what}: the CLC response must be 16-byte aligned; {sh.name} is aligned to "
                         f"{sh.align} bytes (cute.struct.Align[..., 16]){_here(t)}")
    d = sym_div(off) if is_sym(off) else int(off)
    if d % words:
        raise TraceError(f"kernel {t.name}: {what}: the CLC response must be 16-byte aligned; element offset {off} of "
                         f"{sh.name} ({sh.dtype}) is not known to be a multiple of {words}{_here(t)}")
    if isinstance(off, int) and off + words > sh.length:
        raise TraceError(f"kernel {t.name}: {what}: the 16-byte CLC response at element {off} does not fit in "
                         f"{sh.name} ({sh.length} elements){_here(t)}")
    return sh, off


def _bytes_of(b: Any, sh: Shared) -> np.ndarray:
    return b.shared[sh.index].view(np.uint8)


class ClcQueryOp(Op):
    """``clusterlaunchcontrol.try_cancel``: one query per active thread (programs issue it from one
    elected thread); the answer lands in ``shared[base..]`` of the CTA (``multicast``: of every CTA
    of its cluster) and completes 16 bytes on the barrier ``bar[bar_base]`` there."""

    remote = True  # with multicast it writes the other CTAs' shared memory: the race check leaves it out

    __slots__ = ("shared", "base", "bar", "bar_base", "multicast", "self_rank", "where")

    def __init__(self, shared: Shared, base: Any, bar: Shared, bar_base: Any, multicast: bool, self_rank: Any,
                 where: str = ""):
        self.shared, self.base, self.bar, self.bar_base = shared, base, bar, bar_base
        self.multicast, self.self_rank, self.where = multicast, self_rank, where

    def __repr__(self) -> str:
        from ..ir.nodes import _ref_str

        return (f"clc_try_cancel {self.shared.name}[{_ref_str(self.base)}] on "
                f"{self.bar.name}[{_ref_str(self.bar_base)}]{' multicast' if self.multicast else ''}")

    def accesses(self) -> List[Access]:
        words = RESPONSE_BYTES // self.shared.dtype.bytes
        return [Access(self.shared, self.base, tuple(range(words)), True, self),
                Access(self.bar, self.bar_base, (0,), False, self)]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        from .mbarrier import complete_tx

        sched = b.common.get("clc")
        if sched is None:
            raise LaunchError(f"{b.ir.name}{_at(self)}: a CLC query outside a launch the interpreter schedules")
        act = np.arange(b.n) if mask is None else np.nonzero(mask)[0]
        if act.size == 0:
            return
        sh, item = self.shared, self.shared.dtype.bytes
        base = np.broadcast_to(np.asarray(b.index(self.base), dtype=np.int64), (b.n,))[act]
        slot = np.broadcast_to(np.asarray(b.index(self.bar_base), dtype=np.int64), (b.n,))[act]
        bad = (base < 0) | (base * item + RESPONSE_BYTES > sh.length * item) | ((base * item) % RESPONSE_BYTES != 0)
        if bad.any():
            i = int(np.argmax(bad))
            raise LaunchError(f"{b.ir.name}{_at(self)}: a CLC query of block {b.block_name(int(b.block_of[act[i]]))} "
                              f"answers into {sh.name}[{int(base[i])}], not 16 aligned bytes inside its "
                              f"{sh.length} elements")
        size = int(getattr(b, "cluster_size", 1))
        me = np.broadcast_to(np.asarray(b.index(self.self_rank), dtype=np.int64), (b.n,))[act]
        raw = _bytes_of(b, sh)
        for j, t in enumerate(act.tolist()):  # in thread order: the batch's queries take clusters in turn
            answer = np.array(sched.cancel(), dtype=np.int32).view(np.uint8)
            blk = int(b.block_of[t])
            dests = [blk - int(me[j]) + r for r in range(size)] if self.multicast else [blk]
            for d in dests:
                at = (d * sh.length + int(base[j])) * item
                raw[at:at + RESPONSE_BYTES] = answer
            complete_tx(b, self.bar, np.array(dests, dtype=np.int64), np.full(len(dests), int(slot[j])),
                        RESPONSE_BYTES)

    def cuda(self, r: Any) -> None:
        from .mbarrier import smem_addr

        mc = ".multicast::cluster::all" if self.multicast else ""
        ins = (f"clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes{mc}.b128 "
               f"[%0], [%1];")
        r.emit(f'asm volatile("{ins}" :: "r"({smem_addr(r, self.shared, self.base)}), '
               f'"r"({smem_addr(r, self.bar, self.bar_base)}) : "memory");')


class ClcResponseOp(Op):
    """``clusterlaunchcontrol.query_cancel`` of the 16-byte answer at ``shared[base..]``: ``dst``
    (four Int32) gets the first CTA's x, y, z and whether a cluster was cancelled (1 or 0)."""

    __slots__ = ("shared", "base", "dst", "where")

    def __init__(self, shared: Shared, base: Any, dst: Any, where: str = ""):
        self.shared, self.base, self.dst, self.where = shared, base, dst, where

    def __repr__(self) -> str:
        from ..ir.nodes import _ref_str

        return f"{self.dst!r} = clc_query_cancel({self.shared.name}[{_ref_str(self.base)}])"

    def accesses(self) -> List[Access]:
        words = RESPONSE_BYTES // self.shared.dtype.bytes
        return [Access(self.shared, self.base, tuple(range(words)), False, self)]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        sh, item = self.shared, self.shared.dtype.bytes
        base = np.broadcast_to(np.asarray(b.index(self.base), dtype=np.int64), (b.n,))
        at = (b.block_of * sh.length + base) * item
        raw = _bytes_of(b, sh)
        idx = at[:, None] + np.arange(RESPONSE_BYTES)[None, :]
        got = np.ascontiguousarray(raw[idx]).view(np.int32).reshape(b.n, 4)
        valid = got[:, 3] != 0
        got = np.where(valid[:, None], got, 0)  # a failed query: the ids are undefined; 0 here
        res = b.regs.get(self.dst.id)
        if res is None or mask is None:
            res = np.zeros((b.n, 4), dtype=self.dst.dtype.storage)
        if mask is None:
            res[:] = got
        else:
            res[mask] = got[mask]
        b.regs[self.dst.id] = res

    def cuda(self, r: Any) -> None:
        base = r.expr(self.base)[0] if is_sym(self.base) else int(self.base)
        addr = r.shared_address(self.shared, base)
        r.declare(self.dst)
        d = r.reg(self.dst)
        r.emit('{ unsigned cl_x, cl_y, cl_z, cl_ok; asm volatile("{\\n\\t.reg .b128 cl_r;\\n\\t.reg .pred cl_p;\\n\\t'
               'ld.shared.b128 cl_r, [%4];\\n\\t'
               'clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 cl_p, cl_r;\\n\\t'
               'selp.u32 %3, 1, 0, cl_p;\\n\\t'
               'clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 {%0, %1, %2, _}, cl_r;\\n\\t}" '
               ': "=r"(cl_x), "=r"(cl_y), "=r"(cl_z), "=r"(cl_ok) : "r"(' + addr + ') : "memory"); '
               f'{d}[0] = cl_ok ? (int)cl_x : 0; {d}[1] = cl_ok ? (int)cl_y : 0; {d}[2] = cl_ok ? (int)cl_z : 0; '
               f'{d}[3] = (int)cl_ok; }}')


def issue_clc_query(mbar_ptr: Any, clc_response_ptr: Any, multicast: bool = True, *, loc: Any = None,
                    ip: Any = None) -> None:
    """Ask to cancel a cluster not yet launched (``clusterlaunchcontrol.try_cancel``): the 16-byte
    answer lands at clc_response_ptr (with multicast: in every CTA of the cluster) and completes
    its bytes on the mbarrier at mbar_ptr there."""
    from .cluster import _rank_expr
    from .mbarrier import mbar_ref

    what = "cute.arch.issue_clc_query"
    t = current(what)
    if not isinstance(multicast, bool):
        raise TraceError(f"kernel {t.name}: {what}: multicast must be a static bool, got {multicast!r}{_here(t)}")
    sh, off = _response_ref(clc_response_ptr, what)
    bar, bar_off = mbar_ref(mbar_ptr, what)
    t.emit(ClcQueryOp(sh, off, bar, bar_off, multicast, _rank_expr(t), _here(t)))


def clc_response(result_addr: Any, *, loc: Any = None, ip: Any = None) -> Tuple[Any, Any, Any, Any]:
    """(x, y, z, is_valid): the first CTA of the cluster a CLC query cancelled, and 1 if it
    cancelled one (0: no cluster was left; x, y, z are then 0 here, undefined on the GPU)."""
    from ...numeric import Int32

    what = "cute.arch.clc_response"
    t = current(what)
    sh, off = _response_ref(result_addr, what)
    dst = t.new_reg(Int32, 4)
    t.emit(ClcResponseOp(sh, off, dst, _here(t)))
    return tuple(TraceValue([(dst, i)], (), Int32) for i in range(4))  # type: ignore[return-value]
