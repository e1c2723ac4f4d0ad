"""`cutelab profile` (no GPU) against Nsight Compute (on the GPU), per kernel of whole programs.

    python benchmarks/ncu_profile.py                       # the default programs, GPU + ncu
    python benchmarks/ncu_profile.py --dry-run             # only the CPU profiles (no GPU needed)
    python benchmarks/ncu_profile.py --program "examples/dsl/sgemm.py --mnk 512,512,256"   # the defaults and this
    python benchmarks/ncu_profile.py --no-defaults --program "my_kernel.py --size 4096"
    python benchmarks/ncu_profile.py --only seeds          # programs whose path contains 'seeds'
    python benchmarks/ncu_profile.py --dry-run --json pred.json    # no GPU: the predictions, saved ...
    python benchmarks/ncu_profile.py --predicted pred.json         # ... and on the GPU only ncu runs

For each program (a path and its arguments):

1. ``python -m cutelab profile --json ...`` runs it on the CPU interpreter (the GPU hidden, so the
   program takes its CPU path), recording its kernels' memory accesses; the JSON holds, per
   kernel, the predicted Nsight Compute counters of one launch (``KernelProfile.ncu()``);
2. ``ncu --csv --metrics ...`` runs the same program on the GPU (cutelab compiles and launches
   the same traced kernels there), restricted to the kernel names the profile saw, and the
   counters of each kernel's first launch are read back;
3. a table per kernel puts them side by side: global load/store requests, sectors and
   sectors/request, global bytes (sectors x 32 against l1tex__t_bytes), shared wavefronts and
   bank conflicts; a verdict per row (``ok``: within 1%, the sampling's rounding; ``DIFF``).

The default programs are CuTe DSL's Ampere elementwise_add.py and elementwise_apply.py (their
default sizes, run once with their own correctness check) and the seeds' copy kernels; add
others (sgemm.py, tensorop_gemm.py, your own) with --program, as many times as needed
(--no-defaults: only those).
Exit status: 0 all rows match, 1 some differ, 2 could not measure (no GPU, no ncu, ...).
``--blocks N`` / ``--all-blocks`` pass through to ``cutelab profile`` (default: 32 sampled
blocks per launch, scaled; the kernels here are uniform over their blocks, so scaling is exact
up to edge tiles).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

DEFAULT_PROGRAMS = [
    "examples/dsl/elementwise_add.py",
    "examples/dsl/elementwise_apply.py",
    "examples/seeds/copy_inner_partition.py",
    "examples/seeds/copy_outer_partition.py",
    "examples/seeds/copy_tv_partition.py",
]

# (label, predicted key in KernelProfile.ncu(), ncu metric); the bytes rows compare sectors x 32
ROWS = [
    ("global ld requests", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
    ("global ld sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
    ("cp.async requests", "l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum"),
    ("cp.async sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum"),
    ("global st requests", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
    ("global st sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
    ("shared ld wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
    ("shared ld conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
    ("shared st wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
    ("shared st conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
    ("ldmatrix wavefronts", "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum"),
    ("ldmatrix conflicts", "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum"),
]
BYTES = [("global ld bytes", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
          "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum"),
         ("global st bytes", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
          "l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum")]
METRICS = [m for _, m in ROWS] + [m for _, _, m in BYTES]


def _env(hide_gpu: bool) -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "src") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if hide_gpu:
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def cpu_profile(prog: List[str], workdir: str, blocks: Optional[int], all_blocks: bool,
                timeout: int) -> Tuple[Optional[dict], str]:
    """(the profile JSON, a message) of one program under `cutelab profile`."""
    out = os.path.join(workdir, "profile.json")
    if os.path.exists(out):
        os.remove(out)
    cmd = [sys.executable, "-m", "cutelab", "profile", "--json", out]
    if all_blocks:
        cmd.append("--all-blocks")
    elif blocks:
        cmd += ["--blocks", str(blocks)]
    cmd += prog
    print("running: " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_env(True), cwd=ROOT)
    except subprocess.TimeoutExpired:
        return None, f"cutelab profile timed out after {timeout} s"
    report = p.stdout.split("=" * 100)[-1]
    if p.returncode != 0 or not os.path.exists(out):
        return None, f"cutelab profile failed (exit {p.returncode}):\n{(p.stderr or '')[-3000:]}\n{report[-2000:]}"
    with open(out) as f:
        return json.load(f), report


def parse_first_launches(text: str) -> Dict[str, Dict[str, float]]:
    """{kernel name: {metric: value}} of each kernel's first profiled launch, from ncu --csv."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith('"ID"')), None)
    if start is None:
        return {}
    first_id: Dict[str, str] = {}
    out: Dict[str, Dict[str, float]] = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        k = (row.get("Kernel Name") or "").split("(")[0].strip()
        m, v, i = row.get("Metric Name"), row.get("Metric Value"), row.get("ID")
        if not k or not m or v is None:
            continue
        if first_id.setdefault(k, i) != i:
            continue
        try:
            out.setdefault(k, {})[m] = float(v.replace(",", ""))
        except ValueError:
            continue
    return out


