"""CUTLASS's Hopper dense GEMM (tests/compat/programs/dense_gemm.py), run unchanged by `cutelab run`
with thread-block clusters and multicast TMA, to its own check against torch.

The file is CUTLASS's examples/python/CuTeDSL/cute/hopper/kernel/dense_gemm/dense_gemm.py as of
CUTLASS commit 7107b05535f8977f5ecb9d01ee203205b1fd9bc4 (last changed in cb37157db, "v4.5 tag
update"), byte for byte (SHA below). With cluster (2, 1) B's tile is multicast to the two CTAs of
a cluster, each CTA issuing half of it (make_tiled_tma_atom(num_multicast=2), tma_partition with a
cta_layout of 2); with (1, 2) A's; the pipeline's consumers release each stage on the empty
barriers of every CTA they share a row or column with (remote mbarrier arrives).

Sizes: the program's CTA swizzle makes a layout of (cluster grid along M) // 8 groups, which must
not be empty, so the grid holds at least 8 clusters along M (tile 64x64: M >= 512 per CTA row of
the cluster). Each run also prints the kernel's CUDA; nvcc (where installed) compiles it for sm_90a.
"""
import hashlib
import os
import re
import subprocess
import sys

import pytest

from compat_helpers import SRC

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "kernel"))
from sm90_util import nvcc_compiles  # noqa: E402  (nvcc for sm_90a, skipped where it is not installed)

PROGRAM = os.path.join(HERE, "programs", "dense_gemm.py")
SHA256 = "bb7b76d893219757e2f3701abf1a7c8c819b9966e38aaed30a768596a55aca9f"

# run the program as `cutelab run` does, then print the last launch's CUDA to a file
_DRIVER = """
import sys
from cutelab.compat.run import main
out = sys.argv[1]
rc = main(sys.argv[2:])
from cutelab.kernel import last_launch
from cutelab.kernel.cuda import printer
open(out, "w").write(printer.render(last_launch().ir))
sys.exit(rc)
"""


