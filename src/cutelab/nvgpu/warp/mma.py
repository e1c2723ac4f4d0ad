"""Warp-level MMA ops: SM80 ``mma.sync`` (f16/bf16, tf32) and SM89 fp8, as CuTe DSL 4.8.1 has them.

Each op checks its arguments as the DSL does and knows its atom's thread-value layouts, taken
from CuTe C++ (include/cute/atom/mma_traits_sm80.hpp, mma_traits_sm89.hpp): 32 threads, A is
(M x K) row-major in registers, B is (N x K), C is (M x N).

>>> import cutelab as cute
>>> from cutelab.nvgpu import warp
>>> print(cute.make_mma_atom(warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 8))))
MMA Atom
  ThrID:       32:1
  Shape MNK:   (16,8,8)
  TV Layout A: ((4,8),(2,2)):((32,1),(16,8))
  TV Layout B: ((4,8),2):((16,1),8)
  TV Layout C: ((4,8),(2,2)):((32,1),(16,8))
>>> warp.MmaF16BF16Op(cute.BFloat16, cute.Float16, (16, 8, 8))
Traceback (most recent call last):
...
cutelab.errors.LayoutError: warp.MmaF16BF16Op(ab_dtype=BFloat16, acc_dtype=Float16, shape_mnk=(16, 8, 8)): expects the 'acc_dtype' Op parameter to be Float32 when 'ab_dtype' is BFloat16
"""

from __future__ import annotations

from typing import Any

from ...errors import LayoutError
from ...layout import Layout, parse_layout
from ...numeric import BFloat16, Float8E4M3FN, Float8E5M2, Float16, Float32, TFloat32
from ..mma_atom import MmaOp, dtype_name

__all__ = ["WarpMmaOp", "MmaF16BF16Op", "MmaTF32Op", "MmaFP8Op"]

_THR32 = Layout._raw(32, 1)
_C_16x8 = "((4,8),(2,2)):((32,1),(16,8))"

# (op kind, shape_mnk) -> (A, B, C) TV layouts, from CuTe's MMA_Traits
_LAYOUTS = {
    ("f16", (16, 8, 8)): ("((4,8),(2,2)):((32,1),(16,8))", "((4,8),2):((16,1),8)", _C_16x8),
    ("f16", (16, 8, 16)): ("((4,8),(2,2,2)):((32,1),(16,8,128))", "((4,8),(2,2)):((16,1),(8,64))", _C_16x8),
    ("tf32", (16, 8, 4)): ("((4,8),2):((16,1),8)", "((4,8),1):((8,1),0)", _C_16x8),
    ("tf32", (16, 8, 8)): ("((4,8),(2,2)):((16,1),(8,64))", "((4,8),2):((8,1),32)", _C_16x8),
    ("fp8", (16, 8, 16)): ("((4,8),(4,2)):((64,1),(16,8))", "((4,8),4):((32,1),8)", _C_16x8),
    ("fp8", (16, 8, 32)): ("((4,8),(4,2,2)):((64,1),(16,8,256))", "((4,8),(4,2)):((32,1),(8,128))", _C_16x8),
}


def _shape_tuple(shape_mnk: Any) -> Any:
    if isinstance(shape_mnk, list):
        shape_mnk = tuple(shape_mnk)
    return shape_mnk


