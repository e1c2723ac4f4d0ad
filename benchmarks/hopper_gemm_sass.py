"""CUTLASS's Hopper dense_gemm.py in SASS, cutelab's beside CuTe DSL's, at dsl_examples.py's cluster presets: no GPU.

cutelab's side: the program (tests/compat/programs/dense_gemm.py, unchanged) runs as ``cutelab run`` runs it up to
its first launch, whose kernel is printed as a GPU launch prints it (benchmarks/cuda_size.py's child), then nvcc
compiles that CUDA with NVRTC's options (``-arch=sm_90a``). CuTe DSL's side (``--dsl-python``, a Python with
nvidia-cutlass-dsl): the program's ``HopperWgmmaGemmKernel`` at the same size, tile and cluster is compiled by
``cute.compile`` from CPU tensors with ``CUTE_DSL_ARCH=sm_90a`` and ``--keep-cubin`` (no GPU is touched).

Per cluster shape and build: ptxas's registers, the kernel's SASS count, the k-loop's (the backward branch holding
the most HGMMA, with the out-of-line blocks that branch back into it), and counts in the k-loop and the kernel of
what tells the cluster builds apart: multicast TMA issue, mbarrier waits and arrives (remote arrives are
``SYNCS.ARRIVE.TRANS64.RED``), the elect and uniform-branch wrappers, cluster barriers and fences::

    PYTHONPATH=$PWD/src python3 benchmarks/hopper_gemm_sass.py --dsl-python /work/dslenv/bin/python
        [--sizes c1x1,c2x1,c1x2] [--out DIR] [--cuobjdump PATH]
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
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]  # (benchmarks/copy.py)
PROGRAM = ROOT / "tests" / "compat" / "programs" / "dense_gemm.py"
# (label, SASS opcode prefix) counted in the k-loop and the kernel
WATCH = (("HGMMA", "HGMMA"), ("TMA (any)", "UTMALDG.3D"), ("TMA mcast", "UTMALDG.3D.MULTICAST"),
         ("wait", "SYNCS.PHASECHK"), ("arrive", "SYNCS.ARRIVE"), ("remote arrive", "SYNCS.ARRIVE.TRANS64.RED"),
         ("ELECT", "ELECT"), ("BRA.U.ANY", "BRA.U.ANY"), ("NANOSLEEP", "NANOSLEEP"), ("S2UR", "S2UR"),
         ("R2UR", "R2UR"), ("cluster barrier", "UCGABAR"), ("fence", "FENCE"), ("MEMBAR", "MEMBAR"))

DSL_CHILD = r'''
import importlib.util, sys
program, m, n, k, tile, cluster, out = sys.argv[1:8]
import torch, cutlass, cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack
import cuda.bindings.driver as cuda
spec = importlib.util.spec_from_file_location("dense_gemm_program", program)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
def tensor(a, b):  # K-major (the program's defaults: a_major k, b_major k, c_major n), batch mode last
    t = torch.empty((1, a, b), dtype=torch.float16).permute(1, 2, 0)
    ct = from_dlpack(t, assumed_align=16)
    ct.element_type = cutlass.Float16
    return ct.mark_layout_dynamic(leading_dim=1)
m, n, k = int(m), int(n), int(k)
gemm = mod.HopperWgmmaGemmKernel(cutlass.Float32, tuple(int(x) for x in tile.split(",")),
                                 tuple(int(x) for x in cluster.split(",")))
cute.compile(gemm, tensor(m, k), tensor(n, k), tensor(m, n), cuda.CUstream(0),
             options=f"--keep-cubin --dump-dir={out}")
'''


def _presets(sizes: str) -> List[Tuple[str, List[str]]]:
    spec = importlib.util.spec_from_file_location("dsl_examples", ROOT / "benchmarks" / "dsl_examples.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    presets = mod.EXAMPLES["hopper_dense_gemm"][1]
    return [(s, list(presets[s])) for s in sizes.split(",")]


def _arg(argv: List[str], flag: str) -> str:
    return argv[len(argv) - 1 - argv[::-1].index(flag) + 1]


def cutelab_cubin(size: str, out: Path) -> Tuple[Path, str]:
    """(cubin, ptxas's report) of cutelab's kernel at the preset, printed as a launch prints it."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "cuda_size.py"), "--only", "hopper_dense_gemm",
                        "--sizes", size, "--out", str(out)], capture_output=True, text=True, env=env)
    cu = out / f"hopper_dense_gemm_{size}.cu"
    if p.returncode or not cu.exists():
        raise SystemExit(f"hopper_gemm_sass: cutelab's CUDA at {size}: {(p.stdout + p.stderr)[-3000:]}")
    from cutelab.kernel.cuda.nvrtc import nvrtc_options

    flags = [o for o in nvrtc_options() if o != "-default-device"]
    cubin = out / f"cutelab_{size}.cubin"
    q = subprocess.run(["nvcc", "-cubin", "-arch=sm_90a", *flags, "-Xptxas", "-v", "-o", str(cubin), str(cu)],
                       capture_output=True, text=True)
    if q.returncode:
        raise SystemExit(f"hopper_gemm_sass: nvcc at {size}: {q.stderr[-3000:]}")
    return cubin, q.stderr


