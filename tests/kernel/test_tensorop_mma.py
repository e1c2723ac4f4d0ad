"""cute.gemm inside kernels with SM80 warp MMAs (mma.sync): the CPU interpreter against numpy,
the CUDA printer's inline PTX (compiled with nvcc where it is installed), and the errors."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import LaunchError, TraceError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.instr.mma_sync import MmaSync
from cutelab.kernel.launch.plan import last_launch
from cutelab.runtime import from_dlpack

torch = pytest.importorskip("torch")


@cute.kernel
def mma_kernel(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, tiled_mma: cutlass.Constexpr,
               kblocks: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    thr = tiled_mma.get_slice(tidx)
    tA = thr.partition_A(mA)
    tB = thr.partition_B(mB)
    tC = thr.partition_C(mC)
    rA = tiled_mma.make_fragment_A(tA)
    rB = tiled_mma.make_fragment_B(tB)
    rC = tiled_mma.make_fragment_C(tC)
    cute.autovec_copy(tA, rA)
    cute.autovec_copy(tB, rB)
    cute.autovec_copy(tC, rC)
    if cutlass.const_expr(kblocks):  # k-block by k-block: (V,M) x (V,N) => (V,M,N)
        for k in cutlass.range_constexpr(cute.size(rA, mode=[2])):
            cute.gemm(tiled_mma, rC, rA[None, None, k], rB[None, None, k], rC)
    else:  # (V,M,K) x (V,N,K) => (V,M,N)
        cute.gemm(tiled_mma, rC, rA, rB, rC)
    cute.autovec_copy(rC, tC)


_TORCH = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}


def _run(ab, acc, shape_mnk, atoms=(1, 1, 1), MNK=None, kblocks=False, ints=True, seed=0):
    op = cute.nvgpu.warp.MmaF16BF16Op(ab, acc, shape_mnk)
    perm = tuple(a * s for a, s in zip(atoms, shape_mnk))
    mma = cute.make_tiled_mma(op, cute.make_layout(atoms), permutation_mnk=perm)
    M, N, K = MNK or perm
    g = torch.Generator().manual_seed(seed)
    if ints:
        A = torch.randint(-3, 4, (M, K), generator=g).to(_TORCH[ab.name])
        B = torch.randint(-3, 4, (N, K), generator=g).to(_TORCH[ab.name])
        C = torch.randint(-8, 9, (M, N), generator=g).to(_TORCH[acc.name])
    else:
        A = torch.randn(M, K, generator=g).to(_TORCH[ab.name])
        B = torch.randn(N, K, generator=g).to(_TORCH[ab.name])
        C = torch.randn(M, N, generator=g).to(_TORCH[acc.name])
    ref = A.double() @ B.double().T + C.double()
    mma_kernel(from_dlpack(A), from_dlpack(B), from_dlpack(C), mma, kblocks).launch(
        grid=1, block=32 * atoms[0] * atoms[1] * atoms[2])
    return C.double(), ref


SHAPES = [(cutlass.Float16, cutlass.Float32, (16, 8, 16)), (cutlass.Float16, cutlass.Float32, (16, 8, 8)),
          (cutlass.Float16, cutlass.Float16, (16, 8, 16)), (cutlass.Float16, cutlass.Float16, (16, 8, 8)),
          (cutlass.BFloat16, cutlass.Float32, (16, 8, 16)), (cutlass.BFloat16, cutlass.Float32, (16, 8, 8))]
IDS = [f"{a.name}-{c.name}-k{s[2]}" for a, c, s in SHAPES]


@pytest.mark.parametrize("ab,acc,shape", SHAPES, ids=IDS)
def test_one_atom_is_exact_on_small_integers(ab, acc, shape):
    got, ref = _run(ab, acc, shape)
    assert torch.equal(got, ref)


@pytest.mark.parametrize("ab,acc,shape", SHAPES, ids=IDS)
def test_tiled_mma_over_several_atoms_and_k_blocks(ab, acc, shape):
    # 2x2 warps, each thread with 2 x 2 atoms along M, N and 3 along K
    got, ref = _run(ab, acc, shape, atoms=(2, 2, 1), MNK=(64, 32, 3 * shape[2]))
    assert torch.equal(got, ref)
    got, ref = _run(ab, acc, shape, atoms=(2, 2, 1), MNK=(64, 32, 3 * shape[2]), kblocks=True, seed=1)
    assert torch.equal(got, ref)


@pytest.mark.parametrize("ab,acc,shape", SHAPES, ids=IDS)
def test_random_values_within_the_accumulators_rounding(ab, acc, shape):
    got, ref = _run(ab, acc, shape, atoms=(2, 1, 1), MNK=(32, 16, 4 * shape[2]), ints=False)
    eps = 2.0 ** -23 if acc.name == "f32" else 2.0 ** -10
    # one rounding per instruction (4 along K), each within half an ulp of the running sum
    bound = 4 * eps * (ref.abs() + 4).max()
    assert (got - ref).abs().max() <= bound
    assert not torch.equal(got, torch.zeros_like(got))


def test_accumulator_rounds_per_instruction_not_once_per_gemm():
    # K=32 is two m16n8k16 instructions; each rounds its sum to the f16 accumulator
    op = cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float16, (16, 8, 16))
    mma = cute.make_tiled_mma(op, cute.make_layout((1, 1, 1)))
    A = torch.zeros(16, 32, dtype=torch.float16)
    B = torch.ones(8, 32, dtype=torch.float16)
    A[:, 0], A[:, 1] = 2048, 1  # first instruction: 2049 is no f16, rounds to even 2048
    A[:, 16] = 1  # second: 2048 + 1 rounds to 2048 again (the exact sum, 2050, is an f16)
    C = torch.zeros(16, 8, dtype=torch.float16)
    mma_kernel(from_dlpack(A), from_dlpack(B), from_dlpack(C), mma, False).launch(grid=1, block=32)
    assert torch.all(C == 2048)


def test_cuda_prints_inline_ptx_mma_sync():
    _run(cutlass.BFloat16, cutlass.Float32, (16, 8, 16), atoms=(2, 2, 1), MNK=(64, 32, 32))
    src = cuda.render(last_launch().ir)
    assert src.count("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32") == 8  # 2 x 2 x 2 atoms a thread
    assert '"=f"(' in src and '"r"(' in src


NVCC = shutil.which("nvcc")


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
@pytest.mark.parametrize("ab,acc,shape", SHAPES, ids=IDS)
def test_generated_cuda_compiles_with_nvcc(ab, acc, shape, tmp_path):
    _run(ab, acc, shape, atoms=(2, 2, 1))
    cu = tmp_path / "k.cu"
    cu.write_text(cuda.render(last_launch().ir))
    p = subprocess.run([NVCC, "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(cu)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]


@cute.kernel
def divergent_mma(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, tiled_mma: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    thr = tiled_mma.get_slice(tidx)
    rA = tiled_mma.make_fragment_A(thr.partition_A(mA))
    rB = tiled_mma.make_fragment_B(thr.partition_B(mB))
    tC = thr.partition_C(mC)
    rC = tiled_mma.make_fragment_C(tC)
    rC.fill(0.0)
    if tidx < 16:
        cute.gemm(tiled_mma, rC, rA, rB, rC)
    cute.autovec_copy(rC, tC)


def _atom_mma():
    op = cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16))
    return cute.make_tiled_mma(op, cute.make_layout((1, 1, 1)))


def test_mma_in_a_branch_that_splits_a_warp_is_refused():
    A, B = torch.ones(16, 16, dtype=torch.float16), torch.ones(8, 16, dtype=torch.float16)
    C = torch.zeros(16, 8)
    with pytest.raises(LaunchError, match="only some lanes of warp 0"):
        divergent_mma(from_dlpack(A), from_dlpack(B), from_dlpack(C), _atom_mma()).launch(grid=1, block=32)
    assert torch.all(C == 0)


def test_a_thread_past_the_mmas_threads_takes_the_slice_of_its_index_modulo_their_number():
    """As CuTe DSL's get_slice: thread 32 + i of a 64-thread block takes thread i's slice of a one-warp
    MMA, so both warps compute (and store) the same C."""
    A, B = torch.ones(16, 16, dtype=torch.float16), torch.ones(8, 16, dtype=torch.float16)
    C = torch.zeros(16, 8)
    mma_kernel(from_dlpack(A), from_dlpack(B), from_dlpack(C), _atom_mma(), False).launch(grid=1, block=64)
    assert torch.all(C == 16)


@cute.kernel
def gmem_operand(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, tiled_mma: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    thr = tiled_mma.get_slice(tidx)
    tC = thr.partition_C(mC)
    rC = tiled_mma.make_fragment_C(tC)
    cute.gemm(tiled_mma, rC, thr.partition_A(mA), thr.partition_B(mB), rC)


def test_operands_in_global_memory_are_refused():
    A, B = torch.ones(16, 16, dtype=torch.float16), torch.ones(8, 16, dtype=torch.float16)
    with pytest.raises(TraceError, match="operand a.* must be a register fragment"):
        gmem_operand(from_dlpack(A), from_dlpack(B), from_dlpack(torch.zeros(16, 8)), _atom_mma()).launch(
            grid=1, block=32)


@cute.kernel
def wrong_type(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, tiled_mma: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    thr = tiled_mma.get_slice(tidx)
    rA = cute.make_fragment_like(thr.partition_A(mA), cutlass.Float32)
    rB = tiled_mma.make_fragment_B(thr.partition_B(mB))
    rC = tiled_mma.make_fragment_C(thr.partition_C(mC))
    rA.fill(1.0)
    rB.fill(1.0)
    cute.gemm(tiled_mma, rC, rA, rB, rC)


def test_operand_of_the_wrong_element_type_is_refused():
    A, B = torch.ones(16, 16, dtype=torch.float16), torch.ones(8, 16, dtype=torch.float16)
    with pytest.raises(TraceError, match="operand a holds Float32, MmaF16BF16Op takes Float16|operand a holds f32"):
        wrong_type(from_dlpack(A), from_dlpack(B), from_dlpack(torch.zeros(16, 8)), _atom_mma()).launch(
            grid=1, block=32)


def _one_by_one_and_batched(ab, acc, shape, values, monkeypatch):
    """C (as bits) after cute.gemm of a (64, 32, 2K) tile over two warps, with the mma.syncs run
    one by one and batched; the sizes of the batches; for each batch, whether its products were
    summed as exact sums."""
    from cutelab.kernel.cpu import warps
    from cutelab.kernel.instr import mma_sync

    def run(batch):
        monkeypatch.setattr(warps, "BATCH_RUNS", batch)
        op = cute.nvgpu.warp.MmaF16BF16Op(ab, acc, shape)
        mma = cute.make_tiled_mma(op, cute.make_layout((2, 1, 1)), permutation_mnk=(64, 16, shape[2]))
        g = torch.Generator().manual_seed(3)
        M, N, K = 64, 32, 2 * shape[2]
        if values == "binades":  # values over many binades: the float64 sums round
            A = torch.randn(M, K, generator=g) * 2.0 ** torch.randint(-6, 6, (M, K), generator=g)
            B = torch.randn(N, K, generator=g) * 2.0 ** torch.randint(-6, 6, (N, K), generator=g)
            C = torch.randn(M, N, generator=g)
        elif values == "ints":  # halves and quarters of small integers: every sum exact (in float32 too)
            A = torch.randint(-64, 65, (M, K), generator=g) / 2.0
            B = torch.randint(-64, 65, (N, K), generator=g) / 4.0
            C = torch.randn(M, N, generator=g)
        elif values == "large":  # integers to 2**11: sums exact in float64, not all in float32
            A = torch.randint(-2048, 2049, (M, K), generator=g).float()
            B = torch.randint(-2048, 2049, (N, K), generator=g).float()
            C = torch.randn(M, N, generator=g) * 1000
        else:  # zero products (of -0.0 and +0.0) onto -0.0 and +0.0 accumulators
            A = torch.where(torch.rand(M, K, generator=g) < 0.5, -0.0, 0.0)
            B = torch.where(torch.rand(N, K, generator=g) < 0.5, -0.0, 1.0)
            C = torch.where(torch.rand(M, N, generator=g) < 0.5, -0.0, 0.0)
        A, B, C = A.to(_TORCH[ab.name]), B.to(_TORCH[ab.name]), C.to(_TORCH[acc.name])
        mma_kernel(from_dlpack(A), from_dlpack(B), from_dlpack(C), mma, True).launch(grid=1, block=64)
        return C

    calls, exact = [], []
    real = MmaSync.interpret_batch
    monkeypatch.setattr(MmaSync, "interpret_batch", staticmethod(lambda ops, *a: (calls.append(len(ops)),
                                                                                    real(ops, *a))))
    real_exact = mma_sync._exact_batch

    def spy(*a):
        r = real_exact(*a)
        exact.append(r)
        return r

    monkeypatch.setattr(mma_sync, "_exact_batch", spy)
    one, many = run(False), run(True)
    bits = torch.int16 if acc.name == "f16" else torch.int32
    return one.view(bits), many.view(bits), calls, exact


@pytest.mark.parametrize("ab,acc,shape", SHAPES[:1] + SHAPES[2:3] + SHAPES[4:5], ids=IDS[:1] + IDS[2:3] + IDS[4:5])
def test_independent_mmas_run_as_one_give_the_same_bits(ab, acc, shape, monkeypatch):
    # the interpreter runs a run of independent mma.syncs (cute.gemm's (m, n) loop) as one einsum;
    # values spread over many binades make the float64 sums round, so any change of order would show
    one, many, calls, exact = _one_by_one_and_batched(ab, acc, shape, "binades", monkeypatch)
    assert calls and max(calls) > 1  # the runs were batched
    assert not any(exact)  # (sums that round: summed as einsum sums them)
    assert torch.equal(one, many)


@pytest.mark.parametrize("values", ["ints", "large", "zeros"])
@pytest.mark.parametrize("ab,acc,shape", SHAPES[:1] + SHAPES[2:3], ids=IDS[:1] + IDS[2:3])
def test_batched_mmas_with_exact_sums_give_einsums_bits(ab, acc, shape, values, monkeypatch):
    # where every sum of products is exact in float64 (shown per batch from the operands' largest
    # values and lowest set bits), a batch is one matrix product per warp: the same bits as einsum's,
    # signed zeros included (an exact zero sum is +0.0 before the accumulator is added)
    one, many, calls, exact = _one_by_one_and_batched(ab, acc, shape, values, monkeypatch)
    assert calls and max(calls) > 1 and exact and all(exact)
    assert torch.equal(one, many)
    if values == "zeros":
        assert (many == 0).all()  # every D is +0.0 (bits 0): a zero sum is +0.0, and +0.0 + -0.0 is +0.0
