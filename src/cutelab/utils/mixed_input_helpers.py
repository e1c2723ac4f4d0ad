"""``cutlass.utils.mixed_input_helpers``: what CUTLASS's Blackwell mixed-input GEMMs (``mixed_input_gemm.py``,
``grouped_mixed_input_gemm*.py``: A of Int4/Int8 converted, optionally scaled, to the MMA's 16-bit type in the
kernel) share, with CuTe DSL 4.8.1's names and arguments:

- the scale tensor's layouts in global and shared memory (``get_gmem_layout_scale``, ``get_smem_layout_scale``)
  and its TMA partition (``scale_tma_partition``: a rest-V mode of 1 added, as the loads expect);
- where the converted A lives (``get_transform_a_source``: tensor memory for a K-major A, else shared memory),
  the copies that move it there (``get_copy_atom_a_transform``, ``transform_partition``, ``scale_partition``,
  ``store_transformed_a``) and the conversion itself (``cvt_tensor_a``);
- the shared-memory layouts of A, converted A and B (``compute_smem_layout``), the TMA op of each operand
  (``get_tma_atom_kind``), the epilogue's partitions (``epilog_tmem_copy_and_partition``,
  ``epilog_smem_copy_and_partition``, ``epilog_gmem_copy_and_partition``);
- the host's checks (``is_valid_scale_granularity``, ``is_valid_tensor_alignment``,
  ``is_valid_mma_tiler_and_cluster_shape``, ``is_shuffle_a``, ``get_divisibility``);
- the contiguous grouped GEMM's group search (``ContiguousGGSearchState``, ``contiguous_group_search``,
  ``ContiguousGroupWorkTileInfo``, ``make_contiguous_group_work_tile_info``).

Not here: the shuffled Int4 -> BFloat16 conversion (CuTe DSL uses it from CUDA 13.1 on; cutelab converts
element by element, so ``is_shuffle_a`` is False, as the DSL answers for an older toolkit, and the host and
the kernel agree on an unshuffled A), and the Int4 -> FP8 conversions of the DSL's inline PTX.
"""

from __future__ import annotations

from enum import Enum, auto
from math import log2
from typing import Any, Optional, Tuple

from ..errors import LayoutError

__all__ = ["TransformMode", "scale_tma_partition", "transform_partition", "scale_partition",
           "epilog_gmem_copy_and_partition", "epilog_smem_copy_and_partition", "epilog_tmem_copy_and_partition",
           "get_gmem_layout_scale", "get_smem_layout_scale", "compute_smem_layout", "get_transform_a_source",
           "get_tma_atom_kind", "get_copy_atom_a_transform", "is_valid_scale_granularity", "is_shuffle_a",
           "is_valid_tensor_alignment", "is_valid_mma_tiler_and_cluster_shape", "get_divisibility",
           "ContiguousGGSearchState", "create_initial_contiguous_group_search_state", "ContiguousGroupWorkTileInfo",
           "contiguous_group_search", "make_contiguous_group_work_tile_info", "cvt_tensor_a", "store_transformed_a"]


def _cute() -> Any:
    import cutelab

    return cutelab


class TransformMode(Enum):
    """How A becomes the MMA's type: converted only, or converted and multiplied by its scale."""

    ConvertOnly = auto()
    ConvertScale = auto()


def _with_rest_v(t: Any) -> Any:
    """t with its mode 0 made (mode 0, 1) (stride 0 for the new 1)."""
    cute = _cute()
    lay = t.layout
    shp, std = lay.shape, lay.stride
    return cute.make_tensor(t.iterator, cute.make_layout(((shp[0], 1), *shp[1:]), stride=((std[0], 0), *std[1:])))


