"""The shared-memory bank picture (render/swizzle.py): swizzle arithmetic, banks, read-back, errors."""

from __future__ import annotations

import numpy as np
import pytest

from cutelab import Layout
from cutelab import render as R
from cutelab.errors import LayoutError
from cutelab.render.swizzle import parse_composed, swizzle_offsets

from . import svgread


def _swizzle_by_bits(o: int, b: int, m: int, s: int) -> int:
    """Swizzle<B,M,S> bit by bit: bit (m + i) ^= bit (m + s + i) for i < b (s >= b >= 0)."""
    out = o
    for i in range(b):
        out ^= ((o >> (m + s + i)) & 1) << (m + i)
    return out


@pytest.mark.parametrize("bms", [(0, 0, 0), (1, 0, 1), (2, 3, 3), (3, 3, 3), (3, 4, 3), (2, 4, 5), (3, 2, 4)])
def test_swizzle_offsets_by_definition(bms):
    o = np.arange(4096)
    got = swizzle_offsets(o, bms)
    assert got.tolist() == [_swizzle_by_bits(x, *bms) for x in range(4096)]
    assert sorted(got.tolist()) == list(range(4096))  # a permutation of every aligned block


def test_negative_shift_moves_bits_up():
    # S < 0: the B bits at [M, M+B) go into [M-S, M-S+B)  (CuTe: yyy_msk at M, zzz_msk at M - S)
    got = swizzle_offsets(np.arange(64), (2, 0, -3))
    want = [x ^ ((x & 0b11) << 3) for x in range(64)]
    assert got.tolist() == want


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
    assert parse_composed("S<3,4,3> o 0 o (8,64):(64,1)") == ((3, 4, 3), 0, Layout.parse("(8,64):(64,1)"))
    assert parse_composed("Sw<1,2,3> o 8 o 16:1")[:2] == ((1, 2, 3), 8)
    assert parse_composed("(4,4):(4,1)") == (None, 0, Layout.parse("(4,4):(4,1)"))
    # a plain Layout, a callable swizzle, and a ComposedLayout-like object agree
    a = R.bank_figure("(4,8):(8,1)", (1, 2, 3)).grids[0].labels
    b = R.bank_figure("(4,8):(8,1)", lambda o: _swizzle_by_bits(o, 1, 2, 3)).grids[0].labels
    assert (a == b).all()

    class Sw:
        num_bits, num_base, num_shift = 1, 2, 3

    class Composed:
        inner, offset, outer = Sw(), 0, Layout.parse("(4,8):(8,1)")

    assert (R.swizzle_figure(Composed()).grids[0].labels == a).all()
    assert R.swizzle_figure(Layout.parse("(2,2):(1,2)"), elem_bits=32).grids[0].labels.tolist() == [
        ["0\nb0", "2\nb2"], ["1\nb1", "3\nb3"]]


@pytest.mark.parametrize("text, msg", [
    ("S<3,4> o 0 o (8,64):(64,1)", "cannot read"),
    ("S<3,4,2> o 0 o (8,64):(64,1)", r"\|S\| >= B"),
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
