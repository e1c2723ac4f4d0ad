"""``cutlass._mlir_helpers``: CuTe DSL's helpers over its MLIR dialects, as far as cutelab gives them meaning.

``math`` is the element-wise math of kernel values (quack's activations call ``math.rcp``), computed as
``cute.math`` computes it; ``arith`` and ``vector`` work on MLIR values, which cutelab does not have: their
names import and raise NotEmulatedError naming themselves when used. ``dsl_user_op`` is cutlass's.

May import: ``cutelab.compat`` and the kernel (``cutelab.kernel``: ``cute.math`` on traced values).
"""

from __future__ import annotations

from . import arith, math, vector  # noqa: F401


def __getattr__(name: str):
    if name == "dsl_user_op":
        from ..cutlass_dsl import dsl_user_op

        return dsl_user_op
    from ..mlir.refused import module_getattr

    return module_getattr("cutlass._mlir_helpers")(name)
