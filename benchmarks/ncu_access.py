"""Predicted vs measured memory-access counters: cutelab.analysis against Nsight Compute.

    python benchmarks/ncu_access.py --dry-run          # no GPU: the predictions and the generated kernels
    python benchmarks/ncu_access.py                    # GPU + ncu: one ncu run, a table predicted vs measured
    python benchmarks/ncu_access.py --only ldsm        # only the cases whose name contains 'ldsm'

For each access pattern (shared f16 tiles, row- and column-major, plain and with each Hopper
swizzle SW32/SW64/SW128; 16/32/64/128-bit vectors; ldmatrix.x4 over them; a shared store;
warp 0 of the seed copy kernels' global loads of a bf16 8192x8192 tensor) it builds the access
trace of one warp with cutelab.analysis, predicts the Nsight Compute counters, and generates a
small CUDA C++ kernel (one warp, one block) that makes exactly those accesses: the per-lane byte
offsets of each instruction are baked into a __constant__ table, and each access is one inline
PTX instruction (ld/st.shared, ld.global, ldmatrix) so the compiler cannot merge, split or drop
it. The kernels are compiled with NVRTC (cuda-python; the project's kernel/cuda/nvrtc.py), or with
nvcc into one executable when cuda-python is missing, and run once each under a single
``ncu --csv --metrics ...`` invocation; the counters are parsed and printed next to the
predictions, with a verdict per case. Exit status: 0 all match, 1 some differ, 2 could not
measure (no GPU, no ncu, no permission: the reason is printed).

Robustness: only the metrics ``ncu --query-metrics`` lists are asked for (an unknown metric makes
ncu refuse the whole run); if the run fails anyway it is retried with the four basic l1tex
counters (not after a timeout); a kernel that fails to compile or launch is reported and the
others are still measured; whatever was measured is printed.
"""

from __future__ import annotations

import argparse
import csv
import glob
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

import numpy as np

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(_ROOT, "src"))

from cutelab import Layout, make_layout_tv  # noqa: E402
from cutelab.analysis import AccessTrace, analyze, ldmatrix_trace, tv_trace  # noqa: E402
from cutelab.analysis.access import NCU_METRICS  # noqa: E402

PREFIX = "acc_"
INACTIVE = 0xFFFFFFFF

# ----------------------------------------------------------------------------------- the cases


@dataclass
class Case:
    name: str
    what: str
    trace: AccessTrace  # one warp's instructions
    probe: bool = False  # a pattern the model does not claim to know (broadcast across phases): shown, not scored

    @property
    def kernel(self) -> str:
        return PREFIX + self.name


def _warp0(tr: AccessTrace) -> AccessTrace:
    sel = tr.warps == 0
    return AccessTrace(tr.addresses[sel], tr.bytes_per_lane, tr.space, tr.op, None, None, tr.label)


ROW = "(64,64):(64,1)"  # f16 tile, 128-byte rows
COL = "(64,64):(1,64)"  # f16 tile, column-major
SW = {"sw32": "S<1,3,3> o 0 o ", "sw64": "S<2,3,3> o 0 o ", "sw128": "S<3,3,3> o 0 o "}
TV_COL_CHUNK = "(32,8):(1,64)"  # thread t: row t, columns 0..7 (one 16-byte chunk of each row)
TV_MCOL_CHUNK = "(32,8):(64,1)"  # thread t: column t, rows 0..7 (a chunk of a column-major tile)
TV_ROW_READ = "((8,4),8):((512,1),64)"  # threads 8r..8r+7: the 8 chunks of row r (one 128-byte row per phase)


