"""SM90 shared-memory layout atoms, as ``cutlass.cute.nvgpu.warpgroup`` names them.

An atom is the smallest swizzled layout from which ``tile_to_shape`` builds an SMEM layout
for a wgmma operand (legal for both TMA and wgmma): 8 rows of 16, 32, 64 or 128 bytes,
M/N-major or K-major.

>>> from cutelab import Float16, tile_to_shape
>>> atom = make_smem_layout_atom(SmemLayoutAtomKind.K_SW128, Float16)
>>> print(atom)
S<3,4,3> o 0 o (8,64):(64,1)
>>> print(tile_to_shape(atom, (128, 64, 3), (0, 1, 2)))
S<3,4,3> o 0 o ((8,16),(64,1),(1,3)):((64,512),(1,0),(0,8192))
"""

from __future__ import annotations

import enum
from typing import Any

from ...errors import LayoutError
from ...layout import make_layout
from ...numeric import Numeric, is_numeric_type
from ...swizzle import ComposedLayout, make_composed_layout, make_swizzle

__all__ = ["SmemLayoutAtomKind", "make_smem_layout_atom"]


class SmemLayoutAtomKind(enum.Enum):
    """The kinds of SM90 SMEM layout atoms: M/N-major or K-major, interleaved or 32/64/128-byte swizzled."""

    MN_INTER = enum.auto()
    MN_SW32 = enum.auto()
    MN_SW64 = enum.auto()
    MN_SW128 = enum.auto()
    K_INTER = enum.auto()
    K_SW32 = enum.auto()
    K_SW64 = enum.auto()
    K_SW128 = enum.auto()

    @property
    def is_mn_major(self) -> bool:
        return self.name.startswith("MN_")

    @property
    def contiguous_bits(self) -> int:
        """Bits in one row of the atom along its major mode (16, 32, 64 or 128 bytes)."""
        return _BITS[self.name.split("_", 1)[1]]

    @property
    def swizzle_bits(self) -> int:
        """B of the atom's Swizzle<B,4,3>."""
        return _SW_B[self.name.split("_", 1)[1]]


_BITS = {"INTER": 128, "SW32": 256, "SW64": 512, "SW128": 1024}
_SW_B = {"INTER": 0, "SW32": 1, "SW64": 2, "SW128": 3}


def make_smem_layout_atom(kind: SmemLayoutAtomKind, element_type: Any) -> ComposedLayout:
    """The SMEM layout atom of ``kind`` in units of ``element_type`` elements.

    M/N-major atoms are (contiguous elements, 8):(1, contiguous); K-major atoms are
    (8, contiguous):(contiguous, 1); each composed with Swizzle<B,4,3> (B = 0, 1, 2, 3 for
    interleaved, 32B, 64B, 128B), over 16-byte units as in CuTe DSL.

    >>> from cutelab import Float32
    >>> print(make_smem_layout_atom(SmemLayoutAtomKind.MN_SW64, Float32))
    S<2,4,3> o 0 o (16,8):(1,16)
    """
    if not isinstance(kind, SmemLayoutAtomKind):
        raise LayoutError(f"make_smem_layout_atom({kind!r}, {element_type!r}): kind must be a SmemLayoutAtomKind")
    if not is_numeric_type(element_type):
        raise LayoutError(
            f"make_smem_layout_atom({kind.name}, {element_type!r}): element_type must be a cutelab element "
            f"type (Float16, BFloat16, Float32, Int8, ...)"
        )
    width = element_type.width
    if kind.contiguous_bits % width:
        raise LayoutError(
            f"make_smem_layout_atom({kind.name}, {element_type}): a {kind.contiguous_bits}-bit row does not "
            f"hold a whole number of {width}-bit elements"
        )
    n = kind.contiguous_bits // width
    sw = make_swizzle(kind.swizzle_bits, 4, 3)
    if kind.is_mn_major:
        return make_composed_layout(sw, 0, make_layout((n, 8), stride=(1, n)))
    return make_composed_layout(sw, 0, make_layout((8, n), stride=(n, 1)))
