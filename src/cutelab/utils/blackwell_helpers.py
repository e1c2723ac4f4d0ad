"""SM100 (Blackwell) GEMM helpers, named as ``cutlass.utils.blackwell_helpers``: the shared-memory
layouts of UMMA operands and epilogues, the trivial tiled UMMA, the epilogue tile and the TMEM
load op an epilogue uses. Layout algebra only; the choices (atom kinds, tile sizes, ops) follow
CuTe DSL 4.8.1's heuristics.

>>> import cutelab as cute
>>> from cutelab.nvgpu import OperandMajorMode, tcgen05
>>> mma = make_trivial_tiled_mma(cute.Float16, cute.Float16, OperandMajorMode.K, OperandMajorMode.K, cute.Float32,
...                              tcgen05.CtaGroup.ONE, (128, 256))
>>> print(make_smem_layout_a(mma, (128, 256, 64), cute.Float16, 3))
S<3,4,3> o 0 o ((128,16),1,4,3):((64,1),0,16,8192)
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

from .. import int_tuple as it
from ..algebra import coalesce, right_inverse, tile_to_shape
from ..layout import Layout, make_layout, size
from ..numeric import (
    BFloat16, Boolean, Float4E2M1FN, Float6E2M3FN, Float6E3M2FN, Float8E4M3FN, Float8E5M2, Float16, Float32, Int8,
    Numeric, TFloat32, Uint8, is_numeric_type,
)
from ..nvgpu.tcgen05 import (
    CtaGroup, Ld16x32bx2Op, Ld16x64bOp, Ld16x128bOp, Ld16x256bOp, Ld32x32bOp, MmaF8F6F4Op, MmaF16BF16Op, MmaI8Op,
    MmaMXF4NVF4Op, MmaMXF4Op, MmaMXF8F6F4Op, MmaTF32Op, OperandSource, Pack, Repetition, SmemLayoutAtomKind,
    make_smem_layout_atom,
)
# names CuTe DSL's blackwell_helpers imports from cute.nvgpu.tcgen05, which programs reach through it
# (flash_attn.cute's copy_utils: sm100_utils.get_tmem_copy_properties)
from ..nvgpu.tcgen05 import get_tmem_copy_properties, is_tmem_load, tile_to_mma_shape  # noqa: F401
from ..nvgpu.tcgen05.helpers import (  # noqa: F401 - the operands' smem layouts are cutlass.utils.blackwell_helpers' names too
    get_smem_layout_atom_ab, make_smem_layout, make_smem_layout_a, make_smem_layout_b, make_smem_layout_c,
)
from ..nvgpu.universal_mma import OperandMajorMode
from .hopper_helpers import LayoutEnum

__all__ = [
    "LayoutEnum", "get_smem_layout_atom_ab", "make_smem_layout", "make_smem_layout_a", "make_smem_layout_b",
    "make_smem_layout_c", "get_smem_layout_atom_epi", "make_smem_layout_epi", "make_trivial_tiled_mma",
    "make_blockscaled_trivial_tiled_mma",
    "compute_epilogue_tile_size", "compute_epilogue_tile_shape", "get_tmem_load_op", "get_num_tmem_alloc_cols",
    "compute_acc_tmem_cols_per_stage", "get_smem_store_op",
]

_F8F6F4 = (Float8E4M3FN, Float8E5M2, Float6E3M2FN, Float6E2M3FN, Float4E2M1FN)


def get_smem_layout_atom_epi(layout: LayoutEnum, element_type: Numeric, epi_tile: Any) -> SmemLayoutAtomKind:
    """The SMEM atom kind of an epilogue tile: by its contiguous TMA extent and the output's major mode."""
    tma_shape = tuple(coalesce(right_inverse(x)).shape if isinstance(x, Layout) else x for x in epi_tile)
    mode = OperandMajorMode.MN if layout.is_m_major_c() else OperandMajorMode.K
    return get_smem_layout_atom_ab(mode, element_type, tma_shape)


