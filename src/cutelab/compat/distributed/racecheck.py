"""``CUTELAB_RACECHECK=1`` across ranks: a signal that does not release the data before it.

Before a kernel runs on the CPU with symmetric memory among its tensors, its ops are read in
program order (branches and loops as written, once). Writes to memory other ranks map (stores,
weak ``cute.arch.store``) are *pending* until a release point: ``fence.acq_rel.sys``
(``cute.arch.fence_acq_rel_sys``) or a release at system scope (``st.release.sys``,
``atom``/``red`` with ``sem="release"``/``"acq_rel"``, ``scope="sys"``). A *signal* -- a store,
atomic or ``red`` on symmetric memory that is relaxed, weak or narrower than system scope -- with
writes pending is a race: on the GPU another rank that sees the signal may still read the old
data (the CPU interpreter, coherent and in order, would hide it). It is reported as a
``RaceError`` naming the kernel, the signal's line and the writes it does not order, before
anything runs.

The check is by program text, not by execution: a write and a signal in branches that never run
together are still paired. The acquire side (a relaxed poll followed by reads without a fence) is
not checked: Lamport-style kernels poll the data itself.

May import: ``cutelab.kernel`` (the IR, the atomics, the interpreter), ``cutelab.errors``.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List

from ...errors import LaunchError

__all__ = ["RaceError", "check", "install"]


class RaceError(LaunchError):
    """A signal to other ranks that is not ordered after the data it announces."""


def _enabled() -> bool:
    return os.environ.get("CUTELAB_RACECHECK", "") not in ("", "0")


def check(ir: Any, buffers: Dict[int, Any]) -> None:
    """Raise RaceError for the first signal of ir that leaves writes to shared memory unreleased."""
    from ...kernel.cpu.interpreter import _shared
    from ...kernel.instr.atomics import AcqRelFence, MemOp
    from ...kernel.ir.nodes import Store, walk

    shared = {i for i, b in buffers.items() if _shared(b)}
    if not shared:
        return
    pending: List[Any] = []
    for op in walk(ir.body):
        if isinstance(op, AcqRelFence):
            if op.scope == "sys":
                pending = []
            continue
        if isinstance(op, Store) and op.param.space == "gmem" and op.param.index in shared:
            # (a Shared array's index counts the kernel's shared arrays, not its arguments)
            pending.append(op)
            continue
        if not isinstance(op, MemOp) or op.kind == "ld" or op.param.index not in shared:
            continue
        releases = op.sem in ("release", "acq_rel") and op.scope == "sys"
        if releases:
            pending = []
            continue
        if op.kind == "st" and op.sem is None:  # a weak store of data: pending like any store
            pending.append(op)
            continue
        if pending:
            writes = "; ".join(f"{w.param.name} at {getattr(w, 'loc', None) or '?'}" for w in pending[:3])
            more = f" and {len(pending) - 3} more" if len(pending) > 3 else ""
            raise RaceError(
                f"{ir.name}: race across ranks (CUTELAB_RACECHECK): the signal {op.ptx()} on {op.param.name} at "
                f"{getattr(op, 'loc', None) or '?'} is not ordered after the writes to symmetric memory before it "
                f"({writes}{more}): a rank that sees the signal may read the old data. Put "
                f"cute.arch.fence_acq_rel_sys() before the signal, or make it a release at system scope "
                f"(sem=\"release\", scope=\"sys\"). Nothing was run.")


def install() -> None:
    """Check every CPU launch (while CUTELAB_RACECHECK is set) before it runs."""
    from ...kernel.cpu import interpreter as _interp

    if getattr(_interp.interpret, "_cutelab_racecheck", False):
        return
    run = _interp.interpret

    def interpret(ir: Any, buffers: Any, addresses: Any = None, out: Any = None, scalars: Any = None) -> None:
        if _enabled():
            check(ir, buffers)
        return run(ir, buffers, addresses, out, scalars)

    interpret._cutelab_racecheck = True
    interpret.__wrapped__ = run
    _interp.interpret = interpret
