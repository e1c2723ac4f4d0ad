"""The order of the whole suite's tests on xdist workers (CI runs `pytest -n 2 --dist worksteal`).

Most of CI's time goes to a few hundred tests that run a CuTe DSL program in a subprocess (`cutelab
run`, a rank launcher, quack's tests, pdflatex), 2-8 CPU seconds each (of which ~1.9 s is starting
`cutelab run`: benchmarks/subprocess_startup.py); most of the other ~11,500 take milliseconds.
worksteal gives each of the N workers one contiguous part of the collection and, when a worker runs
out, moves the back half of the fullest worker's queue to it. The run ends in balance when the tests
left for last are short ones, so `order_for_workers` puts the long tests (the files SLOW_FIRST names)
at the front of every part, dealt in turn to the N parts, and leaves everything else in its order.

Only the order changes: every collected test still runs, once. SLOW_FIRST going stale costs time,
never coverage (tests/test_ci_schedule.py checks that each entry still names a test file).
"""

from __future__ import annotations

import fnmatch
import os

# Test files with tests of 2 CPU seconds or more, most of them running a program in a subprocess (found
# by per-test CPU time, process and children, benchmarks/ci_schedule.py, 2026-11-28); paths relative to the repository root, fnmatch patterns.
SLOW_FIRST = (
    "tests/blackwell/test_tutorial_gemm.py",
    "tests/blackwell/test_rmsnorm_split_k.py",
    "tests/blackwell/test_dense_gemm_8bit.py",
    "tests/blackwell/test_nvfp4_gemm.py",
    "tests/blackwell/test_fmha.py",
    "tests/blackwell/test_moe.py",
    "tests/blackwell/test_grouped_gemm.py",
    "tests/blackwell/test_blockwise_gemm.py",
    "tests/blackwell/test_mixed_input_gemm.py",
    "tests/compat/test_compat_*.py",
    "tests/distributed/test_*.py",
    "tests/programs/test_programs.py",
    "tests/kernel/test_dsl_examples.py",
    "tests/kernel/test_gemm_examples.py",
    "tests/kernel/test_sgemm.py",
    "tests/test_benchmarks_gemm.py",
    "tests/test_benchmarks_dsl_examples.py",
    "tests/test_cli.py",
    "tests/render/test_latex_compile.py",  # pdflatex
    # in-process, 2-5 s a test: left among the short ones, a steal can end a worker on them
    "tests/kernel/test_seeds.py",
    "tests/kernel/test_fp8_kernel.py",
    "tests/kernel/test_sm90_gemm_fp8.py",
    "tests/nvgpu/test_tcgen05_golden.py",
    "tests/nvgpu/test_copy_golden.py",
    "tests/test_profile_ncu.py",
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def is_slow(relpath: str) -> bool:
    """Whether a test file (path relative to the repository root, '/'-separated) is in SLOW_FIRST.

    >>> is_slow("tests/compat/test_compat_quack.py"), is_slow("tests/test_layout.py")
    (True, False)
    """
    return any(fnmatch.fnmatchcase(relpath, pat) for pat in SLOW_FIRST)


def order_for_workers(items: list, slow: list, n: int) -> list:
    """items reordered for n worksteal workers: the parts worksteal cuts (part i gets
    len(rest) // (n - i) of what is left, in order) each start with every n-th slow item, and the
    other items follow in their order. slow[k] says whether items[k] is slow.

    >>> order_for_workers(list("abcdefgh"), [c in "bg" for c in "abcdefgh"], 2)
    ['b', 'a', 'c', 'd', 'g', 'e', 'f', 'h']
    >>> order_for_workers(list("abc"), [True, False, True], 1)
    ['a', 'b', 'c']
    """
    if n <= 1:
        return list(items)
    long_ = [it for it, s in zip(items, slow) if s]
    short = [it for it, s in zip(items, slow) if not s]
    out, left = [], len(items)
    for i in range(n):
        size = left // (n - i)  # as xdist's WorkStealingScheduling sends its first tests
        mine = long_[i::n]
        take = max(0, size - len(mine))
        out += mine + short[:take]
        short = short[take:]
        left -= size
    return out + short


def pytest_collection_modifyitems(config, items):
    # on an xdist worker (each collects, and all must agree on the order); the workers' --dist reads
    # "no", so the order is the same for every --dist mode: it is cut to worksteal's measure
    n = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if n <= 1:
        return
    slow = [is_slow(os.path.relpath(str(it.path), ROOT).replace(os.sep, "/")) for it in items]
    items[:] = order_for_workers(items, slow, n)


def pytest_configure(config):
    """The suite's `cutelab run` subprocesses are forked from a server that imported torch once
    (tests/forkserver.py; CUTELAB_TEST_FORKSERVER=0 turns it off)."""
    import forkserver

    forkserver.install()


def pytest_unconfigure(config):
    import forkserver

    forkserver.shutdown()
