"""``cutlass._mlir.ir``: the names of MLIR's Python types. cutelab's kernel values are not MLIR
values, so ``isinstance(x, ir.Value)`` is False; making an MLIR object raises NotEmulatedError.

>>> isinstance(1.0, Value), isinstance(None, Type)
(False, False)
>>> from cutelab.numeric import Int32
>>> Type.parse("!llvm.struct<(i32, i32)>") == {"struct": [Int32, Int32]}
True
"""

from __future__ import annotations

from typing import Any

from ..where import NotEmulatedError, user_line
from .refused import module_getattr


class _Meta(type):
    def __getattr__(cls, name: str) -> Any:  # IntegerType.get_signless, F32Type.get, ...: raise when called
        if name.startswith("_"):
            raise AttributeError(name)
        from .refused import Refused

        return Refused(f"cutlass._mlir.ir.{cls.__name__}.{name}")


class _MlirObject(metaclass=_Meta):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotEmulatedError(f"cutlass._mlir.ir.{type(self).__name__}", "cutelab has no MLIR objects",
                               where=user_line(2))

    @classmethod
    def get(cls, *args: Any, **kwargs: Any) -> Any:
        raise NotEmulatedError(f"cutlass._mlir.ir.{cls.__name__}.get", "cutelab has no MLIR objects",
                               where=user_line(2))


def _cls(name: str) -> type:
    return type(name, (_MlirObject,), {"__module__": __name__, "__doc__": f"MLIR's {name} (no cutelab instances)."})


_SCALARS = {"i1": "Boolean", "i8": "Int8", "i16": "Int16", "i32": "Int32", "i64": "Int64", "f16": "Float16",
            "bf16": "BFloat16", "f32": "Float32", "f64": "Float64"}


def _parse_type(text: str) -> Any:
    """``ir.Type.parse``: a scalar type (``i32``, ``f32``, ...) as its cutlass type, and an
    ``!llvm.struct<(i32, f32, ...)>`` (the results of a multi-output inline_asm) as
    ``{"struct": [types]}``; anything else raises NotEmulatedError."""
    import re

    from ... import numeric

    t = text.strip()
    if t in _SCALARS:
        return getattr(numeric, _SCALARS[t])
    m = re.fullmatch(r"!llvm\.struct<\((.*)\)>", t)
    if m is not None:
        items = [x.strip() for x in m.group(1).split(",") if x.strip()]
        if all(x in _SCALARS for x in items):
            return {"struct": [getattr(numeric, _SCALARS[x]) for x in items]}
    raise NotEmulatedError(f"cutlass._mlir.ir.Type.parse({text!r})", "cutelab parses scalar types and "
                           "!llvm.struct<(...)> of them", where=user_line(3))


Value = _cls("Value")
OpResult = _cls("OpResult")
BlockArgument = _cls("BlockArgument")
Type = _cls("Type")
Type.parse = staticmethod(_parse_type)  # type: ignore[attr-defined]
Attribute = _cls("Attribute")
Context = _cls("Context")
Location = _cls("Location")
InsertionPoint = _cls("InsertionPoint")
Operation = _cls("Operation")
OpView = _cls("OpView")
Module = _cls("Module")
Block = _cls("Block")
Region = _cls("Region")
IntegerType = _cls("IntegerType")
IndexType = _cls("IndexType")
F16Type = _cls("F16Type")
BF16Type = _cls("BF16Type")
F32Type = _cls("F32Type")
F64Type = _cls("F64Type")
VectorType = _cls("VectorType")
IntegerAttr = _cls("IntegerAttr")
FloatAttr = _cls("FloatAttr")
BoolAttr = _cls("BoolAttr")
StringAttr = _cls("StringAttr")
ArrayAttr = _cls("ArrayAttr")
DenseElementsAttr = _cls("DenseElementsAttr")
UnitAttr = _cls("UnitAttr")

__getattr__ = module_getattr(__name__.replace("cutelab.compat.mlir", "cutlass._mlir"))
