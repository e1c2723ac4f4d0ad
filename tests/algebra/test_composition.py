"""composition: case table (CuTe's answers), CUTLASS's cases checked by evaluation, properties."""

import pytest
from hypothesis import given, settings, strategies as st

import strategies as S
from cutelab import Layout, LayoutError, compatible, composition, size

P = Layout.parse

# Known CuTe answers: CuTe docs (media/docs/cpp/cute/02_layout_algebra.md and the CuTe dialect
# docs, cute_concepts/02_layout_algebra/core_ops.rst).
KNOWN = [
    ("(6,2):(8,2)", "(4,3):(3,1)", "((2,2),3):((24,2),8)"),
    ("20:2", "(5,4):(4,1)", "(5,4):(8,2)"),
    ("(10,2):(16,4)", "(5,4):(1,5)", "(5,(2,2)):(16,(80,4))"),
    ("(10,2):(16,4)", "5:1", "5:16"),
    ("(10,2):(16,4)", "4:5", "(2,2):(80,4)"),
    ("20:2", "5:4", "5:8"),
    ("(2,(1,6)):(1,(6,2))", "12:1", "12:1"),
]

# Tilers (by-mode composition): (layout, tiler, expected)
KNOWN_TILER = [
    ("(12,(4,8)):(59,(13,1))", (P("3:4"), P("8:2")), "(3,(2,4)):(236,(26,1))"),
    ("(12,(4,8)):(59,(13,1))", (3, 8), "(3,(4,2)):(59,(13,1))"),
    ("(4,8):(1,4)", (2, 4), "(2,4):(1,4)"),
    ("(6,4):(4,1)", (P("(2):(1)"), P("(2):(1)")), "((2),(2)):((4),(1))"),
    ("(6,4):(4,1)", (None, 2), "(6,2):(4,1)"),
    ("(6,4,5):(4,1,24)", (3,), "(3):(4)"),  # modes past the tiler are dropped
]

# test/unit/cute/core/composition.cpp: every (A, B) of TEST(CuTe_core, Composition) that has no
# swizzle or basis stride; CuTe checks compatible(B, R) and R(i) == A(B(i)).
CUTLASS = [
    ('1:0', '1:0'),
    ('1:0', '1:1'),
    ('1:1', '1:0'),
    ('1:1', '1:1'),
    ('(4):(1)', '(4):(1)'),
    ('(4):(2)', '(4):(1)'),
    ('(4):(0)', '(4):(1)'),
    ('(4):(1)', '(4):(0)'),
    ('(4):(1)', '(1):(0)'),
    ('(4):(1)', '(2):(1)'),
    ('(4):(2)', '(2):(1)'),
    ('(4):(1)', '(2):(2)'),
    ('(4):(2)', '(2):(2)'),
    ('(4,3):(1,4)', '(12):(1)'),
    ('(12):(1)', '(4,3):(1,4)'),
    ('(12):(2)', '(4,3):(1,4)'),
    ('(12):(1)', '(4,3):(3,1)'),
    ('(12):(2)', '(4,3):(3,1)'),
    ('(12):(1)', '(2,3):(2,4)'),
    ('(4,3):(1,4)', '(4,3):(1,4)'),
    ('(4,3):(1,4)', '(6):(1)'),
    ('(4,3):(1,4)', '(6):(2)'),
    ('(4,3):(1,4)', '(6,2):(2,1)'),
    ('(4,3):(1,4)', '(4,3):(3,1)'),
    ('(4,3):(3,1)', '(4,3):(1,4)'),
    ('(4,3):(3,1)', '(12):(1)'),
    ('(4,3):(3,1)', '(6):(2)'),
    ('(4,3):(3,1)', '(6,2):(2,1)'),
    ('(8,8):(1,8)', '((2,2,2),(2,2,2)):((1,16,4),(8,2,32))'),
    ('(8,8):(8,1)', '((2,2,2),(2,2,2)):((1,16,4),(8,2,32))'),
    ('((4,2)):((1,16))', '(4,2):(2,1)'),
    ('(2,2):(2,1)', '(2,2):(2,1)'),
    ('(4,8,2):(1,4,32)', '(2,2,2):(2,8,1)'),
    ('(4,8,2):(2,8,1)', '(2,2,2):(1,8,2)'),
    ('(4,8,2):(2,8,1)', '(4,2,2):(2,8,1)'),
    ('12:1', '4:1'),
    ('(12,3):(1,24)', '(4):(1)'),
    ('16:2', '4:2'),
    ('(128,24,5):(1,128,3072)', '64:2'),
    ('(128,24,5):(1,128,3072)', '480:32'),
    ('(1):(0)', '(4):(1)'),
    ('(1):(1)', '(4):(1)'),
    ('(4):(1)', '(4):(2)'),
    ('(4,3):(3,1)', '(24):(1)'),
    ('(4,3):(3,1)', '(8):(1)'),
    ('(4,3,1):(3,1,0)', '(24):(1)'),
    ('(4,3,1):(3,1,0)', '(4):(1)'),
    ('(4,6,8):(1,4,7)', '6:1'),
    ('(4,6,8,10):(2,3,5,7)', '6:12'),
    ('(8,8):(8,1)', '2:3'),
    ('(8,8):(8,1)', '3:3'),
    ('3:1', '4:1'),
    ('(48,24,5):(1,128,3072)', '32:1'),
]


