"""CuTe DSL's rule for @cute.jit arguments ("JIT Function Argument Generation"): an argument is a
runtime value unless annotated cutlass.Constexpr; its type comes from the call (bool -> Boolean,
int -> Int32, float -> Float32) or from its annotation, which the value must match. A compiled
function then takes other values of its runtime arguments (before: "argument 4 is False, but the
function was compiled with True"). Also: a static number changed inside a runtime branch or loop
is promoted to a runtime value, and int()/float() of a runtime value is refused, as in CuTe DSL."""

import numpy as np
import pytest
import torch

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import LaunchError, TraceError
from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor, fake_gpu
from cutelab.runtime import from_dlpack


@cute.kernel
def _scale_or_shift(a: cute.Tensor, scale, verbose):
    t, _, _ = cute.arch.thread_idx()
    if verbose:  # a runtime Boolean: a runtime if
        a[t] = a[t] * scale
    else:
        a[t] = a[t] + scale


@cute.jit
def _host(a: cute.Tensor, scale, n: cutlass.Constexpr, verbose):
    print("trace", scale, n, verbose)
    _scale_or_shift(a, scale, verbose).launch(grid=(1, 1, 1), block=(n, 1, 1))


def test_plain_arguments_are_runtime_values(capsys):
    x = np.ones(8, np.float32)
    t = from_dlpack(x)
    f = cute.compile(_host, t, 2.0, 8, True)
    assert capsys.readouterr().out == "trace ? 8 ?\n"  # Constexpr n is a value; the others print '?'
    f(t, 3.0, True)  # compiled callers leave the Constexpr argument out, as in CuTe DSL
    np.testing.assert_array_equal(x, 3.0)
    f(t, 3.0, False)  # compiled with True: another value of the runtime bool
    np.testing.assert_array_equal(x, 6.0)
    f(t, 0.5, True)
    np.testing.assert_array_equal(x, 3.0)
    assert capsys.readouterr().out == ""  # a compiled function prints no trace-time prints
    _host(t, 1.5, 8, False)  # a plain @cute.jit call
    np.testing.assert_array_equal(x, 4.5)
    _host(t, 2.0, 8, True)
    np.testing.assert_array_equal(x, 9.0)


@cute.kernel
def _fill(a: cute.Tensor, v):
    t, _, _ = cute.arch.thread_idx()
    a[t] = v


@cute.jit
def _fill_host(a: cute.Tensor, v, n: cutlass.Constexpr):
    _fill(a, v).launch(grid=(1, 1, 1), block=(n, 1, 1))


def test_constexpr_still_specialises():
    x = np.zeros(8, np.float32)
    t = from_dlpack(x)
    _fill_host(t, 1.0, 4)
    np.testing.assert_array_equal(x, [1, 1, 1, 1, 0, 0, 0, 0])  # block=(4,): n sized the launch
    _fill_host(t, 2.0, 8)
    np.testing.assert_array_equal(x, 2.0)


@cute.jit
def _typed(a: cute.Tensor, n: int, s: float, b: bool):
    print("typed", n, s, b, repr(n), repr(s), repr(b))


def test_annotations_type_the_arguments(capsys):
    t = from_dlpack(np.zeros(4, np.float32))
    _typed(t, 3, 2.0, True)
    assert capsys.readouterr().out == "typed ? ? ? Int32(?) Float32(?) Boolean(?)\n"
    with pytest.raises(LaunchError, match=r"argument s is annotated float, but the call gives 2 \(int\)"):
        _typed(t, 3, 2, True)  # CuTe DSL refuses it too (ARG_ANNOTATION_MISMATCH)
    with pytest.raises(LaunchError, match=r"argument n is annotated int, but the call gives 2\.5"):
        _typed(t, 2.5, 1.0, True)
    with pytest.raises(LaunchError, match=r"argument b is annotated bool, but the call gives 1 \(int\)"):
        _typed(t, 1, 1.0, 1)
    with pytest.raises(LaunchError, match=r"argument s is annotated float, but the call gives 'x'"):
        _typed(t, 1, "x", True)


@cute.jit
def _big(a: cute.Tensor, n):
    print("big", repr(n), n + 1)


def test_int_past_int32_wraps_with_a_warning(capsys):
    with pytest.warns(UserWarning, match=r"argument n = 1099511627777 does not fit in Int32 .* wraps to 1"):
        _big(from_dlpack(np.zeros(4, np.float32)), (1 << 40) + 1)  # CuTe DSL: Int32, truncated, a warning
    assert capsys.readouterr().out == "big Int32(?) ?\n"
    _big(from_dlpack(np.zeros(4, np.float32)), cutlass.Int64(1 << 40))
    assert capsys.readouterr().out == "big Int64(?) ?{i64}\n"


