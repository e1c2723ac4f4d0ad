"""Proving one access in bounds with the register values of ``ranges``: the registers in its index\nreplaced by their values, its range bounded by interval arithmetic, or exactly for every thread of\nthe launch (``Threads``) plus the interval of its loop-variable terms.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from ...errors import LaunchError
from ..ir.nodes import ArgVar, DimVar, Store
from ..ir.symbolic import BoolAnd, Cmp, DynDiv, Expr, FloorDiv, Lin, Mod, Mul, Swz, Var, add, atoms, lin_form, mul, sym_range
from .ranges import Record, _refined_vars
from .values import _is_thread_atom, _resolve, _split_linear, substitute


class Threads:
    """Per-thread values of index expressions (of the thread and block indices only: the proofs
    put the scalar arguments' values in first) over every thread of a launch: thread indices as a row, block indices as a column (so an expression of one of them
    costs one row or column), subexpressions and masks memoized. Grids of more than
    ``CHUNK`` threads are evaluated a chunk of blocks at a time."""

    CHUNK = 1 << 22

    def __init__(self, ir: Any):
        self.ir = ir
        self.substituted: Dict[Any, Any] = {}  # (condition, argument values) -> the condition with them put in
        self.nt = ir.num_threads
        self.nb = ir.grid[0] * ir.grid[1] * ir.grid[2]
        self.step = max(1, self.CHUNK // self.nt)
        self._chunks: Dict[int, Dict[str, Any]] = {}
        self._ranges: Dict[Any, Any] = {}

    def _chunk(self, first: int) -> Dict[str, Any]:
        c = self._chunks.get(first)
        if c is None:
            import numpy as np

            k = min(self.step, self.nb - first)
            bx, by, bz = self.ir.block
            gx, gy, _ = self.ir.grid
            t = np.arange(self.nt, dtype=np.int64)[None, :]
            b = (first + np.arange(k, dtype=np.int64))[:, None]
            env: Dict[str, Any] = {"tid.x": t % bx, "tid.y": (t // bx) % by, "tid.z": t // (bx * by),
                                   "bid.x": b % gx, "bid.y": (b // gx) % gy, "bid.z": b // (gx * gy)}
            c = {"env": env, "memo": {}, "full": k * self.nt}
            if self.nb <= self.step:
                self._chunks[first] = c  # one chunk: keep it for the next query
        return c

    def _eval(self, c: Dict[str, Any], e: Any) -> Any:
        import numpy as np

        if not isinstance(e, Expr):
            return e
        memo = c["memo"]
        r = memo.get(e.key)
        if r is not None:
            return r
        ev = self._eval
        if isinstance(e, Var):
            r = c["env"][e.name]
        elif isinstance(e, Lin):
            r = e.const
            for a, k in e.terms:
                v = ev(c, a)
                r = r + (v if k == 1 else v * k)
        elif isinstance(e, FloorDiv):
            r = ev(c, e.a) // e.c
        elif isinstance(e, Mod):
            r = ev(c, e.a) % e.c
        elif isinstance(e, Mul):
            r = ev(c, e.a) * ev(c, e.b)
        elif isinstance(e, DynDiv):
            a, b = ev(c, e.a), ev(c, e.b)
            if np.any(np.asarray(b) == 0):
                raise LaunchError(f"{'division' if e.op == '//' else 'remainder'} by zero: {e.expr_str()} with "
                                  f"{e.b.expr_str()} == 0")
            r = a // b if e.op == "//" else a % b
        elif isinstance(e, Swz):
            v = ev(c, e.a)
            r = v ^ ((v & e.ymask) >> e.s)
        elif isinstance(e, Cmp):
            r = Cmp._OPS[e.op](ev(c, e.a), ev(c, e.b))
        elif isinstance(e, BoolAnd):
            r = True
            for t in e.terms:
                r = np.logical_and(r, ev(c, t))
        else:  # pragma: no cover - every Expr kind is above
            raise TypeError(f"cannot evaluate {e!r}")
        if np.size(r) < c["full"] or getattr(r, "dtype", None) == bool:
            memo[e.key] = r
        return r

    def range(self, e: Any, facts: Sequence[Any]) -> Optional[Tuple[int, int]]:
        """(min, max) of e over the threads where every fact holds (None: no such thread)."""
        import numpy as np

        t, k = _split_const(e)
        key = (t.key if isinstance(t, Expr) else None, tuple(f.key for f in facts))
        if key in self._ranges:
            r = self._ranges[key]
            return None if r is None else (r[0] + k, r[1] + k)
        lo = hi = None
        for first in range(0, self.nb, self.step):
            c = self._chunk(first)
            shape = (min(self.step, self.nb - first), self.nt)
            v = np.broadcast_to(np.asarray(self._eval(c, t), dtype=np.int64), shape)
            if facts:
                fkey = ("facts",) + tuple(f.key for f in facts)
                m = c["memo"].get(fkey)
                if m is None:
                    m = np.ones(shape, dtype=bool)
                    for f in facts:
                        m = m & np.broadcast_to(np.asarray(self._eval(c, f)) != 0, shape)
                    c["memo"][fkey] = m
                if not m.any():
                    continue
                v = v[m]
            vlo, vhi = int(v.min()), int(v.max())
            lo = vlo if lo is None else min(lo, vlo)
            hi = vhi if hi is None else max(hi, vhi)
        r = None if lo is None else (lo, hi)
        self._ranges[key] = r
        return None if r is None else (r[0] + k, r[1] + k)


def _split_const(e: Any) -> Tuple[Any, int]:
    if isinstance(e, Lin) and e.const:
        return Lin(e.terms, 0) if len(e.terms) > 1 or e.terms[0][1] != 1 else e.terms[0][0], e.const
    if not isinstance(e, Expr):
        return 0, int(e)
    return e, 0


class RangeCheck:
    """An access proved in bounds with the scalar arguments' values of one launch: proved again,
    for every thread, at each launch with other values (launch.check_deferred)."""

    def __init__(self, access: Any, rec: Record):
        self.access, self.rec = access, rec

    def check(self, ir: Any, scalars: Dict[str, int], threads: Optional[Threads] = None) -> None:
        from ...errors import TraceError

        try:
            if prove(ir, self.access, self.rec, scalars, threads) is not False:
                return
        except (TypeError, ValueError, KeyError, AttributeError, TraceError):
            pass  # not proved: refused below
        s = self.access
        what = "store to" if getattr(s, "is_store", False) or isinstance(s, Store) else "load from"
        vals = ", ".join(f"{k[4:]} = {v}" for k, v in scalars.items())
        line = getattr(getattr(s, "op", None) or s, "loc", None)
        raise LaunchError(
            f"{ir.name}: the {what} {s.param.name}{f' at {line}' if line else ''} was proved in bounds (and printed "
            f"unguarded) for the scalar arguments this kernel was compiled with, but not for {vals}; the access may "
            f"leave {s.param.name}'s {s.param.length} elements. Nothing was launched."
        )


def prove(ir: Any, access: Any, rec: Optional[Record], scalars: Optional[Dict[str, int]] = None,
          threads: Optional[Threads] = None) -> Any:
    """Prove access (a Load, Store or an Op's Access) in bounds from its Record.

    Returns True (in bounds for every thread and every scalar argument), a ``RangeCheck`` (in
    bounds for every thread with these scalar values: check it again for others), or False (not
    proved: guard it). ``threads`` (a ``Threads`` of ir) shares per-thread values between the
    proofs of one kernel."""
    if rec is None:
        return False
    base, _ = _resolve(access.base, rec.env)
    facts = []
    for f in rec.facts:  # facts about a register's unknown value cannot be used (each use is a new atom)
        if not any(v.name.startswith("range.d") for v in atoms(f)):
            facts.append(f)
    dims = {v.key: v.value for e in [base] + facts for v in atoms(e) if isinstance(v, DimVar) and v.value is not None}
    if dims:  # launch dimensions: the IR is traced (and its plan kept) for one launch shape, so their values hold
        base, facts = substitute(base, dims), [substitute(f, dims) for f in facts]
        if any(not isinstance(f, Expr) and not f for f in facts):
            return True  # a fact is false for this launch: the access does not run
        facts = [f for f in facts if isinstance(f, Expr)]
    args = {v.key: v for e in [base] + facts for v in atoms(e) if isinstance(v, ArgVar)}
    if args and scalars is None:  # what holds for every value of the arguments
        return _prove(ir, access, base, [f for f in facts if not any(isinstance(v, ArgVar) for v in atoms(f))],
                      threads, args_ok=False)
    if args:
        if threads is None:
            threads = Threads(ir)
        try:
            m = {k: int(scalars[v.name]) for k, v in args.items()}
            mk = tuple(sorted(m.items()))
            memo = threads.substituted
            base = substitute(base, m)
            out = []
            for f in facts:
                key = (f.key, mk)
                g = memo.get(key)
                if g is None:
                    g = memo[key] = substitute(f, m)
                out.append(g)
            facts = out
        except (KeyError, LaunchError):  # no value given, or a division by zero with these values
            return False
        if any(not isinstance(f, Expr) and not f for f in facts):
            return RangeCheck(access, rec)  # a fact is false with these values: the access does not run
        facts = [f for f in facts if isinstance(f, Expr)]
    ok = _prove(ir, access, base, facts, threads)
    if ok and args:
        return RangeCheck(access, rec)
    return ok


def _bounds_from_facts(base: Any, facts: Sequence[Any]) -> Tuple[Any, Any]:
    """Bounds of base from the facts that compare base itself, up to a constant, with a constant:
    a fact a op b whose a - b equals base - k (k constant) gives base op' k. (-inf, inf) when none
    does. The guards of persistent tile loops are of this kind: ``tile = bid + i * grid``, ``if
    tile < num_tiles``, the access at ``q * num_tiles + tile``, whose loop variable alone would
    bound it by the loop's last (guarded-off) iteration."""
    lo, hi = float("-inf"), float("inf")
    for f in facts:
        if not isinstance(f, Cmp) or f.op == "!=":
            continue
        d = add(f.a, mul(f.b, -1))  # the fact: d op 0
        terms, k = lin_form(add(base, mul(d, -1)))  # base = d + k when no terms are left
        if terms:
            continue
        k = int(k)
        if f.op in ("<", "<=", "=="):
            hi = min(hi, k - 1 if f.op == "<" else k)
        if f.op in (">", ">=", "=="):
            lo = max(lo, k + 1 if f.op == ">" else k)
    return lo, hi


def _prove(ir: Any, access: Any, base: Any, facts: List[Any], threads: Optional[Threads],
           args_ok: bool = True) -> bool:
    p = access.param
    omin, omax = min(access.offsets), max(access.offsets)
    xs = [v for v in atoms(base) if not _is_thread_atom(v)]
    base0, xs0, m = base, xs, {}
    if xs:
        m = _refined_vars(xs, facts)
        if m.get("empty"):
            return True  # the facts contradict each other: the access never runs
        if m:
            base = substitute(base, m)
            xs = [v for v in atoms(base) if not _is_thread_atom(v)]
    lo, hi = sym_range(base)
    if lo + omin >= 0 and hi + omax < p.length:
        return True
    flo, fhi = _bounds_from_facts(base, facts)
    if max(lo, flo) + omin >= 0 and min(hi, fhi) + omax < p.length:
        return True  # a guard bounds the index itself (``if tile < n: x[k * n + tile]``)
    rest, llo, lhi, ok = _split_linear(base, xs)
    if not ok or (lhi - llo) + (omax - omin) >= p.length:
        return False  # (the second: the terms' spread alone is wider than the tensor)
    tfacts = [f for f in facts if all(_is_thread_atom(v) for v in atoms(f))]
    if any(isinstance(v, ArgVar) for e in [rest] + tfacts for v in atoms(e)):
        return False  # (only without the arguments' values)
    threads = threads or Threads(ir)
    try:
        r = threads.range(rest, tfacts)
    except LaunchError:  # e.g. a division by zero
        return False
    if r is None:
        return True  # no thread runs it
    lo, hi = r[0] + llo, r[1] + lhi
    if lo + omin >= 0 and hi + omax < p.length:
        return True
    try:
        rel = _relational_range(base0, xs0, m, facts, tfacts, threads)
    except LaunchError:
        return False
    if rel is None:
        return False
    return max(lo, rel[0]) + omin >= 0 and min(hi, rel[1]) + omax < p.length


def _loop_bounds_per_thread(xs: Sequence[Any], facts: Sequence[Any]) -> Dict[Any, Tuple[List[Any], List[Any]]]:
    """Per loop variable (or register value) x of xs, the bounds that facts x op E give it where E
    is an expression of the thread and block indices only: ({key: ([lower Es], [upper Es])}). A
    loop over a range that depends on the block (``for i in range(2, 2 * bid.x + 2)``) gives
    ``i <= 2 * bid.x + 1`` this way, which its variable's interval [2, max over blocks] loses."""
    keys = {x.key for x in xs}
    out: Dict[Any, Tuple[List[Any], List[Any]]] = {}
    for f in facts:
        if not isinstance(f, Cmp) or f.op == "!=":
            continue
        terms, k = lin_form(add(f.a, mul(f.b, -1)))  # sum(terms) + k  op  0
        mine = [(key, c) for key, (_, c) in terms.items() if key in keys]
        if len(mine) != 1 or mine[0][1] not in (1, -1):
            continue
        key, c = mine[0]
        others = add(k, 0)
        for kk, (a, cc) in terms.items():
            if kk != key:
                others = add(others, mul(a, cc))
        if not all(type(v) is Var and v.name[:4] in ("tid.", "bid.") for v in atoms(others)):
            continue
        # c * x + others  op  0  ->  x  op'  -c * others
        e = mul(others, -c)
        op = f.op if c == 1 else _FLIP[f.op]
        lows, highs = out.setdefault(key, ([], []))
        if op in ("<", "<=", "=="):
            highs.append(add(e, -1) if op == "<" else e)
        if op in (">", ">=", "=="):
            lows.append(add(e, 1) if op == ">" else e)
    return out


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}


