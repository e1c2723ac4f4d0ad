"""Non-tensor bulk copies (kernel/instr/bulk_copy.py): cute.copy with cpasync.CopyBulkG2SOp completing on
an mbarrier, and the inline-PTX bulk f32 reduce-add into global memory, as flash_attn.cute's SM90 backward
uses them (through quack's copy_utils): on the CPU and in CUDA compiled by nvcc."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.compat.dsl_names import ARCH_EXTRAS
from cutelab.errors import TraceError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
from cutelab.nvgpu import cpasync
from cutelab.runtime import from_dlpack

from sm90_util import nvcc_compiles

inline_ptx = ARCH_EXTRAS["inline_ptx"]  # cutlass.cute.arch.inline_ptx under cutelab run


@cute.kernel
def _bulk_rows(x: cute.Tensor, out: cute.Tensor, dq: cute.Tensor):
    # block b copies row b of x (32 floats, one bulk copy) into shared memory, then every thread reads it;
    # the shared row is then added to dq by the bulk reduce-add, twice (two adds land on the same elements)
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    s = smem.allocate_tensor(cutlass.Float32, cute.make_layout(32), 16)
    if tidx == 0:
        cute.arch.mbarrier_init(bars.iterator, 1)
    cute.arch.mbarrier_init_fence()
    cute.arch.sync_threads()
    atom = cute.make_copy_atom(cpasync.CopyBulkG2SOp(), cutlass.Float32)
    if tidx == 0:
        cute.arch.mbarrier_arrive_and_expect_tx(bars.iterator, 32 * 4)
    with cute.arch.elect_one():  # one thread of the warp issues it (the op is not elected itself)
        cute.copy(atom, x[bidx, None], s, mbar_ptr=bars.iterator)
    cute.arch.mbarrier_wait(bars.iterator, 0)
    out[bidx, tidx] = s[tidx]
    cute.arch.sync_threads()
    if tidx == 0:
        for _ in range(2):
            inline_ptx(
                "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [{$r0}], [{$r1}], {$r2};",
                read_only_args=[dq[bidx, None].iterator.llvm_ptr, s.iterator.toint(), cutlass.Int32(128)])
        cute.arch.cp_async_bulk_commit_group()
        cute.arch.cp_async_bulk_wait_group(0, read=True)


def _run():
    x = np.arange(3 * 32, dtype=np.float32).reshape(3, 32)
    out = np.zeros((3, 32), np.float32)
    dq = np.ones((3, 32), np.float32)
    _bulk_rows(from_dlpack(x, assumed_align=16), from_dlpack(out), from_dlpack(dq, assumed_align=16)).launch(
        grid=(3, 1, 1), block=(32, 1, 1))
    return x, out, dq


def test_a_bulk_copy_lands_in_shared_memory_and_completes_its_bytes():
    x, out, dq = _run()
    assert out.tolist() == x.tolist()
    assert dq.tolist() == (1 + 2 * x).tolist()


def test_the_cuda_of_the_bulk_copies_compiles():
    _run()
    src = cuda.render(last_launch().ir)
    assert "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" in src
    assert "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;" in src
    nvcc_compiles(src)


@cute.kernel
def _bad_bulk(x: cute.Tensor, how: cutlass.Constexpr):
    smem = cutlass.utils.SmemAllocator()
    bars = smem.allocate_tensor(cutlass.Int64, cute.make_layout(1), 8)
    s = smem.allocate_tensor(cutlass.Float32, cute.make_layout(32), 16)
    atom = cute.make_copy_atom(cpasync.CopyBulkG2SOp(), cutlass.Float32)
    if how == "strided":
        cute.copy(atom, x[None, 0], s, mbar_ptr=bars.iterator)
    elif how == "size":
        cute.copy(atom, cute.local_tile(x[0, None], (2,), (0,)), cute.local_tile(s, (2,), (0,)), mbar_ptr=bars.iterator)
    else:
        cute.copy(atom, x[0, None], s)


@pytest.mark.parametrize("how,words", [
    ("strided", r"the source \(32\):\(32\) is not contiguous"),
    ("size", r"8 bytes; a bulk copy moves a multiple of 16 bytes"),
    ("nobar", r"a bulk copy completes on an mbarrier: pass mbar_ptr="),
])
def test_bad_bulk_copies_are_refused_by_name(how, words):
    x = np.zeros((32, 32), np.float32)
    with pytest.raises(TraceError, match=r"kernel _bad_bulk: cute.copy with a bulk copy \(CopyBulkG2SOp\).*" + words):
        _bad_bulk(from_dlpack(x, assumed_align=16), how).launch(grid=(1, 1, 1), block=(32, 1, 1))

