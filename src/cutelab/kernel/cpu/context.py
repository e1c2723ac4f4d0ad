"""The execution context of the CPU interpreter: what an instruction's ``interpret`` may use.

An instruction (``kernel.instr``) runs on the CPU through ``interpret(ctx, mask, buffers)``:
``ctx`` is an ``ExecContext``, one group of warps of one batch of thread blocks, vectorised
over their threads; ``mask`` (a bool per thread, or None for all) says which threads execute
it; ``buffers`` maps each global parameter's index to its flat numpy storage. The public
surface an instruction may use:

- ``ctx.ir``, ``ctx.n`` (threads in the batch), ``ctx.nt`` (threads per block), ``ctx.nblk``,
  ``ctx.block_of`` (each thread's block in the batch), ``ctx.scalars``;
- ``ctx.regs[reg.id]``: a (threads, n) array of register storage, ``ctx.env``: index
  variables; ``ctx.index(expr)``, ``ctx.column(ref, dtype, real)``, ``ctx.matrix(refs, dtype)``,
  ``ctx.gather(refs, dtype)`` (compute values of many refs, a numpy operation per register),
  ``ctx.cond(c)``;
- an op may also run several of its kind at once: ``interpret_batch(ops, ctx, mask, buffers)``
  with ``batch_key()`` and ``batch_io()`` (``warps._runs`` says when the interpreter uses it);
- ``ctx.memory(param, buffers)``, ``ctx.access_index(...)`` (bounds-checked element indices),
  ``ctx.index_at(...)`` (the same for an access of every thread, as a per-thread part made once
  per batch plus one int: ``uniform_split``), ``ctx.whole_warps(mask, name, short)`` (warp-wide
  instructions);
- ``ctx.common``: state shared by every group of warps of the batch (mbarriers); anything an
  instruction keeps as an attribute of ``ctx`` belongs to its group of warps (pending wgmma);
- ``to_real``/``from_real``/``real_dtype``: storage bits to compute values and back
  (``cutelab.dtypes.to_compute``/``to_storage``/``compute_dtype``, under the names instructions use).

May import: ``kernel.ir``, ``cutelab.errors``, ``cutelab.dtypes``.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import numpy as np

from ...dtypes import compute_dtype, convert, to_compute, to_storage
from ...errors import LaunchError
from ..ir.nodes import ParamRef, RegVar, Shared
from ..ir.symbolic import DynDiv, Expr, FloorDiv, Lin, Mod, Mul, Swz, Var, evaluate

__all__ = ["ExecContext", "to_real", "from_real", "real_dtype", "and_mask", "check_range", "ref_groups",
           "as_index", "warp_of", "warps_per_block"]


def real_dtype(dt: Any) -> Any:
    """numpy dtype of the values computed with (cutelab.dtypes.compute_dtype)."""
    return compute_dtype(dt)


# storage bits to compute values and back: the one conversion of cutelab/dtypes.py
to_real = to_compute
from_real = to_storage


def and_mask(mask: Any, c: np.ndarray) -> np.ndarray:
    """mask & c, where mask None means every thread (a new array either way)."""
    return c.copy() if mask is None else (mask & c)


def check_range(idx_lo: int, idx_hi: int, length: int, what: str, where: str = "") -> None:
    if idx_lo < 0 or idx_hi >= length:
        raise LaunchError(
            f"{what}: offsets [{idx_lo}, {idx_hi}] fall outside the tensor's {length} elements; "
            f"nothing was written{where}"
        )


_FIXED = ("tid.", "bid.", "arg.")
_INDEX_NAMES = frozenset(("tid.x", "tid.y", "tid.z", "bid.x", "bid.y", "bid.z"))


def _fixed(x: Any) -> bool:
    """Whether an index expression depends only on names that stay the same through a batch
    (conservative: an expression of a kind not listed here is not)."""
    if isinstance(x, Var):
        return x.name.startswith(_FIXED)
    if isinstance(x, Lin):
        return all(_fixed(a) for a, _ in x.terms)
    if isinstance(x, (FloorDiv, Mod)):
        return _fixed(x.a)
    if isinstance(x, (Mul, DynDiv, Swz)):
        return _fixed(x.a) and _fixed(x.b)
    return not isinstance(x, Expr)


_RUNS: Dict[tuple, Any] = {}  # offsets -> (k, run starts // k) or None
_INDEX_CACHE = 1 << 23  # int64 elements of the index arrays a batch keeps (index_at, rows_at): 64 MB


def _runs(offsets: tuple) -> Any:
    """(k, starts // k) when offsets are runs of k >= 2 consecutive elements each starting at a
    multiple of k; else None."""
    n = len(offsets)
    k = 1
    while k < n and offsets[k] == offsets[0] + k:
        k += 1
    if k < 2 or n % k:
        return None
    starts = offsets[::k]
    if any(c % k for c in starts) or any(offsets[j * k + i] != starts[j] + i for j in range(n // k) for i in range(k)):
        return None
    if len(_RUNS) > 4096:
        _RUNS.clear()
    return k, np.asarray(starts, dtype=np.int64) // k


def _cluster_major_bid(name: str, b: np.ndarray, grid_xy: Tuple[int, int], cluster: Tuple[int, int, int]) -> np.ndarray:
    """bid.x/y/z of the b-th block when blocks are numbered cluster by cluster (clusters in grid
    order, x fastest), and inside a cluster by rank (%cluster_ctarank: x fastest)."""
    (gx, gy), (cx, cy, cz) = grid_xy, cluster
    size = cx * cy * cz
    c, r = b // size, b % size
    ncx, ncy = gx // cx, gy // cy
    if name == "bid.x":
        return (c % ncx) * cx + r % cx
    if name == "bid.y":
        return ((c // ncx) % ncy) * cy + (r // cx) % cy
    return (c // (ncx * ncy)) * cz + r // (cx * cy)


def warps_per_block(ctx: "ExecContext") -> int:
    return max(1, -(-ctx.nt // 32))


def warp_of(ctx: "ExecContext") -> np.ndarray:
    """Each thread's warp in the batch (block in the batch * warps per block + warp in the block)."""
    t = np.arange(ctx.n, dtype=np.int64)
    return (t // ctx.nt) * warps_per_block(ctx) + (t % ctx.nt) // 32


def as_index(xs: Any) -> Any:
    """Column numbers as a numpy index: a slice where they are consecutive (a view, no copy)."""
    xs = [int(x) for x in xs]
    if xs and xs == list(range(xs[0], xs[0] + len(xs))):
        return slice(xs[0], xs[0] + len(xs))
    return np.asarray(xs, dtype=np.intp)


def ref_groups(ir: Any, refs: tuple) -> Tuple[list, list]:
    """The element references refs (one per element of an operand) sorted for whole-column numpy
    work: ([(reg, its columns, the elements they give, whether that is the whole register in
    order)], [(element, ref) of every other ref]), each register once, its columns in the order
    of refs. Worked out once per tuple of refs of
    the kernel (cached on its IR, which keeps the tuples alive)."""
    cache = ir.__dict__.setdefault("_cpu_ref_groups", {})
    got = cache.get(id(refs))
    if got is None or got[0] is not refs:
        by_reg: Dict[int, Any] = {}
        other = []
        for i, ref in enumerate(refs):
            if isinstance(ref, tuple):
                g = by_reg.get(ref[0].id)
                if g is None:
                    g = by_reg[ref[0].id] = (ref[0], [], [])
                g[1].append(ref[1])
                g[2].append(i)
            else:
                other.append((i, ref))
        regs = [(r, as_index(cols), as_index(at), cols == list(range(r.n)) and at == cols)
                for r, cols, at in by_reg.values()]
        got = cache[id(refs)] = (refs, regs, other)
    return got[1], got[2]


class _Env(dict):
    """Index variables by name; "reg.<id>.<i>" (a RegVar) reads that register of every thread."""

    indices: Any = None  # (grid, block, first block, blocks): thread and block indices made on demand

    def __init__(self, env: Dict[str, Any], ctx: "ExecContext"):
        dict.__init__(self, env)
        self.ctx = ctx

    def __missing__(self, name: str) -> Any:
        if name.startswith("reg."):
            _, rid, i = name.split(".")
            return self.ctx.regs[int(rid)][:, int(i)].astype(np.int64)
        if self.indices is not None and name in _INDEX_NAMES:
            (gx, gy, _), (bx, by, bz), first, k = self.indices[:4]
            nt = bx * by * bz
            lin = np.arange(k * nt, dtype=np.int64)
            if name.startswith("tid."):
                t = lin % nt
                v = {"tid.x": t % bx, "tid.y": (t // bx) % by, "tid.z": t // (bx * by)}[name]
            elif len(self.indices) > 4:  # a cluster launch: blocks run cluster by cluster, in rank order
                v = _cluster_major_bid(name, first + lin // nt, (gx, gy), self.indices[4])
            else:
                b = first + lin // nt
                v = {"bid.x": b % gx, "bid.y": (b // gx) % gy, "bid.z": b // (gx * gy)}[name]
            self[name] = v
            return v
        raise KeyError(name)

    def copy_for(self, ctx: "ExecContext") -> "_Env":
        e = _Env(self, ctx)
        e.indices = self.indices
        return e


class Registers(dict):
    """ctx.regs: {register id: (threads, n) array}. Reading a register that is not there (one the
    interpreter dropped as dead, liveness.py, and that some op still reads) is an error that says so."""

    def __missing__(self, rid: Any) -> Any:
        raise LaunchError(f"the CPU interpreter read register r{rid}, which it does not hold (dropped as dead by "
                          f"kernel/cpu/liveness.py, or never written): an interpreter bug; "
                          f"cutelab.kernel.cpu.warps.DROP_DEAD = False runs with every register kept")


class ExecContext:
    """One group of warps of a batch of thread blocks, as the interpreter runs it (see the module
    docstring for what instructions may use)."""

    rec: Any = None  # the profiler's batch recorder, when this batch is recorded
    cluster_size = 1  # CTAs per cluster: a batch holds whole clusters, each one's CTAs in rank order

    def __init__(self, ir: Any, env: Dict[str, np.ndarray], n: int, scalars: Optional[Dict[int, Any]] = None):
        self.ir = ir
        self.env = _Env(env, self)
        self.n = n
        self.regs: Dict[int, np.ndarray] = Registers()
        self.scalars = scalars or {}
        self.common: Dict[str, Any] = {}
        self._split: Dict[int, Any] = {}  # index expressions: (value of their launch-constant part, the rest)

    def fork(self) -> "ExecContext":
        """A context for a group of warps that leaves this one: its own registers and index
        variables (copies: rows of other threads are never read), the batch's shared state."""
        c = ExecContext.__new__(ExecContext)
        c.__dict__.update(self.__dict__)
        c.regs = Registers(self.regs)
        c.env = self.env.copy_for(c)
        return c

    # -- values
    def index(self, e: Any) -> Any:
        """The value of an index expression: an int, or an int64 per thread. The part of a sum
        that depends only on thread and block indices and scalar arguments is computed once per
        batch (those never change while it runs); loop variables and registers every time."""
        return self.index_range(e)[0]

    def index_range(self, e: Any) -> Tuple[Any, Any, Any]:
        """(value, lowest, highest) of index(e) over all threads of the batch; the bounds are None
        where they were not worked out (compute them from the value)."""
        if isinstance(e, Lin):
            sp = self._split.get(id(e))
            if sp is None:
                fixed = [(a, c) for a, c in e.terms if _fixed(a)]
                rest = tuple((a, c) for a, c in e.terms if not _fixed(a))
                f, lo, hi = self._fixed_sum(fixed) if fixed else (0, 0, 0)
                f, lo, hi = f + e.const, lo + e.const, hi + e.const
                if not isinstance(f, np.ndarray):
                    f = lo = hi = int(f)
                sp = self._split[id(e)] = (f, lo, hi, rest, e, fixed)  # e: the key's owner stays alive with its entry
            v, lo, hi, rest = sp[:4]
            for a, c in rest:
                x = evaluate(a, self.env)
                x = x if c == 1 else x * c
                v = v + x
                if isinstance(x, np.ndarray):
                    lo = hi = None
                elif lo is not None:
                    lo, hi = lo + int(x), hi + int(x)
        elif isinstance(e, Swz) and isinstance(e.a, Lin):  # a swizzled sum: the sum as above
            v = self.index_range(e.a)[0]
            v = v ^ ((v & e.ymask) >> e.s)
            lo = hi = None
        else:
            v = evaluate(e, self.env)
            lo = hi = None
        if isinstance(v, np.ndarray):
            return v.astype(np.int64, copy=False), lo, hi
        v = int(v)
        return v, v, v

    def _fixed_sum(self, terms: list) -> Tuple[Any, int, int]:
        """(value, lowest, highest) of a sum of (atom, coefficient) terms that stay the same through
        the batch (``_fixed``), without a constant: worked out once per batch for every index
        expression with those terms (the accesses of an unrolled loop differ only by constants)."""
        cache = self.__dict__.setdefault("_fixed_sums", {})
        key = tuple((a.key if isinstance(a, Expr) else ("const", a), c) for a, c in terms)
        got = cache.get(key)
        if got is None:
            acc: Any = 0
            for a, c in terms:
                v = evaluate(a, self.env)
                acc = acc + (v if c == 1 else v * c)
            if isinstance(acc, np.ndarray):
                acc = acc.astype(np.int64, copy=False)
                acc.flags.writeable = False  # (shared by the expressions with these terms)
                got = (acc, int(acc.min()), int(acc.max()))
            else:
                got = (int(acc), int(acc), int(acc))
            cache[key] = got
        return got

    def column(self, ref: Any, dt: Any, real: bool) -> np.ndarray:
        """Values of one element reference for all threads (real: as compute values of dt)."""
        if isinstance(ref, tuple):
            r, i = ref
            v = self.regs[r.id][:, i]
            if real:
                v = convert(to_real(v, r.dtype), dt)
            elif r.dtype.name != dt.name:
                v = from_real(to_real(v, r.dtype), dt)
            return v
        if isinstance(ref, Expr):
            v = np.broadcast_to(np.asarray(self.index(ref)), (self.n,))
            return v.astype(real_dtype(dt)) if real else from_real(v, dt)
        if isinstance(ref, ParamRef):
            ref = self.scalars[ref.param.index]
        v = np.full(self.n, ref, dtype=real_dtype(dt)) if real else np.broadcast_to(from_real(np.asarray(ref), dt), (self.n,))
        return v

    def matrix(self, refs: tuple, dt: Any) -> np.ndarray:
        """(threads, len(refs)) storage values of dt."""
        first = refs[0] if refs else None
        if (isinstance(first, tuple) and first[0].dtype.name == dt.name and first[0].n == len(refs)
                and all(isinstance(r, tuple) and r[0] is first[0] and r[1] == i for i, r in enumerate(refs))):
            return self.regs[first[0].id]
        regs, other = ref_groups(self.ir, refs)
        if not regs and refs and all(type(r) is int or type(r) is float for r in refs):  # numbers only:
            cache = self.ir.__dict__.setdefault("_cpu_const_rows", {})  # their storage values, made once
            key = (id(refs), dt.name)
            got = cache.get(key)
            if got is None or got[0] is not refs:
                row = np.empty((1, len(refs)), dtype=dt.storage)
                seen: Dict[Any, Any] = {}  # (each number as column() converts it, once: -0.0 apart from 0.0)
                for i, r in enumerate(refs):
                    k = (type(r), repr(r))
                    v = seen.get(k)
                    if v is None:
                        v = seen[k] = from_real(np.asarray(r), dt)
                    row[0, i] = v
                row.flags.writeable = False
                got = cache[key] = (refs, row)
            return np.broadcast_to(got[1], (self.n, len(refs)))
        out = np.empty((self.n, len(refs)), dtype=dt.storage)
        for r, cols, at, whole in regs:  # one numpy operation per register read (as column() does each)
            v = self.regs[r.id] if whole else self.regs[r.id][:, cols]
            out[:, at] = v if r.dtype.name == dt.name else from_real(to_real(v, r.dtype), dt)
        for i, r in other:
            out[:, i] = self.column(r, dt, real=False)
        return out

    def gather(self, refs: tuple, dt: Any) -> np.ndarray:
        """(threads, len(refs)) compute values of dt: ``column(ref, dt, real=True)`` of every ref,
        a column per ref, with one numpy operation per register the refs read. May be a register's
        own array: read it, do not write it."""
        regs, other = ref_groups(self.ir, refs)
        n = len(refs)
        if not other and len(regs) == 1:
            r, cols, _, whole = regs[0]
            v = self.regs[r.id] if whole else self.regs[r.id][:, cols]
            return convert(to_real(v, r.dtype), dt)
        out = np.empty((self.n, n), dtype=real_dtype(dt))
        for r, cols, at, _ in regs:
            out[:, at] = convert(to_real(self.regs[r.id][:, cols], r.dtype), dt)
        for i, ref in other:
            out[:, i] = self.column(ref, dt, real=True)
        return out

    def cond(self, c: Any) -> np.ndarray:
        """A condition (a register element or an index expression) as a bool per thread."""
        if isinstance(c, tuple):
            v = self.column(c, c[0].dtype, real=True)
            return np.asarray(v != 0)
        return np.broadcast_to(np.asarray(self.index(c)) != 0, (self.n,))

    # -- memory
    def memory(self, p: Any, buffers: Dict[int, np.ndarray]) -> Tuple[np.ndarray, int, Any]:
        """(flat array, per-block length, per-thread base shift) of a Param or a Shared array."""
        if isinstance(p, Shared):
            cache = self.__dict__.setdefault("_shifts", {})  # the same for every group of the batch
            shift = cache.get(p.length)
            if shift is None:
                shift = cache[p.length] = self.block_of * p.length
                shift.flags.writeable = False
            return self.shared[p.index], p.length, shift
        data = buffers[p.index]
        return data, len(data), None

    def access_index(self, base: Any, offsets: tuple, length: int, what: str, mask: Any = None,
                     where: str = "") -> Any:
        """(threads, len(offsets)) element indices of an access, checked against length for the
        threads of mask (inactive threads get element 0)."""
        offs = np.asarray(offsets, dtype=np.int64)
        base_v, lo, hi = self.index_range(base)
        if mask is not None:
            bv = np.broadcast_to(np.asarray(base_v, dtype=np.int64), (self.n,))
            act = bv[mask]
            if act.size:
                check_range(int(act.min()) + int(offs.min()), int(act.max()) + int(offs.max()), length, what, where)
            return np.where(mask[:, None], bv[:, None] + offs[None, :], 0)
        if isinstance(base_v, np.ndarray):
            if lo is None:
                lo, hi = int(base_v.min()), int(base_v.max())
            check_range(lo + int(offs.min()), hi + int(offs.max()), length, what, where)
            if len(offsets) == 1 and offsets[0] == 0:
                return base_v[:, None]
            return base_v[:, None] + offs[None, :]
        check_range(base_v + int(offs.min()), base_v + int(offs.max()), length, what, where)
        return np.broadcast_to(base_v + offs, (self.n, len(offs)))

    def rows(self, base: Any, offsets: tuple, length: int, what: str, where: str = "") -> Any:
        """For an access of every thread to runs of k consecutive elements, each run starting at
        a multiple of k (vector accesses): (row of each run of each thread, k), the memory seen as
        rows of k elements, bounds-checked; None when the access is not of that form."""
        key = offsets
        plan = _RUNS.get(key)
        if plan is None:
            plan = _RUNS[key] = _runs(offsets)
        if plan is None:
            return None
        k, starts = plan
        if length % k:
            return None
        base_v = self.index(base)
        if not isinstance(base_v, np.ndarray) or (base_v % k).any():
            return None
        check_range(int(base_v.min()) + int(min(offsets)), int(base_v.max()) + int(max(offsets)), length, what, where)
        return (base_v // k)[:, None] + starts[None, :], k

    def uniform_split(self, e: Any) -> Any:
        """(fixed, lo, hi, c) with index(e) == fixed + c in every thread: fixed an int64 per thread
        worked out once per batch (lo, hi its lowest and highest), c an int. That holds for a sum
        whose part that changes while the batch runs (loop variables, registers) has one value in
        every thread: fixed is the sum of its per-thread terms, the same array for every expression
        with those terms (the accesses of an unrolled loop, which differ by constants), and c the
        rest. For a swizzle of such a sum, the part of c below 2**(m+s+b) is swizzled with fixed
        (an array per such part) and the rest added after: the swizzle reads and writes only lower
        bits, which adding a multiple of 2**(m+s+b) leaves alone. None otherwise."""
        if isinstance(e, Swz) and isinstance(e.a, Lin):
            u = self.uniform_split(e.a)
            if u is None:
                return None
            f, c = u[0], u[3]
            r = c % (1 << (e.m + e.s + e.b))  # the part of c the swizzle reads: swizzled with f
            cache = self.__dict__.setdefault("_swz_fixed", {})
            key = (id(f), r, e.ymask, e.s)
            got = cache.get(key)
            if got is None or got[0] is not f:
                x = f + r if r else f
                fs = x ^ ((x & e.ymask) >> e.s)
                got = cache[key] = (f, fs, int(fs.min()), int(fs.max()))  # (f: the key's owner)
            return got[1], got[2], got[3], c - r
        if not isinstance(e, Lin):
            return None
        sp = self._split.get(id(e))
        if sp is not None:
            fixed, rest = sp[5], sp[3]
        else:  # its terms only: the sum fixed + const that index_range keeps is not needed here
            terms = self.__dict__.setdefault("_terms", {})
            tp = terms.get(id(e))
            if tp is None:
                tp = terms[id(e)] = (e, [(a, c) for a, c in e.terms if _fixed(a)],
                                     tuple((a, c) for a, c in e.terms if not _fixed(a)))
            fixed, rest = tp[1], tp[2]
        if not fixed:
            return None
        f, lo, hi = self._fixed_sum(fixed)  # shared by the expressions that differ by constants
        if not isinstance(f, np.ndarray):
            return None
        c = e.const
        for a, m in rest:
            if type(a) is RegVar and a.name not in self.env:  # a register (the pipeline's stage): read in place
                x = self.regs[a.ref[0].id][:, a.ref[1]]
            else:
                x = evaluate(a, self.env)
            if isinstance(x, np.ndarray):  # one value in every thread?
                x0 = x.flat[0]
                if x.shape != (self.n,) or (x != x0).any():
                    return None
                x = x0
            c += int(x) * m
        return f, lo, hi, c

    def index_at(self, base: Any, offsets: tuple, length: int, shift: Any, what: str, where: str = "") -> Any:
        """(fixed, c): the element indices of an access of every thread (``access_index``, plus the
        per-thread shift of shared memory) are ``fixed + c``, fixed a (threads, len(offsets)) int64
        array made once per batch for the index expression, c an int (read them as ``data[c:]`` at
        fixed, for c >= 0); bounds-checked. None where ``uniform_split`` gives none."""
        u = self.uniform_split(base)
        if u is None:
            return None
        f, lo, hi, c = u
        check_range(lo + c + min(offsets), hi + c + max(offsets), length, what, where)
        cache = self.__dict__.setdefault("_index_fixed", {})
        key = (id(f), offsets, id(shift))
        got = cache.get(key)
        if got is None or got[0] is not f:
            fixed = f[:, None] + np.asarray(offsets, dtype=np.int64)[None, :]
            if shift is not None:
                fixed += shift[:, None]
            low = int(fixed.min())  # made non-negative (a negative index would count from the end)
            fixed -= low
            got = cache[key] = (f, fixed, shift, low)
            self._cached(fixed.size, cache)
        return got[1], c + got[3]

    def _cached(self, size: int, cache: Dict[Any, Any]) -> None:
        """Count size more elements in the per-batch index caches; past _INDEX_CACHE elements (a
        kernel with very many distinct accesses) cache is emptied (its arrays are made again)."""
        self._cache_size = self.__dict__.get("_cache_size", 0) + size
        if self._cache_size > _INDEX_CACHE:
            cache.clear()
            self._cache_size = 0

    def rows_at(self, base: Any, offsets: tuple, length: int, shift: Any, what: str, where: str = "") -> Any:
        """``rows`` with the per-thread shift of shared memory (None for global memory) added, as
        (rows, k, r0): the runs are rows ``rows + r0`` of the memory seen as rows of k elements
        (r0 an int: read them as rows of ``table[r0:]``). Where ``uniform_split`` splits the index,
        ``rows`` are worked out once per batch for it and only r0 changes: no numpy work per access
        but the gather. None when the access is not of that form."""
        u = self.uniform_split(base) if isinstance(base, (Lin, Swz)) else None
        if u is not None:
            plan = _RUNS.get(offsets)
            if plan is None:
                plan = _RUNS[offsets] = _runs(offsets)
            if plan is None or length % plan[0]:
                return None
            k, starts = plan
            f, lo, hi, c = u
            if c % k == 0:
                cache = self.__dict__.setdefault("_rows_fixed", {})
                key = (id(f), offsets, id(shift))  # (f is shared by expressions that differ by constants)
                got = cache.get(key)
                if got is None or got[0] is not f:
                    fixed, low = None, 0
                    if not (f % k).any():
                        fixed = (f // k if shift is None else f // k + shift // k)[:, None] + starts[None, :]
                        low = int(fixed.min())  # made non-negative (a negative row would count from the end)
                        fixed -= low
                    got = cache[key] = (f, fixed, shift, low)  # (the keys' owners stay alive with the entry)
                    if fixed is not None:
                        self._cached(fixed.size, cache)
                fixed = got[1]
                if fixed is not None:
                    check_range(lo + c + min(offsets), hi + c + max(offsets), length, what, where)
                    r0 = c // k + got[3]
                    return (fixed, k, r0) if r0 >= 0 else (fixed + r0, k, 0)
        rk = self.rows(base, offsets, length, what, where)
        if rk is None:
            return None
        rows, k = rk
        return (rows if shift is None else rows + (shift // k)[:, None]), k, 0

    def whole_warps(self, mask: Any, name: str, short: str) -> np.ndarray:
        """Which warps of the batch run a warp-wide instruction (ldmatrix, stmatrix, mma.sync): a bool
        per warp. Such an instruction needs all 32 lanes: a block that is not whole warps, or a warp
        that runs it with only some lanes (a branch that differs inside the warp), is an error."""
        n = self.n
        if n % 32:
            raise LaunchError(f"{self.ir.name}: {name} is a warp instruction, but the block has "
                              f"{self.ir.num_threads} threads (not a multiple of 32)")
        W = n // 32
        if mask is None:
            return np.ones(W, dtype=bool)
        per_warp = mask.reshape(W, 32)
        partial = per_warp.any(axis=1) & ~per_warp.all(axis=1)
        if partial.any():
            w = int(np.argmax(partial))
            raise LaunchError(f"{self.ir.name}: {name} is executed by only some lanes of warp {w % (self.nt // 32)} "
                              f"(a branch that differs inside the warp); {short} needs all 32 lanes")
        return per_warp.all(axis=1)

    # -- where a thread is, for messages
    def block_name(self, k: int) -> str:
        """"(x,y,z)" of the k-th block of the batch."""
        return "(" + ",".join(str(int(self.env[f"bid.{a}"][k * self.nt])) for a in "xyz") + ")"
