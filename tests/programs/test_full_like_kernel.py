"""cute.full_like / zeros_like / ones_like inside a kernel (elementwise_add.ipynb's mul_relu:
``cute.where(tmp > 0, tmp, cute.full_like(tmp, 0))``): a value of constants shaped like its argument."""
import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import TraceError
from cutelab.runtime import from_dlpack


@cute.kernel
def _relu_like(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, d: cute.Tensor):
    t, _, _ = cute.arch.thread_idx()
    x = a[t, None].load() * b[t, None].load()
    c[t, None].store(cute.where(x > 0, x, cute.full_like(x, 0)))
    y = cute.zeros_like(x) + cute.ones_like(x) * 2.0 + cute.full_like(x, 7, dtype=cutlass.Int32).to(cutlass.Float32)
    d[t, None].store(y)


def test_full_like_in_a_kernel_is_a_value_of_constants():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 8)).astype(np.float32)
    b = rng.standard_normal((4, 8)).astype(np.float32)
    c, d = np.full_like(a, -1), np.zeros_like(a)
    _relu_like(from_dlpack(a), from_dlpack(b), from_dlpack(c), from_dlpack(d)).launch(grid=(1, 1, 1), block=(4, 1, 1))
    assert np.array_equal(c, np.maximum(a * b, 0))
    assert np.all(d == 9.0)


@cute.kernel
def _bad_fill(a: cute.Tensor):
    t, _, _ = cute.arch.thread_idx()
    x = a[t, None].load()
    a[t, None].store(cute.full_like(x, x))


def test_full_like_in_a_kernel_refuses_a_non_constant_fill():
    a = np.zeros((2, 4), np.float32)
    with pytest.raises(TraceError, match="the fill value must be a Python number"):
        _bad_fill(from_dlpack(a)).launch(grid=(1, 1, 1), block=(2, 1, 1))
