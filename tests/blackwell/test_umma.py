"""tcgen05.mma on the CPU interpreter, in a small kernel of its own (no TMA, no pipeline): A and B
written to shared memory by the threads, UMMAs by warp 0 into tensor memory, tcgen05.commit to
an mbarrier, the accumulator read back with tcgen05.ld; against numpy. And the rule that an
accumulator is read only after the UMMAs writing it were committed."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
import cutelab.utils.blackwell_helpers as sm100_utils
from cutelab.errors import LaunchError
from cutelab.nvgpu import OperandMajorMode, tcgen05
from cutelab.runtime import from_dlpack


@cute.kernel
def umma_kernel(tiled_mma: cute.TiledMma, A: cute.Tensor, B: cute.Tensor, C: cute.Tensor, a_layout: cute.ComposedLayout,
                b_layout: cute.ComposedLayout, case: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    M, K = A.shape
    N = B.shape[0]
    smem = cutlass.utils.SmemAllocator()
    holder = smem.allocate_tensor(cutlass.Int32, cute.make_layout(1), 4)
    bar = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sA = smem.allocate_tensor(element_type=A.element_type, layout=a_layout.outer, byte_alignment=1024,
                              swizzle=a_layout.inner)
    sB = smem.allocate_tensor(element_type=B.element_type, layout=b_layout.outer, byte_alignment=1024,
                              swizzle=b_layout.inner)
    if tidx == 0:
        cute.arch.mbarrier_init(bar.iterator, 1)
    for j in cutlass.range_constexpr(M * K // 128):  # element i of the partitioned tile is (i % M, i // M)
        i = j * 128 + tidx
        sA[i] = A[(i % M, i // M)]
    for j in cutlass.range_constexpr(N * K // 128):
        i = j * 128 + tidx
        sB[i] = B[(i % N, i // N)]
    cute.arch.fence_view_async_shared()
    if warp == 0:
        cute.arch.alloc_tmem(512, holder.iterator)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    ptr = cute.arch.retrieve_tmem_ptr(C.element_type, 16, holder.iterator)
    tCrA = tiled_mma.make_fragment_A(sA)
    tCrB = tiled_mma.make_fragment_B(sB)
    acc = cute.make_tensor(ptr, tiled_mma.make_fragment_C(tiled_mma.partition_shape_C((M, N))).layout)
    if warp == 0:
        if cutlass.const_expr(case == "runtime_k"):  # k-blocks inside a swizzle atom at a runtime index
            for k in cutlass.range(cute.size(tCrA, mode=[2])):
                cute.gemm(tiled_mma, acc, tCrA[(None, None, k)], tCrB[(None, None, k)], acc)
                tiled_mma.set(tcgen05.Field.ACCUMULATE, True)
        else:
            for k in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
                cute.gemm(tiled_mma, acc, tCrA[(None, None, k)], tCrB[(None, None, k)], acc)
                tiled_mma.set(tcgen05.Field.ACCUMULATE, True)
        if cutlass.const_expr(case != "nocommit"):
            with cute.arch.elect_one():
                tcgen05.commit(bar.iterator)
    if cutlass.const_expr(case != "nocommit"):
        cute.arch.mbarrier_wait(bar.iterator, 0)
    ld = tcgen05.make_tmem_copy(cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x16), C.element_type),
                                acc[((None, None), 0, 0)])
    thr = ld.get_slice(tidx)
    r = cute.make_rmem_tensor(thr.partition_D(C).shape, C.element_type)
    cute.copy(ld, thr.partition_S(acc[((None, None), 0, 0)]), r)  # LOAD
    thr.partition_D(C).store(r.load())
    cute.arch.sync_threads()
    if warp == 0:
        cute.arch.dealloc_tmem(ptr, 512)


_8BIT = {"e4m3": ("Float8E4M3FN", "float8_e4m3fn"), "e5m2": ("Float8E5M2", "float8_e5m2")}


def _run_8bit(a_name, b_name, M, N, K, major=OperandMajorMode.K):
    """A UMMA of 8-bit operands: kind::f8f6f4 (MmaFP8Op for one type, MmaF8F6F4Op for two) or kind::i8;
    major: both operands' major mode."""
    import torch

    rng = np.random.default_rng(7)
    A = rng.integers(-8, 9, (M, K)).astype(np.float32)
    B = rng.integers(-8, 9, (N, K)).astype(np.float32)
    if a_name in ("i8", "u8"):
        dt = cutlass.Int8 if a_name == "i8" else cutlass.Uint8
        A = rng.integers(-128, 128, (M, K)) if a_name == "i8" else rng.integers(0, 256, (M, K))
        B = rng.integers(-128, 128, (N, K)) if a_name == "i8" else rng.integers(0, 256, (N, K))
        op = tcgen05.MmaI8Op(dt, (M, N, 32), tcgen05.CtaGroup.ONE, tcgen05.OperandSource.SMEM, major, major)
        tA = from_dlpack(A.astype(np.int8 if a_name == "i8" else np.uint8))
        tB = from_dlpack(B.astype(np.int8 if a_name == "i8" else np.uint8))
        C = np.zeros((M, N), np.int32)
        want = (A.astype(np.int64) @ B.astype(np.int64).T).astype(np.int32)
        at = bt = dt
    else:
        at, bt = (getattr(cutlass, _8BIT[x][0]) for x in (a_name, b_name))
        if a_name == b_name:
            op = tcgen05.MmaFP8Op(at, cutlass.Float32, (M, N, 32), tcgen05.CtaGroup.ONE, tcgen05.OperandSource.SMEM,
                                  major, major)
        else:
            op = tcgen05.MmaF8F6F4Op(at, bt, cutlass.Float32, (M, N, 32), tcgen05.CtaGroup.ONE,
                                     tcgen05.OperandSource.SMEM, major, major)
        ta = torch.from_numpy(A).to(getattr(torch, _8BIT[a_name][1])).view(torch.uint8).numpy()
        tb = torch.from_numpy(B).to(getattr(torch, _8BIT[b_name][1])).view(torch.uint8).numpy()
        tA, tB = from_dlpack(ta), from_dlpack(tb)
        tA.element_type, tB.element_type = at, bt
        C = np.full((M, N), np.nan, np.float32)
        want = A @ B.T  # small integers: exact in e4m3 / e5m2 and in the f32 sum
    mma = cute.make_tiled_mma(op)
    al = cute.select(sm100_utils.make_smem_layout_a(mma, (M, N, K), at, 1), mode=[0, 1, 2])
    bl = cute.select(sm100_utils.make_smem_layout_b(mma, (M, N, K), bt, 1), mode=[0, 1, 2])
    umma_kernel(mma, tA, tB, from_dlpack(C), al, bl, "ok").launch(grid=1, block=128)
    return C, want


