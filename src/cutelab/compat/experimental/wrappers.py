"""``cutlass.experimental.primitives``: CuTe DSL 4.8.1's thin wrappers over single PTX
instructions, with its signatures, over cutelab's kernel instructions.

Each wrapper lowers to what cutelab's kernels already have, so the CUDA printer and the CPU
interpreter both run it:

- warp instructions (``elect_sync``, ``vote_sync``, ``shfl_sync``, ``redux_sync``) are inline PTX
  (``kernel.instr.inline_asm``), run on the CPU by the PTX interpreter (``kernel.instr.ptx``);
- barriers: ``barrier_cta_sync`` is the block or a named barrier, ``bar_warp_sync`` is
  ``__syncwarp``, ``barrier_cluster_*`` the cluster barrier (``kernel.instr.cluster``);
- mbarriers (``mbarrier_init``, ``mbarrier_arrive[_expect_tx]``, ``mbarrier_try_wait_parity``,
  ...) are ``kernel.instr.mbarrier``'s ops; on a pointer from ``mapa`` they act on that CTA's
  barrier (``kernel.instr.cluster``);
- ``exit`` is kernel/instr/thread_exit.py's op (the scheduler takes the exiting threads out);
- ``cp_async_shared_global`` is a cp.async copy atom (``kernel.instr.cpasync``), ``red`` the
  ``red`` instruction of ``kernel.instr.atomics``, the fences those of ``kernel.instr.mbarrier``.

Every other name of the DSL's module is a function that raises NotEmulatedError naming it and
the user's line (``REFUSED``): nothing is silently skipped.
"""

from __future__ import annotations

from typing import Any, Dict

from ...errors import TraceError
from ..where import NotEmulatedError, refuse, user_line
from .enums import *  # noqa: F401,F403
from .enums import (BarrierRedux, MBarrierWait, MemScope, Proxy, ReductionKind, ReductionOp,  # noqa: F401
                    ReductionType, Shfl, SharedSpace, VoteSync, __all__ as _enum_names)
from .memory import Array, Pointer, as_pointer, cute_pointer

FULL_MASK = 0xFFFFFFFF


def _s(x: Any) -> Any:
    return getattr(x, "value", x)


def _static_int(x: Any, what: str, arg: str) -> int:
    v = getattr(x, "value", x)
    if isinstance(v, bool) or not isinstance(v, int):
        raise NotEmulatedError(f"{what}({arg}=<runtime value>)", f"cutelab needs {arg} as a compile-time int",
                               where=user_line(3))
    return int(v)


def _asm(res: Any, operands: list, asm: str, constraints: str, what: str) -> Any:
    from ...kernel.instr.inline_asm import NotInterpreted, inline_asm

    where = user_line(3)
    try:
        return inline_asm(res, operands, asm, constraints, where, what=what)
    except NotInterpreted as e:
        raise NotEmulatedError(f"{e.instr} ({what})", str(e), where=where) from None


def _as_i32(pred: Any) -> Any:
    """A predicate (bool, Boolean value) as an Int32 0/1 operand."""
    from ...numeric import Int32

    if isinstance(pred, bool):
        return int(pred)
    return Int32(pred)


# --------------------------------------------------------------------------- warp instructions

def elect_sync(*, membermask: Any = FULL_MASK, loc: Any = None, ip: Any = None) -> Any:
    """``elect.sync``: True in one lane (the leader) of the member mask's lanes, False in the others."""
    from ...numeric import Boolean

    asm = "{ .reg .pred p; .reg .b32 l; elect.sync l|p, $1; selp.u32 $0, 1, 0, p; }"
    return _asm(Boolean, [membermask], asm, "=r,r", "prims.elect_sync")


def vote_sync(mask: Any, pred: Any, kind: Any, *, loc: Any = None, ip: Any = None) -> Any:
    """``vote.sync.{all,any,uni}.pred`` (a Boolean) or ``vote.sync.ballot.b32`` (an Int32 bit mask)
    over the lanes of ``mask``."""
    from ...numeric import Boolean, Int32

    k = VoteSync(_s(kind))
    if k is VoteSync.BALLOT:
        asm = "{ .reg .pred p; setp.ne.u32 p, $1, 0; vote.sync.ballot.b32 $0, p, $2; }"
        return _asm(Int32, [_as_i32(pred), mask], asm, "=r,r,r", "prims.vote_sync")
    asm = (f"{{ .reg .pred p, q; setp.ne.u32 p, $1, 0; vote.sync.{k.value}.pred q, p, $2; "
           f"selp.u32 $0, 1, 0, q; }}")
    return _asm(Boolean, [_as_i32(pred), mask], asm, "=r,r,r", "prims.vote_sync")


def _letter_of(val: Any, what: str) -> tuple:
    from ...numeric import Float32, Int32

    dt = getattr(val, "dtype", None)
    if dt is None:
        dt = Float32 if isinstance(val, float) else Int32
    if dt.width != 32:
        raise TraceError(f"{what}: operates on 32-bit values, got {dt}")
    return ("f" if dt.is_float else "r"), dt


def shfl_sync(thread_mask: Any, val: Any, offset: Any, mask_and_clamp: Any, kind: Any, *,
              return_value_and_is_valid: Any = None, loc: Any = None, ip: Any = None) -> Any:
    """``shfl.sync.{idx,up,down,bfly}.b32``: the value of another lane; with
    ``return_value_and_is_valid=True``, (value, whether the source lane was in range)."""
    from ...numeric import Boolean

    what = "prims.shfl_sync"
    k = Shfl(_s(kind))
    letter, dt = _letter_of(val, what)
    if return_value_and_is_valid:
        asm = (f"{{ .reg .pred p; shfl.sync.{k.value}.b32 $0|p, $2, $3, $4, $5; selp.u32 $1, 1, 0, p; }}")
        return _asm((dt, Boolean), [val, offset, mask_and_clamp, thread_mask], asm,
                    f"={letter},=r,{letter},r,r,r", what)
    asm = f"shfl.sync.{k.value}.b32 $0, $1, $2, $3, $4;"
    return _asm(dt, [val, offset, mask_and_clamp, thread_mask], asm, f"={letter},{letter},r,r,r", what)


