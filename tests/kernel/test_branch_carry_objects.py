"""Objects of CuTe DSL's value protocol in runtime branches and loops (kernel/frontend/carry_obj.py), as
persistent GEMMs use them (quack's SM90 GEMM: its pipeline states and tile scheduler):

- a runtime branch whose arm calls a method of such an object (or sets its attributes) carries it: the
  arm works on the object rebuilt around the branch's registers, so what it computes from it is a runtime
  value (a pipeline state of 0 stages advanced by a division by its stage count, as quack's C-less
  epilogue state is: the division of a runtime value by 0 does not trap), and after the branch every
  name bound to the object sees the arm's changes (the object is changed in place, as in CuTe DSL);
- an object whose values include static ones (a shared-memory tensor, an enum) is carried by the others,
  the static ones kept; one that the region changes is refused by name;
- a work tile whose coordinate has a None mode (quack's (m, n, None, l)) crosses a runtime loop.
"""

from __future__ import annotations

import enum

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab import Int32, const_expr
from cutelab.errors import TraceError
from cutelab.runtime import from_dlpack


class State:
    """A pipeline state held as its values (index, phase) over ``stages`` stages (a static int)."""

    def __init__(self, stages, index, phase):
        self.stages, self._index, self._phase = stages, index, phase

    def advance_iters(self, n):  # quack's PipelineStateWAdvance.advance_iters
        new_index = self._index + Int32(n)
        self._phase ^= new_index // self.stages
        self._index = new_index % self.stages

    def __extract_mlir_values__(self):
        return [self._index, self._phase]

    def __new_from_mlir_values__(self, values):
        return State(self.stages, Int32(values[0]), Int32(values[1]))


