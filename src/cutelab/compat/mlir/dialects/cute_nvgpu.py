"""``cutlass._mlir.dialects.cute_nvgpu``: its operations import and raise NotEmulatedError naming themselves when used."""

from ..refused import module_getattr

__getattr__ = module_getattr("cutlass._mlir.dialects.cute_nvgpu")
