"""Symbolic integers: expressions of thread and block indices, with ranges and divisibility.

A kernel is traced once, with ``thread_idx``/``block_idx`` standing for every thread at once.
The layout algebra stays static (shapes and strides are Python ints); only offsets that depend
on the indices become expressions. Each expression knows

- its range ``[lo, hi]`` over all threads of the launch (the indices' extents are known when
  the kernel is launched), used to prove accesses in bounds and to pick 32- or 64-bit math;
- its divisibility ``div``: an integer that divides its value for every thread, used to prove
  alignment of vector loads and stores (and printed as ``align<N>`` like CuTe DSL).

Expressions are kept in a canonical linear form ``c0 + c1*a1 + c2*a2 + ...`` over *atoms*
(indices, floor divisions, remainders, products), with floor division and remainder by
constants simplified using the ranges: ``(256*b + t) // 512 == b // 2`` when ``0 <= t < 256``.

>>> t = Var("tid.x", 256)
>>> e = (t // 8) * 16384 + (t % 8) * 8
>>> e.lo, e.hi, e.div
(0, 507960, 8)
>>> b = Var("bid.x", 16384)
>>> print(((b * 256 + t) // 512).expr_str())
(bid.x // 2)
>>> str(t)
'?'
"""

from __future__ import annotations

from math import gcd
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

from ...errors import TraceError
from ...tracing import SymbolicIndex
from ...tracing import hooks as _hooks  # index_value: the tracer's value holding an index (frontend/trace.py)

__all__ = ["Expr", "Var", "Lin", "FloorDiv", "Mod", "Mul", "Cmp", "BoolAnd", "Swz", "DynDiv", "is_sym", "lin_form",
           "sym_range", "sym_div", "evaluate", "atoms", "swizzle_expr"]


def is_sym(x: Any) -> bool:
    return isinstance(x, Expr)


def _as_int(x: Any) -> Any:
    """Python ints (and numpy integers) become int; Exprs stay; anything else is refused."""
    if isinstance(x, Expr):
        return x
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, (int, np.integer)):
        src = _launch_zero(x)
        return int(x) if src is None else src
    return NotImplemented


def _is_float(x: Any) -> bool:
    return isinstance(x, (float, np.floating))


def _float_op(e: "Expr", o: Any, name: str) -> Any:
    """``i * 1.0`` with i a symbolic index: as in CuTe DSL, the Int32 index converts to Float32 (a value
    in a register) and the arithmetic is on Float32."""
    from ...numeric import Float32, Int32

    return getattr(_hooks.index_value(e, Int32).to(Float32), name)(o)


def _int_op(e: "Expr", o: Any, name: str) -> Any:
    """A bitwise operator on a symbolic index: the operation on its Int32 (Int64 past Int32's range)
    value in a register."""
    from ...numeric import Int32, Int64

    dt = Int32 if -(1 << 31) <= e.lo and e.hi < (1 << 31) else Int64
    return getattr(_hooks.index_value(e, dt), name)(o)


