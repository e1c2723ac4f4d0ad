"""Helpers of the SM90 kernel tests: compile generated CUDA with nvcc for sm_90a when nvcc is here."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

import pytest


def nvcc_compiles(src: str) -> str:
    """Compile src to a cubin for sm_90a (ptxas checks the inline PTX); skip without nvcc. Returns
    ptxas's report (``-v``: registers, spills, its infos such as C7519)."""
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    with tempfile.TemporaryDirectory() as d:
        cu = os.path.join(d, "k.cu")
        with open(cu, "w") as f:
            f.write(src)
        p = subprocess.run([nvcc, "-arch=sm_90a", "-cubin", "-Xptxas", "-v", "-o", os.path.join(d, "k.cubin"), cu],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr[-4000:]
    return p.stderr
