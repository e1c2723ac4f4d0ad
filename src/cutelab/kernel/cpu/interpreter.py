"""The CPU back end: evaluate a traced kernel's IR with numpy, for every thread at once.

Each op runs over a whole batch of threads (all threads of a run of consecutive blocks): an
index expression evaluates to an int64 array with one entry per thread, a ``Load`` gathers
``data[base[:, None] + offsets]`` into a (threads, n) register array, a ``Store`` scatters it
back. Blocks are processed in order in batches sized to bound memory, so an 8192 x 8192 copy
takes about a second. ``printf`` output is collected and printed in thread order: block by
block, and inside a block thread by thread, each thread's lines in program order.

An access of every thread whose index is a per-thread part that stays the same through the
batch plus a part that is one int in every thread (a loop variable, a pipeline stage in a
register) gathers at the per-thread indices, made once per batch, offset by that int
(``ExecContext.index_at``/``rows_at``): no index arithmetic per access.

Regions run under a per-thread mask: an ``If`` runs its branches with the threads for which
the condition holds (and does not hold), a ``For`` runs its body while any thread's own trip
count is not used up, a ``While`` while any thread's condition holds. Loads and stores under a
mask touch only the active threads. Warps that wait for each other (mbarriers, named barriers,
``sync_threads`` in warp-specialised branches) run as groups of their own (``warps.py``).
Runs whose accesses the launch could not prove in bounds (runtime loop bounds, scalar
arguments, accesses under branches) check every access as they go and work on copies of the
written tensors, committed only when the whole launch succeeded: an out-of-bounds access is
refused before anything is written. What an instruction may use is ``context.ExecContext``.

Recording (``cutelab.profile``): while the module's ``recorder`` is set, ``interpret`` asks it
``recorder.launch(ir)`` for a launch recorder (None: this launch is not recorded), which is
asked ``batch(b, first, k)`` once per batch of blocks; a batch recorder it returns (None: no
block of the batch is sampled) sees every ``Load``/``Store`` (``access(op, idx, mask)``: the
element indices, inside the block for shared memory) and every ``Op`` (``op(op, mask)``) as
the batch runs them. With no recorder set this costs one test per batch.
"""

from __future__ import annotations

import math as _math
import sys
from typing import Any, Dict, List, Optional, TextIO

import numpy as np

from ...errors import LaunchError, TraceError
from ..frontend.cformat import format_value
from ..ir.nodes import FAST_MATH, Assign, Compute, KernelIR, Load, Op, Printf, Shared, Store, dim_values, walk
from ...dtypes import convert
from .context import ExecContext, as_index, from_real, real_dtype, ref_groups, to_real
from .storerun import StoreRun, run_stores
from . import liveness, warps
from .warps import run_groups

__all__ = ["interpret"]

recorder: Any = None  # cutelab.profile's access recorder while one is active (see the module docstring)

_BUDGET = 1 << 24  # register elements held per batch (all live registers of all its threads)
_MAX_THREADS = 32768  # threads per batch: arrays that stay in the CPU's caches


def _line(ir: KernelIR, s: Any) -> str:
    """ (at file:line) of op s in the user's kernel source, when the tracer recorded it."""
    w = getattr(s, "loc", None) or ""
    return f" (at {w})" if w else ""


#: (first, end) addresses of host memory that other processes map (``cutelab.compat.distributed``'s
#: symmetric memory): a launch writes it in place, never on a copy, as other ranks must see the
#: writes while the kernel runs (accesses are still checked before they are made)
SHARED: List[Any] = []


def _shared(buf: np.ndarray) -> bool:
    if not SHARED:
        return False
    p = buf.__array_interface__["data"][0]
    return any(lo <= p < hi for lo, hi in SHARED)


def _fmt(v: Any, dt: Any) -> str:
    """v as the CUDA back end's printf prints dt's compute value (cutelab.dtypes: c_printf)."""
    if dt.is_float:
        return "%f" % float(v)
    return "%d" % int(v)


