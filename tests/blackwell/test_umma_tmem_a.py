"""tcgen05.mma with A read from tensor memory (OperandSource.TMEM, the FMHA's P*V) on the CPU interpreter, in a
small kernel of its own: each thread writes its row of A as f16 values into an f32 register fragment seen as f16
(``cute.recast_ptr(frag.iterator, dtype=Float16)``), stores the fragment's 32-bit registers to tensor memory with
tcgen05.st, and warp 0 issues the UMMAs (B from shared memory); the accumulator read back equals numpy. And the
errors: a TMEM A for an op that reads A from shared memory, a register view of an element that is not whole, and
the CUDA of the TMEM-A UMMA compiling for sm_100a. A 2-CTA UMMA (M = 256) with A in tensor memory: each CTA of the
pair holds its 128 rows of A in its own tensor memory, the leader issues."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
import cutelab.utils.blackwell_helpers as sm100_utils
from cutelab.errors import TraceError
from cutelab.nvgpu import OperandMajorMode, tcgen05
from cutelab.runtime import from_dlpack

A_COL = 256  # the 32-bit TMEM column where A starts (the accumulator takes columns 0..N-1)


@cute.kernel
def ts_kernel(tiled_mma: cute.TiledMma, gemm_mma: cute.TiledMma, A: cute.Tensor, B: cute.Tensor, C: cute.Tensor,
              b_layout: cute.ComposedLayout, case: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    M, K = A.shape
    N = B.shape[0]
    smem = cutlass.utils.SmemAllocator()
    holder = smem.allocate_tensor(cutlass.Int32, cute.make_layout(1), 4)
    bar = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sB = smem.allocate_tensor(element_type=B.element_type, layout=b_layout.outer, byte_alignment=1024,
                              swizzle=b_layout.inner)
    if tidx == 0:
        cute.arch.mbarrier_init(bar.iterator, 1)
    for j in cutlass.range_constexpr(N * K // 128):
        i = j * 128 + tidx
        sB[i] = B[(i % N, i // N)]
    cute.arch.fence_view_async_shared()
    if warp == 0:
        cute.arch.alloc_tmem(512, holder.iterator)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    ptr = cute.arch.retrieve_tmem_ptr(cutlass.Float32, 16, holder.iterator)
    # row tidx of A: K f16 values in K/2 f32 registers, stored to lane tidx, columns A_COL.. (two f16 to a column)
    tA32 = cute.make_tensor(ptr + A_COL, cute.make_layout((128, K // 2), stride=(65536, 1)))
    st = tcgen05.make_tmem_copy(cute.make_copy_atom(tcgen05.St32x32bOp(tcgen05.Repetition(K // 2)), cutlass.Float32),
                                tA32)
    ts = st.get_slice(tidx)
    dst = ts.partition_D(tA32)
    r32 = cute.make_rmem_tensor(ts.partition_S(cute.make_identity_tensor((128, K // 2))).shape, cutlass.Float32)
    r16 = cute.make_tensor(cute.recast_ptr(r32.iterator, dtype=cutlass.Float16), cute.make_layout(K))
    if cutlass.const_expr(case == "half_register"):
        cute.recast_ptr(r16.iterator + 1, dtype=cutlass.Float32)  # HALF REGISTER
    row = cute.make_tensor(A.iterator + tidx * K, cute.make_layout(K))
    for k in cutlass.range_constexpr(K // 4):  # the first half in pairs: whole registers
        cute.make_tensor(r16.iterator + 2 * k, cute.make_layout(2)).store(
            cute.make_tensor(row.iterator + 2 * k, cute.make_layout(2)).load())
    for k in cutlass.range_constexpr(K // 2, K):  # the second half one element at a time: half registers
        r16[k] = row[k]
    cute.copy(st, r32, dst)
    cute.arch.fence_view_async_tmem_store()
    cute.arch.sync_threads()
    tCrA = tiled_mma.make_fragment_A(tiled_mma.partition_shape_A((M, K)))
    tCrA = cute.make_tensor(cute.recast_ptr(ptr + A_COL, dtype=cutlass.Float16), tCrA.layout)
    tCrB = tiled_mma.make_fragment_B(sB)
    acc = cute.make_tensor(ptr, tiled_mma.make_fragment_C(tiled_mma.partition_shape_C((M, N))).layout)
    if warp == 0:
        for k in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
            cute.gemm(gemm_mma, acc, tCrA[(None, None, k)], tCrB[(None, None, k)], acc)  # GEMM
            gemm_mma.set(tcgen05.Field.ACCUMULATE, True)
        with cute.arch.elect_one():
            tcgen05.commit(bar.iterator)
    cute.arch.mbarrier_wait(bar.iterator, 0)
    ld = tcgen05.make_tmem_copy(cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x16), C.element_type),
                                acc[((None, None), 0, 0)])
    thr = ld.get_slice(tidx)
    r = cute.make_rmem_tensor(thr.partition_D(C).shape, C.element_type)
    cute.copy(ld, thr.partition_S(acc[((None, None), 0, 0)]), r)
    thr.partition_D(C).store(r.load())
    cute.arch.sync_threads()
    if warp == 0:
        cute.arch.dealloc_tmem(ptr, 512)


def _op(src, N=64):
    return tcgen05.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (128, N, 16), tcgen05.CtaGroup.ONE, src,
                                OperandMajorMode.K, OperandMajorMode.K)


def _run(M=128, N=64, K=64, case="ok"):
    mma = cute.make_tiled_mma(_op(tcgen05.OperandSource.TMEM, N))
    gemm = cute.make_tiled_mma(_op(tcgen05.OperandSource.SMEM if case == "smem_op" else tcgen05.OperandSource.TMEM,
                                   N))
    bl = cute.select(sm100_utils.make_smem_layout_b(mma, (M, N, K), cutlass.Float16, 1), mode=[0, 1, 2])
    rng = np.random.default_rng(11)
    A = (rng.integers(-64, 65, (M, K)) / 8).astype(np.float32)  # eighths: exact in f16, distinct halves of a register
    B = rng.integers(-3, 4, (N, K)).astype(np.float32)
    C = np.full((M, N), np.nan, np.float32)
    ts_kernel(mma, gemm, from_dlpack(A.astype(np.float16)), from_dlpack(B.astype(np.float16)), from_dlpack(C), bl,
              case).launch(grid=1, block=128)
    return A, B, C


@pytest.mark.parametrize("mnk", [(128, 64, 64), (128, 128, 32)])
def test_umma_with_a_in_tensor_memory_equals_numpy(mnk):
    A, B, C = _run(*mnk)
    np.testing.assert_array_equal(C, A @ B.T)


def test_a_tensor_memory_a_for_an_op_reading_shared_memory_is_refused():
    with pytest.raises(TraceError) as e:
        _run(case="smem_op")
    msg = str(e.value)
    assert "operand A is a tensor-memory tensor but the MMA reads A from shared memory" in msg, msg
    assert "test_umma_tmem_a.py" in msg, msg


def test_a_register_view_must_start_at_a_whole_register():
    with pytest.raises(TraceError) as e:
        _run(case="half_register")
    msg = str(e.value)
    assert "element 1 of a f16 view of f32 registers is not at a whole f32 register" in msg, msg
    assert "test_umma_tmem_a.py" in msg, msg


@cute.kernel
def ts2_kernel(mma: cute.TiledMma, A: cute.Tensor, B: cute.Tensor, C: cute.Tensor, b_layout: cute.ComposedLayout):
    """A 2-CTA UMMA (M = 256) with A in tensor memory: CTA r of the pair holds A's rows 128r.. in its own tensor
    memory and B's rows N/2 r.. in its shared memory; the leader issues the UMMAs and commits to both CTAs."""
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    rank = cute.arch.block_idx_in_cluster()
    M, K = A.shape
    N = B.shape[0]
    Nh = N // 2
    smem = cutlass.utils.SmemAllocator()
    holder = smem.allocate_tensor(cutlass.Int32, cute.make_layout(1), 4)
    bar = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sB = smem.allocate_tensor(element_type=B.element_type, layout=b_layout.outer, byte_alignment=1024,
                              swizzle=b_layout.inner)
    if tidx == 0:
        cute.arch.mbarrier_init(bar.iterator, 1)
    for j in cutlass.range_constexpr(Nh * K // 128):
        i = j * 128 + tidx
        sB[i] = B[(rank * Nh + i % Nh, i // Nh)]
    cute.arch.fence_view_async_shared()
    if warp == 0:
        cute.arch.alloc_tmem(512, holder.iterator, is_two_cta=True)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    ptr = cute.arch.retrieve_tmem_ptr(cutlass.Float32, 16, holder.iterator)
    tA32 = cute.make_tensor(ptr + A_COL, cute.make_layout((128, K // 2), stride=(65536, 1)))
    st = tcgen05.make_tmem_copy(cute.make_copy_atom(tcgen05.St32x32bOp(tcgen05.Repetition(K // 2)), cutlass.Float32),
                                tA32)
    ts = st.get_slice(tidx)
    r32 = cute.make_rmem_tensor(ts.partition_S(cute.make_identity_tensor((128, K // 2))).shape, cutlass.Float32)
    r16 = cute.make_tensor(cute.recast_ptr(r32.iterator, dtype=cutlass.Float16), cute.make_layout(K))
    row = cute.make_tensor(A.iterator + (rank * 128 + tidx) * K, cute.make_layout(K))
    for k in cutlass.range_constexpr(K):
        r16[k] = row[k]
    cute.copy(st, r32, ts.partition_D(tA32))
    cute.arch.fence_view_async_tmem_store()
    cute.arch.cluster_arrive()
    cute.arch.cluster_wait()  # both CTAs' A rows and B halves are in place
    tCrA = mma.make_fragment_A(mma.partition_shape_A((M, K)))
    tCrA = cute.make_tensor(cute.recast_ptr(ptr + A_COL, dtype=cutlass.Float16), tCrA.layout)
    tCrB = mma.make_fragment_B(sB)
    acc = cute.make_tensor(ptr, mma.make_fragment_C(mma.partition_shape_C((M, N))).layout)
    if rank == 0:
        if warp == 0:
            for k in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
                cute.gemm(mma, acc, tCrA[(None, None, k)], tCrB[(None, None, k)], acc)
                mma.set(tcgen05.Field.ACCUMULATE, True)
            with cute.arch.elect_one():
                tcgen05.commit(bar.iterator, 3, tcgen05.CtaGroup.TWO)  # both CTAs' barriers
    cute.arch.mbarrier_wait(bar.iterator, 0)
    mC = cute.make_tensor(C.iterator + rank * 128 * N, cute.make_layout((128, N), stride=(N, 1)))
    ld = tcgen05.make_tmem_copy(cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x16), C.element_type),
                                acc[((None, None), 0, 0)])
    lt = ld.get_slice(tidx)
    r = cute.make_rmem_tensor(lt.partition_D(mC).shape, C.element_type)
    cute.copy(ld, lt.partition_S(acc[((None, None), 0, 0)]), r)
    lt.partition_D(mC).store(r.load())
    cute.arch.sync_threads()
    if warp == 0:
        cute.arch.dealloc_tmem(ptr, 512, is_two_cta=True)


@pytest.mark.parametrize("nk", [(64, 32), (128, 64)])
def test_two_cta_umma_with_a_in_tensor_memory_equals_numpy(nk):
    N, K = nk
    M = 256
    op = tcgen05.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (M, N, 16), tcgen05.CtaGroup.TWO,
                              tcgen05.OperandSource.TMEM, OperandMajorMode.K, OperandMajorMode.K)
    mma = cute.make_tiled_mma(op)
    bl = cute.select(sm100_utils.make_smem_layout_b(mma, (M, N, K), cutlass.Float16, 1), mode=[0, 1, 2])
    rng = np.random.default_rng(12)
    A = (rng.integers(-64, 65, (M, K)) / 8).astype(np.float32)
    B = rng.integers(-3, 4, (N, K)).astype(np.float32)
    C = np.full((M, N), np.nan, np.float32)
    ts2_kernel(mma, from_dlpack(A.astype(np.float16)), from_dlpack(B.astype(np.float16)), from_dlpack(C),
               bl).launch(grid=2, block=128, cluster=(2, 1, 1))
    np.testing.assert_array_equal(C, A @ B.T)  # rows 128-255 come from the peer CTA's tensor memory


def test_cuda_prints_the_tmem_a_umma_for_sm_100a(tmp_path):
    import shutil
    import subprocess

    from cutelab.kernel.cuda import printer
    from cutelab.kernel.launch.plan import last_launch

    _run(128, 64, 32)
    src = printer.render(last_launch().ir)
    # A is a tensor-memory address operand ([%1], a 32-bit register), two k-blocks of 16
    assert src.count("tcgen05.mma.cta_group::1.kind::f16 [%0], [%1], %2, %3, p;") == 2, src[-3000:]
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    (tmp_path / "k.cu").write_text(src)
    c = subprocess.run([nvcc, "-arch=sm_100a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(tmp_path / "k.cu")],
                       capture_output=True, text=True)
    assert c.returncode == 0, c.stderr[-4000:]
