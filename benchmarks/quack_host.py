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

PHASES (``--phases``): quack's API call taken apart, each piece timed alone in the same process, so that the
two compilers' columns say where a difference lies:
- ``torch empty_like`` (an allocation of the input's size), ``torch kernel launch`` (``zero_()`` of a
  one-element tensor: torch's own launch path), ``torch no-op custom op`` (a torch.library operator made here
  with quack's operator's schema, whose body does nothing, called with quack's arguments): none runs any of
  the compiler's or quack's code. A difference between the processes here is the process's own
  (something installed that slows every torch call or dispatch);
- ``quack jit_cache lookup``: quack's cache lookup of the compiled function, as its operator's body makes it;
- ``compiled call, new output``: the compiled call with its output allocated at each call (quack's API gives
  a new tensor at each call): minus ``compiled call`` and ``torch empty_like``, what a new tensor costs the call;
- ``quack op body``: the operator's Python function called directly (its checks, the lookup, the call);
- ``quack op`` (a GPU only): the operator through torch's dispatcher: minus the body, torch's dispatch;
- ``quack API``: minus ``quack op``, quack's autograd.Function, reshapes and allocations.
Under each compiler's table, what of its process could slow every call, watched while timing: imports that
consulted sys.meta_path, garbage collections, finders, trace/profile functions, torch function modes, threads.

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
    PYTHONPATH=$PWD/src python3 benchmarks/quack_host.py --site .quack/site --phases [--dsl-python PY]  # taken apart
    PYTHONPATH=$PWD/src python3 benchmarks/quack_host.py --site .quack/site --profile 25   # where the time goes
On any machine (a fake CUDA driver: the GPU launch path runs and nothing executes; cutelab only):
    PYTHONPATH=$PWD/src python3 benchmarks/quack_host.py --site .quack/site --dry-run
"""

from __future__ import annotations

import argparse
import contextlib
import gc
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


def _calls(kernel: str, m: int, n: int, cuda: bool, make: Callable[[Any], Any]) -> Dict[str, Any]:
    """The pieces of one kernel's call, as quack makes them: ``call`` (the compiled call), ``api`` (quack's
    public function; a GPU only), ``ref`` (a check of one result), and for ``--phases``: ``lookup`` (quack's
    jit_cache lookup of the compiled function, as its operator's body makes it), ``fresh`` (the compiled call
    with a newly allocated output, as quack's API gives it), ``op`` and ``op_args`` (quack's torch.library
    operator, the CustomOpDef, and the arguments its API passes it)."""
    import torch

    torch.manual_seed(0)
    x = make(torch.randn(m, n, dtype=torch.bfloat16))
    new = make if not cuda else (lambda t: t)  # an output allocated at the call (on a GPU: already there)
    if kernel == "softmax":
        qs = sys.modules["quack.softmax"]
        from quack.cute_dsl_utils import torch2cute_dtype_map as dt

        out = make(torch.empty(m, n, dtype=torch.bfloat16))
        lookup = lambda: qs.Softmax.compile(dt[x.dtype], dt[out.dtype], n)  # noqa: E731
        f = lookup()
        return {"call": lambda: f(x, out), "api": lambda: qs.softmax(x),
                "ref": lambda: (out, torch.softmax(x.float(), -1)), "lookup": lookup,
                "fresh": lambda: f(x, new(torch.empty_like(out))), "op": qs._softmax_fwd, "op_args": (x, out)}
    if kernel == "rmsnorm":
        qr = sys.modules["quack.rmsnorm"]
        from quack.cute_dsl_utils import torch2cute_dtype_map as dt

        w = make(torch.randn(n, dtype=torch.float32))
        out = make(torch.empty(m, n, dtype=torch.bfloat16))
        lookup = lambda: qr._compile_rmsnorm_fwd(dt[x.dtype], dt[out.dtype], None, dt[w.dtype], None,  # noqa: E731
                                                 None, n, False, False, False, False)
        f = lookup()

        def ref() -> Any:
            xf = x.float()
            return out, xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w

        return {"call": lambda: f(x, w, None, None, out, None, None, None, 1e-6),
                "api": lambda: qr.rmsnorm(x, w, eps=1e-6), "ref": ref, "lookup": lookup,
                "fresh": lambda: f(x, w, None, None, new(torch.empty_like(out)), None, None, None, 1e-6),
                "op": qr._rmsnorm_fwd, "op_args": (x, w, out, None, None, None, None, None, 1e-6, False)}
    if kernel == "cross_entropy":
        qc = sys.modules["quack.cross_entropy"]
        from cutlass import Int32
        from quack.cute_dsl_utils import torch2cute_dtype_map as dt

        t = make(torch.randint(0, n, (m,), dtype=torch.int64))
        loss = make(torch.empty(m, dtype=torch.float32))
        lse = make(torch.empty(m, dtype=torch.float32))
        lookup = lambda: qc.CrossEntropy.compile(dt[x.dtype], dt[t.dtype], None, n, True, False,  # noqa: E731
                                                 None, None)
        f = lookup()

        def ref() -> Any:
            return loss, torch.nn.functional.cross_entropy(x.float(), t, reduction="none")

        return {"call": lambda: f(x, t, None, loss, lse, None, None, Int32(-100)),
                "api": lambda: qc.cross_entropy(x, t, reduction="none"), "ref": ref, "lookup": lookup,
                "fresh": lambda: f(x, t, None, new(torch.empty_like(loss)), new(torch.empty_like(lse)), None, None,
                                   Int32(-100)),
                "op": qc.cross_entropy_fwd_out, "op_args": (x, t, None, loss, lse, None, None, -100)}
    raise ValueError(kernel)


def _noop_like(op: Any, device_type: str) -> Any:
    """A torch.library custom operator with op's schema (its mutated arguments too) whose body does nothing:
    torch's dispatch of such an operator in this process, without quack's or the compiler's code."""
    import torch

    schema = op._opoverload._schema
    name = f"quack_host::noop_{op._opoverload.__name__.split('.')[0].lstrip('_')}_{device_type}"
    mutated = [a.name for a in schema.arguments if a.alias_info is not None and a.alias_info.is_write]
    text = str(schema)
    noop = torch.library.custom_op(name, lambda *args, **kwargs: None, mutates_args=mutated,
                                   schema=text[text.index("("):], device_types=device_type)
    noop.register_fake(lambda *args, **kwargs: None)
    return noop