def dsl_cubin(size: str, argv: List[str], python: str, out: Path) -> Path:
    """CuTe DSL's cubin of the program's kernel at the preset."""
    d = out / f"dsl_{size}"
    d.mkdir(parents=True, exist_ok=True)
    m, n, k, _ = _arg(argv, "--mnkl").split(",")
    env = dict(os.environ, CUTE_DSL_ARCH="sm_90a")
    env.pop("PYTHONPATH", None)
    p = subprocess.run([python, "-c", DSL_CHILD, str(PROGRAM), m, n, k, _arg(argv, "--tile_shape_mn"),
                        _arg(argv, "--cluster_shape_mn"), str(d)], capture_output=True, text=True, env=env,
                       cwd=str(d), timeout=1800)
    cubins = sorted(d.glob("*.cubin"))
    if p.returncode or not cubins:
        raise SystemExit(f"hopper_gemm_sass: CuTe DSL at {size}: {(p.stdout + p.stderr)[-3000:]}")
    return cubins[-1]


def sass(cubin: Path, tool: str) -> List[Tuple[int, str]]:
    """(address, instruction without its predicate) of each SASS instruction."""
    text = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True, check=True).stdout
    out = []
    for line in text.splitlines():
        m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if m:
            out.append((int(m.group(1), 16), re.sub(r"^@!?U?P[T0-9]+\s+", "", m.group(2).strip())))
    return out


def _branch(t: str) -> Optional[int]:
    m = re.match(r"BRA(?:\.U\.ANY|\.U)?\s+(?:`?\(?[^)]*\)?\s*)?0x([0-9a-f]+)", t)
    return int(m.group(1), 16) if m and not t.startswith("BRA.U.ANY") else None


def k_loop(ins: List[Tuple[int, str]]) -> List[Tuple[int, str]]:
    """The smallest backward branch's body holding at least 4 HGMMA, with the out-of-line blocks it branches to
    that branch back into it (cutelab's mbarrier retries)."""
    best: List[Tuple[int, str]] = []
    for a, t in ins:
        tgt = _branch(t)
        if tgt is not None and tgt < a:
            body = [x for x in ins if tgt <= x[0] <= a]
            if sum(x[1].startswith("HGMMA") for x in body) >= 4 and (not best or len(body) < len(best)):
                best = body
    if not best:
        return best
    lo, hi = best[0][0], best[-1][0]
    extra: List[Tuple[int, str]] = []
    for _, t in best:
        tgt = _branch(t)
        if tgt is None or lo <= tgt <= hi:
            continue
        block = [x for x in ins if x[0] >= tgt][:64]
        for j, (_, t2) in enumerate(block):
            back = _branch(t2)
            if t2.startswith("EXIT"):
                break
            if back is not None and lo <= back <= hi:
                extra += block[:j + 1]
                break
    return best + extra


def counts(ins: List[Tuple[int, str]]) -> Dict[str, int]:
    return {label: sum(t.startswith(prefix) for _, t in ins) for label, prefix in WATCH}


def row(build: str, size: str, cubin: Path, log: Optional[str], tool: str) -> Dict[str, Any]:
    if log is None:  # CuTe DSL's cubin: its registers from the resource usage
        res = subprocess.run([tool, "-res-usage", str(cubin)], capture_output=True, text=True).stdout
        m = re.search(r"REG:(\d+)", res)
    else:
        m = re.search(r"Used (\d+) registers", log)
    ins = sass(cubin, tool)
    loop = k_loop(ins)
    mix = collections.Counter(t.split()[0] for _, t in loop)
    return {"cluster": size, "build": build, "registers": int(m.group(1)) if m else None, "kernel SASS": len(ins),
            "k-loop SASS": len(loop), "k-loop": counts(loop), "kernel": counts(ins),
            "k-loop mix": dict(mix.most_common())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="c1x1,c2x1,c1x2", help="dsl_examples.py's hopper_dense_gemm presets")
    ap.add_argument("--dsl-python", help="a Python with nvidia-cutlass-dsl (without it: cutelab's side only)")
    ap.add_argument("--cuobjdump", default=shutil.which("cuobjdump"), help="cuobjdump (CUDA's, or triton's copy)")
    ap.add_argument("--out", help="keep the CUDA, cubins and rows here")
    ap.add_argument("--mix", action="store_true", help="also print each k-loop's opcode mix")
    a = ap.parse_args()
    if not a.cuobjdump:
        raise SystemExit("hopper_gemm_sass: no cuobjdump on PATH (give --cuobjdump)")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(a.out or tmp)
        out.mkdir(parents=True, exist_ok=True)
        for size, argv in _presets(a.sizes):
            cubin, log = cutelab_cubin(size, out)
            rows.append(row("cutelab", size, cubin, log, a.cuobjdump))
            if a.dsl_python:
                rows.append(row("CuTe DSL", size, dsl_cubin(size, argv, a.dsl_python, out), None, a.cuobjdump))
        if a.out:
            (out / "rows.json").write_text(json.dumps(rows, indent=1))
    labels = [label for label, _ in WATCH]
    print("| cluster | build | registers | kernel SASS | k-loop SASS | " + " | ".join(labels) + " |")
    print("|" + "---|" * (5 + len(labels)))
    for r in rows:
        cells = [f"{r['k-loop'][x]} / {r['kernel'][x]}" for x in labels]
        print(f"| {r['cluster']} | {r['build']} | {r['registers']} | {r['kernel SASS']} | {r['k-loop SASS']} | "
              + " | ".join(cells) + " |")
    print("(each count: in the k-loop / in the kernel)")
    if a.mix:
        for r in rows:
            print(r["cluster"], r["build"], json.dumps(r["k-loop mix"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
