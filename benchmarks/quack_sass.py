"""quack's memory-bound kernels as ptxas and the SASS see them, cutelab's beside CuTe DSL's: no GPU needed.

cutelab's side: quack 0.5.3's compiled call (as benchmarks/quack_host.py makes it: softmax, rmsnorm,
cross_entropy at M x N bf16) runs once under the fake CUDA driver (kernel/cuda/fakegpu.py), which
records the launch's CUDA; NVRTC compiles it with the launch's options for sm_90 (as
benchmarks/fa2_sass.py does). CuTe DSL's side (``--dsl-python``, a Python with nvidia-cutlass-dsl, run
with ``CUTE_DSL_ARCH=sm_90a``): the same quack kernel class is compiled by CuTe DSL with
``--keep-ptx`` and the PTX assembled by ptxas. quack's modules import torch and tvm_ffi at the top, but
compiling a kernel from fake tensors needs neither: in that process an import hook gives stand-ins
(``unittest.mock.MagicMock`` modules) for ``torch``, ``tvm_ffi`` and ``triton``, and the kernel is
compiled without ``--enable-tvm-ffi`` (the host wrapper changes, the kernel does not).

Per kernel: ptxas's registers, the CTAs an SM holds at that register count (65536 registers, 256 per
warp allocation unit; the kernel's threads from its launch), the SASS instruction count and the
counts that tell the kernels apart (global/shared loads and their widths, shuffles, max/min, MUFU).

    PYTHONPATH=$PWD/src python3 benchmarks/quack_sass.py --site .quack/site --dsl-python /work/dslenv/bin/python
        [--kernels cross_entropy,softmax,rmsnorm] [--size 16384x4096] [--out DIR] [--cuobjdump PATH]
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]  # (benchmarks/copy.py)
KERNELS = ("cross_entropy", "softmax", "rmsnorm")
WATCH = ("LDG", "LDGSTS", "LDS", "STG", "SHFL", "FMNMX", "FADD", "FFMA", "FMUL", "MUFU", "PRMT", "IMAD", "MOV", "BRA")


def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def cutelab_cuda(kernel: str, m: int, n: int) -> Dict[str, Any]:
    """(CUDA source, kernel name, block) of quack's kernel as cutelab launches it, under the fake driver."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    import cutelab.compat as compat

    compat.install(emulate_cuda=True)
    from cutelab.compat import torch_cuda
    from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor, fake_gpu
    from cutelab.kernel.launch.plan import last_launch

    import quack.cross_entropy  # noqa: F401
    import quack.rmsnorm  # noqa: F401
    import quack.softmax  # noqa: F401

    host = _load("quack_host")
    with fake_gpu(record=True), torch_cuda.tensor_mode_paused():
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):  # quack's cache notes
            call, _, _ = host._calls(kernel, m, n, False, fake_cuda_tensor)
            call()
        info = last_launch()
    m_ = re.search(r"// grid \((\d+), (\d+), (\d+)\), block \((\d+), (\d+), (\d+)\)", info.source)
    block = [int(x) for x in m_.groups()[3:]] if m_ else None
    return {"source": info.source, "name": info.ir.name, "block": block}


