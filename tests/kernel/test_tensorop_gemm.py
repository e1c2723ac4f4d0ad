"""CuTe DSL's Ampere tensorop_gemm.py (examples/dsl, imports and device lines changed) runs to its
own correctness check on the CPU interpreter, and the CUDA it generates compiles with nvcc."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
NVCC = shutil.which("nvcc")


def _run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, str(ROOT / "examples" / "dsl" / "tensorop_gemm.py"), *args],
                          capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.parametrize("args", [
    ("--mnkl", "128,128,64,1"),  # one 128x128 tile, two k-tiles (fewer than the pipeline's stages)
    ("--mnkl", "200,136,72,2", "--a_major", "k", "--b_major", "k", "--c_major", "m"),  # partial tiles, batch 2
    ("--mnkl", "136,200,72,1", "--ab_dtype", "BFloat16", "--a_major", "m", "--b_major", "k"),
    ("--mnkl", "128,64,96,1", "--acc_dtype", "Float16", "--b_major", "k", "--atom_layout_mnk", "2,1,1"),
], ids=["f16-tile", "f16-irregular-kk-m", "bf16-mk", "f16acc-2x1"])
def test_tensorop_gemm_example_on_the_cpu(args):
    p = _run(*args, "--benchmark", "none")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    assert p.stdout.rstrip().endswith("PASS")
    assert "Skip reference checking: False" in p.stdout


def test_tensorop_gemm_example_refuses_a_contiguous_extent_that_is_not_16_byte_aligned():
    # the example's own constraint (contiguous extents multiple of 8): refused, nothing written wrong
    p = _run("--mnkl", "100,72,40,1", "--benchmark", "none")
    assert p.returncode != 0
    # refused where the example marks the layout dynamic with divisibility 8 (as CuTe DSL's
    # mark_compact_shape_dynamic does), or else at the 16-byte copies
    assert ("16-byte aligned addresses" in p.stderr
            or "is not divisible by the divisibility 8" in p.stderr), p.stderr[-2000:]


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_tensorop_gemm_cuda_compiles_with_nvcc(tmp_path):
    code = f"""
import sys
sys.argv = ["tensorop_gemm"]
sys.path.insert(0, {str(ROOT / 'examples' / 'dsl')!r})
import tensorop_gemm as tg
import cutelab as cutlass
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
tg.run((128, 128, 64, 1), cutlass.BFloat16, cutlass.BFloat16, cutlass.Float32, "m", "n", "n", (2, 2, 1))
ir = last_launch().ir
open({str(tmp_path / 'k.cu')!r}, "w").write(cuda.render(ir))
print("smem", sum(s.bytes for s in ir.shared if s.dynamic))
"""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "smem 65536" in p.stdout  # 4 stages of 128x32 A and B tiles: dynamic shared memory above 48 KiB
    src = (tmp_path / "k.cu").read_text()
    for needle in ("extern __shared__ __align__(1024) unsigned char cl_dyn_smem[];",
                   "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
                   "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "cp.async.cg.shared.global"):
        assert needle in src, needle
    c = subprocess.run([NVCC, "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(tmp_path / "k.cu")],
                       capture_output=True, text=True, timeout=600)
    assert c.returncode == 0, c.stderr[-3000:]


@pytest.mark.gpu
def test_tensorop_gemm_example_on_gpu():
    # the example's default problem (256x256x512, f16 in, f32 accumulate, 4-stage pipeline, 64 KiB smem)
    p = _run("--benchmark", "none")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    assert p.stdout.rstrip().endswith("PASS")
