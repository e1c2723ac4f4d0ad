"""Scale-factor layouts of block-scaled UMMAs, named as ``cutlass.utils.blockscaled_layout``.

A block-scaled UMMA (tcgen05 MmaMXF8Op, MmaMXF4Op, MmaMXF4NVF4Op, ...) multiplies each run of
sf_vec_size elements along K by one scale factor. Scale factors are stored in a fixed "basic
chunk" (the PTX tcgen05 scale-factor layout): 128 rows (32 x 4, interleaved by 16 bytes) by 4
scale factors, each covering sf_vec_size elements of K (stride 0 across them).

>>> print(BlockScaledBasicChunk(16).layout)
((32,4),(16,4)):((16,4),(0,1))
>>> print(tile_atom_to_shape_SF((256, 128, 2), 16))
(((32,4),2),((16,4),2),(1,2)):(((16,4),1024),((0,1),512),(0,2048))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import int_tuple as it
from ..algebra import composition, filter_zeros, logical_divide, tile_to_shape, tiled_divide, tiled_product
from ..errors import LayoutError
from ..layout import Layout, cosize, make_layout
from ..nvgpu.universal_mma import OperandMajorMode

__all__ = ["BlockScaledBasicChunk", "tile_atom_to_shape_SF", "make_smem_layout_sf", "make_smem_layout_sfa",
           "make_smem_layout_sfb", "make_tmem_layout_sfa", "make_tmem_layout_sfb"]


@dataclass(frozen=True)
class BlockScaledBasicChunk:
    """The scale-factor atom of tcgen05 block-scaled MMAs: (AtomMN, AtomK) for K-major scale factors,
    (AtomK, AtomMN) for MN-major."""

    sf_vec_size: int
    major_mode: OperandMajorMode = OperandMajorMode.K
    _layout: Layout = field(init=False, repr=False)

    def __post_init__(self) -> None:
        v = self.sf_vec_size
        if self.major_mode is OperandMajorMode.K:
            lay = make_layout(((32, 4), (v, 4)), stride=((16, 4), (0, 1)))
        else:
            lay = make_layout(((v, 4), (32, 4)), stride=((0, 1), (16, 4)))
        object.__setattr__(self, "_layout", lay)

    @property
    def layout(self) -> Layout:
        return self._layout


def tile_atom_to_shape_SF(shape: Any, sf_vec_size: int) -> Layout:
    """The scale-factor layout of an (MN, K, L) operand: the chunk tiled K-chunks first, then MN, then L."""
    return tile_to_shape(BlockScaledBasicChunk(sf_vec_size).layout, shape, (2, 1, 3))


def _staged(layout: Layout, num_stages: int) -> Layout:
    stage = cosize(filter_zeros(layout))
    shp = layout.shape if isinstance(layout.shape, tuple) else (layout.shape,)
    std = layout.stride if isinstance(layout.stride, tuple) else (layout.stride,)
    return Layout._raw(shp + (num_stages,), std + (stage,))  # the DSL keeps the stride of one stage


def make_smem_layout_sf(tile_shape: Any, sf_vec_size: int, num_stages: int) -> Layout:
    """A staged SMEM layout of scale factors for an (MN, K) tile."""
    return _staged(tile_to_shape(BlockScaledBasicChunk(sf_vec_size).layout, tile_shape, (2, 1)), num_stages)


def _smem_sf(tiled_mma: Any, mma_tiler_mnk: Any, sf_vec_size: int, num_stages: int, b: bool) -> Layout:
    what = f"make_smem_layout_sf{'b' if b else 'a'}"
    if not isinstance(mma_tiler_mnk, tuple) or len(mma_tiler_mnk) != 3:
        raise LayoutError(f"{what}: mma_tiler_mnk must be a tuple (M, N, K), got {mma_tiler_mnk!r}")
    m, n, k = mma_tiler_mnk
    if b:
        mn = -(-n // 128) * 128  # SFB rows are rounded up to whole 128-row chunks
        inst_mn = n // tiled_mma.shape_mnk[1]
    else:
        mn = m // it.product(tiled_mma.thr_id.shape)
        inst_mn = m // tiled_mma.shape_mnk[0]
    inst_k = k // tiled_mma.shape_mnk[2]
    tile = (mn, k)
    if mn % 128:
        raise LayoutError(
            f"{what}: the CTA's tile has {mn} rows of scale factors, not a whole number of 128-row scale-factor "
            f"chunks (a 2-CTA UMMA needs M = 256 for this; CuTe DSL 4.8.1 answers with a layout that does not "
            f"cover the tile)"
        )
    lay = tile_to_shape(BlockScaledBasicChunk(sf_vec_size).layout, tile, (2, 1))
    if not inst_mn or not inst_k or mn % inst_mn or k % inst_k:
        raise LayoutError(f"{what}: the tile {it.tuple_str(tile)} does not split into ({inst_mn}, {inst_k}) MMAs")
    lay = tiled_divide(lay, (mn // inst_mn, k // inst_k))   # ((Atom_Inst_MN, Atom_Inst_K), MMA_MN, MMA_K)
    lay = logical_divide(lay, ((128, sf_vec_size),))        # (((Atom_Inst_MN, Rest),(Atom_Inst_K, Rest)), MMA_MN, MMA_K)
    return _staged(lay, num_stages)


def make_smem_layout_sfa(tiled_mma: Any, mma_tiler_mnk: Any, sf_vec_size: int, num_stages: int) -> Layout:
    """The staged SMEM layout of A's scale factors: (((128,RestM),(sf_vec,RestK)), MMA_M, MMA_K, STAGE)."""
    return _smem_sf(tiled_mma, mma_tiler_mnk, sf_vec_size, num_stages, False)


