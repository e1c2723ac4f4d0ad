"""``cute.nvgpu.make_tiled_tma_atom_A`` / ``make_tiled_tma_atom_B``: TMA atoms for the operands of a
tiled MMA (CuTe DSL 4.8.1's ``cute/nvgpu/helpers.py``), as the SM100 kernels make them.

The atom copies one CTA's (M, K) tile of A (or (N, K) tile of B) of ``mma_tiler_mnk`` into shared
memory laid out by the MMA-partitioned smem layout (``sm100_utils.make_smem_layout_a``: mode 0
the MMA's value mode, then the MMA_M/N and MMA_K repeats, optionally a stage mode, which is
dropped). It is ``cpasync.make_tiled_tma_atom`` of that tile, after checking that the partitioned
layout lists the tile's elements in the tile's own (column-major) order, which is what makes the
partitioned smem layout a layout of the plain tile (cutelab's TMA copies then accept the
MMA-partitioned global tile of ``thr_mma.partition_A``).

Deviations (as in ``cpasync.tma``): the second result is the global tensor itself, not a tensor of
coordinates; the result is a ``TmaInfo`` that unpacks into (atom, tensor) as CuTe DSL's does.
For a 2-CTA MMA (``CtaGroup.TWO``) each CTA of the pair loads its half of the MN extent; the
load's bytes complete on the barrier of the pair's leader CTA (kernel/instr/tcgen05_2cta.py). A
``CtaGroup.TWO`` op for a 1-CTA tiled MMA loads the whole tile in each CTA of the pair, its bytes counted at
the leader (the scale factors of B in CUTLASS's 2-CTA block-scaled GEMMs). A multicast op splits the tile
into ``num_multicast`` slices, one issued by each CTA of the multicast (cpasync/tma.py).
"""

from __future__ import annotations

from typing import Any

from .. import int_tuple as it
from ..errors import LayoutError
from ..layout import Layout
from .cpasync.tma import TmaInfo

__all__ = ["make_tiled_tma_atom_A", "make_tiled_tma_atom_B", "TmaInfo"]


def _rank(x: Any) -> int:
    shp = getattr(x, "shape", x)
    return len(shp) if isinstance(shp, tuple) else 1


def _outer(smem_layout: Any) -> Layout:
    return smem_layout if isinstance(smem_layout, Layout) else getattr(smem_layout, "outer", smem_layout)