def make_smem_layout_epi(epi_dtype: Numeric, epi_layout: LayoutEnum, epi_tile: Any, epi_stage: int) -> Any:
    """The staged SMEM layout of an epilogue subtile (EPI_M, EPI_N, STAGES)."""
    if epi_dtype is Boolean:
        epi_dtype = Int8
    shape = tuple(size(x) for x in epi_tile)
    atom = make_smem_layout_atom(get_smem_layout_atom_epi(epi_layout, epi_dtype, epi_tile), epi_dtype)
    order = (0, 1, 2) if epi_layout.is_n_major_c() else (1, 0, 2)
    return tile_to_shape(atom, shape + (epi_stage,), order)


def make_trivial_tiled_mma(a_dtype: Numeric, b_dtype: Any, a_leading_mode: Any, b_leading_mode: Any = None,
                           acc_dtype: Any = None, cta_group: Any = None, mma_tiler_mn: Any = None,
                           a_source: Any = OperandSource.SMEM) -> Any:
    """A tiled UMMA of one atom for the operand types (f16/bf16, tf32/f32, i8/u8, f8f6f4) and an MN tile.

    CuTe DSL's deprecated form (ab_dtype, a_leading_mode, b_leading_mode, acc_dtype, cta_group,
    mma_tiler_mn[, a_source]), one type for A and B, is accepted with its warning."""
    from ..nvgpu.mma_atom import make_tiled_mma

    if isinstance(b_dtype, OperandMajorMode):  # the deprecated overload: shift the arguments
        import warnings

        warnings.warn("use make_trivial_tiled_mma with separate a_dtype and b_dtype instead", DeprecationWarning,
                      stacklevel=2)
        src = mma_tiler_mn if mma_tiler_mn is not None else a_source  # a_source given by position or by name
        a_dtype, b_dtype, a_leading_mode, b_leading_mode, acc_dtype, cta_group, mma_tiler_mn, a_source = (
            a_dtype, a_dtype, b_dtype, a_leading_mode, b_leading_mode, acc_dtype, cta_group, src)
    if mma_tiler_mn is None:
        raise TypeError("make_trivial_tiled_mma() missing 1 required positional argument: 'mma_tiler_mn'")

    mn = tuple(mma_tiler_mn)
    if a_dtype in (Float16, BFloat16) and b_dtype is a_dtype:
        op = MmaF16BF16Op(a_dtype, acc_dtype, (*mn, 16), cta_group, a_source, a_leading_mode, b_leading_mode)
    elif a_dtype in (TFloat32, Float32) and b_dtype is a_dtype:
        op = MmaTF32Op((*mn, 8), cta_group, a_source, a_leading_mode, b_leading_mode)
    elif a_dtype in (Uint8, Int8) and b_dtype is a_dtype:
        op = MmaI8Op(a_dtype, (*mn, 32), cta_group, a_source, a_leading_mode, b_leading_mode)
    elif a_dtype in _F8F6F4 and b_dtype in _F8F6F4:
        op = MmaF8F6F4Op(a_dtype, b_dtype, acc_dtype, (*mn, 32), cta_group, a_source, a_leading_mode, b_leading_mode)
    else:
        raise TypeError(f"make_trivial_tiled_mma: unsupported a_dtype/b_dtype, got a_dtype: {a_dtype}, b_dtype: {b_dtype}")
    return make_tiled_mma(op)


