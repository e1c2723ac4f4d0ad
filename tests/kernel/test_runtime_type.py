"""``type(v)`` of a kernel's runtime scalar stands for its DSL class, as in CuTe DSL (where
``type(Float32(x))`` is Float32 for a runtime x): tables keyed by the numeric classes find it,
calling it converts, ``issubclass`` and the class attributes answer as the DSL class does."""

from __future__ import annotations

import numbers

import numpy as np
import pytest

import cutelab as cute
from cutelab.numeric import (Float16, Float32, Int32, Int64, Numeric, RuntimeTypeMeta, dsl_class,
                             runtime_class)
from cutelab.tracing import TracedValue

SUFFIX = {Float32: "f32", Int32: "s32", Int64: "s64"}  # quack's store_shared_remote indexes such a table


class _Slotted:
    __slots__ = ("v",)


def test_runtime_class_stands_for_its_dsl_class():
    c = runtime_class(_Slotted, Float32)
    assert isinstance(c, RuntimeTypeMeta) and issubclass(c, _Slotted) and c is runtime_class(_Slotted, Float32)
    assert c == Float32 and Float32 == c and hash(c) == hash(Float32) and c != Int32 and not (c != Float32)
    assert SUFFIX[c] == "f32" and c in {Float32} and c in (Int32, Float32)
    assert c != runtime_class(_Slotted, Int32) and c == runtime_class(tuple, Float32)  # another family's class
    assert issubclass(c, Float32) and issubclass(c, Numeric) and not issubclass(c, Float16)
    assert c.width == 32 and c.is_float and repr(c) == "f32" and str(c) == "Float32" and c.__name__ == "Float32"
    assert type(c(1.5)) is Float32 and c(1.5) == 1.5  # calling it makes a value of the DSL class
    assert isinstance(Float32(2.0), c) and not isinstance(Int32(2), c)
    assert dsl_class(c) is Float32 and dsl_class(Float32) is Float32 and dsl_class(int) is int
    assert runtime_class(_Slotted, Numeric) is None and runtime_class(_Slotted, "f32") is None
    with pytest.raises(AttributeError):
        c.no_such_attribute


@cute.kernel
def _by_type(mX: cute.Tensor, mI: cute.Tensor, mO: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    x = mX[tidx]
    i = mI[tidx]
    tx, ti = type(x), type(i)
    # the value answers its width too, as a CuTe DSL instance does (flash_attn.cute: value.width % 32)
    print(SUFFIX[tx], SUFFIX[ti], tx == Float32, tx is Float32, issubclass(tx, cute.Float32), str(tx), ti.width,
          i.width, cute.Int64(i).width)
    mO[tidx] = tx(i) + x  # type(x)(i): the Int32 value converted to Float32


def test_kernel_scalars_type_is_their_dsl_class(capsys):
    X = np.array([0.5, 1.25, -2.0, 3.0], dtype=np.float32)
    I = np.array([1, 2, 3, -4], dtype=np.int32)
    O = np.zeros(4, dtype=np.float32)
    _by_type(cute.runtime.from_dlpack(X), cute.runtime.from_dlpack(I), cute.runtime.from_dlpack(O)).launch(
        grid=1, block=4)
    assert capsys.readouterr().out.splitlines() == ["f32 s32 True False True Float32 32 32 64"]
    np.testing.assert_array_equal(O, X + I.astype(np.float32))


@cute.kernel
def _tensor_value_type(mX: cute.Tensor, mO: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    v = mX[tidx, None].load()
    print(type(v) == Float32, isinstance(v, cute.TensorSSA))  # a tensor of values is not a scalar
    mO[tidx, None].store(v)


def test_kernel_tensor_values_keep_their_class(capsys):
    X = np.arange(8, dtype=np.float32).reshape(2, 4)
    O = np.zeros_like(X)
    _tensor_value_type(cute.runtime.from_dlpack(X), cute.runtime.from_dlpack(O)).launch(grid=1, block=2)
    assert capsys.readouterr().out.splitlines() == ["False True"]
    np.testing.assert_array_equal(O, X)


@cute.kernel
def _abc_checks(mX: cute.Tensor, mO: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    x = mX[tidx]
    print(isinstance(x, TracedValue), isinstance(x, numbers.Real), isinstance(x, Float32))
    mO[tidx] = x


def test_abc_caches_keep_runtime_and_static_values_apart(capsys):
    # the runtime class equals its DSL class, and ABCs cache classes in sets matched by equality: a
    # traced Float32 checked first must not make Float32(2.0) a traced value, nor the other way round
    assert not isinstance(Float32(2.0), TracedValue) and isinstance(Float32(2.0), numbers.Real)
    X = np.arange(2, dtype=np.float32)
    O = np.zeros_like(X)
    _abc_checks(cute.runtime.from_dlpack(X), cute.runtime.from_dlpack(O)).launch(grid=1, block=2)
    assert capsys.readouterr().out.splitlines() == ["True True True"]  # as Float32 answers numbers.Real
    assert not isinstance(Float32(2.0), TracedValue) and not isinstance(Int32(3), TracedValue)
    assert isinstance(Float32(2.0), numbers.Real) and isinstance(Int32(3), numbers.Integral)
    np.testing.assert_array_equal(O, X)
