"""CUTLASS's Hopper grouped GEMM (tests/compat/programs/cute/hopper/kernel/grouped_gemm/grouped_gemm.py, byte for
byte as of CUTLASS commit 7107b05535f8977f5ecb9d01ee203205b1fd9bc4; benchmarks/dsl_examples.py times it on CuTe
DSL as hopper_grouped_gemm), run by `cutelab run` on the CPU, where it checks its own result against torch.

Its kernel copies each TMA atom's descriptor into a per-SM workspace and rewrites it for every group
(TensorMapManager, cpasync.update_tma_descriptor: kernel/instr/tensormap.py), finds each group's tensors by
addresses it reads from memory (kernel/instr/address_access.py) with extents and strides read there too
(kernel/instr/runtime_layout.py), loads A and B with NVVM's TMA op through the descriptor pointer and stores C
with cute.copy(..., tma_desc_ptr=); its atoms are made from 16 x 16 and 8 x 8 templates (a coordinate view
each: nvgpu/cpasync/tma.py). The two groups have different K, so the blocks' K loops run different trip
counts (wgmma.wait_group per thread). Its benchmark then launches on workspace tensors it has already freed
(the emulated device keeps them, as CUDA's caching allocator does).
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


def test_grouped_gemm_runs_two_groups_of_different_k_and_passes_its_own_check():
    env = dict(os.environ, PYTHONPATH=SRC, PYTHONHASHSEED="0", CUTE_DSL_ARCH="sm_90a")
    p = subprocess.run([sys.executable, "-m", "cutelab", "run", PROGRAM, "--num_groups", "2", "--problem_sizes_mnkl",
                        "(128,128,64,1),(64,128,128,1)", "--tile_shape_mn", "64,64"],
                       cwd=os.path.dirname(PROGRAM), env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    out = p.stdout.splitlines()
    assert "Checking group 0..." in out and "Checking group 1..." in out  # torch.testing.assert_close per group
    assert out[-1] == "PASS"
