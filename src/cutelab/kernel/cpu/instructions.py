"""Which GPU instructions each memory access of a kernel becomes, for the profiler (``profiler.py``).

``AccessPlans`` (``_Plans``) reads the compiler's passes (``kernel/passes``: the ``Plan`` the CUDA
printer prints: vectors, warp-retiled copies, lane pairs), then models what the CUDA compiler
does to the printed code, as checked in SASS (tests/test_profile.py): loads nobody reads are
dropped (``dead_loads``), repeated loads of read-only tensors are done once, consecutive shared
accesses are merged into wider vectors (with register divisibility from ``_reg_divs``).

May import: ``kernel.ir``, ``kernel.passes`` and cutelab's core; not the CUDA printer.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

def _regs_in(x: Any, out: set, depth: int = 0) -> None:
    """Collect the ids of the register arrays x refers to (a Ref, a tuple of them, an op's fields)."""
    from ..ir.nodes import Reg

    if isinstance(x, Reg):
        out.add(x.id)
    elif isinstance(x, (tuple, list)) and depth < 4:
        for y in x:
            _regs_in(y, out, depth + 1)
    elif isinstance(x, dict) and depth < 4:
        for y in x.values():
            _regs_in(y, out, depth + 1)


def _op_fields(op: Any) -> List[Any]:
    vals = [getattr(op, n) for c in type(op).__mro__ for n in getattr(c, "__slots__", ()) if hasattr(op, n)]
    return vals + list(getattr(op, "__dict__", {}).values())


def _pure_load_op(op: Any) -> bool:
    """An atom op that only reads memory into its ``dst`` registers (ldmatrix): dead when they are."""
    from ..ir.nodes import Op

    if not isinstance(op, Op) or not hasattr(op, "dst"):
        return False
    try:
        acc = op.accesses()
    except Exception:  # noqa: BLE001 - an op we cannot ask is kept
        return False
    regs: set = set()
    _regs_in(op.dst, regs)
    return bool(acc) and bool(regs) and not any(a.is_store for a in acc)


def dead_loads(ir: Any) -> set:
    """ids of the Loads (and of the atom ops that only load into their ``dst`` registers, as
    ldmatrix) whose values no store, branch, printf or other atom op ever uses (directly or through
    arithmetic): the CUDA compiler drops them, so they make no memory request.

    Any other ``Op`` counts as using every register it refers to (its fields are searched), so a
    load feeding an atom op is kept."""
    from ..ir.nodes import Assign, Compute, If, Load, Op, Printf, Store, While, walk

    ops = list(walk(ir.body))
    live: set = set()
    pure = {id(op): op for op in ops if _pure_load_op(op)}
    for op in ops:
        if id(op) in pure:
            dst: set = set()
            _regs_in(op.dst, dst)
            used: set = set()
            _regs_in([v for v in _op_fields(op) if v is not op.dst], used)
            live |= used - dst
        elif isinstance(op, Store):
            _regs_in(op.src, live)
        elif isinstance(op, Printf):
            for part in op.parts:
                if isinstance(part, tuple) and part and part[0] == "val":
                    _regs_in(part[1], live)
        elif isinstance(op, (If, While)):
            _regs_in(op.cond, live)
        elif isinstance(op, Op):
            _regs_in(_op_fields(op), live)
    changed = True
    while changed:
        changed = False
        for op in ops:
            if isinstance(op, (Compute, Assign)) and op.dst.id in live:
                before = len(live)
                _regs_in(op.args if isinstance(op, Compute) else op.src, live)
                changed |= len(live) != before
    dead = {id(op) for op in ops if isinstance(op, Load) and op.dst.id not in live}
    for op in pure.values():
        regs: set = set()
        _regs_in(op.dst, regs)
        if not regs & live:
            dead.add(id(op))
    return dead


def _atom_div(a: Any, divs: Optional[Dict[Any, int]]) -> int:
    """What an index atom is known to be divisible by (a register's from the analysis of _reg_divs)."""
    ref = getattr(a, "ref", None)  # trace.RegVar: an integer register used as an index
    if divs is not None and isinstance(ref, tuple) and len(ref) == 2:
        return divs.get((ref[0].id, ref[1]), 1)
    return a.div


def _expr_div(e: Any, divs: Optional[Dict[Any, int]]) -> int:
    from math import gcd

    from ..ir.symbolic import Lin, is_sym

    if isinstance(e, Lin):
        d = abs(int(e.const))
        for a, c in e.terms:
            d = gcd(d, abs(c) * _atom_div(a, divs))
        return d
    if is_sym(e):
        return _atom_div(e, divs)
    return abs(int(e))


def _reg_divs(ir: Any) -> Dict[Any, int]:
    """{(register id, element): a number known to divide its value} for integer
    registers, as the compiler's known-bits analysis sees them: sums keep the gcd of their terms,
    products multiply, moves, conversions and selects keep what they get; a register written in a
    loop gets the gcd of everything written to it (it starts at 0, divisible by anything)."""
    from math import gcd

    from ..ir.symbolic import is_sym
    from ..ir.nodes import Assign, Compute, walk

    ops = [op for op in walk(ir.body) if isinstance(op, (Compute, Assign))]
    divs: Dict[Any, int] = {}

    def of(ref: Any) -> int:
        if isinstance(ref, tuple):
            return divs.get((ref[0].id, ref[1]), 1 if not ref[0].mutable else 0)
        if is_sym(ref):
            return _expr_div(ref, divs)
        if isinstance(ref, (bool, np.bool_)):
            return 1
        if isinstance(ref, (int, np.integer)):
            return abs(int(ref))
        return 1

    for _ in range(8):  # to a fixpoint: values only lose divisibility
        before = dict(divs)
        for op in ops:
            if getattr(op.dst.dtype, "kind", "") not in ("int", "uint"):
                continue
            if isinstance(op, Assign):
                for j, ref in zip(op.index, op.src):
                    k = (op.dst.id, j)
                    divs[k] = gcd(divs.get(k, 0), of(ref))
                continue
            for i in range(op.dst.n):
                a = [of(col[i]) for col in op.args]
                if op.op in ("mov", "cvt", "neg", "abs"):
                    d = a[0]
                elif op.op in ("add", "sub", "max", "min"):
                    d = gcd(a[0], a[1])
                elif op.op == "mul":
                    d = a[0] * a[1]
                elif op.op == "select":
                    d = gcd(a[1], a[2])
                else:
                    d = 1
                divs[(op.dst.id, i)] = d
        if divs == before:
            break
    return divs


def _split_base(base: Any, divs: Optional[Dict[Any, int]] = None) -> Tuple[Any, int, int]:
    """(key of the non-constant part, its divisibility, the constant) of an index expression."""
    from math import gcd

    from ..ir.symbolic import Lin, is_sym

    if isinstance(base, Lin):
        d = 0
        for a, c in base.terms:
            d = gcd(d, abs(c) * _atom_div(a, divs))
        return ("+", tuple((a.key, c) for a, c in base.terms)), d, int(base.const)
    if is_sym(base):
        return base.key, _atom_div(base, divs), 0
    return None, 0, int(base)


class _Plans:
    """How each Load/Store of a kernel becomes GPU instructions: what the passes planned and the
    CUDA printer prints (``passes.run_passes``: vectors, warp-retiled copies, lane pairs), then what
    the CUDA compiler does to it, as
    checked in SASS (tests/test_profile.py): a load whose value is never used is dropped; a repeated
    load of a read-only tensor at the same address in the same straight-line block is done once;
    consecutive accesses to one shared array at constant distances (same direction, same block, no
    barrier, region, printf, atom op or access in the other direction to that array between them)
    are merged into the widest aligned vectors (up to 16 bytes). Global accesses are not merged
    (the compiler does not know a global pointer's alignment)."""

    def __init__(self, ir: Any):
        from .. import passes

        self.vector_plan = passes.vector_plan
        self.compiled = None  # the passes' Plan (the one the CUDA printer prints, same options)
        self.note = ""
        try:
            self.compiled = passes.run_passes(ir, passes.Options.from_env())
        except Exception as e:  # noqa: BLE001 - an IR a pass cannot plan: per-access vector plans only
            self.note = (f"the compiler's passes failed on this kernel ({type(e).__name__}: {str(e)[:200]}); "
                         f"accesses are counted as vector_plan splits them")
        try:
            self.dead = dead_loads(ir)
        except Exception as e:  # noqa: BLE001 - an IR this analysis does not know: keep every load
            self.dead = set()
            self.note += f" the dead-load analysis failed ({type(e).__name__}: {str(e)[:120]}): every load is counted"
        try:
            self.divs = _reg_divs(ir)
        except Exception as e:  # noqa: BLE001 - then register-indexed accesses are taken as unaligned
            self.divs = {}
            self.note += (f" the register analysis failed ({type(e).__name__}: {str(e)[:120]}): register-indexed "
                          f"shared accesses are not merged")
        self.plan: Dict[int, List[Tuple]] = {}
        self._block(ir.body)

    def of(self, s: Any) -> List[Tuple]:
        """[(kind, i, k, extra)]: 'vec' (offsets[i], k elements), 'pair0'/'pair1' (lane pairs sharing
        two 16-byte loads at offsets[i]), 'retile' (j-th 16-byte access of a warp-retiled copy)."""
        got = self.plan.get(id(s))
        if got is None:  # an op made after the plans (cannot happen for a finished trace)
            got = self._printed(s)
            self.plan[id(s)] = got
        return got

    def _printed(self, s: Any) -> List[Tuple]:
        p = s.param
        c = self.compiled
        out: List[Tuple] = []
        if c is not None and id(s) in c.retiled:
            plan = c.retiled[id(s)]
            return [("retile", j, 16 // p.dtype.bytes, plan) for j in range(plan["nvec"])]
        plan = c.vector(s) if c is not None else self.vector_plan(p, s.base, s.offsets)
        pairs = c.pairs.get(id(s), set()) if c is not None else set()
        h = 16 // p.dtype.bytes
        skip = {i + h for i in pairs}
        for i, k in plan:
            if i in skip:
                continue
            if i in pairs:
                out += [("pair0", i, h, None), ("pair1", i, h, None)]
            else:
                out.append(("vec", i, k, None))
        return out

    def _block(self, block: Any) -> None:
        from ..ir.nodes import Barrier, For, If, Load, Op, Printf, Shared, Store, While

        chains: Dict[Any, List[Any]] = {}  # (array, direction, base key) -> ops, in program order
        seen: Dict[Any, Any] = {}  # (param, base key, offsets) -> the first load of a read-only tensor

        def flush(pred: Callable[[Any], bool] = lambda k: True) -> None:
            for key in [k for k in chains if pred(k)]:
                self._merge(chains.pop(key))

        for op in block.ops:
            if isinstance(op, (For, If, While)):
                flush()
                seen.clear()
                for sub in ((op.body,) if isinstance(op, For) else (op.then, op.orelse) if isinstance(op, If)
                            else (op.before, op.body)):
                    self._block(sub)
                continue
            if not isinstance(op, (Load, Store)):
                if isinstance(op, (Barrier, Printf, Op)):  # the compiler moves no shared access across these
                    flush()
                continue
            if id(op) in self.dead:
                self.plan[id(op)] = []
                continue
            p = op.param
            is_load = isinstance(op, Load)
            if not isinstance(p, Shared):
                if is_load and not p.written:
                    k = (p.index, op.base.key if hasattr(op.base, "key") else op.base, tuple(op.offsets))
                    if k in seen:
                        self.plan[id(op)] = []  # the compiler reuses the first load's value
                        continue
                    seen[k] = op
                self.plan[id(op)] = self._printed(op)
                continue
            key, _, _ = _split_base(op.base)
            d = "ld" if is_load else "st"
            flush(lambda k: k[0] == p.index and k[1] != d)  # an access in the other direction: no reordering
            ck = (p.index, d, key)
            if not is_load and ck in chains:  # a store over an element already stored: keep the order
                _, _, c0 = _split_base(op.base)
                mine = {c0 + o for o in op.offsets}
                if any(_split_base(x.base)[2] + o in mine for x in chains[ck] for o in x.offsets):
                    flush(lambda k: k == ck)
            chains.setdefault(ck, []).append(op)
        flush()

    def _merge(self, ops: List[Any]) -> None:
        """Merge the elements of a chain of shared accesses into aligned vectors of up to 16 bytes."""
        from math import gcd

        from ..ir.nodes import pow2_divisor

        p = ops[0].param
        e = p.dtype.bytes
        _, div, _ = _split_base(ops[0].base, self.divs)
        owner: Dict[int, Tuple[Any, int]] = {}
        for op in ops:
            _, _, c0 = _split_base(op.base)
            for i, o in enumerate(op.offsets):
                owner.setdefault(c0 + int(o), (op, i))  # a repeated load of an element: done once
        for op in ops:
            self.plan[id(op)] = []
        arr_align = max(16, p.align)
        pos = sorted(owner)
        j = 0
        while j < len(pos):
            c = pos[j]
            take = 1
            for w in (16, 8, 4, 2):
                k = w // e
                if k <= 1 or j + k > len(pos) or pos[j + k - 1] != c + k - 1:
                    continue
                g = gcd(div, abs(c))
                align = arr_align if g == 0 else min(arr_align, pow2_divisor(g * e))
                if align >= w:
                    take = k
                    break
            op, i = owner[c]
            merged = len({id(owner[x][0]) for x in pos[j:j + take]}) > 1
            self.plan[id(op)].append(("vec", i, take, "merged" if merged else None))
            j += take


AccessPlans = _Plans
