"""``cutlass._mlir.dialects.math``: the element-wise float operations of MLIR's math dialect on a kernel's
scalar values (``_math.log(sum)`` in CUTLASS's Hopper FMHA), as cute.math computes them (kernel/instr/mathops.py:
precise, not the fast approximations); the dialect's other operations import and raise NotEmulatedError naming
themselves when used.

>>> log(1.0), exp2(3.0)
(0.0, 8.0)
"""

from __future__ import annotations

from typing import Any

from ..refused import module_getattr

_UNARY = ("exp", "exp2", "log", "log2", "log10", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "atan", "erf",
          "floor", "ceil")


def _unary(name: str) -> Any:
    def op(operand: Any, *, fastmath: Any = None, loc: Any = None, ip: Any = None) -> Any:
        from ....kernel.instr.mathops import _apply

        return _apply(name, operand)

    op.__name__ = name
    op.__doc__ = f"math.{name} of MLIR's math dialect: cute.math.{name} of the value (precise)."
    return op


for _n in _UNARY:
    globals()[_n] = _unary(_n)
absf = _unary("abs")

__getattr__ = module_getattr("cutlass._mlir.dialects.math")
