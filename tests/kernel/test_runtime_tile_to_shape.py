"""``tile_to_shape`` (and ``blockscaled_utils.tile_atom_to_shape_SF``) in a kernel onto extents the kernel reads
from memory (CUTLASS's scaled MoE GEMM tiles the scale-factor atom onto an expert's row count): the rest counts
and their strides are computed in the kernel, and equal those of the static layout of the same extents."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab import int_tuple as it
from cutelab.dynamic import DynInt, value_of
from cutelab.runtime import from_dlpack
from cutelab.utils.blockscaled_layout import tile_atom_to_shape_SF


@cute.kernel
def sf_layout(Ext: cute.Tensor, Out: cute.Tensor, vec: cutlass.Constexpr):
    """Out = the leaves of tile_atom_to_shape_SF((m, k, 1), vec)'s shape, then of its stride; (m, k) = Ext."""
    tidx, _, _ = cute.arch.thread_idx()
    lay = tile_atom_to_shape_SF((Ext[0], Ext[1], cutlass.Int32(1)), vec)
    if tidx == 0:
        for i, x in enumerate(it.flatten_to_tuple(lay.shape) + it.flatten_to_tuple(lay.stride)):
            Out[i] = x


@pytest.mark.parametrize("m,k,vec", [(300, 128, 16), (128, 512, 32), (1, 64, 16)])
def test_the_scale_factor_layout_of_extents_read_in_the_kernel_is_the_static_one(m, k, vec):
    out = np.full(16, -9, np.int32)
    sf_layout(from_dlpack(np.array([m, k], np.int32)), from_dlpack(out), vec).launch(grid=1, block=32)
    # ceil_div rests: (300, 128) with 16-element blocks: 3 blocks of 128 rows, 2 of 64 K; M rest stride 512 * 2
    ref = value_of(tile_atom_to_shape_SF((DynInt(m), DynInt(k), 1), vec))
    assert out.tolist() == list(it.flatten_to_tuple(ref.shape) + it.flatten_to_tuple(ref.stride))
    if (m, k) == (300, 128):
        assert out.tolist() == [32, 4, 3, 16, 4, 2, 1, 1, 16, 4, 1024, 0, 1, 512, 0, 0]


@cute.kernel
def holes(Ext: cute.Tensor):
    cute.tile_to_shape(cute.make_layout((2, 2), stride=(1, 4)), (Ext[0], 4))  # HOLES


def test_a_block_with_holes_onto_a_kernel_extent_is_refused_by_name():
    with pytest.raises(Exception, match=r"tile_to_shape.*whose offsets are compact only.*has holes"):
        holes(from_dlpack(np.array([8], np.int32))).launch(grid=1, block=32)
