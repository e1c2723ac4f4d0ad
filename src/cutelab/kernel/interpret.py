"""The CPU back end: evaluate a traced kernel's IR with numpy, for every thread at once.

Each statement runs over a whole batch of threads (all threads of a run of consecutive blocks):
an index expression evaluates to an int64 array with one entry per thread, a ``Load`` gathers
``data[base[:, None] + offsets]`` into a (threads, n) register array, a ``Store`` scatters it
back. Blocks are processed in order in batches sized to bound memory, so an 8192 x 8192 copy
takes about a second. ``printf`` output is collected and printed in thread order: block by
block, and inside a block thread by thread, each thread's lines in program order.

The kernels cutelab traces have no shared memory or barriers, so evaluating statement by
statement over many threads gives the same result as any interleaving the GPU may choose
(up to which write wins when two threads store to one address, which CUDA leaves undefined).
"""

from __future__ import annotations

import sys
from typing import Any, Dict, List, Optional, TextIO

import numpy as np

from ..errors import LaunchError, TraceError
from .symbolic import Expr, evaluate
from .trace import Compute, KernelIR, Load, Printf, Reg, Store

__all__ = ["interpret", "thread_env"]

_BUDGET = 1 << 24  # register elements held per batch (all live registers of all its threads)


def _real_dtype(dt: Any) -> Any:
    """numpy dtype of the values computed with (bf16/f16 widen to float32)."""
    if dt.name in ("bf16", "f16"):
        return np.dtype(np.float32)
    if dt.name == "i1":
        return np.dtype(np.int32)
    return dt.storage


def _to_real(bits: np.ndarray, dt: Any) -> np.ndarray:
    if dt.name == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32)
    if dt.name == "f16":
        return bits.view(np.float16).astype(np.float32) if bits.dtype != np.float16 else bits.astype(np.float32)
    if dt.name == "i1":
        return bits.astype(np.int32)
    return bits


def _from_real(x: np.ndarray, dt: Any) -> np.ndarray:
    x = np.asarray(x)
    if dt.name == "bf16":
        f = x.astype(np.float32)
        u = f.view(np.uint32)
        r = ((u + np.uint32(0x7FFF) + ((u >> 16) & np.uint32(1))) >> 16).astype(np.uint16)
        return np.where(np.isnan(f), np.uint16(0x7FC0), r)
    if dt.name == "f16":
        h = x.astype(np.float16)
        return h.view(np.uint16) if dt.storage == np.uint16 else h.astype(dt.storage)
    if dt.name == "i1":
        return (x != 0).astype(dt.storage)
    if np.issubdtype(dt.storage, np.integer) and np.issubdtype(x.dtype, np.floating):
        with np.errstate(invalid="ignore"):
            return np.trunc(x).astype(dt.storage)
    return x.astype(dt.storage)


