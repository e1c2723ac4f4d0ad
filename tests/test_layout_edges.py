"""Layout evaluation, parsing and 64-bit limits on inputs a new user tries (issue 11)."""

import numpy as np
import pytest

import cutelab as cute
from cutelab import Layout, LayoutError, ParseError, ScaledBasis
from cutelab.layout import MAX_DEPTH


# --------------------------------------------------------------------------- evaluation types

@pytest.mark.parametrize("bad", [2.5, "2", b"2", True, np.float64(2.0), 2 + 0j, np.bool_(True), [2.5], (1.0, 0)])
def test_non_integer_coordinates_are_type_errors(bad):
    L = Layout.parse("8:3") if not isinstance(bad, tuple) else Layout.parse("(2,4):(1,2)")
    with pytest.raises(TypeError, match=r"evaluating .* coordinate entries must be integers"):
        L(bad)
    with pytest.raises(TypeError):
        L[bad]


@pytest.mark.parametrize("kind", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64])
def test_numpy_integers_are_ints(kind):
    L = Layout.parse("(8,16):(16,1)")
    for i in (0, 5, 100, 127):
        assert L(kind(i)) == L(i)
        assert L((kind(i % 8), kind(i // 8))) == L((i % 8, i // 8))


def test_numpy_int32_does_not_wrap():
    L = Layout.parse("(65536,65536):(65536,1)")
    i = 2**31 - 1
    assert L(np.int32(i)) == L(i) == (i % 65536) * 65536 + i // 65536 > 0


@pytest.mark.parametrize("idx", [8, -1, 2**70])
def test_out_of_range_numpy_and_python_ints_agree(idx):
    L = Layout.parse("8:1")
    with pytest.raises(LayoutError, match="out of range"):
        L(idx)
    if -2**63 <= idx < 2**63:
        with pytest.raises(LayoutError, match="out of range"):
            L(np.int64(idx))


def test_crd2idx_and_get_hier_coord_take_numpy_ints():
    L = Layout.parse("(4,8):(8,1)")
    assert cute.crd2idx((np.int64(1), np.int32(2)), L) == 10
    assert L.get_hier_coord(np.int64(10)) == L.get_hier_coord(10)
    with pytest.raises(TypeError, match="must be an int"):
        L.get_hier_coord(10.0)


# --------------------------------------------------------------------------- nested basis strides

def test_nested_basis_parses_prints_and_evaluates():
    L = Layout.parse("(2,4):(1@1@1,1@0)")
    assert str(L) == "(2,4):(1@1@1,1@0)"
    assert L.stride[0] == ScaledBasis(1, (1, 1))
    assert str(Layout.parse("3:2@0@1")) == "3:2@0@1"  # CuTe's E<1,0> scaled by 2: mode 0 of mode 1
    assert Layout.parse("3:2@0@1").stride.path == (1, 0)
    assert L(1) == (0, (0, 1))
    assert L((1, 3)) == (3, (0, 1))
    assert _pad(L(4), (1, (1, 1))) == (2, (0, 0))
    assert str(cute.E(1, 0)) == "1@0@1" and cute.E(1, 0) == ScaledBasis(1, (1, 0))


def test_composition_with_nested_basis_cutlass_case():
    # test/unit/cute/core/composition.cpp: CuTe gives (2,4):(1,6)
    A = Layout.parse("(4,(2,3)):(6,(3,1))")
    B = Layout.parse("(2,4):(1@1@1,1@0)")
    R = cute.composition(A, B)
    assert str(R) == "(2,4):(1,6)"
    for i in range(B.size()):
        assert R(i) == A(_pad(B(i), A.shape))


def _pad(c, profile):
    """A coordinate of basis strides (which grows only as far as it is non-zero) padded to a profile."""
    if not isinstance(profile, tuple):
        return c if isinstance(c, int) else 0
    c = () if c == 0 else c
    return tuple(_pad(c[k] if k < len(c) else 0, p) for k, p in enumerate(profile))


# --------------------------------------------------------------------------- parsing limits

def test_deep_nesting_is_a_parse_error_not_recursion():
    text = "(" * 500 + "2" + ")" * 500
    with pytest.raises(ParseError, match=f"nesting deeper than {MAX_DEPTH}"):
        Layout.parse(text)
    with pytest.raises(ParseError) as e:
        cute.parse_tuple(text)
    assert len(str(e.value)) < 400  # a long input is quoted as a window around the position
    assert Layout.parse("(" * 10 + "2" + ")" * 10).size() == 2


def test_deep_nesting_in_python_is_a_layout_error():
    t = 2
    for _ in range(MAX_DEPTH + 5):
        t = (t,)
    with pytest.raises(LayoutError, match="nests deeper"):
        cute.make_layout(t)


# --------------------------------------------------------------------------- 64-bit limits

def test_layout_whose_offsets_overflow_is_refused():
    with pytest.raises(LayoutError, match="does not fit in 64 bits"):
        Layout.parse("(8,(2,8,1)):(8,(5,4611686018427387904,5))")
    with pytest.raises(LayoutError, match="does not fit in 64 bits"):
        cute.make_layout((4, 2), stride=(-(2**62), 1))
    # the largest that fits is fine, and offsets() agrees with evaluation everywhere
    L = cute.make_layout((2, 2), stride=(2**62, 2**62 - 1))
    assert L.offsets().tolist() == [L(i) for i in range(4)]


@pytest.mark.parametrize("op,args", [
    ("logical_product", ("(9223372036854775807):(1)", "6:1")),
    ("complement", ("2:4", 10**30)),
    ("blocked_product", ("(4611686018427387904):(1)", "(4):(1)")),
])
def test_algebra_results_are_validated_like_inputs(op, args):
    with pytest.raises(LayoutError, match=rf"{op}\(.*does not fit in 64 bits"):
        getattr(cute, op)(*args)


def test_results_that_fit_still_come_back():
    assert str(cute.complement("2:4", 10**18)) == "(4,125000000000000000):(1,8)"


def test_size_and_friends_read_text_and_refuse_non_ints():
    assert cute.size("(4,3)") == 12 and cute.cosize("(4,3):(3,1)") == 12 and cute.rank("(4,(3,2))") == 2
    assert cute.size((2, (3, 4))) == 24 and cute.size(np.int64(5)) == 5
    for bad in (4.5, (2, "a"), (2.0, 3)):
        with pytest.raises(TypeError, match="size: expected a layout, a tensor or a shape of ints"):
            cute.size(bad)


def test_import_is_lazy():
    """`import cutelab` does not load the pictures or the kernel machinery (they load on first use)."""
    import subprocess
    import sys

    code = ("import sys, cutelab as cute; loaded = set(sys.modules); "
            "print(sorted(m for m in ('cutelab.render', 'cutelab.kernel') if m in loaded)); "
            "print(cute.make_layout((4, 8))(5), type(cute.kernel).__name__, cute.Float32, cute.render.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "[]", out
    assert out[1] == "5 _KernelDecorator Float32 cutelab.render"


def test_the_layout_algebra_does_not_import_numpy_at_import_time():
    """int_tuple, layout and algebra import numpy only where they make arrays (import cutelab stays fast
    when nothing else imports numpy at module level)."""
    import ast
    import pathlib

    src = pathlib.Path(cute.__file__).parent
    for name in ("int_tuple.py", "layout.py", "algebra.py", "errors.py"):
        tree = ast.parse((src / name).read_text())
        for node in tree.body:  # module level only
            if isinstance(node, ast.Import):
                assert all(a.name.split(".")[0] != "numpy" for a in node.names), name
            if isinstance(node, ast.ImportFrom):
                assert (node.module or "").split(".")[0] != "numpy", name
                assert node.module not in ("tensor", "numeric", "render", "kernel"), (name, node.module)


def test_crd2idx_takes_mlir_location_keywords():
    # CuTe DSL's functions take loc=/ip= (a @dsl_user_op passes its own through); they change nothing
    import cutelab as cute

    L = cute.make_layout((4, 8), stride=(8, 1))
    assert cute.crd2idx((1, 2), L, loc=None, ip=None) == cute.crd2idx((1, 2), L) == 10
