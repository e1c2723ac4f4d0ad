"""Pass ``retile``: a pure copy moves its warp's addresses with 16-byte accesses.

A load whose values only feed one store, element for element at the same offsets, from a tensor
the kernel never writes into one it never reads, copies a fixed set of addresses per warp, and
any lane of the warp may move any of them. Where that set is whole aligned 16-byte runs, lane l's
j-th access moves the run at ``warp base + A[j] + B * l``. The plan's ``retiled`` maps both the
load's and the store's id to the same warp plan. Straight-line kernels without printf only.
"""

from __future__ import annotations

from math import gcd
from typing import Any, Dict, List, Optional

import numpy as np

from ..ir.nodes import Compute, KernelIR, Load, Printf, Store, pow2_divisor
from ..ir.symbolic import Expr, Lin, add, atoms, evaluate, mul, sym_div


def run(ir: KernelIR, plan: Any, options: Any) -> None:
    if ir.structured or any(isinstance(x, Printf) for x in ir.stmts):
        return
    uses: Dict[int, List[Any]] = {}
    for st in ir.stmts:
        refs: List[Any] = []
        if isinstance(st, Store):
            refs = list(st.src)
        elif isinstance(st, Compute):
            refs = [r for col in st.args for r in col]
        elif isinstance(st, Printf):
            refs = [part[1] for part in st.parts if isinstance(part, tuple) and part[0] == "val"]
        for r in refs:
            if isinstance(r, tuple):
                uses.setdefault(r[0].id, []).append(st)
    for st in ir.stmts:
        if not isinstance(st, Load) or st.param.written:
            continue
        users = {id(u): u for u in uses.get(st.dst.id, [])}
        if len(users) != 1:
            continue
        use = next(iter(users.values()))
        if not isinstance(use, Store) or use.param.read or len(use.src) != st.dst.n:
            continue
        if sorted(r[1] for r in use.src if isinstance(r, tuple) and r[0] is st.dst) != list(range(st.dst.n)):
            continue
        if any(st.offsets[r[1]] != o for r, o in zip(use.src, use.offsets)):
            continue
        if not (isinstance(st.base, Expr) and isinstance(use.base, Expr) and st.base.key == use.base.key):
            continue
        if use.param.dtype.name != st.param.dtype.name or use.param.align < 16:
            continue
        wp = warp_plan(ir, st)
        if wp is not None:
            plan.retiled[id(st)] = wp
            plan.retiled[id(use)] = wp


def warp_plan(ir: KernelIR, s: Load) -> Optional[dict]:
    """The warp plan of a load (see the module docstring), or None where its warp's addresses are
    not whole, aligned, distinct 16-byte runs that lanes can take at a constant stride."""
    e = s.param.dtype.bytes
    if 16 % e or ir.block[0] % 32 or s.param.align < 16:
        return None
    h = 16 // e
    terms = s.base.terms if isinstance(s.base, Lin) else ((s.base, 1),)
    g: Any = 0
    rest: Any = s.base.const if isinstance(s.base, Lin) else 0
    for atom, c in terms:
        names = {v.name for v in atoms(atom)}
        if "tid.x" in names:
            if names != {"tid.x"}:
                return None
            g = add(g, mul(atom, c))
        else:
            rest = add(rest, mul(atom, c))
    bx = ir.block[0]
    gv = np.broadcast_to(np.asarray(evaluate(g, {"tid.x": np.arange(bx, dtype=np.int64)})), (bx,))
    lane = gv[:32] - gv[0]
    for w in range(bx // 32):
        if not np.array_equal(gv[32 * w:32 * w + 32] - gv[32 * w], lane):
            return None
    offs = np.asarray(s.offsets, dtype=np.int64)
    P = np.sort((lane[:, None] + offs[None, :]).ravel())
    if len(np.unique(P)) != len(P) or len(P) % (32 * h):
        return None
    runs = P.reshape(-1, h)
    if not np.all(runs - runs[:, :1] == np.arange(h)):
        return None
    d = gcd(sym_div(rest), int(np.gcd.reduce(gv[::32])) if bx else 0)
    starts = runs[:, 0]  # relative to the warp's base: rest + g(first lane of the warp)
    for st0 in starts:
        dd = gcd(d, int(st0))
        if dd and pow2_divisor(dd * e) < 16:
            return None
    nvec = len(runs) // 32
    starts = starts.reshape(nvec, 32)  # [j, lane]
    B = int(starts[0, 1] - starts[0, 0])
    if not np.all(starts - starts[:, :1] == B * np.arange(32)):
        return None
    return {"A": [int(a) for a in starts[:, 0]], "B": B, "h": h, "nvec": nvec,
            "span": (int(P[0]), int(P[-1]))}
