"""SM90 TMA: make_tiled_tma_atom's tensor-map description and checks; the TMA load in kernels on
the CPU (box copy into swizzled smem, zero fill at the edges, complete_tx on the mbarrier) and in CUDA."""

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

K_SW128 = warpgroup.SmemLayoutAtomKind.K_SW128


def _smem(kind, dtype, tile):
    return cute.tile_to_shape(warpgroup.make_smem_layout_atom(kind, dtype), tile, (0, 1))


def _a(m, k, dtype=np.float16):
    return from_dlpack((np.arange(m * k) % 251).astype(dtype).reshape(m, k))


def test_descriptor_of_a_k_major_tile():
    atom, t = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), _a(256, 128),
                                          _smem(K_SW128, cute.Float16, (128, 64)), (128, 64))
    d = atom.desc
    assert (d.dims, d.strides, d.box, d.swizzle, d.modes) == ((128, 256), (2, 256), (64, 128), 3, (1, 0))
    assert d.box_bytes == 128 * 64 * 2 == atom.size_in_bytes
    args = d.cu_encode_args(0x1000)
    assert args["globalDim"] == [128, 256] and args["globalStrides"] == [256] and args["boxDim"] == [64, 128]
    assert args["tensorDataType"] == 6 and args["swizzle"] == 3 and args["oobFill"] == 0
    # the TMA tensor is the coordinate view of A: A's shape, its modes COORD_EXTENT apart (a tile past A's
    # extent keeps its coordinates), contiguous K first
    assert t.layout == cute.make_layout((256, 128), stride=(COORD_EXTENT, 1)) and t.engine is atom.host_engine


@pytest.mark.parametrize("kind,b", [(warpgroup.SmemLayoutAtomKind.K_SW64, 2), (warpgroup.SmemLayoutAtomKind.K_SW32, 1),
                                    (warpgroup.SmemLayoutAtomKind.K_INTER, 0)])
def test_narrower_swizzles(kind, b):
    k = {2: 32, 1: 16, 0: 8}[b]
    atom, _ = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), _a(64, 64),
                                          _smem(kind, cute.Float16, (64, k)), (64, k))
    assert atom.desc.swizzle == b


def test_a_mode_of_extent_one_may_have_any_stride():
    # CuTe DSL 4.8.1 makes a TMA atom of (64,1,2):(1,1,128) (its TMA tensor (64,1,2):(1@0,0,1@1)): an extent-1 mode's
    # stride of one element is no TMA stride (mamba2_ssd's tensors of one head or chunk have such modes)
    op = cpasync.CopyBulkTensorTileG2SOp()
    t = cute.make_tensor(np.zeros(64 * 4, np.float16), cute.make_layout((64, 1, 2), stride=(1, 1, 128)))
    atom, _ = cpasync.make_tiled_tma_atom(op, t, cute.make_layout(64), (64,))
    assert atom.desc.box[0] == 64
    # its byte stride in the descriptor is 0, as CuTe's; the driver refuses anything not a multiple of 16 (a
    # byte stride of 1 failed every GPU launch of CUTLASS's dense_gemm.py with L = 1: CUDA_ERROR_INVALID_VALUE)
    args = atom.desc.cu_encode_args(1 << 20)
    assert args["globalStrides"] == [256, 0]
    from cutelab.kernel.cuda.fakegpu import FakeDriver
    err, _ = FakeDriver().cuTensorMapEncodeTiled(args["tensorDataType"], args["tensorRank"], 1 << 20, args["globalDim"],
                                                 args["globalStrides"], args["boxDim"], args["elementStrides"], 0,
                                                 args["swizzle"], 2, 0)
    assert err == 0
    bad = dict(args, globalStrides=[256, 1])
    assert FakeDriver().cuTensorMapEncodeTiled(bad["tensorDataType"], 3, 1 << 20, bad["globalDim"], bad["globalStrides"],
                                               bad["boxDim"], bad["elementStrides"], 0, bad["swizzle"], 2, 0)[0] == 1
    with pytest.raises(LayoutError, match="not a multiple of 16"):  # extent 2: its stride counts
        t = cute.make_tensor(np.zeros(64 * 8, np.float16), cute.make_layout((64, 2, 2), stride=(1, 68, 256)))
        cpasync.make_tiled_tma_atom(op, t, cute.make_layout(64), (64,))


