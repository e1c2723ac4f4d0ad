"""A pointer's address as an integer (CuTe DSL's Pointer.toint()) and make_ptr of it, in a kernel
and on the host."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

import cutelab as cute
from cutelab import Float32, Int32, Int64
from cutelab.address import PointerInt
from cutelab.errors import TensorError, TraceError
from cutelab.runtime import from_dlpack


@cute.kernel
def _offset_rows_kernel(mX: cute.Tensor, mO: cute.Tensor):
    # quack's domain_offset_i64: move the tensor's pointer by a 64-bit offset of whole rows
    bidx, _, _ = cute.arch.block_idx()
    tidx, _, _ = cute.arch.thread_idx()
    off = Int64(bidx * 4) * mX.stride[0]
    a = mX.iterator.toint()
    print("toint", a, isinstance(a, Int64), isinstance(a, Int32))
    p = cute.make_ptr(mX.element_type, a + off * mX.element_type.width // 8, mX.memspace,
                      assumed_align=mX.iterator.max_alignment)
    print("ptr", p)
    t = cute.make_tensor(p, mX.layout)
    mO[bidx * 4 + tidx, 1] = t[tidx, 1] * 2.0


@cute.jit
def _offset_rows(mX: cute.Tensor, mO: cute.Tensor):
    _offset_rows_kernel(mX, mO).launch(grid=[2, 1, 1], block=[4, 1, 1])


def test_toint_plus_bytes_and_make_ptr_move_the_pointer_in_a_kernel():
    x = np.arange(16, dtype=np.float32).reshape(8, 2)
    o = np.zeros_like(x)
    with contextlib.redirect_stdout(io.StringIO()) as out:
        _offset_rows(from_dlpack(x, assumed_align=16), from_dlpack(o, assumed_align=16))
    # CuTe DSL 4.8.1 prints the address as '?' (an Int64) and the pointer with the assumed alignment
    assert out.getvalue().splitlines() == ["toint ? True False", "ptr ptr<f32, generic, align<16>>"]
    assert o[:, 1].tolist() == (2 * x[:, 1]).tolist()
    assert not o[:, 0].any()


@cute.kernel
def _bad_address_kernel(mX: cute.Tensor, how: cute.Constexpr):
    a = mX.iterator.toint()
    if how == "mask":
        a = a & 15
    elif how == "odd":
        cute.make_ptr(mX.element_type, a + 2, mX.memspace)
    elif how == "type":
        cute.make_ptr(Int32, a, mX.memspace)
    else:
        cute.make_ptr(mX.element_type, a, cute.AddressSpace.smem)


@cute.jit
def _bad_address(mX: cute.Tensor, how: cute.Constexpr):
    _bad_address_kernel(mX, how).launch(grid=[1, 1, 1], block=[1, 1, 1])


@pytest.mark.parametrize("how,words", [
    ("mask", "masking the bits of an address"),
    ("odd", "the byte offset 2 is not a whole number of 4-byte"),
    ("type", "making a Int32 pointer from it is not supported"),
    ("smem", "the address is in generic memory, but the pointer is asked for smem"),
])
def test_what_cannot_be_done_with_an_address_is_refused_by_name(how, words):
    x = np.zeros(4, np.float32)
    with pytest.raises((TraceError, TensorError), match=words):
        _bad_address(from_dlpack(x, assumed_align=16), how)


def test_toint_on_the_host_is_the_address():
    x = np.arange(8, dtype=np.float32)
    p = from_dlpack(x, assumed_align=16).iterator
    a = p.toint()
    assert a == x.ctypes.data and isinstance(a, Int64) and p.max_alignment == 16
    q = cute.make_ptr(Float32, a + 12, assumed_align=4)
    assert float(cute.make_tensor(q, cute.make_layout(2))[0]) == 3.0
    # an address kept symbolically: the distance between two is in bytes
    b = PointerInt(p, 0)
    assert (b + 8) - b == 8 and str(b) == "?"


@cute.jit
def _host_offset(mX: cute.Tensor, mO: cute.Tensor):
    a = mX.iterator.toint()  # in a @cute.jit function the address is a runtime value, as in CuTe DSL
    print("jit toint", a)
    p = cute.make_ptr(mX.element_type, a + 2 * mX.stride[0] * 4, mX.memspace, assumed_align=16)
    _offset_rows_kernel(cute.make_tensor(p, cute.make_layout((4, 2), stride=(2, 1))), mO).launch(
        grid=[1, 1, 1], block=[4, 1, 1])


def test_toint_in_a_jit_function_moves_the_pointer_passed_to_a_kernel():
    x = np.arange(16, dtype=np.float32).reshape(8, 2)
    o = np.zeros((4, 2), np.float32)
    with contextlib.redirect_stdout(io.StringIO()) as out:
        _host_offset(from_dlpack(x, assumed_align=16), from_dlpack(o, assumed_align=16))
    assert out.getvalue().splitlines()[0] == "jit toint ?"
    assert o[:, 1].tolist() == (2 * x[2:6, 1]).tolist()


@cute.kernel
def _static_int_offset_kernel(mX: cute.Tensor, mO: cute.Tensor):
    # a pointer moved by a static cutlass integer keeps an int offset (flash_attn.cute's SM90 LSE pointer), so
    # it prints, and its address can be kept in a register
    p = mX.iterator + Int32(2)
    print("moved", p)
    r = cute.make_rmem_tensor(cute.make_layout((1,), stride=(1,)), Int64)
    r[0] = p.toint()
    mO[0] = cute.make_tensor(cute.make_ptr(Float32, r[0], cute.AddressSpace.gmem, assumed_align=4),
                             cute.make_layout(1))[0]


def test_a_pointer_moved_by_a_static_cutlass_integer_keeps_an_int_offset():
    x = np.arange(4, dtype=np.float32) + 1
    o = np.zeros(1, np.float32)
    with contextlib.redirect_stdout(io.StringIO()) as out:
        _static_int_offset_kernel(from_dlpack(x, assumed_align=16), from_dlpack(o)).launch(grid=1, block=1)
    assert out.getvalue().splitlines() == ["moved ptr<f32, generic, align<8>>"]
    assert o.tolist() == [3.0]


@cute.kernel
def _runtime_offset_kernel(mX: cute.Tensor, how: cute.Constexpr, bias: cute.Constexpr):
    # flash_attn.cute's SM100 LSE store with packed GQA (its rows interleave the heads): the element of a runtime
    # (head, row) coordinate, computed in registers from the thread index, as an address and a pointer again
    tidx, _, _ = cute.arch.thread_idx()
    r = cute.make_rmem_tensor(cute.make_layout(1), Int32)
    r[0] = tidx
    idx = r[0]  # a runtime Int32 (a register), not an index expression
    m = idx // 3
    h = idx - m * 3
    off = cute.crd2idx(((h, m),), mX.layout)
    if how == "pointer":  # the pointer moved by the runtime offset, then toint()
        a = (mX.iterator + off).toint()
    else:  # the address moved by a runtime byte offset
        a = mX.iterator.toint() + off * 4 + bias
    p = cute.make_ptr(mX.element_type, a, cute.AddressSpace.gmem, assumed_align=4)
    cute.make_tensor(p, (1,))[0] = Float32(tidx)


@pytest.mark.parametrize("how", ["pointer", "address"])
def test_make_ptr_of_an_address_moved_by_a_runtime_integer(how):
    x = np.full(12, -1, np.float32)
    mx = cute.make_tensor(from_dlpack(x, assumed_align=16).iterator, cute.make_layout(((3, 4),), stride=((4, 1),)))
    _runtime_offset_kernel(mx, how, 0).launch(grid=1, block=12)
    # thread t = 3 m + h writes t at element 4 h + m
    assert x.tolist() == [float(3 * (i % 4) + i // 4) for i in range(12)]


def test_a_runtime_byte_offset_that_is_not_whole_elements_is_refused_when_it_runs():
    from cutelab.errors import LaunchError

    x = np.full(12, -1, np.float32)
    mx = cute.make_tensor(from_dlpack(x, assumed_align=16).iterator, cute.make_layout(((3, 4),), stride=((4, 1),)))
    with pytest.raises(LaunchError, match="test_pointer_int.py"):
        _runtime_offset_kernel(mx, "address", 2).launch(grid=1, block=12)
    assert (x == -1).all()


def test_the_cuda_of_an_address_moved_by_a_runtime_byte_offset_compiles():
    from sm90_util import nvcc_compiles

    from cutelab.kernel.cuda.printer import render
    from cutelab.kernel.launch.plan import last_launch

    x = np.zeros(12, np.float32)
    mx = cute.make_tensor(from_dlpack(x, assumed_align=16).iterator, cute.make_layout(((3, 4),), stride=((4, 1),)))
    _runtime_offset_kernel(mx, "address", 0).launch(grid=1, block=12)
    src = render(last_launch().ir)  # the argument's address plus the byte offset, stored through as a float*
    assert "(long long)(unsigned long long)(mX + (0))" in src and "(float*)(unsigned long long)(" in src
    nvcc_compiles(src)
