"""The IR's building blocks: symbolic integers over thread and block indices (``symbolic``).

May import: ``cutelab.errors``, ``cutelab.numeric`` and the protocol ``cutelab.tracing`` (through
which an index becomes the tracer's value), nothing else of the kernel.
"""
