"""Copy forwarding for the interpreter: a ``mov`` whose register only one instruction op reads.

The tracer copies operands before an instruction reads them: cute.gemm's ``mov``s of the A, B
and C fragments before each FMA or mma.sync, a predicate's ``mov`` before each cp.async. On the
CPU each copy is a numpy copy of the register (a whole accumulator, for the FMA). Where

- the copy is a ``mov`` (no conversion: every source is a register element of the destination's
  type) into an SSA register (not ``mutable``),
- one op reads that register and nothing else does (no op, condition, loop bound or index
  expression of the kernel names it), and that op is an instruction op (``Op``, not one that
  waits) later in the same block,
- and nothing between the copy and that op may write the copy's source registers (only
  ``Compute``s and ``Load``s into other registers, and instruction ops that do not name them),

the copy is not made: the op runs as a copy of itself (``copy.copy``) whose operand fields
(tuples of register elements, or one element) read the sources instead. Every thread reads the
same values as through the copy (a ``mov`` copies every thread, whatever the mask), so results
are bit-identical. Ops whose register operands are not such fields are never changed: after the
substitution the copy must name none of the forwarded registers, or nothing is forwarded.

The other way round, an op that says it can (``into_mutable``: the FMA of cute.gemm) whose
result register only the ``Assign`` right after it reads, copying all of it in order into a
mutable register of its type (cute.gemm's accumulator), writes that register itself (the rows of
the threads of its mask, as the Assign would): no result array, no copy.

A batch of instruction ops (mma.syncs) whose results the ``Assign`` right after it copies,
each value to the accumulator element its C operand came from, goes with that Assign
(``IntoBatch``): ``interpret_batch`` may write the accumulator itself.

Likewise an instruction op that says it can (``into_elements``: ldmatrix) and a ``Load`` whose
register only the ``Assign`` right after it (one of the kernel's, or Assigns merged by
``warps._runs``; Loads: the kernel's) reads, copying all of it in order into elements of a
mutable register of its type (cute.gemm's fragments), write those elements (the op's copy with
``into`` and ``at`` set; ``LoadInto``).

``plan(ir, block, runs)`` returns the block's plan in the form of ``warps._runs``: {pc: (end,
ops to step, ops to batch)}. The interpreter uses it only where it also batches (no race check,
no profiler: those see every op as traced).

May import: ``kernel.ir``.
"""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional

import numpy as np

from ..ir.nodes import Assign, Compute, For, If, Load, Op, Printf, Reg, RegVar, Store, While, walk
from ..ir.symbolic import Expr, atoms

__all__ = ["plan"]

_SCAN = 24  # ops looked at after a copy for its reader


def _fields(op: Any) -> List[Any]:
    vals = [getattr(op, n) for c in type(op).__mro__ for n in getattr(c, "__slots__", ()) if hasattr(op, n)]
    return vals + list(getattr(op, "__dict__", {}).values())


_EXPR_REGS: Dict[int, Any] = {}  # id of an index expression -> (it, the ids of the registers it reads)


def _named(x: Any, out: set) -> None:
    """The ids of the registers x names: Regs (in tuples, lists, dicts) and RegVars of expressions."""
    todo = [x]
    seen: set = set()
    while todo:
        x = todo.pop()
        t = type(x)
        if t is tuple:
            if len(x) == 2 and isinstance(x[0], Reg):  # an element reference
                out.add(x[0].id)
            else:
                for y in x:  # (element references and numbers at once: the common operand tuples)
                    ty = type(y)
                    if ty is tuple and len(y) == 2 and type(y[0]) is Reg:
                        out.add(y[0].id)
                    elif ty is not int and ty is not float and ty is not bool and ty is not str and y is not None:
                        todo.append(y)
        elif isinstance(x, Reg):
            out.add(x.id)
        elif isinstance(x, Expr):
            got = _EXPR_REGS.get(id(x))
            if got is None or got[0] is not x:
                if len(_EXPR_REGS) > 65536:
                    _EXPR_REGS.clear()
                got = _EXPR_REGS[id(x)] = (x, [v.ref[0].id for v in atoms(x) if isinstance(v, RegVar)])
            out.update(got[1])
        elif t is list or t is dict:
            if id(x) not in seen:
                seen.add(id(x))
                todo.extend(x.values() if t is dict else x)


def _refs(refs: Any, out: set) -> None:
    """_named of a tuple of element references (register elements, numbers, expressions), the
    common case first."""
    if type(refs) is not tuple:
        _named(refs, out)
        return
    for r in refs:
        tr = type(r)
        if tr is tuple and len(r) == 2 and type(r[0]) is Reg:
            out.add(r[0].id)
        elif tr is not int and tr is not float and tr is not bool:
            _named(r, out)


