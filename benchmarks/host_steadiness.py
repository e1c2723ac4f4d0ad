"""Is a compiled call's cost steady? Per-call host times of elementwise_add's compiled call against
torch.add, round by round, and what moves them.

On a machine with an NVIDIA GPU:
    PYTHONPATH=$PWD/src python benchmarks/host_steadiness.py [--rounds 7] [--calls 2000]
On any machine (a fake CUDA driver, nothing runs on a GPU; checks that the script works):
    PYTHONPATH=$PWD/src python benchmarks/host_steadiness.py --dry-run

The problem: examples/dsl/elementwise_add.py at its default size (1024x1024 f32, 10 workspaces),
a call so short that its host cost decides the back-to-back rate. Rows, each run in every round,
the rounds alternating the rows' order:
- ``torch.add``: ``torch.add(a, b, out=c)`` over the workspaces (the anchor);
- ``cutelab, Tensors``: the compiled call with mark_layout_dynamic() Tensors (the example's call);
- ``cutelab, torch tensors``: the compiled call with the torch tensors themselves;
- ``cutelab, Tensors, stream=``: the first with an explicit stream (no current-stream lookup);
- ``cutelab, Tensors, gc off``: the first with the garbage collector disabled for the round;
- ``driver call alone``: the compiled call's prepared cuLaunchKernel, nothing else.

Per round and row: ``b2b`` = wall time of N calls without synchronizing plus one synchronize,
divided by N (what dsl_examples.py reports); ``host p50/p99`` = the distribution of single calls'
host times (time.perf_counter around each call, no synchronize); ``gc`` = garbage collections
that ran during the row's calls. The table gives per row the median over rounds and the worst
round, and the ratio to torch.add's b2b in the same round.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.util
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

ROOT = Path(__file__).resolve().parents[1]
# benchmarks/ holds copy.py: keep this folder off sys.path, or `import copy` (torch does) finds it
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]


def load_example() -> Any:
    spec = importlib.util.spec_from_file_location("elementwise_add", ROOT / "examples/dsl/elementwise_add.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def measure(fn: Callable[[int], Any], calls: int, sync: Callable[[], None], gc_off: bool) -> Dict[str, float]:
    """One round of one row: b2b us/call, single calls' host p50/p99, garbage collections."""
    collections: List[int] = []

    def on_gc(phase: str, info: Dict[str, Any]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    sync()
    gc.callbacks.append(on_gc)
    was = gc.isenabled()
    if gc_off:
        gc.disable()
    try:
        t0 = time.perf_counter()
        for i in range(calls):
            fn(i)
        sync()
        b2b = (time.perf_counter() - t0) / calls * 1e6
        ts = []
        for i in range(calls):
            s = time.perf_counter()
            fn(i)
            ts.append(time.perf_counter() - s)
            if i % 64 == 63:
                sync()  # keep the queue short: host times, not back-pressure
        sync()
    finally:
        if gc_off and was:
            gc.enable()
        gc.callbacks.remove(on_gc)
    ts.sort()
    return {"b2b": b2b, "p50": ts[len(ts) // 2] * 1e6, "p99": ts[int(0.99 * len(ts))] * 1e6,
            "gc": float(len(collections))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--dry-run", action="store_true", help="a fake CUDA driver (no GPU needed)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    import torch

    import cutelab as cute
    from cutelab.runtime import from_dlpack

    with contextlib.ExitStack() as stack:
        if args.dry_run:
            from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor, fake_gpu

            stack.enter_context(fake_gpu(record=False))

            def make(zero: bool = False) -> Any:
                return fake_cuda_tensor(torch.zeros(1024, 1024) if zero else torch.randn(1024, 1024))

            def sync() -> None:
                return None

            device = "none (--dry-run: fake CUDA driver)"
        else:
            if not torch.cuda.is_available():
                raise SystemExit("benchmarks/host_steadiness.py needs an NVIDIA GPU (or --dry-run)")

            def make(zero: bool = False) -> Any:
                return (torch.zeros if zero else torch.randn)(1024, 1024, device="cuda")

            sync = torch.cuda.synchronize
            device = torch.cuda.get_device_name()
        ex = load_example()
        W = 10
        ws = [[make(), make(), make(zero=True)] for _ in range(W)]
        tens = [[from_dlpack(t, assumed_align=16).mark_layout_dynamic() for t in w] for w in ws]
        import io
        from contextlib import redirect_stdout

        with redirect_stdout(io.StringIO()):  # the example's trace-time prints
            c_t = cute.compile(ex.elementwise_add, *tens[0])
            c_torch = cute.compile(ex.elementwise_add, *ws[0])
        c_t(*tens[0])
        sync()
        if not args.dry_run:
            torch.testing.assert_close(ws[0][2], ws[0][0] + ws[0][1])
        stream = torch.cuda.current_stream() if not args.dry_run else 0
        launchers = [lau for _, lau, *_ in c_t._fast.launches if lau is not None]
        h = int(stream.cuda_stream) if not args.dry_run else 0
        rows: Dict[str, Callable[[int], Any]] = {
            "torch.add": lambda i: torch.add(ws[i % W][0], ws[i % W][1], out=ws[i % W][2]),
            "cutelab, Tensors": lambda i: c_t(*tens[i % W]),
            "cutelab, torch tensors": lambda i: c_torch(*ws[i % W]),
            "cutelab, Tensors, stream=": lambda i: c_t(*tens[i % W], stream=stream),
            "cutelab, Tensors, gc off": lambda i: c_t(*tens[i % W]),
            "driver call alone": lambda i: [lau(h) for lau in launchers],
        }
        names = list(rows)
        for name in names:  # warm-up
            measure(rows[name], 200, sync, False)
        res: Dict[str, List[Dict[str, float]]] = {n: [] for n in names}
        for r in range(args.rounds):
            order = names if r % 2 == 0 else names[::-1]
            for name in order:
                res[name].append(measure(rows[name], args.calls, sync, name.endswith("gc off")))

    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"{device}; torch {torch.__version__}; python {sys.version.split()[0]}; {when}; "
          f"{args.rounds} rounds x {args.calls} calls")
    print()
    print("| row | b2b us/call, median (worst round) | % of torch.add b2b, median (worst round) | "
          "host p50 us | host p99 us, median (worst) | gc per round |")
    print("|---|---|---|---|---|---|")
    base = [x["b2b"] for x in res["torch.add"]]
    for name in names:
        xs = res[name]
        b2b = [x["b2b"] for x in xs]
        pct = [100.0 * t / m for t, m in zip(base, b2b)]
        print(f"| {name} | {statistics.median(b2b):.2f} ({max(b2b):.2f}) | {statistics.median(pct):.0f}% "
              f"({min(pct):.0f}%) | {statistics.median(x['p50'] for x in xs):.2f} | "
              f"{statistics.median(x['p99'] for x in xs):.2f} ({max(x['p99'] for x in xs):.2f}) | "
              f"{statistics.median(x['gc'] for x in xs):.0f} |")
    print()
    print("per round, b2b us/call:")
    for name in names:
        print(f"  {name:28s} " + " ".join(f"{x['b2b']:6.2f}" for x in res[name]))


if __name__ == "__main__":
    main()
