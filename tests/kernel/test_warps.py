"""The CPU interpreter's warps run on their own (kernel/cpu/warps.py): warp-specialised producers
and consumers with runtime trip counts, in one if/else or in sequential ifs, named barriers
between warps, deadlocks reported with every warp's position, and shared-memory races found
with CUTELAB_RACECHECK=1."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab import pipeline
from cutelab.errors import LaunchError
from cutelab.runtime import from_dlpack


@cute.kernel
def two_ifs(SharedStorage: cutlass.Constexpr, res: cute.Tensor, n: cutlass.Int32, stages: cutlass.Constexpr):
    """The async_pipeline notebook's form: one `if` per role, the warps meet only at mbarriers."""
    warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    bidx, _, _ = cute.arch.block_idx()
    storage = cutlass.utils.SmemAllocator().allocate(SharedStorage, 64)
    pipe = cutlass.pipeline.PipelineAsync.create(
        num_stages=stages, producer_group=cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread, 32),
        consumer_group=cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread, 64),
        barrier_storage=storage.mbar.data_ptr())
    buf = storage.buf.get_tensor(cute.make_layout(stages))
    producer, consumer = pipe.make_participants()
    if warp_idx == 0:
        for i in cutlass.range(n):
            h = producer.acquire_and_advance()
            buf[h.index] = 1.0 * i + 100.0 * bidx
            h.commit()
        producer.tail()
    if warp_idx >= 1:
        for i in cutlass.range(n):
            h = consumer.wait_and_advance()
            if warp_idx == 1:
                res[bidx, i] = buf[h.index]
            h.release()


@cute.jit
def run_two_ifs(res: cute.Tensor, n: cutlass.Int32, stages: cutlass.Constexpr):
    @cute.struct
    class SharedStorage:
        mbar: cute.struct.MemRange[cutlass.Int64, stages * 2]
        buf: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, stages], 128]

    two_ifs(SharedStorage, res, n, stages).launch(grid=(3, 1, 1), block=(96, 1, 1))


@pytest.mark.parametrize("n,stages", [(9, 2), (4, 4), (1, 1), (0, 3)])
def test_a_producer_warp_feeds_consumer_warps_through_sequential_ifs(n, stages):
    res = np.full((3, 12), -1.0, np.float32)
    run_two_ifs(from_dlpack(res), n, stages)
    want = np.full((3, 12), -1.0, np.float32)
    want[:, :n] = np.arange(n) + 100.0 * np.arange(3)[:, None]
    np.testing.assert_array_equal(res, want)


@cute.kernel
def handoff(out: cute.Tensor, twice: cutlass.Constexpr):
    """Warp 0 writes shared memory and arrives at a named barrier; warp 1 waits there and reads."""
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.warp_idx()
    smem = cutlass.utils.SmemAllocator()
    s = smem.allocate_tensor(cutlass.Float32, cute.make_layout(32), 16)
    bar = pipeline.NamedBarrier(barrier_id=1, num_threads=64)
    if warp == 0:
        s[tidx] = 2.0 * tidx
        bar.arrive()
    if warp == 1:
        bar.arrive_and_wait()
        out[tidx - 32] = s[tidx - 32] + 1.0
        if twice:
            bar.arrive_and_wait()  # nobody else arrives a second time


def test_a_named_barrier_hands_shared_memory_from_one_warp_to_another():
    out = np.zeros(32, np.float32)
    handoff(from_dlpack(out), False).launch(grid=2, block=64)
    np.testing.assert_array_equal(out, 2.0 * np.arange(32) + 1.0)


@cute.kernel
def handoff_arch(out: cute.Tensor):
    """handoff with cute.arch.barrier_arrive / cute.arch.barrier (flash_attn.cute's SM90 warp scheduler)."""
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.warp_idx()
    smem = cutlass.utils.SmemAllocator()
    s = smem.allocate_tensor(cutlass.Float32, cute.make_layout(32), 16)
    if warp == 0:
        s[tidx] = 2.0 * tidx
        cute.arch.barrier_arrive(barrier_id=2, number_of_threads=64)
    if warp == 1:
        cute.arch.barrier(barrier_id=2, number_of_threads=64)
        out[tidx - 32] = s[tidx - 32] + 1.0


