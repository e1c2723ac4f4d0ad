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
from cutelab.errors import LaunchError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.analysis.guards import describe
from cutelab.kernel.cuda.errorword import ErrorWord
from cutelab.kernel.launch.plan import capture
from cutelab.kernel.analysis.bounds import check_bounds
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
    from cutelab.kernel.instr.cpasync import CpAsyncCopy

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


def test_error_word_attach_through_the_driver(monkeypatch):
    """ErrorWord.attach against a stand-in of cuda.bindings.driver: it allocates a mapped host word,
    writes its device address into the module's cl_err_ptr, and reads what a kernel writes there."""
    import ctypes

    from cutelab.kernel.cuda import driver

    from cutelab.kernel.cuda import errorword

    host = (ctypes.c_uint32 * 1)()
    written = {}

    class FakeDriver:
        CU_MEMHOSTALLOC_DEVICEMAP = 2

        def cuMemHostAlloc(self, size, flags):  # noqa: N802
            assert size == 4 and flags == 2
            return (0, ctypes.addressof(host))

        def cuMemHostGetDevicePointer(self, p, flags):  # noqa: N802
            return (0, p + 0x1000)

        def cuModuleGetGlobal(self, mod, name):  # noqa: N802
            assert mod == "module" and name == b"cl_err_ptr"
            return (0, 0xD0, 8)

        def cuMemcpyHtoD(self, dst, src, n):  # noqa: N802
            written[dst] = int(np.frombuffer(ctypes.string_at(src, n), dtype=np.uint64)[0])
            return (0,)

    monkeypatch.setattr(driver, "_driver", lambda: FakeDriver())
    w = errorword.ErrorWord.attach("module", {2: "k: the load from A at p.py:3 left the tensor"})
    assert written == {0xD0: ctypes.addressof(host) + 0x1000}
    w.check("at the next launch of k")
    host[0] = 2  # a kernel's cl_fail(2u)
    with pytest.raises(LaunchError, match=r"k: the load from A at p.py:3 left the tensor \(found at the next launch"):
        w.check("at the next launch of k")
    assert host[0] == 0


def test_check_errors_reports_a_recorded_word():
    from cutelab.kernel import check_errors

    w = ErrorWord.for_testing({1: "k: the store to B at p.py:9 left the tensor"})
    check_errors()
    w.word[0] = 1
    with pytest.raises(LaunchError, match=r"p.py:9 left the tensor \(found at cutelab.kernel.check_errors\(\)\)"):
        check_errors()
