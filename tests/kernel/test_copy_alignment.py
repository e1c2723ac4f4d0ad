"""A universal copy atom wider than its element (num_bits_per_copy) needs each call's address
aligned to its width as far as the tensor's type knows (CuTe DSL: 'S ptr alignment (32 bits) does
not meet requirement (64 bits) of atom'): refused on the host and in kernels, not split silently."""

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import TensorError, TraceError
from cutelab.runtime import from_dlpack


def _atom(bits):
    return cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cutlass.Float32, num_bits_per_copy=bits)


@cute.kernel
def _copy4(src: cute.Tensor, dst: cute.Tensor, shift: cutlass.Constexpr):
    tid, _, _ = cute.arch.thread_idx()
    s = cute.make_tensor(src.iterator + shift + 4 * tid, cute.make_layout(4))
    d = cute.make_tensor(dst.iterator + 4 * tid, cute.make_layout(4))
    cute.copy(_atom(128), s, d)


@cute.jit
def _launch(src: cute.Tensor, dst: cute.Tensor, shift: cutlass.Constexpr):
    _copy4(src, dst, shift).launch(grid=(1, 1, 1), block=(4, 1, 1))


def test_kernel_vector_copy_runs_when_aligned():
    a = np.arange(32, dtype=np.float32)
    out = np.zeros(16, np.float32)
    _launch(from_dlpack(a, assumed_align=16), from_dlpack(out, assumed_align=16), 4)
    assert np.array_equal(out, a[4:20])


@pytest.mark.parametrize("align, shift, side", [(4, 0, "source"), (16, 2, "source")])
def test_kernel_vector_copy_refused_when_not_known_aligned(align, shift, side):
    a = np.arange(32, dtype=np.float32)
    out = np.zeros(16, np.float32)
    with pytest.raises(TraceError, match=rf"kernel _copy4: cute\.copy at .*test_copy_alignment\.py:\d+: a 128-bit copy "
                                         rf"of Float32 needs 16-byte aligned addresses, but call 0 of the {side} .* "
                                         rf"only (4|8)-byte aligned \(S ptr alignment"):
        _launch(from_dlpack(a, assumed_align=align), from_dlpack(out, assumed_align=16), shift)
    assert not out.any()


def test_host_vector_copy_checks_declared_alignment_only():
    a = np.arange(8, dtype=np.float32)
    d = cute.make_rmem_tensor((2,), cutlass.Float32)  # registers: 32-byte aligned
    cute.copy(_atom(64), cute.make_tensor(from_dlpack(a, assumed_align=16).iterator + 2, cute.make_layout(2)), d)
    assert d.load().numpy().tolist() == [2.0, 3.0]
    with pytest.raises(TensorError, match=r"S ptr alignment \(32 bits\) does not meet requirement \(64 bits\)"):
        cute.copy(_atom(64), cute.make_tensor(from_dlpack(a, assumed_align=16).iterator + 1, cute.make_layout(2)), d)
    with pytest.raises(TensorError, match=r"D ptr alignment \(32 bits\)"):
        cute.copy(_atom(64), d, cute.make_tensor(from_dlpack(a).iterator, cute.make_layout(2)))
    # cutelab's own make_tensor over a numpy array claims no alignment: not checked (host memory)
    cute.copy(_atom(64), cute.make_tensor(a, cute.make_layout(2)), d)
    assert d.load().numpy().tolist() == [0.0, 1.0]
