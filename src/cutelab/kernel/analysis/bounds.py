"""Bounds proofs: every load and store of a traced kernel in bounds for every thread of its grid.

``check_bounds`` proves an access by interval arithmetic on its index expression, or by exact
evaluation over all threads when that is not enough; what it cannot prove on the GPU it guards
(``guards``) or defers to the launch, when scalar arguments are known (``check_deferred``). A
launch that would touch memory outside a tensor is refused with a LaunchError before anything runs.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ...errors import LaunchError, TraceError
from ..ir.nodes import KernelIR, Load, Store
from ..ir.symbolic import evaluate, sym_range


def _exact_check(ir: KernelIR, e: Any, omin: int, omax: int, length: int,
                 guards: Sequence[Tuple[Any, bool]] = (), extra: Optional[Dict[str, int]] = None,
                 loop: Any = None) -> Tuple[int, int, Any]:
    """(min, max) of e over every thread of the launch (for which every guard (cond, polarity)
    holds), and the first thread (in launch order) whose access [e + omin, e + omax] leaves
    [0, length), or None."""
    from ..ir.nodes import thread_env

    nt = ir.num_threads
    nblocks = ir.grid[0] * ir.grid[1] * ir.grid[2]
    step = max(1, (1 << 22) // nt)
    lo = hi = None
    first_bad = None
    for first in range(0, nblocks, step):
        k = min(step, nblocks - first)
        env = thread_env(ir.grid, ir.block, first, k, getattr(ir, "cluster", (1, 1, 1)))
        if extra:
            env.update(extra)
        runs = None
        if loop is not None:  # bind the loop variable to its first or last value; threads with no trip are out
            f, end = loop
            lo_v = np.broadcast_to(np.asarray(evaluate(f.lo, env), dtype=np.int64), (k * nt,))
            hi_v = np.broadcast_to(np.asarray(evaluate(f.hi, env), dtype=np.int64), (k * nt,))
            st = f.step
            trips = np.maximum(0, (hi_v - lo_v + (st - 1 if st > 0 else st + 1)) // st)
            runs = trips > 0
            env[f.var.name] = lo_v if end == "first" else lo_v + (np.maximum(trips, 1) - 1) * st
        v = np.broadcast_to(np.asarray(evaluate(e, env), dtype=np.int64), (k * nt,))
        if guards or runs is not None:
            m = np.ones(k * nt, dtype=bool) if runs is None else runs.copy()
            for c, pol in guards:
                cv = np.broadcast_to(np.asarray(evaluate(c, env)) != 0, (k * nt,))
                m &= cv if pol else ~cv
            if not m.any():
                continue
            env = {n: (np.broadcast_to(a, (k * nt,))[m] if isinstance(a, np.ndarray) else a) for n, a in env.items()}
            v = v[m]
        vlo, vhi = int(v.min()), int(v.max())
        lo = vlo if lo is None else min(lo, vlo)
        hi = vhi if hi is None else max(hi, vhi)
        if first_bad is None and (vlo + omin < 0 or vhi + omax >= length):
            i = int(np.argmax((v + omin < 0) | (v + omax >= length)))
            first_bad = ({n: (int(a[i]) if isinstance(a, np.ndarray) else int(a)) for n, a in env.items()}, int(v[i]))
    return lo, hi, first_bad


def _where(at: Dict[str, int]) -> str:
    return (f"block ({at['bid.x']},{at['bid.y']},{at['bid.z']}) thread ({at['tid.x']},{at['tid.y']},{at['tid.z']})")


def _accesses(block: Any, guards: List[Tuple[Any, bool]], loops: Tuple[Any, ...]):
    """(Load or Store, the If conditions guarding it as (cond, polarity), the enclosing loops)."""
    from ..ir.nodes import For, If, Op, While

    for op in block.ops:
        if isinstance(op, (Load, Store)):
            yield op, guards, loops
        elif isinstance(op, Op):
            for a in op.accesses():
                yield a, guards + list(getattr(a, "guards", ())), loops  # an op's own predicate guards it too
        elif isinstance(op, If):
            yield from _accesses(op.then, guards + [(op.cond, True)], loops)
            yield from _accesses(op.orelse, guards + [(op.cond, False)], loops)
        elif isinstance(op, For):
            yield from _accesses(op.body, guards, loops + (op,))
        elif isinstance(op, While):
            yield from _accesses(op.before, guards, loops + (op,))
            yield from _accesses(op.body, guards, loops + (op,))


def _is_store(s: Any) -> bool:
    return isinstance(s, Store) or bool(getattr(s, "is_store", False))


def _linear_in(e: Any, var: Any) -> bool:
    """e = (terms without var) + c * var: its extremes over var are at var's ends."""
    from ..ir.symbolic import Expr, Lin, atoms

    if not isinstance(e, Expr):
        return True
    if e is var or (isinstance(e, Expr) and e.key == var.key):
        return True
    if isinstance(e, Lin):
        return all(a.key == var.key or not any(v.key == var.key for v in atoms(a)) for a, _ in e.terms)
    return not any(v.key == var.key for v in atoms(e))


