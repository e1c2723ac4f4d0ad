"""Bad inputs: each raises LayoutError (or ParseError) naming the operation, the operands and
the condition that failed."""

import pytest

import cutelab as cute
from cutelab import Layout, LayoutError, ParseError

P = Layout.parse

PARSE = [
    ("(2,3:(1,2)", r"cannot parse layout '\(2,3:\(1,2\)': expected ',' or '\)' at position 4"),
    ("(2,3):(1,2", r"cannot parse layout '\(2,3\):\(1,2': missing '\)' at position 10"),
    ("2:", r"cannot parse layout '2:': missing stride after ':'"),
    ("(a,b):(1,2)", r"cannot parse layout '\(a,b\):\(1,2\)': expected an integer or '\(' but found 'a' at position 1"),
    ("", r"cannot parse layout '': empty text"),
    ("   ", r"cannot parse layout '   ': empty text"),
    ("(2,3):(1,2))", r"cannot parse layout .*unexpected '\)'"),
    ("4:1@x", r"cannot parse layout '4:1@x': expected a mode number after '@'"),
    ("(2,3):(1,(2,3))", r"cannot parse layout .*make_layout\(\(2,3\), stride=\(1,\(2,3\)\)\): shape 3 and stride \(2,3\) are not congruent"),
    ("(2,0):(1,2)", r"cannot parse layout .*make_layout\(\(2,0\), stride=\(1,2\)\): shape entries must be positive, got 0"),
]


@pytest.mark.parametrize("text,match", PARSE)
def test_parse(text, match):
    with pytest.raises(ParseError, match=match):
        P(text)


def test_parse_wrong_type():
    with pytest.raises(ParseError, match="parse_layout: expected a string, got int"):
        P(5)


MAKE = [
    (((2, -3),), {}, r"make_layout\(\(2,-3\)\): shape entries must be positive, got -3"),
    (((2, 0),), {}, r"make_layout\(\(2,0\)\): shape entries must be positive, got 0"),
    (((2, 3),), {"stride": (1,)}, r"make_layout\(\(2,3\), stride=\(1\)\): shape \(2,3\) and stride \(1\) are not congruent"),
    (((2, (3, 4)),), {"stride": (1, 2)}, r"make_layout\(\(2,\(3,4\)\), stride=\(1,2\)\): shape \(3,4\) and stride 2 are not congruent"),
    ((4,), {"stride": (1, 2)}, r"make_layout\(4, stride=\(1,2\)\): shape 4 and stride \(1,2\) are not congruent"),
    ((2 ** 63,), {}, r"make_layout\(9223372036854775808\): shape entry 9223372036854775808 does not fit in 64 bits"),
    ((4,), {"stride": 2 ** 63}, r"make_layout\(4, stride=9223372036854775808\): stride entry .* does not fit in 64 bits"),
    ((4,), {"stride": -(2 ** 63)}, r"stride entry -9223372036854775808 does not fit in 64 bits"),
    (((2 ** 32, 2 ** 32),), {}, r"make_layout: size of shape \(4294967296,4294967296\) does not fit in 64 bits"),
    (("4",), {}, r"make_layout: shape is a string '4'; use Layout.parse"),
    (((4.0, 2),), {}, r"make_layout\(\(4.0,2\)\): shape entries must be positive ints, got 4.0"),
    (((True, 2),), {}, r"make_layout\(\(True,2\)\): shape entries must be positive ints, got True"),
    (((4, 2),), {"stride": (1, "2")}, r"make_layout\(\(4,2\), stride=\(1,2\)\): stride entries must be ints, got '2'"),
    (((4, 2),), {"stride": (1, 2.0)}, r"stride entries must be ints, got 2.0"),
    (((4, None),), {}, r"shape entries must be positive ints, got None"),
]


@pytest.mark.parametrize("args,kw,match", MAKE)
def test_make_layout(args, kw, match):
    with pytest.raises(LayoutError, match=match):
        cute.make_layout(*args, **kw)


