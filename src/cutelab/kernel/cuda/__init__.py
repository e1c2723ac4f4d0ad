"""The GPU back end: the CUDA C++ printer (``printer``, with its integer expressions in
``intexpr`` and C types in ``dtypes``), the public emit API instructions print through
(``lowering.LoweringContext``), NVRTC with its disk cache (``nvrtc``), the CUDA driver
(``driver``, exported as ``cutelab.cuda``; cluster launches configured in ``cluster``), the error word of
guarded accesses (``errorword``, read by ``cutelab.kernel.check_errors``) and a fake driver and NVRTC that let the GPU path run
without a GPU (``fakegpu``).

``cutelab.kernel.cuda.render(ir)`` is the printer's entry point. The printer decides nothing:
it prints the ``Plan`` of ``kernel.passes.run_passes``.

May import: ``kernel.ir``, ``kernel.frontend``'s IR nodes, ``kernel.analysis``, ``kernel.instr``,
``kernel.passes``.
"""

from .printer import CudaRenderer, render  # noqa: F401
