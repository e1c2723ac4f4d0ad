"""A cutlass.Boolean argument of a @cute.jit function is a runtime value, as Int32 arguments are:
it prints '?' while tracing, reaches a kernel as a parameter (one compiled kernel for both values)
and each call runs with its own value."""

import numpy as np
import torch

import cutelab as cute
import cutelab as cutlass
from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor, fake_gpu
from cutelab.runtime import from_dlpack


@cute.kernel
def _pick(flag: cutlass.Boolean, n: cutlass.Int32, out: cute.Tensor):
    if flag:
        out[0] = n
    else:
        out[0] = -n


@cute.jit
def _host(flag: cutlass.Boolean, n: cutlass.Int32, out: cute.Tensor):
    print("trace", flag, n)
    _pick(flag, n, out).launch(grid=(1, 1, 1), block=(1, 1, 1))


def test_boolean_argument_is_dynamic_on_the_cpu(capsys):
    a = np.zeros(4, np.int32)
    t = from_dlpack(a)
    f = cute.compile(_host, cutlass.Boolean(True), cutlass.Int32(3), t)
    assert capsys.readouterr().out == "trace ? ?\n"
    f(cutlass.Boolean(True), cutlass.Int32(3), t)
    assert a[0] == 3
    f(cutlass.Boolean(False), cutlass.Int32(3), t)
    assert a[0] == -3
    f(True, 5, t)  # plain Python values of the annotated types
    assert a[0] == 5
    assert capsys.readouterr().out == ""  # a compiled function prints no trace-time prints


def test_boolean_argument_is_a_kernel_parameter_on_the_gpu():
    with fake_gpu() as g:
        t = from_dlpack(fake_cuda_tensor(torch.zeros(4, dtype=torch.int32)))
        f = cute.compile(_host, cutlass.Boolean(True), cutlass.Int32(3), t)
        f(cutlass.Boolean(True), cutlass.Int32(3), t)
        f(cutlass.Boolean(False), cutlass.Int32(4), t)
        assert g.nvrtc.compiles == 1  # one kernel for both values
        assert [r["params"][1:] for r in g.launches] == [[1, 3], [0, 4]]
