"""The abstract values of the range analysis (``ranges``): ``Val`` (``sym + d``, ``d`` in an interval),\ntheir joins and widening, symbolic facts from branch conditions and the narrowing they allow, and\nthe substitution of registers' values into index expressions.
"""

from __future__ import annotations

from math import gcd
from typing import Any, Dict, List, Optional, Sequence, Tuple
import itertools

from ...errors import LaunchError
from ..ir.nodes import ArgVar, RegVar, _value_range
from ..ir.symbolic import BoolAnd, Cmp, DynDiv, Expr, FloorDiv, Lin, Mod, Mul, Swz, Var, add, atoms, floordiv, mod, mul, swizzle_expr, sym_range


_names = itertools.count()


def _tracked(dtype: Any) -> bool:
    return getattr(dtype, "kind", "float") in ("int", "uint", "bool")


def _fresh(prefix: str, lo: int, hi: int, div: int = 1) -> Any:
    """A new symbolic atom ranging over [lo, hi] (an int when lo == hi)."""
    if lo == hi:
        return lo
    v = Var(f"range.{prefix}{next(_names)}", 1)
    v.lo, v.hi, v.div = lo, hi, max(1, div)
    return v


class Val:
    """An abstract integer: ``sym + d`` for some ``d`` in ``[lo, hi]``; ``sym`` is 0 or an Expr that
    is the exact value per thread. ``cond`` is a Boolean's condition (see ``_facts``) when known;
    ``src`` the SSA register element this one is a copy of (refining one refines both)."""

    __slots__ = ("sym", "lo", "hi", "cond", "src")

    def __init__(self, sym: Any = 0, lo: int = 0, hi: int = 0, cond: Any = None, src: Any = None):
        if not isinstance(sym, Expr):
            lo, hi, sym = lo + int(sym), hi + int(sym), 0
        elif sym.lo == sym.hi:
            lo, hi, sym = lo + sym.lo, hi + sym.lo, 0
        self.sym, self.lo, self.hi, self.cond, self.src = sym, int(lo), int(hi), cond, src

    @staticmethod
    def top(dtype: Any) -> "Val":
        lo, hi = _value_range(dtype)
        return Val(0, lo, hi)

    @property
    def exact(self) -> bool:
        return self.lo == self.hi

    @property
    def const(self) -> Optional[int]:
        return self.lo if self.exact and not isinstance(self.sym, Expr) else None

    def expr(self) -> Any:
        """The exact value (an int or an Expr); only for exact values."""
        assert self.exact
        return add(self.sym, self.lo) if isinstance(self.sym, Expr) else self.lo

    def range(self) -> Tuple[int, int]:
        slo, shi = sym_range(self.sym)
        return slo + self.lo, shi + self.hi

    def key(self) -> Any:
        s = self.sym.key if isinstance(self.sym, Expr) else 0
        return (s, self.lo, self.hi, _fkey(self.cond), self.src and (self.src[0].id, self.src[1]))

    def with_src(self, src: Any) -> "Val":
        return Val(self.sym, self.lo, self.hi, self.cond, src)

    def __repr__(self) -> str:
        s = self.sym.expr_str() + " + " if isinstance(self.sym, Expr) else ""
        return f"Val({s}[{self.lo}, {self.hi}])"


def _fit(v: Val, dtype: Any) -> Val:
    """v as a register of dtype holds it: its type's whole range when it may wrap around."""
    tlo, thi = _value_range(dtype)
    lo, hi = v.range()
    if lo < tlo or hi > thi:
        return Val(0, tlo, thi)
    return v


def _join(a: Optional[Val], b: Optional[Val]) -> Optional[Val]:
    """The least Val holding both (None is 'no value', e.g. an unreachable path)."""
    if a is None:
        return b
    if b is None:
        return a
    cond = a.cond if _fkey(a.cond) == _fkey(b.cond) else None
    src = a.src if a.src == b.src else None
    if isinstance(a.sym, Expr) and isinstance(b.sym, Expr) and a.sym.key == b.sym.key:
        return Val(a.sym, min(a.lo, b.lo), max(a.hi, b.hi), cond, src)
    if not isinstance(a.sym, Expr) and not isinstance(b.sym, Expr):
        return Val(0, min(a.lo, b.lo), max(a.hi, b.hi), cond, src)
    (alo, ahi), (blo, bhi) = a.range(), b.range()
    return Val(0, min(alo, blo), max(ahi, bhi), cond, src)


