"""cute.arch mbarriers in kernels: phases, arrivals and transaction counts on the CPU, PTX in CUDA."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import LaunchError, TraceError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
from cutelab.runtime import from_dlpack

from sm90_util import nvcc_compiles


@cute.kernel
def reverse_with_mbarrier(A: cute.Tensor, B: cute.Tensor, F: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(2), 8)
    s = smem.allocate_tensor(cutlass.Float32, cute.make_layout(64), 16)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 64)
        cute.arch.mbarrier_init(bars.iterator + 1, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    s[tidx] = A[bidx * 64 + tidx]
    before = cute.arch.mbarrier_try_wait(bars.iterator, 0)   # phase 0 not complete yet
    cute.arch.mbarrier_arrive(bars.iterator)                 # 64 arrivals complete phase 0
    cute.arch.mbarrier_wait(bars.iterator, 0)
    after = cute.arch.mbarrier_try_wait(bars.iterator, 0)    # phase 0 complete now
    odd = cute.arch.mbarrier_try_wait(bars.iterator, 1)      # phase 1 not complete
    B[bidx * 64 + tidx] = s[63 - tidx]
    F[bidx * 64 + tidx, 0] = before.to(cutlass.Int32)
    F[bidx * 64 + tidx, 1] = after.to(cutlass.Int32)
    F[bidx * 64 + tidx, 2] = odd.to(cutlass.Int32)


def test_phase_completes_after_all_arrivals():
    A = np.arange(256, dtype=np.float32)
    B = np.zeros_like(A)
    F = np.full((256, 3), 7, dtype=np.int32)
    reverse_with_mbarrier(from_dlpack(A), from_dlpack(B), from_dlpack(F)).launch(grid=4, block=64)
    np.testing.assert_array_equal(B, A.reshape(4, 64)[:, ::-1].ravel())
    np.testing.assert_array_equal(F, np.tile([0, 1, 0], (256, 1)))


def test_cuda_prints_mbarrier_ptx_that_compiles():
    A = np.arange(64, dtype=np.float32)
    B = np.zeros_like(A)
    F = np.zeros((64, 3), dtype=np.int32)
    reverse_with_mbarrier(from_dlpack(A), from_dlpack(B), from_dlpack(F)).launch(grid=1, block=64)
    src = cuda.render(last_launch().ir)
    for ptx in ("mbarrier.init.shared::cta.b64", "mbarrier.arrive.shared::cta.b64 _,",
                "mbarrier.try_wait.parity.shared::cta.b64", "fence.mbarrier_init.release.cluster"):
        assert ptx in src
    nvcc_compiles(src)


@cute.kernel
def tx_kernel(F: cute.Tensor, arrive_twice: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 1)
    cute.arch.sync_threads()
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bars.iterator, 128)
    # one arrival done, 128 transaction bytes outstanding: the phase is not complete
    F[tidx] = cute.arch.mbarrier_try_wait(bars.iterator, 0).to(cutlass.Int32)
    if arrive_twice:
        if tidx == 0:
            cute.arch.mbarrier_arrive(bars.iterator)


def test_transaction_bytes_keep_the_phase_open():
    F = np.full(32, 9, dtype=np.int32)
    tx_kernel(from_dlpack(F), False).launch(grid=1, block=32)
    np.testing.assert_array_equal(F, 0)


def test_more_arrivals_than_counted_is_an_error():
    F = np.zeros(32, dtype=np.int32)
    with pytest.raises(LaunchError, match="no arrival left in its phase"):
        tx_kernel(from_dlpack(F), True).launch(grid=1, block=32)


@cute.kernel
def deadlock(F: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 32)
    cute.arch.sync_threads()
    if tidx < 31:
        cute.arch.mbarrier_arrive(bars.iterator)
    cute.arch.mbarrier_wait(bars.iterator, 0)
    F[tidx] = 1


def test_a_wait_that_can_never_complete_names_kernel_line_and_state():
    F = np.zeros(32, dtype=np.int32)
    with pytest.raises(LaunchError) as e:
        deadlock(from_dlpack(F)).launch(grid=1, block=32)
    msg = str(e.value)
    assert "deadlock" in msg and "can never complete" in msg
    assert "test_sm90_mbarrier.py" in msg  # the line of the wait
    assert "1 of 32 arrivals" in msg
    np.testing.assert_array_equal(F, 0)  # nothing was written


@cute.kernel
def uninitialised(F: cute.Tensor):
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    cute.arch.mbarrier_arrive(bars.iterator)
    F[0] = 1


def test_arrive_on_an_uninitialised_barrier_is_an_error():
    F = np.zeros(1, dtype=np.int32)
    with pytest.raises(LaunchError, match="never initialised"):
        uninitialised(from_dlpack(F)).launch(grid=1, block=32)


@cute.kernel
def wrong_word(F: cute.Tensor):
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int32, cute.make_layout(2), 8)
    cute.arch.mbarrier_init(bars.iterator, 1)
    F[0] = 1


def test_a_32_bit_word_is_not_a_barrier():
    F = np.zeros(1, dtype=np.int32)
    with pytest.raises(TraceError, match="64-bit word"):
        wrong_word(from_dlpack(F)).launch(grid=1, block=32)


def test_outside_a_kernel():
    with pytest.raises(TraceError, match="only available inside a @cute.kernel"):
        cute.arch.mbarrier_init(None, 1)


@cute.kernel
def fences(F: cute.Tensor, kind: cutlass.Constexpr, space: cutlass.Constexpr):
    cute.arch.fence_proxy(kind, space=space)
    cute.arch.fence_view_async_shared()
    F[0] = 1


@pytest.mark.parametrize("kind,space,ptx", [("async.shared", "cta", "fence.proxy.async.shared::cta;"),
                                            ("async.shared", "cluster", "fence.proxy.async.shared::cluster;"),
                                            ("async", None, "fence.proxy.async;"),
                                            ("async.global", None, "fence.proxy.async.global;")])
def test_proxy_fences(kind, space, ptx):
    F = np.zeros(1, np.int32)
    fences(from_dlpack(F), kind, space).launch(grid=1, block=32)
    assert F[0] == 1
    src = cuda.render(last_launch().ir)
    assert ptx in src
    nvcc_compiles(src)


def test_other_proxy_fences_are_refused():
    F = np.zeros(1, np.int32)
    with pytest.raises(TraceError, match="async proxy fences"):
        fences(from_dlpack(F), "tensormap", None).launch(grid=1, block=32)


@cute.kernel
def regs_and_cluster(F: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    cx, _, _ = cute.arch.cluster_idx()
    wg = tidx // 128
    if wg == 0:
        cute.arch.setmaxregister_decrease(40)
    else:
        cute.arch.setmaxregister_increase(232)
    cute.arch.cluster_arrive()
    cute.arch.cluster_wait()
    F[cx * 256 + tidx] = cute.arch.block_idx_in_cluster() + 1


def test_setmaxregister_and_clusters_of_one_cta():
    from cutelab.kernel.instr.wgmma import target_arch

    F = np.zeros(512, np.int32)
    regs_and_cluster(from_dlpack(F)).launch(grid=2, block=256)
    np.testing.assert_array_equal(F, 1)
    ir = last_launch().ir
    src = cuda.render(ir)
    assert "setmaxnreg.dec.sync.aligned.u32 40;" in src and "setmaxnreg.inc.sync.aligned.u32 232;" in src
    assert target_arch(ir, "sm_90") == "sm_90a"
    nvcc_compiles(src)
    with pytest.raises(TraceError, match="multiple of 8"):
        @cute.kernel
        def bad(F: cute.Tensor):
            cute.arch.setmaxregister_increase(250)
            F[0] = 1

        bad(from_dlpack(F)).launch(grid=1, block=128)
