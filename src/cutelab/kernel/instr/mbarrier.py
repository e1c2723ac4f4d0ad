"""SM90 mbarriers inside traced kernels: ``cute.arch.mbarrier_*`` and the async-proxy fences.

An mbarrier is a 64-bit word of shared memory (``SmemAllocator.allocate_tensor(cutlass.Int64,
n)``; its ``.iterator``, plus an offset, is the barrier pointer). It counts down the arrivals of
one *phase*: ``mbarrier_init(ptr, count)`` expects ``count`` arrivals; ``mbarrier_arrive``
makes one; ``mbarrier_expect_tx(ptr, bytes)`` adds transaction bytes that asynchronous copies
(TMA) will complete; a phase completes when all its arrivals have happened and its transaction
count is back to zero, and the next phase begins with the full arrival count again.
``mbarrier_wait(ptr, parity)`` waits until the phase of that parity (0 or 1) has completed.
(``mbarrier_arrive``, ``mbarrier_expect_tx`` and ``mbarrier_arrive_and_expect_tx``, which also take a
peer CTA's rank, are kernel/instr/cluster.py's; on this CTA's barrier they emit this file's ops.)

The CPU interpreter keeps, per thread block and barrier, the expected and pending arrivals, the
transaction count and the number of completed phases, shared by every group of warps
(``kernel.cpu.warps``). A wait whose phase has not completed lets the other warps run
(``waits_for``); one that no warp can complete is part of a deadlock report (kernel, line,
block, barrier, what is still pending) instead of a hang.

The CUDA back end prints the PTX of each op inline (``mbarrier.init.shared::cta.b64``,
``mbarrier.arrive...``, ``mbarrier.try_wait.parity...`` with a suspend-time hint, in a PTX loop, ``fence.mbarrier_init``,
``fence.proxy.async``).
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import numpy as np

from ...errors import LaunchError, TraceError
from ..ir.symbolic import is_sym, sym_range
from ..ir.nodes import Access, Op, Shared
from ..frontend.trace import TraceValue, current

__all__ = [
    "MbarrierOp", "FenceOp", "mbarrier_init", "mbarrier_init_fence", "mbarrier_wait", "mbarrier_try_wait",
    "fence_proxy", "fence_view_async_shared",
    "mbar_ref", "complete_tx", "smem_addr",
]


# The suspend-time hint of mbarrier_wait's try_wait (nanoseconds; CUTLASS's ClusterBarrier::wait uses
# the same): a thread whose phase is not complete sleeps in the instruction until it completes or this
# time passes, instead of spinning through a loop of polls.
WAIT_SUSPEND_NS = 0x989680

# --------------------------------------------------------------------------- pointers

def mbar_ref(ptr: Any, what: str) -> Tuple[Shared, Any]:
    """(shared array, element offset) of an mbarrier pointer: a smem Pointer or Tensor of 64-bit words."""
    from ...tensor import Pointer, Tensor
    from ..frontend.engines import SmemEngine

    from ..frontend.smem import SmemPtr

    t = current(what)
    if isinstance(ptr, SmemPtr):  # a cute.struct field's data_ptr() (+ stage), e.g. a pipeline's barrier_storage
        from ...layout import make_layout
        from ...numeric import Int64

        dt = ptr.dtype or Int64
        bo = ptr.byte_offset
        if isinstance(bo, TraceValue):  # at a runtime stage (quack's `mbar_ptr + stage`, stage an Int32 variable)
            if len(bo.refs) != 1 or bo.dtype.kind not in ("int", "uint"):
                raise TraceError(f"kernel {t.name}: {what}: the barrier's offset must be one integer, got a value "
                                 f"of {bo.dtype} of shape {bo.shape}{t.where()}")
            bo = bo.as_index()  # its register, read at run time
        k = bo // dt.bytes
        hi = int(k) if not is_sym(k) else sym_range(k)[1]  # a run-time barrier index: its largest value
        if is_sym(k):  # (at most the region's last word: the access itself is bounds-checked, under its branch
            # conditions, as every shared access is: quack's `if tidx < stages: mbarrier_init(mbar_ptr + tidx)`)
            hi = max(0, min(hi, ptr.region.nbytes // dt.bytes - 1))
        first = SmemPtr(ptr.region, 0, dt).tensor(make_layout(hi + 1), dt)  # the array reaches the barrier
        eng, off = first.engine, first.offset + k
    elif isinstance(ptr, Tensor):
        eng, off = ptr.engine, ptr.offset
    elif isinstance(ptr, Pointer):
        eng, off = ptr.engine, ptr.offset
    else:
        raise TraceError(f"kernel {t.name}: {what}: expected a shared-memory pointer to an mbarrier "
                         f"(smem tensor.iterator), got {type(ptr).__name__}{t.where()}")
    if not isinstance(eng, SmemEngine):
        raise TraceError(f"kernel {t.name}: {what}: the mbarrier must live in shared memory, got a "
                         f"{getattr(eng, 'memspace', '?')} pointer{t.where()}")
    if eng.dtype.width != 64 or eng.dtype.kind not in ("int", "uint"):
        raise TraceError(f"kernel {t.name}: {what}: an mbarrier is a 64-bit word; the pointer is to "
                         f"{eng.dtype}{t.where()}")
    if isinstance(off, TraceValue):  # a runtime integer (mbar_ptr + stage, stage an Int32 variable): read at run time
        if len(off.refs) != 1 or off.dtype.kind not in ("int", "uint"):
            raise TraceError(f"kernel {t.name}: {what}: the barrier's offset must be one integer, got a value of "
                             f"{off.dtype} of shape {off.shape}{t.where()}")
        off = off.as_index()
    t.check_index(off, what)
    return eng.param, off


def smem_addr(r: Any, sh: Shared, base: Any) -> str:
    """CUDA: the 32-bit shared-window address of sh[base] (a C expression; LoweringContext.shared_address)."""
    code = r.expr(base)[0] if is_sym(base) else str(int(base))
    if sh.dtype.width < 8:  # sub-byte elements, packed into the bytes of an unsigned char array (render)
        per = 8 // sh.dtype.width
        code = f"({code}) / {per}" if is_sym(base) else str(int(base) // per)
    return r.shared_address(sh, code)


def _int_arg(x: Any, what: str, t: Any) -> Any:
    if isinstance(x, bool):
        x = int(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if is_sym(x):
        t.check_index(x, what)
        return x
    if hasattr(x, "value") and isinstance(getattr(x, "value"), (int, np.integer)):  # Int32(3)
        return int(x.value)
    if isinstance(x, TraceValue) and len(x.refs) == 1 and x.dtype.kind in ("int", "uint", "bool"):
        v = x.as_index()  # a runtime Int32 variable (a phase flipped in a loop): its register, read at run time
        if is_sym(v):
            t.check_index(v, what)
        return v
    raise TraceError(f"kernel {t.name}: {what}: expected an integer (static or an index expression), got "
                     f"{type(x).__name__}{t.where()}")


# --------------------------------------------------------------------------- CPU state

class _State:
    """Per shared array of barriers: arrays of shape (blocks of the batch, array length)."""

    def __init__(self, nblk: int, length: int):
        z = lambda: np.zeros((nblk, length), dtype=np.int64)  # noqa: E731
        self.init = np.zeros((nblk, length), dtype=bool)
        self.expected, self.pending, self.tx, self.phase = z(), z(), z(), z()


def _state(b: Any, sh: Shared) -> _State:
    st: Dict[int, _State] = b.common.setdefault("mbarriers", {})  # one state for every group of warps
    if sh.index not in st:
        st[sh.index] = _State(b.nblk, sh.length)
    return st[sh.index]


def _targets(b: Any, mask: Any, sh: Shared, base: Any, what: str) -> Tuple[np.ndarray, np.ndarray]:
    """(block in batch, barrier slot) of every active thread."""
    addr = np.broadcast_to(np.asarray(b.index(base), dtype=np.int64), (b.n,))
    blk = b.block_of
    if mask is not None:
        addr, blk = addr[mask], blk[mask]
    if addr.size and (addr.min() < 0 or addr.max() >= sh.length):
        raise LaunchError(f"{b.ir.name}: {what}: barrier offset {int(addr.min())}..{int(addr.max())} is outside "
                          f"the {sh.length} barriers of {sh.name}")
    return blk, addr


def _need_init(st: _State, blk: np.ndarray, slot: np.ndarray, b: Any, sh: Shared, what: str) -> None:
    bad = ~st.init[blk, slot]
    if bad.any():
        i = int(np.argmax(bad))
        raise LaunchError(f"{b.ir.name}: {what}: barrier {sh.name}[{int(slot[i])}] of block "
                          f"{_block_no(b, int(blk[i]))} was never initialised (cute.arch.mbarrier_init)")


def _block_no(b: Any, k: int) -> str:
    """The block index (x,y,z) of block k of the batch."""
    return b.block_name(k)


def _advance(st: _State, blk: np.ndarray, slot: np.ndarray) -> None:
    """Complete the phase of each (blk, slot) whose arrivals and transactions are all done."""
    done = (st.pending[blk, slot] == 0) & (st.tx[blk, slot] == 0)
    if done.any():
        bb, ss = blk[done], slot[done]
        key = np.unique(bb * st.init.shape[1] + ss)
        bb, ss = key // st.init.shape[1], key % st.init.shape[1]
        st.phase[bb, ss] += 1
        st.pending[bb, ss] = st.expected[bb, ss]


def _arrive(b: Any, st: _State, blk: np.ndarray, slot: np.ndarray, sh: Shared, what: str, where: str) -> None:
    cnt = np.zeros_like(st.pending)
    np.add.at(cnt, (blk, slot), 1)
    bb, ss = np.nonzero(cnt)
    for k, s in zip(bb.tolist(), ss.tolist()):  # arrivals may span phases: one phase at a time
        n = int(cnt[k, s])
        while n:
            take = min(n, int(st.pending[k, s]))
            if take == 0:
                raise LaunchError(
                    f"{b.ir.name}{where}: {what}: barrier {sh.name}[{s}] of block {_block_no(b, k)} has no arrival "
                    f"left in its phase (it expects {int(st.expected[k, s])} and waits for {int(st.tx[k, s])} "
                    f"transaction bytes): more threads arrive than mbarrier_init counted")
            st.pending[k, s] -= take
            n -= take
            _advance(st, np.array([k]), np.array([s]))


def complete_tx(b: Any, sh: Shared, blk: np.ndarray, slot: np.ndarray, nbytes: int) -> None:
    """An asynchronous copy (TMA) of nbytes completes on barrier sh[slot] of each block in blk."""
    st = _state(b, sh)
    _need_init(st, blk, slot, b, sh, "a TMA copy's complete_tx")
    np.add.at(st.tx, (blk, slot), -int(nbytes))
    _advance(st, blk, slot)


# --------------------------------------------------------------------------- ops

class MbarrierOp(Op):
    """One mbarrier operation: ``init`` (count), ``arrive``, ``expect_tx`` (bytes),
    ``arrive_expect_tx`` (bytes), ``wait`` (parity) or ``try_wait`` (parity; result in ``dst``);
    with a state token (CuTe DSL's ``cutlass.experimental.primitives``): ``arrive_state`` (the
    token in ``dst``: on the CPU, the number of phases completed before the arrival) and
    ``try_wait_state`` (arg: a token; whether the phase it arrived in has completed), and
    ``inval`` (the barrier is no longer initialised)."""

    __slots__ = ("kind", "shared", "base", "arg", "dst", "where")

    KINDS = ("init", "arrive", "expect_tx", "arrive_expect_tx", "wait", "try_wait", "arrive_state",
             "try_wait_state", "inval")

    def __init__(self, kind: str, shared: Shared, base: Any, arg: Any = None, dst: Any = None, where: str = ""):
        assert kind in self.KINDS, kind
        self.kind, self.shared, self.base, self.arg, self.dst, self.where = kind, shared, base, arg, dst, where

    def __repr__(self) -> str:
        from ..ir.nodes import _ref_str

        a = "" if self.arg is None else f", {_ref_str(self.arg)}"
        d = "" if self.dst is None else f"{self.dst!r} = "
        return f"{d}mbarrier_{self.kind}({self.shared.name}[{_ref_str(self.base)}]{a})"

    def accesses(self) -> List[Access]:
        return [Access(self.shared, self.base, (0,), self.kind in ("init", "inval"), self)]

    def _arg(self, b: Any, blk_mask: Any) -> np.ndarray:
        v = np.broadcast_to(np.asarray(b.index(self.arg), dtype=np.int64), (b.n,))
        return v if blk_mask is None else v[blk_mask]

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        sh = self.shared
        what = f"cute.arch.mbarrier_{self.kind}"
        blk, slot = _targets(b, mask, sh, self.base, what)
        st = _state(b, sh)
        if self.kind == "init":
            cnt = self._arg(b, mask)
            if cnt.size and cnt.min() < 1:
                raise LaunchError(f"{b.ir.name}{self.where}: {what}: the arrival count must be >= 1, got {int(cnt.min())}")
            st.init[blk, slot] = True
            st.expected[blk, slot] = cnt
            st.pending[blk, slot] = cnt
            st.tx[blk, slot] = 0
            st.phase[blk, slot] = 0
            return
        _need_init(st, blk, slot, b, sh, what)
        if self.kind == "inval":
            st.init[blk, slot] = False
            return
        if self.kind == "arrive_state":
            before = st.phase[blk, slot].copy()
            _arrive(b, st, blk, slot, sh, what, self.where)
            self._result(b, mask, before)
            return
        if self.kind == "try_wait_state":  # arg: the token's register reference
            from ...numeric import Int64

            tok = np.asarray(b.column(self.arg, Int64, real=False), dtype=np.int64)
            self._result(b, mask, st.phase[blk, slot] > (tok if mask is None else tok[mask]))
            return
        if self.kind in ("expect_tx", "arrive_expect_tx"):
            np.add.at(st.tx, (blk, slot), self._arg(b, mask))
        if self.kind in ("arrive", "arrive_expect_tx"):
            _arrive(b, st, blk, slot, sh, what, self.where)
            return
        if self.kind == "expect_tx":
            return
        par = self._arg(b, mask) & 1
        done = (st.phase[blk, slot] & 1) != par  # the phase of parity `par` has completed
        if self.kind == "try_wait":
            res = np.zeros((b.n, 1), dtype=self.dst.dtype.storage)
            if mask is None:
                res[:, 0] = done
            else:
                res[mask, 0] = done
            b.regs[self.dst.id] = res
            return
        if not done.all():
            i = int(np.argmin(done))
            k, s = int(blk[i]), int(slot[i])
            raise LaunchError(
                f"{b.ir.name}{self.where}: cute.arch.mbarrier_wait(phase={int(par[i])}) on {sh.name}[{s}] of block "
                f"{_block_no(b, k)} can never complete: the phase still waits for {int(st.pending[k, s])} of "
                f"{int(st.expected[k, s])} arrivals and {int(st.tx[k, s])} transaction bytes")

    def _result(self, b: Any, mask: Any, vals: np.ndarray) -> None:
        res = b.regs.get(self.dst.id)
        if res is None:
            res = np.zeros((b.n, 1), dtype=self.dst.dtype.storage)
        if mask is None:
            res[:, 0] = vals
        else:
            res[mask, 0] = vals
        b.regs[self.dst.id] = res

    @property
    def may_wait(self) -> bool:  # type: ignore[override]
        """A wait (and a try_wait, which programs poll in a loop) waits for other warps."""
        return self.kind in ("wait", "try_wait", "try_wait_state")

    def _phases_done(self, b: Any, mask: Any) -> Tuple[Any, Any, Any, Any, Any]:
        """For a wait: (state, block, slot, parity, done) of every active thread, done where the
        phase of that parity has completed."""
        blk, slot = _targets(b, mask, self.shared, self.base, "cute.arch.mbarrier_wait")
        st = _state(b, self.shared)
        _need_init(st, blk, slot, b, self.shared, "cute.arch.mbarrier_wait")
        par = self._arg(b, mask) & 1
        return st, blk, slot, par, (st.phase[blk, slot] & 1) != par

    def ready(self, b: Any, mask: Any) -> bool:
        """For a wait: whether every active thread's phase has completed (the wait would return)."""
        return bool(self._phases_done(b, mask)[4].all())

    def ready_threads(self, b: Any, mask: Any) -> Any:
        """For a wait: a bool per thread of the batch, True where the thread's phase has completed
        (inactive threads: False)."""
        done = self._phases_done(b, mask)[4]
        out = np.zeros(b.n, dtype=bool)
        if mask is None:
            out[:] = done
        else:
            out[mask] = done
        return out

    def waits_for(self, b: Any, mask: Any) -> Any:
        """None when the wait returns now; else the phase it waits for, and what that phase lacks."""
        if self.kind != "wait":
            return None
        sh = self.shared
        st, blk, slot, par, done = self._phases_done(b, mask)
        if done.all():
            return None
        i = int(np.argmin(done))
        k, s = int(blk[i]), int(slot[i])
        return (f"cute.arch.mbarrier_wait(phase={int(par[i])}) on {sh.name}[{s}] of block {_block_no(b, k)}"
                f" can never complete: the phase still waits for {int(st.pending[k, s])} of "
                f"{int(st.expected[k, s])} arrivals and {int(st.tx[k, s])} transaction bytes")

    def cuda(self, r: Any) -> None:
        addr = smem_addr(r, self.shared, self.base)
        arg = None
        if self.kind == "try_wait_state":
            from ...numeric import Int64

            arg = r.value(self.arg, Int64)
        elif self.arg is not None:
            arg = r.expr(self.arg)[0] if is_sym(self.arg) else str(int(self.arg))
        k = self.kind
        if k == "init":
            r.emit(f'asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"({addr}), "r"((unsigned)({arg})) : "memory");')
        elif k == "arrive":
            r.emit(f'asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"({addr}) : "memory");')
        elif k == "expect_tx":
            r.emit(f'asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" :: "r"({addr}), '
                   f'"r"((unsigned)({arg})) : "memory");')
        elif k == "arrive_expect_tx":
            r.emit(f'asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"({addr}), '
                   f'"r"((unsigned)({arg})) : "memory");')
        elif k == "inval":
            r.emit(f'asm volatile("mbarrier.inval.shared::cta.b64 [%0];" :: "r"({addr}) : "memory");')
        elif k == "arrive_state":
            r.declare(self.dst)
            r.emit(f'asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"({r.reg(self.dst)}[0]) : '
                   f'"r"({addr}) : "memory");')
        elif k == "try_wait_state":
            r.declare(self.dst)
            r.emit('{ unsigned cl_ok; asm volatile("{\\n\\t.reg .pred p;\\n\\tmbarrier.try_wait.shared::cta.b64 p, '
                   '[%1], %2;\\n\\tselp.u32 %0, 1, 0, p;\\n\\t}" : "=r"(cl_ok) : "r"(' + addr + '), '
                   '"l"((unsigned long long)(' + arg + f')) : "memory"); {r.reg(self.dst)}[0] = cl_ok; }}')
        elif k == "wait":  # the loop in PTX; each try_wait may suspend the thread up to the hint (ns)
            r.emit('asm volatile("{\\n\\t.reg .pred p;\\n\\tCL_WAIT:\\n\\tmbarrier.try_wait.parity.shared::cta.b64 p, [%0], '
                   f'%1, {WAIT_SUSPEND_NS};\\n\\t@!p bra CL_WAIT;\\n\\t}}" :: "r"({addr}), "r"((unsigned)({arg})) '
                   ': "memory");')
        else:
            r.declare(self.dst)
            r.emit('{ unsigned cl_ok; asm volatile("{\\n\\t.reg .pred p;\\n\\tmbarrier.try_wait.parity.shared::cta.b64 p, '
                   '[%1], %2;\\n\\tselp.u32 %0, 1, 0, p;\\n\\t}" : "=r"(cl_ok) : "r"(' + addr + '), "r"((unsigned)('
                   + arg + f')) : "memory"); {r.reg(self.dst)}[0] = cl_ok; }}')