def _widen(old: Val, new: Val, dtype: Any, thresholds: Sequence[int] = ()) -> Val:
    """new, with each end that moved past old's pushed out to the next threshold (the constants
    the loop compares with), or to its type's end."""
    new = _join(old, new)  # widening only grows: the iteration is monotone
    tlo, thi = _value_range(dtype)
    if isinstance(new.sym, Expr):
        if isinstance(old.sym, Expr) and old.sym.key == new.sym.key:
            slo, shi = sym_range(new.sym)
            return Val(new.sym, new.lo if new.lo >= old.lo else tlo - slo, new.hi if new.hi <= old.hi else thi - shi)
        new = Val(0, *new.range())
    (olo, ohi), (nlo, nhi) = old.range(), new.range()
    if nlo < olo:
        nlo = max([t for t in thresholds if tlo <= t <= nlo] or [tlo])
    if nhi > ohi:
        nhi = min([t for t in thresholds if nhi <= t <= thi] or [thi])
    return Val(0, nlo, nhi)


_NEG = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


_SWAP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


_CMP_OPS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def _fkey(f: Any) -> Any:
    if f is None:
        return None
    if f[0] == "sym":
        return ("sym", f[1].key)
    if f[0] == "rel":
        return ("rel", f[1], f[3].key(), f[5].key())
    return (f[0],) + tuple(_fkey(g) for g in f[1:])


def _not(f: Any) -> Any:
    if f is None:
        return None
    if f[0] == "not":
        return f[1]
    return ("not", f)


def _facts(f: Any, pol: bool) -> List[Any]:
    """Symbolic conditions (Exprs) that hold where formula f has truth value pol."""
    if f is None:
        return []
    k = f[0]
    if k == "not":
        return _facts(f[1], not pol)
    if k == "and":
        return _facts(f[1], True) + _facts(f[2], True) if pol else []
    if k == "or":
        return [] if pol else _facts(f[1], False) + _facts(f[2], False)
    if k == "sym":
        e = f[1]
        if isinstance(e, BoolAnd):
            return list(e.terms) if pol else []
        if isinstance(e, Cmp):
            return [e] if pol else [Cmp(_NEG[e.op], e.a, e.b)]
        return []
    _, op, _ra, va, _rb, vb = f
    if not (va.exact and vb.exact):
        return []
    a, b = va.expr(), vb.expr()
    if not isinstance(a, Expr) and not isinstance(b, Expr):
        return []
    return [Cmp(op if pol else _NEG[op], a, b)]


def _narrow(v: Val, op: str, k: int) -> Optional[Val]:
    """v where ``v op k`` holds (None: nowhere). Only an interval (no sym) is narrowed."""
    if isinstance(v.sym, Expr):
        return v
    lo, hi = v.lo, v.hi
    if op == "<":
        hi = min(hi, k - 1)
    elif op == "<=":
        hi = min(hi, k)
    elif op == ">":
        lo = max(lo, k + 1)
    elif op == ">=":
        lo = max(lo, k)
    elif op == "==":
        lo, hi = max(lo, k), min(hi, k)
    elif op == "!=":
        if lo == k:
            lo += 1
        if hi == k:
            hi -= 1
    if lo > hi:
        return None
    return Val(0, lo, hi, v.cond, v.src)


State = Optional[Dict[Any, Val]]  # None: unreachable


def _refine(S: State, f: Any, pol: bool) -> State:
    """S where condition f has truth value pol: the registers it compares are narrowed."""
    if S is None or f is None:
        return S
    k = f[0]
    if k == "not":
        return _refine(S, f[1], not pol)
    if k == "and" and pol or k == "or" and not pol:
        return _refine(_refine(S, f[1], pol), f[2], pol)
    if k != "rel":
        return S
    _, op, ra, va, rb, vb = f
    op = op if pol else _NEG[op]
    if vb.const is not None and ra is not None:
        return _narrow_ref(S, ra, op, vb.const)
    if va.const is not None and rb is not None:
        return _narrow_ref(S, rb, _SWAP[op], va.const)
    return S


def _narrow_ref(S: Dict[Any, Val], ref: Any, op: str, k: int) -> State:
    cur = S.get(ref)
    group = (cur.src if cur is not None and cur.src is not None else ref)
    out = dict(S)
    for r, v in S.items():
        if r == ref or r == group or v.src == group:
            n = _narrow(v, op, k)
            if n is None:
                return None
            out[r] = n
    return out


