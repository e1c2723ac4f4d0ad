"""Swizzles on byte addresses (CuTe's smem atoms) against the same swizzle in element units."""

import pytest

import cutelab as cute
from cutelab import analysis as A
from cutelab.errors import LayoutError
from cutelab.nvgpu.warpgroup import SmemLayoutAtomKind, make_smem_layout_atom


def _sw128_tile():
    atom = make_smem_layout_atom(SmemLayoutAtomKind.K_SW128, cute.Float16)
    assert str(atom) == "S<3,4,3> o 0 o (8,64):(64,1)"  # the DSL's form: the swizzle is on bytes
    return cute.tile_to_shape(atom, (128, 64), (0, 1))


def test_ldmatrix_over_the_k_sw128_atom_is_conflict_free_on_bytes():
    tile = _sw128_tile()
    on_bytes = A.analyze(A.ldmatrix_trace(tile, "f16", 4, swizzle_units="bytes"))
    assert int(on_bytes.conflicts.sum()) == 0
    # the same swizzle read on element offsets is another layout, with conflicts
    on_elements = A.analyze(A.ldmatrix_trace(tile, "f16", 4))
    assert int(on_elements.conflicts.sum()) > 0


def test_bytes_equals_the_element_form():
    tile = _sw128_tile()
    elem = A.element_swizzle(tile, 16, "bytes")
    assert str(elem.inner) == "S<3,3,3>"
    a = A.ldmatrix_trace(tile, "f16", 4, swizzle_units="bytes").addresses
    b = A.ldmatrix_trace(elem, "f16", 4).addresses
    assert (a == b).all()


def test_f32_and_bad_units():
    atom = make_smem_layout_atom(SmemLayoutAtomKind.K_SW128, cute.Float32)
    assert str(A.element_swizzle(atom, 32, "bytes").inner) == "S<3,2,3>"
    with pytest.raises(LayoutError, match="swizzle_units must be"):
        A.element_swizzle(atom, 32, "words")
    with pytest.raises(LayoutError, match="not an element permutation"):
        A.element_swizzle("S<3,1,3> o 0 o (8,64):(64,1)", 32, "bytes")