def test_refusals():
    op = cpasync.CopyBulkTensorTileG2SOp()
    with pytest.raises(LayoutError, match="smem_layout puts it at byte"):  # M-major smem for a K-major tensor
        mn = cute.tile_to_shape(warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.MN_SW128, cute.Float16),
                                (64, 64), (0, 1))
        cpasync.make_tiled_tma_atom(op, _a(128, 128), mn, (64, 64))
    # a tile wider than the swizzle span is two boxes side by side (as CuTe issues them), each at its smem start
    wide, _ = cpasync.make_tiled_tma_atom(op, _a(128, 128), _smem(K_SW128, cute.Float16, (64, 128)), (64, 128))
    assert wide.desc.box == (64, 64) and wide.boxes == [((0, 0), 0), ((0, 64), 64 * 64)]
    with pytest.raises(LayoutError, match="not a multiple of 16"):
        cpasync.make_tiled_tma_atom(op, _a(64, 68), _smem(K_SW128, cute.Float16, (64, 64)), (64, 64))
    with pytest.raises(LayoutError, match="multicast"):
        cpasync.make_tiled_tma_atom(op, _a(128, 128), _smem(K_SW128, cute.Float16, (64, 64)), (64, 64), 2)
    with pytest.raises(LayoutError, match="at most 256"):
        cpasync.make_tiled_tma_atom(op, _a(512, 64), cute.make_layout((512, 64), stride=(64, 1)), (512, 64))
    # a 1-D tile of 16384 (CUTLASS's all_reduce_tma) is boxes of 256 side by side, as CuTe DSL 4.8.1 makes them
    flat, _ = cpasync.make_tiled_tma_atom(op, from_dlpack(np.zeros(32768, np.float32)), cute.make_layout(16384),
                                          (16384,))
    assert flat.desc.box == (256,) and len(flat.boxes) == 64 and flat.boxes[1] == ((256,), 256)
    with pytest.raises(LayoutError, match="stride 1"):
        t = cute.make_tensor(np.zeros(64 * 64 * 2, np.float16), cute.make_layout((64, 64), stride=(128, 2)))
        cpasync.make_tiled_tma_atom(op, t, cute.make_layout((64, 64), stride=(64, 1)), (64, 64))
    with pytest.raises(LayoutError, match="only CopyBulkTensorTileG2SOp"):
        cpasync.make_tiled_tma_atom(cpasync.CopyG2SOp(), _a(64, 64), _smem(K_SW128, cute.Float16, (64, 64)), (64, 64))


@cute.kernel
def tma_roundtrip(atom: cutlass.Constexpr, tA: cute.Tensor, B: cute.Tensor, sl: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bx, by, _ = cute.arch.block_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sA = smem.allocate_tensor(cutlass.Float16, sl.outer, 1024, swizzle=sl.inner)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    gA = cute.local_tile(tA, (64, 64), (bx, by))
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bars.iterator, 64 * 64 * 2)
        # loc=/ip=: CuTe DSL's copy takes them (flash_attn.cute's copy_utils.copy_tma passes its own on)
        cute.copy(atom, gA, sA, tma_bar_ptr=bars.iterator, loc=None, ip=None)
    cute.arch.mbarrier_wait(bars.iterator, 0)
    for i in range(64):  # thread t reads column t of the tile, through the swizzled layout
        B[bx * 64 + i, by * 64 + tidx] = sA[i, tidx]


def test_tma_load_through_swizzled_smem_with_zero_fill():
    M, K = 100, 72  # partial tiles: TMA fills what lies outside the tensor with zeros
    A = (np.arange(M * K) % 251).astype(np.float16).reshape(M, K)
    sl = _smem(K_SW128, cute.Float16, (64, 64))
    atom, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), from_dlpack(A), sl, (64, 64))
    B = np.full((128, 128), -1, dtype=np.float16)
    tma_roundtrip(atom, tA, from_dlpack(B), sl).launch(grid=(2, 2), block=64)
    ref = np.zeros((128, 128), np.float16)
    ref[:M, :K] = A
    np.testing.assert_array_equal(B, ref)
    ir = last_launch().ir
    # the smem image is the hardware's: element (m, k) at byte Swizzle<3,4,3>(2 * (64 m + k))
    src = cuda.render(ir)
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes" in src
    assert "const __grid_constant__ cl_tensormap tmap_tA" in src
    assert "mbarrier.arrive.expect_tx.shared::cta.b64" in src
    nvcc_compiles(src)


