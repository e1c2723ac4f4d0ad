"""``cutlass._mlir``: the MLIR Python bindings CuTe DSL programs reach into, as far as cutelab can
give them meaning.

cutelab has no MLIR: a kernel is traced into cutelab's own IR. ``dialects.llvm.inline_asm`` of PTX
becomes one op of that IR, printed as ``asm volatile`` on the GPU and run by cutelab's PTX
interpreter on the CPU (kernel/instr/ptx.py lists the instructions it knows); ``ir`` has the type names (isinstance checks answer False); every
other operation imports and raises NotEmulatedError naming itself and the user's line when used.

May import: ``cutelab.compat``, the numeric types, the C values of the JitArgument protocol
(``cutelab.kernel.frontend.c_abi``) and, inside kernels, the kernel's traced values and inline PTX
(``cutelab.kernel``). Nothing outside ``compat`` imports it.
"""

from . import dialects, ir  # noqa: F401


