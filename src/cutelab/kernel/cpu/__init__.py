"""The CPU back end: the numpy interpreter (``interpreter``) and the memory-access profiler
that runs on it (``profiler``).

May import: ``kernel.ir``, ``kernel.frontend``'s IR nodes, ``kernel.analysis``,
``kernel.instr``; the profiler also ``cutelab.analysis`` and ``cutelab.render``.
"""
