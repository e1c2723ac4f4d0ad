"""Control flow that CUTLASS's Blackwell FMHA forward relies on, each in a small kernel of its own on the CPU
interpreter: a loop inside a function defined in the kernel (passed on through functools.partial) is a runtime
loop; a tuple of Python floats the loop replaces ((row_sum, row_max) = (0.0, -inf)) is carried as Float32 values;
a trip count computed in the kernel (an Int32 register) bounds cutlass.range; a work tile with a nested coordinate
(m, 0, (b, h)) that another warp's branch replaces keeps its value for the warps that did not run that branch;
cute.testing.convert(src, dst) writes src's values into dst as dst's type. And, for the FMHA backward, a
PipelineCpAsync stage committed by its producer with no cp_async_commit_group before (its arrive covers every
cp.async the thread issued)."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.compat.dsl_utils import WorkTileInfo
from cutelab.runtime import from_dlpack


@cute.kernel
def stats_kernel(X: cute.Tensor, Y: cute.Tensor, n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    count = n + tidx % 2  # an Int32 computed in the kernel: odd threads take one more element

    def loop(stats, start, steps, scale):
        for i in cutlass.range(start, start + steps, 1, unroll=1):
            row_sum, row_max = stats
            x = X[(tidx, i)] * scale
            stats = (row_sum + x, cute.arch.fmax(row_max, x))
        return stats

    step = partial(loop, scale=2.0)
    stats = (0.0, -math.inf)
    stats = step(stats, 0, count)
    Y[(tidx, 0)] = stats[0]
    Y[(tidx, 1)] = stats[1]


def test_loop_in_a_nested_function_carries_a_tuple_of_floats():
    rng = np.random.default_rng(3)
    X = rng.integers(-8, 9, (32, 8)).astype(np.float32)
    Y = np.zeros((32, 2), np.float32)
    stats_kernel(from_dlpack(X), from_dlpack(Y), cutlass.Int32(5)).launch(grid=1, block=32)
    for t in range(32):
        k = 5 + t % 2
        assert Y[t, 0] == 2 * X[t, :k].sum() and Y[t, 1] == 2 * X[t, :k].max(), t


@cute.kernel
def tile_kernel(out: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    work = WorkTileInfo((bidx, 0, (bidx + 1, 7)), True)
    if warp == 0:  # this warp walks its tiles to the end: the work tile becomes invalid
        while work.is_valid_tile:
            work = WorkTileInfo((bidx + 2, 0, (bidx + 3, 9)), False)
    if tidx % 32 == 0:
        out[(bidx, warp, 0)] = work.tile_idx[0]
        out[(bidx, warp, 1)] = work.tile_idx[2][0]
        out[(bidx, warp, 2)] = work.tile_idx[2][1]
        out[(bidx, warp, 3)] = cutlass.Int32(work.is_valid_tile)


def test_a_work_tile_with_a_nested_coordinate_replaced_in_one_warp_branch():
    out = np.full((2, 2, 4), -1, np.int32)
    tile_kernel(from_dlpack(out)).launch(grid=2, block=64)
    for b in range(2):
        assert list(out[b, 0]) == [b + 2, b + 3, 9, 0]  # warp 0 ran the loop
        assert list(out[b, 1]) == [b, b + 1, 7, 1]  # warp 1 kept the work tile from before the branch


def test_testing_convert_writes_src_into_dst_as_dst_type():
    from cutelab.compat.dsl_testing import convert

    src = from_dlpack(np.array([[0.1, 1.5], [-2.25, 3.0]], np.float32))
    dst_h = np.zeros((2, 2), np.float16)
    convert(src, from_dlpack(dst_h))
    assert dst_h.tolist() == np.array([[0.1, 1.5], [-2.25, 3.0]], np.float32).astype(np.float16).tolist()
    with pytest.raises(ValueError, match="src has shape"):
        convert(src, from_dlpack(np.zeros((4,), np.float16)))


def test_testing_convert_of_gpu_tensors_runs_a_kernel():
    """Where a tensor lives on a GPU, convert launches a kernel (as CuTe DSL's); here the same kernel runs
    on the interpreter over host tensors of different layouts (a permuted source)."""
    from cutelab.compat.dsl_testing import _convert_on_gpu

    A = np.arange(2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5).transpose(1, 0, 2) / 8
    B = np.zeros((3, 2, 5), np.float16)
    _convert_on_gpu(from_dlpack(A), from_dlpack(B), A.size)
    np.testing.assert_array_equal(B, A.astype(np.float16))


@cute.kernel
def cp_async_stage(X: cute.Tensor, Y: cute.Tensor):
    import cutelab.pipeline as pipeline

    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(2), 8)
    s = smem.allocate_tensor(cutlass.Float32, cute.make_layout(32), 16)
    pipe = pipeline.PipelineCpAsync.create(
        barrier_storage=bars.iterator, num_stages=1,
        producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32))
    atom = cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(), cutlass.Float32, num_bits_per_copy=32)
    if warp == 0:  # the producer: cp.async copies, then the stage's commit with no cp_async_commit_group before it
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, 1)
        pipe.producer_acquire(state)
        cute.copy(atom, cute.make_tensor(X.iterator + tidx, cute.make_layout(1)),
                  cute.make_tensor(s.iterator + tidx, cute.make_layout(1)))
        pipe.producer_commit(state)
    if warp == 1:
        state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, 1)
        pipe.consumer_wait(state)
        Y[tidx % 32] = s[tidx % 32] * 2.0
        pipe.consumer_release(state)


def test_cp_async_pipeline_commit_covers_copies_not_committed_to_a_group():
    X = np.arange(32, dtype=np.float32)
    Y = np.zeros(32, np.float32)
    cp_async_stage(from_dlpack(X), from_dlpack(Y)).launch(grid=1, block=64)
    np.testing.assert_array_equal(Y, 2 * X)
