"""examples/gemm/: our own GEMMs run to their own check on the CPU interpreter (and, marked gpu,
on a GPU)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SM80 = ROOT / "examples" / "gemm" / "sm80_gemm.py"


def _run(*args, timeout=900):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, str(SM80), *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


@pytest.mark.parametrize("dtype,mnk,extra", [("f16", "256,256,128", ()), ("bf16", "128,256,192", ()),
                                             ("f16", "128,128,160", ("--bk", "32", "--stages", "4"))])
def test_sm80_gemm_on_the_cpu(dtype, mnk, extra):
    p = _run("--dtype", dtype, "--mnk", mnk, *extra)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    assert "Results verified successfully!" in p.stdout and p.stdout.rstrip().endswith("PASS")


def test_sm80_gemm_refuses_sizes_that_are_not_whole_tiles():
    p = _run("--mnk", "200,256,128")
    assert p.returncode != 0
    assert "M=200, N=256 must be multiples of 128, 128" in p.stdout + p.stderr


@pytest.mark.gpu
def test_sm80_gemm_on_the_gpu():
    p = _run("--mnk", "1024,512,512")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    assert "Results verified successfully!" in p.stdout