def _reads(s: Any) -> set:
    """The registers op s reads (for instruction ops: every register its fields name, and the
    registers of its accesses' index expressions)."""
    out: set = set()
    ts = type(s)
    if ts is Compute:
        for col in s.args:
            _refs(col, out)
    elif ts is Assign:
        _refs(s.src, out)
    elif ts is Store:
        _named(s.base, out)
        _refs(s.src, out)
    elif isinstance(s, Compute):
        _named(s.args, out)
    elif isinstance(s, Assign):
        _named(s.src, out)
    elif isinstance(s, Load):
        _named(s.base, out)
    elif isinstance(s, Store):
        _named((s.base, s.src), out)
    elif isinstance(s, Printf):
        _named(s.parts, out)
    elif isinstance(s, If):
        _named(s.cond, out)
    elif isinstance(s, While):
        _named(s.cond, out)
    elif isinstance(s, For):
        _named((s.lo, s.hi), out)
    elif isinstance(s, Op):
        _named(_fields(s), out)
        for a in s.accesses():
            _named(a.base, out)
            _named(getattr(a, "guards", ()), out)
    else:  # an op of a kind not known here: it may read anything
        _named(_fields(s), out)
    return out


def _readers(ir: Any) -> Any:
    """({register id: number of ops that read it} over the whole kernel, {id(op): _reads(op)}),
    cached on its IR."""
    got = ir.__dict__.get("_cpu_readers")
    if got is None:
        count: Dict[int, int] = {}
        reads = {}
        for s in walk(ir.body):
            rs = reads[id(s)] = _reads(s)
            for r in rs:
                count[r] = count.get(r, 0) + 1
        got = ir.__dict__["_cpu_readers"] = (count, reads)
    return got


def _copy_of(s: Any) -> Optional[Any]:
    """The sources of a copy that may be forwarded (a tuple of register elements), else None."""
    if not isinstance(s, Compute) or s.op != "mov" or s.dst.mutable:
        return None
    src = s.args[0]
    if len(src) != s.dst.n:
        return None
    name = s.dst.dtype.name
    for r in src:
        if not isinstance(r, tuple) or r[0].dtype.name != name:
            return None
    return src


def _writes(s: Any) -> Optional[set]:
    """The registers op s may write; None where that is not known (a region, a barrier)."""
    if isinstance(s, (Compute, Load, Assign)):
        return {s.dst.id}
    if isinstance(s, Op) and not getattr(s, "may_wait", False) and getattr(s, "barrier_id", None) is None:
        out: set = set()
        _named(_fields(s), out)
        return out
    return None


def _clone(op: Any) -> Any:
    """copy.copy(op) for the IR's op classes (slots and a __dict__, nothing custom), without
    copy's protocol lookups; copy.copy itself for a class that customises copying."""
    cls = type(op)
    if (getattr(cls, "__copy__", None) is not None or cls.__reduce_ex__ is not object.__reduce_ex__
            or cls.__reduce__ is not object.__reduce__ or getattr(cls, "__getstate__", None) is not _OBJECT_GETSTATE):
        return copy.copy(op)
    new = cls.__new__(cls)
    for c in cls.__mro__:
        slots = c.__dict__.get("__slots__", ())
        for n in ((slots,) if isinstance(slots, str) else slots):
            if n.startswith("__"):  # (__dict__, __weakref__; a private name would be mangled)
                if n in ("__dict__", "__weakref__"):
                    continue
                return copy.copy(op)
            try:
                setattr(new, n, getattr(op, n))
            except AttributeError:  # (an unset slot stays unset)
                pass
    d = getattr(op, "__dict__", None)
    if d:
        new.__dict__.update(d)
    return new


_OBJECT_GETSTATE = getattr(object, "__getstate__", None)


def _substitute(op: Any, fwd: Dict[int, tuple]) -> Optional[Any]:
    """A copy of op whose operand fields read the forwarded copies' sources; None if op names a
    forwarded register anywhere else."""
    new = _clone(op)
    names = [n for c in type(op).__mro__ for n in getattr(c, "__slots__", ()) if hasattr(op, n)]
    names += list(getattr(op, "__dict__", {}).keys())
    for n in names:
        v = getattr(op, n)
        if isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], Reg) and v[0].id in fwd:
            setattr(new, n, fwd[v[0].id][v[1]])
        elif isinstance(v, tuple) and any(isinstance(r, tuple) and len(r) == 2 and isinstance(r[0], Reg)
                                          and r[0].id in fwd for r in v):
            setattr(new, n, tuple(fwd[r[0].id][r[1]] if isinstance(r, tuple) and len(r) == 2
                                  and isinstance(r[0], Reg) and r[0].id in fwd else r for r in v))
    left: set = set()
    _named(_fields(new), left)
    for a in new.accesses():
        _named(a.base, left)
    return None if left & set(fwd) else new


