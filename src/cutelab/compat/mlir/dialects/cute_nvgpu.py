"""``cutlass._mlir.dialects.cute_nvgpu``: ``atom_make_non_exec_tiled_tma_load`` (CUTLASS's MLA decode makes its
paged TMA atoms with it) is cutelab's ``make_tiled_tma_atom``; the other operations import and raise
NotEmulatedError naming themselves when used."""

from typing import Any

from ..refused import module_getattr

__getattr__ = module_getattr("cutlass._mlir.dialects.cute_nvgpu")


class TmaDescriptorTiledType:
    """``TmaDescriptorTiledType.get()``: the type of a tiled TMA descriptor, for ``cute.PtrType.get``."""

    is_tma_descriptor = True

    @staticmethod
    def get(*args: Any, **kwargs: Any) -> "TmaDescriptorTiledType":
        return TmaDescriptorTiledType()


def atom_make_non_exec_tiled_tma_load(gmem: Any, smem_layout: Any, cta_v_map: Any, op: Any, *, num_multicast: int = 1,
                                      loc: Any = None, ip: Any = None, **kwargs: Any) -> tuple:
    """(TMA load atom, TMA tensor) for the tile ``cta_v_map`` (a CTA-value layout over ``gmem``'s coordinates) of
    ``gmem`` into ``smem_layout``: make_tiled_tma_atom's (the atom is wrapped by
    cpasync.CopyBulkTensorTileG2SNonExecTrait and cute.CopyAtom as CuTe DSL wraps its MLIR atom)."""
    from ....nvgpu.cpasync.tma import make_tiled_tma_atom
    from ...where import NotEmulatedError, user_line

    if kwargs:
        raise NotEmulatedError("cutlass._mlir.dialects.cute_nvgpu.atom_make_non_exec_tiled_tma_load",
                               f"the arguments {sorted(kwargs)} are not supported by cutelab", where=user_line(2))
    info = make_tiled_tma_atom(op, gmem, smem_layout, cta_v_map, num_multicast)
    return info.atom, info.tma_tensor