_REDUX = {"add": ("add", "s32"), "and": ("and", "b32"), "or": ("or", "b32"), "xor": ("xor", "b32"),
          "min": ("min", "s32"), "max": ("max", "s32"), "umin": ("min", "u32"), "umax": ("max", "u32"),
          "fmin": ("min", "f32"), "fmax": ("max", "f32")}


def redux_sync(val: Any, kind: Any, mask_and_clamp: Any, *, abs: Any = None, nan: Any = None, loc: Any = None,
               ip: Any = None) -> Any:
    """``redux.sync``: the reduction of ``val`` over the warp's lanes (Int32; Float32 min/max with
    ``abs``/``nan``, sm_100a)."""
    from ...numeric import Float32, Int32

    k = ReductionKind(_s(kind)).value
    op, ty = _REDUX[k]
    if ty == "f32":
        mods = (".abs" if abs else "") + (".NaN" if nan else "")
        return _asm(Float32, [val, mask_and_clamp], f"redux.sync.{op}{mods}.f32 $0, $1, $2;", "=f,f,r",
                    "prims.redux_sync")
    if abs or nan:
        raise TraceError(f"prims.redux_sync: abs= and nan= apply to FMIN/FMAX only, not {k}")
    return _asm(Int32, [val, mask_and_clamp], f"redux.sync.{op}.{ty} $0, $1, $2;", "=r,r,r", "prims.redux_sync")


def bar_warp_sync(mask: Any, *, loc: Any = None, ip: Any = None) -> None:
    """``bar.warp.sync mask`` (``__syncwarp``)."""
    from ...kernel.arch import sync_warp

    sync_warp(_static_int(mask, "prims.bar_warp_sync", "mask"))


# --------------------------------------------------------------------------- CTA and cluster barriers

def barrier_cta_sync(barrier_id: Any = 0, *, thread_count: Any = None, loc: Any = None, ip: Any = None) -> None:
    """``barrier.sync id[, n]``: the block's barrier (id 0, all threads) or a named barrier."""
    from ...kernel.arch import barrier

    from ...kernel.frontend.trace import current

    bid = _static_int(barrier_id, "prims.barrier_cta_sync", "barrier_id")
    n = None if thread_count is None else _static_int(thread_count, "prims.barrier_cta_sync", "thread_count")
    blk = current("prims.barrier_cta_sync").block
    if bid == 0 and n == blk[0] * blk[1] * blk[2]:
        n = None  # barrier 0 of the whole block: __syncthreads
    barrier(barrier_id=bid, number_of_threads=n)


barrier_cta_sync_aligned = barrier_cta_sync


def barrier_cta_arrive(barrier_id: Any, thread_count: Any, *, loc: Any = None, ip: Any = None) -> None:
    """``barrier.arrive id, n``: arrive on named barrier ``id`` (of ``n`` threads) without waiting."""
    from ...pipeline import NamedBarrier

    bid = _static_int(barrier_id, "prims.barrier_cta_arrive", "barrier_id")
    n = _static_int(thread_count, "prims.barrier_cta_arrive", "thread_count")
    NamedBarrier(barrier_id=bid, num_threads=n).arrive()


barrier_cta_arrive_aligned = barrier_cta_arrive


def barrier_cta_red(pred: Any, barrier_id: Any, kind: Any, *, thread_count: Any = None, loc: Any = None,
                    ip: Any = None) -> Any:
    """``barrier.red.{popc,and,or}``: a barrier of the whole block that also reduces ``pred`` over its
    threads (popc: how many are true, an Int32; and/or: a Boolean). cutelab composes it from its own
    instructions, the same on both back ends: each warp counts its true predicates (``redux.sync.add``),
    lane 0 writes the count to a shared word of its warp, barrier ``barrier_id``, every thread sums the
    words, barrier again (so that the words are read before a later reduction writes them)."""
    from ...kernel.arch import barrier, lane_idx, warp_idx
    from ...kernel.frontend.trace import current
    from ...numeric import Int32
    from ...runtime import AddressSpace

    what = "prims.barrier_cta_red"
    k = BarrierRedux(_s(kind))
    bid = _static_int(barrier_id, what, "barrier_id")
    t = current(what)
    nt = t.block[0] * t.block[1] * t.block[2]
    n = nt if thread_count is None else _static_int(thread_count, what, "thread_count")
    if n != nt or nt % 32:
        raise NotEmulatedError(f"{what}(thread_count={n})", f"cutelab reduces over the whole block of {nt} threads "
                               f"(a multiple of 32), not a part of it", where=user_line(2))
    nw = nt // 32
    words = Array(Int32, nw, space=AddressSpace.smem)
    cnt = redux_sync(_as_i32(pred), ReductionKind.ADD, FULL_MASK)
    op = t.begin_if(lane_idx() == 0)
    outer, t.cur = t.cur, op.then
    try:
        words[warp_idx()] = cnt
    finally:
        t.cur = outer
    sync = (lambda: barrier()) if bid == 0 else (lambda: barrier(barrier_id=bid, number_of_threads=n))
    sync()
    total = words[0]
    for w in range(1, nw):
        total = total + words[w]
    sync()
    if k is BarrierRedux.POPC:
        return total
    return total == n if k is BarrierRedux.AND else total > 0


barrier_cta_red_aligned = barrier_cta_red


def barrier_cluster_arrive(*, loc: Any = None, ip: Any = None) -> None:
    """``barrier.cluster.arrive``."""
    from ...kernel.instr.cluster import cluster_arrive

    cluster_arrive()


def barrier_cluster_arrive_relaxed(*, loc: Any = None, ip: Any = None) -> None:
    """``barrier.cluster.arrive.relaxed``."""
    from ...kernel.instr.cluster import cluster_arrive_relaxed

    cluster_arrive_relaxed()


