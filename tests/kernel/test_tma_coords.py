"""The iterator of a TMA tensor in a kernel is its coordinates, one per TMA dimension (innermost first), as
CuTe DSL's; ``cute.make_tensor`` of them, moved by static or runtime integers, is the TMA tensor's view there
(CUTLASS's grouped mixed-input GEMM moves B's tile along N so: kernel/frontend/tma_coords.py)."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import TraceError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
from cutelab.nvgpu import cpasync, warpgroup
from cutelab.runtime import from_dlpack

from sm90_util import nvcc_compiles


def _smem():
    atom = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, cute.Float16)
    return cute.tile_to_shape(atom, (64, 64), (0, 1))


@cute.kernel
def moved_tile(atom: cutlass.Constexpr, tA: cute.Tensor, S: cute.Tensor, B: cute.Tensor, sl: cutlass.Constexpr,
               swap: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sA = smem.allocate_tensor(cutlass.Float16, sl.outer, 1024, swizzle=sl.inner)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    gA = cute.local_tile(tA, (64, 64), (0, 0))
    print("iterator", gA.iterator, cute.local_tile(tA, (64, 64), (1, 1)).iterator)
    rows = S[0]  # a runtime Int32: the row tile's start, read from memory
    # dimension 0 is K (the contiguous mode), dimension 1 is M: the tile at rows `rows`, columns 64
    c = (gA.iterator[0] + 64, rows + gA.iterator[1])
    if cutlass.const_expr(swap):
        c = (c[1], c[0])
    g = cute.make_tensor(c, gA.layout)
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bars.iterator, 64 * 64 * 2)
        cute.copy(atom, g, sA, tma_bar_ptr=bars.iterator)
    cute.arch.mbarrier_wait(bars.iterator, 0)
    for i in range(64):
        B[i, tidx] = sA[i, tidx]


def _run(swap=False):
    A = (np.arange(256 * 128) % 251).astype(np.float16).reshape(256, 128)
    sl = _smem()
    atom, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), from_dlpack(A), sl, (64, 64))
    B = np.full((64, 64), -1, np.float16)
    S = np.array([128], np.int32)
    moved_tile(atom, tA, from_dlpack(S), from_dlpack(B), sl, swap).launch(grid=1, block=64)
    return A, B


def test_a_tile_made_from_moved_coordinates_of_the_tma_tensor(capsys):
    A, B = _run()
    np.testing.assert_array_equal(B, A[128:192, 64:128])
    assert "iterator (0, 0) (64, 64)" in capsys.readouterr().out  # (K, M): CuTe DSL's order
    src = cuda.render(last_launch().ir)
    assert "cp.async.bulk.tensor.2d" in src
    nvcc_compiles(src)


def test_coordinates_out_of_their_places_are_refused():
    with pytest.raises(TraceError, match=r"are not the 2 coordinates of one TMA tensor's iterator"):
        _run(swap=True)


@cute.kernel
def through_other_atom(atom: cutlass.Constexpr, tA: cute.Tensor, B: cute.Tensor, sl: cutlass.Constexpr):
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
        cute.copy(atom, cute.local_tile(tA, (64, 64), (1, 0)), sA, tma_bar_ptr=bars.iterator)
    cute.arch.mbarrier_wait(bars.iterator, 0)
    for i in range(64):
        B[i, tidx] = sA[i, tidx]


def test_a_load_reads_its_atoms_tensor_at_the_sources_coordinates():
    # CuTe DSL's atom holds the tensor map: a tile of the TMA tensor of A copied with the atom of V (same shape)
    # loads V's tile (CUTLASS's mixed-input FMHA decode loads its V scales through the K scales' TMA tensor); V is
    # no argument of the kernel, its atom brings it
    A = (np.arange(128 * 64) % 251).astype(np.float16).reshape(128, 64)
    V = (A.astype(np.float32) * -1 - 3).astype(np.float16)
    sl = _smem()
    _, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), from_dlpack(A), sl, (64, 64))
    atom_v, _ = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), from_dlpack(V), sl, (64, 64))
    B = np.zeros((64, 64), np.float16)
    through_other_atom(atom_v, tA, from_dlpack(B), sl).launch(grid=1, block=64)
    np.testing.assert_array_equal(B, V[64:128])
