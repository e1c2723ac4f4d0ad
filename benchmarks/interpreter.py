"""The CPU interpreter beside numpy doing the same arithmetic on the same arrays, in one run.

    python benchmarks/interpreter.py [--quick] [--rounds R] [--trees SRC_A,SRC_B,...]

Rows (each run in a child process per source tree, the trees alternated round by round; the
table shows medians):
- ``elementwise``: CUTLASS's Ampere ``elementwise_add.py`` kernel (examples/dsl), f16, one
  launch after its trace, against numpy's ``a + b`` on the same arrays;
- ``naive_gemm``: one thread per output element looping over K with a runtime loop, f32, one
  launch after its trace, against ``A @ B``; the child's peak memory growth is shown;
- ``sgemm``, ``tensorop_gemm`` (examples/dsl), ``sm80_gemm``, ``sm90_gemm`` (examples/gemm; the
  Hopper one through ``HopperGemm`` with 8 persistent CTAs, as its command line on the CPU): the
  examples' own runs (trace, launch, reference check) at a CPU size, whole, and the part of it
  spent in the interpreter's launches ("launches"; "CPU s": the CPU seconds of the child process
  in them, ``time.process_time``, steadier than wall time on a shared machine). The sm80/sm90
  rows are not in the default ``--rows`` (their inputs are randn: no exact-sum shortcut).

``--trees`` takes source folders (the ``src`` of checkouts; default: this one) to compare, e.g.
the tree before a change. CPU timings of GPU code say nothing about the GPU: this measures the
interpreter.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))
if sys.path and os.path.abspath(sys.path[0]) == HERE:  # benchmarks/copy.py would hide the stdlib's copy
    sys.path.pop(0)
SIZES = {"full": {"elementwise": (16384, 8192), "naive_gemm": (1024, 1024, 1024), "sgemm": (512, 512, 256),
                  "tensorop_gemm": (512, 512, 256), "sm80_gemm": (256, 256, 128), "sm90_gemm": (256, 256, 128)},
         "quick": {"elementwise": (1024, 1024), "naive_gemm": (128, 256, 128), "sgemm": (128, 128, 64),
                   "tensorop_gemm": (128, 128, 64), "sm80_gemm": (128, 128, 128), "sm90_gemm": (128, 128, 64)}}


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(row: str, size: tuple) -> dict:
    """Run one row in this process (its cutelab is whatever PYTHONPATH gives); a dict of timings."""
    import numpy as np

    sys.path.insert(0, os.path.join(ROOT, "examples", "dsl"))
    import cutelab as cute
    import cutelab as cutlass
    from cutelab.runtime import from_dlpack

    quiet = contextlib.redirect_stdout(io.StringIO())
    if row == "elementwise":
        import elementwise_add as ex

        M, N = size
        rng = np.random.default_rng(0)
        a, b = (rng.standard_normal((M, N)).astype(np.float16) for _ in range(2))
        c = np.zeros_like(a)
        args = [from_dlpack(x, assumed_align=16) for x in (a, b, c)]
        with quiet:
            ex.elementwise_add(*args)  # traced here
        t0 = time.perf_counter()
        ex.elementwise_add(*args)
        ours = time.perf_counter() - t0
        assert np.array_equal(c, a + b)
        t0 = time.perf_counter()
        np.add(a, b, out=c)
        return {"ours": ours, "numpy": time.perf_counter() - t0}
    if row == "naive_gemm":
        @cute.kernel
        def naive_gemm_kernel(A: cute.Tensor, B: cute.Tensor, C: cute.Tensor, K: cutlass.Int32):
            tidx, _, _ = cute.arch.thread_idx()
            bidx, bidy, _ = cute.arch.block_idx()
            bdim, _, _ = cute.arch.block_dim()
            n = bidx * bdim + tidx
            acc = cute.make_rmem_tensor(cute.make_layout(1), cutlass.Float32)
            acc[0] = 0.0
            for k in cutlass.range(K):
                acc[0] = acc[0] + A[bidy, k] * B[k, n]
            C[bidy, n] = acc[0]

        M, N, K = size
        rng = np.random.default_rng(0)
        A = rng.standard_normal((M, K)).astype(np.float32)
        B = rng.standard_normal((K, N)).astype(np.float32)
        C = np.zeros((M, N), np.float32)
        block = min(N, 256)
        launch = lambda: naive_gemm_kernel(from_dlpack(A), from_dlpack(B), from_dlpack(C), K).launch(  # noqa: E731
            grid=(N // block, M, 1), block=(block, 1, 1))
        launch()  # traced here
        before = _rss_mb()
        t0 = time.perf_counter()
        launch()
        ours = time.perf_counter() - t0
        np.testing.assert_allclose(C, A @ B, rtol=1e-3, atol=1e-3)
        t0 = time.perf_counter()
        A @ B
        return {"ours": ours, "numpy": time.perf_counter() - t0, "peak_mb": _rss_mb() - before}
    if row in ("sgemm", "tensorop_gemm", "sm80_gemm", "sm90_gemm"):
        import cutelab as cutlass_types

        M, N, K = size
        spent = [0.0, 0.0]  # seconds inside the interpreter's launches: wall, CPU (this process)
        import importlib

        try:
            interpreter = importlib.import_module("cutelab.kernel.cpu.interpreter")
        except ImportError:  # a tree from before the kernel's folders
            interpreter = importlib.import_module("cutelab.kernel.interpret")

        real = interpreter.interpret

        def timed(*a, **k):
            t, c = time.perf_counter(), time.process_time()
            try:
                return real(*a, **k)
            finally:
                spent[0] += time.perf_counter() - t
                spent[1] += time.process_time() - c
        interpreter.interpret = timed
        t0 = time.perf_counter()
        with quiet:
            if row == "sgemm":
                import sgemm as ex

                ex.run((M, N, K), "k", "k", "n", warmup_iterations=0, iterations=1)
            elif row == "tensorop_gemm":
                import tensorop_gemm as ex

                ex.run((M, N, K, 1), cutlass_types.Float16, cutlass_types.Float32, cutlass_types.Float32, "k", "k",
                       "n", (2, 2, 1), warmup_iterations=0, iterations=1)
            else:  # examples/gemm: the Ampere GEMM's run() (f16, randn), the Hopper GEMM (8 persistent CTAs)
                sys.path.insert(0, os.path.join(ROOT, "examples", "gemm"))
                if row == "sm80_gemm":
                    import sm80_gemm as ex

                    ex.run((M, N, K), "f16", iterations=0, warmup=0)
                else:
                    import sm90_gemm as ex

                    rng = np.random.default_rng(0)
                    A = rng.standard_normal((M, K)).astype(np.float16)
                    B = rng.standard_normal((N, K)).astype(np.float16)
                    C = np.zeros((M, N), np.float32)
                    ex.HopperGemm(tile_mnk=(64, 64, 64), stages=2, num_ctas=8)(A, B, C)
                    ref = A.astype(np.float64) @ B.astype(np.float64).T
                    assert np.abs(C - ref).max() <= 1e-3 * np.abs(ref).max()
        return {"ours": time.perf_counter() - t0, "launches": spent[0], "launches_cpu": spent[1]}
    raise SystemExit(f"interpreter.py: unknown row {row!r}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes (CI-sized)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--rows", default="elementwise,naive_gemm,sgemm,tensorop_gemm")
    p.add_argument("--trees", default=os.path.join(ROOT, "src"), help="comma-separated src folders to compare")
    p.add_argument("--child", nargs=2, metavar=("ROW", "SIZE"), help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        print(json.dumps(child(a.child[0], tuple(int(x) for x in a.child[1].split("x")))))
        return
    sizes = SIZES["quick" if a.quick else "full"]
    trees = a.trees.split(",")
    got: dict = {}
    for _ in range(a.rounds):
        for row in a.rows.split(","):
            for tree in trees:
                env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
                r = subprocess.run([sys.executable, __file__, "--child", row, "x".join(map(str, sizes[row]))],
                                   capture_output=True, text=True, env=env, cwd=ROOT)
                if r.returncode:
                    raise SystemExit(f"{row} on {tree} failed:\n{r.stderr[-2000:]}")
                got.setdefault((row, tree), []).append(json.loads(r.stdout.strip().splitlines()[-1]))
    print(f"{'row':14s} {'size':16s} {'tree':28s} {'cutelab s':>10s} {'launches s':>10s} {'CPU s':>7s} {'numpy s':>9s} "
          f"{'ratio':>6s} {'peak MB':>8s}")
    for (row, tree), rs in got.items():
        med = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
        ratio = f"{med['ours'] / med['numpy']:6.1f}" if "numpy" in med else "     -"
        numpy_s = f"{med['numpy']:9.3f}" if "numpy" in med else "        -"
        peak = f"{med['peak_mb']:8.0f}" if "peak_mb" in med else "       -"
        launches = f"{med['launches']:10.3f}" if "launches" in med else "         -"
        cpu = f"{med['launches_cpu']:7.3f}" if "launches_cpu" in med else "      -"
        print(f"{row:14s} {'x'.join(map(str, sizes[row])):16s} {os.path.relpath(tree, ROOT)[-28:]:28s} "
              f"{med['ours']:10.3f} {launches} {cpu} {numpy_s} {ratio} {peak}")


if __name__ == "__main__":
    main()
