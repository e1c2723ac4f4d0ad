"""The CuTe DSL surface that real programs hit first (issue 9): small gaps, each with its own test."""
import cutelab as cute
from cutelab.nvgpu import warp


def test_layout_repr_is_its_str():
    a, b = cute.make_layout(3, stride=3), cute.make_layout((2, 4), stride=(1, 8))
    assert repr(b) == "(2,4):(1,8)"
    assert str((a, b)) == "(3:3, (2,4):(1,8))"  # as CuTe DSL prints a tuple of layouts


def test_size_of_tiled_mma_and_tiled_copy_is_their_thread_count():
    mma = cute.make_tiled_mma(warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16)), (2, 2, 1))
    assert cute.size(mma) == mma.size == 128
    atom = cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), cute.Float32)
    tc = cute.make_tiled_copy_tv(atom, cute.make_layout((4, 8)), cute.make_layout((1, 2)))
    assert cute.size(tc) == tc.size == 32
    assert cute.size(cute.make_layout((4, 8))) == 32  # layouts unchanged


# ---- print_tensor (the format itself is checked against CuTe DSL by tests/programs/own_print_tensor_*.py)

def test_print_tensor_refuses_what_is_not_a_tensor():
    import pytest

    from cutelab.errors import TensorError

    with pytest.raises(TensorError, match="print_tensor: expected a Tensor or a TensorSSA, got list"):
        cute.print_tensor([1, 2])


def test_print_tensor_of_a_batch_names_the_batch():
    import numpy as np
    import pytest

    from cutelab.errors import TensorError

    t = cute.make_tensor(np.arange(8, dtype=np.float32), cute.make_layout((4, 2)))
    threads = cute.local_partition(t, cute.make_layout(4), np.arange(4))
    with pytest.raises(TensorError, match=r"is a batch of \(4,\) tensors \(one per thread\); index one first"):
        cute.print_tensor(threads)


def test_print_tensor_elides_long_modes_but_keeps_every_block(capsys):
    import numpy as np

    t = cute.make_tensor(np.arange(7 * 2 * 9, dtype=np.int32), cute.make_layout((7, 2, 9)))
    cute.print_tensor(t)
    out = capsys.readouterr().out
    assert out.count("\n\n") == 8 and out.count("         ...") == 9  # 9 blocks, each with rows elided
    assert "[ 0,  7, ]" in out and "[ 6,  13, ]" in out and "[ 3,  10, ]" not in out


# ---- identity tensors

def test_identity_tensor_coordinates_are_padded_and_hierarchical():
    c = cute.make_identity_tensor((4, (2, 3)))
    assert str(c.layout) == "(4,(2,3)):(1@0,(1@0@1,1@1@1))"
    assert c[(1, (1, 2))] == (1, (1, 2)) and c[9] == (1, (0, 1)) and c[0] == (0, (0, 0))
    flat = cute.make_identity_tensor((4, 3))
    assert flat[2] == (2, 0) and str(flat[(3, None)]) == "tensor<(3,0) o (3):(1@1)>"
    assert str(cute.local_tile(cute.make_identity_tensor((64, 32)), (16, 16), (1, 0))) == "tensor<(16,0) o (16,16):(1@0,1@1)>"
    assert str(cute.make_identity_tensor(8)) == "tensor<0 o 8:1>" and cute.make_identity_tensor(8)[5] == 5


# ---- make_composed_layout with a Python function inside

def test_composed_layout_with_a_callable_inner():
    import pytest

    from cutelab.errors import LayoutError

    def inner(c):
        x, y = c
        return x, y + 1

    L = cute.make_composed_layout(inner, (1, 0), cute.make_identity_layout((8, 4)))
    assert str(L).startswith("(<function ") and str(L).endswith(" o (1, 0) o (8,4):(1@0,1@1))")
    assert L(0) == (1, 1) and L((7, 3)) == (8, 4) and L.shape == (8, 4) and cute.size(L) == 32
    with pytest.raises(LayoutError, match="no integer offsets"):
        L.offsets()
    with pytest.raises(LayoutError, match="the offset must be an int or a tuple of ints"):
        cute.make_composed_layout(inner, (1, "a"), cute.make_identity_layout((8, 4)))


# ---- make_ptr / recast_ptr