@pytest.mark.parametrize("a,b", [("e4m3", "e4m3"), ("e5m2", "e5m2"), ("e4m3", "e5m2"), ("i8", "i8"), ("u8", "u8")])
def test_8bit_umma_equals_numpy(a, b):
    pytest.importorskip("torch")
    C, want = _run_8bit(a, b, 128, 64, 128)
    np.testing.assert_array_equal(C, want)


@pytest.mark.parametrize("a", ["e4m3", "i8"])
def test_8bit_umma_of_mn_major_operands_equals_numpy(a):
    pytest.importorskip("torch")
    C, want = _run_8bit(a, a, 128, 128, 64, OperandMajorMode.MN)
    np.testing.assert_array_equal(C, want)


def _run(dtype, M=128, N=64, K=64, case="ok"):
    ab = {"f16": cutlass.Float16, "bf16": cutlass.BFloat16, "tf32": cutlass.TFloat32}[dtype]
    if dtype == "tf32":
        op = tcgen05.MmaTF32Op((M, N, 8), tcgen05.CtaGroup.ONE, tcgen05.OperandSource.SMEM, OperandMajorMode.K,
                               OperandMajorMode.K)
    else:
        op = tcgen05.MmaF16BF16Op(ab, cutlass.Float32, (M, N, 16), tcgen05.CtaGroup.ONE, tcgen05.OperandSource.SMEM,
                                  OperandMajorMode.K, OperandMajorMode.K)
    mma = cute.make_tiled_mma(op)
    al = cute.select(sm100_utils.make_smem_layout_a(mma, (M, N, K), ab, 1), mode=[0, 1, 2])
    bl = cute.select(sm100_utils.make_smem_layout_b(mma, (M, N, K), ab, 1), mode=[0, 1, 2])
    rng = np.random.default_rng(5)
    A = rng.integers(-3, 4, (M, K)).astype(np.float32)
    B = rng.integers(-3, 4, (N, K)).astype(np.float32)
    C = np.full((M, N), np.nan, np.float32)
    if dtype == "f16":
        tA, tB = from_dlpack(A.astype(np.float16)), from_dlpack(B.astype(np.float16))
    elif dtype == "bf16":
        import torch

        tA, tB = from_dlpack(torch.from_numpy(A).to(torch.bfloat16)), from_dlpack(torch.from_numpy(B).to(torch.bfloat16))
    else:
        tA, tB = from_dlpack(A), from_dlpack(B)
        tA.element_type = tB.element_type = cutlass.TFloat32
    umma_kernel(mma, tA, tB, from_dlpack(C), al, bl, case).launch(grid=1, block=128)
    return A, B, C


