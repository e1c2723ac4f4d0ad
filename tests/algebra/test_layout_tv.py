"""make_layout_tv: CuTe's answers (seeds) and the defining property."""

import pytest
from hypothesis import given, settings

import strategies as S
from cutelab import Layout, LayoutError, composition, make_layout, make_layout_tv, raked_product, size

P = Layout.parse

KNOWN = [
    # seeds/cute-partitions.txt: thread_shape (32,8), value_shape (4,8), both row-major
    ("(32,8):(8,1)", "(4,8):(8,1)", (128, 64)),
    ("(2,3):(3,1)", "(2,2):(2,1)", (4, 6)),
    ("(4,1):(1,0)", "(1,4):(0,1)", (4, 4)),
]


@pytest.mark.parametrize("thr,val,tiler", KNOWN)
def test_known_tiler(thr, val, tiler):
    t, tv = make_layout_tv(P(thr), P(val))
    assert t == tiler
    assert size(tv) == tiler[0] * tiler[1]


def test_seed_partition():
    """The tile (128,64):(4096,1) composed with the tv layout prints as in the seed."""
    _, tv = make_layout_tv(P("(32,8):(8,1)"), P("(4,8):(8,1)"))
    assert str(composition(P("(128,64):(4096,1)"), tv)) == "((8,32),(8,4)):((8,16384),(1,4096))"


@settings(max_examples=100, deadline=None)
@given(S.bijective_layouts(max_size=32), S.bijective_layouts(max_size=16))
def test_property(thr, val):
    """layout_mn(layout_tv(t, v)) == t + T*v, where layout_mn = raked_product(thr, val);
    layout_tv is a bijection onto the tile [0, size(tiler))."""
    try:
        tiler, tv = make_layout_tv(thr, val)
    except LayoutError:  # CuTe DSL rejects some scalar/rank-1 pairs in raked_product
        return
    mn = raked_product(thr, val)
    T, V = size(thr), size(val)
    assert size(tv) == T * V
    for t in range(T):
        for v in range(V):
            assert mn(tv((t, v))) == t + T * v
    assert sorted(tv.offsets()) == list(range(T * V))
