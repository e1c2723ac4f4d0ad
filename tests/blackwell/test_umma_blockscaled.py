"""Block-scaled tcgen05.mma on the CPU interpreter, in a small kernel of its own (no TMA, no pipeline),
in the shape of CUTLASS's nvfp4 tutorial's main loop: A and B (e4m3 / e5m2, or e2m1) and their scale
factors (bytes) written to shared memory by the threads (the scale factors in make_smem_layout_sfa/sfb's
layout), copied to tensor memory with tcgen05.cp (Cp4x32x128bOp, make_s2t_copy,
get_s2t_smem_desc_tensor), one MmaMXF8Op / MmaMXF8F6F4Op / MmaMXF4Op / MmaMXF4NVF4Op per k-block with
tiled_mma.set(Field.SFA / SFB, ...), tcgen05.commit, the accumulator read back with tcgen05.ld; against
numpy."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
import cutelab.utils.blackwell_helpers as sm100_utils
import cutelab.utils.blockscaled_layout as blockscaled_utils
from cutelab.errors import LaunchError, TraceError
from cutelab.kernel.instr.tcgen05_blockscaled import scale_values, values
from cutelab.nvgpu import OperandMajorMode, tcgen05
from cutelab.runtime import from_dlpack

torch = pytest.importorskip("torch")


@cute.kernel
def bs_kernel(tiled_mma: cute.TiledMma, A: cute.Tensor, B: cute.Tensor, SFA: cute.Tensor, SFB: cute.Tensor,
              C: cute.Tensor, a_layout: cute.ComposedLayout, b_layout: cute.ComposedLayout, sfa_layout: cute.Layout,
              sfb_layout: cute.Layout, mma_tiler: cutlass.Constexpr, case: cutlass.Constexpr,
              vec: cutlass.Constexpr = 32, sf_dtype: cutlass.Constexpr = cutlass.Float8E8M0FNU):
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    M, K = A.shape
    N = B.shape[0]
    # sf_dtype: the scale factors' type in TMEM; in memory they are moved as bytes (Uint8)
    smem = cutlass.utils.SmemAllocator()
    holder = smem.allocate_tensor(cutlass.Int32, cute.make_layout(1), 4)
    bar = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sA = smem.allocate_tensor(element_type=A.element_type, layout=a_layout.outer, byte_alignment=1024,
                              swizzle=a_layout.inner)
    sB = smem.allocate_tensor(element_type=B.element_type, layout=b_layout.outer, byte_alignment=1024,
                              swizzle=b_layout.inner)
    sSFA = smem.allocate_tensor(element_type=SFA.element_type, layout=sfa_layout, byte_alignment=128)
    sSFB = smem.allocate_tensor(element_type=SFB.element_type, layout=sfb_layout, byte_alignment=128)
    if tidx == 0:
        cute.arch.mbarrier_init(bar.iterator, 1)
    for j in cutlass.range_constexpr(M * K // 128):  # element i of the partitioned tile is (i % M, i // M)
        i = j * 128 + tidx
        sA[i] = A[(i % M, i // M)]
    for j in cutlass.range_constexpr(N * K // 128):
        i = j * 128 + tidx
        sB[i] = B[(i % N, i // N)]
    # the scale factors: (((rows), (vec, n)), 1, k-block, stage): scale factor j of row m at flat index m + rows vec j
    for j in cutlass.range_constexpr(K // vec):
        sSFA[tidx + vec * 128 * j] = SFA[(tidx, j)]
        for h in cutlass.range_constexpr(SFB.shape[0] // 128):
            sSFB[tidx + 128 * h + vec * SFB.shape[0] * j] = SFB[(tidx + 128 * h, j)]
    cute.arch.fence_view_async_shared()
    if warp == 0:
        cute.arch.alloc_tmem(512, holder.iterator)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    ptr = cute.arch.retrieve_tmem_ptr(cutlass.Float32, 16, holder.iterator)
    tCrA = tiled_mma.make_fragment_A(sA)
    tCrB = tiled_mma.make_fragment_B(sB)
    acc = cute.make_tensor(ptr, tiled_mma.make_fragment_C(tiled_mma.partition_shape_C((M, N))).layout)
    sfa_ptr = cute.recast_ptr(ptr + tcgen05.find_tmem_tensor_col_offset(acc), dtype=sf_dtype)
    tCtSFA = cute.make_tensor(sfa_ptr, blockscaled_utils.make_tmem_layout_sfa(
        tiled_mma, mma_tiler, vec, cute.slice_(sfa_layout, (None, None, None, 0))))
    sfb_ptr = cute.recast_ptr(ptr + tcgen05.find_tmem_tensor_col_offset(acc)
                              + tcgen05.find_tmem_tensor_col_offset(tCtSFA), dtype=sf_dtype)
    tCtSFB = cute.make_tensor(sfb_ptr, blockscaled_utils.make_tmem_layout_sfb(
        tiled_mma, mma_tiler, vec, cute.slice_(sfb_layout, (None, None, None, 0))))
    cp_op = tcgen05.Cp128x128bOp if cutlass.const_expr(case == "cp128") else tcgen05.Cp4x32x128bOp
    atom_s2t = cute.make_copy_atom(cp_op(tcgen05.CtaGroup.ONE), sf_dtype)
    s2t = []
    for s_sf, t_sf in ((sSFA, tCtSFA), (sSFB, tCtSFB)):
        sc, tc = cute.filter_zeros(s_sf), cute.filter_zeros(t_sf)
        tiled = tcgen05.make_s2t_copy(atom_s2t, tc)
        thr = tiled.get_slice(0)
        s2t.append((tiled, tcgen05.get_s2t_smem_desc_tensor(tiled, thr.partition_S(sc)), thr.partition_D(tc)))
    if warp == 0:
        for tiled, src, dst in s2t:
            cute.copy(tiled, src[(None, None, None, None, 0)], dst)
        for k in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
            tiled_mma.set(tcgen05.Field.SFA, tCtSFA[(None, None, k)].iterator)
            if cutlass.const_expr(case != "nosfb"):
                tiled_mma.set(tcgen05.Field.SFB, tCtSFB[(None, None, k)].iterator)
            cute.gemm(tiled_mma, acc, tCrA[(None, None, k, 0)], tCrB[(None, None, k, 0)], acc)
            tiled_mma.set(tcgen05.Field.ACCUMULATE, True)
        with cute.arch.elect_one():
            tcgen05.commit(bar.iterator)
    cute.arch.mbarrier_wait(bar.iterator, 0)
    ld = tcgen05.make_tmem_copy(cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x16), cutlass.Float32),
                                acc[((None, None), 0, 0)])
    thr = ld.get_slice(tidx)
    r = cute.make_rmem_tensor(thr.partition_D(C).shape, cutlass.Float32)
    cute.copy(ld, thr.partition_S(acc[((None, None), 0, 0)]), r)
    thr.partition_D(C).store(r.load())
    cute.arch.sync_threads()
    if warp == 0:
        cute.arch.dealloc_tmem(ptr, 512)


_T = {"e4m3": (cutlass.Float8E4M3FN, torch.float8_e4m3fn), "e5m2": (cutlass.Float8E5M2, torch.float8_e5m2)}


def _run(ab="e4m3", M=128, N=128, K=128, case="ok", seed=3, b_ab=None):
    """MmaMXF8Op of ab, or with b_ab MmaMXF8F6F4Op of ab x b_ab."""
    dt, tdt = _T[ab]
    bdt, btdt = _T[b_ab or ab]
    if b_ab is None:
        op = tcgen05.MmaMXF8Op(dt, (M, N, 32), tcgen05.CtaGroup.ONE, tcgen05.OperandSource.SMEM, OperandMajorMode.K,
                               OperandMajorMode.K)
    else:
        op = tcgen05.MmaMXF8F6F4Op(dt, bdt, (M, N, 32), tcgen05.CtaGroup.ONE, tcgen05.OperandSource.SMEM,
                                   OperandMajorMode.K, OperandMajorMode.K)
    mma = cute.make_tiled_mma(op)
    tiler = (M, N, K)
    al = sm100_utils.make_smem_layout_a(mma, tiler, dt, 1)
    bl = sm100_utils.make_smem_layout_b(mma, tiler, bdt, 1)
    sfal = blockscaled_utils.make_smem_layout_sfa(mma, tiler, 32, 1)
    sfbl = blockscaled_utils.make_smem_layout_sfb(mma, tiler, 32, 1)
    rng = np.random.default_rng(seed)
    A = torch.from_numpy(rng.integers(-4, 5, (M, K)).astype(np.float32)).to(tdt)
    B = torch.from_numpy(rng.integers(-4, 5, (N, K)).astype(np.float32)).to(btdt)
    SFA = torch.from_numpy(rng.integers(124, 131, (128, K // 32)).astype(np.uint8))  # 2^-3 .. 2^3
    SFB = torch.from_numpy(rng.integers(124, 131, (-(-N // 128) * 128, K // 32)).astype(np.uint8))  # whole chunks
    C = np.full((M, N), np.nan, np.float32)
    tA, tB = from_dlpack(A.view(torch.uint8).numpy()), from_dlpack(B.view(torch.uint8).numpy())
    tA.element_type, tB.element_type = dt, bdt
    tSA, tSB = from_dlpack(SFA.numpy()), from_dlpack(SFB.numpy())  # ue8m0 bits, as Uint8
    bs_kernel(mma, tA, tB, tSA, tSB, from_dlpack(C), al, bl, sfal, sfbl, tiler, case).launch(grid=1, block=128)
    a = values(A.view(torch.uint8).numpy(), dt)
    b = values(B.view(torch.uint8).numpy(), bdt)
    sa = np.repeat(scale_values(SFA.numpy()[:M], cutlass.Float8E8M0FNU), 32, axis=1)
    sb = np.repeat(scale_values(SFB.numpy()[:N], cutlass.Float8E8M0FNU), 32, axis=1)
    return C, (a * sa) @ (b * sb).T


@pytest.mark.parametrize("ab,mnk", [("e4m3", (128, 128, 128)), ("e5m2", (128, 64, 128)), ("e4m3", (128, 256, 256))])
def test_mxf8_umma_with_scale_factors_from_tmem_equals_numpy(ab, mnk):
    C, want = _run(ab, *mnk)
    assert np.abs(want).max() > 1  # the scales matter: not all ones
    np.testing.assert_array_equal(C, want.astype(np.float32))


def _unpack(u):
    out = np.empty((u.shape[0], 2 * u.shape[1]), np.uint8)
    out[:, 0::2], out[:, 1::2] = u & 15, u >> 4  # the even element in the low nibble
    return out


@pytest.mark.parametrize("kind", ["nvf4", "mxf4"])
def test_fp4_umma_with_scale_factors_from_tmem_equals_numpy(kind):
    """e2m1 operands, two to a byte in global memory (torch's float4_e2m1fn_x2, read through make_ptr), with
    ue4m3 scales per 16 (MmaMXF4NVF4Op) or ue8m0 scales per 32 (MmaMXF4Op)."""
    from cutelab.runtime import make_ptr

    M, N, K = 128, 128, 128
    if kind == "nvf4":
        sf, vec, tsf = cutlass.Float8E4M3FN, 16, torch.float8_e4m3fn
        op = tcgen05.MmaMXF4NVF4Op(sf, (M, N, 64), tcgen05.CtaGroup.ONE, tcgen05.OperandSource.SMEM)
    else:
        sf, vec, tsf = cutlass.Float8E8M0FNU, 32, torch.float8_e8m0fnu
        op = tcgen05.MmaMXF4Op((M, N, 64), tcgen05.CtaGroup.ONE, tcgen05.OperandSource.SMEM)
    mma = cute.make_tiled_mma(op)
    tiler, dt = (M, N, K), cutlass.Float4E2M1FN
    rng = np.random.default_rng(1)
    Ab = torch.from_numpy(rng.integers(0, 256, (M, K // 2)).astype(np.uint8))
    Bb = torch.from_numpy(rng.integers(0, 256, (N, K // 2)).astype(np.uint8))
    A4, B4 = Ab.view(torch.float4_e2m1fn_x2), Bb.view(torch.float4_e2m1fn_x2)
    tA = cute.make_tensor(make_ptr(dt, A4.data_ptr(), cute.AddressSpace.gmem, assumed_align=16),
                          cute.make_layout((M, K), stride=(K, 1)))
    tB = cute.make_tensor(make_ptr(dt, B4.data_ptr(), cute.AddressSpace.gmem, assumed_align=16),
                          cute.make_layout((N, K), stride=(K, 1)))
    SFA = torch.from_numpy(rng.integers(1, 4, (128, K // vec)).astype(np.float32)).to(tsf).view(torch.uint8)
    SFB = torch.from_numpy(rng.integers(1, 4, (128, K // vec)).astype(np.float32)).to(tsf).view(torch.uint8)
    C = np.full((M, N), np.nan, np.float32)
    bs_kernel(mma, tA, tB, from_dlpack(SFA.numpy()), from_dlpack(SFB.numpy()), from_dlpack(C),
              sm100_utils.make_smem_layout_a(mma, tiler, dt, 1), sm100_utils.make_smem_layout_b(mma, tiler, dt, 1),
              blockscaled_utils.make_smem_layout_sfa(mma, tiler, vec, 1),
              blockscaled_utils.make_smem_layout_sfb(mma, tiler, vec, 1), tiler, "ok", vec, sf).launch(grid=1,
                                                                                                  block=128)
    a, b = values(_unpack(Ab.numpy()), dt), values(_unpack(Bb.numpy()), dt)
    sa = np.repeat(scale_values(SFA.numpy(), sf), vec, axis=1)
    sb = np.repeat(scale_values(SFB.numpy(), sf), vec, axis=1)
    want = (a * sa) @ (b * sb).T
    assert len(np.unique(sa)) > 1 and np.abs(want).max() > 100
    np.testing.assert_array_equal(C, want.astype(np.float32))


def test_cuda_refuses_a_thread_storing_to_packed_e2m1_shared_memory():
    """bs_kernel's threads write A element by element (sA[i] = A[...]); with e2m1 two to a byte the CUDA back end
    prints such memory for TMA and UMMA only, and says so naming the line."""
    from cutelab.kernel.cuda import printer
    from cutelab.kernel.launch.plan import last_launch

    test_fp4_umma_with_scale_factors_from_tmem_equals_numpy("nvf4")
    with pytest.raises(TraceError, match=r"test_umma_blockscaled.py:\d+\): a thread (reads|writes) Float4E2M1FN elements "
                                         r"of \w+ \(4 bits, packed several to a byte\); the CUDA back end prints such "
                                         r"memory for TMA and UMMA only"):
        printer.render(last_launch().ir)


def test_mxf8f6f4_umma_of_two_types_equals_numpy():
    C, want = _run("e4m3", 128, 64, 128, b_ab="e5m2")
    np.testing.assert_array_equal(C, want.astype(np.float32))


def test_umma_before_its_scale_factor_field_is_set_is_an_error():
    with pytest.raises(LaunchError, match="before tiled_mma.set\\(tcgen05.Field.SFA / SFB"):
        _run(case="nosfb")


def test_cuda_prints_the_block_scaled_umma_and_tcgen05_cp_for_sm_100a(tmp_path):
    import shutil
    import subprocess

    from cutelab.kernel.cuda import printer
    from cutelab.kernel.instr.tcgen05_blockscaled import umma_idesc_block_scaled
    from cutelab.kernel.launch.plan import last_launch

    _run("e4m3", 128, 128, 128)
    src = printer.render(last_launch().ir)
    assert src.count("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale [%0], %1, %2, %3, [%5], [%6], p;") == 4
    assert src.count("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;") == 2  # SFA and SFB: one atom each
    op = tcgen05.MmaMXF8Op(cutlass.Float8E4M3FN, (128, 128, 32), tcgen05.CtaGroup.ONE, tcgen05.OperandSource.SMEM,
                           OperandMajorMode.K, OperandMajorMode.K)
    assert f"0x{umma_idesc_block_scaled(op):08x}u" in src
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    (tmp_path / "k.cu").write_text(src)
    c = subprocess.run([nvcc, "-arch=sm_100a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(tmp_path / "k.cu")],
                       capture_output=True, text=True)
    assert c.returncode == 0, c.stderr[-4000:]


def test_tcgen05_cp_shapes_other_than_32x128b_warpx4_are_refused_by_name():
    from cutelab.errors import TraceError

    with pytest.raises(TraceError) as e:
        _run(case="cp128")
    msg = str(e.value)
    assert "kernel bs_kernel: cute.copy with Cp128x128bOp" in msg and "test_umma_blockscaled.py" in msg, msg
    assert "runs tcgen05.cp as Cp4x32x128bOp (CtaGroup.ONE or TWO) so far" in msg, msg
