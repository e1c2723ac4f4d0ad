"""Multicast TMA split between the CTAs of a cluster (make_tiled_tma_atom(num_multicast=n),
tma_partition with a cta_layout of n CTAs), cute.make_layout_image_mask, and the refusals around
them. CUTLASS's dense_gemm.py runs all of it end to end (tests/compat/test_compat_hopper_dense_gemm.py)."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import LayoutError, TraceError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
from cutelab.nvgpu import cpasync, warpgroup
from cutelab.nvgpu.cpasync.tma import COORD_EXTENT
from cutelab.runtime import from_dlpack

from sm90_util import nvcc_compiles


def _sw128(tile):
    atom = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, cute.Float16)
    return cute.tile_to_shape(atom, tile, (0, 1))


def test_image_masks_of_a_static_coordinate():
    lay = cute.make_layout((2, 2, 1))  # rank = m + 2 n
    # mode 1 varies n at m = 1: ranks 1 and 3; mode 0 varies m at n = 1: ranks 2 and 3
    assert cute.make_layout_image_mask(lay, (1, 0, 0), mode=1) == 0b1010
    assert cute.make_layout_image_mask(lay, (0, 1, 0), mode=0) == 0b1100
    assert cute.make_layout_image_mask(cute.make_layout((4, 1, 1)), (0, 0, 0), mode=0) == 0b1111
    with pytest.raises(ValueError, match="may not fit into a 16-bit integer"):
        cute.make_layout_image_mask(cute.make_layout((4, 8, 1)), (0, 0, 0), mode=0)
    with pytest.raises(ValueError, match=r"`mode` to be in \[0,rank\(lay\)\)"):
        cute.make_layout_image_mask(lay, (0, 0, 0), mode=3)


@cute.kernel
def masks(O: cute.Tensor, lay: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bx, _, _ = cute.arch.block_idx()
    c = lay.get_flat_coord(cute.arch.block_idx_in_cluster())
    if tidx == 0:
        O[bx, 0] = cute.make_layout_image_mask(lay, c, mode=0)
        O[bx, 1] = cute.make_layout_image_mask(lay, c, mode=1)


def test_image_masks_at_the_ctas_run_time_coordinate():
    O = np.zeros((8, 2), np.int32)
    lay = cute.make_layout((2, 2, 1))
    masks(from_dlpack(O), lay).launch(grid=(8, 1, 1), block=32, cluster=(4, 1, 1))
    want = [[cute.make_layout_image_mask(lay, (r % 2, r // 2, 0), mode=m) for m in (0, 1)] for r in range(4)]
    np.testing.assert_array_equal(O, np.array(want * 2, np.int32))
    src = cuda.render(last_launch().ir)
    assert "<< (unsigned)" in src  # pattern << the CTA's offset in the cluster
    nvcc_compiles(src)


def test_a_multicast_atom_boxes_one_slice_per_cta():
    A = from_dlpack(np.zeros((256, 64), np.float16))
    sl = _sw128((128, 64))
    atom, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SMulticastOp(), A, sl, (128, 64),
                                           num_multicast=2)
    # K (64, contiguous) stays whole, M is cut in two: each CTA's box is 64 x 64, half the tile's bytes
    assert atom.desc.box == (64, 64) and atom.size_in_bytes == 128 * 64 * 2 // 2
    assert atom.num_multicast == 2 and atom.box_tile == (64, 64)
    sA = cute.make_tensor(np.zeros(128 * 64 * 3, np.float16), cute.make_layout(((128, 64), 3), stride=((64, 1), 8192)))
    gA = cute.zipped_divide(tA, (128, 64))[(None, (1, None))]  # tile row 1, every K tile
    for c in (0, 1):
        s, g = cpasync.tma_partition(atom, c, cute.make_layout(2), sA, gA)
        # rows 64c.. of the tile (tA is A's coordinate view: rows COORD_EXTENT apart)
        assert s.offset == c * 64 * 64 and g.offset == (128 + 64 * c) * COORD_EXTENT
        assert cute.size(s, mode=[0]) == cute.size(g, mode=[0]) == 64 * 64
    with pytest.raises(LayoutError, match=r"has 1 CTA\(s\) but the atom was made with num_multicast=2"):
        cpasync.tma_partition(atom, 0, cute.make_layout(1), sA, gA)


def test_multicast_refusals():
    A = from_dlpack(np.zeros((256, 64), np.float16))
    with pytest.raises(LayoutError, match="num_multicast=2 needs a CopyBulkTensorTileG2SMulticastOp"):
        cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), A, _sw128((128, 64)), (128, 64), num_multicast=2)
    # 8 slices of a 16 x 64 tile are 256 bytes, less than the 1024 bytes of one swizzle pattern
    with pytest.raises(LayoutError, match="slices of 256 bytes"):
        cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SMulticastOp(), A, _sw128((16, 64)), (16, 64),
                                    num_multicast=8)


@cute.kernel
def pipe(vmnk: cutlass.Constexpr):
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(4), 8)
    cutlass.pipeline.PipelineTmaAsync.create(
        barrier_storage=bars.iterator, num_stages=2,
        producer_group=cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread),
        consumer_group=cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread, 2),
        tx_count=1024, cta_layout_vmnk=vmnk)


def test_a_pipeline_over_more_ctas_than_the_cluster_is_refused():
    with pytest.raises(TraceError, match=r"cta_layout_vmnk \(1,4,1,1\):\(0,1,0,0\) has 4 CTAs but the kernel is "
                                         r"launched with clusters of 2 \(2, 1, 1\)"):
        pipe(cute.make_layout((1, 4, 1, 1))).launch(grid=2, block=32, cluster=(2, 1, 1))


# --------------------------------------------------------------------------- slices of wide and hierarchical tiles

@cute.kernel
def mcast_slices(atom: cutlass.Constexpr, tA: cute.Tensor, B: cute.Tensor, sl: cutlass.Constexpr,
                 tile: cutlass.Constexpr):
    """Each CTA of a (2, 1, 1) cluster issues its tma_partition slice of the cluster's tile, multicast to both;
    each then writes the whole tile it received to B (rows bx * tile[0] ..)."""
    tidx, _, _ = cute.arch.thread_idx()
    bx, _, _ = cute.arch.block_idx()
    kx, _, _ = cute.arch.cluster_idx()
    rank = cute.arch.block_idx_in_cluster()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sA = smem.allocate_tensor(cutlass.Float16, sl.outer, 1024, swizzle=sl.inner)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.cluster_arrive_relaxed()
    cute.arch.cluster_wait()
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bars.iterator, tile[0] * tile[1] * 2)  # the whole tile lands
    gA = cute.local_tile(tA, tile, (kx, 0))
    s, g = cpasync.tma_partition(atom, rank, cute.make_layout(2), cute.group_modes(sA, 0, 2),
                                 cute.group_modes(gA, 0, 2))
    if tidx == 0:
        cute.copy(atom, g, s, tma_bar_ptr=bars.iterator, mcast_mask=0b11)
    cute.arch.mbarrier_wait(bars.iterator, 0)
    for i in range(tile[0]):
        B[bx * tile[0] + i, tidx] = sA[i, tidx]
    cute.arch.cluster_arrive()
    cute.arch.cluster_wait()


def _run_slices(A, logical, sl, tile):
    """Launch mcast_slices over A (2 clusters, one tile each); B must hold each cluster's tile twice."""
    atom, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SMulticastOp(), A, sl, tile, num_multicast=2)
    B = np.full((4 * tile[0], tile[1]), -1, np.float16)
    mcast_slices(atom, tA, from_dlpack(B), sl, tile).launch(grid=4, block=tile[1], cluster=(2, 1, 1))
    want = np.repeat(logical.reshape(2, 1, tile[0], tile[1]), 2, axis=1).reshape(4 * tile[0], tile[1])
    np.testing.assert_array_equal(B, want)
    return atom


