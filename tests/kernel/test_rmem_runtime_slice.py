"""A register fragment's slice at a runtime offset, loaded and stored whole: ``frag[(None, s)]``
inside ``cutlass.range`` (CUTLASS's Blackwell blockwise_gemm.py scales its accumulator one subtile
per iteration; CuTe DSL keeps such a fragment in a stack array), a slice at an index held in a
register, slices that overlap. On the CPU interpreter against numpy, the range check, what stays
unsupported, and the CUDA through nvcc."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import LaunchError, TraceError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.ir.fault import Fault
from cutelab.kernel.ir.nodes import walk
from cutelab.kernel.launch.plan import last_launch
from cutelab.numeric import Float32, Int32
from cutelab.runtime import from_dlpack

NVCC = shutil.which("nvcc")


@cute.kernel
def _subtiles(A: cute.Tensor, S: cute.Tensor, Idx: cute.Tensor, O: cute.Tensor):
    # acc (8, 4) per thread; each runtime iteration s scales column s by S[t, s] and adds column s of the
    # running result (acc_final += acc * scale, per subtile, as blockwise_gemm.py does); then column Idx[t]
    # (an index held in a register) is copied to O's last 8 columns
    t, _, _ = cute.arch.thread_idx()
    acc = cute.make_rmem_tensor((8, 4), Float32)
    fin = cute.make_rmem_tensor((8, 4), Float32)
    sc = cute.make_rmem_tensor((8, 4), Float32)
    for j in cutlass.range_constexpr(32):
        acc[j] = A[t, j]
        fin[j] = Float32(j)
        sc[j] = S[t, j // 8]
    for s in cutlass.range(4):
        sub = fin[(None, s)]
        sub.store(acc[(None, s)].load() * sc[(None, s)].load() + sub.load())
    for j in cutlass.range_constexpr(32):
        O[t, j] = fin[j]
    col = fin[(None, Idx[t])].load()
    for j in cutlass.range_constexpr(8):
        O[t, 32 + j] = col[j]


def _want(A, S, idx):
    fin = np.arange(32, dtype=np.float32)[None, :] + A * np.repeat(S, 8, axis=1)
    return np.concatenate([fin, fin.reshape(-1, 4, 8)[np.arange(len(idx)), idx]], axis=1)


def test_slices_at_a_runtime_loop_index_and_a_register_index_equal_numpy():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((8, 32)).astype(np.float32)
    S = rng.standard_normal((8, 4)).astype(np.float32)
    idx = rng.integers(0, 4, 8).astype(np.int32)
    O = np.zeros((8, 40), np.float32)
    _subtiles(from_dlpack(A), from_dlpack(S), from_dlpack(idx), from_dlpack(O)).launch(grid=1, block=8)
    np.testing.assert_allclose(O, _want(A, S, idx), rtol=1e-6)
    # the loop index's four offsets (0, 8, 16, 24) are proved inside; Idx[t] is not: one range check
    assert sum(isinstance(op, Fault) for op in walk(last_launch().ir.body)) == 1


def test_a_register_index_past_the_fragment_is_an_error_naming_the_line():
    idx = np.array([0, 3, 4, 1], np.int32)  # thread 2 reads column 4 of 4
    args = [np.zeros((4, 32), np.float32), np.zeros((4, 4), np.float32), idx, np.zeros((4, 40), np.float32)]
    with pytest.raises(LaunchError, match=r"runtime offset of 8 elements of a register fragment left its 32 "
                                          r"registers at .*test_rmem_runtime_slice.py:\d+"):
        _subtiles(*map(from_dlpack, args)).launch(grid=1, block=4)


@cute.kernel
def _overlapping(O: cute.Tensor):
    # a (4, 5):(1, 1) fragment: 8 registers, slice s is registers s..s+3, so the slices overlap
    t, _, _ = cute.arch.thread_idx()
    f = cute.make_rmem_tensor(cute.make_layout((4, 5), stride=(1, 1)), Float32)
    for j in cutlass.range_constexpr(8):
        f[(j, 0) if j < 4 else (3, j - 3)] = Float32(t * 100)
    for s in cutlass.range(5):
        sub = f[(None, s)]
        sub.store(sub.load() + Float32(s + 1))
    for j in cutlass.range_constexpr(8):
        O[t, j] = f[(j, 0) if j < 4 else (3, j - 3)]


def test_overlapping_slices_at_a_runtime_index_each_see_the_last_write():
    O = np.zeros((2, 8), np.float32)
    _overlapping(from_dlpack(O)).launch(grid=1, block=2)
    want = np.zeros((2, 8), np.float32) + np.array([[0], [100]], np.float32)
    for s in range(5):
        want[:, s:s + 4] += s + 1
    np.testing.assert_array_equal(O, want)


def test_a_recast_of_a_slice_at_a_runtime_index_names_the_loop_and_the_line():
    @cute.kernel
    def k(O: cute.Tensor):
        f = cute.make_rmem_tensor((4, 4), Float32)
        f.fill(1.0)
        for s in cutlass.range(4):
            p = cute.recast_ptr(f[(None, s)].iterator, dtype=Int32)
            O[s] = p.load()

    with pytest.raises(TraceError, match=r"recast_ptr.* at .*test_rmem_runtime_slice.py:\d+: .*runtime offset.* "
                                         r"depends on the index of the runtime loop at "
                                         r".*test_rmem_runtime_slice.py:\d+"):
        k(from_dlpack(np.zeros(4, np.int32))).launch(grid=1, block=1)


@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
def test_the_cuda_compiles(tmp_path):
    args = [np.zeros((4, 32), np.float32), np.zeros((4, 4), np.float32), np.zeros(4, np.int32),
            np.zeros((4, 40), np.float32)]
    _subtiles(*map(from_dlpack, args)).launch(grid=1, block=4)
    src = cuda.render(last_launch().ir)
    assert "__trap()" in src  # the range check of Idx[t]
    cu = tmp_path / "k.cu"
    cu.write_text(src)
    p = subprocess.run([NVCC, "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(cu)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
