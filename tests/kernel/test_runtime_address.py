"""Pointers at runtime addresses: cute.make_ptr of an Int64 the kernel read from memory (a grouped
GEMM's table of group addresses), tensors over them, their loads and stores on the CPU interpreter
and in the printed CUDA (kernel/instr/address_access.py)."""

from __future__ import annotations

import numpy as np
import pytest

import cutelab as cute
from cutelab import Float32
from cutelab import utils as cutelab_utils
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


@cute.kernel
def _row_address_kernel(x: cute.Tensor, out: cute.Tensor):
    # flash_attn.cute's PackGQA: each lane keeps one row's address in an Int64 fragment; the lanes
    # take each other's by a shuffle of its two 32-bit halves, make a pointer of it and copy the row
    tidx, _, _ = cute.arch.thread_idx()
    rows = cute.make_rmem_tensor(cute.make_layout((1,), stride=(1,)), cute.Int64)
    rows[0] = (x.iterator + x.layout((3 - tidx, 0))).toint()  # row 3 - tidx: the address of a kernel argument
    halves = cute.recast_tensor(rows, cute.Int32)
    for i in cutlass_range(2):  # lane (t + 1) % 2 of t's segment of two lanes (mask_and_clamp of width 2)
        halves[i] = cute.arch.shuffle_sync(halves[i], 1, mask_and_clamp=((32 - 2) << 8) | 31)
    row = cute.make_tensor(cute.make_ptr(Float32, rows[0], cute.AddressSpace.gmem, assumed_align=8),
                           cute.make_layout(2))
    out[tidx, 0] = row[0]
    out[tidx, 1] = row[1]
    row[1] = Float32(-1.0) - tidx  # a store through the shuffled address, into x


def cutlass_range(n):
    return range(n)


@cute.jit
def _row_address(x, out):
    _row_address_kernel(x, out).launch(grid=[1, 1, 1], block=[4, 1, 1])


def test_an_argument_address_kept_in_a_register_is_shuffled_and_made_a_pointer_again():
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    out = np.zeros((4, 2), np.float32)
    _row_address(from_dlpack(x), from_dlpack(out))
    # lane t reads the row of lane 1 of its segment of two lanes, 3 - (t | 1), and writes -1 - t into
    # its second element (lanes 0 and 1, and 2 and 3, write the same row: the higher lane's store lands last)
    want_rows = [3 - (t | 1) for t in range(4)]
    assert out.tolist() == [[2.0 * r, 2.0 * r + 1] for r in want_rows]
    assert x[:, 0].tolist() == [0, 2, 4, 6]
    assert x[:, 1].tolist() == [-4.0, 3.0, -2.0, 7.0]


def test_the_cuda_of_an_argument_address_kept_in_a_register_compiles():
    from sm90_util import nvcc_compiles

    _row_address(from_dlpack(np.zeros((4, 2), np.float32)), from_dlpack(np.zeros((4, 2), np.float32)))
    src = render(last_launch().ir)  # the address is the argument's pointer moved by the row's elements
    assert "= (long long)(unsigned long long)(" in src and "__shfl_sync(0xffffffffu, " in src and ", 1, 2)" in src
    nvcc_compiles(src)


@cute.kernel
def _smem_address_kernel(x: cute.Tensor):
    s = cutelab_utils.SmemAllocator().allocate_tensor(Float32, cute.make_layout(4), 16)
    rows = cute.make_rmem_tensor(1, cute.Int64)
    rows[0] = s.iterator.toint()


@cute.jit
def _smem_address(x):
    _smem_address_kernel(x).launch(grid=[1, 1, 1], block=[1, 1, 1])


def test_a_shared_memory_address_kept_in_a_register_is_refused_by_name():
    with pytest.raises(TraceError, match=r"toint\(\) kept in a register \(at .*test_runtime_address.py:\d+\): the "
                                         r"address of a pointer into smem memory cannot be kept in a register"):
        _smem_address(from_dlpack(np.zeros(1, np.float32)))


@cute.kernel
def _cp_async_rows_kernel(x: cute.Tensor, out: cute.Tensor, stale: cute.Tensor):
    # flash_attn.cute's PackGQA.load_Q: a row's address from a register, cp.async of 16 bytes from it
    # into shared memory (predicated: lanes 6 and 7 copy nothing and zero-fill)
    tidx, _, _ = cute.arch.thread_idx()
    s = cutelab_utils.SmemAllocator().allocate_tensor(Float32, cute.make_layout((4, 8), stride=(1, 4)), 16)
    rows = cute.make_rmem_tensor(cute.make_layout((1,), stride=(1,)), cute.Int64)
    rows[0] = (x.iterator + x.layout((7 - tidx, 0))).toint()
    row = cute.make_tensor(cute.make_ptr(Float32, rows[0], cute.AddressSpace.gmem, assumed_align=16),
                           cute.make_layout(4))
    atom = cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(), Float32, num_bits_per_copy=128)
    p = cute.make_rmem_tensor(cute.make_layout((1, 1)), cute.Boolean)
    p[0] = tidx < 6
    cute.copy(atom, cute.make_tensor(row.iterator, cute.make_layout(((4, 1),))),
              cute.make_tensor(s[None, tidx].iterator, cute.make_layout(((4, 1),))), pred=p)
    cute.arch.cp_async_commit_group()
    stale[tidx] = s[0, tidx]  # before the wait: not landed yet
    cute.arch.cp_async_wait_group(0)
    for i in range(4):
        out[tidx, i] = s[i, tidx]


@cute.jit
def _cp_async_rows(x, out, stale):
    _cp_async_rows_kernel(x, out, stale).launch(grid=[1, 1, 1], block=[8, 1, 1])


def test_cp_async_from_an_address_kept_in_a_register():
    x = np.arange(32, dtype=np.float32).reshape(8, 4) + 1
    out = np.full((8, 4), -1, np.float32)
    stale = np.full(8, -1, np.float32)
    _cp_async_rows(from_dlpack(x, assumed_align=16), from_dlpack(out), from_dlpack(stale))
    want = x[::-1].copy()
    want[6:] = 0  # predicated off: zero-filled
    assert out.tolist() == want.tolist()
    assert not stale.any()  # shared memory held zeros until the wait
    src = render(last_launch().ir)
    assert "cp.async.ca.shared.global [%0], [%1], 16, %2;" in src and "(const float*)(unsigned long long)(" in src


def test_the_cuda_of_cp_async_from_an_address_compiles():
    from sm90_util import nvcc_compiles

    _cp_async_rows(from_dlpack(np.zeros((8, 4), np.float32), assumed_align=16), from_dlpack(np.zeros((8, 4), np.float32)),
                   from_dlpack(np.zeros(8, np.float32)))
    nvcc_compiles(render(last_launch().ir))