@cute.kernel
def branch_kernel(out: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    s = State(4, Int32(0), Int32(0))
    none = State(0, Int32(0), Int32(0))  # no stages: advancing divides by 0 (the values are never used)
    alias = s
    if tidx >= 2:
        if const_expr(True):
            s.advance_iters(3)
        none.advance_iters(5)
    out[tidx, 0] = alias._index  # the same object: it holds the branch's result
    out[tidx, 1] = s._phase
    s.advance_iters(2)
    out[tidx, 2] = s._index
    out[tidx, 3] = s._phase


def test_a_branch_arm_advances_a_state_held_as_its_values():
    out = np.full((4, 4), -1, np.int32)
    branch_kernel(from_dlpack(out)).launch(grid=1, block=4)
    assert out.tolist() == [[0, 0, 2, 0], [0, 0, 2, 0], [3, 0, 1, 1], [3, 0, 1, 1]]


class Counter:
    """An object whose method sets its own attribute in a runtime branch (quack's tile scheduler:
    ``if is_scheduler_warp: self._current_work_idx = ...``)."""

    def __init__(self, cur):
        self.cur = cur

    @cute.jit
    def bump(self, cond):
        if cond:
            self.cur = self.cur + Int32(5)

    def __extract_mlir_values__(self):
        return [self.cur]

    def __new_from_mlir_values__(self, values):
        return Counter(Int32(values[0]))


@cute.kernel
def self_kernel(out: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    c = Counter(Int32(1))
    for _ in cute.range(2, unroll=1):
        c.bump(tidx >= 2)
    out[tidx] = c.cur


def test_a_method_setting_its_objects_attribute_in_a_branch_changes_the_callers_object():
    out = np.full(4, -1, np.int32)
    self_kernel(from_dlpack(out)).launch(grid=1, block=4)
    assert out.tolist() == [1, 1, 11, 11]


class Mode(enum.Enum):
    STATIC = 1
    DYNAMIC = 2


class Sched:
    """A scheduler whose values include static ones: its shared-memory buffer, an enum, a Python int."""

    def __init__(self, idx, buf, mode, step):
        self.idx, self.buf, self.mode, self.step = idx, buf, mode, step

    def __extract_mlir_values__(self):
        return [self.idx, self.buf, self.mode, self.step]

    def __new_from_mlir_values__(self, values):
        return Sched(values[0], values[1], values[2], values[3])


@cute.kernel
def static_leaves_kernel(out: cute.Tensor, n: Int32):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator().allocate_tensor(Int32, cute.make_layout(4), 16)
    s = Sched(Int32(tidx), smem, Mode.STATIC, 3)
    while s.idx < n:
        if const_expr(s.mode is Mode.STATIC):  # still the enum inside the loop (a compile-time constant)
            s = Sched(s.idx + s.step, s.buf, s.mode, s.step)
    out[tidx] = s.idx


def test_static_values_of_a_carried_object_stay_static():
    out = np.full(4, -1, np.int32)
    static_leaves_kernel(from_dlpack(out), Int32(10)).launch(grid=1, block=4)
    assert out.tolist() == [12, 10, 11, 12]


@cute.kernel
def changed_static_kernel(out: cute.Tensor, n: Int32):
    tidx, _, _ = cute.arch.thread_idx()
    s = Sched(Int32(tidx), None, Mode.STATIC, 3)
    while s.idx < n:
        s = Sched(s.idx + s.step, None, Mode.DYNAMIC, 3)
    out[tidx] = s.idx


def test_a_static_value_changed_in_a_loop_is_refused():
    out = np.zeros(4, np.int32)
    with pytest.raises(TraceError, match=r"variable 's': value \d of its Sched .* is <Mode.STATIC: 1> before the while loop .* and <Mode.DYNAMIC: 2>"):
        changed_static_kernel(from_dlpack(out), Int32(10)).launch(grid=1, block=4)


@cute.kernel
def none_mode_kernel(out: cute.Tensor, total: Int32):
    from cutelab.compat.dsl_utils import WorkTileInfo

    bidx, _, _ = cute.arch.block_idx()
    w = WorkTileInfo((Int32(bidx), Int32(0), None, Int32(bidx)), bidx < total)
    while w.is_valid_tile:
        out[w.tile_idx[0]] = w.tile_idx[3] + 1
        nxt = w.tile_idx[0] + 2
        w = WorkTileInfo((nxt, Int32(0), None, w.tile_idx[3]), nxt < total)


def test_a_work_tile_with_a_none_mode_crosses_a_runtime_loop():
    out = np.zeros(6, np.int32)
    none_mode_kernel(from_dlpack(out), Int32(6)).launch(grid=2, block=1)
    assert out.tolist() == [1, 2, 1, 2, 1, 2]


@cute.kernel
def masked_release_kernel(out: cute.Tensor):
    from cutelab.pipeline_async import PipelineAsync
    from cutelab.pipeline import Agent, CooperativeGroup

    tidx, _, _ = cute.arch.thread_idx()
    rank = cute.arch.block_idx_in_cluster()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(2), 8)
    # one stage; its consumers are thread 0 of each of the cluster's 2 CTAs, which release CTA 0's stage
    pipe = PipelineAsync.create(num_stages=1, producer_group=CooperativeGroup(Agent.Thread, 1),
                                consumer_group=CooperativeGroup(Agent.Thread, 2), barrier_storage=bars.iterator,
                                consumer_mask=0, defer_sync=True)
    cute.arch.mbarrier_init_fence()
    cute.arch.cluster_arrive_relaxed()
    cute.arch.cluster_wait()
    state = cutlass.pipeline.make_pipeline_state(cutlass.pipeline.PipelineUserType.Consumer, 1)
    if tidx == 0:
        pipe.consumer_release(state)
    if tidx == 0:
        if rank == 0:
            cute.arch.mbarrier_wait(bars.iterator + 1, 0)  # both releases arrived here
            out[0] = 1
    cute.arch.cluster_arrive()
    cute.arch.cluster_wait()


def test_a_consumer_mask_releases_that_ctas_stage():
    """PipelineAsync.create(consumer_mask=r): the consumers arrive on CTA r's empty barrier (CuTe DSL's
    destination rank of an async-thread pipeline; quack's tile scheduler releases CTA 0's stage from
    every CTA of the cluster). Arriving on their own CTA's barrier instead, CTA 0 would wait forever."""
    out = np.zeros(1, np.int32)
    masked_release_kernel(from_dlpack(out)).launch(grid=2, block=32, cluster=(2, 1, 1))
    assert out[0] == 1
