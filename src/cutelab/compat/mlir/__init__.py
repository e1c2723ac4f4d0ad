"""``cutlass._mlir``: the MLIR Python bindings CuTe DSL programs reach into, as far as cutelab can
give them meaning.

cutelab has no MLIR: a kernel is traced into cutelab's own IR. ``dialects.llvm.inline_asm`` with a
PTX instruction cutelab knows becomes that operation of its IR (so it runs on the CPU interpreter
and prints as CUDA on the GPU); ``ir`` has the type names (isinstance checks answer False); every
other operation imports and raises NotEmulatedError naming itself and the user's line when used.
"""

from . import dialects, ir  # noqa: F401