def cases() -> List[Case]:
    out: List[Case] = []

    def tv(name: str, what: str, tvl: str, layout: str, space: str = "shared", dtype: str = "f16", **kw):
        out.append(Case(name, what, _warp0(tv_trace(tvl, layout, dtype, space, **kw))))

    def ldsm(name: str, what: str, layout: str, num: int = 4):
        out.append(Case(name, what, ldmatrix_trace(layout, "f16", num)))

    tv("smem_row_rows_128b", "row-major f16 64x64, each quarter-warp reads one 128-byte row", TV_ROW_READ, ROW)
    tv("smem_row_cols_128b", "row-major f16 64x64, thread t reads chunk 0 of row t (a column of chunks)",
       TV_COL_CHUNK, ROW)
    for k, pre in SW.items():
        tv(f"smem_{k}_cols_128b", f"{k.upper()} (S<..> o row-major 64x64), column of chunks, 128-bit",
           TV_COL_CHUNK, pre + ROW)
    tv("smem_row_cols_64b", "row-major 64x64, column of chunks, forced 64-bit vectors", TV_COL_CHUNK, ROW,
       vector_bits=64)
    tv("smem_row_cols_32b", "row-major 64x64, column of chunks, forced 32-bit vectors", TV_COL_CHUNK, ROW,
       vector_bits=32)
    tv("smem_sw128_cols_64b", "SW128 64x64, column of chunks, forced 64-bit vectors", TV_COL_CHUNK, SW["sw128"] + ROW,
       vector_bits=64)
    tv("smem_sw128_cols_32b", "SW128 64x64, column of chunks, forced 32-bit vectors", TV_COL_CHUNK, SW["sw128"] + ROW,
       vector_bits=32)
    tv("smem_col_cols_16b", "column-major 64x64, thread t reads row t: 16-bit loads, lanes contiguous",
       TV_COL_CHUNK, COL)
    tv("smem_col_rows_16b", "column-major 64x64, threads 8r.. read row r in chunks: 16-bit loads 1 KB apart",
       TV_ROW_READ, COL)
    tv("smem_col_mcols_128b", "column-major 64x64, thread t reads rows 0..7 of column t (128-bit)",
       TV_MCOL_CHUNK, COL)
    tv("smem_colsw128_mcols_128b", "MN-major SW128 (S<3,3,3> o column-major 64x64), same threads",
       TV_MCOL_CHUNK, SW["sw128"] + COL)
    tv("smem_row_cols_st128", "row-major 64x64, column of chunks, 128-bit STORES", TV_COL_CHUNK, ROW, op="st")
    ldsm("ldsm_x4_row", "ldmatrix.x4 over row-major f16 64x64 (128-byte rows)", ROW)
    ldsm("ldsm_x4_sw128", "ldmatrix.x4 over SW128 64x64", SW["sw128"] + ROW)
    ldsm("ldsm_x4_row32", "ldmatrix.x4 over row-major f16 64x16 (32-byte rows)", "(64,16):(16,1)")
    ldsm("ldsm_x4_sw32", "ldmatrix.x4 over SW32 64x16", SW["sw32"] + "(64,16):(16,1)")
    ldsm("ldsm_x4_row64", "ldmatrix.x4 over row-major f16 64x32 (64-byte rows)", "(64,32):(32,1)")
    ldsm("ldsm_x4_sw64", "ldmatrix.x4 over SW64 64x32", SW["sw64"] + "(64,32):(32,1)")
    # the seeds' copy kernels, bf16 8192x8192 row-major: warp 0 of block 0
    tv("seed_inner_ldg", "seed copy_inner_partition: block (1,16), 256 threads: thread t copies 16 bf16 of row 0",
       "(32,16):(16,1)", "(1,512):(8192,1)", "global", "bf16")
    tv("seed_outer_ldg", "seed copy_outer_partition: block (32,256), threads (8,32):(32,1), values 32 apart",
       "((32,8),(4,8)):((32,1),(8,1024))", "(32,256):(8192,1)", "global", "bf16")
    _, tvl = make_layout_tv(Layout.parse("(32,8):(8,1)"), Layout.parse("(4,8):(8,1)"))
    tv("seed_tv_ldg", "seed copy_tv_partition: make_layout_tv((32,8):(8,1), (4,8):(8,1)), 128-bit rows",
       str(tvl), "(128,64):(8192,1)", "global", "bf16")
    tv("gmem_f32_stride2", "f32, lane i reads word 2i: half of each sector used", "(32,1):(2,1)", "(64):(1)",
       "global", "f32")
    # probes: lanes of different phases share addresses. The model serves each phase on its own; the
    # hardware may merge such phases (NVIDIA has described this for uniform LDS.128 on Volta/Turing)
    lanes = np.arange(32)
    out.append(Case("probe_bcast_halves_64b", "64-bit, lanes t and t+16 read the same 8 bytes (halves broadcast)",
                    AccessTrace((lanes % 16)[None, :] * 8, 8, "shared", label="lane t: byte 8*(t%16)"), probe=True))
    out.append(Case("probe_bcast_all_128b", "128-bit, all 32 lanes read the same 16 bytes",
                    AccessTrace(np.zeros((1, 32), np.int64), 16, "shared", label="every lane: byte 0"), probe=True))
    return out


