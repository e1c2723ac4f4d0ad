"""CUTLASS's Hopper FP8 GEMMs, run unchanged by `cutelab run` to their own checks against torch:

- tests/compat/programs/dense_gemm_fp8_2xacc.py: e4m3 x e4m3 wgmma (m64nNk32) into a temporary f32
  accumulator that is added into the main one every `mma_promotion_interval` MMAs (two-level
  accumulation), scale_a * scale_b in the epilogue, persistent tile scheduler;
- tests/compat/programs/dense_gemm_fp8_gelu_persistent.py: the same FP8 mainloop with a GELU
  epilogue (cute.erf, or an 11th-degree polynomial), persistent.

Both are CUTLASS's files under examples/python/CuTeDSL/cute/hopper/kernel/dense_gemm/ as of CUTLASS
commit 7107b05535f8977f5ecb9d01ee203205b1fd9bc4, byte for byte (SHAs below). On the CPU a k32 step's
products are summed exactly and rounded to f32 once (wgmma.py); e4m3 outputs convert as torch's
float8_e4m3fn does (tests/test_fp8.py). Each run also prints the kernel's CUDA; nvcc (where installed)
compiles it for sm_90a.
"""
import os
import sys

import pytest

from compat_helpers import run_program, sha256_of

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernel"))
from sm90_util import nvcc_compiles  # noqa: E402  (nvcc for sm_90a, skipped where it is not installed)

SHAS = {"dense_gemm_fp8_2xacc.py": "1cd88f82d2e65442a9bf9b93c02c12a1d4ecfbcd99c8df0e825905c8bcbebd68",
        "dense_gemm_fp8_gelu_persistent.py": "fa379811cda500e384a1ed6246e2ce370c8848e6e3e8bcf92d4b622570e2dbae"}
E4M3 = "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 "


@pytest.mark.parametrize("name", sorted(SHAS))
def test_the_programs_are_cutlass_files_unchanged(name):
    assert sha256_of(name) == SHAS[name]


def test_fp8_2xacc_promotes_across_k_tiles_and_writes_e4m3(tmp_path):
    # K = 512: four 128-deep k-tiles of four k32 MMAs each, promoted every 4 MMAs; e4m3 output, scaled
    out, src = run_program(tmp_path, "dense_gemm_fp8_2xacc.py", "--mnkl", "128,128,512,1", "--tile_shape_mn", "64,64",
                           "--cluster_shape_mn", "1,1", "--c_dtype", "Float8E4M3FN", "--scale_a", "0.5",
                           "--scale_b", "2.0")
    assert "A dtype: Float8E4M3FN, B dtype: Float8E4M3FN, D dtype: Float8E4M3FN" in out
    assert E4M3 in src and "cl_f32_to_e4m3(" in src
    nvcc_compiles(src)


def test_fp8_2xacc_persistent_with_multicast(tmp_path):
    # 256 tiles over 132 SMs' worth of clusters (1, 2): CTAs take two tiles; promotion every 8 MMAs
    out, src = run_program(tmp_path, "dense_gemm_fp8_2xacc.py", "--mnkl", "1024,1024,256,1", "--tile_shape_mn",
                           "64,64", "--cluster_shape_mn", "1,2", "--mma_promotion_interval", "8")
    assert "Cluster Shape: (1, 2)" in out
    assert E4M3 in src and ".multicast::cluster" in src


@pytest.mark.parametrize("args", [
    ("--mnkl", "128,128,128,1", "--tile_shape_mn", "64,64"),  # erf GELU, f16 output
    ("--mnkl", "128,128,128,1", "--tile_shape_mn", "64,64", "--b_dtype", "Float8E5M2", "--gelu_kind", "poly11"),
])
def test_fp8_gelu_persistent(tmp_path, args):
    out, src = run_program(tmp_path, "dense_gemm_fp8_gelu_persistent.py", *args)
    if "Float8E5M2" in args:
        assert "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e5m2 " in src
    else:
        assert E4M3 in src and "erff(" in src
    nvcc_compiles(src)