ALGEBRA = [
    # composition: shape divisibility, stride divisibility (CuTe's check and the one it misses)
    (cute.composition, ("(4,3):(3,1)", "5:2"),
     r"composition\(\(4,3\):\(3,1\), 5:2\): shape divisibility fails at mode 0 .*\(5 % 2 != 0\)"),
    (cute.composition, ("(4,3):(3,1)", "2:6"),
     r"composition\(\(4,3\):\(3,1\), 2:6\): stride divisibility fails at mode 0 .*\(6 % 4 != 0\)"),
    (cute.composition, ("(3,4):(4,1)", "4:2"),
     r"composition\(\(3,4\):\(4,1\), 4:2\): stride divisibility fails at mode 0 .*\(3 % 2 != 0\) and the right operand continues past the mode"),
    (cute.composition, ("(4,8):(1,4)", (2, 2, 2)),
     r"composition\(\(4,8\):\(1,4\), \(2,2,2\)\): too many tiler modes: the tiler \(2,2,2\) has 3 modes but the layout \(4,8\):\(1,4\) has only 2"),
    (cute.composition, ("4:1", 2.5), r"composition\(4:1, 2.5\): the right operand must be a Layout, an int, None or a tuple"),
    (cute.composition, ("4:1", 0), r"composition\(4:1, 0\): a tiler size must be positive, got 0"),
    # complement: non-injective layouts, bad cotargets, negative strides
    (cute.complement, ("(2,2):(1,1)",), r"complement\(\(2,2\):\(1,1\)\): .*not injective"),
    (cute.complement, ("(4,2):(1,3)",), r"complement\(\(4,2\):\(1,3\)\): .*stride 3 starts inside the span 4"),
    (cute.complement, ("4:1", 0), r"complement\(4:1, 0\): the cotarget must be a positive int or a shape, got 0"),
    (cute.complement, ("4:-1",), r"complement\(4:-1\): complement needs non-negative strides, but the layout has stride -1"),
    # inverses
    (cute.left_inverse, ("(2,2):(2,3)",), r"left_inverse\(\(2,2\):\(2,3\)\): left inverse divisibility fails: stride 3 .*\(3 % 2 != 0\)"),
    # too many tiler modes
    (cute.logical_divide, ("(4,8):(1,4)", (2, 2, 2)), r"logical_divide\(\(4,8\):\(1,4\), \(2,2,2\)\): too many tiler modes"),
    (cute.zipped_divide, ("(4,8):(1,4)", (2, 2, 2)), r"zipped_divide\(\(4,8\):\(1,4\), \(2,2,2\)\): too many tiler modes"),
    (cute.logical_product, ("(4,8):(1,4)", (2, 2, 2)), r"logical_product\(\(4,8\):\(1,4\), \(2,2,2\)\): too many tiler modes"),
    (cute.logical_divide, ("8:1", 0), r"logical_divide\(8:1, 0\): a tile size must be positive, got 0"),
    (cute.logical_divide, ("8:1", 2.0), r"logical_divide\(8:1, 2.0\): the tiler must be a Layout, an int, None or a tuple"),
    # wrong types
    (cute.coalesce, (3,), r"coalesce\(3\): the layout must be a Layout, got int 3"),
    (cute.right_inverse, ((4, 2),), r"right_inverse\(\(4,2\)\): the layout must be a Layout, got tuple"),
    (cute.recast_layout, (0, 8, "4:1"), r"recast_layout\(0, 8, 4:1\): type widths must be positive ints \(bits\), got 0"),
    (cute.recast_layout, (16.0, 8, "4:1"), r"recast_layout\(16.0, 8, 4:1\): type widths must be positive ints"),
    (cute.tile_to_shape, ("(2,2,2):(1,2,4)", (4, 4)), r"tile_to_shape\(\(2,2,2\):\(1,2,4\), \(4,4\)\): the block has rank 3, more than the target shape's rank 2"),
]


def _arg(x):
    return P(x) if isinstance(x, str) and ":" in x else x


@pytest.mark.parametrize("op,args,match", ALGEBRA, ids=lambda x: getattr(x, "__name__", None))
def test_algebra(op, args, match):
    with pytest.raises(LayoutError, match=match):
        op(*(_arg(a) for a in args))


def test_evaluation():
    with pytest.raises(LayoutError, match=r"evaluating 4:1 at 4: index 4 is out of range \[0, 4\)"):
        P("4:1")(4)
    with pytest.raises(LayoutError, match=r"evaluating 4:1 at -1: index -1 is out of range"):
        P("4:1")(-1)
    with pytest.raises(LayoutError, match=r"evaluating \(4,2\):\(1,4\) at \(1,2,3\): the coordinate does not match the shape \(4,2\)"):
        P("(4,2):(1,4)")((1, 2, 3))
    with pytest.raises(LayoutError, match=r"evaluating \(4,2\):\(1,4\) at \(1,2\): .*out of range"):
        P("(4,2):(1,4)")((1, 2))
    with pytest.raises(LayoutError, match=r"slice of \(4,8\):\(1,4\): coordinate \(_,8\) does not match"):
        P("(4,8):(1,4)")[(None, 8)]


def test_queries():
    with pytest.raises(LayoutError, match=r"size: mode 2 is out of range for \(4,8\):\(1,4\) of rank 2"):
        cute.size(P("(4,8):(1,4)"), mode=[2])
    with pytest.raises(LayoutError, match=r"group_modes\(\(4,8\):\(1,4\), 1, 3\): range out of bounds for rank 2"):
        cute.group_modes(P("(4,8):(1,4)"), 1, 3)
    with pytest.raises(LayoutError, match=r"get_hier_coord\(4:2, 3\): no coordinate of the layout maps to offset 3"):
        P("4:2").get_hier_coord(3)


def test_errors_are_value_errors():
    """LayoutError subclasses ValueError, so generic handlers still catch it."""
    with pytest.raises(ValueError):
        cute.make_layout((0,))
