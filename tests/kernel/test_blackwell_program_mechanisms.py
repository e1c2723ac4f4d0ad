"""Mechanisms that CUTLASS's Blackwell attention programs (mixed_input_fmha decode/prefill) needed, each on a
small kernel: cute.arch.atomic_fmax (its NaN / signed-zero order, the CUDA it prints), ``x in (a, b)`` on a
thread-index expression, TensorSSA.reshape of a loaded value, a @cute.jit helper called by another keeping its
Python ints static, and recast_ptr to another element type over an SmemAllocator.allocate_tensor array."""
import math

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import TraceError
from cutelab.runtime import from_dlpack


@cute.kernel
def fmax_kernel(dst: cute.Tensor, vals: cute.Tensor, olds: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    olds[tidx] = cute.arch.atomic_fmax(dst.iterator + tidx % 4, vals[tidx], sem="relaxed", scope="gpu")


def _fmax_run(dst, vals):
    olds = np.zeros(len(vals), np.float32)
    fmax_kernel(from_dlpack(dst), from_dlpack(vals), from_dlpack(olds)).launch(grid=(1, 1, 1),
                                                                                block=(len(vals), 1, 1))
    return olds


def test_atomic_fmax_on_the_cpu():
    rng = np.random.default_rng(0)
    vals = rng.normal(size=64).astype(np.float32)
    dst = np.full(4, -np.inf, np.float32)
    olds = _fmax_run(dst, vals)
    for j in range(4):
        mine = vals[j::4]
        assert dst[j] == mine.max()
        # thread by thread: each old value is the max of the threads before it on that word
        assert olds[j::4].tolist() == [-np.inf] + np.maximum.accumulate(mine)[:-1].tolist()


def test_atomic_fmax_nan_and_signed_zero():
    # as CuTe DSL's integer form: a NaN with a clear sign bit wins, -0 < +0, -inf loses to everything
    dst = np.array([1.0, -0.0, 0.0, -np.inf], np.float32)
    vals = np.array([np.nan, 0.0, -0.0, -5.0], np.float32)
    _fmax_run(dst, vals)
    assert math.isnan(dst[0])
    assert dst[1] == 0 and not math.copysign(1, dst[1]) < 0  # +0 over -0
    assert dst[2] == 0 and math.copysign(1, dst[2]) > 0  # -0 does not replace +0
    assert dst[3] == -5.0


def test_atomic_fmax_prints_integer_atomics():
    from cutelab.kernel.cuda.fakegpu import FakeDeviceArray, fake_gpu
    from cutelab.kernel.launch.plan import last_launch

    with fake_gpu():
        fmax_kernel(*[from_dlpack(FakeDeviceArray(b)) for b in (np.zeros(4, np.float32), np.zeros(8, np.float32),
                                                                 np.zeros(8, np.float32))]).launch(
            grid=(1, 1, 1), block=(8, 1, 1))
        src = last_launch().source
    assert "atom.relaxed.gpu.global.max.s32" in src and "atom.relaxed.gpu.global.min.u32" in src


@cute.kernel
def fmax_int_kernel(dst: cute.Tensor):
    cute.arch.atomic_fmax(dst.iterator, cutlass.Int32(1))


def test_atomic_fmax_refuses_other_types():
    with pytest.raises(TraceError, match="atomic_fmax takes Float32 only"):
        fmax_int_kernel(from_dlpack(np.zeros(1, np.int32))).launch(grid=(1, 1, 1), block=(1, 1, 1))


@cute.kernel
def in_kernel(out: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    wg = tidx // 32
    if wg in (1, 3):
        out[tidx] = 1
    elif wg not in (0,):
        out[tidx] = 2


def test_in_a_tuple_on_a_thread_index():
    out = np.zeros(128, np.int32)
    in_kernel(from_dlpack(out)).launch(grid=(1, 1, 1), block=(128, 1, 1))
    assert out.tolist() == [0] * 32 + [1] * 32 + [2] * 32 + [1] * 32


@cute.kernel
def reshape_kernel(a: cute.Tensor, b: cute.Tensor):
    r = cute.make_rmem_tensor((2, 4), cutlass.Float32)
    r.store(a.load().reshape((2, 4)))
    b.store(r.load().reshape((8,)) * 2.0)


def test_tensor_ssa_reshape_in_a_kernel():
    a = np.arange(8, dtype=np.float32)
    b = np.zeros(8, np.float32)
    reshape_kernel(from_dlpack(a), from_dlpack(b)).launch(grid=(1, 1, 1), block=(1, 1, 1))
    assert b.tolist() == (2 * a).tolist()


@cute.kernel
def reshape_bad_kernel(a: cute.Tensor):
    a.load().reshape((3, 3))


def test_tensor_ssa_reshape_needs_as_many_elements():
    with pytest.raises(TraceError, match="has 8 elements, shape"):
        reshape_bad_kernel(from_dlpack(np.zeros(8, np.float32))).launch(grid=(1, 1, 1), block=(1, 1, 1))


@cute.jit
def _helper(a: int, b: int, tiler: cute.Tile):
    return cute.make_layout(tiler[1] // 2 * b), (tiler[1] * a,)


_GOT: list = []


@cute.jit
def _outer():
    _GOT.append(_helper(2, 1, (256, 128, 128)))


def test_nested_jit_keeps_python_ints_static():
    _GOT.clear()
    _outer()
    layout, tiler = _GOT[0]
    assert str(layout) == "64:1" and tiler == (256,)