def scale_tma_partition(tCsS: Any, tCgS: Any, tma_atom_s: Any, block_in_cluster_coord_vmnk: Any,
                        scale_cta_layout: Any) -> Tuple[Any, Any]:
    """The scale tensor's TMA partition (tSsS, tSgS), modes 0..2 of each grouped into the atom's mode, which
    then gets a rest-V mode of 1: ((atom_v, 1), STAGE) and ((atom_v, 1), loopM, loopK, loopL)."""
    cute = _cute()
    from ..nvgpu import cpasync

    if not isinstance(block_in_cluster_coord_vmnk, tuple):
        raise LayoutError(f"scale_tma_partition: block_in_cluster_coord_vmnk must be a (v, m, n, l) tuple, got "
                          f"{block_in_cluster_coord_vmnk!r}")
    s, g = cpasync.tma_partition(tma_atom_s, block_in_cluster_coord_vmnk[2], scale_cta_layout,
                                 cute.group_modes(tCsS, 0, 3), cute.group_modes(tCgS, 0, 3))
    return _with_rest_v(s), _with_rest_v(g)


def transform_partition(transform_a_source: Any, scale_mode: TransformMode, copy_atom_a_input: Any,
                        copy_atom_a_transform: Any, sA_input: Any, A_transform: Any,
                        transform_local_tidx: Any) -> Tuple[Any, Any, Any, Any]:
    """(src_copy_a, dst_copy_a, tAsA_input, tA_transform): the transform warps' copies of A from shared memory
    and of the converted A to tensor memory (a register -> TMEM tiled copy over one stage) or to shared memory
    (a cotiled copy of 128 threads x 8 contiguous elements; then dst_copy_a is None: an automatic copy), and the
    two tensors partitioned for this thread. src_copy_a (a copy of A's input with the destination's thread
    layout) is made for ConvertScale only. A 128-row converted tile fed from a 64-row input repeats the input
    (a stride-0 mode of 2) so that both halves of the destination read it."""
    cute = _cute()
    from ..nvgpu import tcgen05

    if transform_a_source == tcgen05.OperandSource.TMEM:
        src = sA_input
        if cute.size(A_transform, mode=[0, 0]) == 128 and cute.size(sA_input, mode=[0, 0]) == 64:
            src = cute.make_tensor(sA_input.iterator, cute.logical_product(
                sA_input.layout, ((cute.make_layout(2, stride=0), None), None, None, None)))
        dst_copy = tcgen05.make_tmem_copy(copy_atom_a_transform, A_transform[(None, None, None, 0)])
    elif transform_a_source == tcgen05.OperandSource.SMEM:
        src = sA_input
        dst_copy = cute.make_cotiled_copy(copy_atom_a_transform, cute.make_layout((128, 8), stride=(8, 1)),
                                          A_transform[(None, None, None, 0)].layout)
    else:
        raise LayoutError(f"transform_partition: transform_a_source must be OperandSource.TMEM or SMEM, got "
                          f"{transform_a_source!r}")
    thr = dst_copy.get_slice(transform_local_tidx)
    src_copy = cute.make_tiled_copy_S(copy_atom_a_input, dst_copy) if scale_mode is TransformMode.ConvertScale \
        else None
    keep = dst_copy if transform_a_source == tcgen05.OperandSource.TMEM else None
    return src_copy, keep, thr.partition_S(src), thr.partition_D(A_transform)


def scale_partition(src_copy_a: Any, tCsS: Any, transform_local_tidx: Any,
                    mma_dtype: Any) -> Tuple[Any, Any, Any, Any]:
    """(smem_thr_copy_S, tSsS_trans, tSrS_copy, tSrS): the scale tensor in shared memory partitioned as A's input
    is, a register fragment of mma_dtype for one stage with its broadcast (stride-0) modes dropped (what a copy
    fills), and a view of that fragment in the stage's full shape (the broadcast modes back, for the arithmetic)."""
    cute = _cute()
    thr = src_copy_a.get_slice(transform_local_tidx)
    tSsS = thr.partition_S(tCsS)
    stage = tSsS[(None, None, None, None, 0)].layout
    frag = cute.make_rmem_tensor(cute.filter_zeros(stage).shape, mma_dtype)
    view = cute.make_tensor(frag.iterator, cute.make_layout(stage.shape, stride=frag.layout.stride))
    return thr, tSsS, frag, view


