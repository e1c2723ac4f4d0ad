"""TMA stores: ``cpasync.CopyBulkTensorTileS2GOp``, a bulk tensor tile copy shared -> global memory
(``cp.async.bulk.tensor...global.shared::cta.bulk_group``), as ``cutlass.cute.nvgpu.cpasync`` names it.

``make_tiled_tma_atom(CopyBulkTensorTileS2GOp(), gmem, smem_layout, cta_tiler)`` makes the same
descriptor as a load (the box, its swizzle and its placement in shared memory are checked the same
way); ``cute.copy(atom, smem_tile, gmem_tile)`` stores one box (kernel/instr/tma_store.py), and the
``cp.async.bulk`` groups (``cute.arch.cp_async_bulk_commit_group`` / ``cp_async_bulk_wait_group``,
``cutlass.pipeline.PipelineTmaStore``) order the stores.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CopyBulkTensorTileS2GOp"]


@dataclass(frozen=True)
class CopyBulkTensorTileS2GOp:
    """TMA store: a bulk tensor tile copy shared -> global memory."""

    def __str__(self) -> str:
        return "cp.async SMEM -> GMEM bulk tensor copy Operation"
