"""``cutlass._mlir.ir``: the names of MLIR's Python types. cutelab's kernel values are not MLIR
values, so ``isinstance(x, ir.Value)`` is False; making an MLIR object raises NotEmulatedError. The
types a ``JitArgument`` names (``IntegerType.get_signless(32)``, ``F32Type.get()``) are cutlass's
numeric types, and a Value is the struct value such an argument passes (kernel/frontend/c_abi.py).

>>> isinstance(1.0, Value), isinstance(None, Type)
(False, False)
>>> print(IntegerType.get_signless(32), F32Type.get())
Int32 Float32
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
            from ...kernel.frontend.c_abi import CStructType

            return CStructType([getattr(numeric, _SCALARS[x]) for x in items])
    raise NotEmulatedError(f"cutlass._mlir.ir.Type.parse({text!r})", "cutelab parses scalar types and "
                           "!llvm.struct<(...)> of them", where=user_line(3))


class Value(_MlirObject):
    """MLIR's Value. Its instances here are the values a jit function receives for a ``JitArgument``
    of struct type (``ir.Value(v)`` of one, as a user's subclass makes it, is the same value); a
    kernel's numbers are not Values."""

    def __init__(self, v: Any) -> None:
        from ...kernel.frontend.c_abi import CAggregate

        agg = v._aggregate if isinstance(v, Value) else v
        if not isinstance(agg, CAggregate):
            raise NotEmulatedError(f"cutlass._mlir.ir.Value({v!r})", "cutelab makes Values only of the struct "
                                   "values a JitArgument passes (its __get_mlir_types__' llvm.StructType)",
                                   where=user_line(2))
        self._aggregate = agg

    @property
    def type(self) -> Any:
        return self._aggregate.type

    def __repr__(self) -> str:
        return f"Value({self._aggregate.type}: {self._aggregate.fields})"


def _integer_type(width: int, signed: Any = None) -> Any:
    from ... import numeric

    names = {1: "Boolean", 8: "Int8", 16: "Int16", 32: "Int32", 64: "Int64"} if signed is not False else \
        {1: "Boolean", 8: "Uint8", 16: "Uint16", 32: "Uint32", 64: "Uint64"}
    if width not in names:
        raise NotEmulatedError(f"cutlass._mlir.ir.IntegerType.get({width})", "cutelab has integer types of 1, 8, 16, "
                               "32 and 64 bits", where=user_line(3))
    return getattr(numeric, names[width])


def _float_type(name: str) -> Any:
    from ... import numeric

    return staticmethod(lambda context=None: getattr(numeric, name))


def _vector_type_get(shape: Any, element_type: Any, *args: Any, **kwargs: Any) -> Any:
    """``ir.VectorType.get([n], elem)``: a 1-D vector type, as ``T.vector(n, elem)`` is (``("vector", n, elem)``)."""
    from ... import numeric

    dims = list(shape)
    elem = element_type
    if isinstance(elem, str):  # a scalar type's MLIR name ("i32")
        elem = getattr(numeric, _SCALARS.get(elem, ""), None)
    if len(dims) != 1 or not isinstance(elem, type) or not hasattr(elem, "width"):
        raise NotEmulatedError(f"cutlass._mlir.ir.VectorType.get({shape!r}, {element_type!r})", "cutelab's vector "
                               "types are 1-D vectors of a scalar type", where=user_line(2))
    return ("vector", int(dims[0]), elem)


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
# MLIR's types are cutlass's numeric types here (i32 is Int32: signless integers read as signed)
IntegerType.get_signless = staticmethod(lambda width, context=None: _integer_type(width))  # type: ignore[attr-defined]
IntegerType.get_signed = staticmethod(lambda width, context=None: _integer_type(width, True))  # type: ignore[attr-defined]
IntegerType.get_unsigned = staticmethod(lambda width, context=None: _integer_type(width, False))  # type: ignore[attr-defined]
IndexType = _cls("IndexType")
F16Type = _cls("F16Type")
F16Type.get = _float_type("Float16")  # type: ignore[attr-defined]
BF16Type = _cls("BF16Type")
BF16Type.get = _float_type("BFloat16")  # type: ignore[attr-defined]
F32Type = _cls("F32Type")
F32Type.get = _float_type("Float32")  # type: ignore[attr-defined]
F64Type = _cls("F64Type")
F64Type.get = _float_type("Float64")  # type: ignore[attr-defined]
VectorType = _cls("VectorType")
VectorType.get = staticmethod(_vector_type_get)  # type: ignore[attr-defined]
IntegerAttr = _cls("IntegerAttr")
FloatAttr = _cls("FloatAttr")
BoolAttr = _cls("BoolAttr")
StringAttr = _cls("StringAttr")
ArrayAttr = _cls("ArrayAttr")
DenseElementsAttr = _cls("DenseElementsAttr")
UnitAttr = _cls("UnitAttr")

__getattr__ = module_getattr(__name__.replace("cutelab.compat.mlir", "cutlass._mlir"))
