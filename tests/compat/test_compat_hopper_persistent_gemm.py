"""CUTLASS's Hopper persistent dense GEMM (tests/compat/programs/dense_gemm_persistent.py), run unchanged by
`cutelab run` to its own check against torch.

The file is CUTLASS's examples/python/CuTeDSL/cute/hopper/kernel/dense_gemm/dense_gemm_persistent.py as of
CUTLASS commit 7107b05535f8977f5ecb9d01ee203205b1fd9bc4, byte for byte (SHA below). A DMA warp group and
an MMA warp group each walk the tiles with utils.StaticPersistentTileScheduler in a runtime
`while work_tile.is_valid_tile:` loop, which carries the scheduler and its work tile by their values
(CuTe DSL's __extract_mlir_values__ protocol, kernel/frontend/carry_obj.py) and the pipeline states in
registers. The emulated device has 132 SMs, so 1024x1024 in 64x64 tiles (256 tiles) gives most CTAs two
tiles: the loop's second trip is run. Each run also prints the kernel's CUDA; nvcc (where installed)
compiles it for sm_90a.
"""
import os
import sys

import pytest

from compat_helpers import run_program, sha256_of

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernel"))
from sm90_util import nvcc_compiles  # noqa: E402  (nvcc for sm_90a, skipped where it is not installed)

PROGRAM = "dense_gemm_persistent.py"


def test_the_program_is_cutlass_file_unchanged():
    assert sha256_of(PROGRAM) == "65088a1fd7655ed46ad54fecd08e1461a334fb38f1b2d1da7cf252e465afc130"


@pytest.mark.parametrize("args", [
    ("--mnkl", "1024,1024,64,1", "--tile_shape_mn", "64,64"),
    ("--mnkl", "1024,1024,128,1", "--tile_shape_mn", "64,64", "--cluster_shape_mn", "2,2", "--raster_order", "along_n"),
])
def test_tiles_walked_by_persistent_ctas_pass_the_programs_check(tmp_path, args):
    out, src = run_program(tmp_path, PROGRAM, *args)
    assert "Running Hopper Persistent Dense GEMM" in out
    # launch(min_blocks_per_mp=1): the second number of __launch_bounds__ (a DMA and an MMA warp group)
    assert "__launch_bounds__(256, 1) kernel(" in src
    # the DMA and the MMA warp groups each walk the tiles in a runtime loop
    assert src.count("while (true) {") >= 2
    assert "wgmma.mma_async" in src and "cp.async.bulk.tensor" in src
    nvcc_compiles(src)
