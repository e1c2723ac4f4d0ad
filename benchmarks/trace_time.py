"""How long cutelab takes to trace CuTe DSL kernels on the CPU: the GEMMs and FlashAttention-2 of
examples/, compiled with ``cute.compile`` on CPU tensors, each in a fresh process with an empty kernel
cache. Reported per example: the median over rounds of the trace phase (the kernel's Python, traced
to the IR, where the layout algebra runs) and of the whole ``cute.compile``.

To compare two versions of cutelab in the same run, give each one's ``src`` folder; the versions
alternate within every round (so both see the same machine load):

    python benchmarks/trace_time.py [--rounds 5] [--src before=/tmp/old/src --src after=src]

Needs torch (the examples' tensors). With no --src, the ``src`` of this checkout is timed.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]  # benchmarks/copy.py

CASES = {
    "sgemm (examples/dsl)": "sgemm",
    "tensorop_gemm (examples/dsl)": "tensorop_gemm",
    "sm80_gemm (examples/gemm)": "sm80_gemm",
    "flash_attention_v2 (examples/dsl)": "fa2",
}


def child(case: str, examples: str) -> dict:
    sys.path.insert(0, os.path.join(examples, "dsl"))
    sys.path.insert(0, os.path.join(examples, "gemm"))
    sys.argv = [case]
    import torch

    import cutelab as cute
    import cutelab as cutlass
    from cutelab.kernel import last_launch
    from cutelab.runtime import from_dlpack

    if case == "sgemm":
        import sgemm as ex

        M, N, K = 256, 256, 64
        a = torch.zeros(K, M, dtype=torch.float32).permute(1, 0)
        b, c = torch.zeros(N, K, dtype=torch.float32), torch.zeros(M, N, dtype=torch.float32)
        ta = from_dlpack(a, assumed_align=16)
        tb = (from_dlpack(b, assumed_align=16).mark_layout_dynamic(leading_dim=1)
              .mark_compact_shape_dynamic(mode=1, divisibility=b.shape[1]))
        tc = (from_dlpack(c, assumed_align=16).mark_layout_dynamic(leading_dim=1)
              .mark_compact_shape_dynamic(mode=1, divisibility=c.shape[1]))

        def go():
            return cute.compile(ex.SGemm(), ta, tb, tc)
    elif case == "tensorop_gemm":
        import tensorop_gemm as ex

        size = (256, 256, 512, 1)
        f16 = cutlass.Float16
        ts = ex.prepare_tensors(size, f16, f16, "m", "n", "n")
        ta, tb, tc = ex.mark_dynamic_layout(*ts[:3], 1, 2, 2, f16, f16, *ts[3:])

        def go():
            return ex.compile_bmm.__wrapped__(size, ta, tb, tc, f16, f16, cutlass.Float32, (2, 2, 1))
    elif case == "sm80_gemm":
        import sm80_gemm as ex

        gemm = ex.Sm80Gemm(ab_dtype=cutlass.Float16, cta_tiler=(128, 128, 64), num_stages=3)
        a, b = torch.zeros(256, 256, dtype=torch.float16), torch.zeros(256, 256, dtype=torch.float16)
        c = torch.zeros(256, 256, dtype=torch.float16)
        tA, tB, tC = (from_dlpack(x, assumed_align=16) for x in (a, b, c))

        def go():
            return cute.compile(gemm, tA, tB, tC)
    elif case == "fa2":
        import flash_attention_v2 as ex

        dt = cutlass.BFloat16

        def mk():
            t = torch.zeros(1, 128, 2, 128, dtype=torch.bfloat16)
            return (from_dlpack(t, assumed_align=16).mark_layout_dynamic(leading_dim=3)
                    .mark_compact_shape_dynamic(mode=3, stride_order=t.dim_order(), divisibility=128 // dt.width))

        q, k, v, o = mk(), mk(), mk(), mk()
        fa2 = ex.FlashAttentionForwardAmpere(128, 128, 64, 128, False)

        def go():
            return cute.compile(fa2, q, k, v, o, 0.5, None, options="")
    else:
        raise SystemExit(f"unknown case {case}")
    with contextlib.redirect_stdout(io.StringIO()):
        t0 = time.perf_counter()
        go()
        total = time.perf_counter() - t0
    return {"total": total, "trace": last_launch().trace_seconds}


def run_one(case: str, src: str, examples: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="cutelab-trace-") as d:
        env = dict(os.environ, CUTELAB_CACHE_DIR=d, PYTHONPATH=src)
        cmd = [sys.executable, __file__, "--child", case, examples]
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    res = [line for line in p.stdout.splitlines() if line.startswith("RESULT ")]
    if p.returncode or not res:
        return {"error": (p.stderr.strip().splitlines() or ["?"])[-1][:200]}
    return json.loads(res[0][7:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--src", action="append", default=[],
                    help="NAME=PATH of a cutelab src folder (repeat to compare versions; default: this checkout)")
    ap.add_argument("--examples", default=os.path.join(ROOT, "examples"),
                    help="the examples folder (the same for every version)")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print("RESULT " + json.dumps(child(args.child[0], args.child[1])))
        return
    srcs = [tuple(s.split("=", 1)) for s in args.src] or [("this checkout", os.path.join(ROOT, "src"))]
    got: dict = {}
    for r in range(args.rounds):
        for label, case in CASES.items():
            order = srcs[r % len(srcs):] + srcs[:r % len(srcs)]  # alternate which version goes first
            for name, path in order:
                got.setdefault((label, name), []).append(run_one(case, os.path.abspath(path), args.examples))
    print(f"median of {args.rounds} rounds, each case in a fresh process with an empty kernel cache; seconds")
    head = "| example | " + " | ".join(f"{n}: trace | {n}: cute.compile" for n, _ in srcs)
    if len(srcs) == 2:
        head += f" | trace {srcs[0][0]}/{srcs[1][0]}"
    print(head + " |")
    print("|---|" + "---|" * (2 * len(srcs) + (len(srcs) == 2)))
    for label in CASES:
        cells, med = [], []
        for n, _ in srcs:
            rs = got[(label, n)]
            errs = [x["error"] for x in rs if "error" in x]
            if errs:
                cells += [f"failed: {errs[0]}", ""]
                med.append(float("nan"))
                continue
            tr = statistics.median(x["trace"] for x in rs)
            med.append(tr)
            cells += [f"{tr:.3f}", f"{statistics.median(x['total'] for x in rs):.3f}"]
        if len(srcs) == 2:
            cells.append(f"{med[0] / med[1]:.2f}")
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