@cute.kernel
def tma_no_expect(atom: cutlass.Constexpr, tA: cute.Tensor, B: cute.Tensor, sl: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sA = smem.allocate_tensor(cutlass.Float16, sl.outer, 1024, swizzle=sl.inner)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 2)  # two arrivals expected, one made: the wait never completes
    cute.arch.sync_threads()
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bars.iterator, 64 * 64 * 2)
        cute.copy(atom, cute.local_tile(tA, (64, 64), (0, 0)), sA, tma_bar_ptr=bars.iterator)
    cute.arch.mbarrier_wait(bars.iterator, 0)
    B[0, 0] = sA[0, 0]


def test_wait_for_a_missing_arrival_after_tma_is_reported():
    from cutelab.errors import LaunchError

    sl = _smem(K_SW128, cute.Float16, (64, 64))
    atom, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), _a(64, 64), sl, (64, 64))
    B = np.zeros((1, 1), np.float16)
    with pytest.raises(LaunchError, match=r"1 of 2 arrivals and 0 transaction bytes"):
        tma_no_expect(atom, tA, from_dlpack(B), sl).launch(grid=1, block=32)


@cute.kernel
def tma_misuse(atom: cutlass.Constexpr, tA: cute.Tensor, sl: cutlass.Constexpr, case: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    if case == "plain":
        sA = smem.allocate_tensor(cutlass.Float16, sl.outer, 1024)
    elif case == "sw64":
        sA = smem.allocate_tensor(cutlass.Float16, sl.outer, 1024, swizzle=cute.make_swizzle(2, 4, 3))
    else:
        sA = smem.allocate_tensor(cutlass.Float16, sl.outer, 1024, swizzle=sl.inner)
    g = cute.local_tile(tA, (64, 64), (0, 0))
    if case == "nobar":
        cute.copy(atom, g, sA)
    else:
        cute.copy(atom, g, sA, tma_bar_ptr=bars.iterator)


@pytest.mark.parametrize("case,msg", [("nobar", "pass tma_bar_ptr"), ("plain", "not swizzled"),
                                      ("sw64", "128-byte rows but the destination's memory is")])
def test_kernel_misuse_is_refused(case, msg):
    sl = _smem(K_SW128, cute.Float16, (64, 64))
    atom, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), _a(64, 64), sl, (64, 64))
    with pytest.raises(TraceError, match=msg):
        tma_misuse(atom, tA, sl, case).launch(grid=1, block=32)


@cute.kernel
def two_boxes(a1: cutlass.Constexpr, a2: cutlass.Constexpr, tA: cute.Tensor, sl: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sA = smem.allocate_tensor(cutlass.Float16, sl.outer, 1024, swizzle=sl.inner)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 1)
    cute.arch.sync_threads()
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bars.iterator, 2 * 64 * 64 * 2)
        cute.copy(a1, cute.local_tile(tA, (64, 64), (0, 0)), sA, tma_bar_ptr=bars.iterator)
        cute.copy(a2, cute.local_tile(tA, (64, 64), (1, 0)), sA, tma_bar_ptr=bars.iterator)
    cute.arch.mbarrier_wait(bars.iterator, 0)