class FenceOp(Op):
    """A fence with no CPU effect (the interpreter's memory is always coherent): ``mbarrier_init``
    (``fence.mbarrier_init.release.cluster``), ``proxy_async`` (``fence.proxy.async.shared::cta``)."""

    __slots__ = ("kind",)

    PTX = {"mbarrier_init": "fence.mbarrier_init.release.cluster;",
           "proxy_async": "fence.proxy.async.shared::cta;",
           "proxy_async_cluster": "fence.proxy.async.shared::cluster;",
           "proxy_async_all": "fence.proxy.async;",
           "proxy_async_global": "fence.proxy.async.global;"}

    def __init__(self, kind: str):
        assert kind in self.PTX, kind
        self.kind = kind

    def __repr__(self) -> str:
        return f"fence_{self.kind}"

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        return None

    def cuda(self, r: Any) -> None:
        r.emit(f'asm volatile("{self.PTX[self.kind]}" ::: "memory");')


# --------------------------------------------------------------------------- cute.arch names

def _emit(kind: str, ptr: Any, arg: Any = None, what: str = "", result: bool = False) -> Any:
    t = current(what)
    sh, base = mbar_ref(ptr, what)
    if arg is not None:
        arg = _int_arg(arg, what, t)
    dst = None
    if result:
        from ...numeric import Boolean

        dst = t.new_reg(Boolean, 1)
    t.emit(MbarrierOp(kind, sh, base, arg, dst, t.where()))
    if result:
        from ...numeric import Boolean

        return TraceValue([(dst, 0)], (), Boolean)
    return None


