"""The UMMA pipelines' internals that libraries extending them reach into, as CuTe DSL 4.8.1 has them
(pipeline/sm100.py): flash_attn.cute's ``PipelineTmaUmma`` (its pipeline.py) overrides
``producer_acquire`` with ``sync_object_empty.wait`` and, where ``is_leader_cta``,
``sync_object_full.arrive(index, producer_mask)``: a TMA load's arrive expecting the stage's
``tx_count`` bytes. Here a small TMA + UMMA GEMM whose pipeline is such a subclass (the consumer
releasing through ``sync_object_empty.arrive(index, consumer_mask, cta_group)``, a tcgen05 commit)
against numpy, and the kinds of its sync objects."""

from __future__ import annotations

import numpy as np

import cutelab as cute
import cutelab as cutlass
import cutelab.pipeline as pipeline
import cutelab.utils as utils
import cutelab.utils.blackwell_helpers as sm100_utils
from cutelab.mlir_only import if_generate
from cutelab.nvgpu import OperandMajorMode, cpasync, tcgen05
from cutelab.runtime import from_dlpack

MMA_INST = (128, 64, 16)
TILER = (128, 64, 32)
STAGES = 2


class _ExtendedTmaUmma(pipeline.PipelineTmaUmma):
    """A PipelineTmaUmma extended as flash_attn.cute extends it: acquire and release by index and phase
    through the pipeline's sync objects."""

    def producer_acquire_w_index_phase(self, index, phase):
        self.sync_object_empty.wait(index, phase, loc=None, ip=None)
        if_generate(self.is_leader_cta, lambda: self.sync_object_full.arrive(index, self.producer_mask))

    def consumer_wait_w_index_phase(self, index, phase):
        self.sync_object_full.wait(index, phase)

    def consumer_release_w_index(self, index):
        self.sync_object_empty.arrive(index, self.consumer_mask, self.cta_group, loc=None, ip=None)


@cute.struct
class _Storage:
    ab_mbar: cute.struct.MemRange[cutlass.Int64, STAGES * 2]
    acc_mbar: cute.struct.MemRange[cutlass.Int64, 2]
    tmem_holding_buf: cutlass.Int32


