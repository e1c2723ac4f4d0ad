"""CUTELAB_RACECHECK=1: the CPU interpreter reports shared-memory races between warps that do not
synchronise (kernel/cpu/racecheck.py), read-after-write and write-after-read, with the lines of
both accesses; the same kernels with a barrier between the accesses run clean."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab import pipeline
from cutelab.errors import LaunchError
from cutelab.runtime import from_dlpack


def _line(text):
    """The file:line of the one line of this file that ends with the comment text."""
    with open(__file__) as f:
        hits = [i + 1 for i, ln in enumerate(f) if ln.rstrip().endswith(text)]
    assert len(hits) == 1, (text, hits)
    return f"test_racecheck.py:{hits[0]}"


@cute.kernel
def read_after_write(out: cute.Tensor, sync: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    s = cutlass.utils.SmemAllocator().allocate_tensor(cutlass.Float32, cute.make_layout(64), 16)
    s[tidx] = 1.0 * tidx  # RAW: the write
    if sync:
        cute.arch.sync_threads()
    out[tidx] = s[(tidx + 32) % 64]  # RAW: the read, of the other warp's element


@cute.kernel
def write_after_read(out: cute.Tensor, sync: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    s = cutlass.utils.SmemAllocator().allocate_tensor(cutlass.Float32, cute.make_layout(64), 16)
    s[tidx] = 1.0 * tidx
    cute.arch.sync_threads()
    v = s[(tidx + 32) % 64]  # WAR: the read, of the other warp's element
    if sync:
        cute.arch.sync_threads()
    s[tidx] = 5.0  # WAR: the write, over what the other warp read
    cute.arch.sync_threads()
    out[tidx] = v + s[(tidx + 32) % 64]


@cute.kernel
def specialised(out: cute.Tensor, wait: cutlass.Constexpr):
    """Warp 0 writes, warp 1 reads: with a named barrier between them or none."""
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.warp_idx()
    s = cutlass.utils.SmemAllocator().allocate_tensor(cutlass.Float32, cute.make_layout(32), 16)
    bar = pipeline.NamedBarrier(barrier_id=1, num_threads=64)
    if warp == 0:
        s[tidx] = 2.0 * tidx  # the producer's write
        bar.arrive()
    if warp == 1:
        if wait:
            bar.arrive_and_wait()
        else:
            bar.arrive()
        out[tidx - 32] = s[tidx - 32] + 1.0  # the consumer's read


def _launch(kernel, flag, monkeypatch, check):
    out = np.zeros(64, np.float32)
    if check:
        monkeypatch.setenv("CUTELAB_RACECHECK", "1")
    else:
        monkeypatch.delenv("CUTELAB_RACECHECK", raising=False)
    kernel(from_dlpack(out), flag).launch(grid=1, block=64)
    return out


def test_a_read_after_write_race_names_both_lines(monkeypatch):
    with pytest.raises(LaunchError) as e:
        _launch(read_after_write, False, monkeypatch, True)
    msg = str(e.value)
    assert re.search(r"read_after_write: racecheck: read-after-write hazard on shared memory smem\d*\[\d+\] of "
                     r"block \(0,0,0\): warp 0 reads it at .*, and warp 1 wrote it at ", msg), msg
    assert msg.index(_line("# RAW: the read, of the other warp's element")) < msg.index(_line("# RAW: the write"))
    out = _launch(read_after_write, True, monkeypatch, True)  # with sync_threads: clean, and right
    np.testing.assert_array_equal(out, (np.arange(64) + 32) % 64)


def test_a_write_after_read_race_names_both_lines(monkeypatch):
    with pytest.raises(LaunchError) as e:
        _launch(write_after_read, False, monkeypatch, True)
    msg = str(e.value)
    assert re.search(r"write-after-read hazard on shared memory smem\d*\[\d+\] of block \(0,0,0\): warp 0 writes it "
                     r"at .*, and warp 1 read it at ", msg), msg
    assert (msg.index(_line("# WAR: the write, over what the other warp read"))
            < msg.index(_line("# WAR: the read, of the other warp's element")))
    out = _launch(write_after_read, True, monkeypatch, True)
    np.testing.assert_array_equal(out, (np.arange(64) + 32) % 64 + 5.0)
    np.testing.assert_array_equal(_launch(write_after_read, False, monkeypatch, False), out)  # unchecked: no error


def test_warps_that_do_not_wait_at_the_barrier_race(monkeypatch):
    with pytest.raises(LaunchError) as e:
        _launch(specialised, False, monkeypatch, True)
    msg = str(e.value)
    assert "read-after-write hazard" in msg and "warp 1 reads it at" in msg and "warp 0 wrote it at" in msg, msg
    assert _line("# the consumer's read") in msg and _line("# the producer's write") in msg
    out = _launch(specialised, True, monkeypatch, True)
    np.testing.assert_array_equal(out[:32], 2.0 * np.arange(32) + 1.0)


@cute.kernel
def staged(SharedStorage: cutlass.Constexpr, res: cute.Tensor, n: cutlass.Int32, stages: cutlass.Constexpr,
           wait: cutlass.Constexpr):
    """A producer warp and a consumer warp through a PipelineAsync (the consumer waits for each
    stage, or reads it without waiting)."""
    warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    storage = cutlass.utils.SmemAllocator().allocate(SharedStorage, 64)
    pipe = cutlass.pipeline.PipelineAsync.create(
        num_stages=stages, producer_group=cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread, 32),
        consumer_group=cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread, 32),
        barrier_storage=storage.mbar.data_ptr())
    buf = storage.buf.get_tensor(cute.make_layout(stages))
    producer, consumer = pipe.make_participants()
    if warp_idx == 0:
        for i in cutlass.range(n):
            h = producer.acquire_and_advance()
            buf[h.index] = 1.0 * i + 0.5  # the pipeline's write
            h.commit()
        producer.tail()
    else:
        for i in cutlass.range(n):
            if wait:
                h = consumer.wait_and_advance()
                res[i] = buf[h.index] * 2.0
                h.release()
            else:
                res[i] = buf[i % stages] * 2.0  # the read that does not wait


@cute.jit
def run_staged(res: cute.Tensor, n: cutlass.Int32, stages: cutlass.Constexpr, wait: cutlass.Constexpr):
    @cute.struct
    class SharedStorage:
        mbar: cute.struct.MemRange[cutlass.Int64, stages * 2]
        buf: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, stages], 128]

    staged(SharedStorage, res, n, stages, wait).launch(grid=(1, 1, 1), block=(64, 1, 1))


@pytest.mark.parametrize("n,stages", [(9, 3), (5, 1)])
def test_a_pipeline_whose_consumer_waits_runs_clean(n, stages, monkeypatch):
    monkeypatch.setenv("CUTELAB_RACECHECK", "1")
    res = np.full(16, -1.0, np.float32)
    run_staged(from_dlpack(res), n, stages, True)
    assert res[:n].tolist() == [2.0 * i + 1.0 for i in range(n)]


def test_a_consumer_that_reads_without_waiting_races_with_the_producer(monkeypatch):
    monkeypatch.setenv("CUTELAB_RACECHECK", "1")
    res = np.full(16, -1.0, np.float32)
    with pytest.raises(LaunchError) as e:
        run_staged(from_dlpack(res), 4, 2, False)
    msg = str(e.value)
    assert "read-after-write hazard" in msg and "warp 1 reads it at" in msg and "warp 0 wrote it at" in msg, msg
    assert _line("# the read that does not wait") in msg and _line("# the pipeline's write") in msg
