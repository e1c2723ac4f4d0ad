"""CuTe DSL's Ampere examples on cutelab and on CuTe DSL, side by side, with torch for the same problem.

Each example runs in its own process, as a user runs it (``python example.py ARGS``): cutelab's
copy from examples/dsl/ and CuTe DSL's original (a folder given with ``--dsl-orig``; the files
differ only in their import and device lines, which this script checks). The examples time
themselves through ``testing.benchmark``; here that function is replaced, in both libraries, by one
timer, so both are measured the same way:

- back-to-back: ``iterations`` calls, then a device-wide synchronize; the wall-clock time per
  call (the GPU time per call when calls queue up; the host's cost per call where that is larger).
  CUDA events are not used: the examples launch on streams of their own choosing, which events
  recorded on one stream do not see;
- single launch: synchronize, call, synchronize, ``singles`` times; the median wall-clock time
  (what one call costs a user who waits for it).

torch's operation for the same problem (``torch.add``, ``torch.matmul``) is timed with the same
timer. The compile time is the one the example prints ("Compilation time"), or, for examples that
print none, the first call's wall-clock time. Every example also runs its own correctness check
(when it has one) before timing: a run that fails it is reported as failed, not timed.

    python benchmarks/dsl_examples.py --dsl-orig .dsl/orig [--sizes default,large] [--only sgemm] [--json out.json]

CUTLASS's Hopper ``dense_gemm.py`` (``hopper_dense_gemm``) is not copied into examples/dsl: cutelab
runs CUTLASS's file unchanged (tests/compat/programs/dense_gemm.py) through its compatibility layer,
as ``cutelab run`` does, and CuTe DSL runs the same file (or --dsl-orig's copy, which is compared).
Its presets are cluster shapes at the documented 8192^3 command line (128x256 tiles)::

    python benchmarks/dsl_examples.py --only hopper_dense_gemm --sizes c1x1,c2x1,c1x2 --rounds 3

(an example without a preset of that name is skipped; ``--extra "--mnkl 4096,4096,4096,1"``
changes the size, the last occurrence of a flag winning).

CUTLASS's Hopper FMHA (``hopper_fmha``: cute/hopper/kernel/attention/fmha.py, presets default = its
documented persistent b4 s1024 h8 d64 line, large / causal = b4 s8192 h16 d128; torch SDPA) and grouped
GEMM (``hopper_grouped_gemm``: presets default = its documented 4-group line, large = 4 x 4096^3, moe = 8
groups of 128 to 3072 rows by 4096 x 4096, all 128x256 tiles; torch: one mm per group) run the same way::

    python benchmarks/dsl_examples.py --only hopper_fmha --sizes default,large,causal --rounds 3
    python benchmarks/dsl_examples.py --only hopper_grouped_gemm --sizes large,moe,default --rounds 3 --timeout 150

(the grouped GEMM's run includes its own check, a float32 einsum per group on the host, and its kernel's
trace is the same at every size: the problem sizes are read by the kernel; only num_groups and the total
of cluster tiles are constants of it)

CUTLASS's other Hopper GEMMs run the same way, unchanged from tests/compat/programs:
``hopper_persistent_gemm`` (dense_gemm_persistent.py: presets c1x1, c2x1, c1x2 as above; torch.bmm),
``hopper_fp8_gemm_2xacc`` (dense_gemm_fp8_2xacc.py: default = its documented 2048^3 line, large =
8192^3 128x256; torch._scaled_mm) and ``hopper_fp8_gelu_gemm`` (dense_gemm_fp8_gelu_persistent.py:
default = its documented 8192^3 line; torch._scaled_mm + gelu)::

    python benchmarks/dsl_examples.py --only hopper_persistent_gemm --sizes c1x1,c2x1 --rounds 3
    python benchmarks/dsl_examples.py --only hopper_fp8_gemm_2xacc,hopper_fp8_gelu_gemm --sizes default,large --rounds 3

Needs a CUDA GPU, torch, and for the CuTe DSL column ``nvidia-cutlass-dsl`` importable (the column
is skipped, with a note, when it is not).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# benchmarks/ holds a copy.py: keep it from shadowing the standard library's copy module
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]

# example -> (file, {size preset: argv}, torch problem builder name)
EXAMPLES = {
    "elementwise_add": ("elementwise_add.py", {"default": ["--benchmark"],
                                               "large": ["--benchmark", "--M", "8192", "--N", "8192"]}),
    "elementwise_apply": ("elementwise_apply.py", {"default": ["--benchmark"],
                                                   "large": ["--benchmark", "--M", "8192", "--N", "8192"]}),
    "sgemm": ("sgemm.py", {"default": [], "large": ["--mnk", "4096,4096,4096"]}),
    "tensorop_gemm": ("tensorop_gemm.py", {"default": [], "large": ["--mnkl", "8192,8192,8192,1"]}),
    # Ampere FlashAttention-2 forward: default batch 4, 16 heads, 8192x8192, head_dim 128, bf16
    "flash_attention_v2": ("flash_attention_v2.py", {"default": [], "large": ["--is_causal"]}),
    # Hopper dense GEMM (TMA, wgmma, clusters with multicast TMA), f16 in, f32 accumulation, f16 out;
    # the presets are its documented 8192^3 command line (128x256 tiles) at three cluster shapes
    "hopper_dense_gemm": ("dense_gemm.py", {
        f"c{c.replace(',', 'x')}": ["--mnkl", "8192,8192,8192,1", "--tile_shape_mn", "128,256", "--cluster_shape_mn", c,
                                    "--warmup_iterations", "10", "--iterations", "100"]
        for c in ("1,1", "2,1", "1,2")}),
    # Hopper persistent dense GEMM (a DMA and an MMA warp group walking tiles with the static persistent
    # scheduler), f16 -> f32 -> f16; the same presets as hopper_dense_gemm
    "hopper_persistent_gemm": ("dense_gemm_persistent.py", {
        f"c{c.replace(',', 'x')}": ["--mnkl", "8192,8192,8192,1", "--tile_shape_mn", "128,256", "--cluster_shape_mn", c,
                                    "--warmup_iterations", "10", "--iterations", "100"]
        for c in ("1,1", "2,1", "1,2")}),
    # Hopper FP8 (e4m3) GEMM with two-level accumulation, f16 out; default: its documented command line
    "hopper_fp8_gemm_2xacc": ("dense_gemm_fp8_2xacc.py", {
        "default": ["--mnkl", "2048,2048,2048,1", "--tile_shape_mn", "128,128", "--cluster_shape_mn", "1,2",
                    "--mma_promotion_interval", "4", "--warmup_iterations", "10", "--iterations", "100"],
        "large": ["--mnkl", "8192,8192,8192,1", "--tile_shape_mn", "128,256", "--cluster_shape_mn", "1,2",
                  "--mma_promotion_interval", "4", "--warmup_iterations", "10", "--iterations", "100"]}),
    # Hopper FP8 (e4m3) persistent GEMM with a GELU epilogue, f16 out; default: its documented command line
    "hopper_fp8_gelu_gemm": ("dense_gemm_fp8_gelu_persistent.py", {
        "default": ["--mnkl", "8192,8192,8192,1", "--tile_shape_mn", "128,256", "--cluster_shape_mn", "1,1",
                    "--c_dtype", "Float16", "--scale_a", "0.75", "--scale_b", "1.25", "--gelu_kind", "erf",
                    "--warmup_iterations", "10", "--iterations", "100"]}),
    # Hopper FMHA forward (TMA warp group, two wgmma math warp groups with the online softmax), f16 in/out,
    # f32 accumulation; default: its documented command line (persistent, b4 s1024 h8 d64); large: b4 s8192 h16
    # d128 (FlashAttention-2's preset), non-causal and causal
    "hopper_fmha": ("cute/hopper/kernel/attention/fmha.py", {
        "default": ["--qk_acc_dtype", "Float32", "--pv_acc_dtype", "Float32", "--mma_tile_shape_mn", "64,128",
                    "--q_shape", "4,1024,8,64", "--k_shape", "4,1024,8,64", "--is_persistent",
                    "--warmup_iterations", "10", "--iterations", "100"],
        "large": ["--q_shape", "4,8192,16,128", "--k_shape", "4,8192,16,128",
                  "--warmup_iterations", "3", "--iterations", "10"],
        "causal": ["--q_shape", "4,8192,16,128", "--k_shape", "4,8192,16,128", "--is_causal",
                   "--warmup_iterations", "3", "--iterations", "10"]}),
    # Hopper grouped GEMM (per-group TMA descriptors rewritten in the kernel), f16 -> f32 -> f16; default: its
    # documented command line (4 groups, 128x256 tiles, SMEM tensor-map mode); its descriptors are rewritten in
    # the kernel (kernel/instr/tensormap.py)
    "hopper_grouped_gemm": ("cute/hopper/kernel/grouped_gemm/grouped_gemm.py", {
        "default": ["--num_groups", "4", "--problem_sizes_mnkl", "(8192,1280,32,1),(16,384,1536,1),(640,1280,16,1),(640,160,16,1)",
                    "--tile_shape_mn", "128,256", "--cluster_shape_mn", "1,1", "--tensormap_update_mode", "SMEM",
                    "--warmup_iterations", "10", "--iterations", "100"],
        "large": ["--num_groups", "4", "--problem_sizes_mnkl",
                  "(4096,4096,4096,1),(4096,4096,4096,1),(4096,4096,4096,1),(4096,4096,4096,1)",
                  "--tile_shape_mn", "128,256", "--cluster_shape_mn", "1,1",
                  "--warmup_iterations", "10", "--iterations", "100"],
        # a mixture-of-experts layer's shape: 8 experts of 128 to 3072 tokens each, 4096 x 4096 weights
        "moe": ["--num_groups", "8", "--problem_sizes_mnkl", "(3072,4096,4096,1),(256,4096,4096,1),(1536,4096,4096,1),"
                "(512,4096,4096,1),(2048,4096,4096,1),(128,4096,4096,1),(1024,4096,4096,1),(768,4096,4096,1)",
                "--tile_shape_mn", "128,256", "--cluster_shape_mn", "1,1",
                "--warmup_iterations", "10", "--iterations", "100"]}),
}
# examples that cutelab runs unchanged through its compatibility layer (as `cutelab run` does): the
# file CUTLASS ships, carried byte for byte; without --dsl-orig CuTe DSL runs this same file
_PROGRAMS = os.path.join(ROOT, "tests", "compat", "programs")
UNCHANGED = {name: os.path.join(_PROGRAMS, EXAMPLES[name][0]) for name in (
    "hopper_dense_gemm", "hopper_persistent_gemm", "hopper_fp8_gemm_2xacc", "hopper_fp8_gelu_gemm", "hopper_fmha",
    "hopper_grouped_gemm")}

_IMPORT = re.compile(r"^\s*(import |from \S+ import )")
_DEVICE = re.compile(r"cuda|device|GPU is required")  # the device line(s): where the tensors live


def import_only_diff(ours: str, theirs: str) -> List[str]:
    """Lines that differ between the two files and are neither import lines nor device lines
    (choosing the GPU or the CPU): there should be none."""
    import difflib

    a, b = ours.splitlines(), theirs.splitlines()
    bad = []
    for line in difflib.unified_diff(b, a, lineterm="", n=0):
        if line.startswith(("---", "+++", "@@")):
            continue
        body = line[1:]
        if body.strip() and not _IMPORT.match(body) and not _DEVICE.search(body):
            bad.append(line)
    return bad


# --------------------------------------------------------------------------- the child: one timed run

def _timeline(call: Callable[[int], None], iterations: int) -> Dict[str, float]:
    """The back-to-back loop once more under torch.profiler (CUPTI): the GPU's own view of it.
    Per kernel its duration, the time from one kernel's start to the next's (the loop's period
    as the GPU sees it) and the idle gap between one kernel's end and the next's start; medians."""
    import tempfile

    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(iterations):
            call(i)
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as fh:
            events = json.load(fh).get("traceEvents", [])
    ks = sorted((float(e["ts"]), float(e["dur"])) for e in events if e.get("cat") == "kernel")
    if len(ks) < 3:
        return {"timeline_kernels": len(ks)}
    period = [b[0] - a[0] for a, b in zip(ks, ks[1:])]
    gaps = [b[0] - (a[0] + a[1]) for a, b in zip(ks, ks[1:])]
    return {"timeline_kernels": len(ks), "kernel_us": statistics.median(d for _, d in ks),
            "period_us": statistics.median(period), "gap_us": statistics.median(gaps)}


def _timer(singles: int, timeline: bool = False):
    import torch

    def timed(callable: Any, *, warmup_iterations: int = 10, iterations: int = 100, stream: Any = None,
              kernel_arguments: Any = None, workspace_generator: Any = None, workspace_count: int = 1,
              use_cuda_graphs: bool = False, **_: Any) -> float:
        if workspace_generator is not None:
            spaces = [workspace_generator() for _ in range(max(1, workspace_count))]
        elif kernel_arguments is not None:
            spaces = [kernel_arguments]
        else:
            spaces = [None]

        def call(i: int) -> None:
            w = spaces[i % len(spaces)]
            if w is None:
                callable()
            else:
                callable(*w.args, **w.kwargs)

        for i in range(max(1, warmup_iterations)):
            call(i)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for i in range(iterations):
            call(i)
        torch.cuda.synchronize()
        wall = (time.perf_counter() - t0) / iterations * 1e6
        one = []
        for i in range(singles):
            torch.cuda.synchronize()
            s = time.perf_counter()
            call(i)
            torch.cuda.synchronize()
            one.append((time.perf_counter() - s) * 1e6)
        res = {"b2b_us": wall, "single_us": statistics.median(one), "iterations": iterations}
        if timeline:
            res.update(_timeline(call, iterations))
        print("BENCH " + json.dumps(res), flush=True)
        return wall

    return timed


def child(lib: str, path: str, argv: List[str], singles: int, timeline: bool = False) -> None:
    sys.path.insert(0, os.path.join(ROOT, "src"))
    if lib == "cutelab-run":  # an unchanged CuTe DSL program, as `cutelab run` runs it
        from cutelab.compat import install

        install()
        import cutlass.cute.testing as testing_mod  # cutelab's compatibility namespace
    elif lib == "cutelab":
        import cutelab.testing as testing_mod
    else:
        import cutlass.cute.testing as testing_mod  # noqa: F401
        import cutlass.testing as testing_mod2  # type: ignore

        testing_mod2.benchmark = _timer(singles, timeline)
    testing_mod.benchmark = _timer(singles, timeline)
    import runpy

    sys.argv = [path] + argv
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # as python PROGRAM.py does
    t0 = time.perf_counter()
    runpy.run_path(path, run_name="__main__")
    print("WALL " + json.dumps({"total_s": time.perf_counter() - t0}), flush=True)


def torch_child(name: str, argv: List[str], singles: int, timeline: bool = False) -> None:
    import torch

    timed = _timer(singles, timeline)

    def arg(flag: str, default: Any) -> Any:
        return argv[argv.index(flag) + 1] if flag in argv else default

    class W:
        def __init__(self, *a: Any):
            self.args, self.kwargs = a, {}

    warm, iters = int(arg("--warmup_iterations", 2)), int(arg("--iterations", 100))  # the examples' defaults
    if name in ("elementwise_add", "elementwise_apply"):
        M = int(arg("--M", 1024 if name == "elementwise_add" else 4096))
        N = int(arg("--N", 1024 if name == "elementwise_add" else 4096))
        # elementwise_add cycles through 10 workspaces (its inputs do not sit in L2 between calls): torch
        # gets the same 10; elementwise_apply times one
        n_ws = 10 if name == "elementwise_add" else 1
        timed(lambda x, y, z: torch.add(x, y, out=z), warmup_iterations=warm, iterations=iters,
              workspace_generator=lambda: W(torch.randn(M, N, device="cuda"), torch.randn(M, N, device="cuda"),
                                            torch.empty(M, N, device="cuda")), workspace_count=n_ws)
    elif name == "sgemm":
        m, n, k = (int(x) for x in arg("--mnk", "256,256,64").split(","))
        a, b = torch.randn(m, k, device="cuda"), torch.randn(n, k, device="cuda")
        c = torch.empty(m, n, device="cuda")
        torch.backends.cuda.matmul.allow_tf32 = False
        timed(lambda x, y, z: torch.mm(x, y.t(), out=z), warmup_iterations=warm, iterations=iters,
              kernel_arguments=W(a, b, c))
    elif name in ("tensorop_gemm", "hopper_dense_gemm", "hopper_persistent_gemm"):
        m, n, k, l_ = (int(x) for x in arg("--mnkl", "256,256,512,1" if name == "tensorop_gemm"
                                          else "4096,4096,4096,1").split(","))
        a = torch.randn(l_, m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(l_, n, k, device="cuda", dtype=torch.float16)
        c = torch.empty(l_, m, n, device="cuda", dtype=torch.float16)
        timed(lambda x, y, z: torch.bmm(x, y.transpose(1, 2), out=z), warmup_iterations=warm, iterations=iters,
              kernel_arguments=W(a, b, c))
    elif name in ("hopper_fp8_gemm_2xacc", "hopper_fp8_gelu_gemm"):
        # torch._scaled_mm: e4m3 A (row-major) x e4m3 B (column-major), per-tensor scales, f32 accumulation;
        # the GELU example's epilogue as a second torch op (erf GELU; its poly11 kind as the tanh form)
        m, n, k, l_ = (int(x) for x in arg("--mnkl", "4096,4096,4096,1").split(","))
        if l_ != 1:
            raise SystemExit(f"{name}: torch._scaled_mm has no batch mode (l = {l_})")
        out_dt = {"Float16": torch.float16, "BFloat16": torch.bfloat16, "Float32": torch.float32}[arg("--c_dtype", "Float16")]
        a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
        sa = torch.tensor(float(arg("--scale_a", 1.0)), device="cuda")
        sb = torch.tensor(float(arg("--scale_b", 1.0)), device="cuda")
        gelu = None
        if name == "hopper_fp8_gelu_gemm":
            gelu = "none" if arg("--gelu_kind", "erf") == "erf" else "tanh"

        def mm(x: Any, y: Any) -> Any:
            c = torch._scaled_mm(x, y.t(), scale_a=sa, scale_b=sb, out_dtype=out_dt)
            return c if gelu is None else torch.nn.functional.gelu(c, approximate=gelu)

        timed(mm, warmup_iterations=warm, iterations=iters, kernel_arguments=W(a, b))
    elif name == "hopper_fmha":
        # torch SDPA on the same problem: f16 (B, H, S, D), the example's default scale_softmax (1.0)
        bq, sq, hq, d = (int(x) for x in arg("--q_shape", "1,128,16,128").split(","))
        bk, sk, hk, _ = (int(x) for x in arg("--k_shape", "1,128,16,128").split(","))
        causal = "--is_causal" in argv
        q = torch.randn(bq, hq, sq, d, device="cuda", dtype=torch.float16)
        k = torch.randn(bk, hk, sk, d, device="cuda", dtype=torch.float16)
        v = torch.randn(bk, hk, sk, d, device="cuda", dtype=torch.float16)
        timed(lambda x, y, z: torch.nn.functional.scaled_dot_product_attention(
                  x, y, z, scale=float(arg("--scale_softmax", 1.0)) or None, is_causal=causal, enable_gqa=hk != hq),
              warmup_iterations=warm, iterations=iters, kernel_arguments=W(q, k, v))
    elif name == "hopper_grouped_gemm":
        # torch: one matmul per group, back to back (what a user without a grouped kernel runs)
        sizes = [tuple(int(x) for x in g.split(",")) for g in
                 re.findall(r"\(([^)]*)\)", arg("--problem_sizes_mnkl", "(4096,4096,4096,1)"))]
        ops = [(torch.randn(m, k, device="cuda", dtype=torch.float16), torch.randn(n, k, device="cuda", dtype=torch.float16),
                torch.empty(m, n, device="cuda", dtype=torch.float16)) for m, n, k, _ in sizes]

        def grouped() -> None:
            for a, b, c in ops:
                torch.mm(a, b.t(), out=c)

        timed(grouped, warmup_iterations=warm, iterations=iters)
    elif name == "flash_attention_v2":
        b, sq, sk = int(arg("--batch_size", 4)), int(arg("--seqlen_q", 8192)), int(arg("--seqlen_k", 8192))
        h, d = int(arg("--num_head", 16)), int(arg("--head_dim", 128))
        scale, causal = float(arg("--softmax_scale", 0.5)), "--is_causal" in argv
        q = torch.randn(b, h, sq, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, h, sk, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(b, h, sk, d, device="cuda", dtype=torch.bfloat16)
        timed(lambda x, y, z: torch.nn.functional.scaled_dot_product_attention(x, y, z, scale=scale, is_causal=causal),
              warmup_iterations=int(arg("--warmup_iterations", 3)), iterations=int(arg("--iterations", 10)),
              kernel_arguments=W(q, k, v))
    else:
        raise SystemExit(f"no torch reference for {name}")


# --------------------------------------------------------------------------- the parent

def run_one(cmd: List[str], env: Dict[str, str], timeout: int) -> Dict[str, Any]:
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"ok": False, "why": f"timed out after {timeout} s"}
    out = p.stdout + p.stderr
    res: Dict[str, Any] = {"ok": p.returncode == 0, "seconds": time.perf_counter() - t0}
    for line in out.splitlines():
        if line.startswith("BENCH "):
            res.update(json.loads(line[6:]))
        m = re.search(r"Compilation time: ([\d.]+) seconds", line)
        if m:
            res["compile_s"] = float(m.group(1))
    if p.returncode != 0:
        res["why"] = out.strip().splitlines()[-1][:300] if out.strip() else f"exit {p.returncode}"
        res["tail"] = out[-3000:]
    res["verified"] = ("verified" in out.lower()) or ("PASS" in out)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dsl-orig", help="folder with CuTe DSL's original example files")
    ap.add_argument("--only", default="", help="comma-separated example names")
    ap.add_argument("--sizes", default="default", help="comma-separated presets: default, large")
    ap.add_argument("--libs", default="cutelab,cutedsl,torch")
    ap.add_argument("--singles", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=1,
                    help="run the libraries alternately this many times per example and size; the table "
                         "shows each one's median (and range) over the rounds")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--timeline", action="store_true",
                    help="also run each back-to-back loop under torch.profiler: kernel time, period and gaps on the GPU")
    ap.add_argument("--extra", default="", help="arguments added to each example's own (e.g. '--iterations 1000')")
    ap.add_argument("--json")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args, rest = ap.parse_known_args()
    if args.child:
        lib, target = args.child[0], args.child[1]
        if lib == "torch":
            torch_child(target, rest, args.singles, args.timeline)
        else:
            child(lib, target, rest, args.singles, args.timeline)
        return
    names = [n for n in EXAMPLES if not args.only or n in args.only.split(",")]
    libs = args.libs.split(",")
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.path.join(ROOT, "src") + os.pathsep + env.get("PYTHONPATH", "")
    rows = []
    tl = ["--timeline"] if args.timeline else []
    for name in names:
        fname, presets = EXAMPLES[name]
        ours = UNCHANGED.get(name) or os.path.join(ROOT, "examples", "dsl", fname)
        theirs = os.path.join(args.dsl_orig, fname) if args.dsl_orig else None
        if name in UNCHANGED and not (theirs and os.path.exists(theirs)):
            theirs = ours  # the carried file is CUTLASS's, unchanged
        if name in UNCHANGED and theirs != ours and os.path.exists(theirs):
            same = open(ours, "rb").read() == open(theirs, "rb").read()
            print(f"{name}: cutelab runs CUTLASS's file unchanged; --dsl-orig's copy is "
                  f"{'identical' if same else 'DIFFERENT (the two columns run different programs)'}")
        elif theirs and os.path.exists(theirs) and os.path.exists(ours):
            bad = import_only_diff(open(ours).read(), open(theirs).read())
            print(f"{name}: lines differing from CuTe DSL's file beyond imports: {len(bad)}"
                  + "".join("\n    " + b for b in bad))
        for size in args.sizes.split(","):
            if size not in presets:
                continue
            argv = presets[size] + args.extra.split()
            for rnd, lib in [(r, l) for r in range(args.rounds) for l in libs]:
                if lib == "cutelab":
                    if not os.path.exists(ours):
                        rows.append({"example": name, "size": size, "lib": lib, "ok": False, "why": "no file"})
                        continue
                    kind = "cutelab-run" if name in UNCHANGED else "cutelab"
                    cmd = [sys.executable, __file__, "--child", kind, ours, "--singles", str(args.singles)] + tl + argv
                elif lib == "cutedsl":
                    if not theirs or not os.path.exists(theirs):
                        rows.append({"example": name, "size": size, "lib": lib, "ok": False, "why": "no --dsl-orig file"})
                        continue
                    cmd = [sys.executable, __file__, "--child", "cutedsl", theirs, "--singles", str(args.singles)] + tl + argv
                else:
                    cmd = [sys.executable, __file__, "--child", "torch", name, "--singles", str(args.singles)] + tl + argv
                r = run_one(cmd, env, args.timeout)
                r.update(example=name, size=size, lib=lib, argv=" ".join(argv), round=rnd)
                rows.append(r)
                show = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items() if k != "tail"}
                print(json.dumps(show), flush=True)
                if not r["ok"] and "tail" in r:
                    print(r["tail"][-1500:], flush=True)
    print()
    tl_cols = any("kernel_us" in r for r in rows)
    print("| example | size | lib | back-to-back us/call | single launch us | compile s | check |"
          + (" GPU kernel us | GPU period us | GPU gap us |" if tl_cols else ""))
    print("|---|---|---|---|---|---|---|" + ("---|---|---|" if tl_cols else ""))
    for key in dict.fromkeys((r["example"], r["size"], r["lib"]) for r in rows):
        group = [r for r in rows if (r["example"], r["size"], r["lib"]) == key]

        def f(k: str) -> str:
            vals = sorted(r[k] for r in group if isinstance(r.get(k), float))
            if not vals:
                return "-"
            med = statistics.median(vals)
            return f"{med:.2f}" + (f" ({vals[0]:.2f}-{vals[-1]:.2f})" if len(vals) > 1 else "")

        bad = [r.get("why", "no check") for r in group if not (r.get("ok") and r.get("verified"))]
        rounds = f" x{len(group)}" if len(group) > 1 else ""
        print(f"| {key[0]} | {key[1]} | {key[2]}{rounds} | {f('b2b_us')} | {f('single_us')} | {f('compile_s')} | "
              f"{'ok' if not bad else bad[0]} |"
              + (f" {f('kernel_us')} | {f('period_us')} | {f('gap_us')} |" if tl_cols else ""))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
