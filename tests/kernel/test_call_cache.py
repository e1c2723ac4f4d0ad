"""What a compiled call remembers to skip work, on a pretend GPU (cutelab.kernel.cuda.fakegpu), and that a
call differing in anything the remembered checks depend on is still checked (or gets its own trace):

- the values a runtime scalar may take for a trace (quack's eps=1e-6 for the f32 nearest it, Int32(-100)),
  with -0.0, NaN and wrapped integers kept apart or together as their argument bits are;
- the generated calls of a FakeCompiled's last programs (``_hot``, ``_hots``), tried before its checks
  against the fakes: other shapes, dtypes, strides, devices, alignments and argument counts take those checks;
- the TVM-FFI style's env stream, looked up at each launch on the launch's device.
"""

from __future__ import annotations

import contextlib
import io
import math

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import LaunchError
from cutelab.kernel.cuda.fakegpu import FakeDeviceArray, fake_gpu
from cutelab.kernel.launch import compiled as compiled_mod
from cutelab.kernel.launch import fakes as fakes_mod
from cutelab.kernel.launch.plan import _scalar_bits
from cutelab.runtime import CUstream, from_dlpack, make_fake_compact_tensor

torch = pytest.importorskip("torch")
from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor  # noqa: E402  (needs torch)


@cute.kernel
def _axpb(x: cute.Tensor, y: cute.Tensor, s: cutlass.Float32, k: cutlass.Int32):
    t, _, _ = cute.arch.thread_idx()
    b, _, _ = cute.arch.block_idx()
    i = b * 32 + t
    if i < x.shape[0]:
        y[i] = x[i] * s + cutlass.Float32(k)


@cute.jit
def _host(x: cute.Tensor, y: cute.Tensor, s: cutlass.Float32, k: cutlass.Int32):
    _axpb(x, y, s, k).launch(grid=(cute.ceil_div(x.shape[0], 32), 1, 1), block=(32, 1, 1))


@cute.jit
def _host_stream(x: cute.Tensor, y: cute.Tensor, s: cutlass.Float32, k: cutlass.Int32, stream):
    _axpb(x, y, s, k).launch(grid=(cute.ceil_div(x.shape[0], 32), 1, 1), block=(32, 1, 1), stream=stream)


def _quiet():
    return contextlib.redirect_stdout(io.StringIO())


@pytest.fixture
def gpu():
    with fake_gpu() as g:
        yield g


@pytest.fixture
def lookups(monkeypatch):
    """Counts the general path's lookups of a trace for a call's runtime values."""
    seen = []
    real = compiled_mod._respecialize
    monkeypatch.setattr(compiled_mod, "_respecialize", lambda cf, args: seen.append(1) or real(cf, args))
    return seen


def _scalars(launch):
    """(s's bits, k's bits) of a recorded launch (the two tensors' addresses come first)."""
    return launch["params"][2], launch["params"][3]


def _f32(v):
    return _scalar_bits(cutlass.Float32, v)


def _i32(v):
    return _scalar_bits(cutlass.Int32, v)


def _tensors(n=64):
    return from_dlpack(FakeDeviceArray(np.zeros(n, np.float32)), assumed_align=16), \
        from_dlpack(FakeDeviceArray(np.zeros(n, np.float32)), assumed_align=16)


# --------------------------------------------------------------------------- runtime scalars

def test_a_python_float_that_rounds_to_the_traced_value_passes_the_generated_check(gpu, lookups):
    x, y = _tensors()
    with _quiet():
        f = cute.compile(_host, x, y, cutlass.Float32(1e-6), cutlass.Int32(-100))
    compiles = gpu.nvrtc.compiles
    for _ in range(3):
        f(x, y, 1e-6, -100)  # a Python float: the f32 nearest 1e-6 is the traced value
    assert len(lookups) == 1  # the first call only; the next ones pass the generated check
    for _ in range(3):
        f(x, y, 1e-6, cutlass.Int32(-100))  # another class for the same value: looked up once more
    assert len(lookups) == 2 and gpu.nvrtc.compiles == compiles and getattr(f, "_variant_cache", None) is None
    assert [_scalars(r) for r in gpu.launches] == [(_f32(1e-6), _i32(-100))] * 6
    f(x, y, 1e-6, 2 ** 32 - 100)  # an int that wraps to -100: the same Int32 argument bits
    assert _scalars(gpu.launches[-1]) == (_f32(1e-6), _i32(-100)) and getattr(f, "_variant_cache", None) is None


