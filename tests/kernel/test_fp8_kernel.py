"""8-bit floats inside kernels: conversions, SM89 fp8 warp MMAs (mma.sync ... e4m3/e5m2) and ldmatrix of
8-bit values, on the CPU interpreter (exact semantics: tests/test_fp8.py checks the conversions) and in the
CUDA printer (compiled with nvcc for sm_90a where it is installed)."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab import fp8
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
from cutelab.runtime import from_dlpack
from test_tensorop_smem import ldsm_kernel

NVCC = shutil.which("nvcc")
E4, E5 = cutlass.Float8E4M3FN, cutlass.Float8E5M2


def _fp8_tensor(values, dt):
    """A kernel tensor of dt over the bytes of values (float), as create_cute_tensor_for_fp8 makes one."""
    store = fp8.from_f32(np.asarray(values, np.float32), dt)
    t = from_dlpack(store)
    t.element_type = dt
    return t, store


def _nvcc(tmp_path, src):
    cu = tmp_path / "k.cu"
    cu.write_text(src)
    p = subprocess.run([NVCC, "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(cu)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]


# ---------------------------------------------------------------------------- conversions

@cute.kernel
def convert(A: cute.Tensor, B: cute.Tensor, C: cute.Tensor, D: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * 128 + tidx
    B[i] = A[i].to(E4)
    C[i] = A[i].to(E5)
    D[i] = B[i].to(cutlass.Float32) + C[i].to(cutlass.Float32)


def test_conversions_in_a_kernel_round_as_the_hardware(tmp_path):
    x = (np.random.default_rng(1).standard_normal(1024) * np.repeat([1e-3, 0.3, 20, 3000], 256)).astype(np.float32)
    x[:4] = [np.nan, np.inf, -1e9, 0.0]
    b, B = _fp8_tensor(np.zeros(1024), E4)
    c, C = _fp8_tensor(np.zeros(1024), E5)
    D = np.zeros(1024, np.float32)
    convert(from_dlpack(x), b, c, from_dlpack(D)).launch(grid=8, block=128)
    assert np.array_equal(B, fp8.from_f32(x, E4)) and np.array_equal(C, fp8.from_f32(x, E5))
    assert np.array_equal(D, fp8.to_f32(B, E4) + fp8.to_f32(C, E5), equal_nan=True)
    assert str(b) == "tensor<ptr<f8E4M3FN, generic> o (1024):(1)>"
    src = cuda.render(last_launch().ir)
    for needle in ("cl_f32_to_e4m3(", "cl_f32_to_e5m2(", "cl_e4m3_to_f32(", "cl_e5m2_to_f32("):
        assert needle in src
    if NVCC:
        _nvcc(tmp_path, src)


def test_element_type_needs_the_same_width():
    t = from_dlpack(np.zeros(4, np.float32))
    from cutelab.errors import TensorError

    with pytest.raises(TensorError, match=r"element_type = Float8E4M3FN: the storage holds Float32; only a type of "
                                          r"the same width \(32 bits\)"):
        t.element_type = E4


# ---------------------------------------------------------------------------- mma.sync fp8

@cute.kernel
def mma_kernel(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, tiled_mma: cutlass.Constexpr):
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
    cute.gemm(tiled_mma, rC, rA, rB, rC)
    cute.autovec_copy(rC, tC)


def _mma(ab, acc, shape, atoms=(1, 1, 1), MNK=None, ints=True, seed=0):
    op = cute.nvgpu.warp.MmaFP8Op(ab, acc, shape)
    perm = tuple(a * s for a, s in zip(atoms, shape))
    tiled = cute.make_tiled_mma(op, cute.make_layout(atoms), permutation_mnk=perm)
    M, N, K = MNK or perm
    rng = np.random.default_rng(seed)
    if ints:
        A, B = rng.integers(-3, 4, (M, K)), rng.integers(-3, 4, (N, K))
        C = rng.integers(-8, 9, (M, N))
    else:  # any finite fp8 values: their products are exact in float64
        codes = np.arange(256, dtype=np.uint8)
        fin = codes[np.isfinite(fp8.to_f32(codes, ab)) & (np.abs(fp8.to_f32(codes, ab)) < 64)]
        A, B = (fp8.to_f32(rng.choice(fin, s), ab) for s in ((M, K), (N, K)))
        C = rng.standard_normal((M, N))
    a, A8 = _fp8_tensor(A, ab)
    b, B8 = _fp8_tensor(B, ab)
    Cn = np.asarray(C, np.float32 if acc is cutlass.Float32 else np.float16)
    Av, Bv = fp8.to_f32(A8, ab).astype(np.float64).reshape(M, K), fp8.to_f32(B8, ab).astype(np.float64).reshape(N, K)
    ref = Av @ Bv.T + Cn.astype(np.float64)
    mma_kernel(a, b, from_dlpack(Cn), tiled).launch(grid=1, block=32 * atoms[0] * atoms[1] * atoms[2])
    return Cn.astype(np.float64), ref


FP8 = [(E4, cutlass.Float32, (16, 8, 32)), (E5, cutlass.Float32, (16, 8, 32)), (E4, cutlass.Float16, (16, 8, 32)),
       (E4, cutlass.Float32, (16, 8, 16)), (E5, cutlass.Float16, (16, 8, 16))]
FP8_IDS = [f"{a.name}-{c.name}-k{s[2]}" for a, c, s in FP8]


@pytest.mark.parametrize("ab,acc,shape", FP8, ids=FP8_IDS)
def test_fp8_mma_is_exact_on_small_integers(ab, acc, shape):
    got, ref = _mma(ab, acc, shape)
    assert np.array_equal(got, ref)
    got, ref = _mma(ab, acc, shape, atoms=(2, 2, 1), MNK=(64, 32, 3 * shape[2]), seed=1)
    assert np.array_equal(got, ref)


@pytest.mark.parametrize("ab,acc,shape", FP8[:2], ids=FP8_IDS[:2])
def test_fp8_mma_of_any_values_rounds_once_per_instruction(ab, acc, shape):
    got, ref = _mma(ab, acc, shape, MNK=(16, 8, 2 * shape[2]), ints=False, seed=2)
    # two instructions along K, each rounding its exact sum to f32
    assert np.abs(got - ref).max() <= 2 * 2.0 ** -24 * (np.abs(ref).max() + 64 * 64 * shape[2])
    assert not np.array_equal(got, np.zeros_like(got))


@pytest.mark.parametrize("ab,acc,shape", FP8, ids=FP8_IDS)
def test_fp8_mma_prints_inline_ptx(ab, acc, shape, tmp_path):
    _mma(ab, acc, shape, atoms=(2, 2, 1))
    src = cuda.render(last_launch().ir)
    t = {"f8E4M3FN": "e4m3", "f8E5M2": "e5m2"}[ab.name]
    name = f"mma.sync.aligned.m16n8k{shape[2]}.row.col.{acc.name}.{t}.{t}.{acc.name}"
    assert name in src
    assert " << 24)" in src  # four 8-bit values in each 32-bit register
    if NVCC:
        _nvcc(tmp_path, src)


# ---------------------------------------------------------------------------- ldmatrix of 8-bit values

# the same ldmatrix kernel as the 16-bit tests': shared memory filled, one tiled copy into the MMA's fragment
ldsm8 = ldsm_kernel


def _ldsm8(operand, k, swz, dt=E4, num=4):
    mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaFP8Op(dt, cutlass.Float32, (16, 8, k)), cute.make_layout((1, 1, 1)))
    atom = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x16x8bOp(False, num), dt)
    R, C = (16 if operand == "A" else 8), 2 * k  # two k-blocks, K-major rows
    L = cute.make_layout((R, C), stride=(C, 1))
    sl = cute.make_composed_layout(cute.make_swizzle(1, 4, 3), 0, L) if swz else L  # 16-byte chunks stay whole
    codes = (np.arange(R * C) * 37 % 251).astype(np.uint8).reshape(R, C)  # any bytes: ldmatrix moves bits
    data = from_dlpack(codes)
    data.element_type = dt
    nv = cute.size(mma.tv_layout_A if operand == "A" else mma.tv_layout_B) // 32 * 2
    out_codes = np.zeros((32, nv), np.uint8)
    out = from_dlpack(out_codes)
    out.element_type = dt
    ldsm8(data, out, sl, mma, atom, operand).launch(grid=1, block=32)
    S = cute.make_tensor(codes.ravel().copy(), cute.make_layout((R, C), stride=(C, 1)))
    thr = mma.get_slice(np.arange(32))
    part = thr.partition_A(S) if operand == "A" else thr.partition_B(S)
    want = np.asarray(part.load().values).reshape(32, nv)
    return out_codes, want


LDSM8 = [("A", 32, False), ("A", 32, True), ("B", 32, False), ("B", 32, True), ("A", 16, False)]


@pytest.mark.parametrize("operand,k,swz", LDSM8, ids=[f"{o}-k{k}-{'swz' if s else 'plain'}" for o, k, s in LDSM8])
def test_ldmatrix_of_8_bit_values_gives_the_mma_fragment(operand, k, swz):
    num = 4 if operand == "A" and k == 32 else 2
    out, want = _ldsm8(operand, k, swz, num=num)
    assert np.array_equal(out, want)


def test_ldmatrix_of_8_bit_values_prints_ptx(tmp_path):
    _ldsm8("A", 32, True)
    src = cuda.render(last_launch().ir)
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in src and ">> 24) & 0xffu)" in src
    if NVCC:
        _nvcc(tmp_path, src)


def test_unpacking_6_bit_ldmatrix_is_refused():
    # (4-bit unpacking runs: tests/kernel/test_ldmatrix_sm100.py, the mixed-input FMHA decode's Int4 K and V)
    from cutelab.errors import TraceError

    mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaFP8Op(E4, cutlass.Float32, (16, 8, 32)), cute.make_layout((1, 1, 1)))
    atom = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x16x8bOp(False, 4, 6), E4)
    codes = np.zeros((16, 64), np.uint8)
    data = from_dlpack(codes)
    data.element_type = E4
    out = from_dlpack(np.zeros((32, 32), np.uint8))
    out.element_type = E4
    with pytest.raises(TraceError, match=r"LdMatrix8x16x8bOp with unpack_bits=6 .* is not supported inside cutelab"):
        ldsm8(data, out, cute.make_layout((16, 64), stride=(64, 1)), mma, atom, "A").launch(grid=1, block=32)


# ---------------------------------------------------------------------------- tensorop_gemm's fp8 options

def _example(*args):
    import os
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, str(root / "examples" / "dsl" / "tensorop_gemm.py"), *args, "--benchmark", "none"],
                          capture_output=True, text=True, env=env, timeout=900)


@pytest.mark.parametrize("args", [
    ("--mnkl", "144,80,96,2", "--ab_dtype", "Float8E4M3FN", "--a_major", "k", "--b_major", "k", "--c_major", "m"),
    ("--mnkl", "128,128,128,1", "--ab_dtype", "Float8E5M2", "--a_major", "m", "--b_major", "n"),
], ids=["e4m3-kk-ldmatrix", "e5m2-mn-universal"])
def test_tensorop_gemm_example_with_fp8_on_the_cpu(args):
    pytest.importorskip("torch")
    p = _example(*args)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    assert p.stdout.rstrip().endswith("PASS") and "Skip reference checking: False" in p.stdout


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_tensorop_gemm_fp8_cuda_compiles_with_nvcc(tmp_path):
    pytest.importorskip("torch")
    import os
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = f"""
import sys
sys.argv = ["tensorop_gemm"]
sys.path.insert(0, {str(root / 'examples' / 'dsl')!r})
import tensorop_gemm as tg
import cutelab as cutlass
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
tg.run((128, 128, 128, 1), cutlass.Float8E4M3FN, cutlass.Float16, cutlass.Float32, "k", "k", "n", (2, 2, 1))
open({str(tmp_path / 'k.cu')!r}, "w").write(cuda.render(last_launch().ir))
"""
    env = dict(os.environ, PYTHONPATH=str(root / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    src = (tmp_path / "k.cu").read_text()
    for needle in ("ldmatrix.sync.aligned.m8n8.x4.shared.b16", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
                   "cp.async.cg.shared.global"):
        assert needle in src, needle
    _nvcc(tmp_path, src)


# ---------------------------------------------------------------------------- on a GPU

@pytest.mark.gpu
@pytest.mark.parametrize("args", [
    ("--mnkl", "1024,512,1024,1", "--ab_dtype", "Float8E4M3FN", "--a_major", "k", "--b_major", "k"),
    # irregular (not whole 128x128 tiles) but M and N divisible by 16: the example marks M-/N-major 8-bit
    # operands' leading extents divisible by 16, and 520 x 264 is refused there (clear error, checked on the H100)
    ("--mnkl", "528,272,200,2", "--ab_dtype", "Float8E5M2", "--a_major", "m", "--b_major", "n", "--c_major", "m"),
    ("--mnkl", "512,512,512,1", "--ab_dtype", "Float8E4M3FN", "--acc_dtype", "Float16", "--a_major", "k",
     "--b_major", "n"),
], ids=["e4m3-kk", "e5m2-mn-irregular", "e4m3-f16acc"])
def test_tensorop_gemm_example_with_fp8_on_gpu(args):
    p = _example(*args)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    assert p.stdout.rstrip().endswith("PASS")


@pytest.mark.gpu
@pytest.mark.parametrize("ab,acc,shape", FP8, ids=FP8_IDS)
def test_fp8_mma_on_gpu_equals_the_interpreter(ab, acc, shape):
    import torch

    op = cute.nvgpu.warp.MmaFP8Op(ab, acc, shape)
    tiled = cute.make_tiled_mma(op, cute.make_layout((2, 2, 1)), permutation_mnk=(32, 16, shape[2]))
    M, N, K = 32, 16, 4 * shape[2]
    rng = np.random.default_rng(3)
    A8, B8 = (fp8.from_f32(rng.integers(-4, 5, s).astype(np.float32), ab) for s in ((M, K), (N, K)))
    C = rng.integers(-8, 9, (M, N)).astype(np.float32 if acc is cutlass.Float32 else np.float16)
    outs = []
    for dev in ("cpu", "cuda"):
        a = torch.from_numpy(A8).to(dev)
        b = torch.from_numpy(B8).to(dev)
        c = torch.from_numpy(C.copy()).to(dev)
        ta, tb = from_dlpack(a), from_dlpack(b)
        ta.element_type, tb.element_type = ab, ab
        mma_kernel(ta, tb, from_dlpack(c), tiled).launch(grid=1, block=128)
        if dev == "cuda":
            torch.cuda.synchronize()
        outs.append(c.cpu().numpy())
    assert np.array_equal(outs[0], outs[1])
    ref = fp8.to_f32(A8, ab).astype(np.float64) @ fp8.to_f32(B8, ab).astype(np.float64).T + C
    assert np.array_equal(outs[1].astype(np.float64), ref)