def barrier_cluster_wait(*, loc: Any = None, ip: Any = None) -> None:
    """``barrier.cluster.wait``."""
    from ...kernel.instr.cluster import cluster_wait

    cluster_wait()


def barrier_cluster_arrive_aligned(*, loc: Any = None, ip: Any = None) -> None:
    from ...kernel.instr.cluster import cluster_arrive

    cluster_arrive(aligned=True)


def barrier_cluster_arrive_relaxed_aligned(*, loc: Any = None, ip: Any = None) -> None:
    from ...kernel.instr.cluster import cluster_arrive_relaxed

    cluster_arrive_relaxed(aligned=True)


barrier_cluster_wait_aligned = barrier_cluster_wait


# --------------------------------------------------------------------------- mbarriers

def _mbar(addr: Any, what: str) -> tuple:
    return cute_pointer(addr, what)


def mbarrier_init(addr: Any, count: Any, *, loc: Any = None, ip: Any = None) -> None:
    """``mbarrier.init.shared::cta.b64``: expect ``count`` arrivals per phase."""
    from ...kernel.instr.mbarrier import mbarrier_init as init

    p, peer = _mbar(addr, "prims.mbarrier_init")
    if peer is not None:
        raise TraceError("prims.mbarrier_init: initialise the barrier in its own CTA, not through mapa")
    init(p, count)


def fence_mbarrier_init(*, loc: Any = None, ip: Any = None) -> None:
    """``fence.mbarrier_init.release.cluster``."""
    from ...kernel.instr.mbarrier import mbarrier_init_fence

    mbarrier_init_fence()


def _check_count(count: Any, what: str) -> None:
    if count is not None and _s(count) != 1:
        raise NotEmulatedError(f"{what}(count={count!r})", "cutelab's kernels arrive once per thread (count=1)",
                               where=user_line(3))


def _state_op(kind: str, p: Any, arg: Any, dtype: Any, what: str) -> Any:
    """An mbarrier op with a state token (kernel.instr.mbarrier's arrive_state, try_wait_state)."""
    from ...kernel.frontend.trace import TraceValue, current
    from ...kernel.instr.mbarrier import MbarrierOp, mbar_ref

    t = current(what)
    sh, base = mbar_ref(p, what)
    if arg is not None:  # a state token: its register (an Int64 value), read as it is
        if not (isinstance(arg, TraceValue) and len(arg.refs) == 1 and arg.dtype.width == 64):
            raise TraceError(f"{what}: the state must be the Int64 token prims.mbarrier_arrive returned, got {arg!r}")
        t.check_refs(arg.refs, what)
        arg = arg.refs[0]
    dst = t.new_reg(dtype, 1)
    t.emit(MbarrierOp(kind, sh, base, arg, dst, t.where()))
    return TraceValue([(dst, 0)], (), dtype)


def mbarrier_arrive(addr: Any, *, count: Any = None, scope: Any = None, relaxed: Any = None, loc: Any = None,
                    ip: Any = None) -> Any:
    """``mbarrier.arrive``: one arrival; returns the barrier's state token (an Int64 for
    ``mbarrier_try_wait``/``mbarrier_try_wait_timelimit``). On a pointer from ``mapa``, the arrival is
    on that CTA's barrier (``mbarrier.arrive.shared::cluster``, no token: None)."""
    from ...kernel.instr.cluster import mbarrier_arrive as arrive
    from ...numeric import Int64

    _check_count(count, "prims.mbarrier_arrive")
    p, peer = _mbar(addr, "prims.mbarrier_arrive")
    if peer is not None:
        arrive(p, peer, relaxed=bool(relaxed), scope=_s(scope))
        return None
    return _state_op("arrive_state", p, None, Int64, "prims.mbarrier_arrive")


def mbarrier_try_wait_timelimit(addr: Any, state: Any, time_limit: Any, *, scope: Any = None, order: Any = None,
                                loc: Any = None, ip: Any = None) -> Any:
    """``mbarrier.try_wait``: whether the phase that ``state`` (an ``mbarrier_arrive`` token) arrived in
    has completed (a Boolean; the time limit only bounds how long the GPU suspends the thread)."""
    from ...numeric import Boolean

    p, peer = _mbar(addr, "prims.mbarrier_try_wait_timelimit")
    if peer is not None:
        raise TraceError("prims.mbarrier_try_wait_timelimit: a thread waits on its own CTA's barrier, not through mapa")
    return _state_op("try_wait_state", p, state, Boolean, "prims.mbarrier_try_wait_timelimit")


def mbarrier_try_wait(addr: Any, state: Any, *, scope: Any = None, order: Any = None, loc: Any = None,
                      ip: Any = None) -> Any:
    """``mbarrier.try_wait`` with a state token (see mbarrier_try_wait_timelimit)."""
    return mbarrier_try_wait_timelimit(addr, state, None)


def mbarrier_inval(addr: Any, *, loc: Any = None, ip: Any = None) -> None:
    """``mbarrier.inval``: the barrier is no longer an mbarrier (using it again needs mbarrier_init)."""
    p, peer = _mbar(addr, "prims.mbarrier_inval")
    if peer is not None:
        raise TraceError("prims.mbarrier_inval: invalidate the barrier in its own CTA, not through mapa")
    from ...kernel.frontend.trace import current
    from ...kernel.instr.mbarrier import MbarrierOp, mbar_ref

    t = current("prims.mbarrier_inval")
    sh, base = mbar_ref(p, "prims.mbarrier_inval")
    t.emit(MbarrierOp("inval", sh, base, None, None, t.where()))


def mbarrier_arrive_expect_tx(addr: Any, txcount: Any, *, scope: Any = None, relaxed: Any = None, loc: Any = None,
                              ip: Any = None) -> None:
    """``mbarrier.arrive.expect_tx``: add ``txcount`` bytes to the phase, then arrive."""
    from ...kernel.instr.cluster import mbarrier_arrive_and_expect_tx

    p, peer = _mbar(addr, "prims.mbarrier_arrive_expect_tx")
    mbarrier_arrive_and_expect_tx(p, txcount, peer, relaxed=bool(relaxed), scope=_s(scope))