def _run(tmp_path, *args):
    env = dict(os.environ, PYTHONPATH=SRC, PYTHONHASHSEED="0")
    env.pop("CUTE_DSL_ARCH", None)
    cu = tmp_path / "kernel.cu"
    p = subprocess.run([sys.executable, "-c", _DRIVER, str(cu), PROGRAM, *args], cwd=str(tmp_path), env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"exit {p.returncode}\nstdout:\n{p.stdout[-3000:]}\nstderr:\n{p.stderr[-4000:]}"
    assert p.stdout.rstrip().endswith("PASS"), p.stdout[-2000:]
    return p.stdout, cu.read_text()


def test_the_program_is_cutlass_file_unchanged():
    with open(PROGRAM, "rb") as f:
        data = f.read()
    assert hashlib.sha256(data).hexdigest() == SHA256
    assert data.startswith(b"# Copyright (c) 2025 - 2026 NVIDIA CORPORATION & AFFILIATES. All rights reserved.\n"
                           b"# SPDX-License-Identifier: BSD-3-Clause")
    assert b"\nimport cutlass.cute as cute\n" in data and b"\nimport cuda.bindings.driver as cuda\n" in data


MULTICAST = ("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster")
REMOTE_ARRIVE = "mbarrier.arrive.release.cta.shared::cluster.b64"  # CuTe DSL's default scope


@pytest.mark.parametrize("cluster,mnkl", [("2,1", "1024,64,128,1"), ("1,2", "512,128,128,1")])
def test_clusters_with_multicast_pass_the_programs_check(tmp_path, cluster, mnkl):
    out, src = _run(tmp_path, "--mnkl", mnkl, "--tile_shape_mn", "64,64", "--cluster_shape_mn", cluster)
    assert f"Cluster Shape: ({cluster.replace(',', ', ')})" in out
    # one operand is multicast (B for (2, 1), A for (1, 2)), the other is a plain TMA load
    assert src.count(MULTICAST) >= 1
    assert src.count("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [") >= 1
    # consumers release the stages of their multicast partners: mapa, then a remote arrive at the
    # program's (default, CTA) scope
    assert "mapa.shared::cluster.u32" in src and REMOTE_ARRIVE in src
    # the epilogue's TMA stores and their bulk groups
    assert "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group" in src
    assert "cp.async.bulk.commit_group" in src and "cp.async.bulk.wait_group.read" in src
    assert "barrier.cluster.arrive" in src and "barrier.cluster.wait" in src
    # the loads' box coordinates are plain sums: the k-tile index (the producer state's count, a register)
    # is proven in [0, k tiles) where the loads run, so the coordinate view's decode folds (passes/ranges.py)
    loads = [line for line in src.splitlines() if "cp.async.bulk.tensor.3d.shared::cluster.global" in line]
    assert len(loads) >= 4 and not any("cl_mod(" in x or "cl_floordiv(" in x for x in loads), loads
    # the producer warp's index is lane 0's, broadcast: ptxas keeps what its branch assigns uniform
    assert "__shfl_sync(0xffffffffu, (((unsigned int)threadIdx.x) / 32u), 0)" in src
    nvcc_compiles(src)


def test_one_cta_clusters_pass_the_programs_check(tmp_path):
    out, src = _run(tmp_path, "--mnkl", "512,64,128,1", "--tile_shape_mn", "64,64", "--cluster_shape_mn", "1,1")
    assert "Cluster Shape: (1, 1)" in out
    assert MULTICAST not in src and REMOTE_ARRIVE not in src and "barrier.cluster" not in src
    # the program's shared storage (mbarriers, then the f16 tiles) is one region viewed as two element
    # types: on the GPU both arrays start at the region's first byte, as CuTe DSL's one allocation does
    assert src.count("(cl_dyn_smem + 0);") == 2, [l for l in src.splitlines() if "cl_dyn_smem +" in l]


def test_a_grid_rounded_up_to_whole_clusters_passes_its_check(tmp_path):
    """N = 64 with 64-wide tiles and clusters (1, 2): the program launches a second column of CTAs whose tiles
    lie wholly outside C. The TMA tensors' extents are dynamic, as CuTe DSL's are (the tensors are marked
    dynamic), so that column's tiles keep their coordinate (n = 64, past the extent, where TMA writes nothing)
    and C is right. While the TMA tensor's extents were static, the rest-N mode of extent 1 kept no stride, its
    tiles aliased onto the first column's and the interpreter refused the clash (a LaunchError)."""
    env = dict(os.environ, PYTHONPATH=SRC, PYTHONHASHSEED="0")
    env.pop("CUTE_DSL_ARCH", None)
    p = subprocess.run([sys.executable, "-m", "cutelab", "run", PROGRAM, "--mnkl", "512,64,128,1", "--tile_shape_mn",
                        "64,64", "--cluster_shape_mn", "1,2"], cwd=str(tmp_path), env=env, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0 and p.stdout.rstrip().endswith("PASS"), (p.stdout[-2000:], p.stderr[-3000:])


def test_fewer_than_8_cluster_rows_is_an_error_naming_cluster_dim(tmp_path):
    """With fewer than 8 clusters along M the program's CTA swizzle layout has a mode of cluster_dim()[0] // 8 == 0
    clusters, and it then takes cluster_id % 0 (a remainder by a runtime zero, whose value it then overwrites in its
    tail branch). cluster_dim() is a runtime value (as in CuTe DSL) but a layout's shape is static in cutelab: the
    launch's 0 is refused with an error that names the dimension, the expression and its value, not run."""
    env = dict(os.environ, PYTHONPATH=SRC, PYTHONHASHSEED="0")
    env.pop("CUTE_DSL_ARCH", None)
    p = subprocess.run([sys.executable, "-m", "cutelab", "run", PROGRAM, "--mnkl", "256,64,128,1", "--tile_shape_mn",
                        "64,64", "--cluster_shape_mn", "1,1"], cwd=str(tmp_path), env=env, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode != 0
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("cutelab.errors.LayoutError: make_layout(((8,?),?)"), last
    assert "(%nclusterid.x // 8) == 0 for this launch (it reads cute.arch.cluster_dim()[0]" in last, last


@pytest.mark.parametrize("m,tail", [(1024, False), (1536, True)])
def test_the_cta_swizzles_tail_is_a_branch_only_where_a_cluster_takes_it(tmp_path, m, tail):
    """M / 64 CTA rows in clusters (2, 1), 2 columns: 8 cluster rows (M 1024) leave the CTA swizzle's tail
    (cluster_dim()[0] % 8 rows) empty, and no cluster of the launch takes `if cluster_id >= num_reg_cids`. The
    kernel is traced for its launch, so with the launch's dimensions that comparison is decided
    (symbolic.with_launch_values) and the branch, whose layout would have an empty mode, is not traced: it was a
    LayoutError (at the benchmark's 8192^3 too). 12 cluster rows (M 1536) have a tail of 4: a runtime branch."""
    out, src = _run(tmp_path, "--mnkl", f"{m},128,64,1", "--tile_shape_mn", "64,64", "--cluster_shape_mn", "2,1")
    assert "Cluster Shape: (2, 1)" in out and src.count(MULTICAST) >= 1
    branch = re.search(r"if \(\(+\(unsigned int\)cl_nclusterid_x\(\)\) \* .* >= 16u\)\) \{", src)
    assert (branch is not None) == tail, branch
