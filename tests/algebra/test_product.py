"""logical/zipped/tiled/flat/blocked/raked product: CuTe's answers, CUTLASS's cases, identities."""

import pytest
from hypothesis import given, settings, strategies as st

import strategies as S
from cutelab import (
    Layout, LayoutError, blocked_product, compatible, complement, composition, cosize,
    flat_product, logical_product, make_layout, raked_product, rank, size, tiled_product,
    zipped_product,
)

P = Layout.parse

KNOWN = [
    # CuTe docs: 02_layout_algebra.md (Logical Product) and products_and_divides.rst
    (logical_product, "(2,2):(4,1)", "6:1", "((2,2),(2,3)):((4,1),(2,8))"),
    (logical_product, "(2,2):(4,1)", "(3,2):(2,1)", "((2,2),(3,2)):((4,1),(8,2))"),
    (logical_product, "(3,4):(4,1)", "(2,5):(1,2)", "((3,4),(2,5)):((4,1),(12,24))"),
    (zipped_product, "(3,4):(4,1)", "(2,5):(1,2)", "((3,4),(2,5)):((4,1),(12,24))"),
    (tiled_product, "(3,4):(4,1)", "(2,5):(1,2)", "((3,4),2,5):((4,1),12,24)"),
    (flat_product, "(3,4):(4,1)", "(2,5):(1,2)", "(3,4,2,5):(4,1,12,24)"),
    (blocked_product, "(3,4):(4,1)", "(2,5):(1,2)", "((3,2),(4,5)):((4,12),(1,24))"),
    (raked_product, "(3,4):(4,1)", "(2,5):(1,2)", "((2,3),(5,4)):((12,4),(24,1))"),
    (blocked_product, "(2,5):(5,1)", "(3,4):(1,3)", "((2,3),(5,4)):((5,10),(1,30))"),
    (raked_product, "(2,5):(5,1)", "(3,4):(1,3)", "((3,2),(4,5)):((10,5),(30,1))"),
]

# test/unit/cute/core/logical_product.cpp
CUTLASS = [
    ('1:0', '1:0'),
    ('1:1', '1:0'),
    ('1:0', '1:1'),
    ('1:1', '1:1'),
    ('3:1', '4:0'),
    ('3:0', '4:1'),
    ('3:0', '4:0'),
    ('3:2', '4:1'),
    ('(3):(1)', '(2,4):(1,2)'),
    ('(2,4):(1,2)', '(3):(1)'),
    ('(8,(2,2)):(1,(8,16))', '(4):(2)'),
    ('(2,2):(1,2)', '(3,3):(3,1)'),
    ('(3):(32)', '(32):(1)'),
    ('(3):(2)', '(4):(1)'),
    ('(3):(32)', '(128):(1)'),
    ('(3):(32)', '(8,8):(1,8)'),
    ('(3):(32)', '(8,8):(8,1)'),
    ('((4,2)):((1,16))', '(4,4):(1,4)'),
    ('((4,2)):((1,16))', '(4,2):(2,1)'),
    ('((2,2),(2,2)):((1,4),(8,32))', '(2,2):(1,2)'),
    ('((2,2),(2,2)):((1,4),(8,32))', '(2,2):(2,1)'),
    ('((4,6)):((1,6))', '(3):(1)'),
]


@pytest.mark.parametrize("op,a,b,expected", KNOWN, ids=lambda x: getattr(x, "__name__", str(x)))
def test_known(op, a, b, expected):
    assert str(op(P(a), P(b))) == expected


@pytest.mark.parametrize("a,b", CUTLASS)
def test_cutlass_cases(a, b):
    a, b = P(a), P(b)
    r = logical_product(a, b)
    assert rank(r) == 2
    assert Layout(r.shape[0], r.stride[0]) == a
    assert compatible(b.shape, r.shape[1])


def test_by_mode_tiler():
    a = P("(2,5):(5,1)")
    r = logical_product(a, (P("3:1"), P("4:1")))
    assert str(r) == str(make_layout(logical_product(P("2:5"), P("3:1")), logical_product(P("5:1"), P("4:1"))))


def test_too_many_tiler_modes():
    with pytest.raises(LayoutError, match=r"logical_product\(\(2,5\):\(5,1\), \(3,4,5\)\).*3 modes.*only 2"):
        logical_product(P("(2,5):(5,1)"), (3, 4, 5))


@st.composite
def product_pairs(draw):
    """(block, tiler): block injective (complement is defined), tiler any layout with
    non-negative strides whose composition with complement(block) is admissible."""
    a = draw(S.injective_layouts(max_size=32))
    b = draw(S.pow2_layouts(max_size=32))
    return a, b


def _is_ok(a, b):
    try:
        return logical_product(a, b)
    except LayoutError:
        return None


@settings(max_examples=200, deadline=None)
@given(product_pairs())
def test_property_identity(ab):
    """logical_product(A, B) == (A, complement(A, size(A)*cosize(B)) o B) and its shape."""
    a, b = ab
    r = _is_ok(a, b)
    if r is None:  # inadmissible composition of the complement with B
        return
    assert r == make_layout(a, composition(complement(a, size(a) * cosize(b)), b))
    assert Layout(r.shape[0], r.stride[0]) == a
    assert compatible(b.shape, r.shape[1])
    assert size(r) == size(a) * size(b)


@settings(max_examples=200, deadline=None)
@given(product_pairs())
def test_property_blocked_raked(ab):
    """blocked and raked products: rank max(rank A, rank B), size(A)*size(B), the same offsets as
    logical_product of the padded operands, rearranged mode by mode."""
    a, b = ab
    if _is_ok(a, b) is None:
        return
    r = max(rank(a), rank(b))
    try:
        bl = blocked_product(a, b)
        rk = raked_product(a, b)
    except LayoutError:  # CuTe DSL rejects a scalar block with a rank-1 tuple tiler (golden vectors)
        assert not isinstance(a.shape, tuple) or not isinstance(b.shape, tuple)
        return
    assert rank(bl) == rank(rk) == r
    assert size(bl) == size(rk) == size(a) * size(b)
    for i in range(r):  # raked mode i is (tiler_i, block_i) where blocked has (block_i, tiler_i)
        sb, db = bl.shape[i], bl.stride[i]
        swapped = Layout((sb[1], sb[0]), (db[1], db[0]))  # CuTe DSL coalesces raked modes
        assert list(Layout(rk.shape[i], rk.stride[i]).offsets()) == list(swapped.offsets())
    assert sorted(bl.offsets()) == sorted(rk.offsets())
    zp, tp, fp = zipped_product(a, b), tiled_product(a, b), flat_product(a, b)
    lp = logical_product(a, b)
    for i in range(size(a) * size(b)):
        assert zp(i) == tp(i) == fp(i) == lp(i)
