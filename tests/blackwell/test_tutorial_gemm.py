"""CUTLASS's Blackwell GEMMs, carried unchanged in programs/ (the tutorial's fp16_gemm_0.py to _6.py from
examples/python/CuTeDSL/cute/blackwell/tutorial/tutorial_gemm, dense_gemm.py, dense_gemm_persistent.py and
dense_gemm_persistent_dynamic.py from examples/python/CuTeDSL/cute/blackwell/kernel/dense_gemm, and tma_v0.py to
tma_v2.py of the TMA tutorial, dense_gemm_persistent_prefetch.py), run by
``cutelab run`` with
CUTE_DSL_ARCH=sm_100a on the CPU interpreter to their own checks against torch; the CUDA that
cutelab prints for them compiles for sm_100a (where nvcc is installed)."""

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


def _env() -> dict:
    return dict(os.environ, CUTE_DSL_ARCH="sm_100a", OMP_NUM_THREADS="1",
                PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _run(name: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cutelab", "run", str(PROGRAMS / name), *args],
                          capture_output=True, text=True, env=_env(), timeout=300, cwd=str(PROGRAMS))


def _passes(p: subprocess.CompletedProcess) -> None:
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert p.stdout.rstrip().endswith("PASS"), p.stdout[-2000:]


@pytest.mark.parametrize("mnk", ["128,256,64", "256,512,256"])  # one k-tile; 2x2 CTAs of 4 k-tiles through 4 stages
def test_fp16_gemm_0(mnk):
    p = _run("fp16_gemm_0.py", "--mnk", mnk)
    _passes(p)
    assert f"mnk:       [{mnk.replace(',', ', ')}]" in p.stdout


@pytest.mark.parametrize("mnk", ["256,256,64", "512,512,256"])  # one 2-CTA cluster; 4 clusters, 4 k-tiles
def test_fp16_gemm_1_two_cta(mnk):
    _passes(_run("fp16_gemm_1.py", "--mnk", mnk))


@pytest.mark.parametrize("prog", ["fp16_gemm_2.py", "fp16_gemm_3.py"])  # warp-specialised, TMA-store epilogue; persistent
@pytest.mark.parametrize("mnk", ["256,256,64", "512,512,256"])
def test_fp16_gemm_2_and_3(prog, mnk):
    _passes(_run(prog, "--mnk", mnk))


# the CLC dynamic persistent scheduler (2-CTA tiles, clusters of 2): 2 clusters, one resident at a time, so the
# first cancels the second and takes its tile, then finds none left
def test_fp16_gemm_3_1_clc():
    _passes(_run("fp16_gemm_3_1.py", "--mnk", "512,256,64"))


def test_fp16_gemm_4_preferred_cluster():  # one preferred 2x4 cluster (the fallback 2x1 checked, not launched)
    _passes(_run("fp16_gemm_4.py", "--mnk", "256,1024,64"))


def test_fp16_gemm_5_tma_prefetch():  # 2x2 clusters, A and B multicast in halves, TMA prefetches; 2 clusters
    _passes(_run("fp16_gemm_5.py", "--mnk", "512,128,64"))


def test_fp16_gemm_6_pdl():  # a dequantize kernel, then the GEMM with griddepcontrol, captured in a CUDA graph
    _passes(_run("fp16_gemm_6.py", "--mnk", "256,256,128"))


@pytest.mark.parametrize("prog", ["tma_v1.py", "tma_v2.py"])  # warp-specialised transpose; multi-stage, persistent
def test_tma_v1_v2(prog):
    p = _run(prog, "--M", "256", "--N", "256", "--num_warmup", "1", "--num_iters", "1")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert "Verification: PASSED" in p.stdout, p.stdout[-2000:]


def test_tma_v0():  # CUTLASS's Blackwell TMA tutorial, first step: a TMA load and a plain store
    p = _run("tma_v0.py", "--M", "256", "--N", "128", "--num_warmup", "1", "--num_iters", "1")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert "Verification: PASSED" in p.stdout, p.stdout[-2000:]


def test_fp16_gemm_0_rejects_what_it_rejects():
    p = _run("fp16_gemm_0.py", "--mnk", "100,256,64")  # the program's own argument check
    assert p.returncode != 0 and "m n must be divisible by mma_tiler_mn" in p.stderr


@pytest.mark.parametrize("args", [
    ["--mnkl", "128,128,64,1"],  # tf32 in, f32 out (the program's defaults)
    ["--mnkl", "256,256,128,2"],  # a persistent tile loop over 2 x 2 x 2 tiles, 4 k-tiles each
    ["--mnkl", "128,256,64,1", "--ab_dtype", "Float16", "--c_dtype", "Float16"],
    ["--mnkl", "128,128,64,1", "--ab_dtype", "BFloat16", "--mma_tiler_mn", "64,128"],  # 64-row UMMA
    # M-major A, N-major B, M-major C: each 128-element operand tile is two TMA boxes of the 128-byte swizzle span
    ["--mnkl", "128,128,64,1", "--ab_dtype", "Float16", "--a_major", "m", "--b_major", "n", "--c_major", "m"],
])
def test_dense_gemm(args):
    _passes(_run("dense_gemm.py", *args))


@pytest.mark.parametrize("args", [
    # the static persistent scheduler (its index in a register), tf32, the epilogue stored from registers
    ["--mnkl", "256,256,128,1", "--mma_tiler_mn", "128,128", "--cluster_shape_mn", "1,1"],
    # 2-CTA UMMA in 2x1 clusters, a batch of 2, the TMA-store epilogue
    ["--mnkl", "256,256,128,2", "--mma_tiler_mn", "256,128", "--cluster_shape_mn", "2,1", "--use_2cta_instrs",
     "--use_tma_store", "--ab_dtype", "Float16", "--c_dtype", "Float16"],
])
def test_dense_gemm_persistent(args):  # kernel/dense_gemm/dense_gemm_persistent.py (cutlass.utils.gemm.sm100 epilogues)
    _passes(_run("dense_gemm_persistent.py", *args))


@pytest.mark.parametrize("args", [
    ["--mnkl", "256,256,128,1", "--mma_tiler_mn", "128,128", "--cluster_shape_mn", "1,1"],
    # clusters rasterised along N (the grid's z is the linear cluster index): 8 tiles, 4 resident
    ["--mnkl", "256,512,128,1", "--mma_tiler_mn", "128,128", "--cluster_shape_mn", "1,1", "--raster_order", "n",
     "--ab_dtype", "Float16", "--c_dtype", "Float16"],
    # 2 clusters of 2 CTAs, one resident at a time: the first takes the second's tile through a CLC query
    ["--mnkl", "512,256,128,1", "--mma_tiler_mn", "256,128", "--cluster_shape_mn", "2,1", "--use_2cta_instrs",
     "--use_tma_store", "--ab_dtype", "Float16", "--c_dtype", "Float16"],
])
def test_dense_gemm_persistent_dynamic(args):  # the CLC dynamic persistent scheduler, PipelineClcFetchAsync
    _passes(_run("dense_gemm_persistent_dynamic.py", *args))


# kernel/dense_gemm/dense_gemm_persistent_prefetch.py: TMA prefetches ahead of the loads; its tf32 atoms are made for
# f32 tensors (internal_type=TFloat32), so the loads, prefetches and UMMAs take f32 memory as tf32
def test_dense_gemm_persistent_prefetch():
    _passes(_run("dense_gemm_persistent_prefetch.py", "--mnkl", "256,256,128,1", "--mma_tiler_mn", "128,128",
                 "--cluster_shape_mn", "1,1"))


def test_dense_gemm_2cta():
    _passes(_run("dense_gemm.py", "--mnkl", "256,128,64,1", "--use_2cta_instrs", "--mma_tiler_mn", "256,128",
                 "--cluster_shape_mn", "2,1"))


@pytest.mark.parametrize("prog,args", [("fp16_gemm_0.py", ["--mnk", "128,256,64"]),
                                       ("fp16_gemm_1.py", ["--mnk", "256,256,64"]),
                                       ("fp16_gemm_3.py", ["--mnk", "256,256,64"]),
                                       ("fp16_gemm_5.py", ["--mnk", "512,128,64"]),
                                       ("dense_gemm.py", ["--mnkl", "128,256,64,1", "--ab_dtype", "Float16",
                                                          "--c_dtype", "Float16"])])
def test_cuda_for_sm_100a(tmp_path, prog, args):
    out = tmp_path / "k.cu"
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import sm100_sass  # the program on the CPU interpreter, its last kernel printed as CUDA
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    sm100_sass.render(prog, args, out)
    src = out.read_text()
    g = 2 if prog in ("fp16_gemm_1.py", "fp16_gemm_3.py", "fp16_gemm_5.py") else 1  # the 2-CTA programs
    want = [f"tcgen05.alloc.cta_group::{g}.sync.aligned.shared::cta.b32", f"tcgen05.mma.cta_group::{g}.kind::f16",
            f"tcgen05.commit.cta_group::{g}.mbarrier::arrive::one.shared::cluster", "tcgen05.ld.sync.aligned.32x32b.x",
            "tcgen05.wait::ld.sync.aligned", f"tcgen05.relinquish_alloc_permit.cta_group::{g}.sync.aligned",
            f"tcgen05.dealloc.cta_group::{g}.sync.aligned.b32",
            "cp.async.bulk.tensor.3d" if prog == "dense_gemm.py" else "cp.async.bulk.tensor.2d"]
    if g == 2:
        want += [".multicast::cluster.cta_group::2 [%0]", ".multicast::cluster.b64 [%0], %1;"]
    if prog == "fp16_gemm_5.py":  # the CLC scheduler and TMA prefetches
        want += ["clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes"
                 ".multicast::cluster::all",
                 "clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128",
                 "cp.async.bulk.prefetch.tensor.2d.L2.global.tile"]
    if prog == "fp16_gemm_3.py":
        want += ["cp.async.bulk.tensor.2d.global.shared::cta.bulk_group", "cp.async.bulk.commit_group",
                 "cp.async.bulk.wait_group.read"]
    for ptx in want:
        assert ptx in src, ptx
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    c = subprocess.run([nvcc, "-arch=sm_100a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(out)],
                       capture_output=True, text=True)
    assert c.returncode == 0, c.stderr[-4000:]