def _phase_rows(k: str, parts: Dict[str, Any], cuda: bool) -> Dict[str, Callable[[], Any]]:
    """--phases: quack's API call taken apart, each piece timed alone (see PHASES)."""
    import torch

    op, args = parts["op"], parts["op_args"]
    x = args[0]
    noop = _noop_like(op, "cuda" if cuda else "cpu")
    z = x.new_empty(1)  # (on the fake tensors: a CPU one)
    rows = {
        f"{k}: torch empty_like": lambda: torch.empty_like(x),
        f"{k}: torch kernel launch": z.zero_,
        f"{k}: torch no-op custom op": lambda: noop(*args),
        f"{k}: quack jit_cache lookup": parts["lookup"],
        f"{k}: compiled call, new output": parts["fresh"],
        f"{k}: quack op body": lambda: op._init_fn(*args),
    }
    if cuda:  # (the fake tensors dispatch to torch's CPU kernels, where quack's operator has none)
        rows[f"{k}: quack op"] = lambda: op(*args)
    return rows


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
            from cutelab.compat import torch_cuda, torch_ops

            torch_ops.disable()  # quack's operators (not called here) and --phases' no-op one register as on a GPU
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
                parts = _calls(k, m, n, cuda, make)
                parts["call"]()  # compiles
            sync()
            if cuda:
                out, want = parts["ref"]()
                err = (out.float() - want).abs().max().item()
                if not err <= 0.05 * max(1.0, want.abs().max().item()):
                    return {"error": f"{k}: result differs from torch: max abs error {err:.3g}"}
            rows[f"{k}: compiled call"] = parts["call"]
            if a.phases:
                rows.update(_phase_rows(k, parts, cuda))
            if cuda:
                rows[f"{k}: quack API"] = parts["api"]
        for fn in rows.values():  # each row once before timing (the API's first call allocates, ...)
            fn()
        sync()
        names = list(rows)
        if a.gc == "off":
            gc.disable()
        elif a.gc == "freeze":
            gc.collect()
            gc.freeze()
        if a.profile:  # where a call's time goes (cProfile's own cost inflates every entry)
            import cProfile
            import pstats

            for name in names:
                if name.endswith(("compiled call", "quack API")):
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
        with _ProcessWatch() as watch:
            for r in range(a.rounds):
                for name in (names if r % 2 == 0 else names[::-1]):
                    res[name].append(_measure(rows[name], a.calls, sync))
        facts = watch.facts()
    return {"device": device, "torch": torch.__version__, "python": sys.version.split()[0], "rows": res,
            "facts": facts}


