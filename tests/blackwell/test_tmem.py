"""Tensor memory on the CPU interpreter: tcgen05.st then tcgen05.ld round trips, and each of the
hardware's rules broken once, each an error naming the rule and the user's line."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import LaunchError, TraceError
from cutelab.nvgpu import tcgen05
from cutelab.runtime import from_dlpack

_HERE = __file__.rsplit("/", 1)[-1]


def _line(text: str) -> int:
    with open(__file__) as f:
        for i, line in enumerate(f, 1):
            if text in line:
                return i
    raise AssertionError(text)


@cute.kernel
def roundtrip(X: cute.Tensor, Y: cute.Tensor, case: cutlass.Constexpr, ncols: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    smem = cutlass.utils.SmemAllocator()
    holder = smem.allocate_tensor(cutlass.Int32, cute.make_layout(1), 4)
    if cutlass.const_expr(case != "noalloc" and case != "relinquish"):
        if warp == 0:
            cute.arch.alloc_tmem(ncols, holder.iterator)  # ALLOC
    if cutlass.const_expr(case == "overuse"):
        if warp == 0:
            cute.arch.alloc_tmem(64, holder.iterator)  # SECOND ALLOC
    if cutlass.const_expr(case == "leak"):  # a second allocation, by another warp, that nothing frees
        holder2 = smem.allocate_tensor(cutlass.Int32, cute.make_layout(1), 4)
        if warp == 1:
            cute.arch.alloc_tmem(64, holder2.iterator)  # LEAKED ALLOC
    if cutlass.const_expr(case == "relinquish"):
        if warp == 0:
            cute.arch.relinquish_tmem_alloc_permit()
            cute.arch.alloc_tmem(32, holder.iterator)  # ALLOC AFTER RELINQUISH
    cute.arch.sync_threads()
    ptr = cute.arch.retrieve_tmem_ptr(cutlass.Float32, 16, holder.iterator)
    tT = cute.make_tensor(ptr, cute.make_layout((128, 32), stride=(65536, 1)))
    st = tcgen05.make_tmem_copy(cute.make_copy_atom(tcgen05.St32x32bOp(tcgen05.Repetition.x32), cutlass.Float32), tT)
    ld = tcgen05.make_tmem_copy(cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x16), cutlass.Float32), tT)
    me = tidx
    if cutlass.const_expr(case == "quarter"):
        me = tidx % 32  # every warp takes warp 0's lanes
    ts = st.get_slice(me)
    r = cute.make_rmem_tensor(ts.partition_S(X).shape, cutlass.Float32)
    r.store(ts.partition_S(X).load())
    cute.copy(st, r, ts.partition_D(tT))  # STORE
    cute.arch.fence_view_async_tmem_store()
    if cutlass.const_expr(case == "early_free"):  # another warp frees the columns, with no barrier before the load
        if warp == 3:
            cute.arch.dealloc_tmem(ptr, ncols)  # EARLY FREE
    tl = ld.get_slice(me)
    out = cute.make_rmem_tensor(tl.partition_D(Y).shape, cutlass.Float32)
    cute.copy(ld, tl.partition_S(tT), out)  # LOAD
    cute.arch.fence_view_async_tmem_load()
    tl.partition_D(Y).store(out.load() * 2.0)
    cute.arch.sync_threads()
    if cutlass.const_expr(case == "double_free"):
        if warp == 0:
            cute.arch.dealloc_tmem(ptr, ncols)
            cute.arch.dealloc_tmem(ptr, ncols)  # SECOND FREE
    elif cutlass.const_expr(case != "noalloc" and case != "relinquish" and case != "early_free"):
        if warp == 0:
            cute.arch.dealloc_tmem(ptr, ncols)


def _run(case: str = "ok", ncols: int = 32, blocks: int = 1):
    X = np.arange(blocks * 128 * 32, dtype=np.float32).reshape(blocks * 128, 32) / 7
    Y = np.zeros_like(X)
    for b in range(blocks):
        roundtrip(from_dlpack(X[b * 128:(b + 1) * 128]), from_dlpack(Y[b * 128:(b + 1) * 128]), case,
                  ncols).launch(grid=1, block=128)
    return X, Y


@pytest.mark.parametrize("ncols", [32, 64, 512])
def test_store_then_load_moves_every_lane_and_column(ncols):
    X, Y = _run(ncols=ncols)
    np.testing.assert_array_equal(Y, X * 2)


def test_column_count_must_be_a_power_of_two_of_at_least_32():
    for bad in (48, 16, 1024):
        with pytest.raises(TraceError) as e:
            _run(ncols=bad)
        msg = str(e.value)
        assert "power of two of at least 32" in msg and f"{_HERE}:{_line('# ALLOC')}" in msg, msg


def test_overuse_is_an_error_not_a_hang():
    with pytest.raises(LaunchError) as e:
        _run("overuse", ncols=512)
    msg = str(e.value)
    assert "no tensor-memory overuse" in msg and "holds 512 of the 512 columns" in msg, msg
    assert f"{_HERE}:{_line('# SECOND ALLOC')}" in msg, msg


def test_reading_columns_the_cta_did_not_allocate():
    with pytest.raises(LaunchError) as e:
        _run("noalloc")
    msg = str(e.value)
    assert "has not allocated" in msg and "holds no columns" in msg, msg
    assert f"{_HERE}:{_line('# STORE')}" in msg, msg


def test_reading_columns_another_warp_freed_names_the_deallocation():
    # CUTLASS's Blackwell fmha_bwd.py does this: its compute warps free TMEM while its reduce warps may still
    # read the last dQ, with nothing ordering the two
    with pytest.raises(LaunchError) as e:
        _run("early_free")
    msg = str(e.value)
    assert "has not allocated" in msg and "the CTA freed columns 0..31 before this access" in msg, msg
    assert "(cute.arch.dealloc_tmem at " in msg and f"{_HERE}:{_line('# EARLY FREE')})" in msg, msg
    assert f"{_HERE}:{_line('# LOAD')}" in msg, msg


def test_a_warp_touches_only_its_lane_quarter():
    with pytest.raises(LaunchError) as e:
        _run("quarter")
    msg = str(e.value)
    assert "lane quarter" in msg and "warp 1 of block (0,0,0) touches tensor-memory lane 0" in msg, msg
    assert f"{_HERE}:{_line('# STORE')}" in msg, msg


def test_freeing_columns_twice():
    with pytest.raises(LaunchError) as e:
        _run("double_free")
    msg = str(e.value)
    assert "deallocate only allocated tensor memory" in msg and f"{_HERE}:{_line('# SECOND FREE')}" in msg, msg


def test_tensor_memory_not_freed_before_the_cta_exits():
    with pytest.raises(LaunchError) as e:
        _run("leak")
    msg = str(e.value)
    assert "block (0,0,0) exited holding tensor memory: the 64 columns 64..127 allocated by " in msg, msg
    assert "cute.arch.alloc_tmem(64) at " in msg and f"{_HERE}:{_line('# LEAKED ALLOC')};" in msg, msg
    assert "rule: a CTA deallocates all the tensor memory it allocated" in msg and "more allocation" not in msg, msg


def test_no_allocation_after_relinquishing_the_permit():
    with pytest.raises(LaunchError) as e:
        _run("relinquish")
    msg = str(e.value)
    assert "after relinquish_tmem_alloc_permit" in msg and f"{_HERE}:{_line('# ALLOC AFTER RELINQUISH')}" in msg, msg


def test_tmem_allocator_checks_its_column_counts_at_trace_time():
    from cutelab.utils import TmemAllocator

    a = TmemAllocator.__new__(TmemAllocator)
    a._num_allocated_columns = 0
    for n, ok in ((32, True), (512, True), (96, False), (0, True), (1024, False)):
        assert a.check_valid_num_columns(n) is ok, n


def test_cuda_prints_the_tensor_memory_ops_for_sm_100a(tmp_path):
    import shutil
    import subprocess

    from cutelab.kernel.cuda import printer
    from cutelab.kernel.launch.plan import last_launch

    _run()
    src = printer.render(last_launch().ir)
    for ptx in ("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32", "tcgen05.st.sync.aligned.32x32b.x32.b32",
                "tcgen05.wait::st.sync.aligned", "tcgen05.ld.sync.aligned.32x32b.x16.b32", "tcgen05.wait::ld.sync.aligned",
                "tcgen05.dealloc.cta_group::1.sync.aligned.b32"):
        assert ptx in src, ptx
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    (tmp_path / "k.cu").write_text(src)
    c = subprocess.run([nvcc, "-arch=sm_100a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(tmp_path / "k.cu")],
                       capture_output=True, text=True)
    assert c.returncode == 0, c.stderr[-4000:]


def test_a_tcgen05_kernel_on_a_hopper_gpu_is_refused_before_nvrtc():
    """On an H100 (sm_90) a kernel with tcgen05 ops is refused by name and line, before NVRTC would
    fail on the PTX; the CPU interpreter runs it."""
    import torch

    from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor, fake_gpu

    X = fake_cuda_tensor(torch.zeros(128, 32))
    Y = fake_cuda_tensor(torch.zeros(128, 32))
    with fake_gpu() as g:
        with pytest.raises(LaunchError, match=rf"roundtrip: TmemAllocOp \(.*{_HERE}:{_line('# ALLOC')}\) needs sm_100a "
                                              r"\(Blackwell\), and this GPU is sm_90.*CUTELAB_INTERPRET=1"):
            roundtrip(from_dlpack(X), from_dlpack(Y), "ok", 32).launch(grid=1, block=128)
        assert g.nvrtc.compiles == 0


@cute.kernel
def own_lane(X: cute.Tensor, Y: cute.Tensor, Z: cute.Tensor, shift: cutlass.Constexpr):
    """Stores and loads through a TMEM tensor partitioned with the copy's register-side layout
    (``thr.partition_D(tmem)`` of a load: thread t's own lane, as CUTLASS's FMHA prefill d512 swaps O)."""
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    smem = cutlass.utils.SmemAllocator()
    holder = smem.allocate_tensor(cutlass.Int32, cute.make_layout(1), 4)
    if warp == 0:
        cute.arch.alloc_tmem(32, holder.iterator)
    cute.arch.sync_threads()
    ptr = cute.arch.retrieve_tmem_ptr(cutlass.Float32, 16, holder.iterator)
    tT = cute.make_tensor(ptr, cute.make_layout((128, 32), stride=(65536, 1)))
    ld = tcgen05.make_tmem_copy(cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x32), cutlass.Float32), tT)
    st = tcgen05.make_tmem_copy(cute.make_copy_atom(tcgen05.St32x32bOp(tcgen05.Repetition.x32), cutlass.Float32), tT)
    thr = ld.get_slice(tidx ^ shift)  # shift 1: each thread takes its neighbour's lane, in its own quarter
    tO = thr.partition_D(tT)  # one lane per thread
    r = cute.make_rmem_tensor(thr.partition_D(X).shape, cutlass.Float32)
    r.store(thr.partition_D(X).load())
    cute.copy(st, r, tO)  # OWN-LANE STORE
    cute.arch.fence_view_async_tmem_store()
    tl = ld.get_slice(tidx)  # read back through the usual partition
    out = cute.make_rmem_tensor(tl.partition_D(Y).shape, cutlass.Float32)
    cute.copy(ld, tl.partition_S(tT), out)
    tl.partition_D(Y).store(out.load())
    own = cute.make_rmem_tensor(thr.partition_D(Z).shape, cutlass.Float32)
    cute.copy(ld, tO, own)  # OWN-LANE LOAD
    thr.partition_D(Z).store(own.load() * 2.0)
    cute.arch.fence_view_async_tmem_load()
    cute.arch.sync_threads()
    if warp == 0:
        cute.arch.dealloc_tmem(ptr, 32)


def _own_lane(shift: int):
    X = np.arange(128 * 32, dtype=np.float32).reshape(128, 32) / 7
    Y, Z = np.zeros_like(X), np.zeros_like(X)
    own_lane(from_dlpack(X), from_dlpack(Y), from_dlpack(Z), shift).launch(grid=1, block=128)
    return X, Y, Z


def test_a_tmem_tensor_partitioned_per_thread_moves_the_threads_own_lane():
    X, Y, Z = _own_lane(0)
    np.testing.assert_array_equal(Y, X)  # the own-lane store wrote what the usual partition reads
    np.testing.assert_array_equal(Z, X * 2)


def test_a_per_thread_tmem_partition_of_another_lane_is_refused():
    with pytest.raises(LaunchError) as e:
        _own_lane(1)
    msg = str(e.value)
    assert "gives the address of tensor-memory lane 1" in msg and "rule: a 32x32b tcgen05.ld/st moves lane 0" in msg, msg
    assert f"{_HERE}:{_line('# OWN-LANE STORE')}" in msg, msg


@cute.kernel
def store_recast(Xh: cute.Tensor, Y: cute.Tensor):
    """Each thread's 64 f16 values, held in an f16 fragment, stored to TMEM as 32 f32 words through a
    recast view of the fragment (flash_attn.cute's SM100 backward stores its dS so), then loaded back."""
    tidx, _, _ = cute.arch.thread_idx()
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    smem = cutlass.utils.SmemAllocator()
    holder = smem.allocate_tensor(cutlass.Int32, cute.make_layout(1), 4)
    if warp == 0:
        cute.arch.alloc_tmem(32, holder.iterator)
    cute.arch.sync_threads()
    ptr = cute.arch.retrieve_tmem_ptr(cutlass.Float32, 16, holder.iterator)
    tT = cute.make_tensor(ptr, cute.make_layout((128, 32), stride=(65536, 1)))
    st = tcgen05.make_tmem_copy(cute.make_copy_atom(tcgen05.St32x32bOp(tcgen05.Repetition.x32), cutlass.Float32), tT)
    ld = tcgen05.make_tmem_copy(cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x32), cutlass.Float32), tT)
    ts = st.get_slice(tidx)
    rh = cute.make_rmem_tensor(cute.make_layout(64), cutlass.Float16)
    for i in cutlass.range_constexpr(64):
        rh[i] = Xh[tidx, i]
    words = cute.recast_tensor(rh, cutlass.Float32)
    src = cute.make_tensor(words.iterator, cute.make_layout(ts.partition_S(Y).shape))  # the registers' side
    cute.copy(st, src, ts.partition_D(tT))
    cute.arch.fence_view_async_tmem_store()
    tl = ld.get_slice(tidx)
    out = cute.make_rmem_tensor(tl.partition_D(Y).shape, cutlass.Float32)
    cute.copy(ld, tl.partition_S(tT), out)
    cute.arch.fence_view_async_tmem_load()
    tl.partition_D(Y).store(out.load())
    cute.arch.sync_threads()
    if warp == 0:
        cute.arch.dealloc_tmem(ptr, 32)


def test_a_store_reads_a_recast_view_of_a_fragment():
    Xh = (np.arange(128 * 64).reshape(128, 64) % 1000 / 8).astype(np.float16)
    Y = np.zeros((128, 32), np.float32)
    store_recast(from_dlpack(Xh), from_dlpack(Y)).launch(grid=1, block=128)
    np.testing.assert_array_equal(Y.view(np.float16), Xh)  # two f16 values to a word, the lower one first