class WarpMmaOp(MmaOp):
    """Base class of the warp-level MMA ops (frozen values with the DSL's fields)."""

    _fields: tuple = ()
    _kind = ""

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def _set(self, **kw: Any) -> None:
        for k, v in kw.items():
            object.__setattr__(self, k, v)

    def _args(self) -> str:
        return ", ".join(
            f"{f}={dtype_name(getattr(self, f)) if f.endswith('dtype') else repr(getattr(self, f))}" for f in self._fields
        )

    def _fail(self, msg: str) -> LayoutError:
        return LayoutError(f"warp.{type(self).__name__}({self._args()}): {msg}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._args()})"

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and all(getattr(self, f) == getattr(other, f) for f in self._fields)

    def __hash__(self) -> int:
        return hash((type(self).__name__,) + tuple(str(getattr(self, f)) for f in self._fields))

    def _atom_layouts(self) -> tuple:
        a, b, c = (parse_layout(s) for s in _LAYOUTS[(self._kind, self.shape_mnk)])
        return self.shape_mnk, _THR32, a, b, c


class MmaF16BF16Op(WarpMmaOp):
    """F16/BF16 warp MMA (``mma.sync...f16``/``.bf16``): f16 -> f16 or f32, bf16 -> f32; (16,8,8), (16,8,16)."""

    __slots__ = ("ab_dtype", "acc_dtype", "shape_mnk")
    _fields = ("ab_dtype", "acc_dtype", "shape_mnk")
    _kind = "f16"

    def __init__(self, ab_dtype: Any, acc_dtype: Any, shape_mnk: Any):
        self._set(ab_dtype=ab_dtype, acc_dtype=acc_dtype, shape_mnk=_shape_tuple(shape_mnk))
        if ab_dtype not in (Float16, BFloat16):
            raise self._fail("expects the 'ab_dtype' Op parameter to be one of Float16 or BFloat16")
        if acc_dtype not in (Float16, Float32):
            raise self._fail("expects the 'acc_dtype' Op parameter to be one of Float16 or Float32")
        if ab_dtype is BFloat16 and acc_dtype is not Float32:
            raise self._fail("expects the 'acc_dtype' Op parameter to be Float32 when 'ab_dtype' is BFloat16")
        if self.shape_mnk not in ((16, 8, 8), (16, 8, 16)):
            raise self._fail("expects the 'shape_mnk' Op parameter to be one of (16,8,8) or (16,8,16)")

    def __str__(self) -> str:
        return (
            "warp-level F16/BF16 MMA Operation"
            f"\n  A/B data type         = {dtype_name(self.ab_dtype)}"
            f"\n  Accumulator data type = {dtype_name(self.acc_dtype)}"
            f"\n  Instruction shape MNK = {self.shape_mnk}"
        )

    def _fragment_dtypes(self) -> tuple:
        return self.ab_dtype, self.ab_dtype, self.acc_dtype


class MmaTF32Op(WarpMmaOp):
    """TF32 warp MMA (``mma.sync...f32.tf32.tf32.f32``): shapes (16,8,4) and (16,8,8)."""

    __slots__ = ("shape_mnk",)
    _fields = ("shape_mnk",)
    _kind = "tf32"

    def __init__(self, shape_mnk: Any):
        self._set(shape_mnk=_shape_tuple(shape_mnk))
        if self.shape_mnk not in ((16, 8, 4), (16, 8, 8)):
            raise self._fail("expects the 'shape_mnk' Op parameter to be one of (16,8,4) or (16,8,8)")

    def __str__(self) -> str:
        return (
            "warp-level TF32 MMA Operation"
            "\n  A/B data type         = TFloat32"
            "\n  Accumulator data type = Float32"
            f"\n  Instruction shape MNK = {self.shape_mnk}"
        )

    def _fragment_dtypes(self) -> tuple:
        return TFloat32, TFloat32, Float32


class MmaFP8Op(WarpMmaOp):
    """FP8 warp MMA (SM89, e4m3/e5m2 -> f16 or f32): shapes (16,8,16) and (16,8,32)."""

    __slots__ = ("ab_dtype", "acc_dtype", "shape_mnk")
    _fields = ("ab_dtype", "acc_dtype", "shape_mnk")
    _kind = "fp8"

    def __init__(self, ab_dtype: Any, acc_dtype: Any, shape_mnk: Any):
        self._set(ab_dtype=ab_dtype, acc_dtype=acc_dtype, shape_mnk=_shape_tuple(shape_mnk))
        if ab_dtype not in (Float8E4M3FN, Float8E5M2):
            raise self._fail("expects the 'ab_dtype' Op parameter to be one of Float8E4M3FN or Float8E5M2")
        if acc_dtype not in (Float16, Float32):
            raise self._fail("expects the 'acc_dtype' Op parameter to be Float32 or Float16")
        if self.shape_mnk not in ((16, 8, 32), (16, 8, 16)):
            raise self._fail("expects the 'shape_mnk' Op parameter to be (16,8,32) or (16,8,16)")

    def __str__(self) -> str:
        return (
            "warp-level FP8 MMA Operation (SM89)"
            f"\n  A/B data type         = {dtype_name(self.ab_dtype)}"
            f"\n  Accumulator data type = {dtype_name(self.acc_dtype)}"
            f"\n  Instruction shape MNK = {self.shape_mnk}"
        )

    def _fragment_dtypes(self) -> tuple:
        return self.ab_dtype, self.ab_dtype, self.acc_dtype
