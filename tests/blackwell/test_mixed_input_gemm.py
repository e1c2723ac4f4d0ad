"""CUTLASS's Blackwell mixed-input GEMM (examples/python/CuTeDSL/cute/blackwell/kernel/mixed_input_gemm/
mixed_input_gemm.py with the mixed_input_host_utils.py it imports, byte for byte as of CUTLASS commit
7107b05535f8977f5ecb9d01ee203205b1fd9bc4,
in the same folders relative to each other so that its own sys.path line finds the helpers) run by
``cutelab run`` with CUTE_DSL_ARCH=sm_100a on the CPU interpreter to its own check against torch
(``torch.testing.assert_close`` at the program's tolerance, then it prints PASS).

A is Int4 (real 4-bit memory, two values a byte: ``cutlass.torch.cute_tensor_like`` packs it as CuTe DSL does, and
TMA copies the packed bytes) with one BFloat16 scale per row and 128 of K (``TransformMode.ConvertScale``); transform
warps read A from shared memory, convert and scale it (``cutlass.utils.mixed_input_helpers``) and store it where the UMMA
reads it: shared memory for an M-major A, tensor memory for a K-major A (the UMMA's A from TMEM).

Beside it grouped_mixed_input_gemm.py (same commit, unchanged): groups fused along N with their bounds in a
cumulative-sum tensor; a scheduler warp searches the group of each tile in a ``while`` on a ``cutlass.Boolean``
flag and hands the tile on through shared memory; the TMA warp moves B's tile to the group's start by
building a tensor from the TMA tensor's iterator (its coordinates) plus the offset, and the epilogue stores a
tile that crosses a group's bound with predicated SIMT stores at ``tTR_gC.iterator + runtime offset``.

And grouped_mixed_input_gemm_acc_scale.py (same commit, unchanged): groups fused along N as above, each k-block's
scale applied to the accumulator instead of to A; its transform warps walk two k-tiles an iteration with two
pipeline states rebound in a ``cutlass.range`` inside the tile ``while`` (``state0, state =
clone_and_advance(state)``), move state0 in a runtime branch for an odd k-tile count and read it after the loop:
carried by their count and position (kernel/frontend/carry_obj.py, cutelab's own protocol on PipelineState)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "programs"
PROG = PROGRAMS / "cute" / "blackwell" / "kernel" / "mixed_input_gemm" / "mixed_input_gemm.py"
GROUPED = PROG.parent / "grouped_mixed_input_gemm.py"
ACC_SCALE = PROG.parent / "grouped_mixed_input_gemm_acc_scale.py"


def _run(*args: str, prog: Path = PROG) -> subprocess.CompletedProcess:
    env = dict(os.environ, CUTE_DSL_ARCH="sm_100a", OMP_NUM_THREADS="1",
               PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "cutelab", "run", str(prog), *args], capture_output=True, text=True,
                          env=env, timeout=300, cwd=str(PROGRAMS))


def _passes(p: subprocess.CompletedProcess) -> None:
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert p.stdout.rstrip().endswith("PASS"), p.stdout[-2000:]


def test_mixed_input_gemm_int4_m_major_a_through_shared_memory():
    _passes(_run("--mnkl", "128,128,128,1"))


def test_mixed_input_gemm_int4_k_major_a_through_tensor_memory_tma_store():
    _passes(_run("--mnkl", "128,128,128,1", "--a_major", "k", "--use_tma_store"))


def test_grouped_mixed_input_gemm_three_groups_of_uneven_widths():
    # 3 groups fused along N (384 columns cut 152/120/112 by the program's seeded sizes): tiles cross group
    # bounds, so both the TMA store and the predicated SIMT store of C run; checked at --tolerance 0.01
    p = _run("--mnkl", "128,128,256,3", "--tolerance", "0.01", prog=GROUPED)
    _passes(p)
    assert "[0, 152, 272, 384]" in p.stdout, p.stdout[-2000:]


def test_grouped_mixed_input_gemm_acc_scale_odd_k_tiles_two_groups():
    # 3 k-tiles: one iteration of the two-k-tile loop, then the odd k-tile's branch; 2 groups
    _passes(_run("--mnkl", "128,128,384,2", "--tolerance", "0.01", prog=ACC_SCALE))
