"""cute.gemm on the host: d = a * b + c through the atoms' TV layouts equals numpy's matmul."""

import numpy as np
import pytest

import cutelab as cute
from cutelab.errors import TensorError
from cutelab.nvgpu import MmaUniversalOp, OperandMajorMode as MM, warp, warpgroup
from cutelab.numeric import Float8E4M3FN, Float8E5M2
from cutelab.nvgpu.mma_atom import _as_numbers
from cutelab.tensor import f32_to_bf16

SRC = warpgroup.OperandSource


def _tensor(x, dtype=None):
    """A column-major cutelab tensor over a copy of the 2-D array x (bf16 stored as bits)."""
    flat = np.asfortranarray(x).ravel(order="F").copy()
    if dtype is cute.BFloat16:
        from cutelab.tensor import NumpyEngine

        eng = NumpyEngine(f32_to_bf16(flat.astype(np.float32)), cute.BFloat16)
        return cute.Tensor(eng, cute.make_layout(x.shape))
    return cute.make_tensor(flat, cute.make_layout(x.shape))


CASES = [
    (MmaUniversalOp(cute.Float32), (4, 2, 1), (8, 6, 5), np.float32, np.float32, None),
    (warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 8)), (2, 1, 1), (32, 16, 16), np.float16, np.float32, None),
    (warp.MmaF16BF16Op(cute.Float16, cute.Float16, (16, 8, 16)), (2, 2, 1), (64, 32, 48), np.float16, np.float16, None),
    (warp.MmaF16BF16Op(cute.BFloat16, cute.Float32, (16, 8, 16)), (1, 2, 1), (16, 32, 32), np.float32, np.float32,
     cute.BFloat16),
    (warp.MmaTF32Op((16, 8, 4)), (1, 2, 1), (32, 32, 8), np.float32, np.float32, None),
    (warp.MmaTF32Op((16, 8, 8)), (2, 1, 1), (32, 8, 16), np.float32, np.float32, None),
    (warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, 32, 16), SRC.RMEM, MM.K, MM.K), (2, 1, 1),
     (128, 64, 32), np.float16, np.float32, None),
    (warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, 32, 16), SRC.SMEM, MM.K, MM.MN), (1, 1, 1),
     (64, 64, 32), np.float16, np.float32, None),
    (warpgroup.MmaI8Op(cute.Int8, cute.Uint8, cute.Int32, (64, 24, 32), SRC.RMEM, MM.K, MM.K), (1, 1, 1),
     (64, 48, 64), np.int8, np.int32, None),
]


@pytest.mark.parametrize("op,al,mnk,ab,acc,abdt", CASES, ids=lambda x: type(x).__name__ if hasattr(x, "__dict__") or hasattr(x, "__slots__") else None)
def test_gemm_matches_numpy(op, al, mnk, ab, acc, abdt):
    rng = np.random.default_rng(1)
    M, N, K = mnk
    a = rng.integers(-3, 4, (M, K)).astype(ab)
    b = rng.integers(0 if ab is np.int8 and "Uint8" in repr(op) else -3, 4, (N, K)).astype(ab)
    c = rng.integers(-3, 4, (M, N)).astype(acc)
    mma = cute.make_tiled_mma(op, al)
    if isinstance(op, warpgroup.MmaOp):
        assert mma.get(warpgroup.Field.ACCUMULATE) is False  # as made: d = a * b, c ignored
        mma.set(warpgroup.Field.ACCUMULATE, True)
    A, B, C = _tensor(a, abdt), _tensor(b, abdt), _tensor(c)
    thr = mma.get_slice(np.arange(mma.size))
    fc = thr.partition_C(C)
    cute.gemm(mma, fc, thr.partition_A(A), thr.partition_B(B), fc)
    ref = a.astype(np.float64) @ b.astype(np.float64).T + c
    assert np.abs(C.numpy() - ref).max() == 0
    assert np.abs(ref - c).max() > 0  # the product is not trivially zero


