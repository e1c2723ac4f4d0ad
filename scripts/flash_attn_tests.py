"""Run flash_attn.cute's own tests (flash-attn-4, Dao-AILab's flash-attention) unchanged under ``cutelab run -m pytest``.

flash-attn-4 4.0.0b27 is installed apart from the environment (``pip install --no-deps --target SITE``),
with what it imports: quack-kernels 0.5.3 (its ``>=0.5.3``), einops, apache-tvm-ffi (its cache imports
``tvm_ffi``) and triton (quack 0.5.3's autotuner imports it; torch's CPU wheels do not carry it). Its
tests are taken from its git repository at the version's tag (``fa4-v4.0.0.beta27``: the wheel's files
are the tag's), so that they match the kernels. The selection is by test id (``--select``, default
``SM80_FORWARD``) at the smallest sizes the tests parametrize; the script prints one line per test
file: passed, failed and errors. Collecting test_flash_attn.py (415,818 parametrized cases) takes most of
a run's time on the interpreter (about 4 minutes here against 16 s for a packed-GQA case's call).

    python3 scripts/flash_attn_tests.py --site /tmp/fa4site --install \\
        --repo FLASH_ATTENTION_GIT_DIR [--select SM80_FORWARD|SM90_FORWARD|SM80_PACK_GQA|SM90_PACK_GQA|SM90_BACKWARD] \\
        [--arch sm_80] [-- extra pytest args]

``--arch`` sets CUTE_DSL_ARCH, which is the emulated GPU's capability (so flash_attn.cute picks its
SM80 or SM90 kernels) and the compile target; ``--select SM90_FORWARD`` runs the forward cases with
sm_90a. The test file's own FLASH_ATTENTION_DISABLE_SPLIT=TRUE
is set: SplitKV is refused by flash_attn.cute on SM80 itself ("SplitKV not supported on SM 8.0").
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

PINS = ("flash-attn-4==4.0.0b27", "quack-kernels==0.5.3", "einops==0.8.2", "apache-tvm-ffi==0.1.15.post2",
        "triton==3.9.0")
REV = "fa4-v4.0.0.beta27"

# the smallest cases of the forward tests (bf16), causal and not: SM80 (Ampere path)
SM80_FORWARD = tuple(
    f"tests/cute/test_flash_attn.py::test_flash_attn_small_head_dim[128-128-{d}-{causal}-dtype0]"
    for causal in (False, True) for d in (8, 16, 32)
)
# the same cases on the SM90 (Hopper) path: TMA loads, wgmma, warp-specialised producer and consumers, named
# barriers, and for causal the persistent tile scheduler (run with --arch sm_90a, the selection's default)
SM90_FORWARD = SM80_FORWARD
# test_flash_attn_output's forward with packed GQA and MQA: 6 query heads over 3 (gqa) or 1 (mqa) KV heads, d 64,
# causal, seqlen_q 64 > seqlen_k 32 (so the test itself skips its backward), each run with pack_gqa False, True and
# None (auto): SM80 packs Q's rows by addresses kept in registers and shuffled (PackGQA.load_Q/store_O/store_LSE)
SM80_PACK_GQA = tuple(
    f"tests/cute/test_flash_attn.py::test_flash_attn_output[64-32-64-True-0-0.0-False-False-False-{mha}-dtype0]"
    for mha in ("gqa", "mqa")
)
# the same on SM90: Q through TMA boxes of the packed ((heads, seqlen), d) view, the LSE by row addresses kept
# in registers
SM90_PACK_GQA = SM80_PACK_GQA
# the SM90 backward (flash_attn.cute refuses it on SM80): test_flash_attn_output's causal case at seqlen 3, d 64, 6
# heads: its forward (pack_gqa False, True, auto), then dQ, dK, dV against the fp32 reference: the preprocess kernel
# (dO.O row sums), the warp-specialised main kernel (TMA, wgmma, P and dS stored through quack's position-
# independent swizzled partitions, dQ accumulated with atomics) and the dQ conversion. The smallest size, 1x1, is
# not taken: its dQ and dK are exactly 0 in the reference and the test allows no error there, while dS = P (dP - D)
# keeps the difference of two fp32 sums of the same 64 products taken in different orders (wgmma's and the
# preprocess kernel's reduction), about 6e-7 on the CPU interpreter
SM90_BACKWARD = ("tests/cute/test_flash_attn.py::test_flash_attn_output[3-3-64-True-0-0.0-False-False-False-mha-dtype0]",)
SELECTIONS = {"SM80_FORWARD": SM80_FORWARD, "SM90_FORWARD": SM90_FORWARD, "SM80_PACK_GQA": SM80_PACK_GQA,
              "SM90_PACK_GQA": SM90_PACK_GQA, "SM90_BACKWARD": SM90_BACKWARD}
ARCH = {"SM80_FORWARD": "sm_80", "SM90_FORWARD": "sm_90a", "SM80_PACK_GQA": "sm_80",
        "SM90_PACK_GQA": "sm_90a", "SM90_BACKWARD": "sm_90a"}  # CUTE_DSL_ARCH of each selection


def install(site: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", site, *PINS], check=True)


def export_tests(repo: str, rev: str, out: str) -> None:
    names = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", rev, "tests/cute"], check=True,
                           capture_output=True, text=True).stdout.split()
    for name in names:
        path = os.path.join(out, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(subprocess.run(["git", "-C", repo, "show", f"{rev}:{name}"], check=True,
                                   capture_output=True).stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--site", required=True, help="the folder flash-attn-4 is (or is to be) installed in")
    ap.add_argument("--install", action="store_true", help=f"pip install {' '.join(PINS)} there first")
    ap.add_argument("--repo", required=True, help="flash-attention's git directory")
    ap.add_argument("--rev", default=REV, help=f"the tag of the installed version (default {REV})")
    ap.add_argument("--arch", default=None, help="CUTE_DSL_ARCH (default: the selection's, else sm_80)")
    ap.add_argument("--select", default="SM80_FORWARD", help=f"one of {sorted(SELECTIONS)}, or test ids joined by ','")
    ap.add_argument("pytest_args", nargs="*")
    a = ap.parse_args()
    if a.install:
        install(a.site)
    work = tempfile.mkdtemp(prefix="flash_attn_tests_")
    export_tests(a.repo, a.rev, work)
    sel = list(SELECTIONS[a.select]) if a.select in SELECTIONS else a.select.split(",")
    a.arch = a.arch or ARCH.get(a.select, "sm_80")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), a.site) if p),
               CUTE_DSL_ARCH=a.arch, FLASH_ATTENTION_DISABLE_SPLIT="TRUE")
    run = ["cutelab", "run", "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-q", "-rA"]
    print(f"{len(sel)} tests selected ({a.select}), CUTE_DSL_ARCH={a.arch}", flush=True)
    res = subprocess.run(run + a.pytest_args + sel, cwd=work, env=env, capture_output=True, text=True)
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
