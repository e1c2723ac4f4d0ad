"""Layout: construction, queries, evaluation, slicing, coordinates, printing and parsing."""

import pickle

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import strategies as S
import cutelab as cute
from cutelab import Layout, LayoutError, make_layout
from cutelab.int_tuple import tuple_str

P = Layout.parse

# ---------------------------------------------------------------- construction

MAKE = [
    ((1, 16), None, "(1,16):(0,1)"),  # seeds/cute-partitions.txt: shape-1 modes get stride 0
    ((4, 8), None, "(4,8):(1,4)"),
    (4, None, "4:1"),
    ((4,), None, "(4):(1)"),
    (1, None, "1:0"),
    (((2, 2), (2, 3)), ((2, 12), (1, 4)), "((2,2),(2,3)):((2,12),(1,4))"),
    ((2, (1, 3), 4), None, "(2,(1,3),4):(1,(0,2),6)"),
    ([4, [2, 3]], [1, [4, 8]], "(4,(2,3)):(1,(4,8))"),  # lists are accepted as tuples
    ((np.int64(4), 2), None, "(4,2):(1,4)"),
]


@pytest.mark.parametrize("shape,stride,expected", MAKE)
def test_make_layout(shape, stride, expected):
    assert str(make_layout(shape, stride=stride)) == expected


def test_make_layout_concatenates_layouts():
    assert str(make_layout(P("4:2"), P("(2,3):(1,8)"))) == "(4,(2,3)):(2,(1,8))"


def test_make_ordered_layout():
    assert str(cute.make_ordered_layout((2, 2, 2, 2), (0, 2, 3, 1))) == "(2,2,2,2):(1,4,8,2)"
    assert str(cute.make_ordered_layout((2, 3, 4), (2, 0, 1))) == "(2,3,4):(12,1,3)"
    assert str(cute.make_ordered_layout((4, 8), (1, 0))) == "(4,8):(8,1)"


def test_make_identity_layout():
    L = cute.make_identity_layout((4, 8))
    assert str(L) == "(4,8):(1@0,1@1)"
    assert L(9) == (1, 2)
    assert L((3, 7)) == (3, 7)


def test_make_layout_like():
    assert str(cute.make_layout_like(P("(2,3,4):(12,0,3)"))) == "(2,3,4):(4,0,1)"
    assert str(cute.make_layout_like(P("(4,8):(8,1)"))) == "(4,8):(8,1)"
    assert str(cute.make_layout_like(P("(4,8):(100,1)"))) == "(4,8):(8,1)"


# ---------------------------------------------------------------- queries

L3 = P("((2,3),4):((1,2),6)")


def test_queries():
    assert cute.size(L3) == 24 and cute.cosize(L3) == 24
    assert cute.rank(L3) == 2 and cute.depth(L3) == 2
    assert cute.shape(L3) == ((2, 3), 4) and cute.stride(L3) == ((1, 2), 6)
    assert cute.size(L3, mode=[0]) == 6 and cute.size(L3, mode=[0, 1]) == 3
    assert cute.cosize(L3, mode=[0, 1]) == 5
    assert cute.rank(L3, mode=[0]) == 2 and cute.depth(L3, mode=[1]) == 0
    assert cute.shape(L3, mode=[0]) == (2, 3) and cute.stride(L3, mode=[0, 1]) == 2
    assert cute.rank(P("4:1")) == 1 and cute.depth(P("4:1")) == 0 and cute.depth(P("(4):(1)")) == 1
    assert cute.size((2, (3, 4))) == 24


def test_structure():
    assert str(cute.get(L3, [0, 1])) == "3:2"
    assert str(cute.get(L3, [0])) == "(2,3):(1,2)"
    assert str(cute.select(P("(2,3,4):(1,2,6)"), [2, 0])) == "(4,2):(6,1)"
    assert str(cute.group_modes(P("(4,5,6):(1,4,20)"), 0, 2)) == "((4,5),6):((1,4),20)"
    assert str(cute.group_modes(P("(4,5,6):(1,4,20)"), 1, 3)) == "(4,(5,6)):(1,(4,20))"
    assert str(cute.group_modes(P("(4,5,6):(1,4,20)"), 0, 3)) == "((4,5,6)):((1,4,20))"
    assert str(cute.append(P("(2,3):(1,2)"))) == "(2,3,1):(1,2,0)"
    assert str(cute.prepend(P("(2,3):(1,2)"), P("4:6"))) == "(4,2,3):(6,1,2)"
    assert str(cute.append(P("(2,3):(1,2)"), up_to_rank=4)) == "(2,3,1,1):(1,2,0,0)"
    assert str(cute.flatten(L3)) == "(2,3,4):(1,2,6)"
    assert str(cute.unflatten(P("(2,3,4):(1,2,6)"), ((0, 0), 0))) == str(L3)
    with pytest.raises(LayoutError, match="get: mode 2 is out of range"):
        cute.get(L3, [2])


# ---------------------------------------------------------------- evaluation and slicing

def test_evaluation():
    assert L3(5) == 5 and L3((1, 2)) == 13 and L3(((1, 1), 2)) == 15
    assert L3[((1, 1), 2)] == 15
    L = P("((2,2),(2,3)):((2,12),(1,4))")
    assert (L(1), L((1, 0)), L(((1, 0), (0, 1)))) == (2, 2, 6)


def test_slicing():
    assert str(make_layout((4, 8))[(None, 3)]) == "(4):(1)"
    assert str(L3[(None, 3)]) == "((2,3)):((1,2))"
    assert str(L3[((None, 1), None)]) == "(2,4):(1,6)"
    sub, off = cute.slice_and_offset((None, 3), make_layout((4, 8)))
    assert (str(sub), off) == ("(4):(1)", 12)
    sub, off = cute.slice_and_offset(((1, None), 2), L3)
    assert (str(sub), off) == ("(3):(2)", 13)


