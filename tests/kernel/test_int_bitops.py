"""Integer bitwise operators on kernel values (&, |, ^, ~, <<, >>), as CuTe DSL's Int32/Uint32 have
them: on the CPU interpreter and in the CUDA the printer writes."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
from cutelab import Int32
from cutelab.errors import TraceError
from cutelab.kernel.cuda.printer import render
from cutelab.kernel.launch.plan import last_launch
from cutelab.runtime import from_dlpack


@cute.kernel
def _bitops(mA: cute.Tensor, mU: cute.Tensor, mO: cute.Tensor, mV: cute.Tensor):
    t, _, _ = cute.arch.thread_idx()
    a = mA[t]
    u = mU[t]
    mO[t, 0] = a ^ 1
    mO[t, 1] = a & 6
    mO[t, 2] = a | 8
    mO[t, 3] = a << 2
    mO[t, 4] = a >> 1  # signed: arithmetic shift
    mO[t, 5] = ~a
    mO[t, 6] = 5 ^ a
    mO[t, 7] = 1 << a % 8
    stage = Int32(0)
    for i in cute.range(3):  # quack's double-buffer index: stage ^= 1 in a runtime loop
        stage ^= 1
    mO[t, 8] = stage
    mV[t, 0] = u >> 28  # unsigned: logical shift
    mV[t, 1] = u << 1


def test_integer_bitwise_ops_on_the_interpreter_and_in_cuda():
    A = np.array([-8, -1, 0, 5], np.int32)
    U = np.array([0x80000000, 0xFFFFFFFF, 1, 7], np.uint32)
    O = np.zeros((4, 9), np.int32)
    V = np.zeros((4, 2), np.uint32)
    _bitops(from_dlpack(A), from_dlpack(U), from_dlpack(O), from_dlpack(V)).launch(grid=1, block=4)
    want = np.stack([A ^ 1, A & 6, A | 8, A << 2, A >> 1, ~A, 5 ^ A, 1 << (A % 8), np.ones_like(A)], 1)
    np.testing.assert_array_equal(O, want)
    np.testing.assert_array_equal(V, np.stack([U >> 28, U << 1], 1))
    src = render(last_launch().ir)
    for op in (" ^ ", " & ", " | ", " << ", " >> ", "(~("):
        assert op in src


@cute.kernel
def _float_xor(mX: cute.Tensor):
    t, _, _ = cute.arch.thread_idx()
    mX[t] = mX[t] ^ 1


def test_bitwise_op_of_a_float_value_is_refused():
    X = np.zeros(4, np.float32)
    with pytest.raises(TraceError, match=r"'\^' of tensor values needs integer elements, got Float32"):
        _float_xor(from_dlpack(X)).launch(grid=1, block=4)