def plan(ir: Any, block: Any, runs: Dict[int, Any]) -> Dict[int, Any]:
    """runs (warps._runs of block) with the copies that can be forwarded left out (see the module
    docstring)."""
    ops = block.ops
    readers, reads_of = _readers(ir)
    out = dict(runs)
    covered = set()
    for i, (end, singles, batch) in runs.items():  # runs of copies and batched instruction ops
        covered.update(range(i, end))
        if not batch:
            continue
        users_of: Dict[int, int] = {}  # register id -> how many ops of the batch read it
        for o in batch:
            for r in reads_of[id(o)]:
                users_of[r] = users_of.get(r, 0) + 1
        fwd: Dict[int, tuple] = {}
        for c in singles:
            if readers.get(c.dst.id) == 1 and users_of.get(c.dst.id) == 1:
                src = _copy_of(c)
                if src is not None:
                    fwd[c.dst.id] = src
        if not fwd:
            continue
        names = set(fwd)
        new = [_substitute(o, fwd) if not reads_of[id(o)].isdisjoint(names) else o for o in batch]
        if any(o is None for o in new):
            continue
        out[i] = (end, [c for c in singles if c.dst.id not in fwd], new)
    for i in list(runs):  # a batch whose results the Assign after it copies into the accumulator
        into = _batch_into(ops, runs[i][2], out, out[i], readers, reads_of)
        if into is not None:
            end, singles, batch = out[i]
            out[i] = (into[1], singles, IntoBatch(batch, into[0], into[2]))
    by_user: Dict[int, Dict[int, tuple]] = {}  # op position -> the copies forwarded into it
    for p, s in enumerate(ops):
        src = _copy_of(s)
        if src is None or p in covered or readers.get(s.dst.id) != 1:
            continue
        srcs = {r[0].id for r in src}
        for u in range(p + 1, min(len(ops), p + 1 + _SCAN)):
            t = ops[u]
            if u in covered:
                break
            if s.dst.id in reads_of[id(t)]:
                if isinstance(t, Op) and not getattr(t, "may_wait", False) and getattr(t, "barrier_id", None) is None:
                    by_user.setdefault(u, {})[s.dst.id] = (p, src)
                break
            w = _writes(t)
            if w is None or w & srcs:
                break
    for u, fwd_at in by_user.items():
        new = _substitute(ops[u], {r: src for r, (_, src) in fwd_at.items()})
        if new is None:
            continue
        out[u] = (u + 1, [new], [])
        for p, _ in fwd_at.values():
            out[p] = (p + 1, [], [])
    for u, s in enumerate(ops):  # an op whose result one Assign copies, whole, into a mutable register
        if u in covered or u + 1 in covered or u + 1 >= len(ops) or not getattr(s, "into_mutable", False):
            continue
        a, d = ops[u + 1], s.dst
        n = d.n
        if (isinstance(a, Assign) and a.dst.mutable and not d.mutable and a.dst.n == n
                and a.dst.dtype.name == d.dtype.name
                and readers.get(d.id, 0) - (d.id in reads_of[id(s)]) == 1  # (the op names its own dst)
                and a.index == tuple(range(n)) and a.src == tuple((d, i) for i in range(n))):
            got = out.get(u)
            new = _clone(got[1][0] if got is not None and got[1] else s)
            new.dst = a.dst
            out[u] = (u + 2, [new], [])
    taken = {j for i, (end, _, _) in out.items() for j in range(i, end)}
    for u, s in enumerate(ops):  # an op that can (ldmatrix) whose result one Assign copies into a mutable register
        if not getattr(s, "into_elements", False) or u in covered or (u in out and out[u][0] != u + 1):
            continue
        got = out.get(u)
        base = s if got is None else (got[1][0] if len(got[1]) == 1 and not got[2] else None)
        a = _assign_at(ops, out, u + 1)
        if base is None or a is None:
            continue
        a, after = a
        d = s.dst
        if (a.dst.mutable and not d.mutable and a.dst.dtype.name == d.dtype.name
                and readers.get(d.id, 0) - (d.id in reads_of[id(s)])  # (the Assigns merged into a)
                == sum(d.id in reads_of[id(ops[j])] for j in range(u + 1, after)) and len(set(a.index)) == len(a.index)
                and a.src == tuple((d, i) for i in range(d.n))):
            new = _clone(base)
            new.into, new.at = a.dst, _index(a.index)
            out[u] = (after, [new], [])
            taken.update(range(u, after))
    for u, s in enumerate(ops):  # a Load whose result one Assign copies, whole, into a mutable register
        if type(s) is not Load or u in taken or u + 1 in taken or u + 1 >= len(ops):
            continue
        a, d = ops[u + 1], s.dst
        if (isinstance(a, Assign) and a.dst.mutable and not d.mutable and a.dst.dtype.name == d.dtype.name
                and readers.get(d.id, 0) == 1 and len(set(a.index)) == len(a.index)
                and a.src == tuple((d, i) for i in range(d.n))):
            out[u] = (u + 2, [LoadInto(s, a)], [])
    return out


