"""The one table of element types (cutelab/dtypes.py): every type has a row, the conversions
follow the rules it states, and tensors, the interpreter and the CUDA printer use the same ones
(where they used to differ, the cases that showed it)."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
from cutelab import dtypes, fp8
from cutelab.kernel.cuda import dtypes as cuda_dtypes
from cutelab.numeric import (
    NUMERICS,
    BFloat16,
    Float8E4M3FN,
    Float8E5M2,
    Float16,
    Float32,
    Int8,
    Int32,
    Uint8,
    Uint32,
)
from cutelab.runtime import from_dlpack
from cutelab.tensor import TensorSSA


def test_every_element_type_has_a_row_and_its_predicates():
    assert set(dtypes.TABLE) == set(NUMERICS)
    assert [t.name for t in NUMERICS.values() if t.is_fp8] == ["f8E4M3FN", "f8E5M2"]
    assert [t.name for t in NUMERICS.values() if t.is_half] == ["f16", "bf16"]
    assert [t.name for t in NUMERICS.values() if t.is_bool] == ["i1"]


@pytest.mark.parametrize("dt", [t for t in NUMERICS.values() if t.name != "tf32"], ids=lambda t: t.name)
def test_the_cuda_back_end_reads_the_table(dt):
    r = dtypes.row(dt)
    assert cuda_dtypes.ctype(dt) == (r.c_storage, r.c_compute, r.c_printf)
    assert cuda_dtypes.to_compute("x", dt) == r.c_to_compute.format("x")
    assert cuda_dtypes.to_storage("x", dt) == r.c_to_storage.format("x")


@pytest.mark.parametrize("dt", [t for t in NUMERICS.values() if t.name != "tf32"], ids=lambda t: t.name)
def test_storage_round_trips_through_compute_values(dt):
    """Every stored value survives to_compute then to_storage (NaN bits aside; fp8 saturates inf)."""
    if dt.storage.itemsize <= 2:
        info = np.iinfo(np.uint8 if dt.storage.itemsize == 1 else np.uint16)
        bits = np.arange(info.min, info.max + 1, dtype=info.dtype).view(dt.storage)
    else:
        bits = (np.arange(-50, 50) * 7919).astype(dt.storage)
    if dt.is_bool:
        bits = np.array([0, 1], dt.storage)
    v = dtypes.to_compute(bits, dt)
    assert v.dtype == dtypes.compute_dtype(dt)
    back = dtypes.to_storage(v, dt)
    ok = np.isfinite(v) if dt.is_fp8 else ~np.isnan(v) if dt.is_float else np.ones(len(v), bool)
    assert np.array_equal(back[ok], bits[ok])


def test_float_to_int_truncates_toward_zero_and_saturates_as_ptx_cvt_rzi():
    x = np.array([2.7, -2.7, 1e10, -1e10, np.nan, np.inf, -np.inf, 2147483520.0], np.float32)
    assert dtypes.to_storage(x, Int32).tolist() == [2, -2, 2**31 - 1, -2**31, 0, 2**31 - 1, -2**31, 2147483520]
    assert dtypes.to_storage(x, Uint32).tolist() == [2, 0, 2**32 - 1, 0, 0, 2**32 - 1, 0, 2147483520]
    # narrower types: saturate to int (the C compute type), then the low bits, as (signed char)((int)x)
    assert dtypes.to_storage(np.array([300.0, -300.0, -0.5, 1e10]), Int8).tolist() == [44, -44, 0, -1]


def test_rounding_to_half_and_fp8_is_to_nearest_even():
    # ties: 1 + 2^-8 (bf16) and 1 + 2^-11 (f16) round down to 1, 1 + 3*2^-8 rounds up
    assert dtypes.to_storage(np.array([1 + 2**-8, 1 + 3 * 2**-8], np.float32), BFloat16).tolist() == [0x3F80, 0x3F82]
    assert dtypes.to_storage(np.array([1 + 2**-11], np.float32), Float16).tolist() == [1.0]
    assert dtypes.to_storage(np.array([1.0625, 1.1875, np.nan, 1e9]), Float8E4M3FN).tolist() == [0x38, 0x3A, 0x7F, 0x7E]


# ---- the differences between the two conversions that used to exist (tensor.py vs cpu/context.py)

def test_integers_converted_to_fp8_are_numbers_not_bytes():
    """Both conversions took a uint8 array for fp8 bytes: Uint8 3 .to(Float8E4M3FN) stored the
    byte 0x03 (0.005859375) instead of 3.0. Values are now always numbers."""
    s = TensorSSA(np.array([3, 200], np.uint8), 2, Uint8).to(Float8E4M3FN)
    assert fp8.to_f32(s.values, Float8E4M3FN).tolist() == [3.0, 192.0]
    s = TensorSSA(np.array([3, 60000], np.uint16), 2, cute.Uint16).to(BFloat16)
    assert s.numpy().tolist() == [3.0, 59904.0]  # raw words only where stored as bits (Tensor.store of uint16)


@cute.kernel
def _u8_to_fp8(A: cute.Tensor, B: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    B[tidx] = A[tidx].to(Float8E4M3FN)


def test_the_interpreter_converts_uint8_to_fp8_as_the_cuda_code_does():
    """The interpreter passed a Uint8 register's value through as fp8 bits; the CUDA code
    (cl_f32_to_e4m3 of the value) converts the number."""
    a = np.array([0, 1, 3, 17, 200, 255, 7, 8], np.uint8)
    out = np.zeros(8, np.uint8)
    b = from_dlpack(out)
    b.element_type = Float8E4M3FN
    _u8_to_fp8(from_dlpack(a), b).launch(grid=1, block=8)
    assert fp8.to_f32(out, Float8E4M3FN).tolist() == [0.0, 1.0, 3.0, 16.0, 192.0, 256.0, 7.0, 8.0]  # ties to even


def test_tensor_float_to_int_conversion_is_the_interpreters():
    """TensorSSA.to(Int32) used numpy's cast (NaN and out of range: whatever the platform gives,
    INT_MIN on x86); it now saturates and maps NaN to 0, as the interpreter and PTX cvt.rzi."""
    s = TensorSSA(np.array([1.5, -1.5, np.nan, 3e9], np.float32), 4, Float32).to(Int32)
    assert s.values.tolist() == [1, -1, 0, 2**31 - 1]


def test_fp8_values_print_as_floats_in_the_interpreter():
    """cute.printf of an fp8 value printed it with %d on the CPU (int(value)); CUDA prints %f."""
    from cutelab.kernel.cpu.interpreter import _fmt

    assert _fmt(np.float32(2.5), Float8E5M2) == "2.500000"


@cute.kernel
def _f32_to_i32(A: cute.Tensor, B: cute.Tensor, C: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    B[tidx] = A[tidx].to(Int32)
    C[tidx] = A[tidx].to(Int8)


def test_the_interpreter_converts_float_to_int_as_ptx_cvt_rzi():
    """NaN and values out of range became numpy's cast (INT_MIN on x86); the GPU's cvt.rzi gives 0
    and the type's bounds."""
    a = np.array([2.7, -2.7, np.nan, 3e9, -3e9, 300.0, -300.0, 0.5], np.float32)
    b, c = np.zeros(8, np.int32), np.zeros(8, np.int8)
    _f32_to_i32(from_dlpack(a), from_dlpack(b), from_dlpack(c)).launch(grid=1, block=8)
    assert b.tolist() == [2, -2, 0, 2**31 - 1, -2**31, 300, -300, 0]
    assert c.tolist() == [2, -2, 0, -1, 0, 44, -44, 0]  # (signed char)((int)x): saturated int, low bits