def _tma_for_operand(which: str, op: Any, gmem_tensor: Any, smem_layout: Any, mma_tiler_mnk: Any, tiled_mma: Any,
                     cluster_shape_vmnk: Any, internal_type: Any) -> TmaInfo:
    from ..swizzle import select
    from .cpasync.tma import CopyBulkTensorTileG2SMulticastOp, CopyBulkTensorTileG2SOp, make_tiled_tma_atom

    name = f"make_tiled_tma_atom_{which}"
    where = f"cute.nvgpu.{name}({op}, {getattr(gmem_tensor, 'layout', gmem_tensor)}, {smem_layout}, {mma_tiler_mnk})"
    r = _rank(smem_layout)
    if r not in (3, 4):
        raise LayoutError(f"{where}: {which.lower()}_smem_layout must be non-staged (atom, rest_{'m' if which == 'A' else 'n'}, "
                          f"rest_k) or staged (atom, rest_{'m' if which == 'A' else 'n'}, rest_k, stage), but got "
                          f"rank = {r}")
    stored = smem_layout
    if r == 4:
        smem_layout = select(smem_layout, mode=[0, 1, 2])
    if not isinstance(op, CopyBulkTensorTileG2SOp):
        raise LayoutError(f"{where}: expected a CopyBulkTensorTileG2SOp or CopyBulkTensorTileG2SMulticastOp")
    thr = getattr(tiled_mma, "thr_id", None)
    n_cta = it.product(thr.shape) if isinstance(thr, Layout) else 1
    group = getattr(op.cta_group, "value", op.cta_group) or 1
    # a CtaGroup.TWO load for a 1-CTA MMA: each CTA of a pair loads the 1-CTA MMA's whole operand (the scale
    # factors of B in CUTLASS's 2-CTA block-scaled GEMMs, which each CTA of the pair reads for its own half
    # of the accumulator), its bytes counted at the pair's leader, which issues the pair's UMMAs
    # a CtaGroup.ONE load for a 2-CTA MMA: each CTA of the pair loads its half of the operand and its own mbarrier
    # counts the bytes (CUTLASS's mixed-input FMHA prefill loads K and V so, each CTA syncing with its own consumer)
    if n_cta not in (1, 2) or group not in (1, 2):
        raise LayoutError(f"{where}: the op's cta_group ({op.cta_group}) must match the tiled MMA's {n_cta} CTA(s)")
    num_multicast = 1
    if isinstance(op, CopyBulkTensorTileG2SMulticastOp):
        if cluster_shape_vmnk is None:
            raise LayoutError(f"{where}: cluster_shape_vmnk must be provided for multicast {which} tensor loads")
        shp = getattr(cluster_shape_vmnk, "shape", cluster_shape_vmnk)
        num_multicast = it.product(shp[2 if which == "A" else 1]) if isinstance(shp, tuple) else 1
    mnk = tuple(mma_tiler_mnk)
    if len(mnk) != 3 or not all(type(x) is int for x in mnk):
        raise LayoutError(f"{where}: mma_tiler_mnk must be three static ints, got {mma_tiler_mnk}")
    full = (mnk[0], mnk[2]) if which == "A" else (mnk[1], mnk[2])
    # a 2-CTA MMA splits the MN extent between the CTAs of the pair: each CTA loads its half
    tile = (full[0] // n_cta, full[1])
    # the MMA's partition of the (MN, K) tile must list the CTA's elements in column-major order: then
    # the partitioned smem layout is a layout of the plain tile
    part = (tiled_mma.partition_shape_A if which == "A" else tiled_mma.partition_shape_B)(full)
    if it.product(part) != it.product(tile):
        raise LayoutError(f"{where}: the tiled MMA partitions the {it.tuple_str(full)} tile into {it.tuple_str(part)}")
    from ..tensor import make_identity_tensor

    ident = make_identity_tensor(full)
    thr_mma = tiled_mma.get_slice(0)
    coords = (thr_mma.partition_A if which == "A" else thr_mma.partition_B)(ident)
    n = it.product(tile)
    got = [coords[i] for i in range(n)]
    want = [(i % tile[0], i // tile[0]) for i in range(n)]
    flat = [tuple(it.flatten_to_tuple(c)) for c in got]
    if flat != want:
        k = next(i for i in range(n) if flat[i] != want[i])
        raise LayoutError(f"{where}: the tiled MMA's partition of {which} puts tile element {want[k]} at position {k} "
                          f"(it holds {flat[k]}); cutelab's TMA copies need the partition in the tile's column-major "
                          f"order (a 1-CTA UMMA with one atom per CTA along M/N has it)")
    if it.product(_outer(smem_layout).shape) != n:
        raise LayoutError(f"{where}: one stage of the smem layout holds {it.product(_outer(smem_layout).shape)} "
                          f"elements, the {it.tuple_str(tile)} tile has {n}")
    one = type(op)()  # the same op for one CTA: a 2-CTA load is one CTA's box, its bytes counted by the pair's leader
    atom, tensor = make_tiled_tma_atom(one, gmem_tensor, smem_layout, tile, num_multicast,
                                       internal_type=internal_type, _one_stage=True)
    atom.op = op  # the copy (kernel/instr/tma.py, tcgen05_2cta.py) reads the cta_group from it
    return TmaInfo(atom, tensor, stored)


def make_tiled_tma_atom_A(op: Any, gmem_tensor: Any, smem_layout: Any, mma_tiler_mnk: Any, tiled_mma: Any,
                          cluster_shape_vmnk: Any = None, *, internal_type: Any = None, loc: Any = None,
                          ip: Any = None) -> TmaInfo:
    """A TMA atom loading one (M, K) tile of A for tiled_mma (see the module docstring)."""
    return _tma_for_operand("A", op, gmem_tensor, smem_layout, mma_tiler_mnk, tiled_mma, cluster_shape_vmnk,
                            internal_type)


def make_tiled_tma_atom_B(op: Any, gmem_tensor: Any, smem_layout: Any, mma_tiler_mnk: Any, tiled_mma: Any,
                          cluster_shape_vmnk: Any = None, *, internal_type: Any = None, loc: Any = None,
                          ip: Any = None) -> TmaInfo:
    """A TMA atom loading one (N, K) tile of B for tiled_mma (see the module docstring)."""
    return _tma_for_operand("B", op, gmem_tensor, smem_layout, mma_tiler_mnk, tiled_mma, cluster_shape_vmnk,
                            internal_type)

