"""Tensor errors are cutelab's own (no numpy messages), stores follow CuTe DSL's matching element types."""

import numpy as np
import pytest

import cutelab as cute
from cutelab import TensorError


def _t(dtype=np.int32, n=8):
    return cute.make_tensor(np.zeros(n, dtype), cute.make_layout(n))


@pytest.mark.parametrize("coord", [1.5, float("inf"), float("nan"), "1", (0.0,), True])
def test_non_integer_index_names_the_operand(coord):
    T = _t()
    with pytest.raises(TensorError, match="is not a coordinate"):
        T[coord]
    with pytest.raises(TensorError, match="is not a coordinate"):
        T[coord] = 1


def test_numpy_integer_indices_are_ints():
    a = np.arange(8, dtype=np.int32)
    T = cute.make_tensor(a, cute.make_layout(8))
    assert T[np.int64(3)] == 3 and T[np.uint8(7)] == 7
    T[np.int16(2)] = 20
    assert a[2] == 20


def test_one_element_takes_one_value():
    T = _t()
    with pytest.raises(TensorError, match="one element takes one value"):
        T[0] = np.array([5])


@pytest.mark.parametrize("value,match", [(3.7, "floating point"), (np.full(8, 2.5), "floating point"),
                                         (2**40, "does not fit i32"), (-(2**31) - 1, "does not fit i32"),
                                         ("a", "not a number"), (None, "not a number")])
def test_store_refuses_conversions_that_change_values(value, match):
    a = np.arange(8, dtype=np.int32)
    T = cute.make_tensor(a, cute.make_layout(8))
    with pytest.raises(TensorError, match=match):
        T.store(value)
    with pytest.raises(TensorError, match=match):
        T[0] = value if np.ndim(value) == 0 else value[0]
    assert a.tolist() == list(range(8))  # nothing was written


def test_store_of_another_element_type_says_how_to_convert():
    T, F = _t(np.int32), _t(np.float16)
    with pytest.raises(TensorError, match=r"f16 but the tensor holds i32.*\.to\(cute\.Int32\)"):
        T.store(F.load())
    T.store(F.load().to(cute.Int32))  # explicit conversion is fine


def test_exact_stores_still_work():
    T, F, B = _t(np.int32), _t(np.float32), _t(np.bool_)
    T.store(np.arange(8, dtype=np.int64))  # int64 values that fit
    T[0] = np.uint8(9)
    F.fill(0.1)
    F[1] = 3  # an int into a float tensor
    B.fill(True)
    assert T.load().numpy().tolist() == [9, 1, 2, 3, 4, 5, 6, 7]
    assert F.load().numpy()[1] == 3 and abs(F.load().numpy()[0] - 0.1) < 1e-7
    with pytest.raises(TensorError, match="booleans"):
        B.fill(1)


@pytest.mark.parametrize("index", [None, 1.0, "0"])
def test_local_partition_index_must_be_an_int(index):
    T = cute.make_tensor(np.zeros(16, np.float32), cute.make_layout((4, 4)))
    with pytest.raises(TensorError, match="thread index"):
        cute.local_partition(T, cute.make_layout((2, 2)), index)


def test_asarray_of_loaded_values():
    a = np.arange(12, dtype=np.float32)
    T = cute.make_tensor(a, cute.make_layout((3, 4), stride=(4, 1)))
    ssa = T.load()
    got = np.asarray(ssa)
    assert got.shape == (3, 4) and (got == a.reshape(3, 4)).all()
    assert np.asarray(ssa, dtype=np.float64).dtype == np.float64


def test_jupyter_pictures():
    T = cute.make_tensor(np.arange(6, dtype=np.int32), cute.make_layout((2, 3), stride=(3, 1)))
    s = T._repr_svg_()
    assert s.startswith("<svg") and ">5</text>" in s
    assert cute.make_identity_tensor((2, 3))._repr_svg_().startswith("<svg")
    assert cute.make_identity_layout((2, 3))._repr_svg_() is None  # IPython shows the text, no traceback
    fig = cute.render.layout_figure("(2,2):(1,2)")
    assert fig._repr_svg_().startswith("<svg")
    big = cute.make_tensor(np.zeros(1 << 22, np.int8), cute.make_layout((2048, 2048)))
    assert len(big._repr_svg_()) < 2_000_000


def test_ipython_formatter_for_tv_pairs():
    ipy = pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    cute._register_ipython()
    fmt = shell.display_formatter.formatters["image/svg+xml"]
    pair = cute.make_layout_tv(cute.make_layout((2, 3), stride=(3, 1)), cute.make_layout((2, 2), stride=(2, 1)))
    assert fmt(pair).startswith("<svg")
    assert fmt((1, 2)) is None
    del ipy


def test_make_fragment_like_of_a_coordinate_tensor():
    """A coordinate tensor has basis strides and no element type: its fragment comes from the shape,
    with the element type given; without one, a clear error (it used to be a TypeError from deep
    inside compact_order)."""
    import cutelab as cute

    assert str(cute.make_fragment_like(cute.make_identity_tensor((4, 3)), cute.Int32).layout) == "(4,3):(1,4)"
    with pytest.raises(cute.TensorError, match="coordinate tensor has no element type"):
        cute.make_fragment_like(cute.make_identity_tensor((4, 3)))


# issue 23: a store never loses a value without a word (the rule is in tensor._checked_values)
@pytest.mark.parametrize("dtype,value", [
    (cute.Float16, 1e6), (cute.Float16, 2**40), (cute.Float16, -70000.0), (cute.Float32, 1e39),
    (cute.BFloat16, 1e39), (cute.Float8E4M3FN, 1e6), (cute.Float8E4M3FN, 480.0), (cute.Float8E5M2, 61440.0),
])
def test_a_finite_value_out_of_a_float_types_range_is_refused(dtype, value):
    t = cute.make_rmem_tensor(4, dtype)
    t.store(1.0)
    with pytest.raises(TensorError, match=r"out of the range of .*nothing was written"):
        t.store(value)
    with pytest.raises(TensorError, match="out of the range"):
        t[1] = value
    with pytest.raises(TensorError, match="out of the range"):
        t.store(np.array([1.0, 2.0, value, 3.0]))
    assert t.numpy().tolist() == [1.0] * 4  # nothing was written


@pytest.mark.parametrize("dtype,value,stored", [
    (cute.Float16, 65504.0, 65504.0), (cute.Float16, 65519.0, 65504.0),  # rounds to the largest finite value
    (cute.Float16, 0.1, float(np.float16(0.1))), (cute.Float16, float("inf"), float("inf")),
    (cute.BFloat16, 1e6, 999424.0), (cute.Float8E4M3FN, 448.0, 448.0), (cute.Float32, 2**40, float(2**40)),
])
def test_rounding_follows_numpy_and_infinities_are_stored(dtype, value, stored):
    t = cute.make_rmem_tensor(1, dtype)
    t.store(value)
    assert float(t.numpy()[0]) == stored


@pytest.mark.parametrize("dtype,value", [(cute.Int32, 2**40), (cute.Int8, 128), (cute.Uint16, -1), (cute.Int64, 2**70),
                                             (cute.Float16, 2**70)])
def test_an_integer_out_of_range_is_refused(dtype, value):
    t = cute.make_rmem_tensor(2, dtype)
    with pytest.raises(TensorError, match=f"the value {value} does not fit .*nothing was written"):
        t.store(value)
