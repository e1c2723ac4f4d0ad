"""Thread-block clusters: launch(cluster=...), cute.arch cluster indices, the cluster barrier,
distributed shared memory and mbarrier arrives on a peer CTA, on the CPU interpreter (results
checked) and in the printed CUDA (PTX checked, compiled by nvcc where it is installed)."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import LaunchError, TraceError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
from cutelab.nvgpu import cpasync, warpgroup
from cutelab.runtime import from_dlpack
from cutelab.compat.mlir.dialects import nvvm

from sm90_util import nvcc_compiles


@cute.kernel
def cluster_ids(O: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bx, by, bz = cute.arch.block_idx()
    gx, gy, _ = cute.arch.grid_dim()
    lin = bx + gx * by + gx * gy * bz
    cx, cy, cz = cute.arch.block_in_cluster_idx()
    kx, ky, kz = cute.arch.cluster_idx()
    nx, ny, nz = cute.arch.cluster_dim()
    dx, dy, dz = cute.arch.block_in_cluster_dim()
    if tidx == 0:
        O[lin, 0] = cx
        O[lin, 1] = cy
        O[lin, 2] = cz
        O[lin, 3] = kx
        O[lin, 4] = ky
        O[lin, 5] = kz
        O[lin, 6] = cute.arch.block_idx_in_cluster()
        O[lin, 7] = cute.arch.cluster_size()
        O[lin, 8] = nx * 100 + ny * 10 + nz
        O[lin, 9] = dx * 100 + dy * 10 + dz


@pytest.mark.parametrize("grid,cluster", [((8, 4, 1), (2, 2, 1)), ((4, 2, 2), (1, 2, 2)), ((6, 1, 1), (3, 1, 1)),
                                          ((4, 4, 1), (1, 1, 1))])
def test_cluster_indices(grid, cluster):
    n = grid[0] * grid[1] * grid[2]
    O = np.full((n, 10), -1, np.int32)
    cluster_ids(from_dlpack(O)).launch(grid=grid, block=(32, 1, 1), cluster=cluster)
    want = []
    for z in range(grid[2]):
        for y in range(grid[1]):
            for x in range(grid[0]):
                c = (x % cluster[0], y % cluster[1], z % cluster[2])
                k = (x // cluster[0], y // cluster[1], z // cluster[2])
                nc = [g // s for g, s in zip(grid, cluster)]
                rank = c[0] + cluster[0] * (c[1] + cluster[1] * c[2])
                want.append(list(c) + list(k) + [rank, cluster[0] * cluster[1] * cluster[2],
                                                 nc[0] * 100 + nc[1] * 10 + nc[2],
                                                 cluster[0] * 100 + cluster[1] * 10 + cluster[2]])
    np.testing.assert_array_equal(O, np.array(want, np.int32))


@cute.kernel
def swap_through_dsmem(A: cute.Tensor, B: cute.Tensor, vec: cutlass.Constexpr):
    """The two CTAs of a (2, 1, 1) cluster swap their 64 values through distributed shared memory:
    each thread stores `vec` values into the peer's shared memory (cute.copy with a
    CopyDsmemStoreOp atom, completing on the peer's barrier); each CTA waits on its own barrier and
    writes what it received, reversed. Cluster barriers make the barrier inits visible before the
    stores and keep every CTA alive until its peer is done."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    rank = cute.arch.block_idx_in_cluster()
    smem = cutlass.utils.SmemAllocator()
    bar = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    s = smem.allocate_tensor(cutlass.Float32, cute.make_layout(64), 16)
    if tidx == 0:
        cute.arch.mbarrier_init(bar.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.cluster_arrive_relaxed()
    cute.arch.cluster_wait()  # the peer's barrier is initialised
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bar.iterator, 64 * 4)
    atom = cute.make_copy_atom(cpasync.CopyDsmemStoreOp(), cutlass.Float32, num_bits_per_copy=32 * vec)
    if tidx < 64 // vec:
        frag = cute.make_rmem_tensor(cute.make_layout(vec), cutlass.Float32)
        for k in range(vec):
            frag[k] = A[bidx * 64 + tidx * vec + k]
        dst = cute.make_tensor(cute.arch.map_dsmem_ptr(s.iterator + tidx * vec, 1 - rank), cute.make_layout(vec))
        cute.copy(atom, frag, dst, mbar_ptr=cute.arch.map_dsmem_ptr(bar.iterator, 1 - rank))
    cute.arch.mbarrier_wait(bar.iterator, 0)  # the peer's 256 bytes have landed here
    B[bidx * 64 + tidx] = s[63 - tidx]
    cute.arch.cluster_arrive()
    cute.arch.cluster_wait()  # no CTA exits while its peer may still write its shared memory


