"""Swizzle and ComposedLayout: case table, properties, errors, SMEM atoms.

The differential check against CuTe DSL is tests/test_swizzle_golden.py.
"""

import doctest
import itertools
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cutelab as cute
from cutelab import swizzle as swz
from cutelab.errors import LayoutError, ParseError
from cutelab.layout import parse_layout
from cutelab.nvgpu import warpgroup as wg
from cutelab.nvgpu.warpgroup import helpers as wg_helpers
from cutelab.swizzle import ComposedLayout, Swizzle
from cutelab.utils import LayoutEnum, hopper_helpers, sm90

from strategies import layouts, pow2_layouts

VALID = [(b, m, s) for b in range(0, 4) for m in range(0, 5) for s in range(-6, 7) if abs(s) >= b]


def test_doctests():
    for mod in (swz, wg_helpers, hopper_helpers):
        res = doctest.testmod(mod)
        assert res.attempted > 0 and res.failed == 0, (mod.__name__, res)


# --------------------------------------------------------------------------- Swizzle

@pytest.mark.parametrize("b,m,s", VALID)
def test_swizzle_is_an_involutive_bijection(b, m, s):
    sw = Swizzle(b, m, s)
    n = 1 << (b + m + abs(s))
    x = np.arange(4 * n, dtype=np.int64)
    y = sw(x)
    assert sorted(y[:n].tolist()) == list(range(n))  # a bijection on [0, 2^(b+m+|s|))
    assert (sw(y) == x).all()  # its own inverse
    assert ((y >> (b + m + abs(s))) == (x >> (b + m + abs(s)))).all()  # high bits pass through
    assert ((y & ~sw.zzz_msk) == (x & ~sw.zzz_msk)).all()  # only ZZZ bits change


@pytest.mark.parametrize("b,m,s", VALID)
def test_swizzle_bits_formula(b, m, s):
    """CuTe's definition: ZZZ ^= YYY, bit by bit."""
    sw = Swizzle(b, m, s)
    ylo = m + max(0, s)
    zlo = m - min(0, s)
    assert sw.yyy_msk == ((1 << b) - 1) << ylo and sw.zzz_msk == ((1 << b) - 1) << zlo
    for x in range(0, 1 << (b + m + abs(s)), 7):
        want = x
        for k in range(b):
            if x >> (ylo + k) & 1:
                want ^= 1 << (zlo + k)
        assert sw(x) == want


def test_swizzle_table():
    sw = Swizzle(3, 4, 3)
    assert [sw(v) for v in (0, 16, 128, 144, 256, 1023)] == [0, 16, 144, 128, 288, 1023 ^ (7 << 4)]
    assert str(sw) == "S<3,4,3>" and repr(sw) == "Swizzle(3, 4, 3)"
    assert (sw.num_bits, sw.num_base, sw.num_shift) == (3, 4, 3)
    neg = Swizzle(2, 4, -3)  # YYY below ZZZ
    assert neg(0b110000) == 0b110000 ^ (0b11 << 7)
    assert str(neg) == "S<2,4,-3>"
    assert sw(-1) == -1 ^ ((-1 & sw.yyy_msk) >> 3)  # negative offsets as C++ ints (two's complement)


def test_make_swizzle_canonical_identity():
    assert str(cute.make_swizzle(0, 2, 1)) == "S<0,4,3>"
    assert cute.make_swizzle(0, 0, 0) == Swizzle(0, 4, 3)
    assert cute.make_swizzle(2, 4, 3) == Swizzle(2, 4, 3)


@pytest.mark.parametrize("b,m,s,what", [
    (3, 4, 2, "|s| must be at least b"), (-1, 4, 3, "b must be >= 0"), (1, -1, 3, "m must be >= 0"),
    (2, 29, 2, "do not fit"), (1.0, 4, 3, "must be an int"),
])
def test_swizzle_errors(b, m, s, what):
    with pytest.raises(LayoutError, match=what):
        cute.make_swizzle(b, m, s)


def test_swizzle_call_errors():
    with pytest.raises(LayoutError, match="int offset"):
        Swizzle(1, 4, 3)("12")
    with pytest.raises(LayoutError, match="integers"):
        Swizzle(1, 4, 3)(np.array([1.5]))


