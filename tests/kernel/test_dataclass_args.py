"""Dataclass arguments by CuTe DSL's default dataclass adapter: every field not annotated Constexpr is a
runtime value, so a compiled function (and a remembered @cute.jit call, and a kernel's trace) follows the
values each call gives, also when the dataclass holds tensors or pointers beside its numbers; the other
values it holds are part of what was compiled, and a call that changes them is refused by name."""

import dataclasses
import typing

import numpy as np
import pytest

import cutelab as cute
import cutelab.numeric as cutlass
from cutelab.errors import LaunchError
from cutelab.kernel.frontend.host import Constexpr, protocol_values
from cutelab.runtime import from_dlpack, make_ptr


@dataclasses.dataclass
class Scalars:
    n: cutlass.Int32
    alpha: cutlass.Float32


@dataclasses.dataclass
class WithTensor:
    y: cute.Tensor
    n: cutlass.Int32


@dataclasses.dataclass
class WithPointer:
    p: cute.Pointer
    n: cutlass.Int32


@dataclasses.dataclass
class WithStatic:
    y: cute.Tensor
    n: cutlass.Int32
    shift: Constexpr[int]


@cute.kernel
def _k_scalars(x: cute.Tensor, a: Scalars):
    t = cute.arch.thread_idx()[0]
    x[t] = x[t] + a.alpha * a.n


@cute.jit
def _scalars(x: cute.Tensor, a: Scalars):
    _k_scalars(x, a).launch(grid=(1, 1, 1), block=(4, 1, 1))


@cute.kernel
def _k_tensor(x: cute.Tensor, a: WithTensor):
    t = cute.arch.thread_idx()[0]
    x[t] = a.y[t] + a.n


@cute.jit
def _tensor(x: cute.Tensor, a: WithTensor):
    _k_tensor(x, a).launch(grid=(1, 1, 1), block=(4, 1, 1))


@cute.kernel
def _k_pointer(x: cute.Tensor, a: WithPointer):
    t = cute.arch.thread_idx()[0]
    y = cute.make_tensor(a.p, cute.make_layout(4))
    x[t] = y[t] + a.n


@cute.jit
def _pointer(x: cute.Tensor, a: WithPointer):
    _k_pointer(x, a).launch(grid=(1, 1, 1), block=(4, 1, 1))


@cute.kernel
def _k_static(x: cute.Tensor, a: WithStatic):
    t = cute.arch.thread_idx()[0]
    x[t] = a.y[t] + a.n * a.shift


@cute.jit
def _static(x: cute.Tensor, a: WithStatic):
    _k_static(x, a).launch(grid=(1, 1, 1), block=(4, 1, 1))


def _arrays():
    x = np.zeros(4, dtype=np.float32)
    y = np.arange(4, dtype=np.float32) * 10
    return x, from_dlpack(x), y, from_dlpack(y)


def test_the_numbers_of_a_dataclass_are_its_runtime_values():
    assert protocol_values(Scalars(cutlass.Int32(3), cutlass.Float32(0.5))) == [(cutlass.Int32, 3), (cutlass.Float32, 0.5)]
    x, xt, y, yt = _arrays()
    # tensors are not among them (they have paths of their own); Constexpr fields are compile-time values
    assert protocol_values(WithStatic(yt, cutlass.Int32(2), 5)) == [(cutlass.Int32, 2)]


def test_a_compiled_function_follows_a_dataclass_of_numbers():
    x, xt, _, _ = _arrays()
    c = cute.compile(_scalars, xt, Scalars(cutlass.Int32(1), cutlass.Float32(0.5)))
    for n, al in [(1, 0.5), (7, 0.25), (3, 2.0), (7, 0.25)]:
        x[:] = 0
        c(xt, Scalars(cutlass.Int32(n), cutlass.Float32(al)))
        assert x.tolist() == [n * al] * 4


@pytest.mark.parametrize("compiled", [True, False], ids=["cute.compile", "jit call"])
def test_a_dataclass_holding_a_tensor_follows_its_numbers(compiled):
    x, xt, y, yt = _arrays()
    f = cute.compile(_tensor, xt, WithTensor(yt, cutlass.Int32(1))) if compiled else _tensor
    for n in (1, 7, 3, 1):
        f(xt, WithTensor(yt, cutlass.Int32(n)))
        assert x.tolist() == (y + n).tolist()


