"""Pointers at runtime addresses: cute.make_ptr of an Int64 the kernel read from memory (a grouped
GEMM's table of group addresses), tensors over them, their loads and stores on the CPU interpreter
and in the printed CUDA (kernel/instr/address_access.py)."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
from cutelab import Float32
from cutelab.errors import LaunchError, TraceError
from cutelab.kernel.cuda.printer import render
from cutelab.kernel.launch.plan import last_launch
from cutelab.runtime import DEVICE_MEMORY, from_dlpack


@cute.kernel
def _gather_scatter_kernel(ptrs: cute.Tensor, x: cute.Tensor, out: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    p = cute.make_ptr(Float32, ptrs[tidx // 2], cute.AddressSpace.gmem, assumed_align=4)
    t = cute.make_tensor(p, cute.make_layout(2))
    out[tidx] = t[tidx % 2] * 2.0
    t[tidx % 2] = Float32(7.0) + tidx


@cute.jit
def _gather_scatter(ptrs, x, out):
    _gather_scatter_kernel(ptrs, x, out).launch(grid=[1, 1, 1], block=[4, 1, 1])


def test_loads_and_stores_through_addresses_read_from_memory():
    x = np.arange(8, dtype=np.float32) + 1
    ptrs = np.array([x.ctypes.data + 8, x.ctypes.data + 20], dtype=np.int64)  # x[2:4] and x[5:7]
    out = np.zeros(4, np.float32)
    _gather_scatter(from_dlpack(ptrs), from_dlpack(x), from_dlpack(out))
    assert out.tolist() == [6.0, 8.0, 12.0, 14.0]
    assert x.tolist() == [1, 2, 7, 8, 5, 9, 10, 8]


def test_the_cuda_reads_the_address_and_drops_restrict_and_the_read_only_path():
    x = np.arange(8, dtype=np.float32)
    ptrs = np.array([x.ctypes.data, x.ctypes.data], dtype=np.int64)
    _gather_scatter(from_dlpack(ptrs), from_dlpack(x), from_dlpack(np.zeros(4, np.float32)))
    src = render(last_launch().ir)
    assert "const float* cl_ap" in src and "= (const float*)(unsigned long long)(r0[0])" in src
    assert "float* cl_ap" in src and "(float*)(unsigned long long)(r0[0])" in src
    head = src[src.index('extern "C"'):]
    head = head[:head.index("{")]
    assert "__restrict__" not in head  # a store through an address may write any argument
    assert "__ldg" not in src


@cute.kernel
def _toint_kernel(ptrs: cute.Tensor, out: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    p = cute.make_ptr(Float32, ptrs[0], cute.AddressSpace.gmem, assumed_align=4)
    a = (p + 1).toint() + tidx * 4  # the address of element 1 + tidx, an Int64 value
    out[tidx] = cute.make_tensor(cute.make_ptr(Float32, a, cute.AddressSpace.gmem), cute.make_layout(1))[0]
    ptrs[1 + tidx] = a


@cute.jit
def _toint(ptrs, out):
    _toint_kernel(ptrs, out).launch(grid=[1, 1, 1], block=[4, 1, 1])


def test_toint_of_a_runtime_pointer_is_its_address_and_make_ptr_takes_it_back():
    x = np.arange(8, dtype=np.float32) + 1
    DEVICE_MEMORY[x.ctypes.data] = x  # memory of the emulated device (as cudaMalloc registers it)
    try:
        ptrs = np.array([x.ctypes.data, 0, 0, 0, 0], dtype=np.int64)
        out = np.zeros(4, np.float32)
        _toint(from_dlpack(ptrs), from_dlpack(out))
    finally:
        del DEVICE_MEMORY[x.ctypes.data]
    assert out.tolist() == [2.0, 3.0, 4.0, 5.0]
    assert (ptrs[1:] - x.ctypes.data).tolist() == [4, 8, 12, 16]


def test_torch_tensors_of_the_emulated_device_are_found_by_address():
    torch = pytest.importorskip("torch")
    from cutelab.runtime import register_device_storage

    x = torch.arange(8, dtype=torch.float32) + 1
    register_device_storage(x.untyped_storage())  # what compat.torch_cuda does for every "cuda" tensor
    ptrs = np.array([x.data_ptr() + 8, x.data_ptr() + 20], dtype=np.int64)
    out = np.zeros(4, np.float32)
    _gather_scatter(from_dlpack(ptrs), from_dlpack(np.zeros(1, np.float32)), from_dlpack(out))
    assert out.tolist() == [6.0, 8.0, 12.0, 14.0]
    assert x.tolist() == [1, 2, 7, 8, 5, 9, 10, 8]


@pytest.mark.parametrize("where,words", [
    ("nowhere", "is in no memory this launch knows"),
    ("past_end", "is in no memory this launch knows"),  # x + 32: the first byte past x
    ("odd", "is not at a whole 4-byte Float32 element"),
])
def test_bad_addresses_are_refused_naming_the_op_and_line_and_nothing_is_written(where, words):
    x = np.arange(8, dtype=np.float32)
    other = np.zeros(8, np.float32)
    a = {"nowhere": other.ctypes.data, "past_end": x.ctypes.data + 28, "odd": x.ctypes.data + 2}[where]
    ptrs = np.array([x.ctypes.data, a], dtype=np.int64)
    out = np.zeros(4, np.float32)
    with pytest.raises(LaunchError, match=words) as e:
        _gather_scatter(from_dlpack(ptrs), from_dlpack(x), from_dlpack(out))
    assert "a pointer made from a runtime address" in str(e.value)
    assert "test_runtime_address.py:" in str(e.value)
    assert x.tolist() == list(range(8)) and not out.any()


@cute.kernel
def _smem_kernel(ptrs: cute.Tensor):
    cute.make_ptr(Float32, ptrs[0], cute.AddressSpace.smem)


@cute.jit
def _smem(ptrs):
    _smem_kernel(ptrs).launch(grid=[1, 1, 1], block=[1, 1, 1])


def test_a_shared_memory_pointer_from_a_runtime_address_is_refused_by_name():
    with pytest.raises(TraceError, match=r"test_runtime_address.py:\d+\): a pointer into smem memory from a "
                                         r"runtime address is not supported"):
        _smem(from_dlpack(np.zeros(1, np.int64)))


@cute.kernel
def _runtime_layout_kernel(ptrs: cute.Tensor, dims: cute.Tensor, x: cute.Tensor, out: cute.Tensor, how: cute.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    p = cute.make_ptr(Float32, ptrs[0], cute.AddressSpace.gmem, assumed_align=4)
    # extents and strides read from memory: CuTe DSL keeps such a layout in registers
    t = cute.make_tensor(p, cute.make_layout((dims[0], dims[1]), stride=(dims[1], cutlass_Int32(1))))
    if how == "read":
        out[tidx] = t[tidx // 4, tidx % 4]
        t[tidx // 4, tidx % 4] = Float32(-1.0)
    else:
        cute.local_tile(t, (2, 2), (0, 0))


def cutlass_Int32(v):
    return cute.Int32(v)


@cute.jit
def _runtime_layout(ptrs, dims, x, out, how: cute.Constexpr):
    _runtime_layout_kernel(ptrs, dims, x, out, how).launch(grid=[1, 1, 1], block=[8, 1, 1])


def test_a_layout_with_extents_read_from_memory_indexes_a_tensor_at_a_runtime_address():
    x = np.arange(12, dtype=np.float32)  # a 3 x 4 row-major matrix
    out = np.zeros(8, np.float32)
    _runtime_layout(from_dlpack(np.array([x.ctypes.data], np.int64)), from_dlpack(np.array([3, 4], np.int32)),
                    from_dlpack(x), from_dlpack(out), "read")
    assert out.tolist() == list(range(8))
    assert x.tolist() == [-1.0] * 8 + [8, 9, 10, 11]


def test_the_layout_algebra_on_a_runtime_layout_is_refused_by_name():
    x = np.arange(12, dtype=np.float32)
    with pytest.raises(Exception, match=r"a tensor over a layout with runtime extents \(\?,\?\):\(\?,1\), made at") as e:
        _runtime_layout(from_dlpack(np.array([x.ctypes.data], np.int64)), from_dlpack(np.array([3, 4], np.int32)),
                        from_dlpack(x), from_dlpack(np.zeros(8, np.float32)), "tile")
    assert "test_runtime_address.py:" in str(e.value)


def test_the_emulated_device_keeps_its_recent_memory_as_the_caching_allocator_does():
    torch = pytest.importorskip("torch")
    import gc

    from cutelab.runtime import device_memory, register_device_storage

    t = torch.arange(64, dtype=torch.float32)
    register_device_storage(t.untyped_storage())
    a = t.data_ptr()
    del t
    gc.collect()
    lo, mem = device_memory(a)  # freed by the program, still reserved (CUDA's allocator keeps freed blocks)
    assert lo == a and mem.view(np.float32).tolist() == list(range(64))
