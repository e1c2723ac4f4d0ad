"""The TMA atoms CUTLASS's MLA decode makes through CuTe DSL's MLIR layer: ``cute_nvgpu.
atom_make_non_exec_tiled_tma_load(gmem.value, smem_layout.value, cta_v_map, op._to_ir())`` wrapped as
``cute.CopyAtom(op, cpasync.CopyBulkTensorTileG2SNonExecTrait(atom))``, with a CTA-value map over the tensor's
coordinates (a zipped_divide's tile mode) and a CtaGroup.TWO op: cutelab's make_tiled_tma_atom of that tile."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
from cutelab.compat.mlir.dialects import cute_nvgpu
from cutelab.nvgpu import cpasync, tcgen05, warpgroup
from cutelab.runtime import from_dlpack


def _case():
    A = from_dlpack(np.zeros((256, 128), np.float16))
    sl = cute.tile_to_shape(warpgroup.make_smem_layout_atom(warpgroup.SmemLayoutAtomKind.K_SW128, cute.Float16),
                            (64, 64), (0, 1))
    g_tile = cute.composition(cute.make_identity_layout(A.shape), (128, 64))
    cta_v_map = cute.select(cute.zipped_divide(g_tile, (64, 64)), mode=[0])  # ((64,64)):((1@0,1@1))
    return A, sl, cta_v_map


@pytest.mark.parametrize("group", [None, tcgen05.CtaGroup.TWO])
def test_non_exec_tma_atom_is_the_tiled_tma_atom_of_the_map(group):
    A, sl, cta_v_map = _case()
    op = cpasync.CopyBulkTensorTileG2SOp(group) if group is not None else cpasync.CopyBulkTensorTileG2SOp()
    raw, tensor = cute_nvgpu.atom_make_non_exec_tiled_tma_load(A.value, sl.value, cta_v_map, op._to_ir(),
                                                              num_multicast=1)
    atom = cute.CopyAtom(op, cpasync.CopyBulkTensorTileG2SNonExecTrait(raw))
    assert atom is raw and atom.op is op  # a 2-CTA load keeps its op: its bytes complete at the pair's leader
    want, _ = cpasync.make_tiled_tma_atom(cpasync.CopyBulkTensorTileG2SOp(), A, sl, (64, 64))
    assert str(atom.desc) == str(want.desc) == ("TMA box (64,64) of f16 from a tensor (128,256) with byte strides "
                                                "(2,256), swizzle 128B")
    assert tensor.shape == A.shape


def test_non_exec_trait_takes_only_a_tma_atom():
    with pytest.raises(TypeError, match="expected the atom of atom_make_non_exec_tiled_tma_load"):
        cpasync.CopyBulkTensorTileG2SNonExecTrait(object())
