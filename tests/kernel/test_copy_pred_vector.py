"""cute.copy's pred with one flag per vector (CuTe DSL's profile (ATOM_REST, REST...) for a value mode
(ATOM_V, ATOM_REST)), as quack's predicate_k builds it; the run of elements a flag covers is the
value mode's first sub-mode, also when the copying atom is narrower than it."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import TraceError
from cutelab.runtime import from_dlpack


@cute.kernel
def _row_copy(mX: cute.Tensor, mO: cute.Tensor, tv: cute.Layout, tiler: cute.Shape, bits_in: cutlass.Constexpr,
              pred_mode: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    gX = cute.local_tile(mX, tiler, (bidx, 0))
    gO = cute.local_tile(mO, tiler, (bidx, 0))
    cX = cute.local_tile(cute.make_identity_tensor(mX.shape), tiler, (bidx, 0))
    vec = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), mX.element_type, num_bits_per_copy=128)
    load = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), mX.element_type, num_bits_per_copy=bits_in)
    thr = cute.make_tiled_copy(vec, tv, tiler).get_slice(tidx)
    tXgX, tXgO, tXcX = thr.partition_S(gX), thr.partition_D(gO), thr.partition_S(cX)
    tXrX = cute.make_fragment_like(tXgX)
    tXrX.fill(-1.0)
    if pred_mode == "vector":  # quack's utils.predicate_k: one flag per (0, v) of the value mode
        tXpX = cute.make_fragment(cute.make_layout(
            (cute.size(tXcX, mode=[0, 1]), cute.size(tXcX, mode=[1]), cute.size(tXcX, mode=[2])),
            stride=(cute.size(tXcX, mode=[2]), 0, 1)), cutlass.Boolean)
        for v in cutlass.range_constexpr(tXpX.shape[0]):
            for k in cutlass.range_constexpr(tXpX.shape[2]):
                tXpX[v, 0, k] = cute.elem_less(tXcX[(0, v), 0, k][1], mX.shape[1])
    else:  # a flag count that fits no run of the value mode
        tXpX = cute.make_fragment(cute.make_layout(3), cutlass.Boolean)
    if tXcX[0][0] < mX.shape[0]:
        cute.copy(load, tXgX, tXrX, pred=tXpX)
        cute.copy(vec, tXrX, tXgO, pred=tXpX)


@pytest.mark.parametrize("bits_in", [128, 64])  # 64: the atom moves half of each flag's run
@pytest.mark.parametrize("M,N", [(4, 32), (5, 12), (3, 20)])  # N a multiple of the vector, as quack asserts
def test_one_flag_per_vector_copies_the_columns_in_bounds(M, N, bits_in):
    Xb = np.arange(M * 32, dtype=np.float32).reshape(M, 32)
    Ob = np.full_like(Xb, 7.0)
    X, O = Xb[:, :N], Ob[:, :N]  # rows 128 bytes apart: every vector is 16-byte aligned
    # 16 threads, 4 per row, each with 8 consecutive values: two 128-bit vectors
    tiler, tv = cute.make_layout_tv(cute.make_layout((4, 4), stride=(4, 1)), cute.make_layout((1, 8), stride=(8, 1)))
    _row_copy(from_dlpack(X, assumed_align=16), from_dlpack(O, assumed_align=16), tv, tiler, bits_in,
              "vector").launch(grid=(M + 3) // 4, block=16)
    # the vectors past column N have a false flag: the buffer's columns there keep their old value
    np.testing.assert_array_equal(Ob[:, :N], Xb[:, :N])
    np.testing.assert_array_equal(Ob[:, N:], 7.0)


def test_a_pred_that_fits_no_run_of_the_value_mode_is_refused():
    X = np.zeros((4, 32), np.float32)
    tiler, tv = cute.make_layout_tv(cute.make_layout((4, 4), stride=(4, 1)), cute.make_layout((1, 8), stride=(8, 1)))
    with pytest.raises(TraceError, match=r"pred .* has 3 flags; .* one per element \(8\) or one per run of 4"):
        _row_copy(from_dlpack(X, assumed_align=16), from_dlpack(X.copy(), assumed_align=16), tv, tiler, 128,
                  "bad").launch(grid=1, block=16)