def mbarrier_expect_tx(addr: Any, txcount: Any, *, scope: Any = None, loc: Any = None, ip: Any = None) -> None:
    """``mbarrier.expect_tx``: add ``txcount`` bytes to the phase (no arrival)."""
    from ...kernel.instr.cluster import mbarrier_expect_tx as expect

    p, peer = _mbar(addr, "prims.mbarrier_expect_tx")
    expect(p, txcount, peer, scope=_s(scope))


def mbarrier_try_wait_parity(addr: Any, phase: Any, *, time_limit: Any = 10_000_000, scope: Any = None,
                             order: Any = None, loc: Any = None, ip: Any = None) -> Any:
    """``mbarrier.try_wait.parity``: whether the phase of parity ``phase`` has completed (a Boolean)."""
    from ...kernel.instr.mbarrier import mbarrier_try_wait

    p, peer = _mbar(addr, "prims.mbarrier_try_wait_parity")
    if peer is not None:
        raise TraceError("prims.mbarrier_try_wait_parity: a thread waits on its own CTA's barrier, not through mapa")
    return mbarrier_try_wait(p, phase)


def mbarrier_wait_parity(addr: Any, phase: Any, kind: Any, *, scope: Any = None, order: Any = None, loc: Any = None,
                         ip: Any = None) -> Any:
    """``mbarrier.{test,try}_wait.parity``: whether the phase of parity ``phase`` has completed."""
    MBarrierWait(_s(kind))
    return mbarrier_try_wait_parity(addr, phase)


def cp_async_mbarrier_arrive(addr: Any, *, noinc: Any = None, loc: Any = None, ip: Any = None) -> None:
    """``cp.async.mbarrier.arrive[.noinc].shared::cta.b64``: an arrival on this CTA's mbarrier once the
    thread's earlier cp.async copies have landed (kernel.instr.cpasync.CpAsyncMbarrierArrive)."""
    from ...kernel.instr.cpasync import cp_async_mbarrier_arrive as arrive

    p, peer = _mbar(addr, "prims.cp_async_mbarrier_arrive")
    if peer is not None:
        raise NotEmulatedError("prims.cp_async_mbarrier_arrive through a prims.mapa pointer",
                               "cp.async.mbarrier.arrive takes this CTA's barrier", where=user_line(2))
    arrive(p, noinc=bool(_s(noinc)))


# --------------------------------------------------------------------------- distributed shared memory

def mapa(addr: Any, cta_rank: Any, *, addrspace: int = 7, loc: Any = None, ip: Any = None) -> Any:
    """``mapa.shared::cluster``: the same shared-memory address in CTA ``cta_rank`` of the cluster.
    mbarrier ops on the result act on that CTA's barrier."""
    p, peer = cute_pointer(addr, "prims.mapa")
    if peer is not None:
        raise TraceError("prims.mapa: the address is already mapped to a CTA of the cluster")
    return Pointer(p, None, cta_rank)


# --------------------------------------------------------------------------- fences, reductions, cp.async

def fence_proxy(kind: Any, *, space: Any = None, loc: Any = None, ip: Any = None) -> None:
    """``fence.proxy.{async, async.shared::cta|cluster, async.global}``."""
    from ...kernel.instr.mbarrier import fence_proxy as fp

    k = Proxy(_s(kind))
    sp = None if space is None else SharedSpace(_s(space)).value
    table = {Proxy.ASYNC: "async", Proxy.ASYNC_SHARED: "async.shared", Proxy.ASYNC_GLOBAL: "async.global"}
    if k not in table:
        raise NotEmulatedError(f"prims.fence_proxy({k.name})", "cutelab's kernels have the async proxy fences",
                               where=user_line(2))
    fp(table[k], space=sp)


def _tensormap_proxies(what: str, from_proxy: Any, to_proxy: Any) -> None:
    if from_proxy is not None and _s(from_proxy) != Proxy.GENERIC:
        raise ValueError(f'{what}: from_proxy must be "generic", got {from_proxy!r}')
    if to_proxy is not None and _s(to_proxy) != Proxy.TENSORMAP:
        raise ValueError(f'{what}: to_proxy must be "tensormap", got {to_proxy!r}')


def fence_proxy_release(scope: Any, *, from_proxy: Any = None, to_proxy: Any = None, loc: Any = None,
                        ip: Any = None) -> None:
    """``fence.proxy.tensormap::generic.release.{scope}``: publish descriptor edits made through the generic
    proxy (kernel/instr/tensormap.py's fence; no CPU effect)."""
    from ...kernel.frontend.trace import current
    from ...kernel.instr.tensormap import TensorMapFenceOp

    what = "prims.fence_proxy_release"
    _tensormap_proxies(what, from_proxy, to_proxy)
    t = current(what)
    t.emit(TensorMapFenceOp("release", where=t.where(), scope=MemScope(_s(scope)).value))


def fence_proxy_acquire(scope: Any, addr: Any, size: Any, *, from_proxy: Any = None, to_proxy: Any = None,
                        loc: Any = None, ip: Any = None) -> None:
    """``fence.proxy.tensormap::generic.acquire.{scope} [addr], 128``: acquire the descriptor at ``addr``
    before a TMA reads it (no CPU effect)."""
    from ...kernel.frontend.trace import current
    from ...kernel.instr.tensormap import TensorMapFenceOp, desc_loc

    what = "prims.fence_proxy_acquire"
    if isinstance(_s(size), int) and _s(size) != 128:
        raise ValueError(f"fence.proxy.acquire: the only supported size is 128 bytes, got {_s(size)}")
    _tensormap_proxies(what, from_proxy, to_proxy)
    p, peer = cute_pointer(addr, what)
    if peer is not None:
        raise TraceError(f"{what}: the descriptor is in global memory, not a prims.mapa pointer")
    t = current(what)
    t.emit(TensorMapFenceOp("acquire", desc_loc(p, what), where=t.where(), scope=MemScope(_s(scope)).value))


