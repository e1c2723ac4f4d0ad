"""TMA descriptors kept in memory and rewritten by the kernel (kernel/instr/tensormap.py): copy_tensormap,
update_tma_descriptor with a tensor at a runtime address, the tensormap fences, and TMA loads and stores
through the descriptor pointer (cute.copy(..., tma_desc_ptr=)), on the CPU and in CUDA."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import LaunchError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
from cutelab.nvgpu import cpasync, warpgroup
from cutelab.runtime import from_dlpack

from sm90_util import nvcc_compiles

K_SW128 = warpgroup.SmemLayoutAtomKind.K_SW128


def _sl():
    return cute.tile_to_shape(warpgroup.make_smem_layout_atom(K_SW128, cute.Float16), (64, 64), (0, 1))


@cute.kernel
def _load_rewritten(atom: cutlass.Constexpr, tA: cute.Tensor, ws: cute.Tensor, ptrs: cute.Tensor, A1: cute.Tensor,
                    B: cute.Tensor, sl: cutlass.Constexpr, update: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bx, by, _ = cute.arch.block_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sA = smem.allocate_tensor(cutlass.Float16, sl.outer, 1024, swizzle=sl.inner)
    desc = ws[(bx * 2 + by, None)].iterator  # a descriptor per block, in global memory
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 1)
        cpasync.copy_tensormap(atom, desc)
        if update:  # the group's tensor: its address read from memory, its own extents and strides
            p = cute.make_ptr(cutlass.Float16, ptrs[0], cute.AddressSpace.gmem, assumed_align=16)
            real = cute.make_tensor(p, cute.make_layout((100, 72), stride=(72, 1)))
            cpasync.update_tma_descriptor(atom, real, desc)
        cpasync.fence_tma_desc_release()
        cpasync.fence_tma_desc_acquire(desc)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    gA = cute.local_tile(tA, (64, 64), (bx, by))
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bars.iterator, 64 * 64 * 2)
        cute.copy(atom, gA, sA, tma_bar_ptr=bars.iterator, tma_desc_ptr=desc)
    cute.arch.mbarrier_wait(bars.iterator, 0)
    for i in range(64):
        B[bx * 64 + i, by * 64 + tidx] = sA[i, tidx]


def _load(update, template_rows=128, template_cols=128, dynamic=False):
    # the atom's tensor stands for the coordinates only (grouped GEMMs make their atoms from such a template,
    # with a dynamic layout)
    template = (np.arange(template_rows * template_cols) % 241).astype(np.float16).reshape(template_rows, template_cols)
    A1 = ((np.arange(100 * 72) % 251) - 125).astype(np.float16).reshape(100, 72)
    t = from_dlpack(template).mark_layout_dynamic() if dynamic else from_dlpack(template)
    atom, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), t, _sl(), (64, 64))
    ws = np.zeros((4, 16), np.int64)
    B = np.full((128, 128), -1, dtype=np.float16)
    _load_rewritten(atom, tA, from_dlpack(ws), from_dlpack(np.array([A1.ctypes.data], np.int64)),
                    from_dlpack(A1, assumed_align=16), from_dlpack(B), _sl(), update).launch(grid=(2, 2), block=64)
    return template, A1, B


def test_a_tma_load_through_a_rewritten_descriptor_reads_the_new_tensor():
    _, A1, B = _load(True)
    ref = np.zeros((128, 128), np.float16)
    ref[:100, :72] = A1  # the new extents: what lies outside them is filled with zeros
    np.testing.assert_array_equal(B, ref)
    src = cuda.render(last_launch().ir)
    for ins in ("tensormap.replace.tile.global_address.global.b1024.b64",
                "tensormap.replace.tile.global_dim.global.b1024.b32 [%0], 1,",
                "tensormap.replace.tile.global_stride.global.b1024.b64 [%0], 0,",
                "fence.proxy.tensormap::generic.release.gpu", "fence.proxy.tensormap::generic.acquire.gpu [%0], 128;",
                "const __grid_constant__ cl_tensormap tmap_tA"):
        assert ins in src, ins
    assert '"l"((unsigned long long)&tmap_tA)' not in src  # the TMA reads the descriptor in memory
    nvcc_compiles(src)


def test_without_the_update_the_copied_descriptor_reads_the_atom_s_tensor():
    template, _, B = _load(False)
    ref = np.zeros((128, 128), np.float16)
    ref[:] = template
    np.testing.assert_array_equal(B, ref)


@cute.kernel
def _store_rewritten(atom: cutlass.Constexpr, tC: cute.Tensor, ws: cute.Tensor, ptrs: cute.Tensor, C1: cute.Tensor,
                     sl: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bx, by, _ = cute.arch.block_idx()
    smem = cutlass.utils.SmemAllocator()
    sC = smem.allocate_tensor(cutlass.Float16, sl.outer, 1024, swizzle=sl.inner)
    for i in range(64):
        sC[i, tidx] = cutlass.Float16(bx * 2 + by + 1)
    cute.arch.fence_proxy("async.shared", space="cta")
    cute.arch.sync_threads()
    desc = ws[(bx * 2 + by, None)].iterator
    if tidx == 0:
        cpasync.copy_tensormap(atom, desc)
        p = cute.make_ptr(cutlass.Float16, ptrs[0], cute.AddressSpace.gmem, assumed_align=16)
        cpasync.update_tma_descriptor(atom, cute.make_tensor(p, cute.make_layout((100, 72), stride=(72, 1))), desc)
        cpasync.fence_tma_desc_release()
        cpasync.fence_tma_desc_acquire(desc)
        cute.copy(atom, sC, cute.local_tile(tC, (64, 64), (bx, by)), tma_desc_ptr=desc)
        cute.arch.cp_async_bulk_commit_group()
        cute.arch.cp_async_bulk_wait_group(0)


def test_a_tma_store_through_a_rewritten_descriptor_writes_the_new_tensor_inside_its_extents():
    template = np.zeros((128, 128), np.float16)
    C1 = np.full((100, 72), -1, np.float16)
    atom, tC = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), from_dlpack(template), _sl(), (64, 64))
    ws = np.zeros((4, 16), np.int64)
    _store_rewritten(atom, tC, from_dlpack(ws), from_dlpack(np.array([C1.ctypes.data], np.int64)),
                     from_dlpack(C1, assumed_align=16), _sl()).launch(grid=(2, 2), block=64)
    ref = np.zeros((100, 72), np.float16)
    for bx in range(2):
        for by in range(2):
            ref[bx * 64:(bx + 1) * 64, by * 64:(by + 1) * 64] = bx * 2 + by + 1
    np.testing.assert_array_equal(C1, ref)  # a column past 72 written would have wrapped into the next row
    assert not template.any()  # the atom's own tensor is not written
    src = cuda.render(last_launch().ir)
    assert "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" in src
    head = src[src.index('extern "C"'):]
    assert "__restrict__" not in head[:head.index("{")]  # the descriptor may name any memory
    nvcc_compiles(src)


@cute.kernel
def _no_descriptor(atom: cutlass.Constexpr, tA: cute.Tensor, ws: cute.Tensor, sl: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sA = smem.allocate_tensor(cutlass.Float16, sl.outer, 1024, swizzle=sl.inner)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bars.iterator, 64 * 64 * 2)
        cute.copy(atom, cute.local_tile(tA, (64, 64), (0, 0)), sA, tma_bar_ptr=bars.iterator,
                  tma_desc_ptr=ws.iterator)


def test_a_tma_through_memory_that_holds_no_descriptor_is_refused_naming_the_line():
    template = np.zeros((64, 64), np.float16)
    atom, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), from_dlpack(template), _sl(), (64, 64))
    with pytest.raises(LaunchError, match=r"test_tensormap.py:\d+\): TMA load through a descriptor pointer: the 128 "
                                          r"bytes at the descriptor pointer hold no TMA descriptor"):
        _no_descriptor(atom, tA, from_dlpack(np.zeros(16, np.int64)), _sl()).launch(grid=1, block=32)


def test_a_template_narrower_than_a_tile_gets_a_coordinate_view_as_its_tma_tensor():
    from cutelab.nvgpu.cpasync.tma import COORD_EXTENT

    template = np.zeros((16, 16), np.float16)  # as CUTLASS's grouped GEMM makes its atoms: dtype and majorness only
    atom, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), from_dlpack(template).mark_layout_dynamic(),
                                           _sl(), (64, 64))
    # the template's own (dynamic) shape, as CuTe DSL's coordinate tensor keeps it (a kernel reads its extents
    # off the TMA tensor), its modes COORD_EXTENT apart
    assert [int(e) for e in tA.shape] == [16, 16]
    assert [int(e) for e in tA.layout.stride] == [COORD_EXTENT, 1]
    assert atom.desc.dims == (16, 16)  # the descriptor is the template's until the kernel rewrites it
    # the tiles of the kernel's grid keep their coordinates through local_tile (dynamic rest modes): the
    # rewritten descriptor's tensor (100 x 72) is read tile by tile, although the template has room for a tile
    # in neither mode
    _, A1, B = _load(True, template_rows=16, template_cols=16, dynamic=True)
    ref = np.zeros((128, 128), np.float16)
    ref[:100, :72] = A1
    np.testing.assert_array_equal(B, ref)
    # a tensor narrower than its tile in one mode only is a real operand with a partial tile there (a K of
    # 32 under a K tile of 64, CUTLASS's all-gather GEMM): its own TMA tensor, with its own extents
    real = np.zeros((256, 32), np.float16)
    _, tR = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), from_dlpack(real), _sl(), (64, 64))
    assert tuple(tR.shape) == (256, 32)


@cute.kernel
def _nvvm_load(atom: cutlass.Constexpr, tA: cute.Tensor, ws: cute.Tensor, B: cute.Tensor, sl: cutlass.Constexpr):
    from cutelab.kernel.instr.tensormap import nvvm_tma_load

    tidx, _, _ = cute.arch.thread_idx()
    bx, by, _ = cute.arch.block_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sA = smem.allocate_tensor(cutlass.Float16, sl.outer, 1024, swizzle=sl.inner)
    desc = ws[(bx * 2 + by, None)].iterator
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 1)
        cpasync.copy_tensormap(atom, desc)
        cpasync.fence_tma_desc_release()
        cpasync.fence_tma_desc_acquire(desc)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    if tidx < 32:
        if tidx == 0:
            cute.arch.mbarrier_arrive_and_expect_tx(bars.iterator, 64 * 64 * 2)
        # NVVM's TMA load: explicit coordinates (innermost first), the descriptor's box, one elected lane
        nvvm_tma_load(sA.iterator, desc, [by * 64, bx * 64], bars.iterator, predicate=cute.arch.lane_idx() == 0)
    cute.arch.mbarrier_wait(bars.iterator, 0)
    for i in range(64):
        B[bx * 64 + i, by * 64 + tidx] = sA[i, tidx]


def test_the_nvvm_tma_load_through_a_descriptor_pointer_takes_explicit_coordinates():
    A = ((np.arange(128 * 128) % 239) - 100).astype(np.float16).reshape(128, 128)
    atom, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), from_dlpack(A), _sl(), (64, 64))
    B = np.zeros((128, 128), np.float16)
    _nvvm_load(atom, tA, from_dlpack(np.zeros((4, 16), np.int64)), from_dlpack(B), _sl()).launch(grid=(2, 2), block=64)
    np.testing.assert_array_equal(B, A)
    src = cuda.render(last_launch().ir)
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes" in src
    nvcc_compiles(src)
