"""quack's memory-bound kernels (quack-kernels 0.5.3) compiled by cutelab and by CuTe DSL, in one run, on a GPU.

The same quack code (its package, unchanged) runs in two processes per kernel and size: under
``cutelab run`` (cutelab compiles the kernels) and under plain Python with nvidia-cutlass-dsl (CuTe DSL
compiles them). Each process builds the inputs (bf16, seed 0), calls the kernel once (the compile),
checks the result against torch in float32 (a failed check is reported, not timed), then times it:
``--rounds`` rounds of ``--iters`` back-to-back calls between two CUDA events on the current stream,
the median per call; then ``4 * --rounds`` single launches (synchronized before and after), their
median; the bandwidth of the bytes the kernel must move (inputs read once,
outputs written once); and the GPU time per call (``--rounds`` rounds of ``--iters`` calls under
torch.profiler, the kernels' durations summed per call, median): back to back is host-bound
where a call costs the CPU more than its kernel takes, the GPU time is the compilers' part alone.

Kernels: softmax forward (x -> y), RMSNorm forward (x, w -> y), LayerNorm forward (x, w, b -> y),
cross-entropy forward (x, target -> loss, lse).

    python3 scripts/quack_tests.py --fetch .quack        # quack 0.5.3 in .quack/site (once)
    python3 benchmarks/quack_kernels.py --site .quack/site [--dsl-python PY] [--sizes 16384x4096,32768x8192]

``--dsl-python`` is the interpreter that has nvidia-cutlass-dsl, torch and Triton (quack's autotuner
imports it) for the CuTe DSL column (default: this one); the column says why when it cannot run. quack
0.5.3 asks for nvidia-cutlass-dsl 4.6.0.dev0; the version used is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

KERNELS = ("softmax", "rmsnorm", "layernorm", "cross_entropy")


def _worker(kernel: str, m: int, n: int, rounds: int, iters: int) -> dict:
    import torch

    torch.manual_seed(0)
    dev = "cuda"
    x = torch.randn(m, n, device=dev, dtype=torch.bfloat16)
    if kernel == "softmax":
        from quack.softmax import softmax

        def call():
            return softmax(x)

        ref = torch.softmax(x.float(), dim=-1)
        nbytes = 2 * x.numel() * x.element_size()
    elif kernel == "rmsnorm":
        from quack.rmsnorm import rmsnorm

        w = torch.randn(n, device=dev, dtype=torch.float32)

        def call():
            return rmsnorm(x, w, eps=1e-6)

        xf = x.float()
        ref = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w
        nbytes = 2 * x.numel() * x.element_size() + w.numel() * 4
    elif kernel == "layernorm":
        from quack.rmsnorm import layernorm_fwd

        w = torch.randn(n, device=dev, dtype=torch.float32)
        b = torch.randn(n, device=dev, dtype=torch.float32)

        def call():
            return layernorm_fwd(x, w, b, eps=1e-6)

        ref = torch.nn.functional.layer_norm(x.float(), (n,), w, b, eps=1e-6)
        nbytes = 2 * x.numel() * x.element_size() + 2 * n * 4
    elif kernel == "cross_entropy":
        from quack.cross_entropy import cross_entropy

        t = torch.randint(0, n, (m,), device=dev, dtype=torch.int64)

        def call():
            return cross_entropy(x, t, reduction="none")

        ref = torch.nn.functional.cross_entropy(x.float(), t, reduction="none")
        nbytes = x.numel() * x.element_size() + m * 8 + m * 4 * 2
    else:
        raise ValueError(kernel)
    out = call()  # compiles
    torch.cuda.synchronize()
    out = out[0] if isinstance(out, tuple) else out
    err = (out.float() - ref).abs().max().item()
    tol = 0.05 * max(1.0, ref.abs().max().item())
    if not err <= tol:
        return {"error": f"result differs from torch: max abs error {err:.3g} > {tol:.3g}"}
    times = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / iters * 1e3)  # microseconds per call
    us = statistics.median(times)
    singles = []  # one launch at a time, as a user calls it: synchronized before and after
    for _ in range(rounds * 4):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        call()
        end.record()
        end.synchronize()
        singles.append(start.elapsed_time(end) * 1e3)
    res = {"us": us, "gbps": nbytes / (us * 1e-6) / 1e9, "single_us": statistics.median(singles), "max_err": err}
    # the GPU's own time per call (torch.profiler's kernel records): what the compilers made, without the host
    # path (back-to-back figures become host-bound where a call costs the CPU more than its kernel takes)
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    per_round = []
    for _ in range(rounds):
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(iters):
                call()
            torch.cuda.synchronize()
        ks = [e.time_range.elapsed_us() for e in prof.events() if e.device_type == DeviceType.CUDA]
        if ks:
            per_round.append(sum(ks) / iters)
    if per_round:
        res["gpu_us"] = statistics.median(per_round)
    return res


def _run(cmd: list, env: dict) -> dict:
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    except OSError as e:
        return {"error": f"{cmd[0]} cannot run: {e}"}
    for line in reversed(res.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {"error": (res.stderr.strip().splitlines() or ["no output"])[-1][:300]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--site", default=".quack/site", help="where quack 0.5.3 is installed (pip --target)")
    ap.add_argument("--dsl-python", default=sys.executable, help="Python with nvidia-cutlass-dsl, for CuTe DSL")
    ap.add_argument("--sizes", default="16384x4096,32768x8192", help="MxN, joined by ','")
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--json", help="write the table here too")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        kernel, m, n = a.worker.split(":")
        print(json.dumps(_worker(kernel, int(m), int(n), a.rounds, a.iters)), flush=True)
        return
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.abspath(a.site), env.get("PYTHONPATH")) if p)
    env.setdefault("QUACK_CACHE_ENABLED", "0")  # both columns compile in the process (no .o cache)
    me = os.path.abspath(__file__)
    try:
        ver = subprocess.run([a.dsl_python, "-c", "import importlib.metadata as m; print(m.version('nvidia-cutlass-dsl'))"],
                             capture_output=True, text=True)
        dsl = ver.stdout.strip() or "not importable: " + ver.stderr.strip()[-200:]
    except OSError as e:  # no such interpreter: the CuTe DSL column fails, cutelab's is still measured
        dsl = f"--dsl-python {a.dsl_python!r} cannot run: {e}"
    print(f"nvidia-cutlass-dsl (CuTe DSL column): {dsl}")
    rows = []
    print(f"{'kernel':<14} {'M x N':<12} {'cutelab us':>11} {'GB/s':>7} {'CuTe DSL us':>12} {'GB/s':>7} "
          f"{'cutelab/DSL speed':>18} {'single: cutelab us':>19} {'DSL us':>8} {'speed':>6}")
    for size in a.sizes.split(","):
        m, n = (int(v) for v in size.lower().split("x"))
        for kernel in a.kernels.split(","):
            args = [me, "--worker", f"{kernel}:{m}:{n}", "--rounds", str(a.rounds), "--iters", str(a.iters)]
            cl = _run([sys.executable, "-m", "cutelab", "run", *args], env)
            ds = _run([a.dsl_python, "-P", *args], env)  # -P: benchmarks/copy.py must not shadow copy
            rows.append({"kernel": kernel, "m": m, "n": n, "cutelab": cl, "cute_dsl": ds})

            def cell(r: dict) -> str:
                return f"{r['us']:>11.1f} {r['gbps']:>7.0f}" if "us" in r else f"{'failed':>11} {'':>7}"

            both = "us" in cl and "us" in ds
            ratio = f"{ds['us'] / cl['us']:>17.0%}" if both else f"{'':>17}"
            single = (f"{cl['single_us']:>19.1f} {ds['single_us']:>8.1f} {ds['single_us'] / cl['single_us']:>6.0%}"
                      if both else "")
            gpu = (f"   GPU time: cutelab {cl['gpu_us']:.1f} us, CuTe DSL {ds['gpu_us']:.1f} us, "
                   f"{ds['gpu_us'] / cl['gpu_us']:.0%}" if both and "gpu_us" in cl and "gpu_us" in ds else "")
            print(f"{kernel:<14} {size:<12} {cell(cl)} {cell(ds):>20} {ratio} {single}{gpu}", flush=True)
            for name, r in (("cutelab", cl), ("CuTe DSL", ds)):
                if "error" in r:
                    print(f"    {name}: {r['error']}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
