"""``cutlass._mlir.dialects``: llvm (inline_asm of known PTX), and the other dialects' names, which
import and raise NotEmulatedError when used.

May import: ``cutelab.compat`` and the kernel (``cutelab.kernel``: traced values, inline PTX).
"""

from . import arith, cute, cute_nvgpu, gpu, llvm, math, nvvm, scf, vector  # noqa: F401
