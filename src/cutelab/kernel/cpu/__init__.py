"""The CPU back end: the numpy interpreter (``interpreter``; its warps and scheduler ``warps``, the
copies it leaves out ``forward``, the runs of stores it makes one ``storerun``, its optional shared-memory
race detection ``racecheck``, the memory behind addresses a kernel holds ``addresses``) and the
memory-access profiler that runs on it (``profiler``), which learns from ``instructions`` what GPU
instructions each access becomes (the compiler's passes' plan, then the CUDA compiler's own rewrites).

May import: ``kernel.ir``, ``kernel.frontend``'s IR nodes, ``kernel.analysis``,
``kernel.instr``, ``kernel.passes``; the profiler also ``cutelab.analysis`` and ``cutelab.render``.
"""
