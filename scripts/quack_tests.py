"""Run quack's own test suite (Dao-AILab's quack-kernels) unchanged under ``cutelab run -m pytest``.

quack is installed apart from the environment (``pip install --no-deps --target DIR quack_kernels==V``)
and its tests are taken from its git repository at the version's tag, so that the tests match the
kernels. The parametrized tests are selected by size (M rows, N columns), since the CPU interpreter
runs the large ones slowly; the others all run. The script prints one line per test file: passed,
failed and errors.

    python3 scripts/quack_tests.py --site /tmp/quacksite --repo QUACK_GIT_DIR --rev 97a5374 \\
        --max-m 199 --max-n 262144 [-- extra pytest args]

``--rev`` is the commit of the installed version (quack 0.1.9: ``97a5374``, "Bump to v0.1.9").
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

# (test function, position of M and of N in its parameter id)
SIZED = {"test_softmax": (0, 1), "test_cross_entropy": (0, 1), "test_rmsnorm_forward_backward": (0, 1),
         "test_layernorm_forward": (1, 0)}
TOO_BIG = ("test_rmsnorm_large_tensor", "test_rmsnorm_strided_tensor")  # 32K and 8x4096 rows


def export_tests(repo: str, rev: str, out: str) -> None:
    names = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", rev, "tests"], check=True,
                           capture_output=True, text=True).stdout.split()
    for name in names:
        path = os.path.join(out, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(subprocess.run(["git", "-C", repo, "show", f"{rev}:{name}"], check=True,
                                   capture_output=True).stdout)


def selected(ids: list, max_m: int, max_n: int) -> list:
    out = []
    for i in ids:
        fn = i.split("::")[1].split("[")[0]
        if fn in TOO_BIG:
            continue
        if fn in SIZED:
            p = re.search(r"\[(.*)\]", i).group(1).split("-")
            m, n = int(p[SIZED[fn][0]]), int(p[SIZED[fn][1]])
            if m > max_m or n > max_n:
                continue
        out.append(i)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--site", required=True, help="the folder quack is installed in (pip --target)")
    ap.add_argument("--repo", required=True, help="quack's git directory")
    ap.add_argument("--rev", default="97a5374", help="the commit of the installed version (default: v0.1.9)")
    ap.add_argument("--max-m", type=int, default=199)
    ap.add_argument("--max-n", type=int, default=262144)
    ap.add_argument("pytest_args", nargs="*")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="quack_tests_")
    export_tests(a.repo, a.rev, work)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), a.site) if p))
    run = ["cutelab", "run", "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly"]
    ids = [line for line in subprocess.run(run + ["tests", "--collect-only", "-q"], cwd=work, env=env,
                                           capture_output=True, text=True).stdout.splitlines() if "::" in line]
    sel = selected(ids, a.max_m, a.max_n)
    print(f"{len(sel)} of {len(ids)} tests selected (M <= {a.max_m}, N <= {a.max_n})", flush=True)
    res = subprocess.run(run + ["-q", "-rA"] + a.pytest_args + sel, cwd=work, env=env, capture_output=True, text=True)
    table: dict = collections.defaultdict(collections.Counter)
    for line in res.stdout.splitlines():
        m = re.match(r"(PASSED|FAILED|ERROR) (\S+?)::", line)
        if m:
            table[m.group(2)][m.group(1)] += 1
    for f in sorted(table):
        c = table[f]
        print(f"{f}: {c['PASSED']} passed, {c['FAILED']} failed, {c['ERROR']} errors")
    print(res.stdout.strip().splitlines()[-1] if res.stdout.strip() else res.stderr[-2000:])
    sys.exit(res.returncode)


if __name__ == "__main__":
    main()
