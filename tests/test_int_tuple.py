"""Hierarchical integer tuples (cutelab.int_tuple): CuTe's answers and properties."""

import pytest
from hypothesis import given, settings, strategies as st

import strategies as S
from cutelab import LayoutError
from cutelab import int_tuple as it

CASES = [
    (it.rank, ((2, (3, 4)),), 2),
    (it.rank, (5,), 1),
    (it.depth, (5,), 0),
    (it.depth, ((2, (3, (4,))),), 3),
    (it.product, ((2, (3, 4)),), 24),
    (it.product, ((),), 1),
    (it.flatten, ((2, (3, (4, 5))),), (2, 3, 4, 5)),
    (it.flatten, (7,), 7),
    (it.product_each, (((2, 3), 4),), (6, 4)),
    (it.prefix_product, ((2, (3, 4)),), (1, (2, 6))),
    (it.shape_div, ((6, 2), 2), (3, 2)),
    (it.shape_div, ((6, 2), 12), (1, 1)),
    (it.shape_div, ((3, 6, 2, 8), 9), (1, 2, 2, 8)),
    (it.shape_div, ((3, 6, 2, 8), 72), (1, 1, 1, 4)),
    (it.shape_div, (3, 6), 1),
    (it.ceil_div, ((3, 4), 2), (2, 4)),
    (it.ceil_div, ((3, 4), 8), (1, 2)),
    (it.ceil_div, (7, 2), 4),
    (it.ceil_div, ((4, 6), (2, 4)), (2, 2)),
    (it.compact_col_major, ((2, (3, 4)),), (1, (2, 6))),
    (it.compact_col_major, ((1, 16),), (0, 1)),
    (it.compact_row_major, ((2, 3, 4),), (12, 4, 1)),
    (it.crd2idx, ((1, 2), (4, 8)), 9),
    (it.crd2idx, (9, (4, 8), (8, 1)), 9 % 4 * 8 + 9 // 4),
    (it.idx2crd, (9, (4, 8)), (1, 2)),
    (it.idx2crd, (13, ((2, 3), 4)), ((1, 0), 2)),
    (it.congruent, ((2, (3, 4)), (1, (5, 6))), True),
    (it.congruent, ((2, (3, 4)), (1, 5)), False),
    (it.compatible, (24, (2, (3, 4))), True),
    (it.compatible, ((6, 4), ((2, 3), 4)), True),
    (it.compatible, ((6, 4), (2, 3, 4)), False),
    (it.unflatten, ((1, 2, 3), ((0, 0), 0)), ((1, 2), 3)),
    (it.tuple_str, ((2, (3, None)),), "(2,(3,_))"),
    (it.elem_scale, ((2, 3), ((2, 2), 4)), (8, 12)),
]


@pytest.mark.parametrize("f,args,expected", CASES, ids=lambda x: getattr(x, "__name__", None))
def test_cases(f, args, expected):
    assert f(*args) == expected


def test_errors():
    with pytest.raises(LayoutError, match=r"shape_div\(3, 2\): neither divides"):
        it.shape_div(3, 2)
    with pytest.raises(LayoutError, match=r"shape_div\(4, 0\): division by zero"):
        it.shape_div(4, 0)
    with pytest.raises(LayoutError, match=r"unflatten\(\(1,2\), \(\(0,0\),0\)\): too few"):
        it.unflatten((1, 2), ((0, 0), 0))
    with pytest.raises(LayoutError, match=r"crd2idx: coordinate \(1,2,3\) does not match"):
        it.crd2idx((1, 2, 3), (4, 8))


@settings(max_examples=200, deadline=None)
@given(S.layouts())
def test_properties(L):
    shp = L.shape
    n = it.product(shp)
    assert it.product(it.flatten(shp)) == n
    assert it.unflatten(it.flatten(shp), shp) == shp if isinstance(shp, tuple) else True
    assert it.congruent(shp, it.prefix_product(shp))
    assert it.compatible(n, shp)
    for i in range(min(n, 50)):
        c = it.idx2crd(i, shp)
        assert it.congruent(c, shp)
        assert it.crd2idx(c, shp) == i
        assert it.crd2idx(i, shp, L.stride) == it.crd2idx(c, shp, L.stride)
