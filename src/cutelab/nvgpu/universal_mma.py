"""The universal MMA op (one thread, one FMA) and the operand major-mode enumerations.

Names and printing follow ``cutlass.cute.nvgpu`` (CuTe DSL 4.8.1, nvgpu/common.py).

>>> import cutelab as cute
>>> print(cute.nvgpu.MmaUniversalOp(cute.Float32))
universal MMA Operation using FMA
  A/B/Accumulator data type = Float32
>>> cute.nvgpu.OperandMajorMode("mn")
<OperandMajorMode.MN>
"""

from __future__ import annotations

import enum
from typing import Any

from ..errors import LayoutError
from ..layout import Layout
from ..numeric import Float16, Float32, Float64
from .mma_atom import MmaOp, dtype_name

__all__ = ["OperandMajorMode", "OutputMajorMode", "MmaUniversalOp"]


class OperandMajorMode(enum.Enum):
    """Which mode of an MMA input operand is contiguous: K (K-major) or MN (M- or N-major)."""

    MN = "mn"
    K = "k"

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__}.{self.name}>"

    @classmethod
    def _missing_(cls, value: Any) -> Any:
        if isinstance(value, str):
            return {"MN": cls.MN, "K": cls.K}.get(value.upper())
        return None


class OutputMajorMode(enum.Enum):
    """Major mode of the output D(M, N): M (column-major, stride (1, M)) or N (row-major)."""

    M = "m"
    N = "n"

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__}.{self.name}>"


def _op_error(op: str, msg: str) -> LayoutError:
    return LayoutError(f"{op}: {msg}")


class MmaUniversalOp(MmaOp):
    """The universal MMA: one thread computes d = a * b + c on scalars (A, B and C share a type)."""

    __slots__ = ("abacc_dtype",)

    def __init__(self, abacc_dtype: Any):
        if abacc_dtype not in (Float16, Float32, Float64):
            raise _op_error(
                f"MmaUniversalOp({dtype_name(abacc_dtype)})",
                "expects the 'abacc_dtype' Op parameter to be one of Float16, Float32, or Float64",
            )
        object.__setattr__(self, "abacc_dtype", abacc_dtype)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and other.abacc_dtype is self.abacc_dtype

    def __hash__(self) -> int:
        return hash((type(self).__name__, str(self.abacc_dtype)))

    def __repr__(self) -> str:
        return f"MmaUniversalOp(abacc_dtype={dtype_name(self.abacc_dtype)})"

    def __str__(self) -> str:
        return f"universal MMA Operation using FMA\n  A/B/Accumulator data type = {dtype_name(self.abacc_dtype)}"

    def _atom_layouts(self) -> tuple:
        one = Layout._raw((1, 1), (0, 0))
        return (1, 1, 1), Layout._raw(1, 0), one, one, one

    def _fragment_dtypes(self) -> tuple:
        return self.abacc_dtype, self.abacc_dtype, self.abacc_dtype
