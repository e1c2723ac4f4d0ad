"""FlashAttention-2's kernel as ptxas and the SASS see it, on any machine: no GPU needed.

CuTe DSL's Ampere FlashAttention-2 (examples/dsl/flash_attention_v2.py) is traced and printed at the
size dsl_examples.py times (batch 4, 16 heads, 8192x8192, head_dim 128, bf16; ``--causal``) under
the fake CUDA driver (kernel/cuda/fakegpu.py), so the kernel's size-dependent constants are the
benchmark's; nothing runs. Its CUDA is then compiled as a launch compiles it: NVRTC with cutelab's
options (``nvrtc.compile_cuda``, sm_90 as on an H100), printed again with per-trip copies of the
thread index in its loops where ptxas spills when ``CUTELAB_PASSES_ON=loopidx`` asks for it
(``passes/loopidx.py``, off by default), and ptxas's report read (registers, stack, spill bytes). With ``cuobjdump``
(on PATH or ``--cuobjdump``) the SASS is counted: all instructions, the hot loop (the backward branch whose body holds the most HMMA), and in it the
instructions that tell register pressure (LDL/STL spills, S2R re-reads of special registers, MOV).

    PYTHONPATH=$PWD/src python benchmarks/fa2_sass.py [--causal] [--out DIR] [--cuobjdump PATH]
    PYTHONPATH=$PWD/src python benchmarks/fa2_sass.py --ptx FILE   # CuTe DSL's PTX of the same kernel

``--ptx FILE`` assembles a PTX file (CuTe DSL's, kept with ``CUTE_DSL_KEEP=ptx``) with ``ptxas -v``
for sm_90a instead, and counts it the same way. NVRTC needs cuda-python and the NVRTC library
(``nvidia-cuda-nvrtc``); ``--nvcc`` compiles with nvcc instead, whose NVVM keeps shared-memory
pointers 32-bit where NVRTC's does not: its numbers are not the launch's.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]  # (benchmarks/copy.py)

WATCH = ("HMMA", "LDSM", "LDGSTS", "MUFU", "FMNMX", "FADD", "MOV", "IMAD", "IADD3", "S2R", "LDL", "STL")


def render(size: Tuple[int, int, int, int], causal: bool) -> Tuple[Any, str, str]:
    """(IR, CUDA source, kernel name) of the example's kernel at size (b, s, h, d), traced under the fake driver."""
    import torch

    import cutelab as cute
    from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor, fake_gpu
    from cutelab.kernel.launch.plan import last_launch
    from cutelab.runtime import from_dlpack

    spec = importlib.util.spec_from_file_location("fa2_example", ROOT / "examples/dsl/flash_attention_v2.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    b, s, h, d = size
    with fake_gpu(arch=(9, 0)):
        def tensor() -> Any:  # as the example's create_tensor
            t = fake_cuda_tensor(torch.zeros(b, s, h, d, dtype=torch.bfloat16))
            return (from_dlpack(t, assumed_align=16).mark_layout_dynamic(leading_dim=3)
                    .mark_compact_shape_dynamic(mode=3, stride_order=t.dim_order(), divisibility=8))

        q, k, v, o = tensor(), tensor(), tensor(), tensor()
        fa2 = mod.FlashAttentionForwardAmpere(d, 128, 64, 128, causal)  # the example's defaults
        compiled = cute.compile(fa2, q, k, v, o, 0.5, None)
        compiled(q, k, v, o, 0.5, None)
        info = last_launch()
    return info.ir, info.source, info.ir.name


def compile_cuda(src: str, name: str, out: Path, nvcc: bool) -> Tuple[bytes, str]:
    """(cubin, ptxas's report) of src for sm_90."""
    if nvcc:
        from cutelab.kernel.cuda.nvrtc import nvrtc_options

        (out / "kernel.cu").write_text(src)
        flags = [o for o in nvrtc_options() if o != "-default-device"]
        p = subprocess.run(["nvcc", "-cubin", "-arch=sm_90", *flags, "-Xptxas", "-v", "-o", str(out / "kernel.cubin"),
                            str(out / "kernel.cu")], capture_output=True, text=True)
        if p.returncode:
            raise SystemExit(p.stderr[-3000:])
        return (out / "kernel.cubin").read_bytes(), p.stderr
    from cutelab.kernel.cuda.nvrtc import compile_cuda as nvrtc_compile

    res = nvrtc_compile(src, name, "sm_90", use_cache=False)
    return res.cubin, res.log


def assemble(ptx: Path, out: Path) -> Tuple[bytes, str]:
    """(cubin, ptxas's report) of a PTX file for its target (sm_90a for CuTe DSL's on an H100)."""
    target = re.search(r"^\.target\s+(\S+)", ptx.read_text(), re.M)
    arch = target.group(1) if target else "sm_90a"
    p = subprocess.run(["ptxas", f"-arch={arch}", "-v", "-o", str(out / "kernel.cubin"), str(ptx)],
                       capture_output=True, text=True)
    if p.returncode:
        raise SystemExit(p.stderr[-3000:])
    return (out / "kernel.cubin").read_bytes(), p.stderr


def ptxas_report(log: str) -> Dict[str, int]:
    out = {}
    for key, rx in (("registers", r"Used (\d+) registers"), ("stack", r"(\d+) bytes stack frame"),
                    ("spill stores", r"(\d+) bytes spill stores"), ("spill loads", r"(\d+) bytes spill loads")):
        m = re.search(rx, log)
        if m:
            out[key] = int(m.group(1))
    return out


def sass(cubin: Path, tool: str) -> List[Tuple[int, str, str]]:
    """(address, opcode, text) of each SASS instruction."""
    text = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True, check=True).stdout
    out = []
    for line in text.splitlines():
        m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if m:
            t = m.group(2).strip()
            op = re.sub(r"^@!?U?P[T0-9]+\s+", "", t).split()[0].split(".")[0]
            out.append((int(m.group(1), 16), op, t))
    return out


