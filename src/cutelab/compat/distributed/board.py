"""Waits across ranks: the CPU interpreter's polling loops on symmetric memory yield the CPU to the
other ranks, and a wait that no rank can end is reported as a deadlock instead of hanging.

Every rank has a row in a small shared table (the *board*, itself a symmetric allocation): its
state (running, waiting in a polling loop, blocked in a torch.distributed collective of the world
group, exited), an epoch that moves whenever the state does, and a line saying what it waits for. A rank whose kernel spins in a ``while`` loop that reads
symmetric memory (``kernel.cpu.warps.shared_waits``) marks itself waiting after a few rounds,
then sleeps between rounds (1 ms, growing to 20 ms) so that the ranks that will write what it
waits for get the CPU. While it waits it reads the board: when every rank has been waiting or
has exited, with no epoch moving, for ``CUTELAB_DEADLOCK_S`` seconds (default 3), no rank can end
any wait (a rank in a collective cannot set a flag before the others reach the collective too)
and each waiting rank raises a ``DeadlockError`` naming itself, the kernel, the user's
line of the loop, the memory it polls (kernel argument, element indices, values seen) and what
every other rank is doing. A rank that waits ``CUTELAB_WAIT_TIMEOUT_S`` seconds (default 300)
while some rank is outside any kernel wait (on the host, say, in a collective that never
completes) stops with the same report: never a hang.

Approximation: a rank counts as waiting from its first polling round to the loop's end, even
if another group of warps of its own kernel is running meanwhile (on the GPU they would be set
apart); only a wait for longer than the quiet period with every rank stalled is reported.

May import: ``compat.distributed.heap``, ``cutelab.kernel`` (the interpreter), ``cutelab.errors``.
"""

from __future__ import annotations

import atexit
import os
import time
from typing import Any, Dict, List, Optional

import numpy as np

from ...errors import LaunchError
from . import heap

__all__ = ["DeadlockError", "Board", "board", "make_board", "install_waits"]

RUNNING, WAITING, EXITED, COLLECTIVE = 0, 1, 2, 3
_NAMES = {RUNNING: "running (host code or a kernel)", WAITING: "waiting", EXITED: "exited",
          COLLECTIVE: "in a collective"}
#: states in which a rank can set no flag until some other rank moves
STALLED = (WAITING, EXITED, COLLECTIVE)
_COLS = 4  # state, epoch, wait start (ns), pid
_TEXT = 480  # bytes of description per rank
_ROW = _COLS * 8 + _TEXT


class DeadlockError(LaunchError):
    """A kernel's polling loop on symmetric memory that no rank can end."""


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


class Board:
    """The shared table of the ranks' states (see the module docstring)."""

    def __init__(self, seg: heap.Segment):
        self.seg, self.rank, self.world = seg, seg.rank, seg.world
        raw = seg.tensors[0].numpy()  # rank 0's mapping holds the table
        self.nums = raw[: self.world * _ROW].reshape(self.world, _ROW)[:, : _COLS * 8].view(np.int64)
        self.text = raw[: self.world * _ROW].reshape(self.world, _ROW)[:, _COLS * 8:]
        self.nums[self.rank, 3] = os.getpid()

    def set(self, state: int, what: str = "") -> None:
        """Write this rank's row. The epoch is a sequence lock: odd while the row is being written,
        so that a reader on another rank never takes a half-written row (a new state with the
        old text, or a cleared text) for a whole one."""
        r = self.rank
        b = what.encode()[: _TEXT - 1]
        self.nums[r, 1] += 1  # odd: being written
        self.text[r, :] = 0
        self.text[r, : len(b)] = np.frombuffer(b, dtype=np.uint8)
        self.nums[r, 2] = time.monotonic_ns()
        self.nums[r, 0] = state
        self.nums[r, 1] += 1  # even: whole

    def _row(self, r: int) -> tuple:
        """(state, epoch, start ns, text) of rank r, read whole (see set)."""
        for _ in range(10000):
            e = int(self.nums[r, 1])
            if e % 2 == 0:
                row = (int(self.nums[r, 0]), e, int(self.nums[r, 2]), bytes(self.text[r]))
                if int(self.nums[r, 1]) == e:
                    return row
            time.sleep(0.0001)
        return (int(self.nums[r, 0]), int(self.nums[r, 1]), int(self.nums[r, 2]), bytes(self.text[r]))

    def snapshot(self) -> List[tuple]:
        return [self._row(r)[:2] for r in range(self.world)]

    def describe(self, r: int) -> str:
        st, _, start, text = self._row(r)
        what = text.split(b"\0", 1)[0].decode(errors="replace")
        if st in (WAITING, COLLECTIVE):
            secs = (time.monotonic_ns() - start) / 1e9
            return f"rank {r}: {'waiting' if st == WAITING else 'in a collective'} for {secs:.1f} s: {what}"
        return f"rank {r}: {_NAMES.get(st, st)}"


