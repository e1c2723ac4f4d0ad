"""SM90 wgmma in kernels: GMMA descriptors as CuTe's make_gmma_desc builds them, the warpgroup MMA
on the CPU (TMA-loaded swizzled smem operands, accumulators through the C TV layout) against
numpy, and the wgmma PTX compiled with nvcc."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import LayoutError, TraceError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
from cutelab.kernel.instr.wgmma import gmma_desc_fields, make_gmma_desc
from cutelab.nvgpu import OperandMajorMode, cpasync, warpgroup
from cutelab.runtime import from_dlpack
from cutelab.utils import sm90

from sm90_util import nvcc_compiles

L = cute.make_layout


# (layout of one (MN,K) operand tile in elements, swizzle B, major) -> (layout type, LBO, SBO) in 16-byte
# units, worked out from include/cute/atom/mma_traits_sm90_gmma.hpp (canonical forms, LayoutType enum)
DESC_CASES = [
    (L(((8, 8), 16), stride=((64, 512), 1)), cute.Float16, 3, "K", (1, 1, 64)),     # K-major SW128
    (L(((8, 8), 16), stride=((32, 256), 1)), cute.BFloat16, 2, "K", (2, 1, 32)),    # K-major SW64
    (L(((8, 8), 16), stride=((16, 128), 1)), cute.Float16, 1, "K", (3, 1, 16)),     # K-major SW32
    (L(((8, 8), (8, 2)), stride=((8, 64), (1, 512))), cute.Float16, 0, "K", (0, 64, 8)),  # K-major interleaved
    (L(((8, 16), 16), stride=((64, 512), 1)), cute.Float16, 3, "K", (1, 1, 64)),    # 128 rows
    (L(((64, 2), (8, 2)), stride=((1, 512), (64, 1024))), cute.Float16, 3, "MN", (1, 64, 128)),  # MN-major SW128
    (L(((32, 2), (8, 2)), stride=((1, 256), (32, 512))), cute.Float16, 2, "MN", (2, 32, 64)),   # MN-major SW64
]


@pytest.mark.parametrize("layout,dtype,b,major,want", DESC_CASES)
def test_descriptor_fields(layout, dtype, b, major, want):
    assert tuple(gmma_desc_fields(layout, dtype, b, major)) == want


def test_descriptor_bits():
    d = make_gmma_desc(0x1230, (1, 1, 64))
    assert d & 0x3FFF == 0x123 and (d >> 16) & 0x3FFF == 1 and (d >> 32) & 0x3FFF == 64 and d >> 62 == 1
    assert make_gmma_desc(0, (0, 64, 8)) == (64 << 16) | (8 << 32)
    with pytest.raises(LayoutError, match="14 bits"):
        make_gmma_desc(0, (1, 1, 1 << 14))


def test_non_canonical_layouts_are_refused():
    with pytest.raises(LayoutError, match="not a canonical GMMA layout"):  # rows 64 B apart under a 128B swizzle
        gmma_desc_fields(L(((8, 8), 16), stride=((32, 256), 1)), cute.Float16, 3, "K")
    with pytest.raises(LayoutError, match="not a canonical GMMA layout"):  # K not contiguous
        gmma_desc_fields(L(((8, 8), 16), stride=((1, 8), 64)), cute.Float16, 3, "K")
    with pytest.raises(LayoutError, match="32 bytes"):
        gmma_desc_fields(L((64, 32), stride=(32, 1)), cute.Float16, 3, "K")




@cute.kernel
def wgmma_tile(ta: cutlass.Constexpr, tA: cute.Tensor, tb: cutlass.Constexpr, tB: cute.Tensor, gC: cute.Tensor,
               tiled_mma: cutlass.Constexpr, sa: cutlass.Constexpr, sb: cutlass.Constexpr, tx: cutlass.Constexpr,
               case: cutlass.Constexpr = "ok"):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sA = smem.allocate_tensor(ta.desc.dtype, sa.outer, 1024, swizzle=sa.inner)
    sB = smem.allocate_tensor(tb.desc.dtype, sb.outer, 1024, swizzle=sb.inner)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bars.iterator, tx)
        cute.copy(ta, cute.local_tile(tA, ta.tile, (0, 0)), sA[(None, None, 0)], tma_bar_ptr=bars.iterator)
        cute.copy(tb, cute.local_tile(tB, tb.tile, (0, 0)), sB[(None, None, 0)], tma_bar_ptr=bars.iterator)
    cute.arch.mbarrier_wait(bars.iterator, 0)
    thr = tiled_mma.get_slice(tidx)
    tCsA = thr.partition_A(sA)
    tCsB = thr.partition_B(sB)
    tCgC = thr.partition_C(gC)
    acc = cute.make_rmem_tensor(tCgC.shape, cutlass.Float32)
    tiled_mma.set(warpgroup.Field.ACCUMULATE, False)
    warpgroup.fence()
    for kb in range(cute.size(tCsA, mode=[2])):
        cute.gemm(tiled_mma, acc, tCsA[(None, None, kb, 0)], tCsB[(None, None, kb, 0)], acc)
        tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
    warpgroup.commit_group()
    if case == "overwrite":  # a race: A's stage is written while the wgmmas reading it are in flight
        for r in range(64):
            sA[tidx // 64 + 2 * r, tidx % 64, 0] = 0.0
    if case == "early_read":  # the accumulators are read before the wait: they still hold the old values
        cute.copy(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32), acc, tCgC)
    warpgroup.wait_group(0)
    if case != "early_read":
        cute.copy(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32), acc, tCgC)


def _to16(x, dtype):
    if dtype is cute.Float16:
        return x.astype(np.float16), x.astype(np.float16).astype(np.float32)
    u = x.astype(np.float32).view(np.uint32)
    bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return bits, (bits.astype(np.uint32) << 16).view(np.float32)


@pytest.mark.parametrize("dtype,BN,b_major", [(cute.Float16, 64, OperandMajorMode.K),
                                              (cute.BFloat16, 128, OperandMajorMode.K),
                                              (cute.Float16, 64, OperandMajorMode.MN)])
def test_wgmma_tile_matches_numpy_and_compiles(dtype, BN, b_major):
    BM, BK = 128, 64
    op = warpgroup.MmaF16BF16Op(dtype, cute.Float32, (64, BN, 16), warpgroup.OperandSource.SMEM,
                                OperandMajorMode.K, b_major)
    tiled_mma = cute.make_tiled_mma(op)
    b_layout = sm90.LayoutEnum.ROW_MAJOR if b_major is OperandMajorMode.K else sm90.LayoutEnum.COL_MAJOR
    sa = sm90.make_smem_layout_a(sm90.LayoutEnum.ROW_MAJOR, (BM, BN, BK), dtype, 1)
    sb = sm90.make_smem_layout_b(b_layout, (BM, BN, BK), dtype, 1)
    rng = np.random.default_rng(1)
    a_st, a_val = _to16(rng.standard_normal((BM, BK)), dtype)
    b_st, b_val = _to16(rng.standard_normal((BN, BK)), dtype)
    ta_ = from_dlpack(a_st) if dtype is cute.Float16 else cute.make_tensor(a_st.ravel(), L((BM, BK), stride=(BK, 1)))
    if dtype is cute.BFloat16:
        from cutelab.tensor import NumpyEngine
        ta_ = cute.make_tensor(NumpyEngine(a_st.ravel(), cute.BFloat16, "gmem", align=16), L((BM, BK), stride=(BK, 1)))
    if b_major is OperandMajorMode.K:
        b_mem, b_lay = b_st.ravel(), L((BN, BK), stride=(BK, 1))
    else:  # N contiguous: B is stored K x N
        b_mem, b_lay = np.ascontiguousarray(b_st.T).ravel(), L((BN, BK), stride=(1, BN))
    if dtype is cute.Float16:
        tb_ = cute.make_tensor(b_mem, b_lay)
    else:
        from cutelab.tensor import NumpyEngine
        tb_ = cute.make_tensor(NumpyEngine(b_mem, cute.BFloat16, "gmem", align=16), b_lay)
    ta, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), ta_, cute.slice_(sa, (None, None, 0)), (BM, BK))
    tb, tB = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), tb_, cute.slice_(sb, (None, None, 0)), (BN, BK))
    C = np.zeros((BM, BN), np.float32)
    wgmma_tile(ta, tA, tb, tB, from_dlpack(C), tiled_mma, sa, sb, (BM + BN) * BK * 2).launch(grid=1, block=128)
    ref = a_val.astype(np.float64) @ b_val.astype(np.float64).T
    np.testing.assert_allclose(C, ref, rtol=0, atol=1e-4 * np.abs(ref).max())
    src = cuda.render(last_launch().ir)
    name = {"f16": "f16", "bf16": "bf16"}[dtype.name]
    assert f"wgmma.mma_async.sync.aligned.m64n{BN}k16.f32.{name}.{name}" in src
    assert "wgmma.fence.sync.aligned" in src and "wgmma.wait_group.sync.aligned 0" in src
    # (2 m atoms x 4 k-blocks) the descriptors' thread-dependent start is hoisted to the top of the kernel, one per smem array,
    # and each wgmma adds its loop-dependent part in 16-byte units to it (no address arithmetic per wgmma)
    pro = [ln for ln in src.splitlines() if "const unsigned cl_gdesc" in ln]
    assert len(pro) == 2 and all(re.search(r"\(smem\d+_sw >> 4\)", ln) for ln in pro)
    assert src.count("(unsigned long long)(cl_gdesc0 + ") == 8 and "& 0x3FFFu" not in src
    # the first k-block (ACCUMULATE off: scale-d 0) only writes the accumulators ("=f": their old values
    # are dead); the later ones read and write them
    wg = [ln for ln in src.splitlines() if "wgmma.mma_async" in ln]
    first = [ln for ln in wg if '"=f"(' in ln]
    assert len(first) == 2 and all('"+f"' not in ln and ln.endswith('"r"(0) : "memory");') for ln in first)
    assert sum('"+f"(' in ln and ln.endswith('"r"(1) : "memory");') for ln in wg) == 6
    nvcc_compiles(src)


@pytest.mark.parametrize("case", ["overwrite", "early_read"])
def test_the_cpu_model_of_wgmma_is_asynchronous(case):
    """wgmmas execute at wait_group: a stage overwritten before the wait, or accumulators read
    before it, give what the hardware could give (zeros here), not a silently correct answer."""
    BM, BN, BK = 128, 64, 64
    dtype = cute.Float16
    op = warpgroup.MmaF16BF16Op(dtype, cute.Float32, (64, BN, 16), warpgroup.OperandSource.SMEM,
                                OperandMajorMode.K, OperandMajorMode.K)
    tiled_mma = cute.make_tiled_mma(op)
    sa = sm90.make_smem_layout_a(sm90.LayoutEnum.ROW_MAJOR, (BM, BN, BK), dtype, 1)
    sb = sm90.make_smem_layout_b(sm90.LayoutEnum.ROW_MAJOR, (BM, BN, BK), dtype, 1)
    A = np.ones((BM, BK), np.float16)
    B = np.ones((BN, BK), np.float16)
    ta, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), from_dlpack(A), cute.slice_(sa, (None, None, 0)), (BM, BK))
    tb, tB = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), from_dlpack(B), cute.slice_(sb, (None, None, 0)), (BN, BK))
    C = np.full((BM, BN), 7, np.float32)
    wgmma_tile(ta, tA, tb, tB, from_dlpack(C), tiled_mma, sa, sb, (BM + BN) * BK * 2, "ok").launch(grid=1, block=128)
    np.testing.assert_array_equal(C, BK)
    C[:] = 7
    wgmma_tile(ta, tA, tb, tB, from_dlpack(C), tiled_mma, sa, sb, (BM + BN) * BK * 2, case).launch(grid=1, block=128)
    np.testing.assert_array_equal(C, 0)


def test_kernels_with_wgmma_compile_for_sm_90a():
    from cutelab.kernel.instr.wgmma import target_arch

    BM, BN, BK = 64, 64, 64
    op = warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, BN, 16), warpgroup.OperandSource.SMEM,
                                OperandMajorMode.K, OperandMajorMode.K)
    tiled_mma = cute.make_tiled_mma(op)
    sa = sm90.make_smem_layout_a(sm90.LayoutEnum.ROW_MAJOR, (BM, BN, BK), cute.Float16, 1)
    sb = sm90.make_smem_layout_b(sm90.LayoutEnum.ROW_MAJOR, (BM, BN, BK), cute.Float16, 1)
    A = np.ones((BM, BK), np.float16)
    ta, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), from_dlpack(A), cute.slice_(sa, (None, None, 0)), (BM, BK))
    tb, tB = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), from_dlpack(A), cute.slice_(sb, (None, None, 0)), (BN, BK))
    C = np.zeros((BM, BN), np.float32)
    wgmma_tile(ta, tA, tb, tB, from_dlpack(C), tiled_mma, sa, sb, (BM + BN) * BK * 2).launch(grid=1, block=128)
    ir = last_launch().ir
    assert target_arch(ir, "sm_90") == "sm_90a" and target_arch(ir, "sm_100") == "sm_100"


@cute.kernel
def wgmma_misuse(tiled_mma: cutlass.Constexpr, sa: cutlass.Constexpr, sb: cutlass.Constexpr, gC: cute.Tensor,
                 case: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    sA = smem.allocate_tensor(cutlass.Float16, sa.outer, 1024, swizzle=sa.inner)
    sB = smem.allocate_tensor(cutlass.Float16, sb.outer, 1024, swizzle=sb.inner)
    thr = tiled_mma.get_slice(tidx % 128)
    tCsA, tCsB, tCgC = thr.partition_A(sA), thr.partition_B(sB), thr.partition_C(gC)
    acc = cute.make_rmem_tensor(tCgC.shape, cutlass.Float32)
    other = cute.make_rmem_tensor(tCgC.shape, cutlass.Float32)
    if case == "two_accumulators":
        cute.gemm(tiled_mma, acc, tCsA[(None, None, 0, 0)], tCsB[(None, None, 0, 0)], other)
    elif case == "whole_stage_mode":
        cute.gemm(tiled_mma, acc, tCsA, tCsB, acc)
    elif case == "per_warp_stage":  # each warp of the warpgroup names another stage: no one descriptor
        cute.gemm(tiled_mma, acc, tCsA[(None, None, 0, (tidx // 32) % 2)], tCsB[(None, None, 0, 0)], acc)
        warpgroup.commit_group()
        warpgroup.wait_group(0)
    elif case == "half_a_warpgroup":
        if tidx < 64:
            cute.gemm(tiled_mma, acc, tCsA[(None, None, 0, 0)], tCsB[(None, None, 0, 0)], acc)
        warpgroup.commit_group()
        warpgroup.wait_group(0)
    else:
        cute.gemm(tiled_mma, acc, tCsA[(None, None, 0, 0)], tCsB[(None, None, 0, 0)], acc)
        warpgroup.commit_group()
        warpgroup.wait_group(0)
    cute.copy(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32), acc, tCgC)


@pytest.mark.parametrize("case,block,err,msg", [
    ("two_accumulators", 128, TraceError, "must be both C and D"),
    ("whole_stage_mode", 128, TraceError, "must be partitioned as"),
    ("half_a_warpgroup", 128, "launch", "only some threads of a warpgroup"),
    ("ok", 96, "launch", "multiple of 128 threads"),
    ("per_warp_stage", 128, "launch", "at 4096 in its thread 32: a warpgroup's 128 threads must give the same"),
])
def test_wgmma_misuse(case, block, err, msg):
    from cutelab.errors import LaunchError

    op = warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, 64, 16), warpgroup.OperandSource.SMEM,
                                OperandMajorMode.K, OperandMajorMode.K)
    tiled_mma = cute.make_tiled_mma(op)
    sa = sm90.make_smem_layout_a(sm90.LayoutEnum.ROW_MAJOR, (64, 64, 64), cute.Float16, 2)
    sb = sm90.make_smem_layout_b(sm90.LayoutEnum.ROW_MAJOR, (64, 64, 64), cute.Float16, 1)
    C = np.zeros((64, 64), np.float32)
    with pytest.raises(LaunchError if err == "launch" else err, match=msg):
        wgmma_misuse(tiled_mma, sa, sb, from_dlpack(C), case).launch(grid=1, block=block)


def test_a_from_registers_must_be_a_register_fragment():
    op = warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, 64, 16), warpgroup.OperandSource.RMEM,
                                OperandMajorMode.K, OperandMajorMode.K)
    sa = sm90.make_smem_layout_a(sm90.LayoutEnum.ROW_MAJOR, (64, 64, 64), cute.Float16, 1)
    sb = sm90.make_smem_layout_b(sm90.LayoutEnum.ROW_MAJOR, (64, 64, 64), cute.Float16, 1)
    C = np.zeros((64, 64), np.float32)
    with pytest.raises(TraceError, match="OperandSource.RMEM"):
        wgmma_misuse(cute.make_tiled_mma(op), sa, sb, from_dlpack(C), "ok").launch(grid=1, block=128)


@cute.kernel
def wgmma_rs_tile(ta: cutlass.Constexpr, tA: cute.Tensor, tb: cutlass.Constexpr, tB: cute.Tensor, gC: cute.Tensor,
                  tiled_mma: cutlass.Constexpr, sa: cutlass.Constexpr, sb: cutlass.Constexpr, tx: cutlass.Constexpr):
    """A loaded by TMA, then by each thread into its register fragment (OperandSource.RMEM); B from smem."""
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sA = smem.allocate_tensor(ta.desc.dtype, sa.outer, 1024, swizzle=sa.inner)
    sB = smem.allocate_tensor(tb.desc.dtype, sb.outer, 1024, swizzle=sb.inner)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bars.iterator, tx)
        cute.copy(ta, cute.local_tile(tA, ta.tile, (0, 0)), sA[(None, None, 0)], tma_bar_ptr=bars.iterator)
        cute.copy(tb, cute.local_tile(tB, tb.tile, (0, 0)), sB[(None, None, 0)], tma_bar_ptr=bars.iterator)
    cute.arch.mbarrier_wait(bars.iterator, 0)
    thr = tiled_mma.get_slice(tidx)
    tCsA = thr.partition_A(sA)[(None, None, None, 0)]
    tCrA = tiled_mma.make_fragment_A(tCsA)
    tCrA.store(tCsA.load())
    tCsB = thr.partition_B(sB)
    tCgC = thr.partition_C(gC)
    acc = cute.make_rmem_tensor(tCgC.shape, cutlass.Float32)
    tiled_mma.set(warpgroup.Field.ACCUMULATE, False)
    warpgroup.fence()
    for kb in range(cute.size(tCrA, mode=[2])):
        cute.gemm(tiled_mma, acc, tCrA[(None, None, kb)], tCsB[(None, None, kb, 0)], acc)
        tiled_mma.set(warpgroup.Field.ACCUMULATE, True)
    warpgroup.commit_group()
    warpgroup.wait_group(0)
    cute.copy(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32), acc, tCgC)


def test_wgmma_with_a_from_registers_matches_numpy_and_compiles():
    BM, BN, BK = 128, 64, 64
    dtype = cute.Float16
    op = warpgroup.MmaF16BF16Op(dtype, cute.Float32, (64, BN, 16), warpgroup.OperandSource.RMEM,
                                OperandMajorMode.K, OperandMajorMode.K)
    tiled_mma = cute.make_tiled_mma(op)
    sa = sm90.make_smem_layout_a(sm90.LayoutEnum.ROW_MAJOR, (BM, BN, BK), dtype, 1)
    sb = sm90.make_smem_layout_b(sm90.LayoutEnum.ROW_MAJOR, (BM, BN, BK), dtype, 1)
    rng = np.random.default_rng(2)
    a_st, a_val = _to16(rng.standard_normal((BM, BK)), dtype)
    b_st, b_val = _to16(rng.standard_normal((BN, BK)), dtype)
    ta, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), from_dlpack(a_st),
                                         cute.slice_(sa, (None, None, 0)), (BM, BK))
    tb, tB = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), cute.make_tensor(b_st.ravel(), L((BN, BK), stride=(BK, 1))),
                                         cute.slice_(sb, (None, None, 0)), (BN, BK))
    C = np.zeros((BM, BN), np.float32)
    wgmma_rs_tile(ta, tA, tb, tB, from_dlpack(C), tiled_mma, sa, sb, (BM + BN) * BK * 2).launch(grid=1, block=128)
    ref = a_val.astype(np.float64) @ b_val.astype(np.float64).T
    np.testing.assert_allclose(C, ref, rtol=0, atol=1e-4 * np.abs(ref).max())
    src = cuda.render(last_launch().ir)
    # A as four .b32 registers, each two f16 values; B through its descriptor; trans-b only
    assert src.count(f"wgmma.mma_async.sync.aligned.m64n{BN}k16.f32.f16.f16 ") == 8  # 2 m atoms x 4 k-blocks
    assert "}, {%32, %33, %34, %35}, %36, p, 1, 1, 0;" in src and "cl_da" not in src
    nvcc_compiles(src)


@pytest.mark.gpu
def test_wgmma_with_a_from_registers_on_the_gpu_equals_torch():
    """The register packing of A (two f16 per .b32, lower value index low) against the hardware."""
    import torch

    BM, BN, BK = 128, 64, 64
    op = warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, BN, 16), warpgroup.OperandSource.RMEM,
                                OperandMajorMode.K, OperandMajorMode.K)
    sa = sm90.make_smem_layout_a(sm90.LayoutEnum.ROW_MAJOR, (BM, BN, BK), cute.Float16, 1)
    sb = sm90.make_smem_layout_b(sm90.LayoutEnum.ROW_MAJOR, (BM, BN, BK), cute.Float16, 1)
    a = torch.randn(BM, BK, device="cuda", dtype=torch.float16)
    b = torch.randn(BN, BK, device="cuda", dtype=torch.float16)
    c = torch.zeros(BM, BN, device="cuda", dtype=torch.float32)
    ta, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), from_dlpack(a),
                                         cute.slice_(sa, (None, None, 0)), (BM, BK))
    tb, tB = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), from_dlpack(b),
                                         cute.slice_(sb, (None, None, 0)), (BN, BK))
    wgmma_rs_tile(ta, tA, tb, tB, from_dlpack(c), cute.make_tiled_mma(op), sa, sb,
                  (BM + BN) * BK * 2).launch(grid=1, block=128)
    torch.cuda.synchronize()
    torch.testing.assert_close(c, a.float() @ b.float().T, atol=1e-2, rtol=1e-3)


@cute.kernel
def wgmma_runtime_accumulate(ta: cutlass.Constexpr, tA: cute.Tensor, tb: cutlass.Constexpr, tB: cute.Tensor,
                             gC: cute.Tensor, tiled_mma: cutlass.Constexpr, sa: cutlass.Constexpr, sb: cutlass.Constexpr,
                             tx: cutlass.Constexpr, flag: cutlass.Int32, case: cutlass.Constexpr):
    """quack's sm90_utils.gemm: a fresh atom whose ACCUMULATE is set to a runtime value, then True after the
    first k-block; the accumulators start at 1."""
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sA = smem.allocate_tensor(ta.desc.dtype, sa.outer, 1024, swizzle=sa.inner)
    sB = smem.allocate_tensor(tb.desc.dtype, sb.outer, 1024, swizzle=sb.inner)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bars.iterator, tx)
        cute.copy(ta, cute.local_tile(tA, ta.tile, (0, 0)), sA[(None, None, 0)], tma_bar_ptr=bars.iterator)
        cute.copy(tb, cute.local_tile(tB, tb.tile, (0, 0)), sB[(None, None, 0)], tma_bar_ptr=bars.iterator)
    cute.arch.mbarrier_wait(bars.iterator, 0)
    thr = tiled_mma.get_slice(tidx)
    tCsA, tCsB, tCgC = thr.partition_A(sA), thr.partition_B(sB), thr.partition_C(gC)
    acc = cute.make_rmem_tensor(tCgC.shape, cutlass.Float32)
    acc.fill(1.0)
    atom = cute.make_mma_atom(tiled_mma.op)
    if case == "per_thread":  # a different value in the threads of one warpgroup
        atom.set(warpgroup.Field.ACCUMULATE, tidx % 2 == 0)
    else:
        atom.set(warpgroup.Field.ACCUMULATE, flag != 0)
    warpgroup.fence()
    for kb in range(cute.size(tCsA, mode=[2])):
        cute.gemm(atom, acc, tCsA[(None, None, kb, 0)], tCsB[(None, None, kb, 0)], acc)
        atom.set(warpgroup.Field.ACCUMULATE, True)
    warpgroup.commit_group()
    warpgroup.wait_group(0)
    cute.copy(cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32), acc, tCgC)


def _runtime_accumulate_case(flag, case="ok"):
    BM, BN, BK = 128, 64, 64
    dtype = cute.Float16
    op = warpgroup.MmaF16BF16Op(dtype, cute.Float32, (64, BN, 16), warpgroup.OperandSource.SMEM,
                                OperandMajorMode.K, OperandMajorMode.K)
    sa = sm90.make_smem_layout_a(sm90.LayoutEnum.ROW_MAJOR, (BM, BN, BK), dtype, 1)
    sb = sm90.make_smem_layout_b(sm90.LayoutEnum.ROW_MAJOR, (BM, BN, BK), dtype, 1)
    rng = np.random.default_rng(3)
    a = rng.standard_normal((BM, BK)).astype(np.float16)
    b = rng.standard_normal((BN, BK)).astype(np.float16)
    ta, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), from_dlpack(a), cute.slice_(sa, (None, None, 0)), (BM, BK))
    tb, tB = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), from_dlpack(b), cute.slice_(sb, (None, None, 0)), (BN, BK))
    C = np.zeros((BM, BN), np.float32)
    wgmma_runtime_accumulate(ta, tA, tb, tB, from_dlpack(C), cute.make_tiled_mma(op), sa, sb, (BM + BN) * BK * 2,
                             flag, case).launch(grid=1, block=128)
    return C, a.astype(np.float64) @ b.astype(np.float64).T


@pytest.mark.parametrize("flag", [0, 1])
def test_a_runtime_accumulate_field_is_read_when_the_wgmma_is_issued(flag):
    C, ref = _runtime_accumulate_case(flag)
    np.testing.assert_allclose(C, ref + flag, rtol=0, atol=1e-4 * np.abs(ref).max())
    src = cuda.render(last_launch().ir)
    # every wgmma (2 m atoms x 4 k-blocks, one cute.gemm per k-block) takes its scale-d from the field's
    # register, which the runtime set and the later static sets assign
    wg = [ln for ln in src.splitlines() if "wgmma.mma_async" in ln]
    assert len(wg) == 8 and all(ln.endswith('"r"((unsigned)(r0[0] != 0)) : "memory");') for ln in wg)
    assert not any('"=f"' in ln for ln in wg)  # a runtime ACCUMULATE may keep the old values: read and written
    nvcc_compiles(src)


def test_a_runtime_accumulate_field_must_be_the_same_in_a_warpgroup():
    from cutelab.errors import LaunchError

    with pytest.raises(LaunchError, match="ACCUMULATE field differs between the threads of warpgroup 0"):
        _runtime_accumulate_case(1, "per_thread")


@pytest.mark.gpu
@pytest.mark.parametrize("flag", [0, 1])
def test_a_runtime_accumulate_field_on_the_gpu_equals_torch(flag):
    """The scale-d operand from the field's register, against the hardware (accumulators start at 1)."""
    import torch

    BM, BN, BK = 128, 64, 64
    op = warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, BN, 16), warpgroup.OperandSource.SMEM,
                                OperandMajorMode.K, OperandMajorMode.K)
    sa = sm90.make_smem_layout_a(sm90.LayoutEnum.ROW_MAJOR, (BM, BN, BK), cute.Float16, 1)
    sb = sm90.make_smem_layout_b(sm90.LayoutEnum.ROW_MAJOR, (BM, BN, BK), cute.Float16, 1)
    a = torch.randn(BM, BK, device="cuda", dtype=torch.float16)
    b = torch.randn(BN, BK, device="cuda", dtype=torch.float16)
    c = torch.zeros(BM, BN, device="cuda", dtype=torch.float32)
    ta, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), from_dlpack(a),
                                         cute.slice_(sa, (None, None, 0)), (BM, BK))
    tb, tB = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), from_dlpack(b),
                                         cute.slice_(sb, (None, None, 0)), (BN, BK))
    wgmma_runtime_accumulate(ta, tA, tb, tB, from_dlpack(c), cute.make_tiled_mma(op), sa, sb, (BM + BN) * BK * 2,
                             flag, "ok").launch(grid=1, block=128)
    torch.cuda.synchronize()
    torch.testing.assert_close(c, a.float() @ b.float().T + flag, atol=1e-2, rtol=1e-3)
