"""``cutlass.utils.gemm.sm100``: the epilogues of CuTe DSL 4.8.1's Blackwell persistent GEMMs,
called from inside their kernels (``utils.gemm.sm100.epilogue(self, ...)``).

Both take the kernel object (``gemm_kernel``: its ``cta_tile_shape_mnk``, ``c_layout``,
``c_dtype``, ``acc_dtype``, ``use_2cta_instrs``, ``epilog_sync_bar_id``, ``epilogue_warp_id``,
``num_c_stage``, and optionally ``tmem_warp_shape_mn``), the accumulator in tensor memory and the
MMA partition of C, and one tile's coordinate. They wait for the accumulator stage, move it out in
``epi_tile`` subtiles (``tcgen05.ld`` into registers, the element type of C, ``epilogue_op``),
release the stage, and return the advanced consumer state:

- ``epilogue_tma_store``: each subtile goes through a ring of ``num_c_stage`` shared-memory
  buffers, then one warp stores it with TMA;
- ``epilogue``: each subtile is stored to global memory from registers, with a predicate per
  vector when the coordinate tensor and C are given. The overlapping-accumulator mode of the
  block-scaled kernels is not here (refused).

The partitions are ``epilogue_tmem_copy_and_partition`` and ``epilogue_smem_copy_and_partition``;
``transform_partitioned_tensor_layout`` regroups an MMA partition ((ATOM_M, ATOM_N), MMA_M,
MMA_N, ...) into ((ATOM_M, MMA_M), (ATOM_N, MMA_N), ...).
"""

from __future__ import annotations

from typing import Any, Tuple

from ... import swizzle as _sw
from ...errors import TraceError
from ...kernel.launch.api import jit

__all__ = ["transform_partitioned_tensor_layout", "epilogue_tmem_copy_and_partition",
           "epilogue_smem_copy_and_partition", "epilogue_tma_store", "epilogue"]


def transform_partitioned_tensor_layout(tensor: Any) -> Any:
    """((ATOM_M, ATOM_N), MMA_M, MMA_N, rest...) -> ((ATOM_M, MMA_M), (ATOM_N, MMA_N), rest...), the
    same elements (a swizzled composed layout keeps its swizzle)."""
    import cutelab as cute

    lay = tensor.layout
    outer = lay.outer if isinstance(lay, _sw.ComposedLayout) else lay
    shp, std = outer.shape, outer.stride
    if not (isinstance(shp, tuple) and len(shp) >= 3 and isinstance(shp[0], tuple) and len(shp[0]) == 2):
        raise TraceError(f"transform_partitioned_tensor_layout: expected ((ATOM_M, ATOM_N), MMA_M, MMA_N, ...), got "
                         f"{outer}")
    new = cute.make_layout(((shp[0][0], shp[1]), (shp[0][1], shp[2]), *shp[3:]),
                           stride=((std[0][0], std[1]), (std[0][1], std[2]), *std[3:]))
    if isinstance(lay, _sw.ComposedLayout):
        new = cute.make_composed_layout(lay.inner, lay.offset, new)
    return cute.make_tensor(tensor.iterator, new)


def epilogue_tmem_copy_and_partition(gemm_kernel: Any, tidx: Any, tAcc: Any, tCgC: Any, epi_tile: Any,
                                     use_2cta_instrs: Any) -> Tuple[Any, Any, Any]:
    """(the TMEM -> register tiled copy of one subtile, this thread's part of every subtile of the
    accumulator (T2R, T2R_M, T2R_N, EPI_M, EPI_N, STAGE), registers for one subtile)."""
    import cutelab as cute
    from ...nvgpu import tcgen05
    from ..blackwell_helpers import get_tmem_load_op

    atom = get_tmem_load_op(gemm_kernel.cta_tile_shape_mnk, gemm_kernel.c_layout, gemm_kernel.c_dtype,
                            gemm_kernel.acc_dtype, epi_tile, use_2cta_instrs,
                            tmem_warp_shape_mn=getattr(gemm_kernel, "tmem_warp_shape_mn", None))
    acc_epi = cute.flat_divide(tAcc, epi_tile)  # (EPI_TILE_M, EPI_TILE_N, EPI_M, EPI_N, STAGE)
    t2r = tcgen05.make_tmem_copy(atom, acc_epi[(None, None, 0, 0, 0)])
    thr = t2r.get_slice(tidx)
    part_acc = thr.partition_S(acc_epi)
    # (T2R, T2R_M, T2R_N, EPI_M, EPI_N, RestM, RestN, RestL)
    part_gc = thr.partition_D(cute.flat_divide(tCgC, epi_tile))
    regs = cute.make_rmem_tensor(part_gc[(None, None, None, 0, 0, 0, 0, 0)].shape, gemm_kernel.acc_dtype)
    return t2r, part_acc, regs


