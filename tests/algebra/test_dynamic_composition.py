"""composition over dynamic modes: CuTe's fold, static where both operands are static (CuTe DSL keeps one
result mode per dynamic left mode, since it cannot simplify them); the values stay checked."""
import pytest

import cutelab as cute
from cutelab.dynamic import DynInt, value_of
from cutelab.errors import LayoutError


def _eval(layout, n):
    return [value_of(layout)(i) for i in range(n)]


@pytest.mark.parametrize("a,rhs,text", [
    (8, "16:2", "(?,?,?):(2,?,?{div=4})"),
    (8, "1:3", "1:?{div=4}"),
    (8, "3:0", "3:0"),
    (6, "2:2", "(?,?,?):(2,?,?{div=4})"),
])
def test_keeps_dynamic_modes(a, rhs, text):
    L = cute.make_layout((DynInt(a * 8), 4, 2))
    R = cute.composition(L, cute.Layout.parse(rhs))
    assert str(R) == text
    r = cute.Layout.parse(rhs)
    n = cute.size(r)
    # the same function as lhs(rhs(i)), with the known values
    assert _eval(R, n) == [value_of(L)(r(i)) for i in range(n)]


def test_static_operands_still_simplify():
    assert str(cute.composition(cute.make_layout((10, 2), stride=(16, 4)), cute.make_layout((5, 4), stride=(1, 5)))) \
        == "(5,(2,2)):(16,(80,4))"


def test_dynamic_one_is_kept():
    L = cute.make_layout((DynInt(10), DynInt(2)), stride=(DynInt(16), DynInt(4)))
    R = cute.composition(L, cute.make_layout((DynInt(5), DynInt(4)), stride=(DynInt(1), DynInt(5))))
    assert str(value_of(R)) == "((5,1),(2,2)):((16,4),(80,4))"  # as CuTe DSL's printf shows it at run time


def test_values_that_break_divisibility_are_refused():
    # CuTe DSL checks divisibility only when static: for these values its result, (3,1):(2,6), has the wrong size
    L = cute.make_layout((DynInt(6), DynInt(4)))
    with pytest.raises(LayoutError, match=r"composition\(\(\?,\?\):\(1,\?\), 4:2\): shape divisibility fails .* \(4 % 3 != 0\) "
                                          r"\(the dynamic values, printed .\?., are \(6,4\):\(1,6\), 4:2\)"):
        cute.composition(L, cute.make_layout(4, stride=2))
