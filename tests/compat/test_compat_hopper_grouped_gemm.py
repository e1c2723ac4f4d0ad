"""CUTLASS's Hopper grouped GEMM (tests/compat/programs/cute/hopper/kernel/grouped_gemm/grouped_gemm.py, byte for
byte as of CUTLASS commit 7107b05535f8977f5ecb9d01ee203205b1fd9bc4; benchmarks/dsl_examples.py times it on CuTe
DSL as hopper_grouped_gemm).

cutelab does not run it yet: its kernel copies each TMA atom's descriptor into a per-SM workspace and rewrites it
for every group (TensorMapManager, cpasync.update_tma_descriptor, TMA copies through tma_desc_ptr= and NVVM's
cp.async.bulk.tensor on a descriptor pointer), with the groups' tensors found by addresses read from memory.
Until then it must stop with an error that names what is missing and the program's line, not crash or run
wrongly; this test holds that.
"""
import hashlib
import os
import subprocess
import sys

from compat_helpers import PROGRAMS, SRC

PROGRAM = os.path.join(PROGRAMS, "cute", "hopper", "kernel", "grouped_gemm", "grouped_gemm.py")


def test_the_program_is_cutlass_file_unchanged():
    with open(PROGRAM, "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == "57e5e6d56c0cb4c6f80510cafb58629e6d8c3c790364f38ad99d8599a2a28d7d"


def test_grouped_gemm_stops_naming_the_tensor_map_manager_and_its_line():
    env = dict(os.environ, PYTHONPATH=SRC, PYTHONHASHSEED="0", CUTE_DSL_ARCH="sm_90a")
    p = subprocess.run([sys.executable, "-m", "cutelab", "run", PROGRAM, "--num_groups", "2", "--problem_sizes_mnkl",
                        "(128,128,64,1),(64,128,128,1)", "--tile_shape_mn", "64,64"],
                       cwd=os.path.dirname(PROGRAM), env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode != 0
    last = p.stderr.strip().splitlines()[-1]
    assert "NotInCutelab: cutlass.utils.TensorMapManager (CuTe DSL 4.8.1) is not in cutelab yet (used at " in last, \
        p.stderr[-3000:]
    assert "grouped_gemm.py:961)" in last, last  # the program's line that makes one
    assert "update_tma_descriptor" in last and "tma_desc_ptr=" in last