def test_tensor_map_parameters_follow_the_cuda_signature(monkeypatch):
    from cutelab.kernel.cuda.driver import ParamBuffer
    from cutelab.kernel.instr.tma import TensorMapArgs
    from cutelab.kernel.instr import tma as kernel_tma

    sl = _smem(K_SW128, cute.Float16, (64, 64))
    A = _a(128, 64)
    a1, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), A, sl, (64, 64))
    sl_plain = cute.make_layout((64, 64), stride=(64, 1))  # a second descriptor of the same tensor (no swizzle)
    a2, _ = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), A, sl_plain, (64, 64))
    assert a2.desc.swizzle == 0 and a1.desc != a2.desc
    with pytest.raises(TraceError, match="no-byte rows"):  # a2's plain layout does not fit swizzled memory
        two_boxes(a1, a2, tA, sl).launch(grid=1, block=32)
    a3, _ = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), A, sl, (64, 64))
    two_boxes(a1, a3, tA, sl).launch(grid=1, block=32)  # equal descriptors share one map
    ir = last_launch().ir
    src = cuda.render(ir)
    assert src.count("cl_tensormap tmap_tA") == 1
    maps = TensorMapArgs(ir)
    assert len(maps) == 1 and maps.items[0][1] == a1.desc
    calls = []

    def fake_encode(desc, address):
        calls.append((desc, address))
        return bytes(range(128))

    monkeypatch.setattr(kernel_tma, "encode_tensor_map", fake_encode)
    kernel_tma._ENCODED.clear()

    buf = ParamBuffer(len(ir.params) + len(maps))
    maps.fill(buf, [0x7000], len(ir.params))
    p = int(buf.ptrs[len(ir.params)])
    assert p % 128 == 0 and calls == [(a1.desc, 0x7000)]
    assert bytes(maps.mem[:128]) == bytes(range(128))
    maps.fill(buf, [0x7000], len(ir.params))  # the same address: the map is in place, nothing encoded
    assert calls == [(a1.desc, 0x7000)]
    maps.fill(buf, [0x9000], len(ir.params))  # a new address: encoded once
    maps.fill(buf, [0x9000], len(ir.params))
    assert calls == [(a1.desc, 0x7000), (a1.desc, 0x9000)]
    other = TensorMapArgs(ir)  # another plan's maps: the encoded map of a (descriptor, address) seen is reused
    other.fill(ParamBuffer(len(ir.params) + 1), [0x7000], len(ir.params))
    assert calls == [(a1.desc, 0x7000), (a1.desc, 0x9000)] and bytes(other.mem[:128]) == bytes(range(128))


def test_fp8_tiles_are_described_as_bytes():
    """The table had the fp8 names in lower case (f8e4m3fn), which no element type has: fp8 was refused."""
    a = _a(64, 128, np.uint8)
    a.element_type = cutlass.Float8E4M3FN
    atom, _ = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), a,
                                          cute.make_layout((64, 128), stride=(128, 1)), (64, 128))
    assert atom.desc.cu_encode_args(0x1000)["tensorDataType"] == 0 and atom.desc.box_bytes == 64 * 128


@cute.kernel
def tma_nested_tiles(atom: cutlass.Constexpr, tA: cute.Tensor, B: cute.Tensor, sl: cutlass.Constexpr):
    """Block (bx, h, b) loads tile bx of head h, batch b of A (s, d, ((h, one), b)) and writes it to B."""
    tidx, _, _ = cute.arch.thread_idx()
    bx, h, b = cute.arch.block_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sA = smem.allocate_tensor(cutlass.Float16, sl.outer, 1024, swizzle=sl.inner)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    gA = cute.local_tile(tA[(None, None, ((h, 0), b))], (64, 64), (bx, 0))
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bars.iterator, 64 * 64 * 2)
        cute.copy(atom, gA, sA, tma_bar_ptr=bars.iterator)
    cute.arch.mbarrier_wait(bars.iterator, 0)
    for i in range(64):
        B[b, h, bx * 64 + i, tidx] = sA[i, tidx]