def _exactly_checkable(base: Any, guards: List[Tuple[Any, bool]], loops: Tuple[Any, ...]) -> bool:
    """An access whose index and guards are expressions of the thread and block indices (and
    scalar arguments), outside loops or inside one runtime For loop whose bounds are such
    expressions and in whose variable the index is linear: evaluate it for every thread (at
    both ends of the loop)."""
    from ..ir.nodes import For, LoopVar
    from ..ir.symbolic import Expr, atoms

    if len(loops) > 1 or (loops and not isinstance(loops[0], For)):
        return False
    var = loops[0].var if loops else None
    if loops:
        f = loops[0]
        for b in (f.lo, f.hi):
            if isinstance(b, tuple):  # a bound held in a register (a traced min, say): data-dependent
                return False
            if isinstance(b, Expr) and any(isinstance(v, LoopVar) or v.name.startswith("reg.") for v in atoms(b)):
                return False
        if not _linear_in(base, var):
            return False
    for e in [base] + [c for c, _ in guards]:
        if isinstance(e, tuple):  # a register condition: data-dependent
            return False
        if isinstance(e, Expr) and any(v.name.startswith("reg.") for v in atoms(e)):
            return False  # an index read from a register (trace.RegVar): data-dependent
        if isinstance(e, Expr) and any(isinstance(v, LoopVar) and v is not var for v in atoms(e)):
            return False
        if var is not None and e is not base and isinstance(e, Expr) and any(v is var for v in atoms(e)):
            return False  # a guard that depends on the loop variable
    return True