def make_smem_layout_sfb(tiled_mma: Any, mma_tiler_mnk: Any, sf_vec_size: int, num_stages: int) -> Layout:
    """The staged SMEM layout of B's scale factors (N rounded up to 128 rows)."""
    return _smem_sf(tiled_mma, mma_tiler_mnk, sf_vec_size, num_stages, True)


def _unit_strides_zero(shape: Any, stride: Any) -> Any:
    if isinstance(shape, tuple):
        return tuple(_unit_strides_zero(a, b) for a, b in zip(shape, stride))
    return 0 if shape == 1 else stride


def _tmem_sf(tiled_mma: Any, mma_tiler_mnk: Any, smem_layout: Layout, b: bool) -> Layout:
    """CuTe's UMMA::tmem_sf_frg over the shape of one stage of the SMEM scale factors
    (((MN...),(VecSize,NSF)), MMA_MN, MMA_K, ...): 32 lanes of a sub-partition, the MN groups of 32 in
    columns (4 scale factors of 8 bits in a column), the whole repeated in the four lane quarters
    ("4x1"); SFB of a 2-CTA UMMA of M = 128 uses two quarters per half ("2x2")."""
    what = f"make_tmem_layout_sf{'b' if b else 'a'}"
    if not isinstance(smem_layout, Layout):
        raise LayoutError(f"{what}: expected the SMEM layout of one stage (a Layout), got {smem_layout!r}")
    shp = smem_layout.shape
    if (not isinstance(shp, tuple) or len(shp) < 3 or not isinstance(shp[0], tuple) or len(shp[0]) != 2
            or not isinstance(shp[0][1], tuple) or len(shp[0][1]) != 2):
        raise LayoutError(f"{what}: expected an MMA-partitioned scale-factor layout ((MN,(VecSize,NSF)),MMA_MN,MMA_K,...), "
                          f"got {smem_layout}")
    mn, vs, nsf = it.product(shp[0][0]), it.product(shp[0][1][0]), it.product(shp[0][1][1])
    n_sm = it.product(tiled_mma.thr_id.shape)
    cta_m = mma_tiler_mnk[0] // n_sm
    if b and n_sm == 2 and cta_m == 64:  # 2x2 data path
        if mn % 64:
            raise LayoutError(f"{what}: {mn} scale-factor rows do not split into 2x2 lane quarters of 32")
        atom = Layout._raw((((32, mn // 64), 2, 2), (vs, nsf)), (((1, 512), 64, 32), (0, 128)))
    else:
        if mn % 32:
            raise LayoutError(f"{what}: {mn} scale-factor rows are not a whole number of 32-lane groups")
        atom = Layout._raw((((32, mn // 32), 4), (vs, nsf)), (((1, 512), 32), (0, 128)))
        # CuTe DSL prints this atom's one-element modes with stride 0 (its 2x2 atom keeps them)
        atom = Layout._raw(atom.shape, _unit_strides_zero(atom.shape, atom.stride))
    restride = Layout._raw((128, 16384), (65536 * 4, 1))  # 8-bit scale factors: 4 to a column
    return composition(restride, tiled_product(atom, make_layout(tuple(shp[1:]))))


def make_tmem_layout_sfa(tiled_mma: Any, mma_tiler_mnk: Any, sf_vec_size: int, smem_layout: Layout) -> Layout:
    """The TMEM layout of A's scale factors for one stage of their SMEM layout.

    >>> from cutelab import Float4E2M1FN, Float8E4M3FN
    >>> from cutelab.nvgpu import OperandMajorMode, tcgen05
    >>> from cutelab.utils.blackwell_helpers import make_blockscaled_trivial_tiled_mma
    >>> K = OperandMajorMode.K
    >>> t = make_blockscaled_trivial_tiled_mma(Float4E2M1FN, Float4E2M1FN, K, K, Float8E4M3FN, 16, tcgen05.CtaGroup.ONE,
    ...                                        (128, 128))
    >>> from cutelab.layout import slice_
    >>> s = slice_(make_smem_layout_sfa(t, (128, 128, 256), 16, 1), (None, None, None, 0))
    >>> print(make_tmem_layout_sfa(t, (128, 128, 256), 16, s))
    ((((32,4),4),(16,4)),1,4):((((262144,4),8388608),(0,1)),0,16)
    """
    return _tmem_sf(tiled_mma, mma_tiler_mnk, smem_layout, False)


def make_tmem_layout_sfb(tiled_mma: Any, mma_tiler_mnk: Any, sf_vec_size: int, smem_layout: Layout) -> Layout:
    """The TMEM layout of B's scale factors for one stage of their SMEM layout."""
    return _tmem_sf(tiled_mma, mma_tiler_mnk, smem_layout, True)
