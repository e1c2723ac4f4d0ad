"""CUTLASS's Blackwell blockwise-scaled GEMM (examples/python/CuTeDSL/cute/blackwell/kernel/blockwise_gemm/
blockwise_gemm.py, byte for byte as of CUTLASS commit 7107b05535f8977f5ecb9d01ee203205b1fd9bc4) run by
``cutelab run`` with CUTE_DSL_ARCH=sm_100a on the CPU interpreter to its own check against torch (it prints PASS).

FP8 A and B with one Float32 scale per 128 of K (per row of A, per 128x128 block of B): the MMA warp accumulates
each k-tile into tensor memory, and the accumulator-update warps load it subtile by subtile inside
``cutlass.range(subtile_cnt)``, scale it and add it to a register fragment indexed by the loop's index
(``tTR_rAcc_final[(None, None, None, subtile_idx)]``: a slice at a runtime offset, kernel/frontend/rmem_index.py).
Two k-tiles, so the running sum is read and written back at each subtile twice."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "programs"
PROG = PROGRAMS / "cute" / "blackwell" / "kernel" / "blockwise_gemm" / "blockwise_gemm.py"


def test_blockwise_gemm_two_k_tiles_scaled_per_subtile():
    env = dict(os.environ, CUTE_DSL_ARCH="sm_100a", OMP_NUM_THREADS="1",
               PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "cutelab", "run", str(PROG), "--mnkl", "128,128,256,1"],
                       capture_output=True, text=True, env=env, timeout=300, cwd=str(PROGRAMS))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert p.stdout.rstrip().endswith("PASS"), p.stdout[-2000:]