def test_swizzle_value_semantics():
    a, b = Swizzle(3, 4, 3), Swizzle.parse("Sw<3,4,3>")
    assert a == b and hash(a) == hash(b) and a != Swizzle(2, 4, 3)
    assert pickle.loads(pickle.dumps(a)) == a
    with pytest.raises(AttributeError):
        a._b = 1
    with pytest.raises(ParseError):
        Swizzle.parse("S<3,4>")
    with pytest.raises(ParseError, match="at least b"):
        Swizzle.parse("S<3,4,1>")


# --------------------------------------------------------------------------- ComposedLayout

def composed(sw=(3, 4, 3), off=0, outer="(8,64):(64,1)"):
    return cute.make_composed_layout(Swizzle(*sw), off, parse_layout(outer))


def test_composed_table():
    c = composed()
    assert str(c) == "S<3,4,3> o 0 o (8,64):(64,1)"
    assert (c.shape, cute.size(c), cute.cosize(c), cute.rank(c), cute.depth(c)) == ((8, 64), 512, 512, 2, 1)
    assert (c(5), c((1, 2)), c(1, 2)) == (352, 66, 66)
    assert str(c[1]) == str(cute.get(c, [1])) == "S<3,4,3> o 0 o 64:1"
    assert c.inner == Swizzle(3, 4, 3) and c.offset == 0 and c.outer == parse_layout("(8,64):(64,1)")
    assert c.max_alignment == 16 and not c.is_normal
    assert cute.crd2idx((None, 3), c) == c((0, 3))  # None counts as 0, as in CuTe DSL


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(VALID), st.integers(0, 4096), pow2_layouts(max_size=256))
def test_composed_eval_is_swizzle_of_offset_plus_outer(params, off, outer):
    c = ComposedLayout(Swizzle(*params), off, outer)
    offs = c.offsets()
    assert offs.dtype == np.int64 and offs.shape == (cute.size(c),)
    for i in range(cute.size(c)):
        assert c(i) == Swizzle(*params)(off + outer(i)) == offs[i]
        crd = cute.idx2crd(i, outer.shape)
        assert c(crd) == offs[i]  # hierarchical coordinates too


@settings(max_examples=80, deadline=None)
@given(layouts(max_size=64), st.integers(0, 8), layouts(max_size=16))
def test_composed_with_layout_inner(inner, off, outer):
    c = ComposedLayout(inner, off, outer)
    offs = c.offsets()
    from cutelab import int_tuple as it
    for i in range(cute.size(c)):
        assert offs[i] == c(i) == it.crd2idx(off + outer(i), inner.shape, inner.stride)


def test_composed_value_semantics_and_parse():
    c = composed(off=32)
    d = cute.parse_composed(" S<3,4,3>  o 32 o (8,64):(64,1) ")
    assert c == d and hash(c) == hash(d) and c != composed() and c != c.outer
    assert ComposedLayout.parse(str(c)) == c and pickle.loads(pickle.dumps(c)) == c
    e = cute.parse_composed("(4,8):(1,4) o (1,2) o (2,2):(1@0,1@1)")
    assert e.offset == (1, 2) and e((1, 1)) == cute.make_layout((4, 8))((2, 3))
    for bad in ["S<3,4,3> o 0", "S<3,4,3> o x o 8:1", "S<3,4,3> o 0 o (8,64):(64)"]:
        with pytest.raises(ParseError):
            cute.parse_composed(bad)