def _relational_range(base: Any, xs: Sequence[Any], refined: Dict[Any, Any], facts: Sequence[Any],
                      tfacts: Sequence[Any], threads: "Threads") -> Optional[Tuple[int, int]]:
    """(lo, hi) of base = rest + sum(c * x) over every thread, each x of xs bounded per thread by
    the facts that compare it with an expression of the thread and block indices
    (``_loop_bounds_per_thread``), else by its interval (``refined``: the narrowed ones). For each
    thread, rest + sum(c * bound) with a lower bound of x where c > 0 and an upper one where c < 0
    is a lower bound of base (and the other way round an upper bound): evaluated exactly over the
    launch's threads, once per bound a fact gives (the best kept). None where no fact bounds any x
    so, or base is not of that form."""
    if not isinstance(base, Lin) or not xs:
        return None
    per = _loop_bounds_per_thread(xs, facts)
    if not per:
        return None
    keys = {x.key for x in xs}
    rest: Any = base.const
    terms = []  # (coefficient, [lower bounds], [upper bounds]) of each x term, the interval's last
    for a, c in base.terms:
        if a.key not in keys:
            rest = add(rest, mul(a, c))
            continue
        iv = refined.get(a.key, a)
        lows, highs = per.get(a.key, ([], []))
        terms.append((c, list(lows) + [iv.lo], list(highs) + [iv.hi]))
    if any(v.key in keys for v in atoms(rest)) or all(len(lo) == 1 and len(hi) == 1 for _, lo, hi in terms):
        return None

    def extreme(low: bool) -> Optional[int]:
        # one bound per term (the first); then each other bound of each term in its place
        picks = [lo if (c > 0) == low else hi for c, lo, hi in terms]
        choices = [[0] * len(terms)] + [[j if k == i else 0 for k in range(len(terms))]
                                        for i, p in enumerate(picks) for j in range(1, len(p))]
        best = None
        for ch in choices:
            e = rest
            for (c, _, _), p, j in zip(terms, picks, ch):
                e = add(e, mul(p[j], c))
            r = threads.range(e, tfacts)
            if r is None:
                return None
            v = r[0] if low else r[1]
            best = v if best is None else (max(best, v) if low else min(best, v))
        return best

    lo, hi = extreme(True), extreme(False)
    if lo is None or hi is None:
        return None
    return lo, hi