class _ProcessWatch:
    """What of the process could slow every call, watched while the rows are timed: imports that consult
    sys.meta_path (a module not yet imported, or a failed import, at each call), garbage collections by
    generation, and, at the end, the finders, trace and profile functions, torch's function modes, threads."""

    def __init__(self) -> None:
        self.lookups: Dict[str, int] = {}
        self.collections = [0, 0, 0]
        self.gc_ms = 0.0
        self._t0 = 0.0

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        self.lookups[name] = self.lookups.get(name, 0) + 1
        return None

    def _gc(self, phase: str, info: Dict[str, Any]) -> None:
        if phase == "start":
            self._t0 = time.perf_counter()
        else:
            self.collections[info["generation"]] += 1
            self.gc_ms += (time.perf_counter() - self._t0) * 1e3

    def __enter__(self) -> "_ProcessWatch":
        sys.meta_path.insert(0, self)  # type: ignore[arg-type]
        gc.callbacks.append(self._gc)
        return self

    def __exit__(self, *exc: Any) -> None:
        sys.meta_path.remove(self)  # type: ignore[arg-type]
        gc.callbacks.remove(self._gc)

    def facts(self) -> Dict[str, Any]:
        import threading

        import torch

        modes = getattr(torch.overrides, "_get_current_function_mode_stack", lambda: [])()
        try:
            with open("/proc/self/status") as f:
                threads = next((ln.split()[1] for ln in f if ln.startswith("Threads:")), "?")
        except OSError:
            threads = "?"
        top = sorted(self.lookups.items(), key=lambda kv: -kv[1])[:5]
        return {
            "python": f"{sys.executable} {sys.version.split()[0]}",
            "torch": f"{torch.__version__} ({os.path.dirname(torch.__file__)})",
            "imports looked up while timing": ", ".join(f"{k} x{v}" for k, v in top) or "none",
            "gc collections while timing (gen 0/1/2), ms": f"{self.collections} {self.gc_ms:.1f}",
            "gc-tracked objects": len(gc.get_objects()),
            "sys.meta_path": ", ".join(type(f).__name__ for f in sys.meta_path),
            "trace / profile functions": f"{sys.gettrace()!r} / {sys.getprofile()!r}",
            "torch function modes": ", ".join(type(m).__name__ for m in modes) or "none",
            "threads (Python / OS)": f"{threading.active_count()} / {threads}",
            "torch intra-op threads": torch.get_num_threads(),
        }


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
                    help="instead of timing: cProfile each compiled call and quack API row (--calls calls), "
                         "its top K functions")
    ap.add_argument("--phases", action="store_true",
                    help="also time quack's API call taken apart (see PHASES in the module's docstring)")
    ap.add_argument("--gc", choices=("on", "off", "freeze"), default="on",
                    help="Python's garbage collector while timing: on (as is), off, or the objects so far frozen")
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
            "--calls", str(a.calls), "--profile", str(a.profile), "--gc", a.gc] + (["--dry-run"] if a.dry_run else []) + (
                ["--phases"] if a.phases else [])
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
    ok = {name: r for name, r in results.items() if "rows" in r}
    if len(ok) > 1:
        _side_by_side(ok)
    for name, r in ok.items():
        print()
        print(f"{name}'s process while timing: " + "; ".join(f"{k}: {v}" for k, v in r.get("facts", {}).items()))


def _side_by_side(results: Dict[str, Any]) -> None:
    """One row per timed row, the compilers side by side: host p50 and the thread's CPU time per call, and
    the first compiler's excess over the second's."""
    (na, ra), (nb, rb) = list(results.items())[:2]
    med = lambda xs, key: statistics.median(x[key] for x in xs)  # noqa: E731
    print()
    print(f"| row | {na} p50 us | {nb} p50 us | {na} - {nb} p50 | {na} CPU us | {nb} CPU us | {na} - {nb} CPU |")
    print("|---|---|---|---|---|---|---|")
    for row, xs in ra["rows"].items():
        ys = rb["rows"].get(row)
        if not ys:
            continue
        pa, pb, ca, cb = med(xs, "p50"), med(ys, "p50"), med(xs, "cpu"), med(ys, "cpu")
        print(f"| {row} | {pa:.2f} | {pb:.2f} | {pa - pb:+.2f} | {ca:.2f} | {cb:.2f} | {ca - cb:+.2f} |")


if __name__ == "__main__":
    main()
