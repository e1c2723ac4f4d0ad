"""``cutlass._mlir.dialects.cute``: ``PtrType.get`` and ``recast_iter`` (CUTLASS's MoE examples retype a
descriptor pointer as a pointer to a TMA descriptor for ``cute.copy(..., tma_desc_ptr=...)``: cutelab's pointers
keep their memory, so the pointer is the same); its other operations import and raise NotEmulatedError naming
themselves when used."""

from typing import Any

from ..refused import module_getattr

__getattr__ = module_getattr("cutlass._mlir.dialects.cute")


class PtrType:
    """``PtrType.get(element type, address space, alignment)``: a pointer type, by its parts."""

    def __init__(self, elem: Any, memspace: Any, alignment: Any) -> None:
        self.elem, self.memspace, self.alignment = elem, memspace, alignment

    @staticmethod
    def get(elem: Any, memspace: Any, alignment: Any = None) -> "PtrType":
        return PtrType(elem, memspace, alignment)


def recast_iter(ty: Any, ptr: Any, *, loc: Any = None, ip: Any = None) -> Any:
    """``cute.recast_iter`` of a pointer to a ``PtrType`` of a TMA descriptor type: the same pointer (a
    TMA copy reads the descriptor through it)."""
    from ...where import NotEmulatedError, user_line

    if not isinstance(ty, PtrType) or not getattr(ty.elem, "is_tma_descriptor", False):
        raise NotEmulatedError("cutlass._mlir.dialects.cute.recast_iter", "cutelab recasts a pointer only to a "
                               "pointer of a TMA descriptor (cute_nvgpu.TmaDescriptorTiledType)", where=user_line(2))
    return ptr
