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

``--blackwell`` surveys the other programs, those under ``cute/blackwell/``:
each one with a ``__main__`` (the others are helper modules it imports), run with ``CUTE_DSL_ARCH=sm_100a`` and the
small arguments ``BLACKWELL_ARGS`` gives it (their defaults are GPU-sized); the ``kernel/distributed/`` ones as
several ranks (``torchrun --nproc-per-node 2 --no-python cutelab run FILE ARGS``).

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
import socket
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


def command(path: str, args=(), ranks: int = 0) -> list:
    """``cutelab run PATH ARGS`` with this interpreter, or, for ``ranks`` > 0, that many ranks of it under torchrun
    (``--no-python`` and a ``cutelab`` executable of this interpreter beside the program)."""
    if not ranks:
        return [sys.executable, "-m", "cutelab", "run", path, *args]
    exe = os.path.join(os.path.dirname(path), "cutelab")
    if not os.path.exists(exe):
        with open(exe, "w") as f:
            f.write(f"#!/bin/sh\nexec {sys.executable} -m cutelab \"$@\"\n")
        os.chmod(exe, 0o755)
    with socket.socket() as s:  # a free port for the rendezvous
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(ranks), "--master-port", str(port),
            "--no-python", exe, "run", path, *args]


def run_one(base: str, rel: str, timeout: float, cpu_timeout: float = 0, args=(), arch: str = "",
            ranks: int = 0) -> dict:
    """Run one program (with ``args``, under ``CUTE_DSL_ARCH=arch`` when given, as ``ranks`` ranks when > 0); its
    wall seconds and (where /usr/bin/time exists) its CPU seconds, user + system, which a loaded machine changes
    less."""
    path = os.path.join(base, rel)
    env = dict(os.environ, PYTHONHASHSEED="0")
    env.pop("CUTE_DSL_ARCH", None)
    if arch:
        env["CUTE_DSL_ARCH"] = arch
    if ranks:
        env["OMP_NUM_THREADS"] = "1"
    if env.get("PYTHONPATH"):  # the children run in the programs' folders
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(x) for x in env["PYTHONPATH"].split(os.pathsep) if x)
    cmd = command(path, args, ranks)
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
        # under torchrun a rank's error comes before the launcher's own traceback and summary: the last line a
        # rank wrote (torch prefixes them "[rankN]:") is the reason
        ranked = [m for m in (re.match(r"\[rank(\d+)\]:\s*(\S.*)", line) for line in err) if m]
        if ranked:
            err = [f"rank {ranked[-1].group(1)}: {ranked[-1].group(2)}"]
        else:  # ranks that exit without a traceback: their last line before the launcher's report of the failure
            ends = [i for i, line in enumerate(err) if re.match(r"E\d{4} .*failed \(exitcode", line)]
            err = err[:ends[0]] if ends and ends[0] else err
            err = [line for line in err if not re.match(r"[WIE]\d{4} \d\d:\d\d:", line)] or err  # its own logging
        why = err[-1] if err else (f"exit {p.returncode}, printed FAIL" if failed_line else f"exit {p.returncode}")
        why = why.replace(os.path.join(base, ""), "")  # the programs' paths as in CUTLASS's tree, not the export's
        intended = INTENDED_ERRORS.get(rel)
        if intended is not None and p.returncode != 0 and not failed_line and re.search(intended, why):
            ok, why = True, f"raised as the program intends: {why}"
    return {"program": rel, "result": "PASS" if ok else "FAIL", "seconds": secs, "cpu": cpu, "why": why[:300]}


BLACKWELL = "cute/blackwell"
MNKL_1TILE = ["--mnkl", "128,128,128,1"]
T = "tests/blackwell/"
# tests/distributed/test_ranks.py's sizes for CUTLASS's GEMMs fused with an all-reduce or reduce-scatter, with the TMA
# store their own usage lines give (Lamport's requires it)
FUSED = ["--mnkl", "128,64,32,1", "--mma_tiler_mn", "64,64", "--cluster_shape_mn", "1,1", "--ab_dtype", "Float16",
         "--c_dtype", "Float16", "--use_tma_store"]  # where the arguments come from a test's command line