def test_tma_of_a_tensor_whose_untiled_modes_are_nested():
    """FMHA's Q/K/V: (seq, dim, ((heads per group, groups), batch)); the nested modes become TMA dimensions of
    box 1 (those of one element are dropped), as CuTe flattens them."""
    S, D, H, Bt = 128, 64, 3, 2
    A = (np.arange(Bt * H * S * D) % 251).astype(np.float16).reshape(Bt, H, S, D)
    lay = cute.make_layout((S, D, ((H, 1), Bt)), stride=(D, 1, ((S * D, 0), H * S * D)))
    tA_ = cute.make_tensor(A.ravel(), lay)
    sl = _smem(K_SW128, cute.Float16, (64, 64))
    atom, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), tA_, sl, (64, 64))
    assert atom.desc.dims == (D, S, H, Bt) and atom.desc.box == (64, 64, 1, 1)
    B = np.zeros((Bt, H, S, D), np.float16)
    tma_nested_tiles(atom, tA, from_dlpack(B), sl).launch(grid=(S // 64, H, Bt), block=64)
    np.testing.assert_array_equal(B, A)
    src = cuda.render(last_launch().ir)
    assert "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes" in src
    nvcc_compiles(src)


@cute.kernel
def tma_bcast_tiles(atom: cutlass.Constexpr, tA: cute.Tensor, B: cute.Tensor, sl: cutlass.Constexpr):
    """Block (bx, h, b) loads tile bx of query head 1 of group h, batch b of A (s, d, ((2, h), b)) whose query
    heads of a group share one K/V head (stride 0), and writes it to B."""
    tidx, _, _ = cute.arch.thread_idx()
    bx, h, b = cute.arch.block_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sA = smem.allocate_tensor(cutlass.Float16, sl.outer, 1024, swizzle=sl.inner)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    gA = cute.local_tile(tA[(None, None, ((1, h), b))], (64, 64), (bx, 0))
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bars.iterator, 64 * 64 * 2)
        cute.copy(atom, gA, sA, tma_bar_ptr=bars.iterator)
    cute.arch.mbarrier_wait(bars.iterator, 0)
    for i in range(64):
        B[b, h, bx * 64 + i, tidx] = sA[i, tidx]


def test_tma_of_a_tensor_with_a_broadcast_mode():
    """The FMHA's K/V with grouped query heads: (seq, dim, ((query heads per K/V head, K/V heads), batch)), the
    first of stride 0. The broadcast mode moves no address, so the tensor map has no dimension for it (as CuTe
    collapses it); every query head of a group reads its K/V head's tile."""
    S, D, H, Bt = 128, 64, 3, 2
    A = (np.arange(Bt * H * S * D) % 251).astype(np.float16).reshape(Bt, H, S, D)
    bcast = cute.make_tensor(A.ravel(), cute.make_layout((S, D, ((2, H), Bt)), stride=(D, 1, ((0, S * D), H * S * D))))
    sl = _smem(K_SW128, cute.Float16, (64, 64))
    atom, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), bcast, sl, (64, 64))
    assert atom.desc.dims == (D, S, H, Bt) and atom.desc.box == (64, 64, 1, 1)
    B = np.zeros((Bt, H, S, D), np.float16)
    tma_bcast_tiles(atom, tA, from_dlpack(B), sl).launch(grid=(S // 64, H, Bt), block=64)
    np.testing.assert_array_equal(B, A)
    nvcc_compiles(cuda.render(last_launch().ir))


@cute.kernel
def _store_tiles(atom: cutlass.Constexpr, tC: cute.Tensor, sl: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bx, by, _ = cute.arch.block_idx()
    smem = cutlass.utils.SmemAllocator()
    sC = smem.allocate_tensor(cutlass.Float16, sl.outer, 1024, swizzle=sl.inner)
    for i in range(64):
        sC[i, tidx] = cutlass.Float16(bx * 2 + by + 1)
    cute.arch.fence_proxy("async.shared", space="cta")
    cute.arch.sync_threads()
    if tidx == 0:
        cute.copy(atom, sC, cute.local_tile(tC, (64, 64), (bx, by)))
        cute.arch.cp_async_bulk_commit_group()
        cute.arch.cp_async_bulk_wait_group(0)


def test_a_tma_store_of_a_tile_past_the_tensors_columns_writes_nothing():
    """C is 100 x 72: the tiles of column 1 (64..127) lie partly past its 72 columns, and a grid of 2 x 3 tiles
    has a column (128..191) wholly past them. The TMA tensor keeps coordinates apart (C's coordinate view),
    so those elements are dropped, as TMA drops them, instead of landing on the next rows."""
    C = np.full((100, 72), -1, np.float16)
    sl = cute.tile_to_shape(warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, cute.Float16),
                            (64, 64), (0, 1))
    atom, tC = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), from_dlpack(C, assumed_align=16), sl,
                                           (64, 64))
    _store_tiles(atom, tC, sl).launch(grid=(2, 3), block=64)
    ref = np.zeros((100, 72), np.float16)
    for bx in range(2):
        for by in range(2):
            ref[bx * 64:(bx + 1) * 64, by * 64:(by + 1) * 64] = bx * 2 + by + 1
    np.testing.assert_array_equal(C, ref)


