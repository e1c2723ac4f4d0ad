"""Pointers a kernel makes from addresses it holds (``cute.make_ptr(dtype, addr, gmem)`` of an Int64
loaded from a tensor of ``buffer_ptrs``), as CUTLASS's all-gather GEMM's device barrier does: the
memory-ordering instructions through them on the CPU (the address found among the kernel's tensors),
the CUDA they print, and the refusals (an address in no memory the kernel was given, a misaligned
one, a plain tensor load through such a pointer, an address that is not 64 bits)."""
import os
import sys

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import LaunchError, TraceError
from cutelab.runtime import from_dlpack

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernel"))


@cute.kernel
def barrier_kernel(ptrs: cute.Tensor, counters: cute.Tensor, seen: cute.Tensor):
    """Thread t adds 1 to the counter of every other thread's slot through its address, then reads its own."""
    tidx, _, _ = cute.arch.thread_idx()
    for peer in cutlass.range_constexpr(4):
        if peer != tidx:
            p = cute.make_ptr(cutlass.Int32, ptrs[peer], cutlass.AddressSpace.gmem, assumed_align=4)
            cute.arch.atomic_add(p.llvm_ptr, cutlass.Int32(1), sem="relaxed", scope="sys")
    cute.arch.sync_threads()
    mine = cute.make_ptr(cutlass.Int32, ptrs[tidx], cutlass.AddressSpace.gmem, assumed_align=4)
    seen[tidx] = cute.arch.load(mine.llvm_ptr, cutlass.Int32, sem="acquire", scope="sys")
    cute.arch.store(mine.llvm_ptr + 4, tidx + 100, sem="release", scope="sys")


def _run(counters, ptrs):
    seen = np.zeros(4, np.int32)
    barrier_kernel(from_dlpack(ptrs), from_dlpack(counters), from_dlpack(seen)).launch(grid=(1, 1, 1),
                                                                                      block=(4, 1, 1))
    return seen


def test_atomics_through_addresses_on_the_cpu():
    counters = np.zeros(8, np.int32)
    ptrs = np.array([counters.ctypes.data + 4 * i for i in range(4)], np.int64)
    seen = _run(counters, ptrs)
    assert seen.tolist() == [3, 3, 3, 3]  # every other thread's add arrived
    assert counters.tolist() == [3, 3, 3, 3, 100, 101, 102, 103]  # and the release stores 4 elements on


def test_an_address_outside_the_kernels_memory_is_refused():
    counters = np.zeros(8, np.int32)
    elsewhere = np.zeros(8, np.int32)  # not given to the kernel
    ptrs = np.array([elsewhere.ctypes.data + 4 * i for i in range(4)], np.int64)
    with pytest.raises(LaunchError, match=r"atom\.relaxed\.sys\.global\.add\.s32 .*the address 0x[0-9a-f]+ is in no "
                                          r"memory the kernel was given"):
        _run(counters, ptrs)
    assert not elsewhere.any() and not counters.any()
    ptrs = np.array([counters.ctypes.data + 4 * i + 2 for i in range(4)], np.int64)
    with pytest.raises(LaunchError, match="is not aligned to the element's 4 bytes"):
        _run(counters, ptrs)


def test_address_pointers_print_as_ptx():
    from cutelab.kernel.cuda.fakegpu import FakeDeviceArray, fake_gpu
    from cutelab.kernel.launch.plan import last_launch

    counters = np.zeros(8, np.int32)
    ptrs = np.array([counters.ctypes.data + 4 * i for i in range(4)], np.int64)
    with fake_gpu():
        barrier_kernel(*[from_dlpack(FakeDeviceArray(b)) for b in (ptrs, counters, np.zeros(4, np.int32))]).launch(
            grid=(1, 1, 1), block=(4, 1, 1))
        src = last_launch().source
    assert "atom.relaxed.sys.global.add.s32" in src and "ld.acquire.sys.global.b32" in src
    assert "(int*)(unsigned long long)(" in src  # the address register, cast to a pointer
    from sm90_util import nvcc_compiles

    nvcc_compiles(src)


def test_a_tensor_over_an_address_pointer_and_a_narrow_address():
    """A tensor over such a pointer reads and writes through the address (instr/address_access.py); an
    address that is not a 64-bit integer is refused by name."""
    counters = np.arange(8, dtype=np.int32) + 5

    @cute.kernel
    def plain_load(ptrs: cute.Tensor, src: cute.Tensor, out: cute.Tensor):  # the address is in src
        p = cute.make_ptr(cutlass.Int32, ptrs[0], cutlass.AddressSpace.gmem, assumed_align=4)
        out[0] = cute.make_tensor(p, cute.make_layout(1))[0]

    out = np.zeros(1, np.int32)
    ptrs = np.array([counters.ctypes.data + 8], np.int64)
    plain_load(from_dlpack(ptrs), from_dlpack(counters), from_dlpack(out)).launch(grid=(1, 1, 1), block=(1, 1, 1))
    assert out[0] == 7

    @cute.kernel
    def narrow(ptrs: cute.Tensor, out: cute.Tensor):
        p = cute.make_ptr(cutlass.Int32, ptrs[0], cutlass.AddressSpace.gmem, assumed_align=4)
        out[0] = cute.arch.load(p, cutlass.Int32)

    with pytest.raises(TraceError, match="64-bit"):
        narrow(from_dlpack(np.zeros(1, np.int32)), from_dlpack(counters)).launch(grid=(1, 1, 1), block=(1, 1, 1))


@pytest.mark.gpu
def test_atomics_through_addresses_on_the_gpu():
    """The same kernel on the device (NVRTC), the addresses those of a CUDA tensor: the same results."""
    torch = pytest.importorskip("torch")
    cute.cuda.initialize_cuda_context()
    counters = torch.zeros(8, dtype=torch.int32, device="cuda")
    ptrs = torch.tensor([counters.data_ptr() + 4 * i for i in range(4)], dtype=torch.int64, device="cuda")
    seen = torch.zeros(4, dtype=torch.int32, device="cuda")
    barrier_kernel(from_dlpack(ptrs), from_dlpack(counters), from_dlpack(seen)).launch(grid=(1, 1, 1),
                                                                                      block=(4, 1, 1))
    torch.cuda.synchronize()
    assert seen.tolist() == [3, 3, 3, 3]
    assert counters.tolist() == [3, 3, 3, 3, 100, 101, 102, 103]