# cute/blackwell programs: the arguments each runs with in the survey (their defaults are sized for a GPU), and why
BLACKWELL_ARGS = {
    "efc/activation_custom_epilogue_dense_gemm.py": (MNKL_1TILE, "one 128x128 tile, one k-tile (no test)"),
    "efc/custom_epilogue_dense_gemm.py": (MNKL_1TILE, "one 128x128 tile, one k-tile (no test)"),
    "efc/synthetic_custom_epilogue_dense_gemm.py": (MNKL_1TILE, "one 128x128 tile, one k-tile (no test)"),
    "kernel/attention/fmha/fmha.py": (["--q_shape", "1,128,1,32", "--k_shape", "1,256,1,32", "--is_causal",
                                       "--bottom_right_align", "--tolerance", "0.01"], T + "test_fmha.py"),
    "kernel/attention/fmha/fmha_bwd.py": (["--s_q", "128", "--s_k", "128", "--h_q", "1", "--h_k", "1", "--d", "64"],
                                          "one 128-row tile of one head, d 64 (no test)"),
    "kernel/attention/mamba2_ssd/mamba2_ssd.py": (["--gbehcdln", "1,2,1,2,2,64,128,128", "--no-print_rtol_stats"],
                                                  T + "test_mamba2_ssd.py"),
    "kernel/attention/mixed_input_fmha/mixed_input_fmha_decode.py": (
        ["--seqlen", "256", "--heads_q", "8", "--heads_k", "1", "--headdim", "128", "--block_scaledim", "128",
         "--kv_splits", "2", "--tolerance", "0.02"], T + "test_mixed_input_fmha_decode.py"),
    "kernel/attention/mixed_input_fmha/mixed_input_fmha_prefill_d256.py": (
        ["--q_shape", "1,1,128,256", "--k_shape", "1,1,384,256", "--tolerance", "0.02"],
        T + "test_fmha_prefill_mixed.py"),
    "kernel/attention/mixed_input_fmha/mixed_input_fmha_prefill_d512.py": (
        ["--q_shape", "1,1,128,512", "--k_shape", "1,1,256,512", "--tolerance", "0.02"],
        T + "test_fmha_prefill_mixed.py"),
    "kernel/attention/mla/mla_decode_fp16.py": ([], "defaults: batch 1, 1 query, 128 keys (one page), 128 heads "
                                                "(the 128-row MMA tile)"),
    "kernel/attention/mla/mla_decode_fp8.py": ([], "defaults: batch 1, 1 query, 128 keys (one page), 128 heads "
                                               "(the 128-row MMA tile)"),
    "kernel/blockscaled_gemm/dense_blockscaled_gemm_persistent.py": (["--mnkl", "128,128,256,1"],
                                                                     T + "test_nvfp4_gemm.py"),
    "kernel/blockscaled_gemm/dense_blockscaled_gemm_persistent_amax.py": (["--mnkl", "128,128,256,1"],
                                                                          T + "test_nvfp4_gemm.py"),
    "kernel/blockscaled_gemm/dense_blockscaled_gemm_persistent_prefetch.py": (
        ["--mnkl", "128,128,768,1", "--mma_tiler_mn", "128,128", "--cluster_shape_mn", "1,1", "--prefetch_dist", "1",
         "--tolerance", "0.01"], T + "test_nvfp4_gemm.py"),
    "kernel/blockscaled_gemm/sm103_dense_blockscaled_gemm_persistent.py": (
        ["--mnkl", "128,128,256,1", "--mma_tiler_mn", "128,128", "--cluster_shape_mn", "1,1"],
        "one tile, one CTA (no test; defaults 4096x4096x6144x2 in 2x4 clusters)"),
    "kernel/blockscaled_grouped_gemm/grouped_blockscaled_gemm.py": ([], "defaults: 2 groups of 128x128x128"),
    "kernel/blockscaled_grouped_gemm/sm103_grouped_blockscaled_gemm.py": ([], "defaults: 2 groups of 128x128x128"),
    "kernel/blockwise_gemm/blockwise_gemm.py": (MNKL_1TILE, "one 128x128 tile, one 128-wide scale block (no test)"),
    "kernel/blockwise_gemm/contiguous_grouped_gemm.py": (MNKL_1TILE, "one 128x128 tile (no test)"),
    "kernel/blockwise_gemm/masked_grouped_gemm.py": (MNKL_1TILE, "one 128x128 tile (no test)"),
    "kernel/dense_gemm/dense_gemm.py": (MNKL_1TILE, T + "test_dense_gemm_8bit.py"),
    "kernel/dense_gemm/dense_gemm_alpha_beta_persistent.py": (MNKL_1TILE, "one 128x128 tile (no test)"),
    "kernel/dense_gemm/dense_gemm_persistent.py": (["--mnkl", "256,256,128,1", "--mma_tiler_mn", "128,128",
                                                   "--cluster_shape_mn", "1,1"], T + "test_tutorial_gemm.py"),
    "kernel/dense_gemm/dense_gemm_persistent_dynamic.py": (["--mnkl", "256,256,128,1", "--mma_tiler_mn", "128,128",
                                                           "--cluster_shape_mn", "1,1"], T + "test_tutorial_gemm.py"),
    "kernel/dense_gemm/dense_gemm_persistent_prefetch.py": (["--mnkl", "256,256,128,1", "--mma_tiler_mn", "128,128",
                                                            "--cluster_shape_mn", "1,1"], T + "test_tutorial_gemm.py"),
    "kernel/dense_gemm/dense_gemm_software_pipeline.py": (MNKL_1TILE, "one 128x128 tile (no test)"),
    "kernel/grouped_gemm/grouped_gemm.py": (["--num_groups", "2", "--problem_sizes_mnkl",
                                            "(128,128,128,1),(128,128,128,1)"],
                                           "2 groups of one tile; " + T + "test_grouped_gemm.py runs 3 uneven groups"),
    "kernel/mixed_input_gemm/grouped_mixed_input_gemm.py": (["--mnkl", "128,128,256,3", "--tolerance", "0.01"],
                                                            T + "test_mixed_input_gemm.py"),
    "kernel/mixed_input_gemm/grouped_mixed_input_gemm_acc_scale.py": ([], "defaults: 128x128x128, 1 group"),
    "kernel/mixed_input_gemm/mixed_input_gemm.py": (MNKL_1TILE, T + "test_mixed_input_gemm.py"),
    "kernel/moe/torch_grouped_mm.py": (["--tokens", "15", "--top_k_select", "2", "--experts", "4", "--balance_route",
                                        "--hidden", "128", "--intermediate", "128"], T + "test_moe.py"),
    "kernel/moe/torch_scaled_grouped_mm.py": (["--tokens", "16", "--top_k_select", "2", "--experts", "4",
                                               "--balance_route", "--hidden", "128", "--intermediate", "128"],
                                              "test_moe.py's sizes for the unscaled one, 16 tokens (tokens x top_k "
                                              "a multiple of the 32-row scale block); " + T + "test_moe.py runs 64"),
    "kernel/rmsnorm/rmsnorm.py": (["--M", "5", "--N", "200", "--dtype", "Float16", "--no_weight"],
                                  T + "test_rmsnorm_split_k.py"),
    "tutorial/tutorial_gemm/fp16_gemm_0.py": (["--mnk", "128,256,64"], T + "test_tutorial_gemm.py"),
    "tutorial/tutorial_gemm/fp16_gemm_1.py": (["--mnk", "256,256,64"], T + "test_tutorial_gemm.py"),
    "tutorial/tutorial_gemm/fp16_gemm_2.py": (["--mnk", "256,256,64"], "fp16_gemm_1's test size (no test)"),
    "tutorial/tutorial_gemm/fp16_gemm_3.py": (["--mnk", "256,256,64"], T + "test_tutorial_gemm.py"),
    "tutorial/tutorial_gemm/fp16_gemm_3_1.py": (["--mnk", "512,256,64"], T + "test_tutorial_gemm.py"),
    "tutorial/tutorial_gemm/fp16_gemm_4.py": (["--mnk", "256,1024,64"], T + "test_tutorial_gemm.py"),
    "tutorial/tutorial_gemm/fp16_gemm_5.py": (["--mnk", "512,128,64"], T + "test_tutorial_gemm.py"),
    "tutorial/tutorial_gemm/fp16_gemm_6.py": (["--mnk", "256,256,128"], T + "test_tutorial_gemm.py"),
    "tutorial/tutorial_gemm/nvfp4_gemm_0.py": (["--mnkl", "128,256,256,1", "--tolerance", "0.01"],
                                              T + "test_nvfp4_gemm.py"),
    "tutorial/tutorial_gemm/nvfp4_gemm_1.py": (["--mnkl", "256,256,256,1", "--tolerance", "0.01"],
                                              T + "test_nvfp4_gemm.py"),
    "tutorial/tutorial_tma/tma_v0.py": (["--M", "256", "--N", "128", "--num_warmup", "1", "--num_iters", "1"],
                                        T + "test_tutorial_gemm.py"),
    "tutorial/tutorial_tma/tma_v1.py": (["--M", "256", "--N", "256", "--num_warmup", "1", "--num_iters", "1"],
                                        T + "test_tutorial_gemm.py"),
    "tutorial/tutorial_tma/tma_v2.py": (["--M", "256", "--N", "256", "--num_warmup", "1", "--num_iters", "1"],
                                        T + "test_tutorial_gemm.py"),
    # as 2 ranks under torchrun (README, "Several ranks without a GPU")
    "kernel/distributed/all_reduce_simple.py": (["--M", "32", "--N", "128"], "tests/distributed/test_ranks.py"),
    "kernel/distributed/all_reduce_one_shot_lamport.py": (["--M", "16", "--N", "128"],
                                                          "tests/distributed/test_ranks.py"),
    "kernel/distributed/all_reduce_tma.py": (["--shape", "64,256"], "one CTA tile of 16384 elements (no test)"),
    "kernel/distributed/all_reduce_two_shot_multimem.py": (["--M", "256", "--N", "128"],
                                                           "one 128x128 tile per rank (no test)"),
    "kernel/distributed/distributed_all_gather_gemm_blackwell.py": (
        ["--mnkl", "256,64,32,1", "--mma_tiler_mn", "64,32", "--cluster_shape_mn", "2,2", "--ab_dtype", "Float16",
         "--c_dtype", "Float16"], "tests/distributed/test_ranks.py"),
    "kernel/distributed/distributed_gemm_all_reduce_blackwell.py": (FUSED, "the sizes tests/distributed/test_ranks.py "
                                                                           "gives the reduce-scatter one"),
    "kernel/distributed/distributed_gemm_all_reduce_lamport_blackwell.py": (FUSED, "tests/distributed/test_ranks.py"),
    "kernel/distributed/distributed_gemm_all_reduce_ldxstmc_blackwell.py": (FUSED, "the sizes tests/distributed/"
                                                                                   "test_ranks.py gives the reduce-"
                                                                                   "scatter one"),
    "kernel/distributed/distributed_gemm_blockscaled_all_reduce_ldmcxstmc_blackwell.py": (
        ["--mnkl", "128,128,256,1"], "one tile per rank, blockscaled K 256 (no test)"),
    "kernel/distributed/distributed_gemm_reduce_scatter_blackwell.py": (FUSED, "tests/distributed/test_ranks.py"),
}
DISTRIBUTED = "kernel/distributed/"
RANKS = 2