# ----------------------------------------------------------------------------------- kernels

_LD = {1: ("u8", 1), 2: ("u16", 1), 4: ("u32", 1), 8: ("v2.u32", 2), 16: ("v4.u32", 4)}


def _regs(n: int) -> str:
    return "{" + ", ".join(f"%{k}" for k in range(n)) + "}" if n > 1 else "%0"


def kernel_source(case: Case) -> str:
    """CUDA C++ of one kernel making exactly the accesses of case.trace (one warp of 32 threads)."""
    tr = case.trace
    a = tr.addresses
    lo = int(a[a >= 0].min()) if (a >= 0).any() else 0
    base = lo - lo % 1024  # keep the address mod 1024 (banks, sectors, lines)
    rel = np.where(a >= 0, a - base, INACTIVE).astype(np.uint64)
    span = int(rel[a >= 0].max()) + tr.bytes_per_lane if (a >= 0).any() else 16
    n = tr.num_instructions
    table = ",".join(str(int(x)) for x in rel.reshape(-1))
    nb = tr.bytes_per_lane
    name = case.kernel
    lines = [
        f"// {case.name}: {case.what}",
        f"// {tr.label}",
        f"// {n} instruction(s) of {tr.kind()}, per-lane byte offsets below (0x{INACTIVE:X}: lane inactive)",
        f"__constant__ unsigned int {name}_off[{n * 32}] = {{{table}}};",
        f'extern "C" __global__ void {name}(unsigned int* out, const char* gbuf) {{',
        "  unsigned int lane = threadIdx.x, acc = 0;",
    ]
    if tr.space == "shared":
        lines += [f"  __shared__ __align__(1024) char smem[{max(span, 16) + 16}];",
                  "  unsigned int sbase;  // the shared-window address of smem (PTX, no header needed under NVRTC)",
                  "  asm(\"{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }\" : \"=r\"(sbase) : \"l\"(smem));"]
    lines += [f"  for (int i = 0; i < {n}; ++i) {{", f"    unsigned int off = {name}_off[i * 32 + lane];"]
    if tr.op == "ldsm":
        # ldmatrix is .sync.aligned: every lane executes it; lanes past 8*num give an ignored address
        lines += ["    unsigned int r0, r1, r2, r3;",
                  f"    unsigned int addr = sbase + (off == 0x{INACTIVE:X}u ? 0u : off);",
                  "    asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\"",
                  "                 : \"=r\"(r0), \"=r\"(r1), \"=r\"(r2), \"=r\"(r3) : \"r\"(addr) : \"memory\");",
                  "    acc ^= r0 ^ r1 ^ r2 ^ r3;"]
        if (a[:, 8:] < 0).any():
            raise ValueError(f"{case.name}: the generated kernel issues ldmatrix.x4 only")
    else:
        ty, k = _LD[nb]
        regs = ", ".join(f"r{j}" for j in range(k))
        lines += [f"    if (off != 0x{INACTIVE:X}u) {{", f"      unsigned int {regs};"]
        if tr.op == "st":
            lines += [f"      {'; '.join(f'r{j} = lane * 4u + {j}u' for j in range(k))};"]
        if tr.space == "shared":
            addr = "sbase + off"
            aty, acon = "r", f"({addr})"
            space = "shared"
        else:
            acon = "(gbuf + off)"
            aty, space = "l", "global"
        if tr.op == "st":
            ins = f"st.{space}.{ty} [%{0}], {'{' if k > 1 else ''}{', '.join(f'%{j + 1}' for j in range(k))}{'}' if k > 1 else ''};"
            cons = ", ".join([f"\"{aty}\"{acon}"] + [f"\"r\"(r{j})" for j in range(k)])
            lines += [f"      asm volatile(\"{ins}\" :: {cons} : \"memory\");"]
        else:
            ins = f"ld.{space}.{ty} {_regs(k)}, [%{k}];"
            outs = ", ".join(f"\"=r\"(r{j})" for j in range(k))
            lines += [f"      asm volatile(\"{ins}\" : {outs} : \"{aty}\"{acon} : \"memory\");",
                      f"      acc ^= {' ^ '.join(f'r{j}' for j in range(k))};"]
        lines += ["    }"]
    lines += ["  }", "  out[lane] = acc;", "}"]
    return "\n".join(lines) + "\n"