def gpu_counters(prog: List[str], names: List[str], ncu: str, metrics: List[str], workdir: str,
                 timeout: int) -> Tuple[Dict[str, Dict[str, float]], str]:
    log = os.path.join(workdir, "ncu.csv")
    if os.path.exists(log):
        os.remove(log)
    regex = "regex:^(" + "|".join(re.escape(n) for n in names) + ")$"
    cmd = [ncu, "--csv", "--print-units", "base", "--target-processes", "all", "--kernel-name", regex,
           "--metrics", ",".join(metrics), "--log-file", log, sys.executable] + prog
    print("running: " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_env(False), cwd=ROOT)
        msg = p.stdout[-1500:] + p.stderr[-1500:]
    except subprocess.TimeoutExpired:
        return {}, f"ncu timed out after {timeout} s"
    text = open(log, errors="replace").read() if os.path.exists(log) else ""
    notes = "\n".join(ln for ln in (text + "\n" + msg).splitlines() if "==ERROR==" in ln or "==WARNING==" in ln)
    return parse_first_launches(text), notes or (msg if p.returncode else "")


def _fmt(x: Optional[float]) -> str:
    if x is None:
        return "-"
    return f"{x:,.0f}" if abs(x - round(x)) < 1e-6 or abs(x) >= 1000 else f"{x:,.2f}"


