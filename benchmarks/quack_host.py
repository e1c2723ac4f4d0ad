"""The host cost of quack's compiled calls: what one call of a ``cute.compile``'d function costs the CPU
when quack (quack-kernels 0.5.3, unchanged) calls it, in its TVM-FFI style (torch tensors, no stream
argument, runtime scalars such as rmsnorm's eps and cross-entropy's ignore_index).

Kernels and the call quack makes (M x N bf16, as benchmarks/quack_kernels.py):
- softmax: ``Softmax.compile(dtype, out_dtype, N)(x, out)``;
- rmsnorm: ``_compile_rmsnorm_fwd(...)(x, weight, None, None, out, None, None, None, eps)``;
- cross_entropy: ``CrossEntropy.compile(...)(x, target, None, loss, lse, None, None, Int32(ignore_index))``.

Rows per kernel, each measured in every round (rounds alternate the rows' order):
- ``compiled call``: the compiled function as quack calls it;
- ``quack API`` (a GPU only): quack's public function (``softmax(x)``, ``rmsnorm(x, w)``,
  ``cross_entropy(x, t)``): its torch.library operator, allocations and autograd wrapper around the call.

Per round and row: ``host p50/p99`` = single calls timed one by one with time.perf_counter_ns (no
synchronize; a synchronize every 64 calls keeps the queue short), ``b2b`` = wall time of N calls
without synchronizing plus one synchronize, divided by N, and ``b2b CPU`` = the thread's CPU time over
those N calls, divided by N (on a shared machine, what the calls cost without the time others took).
The table gives the median over rounds (and the worst round's p50).

On a machine with an NVIDIA GPU: cutelab (one process, under ``cutelab run``), then CuTe DSL (another
process, under ``--dsl-python``: a Python with nvidia-cutlass-dsl, torch and apache-tvm-ffi; the rows say
why when it cannot run):
    python3 scripts/quack_tests.py --fetch .quack        # quack 0.5.3 in .quack/site (once)
    PYTHONPATH=$PWD/src python3 benchmarks/quack_host.py --site .quack/site [--dsl-python PY]
    PYTHONPATH=$PWD/src python3 benchmarks/quack_host.py --site .quack/site --profile 25   # where the time goes
On any machine (a fake CUDA driver: the GPU launch path runs and nothing executes; cutelab only):
    PYTHONPATH=$PWD/src python3 benchmarks/quack_host.py --site .quack/site --dry-run
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ("softmax", "rmsnorm", "cross_entropy")


def _calls(kernel: str, m: int, n: int, cuda: bool, make: Callable[[Any], Any]) -> Tuple[Callable, Callable, Any]:
    """(the compiled call as quack makes it, quack's API call or None, a check of one result or None)."""
    import torch

    torch.manual_seed(0)
    x = make(torch.randn(m, n, dtype=torch.bfloat16))
    if kernel == "softmax":
        Softmax = sys.modules["quack.softmax"].Softmax
        from quack.cute_dsl_utils import torch2cute_dtype_map as dt

        out = make(torch.empty(m, n, dtype=torch.bfloat16))
        f = Softmax.compile(dt[x.dtype], dt[out.dtype], n)

        def api() -> Any:
            return sys.modules["quack.softmax"].softmax(x)

        return (lambda: f(x, out)), api, (lambda: (out, torch.softmax(x.float(), -1)))
    if kernel == "rmsnorm":
        qr = sys.modules["quack.rmsnorm"]
        from quack.cute_dsl_utils import torch2cute_dtype_map as dt

        w = make(torch.randn(n, dtype=torch.float32))
        out = make(torch.empty(m, n, dtype=torch.bfloat16))
        f = qr._compile_rmsnorm_fwd(dt[x.dtype], dt[out.dtype], None, dt[w.dtype], None, None, n, False, False,
                                    False, False)

        def ref() -> Any:
            xf = x.float()
            return out, xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w

        return (lambda: f(x, w, None, None, out, None, None, None, 1e-6)), (lambda: qr.rmsnorm(x, w, eps=1e-6)), ref
    if kernel == "cross_entropy":
        qc = sys.modules["quack.cross_entropy"]
        from cutlass import Int32
        from quack.cute_dsl_utils import torch2cute_dtype_map as dt

        t = make(torch.randint(0, n, (m,), dtype=torch.int64))
        loss = make(torch.empty(m, dtype=torch.float32))
        lse = make(torch.empty(m, dtype=torch.float32))
        f = qc.CrossEntropy.compile(dt[x.dtype], dt[t.dtype], None, n, True, False, None, None)

        def ref() -> Any:
            return loss, torch.nn.functional.cross_entropy(x.float(), t, reduction="none")

        return ((lambda: f(x, t, None, loss, lse, None, None, Int32(-100))),
                (lambda: qc.cross_entropy(x, t, reduction="none")), ref)
    raise ValueError(kernel)


def _measure(fn: Callable[[], Any], calls: int, sync: Callable[[], None]) -> Dict[str, float]:
    sync()
    t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
    for _ in range(calls):
        fn()
    sync()
    b2b = (time.perf_counter_ns() - t0) / calls / 1e3
    cpu = (time.thread_time_ns() - c0) / calls / 1e3
    ts: List[int] = []
    for i in range(calls):
        s = time.perf_counter_ns()
        fn()
        ts.append(time.perf_counter_ns() - s)
        if i % 64 == 63:
            sync()
    sync()
    ts.sort()
    return {"b2b": b2b, "cpu": cpu, "p50": ts[len(ts) // 2] / 1e3, "p99": ts[int(0.99 * len(ts))] / 1e3}


def _worker(a: argparse.Namespace) -> Dict[str, Any]:
    import torch

    m, n = (int(v) for v in a.size.lower().split("x"))
    with contextlib.ExitStack() as stack:
        if a.dry_run:
            # quack imports cuda.bindings and asks torch.cuda for the part: the emulation gives both. Then
            # the fake driver: the GPU launch path runs (nothing executes), on torch tensors that say
            # cuda:0. The emulation's TorchFunctionMode (which maps "cuda" tensors to the CPU) is left
            # while timing, so that reading a tensor costs what it costs on a GPU; torch.cuda's functions
            # (current_stream) stay the emulation's.
            import cutelab.compat as compat

            compat.install(emulate_cuda=True)
            from cutelab.compat import torch_cuda
            from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor, fake_gpu

            import quack.cross_entropy  # noqa: F401
            import quack.rmsnorm  # noqa: F401
            import quack.softmax  # noqa: F401

            stack.enter_context(fake_gpu(record=False))
            stack.enter_context(torch_cuda.tensor_mode_paused())
            make, sync, cuda = fake_cuda_tensor, (lambda: None), False
            device = "none (--dry-run: a fake CUDA driver; the compiled calls only)"
        else:
            if not torch.cuda.is_available():
                raise SystemExit("benchmarks/quack_host.py needs an NVIDIA GPU (or --dry-run)")
            import quack.cross_entropy  # noqa: F401
            import quack.rmsnorm  # noqa: F401
            import quack.softmax  # noqa: F401

            make, sync, cuda = (lambda t: t.cuda()), torch.cuda.synchronize, True
            device = torch.cuda.get_device_name()
        import io
        from contextlib import redirect_stderr, redirect_stdout

        rows: Dict[str, Callable[[], Any]] = {}
        for k in a.kernels.split(","):
            with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):  # quack's cache notes
                call, api, ref = _calls(k, m, n, cuda, make)
                call()  # compiles
            sync()
            if cuda:
                out, want = ref()
                err = (out.float() - want).abs().max().item()
                if not err <= 0.05 * max(1.0, want.abs().max().item()):
                    return {"error": f"{k}: result differs from torch: max abs error {err:.3g}"}
            rows[f"{k}: compiled call"] = call
            if cuda:
                api()
                rows[f"{k}: quack API"] = api
        names = list(rows)
        if a.profile:  # where a compiled call's time goes (cProfile's own cost inflates every entry)
            import cProfile
            import pstats

            for name in names:
                if name.endswith("compiled call"):
                    fn = rows[name]
                    for _ in range(200):
                        fn()
                    prof = cProfile.Profile()
                    prof.enable()
                    for _ in range(a.calls):
                        fn()
                    prof.disable()
                    sync()
                    print(f"--- {name}: {a.calls} calls", file=sys.stderr)
                    pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(a.profile)
            return {"device": device, "torch": torch.__version__, "python": sys.version.split()[0], "rows": {}}
        for name in names:  # warm-up
            _measure(rows[name], 200, sync)
        res: Dict[str, List[Dict[str, float]]] = {nm: [] for nm in names}
        for r in range(a.rounds):
            for name in (names if r % 2 == 0 else names[::-1]):
                res[name].append(_measure(rows[name], a.calls, sync))
    return {"device": device, "torch": torch.__version__, "python": sys.version.split()[0], "rows": res}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", default=".quack/site", help="where quack 0.5.3 is installed (pip --target)")
    ap.add_argument("--dsl-python", default=sys.executable,
                    help="the Python with nvidia-cutlass-dsl for the CuTe DSL rows (default: this one; '' for none)")
    ap.add_argument("--size", default="16384x4096", help="MxN")
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--dry-run", action="store_true", help="a fake CUDA driver (no GPU needed; cutelab only)")
    ap.add_argument("--profile", type=int, default=0, metavar="K",
                    help="instead of timing: cProfile each compiled call (--calls calls), its top K functions")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(_worker(a)), flush=True)
        return
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.abspath(a.site), env.get("PYTHONPATH"),
                                                    str(ROOT / "src")) if p)  # a given PYTHONPATH's cutelab first
    env.setdefault("QUACK_CACHE_ENABLED", "0")  # compile in the process (no .o cache)
    me = os.path.abspath(__file__)
    args = [me, "--worker", "--size", a.size, "--kernels", a.kernels, "--rounds", str(a.rounds),
            "--calls", str(a.calls), "--profile", str(a.profile)] + (["--dry-run"] if a.dry_run else [])
    runs = {"cutelab": [sys.executable, "-P", *args] if a.dry_run else [sys.executable, "-P", "-m", "cutelab", "run",
                                                                       *args]}
    if a.dsl_python and not a.dry_run:
        runs["CuTe DSL"] = [a.dsl_python, "-P", *args]
    results: Dict[str, Any] = {}
    for name, cmd in runs.items():
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if a.profile:
            print(f"=== {name}\n" + "\n".join(x for x in p.stderr.splitlines() if "quack cache" not in x))
        line = next((x for x in reversed(p.stdout.splitlines()) if x.startswith("{")), None)
        results[name] = json.loads(line) if line else {"error": (p.stderr.strip().splitlines() or ["no output"])[-1]}
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    first = next((r for r in results.values() if "rows" in r), {})
    print(f"{first.get('device', '?')}; torch {first.get('torch', '?')}; python {first.get('python', '?')}; {when}; "
          f"{a.size} bf16; {a.rounds} rounds x {a.calls} calls")
    print()
    print("| compiler | row | host p50 us, median (worst round) | host p99 us | b2b us/call | b2b CPU us/call |")
    print("|---|---|---|---|---|---|")
    for name, r in results.items():
        if "rows" not in r:
            print(f"| {name} | failed: {r.get('error')} | | | |")
            continue
        for row, xs in r["rows"].items():
            p50 = [x["p50"] for x in xs]
            print(f"| {name} | {row} | {statistics.median(p50):.2f} ({max(p50):.2f}) | "
                  f"{statistics.median(x['p99'] for x in xs):.2f} | {statistics.median(x['b2b'] for x in xs):.2f} | "
                  f"{statistics.median(x['cpu'] for x in xs):.2f} |")


if __name__ == "__main__":
    main()
