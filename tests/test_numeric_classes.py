"""The element types are classes, as in CuTe DSL (issue 18, section 2): Float32 is a class whose
metaclass is NumericMeta (FloatMeta), Float32(1.5) an instance of it, and the types can be
subclassed, put in unions, used as dict keys and in cache keys, as libraries (quack) use them."""

from __future__ import annotations

import copy
import math
import pickle
import typing

import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab import numeric
from cutelab.compat.cutlass_dsl import T
from cutelab.dtypes import row
from cutelab.dynamic import DynBool, DynInt
from cutelab.kernel.launch.args import _static_key
from cutelab.numeric import (
    BFloat16, Boolean, Float, Float4E2M1FN, Float6E2M3FN, Float6E3M2FN, Float8E4M3FN, Float8E5M2, Float8E8M0FNU,
    Float16, Float32, Float64, FloatMeta, Int4, Int8, Int16, Int32, Int64, Integer, IntegerMeta, Numeric,
    NumericMeta, TFloat32, Uint8, Uint32, Uint64,
)

ALL = [Float64, Float32, Float16, BFloat16, TFloat32, Float8E4M3FN, Float8E5M2, Int8, Int16, Int32, Int64, Uint8,
       Uint32, Uint64, Boolean]


def test_types_are_classes_with_a_metaclass():
    for t in ALL:
        assert isinstance(t, type) and isinstance(t, NumericMeta) and issubclass(t, Numeric)
    assert isinstance(Float32, FloatMeta) and not isinstance(Float32, IntegerMeta)
    assert isinstance(Int32, IntegerMeta) and isinstance(Boolean, IntegerMeta)
    assert issubclass(Float32, Float) and issubclass(Int8, Integer) and not issubclass(Int8, Float)
    assert Float32.__name__ == "Float32" and Float32.__module__ == "cutelab.numeric"
    # the DSL's names for them: cutlass.cutlass_dsl / base_dsl.typing / cute.typing
    from cutelab.compat import base_dsl, cute_typing, cutlass_dsl

    for mod in (base_dsl, cute_typing, cutlass_dsl):
        assert mod.NumericMeta is NumericMeta and mod.FloatMeta is FloatMeta and mod.Float32 is Float32
    assert base_dsl.typing.Float4E2M1FN is Float4E2M1FN and cutlass.Float8E8M0FNU is Float8E8M0FNU


def test_values_are_instances_and_python_numbers():
    x, i, b = Float32(1.5), Int8(300), Boolean(7)
    assert type(x) is Float32 and isinstance(x, Float32) and isinstance(x, float) and isinstance(x, Numeric)
    assert isinstance(x, Float) and not isinstance(x, Integer) and not isinstance(x, Float16)
    assert type(i) is Int8 and isinstance(i, int) and i == 44 and i.dtype is Int8
    assert type(b) is Boolean and b == 1
    assert not isinstance(1.5, Float32) and not isinstance(3, Int32)  # a plain Python number is not one
    assert isinstance(Int8(100) + 100, Int8) and Int8(100) + 100 == -56  # arithmetic stays in the type
    assert isinstance(Float16(1.0) / 3, Float16) and Float16(1.0) / 3 == float(np.float16(1 / 3))
    assert type(Int32(42).to(Float32)) is Float32 and Int32(42).to(Float32) == 42.0
    assert Float32.isinstance(x) and not Float16.isinstance(x) and Int32.isinstance(3) and Float32.isinstance(2.0)
    with pytest.raises(TypeError, match="Integer is an abstract type"):
        Integer(3)


def test_runtime_values_are_instances_of_their_type():
    n, s = DynInt(48, div=16), DynInt(8, dtype="i64")
    assert isinstance(n, Int32) and isinstance(n, Integer) and isinstance(n, Numeric) and not isinstance(n, Int64)
    assert isinstance(s, Int64) and isinstance(DynBool(True), Boolean)
    assert not isinstance(np.float32(1.0), Float32) and not isinstance(np.int32(1), Int32)

    seen = []

    @cute.jit
    def f(m: cutlass.Int32):
        a, x = cutlass.Int32(5), cutlass.Float32(2.5)
        seen.append((isinstance(a, cutlass.Int32), isinstance(x, cutlass.Float32), isinstance(m, cutlass.Int32),
                     isinstance(a, cutlass.Float32), str(a)))

    f(4)
    assert seen == [(True, True, True, False, "?")]