def tensormap_replace(field: Any, addr: Any, *, new_value: Any = None, ord: Any = None, new_value_attr: Any = None,
                      keep_oob_fetch_window: bool = False, loc: Any = None, ip: Any = None) -> None:
    """``tensormap.replace.tile.{field}`` of the descriptor in memory at ``addr``: its ``global_address``,
    the extent of dimension ``ord`` (``global_dim``) or the byte stride of dimension ``ord + 1``
    (``global_stride``) (kernel/instr/tensormap_fields.py). The other fields are refused by name."""
    from ...kernel.instr.tensormap_fields import FIELDS, tensormap_replace as replace
    from .enums import TensormapField

    what = "prims.tensormap_replace"
    f = TensormapField(_s(field))
    if f.value not in FIELDS:
        raise NotEmulatedError(f"cutlass.experimental.primitives.tensormap_replace({f.name})",
                               f"cutelab replaces {', '.join(FIELDS)} of a descriptor in memory", where=user_line(2))
    if f.value == "global_address":
        if ord is not None:
            raise ValueError(f"tensormap.replace: field '{f.value}' does not accept the 'ord' parameter")
    else:
        if ord is None:
            raise ValueError(f"tensormap.replace: field '{f.value}' requires the 'ord' (dimension ordinal) parameter")
        if isinstance(ord, bool) or not isinstance(ord, int):
            raise TypeError(f"tensormap.replace: ord must be a Python int literal (PTX immediate), got "
                            f"{type(ord).__name__}")
        top = 4 if f.value == "global_dim" else 3
        if not 0 <= ord <= top:
            raise ValueError(f"tensormap.replace: ord of {f.value} must be in [0, {top}], got {ord}")
    if new_value_attr is not None:
        raise ValueError(f"tensormap.replace: field '{f.value}' is integer-valued; pass 'new_value', not "
                         f"'new_value_attr'")
    if new_value is None:
        raise ValueError(f"tensormap.replace: field '{f.value}' requires 'new_value'")
    p, peer = cute_pointer(addr, what)
    if peer is not None:
        raise TraceError(f"{what}: the descriptor is in this CTA's or global memory, not a prims.mapa pointer")
    replace(p, f.value, ord, new_value, not keep_oob_fetch_window, what)


def fence_acq_rel(scope: Any, *, loc: Any = None, ip: Any = None) -> None:
    """``fence.acq_rel.{cta,cluster,gpu,sys}``."""
    from ...kernel.instr import atomics

    getattr(atomics, f"fence_acq_rel_{_s(scope)}")()


_RED_OPS = {"add": "add", "and": "and", "or": "or", "xor": "xor", "min": "min", "max": "max"}


def red(op: Any, type_: Any, a: Any, b: Any, *, mem_order: Any = None, mem_scope: Any = None,
        shared_space: Any = None, cache_hint: Any = None, loc: Any = None, ip: Any = None) -> None:
    """``red.{op}.{type}``: ``*a = op(*a, b)`` in global memory, this CTA's shared memory or (through
    a ``mapa`` pointer) another CTA's, with no result; ``type`` must match the pointer's element type."""
    from ...kernel.instr.atomics import red as _red

    o = ReductionOp(_s(op)).value
    ty = ReductionType(_s(type_)).value
    if o not in _RED_OPS or cache_hint is not None or shared_space is not None:
        raise NotEmulatedError(f"prims.red({o}, {ty})", "cutelab's red takes add/and/or/xor/min/max on global "
                               "or shared memory without a cache hint", where=user_line(2))
    from ...kernel.instr.atomics import dsmem_red

    p, peer = cute_pointer(a, "prims.red")
    if ty.startswith("u") and o in ("min", "max"):
        o = "u" + o
    if peer is not None:  # a prims.mapa pointer: red.shared::cluster into that CTA's shared memory
        dsmem_red(p, peer, b, op=o, dtype=ty, sem=_s(mem_order), scope=_s(mem_scope), what="prims.red")
        return
    _red(p, b, op=o, dtype=ty, sem=_s(mem_order), scope=_s(mem_scope))


def cp_async_shared_global(dst: Any, src: Any, size: int, modifier: Any, *, cp_size: Any = None, loc: Any = None,
                           ip: Any = None) -> None:
    """``cp.async.{ca,cg}.shared.global [dst], [src], size``: ``size`` (4, 8 or 16) bytes, as a
    cp.async copy atom of cutelab's kernels."""
    import cutelab as cute
    from ...layout import make_layout
    from ...kernel.instr.cpasync import cp_async_copy
    from ...nvgpu.cpasync import CopyG2SOp, LoadCacheMode
    from ...tensor import Tensor

    m = _s(modifier)
    if cp_size is not None:
        raise NotEmulatedError("prims.cp_async_shared_global(cp_size=...)", "the zero-filling source size is not "
                               "supported", where=user_line(2))
    if m not in ("ca", "cg"):
        raise NotEmulatedError(f"prims.cp_async_shared_global(modifier={m!r})", "cp.async has .ca and .cg",
                               where=user_line(2))
    d, dpeer = cute_pointer(dst, "prims.cp_async_shared_global")
    s, _ = cute_pointer(src, "prims.cp_async_shared_global")
    dt = d.element_type
    n = int(size) * 8 // dt.width
    atom = cute.make_copy_atom(CopyG2SOp(LoadCacheMode.GLOBAL if m == "cg" else LoadCacheMode.ALWAYS), dt,
                               num_bits_per_copy=int(size) * 8)
    cp_async_copy(atom, Tensor(s.engine, make_layout(n), s.offset), Tensor(d.engine, make_layout(n), d.offset),
                  raw=True)


def cp_async_commit_group(*, loc: Any = None, ip: Any = None) -> None:
    from ...kernel.instr.cpasync import cp_async_commit_group as commit

    commit()


