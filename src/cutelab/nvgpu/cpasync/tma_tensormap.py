"""TMA's descriptor instructions in a kernel (kernel/instr/tensormap.py runs them): prefetch, and a
descriptor kept in memory, copied, rewritten and fenced. cutelab.nvgpu.cpasync.tma re-exports every name here.
"""

from __future__ import annotations

from typing import Any

from ...errors import LayoutError
from .tma_desc import TmaCopyAtom


def prefetch_descriptor(atom: Any, *, loc: Any = None, ip: Any = None) -> None:
    """``prefetch.tensormap`` of the atom's descriptor in a kernel (kernel/instr/tensormap.py): a cache hint,
    with no effect on results."""
    if not isinstance(atom, TmaCopyAtom):
        raise LayoutError(f"prefetch_descriptor: expected a TMA atom, got {type(atom).__name__}")
    from ...tracing import instruction

    instruction("tensormap.prefetch", "cpasync.prefetch_descriptor")(atom)


# --------------------------------------------------------------------------- descriptors in memory
# A kernel may keep an atom's descriptor in memory and rewrite it (grouped GEMMs): kernel/instr/tensormap.py


def copy_tensormap(tma_atom: Any, tensormap_ptr: Any, *, loc: Any = None, ip: Any = None) -> None:
    """Copy the atom's descriptor into the 128 bytes at tensormap_ptr (global or shared memory)."""
    from ...tracing import instruction

    instruction("tensormap.copy", "cpasync.copy_tensormap")(tma_atom, tensormap_ptr)


def update_tma_descriptor(tma_atom: Any, gmem_tensor: Any, tma_desc_ptr: Any, *, loc: Any = None, ip: Any = None) -> None:
    """Give the descriptor at tma_desc_ptr gmem_tensor's address, extents and strides (the other
    fields, the atom's box and swizzle, stay)."""
    from ...tracing import instruction

    instruction("tensormap.update", "cpasync.update_tma_descriptor")(tma_atom, gmem_tensor, tma_desc_ptr)


def fence_tma_desc_acquire(tma_desc_ptr: Any, *, loc: Any = None, ip: Any = None) -> None:
    """``fence.proxy.tensormap::generic.acquire.gpu [p], 128``: later TMAs through p see its updates."""
    from ...tracing import instruction

    instruction("tensormap.acquire", "cpasync.fence_tma_desc_acquire")(tma_desc_ptr)


def fence_tma_desc_release(*, loc: Any = None, ip: Any = None) -> None:
    """``fence.proxy.tensormap::generic.release.gpu``: release the descriptor updates made so far."""
    from ...tracing import instruction

    instruction("tensormap.release", "cpasync.fence_tma_desc_release")()


def cp_fence_tma_desc_release(tma_desc_global_ptr: Any, tma_desc_shared_ptr: Any, *, loc: Any = None,
                              ip: Any = None) -> None:
    """Copy a descriptor from shared to global memory and release it (``tensormap.cp_fenceproxy``)."""
    from ...tracing import instruction

    instruction("tensormap.cp_release", "cpasync.cp_fence_tma_desc_release")(tma_desc_global_ptr, tma_desc_shared_ptr)