@pytest.mark.parametrize("make,what", [
    (lambda: composed(off=(1, 2)), "int offset"),
    (lambda: cute.make_composed_layout(Swizzle(1, 4, 3), 0, cute.make_identity_layout((4, 4))), "basis strides"),
    (lambda: cute.make_composed_layout(Swizzle(1, 4, 3), 0, 5), "must be a Layout"),
    (lambda: cute.make_composed_layout(3, 0, cute.make_layout(4)), "Swizzle or a Layout"),
    (lambda: composed()((8, 0)), "out of range"),
    (lambda: composed()(512), "out of range"),
    (lambda: cute.cosize(cute.make_composed_layout(cute.make_layout(8), 1, cute.make_layout(4))), "no cosize"),
    (lambda: cute.composition(cute.make_layout((8, 64)), composed()), "first operand"),
    (lambda: cute.complement(composed()), "not defined for a composed layout"),
    (lambda: cute.right_inverse(composed()), "not defined"),
    (lambda: cute.recast_layout(24, 16, composed()), "power-of-two"),
    (lambda: cute.recast_layout(32, 16, composed(off=7)), "not a multiple"),
    (lambda: cute.group_modes(composed(), 1, 1), "empty"),
])
def test_composed_errors(make, what):
    with pytest.raises(LayoutError, match=what):
        make()


def test_composed_algebra_acts_on_outer():
    c = composed()
    L = c.outer
    for op, arg in [("composition", cute.make_layout((4, 8))), ("logical_divide", (4, 8)),
                    ("zipped_divide", (4, 8)), ("tiled_divide", (4, 8)), ("flat_divide", (4, 8)),
                    ("logical_product", cute.make_layout((2, 2))), ("blocked_product", cute.make_layout((2, 2))),
                    ("raked_product", cute.make_layout((2, 2))), ("zipped_product", cute.make_layout((2, 2)))]:
        got = getattr(cute, op)(c, arg)
        assert got == ComposedLayout(c.inner, c.offset, getattr(cute, op)(L, arg)), op
    assert str(cute.tile_to_shape(c, (16, 128), (0, 1))) == "S<3,4,3> o 0 o ((8,2),(64,2)):((64,512),(1,1024))"
    assert cute.coalesce(c) == c and cute.filter(c) == c
    assert str(cute.flatten(composed(outer="((2,4),64):((64,128),1)"))) == "S<3,4,3> o 0 o (2,4,64):(64,128,1)"


def test_recast():
    c = composed(off=64)
    assert str(cute.recast_layout(32, 16, c)) == "S<3,3,3> o 32 o (8,32):(32,1)"
    assert str(cute.recast_layout(8, 16, c)) == "S<3,5,3> o 128 o (8,128):(128,1)"
    assert str(cute.upcast(c, 2)) == str(cute.recast_layout(32, 16, c))
    assert str(cute.downcast(c, 2)) == str(cute.recast_layout(8, 16, c))
    assert str(cute.recast_layout(256, 16, composed())) == "S<3,0,3> o 0 o (8,4):(4,1)"
    # upcast past the base drops swizzle bits (CuTe C++: Swizzle<max(B+M,0),0,S>)
    assert cute.recast_layout(512, 16, composed()).inner == Swizzle(2, 0, 3)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([(1, 4, 3), (2, 4, 3), (3, 4, 3), (2, 3, 3), (3, 1, -4)]),
       st.sampled_from([0, 64, 1024]), st.data())
def test_recast_matches_bytes(params, off, data):
    """Viewing 16-bit elements as 32-bit ones: the recast layout addresses the same bytes."""
    outer = data.draw(st.sampled_from(["(8,64):(64,1)", "(64,8):(1,64)", "((8,2),(64,2)):((64,512),(1,1024))"]))
    c = composed(params, off, outer)
    r = cute.recast_layout(32, 16, c)
    if params[1] == 0:
        return
    half = c.offsets()
    # every 32-bit element r(i) covers the 16-bit elements 2*r(i), 2*r(i)+1 which c reaches
    assert set((2 * r.offsets()).tolist()) <= set(half.tolist())


# --------------------------------------------------------------------------- slicing

SLICE_CASES = [
    ((None, 3), "S<0,4,3> o 0 o ((2,4)):((64,144))", 3),
    ((3, None), "S<0,4,3> o 0 o ((16,2,2)):((1,-16,32))", 208),
    ((None, None), "S<3,4,3> o 0 o (8,64):(64,1)", 0),
    ((None, 16), "S<0,4,3> o 0 o ((2,2,2)):((64,112,288))", 16),
    ((1, None), "S<0,4,3> o 0 o (64):(1)", 64),
]


