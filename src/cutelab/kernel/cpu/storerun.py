"""Runs of stores that differ only by a constant, as one scatter.

An unrolled copy out of registers (an epilogue's ``cute.copy`` of a fragment, a zero fill) is a
run of ``Store`` ops to one array, each at ``base + offsets``, whose bases differ only by their
constant: ``Lin`` sums of the same terms, or one swizzle of such sums. ``store_run(ops, i)``
finds such a run from op i (``warps._runs`` makes it one step of the block); ``run_stores(ctx,
run, buffers)`` runs it for every thread at once (no mask): the first store's base is worked out
once, the other stores' constants added as one (stores, threads) array and swizzled as one, the
whole run bounds-checked at once, the values of every store gathered (a numpy operation per
register read, ``ExecContext.matrix``) and written in one assignment, store after store (the
index array is store-major, in the order the stores run: where two stores write one element,
the later one's value stays, as one by one). Out of bounds, or values of another type than the
memory's, it writes nothing and answers False: the stores then run one by one, and the one out
of range reports itself.

May import: ``kernel.ir``.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np

from ..ir.nodes import Store
from ..ir.symbolic import Lin, Swz

__all__ = ["StoreRun", "store_run", "run_stores"]


class StoreRun(list):
    """The stores of a run (at least two), with what the interpreter needs of them at once."""

    def __init__(self, stores: List[Store]):
        super().__init__(stores)
        first = stores[0].base
        self.swz = first if isinstance(first, Swz) else None  # the swizzle all of them go through
        self.inner = first.a if self.swz is not None else first  # the first store's sum
        consts = [(s.base.a if self.swz is not None else s.base).const for s in stores]
        self.consts = np.asarray([c - consts[0] for c in consts], dtype=np.int64)  # from the first's
        self.offsets = np.asarray(stores[0].offsets, dtype=np.int64)
        self.rows = len(self.offsets) >= 2 and stores[0].offsets == tuple(range(len(self.offsets)))
        self.src = tuple(r for s in stores for r in s.src)  # every store's values, in order


def _shape(s: Any) -> Any:
    """What the stores of one run share; None for an op that is not such a store."""
    if type(s) is not Store or len(s.src) != len(s.offsets) or not s.offsets:
        return None
    e, sw = s.base, None
    if isinstance(e, Swz):
        e, sw = e.a, (e.b, e.m, e.s)
    if not isinstance(e, Lin) or type(e.const) is not int:
        return None
    return (id(s.param), s.offsets, sw, tuple((a.key, c) for a, c in e.terms))


def store_run(ops: List[Any], i: int) -> Optional[Tuple[int, StoreRun]]:
    """(end, the run) for a run of at least two such stores from ops[i] to ops[end - 1]; else None."""
    k = _shape(ops[i])
    if k is None:
        return None
    j = i + 1
    while j < len(ops) and _shape(ops[j]) == k:
        j += 1
    return (j, StoreRun(ops[i:j])) if j - i >= 2 else None


def run_stores(b: Any, run: StoreRun, buffers: Any) -> bool:
    """Run the stores of run for every thread of b (see the module docstring); False (nothing
    written) where they must run one by one."""
    p = run[0].param
    data, length, shift = b.memory(p, buffers)
    n, k, L = b.n, len(run), len(run.offsets)
    vals = b.matrix(run.src, p.dtype)
    if vals.dtype != data.dtype:
        return False
    v0 = np.broadcast_to(np.asarray(b.index(run.inner), dtype=np.int64), (n,))
    V = v0[None, :] + run.consts[:, None]  # (stores, threads): each store's sum
    if run.swz is not None:  # as ExecContext.index_range swizzles a sum
        t = V & run.swz.ymask
        t >>= run.swz.s
        V ^= t
    if int(V.min()) + int(run.offsets.min()) < 0 or int(V.max()) + int(run.offsets.max()) >= length:
        return False
    vals = vals.reshape(n, k, L).transpose(1, 0, 2)  # (stores, threads, values)
    if run.rows and length % L == 0 and not (V % L).any():  # runs of L elements at multiples of L: rows
        R = V // L
        if shift is not None:
            R += (shift // L)[None, :]
        item = np.dtype((np.void, L * data.dtype.itemsize))  # one row of L elements as one item
        data.view(item)[R] = np.ascontiguousarray(vals).view(item).reshape(R.shape)
        return True
    idx = V[:, :, None] + run.offsets[None, None, :]
    if shift is not None:
        idx += shift[None, :, None]
    data[idx] = vals
    return True