def test_other_values_get_their_own_trace_and_bits(gpu, lookups):
    x, y = _tensors()
    with _quiet():
        f = cute.compile(_host, x, y, cutlass.Float32(1e-6), cutlass.Int32(-100))
    for s, k in [(1e-6, -100), (2e-6, -100), (2e-6, 7), (1e-6, -100), (2e-6, 7), (2e-6, 7)]:
        f(x, y, s, k)
        assert _scalars(gpu.launches[-1]) == (_f32(s), _i32(k))
    assert len(f._variant_cache) == 2
    with pytest.raises(LaunchError, match="compiled as a runtime"):
        f(x, y, True, -100)  # a bool for a Float32: refused, as before


def test_minus_zero_is_not_zero(gpu):
    """-0.0 == 0.0 in Python, but its argument bits differ: a trace for 0.0 must not run a call with -0.0."""
    x, y = _tensors()
    with _quiet():
        f = cute.compile(_host, x, y, cutlass.Float32(0.0), cutlass.Int32(0))
    for s in [0.0, -0.0, 0.0, -0.0, -0.0, 0.0]:
        f(x, y, s, 0)
        assert _scalars(gpu.launches[-1])[0] == _f32(s), s
    assert _f32(-0.0) != _f32(0.0)


def test_every_nan_is_one_trace(gpu):
    x, y = _tensors()
    with _quiet():
        f = cute.compile(_host, x, y, cutlass.Float32(1.0), cutlass.Int32(0))
    compiles = gpu.nvrtc.compiles
    for _ in range(4):
        f(x, y, float("nan"), 0)  # a new NaN object each time: NaN != NaN, but one key
        bits = np.array([_scalars(gpu.launches[-1])[0]], np.uint64).view(np.float32)[0]
        assert math.isnan(bits)
    assert len(f._variant_cache) == 1 and gpu.nvrtc.compiles <= compiles + 1


def test_the_accepted_values_are_bounded(gpu):
    x, y = _tensors()
    with _quiet():
        f = cute.compile(_host, x, y, cutlass.Float32(1.0), cutlass.Int32(0))
    for k in range(100):  # 100 doubles that all round to the f32 1.0
        f(x, y, 1.0 + k * 2.0 ** -40, 0)
    assert [_scalars(r)[0] for r in gpu.launches] == [_f32(1.0)] * 100
    assert all(len(s) <= 64 for s in f._fast.dyn_ok[0].values())
    assert getattr(f, "_variant_cache", None) is None


# --------------------------------------------------------------------------- FakeCompiled's last call

@pytest.fixture
def quick_keys(monkeypatch):
    """Counts FakeCompiled's look-ups past its last call's generated call."""
    seen = []
    real = fakes_mod._quick_key
    monkeypatch.setattr(fakes_mod, "_quick_key", lambda args: seen.append(1) or real(args))
    return seen


def _fake_compiled(align=16):
    n = cute.sym_int()
    with _quiet():
        return cute.compile(_host, make_fake_compact_tensor(cutlass.Float32, (n,), assumed_align=align),
                            make_fake_compact_tensor(cutlass.Float32, (n,), assumed_align=align),
                            cutlass.Float32(0.0), cutlass.Int32(0))


def _aligned(n, align, off=0, dtype=torch.float32):
    """A fake-CUDA torch tensor of n elements whose address is align-aligned, plus off bytes."""
    buf = torch.zeros(n + 256, dtype=dtype)
    item = buf.element_size()
    skip = ((-buf.data_ptr()) % align + off) // item
    t = fake_cuda_tensor(buf[skip:skip + n])
    assert (t.data_ptr() - off) % align == 0
    return t


def test_a_fake_compiled_call_runs_its_last_program_without_the_checks(gpu, quick_keys):
    f = _fake_compiled()
    x, y = _aligned(64, 16), _aligned(64, 16)
    for _ in range(3):
        f(x, y, 1e-6, -100)
    assert len(quick_keys) == 1 and len(gpu.launches) == 3
    x2, y2 = _aligned(64, 16), _aligned(64, 16)  # other tensors of the same description: new addresses
    f(x2, y2, 1e-6, -100)
    assert len(quick_keys) == 1
    assert gpu.launches[-1]["params"][:2] == [x2.data_ptr(), y2.data_ptr()]
    assert _scalars(gpu.launches[-1]) == (_f32(1e-6), _i32(-100))
    f(x2, y2, 3e-6, -100)  # another eps: its own trace and bits
    assert _scalars(gpu.launches[-1]) == (_f32(3e-6), _i32(-100))
    f(x2, y2, 3e-6, -100)
    assert _scalars(gpu.launches[-1]) == (_f32(3e-6), _i32(-100)) and len(quick_keys) == 2