def epilog_gmem_copy_and_partition(c_dtype: Any, tidx: Any, tma_atom_c: Optional[Any], tiled_copy_t2r: Optional[Any],
                                   gC_mnl_tma: Optional[Any], gC_mnl_simt: Optional[Any], epi_tile: Any,
                                   sC: Any) -> Tuple[Any, Any, Any, Any, Any]:
    """(tma_atom_c, bSG_sC, bSG_gC, simt_atom, tTR_gC): the TMA store's partition of sC and of C's epilogue
    tiles (when tma_atom_c is given) and the per-thread store's (when tiled_copy_t2r is: C's epilogue tiles
    partitioned as the TMEM load's destination, and a universal copy atom of c_dtype)."""
    cute = _cute()
    from ..nvgpu import CopyUniversalOp, cpasync

    bSG_sC = bSG_gC = simt_atom = tTR_gC = None
    if tma_atom_c is not None:
        g = cute.flat_divide(gC_mnl_tma[((None, None), 0, 0, None, None, None)], epi_tile)
        bSG_sC, bSG_gC = cpasync.tma_partition(tma_atom_c, 0, cute.make_layout(1), cute.group_modes(sC, 0, 2),
                                               cute.group_modes(g, 0, 2))
    if tiled_copy_t2r is not None:
        g = cute.flat_divide(gC_mnl_simt[((None, None), 0, 0, None, None, None)], epi_tile)
        tTR_gC = tiled_copy_t2r.get_slice(tidx).partition_D(g)
        simt_atom = cute.make_copy_atom(CopyUniversalOp(), c_dtype)
    return tma_atom_c, bSG_sC, bSG_gC, simt_atom, tTR_gC


def epilog_smem_copy_and_partition(c_layout: Any, c_dtype: Any, acc_dtype: Any, tiled_copy_t2r: Any, tTR_rC: Any,
                                   tidx: Any, sC: Any) -> Tuple[Any, Any, Any]:
    """(tiled_copy_r2s, tRS_rC, tRS_sC): the register -> shared copy of the epilogue (blackwell_helpers'
    get_smem_store_op, with the TMEM load's thread layout), the registers retiled for it and sC partitioned."""
    cute = _cute()
    from .blackwell_helpers import get_smem_store_op

    r2s = cute.make_tiled_copy_D(get_smem_store_op(c_layout, c_dtype, acc_dtype, tiled_copy_t2r), tiled_copy_t2r)
    return r2s, r2s.retile(tTR_rC), r2s.get_slice(tidx).partition_D(sC)


def epilog_tmem_copy_and_partition(cta_tile_shape_mnk: Any, c_layout: Any, c_dtype: Any, acc_dtype: Any, tidx: Any,
                                   tAcc: Any, gC_mnl: Any, epi_tile: Any,
                                   use_2cta_instrs: Any) -> Tuple[Any, Any, Any]:
    """(tiled_copy_t2r, tTR_tAcc, tTR_rAcc): the TMEM -> register copy of the accumulator's epilogue tiles
    (blackwell_helpers' get_tmem_load_op over one epilogue tile), the accumulator partitioned for this thread
    and a register fragment of acc_dtype shaped as one epilogue tile of C's partition."""
    cute = _cute()
    from ..nvgpu import tcgen05
    from .blackwell_helpers import get_tmem_load_op

    op = get_tmem_load_op(cta_tile_shape_mnk, c_layout, c_dtype, acc_dtype, epi_tile, use_2cta_instrs)
    acc = cute.flat_divide(tAcc[((None, None), 0, 0, None)], epi_tile)
    t2r = tcgen05.make_tmem_copy(op, acc[(None, None, 0, 0, 0)])
    thr = t2r.get_slice(tidx)
    tTR_gC = thr.partition_D(cute.flat_divide(gC_mnl[((None, None), 0, 0, None, None, None)], epi_tile))
    return t2r, thr.partition_S(acc), cute.make_rmem_tensor(tTR_gC[(None, None, None, 0, 0, 0, 0, 0)].shape,
                                                            acc_dtype)


