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
>>> extract_mlir_values([Int32(1), (Int32(2), 3)])  # a Python int is a compile-time constant: no value
[1, 2]
"""

from __future__ import annotations

from typing import Any

from ..kernel.frontend.control import and_, const_expr, dsl_user_op, dynamic_expr, not_, or_  # noqa: F401
from ..kernel.launch.compiled import CompiledFunction as JitCompiledFunction  # noqa: F401
from ..kernel.launch.args import Constexpr  # noqa: F401
from ..mlir_only import for_generate, if_generate, while_generate, yield_out  # noqa: F401
from ..numeric import (  # noqa: F401
    BFloat16, Boolean, Float8E4M3FN, Float8E5M2, Float16, Float32, Float64, Int8, Int16, Int32, Int64, Numeric,
    TFloat32, Uint8, Uint16, Uint32, Uint64, Float4E2M1FN, Float6E2M3FN, Float6E3M2FN, Float8E8M0FNU, Float8E4M3, Float,
    FloatMeta, Int4, Int128, Integer, IntegerMeta, NumericMeta, Uint128,
)
from .dsl_names import CUDA_VERSION, Version, _as_t, select_  # noqa: F401
from ..kernel.frontend.control import max_ as max, min_ as min  # noqa: F401,A001  (cutlass.min/max)
from .base_dsl import (  # noqa: F401 - CuTe DSL's cutlass_dsl takes these from its base_dsl
    Arch, BaseDSL, DSLCudaRuntimeError, T, extract_mlir_values, get_arch_enum, new_from_mlir_values,
)

__path__: list = []


def target_version(exact_version: Any = None, *, min_version: Any = None, max_version: Any = None) -> bool:
    """True when the CUDA version cutelab targets (cutlass.CUDA_VERSION) is exact_version / within
    [min_version, max_version] (``cutlass.target_version``)."""
    if exact_version is None and min_version is None and max_version is None:
        raise ValueError("cutlass.target_version: give exact_version, or min_version and/or max_version")
    if exact_version is not None and (min_version is not None or max_version is not None):
        raise ValueError("cutlass.target_version: give exact_version or a range (min_version/max_version), not both")
    if exact_version is not None and CUDA_VERSION != _as_t(exact_version):
        return False
    if min_version is not None and CUDA_VERSION < _as_t(min_version):
        return False
    if max_version is not None and CUDA_VERSION > _as_t(max_version):
        return False
    return True


def __getattr__(name: str) -> Any:
    """``CuTeDSL``: base_dsl's ``BaseDSL`` under CuTe DSL's name (made on first use)."""
    if name == "CuTeDSL":
        cls = type("CuTeDSL", (BaseDSL,), {"__module__": __name__})
        globals()["CuTeDSL"] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