class Expr:
    """A symbolic integer. Arithmetic builds simplified expressions; ``str`` prints ``?``.

    Subclasses set ``key`` (a structural, hashable identity), ``lo``, ``hi`` and ``div``.
    """

    __slots__ = ("key", "lo", "hi", "div")

    # ---- arithmetic
    def __add__(self, o: Any) -> Any:
        if _is_float(o):
            return _float_op(self, o, "__add__")
        o = _as_int(o)
        return NotImplemented if o is NotImplemented else add(self, o)

    def __radd__(self, o: Any) -> Any:
        if _is_float(o):
            return _float_op(self, o, "__radd__")
        o = _as_int(o)
        return NotImplemented if o is NotImplemented else add(o, self)

    def __sub__(self, o: Any) -> Any:
        if _is_float(o):
            return _float_op(self, o, "__sub__")
        o = _as_int(o)
        return NotImplemented if o is NotImplemented else add(self, mul(o, -1))

    def __rsub__(self, o: Any) -> Any:
        if _is_float(o):
            return _float_op(self, o, "__rsub__")
        o = _as_int(o)
        return NotImplemented if o is NotImplemented else add(o, mul(self, -1))

    def __neg__(self) -> Any:
        return mul(self, -1)

    def __pos__(self) -> "Expr":
        return self

    def __mul__(self, o: Any) -> Any:
        if _is_float(o):
            return _float_op(self, o, "__mul__")
        o = _as_int(o)
        return NotImplemented if o is NotImplemented else mul(self, o)

    def __rmul__(self, o: Any) -> Any:
        if _is_float(o):
            return _float_op(self, o, "__rmul__")
        o = _as_int(o)
        return NotImplemented if o is NotImplemented else mul(o, self)

    def __floordiv__(self, o: Any) -> Any:
        o = _as_int(o)
        return NotImplemented if o is NotImplemented else floordiv(self, o)

    def __rfloordiv__(self, o: Any) -> Any:
        o = _as_int(o)
        return NotImplemented if o is NotImplemented else floordiv(o, self)

    def __mod__(self, o: Any) -> Any:
        o = _as_int(o)
        return NotImplemented if o is NotImplemented else mod(self, o)

    def __rmod__(self, o: Any) -> Any:
        o = _as_int(o)
        return NotImplemented if o is NotImplemented else mod(o, self)

    def __truediv__(self, o: Any) -> Any:
        if _is_float(o):
            return _float_op(self, o, "__truediv__")
        raise TraceError(
            f"true division '/' of the symbolic integer {self.expr_str()} is not supported in a kernel; "
            f"use '//' for integer division"
        )

    def __rtruediv__(self, o: Any) -> Any:
        if _is_float(o):
            return _float_op(self, o, "__rtruediv__")
        return self.__truediv__(o)

    @property
    def width(self) -> int:
        """The bits of the integer a kernel holds the index in (``value.width`` of CuTe DSL's Int32): 32,
        or 64 where its range passes Int32's."""
        return 32 if -(1 << 31) <= self.lo and self.hi < (1 << 31) else 64

    # ---- bitwise operators: x & (2**n - 1) and x >> k of a non-negative x, and x << k, stay indices
    # (x % 2**n, x // 2**k, x * 2**k); the others
    # are the Int32 operation on the index's value in a register, as CuTe DSL computes them
    def __and__(self, o: Any) -> Any:
        c = _as_int(o)
        if isinstance(c, int) and c >= 0 and (c + 1) & c == 0 and self.lo >= 0:
            return mod(self, c + 1)
        return _int_op(self, o, "__and__")

    def __rand__(self, o: Any) -> Any:
        return self.__and__(o)

    def __or__(self, o: Any) -> Any:
        return _int_op(self, o, "__or__")

    def __ror__(self, o: Any) -> Any:
        return _int_op(self, o, "__ror__")

    def __xor__(self, o: Any) -> Any:
        return _int_op(self, o, "__xor__")

    def __rxor__(self, o: Any) -> Any:
        return _int_op(self, o, "__rxor__")

    def __lshift__(self, o: Any) -> Any:
        c = _as_int(o)
        if isinstance(c, int) and 0 <= c < 32:  # x << k is x * 2**k: still an index
            return mul(self, 1 << c)
        return _int_op(self, o, "__lshift__")

    def __rlshift__(self, o: Any) -> Any:  # (Int32(1) << n): the operation on the index's value in a register
        return _int_op(self, o, "__rlshift__")

    def __rrshift__(self, o: Any) -> Any:
        return _int_op(self, o, "__rrshift__")

    def __rshift__(self, o: Any) -> Any:
        c = _as_int(o)
        if isinstance(c, int) and 0 <= c < 63 and self.lo >= 0:  # x >> k of x >= 0 is x // 2**k: still an index
            return floordiv(self, 1 << c)
        return _int_op(self, o, "__rshift__")

    # ---- comparisons build symbolic booleans; bool() decides them when the ranges allow
    def __lt__(self, o: Any) -> Any:
        return Cmp.make("<", self, o)

    def __le__(self, o: Any) -> Any:
        return Cmp.make("<=", self, o)

    def __gt__(self, o: Any) -> Any:
        return Cmp.make(">", self, o)

    def __ge__(self, o: Any) -> Any:
        return Cmp.make(">=", self, o)

    def __eq__(self, o: Any) -> Any:  # type: ignore[override]
        return Cmp.make("==", self, o)

    def __ne__(self, o: Any) -> Any:  # type: ignore[override]
        return Cmp.make("!=", self, o)

    def __hash__(self) -> int:
        return hash(self.key)

    def __bool__(self) -> bool:
        if self.lo > 0 or self.hi < 0:
            return True
        if self.lo == self.hi == 0:
            return False
        dims = _dims_note(self)
        if dims:
            raise TraceError(f"the truth of {self.expr_str()} is not known at trace time: {dims}; Python "
                             f"'if'/'while' on it is not supported (use it in a runtime branch or loop)")
        raise TraceError(
            f"the truth of {self.expr_str()} depends on {depends_note(self)}; cutelab traces a kernel "
            f"once for all threads and traces a runtime loop's body once, so Python 'if'/'while' on such values "
            f"is not supported"
        )

    def __index__(self) -> int:
        dims = _dims_note(self)
        if dims:
            raise TraceError(f"{self.expr_str()} has no Python int value at trace time: {dims} (it cannot size "
                             f"a range, a static shape or a list index)")
        raise TraceError(
            f"{self.expr_str()} depends on {depends_note(self)} and has no Python int value at trace "
            f"time (it cannot size a range, a shape or a list index)"
        )

    __int__ = __index__

    def to(self, dtype: Any) -> Any:
        """The index as a value of dtype, as CuTe DSL's ``Int32(i).to(dtype)`` (``cutlass.Int64(i)``
        calls it): an integer type of 32 bits or more keeps the index symbolic (its math is exact,
        its width follows its range); a narrower integer, a Boolean or a float is a value in a register."""
        from ...numeric import Int32, Int64

        if dtype.kind in ("int", "uint") and dtype.width >= 32:
            return self
        src = Int32 if -(1 << 31) <= self.lo and self.hi < (1 << 31) else Int64
        return _hooks.index_value(self, src).to(dtype)

    def ir_value(self, *, loc: Any = None, ip: Any = None) -> "Expr":
        """CuTe DSL's MLIR value of an index (``i.ir_value()``, an operand of ``llvm.inline_asm``): the index."""
        return self

    # ---- printing: CuTe DSL prints dynamic values as '?', with a known divisor as '?{div=16}'
    def __str__(self) -> str:
        return f"?{{div={self.div}}}" if self.div > 1 else "?"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __repr__(self) -> str:
        return f"Expr({self.expr_str()} in [{self.lo}, {self.hi}], div {self.div})"

    def expr_str(self) -> str:
        raise NotImplementedError

    @property
    def is_nonneg(self) -> bool:
        return self.lo >= 0

    def launch_note(self) -> str:
        """Which launch dimensions the expression reads, for an error (empty where none)."""
        return _dims_note(self)

    def launch_value(self) -> Any:
        """The value for the launch being traced where every atom has one (``ir.nodes.DimVar``: a launch
        dimension), else None: a layout, whose shapes are static, folds such a value (``layout._normalize``)."""
        vs = atoms(self)
        if not vs or not all(getattr(v, "value", None) is not None for v in vs):
            return None
        return int(evaluate(self, {v.name: v.value for v in vs}))


