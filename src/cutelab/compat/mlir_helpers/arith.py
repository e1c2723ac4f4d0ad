"""``cutlass._mlir_helpers.arith``: conversions of MLIR values (``bitcast``, ``cvtf``, ...). cutelab's kernel
values are not MLIR values: every name imports and raises NotEmulatedError naming itself when used."""

from ..mlir.refused import module_getattr

__getattr__ = module_getattr("cutlass._mlir_helpers.arith")
