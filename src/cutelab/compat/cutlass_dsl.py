"""``cutlass.cutlass_dsl``: the DSL-internal module libraries import names from.

What it means in cutelab:
- ``dsl_user_op``, ``and_``/``or_``/``not_``, ``const_expr``, ``select_``, the numeric types: cutelab's;
- ``NumericMeta`` (``IntegerMeta``, ``FloatMeta``): the metaclass of the numeric types
  (``isinstance(cutlass.Float32, NumericMeta)``), cutelab.numeric's;
- ``T``: MLIR type builders (``T.i32()``, ``T.f32()``), answered with cutelab's element types;
- ``extract_mlir_values`` / ``new_from_mlir_values``: the protocol by which user types carry runtime
  values (``__extract_mlir_values__`` / ``__new_from_mlir_values__``, dataclasses, lists, tuples);
- ``target_version``: compares with the CUDA version cutelab targets (cutlass.CUDA_VERSION);
- ``JitCompiledFunction``: cute.compile's result class;
- ``if_generate``/``for_generate``/...: MLIR region builders, which raise (cutelab.mlir_only).

>>> T.i32() is Int32, isinstance(Float32, NumericMeta), target_version(min_version="12.0")
(True, True, True)
>>> extract_mlir_values([1, (2, 3)])
[1, 2, 3]
"""

from __future__ import annotations

import dataclasses
from typing import Any, List

from ..kernel.frontend.control import and_, const_expr, dsl_user_op, dynamic_expr, not_, or_  # noqa: F401
from ..kernel.launch.compiled import CompiledFunction as JitCompiledFunction  # noqa: F401
from ..kernel.launch.args import Constexpr  # noqa: F401
from ..mlir_only import for_generate, if_generate, while_generate, yield_out  # noqa: F401
from ..numeric import (  # noqa: F401
    BFloat16, Boolean, Float8E4M3FN, Float8E5M2, Float16, Float32, Float64, Int8, Int16, Int32, Int64, Numeric,
    TFloat32, Uint8, Uint16, Uint32, Uint64, Float4E2M1FN, Float6E2M3FN, Float6E3M2FN, Float8E8M0FNU, Float,
    FloatMeta, Int4, Int128, Integer, IntegerMeta, NumericMeta, Uint128,
)
from .dsl_names import CUDA_VERSION, Version, _as_t, select_  # noqa: F401
from ..kernel.frontend.control import max_ as max, min_ as min  # noqa: F401,A001  (cutlass.min/max)
from .where import refuse

__path__: list = []


class T:
    """MLIR type builders of the DSL (``T.i32()``, ``T.f16()``, ``T.vector(4, T.f32())``)."""

    i1 = staticmethod(lambda: Boolean)
    bool = staticmethod(lambda: Boolean)
    i8 = staticmethod(lambda: Int8)
    i16 = staticmethod(lambda: Int16)
    i32 = staticmethod(lambda: Int32)
    i64 = staticmethod(lambda: Int64)
    f16 = staticmethod(lambda: Float16)
    bf16 = staticmethod(lambda: BFloat16)
    f32 = staticmethod(lambda: Float32)
    f64 = staticmethod(lambda: Float64)
    tf32 = staticmethod(lambda: TFloat32)

    @staticmethod
    def vector(n: int, elem: Any) -> Any:
        return ("vector", int(n), elem)

    @staticmethod
    def ptr(*a: Any, **k: Any) -> Any:
        return refuse("cutlass.cutlass_dsl.T.ptr", "pointer types of MLIR's llvm dialect are not in cutelab")(*a, **k)


def target_version(exact_version: Any = None, min_version: Any = None) -> bool:
    """True when the CUDA version cutelab targets (cutlass.CUDA_VERSION) is exact_version / at least min_version."""
    if exact_version is not None and CUDA_VERSION != _as_t(exact_version):
        return False
    if min_version is not None and CUDA_VERSION < _as_t(min_version):
        return False
    return True


def _leaf(x: Any) -> bool:
    return not (isinstance(x, (list, tuple)) or dataclasses.is_dataclass(x) or hasattr(x, "__extract_mlir_values__"))


def extract_mlir_values(obj: Any) -> List[Any]:
    """The runtime values obj carries, flattened (its __extract_mlir_values__, or its fields/items)."""
    if hasattr(obj, "__extract_mlir_values__"):
        return list(obj.__extract_mlir_values__())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [v for f in dataclasses.fields(obj) for v in extract_mlir_values(getattr(obj, f.name))]
    if isinstance(obj, (list, tuple)):
        return [v for x in obj for v in extract_mlir_values(x)]
    if obj is None:
        return []
    return [obj]


def _count(obj: Any) -> int:
    return len(extract_mlir_values(obj))


def new_from_mlir_values(obj: Any, values: List[Any]) -> Any:
    """obj rebuilt around values (as many as extract_mlir_values(obj) gave), in the same order."""
    values = list(values)
    if hasattr(obj, "__new_from_mlir_values__"):
        return obj.__new_from_mlir_values__(values)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        kw, i = {}, 0
        for f in dataclasses.fields(obj):
            v = getattr(obj, f.name)
            n = _count(v)
            kw[f.name] = new_from_mlir_values(v, values[i:i + n])
            i += n
        return dataclasses.replace(obj, **kw)
    if isinstance(obj, (list, tuple)):
        out, i = [], 0
        for x in obj:
            n = _count(x)
            out.append(new_from_mlir_values(x, values[i:i + n]))
            i += n
        return type(obj)(out) if isinstance(obj, list) or type(obj) is tuple else type(obj)(*out)
    if obj is None:
        return None
    if len(values) != 1:
        raise ValueError(f"new_from_mlir_values: {type(obj).__name__} takes one value, got {len(values)}")
    return values[0]


def __getattr__(name: str) -> Any:
    """``BaseDSL``, ``CuTeDSL`` (its subclass), ``Arch`` and ``DSLCudaRuntimeError`` are base_dsl's (imported late: base_dsl imports this
    module); ``min``/``max`` are cutlass.min/max."""
    if name.startswith("__"):  # (inspect/doctest probe __wrapped__ and friends: no import for them)
        raise AttributeError(name)
    from . import base_dsl

    if name in ("BaseDSL", "Arch", "get_arch_enum", "DSLCudaRuntimeError"):
        return getattr(base_dsl, name)
    if name in ("min", "max"):  # cutlass.min/max (not module globals here: the builtins stay in this file)
        from ..kernel.frontend import control

        return getattr(control, name + "_")
    if name == "CuTeDSL":
        cls = type("CuTeDSL", (base_dsl.BaseDSL,), {"__module__": __name__})
        globals()["CuTeDSL"] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
