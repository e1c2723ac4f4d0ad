"""max_common_layout/vector, nullspace, recast_layout/upcast/downcast, filter, filter_zeros."""

import pytest
from hypothesis import given, settings, strategies as st

import strategies as S
from cutelab import (
    Layout, LayoutError, coalesce, downcast, filter, filter_zeros, max_common_layout,
    max_common_vector, nullspace, recast_layout, size, upcast,
)

P = Layout.parse

# ---------------------------------------------------------------- max_common_layout / vector

KNOWN_MCV = [
    ("(4,8):(1,4)", "(4,8):(1,8)", 4),
    ("(4,8):(1,4)", "(4,8):(1,4)", 32),
    ("(4,8):(8,1)", "(4,8):(1,4)", 1),
    ("(2,4):(1,2)", "8:1", 8),
]


@pytest.mark.parametrize("a,b,n", KNOWN_MCV)
def test_max_common_vector_known(a, b, n):
    assert max_common_vector(P(a), P(b)) == n


def test_max_common_layout_known():
    assert str(max_common_layout(P("(4,8):(1,4)"), P("(4,8):(1,8)"))) == "4:1"
    assert str(max_common_layout(P("(4,8):(8,1)"), P("(4,8):(1,4)"))) == "1:0"


@settings(max_examples=200, deadline=None)
@given(S.bijective_layouts(max_size=64), st.data())
def test_max_common_property(a, data):
    """For all i < size(R): a(R(i)) == i and b(R(i)) == i; N == size(R) (b a permutation of a's shape)."""
    b = data.draw(S.bijective_layouts(max_size=64))
    try:
        r = max_common_layout(a, b)
        n = max_common_vector(a, b)
    except LayoutError:  # composition(a, right_inverse(b)) inadmissible
        return
    for i in range(size(r)):
        assert S.ext_eval(a, r(i)) == i and S.ext_eval(b, r(i)) == i
    assert n == size(r) or (n == 1 and size(r) == 1)


# ---------------------------------------------------------------- nullspace

KNOWN_NULL = [
    ("(2,4,3):(0,1,0)", "(2,3):(1,8)"),
    ("(2,2,2):(1,0,2)", "2:2"),
    ("(4,8):(1,4)", "1:0"),
]

# test/unit/cute/core/nullspace.cpp
CUTLASS_NULL = [
    ('(2,2,2):(0,0,0)',),
    ('(7,5,16):(0,0,0)',),
    ('(2,2,2):(1,0,2)',),
    ('(7,5,16):(3,1,0)',),
]


@pytest.mark.parametrize("a,expected", KNOWN_NULL)
def test_nullspace_known(a, expected):
    assert str(nullspace(P(a))) == expected


def check_nullspace(a):
    k = nullspace(a)
    assert size(k) == size(a) // size(filter(a))
    for i in range(size(k)):
        assert a(k(i)) == 0
    assert size(nullspace(k)) == 1


@pytest.mark.parametrize("case", CUTLASS_NULL, ids=str)
def test_nullspace_cutlass(case):
    check_nullspace(P(case[0]))


@settings(max_examples=200, deadline=None)
@given(S.injective_layouts(max_size=128, ones_and_zeros=True))
def test_nullspace_property(a):
    check_nullspace(a)


# ---------------------------------------------------------------- recast / upcast / downcast

KNOWN_RECAST = [
    # core_ops.rst
    (32, 8, "(32,4):(1,32)", "(8,4):(1,8)"),
    (8, 32, "(8,4):(1,8)", "(32,4):(1,32)"),
    (32, 32, "(8,4):(1,8)", "(8,4):(1,8)"),
    (4, 6, "(8,4):(1,8)", "(12,4):(1,12)"),
    (32, 16, "(4,8):(8,1)", "(4,4):(4,1)"),
]


@pytest.mark.parametrize("new,old,a,expected", KNOWN_RECAST)
def test_recast_known(new, old, a, expected):
    assert str(recast_layout(new, old, P(a))) == expected


def test_upcast_downcast_known():
    assert str(upcast(P("(8,4):(1,8)"), 2)) == "(4,4):(1,4)"
    assert str(downcast(P("(4,4):(1,4)"), 3)) == "(12,4):(1,12)"
    assert str(upcast(P("(4,3):(0,1)"), 2)) == "(4,2):(0,1)"


def test_downcast_without_unit_stride():
    # CuTe C++ static_asserts a stride-1 mode; CuTe DSL multiplies all strides (golden vectors)
    assert str(downcast(P("(4,4):(2,8)"), 2)) == "(4,4):(4,16)"


@settings(max_examples=200, deadline=None)
@given(S.layouts(max_size=128), st.sampled_from([2, 4]))
def test_downcast_upcast_roundtrip(a, n):
    """For a layout with a stride-1 mode, upcast(downcast(a, n), n) == a."""
    try:
        d = downcast(a, n)
    except LayoutError:
        return
    assert upcast(d, n) == a


# ---------------------------------------------------------------- filter / filter_zeros

KNOWN_FILTER = [
    ("(4,2,3):(1,0,4)", "12:1"),
    ("(2,1,3):(2,0,4)", "6:2"),
    ("(4,3):(0,0)", "1:0"),
    ("(1,1):(3,5)", "1:0"),
    ("((2,1),(1,3)):((4,9),(7,8))", "6:4"),
    ("((2,1),(1,3)):((4,9),(7,9))", "(2,3):(4,9)"),
]


@pytest.mark.parametrize("a,expected", KNOWN_FILTER)
def test_filter_known(a, expected):
    assert str(filter(P(a))) == expected


def test_filter_zeros_known():
    assert str(filter_zeros(P("(4,2,3):(1,0,4)"))) == "(4,1,3):(1,0,4)"
    assert str(filter_zeros(P("((4,2),3):((0,1),0)"))) == "((1,2),1):((0,1),0)"


@settings(max_examples=300, deadline=None)
@given(S.layouts(max_size=256, kind="zero"))
def test_filter_property(a):
    """filter removes stride-0 and size-1 modes: same image as a set, coalesced, no zero strides
    (but for the empty result 1:0), size = product of the non-zero-stride modes."""
    f = filter(a)
    assert set(f.offsets()) == set(a.offsets())
    fs = S.it.flatten_to_tuple(f.shape)
    fd = S.it.flatten_to_tuple(f.stride)
    if f != P("1:0"):
        assert all(d != 0 for d in fd) and all(s != 1 for s in fs)
    nz = [s for s, d in zip(S.it.flatten_to_tuple(a.shape), S.it.flatten_to_tuple(a.stride)) if d != 0]
    expected = 1
    for s in nz:
        expected *= s
    assert size(f) == expected
    assert f == coalesce(filter_zeros(a))


@settings(max_examples=200, deadline=None)
@given(S.layouts(max_size=256, kind="zero"))
def test_filter_zeros_property(a):
    z = filter_zeros(a)
    assert z.stride == a.stride
    for s, sz, d in zip(S.it.flatten_to_tuple(a.shape), S.it.flatten_to_tuple(z.shape), S.it.flatten_to_tuple(a.stride)):
        assert sz == (1 if d == 0 else s)
    assert set(z.offsets()) == set(a.offsets())