def depends_note(e: Any) -> str:
    """What an index expression's runtime value depends on, as error messages say it: the index of a
    runtime loop (with the loop's line where known), the thread or block index, a kernel argument, a
    value held in a register.

    >>> depends_note(Var("tid.x", 32) * 4 + 1)
    'the thread index (tid.x)'
    """
    out: List[str] = []
    for a in atoms(e):
        name = getattr(a, "name", "")
        if name.startswith("loop."):
            site = getattr(a, "site", None)
            what = f"the index of the runtime loop{f' at {site}' if site else ''} ({name})"
        elif name.startswith("reg."):
            what = f"a value held in a register ({getattr(a, 'c_name', name)})"
        elif name.startswith("tid."):
            what = f"the thread index ({name})"
        elif name.startswith("bid."):
            what = f"the block index ({name})"
        elif name.startswith("arg."):
            what = f"the kernel argument {name[4:]}"
        else:
            what = name or "a runtime value"
        if what not in out:
            out.append(what)
    return ", ".join(out) or "a runtime value"


def _dims_note(e: "Expr") -> str:
    """For an error about e: which launch dimensions (``ir.nodes.DimVar``, a ``what`` attribute) it reads."""
    whats = sorted({v.what for v in atoms(e) if getattr(v, "what", None)})
    if not whats:
        return ""
    return (f"it reads {', '.join(whats)}, {'a runtime value' if len(whats) == 1 else 'runtime values'} in a "
            f"kernel, as in CuTe DSL (the launch's special registers)")