def cp_async_wait_group(n: Any = 0, *, loc: Any = None, ip: Any = None) -> None:
    from ...kernel.instr.cpasync import cp_async_wait_group as wait

    wait(n)


# --------------------------------------------------------------------------- TMA through tensor maps

def _tensor_map(desc: Any, what: str) -> Any:
    from .tensor_map import TensorMap, TensorMapPointer

    if isinstance(desc, TensorMapPointer):
        return desc.tmap
    if isinstance(desc, TensorMap):
        return desc
    raise TraceError(f"{what}: the descriptor must be a cutlass.experimental.cuda.TensorMap's get_ptr(), got "
                     f"{type(desc).__name__}")


def _in_memory(desc: Any) -> bool:
    """Whether a TMA primitive's descriptor is a pointer to 128 bytes of memory (a workspace the kernel
    copied a descriptor into: kernel/instr/tensormap.py reads it when the copy runs), not a tensor map."""
    from ...tensor import Pointer as CPointer

    return isinstance(desc, (Pointer, CPointer))


def _tile_mode(what: str, mode: Any, im2col: Any = None, l2_cache_hint: Any = None) -> None:
    if (mode is not None and str(_s(mode)).lower() != "tile") or im2col:
        raise NotEmulatedError(f"{what}(mode={_s(mode)})", "cutelab's TMA copies tiles (no im2col or gather4)",
                               where=user_line(3))


def cp_async_bulk_tensor_shared_cta_global(dst_mem: Any, tma_descriptor: Any, coordinates: Any, mbar: Any,
                                           im2col_offsets: Any = None, *, l2_cache_hint: Any = None,
                                           mode: Any = None, loc: Any = None, ip: Any = None) -> None:
    """``cp.async.bulk.tensor.Nd.shared::cta.global.mbarrier::complete_tx::bytes``: the tensor map's box at
    ``coordinates`` (innermost first) into this CTA's shared memory, completing its bytes on ``mbar``
    (kernel/instr/tma_map.py)."""
    from ...kernel.instr.tma_map import map_load

    what = "prims.cp_async_bulk_tensor_shared_cta_global"
    _tile_mode(what, mode, im2col_offsets)
    d, dpeer = cute_pointer(dst_mem, what)
    b, bpeer = cute_pointer(mbar, what)
    if dpeer is not None or bpeer is not None:
        raise TraceError(f"{what}: the destination and the mbarrier are this CTA's, not prims.mapa pointers")
    if _in_memory(tma_descriptor):  # a descriptor the kernel keeps in memory (and may have patched)
        from ...kernel.instr.tensormap import nvvm_tma_load

        nvvm_tma_load(d, cute_pointer(tma_descriptor, what)[0], tuple(coordinates), b)
        return
    map_load(_tensor_map(tma_descriptor, what), d, tuple(coordinates), b, what)


def cp_async_bulk_tensor_shared_cluster_global(dst_mem: Any, tma_descriptor: Any, coordinates: Any, mbar: Any,
                                               im2col_offsets: Any = None, *, multicast_mask: Any = None,
                                               l2_cache_hint: Any = None, mode: Any = None, group: Any = None,
                                               loc: Any = None, ip: Any = None) -> None:
    """``cp.async.bulk.tensor.Nd.shared::cluster.global...``: the box into this CTA's shared memory, or with
    ``multicast_mask`` into every CTA of the mask (at the same offset, completing on each one's barrier);
    ``group=CTAGroup.CTA_2`` (SM100's ``.cta_group::2``) counts the bytes at each receiving pair's leader."""
    from ...kernel.instr.tma_map import map_load

    what = "prims.cp_async_bulk_tensor_shared_cluster_global"
    _tile_mode(what, mode, im2col_offsets)
    g = None if group is None else str(_s(group)).lower()
    if g not in (None, "cta_1", "cta_2"):
        raise TraceError(f"{what}: group must be CTAGroup.CTA_1 or CTA_2, got {group!r}")
    tmap = _tensor_map(tma_descriptor, what)
    d, dpeer = cute_pointer(dst_mem, what)
    b, bpeer = cute_pointer(mbar, what)
    if dpeer is not None or bpeer is not None:
        raise TraceError(f"{what}: the destination and the mbarrier are this CTA's (the multicast reaches the "
                         f"others at the same offsets), not prims.mapa pointers")
    map_load(tmap, d, tuple(coordinates), b, what, mcast=multicast_mask, pair=g == "cta_2")


def cp_async_bulk_tensor_global_shared_cta(tma_descriptor: Any, src_mem: Any, coordinates: Any, *,
                                           l2_cache_hint: Any = None, mode: Any = None, loc: Any = None,
                                           ip: Any = None) -> None:
    """``cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group``: this CTA's shared memory into the tensor
    map's box at ``coordinates`` (kernel/instr/tma_map.py); drain it with the bulk groups."""
    from ...kernel.instr.tma_map import map_store

    what = "prims.cp_async_bulk_tensor_global_shared_cta"
    _tile_mode(what, mode)
    tmap = _tensor_map(tma_descriptor, what)
    s, speer = cute_pointer(src_mem, what)
    if speer is not None:
        raise TraceError(f"{what}: the source is this CTA's shared memory, not a prims.mapa pointer")
    map_store(tmap, s, tuple(coordinates), what)


def cp_async_bulk_commit_group(*, loc: Any = None, ip: Any = None) -> None:
    """``cp.async.bulk.commit_group``."""
    from ...kernel.instr.tma_store import cp_async_bulk_commit_group as commit

    commit()


def cp_async_bulk_wait_group(group: Any = 0, *, read: Any = None, loc: Any = None, ip: Any = None) -> None:
    """``cp.async.bulk.wait_group[.read] group``."""
    from ...kernel.instr.tma_store import cp_async_bulk_wait_group as wait

    wait(_static_int(group, "prims.cp_async_bulk_wait_group", "group"), read=bool(_s(read)))


# --------------------------------------------------------------------------- bulk copies without a tensor map