def test_make_ptr_over_a_numpy_array_reads_writes_and_checks_bounds():
    import ctypes

    import numpy as np
    import pytest

    from cutelab.errors import TensorError
    from cutelab.runtime import AddressSpace, make_ptr, nullptr

    a = np.arange(8, dtype=np.float32)
    p = make_ptr(cute.Float32, a.ctypes.data_as(ctypes.POINTER(ctypes.c_float)), assumed_align=16)
    assert str(p) == "ptr<f32, generic, align<16>>" and p.alignment == 16 and p.memspace == AddressSpace.generic
    t = cute.make_tensor(p + 4, cute.make_layout(4))
    t[1] = 50.0
    assert a[5] == 50.0 and t.load().numpy().tolist() == [4.0, 50.0, 6.0, 7.0]
    with pytest.raises(TensorError, match="outside the storage"):
        cute.make_tensor(p + 4, cute.make_layout(5))
    bare = make_ptr(cute.Float32, a.ctypes.data + 8)  # a bare address inside a: found, read and checked
    assert cute.make_tensor(bare, cute.make_layout(2)).load().numpy().tolist() == [2.0, 3.0]
    with pytest.raises(TensorError, match="outside the storage"):
        cute.make_tensor(bare, cute.make_layout(7))
    raw = make_ptr(cute.Float32, 0x1000)  # an address no array holds: prints, cannot be read
    assert str(raw) == "ptr<f32, generic>"
    with pytest.raises(TensorError, match="bare integer address that no numpy array or CPU torch tensor among the caller.s variables holds"):
        cute.make_tensor(raw, cute.make_layout(2)).load()
    assert str(nullptr(cute.Float16, AddressSpace.gmem)) == "ptr<f16, gmem>"
    with pytest.raises(TensorError, match="not aligned to assumed_align=16"):
        make_ptr(cute.Float32, 0x1004, assumed_align=16)
    with pytest.raises(TensorError, match="expected an int address or a ctypes pointer, got str"):
        make_ptr(cute.Float32, "0x1000")


def test_recast_ptr_reads_the_same_bytes_as_another_type():
    import numpy as np
    import pytest

    from cutelab.errors import TensorError

    a = np.array([1.0, -2.0], dtype=np.float32)
    t = cute.make_tensor(a, cute.make_layout(2))
    bits = cute.make_tensor(cute.recast_ptr(t.iterator, dtype=cute.Int32), cute.make_layout(2))
    assert bits.load().numpy().tolist() == a.view(np.int32).tolist()
    halves = cute.make_tensor(cute.recast_ptr(t.iterator + 1, dtype=cute.Int16), cute.make_layout(2))
    assert halves.load().numpy().tolist() == a[1:].view(np.int16).tolist()
    with pytest.raises(TensorError, match="swizzled pointers are not supported"):
        cute.recast_ptr(t.iterator, swizzle_=cute.make_swizzle(2, 2, 3))


# ---- TensorSSA on the host: bitwise, broadcast, slicing, reductions by profile, str

def _v(values, shape, dtype=None):
    import numpy as np

    from cutelab.numeric import Float32
    from cutelab.tensor import TensorSSA

    dtype = dtype or Float32
    return TensorSSA(np.asarray(values, dtype=dtype.storage), shape, dtype)


def test_tensor_ssa_bitwise_on_integers_logical_on_booleans():
    import pytest

    from cutelab.errors import TensorError
    from cutelab.numeric import Int32

    a, b = _v([1, 2, 3], (3,), Int32), _v([2, 2, 4], (3,), Int32)
    assert (a ^ b).numpy().tolist() == [3, 0, 7] and (a | b).numpy().tolist() == [3, 2, 7]
    assert (a & b).numpy().tolist() == [0, 2, 0] and (a << 1).numpy().tolist() == [2, 4, 6]
    assert (~a).numpy().tolist() == [-2, -3, -4]
    m = (a > 1) & (b > 2)
    assert m.numpy().tolist() == [False, False, True] and m.dtype.name == "i1"
    with pytest.raises(TensorError, match="bitwise operators need integer or Boolean values, got f32"):
        _v([1.0], (1,)) ^ _v([1.0], (1,))


def test_tensor_ssa_broadcasts_modes_of_size_one():
    import pytest

    from cutelab.errors import TensorError

    row, col = _v([0, 1, 2], (1, 3)), _v([0, 10, 20, 30], (4, 1))
    s = row + col
    assert s.shape == (4, 3) and s.numpy().tolist()[3] == [30.0, 31.0, 32.0]
    assert (row < col).shape == (4, 3)
    with pytest.raises(TensorError, match=r"cannot broadcast .* to the shape \(4,2\)"):
        row.broadcast_to((4, 2))
    with pytest.raises(TensorError, match="do not broadcast"):
        _v([0, 1], (2,)) + _v([0, 1, 2], (3,))