def test_cute_arch_barrier_arrive_hands_shared_memory_from_one_warp_to_another():
    out = np.zeros(32, np.float32)
    handoff_arch(from_dlpack(out)).launch(grid=2, block=64)
    np.testing.assert_array_equal(out, 2.0 * np.arange(32) + 1.0)
    with pytest.raises(ValueError, match="number_of_threads is required"):
        cute.arch.barrier_arrive(barrier_id=1)


def test_a_named_barrier_nobody_completes_is_a_deadlock_report():
    out = np.zeros(32, np.float32)
    with pytest.raises(LaunchError) as e:
        handoff(from_dlpack(out), True).launch(grid=1, block=64)
    msg = str(e.value)
    assert "deadlock" in msg and "NamedBarrier(1, 64)" in msg and "is reached by 32 threads of a block, not 64" in msg
    assert "warp 1 of block (0,0,0)" in msg and "test_warps.py" in msg
    np.testing.assert_array_equal(out, 0)  # nothing was written


@cute.kernel
def crossed(F: cute.Tensor):
    """Warp 0 waits for barrier A before arriving at B; warp 1 waits for B before arriving at A."""
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.warp_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(2), 8)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 32)
        cute.arch.mbarrier_init(bars.iterator + 1, 32)
    cute.arch.sync_threads()
    if warp == 0:
        cute.arch.mbarrier_wait(bars.iterator, 0)
        cute.arch.mbarrier_arrive(bars.iterator + 1)
    else:
        cute.arch.mbarrier_wait(bars.iterator + 1, 0)
        cute.arch.mbarrier_arrive(bars.iterator)
    F[tidx] = 1


def test_a_deadlock_names_every_warp_its_line_and_what_it_waits_for():
    F = np.zeros(64, np.int32)
    with pytest.raises(LaunchError) as e:
        crossed(from_dlpack(F)).launch(grid=1, block=64)
    msg = str(e.value)
    assert "deadlock" in msg
    lines = [ln for ln in msg.splitlines() if ln.startswith("  warp")]
    assert len(lines) == 2, msg
    assert lines[0].startswith("  warp 0 of block (0,0,0)") and "smem" in lines[0] and "[0]" in lines[0]
    assert lines[1].startswith("  warp 1 of block (0,0,0)") and "[1]" in lines[1]
    assert all("test_warps.py:" in ln and "0 of 32 arrivals" not in ln and "32 of 32 arrivals" in ln for ln in lines)
    np.testing.assert_array_equal(F, 0)


@cute.kernel
def racy(out: cute.Tensor, sync: cutlass.Constexpr):
    """Warp 0 fills shared memory, warp 1 reads it: with or without a barrier between."""
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    s = smem.allocate_tensor(cutlass.Float32, cute.make_layout(64), 16)
    if tidx < 32:
        s[tidx] = 1.0 * tidx
        s[tidx + 32] = 2.0 * tidx
    if sync:
        cute.arch.sync_threads()
    out[tidx] = s[(tidx + 32) % 64]


def test_racecheck_finds_a_shared_memory_race_between_warps(monkeypatch):
    out = np.zeros(64, np.float32)
    racy(from_dlpack(out), False).launch(grid=1, block=64)  # the lock-step interpreter gets an answer
    monkeypatch.setenv("CUTELAB_RACECHECK", "1")
    with pytest.raises(LaunchError, match=r"racecheck: read-after-write hazard on shared memory smem\d*\[\d+\] of "
                                          r"block \(0,0,0\): warp 1 reads it at .*test_warps.py:\d+, and warp 0 wrote "
                                          r"it at .*test_warps.py:\d+, with no barrier or wait"):
        racy(from_dlpack(out), False).launch(grid=1, block=64)
    out[:] = 0
    racy(from_dlpack(out), True).launch(grid=1, block=64)  # with sync_threads: no race
    np.testing.assert_array_equal(out[:32], 2.0 * np.arange(32))
    np.testing.assert_array_equal(out[32:], np.arange(32))


