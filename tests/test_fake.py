"""Fake tensors and symbolic ints (cutelab.fake): cute.compile without memory, then calls with real
tensors of any size the fakes allow; and dataclasses of tensors as kernel arguments."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import LaunchError, TensorError
from cutelab.runtime import from_dlpack, make_fake_compact_tensor, make_fake_tensor


@cute.kernel
def _scale_kernel(src: cute.Tensor, dst: cute.Tensor, n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * 32 + tidx
    if i < n:
        dst[i] = src[i] * 2.0


@cute.jit
def scale(src: cute.Tensor, dst: cute.Tensor):
    print("compiling for", src.layout)
    n = src.shape[0]
    _scale_kernel(src, dst, n).launch(grid=[cute.ceil_div(n, 32), 1, 1], block=[32, 1, 1])


def test_sym_ints_and_fakes_print_as_cute_dsl():
    n = cute.sym_int64()
    assert str(n) == "?{i64 div=1}" and str(cute.sym_int(divisibility=16)) == "?{div=16}" and str(cute.sym_int32()) == "?"
    assert repr(make_fake_compact_tensor(cutlass.Float32, (n, 8), stride_order=(1, 0))) == \
        "FakeTensor<Float32, (?{i64 div=1}, 8), (8, 1)>"
    assert repr(make_fake_compact_tensor(cutlass.Float32, (n, 8))) == "FakeTensor<Float32, (?{i64 div=1}, 8), (1, ?{i64 div=1})>"
    assert repr(make_fake_tensor(cutlass.Float16, (4, 8), stride=(8, 1), assumed_align=16)) == \
        "FakeTensor<Float16, (4, 8), (8, 1)>"


@pytest.mark.parametrize("bad,match", [
    (lambda: make_fake_compact_tensor(np.float32, (4,)), "dtype must be a cutlass numeric type"),
    (lambda: make_fake_compact_tensor(cutlass.Float32, (4, 4), stride_order=(0, 0)), "must be a permutation"),
    (lambda: make_fake_tensor(cutlass.Float32, (4, -1), stride=(1, 4)), "non-negative ints or cute.sym_int"),
    (lambda: make_fake_tensor(cutlass.Float32, (4,), stride=(1,), assumed_align=3), "power of two"),
    (lambda: cute.sym_int(48), "width must be 32 or 64"),
])
def test_bad_fakes_are_named_errors(bad, match):
    with pytest.raises((TensorError, ValueError), match=match):
        bad()


def test_a_fake_has_no_data():
    with pytest.raises(TensorError, match="has no memory"):
        make_fake_compact_tensor(cutlass.Float32, (8,))[0]


def test_compile_on_fakes_then_run_on_real_tensors_of_several_sizes(capsys):
    n = cute.sym_int64()
    f = cute.compile(scale, make_fake_compact_tensor(cutlass.Float32, (n,)), make_fake_compact_tensor(cutlass.Float32, (n,)))
    assert capsys.readouterr().out == "compiling for (?{i64}):(1)\n"  # as CuTe DSL prints it
    for size in (100, 37, 100):
        a = np.arange(size, dtype=np.float32)
        b = np.zeros_like(a)
        f(from_dlpack(a), from_dlpack(b))
        np.testing.assert_array_equal(b, 2 * a)
    assert capsys.readouterr().out == ""  # a compiled function prints nothing
    assert len(f.cache) == 2  # one program per size


def test_compile_time_prints_show_the_symbolic_extents(capsys):
    cute.compile(scale, make_fake_compact_tensor(cutlass.Float32, (cute.sym_int(divisibility=8),)),
                 make_fake_compact_tensor(cutlass.Float32, (cute.sym_int(divisibility=8),)))
    assert "compiling for (?{div=8}):(1)" in capsys.readouterr().out


def test_calls_that_do_not_fit_the_fakes_are_refused():
    n = cute.sym_int(divisibility=4)
    fa = make_fake_compact_tensor(cutlass.Float32, (n,), assumed_align=16)
    f = cute.compile(scale, fa, make_fake_compact_tensor(cutlass.Float32, (n,)))
    a = np.zeros(8, np.float32)
    with pytest.raises(LaunchError, match="holds Int32"):
        f(from_dlpack(np.zeros(8, np.int32)), from_dlpack(a))
    with pytest.raises(LaunchError, match=r"shape\[0\] = 6 is not a multiple of 4"):
        f(from_dlpack(np.zeros(6, np.float32)), from_dlpack(np.zeros(6, np.float32)))
    with pytest.raises(LaunchError, match="rank 2"):
        f(from_dlpack(np.zeros((4, 4), np.float32)), from_dlpack(a))
    with pytest.raises(LaunchError, match="16-byte aligned"):
        f(from_dlpack(np.zeros(12, np.float32)[1:9]), from_dlpack(a))
    with pytest.raises(LaunchError, match="is a fake tensor"):
        f(fa, from_dlpack(a))
    g = cute.compile(scale, make_fake_tensor(cutlass.Float32, (8,), stride=(1,)), make_fake_compact_tensor(cutlass.Float32, (8,)))
    with pytest.raises(LaunchError, match=r"shape\[0\] is 16, the fake's is 8"):
        g(from_dlpack(np.zeros(16, np.float32)), from_dlpack(np.zeros(16, np.float32)))


@dataclass(frozen=True)
class _Params:
    threads: int
    src: cute.Tensor
    dst: cute.Tensor


@cute.kernel
def _copy_kernel(p: _Params, n: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * p.threads + tidx
    if i < n:
        p.dst[i] = p.src[i] + 1.0


def test_a_dataclass_of_tensors_is_a_kernel_argument():
    a = np.arange(70, dtype=np.float32)
    b = np.zeros_like(a)
    _copy_kernel(_Params(32, from_dlpack(a), from_dlpack(b)), 70).launch(grid=3, block=32)
    np.testing.assert_array_equal(b, a + 1)


def test_repeated_calls_with_torch_tensors_skip_the_checks_they_passed():
    """quack calls its compiled functions with torch tensors on every step: a call whose tensors have the
    shapes, strides, dtypes, devices and address alignment of one that passed the checks runs its program
    without making cute tensors again; anything else is checked (and refused) as before."""
    torch = pytest.importorskip("torch")
    n = cute.sym_int64()
    f = cute.compile(scale, make_fake_compact_tensor(cutlass.Float32, (n,)), make_fake_compact_tensor(cutlass.Float32, (n,)))
    checked = []
    full = f._checked
    f._checked = lambda *a: checked.append(1) or full(*a)
    a, b = torch.arange(64, dtype=torch.float32), torch.zeros(64)
    for _ in range(3):
        b.zero_()
        f(a, b)
        assert torch.equal(b, 2 * a)
    assert len(checked) == 1  # the first call only
    c, d = torch.arange(40, dtype=torch.float32), torch.zeros(40)
    f(c, d)
    assert torch.equal(d, 2 * c) and len(checked) == 2 and len(f.cache) == 2
    for _ in range(2):  # a refused call is not remembered
        with pytest.raises(LaunchError, match="holds Int32"):
            f(torch.zeros(64, dtype=torch.int32), b)
    assert len(checked) == 4


@dataclass
class _Pair:
    src: cute.Tensor
    dst: cute.Tensor
    times: cutlass.Constexpr = None  # a compile-time field: a call passes None (quack's rounding_mode)


@cute.kernel
def _times_kernel(src: cute.Tensor, dst: cute.Tensor, n: cutlass.Int32, times: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * 32 + tidx
    if i < n:
        dst[i] = src[i] * float(times)


@cute.jit
def scale_pair(p: _Pair):
    n = p.src.shape[0]
    _times_kernel(p.src, p.dst, n, p.times).launch(grid=[cute.ceil_div(n, 32), 1, 1], block=[32, 1, 1])


def test_fake_tensors_inside_a_dataclass_argument():
    """quack passes its epilogue's tensors in a dataclass: cute.compile traces with stand-ins for the fakes
    inside it (not the fakes, which have no layout to take the rank of), and each call checks the real
    tensors in their places (torch tensors or arrays, made cute tensors) and runs the program compiled for
    their shapes, with the compile's values of the fields the call leaves None (its Constexpr fields)."""
    n = cute.sym_int()
    fake = _Pair(make_fake_compact_tensor(cutlass.Float32, (n,)), make_fake_compact_tensor(cutlass.Float32, (n,)), 3)
    f = cute.compile(scale_pair, fake)
    for size in (40, 70):
        x = np.arange(size, dtype=np.float32)
        y = np.zeros(size, np.float32)
        f(_Pair(x, y))  # arrays in the fakes' places; the compile-time field keeps its value (3)
        np.testing.assert_array_equal(y, 3 * x)
    with pytest.raises((LaunchError, TensorError), match="float64|Float64|dtype|element"):
        f(_Pair(from_dlpack(np.zeros(8)), from_dlpack(np.zeros(8))))