class Var(Expr):
    """An index: ``name`` ranges over [0, extent)."""

    __slots__ = ("name", "extent")

    def __init__(self, name: str, extent: int):
        if extent < 1:
            raise TraceError(f"index {name} has an empty range (extent {extent})")
        self.name = name
        self.extent = int(extent)
        self.key = ("var", name)
        self.lo, self.hi, self.div = 0, self.extent - 1, 1

    def expr_str(self) -> str:
        return self.name


class FloorDiv(Expr):
    """``a // c`` for a positive int c (floor division, as in Python)."""

    __slots__ = ("a", "c")

    def __init__(self, a: Expr, c: int):
        self.a, self.c = a, c
        self.key = ("//", a.key, c)
        self.lo, self.hi = a.lo // c, a.hi // c
        da = a.div
        self.div = da // c if da % c == 0 else 1

    def expr_str(self) -> str:
        return f"({self.a.expr_str()} // {self.c})"


class Mod(Expr):
    """``a % c`` for a positive int c (the remainder of floor division, in [0, c))."""

    __slots__ = ("a", "c")

    def __init__(self, a: Expr, c: int):
        self.a, self.c = a, c
        self.key = ("%", a.key, c)
        if a.lo >= 0:
            self.lo, self.hi = 0, min(c - 1, a.hi)
        else:
            self.lo, self.hi = 0, c - 1
        self.div = gcd(a.div, c)

    def expr_str(self) -> str:
        return f"({self.a.expr_str()} % {self.c})"


class Mul(Expr):
    """A product of two non-constant expressions."""

    __slots__ = ("a", "b")

    def __init__(self, a: Expr, b: Expr):
        if repr(a.key) > repr(b.key):
            a, b = b, a
        self.a, self.b = a, b
        self.key = ("*", a.key, b.key)
        cands = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
        self.lo, self.hi = min(cands), max(cands)
        self.div = a.div * b.div

    def expr_str(self) -> str:
        return f"({self.a.expr_str()} * {self.b.expr_str()})"


