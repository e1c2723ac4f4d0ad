"""Dynamic values: integers CuTe DSL knows only at run time, which cutelab knows all along.

In CuTe DSL a runtime integer (a ``cutlass.Int32`` argument of a ``@cute.jit`` function, the
shape of a tensor marked with ``mark_layout_dynamic``) is an MLIR value: Python sees no number,
``print`` shows ``?`` (``?{div=16}`` when its divisibility is known, ``?{i64}`` for a 64-bit
value), and a ``for`` loop over ``range(n)`` becomes a loop in the kernel.

cutelab specializes every trace on the actual values (the layout algebra stays on Python ints
and the CUDA code is as good as for static shapes), but marks them: a :class:`DynInt` is an
``int`` that remembers it is dynamic.

* ``int(x)`` (and every use as an int) gives the value; ``str(x)`` gives ``?`` as CuTe DSL prints
  it, ``repr(x)`` gives ``Int32(?)``;
* arithmetic with ints or DynInts gives a DynInt, with the divisibility CuTe DSL infers
  (``?{div=4} * 2`` is ``?{div=8}``; sums keep the gcd; quotients lose it);
* inside a kernel trace, comparisons give a :class:`DynBool`, and the kernel's AST rewrite
  (kernel/frontend/control.py) makes ``for`` loops over DynInt bounds and ``if`` on a DynBool runtime
  regions of the IR, as CuTe DSL does (their bounds and conditions are the known values:
  the loop is not unrolled, and both branches are traced);
* the kernel IR, the CUDA printer and error messages get plain ints (``value_of``).

>>> n = DynInt(48, div=16)
>>> print(n, n * 2, n + 1, repr(n), int(n))
?{div=16} ?{div=32} ? Int32(?) 48
>>> print((n, 4), value_of((n, 4)))  # a Python tuple prints its items' repr, as in CuTe DSL
(Int32(?), 4) (48, 4)
"""

from __future__ import annotations

import abc
import math
from typing import Any, Callable

__all__ = ["INT_TYPES", "DynInt", "DynFloat", "dyn_scalar", "in_host_trace", "DynBool", "is_dynamic", "value_of", "dynamic_key", "dyn_str"]

_NAMES = {("int", 32): "Int32", ("int", 64): "Int64", ("int", 16): "Int16", ("int", 8): "Int8",
          ("uint", 32): "Uint32", ("uint", 64): "Uint64", ("uint", 16): "Uint16", ("uint", 8): "Uint8"}


def _dtype(d: Any) -> Any:
    from . import numeric

    if d is None:
        return numeric.Int32
    if numeric.is_numeric_type(d):
        if d.kind not in ("int", "uint"):
            raise TypeError(f"DynInt: the type of a dynamic integer must be an integer type, got {d}")
        return d
    raise TypeError(f"DynInt: dtype must be a cutlass integer type (Int32, Int64, ...), got {d!r}")


def _tracing() -> bool:
    """Whether a kernel is being traced (asked of the kernel through cutelab.tracing)."""
    return _hooks.kernel_tracing()


class _DynMeta(abc.ABCMeta):
    """``print(type(n))`` shows ``Int32`` as CuTe DSL's does (n a dynamic Int32)."""

    def __repr__(cls) -> str:
        return getattr(cls, "_shown_as", cls.__name__)


