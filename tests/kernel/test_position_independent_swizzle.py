"""Position-independent swizzled shared memory (quack's ``swizzle_ptr`` and ``partition_D_position_independent``,
which flash_attn.cute's SM90 backward stores P and dS through): a swizzled pointer's type names its swizzle, the
swizzle is applied to the bits of the shared address (``a ^ ((a & yyy) >> s)``), ``make_ptr`` of the result is a
plain pointer, and a partition of the tensor with the swizzle moved into its layout gives the layout to put on
it. The helpers below follow quack's (copy_utils.py) in this file's own words; each kernel writes through the
result with stmatrix and reads the tile back through the ordinary swizzled tensor."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import TensorError, TraceError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
from cutelab.nvgpu import warp
from cutelab.runtime import from_dlpack

NVCC = shutil.which("nvcc")


def _swizzled_address(ptr):
    """A plain pointer at the address a swizzled pointer's element lives at: its swizzle applied to the address."""
    sw = ptr.type.swizzle_type
    a = ptr.toint()
    ymask = ((1 << sw.num_bits) - 1) << (sw.num_base + sw.num_shift)
    return cute.make_ptr(ptr.dtype, a ^ ((a & ymask) >> sw.num_shift), ptr.memspace, assumed_align=ptr.alignment)


def _swizzle_in_layout(t):
    """The tensor t (over a swizzled pointer) with the swizzle in its layout instead, in element units."""
    sw = t.iterator.type.swizzle_type
    w = t.element_type.width
    inner = cute.make_swizzle(sw.num_bits, sw.num_base, sw.num_shift)
    lay = cute.recast_layout(w, 8, cute.make_composed_layout(inner, 0, cute.recast_layout(8, w, t.layout)))
    return cute.make_tensor(cute.recast_ptr(t.iterator, dtype=t.element_type), lay)