def _target(op: str, t: str) -> Optional[int]:
    m = re.search(r"\bBRA\s+(?:`?\(?[^)]*\)?\s*)?0x([0-9a-f]+)", t)
    return int(m.group(1), 16) if op == "BRA" and m else None


def hot_loop(ins: List[Tuple[int, str, str]]) -> List[Tuple[int, str, str]]:
    """The body of the backward branch holding the most HMMA (empty without loops), with the blocks
    it branches out to that come back into it (CuTe DSL's puts its conditional K-tile load there)."""
    best: List[Tuple[int, str, str]] = []
    for a, op, t in ins:
        tgt = _target(op, t)
        if tgt is not None and tgt < a:
            body = [x for x in ins if tgt <= x[0] <= a]
            if sum(x[1] == "HMMA" for x in body) > sum(x[1] == "HMMA" for x in best):
                best = body
    if not best:
        return best
    lo, hi = best[0][0], best[-1][0]
    extra: List[Tuple[int, str, str]] = []
    for a, op, t in best:
        tgt = _target(op, t)
        if tgt is None or lo <= tgt <= hi:
            continue
        block = [x for x in ins if x[0] >= tgt][:400]
        for j, (a2, op2, t2) in enumerate(block):
            back = _target(op2, t2)
            if op2 == "EXIT" or (back is not None and not t2.startswith("@") and not lo <= back <= hi):
                break
            if back is not None and not t2.startswith("@") and lo <= back <= hi:
                extra += block[:j + 1]
                break
    return best + extra


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--size", default="4,8192,16,128", help="batch,seqlen,heads,head_dim (seqlen_q = seqlen_k)")
    ap.add_argument("--ptx", help="count this PTX file (CuTe DSL's) instead of cutelab's kernel")
    ap.add_argument("--nvcc", action="store_true", help="compile with nvcc instead of NVRTC (not the launch's numbers)")
    ap.add_argument("--cuobjdump", default=shutil.which("cuobjdump"), help="cuobjdump to read the SASS with")
    ap.add_argument("--out", help="keep kernel.cu / kernel.cubin here")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out or tmp)
        out.mkdir(parents=True, exist_ok=True)
        if args.ptx:
            what = f"PTX {Path(args.ptx).name}"
            cubin, log = assemble(Path(args.ptx), out)
        else:
            size = tuple(int(x) for x in args.size.split(","))
            ir, src, name = render(size, args.causal)  # type: ignore[arg-type]
            from cutelab.kernel.cuda.build import build

            # as a launch builds it: printed again with per-trip index copies where ptxas spills (passes/loopidx.py)
            built: Dict[str, Tuple[bytes, str]] = {}

            def comp(source: str) -> Any:
                built[source] = compile_cuda(source, name, out, args.nvcc)
                return argparse.Namespace(log=built[source][1])

            _, src, _ = build(ir, comp, restrict="__restrict__" in src)
            (out / "kernel.cu").write_text(src)
            copies = "loop index copies" if "asm volatile(\"\" : \"+r\"" in src else "no loop index copies"
            what = f"cutelab, b{size[0]} s{size[1]} h{size[2]} d{size[3]}{' causal' if args.causal else ''}, " \
                   f"{'nvcc' if args.nvcc else 'NVRTC'}, {copies} ({len(built)} builds)"
            cubin, log = built[src]
        (out / "kernel.cubin").write_bytes(cubin)
        rep = ptxas_report(log)
        print(f"{what}: " + ", ".join(f"{k} {v}" for k, v in rep.items()))
        if not args.cuobjdump:
            print("(no cuobjdump: SASS not counted)")
            return 0
        ins = sass(out / "kernel.cubin", args.cuobjdump)
        loop = hot_loop(ins)
        for label, part in (("all", ins), ("hot loop", loop)):
            c = collections.Counter(op for _, op, _ in part)
            print(f"  {label}: {len(part)} instructions; " + ", ".join(f"{k} {c.get(k, 0)}" for k in WATCH))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
