"""The CPU interpreter beside numpy doing the same arithmetic on the same arrays, in one run.

    python benchmarks/interpreter.py [--quick]

Rows:
- elementwise add: CUTLASS's Ampere ``elementwise_add.py`` kernel (examples/dsl), fp16, against
  numpy's ``a + b`` on the same arrays;
- naive GEMM: one thread per output element looping over K with a runtime loop, f32, against
  ``A @ B``; its peak memory (RSS growth) is reported too;
- the tiled GEMMs of ``examples/`` at their CPU sizes (sgemm, tensorop_gemm), against ``A @ B``.

Each row is the median of --rounds runs (one when a run takes over 20 s). Timings of GPU code on
the CPU say nothing about the GPU: this measures the interpreter.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "dsl"))

import cutelab as cute  # noqa: E402
import cutelab as cutlass  # noqa: E402
from cutelab.runtime import from_dlpack  # noqa: E402


@cute.kernel
def naive_gemm_kernel(A: cute.Tensor, B: cute.Tensor, C: cute.Tensor, K: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, bidy, _ = cute.arch.block_idx()
    bdim, _, _ = cute.arch.block_dim()
    n = bidx * bdim + tidx
    m = bidy
    acc = cute.make_rmem_tensor(cute.make_layout(1), cutlass.Float32)
    acc[0] = 0.0
    for k in cutlass.range(K):
        acc[0] = acc[0] + A[m, k] * B[k, n]
    C[m, n] = acc[0]


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _time(fn, rounds: int) -> float:
    ts = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
        if ts[-1] > 20:
            break
    return statistics.median(ts)


def elementwise(M: int, N: int, rounds: int):
    import elementwise_add as ex

    a = np.random.default_rng(0).standard_normal((M, N)).astype(np.float16)
    b = np.random.default_rng(1).standard_normal((M, N)).astype(np.float16)
    c = np.zeros_like(a)
    args = [from_dlpack(x, assumed_align=16) for x in (a, b, c)]
    ex.elementwise_add(*args)  # trace and first run
    np.testing.assert_array_equal(c, a + b)
    ours = _time(lambda: ex.elementwise_add(*args), rounds)
    ref = _time(lambda: np.add(a, b, out=c), rounds)
    return f"elementwise add f16 {M}x{N}", ours, ref, None


def naive_gemm(M: int, N: int, K: int, rounds: int):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    C = np.zeros((M, N), np.float32)
    block = min(N, 256)
    before = _rss_mb()

    def run():
        naive_gemm_kernel(from_dlpack(A), from_dlpack(B), from_dlpack(C), K).launch(grid=(N // block, M, 1),
                                                                                       block=(block, 1, 1))
    ours = _time(run, rounds)
    peak = _rss_mb() - before
    np.testing.assert_allclose(C, A @ B, rtol=1e-3, atol=1e-3)
    ref = _time(lambda: A @ B, rounds)
    return f"naive GEMM f32 {M}x{N}x{K}", ours, ref, peak


def tiled(name: str, rounds: int):
    import subprocess

    args = {"sgemm": ["sgemm.py", "--mnk", "256,256,64", "--warmup_iterations", "0", "--iterations", "1"],
            "tensorop_gemm": ["tensorop_gemm.py", "--mnkl", "256,256,64,1", "--warmup_iterations", "0",
                              "--iterations", "1"]}[name]
    path = os.path.join(HERE, "..", "examples", "dsl", args[0])

    def run():
        subprocess.run([sys.executable, path] + args[1:], check=True, capture_output=True,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import cutelab, numpy"], check=True)
    start = time.perf_counter() - t0
    return f"{name} (examples/dsl, whole program)", _time(run, rounds) - start, None, None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes (CI-sized)")
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    rows = []
    if a.quick:
        rows.append(elementwise(1024, 1024, a.rounds))
        rows.append(naive_gemm(128, 256, 128, a.rounds))
    else:
        rows.append(elementwise(16384, 8192, a.rounds))
        rows.append(naive_gemm(1024, 1024, 1024, a.rounds))
    for name in ("sgemm", "tensorop_gemm"):
        rows.append(tiled(name, a.rounds))
    print(f"{'what':50s} {'cutelab':>10s} {'numpy':>10s} {'ratio':>7s} {'peak MB':>8s}")
    for name, ours, ref, peak in rows:
        r = f"{ours / ref:7.1f}" if ref else "      -"
        print(f"{name:50s} {ours:9.3f}s {(f'{ref:9.4f}s' if ref else '-'):>10s} {r} "
              f"{(f'{peak:8.0f}' if peak is not None else '-'):>8s}")


if __name__ == "__main__":
    main()
