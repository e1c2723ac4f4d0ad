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
