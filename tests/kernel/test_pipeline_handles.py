"""A consumer's handle kept across the iterations of a runtime loop (``h = h_next`` at the end of each, as
flash_attn.cute's SM100 backward keeps its Q stage): the handle is carried by its pipeline state's values
(CuTe DSL's ImmutableResourceHandle implements the value protocol), so each iteration releases the stage it
waited for in the one before."""

from __future__ import annotations

import numpy as np

import cutelab as cute
import cutelab as cutlass
from cutelab.runtime import from_dlpack


@cute.kernel
def lagging(SharedStorage: cutlass.Constexpr, res: cute.Tensor, n: cutlass.Int32):
    warp_idx = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    smem = cutlass.utils.SmemAllocator()
    storage = smem.allocate(SharedStorage, 64)
    pipe = cutlass.pipeline.PipelineAsync.create(
        num_stages=2,
        producer_group=cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread, 32),
        consumer_group=cutlass.pipeline.CooperativeGroup(cutlass.pipeline.Agent.Thread, 32),
        barrier_storage=storage.mbar.data_ptr())
    buf = storage.buf.get_tensor(cute.make_layout(2))
    producer, consumer = pipe.make_participants()
    if warp_idx == 0:
        for i in cutlass.range(n):
            h = producer.acquire_and_advance()
            buf[h.index] = 1.0 * i
            h.commit()
        producer.tail()
    else:
        h = consumer.wait_and_advance()
        for i in cutlass.range(n - 1):
            h_next = consumer.wait_and_advance()  # two stages held at once: the last one and the next
            res[i] = buf[h.index] + buf[h_next.index] * 100.0
            h.release()
            h = h_next
        res[n - 1] = buf[h.index]
        h.release()


@cute.jit
def run_lagging(res: cute.Tensor, n: cutlass.Int32):
    @cute.struct
    class SharedStorage:
        mbar: cute.struct.MemRange[cutlass.Int64, 4]
        buf: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, 2], 128]

    lagging(SharedStorage, res, n).launch(grid=(1, 1, 1), block=(64, 1, 1))


def test_a_handle_carried_across_loop_iterations_releases_the_stage_it_holds():
    res = np.full(8, -1.0, np.float32)
    run_lagging(from_dlpack(res), 6)
    assert res[:6].tolist() == [i + 100.0 * (i + 1) for i in range(5)] + [5.0]
    assert (res[6:] == -1.0).all()
