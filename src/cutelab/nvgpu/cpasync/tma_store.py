"""TMA stores: ``cpasync.CopyBulkTensorTileS2GOp``, a bulk tensor tile copy shared -> global memory
(``cp.async.bulk.tensor...global.shared::cta.bulk_group``), as ``cutlass.cute.nvgpu.cpasync`` names it.
``CopyReduceBulkTensorTileS2GOp`` (the reduce-store) is named, and refused by ``make_tiled_tma_atom``.

``make_tiled_tma_atom(CopyBulkTensorTileS2GOp(), gmem, smem_layout, cta_tiler)`` makes the same
descriptor as a load (the box, its swizzle and its placement in shared memory are checked the same
way); ``cute.copy(atom, smem_tile, gmem_tile)`` stores one box (kernel/instr/tma_store.py), and the
``cp.async.bulk`` groups (``cute.arch.cp_async_bulk_commit_group`` / ``cp_async_bulk_wait_group``,
``cutlass.pipeline.PipelineTmaStore``) order the stores. ``CopyReduceBulkTensorTileS2GOp`` adds the box to
global memory instead (``cp.reduce.async.bulk.tensor...add``; CUTLASS's Blackwell FMHA backward accumulates dQ
so).
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
class CopyReduceBulkTensorTileS2GOp(CopyBulkTensorTileS2GOp):
    """TMA reduction: a bulk tensor tile from shared memory combined into global memory (``reduction_kind``:
    CuTe DSL's ``cute.ReductionKind``; kernels run ADD of f32 elements)."""

    reduction_kind: Any = None  # None: ADD, as CuTe DSL's default

    @property
    def kind_name(self) -> str:
        k = self.reduction_kind
        return "ADD" if k is None else str(getattr(k, "name", k)).upper()

    def __str__(self) -> str:
        return f"cp.reduce SMEM -> GMEM bulk tensor {self.kind_name.lower()} Operation"
