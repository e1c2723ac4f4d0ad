"""CUTLASS's Blackwell dense_gemm.py (programs/, unchanged) with 8-bit operands: e4m3 / e5m2 (UMMA
kind::f8f6f4) and s8 / u8 (kind::i8, s32 accumulators), run by ``cutelab run`` with CUTE_DSL_ARCH=sm_100a
on the CPU interpreter to its own check against torch; the CUDA cutelab prints for them compiles for
sm_100a (where nvcc is installed)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "programs"


def _run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, CUTE_DSL_ARCH="sm_100a", OMP_NUM_THREADS="1",
               PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "cutelab", "run", str(PROGRAMS / "dense_gemm.py"), *args],
                          capture_output=True, text=True, env=env, timeout=300, cwd=str(PROGRAMS))


@pytest.mark.parametrize("args", [
    ["--ab_dtype", "Float8E4M3FN", "--c_dtype", "Float16"],
    ["--ab_dtype", "Float8E5M2", "--c_dtype", "Float32"],
    ["--ab_dtype", "Int8", "--acc_dtype", "Int32", "--c_dtype", "Int32"],
    ["--ab_dtype", "Uint8", "--acc_dtype", "Int32", "--c_dtype", "Int8"],
    # a 2-CTA UMMA of e4m3 in a cluster of 2
    ["--ab_dtype", "Float8E4M3FN", "--c_dtype", "Float16", "--use_2cta_instrs", "--mma_tiler_mn", "256,128",
     "--cluster_shape_mn", "2,1", "--mnkl", "256,128,128,1"],
])
def test_dense_gemm_8bit(args):
    if "--mnkl" not in args:
        args = ["--mnkl", "128,128,128,1", *args]
    p = _run(*args)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert p.stdout.rstrip().endswith("PASS"), p.stdout[-2000:]


@pytest.mark.parametrize("ab,kind", [("Float8E4M3FN", "f8f6f4"), ("Int8", "i8")])
def test_dense_gemm_8bit_cuda_for_sm_100a(tmp_path, ab, kind):
    out = tmp_path / "k.cu"
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import sm100_sass  # the program on the CPU interpreter, its last kernel printed as CUDA
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    extra = ["--acc_dtype", "Int32", "--c_dtype", "Int32"] if ab == "Int8" else ["--c_dtype", "Float16"]
    sm100_sass.render("dense_gemm.py", ["--mnkl", "128,128,128,1", "--ab_dtype", ab, *extra], out)
    src = out.read_text()
    assert f"tcgen05.mma.cta_group::1.kind::{kind}" in src
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    c = subprocess.run([nvcc, "-arch=sm_100a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(out)],
                       capture_output=True, text=True)
    assert c.returncode == 0, c.stderr[-4000:]
