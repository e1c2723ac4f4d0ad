"""cute.printf's format strings, as CuTe DSL reads them: ``{}`` and C conversions, mixed.

``cute.printf("%d %f", a, b)`` prints ``7 3.140000``; ``{}`` prints each value by its type
(integers as ``%d``, unsigned as ``%u``, floats as ``%f``, Booleans as ``1``/``0``, tuples and
layouts as ``(3,8)`` / ``(4,2):(1,4)``); ``%%`` is a percent sign. A first argument that is not
a string prints every argument with ``{}``, separated by ``", "``. Each placeholder takes the
next argument in order. Where CuTe DSL passes the bits of a mismatched value to C's printf
(``%f`` of an Int32, ``%d`` of a Float32: garbage on the screen), cutelab refuses with a
TraceError; so does a count of placeholders that differs from the count of arguments.

One parse serves the three places that format: the host (outside kernels, and static values
inside them), the CUDA printer (``c_conversion``) and the CPU interpreter (``format_value``).

>>> print(format_host("%d %f", 7, 3.14), "|", format_host("{} {}", True, (3, 8)), "|", format_host("%5.2f|%x", 2.5, 255))
7 3.140000 | 1 (3,8) |  2.50|ff
"""

from __future__ import annotations

import re
from typing import Any, List, Optional, Tuple, Union

from ...errors import TraceError

__all__ = ["Spec", "parse", "format_host", "format_value", "c_conversion", "kind_of"]

_TOKEN = re.compile(r"%%|\{\}|%([-+ #0]*)(\d+)?(?:\.(\d+))?(hh|h|ll|l|j|z|t|L|q)?([A-Za-z])?")
_INT_CONV = "diouxXc"
_FLOAT_CONV = "eEfFgG"
_LONG = ("ll", "l", "j", "z", "t", "q")


class Spec:
    """One placeholder: ``{}`` (conv None) or a C conversion (flags, width, precision, letter)."""

    __slots__ = ("conv", "flags", "width", "prec", "long", "text")

    def __init__(self, conv: Optional[str], flags: str = "", width: str = "", prec: Optional[str] = None,
                 long: bool = False, text: str = "{}"):
        self.conv, self.flags, self.width, self.prec, self.long, self.text = conv, flags, width, prec, long, text

    def py(self, conv: Optional[str] = None) -> str:
        """The Python %-format of this spec (no length modifier; %u is %d)."""
        c = conv or self.conv
        c = "d" if c in ("u", "i") else c
        return "%" + self.flags + self.width + ("" if self.prec is None else "." + self.prec) + c

    def __repr__(self) -> str:
        return f"Spec({self.text!r})"


def parse(fmt: str) -> List[Union[str, Spec]]:
    """Split fmt into literal text and placeholders.

    >>> parse("a={} b=%.2f 100%%")
    ['a=', Spec('{}'), ' b=', Spec('%.2f'), ' 100%']
    """
    out: List[Union[str, Spec]] = []
    pos = 0

    def lit(s: str) -> None:
        if s:
            if out and isinstance(out[-1], str):
                out[-1] += s
            else:
                out.append(s)

    for m in _TOKEN.finditer(fmt):
        lit(fmt[pos:m.start()])
        pos = m.end()
        tok = m.group(0)
        if tok == "%%":
            lit("%")
        elif tok == "{}":
            out.append(Spec(None))
        else:
            flags, width, prec, length, conv = m.groups()
            if conv is None or conv not in _INT_CONV + _FLOAT_CONV:
                what = "'%s'" % tok if conv else "a '%' at the end of the format"
                raise TraceError(
                    f"cute.printf({fmt!r}): unsupported conversion {what}; use {{}} or one of "
                    f"%d %i %u %o %x %X %c %e %E %f %F %g %G (with flags, width and precision), or %% for a '%'"
                )
            out.append(Spec(conv, flags or "", width or "", prec, (length or "") in _LONG, tok))
    lit(fmt[pos:])
    return out


def kind_of(v: Any) -> Tuple[str, int]:
    """('int' | 'uint' | 'float' | 'bool' | 'other', bit width) of a static value."""
    from ...dynamic import DynBool, DynInt

    if isinstance(v, (bool, DynBool)):
        return "bool", 1
    dt = getattr(v, "dtype", None)
    if isinstance(v, DynInt) or (isinstance(v, int) and dt is not None):
        return ("uint" if dt.kind == "uint" else "int"), dt.width
    if isinstance(v, int):
        return "int", 32
    if isinstance(v, float):
        return "float", getattr(dt, "width", 32)
    return "other", 0