@cute.kernel
def _packed_rows(atom: cutlass.Constexpr, tQ: cute.Tensor, out: cute.Tensor, sl: cutlass.Constexpr):
    # flash_attn.cute's packed GQA: the rows of a tile are (2 heads, 8 positions) of a ((heads, seqlen), d) view
    tidx, _, _ = cute.arch.thread_idx()
    hx, sx, _ = cute.arch.block_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sQ = smem.allocate_tensor(cutlass.Float16, sl.outer, 1024, swizzle=sl.inner)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    g = cute.local_tile(tQ, ((2, 8), 64), ((hx, sx), 0))
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bars.iterator, 16 * 64 * 2)
        cute.copy(atom, g, sQ, tma_bar_ptr=bars.iterator)
    cute.arch.mbarrier_wait(bars.iterator, 0)
    for i in range(16):
        out[hx, sx, i, tidx] = sQ[i, tidx]


def test_tma_load_of_a_hierarchical_tile_of_hierarchical_modes():
    S, H, D = 16, 4, 64
    X = (np.arange(S * H * D) % 241).astype(np.float16).reshape(S, H, D)
    # ((heads, seqlen), d) over the (seqlen, heads, d) row-major tensor, as pack_gqa_layout makes it
    packed = cute.make_tensor(from_dlpack(X).iterator, cute.make_layout(((H, S), D), stride=((D, H * D), 1)))
    sl = _smem(K_SW128, cute.Float16, (16, 64))
    atom, tQ = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), packed, sl, ((2, 8), 64))
    assert atom.desc.box == (64, 2, 8)  # each sub-mode a TMA dimension, the innermost (d) first
    out = np.zeros((2, 2, 16, 64), np.float16)
    _packed_rows(atom, tQ, from_dlpack(out), sl).launch(grid=(2, 2, 1), block=(64, 1, 1))
    for hx in range(2):
        for sx in range(2):
            for i in range(16):  # tile row i is head 2 hx + i % 2 at position 8 sx + i // 2
                assert out[hx, sx, i].tolist() == X[8 * sx + i // 2, 2 * hx + i % 2].tolist()
    with pytest.raises(LayoutError, match=r"cta_tiler \(\(2,8\),\(64,1\)\) is not congruent"):
        cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), packed, sl, ((2, 8), (64, 1)))


@cute.kernel
def _store_concat_rows(atom: cutlass.Constexpr, tD: cute.Tensor, sl: cutlass.Constexpr):
    # quack's concatenated output: D's rows as ((2, M / 2)), two halves; a tile is 32 rows of each half
    tidx, _, _ = cute.arch.thread_idx()
    bx, _, _ = cute.arch.block_idx()
    smem = cutlass.utils.SmemAllocator()
    sD = smem.allocate_tensor(cutlass.Float16, sl.outer, 1024, swizzle=sl.inner)
    for i in range(64):
        sD[i, tidx] = cutlass.Float16(bx * 64 + i)
    cute.arch.fence_proxy("async.shared", space="cta")
    cute.arch.sync_threads()
    g = cute.local_tile(tD, ((2, 32), 64), ((0, bx), 0))
    if tidx == 0:
        cute.copy(atom, sD, g)
        cute.arch.cp_async_bulk_commit_group()
        cute.arch.cp_async_bulk_wait_group(0)


def test_tma_store_of_a_tile_over_a_hierarchical_mode():
    """The TMA store of quack's concatenated GEMM output (test_mlp_concat_layout): D (M x 64) seen as
    ((2, M / 2), 64), its tile given as the CTA-value layout over coordinates ((2,32),64):((1@0@0,1@1@0),1@1)
    (composition of the identity layout with the epilogue tile); each sub-mode is a TMA dimension, and tile row
    i = a + 2 r (a half, r a row in it) lands on row a * M / 2 + r of the CTA's rows. M / 2 = 48 rows: the second
    CTA's tile has 16 rows past the end of each half, which TMA drops (the TMA tensor keeps them apart from the
    next half's rows, which the tensor's own offsets would alias them onto)."""
    from cutelab.layout import Layout, ScaledBasis

    M, N = 96, 64
    half = M // 2
    D = np.full((M, N), -1, np.float16)
    concat = cute.make_tensor(from_dlpack(D, assumed_align=16).iterator,
                              cute.make_layout(((2, half), N), stride=((half * N, N), 1)))
    tile = Layout._raw(((2, 32), 64), ((ScaledBasis(1, (0, 0)), ScaledBasis(1, (0, 1))), ScaledBasis(1, (1,))))
    sl = _smem(K_SW128, cute.Float16, (64, 64))
    atom, tD = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileS2GOp(), concat, sl, tile)
    assert atom.desc.box == (64, 2, 32)
    _store_concat_rows(atom, tD, sl).launch(grid=(2, 1, 1), block=(64, 1, 1))
    ref = np.zeros((M, N), np.float16)
    for bx in range(2):
        for a in range(2):
            for r in range(32):
                if 32 * bx + r < half:
                    ref[a * half + 32 * bx + r] = bx * 64 + a + 2 * r
    np.testing.assert_array_equal(D, ref)
    nvcc_compiles(cuda.render(last_launch().ir))


