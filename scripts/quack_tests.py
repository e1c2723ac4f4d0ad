"""Run quack's own test suite (Dao-AILab's quack-kernels) unchanged under ``cutelab run -m pytest`` on the CPU.

quack-kernels 0.5.3 (the version flash-attn-4 4.0.0b27 asks for) is installed apart from the environment,
without its dependencies (``pip install --no-deps --target DIR/site``), with what it imports at module level:
einops and apache-tvm-ffi (quack's kernel cache imports ``tvm_ffi``); nanobind beside them is for
tests/compat/test_compat_aot.py (CUTLASS's ffi/jit_argument.py). Its nvidia-cutlass-dsl dependency is
not installed: under ``cutelab run``, ``import cutlass`` is cutelab. Its ``import triton`` (the autotuner)
finds cutelab's stand-in for Triton's host utilities when Triton is not installed (cutelab.compat.triton_host).

Its tests come from the sdist on PyPI (``--fetch``; the same test files as the v0.5.3 tag, without the
conftest.py, which only assigns GPUs to xdist workers and retries on out-of-memory), or from quack's git
repository at the tag (``--repo``, with its conftest.py). The plugin scripts/quack_select.py selects the
smallest sizes (see it). The script prints one line per test file: passed, failed, errors, skipped.

    python3 scripts/quack_tests.py --fetch .quack                 # install into .quack/site, tests in .quack/tests
    python3 scripts/quack_tests.py --dir .quack [--arch sm_80] [--files softmax,rmsnorm] [-- pytest args]
    python3 scripts/quack_tests.py --dir DIR --repo QUACK_GIT_DIR   # the tag's tests (with conftest.py)

``--arch`` sets CUTE_DSL_ARCH: the emulated GPU's capability (quack picks its SM80 or SM90 paths by it).
"""

from __future__ import annotations

import argparse
import collections
import glob
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

VERSION = "0.5.3"
PINS = (f"quack-kernels=={VERSION}", "einops==0.8.2", "apache-tvm-ffi==0.1.15.post2",
        "nanobind==3.1.0")  # nanobind: CUTLASS's dsl_tutorials/ffi/jit_argument.py builds its C module with it
# flash-attn-4 (flash_attn.cute) at the version that asks for this quack: its tests are carried in
# tests/compat/programs/flash_attn (scripts/flash_attn_tests.py runs them with this folder's site)
FLASH_ATTN_PINS = ("flash-attn-4==4.0.0b27",)
REV = f"v{VERSION}"
HERE = os.path.dirname(os.path.abspath(__file__))
# the test files of the kernels the issue names: softmax, RMSNorm, LayerNorm, cross-entropy, the GEMMs
FILES = ("softmax", "cross_entropy", "rmsnorm", "layernorm", "linear", "mlp", "gemm_symmetric",
         "linear_cross_entropy")


def fetch(root: str) -> None:
    """Install the pinned packages (quack's and flash-attn-4) into ROOT/site and put quack's sdist's tests in
    ROOT/tests (idempotent: a site that lacks one of the packages is installed over)."""
    site, tests = os.path.join(root, "site"), os.path.join(root, "tests")
    if not all(os.path.isdir(os.path.join(site, pkg)) for pkg in ("quack", "flash_attn", "einops", "tvm_ffi",
                                                                 "nanobind")):
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--upgrade", "--target", site,
                        *PINS, *FLASH_ATTN_PINS], check=True)
    if not os.path.isdir(tests):
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                            "--no-build-isolation", "-d", tmp, f"quack-kernels=={VERSION}"], check=True)
            (sdist,) = glob.glob(os.path.join(tmp, "*.tar.gz"))
            with tarfile.open(sdist) as tar:
                top = tar.getnames()[0].split("/")[0]
                members = [m for m in tar.getmembers() if m.name.startswith(f"{top}/tests/") and m.isfile()]
                tar.extractall(tmp, members=members)
            shutil.copytree(os.path.join(tmp, top, "tests"), tests)


def export_tests(repo: str, rev: str, out: str) -> None:
    """The tests/ folder of quack's git repository at rev (with its conftest.py)."""
    names = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", rev, "tests"], check=True,
                           capture_output=True, text=True).stdout.split()
    for name in names:
        path = os.path.join(out, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(subprocess.run(["git", "-C", repo, "show", f"{rev}:{name}"], check=True,
                                   capture_output=True).stdout)


def run(root: str, files: list, arch: str, extra: list, env_extra: dict, tests_dir: str = "") -> tuple:
    """Run the selected tests; returns (exit code, per-file counts, pytest's last line)."""
    work = os.path.dirname(tests_dir) if tests_dir else root
    site = os.path.abspath(os.path.join(root, "site"))
    env = dict(os.environ, CUTE_DSL_ARCH=arch, **env_extra)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), site, HERE) if p)
    env.setdefault("QUACK_CACHE_ENABLED", "0")  # quack's on-disk cache of exported objects (cutelab exports none)
    paths = [f"tests/test_{f}.py" for f in files]
    cmd = ["cutelab", "run", "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-p", "quack_select",
           "-q", "-rA", *extra, *paths]
    res = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
    table: dict = collections.defaultdict(collections.Counter)
    for line in res.stdout.splitlines():
        m = re.match(r"(PASSED|FAILED|ERROR|SKIPPED)(?: \[\d+\])? (\S+?)(?:::|:\d+)", line)
        if m:
            table[m.group(2)][m.group(1)] += 1
    out = res.stdout.strip().splitlines()
    return res.returncode, table, (out[-1] if out else res.stderr[-2000:]), res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fetch", metavar="DIR", help="install the pinned packages and the sdist's tests into DIR, and stop")
    ap.add_argument("--dir", default=".quack", help="the folder --fetch filled (default .quack)")
    ap.add_argument("--repo", help="quack's git directory: run the tag's tests (with conftest.py) instead of the sdist's")
    ap.add_argument("--arch", default="sm_90a", help="CUTE_DSL_ARCH (default sm_90a; sm_80 for the Ampere paths)")
    ap.add_argument("--files", default=",".join(FILES), help="test files (test_NAME.py), joined by ','")
    ap.add_argument("--per-function", type=int, default=0, help="at most this many cases per test function")
    ap.add_argument("--ids", help="a file of test ids (one a line) to run, among the selected")
    ap.add_argument("pytest_args", nargs="*")
    a = ap.parse_args()
    if a.fetch:
        fetch(a.fetch)
        return
    fetch(a.dir)
    tests_dir = ""
    if a.repo:
        tests_dir = os.path.join(tempfile.mkdtemp(prefix="quack_tests_"), "tests")
        export_tests(a.repo, REV, os.path.dirname(tests_dir))
    env = {}
    if a.per_function:
        env["QUACK_SELECT_PER_FUNCTION"] = str(a.per_function)
    if a.ids:
        env["QUACK_SELECT_IDS"] = os.path.abspath(a.ids)
    print(f"quack {VERSION}, CUTE_DSL_ARCH={a.arch}, files: {a.files}", flush=True)
    code, table, last, res = run(a.dir, a.files.split(","), a.arch, a.pytest_args, env, tests_dir)
    for line in res.stdout.splitlines():  # the cases that did not pass, with pytest's one-line reason
        if line.startswith(("FAILED ", "ERROR ")):
            print(line[:300])
    for f in sorted(table):
        c = table[f]
        print(f"{f}: {c['PASSED']} passed, {c['FAILED']} failed, {c['ERROR']} errors, {c['SKIPPED']} skipped")
    print(last)
    sys.exit(code)


if __name__ == "__main__":
    main()
