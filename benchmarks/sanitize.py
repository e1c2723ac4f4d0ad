"""compute-sanitizer (memcheck, racecheck, synccheck) over cutelab's GPU programs at small sizes.

Each program runs as a user runs it (``python program.py ARGS``), under each tool:

    compute-sanitizer --tool TOOL --report-api-errors no python PROGRAM ARGS

(``--report-api-errors no``: on the H100 the CUDA API errors that torch and the driver probe for,
and handle, would otherwise be reported). The tool's summary line is parsed: ``ERROR SUMMARY: N
errors`` (memcheck, synccheck), ``RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)``
(racecheck). A run is clean when its summary says 0 and the program exited 0 (it runs its own
correctness check). The programs: CuTe DSL's four Ampere examples in examples/dsl/, our two GEMMs
in examples/gemm/ (sm90_gemm.py on its ``--gpu`` path, in its default and its warp-specialised
configurations, bf16 and e4m3), the Hopper attention forward and backward (examples/attention/, ``--gpu``), and the seeds' programs in examples/seeds/; sizes small enough that racecheck
(the slowest) finishes for all of them in a few minutes.

    python benchmarks/sanitize.py [--tools memcheck,racecheck,synccheck] [--only sm80_gemm,seeds/]
                                  [--jobs 4] [--timeout 300] [--json out.json] [--logs DIR]
    python benchmarks/sanitize.py --dry-run      # the commands, without running them

Prints one line per run as it finishes, then a markdown table (program x tool: the count, or why
the run failed). Exit status: 0 all clean, 1 any error, hazard or failed run, 2 nothing could run
(no compute-sanitizer, no GPU).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# benchmarks/ holds a copy.py: keep it from shadowing the standard library's copy module (torch imports it)
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]

TOOLS = ("memcheck", "racecheck", "synccheck")

# name -> (file under examples/, argv): small sizes, no benchmark loops
PROGRAMS: Dict[str, List[str]] = {
    "dsl/elementwise_add": ["examples/dsl/elementwise_add.py", "--M", "256", "--N", "512"],
    "dsl/elementwise_apply": ["examples/dsl/elementwise_apply.py", "--M", "256", "--N", "512"],
    "dsl/sgemm": ["examples/dsl/sgemm.py", "--mnk", "256,256,64", "--warmup_iterations", "1", "--iterations", "1"],
    "dsl/tensorop_gemm": ["examples/dsl/tensorop_gemm.py", "--mnkl", "256,256,128,1", "--benchmark", "none"],
    "dsl/flash_attention_v2": ["examples/dsl/flash_attention_v2.py", "--batch_size", "1", "--seqlen_q", "256",
                               "--seqlen_k", "256", "--num_head", "2", "--iterations", "1", "--warmup_iterations", "0",
                               "--skip_ref_check"],  # its reference, torch's SDPA (cuDNN), has racecheck hazards of its own
    "gemm/sm80_gemm": ["examples/gemm/sm80_gemm.py", "--mnk", "256,256,256", "--iterations", "1"],
    "gemm/sm80_gemm_bf16": ["examples/gemm/sm80_gemm.py", "--mnk", "256,256,256", "--dtype", "bf16",
                            "--iterations", "1"],
    "gemm/sm90_gemm": ["examples/gemm/sm90_gemm.py", "--gpu", "--mnk", "256,256,256", "--ctas", "4", "--iters", "2"],
    "gemm/sm90_gemm_ws": ["examples/gemm/sm90_gemm.py", "--gpu", "--mnk", "256,512,512", "--ctas", "3", "--ws",
                          "--mma-wgs", "2", "--tile", "128,256,64", "--stages", "3", "--iters", "2"],
    # a 16-bit C: the TMA epilogue (the C buffer written during the next tile's first wgmmas, stored by TMA boxes,
    # reused by a CTA's second tile once the boxes have read it), and the copy-out epilogue (named barriers, LDS/STG)
    "gemm/sm90_gemm_ws_bf16": ["examples/gemm/sm90_gemm.py", "--gpu", "--mnk", "256,1024,512", "--ctas", "3", "--ws",
                               "--mma-wgs", "2", "--tile", "128,256,64", "--stages", "3", "--dtype", "bf16",
                               "--c-dtype", "bf16", "--iters", "2"],
    "gemm/sm90_gemm_ws_bf16_smem": ["examples/gemm/sm90_gemm.py", "--gpu", "--mnk", "256,1024,512", "--ctas", "3",
                                    "--ws", "--mma-wgs", "2", "--tile", "128,256,64", "--stages", "3", "--dtype", "bf16",
                                    "--c-dtype", "bf16", "--epilogue", "smem", "--iters", "2"],
    # fp8: e4m3 A/B (k32 wgmmas from 128-byte k-tile rows), per-tensor scales read by the kernel, the same epilogue
    "gemm/sm90_gemm_ws_fp8": ["examples/gemm/sm90_gemm.py", "--gpu", "--mnk", "256,1024,512", "--ctas", "3", "--ws",
                              "--mma-wgs", "2", "--tile", "128,256,128", "--stages", "3", "--dtype", "e4m3",
                              "--c-dtype", "bf16", "--iters", "2", "--no-scaled-mm"],
    # the stream-K tail (examples/gemm/sm90_streamk.py runs sm90_gemm.py --stream-k): 4 cluster tiles on 3 clusters of
    # 2 CTAs, the last tile cut over all 3 (two partial sums in global memory, release/acquire flags, 2 calls)
    "gemm/sm90_streamk": ["examples/gemm/sm90_streamk.py", "--gpu", "--mnk", "256,1024,512", "--ctas", "6", "--ws",
                          "--mma-wgs", "2", "--tile", "128,256,64", "--stages", "4", "--epi-cols", "128",
                          "--cluster-m", "2", "--dtype", "bf16", "--c-dtype", "bf16", "--iters", "2"],
    # ping-pong: each consumer warpgroup every other tile, mainloops in turn (bar.arrive / bar.sync 3 and 4), a C
    # buffer and an epilogue barrier (an id in a register) each
    "gemm/sm90_gemm_pingpong_fp8": ["examples/gemm/sm90_gemm.py", "--gpu", "--mnk", "320,1024,512", "--ctas", "3",
                                    "--ws", "--mma-wgs", "2", "--pingpong", "--tile", "64,256,128", "--stages", "4",
                                    "--dtype", "e4m3", "--c-dtype", "bf16", "--iters", "2", "--no-scaled-mm"],
    # the Hopper attention forward (TMA, wgmma, producer and ping-pong consumer warpgroups, named barriers)
    "attention/sm90_fmha_fwd": ["examples/attention/sm90_fmha_fwd.py", "--gpu", "--shape", "1,2,512,64", "--iters", "2"],
    "attention/sm90_fmha_fwd_causal": ["examples/attention/sm90_fmha_fwd.py", "--gpu", "--shape", "1,2,512,128",
                                       "--causal", "--iters", "2"],
    # the Hopper attention backward (its three kernels: TMA producer and dQ writer warps, two consumer warpgroups,
    # dS through shared memory behind named barriers, dQ by TMA reduce-adds)
    "attention/sm90_fmha_bwd": ["examples/attention/sm90_fmha_bwd.py", "--gpu", "--shape", "1,2,512,64", "--iters", "2"],
    "attention/sm90_fmha_bwd_causal": ["examples/attention/sm90_fmha_bwd.py", "--gpu", "--shape", "1,2,512,128",
                                       "--causal", "--iters", "2"],
    # head dim 64, causal (query blocks of 128, one on the diagonal), P^T in two halves
    "attention/sm90_fmha_bwd_causal64": ["examples/attention/sm90_fmha_bwd.py", "--gpu", "--shape", "1,2,512,64",
                                         "--causal", "--p-split", "2", "--iters", "2"],
    "seeds/copy_inner_partition": ["examples/seeds/copy_inner_partition.py"],
    "seeds/copy_outer_partition": ["examples/seeds/copy_outer_partition.py"],
    "seeds/copy_tv_partition": ["examples/seeds/copy_tv_partition.py"],
    "seeds/tv_layout_printf": ["examples/seeds/tv_layout_printf.py"],
}

_ERROR_SUMMARY = re.compile(r"ERROR SUMMARY:\s*(\d+)\s+errors?")
_RACE_SUMMARY = re.compile(r"RACECHECK SUMMARY:\s*(\d+)\s+hazards?\s+displayed\s*"
                           r"\(\s*(\d+)\s+errors?,\s*(\d+)\s+warnings?\s*\)")


def parse_summary(tool: str, output: str) -> Optional[Dict[str, int]]:
    """The counts in a compute-sanitizer run's summary, or None when it printed none (it did not
    finish). memcheck/synccheck: {"errors": N}; racecheck: {"hazards", "errors", "warnings"}. With
    several summaries (several processes), the counts add up.

    >>> parse_summary("memcheck", "========= ERROR SUMMARY: 2 errors")
    {'errors': 2}
    >>> parse_summary("racecheck", "========= RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)")
    {'hazards': 1, 'errors': 0, 'warnings': 1}
    >>> parse_summary("synccheck", "Results verified") is None
    True
    """
    if tool not in TOOLS:
        raise ValueError(f"parse_summary: unknown tool {tool!r} (choose from {', '.join(TOOLS)})")
    if tool == "racecheck":
        found = _RACE_SUMMARY.findall(output)
        if not found:
            return None
        return {"hazards": sum(int(h) for h, _, _ in found), "errors": sum(int(e) for _, e, _ in found),
                "warnings": sum(int(w) for _, _, w in found)}
    found = _ERROR_SUMMARY.findall(output)
    if not found:
        return None
    return {"errors": sum(int(n) for n in found)}


def judge(tool: str, output: str, returncode: Optional[int], timed_out: bool = False) -> Dict[str, Any]:
    """One run's verdict: clean (bool), cell (the table's text), counts.

    >>> judge("memcheck", "========= ERROR SUMMARY: 0 errors", 0)["cell"]
    '0'
    >>> judge("memcheck", "Traceback ...\\nValueError: bad\\n========= ERROR SUMMARY: 0 errors", 1)["cell"]
    'failed to run (exit 1: ValueError: bad)'
    """
    counts = parse_summary(tool, output)
    res: Dict[str, Any] = {"counts": counts, "returncode": returncode}
    if timed_out:
        res.update(clean=False, cell="timed out" + (f" ({_count_text(tool, counts)} so far)" if counts else ""))
        return res
    if counts is None:
        res.update(clean=False, cell=f"failed to run (no summary; exit {returncode}: {_last_line(output)})")
        return res
    bad = counts["hazards"] if tool == "racecheck" else counts["errors"]
    if bad:
        res.update(clean=False, cell=_count_text(tool, counts))
    elif returncode != 0:
        res.update(clean=False, cell=f"failed to run (exit {returncode}: {_last_line(output)})")
    else:
        res.update(clean=True, cell="0")
    return res


def _n(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def _count_text(tool: str, counts: Dict[str, int]) -> str:
    if tool == "racecheck":
        return (f"{_n(counts['hazards'], 'hazard')} ({_n(counts['errors'], 'error')}, "
                f"{_n(counts['warnings'], 'warning')})")
    return _n(counts["errors"], "error")


def _last_line(output: str) -> str:
    """The program's last line of output that is not the sanitizer's own."""
    lines = [x.strip() for x in output.splitlines() if x.strip() and not x.startswith("=========")]
    return (lines[-1] if lines else "no output")[:200].replace("|", "/")


def command(sanitizer: str, tool: str, argv: List[str], python: str = sys.executable) -> List[str]:
    """The command line of one run (argv: the program's file, relative to the repository, and args).

    >>> command("compute-sanitizer", "racecheck", ["examples/x.py", "--n", "4"], "python")[:6]
    ['compute-sanitizer', '--tool', 'racecheck', '--report-api-errors', 'no', 'python']
    """
    return [sanitizer, "--tool", tool, "--report-api-errors", "no", python,
            os.path.join(ROOT, argv[0])] + argv[1:]


def run_one(name: str, tool: str, cmd: List[str], env: Dict[str, str], timeout: int,
            logs: Optional[str]) -> Dict[str, Any]:
    """One program under one tool, judged; its own process group, all of it ended when it times
    out (compute-sanitizer's target is its child: killing the sanitizer alone would leave the
    program running on the GPU)."""
    t0 = time.perf_counter()
    timed_out = False
    p = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         errors="replace", start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        rc, timed_out = None, True
    res = dict(judge(tool, out, rc, timed_out), program=name, tool=tool, seconds=time.perf_counter() - t0)
    if logs:
        os.makedirs(logs, exist_ok=True)
        path = os.path.join(logs, f"{name.replace('/', '_').replace(' ', '_')}.{tool}.log")
        with open(path, "w") as fh:
            fh.write(" ".join(cmd) + "\n\n" + out)
        res["log"] = path
    if not res["clean"]:
        res["tail"] = out[-2500:]
    return res


def table(results: List[Dict[str, Any]], programs: List[str], tools: List[str]) -> str:
    """program x tool -> count / why it failed, as markdown.

    >>> print(table([{"program": "p", "tool": "memcheck", "cell": "0"}], ["p"], ["memcheck"]))
    | program | memcheck |
    |---|---|
    | p | 0 |
    """
    cell = {(r["program"], r["tool"]): r["cell"] for r in results}
    out = ["| program | " + " | ".join(tools) + " |", "|---" * (len(tools) + 1) + "|"]
    for p in programs:
        out.append(f"| {p} | " + " | ".join(cell.get((p, t), "-") for t in tools) + " |")
    return "\n".join(out)


def select(only: str) -> List[str]:
    """Programs whose name contains any of the comma-separated parts of only (all when empty).

    >>> select("gemm/sm90_gemm_ws")
    ['gemm/sm90_gemm_ws', 'gemm/sm90_gemm_ws_bf16', 'gemm/sm90_gemm_ws_bf16_smem', 'gemm/sm90_gemm_ws_fp8']
    >>> select("attention/sm90_fmha_bwd")
    ['attention/sm90_fmha_bwd', 'attention/sm90_fmha_bwd_causal', 'attention/sm90_fmha_bwd_causal64']
    """
    parts = [x.strip() for x in only.split(",") if x.strip()]
    names = [n for n in PROGRAMS if not parts or any(p in n for p in parts)]
    if not names:
        raise SystemExit(f"sanitize.py: --only {only!r} matches no program (programs: {', '.join(PROGRAMS)})")
    return names


def no_gpu() -> Optional[str]:
    """Why the programs would not run on a GPU here (None: they would)."""
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA GPU (torch.cuda.is_available() is False)"
    return None


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tools", default=",".join(TOOLS), help="comma-separated: " + ", ".join(TOOLS))
    ap.add_argument("--only", default="", help="comma-separated parts of program names (e.g. sm90,seeds/)")
    ap.add_argument("--jobs", type=int, default=4, help="runs at once (they share the GPU)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per run")
    ap.add_argument("--sanitizer", default=None, help="compute-sanitizer's path (default: on PATH or in CUDA_HOME)")
    ap.add_argument("--json")
    ap.add_argument("--logs", help="write each run's full output to a file in this folder")
    ap.add_argument("--dry-run", action="store_true", help="print the commands only")
    args = ap.parse_args(argv)
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    bad = [t for t in tools if t not in TOOLS]
    if bad or not tools:
        ap.error(f"--tools {args.tools!r}: choose from {', '.join(TOOLS)}")
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    names = select(args.only)
    sanitizer = args.sanitizer or shutil.which("compute-sanitizer")
    if sanitizer is None:
        for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
            cand = os.path.join(home, "bin", "compute-sanitizer") if home else None
            if cand and os.path.exists(cand):
                sanitizer = cand
                break
    runs = [(n, t, command(sanitizer or "compute-sanitizer", t, PROGRAMS[n])) for n in names for t in tools]
    if args.dry_run:
        for n, t, cmd in runs:
            print(f"{n} / {t}: {' '.join(cmd)}")
        return 0
    if sanitizer is None or not os.path.exists(sanitizer):
        print(f"sanitize.py: compute-sanitizer not found ({sanitizer or 'PATH, CUDA_HOME, /usr/local/cuda'}): "
              "nothing run")
        return 2
    why = no_gpu()
    if why:  # the programs would run on the CPU interpreter: a sanitizer with no kernel to see says 0
        print(f"sanitize.py: {why}: nothing run")
        return 2
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.path.join(ROOT, "src") + os.pathsep + env.get("PYTHONPATH", "")
    results = []
    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_one, n, t, cmd, env, args.timeout, args.logs) for n, t, cmd in runs]
        for f in concurrent.futures.as_completed(futures):
            r = f.result()
            results.append(r)
            print(json.dumps({k: (round(v, 1) if isinstance(v, float) else v) for k, v in r.items() if k != "tail"}),
                  flush=True)
            if not r["clean"]:
                print(r["tail"][-1500:], flush=True)
    print(f"\ncompute-sanitizer ({sanitizer}), {len(results)} runs in {time.perf_counter() - t0:.0f} s; "
          "each cell: errors (memcheck, synccheck) or hazards (racecheck) reported, 0 = clean\n")
    print(table(results, names, tools))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
    if all(r["cell"].startswith("failed to run") for r in results) and all(r["counts"] is None for r in results):
        return 2
    return 0 if all(r["clean"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
