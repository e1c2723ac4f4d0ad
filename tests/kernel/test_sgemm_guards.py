"""Accesses the launch cannot prove in bounds (guards.py): the CPU interpreter refuses them as it
runs, naming the user's line; on the GPU they are guarded in the CUDA (tested, skipped, recorded in
the error word) instead of refused, and the host turns the word into a LaunchError."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import LaunchError
from cutelab.kernel import cuda
from cutelab.kernel.guards import ErrorWord, describe
from cutelab.kernel.launch import capture, check_bounds
from cutelab.runtime import from_dlpack


@cute.kernel
def shift_positive(gA: cute.Tensor, gB: cute.Tensor):
    """Thread t copies A[t] to B[t + 1] when A[t] > 0: whether the last thread stores out of
    bounds depends on the data (a register condition), which no launch-time check can know."""
    tidx, _, _ = cute.arch.thread_idx()
    v = gA[tidx]
    if v > 0.0:
        gB[tidx + 1] = v + gA[(tidx + 1) % 32]


def _ir():
    A, B = np.zeros(32, np.float32), np.zeros(32, np.float32)
    with capture() as ks:
        shift_positive(from_dlpack(A), from_dlpack(B)).launch(grid=1, block=32, interpret=True)
    return ks[0]


def test_cpu_refuses_the_out_of_bounds_store_naming_the_line():
    A = np.ones(32, np.float32)
    B = np.zeros(32, np.float32)
    with pytest.raises(LaunchError, match=r"shift_positive: store to gB: offsets "
                                          r"\[1, 32\] fall outside the tensor.s 32 elements; nothing was written "
                                          r"\(at .*test_sgemm_guards.py:\d+\)"):
        shift_positive(from_dlpack(A), from_dlpack(B)).launch(grid=1, block=32, interpret=True)
    assert not B.any()
    A[-1] = -1  # the last thread does not store: in bounds
    shift_positive(from_dlpack(A), from_dlpack(B)).launch(grid=1, block=32, interpret=True)
    np.testing.assert_array_equal(B, np.r_[0, np.full(30, 2, np.float32), 0])  # B[31] = A[30] + A[31] = 0


def test_gpu_launch_guards_what_it_cannot_prove():
    ir = _ir()
    check_bounds(ir, "gpu")  # no longer refused
    assert list(ir.guards.values()) == [1]  # the store; the loads are proved
    msg = ir.guard_infos[1]
    line = int(re.search(r"test_sgemm_guards.py:(\d+)", msg).group(1))
    src_line = open(__file__).read().splitlines()[line - 1]
    assert "gB[tidx + 1] = " in src_line
    assert msg.startswith("shift_positive: the store to gB at ") and "left the tensor's 32 elements" in msg
    src = cuda.render(ir)
    assert "__device__ unsigned int* cl_err_ptr;" in src and "cl_fail(1u);" in src
    assert re.search(r"if \(g\d+ >= 0ll && g\d+ < 32ll\) \{", src)


def test_proved_kernels_print_no_guard():
    ir = _ir()
    check_bounds(ir, "cpu")  # the CPU checks as it runs: nothing is guarded
    assert not ir.guards and "cl_err_ptr" not in cuda.render(ir)


def test_error_word_turns_into_a_launch_error():
    ir = _ir()
    check_bounds(ir, "gpu")
    w = ErrorWord.for_testing(ir.guard_infos)
    w.check("at the next launch of shift_positive")  # nothing recorded: no error
    w.word[0] = 1  # what a failing thread writes
    with pytest.raises(LaunchError, match=r"shift_positive: the store to gB at .*test_sgemm_guards.py:\d+ left the "
                                          r"tensor's 32 elements.*\(found at the next launch of shift_positive\)"):
        w.check("at the next launch of shift_positive")
    w.check("again")  # reported once, then cleared


def test_describe_names_an_op_access():
    from cutelab.kernel.cpasync import CpAsyncCopy

    ir = _ir()
    p = ir.params[0]
    op = CpAsyncCopy(p, 0, (0, 1, 2, 3), p, 0, (0, 1, 2, 3), None, "ca", "prog.py:3")
    assert describe(ir, op.accesses()[0]) .startswith("shift_positive: the CpAsyncCopy load from gA at prog.py:3 ")


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_guarded_cuda_compiles_with_nvcc(tmp_path):
    ir = _ir()
    check_bounds(ir, "gpu")
    f = tmp_path / "g.cu"
    f.write_text(cuda.render(ir))
    r = subprocess.run(["nvcc", "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "g.cubin"), str(f)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
