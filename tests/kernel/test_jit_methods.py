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
