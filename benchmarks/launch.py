"""Host cost of one launch, and compile time: cutelab against torch's copy_ and CuTe DSL.

On a machine with an NVIDIA GPU:
    PYTHONPATH=$PWD/src python benchmarks/launch.py [--iters 2000] [--json out.json]
On any machine (CI smoke test; a fake CUDA driver and NVRTC, nothing runs):
    PYTHONPATH=$PWD/src python benchmarks/launch.py --dry-run

Launch table: the seed copy kernels of examples/seeds and examples/dsl/elementwise_add.py on
small tensors (8 to 32 KB, so the kernels' own time is negligible), each called
- as a compiled function (``compiled = cute.compile(fn, ...)``; ``compiled(tS, tD)``) with
  Tensors made once by from_dlpack, and with torch tensors straight in;
- for cutelab also as a @cute.jit call of a launcher that prints nothing (remembered and
  replayed after its first calls);
- for CuTe DSL 4.8.1 (when ``cutlass.cute`` imports) the same programs, their import lines
  changed back, compiled by the DSL;
against torch's ``D.copy_(S)``; then the examples' benchmark calls at their default sizes
(elementwise_add 1024x1024 over 10 workspaces, as torch tensors and as mark_layout_dynamic()
Tensors, against torch.add over the same workspaces; sgemm's and tensorop_gemm's compiled calls
with their stream argument, against torch.mm / torch.bmm). Columns: "host" = time.perf_counter
over N calls without synchronizing, divided by N (what the Python thread pays per launch);
"host CPU" = the thread's CPU time for the same (least of 5: on a shared machine, the run least
disturbed by others); "+sync" = the same including one synchronize at the end; "sync each" =
with a synchronize after every call; "driver call alone" = the compiled call's prepared
cuLaunchKernel calls without anything else (the rest of "host" is argument checks and Python).
Medians of 5 repetitions after warm-up. Every row is checked once: output poisoned, one call,
compared with the expected result.

Compile table (measured first, after each compiled one unrelated kernel): first compile (empty
disk cache, in-memory caches cleared) of each program by cutelab, split into phases (trace,
bounds checks, render CUDA C++, NVRTC, module load), then again with the disk cache warm; CuTe
DSL's first ``cute.compile`` of the same program (its file cache off:
CUTE_DSL_DISABLE_FILE_CACHING=1 unless set), then again (its in-process cache).
"""

from __future__ import annotations

import os as _os
import sys as _sys

# benchmarks/ holds copy.py: keep this folder off sys.path, or `import copy` (torch does) finds it
_here = _os.path.dirname(_os.path.abspath(__file__))
_sys.path[:] = [p for p in _sys.path if _os.path.abspath(p or ".") != _here]

import argparse
import contextlib
import datetime
import importlib.util
import io
import json
import os
import re
import runpy
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

ROOT = Path(__file__).resolve().parents[1]
SEEDS = {  # name: (the seed's two launch arguments, a small bf16 shape its tiles fit)
    "copy_inner_partition": (((1, 16), 256), (64, 64)),
    "copy_outer_partition": (((32, 256), (8, 32)), (32, 256)),
    "copy_tv_partition": (((32, 8), (4, 8)), (128, 64)),
}
CONSTEXPR = {"copy_inner_partition": 1}  # trailing Constexpr arguments, which compiled calls leave out


def call_args(name: str, a: Any, b: Any) -> tuple:
    """The non-tensor arguments of a compiled call of a seed (CuTe DSL wants all but the Constexpr ones)."""
    return (a, b)[:2 - CONSTEXPR.get(name, 0)]
ADD_SHAPE = (32, 256)  # elementwise_add's tile is (16, 128) for f32
ADD_DEFAULT = (1024, 1024)  # elementwise_add.py's default --M --N; its benchmark cycles 10 workspaces
SGEMM_MNK = (256, 256, 64)  # sgemm.py's defaults: a m-major, b k-major, c n-major, dynamic b and c
TENSOROP_MNKL = (256, 256, 512, 1)  # tensorop_gemm.py's defaults: f16 in and out, f32 accumulators