@cute.kernel
def _pi_store(mS: cute.Tensor, mOut: cute.Tensor, mBits: cute.Tensor, sl: cutlass.Constexpr,
              swz: cutlass.Constexpr, tiled_mma: cutlass.Constexpr, trans: cutlass.Constexpr,
              how: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.utils.SmemAllocator()
    s = smem.allocate_tensor(mS.element_type, sl, 16)
    s2 = smem.allocate_tensor(mS.element_type, sl, 1024, swizzle=swz)
    R, C = cute.size(mS, mode=[0]), cute.size(mS, mode=[1])
    for i in cutlass.range_constexpr(R * C // 32):
        e = i * 32 + tidx
        s[e // C, e % C] = mS[e // C, e % C]
        s2[e // C, e % C] = mS[e // C, e % C] * 0
    cute.arch.sync_threads()
    thr = tiled_mma.get_slice(tidx)
    frag = tiled_mma.make_fragment_A(thr.partition_A(s))
    ld = cute.make_tiled_copy_A(cute.make_copy_atom(warp.LdMatrix8x8x16bOp(trans, 4), mS.element_type), tiled_mma)
    st = cute.make_tiled_copy_A(cute.make_copy_atom(warp.StMatrix8x8x16bOp(trans, 4), mS.element_type), tiled_mma)
    lds, sts = ld.get_slice(tidx), st.get_slice(tidx)
    cute.copy(ld, lds.partition_S(s), lds.retile(frag))
    plain = sts.partition_D(s2)
    if cutlass.const_expr(how == "pi"):
        dst = cute.make_tensor(_swizzled_address(plain.iterator), sts.partition_D(_swizzle_in_layout(s2)).layout)
    elif cutlass.const_expr(how == "other pointer"):  # the view's layout on a pointer that is not its own address
        dst = cute.make_tensor(_swizzled_address(plain.iterator) + 8, sts.partition_D(_swizzle_in_layout(s2)).layout)
    else:
        dst = plain
    cute.copy(st, sts.retile(frag), dst)
    # the address bits below the array's alignment are the offset's: (a & 0x3F0) >> 4 of this thread's element
    a = plain.iterator.toint()
    mBits[tidx] = ((a & 0x3F0) >> 4) + 0
    cute.arch.sync_threads()
    for i in cutlass.range_constexpr(R * C // 32):
        e = i * 32 + tidx
        mOut[e // C, e % C] = s2[e // C, e % C]


def _case(trans, b):
    mma = cute.make_tiled_mma(warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16)),
                              cute.make_layout((1, 1, 1)))
    R, C = 16, 64
    L = cute.make_layout((R, C), stride=(1, R)) if trans else cute.make_layout((R, C), stride=(C, 1))
    data = (np.arange(R * C) % 2039 + 1).astype(np.float16).reshape(R, C)
    return mma, L, cute.make_swizzle(b, 4, 3), data


def _run(how, trans, b):
    mma, L, swz, data = _case(trans, b)
    out, bits = np.zeros_like(data), np.zeros(32, np.int32)
    _pi_store(from_dlpack(data), from_dlpack(out), from_dlpack(bits), L, swz, mma, trans, how).launch(grid=1, block=32)
    return data, out, bits


@pytest.mark.parametrize("trans,b", [(False, 3), (False, 2), (True, 1)], ids=["N-128B", "N-64B", "T-32B"])
def test_a_position_independent_partition_writes_where_the_swizzled_partition_does(trans, b):
    data, out, bits = _run("pi", trans, b)
    assert np.array_equal(out, data)
    ref = _run("plain", trans, b)[1]
    assert np.array_equal(ref, data)
    src = cuda.render(last_launch().ir)
    assert f"stmatrix.sync.aligned.m8n8.x4{'.trans' if trans else ''}.shared.b16" in src


def test_the_address_bits_are_the_offsets_bits():
    # this thread's element of the stmatrix partition: its byte offset in the tile, read off the plain partition
    mma, L, swz, data = _case(False, 3)
    _, _, bits = _run("pi", False, 3)
    st = cute.make_tiled_copy_A(cute.make_copy_atom(warp.StMatrix8x8x16bOp(False, 4), cutlass.Float16), mma)
    R, C = data.shape
    want = []
    for t in range(32):
        part = st.get_slice(t).partition_D(cute.make_tensor(np.zeros(R * C, np.float16), L))
        want.append(((int(part.offset) * 2) & 0x3F0) >> 4)
    assert bits.tolist() == want


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_a_position_independent_store_compiles(tmp_path):
    _run("pi", False, 3)
    cu = tmp_path / "k.cu"
    cu.write_text(cuda.render(last_launch().ir))
    import subprocess

    p = subprocess.run([NVCC, "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(cu)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-3000:]


def test_the_views_layout_on_another_pointer_is_refused():
    with pytest.raises(TraceError, match=r"the pointer is not the swizzled address of the view's own element"):
        _run("other pointer", False, 3)


@cute.kernel
def _bad_bits(mX: cute.Tensor, how: cutlass.Constexpr):
    smem = cutlass.utils.SmemAllocator()
    s = smem.allocate_tensor(cutlass.Float16, cute.make_layout(64), 1024, swizzle=cute.make_swizzle(3, 4, 3))
    a = s.iterator.toint()
    if cutlass.const_expr(how == "high"):
        a & 0x10000
    elif cutlass.const_expr(how == "xor"):
        a ^ ((a & 0x70) >> 2)
    mX[0] = s[0]


@pytest.mark.parametrize("how,words", [
    ("high", r"masking the bits of an address above its shared array's 1024-byte alignment"),
    ("xor", r"this XOR of an address"),
])
def test_what_cannot_be_followed_in_an_address_is_refused(how, words):
    with pytest.raises((TraceError, TensorError), match=words):
        _bad_bits(from_dlpack(np.zeros(4, np.float16)), how).launch(grid=1, block=1)


@cute.kernel
def _ptr_types(mX: cute.Tensor):
    smem = cutlass.utils.SmemAllocator()
    s = smem.allocate_tensor(cutlass.Float16, cute.make_layout((8, 64), stride=(64, 1)), 1024,
                             swizzle=cute.make_swizzle(3, 4, 3))
    print(s.iterator.type, s.iterator.type.swizzle_type, mX.iterator.type.swizzle_type)
    print(cute.recast_ptr(s.iterator, dtype=cutlass.Float16))
    mX[0] = s[0, 0]


def test_pointer_types_name_their_swizzle(capsys):
    _ptr_types(from_dlpack(np.zeros(4, np.float16))).launch(grid=1, block=1)
    # as CuTe DSL 4.8.1 prints them; recast_ptr (swizzle_=None) gives the plain pointer at the same address
    assert capsys.readouterr().out.splitlines()[-2:] == [
        '!cute.ptr<f16, smem, align<1024>, S<3,4,3>> !cute.swizzle<"S<3,4,3>"> !cute.swizzle<"S<0,4,3>">', "ptr<f16, smem, align<1024>>"]
