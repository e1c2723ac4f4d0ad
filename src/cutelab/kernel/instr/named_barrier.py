"""Named barriers (``cutlass.pipeline.NamedBarrier``, ``cute.arch.barrier`` with an id): one of the 16
hardware barriers of a thread block, PTX ``bar.sync id, n`` (``arrive_and_wait``) or
``bar.arrive id, n`` (``arrive``), for ``n`` threads of the block. Barrier 0 is ``sync_threads()``'s.

``check`` is the rule on the id and the thread count (what ``NamedBarrier(...)`` raises),
``named_barrier`` traces one into the running kernel.

>>> check(16, 32)
Traceback (most recent call last):
...
ValueError: NamedBarrier(barrier_id=16, num_threads=32): barrier_id must be in [0, 15]
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ...errors import LaunchError, TraceError
from ..frontend.trace import current, user_line
from ..ir.nodes import Op

__all__ = ["check", "named_barrier", "NamedBarrierIR"]


def check(bid: Any, n: Any) -> None:
    """The barrier id and thread count of ``NamedBarrier(barrier_id=bid, num_threads=n)``: static ints,
    an id in [0, 15] (0 warns: sync_threads uses it), a positive multiple of the warp size."""
    for name, v in (("barrier_id", bid), ("num_threads", n)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"NamedBarrier(barrier_id={bid!r}, num_threads={n!r}): {name} must be a static int "
                            f"in cutelab, got {type(v).__name__}")
    if not 0 <= bid < 16:
        raise ValueError(f"NamedBarrier(barrier_id={bid}, num_threads={n}): barrier_id must be in [0, 15]")
    if n < 32 or n % 32:
        raise ValueError(f"NamedBarrier(barrier_id={bid}, num_threads={n}): num_threads must be a positive "
                         f"multiple of the warp size (32)")
    if bid == 0:
        warnings.warn("NamedBarrier ID 0 is used by sync_threads, avoid using.")


class NamedBarrierIR(Op):
    """The kernel IR op of a named barrier, ``bar.sync id, n`` (wait) or ``bar.arrive id, n``."""

    __slots__ = ("barrier_id", "num_threads", "wait", "where")

    def __init__(self, barrier_id: int, num_threads: int, wait: bool, where: str):
        self.barrier_id, self.num_threads, self.wait, self.where = barrier_id, num_threads, wait, where

    def __repr__(self) -> str:
        return f"bar.{'sync' if self.wait else 'arrive'} {self.barrier_id}, {self.num_threads}"

    @property
    def runtime_id(self) -> bool:
        """Whether the id is a value of the kernel (an index expression or a register: ``RegVar``)."""
        return not isinstance(self.barrier_id, (int, np.integer))

    def ids(self, b: Any, mask: Any) -> np.ndarray:
        """The barrier id of every thread of the batch (a runtime id: each thread's own), checked: in
        [0, 15] and the same in the active threads of a warp (bar is .aligned: a warp arrives as one)."""
        ids = np.broadcast_to(np.asarray(b.index(self.barrier_id), dtype=np.int64), (b.n,))
        act = np.ones(b.n, dtype=bool) if mask is None else mask
        bad = act & ((ids < 0) | (ids > 15))
        if bad.any():
            t = int(np.argmax(bad))
            raise LaunchError(f"{b.ir.name}: a named barrier at {self.where}: thread {t} gives barrier id {int(ids[t])}; "
                              f"barrier ids are in [0, 15]")
        if b.n % 32 == 0:
            w = np.where(act, ids, -1).reshape(-1, 32)
            a = act.reshape(-1, 32)
            hi = np.where(a, w, -1).max(axis=1)
            lo = np.where(a, w, 16).min(axis=1)
            mixed = a.any(axis=1) & (hi != lo)
            if mixed.any():
                wi = int(np.argmax(mixed))
                raise LaunchError(f"{b.ir.name}: a named barrier at {self.where}: the barrier id differs between the "
                                  f"threads of warp {wi % max(b.nt // 32, 1)} ({int(lo[wi])} and {int(hi[wi])}); a warp "
                                  f"arrives at one barrier (bar.sync/bar.arrive are .aligned)")
        return ids

    def ready_threads(self, b: Any, mask: Any) -> Any:
        """A runtime id whose active threads name several barriers: those of the first id go on as a
        group of their own (the CPU scheduler parts the group, kernel.cpu.warps), then the others."""
        if not self.runtime_id:
            return None
        ids = self.ids(b, mask)
        act = np.ones(b.n, dtype=bool) if mask is None else mask
        if not act.any():
            return None
        return act & (ids == ids[act][0])

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:
        # all threads run each op together, so the barrier orders nothing; check that the
        # threads reaching it are the number it expects, in every block that reaches it
        act = np.ones(b.n, dtype=bool) if mask is None else mask
        if self.runtime_id:  # each id's threads by themselves
            ids = self.ids(b, mask)
            for v in np.unique(ids[act]).tolist():
                NamedBarrierIR(int(v), self.num_threads, self.wait, self.where).interpret(b, act & (ids == v), buffers)
            return
        per_block = act.reshape(b.nblk, b.nt).sum(axis=1)
        bad = (per_block != 0) & (per_block != self.num_threads) if self.wait else per_block > self.num_threads
        if bad.any() and self.wait:
            raise LaunchError(
                f"{b.ir.name}: NamedBarrier({self.barrier_id}, {self.num_threads}).arrive_and_wait() at "
                f"{self.where} is reached by {int(per_block[bad][0])} threads of a block, not "
                f"{self.num_threads}; on the GPU the block would hang or the barrier would not order "
                f"what the program expects"
            )

    def cuda(self, r: Any) -> None:
        ins = "sync" if self.wait else "arrive"
        if self.runtime_id:  # the id in a register; an id outside [0, 15] stops the kernel (undefined on the GPU)
            code = r.expr(self.barrier_id)[0]
            v = r.fresh("cl_bar")
            r.emit(f"const unsigned {v} = (unsigned)({code});")
            r.emit(f"if ({v} > 15u) __trap();  // a named barrier's id is in [0, 15] ({self.where})")
            r.emit(f'asm volatile("bar.{ins} %0, {self.num_threads};\\n" :: "r"({v}) : "memory");')
            return
        r.emit(f'asm volatile("bar.{ins} {self.barrier_id}, {self.num_threads};\\n" ::: "memory");')


def named_barrier(barrier_id: Any, num_threads: int, wait: bool, what: str) -> None:
    """``NamedBarrier(barrier_id, num_threads).<what>()`` in the kernel being traced: ``bar.sync`` (wait)
    or ``bar.arrive``. A barrier id computed in the kernel (an index expression such as
    ``thread_idx // 128``, the warp group's own barrier) becomes one branch per id its range holds,
    ``if id == k: bar.sync k, n``: each thread waits at the barrier its id names, on the GPU (the id is
    warp-uniform, so no warp diverges) and on the CPU interpreter alike. An id whose range reaches outside
    [0, 15] (a register's value: an Int32 read from memory, say) is one op with the id in a register:
    ``bar.sync %r, n`` in the CUDA (an id outside [0, 15] traps), and on the CPU each thread's own id,
    the scheduler parting a group of warps by id (``NamedBarrierIR.ready_threads``); an id outside
    [0, 15] or differing inside a warp is a LaunchError naming the line."""
    from ..ir.symbolic import is_sym, sym_range

    t = current(f"NamedBarrier.{what}")
    nt = t.block[0] * t.block[1] * t.block[2]
    if num_threads > nt:
        raise TraceError(f"kernel {t.name}: NamedBarrier({barrier_id}, {num_threads}).{what}() at "
                         f"{user_line()}: the block has only {nt} threads")
    if not is_sym(barrier_id):
        t.emit(NamedBarrierIR(int(barrier_id), int(num_threads), wait, user_line()))
        return
    lo, hi = sym_range(barrier_id)
    if hi < 0 or lo > 15:
        raise TraceError(f"kernel {t.name}: a named barrier's id at {user_line()} ranges over [{lo}, {hi}]; "
                         f"barrier ids are in [0, 15]")
    if lo < 0 or hi > 15:  # a register's value (or a wider expression): one bar with the id in a register
        t.check_index(barrier_id, f"NamedBarrier.{what}")
        t.emit(NamedBarrierIR(barrier_id, int(num_threads), wait, user_line()))
        return
    if lo == hi:
        t.emit(NamedBarrierIR(int(lo), int(num_threads), wait, user_line()))
        return
    where = user_line()
    for k in range(int(lo), int(hi) + 1):
        op = t.begin_if(barrier_id == k)
        outer, t.cur = t.cur, op.then
        try:
            t.emit(NamedBarrierIR(k, int(num_threads), wait, where))
        finally:
            t.cur = outer
