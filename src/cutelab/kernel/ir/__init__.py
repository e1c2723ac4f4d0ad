"""The IR's building blocks: its nodes (``nodes``: kernels, blocks, registers, loads, stores,
computations, regions and the ``Op`` base of instructions), symbolic integers over thread and block
indices (``symbolic``) and the ``Fault`` op (``fault``: an error only if a thread runs it, which the
front end emits for a register fragment indexed out of range).

May import: ``cutelab.errors``, ``cutelab.numeric`` and the protocol ``cutelab.tracing`` (through
which an index becomes the tracer's value), nothing else of the kernel.
"""
