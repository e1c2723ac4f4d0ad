"""scripts/record: the harness that proves a refactoring byte-identical records every printed
kernel and every interpreter result of a run, and compare.py tells two recordings apart."""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PROGRAM = """
import numpy as np
import cutelab as cute
from cutelab.runtime import from_dlpack

@cute.kernel
def k(A: cute.Tensor, B: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    B[tidx] = A[tidx] * {factor}

A = np.arange(32, dtype=np.float32); B = np.zeros_like(A)
k(from_dlpack(A), from_dlpack(B)).launch(grid=1, block=32)
assert (B == A * {factor}).all()
"""


def _record(tmp_path, name, factor):
    out = tmp_path / name
    env = dict(os.environ, CUTELAB_RECORD=str(out),
               PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "src"), os.path.join(ROOT, "scripts", "record")]))
    r = subprocess.run([sys.executable, "-c", PROGRAM.format(factor=factor)], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return out


def _compare(a, b):
    return subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "record", "compare.py"), str(a), str(b)],
                          capture_output=True, text=True, timeout=60)


def test_a_launch_is_recorded_with_its_cuda_and_its_result(tmp_path):
    out = _record(tmp_path, "a", 2.0)
    lines = [json.loads(x) for f in out.glob("*.jsonl") for x in f.read_text().splitlines()]
    cpu = [e for e in lines if "out" in e]
    assert len(cpu) == 1 and cpu[0]["kernel"] == "k" and len(cpu[0]["cuda"]) == 40
    text = (out / "cuda" / f"{cpu[0]['cuda']}.cu").read_text()
    assert 'extern "C" __global__' in text and "* 2.0f" in text  # the kernel as the printer prints it


def test_compare_tells_same_runs_from_different_ones(tmp_path):
    a, b, c = _record(tmp_path, "a", 2.0), _record(tmp_path, "b", 2.0), _record(tmp_path, "c", 3.0)
    same = _compare(a, b)
    assert same.returncode == 0 and "differences: none" in same.stdout
    other = _compare(a, c)
    assert other.returncode == 1 and "cuda differs" in other.stdout and "out differs" in other.stdout
