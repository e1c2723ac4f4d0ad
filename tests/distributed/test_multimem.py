"""NVLink multicast's instructions in one process: the multimem PTX the CUDA back end prints for
cutlass.utils.distributed's functions (compiled by ptxas for sm_90a), the refusals of bad forms, and the
inline-PTX vector loads and stores through a kernel argument's address that CUTLASS's LDxSTMC and Lamport
GEMMs use. Running them across ranks: test_ranks.py (test_multimem_ops)."""
import os

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import TraceError
from cutelab.runtime import from_dlpack
from cutelab.utils import distributed



@cute.kernel
def mm_kernel(x: cute.Tensor, h: cute.Tensor, e: cute.Tensor, y: cute.Tensor, flag: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    a, b, c, d = distributed.multimem_ld_reduce_4xf32(x.iterator + tidx * 4)
    distributed.multimem_st(y.iterator + tidx * 4, a, b, c, d)
    p, q = distributed.multimem_ld_reduce(h.iterator + tidx * 4, dtype=cutlass.Float16, num_elements=4)
    distributed.multimem_st_2xb32(y.iterator + tidx * 4, p, q)
    (r,) = distributed.multimem_ld_reduce_4xe4m3(e.iterator + tidx * 4)
    distributed.multimem_st(y.iterator + tidx * 4, r)
    distributed.multimem_red_add1(flag.iterator + tidx, order="release", scope="sys")
    distributed.multimem_red_relaxed_gpu_add1(flag.iterator + tidx)


def test_multimem_prints_its_ptx():
    """Each function prints its PTX instruction (vector widths, accumulation types, orders), which ptxas
    takes for sm_100a (fp8 forms need it; the lent machines have no multicast, so it is not run on a GPU)."""
    from cutelab.kernel.cuda.fakegpu import FakeDeviceArray, fake_gpu
    from cutelab.kernel.launch.plan import last_launch

    x, y = np.zeros(128, np.float32), np.zeros(128, np.float32)
    h, e, flag = np.zeros(128, np.float16), np.zeros(128, np.uint8), np.zeros(32, np.int32)
    with fake_gpu():
        et = from_dlpack(FakeDeviceArray(e), assumed_align=16)
        et.element_type = cutlass.Float8E4M3FN
        mm_kernel(*(from_dlpack(FakeDeviceArray(a), assumed_align=16) for a in (x, h)), et,
                  from_dlpack(FakeDeviceArray(y), assumed_align=16), from_dlpack(FakeDeviceArray(flag))).launch(
            grid=(1, 1, 1), block=(32, 1, 1))
        src = last_launch().source
    for ptx in ("multimem.ld_reduce.weak.global.add.v4.f32 {%0, %1, %2, %3}, [%4];",
                "multimem.st.weak.global.v4.f32 [%0], {%1, %2, %3, %4};",
                "multimem.ld_reduce.weak.global.add.acc::f32.v2.f16x2 {%0, %1}, [%2];",
                "multimem.st.weak.global.v2.f32 [%0], {%1, %2};",
                "multimem.ld_reduce.weak.global.add.acc::f16.e4m3x4 %0, [%1];",
                "multimem.st.weak.global.f32 [%0], %1;",
                "multimem.red.release.sys.global.add.s32 [%0], %1;",
                "multimem.red.relaxed.gpu.global.add.s32 [%0], %1;"):
        assert ptx in src, ptx
    _compiles_sm100a(src)


def _compiles_sm100a(src: str) -> None:
    import shutil
    import subprocess
    import tempfile

    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "k.cu"), "w") as f:
            f.write(src)
        p = subprocess.run([nvcc, "-arch=sm_100a", "-cubin", "-o", os.path.join(d, "k.cubin"), os.path.join(d, "k.cu")],
                           capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-4000:]


