"""C values behind CuTe DSL's ``JitArgument`` protocol: a user type names the MLIR types of its
values (``__get_mlir_types__``) and gives C pointers to them (``__c_pointers__``); a jit function
receives the values read from there, in the types' C layout.

The types: a cutlass numeric type (an ``iN`` or ``fN``), a pointer (:class:`CPointerType`, 8 bytes),
or a literal struct of types (:class:`CStructType`, C's field alignment and padding). A struct's
value is a :class:`CAggregate` (its type and a tuple of field values: numbers, addresses as ints,
aggregates); ``cutlass._mlir``'s ``ir.Value`` and ``llvm.extractvalue`` (compat) read it.

>>> import ctypes
>>> from cutelab.numeric import Int32
>>> t = CStructType([CPointerType(), CStructType([Int32] * 3)])
>>> size_align(t)
(24, 8)
>>> class S(ctypes.Structure):
...     _fields_ = [("p", ctypes.c_void_p), ("s", ctypes.c_int32 * 3)]
>>> s = S(0x1000, (ctypes.c_int32 * 3)(2, 8, 4))
>>> read(t, ctypes.addressof(s)).fields
(4096, CAggregate((2, 8, 4)))
"""

from __future__ import annotations

import ctypes
from typing import Any, List, Tuple

import numpy as np


class CPointerType:
    """``llvm.PointerType.get(address_space)``: an 8-byte address."""

    def __init__(self, space: Any = 0) -> None:
        self.space = space

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, CPointerType) and other.space == self.space

    def __hash__(self) -> int:
        return hash(("ptr", str(self.space)))

    def __repr__(self) -> str:
        return "!llvm.ptr" if self.space in (0, None) else f"!llvm.ptr<{self.space}>"


class CStructType(dict):
    """``llvm.StructType.get_literal([types])``: a C struct of the types, in order. It is the dict
    ``{"struct": types}`` (what ``ir.Type.parse("!llvm.struct<(...)>")`` gives for inline_asm)."""

    def __init__(self, types: Any) -> None:
        super().__init__(struct=list(types))

    @property
    def body(self) -> List[Any]:
        return self["struct"]

    def __hash__(self) -> int:  # (types are compared by value, as the dict they are)
        return hash(("struct", tuple(self["struct"])))

    def __repr__(self) -> str:
        return "!llvm.struct<(" + ", ".join(str(t) for t in self["struct"]) + ")>"


class CAggregate:
    """A struct's value: its field values (numbers, addresses as ints, aggregates), in order."""

    __slots__ = ("type", "fields")

    def __init__(self, type_: Any, fields: Tuple[Any, ...]) -> None:
        self.type, self.fields = type_, tuple(fields)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, CAggregate) and other.fields == self.fields and other.type == self.type

    def __hash__(self) -> int:
        return hash(self.fields)

    def __repr__(self) -> str:
        return f"CAggregate({self.fields})"


def is_c_type(t: Any) -> bool:
    """A type the protocol can read: a cutlass numeric type, a pointer, or a struct of them."""
    from ...numeric import is_numeric_type

    if isinstance(t, CStructType):
        return all(is_c_type(x) for x in t.body)
    return isinstance(t, CPointerType) or is_numeric_type(t)


def size_align(t: Any) -> Tuple[int, int]:
    """The C size and alignment of t, in bytes."""
    if isinstance(t, CPointerType):
        return 8, 8
    if isinstance(t, CStructType):
        off, align = 0, 1
        for f in t.body:
            s, a = size_align(f)
            off = -(-off // a) * a + s
            align = max(align, a)
        return -(-off // align) * align, align
    n = max(1, t.width // 8)
    return n, n


def read(t: Any, address: int) -> Any:
    """The value of type t at address (a host address the caller vouches for, as CuTe DSL's call does)."""
    if isinstance(t, CPointerType):
        return ctypes.c_uint64.from_address(address).value
    if isinstance(t, CStructType):
        fields, off = [], 0
        for f in t.body:
            s, a = size_align(f)
            off = -(-off // a) * a
            fields.append(read(f, address + off))
            off += s
        return CAggregate(t, tuple(fields))
    from ...dtypes import to_compute

    raw = np.frombuffer((ctypes.c_char * max(1, t.width // 8)).from_address(address), dtype=t.storage, count=1)
    x = to_compute(raw, t)[0]
    return bool(x) if t.kind == "bool" else float(x) if t.is_float else int(x)


def runtime_value(t: Any, v: Any) -> Any:
    """v (as read) as the jit function sees a value of type t: a number as a runtime value of its type
    (printed ``?`` while tracing); an address or a CAggregate as it is."""
    from ...dynamic import DynBool, DynInt, dyn_scalar

    if not hasattr(t, "kind"):
        return v
    if t.kind == "bool":
        return DynBool(bool(v))
    if t.kind in ("int", "uint") and 8 <= t.width <= 64:
        return DynInt(int(t(int(v))), t, track=False)
    d = dyn_scalar(t, v) if t.kind == "float" else None
    return d if d is not None else v
