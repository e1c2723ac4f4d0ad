"""cute.arch.exp2 / exp, as CuTe DSL 4.8.1 writes them (an inline ex2.approx.ftz.f32): on the host and
of a kernel's value (quack 0.1.9's utils.exp2f calls cute.arch.exp2)."""

import numpy as np

import cutelab as cute
from cutelab.compat.dsl_names import ARCH_EXTRAS
from cutelab.runtime import from_dlpack


def test_cute_arch_exp2_of_a_kernel_value():
    exp2, exp = ARCH_EXTRAS["exp2"], ARCH_EXTRAS["exp"]
    assert exp2(3.0) == 8.0 and abs(exp(1.0) - np.e) < 1e-5

    @cute.kernel
    def k(A: cute.Tensor, B: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        B[tidx] = exp2(A[tidx])  # quack's utils.exp2f: cute.arch.exp2 of a Float32 value

    A, B = np.array([0.0, 1.0, -2.0, 10.0], np.float32), np.zeros(4, np.float32)
    k(from_dlpack(A), from_dlpack(B)).launch(grid=1, block=4)
    assert np.allclose(B, np.exp2(A), rtol=1e-6)