def test_runtime_scalar_fast_path_with_a_torch_tensor():
    """The generated call's names for a runtime argument's check do not clash with a torch
    tensor's (its device was once overwritten by the value: every call missed the fast path)."""
    with fake_gpu():
        a = fake_cuda_tensor(torch.zeros(8, dtype=torch.float32))
        with _quiet():
            f = cute.compile(_host, a, 2.0, 8, True)
        f(a, 2.0, True)
        assert f._fast.direct((a, 2.0, True), None) is True


def test_compiled_runtime_scalars_on_the_gpu_fast_path():
    """The generated call checks a runtime argument's value as it checked a constant's: the same
    value launches straight away; another finds (or makes) the trace for it."""
    with fake_gpu() as g:
        a = fake_cuda_tensor(torch.zeros(8, dtype=torch.float32))
        t = from_dlpack(a, assumed_align=16)
        with _quiet():
            f = cute.compile(_host, t, 2.0, 8, True)
        assert f._fast is None or f._fast.direct is not None
        f(t, 2.0, True)
        f(t, 2.0, True)
        fast = f._fast
        assert fast.direct is not None and "RA0" in fast.direct.source  # the value check written out
        assert fast.direct((t, 2.0, True), None) is True
        assert fast.direct((t, 2.0, False), None) is False  # another value: not this trace
        assert fast.direct((t, 2, True), None) is False  # another type (int for a Float32): the general path
        n0 = len(g.launches)
        f(t, 2.0, False)
        f(t, 3.0, False)
        assert len(g.launches) == n0 + 2
        bits = [r["params"][1] for r in g.launches]  # the Float32 scale reaches the kernel as a parameter
        assert np.array([bits[-1]], np.uint64).view(np.float32)[0] == 3.0


def _quiet():
    import contextlib
    import io

    return contextlib.redirect_stdout(io.StringIO())


# --------------------------------------------------------------------------- promotion in runtime regions

@cute.kernel
def _float_promoted(a: cute.Tensor):
    t, _, _ = cute.arch.thread_idx()
    x = 1.0
    if t % 2 == 0:
        x = 2.5
    a[t] = x


@cute.kernel
def _both_branches(a: cute.Tensor):
    t, _, _ = cute.arch.thread_idx()
    if t % 2 == 0:
        y = 3
    else:
        y = 7
    a[t] = y


@cute.kernel
def _bool_promoted(a: cute.Tensor):
    t, _, _ = cute.arch.thread_idx()
    f = False
    if t < 3:
        f = True
    if f:
        a[t] = 1.0
    else:
        a[t] = -1.0


@cute.kernel
def _float_into_int(a: cute.Tensor):
    t, _, _ = cute.arch.thread_idx()
    y = 0
    if t < 3:
        y = 2.5
    a[t] = y


@cute.kernel
def _loop_carried_float(a: cute.Tensor, n: cutlass.Int32):
    t, _, _ = cute.arch.thread_idx()
    acc = 0.5
    for i in range(n):
        acc = acc + 1.0
    a[t] = acc


@pytest.mark.parametrize("k, want", [
    (_float_promoted, [2.5, 1.0] * 4),
    (_both_branches, [3, 7] * 4),  # before: 7 everywhere (the last branch's value), silently
    (_bool_promoted, [1, 1, 1, -1, -1, -1, -1, -1]),
])
def test_static_values_changed_in_a_runtime_branch_are_promoted(k, want):
    x = np.zeros(8, np.float32)
    k(from_dlpack(x)).launch(grid=(1, 1, 1), block=(8, 1, 1))
    np.testing.assert_array_equal(x, np.array(want, np.float32))


def test_loop_carried_python_float_is_promoted():
    x = np.zeros(4, np.float32)
    _loop_carried_float(from_dlpack(x), cutlass.Int32(3)).launch(grid=(1, 1, 1), block=(4, 1, 1))
    np.testing.assert_array_equal(x, 3.5)


def test_promoted_int_refuses_a_float():
    with pytest.raises(TraceError, match=r"variable 'y' is a runtime Int32 .* set to the float 2\.5"):
        _float_into_int(from_dlpack(np.zeros(8, np.float32))).launch(grid=(1, 1, 1), block=(8, 1, 1))


def test_promoted_values_in_cuda():
    from cutelab.kernel.cuda.printer import CudaRenderer
    from cutelab.kernel.launch.plan import capture

    with capture() as ks:
        _both_branches(from_dlpack(np.zeros(8, np.float32))).launch(grid=(1, 1, 1), block=(8, 1, 1))
    src = CudaRenderer(ks[0]).render()
    assert "(int)(3ll)" in src and "(int)(7ll)" in src and "} else {" in src