def _assign_at(ops: List[Any], out: Dict[int, Any], p: int) -> Any:
    """(the Assign that runs at position p, the position after it): one of the kernel's, or the
    Assigns merged by warps._runs; None if no Assign runs there."""
    got = out.get(p)
    if got is not None:
        end, singles, batch = got
        if not batch and len(singles) == 1 and type(singles[0]) is Assign:
            return singles[0], end
        return None
    if p < len(ops) and type(ops[p]) is Assign:
        return ops[p], p + 1
    return None


def _batch_into(ops: List[Any], traced: List[Any], out: Dict[int, Any], run: tuple, readers: Dict[int, int],
                reads_of: Dict[int, set]) -> Any:
    """(the accumulator, the position after the Assign, the Assign) where a run of batched ops
    (traced: as in the kernel; run: its plan, the ops perhaps forwarded copies) that say they can
    (``batch_into``: the field whose elements each D value replaces) is followed by an Assign
    that copies every value of every op's result, and nothing else, into a mutable register of
    their type, each to the element the op read it from (cute.gemm's accumulator after the mma.syncs
    of a k-block), the results read by nothing else. None otherwise."""
    end, _, batch = run
    if not batch or not getattr(type(batch[0]), "batch_into", None):
        return None
    got = _assign_at(ops, out, end)
    if got is None:
        return None
    a, after = got
    acc = a.dst
    if not acc.mutable or len(set(a.index)) != len(a.index):
        return None
    where: Dict[tuple, int] = {}
    for j, r in zip(a.index, a.src):
        if not (isinstance(r, tuple) and len(r) == 2 and isinstance(r[0], Reg)):
            return None
        where[(r[0].id, r[1])] = j
    if len(where) != len(a.src) or sum(o.d.n for o in batch) != len(a.src):
        return None
    for o, t in zip(batch, traced):
        d = o.d
        if d.mutable or d.dtype.name != acc.dtype.name or readers.get(d.id, 0) - (d.id in reads_of[id(t)]) != 1:
            return None
        c = getattr(o, type(o).batch_into)
        if len(c) != d.n:
            return None
        for k in range(d.n):
            j = where.get((d.id, k))
            if j is None or not (isinstance(c[k], tuple) and c[k][0] is acc and c[k][1] == j):
                return None
    return acc, after, a


def _index(idx: Any) -> Any:
    """Element numbers as a numpy index: a slice where they are consecutive."""
    idx = list(idx)
    return (slice(idx[0], idx[0] + len(idx)) if idx == list(range(idx[0], idx[0] + len(idx)))
            else np.asarray(idx, dtype=np.intp))


class IntoBatch(list):
    """The ops of a batch (warps._runs) with the accumulator their results go to (``into``) and
    the Assign that copies them there (``assign``), which the interpreter runs after the batch
    unless ``interpret_batch`` says it wrote the accumulator itself (returns "into")."""

    def __init__(self, ops: List[Any], into: Reg, assign: Assign):
        super().__init__(ops)
        self.into, self.assign = into, assign


class LoadInto(Load):
    """A ``Load`` followed by the ``Assign`` that copies all of its result, in order, into elements
    ``index`` of the mutable register ``into`` (the only reader of the load's register): the
    interpreter writes the loaded values there (the rows of the threads of the mask, as the Assign
    would) and makes no register of the load's own."""

    __slots__ = ("into", "at")

    def __init__(self, load: Load, assign: Assign):
        super().__init__(load.dst, load.param, load.base, load.offsets)
        self.loc = load.loc
        self.into = assign.dst
        self.at = _index(assign.index)
