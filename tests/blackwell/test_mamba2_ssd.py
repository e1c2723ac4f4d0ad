"""CUTLASS's Blackwell Mamba2 SSD (examples/python/CuTeDSL/cute/blackwell/kernel/attention/mamba2_ssd/mamba2_ssd.py
with the mamba2_ssd_reference.py and mamba2_ssd_tile_scheduler.py it imports, byte for byte as of CUTLASS commit
7107b05535f8977f5ecb9d01ee203205b1fd9bc4, in CUTLASS's folders) run by ``cutelab run`` with CUTE_DSL_ARCH=sm_100a on
the CPU interpreter to its own check against its torch reference (Y at atol 5e-2 / rtol 1e-2, the final state at
atol 5e-2 / rtol 1e-5; its outputs are of order 1 and 0.1 here, the largest errors 0.008 and 0.0005).

Warp-specialised: TMA loads of x, B, C and the deltas into PipelineTmaMultiConsumersAsync stages that UMMAs and
async threads both consume, four UMMA chains (intra-chunk and inter-chunk) with their accumulators in tensor
memory, the state carried from chunk to chunk. Two chunks of 128, two heads, two batches: the state passes once per
head.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "programs"
MAMBA = PROGRAMS / "cute" / "blackwell" / "kernel" / "attention" / "mamba2_ssd" / "mamba2_ssd.py"


def test_mamba2_ssd_two_chunks_two_heads():
    env = dict(os.environ, CUTE_DSL_ARCH="sm_100a", OMP_NUM_THREADS="1",
               PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "cutelab", "run", str(MAMBA), "--gbehcdln", "1,2,1,2,2,64,128,128",
                        "--no-print_rtol_stats"], capture_output=True, text=True, env=env, timeout=300,
                       cwd=str(PROGRAMS))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert p.stdout.rstrip().endswith("PASS"), p.stdout[-2000:]


def test_cuda_of_mamba2_ssd_for_sm_100a(tmp_path):
    """Its kernel printed as CUDA: the 16x256b tcgen05.ld of its accumulators and the 16x128b tcgen05.st (PTX's
    16-lane fragments, kernel/instr/tcgen05_ldst.py), its UMMAs; nvcc compiles it for sm_100a where installed."""
    import shutil

    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import sm100_sass
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    out = tmp_path / "k.cu"
    sm100_sass.render(str(MAMBA.relative_to(PROGRAMS)), ["--gbehcdln", "1,2,1,2,2,64,128,128", "--no-print_rtol_stats"],
                      out)
    src = out.read_text()
    for ptx in ("tcgen05.ld.sync.aligned.16x256b.x16.b32", "tcgen05.ld.sync.aligned.16x256b.x4.b32",
                "tcgen05.st.sync.aligned.16x128b.x16.b32", "tcgen05.mma.cta_group::1.kind::f16"):
        assert ptx in src, ptx
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    c = subprocess.run([nvcc, "-arch=sm_100a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(out)],
                       capture_output=True, text=True)
    assert c.returncode == 0, c.stderr[-4000:]
