"""benchmarks/quack_sass.py without a GPU, NVRTC or quack: the occupancy its rows give (CTAs an sm_90 SM
holds at a register count) and how it reads ptxas's report."""

import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_quack_sass", os.path.join(ROOT, "benchmarks", "quack_sass.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


@pytest.mark.parametrize("registers,threads,ctas", [
    (79, 128, 6), (80, 128, 6), (88, 128, 5), (96, 128, 5), (159, 128, 3), (168, 128, 3), (255, 128, 2),
    (32, 128, 16), (16, 32, 32), (64, 1024, 1)])
def test_ctas_per_sm(bench, registers, threads, ctas):
    # 65536 registers a SM, allocated 256 a warp; at most 2048 threads and 32 CTAs
    assert bench.ctas_per_sm(registers, threads) == ctas


def test_count_reads_ptxas_without_sass(bench, tmp_path):
    log = "ptxas info    : Used 79 registers, used 1 barriers, 16416 bytes smem"
    row = bench.count(tmp_path / "none.cubin", log, None, 128)
    assert row == {"registers": 79, "stack": 0, "CTAs/SM": 6}
