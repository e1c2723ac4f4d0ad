"""mbarrier operations at a runtime stage and phase (Int32 variables changed in a runtime loop,
as quack's double-buffered kernels keep them): the barrier's offset and the phase are read from
registers at run time."""

from __future__ import annotations

import numpy as np

import cutelab as cute
import cutelab as cutlass
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
from cutelab.runtime import from_dlpack


@cute.kernel
def _ping_pong(A: cute.Tensor, B: cute.Tensor, n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(2), 8)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 32)
        cute.arch.mbarrier_init(bars.iterator + 1, 32)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    stage = cutlass.Int32(0)
    phase = cutlass.Int32(0)
    acc = cutlass.Float32(0.0)
    for i in cutlass.range(n):
        cute.arch.mbarrier_arrive(bars.iterator + stage)
        cute.arch.mbarrier_wait(bars.iterator + stage, phase)  # every thread arrived on this stage's barrier
        acc = acc + A[tidx] * (stage + 1).to(cutlass.Float32)
        stage ^= 1
        if stage == 0:
            phase ^= 1
    B[tidx] = acc


def test_barrier_offset_and_phase_from_runtime_variables():
    A = np.arange(32, dtype=np.float32)
    for n in (1, 4, 5):
        B = np.zeros_like(A)
        _ping_pong(from_dlpack(A), from_dlpack(B), n).launch(grid=1, block=32)
        weights = sum(1 + (i % 2) for i in range(n))  # stage 0, 1, 0, 1, ...
        np.testing.assert_array_equal(B, A * weights)
    src = cuda.render(last_launch().ir)
    assert "mbarrier.try_wait.parity.shared::cta.b64" in src


@cute.kernel
def _ping_pong_array(A: cute.Tensor, B: cute.Tensor, n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_array(cutlass.Int64, num_elems=2)  # a pointer, as quack's reduction barriers
    if tidx < 2:
        cute.arch.mbarrier_init(bars + tidx, 32)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    stage = cutlass.Int32(0)
    phase = cutlass.Int32(0)
    acc = cutlass.Float32(0.0)
    for i in cutlass.range(n):
        cute.arch.mbarrier_arrive(bars + stage)
        cute.arch.mbarrier_wait(bars + stage, phase)  # the array pointer at a runtime stage
        acc = acc + A[tidx] * (stage + 1).to(cutlass.Float32)
        stage ^= 1
        if stage == 0:
            phase ^= 1
    B[tidx] = acc


def test_array_pointer_at_a_runtime_stage():
    A = np.arange(32, dtype=np.float32)
    for n in (1, 4, 5):
        B = np.zeros_like(A)
        _ping_pong_array(from_dlpack(A), from_dlpack(B), n).launch(grid=1, block=32)
        np.testing.assert_array_equal(B, A * sum(1 + (i % 2) for i in range(n)))
    src = cuda.render(last_launch().ir)
    assert "mbarrier.try_wait.parity.shared::cta.b64" in src
