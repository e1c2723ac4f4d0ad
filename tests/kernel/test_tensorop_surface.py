"""The pieces tensorop_gemm.py needs besides the atoms: cute.struct over SmemAllocator.allocate,
swizzled get_tensor, dynamic shared memory above 48 KiB, division by runtime scalars, variables
a runtime branch changes, Tensor.leading_dim, Pointer.align."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import LaunchError, TensorError, TraceError
from cutelab.kernel.cuda import printer as cuda
from cutelab.kernel.launch.plan import last_launch
from cutelab.kernel.ir.symbolic import DynDiv, Var, evaluate
from cutelab.runtime import from_dlpack

NVCC = shutil.which("nvcc")


# --------------------------------------------------------------------------- cute.struct

def test_struct_lays_out_fields_as_c_does():
    @cute.struct
    class Inner:
        x: cutlass.Int32
        y: cutlass.Float64

    @cute.struct
    class S:
        a: cute.struct.MemRange[cutlass.Float16, 5]
        b: cute.struct.Align[cute.struct.MemRange[cutlass.Float32, 3], 64]
        c: Inner
        d: cutlass.Int8

    assert Inner.size_in_bytes() == 16 and Inner.__alignof__() == 8
    assert [(n, o) for n, _, o in S._fields] == [("a", 0), ("b", 64), ("c", 80), ("d", 96)]
    assert S.size_in_bytes() == 128 and S.__alignof__() == 64


@cute.kernel
def struct_kernel(mA: cute.Tensor, mB: cute.Tensor, big: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()

    @cute.struct
    class Storage:
        a: cute.struct.Align[cute.struct.MemRange[mA.element_type, 64 * 64], 1024]
        pad: cute.struct.MemRange[cutlass.Float16, big]

    smem = cutlass.utils.SmemAllocator()
    storage = smem.allocate(Storage.size_in_bytes(), byte_alignment=16)
    # the byte swizzle S<3,4,3> of 16-byte chunks: S<3,3,3> on f16 elements
    s = Storage(storage).a.get_tensor(cute.make_layout((64, 64), stride=(64, 1)), swizzle=cute.make_swizzle(3, 4, 3))
    for i in cutlass.range_constexpr(64):
        s[i, tidx] = mA[i, tidx]
    cute.arch.sync_threads()
    for i in cutlass.range_constexpr(64):
        mB[tidx, i] = s[i, tidx]


@pytest.mark.parametrize("big", [8, 40000])
def test_struct_tensor_with_a_byte_swizzle_round_trips(big):
    A = np.arange(64 * 64, dtype=np.float16).reshape(64, 64)
    B = np.zeros_like(A)
    struct_kernel(from_dlpack(A), from_dlpack(B), big).launch(grid=1, block=64)
    assert np.array_equal(B, A.T)
    ir = last_launch().ir
    (sh,) = ir.shared
    src = cuda.render(ir)
    assert "& 448u) >> 3))" in src  # the element form S<3,3,3> of the byte swizzle
    if big > 8:  # 8 KiB + 80000 B: above 48 KiB, dynamic shared memory
        assert sh.dynamic and "extern __shared__ __align__(1024) unsigned char cl_dyn_smem[];" in src
        assert sh.bytes % 1024 == 0 and sh.bytes >= 64 * 64 * 2 + 2 * big
    else:
        assert not sh.dynamic and "__shared__ alignas(1024) unsigned short smem0[" in src


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_dynamic_shared_memory_compiles(tmp_path):
    A = np.zeros((64, 64), np.float16)
    struct_kernel(from_dlpack(A), from_dlpack(np.zeros_like(A)), 40000).launch(grid=1, block=64)
    (tmp_path / "k.cu").write_text(cuda.render(last_launch().ir))
    p = subprocess.run([NVCC, "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "k.cubin"), str(tmp_path / "k.cu")],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]


@cute.kernel
def too_much_smem(mA: cute.Tensor):
    smem = cutlass.utils.SmemAllocator()
    smem.allocate_tensor(cutlass.Float32, cute.make_layout(60000), 16)


def test_more_shared_memory_than_a_block_may_have_is_refused():
    with pytest.raises(TraceError, match="at most 232448 bytes"):
        too_much_smem(from_dlpack(np.zeros(4, np.float32))).launch(grid=1, block=32)


@cute.kernel
def struct_misuse(mA: cute.Tensor):
    @cute.struct
    class Storage:
        a: cute.struct.MemRange[cutlass.Float16, 64]

    smem = cutlass.utils.SmemAllocator()
    st = smem.allocate(Storage)
    st.a.get_tensor(cute.make_layout(128))


def test_a_tensor_larger_than_its_struct_field_region_is_refused():
    with pytest.raises(TraceError, match="needs 256 bytes from the region's start, the region has 128"):
        struct_misuse(from_dlpack(np.zeros(4, np.float32))).launch(grid=1, block=32)


# --------------------------------------------------------------------------- runtime divisors

def test_division_by_a_runtime_value_evaluates_as_python():
    t = Var("tid.x", 64)
    f = Var("arg.f", 9)  # stands for a runtime scalar in [0, 8]
    q, r = t // (f + 1), t % (f + 1)
    assert isinstance(q, DynDiv) and isinstance(r, DynDiv)
    tids = np.arange(64)
    for fv in range(9):
        env = {"tid.x": tids, "arg.f": np.int64(fv)}
        assert np.array_equal(evaluate(q, env), tids // (fv + 1))
        assert np.array_equal(evaluate(r, env), tids % (fv + 1))
        assert q.lo <= (tids // (fv + 1)).min() and (tids // (fv + 1)).max() <= q.hi
    with pytest.raises(LaunchError, match="division by zero"):
        evaluate(t // f, {"tid.x": tids, "arg.f": np.int64(0)})


@cute.kernel
def raster(mB: cute.Tensor, f: cutlass.Int32):
    bidx, _, _ = cute.arch.block_idx()
    tidx, _, _ = cute.arch.thread_idx()
    mB[bidx, tidx] = (bidx // f) * 100 + bidx % f


def test_runtime_divisor_in_a_kernel_on_the_cpu_and_in_cuda():
    B = np.zeros((6, 2), np.int32)
    raster(from_dlpack(B), 4).launch(grid=6, block=2)
    assert B[:, 0].tolist() == [0, 1, 2, 3, 100, 101]
    src = cuda.render(last_launch().ir)
    # block index and scalar only: computed once at the kernel's entry, in 32 bits
    assert "= ((int)cl_floordiv32((int)" in src and "= ((int)cl_mod32((int)" in src
    with pytest.raises(LaunchError, match="(division|remainder) by zero"):
        raster(from_dlpack(B), 0).launch(grid=6, block=2)


# --------------------------------------------------------------------------- branches

@cute.kernel
def changes_static(mB: cute.Tensor, use_after: cutlass.Constexpr):
    tidx, _, _ = cute.arch.thread_idx()
    k = 3
    if tidx < 2:
        k = 5
        mB[tidx] = k
    if cutlass.const_expr(use_after):
        mB[tidx] = k


def test_a_python_int_a_runtime_branch_changes_is_a_runtime_value_after_it():
    # CuTe DSL yields the int out of the branch as an Int32: each thread sees its own branch's value
    B = np.zeros(4, np.int32)
    changes_static(from_dlpack(B), False).launch(grid=1, block=4)
    assert B.tolist() == [5, 5, 0, 0]
    changes_static(from_dlpack(B), True).launch(grid=1, block=4)
    assert B.tolist() == [5, 5, 3, 3]


# --------------------------------------------------------------------------- small surface

def test_leading_dim_and_pointer_align():
    t = cute.make_tensor(np.zeros(24, np.float16), cute.make_layout((2, 3, 4), stride=(12, 1, 3)))
    assert t.leading_dim == 1
    assert cute.make_tensor(np.zeros(6, np.float16), cute.make_layout((1, 6))).leading_dim == 1
    assert cute.make_tensor(np.zeros(6, np.float16), cute.make_layout(((2, 3), 1), stride=((3, 1), 0))).leading_dim == (0, 1)
    assert cute.make_tensor(np.zeros(12, np.float16), cute.make_layout((6,), stride=(2,))).leading_dim is None
    p = t.iterator.align(16)  # the base alignment is not known here: the assertion is taken as given
    assert p.offset == 0 and str(p) == str(t.iterator)
    a = from_dlpack(np.zeros(64, np.float16), assumed_align=16)  # a 16-byte aligned base
    assert (a.iterator + 8).align(16).offset == 8
    with pytest.raises(TensorError, match="is not 16-byte aligned"):
        (a.iterator + 3).align(16)
    with pytest.raises(TensorError, match="power of two"):
        t.iterator.align(12)