def test_multimem_refusals():
    @cute.kernel
    def bad_count(x: cute.Tensor):
        distributed.multimem_ld_reduce(x.iterator, dtype=cutlass.Float32, num_elements=8)

    with pytest.raises(ValueError, match=r"multimem_ld_reduce: unsupported dtype=Float32, num_elements=8"):
        bad_count(from_dlpack(np.zeros(16, np.float32))).launch(grid=(1, 1, 1), block=(1, 1, 1))

    @cute.kernel
    def bad_order(x: cute.Tensor):
        distributed.multimem_red_add1(x.iterator, order="acquire", scope="sys")

    with pytest.raises(TraceError, match=r"multimem_red_add1\(order='acquire', scope='sys'\): order is 'release' or"):
        bad_order(from_dlpack(np.zeros(4, np.int32))).launch(grid=(1, 1, 1), block=(1, 1, 1))

    @cute.kernel
    def bad_red_type(x: cute.Tensor):
        distributed.multimem_red_add1(x.iterator, order="release", scope="gpu")

    with pytest.raises(TraceError, match=r"the pointer is to Float16; multimem.red.add takes 32- or 64-bit integers"):
        bad_red_type(from_dlpack(np.zeros(4, np.float16))).launch(grid=(1, 1, 1), block=(1, 1, 1))


def test_inline_ptx_vector_load_and_store_through_an_address():
    """``ld.weak.global.v4.u32`` of f16 data through ``ptr.toint().ir_value()`` (8 halves as 4 words) and
    ``st.global.v4.u32`` of the words back; the CUDA prints one 128-bit access each (ptxas takes it)."""
    from cutelab.compat.cutlass_dsl import T
    from cutelab.compat.mlir import ir
    from cutelab.compat.mlir.dialects import llvm

    @cute.kernel
    def k(x: cute.Tensor, y: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        src = (x.iterator + tidx * 8).toint().ir_value()
        s = llvm.inline_asm(ir.Type.parse("!llvm.struct<(i32,i32,i32,i32)>"), [src],
                            "ld.weak.global.v4.u32 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,l", has_side_effects=True)
        w = [llvm.extractvalue(T.i32(), s, [i]) for i in range(4)]
        dst = (y.iterator + tidx * 8).toint().ir_value()
        llvm.inline_asm(None, [dst, w[3], w[2], w[1], w[0]], "st.global.v4.u32 [$0], {$1, $2, $3, $4};",
                        "l,r,r,r,r", has_side_effects=True)

    x = np.arange(256, dtype=np.float16)
    y = np.zeros(256, np.float16)
    k(from_dlpack(x, assumed_align=16), from_dlpack(y, assumed_align=16)).launch(grid=(1, 1, 1), block=(32, 1, 1))
    want = x.reshape(32, 4, 2)[:, ::-1, :].reshape(-1)  # the words (pairs of halves) of each chunk reversed
    np.testing.assert_array_equal(y, want)

    @cute.kernel
    def ordered(x: cute.Tensor, y: cute.Tensor):  # Lamport's flag-via-data poll: an ordered 128-bit load of f16
        tidx, _, _ = cute.arch.thread_idx()
        p = (x.iterator + tidx * 8).toint().ir_value()
        s = llvm.inline_asm(ir.Type.parse("!llvm.struct<(i32,i32,i32,i32)>"), [p],
                            "ld.relaxed.gpu.global.v4.u32 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,l")
        for i in cutlass.range_constexpr(4):
            y[tidx * 4 + i] = llvm.extractvalue(T.i32(), s, [i])

    w = np.zeros(128, np.int32)
    ordered(from_dlpack(x, assumed_align=16), from_dlpack(w)).launch(grid=(1, 1, 1), block=(32, 1, 1))
    np.testing.assert_array_equal(w, x.view(np.int32))
    from cutelab.kernel.cuda.fakegpu import FakeDeviceArray, fake_gpu
    from cutelab.kernel.launch.plan import last_launch

    with fake_gpu():
        ordered(from_dlpack(FakeDeviceArray(x), assumed_align=16), from_dlpack(FakeDeviceArray(w))).launch(
            grid=(1, 1, 1), block=(32, 1, 1))
        src = last_launch().source
    assert 'asm volatile("ld.relaxed.gpu.global.v4.b32 {%0, %1, %2, %3}, [%4];"' in src
    _compiles_sm100a(src)