def interpret(ir: KernelIR, buffers: Dict[int, np.ndarray], addresses: Optional[Dict[int, int]] = None,
              out: Optional[TextIO] = None, scalars: Optional[Dict[int, Any]] = None) -> None:
    """Run ir on the CPU. buffers[param.index] is the flat numpy storage of each tensor argument
    (written in place); scalars[param.index] the value of each scalar argument; addresses (for
    printf) are the tensors' data pointers."""
    out = out or sys.stdout
    addresses = addresses or {}
    scalars = scalars or {}
    for p in ir.params:
        if p.kind == "scalar":
            if p.index not in scalars:
                raise LaunchError(f"interpret {ir.name}: no value for scalar argument {p.name}")
        elif p.index not in buffers:
            raise LaunchError(f"interpret {ir.name}: no storage for parameter {p.name}")
    from . import multicast

    if multicast.GROUPS:  # multicast tensors take only multimem.* and TMA stores
        multicast.check_kernel(ir, buffers)
    structured = ir.structured
    nt = ir.num_threads
    nblocks = ir.grid[0] * ir.grid[1] * ir.grid[2]
    # the register elements a thread holds at most (all of them, or those live at once: liveness.py)
    per_thread = liveness.plan(ir)[1] if warps.DROP_DEAD else max(1, sum(r.n for r in ir.regs))
    facts = _facts(ir)
    has_printf = facts["printf"]
    step = max(1, min(nblocks, _BUDGET // (nt * per_thread)))
    step = min(step, max(1, _MAX_THREADS // nt))
    if has_printf:
        step = max(1, min(step, 4096 // nt or 1))
    csize = ir.cluster[0] * ir.cluster[1] * ir.cluster[2]
    if csize > 1:  # a batch holds whole clusters, their CTAs in rank order (context.py: cluster-major indices)
        step = max(csize, step // csize * csize)
    work = buffers
    if structured or facts["data_indexed"]:  # check as we go, on copies of what is written: commit only a launch that succeeded
        written = facts["written"]
        work = {i: (buf.copy() if i in written and not _shared(buf) else buf) for i, buf in buffers.items()}
    env_extra = {f"arg.{p.name}": int(scalars[p.index]) for p in ir.params if p.kind == "scalar"}
    env_extra.update(dim_values(ir.grid, ir.block, ir.cluster))  # cute.arch.grid_dim() etc. (ir.nodes.DimVar)
    lrec = recorder.launch(ir) if recorder is not None else None
    if getattr(ir, "cooperative", False):  # every CTA resident at once: one batch (launch/cooperative.py)
        step = nblocks
    clc = _clc_schedule(ir, nblocks, csize) if facts["clc"] else None
    if clc is not None:  # CLC queries: only some clusters resident at once, answered by clc (instr/clc.py)
        step = min(step, clc.resident() * csize)
    first = 0
    while first < nblocks:
        k = min(step, nblocks - first)
        b = ExecContext(ir, dict(env_extra), k * nt, scalars)
        b.env.indices = (ir.grid, ir.block, first, k)  # tid.* and bid.* are made when first read
        if csize > 1:
            b.env.indices += (ir.cluster,)
            b.cluster_size = csize
        if clc is not None:
            clc.next = (first + k) // csize  # the batch's clusters have started
            b.common["clc"] = clc
        b.block_of = np.arange(k * nt, dtype=np.int64) // nt
        b.nblk, b.nt = k, nt
        b.shared = {sh.index: np.zeros(k * sh.length, dtype=sh.dtype.storage) for sh in ir.shared
                    if not hasattr(sh, "base")}
        for sh in ir.shared:  # nodes.SharedAlias: a view of its base array's bytes as another type
            if hasattr(sh, "base"):
                b.shared[sh.index] = b.shared[sh.base.index].view(sh.dtype.storage)
        if lrec is not None:
            b.rec = lrec.batch(b, first, k)
        for r in ir.regs:
            if r.mutable:
                b.regs[r.id] = np.zeros((b.n, r.n), dtype=r.dtype.storage)
        lines: List[Any] = []
        b.addresses = addresses
        run_groups(b, _step, work, lines)
        if "tmem" in b.common:  # its CTAs exited: each must have freed its tensor memory
            from ..instr.tcgen05_tmem import check_freed_at_exit

            check_freed_at_exit(b)
        if lines:
            for t in range(b.n):
                for col, m in lines:
                    if m is None or m[t]:
                        out.write(col[t])
            out.flush()
        first = first + k if clc is None else clc.next * csize  # past the clusters the batch cancelled
    if work is not buffers:
        for i, buf in work.items():
            if buf is not buffers[i]:
                np.copyto(buffers[i], buf)
    if lrec is not None:
        lrec.finish()


def _facts(ir: KernelIR) -> Dict[str, Any]:
    """What interpret asks of the whole kernel before each launch, worked out once (cached on its IR):
    whether it prints, whether it reads an index from a register, the global tensors it writes,
    whether it issues CLC queries."""
    got = ir.__dict__.get("_cpu_facts")
    if got is None:
        from ..instr.clc import ClcQueryOp

        ops = list(walk(ir.body))
        written = {op.param.index for op in ops if isinstance(op, Store) and not isinstance(op.param, Shared)}
        written |= {a.param.index for op in ops if isinstance(op, Op) for a in op.accesses()
                    if a.is_store and not isinstance(a.param, Shared)}
        got = ir.__dict__["_cpu_facts"] = {"printf": any(isinstance(s, Printf) for s in ops),
                                           "data_indexed": _data_indexed(ir), "written": written,
                                           "clc": any(isinstance(s, ClcQueryOp) for s in ops)}
    return got


def _clc_schedule(ir: KernelIR, nblocks: int, csize: int) -> Any:
    """The interpreter's answers to the kernel's CLC queries (None: the kernel issues none)."""
    from ..instr.clc import ClcQueryOp, ClcSchedule

    if not any(isinstance(s, ClcQueryOp) for s in walk(ir.body)):
        return None
    return ClcSchedule(nblocks // csize, tuple(ir.grid), tuple(ir.cluster))


def _data_indexed(ir: KernelIR) -> bool:
    """A kernel with an index read from a register (data): the launch could not check it before."""
    from ..analysis.values import reads_registers

    return any(reads_registers(s.base) for s in walk(ir.body) if isinstance(s, (Load, Store)))


def _step(b: ExecContext, s: Any, mask: Any, buffers: Dict[int, np.ndarray], lines: List[Any]) -> None:
    """Run one op that is not control flow (warps.py runs regions and barriers) under mask."""
    ir = b.ir
    if type(s) is StoreRun:  # stores that differ by a constant (warps._runs): as one, else one by one
        if mask is None and b.rec is None and run_stores(b, s, buffers):
            return
        for x in s:
            _step(b, x, mask, buffers, lines)
        return
    if isinstance(s, Load):
        p = s.param
        data, length, shift = b.memory(p, buffers)
        if mask is None and b.rec is None:  # a vector load of every thread: rows of the memory
            rk = b.rows_at(s.base, s.offsets, length, shift, f"{ir.name}: load from {p.name}", _line(ir, s))
            if rk is not None:
                rows, k, r0 = rk
                table = data.reshape(-1, k)
                got = np.take(table[r0:] if r0 else table, rows, axis=0).reshape(b.n, len(s.offsets))
                into = getattr(s, "into", None)  # forward.LoadInto: the Assign after the load is this one's
                if into is None:
                    b.regs[s.dst.id] = got
                else:
                    b.regs[into.id][:, s.at] = got
                return
        at = None
        if mask is None and b.rec is None:  # every thread: indices at fixed + c, fixed made once per batch
            at = b.index_at(s.base, s.offsets, length, shift, f"{ir.name}: load from {p.name}", _line(ir, s))
        if at is not None:
            fixed, c = at
            got = np.take(data[c:], fixed) if c >= 0 else np.take(data, fixed + c)
        else:
            idx = b.access_index(s.base, s.offsets, length, f"{ir.name}: load from {p.name}", mask, _line(ir, s))
            if b.rec is not None:
                b.rec.access(s, idx, mask)
            if shift is not None:
                idx = idx + shift[:, None]
            got = np.take(data, idx)
        into = getattr(s, "into", None)
        if into is None:
            b.regs[s.dst.id] = got
        elif mask is None:
            b.regs[into.id][:, s.at] = got
        else:
            arr = b.regs[into.id]
            arr[:, s.at] = np.where(mask[:, None], got, arr[:, s.at])
    elif isinstance(s, Store):
        p = s.param
        data, length, shift = b.memory(p, buffers)
        vals = b.matrix(s.src, p.dtype)
        if mask is None and b.rec is None:  # a vector store of every thread: rows of the memory
            rk = b.rows_at(s.base, s.offsets, length, shift, f"{ir.name}: store to {p.name}", _line(ir, s))
            if rk is not None:
                dst, k, r0 = rk
                v = np.ascontiguousarray(np.broadcast_to(vals, (b.n, len(s.offsets))), dtype=data.dtype)
                item = np.dtype((np.void, k * data.dtype.itemsize))  # one row of k elements as one item
                table = data.view(item)
                (table[r0:] if r0 else table)[dst] = v.view(item).reshape(dst.shape)
                return
        idx = b.access_index(s.base, s.offsets, length, f"{ir.name}: store to {p.name}", mask, _line(ir, s))
        if b.rec is not None:
            b.rec.access(s, idx, mask)
        if shift is not None:
            idx = idx + shift[:, None]
        if mask is None:
            data[idx] = vals
        else:
            data[idx[mask]] = np.broadcast_to(vals, idx.shape)[mask]
    elif isinstance(s, Compute):
        b.regs[s.dst.id] = _compute(b, s)
    elif isinstance(s, Assign):
        arr = b.regs[s.dst.id]
        regs, other = _assign_groups(b.ir, s)
        for r, cols, at, _ in regs:  # the elements read from one register: one numpy operation
            v = b.regs[r.id][:, cols]
            if r.dtype.name != s.dst.dtype.name:
                v = from_real(to_real(v, r.dtype), s.dst.dtype)
            if mask is None:
                arr[:, at] = v
            else:
                arr[:, at] = np.where(mask[:, None], v, arr[:, at])
        for j, ref in other:
            v = b.column(ref, s.dst.dtype, real=False)
            if mask is None:
                arr[:, j] = v
            else:
                arr[mask, j] = np.broadcast_to(v, (b.n,))[mask]
    elif isinstance(s, Printf):
        lines.append((_printf(b, s, b.addresses), None if mask is None else mask.copy()))
    elif isinstance(s, Op):
        if b.rec is not None:
            b.rec.op(s, mask)
        s.interpret(b, mask, buffers)
    else:  # pragma: no cover - the tracer makes no other ops
        raise TraceError(f"the interpreter cannot run op {s!r}")


def _assign_groups(ir: KernelIR, s: Assign) -> Any:
    """ref_groups of an Assign's sources, with the register elements they go to (the ``at`` of
    each group is the destination's elements); ([], every (element, ref)) where the registers
    cannot be copied as whole columns in any order (the destination read, an element written
    twice)."""
    cache = ir.__dict__.setdefault("_cpu_assign_groups", {})
    got = cache.get(id(s))
    if got is None or got[0] is not s:
        regs, other = ref_groups(ir, s.src)
        mine = f"reg.{s.dst.id}."  # an index expression that reads the destination (a RegVar)
        if (len(set(s.index)) != len(s.index) or any(r is s.dst for r, _, _, _ in regs)
                or any(not isinstance(ref, (int, float)) and mine in repr(ref) for _, ref in other)):
            plan = ([], list(zip(s.index, s.src)))
        else:
            plan = ([(r, cols, as_index(np.asarray(s.index)[at]), w) for r, cols, at, w in regs],
                    [(s.index[i], ref) for i, ref in other])
        got = cache[id(s)] = (s, plan)
    return got[1]


_CMP = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "eq": np.equal,
        "ne": np.not_equal}
_MATH = {"abs": np.abs, "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
         "rsqrt": lambda x: 1 / np.sqrt(x), "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "rcp": lambda x: 1 / x,
         "erf": lambda x: np.asarray(np.frompyfunc(_math.erf, 1, 1)(x), dtype=np.float64), "ceil": np.ceil,
         "floor": np.floor, "log10": np.log10, "tan": np.tan, "atan": np.arctan}
_MATH.update({f: _MATH[f.removesuffix("_fast")] for f in FAST_MATH})  # computed as the exact forms


_HALF_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide}


def _whole_reg(refs: Any, n: int) -> Any:
    """The register whose n elements, in order, are refs; None if they are not one."""
    first = refs[0]
    if not isinstance(first, tuple):
        return None
    r = first[0]
    if r.n == n and all(isinstance(x, tuple) and x[0] is r and x[1] == i for i, x in enumerate(refs)):
        return r
    return None


def _matrix_arg(b: ExecContext, refs: Any, n: int, dt: Any) -> Any:
    """All n elements of one operand of an element-wise op at once, as compute values of dt: a
    whole register (its elements in order) or one number; None for anything else."""
    first = refs[0]
    if isinstance(first, tuple):
        r = _whole_reg(refs, n)
        return None if r is None else convert(to_real(b.regs[r.id], r.dtype), dt)
    if isinstance(first, (int, float)) and not isinstance(first, bool) and all(type(x) is type(first) and x == first
                                                                              for x in refs):
        return np.asarray(first, dtype=real_dtype(dt))
    return None


_BITS = {"band": np.bitwise_and, "bor": np.bitwise_or, "bxor": np.bitwise_xor, "bnot": np.invert,
         "shl": np.left_shift, "shr": np.right_shift}


def _arith(op: str, a: List[Any], rdt: Any) -> Any:
    """The element-wise arithmetic ops on compute values (any shape)."""
    with np.errstate(all="ignore"):
        if op in _MATH:
            return _MATH[op](a[0])
        if op == "add":
            return a[0] + a[1]
        if op == "sub":
            return a[0] - a[1]
        if op == "mul":
            return a[0] * a[1]
        if op == "div":
            if np.issubdtype(rdt, np.integer):
                q = np.abs(a[0]) // np.where(a[1] == 0, 1, np.abs(a[1]))  # C: truncate toward zero
                return np.where(np.sign(a[0]) * np.sign(a[1]) < 0, -q, q)
            return a[0] / a[1]
        if op == "neg":
            return -a[0]
        if op == "max":
            return np.maximum(a[0], a[1])
        if op == "min":
            return np.minimum(a[0], a[1])
        if op == "fmax":  # NaN-ignoring: the other operand (cute.arch.fmax, PTX max.f32)
            return np.fmax(a[0], a[1])
        if op == "fmin":
            return np.fmin(a[0], a[1])
        if op == "and":
            return (a[0] != 0) & (a[1] != 0)
        if op == "or":
            return (a[0] != 0) | (a[1] != 0)
        if op == "not":
            return a[0] == 0
        if op in _BITS:  # integer bitwise ops; >> is arithmetic for signed types (numpy's, on the compute type)
            return _BITS[op](*a)
        if op in ("floordiv", "mod"):  # Python semantics, as CuTe DSL (floordivsi; % takes the divisor's sign)
            den = np.where(a[1] == 0, 1, a[1])
            return np.floor_divide(a[0], den) if op == "floordiv" else np.mod(a[0], den)
    raise TraceError(f"unknown op {op}")  # pragma: no cover


def _compute(b: ExecContext, s: Compute) -> np.ndarray:
    d = s.dst
    rdt = real_dtype(d.dtype)
    if s.op in _HALF_OPS and d.dtype.storage == np.float16 and len(s.args) == 2:  # f16 (+-*/) f16, as numpy
        regs = [_whole_reg(col, d.n) for col in s.args]  # does it: each operand widened to f32, then rounded
        if all(r is not None and r.dtype.storage == np.float16 for r in regs):
            with np.errstate(all="ignore"):
                return _HALF_OPS[s.op](b.regs[regs[0].id], b.regs[regs[1].id])
    if s.op not in ("cvt", "mov", "select") and s.op not in _CMP and d.n > 1:  # whole registers at once
        a = [_matrix_arg(b, col, d.n, d.dtype) for col in s.args]
        if all(x is not None for x in a) and any(x.ndim == 2 for x in a):
            v = np.asarray(_arith(s.op, a, rdt), dtype=rdt)
            return np.ascontiguousarray(np.broadcast_to(from_real(v, d.dtype), (b.n, d.n)))
    if s.op in ("cvt", "mov"):  # copies: one numpy operation per register read
        regs, other = ref_groups(b.ir, s.args[0])
        if s.op == "mov" and len(regs) == 1 and not other and regs[0][3] and regs[0][0].dtype.name == d.dtype.name:
            return b.regs[regs[0][0].id].copy()  # a snapshot of a whole register
        res = np.empty((b.n, d.n), dtype=d.dtype.storage)
        for r, cols, at, whole in regs:
            v = b.regs[r.id] if whole else b.regs[r.id][:, cols]
            if s.op == "mov" and r.dtype.name == d.dtype.name:
                res[:, at] = v
            else:
                res[:, at] = from_real(convert(to_real(v, r.dtype), r.dtype), d.dtype)
        for i, src in other:
            res[:, i] = from_real(b.column(src, d.dtype, real=True), d.dtype)
        return res
    res = np.empty((b.n, d.n), dtype=d.dtype.storage)
    for i in range(d.n):
        if s.op in ("cvt", "mov"):  # pragma: no cover - done above
            src = s.args[0][i]
            sdt = src[0].dtype if isinstance(src, tuple) else d.dtype
            if s.op == "mov" and isinstance(src, tuple) and sdt.name == d.dtype.name:
                res[:, i] = b.regs[src[0].id][:, src[1]]
                continue
            v = b.column(src, sdt, real=True)
            res[:, i] = from_real(v, d.dtype)
            continue
        if s.op == "select":
            c = b.column(s.args[0][i], s.args[0][i][0].dtype if isinstance(s.args[0][i], tuple) else d.dtype,
                         real=True) != 0
            x = b.column(s.args[1][i], d.dtype, real=True)
            y = b.column(s.args[2][i], d.dtype, real=True)
            res[:, i] = from_real(np.where(c, x, y), d.dtype)
            continue
        if s.op in _CMP:
            a = [b.column(col[i], s.src_dtype, real=True) for col in s.args]
            res[:, i] = from_real(_CMP[s.op](a[0], a[1]), d.dtype)
            continue
        a = [b.column(col[i], d.dtype, real=True) for col in s.args]
        v = from_real(np.asarray(_arith(s.op, a, rdt), dtype=rdt), d.dtype)
        if d.n == 1 and v.shape == (b.n,):  # a fresh array: the register itself
            return v.reshape(b.n, 1)
        res[:, i] = v
    return res


def _printf(b: ExecContext, s: Printf, addresses: Dict[int, int]) -> List[str]:
    cols: List[Any] = []
    for part in s.parts:
        if isinstance(part, str):
            cols.append(part)
            continue
        kind = part[0]
        spec = part[-1] if kind in ("int", "val") and len(part) == (3 if kind == "int" else 4) else None
        if kind == "int":
            v = np.broadcast_to(np.asarray(b.index(part[1])), (b.n,))
            if spec is not None:  # a C conversion of cute.printf (kernel/frontend/cformat.py)
                cols.append([format_value(spec, int(x), "int", 32) for x in v])
            else:
                cols.append([str(int(x)) for x in v])
        elif kind == "val":
            ref, dt = part[1], part[2]
            v = b.column(ref, dt, real=True)
            if spec is not None:
                k = "float" if dt.kind == "float" else dt.kind
                cols.append([format_value(spec, x, k, dt.width) for x in v])
            else:
                cols.append([_fmt(x, dt) for x in v])
        elif kind == "addr":
            p, off = part[1], part[2]
            v = np.broadcast_to(np.asarray(b.index(off)), (b.n,))
            base = 0 if isinstance(p, Shared) else addresses.get(p.index, 0)  # shared memory: offsets from 0
            cols.append(["%016x" % (base + int(x) * p.dtype.bytes) for x in v])
    out = []
    for t in range(b.n):
        out.append("".join(c if isinstance(c, str) else c[t] for c in cols))
    return out
