"""Warpgroup MMA ops: SM90 ``wgmma`` (f16/bf16, fp8, int8), as CuTe DSL 4.8.1 has them.

A warpgroup is 128 threads. C is (64 x N) in registers; A is read from shared memory through a
descriptor (OperandSource.SMEM) or from registers (RMEM); B always from shared memory. As in
CuTe (include/cute/atom/mma_traits_sm90_gmma.hpp), an operand read from shared memory has the
TV layout ``(128,(MN,K)):(0,(1,MN))``: every thread sees the whole tile, whatever its major mode.

>>> import cutelab as cute
>>> from cutelab.nvgpu import warpgroup, OperandMajorMode
>>> op = warpgroup.MmaF16BF16Op(cute.Float16, cute.Float32, (64, 64, 16), warpgroup.OperandSource.RMEM,
...                             OperandMajorMode.K, OperandMajorMode.MN)
>>> print(cute.make_mma_atom(op))
MMA Atom
  ThrID:       128:1
  Shape MNK:   (64,64,16)
  TV Layout A: ((4,8,4),(2,2,2)):((128,1,16),(64,8,512))
  TV Layout B: (128,(64,16)):(0,(1,64))
  TV Layout C: ((4,8,4),(2,2,8)):((128,1,16),(64,8,512))
"""

from __future__ import annotations

import enum
from typing import Any

from ... import int_tuple as it
from ...errors import LayoutError
from ...layout import Layout
from ...numeric import BFloat16, Float8E4M3FN, Float8E5M2, Float16, Float32, Int8, Int32, Uint8
from ..mma_atom import MmaOp as _AtomMmaOp
from ..mma_atom import dtype_name
from ..universal_mma import OperandMajorMode

# OperandMajorMode is exported here too: CuTe DSL 4.8.1 still offers warpgroup.OperandMajorMode
# (deprecated there in favour of cute.nvgpu.OperandMajorMode, the same enum).
__all__ = ["OperandSource", "OperandMajorMode", "Field", "WarpGroupMmaOp", "MmaOp", "MmaF16BF16Op", "MmaF8Op", "MmaI8Op"]


class OperandSource(enum.Enum):
    """Where the A operand of a warpgroup MMA lives: registers or shared memory (descriptor)."""

    RMEM = "rmem"
    SMEM = "smem_desc"

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__}.{self.name}>"


class Field(enum.Enum):
    """The runtime fields of a warpgroup MMA atom (``atom.set(Field.ACCUMULATE, True)``)."""

    ACCUMULATE = "accum_c"

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__}.{self.name}>"


class WarpGroupMmaOp(_AtomMmaOp):
    """Base class of the warpgroup-level MMA ops."""


_FIELDS = ("a_dtype", "b_dtype", "acc_dtype", "shape_mnk", "a_src", "a_major_mode", "b_major_mode")