class Swz(Expr):
    """CuTe's ``Swizzle<b,m,s>`` of a non-negative expression: ``a ^ ((a & ymask) >> s)`` with
    ``ymask`` the b bits from m+s (s > 0), so bits [m, m+b) take the XOR of bits [m+s, m+s+b).

    Range: only bits [m, m+b) change, so the value stays in the 2**(m+b)-aligned blocks of
    ``a``'s range, and a multiple of the divisibility: the ends are rounded to it. Divisibility:
    bits below m are kept; all of ``a``'s power-of-two divisor when it clears the source bits too."""

    __slots__ = ("a", "b", "m", "s")

    def __init__(self, a: Expr, b: int, m: int, s: int):
        self.a, self.b, self.m, self.s = a, b, m, s
        self.key = ("swz", a.key, b, m, s)
        top = 1 << (m + s + b)
        blk = 1 << (m + b)
        d = a.div & -a.div if a.div else top
        self.div = d if d >= top else min(d, 1 << m)
        lo, hi = (a.lo // blk) * blk, (a.hi // blk) * blk + blk - 1
        self.lo = -(-lo // self.div) * self.div
        self.hi = (hi // self.div) * self.div

    @property
    def ymask(self) -> int:
        return ((1 << self.b) - 1) << (self.m + self.s)

    def expr_str(self) -> str:
        return f"swizzle<{self.b},{self.m},{self.s}>({self.a.expr_str()})"


def swizzle_expr(x: Any, b: int, m: int, s: int) -> Any:
    """Swizzle<b,m,s> of an int or a symbolic integer (s > 0: CuTe's shared-memory swizzles;
    b == 0 is the identity).

    >>> t = Var("tid.x", 128)
    >>> e = swizzle_expr(t * 64, 3, 3, 3)
    >>> print(e.expr_str(), e.lo, e.hi, e.div)
    swizzle<3,3,3>((64 * tid.x)) 0 8184 8
    >>> [int(evaluate(e, {"tid.x": np.int64(i)})) for i in range(3)]
    [0, 72, 144]
    """
    if b == 0:
        return x
    if s <= 0:
        raise TraceError(f"Swizzle<{b},{m},{s}> of a symbolic offset: only a positive shift is supported")
    if not isinstance(x, Expr):
        x = int(x)
        return x ^ ((x & (((1 << b) - 1) << (m + s))) >> s)
    # a possibly negative offset (e.g. a view's offset carried in a register) is fine: the XOR is
    # two's complement in Python and in CUDA alike, and the access's bounds are checked (or guarded)
    top = 1 << (m + s + b)
    if x.div % top == 0:  # the source bits are zero for every thread: nothing moves
        return x
    return Swz(x, b, m, s)


class DynDiv(Expr):
    """``a // b`` or ``a % b`` (Python's floor semantics, ``op``) by a non-constant divisor ``b``
    (a runtime scalar argument, or an expression of one). A zero divisor is refused when the
    kernel runs."""

    __slots__ = ("a", "b", "op")

    def __init__(self, a: Any, b: Expr, op: str):
        self.a, self.b, self.op = a, b, op
        self.key = ("dyn" + op, _key(a), b.key)
        alo, ahi = sym_range(a)
        if op == "%":
            m = max(abs(b.lo), abs(b.hi))
            self.lo = 0 if b.lo > 0 else -(m - 1)
            self.hi = m - 1 if b.hi > 0 else 0
        elif b.lo > 0:
            q = [alo // b.lo, alo // b.hi, ahi // b.lo, ahi // b.hi]
            self.lo, self.hi = min(q), max(q)
        else:  # any sign: |a // b| <= |a| + 1
            m = max(abs(alo), abs(ahi)) + 1
            self.lo, self.hi = -m, m
        self.div = 1

    def expr_str(self) -> str:
        return f"({_str(self.a)} {self.op} {self.b.expr_str()})"


class Lin(Expr):
    """``const + sum(coef * atom)``: the canonical form of sums (at least one atom)."""

    __slots__ = ("terms", "const")

    def __init__(self, terms: Tuple[Tuple[Expr, int], ...], const: int):
        self.terms = terms
        self.const = const
        self.key = ("+", tuple((a.key, c) for a, c in terms), const)
        lo = hi = const
        d = abs(const)
        for a, c in terms:
            if c > 0:
                lo += c * a.lo
                hi += c * a.hi
            else:
                lo += c * a.hi
                hi += c * a.lo
            d = gcd(d, abs(c) * a.div)
        self.lo, self.hi, self.div = lo, hi, d

    def expr_str(self) -> str:
        parts = []
        for a, c in self.terms:
            s = a.expr_str()
            parts.append(s if c == 1 else f"{c} * {s}")
        if self.const:
            parts.append(str(self.const))
        return "(" + " + ".join(parts) + ")"


class Cmp(Expr):
    """A comparison of symbolic integers; ``bool()`` works only where the ranges decide it."""

    __slots__ = ("op", "a", "b", "decided")

    _OPS: Dict[str, Callable[[Any, Any], Any]] = {
        "<": lambda x, y: x < y, "<=": lambda x, y: x <= y, ">": lambda x, y: x > y,
        ">=": lambda x, y: x >= y, "==": lambda x, y: x == y, "!=": lambda x, y: x != y,
    }

    @staticmethod
    def make(op: str, a: Any, b: Any) -> Any:
        b2 = _as_int(b)
        if b2 is NotImplemented:
            return NotImplemented
        return Cmp(op, a, b2)

    def __init__(self, op: str, a: Any, b: Any):
        self.op, self.a, self.b = op, a, b
        self.key = ("cmp", op, _key(a), _key(b))
        d = sym_range(add(a, mul(b, -1)))  # a - b
        lo, hi = d
        if op == "<":
            dec = True if hi < 0 else False if lo >= 0 else None
        elif op == "<=":
            dec = True if hi <= 0 else False if lo > 0 else None
        elif op == ">":
            dec = True if lo > 0 else False if hi <= 0 else None
        elif op == ">=":
            dec = True if lo >= 0 else False if hi < 0 else None
        elif op == "==":
            dec = True if lo == hi == 0 else False if (lo > 0 or hi < 0) else None
        else:
            dec = False if lo == hi == 0 else True if (lo > 0 or hi < 0) else None
        if dec is None:  # with the launch's dimensions (ir.nodes.DimVar) in place, the launch traced may decide it
            d = with_launch_values(add(a, mul(b, -1)))
            if d is not None and sym_range(d) != (lo, hi):
                dec = Cmp(op, d, 0).decided
        self.decided = dec
        self.lo, self.hi = (int(dec), int(dec)) if dec is not None else (0, 1)
        self.div = 1

    def __bool__(self) -> bool:
        if self.decided is not None:
            return self.decided
        dims = _dims_note(self)
        if dims:
            raise TraceError(f"the condition {self.expr_str()} is not known at trace time: {dims}; Python "
                             f"'if'/'while' on it is not supported (use it in a runtime branch or loop)")
        raise TraceError(
            f"the condition {self.expr_str()} depends on {depends_note(self)}; cutelab traces a kernel once for "
            f"all threads and a runtime loop's body once, so Python 'if'/'while' on it is not supported"
        )

    def expr_str(self) -> str:
        return f"({_str(self.a)} {self.op} {_str(self.b)})"


class BoolAnd(Expr):
    """The conjunction of symbolic conditions (cute.elem_less of runtime coordinates)."""

    __slots__ = ("terms",)

    def __init__(self, terms: Tuple[Expr, ...]):
        self.terms = tuple(terms)
        self.key = ("and",) + tuple(t.key for t in self.terms)
        self.lo, self.hi, self.div = 0, 1, 1

    def __bool__(self) -> bool:
        raise TraceError(
            f"the condition {self.expr_str()} depends on {depends_note(self)}; cutelab traces a kernel once for "
            f"all threads and a runtime loop's body once, so Python 'if'/'while' on it is not supported"
        )

    def expr_str(self) -> str:
        return "(" + " and ".join(t.expr_str() for t in self.terms) + ")"


def _key(x: Any) -> Any:
    return x.key if isinstance(x, Expr) else ("const", x)


def _str(x: Any) -> str:
    return x.expr_str() if isinstance(x, Expr) else str(x)


# --------------------------------------------------------------------------- canonical forms

def lin_form(x: Any) -> tuple:
    """(dict key -> [atom, coef], const) for an int or an Expr."""
    if not isinstance(x, Expr):
        return {}, int(x)
    if isinstance(x, Lin):
        return {a.key: [a, c] for a, c in x.terms}, x.const
    if x.lo == x.hi and not isinstance(x, Cmp):  # a constant in disguise (e.g. an index of extent 1)
        return {}, x.lo
    return {x.key: [x, 1]}, 0


def _recombine(terms: dict) -> tuple:
    """Fold c*(x % k) + c*k*(x // k) back into c*x (x == k*(x//k) + x%k). Returns (terms, const)."""
    const = 0
    changed = True
    while changed:
        changed = False
        for key, (atom, c) in list(terms.items()):
            if not isinstance(atom, Mod) or c == 0:
                continue
            dkey = ("//", atom.a.key, atom.c)
            if dkey in terms and terms[dkey][1] == c * atom.c:
                del terms[key]
                del terms[dkey]
                t, k = lin_form(atom.a)
                const += c * k
                for kk, (aa, cc) in t.items():
                    if kk in terms:
                        terms[kk][1] += c * cc
                    else:
                        terms[kk] = [aa, c * cc]
                changed = True
                break
    return terms, const


def _build(terms: dict, const: int) -> Any:
    if len(terms) > 1 and any(isinstance(a, Mod) for a, _ in terms.values()):
        terms, k = _recombine({kk: [a, c] for kk, (a, c) in terms.items()})
        const += k
    items = []
    for a, c in terms.values():
        if c == 0:
            continue
        if a.lo == a.hi:
            const += c * a.lo
            continue
        items.append((a, c))
    if not items:
        return const
    items.sort(key=lambda ac: repr(ac[0].key))
    if len(items) == 1 and items[0][1] == 1 and const == 0:
        return items[0][0]
    return Lin(tuple(items), const)


def add(a: Any, b: Any) -> Any:
    if not isinstance(a, Expr) and not isinstance(b, Expr):
        return a + b
    ta, ca = lin_form(a)
    tb, cb = lin_form(b)
    terms = {k: [v[0], v[1]] for k, v in ta.items()}
    for k, (atom, c) in tb.items():
        if k in terms:
            terms[k][1] += c
        else:
            terms[k] = [atom, c]
    return _build(terms, ca + cb)


def mul(a: Any, b: Any) -> Any:
    if not isinstance(a, Expr) and not isinstance(b, Expr):
        return a * b
    if not isinstance(a, Expr):
        a, b = b, a
    if not isinstance(b, Expr):
        k = int(b)
        if k == 0:
            return 0
        t, c = lin_form(a)
        return _build({key: [atom, coef * k] for key, (atom, coef) in t.items()}, c * k)
    if b.lo == b.hi:
        return mul(a, b.lo)
    if a.lo == a.hi:
        return mul(b, a.lo)
    return Mul(a, b)


def _split_by(terms: dict, g: int) -> tuple:
    """Split terms into (those whose coefficient g divides, scaled by 1/g) and the rest."""
    q, r = {}, {}
    for k, (atom, c) in terms.items():
        if c % g == 0:
            q[k] = [atom, c // g]
        else:
            r[k] = [atom, c]
    return q, r


def _launch_zero(c: Any) -> Any:
    """The launch-dimension expression that a layout's shape folded to 0 (``layout._normalize``), or None: an
    operand of index arithmetic (``_as_int``), so that a division by it stays a runtime division (as CuTe DSL's
    layout is dynamic there), refused only if it runs. A plain int (the common operand) is never one."""
    if type(c) is int:
        return None
    src = getattr(c, "folded_from", None)
    return src if src is not None and int(c) == 0 else None


def floordiv(a: Any, c: Any) -> Any:
    if not isinstance(a, Expr) and not isinstance(c, Expr):
        if c == 0:
            raise TraceError(f"integer division of {a} by zero")
        return a // c
    if isinstance(c, Expr):
        if c.lo == c.hi:
            return floordiv(a, c.lo)
        return DynDiv(a, c, "//")
    c = int(c)
    if c == 0:
        raise TraceError(f"integer division of {a.expr_str()} by zero")
    if c < 0:
        return floordiv(mul(a, -1), -c)  # floor(a / c) == floor(-a / -c)
    if c == 1:
        return a
    terms, const = lin_form(a)
    # (c*Q + R) // c == Q + R // c, exactly, for floor division
    q, r = _split_by(terms, c)
    qc, rc = divmod(const, c)
    Q = _build(q, qc)
    R = _build(r, rc)
    return add(Q, _floordiv_rest(R, c))


def _floordiv_rest(R: Any, c: int) -> Any:
    """R // c where no term of R has a coefficient divisible by c."""
    if not isinstance(R, Expr):
        return R // c
    if R.lo // c == R.hi // c:
        return R.lo // c
    if isinstance(R, FloorDiv):  # (x // a) // c == x // (a * c)
        return floordiv(R.a, R.c * c)
    terms, const = lin_form(R)
    # R == g*A + r with 0 <= r < g and g | c: R // c == A // (c / g)
    for g in sorted({gcd(abs(coef), c) for _, coef in terms.values()}, reverse=True):
        if g <= 1:
            continue
        q, r = _split_by(terms, g)
        if not q:
            continue
        rest = _build(r, const % g)
        lo, hi = sym_range(rest)
        if 0 <= lo and hi < g:
            return floordiv(_build(q, const // g), c // g)
    return FloorDiv(R, c)


def mod(a: Any, c: Any) -> Any:
    if not isinstance(a, Expr) and not isinstance(c, Expr):
        if c == 0:
            raise TraceError(f"remainder of {a} by zero")
        return a % c
    if isinstance(c, Expr):
        if c.lo == c.hi:
            return mod(a, c.lo)
        return DynDiv(a, c, "%")
    c = int(c)
    if c == 0:
        raise TraceError(f"remainder of {a.expr_str()} by zero")
    if c < 0:
        return mul(mod(mul(a, -1), -c), -1)  # Python: a % c == -((-a) % -c)
    if c == 1:
        return 0
    terms, const = lin_form(a)
    _, r = _split_by(terms, c)  # multiples of c vanish
    R = _build(r, const % c)
    if not isinstance(R, Expr):
        return R % c
    if 0 <= R.lo and R.hi < c:
        return R
    if R.lo // c == R.hi // c:  # a constant shift: R % c == R - k*c
        return add(R, -(R.lo // c) * c)
    if isinstance(R, Mod) and R.c % c == 0:  # (x % (k*c)) % c == x % c
        return mod(R.a, c)
    terms, const = lin_form(R)
    for g in sorted({gcd(abs(coef), c) for _, coef in terms.values()}, reverse=True):
        if g <= 1:
            continue
        q, r = _split_by(terms, g)
        if not q:
            continue
        rest = _build(r, const % g)
        lo, hi = sym_range(rest)
        if 0 <= lo and hi < g:  # (g*A + r) % c == (A % (c/g)) * g + r
            return add(mul(mod(_build(q, const // g), c // g), g), rest)
    return Mod(R, c)


# --------------------------------------------------------------------------- queries

def sym_range(x: Any) -> tuple:
    """(lo, hi) of an int or Expr over all threads."""
    if isinstance(x, Expr):
        return x.lo, x.hi
    return int(x), int(x)


def sym_div(x: Any) -> int:
    """An integer known to divide x for every thread (0 for the constant 0)."""
    if isinstance(x, Expr):
        return x.div
    return abs(int(x))


def atoms(x: Any) -> list:
    """The index variables x depends on."""
    out: dict = {}

    def go(e: Any) -> None:
        if isinstance(e, Var):
            out[e.key] = e
        elif isinstance(e, Lin):
            for a, _ in e.terms:
                go(a)
        elif isinstance(e, (FloorDiv, Mod, Swz)):
            go(e.a)
        elif isinstance(e, (Mul, DynDiv)):
            go(e.a)
            go(e.b)
        elif isinstance(e, Cmp):
            go(e.a)
            go(e.b)
        elif isinstance(e, BoolAnd):
            for t in e.terms:
                go(t)

    go(x)
    return list(out.values())


def with_launch_values(x: Any) -> Any:
    """x with each launch dimension (``ir.nodes.DimVar``) replaced by the value of the launch being traced
    (other indices keep their ranges), or None where a part cannot be rebuilt (a swizzle, a comparison) or
    divides by a zero. The kernel is traced for its launch, so a comparison this decides is decided for it
    (CUTLASS's Hopper dense_gemm.py: ``cluster_id >= size(((8, cdimx // 8), cdimy))`` holds for no cluster
    of a grid whose cluster rows 8 divides).

    >>> from .nodes import DimVar
    >>> X = DimVar("nclusterid", "x", 64)
    >>> with_launch_values(floordiv(X, 8) * 8 + Var("bid.x", 4)).expr_str()
    '(bid.x + 64)'
    """
    if not isinstance(x, Expr):
        return x
    if isinstance(x, Var):
        v = getattr(x, "value", None)
        return x if v is None else int(v)
    if isinstance(x, Lin):
        acc: Any = x.const
        for a, c in x.terms:
            t = with_launch_values(a)
            if t is None:
                return None
            acc = add(acc, mul(t, c))
        return acc
    if isinstance(x, (FloorDiv, Mod)):
        t = with_launch_values(x.a)
        return None if t is None else (floordiv(t, x.c) if isinstance(x, FloorDiv) else mod(t, x.c))
    if isinstance(x, (Mul, DynDiv)):
        t, u = with_launch_values(x.a), with_launch_values(x.b)
        if t is None or u is None:
            return None
        if isinstance(x, Mul):
            return mul(t, u)
        if sym_range(u)[0] <= 0 <= sym_range(u)[1]:
            return None  # a divisor that may be zero: left to the run
        return floordiv(t, u) if x.op == "//" else mod(t, u)
    return None


def evaluate(x: Any, env: Dict[str, Any]) -> Any:
    """The value of x with each index name bound to an int or a numpy int64 array."""
    if not isinstance(x, Expr):
        return x
    if isinstance(x, Var):
        return env[x.name]
    if isinstance(x, Lin):
        acc: Any = x.const
        for a, c in x.terms:
            v = evaluate(a, env)
            acc = acc + (v if c == 1 else v * c)
        return acc
    if isinstance(x, FloorDiv):
        return evaluate(x.a, env) // x.c
    if isinstance(x, Mod):
        return evaluate(x.a, env) % x.c
    if isinstance(x, Mul):
        return evaluate(x.a, env) * evaluate(x.b, env)
    if isinstance(x, DynDiv):
        a, b = evaluate(x.a, env), evaluate(x.b, env)
        if np.any(np.asarray(b) == 0):
            from ...errors import LaunchError

            raise LaunchError(f"{'division' if x.op == '//' else 'remainder'} by zero: {x.expr_str()} with "
                              f"{x.b.expr_str()} == 0")
        return a // b if x.op == "//" else a % b
    if isinstance(x, Swz):
        v = evaluate(x.a, env)
        return v ^ ((v & x.ymask) >> x.s)
    if isinstance(x, Cmp):
        return Cmp._OPS[x.op](evaluate(x.a, env), evaluate(x.b, env))
    if isinstance(x, BoolAnd):
        acc: Any = True
        for t in x.terms:
            acc = np.logical_and(acc, evaluate(t, env))
        return acc
    raise TypeError(f"cannot evaluate {x!r}")


SymbolicIndex.register(Expr)  # the core knows a symbolic index by this (cutelab.tracing)
