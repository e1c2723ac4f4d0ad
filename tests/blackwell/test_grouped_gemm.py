"""CUTLASS's Blackwell grouped GEMM (examples/python/CuTeDSL/cute/blackwell/kernel/grouped_gemm/grouped_gemm.py, byte
for byte as of CUTLASS commit 7107b05535f8977f5ecb9d01ee203205b1fd9bc4, BSD-3-Clause) run by ``cutelab run`` with
CUTE_DSL_ARCH=sm_100a on the CPU interpreter to its own check against torch, and the scheduler it walks its tiles
with, ``cutlass.utils.StaticPersistentGroupTileScheduler``, in a kernel of our own."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.compat.dsl_grouped import StaticPersistentGroupTileScheduler, create_initial_search_state
from cutelab.compat.dsl_utils import PersistentTileSchedulerParams
from cutelab.runtime import from_dlpack

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "programs"
PROG = PROGRAMS / "cute" / "blackwell" / "kernel" / "grouped_gemm" / "grouped_gemm.py"
BLOB = "e4c28f143f6af02ae11230fb125547121b0ce138"  # git blob id at that commit


def test_the_program_is_cutlass_s_own_byte_for_byte():
    data = PROG.read_bytes()
    assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == BLOB


@cute.kernel
def walk(Out: cute.Tensor, Count: cute.Tensor, shapes: cute.Tensor, params: cutlass.Constexpr,
         tile_mnk: cutlass.Constexpr, groups: cutlass.Constexpr):
    """Each persistent CTA walks its tiles: Out[linear index] = (CTA, group, tile m, tile n, problem m, n, k, k tiles);
    Count[CTA] = tiles walked, and the group it reports for the first index past the end (-1)."""
    tidx, _, _ = cute.arch.thread_idx()
    bidz = cute.arch.block_idx()[2]
    sched = StaticPersistentGroupTileScheduler.create(params, cute.arch.block_idx(), cute.arch.grid_dim(), tile_mnk,
                                                      create_initial_search_state(), groups, shapes)
    work = sched.initial_work_tile_info()
    n = cutlass.Int32(0)
    while work.is_valid_tile:
        r = work.group_search_result
        if tidx == 0:
            i = work.tile_idx[2]  # the linear index (the params' l extent is the tile count)
            Out[i, 0] = bidz
            Out[i, 1] = r.group_idx
            Out[i, 2] = r.cta_tile_idx_m
            Out[i, 3] = r.cta_tile_idx_n
            Out[i, 4] = r.problem_shape_m
            Out[i, 5] = r.problem_shape_n
            Out[i, 6] = r.problem_shape_k
            Out[i, 7] = r.cta_tile_count_k
        n = n + 1
        sched.advance_to_next_work()
        work = sched.get_current_work()
    if tidx == 0:
        Count[bidz, 0] = n
        Count[bidz, 1] = work.group_search_result.group_idx
        Count[bidz, 2] = work.group_search_result.problem_shape_m


def test_the_group_scheduler_walks_every_group_s_tiles_column_major():
    tile = (64, 32, 16)
    shapes = np.array([[100, 40, 48, 1], [64, 96, 16, 1], [1, 1, 33, 1]], np.int32)
    # cluster tiles per group (ceil m/64 * ceil n/32): 2*2, 1*3, 1*1
    expect = []
    for g, (m, n, k, _) in enumerate(shapes):
        cm = -(-m // tile[0])
        for j in range(cm * -(-n // tile[1])):
            expect.append([g, j % cm, j // cm, m, n, k, -(-k // tile[2])])
    total = len(expect)  # 8
    params = PersistentTileSchedulerParams((1, 1, cutlass.Int32(total)), (1, 1, 1))
    grid = StaticPersistentGroupTileScheduler.get_grid_shape(params, max_active_clusters=3)
    assert grid == (1, 1, 3)
    out = np.full((total, 8), -9, np.int32)
    count = np.full((3, 3), -9, np.int32)
    walk(from_dlpack(out), from_dlpack(count), from_dlpack(shapes), params, tile, 3).launch(grid=grid, block=32)
    assert out[:, 1:].tolist() == expect
    assert out[:, 0].tolist() == [i % 3 for i in range(total)]  # CTA z takes indices z, z + 3, ...
    assert count[:, 0].tolist() == [3, 3, 2]
    assert count[:, 1:].tolist() == [[-1, -1]] * 3  # past the last group: group -1, problem shape -1


def test_grouped_gemm_three_groups_of_uneven_shapes_with_the_problem_shapes_only_on_the_device():
    # 2x2 + 1x2 + 2x1 tiles of 128x128 (partial tiles in M and N, K of 64 and 192); a grid of every active cluster,
    # most of which find no tile; each group's tensor maps updated in shared memory before its first tile
    env = dict(os.environ, CUTE_DSL_ARCH="sm_100a", OMP_NUM_THREADS="1",
               PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "cutelab", "run", str(PROG), "--num_groups", "3", "--problem_sizes_mnkl",
                        "(200,72,64,1),(64,256,192,1),(130,128,64,1)"], capture_output=True, text=True, env=env,
                       timeout=600, cwd=str(PROGRAMS))
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    assert "Problem shapes available only on device" in p.stdout and "checking group 2" in p.stdout
    assert p.stdout.rstrip().endswith("PASS"), p.stdout[-2000:]