def _c_layout(n: int) -> Layout:
    if n == 8:  # CuTe's CLayout_64xN<8>, whose trailing size-1 mode the DSL drops when it prints
        return Layout._raw(((4, 8, 4), (2, 2)), ((128, 1, 16), (64, 8)))
    return Layout._raw(((4, 8, 4), (2, 2, n // 8)), ((128, 1, 16), (64, 8, 512)))


def _smem_layout(mn: int, k: int) -> Layout:
    return Layout._raw((128, (mn, k)), (0, (1, mn)))


# register-sourced A (64 x K), by element width: CuTe's ALayout_64x16 (16-bit) and ALayout_64x32 (8-bit)
_A_RMEM = {
    16: Layout._raw(((4, 8, 4), (2, 2, 2)), ((128, 1, 16), (64, 8, 512))),
    8: Layout._raw(((4, 8, 4), (4, 2, 2)), ((256, 1, 16), (64, 8, 1024))),
}


class MmaOp(WarpGroupMmaOp):
    """A warpgroup MMA: 64 x N x K with 8 <= N <= 256, N % 8 == 0; K fixed by the element type."""

    __slots__ = _FIELDS
    descriptive_name = "warpgroup MMA Operation"
    _instruction_k = 0

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def _init(self, a_dtype: Any, b_dtype: Any, acc_dtype: Any, instruction_shape: Any, a_src: Any,
              a_major_mode: Any, b_major_mode: Any, args: str) -> None:
        shp = tuple(instruction_shape) if isinstance(instruction_shape, list) else instruction_shape
        for k, v in zip(_FIELDS, (a_dtype, b_dtype, acc_dtype, shp, a_src, a_major_mode, b_major_mode)):
            object.__setattr__(self, k, v)
        object.__setattr__(self, "_args", args)
        if not isinstance(a_src, OperandSource):
            raise self._fail("expects the 'a_src' Op parameter to be a warpgroup.OperandSource instance")
        for f in ("a_major_mode", "b_major_mode"):
            v = getattr(self, f)
            if isinstance(v, str):  # the DSL's OperandMajorMode("k") spelling
                try:
                    v = OperandMajorMode(v)
                except ValueError:
                    pass
                object.__setattr__(self, f, v)
            if not isinstance(getattr(self, f), OperandMajorMode):
                raise self._fail(f"expects the '{f}' Op parameter to be a cute.nvgpu.OperandMajorMode instance")
        if (not isinstance(shp, tuple) or len(shp) not in (2, 3) or it.depth(shp) != 1
                or not all(type(x) is int for x in shp)):
            raise self._fail(f"expected a flat rank 2 or 3 tuple for the 'shape_mnk' Op parameter, but got {shp}")
        m, n = shp[0], shp[1]
        if m != 64:
            raise self._fail(f"expects the M-mode to be 64, but got {m}")
        if n < 8 or n > 256 or n % 8 != 0:
            raise self._fail(f"expects the N-mode to satisfy 8 <= N <= 256 and N % 8 == 0. but got {n}")
        self._verify()
        if len(self.shape_mnk) == 2:
            object.__setattr__(self, "shape_mnk", (*self.shape_mnk, self._instruction_k))
        if self.shape_mnk[2] != self._instruction_k:
            raise self._fail(
                f"expects the instruction extent in the K-mode to be {self._instruction_k}, but got {self.shape_mnk[2]}"
            )
        self._verify_n()

    _args = ""

    def _verify(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _verify_n(self) -> None:
        pass

    def _fail(self, msg: str) -> LayoutError:
        return LayoutError(f"warpgroup.{type(self).__name__}({self._args}): {msg}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._args})"

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and all(getattr(self, f) == getattr(other, f) for f in _FIELDS)

    def __hash__(self) -> int:
        return hash((type(self).__name__,) + tuple(str(getattr(self, f)) for f in _FIELDS))

    def __str__(self) -> str:
        return (
            self.descriptive_name
            + f"\n  A data type           = {dtype_name(self.a_dtype)}"
            + f"\n  B data type           = {dtype_name(self.b_dtype)}"
            + f"\n  Accumulator data type = {dtype_name(self.acc_dtype)}"
            + f"\n  A source location     = {self.a_src}"
            + f"\n  A major mode          = {self.a_major_mode}"
            + f"\n  B major mode          = {self.b_major_mode}"
            + f"\n  Instruction shape MNK = {self.shape_mnk}"
        )

    def _atom_layouts(self) -> tuple:
        m, n, k = self.shape_mnk
        if self.a_src is OperandSource.SMEM:
            a = _smem_layout(m, k)
        else:
            a = _A_RMEM[self.a_dtype.width]
        return self.shape_mnk, Layout._raw(128, 1), a, _smem_layout(n, k), _c_layout(n)

    def _fragment_dtypes(self) -> tuple:
        return self.a_dtype, self.b_dtype, self.acc_dtype

    def _runtime_fields(self) -> dict:
        return {Field.ACCUMULATE.value: False}

    def _operand_in_smem(self, operand: str) -> bool:
        return operand == "B" or (operand == "A" and self.a_src is OperandSource.SMEM)


def _fmt_args(*pairs: Any) -> str:
    return ", ".join(f"{k}={dtype_name(v) if k.endswith('dtype') else v}" for k, v in pairs)


class MmaF16BF16Op(MmaOp):
    """F16/BF16 warpgroup MMA: f16 -> f16 or f32, bf16 -> f32; K = 16."""

    descriptive_name = "warpgroup F16/BF16 MMA Operation"
    _instruction_k = 16

    def __init__(self, ab_dtype: Any, acc_dtype: Any, instruction_shape: Any, a_src: Any, a_major_mode: Any,
                 b_major_mode: Any):
        args = _fmt_args(("ab_dtype", ab_dtype), ("acc_dtype", acc_dtype), ("instruction_shape", instruction_shape),
                         ("a_src", a_src), ("a_major_mode", a_major_mode), ("b_major_mode", b_major_mode))
        self._init(ab_dtype, ab_dtype, acc_dtype, instruction_shape, a_src, a_major_mode, b_major_mode, args)

    def _verify(self) -> None:
        if self.a_dtype not in (Float16, BFloat16):
            raise self._fail("expects the 'ab_dtype' Op parameter to be one of Float16 or BFloat16")
        if self.acc_dtype not in (Float16, Float32):
            raise self._fail("expects the 'acc_dtype' Op parameter to be one of Float16 or Float32")
        if self.a_dtype is BFloat16 and self.acc_dtype is not Float32:
            raise self._fail("expects the 'acc_dtype' Op parameter to be Float32 when 'ab_dtype' is BFloat16")


class _SeparateABOp(MmaOp):
    """A warpgroup MMA whose A and B element types are given separately (F8, I8)."""

    def __init__(self, a_dtype: Any, b_dtype: Any, acc_dtype: Any, instruction_shape: Any, a_src: Any,
                 a_major_mode: Any, b_major_mode: Any):
        args = _fmt_args(("a_dtype", a_dtype), ("b_dtype", b_dtype), ("acc_dtype", acc_dtype),
                         ("instruction_shape", instruction_shape), ("a_src", a_src),
                         ("a_major_mode", a_major_mode), ("b_major_mode", b_major_mode))
        self._init(a_dtype, b_dtype, acc_dtype, instruction_shape, a_src, a_major_mode, b_major_mode, args)


class MmaF8Op(_SeparateABOp):
    """FP8 warpgroup MMA: e4m3/e5m2 (independently for A and B) -> f16 or f32; K = 32."""

    descriptive_name = "warpgroup F8 MMA Operation"
    _instruction_k = 32

    def _verify(self) -> None:
        if self.a_dtype not in (Float8E5M2, Float8E4M3FN):
            raise self._fail("expects the 'a_dtype' Op parameter to be one of Float8E5M2 or Float8E4M3FN")
        if self.b_dtype not in (Float8E5M2, Float8E4M3FN):
            raise self._fail("expects the 'b_dtype' Op parameter to be one of Float8E5M2 or Float8E4M3FN")
        if self.acc_dtype not in (Float16, Float32):
            raise self._fail("expects the 'acc_dtype' Op parameter to be one of Float16 or Float32")


class MmaI8Op(_SeparateABOp):
    """Int8 warpgroup MMA: s8/u8 (independently for A and B) -> s32; K = 32; N in {8, 24} or N % 16 == 0."""

    descriptive_name = "warpgroup I8 MMA Operation"
    _instruction_k = 32

    def _verify(self) -> None:
        if self.a_dtype not in (Int8, Uint8):
            raise self._fail("expects the 'a_dtype' Op parameter to be one of Int8 or Uint8")
        if self.b_dtype not in (Int8, Uint8):
            raise self._fail("expects the 'b_dtype' Op parameter to be one of Int8 or Uint8")
        if self.acc_dtype is not Int32:
            raise self._fail("expects the 'acc_dtype' Op parameter must be Int32")

    def _verify_n(self) -> None:
        n = self.shape_mnk[1]
        if not (8 <= n <= 256 and (n in (8, 24) or n % 16 == 0)):
            raise self._fail(f"expects the N-mode to satisfy N=8*i where i={{1,2,3,4}} or N=16*i where i={{3,4,...,15,16}}. But got {n}")
