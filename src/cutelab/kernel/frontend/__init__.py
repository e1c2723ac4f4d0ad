"""The front end: from the user's Python function to the kernel IR.

``rewrite`` rewrites the function's ``for``/``if``/``while`` (as CuTe DSL's AST preprocessor
does); ``control`` decides at trace time which of them are static and which become IR regions,
and ``carry`` keeps the variables a runtime region reassigns in registers (``carry_obj``: objects
carried by their values);
``trace`` runs the function once with symbolic indices and records the IR (``kernel.ir.nodes``):
the tracer and the traced values (``TraceValue``); ``engines`` the memories of traced tensors
(global, register and shared; ``rmem_index`` a register fragment read or written at a runtime
index; ``tma_coords`` the coordinates a TMA tensor's iterator is); ``smem`` shared-memory regions and swizzled views (``shared_address``: a
shared-memory address as an inline-PTX operand); ``threads`` a thread's lane and warp, the block
barrier and ``elect_one``; ``host`` records the host side of ``@cute.jit`` (prints, the thread's
launch record, dynamic arguments; ``launch`` runs it); ``printing`` is ``cute.printf``, whose
formats ``cformat`` reads.

Inside the folder, imports run one way: ``trace`` <- ``rmem_index`` <- ``engines`` <- ``smem``,
``printing`` and the rest; ``trace`` <- ``carry_obj`` <- ``carry`` <- ``control`` <- ``rewrite``.

May import: ``cutelab``'s core (layouts, tensors, numeric types), ``kernel.ir`` and
``kernel.analysis``. Never ``kernel.instr`` (whose ops the front end's tracer records: they import
it; ``cute.arch``, which gathers both, is ``kernel/arch.py``), a back end or ``kernel.launch``.
"""
