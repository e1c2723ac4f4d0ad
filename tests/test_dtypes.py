"""The one table of element types (cutelab/dtypes.py): every type has a row, the conversions
follow the rules it states, and tensors, the interpreter and the CUDA printer use the same ones
(where they used to differ, the cases that showed it)."""

from __future__ import annotations

import numpy as np
import pytest

from cutelab import dtypes
from cutelab.kernel.cuda import dtypes as cuda_dtypes
from cutelab.numeric import (
    NUMERICS,
    BFloat16,
    Float8E4M3FN,
    Float16,
    Int8,
    Int32,
    Uint32,
)


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
