"""UMMAs with an f16 accumulator (kind::f16, as CuTe DSL's MmaF16BF16Op(..., Float16, ...)): one f16 per 32-bit
tensor-memory column (make_fragment_C's ((128,N)):((131072,2)), as CuTe DSL 4.8.1 prints it), rounded to f16 at each
instruction, read back with Ld32x32bOp(..., Pack.PACK_16b_IN_32b) (tcgen05.ld .pack::16b: the low halves of two
adjacent columns in one register), on the CPU interpreter and in the CUDA printed for sm_100a."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
import cutelab.utils.blackwell_helpers as sm100_utils
from cutelab.nvgpu import OperandMajorMode, tcgen05
from cutelab.runtime import from_dlpack


@cute.kernel
def k16(tiled_mma: cute.TiledMma, A: cute.Tensor, B: cute.Tensor, C: cute.Tensor, a_layout: cute.ComposedLayout,
        b_layout: cute.ComposedLayout, pack: cutlass.Constexpr):
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
    for j in cutlass.range_constexpr(M * K // 128):
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
        for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
            cute.gemm(tiled_mma, acc, tCrA[(None, None, kb)], tCrB[(None, None, kb)], acc)
            tiled_mma.set(tcgen05.Field.ACCUMULATE, True)
        with cute.arch.elect_one():
            tcgen05.commit(bar.iterator)
    cute.arch.mbarrier_wait(bar.iterator, 0)
    atom = cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x16, pack), C.element_type)
    ld = tcgen05.make_tmem_copy(atom, acc[((None, None), 0, 0)])
    thr = ld.get_slice(tidx)
    r = cute.make_rmem_tensor(thr.partition_D(C).shape, C.element_type)
    cute.copy(ld, thr.partition_S(acc[((None, None), 0, 0)]), r)
    thr.partition_D(C).store(r.load())
    cute.arch.sync_threads()
    if warp == 0:
        cute.arch.dealloc_tmem(ptr, 512)


def _run(A, B, pack=tcgen05.Pack.PACK_16b_IN_32b):
    M, K = A.shape
    N = B.shape[0]
    op = tcgen05.MmaF16BF16Op(cutlass.Float16, cutlass.Float16, (M, N, 16), tcgen05.CtaGroup.ONE,
                              tcgen05.OperandSource.SMEM, OperandMajorMode.K, OperandMajorMode.K)
    mma = cute.make_tiled_mma(op)
    al = cute.select(sm100_utils.make_smem_layout_a(mma, (M, N, K), cutlass.Float16, 1), mode=[0, 1, 2])
    bl = cute.select(sm100_utils.make_smem_layout_b(mma, (M, N, K), cutlass.Float16, 1), mode=[0, 1, 2])
    C = np.full((M, N), np.nan, np.float16)
    k16(mma, from_dlpack(A), from_dlpack(B), from_dlpack(C), al, bl, pack).launch(grid=1, block=128)
    return C


def test_f16_accumulator_equals_numpy_and_prints_packed_loads(tmp_path):
    from cutelab.kernel.cuda import printer
    from cutelab.kernel.launch.plan import last_launch

    rng = np.random.default_rng(5)
    A = rng.integers(-3, 4, (128, 64)).astype(np.float16)
    B = rng.integers(-3, 4, (64, 64)).astype(np.float16)
    C = _run(A, B)
    np.testing.assert_array_equal(C.astype(np.float32), A.astype(np.float32) @ B.astype(np.float32).T)
    src = printer.render(last_launch().ir)
    assert "tcgen05.ld.sync.aligned.32x32b.x16.pack::16b.b32" in src
    assert src.count('"r"(0x08100000u)') == 4  # f16 D (format 0), N 64, M 128; four k-blocks of 16
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    (tmp_path / "k.cu").write_text(src)
    c = subprocess.run([nvcc, "-arch=sm_100a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(tmp_path / "k.cu")],
                       capture_output=True, text=True)
    assert c.returncode == 0, c.stderr[-4000:]


def test_f16_accumulation_rounds_to_f16_at_each_instruction():
    """K = 32 (two UMMAs of K 16): 2048 + 1 + 1 is 2048 in f16 after each instruction's rounding (2049 is not an
    f16), where an f32 accumulator would give 2050."""
    A = np.zeros((128, 32), np.float16)
    B = np.zeros((64, 32), np.float16)
    A[:, 0], B[:, 0] = 32, 64  # k-block 0: 2048
    A[:, 16], B[:, 16] = 1, 1  # k-block 1: + 1
    A[:, 17], B[:, 17] = 1, 1  # + 1, in the same instruction: 2048 + 2 = 2050, an f16
    C = _run(A, B)
    assert (C == np.float16(2050)).all()
    A[:, 17] = 0  # 2048 + 1 = 2049: rounds (to even) to 2048
    C = _run(A, B)
    assert (C == np.float16(2048)).all()


def test_an_unpacked_load_of_an_f16_accumulator_is_refused():
    with pytest.raises(Exception, match=r"column 1 \(in Float16 units\), which the tensor does not hold"):
        _run(np.zeros((128, 16), np.float16), np.zeros((64, 16), np.float16), tcgen05.Pack.NONE)