def _notebook(name):
    """The namespace of one of tests/programs' async_pipeline notebook cells (imports changed only;
    the cell compiles its kernel when it runs)."""
    import contextlib
    import io
    import os

    path = os.path.join(os.path.dirname(__file__), "..", "programs", f"nb_async_pipeline_{name}.py")
    from cutelab import compat

    ns = {"__name__": f"nb_async_pipeline_{name}"}
    compat.install(emulate_cuda=False)  # their `import cutlass` is cutelab, as under cutelab run
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(open(path).read(), path, "exec"), ns)
    finally:
        compat.uninstall()
    return ns


def test_the_async_pipeline_notebooks_run_on_the_cpu():
    """CUTLASS's async_pipeline notebook cells, run as the notebook runs them (there on a GPU)."""
    ns = _notebook("one_stage")
    res = np.full(8, -1.0, np.float32)
    ns["async_pipeline"](from_dlpack(res))
    np.testing.assert_array_equal(res, np.arange(8, dtype=np.float32))

    ns = _notebook("staged")  # 8 values through a ring of 5 stages; thread 0 then copies the ring out
    res, staging = np.full(8, -1.0, np.float32), np.zeros(5, np.float32)
    ns["async_pipeline_staged"](from_dlpack(res), from_dlpack(staging))
    np.testing.assert_array_equal(res, np.arange(8, dtype=np.float32))
    np.testing.assert_array_equal(staging, [5.0, 6.0, 7.0, 3.0, 4.0])

    ns = _notebook("synced")
    res = np.full(8, -1.0, np.float32)
    ns["run_synced_producer_consumer"](from_dlpack(res))
    assert (res != -1.0).all()


@cute.kernel
def own_barriers(F: cute.Tensor):
    """No branch parts the warps, but each waits on a barrier of its own: warp 1 completes warp 0's
    barrier, and warp 0 completes warp 1's only after its own wait (as warps do on the GPU)."""
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.warp_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(2), 8)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 32)
        cute.arch.mbarrier_init(bars.iterator + 1, 32)
    cute.arch.sync_threads()
    if warp == 1:
        cute.arch.mbarrier_arrive(bars.iterator)
    cute.arch.mbarrier_wait(bars.iterator + warp, 0)
    if warp == 0:
        cute.arch.mbarrier_arrive(bars.iterator + 1)
    F[tidx] = warp + 1


def test_warps_of_one_group_that_wait_on_different_barriers_part_at_the_wait():
    F = np.zeros(64, np.int32)
    own_barriers(from_dlpack(F)).launch(grid=2, block=64)
    np.testing.assert_array_equal(F, np.repeat([1, 2], 32))