_BOARD: Dict[str, Optional[Board]] = {"b": None}


def board() -> Optional[Board]:
    return _BOARD["b"]


def make_board() -> Board:
    """Make the board (collective: every rank calls it at the same point), and set up the waits."""
    if _BOARD["b"] is not None:
        return _BOARD["b"]
    import torch.distributed as dist

    seg = heap.allocate(dist.get_world_size() * _ROW)
    seg.connect()
    b = Board(seg)
    _BOARD["b"] = b
    atexit.register(b.set, EXITED)
    install_waits()
    from . import racecheck

    racecheck.install()
    return b


def mark_exited() -> None:
    b = board()
    if b is not None:
        b.set(EXITED)


def mark_collective(what: str) -> bool:
    """This rank is blocked in a collective of the world group (what: the call and the user's line);
    False when there is no board. mark_running() ends it."""
    b = board()
    if b is None:
        return False
    b.set(COLLECTIVE, what)
    return True


def mark_running() -> None:
    b = board()
    if b is not None:
        b.set(RUNNING)


# --------------------------------------------------------------------------- the interpreter's polling loops

class _Wait:
    __slots__ = ("start", "seen", "seen_at", "nap", "marked")

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.seen: Any = None
        self.seen_at = self.start
        self.nap = 0.001
        self.marked = False


