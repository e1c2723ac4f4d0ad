"""cp.async in kernels (cute.copy with CopyG2SOp, commit/wait groups), NamedBarrier, in-kernel
cute.gemm with MmaUniversalOp: CPU semantics, misuse errors, and the CUDA they print (compiled with
nvcc for sm_90a when nvcc is on the PATH)."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
import cutelab.pipeline as pipeline
from cutelab.errors import LaunchError, TraceError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import capture
from cutelab.runtime import from_dlpack


def _g2s(bits=128):
    return cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(), cutlass.Float32, num_bits_per_copy=bits)


@cute.kernel
def stage_and_read(gA: cute.Tensor, gB: cute.Tensor, gStale: cute.Tensor, n_valid: cutlass.Constexpr):
    """32 threads copy 4 floats each into smem with cp.async (threads >= n_valid predicated off:
    zero-filled); gStale gets smem read before the wait, gB after it."""
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    sA = smem.allocate_tensor(cutlass.Float32, cute.make_layout((128,)), 16)
    tiled = cute.make_tiled_copy_tv(_g2s(), cute.make_layout(32), cute.make_layout(4))
    thr = tiled.get_slice(tidx)
    s = thr.partition_S(gA)
    d = thr.partition_D(sA)
    p = cute.make_rmem_tensor(cute.make_layout((1, 1)), cutlass.Boolean)
    p[0] = tidx < n_valid
    cute.copy(tiled, s, d, pred=p)
    cute.arch.cp_async_commit_group()
    for i in range(4):
        gStale[tidx * 4 + i] = sA[tidx * 4 + i]  # before the wait: the old contents (zeros)
    cute.arch.cp_async_wait_group(0)
    pipeline.NamedBarrier(barrier_id=1, num_threads=32).arrive_and_wait()
    for i in range(4):
        gB[tidx * 4 + i] = sA[(tidx * 4 + i + 4) % 128]  # another thread's copy: needs the barrier


def _run_stage(n_valid=20):
    A = np.arange(1, 129, dtype=np.float32)
    B = np.full(128, -1, np.float32)
    S = np.full(128, -1, np.float32)
    stage_and_read(from_dlpack(A, assumed_align=16), from_dlpack(B, assumed_align=16),
                   from_dlpack(S, assumed_align=16), n_valid).launch(grid=1, block=32, interpret=True)
    return A, B, S


def test_cp_async_lands_at_wait_and_pred_zero_fills():
    A, B, S = _run_stage(20)
    want = np.where(np.arange(128) < 80, A, 0)  # threads >= 20 predicated off: zeros (src-size 0)
    np.testing.assert_array_equal(B, np.roll(want, -4))


def test_reading_smem_before_the_wait_sees_stale_data():
    _, _, S = _run_stage(32)
    np.testing.assert_array_equal(S, np.zeros(128, np.float32))


@cute.kernel
def two_groups(gA: cute.Tensor, gOut: cute.Tensor):
    """Group 0 copies gA[0:128], group 1 gA[128:256]; after wait_group(1) only group 0 has landed."""
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    sA = smem.allocate_tensor(cutlass.Float32, cute.make_layout((128, 2)), 16)
    tiled = cute.make_tiled_copy_tv(_g2s(), cute.make_layout(32), cute.make_layout(4))
    thr = tiled.get_slice(tidx)
    for k in range(2):
        cute.copy(tiled, thr.partition_S(gA[None, k]), thr.partition_D(sA[None, k]))
        cute.arch.cp_async_commit_group()
    cute.arch.cp_async_wait_group(1)
    for i in range(4):
        gOut[tidx * 4 + i, 0] = sA[tidx * 4 + i, 0]
        gOut[tidx * 4 + i, 1] = sA[tidx * 4 + i, 1]
    cute.arch.cp_async_wait_group(0)
    for i in range(4):
        gOut[tidx * 4 + i, 2] = sA[tidx * 4 + i, 1]


def test_wait_group_n_leaves_the_newest_n_groups_in_flight():
    A = np.arange(256, dtype=np.float32).reshape(2, 128)
    out = np.full((3, 128), -1, np.float32)
    two_groups(from_dlpack(A.T, assumed_align=16), from_dlpack(out.T, assumed_align=16)).launch(
        grid=1, block=32, interpret=True)
    np.testing.assert_array_equal(out[0], np.arange(128))
    np.testing.assert_array_equal(out[1], np.zeros(128))  # group 1 still in flight
    np.testing.assert_array_equal(out[2], np.arange(128, 256))


@cute.kernel
def bad_dst(gA: cute.Tensor, gB: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    tiled = cute.make_tiled_copy_tv(_g2s(), cute.make_layout(32), cute.make_layout(4))
    thr = tiled.get_slice(tidx)
    cute.copy(tiled, thr.partition_S(gA), thr.partition_D(gB))


@cute.kernel
def wait_without_commit(gA: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    sA = smem.allocate_tensor(cutlass.Float32, cute.make_layout((128,)), 16)
    tiled = cute.make_tiled_copy_tv(_g2s(), cute.make_layout(32), cute.make_layout(4))
    thr = tiled.get_slice(tidx)
    cute.copy(tiled, thr.partition_S(gA), thr.partition_D(sA))
    cute.arch.cp_async_wait_group(0)


@cute.kernel
def misaligned(gA: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    sA = smem.allocate_tensor(cutlass.Float32, cute.make_layout((128,)), 16)
    tiled = cute.make_tiled_copy_tv(_g2s(), cute.make_layout(32), cute.make_layout(4))
    thr = tiled.get_slice(tidx)
    cute.copy(tiled, thr.partition_S(cute.domain_offset((1,), gA)), thr.partition_D(sA))
    cute.arch.cp_async_commit_group()


def _f32(n):
    return from_dlpack(np.zeros(n, np.float32), assumed_align=16)


def test_cp_async_into_global_memory_is_refused():
    with pytest.raises(TraceError, match=r"cp.async \(CopyG2SOp\).*destination must be a tensor in shared memory, "
                                         r"got one in global memory"):
        bad_dst(_f32(128), _f32(128)).launch(grid=1, block=32, interpret=True)


def test_wait_without_commit_is_refused():
    with pytest.raises(TraceError, match=r"cp_async_wait_group\(0\) at .*test_sgemm_cpasync.py:\d+: 1 cp.async "
                                         r"copies \(per thread\) were issued since the last .*commit_group"):
        wait_without_commit(_f32(128)).launch(grid=1, block=32, interpret=True)


def test_misaligned_cp_async_is_refused():
    with pytest.raises(TraceError, match=r"source of copy 0 is aligned to 4 bytes only; a 16-byte cp.async"):
        misaligned(_f32(128)).launch(grid=1, block=32, interpret=True)


def test_wait_group_outside_a_kernel_and_bad_barriers():
    with pytest.raises(TraceError, match="only available inside a @cute.kernel"):
        cute.arch.cp_async_commit_group()
    with pytest.raises(ValueError, match=r"barrier_id must be in \[0, 15\]"):
        pipeline.NamedBarrier(barrier_id=16, num_threads=64)
    with pytest.raises(ValueError, match="multiple of the warp size"):
        pipeline.NamedBarrier(barrier_id=1, num_threads=48)


@cute.kernel
def barrier_in_branch(gA: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    if tidx < 32:
        pipeline.NamedBarrier(barrier_id=1, num_threads=64).arrive_and_wait()
    gA[tidx] = 1.0


def test_named_barrier_reached_by_too_few_threads_is_an_error():
    with pytest.raises(LaunchError, match=r"NamedBarrier\(1, 64\).arrive_and_wait\(\) at .* is reached by 32 "
                                          r"threads of a block, not 64"):
        barrier_in_branch(_f32(64)).launch(grid=1, block=64, interpret=True)


def _stage_source():
    A, B, S = (from_dlpack(np.zeros(128, np.float32), assumed_align=16) for _ in range(3))
    with capture() as ks:
        stage_and_read(A, B, S, 20).launch(grid=1, block=32, interpret=True)
    return cuda.render(ks[0])


def test_cuda_of_cp_async_and_barriers():
    src = _stage_source()
    assert 'cp.async.ca.shared.global [%0], [%1], 16, %2;' in src
    assert "? 16u : 0u" in src  # the predicate is the src-size operand (zero-fill)
    assert 'asm volatile("cp.async.commit_group;\\n" ::: "memory");' in src
    assert 'asm volatile("cp.async.wait_group 0;\\n" ::: "memory");' in src
    assert 'asm volatile("bar.sync 1, 32;\\n" ::: "memory");' in src


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_cuda_of_cp_async_compiles_with_nvcc(tmp_path):
    f = tmp_path / "k.cu"
    f.write_text(_stage_source())
    r = subprocess.run(["nvcc", "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(f)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]


@cute.kernel
def ring_pipeline(gA: cute.Tensor, gOut: cute.Tensor, ntiles: cutlass.Constexpr):
    """A 3-stage cp.async ring in a runtime loop, as a GEMM mainloop runs one: Int32 stage counters
    changed in the loop and in a runtime branch, `x if runtime_cond else y`, runtime stage indices
    into shared memory. out[:, t] = 2 * A[:, t]."""
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    sA = smem.allocate_tensor(cutlass.Float32, cute.make_layout((128, 3)), 16)
    tiled = cute.make_tiled_copy_tv(_g2s(), cute.make_layout(32), cute.make_layout(4))
    thr = tiled.get_slice(tidx)
    tAg = thr.partition_S(gA)
    tAs = thr.partition_D(sA)
    write = cutlass.Int32(0)
    read = cutlass.Int32(0)
    fetch = cutlass.Int32(0)
    for _ in range(2):
        cute.copy(tiled, tAg[None, None, fetch], tAs[None, None, write])
        cute.arch.cp_async_commit_group()
        write = write + 1
        fetch = fetch + 1
    for t in cutlass.range(ntiles):
        cute.arch.cp_async_wait_group(1)
        cute.arch.sync_threads()
        for i in range(4):
            gOut[tidx * 4 + i, t] = sA[tidx * 4 + i, read] * 2.0
        cute.arch.sync_threads()
        f = fetch if fetch < ntiles else cutlass.Int32(0)
        cute.copy(tiled, tAg[None, None, f], tAs[None, None, write])
        cute.arch.cp_async_commit_group()
        fetch = fetch + 1
        write = write + 1
        if write == 3:
            write = cutlass.Int32(0)
        read = read + 1 if read + 1 < 3 else cutlass.Int32(0)


def _ring(ntiles=5):
    A = np.random.default_rng(0).random((ntiles, 128), dtype=np.float32)
    O = np.zeros((ntiles, 128), np.float32)
    ring_pipeline(from_dlpack(A.T, assumed_align=16), from_dlpack(O.T, assumed_align=16), ntiles).launch(
        grid=1, block=32, interpret=True)
    return A, O


def test_runtime_pipeline_with_int32_counters_and_runtime_stage_indices():
    from cutelab.kernel.launch.plan import last_launch
    from cutelab.kernel.ir.nodes import For, RegVar, walk
    from cutelab.kernel.ir.symbolic import atoms

    A, O = _ring(5)
    np.testing.assert_array_equal(O, 2 * A)
    ir = last_launch().ir
    assert any(isinstance(op, For) for op in walk(ir.body))  # a real loop, not unrolled
    from cutelab.kernel.instr.cpasync import CpAsyncCopy

    cps = [op for op in walk(ir.body) if isinstance(op, CpAsyncCopy)]
    assert any(isinstance(v, RegVar) for op in cps for v in atoms(op.dst_base))  # stage read from a register


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_runtime_pipeline_cuda_is_guarded_and_compiles(tmp_path):
    from cutelab.kernel.analysis.bounds import check_bounds
    from cutelab.kernel.launch.plan import last_launch

    _ring(5)
    ir = last_launch().ir
    check_bounds(ir, "gpu")  # register stage indices cannot be proved: guarded, not refused
    src = cuda.render(ir)
    assert "cl_fail(" in src and "for (int i0 = 0; i0 < 5; i0 += 1) {" in src
    f = tmp_path / "ring.cu"
    f.write_text(src)
    r = subprocess.run(["nvcc", "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "ring.cubin"), str(f)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]


@cute.kernel
def select_kernel(gA: cute.Tensor, gB: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    v = gA[tidx]
    k = 3 if 2 > 1 else 4  # static: plain Python
    gB[tidx] = v * k if v > 0.5 else -v  # runtime: a select


def test_ifexp_is_a_select_on_runtime_conditions():
    A = np.linspace(0, 1, 32, dtype=np.float32)
    B = np.zeros(32, np.float32)
    select_kernel(from_dlpack(A), from_dlpack(B)).launch(grid=1, block=32, interpret=True)
    np.testing.assert_array_equal(B, np.where(A > 0.5, A * 3, -A))


@cute.kernel
def moving_view(gA: cute.Tensor, gOut: cute.Tensor, ntiles: cutlass.Constexpr):
    """A view variable (a stage's slice of shared memory) reassigned inside a runtime loop, as
    sgemm's mainloop moves tCsA_p: the loop carries its offset in a register. A predicate fragment
    cleared in a runtime branch turns the last tile's copy into a zero-fill."""
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    sA = smem.allocate_tensor(cutlass.Float32, cute.make_layout((128, 2)), 16)
    tiled = cute.make_tiled_copy_tv(_g2s(), cute.make_layout(32), cute.make_layout(4))
    thr = tiled.get_slice(tidx)
    tAg = thr.partition_S(gA)
    tAs = thr.partition_D(sA)
    pred = cute.make_rmem_tensor(cute.make_layout((1, 1)), cutlass.Boolean)
    pred[0] = cutlass.Boolean(1)
    stage = cutlass.Int32(0)
    view = sA[None, 0]
    for t in cutlass.range(ntiles):
        if t == ntiles - 1:
            pred[0] = cutlass.Boolean(0)
        cute.copy(tiled, tAg[None, None, t], tAs[None, None, stage], pred=pred)
        cute.arch.cp_async_commit_group()
        cute.arch.cp_async_wait_group(0)
        cute.arch.sync_threads()
        view = sA[None, stage]
        for i in range(4):
            gOut[tidx * 4 + i, t] = view[tidx * 4 + i] + 1.0
        cute.arch.sync_threads()
        stage = stage + 1 if stage == 0 else cutlass.Int32(0)


def test_view_moved_in_a_runtime_loop_and_predicate_written_at_run_time():
    A = np.random.default_rng(1).random((4, 128), dtype=np.float32)
    O = np.zeros((4, 128), np.float32)
    moving_view(from_dlpack(A.T, assumed_align=16), from_dlpack(O.T, assumed_align=16), 4).launch(
        grid=1, block=32, interpret=True)
    want = A + 1
    want[3] = 1.0  # the last copy was predicated off: zero-filled
    np.testing.assert_array_equal(O, want)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_moving_view_cuda_compiles(tmp_path):
    from cutelab.kernel.analysis.bounds import check_bounds
    from cutelab.kernel.launch.plan import last_launch

    test_view_moved_in_a_runtime_loop_and_predicate_written_at_run_time()
    ir = last_launch().ir
    check_bounds(ir, "gpu")
    f = tmp_path / "view.cu"
    f.write_text(cuda.render(ir))
    r = subprocess.run(["nvcc", "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "view.cubin"), str(f)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]


@cute.kernel
def cg_copy(gA: cute.Tensor, gB: cute.Tensor, bits: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    sA = smem.allocate_tensor(cutlass.Float32, cute.make_layout((128,)), 16)
    op = cute.nvgpu.cpasync.CopyG2SOp(cute.nvgpu.cpasync.LoadCacheMode.GLOBAL)
    atom = cute.make_copy_atom(op, cutlass.Float32, num_bits_per_copy=bits)
    tiled = cute.make_tiled_copy_tv(atom, cute.make_layout(32), cute.make_layout(bits // 32))
    thr = tiled.get_slice(tidx)
    cute.copy(tiled, thr.partition_S(gA), thr.partition_D(sA))
    cute.arch.cp_async_commit_group()
    cute.arch.cp_async_wait_group(0)
    cute.arch.sync_threads()
    for i in range(4):
        gB[tidx * 4 + i] = sA[tidx * 4 + i]


def test_cp_async_cg_and_its_size_limit():
    A = np.arange(128, dtype=np.float32)
    B = np.zeros(128, np.float32)
    with capture() as ks:
        cg_copy(from_dlpack(A, assumed_align=16), from_dlpack(B, assumed_align=16), 128).launch(
            grid=1, block=32, interpret=True)
    assert "cp.async.cg.shared.global [%0], [%1], 16;" in cuda.render(ks[0])
    cg_copy(from_dlpack(A, assumed_align=16), from_dlpack(B, assumed_align=16), 128).launch(
        grid=1, block=32, interpret=True)
    np.testing.assert_array_equal(B, A)
    with pytest.raises(TraceError, match=r"cp.async.cg \(LoadCacheMode.GLOBAL\) copies 16 bytes only, the atom "
                                         r"copies 8"):
        cg_copy(from_dlpack(A, assumed_align=16), from_dlpack(B, assumed_align=16), 64).launch(
            grid=1, block=32, interpret=True)
