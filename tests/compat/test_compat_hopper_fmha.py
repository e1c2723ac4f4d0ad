"""CUTLASS's Hopper FMHA forward (tests/compat/programs/cute/hopper/kernel/attention/fmha.py, with the helpers
it imports from programs/helpers/fmha_helpers.py, where its own sys.path line finds them), run unchanged by
`cutelab run` to its own check against torch.

Both files are CUTLASS's examples/python/CuTeDSL/... as of CUTLASS commit
7107b05535f8977f5ecb9d01ee203205b1fd9bc4, byte for byte (SHAs below). A TMA warp group loads Q, K and V; two
math warp groups each run Q*K^T and P*V with wgmma, the online softmax between them, ordered by a
PipelineOrder, and store O through shared memory with TMA. What it needed here:
- a named barrier whose id is computed in the kernel (``pipeline.arrive_and_wait(barrier_id=warp_group_idx,
  ...)``: each math warp group its own barrier), traced as one ``bar.sync k, 128`` per id the index can take;
- ``tiled_mma.get_slice(thread_idx)`` with the block's thread index past the MMA's 128 threads (thread
  ``i % 128``'s slice, as CuTe DSL's);
- ``cute.testing.convert(src, dst)``;
- grouped-query attention (H_k < H): K and V have a stride-0 head mode, which moves no address and so is
  no TMA dimension;
- with ``--is_persistent``: TMA box coordinates held in registers (the scheduler's carried tile
  coordinate), a nested WorkTileInfo coordinate carried through the tile loop, and pipeline states made
  live in a later loop getting their registers' first values after the op they last changed at (an index
  into the block went stale when another state's registers were inserted before it).
Each run also puts the kernel through the bounds proofs a GPU launch makes and prints its CUDA; nvcc (where
installed) compiles it for sm_90a. The epilogue's stmatrix and TMA store take their shared-memory addresses
from registers, which the proofs cannot bound: they are guarded (a lane out of range records the error the
launch reports), where the launch used to be refused.
"""
import hashlib
import os
import subprocess
import sys

import pytest

from compat_helpers import PROGRAMS, SRC

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernel"))
from sm90_util import nvcc_compiles  # noqa: E402  (nvcc for sm_90a, skipped where it is not installed)

PROGRAM = os.path.join(PROGRAMS, "cute", "hopper", "kernel", "attention", "fmha.py")
HELPERS = os.path.join(PROGRAMS, "helpers", "fmha_helpers.py")

_DRIVER = """
import sys
from cutelab.compat.run import main
out = sys.argv[1]
rc = main(sys.argv[2:])
from cutelab.kernel import last_launch
from cutelab.kernel.analysis.bounds import check_bounds
from cutelab.kernel.cuda import printer
ir = last_launch().ir
check_bounds(ir, "gpu", launch_scalars={})  # what a launch on the GPU does first (a LaunchError where it cannot)
open(out, "w").write(printer.render(ir))
sys.exit(rc)
"""


def _sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_the_programs_are_cutlass_files_unchanged():
    assert _sha(PROGRAM) == "01bcc2a091a33e85c350ece3c9e8535b81c1d4b69c4c88cf7a01cdccf0e1bfea"
    assert _sha(HELPERS) == "cbe090eb5567b7cdbd8b4944cbd579084fd60379c463bcfb011e6d4b28ef20e1"


@pytest.mark.parametrize("args", [
    ("--q_shape", "1,128,1,64", "--k_shape", "1,128,1,64", "--is_causal"),
    # grouped-query attention: 4 query heads over 2 K/V heads (a stride-0 mode of K and V, no TMA dimension)
    ("--q_shape", "2,128,4,64", "--k_shape", "2,192,2,64", "--window_size", "32,16"),
    # persistent: CTAs walk the (m, head, batch) tiles, whose coordinates (and so the TMA boxes') are carried in
    # registers; the K/V pipeline states' registers take their values where the states last changed
    ("--q_shape", "1,256,1,64", "--k_shape", "1,256,1,64", "--is_persistent"),
    # two heads and two batches: the heads' mode (one box element) lies between d and seqlen in the global strides'
    # order, and the TMA descriptor keeps that order (taking the smem layout's order moved it after seqlen, and the
    # boxes came from the wrong rows: 86.7% of the output wrong on an H200 at 4,1024,8,64)
    ("--q_shape", "2,128,2,64", "--k_shape", "2,128,2,64", "--is_persistent"),
])
def test_fmha_passes_its_check_against_torch(tmp_path, args):
    env = dict(os.environ, PYTHONPATH=SRC, PYTHONHASHSEED="0", CUTE_DSL_ARCH="sm_90a")
    cu = tmp_path / "kernel.cu"
    p = subprocess.run([sys.executable, "-c", _DRIVER, str(cu), PROGRAM, *args], cwd=os.path.dirname(PROGRAM),
                       env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"exit {p.returncode}\nstdout:\n{p.stdout[-3000:]}\nstderr:\n{p.stderr[-4000:]}"
    assert "Results verified successfully!" in p.stdout and p.stdout.rstrip().endswith("PASS"), p.stdout[-2000:]
    src = cu.read_text()
    # each math warp group (ids 1 and 2) syncs its 128 threads on its own barrier
    assert 'bar.sync 1, 128;' in src and 'bar.sync 2, 128;' in src
    assert "wgmma.mma_async" in src and "cp.async.bulk.tensor" in src
    assert "_ok) cl_fail(" in src  # the guarded stmatrix of the epilogue
    # P*V takes P from registers: its 32-bit words are packed (and pinned) before the group's first wgmma, which
    # a copy of P follows the fence to; packed at each wgmma, they made ptxas inject a warpgroup.arrive before
    # each (C7519) and run the group's wgmmas one at a time
    pv = [line for line in src.splitlines() if "wgmma.mma_async" in line and "{%32, %33, %34, %35}" in line]
    assert pv and all('"r"(cl_pa' in line and "<< 16" not in line for line in pv), pv[:1]
    assert "C7519" not in nvcc_compiles(src)
