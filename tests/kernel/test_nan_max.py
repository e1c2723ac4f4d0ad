"""A NaN through max and min, as CuTe DSL 4.8.1 computes it, on the CPU and in the printed CUDA.

CuTe DSL's PTX (compiled offline for sm_90a, 2026-11-28) has two kinds of float max/min:
- NaN-propagating (arith.maximumf/minimumf): Python ``max``/``min`` of Float32 values and
  ``cutlass.max``/``min`` (a compare and select with a NaN test), ``cute.arch.fmax(..., nan=True)``,
  ``cute.math.max(..., propagate_nan=True)`` and ``TensorSSA.reduce`` with MAX/MIN (``max.NaN.f32``);
- NaN-ignoring, the other operand being the result (IEEE maxNum): ``cute.arch.fmax``/``fmin``
  (``max.f32``/``min.f32``) and ``cute.math.max``/``min`` by default (arith.maxnumf).
cutelab printed every one as ``max()``/``fmaxf`` (NaN-ignoring) while its interpreter propagated NaN.
"""

import math

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.compat.dsl_names import MATH_EXTRAS
from cutelab.errors import TraceError
from cutelab.kernel.cuda.fakegpu import FakeDeviceArray, fake_gpu
from cutelab.kernel.launch.plan import last_launch
from cutelab.runtime import from_dlpack

NAN = float("nan")


@cute.kernel
def _forms(x: cute.Tensor, y: cute.Tensor):
    a = x[0]
    b = x[1]
    y[0] = max(a, b)
    y[1] = cutlass.max(a, b)
    y[2] = cute.arch.fmax(a, b)
    y[3] = cute.arch.fmax(a, b, nan=True)
    r = cute.make_rmem_tensor((4,), cutlass.Float32)
    for i in cutlass.range_constexpr(4):
        r[i] = x[i]
    v = r.load()
    y[4] = v.reduce(cute.ReductionOp.MAX, -cutlass.Float32.inf, 0)
    y[5] = MATH_EXTRAS["max"](a, b)
    y[6] = MATH_EXTRAS["max"](a, b, propagate_nan=True)
    y[7] = min(a, b)
    y[8] = cute.arch.fmin(a, b)
    y[9] = v.reduce(cute.ReductionOp.MIN, cutlass.Float32.inf, 0)
    y[10] = MATH_EXTRAS["min"](a, b)


# which results are NaN when an operand is NaN (the others are the non-NaN operand)
_PROPAGATES = {0: True, 1: True, 2: False, 3: True, 4: True, 5: False, 6: True, 7: True, 8: False, 9: True, 10: False}


@pytest.mark.parametrize("x", [(NAN, 2.0, 1.0, -1.0), (2.0, NAN, 1.0, -1.0)], ids=["a NaN", "b NaN"])
def test_a_nan_operand_on_the_cpu(x):
    xs = np.array(x, np.float32)
    y = np.zeros(11, np.float32)
    _forms(from_dlpack(xs), from_dlpack(y)).launch(grid=1, block=1)
    for i, nan in _PROPAGATES.items():
        if nan:
            assert math.isnan(y[i]), (i, y[i])
        else:  # the other operand: 2.0 (both max and min of {NaN, 2})
            assert y[i] == 2.0, (i, y[i])


def test_without_nan_every_form_is_max_or_min():
    xs = np.array([3.0, -2.0, 5.0, 0.5], np.float32)
    y = np.zeros(11, np.float32)
    _forms(from_dlpack(xs), from_dlpack(y)).launch(grid=1, block=1)
    np.testing.assert_array_equal(y, [3, 3, 3, 3, 5, 3, 3, -2, -2, -2, -2])


def test_the_gpu_prints_each_kind():
    with fake_gpu():
        xs, y = FakeDeviceArray(np.zeros(4, np.float32)), FakeDeviceArray(np.zeros(11, np.float32))
        _forms(from_dlpack(xs), from_dlpack(y)).launch(grid=1, block=1)
        src = last_launch().source
    body = src[src.index("__global__"):]
    # NaN-propagating: Python max/min, cutlass.max, fmax(nan=True), math.max(propagate_nan), the reductions
    assert body.count("cl_fmax_nan(") == 4 + 3  # 4 scalar forms + the reduction tree of 4 values (3 maxes)
    assert body.count("cl_fmin_nan(") == 1 + 3
    assert body.count("fmaxf(") == 2 and body.count("fminf(") == 2  # cute.arch.fmax/fmin, cute.math.max/min
    assert "max.NaN.f32" in src and "min.NaN.f32" in src  # cl_fmax_nan's instruction on sm_80 and later
    assert " max(" not in body and " min(" not in body


@cute.kernel
def _abs_form(x: cute.Tensor):
    x[0] = cute.arch.fmax(x[0], x[1], abs=True)


def test_unsupported_forms_are_refused():
    with pytest.raises(TraceError, match=r"cute\.arch\.fmax\(abs=True"):
        _abs_form(from_dlpack(np.zeros(2, np.float32))).launch(grid=1, block=1)


def test_python_numbers():
    from cutelab.kernel.arch import fmax, fmin

    assert fmax(NAN, 1.0) == 1.0 and fmin(1.0, NAN) == 1.0
    assert math.isnan(fmax(NAN, 1.0, nan=True))
    assert MATH_EXTRAS["max"](NAN, 1.0) == 1.0 and math.isnan(MATH_EXTRAS["max"](NAN, 1.0, propagate_nan=True))
    assert MATH_EXTRAS["max"](3, 4) == 4
