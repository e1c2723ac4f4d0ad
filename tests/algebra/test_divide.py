"""logical/zipped/tiled/flat divide: CuTe's answers, CUTLASS's cases, the defining identities."""

import pytest
from hypothesis import given, settings, strategies as st

import strategies as S
from cutelab import (
    Layout, LayoutError, coalesce, compatible, complement, composition, flat_divide,
    logical_divide, make_layout, rank, size, tiled_divide, zipped_divide,
)

P = Layout.parse

KNOWN = [
    # CuTe docs: 02_layout_algebra.md (Logical Divide) and products_and_divides.rst
    (logical_divide, "(4,2,3):(2,1,8)", P("4:2"), "((2,2),(2,3)):((4,1),(2,8))"),
    (logical_divide, "(6,8):(8,1)", (3, 4), "((3,2),(4,2)):((8,24),(1,4))"),
    (logical_divide, "(6,8):(8,1)", (P("(3):(1)"), P("(4):(1)")), "(((3),2),((4),2)):(((8),24),((1),4))"),
    (logical_divide, "(6,8):(8,1)", P("(3,4):(1,3)"), "((3,(2,2)),4):((8,(24,1)),2)"),
    (zipped_divide, "(6,8):(8,1)", (3, 4), "((3,4),(2,2)):((8,1),(24,4))"),
    (tiled_divide, "(6,8):(8,1)", (3, 4), "((3,4),2,2):((8,1),24,4)"),
    (flat_divide, "(6,8):(8,1)", (3, 4), "(3,4,2,2):(8,1,24,4)"),
    # seeds/cute-partitions.txt (CuTe DSL output)
    (tiled_divide, "(8192,8192):(8192,1)", (1, 16), "((1,16),8192,512):((0,1),8192,16)"),
    (zipped_divide, "(8192,8192):(8192,1)", (1, 16), "((1,16),(8192,512)):((0,1),(8192,16))"),
    (logical_divide, "(6,8):(8,1)", (None, 4), "(6,(4,2)):(8,(1,4))"),
    (logical_divide, "(6,8):(8,1)", 3, "(3,(2,8)):(8,(24,1))"),
]

# test/unit/cute/core/logical_divide.cpp
CUTLASS = [
    ('1:0', '1:0'),
    ('1:0', '1:1'),
    ('1:1', '1:0'),
    ('1:1', '1:1'),
    ('6:1', '2:1'),
    ('6:1', '2:3'),
    ('6:1', '(2,3):(3,1)'),
    ('6:2', '2:1'),
    ('6:2', '2:3'),
    ('6:2', '(2,3):(3,1)'),
    ('(6,6):(1,12)', '(6,3):(3,1)'),
    ('(6,6):(12,1)', '(6,3):(3,1)'),
    ('32:1', '2:8'),
    ('(4,1):(1,1)', '2:1'),
    ('(4,1):(1,1)', '2:2'),
    ('(8,8):(1,8)', '32:2'),
    ('(8,8):(8,1)', '32:2'),
    ('2:1', '32:1'),
    ('48:1', '32:1'),
    ('96:1', '32:2'),
    ('32:1', '48:1'),
    ('(32,4,4):(1,32,128)', '64:1'),
    ('(128,4,3):(1,512,0)', '32:1'),
    ('(128,4,3):(1,512,0)', '32:2'),
    ('(16,4,3):(1,512,0)', '32:1'),
]


@pytest.mark.parametrize("op,a,tiler,expected", KNOWN, ids=lambda x: getattr(x, "__name__", str(x)))
def test_known(op, a, tiler, expected):
    assert str(op(P(a), tiler)) == expected


@pytest.mark.parametrize("a,b", CUTLASS)
def test_cutlass_cases(a, b):
    a, b = P(a), P(b)
    r = logical_divide(a, b)
    assert rank(r) == 2
    assert compatible(b.shape, r.shape[0])