def has_main(source: str) -> bool:
    """Whether a module runs as a program (an ``if __name__ == "__main__":`` block), not only imported as a helper.

    >>> has_main('def f():\\n    pass\\n\\nif __name__ == "__main__":\\n    f()\\n')
    True
    >>> has_main("# run this as __main__ from fmha.py\\nX = 1\\n")
    False
    """
    return re.search(r"^if\s+__name__\s*==\s*['\"]__main__['\"]\s*:", source, re.M) is not None


def blackwell_programs(git: str, rev: str) -> list:
    """The programs under cute/blackwell/ (relative to ROOT): the .py files with a ``__main__`` block."""
    names = subprocess.run(["git", "-C", git, "ls-tree", "-r", "--name-only", rev, f"{ROOT}/{BLACKWELL}"], check=True,
                           capture_output=True, text=True).stdout.split()
    keep = []
    for n in names:
        if n.endswith(".py"):
            src = subprocess.run(["git", "-C", git, "show", f"{rev}:{n}"], check=True, capture_output=True,
                                 text=True).stdout
            if has_main(src):
                keep.append(n[len(ROOT) + 1:])
    return sorted(keep)


def blackwell_how(rel: str) -> dict:
    """run_one's keyword arguments for a cute/blackwell program: sm_100a, its BLACKWELL_ARGS, ranks for the
    distributed ones. A program missing from the table is an error (its defaults would be sized for a GPU)."""
    sub = rel[len(BLACKWELL) + 1:] if rel.startswith(BLACKWELL + "/") else rel
    if sub not in BLACKWELL_ARGS:
        raise KeyError(f"survey --blackwell: {rel} has no entry in BLACKWELL_ARGS (give it small arguments and why)")
    return {"args": list(BLACKWELL_ARGS[sub][0]), "arch": "sm_100a",
            "ranks": RANKS if sub.startswith(DISTRIBUTED) else 0}


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
    ap.add_argument("--blackwell", action="store_true", help="survey the programs under cute/blackwell/ instead "
                    "(CUTE_DSL_ARCH=sm_100a, the small arguments of BLACKWELL_ARGS)")
    a = ap.parse_args(argv)
    if a.timeout is None:
        a.timeout = 20 * a.cpu_timeout if a.cpu_timeout else 300
    how = {}  # program -> run_one's keyword arguments
    if a.blackwell:
        names = blackwell_programs(a.git, a.rev)
        how = {n: blackwell_how(n) for n in names}
    else:
        names = programs(a.git, a.rev)
    if a.only:
        names = [n for n in names if any(s in n for s in a.only)]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        base = export(a.git, a.rev, tmp)
        with cf.ThreadPoolExecutor(a.jobs) as ex:
            futs = {ex.submit(lambda c: [run_one(base, n, a.timeout, a.cpu_timeout, **how.get(n, {})) for n in c], c): c
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
