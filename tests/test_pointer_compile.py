"""cute.compile with placeholder pointers (``make_ptr(dtype, 16, gmem, assumed_align=16)``), then calls
with real pointers (make_ptr of an array's address), as CUTLASS's Blackwell rmsnorm.py does: each call
runs on its own memory; pointers that do not fit what was compiled are refused by name; a kernel over a
pointer with no memory behind it is an error, not a crash."""

from __future__ import annotations

import contextlib
import dataclasses
import io

import numpy as np
import pytest

import cutelab as cute
from cutelab import Float16, Float32, Int32
from cutelab.errors import LaunchError
from cutelab.kernel.launch.pointers import PointerCompiled
from cutelab.runtime import make_ptr


@cute.kernel
def _scale(X: cute.Tensor, O: cute.Tensor, a: Float32):
    t, _, _ = cute.arch.thread_idx()
    b, _, _ = cute.arch.block_idx()
    O[b * 32 + t] = X[b * 32 + t] * a


class _Op:
    @cute.jit
    def __call__(self, x: cute.Pointer, o: cute.Pointer, n: Int32, a: Float32):
        X = cute.make_tensor(x, cute.make_layout(n))
        O = cute.make_tensor(o, cute.make_layout(n))
        print("compiling", X)
        _scale(X, O, a).launch(grid=[n // 32, 1, 1], block=[32, 1, 1])


def _placeholders(dtype=Float32):
    return (make_ptr(dtype, 16, cute.AddressSpace.gmem, assumed_align=16),
            make_ptr(dtype, 16, cute.AddressSpace.gmem, assumed_align=16))


def test_compiled_once_then_called_with_the_memory_of_each_call():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        f = cute.compile(_Op(), *_placeholders(), Int32(32), Float32(1.0))
    assert isinstance(f, PointerCompiled)
    assert out.getvalue().startswith("compiling tensor<ptr<f32, gmem, align<16>> o ?:1>")  # printed at compile
    for n, a in ((64, 2.0), (96, -0.5), (64, 3.0)):
        x = np.arange(n, dtype=np.float32) + n
        o = np.zeros(n, np.float32)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            f(make_ptr(Float32, x.ctypes.data), make_ptr(Float32, o.ctypes.data), Int32(n), Float32(a))
        assert out.getvalue() == ""  # a compiled function prints nothing
        np.testing.assert_array_equal(o, x * np.float32(a))


def test_torch_tensors_through_data_ptr():
    torch = pytest.importorskip("torch")
    f = cute.compile(_Op(), *_placeholders(), Int32(32), Float32(1.0))
    x = torch.arange(64, dtype=torch.float32)
    o = torch.zeros(64, dtype=torch.float32)
    f(make_ptr(Float32, x.data_ptr()), make_ptr(Float32, o.data_ptr()), Int32(64), Float32(2.0))
    assert torch.equal(o, x * 2)
    # a tensor where a pointer was compiled is its data pointer (CuTe DSL passes a tensor's descriptor, which starts
    # with it; CUTLASS's block-scaled LDMCxSTMC GEMM calls its compiled GEMM so)
    from cutelab.runtime import from_dlpack

    f(make_ptr(Float32, x.data_ptr()), from_dlpack(o, assumed_align=16), Int32(64), Float32(3.0))
    assert torch.equal(o, x * 3)


def test_calls_that_do_not_fit_the_compiled_pointers_are_refused():
    f = cute.compile(_Op(), *_placeholders(), Int32(32), Float32(1.0))
    x = np.zeros(80, np.float32)
    o = np.zeros(64, np.float32)
    xp, op = make_ptr(Float32, x.ctypes.data), make_ptr(Float32, o.ctypes.data)
    h = np.zeros(64, np.float16)
    with pytest.raises(LaunchError, match=r"argument 0 is a pointer to f16 elements, but the function was compiled for "
                                          r"ptr<f32, gmem, align<16>>"):
        f(make_ptr(Float16, h.ctypes.data), op, Int32(32), Float32(1.0))
    with pytest.raises(LaunchError, match=r"argument 0 points to 0x[0-9a-f]+, not aligned to the 16 bytes"):
        f(xp + 1, op, Int32(32), Float32(1.0))
    with pytest.raises(LaunchError, match="argument 1 was compiled as a pointer"):
        f(xp, o, Int32(32), Float32(1.0))
    with pytest.raises(LaunchError, match=r"_scale.launch at .*: argument O is a tensor over raw_ptr\(0x0000000000001000: "
                                          r"f32, gmem, align<16>\), a pointer made by make_ptr from a bare integer address"):
        f(xp, make_ptr(Float32, 4096), Int32(32), Float32(1.0))  # no memory behind it: refused where a kernel uses it
    with pytest.raises(LaunchError, match="argument 0 points 4 elements before the start of the memory"):
        f(xp + (-4), op, Int32(32), Float32(1.0))
    with pytest.raises(LaunchError, match="expected 4 arguments"):
        f(xp, op, Int32(32))
    f(xp + 4, op, Int32(64), Float32(1.0))  # 16-byte aligned: fine (x[4:68])


def test_a_kernel_over_a_pointer_with_no_memory_is_an_error_naming_the_argument():
    with pytest.raises(LaunchError, match=r"_scale.launch at .*test_pointer_compile.py:\d+: argument X is a tensor over "
                                          r"raw_ptr\(0x0000000000000010: f32, gmem"):
        with contextlib.redirect_stdout(io.StringIO()):
            _Op()(*_placeholders(), Int32(32), Float32(1.0))


def test_gpu_memory_through_data_ptr():
    # on a GPU: make_ptr of a CUDA tensor's data_ptr() is a pointer into its storage that kernels use there
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no GPU")
    from cutelab.runtime import DeviceEngine

    f = cute.compile(_Op(), *_placeholders(), Int32(32), Float32(1.0))
    x = torch.arange(96, dtype=torch.float32, device="cuda")
    o = torch.zeros(64, dtype=torch.float32, device="cuda")
    xp = make_ptr(Float32, x.data_ptr() + 32 * 4)
    assert type(xp.engine) is DeviceEngine and len(xp.engine) == 64  # to the end of x's storage
    f(xp, make_ptr(Float32, o.data_ptr()), Int32(64), Float32(2.0))
    torch.cuda.synchronize()
    assert torch.equal(o, x[32:] * 2)


class _OpUnused:
    @cute.jit
    def __call__(self, x: cute.Pointer, o: cute.Pointer, unused: cute.Pointer, n: Int32):
        X = cute.make_tensor(x, cute.make_layout(n))
        O = cute.make_tensor(o, cute.make_layout(n))
        _scale(X, O, Float32(3.0)).launch(grid=[n // 32, 1, 1], block=[32, 1, 1])


def test_a_null_pointer_no_kernel_uses_passes():
    f = cute.compile(_OpUnused(), *_placeholders(), cute.runtime.nullptr(Float32, cute.AddressSpace.gmem), Int32(32))
    x = np.arange(32, dtype=np.float32)
    o = np.zeros(32, np.float32)
    f(make_ptr(Float32, x.ctypes.data), make_ptr(Float32, o.ctypes.data), cute.runtime.nullptr(Float32), Int32(32))
    np.testing.assert_array_equal(o, x * 3)


@dataclasses.dataclass
class _Sched:
    sem: cute.Pointer  # quack's TileSchedulerOptions.tile_count_semaphore
    n: Int32


@cute.kernel
def _take(p: _Sched, got: cute.Tensor):
    t, _, _ = cute.arch.thread_idx()
    got[t] = cute.arch.atomic_add(p.sem, Int32(1))


@cute.jit
def _take_all(got: cute.Tensor, p: _Sched):
    _take(p, got).launch(grid=[1, 1, 1], block=[32, 1, 1])


@pytest.mark.parametrize("fake", [False, True], ids=["tensor", "fake_tensor"])
def test_a_placeholder_pointer_inside_a_dataclass(fake):
    """quack's GEMMs compile with make_ptr(Int32, 0, gmem) in a dataclass field (beside fake tensors) and
    call with the semaphore's data_ptr() there (the TVM-FFI style): the kernel takes it as a pointer
    argument in the trace and at each call, over that call's memory."""
    from cutelab.fake import make_fake_tensor
    from cutelab.runtime import from_dlpack

    got = np.zeros(32, np.int32)
    g = make_fake_tensor(Int32, (32,), stride=(1,)) if fake else from_dlpack(got)
    with contextlib.redirect_stdout(io.StringIO()):
        c = cute.compile(_take_all, g, _Sched(make_ptr(Int32, 0, cute.AddressSpace.gmem, assumed_align=4), Int32(1)))
    for start in (0, 100):
        sem = np.array([start], np.int32)
        c(got if fake else from_dlpack(got), _Sched(sem.ctypes.data, Int32(1)))  # an address, as TVM-FFI passes it
        assert sorted(got.tolist()) == list(range(start, start + 32)) and sem[0] == start + 32
    sem2 = np.array([7], np.int32)
    c(got if fake else from_dlpack(got), _Sched(make_ptr(Int32, sem2.ctypes.data, cute.AddressSpace.gmem), Int32(1)))
    assert sem2[0] == 39