def make_blockscaled_trivial_tiled_mma(a_dtype: Numeric, b_dtype: Any, a_leading_mode: Any, b_leading_mode: Any,
                                       sf_dtype: Any, sf_vec_size: Any, cta_group: Any = None,
                                       mma_tiler_mn: Any = None, a_source: Any = OperandSource.SMEM) -> Any:
    """A tiled block-scaled UMMA of one atom: MXF4 (sf_vec_size 32) or MXF4NVF4 (16) for e2m1 x e2m1,
    MXF8F6F4 for the other f8/f6/f4 pairs.

    CuTe DSL's deprecated form (ab_dtype, a_leading_mode, b_leading_mode, sf_dtype, sf_vec_size, cta_group,
    mma_tiler_mn[, a_source]), one type for A and B, is accepted with its warning."""
    from ..nvgpu.mma_atom import make_tiled_mma

    if isinstance(b_dtype, OperandMajorMode):  # the deprecated overload: shift the arguments
        import warnings

        warnings.warn("use make_blockscaled_trivial_tiled_mma with separate a_dtype and b_dtype instead",
                      DeprecationWarning, stacklevel=2)
        src = mma_tiler_mn if mma_tiler_mn is not None else a_source  # a_source given by position or by name
        a_dtype, b_dtype, a_leading_mode, b_leading_mode, sf_dtype, sf_vec_size, cta_group, mma_tiler_mn, a_source = (
            a_dtype, a_dtype, b_dtype, a_leading_mode, b_leading_mode, sf_dtype, sf_vec_size, cta_group, src)
    if cta_group is None or mma_tiler_mn is None:
        raise TypeError("make_blockscaled_trivial_tiled_mma() missing a required positional argument: 'cta_group' "
                        "or 'mma_tiler_mn'")

    mn = tuple(mma_tiler_mn)
    if a_dtype is Float4E2M1FN and b_dtype is Float4E2M1FN:
        if sf_vec_size == 32:
            op = MmaMXF4Op((*mn, 64), cta_group, a_source)
        elif sf_vec_size == 16:
            op = MmaMXF4NVF4Op(sf_dtype, (*mn, 64), cta_group, a_source)
        else:
            raise ValueError(f"make_blockscaled_trivial_tiled_mma: unsupported sf_vec_size, got {sf_vec_size}")
    elif a_dtype in _F8F6F4 and b_dtype in _F8F6F4:
        op = MmaMXF8F6F4Op(a_dtype, b_dtype, (*mn, 32), cta_group, a_source, a_leading_mode, b_leading_mode)
    else:
        raise TypeError(f"make_blockscaled_trivial_tiled_mma: unsupported a_dtype/b_dtype, got a_dtype: {a_dtype}, "
                        f"b_dtype: {b_dtype}")
    return make_tiled_mma(op)


def compute_epilogue_tile_size(cta_tile_m: int, cta_tile_n: int, use_2cta: bool, elem_width_d: int,
                               elem_width_c: Optional[int] = None, d_is_m_major: bool = True,
                               c_is_m_major: bool = True, tmem_warp_shape_mn: Optional[Tuple[int, int]] = None) -> tuple:
    """(tile_m, tile_n) of an epilogue subtile: at most 32 lanes per warp; N aimed at a fixed amount of
    work (4096 elements, 8192 for 4-bit; smaller with a source C), at least what a TMA store needs.

    >>> compute_epilogue_tile_size(128, 256, False, 16)
    (128, 32)
    """
    warp_m, warp_n = tmem_warp_shape_mn or ((2, 2) if (cta_tile_m == 64 and use_2cta) else (4, 1))
    no_c = elem_width_c is None
    max_bits = elem_width_d if no_c else max(elem_width_c, elem_width_d)
    tile_m = min(cta_tile_m, 32 * warp_m)
    if no_c:
        n_perf = (8192 if max_bits == 4 else 4096) // tile_m
    elif max_bits == 32:
        n_perf = 16 if (cta_tile_m > 64 and cta_tile_n <= 128) else 32
    elif max_bits == 16:
        n_perf = 32 if cta_tile_n <= 128 else 64
    else:
        n_perf = 64
    while n_perf and cta_tile_n % n_perf:
        n_perf //= 2

    def n_min(width: int, m_major: bool) -> int:
        if m_major:
            return 8 * warp_n
        return 128 * warp_n if width == 6 else 128 // width * warp_n

    n_min_d = n_min(elem_width_d, d_is_m_major)
    n_min_c = 8 * warp_n if (c_is_m_major or no_c) else n_min(elem_width_c, False)
    tile_n = min(cta_tile_n, max(n_perf, n_min_c, n_min_d))
    if cta_tile_n % tile_n:
        tile_n = cta_tile_n
    return tile_m, tile_n