def test_subclasses_as_quack_defines_them():
    class Complex64(Float32, metaclass=FloatMeta, width=64, mlir_type=T.f64):
        """quack.complex's declaration: f64-packed bits."""

    assert issubclass(Complex64, Float32) and isinstance(Complex64, FloatMeta)
    assert Complex64.width == 64 and Complex64.storage == np.float64 and repr(Complex64) == "f64"
    assert str(Complex64) == "Complex64" and Float32.width == 32  # the base keeps its own
    assert Complex64.mlir_type is Float64

    class MyF32(Float32):  # same representation, another class
        pass

    v = MyF32(0.1)
    assert type(v) is MyF32 and isinstance(v, Float32) and v == float(np.float32(0.1)) and repr(MyF32) == "f32"

    class Int24(Integer, width=24, signed=False):  # an integer of its own width: named after its class
        pass

    assert Int24.width == 24 and Int24.kind == "uint" and repr(Int24) == "Int24" and Int24.max == 2 ** 24 - 1
    assert Int24(2 ** 24 + 3) == 3


def test_unions_dict_keys_pickle_and_cache_keys():
    u = float | Float32 | cutlass.Int64
    assert typing.get_args(u) == (float, Float32, Int64)
    assert typing.get_args(typing.Optional[Float16]) == (Float16, type(None))

    def g(v: float | Float32 = 0.0) -> None:
        pass

    assert typing.get_type_hints(g)["v"] == float | Float32
    d = {Float32: "f", Float16: "h", Int32: "i"}
    assert d[Float32] == "f" and d[cutlass.Float16] == "h" and len({Float32, Float32, BFloat16}) == 2
    for t in ALL + [Float4E2M1FN, Float8E8M0FNU]:
        assert pickle.loads(pickle.dumps(t)) is t and copy.deepcopy(t) is t
    assert type(pickle.loads(pickle.dumps(Int8(5)))) is Int8 and pickle.loads(pickle.dumps(Float32(0.5))) == 0.5
    # the keys a compiled-kernel cache builds from its arguments tell the types apart, and stay the same
    assert _static_key(Float32) == _static_key(Float32) and _static_key(Float32) != _static_key(Float16)
    assert _static_key((Float32, 128)) != _static_key((BFloat16, 128))
    assert hash((Float32, 128)) == hash((Float32, 128))


def test_attributes_as_cute_dsl_has_them():
    assert Float32.numpy_dtype is np.float32 and Float16.numpy_dtype is np.float16 and Int8.numpy_dtype is np.int8
    assert Uint64.numpy_dtype is np.uint64 and Boolean.numpy_dtype is np.bool_
    assert BFloat16.numpy_dtype is None and Float8E4M3FN.numpy_dtype is None and TFloat32.numpy_dtype is None
    assert (Float32.width, BFloat16.width, Int64.width, Float8E5M2.width) == (32, 16, 64, 8)
    assert Float32.is_float and not Float32.is_integer and Int32.is_integer and Boolean.is_integer
    assert Int32.signed and not Uint32.signed and Float32.signed
    assert (Float32.zero, Int32.zero) == (0.0, 0) and type(Int32.zero) is int
    assert Float32.inf == float("inf") and Float16.nan != Float16.nan
    assert (Int8.min, Int8.max, Uint8.min, Uint8.max, Int64.max) == (-128, 127, 0, 255, 2 ** 63 - 1)
    assert (Float8E4M3FN.exponent_width, Float8E4M3FN.mantissa_width) == (4, 3)
    assert Int32.recast_width(16) is Int16 and Float32.recast_width(64) is Float64
    assert Float32.is_same_kind(BFloat16) and not Float32.is_same_kind(Int32)
    assert (Float32.bytes, Int4.bytes, Float32.n_bytes(10)) == (4, 1, 40)
    assert NumericMeta.from_python(1.0) is Float32 and NumericMeta.from_python(True) is Boolean
    with pytest.raises(AttributeError, match="only float types have inf"):
        Int32.inf
    with pytest.raises(AttributeError, match="only integer types have max"):
        Float32.max
    with pytest.raises(TypeError, match="recast_width"):
        Int32.recast_width(12)