@cute.kernel
def tma_rows_by_extent(atom: cutlass.Constexpr, tA: cute.Tensor, B: cute.Tensor, sl: cutlass.Constexpr):
    """flash_attn.cute's SM90 forward in small: one TMA box of 64 rows, the rows written out up to the
    row count read off the TMA tensor (its seqlen_q)."""
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sA = smem.allocate_tensor(cutlass.Float16, sl, 128)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    gA = cute.local_tile(tA, (64, 16), (0, 0))
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bars.iterator, 64 * 16 * 2)
        cute.copy(atom, gA, sA, tma_bar_ptr=bars.iterator)
    cute.arch.mbarrier_wait(bars.iterator, 0)
    if tidx < tA.shape[0]:
        for j in range(8):
            B[tidx, j] = sA[tidx, j]


@pytest.mark.parametrize("dynamic", [False, True])
def test_the_tma_tensor_of_a_tensor_narrower_than_its_tile_keeps_its_extents(dynamic):
    # Q of 40 rows and head dim 8 under a 64 x 16 tile: narrower than the tile in every mode. Its TMA tensor
    # keeps the tensor's extents (CuTe DSL's coordinate tensor has the tensor's shape); it had 2^20 rows, so
    # the kernel's row check let rows 40..63 through and their stores fell outside B (flash_attn.cute's SM90
    # small-head forward: 'store to mLSE: offsets [0, 567] fall outside the tensor's 512 elements')
    A = (np.arange(40 * 8) % 251).astype(np.float16).reshape(40, 8)
    tensor = from_dlpack(A, assumed_align=16)
    if dynamic:
        tensor = tensor.mark_layout_dynamic()
    sl = cute.make_layout((64, 16), stride=(16, 1))
    atom, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), tensor, sl, (64, 16))
    assert [int(e) for e in tA.shape] == [40, 8]
    assert [int(e) for e in tA.layout.stride] == [COORD_EXTENT, 1]
    B = np.full((40, 8), -1, dtype=np.float16)
    tma_rows_by_extent(atom, tA, from_dlpack(B), sl).launch(grid=1, block=64)
    np.testing.assert_array_equal(B, A)


@cute.kernel
def _rows64(atom: cutlass.Constexpr, tA: cute.Tensor, B: cute.Tensor, sl: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bx, _, _ = cute.arch.block_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sA = smem.allocate_tensor(cutlass.Int8, sl, 1024)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    gA = cute.local_tile(tA, (64, 128), (bx, 0))
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bars.iterator, 64 * 128)
        cute.copy(atom, gA, sA, tma_bar_ptr=bars.iterator)
    cute.arch.mbarrier_wait(bars.iterator, 0)
    for k in range(128):
        B[bx * 64 + tidx, k] = sA[tidx, k]


def test_unswizzled_rows_narrower_than_the_tile_are_several_boxes():
    # a K-major int8 tile of 128 columns in shared memory rows of 64 bytes (the second half 4 KiB on, as CUTLASS's
    # mixed-input FMHA lays out K): two 64 x 64 boxes side by side, as CuTe cuts the tile
    A = (np.arange(128 * 256) % 127).astype(np.int8).reshape(128, 256)
    sl = cute.make_layout((64, (64, 2)), stride=(64, (1, 4096)))
    atom, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), from_dlpack(A), sl, (64, 128))
    assert atom.desc.box == (64, 64) and atom.boxes == [((0, 0), 0), ((0, 64), 4096)]
    B = np.zeros((128, 128), np.int8)
    _rows64(atom, tA, from_dlpack(B), sl).launch(grid=(2, 1, 1), block=(64, 1, 1))
    np.testing.assert_array_equal(B, A[:, :128])


