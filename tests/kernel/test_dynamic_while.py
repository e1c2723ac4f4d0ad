"""A ``while`` whose condition is a dynamic value (a DynBool: a comparison of a trip count taken from a tensor's
dynamic extent, or from an Int32 argument) is a runtime loop, as CuTe DSL's scf.while: its body is traced once,
whatever the trip count, and its counters (a DynInt, a Python int the body moves) are carried in registers.
CUTLASS's Hopper FMHA counts its KV tiles so (``while k_tile_count > 0``); traced once per tile, its CUDA grew
with the sequence length (99,000 lines at 8192). On the CPU interpreter, the loop still runs every trip."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.dynamic import DynInt
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
from cutelab.runtime import from_dlpack


@cute.kernel
def tile_sum(A: cute.Tensor, B: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    count = cute.ceil_div(A.shape[1], 4)  # a dynamic extent's tile count (a DynInt)
    k = 0  # a Python int the loop moves: a runtime Int32 in the loop, as CuTe DSL promotes it
    acc = A[tidx, 0] * 0
    while count > 0:
        acc = acc + A[tidx, k * 4]
        k += 1
        count -= 1
    B[tidx] = acc + k  # both carried values are the loop's results after it


def _tile_sum(n, dynamic=True):
    A = (np.arange(4 * n, dtype=np.float32).reshape(4, n) % 13) - 6
    B = np.zeros(4, np.float32)
    a = from_dlpack(A)
    tile_sum(a.mark_layout_dynamic() if dynamic else a, from_dlpack(B)).launch(grid=1, block=4)
    np.testing.assert_array_equal(B, A[:, ::4].sum(1) + (n + 3) // 4)
    return cuda.render(last_launch().ir)


def test_while_over_a_dynamic_extent_is_one_loop_at_every_size():
    small, large = _tile_sum(16), _tile_sum(1024)  # 4 and 256 trips, each checked on the interpreter
    for src in (small, large):
        body = src.split("__global__", 1)[1]
        assert body.count("while (true) {") == 1 and "break;" in body
        assert body.count("__ldg(A") == 2  # the first element, and one load in the loop: not 4 or 256 copies
    assert small.count("\n") == large.count("\n")  # the size changes constants, not the code's length
    assert len(small.split("__global__", 1)[1].splitlines()) < 60  # the kernel's own lines (not the fixed prelude)


def test_zero_trip_dynamic_while_leaves_the_values_as_they_were():
    A = np.arange(8, dtype=np.float32).reshape(4, 2)
    B = np.zeros(4, np.float32)

    @cute.kernel
    def countdown(A: cute.Tensor, B: cute.Tensor, n):
        tidx, _, _ = cute.arch.thread_idx()
        left = n - A.shape[1]  # 0 trips when n == 2
        acc = A[tidx, 0]
        while left > 0:
            acc = acc * 2.0
            left -= 1
        B[tidx] = acc + left

    countdown(from_dlpack(A).mark_layout_dynamic(), from_dlpack(B), DynInt(2)).launch(grid=1, block=4)
    np.testing.assert_array_equal(B, A[:, 0])
    countdown(from_dlpack(A).mark_layout_dynamic(), from_dlpack(B), DynInt(5)).launch(grid=1, block=4)
    np.testing.assert_array_equal(B, A[:, 0] * 8)
    assert cuda.render(last_launch().ir).count("while (true) {") == 1  # 3 trips: one loop


def test_static_extent_while_is_still_unrolled():
    src = _tile_sum(16, dynamic=False)  # a static shape: a Python bool condition, run at trace time
    assert "while (true)" not in src and src.split("__global__", 1)[1].count("__ldg(A") == 5


@cute.kernel
def first_over(A: cute.Tensor, B: cute.Tensor, n):  # n: a DynInt (an unannotated parameter keeps it one)
    tidx, _, _ = cute.arch.thread_idx()
    i = 0
    while i < n:  # leaves by break: stays a loop run at trace time (a runtime while has no break here)
        if cutlass.const_expr(i == 2):
            break
        i += 1
    B[tidx] = A[tidx] + i


def test_dynamic_while_with_break_stays_static():
    A = np.arange(4, dtype=np.float32)
    B = np.zeros(4, np.float32)
    first_over(from_dlpack(A), from_dlpack(B), DynInt(5)).launch(grid=1, block=4)
    np.testing.assert_array_equal(B, A + 2)
    assert "while (true)" not in cuda.render(last_launch().ir)


@pytest.mark.parametrize("n", [3, 40])
def test_dynamic_while_counter_from_a_dynamic_argument(n):
    @cute.kernel
    def halve(A: cute.Tensor, m):
        tidx, _, _ = cute.arch.thread_idx()
        steps = 0
        while m > 1:
            m = m // 2
            steps += 1
        A[tidx] = A[tidx] + steps

    A = np.zeros(2, np.int32)
    halve(from_dlpack(A), DynInt(n)).launch(grid=1, block=2)
    assert A.tolist() == [int(np.floor(np.log2(n)))] * 2
    assert cuda.render(last_launch().ir).count("while (true) {") == 1


@cute.kernel
def flag_loop(A: cute.Tensor, B: cute.Tensor, n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    i = cutlass.Int32(0)
    more = cutlass.Boolean(1)  # a cutlass scalar: a register value in CuTe DSL, so the while is an scf.while
    acc = A[tidx] * 0
    while more:
        acc = acc + A[tidx]
        i += 1
        more = i < n
    B[tidx] = acc


def test_while_on_a_cutlass_boolean_flag_is_a_runtime_loop():
    # CUTLASS's grouped mixed-input GEMM: `not_last_tile = cutlass.Boolean(1); while not_last_tile: ...`; the flag
    # became a runtime value after the first trip, which was refused
    A = np.arange(4, dtype=np.float32) + 1
    for n in (1, 5):
        B = np.zeros(4, np.float32)
        flag_loop(from_dlpack(A), from_dlpack(B), n).launch(grid=1, block=4)
        np.testing.assert_array_equal(B, A * n)
    assert cuda.render(last_launch().ir).split("__global__", 1)[1].count("while (true) {") == 1
