"""CUTLASS's Blackwell tutorial GEMMs (examples/python/CuTeDSL/cute/blackwell/tutorial/tutorial_gemm,
carried unchanged in programs/) run by ``cutelab run`` with CUTE_DSL_ARCH=sm_100a on the CPU
interpreter, to their own check against torch (torch.testing.assert_close, then "PASS")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "programs"


def _run(name: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, CUTE_DSL_ARCH="sm_100a", OMP_NUM_THREADS="1",
               PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "cutelab", "run", str(PROGRAMS / name), *args],
                          capture_output=True, text=True, env=env, timeout=300, cwd=str(PROGRAMS))


@pytest.mark.parametrize("mnk", ["128,256,64", "256,512,256"])  # one k-tile; 2x2 CTAs of 4 k-tiles through 4 stages
def test_fp16_gemm_0(mnk):
    p = _run("fp16_gemm_0.py", "--mnk", mnk)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert p.stdout.rstrip().endswith("PASS"), p.stdout[-2000:]
    assert f"mnk:       [{mnk.replace(',', ', ')}]" in p.stdout


def test_fp16_gemm_0_rejects_what_it_rejects():
    p = _run("fp16_gemm_0.py", "--mnk", "100,256,64")  # the program's own argument check
    assert p.returncode != 0 and "m n must be divisible by mma_tiler_mn" in p.stderr
