"""Element types, named as in cutlass (Float32, BFloat16, Int32, ...).

As in CuTe DSL, an element type is a class: ``Float32`` is a class whose metaclass is
:class:`NumericMeta` (:class:`FloatMeta` for the floats, :class:`IntegerMeta` for the integers),
``Float32(1.5)`` is an instance of it, and the types subclass ``Numeric`` through ``Integer`` and
``Float`` (a user type may subclass them: ``class C(Float32, metaclass=FloatMeta, width=64)``).
A scalar is also a Python number: Integer's types derive from ``int`` (through :class:`IntValue`),
Float's from ``float`` (through :class:`FloatValue`).

Each type knows its width in bits, its short name as CuTe DSL prints it (``bf16``, ``i32``; the
type's ``repr``, while ``str`` is the class name ``BFloat16``), its numpy storage dtype (bf16 is
stored as raw 16-bit words, bit for bit, since numpy has no bfloat16) and the torch dtype name.

numpy is imported only when a storage dtype is first asked for (``Float32.storage``,
``Float32.numpy_dtype``) or a scalar is rounded: the types themselves, and the layout algebra that
names them, work without it.

>>> isinstance(Float32(1.5), Float32), isinstance(Float32, NumericMeta), issubclass(Int8, Integer)
(True, True, True)
>>> print(Float32, repr(Float32), Float32.width, Int32.signed, Uint8.max, Float32.zero)
Float32 f32 32 True 255 0.0
"""

from __future__ import annotations

import struct
import sys
from typing import TYPE_CHECKING, Any

from .tracing import SymbolicIndex, TracedValue
from .tracing import hooks as _hooks

if TYPE_CHECKING:
    import numpy as np


def _np() -> Any:
    import numpy

    return numpy


def _np_int_types() -> tuple:
    """(int,) and numpy's integer type once numpy is imported (no numpy value can exist before)."""
    npm = sys.modules.get("numpy")
    return (int, npm.integer) if npm is not None else (int,)


def _np_real_types() -> tuple:
    npm = sys.modules.get("numpy")
    return (int, float, npm.integer, npm.floating) if npm is not None else (int, float)

__all__ = [
    "Numeric", "Float64", "Float32", "Float16", "BFloat16", "Int8", "Int16", "Int32", "Int64",
    "Uint8", "Uint16", "Uint32", "Uint64", "Boolean", "numeric_from_numpy", "numeric_from_torch",
    "NUMERICS", "TFloat32", "Float8E4M3FN", "Float8E5M2", "IntValue", "FloatValue", "Int4", "Int128",
    "Uint128", "NumericMeta", "IntegerMeta", "FloatMeta", "Integer", "Float", "Float8E8M0FNU", "Float8E4M3",
    "Float4E2M1FN", "Float6E2M3FN", "Float6E3M2FN", "Float4E2M1FNx2", "Float6E3M2FNx4", "Float6E2M3FNx4",
    "is_numeric_type", "float_promotion", "python_operand_type", "RuntimeTypeMeta", "runtime_class", "dsl_class",
]

# numpy's scalar type of a type, by its name (CuTe DSL's Numeric.numpy_dtype; None for the others)
_NP_SCALAR = {"f64": "float64", "f32": "float32", "f16": "float16", "i8": "int8", "i16": "int16", "i32": "int32",
              "i64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64", "i1": "bool_"}
# storage of a user type of its own width (numpy's dtype holding its bits)
_STORAGE_OF = {("float", 16): "float16", ("float", 32): "float32", ("float", 64): "float64"}


