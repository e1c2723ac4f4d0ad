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