# --------------------------------------------------------------------------- int() / float()

@cute.kernel
def _float_of_param(a: cute.Tensor, s: cutlass.Float32):
    t, _, _ = cute.arch.thread_idx()
    a[t] = float(s)


@cute.kernel
def _float_of_static(a: cute.Tensor):
    t, _, _ = cute.arch.thread_idx()
    a[t] = float(3) + int(2.7)


@cute.jit
def _int_of_arg(a: cute.Tensor, n):
    return int(n)


@cute.jit
def _int_of_constexpr(a: cute.Tensor, n: cutlass.Constexpr):
    _fill(a, 1.0).launch(grid=(1, 1, 1), block=(int(n), 1, 1))


def test_int_and_float_of_runtime_values_are_refused():
    x = np.zeros(4, np.float32)
    with pytest.raises(TraceError, match=r"float\(\) of a runtime value .*test_dynamic_args.py:\d+"):
        _float_of_param(from_dlpack(x), cutlass.Float32(1.0)).launch(grid=(1, 1, 1), block=(4, 1, 1))
    with pytest.raises(TypeError, match=r"int\(\) of a runtime value \(Int32\(\?\)\) at .*test_dynamic_args.py"):
        _int_of_arg(from_dlpack(x), 4)
    _float_of_static(from_dlpack(x)).launch(grid=(1, 1, 1), block=(4, 1, 1))
    np.testing.assert_array_equal(x, 5.0)
    _int_of_constexpr(from_dlpack(x), 2)
    np.testing.assert_array_equal(x, [1, 1, 5, 5])


# --------------------------------------------------------------------------- user types: JitArgument, DynamicExpression

class _Params:
    """CuTe DSL's DynamicExpression protocol: the values it carries are runtime values."""

    def __init__(self, scale, shift):
        self.scale, self.shift = scale, shift

    def __extract_mlir_values__(self):
        return [self.scale, self.shift]

    def __new_from_mlir_values__(self, values):
        return _Params(*values)


class _CParams:
    """CuTe DSL's JitArgument protocol: C pointers to values of the types it names."""

    def __init__(self, scale):
        import ctypes

        self.scale = scale
        self._c = ctypes.c_float(scale)

    def __c_pointers__(self):
        import ctypes

        return [ctypes.cast(ctypes.pointer(self._c), ctypes.c_void_p)]

    def __get_mlir_types__(self):
        return [cutlass.Float32]

    def __new_from_mlir_values__(self, values):
        p = _CParams.__new__(_CParams)
        p.scale = values[0]
        return p


@cute.kernel
def _affine(a: cute.Tensor, scale, shift):
    t, _, _ = cute.arch.thread_idx()
    a[t] = a[t] * scale + shift


@cute.jit
def _affine_host(a: cute.Tensor, p):
    print("params", p.scale, getattr(p, "shift", 0.0))
    _affine(a, p.scale, getattr(p, "shift", 0.0)).launch(grid=(1, 1, 1), block=(4, 1, 1))


def test_user_types_carry_runtime_values(capsys):
    x = np.ones(4, np.float32)
    t = from_dlpack(x)
    f = cute.compile(_affine_host, t, _Params(2.0, 1.0))
    assert capsys.readouterr().out == "params ? ?\n"
    f(t, _Params(2.0, 1.0))
    np.testing.assert_array_equal(x, 3.0)
    f(t, _Params(3.0, -1.0))  # another instance, other values: the same compiled function
    np.testing.assert_array_equal(x, 8.0)
    g = cute.compile(_affine_host, t, _CParams(0.5))
    assert capsys.readouterr().out == "params ? 0.0\n"
    g(t, _CParams(0.5))
    np.testing.assert_array_equal(x, 4.0)
    g(t, _CParams(0.25))
    np.testing.assert_array_equal(x, 1.0)
    with pytest.raises(LaunchError, match="argument 1 was compiled as a _CParams"):
        g(t, _Params(1.0, 1.0))
    _affine_host(t, _Params(1.0, 2.0))  # a plain @cute.jit call
    np.testing.assert_array_equal(x, 3.0)


@cute.kernel
def _bound_in_one_branch(a: cute.Tensor):
    t, _, _ = cute.arch.thread_idx()
    if t < 4:  # a runtime if with an else; `m` is bound in its then-branch only (as sm90_gemm's tm, tn)
        if t < 2:
            m = 5
            a[t] = m
    else:
        a[t] = -1.0


def test_number_bound_in_one_branch_stays_local_to_it():
    x = np.zeros(6, np.float32)
    _bound_in_one_branch(from_dlpack(x)).launch(grid=(1, 1, 1), block=(6, 1, 1))
    np.testing.assert_array_equal(x, [5, 5, 0, 0, -1, -1])
