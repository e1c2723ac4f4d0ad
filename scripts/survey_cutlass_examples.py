"""Run every CUTLASS CuTe DSL example, notebook and tutorial that does not need Blackwell with
``cutelab run FILE`` (default arguments, CPU interpreter) and record which pass.

The programs come from a CUTLASS git directory (default: the mirror /work/.mirror/NVIDIA+cutlass/repo,
its HEAD), exported with ``git archive`` into a temporary folder so that their sibling imports
(``helpers``, ``utils``) resolve as in CUTLASS's tree. Left out: files under a folder named ``blackwell*`` or
``tcgen05/``, and the helper modules that are imported, not run (``__init__.py``, ``helpers/*``,
``utils/fmha_helpers.py``, ``utils/sparse_utils.py``). A program passes when it exits 0 within the
timeout and prints no line starting with ``FAIL``, or, for a program that ends by raising on purpose
(``INTENDED_ERRORS``), when it exits with the error it demonstrates.

    python3 scripts/survey_cutlass_examples.py [--git DIR] [--rev REV] [--timeout 300] [--jobs 2]
        [--cpu-timeout SECONDS] [--only SUBSTRING ...] [--json OUT.json]

``--timeout`` limits each program's wall-clock seconds; on a shared, loaded machine that limit stops
programs that need far less CPU (a wall TIMEOUT then says little). ``--cpu-timeout`` limits its CPU
seconds instead (RLIMIT_CPU in the child: a program past it is a TIMEOUT with its CPU time), and the
wall limit becomes ``--timeout`` times 20 unless given.

It prints one line per program (PASS/FAIL/TIMEOUT, wall and CPU seconds, the last line of stderr for a
failure) and the totals. Run it with this checkout's src on PYTHONPATH (the children inherit it).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import io
import json
import os
import re
import signal
import subprocess
import sys
import tarfile
import tempfile
import time

MIRROR = "/work/.mirror/NVIDIA+cutlass/repo"
ROOT = "examples/python/CuTeDSL"


# programs that end by raising on purpose (a demonstration of the error), with the error their last stderr line must
# show: they pass when they exit with it, as they do under CuTe DSL
INTENDED_ERRORS = {
    # its last call gives a 5-element tensor to a function compiled for 10 ("should raise an error because of shape
    # mismatch"); TVM-FFI raises a ValueError naming the argument, as cutelab's LaunchError (a ValueError) does
    "dsl_tutorials/tvm_ffi/error_reporting.py": r"(ValueError|LaunchError): .*argument 0",
}


def programs(git: str, rev: str) -> list:
    names = subprocess.run(["git", "-C", git, "ls-tree", "-r", "--name-only", rev, ROOT], check=True,
                           capture_output=True, text=True).stdout.split()
    keep = []
    for n in names:
        rel = n[len(ROOT) + 1:]
        if not rel.endswith((".py", ".ipynb")):
            continue
        parts = rel.split("/")
        if any("blackwell" in d for d in parts[:-1]) or "tcgen05" in parts or parts[-1] == "__init__.py":
            continue
        if parts[0] == "helpers" or rel in ("utils/fmha_helpers.py", "utils/sparse_utils.py"):
            continue
        keep.append(rel)
    return sorted(keep)


def export(git: str, rev: str, dest: str) -> str:
    data = subprocess.run(["git", "-C", git, "archive", rev, ROOT], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest)
    return os.path.join(dest, ROOT)


def _cpu_limit(seconds: float):
    def set_limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_CPU, (int(seconds), int(seconds) + 5))
    return set_limit


# programs that load what another program wrote (an ahead-of-time export): run after it, in the same job
AFTER = {
    "dsl_tutorials/export/load_in_python.py": "dsl_tutorials/export/export_to_c.py",
    "dsl_tutorials/tvm_ffi/aot_use_in_torch.py": "dsl_tutorials/tvm_ffi/aot_export.py",
    "dsl_tutorials/tvm_ffi/aot_use_in_jax.py": "dsl_tutorials/tvm_ffi/aot_export.py",
}


def chains(names: list) -> list:
    """names in jobs: each program, with the programs that need its output (AFTER) after it in its job.

    >>> chains(["a.py", "dsl_tutorials/export/export_to_c.py", "dsl_tutorials/export/load_in_python.py"])
    [['a.py'], ['dsl_tutorials/export/export_to_c.py', 'dsl_tutorials/export/load_in_python.py']]
    """
    deps = {n: AFTER[n] for n in names if AFTER.get(n) in names}
    return [[h] + [n for n in names if deps.get(n) == h] for h in names if h not in deps]


def run_one(base: str, rel: str, timeout: float, cpu_timeout: float = 0) -> dict:
    """Run one program; its wall seconds and (where /usr/bin/time exists) its CPU seconds, user + system,
    which a loaded machine changes less."""
    path = os.path.join(base, rel)
    env = dict(os.environ, PYTHONHASHSEED="0")
    env.pop("CUTE_DSL_ARCH", None)
    if env.get("PYTHONPATH"):  # the children run in the programs' folders
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(x) for x in env["PYTHONPATH"].split(os.pathsep) if x)
    cmd = [sys.executable, "-m", "cutelab", "run", path]
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        if os.path.exists("/usr/bin/time"):
            cmd = ["/usr/bin/time", "-f", "%U %S", "-o", tf.name] + cmd
        t0 = time.perf_counter()
        try:
            p = subprocess.run(cmd, cwd=os.path.dirname(path), env=env, capture_output=True, text=True,
                               timeout=timeout, preexec_fn=_cpu_limit(cpu_timeout) if cpu_timeout else None)
        except subprocess.TimeoutExpired:
            return {"program": rel, "result": "TIMEOUT", "seconds": round(time.perf_counter() - t0, 1), "cpu": None,
                    "why": ""}
        secs = round(time.perf_counter() - t0, 1)
        try:
            cpu = round(sum(float(x) for x in tf.read().split()[-2:]), 1)
        except ValueError:
            cpu = None
    # RLIMIT_CPU ends the program with SIGXCPU: -24 from subprocess, 152 (128 + 24) through /usr/bin/time, whose
    # own count of the child's CPU seconds can come out a little under the limit
    killed_by_limit = p.returncode in (-signal.SIGXCPU, 128 + signal.SIGXCPU)
    if cpu_timeout and p.returncode != 0 and (killed_by_limit or (cpu is not None and cpu >= cpu_timeout - 1)):
        return {"program": rel, "result": "TIMEOUT", "seconds": secs, "cpu": cpu, "why": f"over {cpu_timeout:g} CPU s"}
    failed_line = any(line.lstrip().startswith("FAIL") for line in p.stdout.splitlines())
    ok = p.returncode == 0 and not failed_line
    why = ""
    if not ok:
        err = [line for line in p.stderr.strip().splitlines() if line.strip() and not line.startswith("error: invalid object")
               and not line.startswith("Command exited with non-zero status")]
        why = err[-1] if err else (f"exit {p.returncode}, printed FAIL" if failed_line else f"exit {p.returncode}")
        intended = INTENDED_ERRORS.get(rel)
        if intended is not None and p.returncode != 0 and not failed_line and re.search(intended, why):
            ok, why = True, f"raised as the program intends: {why}"
    return {"program": rel, "result": "PASS" if ok else "FAIL", "seconds": secs, "cpu": cpu, "why": why[:300]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--git", default=MIRROR)
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--timeout", type=float, default=None, help="wall seconds per program (300; with "
                    "--cpu-timeout, 20 times that)")
    ap.add_argument("--cpu-timeout", type=float, default=0, help="CPU seconds per program (0: no limit)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", nargs="*", default=None, help="run only programs whose path contains one of these")
    ap.add_argument("--json", default=None, help="write the results here")
    a = ap.parse_args(argv)
    if a.timeout is None:
        a.timeout = 20 * a.cpu_timeout if a.cpu_timeout else 300
    names = programs(a.git, a.rev)
    if a.only:
        names = [n for n in names if any(s in n for s in a.only)]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        base = export(a.git, a.rev, tmp)
        with cf.ThreadPoolExecutor(a.jobs) as ex:
            futs = {ex.submit(lambda c: [run_one(base, n, a.timeout, a.cpu_timeout) for n in c], c): c
                    for c in chains(names)}
            for f in cf.as_completed(futs):
                for r in f.result():
                    results.append(r)
                    cpu = "" if r["cpu"] is None else f" (cpu {r['cpu']:.1f}s)"
                    print(f"{r['result']:8s} {r['seconds']:7.1f}s{cpu}  {r['program']}  {r['why']}", flush=True)
    results.sort(key=lambda r: r["program"])
    passed = sum(r["result"] == "PASS" for r in results)
    print(f"\n{passed} of {len(results)} pass (load average now {os.getloadavg()[0]:.1f})")
    for r in results:
        if r["result"] != "PASS":
            print(f"  {r['result']:8s} {r['program']}: {r['why']}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
