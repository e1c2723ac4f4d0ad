"""The GPU back end: the CUDA C++ printer (``printer``), NVRTC with its disk cache
(``nvrtc``), the CUDA driver (``driver``, exported as ``cutelab.cuda``) and a fake driver and
NVRTC that let the GPU path run without a GPU (``fakegpu``).

``cutelab.kernel.cuda.render(ir)`` is the printer's entry point.

May import: ``kernel.ir``, ``kernel.frontend``'s IR nodes, ``kernel.analysis``, ``kernel.instr``.
"""

from .printer import CudaRenderer, render  # noqa: F401