def test_torch_tensors_after_a_fake_compile_are_checked_in_the_generated_call(gpu):
    """A function compiled with fake tensors and called with torch tensors: the torch tensors' checks
    (type, dtype, shape, strides, device, alignment) are written out in the generated call, which
    no longer goes through the per-argument getters; a tensor they refuse still takes the general
    path's checks, which name what differs."""
    f = _fake_compiled()
    x, y = _aligned(64, 16), _aligned(64, 16)
    f(x, y, 1.0, 0)
    f(x, y, 1.0, 0)
    hot = f._hot
    assert hot is not None and "x.data_ptr()" in hot.source
    gets = []
    for cf in f.cache.values():
        fast = cf._fast
        for k, (p, g) in enumerate(fast.getters):
            hot.__globals__[f"G{k}"] = (lambda g: (lambda t: gets.append(1) or g(t)))(g)
    f(_aligned(64, 16), _aligned(64, 16), 1.0, 0)
    assert gets == [] and gpu.launches[-1]["params"][:2] != [x.data_ptr(), y.data_ptr()]
    with pytest.raises(LaunchError, match="not 16-byte aligned"):
        f(_aligned(64, 16, off=4), y, 1.0, 0)
    with pytest.raises(LaunchError, match="holds Int32"):
        f(fake_cuda_tensor(torch.zeros(64, dtype=torch.int32)), y, 1.0, 0)
    assert gets  # a tensor of another kind goes to its getters before the general path names it


def test_another_shape_dtype_or_argument_count_takes_the_checks(gpu, quick_keys):
    f = _fake_compiled()
    x, y = _aligned(64, 16), _aligned(64, 16)
    f(x, y, 1.0, 0)
    f(x, y, 1.0, 0)
    a, b = _aligned(96, 16), _aligned(96, 16)  # another extent of the sym_int: another program
    f(a, b, 1.0, 0)
    assert len(quick_keys) == 2 and len(f.cache) == 2
    assert gpu.launches[-1]["grid"] == (3, 1, 1) and gpu.launches[-1]["params"][:2] == [a.data_ptr(), b.data_ptr()]
    with pytest.raises(LaunchError, match="holds Int32"):
        f(fake_cuda_tensor(torch.zeros(96, dtype=torch.int32)), b, 1.0, 0)
    with pytest.raises(LaunchError, match="the same sym_int is 96"):
        f(a, _aligned(64, 16), 1.0, 0)
    with pytest.raises(LaunchError, match="expected 4 arguments"):
        f(a, b, 1.0)
    with pytest.raises(LaunchError, match="expected 4 arguments"):
        f(a, b, 1.0, 0, 0)
    n = len(gpu.launches)
    f(a, b, 1.0, 0)
    assert len(gpu.launches) == n + 1


