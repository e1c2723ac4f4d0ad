"""Run flash_attn.cute's own tests (flash-attn-4, Dao-AILab's flash-attention) unchanged under ``cutelab run -m pytest``.

flash-attn-4 4.0.0b27 is installed apart from the environment by ``python3 scripts/quack_tests.py --fetch .quack``
(``pip install --no-deps --target .quack/site``, with quack-kernels 0.5.3, its ``>=0.5.3``, einops and
apache-tvm-ffi, which its cache imports as ``tvm_ffi``; no nvidia-cutlass-dsl: under ``cutelab run``,
``import cutlass`` is cutelab; no Triton: quack's ``import triton`` finds cutelab's stand-in for Triton's host
utilities). Neither its wheel nor its sdist holds the tests: they are carried, unchanged, in
tests/compat/programs/flash_attn (tests/cute/test_flash_attn.py and its conftest.py from the git tag
``fa4-v4.0.0.beta27``, whose files are the wheel's, with flash-attention's LICENSE), or taken from a
flash-attention git directory (``--repo``, all of tests/cute at ``--rev``). They run from a copy in a temporary
folder (so that no conftest or pytest setting of this repository applies), with the plugin
scripts/flash_attn_select.py, which builds only the parametrized cases named (collecting the whole file's
415,818 cases took 52 s of wall, 36 CPU-s, on this 2-core machine, 2026-11-28, and minutes when it was busier;
with the plugin, 7 s, imports included). The selection is by test id
(``--select``, default ``SM80_FORWARD``) at the smallest sizes the tests parametrize; the script prints one
line per test file: passed, failed and errors.

    python3 scripts/quack_tests.py --fetch .quack     # once: the pinned packages into .quack/site
    python3 scripts/flash_attn_tests.py [--dir .quack] [--repo FLASH_ATTENTION_GIT_DIR] \\
        [--select SM80_FORWARD|SM90_FORWARD|SM100_FORWARD|SM80_PACK_GQA|SM90_PACK_GQA|SM100_PACK_GQA|\\
        SM90_BACKWARD|SM100_BACKWARD|SM100_SOFTCAP|ID,ID...] \\
        [--arch sm_80] [-- extra pytest args]

``--arch`` sets CUTE_DSL_ARCH, which is the emulated GPU's capability (so flash_attn.cute picks its
SM80, SM90 or SM100 kernels) and the compile target; ``--select SM90_FORWARD`` runs the forward cases with
sm_90a, ``--select SM100_FORWARD`` with sm_100a. The test file's own FLASH_ATTENTION_DISABLE_SPLIT=TRUE
is set: SplitKV is refused by flash_attn.cute on SM80 itself ("SplitKV not supported on SM 8.0").
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

REV = "fa4-v4.0.0.beta27"  # flash-attention's tag of flash-attn-4 4.0.0b27 (commit 0251105a2fb19d2957484b7f023cd8c115286ced)
HERE = os.path.dirname(os.path.abspath(__file__))
CARRIED = os.path.join(os.path.dirname(HERE), "tests", "compat", "programs", "flash_attn", "tests")

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
# the same cases on the SM100 (Blackwell) path, run with sm_100a: TMA loads, UMMAs (tcgen05.mma) issued from
# flash_attn.cute's own inline PTX through the shared-memory descriptors it builds, S and O in tensor memory, P
# written back to tensor memory for the P*V UMMA, the softmax, correction and epilogue warps
SM100_FORWARD = SM80_FORWARD
SM100_PACK_GQA = SM80_PACK_GQA
# the SM100 backward on SM90_BACKWARD's case (its forward first): S, dP, dV, dK and dQ by UMMAs issued from
# flash_attn.cute's inline PTX, dS written to tensor memory for the dK UMMA, its pipelines' handles kept
# across the MMA loop
SM100_BACKWARD = SM90_BACKWARD
# the same case with softcap 15 (forward and backward), SM100: its score mod broadcasts a (1,) value of a scalar to
# (vec_size,) with TensorSSA.broadcast_to
SM100_SOFTCAP = ("tests/cute/test_flash_attn.py::test_flash_attn_output[3-3-64-True-0-15.0-False-False-False-mha-dtype0]",)
SELECTIONS = {"SM80_FORWARD": SM80_FORWARD, "SM90_FORWARD": SM90_FORWARD, "SM80_PACK_GQA": SM80_PACK_GQA,
              "SM90_PACK_GQA": SM90_PACK_GQA, "SM90_BACKWARD": SM90_BACKWARD, "SM100_FORWARD": SM100_FORWARD,
              "SM100_PACK_GQA": SM100_PACK_GQA, "SM100_BACKWARD": SM100_BACKWARD, "SM100_SOFTCAP": SM100_SOFTCAP}
ARCH = {"SM80_FORWARD": "sm_80", "SM90_FORWARD": "sm_90a", "SM80_PACK_GQA": "sm_80",
        "SM90_PACK_GQA": "sm_90a", "SM90_BACKWARD": "sm_90a", "SM100_FORWARD": "sm_100a",
        "SM100_PACK_GQA": "sm_100a", "SM100_BACKWARD": "sm_100a", "SM100_SOFTCAP": "sm_100a"}  # CUTE_DSL_ARCH of each selection


def copy_carried(out: str) -> None:
    """The carried test files (tests/compat/programs/flash_attn/tests) into out/tests."""
    shutil.copytree(CARRIED, os.path.join(out, "tests"), ignore=shutil.ignore_patterns("__pycache__"))


def export_tests(repo: str, rev: str, out: str) -> None:
    names = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", rev, "tests/cute"], check=True,
                           capture_output=True, text=True).stdout.split()
    for name in names:
        path = os.path.join(out, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(subprocess.run(["git", "-C", repo, "show", f"{rev}:{name}"], check=True,
                                   capture_output=True).stdout)


def run(site: str, sel: list, arch: str, extra: list, repo: str = "", rev: str = REV) -> tuple:
    """Run the selected test ids; returns (exit code, {file: Counter of PASSED/FAILED/ERROR}, pytest's last line,
    the completed process)."""
    work = tempfile.mkdtemp(prefix="flash_attn_tests_")
    try:
        if repo:
            export_tests(repo, rev, work)
        else:
            copy_carried(work)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}  # the conftest's GPU
        # assignment to xdist workers (it waits for worker 0's list) is for its own workers, not a caller's
        env.update(CUTE_DSL_ARCH=arch, FLASH_ATTENTION_DISABLE_SPLIT="TRUE")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), os.path.abspath(site), HERE) if p)
        cmd = ["cutelab", "run", "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-p",
               "flash_attn_select", "-q", "-rA", *extra, *sel]
        res = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, check=False)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    table: dict = collections.defaultdict(collections.Counter)
    for line in res.stdout.splitlines():
        m = re.match(r"(PASSED|FAILED|ERROR) (\S+?)::", line)
        if m:
            table[m.group(2)][m.group(1)] += 1
    out = res.stdout.strip().splitlines()
    return res.returncode, table, (out[-1] if out else res.stderr[-2000:]), res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default=".quack", help="the folder `scripts/quack_tests.py --fetch` filled (default .quack)")
    ap.add_argument("--repo", help="flash-attention's git directory: its tests/cute at --rev instead of the carried files")
    ap.add_argument("--rev", default=REV, help=f"the tag of the installed version (default {REV})")
    ap.add_argument("--arch", default=None, help="CUTE_DSL_ARCH (default: the selection's, else sm_80)")
    ap.add_argument("--select", default="SM80_FORWARD", help=f"one of {sorted(SELECTIONS)}, or test ids joined by ','")
    ap.add_argument("pytest_args", nargs="*")
    a = ap.parse_args()
    site = os.path.join(a.dir, "site")
    if not os.path.isdir(os.path.join(site, "flash_attn")):
        sys.exit(f"flash-attn-4 is not in {site}: run `python3 scripts/quack_tests.py --fetch {a.dir}` first")
    sel = list(SELECTIONS[a.select]) if a.select in SELECTIONS else a.select.split(",")
    arch = a.arch or ARCH.get(a.select, "sm_80")
    print(f"{len(sel)} tests selected ({a.select}), CUTE_DSL_ARCH={arch}", flush=True)
    code, table, last, _ = run(site, sel, arch, a.pytest_args, a.repo or "", a.rev)
    for f in sorted(table):
        c = table[f]
        print(f"{f}: {c['PASSED']} passed, {c['FAILED']} failed, {c['ERROR']} errors")
    print(last)
    sys.exit(code)


if __name__ == "__main__":
    main()
