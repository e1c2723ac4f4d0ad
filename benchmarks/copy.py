"""Copy bandwidth: torch's D.copy_(S) against the three seed copy kernels run by cutelab.

Run on a machine with an NVIDIA GPU:  python benchmarks/copy.py [--n 8192] [--iters 100]
[--variants] [--out DIR]

For an n x n bf16 matrix it measures, in one run:
- torch's D.copy_(S);
- each seed kernel of examples/seeds (inner, outer and thread-value partitions), launched
  through cute.compile(launch_copy, ...) so that the timing is the kernel's, not the tracer's;
- the compile time of each: "first" = trace + CUDA C++ + NVRTC + module load with an empty disk
  cache; "cached" = the same in a fresh process state (in-memory caches cleared) with the disk
  cache warm; "call" = calling the seed's launch_copy directly again (trace + in-memory cache +
  launch, what the seed program does).
Bandwidth counts bytes read plus bytes written (2 * n * n * 2 bytes). Times are medians of
per-launch CUDA event timings after warm-up. Every kernel's result is checked against S on
random data, with D poisoned (NaN) before the run. With --variants it also times the seed
kernels under other cache operators (CUTELAB_CUDA_LOAD / CUTELAB_CUDA_STORE).
With cuobjdump on the PATH it counts the 16-byte global loads and stores in each kernel's SASS.
"""

from __future__ import annotations

import os as _os
import sys as _sys

# this file is named copy.py: keep its folder off sys.path, or `import copy` (torch does) finds it
_here = _os.path.dirname(_os.path.abspath(__file__))
_sys.path[:] = [p for p in _sys.path if _os.path.abspath(p or ".") != _here]

import argparse
import collections
import contextlib
import datetime
import io
import json
import os
import runpy
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEEDS = {
    "inner partition (1,16) tiles": ("copy_inner_partition", ((1, 16), 256)),
    "outer partition (32,256)/(8,32)": ("copy_outer_partition", ((32, 256), (8, 32))),
    "thread-value (32,8)x(4,8)": ("copy_tv_partition", ((32, 8), (4, 8))),
}


