"""CUTLASS's Blackwell MoE grouped GEMM (examples/python/CuTeDSL/cute/blackwell/kernel/moe/torch_grouped_mm.py with
the moe_persistent_scheduler.py, moe_sched_extension.py and moe_utils.py it imports, and torch_scaled_grouped_mm.py
beside them, byte for byte as of CUTLASS commit 7107b05535f8977f5ecb9d01ee203205b1fd9bc4, BSD-3-Clause, in the same
folders relative to each other so that their own sys.path line finds the helpers) run by ``cutelab run`` with
CUTE_DSL_ARCH=sm_100a on the CPU interpreter to the program's own check (``torch.equal`` against
torch.nn.functional.grouped_mm, then it prints PASS).

A first kernel builds one TMA descriptor per expert from the tokens' tensors and the cumulative token counts
(make_tiled_tma_atom in the kernel of a tensor whose extent is read from memory, cpasync.copy_tensormap into a
byte workspace); the persistent GEMM kernel's TMA copies then go through those descriptors (tma_desc_ptr=), so
an expert's tile stops at its own rows: 2Dx3D (the forward: C's rows per expert) and 2Dx2D (the weight
gradient: A's and B's tokens per expert, the reduction axis; an expert of no tokens writes zeros)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "programs"
MOE = PROGRAMS / "cute" / "blackwell" / "kernel" / "moe"

# git blob ids at CUTLASS commit 7107b05535f8977f5ecb9d01ee203205b1fd9bc4
BLOBS = {
    "moe_persistent_scheduler.py": "6cf6c0c9a9ff790a2eda637c4af04fbed413d20f",
    "moe_sched_extension.py": "e07ce22b2ae1288352bceb5c3945f78d5894d370",
    "moe_utils.py": "e21d0389f56e84974c04806c3474ee86ffbb015c",
    "torch_grouped_mm.py": "d7eb2bb3e42ba71216a82c7c73e7026d30230c95",
    "torch_scaled_grouped_mm.py": "1c8405c087f253b615082acc5b1165db91d98c0d",
}


def test_the_programs_are_cutlass_s_own_byte_for_byte():
    for name, blob in BLOBS.items():
        data = (MOE / name).read_bytes()
        assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob, name


def _run(prog: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, CUTE_DSL_ARCH="sm_100a", OMP_NUM_THREADS="1",
               PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "cutelab", "run", str(MOE / prog), *args], capture_output=True,
                          text=True, env=env, timeout=600, cwd=str(PROGRAMS))


def _passes(p: subprocess.CompletedProcess) -> None:
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert p.stdout.rstrip().endswith("PASS"), p.stdout[-2000:]


def test_grouped_mm_forward_2dx3d_experts_of_uneven_tokens():
    # 30 routed tokens over 4 experts: 8, 8, 7, 7 rows; each expert's C tile is stored through its own descriptor
    p = _run("torch_grouped_mm.py", "--tokens", "15", "--top_k_select", "2", "--experts", "4", "--balance_route",
             "--hidden", "128", "--intermediate", "128")
    _passes(p)
    assert "A_tensor: (30, 128):(128, 1)" in p.stdout, p.stdout[-2000:]


def test_grouped_mm_weight_gradient_2dx2d_with_experts_of_no_tokens():
    # 8 tokens over 10 experts: 1 token for each of the first 8, none for the last 2 (their descriptors hold an
    # extent of 0 and are never used; their outputs are zeros)
    p = _run("torch_grouped_mm.py", "--scenario", "2Dx2D", "--tokens", "8", "--top_k_select", "1", "--experts", "10",
             "--balance_route", "--hidden", "128", "--intermediate", "128")
    _passes(p)
    assert "C_tensor: (10, 128, 128):(16384, 128, 1)" in p.stdout, p.stdout[-2000:]


def test_grouped_mm_forward_with_2cta_umma_in_2x1_clusters():
    # 256-row tiles of the UMMA pair; each expert's C tile stored through its descriptor
    p = _run("torch_grouped_mm.py", "--tokens", "64", "--top_k_select", "2", "--experts", "4", "--balance_route",
             "--hidden", "128", "--intermediate", "256", "--use_2cta_instrs", "--cluster_shape_mnk", "2,1,1",
             "--mma_tiler_mnk", "256,128,64")
    _passes(p)


def test_grouped_mm_weight_gradient_accumulated_into_the_output_by_tma_reduce():
    p = _run("torch_grouped_mm.py", "--scenario", "2Dx2D", "--grad_accumulate", "--tokens", "8", "--top_k_select", "2",
             "--experts", "4", "--balance_route", "--hidden", "128", "--intermediate", "128")
    _passes(p)


def test_scaled_grouped_mm_forward_mxfp8_scale_factors_tiled_onto_each_expert_s_rows_in_the_kernel():
    # 128 routed rows over 4 experts, 32 each (--balance_route: the program's random route is unseeded); each
    # expert's scale factors are the atom tiled onto its padded row count (tile_atom_to_shape_SF of a value the
    # kernel reads) at its padded offset; C through a descriptor per expert
    p = _run("torch_scaled_grouped_mm.py", "--tokens", "64", "--top_k_select", "2", "--experts", "4", "--balance_route",
             "--hidden", "128", "--intermediate", "128")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    # (it prints PASS, then its torch profiler's table, then DONE)
    assert "group_sizes=[32, 32, 32, 32]" in p.stdout and "Validation PASSED (exact match)\nPASS\n" in p.stdout, \
        p.stdout[-2000:]