def test_crd2idx_idx2crd():
    assert cute.crd2idx((1, 2), (4, 8)) == 9
    assert cute.idx2crd(9, (4, 8)) == (1, 2)
    assert cute.idx2crd(13, ((2, 3), 4)) == ((1, 0), 2)
    assert cute.crd2idx(((1, 0), 2), ((2, 3), 4)) == 13
    assert cute.crd2idx((1, 2), P("(4,8):(8,1)")) == 10


# seeds/hierarchical-layouts.txt: CuTe DSL's get_hier_coord for every offset
SEED = [
    ('(2,2,2):(2,1,4)', ['(0,0,0)', '(0,1,0)', '(1,0,0)', '(1,1,0)', '(0,0,1)', '(0,1,1)', '(1,0,1)', '(1,1,1)']),
    ('((2,2),2):((2,4),1)', ['((0,0),0)', '((0,0),1)', '((1,0),0)', '((1,0),1)', '((0,1),0)', '((0,1),1)', '((1,1),0)', '((1,1),1)']),
    ('(2,(2,2)):(2,(1,4))', ['(0,(0,0))', '(0,(1,0))', '(1,(0,0))', '(1,(1,0))', '(0,(0,1))', '(0,(1,1))', '(1,(0,1))', '(1,(1,1))']),
    ('(2,(2,2)):(1,(4,2))', ['(0,(0,0))', '(1,(0,0))', '(0,(0,1))', '(1,(0,1))', '(0,(1,0))', '(1,(1,0))', '(0,(1,1))', '(1,(1,1))']),
    ('((2,2),(2,2)):((1,8),(2,4))', ['((0,0),(0,0))', '((1,0),(0,0))', '((0,0),(1,0))', '((1,0),(1,0))', '((0,0),(0,1))', '((1,0),(0,1))', '((0,0),(1,1))', '((1,0),(1,1))', '((0,1),(0,0))', '((1,1),(0,0))', '((0,1),(1,0))', '((1,1),(1,0))', '((0,1),(0,1))', '((1,1),(0,1))', '((0,1),(1,1))', '((1,1),(1,1))']),
]


@pytest.mark.parametrize("layout,coords", SEED)
def test_get_hier_coord_seed(layout, coords):
    L = P(layout)
    assert [tuple_str(L.get_hier_coord(i)) for i in range(len(coords))] == coords
    for i, c in enumerate(coords):
        assert L(cute.parse_tuple(c)) == i
        # CuTe DSL's get_flat_coord: one index per top-level mode (golden vectors)
        hier = cute.parse_tuple(c)
        assert L.get_flat_coord(i) == tuple(cute.crd2idx(x, s) for x, s in zip(hier, L.shape))


def test_get_hier_coord_unreachable():
    with pytest.raises(LayoutError, match=r"get_hier_coord\(4:2, 3\): no coordinate"):
        P("4:2").get_hier_coord(3)


@settings(max_examples=200, deadline=None)
@given(S.layouts())
def test_idx2crd_crd2idx_roundtrip(L):
    for i in range(min(cute.size(L), 64)):
        c = cute.idx2crd(i, L.shape)
        assert cute.crd2idx(c, L.shape) == i
        assert L(c) == L(i)
        flat = cute.flatten(c) if isinstance(c, tuple) else c
        if isinstance(L.shape, tuple):
            assert L(cute.unflatten(flat, L.shape)) == L(i)


@settings(max_examples=200, deadline=None)
@given(S.injective_layouts(max_size=128))
def test_get_hier_coord_inverts(L):
    for i in range(cute.size(L)):
        assert L(L.get_hier_coord(L(i))) == L(i)


# ---------------------------------------------------------------- printing and parsing

PRINT = [
    ("4:1", "4:1"),
    ("(4):(1)", "(4):(1)"),
    ("((4)):((1))", "((4)):((1))"),
    ("( 2 , 3 ) : ( 1 , 2 )", "(2,3):(1,2)"),
    ("(_4,_2):(_1,_4)", "(4,2):(1,4)"),
    ("(4,8)", "(4,8):(1,4)"),
    ("(2,-3):(1,-2)", "(2,-3):(1,-2)") if False else ("(2,3):(1,-2)", "(2,3):(1,-2)"),
]


@pytest.mark.parametrize("text,expected", PRINT)
def test_print(text, expected):
    assert str(P(text)) == expected


@settings(max_examples=300, deadline=None)
@given(S.layouts(kind="negative") | S.layouts())
def test_parse_roundtrip(L):
    s = str(L)
    assert str(P(s)) == s
    assert P(s) == L
    assert repr(L) == s  # CuTe DSL: repr(layout) == str(layout)


def test_hash_eq_immutable():
    a, b = P("(2,3):(1,2)"), make_layout((2, 3))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != P("(2,3):(3,1)") and a != P("((2,3)):((1,2))") and a != "(2,3):(1,2)"
    with pytest.raises(AttributeError):
        a.shape = (4,)
    with pytest.raises(AttributeError):
        a._stride = (1, 1)
    assert pickle.loads(pickle.dumps(a)) == a


@settings(max_examples=200, deadline=None)
@given(S.layouts(kind="negative") | S.layouts())
def test_offsets_match_evaluation(L):
    offs = L.offsets()
    assert offs.dtype == np.int64 and len(offs) == cute.size(L)
    assert offs.tolist() == [L(i) for i in range(cute.size(L))]
    assert (cute.evaluate_all(L) == offs).all()