def time_cuda(fn, iters: int, warmup: int = 10) -> float:
    """Median seconds of fn() by CUDA events, one pair per call."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for s, e in zip(starts, ends):
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends)) / 1e3


def time_cuda_batch(fn, iters: int, warmup: int = 10) -> float:
    """Seconds per call of fn() over iters back-to-back calls (one event pair), median of 5."""
    import torch

    for _ in range(warmup):
        fn()
    out = []
    for _ in range(5):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        s.record()
        for _ in range(iters):
            fn()
        e.record()
        torch.cuda.synchronize()
        out.append(s.elapsed_time(e) / 1e3 / iters)
    return statistics.median(out)


def sass_counts(cubin: bytes) -> dict:
    exe = shutil.which("cuobjdump")
    if not exe or not cubin:
        return {}
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
        path = f.name
    try:
        out = subprocess.run([exe, "-sass", path], capture_output=True, text=True, timeout=60).stdout
    finally:
        os.unlink(path)
    ops = collections.Counter()
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("/*") and ";" in line:
            ins = line.split("*/", 1)[1].split(";")[0].strip()
            if ins:
                ops[ins.split()[0]] += 1
    return {k: v for k, v in ops.items() if k.startswith(("LDG", "STG", "LDL", "STL"))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--variants", action="store_true", help="also time other cache operators")
    ap.add_argument("--out", default=None, help="directory for results.json, sources and cubins")
    args = ap.parse_args()

    import torch

    if not torch.cuda.is_available():
        sys.exit("benchmarks/copy.py needs an NVIDIA GPU")
    cache = tempfile.mkdtemp(prefix="cutelab-cache-")
    os.environ["CUTELAB_CACHE_DIR"] = cache  # an empty disk cache: "first" compiles are cold
    sys.path.insert(0, str(ROOT / "src"))
    import cutelab as cute
    from cutelab.kernel.cuda import driver
    from cutelab.kernel.cuda.nvrtc import clear_memory_cache
    from cutelab.kernel.launch.plan import last_launch
    from cutelab.runtime import from_dlpack

    out_dir = Path(args.out) if args.out else None
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)
    n = args.n
    nbytes = 2 * n * n * 2
    dev = torch.cuda.get_device_name()
    cute.cuda.initialize_cuda_context()
    torch.manual_seed(0)
    S = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    D = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)

    # warm NVRTC and the driver on an unrelated kernel, so "first" times the kernel's own compile
    @cute.kernel
    def _warm(A: cute.Tensor):
        t, _, _ = cute.arch.thread_idx()
        A[t] = A[t]

    w = torch.zeros(32, device="cuda", dtype=torch.float32)
    _warm(from_dlpack(w, assumed_align=16)).launch(grid=(1, 1, 1), block=(32, 1, 1))
    torch.cuda.synchronize()

    rows = []
    t_torch = time_cuda(lambda: D.copy_(S), args.iters)
    t_torch_b = time_cuda_batch(lambda: D.copy_(S), args.iters)
    rows.append({"name": "torch D.copy_(S)", "seconds": t_torch, "seconds_batch": t_torch_b})
    tS, tD = from_dlpack(S, assumed_align=16), from_dlpack(D, assumed_align=16)

    knobs = ("CUTELAB_CUDA_COARSEN", "CUTELAB_CUDA_REMAP", "CUTELAB_CUDA_LOAD", "CUTELAB_CUDA_STORE",
             "CUTELAB_CUDA_PAIR", "CUTELAB_CUDA_RETILE", "CUTELAB_PASSES_OFF")
    variants = [{}]  # cutelab's defaults
    if args.variants:
        variants += [
            {"CUTELAB_CUDA_REMAP": "0", "CUTELAB_CUDA_PAIR": "0", "CUTELAB_CUDA_RETILE": "0",
             "CUTELAB_CUDA_LOAD": "ldg"},  # each thread's own accesses, blocks in launch order (as CuTe DSL)
            {"CUTELAB_CUDA_RETILE": "0"},
            {"CUTELAB_CUDA_RETILE": "1"},
            {"CUTELAB_CUDA_RETILE": "1", "CUTELAB_CUDA_LOAD": "ldg"},
            {"CUTELAB_CUDA_RETILE": "1", "CUTELAB_CUDA_LOAD": "nc128"},
            {"CUTELAB_CUDA_RETILE": "0", "CUTELAB_CUDA_LOAD": "nc128"},
        ]
    for label, (modname, (a, b)) in SEEDS.items():
        mod = runpy.run_path(str(ROOT / "examples" / "seeds" / f"{modname}.py"), run_name="benchmark")
        launch_copy = mod["launch_copy"]
        for var in variants:
            for k in knobs:
                os.environ.pop(k, None)
            os.environ.update(var)
            quiet = io.StringIO()
            with contextlib.redirect_stdout(quiet):
                t0 = time.perf_counter()
                compiled = cute.compile(launch_copy, tS, tD, a, b)
                t_first = time.perf_counter() - t0
                info = last_launch()
                clear_memory_cache()
                driver._MODULES.clear()
                t0 = time.perf_counter()
                compiled = cute.compile(launch_copy, tS, tD, a, b)
                t_cached = time.perf_counter() - t0
                cached_hit = last_launch().cached
                D.fill_(float("nan"))
                t0 = time.perf_counter()
                launch_copy(tS, tD, a, b)  # the seed's own call path
                torch.cuda.synchronize()
                t_call = time.perf_counter() - t0
            ok_call = bool(torch.equal(D, S))
            D.fill_(float("nan"))
            compiled(tS, tD)
            torch.cuda.synchronize()
            ok = ok_call and bool(torch.equal(D, S))
            t = time_cuda(lambda: compiled(tS, tD), args.iters)
            tb = time_cuda_batch(lambda: compiled(tS, tD), args.iters)
            sass = sass_counts(info.cubin)
            tag = " ".join(f"{k.split('_')[-1].lower()}={v}" for k, v in var.items())
            name = label if not var else f"{label} [{tag}]"
            rows.append({
                "name": name, "seconds": t, "seconds_batch": tb, "first_compile_s": t_first,
                "cached_compile_s": t_cached, "cached_hit": cached_hit, "call_s": t_call, "correct": ok,
                "sass": sass, "kernel": info.ir.name, "grid": info.ir.grid, "block": info.ir.block,
                "cuda_grid": compiled.plans[0][0].grid,
            })
            if out_dir and not var:
                (out_dir / f"{modname}.cu").write_text(info.source)
                (out_dir / f"{modname}.cubin").write_bytes(info.cubin)
        for k in knobs:
            os.environ.pop(k, None)

    t_again = time_cuda(lambda: D.copy_(S), args.iters)
    rows.append({"name": "torch D.copy_(S), again", "seconds": t_again,
                 "seconds_batch": time_cuda_batch(lambda: D.copy_(S), args.iters)})

    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    from cutelab.kernel.cuda.nvrtc import nvrtc_version

    head = (f"{dev}, torch {torch.__version__}, NVRTC {'.'.join(map(str, nvrtc_version()))}, "
            f"{n}x{n} bf16, {when}")
    print()
    print(head)
    print("| kernel | time (us) | GB/s | % of torch | 1-launch GB/s | compile first (s) | cached (s) | call (s) | correct | SASS 16B ld/st |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        gbs = nbytes / r["seconds_batch"] / 1e9
        gbs_1 = nbytes / r["seconds"] / 1e9
        pct = 100 * t_torch_b / r["seconds_batch"]
        if "first_compile_s" in r:
            s = r["sass"]
            ld128 = sum(v for k, v in s.items() if k.startswith("LDG") and ".128" in k)
            st128 = sum(v for k, v in s.items() if k.startswith("STG") and ".128" in k)
            extra = (f" {r['first_compile_s']:.3f} | {r['cached_compile_s']:.3f} | {r['call_s']:.3f} | "
                     f"{'yes' if r['correct'] else 'NO'} | {ld128}/{st128} |")
        else:
            extra = " | | | | |"
        print(f"| {r['name']} | {r['seconds_batch'] * 1e6:.1f} | {gbs:.0f} | {pct:.1f}% | {gbs_1:.0f} |{extra}")
    for r in rows:
        if r.get("sass"):
            print(f"SASS {r['name']}: {r['sass']}")
    if out_dir:
        (out_dir / "results.json").write_text(json.dumps({"device": dev, "head": head, "rows": rows}, indent=1, default=str))
    shutil.rmtree(cache, ignore_errors=True)
    if not all(r.get("correct", True) for r in rows):
        sys.exit("some kernel produced a wrong result")


if __name__ == "__main__":
    main()
