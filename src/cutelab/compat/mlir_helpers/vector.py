"""``cutlass._mlir_helpers.vector``: MLIR vector values; every name imports and raises NotEmulatedError naming
itself when used."""

from ..mlir.refused import module_getattr

__getattr__ = module_getattr("cutlass._mlir_helpers.vector")
