"""Integer expressions of the IR (``kernel/ir/symbolic.py``) printed as C: ``IntPrinter`` picks a C
type wide enough for every sub-expression (32-bit where the ranges allow, unsigned when nothing can
be negative), folds swizzles of sums (``swz_split``), and takes hoisted divisions and shared index
sums (the ``hoist`` and ``share`` passes) from the printer's callbacks.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from ...errors import TraceError
from ..ir.symbolic import BoolAnd, Cmp, DynDiv, Expr, FloorDiv, Lin, Mod, Mul, Swz, Var, add, mul
from ..analysis.bits import possible_bits as _possible_bits
from ..passes.share import PURE as _PURE

__all__ = ["IntPrinter", "int_expr", "swz_split", "possible_bits"]

def _subexprs(e: Any, out: List[Expr]) -> None:
    if isinstance(e, Expr):
        out.append(e)
        if isinstance(e, Lin):
            for a, _ in e.terms:
                _subexprs(a, out)
        elif isinstance(e, (FloorDiv, Mod, Swz)):
            _subexprs(e.a, out)
        elif isinstance(e, (Mul, Cmp, DynDiv)):
            _subexprs(e.a, out)
            _subexprs(e.b, out)
        elif isinstance(e, BoolAnd):
            for t in e.terms:
                _subexprs(t, out)


_VARS = {"tid": "threadIdx", "bid": "blockIdx"}


def swz_split(e: Swz) -> Optional[Tuple[Any, int, Any]]:
    """Split a swizzle of a sum, sw(X + Y + c), into (X, k, add) such that
    sw(X + Y + c) == (sw(X) ^ k) + add, add = Y + c_add, for every value of the atoms; None where
    nothing splits off (no constant and no term Y) or the identity is not proven.

    With top = m+s+b (sw changes bits [m, m+b) by the XOR of bits [m+s, top)): Y is the sum of the
    terms over a moving view's register (trace.RegVar with a proven possible-bits mask: what a loop
    changes, a pipeline stage's offset) that are multiples of 2**top, c_add is c with its bits below
    2**top cleared and c_or = c mod 2**top. (Other multiples of 2**top stay inside the swizzle:
    nvcc then shares sw(X + Y) between the accesses, which measured better for a stage computed
    from the loop index, sm80_gemm's.) Adding a multiple of 2**top leaves
    the bits sw reads alone and commutes with the XOR, which only touches bits below top; and
    where X can set none of c_or's bits, X + c_or == X ^ c_or (any sign: a + b == (a ^ b) +
    2 * (a & b) in two's complement), and sw is linear over XOR, so
    sw(X ^ c_or) == sw(X) ^ sw(c_or) with k = sw(c_or) a constant (_possible_bits proves the
    disjointness; tests/kernel/test_swz_print.py checks the identity exhaustively). sw(X) is then
    the same for every stage and constant: nvcc computes it once, outside the loop.

    >>> from cutelab.kernel.ir.symbolic import swizzle_expr
    >>> t = Var("tid.x", 128)
    >>> e = swizzle_expr(t * 64 + 2064, 3, 3, 3)
    >>> x, k, c_add = swz_split(e)
    >>> print(x.expr_str(), k, c_add)
    (64 * tid.x) 16 2048
    >>> swz_split(swizzle_expr(t * 8 + 8, 3, 3, 3)) is None  # 8 * tid.x + 8 can carry
    True
    """
    a = e.a
    if not isinstance(a, Lin):
        return None
    top = e.m + e.s + e.b
    # a moving view's register holding a stage's offset (carry.Carry._prove_bits) whose bits
    # are all at or above 2**top
    low_mask = (1 << top) - 1
    high = [(t, c) for t, c in a.terms if getattr(t, "bits", None) is not None
            and not (_possible_bits(mul(t, c)) & low_mask)]
    if a.const == 0 and not high:
        return None
    c = a.const
    c_or = c & ((1 << top) - 1)  # c mod 2**top (non-negative for a negative c too)
    c_add: Any = c - c_or
    if len(high) == len(a.terms):  # nothing but the constant's low bits is swizzled: sw(c_or) + Y + c_add
        for t, cf in high:
            c_add = add(c_add, mul(t, cf))
        return 0, c_or ^ ((c_or & e.ymask) >> e.s), c_add
    x = add(a, -c)
    for t, cf in high:
        x = add(x, mul(t, -cf))
        c_add = add(c_add, mul(t, cf))
    if not isinstance(x, Expr):  # pragma: no cover - a low term remains
        return None
    if c_or and _possible_bits(x) & c_or:  # X + c_or may carry: it stays inside the swizzle
        if not high:
            return None
        return add(x, c_or), 0, c_add
    k = c_or ^ ((c_or & e.ymask) >> e.s)
    return x, k, c_add


class _IntPrinter:
    """Prints one integer expression in a C type wide enough for every sub-expression.

    ``var_map`` renames index variables (e.g. "bid.x" -> a remapped block index)."""

    def __init__(self, e: Any, extra: Tuple[int, int] = (0, 0), var_map: Optional[Dict[str, str]] = None,
                 share: Optional[Callable[[Expr], Optional[Tuple[str, str]]]] = None,
                 hoist: Optional[Callable[[Expr], Optional[str]]] = None, mod32: bool = False,
                 wrap64: bool = True):
        self.var_map = var_map or {}
        self._depth = 0
        self.hoist = hoist  # DynDiv or warp index (FloorDiv) -> a local computed at the kernel's entry, or None
        self.mod32 = mod32
        subs: List[Expr] = []
        _subexprs(e, subs)
        # sums of terms held in locals (see _Shared): only where nothing reads a register
        self.share = share if share is not None and all(
            s.name.startswith(_PURE) for s in subs if isinstance(s, Var)) else None
        lo = min([s.lo for s in subs] + [extra[0], 0])
        hi = max([s.hi for s in subs] + [extra[1], 0])
        for s in subs:
            if isinstance(s, Lin):
                for a, c in s.terms:
                    lo = min(lo, c * a.lo, c * a.hi)
                    hi = max(hi, c * a.lo, c * a.hi)
        self.signed = lo < 0
        if self.signed:
            wide = lo < -(1 << 31) or hi >= (1 << 31)
            self.t, self.suffix = ("long long", "ll") if wide else ("int", "")
        else:
            wide = hi >= (1 << 32)
            self.t, self.suffix = ("unsigned long long", "ull") if wide else ("unsigned int", "u")
        # mod64: the ranges do not fit 64 bits (a product of two scalar arguments' full Int32 ranges), so the
        # sums and products are computed modulo 2**64 in unsigned long long and the result read as a long
        # long: the exact value wherever that value fits 64 bits. An access's offset does wherever it is in
        # bounds, which the launch checks with the actual scalars (analysis/bounds.py, check_deferred: its
        # numpy int64 evaluation wraps the same way), as CuTe DSL computes such an index in (wrapping) i32.
        # Divisions, remainders and comparisons are no ring operations: their operands must fit 64 bits.
        self.mod64 = False
        if mod32:  # the value is known to lie in [0, 2**32): sums and products are exact modulo 2**32
            self.signed, self.t, self.suffix = False, "unsigned int", "u"
        elif max(abs(lo), abs(hi)) >= (1 << 63):
            if not wrap64:
                raise TraceError(f"an index expression exceeds 64 bits: {_show(e)} ranges over [{lo}, {hi}], and "
                                 f"a division, remainder or comparison needs its operands exact")
            self.mod64 = True
            self.signed, self.t, self.suffix = False, "unsigned long long", "ull"

    def lit(self, c: int) -> str:
        return f"{c}{self.suffix}" if c >= 0 or not self.signed else f"({c}{self.suffix})"

    def _swz_text(self, a: Any, e: Swz) -> str:
        t = self(a)
        return f"({t} ^ (({t} & {self.lit(e.ymask)}) >> {e.s}))"

    def _plus(self, text: str, c: Any) -> str:
        """text + c, c an int or an expression (its constant added last: nvcc folds it into the
        access's immediate offset)."""
        if isinstance(c, Lin) and c.const:
            return self._plus(self._plus(text, add(c, -c.const)), c.const)
        if isinstance(c, Expr):
            return f"({text} + {self(c)})"
        if c > 0:
            return f"({text} + {self.lit(c)})"
        if c < 0:
            return f"({text} - {self.lit(-c)})"
        return text

    def _swz_fits(self, x: Any, e: Swz) -> bool:
        """Whether sw(x) and sw(x) ^ k stay in this printer's type. Unsigned types wrap: the
        identity of swz_split holds modulo 2**32 or 2**64 (it only moves bits below m+s+b), so
        any value does; signed ones must not overflow: x, sw(x) and sw(x) ^ k lie in
        [-2**n, 2**n) with n the larger of x's bit length and m+s+b."""
        if not self.signed:
            return True
        lo, hi = (x.lo, x.hi) if isinstance(x, Expr) else (int(x), int(x))
        if isinstance(x, Lin):  # printed term by term: no partial sum may overflow either
            hi = abs(x.const) + sum(max(abs(c * a.lo), abs(c * a.hi)) for a, c in x.terms)
        n = max(abs(lo).bit_length(), abs(hi).bit_length(), e.m + e.s + e.b)
        return n <= (63 if self.t == "long long" else 31)

    @property
    def c_type(self) -> str:
        """The C type of the printed expression (a long long for one computed modulo 2**64)."""
        return "long long" if self.mod64 else self.t

    def __call__(self, e: Any) -> str:
        if not self.mod64 or self._depth:
            return self._text(e)
        self._depth += 1
        try:
            return f"((long long){self._text(e)})"
        finally:
            self._depth -= 1

    def _text(self, e: Any) -> str:
        if not isinstance(e, Expr):
            return self.lit(int(e))
        if isinstance(e, FloorDiv) and self.hoist is not None:
            held = self.hoist(e)  # a warp index broadcast at the kernel's entry (the ``uniform`` pass)
            if held is not None:
                return f"(({self.t}){held})"
        if self.mod32 and isinstance(e, Mod) and e.c > 0 and (1 << 32) % e.c == 0:
            return f"({self(e.a)} % {self.lit(e.c)})"  # a power of two: (a mod 2**32) mod c == a mod c
        if self.mod32 and isinstance(e, Swz) and e.ymask < (1 << 32):
            # bitwise: the swizzle moves bits below 32 only, so its low 32 bits are those of the low 32
            # bits' swizzle (the printer's swz_split holds modulo 2**32 too)
            split = swz_split(e)
            if split is not None:
                x, k, c_add = split
                if not isinstance(x, Expr):  # all of it splits off: a constant and Y
                    return self._plus(self.lit(k), c_add)
                text = self._swz_text(x, e)
                text = f"({text} ^ {self.lit(k)})" if k else text
                return self._plus(text, c_add)
            return self._swz_text(e.a, e)
        if self.mod64 and isinstance(e, Mod) and e.c > 0 and (1 << 64) % e.c == 0:
            return f"({self(e.a)} % {self.lit(e.c)})"  # a power of two: (a mod 2**64) mod c == a mod c
        if (self.mod32 or self.mod64) and not isinstance(e, (Var, Lin, Mul, Swz)) \
                or self.mod32 and isinstance(e, Swz):
            # divisions, remainders and comparisons are not ring operations: their operands are printed
            # exactly (in a type their own ranges need), the result then taken modulo 2**32 (2**64). (A
            # swizzle moves bits below its top only: its low 64 bits are those of the low 64 bits' swizzle.)
            sub = _IntPrinter(e, var_map=self.var_map, share=self.share, hoist=self.hoist, wrap64=False)
            return f"(({self.t}){sub(e)})"
        if isinstance(e, Var):
            if e.name in self.var_map:
                return f"(({self.t}){self.var_map[e.name]})"
            if hasattr(e, "c_name"):  # a loop variable or a scalar argument
                return f"(({self.t}){e.c_name})"
            kind, axis = e.name.split(".")
            return f"(({self.t}){_VARS[kind]}.{axis})"
        if isinstance(e, Lin):
            held = self.share(e) if self.share is not None else None
            if held is not None:  # the terms are a local already: print it and the constant
                name, t = held
                s = name if t == self.t else f"(({self.t}){name})"
                if e.const == 0:
                    return s
                return f"({s} + {self.lit(e.const)})" if e.const > 0 else f"({s} - {self.lit(-e.const)})"
            parts = []
            for a, c in e.terms:
                s = self(a)
                if c == 1:
                    parts.append(f"+ {s}")
                elif c == -1:
                    parts.append(f"- {s}")
                elif c < 0:
                    parts.append(f"- {self.lit(-c)} * {s}")
                else:
                    parts.append(f"+ {self.lit(c)} * {s}")
            if e.const > 0:
                parts.append(f"+ {self.lit(e.const)}")
            elif e.const < 0:
                parts.append(f"- {self.lit(-e.const)}")
            text = " ".join(parts)
            text = text[2:] if text.startswith("+ ") else "0" + self.suffix + " " + text
            return f"({text})"
        if isinstance(e, FloorDiv):
            if e.a.lo >= 0:
                return f"({self(e.a)} / {self.lit(e.c)})"
            return f"(({self.t})cl_floordiv({self(e.a)}, {e.c}))"
        if isinstance(e, Mod):
            if e.a.lo >= 0:
                return f"({self(e.a)} % {self.lit(e.c)})"
            return f"(({self.t})cl_mod({self(e.a)}, {e.c}))"
        if isinstance(e, Mul):
            return f"({self(e.a)} * {self(e.b)})"
        if isinstance(e, DynDiv):  # floor division / remainder by a runtime value
            held = self.hoist(e) if self.hoist is not None else None
            if held is not None:  # computed once at the kernel's entry (see CudaRenderer.hoist_dyndiv)
                return f"(({self.t}){held})"
            f = "cl_floordiv" if e.op == "//" else "cl_mod"
            if _fits32(e.a) and _fits32(e.b):  # a 64-bit division is a long software routine
                return f"(({self.t}){f}32((int){self(e.a)}, (int){self(e.b)}))"
            return f"(({self.t}){f}((long long){self(e.a)}, (long long){self(e.b)}))"
        if isinstance(e, Swz):  # CuTe's Swizzle<b,m,s>: a ^ ((a & ymask) >> s)
            split = swz_split(e)
            if split is not None and self._swz_fits(split[0] if isinstance(split[0], Expr) else 0, e) \
                    and self._swz_fits(split[2], e):
                # sw(X + Y + c) == (sw(X) ^ k) + Y + c_add: sw(X) prints the same for every constant c
                # and stage offset Y, so nvcc computes it once and each access adds an XOR and an
                # immediate, and Y (swz_split)
                x, k, c_add = split
                if not isinstance(x, Expr):  # all of it splits off: a constant and Y
                    return self._plus(self.lit(k), c_add)
                text = self._swz_text(x, e)
                if k:
                    text = f"({text} ^ {self.lit(k)})"
                return self._plus(text, c_add)
            return self._swz_text(e.a, e)
        if isinstance(e, Cmp):
            return f"({self(e.a)} {e.op} {self(e.b)})"
        if isinstance(e, BoolAnd):
            return "(" + " && ".join(self(t) for t in e.terms) + ")"
        raise TraceError(f"the CUDA back end cannot print {e!r}")


_I32 = (-(1 << 31), (1 << 31) - 1)


def _show(e: Any) -> str:
    return e.expr_str() if isinstance(e, Expr) else str(e)


def _fits32(x: Any) -> bool:
    return not isinstance(x, Expr) or (_I32[0] <= x.lo and x.hi <= _I32[1])


def int_expr(e: Any, extra: Tuple[int, int] = (0, 0), var_map: Optional[Dict[str, str]] = None) -> Tuple[str, str]:
    """(C code, C type) of an integer expression; extra widens the range the type must hold."""
    p = _IntPrinter(e, extra, var_map)
    return p(e), p.c_type


IntPrinter = _IntPrinter
possible_bits = _possible_bits  # re-exported