def check_bounds(ir: KernelIR, mode: str = "cpu", scalars: Optional[Dict[str, int]] = None,
                 launch_scalars: Optional[Dict[str, int]] = None) -> List[Any]:
    """Refuse the launch if any load or store of any thread would leave its tensor's storage.

    Straight-line kernels are checked here, exactly, for every thread. In structured kernels
    (loops, branches, scalar arguments) an access the index ranges do not prove in bounds is
    checked by the CPU interpreter as it runs (on copies, committed at the end); on the GPU it is
    checked exactly for every thread when it lies outside loops and its index and guarding
    conditions are expressions of the indices (and of scalar arguments: those accesses are
    returned, to be checked at each launch with the scalars' values, see check_deferred), and
    otherwise the access is guarded (see guards.py: the CUDA tests it, skips it when out of range
    and records it in an error word the host turns into a LaunchError), or, for an op that cannot
    be guarded, the launch is refused. Before guarding, the registers' value ranges (ranges.py)
    may prove the access: for every scalar argument, or for ``launch_scalars`` (the values of the
    launch being prepared; the proof is returned with the deferred checks, to be checked again at
    each launch with other values). The guarded accesses are set on ir (ir.guards)."""
    from ..analysis.guards import plan_guards
    from .values import reads_registers
    from ..ir.nodes import ArgVar, DimVar
    from ..ir.symbolic import atoms

    structured = ir.structured
    deferred: List[Any] = []
    guarded: List[Any] = []
    analysis = None  # the registers' value ranges, computed when an access needs them
    for s, guards, looped in _accesses(ir.body, [], ()):
        p = s.param
        omin, omax = min(s.offsets), max(s.offsets)
        lo, hi = sym_range(s.base)
        if lo + omin >= 0 and hi + omax < p.length:
            continue
        if structured or reads_registers(s.base):  # (an index read from memory: not exactly checkable)
            if mode == "cpu":
                continue
            if _exactly_checkable(s.base, guards, looped):
                exprs = [s.base] + [c for c, _ in guards] + ([looped[0].lo, looped[0].hi] if looped else [])
                # (launch dimensions are not: the exact check evaluates them at the launch's values, thread_env)
                uses_args = any(isinstance(v, ArgVar) and not isinstance(v, DimVar) for e in exprs for v in atoms(e))
                if uses_args and scalars is None:
                    deferred.append((s, guards, looped))
                    continue
                _raise_if_out(ir, s, guards, scalars or {}, looped)
                continue
            proof = False
            if analysis is None:
                from .prove import Threads
                from .ranges import analyze

                try:
                    analysis = analyze(ir)
                except (TypeError, ValueError, KeyError, AttributeError, TraceError):  # an IR it does not know:
                    analysis = False  # prove nothing with it (guard as before)
                threads = Threads(ir)
            if analysis:
                from .prove import prove

                try:
                    proof = prove(ir, s, analysis.record_for(s), launch_scalars, threads)
                except (TypeError, ValueError, KeyError, AttributeError, TraceError):
                    proof = False
            if proof is not False:
                if proof is not True:
                    deferred.append(proof)  # proved for these scalar values: checked again for others
                continue
            if isinstance(s, (Load, Store)) or getattr(getattr(s, "op", None), "guardable", False):
                guarded.append((s, s if isinstance(s, (Load, Store)) else s.op))
                continue
            what = "store to" if _is_store(s) else "load from"
            at = getattr(getattr(s, "op", None), "where", "") or getattr(s, "where", "")
            raise LaunchError(
                f"{ir.name}{at}: cannot prove the {what} {p.name} ({type(getattr(s, 'op', s)).__name__}) in bounds "
                f"for every thread (its offsets range "
                f"over [{lo + omin}, {hi + omax}] as far as the tracer can tell, and {p.name} has {p.length} "
                f"elements); on the GPU cutelab launches only kernels whose accesses are proved in bounds "
                f"(accesses inside runtime loops must be provable from the loop's bounds). Run it with "
                f"interpret=True (which checks every access as it runs). Nothing was launched."
            )
        _raise_if_out(ir, s, (), {})
    plan_guards(ir, guarded)
    # on the GPU every access not guarded is proved in bounds (or the launch was refused): the CUDA
    # printer may then compute its offset modulo 2**32 (cuda.CudaRenderer.base_var)
    ir.bounds_proved = mode != "cpu"
    return deferred


def check_deferred(ir: KernelIR, deferred: List[Any], scalars: Dict[str, int]) -> None:
    """The exact check of accesses that depend on scalar arguments, with this launch's values."""
    threads = None
    for entry in deferred:
        if not isinstance(entry, tuple):  # a range proof (prove.RangeCheck)
            if threads is None:
                from .prove import Threads

                threads = Threads(ir)
            entry.check(ir, scalars, threads)
            continue
        s, guards, loops = entry
        _raise_if_out(ir, s, guards, scalars, loops)


def _raise_if_out(ir: KernelIR, s: Any, guards: Any, extra: Dict[str, int], loops: Tuple[Any, ...] = ()) -> None:
    p = s.param
    omin, omax = min(s.offsets), max(s.offsets)
    if loops:  # the index at the loop's first and last value, for the threads that run the loop
        f = loops[0]
        bad = None
        elo = ehi = None
        for end in ("first", "last"):
            r = _exact_check(ir, s.base, omin, omax, p.length, guards, extra, (f, end))
            if r[0] is not None:
                elo = r[0] if elo is None else min(elo, r[0])
                ehi = r[1] if ehi is None else max(ehi, r[1])
            bad = bad or r[2]
    else:
        elo, ehi, bad = _exact_check(ir, s.base, omin, omax, p.length, guards, extra)
    if bad is None:
        return
    what = "store to" if _is_store(s) else "load from"
    at, v = bad
    vals = "".join(f", {k[4:]} = {x}" for k, x in extra.items() if not k.startswith("arg.%"))  # (not DimVars)
    raise LaunchError(
        f"{ir.name}: the {what} {p.name} reaches element offsets [{elo + omin}, {ehi + omax}], but {p.name} "
        f"has {p.length} elements; the first thread out of range is {_where(at)} (offsets "
        f"[{v + omin}, {v + omax}]), with grid {ir.grid} and block {ir.block}{vals}. Is the grid too large for "
        f"the tiles? Nothing was launched."
    )
