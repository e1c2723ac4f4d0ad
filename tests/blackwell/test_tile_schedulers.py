"""The persistent tile schedulers on the CPU interpreter. Cluster launch control (CLC):
cute.arch.issue_clc_query answered by the interpreter's own scheduler (half the grid's clusters
resident at once, each query cancelling the next cluster not yet started), cute.arch.clc_response,
the dynamic persistent tile scheduler over them, and the rules a query's answer buffer must follow.
The static persistent scheduler: each warp walks its tiles in a runtime loop of its own."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.compat.dsl_clc import ClcDynamicPersistentTileScheduler, ClcDynamicPersistentTileSchedulerParams
from cutelab.compat.dsl_utils import PersistentTileSchedulerParams, StaticPersistentTileScheduler
from cutelab.errors import TraceError
from cutelab.runtime import from_dlpack

_HERE = __file__.rsplit("/", 1)[-1]


def _line(text: str) -> int:
    with open(__file__) as f:
        for i, line in enumerate(f, 1):
            if text in line:
                return i
    raise AssertionError(text)


@cute.kernel
def persistent(Out: cute.Tensor, Count: cute.Tensor, params: cutlass.Constexpr):
    """Each CTA (clusters of 1, one warp: elect_one issues one query per warp) walks tiles with the CLC
    scheduler; Out[tile] = the CTA that did it."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    smem = cutlass.utils.SmemAllocator()
    bar = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    resp = smem.allocate_tensor(cutlass.Int32, cute.make_layout(4), 16)
    if tidx == 0:
        cute.arch.mbarrier_init(bar.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    sched = ClcDynamicPersistentTileScheduler.create(params, cute.arch.block_idx(), cute.arch.grid_dim(),
                                                     resp.iterator)
    work = sched.initial_work_tile_info()
    phase = cutlass.Int32(0)
    n = cutlass.Int32(0)
    while work.is_valid_tile:
        if tidx == 0:
            Out[work.tile_idx[0]] = bidx
            cute.arch.mbarrier_arrive_and_expect_tx(bar.iterator, 16)
        sched.advance_to_next_work(bar.iterator)
        cute.arch.mbarrier_wait(bar.iterator, phase)
        phase = phase ^ 1
        n = n + 1
        work = sched.get_current_work()
        cute.arch.sync_threads()
    if tidx == 0:
        Count[bidx] = n


def test_queries_cancel_the_clusters_not_yet_started():
    out = np.full(6, -1, np.int32)
    count = np.full(6, -1, np.int32)
    persistent(from_dlpack(out), from_dlpack(count),
               ClcDynamicPersistentTileSchedulerParams((6, 1, 1), (1, 1, 1))).launch(grid=6, block=32)
    # blocks 0..2 are resident; each of their first queries cancels blocks 3, 4, 5 in turn and takes its tile
    assert out.tolist() == [0, 1, 2, 0, 1, 2]
    assert count[:3].tolist() == [2, 2, 2]  # the cancelled blocks never ran
    assert count[3:].tolist() == [-1, -1, -1]


@cute.kernel
def cluster_query(Out: cute.Tensor):
    """Clusters of 2: rank 0 asks; the answer lands in both CTAs, each on its own barrier."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    rank = cute.arch.block_idx_in_cluster()
    smem = cutlass.utils.SmemAllocator()
    bar = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    resp = smem.allocate_tensor(cutlass.Int32, cute.make_layout(4), 16)
    if tidx == 0:
        cute.arch.mbarrier_init(bar.iterator, 1)
        cute.arch.mbarrier_arrive_and_expect_tx(bar.iterator, 16)
    cute.arch.mbarrier_init_fence()
    cute.arch.cluster_arrive()
    cute.arch.cluster_wait()
    if tidx == 0 and rank == 0:
        cute.arch.issue_clc_query(bar.iterator, resp.iterator)  # MULTICAST QUERY
    cute.arch.mbarrier_wait(bar.iterator, 0)
    x, y, z, valid = cute.arch.clc_response(resp.iterator)
    if tidx == 0:
        Out[bidx, 0] = x
        Out[bidx, 1] = valid


def test_a_multicast_answer_lands_in_every_cta_of_the_cluster():
    out = np.full((8, 2), -1, np.int32)
    cluster_query(from_dlpack(out)).launch(grid=8, block=32, cluster=(2, 1, 1))
    # 4 clusters, 2 resident: cluster 0 cancels cluster 2 (first CTA x = 4), cluster 1 cancels cluster 3 (x = 6)
    assert out[:4].tolist() == [[4, 1], [4, 1], [6, 1], [6, 1]]
    assert out[4:].tolist() == [[-1, -1]] * 4


@cute.kernel
def bad_response(Out: cute.Tensor, case: cutlass.Constexpr):
    smem = cutlass.utils.SmemAllocator()
    bar = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    if cutlass.const_expr(case == "float"):
        resp = smem.allocate_tensor(cutlass.Float32, cute.make_layout(4), 16)
        cute.arch.issue_clc_query(bar.iterator, resp.iterator)  # FLOAT RESPONSE
    else:
        resp = smem.allocate_tensor(cutlass.Int32, cute.make_layout(8), 16)
        cute.arch.clc_response(resp.iterator + 2)  # MISALIGNED RESPONSE


@pytest.mark.parametrize("case,msg,mark", [
    ("float", "the CLC response is 16 bytes of 32- or 64-bit integer words", "# FLOAT RESPONSE"),
    ("misaligned", "the CLC response must be 16-byte aligned", "# MISALIGNED RESPONSE"),
])
def test_the_answer_buffer_is_16_aligned_bytes_of_integers(case, msg, mark):
    with pytest.raises(TraceError) as e:
        bad_response(from_dlpack(np.zeros(4, np.int32)), case).launch(grid=1, block=32)
    assert msg in str(e.value) and f"{_HERE}:{_line(mark)}" in str(e.value), str(e.value)


def test_cuda_prints_the_clc_ptx(tmp_path):
    import shutil
    import subprocess

    from cutelab.kernel.cuda import printer
    from cutelab.kernel.launch.plan import last_launch

    cluster_query(from_dlpack(np.zeros((8, 2), np.int32))).launch(grid=8, block=32, cluster=(2, 1, 1))
    src = printer.render(last_launch().ir)
    for ptx in ("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes"
                ".multicast::cluster::all.b128", "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128",
                "clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128"):
        assert ptx in src, ptx
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    (tmp_path / "k.cu").write_text(src)
    c = subprocess.run([nvcc, "-arch=sm_100a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(tmp_path / "k.cu")],
                       capture_output=True, text=True)
    assert c.returncode == 0, c.stderr[-4000:]


@cute.kernel
def static_walk(Out: cute.Tensor, Count: cute.Tensor, params: cutlass.Constexpr):
    """Warp 0 and warp 1 each walk the tiles of their block with the static scheduler, warp 1 in a
    separate branch after warp 0's: Out[warp, tile] = the block that did it, Count[block, warp]."""
    tidx, _, _ = cute.arch.thread_idx()
    bidz = cute.arch.block_idx()[2]
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    sched = StaticPersistentTileScheduler.create(params, cute.arch.block_idx(), cute.arch.grid_dim())
    work = sched.initial_work_tile_info()
    if warp == 0:
        while work.is_valid_tile:
            if tidx == 0:
                Out[0, work.tile_idx[0]] = bidz
            sched.advance_to_next_work()
            work = sched.get_current_work()
        if tidx == 0:
            Count[bidz, 0] = sched.num_tiles_executed
    if warp == 1:
        while work.is_valid_tile:
            if tidx == 32:
                Out[1, work.tile_idx[0]] = bidz
            sched.advance_to_next_work()
            work = sched.get_current_work()
        if tidx == 32:
            Count[bidz, 1] = sched.num_tiles_executed


def test_the_static_scheduler_walks_each_warps_tiles_at_run_time():
    params = PersistentTileSchedulerParams((7, 1, 1), (1, 1, 1))
    grid = StaticPersistentTileScheduler.get_grid_shape(params, max_active_clusters=3)
    assert grid == (1, 1, 3)
    out = np.full((2, 7), -1, np.int32)
    count = np.full((3, 2), -1, np.int32)
    static_walk(from_dlpack(out), from_dlpack(count), params).launch(grid=grid, block=64)
    # block b takes tiles b, b + 3, b + 6 (< 7); warp 1 walks them again from its own start
    assert out.tolist() == [[0, 1, 2, 0, 1, 2, 0]] * 2
    assert count.tolist() == [[3, 3], [2, 2], [2, 2]]
