"""A loop or thread index with a Python float (async_pipeline.ipynb: ``staging_smem[0] = i * 1.0``): as in
CuTe DSL, the Int32 index converts to Float32 and the arithmetic is on Float32 values."""
import numpy as np

import cutelab as cute
import cutelab as cutlass
from cutelab.runtime import from_dlpack


@cute.kernel
def _float_of_index(a: cute.Tensor, b: cute.Tensor):
    t, _, _ = cute.arch.thread_idx()
    for i in cutlass.range(4):
        a[t * 4 + i] = i * 1.0 + 0.5
    b[t] = 2.0 * t - 0.25 + t / 2.0 + 1.0 / (t + 1)


def test_index_with_float_is_float32_arithmetic():
    a, b = np.zeros(8, np.float32), np.zeros(2, np.float32)
    _float_of_index(from_dlpack(a), from_dlpack(b)).launch(grid=(1, 1, 1), block=(2, 1, 1))
    assert a.tolist() == [0.5, 1.5, 2.5, 3.5] * 2
    t = np.arange(2, dtype=np.float32)
    ref = np.float32(2.0) * t - np.float32(0.25) + t / np.float32(2.0) + np.float32(1.0) / (t + np.float32(1))
    assert b.tolist() == ref.tolist()
