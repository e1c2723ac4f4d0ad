"""CUTLASS's Blackwell rmsnorm.py (examples/python/CuTeDSL/cute/blackwell/kernel/rmsnorm, with the reduce.py it
imports from kernel/reduce: warp, block and cluster reductions, the cluster one by inline-PTX mapa and
st.async to the peer CTAs' shared memory) and the cluster split-K of dense_gemm_persistent_dynamic.py
(``--cluster_split_k``: CTAs along the cluster's z split K and reduce their accumulators through DSMEM), carried
unchanged and run by ``cutelab run`` with CUTE_DSL_ARCH=sm_100a on the CPU interpreter to their own checks
against torch. rmsnorm.py compiles with placeholder pointers and calls with real ones
(cutelab.kernel.launch.pointers); its cluster size follows N: 1 up to N = 16K (bf16), 2, 4, ... 16 above."""

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
RMSNORM = "cute/blackwell/kernel/rmsnorm/rmsnorm.py"


def _run(name: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, CUTE_DSL_ARCH="sm_100a", OMP_NUM_THREADS="1",
               PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "cutelab", "run", str(PROGRAMS / name), *args],
                          capture_output=True, text=True, env=env, timeout=300, cwd=str(PROGRAMS))


def _passes(p: subprocess.CompletedProcess, check: str = "PASS") -> None:
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert p.stdout.rstrip().endswith("PASS") and check in p.stdout, p.stdout[-2000:]


@pytest.mark.parametrize("args,cluster", [
    (["--M", "6", "--N", "256"], 1),  # bf16 with weight: one CTA a row block, the block reduction (4 rows a CTA)
    (["--M", "5", "--N", "200", "--dtype", "Float16", "--no_weight"], 1),  # N not a multiple of the tile: predicated
    (["--M", "3", "--N", "32768"], 2),  # a 2-CTA cluster per row: the cluster reduction through DSMEM
])
def test_rmsnorm(args, cluster):
    p = _run(RMSNORM, *args)
    _passes(p, "Correctness check passed!")
    assert f"cluster_n: {cluster}" in p.stdout


@pytest.mark.parametrize("args", [
    # tf32, 2 CTAs along the cluster's z split the 4 k-tiles and exchange accumulator halves
    ["--mnkl", "128,128,128,1", "--mma_tiler_mn", "128,128", "--cluster_shape_mn", "1,1", "--cluster_split_k", "2"],
    # 2-CTA UMMA in 2x1x2 clusters, f16
    ["--mnkl", "256,128,128,1", "--mma_tiler_mn", "256,128", "--cluster_shape_mn", "2,1", "--use_2cta_instrs",
     "--cluster_split_k", "2", "--ab_dtype", "Float16", "--c_dtype", "Float16"],
])
def test_dense_gemm_cluster_split_k(args):
    p = _run("dense_gemm_persistent_dynamic.py", *args)
    _passes(p, "[DSL INFO] Cluster Split-K: 2")


@pytest.mark.parametrize("prog,args,want,nvcc", [
    (RMSNORM, ["--M", "4", "--N", "256"], ["cp.async.ca.shared.global", "cp.async.wait_group 0"], True),
    (RMSNORM, ["--M", "3", "--N", "32768"], ["mapa.shared::cluster.u32",
                                             "st.async.shared::cluster.mbarrier::complete_tx::bytes.f32",
                                             "barrier.cluster.arrive.relaxed"], True),
    # (nvcc takes minutes on this kernel: scripts/sm100_sass.py compiles it, with its SASS checked)
    ("dense_gemm_persistent_dynamic.py", ["--mnkl", "128,128,128,1", "--mma_tiler_mn", "128,128", "--cluster_shape_mn",
                                          "1,1", "--cluster_split_k", "2", "--ab_dtype", "Float16", "--c_dtype",
                                          "Float16"],
     ["tcgen05.mma.cta_group::1.kind::f16", "mapa.shared::cluster", "clusterlaunchcontrol.try_cancel"], False),
])
def test_cuda_for_sm_100a(tmp_path, prog, args, want, nvcc):
    out = tmp_path / "k.cu"
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import sm100_sass  # the program on the CPU interpreter, its last kernel printed as CUDA
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    sm100_sass.render(prog, args, out)
    src = out.read_text()
    for ptx in want:
        assert ptx in src, ptx
    if not nvcc:
        return
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed")
    c = subprocess.run([shutil.which("nvcc"), "-arch=sm_100a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(out)],
                       capture_output=True, text=True)
    assert c.returncode == 0, c.stderr[-4000:]
