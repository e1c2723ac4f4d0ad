"""TensorSSA on the host: arithmetic, comparisons, where, reductions, conversions (the same
operations a kernel traces, computed with numpy)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import TensorError
from cutelab.numeric import BFloat16, Boolean, Float32, Int32


def _ssa(values, dtype=Float32):
    t = cute.make_tensor(np.asarray(values, dtype=dtype.storage), cute.make_layout(len(values)))
    return t.load()


def test_arithmetic_and_reflected_ops():
    x = _ssa([1.0, -2.0, 4.0])
    assert (1 - x).numpy().tolist() == [0.0, 3.0, -3.0]
    assert (8 / x).numpy().tolist() == [8.0, -4.0, 2.0]
    assert (-x).numpy().tolist() == [-1.0, 2.0, -4.0]
    assert abs(x).numpy().tolist() == [1.0, 2.0, 4.0]


def test_integer_floordiv_mod_follow_python():
    x = _ssa([7, -7, 6], Int32)
    assert (x // 3).numpy().tolist() == [2, -3, 2]
    assert (x % 3).numpy().tolist() == [1, 2, 0]


def test_comparisons_make_booleans_and_where_selects():
    x = _ssa([1.0, -2.0, 4.0])
    m = x > 0.0
    assert m.dtype is Boolean and m.numpy().tolist() == [True, False, True]
    assert (~m).numpy().tolist() == [False, True, False]
    assert ((x > 0.0) & (x < 2.0)).numpy().tolist() == [True, False, False]
    assert cute.where(m, x, x * 10.0).numpy().tolist() == [1.0, -20.0, 4.0]


@pytest.mark.parametrize("op,init,expected", [("add", None, 3.0), ("mul", None, -8.0), ("max", None, 4.0),
                                              ("min", -5.0, -5.0), ("add", 1.0, 4.0)])
def test_reduce(op, init, expected):
    assert _ssa([1.0, -2.0, 4.0]).reduce(op, init) == expected


def test_reduce_refuses_unknown_ops_and_profiles():
    with pytest.raises(TensorError, match="unknown reduction"):
        _ssa([1.0]).reduce("xor")
    with pytest.raises(TensorError, match="reduction profile"):
        _ssa([1.0]).reduce("add", None, (None, 1))


def test_to_bf16_rounds_to_nearest_even():
    x = _ssa([1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8])
    assert x.to(BFloat16).numpy().tolist() == [1.0, 1.0 + 2 ** -6]


def test_print_tensor_of_a_value(capsys):
    cute.print_tensor(_ssa([1.0, 2.5]))  # as CuTe DSL: stored into a fresh register tensor, then printed
    out = re.sub(r"0x[0-9a-f]+", "0x?", capsys.readouterr().out)
    assert out == "tensor(raw_ptr(0x?: f32, rmem, align<32>) o 2:1, data=\n       [ 1.000000, ],\n       [ 2.500000, ])\n"


@cute.kernel
def _ssa_kinds(mX: cute.Tensor, mO: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    v = mX[tidx, None].load()
    s = mX[tidx, 0]
    # quack branches on isinstance(val, cute.TensorSSA) at trace time (const_expr) in its reductions
    print(isinstance(v, cute.TensorSSA), isinstance(s, cute.TensorSSA), isinstance(s, Float32))
    if cute.const_expr(isinstance(v, cute.TensorSSA)):
        total = v.reduce(cute.ReductionOp.ADD, init_val=0.0, reduction_profile=0)
    else:
        total = v
    frag = cute.make_rmem_tensor(cute.make_layout((4, 1)), Float32)
    frag.store(v * 2.0)  # a (4) value into a (4,1) tensor: the same elements, as CuTe DSL stores it
    mO[tidx, None].store(frag.load())
    mO[tidx, 0] = total


def test_kernel_values_are_tensor_ssa_instances_and_scalars_are_not(capsys):
    X = np.arange(8, dtype=np.float32).reshape(2, 4)
    O = np.zeros_like(X)
    _ssa_kinds(cute.runtime.from_dlpack(X), cute.runtime.from_dlpack(O)).launch(grid=1, block=2)
    assert capsys.readouterr().out.splitlines() == ["True False True"]
    np.testing.assert_array_equal(O[:, 0], X.sum(axis=1))
    np.testing.assert_array_equal(O[:, 1:], 2 * X[:, 1:])
    assert not isinstance(np.zeros(3), cute.TensorSSA) and isinstance(
        cute.make_tensor(np.zeros(4, np.float32), cute.make_layout(4)).load(), cute.TensorSSA)


@cute.kernel
def _reduce_modes_kernel(mX: cute.Tensor, mA: cute.Tensor, mB: cute.Tensor):
    # flash_attn.cute's backward preprocess: the sum over modes 0 and 2 of a (2, 3, 4) fragment
    frag = cute.make_rmem_tensor(mX.layout, Float32)
    frag.store(mX.load())
    a = frag.load().reduce(cute.ReductionOp.ADD, init_val=1.0, reduction_profile=(0, None, 1))
    b = frag.load().reduce(cute.ReductionOp.MAX, init_val=-100.0, reduction_profile=(None, None, 0))
    ra = cute.make_rmem_tensor(cute.make_layout(3), Float32)
    ra.store(a)
    mA.store(ra.load())
    rb = cute.make_rmem_tensor(cute.make_layout((2, 3)), Float32)
    rb.store(b)
    mB.store(rb.load())


def test_reduce_over_some_modes_keeps_the_none_modes():
    x = np.random.default_rng(0).standard_normal((4, 3, 2)).astype(np.float32)  # element (i, j, k) at x[k, j, i]
    a = np.zeros(3, np.float32)
    b = np.zeros((3, 2), np.float32)  # a (2, 3) column-major tensor
    mx = cute.make_tensor(x.reshape(-1), cute.make_layout((2, 3, 4)))
    mb = cute.make_tensor(b.reshape(-1), cute.make_layout((2, 3)))
    _reduce_modes_kernel(mx, cute.make_tensor(a, cute.make_layout(3)), mb).launch(grid=1, block=1)
    xt = x.transpose(2, 1, 0)  # x as the (2, 3, 4) tensor
    np.testing.assert_allclose(a, xt.sum(axis=(0, 2)) + 1.0, rtol=1e-6)
    np.testing.assert_allclose(b.T, np.maximum(xt.max(axis=2), -100.0), rtol=1e-6)


@cute.kernel
def _row_sums(mX: cute.Tensor, mO: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    mO[tidx, 0] = mX[tidx, None].load().reduce(cute.ReductionOp.ADD, init_val=0.0, reduction_profile=0)
    mO[tidx, 1] = mX[tidx, None].load().reduce(cute.ReductionOp.MUL, init_val=1.0, reduction_profile=0)
    mO[tidx, 2] = mX[tidx, None].load().reduce(cute.ReductionOp.MAX, -cutlass.Float32.inf, 0)


def test_kernel_float_sum_is_in_element_order_from_the_init():
    """A float add (mul) reduction inside a kernel rounds as CuTe DSL's vector.reduction with its
    accumulator: ((init + x0) + x1) + ..., element by element. 2**24 + 1 rounds back to 2**24 in
    f32, so [2**24, 1, 1, 1] sums to 2**24 in that order (a pairwise tree would give 2**24 + 2)."""
    from cutelab.kernel.cuda.printer import render
    from cutelab.kernel.launch.plan import last_launch

    X = np.array([[2.0 ** 24, 1, 1, 1], [1, 1, 1, 2.0 ** 24], [3, 1e-8, 1e-8, 1e-8]], np.float32)
    O = np.zeros((3, 3), np.float32)
    _row_sums(cute.runtime.from_dlpack(X), cute.runtime.from_dlpack(O)).launch(grid=1, block=3)
    np.testing.assert_array_equal(O[:, 2], X.max(axis=1))
    # a max from -inf (the identity) combines nothing more: 3 max for 4 elements, no -inf in the CUDA;
    # each the NaN-propagating max of CuTe DSL's reduction (max.NaN.f32)
    src = render(last_launch().ir)
    body = src[src.index("__global__"):]
    assert body.count("cl_fmax_nan(") == 3 and "0xff800000" not in body
    for row, (s, p, _) in zip(X, O):
        want_s, want_p = np.float32(0.0), np.float32(1.0)
        for x in row:
            want_s, want_p = np.float32(want_s + x), np.float32(want_p * x)
        assert s == want_s and p == want_p
    assert O[0, 0] == 2.0 ** 24 and O[1, 0] == 2.0 ** 24 + 4


@cute.kernel
def _broadcast_kernel(mX: cute.Tensor, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    # flash_attn.cute's softcap score mod: a (1,) value of a runtime scalar, broadcast to (vec_size,)
    one = cute.make_rmem_tensor(1, Int32)
    one[0] = tidx + 5
    ra = cute.make_rmem_tensor(cute.make_layout(4), Int32)
    ra.store(one.load().broadcast_to((4,)))
    mA[tidx, None].store(ra.load())
    # a (1, 3) row to (2, 3), and a (2, (1, 3)) value to (2, (2, 3)) (a rank-1 value is padded to the target's rank)
    row = cute.make_rmem_tensor(cute.make_layout((1, 3)), Float32)
    row.store(mX[tidx, None].load().reshape((1, 3)))
    rb = cute.make_rmem_tensor(cute.make_layout((2, 3)), Float32)
    rb.store(row.load().broadcast_to((2, 3)))
    mB[tidx, None, None].store(rb.load())
    h = cute.make_rmem_tensor(cute.make_layout((2, (1, 3))), Float32)
    for i in cutlass.range_constexpr(6):
        h[i] = Float32(i) + Float32(tidx) * 10.0
    rc = cute.make_rmem_tensor(cute.make_layout((2, (2, 3))), Float32)
    rc.store(h.load().broadcast_to((2, (2, 3))))
    mC[tidx, None].store(rc.load())


def test_kernel_values_broadcast_to_as_cute_dsl():
    """TensorSSA.broadcast_to inside a kernel: the values CuTe DSL 4.8.1 gives (checked there on the CPU with
    CUTE_DSL_ARCH=sm_100a: (1, 4) -> (3, 4) repeats the row; (2, (1, 3)) -> (2, (2, 3)) prints rows
    [0, 0, 2, 2, 4, 4] and [1, 1, 3, 3, 5, 5])."""
    X = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    A = np.zeros((2, 4), np.int32)
    B = np.zeros((2, 3, 2), np.float32)  # per thread a (2, 3) column-major tensor
    C = np.zeros((2, 12), np.float32)
    mb = cute.make_tensor(B.reshape(-1), cute.make_layout((2, 2, 3), stride=(6, 1, 2)))
    _broadcast_kernel(cute.runtime.from_dlpack(X), cute.runtime.from_dlpack(A), mb,
                      cute.runtime.from_dlpack(C)).launch(grid=1, block=2)
    assert A.tolist() == [[5] * 4, [6] * 4]
    for t in range(2):
        assert B[t].T.tolist() == [X[t].tolist()] * 2
        # (2, (2, 3)) column-major: element (r, (j, k)) at r + 2 * (j + 2 * k) is the source's (r, (0, k))
        want = [r + 2 * k + 10 * t for k in range(3) for j in range(2) for r in range(2)]
        assert C[t].tolist() == want


@cute.kernel
def _bad_broadcast_kernel(mX: cute.Tensor, how: cute.Constexpr):
    v = mX.load()  # shape (2, 3)
    if how == "extent":
        v.broadcast_to((3, 3))
    else:
        v.broadcast_to(((2, 1), 3))


@pytest.mark.parametrize("how,words", [
    ("extent", "a mode of extent 2 cannot become 3"),
    ("profile", "the shapes' profiles differ"),
])
def test_kernel_broadcast_to_refuses_shapes_that_do_not_broadcast(how, words):
    from cutelab.errors import TraceError

    X = np.zeros((3, 2), np.float32)
    with pytest.raises(TraceError, match=words):
        _bad_broadcast_kernel(cute.make_tensor(X.reshape(-1), cute.make_layout((2, 3))), how).launch(grid=1, block=1)
