"""CUTLASS's experimental tutorials 02 (naive GEMM) and 03 (shared-memory tiled GEMM) on the CPU
interpreter, with and without dropping dead registers (kernel/cpu/liveness.py, ``warps.DROP_DEAD``).

    python benchmarks/interp_liveness.py [--n 1024] [--rounds 3] [--programs 02,03] [--git DIR]

Each tutorial's kernel accumulates a Python float over K in a loop the trace unrolls, so the kernel
has thousands of registers. Each run is a child process (``cutelab run`` of the tutorial, taken
from the CUTLASS mirror; ``--n`` replaces the tutorial's 1024 sizes) with DROP_DEAD on or off, the
two alternated round by round; a row shows the medians of the child's CPU seconds inside the
interpreter's launches (``time.process_time``, steadier than wall time on a shared machine), of the
whole child, and its peak RSS. CPU timings of GPU code say nothing about the GPU.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))
MIRROR = "/work/.mirror/NVIDIA+cutlass/repo"
TUTORIALS = {"02": "examples/python/CuTeDSL/experimental/primitives/tutorial/02_naive_gemm.py",
             "03": "examples/python/CuTeDSL/experimental/primitives/tutorial/03_gemm_tiled_smem.py"}

CHILD = r"""
import resource, sys, time
import cutelab.kernel.cpu.interpreter as I
import cutelab.kernel.cpu.warps as W
W.DROP_DEAD = sys.argv[1] == "1"
real, spent = I.interpret, [0.0]
def interpret(*a, **k):
    t = time.process_time()
    try:
        return real(*a, **k)
    finally:
        spent[0] += time.process_time() - t
I.interpret = interpret
t0 = time.process_time()
from cutelab.compat.run import main
rc = main(sys.argv[2:])
print("RESULT", spent[0], time.process_time() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, flush=True)
sys.exit(rc)
"""


def run(prog: str, drop: bool, cwd: str) -> tuple:
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"), PYTHONHASHSEED="0")
    env.pop("CUTE_DSL_ARCH", None)
    p = subprocess.run([sys.executable, "-c", CHILD, "1" if drop else "0", prog], cwd=cwd, env=env,
                       capture_output=True, text=True, timeout=3600)
    line = [x for x in p.stdout.splitlines() if x.startswith("RESULT")]
    if p.returncode or not line or "PASS" not in p.stdout:
        raise SystemExit(f"{prog} (drop={drop}) failed: exit {p.returncode}\n{p.stdout[-1000:]}\n{p.stderr[-2000:]}")
    _, interp, total, rss = line[-1].split()
    return float(interp), float(total), int(rss) / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1024, help="matrix size (the tutorials' own: 1024)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--programs", default="02,03")
    ap.add_argument("--git", default=MIRROR)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        progs = {}
        for name in a.programs.split(","):
            src = subprocess.run(["git", "-C", a.git, "show", f"HEAD:{TUTORIALS[name]}"], check=True,
                                 capture_output=True, text=True).stdout
            if a.n != 1024:  # 02: torch.randn(1024, 1024); 03: sz = 1024
                new = src.replace("1024, 1024", f"{a.n}, {a.n}").replace("sz = 1024", f"sz = {a.n}")
                if new == src:
                    raise SystemExit(f"tutorial {name}: no size 1024 found to replace")
                src = new
            path = os.path.join(tmp, f"t{name}.py")
            with open(path, "w") as f:
                f.write(src)
            progs[name] = path
        res = {(n, d): [] for n in progs for d in (False, True)}
        for r in range(a.rounds):
            for n, path in progs.items():
                for d in ((False, True) if r % 2 == 0 else (True, False)):
                    res[(n, d)].append(run(path, d, tmp))
                    print(f"round {r + 1} tutorial {n} drop={int(d)}: interpreter {res[(n, d)][-1][0]:.2f} CPU s, "
                          f"child {res[(n, d)][-1][1]:.2f} CPU s, {res[(n, d)][-1][2]:.0f} MiB", flush=True)
    print(f"\nmedians of {a.rounds} rounds, n = {a.n}, load {os.getloadavg()[0]:.1f}")
    print("| tutorial | registers kept: interpreter CPU s | dropped: interpreter CPU s | speed-up | child CPU s "
          "kept / dropped | peak RSS MiB kept / dropped |")
    print("|---|---|---|---|---|---|")
    for n in progs:
        k, d = res[(n, False)], res[(n, True)]
        mk, md = (statistics.median(x[0] for x in k), statistics.median(x[0] for x in d))
        print(f"| {n} | {mk:.2f} | {md:.2f} | {mk / md:.2f}x | {statistics.median(x[1] for x in k):.2f} / "
              f"{statistics.median(x[1] for x in d):.2f} | {statistics.median(x[2] for x in k):.0f} / "
              f"{statistics.median(x[2] for x in d):.0f} |")


if __name__ == "__main__":
    main()