def global_span(case: Case) -> int:
    a = case.trace.addresses
    if case.trace.space != "global" or not (a >= 0).any():
        return 0
    lo = int(a[a >= 0].min())
    return int(a[a >= 0].max()) - (lo - lo % 1024) + case.trace.bytes_per_lane


# ----------------------------------------------------------------------------------- predictions

def metric_keys(case: Case) -> Dict[str, str]:
    """{quantity: ncu metric} for a case: requests/sectors (global) or wavefronts/conflicts (shared).

    Shared-memory counters are asked for twice: the l1tex__ counter and its sm__sass_ twin (which
    counts only what the SASS instructions themselves cause); both must match the prediction.
    """
    out = {}
    for q, m in NCU_METRICS[(case.trace.space, case.trace.op)].items():
        # sm__sass_l1tex_data_... is the twin of l1tex__data_... (one underscore less after l1tex)
        plain = "l1tex__" + m[len("sm__sass_l1tex_"):] if m.startswith("sm__sass_l1tex_") else m
        out[q] = plain
        if case.trace.space == "shared":
            out["sass_" + q] = "sm__sass_l1tex_" + plain[len("l1tex__"):]
    return out


def predictions(case: Case) -> Dict[str, int]:
    t = analyze(case.trace).totals()
    out = {}
    for q, m in metric_keys(case).items():
        out[m] = t[q.replace("sass_", "")]
    return out


