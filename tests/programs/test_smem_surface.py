"""SmemAllocator's surface that CUTLASS's smem_allocator.py tutorial uses (tests/programs/dsl_smem_allocator
checks its trace-time prints against CuTe DSL; this runs the kernel on the CPU and checks the values)."""
import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab.errors import TraceError
from cutelab.runtime import from_dlpack


@cute.struct
class _Pair:
    re: cutlass.Float32
    im: cutlass.Float32


@cute.struct
class _Storage:
    a: cute.struct.MemRange[cutlass.Float32, 8]
    b: cutlass.Int64
    c: _Pair


@cute.kernel
def _smem_kernel(out: cute.Tensor, iout: cute.Tensor):
    alloc = cutlass.utils.SmemAllocator()
    one = alloc.allocate(cutlass.Int32)
    st = alloc.allocate(_Storage)
    raw = alloc.allocate(64, byte_alignment=128)
    arr = alloc.allocate_array(element_type=cutlass.Int64, num_elems=4)
    print(one, st.a.data_ptr(), st.b.ptr, st.c.im.ptr, raw, arr, sep=" | ")
    one.store(7)
    st.a[3] = 2.5
    st.b = 16
    sec = cute.make_tensor(cute.recast_ptr(raw, dtype=cutlass.Float32), cute.make_layout(4))
    sec.fill(1.5)
    out[0] = st.a[3]
    out[1] = sec[2]
    iout[0] = st.b.ptr.load()
    cute.make_tensor(arr, cute.make_layout(4))[2] = 5
    iout[1] = cute.make_tensor(arr, cute.make_layout(4))[2]
    iout[2] = one.load()


def test_smem_allocator_scalars_arrays_and_struct_fields_run_on_the_cpu(capsys):
    out, iout = np.zeros(2, np.float32), np.full(3, -1, np.int64)
    _smem_kernel(from_dlpack(out), from_dlpack(iout)).launch(grid=(1, 1, 1), block=(1, 1, 1))
    assert out.tolist() == [2.5, 1.5] and iout.tolist() == [16, 5, 7]
    # CuTe DSL's pointer text: the declared alignment, lowered by the field's offset; none at the element size
    assert capsys.readouterr().out.splitlines()[0] == (
        "ptr<i32, smem> | ptr<f32, smem, align<8>> | ptr<i64, smem> | ptr<f32, smem> | "
        "ptr<i8, smem, align<128>> | ptr<i64, smem>")


@cute.kernel
def _bad_assign():
    st = cutlass.utils.SmemAllocator().allocate(_Storage)
    st.a = 1.0


@cute.kernel
def _bad_array():
    cutlass.utils.SmemAllocator().allocate_array(element_type=cutlass.Int32, num_elems=0)


@pytest.mark.parametrize("k,msg", [(_bad_assign, "only a scalar field can be assigned, not 'a'"),
                                   (_bad_array, "num_elems must be a positive int, got 0")])
def test_smem_allocator_refuses_misuse(k, msg):
    with pytest.raises(TraceError, match=msg):
        k().launch(grid=(1, 1, 1), block=(1, 1, 1))
