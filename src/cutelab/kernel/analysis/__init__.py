"""Facts about a traced kernel: value ranges of its integer registers (``ranges``, over the
abstract values of ``values``), the proofs that accesses stay in bounds (``prove``, ``bounds``),
the guarded accesses the GPU checks at run time (``guards``) and the possible bits of index
expressions (``bits``).

May import: ``kernel.ir``, ``kernel.frontend``'s IR nodes. Never a back end: the error words of
guarded launches are ``kernel.cuda.errorword``'s.
"""