def cp_async_bulk_shared_cluster_global(dst_mem: Any, src_mem: Any, mbar: Any, size: Any, *,
                                        multicast_mask: Any = None, l2_cache_hint: Any = None, loc: Any = None,
                                        ip: Any = None) -> None:
    """``cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]``:
    ``size`` bytes of global memory into this CTA's shared memory, completing on ``mbar``
    (kernel/instr/bulk_copy.py's BulkCopyG2SOp, the op of ``cpasync.CopyBulkG2SOp``). The L2 cache hint
    changes no result."""
    from ...kernel.instr.bulk_copy import bulk_load

    what = "prims.cp_async_bulk_shared_cluster_global"
    if multicast_mask is not None:
        raise NotEmulatedError(f"{what}(multicast_mask=...)", "cutelab's raw bulk copy delivers to the issuing CTA "
                               "only (the tensor-map form multicasts)", where=user_line(2))
    d, dpeer = cute_pointer(dst_mem, what)
    b, bpeer = cute_pointer(mbar, what)
    if dpeer is not None or bpeer is not None:
        raise NotEmulatedError(f"{what} into another CTA's shared memory (a prims.mapa pointer)",
                               "cutelab's raw bulk copy delivers to the issuing CTA", where=user_line(2))
    g, _ = cute_pointer(src_mem, what)
    bulk_load(g, d, b, _static_int(size, what, "size"), what)


def cp_async_bulk_global_shared_cta(dst_mem: Any, src_mem: Any, size: Any, *, l2_cache_hint: Any = None,
                                    byte_mask: Any = None, loc: Any = None, ip: Any = None) -> None:
    """``cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size``: ``size`` bytes of this CTA's
    shared memory into global memory, in a bulk group (kernel/instr/bulk_copy.py's BulkCopyS2GOp); drain it
    with ``cp_async_bulk_commit_group`` / ``cp_async_bulk_wait_group``."""
    from ...kernel.instr.bulk_copy import bulk_store

    what = "prims.cp_async_bulk_global_shared_cta"
    if byte_mask is not None:
        raise NotEmulatedError(f"{what}(byte_mask=...)", "cutelab's bulk store copies every byte (no .cp_mask)",
                               where=user_line(2))
    s, speer = cute_pointer(src_mem, what)
    if speer is not None:
        raise TraceError(f"{what}: the source is this CTA's shared memory, not a prims.mapa pointer")
    g, _ = cute_pointer(dst_mem, what)
    bulk_store(g, s, _static_int(size, what, "size"), what)


def prefetch_tensormap(tma_descriptor: Any, *, loc: Any = None, ip: Any = None) -> None:
    """``prefetch.tensormap``: a hint that brings the descriptor into the cache; it changes no result, and
    cutelab emits nothing for it (the descriptor is checked to be a tensor map)."""
    _tensor_map(tma_descriptor, "prims.prefetch_tensormap")


def cp_async_bulk_prefetch(src_mem: Any, size: Any, *, l2_cache_hint: Any = None, loc: Any = None,
                           ip: Any = None) -> None:
    """``cp.async.bulk.prefetch.L2.global [src], size``: a best-effort hint that pulls global bytes into
    L2; it changes no result, so cutelab checks its operands (a global pointer, a size that is a positive
    multiple of 16) and emits nothing."""
    what = "prims.cp_async_bulk_prefetch"
    p, _ = cute_pointer(src_mem, what)
    if str(p.memspace) not in ("gmem", "generic"):
        raise TraceError(f"{what}: prefetches global memory, got a {p.memspace} pointer")
    n = _static_int(size, what, "size")
    if n <= 0 or n % 16:
        raise TraceError(f"{what}: size must be a positive multiple of 16 bytes, got {n}")


def setmaxregister(reg_count: int, action: Any, *, loc: Any = None, ip: Any = None) -> None:
    """``setmaxnreg.{inc,dec}.sync.aligned.u32``."""
    from ...kernel.arch import setmaxregister_decrease, setmaxregister_increase

    a = _s(action)
    (setmaxregister_increase if a == "increase" else setmaxregister_decrease)(reg_count)


def exit(*, loc: Any = None, ip: Any = None) -> None:  # noqa: A001 - the DSL's name
    """PTX ``exit``: the threads that run it stop running the kernel (kernel/instr/thread_exit.py); CTA
    barriers then wait only for the threads left, mbarriers are not completed for the exited ones."""
    from ...kernel.instr.thread_exit import exit_thread

    exit_thread(user_line(2))


def print_runtime(fmt: str, *args: Any, loc: Any = None, ip: Any = None) -> None:
    """Print at run time (C's printf: no newline is added), inside a kernel by every thread and on the
    host once: ``cute.printf(fmt, *args, end="")`` (``%d``-style and ``{}`` placeholders)."""
    from ...kernel.frontend.printing import printf

    printf(fmt, *args, end="")


# --------------------------------------------------------------------------- the namespace