class NumericMeta(type):
    """The class of the element types (``isinstance(Float32, NumericMeta)``).

    A type's class attributes: ``name`` (the MLIR name CuTe DSL prints: ``f32``, ``bf16``),
    ``width`` (bits), ``kind`` ("float", "int", "uint" or "bool"), ``torch_name``, ``cuda`` (the
    CUDA C++ type). Keyword arguments of a class statement, as CuTe DSL's: ``width``,
    ``mlir_type``, ``is_abstract``, ``signed``, ``np_dtype_name``; and cutelab's own ``mlir_name``,
    ``kind``, ``storage``, ``torch_name``, ``cuda``. A subclass that names none of them is its base's
    type under another class name; one with a width of its own (quack's Complex64, 64-bit) takes
    the representation of its ``mlir_type`` where cutelab knows it (``T.f64`` is Float64), else
    its own name and the storage of its kind and width.
    """

    def __new__(mcs, cls_name: str, bases: tuple, attrs: dict, width: Any = None, np_dtype_name: Any = None,
                mlir_type: Any = None, is_abstract: bool = False, signed: Any = None, mlir_name: Any = None,
                kind: Any = None, storage: Any = None, torch_name: Any = None, cuda: Any = None,
                **kwargs: Any) -> Any:
        cls = super().__new__(mcs, cls_name, bases, attrs, **kwargs)
        cls._is_abstract = bool(is_abstract)
        cls._custom_init = ("__init__" in attrs or "__new__" in attrs or
                            any(getattr(b, "_custom_init", False) for b in bases))
        if kind is not None:
            cls.kind = kind
        if signed is not None and getattr(cls, "kind", None) in ("int", "uint"):
            cls.kind = "int" if signed else "uint"
        base_width = getattr(cls, "width", None)
        if mlir_name is None and width is not None and width != base_width and not is_abstract:
            like = _known_type(mlir_type)
            if like is not None and like.width == width:
                mlir_name, storage, torch_name, cuda = like.name, like._storage_name, like.torch_name, like.cuda
            else:
                mlir_name = cls_name
                storage = storage or _STORAGE_OF.get((getattr(cls, "kind", None), width), "object")
                torch_name, cuda = torch_name or "", cuda or ""
        for attr, v in (("name", mlir_name), ("width", width), ("_storage_name", storage), ("torch_name", torch_name),
                        ("cuda", cuda)):
            if v is not None:
                setattr(cls, attr, v)
        cls._storage = None  # the numpy dtype, made on first use (each type its own)
        if np_dtype_name is not None:
            cls._np_dtype_name = np_dtype_name
        elif mlir_name is not None:
            cls._np_dtype_name = _NP_SCALAR.get(mlir_name)
        if mlir_type is not None:
            cls._mlir_type = staticmethod(mlir_type)
        return cls

    def __init__(cls, cls_name: str, bases: tuple, attrs: dict, **kwargs: Any) -> None:
        super().__init__(cls_name, bases, attrs)

    # --- what the type is ---------------------------------------------------------------------
    @property
    def is_abstract(cls) -> bool:
        """Numeric, Integer and Float: no values of their own (CuTe DSL's abstract types)."""
        return cls.__dict__.get("_is_abstract", False)

    @property
    def storage(cls) -> "np.dtype":
        """The numpy dtype holding the bits (numpy is imported on first use)."""
        st = cls.__dict__.get("_storage")
        if st is None:
            cls._need_concrete("storage")
            st = _np().dtype(cls._storage_name)
            type.__setattr__(cls, "_storage", st)
        return st

    @property
    def numpy_dtype(cls) -> Any:
        """numpy's scalar type of this type (``np.float32`` for Float32), or None where numpy has
        none (BFloat16, the 8-bit floats, TFloat32), as CuTe DSL's ``Numeric.numpy_dtype``."""
        name = getattr(cls, "_np_dtype_name", None)
        return None if name is None else getattr(_np(), name, None)

    @property
    def bytes(cls) -> int:
        """Bytes of one element, at least 1 (CuTe DSL's: a 4-bit type is 1)."""
        return max(1, (cls.width + 7) // 8)

    def n_bytes(cls, n_elements: int) -> int:
        return n_elements * cls.bytes

    @property
    def is_float(cls) -> bool:
        return getattr(cls, "kind", None) == "float"

    @property
    def is_integer(cls) -> bool:
        return getattr(cls, "kind", None) in ("int", "uint", "bool")

    @property
    def is_fp8(cls) -> bool:
        """An 8-bit float that cutelab converts (Float8E4M3FN, Float8E5M2; cutelab/fp8.py)."""
        return getattr(cls, "name", None) in _FP8_NAMES

    @property
    def is_half(cls) -> bool:
        """A 16-bit float (Float16, BFloat16): kept as 16-bit words, computed as float32."""
        return getattr(cls, "name", None) in ("f16", "bf16")

    @property
    def is_bool(cls) -> bool:
        return getattr(cls, "kind", None) == "bool"

    @property
    def signed(cls) -> bool:
        return getattr(cls, "kind", None) in ("int", "float")

    @property
    def inf(cls) -> float:
        """A float type's infinity, as CuTe DSL's ``Float32.inf`` (a Python float)."""
        cls._need_float("inf")
        return float("inf")

    @property
    def nan(cls) -> float:
        cls._need_float("nan")
        return float("nan")

    @property
    def zero(cls) -> Any:
        return 0.0 if cls.is_float else 0

    @property
    def min(cls) -> int:
        """An integer type's smallest value (``Int8.min`` is -128)."""
        cls._need_integer("min")
        return -(1 << (cls.width - 1)) if cls.kind == "int" else 0

    @property
    def max(cls) -> int:
        cls._need_integer("max")
        if cls.kind == "bool":
            return 1
        return (1 << (cls.width - 1)) - 1 if cls.kind == "int" else (1 << cls.width) - 1

    @property
    def exponent_width(cls) -> int:
        """Exponent bits of a float type named FloatNEeMm (Float8E4M3FN: 4), as CuTe DSL's."""
        return cls._float_fields("exponent_width")[0]

    @property
    def mantissa_width(cls) -> int:
        return cls._float_fields("mantissa_width")[1]

    @property
    def mlir_type(cls) -> Any:
        """The type's MLIR type: cutelab has no MLIR; the compat layer's ``T`` builders answer
        with the element types themselves, so this is the type given as ``mlir_type=``, else the type."""
        f = getattr(cls, "_mlir_type", None)
        return f() if f is not None else cls

    def is_same_kind(cls, other: Any) -> bool:
        """True when both are floats or both integers (CuTe DSL's is_same_kind)."""
        return cls.is_float == other.is_float

    def isinstance(cls, value: Any) -> bool:
        """CuTe DSL's ``Int32.isinstance(v)``: v is a value of this type, or a Python number of its kind."""
        if isinstance(value, (IntValue, FloatValue)):
            return value.dtype is cls
        if isinstance(value, bool) or isinstance(value, int):
            return cls.is_integer
        if isinstance(value, float):
            return cls.is_float
        return False

    @staticmethod
    def from_python(value: Any) -> Any:
        """The type CuTe DSL gives a Python value: Boolean for a bool, Int32 for an int, Float32 for a float."""
        if isinstance(value, bool):
            return Boolean
        if isinstance(value, int):
            return Int32
        if isinstance(value, float):
            return Float32
        raise TypeError(f"NumericMeta.from_python({value!r}): no element type for a {type(value).__name__}")

    def recast_width(cls, width: int) -> Any:
        """The type of the same kind with another width (``Int32.recast_width(16)`` is Int16)."""
        table = ({16: Float16, 32: Float32, 64: Float64} if cls.is_float else
                 {8: Int8, 16: Int16, 32: Int32, 64: Int64, 128: Int128})
        if width not in table:
            raise TypeError(f"{cls}.recast_width({width}): no {'float' if cls.is_float else 'integer'} type "
                            f"of width {width} (widths: {sorted(table)})")
        return table[width]

    def _need_float(cls, what: str) -> None:
        if not cls.is_float:
            raise AttributeError(f"{cls.__name__}.{what}: only float types have {what}")

    def _need_integer(cls, what: str) -> None:
        if not cls.is_integer or cls.is_abstract:
            raise AttributeError(f"{cls.__name__}.{what}: only integer types have {what}")

    def _need_concrete(cls, what: str) -> None:
        if cls.is_abstract:
            raise AttributeError(f"{cls.__name__}.{what}: {cls.__name__} is an abstract type (use Int32, Float32, ...)")

    def _float_fields(cls, what: str) -> tuple:
        import re

        m = re.match(r"Float\d+E(\d+)M(\d+)", cls.__name__) if cls.is_float else None
        if m is None:
            raise AttributeError(f"{cls.__name__}.{what}: only float types named FloatNEeMm (Float8E4M3FN, ...) have it")
        return int(m.group(1)), int(m.group(2))

    # --- printing: repr is the MLIR name CuTe DSL prints in types (f32), str the class name ---
    def __repr__(cls) -> str:
        return getattr(cls, "name", cls.__name__) if not cls.is_abstract else cls.__name__

    def __str__(cls) -> str:
        return cls.__name__

    # --- values ---------------------------------------------------------------------------------
    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        """A scalar of this type, as CuTe DSL makes one: integers wrap around to the bit width
        (``Int8(300)`` is 44), floats round to the type (``Float32(0.1)`` is the f32 nearest
        0.1). The result is an instance of the type and a Python int or float (usable wherever one is).

        >>> import numpy as np
        >>> Int8(300), Int32(42).to(Float32), Float32(0.1).value == float(np.float32(0.1))
        (44, 42.0, True)
        """
        if not kwargs and len(args) == 1:  # a plain Python number (quack's Int32(ignore_index) at every call):
            v = args[0]  # none of the conversions below applies
            tv = type(v)
            if ((tv is int or tv is float) and not cls._custom_init and not cls.__dict__.get("_is_abstract", False)
                    and not _hooks.host_tracing()):
                kind = cls.kind
                if kind == "float":
                    return FloatValue(cls, v)
                if tv is int and kind != "bool":  # IntValue(cls, v), without its conversions
                    obj = int.__new__(cls, _wrap(cls, v))
                    obj.dtype = cls
                    return obj
                return IntValue(cls, v)
        if cls._custom_init:
            raise TypeError(f"{cls.__name__}(...): {cls.__name__} defines its own __init__ or __new__; a value of a "
                            f"cutelab numeric type is a Python number made by the type, so a user type's own "
                            f"constructor is not supported (the class itself can be used: its width, name, ...)")
        if len(args) != 1 or set(kwargs) - {"loc", "ip"}:  # loc=, ip=: MLIR's source location, nothing here
            raise TypeError(f"{cls.__name__}(...): expected one value (and optionally loc=, ip=), got "
                            f"{len(args)} positional argument(s) and {sorted(kwargs) or 'no'} keywords")
        v = args[0]
        if cls.is_abstract:
            raise TypeError(f"{cls.__name__}({v!r}): {cls.__name__} is an abstract type: make a value of a "
                            f"concrete one (Int32, Float32, ...)")
        if isinstance(v, (IntValue, FloatValue)):
            return v.to(cls)
        if isinstance(v, (TracedValue, SymbolicIndex)):  # a kernel's value or index: converted in the kernel
            return v.to(cls)
        if getattr(type(v), "_cute_numeric_value", False):  # address.PointerInt (Int64(ptr.toint()))
            return v.to(cls)
        if _hooks.host_tracing():  # inside a @cute.jit trace CuTe DSL makes a runtime value: prints '?'
            d = _hooks.host_scalar(cls, v)  # dynamic.dyn_scalar (dynamic.py imports this module)
            if d is not None:
                return d
        if cls.kind == "float":
            return FloatValue(cls, v)
        return IntValue(cls, v)

    def __instancecheck__(cls, inst: Any) -> bool:
        """A runtime value is an instance of its type, as CuTe DSL's Int32 of an MLIR value is: a
        value of cutelab.dynamic (a DynInt, the scalars a jit trace makes, a DynBool: numbers that
        carry their type), and in a kernel a scalar value (the tracer's TraceValue of shape ()) or
        an index (Int32, Int64 past 32 bits). ``type()`` of those is still cutelab's own class."""
        if type.__instancecheck__(cls, inst):
            return True
        if isinstance(inst, (int, float)):
            d = getattr(inst, "dtype", None)
        elif isinstance(inst, TracedValue) and getattr(inst, "shape", None) == ():  # a kernel's scalar value
            d = inst.dtype
        elif getattr(type(inst), "_cute_numeric_value", False):  # address.PointerInt: a pointer's address
            d = inst.dtype
        elif isinstance(inst, SymbolicIndex):  # a kernel's index (thread_idx math): CuTe DSL's Int32
            d = Int32 if -(1 << 31) <= getattr(inst, "lo", 0) and getattr(inst, "hi", 0) < (1 << 31) else Int64
        else:
            return False
        return isinstance(d, NumericMeta) and type.__subclasscheck__(cls, d)

    def __subclasscheck__(cls, sub: Any) -> bool:
        """``issubclass(type(v), Float32)`` of a runtime value's class (:class:`RuntimeTypeMeta`) is
        that of the DSL class it stands for."""
        if isinstance(sub, RuntimeTypeMeta):
            sub = sub.__dict__["_dsl_class_"]
        return type.__subclasscheck__(cls, sub)


class RuntimeTypeMeta(type):
    """The class of a runtime value's class: ``type(v)`` of a kernel's Float32 scalar stands for Float32.

    In CuTe DSL a runtime scalar is an instance of its numeric class (``type(Float32(x))`` is
    Float32 whatever x is), and libraries index tables by it (quack:
    ``{Float32: "f32", Int32: "s32"}[type(val)]``) or convert with it (``type(val)(other)``). A cutelab
    runtime value keeps its own class (the tracer's value, with its operators), so that class is
    made by :func:`runtime_class` as a subclass of the tracer's class whose metaclass is this one:
    it compares equal to its DSL class and hashes as it does (dict and set lookups find it), is a
    subclass of it for ``issubclass``, calls it to convert (``type(v)(x)`` is ``Float32(x)``), answers
    its class attributes (``type(v).width``, ``.name``, ``.is_float``) and prints as it does. It is
    not the DSL class itself (``type(v) is Float32`` is False): where cutelab takes an element type,
    give ``dsl_class(type(v))``, or the class.
    """

    def __eq__(cls, other: Any) -> bool:
        return other is cls or other is cls.__dict__["_dsl_class_"] or (
            isinstance(other, RuntimeTypeMeta) and other.__dict__["_dsl_class_"] is cls.__dict__["_dsl_class_"])

    def __ne__(cls, other: Any) -> bool:
        return not RuntimeTypeMeta.__eq__(cls, other)

    def __hash__(cls) -> int:
        return hash(cls.__dict__["_dsl_class_"])

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls.__dict__["_dsl_class_"](*args, **kwargs)

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(cls.__dict__["_dsl_class_"], name)

    def __instancecheck__(cls, inst: Any) -> bool:
        return isinstance(inst, cls.__dict__["_dsl_class_"])

    def __subclasscheck__(cls, sub: Any) -> bool:
        return issubclass(dsl_class(sub), cls.__dict__["_dsl_class_"])

    def __repr__(cls) -> str:
        return repr(cls.__dict__["_dsl_class_"])

    def __str__(cls) -> str:
        return str(cls.__dict__["_dsl_class_"])


_RUNTIME_CLASSES: dict = {}  # (the tracer's class, DSL class) -> the runtime class


def runtime_class(base: type, dtype: Any) -> Any:
    """The class of ``base``'s runtime values of element type ``dtype`` (a subclass of ``base``
    whose metaclass is :class:`RuntimeTypeMeta`, standing for ``dtype``), or None when dtype is not
    a concrete numeric type. ``base`` must keep its instances' layout in ``__slots__`` (instances
    are moved to the subclass by assigning ``__class__``)."""
    key = (base, dtype)
    got = _RUNTIME_CLASSES.get(key)
    if got is None:
        if not (isinstance(dtype, NumericMeta) and not dtype.is_abstract):
            return None
        # an instance answers its type's bit width as CuTe DSL's do (``value.width``: a class attribute
        # there; flash_attn.cute's shuffle_sync asserts ``value.width % 32 == 0`` of an Int64 scalar)
        got = RuntimeTypeMeta(dtype.__name__, (base,), {"__slots__": (), "_dsl_class_": dtype,
                                                        "__module__": base.__module__, "width": dtype.width,
                                                        "__qualname__": f"{base.__qualname__}[{dtype.__name__}]"})
        # the number ABCs hold classes in caches matched by equality, where this class is its DSL class:
        # it answers as the DSL class does (cutelab's own ABCs answer by its bases: tracing._KernelABCMeta)
        import numbers

        for a in (numbers.Number, numbers.Complex, numbers.Real, numbers.Rational, numbers.Integral):
            if issubclass(dtype, a):
                a.register(got)
        _RUNTIME_CLASSES[key] = got
    return got


def dsl_class(t: Any) -> Any:
    """The DSL class a runtime value's class stands for (Float32 for ``type(v)`` of a kernel's Float32
    scalar); any other class as it is."""
    return t.__dict__["_dsl_class_"] if isinstance(t, RuntimeTypeMeta) else t


def is_numeric_type(x: Any) -> bool:
    """x is an element type with values (Float32, Int8, a user subclass), not one of the abstract
    bases (Numeric, Integer, Float), nor a value."""
    return isinstance(x, NumericMeta) and not x.is_abstract


class IntegerMeta(NumericMeta):
    """The class of the integer types (``isinstance(Int32, IntegerMeta)``)."""


class FloatMeta(NumericMeta):
    """The class of the floating-point types (``isinstance(Float32, FloatMeta)``)."""


def _known_type(mlir_type: Any) -> Any:
    """The element type an ``mlir_type=`` builder names, where it names one (the compat layer's
    ``T.f64`` gives Float64), else None."""
    if not callable(mlir_type):
        return None
    try:
        t = mlir_type()
    except Exception:  # noqa: BLE001 - a builder that needs MLIR: no representation to borrow
        return None
    return t if isinstance(t, NumericMeta) and not t.is_abstract else None


class Numeric(metaclass=NumericMeta, is_abstract=True):
    """The base class of the element types; its instances are the scalars."""

    __slots__ = ()

    def __class_getitem__(cls, item: Any) -> Any:  # allow Numeric[...] in annotations
        return cls


def _wrap(t: Any, v: int) -> int:
    if t.kind == "bool":
        return int(bool(v))
    m = 1 << t.width
    v %= m
    if t.kind == "int" and v >= m >> 1:
        v -= m
    return v


def _round(t: Any, v: float) -> float:
    if t.width == 64:
        return float(v)
    if t.name == "f32":  # C's (float) conversion, as numpy's: round to nearest even (no numpy scalar, no errstate)
        try:
            return _F32.unpack(_F32.pack(v))[0]
        except OverflowError:  # past the largest f32: numpy's inf below
            pass
    np = _np()
    if t.name in _FP8_NAMES:  # e4m3 / e5m2: through f32, rounded to nearest even and saturating (cutelab.fp8)
        from . import fp8

        with np.errstate(over="ignore"):
            return float(fp8.to_f32(fp8.from_f32(np.array([v], np.float32), t), t)[0])
    if t.name == "f8E8M0FNU":  # a power of two, rounded toward +infinity (cutelab.fp8.e8m0_from_f32)
        from . import fp8

        with np.errstate(over="ignore"):
            return float(fp8.e8m0_to_f32(fp8.e8m0_from_f32(np.array([v], np.float32)))[0])
    if t.width <= 8:
        raise TypeError(f"{t}({v!r}): scalars of {t.width}-bit float types are not supported (no rounding for them yet)")
    if t.name == "tf32":
        v = float(np.float32(v))
        b = int(np.asarray(np.float32(v)).view(np.uint32))
        if not np.isfinite(np.float32(v)):
            return v
        b = ((b + 0xFFF + ((b >> 13) & 1)) >> 13) << 13  # round to nearest even at 10 mantissa bits
        return float(np.asarray(np.uint32(b & 0xFFFFFFFF)).view(np.float32))
    if t.name == "bf16":
        b = np.asarray(np.float32(v)).view(np.uint32)
        if np.isnan(np.float32(v)):
            return float("nan")
        b = (int(b) + 0x7FFF + ((int(b) >> 16) & 1)) >> 16 << 16
        return float(np.asarray(np.uint32(b & 0xFFFFFFFF)).view(np.float32))
    with np.errstate(over="ignore"):
        return float(t.storage.type(v)) if t.storage != np.uint16 else float(np.float16(v))


_F32 = struct.Struct("<f")


class IntValue(int):
    """An integer scalar of a cutlass type (Int32(7)): a Python int, wrapped to the bit width,
    whose arithmetic with ints stays in the type. The integer types derive from it (through
    Integer); dynamic.DynScalar, a runtime scalar of a jit trace, too."""

    dtype: Any

    def __new__(cls, dtype: Any, v: Any) -> "IntValue":
        if cls is IntValue and issubclass(dtype, IntValue):
            cls = dtype  # IntValue(Int32, 7) is Int32(7), an instance of Int32
        if dtype.kind == "bool":  # any nonzero value, nan and inf included, is true (CuTe DSL: Boolean(nan) is 1)
            v = bool(v)
        elif isinstance(v, float):
            v = int(v)  # truncates toward zero, as a C conversion; nan and inf are refused (ValueError, OverflowError)
        obj = int.__new__(cls, _wrap(dtype, int(v)))
        obj.dtype = dtype
        return obj

    @property
    def value(self) -> int:
        return int(self)

    def ir_value(self, *, loc: Any = None, ip: Any = None) -> Any:
        """CuTe DSL's MLIR value of this scalar (``Float32(a).ir_value()``, an operand of
        ``llvm.inline_asm``): in cutelab the scalar stands for itself."""
        return self

    def to(self, dtype: Any) -> Any:
        return dtype(int(self)) if dtype.is_integer else dtype(float(int(self)))

    def _op(self, o: Any, f: Any) -> Any:
        if isinstance(o, FloatValue) or isinstance(o, float):
            return NotImplemented
        if isinstance(o, _np_int_types()):
            return IntValue(self.dtype, f(int(self), int(o)))
        return NotImplemented

    def __add__(self, o): return self._op(o, lambda a, b: a + b)
    def __radd__(self, o): return self._op(o, lambda a, b: b + a)
    def __sub__(self, o): return self._op(o, lambda a, b: a - b)
    def __rsub__(self, o): return self._op(o, lambda a, b: b - a)
    def __mul__(self, o): return self._op(o, lambda a, b: a * b)
    def __rmul__(self, o): return self._op(o, lambda a, b: b * a)
    def __floordiv__(self, o): return self._op(o, lambda a, b: a // b)
    def __rfloordiv__(self, o): return self._op(o, lambda a, b: b // a)
    def __mod__(self, o): return self._op(o, lambda a, b: a % b)
    def __rmod__(self, o): return self._op(o, lambda a, b: b % a)
    def __neg__(self): return IntValue(self.dtype, -int(self))

    def __repr__(self) -> str:
        return str(int(self))

    __str__ = __repr__

    def __reduce__(self) -> Any:
        return (IntValue, (self.dtype, int(self)))


class FloatValue(float):
    """A floating-point scalar of a cutlass type (Float32(0.1)): a Python float rounded to the
    type, whose arithmetic with numbers rounds to the type after each operation. The float types
    derive from it (through Float)."""

    dtype: Any

    def __new__(cls, dtype: Any, v: Any) -> "FloatValue":
        if cls is FloatValue and issubclass(dtype, FloatValue):
            cls = dtype  # FloatValue(Float32, 0.5) is Float32(0.5)
        obj = float.__new__(cls, _round(dtype, float(v)))
        obj.dtype = dtype
        return obj

    @property
    def value(self) -> float:
        return float(self)

    def ir_value(self, *, loc: Any = None, ip: Any = None) -> Any:
        """CuTe DSL's MLIR value of this scalar (``Float32(a).ir_value()``, an operand of
        ``llvm.inline_asm``): in cutelab the scalar stands for itself."""
        return self

    def to(self, dtype: Any) -> Any:
        return dtype(float(self))

    def _op(self, o: Any, f: Any) -> Any:
        if isinstance(o, _np_real_types()):
            return FloatValue(self.dtype, f(float(self), float(o)))
        return NotImplemented

    def __add__(self, o): return self._op(o, lambda a, b: a + b)
    def __radd__(self, o): return self._op(o, lambda a, b: b + a)
    def __sub__(self, o): return self._op(o, lambda a, b: a - b)
    def __rsub__(self, o): return self._op(o, lambda a, b: b - a)
    def __mul__(self, o): return self._op(o, lambda a, b: a * b)
    def __rmul__(self, o): return self._op(o, lambda a, b: b * a)
    def __truediv__(self, o): return self._op(o, lambda a, b: a / b)
    def __rtruediv__(self, o): return self._op(o, lambda a, b: b / a)
    def __neg__(self): return FloatValue(self.dtype, -float(self))

    def __repr__(self) -> str:
        return repr(float(self))

    __str__ = __repr__

    def __reduce__(self) -> Any:
        return (FloatValue, (self.dtype, float(self)))


class Integer(IntValue, Numeric, metaclass=IntegerMeta, is_abstract=True, kind="int"):
    """The integer types' base (Int32, Uint8, Boolean, ...)."""


class Float(FloatValue, Numeric, metaclass=FloatMeta, is_abstract=True, kind="float"):
    """The floating-point types' base (Float32, BFloat16, Float8E4M3FN, ...)."""


class Float64(Float, mlir_name="f64", width=64, storage="float64", torch_name="float64", cuda="double"): ...
class Float32(Float, mlir_name="f32", width=32, storage="float32", torch_name="float32", cuda="float"): ...
class Float16(Float, mlir_name="f16", width=16, storage="float16", torch_name="float16", cuda="__half"): ...
class BFloat16(Float, mlir_name="bf16", width=16, storage="uint16", torch_name="bfloat16", cuda="__nv_bfloat16"): ...
class Int8(Integer, mlir_name="i8", width=8, storage="int8", torch_name="int8", cuda="signed char"): ...
class Int16(Integer, mlir_name="i16", width=16, storage="int16", torch_name="int16", cuda="short"): ...
class Int32(Integer, mlir_name="i32", width=32, storage="int32", torch_name="int32", cuda="int"): ...
class Int64(Integer, mlir_name="i64", width=64, storage="int64", torch_name="int64", cuda="long long"): ...
class Uint8(Integer, mlir_name="u8", width=8, storage="uint8", torch_name="uint8", cuda="unsigned char", kind="uint"): ...
class Uint16(Integer, mlir_name="u16", width=16, storage="uint16", torch_name="uint16", cuda="unsigned short",
             kind="uint"): ...
class Uint32(Integer, mlir_name="u32", width=32, storage="uint32", torch_name="uint32", cuda="unsigned int",
             kind="uint"): ...
class Uint64(Integer, mlir_name="u64", width=64, storage="uint64", torch_name="uint64", cuda="unsigned long long",
             kind="uint"): ...
class Boolean(Integer, mlir_name="i1", width=8, storage="bool", torch_name="bool", cuda="bool", kind="bool"): ...
# scalar-only integer widths (no numpy storage of their own: kernels keep them in wider words)
# Int4: a scalar holds its value in an int8; a tensor's memory packs two to a byte (runtime.Packed4Engine)
class Int4(Integer, mlir_name="i4", width=4, storage="int8", torch_name="int4", cuda="signed char"): ...
class Int128(Integer, mlir_name="i128", width=128, storage="object", torch_name="", cuda="__int128"): ...
class Uint128(Integer, mlir_name="u128", width=128, storage="object", torch_name="", cuda="unsigned __int128",
              kind="uint"): ...
# MMA operand types (stored as raw bits or, for tf32, as the f32 it rounds): names as MLIR prints them
class TFloat32(Float, mlir_name="tf32", width=32, storage="float32", torch_name="tfloat32", cuda="float"): ...
class Float8E4M3FN(Float, mlir_name="f8E4M3FN", width=8, storage="uint8", torch_name="float8_e4m3fn",
                   cuda="__nv_fp8_e4m3"): ...
class Float8E5M2(Float, mlir_name="f8E5M2", width=8, storage="uint8", torch_name="float8_e5m2", cuda="__nv_fp8_e5m2"): ...
# block-scaled (Blackwell) operand types: the types exist (annotations, widths, names), but no
# tensor, scalar or kernel of them converts values yet (no row in cutelab.dtypes)
class Float8E8M0FNU(Float, mlir_name="f8E8M0FNU", width=8, storage="uint8", torch_name="float8_e8m0fnu",
                    cuda="__nv_fp8_e8m0"): ...
# the IEEE-style e4m3 (with infinities; CuTe DSL has it beside Float8E4M3FN, which kernels use): a name only,
# as programs test for it to refuse it (``if dtype is cutlass.Float8E4M3: raise``)
class Float8E4M3(Float, mlir_name="f8E4M3", width=8, storage="uint8", torch_name="", cuda=""): ...
class Float4E2M1FN(Float, mlir_name="f4E2M1FN", width=4, storage="uint8", torch_name="float4_e2m1fn_x2",
                   cuda="__nv_fp4_e2m1"): ...
class Float6E2M3FN(Float, mlir_name="f6E2M3FN", width=6, storage="uint8", torch_name="", cuda="__nv_fp6_e2m3"): ...
class Float6E3M2FN(Float, mlir_name="f6E3M2FN", width=6, storage="uint8", torch_name="", cuda="__nv_fp6_e3m2"): ...
# packed sub-byte storage types (a byte of two fp4, three bytes of four fp6): CuTe DSL's names of the
# host buffers of its FP4/FP6 TMA formats (SM100); as the types above, they name, no value converts
class Float4E2M1FNx2(Float, mlir_name="f4E2M1FNx2", width=8, storage="uint8", torch_name="", cuda=""): ...
class Float6E3M2FNx4(Float, mlir_name="f6E3M2FNx4", width=24, storage="object", torch_name="", cuda=""): ...
class Float6E2M3FNx4(Float, mlir_name="f6E2M3FNx4", width=24, storage="object", torch_name="", cuda=""): ...


_FP8_NAMES = frozenset(("f8E4M3FN", "f8E5M2"))
NUMERICS = {t.name: t for t in (Float64, Float32, Float16, BFloat16, Int8, Int16, Int32, Int64,
                                Uint8, Uint16, Uint32, Uint64, Boolean, TFloat32, Float8E4M3FN,
                                Float8E5M2)}


_FROM_NUMPY: dict = {}  # numpy dtype -> element type, made on first use (the types numpy stores natively)


def numeric_from_numpy(dtype: Any) -> Numeric:
    if not _FROM_NUMPY:
        _FROM_NUMPY.update((t.storage, t) for t in (Float64, Float32, Float16, Int8, Int16, Int32, Int64, Uint8,
                                                    Uint16, Uint32, Uint64, Boolean))
    dt = _np().dtype(dtype)
    if dt not in _FROM_NUMPY:
        raise TypeError(f"no cutelab element type for numpy dtype {dt}")
    return _FROM_NUMPY[dt]


def numeric_from_torch(dtype: Any) -> Numeric:
    name = str(dtype).replace("torch.", "")
    if name == Float8E8M0FNU.torch_name:  # block-scaled GEMMs' scale factors (stored as bytes)
        return Float8E8M0FNU
    for t in NUMERICS.values():
        if t.torch_name == name:
            return t
    raise TypeError(f"no cutelab element type for torch dtype {dtype}")


def float_promotion(a: Any, b: Any) -> Any:
    """The element type of an arithmetic op on values of types a and b where one of them is a float
    type, as CuTe DSL 4.8.1 promotes (``_binary_op_type_promote``): an integer side becomes the float
    type at the wider of the two widths; the wider float wins (from 16 bits up); at one width Float64,
    then Float32, then Float16 win (so bf16 with f16 is f16). Python operands count as Int32 (int),
    Float32 (float) and Boolean (bool): a Float16 value times 2.5 is a Float32 value.

    >>> float_promotion(Float16, Float32), float_promotion(BFloat16, Int32), float_promotion(Float32, Int8)
    (f32, f32, f32)
    >>> float_promotion(Float16, Int8), float_promotion(BFloat16, Float16)
    (f16, f16)
    """
    aw, bw = a.width, b.width
    if a.is_float and not b.is_float:
        b = a.recast_width(max(aw, bw)) if max(aw, bw) in (16, 32, 64) else a
    elif b.is_float and not a.is_float:
        a = b.recast_width(max(aw, bw)) if max(aw, bw) in (16, 32, 64) else b
    if aw > bw and aw >= 16:
        return a
    if bw > aw and bw >= 16:
        return b
    if aw == bw:
        for t in (Float64, Float32, Float16):
            if a is t or b is t or a.name == t.name or b.name == t.name:
                return t
    raise TypeError(f"implicit float promotion of {a} and {b} is not supported (as in CuTe DSL): convert one "
                    f"with .to(...) first")


def python_operand_type(x: Any) -> Any:
    """The element type CuTe DSL gives a Python operand of an op (``as_numeric``): bool Boolean, int
    Int32, float Float32; None for anything else."""
    if isinstance(x, bool):
        return Boolean
    if isinstance(x, int):
        return Int32
    if isinstance(x, float):
        return Float32
    np = sys.modules.get("numpy")
    if np is not None and isinstance(x, np.integer):
        return Int32
    if np is not None and isinstance(x, np.floating):
        return Float32
    return None