@pytest.mark.parametrize("a,b,expected", KNOWN)
def test_known(a, b, expected):
    assert str(composition(P(a), P(b))) == expected


@pytest.mark.parametrize("a,tiler,expected", KNOWN_TILER)
def test_known_tiler(a, tiler, expected):
    assert str(composition(P(a), tiler)) == expected


def check_postconditions(a, b, r):
    assert compatible(b.shape, r.shape), (a, b, r)
    for i in range(size(b)):
        assert S.ext_eval(r, i) == S.ext_eval(a, S.ext_eval(b, i)), (str(a), str(b), str(r), i)


@pytest.mark.parametrize("a,b", CUTLASS)
def test_cutlass_cases(a, b):
    a, b = P(a), P(b)
    check_postconditions(a, b, composition(a, b))


def test_tiler_is_by_mode():
    a = P("(12,(4,8)):(59,(13,1))")
    tiler = (P("3:4"), P("8:2"))
    r = composition(a, tiler)
    assert r.shape[0] == composition(Layout(a.shape[0], a.stride[0]), tiler[0]).shape
    assert str(Layout(r.shape[1], r.stride[1])) == str(composition(Layout(a.shape[1], a.stride[1]), tiler[1]))


def test_too_many_tiler_modes():
    with pytest.raises(LayoutError, match=r"composition\(\(4,8\):\(1,4\), \(2,2,2\)\).*3 modes.*only 2"):
        composition(P("(4,8):(1,4)"), (2, 2, 2))


@settings(max_examples=300, deadline=None)
@given(S.composable_pairs())
def test_property_admissible(ab):
    a, b = ab
    check_postconditions(a, b, composition(a, b))


@settings(max_examples=300, deadline=None)
@given(S.layouts(max_size=256), st.integers(1, 16), st.integers(0, 16))
def test_property_never_quietly_wrong(a, n, d):
    """Any A and a rank-1 B = n:d inside A's domain: a LayoutError (inadmissible) or a correct result.

    (Past the end of A, CuTe extends A's last mode; that case is covered by the admissible pairs.
    For a B of several modes CuTe composes mode by mode and assumes A is additive over B's modes;
    like CuTe, cutelab does not check that.)
    """
    b = Layout(n, d)
    if min(S.image(b)) < 0 or max(S.image(b)) >= size(a):
        b = composition(Layout(size(a)), Layout(1))  # 1:0, trivially inside
    try:
        r = composition(a, b)
    except LayoutError:
        return
    check_postconditions(a, b, r)


@settings(max_examples=100, deadline=None)
@given(S.layouts(max_size=64))
def test_property_identity(a):
    """A o make_layout(size(A)) is A as a function; make_layout(cosize) o A is A."""
    r = composition(a, Layout(size(a)))
    for i in range(size(a)):
        assert r(i) == a(i)