def _mismatch(spec: Spec, what: str) -> TraceError:
    return TraceError(f"cute.printf: the conversion '{spec.text}' needs {'an integer' if spec.conv in _INT_CONV else 'a floating-point value'}, "
                      f"got {what}; use {{}} to print a value by its type, or convert it first (.to(...))")


def format_value(spec: Spec, v: Any, kind: str, width: int) -> str:
    """One value of a known kind ('int', 'uint', 'float', 'bool') and bit width, as C's printf
    prints it under spec.

    >>> s = parse("%u")[0]
    >>> format_value(s, -1, "int", 32), format_value(parse("{}")[0], 2.0, "float", 32)
    ('4294967295', '2.000000')
    """
    if spec.conv is None:
        if kind == "float":
            return "%f" % float(v)
        if kind == "uint":
            return "%d" % (int(v) & ((1 << width) - 1))
        return "%d" % int(v)
    if spec.conv in _FLOAT_CONV:
        if kind != "float":
            raise _mismatch(spec, f"the {kind} value {int(v)}")
        return spec.py() % float(v)
    if kind == "float":
        raise _mismatch(spec, f"the floating-point value {float(v)!r}")
    iv = int(v)
    if spec.conv in "uoxX":
        w = 64 if spec.long else max(32, width)
        iv &= (1 << w) - 1
    elif spec.conv in "di" and not spec.long and kind == "int" and width <= 32:
        iv = ((iv + (1 << 31)) % (1 << 32)) - (1 << 31)  # an int (32 bits) as C passes it
    if spec.conv == "c":
        return spec.py() % chr(iv & 0xFF)
    return spec.py() % iv


def format_static(spec: Spec, v: Any) -> str:
    """A value known at trace time (Python numbers, cutlass scalars, DynInts, tuples, layouts)."""
    from ...dynamic import value_of
    from ...int_tuple import tuple_str

    kind, width = kind_of(v)
    if kind != "other":
        return format_value(spec, v, kind, width)
    if spec.conv is not None:
        raise _mismatch(spec, f"{type(v).__name__} {value_of(v)}")
    if isinstance(v, tuple):
        return "(" + ",".join(format_static(spec, x) for x in v) + ")"
    if v is None:
        return "_"
    return tuple_str(value_of(v)) if isinstance(v, (tuple, list)) else str(value_of(v))


def split_args(args: Tuple[Any, ...]) -> Tuple[str, Tuple[Any, ...]]:
    """(format, values): a first argument that is not a string prints every argument with {}."""
    if not args:
        raise TraceError("cute.printf: expects at least one argument to print")
    if isinstance(args[0], str):
        return args[0], tuple(args[1:])
    return "{}" + ", {}" * (len(args) - 1), tuple(args)


def check_count(fmt: str, pieces: List[Union[str, Spec]], args: Tuple[Any, ...]) -> None:
    n = sum(1 for p in pieces if isinstance(p, Spec))
    if n != len(args):
        raise TraceError(
            f"cute.printf({fmt!r}, ...): the format has {n} placeholder{'s' if n != 1 else ''} ({{}} or %...) but "
            f"{len(args)} argument{'s' if len(args) != 1 else ''} {'were' if len(args) != 1 else 'was'} given"
        )


def format_host(fmt: str, *args: Any, end: str = "") -> str:
    """The text cute.printf prints for values known on the host."""
    pieces = parse(fmt)
    check_count(fmt, pieces, args)
    out, k = [], 0
    for p in pieces:
        if isinstance(p, str):
            out.append(p)
        else:
            out.append(format_static(p, args[k]))
            k += 1
    return "".join(out) + end


def c_conversion(spec: Optional[Spec], kind: str, width: int, code: str) -> Tuple[str, str]:
    """(C format, C argument) printing the runtime value `code` of a kind and width under spec."""
    if spec is None or spec.conv is None:
        if kind == "float":
            return "%f", f"(double)({code})"
        if kind == "uint":
            return "%llu", f"(unsigned long long)({code})"
        return "%lld", f"(long long)({code})"
    if spec.conv in _FLOAT_CONV:
        if kind != "float":
            raise _mismatch(spec, f"a runtime {kind} value")
        return spec.text.replace("L", ""), f"(double)({code})"
    if kind == "float":
        raise _mismatch(spec, "a runtime floating-point value")
    base = "%" + spec.flags + spec.width + ("" if spec.prec is None else "." + spec.prec)
    if spec.conv == "c":
        return base + "c", f"(int)({code})"
    if spec.conv in "uoxX":
        if spec.long or width > 32:
            return base + "ll" + spec.conv, f"(unsigned long long)({code})"
        return base + spec.conv, f"(unsigned int)({code})"
    if spec.long or width > 32:
        return base + "ll" + spec.conv, f"(long long)({code})"
    return base + spec.conv, f"(int)({code})"
