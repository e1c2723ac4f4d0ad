"""``cutlass._mlir_helpers.math``: element-wise math of a kernel's scalar values (``rcp``, ``exp2``, ``fma``, ...)
as ``cute.math`` computes it (kernel/instr/mathops.py; dsl_names.MATH_EXTRAS).

The options that choose an approximation (``fastmath``, ``approx``, ``ftz``) are taken; cutelab computes the
precise value (``rcp(x, approx=True)`` is ``cute.arch.rcp_approx``, as PTX's ``rcp.approx`` computes it).
An explicit IEEE ``rounding=`` mode is refused (cutelab rounds to nearest). A name cute.math lacks imports
and raises NotEmulatedError naming itself when used.
"""

from __future__ import annotations

from typing import Any, Callable

from ..mlir.refused import module_getattr
from ..where import NotEmulatedError, user_line

_NAMES = ("sin", "cos", "exp", "exp2", "log", "log2", "log10", "tanh", "rsqrt", "sqrt", "erf", "tan", "atan",
          "abs", "ceil", "floor", "min", "max", "fma", "add", "sub", "mul")


def _cute_math(name: str) -> Callable[..., Any]:
    def op(*args: Any, fastmath: bool = False, approx: bool = False, rounding: Any = None, ftz: bool = False,
           loc: Any = None, ip: Any = None, **kwargs: Any) -> Any:
        from ..namespaces import math

        if rounding is not None:
            raise NotEmulatedError(f"cutlass._mlir_helpers.math.{name}(rounding={rounding!r})",
                                   "cutelab's kernel math rounds to nearest only", where=user_line(2))
        fn = getattr(math, name)
        if name in ("abs", "min", "max", "fma", "add", "sub", "mul") or not fastmath:
            return fn(*args, **kwargs)
        return fn(*args, fastmath=True, **kwargs)

    op.__name__ = name
    op.__doc__ = f"_mlir_helpers.math.{name}: cute.math.{name} of the value."
    return op


for _n in _NAMES:
    globals()[_n] = _cute_math(_n)


def rcp(x: Any, fastmath: bool = False, approx: bool = False, rounding: Any = None, ftz: bool = False, *,
        loc: Any = None, ip: Any = None) -> Any:
    """1/x: ``cute.arch.rcp_approx`` with ``approx=True`` (PTX rcp.approx), else the division."""
    if rounding is not None:
        raise NotEmulatedError(f"cutlass._mlir_helpers.math.rcp(rounding={rounding!r})",
                               "cutelab's kernel math rounds to nearest only", where=user_line(2))
    if approx:
        from ...kernel.arch import rcp_approx

        return rcp_approx(x)
    return 1.0 / x


__getattr__ = module_getattr("cutlass._mlir_helpers.math")