def test_printing_is_unchanged():
    # str: the class name (as CuTe DSL prints a type); repr: the MLIR name, as types print inside
    # CuTe DSL's tensor and pointer types (golden tests check those prints)
    assert (str(Float32), repr(Float32), f"{BFloat16}", repr([Float16, Int8])) == ("Float32", "f32", "BFloat16",
                                                                                 "[f16, i8]")
    assert str(Float32(0.5)) == "0.5" and repr(Int32(7)) == "7"
    t = cute.make_tensor(np.zeros(4, np.float32), cute.make_layout(4))
    assert str(t).startswith("tensor<ptr<f32, generic") and t.element_type is Float32


def test_new_narrow_types_exist_and_refuse_what_is_not_built():
    expect = {Float4E2M1FN: ("f4E2M1FN", 4, 2, 1), Float6E2M3FN: ("f6E2M3FN", 6, 2, 3),
              Float6E3M2FN: ("f6E3M2FN", 6, 3, 2), Float8E8M0FNU: ("f8E8M0FNU", 8, 8, 0)}
    for t, (name, width, e, m) in expect.items():
        assert (repr(t), t.width, t.exponent_width, t.mantissa_width) == (name, width, e, m)
        assert t.is_float and not t.is_fp8 and t.numpy_dtype is None and getattr(cutlass, t.__name__) is t
        if t is Float8E8M0FNU:  # block scales: scalars are powers of two, rounded toward +infinity (cutelab.fp8)
            assert (t(1.0), t(3.0)) == (1.0, 4.0)
        else:
            with pytest.raises(TypeError, match=f"scalars of {width}-bit float types are not supported"):
                t(1.0)
        with pytest.raises(KeyError):
            row(t)  # no storage row: tensors of these types are not built yet
    assert numeric.NUMERICS["f32"] is Float32 and Float4E2M1FN not in numeric.NUMERICS.values()


