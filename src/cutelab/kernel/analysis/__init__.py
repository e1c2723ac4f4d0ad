"""Facts about a traced kernel: value ranges of its registers (``ranges``), the bits an index
expression can set (``bits``) and the guarded accesses the GPU checks at run time (``guards``).

May import: ``kernel.ir``, ``kernel.frontend``'s IR nodes, and the CUDA driver for the error
words of guarded launches.
"""
