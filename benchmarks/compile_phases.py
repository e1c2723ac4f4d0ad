"""Where the first compile of CuTe DSL's GEMM examples goes, phase by phase: cutelab's
``cute.compile`` of examples/dsl/sgemm.py and tensorop_gemm.py, each size in a fresh process with an
empty kernel cache (what the examples' "Compilation time" measures).

Phases (``last_launch().phases``): trace (the kernel's Python, traced to the IR), bounds checks,
render (CUDA C++), nvrtc (the compiler), module load; "other" is the rest of ``cute.compile`` (the
host function's own tracing). With ``--fake`` the GPU is cutelab's fake (kernel/cuda/fakegpu.py): the
phases before the compiler run as on a GPU and NVRTC is a stub, or nvcc with ``--nvcc`` (a stand-in
for NVRTC: a process and a host pass more).

    python benchmarks/compile_phases.py                 # on a GPU: real NVRTC
    python benchmarks/compile_phases.py --fake --nvcc   # anywhere with nvcc

Needs torch (the examples' tensors).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]  # benchmarks/copy.py

CASES = [("sgemm", (256, 256, 64)), ("sgemm", (4096, 4096, 4096)),
         ("tensorop_gemm", (256, 256, 512, 1)), ("tensorop_gemm", (4096, 4096, 4096, 1))]


def child(name: str, size: tuple, fake: bool, nvcc: bool) -> dict:
    sys.path.insert(0, os.path.join(ROOT, "src"))
    sys.path.insert(0, os.path.join(ROOT, "examples", "dsl"))
    sys.argv = [name]
    import torch

    import cutelab as cute
    import cutelab as cutlass
    import cutelab.kernel.cuda.driver as kdrv
    from cutelab.kernel.launch.plan import last_launch
    from cutelab.runtime import from_dlpack

    stack = contextlib.ExitStack()
    if fake:
        import shutil

        from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor, fake_gpu

        stack.enter_context(fake_gpu(nvcc=shutil.which("nvcc") if nvcc else None))
        dev = fake_cuda_tensor
    else:
        def dev(t):
            return t.cuda()
    with stack:
        if name == "sgemm":
            import sgemm as ex

            M, N, K = size

            def mk(m0, m1, mode0_major):  # the example's defaults: A m-major, B k-major, C n-major
                shape = (m1, m0) if mode0_major else (m0, m1)
                return dev(torch.zeros(*shape, dtype=torch.float32).permute((1, 0) if mode0_major else (0, 1)))

            a, b, c = mk(M, K, True), mk(N, K, False), mk(M, N, False)
            ta = from_dlpack(a, assumed_align=16)
            tb = (from_dlpack(b, assumed_align=16).mark_layout_dynamic(leading_dim=1)
                  .mark_compact_shape_dynamic(mode=1, divisibility=b.shape[1]))
            tc = (from_dlpack(c, assumed_align=16).mark_layout_dynamic(leading_dim=1)
                  .mark_compact_shape_dynamic(mode=1, divisibility=c.shape[1]))
            stream = kdrv.CUstream(0 if fake else torch.cuda.current_stream().cuda_stream)

            def go():
                return cute.compile[cute.GenerateLineInfo](ex.SGemm(), ta, tb, tc, stream=stream)
        else:
            import tensorop_gemm as ex

            f16 = cutlass.Float16
            ts = ex.prepare_tensors(size, f16, f16, "m", "n", "n")
            a, b, c = (dev(t) for t in ts[:3])
            ta, tb, tc = ex.mark_dynamic_layout(a, b, c, 1, 2, 2, f16, f16, *ts[3:])

            def go():
                return ex.compile_bmm.__wrapped__(size, ta, tb, tc, f16, f16, cutlass.Float32, (2, 2, 1))
        with contextlib.redirect_stdout(io.StringIO()):
            t0 = time.perf_counter()
            go()
            total = time.perf_counter() - t0
        ll = last_launch()
        return {"total": total, "phases": dict(ll.phases), "lines": ll.source.count("\n"), "chars": len(ll.source)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fake", action="store_true", help="cutelab's fake GPU (no GPU needed)")
    ap.add_argument("--nvcc", action="store_true", help="with --fake: compile with nvcc as NVRTC's stand-in")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print("RESULT " + json.dumps(child(args.child[0], tuple(json.loads(args.child[1])), args.fake, args.nvcc)))
        return
    print("| example (size) | total (s) | trace | bounds checks | render | compiler | module load | other | CUDA lines |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, size in CASES:
        with tempfile.TemporaryDirectory(prefix="cutelab-phases-") as d:
            env = dict(os.environ, CUTELAB_CACHE_DIR=d)
            cmd = [sys.executable, __file__, "--child", name, json.dumps(size)]
            cmd += ["--fake"] * args.fake + ["--nvcc"] * args.nvcc
            p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
        res = [line for line in p.stdout.splitlines() if line.startswith("RESULT ")]
        label = f"{name} ({'x'.join(map(str, size))})"
        if p.returncode or not res:
            print(f"| {label} | failed: {(p.stderr.strip().splitlines() or ['?'])[-1][:200]} |")
            continue
        r = json.loads(res[0][7:])
        ph = r["phases"]
        comp = ph.get("nvrtc", ph.get("compile cache", 0.0))
        other = r["total"] - sum(ph.values())
        cells = [r["total"], ph.get("trace", 0.0), ph.get("bounds checks", 0.0), ph.get("render", 0.0), comp,
                 ph.get("module load", 0.0), other]
        print(f"| {label} | " + " | ".join(f"{v:.3f}" for v in cells) + f" | {r['lines']} |")


if __name__ == "__main__":
    main()