@pytest.mark.parametrize("coord,layout,offset", SLICE_CASES)
def test_slice_table(coord, layout, offset):
    c = composed()
    sub, off = cute.slice_and_offset(coord, c)
    assert (str(sub), off) == (layout, offset)
    assert cute.slice_(c, coord) == sub == c(coord)


@settings(max_examples=120, deadline=None)
@given(st.sampled_from([(1, 4, 3), (2, 4, 3), (3, 4, 3), (3, 3, 3), (2, 4, -3)]),
       st.sampled_from(["(8,64):(64,1)", "(64,8):(1,64)", "((8,2),(64,2)):((64,512),(1,1024))",
                        "(16,32):(32,1)", "(4,(8,16)):(128,(16,1))"]),
       st.data())
def test_slice_evaluates_like_the_whole(params, outer, data):
    """For aligned (well-formed) swizzled layouts, as CuTe DSL answers: the offset is the
    value at the slice's origin, and the slice walks from there: the whole layout at
    (fixed part, i) is sub(i) - sub(0) + offset (sub(0) == 0 for a decayed slice)."""
    c = composed(params, data.draw(st.sampled_from([0, 4096, 3 * 8192])), outer)  # aligned offsets
    shp = c.shape

    def rand_coord(s):
        if isinstance(s, tuple):
            return tuple(rand_coord(x) for x in s)
        return data.draw(st.one_of(st.none(), st.integers(0, s - 1)))

    coord = rand_coord(shp)
    sub, off = cute.slice_and_offset(coord, c)
    rest = cute.slice_(c.outer, coord)
    assert cute.size(sub) == cute.size(rest)
    from cutelab import int_tuple as it
    fixed = it.transform_leaf(coord, lambda x: 0 if x is None else x)
    base = c.outer(fixed)
    assert off == c(fixed)  # the returned offset is the value at the slice's origin
    if sub.inner == Swizzle(0, 4, 3):
        assert sub(0) == 0
    for i in range(cute.size(rest)):
        assert sub(i) - sub(0) + off == c.inner(c.offset + base + rest(i))


def test_slice_that_cannot_split_raises():
    """CuTe DSL answers these with a wrong layout: the fixed part carries into the rest's bits."""
    for coord, c in [((None, 38), composed((2, 4, 3), 0, "(2,64):(64,2)")),
                     ((4, None), composed((2, 4, 3), 594, "(8,64):(64,1)"))]:
        with pytest.raises(LayoutError, match="share bits"):
            cute.slice_and_offset(coord, c)


# --------------------------------------------------------------------------- tensors

