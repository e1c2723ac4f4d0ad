"""``cute.math``: element-wise math of tensor values, inside kernels (traced) and on the host
(numpy); and ``cute.ReductionOp`` for ``TensorSSA.reduce``.

>>> import numpy as np, cutelab as cute
>>> x = cute.make_tensor(np.array([1.0, 4.0], np.float32), cute.make_layout(2)).load()
>>> cute.math.sqrt(x).numpy().tolist(), x.reduce(cute.ReductionOp.ADD)
([1.0, 2.0], 5.0)
"""

from __future__ import annotations

import enum
import math as _math
from typing import Any

import numpy as np

from ...errors import TraceError
from ..ir.nodes import FAST_MATH

__all__ = ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "tanh", "absf", "ReductionOp"]


class ReductionOp(enum.Enum):
    ADD = "add"
    MUL = "mul"
    MAX = "max"
    MIN = "min"


_NP = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
       "rsqrt": lambda v: 1 / np.sqrt(v), "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "abs": np.abs,
       "erf": lambda v: np.asarray(np.frompyfunc(_math.erf, 1, 1)(v), dtype=np.float64), "ceil": np.ceil, "floor": np.floor,
       "log10": np.log10, "tan": np.tan, "atan": np.arctan}


def _apply(fn: str, x: Any, fastmath: bool = False) -> Any:
    from ...tensor import TensorSSA, _from_real, _to_real
    from ..frontend.trace import TraceValue

    if isinstance(x, TraceValue):
        if fn == "abs":
            return abs(x)
        return x.math(fn + "_fast" if fastmath and fn + "_fast" in FAST_MATH else fn)
    if isinstance(x, TensorSSA):
        if not x.dtype.is_float:
            raise TraceError(f"cute.math.{fn} needs floating-point elements, got {x.dtype}")
        with np.errstate(all="ignore"):
            v = _NP[fn](_to_real(x.values, x.dtype).astype(np.float64 if x.dtype.width == 64 else np.float32))
        return TensorSSA(_from_real(v, x.dtype), x.shape, x.dtype)
    if isinstance(x, (int, float)):
        return float(_NP[fn](np.float64(x)))
    raise TraceError(f"cute.math.{fn}: expected a tensor value (TensorSSA), got {type(x).__name__}")


def exp(x: Any, fastmath: bool = False) -> Any:
    return _apply("exp", x, fastmath)


def exp2(x: Any, fastmath: bool = False) -> Any:
    return _apply("exp2", x, fastmath)


def log(x: Any, fastmath: bool = False) -> Any:
    return _apply("log", x, fastmath)


def log2(x: Any, fastmath: bool = False) -> Any:
    return _apply("log2", x, fastmath)


def sqrt(x: Any, fastmath: bool = False) -> Any:
    return _apply("sqrt", x, fastmath)


def rsqrt(x: Any, fastmath: bool = False) -> Any:
    return _apply("rsqrt", x, fastmath)


def sin(x: Any, fastmath: bool = False) -> Any:
    return _apply("sin", x, fastmath)


def cos(x: Any, fastmath: bool = False) -> Any:
    return _apply("cos", x, fastmath)


def tanh(x: Any, fastmath: bool = False) -> Any:
    return _apply("tanh", x, fastmath)


def absf(x: Any) -> Any:
    return _apply("abs", x)