def test_seed_tv_partition():
    """seeds/cute-partitions.txt: a (128,64):(4096,1) tile composed with make_layout_tv's tv layout."""
    from cutelab import make_layout_tv

    thr = make_layout((32, 8), stride=(8, 1))
    val = make_layout((4, 8), stride=(8, 1))
    tiler, tv = make_layout_tv(thr, val)
    assert tiler == (128, 64)
    tile = P("(128,64):(4096,1)")
    assert str(composition(tile, tv)) == "((8,32),(8,4)):((8,16384),(1,4096))"
    assert str(composition(tile, tv)[(0, None)]) == "((8,4)):((1,4096))"


def test_too_many_tiler_modes():
    with pytest.raises(LayoutError, match=r"logical_divide\(\(6,8\):\(8,1\), \(2,2,2\)\).*3 modes.*only 2"):
        logical_divide(P("(6,8):(8,1)"), (2, 2, 2))


def test_zipped_with_underscore_over_unsplit_mode():
    with pytest.raises(LayoutError, match=r"zipped_divide\(\(6,8\):\(8,1\), \(_,4\)\).*not a \(tile, rest\) pair"):
        zipped_divide(P("(6,8):(8,1)"), (None, 4))


def check_divide(a, b):
    r = logical_divide(a, b)
    expect = composition(a, make_layout(b, complement(b, coalesce(a).shape)))
    assert r == expect
    assert rank(r) == 2 and compatible(b.shape, r.shape[0])
    assert size(r) >= size(a)
    z = zipped_divide(a, b)
    assert z == r  # a Layout tiler: zipped_divide is logical_divide
    t = tiled_divide(a, b)
    f = flat_divide(a, b)
    for i in range(size(a)):
        assert r(i) == z(i) == t(i) == f(i)


@settings(max_examples=200, deadline=None)
@given(S.tiler_pairs())
def test_property_identity(ab):
    """logical_divide(A, B) == composition(A, make_layout(B, complement(B, shape(coalesce(A)))))."""
    check_divide(*ab)


@settings(max_examples=200, deadline=None)
@given(S.tiler_pairs())
def test_property_tile_is_composition(ab):
    """Mode 0 of the divide is A o B; when cosize(B) divides size(A), the rest has size(A)/size(B)."""
    a, b = ab
    r = logical_divide(a, b)
    tile = Layout(r.shape[0], r.stride[0])
    ab_ = composition(a, b)
    for i in range(size(b)):
        assert tile(i) == ab_(i)
    assert size(r) == size(a)


@st.composite
def by_mode(draw):
    a = draw(S.layouts(min_len=2, max_len=3, max_depth=1, kind="compact"))
    modes = a.shape
    tiler = []
    for s in modes[: draw(st.integers(1, len(modes)))]:
        divs = [d for d in range(1, s + 1) if s % d == 0]
        tiler.append(draw(st.one_of(st.none(), st.sampled_from(divs))))
    return a, tuple(tiler)


@settings(max_examples=150, deadline=None)
@given(by_mode())
def test_property_by_mode(at):
    """A tuple tiler divides mode by mode; zipped/tiled/flat rearrange the same modes."""
    a, tiler = at
    r = logical_divide(a, tiler)
    for i, t in enumerate(tiler):
        mode = Layout(a.shape[i], a.stride[i])
        assert Layout(r.shape[i], r.stride[i]) == (mode if t is None else logical_divide(mode, t))
    if None in tiler:  # CuTe's zip2_by needs a (tile, rest) pair under every tiler leaf
        return
    z = zipped_divide(a, tiler)
    t = tiled_divide(a, tiler)
    f = flat_divide(a, tiler)
    assert size(z) == size(t) == size(f) == size(r) == size(a)
    assert rank(z) == 2 and rank(t) == 1 + rank(z.shape[1]) and rank(f) == rank(z.shape[0]) + rank(z.shape[1])
    zi = sorted(z(i) for i in range(size(z)))
    assert zi == sorted(f(i) for i in range(size(f))) == sorted(a(i) for i in range(size(a)))