@pytest.mark.parametrize("vec", [1, 4])
def test_dsmem_exchange_between_the_two_ctas_of_a_cluster(vec):
    A = np.arange(8 * 64, dtype=np.float32)
    B = np.zeros_like(A)
    swap_through_dsmem(from_dlpack(A), from_dlpack(B), vec).launch(grid=8, block=64, cluster=(2, 1, 1))
    want = A.reshape(4, 2, 64)[:, ::-1, ::-1].reshape(-1)  # block b gets block b ^ 1, reversed
    np.testing.assert_array_equal(B, want)


def test_dsmem_and_cluster_barrier_print_ptx_that_compiles():
    A = np.arange(2 * 64, dtype=np.float32)
    B = np.zeros_like(A)
    swap_through_dsmem(from_dlpack(A), from_dlpack(B), 4).launch(grid=2, block=64, cluster=(2, 1, 1))
    ir = last_launch().ir
    assert ir.cluster == (2, 1, 1)
    src = cuda.render(ir)
    for ptx in ("barrier.cluster.arrive;", "barrier.cluster.arrive.relaxed;", "barrier.cluster.wait;",
                "mapa.shared::cluster.u32", "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32"):
        assert ptx in src, ptx
    assert "__cluster_dims__" not in src  # the shape is a launch attribute
    nvcc_compiles(src)


@cute.kernel
def plain_dsmem_store(B: cute.Tensor):
    smem = cutlass.utils.SmemAllocator()
    s = smem.allocate_tensor(cutlass.Float32, cute.make_layout(32), 16)
    peer = cute.make_tensor(cute.arch.map_dsmem_ptr(s.iterator, 1), cute.make_layout(32))
    peer[0] = 1.0


def test_dsmem_tensors_are_not_loaded_or_stored_element_by_element():
    B = np.zeros(32, np.float32)
    with pytest.raises(TraceError, match=r"plain_dsmem_store \(at .*test_cluster.py:\d+\): a tensor over "
                                         r"ptr<f32, dsmem, align<16>> doesn't support load and store.*CopyDsmemStoreOp"):
        plain_dsmem_store(from_dlpack(B)).launch(grid=2, block=32, cluster=(2, 1, 1))


