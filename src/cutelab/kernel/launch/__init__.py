"""The launch path: ``@cute.kernel``, ``@cute.jit``, ``cute.compile``, argument checks, bounds
proofs, the launch plan and the generated fast path (``api``), and CuTe DSL's compile options
(``options``).

May import: every other part of ``kernel``.
"""