def dsl_ptx(kernel: str, m: int, n: int) -> None:
    """Compile quack's kernel with CuTe DSL (this process has nvidia-cutlass-dsl): its PTX is left in the
    directory the process started in (CuTe DSL reads it at import)."""
    import importlib.abc
    import importlib.machinery
    from unittest import mock

    class _Stubs(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
            if name.split(".")[0] in ("torch", "tvm_ffi", "triton"):
                return importlib.machinery.ModuleSpec(name, self, is_package=True)
            return None

        def create_module(self, spec: Any) -> Any:
            mod = mock.MagicMock(name=spec.name)
            mod.__path__, mod.__spec__, mod.__name__ = [], spec, spec.name
            return mod

        def exec_module(self, module: Any) -> None:
            pass

    sys.meta_path.insert(0, _Stubs())
    import torch
    import torch.cuda

    torch.cuda.is_available = lambda: True  # quack's rmsnorm configs read the part at import
    torch.cuda.get_device_capability = lambda *a: (9, 0)
    torch.cuda.current_device = lambda: 0
    import math

    import cutlass.cute as cute
    from cutlass import BFloat16, Float32, Int32, Int64

    import quack.cross_entropy  # noqa: F401
    import quack.rmsnorm  # noqa: F401
    import quack.softmax  # noqa: F401
    from quack.compile_utils import make_fake_tensor

    qc, qr, qs = (sys.modules[f"quack.{k}"] for k in ("cross_entropy", "rmsnorm", "softmax"))
    compile_ = cute.compile

    def keep_ptx(*args: Any, **kw: Any) -> Any:  # quack's compile calls, without the TVM-FFI host wrapper
        kw["options"] = "--keep-ptx"
        args = tuple(cute.runtime.make_fake_stream() if "Stream" in type(a).__name__ else a for a in args)
        return compile_(*args, **kw)

    cute.compile = keep_ptx
    if kernel == "softmax":
        qs.Softmax.compile(BFloat16, BFloat16, n)
    elif kernel == "rmsnorm":  # quack_host's call: weight f32, no bias/residual/rstd, the default config
        qr._compile_rmsnorm_fwd(BFloat16, BFloat16, None, Float32, None, None, n, False, False, False, False)
    elif kernel == "cross_entropy":  # CrossEntropy.compile(bf16, int64, None, N, has_lse, no dx, ...)'s tensors
        batch = cute.sym_int()
        div = math.gcd(128 // 16, n)
        x = make_fake_tensor(BFloat16, (batch, n), div)
        t = make_fake_tensor(Int64, (batch,))
        loss, lse = make_fake_tensor(Float32, (batch,)), make_fake_tensor(Float32, (batch,))
        keep_ptx(qc.CrossEntropy(BFloat16, n, online_softmax=True), x, t, None, loss, lse, None, None, Int32(0),
                 cute.runtime.make_fake_stream())
    else:
        raise SystemExit(f"unknown kernel {kernel}")


def ctas_per_sm(registers: int, threads: int) -> int:
    """CTAs an sm_90 SM holds at this register count (registers alone: 65536 a SM, 256 a warp's unit)."""
    warps = -(-threads // 32)
    per_warp = -(-registers * 32 // 256) * 256
    return min(65536 // (per_warp * warps), 2048 // threads, 32)


def count(cubin: Path, log: str, cuobjdump: Optional[str], threads: Optional[int]) -> Dict[str, Any]:
    fa2 = _load("fa2_sass")
    rep = fa2.ptxas_report(log)
    row: Dict[str, Any] = {"registers": rep.get("registers"), "stack": rep.get("stack", 0)}
    if threads and row["registers"]:
        row["CTAs/SM"] = ctas_per_sm(row["registers"], threads)
    if cuobjdump:
        ins = fa2.sass(cubin, cuobjdump)
        ops = collections.Counter(op for _, op, _ in ins)
        row["SASS"] = len(ins)
        row.update({k: ops.get(k, 0) for k in WATCH})
        full = collections.Counter(t.split()[1] if t.startswith("@") else t.split()[0] for _, _, t in ins)
        row["forms"] = ", ".join(f"{k} {v}" for k, v in sorted(full.items())
                                 if k.split(".")[0] in ("LDG", "LDGSTS", "LDS", "STG", "FMNMX", "MUFU"))
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", default=".quack/site", help="where quack 0.5.3 is installed (pip --target)")
    ap.add_argument("--dsl-python", default="", help="a Python with nvidia-cutlass-dsl, for CuTe DSL's rows")
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--size", default="16384x4096", help="MxN")
    ap.add_argument("--cuobjdump", default=shutil.which("cuobjdump"), help="cuobjdump to read the SASS with")
    ap.add_argument("--out", help="keep each kernel's .cu / .ptx / .cubin here")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    m, n = (int(v) for v in a.size.lower().split("x"))
    if a.worker:
        side, kernel, where = a.worker.split(":", 2)
        if side == "dsl":
            dsl_ptx(kernel, m, n)
        else:
            got = cutelab_cuda(kernel, m, n)
            Path(where, "kernel.cu").write_text(got.pop("source"))
            print(json.dumps(got))
        return 0
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.abspath(a.site), env.get("PYTHONPATH")) if p)
    env.setdefault("QUACK_CACHE_ENABLED", "0")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(a.out or tmp)
        print(f"quack kernels at {m}x{n} bf16; cutelab: NVRTC sm_90; CuTe DSL: its PTX, ptxas sm_90a")
        for kernel in a.kernels.split(","):
            rows: Dict[str, Dict[str, Any]] = {}
            d = base / kernel / "cutelab"
            d.mkdir(parents=True, exist_ok=True)
            p = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", f"cutelab:{kernel}:{d}",
                                "--size", a.size], capture_output=True, text=True, env=env)
            line = next((x for x in reversed(p.stdout.splitlines()) if x.startswith("{")), None)
            if line is None:
                rows["cutelab"] = {"error": (p.stderr.strip().splitlines() or ["no output"])[-1][:300]}
                threads = None
            else:
                got = json.loads(line)
                threads = got["block"][0] * got["block"][1] * got["block"][2] if got["block"] else None
                from cutelab.kernel.cuda.nvrtc import compile_cuda

                res = compile_cuda((d / "kernel.cu").read_text(), got["name"], "sm_90", use_cache=False)
                (d / "kernel.cubin").write_bytes(res.cubin)
                rows["cutelab"] = count(d / "kernel.cubin", res.log, a.cuobjdump, threads)
            if a.dsl_python:
                d = base / kernel / "cutedsl"
                d.mkdir(parents=True, exist_ok=True)
                # run in d: CuTe DSL keeps its PTX in the directory it started in; PYTHONPATH: quack's
                # site only (this Python's own packages, cuda-python among them, are not the DSL Python's)
                p = subprocess.run([a.dsl_python, "-P", os.path.abspath(__file__), "--worker", f"dsl:{kernel}:{d}",
                                    "--size", a.size], capture_output=True, text=True, cwd=d,
                                   env={**env, "CUTE_DSL_ARCH": "sm_90a", "PYTHONPATH": os.path.abspath(a.site)})
                ptx = sorted(d.glob("*.ptx"))
                if not ptx:
                    rows["CuTe DSL"] = {"error": (p.stderr.strip().splitlines() or ["no PTX"])[-1][:300]}
                else:
                    fa2 = _load("fa2_sass")
                    cubin, log = fa2.assemble(ptx[-1], d)
                    (d / "kernel.cubin").write_bytes(cubin)
                    rows["CuTe DSL"] = count(d / "kernel.cubin", log, a.cuobjdump, threads)
            print(f"\n{kernel} (block {threads} threads)")
            for who, row in rows.items():
                forms = row.pop("forms", "")
                print(f"  {who:<9} " + ", ".join(f"{k} {v}" for k, v in row.items()))
                if forms:
                    print(f"  {'':<9} {forms}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
