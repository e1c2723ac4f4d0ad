"""Objects that a runtime loop carries by CuTe DSL's value protocol.

A user type that implements ``__extract_mlir_values__`` and ``__new_from_mlir_values__`` (CuTe DSL's
``DynamicExpression``: a tile scheduler, its work-tile info) is carried through a runtime ``while``
loop by its values, as CuTe DSL yields them from its ``scf.while``: each value the object gives
(an index expression, a typed scalar, a tensor value, a Python number) lives in a mutable register;
inside and after the loop the variable is the object rebuilt (``__new_from_mlir_values__``) around
those registers' values. An object whose values include anything else (a tensor view, a layout)
is not carried this way (``leaves`` answers None) and keeps control._Carry's rules.

>>> class P:
...     def __init__(self, i): self.i = i
...     def __extract_mlir_values__(self): return [self.i]
...     def __new_from_mlir_values__(self, v): return P(v[0])
>>> leaves(P(3)), leaves(P("x")), leaves(3)
([3], None, None)
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

from ...errors import TraceError
from ..ir.nodes import Assign, Compute
from ..ir.symbolic import BoolAnd, Cmp, is_sym
from .trace import TraceValue


def leaves(v: Any) -> Optional[List[Any]]:
    """The values v carries by the protocol, or None when v is no such object or carries a value
    that no register can hold."""
    cls = type(v)  # the protocol's methods are the class's (an object answering any attribute is no carrier)
    if isinstance(v, type) or not (hasattr(cls, "__extract_mlir_values__") and hasattr(cls, "__new_from_mlir_values__")):
        return None
    out = list(v.__extract_mlir_values__())
    return out if all(_dtype(x) is not None for x in out) else None


def _dtype(x: Any) -> Any:
    """The register type of one carried value (None: not a value a register holds)."""
    from ...numeric import Boolean, Float32, FloatValue, Int32, Int64, IntValue

    if isinstance(x, TraceValue):
        return x.dtype
    if isinstance(x, (IntValue, FloatValue)):
        return x.dtype if x.dtype.width <= 64 else None
    if isinstance(x, (Cmp, BoolAnd)):
        return Boolean
    if is_sym(x):
        return Int32 if -(1 << 31) <= x.lo and x.hi < (1 << 31) else Int64
    if isinstance(x, bool):
        return Boolean
    if isinstance(x, int):
        return Int32 if -(1 << 31) <= x < (1 << 31) else Int64
    if isinstance(x, float):
        return Float32
    return None


class Carried:
    """The registers of one carried object: ``template`` rebuilds it, ``regs`` hold its values."""

    def __init__(self, template: Any, regs: List[Tuple[Any, tuple]]):
        self.template, self.regs = template, regs


def declare(t: Any, name: str, v: Any, vals: List[Any]) -> Carried:
    """Registers for v's values, set to them before the region. A TraceError (nothing emitted) when a
    value was computed inside a loop or branch that has ended."""
    for x in vals:
        if isinstance(x, TraceValue):
            t.check_refs(x.refs, f"variable {name}")
        elif is_sym(x):
            t.check_refs([x], f"variable {name}")
    regs = []
    for x in vals:
        dt = _dtype(x)
        shape = x.shape if isinstance(x, TraceValue) else ()
        n = len(x.refs) if isinstance(x, TraceValue) else 1
        r = t.new_reg(dt, n, mutable=True)
        regs.append((r, shape))
        _assign(t, r, x, name)
    return Carried(v, regs)


def _assign(t: Any, r: Any, x: Any, name: str) -> None:
    from ...numeric import FloatValue, IntValue

    if isinstance(x, TraceValue):
        if len(x.refs) != r.n:
            raise TraceError(f"kernel {t.name}: variable '{name}' carries a tensor value of {r.n} elements into a "
                             f"runtime while loop and one of {len(x.refs)} out of an iteration")
        if x.dtype.name != r.dtype.name:
            x = x.to(r.dtype)
        t.check_refs(x.refs, f"variable {name}")
        t.emit(Assign(r, tuple(range(r.n)), x.refs))
        return
    if r.n != 1:
        raise TraceError(f"kernel {t.name}: variable '{name}' carries a tensor value of {r.n} elements into a "
                         f"runtime while loop and the scalar {x!r} out of an iteration")
    if isinstance(x, FloatValue):
        val: Any = float(x)
    elif isinstance(x, IntValue):
        val = int(x)
    elif is_sym(x):
        t.check_refs([x], f"variable {name}")
        val = x
    elif isinstance(x, (bool, int, float)):
        val = int(x) if isinstance(x, bool) else x
    else:
        raise TraceError(f"kernel {t.name}: variable '{name}' carries {x!r} ({type(x).__name__}) out of an "
                         f"iteration of a runtime while loop; its __extract_mlir_values__ must give numbers, "
                         f"index values or tensor values")
    if isinstance(val, float) and r.dtype.kind != "float":
        raise TraceError(f"kernel {t.name}: variable '{name}' carries a {r.dtype} into a runtime while loop and "
                         f"the float {val!r} out of an iteration; a carried value keeps its type")
    t.emit(Assign(r, (0,), (val,)))


def snap(t: Any, c: Carried) -> Any:
    """The object rebuilt around its registers' values now."""
    vals = []
    for r, shape in c.regs:
        dst = t.new_reg(r.dtype, r.n)
        t.emit(Compute(dst, "mov", (tuple((r, i) for i in range(r.n)),)))
        vals.append(TraceValue([(dst, i) for i in range(r.n)], shape, r.dtype))
    return c.template.__new_from_mlir_values__(vals)


def leave(t: Any, name: str, c: Carried, v: Any, what: str, where: str) -> None:
    """The registers set to v's values at the end of the region."""
    vals = leaves(v)
    if vals is None or len(vals) != len(c.regs):
        got = "nothing" if vals is None else f"{len(vals)} values"
        raise TraceError(
            f"kernel {t.name}: variable '{name}' is a {type(c.template).__name__} carried by its "
            f"{len(c.regs)} values through the {what} at {where}, and at the end of it {v!r} ({got}); a carried "
            f"object must keep its type and its number of values")
    for (r, _), x in zip(c.regs, vals):
        _assign(t, r, x, name)