def get_gmem_layout_scale(scale_shape_mkl: Any, scale_granularity_m: int, scale_granularity_k: int,
                          scale_major_mode: Any) -> Any:
    """The scale tensor's layout over A's (M, K, L) coordinates: ((gm, M/gm), (gk, K/gk), L), each granule's
    own mode of stride 0 (one scale per gm x gk block), the blocks M-major or K-major (scale_major_mode), L
    after the whole (M, K) plane."""
    cute = _cute()
    from ..nvgpu.universal_mma import OperandMajorMode

    m, k, l_ = scale_shape_mkl
    bm, bk = cute.ceil_div(m, scale_granularity_m), cute.ceil_div(k, scale_granularity_k)
    shape = ((scale_granularity_m, bm), (scale_granularity_k, bk))
    stride = ((0, 1), (0, bm)) if scale_major_mode == OperandMajorMode.MN else ((0, bk), (0, 1))
    mk = cute.make_layout(shape, stride=stride)
    return cute.make_layout((*mk.shape, l_), stride=(*mk.stride, cute.cosize(mk)))


def get_smem_layout_scale(mma_tiler: Any, use_2cta_instrs: bool, scale_granularity_m: int, scale_granularity_k: int,
                          scale_major_mode: Any, a_scale_dtype: Any,
                          num_scale_load2trans_stage: int) -> Tuple[Any, Any, Any]:
    """(scale_tile_shape, smem_layout_scale_per_stage, smem_layout_scale): one CTA's (M, K) tile of scales (M
    halved for 2-CTA MMAs) in shared memory, as ((gm', M'/gm'), (gk', K'/gk')) with granules of stride 0
    (gm' = min(gm, tile M), gk' likewise), blocks M- or K-major, behind an identity swizzle (a composed layout,
    as TMA atoms take), and the staged layout (stages after the stage's cosize). A stage must hold at least
    128 bytes (TMA's minimum)."""
    cute = _cute()
    from ..nvgpu.universal_mma import OperandMajorMode

    tile = (cute.size(mma_tiler[0]) // (2 if use_2cta_instrs else 1), cute.size(mma_tiler[2]))
    gm, gk = min(scale_granularity_m, tile[0]), min(scale_granularity_k, tile[1])
    bm, bk = cute.ceil_div(tile[0], gm), cute.ceil_div(tile[1], gk)
    stride = ((0, 1), (0, bm)) if scale_major_mode == OperandMajorMode.MN else ((0, bk), (0, 1))
    outer = cute.make_layout(((gm, bm), (gk, bk)), stride=stride)
    per_stage = cute.make_composed_layout(cute.make_swizzle(0, 4, 3), 0, outer)
    if cute.size(mma_tiler[0]) % cute.size(outer.shape[0]) or cute.size(mma_tiler[2]) % cute.size(outer.shape[1]):
        raise LayoutError(f"get_smem_layout_scale: the scale tile {outer} does not divide the MMA tile {mma_tiler}")
    if cute.size_in_bytes(a_scale_dtype, per_stage) < 128:
        raise LayoutError(f"get_smem_layout_scale: one stage of scales ({outer} of {a_scale_dtype}) is under 128 "
                          f"bytes; TMA needs at least 128")
    staged = cute.append(per_stage, cute.make_layout(num_scale_load2trans_stage, stride=cute.cosize(outer)))
    return tile, per_stage, staged


def compute_smem_layout(tiled_mma: Any, mma_tiler_mnk: Any, a_dtype: Any, b_dtype: Any, load2trans_stage_count: int,
                        trans2mma_stage_count: int) -> Tuple[Any, Any, Any]:
    """(smem_layout_a, smem_layout_a_transform, smem_layout_b): A as loaded (a_dtype, load stages), A as the
    MMA reads it (the MMA's A type, transform stages) and B (load stages), each blackwell_helpers' layout."""
    from .blackwell_helpers import make_smem_layout_a, make_smem_layout_b

    return (make_smem_layout_a(tiled_mma, mma_tiler_mnk, a_dtype, load2trans_stage_count),
            make_smem_layout_a(tiled_mma, mma_tiler_mnk, tiled_mma.op.a_dtype, trans2mma_stage_count),
            make_smem_layout_b(tiled_mma, mma_tiler_mnk, b_dtype, load2trans_stage_count))


def get_transform_a_source(a_major_mode: Any) -> Any:
    """Where the converted A goes: tensor memory when A is K-major, shared memory otherwise."""
    from ..nvgpu import tcgen05
    from ..nvgpu.universal_mma import OperandMajorMode

    return tcgen05.OperandSource.TMEM if a_major_mode == OperandMajorMode.K else tcgen05.OperandSource.SMEM


def get_tma_atom_kind(mcast: Any, use_2cta_instrs: bool, is_b: bool) -> Any:
    """The TMA load op of an operand: multicast or not, and of CtaGroup.TWO for B of a 2-CTA MMA only (A's
    consumers, the transform warps, are in each CTA)."""
    from ..nvgpu import cpasync, tcgen05

    group = tcgen05.CtaGroup.TWO if use_2cta_instrs and is_b else tcgen05.CtaGroup.ONE
    return cpasync.CopyBulkTensorTileG2SMulticastOp(group) if mcast else cpasync.CopyBulkTensorTileG2SOp(group)


def get_copy_atom_a_transform(mma_dtype: Any, use_2cta_instrs: bool, transform_a_source: Any, a_smem_shape: Any,
                              a_dtype: Any) -> Any:
    """The copy atom that stores the converted A: to tensor memory a 16x256b store (64-row 1-CTA tiles) or a
    32x32b store of 8 repetitions (128 rows), of mma_dtype; to shared memory a 32-bit universal copy of a_dtype."""
    cute = _cute()
    from ..nvgpu import CopyUniversalOp, tcgen05

    if transform_a_source == tcgen05.OperandSource.TMEM:
        if not (isinstance(a_smem_shape, tuple) and isinstance(a_smem_shape[0], tuple)):
            raise LayoutError(f"get_copy_atom_a_transform: a_smem_shape must be ((atom M, ...), ...), got "
                              f"{a_smem_shape!r}")
        if cute.size(a_smem_shape[0][0]) == 64 and not use_2cta_instrs:
            op = tcgen05.St16x256bOp(tcgen05.Repetition(1), tcgen05.Unpack.NONE)
        else:
            op = tcgen05.St32x32bOp(tcgen05.Repetition(8), tcgen05.Unpack.NONE)
        return cute.make_copy_atom(op, mma_dtype)
    return cute.make_copy_atom(CopyUniversalOp(), a_dtype, num_bits_per_copy=32)


def is_valid_scale_granularity(scale_granularity_m: int, scale_granularity_k: int, a_dtype: Any, k: int,
                               mma_tiler_k: int) -> bool:
    """8-bit A has no scales (both granularities 0); 4-bit A has one scale per row (m granularity 1) and per
    k granularity dividing K and a multiple of the MMA tile's K."""
    if a_dtype.width == 8:
        return scale_granularity_m == 0 and scale_granularity_k == 0
    if a_dtype.width == 4:
        return (scale_granularity_m == 1 and scale_granularity_k != 0 and k % scale_granularity_k == 0
                and scale_granularity_k % mma_tiler_k == 0)
    return True


def is_shuffle_a(a_major: str, k: int, a_dtype: Any, mma_dtype: Any, scale_granularity_k: int) -> bool:
    """Whether A's K mode is shuffled for the paired Int4 -> BFloat16 conversion: never in cutelab (see the module
    docstring; CuTe DSL too answers False below CUDA 13.1)."""
    return False


def is_valid_tensor_alignment(m: int, n: int, k: int, a_dtype: Any, b_dtype: Any, c_dtype: Any, scale_dtype: Any,
                              a_major: str, b_major: str, c_major: str, mma_tiler_mnk: Any, use_2cta_instrs: bool,
                              cluster_shape_mn: Any, scale_granularity_m: int, scale_granularity_k: int) -> bool:
    """The contiguous extents of A, B, C (and of the scales, counted in B's type as the DSL counts them) are
    multiples of 16 bytes, and one CTA's scales along M (per cluster column) fill at least 128 bytes."""
    def whole_16b(dtype: Any, mode0_major: bool, shape: tuple) -> bool:
        return shape[0 if mode0_major else 1] % (128 // dtype.width) == 0

    if not (whole_16b(a_dtype, a_major == "m", (m, k)) and whole_16b(b_dtype, b_major == "n", (n, k))
            and whole_16b(c_dtype, c_major == "m", (m, n))
            and (scale_granularity_k == 0 or whole_16b(b_dtype, True, (m, k // scale_granularity_k)))):
        return False
    cta_m = mma_tiler_mnk[0] // (2 if use_2cta_instrs else 1)
    if scale_granularity_m > 0 and (cta_m // cluster_shape_mn[1] // scale_granularity_m) * (scale_dtype.width // 8) \
            < 128:
        return False
    return True


def is_valid_mma_tiler_and_cluster_shape(mma_tiler: Any, cluster_shape_mn: Any, use_2cta_instrs: bool) -> bool:
    """A 2-CTA MMA needs an even cluster M; a CTA's M is 64 or 128."""
    v = 2 if use_2cta_instrs else 1
    return cluster_shape_mn[0] % v == 0 and mma_tiler[0] // v in (64, 128)


def get_divisibility(contiguous_dim_size: int, upper_bound: int = 128) -> int:
    """The largest power of two (from 2, at most upper_bound) dividing contiguous_dim_size; 1 if none."""
    for i in range(int(log2(contiguous_dim_size)), 0, -1):
        if contiguous_dim_size % (1 << i) == 0:
            return min(1 << i, upper_bound)
    return 1


# --------------------------------------------------------------------------- contiguous grouped GEMM

class ContiguousGGSearchState:
    """Where a contiguous grouped GEMM's group search stands along its mode (kept from one tile to the next):
    the tiles before the current group (last_tile_count), the current group's end (cur_boundary), the tiles up to
    it (cur_tile_count), its index (cur_group_idx) and start (cur_offset), and the found tile's start
    (cur_start). Carried through runtime loops by its six values."""

    _FIELDS = ("last_tile_count", "cur_boundary", "cur_tile_count", "cur_group_idx", "cur_offset", "cur_start")

    def __init__(self, last_tile_count: Any, cur_boundary: Any, cur_tile_count: Any, cur_group_idx: Any,
                 cur_offset: Any, cur_start: Any):
        self.last_tile_count, self.cur_boundary, self.cur_tile_count = last_tile_count, cur_boundary, cur_tile_count
        self.cur_group_idx, self.cur_offset, self.cur_start = cur_group_idx, cur_offset, cur_start

    def __extract_mlir_values__(self) -> list:
        return [getattr(self, f) for f in self._FIELDS]

    def __new_from_mlir_values__(self, values: list) -> "ContiguousGGSearchState":
        return ContiguousGGSearchState(*values)


def create_initial_contiguous_group_search_state() -> ContiguousGGSearchState:
    from ..numeric import Int32

    return ContiguousGGSearchState(*(Int32(0) for _ in range(6)))


class ContiguousGroupWorkTileInfo:
    """A contiguous grouped GEMM's tile for the warps: its CTA coordinate along M, its start along N, its group
    and the distance to the group's end; valid while the group index is below group_count (a Python int)."""

    def __init__(self, group_count: int, cta_coord_m: Any, coord_n: Any, group_idx: Any, distance_to_boundary: Any):
        self.group_count = group_count
        self.cta_coord_m, self.coord_n, self.group_idx = cta_coord_m, coord_n, group_idx
        self.distance_to_boundary = distance_to_boundary

    def __extract_mlir_values__(self) -> list:
        return [self.cta_coord_m, self.coord_n, self.group_idx, self.distance_to_boundary]

    def __new_from_mlir_values__(self, values: list) -> "ContiguousGroupWorkTileInfo":
        return ContiguousGroupWorkTileInfo(self.group_count, *values)

    @property
    def is_valid_tile(self) -> Any:
        return self.group_idx < self.group_count


def _contiguous_group_search(cluster_tile_shape_mnk: Any, group_count: Any, linear_idx: Any,
                             search_state: ContiguousGGSearchState, cumsum: Any,
                             search_mode: int) -> ContiguousGGSearchState:
    cute = _cute()
    from ..numeric import Int32

    tile = cluster_tile_shape_mnk[search_mode]
    not_found = linear_idx >= search_state.cur_tile_count
    group = search_state.cur_group_idx
    offset = search_state.cur_offset
    last = search_state.last_tile_count
    boundary = search_state.cur_boundary
    count = search_state.cur_tile_count
    if not_found:
        group = group + 1
    while not_found and group <= group_count:  # the groups after the current one, until the tile's
        nxt = Int32(cumsum[group])
        nxt_count = cute.ceil_div(nxt - boundary, tile) + count
        not_found = linear_idx >= nxt_count
        last = count
        offset = boundary
        boundary = nxt
        count = nxt_count
        if not_found:
            group = group + 1
    return ContiguousGGSearchState(last, boundary, count, group, offset, offset + tile * (linear_idx - last))


def contiguous_group_search(cluster_tile_shape_mnk: Any, group_count: Any, linear_idx: Any,
                            search_state: ContiguousGGSearchState, cumsum: Any,
                            search_mode: int) -> ContiguousGGSearchState:
    """The state after finding the group of tile linear_idx along search_mode, groups ending at cumsum[1..]
    (cumsum[g + 1] - cumsum[g] rows in group g, in tiles of the cluster tile's extent), searching on from
    search_state (tile indices only grow). A tile past the last group leaves cur_group_idx at group_count + 1."""
    from ..kernel.launch.api import run_jit

    return run_jit(_contiguous_group_search, (cluster_tile_shape_mnk, group_count, linear_idx, search_state, cumsum,
                                              search_mode), {})


def make_contiguous_group_work_tile_info(group_count: int, sTile_info: Any) -> ContiguousGroupWorkTileInfo:
    """The tile info the scheduler warp left in shared memory (4 Int32: coord M, coord N, group, distance),
    copied to registers."""
    cute = _cute()
    info = cute.make_rmem_tensor(sTile_info.shape, sTile_info.element_type)
    cute.autovec_copy(sTile_info, info)
    return ContiguousGroupWorkTileInfo(group_count, info[0], info[1], info[2], info[3])


# --------------------------------------------------------------------------- the conversion

def cvt_tensor_a(src: Any, dtype: Any, shuffle: bool) -> Any:
    """src's values converted to dtype (element by element; shuffle must be False, see is_shuffle_a)."""
    if shuffle:
        raise LayoutError("cvt_tensor_a: the shuffled Int4 -> BFloat16 conversion is not supported by cutelab "
                          "(is_shuffle_a answers False)")
    return src.load().to(dtype)


def store_transformed_a(src_a: Any, dst_a: Any, copy_atom_a: Optional[Any]) -> None:
    """Store the converted A: with copy_atom_a (a register -> TMEM copy) or, when None, an automatic copy."""
    cute = _cute()
    if copy_atom_a is not None:
        cute.copy(copy_atom_a, src_a, dst_a)
    else:
        cute.autovec_copy(src_a, dst_a)