@cute.kernel
def misaligned_vector_store(A: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    bar = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    s = smem.allocate_tensor(cutlass.Float32, cute.make_layout(68), 16)
    atom = cute.make_copy_atom(cpasync.CopyDsmemStoreOp(), cutlass.Float32, num_bits_per_copy=128)
    frag = cute.make_rmem_tensor(cute.make_layout(4), cutlass.Float32)
    frag.fill(1.0)
    dst = cute.make_tensor(cute.arch.map_dsmem_ptr(s.iterator + tidx * 4 + 2, 0), cute.make_layout(4))
    cute.copy(atom, frag, dst, mbar_ptr=cute.arch.map_dsmem_ptr(bar.iterator, 0))


def test_a_vector_dsmem_store_must_be_aligned():
    A = np.zeros(32, np.float32)
    with pytest.raises(TraceError, match=r"a store of 4 elements \(.v4\) needs a destination aligned to 16 bytes"):
        misaligned_vector_store(from_dlpack(A)).launch(grid=2, block=16, cluster=(2, 1, 1))


@cute.kernel
def rotate3(A: cute.Tensor, B: cute.Tensor):
    """CTA r of a (3, 1, 1) cluster sends its values to CTA (r + 2) % 3: CTA r receives CTA (r + 1) % 3's."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    rank = cute.arch.block_idx_in_cluster()
    smem = cutlass.utils.SmemAllocator()
    bar = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    s = smem.allocate_tensor(cutlass.Int32, cute.make_layout(32), 16)
    if tidx == 0:
        cute.arch.mbarrier_init(bar.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.cluster_arrive_relaxed()
    cute.arch.cluster_wait()
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bar.iterator, 32 * 4)
    cute.arch.store_async_dsmem(s.iterator + tidx, A[bidx * 32 + tidx], bar.iterator, (rank + 2) % 3)
    cute.arch.mbarrier_wait(bar.iterator, 0)
    B[bidx * 32 + tidx] = s[tidx]
    cute.arch.cluster_arrive()
    cute.arch.cluster_wait()


def test_clusters_stay_whole_across_the_interpreters_batches():
    """1200 blocks of 32 threads: more than one batch of the interpreter (at most 32768 threads);
    every batch must hold whole clusters."""
    A = np.arange(1200 * 32, dtype=np.int32)
    B = np.zeros_like(A)
    rotate3(from_dlpack(A), from_dlpack(B)).launch(grid=1200, block=32, cluster=(3, 1, 1))
    want = np.roll(A.reshape(400, 3, 32), -1, axis=1).reshape(-1)
    np.testing.assert_array_equal(B, want)


@cute.kernel
def push_then_signal(A: cute.Tensor, B: cute.Tensor):
    """Rank 0 stores its values into rank 1's shared memory (completing on rank 1's full barrier);
    rank 1 waits, stores them doubled back into rank 0 (completing on rank 0's full barrier) and
    then arrives on rank 0's empty barrier (a remote mbarrier arrive); rank 0 waits for both."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    rank = cute.arch.block_idx_in_cluster()
    smem = cutlass.utils.SmemAllocator()
    full = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    empty = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    s = smem.allocate_tensor(cutlass.Float32, cute.make_layout(32), 16)
    if tidx == 0:
        cute.arch.mbarrier_init(full.iterator, 1)
        cute.arch.mbarrier_init(empty.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.cluster_arrive_relaxed()
    cute.arch.cluster_wait()  # both CTAs' barriers are initialised
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(full.iterator, 32 * 4)
    atom = cute.make_copy_atom(cpasync.CopyDsmemStoreOp(), cutlass.Float32)
    frag = cute.make_rmem_tensor(cute.make_layout(1), cutlass.Float32)
    if rank == 0:
        frag[0] = A[(bidx // 2) * 32 + tidx]
        dst = cute.make_tensor(cute.arch.map_dsmem_ptr(s.iterator + tidx, 1), cute.make_layout(1))
        cute.copy(atom, frag, dst, mbar_ptr=cute.arch.map_dsmem_ptr(full.iterator, 1))
        cute.arch.mbarrier_wait(full.iterator, 0)
        cute.arch.mbarrier_wait(empty.iterator, 0)
        B[(bidx // 2) * 32 + tidx] = s[tidx]
    else:
        cute.arch.mbarrier_wait(full.iterator, 0)
        frag[0] = s[tidx] * 2.0
        dst = cute.make_tensor(cute.arch.map_dsmem_ptr(s.iterator + tidx, 0), cute.make_layout(1))
        cute.copy(atom, frag, dst, mbar_ptr=cute.arch.map_dsmem_ptr(full.iterator, 0))
        if tidx == 0:
            cute.arch.mbarrier_arrive(empty.iterator, peer_cta_rank_in_cluster=0)
    cute.arch.cluster_arrive()
    cute.arch.cluster_wait()


def test_remote_mbarrier_arrive_orders_the_two_ctas():
    A = np.arange(3 * 32, dtype=np.float32) + 1
    B = np.zeros_like(A)
    push_then_signal(from_dlpack(A), from_dlpack(B)).launch(grid=6, block=32, cluster=(2, 1, 1))
    np.testing.assert_array_equal(B, 2 * A)
    src = cuda.render(last_launch().ir)
    # the program's default scope (CTA), as CuTe DSL prints it
    assert "mapa.shared::cluster.u32" in src and "mbarrier.arrive.release.cta.shared::cluster.b64 _," in src
    assert "st.async.shared::cluster.mbarrier::complete_tx::bytes.f32 [%0], %2, [%1];" in src
    nvcc_compiles(src)


@cute.kernel
def remote_arrives(B: cute.Tensor):
    """Remote arrives with each memory semantics a program can ask for (scope, relaxed)."""
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    bar = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    if tidx == 0:
        cute.arch.mbarrier_init(bar.iterator, 4)
    cute.arch.mbarrier_init_fence()
    cute.arch.cluster_arrive_relaxed()
    cute.arch.cluster_wait()
    if tidx == 0:
        peer = 1 - cute.arch.block_idx_in_cluster()
        cute.arch.mbarrier_arrive(bar.iterator, peer_cta_rank_in_cluster=peer)
        cute.arch.mbarrier_arrive(bar.iterator, peer_cta_rank_in_cluster=peer, scope=nvvm.MemScopeKind.CLUSTER)
        cute.arch.mbarrier_arrive(bar.iterator, peer_cta_rank_in_cluster=peer, relaxed=True, scope="cluster")
        cute.arch.mbarrier_arrive_and_expect_tx(bar.iterator, 0, peer_cta_rank_in_cluster=peer, relaxed=True)
        cute.arch.mbarrier_wait(bar.iterator, 0)
        B[cute.arch.block_idx()[0]] = 1.0
    cute.arch.cluster_arrive()
    cute.arch.cluster_wait()


def test_remote_arrives_print_the_programs_scope_and_semantics():
    B = np.zeros(2, dtype=np.float32)
    remote_arrives(from_dlpack(B)).launch(grid=2, block=32, cluster=(2, 1, 1))
    np.testing.assert_array_equal(B, 1.0)
    src = cuda.render(last_launch().ir)
    for sem in ("release.cta", "release.cluster", "relaxed.cluster"):
        assert f"mbarrier.arrive.{sem}.shared::cluster.b64 _," in src, sem
    assert "mbarrier.arrive.expect_tx.relaxed.cta.shared::cluster.b64 _," in src
    nvcc_compiles(src)


@cute.kernel
def remote_arrive_gpu_scope(B: cute.Tensor):
    smem = cutlass.utils.SmemAllocator()
    bar = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    cute.arch.mbarrier_arrive(bar.iterator, peer_cta_rank_in_cluster=0, scope=nvvm.MemScopeKind.GPU)


def test_a_remote_arrive_at_gpu_scope_is_refused():
    with pytest.raises(TraceError, match=r"mbarrier_arrive\(scope=.*CTA or CLUSTER.*got gpu"):
        remote_arrive_gpu_scope(from_dlpack(np.zeros(1, np.float32))).launch(grid=2, block=32, cluster=(2, 1, 1))


@cute.kernel
def pipeline_init_in_a_cluster(B: cute.Tensor):
    """cutlass.pipeline's init arrive/wait with a (2, 1) cluster: a cluster barrier, after which the
    peer's barrier takes a remote arrive."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    rank = cute.arch.block_idx_in_cluster()
    smem = cutlass.utils.SmemAllocator()
    bar = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    if tidx == 0:
        cute.arch.mbarrier_init(bar.iterator, 1)
    cutlass.pipeline.pipeline_init_arrive(cute.make_layout((2, 1)), is_relaxed=True)
    cutlass.pipeline.pipeline_init_wait(cute.make_layout((2, 1)))
    if tidx == 0:
        cute.arch.mbarrier_arrive(bar.iterator, peer_cta_rank_in_cluster=1 - rank)
    cute.arch.mbarrier_wait(bar.iterator, 0)
    B[bidx * 32 + tidx] = 1.0 + rank


def test_pipeline_init_arrive_and_wait_use_the_cluster_barrier():
    B = np.zeros(4 * 32, np.float32)
    pipeline_init_in_a_cluster(from_dlpack(B)).launch(grid=4, block=32, cluster=(2, 1, 1))
    np.testing.assert_array_equal(B, np.repeat([1.0, 2.0, 1.0, 2.0], 32))
    src = cuda.render(last_launch().ir)
    assert "barrier.cluster.arrive.relaxed;" in src and "barrier.cluster.wait;" in src
    assert "__syncthreads" not in src


@cute.kernel
def async_store_to_peer(A: cute.Tensor, B: cute.Tensor):
    """Each thread stores one Int32 word into the peer CTA's shared memory with st.async, completing
    4 bytes on the peer's barrier; each CTA waits on its own barrier for the 128 bytes."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    rank = cute.arch.block_idx_in_cluster()
    smem = cutlass.utils.SmemAllocator()
    bar = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    s = smem.allocate_tensor(cutlass.Int32, cute.make_layout(32), 16)
    if tidx == 0:
        cute.arch.mbarrier_init(bar.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.cluster_arrive_relaxed()
    cute.arch.cluster_wait()
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bar.iterator, 32 * 4)
    cute.arch.store_async_dsmem(s.iterator + tidx, A[bidx * 32 + tidx] * 10, bar.iterator, 1 - rank)
    cute.arch.mbarrier_wait(bar.iterator, 0)
    B[bidx * 32 + tidx] = s[tidx]
    cute.arch.cluster_arrive()
    cute.arch.cluster_wait()


def test_store_async_dsmem_completes_on_the_peers_barrier():
    A = np.arange(4 * 32, dtype=np.int32)
    B = np.zeros_like(A)
    async_store_to_peer(from_dlpack(A), from_dlpack(B)).launch(grid=4, block=32, cluster=(2, 1, 1))
    np.testing.assert_array_equal(B, 10 * A.reshape(2, 2, 32)[:, ::-1].reshape(-1))
    src = cuda.render(last_launch().ir)
    assert "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %2, [%1];" in src
    nvcc_compiles(src)


@cute.kernel
def never_second_arrival(B: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    rank = cute.arch.block_idx_in_cluster()
    smem = cutlass.utils.SmemAllocator()
    bar = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    if tidx == 0:
        cute.arch.mbarrier_init(bar.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.cluster_arrive()
    cute.arch.cluster_wait()
    if rank == 0:
        cute.arch.cluster_arrive()
        cute.arch.cluster_wait()  # waits for rank 1's second arrival, which never comes
        if tidx == 0:
            cute.arch.mbarrier_arrive(bar.iterator, peer_cta_rank_in_cluster=1)
    else:
        cute.arch.mbarrier_wait(bar.iterator, 0)  # waits for rank 0's arrive after its second wait
    B[tidx] = 1.0


def test_a_cluster_wait_that_can_never_complete_is_a_deadlock_report():
    B = np.zeros(32, np.float32)
    with pytest.raises(LaunchError, match=r"deadlock.*\n.*cluster_wait\(\).*waits for 32 thread"
                       r"(?s:.*)mbarrier_wait"):
        never_second_arrival(from_dlpack(B)).launch(grid=2, block=32, cluster=(2, 1, 1))
    assert not B.any()


@cute.kernel
def wait_without_arrive(B: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    cute.arch.cluster_wait()
    B[tidx] = 1.0


def test_cluster_wait_without_arrive_is_refused():
    B = np.zeros(32, np.float32)
    with pytest.raises(LaunchError, match=r"cluster_wait\(\) .* has no cluster_arrive before it"):
        wait_without_arrive(from_dlpack(B)).launch(grid=2, block=32, cluster=(2, 1, 1))


@cute.kernel
def half_warp_aligned_arrive(B: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    if tidx < 16:
        cute.arch.cluster_arrive(aligned=True)
    B[tidx] = 1.0


def test_an_aligned_cluster_arrive_needs_whole_warps():
    B = np.zeros(32, np.float32)
    with pytest.raises(LaunchError, match=r"cluster_arrive\(aligned=True\) is executed by only some lanes of warp 0"):
        half_warp_aligned_arrive(from_dlpack(B)).launch(grid=2, block=32, cluster=(2, 1, 1))


@cute.kernel
def write_rank(B: cute.Tensor, peer: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    bar = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    s = smem.allocate_tensor(cutlass.Int32, cute.make_layout(32), 16)
    rank = cute.arch.block_idx_in_cluster()
    if tidx == 0:
        cute.arch.mbarrier_init(bar.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.cluster_arrive_relaxed()
    cute.arch.cluster_wait()
    cute.arch.store_async_dsmem(s.iterator + tidx, tidx, bar.iterator, rank + peer)
    B[tidx] = 1.0


def test_a_peer_rank_outside_the_cluster_is_an_error_naming_the_line():
    B = np.zeros(32, np.float32)
    with pytest.raises(LaunchError, match=r"write_rank.*test_cluster.py:\d+.*CTA rank 2, outside its cluster of 2"):
        write_rank(from_dlpack(B), 1).launch(grid=2, block=32, cluster=(2, 1, 1))
    with pytest.raises(TraceError, match=r"CTA rank 3 is outside the cluster \(2, 1, 1\)"):
        cute_static_rank(from_dlpack(B)).launch(grid=2, block=32, cluster=(2, 1, 1))


@cute.kernel
def cute_static_rank(B: cute.Tensor):
    smem = cutlass.utils.SmemAllocator()
    s = smem.allocate_tensor(cutlass.Float32, cute.make_layout(32), 16)
    cute.arch.map_dsmem_ptr(s.iterator, 3)


@pytest.mark.parametrize("grid,cluster,msg", [
    ((3, 1, 1), (2, 1, 1), r"grid dimension x \(3\) is not a multiple of 2"),
    ((4, 6, 1), (1, 4, 1), r"grid dimension y \(6\) is not a multiple of 4"),
    ((32, 1, 1), (32, 1, 1), r"32 CTAs; at most 16 are supported \(8, the portable cluster size, .*non-portable"),
    ((4, 4, 2), (2, 2, 8), r"32 CTAs"),
    ((4, 1, 1), (0, 1, 1), r"positive static integers"),
])
def test_cluster_shapes_the_gpu_cannot_launch_are_refused(grid, cluster, msg):
    O = np.zeros((64, 10), np.int32)
    with pytest.raises(LaunchError, match=r"cluster_ids.launch \(at .*test_cluster.py:\d+\): .*" + msg):
        cluster_ids(from_dlpack(O)).launch(grid=grid, block=32, cluster=cluster)


def test_cluster_launch_goes_through_cuLaunchKernelEx_with_the_cluster_attribute():
    from cutelab.kernel.cuda.fakegpu import FakeDeviceArray, fake_gpu

    with fake_gpu() as gpu:
        O = from_dlpack(FakeDeviceArray(np.zeros((8, 10), np.int32)))
        cluster_ids(O).launch(grid=(4, 2, 1), block=32, cluster=(2, 2))
        cluster_ids(O).launch(grid=(4, 2, 1), block=32)
    first, second = gpu.launches
    assert first["grid"] == (4, 2, 1) and first["cluster"] == (2, 2, 1)
    assert "cluster" not in second  # a plain launch: cuLaunchKernel


def test_a_cluster_of_16_ctas_runs_with_the_non_portable_opt_in():
    # CuTe DSL allows every kernel non-portable cluster sizes (16 CTAs on Hopper); quack launches (1, 16, 1)
    from cutelab.kernel.cuda.fakegpu import FakeDeviceArray, fake_gpu

    O = np.zeros((32, 10), np.int32)
    cluster_ids(from_dlpack(O)).launch(grid=(1, 32, 1), block=32, cluster=(1, 16, 1))
    np.testing.assert_array_equal(O[:, 6], np.tile(np.arange(16), 2))  # the CTA's rank in its cluster
    with fake_gpu() as gpu:
        F = from_dlpack(FakeDeviceArray(np.zeros((32, 10), np.int32)))
        cluster_ids(F).launch(grid=(1, 32, 1), block=32, cluster=(1, 16, 1))
    assert gpu.launches[0]["cluster"] == (1, 16, 1)
    d = gpu.driver
    assert (d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1) in d.func_attrs


@cute.jit
def run_swap(A: cute.Tensor, B: cute.Tensor):
    swap_through_dsmem(A, B, 1).launch(grid=(A.shape[0] // 64, 1, 1), block=(64, 1, 1), cluster=(2, 1, 1))


def test_compiled_cluster_launch_keeps_its_cluster():
    from cutelab.kernel.cuda.fakegpu import FakeDeviceArray, fake_gpu

    with fake_gpu() as gpu:
        A = from_dlpack(FakeDeviceArray(np.zeros(256, np.float32)))
        B = from_dlpack(FakeDeviceArray(np.zeros(256, np.float32)))
        f = cute.compile(run_swap, A, B)
        f(A, B)
        f(A, B)
    assert [l["cluster"] for l in gpu.launches] == [(2, 1, 1), (2, 1, 1)]
    assert gpu.launches[0]["grid"] == (4, 1, 1)


# --------------------------------------------------------------------------- TMA multicast

def _sw128(tile):
    atom = warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, cute.Float16)
    return cute.tile_to_shape(atom, tile, (0, 1))


@cute.kernel
def tma_multicast(atom: cutlass.Constexpr, tA: cute.Tensor, B: cute.Tensor, sl: cutlass.Constexpr,
                  mask: cutlass.Constexpr):
    """Rank 0 of each (2, 1, 1) cluster loads the cluster's 64x64 tile once, multicast to the CTAs of mask."""
    tidx, _, _ = cute.arch.thread_idx()
    bx, _, _ = cute.arch.block_idx()
    kx, _, _ = cute.arch.cluster_idx()
    rank = cute.arch.block_idx_in_cluster()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    sA = smem.allocate_tensor(cutlass.Float16, sl.outer, 1024, swizzle=sl.inner)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.cluster_arrive_relaxed()
    cute.arch.cluster_wait()  # every CTA's barrier is initialised before any TMA completes on it
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bars.iterator, 64 * 64 * 2)
    if rank == 0:
        if tidx == 0:
            cute.copy(atom, cute.local_tile(tA, (64, 64), (kx, 0)), sA, tma_bar_ptr=bars.iterator, mcast_mask=mask)
    cute.arch.mbarrier_wait(bars.iterator, 0)
    for i in range(64):
        B[bx * 64 + i, tidx] = sA[i, tidx]
    cute.arch.cluster_arrive()
    cute.arch.cluster_wait()  # no CTA exits while a copy it issued may still land in a peer


def _multicast_setup(nclusters):
    A = (np.arange(nclusters * 64 * 64) % 251).astype(np.float16).reshape(nclusters * 64, 64)
    sl = _sw128((64, 64))
    atom, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SMulticastOp(), from_dlpack(A), sl, (64, 64))
    return A, sl, atom, tA


def test_tma_multicast_lands_in_every_cta_of_the_mask():
    A, sl, atom, tA = _multicast_setup(2)
    B = np.full((4 * 64, 64), -1, np.float16)
    # the mask as CuTe DSL 4.8.1 takes it: an Integer (here a runtime kernel argument; CuTe DSL 4.8.1 compiles
    # this copy with num_multicast=1 to one cp.async.bulk.tensor...multicast::cluster of the whole box)
    tma_multicast(atom, tA, from_dlpack(B), sl, cutlass.Int16(0b11)).launch(grid=4, block=64, cluster=(2, 1, 1))
    want = np.repeat(A.reshape(2, 1, 64, 64), 2, axis=1).reshape(4 * 64, 64)  # both CTAs of cluster c: tile c
    np.testing.assert_array_equal(B, want)
    src = cuda.render(last_launch().ir)
    assert ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster" in src
            and '"h"((unsigned short)(((int)mask)))' in src)
    nvcc_compiles(src)


def test_tma_multicast_to_part_of_the_cluster_leaves_the_rest_waiting():
    A, sl, atom, tA = _multicast_setup(1)
    B = np.zeros((2 * 64, 64), np.float16)
    with pytest.raises(LaunchError, match=r"deadlock(?s:.*)of block \(1,0,0\) can never complete: the phase still "
                                          r"waits for 0 of 1 arrivals and 8192 transaction bytes"):
        tma_multicast(atom, tA, from_dlpack(B), sl, 0b01).launch(grid=2, block=64, cluster=(2, 1, 1))


def test_a_multicast_mask_outside_the_cluster_is_refused():
    A, sl, atom, tA = _multicast_setup(1)
    B = np.zeros((2 * 64, 64), np.float16)
    with pytest.raises(TraceError, match=r"mcast_mask=0x4 names CTAs outside the cluster \(2, 1, 1\)"):
        tma_multicast(atom, tA, from_dlpack(B), sl, 0b100).launch(grid=2, block=64, cluster=(2, 1, 1))
    with pytest.raises(LaunchError, match=r"tma_multicast \(at .*test_cluster.py:\d+\): a TMA multicast load of "
                                          r"block \(0,0,0\) has mcast_mask=0x4, naming CTAs outside its cluster of 2"):
        tma_multicast(atom, tA, from_dlpack(B), sl, cutlass.Int16(0b100)).launch(grid=2, block=64, cluster=(2, 1, 1))

def test_a_plain_tma_atom_ignores_mcast_mask():
    """As in CuTe DSL 4.8.1 (its non-multicast TMA load drops keyword arguments other than tma_bar_ptr,
    so that one copy line serves both kinds of atom): the tile lands in the issuing CTA only, so
    CTA 1 of the test kernel waits for bytes that never come, reported as a deadlock."""
    A, sl, atom, tA = _multicast_setup(1)
    B = np.zeros((2 * 64, 64), np.float16)
    plain, _ = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), tA, sl, (64, 64))
    with pytest.raises(LaunchError, match=r"deadlock(?s:.*)of block \(1,0,0\) can never complete: the phase still "
                                          r"waits for 0 of 1 arrivals and 8192 transaction bytes"):
        tma_multicast(plain, tA, from_dlpack(B), sl, 0b11).launch(grid=2, block=64, cluster=(2, 1, 1))


@pytest.mark.gpu
def test_gpu_cluster_kernels():
    """On an SM90 GPU: cluster indices, the DSMEM swap, the remote-arrive ping-pong and the TMA
    multicast give the CPU's results."""
    import torch

    A = torch.arange(64 * 64, dtype=torch.float32, device="cuda")
    B = torch.zeros_like(A)
    swap_through_dsmem(from_dlpack(A), from_dlpack(B), 4).launch(grid=64, block=64, cluster=(2, 1, 1))
    torch.cuda.synchronize()
    want = A.cpu().numpy().reshape(32, 2, 64)[:, ::-1, ::-1].reshape(-1)
    np.testing.assert_array_equal(B.cpu().numpy(), want)
    A2 = torch.arange(8 * 32, dtype=torch.float32, device="cuda") + 1
    B2 = torch.zeros_like(A2)
    push_then_signal(from_dlpack(A2), from_dlpack(B2)).launch(grid=16, block=32, cluster=(2, 1, 1))
    torch.cuda.synchronize()
    np.testing.assert_array_equal(B2.cpu().numpy(), 2 * A2.cpu().numpy())
    O = torch.full((32, 10), -1, dtype=torch.int32, device="cuda")
    cluster_ids(from_dlpack(O)).launch(grid=(8, 4, 1), block=32, cluster=(2, 2, 1))
    torch.cuda.synchronize()
    O_cpu = np.full((32, 10), -1, np.int32)
    cluster_ids(from_dlpack(O_cpu)).launch(grid=(8, 4, 1), block=32, cluster=(2, 2, 1))
    np.testing.assert_array_equal(O.cpu().numpy(), O_cpu)
    A3 = (torch.arange(4 * 64 * 64, device="cuda") % 251).to(torch.float16).reshape(4 * 64, 64)
    sl = _sw128((64, 64))
    atom, tA = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SMulticastOp(), from_dlpack(A3), sl, (64, 64))
    B3 = torch.full((8 * 64, 64), -1, dtype=torch.float16, device="cuda")
    tma_multicast(atom, tA, from_dlpack(B3), sl, 0b11).launch(grid=8, block=64, cluster=(2, 1, 1))
    torch.cuda.synchronize()
    want3 = np.repeat(A3.cpu().numpy().reshape(4, 1, 64, 64), 2, axis=1).reshape(8 * 64, 64)
    np.testing.assert_array_equal(B3.cpu().numpy(), want3)
