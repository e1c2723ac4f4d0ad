"""Dynamic values (cutelab.dynamic.DynInt): '?' printing as CuTe DSL 4.8.1 prints, arithmetic and
divisibility, the layout algebra over them, runtime loops and branches in kernels, the trace cache."""

from __future__ import annotations

import contextlib
import io
import pickle

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.dynamic import DynBool, DynInt, dynamic_key, is_dynamic, value_of
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
from cutelab.numeric import Int32, Int64
from cutelab.runtime import from_dlpack


# ---- printing and arithmetic (the CuTe DSL column: what 4.8.1 printed for the same expressions
# on a shape element of a tensor marked with mark_compact_shape_dynamic(mode=0, divisibility=2)
# and on one of mark_layout_dynamic(): see scripts/make_dynamic_golden.py for the layouts)
@pytest.mark.parametrize("expr, dsl", [
    (lambda s: s, "?{div=2}"),
    (lambda s: s * 2, "?{div=4}"),
    (lambda s: 2 * s, "?{div=4}"),
    (lambda s: s + 1, "?"),
    (lambda s: s // 4, "?"),
    (lambda s: s * s, "?{div=4}"),
    (lambda s: s % 4, "?{div=2}"),
    (lambda s: repr(s), "Int32(?)"),
])
def test_prints_as_cute_dsl_with_divisibility(expr, dsl):
    assert str(expr(DynInt(6, div=2))) == dsl


def test_values_compute_as_ints():
    s = DynInt(6, div=2)
    assert int(s * 2) == 12 and int(s + 1) == 7 and int(s // 4) == 1 and int(s % 4) == 2
    assert s == 6 and hash(s) == hash(6) and [0] * 7 == [0] * int(s + 1)
    assert f"{s}" == "?{div=2}" and f"{s:d}" == "6" and f"{s:>3}" == "  6"
    assert float(s) == 6.0 and s + 0.5 == 6.5  # floats: a plain float
    assert pickle.loads(pickle.dumps(s)) == 6 and str(pickle.loads(pickle.dumps(s))) == "?{div=2}"


def test_int64_strides_print_their_type():
    d = DynInt(64, Int64, 8)
    assert str(d) == "?{i64 div=8}" and repr(d) == "Int64(?)"
    assert str(DynInt(3) * d) == "?{i64 div=8}"  # i32 x i64 -> i64
    assert str(DynInt(4, "i64")) == "?{i64}"


def test_type_prints_as_cute_dsl():
    assert repr(type(DynInt(3))) == "Int32"


@pytest.mark.parametrize("bad, msg", [
    (lambda: DynInt(6, div=4), "6 is not divisible by 4"),
    (lambda: DynInt(6, div=0), "positive"),
    (lambda: DynInt(1.5), "must be an int"),
    (lambda: DynInt(3, dtype=cutlass.Float32), "integer type"),
])
def test_bad_dynint_is_a_clear_error(bad, msg):
    with pytest.raises((ValueError, TypeError), match=msg):
        bad()


def test_helpers_strip_and_key():
    L = cute.make_layout((DynInt(4), 8), stride=(8, 1))
    assert is_dynamic(L) and not is_dynamic(cute.make_layout((4, 8)))
    plain = value_of(L)
    assert str(plain) == "(4,8):(8,1)" and not is_dynamic(plain) and plain == L
    assert dynamic_key(L) == ((("i32", 1), None), None) and dynamic_key(plain) is None
    assert value_of((DynInt(2), [DynInt(3)], "x")) == (2, [3], "x")


def test_comparisons_are_bools_outside_kernels():
    assert (DynInt(3) < 4) is True and (DynInt(3) == 4) is False


# ---- the layout algebra over dynamic values (CuTe DSL 4.8.1's prints, from scripts/t1-style runs:
# scripts/make_dynamic_golden.py checks the same against the DSL)
def test_algebra_propagates_question_marks():
    M = cute.make_layout((DynInt(16), DynInt(32)), stride=(DynInt(32, Int64), 1))
    assert str(M) == "(?,?):(?{i64},1)"
    assert str(cute.size(M)) == "?" and int(cute.size(M)) == 512
    assert str(cute.zipped_divide(M, (4, 8))) == "((4,8),(?,?)):((?{i64},1),(?{i64 div=4},8))"
    L = cute.make_layout((DynInt(16, div=16), 32), stride=(32, 1))
    assert str(L) == "(?{div=16},32):(32,1)" and str(cute.size(L)) == "?{div=512}"
    assert str(cute.zipped_divide(L, (4, 8))) == "((4,8),(?,4)):((32,1),(128,8))"
    assert str(cute.make_layout((DynInt(8), 2))) == "(?,2):(1,?)"
    # the same function as the static layout
    S = value_of(M)
    assert [M(i) for i in range(512)] == [S(i) for i in range(512)]


def test_tile_to_shape_onto_runtime_extents_rounds_up():
    """CuTe asserts that the block divides a static target only; a runtime extent gets ceil_div blocks. The
    expected strings are CuTe DSL 4.8.1's print of the same calls (m = 300, n = 128, l = 2 as Int32 arguments
    of a jit function); its printf of the first gives the rest counts 3, 2, 2."""
    from cutelab.utils.blockscaled_layout import tile_atom_to_shape_SF

    m, n, l = DynInt(300), DynInt(128), DynInt(2)
    sf = tile_atom_to_shape_SF((m, n, l), 16)
    assert str(sf) == "(((32,4),?),((16,4),?),(1,?)):(((16,4),?{div=512}),((0,1),512),(0,?{div=512}))"
    assert str(value_of(sf)) == "(((32,4),3),((16,4),2),(1,2)):(((16,4),1024),((0,1),512),(0,3072))"
    assert str(tile_atom_to_shape_SF((m, 128, l), 32)) == \
        "(((32,4),?),((32,4),1),(1,?)):(((16,4),512),((0,1),0),(0,?{div=512}))"
    t = cute.tile_to_shape(cute.make_layout((2, 2), stride=(1, 2)), (m, 6), (0, 1))
    assert str(t) == "((2,?),(2,3)):((1,4),(2,?{div=4}))" and str(value_of(t)) == "((2,150),(2,3)):((1,4),(2,600))"
    # a static target the block does not divide is still refused, as CuTe's static_assert
    with pytest.raises(cute.LayoutError, match="does not divide the target shape"):
        cute.tile_to_shape(cute.make_layout((2, 2), stride=(1, 2)), (301, 6))


def test_errors_in_a_jit_function_give_the_dynamic_values():
    @cute.jit
    def f(n: cutlass.Int32):
        cute.composition(cute.make_layout((n, 4), stride=(4, 1)), cute.make_layout(5, stride=2))

    with pytest.raises(ValueError, match="stride divisibility fails") as e:
        f(3)
    notes = getattr(e.value, "__notes__", [])
    assert notes == ["the dynamic values (printed '?') of this call: n = 3"], (str(e.value), notes)


# ---- kernels: a DynInt bound is a runtime loop (not unrolled), a DynBool an IR branch
@cute.kernel
def _ksum(A: cute.Tensor, B: cute.Tensor, k):
    tidx, _, _ = cute.arch.thread_idx()
    acc = A[tidx, 0] * 0
    print("k =", k)
    for j in range(k):
        acc = acc + A[tidx, j]
    if k > 4:
        acc = acc * 2
    else:
        acc = acc - 1
    B[tidx] = acc
    cute.printf("t{} k={} {}", tidx, k, (k, 2))


def _run_ksum(k):
    A = np.arange(4 * 1024, dtype=np.float32).reshape(4, 1024) % 7
    B = np.zeros(4, np.float32)
    with contextlib.redirect_stdout(io.StringIO()) as out:
        _ksum(from_dlpack(A), from_dlpack(B), k).launch(grid=1, block=4)
    return A, B, out.getvalue()


def test_dynamic_loop_is_a_runtime_loop_with_the_value_as_bound():
    A, B, out = _run_ksum(DynInt(1024))
    np.testing.assert_array_equal(B, A.sum(1) * 2)
    assert out.splitlines()[0] == "k = ?"  # trace time: '?'
    assert out.splitlines()[1:] == [f"t{t} k=1024 (1024,2)" for t in range(4)]  # run time: the value
    src = cuda.render(last_launch().ir)
    assert "for (int i0 = 0; i0 < 1024; i0 += 1) {" in src  # one loop, not 1024 copies
    assert src.count("__ldg(A") == 2
    assert "if (true) {" in src and "} else {" in src  # k > 4: a runtime branch on a known value
    assert "?" not in src.split("__global__", 1)[1].split("printf")[0]  # no DynInt text in the code


def test_static_loop_is_unrolled_and_branch_static():
    A, B, out = _run_ksum(6)
    np.testing.assert_array_equal(B, A[:, :6].sum(1) * 2)
    assert out.splitlines()[0] == "k = 6"
    src = cuda.render(last_launch().ir)
    assert "for (" not in src and "} else {" not in src


def test_false_dynamic_branch_runs_the_else_side():
    A, B, _ = _run_ksum(DynInt(3))
    np.testing.assert_array_equal(B, A[:, :3].sum(1) - 1)


def test_trace_cache_keys_dynamic_values_by_value_and_position():
    _run_ksum(DynInt(5))
    ir5 = last_launch().ir
    _run_ksum(DynInt(5))
    assert last_launch().ir is ir5 and last_launch().cached
    _run_ksum(5)  # the same value, static: another trace (it prints 5, not ?)
    assert last_launch().ir is not ir5
    _run_ksum(DynInt(7))  # a new value: specialized again
    assert last_launch().ir is not ir5


def test_dynamic_bool_and_or_not():
    from cutelab.kernel.frontend import control

    assert isinstance(control.not_(DynBool(False)), DynBool) and control.not_(DynBool(False))
    r = control.and_(DynBool(True), lambda: True)
    assert isinstance(r, DynBool) and r
    r = control.or_(DynBool(False), lambda: False)
    assert isinstance(r, DynBool) and not r


def test_divmod_and_pow_of_a_dynamic_integer_stay_dynamic():
    n = DynInt(48, div=16)
    q, r = divmod(n, 5)
    assert (type(q), type(r), int(q), int(r)) == (DynInt, DynInt, 9, 3)
    q, r = divmod(100, n)
    assert (type(q), int(q), int(r)) == (DynInt, 2, 4)
    assert type(n ** 2) is DynInt and int(n ** 2) == 2304 and str(n ** 2) == "?{div=256}"
    assert type(2 ** DynInt(3)) is DynInt and int(2 ** DynInt(3)) == 8
    assert n ** -1 == 1 / 48 and pow(n, 2, 5) == 4  # as for ints: a float, and a static modular power


@cute.kernel
def _tile_rows(A: cute.Tensor, B: cute.Tensor):
    tiles, _ = divmod(A.shape[0], 4)  # a tile count made with divmod: still a runtime loop bound
    acc = A[0] * 0.0
    for t in range(tiles):
        acc = acc + A[t * 4]
    B[0] = acc


def test_divmod_bound_is_a_runtime_loop():
    A = np.arange(64, dtype=np.float32)
    B = np.zeros(1, np.float32)
    _tile_rows(from_dlpack(A).mark_layout_dynamic(), from_dlpack(B)).launch(grid=1, block=1)
    assert B[0] == A[::4].sum()
    src = cuda.render(last_launch().ir)
    assert "for (int i0 = 0; i0 < 16; i0 += 1) {" in src and src.count("__ldg(A") == 2


# ---- jit functions: Int32 arguments are dynamic, prints come first
def test_jit_int32_argument_prints_question_mark_and_runs_with_value():
    @cute.jit
    def f(a: cutlass.Int32, b: cutlass.Constexpr[int]):
        print("a", a, "b", b, type(a))
        cute.printf("a={} b={}", a, b)
        L = cute.make_layout((a, b))
        print(L)
        cute.printf("{}", L)

    with contextlib.redirect_stdout(io.StringIO()) as out:
        f(cutlass.Int32(8), 2)
    assert out.getvalue() == "a ? b 2 Int32\n(?,2):(1,?)\na=8 b=2\n(8,2):(1,8)\n"
    with contextlib.redirect_stdout(io.StringIO()) as out:
        f(5, 3)  # an int for an Int32 parameter: dynamic too
    assert out.getvalue() == "a ? b 3 Int32\n(?,3):(1,?)\na=5 b=3\n(5,3):(1,5)\n"


# ---- compiled functions over dynamic layouts: one trace per distinct dynamic value, reused
@cute.kernel
def _double(A: cute.Tensor, B: cute.Tensor):
    n = cute.size(A)
    for i in range(n):  # a runtime loop over the dynamic extent, in one thread
        B[i] = A[i] * 2.0


@cute.jit
def _double_host(A: cute.Tensor, B: cute.Tensor):
    print("n =", cute.size(A), A.layout)
    _double(A, B).launch(grid=1, block=1, interpret=True)


def _dyn(a, div=1):
    return from_dlpack(a).mark_compact_shape_dynamic(mode=0, divisibility=div)


def test_compiled_function_retraces_per_dynamic_extent_and_caches():
    a8, b8 = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    with contextlib.redirect_stdout(io.StringIO()) as out:
        c = cute.compile(_double_host, _dyn(a8, 4), _dyn(b8, 4))
    assert out.getvalue() == "n = ?{div=4} (?{div=4}):(1)\n"
    with contextlib.redirect_stdout(io.StringIO()) as out:
        c(_dyn(a8, 4), _dyn(b8, 4))
        a16, b16 = np.arange(16, dtype=np.float32), np.zeros(16, np.float32)
        c(_dyn(a16, 4), _dyn(b16, 4))  # a new extent: traced again, silently
        c(a16, b16)  # arrays: made tensors with the compiled marks
    assert out.getvalue() == ""
    np.testing.assert_array_equal(b8, a8 * 2)
    np.testing.assert_array_equal(b16, a16 * 2)
    assert len(c._variant_cache) == 1  # 16 traced once, reused for the arrays


def test_compiled_function_refuses_what_its_marks_exclude():
    from cutelab.errors import LaunchError

    a8, b8 = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    with contextlib.redirect_stdout(io.StringIO()):
        c = cute.compile(_double_host, _dyn(a8, 4), _dyn(b8, 4))
    a6, b6 = np.arange(6, dtype=np.float32), np.zeros(6, np.float32)
    with pytest.raises(LaunchError, match=r"the extent 6 of mode 0 is not divisible by 4"):
        c(a6, b6)
    with contextlib.redirect_stdout(io.StringIO()):
        s = cute.compile(_double_host, from_dlpack(a8), from_dlpack(b8))  # static: no retrace
    with pytest.raises(LaunchError, match=r"layout \(6\):\(1\) instead of \(8\):\(1\)"):
        s(from_dlpack(a6), from_dlpack(b6))


def test_marked_tensor_in_a_kernel_generates_static_cuda():
    a = np.arange(1024, dtype=np.float32)
    from cutelab.kernel.launch.plan import capture

    with capture() as ks:
        _double(_dyn(a, 16), _dyn(np.zeros(1024, np.float32), 16)).launch(grid=1, block=1)
    body = cuda.render(ks[0]).split("__global__", 1)[1]
    assert "for (int i0 = 0; i0 < 1024; i0 += 1) {" in body and "?" not in body


def test_scalars_made_in_a_jit_function_are_runtime_values():
    @cute.kernel
    def k(out: cute.Tensor, n):  # n: a runtime scalar argument (a cutlass scalar, as in CuTe DSL)
        out[0] = out[0] + n

    @cute.jit
    def f(out: cute.Tensor, m: cutlass.Int32):
        a = cutlass.Int32(5)
        x = cutlass.Float32(3.14)
        print(a, repr(a), type(a), a * 2, m * 2, x, repr(x), type(x), x * 2)  # CuTe DSL: all '?'
        cute.printf("{} {} {}", a * 2, x, m + 1)
        k(out, a).launch(grid=1, block=1, interpret=True)

    out = np.zeros(1, np.int32)
    with contextlib.redirect_stdout(io.StringIO()) as o:
        f(from_dlpack(out), 4)
    assert o.getvalue() == "? Int32(?) Int32 ? ? ? Float32(?) Float32 ?\n10 3.140000 5\n"
    assert out[0] == 5 and last_launch().ir.params[-1].kind == "scalar"
    s = cutlass.Int32(5)  # outside a jit function: a static scalar, an instance of the class Int32
    assert type(s) is cutlass.Int32 and not isinstance(s, DynInt) and str(s) == "5"


def test_algebra_errors_name_the_dynamic_values():
    L = cute.make_layout((DynInt(3), 4), stride=(4, 1))
    with pytest.raises(ValueError) as e:
        cute.composition(L, cute.make_layout(5, stride=2))
    msg = str(e.value)
    assert msg.startswith("composition((?,4):(4,1), 5:2): stride divisibility fails")  # as printed
    assert msg.endswith("(the dynamic values, printed '?', are (3,4):(4,1), 5:2)")  # and the values
    assert msg.count("dynamic values") == 1