def test_a_runs_tile_of_half_a_hierarchical_mode_takes_narrower_rows():
    # the tile takes 128 of a (8, 32) mode's 256 contiguous elements: rows of 128 (CUTLASS's mixed-input FMHA decode)
    g = from_dlpack(np.zeros(256, np.float32))
    t = cute.make_tensor(g.iterator, cute.make_layout((1, (8, 32), (1, 1)), stride=(0, (1, 8), (0, 0))))
    atom, _ = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), t, cute.make_layout((1, 128),
                                                                                                 stride=(0, 1)), (1, 128))
    assert (atom.desc.dims, atom.desc.box, atom.row) == ((128, 2), (128, 1), 128)


def test_the_tma_tensor_of_a_dynamic_tensor_has_dynamic_extents():
    # CuTe DSL's TMA tensor of a tensor marked dynamic has dynamic extents: a GEMM's k-tile count read off it
    # (cute.size(gA_mkl, mode=[3])) bounds a runtime loop; with the extents' values the mainloop was unrolled once
    # per k-tile (CUTLASS's dense_gemm_fp8_2xacc.py printed 34,012 CUDA lines at 4096^3, 4,686 now)
    from cutelab.dynamic import DynInt

    a = _a(256, 512).mark_layout_dynamic(leading_dim=1)
    _, t = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), a, _smem(K_SW128, cute.Float16, (128, 64)),
                                       (128, 64))
    assert all(type(e) is DynInt for e in t.shape) and [int(e) for e in t.shape] == [256, 512]
    k_tiles = cute.size(cute.local_tile(t, (128, 64), (None, None)), mode=[3])
    assert type(k_tiles) is DynInt and int(k_tiles) == 8
    _, s = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), _a(256, 512),
                                       _smem(K_SW128, cute.Float16, (128, 64)), (128, 64))
    assert s.shape == (256, 512) and not any(isinstance(e, DynInt) for e in s.shape)  # a static one stays static


@cute.kernel
def tma_prefetched(atom: cutlass.Constexpr, tA: cute.Tensor, B: cute.Tensor, sl: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sA = smem.allocate_tensor(cutlass.Float16, sl.outer, 1024, swizzle=sl.inner)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 1)
    cute.arch.sync_threads()
    if cute.arch.warp_idx() == 0:
        cpasync.prefetch_descriptor(atom)  # before the descriptor's first copy, as CUTLASS's Hopper kernels do
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bars.iterator, 64 * 64 * 2)
        cute.copy(atom, cute.local_tile(tA, (64, 64), (0, 0)), sA, tma_bar_ptr=bars.iterator)
    cute.arch.mbarrier_wait(bars.iterator, 0)
    for i in range(64):
        B[i, tidx] = sA[i, tidx]


def test_prefetch_descriptor_prefetches_the_copys_tensor_map():
    """cpasync.prefetch_descriptor(atom) in a kernel is CuTe DSL's prefetch.tensormap of the atom's tensor-map
    parameter (the one its copies name; no second map), a hint the CPU skips; it was dropped before, so the
    first TMA of each CTA waited for the descriptor's fetch (CUTLASS's Hopper FMHA prefetches its four)."""
    A = (np.arange(64 * 64) % 251).astype(np.float16).reshape(64, 64)
    sl = _smem(K_SW128, cute.Float16, (64, 64))
    atom, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), from_dlpack(A), sl, (64, 64))
    B = np.zeros((64, 64), np.float16)
    tma_prefetched(atom, tA, from_dlpack(B), sl).launch(grid=1, block=64)
    np.testing.assert_array_equal(B, A)
    src = cuda.render(last_launch().ir)
    body = src.split("__global__", 1)[1]
    pre = body.index('prefetch.tensormap [%0];" :: "l"((unsigned long long)&tmap_tA)')
    assert pre < body.index("cp.async.bulk.tensor.2d") and body.count("prefetch.tensormap") == 1
    assert src.count("cl_tensormap tmap_") == 1
    nvcc_compiles(src)