def test_tensor_ssa_slicing_and_str():
    import numpy as np
    import pytest

    from cutelab.errors import TensorError

    v = _v(np.arange(24), (4, 2, 3))  # index order: column-major
    assert str(v) == "tensor_value<vector<24xf32> o (4, 2, 3)>"
    s = v[(None, 1, None)]
    assert str(s) == "tensor_value<vector<12xf32> o (4, 3)>" and s.numpy()[:, 0].tolist() == [4.0, 5.0, 6.0, 7.0]
    assert v[10] == 10.0 and v[(1, 1, 2)] == 1 + 4 + 16
    with pytest.raises(TensorError, match="out of range"):
        v[24]


def test_tensor_ssa_reduce_by_profile():
    import pytest

    from cutelab.errors import TensorError

    v = _v([1, 4, 2, 5, 3, 6], (2, 3))  # [[1,2,3],[4,5,6]]
    assert v.reduce("add", 0.0) == 21.0 and v.reduce("max", None) == 6.0
    assert v.reduce("add", 0.0, (None, 1)).numpy().tolist() == [6.0, 15.0]
    assert v.reduce("add", 1.0, (1, None)).numpy().tolist() == [6.0, 8.0, 10.0]
    assert v.reduce("mul", None, (1, 1)) == 720.0
    w = _v(list(range(12)), ((2, 2), 3))
    assert w.reduce("add", 0.0, ((None, 1), None)).numpy().tolist() == [[2.0, 10.0, 18.0], [4.0, 12.0, 20.0]]
    with pytest.raises(TensorError, match="does not match the shape"):
        v.reduce("add", 0.0, (None, 1, 1))


# ---- print_latex / print_latex_tv (their text is checked against CuTe DSL by tests/programs/*latex*)

def test_print_latex_refuses_what_it_cannot_draw():
    import pytest

    from cutelab.errors import LayoutError
    from cutelab.utils import print_latex, print_latex_tv

    with pytest.raises(LayoutError, match=r"requires a layout of rank <= 2 to print, got rank 3"):
        print_latex(cute.make_layout((2, 2, 2)))
    with pytest.raises(LayoutError, match="expected a Layout or ComposedLayout, got tuple"):
        print_latex((2, 2))
    tiler, tv = cute.make_layout_tv(cute.make_layout((2, 2)), cute.make_layout((1, 2)))
    with pytest.raises(LayoutError, match="unknown palette 'neon'"):
        print_latex_tv(tv, tiler, palette="neon")
    with pytest.raises(LayoutError, match="requires a \\(thread, value\\) layout of rank 2"):
        print_latex_tv(cute.make_layout(4), tiler)


def test_print_latex_render_func_gets_the_picture_without_the_document(capsys):
    from cutelab.utils import print_latex

    got = []
    print_latex(cute.make_layout((2, 2)), render_func=got.append)
    assert capsys.readouterr().out == ""
    assert len(got) == 1 and got[0].startswith("\\begin{tikzpicture}") and got[0].endswith("\\end{tikzpicture}")
    assert "documentclass" not in got[0]


def test_mlir_only_names_import_and_refuse_with_what_to_write():
    import pytest

    from cutelab import for_generate, if_generate, while_generate, yield_out
    from cutelab.errors import TraceError

    with pytest.raises(TraceError, match="exists only in CuTe DSL's MLIR pipeline; write .*cutlass.range"):
        for_generate()
    # while_generate and yield_out are built inside kernels (tests/kernel/test_while_generate.py)
    with pytest.raises(TraceError, match=r"cutlass.while_generate builds a runtime loop inside a @cute.kernel"):
        while_generate([1], lambda x: x)
    with pytest.raises(TraceError, match=r"cutlass.yield_out gives the next values of a while_generate loop"):
        yield_out([1])
    # if_generate is built (a branch from callables): static conditions call their body
    assert if_generate(True, lambda: None) == [] and if_generate(False, lambda: 1, lambda: 2, return_types=[int]) == 2


def test_make_ptr_of_a_torch_data_ptr_reads_and_writes_the_tensor():
    import pytest

    torch = pytest.importorskip("torch")
    from cutelab.runtime import make_ptr

    t = torch.zeros(8, 5, dtype=torch.float32)
    ptr = make_ptr(cute.Float32, t.data_ptr())  # as CUTLASS's tensor.ipynb does
    x = cute.make_tensor(ptr, cute.make_layout((8, 5), stride=(5, 1)))
    x.fill(1)
    x[(2, 3)] = 7.0
    assert t.sum().item() == 39 + 7 and t[2, 3].item() == 7.0


