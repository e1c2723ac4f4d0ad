"""cute.arch.grid_dim(), block_dim(), cluster_dim(), block_in_cluster_dim() and cluster_size() are runtime
integers in a kernel, as in CuTe DSL (%nctaid, %ntid, %nclusterid, %cluster_nctaid, %cluster_nctarank): arithmetic
on them stays symbolic at trace time (a quotient that is 0 for this launch is not a trace-time 0), the CPU
interpreter gives them the launch's values, the CUDA reads the special registers, and a use that needs a static
value is an error that names the dimension."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import LayoutError, TraceError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
from cutelab.runtime import from_dlpack

from sm90_util import nvcc_compiles


@cute.kernel
def dims_kernel(O: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bx, by, _ = cute.arch.block_idx()
    gx, gy, gz = cute.arch.grid_dim()
    nx, ny, _ = cute.arch.block_dim()
    cx, cy, _ = cute.arch.cluster_dim()
    dx, dy, _ = cute.arch.block_in_cluster_dim()
    groups = gx // 8  # 0 for grids narrower than 8: a runtime 0, never a trace-time one
    lin = bx + gx * by
    if tidx == 0:
        O[lin, 0] = gx * 100 + gy * 10 + gz
        O[lin, 1] = nx * 10 + ny
        O[lin, 2] = cx * 10 + cy
        O[lin, 3] = dx * 10 + dy
        O[lin, 4] = cute.arch.cluster_size()
        if groups == 0:  # (decided by the launch traced: a comparison of launch dimensions alone)
            O[lin, 5] = 1
        else:
            O[lin, 5] = 2
        O[lin, 6] = (lin + groups * 3) % gx
        O[lin, 7] = (cutlass.Int32(1) << cute.arch.cluster_size()) - cutlass.Int32(1)  # (a multicast mask)


@pytest.mark.parametrize("grid,block,cluster", [((4, 2, 1), (64, 1, 1), (2, 1, 1)),
                                                ((8, 2, 1), (32, 2, 1), (1, 2, 1)),
                                                ((16, 1, 1), (32, 1, 1), (1, 1, 1))])
def test_the_interpreter_gives_the_launchs_values(grid, block, cluster):
    n = grid[0] * grid[1]
    O = np.full((n, 8), -1, np.int32)
    dims_kernel(from_dlpack(O)).launch(grid=grid, block=block, cluster=cluster)
    gx, gy, gz = grid
    for lin in range(n):
        groups = gx // 8
        want = [gx * 100 + gy * 10 + gz, block[0] * 10 + block[1], (gx // cluster[0]) * 10 + gy // cluster[1],
                cluster[0] * 10 + cluster[1], cluster[0] * cluster[1] * cluster[2], 1 if groups == 0 else 2,
                (lin + groups * 3) % gx, (1 << (cluster[0] * cluster[1] * cluster[2])) - 1]
        assert O[lin].tolist() == want, (lin, O[lin].tolist(), want)


def test_the_cuda_reads_the_special_registers():
    O = np.zeros((8, 8), np.int32)
    dims_kernel(from_dlpack(O)).launch(grid=(4, 2, 1), block=(64, 1, 1), cluster=(2, 1, 1))
    src = cuda.render(last_launch().ir)
    for text in ("gridDim.x", "gridDim.y", "gridDim.z", "blockDim.x", "blockDim.y", "cl_nclusterid_x()",
                 "cl_cluster_nctaid_x()", "cl_cluster_nctarank()"):
        assert text in src, text
    assert 'asm("mov.u32 %0, %%" "nclusterid.x"' not in src  # (the prelude's macro spells it once)
    nvcc_compiles(src)


@cute.kernel
def range_of_grid_dim(O: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bx, _, _ = cute.arch.block_idx()
    gx, _, _ = cute.arch.grid_dim()
    if tidx == 0 and bx == 0:
        for i in range(gx):  # a runtime loop, as in CuTe DSL
            O[i] = i + 1


@cute.kernel
def grid_stride_loop(O: cute.Tensor, n: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bx, _, _ = cute.arch.block_idx()
    gx, _, _ = cute.arch.grid_dim()
    if tidx == 0:
        for i in cutlass.range(bx, n, gx):  # quack's grid-stride loops: the step is the launch's value
            O[i] = bx + 1


def test_a_grid_stride_loop_steps_by_the_launchs_grid():
    O = np.zeros(11, np.int32)
    grid_stride_loop(from_dlpack(O), 11).launch(grid=(3, 1, 1), block=(32, 1, 1))
    assert O.tolist() == [i % 3 + 1 for i in range(11)]


@cute.kernel
def constexpr_range_of_grid_dim(O: cute.Tensor):
    gx, _, _ = cute.arch.grid_dim()
    for i in cute.range_constexpr(gx):
        O[i] = 1


@cute.kernel
def layout_of_cluster_dim(O: cute.Tensor):
    cx, _, _ = cute.arch.cluster_dim()
    L = cute.make_layout((8, cx // 8))  # a layout's shape is static: the launch's value, a dynamic int
    O[0] = cute.size(L)


def test_a_layout_of_launch_dimensions_takes_the_launchs_values():
    O = np.zeros(16, np.int32)
    layout_of_cluster_dim(from_dlpack(O)).launch(grid=(32, 1, 1), block=(32, 1, 1), cluster=(2, 1, 1))
    assert O[0] == 8 * (16 // 8)


def test_range_of_grid_dim_is_a_runtime_loop():
    O = np.zeros(16, np.int32)
    range_of_grid_dim(from_dlpack(O)).launch(grid=(5, 1, 1), block=(32, 1, 1))
    assert O.tolist() == [1, 2, 3, 4, 5] + [0] * 11


def test_a_static_use_is_an_error_naming_the_dimension():
    O = np.zeros(16, np.int32)
    with pytest.raises(TraceError, match=r"cute\.arch\.grid_dim\(\)\[0\], a runtime value"):
        constexpr_range_of_grid_dim(from_dlpack(O)).launch(grid=(4, 1, 1), block=(32, 1, 1))
    with pytest.raises(LayoutError, match=r"make_layout.*shape entries must be positive, got \(%nclusterid\.x // 8\) "
                                          r"== 0 for this launch \(it reads cute\.arch\.cluster_dim\(\)\[0\]"):
        layout_of_cluster_dim(from_dlpack(O)).launch(grid=(4, 1, 1), block=(32, 1, 1))


@cute.kernel
def tail_swizzle(O: cute.Tensor, skew: cutlass.Int32):
    """CUTLASS's Hopper dense_gemm.py's CTA swizzle: groups of 8 block rows, and a tail layout of the rows left over,
    made in a runtime branch that no block takes when the rows divide by 8 (its extent is then 0 for this launch).
    The branch reads a runtime argument (skew, 0 here), as a persistent kernel's tile index would: the launch's
    dimensions alone cannot decide it, so it is traced."""
    gx, gy, _ = cute.arch.grid_dim()
    bx, by, _ = cute.arch.block_idx()
    tidx, _, _ = cute.arch.thread_idx()
    lin = bx + gx * by
    reg = cute.size(((8, gx // 8), gy))
    m = lin % 8
    if lin + skew >= reg:
        tail = cute.make_layout((gx % 8, gy), stride=(1, gx % 8))
        m, _ = tail.get_flat_coord(lin - reg)
        m = m + 100
    if tidx == 0:
        O[lin] = m


@pytest.mark.parametrize("gx", [16, 10])
def test_an_empty_mode_in_a_runtime_branch_stays_a_runtime_division(gx):
    """gx % 8 == 0 makes the tail layout's first mode empty for this launch: allowed in the branch (no block runs
    it), and the CUDA divides by the special register's expression there; with gx == 10 the branch runs."""
    O = np.zeros(2 * gx, np.int32)
    tail_swizzle(from_dlpack(O), 0).launch(grid=(gx, 2, 1), block=(32, 1, 1))
    reg = 8 * (gx // 8) * 2
    want = [i % 8 if i < reg else (i - reg) % (gx % 8) + 100 for i in range(2 * gx)]
    assert O.tolist() == want
    if gx == 16:  # the tail's extent: the special register's expression, not a trace-time 0
        src = cuda.render(last_launch().ir)
        assert re.search(r"\(\(\(unsigned (int|long long)\)gridDim\.x\) % 8u?(ll)?\)\)", src) or "gridDim.x) % 8" in src, src
        # and the remainder by it stays in the branch: the hoist pass leaves a division by a launch expression
        # that is 0 for this launch where the code has it (at the entry every thread would divide by zero)
        lines = src.splitlines()
        branch = next(i for i, line in enumerate(lines) if "skew" in line and line.strip().startswith("if ("))
        uses = [i for i, line in enumerate(lines) if "gridDim.x) % 8)" in line]
        assert uses and all(i > branch for i in uses), (branch, uses)
        nvcc_compiles(src)


@cute.kernel
def branch_on_the_cluster_shape(O: cute.Tensor):
    cx, cy, _ = cute.arch.block_in_cluster_dim()
    if cx == 2 and cy == 1:  # decided by the launch traced (fp16_gemm_4.py's preferred-cluster branch)
        O[0] = 2
    else:
        for i in cutlass.range_constexpr(cute.arch.grid_dim()[0]):  # refused where it is traced
            O[i] = 1


def test_a_comparison_of_launch_dimensions_is_decided_by_the_launch():
    O = np.zeros(4, np.int32)
    branch_on_the_cluster_shape(from_dlpack(O)).launch(grid=(2, 1, 1), block=(32, 1, 1), cluster=(2, 1, 1))
    assert O.tolist() == [2, 0, 0, 0]
    with pytest.raises(TraceError, match=r"range_constexpr.*cute\.arch\.grid_dim\(\)\[0\]"):
        branch_on_the_cluster_shape(from_dlpack(O)).launch(grid=(2, 1, 1), block=(32, 1, 1), cluster=(1, 1, 1))


@cute.kernel
def cluster_swizzle_tail(O: cute.Tensor):
    cidx, cidy, _ = cute.arch.cluster_idx()
    cdimx, cdimy, _ = cute.arch.cluster_dim()
    cluster_id = cidx + cdimx * cidy
    regular = cute.size(((8, cdimx // 8), cdimy))
    tidx, _, _ = cute.arch.thread_idx()
    if tidx == 0:
        O[cluster_id] = 1
    if cluster_id >= regular:  # no cluster of a launch whose cluster rows 8 divides (dense_gemm.py's tail)
        tail = cute.make_layout((cdimx % 8, cdimy), stride=(1, cdimx % 8))
        m, _ = tail.get_flat_coord(cluster_id - regular)
        if tidx == 0:
            O[cluster_id] = 2 + m


def test_a_comparison_the_launchs_dimensions_decide_is_decided_by_the_launch():
    """cluster_idx ranges over the launch's clusters, so with %nclusterid's values in place the tail branch of
    CUTLASS's Hopper dense_gemm.py (whose layout would have an empty mode) is dead for 16 cluster rows and is not
    traced; for 12 rows it is a runtime branch (4 tail rows)."""
    O = np.zeros(48, np.int32)
    cluster_swizzle_tail(from_dlpack(O)).launch(grid=(32, 2, 1), block=(32, 1, 1), cluster=(2, 1, 1))
    assert O[:32].tolist() == [1] * 32
    assert "cluster_id" not in cuda.render(last_launch().ir) and "% 8" not in cuda.render(last_launch().ir)
    O[:] = 0
    cluster_swizzle_tail(from_dlpack(O)).launch(grid=(24, 2, 1), block=(32, 1, 1), cluster=(2, 1, 1))
    assert O[:24].tolist() == [1] * 16 + [2, 3, 4, 5] * 2


@cute.kernel
def _write_grid_size(O: cute.Tensor):
    bx, _, _ = cute.arch.block_idx()
    tidx, _, _ = cute.arch.thread_idx()
    O[bx * 32 + tidx] = cute.arch.grid_dim()[0]


@cute.kernel
def _write_block_index(O: cute.Tensor):
    bx, _, _ = cute.arch.block_idx()
    tidx, _, _ = cute.arch.thread_idx()
    O[bx * 32 + tidx] = bx


def test_a_kernel_reading_the_grid_size_keeps_its_block_schedule():
    """The printer may run several logical blocks per CUDA block (passes/coarsen.py), which shrinks gridDim:
    not for a kernel that reads the grid's size, whose gridDim must be the grid it was launched with."""
    from cutelab.kernel.passes import block_schedule

    O = np.zeros(64 * 32, np.float32)
    _write_grid_size(from_dlpack(O)).launch(grid=64, block=32)
    assert (O == 64).all()
    ir = last_launch().ir
    assert "nctaid" in ir.dims_read
    sched = block_schedule(ir, coarsen=2)
    assert sched is None or sched["grid"] == (64, 1, 1)
    assert "gridDim.x" in cuda.render(ir, coarsen=2)
    _write_block_index(from_dlpack(O)).launch(grid=64, block=32)  # the same kernel without it: coarsened
    assert block_schedule(last_launch().ir, coarsen=2)["grid"] == (32, 1, 1)
