"""Shared-memory race detection of the CPU interpreter (``CUTELAB_RACECHECK=1``), as
compute-sanitizer's racecheck on the GPU.

Every access to shared memory is checked against the earlier accesses to the same elements by
other warps of the block. Two accesses of different warps, at least one of them a write, race
unless the warp that comes second has passed a barrier or a wait (``sync_threads``, a named
barrier's ``arrive_and_wait``, an mbarrier wait, ...) since the first one:

- read-after-write: a warp reads an element another warp wrote;
- write-after-read: a warp writes an element another warp read (the reader may see the new value);
- write-after-write: a warp writes an element another warp wrote.

The first race stops the launch with a ``LaunchError`` naming both accesses: the warps, the
element, and the user's line of each. An approximation (as the GPU tool's is a different one):
any wait counts as synchronisation with every warp, and accesses inside one instruction are not
checked against each other. What is kept per element: the last writer, and the last two warps
that read it (enough to find a reader other than any given warp).

May import: ``kernel.ir``, ``kernel.cpu.context``, ``cutelab.errors``.
"""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from ...errors import LaunchError
from ..ir.nodes import Load, Op, Shared, Store
from .context import ExecContext, warp_of, warps_per_block

__all__ = ["RaceCheck"]

_NONE = -1


class _Element:
    """What is known of each element of one shared array of the batch: (warp, time, op) of the
    last write and of the last two reads by different warps (warp -1: none)."""

    def __init__(self, n: int):
        self.w = np.full(n, _NONE, dtype=np.int64)
        self.wt = np.zeros(n, dtype=np.int64)
        self.wop = np.zeros(n, dtype=np.int64)
        self.r1 = np.full(n, _NONE, dtype=np.int64)
        self.r1t = np.zeros(n, dtype=np.int64)
        self.r1op = np.zeros(n, dtype=np.int64)
        self.r2 = np.full(n, _NONE, dtype=np.int64)
        self.r2t = np.zeros(n, dtype=np.int64)
        self.r2op = np.zeros(n, dtype=np.int64)


