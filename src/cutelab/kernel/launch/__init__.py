"""The launch path: ``@cute.kernel``, ``@cute.jit``, ``cute.compile``, argument checks, bounds
proofs, the launch plan and the generated fast path (``api``), CuTe DSL's compile options
(``options``) and the checks of a launch's cluster shape (``cluster``).

May import: every other part of ``kernel``.
"""
