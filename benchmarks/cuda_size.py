"""How big a program's kernel is as CUDA, and how long it takes to compile: on any machine, no GPU needed.

A program runs as ``cutelab run`` runs it, on the emulated device (even where a GPU is present), up to
its first kernel launch (``--launch N``: its N-th). That launch's kernel, traced as the program asked,
goes through the bounds proofs a GPU launch makes and is printed as the CUDA a launch compiles; then the
process ends: the CPU interpreter never runs the kernel, so a size that would take it hours costs only
the trace. Reported per run: the CUDA's lines and bytes, the runtime loops in it (``while (true)`` and
``for (`` heads), the seconds to reach the launch (the program's own setup and the trace), to trace, and
to print. With ``--compile`` the CUDA is also compiled for sm_90a (sm_90 where it holds no wgmma or
setmaxnreg) as a launch compiles it: NVRTC with cutelab's options (``nvrtc.compile_cuda``, no cache), or
with ``--nvcc`` nvcc with the same options (a stand-in where NVRTC is not installed: its times are nvcc's);
ptxas's registers and spills come with it.

The programs are dsl_examples.py's, at its presets (CUTLASS's files under tests/compat/programs, unchanged,
or examples/dsl's), or any program given after ``--``::

    PYTHONPATH=$PWD/src python benchmarks/cuda_size.py --only hopper_fmha --sizes default,large [--compile] [--nvcc]
    PYTHONPATH=$PWD/src python benchmarks/cuda_size.py [--compile] [--out DIR] -- PROGRAM.py ARGS...

A kernel whose loops stay loops prints the same number of lines at every problem size (CUTLASS's Hopper
FMHA: benchmarks/RESULTS.md); one that grows with the size has a loop unrolled at trace time.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "benchmarks"
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]  # (benchmarks/copy.py)


def _examples() -> Tuple[Dict[str, Any], Dict[str, str]]:
    """dsl_examples.py's EXAMPLES (name -> (file, presets)) and UNCHANGED (name -> CUTLASS's file)."""
    spec = importlib.util.spec_from_file_location("dsl_examples", HERE / "dsl_examples.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.EXAMPLES, mod.UNCHANGED


def cases(only: str, sizes: str) -> List[Tuple[str, str, List[str]]]:
    """(label, program path, argv) for each example and size preset asked for."""
    examples, unchanged = _examples()
    out = []
    for name in only.split(","):
        if name not in examples:
            raise SystemExit(f"cuda_size: no example {name!r} (known: {', '.join(examples)})")
        file, presets = examples[name][0], examples[name][1]
        path = unchanged.get(name) or str(ROOT / "examples" / "dsl" / file)
        for size in sizes.split(","):
            if size not in presets:  # skipped, as dsl_examples.py skips it
                print(f"cuda_size: {name} has no size preset {size!r} (it has {', '.join(presets)}): skipped",
                      file=sys.stderr)
                continue
            out.append((f"{name} {size}", path, list(presets[size])))
    return out


# --------------------------------------------------------------------------- the child: run up to the launch

def child(out_json: str, out_cu: str, launch: int, argv: Sequence[str]) -> None:
    """Run the program (argv) as `cutelab run`, emulated; at its launch-th kernel launch print the CUDA to
    out_cu, the numbers to out_json, and end the process."""
    t_start = time.perf_counter()
    from cutelab.kernel.cuda import driver

    driver.gpu_available = lambda: False  # emulate even on a GPU machine: the launch must not run
    from cutelab.kernel.analysis.bounds import check_bounds
    from cutelab.kernel.cuda import printer
    from cutelab.kernel.launch import plan as launch_plan

    seen = [0]

    def run(self: Any, storages: Any, stream: Any = None, scalars: Any = ()) -> None:
        seen[0] += 1
        if seen[0] < launch:
            return  # an earlier kernel: skipped (what it would write is not needed to print a later one)
        t_reach = time.perf_counter() - t_start
        info = launch_plan.last_launch()
        ir = self.ir
        t0 = time.perf_counter()
        check_bounds(ir, "gpu", launch_scalars={})  # what a GPU launch does first (guards where it cannot prove)
        t1 = time.perf_counter()
        src = printer.render(ir)
        t2 = time.perf_counter()
        with open(out_cu, "w") as f:
            f.write(src)
        body = src.split("__global__", 1)[-1]
        res = {"kernel": ir.name, "lines": src.count("\n"), "bytes": len(src.encode()),
               "while_loops": len(re.findall(r"\bwhile \(true\) \{", body)), "for_loops": len(re.findall(r"\bfor \(", body)),
               "to_launch_s": round(t_reach, 3), "trace_s": round(getattr(info, "trace_seconds", 0.0) or 0.0, 3),
               "bounds_s": round(t1 - t0, 3), "print_s": round(t2 - t1, 3)}
        with open(out_json, "w") as f:
            json.dump(res, f)
        sys.stdout.flush()
        os._exit(0)

    launch_plan._Plan.run = run
    from cutelab.compat.run import main as run_main

    rc = run_main(list(argv))
    print(f"cuda_size: the program ended (exit {rc}) after {seen[0]} launch(es), before launch {launch}",
          file=sys.stderr)
    sys.exit(3)


# --------------------------------------------------------------------------- compiling

def _arch(src: str) -> str:
    return "sm_90a" if ("wgmma." in src or "setmaxnreg" in src) else "sm_90"


def ptxas_report(log: str) -> Dict[str, int]:
    out = {}
    for key, rx in (("registers", r"Used (\d+) registers"), ("stack", r"(\d+) bytes stack frame"),
                    ("spill_stores", r"(\d+) bytes spill stores"), ("spill_loads", r"(\d+) bytes spill loads")):
        m = re.search(rx, log)
        if m:
            out[key] = int(m.group(1))
    return out


def compile_source(src: str, name: str, nvcc: bool, timeout: float) -> Dict[str, Any]:
    """Compile src as a launch does (NVRTC) or with nvcc; the seconds and ptxas's report."""
    arch = _arch(src)
    if nvcc:
        from cutelab.kernel.cuda.nvrtc import nvrtc_options

        exe = shutil.which("nvcc")
        if exe is None:
            raise SystemExit("cuda_size: --nvcc: no nvcc on PATH")
        flags = [o for o in nvrtc_options() if o != "-default-device"]
        with tempfile.TemporaryDirectory() as d:
            cu = os.path.join(d, "kernel.cu")
            with open(cu, "w") as f:
                f.write(src)
            t0 = time.perf_counter()
            try:
                p = subprocess.run([exe, "-cubin", f"-arch={arch}", *flags, "-Xptxas", "-v", "-o",
                                    os.path.join(d, "kernel.cubin"), cu], capture_output=True, text=True,
                                   timeout=timeout)
            except subprocess.TimeoutExpired:
                return {"compiler": "nvcc", "arch": arch, "compile_s": None, "error": f"over {timeout:.0f} s"}
            secs = time.perf_counter() - t0
            if p.returncode:
                return {"compiler": "nvcc", "arch": arch, "compile_s": round(secs, 2), "error": p.stderr[-2000:]}
            return {"compiler": "nvcc", "arch": arch, "compile_s": round(secs, 2), **ptxas_report(p.stderr)}
    from cutelab.kernel.cuda.nvrtc import compile_cuda

    t0 = time.perf_counter()
    res = compile_cuda(src, name, arch, use_cache=False)
    return {"compiler": "nvrtc", "arch": arch, "compile_s": round(time.perf_counter() - t0, 2), **ptxas_report(res.log)}


