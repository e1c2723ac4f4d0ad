"""The shared-memory bank picture (render/swizzle.py): swizzle arithmetic, banks, read-back, errors."""

from __future__ import annotations

import pytest

import cutelab as cute
from cutelab import Layout
from cutelab import render as R
from cutelab.errors import LayoutError

from . import svgread


def _swizzle_by_bits(o: int, b: int, m: int, s: int) -> int:
    """Swizzle<B,M,S> bit by bit: bit (m + i) ^= bit (m + s + i) for i < b (s >= b >= 0)."""
    out = o
    for i in range(b):
        out ^= ((o >> (m + s + i)) & 1) << (m + i)
    return out


def _offsets(fig) -> list[int]:
    return [int(x.split("\n")[0]) for x in fig.grids[0].labels.ravel(order="F").tolist()]


@pytest.mark.parametrize("bms", [(0, 0, 0), (1, 0, 1), (2, 3, 3), (3, 3, 3), (3, 4, 3), (2, 4, 5), (3, 2, 4)])
def test_swizzled_offsets_by_definition(bms):
    got = _offsets(R.bank_figure("(64,64):(1,64)", bms))
    assert got == [_swizzle_by_bits(x, *bms) for x in range(4096)]
    assert _offsets(R.swizzle_figure(f"S<{bms[0]},{bms[1]},{bms[2]}> o 0 o (64,64):(1,64)")) == got


def test_negative_shift_moves_bits_up():
    # S < 0: the B bits at [M, M+B) go into [M-S, M-S+B)  (CuTe: yyy_msk at M, zzz_msk at M - S)
    got = _offsets(R.bank_figure("64:1", (2, 0, -3)))
    assert got == [x ^ ((x & 0b11) << 3) for x in range(64)]


def test_classic_128B_swizzle_removes_column_conflicts():
    # (8,64) halves, row-major: 128 bytes per row, so a column sits in one bank; S<3,3,3> spreads it over 8
    plain = R.bank_figure("(8,64):(64,1)", elem_bits=16).grids[0].keys
    sw = R.swizzle_figure("S<3,3,3> o 0 o (8,64):(64,1)", elem_bits=16).grids[0].keys
    assert all(len(set(plain[:, c].tolist())) == 1 for c in range(64))
    assert all(len(set(sw[:, c].tolist())) == 8 for c in range(64))
    assert all(len(set(sw[r].tolist())) == 32 for r in range(8))  # and rows stay conflict free


