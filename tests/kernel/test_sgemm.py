"""CuTe DSL's Ampere SIMT GEMM (examples/dsl/sgemm.py, changed only in import and device lines) runs
to its own correctness check on the CPU interpreter (cp.async pipeline, named barriers, predicated
tiles, the k residue), and its kernel prints CUDA that nvcc compiles for sm_90a."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, str(ROOT / "examples" / "dsl" / "sgemm.py"), *args,
                           "--warmup_iterations", "0", "--iterations", "1"],
                          capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.parametrize("mnk,majors", [
    ("128,128,32", ("m", "k", "n")),  # the example's default majors: A m-major (16-byte cp.async), B k-major
    ("64,48,164", ("m", "k", "n")),  # 21 k-tiles: the mainloop stays a runtime loop (control.UNROLL_LIMIT)
    ("100,90,20", ("m", "k", "n")),  # irregular: predicated m/n edges and a k residue of 4
    ("100,90,20", ("k", "n", "m")),  # the other majors (B n-major: padding-free vector copies, C m-major)
])
def test_sgemm_example_on_cpu(mnk, majors):
    a, b, c = majors
    p = _run("--mnk", mnk, "--a_major", a, "--b_major", b, "--c_major", c)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    assert "Results verified successfully!" in p.stdout and p.stdout.rstrip().endswith("PASS")


def _load_example():
    spec = importlib.util.spec_from_file_location("cutelab_example_sgemm", ROOT / "examples" / "dsl" / "sgemm.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _sgemm_ir(M, N, K):
    import torch

    import cutelab as cute
    from cutelab.runtime import from_dlpack

    mod = _load_example()
    a = torch.zeros(K, M).permute(1, 0)  # m-major A
    b = torch.zeros(N, K)  # k-major B
    c = torch.zeros(M, N)
    f = cute.compile(mod.SGemm(), from_dlpack(a, assumed_align=16), from_dlpack(b, assumed_align=16),
                     from_dlpack(c, assumed_align=16))
    return f.plans[0][0].ir


def test_sgemm_kernel_ir_uses_cp_async_and_fma():
    from cutelab.kernel.instr.cpasync import CpAsyncCopy, CpAsyncWait
    from cutelab.kernel.instr.gemm import Fma

    ir = _sgemm_ir(128, 128, 32)
    ops = list(ir.ops())
    cps = [op for op in ops if isinstance(op, CpAsyncCopy)]
    assert {op.nbytes for op in cps if op.src.name == "mA"} == {16}  # m-major A: 128-bit copies
    assert {op.nbytes for op in cps if op.src.name == "mB"} == {4}  # k-major B: one element each
    assert [op.n for op in ops if isinstance(op, CpAsyncWait)][-1] == 0
    # 4 k-tiles x 8 k-blocks, each an 8x8 outer product per thread
    assert sum(op.dst.n for op in ops if isinstance(op, Fma)) == 4 * 8 * 64


def test_long_k_loops_stay_runtime_loops():
    from cutelab.kernel.ir.nodes import For

    assert not any(isinstance(op, For) for op in _sgemm_ir(128, 128, 32).ops())  # 4 k-tiles: unrolled
    # 8 k-tiles (the example's default K = 64): `for _ in range(k_tile_count)` becomes a runtime loop
    # (control.UNROLL_LIMIT), so the default size prints one mainloop, not 8 copies of it
    ir = _sgemm_ir(128, 128, 64)
    assert sum(isinstance(op, For) for op in ir.ops()) == 1


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_sgemm_cuda_compiles_with_nvcc(tmp_path):
    from cutelab.kernel.cuda import printer as cuda

    src = cuda.render(_sgemm_ir(100, 90, 20))
    assert "cp.async.ca.shared.global" in src and "fmaf(" in src and "bar.sync 1, 256;" in src
    f = tmp_path / "sgemm.cu"
    f.write_text(src)
    r = subprocess.run(["nvcc", "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "sgemm.cubin"), str(f)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_sgemm_with_a_runtime_mainloop_cuda_compiles(tmp_path):
    """21 k-tiles: the mainloop is a runtime loop (stage counters in registers, stage views moved by
    register offsets); accesses indexed by registers are guarded, and the CUDA compiles."""
    from cutelab.kernel.cuda import printer as cuda
    from cutelab.kernel.analysis.bounds import check_bounds
    from cutelab.kernel.ir.nodes import For

    ir = _sgemm_ir(64, 48, 164)
    assert any(isinstance(op, For) for op in ir.ops())
    check_bounds(ir, "gpu")  # register stage indices: guarded, not refused
    assert ir.guards
    src = cuda.render(ir)
    (tmp_path / "k.cu").write_text(src)
    r = subprocess.run(["nvcc", "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(tmp_path / "k.cu")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]


@pytest.mark.gpu
def test_sgemm_example_on_gpu():
    p = _run()  # the example's default size, 256,256,64, on the GPU
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    assert "Results verified successfully!" in p.stdout and p.stdout.rstrip().endswith("PASS")