@pytest.mark.parametrize("dtype", ["f16", "bf16", "tf32"])
@pytest.mark.parametrize("mnk", [(128, 64, 64), (128, 256, 32), (128, 128, 16)])
def test_umma_equals_numpy(dtype, mnk):
    if dtype == "bf16":
        pytest.importorskip("torch")
    M, N, K = mnk
    A, B, C = _run(dtype, M, N, K)
    np.testing.assert_array_equal(C, A @ B.T)


@pytest.mark.parametrize("mnk", [(128, 64, 64), (128, 128, 32)])
def test_umma_k_blocks_at_a_runtime_index_inside_the_swizzle_atom(tmp_path, mnk):
    """cutlass.range over the k-blocks (MLA decode's mma_qk): the operands' start moves inside a 128B swizzle atom
    by a runtime offset; the CPU swizzles the moved offsets at run time, the CUDA adds the unswizzled offset to the
    descriptor's start (the hardware swizzles the address), as CuTe does."""
    import shutil
    import subprocess

    from cutelab.kernel.cuda import printer
    from cutelab.kernel.launch.plan import last_launch

    M, N, K = mnk
    A, B, C = _run("f16", M, N, K, case="runtime_k")
    np.testing.assert_array_equal(C, A @ B.T)
    src = printer.render(last_launch().ir)
    assert src.count("tcgen05.mma.cta_group::1.kind::f16") == 1  # one UMMA in the runtime loop
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    (tmp_path / "k.cu").write_text(src)
    c = subprocess.run([nvcc, "-arch=sm_100a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(tmp_path / "k.cu")],
                       capture_output=True, text=True)
    assert c.returncode == 0, c.stderr[-4000:]


def test_reading_an_accumulator_before_its_commit_is_an_error():
    with pytest.raises(LaunchError) as e:
        _run("f16", case="nocommit")
    msg = str(e.value)
    assert "which a UMMA issued" in msg and "no tcgen05.commit has completed yet" in msg, msg
    assert "test_umma.py" in msg, msg


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_cuda_prints_the_umma_for_sm_100a(tmp_path, dtype):
    import shutil
    import subprocess

    from cutelab.kernel.cuda import printer
    from cutelab.kernel.instr.tcgen05_mma import umma_idesc
    from cutelab.kernel.launch.plan import last_launch

    if dtype == "bf16":
        pytest.importorskip("torch")
    _run(dtype, 128, 256, 32)
    src = printer.render(last_launch().ir)
    op = tcgen05.MmaF16BF16Op(cutlass.Float16 if dtype == "f16" else cutlass.BFloat16, cutlass.Float32, (128, 256, 16),
                              tcgen05.CtaGroup.ONE, tcgen05.OperandSource.SMEM, OperandMajorMode.K, OperandMajorMode.K)
    assert src.count("tcgen05.mma.cta_group::1.kind::f16") == 2  # two k-blocks of 16
    assert f'"r"(0x{umma_idesc(op):08x}u)' in src
    assert "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64" in src
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    (tmp_path / "k.cu").write_text(src)
    c = subprocess.run([nvcc, "-arch=sm_100a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(tmp_path / "k.cu")],
                       capture_output=True, text=True)
    assert c.returncode == 0, c.stderr[-4000:]


@pytest.mark.parametrize("a,b,kind", [("e4m3", "e5m2", "f8f6f4"), ("i8", "i8", "i8")])
def test_cuda_prints_the_8bit_umma_for_sm_100a(tmp_path, a, b, kind):
    import shutil
    import subprocess

    from cutelab.kernel.cuda import printer
    from cutelab.kernel.launch.plan import last_launch

    pytest.importorskip("torch")
    _run_8bit(a, b, 128, 64, 64)
    src = printer.render(last_launch().ir)
    assert src.count(f"tcgen05.mma.cta_group::1.kind::{kind}") == 2  # two k-blocks of 32
    # the instruction descriptor: D format (f32 1, s32 2), A and B formats (e4m3 0, e5m2 1; s8 1), N >> 3, M >> 4
    fmt = {"e4m3": 0, "e5m2": 1, "i8": 1}
    idesc = ((2 if kind == "i8" else 1) << 4) | (fmt[a] << 7) | (fmt[b] << 10) | ((64 >> 3) << 17) | ((128 >> 4) << 24)
    assert f'"r"(0x{idesc:08x}u)' in src
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    (tmp_path / "k.cu").write_text(src)
    c = subprocess.run([nvcc, "-arch=sm_100a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(tmp_path / "k.cu")],
                       capture_output=True, text=True)
    assert c.returncode == 0, c.stderr[-4000:]
