"""complement: CuTe's answers, CUTLASS's cases with its postconditions, properties."""

import math

import numpy as np

import pytest
from hypothesis import given, settings, strategies as st

import strategies as S
from cutelab import Layout, LayoutError, complement, cosize, filter, make_layout, size

P = Layout.parse

# CuTe docs (02_layout_algebra.md, "Complement" and "Logical Divide"/"Logical Product" sections)
KNOWN = [
    ("4:1", 24, "6:4"),
    ("6:4", 24, "4:1"),
    ("(4,6):(1,4)", 24, "1:0"),
    ("4:2", 24, "(2,3):(1,8)"),
    ("(2,4):(1,6)", 24, "3:2"),
    ("(2,2):(1,6)", 24, "(3,2):(2,12)"),
    ("(2,2):(4,1)", 24, "(2,3):(2,8)"),
    ("(2,3):(2,4)", 24, "(2,2):(1,12)"),
    ("4:2", 8, "2:1"),
    ("1:0", 5, "5:1"),
    ("4:0", 8, "8:1"),
]

# test/unit/cute/core/complement.cpp: (layout,) uses cotarget cosize(layout); a list is a shape
CUTLASS = [
    ('1:0',),
    ('1:0', 2),
    ('1:0', 5),
    ('1:0', (2, 2)),
    ('1:1',),
    ('1:1', 2),
    ('1:1', 5),
    ('1:1', (2, 2)),
    ('1:2', 1),
    ('1:2', 2),
    ('1:2', 8),
    ('1:2', 5),
    ('1:2', (2, 2)),
    ('4:0', 1),
    ('4:0', 2),
    ('4:0', 8),
    ('4:1', 1),
    ('4:1', 2),
    ('4:1', 8),
    ('4:2', 1),
    ('4:2',),
    ('4:2', 16),
    ('4:2', 19),
    ('4:2', (2, 2)),
    ('4:4', 1),
    ('4:4',),
    ('4:4', 17),
    ('4:4', (2, 2)),
    ('(2,4):(1,2)',),
    ('(2,3):(1,2)',),
    ('(2,4):(1,4)',),
    ('(2,4):(1,6)',),
    ('(2,4,8):(8,1,64)',),
    ('(2,4,8):(8,1,0)',),
    ('(2,4,8):(8,1,0)', 460),
    ('((2,2),(2,2)):((1,4),(8,32))',),
    ('((2,2),(2,2)):((1,32),(8,4))',),
    ('(4,6):(1,6)',),
    ('(4,2):(1,10)',),
    ('(4,2):(1,16)',),
    ('12:1', 1),
    ('12:1',),
    ('12:1', 53),
    ('12:1', 128),
    ('12:2', 1),
    ('12:2',),
    ('12:2', 53),
    ('12:2', 128),
    ('(3,6):(1,3)',),
    ('(3,6):(1,9)',),
    ('(3,6):(1,10)',),
    ('64:1', (32, 4, 4)),
]


@pytest.mark.parametrize("a,cotarget,expected", KNOWN)
def test_known(a, cotarget, expected):
    assert str(complement(P(a), cotarget)) == expected


def test_default_cotarget_is_cosize_of_filter():
    a = P("(2,4,8):(8,1,0)")
    assert complement(a) == complement(a, cosize(filter(a)))


def check_postconditions(layout, cotarget, result, bounds=True):
    """The checks of CUTLASS's test_complement.

    The two cosize bounds hold for CUTLASS's own cases but are not theorems: with a shape
    cotarget CuTe divides the rest out mode by mode (complement((2):(2), (3,2)) is 2:1, cosize of
    the completed layout 4 < 6), and complement((2):(2), 9) is (2,3):(1,4), of cosize 10 > 9.
    cutelab gives CuTe's answers there, so the properties check the bounds only where they hold.
    """
    n = math.prod(cotarget) if isinstance(cotarget, tuple) else cotarget
    completed = make_layout(layout, result)
    if bounds:
        assert cosize(completed) >= n
        c = cosize(layout)
        assert cosize(result) <= -(-n // c) * c
    img = set(S.image(layout))
    r = S.image(result)
    for i in range(1, len(r)):
        assert r[i - 1] < r[i]  # ordered
        assert r[i] not in img  # disjoint
    assert size(result) <= cosize(result)
    assert cosize(completed) <= cosize(result) + cosize(layout)
    if bounds:
        assert size(result) >= n // size(filter(layout))
        assert cosize(result) >= n // size(filter(layout))
    assert size(complement(completed)) == 1
    assert complement(complement(result, cosize(layout)), cotarget) == result


@pytest.mark.parametrize("case", CUTLASS, ids=str)
def test_cutlass_cases(case):
    a = P(case[0])
    cot = tuple(case[1]) if len(case) > 1 and isinstance(case[1], (list, tuple)) else (
        case[1] if len(case) > 1 else cosize(a))
    check_postconditions(a, cot, complement(a, cot))


@st.composite
def cotargets(draw, layout):
    c = cosize(layout)
    kind = draw(st.sampled_from(["cosize", "multiple", "any", "shape"]))
    if kind == "cosize":
        return c
    if kind == "multiple":
        return c * draw(st.integers(1, 4))
    if kind == "any":
        return draw(st.integers(1, 2 * c + 3))
    return tuple(draw(st.lists(st.integers(1, 6), min_size=1, max_size=3)))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_property_postconditions(data):
    a = data.draw(S.injective_layouts(max_size=128, ones_and_zeros=True))
    cot = data.draw(cotargets(a))
    f = filter(a)
    span = max(s * d for s, d in zip(S.it.flatten_to_tuple(f.shape), S.it.flatten_to_tuple(f.stride)))
    bounds = isinstance(cot, int) and cot % span == 0
    check_postconditions(a, cot, complement(a, cot), bounds)


@settings(max_examples=150, deadline=None)
@given(S.injective_layouts(max_size=64), st.integers(1, 3))
def test_property_covers_cotarget(a, k):
    """For divisible injective layouts, (A, complement(A, M)) is a bijection onto [0, cosize) ⊇ [0, M)."""
    m = cosize(a) * k
    completed = make_layout(a, complement(a, m))
    img = np.sort(completed.offsets())
    assert (img == np.arange(len(img))).all()
    assert len(img) >= m


@settings(max_examples=200, deadline=None)
@given(S.layouts(max_size=128, kind="arbitrary"))
def test_property_non_injective_raises_or_disjoint(a):
    """Arbitrary layouts: either a LayoutError, or an ordered result disjoint from the image."""
    try:
        r = complement(a)
    except LayoutError as e:
        assert "complement" in str(e)
        return
    img = set(S.image(a))
    ri = S.image(r)
    assert all(x < y for x, y in zip(ri, ri[1:]))
    assert not (set(ri[1:]) & img)


def test_non_injective_message():
    with pytest.raises(LayoutError, match=r"complement\(\(2,2\):\(1,1\)\).*not injective"):
        complement(P("(2,2):(1,1)"))
