"""CuTe DSL's own examples (examples/dsl, changed only in import and device lines) run to their
own correctness check on the CPU interpreter, as subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def _run(name: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, str(ROOT / "examples" / "dsl" / f"{name}.py"), *args],
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize("M,N", [(3, 12), (33, 70)])
def test_elementwise_add_example(M, N):
    p = _run("elementwise_add", "--M", str(M), "--N", str(N))
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Results verified successfully!" in p.stdout and p.stdout.rstrip().endswith("PASS")
    host = "gmem" if _cuda() else "generic"  # CuTe DSL's address space of the torch tensors: GPU gmem, CPU generic
    assert f'mA = !cute.memref<f32, {host}, align<16>, "({M},{N}):({N},1)">' in p.stdout
    # as CuTe DSL 4.8.1 prints it (tests/programs/dsl_ampere_elementwise_add: the divisibility of each coordinate)
    assert 'thrCrd = !cute.coord_tensor<"(?{div=4},?{div=4})", "((1,(4,4)),1,1):((0,(1@1,1@0)),0,0)">' in p.stdout


def test_elementwise_add_example_benchmark_mode():
    p = _run("elementwise_add", "--M", "16", "--N", "128", "--benchmark", "--iterations", "2",
             "--warmup_iterations", "1")
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Kernel execution time:" in p.stdout and "PASS" in p.stdout


@pytest.mark.gpu
def test_elementwise_add_example_on_gpu():
    p = _run("elementwise_add", "--M", "1024", "--N", "512")
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Results verified successfully!" in p.stdout


@pytest.mark.parametrize("op", ["add", "leaky_relu", "truediv"])
def test_elementwise_apply_example(op):
    p = _run("elementwise_apply", "--M", "64", "--N", "256", "--op", op)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Results verified successfully!" in p.stdout and p.stdout.rstrip().endswith("PASS")
    # CuTe DSL 4.8.1 keeps Booleans as bytes and register tensors 32-byte aligned (as the DSL prints it)
    assert 'frgPred = !cute.memref<i8, rmem, align<32>, "((4,16)):((1,4))">' in p.stdout


@pytest.mark.gpu
def test_elementwise_apply_example_on_gpu():
    p = _run("elementwise_apply", "--M", "1024", "--N", "1024")
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Results verified successfully!" in p.stdout


@pytest.mark.parametrize("causal", [False, True])
def test_flash_attention_v2_example(causal):
    """CuTe DSL's Ampere FlashAttention-2 forward (cp.async, ldmatrix, mma.sync, warp shuffles for the
    row max/sum, online softmax), checked by the example itself against torch's SDPA."""
    args = ["--batch_size", "1", "--seqlen_q", "128", "--seqlen_k", "192", "--num_head", "2", "--head_dim", "64",
            "--m_block_size", "64", "--n_block_size", "64", "--iterations", "1", "--warmup_iterations", "0"]
    p = _run("flash_attention_v2", *args, *(["--is_causal"] if causal else []))
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Results verified successfully!" in p.stdout and "PASS" in p.stdout


@pytest.mark.gpu
def test_flash_attention_v2_example_on_gpu():
    p = _run("flash_attention_v2", "--batch_size", "2", "--seqlen_q", "1024", "--seqlen_k", "1024", "--num_head", "4",
             "--iterations", "2", "--warmup_iterations", "1")
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Results verified successfully!" in p.stdout