def test_types_convert_kernel_values_and_indices():
    from cutelab.runtime import from_dlpack

    @cute.kernel
    def k(A: cute.Tensor, B: cute.Tensor, C: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        x = cutlass.Int32(A[tidx])  # a register value: truncated toward zero, as a C conversion
        B[tidx] = cutlass.Float32(x) + 1.0
        C[cutlass.Int64(tidx)] = cutlass.Float32(tidx) * 2.0  # an index: Int64 keeps it an index

    A, B, C = np.array([1.5, 2.5, -3.5], np.float32), np.zeros(3, np.float32), np.zeros(3, np.float32)
    k(from_dlpack(A), from_dlpack(B), from_dlpack(C)).launch(grid=1, block=3)
    assert B.tolist() == [2.0, 3.0, -2.0] and C.tolist() == [0.0, 2.0, 4.0]


def test_kernel_scalars_and_indices_are_instances_of_their_type():
    from cutelab.runtime import from_dlpack

    seen = []

    @cute.kernel
    def k(A: cute.Tensor, I: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        a, i = A[tidx], I[tidx]
        seen.append((isinstance(a, cutlass.Float32), isinstance(a, cutlass.Numeric), isinstance(a, cutlass.Int32),
                     isinstance(i, cutlass.Int32), isinstance(tidx, cutlass.Int32), isinstance(A.load(), cutlass.Float32)))
        A[tidx] = a + 1.0

    A, I = np.zeros(4, np.float32), np.zeros(4, np.int32)
    k(from_dlpack(A), from_dlpack(I)).launch(grid=1, block=4)
    assert seen[0] == (True, True, False, True, True, False) and A.tolist() == [1.0] * 4


def test_abstract_bases_are_not_element_types():
    from cutelab.numeric import is_numeric_type
    from cutelab.runtime import from_dlpack

    assert is_numeric_type(Float32) and is_numeric_type(Float4E2M1FN) and not is_numeric_type(Float32(1.0))
    assert not any(is_numeric_type(t) for t in (Numeric, Integer, Float))
    with pytest.raises(TypeError, match="no element type of that name"):
        cutlass.dtype("Numeric")
    with pytest.raises(cute.errors.TensorError, match="make_ptr: the element type must be"):
        cute.make_ptr(Numeric, 0)

    @cute.kernel
    def k(A: cute.Tensor, v: cutlass.Numeric):  # an abstract annotation: the value is taken as it comes
        tidx, _, _ = cute.arch.thread_idx()
        A[tidx] = A[tidx] * v

    A = np.ones(2, np.float32)
    k(from_dlpack(A), 3).launch(grid=1, block=2)
    assert A.tolist() == [3.0, 3.0]


def test_constructors_and_ir_value():
    assert Float32(0.5, loc=None, ip=None) == 0.5 and Float32(0.5).ir_value() == 0.5
    assert type(Int32(3).ir_value(loc=None, ip=None)) is Int32
    with pytest.raises(TypeError, match="expected one value"):
        Float32(1.0, 2.0)

    class Pair(Float32, metaclass=FloatMeta, width=64, mlir_type=T.f64):
        def __init__(self, x, im=None):
            pass

    assert Pair.width == 64  # the class is usable; its own constructor is not
    with pytest.raises(TypeError, match="defines its own __init__ or __new__"):
        Pair(1.0, 2.0)


def test_ir_value_of_kernel_values_feeds_inline_asm():
    from cutelab.compat.mlir.dialects import llvm
    from cutelab.runtime import from_dlpack

    @cute.kernel
    def k(A: cute.Tensor, B: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        x = cutlass.Float32(A[tidx]).ir_value(loc=None, ip=None)  # as quack's utils.exp2f writes it
        B[tidx] = llvm.inline_asm(T.f32(), [x, cutlass.Float32(tidx).ir_value()], "add.f32 $0, $1, $2;", "=f,f,f")

    A, B = np.array([1.0, 2.0, 4.0], np.float32), np.zeros(3, np.float32)
    k(from_dlpack(A), from_dlpack(B)).launch(grid=1, block=3)
    assert B.tolist() == [1.0, 3.0, 6.0]



def test_a_plain_number_makes_the_same_value_by_the_short_path():
    """Int32(-100) and Float32(1e-6) of a plain int or float (quack makes one at every call) skip the
    conversions of other values, and make what they made: wrapped, rounded as numpy rounds, typed."""
    rng = np.random.default_rng(0)
    vals = [0.0, -0.0, 1e-6, 1e-45, 1e-46, -1e-46, 2.0 ** -149, 2.0 ** -150, 3.4028235e38, 3.5e38, -1e39,
            float("inf"), float("-inf"), 16777217.0, 1 / 3]
    vals += list(rng.uniform(-1e6, 1e6, 2000)) + list(np.ldexp(rng.random(2000), rng.integers(-160, 130, 2000)))
    with np.errstate(over="ignore"):
        for v in map(float, vals):
            x = Float32(v)
            want = float(np.float32(v))
            assert type(x) is Float32 and x == want and math.copysign(1, x) == math.copysign(1, want), v
    assert math.isnan(Float32(float("nan")))
    assert type(Int32(-100)) is Int32 and Int32(-100) == -100 and Int32(-100).dtype is Int32
    assert Int32(2 ** 32 - 100) == -100 and Int8(300) == 44 and cutlass.Uint8(-1) == 255
    assert type(Boolean(3)) is Boolean and Boolean(3) == 1 and Int32(3.9) == 3 and type(Int32(3.9)) is Int32

    class Pair(Float32, metaclass=FloatMeta, width=64, mlir_type=T.f64):
        def __init__(self, x):
            pass

    with pytest.raises(TypeError, match="defines its own __init__ or __new__"):
        Pair(1.0)  # one plain number: refused as before