def compare(kernel: dict, measured: Optional[Dict[str, float]]) -> Tuple[List[str], int]:
    """Table lines for one kernel and the number of rows that differ."""
    pred = dict(kernel["ncu"])
    lines = [f"  {'counter':<22} {'cutelab profile':>16} {'ncu':>16} {'per request':>23}  verdict"]
    bad = 0
    notes: List[str] = []
    if measured is not None:
        ld = "l1tex__t_{}_pipe_lsu_mem_global_op_ld.sum"
        ldgsts = "l1tex__t_{}_pipe_lsu_mem_global_op_ldgsts.sum"
        if ldgsts.format("requests") not in measured and pred.get(ldgsts.format("requests")):
            # an ncu without the ldgsts metrics (the H100's, 2026-11-23) counts cp.async (LDGSTS) in the
            # global load counters: compare the sums
            for k in ("requests", "sectors"):
                pred[ld.format(k)] = (pred.get(ld.format(k)) or 0) + (pred.pop(ldgsts.format(k), 0) or 0)
            notes.append("  (this ncu counts cp.async in the global load rows: cutelab's cp.async counts are added there)")
        if pred.get("sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum"):
            # l1tex's shared-load wavefronts and conflicts include ldmatrix's (H100: 1,024 LDS + 16,896 LDSM
            # wavefronts = 17,920 of 17,924 measured for tensorop_gemm); the ldsm rows stay as they are
            for a, b in (("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                          "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum"),
                         ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                          "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum")):
                pred[a] = (pred.get(a) or 0) + (pred.get(b) or 0)
            notes.append("  (l1tex's shared load rows include ldmatrix: cutelab's ldmatrix counts are added there)")

    def row(label: str, p: Optional[float], m: Optional[float], per: str = "") -> None:
        nonlocal bad
        if p is None and (m is None or m == 0):
            return
        if m is None:
            verdict = "no ncu value" if measured is not None else "not measured"
        else:
            pv = p or 0.0
            ok = abs(pv - m) <= max(1.0, 0.01 * max(abs(pv), abs(m)))
            verdict = "ok" if ok else "DIFF"
            bad += not ok
        lines.append(f"  {label:<22} {_fmt(p):>16} {_fmt(m):>16} {per:>23}  {verdict}")

    for label, metric in ROWS:
        p = pred.get(metric)
        m = measured.get(metric) if measured else None
        per = ""
        if label.endswith("sectors"):
            rm = metric.replace("_t_sectors_", "_t_requests_")
            if rm:
                pr, mr = pred.get(rm), (measured or {}).get(rm)
                per = f"{(p or 0) / pr:.2f}" if pr else "-"
                per += f" | {(m or 0) / mr:.2f}" if mr else " | -"
        row(label, p, m, per)
    for label, sect, metric in BYTES:
        p = pred.get(sect)
        row(label, None if p is None else 32 * p, measured.get(metric) if measured else None)
    return lines + notes, bad


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--program", action="append", default=[],
                    help='a program and its arguments, e.g. "examples/dsl/sgemm.py --mnk 512,512,256" (repeatable; '
                         "added to the defaults: elementwise_add, elementwise_apply and the seeds' copies)")
    ap.add_argument("--no-defaults", action="store_true", help="only the --program ones")
    ap.add_argument("--only", help="only programs whose command line contains this text")
    ap.add_argument("--dry-run", action="store_true", help="only the CPU profiles: no GPU, no ncu")
    ap.add_argument("--blocks", type=int, help="blocks recorded per launch by cutelab profile (default 32)")
    ap.add_argument("--all-blocks", action="store_true", help="cutelab profile records every block")
    ap.add_argument("--ncu", help="the ncu executable (default: PATH, /usr/local/cuda*/bin, ...)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds for one program's run (default 600)")
    ap.add_argument("--json", help="write everything (predicted and measured, per kernel) here")
    ap.add_argument("--predicted", help="take the CPU side from this --json file of an earlier run (e.g. a --dry-run "
                                        "on a machine without a GPU) instead of running cutelab profile again")
    args = ap.parse_args(argv)

    progs = [shlex.split(p) for p in ([] if args.no_defaults else DEFAULT_PROGRAMS) + args.program]
    if args.only:
        progs = [p for p in progs if args.only in " ".join(p)]
    if not progs:
        print("ncu_profile: no program selected", file=sys.stderr)
        return 2
    ncu = None
    metrics = METRICS
    if not args.dry_run:
        from ncu_access import _query_metrics, find_ncu  # benchmarks/ncu_access.py: the same search for ncu

        ncu = find_ncu(args.ncu)
        if ncu is None:
            print("ncu_profile: ncu (Nsight Compute) not found; use --ncu PATH, or --dry-run for the CPU side only",
                  file=sys.stderr)
            return 2
        known = _query_metrics(ncu)  # an unknown metric makes ncu refuse the whole run: ask only for listed ones
        metrics = [m for m in METRICS if known is None or m.rsplit(".", 1)[0] in known] or METRICS
        if metrics != METRICS:
            print(f"this ncu does not list {', '.join(sorted(set(METRICS) - set(metrics)))}: not measured")
    results = []
    bad = measured_any = 0
    with tempfile.TemporaryDirectory(prefix="ncu_profile_") as wd:
        for prog in progs:
            title = " ".join(prog)
            print(f"\n=== {title}", flush=True)
            if args.predicted:
                with open(args.predicted) as f:
                    earlier = [r["profile"] for r in json.load(f) if r.get("program") == title and "profile" in r]
                prof, msg = ({"kernels": earlier}, "") if earlier else (None, f"no prediction for {title!r} in "
                                                                              f"{args.predicted}")
            else:
                prof, msg = cpu_profile(prog, wd, args.blocks, args.all_blocks, args.timeout)
            if prof is None:
                print(msg)
                bad += 1
                results.append({"program": title, "error": msg})
                continue
            kernels = prof["kernels"]
            if not kernels:
                print("  (no kernel launched)")
                continue
            measured: Dict[str, Dict[str, float]] = {}
            if ncu:
                measured, notes = gpu_counters(prog, [k["name"] for k in kernels], ncu, metrics, wd, args.timeout)
                if notes:
                    print(notes)
            for k in kernels:
                m = measured.get(k["name"]) if ncu else None
                measured_any += m is not None
                print(f"\nkernel {k['name']}  grid {tuple(k['grid'])}  block {tuple(k['block'])}  "
                      f"(cutelab profile: {k['recorded_blocks']} of {k['blocks']} blocks recorded, scaled by "
                      f"{k['scale']:g}; ncu: first launch{'' if m is not None else ', not measured'})")
                lines, nbad = compare(k, m)
                print("\n".join(lines))
                if m is not None:
                    bad += nbad
                results.append({"program": title, "kernel": k["name"], "predicted": k["ncu"], "measured": m,
                                "profile": k})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if args.dry_run:
        return 1 if bad else 0
    if not measured_any:
        print("\nncu_profile: nothing was measured on the GPU (see the messages above)", file=sys.stderr)
        return 2
    print(f"\n{'all counters match' if not bad else f'{bad} counter(s) differ'}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
