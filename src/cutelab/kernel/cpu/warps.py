"""The interpreter's execution model: groups of warps that run on their own.

A batch of thread blocks starts as one group of warps in lock-step: every op runs over all its
threads at once, with a mask for the threads a branch or loop leaves out (divergence inside a
warp stays a mask). Each group has its own position in the structured IR: a stack of frames
(a block and the op it is at, a branch, a loop and its trip). Where threads part at an ``if``
whose branches may wait on other threads (an mbarrier wait, a named barrier, ``sync_threads``),
the group forks: each side takes its own threads, registers and index variables and goes on by
itself, through the branch and past it, as warps do on the GPU. Groups never need to meet again.

A scheduler runs the groups in turn; a group runs until it finishes or reaches a wait that
cannot complete yet (``Op.waits_for`` says what it waits for), and then the next one runs. A
round in which no group moves first lets groups waiting only where their branch ends go on
apart, then parts a group some of whose warps could go on past their wait (each waiting on a
barrier of its own: ``Op.ready_threads``); a round in which still no group can move is a
deadlock: it is reported with every group's warps, the user's line each waits at and what it
waits for. Nothing hangs.

Barriers: ``sync_threads`` waits for every thread of the block that has not finished; a named
barrier (an op with ``barrier_id``/``num_threads``/``wait``) for ``num_threads`` arrivals. A
group that holds every unfinished thread of its blocks passes at once (the lock-step case).

Optional race detection (``CUTELAB_RACECHECK=1``, ``racecheck.py``): shared-memory accesses of
different warps with no barrier or wait between them (read-after-write, write-after-read,
write-after-write) are reported with both lines, as compute-sanitizer's racecheck would on the GPU.

Runs of independent instruction ops (mma.sync) run as one (``_runs``, ``Op.interpret_batch``), and
copies that only feed one instruction op are left out (``forward.py``).

May import: ``kernel.ir``, ``kernel.cpu.context``, ``kernel.cpu.forward``, ``kernel.cpu.racecheck``,
``kernel.cpu.storerun``,
``cutelab.errors``.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List

import numpy as np

from ...errors import LaunchError
from ..ir.nodes import Assign, Barrier, Compute, For, If, Load, Op, While, walk
from .context import ExecContext, and_mask, warp_of, warps_per_block
from .forward import plan as forward_plan
from . import liveness
from .racecheck import RaceCheck
from .storerun import store_run

__all__ = ["run_groups", "MAX_WHILE_ROUNDS"]

MAX_WHILE_ROUNDS = 1 << 20  # a runtime while loop that runs longer is stopped with an error
BATCH_RUNS = True  # run independent instruction ops (mma.sync) of a run as one (_runs); tests turn it off to compare
DROP_DEAD = True  # drop the registers no later op of the body reads (liveness.py); tests turn it off to compare

#: Set by ``cutelab.compat.distributed`` while this process shares memory with other ranks (None
#: otherwise): an object with ``polls(run, s)`` (True when while loop ``s`` reads memory that other
#: processes write: it then has no round limit), ``wait(run, g, s, f)`` (called each round after
#: the first of such a loop: yields the CPU to the other ranks, and raises when every rank waits
#: and none can move: a deadlock across ranks) and ``done(run, f)`` (the loop has ended).
shared_waits: Any = None


def _is_sync(s: Any) -> bool:
    """An op at which a warp may wait for others."""
    return isinstance(s, Barrier) or getattr(s, "barrier_id", None) is not None or getattr(s, "may_wait", False)


def _has_sync(ir: Any, block: Any) -> bool:
    """Whether warps may wait for other warps inside block (cached on the kernel's IR)."""
    cache = ir.__dict__.setdefault("_cpu_has_sync", {})  # by id of a block: the IR keeps its blocks alive
    key = id(block)
    if key not in cache:
        cache[key] = any(_is_sync(s) for s in walk(block))
    return cache[key]


def _polls_only(ir: Any, block: Any) -> bool:
    """Whether block only reads (register arithmetic, loads, an mbarrier try_wait): the body of
    ``while not try_wait(...): pass``, where the tracer recomputes the condition (cached on the IR)."""
    cache = ir.__dict__.setdefault("_cpu_polls_only", {})
    key = id(block)
    if key not in cache:
        polls = ("try_wait", "try_wait_state")
        cache[key] = all(type(s) in (Compute, Load) or (getattr(s, "kind", None) in polls and s.may_wait)
                         for s in block.ops)
    return cache[key]


# --------------------------------------------------------------------------- frames

class _Block:
    __slots__ = ("block", "pc", "mask")

    def __init__(self, block: Any, mask: Any):
        self.block, self.pc, self.mask = block, 0, mask


class _If:
    __slots__ = ("s", "mask", "stage", "c", "join")

    def __init__(self, s: Any, mask: Any):
        self.s, self.mask, self.stage, self.c, self.join = s, mask, 0, None, None


class _Join:
    """Where the groups that forked at an ``if`` meet again, as warps reconverge: each waits at
    the end of its branch for the others, and they go on as one group. If every group waits and
    some wait only here, the join is released and they go on apart (a producer warp that must
    not wait for its consumer to finish first)."""

    __slots__ = ("members", "arrived", "released", "loc")

    def __init__(self, members: List["_Group"], loc: str):
        self.members, self.arrived, self.released, self.loc = list(members), [], False, loc


class _For:
    __slots__ = ("s", "mask", "lo", "hi", "k")

    def __init__(self, s: Any, mask: Any):
        self.s, self.mask, self.lo, self.hi, self.k = s, mask, None, None, 0


class _While:
    __slots__ = ("s", "mask", "m", "stage", "rounds", "prev")

    def __init__(self, s: Any, mask: Any):
        self.s, self.mask, self.m, self.stage, self.rounds = s, mask, None, 0, 0
        self.prev = None  # the threads still looping after the previous round's test


def _restrict(frame: Any, keep: np.ndarray) -> Any:
    """A copy of frame whose masks hold only the threads of keep."""
    f = type(frame).__new__(type(frame))
    for k in type(frame).__slots__:
        setattr(f, k, getattr(frame, k))
    f.mask = keep.copy() if frame.mask is None else (frame.mask & keep)
    if isinstance(f, _While) and f.m is not None:
        f.m = f.m & keep
    return f


# --------------------------------------------------------------------------- barriers

class _Barriers:
    """Arrivals at sync_threads (id -1) and named barriers, per block of the batch.

    The hardware counts a named barrier's arrivals (bar.arrive and bar.sync, per warp) and completes
    the phase at its thread count, whoever arrived. A thread that arrives twice in one phase is an error
    (``second_arrival``: the phase could complete without the threads it waits for, and the block hang),
    except a bar.sync after the thread's own bar.arrive, the epilogue idiom of FlashAttention 3/4 (the
    last MMA warp arrives with the others, then waits with the storing warp, on a count that holds it
    twice): that phase must still gather every thread that arrived in the barrier's previous phase
    (``settle`` checks it when the phase completes)."""

    def __init__(self, nblk: int, nt: int):
        self.nblk, self.nt = nblk, nt
        self.arrived: Dict[int, np.ndarray] = {}
        self.gen: Dict[int, np.ndarray] = {}
        self.who: Dict[int, np.ndarray] = {}  # named barriers: the threads arrived in the current phase
        self.by_arrive: Dict[int, np.ndarray] = {}  # ... of them, those that arrived by bar.arrive
        self.prev: Dict[int, np.ndarray] = {}  # ... the threads arrived in the previous phase
        self.twice: Dict[int, np.ndarray] = {}  # per block: a thread arrived twice in the current phase
        self.where: Dict[int, str] = {}  # the bar.sync of the last such second arrival
        self.finished = np.zeros(nblk, dtype=np.int64)  # threads of each block that have finished

    def second_arrival(self, bid: int, act: np.ndarray, wait: bool = False, where: str = "") -> bool:
        """Whether some thread of act (bool per thread of the batch) has already arrived at named
        barrier bid in its current phase (a bar.sync after the thread's own bar.arrive excepted, see the
        class docstring); marks act's threads as arrived."""
        who = self.who.get(bid)
        if who is None:
            who = self.who[bid] = np.zeros((self.nblk, self.nt), dtype=bool)
            self.by_arrive[bid] = np.zeros((self.nblk, self.nt), dtype=bool)
            self.twice[bid] = np.zeros(self.nblk, dtype=bool)
        act = act.reshape(self.nblk, self.nt)
        again = who & act
        if again.any():
            if not wait or (again & ~self.by_arrive[bid]).any():
                return True
            self.twice[bid] |= again.any(axis=1)
            self.where[bid] = where
        who |= act
        if not wait:
            self.by_arrive[bid] |= act
        return False

    def _completed(self, bid: int, full: np.ndarray, name: str) -> None:
        """Phase bookkeeping of named barrier bid in the blocks of full, whose phase completed."""
        who = self.who.get(bid)
        if who is None:
            return
        prev = self.prev.get(bid)
        if prev is not None:
            short = self.twice[bid] & full & (prev & ~who).any(axis=1)
            if short.any():
                k = int(np.argmax(short))
                missing = int((prev[k] & ~who[k]).sum())
                raise LaunchError(
                    f"{name}: NamedBarrier({bid}) at {self.where.get(bid, '?')}: threads that have already arrived at "
                    f"it (by bar.arrive) arrive again before it completes, and the phase completes without {missing} "
                    f"thread(s) that arrived in its previous phase; on the GPU the barrier can then complete without "
                    f"the threads it waits for, and the block hang")
        else:
            prev = self.prev[bid] = np.zeros_like(who)
        prev[full] = who[full]
        who[full] = False
        self.by_arrive[bid][full] = False
        self.twice[bid][full] = False

    def _tables(self, bid: int):
        if bid not in self.arrived:
            self.arrived[bid] = np.zeros(self.nblk, dtype=np.int64)
            self.gen[bid] = np.zeros(self.nblk, dtype=np.int64)
        return self.arrived[bid], self.gen[bid]

    def arrive(self, bid: int, per_block: np.ndarray) -> np.ndarray:
        """Count arrivals; returns the generation each block's arrivals belong to."""
        arrived, gen = self._tables(bid)
        arrived += per_block
        return gen.copy()

    def settle(self, expected: Dict[int, Any], name: str = "kernel") -> bool:
        """Complete every barrier whose arrivals reached what it expects; True if one did."""
        moved = False
        for bid, arrived in self.arrived.items():
            want = (self.nt - self.finished) if bid < 0 else expected.get(bid, self.nt)
            full = (arrived > 0) & (arrived >= want)
            if full.any():
                if bid >= 0:
                    self._completed(bid, full, name)
                self.gen[bid][full] += 1
                arrived[full] -= np.minimum(arrived[full], want if np.isscalar(want) else want[full])
                moved = True
        return moved


# --------------------------------------------------------------------------- runs of independent ops

def _reads(op: Any) -> Any:
    """The ids of the registers a copy or an instruction op of a run reads."""
    if isinstance(op, Compute):
        return {r[0].id for r in op.args[0] if isinstance(r, tuple)}
    return op.batch_io()[0]


def _runs(block: Any) -> Dict[int, Any]:
    """{pc: (end, ops to step, ops to batch)} for the runs of block's ops that go as one: Assigns,
    one after another, to one register (merged into one Assign), and runs from pc to end made of
    ``mov``/``cvt`` copies and at least two instruction ops of one ``batch_key()`` (an ``Op`` with
    ``interpret_batch(ops, ctx, mask, buffers)`` and ``batch_io()``: the ids of the registers it
    reads and writes; mma.sync) where nothing reads what an instruction op of the run writes: the
    copies run first, in order, then the instruction ops as one. Such runs are what cute.gemm's
    loops over (m, n) make. Also runs of stores that differ only by a constant (``storerun``)."""
    out: Dict[int, Any] = {}
    ops = block.ops
    i = 0
    while i < len(ops):
        key, copies, batch, written, last = None, [], [], set(), None
        j = i
        while j < len(ops):
            s = ops[j]
            if isinstance(s, Compute) and s.op in ("mov", "cvt") and not _reads(s) & written:
                copies.append(s)
            elif (isinstance(s, Op) and hasattr(s, "interpret_batch")
                  and not getattr(s, "may_wait", False) and (key is None or s.batch_key() == key)
                  and not _reads(s) & written):
                key = s.batch_key()
                batch.append(s)
                written |= s.batch_io()[1]
                last = j
                n_copies = len(copies)
            else:
                break
            j += 1
        if len(batch) >= 2:
            out[i] = (last + 1, copies[:n_copies], batch)
            i = last + 1
            continue
        j = i  # Assigns, one after another, to one register: one Assign
        while j < len(ops) and isinstance(ops[j], Assign) and ops[j].dst is ops[i].dst:
            j += 1
        if j - i >= 2:
            merged = _merge_assigns(ops[i:j])
            if merged is not None:
                out[i] = (j, [merged], [])
                i = j
                continue
        got = store_run(ops, i)  # stores that differ by a constant: one step (storerun.py)
        if got is not None:
            out[i] = (got[0], [got[1]], [])
            i = got[0]
            continue
        i += 1
    return out


def _merge_assigns(ops: List[Any]) -> Any:
    """One Assign doing what the Assigns ops (to one register, in order) do; None where the order
    between them could matter (an element written twice, the register read by one of them)."""
    dst = ops[0].dst
    index = [j for s in ops for j in s.index]
    src = [r for s in ops for r in s.src]
    mine = f"reg.{dst.id}."
    if len(set(index)) != len(index) or any(
            (r[0] is dst) if isinstance(r, tuple) else (not isinstance(r, (int, float)) and mine in repr(r))
            for r in src):
        return None
    return Assign(dst, tuple(index), tuple(src))


# --------------------------------------------------------------------------- groups

class _Group:
    """A group of warps with its own position (a stack of frames)."""

    __slots__ = ("ctx", "stack", "gid", "done", "merged", "waiting", "ticket", "threads")

    def __init__(self, ctx: ExecContext, stack: List[Any], gid: int, threads: Any):
        self.ctx, self.stack, self.gid = ctx, stack, gid
        self.done, self.merged, self.waiting, self.ticket = False, False, None, None
        self.threads = threads  # bool per thread of the batch, or None for all


class _Run:
    """The scheduler of one batch."""

    def __init__(self, ctx: ExecContext, step: Any, buffers: Any, lines: List[Any]):
        self.step, self.buffers, self.lines = step, buffers, lines
        ir = ctx.ir
        self.ir = ir
        self.groups = [_Group(ctx, [_Block(ir.body, None)], 0, None)]
        self.barriers = _Barriers(ctx.nblk, ctx.nt)
        self.expected: Dict[int, int] = {}
        self.race = RaceCheck(ctx) if os.environ.get("CUTELAB_RACECHECK", "") not in ("", "0") else None
        self.batching = BATCH_RUNS and self.race is None and ctx.rec is None  # racecheck, profiler: one by one
        self._runs = ir.__dict__.setdefault("_cpu_runs", {})
        self.drop = liveness.plan(ir)[0] if DROP_DEAD else None  # {body position: registers dead past it}
        ctx.dropped_to = 0

    def runs(self, block: Any) -> Dict[int, Any]:
        """The runs of block's ops that can go as one, and the copies left out (cached on the
        kernel's IR): see _runs and forward.py."""
        got = self._runs.get(id(block))
        if got is None or got[0] is not block:
            got = self._runs[id(block)] = (block, forward_plan(self.ir, block, _runs(block)))
        return got[1]

    def run(self) -> None:
        while True:
            live = [g for g in self.groups if not g.done]
            if not live:
                return
            moved = False
            i = 0
            while i < len(self.groups):
                g = self.groups[i]
                i += 1
                if not g.done:
                    moved |= self._run_group(g)
            moved |= self.barriers.settle(self.expected, self.ir.name)
            if not moved and not self._release_joins() and not self._part_at_waits():
                self._deadlock()

    # -- one group until it waits or ends
    def _run_group(self, g: _Group) -> bool:
        moved = False
        ctx = g.ctx
        stack = g.stack
        multi = len(self.groups) > 1
        entry = stack[-1] if stack else None  # a polling loop this call resumes (see _While below)
        drop = self.drop
        while stack:
            f = stack[-1]
            tf = type(f)
            if tf is _Block:
                ops = f.block.ops
                if drop is not None and len(stack) == 1 and f.pc > ctx.dropped_to:  # back in the body: the
                    regs = ctx.regs  # registers no later op refers to go (liveness.py)
                    for p in range(ctx.dropped_to, f.pc):
                        for r in drop.get(p, ()):
                            regs.pop(r, None)
                    ctx.dropped_to = f.pc
                if f.pc >= len(ops):
                    stack.pop()
                    continue
                s = ops[f.pc]
                ts = type(s)
                if ts is If:
                    f.pc += 1
                    stack.append(_If(s, f.mask))
                elif ts is For:
                    f.pc += 1
                    stack.append(_For(s, f.mask))
                elif ts is While:
                    f.pc += 1
                    stack.append(_While(s, f.mask))
                elif ts is Barrier or getattr(s, "barrier_id", None) is not None:
                    if not self._barrier(g, s, f.mask):
                        return moved
                    f.pc += 1
                    moved = True
                else:
                    run = self.runs(f.block).get(f.pc) if self.batching else None
                    if run is not None:  # independent ops of one kind from here: as one (see _runs)
                        end, singles, batch = run
                        for x in singles:
                            self.step(ctx, x, f.mask, self.buffers, self.lines)
                        if batch:
                            done = type(batch[0]).interpret_batch(batch, ctx, f.mask, self.buffers)
                            if done != "into" and getattr(batch, "assign", None) is not None:
                                self.step(ctx, batch.assign, f.mask, self.buffers, self.lines)  # forward.IntoBatch
                        f.pc = end
                        moved = True
                        continue
                    if isinstance(s, Op) and s.may_wait:
                        w = s.waits_for(ctx, f.mask)
                        if w is not None:
                            g.waiting = (s, f.mask, w)
                            return moved
                        g.waiting = None
                    if self.race is not None:
                        self.race.check(ctx, s, f.mask)
                    self.step(ctx, s, f.mask, self.buffers, self.lines)
                    f.pc += 1
                    moved = True
                    if getattr(s, "exits", False) and self._exit(g):  # every thread of g has exited
                        stack.clear()
            elif tf is _If:
                s = f.s
                if f.stage == 0:
                    c = ctx.cond(s.cond)
                    m1 = and_mask(f.mask, c)
                    m2 = and_mask(f.mask, ~c)
                    if m1.any() and m2.any() and (_has_sync(self.ir, s.then) or _has_sync(self.ir, s.orelse)):
                        self._fork(g, m2)  # the threads of the else-branch go on as a group of their own
                        f = stack[-1]
                        multi = True
                        f.stage = 2
                        stack.append(_Block(s.then, m1))
                        continue
                    f.c = c
                    f.stage = 1
                    if f.mask is None and not m2.any():  # every thread takes the branch: no mask
                        stack.append(_Block(s.then, None))
                    elif m1.any():
                        stack.append(_Block(s.then, m1))
                    continue
                if f.stage == 1:
                    f.stage = 2
                    if s.orelse.ops:
                        m2 = and_mask(f.mask, ~f.c)
                        if f.mask is None and m2.all():  # every thread takes the else-branch: no mask
                            stack.append(_Block(s.orelse, None))
                        elif m2.any():
                            stack.append(_Block(s.orelse, m2))
                    continue
                if f.join is not None and not f.join.released:
                    if not self._arrive_join(g, f.join):
                        return moved  # waits for the other groups of the join
                    moved = True
                    if g.done:  # merged into the join's first group
                        return True
                    continue
                stack.pop()
            elif tf is _For:
                s = f.s
                if f.lo is None:
                    f.lo, f.hi = ctx.index(s.lo), ctx.index(s.hi)
                    if isinstance(f.lo, np.ndarray) or isinstance(f.hi, np.ndarray):  # a trip count per thread
                        f.lo = np.broadcast_to(np.asarray(f.lo, dtype=np.int64), (ctx.n,))
                        f.hi = np.broadcast_to(np.asarray(f.hi, dtype=np.int64), (ctx.n,))
                else:
                    f.k += 1
                v = f.lo + f.k * s.step
                live = (v < f.hi) if s.step > 0 else (v > f.hi)
                if isinstance(live, np.ndarray):
                    m = and_mask(f.mask, live)
                    if not m.any():
                        ctx.env.pop(s.var.name, None)
                        stack.pop()
                        continue
                    if f.mask is None and m.all():
                        m = None
                elif live:  # the same trip count in every thread: the loop variable is one int
                    m = f.mask
                else:
                    ctx.env.pop(s.var.name, None)
                    stack.pop()
                    continue
                ctx.env[s.var.name] = v
                stack.append(_Block(s.body, m))
            elif tf is _While:
                s = f.s
                if f.stage == 0:  # run the condition block
                    if f.m is None:
                        f.m = None if f.mask is None else f.mask.copy()
                    f.stage = 1
                    stack.append(_Block(s.before, f.m))
                elif f.stage == 1:  # test
                    f.m = and_mask(f.m, ctx.cond(s.cond))
                    if not f.m.any():
                        if f.rounds > 1 and shared_waits is not None:
                            shared_waits.done(self, f)
                        stack.pop()
                        continue
                    f.rounds += 1
                    if f.rounds > 1 and shared_waits is not None and shared_waits.polls(self, s):
                        shared_waits.wait(self, g, s, f)  # polls another rank's memory: no round limit
                    elif f.rounds > MAX_WHILE_ROUNDS:
                        raise LaunchError(
                            f"{self.ir.name}: a while loop ran {MAX_WHILE_ROUNDS} rounds and some thread's condition "
                            f"still holds; the interpreter stops here (an endless loop?). Nothing was written."
                        )
                    f.stage = 2
                    stack.append(_Block(s.body, f.m))
                else:  # after the body: the next round
                    f.stage = 0
                    if multi and f.rounds > 1:  # a polling loop: let the other warps run
                        # a round of `while not try_wait(...): pass` that this call resumed and that left
                        # the same threads looping changed nothing: not progress, so that the scheduler
                        # can release joins (or report a deadlock) as for a wait
                        idle = (f is entry and _polls_only(self.ir, s.body) and f.prev is not None
                                and np.array_equal(f.prev, f.m))
                        f.prev = f.m.copy()
                        return not idle
        self._finish(g)
        return True

    def _fork(self, g: _Group, leave: np.ndarray) -> None:
        """The threads of leave leave g as a group of their own, at the same position."""
        g2 = self._split(g, leave)
        top = g2.stack[-1]  # the _If that forks: the new group takes the else-branch
        top.stage = 2
        g2.stack.append(_Block(top.s.orelse, top.mask))
        j = _Join([g, g2], getattr(top.s, "loc", None) or "")  # and both meet where the if ends
        g.stack[-1].join = j
        top.join = j

    def _arrive_join(self, g: _Group, j: _Join) -> bool:
        """g is at the end of its branch: wait for the other groups of the join; merge when all
        are here. True when g goes on (merged, with the If frame popped)."""
        if g not in j.arrived:
            j.arrived.append(g)
        if any(m not in j.arrived for m in j.members):
            g.waiting = ("join", j)
            return False
        first = j.members[0]
        for m in list(j.members[1:]):
            self._merge(first, m)
        first.stack.pop()  # the If
        first.waiting = None
        j.released = True
        return True

    def _merge(self, a: _Group, b: _Group) -> None:
        """b's threads join a (both at the same position); b ends without finishing its threads."""
        ta = np.ones(a.ctx.n, dtype=bool) if a.threads is None else a.threads
        tb = np.ones(b.ctx.n, dtype=bool) if b.threads is None else b.threads
        for fa, fb in zip(a.stack, b.stack):
            fa.mask = _or(fa.mask, fb.mask)
            if isinstance(fa, _While):
                fa.m = _or(fa.m, fb.m)
        for k, vb in b.ctx.regs.items():
            va = a.ctx.regs.get(k)
            if va is None:
                a.ctx.regs[k] = vb
            elif va is not vb and va.shape == vb.shape:
                a.ctx.regs[k] = np.where(tb[:, None], vb, va)
        for k, vb in b.ctx.env.items():
            va = a.ctx.env.get(k)
            if va is None:
                a.ctx.env[k] = vb
            elif va is not vb and isinstance(va, np.ndarray) and isinstance(vb, np.ndarray) and va.shape == vb.shape:
                a.ctx.env[k] = np.where(tb, vb, va)
        wb = b.ctx.__dict__.get("wgmma")
        if wb and (wb.get("pending") or wb.get("groups")):  # what b issued apart (the same entries: once)
            wa = a.ctx.__dict__.setdefault("wgmma", {"pending": [], "groups": []})
            seen = {id(e) for e in wa["pending"]} | {id(e) for grp in wa["groups"] for e in grp}
            wa["pending"].extend(e for e in wb["pending"] if id(e) not in seen)
        a.threads = ta | tb
        b.done, b.merged, b.waiting = True, True, None
        for g in self.groups:  # b's place in the joins that enclose this one is a's
            for f in g.stack:
                if isinstance(f, _If) and f.join is not None and b in f.join.members:
                    f.join.members.remove(b)
                    if a not in f.join.members:
                        f.join.members.append(a)
                    if b in f.join.arrived:
                        f.join.arrived.remove(b)

    def _release_joins(self) -> bool:
        """Every group waits: let those waiting only at a join go on apart. True if any did."""
        at_join = [g for g in self.groups if not g.done and g.waiting is not None and g.waiting[0] == "join"]
        for g in self.groups:
            if at_join and not g.done and g.waiting is not None and isinstance(g.waiting[0], Barrier):
                raise LaunchError(
                    f"{self.ir.name}: cute.arch.sync_threads() at {g.waiting[0].loc or '?'} is reached by only some "
                    f"threads of a block (a barrier inside a branch or loop that differs between threads of one "
                    f"block), while the others wait where the branch ends; CUDA leaves that undefined")
        freed = False
        for g in at_join:
            g.waiting[1].released = True
            g.waiting = None
            freed = True
        return freed

    def _part_at_waits(self) -> bool:
        """Every group waits: a group some of whose warps could go on past its wait (each warp
        waits on a barrier of its own, say) parts, the warps that can go on as a group of their
        own. True if any group parted."""
        parted = False
        for g in list(self.groups):
            if g.done or g.waiting is None or not isinstance(g.waiting[0], Op):
                continue
            s, mask, _ = g.waiting
            ready = s.ready_threads(g.ctx, mask)
            if ready is None or not ready.any():
                continue
            ctx = g.ctx
            act = np.ones(ctx.n, dtype=bool) if mask is None else mask
            warp = warp_of(ctx)
            blocked = np.zeros(ctx.nblk * warps_per_block(ctx), dtype=bool)
            np.logical_or.at(blocked, warp[act & ~ready], True)  # a warp goes on only as a whole
            go = act & ~blocked[warp]
            if not go.any() or go[act].all():
                continue
            self._split(g, go)
            parted = True
        return parted

    def _split(self, g: _Group, leave: np.ndarray) -> _Group:
        """The threads of leave go on as a group of their own from where g is (an if that forks, a
        wait); returns it."""
        keep = ~leave
        stack2 = [_restrict(f, leave) for f in g.stack]
        g.stack[:] = [_restrict(f, keep) for f in g.stack]
        ctx2 = g.ctx.fork()
        st = ctx2.__dict__.get("wgmma")
        if st is not None:
            ctx2.wgmma = {"pending": list(st["pending"]), "groups": [list(x) for x in st["groups"]]}
        g.threads = keep.copy() if g.threads is None else (g.threads & keep)
        g2 = _Group(ctx2, stack2, len(self.groups), leave.copy())
        self.groups.append(g2)
        for f in g.stack:  # g2 meets every join g meets
            if isinstance(f, _If) and f.join is not None and not f.join.released:
                f.join.members.append(g2)
        g.waiting = None
        return g2

    def _exit(self, g: _Group) -> bool:
        """The threads an ExitOp recorded (instr/thread_exit.py) leave g: out of every mask of its position,
        counted as finished. True when no thread of g is left."""
        ctx = g.ctx
        gone = ctx.common.pop("exiting", None)
        if gone is None or not gone.any():
            return False
        keep = ~gone
        for f in g.stack:
            f.mask = keep.copy() if f.mask is None else (f.mask & keep)
            if isinstance(f, _While) and f.m is not None:
                f.m = f.m & keep
        mine = gone if g.threads is None else (gone & g.threads)
        g.threads = keep.copy() if g.threads is None else (g.threads & keep)
        self.barriers.finished += mine.reshape(ctx.nblk, ctx.nt).sum(axis=1)
        fin = ctx.common.setdefault("finished", np.zeros(ctx.n, dtype=bool))
        fin |= mine
        if g.threads.any():
            return False
        for f in g.stack:  # no thread of g is left: the joins it would meet wait for it no more
            j = getattr(f, "join", None) if isinstance(f, _If) else None
            if j is not None and not j.released:
                j.members = [m for m in j.members if m is not g]
                j.arrived = [m for m in j.arrived if m is not g]
        return True

    def _finish(self, g: _Group) -> None:
        g.done = True
        g.waiting = None
        t = np.ones(g.ctx.n, dtype=bool) if g.threads is None else g.threads
        self.barriers.finished += t.reshape(g.ctx.nblk, g.ctx.nt).sum(axis=1)
        fin = g.ctx.common.setdefault("finished", np.zeros(g.ctx.n, dtype=bool))  # per thread (cluster_wait)
        fin |= t

    # -- barriers
    def _barrier(self, g: _Group, s: Any, mask: Any) -> bool:
        """Arrive at (once) and pass a barrier: False while it has not completed."""
        ctx = g.ctx
        named = getattr(s, "barrier_id", None) is not None
        bid = -1
        if named and getattr(s, "runtime_id", False):  # an id per thread (instr/named_barrier): one id a group
            ready = s.ready_threads(ctx, mask)
            act = np.ones(ctx.n, dtype=bool) if mask is None else mask
            if ready is None:
                return True  # no active thread
            if not ready[act].all():  # several ids: the group waits here until _part_at_waits parts it by id
                g.waiting = (s, mask, f"NamedBarrier at {s.where}: its threads give several barrier ids")
                return False
            bid = int(s.ids(ctx, mask)[act][0])
        elif named:
            bid = int(s.barrier_id)
        if all(x.merged for x in self.groups if x is not g):
            # lock-step: every thread of the batch is here or masked out in this very group
            if named:
                s.interpret(ctx, mask, self.buffers)  # checks the number of threads that reach it
                if self.race is not None and s.wait:
                    self.race.synced(mask)
                return True
            if mask is not None:
                fin = ctx.common.get("finished")  # threads that exited (instr/thread_exit.py) do not arrive
                per_block = (mask if fin is None else (mask | fin)).reshape(ctx.nblk, ctx.nt)
                bad = per_block.any(axis=1) & ~per_block.all(axis=1)
                if bad.any():
                    raise LaunchError(
                        f"{self.ir.name}: cute.arch.sync_threads() is reached by only some threads of a block "
                        f"(a barrier inside a branch or loop that differs between threads of one block); "
                        f"CUDA leaves that undefined"
                    )
            if self.race is not None:
                self.race.synced(mask)
            return True
        if named:
            self.expected[bid] = int(s.num_threads)
        act = np.ones(ctx.n, dtype=bool) if mask is None else mask
        per_block = act.reshape(ctx.nblk, ctx.nt).sum(axis=1)
        if g.ticket is None or g.ticket[0] is not s:
            if named and (per_block > s.num_threads).any():
                raise LaunchError(f"{self.ir.name}: NamedBarrier({bid}, {s.num_threads}) at {s.where} is reached by "
                                  f"{int(per_block.max())} threads of a block, more than {s.num_threads}")
            if named and self.barriers.second_arrival(bid, act, bool(s.wait), str(s.where)):
                raise LaunchError(
                    f"{self.ir.name}: NamedBarrier({bid}, {s.num_threads}) at {s.where}: threads that have already "
                    f"arrived at it arrive again before it completes (two bar.arrive/bar.sync of one thread in "
                    f"one phase); on the GPU the barrier can then complete without the threads it waits for, "
                    f"and the block hang")
            gen = self.barriers.arrive(bid, per_block)
            g.ticket = (s, gen, per_block > 0)
            if named and not s.wait:
                g.ticket = None
                self.barriers.settle(self.expected, self.ir.name)
                return True
            self.barriers.settle(self.expected, self.ir.name)
        _, gen, blocks = g.ticket
        if (self.barriers.gen[bid][blocks] > gen[blocks]).all():
            g.ticket = None
            g.waiting = None
            if self.race is not None:
                self.race.synced(mask)
            return True
        arrived = self.barriers.arrived[bid]
        k = int(np.argmax(blocks))
        want = s.num_threads if named else ctx.nt - int(self.barriers.finished[k])
        what = (f"NamedBarrier({bid}, {s.num_threads}).arrive_and_wait() at {s.where} is reached by "
                f"{int(arrived[k])} threads of a block, not {s.num_threads}" if named else
                f"cute.arch.sync_threads() waits for {want - int(arrived[k])} of the block's {want} unfinished "
                f"threads")
        g.waiting = (s, mask, what)
        return False

    # -- reports
    def _deadlock(self) -> None:
        lines = []
        for g in self.groups:
            if g.done:
                continue
            s, mask, what = g.waiting if g.waiting is not None else (None, None, "?")
            loc = getattr(s, "loc", None) or getattr(s, "where", None) or ""
            at = f" at {loc}" if loc and loc not in what else ""
            lines.append(f"  {_warps(g.ctx, mask)}{at}: {what}")
        done = [g for g in self.groups if g.done and not g.merged]
        tail = f"\n  ({len(done)} group(s) of warps have finished)" if done else ""
        raise LaunchError(f"{self.ir.name}: deadlock: every warp that has not finished waits, and none can go on; "
                          f"nothing was written:\n" + "\n".join(lines) + tail)


def _or(a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    return a | b


def _warps(ctx: ExecContext, mask: Any) -> str:
    """"warps 0-3 of block (0,0,0)" for the threads of mask (its first block)."""
    act = np.ones(ctx.n, dtype=bool) if mask is None else mask
    if not act.any():
        return "no thread"
    per_blk = act.reshape(ctx.nblk, ctx.nt)
    k = int(np.argmax(per_blk.any(axis=1)))
    nw = warps_per_block(ctx)
    warps = [w for w in range(nw) if per_blk[k, w * 32:(w + 1) * 32].any()]
    ws = _ranges(warps)
    more = int(per_blk.any(axis=1).sum()) - 1
    extra = f" (and {more} more block(s))" if more > 0 else ""
    return f"warp{'s' if len(warps) > 1 else ''} {ws} of block {ctx.block_name(k)}{extra}"


def _ranges(xs: List[int]) -> str:
    out, i = [], 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        out.append(str(xs[i]) if i == j else f"{xs[i]}-{xs[j]}")
        i = j + 1
    return ",".join(out)


def run_groups(ctx: ExecContext, step: Any, buffers: Any, lines: List[Any]) -> None:
    """Run the kernel body over one batch: step(ctx, op, mask, buffers, lines) runs one leaf op."""
    _Run(ctx, step, buffers, lines).run()
