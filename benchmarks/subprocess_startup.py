"""What a test's subprocess costs before its program runs: CPU seconds (user + system, the process and
its children) of a fresh interpreter, of `import torch`, of importing cutelab's kernel and compat
layers, and of `cutelab run` on a one-line program, each with cutelab's source compiled to bytecode
(`python -m compileall`, as the README's test command does) and without (as where
PYTHONDONTWRITEBYTECODE=1 keeps the interpreter from writing it).

CPU time rather than wall time: the suite's subprocesses run on 2 cores shared with other work, and
CPU time is what they take from CI's two workers. Configurations alternate within each round; the
table gives the median over rounds.

    python benchmarks/subprocess_startup.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_of(cmd, env, cwd) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        plain = os.path.join(tmp, "plain", "src")
        compiled = os.path.join(tmp, "compiled", "src")
        ignore = shutil.ignore_patterns("__pycache__")
        shutil.copytree(os.path.join(ROOT, "src"), plain, ignore=ignore)
        shutil.copytree(os.path.join(ROOT, "src"), compiled, ignore=ignore)
        subprocess.run([sys.executable, "-m", "compileall", "-q", compiled], check=True, stdout=subprocess.DEVNULL)
        prog = os.path.join(tmp, "prog.py")
        with open(prog, "w") as f:
            f.write("print(1)\n")
        cases = [("python -c pass", ["-c", "pass"], None), ("import torch", ["-c", "import torch"], None)]
        for label, src in (("no bytecode", plain), ("bytecode", compiled)):
            cases.append((f"import cutelab.kernel, cutelab.compat.run ({label})",
                          ["-c", "import cutelab.kernel, cutelab.compat.run"], src))
            cases.append((f"cutelab run prog.py ({label})", ["-m", "cutelab", "run", prog], src))
        times = {c[0]: [] for c in cases}
        for _ in range(a.rounds):
            for label, args, src in cases:
                env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
                env["PYTHONPATH"] = src or os.environ.get("PYTHONPATH", "")
                times[label].append(cpu_of([sys.executable, *args], env, tmp))
    print(f"CPU seconds per process, median of {a.rounds} rounds (min-max):")
    for label, ts in times.items():
        print(f"  {label:58s} {statistics.median(ts):6.2f}  ({min(ts):.2f}-{max(ts):.2f})")


if __name__ == "__main__":
    main()