@cute.kernel
def _arrive_twice(A: cute.Tensor, arriver: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    if tidx // 32 == arriver:  # two arrivals before the other warp's wait: the barrier's phase completes without it
        pipeline.NamedBarrier(barrier_id=1, num_threads=64).arrive()
        pipeline.NamedBarrier(barrier_id=1, num_threads=64).arrive()
    else:
        pipeline.NamedBarrier(barrier_id=1, num_threads=64).arrive_and_wait()
        pipeline.NamedBarrier(barrier_id=1, num_threads=64).arrive_and_wait()
    A[tidx] = 1.0


@pytest.mark.parametrize("arriver", [0, 1])
def test_a_second_arrival_in_one_phase_of_a_named_barrier_is_reported(arriver):
    A = np.zeros(64, np.float32)
    with pytest.raises(LaunchError, match=r"NamedBarrier\(1, 64\) at .*test_warps.py:\d+: threads that have already "
                                          r"arrived at it arrive again before it completes"):
        _arrive_twice(from_dlpack(A), arriver).launch(grid=1, block=64)


@cute.kernel
def _arrive_then_sync(A: cute.Tensor, case: cutlass.Constexpr):
    """FlashAttention 3/4's epilogue: the MMA warps write shared memory and arrive (bar.arrive); one of them
    then waits with a count that holds it twice (bar.sync, 64 + 32) and reads what the others wrote. Warp 2
    (a producer's) takes no part."""
    tidx, _, _ = cute.arch.thread_idx()
    warp = tidx // 32
    smem = cutlass.utils.SmemAllocator()
    S = smem.allocate_tensor(cutlass.Float32, cute.make_layout(64), 16)
    if warp < 2:
        cute.arch.barrier(barrier_id=1, number_of_threads=64)  # a phase of barrier 1 with both MMA warps
        S[tidx] = tidx + 1.0
        if case == "ok":
            cute.arch.barrier_arrive(barrier_id=1, number_of_threads=96)
            if warp == 1:
                cute.arch.barrier(barrier_id=1, number_of_threads=96)
                A[tidx - 32] = S[tidx - 32]
                A[tidx] = S[tidx]
        elif warp == 1:  # warp 0 does not arrive: warp 1's two arrivals complete the phase without it
            cute.arch.barrier_arrive(barrier_id=1, number_of_threads=64)
            cute.arch.barrier(barrier_id=1, number_of_threads=64)
            A[tidx - 32] = S[tidx - 32]


def test_a_warp_may_arrive_then_wait_at_a_named_barrier_whose_count_holds_it_twice():
    A = np.zeros(64, np.float32)
    _arrive_then_sync(from_dlpack(A), "ok").launch(grid=1, block=96)
    np.testing.assert_array_equal(A, np.arange(1, 65))
    with pytest.raises(LaunchError, match=r"NamedBarrier\(1\) at .*test_warps.py:\d+: threads that have already arrived "
                                          r"at it \(by bar.arrive\) arrive again before it completes, and the phase "
                                          r"completes without 32 thread\(s\) that arrived in its previous phase"):
        _arrive_then_sync(from_dlpack(A), "short").launch(grid=1, block=96)


@cute.kernel
def _barrier_id_from_memory(ids: cute.Tensor, out: cute.Tensor, group: cutlass.Constexpr):
    """Each group of threads waits at the named barrier whose id it reads from memory (a register: the
    id has no range the tracer knows), then reads what the other warp of its pair wrote."""
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    S = smem.allocate_tensor(cutlass.Int32, cute.make_layout(128), 16)
    bid = ids[tidx // group]
    S[tidx] = tidx
    cute.arch.barrier(barrier_id=bid, number_of_threads=64)
    out[tidx] = S[tidx ^ 32]


def test_a_named_barrier_id_in_a_register_groups_threads_by_its_value():
    from cutelab.kernel.cuda import printer as cuda
    from cutelab.kernel.launch.plan import last_launch

    out = np.zeros(128, np.int32)
    _barrier_id_from_memory(from_dlpack(np.array([3, 2], np.int32)), from_dlpack(out), 64).launch(grid=1, block=128)
    np.testing.assert_array_equal(out, np.arange(128) ^ 32)
    src = cuda.render(last_launch().ir)
    assert 'asm volatile("bar.sync %0, 64;\\n" :: "r"(cl_bar' in src and "> 15u) __trap();" in src
    with pytest.raises(LaunchError, match=r"a named barrier at .*test_warps.py:\d+: thread 64 gives barrier id 16; "
                                          r"barrier ids are in \[0, 15\]"):
        _barrier_id_from_memory(from_dlpack(np.array([3, 16], np.int32)), from_dlpack(out), 64).launch(grid=1, block=128)
    with pytest.raises(LaunchError, match=r"the barrier id differs between the threads of warp 0 \(1 and 2\)"):
        _barrier_id_from_memory(from_dlpack(np.array([1, 2, 1, 2, 1, 2, 1, 2], np.int32)), from_dlpack(out),
                                16).launch(grid=1, block=128)


@pytest.mark.gpu
def test_a_named_barrier_id_in_a_register_on_the_gpu():
    import torch

    out = torch.zeros(128, device="cuda", dtype=torch.int32)
    ids = torch.tensor([3, 2], device="cuda", dtype=torch.int32)
    _barrier_id_from_memory(from_dlpack(ids), from_dlpack(out), 64).launch(grid=1, block=128)
    torch.cuda.synchronize()
    assert out.cpu().tolist() == [t ^ 32 for t in range(128)]