@cute.kernel
def _gemm_kernel(tiled_mma: cute.TiledMma, tma_a: cute.CopyAtom, mA: cute.Tensor, tma_b: cute.CopyAtom,
                 mB: cute.Tensor, mC: cute.Tensor, a_layout: cute.ComposedLayout, b_layout: cute.ComposedLayout,
                 kinds: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    smem = utils.SmemAllocator()
    storage = smem.allocate(_Storage)
    sA = smem.allocate_tensor(element_type=cutlass.Float16, layout=a_layout.outer, byte_alignment=128,
                              swizzle=a_layout.inner)
    sB = smem.allocate_tensor(element_type=cutlass.Float16, layout=b_layout.outer, byte_alignment=128,
                              swizzle=b_layout.inner)
    tmem = utils.TmemAllocator(storage.tmem_holding_buf.ptr,
                               barrier_for_retrieve=pipeline.NamedBarrier(barrier_id=1, num_threads=128))
    tmem.allocate(512)
    tx = cute.size_in_bytes(cutlass.Float16, cute.select(a_layout, mode=[0, 1, 2])) + \
        cute.size_in_bytes(cutlass.Float16, cute.select(b_layout, mode=[0, 1, 2]))
    ab = _ExtendedTmaUmma.create(num_stages=STAGES, producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
                                 consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread), tx_count=tx,
                                 barrier_storage=storage.ab_mbar.data_ptr())
    acc_p, acc_c = pipeline.PipelineUmmaAsync.create(
        num_stages=1, producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 128),
        barrier_storage=storage.acc_mbar.data_ptr()).make_participants()
    if tidx == 0:
        kinds[0] = ab.sync_object_full.op_type.value
        kinds[1] = ab.sync_object_empty.op_type.value
        kinds[2] = ab.sync_object_full.tx_count
    gA = cute.local_tile(mA, TILER, (0, 0, None), proj=(1, None, 1))
    gB = cute.local_tile(mB, TILER, (0, 0, None), proj=(None, 1, 1))
    gC = cute.local_tile(mC, TILER, (0, 0, None), proj=(1, 1, None))
    thr_mma = tiled_mma.get_slice(0)
    tCgA, tCgB, tCgC = thr_mma.partition_A(gA), thr_mma.partition_B(gB), thr_mma.partition_C(gC)
    tCrA, tCrB = tiled_mma.make_fragment_A(sA), tiled_mma.make_fragment_B(sB)
    tCtAcc = tiled_mma.make_fragment_C(tiled_mma.partition_shape_C(TILER[:2]))
    tAsA, tAgA = cpasync.tma_partition(tma_a, 0, cute.make_layout(1), cute.group_modes(sA, 0, 3),
                                       cute.group_modes(tCgA, 0, 3))
    tBsB, tBgB = cpasync.tma_partition(tma_b, 0, cute.make_layout(1), cute.group_modes(sB, 0, 3),
                                       cute.group_modes(tCgB, 0, 3))
    tmem.wait_for_alloc()
    tCtAcc = cute.make_tensor(tmem.retrieve_ptr(cutlass.Float32), tCtAcc.layout)
    ld = tcgen05.make_tmem_copy(cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x64), cutlass.Float32),
                                tCtAcc)
    thr_ld = ld.get_slice(tidx)
    tDtC, tDgC = thr_ld.partition_S(tCtAcc), thr_ld.partition_D(tCgC)
    tDrC = cute.make_rmem_tensor(tDgC.shape, cutlass.Float32)
    n_k = cute.size(gA, mode=[2])
    if warp_idx == 0:
        acc_empty = acc_p.acquire_and_advance()
        for k in cutlass.range(n_k):
            ab.producer_acquire_w_index_phase(k % STAGES, (k // STAGES + 1) % 2)
            bar = ab.producer_get_barrier(pipeline.PipelineState(stages=0, count=0, index=k % STAGES, phase=0))
            cute.copy(tma_a, tAgA[(None, k)], tAsA[(None, k % STAGES)], tma_bar_ptr=bar)
            cute.copy(tma_b, tBgB[(None, k)], tBsB[(None, k % STAGES)], tma_bar_ptr=bar)
            ab.consumer_wait_w_index_phase(k % STAGES, (k // STAGES) % 2)
            for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
                cute.gemm(tiled_mma, tCtAcc, tCrA[(None, None, kb, k % STAGES)], tCrB[(None, None, kb, k % STAGES)],
                          tCtAcc)
                tiled_mma.set(tcgen05.Field.ACCUMULATE, True)
            ab.consumer_release_w_index(k % STAGES)
        acc_empty.commit()
    tmem.relinquish_alloc_permit()
    acc_full = acc_c.wait_and_advance()
    cute.copy(ld, tDtC, tDrC)
    cute.autovec_copy(tDrC, tDgC)
    acc_full.release()
    pipeline.sync(barrier_id=1)
    tmem.free(tCtAcc.iterator)


@cute.jit
def _gemm(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, kinds: cute.Tensor):
    op = tcgen05.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, MMA_INST, tcgen05.CtaGroup.ONE,
                              tcgen05.OperandSource.SMEM, OperandMajorMode.K, OperandMajorMode.K)
    tiled_mma = cute.make_tiled_mma(op)
    al = sm100_utils.make_smem_layout_a(tiled_mma, TILER, cutlass.Float16, STAGES)
    bl = sm100_utils.make_smem_layout_b(tiled_mma, TILER, cutlass.Float16, STAGES)
    g2s = cpasync.CopyBulkTensorTileG2SOp(tcgen05.CtaGroup.ONE)
    tma_a, ta = cute.nvgpu.make_tiled_tma_atom_A(g2s, a, cute.select(al, mode=[0, 1, 2]), TILER, tiled_mma)
    tma_b, tb = cute.nvgpu.make_tiled_tma_atom_B(g2s, b, cute.select(bl, mode=[0, 1, 2]), TILER, tiled_mma)
    _gemm_kernel(tiled_mma, tma_a, ta, tma_b, tb, c, al, bl, kinds).launch(grid=(1, 1, 1), block=(128, 1, 1))


def test_a_pipeline_tma_umma_extended_through_its_sync_objects_computes_the_gemm():
    rng = np.random.default_rng(0)
    M, N, K = 128, 64, 64
    a = rng.integers(-3, 4, (M, K)).astype(np.float32)
    b = rng.integers(-3, 4, (N, K)).astype(np.float32)
    c = np.full((M, N), np.nan, np.float32)
    kinds = np.full(3, -1, np.int32)
    _gemm(from_dlpack(a.astype(np.float16)), from_dlpack(b.astype(np.float16)), from_dlpack(c), from_dlpack(kinds))
    np.testing.assert_array_equal(c, a @ b.T)  # small integers: exact
    assert kinds.tolist() == [pipeline.PipelineOp.TmaLoad.value, pipeline.PipelineOp.TCGen05Mma.value,
                              (M + N) * TILER[2] * 2]