class Env:
    """Where tensors live and how to wait for the device: the GPU, or the fake of --dry-run."""

    def __init__(self, dry: bool):
        import torch

        self.torch = torch
        self.dry = dry

    def wrap(self, t):
        """A CPU torch tensor on the device (its strides kept)."""
        if self.dry:
            from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor

            return fake_cuda_tensor(t)
        return t.to("cuda")

    def tensor(self, shape, dtype, fill=None):
        torch = self.torch
        if self.dry:
            from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor

            t = torch.randn(*shape).to(dtype) if fill is None else torch.full(shape, fill, dtype=dtype)
            return fake_cuda_tensor(t)
        if fill is None:
            return torch.randn(*shape, device="cuda").to(dtype)
        return torch.full(shape, fill, dtype=dtype, device="cuda")

    def sync(self) -> None:
        if not self.dry:
            self.torch.cuda.synchronize()


def host_times(fn: Callable[[], Any], sync: Callable[[], None], iters: int) -> Dict[str, float]:
    """Seconds per call: without synchronizing, including a final synchronize, and with a
    synchronize after each call (medians of 5); "cpu": the calling thread's CPU time per call
    without synchronizing (the least of 5: on a shared machine, the least disturbed run)."""
    for _ in range(20):
        fn()
    sync()
    host, total, each, cpu = [], [], [], []
    for _ in range(5):
        c0 = time.thread_time()
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        t1 = time.perf_counter()
        cpu.append((time.thread_time() - c0) / iters)
        sync()
        t2 = time.perf_counter()
        host.append((t1 - t0) / iters)
        total.append((t2 - t0) / iters)
        m = max(1, iters // 4)
        t0 = time.perf_counter()
        for _ in range(m):
            fn()
            sync()
        each.append((time.perf_counter() - t0) / m)
    return {"host": statistics.median(host), "total": statistics.median(total), "each": statistics.median(each),
            "cpu": min(cpu)}


# --------------------------------------------------------------------------- programs

_DSL_IMPORTS = [  # cutelab's import lines in our copies of the programs -> CuTe DSL's
    (r"^(\s*)import cutelab as cutlass$", r"\1import cutlass"),
    (r"^(\s*)import cutelab as cute$", r"\1import cutlass.cute as cute"),
    (r"^(\s*)import cutelab\.testing as testing$", r"\1import cutlass.cute.testing as testing"),
    (r"^(\s*)import cutelab\.torch as cutlass_torch$", r"\1import cutlass.torch as cutlass_torch"),
    (r"^(\s*)from cutelab\.runtime import from_dlpack$", r"\1from cutlass.cute.runtime import from_dlpack"),
]


def to_dsl(source: str) -> str:
    """A program of examples/ with its import lines changed back to CuTe DSL's."""
    for pat, rep in _DSL_IMPORTS:
        source = re.sub(pat, rep, source, flags=re.M)
    left = [ln for ln in source.splitlines() if "cutelab" in ln.split("#")[0]]
    if left:
        raise SystemExit(f"benchmarks/launch.py: cannot port these lines back to CuTe DSL: {left}")
    return source


def load(path: Path, dsl: bool, tmp: Path) -> Dict[str, Any]:
    """The module namespace of a program (as CuTe DSL's when dsl: written to tmp, since the DSL
    reads its functions' source files)."""
    if not dsl:
        return runpy.run_path(str(path), run_name="benchmark")
    out = tmp / f"dsl_{path.name}"
    out.write_text(to_dsl(path.read_text()))
    return runpy.run_path(str(out), run_name="benchmark")


def dsl_available() -> Optional[str]:
    """None when CuTe DSL imports, else why not."""
    if importlib.util.find_spec("cutlass") is None:
        return "cutlass (CuTe DSL) is not installed"
    try:
        import cutlass.cute  # noqa: F401
    except Exception as e:  # noqa: BLE001 - any import failure means: no DSL rows
        return f"import cutlass.cute failed: {e}"
    return None


def quiet_launcher(cute: Any, cutlass: Any, copy_kernel: Any) -> Any:
    """A @cute.jit launcher of the inner-partition seed's kernel that prints nothing itself
    (the seed's own launch_copy prints at each call, so it is never remembered)."""

    @cute.jit
    def launch_quiet(S, D, block_shape, num_threads: cutlass.Constexpr):
        tS = cute.tiled_divide(S, block_shape)
        tD = cute.tiled_divide(D, block_shape)
        grid = ((cute.size(tD, mode=[1]) * cute.size(tD, mode=[2])) // num_threads, 1, 1)
        copy_kernel(tS, tD).launch(grid=grid, block=(num_threads, 1, 1))

    return launch_quiet


_WARM = """import cutelab as cutlass
import cutelab as cute


@cute.kernel
def warm_kernel(A: cute.Tensor):
    t, _, _ = cute.arch.thread_idx()
    A[t] = A[t] + 1.0


@cute.jit
def warm(A: cute.Tensor):
    warm_kernel(A).launch(grid=(1, 1, 1), block=(32, 1, 1))
"""


_SCALE = """import cutelab as cutlass
import cutelab as cute


@cute.kernel
def scale_kernel(A: cute.Tensor, s):
    t, _, _ = cute.arch.thread_idx()
    A[t] = A[t] * s


@cute.jit
def scale(A: cute.Tensor, s):
    scale_kernel(A, s).launch(grid=(1, 1, 1), block=(32, 1, 1))
"""


def scalar_rows(env: Env, iters: int, row: Callable[..., None], tmp: Path) -> None:
    """A compiled call with a runtime scalar argument (a plain float: a runtime Float32, as in
    CuTe DSL): the same value at every call, and two values in turn (each value's trace found
    in the compiled function's cache)."""
    import cutelab as cute

    path = tmp / "scale.py"
    path.write_text(_SCALE)
    A = env.tensor((32,), env.torch.float32)
    with contextlib.redirect_stdout(io.StringIO()):
        f = cute.compile(load(path, False, tmp)["scale"], A, 2.0)

    def scale_check():
        A.fill_(1.0)
        f(A, 2.0)
        env.sync()
        return None if env.dry else bool(env.torch.all(A == 2.0))

    row("cutelab scale: compiled(a, 2.0), a runtime float argument, torch tensor", lambda: f(A, 2.0),
        scale_check, compiled=f)
    vals = [2.0, 0.5]
    state = [0]

    def two_values():
        state[0] ^= 1
        f(A, vals[state[0]])

    try:
        two_values()
        two_values()
        row("cutelab scale: compiled(a, s) with s alternating 2.0 / 0.5, torch tensor", two_values, None)
    except Exception as e:  # noqa: BLE001 - before runtime scalars: a constant, another value refused
        row_error = f"{type(e).__name__}: {str(e)[:120]}"
        print(f"scale, two values: {row_error}", file=sys.stderr)


def warm_up(env: Env, with_dsl: bool, tmp: Path) -> None:
    """Compile an unrelated kernel with each, so that first compiles below time the program's
    own compile, not imports and compiler start-up."""
    import numpy.ma  # noqa: F401  numpy imports it lazily at the first np.unique (0.1-0.3 s), which
    # cutelab's CUDA printer calls: an import cost of the process, not of the program compiled

    import cutelab as cute

    path = tmp / "warm.py"
    path.write_text(_WARM)
    A = env.tensor((32,), env.torch.float32)
    with contextlib.redirect_stdout(io.StringIO()):
        cute.compile(load(path, False, tmp)["warm"], A)
        if with_dsl:
            import cutlass.cute as dcute
            from cutlass.cute.runtime import from_dlpack as dsl_from_dlpack

            try:  # CuTe DSL's compile takes its own Tensors (a torch tensor is refused)
                dcute.compile(load(path, True, tmp)["warm"],
                              dsl_from_dlpack(A if not env.dry else env.torch.zeros(32), assumed_align=16))
            except Exception as e:  # noqa: BLE001 - the compile table then shows what fails
                print(f"CuTe DSL warm-up failed: {type(e).__name__}: {str(e)[:300]}", file=sys.stderr)


# --------------------------------------------------------------------------- measurements

def launch_rows(env: Env, iters: int, with_dsl: bool, tmp: Path) -> List[Dict[str, Any]]:
    torch = env.torch
    rows: List[Dict[str, Any]] = []

    def row(name: str, fn: Callable[[], Any], check: Any, n: int = iters, compiled: Any = None) -> None:
        ok = check() if callable(check) else check
        t = host_times(fn, env.sync, n)
        rows.append({"name": name, **t, "correct": ok})
        if compiled is not None:  # the same launches through their prepared driver calls alone
            launchers = [lau for _, lau, *_ in compiled._fast.launches if lau is not None]

            def launch_only():
                for lau in launchers:
                    lau(getattr(lau, "_h", 0) or 0)

            rows[-1]["launch only"] = host_times(launch_only, env.sync, n)["host"]

    def copy_check(fn, S, D):
        def check():
            D.fill_(float("nan"))
            fn()
            env.sync()
            return None if env.dry else bool(torch.equal(D, S))
        return check

    S0 = env.tensor(SEEDS["copy_inner_partition"][1], torch.bfloat16)
    D0 = env.tensor(SEEDS["copy_inner_partition"][1], torch.bfloat16, 0.0)
    row("torch D.copy_(S) (64x64 bf16)", lambda: D0.copy_(S0), copy_check(lambda: D0.copy_(S0), S0, D0))

    import cutelab
    import cutelab as cute
    from cutelab.runtime import from_dlpack

    for name, ((a, b), shape) in SEEDS.items():
        S, D = env.tensor(shape, torch.bfloat16), env.tensor(shape, torch.bfloat16, 0.0)
        mod = load(ROOT / "examples" / "seeds" / f"{name}.py", False, tmp)
        tS, tD = from_dlpack(S, assumed_align=16), from_dlpack(D, assumed_align=16)
        with contextlib.redirect_stdout(io.StringIO()):
            f = cute.compile(mod["launch_copy"], tS, tD, a, b)
        x = call_args(name, a, b)
        row(f"cutelab {name}: compiled(tS, tD, ...)", lambda: f(tS, tD, *x), copy_check(lambda: f(tS, tD, *x), S, D),
            compiled=f)
        row(f"cutelab {name}: compiled(S, D, ...), torch tensors", lambda: f(S, D, *x),
            copy_check(lambda: f(S, D, *x), S, D), compiled=f)
        if not env.dry:  # the same through libcuda's cuLaunchKernel called by ctypes (CUTELAB_LAUNCH=ctypes)
            with contextlib.redirect_stdout(io.StringIO()):
                fc = cute.compile(mod["launch_copy"], tS, tD, a, b)
            os.environ["CUTELAB_LAUNCH"] = "ctypes"
            try:
                check = copy_check(lambda: fc(tS, tD, *x), S, D)()  # the first call prepares the launcher
            finally:
                os.environ.pop("CUTELAB_LAUNCH", None)
            row(f"cutelab {name}: compiled(tS, tD, ...), CUTELAB_LAUNCH=ctypes", lambda: fc(tS, tD, *x), check)
        if name == "copy_inner_partition":
            q = quiet_launcher(cute, cutelab, mod["copy_kernel"])
            with contextlib.redirect_stdout(io.StringIO()):  # the kernel's trace-time prints, once
                q(tS, tD, a, b)
            q(tS, tD, a, b)
            row(f"cutelab {name}: @cute.jit call (silent launcher, remembered)", lambda: q(tS, tD, a, b),
                copy_check(lambda: q(tS, tD, a, b), S, D))
            rows[-1]["remembered"] = bool(q.calls)
            sink = io.StringIO()

            def seed_call():
                with contextlib.redirect_stdout(sink):
                    mod["launch_copy"](tS, tD, a, b)
                sink.seek(0), sink.truncate()

            row(f"cutelab {name}: the seed's @cute.jit launch_copy (prints, runs its body)", seed_call,
                copy_check(seed_call, S, D), max(1, iters // 20))

    add = load(ROOT / "examples" / "dsl" / "elementwise_add.py", False, tmp)
    A, B = env.tensor(ADD_SHAPE, torch.float32), env.tensor(ADD_SHAPE, torch.float32)
    C = env.tensor(ADD_SHAPE, torch.float32, 0.0)
    with contextlib.redirect_stdout(io.StringIO()):
        g = cute.compile(add["elementwise_add"], A, B, C)

    def add_check(fn):
        def check():
            C.fill_(float("nan"))
            fn()
            env.sync()
            return None if env.dry else bool(torch.equal(C, A + B))
        return check

    row("cutelab elementwise_add: compiled(a, b, c), torch tensors", lambda: g(A, B, C), add_check(lambda: g(A, B, C)),
        compiled=g)
    row("torch torch.add(a, b, out=c)", lambda: torch.add(A, B, out=C), add_check(lambda: torch.add(A, B, out=C)))
    example_rows(env, iters, row, add)
    scalar_rows(env, iters, row, tmp)

    if with_dsl:
        try:
            dsl_launch_rows(env, iters, tmp, row, copy_check, add_check, A, B, C)
        except Exception as e:  # noqa: BLE001 - a DSL failure is a row of the table, not the end of the run
            rows.append({"name": "CuTe DSL (failed)", "error": f"{type(e).__name__}: {str(e)[:300]}"})
    return rows


def cycling(fn: Callable[..., Any], spaces: List[tuple]) -> Callable[[], Any]:
    """A call of fn on the next workspace (as cute.testing.benchmark cycles through them)."""
    state = [0]
    k = len(spaces)

    def call():
        i = state[0]
        state[0] = (i + 1) % k
        fn(*spaces[i])

    return call


def example_rows(env: Env, iters: int, row: Callable[..., None], add: Dict[str, Any]) -> None:
    """The examples' benchmark calls at their default sizes: elementwise_add's compiled call over
    10 workspaces of torch tensors (its __main__ path) and of mark_layout_dynamic() Tensors,
    against torch.add over the same workspaces; sgemm's and tensorop_gemm's compiled calls with
    their workspace and stream arguments, against torch.mm / torch.bmm. In --dry-run the torch
    rows are left out (torch computes on the CPU there)."""
    torch = env.torch
    import cutelab as cute
    from cutelab.runtime import from_dlpack

    M, N = ADD_DEFAULT
    spaces = [(env.tensor((M, N), torch.float32), env.tensor((M, N), torch.float32),
               env.tensor((M, N), torch.float32, 0.0)) for _ in range(10)]
    with contextlib.redirect_stdout(io.StringIO()):
        g = cute.compile(add["elementwise_add"], *spaces[0])

    def add_ok(fn):
        def check():
            a, b, c = spaces[0]
            c.fill_(float("nan"))
            fn(a, b, c)
            env.sync()
            return None if env.dry else bool(torch.equal(c, a + b))
        return check

    label = f"{M}x{N} f32, 10 workspaces"
    row(f"cutelab elementwise_add ({label}): compiled(a, b, c), torch tensors", cycling(g, spaces),
        add_ok(g), max(1, iters // 4), compiled=g)
    dyn = [tuple(from_dlpack(t).mark_layout_dynamic() for t in w) for w in spaces]
    with contextlib.redirect_stdout(io.StringIO()):
        gd = cute.compile(add["elementwise_add"], *dyn[0])
    row(f"cutelab elementwise_add ({label}): compiled(a, b, c), mark_layout_dynamic() Tensors", cycling(gd, dyn),
        add_ok(lambda a, b, c: gd(*dyn[0])), max(1, iters // 4), compiled=gd)
    if not env.dry:
        row(f"torch torch.add(a, b, out=c) ({label})", cycling(lambda a, b, c: torch.add(a, b, out=c), spaces),
            add_ok(lambda a, b, c: torch.add(a, b, out=c)), max(1, iters // 4))

    import cutelab.kernel.cuda.driver as cuda

    stream = cuda.CUstream(0 if env.dry else torch.cuda.current_stream().cuda_stream)
    sg = runpy.run_path(str(ROOT / "examples" / "dsl" / "sgemm.py"), run_name="benchmark")
    m, n, k = SGEMM_MNK
    a = env.wrap(torch.empty(k, m).random_(-5, 5).permute(1, 0))  # m-major
    b = env.wrap(torch.empty(n, k).random_(-5, 5))  # k-major
    c = env.wrap(torch.zeros(m, n))
    at = from_dlpack(a, assumed_align=16)
    bt = from_dlpack(b, assumed_align=16).mark_layout_dynamic(leading_dim=1).mark_compact_shape_dynamic(
        mode=1, divisibility=b.shape[1])
    ct = from_dlpack(c, assumed_align=16).mark_layout_dynamic(leading_dim=1).mark_compact_shape_dynamic(
        mode=1, divisibility=c.shape[1])
    with contextlib.redirect_stdout(io.StringIO()):
        fs = cute.compile[cute.GenerateLineInfo](sg["SGemm"](), at, bt, ct, stream=stream)

    def sgemm_ok():
        c.fill_(float("nan"))
        fs(at, bt, ct, stream)
        env.sync()
        return None if env.dry else bool(torch.allclose(c, torch.einsum("mk,nk->mn", a, b), atol=1e-3, rtol=1e-5))

    row(f"cutelab sgemm ({m}x{n}x{k} f32): compiled(a, b, c, stream)", lambda: fs(at, bt, ct, stream), sgemm_ok,
        max(1, iters // 4), compiled=fs)
    if not env.dry:
        bt_ = b.t()
        row(f"torch torch.mm(a, b.t(), out=c) ({m}x{n}x{k} f32)", lambda: torch.mm(a, bt_, out=c), None,
            max(1, iters // 4))

    tg = runpy.run_path(str(ROOT / "examples" / "dsl" / "tensorop_gemm.py"), run_name="benchmark")
    M_, N_, K_, L_ = TENSOROP_MNKL
    F16, F32 = cute.Float16, cute.Float32
    ta = env.wrap(torch.empty(L_, K_, M_).random_(-2, 3).half().permute(0, 2, 1))  # m-major
    tb = env.wrap(torch.empty(L_, K_, N_).random_(-2, 3).half())  # n-major
    tc = env.wrap(torch.zeros(L_, M_, N_).half())  # n-major
    a_, b_, c_ = tg["mark_dynamic_layout"](ta, tb, tc, 1, 2, 2, F16, F16)
    with contextlib.redirect_stdout(io.StringIO()):
        ft = tg["compile_bmm"](TENSOROP_MNKL, a_, b_, c_, F16, F16, F32, (2, 2, 1), epilogue_op=lambda x: x)

    def tensorop_ok():
        tc.fill_(float("nan"))
        ft(a_, b_, c_, stream)
        env.sync()
        ref = torch.bmm(ta.float(), tb.float()).half()
        return None if env.dry else bool(torch.allclose(tc.float(), ref.float(), atol=1e-3, rtol=1e-5))

    row(f"cutelab tensorop_gemm ({M_}x{N_}x{K_} f16): compiled(a, b, c, stream)", lambda: ft(a_, b_, c_, stream),
        tensorop_ok, max(1, iters // 4), compiled=ft)
    if not env.dry:
        row(f"torch torch.bmm(a, b, out=c) ({M_}x{N_}x{K_} f16)", lambda: torch.bmm(ta, tb, out=tc), None,
            max(1, iters // 4))


def dsl_launch_rows(env, iters, tmp, row, copy_check, add_check, A, B, C) -> None:
    import cutlass.cute as dcute
    from cutlass.cute.runtime import from_dlpack as dfrom

    torch = env.torch
    for name, ((a, b), shape) in SEEDS.items():
        S, D = env.tensor(shape, torch.bfloat16), env.tensor(shape, torch.bfloat16, 0.0)
        mod = load(ROOT / "examples" / "seeds" / f"{name}.py", True, tmp)
        tS, tD = dfrom(S, assumed_align=16), dfrom(D, assumed_align=16)
        with contextlib.redirect_stdout(io.StringIO()):
            f = dcute.compile(mod["launch_copy"], tS, tD, a, b)
        x = call_args(name, a, b)
        row(f"CuTe DSL {name}: compiled(tS, tD, ...)", lambda: f(tS, tD, *x), copy_check(lambda: f(tS, tD, *x), S, D))
        if name == "copy_inner_partition":
            sink = io.StringIO()

            def seed_call():
                with contextlib.redirect_stdout(sink):
                    mod["launch_copy"](tS, tD, a, b)
                sink.seek(0), sink.truncate()

            row(f"CuTe DSL {name}: @cute.jit launch_copy (runs its body)", seed_call, copy_check(seed_call, S, D),
                max(1, iters // 100))
    add = load(ROOT / "examples" / "dsl" / "elementwise_add.py", True, tmp)
    with contextlib.redirect_stdout(io.StringIO()):
        g = dcute.compile(add["elementwise_add"], A, B, C)
    row("CuTe DSL elementwise_add: compiled(a, b, c), torch tensors", lambda: g(A, B, C), add_check(lambda: g(A, B, C)))


def compile_rows(env: Env, with_dsl: bool, tmp: Path) -> List[Dict[str, Any]]:
    """First compile of each program by cutelab (with its phases) and by CuTe DSL."""
    torch = env.torch
    import cutelab as cute
    from cutelab.kernel.launch.plan import last_launch
    from cutelab.runtime import from_dlpack

    kcompile = sys.modules["cutelab.kernel.cuda.nvrtc"]
    kdriver = sys.modules["cutelab.kernel.cuda.driver"]
    programs = [(name, ROOT / "examples" / "seeds" / f"{name}.py", shape, args)
                for name, (args, shape) in SEEDS.items()]
    programs.append(("elementwise_add", ROOT / "examples" / "dsl" / "elementwise_add.py", ADD_SHAPE, None))
    rows = []
    for name, path, shape, args in programs:
        def inputs(from_dl, plain=False):
            new = (lambda sh, dt, fill=None: torch.zeros(*sh, dtype=dt)) if plain else env.tensor
            if args is None:
                A, B = new(shape, torch.float32), new(shape, torch.float32)
                return ("elementwise_add", (A, B, new(shape, torch.float32, 0.0)))
            S, D = new(shape, torch.bfloat16), new(shape, torch.bfloat16, 0.0)
            return ("launch_copy", (from_dl(S, assumed_align=16), from_dl(D, assumed_align=16)) + args)

        r: Dict[str, Any] = {"name": name}
        times = {}
        for label in ("first", "disk cache"):
            mod = load(path, False, tmp)  # fresh kernels: nothing traced yet
            fn, xs = inputs(from_dlpack)
            kcompile._MEMORY.clear()
            kdriver._MODULES.clear()
            if label == "first":
                os.environ["CUTELAB_CACHE_DIR"] = tempfile.mkdtemp(prefix="cutelab-cache-", dir=tmp)
            with contextlib.redirect_stdout(io.StringIO()):
                t0 = time.perf_counter()
                cute.compile(mod[fn], *xs)
                times[label] = time.perf_counter() - t0
            if label == "first":
                r["phases"] = dict(last_launch().phases)
        r["cutelab first (s)"] = times["first"]
        r["cutelab disk cache (s)"] = times["disk cache"]
        if with_dsl:
            import cutlass.cute as dcute
            from cutlass.cute.runtime import from_dlpack as dfrom

            try:
                for label in ("first", "memory cache"):  # the DSL's in-process cache, by the traced module's hash
                    mod = load(path, True, tmp)
                    fn, xs = inputs(dfrom, plain=env.dry)  # --dry-run: CuTe DSL compiles host tensors
                    with contextlib.redirect_stdout(io.StringIO()):
                        t0 = time.perf_counter()
                        dcute.compile(mod[fn], *xs)
                        r[f"CuTe DSL {label} (s)"] = time.perf_counter() - t0
            except Exception as e:  # noqa: BLE001 - reported in the table
                r["CuTe DSL error"] = f"{type(e).__name__}: {str(e)[:300]}"
        rows.append(r)
    return rows


# --------------------------------------------------------------------------- main

def main(argv: Optional[List[str]] = None) -> Dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iters", type=int, default=2000, help="calls per timing (default 2000)")
    ap.add_argument("--dry-run", action="store_true", help="fake CUDA driver and NVRTC: the host path only")
    ap.add_argument("--no-dsl", action="store_true", help="leave CuTe DSL out even when it imports")
    ap.add_argument("--nvcc", action="store_true",
                    help="with --dry-run: compile each kernel with nvcc too (the NVRTC column is then nvcc's time)")
    ap.add_argument("--json", default=None, help="write the results to this file")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    import torch

    if not args.dry_run and not torch.cuda.is_available():
        raise SystemExit("benchmarks/launch.py needs an NVIDIA GPU (or --dry-run)")
    os.environ.setdefault("CUTE_DSL_DISABLE_FILE_CACHING", "1")  # first compiles are first, run after run
    why_no_dsl = "left out (--no-dsl)" if args.no_dsl else dsl_available()
    with_dsl = why_no_dsl is None
    env = Env(args.dry_run)
    saved_cache = os.environ.get("CUTELAB_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="cutelab-launch-bench-") as tmpd, contextlib.ExitStack() as stack:
        tmp = Path(tmpd)
        os.environ["CUTELAB_CACHE_DIR"] = str(tmp / "cache")
        if args.dry_run:
            from cutelab.kernel.cuda.fakegpu import fake_gpu

            nvcc = shutil.which("nvcc") if args.nvcc else None
            if args.nvcc and not nvcc:
                raise SystemExit("--nvcc: nvcc is not on the PATH")
            stack.enter_context(fake_gpu(record=False, cache_dir=str(tmp / "cache"), nvcc=nvcc))
            device = ("none (--dry-run: fake CUDA driver and NVRTC; no kernel runs"
                      + ("; NVRTC column: nvcc -cubin" if nvcc else "") + ")")
        else:
            import cutelab

            cutelab.cuda.initialize_cuda_context()
            device = torch.cuda.get_device_name()
        try:
            warm_up(env, with_dsl, tmp)
            compiles = compile_rows(env, with_dsl, tmp)  # first: CuTe DSL caches what it compiled in-process
            launches = launch_rows(env, args.iters, with_dsl and not args.dry_run, tmp)
        finally:
            if saved_cache is None:
                os.environ.pop("CUTELAB_CACHE_DIR", None)
            else:
                os.environ["CUTELAB_CACHE_DIR"] = saved_cache

    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    head = f"{device}; torch {torch.__version__}; python {sys.version.split()[0]}; {when}"
    if not with_dsl:
        head += f"; CuTe DSL: {why_no_dsl}"
    elif args.dry_run:
        head += "; CuTe DSL: compile times only (its launches need a GPU)"
    print(head)
    print()
    torch_host = launches[0]["host"]
    print("| launch | host (us/call) | host CPU (us/call) | +sync (us/call) | sync each (us/call) | "
          "host vs torch copy_ | driver call alone (us) | correct |")
    print("|---|---|---|---|---|---|---|---|")
    for r in launches:
        if "error" in r:
            print(f"| {r['name']} | {r['error']} | | | | | | |")
            continue
        ok = "n/a" if r["correct"] is None else ("yes" if r["correct"] else "NO")
        alone = f"{r['launch only'] * 1e6:.2f}" if "launch only" in r else ""
        print(f"| {r['name']} | {r['host'] * 1e6:.2f} | {r['cpu'] * 1e6:.2f} | {r['total'] * 1e6:.2f} | "
              f"{r['each'] * 1e6:.2f} | {r['host'] / torch_host:.2f}x | {alone} | {ok} |")
    print()
    print("| compile (first call) | cutelab (s) | trace | bounds checks | render | NVRTC | module load | "
          "cutelab, disk cache warm (s) | CuTe DSL (s) | CuTe DSL, in-process cache (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in compiles:
        ph = r.get("phases", {})
        nv = ph.get("nvrtc", ph.get("compile cache"))
        cells = [f"{v:.4f}" if v is not None else "" for v in
                 (r["cutelab first (s)"], ph.get("trace"), ph.get("bounds checks"), ph.get("render"), nv,
                  ph.get("module load"), r["cutelab disk cache (s)"], r.get("CuTe DSL first (s)"),
                  r.get("CuTe DSL memory cache (s)"))]
        print(f"| {r['name']} | " + " | ".join(cells) + " |")
        if "CuTe DSL error" in r:
            print(f"|   CuTe DSL failed on {r['name']}: {r['CuTe DSL error']} | | | | | | | | | |")
    out = {"head": head, "device": device, "dry_run": args.dry_run, "iters": args.iters,
           "launch": launches, "compile": compiles}
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    bad = [r["name"] for r in launches if r.get("correct") is False]
    if bad:
        raise SystemExit(f"wrong results: {bad}")
    return out


if __name__ == "__main__":
    main()