def test_shapes_in_turn_run_their_programs_without_the_checks(gpu, quick_keys):
    """A function called with a few shapes in turn keeps the generated calls of the last 4 programs."""
    f = _fake_compiled()
    pairs = [(_aligned(m, 16), _aligned(m, 16)) for m in (32, 64, 96, 128, 160)]
    for x, y in pairs[:4]:
        f(x, y, 1.0, 0)
    assert len(quick_keys) == 4 and len(f._hots) == 3
    for _ in range(3):
        for x, y in pairs[:4]:
            f(x, y, 1.0, 0)
            assert gpu.launches[-1]["params"][:2] == [x.data_ptr(), y.data_ptr()]
            assert gpu.launches[-1]["grid"] == (x.shape[0] // 32, 1, 1)
    assert len(quick_keys) == 4
    f(*pairs[4], 1.0, 0)  # a fifth: the checks, and the oldest is dropped
    assert len(quick_keys) == 5 and len(f._hots) == 3
    f(*pairs[0], 1.0, 0)
    assert len(quick_keys) == 6 and gpu.launches[-1]["params"][:2] == [p.data_ptr() for p in pairs[0]]


def test_the_fakes_alignment_is_checked_past_what_the_code_assumes(gpu):
    """A fake's assumed_align of 32 is more than the 16 bytes a program's code may assume from its first
    call's addresses: a 16-byte aligned address is still refused, after any number of calls."""
    f = _fake_compiled(align=32)
    x, y = _aligned(64, 32), _aligned(64, 32)
    f(x, y, 1.0, 0)
    f(x, y, 1.0, 0)
    with pytest.raises(LaunchError, match="not 32-byte aligned"):
        f(_aligned(64, 32, off=16), y, 1.0, 0)
    assert len(gpu.launches) == 2


def test_an_address_aligned_less_than_the_first_calls_gets_its_own_program(gpu):
    """The first call's 16-byte aligned addresses let its program assume 16 bytes; a fake of assumed_align=4
    allows 4: such a call runs a program compiled for it (it was refused by from_dlpack's check)."""
    f = _fake_compiled(align=4)
    x, y = _aligned(64, 16), _aligned(64, 16)
    f(x, y, 1.0, 0)
    x4 = _aligned(64, 16, off=4)
    f(x4, y, 1.0, 0)
    f(x4, y, 1.0, 0)
    f(x, y, 1.0, 0)
    assert len(f.cache) == 2 and [r["params"][0] for r in gpu.launches] == [x.data_ptr()] + [x4.data_ptr()] * 2 + \
        [x.data_ptr()]


def test_strides_of_extent_one_modes_are_compared(gpu, quick_keys):
    """A contiguous tensor whose extent-1 mode has another stride has another layout: it takes the checks
    (the fakes' symbolic strides are checked there), not the last call's program."""
    n = cute.sym_int()
    with _quiet():
        f = cute.compile(_host, make_fake_compact_tensor(cutlass.Float32, (n, 8), stride_order=(1, 0)),
                         make_fake_compact_tensor(cutlass.Float32, (n, 8), stride_order=(1, 0)),
                         cutlass.Float32(0.0), cutlass.Int32(0))
    x, y = fake_cuda_tensor(torch.zeros(1, 8)), fake_cuda_tensor(torch.zeros(1, 8))
    f(x, y, 1.0, 0)
    f(x, y, 1.0, 0)
    assert len(quick_keys) == 1
    w = fake_cuda_tensor(torch.zeros(2, 16)[::2, :8])  # (1, 8) with strides (16, 1): contiguous too
    assert w.is_contiguous() and w.stride() != x.stride()
    f(w, y, 1.0, 0)
    assert len(quick_keys) == 2 and len(f.cache) == 2


def test_a_host_tensor_after_device_ones_runs_on_the_interpreter(gpu):
    f = _fake_compiled()
    x, y = _aligned(64, 16), _aligned(64, 16)
    f(x, y, 1.0, 0)
    f(x, y, 1.0, 0)
    a = torch.arange(64, dtype=torch.float32)
    b = torch.zeros(64)
    f(a, b, 2.0, 1)  # CPU tensors: the checks, then the CPU interpreter (nothing launched on the "GPU")
    assert len(gpu.launches) == 2 and torch.equal(b, 2 * a + 1)


# --------------------------------------------------------------------------- the TVM-FFI style's stream

def test_env_stream_is_the_current_stream_of_the_launch_device(gpu, quick_keys):
    from cutelab.compat import tvm_ffi
    from cutelab.kernel.launch import plan

    n = cute.sym_int()
    with _quiet():
        f = tvm_ffi.compile(_host_stream, make_fake_compact_tensor(cutlass.Float32, (n,)),
                            make_fake_compact_tensor(cutlass.Float32, (n,)), cutlass.Float32(0.0),
                            cutlass.Int32(0), tvm_ffi.make_fake_stream(use_tvm_ffi_env_stream=True))
    assert isinstance(f, tvm_ffi.TvmFfiFunction)
    x, y = _aligned(64, 16), _aligned(64, 16)
    plan._torch_stream = lambda dev: 0x5000 + dev  # (fake_gpu puts its own back when it ends)
    f(x, y, 1.0, 0)
    f(x, y, 1.0, 0)
    assert [r["stream"] for r in gpu.launches] == [0x5000, 0x5000]
    plan._torch_stream = lambda dev: 0x6000 + dev  # another current stream: looked up at each call
    f(x, y, 1.0, 0)
    assert gpu.launches[-1]["stream"] == 0x6000 and len(quick_keys) == 1
    f(x, y, 1.0, 0, CUstream(0x77))  # a stream given: that one
    assert gpu.launches[-1]["stream"] == 0x77
    f(x, y, 2.0, 3)
    assert gpu.launches[-1]["stream"] == 0x6000 and _scalars(gpu.launches[-1]) == (_f32(2.0), _i32(3))


@cute.jit
def _host_own_env_stream(x: cute.Tensor, y: cute.Tensor, s: cutlass.Float32, k: cutlass.Int32):
    from cutelab.runtime import EnvStream

    _axpb(x, y, s, k).launch(grid=(cute.ceil_div(x.shape[0], 32), 1, 1), block=(32, 1, 1), stream=EnvStream(0))


def test_an_env_stream_made_in_the_jit_function_is_looked_up_at_each_call(gpu):
    from cutelab.kernel.launch import plan

    x, y = _tensors()
    with _quiet():
        f = cute.compile(_host_own_env_stream, x, y, cutlass.Float32(1.0), cutlass.Int32(0))
    plan._torch_stream = lambda dev: 0x5000 + dev  # (fake_gpu puts its own back when it ends)
    f(x, y, 1.0, 0)
    plan._torch_stream = lambda dev: 0x6000 + dev
    f(x, y, 1.0, 0)
    assert [r["stream"] for r in gpu.launches] == [0x5000, 0x6000]