def mbarrier_init(mbar_ptr: Any, cnt: Any, *, loc: Any = None, ip: Any = None) -> None:
    """Initialise the mbarrier at mbar_ptr to expect cnt arrivals per phase (run by one thread).

    >>> mbarrier_init(None, 1)
    Traceback (most recent call last):
    ...
    cutelab.errors.TraceError: cute.arch.mbarrier_init is only available inside a @cute.kernel function while it is launched
    """
    _emit("init", mbar_ptr, cnt, "cute.arch.mbarrier_init")


def mbarrier_init_fence(*, loc: Any = None, ip: Any = None) -> None:
    """Make mbarrier initialisations visible to the other threads and the async proxy."""
    current("cute.arch.mbarrier_init_fence").emit(FenceOp("mbarrier_init"))


def mbarrier_wait(mbar_ptr: Any, phase: Any, *, loc: Any = None, ip: Any = None) -> None:
    """Wait until the mbarrier's phase of parity `phase` (0 or 1) has completed."""
    _emit("wait", mbar_ptr, phase, "cute.arch.mbarrier_wait")


def mbarrier_try_wait(mbar_ptr: Any, phase: Any, *, loc: Any = None, ip: Any = None) -> TraceValue:
    """Whether the mbarrier's phase of parity `phase` has completed (a Boolean value)."""
    return _emit("try_wait", mbar_ptr, phase, "cute.arch.mbarrier_try_wait", result=True)