def substitute(e: Any, m: Dict[Any, Any]) -> Any:
    """e with each atom whose key is in m replaced by m[key] (rebuilt with the simplifying
    constructors, so the result's range is computed from the replacements' ranges; parts
    without a replaced atom are kept as they are).

    >>> t, x = Var("tid.x", 32), Var("x", 100)
    >>> print(substitute((t + x * 4) // 4, {x.key: 7}).expr_str())
    ((tid.x // 4) + 7)
    """
    if not isinstance(e, Expr):
        return e
    if isinstance(e, Var):
        return m.get(e.key, e)
    if isinstance(e, Lin):
        new = [(substitute(a, m), c) for a, c in e.terms]
        if all(b is a for (b, _), (a, _) in zip(new, e.terms)):
            return e
        acc: Any = e.const
        for a, c in new:
            acc = add(acc, mul(a, c))
        return acc
    if isinstance(e, (FloorDiv, Mod, Swz)):
        a = substitute(e.a, m)
        if a is e.a:
            return e
        if isinstance(e, FloorDiv):
            return floordiv(a, e.c)
        if isinstance(e, Mod):
            return mod(a, e.c)
        if isinstance(a, Expr):
            return Swz(a, e.b, e.m, e.s) if a.div % (1 << (e.m + e.s + e.b)) else a
        return swizzle_expr(a, e.b, e.m, e.s)
    if isinstance(e, (Mul, DynDiv, Cmp)):
        a, b = substitute(e.a, m), substitute(e.b, m)
        if a is e.a and b is e.b:
            return e
        if isinstance(e, Mul):
            return mul(a, b)
        if isinstance(e, DynDiv):
            if not isinstance(b, Expr):
                if b == 0:
                    raise LaunchError(f"division by zero: {e.expr_str()} with {e.b.expr_str()} == 0")
                return floordiv(a, b) if e.op == "//" else mod(a, b)
            return DynDiv(a, b, e.op)
        if not isinstance(a, Expr) and not isinstance(b, Expr):
            return int(Cmp._OPS[e.op](a, b))
        return Cmp(e.op, a, b) if isinstance(a, Expr) else Cmp(_SWAP[e.op], b, a)
    if isinstance(e, BoolAnd):
        ts = [substitute(t, m) for t in e.terms]
        if all(x is y for x, y in zip(ts, e.terms)):
            return e
        if any(not isinstance(t, Expr) and not t for t in ts):
            return 0
        ts = [t for t in ts if isinstance(t, Expr)]
        return BoolAnd(tuple(ts)) if len(ts) > 1 else (ts[0] if ts else 1)
    raise TypeError(f"substitute: unknown expression {e!r}")


def _is_thread_atom(v: Any) -> bool:
    """An atom known per thread at launch: a thread or block index, or a scalar argument."""
    return isinstance(v, ArgVar) or (type(v) is Var and v.name[:4] in ("tid.", "bid."))


def reads_registers(e: Any) -> bool:
    """True when index e reads a register (a ``trace.RegVar``: a value known only at run time)."""
    return isinstance(e, Expr) and any(isinstance(v, RegVar) for v in atoms(e))


def _regvars(e: Any) -> List[RegVar]:
    return [v for v in atoms(e) if isinstance(v, RegVar)]


def _resolve(e: Any, env: Dict[str, Val]) -> Tuple[Any, List[Any]]:
    """e with its registers replaced by their Vals: exact ones by their value, the others by sym
    plus a fresh atom over their interval. Returns (the expression, the fresh atoms)."""
    rv = _regvars(e)
    if not rv:
        return e, []
    m: Dict[Any, Any] = {}
    fresh = []
    for v in rv:
        val = env.get(v.name)
        if val is None:
            val = Val.top(v.ref[0].dtype)
        if val.exact:
            m[v.key] = val.expr()
        else:
            d = _fresh("d", val.lo, val.hi)
            # a view's offset register holds multiples of its div (the tracer checks it where it is
            # set), so value - sym is a multiple of what divides both
            div = gcd(v.div, val.sym.div) if isinstance(val.sym, Expr) else v.div
            if div > 1 and isinstance(d, Var):
                d.lo, d.hi = -(-d.lo // div) * div, (d.hi // div) * div
                d.div = div
                if d.lo > d.hi:
                    d.lo, d.hi = val.lo, val.hi  # no multiple of div: keep the interval (sound)
                    d.div = 1
            fresh.append(d)
            m[v.key] = add(val.sym, d)
    return substitute(e, m), fresh


def _split_linear(e: Any, xs: Sequence[Any]) -> Tuple[Any, int, int, bool]:
    """e == rest + sum(c * x) for the atoms xs that appear only as terms of e's sum: returns
    (rest, the sum's lowest and highest values, whether the split is complete: no x elsewhere)."""
    keys = {x.key for x in xs if isinstance(x, Expr)}
    if not keys:
        return e, 0, 0, True
    if isinstance(e, Var) and e.key in keys:
        return 0, e.lo, e.hi, True
    if not isinstance(e, Lin):
        return e, 0, 0, not any(v.key in keys for v in atoms(e))
    rest: Any = e.const
    lo = hi = 0
    for a, c in e.terms:
        if a.key in keys:
            lo += min(c * a.lo, c * a.hi)
            hi += max(c * a.lo, c * a.hi)
        else:
            rest = add(rest, mul(a, c))
    return rest, lo, hi, not any(v.key in keys for v in atoms(rest))