@pytest.mark.parametrize("compiled", [True, False], ids=["cute.compile", "jit call"])
def test_a_dataclass_holding_a_pointer_follows_its_numbers(compiled):
    x, xt, y, yt = _arrays()
    ptr = make_ptr(cutlass.Float32, y.ctypes.data, cute.AddressSpace.gmem, assumed_align=16)
    f = cute.compile(_pointer, xt, WithPointer(ptr, cutlass.Int32(1))) if compiled else _pointer
    for n in (1, 7, 3):
        f(xt, WithPointer(ptr, cutlass.Int32(n)))
        assert x.tolist() == (y + n).tolist()


def test_a_dataclass_of_placeholder_pointers_follows_its_numbers():
    """cute.compile with a placeholder pointer inside a dataclass: each call's pointer and numbers."""
    x, xt, y, yt = _arrays()
    ph = make_ptr(cutlass.Float32, 16, cute.AddressSpace.gmem, assumed_align=16)
    c = cute.compile(_pointer, xt, WithPointer(ph, cutlass.Int32(1)))
    ptr = make_ptr(cutlass.Float32, y.ctypes.data, cute.AddressSpace.gmem, assumed_align=16)
    for n in (1, 7, 3):
        c(xt, WithPointer(ptr, cutlass.Int32(n)))
        assert x.tolist() == (y + n).tolist()


def test_a_changed_compile_time_field_beside_a_tensor_is_refused():
    x, xt, y, yt = _arrays()
    c = cute.compile(_static, xt, WithStatic(yt, cutlass.Int32(2), 5))
    c(xt, WithStatic(yt, cutlass.Int32(3), 5))
    assert x.tolist() == (y + 15).tolist()
    with pytest.raises(LaunchError, match=r"argument 1 is WithStatic\(.*shift=6\).*compiled with WithStatic\(.*shift=5\)"):
        c(xt, WithStatic(yt, cutlass.Int32(3), 6))


def test_a_kernel_launched_with_other_values_beside_a_tensor_is_traced_for_them():
    """The kernel's own trace cache: a dataclass holding a tensor keys on its other values too."""
    x, xt, y, yt = _arrays()
    for shift in (1, 4, 1):
        _static(xt, WithStatic(yt, cutlass.Int32(2), shift), no_cache=True)
        assert x.tolist() == (y + 2 * shift).tolist()


class Epilogue(typing.NamedTuple):
    """quack's epilogue arguments' shape: a NamedTuple of tensors, runtime numbers and Constexpr fields."""
    y: cute.Tensor
    alpha: typing.Optional[cutlass.Float32] = None
    scale: Constexpr[int] = 1


@cute.kernel
def _k_epi(x: cute.Tensor, e: Epilogue):
    t = cute.arch.thread_idx()[0]
    x[t] = e.y[t] * e.alpha * e.scale


@cute.jit
def _epi(x: cute.Tensor, e: Epilogue):
    _k_epi(x, e).launch(grid=(1, 1, 1), block=(4, 1, 1))


def test_a_namedtuple_holding_a_tensor_follows_its_numbers():
    x, xt, y, yt = _arrays()
    assert protocol_values(Epilogue(yt, cutlass.Float32(0.5), 3)) == [(cutlass.Float32, 0.5)]
    c = cute.compile(_epi, xt, Epilogue(yt, cutlass.Float32(0.5), 3))
    for alpha in (0.5, 2.0, 0.25):
        c(xt, Epilogue(yt, cutlass.Float32(alpha), 3))
        assert x.tolist() == (y * alpha * 3).tolist()
    c(xt, Epilogue(yt, cutlass.Float32(1.0), None))  # a Constexpr field left None keeps the compile's value
    assert x.tolist() == (y * 3).tolist()
    with pytest.raises(LaunchError, match="scale=2"):
        c(xt, Epilogue(yt, cutlass.Float32(1.0), 2))