class DynInt(int, metaclass=_DynMeta):
    """An integer CuTe DSL would know only at run time: prints ``?``, computes as its value.

    ``dtype`` is its cutlass type (Int32 for shapes and scalars, Int64 for strides of a
    dynamic layout), ``div`` a known divisor (1: none), as in ``?{i64 div=8}``.

    >>> s = DynInt(32, div=8)
    >>> d = DynInt(64, dtype="i64", div=8)
    >>> print(s, d, s * d, s // 4, s % 3, s - 8)
    ?{div=8} ?{i64 div=8} ?{i64 div=64} ?{div=2} ? ?{div=8}
    """

    track = True  # arithmetic infers divisibility (values of layouts); False for Int32 arguments (CuTe DSL: '?')

    def __new__(cls, value: Any, dtype: Any = None, div: int = 1, track: bool = True) -> "DynInt":
        if isinstance(dtype, str):
            from . import numeric

            dtype = {"i32": numeric.Int32, "i64": numeric.Int64}.get(dtype, dtype)
        dt = _dtype(dtype)
        if isinstance(value, bool) or not isinstance(value, int):
            if hasattr(value, "__index__") and not isinstance(value, bool):
                value = value.__index__()
            else:
                raise TypeError(f"DynInt({value!r}): the value of a dynamic integer must be an int")
        div = int(div)
        if div < 0 or (div == 0 and int(value) != 0):
            raise ValueError(f"DynInt({int(value)}, div={div}): the divisibility must be a positive int "
                             f"(or 0, for a value known to be 0)")
        if div and int(value) % div:
            raise ValueError(f"DynInt({int(value)}, div={div}): {int(value)} is not divisible by {div}")
        obj = int.__new__(cls, int(value))
        obj.dtype = dt
        obj.div = div
        if not track:
            obj.track = False
        return obj

    # ---- what it is
    @property
    def value(self) -> int:
        """The value (CuTe DSL: the runtime value; here known at trace time)."""
        return int(self)

    def to(self, dtype: Any) -> Any:
        return dtype(int(self)) if dtype.is_integer else dtype(float(int(self)))

    def __str__(self) -> str:
        return dyn_str(self.dtype, self.div)

    def __repr__(self) -> str:
        return f"{_NAMES.get((self.dtype.kind, self.dtype.width), 'Int32')}(?)"

    def __format__(self, spec: str) -> str:
        return str(self) if not spec else format(int(self), spec)

    def __reduce__(self) -> Any:
        return (_make, (int(self), self.dtype.name, self.div, self.track))

    __hash__ = int.__hash__

    # ---- arithmetic: a DynInt, with what CuTe DSL knows of its divisibility
    def _res(self, o: Any, v: int, div: int) -> Any:
        dt = self.dtype
        if isinstance(o, DynInt) and o.dtype.width > dt.width:
            dt = o.dtype
        div = abs(int(div))
        if (div == 0 and v != 0) or (div and v % div):
            div = 1  # assert-worthy in CuTe DSL's terms; keep the value right
        if not self.track or (isinstance(o, DynInt) and not o.track):
            return DynInt(v, dt, 1, track=False)  # a scalar's arithmetic: CuTe DSL infers nothing
        return DynInt(v, dt, div)

    @staticmethod
    def _div(o: Any) -> int:
        return o.div if isinstance(o, DynInt) else abs(int(o))

    def __add__(self, o: Any) -> Any:
        if not _int_like(o):
            return NotImplemented
        return self._res(o, int(self) + int(o), math.gcd(self.div, self._div(o)))

    __radd__ = __add__

    def __sub__(self, o: Any) -> Any:
        if not _int_like(o):
            return NotImplemented
        return self._res(o, int(self) - int(o), math.gcd(self.div, self._div(o)))

    def __rsub__(self, o: Any) -> Any:
        if not _int_like(o):
            return NotImplemented
        return self._res(o, int(o) - int(self), math.gcd(self.div, self._div(o)))

    def __mul__(self, o: Any) -> Any:
        if not _int_like(o):
            return NotImplemented
        return self._res(o, int(self) * int(o), self.div * self._div(o))

    __rmul__ = __mul__

    def __floordiv__(self, o: Any) -> Any:
        if not _int_like(o):
            return NotImplemented
        d = 1  # a static divisor of the divisibility divides it out (?{div=16} // 2 is ?{div=8})
        if not isinstance(o, DynInt) and int(o) > 0 and self.div % int(o) == 0:
            d = self.div // int(o)
        return self._res(o, int(self) // int(o), d)

    def __rfloordiv__(self, o: Any) -> Any:
        if not _int_like(o):
            return NotImplemented
        return self._res(o, int(o) // int(self), 1)

    def __mod__(self, o: Any) -> Any:
        if not _int_like(o):
            return NotImplemented
        m = self._div(o)
        if not isinstance(o, DynInt) and m and self.div % m == 0:  # a multiple of m: 0, which prints ?{div=0}
            return self._res(o, int(self) % int(o), 0)
        return self._res(o, int(self) % int(o), math.gcd(self.div, m))

    def __rmod__(self, o: Any) -> Any:
        if not _int_like(o):
            return NotImplemented
        return self._res(o, int(o) % int(self), 1)

    # divmod and ** of a dynamic integer are dynamic too (a loop bound made with them stays a runtime loop)
    def __divmod__(self, o: Any) -> Any:
        if not _int_like(o):
            return NotImplemented
        return self.__floordiv__(o), self.__mod__(o)

    def __rdivmod__(self, o: Any) -> Any:
        if not _int_like(o):
            return NotImplemented
        return self.__rfloordiv__(o), self.__rmod__(o)

    def __pow__(self, o: Any, mod: Any = None) -> Any:
        if not _int_like(o) or mod is not None or int(o) < 0:  # (a negative power is a float, as for ints)
            return int.__pow__(int(self), o, mod) if mod is not None or _int_like(o) else NotImplemented
        return self._res(o, int(self) ** int(o), self.div ** int(o) if not isinstance(o, DynInt) else 1)

    def __rpow__(self, o: Any) -> Any:
        if not _int_like(o) or int(self) < 0:
            return int.__rpow__(int(self), o) if _int_like(o) else NotImplemented
        return self._res(o, int(o) ** int(self), 1)

    def __neg__(self) -> "DynInt":
        return DynInt(-int(self), self.dtype, self.div, self.track)

    def __pos__(self) -> "DynInt":
        return self

    def __abs__(self) -> "DynInt":
        return DynInt(abs(int(self)), self.dtype, self.div, self.track)

    def _bits(self, o: Any, f: Callable[[int, int], int]) -> Any:
        if not _int_like(o):
            return NotImplemented
        return self._res(o, f(int(self), int(o)), 1)

    def __and__(self, o): return self._bits(o, lambda a, b: a & b)
    def __rand__(self, o): return self._bits(o, lambda a, b: b & a)
    def __or__(self, o): return self._bits(o, lambda a, b: a | b)
    def __ror__(self, o): return self._bits(o, lambda a, b: b | a)
    def __xor__(self, o): return self._bits(o, lambda a, b: a ^ b)
    def __rxor__(self, o): return self._bits(o, lambda a, b: b ^ a)
    def __lshift__(self, o): return self._bits(o, lambda a, b: a << b)
    def __rlshift__(self, o): return self._bits(o, lambda a, b: b << a)
    def __rshift__(self, o): return self._bits(o, lambda a, b: a >> b)
    def __rrshift__(self, o): return self._bits(o, lambda a, b: b >> a)
    def __invert__(self): return DynInt(~int(self), self.dtype, 1, self.track)

    # ---- comparisons: runtime conditions inside a kernel trace, plain bools elsewhere
    def _cmp(self, o: Any, f: Callable[[int, int], bool]) -> Any:
        if not _int_like(o):
            if isinstance(o, float):
                r = f(int(self), o)  # type: ignore[arg-type]
                return DynBool(r) if _tracing() else r
            return NotImplemented
        r = f(int(self), int(o))
        return DynBool(r) if _tracing() else r

    def __lt__(self, o): return self._cmp(o, lambda a, b: a < b)
    def __le__(self, o): return self._cmp(o, lambda a, b: a <= b)
    def __gt__(self, o): return self._cmp(o, lambda a, b: a > b)
    def __ge__(self, o): return self._cmp(o, lambda a, b: a >= b)
    def __eq__(self, o): return self._cmp(o, lambda a, b: a == b)
    def __ne__(self, o): return self._cmp(o, lambda a, b: a != b)


def _make(v: int, dtype_name: str, div: int, track: bool = True) -> DynInt:
    return DynInt(v, dtype_name, div, track)


def _int_like(o: Any) -> bool:
    if isinstance(o, bool):
        return True
    if isinstance(o, int):
        return True
    np_int = _np_integer()
    return np_int is not None and isinstance(o, np_int)


def _np_integer() -> Any:
    import sys

    np = sys.modules.get("numpy")
    return np.integer if np is not None else None


class DynBool(int, metaclass=_DynMeta):
    """A condition on dynamic values inside a kernel: a runtime ``if`` (both branches traced),
    its value known. Prints ``?``.

    >>> b = DynBool(True)
    >>> print(b, bool(b), repr(b))
    ? True Boolean(?)
    """

    _shown_as = "Boolean"

    def __new__(cls, v: Any) -> "DynBool":
        return int.__new__(cls, 1 if v else 0)

    @property
    def value(self) -> bool:
        return bool(int(self))

    @property
    def dtype(self) -> Any:
        from .numeric import Boolean

        return Boolean

    def __str__(self) -> str:
        return "?"

    def __repr__(self) -> str:
        return "Boolean(?)"

    def __format__(self, spec: str) -> str:
        return "?" if not spec else format(int(self), spec)

    __hash__ = int.__hash__

    def __invert__(self) -> "DynBool":
        return DynBool(not int(self))

    def __and__(self, o: Any) -> Any:
        return DynBool(bool(self) and bool(o)) if isinstance(o, (bool, int)) else NotImplemented

    __rand__ = __and__

    def __or__(self, o: Any) -> Any:
        return DynBool(bool(self) or bool(o)) if isinstance(o, (bool, int)) else NotImplemented

    __ror__ = __or__


DynInt._shown_as = "Int32"  # type: ignore[attr-defined]

INT_TYPES = (int, DynInt)  # the leaf types of shapes and strides (type(x) in INT_TYPES)


def dyn_str(dtype: Any, div: int) -> str:
    """How CuTe DSL prints a dynamic integer of type dtype with divisibility div.

    >>> from cutelab.numeric import Int32, Int64
    >>> dyn_str(Int32, 1), dyn_str(Int32, 16), dyn_str(Int64, 1), dyn_str(Int64, 8)
    ('?', '?{div=16}', '?{i64}', '?{i64 div=8}')
    """
    attrs = []
    if dtype.width != 32 or dtype.kind != "int":
        attrs.append(dtype.name)
    if div != 1:
        attrs.append(f"div={div}")  # div=0: a value known to be 0, as CuTe DSL prints ?{div=16} % 4
    return "?{" + " ".join(attrs) + "}" if attrs else "?"


def is_dynamic(x: Any) -> bool:
    """True when x (an int, a nested tuple, a Layout) holds a dynamic value.

    >>> is_dynamic((1, (DynInt(3), 2))), is_dynamic((1, 2))
    (True, False)
    """
    if isinstance(x, (DynInt, DynBool)):
        return True
    if isinstance(x, (tuple, list)):
        return any(is_dynamic(v) for v in x)
    shape = getattr(x, "shape", None)
    stride = getattr(x, "stride", None)
    if shape is not None and not isinstance(x, (int, float)) and type(x).__name__ == "Layout":
        return is_dynamic(shape) or is_dynamic(stride)
    return False


def value_of(x: Any) -> Any:
    """x with every dynamic value replaced by its plain int (tuples, lists and Layouts too).

    >>> value_of((DynInt(4), [DynInt(2, div=2), 3]))
    (4, [2, 3])
    """
    if isinstance(x, DynInt):
        return int(x)
    if isinstance(x, DynBool):
        return bool(int(x))
    if type(x) is tuple:
        return tuple(value_of(v) for v in x)
    if type(x) is list:
        return [value_of(v) for v in x]
    if type(x).__name__ == "Layout" and is_dynamic(x):  # a cutelab.layout.Layout (layout.py imports this module)
        return type(x)(value_of(x.shape), value_of(x.stride))
    return x


def dynamic_key(x: Any) -> Any:
    """What a trace depends on beyond x's values: where x holds dynamic values, and their types
    and divisibilities (they change what trace-time prints show). None for a static x.

    >>> dynamic_key((DynInt(4, div=2), 3)), dynamic_key((4, 3))
    ((('i32', 2), None), None)
    """
    if isinstance(x, DynInt):
        return (x.dtype.name, x.div)
    if isinstance(x, DynBool):
        return ("bool",)
    if isinstance(x, (tuple, list)):
        ks = tuple(dynamic_key(v) for v in x)
        return ks if any(k is not None for k in ks) else None
    if type(x).__name__ == "Layout":
        k = (dynamic_key(x.shape), dynamic_key(x.stride))
        return k if k != (None, None) else None
    return None


from .numeric import FloatValue as _FloatValue  # noqa: E402 - numeric imports nothing of ours at import time
from .tracing import hooks as _hooks
from .numeric import IntValue as _IntValue  # noqa: E402


class DynScalar(_IntValue, metaclass=_DynMeta):
    """``cutlass.Int32(5)`` inside a jit function's trace: a DynInt (prints ``?``) that is also a
    cutlass scalar (an IntValue: a kernel receives it as a runtime argument, as in CuTe DSL)."""

    _shown_as = "Int32"
    track = False

    def __new__(cls, dtype: Any, v: Any) -> "DynScalar":
        obj = int.__new__(cls, int(_IntValue(dtype, v)))
        obj.dtype = dtype
        obj.div = 1
        return obj

    def __reduce__(self) -> Any:
        return (_make, (int(self), self.dtype.name, self.div))


for _name, _fn in list(DynInt.__dict__.items()):  # DynInt's printing and arithmetic
    if callable(_fn) and _name not in ("__new__", "__reduce__", "__init_subclass__") and not _name.startswith("_abc"):
        setattr(DynScalar, _name, _fn)
DynScalar.value = DynInt.value  # type: ignore[attr-defined]
DynInt.register(DynScalar)


class DynFloat(_FloatValue, metaclass=_DynMeta):
    """``cutlass.Float32(3.14)`` inside a jit function's trace: a runtime value, printed ``?``."""

    _shown_as = "Float32"

    def __new__(cls, dtype: Any, v: Any) -> "DynFloat":
        return _FloatValue.__new__(cls, dtype, v)

    def _op(self, o: Any, f: Any) -> Any:
        r = _FloatValue._op(self, o, f)
        return r if r is NotImplemented else DynFloat(r.dtype, float(r))

    def __str__(self) -> str:
        return "?"

    def __repr__(self) -> str:
        return _FLOAT_NAMES.get(self.dtype.name, "Float32") + "(?)"

    def __format__(self, spec: str) -> str:
        return "?" if not spec else format(float(self), spec)

    def __reduce__(self) -> Any:
        return (_FloatValue, (self.dtype, float(self)))

    __hash__ = float.__hash__


INT_TYPES = (int, DynInt, DynScalar)  # noqa: F811 - with the scalar variant
_FLOAT_NAMES = {"f16": "Float16", "bf16": "BFloat16", "f32": "Float32", "f64": "Float64", "tf32": "TFloat32"}


def in_host_trace() -> bool:
    """True while a @cute.jit function's body (or cute.compile's trace) runs on the host, outside
    kernels: where CuTe DSL's scalars are runtime values."""
    return _hooks.host_tracing()


def dyn_scalar(dtype: Any, v: Any) -> Any:
    """``dtype(v)`` inside a jit function's trace: a runtime value (``?``) of that type, or None
    where cutelab keeps a static scalar (Booleans, 8-bit floats, widths past 64 bits)."""
    if dtype.kind in ("int", "uint") and 8 <= dtype.width <= 64:
        return DynScalar(dtype, v)
    if dtype.kind == "float" and dtype.name in _FLOAT_NAMES:
        return DynFloat(dtype, v)
    return None
