"""A register fragment's element at a runtime index (``frag[i]``, i a loop variable or a value in a
register), as CUTLASS's Blackwell dense_gemm_persistent_dynamic.py reduces its cluster split-K shards;
a shared-memory pointer moved by a runtime amount and loaded; ``cute.basic_copy_if`` inside a kernel.
On the CPU interpreter against numpy, and the CUDA the printer makes for them through nvcc."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab import utils
from cutelab.errors import LaunchError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.ir.fault import Fault
from cutelab.kernel.ir.nodes import walk
from cutelab.kernel.launch.plan import last_launch
from cutelab.numeric import Float32, Int32
from cutelab.runtime import from_dlpack

NVCC = shutil.which("nvcc")


@cute.kernel
def _rotate(A: cute.Tensor, Idx: cute.Tensor, O: cute.Tensor, shift: cutlass.Int32):
    # O[t, j] = A[t, (j + shift) % 8] through a fragment read at a loop index, then O[t, 8] = A[t, Idx[t]]
    # read at an index held in a register, and a fragment written at a runtime index
    t, _, _ = cute.arch.thread_idx()
    frag = cute.make_rmem_tensor((8,), Float32)
    for j in cutlass.range_constexpr(8):
        frag[j] = A[t, j]
    for j in range(8):
        O[t, j] = frag[(j + shift) % 8]
    k = Idx[t]
    O[t, 8] = frag[k]
    frag[(t + 1) % 8] = frag[0] + 100.0
    for j in cutlass.range_constexpr(8):
        O[t, 9 + j] = frag[j]


def test_reads_and_writes_at_runtime_indices_equal_numpy():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((16, 8)).astype(np.float32)
    idx = rng.integers(0, 8, 16).astype(np.int32)
    O = np.zeros((16, 17), np.float32)
    _rotate(from_dlpack(A), from_dlpack(idx), from_dlpack(O), 3).launch(grid=1, block=16)
    want = np.zeros_like(O)
    want[:, :8] = np.roll(A, -3, axis=1)
    want[:, 8] = A[np.arange(16), idx]
    w = A.copy()
    w[np.arange(16), (np.arange(16) + 1) % 8] = A[:, 0] + 100.0
    want[:, 9:] = w
    np.testing.assert_array_equal(O, want)
    ir = last_launch().ir
    # (j + shift) % 8 and (t + 1) % 8 are proved inside the fragment; Idx[t] is not: one range check
    assert sum(isinstance(op, Fault) for op in walk(ir.body)) == 1


def test_a_runtime_index_past_the_fragment_is_an_error_naming_the_line():
    A = np.zeros((4, 8), np.float32)
    idx = np.array([0, 7, 8, 1], np.int32)  # thread 2 reads frag[8]
    O = np.zeros((4, 17), np.float32)
    with pytest.raises(LaunchError, match=r"runtime index of a register fragment left its 8 registers at "
                                          r".*test_rmem_runtime_index.py:\d+"):
        _rotate(from_dlpack(A), from_dlpack(idx), from_dlpack(O), 0).launch(grid=1, block=4)


@cute.kernel
def _mailbox(O: cute.Tensor):
    # each thread writes its shard to shared memory; every thread sums the column it is given, read through
    # a pointer moved by a runtime amount (dense_gemm_persistent_dynamic.py's mailbox reads)
    t, _, _ = cute.arch.thread_idx()
    smem = utils.SmemAllocator()
    box = smem.allocate_array(Float32, num_elems=4 * 32)
    lay = cute.make_layout((32, 4), stride=(1, 32))
    for i in cutlass.range_constexpr(4):
        (box + lay((t, i))).store(Float32(t * 10 + i))
    cute.arch.sync_threads()
    acc = Float32(0.0)
    for i in range(4):
        acc = acc + (box + lay(((t + 1) % 32, i))).load()
    O[t] = acc


def test_a_shared_pointer_moved_at_run_time_loads_what_was_stored():
    O = np.zeros(32, np.float32)
    _mailbox(from_dlpack(O)).launch(grid=1, block=32)
    nxt = (np.arange(32) + 1) % 32
    np.testing.assert_array_equal(O, 4 * nxt * 10 + 6)


@cute.kernel
def _copy_if(A: cute.Tensor, O: cute.Tensor, lo: cutlass.Int32):
    t, _, _ = cute.arch.thread_idx()
    r = cute.make_rmem_tensor((8,), Float32)
    for j in cutlass.range_constexpr(8):
        r[j] = A[t, j]
    pred = cute.make_rmem_tensor((8,), cutlass.Boolean)
    for j in cutlass.range_constexpr(8):
        pred[j] = cutlass.Boolean(True)
    for j in cutlass.range_constexpr(8):
        if j < lo + t % 4:
            pred[j] = cutlass.Boolean(False)
    cute.basic_copy_if(pred, r, O[t, None])


def test_basic_copy_if_in_a_kernel_writes_where_the_predicate_holds():
    A = np.arange(64, dtype=np.float32).reshape(8, 8) + 1
    O = np.zeros((8, 8), np.float32)
    _copy_if(from_dlpack(A), from_dlpack(O), 2).launch(grid=1, block=8)
    keep = np.arange(8)[None, :] >= (2 + np.arange(8) % 4)[:, None]
    np.testing.assert_array_equal(O, np.where(keep, A, 0))


def test_basic_copy_if_in_a_kernel_refuses_a_change_of_width():
    A = np.ones((8, 8), np.float32)
    O = np.zeros((8, 8), np.int8)

    @cute.kernel
    def k(A: cute.Tensor, O: cute.Tensor):
        t, _, _ = cute.arch.thread_idx()
        pred = cute.make_rmem_tensor((8,), cutlass.Boolean)
        pred.fill(True)
        cute.basic_copy_if(pred, A[t, None], O[t, None])

    with pytest.raises(Exception, match="basic_copy_if: inside a kernel a predicated copy moves elements of one width"):
        k(from_dlpack(A), from_dlpack(O)).launch(grid=1, block=8)


@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
@pytest.mark.parametrize("which", ["rotate", "mailbox", "copy_if"])
def test_the_cuda_compiles(tmp_path, which):
    if which == "rotate":
        _rotate(from_dlpack(np.zeros((4, 8), np.float32)), from_dlpack(np.zeros(4, np.int32)),
                from_dlpack(np.zeros((4, 17), np.float32)), 1).launch(grid=1, block=4)
    elif which == "mailbox":
        _mailbox(from_dlpack(np.zeros(32, np.float32))).launch(grid=1, block=32)
    else:
        _copy_if(from_dlpack(np.zeros((8, 8), np.float32)), from_dlpack(np.zeros((8, 8), np.float32)),
                 1).launch(grid=1, block=8)
    src = cuda.render(last_launch().ir)
    if which == "rotate":
        assert "__trap()" in src  # the range check of Idx[t]
    cu = tmp_path / "k.cu"
    cu.write_text(src)
    p = subprocess.run([NVCC, "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(cu)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