def test_gemm_into_fragment_then_copy_back():
    op = warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16))
    mma = cute.make_tiled_mma(op, (2, 2, 1))
    rng = np.random.default_rng(2)
    a = rng.standard_normal((32, 32)).astype(np.float16)
    b = rng.standard_normal((16, 32)).astype(np.float16)
    C = _tensor(np.zeros((32, 16), np.float32))
    thr = mma.get_slice(np.arange(mma.size))
    pc = thr.partition_C(C)
    acc = thr.make_fragment_C(pc)
    assert acc.batch == (128,) and acc.element_type is cute.Float32
    acc.fill(0.0)
    cute.gemm(mma, acc, thr.partition_A(_tensor(a)), thr.partition_B(_tensor(b)), acc)
    pc.store(acc.load())
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_allclose(C.numpy(), ref, rtol=1e-6, atol=1e-5)


def test_fp8_values():
    raw = np.array([0x38, 0xB8, 0x01, 0x7E, 0x7F], dtype=np.uint8)
    v = _as_numbers(raw, Float8E4M3FN)
    assert v[:4].tolist() == [1.0, -1.0, 2.0 ** -9, 448.0] and np.isnan(v[4])
    raw = np.array([0x3C, 0x01, 0x7B, 0x7C], dtype=np.uint8)
    v = _as_numbers(raw, Float8E5M2)
    assert v.tolist() == [1.0, 2.0 ** -16, 57344.0, np.inf]


def test_gemm_errors():
    op = warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 8))
    mma = cute.make_tiled_mma(op)
    A = _tensor(np.zeros((16, 8), np.float16))
    B = _tensor(np.zeros((8, 8), np.float16))
    C = _tensor(np.zeros((16, 8), np.float32))
    one = mma.get_slice(3)
    with pytest.raises(TensorError, match="fragments of all 32 threads"):
        cute.gemm(mma, one.partition_C(C), one.partition_A(A), one.partition_B(B), one.partition_C(C))
    thr = mma.get_slice(np.arange(32))
    with pytest.raises(TensorError, match="same rank"):
        cute.gemm(mma, thr.partition_C(C), thr.partition_A(A), thr.partition_B(B)[(None, 0, 0)], thr.partition_C(C))
    with pytest.raises(TensorError, match="value modes"):
        cute.gemm(mma, thr.partition_C(C), thr.partition_B(B), thr.partition_B(B), thr.partition_C(C))
    k2 = cute.make_tiled_mma(op, (1, 1, 2))
    t2 = k2.get_slice(np.arange(64))
    A2 = _tensor(np.zeros((16, 16), np.float16))
    B2 = _tensor(np.zeros((8, 16), np.float16))
    with pytest.raises(TensorError, match="threads along K"):
        cute.gemm(k2, t2.partition_C(C), t2.partition_A(A2), t2.partition_B(B2), t2.partition_C(C))
    with pytest.raises(TypeError, match="expected an MMA"):
        cute.gemm("mma", C, A, B, C)


def test_warpgroup_accumulate_field():
    op = warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, 8, 16), SRC.RMEM, MM.K, MM.K)
    mma = cute.make_tiled_mma(op)
    rng = np.random.default_rng(3)
    a = rng.integers(-3, 4, (64, 16)).astype(np.float16)
    b = rng.integers(-3, 4, (8, 16)).astype(np.float16)
    c = np.full((64, 8), 5.0, np.float32)
    C = _tensor(c)
    thr = mma.get_slice(np.arange(128))
    fc = thr.partition_C(C)
    cute.gemm(mma, fc, thr.partition_A(_tensor(a)), thr.partition_B(_tensor(b)), fc)
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    assert (C.numpy() == ref).all()  # ACCUMULATE is False: c was not added
    thr.set("accum_c", True)  # the slice shares the tiled MMA's state
    assert mma.get(warpgroup.Field.ACCUMULATE) is True
    cute.gemm(mma, fc, thr.partition_A(_tensor(a)), thr.partition_B(_tensor(b)), fc)
    assert (C.numpy() == 2 * ref).all()
    atom = cute.make_mma_atom(op)
    assert atom.get(warpgroup.Field.ACCUMULATE) is False
    from cutelab.errors import LayoutError

    with pytest.raises(LayoutError, match="invalid field"):
        atom.set("neg_a", True)
    with pytest.raises(LayoutError, match="no runtime state"):
        cute.make_mma_atom(warp.MmaTF32Op((16, 8, 8))).set(warpgroup.Field.ACCUMULATE, True)
