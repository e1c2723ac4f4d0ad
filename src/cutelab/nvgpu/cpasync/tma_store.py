"""TMA stores: ``cpasync.CopyBulkTensorTileS2GOp``, a bulk tensor tile copy shared -> global memory
(``cp.async.bulk.tensor...global.shared::cta.bulk_group``), as ``cutlass.cute.nvgpu.cpasync`` names it.
``CopyReduceBulkTensorTileS2GOp`` (the reduce-store) is named, and refused by ``make_tiled_tma_atom``.

``make_tiled_tma_atom(CopyBulkTensorTileS2GOp(), gmem, smem_layout, cta_tiler)`` makes the same
descriptor as a load (the box, its swizzle and its placement in shared memory are checked the same
way); ``cute.copy(atom, smem_tile, gmem_tile)`` stores one box (kernel/instr/tma_store.py), and the
``cp.async.bulk`` groups (``cute.arch.cp_async_bulk_commit_group`` / ``cp_async_bulk_wait_group``,
``cutlass.pipeline.PipelineTmaStore``) order the stores.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

__all__ = ["CopyBulkTensorTileS2GOp", "CopyReduceBulkTensorTileS2GOp", "ReductionKind", "ReductionOp"]


class ReductionKind(enum.IntEnum):
    """The reduction of a TMA reduce-store (``cpasync.ReductionKind``, also named ``cpasync.ReductionOp``)."""

    ADD = 0
    MIN = 1
    MAX = 2
    INC = 3
    DEC = 4
    AND = 5
    OR = 6
    XOR = 7


ReductionOp = ReductionKind


@dataclass(frozen=True)
class CopyBulkTensorTileS2GOp:
    """TMA store: a bulk tensor tile copy shared -> global memory."""

    def __str__(self) -> str:
        return "cp.async SMEM -> GMEM bulk tensor copy Operation"


@dataclass(frozen=True)
class CopyReduceBulkTensorTileS2GOp:
    """TMA reduce-store (``cp.reduce.async.bulk.tensor``): shared memory reduced into global memory. cutelab
    names it (programs build it beside the plain store) but has no instruction for it yet:
    ``make_tiled_tma_atom`` refuses it, naming it."""

    reduction_kind: Any = ReductionKind.ADD

    def __str__(self) -> str:
        kind = getattr(self.reduction_kind, "name", self.reduction_kind)
        return f"cp.reduce.async SMEM -> GMEM bulk tensor reduction ({kind}) Operation"
