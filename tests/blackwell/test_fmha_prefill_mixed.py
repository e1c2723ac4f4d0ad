"""CUTLASS's Blackwell mixed-input FMHA prefill (examples/python/CuTeDSL/cute/blackwell/kernel/attention/
mixed_input_fmha/mixed_input_fmha_prefill_d256.py and _d512.py with the prefill_helpers.py beside them and the helpers/ package,
byte for byte as of CUTLASS commit 7107b05535f8977f5ecb9d01ee203205b1fd9bc4, in CUTLASS's folders relative to each
other) run by ``cutelab run`` with CUTE_DSL_ARCH=sm_100a on the CPU interpreter to its own check against torch.

Q in bf16, K and V in int8 with bf16 scales per 256 of the head dimension (256): transform warps dequantise K and V
into shared memory, 2-CTA UMMAs (CtaGroup.TWO, M = 256, a 2x1 cluster) compute S = Q*K^T and O += P*V with P read
from tensor memory (each CTA's 128 rows from its own), the softmax stores P as bf16 packed in f32 words. The
problem shape is a Tuple[Int32, ...] argument, so its extents are runtime values as in CuTe DSL: the pair's second
CTA (rows 128-255, past s_q = 128) writes nothing, where static extents would give its output tile stride 0.
Three K/V tiles of 128 run the MMA warp's runtime loop once.

Head dim 512 keeps half of O in the columns of S: the softmax warps swap it out and back with tcgen05.ld/st through
a TMEM tensor partitioned with the load's register-side layout (thr_load.partition_D(tmem): each thread its own
lane). Its swap pipeline needs two K/V tiles at least: with one (s_k <= 128) the softmax warps wait for a second
swap commit that the MMA warp never issues, a deadlock on the GPU too, which the interpreter reports.
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
FOLDER = PROGRAMS / "cute" / "blackwell" / "kernel" / "attention" / "mixed_input_fmha"
D256 = FOLDER / "mixed_input_fmha_prefill_d256.py"
D512 = FOLDER / "mixed_input_fmha_prefill_d512.py"


def _run(prog: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, CUTE_DSL_ARCH="sm_100a", OMP_NUM_THREADS="1",
               PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "cutelab", "run", str(prog), *args], capture_output=True, text=True,
                          env=env, timeout=300, cwd=str(PROGRAMS))


def test_mixed_input_fmha_prefill_d256_three_kv_tiles():
    p = _run(D256, "--q_shape", "1,1,128,256", "--k_shape", "1,1,384,256", "--tolerance", "0.02")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert "Results verified successfully!" in p.stdout, p.stdout[-2000:]
    assert p.stdout.rstrip().endswith("PASS"), p.stdout[-2000:]


def test_mixed_input_fmha_prefill_d512_two_kv_tiles():
    p = _run(D512, "--q_shape", "1,1,128,512", "--k_shape", "1,1,256,512", "--tolerance", "0.02")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert "Results verified successfully!" in p.stdout, p.stdout[-2000:]
    assert p.stdout.rstrip().endswith("PASS"), p.stdout[-2000:]
