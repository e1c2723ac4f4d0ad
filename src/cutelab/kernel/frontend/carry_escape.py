"""Objects a runtime branch changes in place without naming them: carried through the branch after the fact.

A runtime region changes an object of CuTe DSL's value protocol in place when it calls one of its
methods (``carry.Carry.after``: the object from before the region takes the rebuilt one's
attributes). When that region sits inside a function that a runtime branch calls
(flash_attn.cute's SM100 forward: ``if warp_idx == load_warp: self.load(..., tile_scheduler)``,
whose ``while`` loop advances the scheduler), the branch's own source never names the object, so
the rewrite (rewrite._invoked) does not make the branch carry it: after the branch, the object
would hold values computed inside the arm, which other warps' arms then read (a TraceError: a
value of a branch that has ended), and the other arm would start from the first arm's changes.

CuTe DSL 4.8.1 keeps such an object's values in memory slots that its lowering turns into the
``scf.if``'s results (its pyir ``mutated leaves``): after the branch the object holds the arm's
values where the arm ran, and its values from before the branch elsewhere. ``Escapes`` does that
here: each in-place change is logged on the trace (``note``); at the end of each arm of a runtime
branch, every object changed in it that the branch does not carry gets registers, declared before
the branch (the ops are put before its ``If``) with its values from before, and assigned at the
end of the arm; the object then goes back to its state from before for the other arm; after the
branch it takes the values rebuilt from the registers (and that change is logged in turn, for an
enclosing branch).
"""

from __future__ import annotations

from typing import Any, Dict, List

from ...errors import TraceError
from . import carry_obj

__all__ = ["note", "Escapes"]


def note(t: Any, obj: Any) -> None:
    """Log that obj is about to be changed in place (its state before the change)."""
    t.__dict__.setdefault("inplace_log", []).append((obj, dict(vars(obj))))


class Escapes:
    """The objects one runtime branch changes in place without carrying them (see the module docstring)."""

    def __init__(self, t: Any, op: Any, outer: Any, carried: Any, where: str):
        self.t, self.op, self.outer, self.where = t, op, outer, where
        self.carried = carried  # the values the branch carries itself (Carry.pre)
        self.log: List[Any] = t.__dict__.setdefault("inplace_log", [])
        self.start = len(self.log)
        self.objs: Dict[int, list] = {}  # id -> [object, its state before the branch, Carried]

    def end_arm(self) -> None:
        """At the end of an arm (t.cur is the arm's block): assign the registers of every object changed in
        place so far, and give the object back its state from before the branch."""
        from ..ir.nodes import Block

        t = self.t
        for obj, before in self.log[self.start:]:
            if id(obj) not in self.objs and not any(obj is v for v in self.carried.values()):
                self.objs[id(obj)] = [obj, before, None]
        del self.log[self.start:]
        for e in self.objs.values():
            obj, before, c = e
            name = type(obj).__name__
            if c is False:  # made inside the branch: nothing to give back after it
                continue
            if c is None:
                tmpl = object.__new__(type(obj))
                tmpl.__dict__.update(before)
                vals = carry_obj.leaves(tmpl)
                if vals is None:
                    raise TraceError(f"kernel {t.name}: the runtime branch at {self.where} changes a {name} in place "
                                     f"(a method of it called in a function the branch calls), which carries no "
                                     f"runtime values; cutelab cannot give it the branch's result")
                arm, t.cur = t.cur, Block(self.outer)
                try:
                    c = e[2] = carry_obj.declare(t, name, tmpl, vals)
                    ops = t.cur.ops
                except TraceError:  # its state before was computed inside the branch: the object is the arm's own
                    e[2] = False
                    continue
                finally:
                    t.cur = arm
                at = next(i for i, op in enumerate(self.outer.ops) if op is self.op)
                self.outer.ops[at:at] = ops
            carry_obj.leave(t, name, c, obj, "branch", self.where)
            obj.__dict__.clear()
            obj.__dict__.update(before)

    def exit(self) -> None:
        """After the branch: each object takes the values the branch's registers hold (logged as a change)."""
        for obj, before, c in self.objs.values():
            if c is False:
                continue
            new = carry_obj.snap(self.t, c)
            note(self.t, obj)
            for k, x in vars(new).items():
                object.__setattr__(obj, k, x)
