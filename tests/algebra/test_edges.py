"""Algebra inputs outside what CuTe's algorithms cover: refused with a message, never a wrong answer."""

import pytest

import cutelab as cute
from cutelab import Layout, LayoutError

P = Layout.parse


@pytest.mark.parametrize("b", ["(16,2,16,4):(24,-2,0,-1024)", "4:-1", "(4,2):(2,-1)", "(2,2):(1,-2)"])
def test_composition_refuses_negative_strides_into_a_multimode_lhs(b):
    A = P("(2,2,(12,2,16)):(32,1,(64,768,2))")
    with pytest.raises(LayoutError, match=r"composition\(.*negative stride .* negative offsets"):
        cute.composition(A, P(b))


@pytest.mark.parametrize("a,b", [("16:2", "4:-1"), ("(4,4):(1,4)", "(2,2):(-1,4)"), ("(4):(-1)", "(4):(-1)")])
def test_composition_with_negative_strides_into_one_mode_is_linear(a, b):
    A, B = P(a), P(b)
    R = cute.composition(A, B)
    C = cute.coalesce(A)
    assert cute.rank(C) == 1
    d = C.stride[0] if isinstance(C.stride, tuple) else C.stride
    for i in range(B.size()):
        assert R(i) == B(i) * d  # the single mode of A extends linearly to negative offsets


def test_complement_refuses_where_cute_breaks_its_postcondition():
    # CuTe (and CuTe DSL) answer 3:32, which leaves offsets 12..15, 28..31, ... uncovered
    with pytest.raises(LayoutError, match=r"complement\(\(2,12\):\(16,1\), 96\): no complement exists.*size 3"):
        cute.complement(P("(2,12):(16,1)"), 96)
    # the same layout has a complement up to its own cosize (CuTe's postcondition holds there)
    assert str(cute.complement(P("(2,12):(16,1)"))) == "1:0"
    assert str(cute.complement(P("(4,6):(1,6)"))) == "1:0"  # CUTLASS's own unit test


@pytest.mark.parametrize("layout,cot", [("(2,3):(2,4)", 24), ("4:2", 8), ("(2,2):(1,6)", 24), ("(4,6):(1,6)", 48),
                                        ("3:2", 12), ("(2,4):(1,8)", 64)])
def test_complement_postcondition_holds_when_answered(layout, cot):
    A = P(layout)
    R = cute.complement(A, cot)
    assert R.size() >= cot // cute.filter(A).size()
    offs = R.offsets().tolist()
    assert all(x < y for x, y in zip(offs, offs[1:]))
    assert not set(offs[1:]) & set(A.offsets().tolist())


@pytest.mark.parametrize("op,a,b", [("raked_product", "4:1", "(64):(1)"), ("blocked_product", "(8):(1)", "32:1"),
                                    ("raked_product", "5:2", "(4):(1)")])
def test_products_of_a_scalar_and_a_one_tuple_say_why(op, a, b):
    # CuTe DSL 4.8.1 rejects these ("unable to compute product"); see tests/golden/*_product.json
    with pytest.raises(LayoutError, match="one is a 1-tuple and the other a scalar"):
        getattr(cute, op)(a, b)


@pytest.mark.parametrize("op,a,b,want", [
    ("blocked_product", "4:1", "(64):(1)", "((4,(64))):((1,(4)))"),
    ("raked_product", "(8):(1)", "32:1", "((32,8)):((8,1))"),
    ("blocked_product", "(2):(1)", "(3):(1)", "((2,3)):((1,2))"),
    ("raked_product", "(2):(1)", "(3):(1)", "((3,2)):((2,1))"),
])
def test_products_of_rank_one_operands_match_the_dsl(op, a, b, want):
    assert str(getattr(cute, op)(a, b)) == want
