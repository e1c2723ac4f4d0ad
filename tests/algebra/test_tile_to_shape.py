"""tile_to_shape: CuTe's answers and the defining identity."""

import pytest
from hypothesis import given, settings, strategies as st

import strategies as S
from cutelab import (
    Layout, LayoutError, blocked_product, compatible, make_layout, make_ordered_layout,
    product_each, size, tile_to_shape,
)

P = Layout.parse

KNOWN = [
    # products_and_divides.rst
    ("(2,2):(1,2)", (8, 8), None, "((2,4),(2,4)):((1,4),(2,16))"),
    ("(2,2):(1,2)", (4, 6), None, "((2,2),(2,3)):((1,4),(2,8))"),
]


@pytest.mark.parametrize("block,shape,order,expected", KNOWN)
def test_known(block, shape, order, expected):
    assert str(tile_to_shape(P(block), shape, order)) == expected


def test_block_rank_too_large():
    with pytest.raises(LayoutError, match=r"tile_to_shape\(.*rank"):
        tile_to_shape(P("(2,2,2):(1,2,4)"), (4, 4))


@st.composite
def cases(draw):
    block = draw(S.bijective_layouts(max_size=16))
    bs = block.shape if isinstance(block.shape, tuple) else (block.shape,)
    bs = [size(x) for x in bs]
    extra = draw(st.integers(0, 1))
    mult = [draw(st.integers(1, 3)) for _ in range(len(bs) + extra)]
    trg = tuple(b * m for b, m in zip(bs + [1] * extra, mult))
    order = None
    if draw(st.booleans()):
        order = tuple(draw(st.permutations(range(len(trg)))))
    return block, trg, order


@settings(max_examples=150, deadline=None)
@given(cases())
def test_property(c):
    """compatible(target, shape(result)), and it is blocked_product(block, ordered rest layout)."""
    block, trg, order = c
    try:
        r = tile_to_shape(block, trg, order)
    except LayoutError:  # scalar block with a rank-1 target: rejected like CuTe DSL's product
        return
    assert product_each(r.shape) == trg
    assert size(r) == size(block) * (size(trg) // size(block))