@pytest.mark.parametrize("elem_bits", [8, 16, 32, 64])
def test_svg_read_back(elem_bits):
    text = "S<2,3,3> o 4 o (8,32):(32,1)"
    svg = R.render(R.swizzle_figure(text, elem_bits=elem_bits), "svg")
    (g,) = svgread.read(svg)
    L = Layout.parse("(8,32):(32,1)")
    colour_of_bank = {}
    for m in range(8):
        for n in range(32):
            off = _swizzle_by_bits(4 + L(m, n), 2, 3, 3)
            bank = (off * elem_bits // 8 // 4) % 32
            assert g.labels[(m, n)] == f"{off}\nb{bank}"
            assert colour_of_bank.setdefault(bank, g.fills[m, n]) == g.fills[m, n]
    assert len(set(colour_of_bank.values())) == len(colour_of_bank)  # one colour per bank


def test_all_formats():
    f = R.swizzle_figure("S<3,4,3> o 0 o (8,64):(64,1)")
    assert "b0" in R.render(f, "text") and "\\definecolor" in R.render(f, "latex")
    assert "<svg" in R.render(f, "html")
    pytest.importorskip("PIL")
    assert R.render(f, "png")[:4] == b"\x89PNG"


def test_inputs():
    # a (B,M,S) tuple, a Swizzle, a plain function, a ComposedLayout and its text all agree
    a = R.bank_figure("(4,8):(8,1)", (1, 2, 3)).grids[0].labels
    for sw in (cute.make_swizzle(1, 2, 3), lambda o: _swizzle_by_bits(o, 1, 2, 3)):
        assert (R.bank_figure("(4,8):(8,1)", sw).grids[0].labels == a).all()
    C = cute.make_composed_layout(cute.make_swizzle(1, 2, 3), 0, Layout.parse("(4,8):(8,1)"))
    assert (R.swizzle_figure(C).grids[0].labels == a).all()
    assert (R.swizzle_figure("S<1,2,3> o 0 o (4,8):(8,1)").grids[0].labels == a).all()
    assert R.swizzle_figure(Layout.parse("(2,2):(1,2)"), elem_bits=32).grids[0].labels.tolist() == [
        ["0\nb0", "2\nb2"], ["1\nb1", "3\nb3"]]
    # an offset shifts before the swizzle
    assert _offsets(R.swizzle_figure("S<1,2,3> o 8 o (4,8):(8,1)")) == [
        _swizzle_by_bits(8 + x, 1, 2, 3) for x in Layout.parse("(4,8):(8,1)").offsets().tolist()]


@pytest.mark.parametrize("kind, dtype, cute_cpp", [
    # CuTe C++: as_position_independent_swizzle_layout(GMMA::Layout_K_SW128_Atom<half_t>) and
    # (GMMA::Layout_MN_SW64_Atom<float>) print Sw<3,3,3> o _0 o (_8,_64):(_64,_1) and Sw<2,2,3> o _0 o (_16,_8):(_1,_16)
    ("K_SW128", "Float16", "S<3,3,3> o 0 o (8,64):(64,1)"),
    ("MN_SW64", "Float32", "S<2,2,3> o 0 o (16,8):(1,16)"),
])
def test_smem_layout_atom_is_a_pointer_swizzle(kind, dtype, cute_cpp):
    from cutelab.nvgpu.warpgroup import SmemLayoutAtomKind, make_smem_layout_atom

    t = getattr(cute, dtype)
    atom = make_smem_layout_atom(getattr(SmemLayoutAtomKind, kind), t)
    f = R.swizzle_figure(atom, elem_bits=t.width, ptr_swizzle=True)
    assert f.grids[0].title == f"{atom} (swizzle on byte addresses)"
    assert (f.grids[0].labels == R.swizzle_figure(cute_cpp, elem_bits=t.width).grids[0].labels).all()
    if kind == "K_SW128":  # 128-byte rows: rows conflict free, and each 16-byte column chunk in 8 distinct places
        banks = f.grids[0].keys
        assert all(len(set(banks[r].tolist())) == 32 for r in range(8))
        assert all(len(set(banks[:, c].tolist())) == 8 for c in range(64))


def test_ptr_swizzle_errors():
    with pytest.raises(LayoutError, match="needs a swizzle"):
        R.bank_figure("(4,4):(4,1)", ptr_swizzle=True)
    with pytest.raises(LayoutError, match="moves bytes inside a 32-bit element"):
        R.bank_figure("(4,8):(8,1)", (1, 0, 3), elem_bits=32, ptr_swizzle=True)
    with pytest.raises(LayoutError, match="8 bits or more"):
        R.bank_figure("(4,8):(8,1)", (1, 4, 3), elem_bits=4, ptr_swizzle=True)


@pytest.mark.parametrize("text, msg", [
    ("S<3,4> o 0 o (8,64):(64,1)", "cannot parse"),
    ("S<3,4,2> o 0 o (8,64):(64,1)", "cannot parse"),
    ("S<3,4,3> o 0 o (8,64):(64,1", "missing '\\)'"),
])
def test_errors(text, msg):
    with pytest.raises(LayoutError, match=msg):
        R.swizzle_figure(text)


def test_bad_elem_bits_and_negative_offsets():
    with pytest.raises(LayoutError, match="power of two"):
        R.swizzle_figure("(4,4):(4,1)", elem_bits=12)
    with pytest.raises(LayoutError, match="negative offset"):
        R.bank_figure("(4,4):(-4,1)", elem_bits=16)
    with pytest.raises(LayoutError, match="expected CuTe notation"):
        R.swizzle_figure(3.5)


def test_before_and_after_side_by_side():
    import numpy as np

    from cutelab import render as R

    f = R.swizzle_figure("S<3,4,3> o 0 o (8,64):(64,1)", 16, before=True)
    b, a = f.grids
    assert (b.title, a.title) == ("before: (8,64):(64,1)", "after: S<3,4,3> o 0 o (8,64):(64,1)")
    assert np.array_equal(b.labels, R.swizzle_figure("(8,64):(64,1)", 16).grids[0].labels)
    assert np.array_equal(a.labels, R.swizzle_figure("S<3,4,3> o 0 o (8,64):(64,1)", 16).grids[0].labels)
    assert b.colors == a.colors  # one bank, one colour, in both
    assert [n.split(":")[0] for n in f.notes[1:]] == ["before", "after"]
    assert len(R.swizzle_figure("(8,8):(8,1)", 16, before=True).grids) == 1  # no swizzle: nothing to compare
