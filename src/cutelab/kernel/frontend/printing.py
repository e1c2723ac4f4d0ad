"""``cute.printf``: inside a kernel, a ``Printf`` op whose parts are text, runtime integers,
register values and tensors (pointer, layout and values, as CuTe DSL prints them); outside one, a
print on the host (``host.host_print``, in order with the launches of a ``@cute.jit`` function).
The formats (``{}`` and C conversions) are read by ``cformat``.
"""

from __future__ import annotations

from typing import Any, List

from ... import int_tuple as it
from ...errors import TraceError
from ..ir.nodes import Printf
from ..ir.symbolic import is_sym
from .engines import GmemEngine, RmemEngine
from .trace import TraceValue, current, tracing

__all__ = ["printf"]


def _fmt_static(x: Any, spec: Any = None) -> str:
    from .cformat import Spec, format_static

    return format_static(spec or Spec(None), x)


def _value_parts(tensor: Any) -> List[Any]:
    """Parts that print a tensor like CuTe DSL's printf: raw pointer, layout, values."""
    from ...dynamic import value_of

    eng = tensor.engine
    layout = value_of(tensor.layout)
    if isinstance(eng, GmemEngine):
        vals = eng.load(tensor.offset, tensor.layout)
        text, align, sw = layout, eng.alignment(tensor.offset), ""
        view = getattr(eng, "dsl_parts", None)  # a swizzled shared tensor: its layout as CuTe DSL holds it
        if getattr(eng, "ptr_swizzle", None) is not None:  # a swizzled pointer names its swizzle
            align, sw = eng.ptr_align(tensor.offset), f", {eng.ptr_swizzle}"
        elif view is not None and view(tensor.offset, layout) is not None:
            text, align = view(tensor.offset, layout)
        head: List[Any] = ["raw_ptr(0x", ("addr", eng.param, tensor.offset),
                           f": {eng.dtype.name}, {eng.memspace}, align<{align}>{sw}) o {text} = \n  ( "]
    elif isinstance(eng, RmemEngine):
        vals = eng.load(tensor.offset, tensor.layout)
        head = [f"{eng.raw_ptr_str(tensor.offset)} o {layout} = \n  ( "]
    else:
        raise TraceError(f"printf: cannot print a tensor over {type(eng).__name__} inside a kernel")
    parts = head
    for i, r in enumerate(vals.refs):
        if i:
            parts.append(", ")
        parts.append(("val", r, vals.dtype))
    parts.append(" )")
    return parts


def _arg_parts(a: Any, spec: Any = None) -> List[Any]:
    """The Printf parts of one argument; spec is its C conversion (None: by its type, as {})."""
    conv = spec if spec is not None and spec.conv is not None else None
    if is_sym(a):
        if conv is not None and conv.conv in "eEfFgG":
            from .cformat import _mismatch

            raise _mismatch(conv, f"the runtime integer {a.expr_str()}")
        return [("int", a, conv)] if conv is not None else [("int", a)]
    if isinstance(a, TraceValue):
        if len(a.refs) == 1 and a.shape == ():
            return [("val", a.refs[0], a.dtype, conv)] if conv is not None else [("val", a.refs[0], a.dtype)]
        if conv is not None:
            raise TraceError(f"cute.printf: the conversion '{conv.text}' needs one value, got a tensor value of "
                             f"shape {a.shape}; use {{}} to print it")
        parts: List[Any] = ["( "]
        for i, r in enumerate(a.refs):
            if i:
                parts.append(", ")
            parts.append(("val", r, a.dtype))
        parts.append(" )")
        return parts
    if hasattr(a, "engine") and hasattr(a, "layout"):
        if conv is not None:
            raise TraceError(f"cute.printf: the conversion '{conv.text}' cannot print a tensor; use {{}}")
        return _value_parts(a)
    if isinstance(a, tuple) and any(is_sym(x) for x in it.flatten_to_tuple(a) if not isinstance(x, tuple)):
        parts = ["("]
        for i, x in enumerate(a):
            if i:
                parts.append(",")
            parts.extend(_arg_parts(x))
        parts.append(")")
        return parts
    return [_fmt_static(a, spec)]


def printf(*args: Any, end: str = "\n", loc: Any = None, ip: Any = None) -> None:
    """Print at run time, as CuTe DSL's cute.printf: by every thread inside a kernel, once on the
    host. The format mixes ``{}`` (a value printed by its type) and C conversions (``%d``,
    ``%5.2f``, ``%x``, ...); a first argument that is not a string prints all arguments with
    ``{}``, separated by ``", "``. ``end`` (default a newline) is appended.

    Symbolic integers print their value per thread, tensors print their pointer, layout and
    values; dynamic values (``?`` to print()) print their values. Inside a ``@cute.jit``
    function, host-side printfs run after the trace, in order with the kernel launches.

    >>> printf("%d %f {} {}", 7, 3.14, True, (3, 8))
    7 3.140000 1 (3,8)
    """
    from .cformat import Spec, check_count, format_host, parse, split_args

    fmt, args = split_args(args)
    pieces = parse(fmt)
    check_count(fmt, pieces, args)
    if not tracing():
        from .host import host_print

        host_print(lambda: format_host(fmt, *args, end=end))
        return
    t = current("cute.printf")
    parts: List[Any] = []
    k = 0
    for p in pieces:
        if isinstance(p, Spec):
            parts.extend(_arg_parts(args[k], p))
            k += 1
        else:
            parts.append(p)
    parts.append(end)
    t.emit(Printf(parts))
