"""benchmarks/dsl_examples.py without a GPU: the Hopper grouped GEMM entry's presets are well formed, and its
cutelab column runs CUTLASS's file through the benchmark's child and timer on the CPU (the emulated device) at a
tiny size, passing the program's own check."""

import importlib.util
import json
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "dsl_examples.py")


@pytest.fixture(scope="module")
def dsl_examples():
    spec = importlib.util.spec_from_file_location("bench_dsl_examples", SCRIPT)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def _arg(argv, flag):
    return argv[len(argv) - 1 - argv[::-1].index(flag) + 1]  # the last occurrence wins, as argparse takes it


def test_grouped_gemm_presets_are_well_formed(dsl_examples):
    fname, presets = dsl_examples.EXAMPLES["hopper_grouped_gemm"]
    assert os.path.exists(dsl_examples.UNCHANGED["hopper_grouped_gemm"]) and fname.endswith("grouped_gemm.py")
    assert {"default", "large", "moe"} <= set(presets)
    for name, argv in presets.items():
        sizes = re.findall(r"\(([^)]*)\)", _arg(argv, "--problem_sizes_mnkl"))
        assert len(sizes) == int(_arg(argv, "--num_groups")), name  # the program refuses a mismatch
        for s in sizes:
            m, n, k, l_ = (int(x) for x in s.split(","))
            assert l_ == 1 and n % 8 == 0 and k % 8 == 0, (name, s)  # 16-byte rows of f16, one batch
        assert _arg(argv, "--tile_shape_mn") in ("128,128", "128,256", "128,64", "64,64")
        assert int(_arg(argv, "--iterations")) >= 100, name
    moe = [tuple(int(x) for x in s.split(",")) for s in re.findall(r"\(([^)]*)\)", _arg(presets["moe"], "--problem_sizes_mnkl"))]
    assert len({m for m, _, _, _ in moe}) == len(moe)  # groups of different sizes


def test_grouped_gemm_entry_runs_cutelab_on_the_cpu():
    """The cutelab column as the GPU run makes it (child process, the file unchanged through cutelab's compatibility
    layer, the benchmark's timer), its size overridden by --extra to two tiny groups at 128x256 tiles."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"), PYTHONHASHSEED="0", CUTE_DSL_ARCH="sm_90a")
    p = subprocess.run([sys.executable, SCRIPT, "--only", "hopper_grouped_gemm", "--sizes", "moe", "--libs", "cutelab",
                        "--singles", "1", "--extra", "--num_groups 2 --problem_sizes_mnkl (128,256,64,1),(256,256,128,1) "
                        "--iterations 1 --warmup_iterations 1"],
                       env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    rows = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == 1 and rows[0]["ok"] and rows[0]["verified"], p.stdout[-3000:]
    assert rows[0]["b2b_us"] > 0 and rows[0]["single_us"] > 0
    assert "| hopper_grouped_gemm | moe | cutelab |" in p.stdout
