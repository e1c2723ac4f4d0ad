"""cute.compile of a kernel class, as CUTLASS's examples write them: an object whose class has a
@cute.jit __call__, or a @cute.jit method taken from an object. Its Constexpr parameters are part
of the compiled function (callers leave them out) and its Int32 parameters are runtime values,
read from the user's signature without self, whatever Python version's inspect reads the object.
"""

from __future__ import annotations

import inspect
import types

import numpy as np
import torch

import cutelab as cute
import cutelab as cutlass
from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor, fake_gpu
from cutelab.kernel.launch.api import jit_target
from cutelab.runtime import from_dlpack


@cute.kernel
def _fill(out: cute.Tensor, v: cutlass.Int32, scale: cutlass.Constexpr):
    out[0] = v * scale


class Filler:
    """String annotations (this file uses `from __future__ import annotations`)."""

    @cute.jit
    def __call__(self, scale: cutlass.Constexpr, v: cutlass.Int32, out: cute.Tensor):
        print("trace", v)
        _fill(out, v, scale).launch(grid=(1, 1, 1), block=(1, 1, 1))

    @cute.jit
    def run(self, scale: cutlass.Constexpr, v: cutlass.Int32, out: cute.Tensor):
        _fill(out, v, scale).launch(grid=(1, 1, 1), block=(1, 1, 1))


def test_the_user_signature_without_self():
    f = Filler()
    for target in (f, f.run):
        sig = inspect.signature(jit_target(target))
        assert list(sig.parameters) == ["scale", "v", "out"]
    # the bound method a @cute.jit method reads as (not a partial of (*args, **kwargs))
    assert isinstance(f.run, types.MethodType)
    assert list(inspect.signature(f.run).parameters) == ["scale", "v", "out"]


def test_compiled_instance_leaves_out_its_constexpr_on_the_cpu(capsys):
    a = np.zeros(2, np.int32)
    t = from_dlpack(a)
    c = cute.compile(Filler(), 10, cutlass.Int32(3), t)
    assert capsys.readouterr().out == "trace ?\n"  # v is a runtime value
    c(cutlass.Int32(4), t)  # scale is compiled in: callers leave it out
    assert a[0] == 40
    c(7, t)
    assert a[0] == 70


def test_compiled_method_on_the_gpu_is_one_kernel_for_both_values():
    with fake_gpu() as g:
        t = from_dlpack(fake_cuda_tensor(torch.zeros(2, dtype=torch.int32)))
        c = cute.compile(Filler().run, 10, cutlass.Int32(3), t)
        c(cutlass.Int32(3), t)
        c(cutlass.Int32(5), t)
        assert g.nvrtc.compiles == 1
        assert [r["params"][1:] for r in g.launches] == [[3], [5]]


def test_calling_the_instance_directly_still_runs():
    a = np.zeros(2, np.int32)
    Filler()(2, 6, from_dlpack(a))
    assert a[0] == 12


def test_a_list_where_a_tensor_was_compiled_names_the_argument():
    import pytest

    from cutelab.errors import LaunchError

    a = np.zeros(2, np.int32)
    t = from_dlpack(a)
    c = cute.compile(Filler(), 10, cutlass.Int32(3), t)
    with pytest.raises(LaunchError, match=r"argument 1 .* is a list, but the function was compiled with a tensor"):
        c(3, [t])


def test_a_stream_whose_handle_is_zero():
    """torch's default stream has cuda_stream == 0: it is the legacy default stream, not a missing one."""
    from cutelab.kernel.launch.plan import _stream_handle

    class DefaultStream:
        cuda_stream = 0

    assert _stream_handle(DefaultStream()) == 0
    assert _stream_handle(7) == 7
    with fake_gpu() as g:
        t = from_dlpack(fake_cuda_tensor(torch.zeros(2, dtype=torch.int32)))
        c = cute.compile(Filler().run, 10, cutlass.Int32(3), t)
        c(cutlass.Int32(3), t, stream=DefaultStream())
        assert len(g.launches) == 1
    import pytest

    from cutelab.errors import LaunchError

    with pytest.raises(LaunchError, match="stream must be"):
        _stream_handle(object())


@cute.kernel
def _double(src: cute.Tensor, dst: cute.Tensor):
    i = cute.arch.thread_idx()[0]
    dst[i // 8, i % 8] = src[i // 8, i % 8] * 2


@cute.jit
def _host_double(src: cute.Tensor, dst: cute.Tensor):
    _double(src, dst).launch(grid=(1, 1, 1), block=(32, 1, 1))


def test_same_contiguous_storage_in_another_layout_runs_with_the_compiled_one():
    """As CuTe DSL's compiled functions do (they read only the address): CUTLASS's Lamport
    all-reduce benchmarks a function compiled for (M, N) tensors on (M*N,) ones. A warning names
    both layouts; a layout covering other storage is still refused."""
    import pytest

    from cutelab.errors import LaunchError

    a = np.arange(32, dtype=np.float32).reshape(4, 8)
    d = np.zeros((4, 8), np.float32)
    c = cute.compile(_host_double, from_dlpack(a), from_dlpack(d))
    flat_a, flat_d = np.arange(32, dtype=np.float32) + 100, np.zeros(32, np.float32)
    with pytest.warns(UserWarning, match=r"compiled with \(4,8\):\(8,1\); both cover the same 32 contiguous"):
        c(from_dlpack(flat_a), from_dlpack(flat_d))
    assert (flat_d == 2 * flat_a).all()
    strided = np.zeros(64, np.float32)[::2]  # 32 elements, stride 2: other storage
    with pytest.raises(LaunchError, match=r"layout \(32\):\(2\) instead of \(4,8\):\(8,1\)"):
        c(from_dlpack(flat_a), from_dlpack(strided))
    transposed = np.zeros((8, 4), np.float32).T  # the compiled shape with other strides: refused
    with pytest.raises(LaunchError, match=r"layout \(4,8\):\(1,4\) instead of \(4,8\):\(8,1\)"):
        c(from_dlpack(a), from_dlpack(transposed))
