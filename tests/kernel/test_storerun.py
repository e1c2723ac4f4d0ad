"""Runs of stores that differ by a constant (kernel/cpu/storerun.py): one scatter, with the same
memory as the stores one by one (``warps.BATCH_RUNS`` off), also where the stores of a run write
the same elements (the later store's value stays), through a swizzle, and out of bounds (the
store at fault is reported)."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import LaunchError
from cutelab.kernel.cpu import interpreter, warps
from cutelab.runtime import from_dlpack


@cute.kernel
def spread(mA: cute.Tensor, out: cute.Tensor, step: cutlass.Constexpr, swz: cutlass.Constexpr, extra: cutlass.Int32):
    """Each thread stores its 8 values at 2 * tidx + step * j (+ extra) of shared memory, then the
    block copies shared memory out."""
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    L = cute.make_layout(512)
    sl = cute.make_composed_layout(cute.make_swizzle(2, 1, 3), 0, L) if swz else L
    s = smem.allocate_tensor(cutlass.Float32, sl, 16)
    for i in cutlass.range_constexpr(4):
        s[tidx + 128 * i] = -1.0
    cute.arch.sync_threads()
    r = cute.make_rmem_tensor(cute.make_layout(8), cutlass.Float32)
    for j in cutlass.range_constexpr(8):
        r[j] = mA[tidx, j]
    for j in cutlass.range_constexpr(8):  # consecutive stores whose indices differ by step * j
        s[2 * tidx + step * j + extra] = r[j]
    cute.arch.sync_threads()
    for i in cutlass.range_constexpr(4):
        out[tidx + 128 * i] = s[tidx + 128 * i]


def _run(step, swz, batching, monkeypatch, extra=0):
    monkeypatch.setattr(warps, "BATCH_RUNS", batching)
    calls = []
    real = interpreter.run_stores
    monkeypatch.setattr(interpreter, "run_stores", lambda b, run, buf: calls.append(len(run)) or real(b, run, buf))
    A = np.random.default_rng(3).standard_normal((128, 8)).astype(np.float32)
    out = np.zeros(512, np.float32)
    spread(from_dlpack(A), from_dlpack(out), step, swz, extra).launch(grid=1, block=128)
    return A, out, calls


def _expected(A, step):
    """The block's shared memory as the kernel reads it back (through its layout: a swizzle moves
    where each element lives, not what index i reads)."""
    s = np.full(512, -1.0, np.float32)
    for j in range(8):  # the stores in program order, each of every thread
        for t in range(128):
            s[2 * t + step * j] = A[t, j]
    return s


@pytest.mark.parametrize("step,swz", [(1, False), (3, False), (32, False), (1, True), (5, True)])
def test_a_run_of_stores_is_one_step_with_the_same_memory(step, swz, monkeypatch):
    A, one_by_one, calls = _run(step, swz, False, monkeypatch)
    assert not calls  # no runs without batching
    _, fused, calls = _run(step, swz, True, monkeypatch)
    assert 8 in calls  # the 8 stores of r went as one run
    assert np.array_equal(fused.view(np.int32), one_by_one.view(np.int32))
    # step 1 and 3: the stores of a run write the same elements (store j of thread t+1 where store
    # j+2 of thread t writes): the later store's value stays
    np.testing.assert_array_equal(fused, _expected(A, step))


def test_a_run_out_of_bounds_reports_the_store_at_fault(monkeypatch):
    with pytest.raises(LaunchError) as fused:
        _run(32, False, True, monkeypatch, extra=40)  # store j = 7 of the last threads: past 512
    with pytest.raises(LaunchError) as one_by_one:
        _run(32, False, False, monkeypatch, extra=40)
    assert str(fused.value) == str(one_by_one.value)
    assert "test_storerun.py" in str(fused.value) and "512" in str(fused.value)
