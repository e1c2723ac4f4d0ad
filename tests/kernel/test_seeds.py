"""The seeds' programs (examples/seeds), run as they are: on the CPU here (the interpreter is
chosen by itself), at the seeds' own sizes; they print the seed's output and pass
torch.testing.assert_close."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT / "examples" / "seeds"


def _run(name: str) -> tuple:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, str(SEEDS / f"{name}.py")], capture_output=True, text=True, env=env,
                       timeout=300)
    return p, time.perf_counter() - t0


def test_tv_layout_printf_seed():
    p, _ = _run("tv_layout_printf")
    assert p.returncode == 0, p.stderr
    text = re.sub(r"0x[0-9a-f]{16}", "0xADDR", p.stdout)
    import torch

    host = "gmem" if torch.cuda.is_available() else "generic"  # the tensor's address space (see below)
    assert text.startswith("TV Layout: ((2,2),(2,3)):((2,12),(1,4))\nTIDX: 0\n"
                           f"DATA: raw_ptr(0xADDR: i32, {host}, align<8>) o ((2,3)):((1,4)) = \n  ( 0, 1, 4, 5, 8, 9 )\n")
    assert f"TIDX: 3\nDATA: raw_ptr(0xADDR: i32, {host}, align<8>) o ((2,3)):((1,4)) = \n  ( 14, 15, 18, 19, 22, 23 )\n" in text


@pytest.mark.parametrize("name,expected", [
    ("copy_inner_partition", [
        "tiled_tensor_S = tensor<ptr<bf16, HOST, align<16>> o ((1,16),8192,512):((0,1),8192,16)>",
        "grid_dim = (16384, 1, 1)",
        "tile_S = tensor<ptr<bf16, HOST, align<16>> o (1,16):(0,1)>",
        "fragment = tensor<ptr<bf16, rmem, align<32>> o (1,16):(0,1)>",
    ]),
    ("copy_outer_partition", [
        "thr_layout = (8,32):(32,1)",
        "thr_tile_S = tensor<ptr<bf16, HOST> o (4,8):(65536,32)>",
        "fragment = tensor<ptr<bf16, rmem, align<32>> o (4,8):(8,1)>",  # CuTe DSL 4.8.1 follows the stride order
    ]),
    ("copy_tv_partition", [
        "tile_S = tensor<ptr<bf16, HOST, align<16>> o (128,64):(8192,1)>",
        "thr_val_tile_S = tensor<ptr<bf16, HOST, align<16>> o ((8,32),(8,4)):((8,32768),(1,8192))>",
        "val_tile_S = tensor<ptr<bf16, HOST, align<16>> o ((8,4)):((1,8192))>",
        "fragment = tensor<ptr<bf16, rmem, align<32>> o ((8,4)):((1,8))>",
    ]),
])
def test_copy_seed_runs_at_8192(name, expected):
    p, seconds = _run(name)
    assert p.returncode == 0, p.stderr
    import torch

    # the seed's torch tensors, printed on the host and in the kernel: CuTe DSL's address space is gmem for
    # GPU memory and generic for host memory (the seeds put their arrays on the CPU when there is no GPU)
    host = "gmem" if torch.cuda.is_available() else "generic"
    for line in expected:
        assert line.replace("HOST", host) in p.stdout
    assert "dtype=torch.bfloat16" in p.stdout
    assert seconds < 120, f"{name} took {seconds:.1f} s"