class SharedWaits:
    """``kernel.cpu.warps.shared_waits``: the polling loops of this rank's kernels."""

    SPIN = 16  # rounds spun before the rank marks itself waiting and starts to sleep

    def __init__(self) -> None:
        self.waits: Dict[int, _Wait] = {}

    def polls(self, run: Any, s: Any) -> bool:
        cache = run.__dict__.setdefault("_shared_polls", {})
        k = id(s)
        if k not in cache:
            cache[k] = bool(self._polled(run, s))
        return cache[k]

    @staticmethod
    def _polled(run: Any, s: Any) -> List[Any]:
        """The loads (and ops' load accesses) of loop s on memory other ranks map."""
        from ...kernel.cpu.interpreter import _shared
        from ...kernel.ir.nodes import Load, Op, walk

        out = []
        for blk in (s.before, s.body):
            for op in walk(blk):
                if getattr(op, "addr", None) is not None and getattr(op, "kind", "") != "st":
                    out.append((op, None))  # through an address the kernel holds: maybe another rank's memory
                    continue
                if isinstance(op, Load):
                    acc = [op]
                elif isinstance(op, Op):
                    acc = [a for a in op.accesses() if not a.is_store]
                else:
                    continue
                for a in acc:
                    buf = run.buffers.get(getattr(a.param, "index", -1)) if getattr(a.param, "space", "") == "gmem" else None
                    if buf is not None and _shared(buf):
                        out.append((op, a))
        return out

    def _what(self, run: Any, g: Any, s: Any, f: Any) -> str:
        """The user's line of the loop and the memory it polls, for the threads still waiting."""
        ctx = g.ctx
        polled = self._polled(run, s)
        loc = next((getattr(op, "loc", None) for op, _ in polled if getattr(op, "loc", None)), None)
        active = np.nonzero(np.ones(ctx.n, dtype=bool) if f.m is None else f.m)[0]
        parts = []
        for op, a in polled[:2]:
            if a is None:
                parts.append(f"{op.ptx()} through an address the kernel holds")
                continue
            try:
                base = np.broadcast_to(np.asarray(ctx.index(a.base), dtype=np.int64), (ctx.n,))
                idx = sorted({int(base[t]) + int(o) for t in active[:4] for o in a.offsets[:1]})
                buf = run.buffers[a.param.index]
                vals = [buf[i].item() if 0 <= i < buf.size else "?" for i in idx]
                parts.append(f"{a.param.name}[{', '.join(map(str, idx))}] (values seen {vals})")
            except Exception:  # noqa: BLE001 - the description must not fail the report
                parts.append(a.param.name)
        nth = len(active)
        first = ""
        try:
            grid, _, b0, _ = ctx.env.indices
            t0 = int(active[0])
            blk = b0 + t0 // ctx.nt
            first = (f", the first block ({blk % grid[0]},{blk // grid[0] % grid[1]},{blk // (grid[0] * grid[1])}) "
                     f"thread {t0 % ctx.nt}")
        except Exception:  # noqa: BLE001 - the description must not fail the report
            pass
        return (f"kernel {run.ir.name}, the polling loop at {loc or '?'} on {'; '.join(parts) or '?'}"
                f" ({nth} thread{'s' if nth != 1 else ''} still polling{first})")

    def wait(self, run: Any, g: Any, s: Any, f: Any) -> None:
        w = self.waits.get(id(f))
        if w is None:
            w = self.waits[id(f)] = _Wait()
        if f.rounds < self.SPIN:
            return
        b = board()
        if b is None:
            return
        if not w.marked:
            b.set(WAITING, self._what(run, g, s, f))
            w.marked = True
            w.seen, w.seen_at = None, time.monotonic()
        time.sleep(w.nap)
        w.nap = min(w.nap * 1.5, 0.02)
        now = time.monotonic()
        snap = b.snapshot()
        if snap != w.seen:
            w.seen, w.seen_at = snap, now
        stalled = all(st in STALLED for st, _ in snap)
        quiet = _env_float("CUTELAB_DEADLOCK_S", 3.0)
        limit = _env_float("CUTELAB_WAIT_TIMEOUT_S", 300.0)
        if (stalled and now - w.seen_at >= quiet) or now - w.start >= limit:
            self._report(run, g, s, f, b, stalled, now - w.start)

    def _report(self, run: Any, g: Any, s: Any, f: Any, b: Board, stalled: bool, secs: float) -> None:
        mine = self._what(run, g, s, f)
        others = "\n  ".join(b.describe(r) for r in range(b.world) if r != b.rank)
        head = ("deadlock across ranks: every rank waits or has exited and none can set what the others wait for"
                if stalled else f"no progress: waited {secs:.0f} s (CUTELAB_WAIT_TIMEOUT_S) while some rank is "
                "outside any kernel wait")
        self.waits.clear()
        b.set(EXITED)
        raise DeadlockError(f"{head}\n  rank {b.rank} (this one): {mine}\n  {others}\n"
                            "Nothing sets that memory: a flag no rank writes, or a missing signal/fence?")

    def done(self, run: Any, f: Any) -> None:
        w = self.waits.pop(id(f), None)
        if w is not None and w.marked:
            b = board()
            if b is not None:
                b.set(RUNNING)


def install_waits() -> None:
    from ...kernel.cpu import warps

    if warps.shared_waits is None:
        warps.shared_waits = SharedWaits()