def thread_env(grid: tuple, block: tuple, first_block: int, n_blocks: int) -> Dict[str, np.ndarray]:
    """Index arrays (one entry per thread) for blocks [first_block, first_block + n_blocks)."""
    bx, by, bz = block
    gx, gy, gz = grid
    nt = bx * by * bz
    lin = np.arange(n_blocks * nt, dtype=np.int64)
    t = lin % nt
    b = first_block + lin // nt
    return {
        "tid.x": t % bx, "tid.y": (t // bx) % by, "tid.z": t // (bx * by),
        "bid.x": b % gx, "bid.y": (b // gx) % gy, "bid.z": b // (gx * gy),
    }


class _Batch:
    def __init__(self, ir: KernelIR, env: Dict[str, np.ndarray], n: int):
        self.ir = ir
        self.env = env
        self.n = n
        self.regs: Dict[int, np.ndarray] = {}

    def index(self, e: Any) -> Any:
        v = evaluate(e, self.env)
        if isinstance(v, np.ndarray):
            return v.astype(np.int64, copy=False)
        return int(v)

    def column(self, ref: Any, dt: Any, real: bool) -> np.ndarray:
        """Values of one element reference for all threads (real: as compute values of dt)."""
        if isinstance(ref, tuple):
            r, i = ref
            v = self.regs[r.id][:, i]
            if real:
                v = _to_real(v, r.dtype).astype(_real_dtype(dt), copy=False)
            elif r.dtype.name != dt.name:
                v = _from_real(_to_real(v, r.dtype), dt)
            return v
        if isinstance(ref, Expr):
            v = np.broadcast_to(np.asarray(self.index(ref)), (self.n,))
            return v.astype(_real_dtype(dt)) if real else _from_real(v, dt)
        v = np.full(self.n, ref, dtype=_real_dtype(dt)) if real else np.broadcast_to(_from_real(np.asarray(ref), dt), (self.n,))
        return v

    def matrix(self, refs: tuple, dt: Any) -> np.ndarray:
        """(threads, len(refs)) storage values of dt."""
        first = refs[0] if refs else None
        if (isinstance(first, tuple) and first[0].dtype.name == dt.name and first[0].n == len(refs)
                and all(isinstance(r, tuple) and r[0] is first[0] and r[1] == i for i, r in enumerate(refs))):
            return self.regs[first[0].id]
        out = np.empty((self.n, len(refs)), dtype=dt.storage)
        for i, r in enumerate(refs):
            out[:, i] = self.column(r, dt, real=False)
        return out


def _check_range(idx_lo: int, idx_hi: int, length: int, what: str) -> None:
    if idx_lo < 0 or idx_hi >= length:
        raise LaunchError(
            f"{what}: offsets [{idx_lo}, {idx_hi}] fall outside the tensor's {length} elements; nothing was written"
        )


def _access_index(b: _Batch, base: Any, offsets: tuple, length: int, what: str) -> Any:
    offs = np.asarray(offsets, dtype=np.int64)
    base_v = b.index(base)
    if isinstance(base_v, np.ndarray):
        _check_range(int(base_v.min()) + int(offs.min()), int(base_v.max()) + int(offs.max()), length, what)
        return base_v[:, None] + offs[None, :]
    _check_range(base_v + int(offs.min()), base_v + int(offs.max()), length, what)
    return np.broadcast_to(base_v + offs, (b.n, len(offs)))


def _fmt(v: Any, dt: Any) -> str:
    if dt.name in ("bf16", "f16", "f32", "f64"):
        return "%f" % float(v)
    return "%d" % int(v)


def interpret(ir: KernelIR, buffers: Dict[int, np.ndarray], addresses: Optional[Dict[int, int]] = None,
              out: Optional[TextIO] = None) -> None:
    """Run ir on the CPU. buffers[param.index] is the flat numpy storage of each tensor argument
    (written in place); addresses (for printf) are their data pointers."""
    out = out or sys.stdout
    addresses = addresses or {}
    for p in ir.params:
        if p.index not in buffers:
            raise LaunchError(f"interpret {ir.name}: no storage for parameter {p.name}")
    nt = ir.num_threads
    nblocks = ir.grid[0] * ir.grid[1] * ir.grid[2]
    per_thread = max(1, sum(r.n for r in ir.regs))
    has_printf = any(isinstance(s, Printf) for s in ir.stmts)
    step = max(1, min(nblocks, _BUDGET // (nt * per_thread)))
    if has_printf:
        step = max(1, min(step, 4096 // nt or 1))
    for first in range(0, nblocks, step):
        k = min(step, nblocks - first)
        env = thread_env(ir.grid, ir.block, first, k)
        b = _Batch(ir, env, k * nt)
        lines: List[List[str]] = []
        for s in ir.stmts:
            if isinstance(s, Load):
                p = s.param
                data = buffers[p.index]
                idx = _access_index(b, s.base, s.offsets, len(data), f"{ir.name}: load from {p.name}")
                b.regs[s.dst.id] = data[idx]
            elif isinstance(s, Store):
                p = s.param
                data = buffers[p.index]
                vals = b.matrix(s.src, p.dtype)
                idx = _access_index(b, s.base, s.offsets, len(data), f"{ir.name}: store to {p.name}")
                data[idx] = vals
            elif isinstance(s, Compute):
                b.regs[s.dst.id] = _compute(b, s)
            elif isinstance(s, Printf):
                lines.append(_printf(b, s, addresses))
            else:  # pragma: no cover - the tracer makes no other statements
                raise TraceError(f"the interpreter cannot run statement {s!r}")
        if lines:
            for t in range(b.n):
                for col in lines:
                    out.write(col[t])
            out.flush()


def _compute(b: _Batch, s: Compute) -> np.ndarray:
    d = s.dst
    rdt = _real_dtype(d.dtype)
    res = np.empty((b.n, d.n), dtype=d.dtype.storage)
    for i in range(d.n):
        if s.op == "cvt":
            src = s.args[0][i]
            sdt = src[0].dtype if isinstance(src, tuple) else d.dtype
            v = b.column(src, sdt, real=True)
            res[:, i] = _from_real(v, d.dtype)
            continue
        a = [b.column(col[i], d.dtype, real=True) for col in s.args]
        with np.errstate(all="ignore"):
            if s.op == "add":
                v = a[0] + a[1]
            elif s.op == "sub":
                v = a[0] - a[1]
            elif s.op == "mul":
                v = a[0] * a[1]
            elif s.op == "div":
                if np.issubdtype(rdt, np.integer):
                    q = np.abs(a[0]) // np.where(a[1] == 0, 1, np.abs(a[1]))  # C: truncate toward zero
                    v = np.where(np.sign(a[0]) * np.sign(a[1]) < 0, -q, q)
                else:
                    v = a[0] / a[1]
            elif s.op == "neg":
                v = -a[0]
            elif s.op == "max":
                v = np.maximum(a[0], a[1])
            elif s.op == "min":
                v = np.minimum(a[0], a[1])
            else:  # pragma: no cover
                raise TraceError(f"unknown op {s.op}")
        res[:, i] = _from_real(np.asarray(v, dtype=rdt), d.dtype)
    return res


def _printf(b: _Batch, s: Printf, addresses: Dict[int, int]) -> List[str]:
    cols: List[Any] = []
    for part in s.parts:
        if isinstance(part, str):
            cols.append(part)
            continue
        kind = part[0]
        if kind == "int":
            v = np.broadcast_to(np.asarray(b.index(part[1])), (b.n,))
            cols.append([str(int(x)) for x in v])
        elif kind == "val":
            ref, dt = part[1], part[2]
            v = b.column(ref, dt, real=True)
            cols.append([_fmt(x, dt) for x in v])
        elif kind == "addr":
            p, off = part[1], part[2]
            v = np.broadcast_to(np.asarray(b.index(off)), (b.n,))
            base = addresses.get(p.index, 0)
            cols.append(["%016x" % (base + int(x) * p.dtype.bytes) for x in v])
    out = []
    for t in range(b.n):
        out.append("".join(c if isinstance(c, str) else c[t] for c in cols))
    return out
