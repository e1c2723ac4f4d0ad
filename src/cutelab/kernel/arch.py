"""``cute.arch``: the thread and block indices of a traced kernel.

Indices are symbolic integers (``?`` when printed); dimensions (``block_dim``, ``grid_dim``, the
cluster's) are runtime integers as in CuTe DSL (``ir.nodes.DimVar``: ``blockDim``/``gridDim`` and the
cluster special registers in CUDA, the launch's values in the interpreter).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import TraceError
from .ir.nodes import Op
from .frontend.threads import elect_one, lane_idx, sync_threads, warp_idx  # noqa: F401  (cute.arch's names)
from .frontend.trace import block_dim, block_idx, grid_dim, thread_idx

from .instr.cpasync import cp_async_commit_group, cp_async_wait_group  # noqa: E402  (cp.async groups)
from .instr.tensormap import nvvm_prefetch as prefetch  # noqa: E402,F401  (NVVM's prefetch of a TMA descriptor)

__all__ = ["thread_idx", "block_idx", "block_dim", "grid_dim", "lane_idx", "warp_idx", "sync_threads", "barrier",
           "barrier_arrive",
           "cp_async_commit_group", "cp_async_wait_group", "dynamic_smem_size"]


class DynamicSmemSize(Op):
    """``cute.arch.dynamic_smem_size()``: the bytes of shared memory the launch gives the block. CuTe
    DSL allocates every ``SmemAllocator`` allocation in dynamic shared memory and launches with their
    sum (or the launch's ``smem``); cutelab's shared arrays are the same allocations (static ones up
    to 48 KiB), so both back ends write their total, known once the kernel is traced."""

    __slots__ = ("dst", "box")

    def __init__(self, dst: Any, box: list):
        self.dst, self.box = dst, box  # box[0]: the bytes the kernel's SmemAllocators hand out

    def __repr__(self) -> str:
        return f"{self.dst.name} = dynamic_smem_size()"

    def total(self, ir: Any) -> int:
        from .ir.nodes import dynamic_smem_layout

        static = sum(sh.bytes for sh in ir.shared if not sh.dynamic)
        return int(max(self.box[0], static + dynamic_smem_layout(ir.shared)[1]))

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        import numpy as np

        cur = b.regs.get(self.dst.id)
        col = np.full(b.n, self.total(b.ir), dtype=self.dst.dtype.storage)
        if cur is None or mask is None:
            b.regs[self.dst.id] = col[:, None]
        else:
            cur[mask, 0] = col[mask]

    def cuda(self, r: Any) -> None:
        r.declare(self.dst)
        r.emit(f"{r.reg(self.dst)}[0] = {self.total(r.ir)};")


def smem_box(t: Any) -> list:
    """The kernel's running total of SmemAllocator bytes (a one-element list the tracer keeps)."""
    box = getattr(t, "_smem_box", None)
    if box is None:
        box = t._smem_box = [0]
    return box


def dynamic_smem_size(*, loc=None, ip=None):
    """The launch's shared memory in bytes (an Int32 run-time value; PTX ``%dynamic_smem_size`` in
    CuTe DSL, where all SmemAllocator memory is dynamic)."""
    from ..numeric import Int32
    from .frontend.trace import TraceValue, current

    t = current("cute.arch.dynamic_smem_size()")
    dst = t.new_reg(Int32, 1)
    t.emit(DynamicSmemSize(dst, smem_box(t)))
    return TraceValue([(dst, 0)], (), Int32)


def barrier(*, barrier_id: Any = None, number_of_threads: Any = None, loc=None, ip=None) -> None:
    """``cute.arch.barrier``: ``bar.sync id[, n]``; without an id (or id 0 and no count) the block's
    barrier (``__syncthreads()``); with an id, the named barrier for ``number_of_threads`` threads
    (default: the whole block)."""
    from .ir.symbolic import is_sym

    barrier_id = _id_index(barrier_id)
    if barrier_id is None or (not is_sym(barrier_id) and barrier_id == 0 and number_of_threads is None):
        return sync_threads()
    from .instr.named_barrier import check, named_barrier  # cutlass.pipeline.NamedBarrier's

    if number_of_threads is None:
        from .frontend.trace import current

        bx, by, bz = current("cute.arch.barrier()").block  # the traced launch's block
        number_of_threads = bx * by * bz
    _named(barrier_id, number_of_threads, True, "arrive_and_wait")


def _id_index(barrier_id: Any) -> Any:
    """A barrier id given as a kernel value (an Int32 of the kernel, e.g. read from memory) as an index
    (a RegVar reading its register); other ids as they are."""
    from .frontend.trace import TraceValue

    return barrier_id.as_index() if isinstance(barrier_id, TraceValue) else barrier_id


def _named(barrier_id: Any, number_of_threads: Any, wait: bool, what: str) -> None:
    """A named barrier whose id is a static int (checked as NamedBarrier's) or an index expression of the
    kernel (one barrier per thread's id: instr/named_barrier.py)."""
    from .instr.named_barrier import check, named_barrier
    from .ir.symbolic import is_sym

    barrier_id = _id_index(barrier_id)
    if is_sym(barrier_id):
        check(1, int(number_of_threads))
        named_barrier(barrier_id, int(number_of_threads), wait, what)
        return
    check(int(barrier_id), int(number_of_threads))
    named_barrier(int(barrier_id), int(number_of_threads), wait, what)


def barrier_arrive(*, barrier_id: Any = None, number_of_threads: Any = None, aligned: bool = True, loc=None,
                   ip=None) -> None:
    """``cute.arch.barrier_arrive``: ``bar.arrive id, n`` (``barrier.cta.arrive`` when not aligned, the same
    arrival): the calling threads count towards named barrier ``barrier_id`` (default 0; a static int or
    an index expression) for
    ``number_of_threads`` threads, without waiting (a producer's half of a producer/consumer pair)."""
    if number_of_threads is None:
        raise ValueError("cute.arch.barrier_arrive: number_of_threads is required (the DSL's rule)")
    _named(0 if barrier_id is None else barrier_id, number_of_threads, False, "arrive")  # a static or a runtime id


# --------------------------------------------------------------------------- SM90 (issue 10)
# mbarriers, fences, elect_one, make_warp_uniform, setmaxregister: cute.arch names for Hopper kernels.

from .instr.mbarrier import (fence_proxy, fence_view_async_shared, mbarrier_init,  # noqa: E402
                       mbarrier_init_fence, mbarrier_try_wait, mbarrier_wait)
from .instr.cluster import (mbarrier_arrive, mbarrier_arrive_and_expect_tx,  # noqa: E402  (these take a peer CTA's rank)
                       mbarrier_expect_tx)


def make_warp_uniform(value, *, loc=None, ip=None):
    """The value, known to be the same in all threads of a warp (a hint; no effect here)."""
    return value


def setmaxregister_increase(reg_count: int, *, loc=None, ip=None) -> None:
    """``setmaxnreg.inc.sync.aligned.u32``: raise the warpgroup's register budget (warp-specialised
    kernels give consumers more registers than producers); no effect on the CPU."""
    from .instr.wgmma import SetMaxNRegOp
    from .frontend.trace import current

    _check_regs(reg_count, "setmaxregister_increase")
    current("cute.arch.setmaxregister_increase").emit(SetMaxNRegOp("inc", reg_count))


def setmaxregister_decrease(reg_count: int, *, loc=None, ip=None) -> None:
    """``setmaxnreg.dec.sync.aligned.u32``: lower the warpgroup's register budget (see setmaxregister_increase)."""
    from .instr.wgmma import SetMaxNRegOp
    from .frontend.trace import current

    _check_regs(reg_count, "setmaxregister_decrease")
    current("cute.arch.setmaxregister_decrease").emit(SetMaxNRegOp("dec", reg_count))


# thread-block clusters (launch(cluster=...)): indices, the cluster barrier, distributed shared memory
from .instr.cluster import (block_idx_in_cluster, block_in_cluster_dim, block_in_cluster_idx,  # noqa: E402
                             cluster_arrive, cluster_arrive_relaxed, cluster_dim, cluster_idx, cluster_size,
                             cluster_wait, map_dsmem_ptr, store_async_dsmem)


def _check_regs(n, what) -> None:
    if not isinstance(n, int) or not 24 <= n <= 256 or n % 8:
        raise TraceError(f"cute.arch.{what}({n!r}): the register count must be a multiple of 8 in [24, 256]")


__all__ += ["mbarrier_init", "mbarrier_init_fence", "mbarrier_arrive", "mbarrier_expect_tx",
            "mbarrier_arrive_and_expect_tx", "mbarrier_wait", "mbarrier_try_wait", "fence_proxy",
            "fence_view_async_shared", "elect_one", "make_warp_uniform", "setmaxregister_increase",
            "setmaxregister_decrease", "cluster_idx", "cluster_dim", "block_in_cluster_idx", "block_in_cluster_dim",
            "block_idx_in_cluster", "cluster_arrive", "cluster_arrive_relaxed", "cluster_wait", "cluster_size",
            "map_dsmem_ptr", "store_async_dsmem"]


# --------------------------------------------------------------------------- warp shuffles, float helpers

_SHFL = {"bfly": ("__shfl_xor_sync", 31), "down": ("__shfl_down_sync", 31), "up": ("__shfl_up_sync", 0),
         "idx": ("__shfl_sync", 31)}


class ShuffleOp(Op):
    """``cute.arch.shuffle_sync[_bfly|_up|_down]``: each lane of a warp reads a register of another
    lane (``shfl.sync``; all 32 lanes take part). ``width`` (a power of two, 32 by default) parts
    the warp into segments of that many lanes, as ``mask_and_clamp = ((32 - width) << 8) | clamp``
    does: a lane reads within its segment. A lane whose source lane lies outside its segment (down
    past its last lane, up below its first, or past the block's last thread) keeps its own value,
    as the instruction does. ``offset`` is an int in [0, 32), or a runtime one per lane (a register
    element or an index expression: quack's quad permutations shuffle from ``lane_idx() % 4``-dependent
    lanes), of which the instruction takes the low 5 bits (PTX's ``bval[4:0]``)."""

    __slots__ = ("dst", "src", "mode", "offset", "width")

    def __init__(self, dst: Any, src: Any, mode: str, offset: Any, width: int = 32):
        self.dst, self.src, self.mode, self.offset, self.width = dst, src, mode, offset, width

    def __repr__(self) -> str:
        w = f", width={self.width}" if self.width != 32 else ""
        return f"{self.dst.name} = shfl.{self.mode}({self.src}, {self.offset}{w})"

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        import numpy as np

        dt = self.dst.dtype
        col = b.column(self.src, dt, real=False)
        nt = int(np.prod(b.ir.block))
        row = np.arange(b.n, dtype=np.int64)
        t = row % nt
        lane = t % 32
        first = lane - lane % self.width  # PTX's minLane (lane & segmask)
        last = first + self.width - 1  # its maxLane (clamp 31), the bound up's source stays within too
        off: Any = self.offset
        if not isinstance(off, int):  # a runtime offset, per lane: its low 5 bits
            from .instr.tma import coord_values

            off = coord_values(b, off) & 31
        j = {"bfly": lane ^ off, "down": lane + off, "up": lane - off,
             "idx": first + off % self.width}[self.mode]
        src_t = t - lane + j
        ok = ((j >= first) | (self.mode == "bfly")) & (j <= last) & (src_t < nt)  # PTX: bfly may read below
        got = np.where(ok, col[np.where(ok, row - t + src_t, row)], col)
        cur = b.regs.get(self.dst.id)
        if cur is None or mask is None:
            out = np.empty((b.n, 1), dtype=dt.storage) if cur is None else cur
            out[:, 0] = got
            b.regs[self.dst.id] = out
        else:
            cur[mask, 0] = got[mask]

    def cuda(self, r: Any) -> None:
        r.declare(self.dst)
        fn = _SHFL[self.mode][0]
        w = f", {self.width}" if self.width != 32 else ""
        if isinstance(self.offset, int):
            off = str(self.offset)
        else:  # a runtime offset: its low 5 bits, as shfl.sync takes them
            from .instr.tma import coord_code

            off = f"(({coord_code(r, self.offset)}) & 31)"
        v = f"{fn}(0xffffffffu, {r.value(self.src, self.dst.dtype)}, {off}{w})"
        r.emit(f"{r.reg(self.dst)}[0] = {r.to_storage(v, self.dst.dtype)};")


def _shuffle_width(mode: str, mask_and_clamp: Any, what: str) -> int:
    """The segment width of a static mask_and_clamp, ((32 - width) << 8) | clamp with clamp 31 (0
    for up) and width a power of two; any other value is refused by name."""
    try:
        mac = int(mask_and_clamp)
    except Exception:
        raise TraceError(f"{what}: mask_and_clamp must be a compile-time int, got {mask_and_clamp!r}") from None
    clamp = _SHFL[mode][1]
    width = 32 - ((mac >> 8) & 0x1F)
    if mac >> 13 or mac & 0x1F != clamp or width & (width - 1):
        raise TraceError(f"{what}: mask_and_clamp={mask_and_clamp!r} is not supported; cutelab takes "
                         f"((32 - width) << 8) | {clamp} with width a power of two (segments of width lanes), as "
                         f"CUDA's {_SHFL[mode][0]}(mask, value, offset, width)")
    return width


def _shuffle(mode: str, value: Any, offset: Any, mask: Any, mask_and_clamp: Any) -> Any:
    from .frontend.trace import TraceValue, current, tracing
    from .ir.symbolic import is_sym

    what = f"cute.arch.shuffle_sync{'' if mode == 'idx' else '_' + mode}"
    if not tracing():
        raise TraceError(f"{what}: a warp shuffle runs inside a @cute.kernel")
    t = current(what)
    if int(mask) not in (-1, 0xFFFFFFFF):
        raise TraceError(f"kernel {t.name}: {what}: only the full-warp mask (-1) is supported, got {mask!r}")
    static = getattr(offset, "value", None)  # a static cutlass Int32(5)
    if isinstance(static, int) and not isinstance(static, bool):
        offset = static
    if isinstance(offset, bool):
        raise TraceError(f"kernel {t.name}: {what}: the offset must be an integer, got {offset!r}")
    if isinstance(offset, TraceValue):  # a runtime offset (per lane), as shfl.sync's b operand
        if len(offset.refs) != 1 or not offset.dtype.is_integer or offset.dtype.width > 32:
            raise TraceError(f"kernel {t.name}: {what}: the offset must be one integer of at most 32 bits, got "
                             f"{offset.dtype} x {len(offset.refs)}")
        from .instr.tma import coord_refs

        offset = coord_refs(t, (offset,), f"kernel {t.name}: {what}")[0]
    elif is_sym(offset):  # an index expression of the thread's indices (lane_idx() % 4, ...)
        pass
    elif not isinstance(offset, int) or hasattr(offset, "key"):
        raise TraceError(f"kernel {t.name}: {what}: the offset must be an int or a runtime integer, got {offset!r}")
    elif not 0 <= int(offset) < 32:
        raise TraceError(f"kernel {t.name}: {what}: the offset must lie in [0, 32), got {offset}")
    else:
        offset = int(offset)
    width = _shuffle_width(mode, mask_and_clamp, f"kernel {t.name}: {what}")
    if not isinstance(value, TraceValue):
        if isinstance(value, (int, float)):
            return value  # the same in every lane
        raise TraceError(f"kernel {t.name}: {what}: expected a scalar value, got {type(value).__name__}")
    if len(value.refs) != 1:
        raise TraceError(f"kernel {t.name}: {what}: shuffles one value (a 32-bit scalar), got {len(value.refs)}")
    if value.dtype.width > 32:
        raise TraceError(f"kernel {t.name}: {what}: shuffles 32-bit values, got {value.dtype}")
    t.check_refs(value.refs, what)
    dst = t.new_reg(value.dtype, 1)
    t.emit(ShuffleOp(dst, value.refs[0], mode, offset, width))
    return TraceValue([(dst, 0)], (), value.dtype)


def shuffle_sync(value, offset, mask=-1, mask_and_clamp=31, *, loc=None, ip=None):
    """The value of lane ``offset`` of the warp (``shfl.sync.idx``)."""
    return _shuffle("idx", value, offset, mask, mask_and_clamp)


def shuffle_sync_bfly(value, offset=1, mask=-1, mask_and_clamp=31, *, loc=None, ip=None):
    """The value of lane ``lane ^ offset`` (``shfl.sync.bfly``): butterfly reductions."""
    return _shuffle("bfly", value, offset, mask, mask_and_clamp)


def shuffle_sync_down(value, offset=1, mask=-1, mask_and_clamp=31, *, loc=None, ip=None):
    """The value of lane ``lane + offset``; lanes past 31 keep their own (``shfl.sync.down``)."""
    return _shuffle("down", value, offset, mask, mask_and_clamp)


def shuffle_sync_up(value, offset=1, mask=-1, mask_and_clamp=0, *, loc=None, ip=None):
    """The value of lane ``lane - offset``; lanes below 0 keep their own (``shfl.sync.up``)."""
    return _shuffle("up", value, offset, mask, mask_and_clamp)


class WarpSyncOp(Op):
    """``__syncwarp(mask)`` (cute.arch.sync_warp): the lanes of ``mask`` meet, and their earlier
    memory accesses are seen by each other after it. The interpreter runs a warp's lanes in
    lock-step (divergence inside a warp is a mask, cpu/warps.py), so on the CPU there is nothing
    to wait for."""

    __slots__ = ("mask",)

    def __init__(self, mask: int):
        self.mask = mask

    def __repr__(self) -> str:
        return f"syncwarp(0x{self.mask:08x})"

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        return None

    def cuda(self, r: Any) -> None:
        r.emit(f"__syncwarp(0x{self.mask:08x}u);")


def sync_warp(mask=-1, *, loc=None, ip=None):
    """Synchronize the lanes of ``mask`` (all 32 by default) of the warp (``__syncwarp``)."""
    from .frontend.trace import current, tracing

    what = "cute.arch.sync_warp"
    if not tracing():
        raise TraceError(f"{what}: a warp synchronization runs inside a @cute.kernel")
    t = current(what)
    if isinstance(mask, bool) or not isinstance(mask, int) or hasattr(mask, "key"):
        raise TraceError(f"kernel {t.name}: {what}: the mask must be a compile-time int, got {mask!r}")
    t.emit(WarpSyncOp(int(mask) & 0xFFFFFFFF))


def _float_binary(name: str, a: Any, b: Any) -> Any:
    """a name b for "max"/"min" (NaN-propagating, CuTe DSL's arith.maximumf) and "fmax"/"fmin"
    (NaN-ignoring, PTX max.f32), of kernel values or Python numbers."""
    from .frontend.trace import TraceValue

    if isinstance(a, TraceValue) or isinstance(b, TraceValue):
        x, y = (a, b) if isinstance(a, TraceValue) else (b, a)
        return x._binary(y, name)
    a, b = float(a), float(b)
    if name in ("fmax", "fmin"):
        return float(np.fmax(a, b) if name == "fmax" else np.fmin(a, b))
    return float(np.maximum(a, b) if name == "max" else np.minimum(a, b))


def _fminmax(what: str, a: Any, b: Any, abs: Any, nan: Any, ftz: Any) -> Any:
    if abs or ftz:
        raise TraceError(f"cute.arch.{what}(abs={abs!r}, ftz={ftz!r}): cutelab's kernel compiler has the plain and "
                         f"the nan=True forms only (no xorsign-abs, no flush to zero)")
    from ..numeric import Float32
    from .frontend.trace import TraceValue

    a, b = (v.to(Float32) if isinstance(v, TraceValue) else v for v in (a, b))  # CuTe DSL: Float32(a), Float32(b)
    return _float_binary(what.removeprefix("f") if nan else what, a, b)


def fmax(a, b, *, abs=False, nan=False, ftz=False, loc=None, ip=None):
    """The larger of two floats: ``max.f32``, which ignores a NaN operand (the other is the result), as
    CuTe DSL's ``nvvm.fmax``; with ``nan=True``, ``max.NaN.f32`` (a NaN operand gives NaN)."""
    return _fminmax("fmax", a, b, abs, nan, ftz)


def fmin(a, b, *, abs=False, nan=False, ftz=False, loc=None, ip=None):
    """The smaller of two floats: ``min.f32`` (NaN ignored), or ``min.NaN.f32`` with ``nan=True``."""
    return _fminmax("fmin", a, b, abs, nan, ftz)


def rcp_approx(a, *, loc=None, ip=None):
    """1 / a (``rcp.approx.ftz.f32`` on the GPU, within an ulp; exact in f32 on the CPU)."""
    from .frontend.trace import TraceValue

    if isinstance(a, TraceValue):
        return a._emit("rcp", (a,), a.dtype)
    return 1.0 / float(a)


def warp_reduction(val, op, *, threads_in_group=32, loc=None, ip=None):
    """``op`` over the values of each group of ``threads_in_group`` consecutive lanes (a power of two,
    at most 32), every lane of the group getting the result: a butterfly of ``shuffle_sync_bfly``
    at offsets threads_in_group / 2, ..., 1, as CuTe DSL does."""
    n = threads_in_group
    if isinstance(n, bool) or not isinstance(n, int) or n < 1 or n > 32 or n & (n - 1):
        raise TraceError(f"cute.arch.warp_reduction: threads_in_group must be a power of two from 1 to 32, got {n!r}")
    off = n // 2
    while off > 0:
        val = op(val, shuffle_sync_bfly(val, offset=off, mask=-1, mask_and_clamp=31))
        off //= 2
    return val


def warp_reduction_sum(val, *, threads_in_group=32, loc=None, ip=None):
    return warp_reduction(val, lambda x, y: x + y, threads_in_group=threads_in_group)


def warp_reduction_max(val, *, threads_in_group=32, loc=None, ip=None):
    from .frontend.control import max_

    return warp_reduction(val, lambda x, y: fmax(x, y) if getattr(getattr(x, "dtype", None), "name", None) == "f32"
                          else max_(x, y), threads_in_group=threads_in_group)


__all__ += ["warp_reduction", "warp_reduction_sum", "warp_reduction_max"]

__all__ += ["sync_warp", "shuffle_sync", "shuffle_sync_bfly", "shuffle_sync_down", "shuffle_sync_up", "fmax", "fmin",
            "rcp_approx"]


# --------------------------------------------------------------------------- memory ordering on global memory

from .instr.atomics import (  # noqa: E402  (ld/st with sem and scope, atomics, red, fence.acq_rel)
    atomic_add, atomic_and, atomic_cas, atomic_exch, atomic_fmax, atomic_max, atomic_min, atomic_or, atomic_xor,
    fence_acq_rel_cluster,
    fence_acq_rel_cta, fence_acq_rel_gpu, fence_acq_rel_sys, load, red, store,
)

__all__ += ["load", "store", "atomic_add", "atomic_and", "atomic_or", "atomic_xor", "atomic_max", "atomic_min",
            "atomic_fmax", "atomic_exch", "atomic_cas", "red", "fence_acq_rel_cta", "fence_acq_rel_cluster", "fence_acq_rel_gpu",
            "fence_acq_rel_sys"]


# --------------------------------------------------------------------------- SM100 tensor memory (instr/tcgen05_tmem.py)

from .instr.tcgen05_tmem import (  # noqa: E402
    alloc_tmem, dealloc_tmem, fence_view_async_tmem_load, fence_view_async_tmem_store, relinquish_tmem_alloc_permit,
    retrieve_tmem_ptr,
)

__all__ += ["alloc_tmem", "dealloc_tmem", "relinquish_tmem_alloc_permit", "retrieve_tmem_ptr",
            "fence_view_async_tmem_load", "fence_view_async_tmem_store"]

from .instr.tma_store import cp_async_bulk_commit_group, cp_async_bulk_wait_group  # noqa: E402  (TMA store groups)

__all__ += ["cp_async_bulk_commit_group", "cp_async_bulk_wait_group"]

# --------------------------------------------------------------------------- SM100 cluster launch control

from .instr.clc import clc_response, issue_clc_query  # noqa: E402

__all__ += ["issue_clc_query", "clc_response"]
