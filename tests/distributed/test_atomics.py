"""The memory-ordering instructions of distributed kernels (kernel/instr/atomics.py) on one process:
atomics from many threads on one word (each old value seen once), compare-and-swap, red, acquire
loads and release stores, fence.acq_rel; vector.bitcast and cute.all_ as Lamport's kernel uses
them; the CUDA each prints (compiled for sm_90a by nvcc when it is here); refusals."""
import os
import sys

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import LaunchError, TraceError
from cutelab.runtime import from_dlpack

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernel"))


@cute.kernel
def atomics_kernel(ctr: cute.Tensor, olds: cute.Tensor, lock: cute.Tensor, won: cute.Tensor, flag: cute.Tensor,
                   seen: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    t = bidx * 64 + tidx
    olds[t] = cute.arch.atomic_add(ctr.iterator, cutlass.Int32(1), sem="relaxed", scope="gpu")
    cute.arch.atomic_max(ctr.iterator + 1, t, sem="acq_rel", scope="sys")
    cute.arch.red(ctr.iterator + 2, cutlass.Int32(2), op="add", dtype="s32", sem="release", scope="sys")
    won[t] = cute.arch.atomic_cas(lock.iterator, cmp=cutlass.Int32(0), val=t + 1, sem="acquire", scope="sys")
    cute.arch.fence_acq_rel_sys()
    if tidx == 0:
        cute.arch.store(flag.iterator + bidx, bidx + 10, sem="release", scope="sys")
    cute.arch.sync_threads()
    seen[t] = cute.arch.load(flag.iterator + bidx, cutlass.Int32, sem="acquire", scope="sys")


def _buffers():
    return (np.zeros(3, np.int32), np.full(128, -1, np.int32), np.zeros(1, np.int32), np.full(128, -1, np.int32),
            np.zeros(2, np.int32), np.zeros(128, np.int32))


def test_atomics_on_the_cpu():
    ctr, olds, lock, won, flag, seen = bufs = _buffers()
    atomics_kernel(*[from_dlpack(b) for b in bufs]).launch(grid=(2, 1, 1), block=(64, 1, 1))
    assert sorted(olds.tolist()) == list(range(128))  # every thread saw a different old value
    assert ctr.tolist() == [128, 127, 256]
    assert (won == 0).sum() == 1 and lock[0] == np.nonzero(won == 0)[0][0] + 1  # one thread won the lock
    assert flag.tolist() == [10, 11] and seen.tolist() == [10] * 64 + [11] * 64


def test_atomics_print_as_ptx():
    from cutelab.kernel.cuda.fakegpu import FakeDeviceArray, fake_gpu
    from cutelab.kernel.launch.plan import last_launch

    with fake_gpu():
        atomics_kernel(*[from_dlpack(FakeDeviceArray(b)) for b in _buffers()]).launch(grid=(2, 1, 1), block=(64, 1, 1))
        src = last_launch().source
    for ptx in ("atom.relaxed.gpu.global.add.s32", "atom.acq_rel.sys.global.max.s32", "red.release.sys.global.add.s32",
                "atom.acquire.sys.global.cas.b32", "fence.acq_rel.sys;", "st.release.sys.global.b32",
                "ld.acquire.sys.global.b32"):
        assert ptx in src, ptx
    from sm90_util import nvcc_compiles

    nvcc_compiles(src)


def test_bitcast_and_all_mark_negative_zero():
    from cutelab.compat.cutlass_dsl import T
    from cutelab.compat.mlir.dialects import vector

    @cute.kernel
    def k(x: cute.Tensor, ok: cute.Tensor, back: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        frg = cute.make_fragment(cute.make_layout(4), cutlass.Float32)
        for i in cutlass.range_constexpr(4):
            frg[i] = x[tidx * 4 + i]
        v = frg.load()
        bits = cute.TensorSSA(vector.bitcast(T.vector(4, T.i32()), v), v.shape, cutlass.Int32)
        neg0 = cute.full_like(frg, cutlass.Int32(0x80000000), cutlass.Int32)
        ok[tidx] = cute.all_(cute.TensorSSA(bits != neg0, v.shape, cutlass.Boolean))
        f = cute.TensorSSA(vector.bitcast(T.vector(4, T.f32()), bits), v.shape, cutlass.Float32)
        for i in cutlass.range_constexpr(4):
            back[tidx * 4 + i] = f[i]

    x = np.array([1.0, 2.0, 3.0, 4.0, -0.0, 5.0, 6.0, 7.0, 0.0, 1.0, 1.0, 1.0], np.float32)
    ok = np.zeros(3, np.bool_)
    back = np.zeros(12, np.float32)
    k(from_dlpack(x), from_dlpack(ok), from_dlpack(back)).launch(grid=(1, 1, 1), block=(3, 1, 1))
    assert ok.tolist() == [True, False, True]  # -0.0 is the only value with bits 0x80000000
    assert back.tobytes() == x.tobytes()


@cute.kernel
def smem_atomics_kernel(out: cute.Tensor, olds: cute.Tensor):
    """Per block: every thread adds 1 to s[0] (atom.shared, its old value kept), red.add tidx into s[1],
    red.max into s[2]; then thread 0 writes the block's three words out."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    s = cutlass.utils.SmemAllocator().allocate_tensor(cutlass.Int32, cute.make_layout(3))
    if tidx < 3:
        s[tidx] = cutlass.Int32(0)
    cute.arch.sync_threads()
    olds[bidx * 64 + tidx] = cute.arch.atomic_add(s.iterator, cutlass.Int32(1), sem="relaxed", scope="cta")
    cute.arch.red(s.iterator + 1, tidx, op="add", dtype="s32")
    cute.arch.atomic_max(s.iterator + 2, tidx + bidx * 100)
    cute.arch.sync_threads()
    if tidx < 3:
        out[bidx * 3 + tidx] = s[tidx]


def test_atomics_on_shared_memory():
    """atom/red on this CTA's shared memory: each block's own array (CPU), atom.shared/red.shared (CUDA)."""
    from cutelab.kernel.cuda.fakegpu import FakeDeviceArray, fake_gpu
    from cutelab.kernel.launch.plan import last_launch

    out, olds = np.full(6, -1, np.int32), np.full(128, -1, np.int32)
    smem_atomics_kernel(from_dlpack(out), from_dlpack(olds)).launch(grid=(2, 1, 1), block=(64, 1, 1))
    assert out.tolist() == [64, sum(range(64)), 63, 64, sum(range(64)), 163]
    assert sorted(olds[:64].tolist()) == list(range(64)) and sorted(olds[64:].tolist()) == list(range(64))
    with fake_gpu():
        smem_atomics_kernel(from_dlpack(FakeDeviceArray(out)), from_dlpack(FakeDeviceArray(olds))).launch(
            grid=(2, 1, 1), block=(64, 1, 1))
        src = last_launch().source
    for ptx in ("atom.relaxed.cta.shared.add.s32", "red.shared.add.s32", "atom.shared.max.s32"):
        assert ptx in src, ptx
    assert "__cvta_generic_to_shared" in src
    from sm90_util import nvcc_compiles

    nvcc_compiles(src)


def test_refusals():
    @cute.kernel
    def rmem_atomic(x: cute.Tensor):
        r = cute.make_fragment(cute.make_layout(4), cutlass.Int32)
        cute.arch.atomic_add(r.iterator, cutlass.Int32(1))

    with pytest.raises(TraceError, match=r"atomic_add: only global or shared memory"):
        rmem_atomic(from_dlpack(np.zeros(4, np.int32))).launch(grid=(1, 1, 1), block=(1, 1, 1))

    @cute.kernel
    def wrong_type(x: cute.Tensor):
        cute.arch.red(x.iterator, cutlass.Int32(1), op="add", dtype="f32")

    with pytest.raises(TraceError, match=r"cute.arch.red: the pointer is to Int32, the instruction asks for f32"):
        wrong_type(from_dlpack(np.zeros(4, np.int32))).launch(grid=(1, 1, 1), block=(1, 1, 1))

    @cute.kernel
    def bad_sem(x: cute.Tensor):
        cute.arch.store(x.iterator, cutlass.Int32(1), sem="acquire", scope="sys")

    with pytest.raises(TraceError, match=r"cute.arch.store: sem='acquire' is not one of"):
        bad_sem(from_dlpack(np.zeros(4, np.int32))).launch(grid=(1, 1, 1), block=(1, 1, 1))

    from cutelab.utils import distributed

    @cute.kernel
    def multimem(x: cute.Tensor):
        distributed.multimem_red_add1(x.iterator, order="release", scope="sys")

    with pytest.raises(LaunchError, match=r"multimem.red.release.sys.global.add.s32 on x, which is not multicast "
                                          r"memory"):  # a multicast address comes from symmetric memory (test_ranks)
        multimem(from_dlpack(np.zeros(4, np.int32))).launch(grid=(1, 1, 1), block=(1, 1, 1))


@cute.kernel
def volatile_copy(x: cute.Tensor, y: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    ld = cute.make_copy_atom(cute.nvgpu.CopyG2ROp(), cutlass.Float32, num_bits_per_copy=128,
                             memory_scope=cute.nvgpu.MemoryScope.SYS, memory_order=cute.nvgpu.MemoryOrder.VOLATILE)
    st = cute.make_copy_atom(cute.nvgpu.CopyR2GOp(), cutlass.Float32, num_bits_per_copy=128,
                             memory_scope=cute.nvgpu.MemoryScope.SYS, memory_order=cute.nvgpu.MemoryOrder.RELEASE)
    gx = cute.local_tile(x, (4,), (tidx,))
    gy = cute.local_tile(y, (4,), (tidx,))
    frg = cute.make_fragment(cute.make_layout(4), cutlass.Float32)
    cute.copy(ld, gx, frg)
    v = frg.load()
    from cutelab.compat.cutlass_dsl import T
    from cutelab.compat.mlir.dialects import vector

    bits = cute.TensorSSA(vector.bitcast(T.vector(4, T.i32()), v), v.shape, cutlass.Int32)
    frg.store(cute.TensorSSA(vector.bitcast(T.vector(4, T.f32()), bits), v.shape, cutlass.Float32) + 1.0)
    cute.copy(st, frg, gy)


def test_copy_atoms_with_a_memory_order():
    """CopyG2ROp/CopyR2GOp with memory_order volatile/release and 128 bits per copy are one
    ld.volatile.v4 / st.release.sys.v4 of 4 elements (cute.copy refuses a 128-bit atom on addresses
    not known to be 16-byte aligned)."""
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    volatile_copy(from_dlpack(x, assumed_align=16), from_dlpack(y, assumed_align=16)).launch(grid=(1, 1, 1),
                                                                                   block=(4, 1, 1))
    np.testing.assert_array_equal(y, x + 1)
    from cutelab.kernel.cuda.fakegpu import FakeDeviceArray, fake_gpu
    from cutelab.kernel.launch.plan import last_launch

    with fake_gpu():
        volatile_copy(from_dlpack(FakeDeviceArray(x), assumed_align=16),
                      from_dlpack(FakeDeviceArray(y), assumed_align=16)).launch(grid=(1, 1, 1),
                                                                                               block=(4, 1, 1))
        src = last_launch().source
    assert src.count("ld.volatile.global.v4.b32") == 1 and src.count("st.release.sys.global.v4.b32") == 1, src
    assert "ld.volatile.global.b32" not in src and "st.release.sys.global.b32" not in src, src
    from sm90_util import nvcc_compiles

    nvcc_compiles(src)


@pytest.mark.gpu
def test_atomics_and_ordered_copies_on_the_gpu():
    """The same kernels on the device (NVRTC): the same results as on the CPU."""
    torch = pytest.importorskip("torch")
    cute.cuda.initialize_cuda_context()
    bufs = [torch.from_numpy(b).cuda() for b in _buffers()]
    atomics_kernel(*[from_dlpack(b) for b in bufs]).launch(grid=(2, 1, 1), block=(64, 1, 1))
    torch.cuda.synchronize()
    ctr, olds, lock, won, flag, seen = [b.cpu().numpy() for b in bufs]
    assert sorted(olds.tolist()) == list(range(128))
    assert ctr.tolist() == [128, 127, 256]
    assert (won == 0).sum() == 1 and lock[0] == np.nonzero(won == 0)[0][0] + 1
    assert flag.tolist() == [10, 11] and seen.tolist() == [10] * 64 + [11] * 64
    x = torch.arange(16, dtype=torch.float32, device="cuda")
    y = torch.zeros(16, dtype=torch.float32, device="cuda")
    volatile_copy(from_dlpack(x, assumed_align=16), from_dlpack(y, assumed_align=16)).launch(grid=(1, 1, 1),
                                                                                           block=(4, 1, 1))
    torch.cuda.synchronize()
    assert torch.equal(y, x + 1)


def test_spin_locks_of_cutlass_utils_distributed():
    """red_add1, then the spin-lock waits (atom.cas loops, an ld loop) as the TMA all-reduce uses them."""
    from cutelab.utils import distributed

    @cute.kernel
    def k(flag: cute.Tensor, out: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        if tidx == 0:
            distributed.red_add1(flag.iterator, order="release", scope="sys")
            distributed.red_add1(flag.iterator, order="release", scope="sys")
            distributed.spin_lock_atom_cas_relaxed_wait(flag.iterator, expected_val=2, reset_val=0, scope="sys")
            out[0] = flag[0]  # reset by the wait
            distributed.red_add1(flag.iterator + 1, order="relaxed", scope="gpu")
            distributed.spin_lock_ld_lt_relaxed_wait(flag.iterator + 1, expected_val=1, scope="gpu")
            distributed.spin_lock_atom_cas_acquire_wait(flag.iterator + 1, expected_val=1, reset_val=5, scope="sys")
            out[1] = flag[1]

    flag = np.zeros(2, np.int32)
    out = np.full(2, -1, np.int32)
    k(from_dlpack(flag), from_dlpack(out)).launch(grid=(1, 1, 1), block=(32, 1, 1))
    assert out.tolist() == [0, 5] and flag.tolist() == [0, 5]
    from cutelab.kernel.cuda.fakegpu import FakeDeviceArray, fake_gpu
    from cutelab.kernel.launch.plan import last_launch

    with fake_gpu():
        k(from_dlpack(FakeDeviceArray(flag)), from_dlpack(FakeDeviceArray(out))).launch(grid=(1, 1, 1),
                                                                                        block=(32, 1, 1))
        src = last_launch().source
    assert "atom.relaxed.sys.global.cas.b32" in src and "ld.relaxed.gpu.global.b32" in src
    from sm90_util import nvcc_compiles

    nvcc_compiles(src)