def _warps(cta_m: int, use_2cta: bool, tmem_warp_shape_mn: Any) -> tuple:
    if tmem_warp_shape_mn is not None:
        return tuple(tmem_warp_shape_mn)
    return (2, 2) if (cta_m == 64 and use_2cta) else (4, 1)


def compute_epilogue_tile_shape(cta_tile_shape: Any, use_2cta_instrs: bool, layout_d: LayoutEnum, elem_ty_d: Numeric,
                                *, layout_c: Optional[LayoutEnum] = None, elem_ty_c: Optional[Numeric] = None,
                                tmem_warp_shape_mn: Optional[Tuple[int, int]] = None) -> tuple:
    """The epilogue tile as a by-mode tiler (M layout, N layout strided over the warps along N).

    >>> print(compute_epilogue_tile_shape((128, 256), False, LayoutEnum.ROW_MAJOR, Float16))
    (128:1, 32:1)
    """
    for ty, name in ((elem_ty_d, "elem_ty_d"), (elem_ty_c, "elem_ty_c")):
        if ty is not None and not is_numeric_type(ty):
            raise TypeError(f"{name} must be Numeric, but got {ty}")
    cta_m, cta_n = cta_tile_shape[:2]
    d_m = layout_d.is_m_major_c()
    c_m = True if layout_c is None else layout_c.is_m_major_c()
    tile_m, tile_n = compute_epilogue_tile_size(cta_m, cta_n, use_2cta_instrs, elem_ty_d.width,
                                                None if elem_ty_c is None else elem_ty_c.width, d_m, c_m,
                                                tmem_warp_shape_mn)
    warp_m, warp_n = _warps(cta_m, use_2cta_instrs, tmem_warp_shape_mn)
    n_min_d = 8 * warp_n if d_m else (128 * warp_n if elem_ty_d.width == 6 else 128 // elem_ty_d.width * warp_n)
    if c_m or elem_ty_c is None:
        n_min_c = 8 * warp_n
    else:
        n_min_c = 128 * warp_n if elem_ty_c.width == 6 else 128 // elem_ty_c.width * warp_n
    if cta_n < n_min_c or cta_n < n_min_d:
        raise ValueError(f"CTA tile too small: cta_tile_shape={it.tuple_str(tuple(cta_tile_shape))}")
    return (make_layout(tile_m), coalesce(make_layout((tile_n // warp_n, warp_n), stride=(1, cta_n // warp_n))))


# (acc bits, d bits) -> {(num_dp, m_major): (dp, bits)}; pack16 for 16-bit accumulators
_TMEM_LOAD = {
    (32, 32): {(16, True): (16, 256), (16, False): (16, 128), (32, True): (32, 32), (32, False): (32, 32)},
    (32, 16): {(16, True): (16, 256), (16, False): (16, 256), (32, True): (16, 256), (32, False): (32, 32)},
    (32, 8): {(16, True): (16, 256), (16, False): (16, 32), (32, True): (16, 256), (32, False): (32, 32)},
    (16, 16): {(16, True): (16, 128), (16, False): (16, 128), (32, True): (16, 128), (32, False): (32, 32)},
}
_LD_OPS = {(16, 64): Ld16x64bOp, (16, 128): Ld16x128bOp, (16, 256): Ld16x256bOp, (16, 32): Ld16x32bx2Op,
           (32, 32): Ld32x32bOp}


def get_tmem_load_op(cta_tile_shape: Any, layout_d: LayoutEnum, elem_ty_d: Numeric, elem_ty_acc: Numeric,
                     epi_tile: Any, use_2cta_instrs: bool, *, tmem_warp_shape_mn: Optional[Tuple[int, int]] = None) -> Any:
    """The TMEM load copy atom an epilogue uses for its subtile: lanes per warp from the tile, the
    widest repetition whose columns divide the warp's share.

    >>> import cutelab as cute
    >>> print(get_tmem_load_op((128, 256), LayoutEnum.ROW_MAJOR, cute.Float16, cute.Float32,
    ...                        (cute.make_layout(128), cute.make_layout(32)), False).op)
    tcgen05 Ld32x32b Copy Operation
      number of repetitions = 32
    """
    from ..nvgpu.copy_atom import make_copy_atom

    m_major = layout_d.is_m_major_c()
    acc_bits, d_bits = elem_ty_acc.width, elem_ty_d.width
    wm, wn = _warps(cta_tile_shape[0], use_2cta_instrs, tmem_warp_shape_mn)
    em, en = (size(x) for x in epi_tile)
    if em % wm or en % wn:
        raise ValueError(f"get_tmem_load_op: the epilogue tile ({em}, {en}) does not divide among the ({wm}, {wn}) warps")
    num_dp = em // wm
    if num_dp not in (16, 32):
        raise ValueError("Cta tile and 2sm config does not generate correct num dp.")
    col_bits = (en // wn) * acc_bits
    pack = False
    if acc_bits == 32 and d_bits in (6, 4):
        if num_dp != 32:
            raise ValueError("Num dp must be 32.")
        dp, bits = 32, 32
    elif (acc_bits, d_bits) in _TMEM_LOAD:
        dp, bits = _TMEM_LOAD[(acc_bits, d_bits)][(num_dp, m_major)]
        pack = acc_bits == 16
    else:
        raise ValueError(f"Can not handle acc/d type combination: elem_ty_acc={elem_ty_acc}, elem_ty_d={elem_ty_d}")
    div = 64 if (dp, bits) == (16, 32) else bits
    rep = None
    for r, ok in ((128, (dp, bits) in ((16, 64), (16, 32), (32, 32))),
                  (64, (dp, bits) in ((16, 128), (16, 64), (16, 32), (32, 32))),
                  (32, True), (16, True), (8, True), (4, True), (2, True), (1, True)):
        if ok and col_bits % (div * r) == 0:
            rep = r
            break
    if rep is None:
        raise ValueError("Can not pick tmem_rep based on cta tile shape and tmem atom.")
    op = _LD_OPS[(dp, bits)](Repetition(rep), Pack.PACK_16b_IN_32b if pack else Pack.NONE)
    return make_copy_atom(op, elem_ty_acc)


#: an SM100 CTA's tensor memory: at most 512 columns, allocated 32 at least, in powers of two
TMEM_MAX_ALLOC_COLS, TMEM_MIN_ALLOC_COLS = 512, 32


def get_num_tmem_alloc_cols(tmem_tensors: Any, rounding: bool = True) -> int:
    """The TMEM columns to allocate for tensors laid out one after another: the sum of their column
    spans, rounded up to a power of two of at least 32 (``rounding``), at most 512.

    >>> import cutelab as cute
    >>> from cutelab.nvgpu import OperandMajorMode, tcgen05
    >>> mma = make_trivial_tiled_mma(cute.Float16, cute.Float16, OperandMajorMode.K, OperandMajorMode.K,
    ...                              cute.Float32, tcgen05.CtaGroup.ONE, (128, 96))
    >>> get_num_tmem_alloc_cols(mma.make_fragment_C(mma.partition_shape_C((128, 96))))
    128
    """
    from ..nvgpu.tcgen05 import find_tmem_tensor_col_offset

    tensors = list(tmem_tensors) if isinstance(tmem_tensors, (list, tuple)) else [tmem_tensors]
    n = sum(find_tmem_tensor_col_offset(t) for t in tensors)
    if rounding:
        p = 1
        while p < n:
            p *= 2
        n = max(p, TMEM_MIN_ALLOC_COLS)
    if n > TMEM_MAX_ALLOC_COLS or n < TMEM_MIN_ALLOC_COLS:
        raise ValueError(f"TMEM allocation columns {n} exceeds the maximum capacity of {TMEM_MAX_ALLOC_COLS} or less "
                         f"than {TMEM_MIN_ALLOC_COLS}")
    return n


def compute_acc_tmem_cols_per_stage(cta_tile_m: int, cta_tile_n: int, use_2cta: bool, mma_n: int,
                                    transform_a_source_is_tmem: bool) -> int:
    """The TMEM columns one accumulator stage takes before the allocation rules (as CuTe DSL counts):
    2-CTA tiles of 32 or 64 rows share columns 4 or 2 ways; a 1-CTA 64-row tile with A from SMEM
    interleaves pairs of N tiles in a column.

    >>> compute_acc_tmem_cols_per_stage(64, 256, False, 64, False)
    128
    """
    if use_2cta:
        return cta_tile_n // 4 if cta_tile_m <= 32 else cta_tile_n // 2 if cta_tile_m <= 64 else cta_tile_n
    if not transform_a_source_is_tmem and cta_tile_m == 64:
        return (cta_tile_n // mma_n + 1) // 2 * mma_n
    return cta_tile_n


def get_smem_store_op(layout_d: LayoutEnum, elem_ty_d: Numeric, elem_ty_acc: Numeric, tiled_tmem_load: Any) -> Any:
    """The register -> SMEM copy atom of an epilogue: the widest ``stmatrix`` that the TMEM load's
    thread-value ownership allows (by CuTe DSL's table), else the universal copy.

    >>> import cutelab as cute
    >>> from cutelab.nvgpu import tcgen05
    >>> ld = cute.make_copy_atom(tcgen05.Ld16x256bOp(tcgen05.Repetition.x4), cute.Float32)
    >>> print(get_smem_store_op(LayoutEnum.ROW_MAJOR, cute.Float16, cute.Float32, ld).op)
    StMatrix8x8x16b Copy Operation
      number of matrices = 4
    """
    from ..nvgpu.copy_atom import make_copy_atom
    from ..nvgpu.tcgen05 import get_tmem_copy_properties, is_tmem_load
    from ..nvgpu.universal_copy import CopyUniversalOp
    from ..nvgpu.warp import StMatrix8x8x16bOp, StMatrix16x8x8bOp

    for ty, name in ((elem_ty_d, "elem_ty_d"), (elem_ty_acc, "elem_ty_acc")):
        if not is_numeric_type(ty):
            raise TypeError(f"{name} must be a Numeric, but got {ty}")
    m_major, n_major = layout_d.is_m_major_c(), layout_d.is_n_major_c()
    if not is_tmem_load(tiled_tmem_load):
        return make_copy_atom(CopyUniversalOp(), elem_ty_d)
    dp, bits, rep, pack = get_tmem_copy_properties(tiled_tmem_load)
    acc, d = elem_ty_acc.width, elem_ty_d.width
    packed = pack is Pack.PACK_16b_IN_32b
    # (acc bits, d bits, major required, lanes, bits, packed) -> the repetitions of 4x and of 2x stmatrix 8x8
    m8n8 = ((32, 32, n_major, 16, 128, False), (32, 16, True, 16, 256, False), (16, 16, True, 16, 128, True))
    for a_, d_, ok, dp_, b_, pk in m8n8:
        if (acc, d, dp, bits, packed) == (a_, d_, dp_, b_, pk) and ok:
            if rep in ((2, 4, 8, 16, 32) if b_ == 256 else (2, 4, 8, 16, 32, 64)):
                return make_copy_atom(StMatrix8x8x16bOp(m_major, 4), elem_ty_d)
            if rep == 1:
                return make_copy_atom(StMatrix8x8x16bOp(m_major, 2), elem_ty_d)
    if (acc, d, m_major, dp, bits, packed) == (32, 8, True, 16, 256, False):
        n = 4 if rep in (4, 8, 16, 32) else 2 if rep == 2 else 1 if rep == 1 else 0
        if n:
            return make_copy_atom(StMatrix16x8x8bOp(transpose=True, num_matrices=n), elem_ty_d)
    return make_copy_atom(CopyUniversalOp(), elem_ty_d)


def _tma_op_for(cluster_shape_mnk: Any, atom_thr_id: Any, mcast_mode: int, which: str) -> Any:
    """The TMA load op of an operand for the cluster and the MMA's CTA count (CuTe DSL's choice)."""
    from .. import int_tuple as it
    from ..nvgpu.cpasync.tma import CopyBulkTensorTileG2SMulticastOp, CopyBulkTensorTileG2SOp

    shape = tuple(getattr(cluster_shape_mnk, "shape", cluster_shape_mnk))
    n_sm = it.product(getattr(atom_thr_id, "shape", atom_thr_id))
    if not all(type(x) is int for x in it.flatten_to_tuple(shape)) or type(n_sm) is not int:
        raise ValueError(f"Dynamic cluster shape or atom SM count is not supported: {cluster_shape_mnk} and {atom_thr_id}")
    if it.product(shape[0]) % n_sm:
        raise ValueError(f"Cluster shape not divisible by MMA size: {cluster_shape_mnk} and {atom_thr_id}")
    if n_sm not in (1, 2):
        raise ValueError(f"cluster_shape_to_tma_atom_{which}: unsupported atom SM count {n_sm}")
    other = it.product(shape[mcast_mode])
    mcast = other != (n_sm if mcast_mode == 0 else 1)
    group = CtaGroup.TWO if n_sm == 2 else CtaGroup.ONE
    return CopyBulkTensorTileG2SMulticastOp(group) if mcast else CopyBulkTensorTileG2SOp(group)


def cluster_shape_to_tma_atom_A(cluster_shape_mnk: Any, atom_thr_id: Any, *, loc: Any = None, ip: Any = None) -> Any:
    """The TMA op for A: multicast when the cluster has more than one CTA along N (they share A's tile)."""
    return _tma_op_for(cluster_shape_mnk, atom_thr_id, 1, "A")


def cluster_shape_to_tma_atom_B(cluster_shape_mnk: Any, atom_thr_id: Any, *, loc: Any = None, ip: Any = None) -> Any:
    """The TMA op for B: multicast when the cluster has more CTAs along M than the MMA spans."""
    return _tma_op_for(cluster_shape_mnk, atom_thr_id, 0, "B")


def cluster_shape_to_tma_atom_SFB(cluster_shape_mnk: Any, atom_thr_id: Any, *, loc: Any = None,
                                  ip: Any = None) -> Any:
    """The TMA op for the scale factors of B (CuTe DSL's choice): a 2-CTA MMA's SFB always multicasts
    (each CTA of the pair needs the whole N extent's scale factors), a 1-CTA MMA's when the cluster has more
    than one CTA along M.

    >>> from cutelab import make_layout
    >>> [type(cluster_shape_to_tma_atom_SFB(c, make_layout(n))).__name__ for c, n in (((1, 1), 1), ((2, 1), 1),
    ...                                                                            ((2, 1), 2))]
    ['CopyBulkTensorTileG2SOp', 'CopyBulkTensorTileG2SMulticastOp', 'CopyBulkTensorTileG2SMulticastOp']
    """
    from .. import int_tuple as it
    from ..nvgpu.cpasync.tma import CopyBulkTensorTileG2SMulticastOp, CopyBulkTensorTileG2SOp

    shape = tuple(getattr(cluster_shape_mnk, "shape", cluster_shape_mnk))
    n_sm = it.product(getattr(atom_thr_id, "shape", atom_thr_id))
    if not all(type(x) is int for x in it.flatten_to_tuple(shape)) or type(n_sm) is not int:
        raise ValueError(f"Dynamic cluster shape or atom SM count is not supported: {cluster_shape_mnk} and {atom_thr_id}")
    if it.product(shape[0]) % n_sm:
        raise ValueError(f"Cluster shape not divisible by MMA size: {cluster_shape_mnk} and {atom_thr_id}")
    if n_sm == 2:
        return CopyBulkTensorTileG2SMulticastOp(CtaGroup.TWO)
    if n_sm == 1:
        return (CopyBulkTensorTileG2SMulticastOp(CtaGroup.ONE) if it.product(shape[0]) != 1
                else CopyBulkTensorTileG2SOp(CtaGroup.ONE))
    raise ValueError(f"cluster_shape_to_tma_atom_SFB: unsupported atom SM count {n_sm}")
