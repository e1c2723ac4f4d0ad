"""cute.recast_ptr of a pointer into shared memory: the same bytes read as another element type
(quack's rmsnorm backward reuses its bf16 staging buffer for fp32 partial sums)."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
from cutelab import BFloat16, Float32, Int32, Uint16
from cutelab.errors import TraceError
from cutelab.kernel.cuda.printer import render
from cutelab.kernel.launch.plan import last_launch
from cutelab.runtime import from_dlpack
from cutelab.utils import SmemAllocator


@cute.kernel
def _pun(mIn: cute.Tensor, mHalves: cute.Tensor, mOut: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    smem = SmemAllocator()
    s16 = smem.allocate_tensor(Uint16, cute.make_layout(16), byte_alignment=16)
    s32 = cute.make_tensor(cute.recast_ptr(s16.iterator, dtype=Float32), cute.make_layout(8))
    s32[tidx] = mIn[tidx]  # written as f32 ...
    cute.arch.barrier()
    mHalves[tidx * 2] = s16[tidx * 2]  # ... read as its two 16-bit halves
    mHalves[tidx * 2 + 1] = s16[tidx * 2 + 1]
    cute.arch.barrier()
    s16[tidx * 2] = Uint16(0)  # the low half cleared through the 16-bit view
    cute.arch.barrier()
    mOut[tidx] = s32[tidx] * 2.0
    q = cute.recast_ptr(s16.iterator + 2, dtype=Int32)  # an offset of whole 4-byte elements
    mOut[tidx] = mOut[tidx] + cute.make_tensor(q, cute.make_layout(1))[0].to(Float32) * 0.0


def test_a_recast_shared_pointer_reads_and_writes_the_same_bytes():
    x = np.array([1.0, -2.5, 3.1415927, 1e-3, 65504.0, -0.0, 7.75, 1e30], np.float32)
    halves = np.zeros(16, np.uint16)
    out = np.zeros(8, np.float32)
    _pun(from_dlpack(x), from_dlpack(halves), from_dlpack(out)).launch(grid=1, block=8)
    np.testing.assert_array_equal(halves, x.view(np.uint16))
    truncated = (x.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
    np.testing.assert_array_equal(out, truncated * 2)
    ir = last_launch().ir
    assert sum(sh.bytes for sh in ir.shared) == 32  # the views add no shared memory
    src = render(ir)
    assert "float* const" in src and "reinterpret_cast<float*>" in src


@cute.kernel
def _bad_recast(mOut: cute.Tensor):
    smem = SmemAllocator()
    s16 = smem.allocate_tensor(BFloat16, cute.make_layout(16), byte_alignment=16)
    cute.recast_ptr(s16.iterator + 1, dtype=Float32)


def test_a_recast_that_splits_an_element_is_refused():
    with pytest.raises(TraceError, match=r"byte offset is not a multiple of Float32's 4 bytes"):
        _bad_recast(from_dlpack(np.zeros(1, np.float32))).launch(grid=1, block=1)