def epilogue_smem_copy_and_partition(gemm_kernel: Any, tiled_copy_t2r: Any, tTR_rC: Any, tidx: Any,
                                     sC: Any) -> Tuple[Any, Any, Any]:
    """(the register -> shared tiled copy matching the TMEM load, the registers of C seen by it, this
    thread's part of the C buffers (R2S, R2S_M, R2S_N, STAGE))."""
    import cutelab as cute
    from ..blackwell_helpers import get_smem_store_op

    atom = get_smem_store_op(gemm_kernel.c_layout, gemm_kernel.c_dtype, gemm_kernel.acc_dtype, tiled_copy_t2r)
    r2s = cute.make_tiled_copy_D(atom, tiled_copy_t2r)
    return r2s, r2s.retile(tTR_rC), r2s.get_slice(tidx).partition_D(sC)


@jit
def epilogue_tma_store(gemm_kernel: Any, epi_tidx: Any, warp_idx: Any, tma_atom_c: Any, tCtAcc_base: Any, sC: Any,
                       tCgC_base: Any, epi_tile: Any, num_tiles_executed: Any, epilogue_op: Any,
                       mma_tile_coord_mnl: Any, acc_consumer_state: Any, acc_pipeline: Any, c_pipeline: Any) -> Any:
    """One tile's epilogue through shared memory and TMA stores (see the module docstring)."""
    import cutelab as cute
    import cutelab as cutlass
    from ... import pipeline
    from ...nvgpu import cpasync

    tCgC = transform_partitioned_tensor_layout(tCgC_base)
    tCtAcc = transform_partitioned_tensor_layout(tCtAcc_base)
    t2r, acc_all, acc_regs = epilogue_tmem_copy_and_partition(gemm_kernel, epi_tidx, tCtAcc, tCgC, epi_tile,
                                                              gemm_kernel.use_2cta_instrs)
    c_regs = cute.make_rmem_tensor(acc_regs.shape, gemm_kernel.c_dtype)
    r2s, c_regs_r2s, c_smem = epilogue_smem_copy_and_partition(gemm_kernel, t2r, c_regs, epi_tidx, sC)
    s_tiles, g_tiles = cpasync.tma_partition(tma_atom_c, 0, cute.make_layout(1), cute.group_modes(sC, 0, 2),
                                             cute.group_modes(cute.flat_divide(tCgC, epi_tile), 0, 2))
    bar = pipeline.NamedBarrier(barrier_id=gemm_kernel.epilog_sync_bar_id,
                                num_threads=32 * len(gemm_kernel.epilogue_warp_id))
    g_tile = g_tiles[(None, None, None, *mma_tile_coord_mnl)]  # ((ATOM_V, REST_V), EPI_M, EPI_N)
    acc = acc_all[(None, None, None, None, None, acc_consumer_state.index)]
    acc_pipeline.consumer_wait(acc_consumer_state)
    acc = cute.group_modes(acc, 3, cute.rank(acc))
    g_tile = cute.group_modes(g_tile, 1, cute.rank(g_tile))
    n_sub = cute.size(acc.shape, mode=[3])
    before = num_tiles_executed * n_sub  # the subtiles stored by earlier tiles: the ring's position
    for s in cutlass.range_constexpr(n_sub):
        cute.copy(t2r, acc[(None, None, None, s)], acc_regs)
        c_regs_r2s.store(epilogue_op(r2s.retile(acc_regs).load().to(gemm_kernel.c_dtype)))
        buf = (before + s) % gemm_kernel.num_c_stage
        cute.copy(r2s, c_regs_r2s, c_smem[(None, None, None, buf)])
        cute.arch.fence_proxy("async.shared", space="cta")  # the stores, seen by the TMA store
        bar.arrive_and_wait()
        if warp_idx == gemm_kernel.epilogue_warp_id[0]:
            cute.copy(tma_atom_c, s_tiles[(None, buf)], g_tile[(None, s)])
            c_pipeline.producer_commit()
            c_pipeline.producer_acquire()
        bar.arrive_and_wait()
    bar.arrive_and_wait()
    with cute.arch.elect_one():
        acc_pipeline.consumer_release(acc_consumer_state)
    acc_consumer_state.advance()
    return acc_consumer_state