class RaceCheck:
    """The race detector of one batch of blocks (see the module docstring). The scheduler calls
    ``synced(mask)`` where warps pass a barrier or a wait, and ``check(ctx, op, mask)`` before
    each op runs."""

    def __init__(self, ctx: ExecContext):
        self.ctx = ctx
        self.warp = warp_of(ctx)
        self.nw = warps_per_block(ctx)
        self.synced_at = np.zeros(ctx.nblk * self.nw, dtype=np.int64)
        self.time = 1
        self.arrays: Dict[int, _Element] = {}
        self.ops: List[Any] = [None]  # op number -> op (for the report's lines)
        self.op_no: Dict[int, int] = {}

    def synced(self, mask: Any) -> None:
        """The warps of mask have passed a barrier or a wait."""
        w = self.warp if mask is None else self.warp[mask]
        self.synced_at[w] = self.time
        self.time += 1

    def _no(self, s: Any) -> int:
        k = self.op_no.get(id(s))
        if k is None:
            k = self.op_no[id(s)] = len(self.ops)
            self.ops.append(s)
        return k

    def check(self, ctx: ExecContext, s: Any, mask: Any) -> None:
        if isinstance(s, Op):
            if s.may_wait:  # it has just passed a wait
                self.synced(mask)
            accesses = [(a.param, a.base, a.offsets, a.is_store) for a in s.accesses()]
        elif isinstance(s, (Load, Store)):
            accesses = [(s.param, s.base, s.offsets, isinstance(s, Store))]
        else:
            return
        act = np.ones(ctx.n, dtype=bool) if mask is None else mask
        if not act.any():
            return
        no = self._no(s)
        for p, base, offsets, is_store in accesses:
            if not isinstance(p, Shared):
                continue
            idx = ctx.access_index(base, offsets, p.length, f"{ctx.ir.name}: racecheck of {p.name}", mask)
            idx = (idx + (ctx.block_of * p.length)[:, None])[act]
            me = np.broadcast_to(self.warp[act][:, None], idx.shape).ravel()
            flat = idx.ravel()
            el = self.arrays.get(p.index)
            if el is None:
                el = self.arrays[p.index] = _Element(ctx.shared[p.index].shape[0])
            since = self.synced_at[me]  # each accessing warp's last barrier or wait
            w = el.w[flat]
            raw = (w != _NONE) & (w != me) & (el.wt[flat] > since)
            if raw.any():
                i = int(np.argmax(raw))
                self._report(ctx, p, int(flat[i]), int(me[i]), s, is_store, int(w[i]), int(el.wop[flat[i]]), True)
            if is_store:
                for r, rt, rop in ((el.r1, el.r1t, el.r1op), (el.r2, el.r2t, el.r2op)):
                    rw = r[flat]
                    war = (rw != _NONE) & (rw != me) & (rt[flat] > since)
                    if war.any():
                        i = int(np.argmax(war))
                        self._report(ctx, p, int(flat[i]), int(me[i]), s, True, int(rw[i]), int(rop[flat[i]]), False)
        for p, base, offsets, is_store in accesses:  # then record them (an op's accesses do not race each other)
            if not isinstance(p, Shared):
                continue
            idx = ctx.access_index(base, offsets, p.length, f"{ctx.ir.name}: racecheck of {p.name}", mask)
            idx = (idx + (ctx.block_of * p.length)[:, None])[act]
            me = np.broadcast_to(self.warp[act][:, None], idx.shape).ravel()
            flat = idx.ravel()
            el = self.arrays[p.index]
            if is_store:
                el.w[flat], el.wt[flat], el.wop[flat] = me, self.time, no
            else:
                self._read(el, flat, me, no)
        self.time += 1

    def _read(self, el: _Element, flat: np.ndarray, me: np.ndarray, no: int) -> None:
        """Record reads of elements flat by warps me (an element may be read by several warps)."""
        lo = np.full(el.w.shape[0], np.iinfo(np.int64).max, dtype=np.int64)
        hi = np.full(el.w.shape[0], _NONE, dtype=np.int64)
        np.minimum.at(lo, flat, me)
        np.maximum.at(hi, flat, me)
        e = np.flatnonzero(hi != _NONE)
        a, b = lo[e], hi[e]
        two = a != b  # read by two warps or more here: they are the last two readers
        same = ~two & (el.r1[e] == b)  # the last reader again: only its time moves
        shift = ~two & ~same  # a new last reader: the old one becomes the second
        t = self.time
        s_e = e[shift]
        el.r2[s_e], el.r2t[s_e], el.r2op[s_e] = el.r1[s_e], el.r1t[s_e], el.r1op[s_e]
        el.r1[s_e], el.r1t[s_e], el.r1op[s_e] = b[shift], t, no
        m_e = e[same]
        el.r1t[m_e], el.r1op[m_e] = t, no
        t_e = e[two]
        el.r1[t_e], el.r1t[t_e], el.r1op[t_e] = b[two], t, no
        el.r2[t_e], el.r2t[t_e], el.r2op[t_e] = a[two], t, no

    def _report(self, ctx: ExecContext, p: Any, e: int, me: int, s: Any, is_store: bool, other: int,
                other_no: int, other_wrote: bool) -> None:
        kind = ("write-after-write" if is_store else "read-after-write") if other_wrote else "write-after-read"
        first = self.ops[other_no]

        def at(op: Any) -> str:
            loc = getattr(op, "loc", None) or ""
            return f" at {loc}" if loc else " (no source line)"

        blk = ctx.block_name(e // p.length)
        raise LaunchError(
            f"{ctx.ir.name}: racecheck: {kind} hazard on shared memory {p.name}[{e % p.length}] of block {blk}: "
            f"warp {me % self.nw} {'writes' if is_store else 'reads'} it{at(s)}, and warp {other % self.nw} "
            f"{'wrote' if other_wrote else 'read'} it{at(first)}, with no barrier or wait in warp {me % self.nw} "
            f"between them (a data race on the GPU; CUTELAB_RACECHECK=1)")