#: every wrapper name of CuTe DSL 4.8.1's nvvm_wrapper, descriptors and hybrid_ops; the ones not
#: defined above raise NotEmulatedError naming themselves
DSL_NAMES = """
add_packed_bf16x2_f32x2_f32x2 add_packed_f16x2_f32x2_f32x2 add_packed_f32x2 add_packed_f32x2_bf16x2_f32x2
add_packed_f32x2_f16x2_f32x2 atomicrmw bar_warp_sync barrier_cluster_arrive barrier_cluster_arrive_aligned
barrier_cluster_arrive_relaxed barrier_cluster_arrive_relaxed_aligned barrier_cluster_wait barrier_cluster_wait_aligned
barrier_cta_arrive barrier_cta_arrive_aligned barrier_cta_red barrier_cta_red_aligned barrier_cta_sync
barrier_cta_sync_aligned breakpoint cluster_ctarank clusterlaunchcontrol_query_cancel clusterlaunchcontrol_try_cancel
convert convert_and_pack_integer convert_bf16x2_to_s2f6x2 convert_f32x2_to_s2f6x2 convert_f8x2_to_bf16x2
convert_float_to_integer convert_float_to_tf32 convert_s2f6x2_to_bf16x2 cp_async_bulk_commit_group
cp_async_bulk_global_shared_cta cp_async_bulk_prefetch cp_async_bulk_shared_cluster_global
cp_async_bulk_shared_cluster_shared_cta cp_async_bulk_tensor_global_shared_cta cp_async_bulk_tensor_prefetch
cp_async_bulk_tensor_reduce cp_async_bulk_tensor_shared_cluster_global cp_async_bulk_tensor_shared_cta_global
cp_async_bulk_wait_group cp_async_commit_group cp_async_mbarrier_arrive cp_async_shared_global cp_async_wait_group
cp_reduce_async_bulk_global_shared_cta cvta_to cvt_e2m1_word_to_e4m3_words cvt_e2m1x2_byte_to_bf16x2
cvt_e4m3x2_byte_to_bf16x2 cvt_e4m3x2_to_bf16x2 cvt_e4m3x2_word_to_bf16x2 cvt_f32x2_to_f4x2 cvt_f32x2_to_f8x2
cvt_packfloat cvt_packfloat_f32 cvt_packfloat_f32_sf cvt_packfloat_sf dot_accumulate_2way dot_accumulate_4way
elect_sync exit fabs fence_acq_rel fence_mbarrier_init fence_proxy fence_proxy_acquire
fence_proxy_async_acquire_sync_restrict fence_proxy_async_release_sync_restrict fence_proxy_release
fence_proxy_sync_restrict fence_sc_cluster fence_sync_restrict fma_packed_f32x2 fma_packed_f32x2_bf16x2_f32x2_f32x2
fma_packed_f32x2_f16x2_f32x2_f32x2 fmin griddepcontrol inline_ptx inline_ptx_hl ptx_add_comment ldmatrix load_ext
mapa match_sync mbarrier_arrive mbarrier_arrive_drop mbarrier_arrive_drop_expect_tx mbarrier_arrive_drop_nocomplete
mbarrier_arrive_expect_tx mbarrier_arrive_nocomplete mbarrier_complete_tx mbarrier_expect_tx mbarrier_init
mbarrier_inval mbarrier_test_wait mbarrier_try_wait mbarrier_try_wait_parity mbarrier_try_wait_timelimit
mbarrier_wait mbarrier_wait_parity memory_barrier mma_block_scale mma_smem_desc mma_sp_block_scale mma_sp_sync
mma_sync mov_b32 mul mul_bf16x2 mul_packed_bf16x2_bf16x2_f16x2 mul_packed_bf16x2_f32x2_f32x2
mul_packed_f16x2_f16x2_bf16x2 mul_packed_f16x2_f32x2_f32x2 mul_packed_f32x2 nanosleep pmevent prefetch_l1
prefetch_l2 prefetch_tensormap prefetchu prmt read_sreg_hw red redux_sync setmaxregister shfl_sync st_bulk stmatrix
store_ext sub_packed_bf16x2_f32x2_f32x2 sub_packed_f16x2_f32x2_f32x2 sub_packed_f32x2 sub_packed_f32x2_bf16x2_f32x2
sub_packed_f32x2_f16x2_f32x2 tcgen05_alloc tcgen05_commit tcgen05_cp tcgen05_dealloc tcgen05_fence tcgen05_ld
tcgen05_ld_red tcgen05_mma tcgen05_mma_block_scale tcgen05_mma_sp tcgen05_mma_sp_block_scale tcgen05_mma_ws
tcgen05_mma_ws_sp tcgen05_relinquish_alloc_permit tcgen05_shift tcgen05_st tcgen05_wait tensormap_cp_fenceproxy
tensormap_replace trace_mark vote_sync wgmma_commit_group_sync_aligned wgmma_fence_aligned wgmma_mma_async
wgmma_wait_group_sync_aligned wmma_load wmma_mma wmma_store make_tmem_ptr make_tmem_ptr_from_warp_row_col
print_runtime
""".split()

#: names of the DSL's module that are classes or enums cutelab does not define (descriptors, tcgen05 enums):
#: using one raises NotEmulatedError
DSL_TYPES = """
Tcgen05SmemDesc Tcgen05SmemSwizzle Tcgen05InstrDesc Tcgen05MxInstrDesc Tcgen05MxOmmaInstrDesc Tcgen05MMAKind
Tcgen05MMACollectorOp Tcgen05MMABlockScale Tcgen05Wait Tcgen05Fence Tcgen05CpSrcFormat Tcgen05CpShape
Tcgen05CpMulticast Tcgen05LdStShape TmemAddr S2TCopyMode MMABlockScaleKind WgmmaSmemDesc
""".split()


def _refused_type(name: str) -> Any:
    from ..where import NotEmulatedAttributeError

    class _Missing:
        def __getattr__(self, attr: str) -> Any:
            raise NotEmulatedAttributeError(f"cutlass.experimental.primitives.{name}.{attr}",
                                            "the tcgen05/wgmma descriptors are not in cutelab's primitives yet",
                                            where=user_line(2))

        def __call__(self, *a: Any, **k: Any) -> Any:
            raise NotEmulatedError(f"cutlass.experimental.primitives.{name}",
                                   "the tcgen05/wgmma descriptors are not in cutelab's primitives yet",
                                   where=user_line(2))

    return _Missing()


def namespace() -> Dict[str, Any]:
    """The names of cutlass.experimental.primitives: the wrappers above, the enums, and a refusing
    stand-in for each DSL name cutelab does not provide."""
    g = globals()
    out: Dict[str, Any] = {n: g[n] for n in _enum_names}
    out.update({"Array": Array, "Pointer": Pointer, "FULL_MASK": FULL_MASK})
    for n in DSL_NAMES:
        f = g.get(n)
        out[n] = f if callable(f) and getattr(f, "__module__", None) == __name__ else \
            refuse(f"cutlass.experimental.primitives.{n}", "not in cutelab's primitives yet")
    for n in DSL_TYPES:
        out[n] = _refused_type(n)
    return out