@jit
def epilogue(gemm_kernel: Any, epi_tidx: Any, tCtAcc_base: Any, tCgC_base: Any, epi_tile: Any, epilogue_op: Any,
             mma_tile_coord_mnl: Any, acc_consumer_state: Any, acc_pipeline: Any, tCcC_base: Any = None,
             mC_mnl: Any = None, overlapping_accum: Any = False) -> Any:
    """One tile's epilogue stored from registers to global memory (see the module docstring)."""
    import cutelab as cute
    import cutelab as cutlass
    from ...algebra import max_common_layout
    from ...nvgpu.universal_copy import CacheEvictionPriority, CopyR2GOp

    if cutlass.const_expr(overlapping_accum):
        raise TraceError("cutlass.utils.gemm.sm100.epilogue(overlapping_accum=True) is not supported by cutelab")
    tCgC = transform_partitioned_tensor_layout(tCgC_base)
    tCtAcc = transform_partitioned_tensor_layout(tCtAcc_base)
    t2r, acc_all, acc_regs = epilogue_tmem_copy_and_partition(gemm_kernel, epi_tidx, tCtAcc, tCgC, epi_tile,
                                                              gemm_kernel.use_2cta_instrs)
    thr = t2r.get_slice(epi_tidx)
    gc_all = thr.partition_D(cute.flat_divide(tCgC, epi_tile))  # (T2R, T2R_M, T2R_N, EPI_M, EPI_N, RestM, RestN, RestL)
    first = gc_all[(None, None, None, 0, 0, 0, 0, 0)]
    c_regs = cute.make_rmem_tensor(first.shape, gemm_kernel.c_dtype)
    common = max_common_layout(c_regs.layout, first.layout)
    bits = min(gc_all.iterator.alignment * 8, cute.size(common) * gemm_kernel.c_dtype.width, 256)
    store = cute.make_copy_atom(CopyR2GOp(), gemm_kernel.c_dtype, num_bits_per_copy=bits,
                                l1c_evict_priority=CacheEvictionPriority.NO_ALLOCATE)
    predicated = tCcC_base is not None and mC_mnl is not None
    gc = gc_all[(None, None, None, None, None, *mma_tile_coord_mnl)]
    if cutlass.const_expr(predicated):
        cc_all = thr.partition_D(cute.flat_divide(transform_partitioned_tensor_layout(tCcC_base), epi_tile))
        cc = cute.group_modes(cc_all[(None, None, None, None, None, *mma_tile_coord_mnl)], 3, 5)
    acc = acc_all[(None, None, None, None, None, acc_consumer_state.index)]
    acc_pipeline.consumer_wait(acc_consumer_state)
    acc = cute.group_modes(acc, 3, cute.rank(acc))
    gc = cute.group_modes(gc, 3, cute.rank(gc))
    n_sub = cute.size(acc.shape, mode=[3])
    for s in cutlass.range_constexpr(n_sub):
        cute.copy(t2r, acc[(None, None, None, s)], acc_regs)
        if cutlass.const_expr(s == n_sub - 1):  # the accumulator is in registers: release the stage early
            with cute.arch.elect_one():
                acc_pipeline.consumer_release(acc_consumer_state)
            acc_consumer_state.advance()
        c_regs.store(epilogue_op(acc_regs.load().to(gemm_kernel.c_dtype)))
        if cutlass.const_expr(predicated):
            csub = cc[(None, None, None, s)]
            pred = cute.make_rmem_tensor((1, *csub.shape[1:]), cutlass.Boolean)
            for mi in cutlass.range_constexpr(csub.shape[1]):
                for ni in cutlass.range_constexpr(csub.shape[2]):
                    pred[(0, mi, ni)] = cute.elem_less(csub[(0, mi, ni)], mC_mnl.shape)
            cute.copy(store, c_regs, gc[(None, None, None, s)], pred=pred)
        else:
            cute.copy(store, c_regs, gc[(None, None, None, s)])
    return acc_consumer_state
