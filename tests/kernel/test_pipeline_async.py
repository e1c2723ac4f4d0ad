"""cutlass.pipeline.PipelineAsync with participants (make_participants, acquire_and_advance / commit,
wait_and_advance / release, tail): a producer warp and a consumer warp passing values through a staged
smem buffer, their pipeline states moving inside runtime loops. On the CPU the two warps run as the
branches of one if/else (the interpreter runs those concurrently, meeting at the mbarriers); the CUDA
compiles with nvcc. Two sequential ifs on the warp index (the async_pipeline notebook's form) run too:
each warp goes on past the branch it does not take (kernel/cpu/warps.py), as on the GPU."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
from cutelab.runtime import from_dlpack


@cute.kernel
def staged(SharedStorage: cutlass.Constexpr, res: cute.Tensor, n: cutlass.Int32, stages: cutlass.Constexpr):
    warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    smem = cutlass.utils.SmemAllocator()
    storage = smem.allocate(SharedStorage, 64)
    pipe = cutlass.pipeline.PipelineAsync.create(
        num_stages=stages,
        producer_group=cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread, 32),
        consumer_group=cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread, 32),
        barrier_storage=storage.mbar.data_ptr())
    buf = storage.buf.get_tensor(cute.make_layout(stages))
    producer, consumer = pipe.make_participants()
    if warp_idx == 0:
        for i in cutlass.range(n):
            h = producer.acquire_and_advance()
            buf[h.index] = 1.0 * i + 0.5
            h.commit()
        producer.tail()
    else:
        for i in cutlass.range(n):
            h = consumer.wait_and_advance()
            res[i] = buf[h.index] * 2.0
            h.release()


@cute.jit
def run_staged(res: cute.Tensor, n: cutlass.Int32, stages: cutlass.Constexpr):
    @cute.struct
    class SharedStorage:
        mbar: cute.struct.MemRange[cutlass.Int64, stages * 2]
        buf: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, stages], 128]

    staged(SharedStorage, res, n, stages).launch(grid=(1, 1, 1), block=(64, 1, 1))


@pytest.mark.parametrize("n,stages", [(8, 3), (11, 1), (5, 5), (0, 2)])
def test_producer_and_consumer_warps_pass_every_value_in_order(n, stages):
    res = np.full(16, -1.0, np.float32)
    run_staged(from_dlpack(res), n, stages)
    assert res[:n].tolist() == [2.0 * i + 1.0 for i in range(n)]
    assert (res[n:] == -1.0).all()


def test_the_pipeline_cuda_compiles(tmp_path):
    res = np.zeros(16, np.float32)
    run_staged(from_dlpack(res), 8, 3)
    src = cuda.render(last_launch().ir)
    assert "mbarrier" in src
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    f = tmp_path / "k.cu"
    f.write_text(src)
    r = subprocess.run([nvcc, "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(f)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]


@cute.kernel
def two_ifs(SharedStorage: cutlass.Constexpr, res: cute.Tensor):
    warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    storage = cutlass.utils.SmemAllocator().allocate(SharedStorage, 64)
    pipe = cutlass.pipeline.PipelineAsync.create(
        num_stages=2, producer_group=cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread, 32),
        consumer_group=cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread, 32),
        barrier_storage=storage.mbar.data_ptr())
    buf = storage.buf.get_tensor(cute.make_layout(2))
    producer, consumer = pipe.make_participants()
    if warp_idx == 0:
        for i in cutlass.range(cute.size(res)):
            h = producer.acquire_and_advance()
            buf[h.index] = 1.0 * i
            h.commit()
        producer.tail()
    if warp_idx == 1:
        for i in cutlass.range(cute.size(res)):
            h = consumer.wait_and_advance()
            res[i] = buf[h.index]
            h.release()


@cute.jit
def run_two_ifs(res: cute.Tensor):
    @cute.struct
    class SharedStorage:
        mbar: cute.struct.MemRange[cutlass.Int64, 4]
        buf: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, 2], 128]

    two_ifs(SharedStorage, res).launch(grid=(1, 1, 1), block=(64, 1, 1))


def test_sequential_warp_ifs_run_on_the_cpu():
    res = np.full(6, -1.0, np.float32)
    cute.compile(run_two_ifs, from_dlpack(res))  # traces (as the notebook does)
    run_two_ifs(from_dlpack(res))
    np.testing.assert_array_equal(res, np.arange(6, dtype=np.float32))


@cute.kernel
def turns(SharedStorage: cutlass.Constexpr, log: cute.Tensor, n: cutlass.Int32):
    """Two warps take turns (cutlass.pipeline.PipelineOrder, as ping-pong consumer warpgroups do): in its turn a
    warp appends its index to log at the shared cursor, then passes the token on."""
    warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    lane = cute.arch.lane_idx()
    smem = cutlass.utils.SmemAllocator()
    storage = smem.allocate(SharedStorage, 64)
    order = cutlass.pipeline.PipelineOrder.create(
        depth=1, length=2, group_id=warp_idx,
        producer_group=cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread, 32),
        barrier_storage=storage.mbar.data_ptr())
    cursor = storage.cursor.get_tensor(cute.make_layout(1))
    if warp_idx == 0 and lane == 0:
        cursor[0] = 0
    cute.arch.sync_threads()
    for i in cutlass.range(n):
        order.wait()
        if lane == 0:
            c = cursor[0]
            log[c] = warp_idx
            cursor[0] = c + 1
        cute.arch.sync_warp()
        order.arrive()


@cute.jit
def run_turns(log: cute.Tensor, n: cutlass.Int32):
    @cute.struct
    class SharedStorage:
        mbar: cute.struct.MemRange[cutlass.Int64, 2]
        cursor: cute.struct.MemRange[cutlass.Int32, 1]

    turns(SharedStorage, log, n).launch(grid=(1, 1, 1), block=(64, 1, 1))


def test_pipeline_order_lets_groups_take_turns():
    log = np.full(8, -1, np.int32)
    run_turns(from_dlpack(log), 3)
    assert log.tolist() == [0, 1, 0, 1, 0, 1, -1, -1]
    src = cuda.render(last_launch().ir)
    assert "mbarrier.try_wait.parity" in src and "mbarrier.arrive" in src


def test_cooperative_group_sizes_may_be_whole_floats():
    """CuTe DSL takes CooperativeGroup(Agent.Thread, 4.0) (CUTLASS's FMHA divides thread counts by 32.0); a
    fraction is refused."""
    from cutelab.errors import TraceError
    from cutelab.pipeline_async import _threads
    from cutelab.pipeline_sm90 import Agent, CooperativeGroup, _arrivals

    assert _arrivals(CooperativeGroup(Agent.Thread, 4.0), "g") == 4 == _threads(CooperativeGroup(Agent.Thread, 4.0), "g")
    assert _arrivals(CooperativeGroup(Agent.Warp, 2.0), "g") == 64
    with pytest.raises(TraceError, match="static int"):
        _arrivals(CooperativeGroup(Agent.Thread, 4.5), "g")


class _IndexPhasePipeline(cutlass.pipeline.PipelineAsync):
    """A pipeline extended as flash_attn.cute extends CuTe DSL's (its pipeline.py): methods taking
    (index, phase) that make a PipelineState(stages=0, count=0, index=, phase=) and reach into the
    pipeline's sync objects (sync_object_full/_empty) and masks, the methods' loc=/ip= passed on."""

    def producer_acquire_w_index_phase(self, index, phase):
        self.sync_object_empty.wait(index, phase, loc=None, ip=None)

    def producer_commit_w_index(self, index):
        s = cutlass.pipeline.PipelineState(stages=0, count=cutlass.Int32(0), index=index, phase=cutlass.Int32(0))
        self.sync_object_full.arrive(s.index, self.producer_mask, loc=None, ip=None)

    def consumer_wait_w_index_phase(self, index, phase):
        cutlass.pipeline.PipelineAsync.consumer_wait(
            self, cutlass.pipeline.PipelineState(stages=0, count=0, index=index, phase=phase), loc=None, ip=None)

    def consumer_release_w_index(self, index):
        self.sync_object_empty.arrive(index, self.consumer_mask)


@cute.kernel
def staged_index_phase(SharedStorage: cutlass.Constexpr, res: cute.Tensor, n: cutlass.Int32,
                       stages: cutlass.Constexpr):
    warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    smem = cutlass.utils.SmemAllocator()
    storage = smem.allocate(SharedStorage, 64)
    pipe = _IndexPhasePipeline.create(
        num_stages=stages,
        producer_group=cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread, 32),
        consumer_group=cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread, 32),
        barrier_storage=storage.mbar.data_ptr())
    buf = storage.buf.get_tensor(cute.make_layout(stages))
    if warp_idx == 0:
        for i in cutlass.range(n):
            pipe.producer_acquire_w_index_phase(i % stages, (i // stages + 1) % 2)
            buf[i % stages] = 1.0 * i + 0.5
            pipe.producer_commit_w_index(i % stages)
    else:
        for i in cutlass.range(n):
            pipe.consumer_wait_w_index_phase(i % stages, (i // stages) % 2)
            res[i] = buf[i % stages] * 2.0
            pipe.consumer_release_w_index(i % stages)


@cute.jit
def run_staged_index_phase(res: cute.Tensor, n: cutlass.Int32, stages: cutlass.Constexpr):
    @cute.struct
    class SharedStorage:
        mbar: cute.struct.MemRange[cutlass.Int64, stages * 2]
        buf: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, stages], 128]

    staged_index_phase(SharedStorage, res, n, stages).launch(grid=(1, 1, 1), block=(64, 1, 1))


@pytest.mark.parametrize("n,stages", [(8, 3), (5, 1)])
def test_a_pipeline_subclass_reaching_into_its_sync_objects_passes_every_value(n, stages):
    res = np.full(16, -1.0, np.float32)
    run_staged_index_phase(from_dlpack(res), n, stages)
    assert res[:n].tolist() == [2.0 * i + 1.0 for i in range(n)]
    assert (res[n:] == -1.0).all()


def test_sync_objects_of_the_pipelines_and_explicit_states():
    ma = cutlass.pipeline.MbarrierArray
    assert cutlass.pipeline.PipelineOp.TmaLoad is not cutlass.pipeline.PipelineOp.AsyncThread
    s = cutlass.pipeline.PipelineState(stages=0, count=0, index=2, phase=1)
    assert (s.index, s.phase, s.count) == (2, 1, 0)
    with pytest.raises(cute.errors.TraceError, match="PipelineState.advance: this state was made at a given index.*stages=0"):
        s.advance()
    with pytest.raises(ValueError, match="give both index= and phase="):
        cutlass.pipeline.PipelineState(stages=2, index=1)
    with pytest.raises(ValueError, match="stage count must be greater than 0"):
        ma(None, 0, (cutlass.pipeline.PipelineOp.AsyncThread,
                     cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread, 32)), init=False)


@cute.kernel
def staged_clone_then_advance(SharedStorage: cutlass.Constexpr, res: cute.Tensor, n: cutlass.Int32,
                              stages: cutlass.Constexpr):
    warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    smem = cutlass.utils.SmemAllocator()
    storage = smem.allocate(SharedStorage, 64)
    pipe = cutlass.pipeline.PipelineAsync.create(
        num_stages=stages,
        producer_group=cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread, 32),
        consumer_group=cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread, 32),
        barrier_storage=storage.mbar.data_ptr())
    buf = storage.buf.get_tensor(cute.make_layout(stages))
    pstate = cutlass.pipeline.make_pipeline_state(cutlass.pipeline.PipelineUserType.Producer, stages)
    cstate = cutlass.pipeline.make_pipeline_state(cutlass.pipeline.PipelineUserType.Consumer, stages)
    if warp_idx == 0:
        for i in cutlass.range(n, unroll=1):
            # flash_attn.cute's SM90 load loop: the previous position is a clone, the state moves on first
            prev = pstate.clone()
            pstate.advance()
            pipe.producer_acquire(prev)
            buf[prev.index] = 1.0 * i + 0.5
            pipe.producer_commit(prev)
    else:
        for i in cutlass.range(n, unroll=1):
            pipe.consumer_wait(cstate)
            res[i] = buf[cstate.index] * 2.0
            pipe.consumer_release(cstate)
            cstate.advance()


@cute.jit
def run_staged_clone_then_advance(res: cute.Tensor, n: cutlass.Int32, stages: cutlass.Constexpr):
    @cute.struct
    class SharedStorage:
        mbar: cute.struct.MemRange[cutlass.Int64, stages * 2]
        buf: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, stages], 128]

    staged_clone_then_advance(SharedStorage, res, n, stages).launch(grid=(1, 1, 1), block=(64, 1, 1))


@pytest.mark.parametrize("n,stages", [(9, 2), (4, 1)])
def test_a_state_cloned_then_advanced_in_a_runtime_loop_gives_each_iteration_its_position(n, stages):
    res = np.full(16, -1.0, np.float32)
    run_staged_clone_then_advance(from_dlpack(res), n, stages)
    assert res[:n].tolist() == [2.0 * i + 1.0 for i in range(n)]
    assert (res[n:] == -1.0).all()


@cute.kernel
def staged_peek(SharedStorage: cutlass.Constexpr, res: cute.Tensor, n: cutlass.Int32, stages: cutlass.Constexpr):
    warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    smem = cutlass.utils.SmemAllocator()
    storage = smem.allocate(SharedStorage, 64)
    pipe = cutlass.pipeline.PipelineAsync.create(
        num_stages=stages,
        producer_group=cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread, 32),
        consumer_group=cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread, 32),
        barrier_storage=storage.mbar.data_ptr())
    buf = storage.buf.get_tensor(cute.make_layout(stages))
    write = cutlass.pipeline.make_pipeline_state(cutlass.pipeline.PipelineUserType.Producer, stages)
    read = cutlass.pipeline.make_pipeline_state(cutlass.pipeline.PipelineUserType.Consumer, stages)
    if warp_idx == 0:
        for i in cutlass.range(n):
            empty = pipe.producer_try_acquire(write)
            pipe.producer_acquire(write, empty)
            buf[write.index] = 1.0 * i + 0.5
            pipe.producer_commit(write)
            write.advance()
    else:
        for i in cutlass.range(n):
            full = pipe.consumer_try_wait(read)
            pipe.consumer_wait(read, full)
            res[i] = buf[read.index] * 2.0
            pipe.consumer_release(read)
            read.advance()


@cute.jit
def run_staged_peek(res: cute.Tensor, n: cutlass.Int32, stages: cutlass.Constexpr):
    @cute.struct
    class SharedStorage:
        mbar: cute.struct.MemRange[cutlass.Int64, stages * 2]
        buf: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, stages], 128]

    staged_peek(SharedStorage, res, n, stages).launch(grid=(1, 1, 1), block=(64, 1, 1))


def test_a_peeks_token_skips_the_wait_when_the_stage_is_ready():
    """consumer_wait(state, token) and producer_acquire(state, token) wait only where the peek (try_wait /
    try_acquire) found the stage not ready, as CuTe DSL's: in the CUDA each blocking wait sits in a branch on
    its token; on the CPU every value still arrives in order."""
    res = np.full(16, -1.0, np.float32)
    run_staged_peek(from_dlpack(res), 9, 2)
    assert res[:9].tolist() == [2.0 * i + 1.0 for i in range(9)] and (res[9:] == -1.0).all()
    src = cuda.render(last_launch().ir)
    body = src.split("__global__", 1)[1]
    waits = [i for i, line in enumerate(body.splitlines()) if "CL_WAIT:" in line]
    assert len(waits) == 2, body
    lines = body.splitlines()
    for w in waits:  # the line before each blocking wait opens a branch on the peek's answer
        assert lines[w - 1].strip().startswith("if ("), lines[w - 3:w + 1]
