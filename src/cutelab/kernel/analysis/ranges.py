"""Value ranges of a kernel's integer registers, so that the launch can prove accesses in bounds.

The tracer knows a register only by its type: a runtime ``Int32`` (a pipeline stage counter, a
k-tile index, a moving view's offset) that appears in an index is a ``trace.RegVar`` ranging over
all of Int32, so no access through it can be proved and the GPU launch guards it (guards.py).
This module runs a forward abstract interpretation over the kernel IR's tree (``Block``, ``For``,
``If``, ``While``; ``Assign`` and ``Compute`` on registers) and finds, for every integer (and
Boolean) register element at every access, a ``Val``: ``sym + d`` with ``sym`` an exact symbolic
value per thread (an ``Expr`` of the thread and block indices, scalar arguments and loop
variables, or 0) and ``d`` in an interval ``[lo, hi]``. That covers

- copies and arithmetic on registers (``k_tile_next = k_tile + S - 1``), with Int32 wrap-around:
  a result whose range leaves its type's is its type's whole range;
- refinement on branch conditions (``x = x + 1; if x == S: x = 0`` gives ``x`` in [0, S-1]),
  carried to the registers that hold a copy of the tested one;
- loops: a register a runtime ``For`` moves by a constant ``c`` each iteration is the affine
  function ``x0 + c * (i - lo) / step`` of the loop variable (an induction variable); the others
  reach a fixed point of the loop (joins of intervals, widened to their type's range when they do
  not settle);
- the conditions an access runs under (the enclosing branches, its own predicate), kept as
  symbolic facts: per-thread conditions are evaluated for every thread, conditions on loop
  variables narrow them (``k_tile + 3 < 128`` gives ``k_tile <= 124``).

``prove(ir, access, scalars)`` then proves one access in bounds: the registers in its index are
replaced by their values, and its range is bounded by interval arithmetic, or exactly for every
thread of the launch plus the interval of its loop-variable terms. Soundness first: every step
over-approximates (an unknown value is its type's whole range; a fact the analysis cannot use
is dropped), so a proof is a proof; an access it cannot prove stays guarded.

>>> from cutelab.numeric import Int32
>>> from cutelab.kernel.ir.nodes import Reg, Assign, Compute, Block, For, If, LoopVar, KernelIR
>>> body, loop = Block(), Block()
>>> s = Reg(0, Int32, 1, body, mutable=True)          # the stage counter
>>> r, n, c = Reg(1, Int32, 1, loop), Reg(2, Int32, 1, loop), Reg(3, Int32, 1, loop)
>>> loop.ops += [Compute(r, "mov", (((s, 0),),)), Compute(n, "add", (((r, 0),), (1,))),
...              Compute(c, "eq", (((n, 0),), (4,))), Assign(s, (0,), ((n, 0),))]
>>> then = Block(loop); then.ops.append(Assign(s, (0,), (0,)))
>>> loop.ops.append(If((c, 0), then, Block(loop)))
>>> body.ops += [Assign(s, (0,), (0,)), For(LoopVar("i0", 0, 99, 1), 0, 100, 1, loop, None)]
>>> ir = KernelIR("k", [], body, [s, r, n, c], (1, 1, 1), (32, 1, 1))
>>> a = analyze(ir)
>>> a.value_at_end((s, 0)).range()
(0, 3)
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..ir.symbolic import (BoolAnd, Cmp, Expr, add, atoms, floordiv, mod,
                       mul, sym_range)
from ..ir.nodes import Assign, Block, Compute, For, If, Load, Op, Reg, RegVar, Store, While, _value_range
from .values import (_CMP_OPS, _SWAP, State, Val, _facts, _fit, _fresh, _join, _not, _refine, _regvars, _resolve,
                     _split_linear, _tracked, _widen)

__all__ = ["Analysis", "analyze", "Record"]

_WIDEN_AFTER = 3  # loop iterations joined before the values that still move are widened
_MAX_ROUNDS = 40  # a safety net: after this many rounds the loop's values are their types' ranges


# --------------------------------------------------------------------------- values


# --------------------------------------------------------------------------- conditions
#
# A Boolean's condition is a small formula:
#   ("sym", e)                   e: an exact symbolic condition (Cmp or BoolAnd) per thread
#   ("rel", op, ra, va, rb, vb)  the comparison of two integers: register refs (or None) and Vals
#   ("and", f, g) | ("or", f, g) | ("not", f)


# --------------------------------------------------------------------------- substitution


# --------------------------------------------------------------------------- the analysis

class Record:
    """What the analysis knows at one access: its registers' Vals and the conditions it runs
    under ((formula, polarity) pairs); ``facts`` are those as symbolic conditions (made when
    first asked for: most accesses are proved without them)."""

    __slots__ = ("env", "path", "_facts")

    def __init__(self, env: Dict[str, Val], path: Sequence[Any]):
        self.env, self.path, self._facts = env, tuple(path), None

    @property
    def facts(self) -> List[Any]:
        if self._facts is None:
            out: List[Any] = []
            for f, pol in self.path:
                out += _facts(f, pol)
            self._facts = out
        return self._facts


class Analysis:
    """The result of ``analyze``: a Record per access (``record(op, k)``), the state at the end."""

    def __init__(self, ir: Any):
        self.ir = ir
        self.substituted: Dict[Any, Any] = {}  # (condition, argument values) -> the condition with them put in
        self.records: Dict[Tuple[int, int], Record] = {}
        self.end: State = {}
        self._path: List[Any] = []  # (formula, polarity) of the enclosing branches
        self._linked: set = set()  # SSA refs that some Val names as its src
        self._cse: Dict[Any, Any] = {}  # (op, operands) -> the first register element that computed it
        self._regs: Dict[int, List[Reg]] = {}  # id(op) -> the integer registers an Op names (the IR outlives this)
        self._carried: Dict[int, set] = {}  # id(For or While) -> what it may write
        self.values: Dict[int, Dict[str, Val]] = {}  # id(Op) -> its index_exprs' registers' Vals (note_values)

    # ---- queries
    def value_at_end(self, ref: Tuple[Reg, int]) -> Val:
        """The Val of register element ref at the end of the kernel (its type's range if unknown)."""
        if self.end is None:
            return Val.top(ref[0].dtype)
        v = self.end.get(ref)
        return v if v is not None else Val.top(ref[0].dtype)

    def record_for(self, access: Any) -> Optional[Record]:
        """The Record of an access as launch.check_bounds sees it (a Load, a Store or an Access of an Op)."""
        op = getattr(access, "op", None)
        if op is None or isinstance(access, (Load, Store)):
            return self.records.get((id(access), 0))
        for k, a in enumerate(op.accesses()):
            if (a.param is access.param and a.is_store == access.is_store and a.offsets == access.offsets
                    and _same_expr(a.base, access.base)):
                return self.records.get((id(op), k))
        return None

    def record(self, op: Any, k: int = 0) -> Optional[Record]:
        """The Record of access k of op (a Load, Store or Op), or None if it was never reached."""
        return self.records.get((id(op), k))

    # ---- values of operands
    def val(self, x: Any, S: Dict[Any, Val], dtype: Any = None) -> Optional[Val]:
        """The Val of an operand (a register Ref, an Expr, a number), None if not an integer."""
        if isinstance(x, tuple):
            reg, i = x
            if not _tracked(reg.dtype):
                return None
            v = S.get(x)
            if v is None:
                v = Val.top(reg.dtype)
            if reg.mutable:
                return v
            return v if v.src is not None else v.with_src(x)
        if isinstance(x, Expr):
            return self.expr_val(x, S)
        if isinstance(x, bool):
            return Val(0, int(x), int(x))
        if isinstance(x, int):
            return Val(0, x, x)
        try:
            import numpy as np

            if isinstance(x, np.integer):
                return Val(0, int(x), int(x))
        except Exception:  # pragma: no cover
            pass
        return None

    def expr_val(self, e: Expr, S: Dict[Any, Val]) -> Val:
        env = {v.name: self.val(v.ref, S) or Val.top(v.ref[0].dtype) for v in _regvars(e)}
        r, fresh = _resolve(e, env)
        if isinstance(r, (Cmp, BoolAnd)):
            lo, hi = sym_range(r)
            if fresh and isinstance(e, Cmp) and isinstance(e.a, RegVar) and not isinstance(e.b, Expr):
                # a register compared with a constant: a relation a branch on it refines the register by
                c = self.compare(e.op, e.a.ref, self.val(e.a.ref, S) or Val.top(e.a.ref[0].dtype), None,
                                 Val(0, int(e.b), int(e.b)))
                if max(lo, c.lo) <= min(hi, c.hi):
                    lo, hi = max(lo, c.lo), min(hi, c.hi)
                return Val(0, lo, hi, c.cond)
            return Val(0, lo, hi, None if fresh else ("sym", r))
        if not fresh:
            return Val(r)
        rest, lo, hi, ok = _split_linear(r, fresh)
        if ok:
            return Val(rest, lo, hi)
        lo, hi = sym_range(r)
        return Val(0, lo, hi)

    # ---- statements
    def run(self) -> "Analysis":
        self.end = self.block(self.ir.body, {})
        return self

    def block(self, blk: Block, S: State) -> State:
        for op in blk.ops:
            if S is None:
                return None
            if isinstance(op, Compute):
                S = self.compute(op, S)
            elif isinstance(op, Assign):
                S = self.assign(op, S)
            elif isinstance(op, Load):
                self.note(op, 0, op.base, (), S)
                S = self.kill_ssa(op.dst, S)
            elif isinstance(op, Store):
                self.note(op, 0, op.base, (), S)
            elif isinstance(op, If):
                S = self.if_(op, S)
            elif isinstance(op, For):
                S = self.for_(op, S)
            elif isinstance(op, While):
                S = self.while_(op, S)
            elif isinstance(op, Op):
                for k, a in enumerate(op.accesses()):
                    self.note(op, k, a.base, getattr(a, "guards", ()), S)
                exprs = getattr(op, "index_exprs", None)
                if exprs is not None:  # the registers of the op's other indices (TMA box coordinates)
                    self.note_values(op, exprs(), S)
                S = self.clobber(op, S)
        return S

    def note(self, op: Any, k: int, base: Any, guards: Sequence[Any], S: Dict[Any, Val]) -> None:
        path = self._path + [(self.cond(c, S), pol) for c, pol in guards]
        env = {v.name: self.val(v.ref, S) or Val.top(v.ref[0].dtype) for v in _regvars(base)}
        self.records[(id(op), k)] = Record(env, path)

    def note_values(self, op: Any, exprs: Sequence[Any], S: Dict[Any, Val]) -> None:
        """The Vals, where op runs, of the registers that index expressions exprs read (``values``; as
        the records, the last visit's: inside a loop, its fixed point's)."""
        env = {v.name: self.val(v.ref, S) or Val.top(v.ref[0].dtype) for e in exprs for v in _regvars(e)}
        if env:
            self.values[id(op)] = env

    def cond(self, c: Any, S: Dict[Any, Val]) -> Any:
        """The formula of a branch condition or predicate (a register Ref or an Expr)."""
        if isinstance(c, tuple):
            v = self.val(c, S)
            if v is None:
                return None
            if v.cond is not None:
                return v.cond
            return ("rel", "!=", v.src, v, None, Val(0, 0, 0))
        if isinstance(c, Expr):
            v = self.expr_val(c, S)
            if v.cond is not None:
                return v.cond
            return ("rel", "!=", None, v, None, Val(0, 0, 0))
        return None

    def kill_ssa(self, reg: Reg, S: Dict[Any, Val]) -> Dict[Any, Val]:
        """reg (re)defined: forget its old elements and the copies' links to them."""
        if not _tracked(reg.dtype):
            return S
        S = dict(S)
        for i in range(reg.n):
            S.pop((reg, i), None)
        if any((reg, i) in self._linked for i in range(reg.n)):
            for r, v in list(S.items()):
                if v.src is not None and v.src[0] is reg:
                    S[r] = v.with_src(None)
        return S

    def regs_of(self, op: Any) -> List[Reg]:
        r = self._regs.get(id(op))
        if r is None:
            r = self._regs[id(op)] = [reg for reg in _regs_of(op) if _tracked(reg.dtype)]
        return r

    def clobber(self, op: Any, S: Dict[Any, Val]) -> Dict[Any, Val]:
        """An op of its own kind may write any register it names: forget those."""
        for reg in self.regs_of(op):
            if _tracked(reg.dtype):
                S = self.kill_ssa(reg, S)
        return S

    def set(self, S: Dict[Any, Val], ref: Any, v: Optional[Val]) -> None:
        if v is None:
            S.pop(ref, None)
            return
        if v.src is not None:
            self._linked.add(v.src)
        S[ref] = v

    def compute(self, op: Compute, S: Dict[Any, Val]) -> Dict[Any, Val]:
        d = op.dst
        S = self.kill_ssa(d, S)
        if not _tracked(d.dtype):
            return S
        for i in range(d.n):
            v = self.element(op, i, S)
            if v is not None and not v.exact and v.src is None and op.op not in ("mov", "cvt"):
                # the same operation on the same values as an earlier register: a copy of it
                key = self.cse_key(op, i, S)
                if key is not None:
                    first = self._cse.get(key)
                    if first is not None and first in S and S[first].key() == v.with_src(None).key():
                        v = v.with_src(S[first].src or first)
                    else:
                        self._cse[key] = (d, i)
            self.set(S, (d, i), v)
            x = op.args[0][i] if op.op == "mov" else None
            if isinstance(x, tuple) and x[0].mutable and x[0].dtype.name == d.dtype.name and v is not None:
                # a copy of a variable: the variable holds the copy's value until it is assigned again (set
                # replaces its Val) or the copy is redefined (kill_ssa drops the link), so a branch on the
                # copy (``if count < n:`` on ``r = mov(count)``) narrows the variable too
                cur = S.get(x)
                if cur is not None and cur.src is None:
                    self.set(S, x, cur.with_src((d, i)))
        return S

    def cse_key(self, op: Compute, i: int, S: Dict[Any, Val]) -> Any:
        parts: List[Any] = [op.op, op.dst.dtype.name, op.src_dtype.name]
        for col in op.args:
            x = col[i]
            if isinstance(x, tuple):
                v = S.get(x)
                g = v.src if v is not None and v.src is not None else (None if x[0].mutable else x)
                if g is None or g not in S:
                    return None
                parts.append(("r", g[0].id, g[1]))
            elif isinstance(x, Expr):
                if _regvars(x):
                    return None
                parts.append(("e", x.key))
            elif isinstance(x, (int, float)):
                parts.append(("c", x))
            else:
                return None
        return tuple(parts)

    def element(self, op: Compute, i: int, S: Dict[Any, Val]) -> Optional[Val]:
        d = op.dst
        dt = d.dtype
        o = op.op
        args = [col[i] for col in op.args]
        if o in ("mov", "cvt"):
            v = self.val(args[0], S)
            if v is None:
                return None
            if dt.kind == "bool":
                if v.cond is not None:
                    lo, hi = v.range()
                    return Val(0, max(lo, 0), min(hi, 1), v.cond, v.src)
                return self.compare("!=", args[0], v, None, Val(0, 0, 0))
            return _fit(v, dt)
        if o in _CMP_OPS:
            va, vb = self.operand(args[0], S, op.src_dtype), self.operand(args[1], S, op.src_dtype)
            if va is None or vb is None:
                return Val(0, 0, 1)
            # a Boolean compared with 0 (x != 0, x == 0) is x's condition (or its negation)
            for x, y in ((va, vb), (vb, va)):
                if x.cond is not None and y.const == 0 and o in ("ne", "eq"):
                    f = x.cond if o == "ne" else _not(x.cond)
                    return Val(0, 0, 1, f) if not x.exact else Val(0, x.lo if o == "ne" else 1 - x.lo,
                                                                     x.lo if o == "ne" else 1 - x.lo, f)
            return self.compare(_CMP_OPS[o], args[0], va, args[1], vb)
        vals = [self.operand(a, S, dt) for a in args]
        if o == "select":  # the condition is read as its own type
            vals[0] = self.val(args[0], S)
        if any(v is None for v in vals):
            return None if dt.kind != "bool" else Val(0, 0, 1)
        if o in ("and", "or", "not") and dt.kind == "bool":
            fs = [v.cond for v in vals]
            r = [v.range() for v in vals]
            if o == "not":
                f = _not(fs[0])
                lo, hi = r[0]
                return Val(0, 1 - min(hi, 1), 1 - max(lo, 0), f)
            f = (o, fs[0], fs[1]) if None not in fs else None
            (al, ah), (bl, bh) = r
            al, ah, bl, bh = max(al, 0), min(ah, 1), max(bl, 0), min(bh, 1)
            if o == "and":
                return Val(0, al & bl, ah & bh, f)
            return Val(0, al | bl, ah | bh, f)
        if dt.kind == "bool":
            return Val(0, 0, 1)
        a = vals[0]
        b = vals[1] if len(vals) > 1 else None
        if o == "add":
            return _fit(Val(add(a.sym, b.sym), a.lo + b.lo, a.hi + b.hi), dt)
        if o == "sub":
            return _fit(Val(add(a.sym, mul(b.sym, -1)), a.lo - b.hi, a.hi - b.lo), dt)
        if o == "neg":
            return _fit(Val(mul(a.sym, -1), -a.hi, -a.lo), dt)
        if o == "mul":
            for x, y in ((a, b), (b, a)):
                if x.const is not None:
                    k = x.const
                    return _fit(Val(mul(y.sym, k), min(k * y.lo, k * y.hi), max(k * y.lo, k * y.hi)), dt)
            if a.exact and b.exact:
                return _fit(Val(mul(a.expr(), b.expr())), dt)
            return _fit(_interval(a, b, lambda x, y: x * y), dt)
        if o in ("min", "max"):
            (al, ah), (bl, bh) = a.range(), b.range()
            f = min if o == "min" else max
            return _fit(Val(0, f(al, bl), f(ah, bh)), dt)
        if o == "select":
            c = vals[0]
            f = self.cond(args[0], S)
            clo, chi = c.range()
            out = None
            if clo != 0 or chi != 0:  # the first value may be picked: where the condition holds
                St = _refine(S, f, True)
                x = self.val(args[1], St) if St is not None else None
                out = _join(out, None if x is None else x.with_src(None))
            if clo <= 0 <= chi:
                Sf = _refine(S, f, False)
                y = self.val(args[2], Sf) if Sf is not None else None
                out = _join(out, None if y is None else y.with_src(None))
            return _fit(out, dt) if out is not None else Val.top(dt)
        if o in ("floordiv", "mod") and b.const is not None and b.const != 0:
            k = b.const
            if a.exact:
                return _fit(Val(floordiv(a.expr(), k) if o == "floordiv" else mod(a.expr(), k)), dt)
            lo, hi = a.range()
            if o == "floordiv":
                q = [lo // k, hi // k]
                return _fit(Val(0, min(q), max(q)), dt)
            if k > 0 and lo >= 0 and hi < k:
                return _fit(Val(0, lo, hi), dt)
            return Val(0, 0, k - 1) if k > 0 else Val(0, k + 1, 0)
        if o == "abs":
            lo, hi = a.range()
            m = max(abs(lo), abs(hi))
            return _fit(Val(0, 0 if lo <= 0 <= hi else min(abs(lo), abs(hi)), m), dt)
        return Val.top(dt)

    def operand(self, x: Any, S: Dict[Any, Val], dtype: Any) -> Optional[Val]:
        """The Val of operand x as an op reads it: converted to dtype (both back ends compute an
        operand in the type the op works in; a value out of its range wraps around)."""
        v = self.val(x, S)
        if v is None or not _tracked(dtype):
            return v
        if isinstance(x, tuple) and x[0].dtype.name == dtype.name:
            return v
        return _fit(v, dtype)

    def compare(self, op: str, ra: Any, va: Val, rb: Any, vb: Val) -> Val:
        f: Any = ("rel", op, va.src, va, vb.src, vb)
        if va.exact and vb.exact:
            x, y = va.expr(), vb.expr()
            if isinstance(x, Expr) or isinstance(y, Expr):
                c = Cmp(op, x, y) if isinstance(x, Expr) else Cmp(_SWAP[op], y, x)
                lo, hi = sym_range(c)
                return Val(0, lo, hi, f)
            t = int(Cmp._OPS[op](x, y))
            return Val(0, t, t, f)
        (al, ah), (bl, bh) = va.range(), vb.range()
        dl, dh = al - bh, ah - bl  # a - b
        dec = {"<": (dh < 0, dl >= 0), "<=": (dh <= 0, dl > 0), ">": (dl > 0, dh <= 0),
               ">=": (dl >= 0, dh < 0), "==": (dl == dh == 0, dl > 0 or dh < 0),
               "!=": (dl > 0 or dh < 0, dl == dh == 0)}[op]
        if dec[0]:
            return Val(0, 1, 1, f)
        if dec[1]:
            return Val(0, 0, 0, f)
        return Val(0, 0, 1, f)

    def assign(self, op: Assign, S: Dict[Any, Val]) -> Dict[Any, Val]:
        d = op.dst
        if not _tracked(d.dtype):
            return S
        S = dict(S)
        for j, src in zip(op.index, op.src):
            v = self.val(src, S)
            if v is not None:
                v = _fit(Val(v.sym, v.lo, v.hi, _detach(v.cond), v.src), d.dtype)
            self.set(S, (d, j), v)
        return S

    # ---- regions
    def if_(self, op: If, S: Dict[Any, Val]) -> State:
        f = self.cond(op.cond, S)
        c = op.cond
        if isinstance(c, tuple):
            v = self.val(c, S)
            lo, hi = v.range() if v is not None else (0, 1)
        elif isinstance(c, Expr):
            lo, hi = self.expr_val(c, S).range()
        else:
            lo = hi = int(bool(c))
        out: State = None
        if hi != 0 or lo != 0:  # the then branch may run
            self._path.append((f, True))
            out = _join_states(out, self.block(op.then, _refine(S, f, True)))
            self._path.pop()
        if lo <= 0 <= hi:  # the else branch may run
            self._path.append((f, False))
            out = _join_states(out, self.block(op.orelse, _refine(S, f, False)))
            self._path.pop()
        return out

    def for_(self, op: For, S: Dict[Any, Val]) -> State:
        carried = self._carried.get(id(op))
        if carried is None:
            carried = self._carried[id(op)] = _assigned(op.body, self.regs_of)
        var = op.var
        induction = self.inductions(op, carried, S)
        others = [m for m in carried if m not in induction]
        H = dict(S)
        for m in carried:
            H[m] = induction.get(m) or _plain(S.get(m) or Val.top(m[0].dtype))
        H = {r: (v.with_src(None) if v.src is not None and v.src in carried else v) for r, v in H.items()}
        rounds = 0
        thresholds = _constants(op.body) if others else []
        bounds = self.loop_facts(op, S)
        while True:
            self._path.extend(bounds)
            E = self.block(op.body, H)
            del self._path[len(self._path) - len(bounds):]
            if E is None:
                break
            rounds += 1
            changed = False
            newH = dict(H)
            for m in others:
                back = _forget(E.get(m) or Val.top(m[0].dtype), var)
                j = _plain(_join(S.get(m) or Val.top(m[0].dtype), back))
                if rounds > _MAX_ROUNDS:
                    j = Val.top(m[0].dtype)
                elif rounds > _WIDEN_AFTER:
                    j = _widen(H[m], j, m[0].dtype, thresholds)
                j = _fit(j, m[0].dtype)
                if j.key() != H[m].key():
                    changed = True
                newH[m] = j
            if not changed:
                break
            H = newH
        # after the loop: no trip (the values before it) or the values at the end of the last one
        X = dict(S)
        for m in carried:
            before = S.get(m) or Val.top(m[0].dtype)
            after = _forget(E.get(m) or Val.top(m[0].dtype), var) if E is not None else None
            X[m] = _fit(_plain(_join(before, after)), m[0].dtype)
        return {r: (v.with_src(None) if v.src is not None and v.src in carried else v) for r, v in X.items()}

    def loop_facts(self, op: For, S: Dict[Any, Val]) -> List[Any]:
        """What holds of the loop variable inside the loop: lo <= var < hi (step > 0), as path
        facts, where the bounds' values are known exactly."""
        out = []
        for bound, rel in ((op.lo, ">=" if op.step > 0 else "<="), (op.hi, "<" if op.step > 0 else ">")):
            v = self.val(bound, S)
            if v is not None and v.exact:
                out.append((("sym", Cmp(rel, op.var, v.expr())), True))
        return out

    def inductions(self, op: For, carried: set, S: Dict[Any, Val]) -> Dict[Any, Val]:
        """The carried registers that each iteration moves by a constant: their values as affine
        functions of the loop variable.

        The body runs with each candidate's value at the top of the iteration a fresh symbol h
        (over half its type's range, so h + c does not wrap) and the other carried values
        anything; a candidate whose value at the end is exactly h + c, for a constant c, holds
        init + c * (iterations so far) at every iteration, provided that value stays within h's
        range (checked): by induction over the iterations, for all candidates at once. Candidates
        that fail are dropped and the rest checked again."""
        count = _trip_index(op)
        cands = {m for m in carried if m[0].dtype.kind in ("int", "uint")}
        while cands:
            heads = {}
            S1 = dict(S)
            for m in carried:
                tlo, thi = _value_range(m[0].dtype)
                if m in cands:
                    h = _fresh("h", tlo // 2, thi // 2)
                    heads[m] = h
                    S1[m] = Val(h)
                else:
                    S1[m] = Val(0, tlo, thi)
            E1 = self.block(op.body, S1)
            if E1 is None:
                return {}
            out: Dict[Any, Val] = {}
            for m, h in heads.items():
                e = E1.get(m)
                if e is None or not e.exact or not isinstance(e.sym, Expr):
                    continue
                c = add(e.sym, mul(h, -1))
                if isinstance(c, Expr):
                    continue
                step = c + e.lo
                init = S.get(m) or Val.top(m[0].dtype)
                cf = Val(add(init.sym, mul(count, step)), init.lo, init.hi)
                lo, hi = cf.range()
                if h.lo <= lo and hi <= h.hi:
                    out[m] = cf
            if set(out) == cands:
                return out
            cands = set(out)
        return {}

    def while_(self, op: While, S: Dict[Any, Val]) -> State:
        carried = _assigned(op.before, self.regs_of) | _assigned(op.body, self.regs_of)
        H = {r: v for r, v in S.items() if r not in carried}
        for m in carried:
            H[m] = Val.top(m[0].dtype)
        B = self.block(op.before, H)
        if B is None:
            return None
        f = self.cond(op.cond, B) if op.cond is not None else None
        self._path.append((f, True))
        self.block(op.body, _refine(B, f, True))
        self._path.pop()
        return _refine(B, f, False)


def _same_expr(a: Any, b: Any) -> bool:
    if isinstance(a, Expr) or isinstance(b, Expr):
        return isinstance(a, Expr) and isinstance(b, Expr) and a.key == b.key
    return a == b


def _interval(a: Val, b: Val, fn: Any) -> Val:
    (al, ah), (bl, bh) = a.range(), b.range()
    c = [fn(x, y) for x in (al, ah) for y in (bl, bh)]
    return Val(0, min(c), max(c))


def _plain(v: Val) -> Val:
    """v without its condition and copy link (a value carried from one iteration to the next: its
    condition may name the loop variable, its link a register the next iteration redefines)."""
    return Val(v.sym, v.lo, v.hi)


def _detach(f: Any) -> Any:
    """Formula f without the registers it names (kept in a mutable register, which outlives them)."""
    if f is None or f[0] == "sym":
        return f
    if f[0] == "rel":
        return ("rel", f[1], None, f[3], None, f[5])
    return (f[0],) + tuple(_detach(g) for g in f[1:])


def _forget(v: Val, var: Any) -> Val:
    """v without loop variable var in its sym (the value it held at some iteration)."""
    if isinstance(v.sym, Expr) and any(a.key == var.key for a in atoms(v.sym)):
        lo, hi = v.range()
        return Val(0, lo, hi)
    return v


def _trip_index(op: For) -> Any:
    """The number of iterations before the current one, as an Expr of the loop variable."""
    if op.step > 0:
        return floordiv(add(op.var, mul(op.lo, -1)), op.step)
    return floordiv(add(op.lo, mul(op.var, -1)), -op.step)


def _join_states(a: State, b: State) -> State:
    if a is None:
        return b
    if b is None:
        return a
    return {r: _join(v, b[r]) for r, v in a.items() if r in b}


def _regs_of(op: Any) -> List[Reg]:
    """The registers an op of its own kind names (in its attributes, tuples and lists)."""
    out: List[Reg] = []
    names = set()
    for cls in type(op).__mro__:
        names.update(getattr(cls, "__slots__", ()))
    names.update(getattr(op, "__dict__", {}).keys())

    def go(x: Any, depth: int) -> None:
        if isinstance(x, Reg):
            out.append(x)
        elif isinstance(x, (tuple, list)) and depth < 6:
            for y in x:
                go(y, depth + 1)

    for n in names:
        go(getattr(op, n, None), 0)
    return out


def _constants(blk: Block) -> List[int]:
    """The int constants a region compares with (and their neighbours): widening thresholds."""
    from ..ir.nodes import walk

    out = {-1, 0, 1}
    for op in walk(blk):
        if isinstance(op, Compute):
            for col in op.args:
                for x in col:
                    if op.op in _CMP_OPS and isinstance(x, int) and not isinstance(x, bool):
                        out.update((x - 1, x, x + 1))
                    elif isinstance(x, Cmp) and isinstance(x.a, RegVar) and isinstance(x.b, int):
                        out.update((x.b - 1, x.b, x.b + 1))  # a register compared as an expression (expr_val)
    return sorted(out)


def _assigned(blk: Block, regs_of: Any = None) -> set:
    """The mutable integer register elements a region may write."""
    from ..ir.nodes import walk

    regs_of = regs_of or _regs_of
    out = set()
    for op in walk(blk):
        if isinstance(op, Assign) and _tracked(op.dst.dtype):
            out.update((op.dst, j) for j in op.index)
        elif isinstance(op, (Compute, Load)) and op.dst.mutable and _tracked(op.dst.dtype):
            out.update((op.dst, j) for j in range(op.dst.n))  # (the tracer writes mutable ones by Assign only)
        elif isinstance(op, Op):
            for reg in regs_of(op):
                if reg.mutable and _tracked(reg.dtype):
                    out.update((reg, j) for j in range(reg.n))
    return out


def analyze(ir: Any) -> Analysis:
    """The value ranges of ir's integer registers at each access (see the module's docstring)."""
    return Analysis(ir).run()


# --------------------------------------------------------------------------- proofs

def _refined_vars(xs: Sequence[Any], facts: Sequence[Any]) -> Dict[Any, Any]:
    """Narrowed stand-ins for the loop variables and register values xs, from facts that compare
    a single one of them (c * x + k op 0) with a constant."""
    from ..ir.symbolic import lin_form

    bounds = {x.key: [x.lo, x.hi, x] for x in xs}
    for f in facts:
        if not isinstance(f, Cmp) or f.op == "!=":
            continue
        d = add(f.a, mul(f.b, -1))
        terms, k = lin_form(d)
        if len(terms) != 1:
            continue
        (key, (atom, c)), = terms.items()
        if key not in bounds or c == 0:
            continue
        b = bounds[key]
        # c * x + k  op  0
        ops = [f.op] if f.op != "==" else ["<=", ">="]
        for o in ops:
            if c < 0:
                o = _SWAP[o]
                c2, k2 = -c, -k
            else:
                c2, k2 = c, k
            # c2 * x op -k2
            if o == "<":
                b[1] = min(b[1], (-k2 - 1) // c2)
            elif o == "<=":
                b[1] = min(b[1], (-k2) // c2)
            elif o == ">":
                b[0] = max(b[0], (-k2) // c2 + 1)
            elif o == ">=":
                b[0] = max(b[0], -((k2) // c2))
    m = {}
    for key, (lo, hi, x) in bounds.items():
        if (lo, hi) != (x.lo, x.hi):
            if lo > hi:
                return {"empty": True}
            m[key] = _fresh("n", lo, hi, getattr(x, "div", 1))
    return m


