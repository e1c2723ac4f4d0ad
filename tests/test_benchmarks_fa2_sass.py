"""benchmarks/fa2_sass.py without a GPU or NVRTC: the kernel it renders (FlashAttention-2 under the
fake driver, at a small size here) and how it reads ptxas's report and a SASS listing."""

import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_fa2_sass", os.path.join(ROOT, "benchmarks", "fa2_sass.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def test_render_gives_the_gpu_launchs_cuda(bench):
    pytest.importorskip("torch")
    _, src, name = bench.render((1, 256, 2, 128), causal=True)
    body = src.split("__global__")[1]
    assert f"void __launch_bounds__(128) {name}(" in src
    assert body.count("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32") > 0
    # shared-memory operands are the array's 32-bit window address plus an offset, never a generic pointer's
    assert "const unsigned int smem0_sw = (unsigned int)__cvta_generic_to_shared(smem0);" in body
    assert "__cvta_generic_to_shared(smem0 +" not in body
    assert "cl_fail(" not in body  # the causal loop's copies are proved in bounds


def test_reads_ptxas_and_sass(bench):
    log = ("ptxas info    : Function properties for kernel\nptxas         .     24 bytes stack frame, 36 bytes spill "
           "stores, 20 bytes spill loads\nptxas info    : Used 255 registers, used 2 barriers")
    assert bench.ptxas_report(log) == {"registers": 255, "stack": 24, "spill stores": 36, "spill loads": 20}
    ins = [(0x00, "S2R", "S2R R2, SR_TID.X"), (0x10, "HMMA", "HMMA.16816.F32.BF16 R4, R8, R12, R4"),
           (0x20, "BRA", "@P1 BRA 0x60"), (0x30, "HMMA", "HMMA.16816.F32.BF16 R4, R8, R12, R4"),
           (0x40, "BRA", "@P0 BRA 0x10"), (0x50, "EXIT", "EXIT"),
           (0x60, "LDGSTS", "LDGSTS.E.BYPASS.128 [R3], desc[UR4][R6.64]"), (0x70, "BRA", "BRA 0x30")]
    loop = bench.hot_loop(ins)  # 0x10-0x40, and the block at 0x60 it branches out to, which comes back
    assert [a for a, _, _ in loop] == [0x10, 0x20, 0x30, 0x40, 0x60, 0x70]
