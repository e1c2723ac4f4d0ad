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
           "make_smem_layout_epi", "make_trivial_tiled_mma", "get_smem_store_op", "sm90_get_smem_store_op",
           "compute_tile_shape_or_override"]


class LayoutEnum(Enum):
    """Row- or column-major operand (``cutlass.utils.LayoutEnum``): row-major A and B are K-major."""

    ROW_MAJOR = "row_major"
    COL_MAJOR = "col_major"

    def mma_major_mode(self) -> Any:
        """The MMA operand major mode: K for row-major, MN for column-major."""
        from ..nvgpu.universal_mma import OperandMajorMode

        return OperandMajorMode.K if self is LayoutEnum.ROW_MAJOR else OperandMajorMode.MN

    sm90_mma_major_mode = mma_major_mode

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


def get_smem_store_op(layout_d: LayoutEnum, elem_ty_d: Numeric, elem_ty_acc: Numeric) -> Any:
    """The register -> shared memory store atom of an SM90 epilogue: ``stmatrix`` (4 matrices,
    transposed for an M-major D) for 16-bit D, else the universal copy."""
    from ..nvgpu.copy_atom import make_copy_atom
    from ..nvgpu.universal_copy import CopyUniversalOp
    from ..nvgpu.warp import StMatrix8x8x16bOp

    for ty, name in ((elem_ty_d, "elem_ty_d"), (elem_ty_acc, "elem_ty_acc")):
        if not is_numeric_type(ty):
            raise TypeError(f"get_smem_store_op: {name} must be a Numeric, but got {ty!r}")
    if elem_ty_d.width == 16:
        return make_copy_atom(StMatrix8x8x16bOp(layout_d.is_m_major_c(), 4), elem_ty_d)
    return make_copy_atom(CopyUniversalOp(), elem_ty_d)


sm90_get_smem_store_op = get_smem_store_op


def make_trivial_tiled_mma(a_dtype: Numeric, b_dtype: Numeric, a_leading_mode: Any, b_leading_mode: Any,
                           acc_dtype: Numeric, atom_layout_mnk: tuple, tiler_mn: tuple, a_source: Any = None) -> Any:
    """A tiled warpgroup MMA (wgmma) of ``atom_layout_mnk`` atoms, each (tiler_mn[0], tiler_mn[1], K)
    with K 16 for f16/bf16 and 32 for f8/i8 operands, A from shared memory unless ``a_source``."""
    from ..numeric import BFloat16, Float16, Float8E4M3FN, Float8E5M2, Int8, Uint8
    from ..nvgpu.mma_atom import make_mma_atom, make_tiled_mma
    from ..nvgpu.warpgroup.mma import MmaF8Op, MmaF16BF16Op, MmaI8Op, OperandSource

    src = OperandSource.SMEM if a_source is None else a_source
    mn = tuple(tiler_mn)
    if a_dtype in (Float16, BFloat16):
        if a_dtype is not b_dtype:
            raise TypeError(f"make_trivial_tiled_mma: Type mismatch: {a_dtype} != {b_dtype}")
        op = MmaF16BF16Op(a_dtype, acc_dtype, (*mn, 16), src, a_leading_mode, b_leading_mode)
    elif a_dtype in (Float8E4M3FN, Float8E5M2) and b_dtype in (Float8E4M3FN, Float8E5M2):
        op = MmaF8Op(a_dtype, b_dtype, acc_dtype, (*mn, 32), src, a_leading_mode, b_leading_mode)
    elif a_dtype in (Int8, Uint8) and b_dtype in (Int8, Uint8):
        op = MmaI8Op(a_dtype, b_dtype, acc_dtype, (*mn, 32), src, a_leading_mode, b_leading_mode)
    else:
        raise TypeError(f"make_trivial_tiled_mma: unsupported a_dtype and b_dtype, got {a_dtype} and {b_dtype}")
    return make_tiled_mma(make_mma_atom(op), atom_layout_mnk)


def compute_tile_shape_or_override(tile_shape_mnk: tuple, element_type: Numeric, is_cooperative: bool = False,
                                   epi_tile_override: Any = None) -> tuple:
    """The epilogue tile (M, N) of an SM90 GEMM: the override if given; else (min(128, M), min(32, N))
    for cooperative kernels (two consumer warpgroups over M), (min(64, M), min(32 or 64 for 8-bit, N)).

    >>> from cutelab import Float16
    >>> compute_tile_shape_or_override((128, 256, 64), Float16, is_cooperative=True)
    (128, 32)
    """
    if epi_tile_override is not None:
        return epi_tile_override
    m, n = it.product(tile_shape_mnk[0]), it.product(tile_shape_mnk[1])
    if is_cooperative:
        return (min(128, m), min(32, n))
    return (min(64, m), min(64 if element_type.width == 8 else 32, n))