def test_full_like_and_friends_on_the_host():
    import numpy as np
    import pytest

    from cutelab.errors import TensorError

    v = _v([1.0, 2.0, 3.0, 4.0], (2, 2))
    assert cute.full_like(v, 7.0).numpy().tolist() == [[7.0, 7.0], [7.0, 7.0]]
    assert cute.zeros_like(v, cute.Int32).dtype is cute.Int32 and cute.ones_like(v).numpy().sum() == 4
    t = cute.make_tensor(np.zeros(6, np.float16), cute.make_layout((2, 3)))
    f = cute.full_like(t, 0.5)
    assert f.shape == (2, 3) and f.dtype is cute.Float16 and f.numpy().ravel().tolist() == [0.5] * 6
    assert cute.full((3,), 2, cute.Int8).numpy().tolist() == [2, 2, 2]
    with pytest.raises(TensorError, match="does not fit Int8|does not fit i8"):
        cute.full((3,), 300, cute.Int8)
    with pytest.raises(TensorError, match="expected a TensorSSA or a Tensor, got list"):
        cute.full_like([1, 2], 0.0)


def test_print_tensor_of_booleans_as_cute_dsl(capsys):
    import numpy as np

    v = _v([0.0, 2.0, 3.0], (3,))
    cute.print_tensor(v > 1.0)  # a register tensor: true is -1 (an i1 sign-extended to the printed i8)
    out = capsys.readouterr().out
    assert ": i8, rmem, align<32>) o (3):(1), data=" in out and "[-1, ]" in out and "[ 0, ]" in out
    cute.print_tensor(cute.make_tensor(np.array([True, False]), cute.make_layout(2)))  # memory: bytes 1 and 0
    out = capsys.readouterr().out
    assert ": i8, generic" in out and "[ 1, ]" in out


# ---- Layout[i], str of element types, tuple helpers' errors

def test_layout_index_is_its_mode_and_coordinates_still_evaluate():
    L = cute.make_layout(((2, 2), (2, 4)), stride=((1, 4), (2, 8)))
    assert str(L[0]) == "(2,2):(1,4)" and str(L[1]) == "(2,4):(2,8)"  # as CuTe DSL: get(L, mode=[i])
    assert L[(1, 0)] == L((1, 0)) == 1 and str(L[(None, 1)]) == "((2,2)):((1,4))"
    import numpy as np
    import pytest

    assert str(L[np.int64(1)]) == "(2,4):(2,8)"
    with pytest.raises(Exception, match="mode"):
        L[2]


def test_element_types_print_as_cute_dsl_names():
    assert str(cute.Float32) == "Float32" and f"{cute.BFloat16}" == "BFloat16" and str(cute.Boolean) == "Boolean"
    assert cute.Float32.name == "f32" and repr(cute.Int8) == "i8"  # the MLIR name stays for pointer types


def test_tuple_helpers_refuse_bad_input():
    import pytest

    from cutelab.errors import LayoutError

    with pytest.raises(LayoutError, match="rank\\(a\\) must be >= rank\\(b\\)"):
        cute.round_up((4,), (2, 2))
    with pytest.raises(LayoutError, match="n must be >= 1"):
        cute.repeat_as_tuple(1, 0)
    with pytest.raises(TypeError, match="requires a static int"):
        cute.find((1, 2), 1.0)
    with pytest.raises(ValueError, match="two parameters"):
        cute.find_if((1, 2), lambda v: v == 1)
    with pytest.raises(LayoutError, match="not congruent"):
        cute.transform_leaf(lambda a, b: a + b, (1, 2), (1, (2, 3)))
    with pytest.raises(LayoutError, match="a layout has no element type"):
        cute.make_rmem_tensor_like(cute.make_layout(4))
    assert cute.is_static(3) and not cute.is_static(cute.Int32) and cute.size_in_bytes(cute.Int4, cute.make_layout(3)) == 2


def test_tensor_type_shows_align_only_above_the_element_size():
    import numpy as np

    from cutelab.runtime import from_dlpack

    a = np.zeros((4, 8), np.float32)
    assert str(from_dlpack(a).type) == '!cute.memref<f32, generic, "(4,8):(8,1)">'  # as CuTe DSL 4.8.1 prints it
    assert str(from_dlpack(a, assumed_align=16).type) == '!cute.memref<f32, generic, align<16>, "(4,8):(8,1)">'
    assert str(cute.make_rmem_tensor((2, 2), cute.Float16).type) == '!cute.memref<f16, rmem, align<32>, "(2,2):(1,2)">'
