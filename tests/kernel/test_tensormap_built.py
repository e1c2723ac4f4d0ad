"""TMA descriptors a kernel builds from a tensor with runtime extents (kernel/instr/tensormap.py, as CUTLASS's MoE
GEMMs build one per expert): make_tiled_tma_atom in the kernel of a tensor over a layout whose extents are read
from memory, copy_tensormap of that atom into a byte workspace, then TMA copies through the descriptor there."""

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
def _build(A: cute.Tensor, offs: cute.Tensor, ws: cute.Tensor, sl: cutlass.Constexpr):
    g, _, _ = cute.arch.block_idx()
    start = cutlass.Int32(0)
    if g > 0:
        start = offs[g - 1]
    rows = offs[g] - start  # the group's rows: known when the kernel runs
    a_g = cute.make_tensor(A.iterator + start * A.stride[0],
                           cute.make_layout((rows, A.shape[1]), stride=(A.stride[0], 1)))
    atom, _ = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), a_g, sl, (64, 64))
    cpasync.copy_tensormap(atom, ws.iterator + g * 128)  # a byte workspace, 128 bytes a group


@cute.kernel
def _load(atom: cutlass.Constexpr, tA: cute.Tensor, ws: cute.Tensor, B: cute.Tensor, sl: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    g, _, _ = cute.arch.block_idx()
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
                  tma_desc_ptr=ws.iterator + g * 128)
    cute.arch.mbarrier_wait(bars.iterator, 0)
    for i in range(64):
        B[g, i, tidx] = sA[i, tidx]


def _run(offs):
    A = ((np.arange(96 * 64) % 251) - 125).astype(np.float16).reshape(96, 64)
    ws = np.full(2 * 128, 255, np.uint8)
    tA = from_dlpack(A, assumed_align=16).mark_layout_dynamic()
    _build(tA, from_dlpack(np.array(offs, np.int32)), from_dlpack(ws, assumed_align=8), _sl()).launch(
        grid=2, block=32)
    build_src = cuda.render(last_launch().ir)
    atom, tma = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), tA, _sl(), (64, 64))
    B = np.full((2, 64, 64), -1, np.float16)
    _load(atom, tma, from_dlpack(ws, assumed_align=8), from_dlpack(B), _sl()).launch(grid=2, block=64)
    return A, B, build_src


def test_a_descriptor_built_in_the_kernel_bounds_the_tma_by_the_group_s_rows():
    A, B, src = _run([40, 96])
    want = np.zeros((2, 64, 64), np.float16)
    want[0, :40] = A[:40]  # rows past the group's 40 are out of its descriptor: zero-filled
    want[1, :56] = A[40:]
    np.testing.assert_array_equal(B, want)
    # CUDA: the template tensor map of A's argument, copied, then its address, extents and strides replaced
    for ins in ("const __grid_constant__ cl_tensormap tmap_A", "tensormap.replace.tile.global_address.global.b1024.b64",
                "tensormap.replace.tile.global_dim.global.b1024.b32 [%0], 1,",
                "tensormap.replace.tile.global_stride.global.b1024.b64 [%0], 0,"):
        assert ins in src, ins
    nvcc_compiles(src)


def test_a_group_of_no_rows_gets_a_descriptor_that_a_tma_through_it_refuses():
    # building it is allowed (CUTLASS's MoE kernels build one for an expert of no tokens and never use it); a TMA
    # through it is refused, naming the TMA's line and the field
    with pytest.raises(LaunchError, match=r"test_tensormap_built.py:\d+\): TMA load through a descriptor pointer: the "
                                          r"descriptor cannot be used: extent 0 of TMA dimension 1 is not in 1..2\^32 "
                                          r"\(written by _build \(at .*test_tensormap_built.py:\d+\): "
                                          r"update_tma_descriptor\)"):
        _run([0, 96])


@cute.kernel
def _build_and_load(tA: cute.Tensor, A: cute.Tensor, offs: cute.Tensor, ws: cute.Tensor, B: cute.Tensor,
                    sl: cutlass.Constexpr, atom: cutlass.Constexpr, release: cutlass.Constexpr,
                    acquire: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    g, _, _ = cute.arch.block_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sA = smem.allocate_tensor(cutlass.Float16, sl.outer, 1024, swizzle=sl.inner)
    desc = ws.iterator + g * 128
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 1)
        start = cutlass.Int32(0)
        if g > 0:
            start = offs[g - 1]
        a_g = cute.make_tensor(A.iterator + start * A.stride[0],
                               cute.make_layout((offs[g] - start, A.shape[1]), stride=(A.stride[0], 1)))
        built, _ = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), a_g, sl, (64, 64))
        cpasync.copy_tensormap(built, desc)
        if release:
            cpasync.fence_tma_desc_release()
        if acquire:
            cpasync.fence_tma_desc_acquire(desc)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bars.iterator, 64 * 64 * 2)
        cute.copy(atom, cute.local_tile(tA, (64, 64), (0, 0)), sA, tma_bar_ptr=bars.iterator, tma_desc_ptr=desc)
    cute.arch.mbarrier_wait(bars.iterator, 0)
    for i in range(64):
        B[g, i, tidx] = sA[i, tidx]


@pytest.mark.parametrize("release,acquire", [(True, True), (False, True), (True, False)])
def test_a_tma_in_the_launch_that_wrote_its_descriptor_needs_the_tensormap_fences(release, acquire):
    A = ((np.arange(96 * 64) % 251) - 125).astype(np.float16).reshape(96, 64)
    tA = from_dlpack(A, assumed_align=16).mark_layout_dynamic()
    atom, tma = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), tA, _sl(), (64, 64))
    B = np.full((2, 64, 64), -1, np.float16)
    k = _build_and_load(tma, tA, from_dlpack(np.array([40, 96], np.int32)),
                        from_dlpack(np.zeros(256, np.uint8), assumed_align=8), from_dlpack(B), _sl(), atom, release,
                        acquire)
    if release and acquire:
        k.launch(grid=2, block=64)
        assert (B[0, :40] == A[:40]).all() and not B[0, 40:].any() and (B[1, :56] == A[40:]).all()
        return
    missing = "not released to the tensormap proxy" if not release else "this thread did not acquire it"
    with pytest.raises(LaunchError, match=rf"test_tensormap_built.py:\d+\): TMA load through a descriptor pointer: "
                                          rf"the descriptor was written in this launch \(.*\) and {missing}"):
        k.launch(grid=2, block=64)
