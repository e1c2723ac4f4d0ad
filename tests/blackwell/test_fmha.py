"""CUTLASS's Blackwell FMHA forward (examples/python/CuTeDSL/cute/blackwell/kernel/attention/fmha/fmha.py, with
the helpers/fmha_helpers.py it imports, both byte for byte as of CUTLASS commit
7107b05535f8977f5ecb9d01ee203205b1fd9bc4, kept in the same folders relative to each other so that its own
sys.path line finds the helpers) run by ``cutelab run`` with CUTE_DSL_ARCH=sm_100a on the CPU interpreter to its
own check against torch.

The kernel is warp-specialised (a TMA load warp, an MMA warp, two softmax warpgroups, a correction warpgroup):
Q*K^T UMMAs into tensor memory, the softmax reading S with tcgen05.ld and writing P (f16, packed into f32
registers) back with tcgen05.st, P*V UMMAs reading A (P) from tensor memory, the correction warpgroup rescaling O
and storing it with TMA. One Q tile of 128 rows against two K/V tiles of 128 with a causal mask aligned at the
bottom right (the second tile is masked; the runtime loop's trip count comes from the window's Int32 bounds),
checked at the program's --tolerance 0.01 (its default is 0.1, loose enough to pass with P scaled by 1.05).
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
FMHA = PROGRAMS / "cute" / "blackwell" / "kernel" / "attention" / "fmha" / "fmha.py"


def _run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, CUTE_DSL_ARCH="sm_100a", OMP_NUM_THREADS="1",
               PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "cutelab", "run", str(FMHA), *args], capture_output=True, text=True,
                          env=env, timeout=300, cwd=str(PROGRAMS))


def test_fmha_forward_causal_two_kv_tiles():
    p = _run("--q_shape", "1,128,1,32", "--k_shape", "1,256,1,32", "--is_causal", "--bottom_right_align",
             "--tolerance", "0.01")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert "Results verified successfully!" in p.stdout, p.stdout[-2000:]
    assert p.stdout.rstrip().endswith("PASS"), p.stdout[-2000:]
