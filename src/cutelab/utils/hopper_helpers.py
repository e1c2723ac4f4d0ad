"""SM90 (Hopper) SMEM layout helpers, as ``cutlass.utils.hopper_helpers`` has them.

Each picks the widest swizzled SMEM atom the operand's major mode allows, tiles it over the
operand's tile and appends a stage mode.

>>> from cutelab import Float16
>>> print(make_smem_layout_a(LayoutEnum.ROW_MAJOR, (128, 128, 64), Float16, 4))
S<3,4,3> o 0 o ((8,16),(64,1),(1,4)):((64,512),(1,0),(0,8192))
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from .. import int_tuple as it
from ..errors import LayoutError
from ..numeric import Numeric, is_numeric_type
from ..algebra import tile_to_shape
from ..nvgpu.warpgroup.helpers import SmemLayoutAtomKind, make_smem_layout_atom

__all__ = ["LayoutEnum", "get_smem_layout_atom", "make_smem_layout_a", "make_smem_layout_b",
           "make_smem_layout_epi"]


class LayoutEnum(Enum):
    """Row- or column-major operand (``cutlass.utils.LayoutEnum``): row-major A and B are K-major."""

    ROW_MAJOR = "row_major"
    COL_MAJOR = "col_major"

    def is_k_major_a(self) -> bool:
        return self is LayoutEnum.ROW_MAJOR

    def is_m_major_a(self) -> bool:
        return self is LayoutEnum.COL_MAJOR

    def is_n_major_b(self) -> bool:
        return self is LayoutEnum.COL_MAJOR

    def is_k_major_b(self) -> bool:
        return self is LayoutEnum.ROW_MAJOR

    def is_n_major_c(self) -> bool:
        return self is LayoutEnum.ROW_MAJOR

    def is_m_major_c(self) -> bool:
        return self is LayoutEnum.COL_MAJOR

    def mma_major_mode(self) -> Any:
        """The MMA operand major mode of an operand of this layout: K for row-major, MN for column-major."""
        from ..nvgpu.universal_mma import OperandMajorMode

        return OperandMajorMode.K if self is LayoutEnum.ROW_MAJOR else OperandMajorMode.MN

    sm90_mma_major_mode = mma_major_mode


def _check(layout: Any, dtype: Any, op: str) -> None:
    if not isinstance(layout, LayoutEnum):
        raise LayoutError(f"{op}: expected a LayoutEnum, got {layout!r}")
    if not is_numeric_type(dtype):
        raise LayoutError(f"{op}: expected a cutelab element type (Float16, ...), got {dtype!r}")


def get_smem_layout_atom(layout: LayoutEnum, element_type: Numeric, major_mode_size: int) -> SmemLayoutAtomKind:
    """The widest SMEM atom kind (128, 64, 32 bytes or interleaved) whose row divides the major mode.

    >>> from cutelab import Float32
    >>> get_smem_layout_atom(LayoutEnum.COL_MAJOR, Float32, 16).name
    'MN_SW64'
    """
    _check(layout, element_type, "get_smem_layout_atom")
    if not isinstance(major_mode_size, int) or major_mode_size < 1 or major_mode_size % 8:
        raise LayoutError(
            f"get_smem_layout_atom: the major mode size must be a positive multiple of 8, got {major_mode_size!r}"
        )
    bits = major_mode_size * element_type.width
    prefix = "MN_" if layout is LayoutEnum.COL_MAJOR else "K_"
    for name, row in (("SW128", 1024), ("SW64", 512), ("SW32", 256)):
        if bits % row == 0:
            return SmemLayoutAtomKind[prefix + name]
    return SmemLayoutAtomKind[prefix + "INTER"]


def _tile3(mma_tiler_mnk: Any, op: str) -> tuple:
    if not (isinstance(mma_tiler_mnk, tuple) and len(mma_tiler_mnk) == 3):
        raise LayoutError(f"{op}: the MMA tiler must be an (M, N, K) tuple, got {mma_tiler_mnk!r}")
    return mma_tiler_mnk


def make_smem_layout_a(a_layout: LayoutEnum, mma_tiler_mnk: tuple, a_dtype: Numeric, num_stages: int) -> Any:
    """The staged SMEM layout of operand A: an atom tiled over (M, K) with num_stages stages."""
    _check(a_layout, a_dtype, "make_smem_layout_a")
    m, _n, k = _tile3(mma_tiler_mnk, "make_smem_layout_a")
    k_major = a_layout.is_k_major_a()
    atom = make_smem_layout_atom(get_smem_layout_atom(a_layout, a_dtype, it.product(k if k_major else m)), a_dtype)
    return tile_to_shape(atom, (m, k, num_stages), (0, 1, 2) if k_major else (1, 0, 2))


def make_smem_layout_b(b_layout: LayoutEnum, mma_tiler_mnk: tuple, b_dtype: Numeric, num_stages: int) -> Any:
    """The staged SMEM layout of operand B: an atom tiled over (N, K) with num_stages stages."""
    _check(b_layout, b_dtype, "make_smem_layout_b")
    _m, n, k = _tile3(mma_tiler_mnk, "make_smem_layout_b")
    k_major = b_layout.is_k_major_b()
    atom = make_smem_layout_atom(get_smem_layout_atom(b_layout, b_dtype, it.product(k if k_major else n)), b_dtype)
    return tile_to_shape(atom, (n, k, num_stages), (0, 1, 2) if k_major else (1, 0, 2))


def make_smem_layout_epi(epi_dtype: Numeric, epi_layout: LayoutEnum, epi_tile: tuple, epi_stage: int,
                         smem_trg_shape: Any = None, smem_order: Any = None) -> Any:
    """The staged SMEM layout of the epilogue tile (C/D)."""
    _check(epi_layout, epi_dtype, "make_smem_layout_epi")
    if not (isinstance(epi_tile, tuple) and len(epi_tile) == 2):
        raise LayoutError(f"make_smem_layout_epi: the epilogue tile must be an (M, N) tuple, got {epi_tile!r}")
    major = epi_tile[1] if epi_layout.is_n_major_c() else epi_tile[0]
    atom = make_smem_layout_atom(get_smem_layout_atom(epi_layout, epi_dtype, it.product(major)), epi_dtype)
    trg = smem_trg_shape if smem_trg_shape is not None else tuple(epi_tile) + (epi_stage,)
    order = smem_order if smem_order is not None else ((1, 0, 2) if epi_layout.is_m_major_c() else (0, 1, 2))
    return tile_to_shape(atom, trg, order)


def _layout_enum_from_tensor(tensor: Any) -> LayoutEnum:
    """LayoutEnum.from_tensor, as CuTe DSL: ROW_MAJOR when the leading (stride-1) mode is mode 1,
    COL_MAJOR when it is mode 0.

    >>> from cutelab import make_layout
    >>> LayoutEnum.from_tensor(make_layout((4, 8), stride=(8, 1))), LayoutEnum.from_tensor(make_layout((4, 8)))
    (<LayoutEnum.ROW_MAJOR: 'row_major'>, <LayoutEnum.COL_MAJOR: 'col_major'>)
    """
    layout = getattr(tensor, "layout", tensor)
    shape = layout.shape if isinstance(layout.shape, tuple) else (layout.shape,)
    stride = layout.stride if isinstance(layout.stride, tuple) else (layout.stride,)
    lead = [i for i, (m, d) in enumerate(zip(shape, stride)) if not isinstance(d, tuple) and d == 1]
    if len(lead) > 1:
        lead = [i for i in lead if shape[i] != 1] or lead[:1]
    if lead and lead[0] in (0, 1) and len(lead) == 1:
        return LayoutEnum.ROW_MAJOR if lead[0] == 1 else LayoutEnum.COL_MAJOR
    raise ValueError(f"LayoutEnum.from_tensor: invalid leading dimension of layout {layout} (neither mode 0 nor "
                     f"mode 1 has stride 1)")


LayoutEnum.from_tensor = staticmethod(_layout_enum_from_tensor)  # type: ignore[attr-defined]
