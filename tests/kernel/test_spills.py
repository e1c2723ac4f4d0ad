"""A kernel that ptxas compiles with register spills gets a warning that names it and the line
of the user's program that launched it (it runs, slower than it could); the report comes from
ptxas's verbose log (--ptxas-options=-v), kept with the cached image."""

from __future__ import annotations

import importlib
import shutil
import sys
import warnings
from pathlib import Path

import pytest

from cutelab.kernel.cuda.nvrtc import CompileResult, spill_report
from cutelab.kernel.cuda.fakegpu import fake_gpu
from cutelab.kernel.launch.plan import _report_spills

kcompile = importlib.import_module("cutelab.kernel.cuda.nvrtc")  # (cutelab.kernel.cuda.nvrtc is also cute.compile)

LOG = ("ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
       "ptxas info    : Used 255 registers, used 1 barriers, 7056 bytes stack frame, 7056 bytes spill stores, "
       "7056 bytes spill loads")


def test_spill_report_reads_ptxas_log():
    assert spill_report(LOG) == (7056, 7056, 255)
    assert spill_report(LOG.replace("7056 bytes spill", "0 bytes spill")) == (0, 0, 255)
    assert spill_report("") is None


def test_spills_warn_once_per_kernel_image():
    res = CompileResult(b"", "key-spills-test", False, 0.0, LOG)
    with pytest.warns(UserWarning, match=r"kernel k: ptxas spilled registers to local memory \(7056 bytes of spill "
                                         r"stores, 7056 bytes of spill loads per thread, 255 registers in use\)"):
        _report_spills("k", res)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _report_spills("k", res)  # once per process
        _report_spills("k", CompileResult(b"", "other", False, 0.0, LOG.replace("7056 bytes spill", "0 bytes spill")))


def test_an_nvrtc_without_ptxas_options_still_compiles(tmp_path, monkeypatch):
    monkeypatch.setenv("CUTELAB_CACHE_DIR", str(tmp_path))
    with fake_gpu() as g:
        real = g.nvrtc.nvrtcCompileProgram
        seen = []

        def compile_program(prog, n, opts):
            seen.append([o.decode() for o in opts])
            if kcompile.VERBOSE_PTXAS.encode() in opts:
                return (kcompile._INVALID_OPTION,)
            return real(prog, n, opts)

        g.nvrtc.nvrtcCompileProgram = compile_program
        res = kcompile.compile_cuda('extern "C" __global__ void k(float* a) { a[0] = 1.0f; }', "k", use_cache=False)
        assert res.cubin and res.log == ""
        assert [kcompile.VERBOSE_PTXAS in o for o in seen] == [True, False]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on the PATH")
def test_a_warpgroup_holding_a_128x256_accumulator_is_reported(tmp_path):
    """sm90_gemm with one MMA warpgroup over a 128x256 tile: 256 f32 accumulators per thread spill;
    with two warpgroups (the example's default for that tile) nothing is reported."""
    import torch

    import cutelab as cute
    from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor
    from cutelab.runtime import from_dlpack

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "gemm"))
    import sm90_gemm as s

    def compile_one(ws):
        A, B, C = (fake_cuda_tensor(torch.empty(512, 512, dtype=torch.bfloat16)) for _ in range(3))
        mA, mB, mC = (from_dlpack(x, assumed_align=16) for x in (A, B, C))
        gemm = s.HopperGemm(ab_dtype=s._DTYPES["bf16"], tile_mnk=(128, 256, 64), stages=3, num_ctas=4,
                            dynamic=True, warp_specialized=ws, mma_warpgroups=2 if ws else 1, epilogue="auto")
        cute.compile(gemm, mA, mB, mC)(mA, mB, mC)

    with fake_gpu(nvcc=shutil.which("nvcc"), cache_dir=str(tmp_path)):
        with pytest.warns(UserWarning, match=r"kernel kernel: ptxas spilled registers .* 255 registers in use") as rec:
            compile_one(False)
        assert rec[0].filename.endswith("sm90_gemm.py")  # the line that launched it
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            compile_one(True)
