"""The front end: from the user's Python function to the kernel IR.

``rewrite`` rewrites the function's ``for``/``if``/``while`` (as CuTe DSL's AST preprocessor
does); ``control`` decides at trace time which of them are static and which become IR regions;
``trace`` runs the function once with symbolic indices and records the IR (its nodes live here
today); ``smem`` holds shared-memory engines and swizzled views (``shared_address``: a
shared-memory address as an inline-PTX operand); ``threads`` a thread's lane and warp, the block
barrier and ``elect_one``; ``host`` records the host side of ``@cute.jit`` (prints, the thread's
launch record, dynamic arguments; ``launch`` runs it); ``arch`` is ``cute.arch``; ``cformat``
reads ``cute.printf`` formats.

May import: ``cutelab``'s core (layouts, tensors, numeric types), ``kernel.ir``,
``kernel.analysis`` and, for ``cute.arch``'s names (``arch`` only), ``kernel.instr``. Never a back
end, never ``kernel.launch``.
"""