# --------------------------------------------------------------------------- the parent

def measure(label: str, path: str, argv: List[str], args: argparse.Namespace, out_dir: Path) -> Dict[str, Any]:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", label)
    out_json, out_cu = out_dir / f"{safe}.json", out_dir / f"{safe}.cu"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
               CUTE_DSL_ARCH=os.environ.get("CUTE_DSL_ARCH", "sm_90a"))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(out_json), str(out_cu), str(args.launch),
           os.path.abspath(path), *argv]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=os.path.dirname(os.path.abspath(path)), env=env, capture_output=True, text=True,
                       timeout=args.timeout)
    wall = time.perf_counter() - t0
    if p.returncode or not out_json.exists():
        return {"case": label, "error": f"exit {p.returncode}: {(p.stderr or p.stdout)[-1500:]}"}
    row = {"case": label, **json.loads(out_json.read_text()), "child_s": round(wall, 2)}
    if args.compile:
        row.update(compile_source(out_cu.read_text(), row["kernel"], args.nvcc, args.timeout))
    return row


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:
        child(argv[1], argv[2], int(argv[3]), argv[4:])
        return 0
    program: List[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, program = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="dsl_examples.py example names, comma-separated (e.g. hopper_fmha)")
    ap.add_argument("--sizes", default="default", help="their size presets, comma-separated (e.g. default,large)")
    ap.add_argument("--launch", type=int, default=1, help="print the program's N-th kernel launch (default: the first)")
    ap.add_argument("--compile", action="store_true", help="compile the CUDA (NVRTC, as a launch; --nvcc: nvcc)")
    ap.add_argument("--nvcc", action="store_true", help="with --compile: nvcc instead of NVRTC (implies --compile)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds for each program run and each compile")
    ap.add_argument("--out", help="keep each case's .cu and .json here")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args(argv)
    args.compile = args.compile or args.nvcc
    todo = cases(args.only, args.sizes) if args.only else []
    if program:
        todo.append((" ".join([os.path.basename(program[0])] + program[1:]), program[0], program[1:]))
    if not todo:
        ap.error("name examples with --only, or a program after --")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = Path(args.out or tmp)
        out_dir.mkdir(parents=True, exist_ok=True)
        for label, path, pargv in todo:
            row = measure(label, path, pargv, args, out_dir)
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
