"""Element types of arithmetic between values of different types, as CuTe DSL 4.8.1 promotes them
(checked there with CUTE_DSL_ARCH=sm_90a, 2026-11-27: a Float16 TensorSSA times 2.5, times 2 and times
a Float32 argument is Float32; BFloat16 times 2.5 is Float32), in kernels and on the host."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
from cutelab.numeric import BFloat16, Float16, Float32, Float8E4M3FN, Float8E5M2, Int8, Int32, float_promotion
from cutelab.runtime import from_dlpack


def test_float_promotion_table():
    assert float_promotion(Float16, Float32) is Float32
    assert float_promotion(Float16, Int32) is Float32  # a Python int is an Int32
    assert float_promotion(BFloat16, Float32) is Float32
    assert float_promotion(Float16, Int8) is Float16
    assert float_promotion(BFloat16, Float16) is Float16  # one width: Float16 wins, as in the DSL
    with pytest.raises(TypeError, match="implicit float promotion"):
        float_promotion(Float8E4M3FN, Float8E5M2)


@cute.kernel
def _mixed(A: cute.Tensor, B: cute.Tensor, C: cute.Tensor, D: cute.Tensor, s: float):
    tidx, _, _ = cute.arch.thread_idx()
    a = A[(tidx, None)].load()  # f16
    C[(tidx, None)].store(a * 2.5)  # Float32 values, stored into a Float32 tensor
    D[(tidx, None)].store((a * s + B[(tidx, None)].load()).to(cute.Float16))  # f16 * Float32 + f32


def test_kernel_values_promote_as_cute_dsl():
    A = (np.arange(32 * 4, dtype=np.float32).reshape(32, 4) / 7).astype(np.float16)
    B = np.full((32, 4), 0.1, np.float32)
    C = np.zeros((32, 4), np.float32)
    D = np.zeros((32, 4), np.float16)
    _mixed(from_dlpack(A), from_dlpack(B), from_dlpack(C), from_dlpack(D), 0.3).launch(grid=1, block=32)
    np.testing.assert_array_equal(C, A.astype(np.float32) * np.float32(2.5))
    np.testing.assert_array_equal(D, (A.astype(np.float32) * np.float32(0.3) + B).astype(np.float16))


def test_host_values_promote_as_cute_dsl():
    a = from_dlpack(np.array([1.5, 2.25, -3.0, 0.1], np.float16)).load()
    assert (a * 2.5).dtype is Float32 and (a * 2).dtype is Float32 and (a + a).dtype is Float16
    b = from_dlpack(np.array([0.1, 0.2, 0.3, 0.4], np.float32)).load()
    assert (a * b).dtype is Float32
    np.testing.assert_array_equal((a * b).values, np.float16([1.5, 2.25, -3.0, 0.1]).astype(np.float32) * b.values)


@cute.kernel
def _ints(U: cute.Tensor, I: cute.Tensor, S: cute.Tensor, O: cute.Tensor, P: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    u = U[tidx]  # Uint32
    i = I[tidx]  # Int32
    s = S[tidx]  # Int8
    O[tidx] = u | (i << 4)  # Uint32 | Int32: Uint32 (the unsigned type is as wide)
    P[tidx] = s + i  # Int8 + Int32: Int32 (the wider)


def test_kernel_integers_promote_as_cute_dsl():
    """base_dsl.typing._promote_integer: mixed signedness takes the unsigned type when it is at least as
    wide, else the signed one; one signedness takes the wider type."""
    from cutelab.kernel.frontend.trace import _result_dtype
    from cutelab.numeric import Int64, Uint8, Uint32

    assert _result_dtype(Uint32, Int32, "bor") is Uint32 and _result_dtype(Int32, Uint32, "add") is Uint32
    assert _result_dtype(Uint8, Int32, "add") is Int32 and _result_dtype(Int64, Uint32, "mul") is Int64
    assert _result_dtype(Int8, Int32, "add") is Int32
    U = np.array([1, 2, 0xF0000000, 3], np.uint32)
    I = np.array([1, -1, 2, 5], np.int32)
    S = np.array([-3, 4, 100, -128], np.int8)
    O = np.zeros(4, np.uint32)
    P = np.zeros(4, np.int32)
    _ints(from_dlpack(U), from_dlpack(I), from_dlpack(S), from_dlpack(O), from_dlpack(P)).launch(grid=1, block=4)
    np.testing.assert_array_equal(O, U | (I.astype(np.int64) << 4).astype(np.uint32))
    np.testing.assert_array_equal(P, S.astype(np.int32) + I)
