"""coalesce: CuTe's answers, CUTLASS's cases, properties (same function, same size, depth <= 1)."""

import pytest
from hypothesis import given, settings, strategies as st

import strategies as S
from cutelab import Layout, coalesce, depth, size

P = Layout.parse

KNOWN = [
    # CuTe docs (02_layout_algebra.md, core_ops.rst)
    ("(2,(1,6)):(1,(6,2))", None, "12:1"),
    ("(2,(1,6)):(1,(6,2))", (1, 1), "(2,6):(1,2)"),
    ("(3,(4,5)):(8,(1,4))", (1, 1), "(3,20):(8,1)"),
    # branches of CuTe's bw_coalesce
    ("1:0", None, "1:0"),
    ("1:1", None, "1:0"),
    ("(1,1):(5,7)", None, "1:0"),
    ("(4):(1)", None, "4:1"),
    ("(2,4):(1,2)", None, "8:1"),
    ("(2,4):(4,1)", None, "(2,4):(4,1)"),
    ("(2,1,6):(1,6,2)", None, "12:1"),
    ("(2,1,6):(4,7,8)", None, "12:4"),
    ("(2,1,6):(4,7,9)", None, "(2,6):(4,9)"),
    ("(2,1,3):(2,0,4)", None, "6:2"),
    ("(2,1,3):(2,0,5)", None, "(2,3):(2,5)"),
    ("((2,2),(2,2)):((1,4),(8,32))", None, "(2,4,2):(1,4,32)"),
    ("((4,2),(3,2)):((1,4),(8,24))", None, "48:1"),
    ("(4,3):(0,0)", None, "12:0"),
    ("(4,3):(0,1)", None, "(4,3):(0,1)"),
]

CUTLASS = [
    ('1:0',),
    ('1:1',),
    ('(2,4):(1,2)',),
    ('(2,4,6):(1,2,8)',),
    ('(2,1,6):(1,6,2)',),
    ('(2,1,6):(1,7,2)',),
    ('(2,1,6):(4,7,8)',),
    ('(2,1,3):(2,4,4)',),
    ('(2,1,3):(2,0,4)',),
    ('((2,2),(2,2)):((1,4),(8,32))',),
]


@pytest.mark.parametrize("a,profile,expected", KNOWN)
def test_known(a, profile, expected):
    assert str(coalesce(P(a), profile) if profile else coalesce(P(a))) == expected


def check(a, c):
    assert depth(c) <= 1
    assert size(c) == size(a)
    for i in range(size(a)):
        assert c(i) == a(i)


@pytest.mark.parametrize("case", CUTLASS, ids=str)
def test_cutlass_cases(case):
    a = P(case[0])
    check(a, coalesce(a))


@settings(max_examples=300, deadline=None)
@given(S.layouts())
def test_property(a):
    check(a, coalesce(a))


@settings(max_examples=200, deadline=None)
@given(S.layouts())
def test_property_idempotent_and_minimal(a):
    c = coalesce(a)
    assert coalesce(c) == c
    if isinstance(c.shape, tuple):  # no mergeable neighbours, no size-1 modes left
        for (s0, d0), (s1, d1) in zip(zip(c.shape, c.stride), zip(c.shape[1:], c.stride[1:])):
            assert s0 * d0 != d1
        assert all(s != 1 for s in c.shape)


@settings(max_examples=200, deadline=None)
@given(S.layouts(min_len=2), st.data())
def test_property_by_mode(a, data):
    """With a target profile of rank r, mode i of the result is coalesce(mode i) for i < r."""
    if not isinstance(a.shape, tuple):
        return
    r = data.draw(st.integers(1, len(a.shape)))
    c = coalesce(a, (1,) * r)
    assert len(c.shape) == len(a.shape)
    for i in range(len(a.shape)):
        mode = Layout(a.shape[i], a.stride[i])
        got = Layout(c.shape[i], c.stride[i])
        assert got == (coalesce(mode) if i < r else mode)