def fence_proxy(kind: Any = "async.shared", *, space: Any = None, use_intrinsic: Any = None, loc: Any = None,
                ip: Any = None) -> None:
    """``fence.proxy``: order generic-proxy memory accesses before async-proxy ones (TMA, wgmma).

    kind is CuTe DSL 4.8.1's string: ``"async"``, ``"async.shared"`` (space ``"cta"`` or
    ``"cluster"``) or ``"async.global"``; the other proxies (alias, tensormap, generic) are refused."""
    k = getattr(kind, "value", kind)
    sp = getattr(space, "value", space)
    if k == "async":
        ptx = "proxy_async_all"
    elif k == "async.shared" and sp in (None, "cta"):
        ptx = "proxy_async"
    elif k == "async.shared" and sp == "cluster":
        ptx = "proxy_async_cluster"
    elif k == "async.global":
        ptx = "proxy_async_global"
    else:
        raise TraceError(f"cute.arch.fence_proxy({kind!r}, space={space!r}): cutelab kernels support the async "
                         f"proxy fences ('async', 'async.shared' with space 'cta' or 'cluster', 'async.global')")
    current("cute.arch.fence_proxy").emit(FenceOp(ptx))


def fence_view_async_shared(*, loc: Any = None, ip: Any = None) -> None:
    """``fence.proxy.async.shared::cta`` (CuTe DSL's shorthand)."""
    current("cute.arch.fence_view_async_shared").emit(FenceOp("proxy_async"))
