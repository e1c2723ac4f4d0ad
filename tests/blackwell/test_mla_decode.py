"""CUTLASS's Blackwell MLA decode (examples/python/CuTeDSL/cute/blackwell/kernel/attention/mla/mla_decode_fp16.py and
mla_decode_fp8.py, with the mla_helpers.py they import), byte for byte as of CUTLASS commit
7107b05535f8977f5ecb9d01ee203205b1fd9bc4 in CUTLASS's folders (their git blob ids are checked below), run by
``cutelab run`` with CUTE_DSL_ARCH=sm_100a on the CPU interpreter to the program's own check against torch.

What they need: the tile scheduler's grid shape is ``cute.arch.grid_dim()``, runtime Int32 values carried through
the scheduler's __extract_mlir_values__ (ir.nodes.DimVar); Q*K^T's UMMAs over k-blocks of a runtime loop inside the
128B swizzle atom (the descriptor's start moved by a runtime offset); P written through recast_ptr(sP.iterator,
swizzle_=None) and a composed layout with its own swizzle; the split-KV kernel, then the reduction of its splits."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "programs"
MLA = PROGRAMS / "cute" / "blackwell" / "kernel" / "attention" / "mla"

# git blob ids at CUTLASS commit 7107b05535f8977f5ecb9d01ee203205b1fd9bc4
BLOBS = {
    "mla_decode_fp16.py": "a9e7c102b3318c9ccf13a6184bd5319800955de9",
    "mla_decode_fp8.py": "778afee01263408b61ff0133cbfdd677f155ae97",
    "mla_helpers.py": "9a965cd2113a9c17bd45b68b37719c531c4061b2",
}

SMALL = ["--batch_size", "1", "--seq_len_k", "128", "--num_heads", "128"]


def _run(prog: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, CUTE_DSL_ARCH="sm_100a", OMP_NUM_THREADS="1",
               PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "cutelab", "run", str(MLA / prog), *args], capture_output=True,
                          text=True, env=env, timeout=600, cwd=str(PROGRAMS))


def test_the_programs_are_cutlass_files_unchanged():
    for name, blob in BLOBS.items():
        data = (MLA / name).read_bytes()
        assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob, name
        head = data[:400]  # CUTLASS's BSD-3-Clause license header
        assert b"Copyright (c) 2025 - 2026 NVIDIA CORPORATION & AFFILIATES. All rights reserved." in head, name
        assert b"SPDX-License-Identifier: BSD-3-Clause" in data[:1000], name


@pytest.mark.parametrize("prog", ["mla_decode_fp16.py", "mla_decode_fp8.py"])
def test_mla_decode_on_the_cpu(prog):
    p = _run(prog, *SMALL)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert "Results verified successfully!" in p.stdout and p.stdout.rstrip().endswith("PASS"), p.stdout[-2000:]


def test_cuda_of_the_split_kv_kernel_for_sm_100a(tmp_path):
    """The split-KV kernel printed as CUDA: its scheduler reads gridDim at run time, its UMMAs are tcgen05.mma
    kind::f16; nvcc compiles it for sm_100a where installed."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import sm100_sass
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    out = tmp_path / "k.cu"
    name = sm100_sass.render(str((MLA / "mla_decode_fp16.py").relative_to(PROGRAMS)), SMALL, out, "split_kv_kernel")
    assert name == "split_kv_kernel"
    src = out.read_text()
    for text in ("gridDim.x", "tcgen05.mma.cta_group::", "kind::f16"):
        assert text in src, text
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    c = subprocess.run([nvcc, "-arch=sm_100a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(out)],
                       capture_output=True, text=True)
    assert c.returncode == 0, c.stderr[-4000:]