def test_multicast_of_an_mn_major_tile_wider_than_the_swizzle_span():
    """quack's MN-major operands (backward GEMMs): a 192 x 64 tile, M contiguous, under the 128-byte MN swizzle
    is three 64 x 64 boxes side by side along M (CuTe's TMA_Iter); as CuTe's tma_partition, CTA c issues
    slice c of each box (K rows 32c..32c+31 of each), so its slice of the tile is 192 x 32."""
    M, K = 384, 64
    data = (np.arange(M * K) % 251).astype(np.float16)
    A = cute.make_tensor(data, cute.make_layout((M, K), stride=(1, M)))  # M-major
    atom_l = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.MN_SW128, cute.Float16)
    sl = cute.tile_to_shape(atom_l, (192, 64), (1, 0))  # K blocks first: each 64-row block of M is one box
    atom = _run_slices(A, data.reshape(K, M).T, sl, (192, 64))
    assert atom.desc.box == (64, 32) and len(atom.boxes) == 3 and atom.box_tile == (192, 32)
    nvcc_compiles(cuda.render(last_launch().ir))


def test_multicast_of_a_tile_over_a_hierarchical_mode():
    """quack's concatenated operands: M is a hierarchical mode ((2, M / 2)) and the 192-row tile is (2, 96) of
    it, as CuTe flattens it into TMA dimensions (box (64, 2, 96), K innermost); multicast cuts it in the
    outermost dimension, (64, 2, 48) per CTA."""
    M, K = 384, 64
    data = (np.arange(M * K) % 251).astype(np.float16)
    # row m of the logical tensor is (m % 2, m // 2): memory row (m % 2) * M/2 + m // 2
    A = cute.make_tensor(data, cute.make_layout(((2, M // 2), K), stride=((M // 2 * K, K), 1)))
    logical = data.reshape(2, M // 2, K).transpose(1, 0, 2).reshape(M, K)
    atom_l = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, cute.Float16)
    sl = cute.tile_to_shape(atom_l, (192, 64), (0, 1))
    atom = _run_slices(A, logical, sl, (192, 64))
    assert atom.desc.box == (64, 2, 48) and atom.box_tile == (2, 48, 64)


@pytest.mark.gpu
def test_gpu_multicast_slices_of_wide_and_hierarchical_tiles():
    """On an SM90 GPU: the two multicast kernels above give the CPU's results."""
    import torch

    M, K = 384, 64
    data = (np.arange(M * K) % 251).astype(np.float16)
    cases = [(cute.make_layout((M, K), stride=(1, M)), data.reshape(K, M).T, warpgroup.SmemLayoutAtomKind.MN_SW128,
              (1, 0)),
             (cute.make_layout(((2, M // 2), K), stride=((M // 2 * K, K), 1)),
              data.reshape(2, M // 2, K).transpose(1, 0, 2).reshape(M, K), warpgroup.SmemLayoutAtomKind.K_SW128, (0, 1))]
    for layout, logical, kind, order in cases:
        A = torch.from_numpy(data).cuda()
        tA_src = cute.make_tensor(from_dlpack(A).iterator, layout)
        sl = cute.tile_to_shape(warpgroup.make_smem_layout_atom(kind, cute.Float16), (192, 64), order)
        atom, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SMulticastOp(), tA_src, sl, (192, 64),
                                               num_multicast=2)
        B = torch.full((4 * 192, 64), -1, dtype=torch.float16, device="cuda")
        mcast_slices(atom, tA, from_dlpack(B), sl, (192, 64)).launch(grid=4, block=64, cluster=(2, 1, 1))
        torch.cuda.synchronize()
        want = np.repeat(logical.reshape(2, 1, 192, 64), 2, axis=1).reshape(4 * 192, 64)
        np.testing.assert_array_equal(B.cpu().numpy(), want)
