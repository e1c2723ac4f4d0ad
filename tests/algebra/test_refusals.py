"""Inputs outside an operation's domain are refused with a LayoutError naming the operation, its
operands and the failed condition (issue 23: wrong answers and raw Python errors a fuzzer found)."""

from __future__ import annotations

import pytest

import cutelab as cute
from cutelab import Layout, LayoutError
from cutelab.algebra import upcast, downcast
from cutelab.layout import dice, get_hier_coord, shape_div

P = Layout.parse


@pytest.mark.parametrize("block,target,words", [
    ("(2,2):(1,2)", (3, 3), "mode 0 is 3, not a multiple of 2"),   # gave 16 elements for 9
    ("4:1", (5,), "mode 0 is 5, not a multiple of 4"),             # gave 8
    ("(4,8):(8,1)", (8, 12), "mode 1 is 12, not a multiple of 8"),
])
def test_tile_to_shape_refuses_a_target_the_block_does_not_divide(block, target, words):
    with pytest.raises(LayoutError, match=r"tile_to_shape\(.*does not divide the target shape") as e:
        cute.tile_to_shape(P(block), target)
    assert words in str(e.value)


def test_tile_to_shape_still_tiles_divisible_targets():
    assert str(cute.tile_to_shape(P("(2,2):(1,2)"), (4, 6))) == "((2,2),(2,3)):((1,4),(2,8))"
    r = cute.tile_to_shape(P("(2,2):(1,2)"), (4, 6), (1, 0))
    assert cute.size(r) == 24 and len(set(r.offsets().tolist())) == 24


def test_make_ordered_layout_refuses_an_order_that_is_not_a_permutation():
    with pytest.raises(LayoutError, match=r"make_ordered_layout\(\(2,4\), \(5,5\)\): order must be a permutation"):
        cute.make_ordered_layout((2, 4), (5, 5))  # gave (2,4):(1,1)
    assert str(cute.make_ordered_layout((2, 2, 2, 2), (0, 2, 3, 1))) == "(2,2,2,2):(1,4,8,2)"
    assert str(cute.make_ordered_layout((2, 4), (5, 7))) == "(2,4):(1,2)"  # distinct ranks need not be 0..n-1
    assert cute.make_ordered_layout((1, 4), (0, 0)).shape == (1, 4)  # a size-1 mode has no stride to share


def test_logical_product_refuses_a_non_injective_result_as_complement_does():
    with pytest.raises(LayoutError, match="no complement exists"):
        cute.complement(P("(2,2):(2,6)"), 12)
    with pytest.raises(LayoutError, match=r"logical_product\(\(2,2\):\(2,6\), 2:2\): the result .* is not injective "
                                          r"\(8 indices onto 6 offsets\).*no complement exists"):
        cute.logical_product(P("(2,2):(2,6)"), P("2:2"))
    with pytest.raises(LayoutError, match="not injective"):
        cute.blocked_product(P("(2,2):(2,6)"), P("(1,2):(1,2)"))


@pytest.mark.parametrize("block,tiler", [("((4,6)):((1,6))", "(3):(1)"), ("(2,2):(2,6)", "2:1"), ("(2,12):(16,1)", "2:1")])
def test_logical_product_still_answers_where_the_copies_do_not_overlap(block, tiler):
    r = cute.logical_product(P(block), P(tiler))
    offs = r.offsets().tolist()
    assert len(set(offs)) == len(offs)


@pytest.mark.parametrize("call,words", [
    (lambda: upcast(P("7:1"), 0), r"upcast\(7:1, 0\): the factor must be a positive int, got 0"),
    (lambda: downcast(P("7:1"), -2), r"downcast\(7:1, -2\): the factor must be a positive int"),
    (lambda: dice("4", 0), r"dice\('4', 0\): expected a Layout"),  # an int tuple is diced (CuTe DSL: (4,))
    (lambda: dice(P("(2,3):(1,2)"), (1, (None, 2))), r"\(2,3\):\(1,2\): coordinate \(1,\(_,2\)\) does not match its shape"),
    (lambda: get_hier_coord((7,), 1), r"get_hier_coord\(\(7,\), 1\): expected a Layout"),
    (lambda: cute.tile_to_shape(P("8:1"), "4"), r"tile_to_shape\(8:1, 4\): the target shape must be positive ints"),
    (lambda: shape_div(None, 7), r"shape_div\(_, 7\): the first shape has the entry None"),
    (lambda: shape_div((4, 2), "2"), r"the second shape has the entry '2'"),
])
def test_raw_python_errors_are_layout_errors(call, words):
    with pytest.raises(LayoutError, match=words):
        call()


def test_dice_of_an_int_tuple_as_cute_dsl():  # CuTe DSL 4.8.1 prints (4,) and (4, 6)
    assert dice((4,), 0) == (4,) and dice((4, 5, 6), (1, None, 1)) == (4, 6)


def test_dice_of_a_one_tuple_on_a_rank_one_layout_is_like_slice():
    assert dice(P("6:1"), (1,)) == P("6:1")
    assert dice(P("6:1"), (None,)) == dice(P("6:1"), None)
    assert str(dice(P("(2,3):(1,2)"), (1, None))) == "(2):(1)"


def test_what_the_fuzz_harness_found_is_refused_cleanly():
    # tests/fuzz found these raw TypeErrors ('int' object is not iterable, '<' between None and None)
    with pytest.raises(LayoutError, match=r"tile_to_shape\(\(1\):\(1\), 1\)"):
        cute.tile_to_shape(P("(1):(1)"), 1)
    assert str(cute.tile_to_shape(P("(2):(1)"), (4,))) == "((2,2)):((1,2))"
    with pytest.raises(LayoutError, match=r"make_ordered_layout\(\(\), None\): order must be ints"):
        cute.make_ordered_layout((), None)