def test_tensor_over_composed_layout():
    S = cute.tile_to_shape(wg.make_smem_layout_atom(wg.SmemLayoutAtomKind.K_SW64, cute.Float16), (32, 64), (0, 1))
    a = np.arange(cute.cosize(S), dtype=np.float32)
    t = cute.make_tensor(a, S)
    assert cute.size(t) == 32 * 64
    assert t[(3, 5)] == S((3, 5))
    assert (t.load().numpy().ravel(order="F") == a[S.offsets()]).all()
    row = t[(3, None)]
    assert (row.load().numpy() == [S((3, j)) for j in range(64)]).all()
    tile = cute.zipped_divide(t, (8, 16))[(None, (1, 2))]
    want = [S((8 + i % 8, 32 + i // 8)) for i in range(128)]
    assert (tile.load().numpy().ravel(order="F") == want).all()
    t[(0, None)] = -1.0
    assert (a[[S((0, j)) for j in range(64)]] == -1).all()


# --------------------------------------------------------------------------- SMEM atoms

ATOMS = {
    ("MN_INTER", "Float16"): "S<0,4,3> o 0 o (8,8):(1,8)",
    ("MN_SW32", "Float16"): "S<1,4,3> o 0 o (16,8):(1,16)",
    ("MN_SW64", "BFloat16"): "S<2,4,3> o 0 o (32,8):(1,32)",
    ("MN_SW128", "Float32"): "S<3,4,3> o 0 o (32,8):(1,32)",
    ("K_INTER", "Int8"): "S<0,4,3> o 0 o (8,16):(16,1)",
    ("K_SW32", "Float32"): "S<1,4,3> o 0 o (8,8):(8,1)",
    ("K_SW64", "Float8E4M3FN"): "S<2,4,3> o 0 o (8,64):(64,1)",
    ("K_SW128", "Float16"): "S<3,4,3> o 0 o (8,64):(64,1)",
}


@pytest.mark.parametrize("kind,dtype", list(ATOMS))
def test_smem_atoms(kind, dtype):
    atom = wg.make_smem_layout_atom(getattr(wg.SmemLayoutAtomKind, kind), getattr(cute.numeric, dtype))
    assert str(atom) == ATOMS[(kind, dtype)]
    # one atom is 8 rows of the kind's row bytes, a bijection onto its cosize
    width = getattr(cute.numeric, dtype).width
    kind_e = getattr(wg.SmemLayoutAtomKind, kind)
    assert cute.size(atom) * width == 8 * kind_e.contiguous_bits
    assert sorted(atom.offsets().tolist()) == list(range(cute.size(atom)))


def test_smem_atom_errors():
    with pytest.raises(LayoutError, match="SmemLayoutAtomKind"):
        wg.make_smem_layout_atom("K_SW128", cute.Float16)
    with pytest.raises(LayoutError, match="element type"):
        wg.make_smem_layout_atom(wg.SmemLayoutAtomKind.K_SW128, np.float16)
    class Wide(cute.Float, width=256):  # an element type of 256 bits (the types are classes)
        pass

    with pytest.raises(LayoutError, match="whole number"):
        wg.make_smem_layout_atom(wg.SmemLayoutAtomKind.K_INTER, Wide)


@pytest.mark.parametrize("kind", list(wg.SmemLayoutAtomKind))
@pytest.mark.parametrize("stages", [1, 3])
def test_smem_tile_is_bijective(kind, stages):
    atom = wg.make_smem_layout_atom(kind, cute.BFloat16)
    trg = (128, 64, stages)
    order = (1, 0, 2) if kind.is_mn_major else (0, 1, 2)
    S = cute.tile_to_shape(atom, trg, order)
    assert isinstance(S, ComposedLayout) and cute.size(S) == 128 * 64 * stages
    assert sorted(S.offsets().tolist()) == list(range(cute.size(S)))


# --------------------------------------------------------------------------- cutlass.utils.sm90

def test_sm90_helpers():
    assert sm90.get_smem_layout_atom(LayoutEnum.ROW_MAJOR, cute.Float16, 64) is wg.SmemLayoutAtomKind.K_SW128
    assert sm90.get_smem_layout_atom(LayoutEnum.ROW_MAJOR, cute.Float16, 16) is wg.SmemLayoutAtomKind.K_SW32
    assert sm90.get_smem_layout_atom(LayoutEnum.COL_MAJOR, cute.Int8, 8) is wg.SmemLayoutAtomKind.MN_INTER
    a = sm90.make_smem_layout_a(LayoutEnum.COL_MAJOR, (128, 64, 32), cute.BFloat16, 3)
    assert cute.size(a) == 128 * 32 * 3 and a.shape[0] == (64, 2)  # M-major: M tiled by the 128-byte atom
    assert sorted(a.offsets().tolist()) == list(range(cute.size(a)))
    b = sm90.make_smem_layout_b(LayoutEnum.ROW_MAJOR, (128, 64, 32), cute.Float32, 2)
    assert cute.size(b) == 64 * 32 * 2
    epi = sm90.make_smem_layout_epi(cute.Float16, LayoutEnum.ROW_MAJOR, (64, 32), 2)
    assert cute.size(epi) == 64 * 32 * 2
    with pytest.raises(LayoutError, match="multiple of 8"):
        sm90.get_smem_layout_atom(LayoutEnum.ROW_MAJOR, cute.Float16, 12)
    with pytest.raises(LayoutError, match="LayoutEnum"):
        sm90.make_smem_layout_a("row", (128, 64, 32), cute.Float16, 1)
    with pytest.raises(LayoutError, match=r"\(M, N, K\)"):
        sm90.make_smem_layout_a(LayoutEnum.ROW_MAJOR, (128, 64), cute.Float16, 1)
