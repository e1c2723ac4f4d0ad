"""``cutlass.utils.TensorMapManager``: a kernel's TMA descriptors kept in memory and rewritten per
problem (grouped GEMMs), as CuTe DSL 4.8.1's ``cutlass.tensor_utils.TensorMapManager`` does it, on
cutelab's descriptor instructions (kernel/instr/tensormap.py).

- ``get_tensormap_ptr(ptr, space)``: the descriptor's pointer (cutelab keeps a pointer as its memory
  and offset, so it is ``ptr`` itself; CuTe DSL retypes the address);
- ``init_tensormap_from_atom(atom, ptr, warp_id)``: one thread of warp ``warp_id`` copies the atom's
  descriptor to ptr (``cpasync.copy_tensormap``), then the warp syncs;
- ``fence_tensormap_initialization()``: ``fence.acq_rel.cta`` in GMEM mode;
- ``fence_tensormap_update(ptr)``: ``cpasync.fence_tma_desc_acquire(ptr)``;
- ``update_tensormap(tensors, atoms, gmem_ptrs, warp_id, smem_ptrs)``: warp ``warp_id`` rewrites each
  descriptor for its tensor: in GMEM mode in global memory, then ``fence_tma_desc_release``; in SMEM
  mode in shared memory, then each is copied to global memory and released
  (``cp_fence_tma_desc_release``). Bulk stores still reading the old ones are waited for first.
"""

from __future__ import annotations

import enum

from dataclasses import dataclass
from typing import Any, Tuple


__all__ = ["TensorMapManager", "TensorMapUpdateMode"]


class TensorMapUpdateMode(enum.Enum):
    """Where a kernel updates a TMA descriptor (cutlass.utils.TensorMapUpdateMode): in global or shared memory."""

    GMEM = enum.auto()
    SMEM = enum.auto()


def _if(cond: Any) -> Tuple[Any, Any]:
    """Enter a runtime ``if cond:`` of the kernel being traced: (tracer, the block to go back to)."""
    from ..kernel.frontend.trace import current

    t = current("TensorMapManager")
    op = t.begin_if(cond)
    outer, t.cur = t.cur, op.then
    return t, outer


def _space(address_space: Any) -> str:
    return str(getattr(address_space, "value", address_space)).split(".")[-1]


@dataclass(frozen=True)
class TensorMapManager:
    """Copies TMA descriptors into memory and rewrites them (see the module docstring)."""

    tensormap_update_mode: Any
    bytes_per_tensormap: int

    def get_tensormap_ptr(self, ptr: Any, address_space: Any = "gmem", *, loc: Any = None, ip: Any = None) -> Any:
        if _space(address_space) not in ("gmem", "generic"):
            raise ValueError(f"Invalid address space: {address_space} for tensormap")
        if self.bytes_per_tensormap != 128:
            raise ValueError(f"TensorMapManager: a TMA descriptor takes 128 bytes, not {self.bytes_per_tensormap}")
        return ptr

    def init_tensormap_from_atom(self, copy_atom: Any, dst_ptr: Any, warp_id: int, *, loc: Any = None,
                                 ip: Any = None) -> None:
        from ..kernel import arch
        from ..nvgpu.cpasync import copy_tensormap

        t, outer = _if(arch.make_warp_uniform(arch.warp_idx()) == warp_id)
        with arch.elect_one():
            copy_tensormap(copy_atom, dst_ptr)
        t.cur = outer
        arch.sync_warp()

    def fence_tensormap_initialization(self, *, loc: Any = None, ip: Any = None) -> None:
        from ..kernel import arch

        if self.tensormap_update_mode == TensorMapUpdateMode.GMEM:
            arch.fence_acq_rel_cta()

    def fence_tensormap_update(self, tensormap_ptr: Any, *, loc: Any = None, ip: Any = None) -> None:
        from ..nvgpu.cpasync import fence_tma_desc_acquire

        fence_tma_desc_acquire(tensormap_ptr)

    def update_tensormap(self, tensor_gmem: Any, tma_copy_atom: Any, tensormap_gmem_ptr: Any, warp_id: int,
                         tensormap_smem_ptr: Any, *, loc: Any = None, ip: Any = None) -> None:
        from ..kernel import arch
        from ..kernel.instr.tma_store import cp_async_bulk_commit_group, cp_async_bulk_wait_group
        from ..nvgpu.cpasync import cp_fence_tma_desc_release, fence_tma_desc_release, update_tma_descriptor

        smem = self.tensormap_update_mode == TensorMapUpdateMode.SMEM
        t, outer = _if(arch.make_warp_uniform(arch.warp_idx()) == warp_id)
        if smem:
            for atom, tensor, sptr in zip(tma_copy_atom, tensor_gmem, tensormap_smem_ptr):
                update_tma_descriptor(atom, tensor, sptr)
        with arch.elect_one():  # the bulk stores through the old descriptors have read them
            cp_async_bulk_commit_group()
            cp_async_bulk_wait_group(0, read=True)
        arch.sync_warp()
        if smem:
            for gptr, sptr in zip(tensormap_gmem_ptr, tensormap_smem_ptr):
                cp_fence_tma_desc_release(gptr, sptr)
        else:
            for atom, tensor, gptr in zip(tma_copy_atom, tensor_gmem, tensormap_gmem_ptr):
                update_tma_descriptor(atom, tensor, gptr)
            arch.sync_warp()
            fence_tma_desc_release()
        t.cur = outer