ALL_METRICS = sorted({m for c in cases() for m in metric_keys(c).values()})
BASIC_METRICS = ["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                 "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                 "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]


# ----------------------------------------------------------------------------------- running

def find_ncu(explicit: Optional[str] = None) -> Optional[str]:
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    p = shutil.which("ncu")
    if p:
        return p
    pats = ["/usr/local/cuda/bin/ncu", "/usr/local/cuda-*/bin/ncu", "/usr/local/cuda*/nsight-compute*/ncu",
            "/opt/nvidia/nsight-compute/*/ncu", "/usr/local/NVIDIA-Nsight-Compute*/ncu", "/usr/bin/ncu"]
    for pat in pats:
        hits = sorted(glob.glob(pat))
        if hits:
            return hits[-1]
    return None


def _launch_cuda_python(sel: Sequence[Case]) -> int:
    """Compile (NVRTC) and launch each case's kernel once; errors per kernel go to stderr."""
    from cutelab.kernel.cuda import driver as drv
    from cutelab.kernel.cuda.nvrtc import compile_cuda

    if not drv.gpu_available():
        print("ncu_access --launch: no GPU visible to cuda-python", file=sys.stderr)
        return 2
    d = drv._driver()
    drv.initialize_cuda_context()
    arch = drv.device_arch()
    out = drv._ok(d.cuMemAlloc(32 * 4), "cuMemAlloc")
    bad = 0
    for c in sel:
        try:
            src = kernel_source(c)
            res = compile_cuda(src, c.kernel, arch=arch, options=("--std=c++17", "-default-device"))
            fn = drv.load_module(res.cubin, res.key, c.kernel)
            span = max(global_span(c), 16)
            g = drv._ok(d.cuMemAlloc(span + 1024), "cuMemAlloc")
            params = drv.ParamBuffer(2)
            params.set(0, int(out))
            params.set(1, int(g))
            drv.launch_raw(fn, (1, 1, 1), (32, 1, 1), params)
            drv.synchronize()
            drv._ok(d.cuMemFree(g), "cuMemFree")
            print(f"launched {c.kernel}", flush=True)
        except Exception as e:  # one bad kernel must not cost the others their measurement
            bad += 1
            print(f"ncu_access: {c.kernel} failed: {type(e).__name__}: {str(e)[:2000]}", file=sys.stderr, flush=True)
    return 1 if bad else 0


def nvcc_program(sel: Sequence[Case]) -> str:
    """All kernels and a main() that launches each once (the fallback without cuda-python)."""
    parts = ["#include <cstdio>", "#include <cuda_runtime.h>"] + [kernel_source(c) for c in sel]
    parts.append("int main() {\n  unsigned int* out; char* g; cudaMalloc(&out, 128);")
    span = max([global_span(c) for c in sel] + [16]) + 1024
    parts.append(f"  cudaMalloc(&g, {span});")
    for c in sel:
        parts.append(f"  {c.kernel}<<<1, 32>>>(out, g); if (cudaDeviceSynchronize() != cudaSuccess) "
                     f"fprintf(stderr, \"{c.kernel}: %s\\n\", cudaGetErrorString(cudaGetLastError()));")
    parts.append("  return 0;\n}")
    return "\n".join(parts) + "\n"


def _have_cuda_python() -> bool:
    try:
        from cuda.bindings import driver, nvrtc  # noqa: F401
        return True
    except ImportError:
        try:
            from cuda import cuda, nvrtc  # type: ignore  # noqa: F401
            return True
        except ImportError:
            return False


def _query_metrics(ncu: str) -> Optional[set]:
    try:
        p = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    names = set(re.findall(r"\b([a-z0-9]+__[a-z0-9_]+)\b", p.stdout))
    return names or None


def parse_ncu_csv(text: str) -> Dict[str, Dict[str, float]]:
    """{kernel name: {metric: value}} from ncu --csv output (other lines are skipped)."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith('"ID"')), None)
    if start is None:
        return {}
    out: Dict[str, Dict[str, float]] = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        k = (row.get("Kernel Name") or "").split("(")[0].strip()
        m, v = row.get("Metric Name"), row.get("Metric Value")
        if not k or not m or v is None:
            continue
        try:
            val = float(v.replace(",", ""))
        except ValueError:
            continue
        out.setdefault(k, {})[m] = out.get(k, {}).get(m, 0.0) + val  # the same kernel twice: summed
    return out


def find_nvcc() -> Optional[str]:
    return shutil.which("nvcc") or next(iter(sorted(glob.glob("/usr/local/cuda*/bin/nvcc"))), None)


def builders() -> List[str]:
    """How kernels can be built here, in order of preference: 'nvrtc' (cuda-python), 'nvcc'."""
    out = ["nvrtc"] if _have_cuda_python() else []
    return out + (["nvcc"] if find_nvcc() else [])


def run_ncu(sel: Sequence[Case], metrics: List[str], ncu: str, workdir: str, timeout: int,
            builder: str = "nvrtc") -> tuple:
    """(parsed counters, ncu's exit code, a tail of its messages) of one ncu run over all kernels.

    builder 'nvrtc': ncu runs this script with --launch (NVRTC + cuda-python, one module per kernel);
    'nvcc': ncu runs one executable built by nvcc from all kernels and a main().
    """
    log = os.path.join(workdir, f"ncu-{builder}-{len(metrics)}.csv")
    if builder == "nvrtc":
        target = [sys.executable, os.path.abspath(__file__), "--launch", "--only", ",".join(c.name for c in sel)]
    else:
        nvcc = find_nvcc()
        if not nvcc:
            return {}, -1, "nvcc failed: not found"
        cu = os.path.join(workdir, "acc.cu")
        with open(cu, "w") as f:
            f.write(nvcc_program(sel))
        exe = os.path.join(workdir, "acc")
        p = subprocess.run([nvcc, "-O1", "-arch=native", "-o", exe, cu], capture_output=True, text=True)
        if p.returncode != 0:
            p = subprocess.run([nvcc, "-O1", "-arch=sm_90", "-o", exe, cu], capture_output=True, text=True)
        if p.returncode != 0:
            return {}, p.returncode, "nvcc failed:\n" + p.stderr[-3000:]
        target = [exe]
    cmd = [ncu, "--csv", "--print-units", "base", "--target-processes", "all", "--kernel-name", f"regex:^{PREFIX}",
           "--metrics", ",".join(metrics), "--log-file", log] + target
    print("running: " + " ".join(cmd), flush=True)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        rc, msg = p.returncode, (p.stdout + p.stderr)
    except subprocess.TimeoutExpired:
        rc, msg = -9, f"ncu timed out after {timeout} s (failed)"
    text = ""
    if os.path.exists(log):
        with open(log, errors="replace") as f:
            text = f.read()
    parsed = parse_ncu_csv(text)
    notes = "\n".join(ln for ln in (text + "\n" + msg).splitlines() if "==ERROR==" in ln or "==WARNING==" in ln
                      or "failed" in ln or "ERR_" in ln)
    return parsed, rc, notes[-3000:]


# ----------------------------------------------------------------------------------- report

def _short(metric: str) -> str:
    m = metric.replace(".sum", "")
    for a, b in [("sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_", "sass wavefronts "),
                 ("sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_", "sass conflicts "),
                 ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_", "wavefronts "),
                 ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_", "conflicts "),
                 ("l1tex__t_requests_pipe_lsu_mem_global_op_", "requests "),
                 ("l1tex__t_sectors_pipe_lsu_mem_global_op_", "sectors ")]:
        if m.startswith(a):
            return b + m[len(a):]
    return m


def table(sel: Sequence[Case], measured: Optional[Dict[str, Dict[str, float]]]) -> tuple:
    """(lines of the table, number of cases that match, that differ, that were not measured).

    Probe cases get the verdict 'probe: same' / 'probe: other' and are not counted.
    """
    rows = [f"{'case':<25} {'counter':<22} {'predicted':>9} {'measured':>9}  verdict"]
    ok = bad = missing = 0
    for c in sel:
        pred = predictions(c)
        got = (measured or {}).get(c.kernel)
        verdicts = []
        for m, v in pred.items():
            mv = None if got is None else got.get(m)
            if measured is None:
                verdict, ms = "", "-"
            elif mv is None:
                verdict, ms = "not measured", "-"
            else:
                same = int(round(mv)) == v
                verdict = ("probe: same" if same else "probe: other") if c.probe else ("ok" if same else "DIFFERS")
                ms = f"{mv:g}"
            verdicts.append(verdict)
            rows.append(f"{c.name:<25} {_short(m):<22} {v:>9} {ms:>9}  {verdict}".rstrip())
        if measured is not None and not c.probe:
            if "DIFFERS" in verdicts:
                bad += 1
            elif got is None or all(v == "not measured" for v in verdicts):
                missing += 1
            else:
                ok += 1
    return rows, ok, bad, missing


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dry-run", action="store_true", help="print predictions and generated kernels; no GPU needed")
    ap.add_argument("--only", help="comma-separated substrings: run only the cases whose name contains one")
    ap.add_argument("--no-source", action="store_true", help="with --dry-run: omit the kernel sources")
    ap.add_argument("--timeout", type=int, default=120, help="seconds for one ncu run (default 120)")
    ap.add_argument("--budget", type=int, default=165, help="seconds for all ncu runs together (default 165)")
    ap.add_argument("--ncu", help="the ncu executable (default: PATH, /usr/local/cuda*/bin, /opt/nvidia/nsight-compute)")
    ap.add_argument("--launch", action="store_true", help=argparse.SUPPRESS)  # ncu's target: launch each kernel once
    args = ap.parse_args(argv)

    sel = cases()
    if args.only:
        keys = [k for k in args.only.split(",") if k]
        sel = [c for c in sel if any(k in c.name for k in keys)]
        if not sel:
            print(f"ncu_access: no case matches --only {args.only!r}", file=sys.stderr)
            return 2
    if args.launch:
        return _launch_cuda_python(sel)

    print(f"{len(sel)} access patterns, one warp each; predictions by cutelab.analysis\n")
    for c in sel:
        r = analyze(c.trace)
        print(f"{c.name}: {c.what}")
        print(f"  {c.trace.label}")
        print(f"  {r.summary()}")
        worst = r.conflicts if c.trace.space == "shared" else r.sectors * 32 - r.bytes_used
        print(f"  {r.explain(int(worst.argmax()))}")
    print()
    if args.dry_run:
        rows, *_ = table(sel, None)
        print("\n".join(rows))
        if not args.no_source:
            for c in sel:
                print(f"\n// ---- kernel {c.kernel}\n{kernel_source(c)}", end="")
        return 0

    ncu = find_ncu(args.ncu)
    if ncu is None:
        print("ncu_access: ncu (Nsight Compute) not found on PATH or under /usr/local/cuda*/bin, "
              "/opt/nvidia/nsight-compute; nothing measured", file=sys.stderr)
        print("\n".join(table(sel, None)[0]))
        return 2
    wanted = sorted({m for c in sel for m in metric_keys(c).values()})
    known = _query_metrics(ncu)  # an unknown metric makes ncu refuse the whole run: ask only for listed ones
    metrics = [m for m in wanted if known is None or m.rsplit(".", 1)[0] in known] or wanted
    if metrics != wanted:
        print(f"this ncu does not list {', '.join(sorted(set(wanted) - set(metrics)))}: not measured")
    how = builders()
    if not how:
        print("ncu_access: cannot build kernels: neither cuda-python (pip install 'cutelab[gpu]') nor nvcc found",
              file=sys.stderr)
        print("\n".join(table(sel, None)[0]))
        return 2
    # first the best builder with all listed metrics; if nothing comes back, the other builder; then the basic
    # four counters (an unknown metric, a kernel that cannot load...); never again after a timeout
    attempts = [(b, metrics) for b in how] + [(how[0], BASIC_METRICS)]
    measured, rc, notes = {}, 0, ""
    deadline = time.monotonic() + args.budget
    with tempfile.TemporaryDirectory(prefix="ncu_access_") as wd:
        for k, (b, ms) in enumerate(attempts):
            left = int(deadline - time.monotonic())
            if k and (measured or rc == -9 or (b, ms) == attempts[k - 1] or left < 20):
                break
            if k:
                print(f"ncu run failed (exit {rc}):\n{notes}\nretrying: kernels by {b}, {len(ms)} metric(s)", flush=True)
            measured, rc, notes = run_ncu(sel, ms, ncu, wd, min(args.timeout, max(left, 20)), b)
    if notes:
        print("ncu said:\n" + notes)
    if not measured:
        print("ncu_access: no counters measured (see above: permissions ERR_NVGPUCTRPERM need "
              "'--cap-add SYS_ADMIN' or root; no GPU; or the kernels failed)", file=sys.stderr)
        print("\n".join(table(sel, None)[0]))
        return 2
    rows, ok, bad, missing = table(sel, measured)
    print("\n".join(rows))
    nprobe = sum(c.probe for c in sel)
    print(f"\n{ok} case(s) match, {bad} differ, {missing} not measured (of {len(sel) - nprobe}; "
          f"{nprobe} probe(s) not scored)")
    return 0 if bad == 0 and missing == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
