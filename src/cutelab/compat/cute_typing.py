"""``cutlass.cute.typing``: the types annotations use (Tensor, Layout, Shape, Pointer, Numeric, ...).

>>> Tensor.__name__, Layout.__name__, Int32.width
('Tensor', 'Layout', 32)
"""

from __future__ import annotations

from typing import Union

from ..kernel.launch.args import Constexpr  # noqa: F401
from ..layout import Layout  # noqa: F401
from ..numeric import (  # noqa: F401
    BFloat16, Boolean, Float8E4M3FN, Float8E5M2, Float16, Float32, Float64, Int8, Int16, Int32, Int64, Numeric,
    TFloat32, Uint8, Uint16, Uint32, Uint64, Float4E2M1FN, Float6E2M3FN, Float6E3M2FN, Float8E8M0FNU, Float8E4M3, Float,
    FloatMeta, Int4, Int128, Integer, IntegerMeta, NumericMeta, Uint128,
)
from ..runtime import AddressSpace  # noqa: F401
from ..swizzle import ComposedLayout  # noqa: F401
from ..tensor import Pointer, Tensor, TensorSSA  # noqa: F401

Shape = Coord = IntTuple = Tile = Stride = tuple
Int = Union[int, "Int32"]
Tiler = Union[Layout, tuple]
